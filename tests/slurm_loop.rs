//! The loop end to end on the real local Slurm (`scripts/slurm-up.sh`) with the fake GitHub: a
//! `pull_request.labeled` webhook makes `sweepgate serve --pool …` plan the fixture PR's sweep,
//! run the stand-in benchmark on Slurm, and complete the `sweepgate/sweep` check run with its
//! per-point table; a server SIGKILLed mid-sweep resumes it after a restart with every point
//! run exactly once. Skips (with a message) when `SWEEPGATE_SLURM` is unset.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sweepgate::evidence::read_bundle;
use sweepgate::sweep::ledger::{Ledger, PointState};
use sweepgate::sweep::results_store::{export, ResultsStore};

mod support;

use support::fake_github::FakeGitHub;
use support::fake_upstream::FakeUpstream;
use support::fixture_repo::{fixture_git_repo, published_vendor_pr_git_repo, vendor_pr_git_repo, VENDOR_PR_BUNDLE};
use support::serve_bundle::fixture;
use support::slurm_sweep::{slurm_enabled, Sweep, BENCH, BOUND};

fn git(repo: &Path, rev: &str) -> String {
    let out = Command::new("git").arg("-C").arg(repo).args(["rev-parse", rev]).output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// The fixture repository, a local-cluster pool serving its b200 rows, and the PR in the fake.
struct Loop {
    s: Sweep,
    base: String,
    head: String,
}

impl Loop {
    /// `shape` commits the PR's base and head into an empty directory (given the repository's name).
    fn new(tag: &str, pr: u64, fake: &FakeGitHub, shape: impl FnOnce(&Path, &str)) -> Loop {
        let s = Sweep::new(tag, pr);
        let repo = s.path("repo");
        std::fs::create_dir(&repo).unwrap();
        shape(&repo, &s.repo);
        let profile = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("pools/local.toml")).unwrap();
        let profile = profile
            .replace(
                "output_root = \"/srv/slurm-scratch/outputs\"",
                &format!("output_root = \"{}\"", s.path("outputs").display()),
            )
            .replace(
                "kind = \"slurmrestd\"\nurl = \"http://127.0.0.1:6820\"\napi_version = \"v0.0.38\"",
                "kind = \"cli\"",
            );
        let pool = format!("runners = [\"b200\"]\nlauncher = \"{BENCH}\"\nmax_concurrent_allocations = 4\n{profile}");
        std::fs::write(s.path("local.toml"), pool).unwrap();
        let (base, head) = (git(&repo, "HEAD~1"), git(&repo, "HEAD"));
        fake.add_pull(&s.repo, pr, &head, &["full-sweep-fail-fast"], &[("perf-changelog.yaml", 40)]);
        fake.world().pulls.get_mut(&(s.repo.clone(), pr)).unwrap()["base"]["sha"] = json!(base);
        Loop { s, base, head }
    }

    /// Makes the PR the vendor PR of [`VENDOR_PR_BUNDLE`]: its title, body, author and changed
    /// files in the fake GitHub, and the upstream facts it cites (the sglang cookbook PR and its
    /// content, the image digest) in the fake upstream.
    fn vendor_pr(&self, fake: &FakeGitHub, upstream: &FakeUpstream) {
        let bundle = fixture(VENDOR_PR_BUNDLE).join("evidence.json");
        let evidence: Value = serde_json::from_slice(&std::fs::read(&bundle).unwrap()).unwrap();
        let pull = &evidence["pull_request"];
        {
            let mut w = fake.world();
            let key = (self.s.repo.clone(), self.s.pr);
            let pr = w.pulls.get_mut(&key).unwrap();
            pr["title"] = pull["title"].clone();
            pr["body"] = pull["body"].clone();
            pr["user"]["login"] = pull["author"].clone();
            pr["head"]["ref"] = pull["head_ref"].clone();
            // The bundle keeps each file's patch; GitHub's listing also counts its lines.
            let mut files = evidence["files"].as_array().unwrap().clone();
            for file in &mut files {
                let count = |sign: &str| {
                    let patch = file["patch"].as_str().unwrap_or_default();
                    patch.lines().filter(|l| l.starts_with(sign) && !l.starts_with(&sign.repeat(3))).count()
                };
                let (additions, deletions) = (count("+"), count("-"));
                file["additions"] = json!(additions);
                file["deletions"] = json!(deletions);
            }
            w.files.insert(key, files);
        }
        let facts = &evidence["upstream"];
        let mut u = upstream.state();
        for (image, digest) in facts["image_digests"].as_object().unwrap() {
            u.manifests.insert(image.clone(), digest["ok"].as_str().unwrap().to_owned());
        }
        for (url, fact) in facts["pulls"].as_object().unwrap() {
            let (repo, number) = url.strip_prefix("https://github.com/").unwrap().split_once("/pull/").unwrap();
            let files: Vec<String> =
                fact["ok"]["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_owned()).collect();
            // The commit the bundle read the cookbook at is the PR's merge commit.
            let source = facts["contents"][url]["ok"]["source"].as_str().unwrap();
            let merge = source.rsplit_once("ref=").unwrap().1;
            let pr =
                json!({"state": fact["ok"]["state"], "merged_at": fact["ok"]["merged_at"], "merge_commit_sha": merge});
            u.pulls.insert((repo.to_owned(), number.parse().unwrap()), (pr, files));
            for (path, text) in facts["contents"][url]["ok"]["files"].as_object().unwrap() {
                u.contents.insert((repo.to_owned(), path.clone()), text.as_str().unwrap().to_owned());
            }
        }
    }

    /// The server's arguments, its upstream facts read from `upstream` (the fake upstream, or
    /// [`NO_UPSTREAM`]: never a real upstream host).
    fn server_args(&self, fake: &FakeGitHub, upstream: &str) -> Vec<String> {
        let path = |p: &str| self.s.path(p).display().to_string();
        let (docker, nvcr) = (format!("docker.io={upstream}"), format!("nvcr.io={upstream}"));
        [
            "--github-token",
            support::TOKEN,
            "--github-api-url",
            &fake.url,
            "--bot-login",
            support::BOT,
            "--state",
            &path("state.sqlite"),
            "--pool",
            &path("local.toml"),
            "--sweep-repo",
            &path("repo"),
            "--sweep-state",
            &path("sweeps"),
            "--sweep-check-every-secs",
            "1",
            "--sweep-poll-ms",
            "300",
            "--public-url",
            "http://127.0.0.1:9/",
            "--upstream-github-api",
            upstream,
            "--huggingface-url",
            upstream,
            "--registry",
            &docker,
            "--registry",
            &nvcr,
        ]
        .map(str::to_owned)
        .to_vec()
    }

    fn labeled(&self) -> Value {
        let mut payload = support::pr_event(
            "labeled",
            self.s.pr,
            &["full-sweep-fail-fast"],
            Some("full-sweep-fail-fast"),
            "vendor-dev",
        );
        for part in ["repository", "pull_request"] {
            let target = if part == "repository" { &mut payload[part] } else { &mut payload[part]["head"]["repo"] };
            target["full_name"] = json!(self.s.repo);
        }
        payload["pull_request"]["base"]["repo"]["full_name"] = json!(self.s.repo);
        payload["pull_request"]["head"]["sha"] = json!(self.head);
        payload["pull_request"]["base"]["sha"] = json!(self.base);
        payload
    }

    /// The check runs of this PR's repository.
    fn check_runs(&self, fake: &FakeGitHub) -> Vec<Value> {
        fake.world().check_runs.iter().filter(|(r, _)| *r == self.s.repo).map(|(_, c)| c.clone()).collect()
    }

    fn wait_for(&self, fake: &FakeGitHub, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let runs = self.check_runs(fake);
            if done(&runs) {
                return runs;
            }
            assert!(start.elapsed() < BOUND, "timed out waiting for {what}: {runs:#?}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Serves the PR's commits, trees and sign-off from the fake, delivers the CODEOWNER's
    /// sign-off comment, and returns the bot's verdict comment (`handled` events so far + 1).
    async fn sign_off(&self, fake: &FakeGitHub, server: &support::ServerProcess, handled: u64) -> String {
        let (repo, pr) = (self.s.repo.clone(), self.s.pr);
        let body = read_bundle(&fixture("green-sweep")).unwrap().signoff.body;
        let id = fake.add_comment(&repo, pr, "nv-owner", "MEMBER", &body);
        self.serve_trees(fake);
        fake.world().permissions.insert((repo.clone(), "nv-owner".into()), "write".into());
        let mut payload = support::comment_event(pr, id, "nv-owner", "MEMBER", &body, None);
        payload["repository"]["full_name"] = json!(repo);
        assert_eq!(server.deliver("issue_comment", "d-signoff", &payload).await.0, 202);
        server.wait_handled(handled).await;
        let w = fake.world();
        let verdicts: Vec<String> = w
            .comments_on(&repo, pr)
            .into_iter()
            .filter(|c| c.login == support::BOT && c.body.starts_with("<!-- sweepgate:verdict "))
            .map(|c| c.body.clone())
            .collect();
        assert_eq!(verdicts.len(), 1, "one verdict: {verdicts:#?}");
        verdicts[0].clone()
    }

    /// Serves the PR's commits and its base and head trees from the fake.
    fn serve_trees(&self, fake: &FakeGitHub) {
        let archive = |sha: &str| {
            let out = Command::new("git")
                .arg("-C")
                .arg(self.s.path("repo"))
                .args(["archive", "--format=tar.gz", &format!("--prefix=repo-{}/", &sha[..7]), sha])
                .output()
                .unwrap();
            assert!(out.status.success(), "git archive {sha}");
            out.stdout
        };
        let (repo, pr) = (self.s.repo.clone(), self.s.pr);
        let mut w = fake.world();
        w.commits.insert((repo.clone(), pr), vec![json!({"sha": self.head, "commit": {"message": "head"}})]);
        for sha in [&self.base, &self.head] {
            w.tarballs.insert((repo.clone(), sha.clone()), archive(sha));
        }
    }

    fn ledger(&self) -> Ledger {
        Ledger::open(&self.s.path("sweeps/ledger.db")).unwrap()
    }

    fn sweep_ids(&self) -> Vec<String> {
        let dir = self.s.path("sweeps/sweeps");
        let mut ids: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(".json")).map(str::to_owned))
            .collect();
        ids.sort();
        ids
    }
}

/// Where the tests that serve no upstream facts send the server's upstream requests: a closed
/// port on a host the server refuses (no `--upstream-allow-private`), so they fail at once.
const NO_UPSTREAM: &str = "http://127.0.0.1:9";

fn completed(runs: &[Value]) -> bool {
    runs.iter().any(|c| c["status"] == "completed")
}

#[test]
fn a_labeled_pr_runs_its_sweep_on_slurm_and_completes_the_check_run() {
    if !slurm_enabled("a_labeled_pr_runs_its_sweep_on_slurm_and_completes_the_check_run") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = runtime.block_on(FakeGitHub::start(support::TOKEN, support::BOT));
    let upstream = runtime.block_on(FakeUpstream::start());
    let l = Loop::new("loop", 160, &fake, |repo, _| vendor_pr_git_repo(repo));
    l.vendor_pr(&fake, &upstream);
    let mut args = l.server_args(&fake, &upstream.url);
    for flag in ["--upstream-allow-host", upstream.host(), "--upstream-allow-private"] {
        args.push(flag.to_owned());
    }
    let server = runtime.block_on(support::ServerProcess::start(&args.iter().map(String::as_str).collect::<Vec<_>>()));
    let sent = Instant::now();
    let sent_at = chrono::Utc::now();
    runtime.block_on(async {
        assert_eq!(server.deliver("pull_request", "d-label", &l.labeled()).await.0, 202);
        server.wait_handled(1).await;
        // A redelivery of the same decision starts nothing new.
        assert_eq!(server.deliver("pull_request", "d-label-2", &l.labeled()).await.0, 202);
        server.wait_handled(2).await;
    });
    let runs = l.wait_for(&fake, "the in-progress check run", |r| !r.is_empty());
    eprintln!("labeled webhook → check run created: {:?}", sent.elapsed());
    assert_eq!(runs[0]["name"], "sweepgate/sweep");
    assert_eq!(runs[0]["head_sha"], json!(l.head));
    let runs = l.wait_for(&fake, "the completed check run", completed);
    assert_eq!(runs.len(), 1, "one check run per sweep: {runs:#?}");
    let run = &runs[0];
    let page = format!("http://127.0.0.1:9/prs/{}/{}", l.s.repo, l.s.pr);
    assert_eq!(run["details_url"], json!(page), "the check run links to the details page: {run:#?}");
    let text = run["output"]["text"].as_str().unwrap();
    let summary = run["output"]["summary"].as_str().unwrap();
    assert_eq!(run["conclusion"], "success", "{summary}\n{text}");
    // The PR's one changelog entry: the canary, four 8k1k points and two eval points.
    assert!(run["output"]["title"].as_str().unwrap().starts_with("Sweep succeeded: 7/7 points"), "{run:#?}");
    assert!(summary.contains("Canary: **succeeded**"), "{summary}");
    assert!(text.contains("| canary | local | ") && text.contains("| succeeded | 1 result file | valid |"), "{text}");
    assert_eq!(l.sweep_ids().len(), 1, "the redelivery started no second sweep");
    eprintln!("server peak RSS: {}", server_peak_rss(&l.s.path("sweeps")));

    // Every point ran once, and its results are in the store, exportable as evidence.
    let id = &l.sweep_ids()[0];
    let ledger = l.ledger();
    let points = ledger.points(&format!("{id}-local")).unwrap();
    assert_eq!(points.len(), 7);
    let canary = points.iter().find(|p| p.is_canary).unwrap();
    let submitted = canary.submit_info.as_ref().unwrap()["submitted_at"].as_str().unwrap();
    let submitted = chrono::DateTime::parse_from_rfc3339(submitted).unwrap();
    // Reported, not asserted (timing targets are measured, never test conditions).
    eprintln!(
        "labeled webhook → first sbatch: {} ms",
        (submitted.with_timezone(&chrono::Utc) - sent_at).num_milliseconds()
    );
    for p in &points {
        assert_eq!(p.state, PointState::Succeeded, "{p:?}");
        assert_eq!(ledger.transitions_into(&format!("{id}-local"), &p.point_id, PointState::Submitted).unwrap(), 1);
    }
    let store = ResultsStore::open(&l.s.path("sweeps/results")).unwrap();
    let exported = export(&store, id, "sweepgate/sweep").unwrap();
    assert_eq!(exported.run.conclusion, "success");
    assert!(exported.artifacts.keys().any(|k| k.starts_with(&format!("{id}/bmk_canary/results_concurrency_"))));
    assert!(exported.artifacts.keys().any(|k| k.starts_with(&format!("{id}/power_canary/"))));
    assert!(exported.artifacts.keys().any(|k| k.starts_with(&format!("{id}/eval_canary/results_"))));

    // Done-when 4-5: a CODEOWNER signs off, and the verdict reads the sweep's stored results.
    // A maintainer names the sweep as the PR's run, as on the bundle's PR (Check 4).
    fake.add_comment(
        &l.s.repo,
        l.s.pr,
        "maint-a",
        "MEMBER",
        &format!("Sweep {id} is green.\n\n/reuse-sweep-run {id}\n"),
    );
    let verdict = runtime.block_on(l.sign_off(&fake, &server, 3));
    let row = |check: &str| verdict.lines().find(|l| l.contains(check)).unwrap_or_default().to_owned();
    let (check1, check2) = (row("Check 1 ("), row("Check 2 ("));
    assert!(check1.contains(&format!("run {id}")) && check1.contains("7 benchmark"), "{check1}\n{verdict}");
    assert!(check2.contains(&format!("of run {id} meet their thresholds")), "{check2}\n{verdict}");
    assert!(check2.contains("gsm8k") && check2.contains("0.9532"), "Check 2 names the eval scores: {check2}");
    // Done-when 5: the vendor PR, signed off by its CODEOWNER on its own sweep, is approved.
    let blocking: Vec<&str> = verdict.lines().filter(|l| l.starts_with("❌") || l.starts_with("⚠")).collect();
    assert!(verdict.contains("**APPROVED**"), "{}\n{verdict}", blocking.join("\n"));
    assert!(blocking.is_empty(), "no check fails or warns: {}", blocking.join("\n"));
}

/// The published run of the config [`published_vendor_pr_git_repo`] retunes: a main run whose
/// `bmk_*` aggregates are the `green-sweep` bundle's run of the same points (TP8/EP8, conc 4-64).
const PUBLISHED_RUN: u64 = 39_000_000_001;
const PUBLISHING_PR: u64 = 3201;
const BUNDLE_RUN: &str = "40714803265";

/// Issue 26: the completed `sweepgate/sweep` check run compares the sweep with the published
/// curve the collector found through the fake GitHub (the base changelog's entry → its merged
/// PR → the push run on its merge commit → its aggregates).
#[test]
fn a_completed_sweep_shows_the_comparison_with_the_published_run() {
    if !slurm_enabled("a_completed_sweep_shows_the_comparison_with_the_published_run") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = runtime.block_on(FakeGitHub::start(support::TOKEN, support::BOT));
    let l = Loop::new("loopperf", 164, &fake, |repo, name| published_vendor_pr_git_repo(repo, name, PUBLISHING_PR));
    let run_dir = fixture(VENDOR_PR_BUNDLE).join("artifacts").join(BUNDLE_RUN);
    let mut published: Vec<(String, String, Vec<u8>)> = Vec::new();
    for artifact in std::fs::read_dir(&run_dir).unwrap().flatten() {
        let name = artifact.file_name().to_string_lossy().into_owned();
        if !name.starts_with("bmk_") {
            continue;
        }
        for file in std::fs::read_dir(artifact.path()).unwrap().flatten() {
            let file_name = file.file_name().to_string_lossy().into_owned();
            published.push((name.clone(), file_name, std::fs::read(file.path()).unwrap()));
        }
    }
    published.sort();
    assert_eq!(published.len(), 5, "the bundle's run has five aggregates: {run_dir:?}");
    let artifacts: Vec<support::fake_github::PublishedArtifact<'_>> =
        published.iter().map(|(a, f, b)| (a.as_str(), Some(vec![(f.as_str(), b.as_slice())]))).collect();
    fake.add_published_run(&l.s.repo, PUBLISHING_PR, PUBLISHED_RUN, &"4d".repeat(20), &artifacts);
    l.serve_trees(&fake);
    let args = l.server_args(&fake, NO_UPSTREAM);
    let server = runtime.block_on(support::ServerProcess::start(&args.iter().map(String::as_str).collect::<Vec<_>>()));
    runtime.block_on(async {
        assert_eq!(server.deliver("pull_request", "d-label", &l.labeled()).await.0, 202);
        server.wait_handled(1).await;
    });
    let compared = |runs: &[Value]| {
        runs.iter().any(|c| {
            c["output"]["summary"].as_str().is_some_and(|t| t.contains("Performance against the published curve"))
        })
    };
    let runs = l.wait_for(&fake, "the completed check run with the comparison", compared);
    let run = &runs[0];
    assert_eq!(run["conclusion"], "success", "{run:#?}");
    // The comparison is in the summary, after the sweep's counts (both languages).
    let text = run["output"]["summary"].as_str().unwrap();
    let id = &l.sweep_ids()[0];
    assert!(!text.contains("not compared"), "{text}");
    // The comparison names the sweep's run and the published run the collector found, and
    // compares the sweep's points with the published ones, with a delta per metric.
    let heading = text.lines().find(|line| line.starts_with("dsr1-fp4-b200-sglang: head run ")).unwrap_or_default();
    assert!(heading.contains(&format!("against published run {PUBLISHED_RUN}")), "{heading}\n{text}");
    let rows: Vec<&str> = text.lines().filter(|line| line.starts_with("| 8k1k tp8 ")).collect();
    assert!(
        rows.iter().any(|row| row.contains("| tput/GPU | ") && row.contains('%')),
        "a throughput row with its delta against the published point: {rows:#?}\n{text}"
    );
    assert!(text.contains("与已发布曲线的性能对比"), "the comparison in Chinese too: {text}");
    eprintln!("sweep {id}: the check run's comparison:\n{}", rows.join("\n"));
}

#[test]
fn a_server_killed_mid_sweep_resumes_it_with_every_point_run_once() {
    if !slurm_enabled("a_server_killed_mid_sweep_resumes_it_with_every_point_run_once") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = runtime.block_on(FakeGitHub::start(support::TOKEN, support::BOT));
    let l = Loop::new("loopkill", 161, &fake, |repo, _| fixture_git_repo(repo));
    let args = l.server_args(&fake, NO_UPSTREAM);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = runtime.block_on(support::ServerProcess::start(&args));
    runtime.block_on(async {
        assert_eq!(server.deliver("pull_request", "d-label", &l.labeled()).await.0, 202);
        server.wait_handled(1).await;
    });
    // Kill once some points are running or done, well before the end.
    let start = Instant::now();
    loop {
        let ids = l.sweep_ids();
        let done = ids.first().map_or(0, |id| {
            l.ledger().points(&format!("{id}-local")).unwrap().iter().filter(|p| p.state != PointState::Planned).count()
        });
        if done >= 4 {
            break;
        }
        assert!(start.elapsed() < BOUND, "the sweep never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(server); // SIGKILL
    let _server = runtime.block_on(support::ServerProcess::start(&args));
    let runs = l.wait_for(&fake, "the completed check run after the restart", completed);
    let run = runs.iter().find(|c| c["status"] == "completed").unwrap();
    assert_eq!(run["conclusion"], "success", "{run:#?}");
    let id = &l.sweep_ids()[0];
    let sweep = format!("{id}-local");
    let ledger = l.ledger();
    for p in ledger.points(&sweep).unwrap() {
        assert_eq!(p.state, PointState::Succeeded, "{p:?}");
        assert_eq!(ledger.transitions_into(&sweep, &p.point_id, PointState::Submitted).unwrap(), 1, "{p:?}");
    }
}

impl Loop {
    /// A new commit on the PR (an unrelated file), still appending the same changelog entries.
    fn push(&mut self, fake: &FakeGitHub) -> Value {
        let repo = self.s.path("repo");
        std::fs::write(repo.join("NOTES.md"), "a follow-up commit\n").unwrap();
        let run =
            |args: &[&str]| assert!(Command::new("git").arg("-C").arg(&repo).args(args).status().unwrap().success());
        run(&["add", "NOTES.md"]);
        run(&["commit", "-q", "-m", "follow-up"]);
        self.head = git(&repo, "HEAD");
        fake.add_pull(&self.s.repo, self.s.pr, &self.head, &["full-sweep-fail-fast"], &[("perf-changelog.yaml", 40)]);
        fake.world().pulls.get_mut(&(self.s.repo.clone(), self.s.pr)).unwrap()["base"]["sha"] = json!(self.base);
        let mut payload = self.labeled();
        payload["action"] = json!("synchronize");
        payload.as_object_mut().unwrap().remove("label");
        payload
    }

    fn wait_started(&self, id: &str) {
        let start = Instant::now();
        while self.ledger().points(&format!("{id}-local")).unwrap().iter().all(|p| p.state == PointState::Planned) {
            assert!(start.elapsed() < BOUND, "sweep {id} never started");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[test]
fn a_push_mid_sweep_cancels_it_and_sweeps_the_new_head() {
    if !slurm_enabled("a_push_mid_sweep_cancels_it_and_sweeps_the_new_head") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = runtime.block_on(FakeGitHub::start(support::TOKEN, support::BOT));
    let mut l = Loop::new("looppush", 162, &fake, |repo, _| fixture_git_repo(repo));
    let args = l.server_args(&fake, NO_UPSTREAM);
    let server = runtime.block_on(support::ServerProcess::start(&args.iter().map(String::as_str).collect::<Vec<_>>()));
    let old_head = l.head.clone();
    runtime.block_on(async {
        assert_eq!(server.deliver("pull_request", "d-label", &l.labeled()).await.0, 202);
        server.wait_handled(1).await;
    });
    let first = l.sweep_ids()[0].clone();
    l.wait_started(&first);
    let sync = l.push(&fake);
    runtime.block_on(async {
        assert_eq!(server.deliver("pull_request", "d-sync", &sync).await.0, 202);
        server.wait_handled(2).await;
    });
    let new_head = l.head.clone();
    // Preflight (on by default) adds its own check run per head: only the sweep runs count here.
    let sweep = |c: &&Value| c["name"] == "sweepgate/sweep";
    let runs = l.wait_for(&fake, "both sweep check runs completed", |r| {
        r.iter().filter(sweep).count() == 2 && r.iter().filter(sweep).all(|c| c["status"] == "completed")
    });
    let on = |sha: &str| {
        runs.iter()
            .filter(sweep)
            .find(|c| c["head_sha"] == sha)
            .unwrap_or_else(|| panic!("no sweep check run on {sha}: {runs:#?}"))
    };
    assert_eq!(on(&old_head)["conclusion"], "cancelled", "{:#?}", on(&old_head));
    assert_eq!(on(&new_head)["conclusion"], "success", "{:#?}", on(&new_head));
    let ids = l.sweep_ids();
    assert_eq!(ids.len(), 2, "{ids:?}");
    let points = l.ledger().points(&format!("{first}-local")).unwrap();
    assert!(points.iter().any(|p| p.state == PointState::Cancelled), "{points:?}");
}

#[test]
fn labels_flipping_on_off_on_leave_exactly_one_live_sweep() {
    if !slurm_enabled("labels_flipping_on_off_on_leave_exactly_one_live_sweep") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = runtime.block_on(FakeGitHub::start(support::TOKEN, support::BOT));
    let l = Loop::new("loopflip", 163, &fake, |repo, _| fixture_git_repo(repo));
    let args = l.server_args(&fake, NO_UPSTREAM);
    let server = runtime.block_on(support::ServerProcess::start(&args.iter().map(String::as_str).collect::<Vec<_>>()));
    let mut unlabeled = l.labeled();
    unlabeled["action"] = json!("unlabeled");
    unlabeled["pull_request"]["labels"] = json!([]);
    runtime.block_on(async {
        assert_eq!(server.deliver("pull_request", "d-on", &l.labeled()).await.0, 202);
        server.wait_handled(1).await;
        fake.world().pulls.get_mut(&(l.s.repo.clone(), l.s.pr)).unwrap()["labels"] = json!([]);
        assert_eq!(server.deliver("pull_request", "d-off", &unlabeled).await.0, 202);
        server.wait_handled(2).await;
        fake.world().pulls.get_mut(&(l.s.repo.clone(), l.s.pr)).unwrap()["labels"] =
            json!([{"name": "full-sweep-fail-fast"}]);
        assert_eq!(server.deliver("pull_request", "d-on-again", &l.labeled()).await.0, 202);
        server.wait_handled(3).await;
    });
    let runs = l
        .wait_for(&fake, "both check runs completed", |r| r.len() == 2 && r.iter().all(|c| c["status"] == "completed"));
    let conclusions: Vec<&str> = runs.iter().map(|c| c["conclusion"].as_str().unwrap()).collect();
    assert_eq!(conclusions, ["cancelled", "success"], "{runs:#?}");
    let ids = l.sweep_ids();
    assert_eq!(ids.len(), 2, "{ids:?}");
    let ledger = l.ledger();
    let live: Vec<&String> =
        ids.iter().filter(|id| !ledger.cancel_requested(&format!("{id}-local")).unwrap()).collect();
    assert_eq!(live.len(), 1, "exactly one sweep was never cancelled: {ids:?}");
}

/// VmHWM of the server whose command line names `state` (reported, not asserted).
fn server_peak_rss(state: &Path) -> String {
    let pids = Command::new("pgrep").arg("-f").arg(state).output().unwrap();
    let pid = String::from_utf8_lossy(&pids.stdout).lines().next().unwrap_or_default().to_owned();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status.lines().find(|l| l.starts_with("VmHWM")).unwrap_or("VmHWM unknown").to_owned()
}
