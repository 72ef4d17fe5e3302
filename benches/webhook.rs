//! Webhook benchmark (run manually: `cargo bench --bench webhook`).
//!
//! 1. Acknowledgement latency of the real `sweepgate serve` binary (dry-run mode) under an
//!    open-loop load of signed `pull_request` deliveries at 500 requests/s for 10 s.
//! 2. Server RSS when idle and after the load.
//! 3. One label event end to end (webhook → handler → octocrab → fake GitHub), in token mode.

#[path = "../tests/support/fake_github.rs"]
mod fake_github;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sweepgate::github::webhook::sign;

const SECRET: &str = "bench-secret";
const RATE: u64 = 500;
const SECONDS: u64 = 10;

struct Server {
    child: Child,
    url: String,
    /// Holds the server's state file (accepted delivery ids).
    _state_dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(args: &[&str]) -> Server {
    let state_dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(["serve", "--listen", "127.0.0.1:0", "--webhook-secret", SECRET, "--state"])
        .arg(state_dir.path().join("state.sqlite"))
        .args(args)
        .env("SWEEPGATE_LOG", "error")
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn sweepgate");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    Server { url: line.trim().trim_start_matches("listening on ").to_string(), child, _state_dir: state_dir }
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn payload(number: u64, head: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "action": "labeled",
        "repository": {"full_name": "example-org/bench-repo"},
        "sender": {"login": "maintainer", "type": "User"},
        "label": {"name": "full-sweep-fail-fast"},
        "pull_request": {
            "number": number, "state": "open", "draft": false,
            "head": {"sha": head, "ref": "b", "repo": {"full_name": "example-org/bench-repo"}},
            "base": {"sha": "b".repeat(40), "ref": "main", "repo": {"full_name": "example-org/bench-repo"}},
            "labels": [{"name": "full-sweep-fail-fast"}],
            "user": {"login": "vendor-dev", "type": "User"}
        }
    }))
    .unwrap()
}

async fn handled(client: &reqwest::Client, url: &str) -> u64 {
    let text = client.get(format!("{url}/metrics")).send().await.unwrap().text().await.unwrap();
    text.lines()
        .filter(|l| l.starts_with("sweepgate_events_handled_total"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

async fn ack_latency() {
    let dir = tempfile::tempdir().unwrap();
    let outbox = dir.path().join("outbox.sqlite");
    let server = start(&["--outbox", outbox.to_str().unwrap(), "--queue-capacity", "100000"]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let idle = rss_kib(server.child.id());
    let client = reqwest::Client::builder().pool_max_idle_per_host(64).build().unwrap();
    let url = Arc::new(format!("{}/webhook", server.url));
    let mut ticker = tokio::time::interval(Duration::from_micros(1_000_000 / RATE));
    let mut tasks = Vec::new();
    let started = Instant::now();
    for i in 0..RATE * SECONDS {
        ticker.tick().await;
        let body = payload(1 + i % 200, &"a".repeat(40));
        let signature = sign(SECRET.as_bytes(), &body);
        let (client, url) = (client.clone(), url.clone());
        tasks.push(tokio::spawn(async move {
            let t = Instant::now();
            let response = client
                .post(url.as_str())
                .header("x-github-event", "pull_request")
                .header("x-github-delivery", format!("bench-{i}"))
                .header("x-hub-signature-256", signature)
                .body(body)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status().as_u16(), 202);
            t.elapsed()
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.push(task.await.unwrap());
    }
    let elapsed = started.elapsed();
    latencies.sort();
    let loaded = rss_kib(server.child.id());
    println!(
        "ack latency: {} requests in {:.1}s ({:.0}/s): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        latencies.len(),
        elapsed.as_secs_f64(),
        latencies.len() as f64 / elapsed.as_secs_f64(),
        percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        latencies.last().unwrap().as_secs_f64() * 1e3,
    );
    let total = RATE * SECONDS;
    let drain = Instant::now();
    while handled(&client, &server.url).await < total && drain.elapsed() < Duration::from_secs(120) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!(
        "processing (dry-run outbox): all {total} events handled {:.1}s after the last request",
        drain.elapsed().as_secs_f64()
    );
    println!("server RSS: idle {:.1} MiB, after load {:.1} MiB", idle as f64 / 1024.0, loaded as f64 / 1024.0);
}

async fn label_event_end_to_end() {
    let fake = fake_github::FakeGitHub::start("bench-token", "sweepgate[bot]").await;
    let head = "a".repeat(40);
    for n in 1..=50 {
        fake.add_pull("example-org/bench-repo", n, &head, &["full-sweep-fail-fast"], &[("perf-changelog.yaml", 3)]);
    }
    let server = start(&["--github-token", "bench-token", "--github-api-url", &fake.url]);
    let client = reqwest::Client::new();
    let mut walls = Vec::new();
    for n in 1..=50u64 {
        let body = payload(n, &head);
        let t = Instant::now();
        client
            .post(format!("{}/webhook", server.url))
            .header("x-github-event", "pull_request")
            .header("x-github-delivery", format!("e2e-{n}"))
            .header("x-hub-signature-256", sign(SECRET.as_bytes(), &body))
            .body(body)
            .send()
            .await
            .unwrap();
        while handled(&client, &server.url).await < n {
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        walls.push(t.elapsed());
    }
    walls.sort();
    let metrics = client.get(format!("{}/metrics", server.url)).send().await.unwrap().text().await.unwrap();
    let value =
        |name: &str| metrics.lines().find_map(|l| l.strip_prefix(name)?.trim().parse::<f64>().ok()).unwrap_or(f64::NAN);
    let mean_handler = value("sweepgate_handler_seconds_sum") / value("sweepgate_handler_seconds_count");
    println!(
        "label event end to end (5-6 API calls against the fake): wall p50 {:.2} ms, p99 {:.2} ms; handler mean {:.2} ms",
        percentile(&walls, 0.5).as_secs_f64() * 1e3,
        percentile(&walls, 0.99).as_secs_f64() * 1e3,
        mean_handler * 1e3
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    label_event_end_to_end().await;
    ack_latency().await;
}
