//! Issue 35: a PR author cannot crash, stall or loop the server through the files it pushes.
//! Each hostile tree is pushed to a real `sweepgate serve` (capped at 2 GiB of address space)
//! against the fake GitHub; preflight, on by default, runs the launch model and the YAML reader
//! on the author's files. After each one the server is up, `/healthz` answers, and the event
//! has an outcome (a bound is a named fact; a deadline or a crash loop a named failure). Peak
//! RSS and `/healthz` latencies are printed for the closing note.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::fake_github::FakeGitHub;
use support::fake_upstream::FakeUpstream;
use support::serve_bundle::{fixture, serve, serve_upstream, start_verifier, REPO};
use support::{pr_event, ServerProcess, BOT, TOKEN};
use sweepgate::evidence::{read_bundle, Evidence};

/// A launcher of the runner the fixture's config runs on (`b200` → `b200-nb_0`), added by the PR.
const LAUNCHER: &str = "runners/launch_b200-nb.sh";
/// The master config the fixture's PR edits.
const MASTER: &str = "configs/nvidia-master.yaml";
/// The address space a server may use here (`serve` idles at ~30 MB; the doubling launcher
/// took it to 3.7 GB).
const MEMORY_CAP: u64 = 2 << 30;

/// The fixture PR whose head edits a runner launcher and a master config, with `edits` over its
/// head tree.
fn hostile(edits: &[(&str, String)]) -> Evidence {
    let mut ev = read_bundle(&fixture("cp-recipes-into-checkout")).unwrap();
    assert!(ev.head.get(MASTER).is_some());
    for (path, text) in edits {
        ev.head.insert(*path, text.as_bytes().to_vec());
    }
    ev
}

/// A launcher that runs the config's benchmark script after `prefix`.
fn launcher_with(prefix: &str) -> String {
    format!("{prefix}bash benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200_sglang.sh\n")
}

struct Served {
    fake: FakeGitHub,
    _upstream: FakeUpstream,
    server: ServerProcess,
    pr: u64,
    head: String,
}

async fn start(ev: &Evidence, extra: &[&str]) -> Served {
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    let upstream = FakeUpstream::start().await;
    serve_upstream(&upstream, ev);
    serve(&fake, ev);
    let server = start_server(&fake, &upstream, extra).await;
    Served { fake, _upstream: upstream, server, pr: ev.pull_request.number, head: ev.pull_request.head_sha.clone() }
}

async fn start_server(fake: &FakeGitHub, upstream: &FakeUpstream, extra: &[&str]) -> ServerProcess {
    let server = start_verifier(fake, upstream, extra).await;
    let capped = Command::new("prlimit")
        .args(["--pid", &server.pid().to_string(), &format!("--as={MEMORY_CAP}")])
        .status()
        .is_ok_and(|s| s.success());
    assert!(capped, "prlimit capped the server's memory");
    server
}

/// `opened` for the served PR at its head.
fn opened(pr: u64, head: &str) -> Value {
    let mut event = pr_event("opened", pr, &[], None, "vendor-dev");
    event["repository"]["full_name"] = json!(REPO);
    event["pull_request"]["head"]["sha"] = json!(head);
    event
}

/// `/healthz` answered `ok`, and how long it took.
async fn healthz(server: &ServerProcess) -> Duration {
    let started = Instant::now();
    let answer = reqwest::Client::new()
        .get(format!("{}/healthz", server.url))
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .expect("/healthz answers");
    assert_eq!(answer.text().await.unwrap(), "ok\n");
    started.elapsed()
}

fn peak_rss(server: &ServerProcess) -> String {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap_or_default();
    let peak = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or("VmHWM: not measured");
    peak.trim_start_matches("VmHWM:").trim().to_owned()
}

/// The preflight check run on `head` once completed.
async fn preflight_run(fake: &FakeGitHub, head: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let found = fake
            .world()
            .check_runs
            .iter()
            .find(|(_, c)| c["name"] == "sweepgate/preflight" && c["head_sha"] == head && c["status"] == "completed")
            .map(|(_, c)| c.clone());
        if let Some(run) = found {
            return run;
        }
        assert!(Instant::now() < deadline, "no completed preflight: {:#?}", fake.world().check_runs);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Pushes the hostile tree, waits for its preflight; the server stays up and answers.
async fn survives(name: &str, ev: &Evidence) -> Value {
    let s = start(ev, &[]).await;
    let started = Instant::now();
    assert_eq!(s.server.deliver("pull_request", "hostile-1", &opened(s.pr, &s.head)).await.0, 202);
    let run = preflight_run(&s.fake, &s.head).await;
    s.server.wait_handled(1).await;
    let took = started.elapsed();
    let ok = s.server.metric("sweepgate_events_handled_total{result=\"ok\"}").await;
    let latency = healthz(&s.server).await;
    println!(
        "{name}: preflight {} in {took:?}; serve peak RSS {}; /healthz after it {latency:?}",
        run["conclusion"],
        peak_rss(&s.server)
    );
    assert_eq!(ok, 1, "the event is handled, not failed");
    run
}

/// Case 1: a 1.3 KB launcher whose variable doubles on each of 21 lines took `serve` from 27 MB
/// to 3.7 GB and an abort, then a crash loop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_doubling_launcher_is_a_named_fact_not_an_abort() {
    let mut prefix = String::from("V0=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n");
    for i in 1..=21 {
        prefix.push_str(&format!("V{i}=$V{}$V{}\n", i - 1, i - 1));
    }
    let ev = hostile(&[(LAUNCHER, launcher_with(&prefix))]);
    survives("doubling launcher (case 1)", &ev).await;
}

/// Case 2: 60 KB of `if ! ! ! … true; then` overflowed a worker's stack in about a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_kilobytes_of_negations_do_not_take_the_stack() {
    let prefix = format!("if {}true; then\n  X=1\nfi\n", "! ".repeat(30_000));
    let ev = hostile(&[(LAUNCHER, launcher_with(&prefix))]);
    survives("60 KB of negations (case 2)", &ev).await;
}

/// Case 3: a master config with a 1 MiB scalar anchor and 3,000 aliases passed the node bound:
/// 4 GB and an abort. The YAML reader refuses it by its expanded bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_master_config_alias_bomb_of_bytes_is_refused() {
    let base = hostile(&[]);
    let original = String::from_utf8(base.head.get(MASTER).unwrap().to_vec()).unwrap();
    let aliases = "  - *big\n".repeat(3000);
    let bomb =
        format!("{original}\nhostile-bomb-anchor: &big {}\nhostile-bomb-aliases:\n{aliases}", "x".repeat(1 << 20));
    let ev = hostile(&[(MASTER, bomb)]);
    let run = survives("1 MiB anchor × 3,000 aliases (case 3)", &ev).await;
    let summary = run["output"]["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("bytes of text"), "the refusal names the bound: {summary}");
}

/// Case 4: `W=${V%%*b}` on a doubled value tried a glob at every cut point (16.8 s at 128 KiB).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strip_on_a_long_value_is_linear() {
    let mut prefix = String::from("V=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n");
    for _ in 0..10 {
        prefix.push_str("V=$V$V\n");
    }
    for _ in 0..16 {
        prefix.push_str("W=${V%%*b}\n");
    }
    let ev = hostile(&[(LAUNCHER, launcher_with(&prefix))]);
    survives("W=${V%%*b} on 64 KiB, 16 lines (case 4)", &ev).await;
}

/// A launcher that costs a lot within every per-line bound: each line strips a 64 KiB value
/// with a pattern near the step bound.
fn slow_launcher() -> String {
    let mut prefix = String::from("V=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n");
    for _ in 0..10 {
        prefix.push_str("V=$V$V\n");
    }
    prefix.push_str(&format!("P={}\n", "*x".repeat(400)));
    for _ in 0..2000 {
        prefix.push_str("W=${V%%$P}\n");
    }
    launcher_with(&prefix)
}

/// Case 4, the stall: the checks run on their own thread with a deadline. While they run up
/// to it, `/healthz` and an unrelated PR's webhook answer within GitHub's 10 s (the measured
/// latencies are printed); past it the preflight is a failure naming the deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn intake_answers_while_the_checks_run_to_their_deadline() {
    let ev = hostile(&[(LAUNCHER, slow_launcher())]);
    let s = start(&ev, &["--verify-deadline-secs", "8"]).await;
    assert_eq!(s.server.deliver("pull_request", "slow-1", &opened(s.pr, &s.head)).await.0, 202);
    let started = Instant::now();
    let (mut worst_health, mut worst_webhook) = (Duration::ZERO, Duration::ZERO);
    let mut n = 0;
    while started.elapsed() < Duration::from_secs(9) {
        worst_health = worst_health.max(healthz(&s.server).await);
        let other = pr_event("closed", 900 + n, &[], None, "someone");
        let sent = Instant::now();
        assert_eq!(s.server.deliver("pull_request", &format!("other-{n}"), &other).await.0, 202);
        worst_webhook = worst_webhook.max(sent.elapsed());
        n += 1;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let run = preflight_run(&s.fake, &s.head).await;
    println!(
        "checks at their 8 s deadline: worst /healthz {worst_health:?}, worst POST /webhook {worst_webhook:?} \
         over {n} rounds; preflight {} after {:?}; peak RSS {}",
        run["conclusion"],
        started.elapsed(),
        peak_rss(&s.server)
    );
    assert!(worst_health < Duration::from_secs(1) && worst_webhook < Duration::from_secs(1));
    assert_eq!(run["conclusion"], "failure");
    let summary = run["output"]["summary"].as_str().unwrap();
    assert!(summary.contains("did not finish within their deadline of 8 s"), "{summary}");
    assert!(summary.contains("8 秒的时限内"), "{summary}");
}

/// Case 4 on the sign-off path: the PR model over the slow launcher runs past the deadline
/// while the evidence is collected; the sign-off's status is a `failure` naming the deadline,
/// never left `pending`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signoff_whose_pr_model_runs_past_the_deadline_is_a_named_failure() {
    let ev = hostile(&[(LAUNCHER, slow_launcher())]);
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    let upstream = FakeUpstream::start().await;
    serve_upstream(&upstream, &ev);
    let url = serve(&fake, &ev);
    let id: u64 = url.rsplit_once("issuecomment-").and_then(|(_, id)| id.parse().ok()).unwrap();
    let server = start_server(&fake, &upstream, &["--verify-deadline-secs", "8", "--preflight=false"]).await;
    let (pr, head) = (ev.pull_request.number, ev.pull_request.head_sha.clone());
    let mut event = support::comment_event(pr, id, &ev.signoff.author, "MEMBER", &ev.signoff.body, None);
    event["repository"]["full_name"] = json!(REPO);
    let started = Instant::now();
    assert_eq!(server.deliver("issue_comment", "slow-signoff", &event).await.0, 202);
    server.wait_handled(1).await;
    let statuses: Vec<(String, String)> = fake
        .world()
        .statuses
        .iter()
        .filter(|(_, sha, body)| *sha == head && body["context"] == "codeowner-signoff-verify")
        .map(|(_, _, b)| (b["state"].as_str().unwrap().to_owned(), b["description"].as_str().unwrap().to_owned()))
        .collect();
    println!("sign-off past its 8 s deadline: {statuses:?} after {:?}", started.elapsed());
    let (state, description) = statuses.last().expect("a status on the head").clone();
    assert_eq!(state, "failure", "{statuses:?}");
    assert!(description.contains("could not be verified: the checks ran past 8 s"), "{description}");
}

/// `sweepgate queue` on a state file.
fn queue(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate")).arg("queue").args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The poison event: a delivery the server dies in (here: is killed in, three times, while its
/// checks run) is failed with the reason at the next start, not replayed forever; `queue list`
/// shows it and `queue retry` queues it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_that_kills_its_server_three_times_is_failed_not_replayed() {
    let ev = hostile(&[(LAUNCHER, slow_launcher())]);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.sqlite");
    let state_arg = state.to_str().unwrap();
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    let upstream = FakeUpstream::start().await;
    serve_upstream(&upstream, &ev);
    serve(&fake, &ev);
    let (pr, head) = (ev.pull_request.number, ev.pull_request.head_sha.clone());
    let tarball = format!("/tarball/{head}");
    let fetched = |fake: &FakeGitHub| fake.world().log.iter().filter(|l| l.contains(&tarball)).count();
    let extra = ["--state", state_arg, "--verify-deadline-secs", "600"];
    for round in 1..=3 {
        // Counted before the start: a resumed event may fetch before `start_server` returns.
        let before = fetched(&fake);
        let server = start_server(&fake, &upstream, &extra).await;
        if round == 1 {
            assert_eq!(server.deliver("pull_request", "poison-1", &opened(pr, &head)).await.0, 202);
        }
        // Resumed after each restart; killed once its checks are under way.
        let deadline = Instant::now() + Duration::from_secs(120);
        while fetched(&fake) == before {
            assert!(Instant::now() < deadline, "round {round}: the event never started");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        server.stop();
    }
    let server = start_server(&fake, &upstream, &extra).await;
    healthz(&server).await;
    let listed = queue(&["list", "--state", state_arg]);
    let row = listed.lines().find(|l| l.contains("poison-1")).unwrap_or_else(|| panic!("{listed}"));
    assert!(row.contains("failed") && row.contains("the server stopped 3 times"), "{row}");
    let before = fetched(&fake);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(fetched(&fake), before, "not run again");
    let retried = queue(&["retry", "poison-1", "--state", state_arg]);
    assert!(retried.contains("poison-1"), "{retried}");
    let listed = queue(&["list", "--state", state_arg]);
    assert!(listed.lines().any(|l| l.contains("poison-1") && l.contains("queued")), "{listed}");
    healthz(&server).await;
}

fn sweepgate(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sweepgate")).args(args).output().unwrap()
}

/// Case 11: credentials inside URL settings are never printed, and a `public_url` carrying them
/// is refused at load with what, where and what to do.
#[test]
fn url_credentials_are_redacted_and_a_credentialed_public_url_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.sqlite");
    let state = state.to_str().unwrap();
    let printed = sweepgate(&[
        "serve",
        "--webhook-secret",
        "s",
        "--state",
        state,
        "--upstream-github-api",
        "http://robot:Upstr3am@mirror.example:8080/api",
        "--github-api-url",
        "https://tok3n@ghe.example/api/v3",
        "--print-config",
    ]);
    let text = String::from_utf8_lossy(&printed.stdout);
    assert!(printed.status.success(), "{text}");
    assert!(text.contains("upstream_github_api = \"http://<redacted>@mirror.example:8080/api\""), "{text}");
    assert!(text.contains("github_api_url = \"https://<redacted>@ghe.example/api/v3\""), "{text}");
    assert!(!text.contains("Upstr3am") && !text.contains("tok3n") && !text.contains("robot"), "{text}");

    let public =
        ["serve", "--webhook-secret", "s", "--state", state, "--public-url", "https://admin:S3cret@gate.example"];
    for args in [public.to_vec(), [public.as_slice(), &["--print-config"]].concat()] {
        let out = sweepgate(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(err.contains("public_url (flag) carries credentials (https://<redacted>@gate.example)"), "{err}");
        assert!(err.contains("Remove the user:password@ part"), "{err}");
        assert!(!err.contains("S3cret") && !err.contains("admin"), "{err}");
    }
    let doctor = sweepgate(&["doctor", "--webhook-secret", "s", "--state", state, "--public-url", "http://u:S3cret@h"]);
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(!doctor.status.success() && text.contains("carries credentials"), "{text}");
    assert!(!text.contains("S3cret"), "{text}");
}

/// Case 3 through `sweepgate recipe resolve`: 2 GB at 1,000 aliases before; now a named error.
#[test]
fn recipe_resolve_refuses_a_recipe_whose_aliases_expand_past_the_byte_bound() {
    let dir = tempfile::tempdir().unwrap();
    let aliases: String = (0..1000).map(|i| format!("  k{i}: *big\n")).collect();
    let recipe = format!("name: bomb\nbig: &big {}\nbackend:\n{aliases}", "x".repeat(1 << 20));
    let path = dir.path().join("bomb.yaml");
    std::fs::write(&path, recipe).unwrap();
    let started = Instant::now();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "max RSS %M KB"])
        .arg(env!("CARGO_BIN_EXE_sweepgate"))
        .args(["recipe", "resolve"])
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    println!("recipe resolve on 1 MiB × 1,000 aliases: {:?}, {}", started.elapsed(), err.lines().last().unwrap_or(""));
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("bytes of text, aliases expanded"), "{err}");
    assert!(Path::new(&path).exists());
}
