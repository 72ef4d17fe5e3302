//! Issue 24's attacks on the sweep service that need a process of their own: a Slurm that
//! hangs must not hold up an unrelated PR's event, and two servers cannot share one state.
//! Slurm is a set of fakes on `PATH` (this test binary's), so these run anywhere.

mod support;

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use support::{ServerProcess, SECRET};
use sweepgate::github::types::CheckRunInput;
use sweepgate::github::{GitHubError, RepoRef};
use sweepgate::pr::performance::Performance;
use sweepgate::server::sweeps::{CheckRuns, SweepService, SweepSettings};

fn executable(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// Check runs accepted and forgotten.
struct Accept;

impl CheckRuns for Accept {
    fn create<'a>(
        &'a self,
        _: Option<u64>,
        _: &'a RepoRef,
        _: &'a CheckRunInput,
    ) -> Pin<Box<dyn std::future::Future<Output = Result<u64, GitHubError>> + Send + 'a>> {
        Box::pin(async { Ok(1) })
    }
    fn update<'a>(
        &'a self,
        _: Option<u64>,
        _: &'a RepoRef,
        _: u64,
        _: &'a CheckRunInput,
    ) -> Pin<Box<dyn std::future::Future<Output = Result<(), GitHubError>> + Send + 'a>> {
        Box::pin(async { Ok(()) })
    }
    fn performance<'a>(
        &'a self,
        _: Option<u64>,
        _: &'a RepoRef,
        _: u64,
        _: u64,
    ) -> Pin<Box<dyn std::future::Future<Output = Result<Performance, String>> + Send + 'a>> {
        Box::pin(async { Ok(Performance::default()) })
    }
}

/// Fake Slurm tools in `dir/bin`: `sbatch` accepts, `squeue` records that it started and then
/// hangs until `dir/go` exists (at most 60 s), recording when it finished.
fn fake_slurm(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let d = dir.display();
    executable(&bin.join("sbatch"), "#!/bin/sh\ncat >/dev/null\necho 101\n");
    executable(&bin.join("scontrol"), "#!/bin/sh\nexit 0\n");
    executable(&bin.join("scancel"), "#!/bin/sh\nexit 0\n");
    executable(&bin.join("sacct"), "#!/bin/sh\nexit 0\n");
    executable(
        &bin.join("squeue"),
        &format!(
            "#!/bin/sh\ntouch {d}/squeue-started\ni=0\nwhile [ ! -e {d}/go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n\
             touch {d}/squeue-finished\nexit 0\n"
        ),
    );
    bin
}

/// A pool on the local CLI whose jobs run `bench.sh`, writing under `dir/out`.
fn pool(dir: &Path) -> PathBuf {
    let local = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("pools/local.toml")).unwrap();
    let text = local
        .replace("kind = \"slurmrestd\"\nurl = \"http://127.0.0.1:6820\"\napi_version = \"v0.0.38\"", "kind = \"cli\"")
        .replace("/srv/slurm-scratch/outputs", &dir.join("out").display().to_string());
    executable(&dir.join("bench.sh"), "#!/bin/sh\n");
    let path = dir.join("local.toml");
    std::fs::write(&path, format!("launcher = \"bench.sh\"\n{text}")).unwrap();
    path
}

/// A sweep of PR 1 left running by a previous server: one point to submit, then to poll.
fn resumable_record(state: &Path, script: &Path) {
    let plan = serde_json::json!({
        "version": 1, "sweep_id": "pr1-abc-a1-local", "repo": "o/r", "pr": 1,
        "families": [{"name": "f", "fail_fast": false, "points": [
            {"id": "p0", "row": {}, "job": {"script": script, "gpus": 1, "time_limit_minutes": 1}}
        ]}]
    });
    let record = serde_json::json!({
        "id": "pr1-abc-a1", "repo": "o/r", "pr": 1, "head_sha": "abc", "installation": null,
        "plans": [["local", plan]], "priorities": {"p0": null}, "skipped": [], "error": null,
        "cancelled": false, "check_run_id": null, "concluded": false
    });
    std::fs::create_dir_all(state.join("sweeps")).unwrap();
    std::fs::write(state.join("sweeps/pr1-abc-a1.json"), record.to_string()).unwrap();
}

fn wait_for(path: &Path) {
    for _ in 0..1200 {
        if path.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{} never appeared", path.display());
}

/// Issue 24: with a `squeue` that answered after 55 s, a `closed` event for an unrelated PR
/// with no sweep took 105 s (the engine held the service lock across Slurm, and the cancel
/// asked Slurm again). Now the cancel returns while `squeue` is still hanging.
#[test]
fn an_unrelated_prs_cancel_is_handled_while_squeue_hangs() {
    let dir = tempfile::tempdir().unwrap();
    let bin = fake_slurm(dir.path());
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    std::env::set_var("PATH", path);
    let state = dir.path().join("state");
    let pool = pool(dir.path());
    resumable_record(&state, &dir.path().join("bench.sh").canonicalize().unwrap());
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let settings = SweepSettings {
        pools: vec![pool],
        repo_dir: dir.path().to_owned(),
        state_dir: state.clone(),
        check_name: "sweepgate/sweep".into(),
        check_every: Duration::from_secs(3600),
        poll_interval: Duration::from_millis(20),
        unreachable_limit: Duration::from_secs(600),
        details: None,
    };
    let service = SweepService::open(settings, Arc::new(Accept), runtime.handle().clone()).unwrap();
    // The resumed sweep (its NaN priority saved as null reloaded) submits, then polls: squeue hangs.
    wait_for(&dir.path().join("squeue-started"));
    let other = RepoRef::parse("o/other").unwrap();
    let started = std::time::Instant::now();
    let done = service.cancel(&other, 99).unwrap();
    // A measurement for scripts/bench-hostile-sweeps.sh, never asserted.
    eprintln!("cancel latency while squeue hangs: {:?}", started.elapsed());
    assert!(done.sweeps.is_empty() && done.jobs.is_empty(), "{done:?}");
    assert!(
        !dir.path().join("squeue-finished").exists(),
        "the unrelated PR's event was handled while squeue still hung"
    );
    std::fs::write(dir.path().join("go"), "").unwrap();
    wait_for(&dir.path().join("squeue-finished"));
    runtime.shutdown_timeout(Duration::from_secs(1));
}

/// Issue 24: a second server on the same `--state` took the first one's in-flight deliveries
/// ("queued again by an operator") and handled them again. It now exits at once, naming the
/// holder.
#[tokio::test]
async fn a_second_server_on_the_same_state_exits_naming_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.sqlite");
    let state_arg = state.to_str().unwrap();
    let first = ServerProcess::start(&["--state", state_arg]).await;
    let second = std::process::Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(["serve", "--listen", "127.0.0.1:0", "--webhook-secret", SECRET, "--state", state_arg])
        .env("SWEEPGATE_LOG", "warn")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "{stderr}");
    assert!(second.stdout.is_empty(), "it never listened: {}", String::from_utf8_lossy(&second.stdout));
    assert!(
        stderr.contains("another sweepgate serve (pid ") && stderr.contains(&format!(") holds {state_arg}")),
        "{stderr}"
    );
    first.stop();
    let third = ServerProcess::start(&["--state", state_arg]).await;
    third.stop();
}

/// Issue 24 item 3: SIGTERM logged "stopped" while the process kept spinning. With a sweep in
/// flight (its job submitted, `squeue` hanging) the server now ends within the drain time, the
/// sweep's record stays and reloads on the next start (nothing quarantined), and the job is not
/// submitted again by the stop.
#[test]
fn sigterm_with_a_sweep_in_flight_ends_within_the_drain_and_every_record_reloads() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let bin = fake_slurm(dir.path());
    let d = dir.path().display();
    executable(&bin.join("sbatch"), &format!("#!/bin/sh\ncat >/dev/null\necho x >>{d}/sbatch-calls\necho 101\n"));
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let sweeps = dir.path().join("sweeps-state");
    let pool = pool(dir.path());
    resumable_record(&sweeps, &dir.path().join("bench.sh").canonicalize().unwrap());
    let state = dir.path().join("state.sqlite");
    let start = || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
            .args(["serve", "--listen", "127.0.0.1:0", "--webhook-secret", SECRET, "--drain-secs", "2"])
            .arg("--state")
            .arg(&state)
            .arg("--pool")
            .arg(&pool)
            .arg("--sweep-repo")
            .arg(dir.path())
            .arg("--sweep-state")
            .arg(&sweeps)
            .args(["--sweep-poll-ms", "50"])
            .env("PATH", &path)
            .env("SWEEPGATE_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert!(line.starts_with("listening on "), "{line:?}");
        child
    };
    let terminate = |mut child: std::process::Child| {
        let started = std::time::Instant::now();
        assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
        while started.elapsed() < Duration::from_secs(30) {
            if let Some(status) = child.try_wait().unwrap() {
                return (status, started.elapsed());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        panic!("the server still ran 30 s after SIGTERM");
    };

    let server = start();
    wait_for(&dir.path().join("squeue-started"));
    let (status, took) = terminate(server);
    // A measurement, never asserted beyond "it ended" (the drain is 2 s, the runtime's 1 s).
    eprintln!("exit after SIGTERM with squeue hanging: {took:?} ({status})");
    assert!(!dir.path().join("squeue-finished").exists(), "it ended while squeue still hung");
    let record = std::fs::read(sweeps.join("sweeps/pr1-abc-a1.json")).expect("the record stays");
    let record: serde_json::Value = serde_json::from_slice(&record).expect("the record stays whole");
    assert_eq!(record["id"], "pr1-abc-a1");
    let calls = || std::fs::read_to_string(dir.path().join("sbatch-calls")).unwrap_or_default().lines().count();
    assert_eq!(calls(), 1, "the point was submitted once");

    std::fs::write(dir.path().join("go"), "").unwrap();
    wait_for(&dir.path().join("squeue-finished"));
    let server = start();
    std::thread::sleep(Duration::from_millis(500));
    let quarantined = std::fs::read_dir(sweeps.join("sweeps/quarantine")).map(|d| d.count()).unwrap_or(0);
    assert_eq!(quarantined, 0, "every record reloads");
    assert_eq!(calls(), 1, "the resumed sweep does not submit its point again");
    terminate(server);
}

/// Issue 24 ("A PR exhausts the server"): a labeled PR whose changelog entry names a config with a
/// 100k-value `conc-list` (a 200,000-point sweep that used to take 7.5 GB). The server refuses the
/// sweep at the point bound: its record holds no points, the check run names the bound, and the
/// server goes on handling events. Its peak RSS (VmHWM) is printed for the closing note, not asserted.
#[test]
fn a_labeled_pr_with_a_100k_value_conc_list_is_refused_and_the_server_stays_small() {
    use serde_json::json;
    use support::fake_github::FakeGitHub;
    use support::fixture_repo::git;

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = runtime.block_on(FakeGitHub::start(support::TOKEN, support::BOT));
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/repo");
    assert!(std::process::Command::new("cp").arg("-r").arg(&fixture).arg(&repo).status().unwrap().success());
    git(&repo, &["init", "-q"]);
    git(&repo, &["-c", "user.name=b", "-c", "user.email=b@b", "add", "-A"]);
    git(&repo, &["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base"]);
    let master = repo.join("configs/amd-master.yaml");
    let values: Vec<String> = (1..=100_000).map(|v| v.to_string()).collect();
    let text = std::fs::read_to_string(&master).unwrap();
    let hostile = text.replacen("conc-list: [16, 32] }", &format!("conc-list: [{}] }}", values.join(", ")), 1);
    assert_ne!(text, hostile, "the fixture config has the conc-list to replace");
    std::fs::write(&master, hostile).unwrap();
    let mut changelog = std::fs::read_to_string(repo.join("perf-changelog.yaml")).unwrap();
    changelog.push_str(
        "\n- config-keys:\n    - dsr1-fp8-mi355x-sglang\n  description:\n    - \"100k concurrencies\"\n  \
         pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/999\n",
    );
    std::fs::write(repo.join("perf-changelog.yaml"), changelog).unwrap();
    git(&repo, &["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qam", "head"]);
    let rev = |r: &str| {
        let out = std::process::Command::new("git").arg("-C").arg(&repo).args(["rev-parse", r]).output().unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let (base, head) = (rev("HEAD~1"), rev("HEAD"));
    let pool_file = pool(dir.path());
    let profile = std::fs::read_to_string(&pool_file).unwrap();
    std::fs::write(&pool_file, format!("runners = [\"mi355x\"]\n{profile}")).unwrap();
    let label = "full-sweep-fail-fast";
    fake.add_pull(support::REPO, 7, &head, &[label], &[("perf-changelog.yaml", 6), ("configs/amd-master.yaml", 1)]);
    fake.world().pulls.get_mut(&(support::REPO.to_owned(), 7)).unwrap()["base"]["sha"] = json!(base);
    let sweeps = dir.path().join("sweeps");
    let (p, r, s) = (pool_file.display().to_string(), repo.display().to_string(), sweeps.display().to_string());
    let args = [
        "--github-token",
        support::TOKEN,
        "--github-api-url",
        &fake.url,
        "--bot-login",
        support::BOT,
        "--pool",
        &p,
        "--sweep-repo",
        &r,
        "--sweep-state",
        &s,
        "--sweep-poll-ms",
        "100",
    ];
    let server = runtime.block_on(support::ServerProcess::start(&args));
    let mut event = support::pr_event("labeled", 7, &[label], Some(label), "vendor-dev");
    event["pull_request"]["head"]["sha"] = json!(head);
    event["pull_request"]["base"]["sha"] = json!(base);
    runtime.block_on(async {
        assert_eq!(server.deliver("pull_request", "d-100k", &event).await.0, 202);
        server.wait_handled(1).await;
    });
    // The refusal is the sweep's check run, completed and naming the bound.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let refusal = loop {
        let done = fake.world().check_runs.iter().find(|(_, c)| c["status"] == "completed").map(|(_, c)| c.clone());
        if let Some(run) = done {
            break run;
        }
        assert!(std::time::Instant::now() < deadline, "no completed check run: {:?}", fake.world().check_runs);
        std::thread::sleep(Duration::from_millis(200));
    };
    let text = refusal.to_string();
    assert!(text.contains("a sweep runs at most 10000 points (MAX_POINTS)"), "{text}");
    // The refused sweep's record holds no points (it was 472 MB).
    for record in std::fs::read_dir(sweeps.join("sweeps")).into_iter().flatten().flatten() {
        let bytes = record.metadata().unwrap().len();
        assert!(bytes < 64 * 1024, "{}: {bytes} bytes", record.path().display());
    }
    println!("refusal: {}", refusal["output"]["summary"]);
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap_or_default();
    let peak = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or("VmHWM: not measured");
    println!(
        "serve peak RSS after a labeled PR with a 100k-value conc-list: {}",
        peak.trim_start_matches("VmHWM:").trim()
    );
    // Still serving: an unrelated PR's close is handled.
    runtime.block_on(async {
        let closed = support::pr_event("closed", 8, &[], None, "someone");
        assert_eq!(server.deliver("pull_request", "d-other", &closed).await.0, 202);
        server.wait_handled(2).await;
    });
}
