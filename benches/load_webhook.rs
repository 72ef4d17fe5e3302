//! Loopback load test of `sweepgate serve` (issue #8): `cargo bench --bench load_webhook`.
//!
//! The real server binary talks to the fake GitHub of `tests/support` (both on 127.0.0.1 only).
//! 1. Open-loop load: signed `pull_request` webhooks at `SWEEPGATE_LOAD_RPS` (default 500) for
//!    `SWEEPGATE_LOAD_SECONDS` (default 30, at most 30) over 50 PRs; reports ack latency p50/p99/max,
//!    errors (non-202 or transport), time until every event is handled, and server RSS.
//! 2. Burst: 200 label events on one PR, all in flight at once; checks that exactly one sticky
//!    label comment exists afterwards and that it shows the PR's final labels.
//!
//! 3. Stalled connections: 400 clients that go silent (before their first byte, inside their
//!    headers, inside a body); reports server RSS while they are open, the ack time of a signed
//!    delivery sent meanwhile, and when the server closed the last of them (default timeouts).
//!
//! Prints Markdown table rows (`| metric | value |`) that `scripts/bench.sh` collects.

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use support::fake_github::FakeGitHub;
use support::{head_sha, pr_event, ServerProcess, BOT, REPO, SECRET, TOKEN};
use sweepgate::github::webhook::sign;

const PRS: u64 = 50;
const BURST_PR: u64 = 4242;
const BURST: usize = 200;
const MAX_SECONDS: u64 = 30;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Resident and peak resident memory (KiB) of the server: the `sweepgate` child of this process.
fn server_rss_kib() -> Option<(u64, u64)> {
    let me = std::process::id().to_string();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else { continue };
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.trim().trim_end_matches(" kB").trim().to_owned())
        };
        if field("Name:").as_deref() == Some("sweepgate") && field("PPid:").as_deref() == Some(me.as_str()) {
            let kib = |name| field(name).and_then(|v| v.parse().ok());
            return Some((kib("VmRSS:")?, kib("VmHWM:")?));
        }
    }
    None
}

/// One signed delivery over the shared connection pool: (HTTP status or 0 on transport error, ack time).
async fn send(client: &reqwest::Client, url: &str, delivery: String, body: Vec<u8>) -> (u16, Duration) {
    let signature = sign(SECRET.as_bytes(), &body);
    let started = Instant::now();
    let status = client
        .post(format!("{url}/webhook"))
        .header("x-github-event", "pull_request")
        .header("x-github-delivery", delivery)
        .header("x-hub-signature-256", signature)
        .body(body)
        .send()
        .await
        .map_or(0, |r| r.status().as_u16());
    (status, started.elapsed())
}

/// Waits (bounded by `limit`) until the server has handled `n` events; returns whether it did.
async fn wait_handled(server: &ServerProcess, n: u64, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        let ok = server.metric("sweepgate_events_handled_total{result=\"ok\"}").await;
        let failed = server.metric("sweepgate_events_handled_total{result=\"failed\"}").await;
        if ok + failed >= n {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(rank).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// Returns the number of deliveries the server accepted (202).
async fn open_loop(server: &ServerProcess, client: &reqwest::Client, rps: u64, seconds: u64) -> u64 {
    let url: Arc<str> = server.url.clone().into();
    let total = rps * seconds;
    let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / rps as f64));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(total as usize);
    for i in 0..total {
        ticker.tick().await;
        let number = 1 + i % PRS;
        let action = if i % 2 == 0 { "labeled" } else { "unlabeled" };
        let body =
            serde_json::to_vec(&pr_event(action, number, &["full-sweep-fail-fast"], Some("all-evals"), "maint-a"))
                .unwrap_or_default();
        let (client, url) = (client.clone(), url.clone());
        tasks.push(tokio::spawn(async move { send(&client, &url, format!("load-{i}"), body).await }));
    }
    let sending = started.elapsed();
    let mut acks = Vec::with_capacity(tasks.len());
    let (mut errors, mut accepted) = (std::collections::BTreeMap::<u16, u64>::new(), 0u64);
    for task in tasks {
        match task.await {
            Ok((202, took)) => {
                accepted += 1;
                acks.push(took);
            }
            // Status 0: a transport error (connection refused or reset).
            Ok((status, took)) => {
                *errors.entry(status).or_default() += 1;
                acks.push(took);
            }
            Err(_) => *errors.entry(0).or_default() += 1,
        }
    }
    acks.sort();
    let handled = wait_handled(server, accepted, Duration::from_secs(120)).await;
    let drained = started.elapsed();
    let achieved = total as f64 / sending.as_secs_f64();
    println!("| load: webhooks sent | {total} in {:.1} s ({achieved:.0} req/s, target {rps}) |", sending.as_secs_f64());
    println!(
        "| load: ack p50 / p99 / max | {} / {} / {} |",
        ms(percentile(&acks, 0.5)),
        ms(percentile(&acks, 0.99)),
        ms(percentile(&acks, 1.0))
    );
    let by_status: Vec<String> = errors.iter().map(|(status, n)| format!("{n} × {status}")).collect();
    let total_errors: u64 = errors.values().sum();
    println!("| load: errors (non-202; 0 = transport) | {total_errors} ({}) |", by_status.join(", "));
    println!(
        "| load: all events handled | {} after {:.1} s |",
        if handled { "yes" } else { "NO (bounded wait of 120 s exceeded)" },
        drained.as_secs_f64()
    );
    if let Some((rss, peak)) = server_rss_kib() {
        println!("| load: server RSS now / peak | {:.1} MiB / {:.1} MiB |", rss as f64 / 1024.0, peak as f64 / 1024.0);
    }
    accepted
}

/// Returns whether the sticky comment ended single and correct. `already`: events handled before.
async fn burst(server: &ServerProcess, fake: &FakeGitHub, client: &reqwest::Client, already: u64) -> bool {
    let labels = ["full-sweep-enabled", "all-evals", "evals-only", "agentx-fast", "bug"];
    // The PR's labels after the storm: what GitHub returns when the handler re-reads the PR.
    fake.set_labels(REPO, BURST_PR, &["full-sweep-enabled"]);
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(BURST);
    for i in 0..BURST {
        let label = labels[i % labels.len()];
        let action = if i % 2 == 0 { "labeled" } else { "unlabeled" };
        let body = serde_json::to_vec(&pr_event(action, BURST_PR, &["full-sweep-enabled"], Some(label), "maint-a"))
            .unwrap_or_default();
        let (client, url) = (client.clone(), server.url.clone());
        tasks.push(tokio::spawn(async move { send(&client, &url, format!("burst-{i}"), body).await }));
    }
    let mut accepted = 0;
    for task in tasks {
        if matches!(task.await, Ok((202, _))) {
            accepted += 1;
        }
    }
    let handled = wait_handled(server, already + accepted, Duration::from_secs(60)).await;
    let took = started.elapsed();
    let world = fake.world();
    let sticky: Vec<_> = world
        .comments_on(REPO, BURST_PR)
        .into_iter()
        .filter(|c| c.login == BOT && c.body.starts_with("<!-- sweepgate:labels "))
        .collect();
    let single = sticky.len() == 1;
    let correct = sticky.first().is_some_and(|c| c.body.contains("This PR sweeps with `full-sweep-enabled`"));
    println!("| burst: label events accepted | {accepted} / {BURST} |");
    println!("| burst: handled | {} in {:.2} s |", if handled { "all" } else { "NOT all" }, took.as_secs_f64());
    println!(
        "| burst: sticky label comments on the PR | {} (single: {single}, final state shown: {correct}) |",
        sticky.len()
    );
    single && correct && handled && accepted == BURST as u64
}

/// Returns whether every stalled connection was closed within 30 s and the delivery got 202.
async fn stalled(server: &ServerProcess, client: &reqwest::Client) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const STALLED: usize = 400;
    let addr = server.url.trim_start_matches("http://").to_string();
    let opened = Instant::now();
    let mut readers = Vec::with_capacity(STALLED);
    for i in 0..STALLED {
        let Ok(mut stream) = tokio::net::TcpStream::connect(&addr).await else { continue };
        let partial: &[u8] = match i % 3 {
            0 => b"",
            1 => b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-GitHub-Ev",
            _ => b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-Hub-Signature-256: sha256=0000000000000000000000000000000000000000000000000000000000000000\r\nContent-Length: 1000000\r\n\r\n{\"act",
        };
        let _ = stream.write_all(partial).await;
        readers.push(tokio::spawn(async move {
            let mut sink = Vec::new();
            // EOF or reset: closed by the server; the bound only ends a run that would hang.
            match tokio::time::timeout(Duration::from_secs(60), stream.read_to_end(&mut sink)).await {
                Ok(_) => Some(opened.elapsed()),
                Err(_) => None,
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss = server_rss_kib();
    let body =
        serde_json::to_vec(&pr_event("opened", 1, &["full-sweep-fail-fast"], None, "maint-a")).unwrap_or_default();
    let (status, ack) = send(client, &server.url, "stalled-signed".into(), body).await;
    let mut closed = Vec::new();
    for reader in readers {
        if let Ok(Some(at)) = reader.await {
            closed.push(at);
        }
    }
    closed.sort();
    println!("| stalled: connections opened | {STALLED} |");
    if let Some((rss, peak)) = rss {
        println!(
            "| stalled: server RSS with them open / peak | {:.1} MiB / {:.1} MiB |",
            rss as f64 / 1024.0,
            peak as f64 / 1024.0
        );
    }
    println!("| stalled: signed delivery meanwhile | HTTP {status} in {} |", ms(ack));
    let last = closed.last().copied().unwrap_or_default();
    println!(
        "| stalled: closed by the server | {} / {STALLED}, first after {:.1} s, last after {:.1} s |",
        closed.len(),
        closed.first().copied().unwrap_or_default().as_secs_f64(),
        last.as_secs_f64()
    );
    status == 202 && closed.len() == STALLED && last <= Duration::from_secs(30)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // `cargo test --all-targets` runs bench binaries too; only `cargo bench` passes --bench.
    if !std::env::args().any(|a| a == "--bench") {
        eprintln!("load_webhook: a benchmark; run it with `cargo bench --bench load_webhook`");
        return;
    }
    let rps = env_u64("SWEEPGATE_LOAD_RPS", 500).clamp(1, 2000);
    let seconds = env_u64("SWEEPGATE_LOAD_SECONDS", MAX_SECONDS).clamp(1, MAX_SECONDS);
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    for number in (1..=PRS).chain([BURST_PR]) {
        fake.add_pull(REPO, number, &head_sha(), &["full-sweep-fail-fast"], &[("perf-changelog.yaml", 6)]);
    }
    let server = ServerProcess::with_token(&fake.url).await;
    let client = reqwest::Client::builder().pool_max_idle_per_host(256).build().unwrap_or_default();
    println!("| metric | value |\n|---|---|");
    println!("| server | `sweepgate serve --workers 2` on 127.0.0.1 → fake GitHub on 127.0.0.1 |");
    let accepted = open_loop(&server, &client, rps, seconds).await;
    let ok = burst(&server, &fake, &client, accepted).await;
    if !ok {
        eprintln!("load_webhook: the burst did not end in one correct sticky comment");
        std::process::exit(1);
    }
    if !stalled(&server, &client).await {
        eprintln!("load_webhook: stalled connections were not all closed within 30 s, or blocked the delivery");
        std::process::exit(1);
    }
}
