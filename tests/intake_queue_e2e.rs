//! The durable event queue end to end (issue 14): the real `sweepgate serve` binary, the fake
//! GitHub, a state file that outlives the process. A delivery acknowledged with 202 survives
//! SIGKILL and is processed once after the restart; a failed delivery redelivered by GitHub is
//! processed; SIGTERM drains for a bounded time and leaves the rest queued; operators list,
//! drop and retry rows; stalled connections are closed and never block a signed delivery.

mod support;

use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use support::fake_github::{FakeGitHub, Fault};
use support::*;

const CHANGELOG: (&str, u64) = ("perf-changelog.yaml", 6);
const STATUSES: &str = "POST /repos/example-org/bench-repo/statuses";

fn state_args<'a>(fake_url: &'a str, state: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["--github-token", TOKEN, "--github-api-url", fake_url, "--bot-login", BOT, "--state"];
    args.push(state.to_str().expect("UTF-8 temp path"));
    args.extend_from_slice(extra);
    args
}

/// `sweepgate queue ARGS --state FILE`: (exit code, stdout).
fn queue_cli(state: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .arg("queue")
        .args(args)
        .arg("--state")
        .arg(state)
        .output()
        .expect("run sweepgate queue");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The state column of `delivery` in `sweepgate queue list`.
fn row_state(state: &Path, delivery: &str) -> String {
    let (code, out) = queue_cli(state, &["list"]);
    assert_eq!(code, 0, "{out}");
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{delivery}\t")))
        .and_then(|rest| rest.split('\t').next())
        .unwrap_or_else(|| panic!("{delivery} not listed:\n{out}"))
        .to_string()
}

async fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..500 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_acknowledged_before_a_sigkill_is_processed_exactly_once_after_the_restart() {
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    fake.add_pull(REPO, 42, &head_sha(), &["full-sweep-enabled"], &[CHANGELOG]);
    // The first GitHub call hangs: the worker is mid-event when the process is killed.
    fake.fail_next(Fault::slow("GET ", Duration::from_secs(120)));
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.sqlite");
    let args = state_args(&fake.url, &state, &[]);
    let opened = pr_event("opened", 42, &["full-sweep-enabled"], None, "vendor-dev");

    let server = ServerProcess::start(&args).await;
    assert_eq!(server.deliver("pull_request", "kill-1", &opened).await, (202, "queued\n".into()));
    wait_for("the worker's first GitHub call", || !fake.world().log.is_empty()).await;
    server.stop(); // SIGKILL
    assert!(fake.world().comments.is_empty() && fake.world().statuses.is_empty(), "nothing was done yet");
    assert_eq!(row_state(&state, "kill-1"), "queued");

    let server = ServerProcess::start(&args).await;
    server.wait_handled(1).await;
    assert_eq!(server.metric("sweepgate_events_handled_total{result=\"ok\"}").await, 1);
    let (status, body) = server.deliver("pull_request", "kill-1", &opened).await;
    assert_eq!((status, body.trim()), (200, "duplicate delivery"), "GitHub's redelivery is not processed again");
    {
        let w = fake.world();
        assert_eq!(w.comments.len(), 2, "welcome and label comment, once each");
        assert_eq!(w.count(STATUSES), 1);
    }
    assert_eq!(row_state(&state, "kill-1"), "done");
    assert_eq!(server.metric("sweepgate_queue_depth").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_that_failed_is_processed_when_github_redelivers_it() {
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    fake.add_pull(REPO, 42, &head_sha(), &["full-sweep-enabled"], &[CHANGELOG]);
    // A plain 403 (a missing permission, not a rate limit) is not transient: the event fails.
    fake.fail_next(Fault { status: 403, matching: STATUSES.into(), ..Fault::default() });
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.sqlite");
    let server = ServerProcess::start(&state_args(&fake.url, &state, &[])).await;
    let sync = pr_event("synchronize", 42, &["full-sweep-enabled"], None, "vendor-dev");
    assert_eq!(server.deliver("pull_request", "f-1", &sync).await.0, 202);
    server.wait_handled(1).await;
    assert_eq!(server.metric("sweepgate_events_handled_total{result=\"failed\"}").await, 1);
    assert_eq!(row_state(&state, "f-1"), "failed");
    let (_, listed) = queue_cli(&state, &["list"]);
    assert!(listed.contains("403"), "the error is kept for the operator:\n{listed}");

    // After the fix, GitHub's redelivery (same GUID) is accepted and processed.
    let (status, body) = server.deliver("pull_request", "f-1", &sync).await;
    assert_eq!((status, body.trim()), (202, "failed before; queued again"));
    server.wait_handled(2).await;
    assert_eq!(server.metric("sweepgate_events_handled_total{result=\"ok\"}").await, 1);
    assert_eq!(row_state(&state, "f-1"), "done");
    assert_eq!(fake.world().statuses.last().unwrap().2["state"], "success");
    let metrics = server.metrics().await;
    assert!(metrics.contains("outcome=\"queued_again\"} 1"), "{metrics}");
    // Done now: a further redelivery is a duplicate.
    assert_eq!(server.deliver("pull_request", "f-1", &sync).await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_drains_for_a_bounded_time_and_leaves_the_rest_queued() {
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    fake.add_pull(REPO, 42, &head_sha(), &["full-sweep-enabled"], &[CHANGELOG]);
    fake.add_pull(REPO, 43, &"c".repeat(40), &["full-sweep-enabled"], &[CHANGELOG]);
    // Both workers (the helper starts two) hang on their first GitHub call.
    fake.fail_next(Fault::slow("GET ", Duration::from_secs(120)));
    fake.fail_next(Fault::slow("GET ", Duration::from_secs(120)));
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.sqlite");
    let args = state_args(&fake.url, &state, &["--drain-secs", "1"]);
    let server = ServerProcess::start(&args).await;
    let first = pr_event("opened", 42, &["full-sweep-enabled"], None, "vendor-dev");
    let second = pr_event("opened", 43, &["full-sweep-enabled"], None, "vendor-dev");
    assert_eq!(server.deliver("pull_request", "t-1", &first).await.0, 202);
    assert_eq!(server.deliver("pull_request", "t-2", &second).await.0, 202);
    wait_for("both workers' first GitHub calls", || fake.world().log.len() >= 2).await;
    assert_eq!(server.metric("sweepgate_queue_depth").await, 0, "both are being processed");
    assert!(server.metrics().await.contains("sweepgate_queue_oldest_age_seconds 0.000"));

    let (code, took) = server.terminate(Duration::from_secs(10));
    assert_eq!(code, Some(0), "a clean exit");
    assert!(took >= Duration::from_millis(900), "it drained for its bound first ({took:?})");
    assert!(took < Duration::from_secs(5), "and then exited promptly ({took:?})");
    assert_eq!((row_state(&state, "t-1"), row_state(&state, "t-2")), ("queued".into(), "queued".into()));

    // An operator drops the second; the restart processes the first only.
    assert_eq!(queue_cli(&state, &["drop", "t-2"]).0, 0);
    assert_eq!(queue_cli(&state, &["drop", "t-2"]).0, 2, "nothing left to drop");
    let server = ServerProcess::start(&args).await;
    server.wait_handled(1).await;
    assert_eq!(row_state(&state, "t-1"), "done");
    assert_eq!(row_state(&state, "t-2"), "dropped");
    assert!(fake.world().comments_on(REPO, 43).is_empty());
    // Retried while the server runs: picked up and processed.
    assert_eq!(queue_cli(&state, &["retry", "t-2"]).0, 0);
    server.wait_handled(2).await;
    assert_eq!(row_state(&state, "t-2"), "done");
    assert_eq!(fake.world().comments_on(REPO, 43).len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_connections_do_not_block_a_signed_delivery_and_are_closed() {
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    fake.add_pull(REPO, 42, &head_sha(), &["full-sweep-enabled"], &[CHANGELOG]);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.sqlite");
    let short = ["--idle-timeout-secs", "2", "--header-timeout-secs", "2", "--body-timeout-secs", "2"];
    let server = ServerProcess::start(&state_args(&fake.url, &state, &short)).await;
    let addr = server.url.strip_prefix("http://").unwrap().to_string();
    // 400 clients: silent ones, ones stuck inside their headers, ones stuck inside a body.
    let stalled: Vec<std::net::TcpStream> = (0..400)
        .map(|i| {
            let mut stream = std::net::TcpStream::connect(&addr).expect("connect");
            match i % 3 {
                0 => {}
                1 => stream.write_all(b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-GitHub-Ev").unwrap(),
                _ => stream
                    .write_all(
                        b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-Hub-Signature-256: sha256=\
                          0000000000000000000000000000000000000000000000000000000000000000\r\n\
                          Content-Length: 1000\r\n\r\n{\"act",
                    )
                    .unwrap(),
            }
            stream
        })
        .collect();
    let started = Instant::now();
    let opened = pr_event("opened", 42, &["full-sweep-enabled"], None, "vendor-dev");
    assert_eq!(server.deliver("pull_request", "st-1", &opened).await.0, 202);
    assert!(started.elapsed() < Duration::from_secs(1), "answered at once ({:?})", started.elapsed());
    server.wait_handled(1).await;

    // Every stalled connection is closed by the server within the configured timeouts.
    let closing = tokio::task::spawn_blocking(move || {
        stalled
            .into_iter()
            .map(|mut stream| {
                stream.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
                let mut rest = Vec::new();
                // EOF (Ok) or a reset both mean closed; a read timeout means still open.
                match stream.read_to_end(&mut rest) {
                    Ok(_) => true,
                    Err(err) => {
                        err.kind() != std::io::ErrorKind::WouldBlock && err.kind() != std::io::ErrorKind::TimedOut
                    }
                }
            })
            .filter(|closed| *closed)
            .count()
    });
    let closed = closing.await.unwrap();
    assert_eq!(closed, 400, "every stalled connection was closed");
    assert!(started.elapsed() < Duration::from_secs(10), "within the short timeouts ({:?})", started.elapsed());
}

#[test]
fn out_of_range_workers_and_queue_capacity_are_refused_clearly() {
    for (flag, value, range) in
        [("--queue-capacity", "18446744073709551615", "1..=1000000"), ("--workers", "1000000000", "1..=256")]
    {
        let out = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
            .args(["serve", "--webhook-secret", "s", flag, value, "--print-config"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(&format!("{value} is not in {range}")), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    // The same bound holds for the config file.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("serve.toml");
    std::fs::write(&config, "webhook_secrets = [\"s\"]\nworkers = 1000000000\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(["serve", "--print-config", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("workers = 1000000000 is out of range: it must be 1..=256"), "{stderr}");
}
