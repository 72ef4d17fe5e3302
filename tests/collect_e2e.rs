//! `sweepgate collect` end to end: a fixture bundle is served by the fake GitHub (PR, commits,
//! files with patches, check-runs, the sign-off, tarballs at base and head, a run with a result
//! artifact holding a nested server-log tarball), collected through the real HTTP client into a
//! new bundle, and verified: the verdict equals the fixture's expected one, output is
//! byte-identical across runs, and the request count stays within budget.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use support::fake_github::FakeGitHub;
use support::fake_upstream::FakeUpstream;
use support::serve_bundle::{fixture, serve, serve_upstream, REPO, RUN};
use support::{BOT, TOKEN};
use sweepgate::evidence::{read_bundle, Fact, SignoffKind};

/// green-sweep's first eval set, the artifact `serve` puts the nested server-log tarball in.
const EVAL: &str =
    "eval_dsr1_8k1k_dsr1_8k1k_fp4_sglang_tp8-pp1-dcp1-pcp1-ep8-dpafalse_disagg-false_spec-none_conc32_b200-nb_0";

fn collect(fake: &FakeGitHub, upstream: &FakeUpstream, pr: u64, signoff: &str, out: &Path) -> Output {
    collect_with(fake, upstream, pr, signoff, out, &[])
}

fn collect_with(
    fake: &FakeGitHub,
    upstream: &FakeUpstream,
    pr: u64,
    signoff: &str,
    out: &Path,
    extra: &[&str],
) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(["collect", "--repo", REPO, "--pr", &pr.to_string(), "--signoff", signoff, "--out"])
        .arg(out)
        .args(["--api-url", &fake.url, "--token", TOKEN, "--review-date", "2026-11-29"])
        .args(["--upstream-github-api", &upstream.url, "--huggingface-url", &upstream.url])
        .args([
            "--registry",
            &format!("docker.io={}", upstream.url),
            "--registry",
            &format!("nvcr.io={}", upstream.url),
        ])
        .args(["--upstream-allow-host", upstream.host(), "--upstream-allow-private"])
        .args(extra)
        .env_remove("GITHUB_TOKEN")
        .output()
        .expect("run sweepgate collect")
}

fn verify(bundle: &Path, format: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(["verify", "--format", format, "--bundle"])
        .arg(bundle)
        .output()
        .expect("run sweepgate verify")
}

/// The green-sweep fixture served by a fresh fake GitHub; the sign-off URL.
async fn green_sweep() -> (sweepgate::evidence::Evidence, FakeGitHub, FakeUpstream, String) {
    served(read_bundle(&fixture("green-sweep")).unwrap()).await
}

/// `original` served by a fresh fake GitHub and fake upstream; the sign-off URL.
async fn served(
    original: sweepgate::evidence::Evidence,
) -> (sweepgate::evidence::Evidence, FakeGitHub, FakeUpstream, String) {
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    let upstream = FakeUpstream::start().await;
    serve_upstream(&upstream, &original);
    let url = serve(&fake, &original);
    (original, fake, upstream, url)
}

fn api_requests(fake: &FakeGitHub) -> usize {
    fake.world().log.iter().filter(|l| !l.contains(" /_blobs/")).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fake_github_to_bundle_to_the_fixture_verdict() {
    let (original, fake, upstream, url) = green_sweep().await;
    assert_eq!(support::serve_bundle::first_eval_artifact(&original), EVAL);
    let digest = format!("sha256:{}", "ab".repeat(32));
    upstream.state().manifests.insert("lmsysorg/sglang:v0.5.9-cu130".into(), digest.clone());
    let pr = original.pull_request.number;
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("first"), dir.path().join("second"));

    {
        let mut w = fake.world();
        let head = original.pull_request.head_sha.clone();
        w.git_trees.insert(
            (REPO.into(), head),
            vec![
                ("configs/nvidia-master.yaml".into(), "1ea4e7f".repeat(5) + "00000"),
                ("src/x.rs".into(), "0".repeat(40)),
            ],
        );
        w.jobs.insert(
            (REPO.into(), RUN),
            vec![
                serde_json::json!({"id": 71, "name": "eval / p1 | dsr1 fp4 b200 sgl TP8/EP8 c64 | eval", "conclusion": "success"}),
                serde_json::json!({"id": 72, "name": "single-node 8k1k / p1 | dsr1 fp4 b200 sgl TP8/EP8 c64", "conclusion": "success"}),
            ],
        );
        w.job_logs.insert(71, b"lm_eval finished\n".to_vec());
    }
    let out = collect(&fake, &upstream, pr, &url, &first);
    assert!(out.status.success(), "collect failed: {}", String::from_utf8_lossy(&out.stderr));
    let got = read_bundle(&first).unwrap();
    let head_blobs = got.blobs[&original.pull_request.head_sha].as_ok().unwrap();
    assert_eq!(head_blobs.keys().collect::<Vec<_>>(), ["configs/nvidia-master.yaml"], "only the paths a verdict reads");
    let job = &got.runs[&RUN].jobs[&71];
    assert_eq!((job.log.clone(), got.runs[&RUN].jobs.len()), (Fact::Ok(()), 1), "eval jobs only");
    assert_eq!(got.artifacts.text(&format!("{RUN}/job-logs/71.log")), Some("lm_eval finished\n"));
    assert_eq!(got.runs[&RUN].archives[&format!("{EVAL}/eval_server_logs.tar.gz")], Fact::Ok(()));
    let requests = api_requests(&fake);
    eprintln!("GitHub API requests for one collection: {requests}");
    assert!(requests <= 30, "{requests} requests: {:#?}", fake.world().log);
    {
        // Each fact is read once: the conversation sign-off comes from the PR's comment list;
        // the PR twice only because the head is re-read at the end (spec 30 §1.6).
        let w = fake.world();
        let id = url.rsplit('-').next().unwrap();
        assert_eq!(w.count(&format!("GET /repos/{REPO}/issues/comments/{id}")), 0, "{:#?}", w.log);
        assert_eq!(w.count(&format!("GET /repos/{REPO}/issues/{pr}/comments")), 1, "{:#?}", w.log);
        assert_eq!(w.log.iter().filter(|l| **l == format!("GET /repos/{REPO}/pulls/{pr}")).count(), 2, "{:#?}", w.log);
    }
    assert_eq!(fake.world().leaked_auth, 0, "the GitHub token was sent to a storage redirect");

    let got = read_bundle(&first).unwrap();
    assert_eq!(got.pull_request.head_sha, original.pull_request.head_sha);
    assert_eq!(got.live_head_sha.as_deref(), Some(original.pull_request.head_sha.as_str()));
    assert_eq!(got.signoff.kind, SignoffKind::Comment);
    assert_eq!(got.signoff.body, original.signoff.body);
    assert_eq!(got.files, original.files, "files keep their patches");
    assert_eq!(got.commits, original.commits);
    for path in original.base.paths() {
        assert_eq!(got.base.get(path), original.base.get(path), "base {path}");
    }
    for path in original.head.paths() {
        assert_eq!(got.head.get(path), original.head.get(path), "head {path}");
    }
    let run = &got.runs[&RUN];
    assert_eq!(run.artifacts[EVAL], sweepgate::evidence::Fact::Ok(()));
    assert!(matches!(run.artifacts["server_logs_other"], sweepgate::evidence::Fact::Unavailable(_)));
    let nested = format!("{RUN}/{EVAL}/eval_server_logs.tar.gz.d/logs/server.log");
    assert_eq!(got.artifacts.text(&nested), Some("Uvicorn running on 0.0.0.0:8000\n"));
    assert!(
        matches!(&got.permissions[&original.signoff.author], sweepgate::evidence::Fact::Ok(p) if p.role_name == "write")
    );
    assert_eq!(
        got.upstream.image_digests.get("lmsysorg/sglang:v0.5.9-cu130"),
        Some(&sweepgate::evidence::Fact::Ok(digest))
    );

    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("green-sweep").join("expected.json")).unwrap()).unwrap();
    let verdict: serde_json::Value = serde_json::from_slice(&verify(&first, "json").stdout).unwrap();
    assert_eq!(verdict["verdict"], expected["verdict"]);
    for check in verdict["checks"].as_array().unwrap() {
        let id = check["id"].to_string();
        assert_eq!(check["status"], expected["checks"][&id], "check {id}: {}", check["summary"]);
    }

    let out = collect(&fake, &upstream, pr, &url, &second);
    assert!(out.status.success());
    for file in ["evidence.json", "base/.github/CODEOWNERS", "head/configs/nvidia-master.yaml"] {
        assert_eq!(std::fs::read(first.join(file)).unwrap(), std::fs::read(second.join(file)).unwrap(), "{file}");
    }
    assert_eq!(verify(&first, "markdown").stdout, verify(&second, "markdown").stdout, "same bundle, same bytes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_cannot_be_fetched_is_recorded_not_fatal() {
    let (original, fake, upstream, url) = green_sweep().await;
    {
        let mut w = fake.world();
        w.artifact_zips.clear();
        w.permissions.clear();
        w.tarballs.retain(|(_, sha), _| *sha == original.pull_request.head_sha);
    }
    upstream.state().manifests.clear();
    let dir = tempfile::tempdir().unwrap();
    let out = collect(&fake, &upstream, original.pull_request.number, &url, dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got = read_bundle(dir.path()).unwrap();
    assert!(matches!(&got.runs[&RUN].artifacts[EVAL], sweepgate::evidence::Fact::Unavailable(r) if r.contains("410")));
    assert!(
        matches!(&got.permissions[&original.signoff.author], sweepgate::evidence::Fact::Ok(p) if p.permission == "none")
    );
    assert!(matches!(&got.team_members, t if t.is_empty()), "no base tree, so no CODEOWNERS teams");
    assert!(
        matches!(&got.upstream.image_digests["lmsysorg/sglang:v0.5.9-cu130"], sweepgate::evidence::Fact::Unavailable(r) if r.contains("404"))
    );
    // Policy files are missing from the evidence: the verdict says so instead of passing.
    let verdict: serde_json::Value = serde_json::from_slice(&verify(dir.path(), "json").stdout).unwrap();
    assert_eq!(verdict["verdict"], "REJECTED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signoff_of_another_pr_or_a_missing_pr_is_an_error() {
    let (original, fake, upstream, _) = green_sweep().await;
    let pr = original.pull_request.number;
    let elsewhere = fake.add_comment(REPO, 1, "nv-owner", "MEMBER", "As a PR reviewer and CODEOWNER, …");
    let dir = tempfile::tempdir().unwrap();
    let out = collect(
        &fake,
        &upstream,
        pr,
        &format!("https://github.com/{REPO}/pull/{pr}#issuecomment-{elsewhere}"),
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("belongs to") && stderr.contains("/issues/1"), "{stderr}");
    let out = collect(&fake, &upstream, 999, &format!("https://github.com/{REPO}/pull/999#issuecomment-1"), dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("PR #999") && stderr.contains("404"), "{stderr}");
    let out = collect(&fake, &upstream, pr, &format!("https://github.com/{REPO}/pull/1#issuecomment-5"), dir.path());
    assert!(String::from_utf8_lossy(&out.stderr).contains("collection was asked for"));
    assert!(!dir.path().join("evidence.json").exists(), "no bundle is written on errors");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downloads_are_retried_after_a_5xx() {
    use support::fake_github::Fault;
    let (original, fake, upstream, url) = green_sweep().await;
    for matching in [format!("GET /repos/{REPO}/tarball/"), format!("GET /repos/{REPO}/actions/artifacts/")] {
        fake.fail_next(Fault { status: 502, matching, ..Fault::default() });
    }
    let dir = tempfile::tempdir().unwrap();
    let out = collect(&fake, &upstream, original.pull_request.number, &url, dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got = read_bundle(dir.path()).unwrap();
    assert!(got.base.get(".github/CODEOWNERS").is_some() && got.head.get("configs/nvidia-master.yaml").is_some());
    assert_eq!(got.runs[&RUN].artifacts[EVAL], sweepgate::evidence::Fact::Ok(()));
    assert_eq!(fake.world().count(&format!("GET /repos/{REPO}/tarball/")), 3, "one retry, then base and head");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn comments_keep_their_association_and_github_times() {
    let (original, fake, upstream, url) = green_sweep().await;
    let pr = original.pull_request.number;
    fake.add_comment(REPO, pr, "vendor-dev", "CONTRIBUTOR", "/reuse-sweep-run 40714803265");
    let dir = tempfile::tempdir().unwrap();
    assert!(collect(&fake, &upstream, pr, &url, dir.path()).status.success());
    let got = read_bundle(dir.path()).unwrap();
    let command = got.comments.iter().find(|c| c.author == "vendor-dev").unwrap();
    assert_eq!(
        (command.author_association.as_str(), command.created_at.as_str()),
        ("CONTRIBUTOR", "2026-09-01T10:00:00Z")
    );
    assert!(got.permissions.contains_key("vendor-dev"), "reuse commenters' permissions are collected");
    assert_eq!(got.signoff.created_at, "2026-09-01T10:00:00Z");
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn reason<T: std::fmt::Debug>(fact: &Fact<T>) -> &str {
    match fact {
        Fact::Unavailable(reason) => reason,
        Fact::Ok(v) => panic!("expected unavailable, got {v:?}"),
    }
}

const PUBLISHED: u64 = 39659301076;
const PUBLISHING_PR: u64 = 3290;

/// A fixture whose published run of dsr1-fp4-b200-sglang the collector must find itself: the
/// base changelog's last entry for the key names the merged PR `PUBLISHING_PR`, whose main run on
/// the merge commit is `PUBLISHED`, served with the fixture's artifacts of that run (those whose
/// name starts with an entry of `unserved` are listed but their zip is gone, 410) and a server-log
/// artifact no check reads. Returns what `served` does and the served artifact names.
async fn with_published_run(
    bundle: &str,
    unserved: &[&str],
) -> (sweepgate::evidence::Evidence, FakeGitHub, FakeUpstream, String, Vec<String>) {
    let mut original = read_bundle(&fixture(bundle)).unwrap();
    // Nothing of the published run is served as evidence.
    original.upstream.published_runs.clear();
    let changelog = format!(
        "- config-keys:\n  - dsr1-fp4-b200-sglang\n  description:\n  - Add the TP4 and TP8 sweeps\n  pr-link: https://github.com/{REPO}/pull/{PUBLISHING_PR}\n"
    );
    original.base.insert("perf-changelog.yaml", changelog);
    let published_files: Vec<(String, String, Vec<u8>)> = original
        .artifacts
        .paths()
        .filter_map(|p| {
            let rest = p.strip_prefix(&format!("{PUBLISHED}/"))?;
            let (artifact, file) = rest.split_once('/')?;
            Some((artifact.to_string(), file.to_string(), original.artifacts.get(p)?.to_vec()))
        })
        .collect();
    assert!(!published_files.is_empty(), "{bundle} carries the published run's artifacts");
    let (original, fake, upstream, url) = served(original).await;

    let mut names: Vec<String> = published_files.iter().map(|(a, _, _)| a.clone()).collect();
    names.dedup();
    let mut artifacts: Vec<support::fake_github::PublishedArtifact<'_>> = names
        .iter()
        .map(|name| {
            let files =
                published_files.iter().filter(|(a, _, _)| a == name).map(|(_, f, b)| (f.as_str(), b.as_slice()));
            (name.as_str(), (!unserved.iter().any(|u| name.starts_with(u))).then(|| files.collect()))
        })
        .collect();
    artifacts.push(("server_logs_dsr1_tp4", None));
    fake.add_published_run(REPO, PUBLISHING_PR, PUBLISHED, &"4d".repeat(20), &artifacts);
    let log = fake.world().log.clone();
    assert!(!log.iter().any(|l| l.contains("run-sweep.yml/runs?head_sha=")), "nothing is looked up before collect");
    (original, fake, upstream, url, names)
}

fn check_row(verdict: &serde_json::Value, id: u64) -> (String, String) {
    let row = verdict["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap();
    (row["status"].as_str().unwrap().to_owned(), row["summary"].as_str().unwrap().replace('\\', ""))
}

/// The published case: the collector follows the base changelog's last entry for the affected
/// key to its merged PR, finds that PR's main run on the merge commit, downloads its `bmk_*`,
/// and the real verifier FAILs 18(g) on the published TP4 c128 frontier point that the head
/// master config (TP8/EP8, conc 4-64) no longer generates.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_published_run_is_found_collected_and_fails_18g_on_a_removed_frontier_point() {
    let (original, fake, upstream, url, names) = with_published_run("published-rejected", &[]).await;
    let merge_sha = "4d".repeat(20);
    let dir = tempfile::tempdir().unwrap();
    let out = collect(&fake, &upstream, original.pull_request.number, &url, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let got = read_bundle(dir.path()).unwrap();
    let published = got.upstream.published_runs["dsr1-fp4-b200-sglang"].as_ok().cloned().flatten().unwrap();
    assert_eq!((published.run_id, published.pr, published.source.as_str()), (PUBLISHED, PUBLISHING_PR, "main"));
    let run = &got.runs[&PUBLISHED];
    for name in &names {
        assert_eq!(run.artifacts[name], Fact::Ok(()), "{name}");
    }
    assert!(reason(&run.artifacts["server_logs_dsr1_tp4"]).contains("not read by any check"));
    assert!(got
        .artifacts
        .paths()
        .any(|p| p.starts_with(&format!("{PUBLISHED}/bmk_dsr1_fp4_b200_sglang_tp4_ep4_c128/"))));
    let log = fake.world().log.clone();
    assert!(log.iter().any(|l| l.contains(&format!("/actions/workflows/run-sweep.yml/runs?head_sha={merge_sha}"))));

    let verdict: serde_json::Value = serde_json::from_slice(&verify(dir.path(), "json").stdout).unwrap();
    assert_eq!(verdict["verdict"], "REJECTED");
    let (status, summary) = check_row(&verdict, 18);
    assert_eq!(status, "FAIL", "{summary}");
    assert!(
        summary.contains("(g) removed point tp4 ep4") && summary.contains(&format!("c128 of run {PUBLISHED}")),
        "{summary}"
    );
}

/// Check 2's ingested cohort (sub-rule 2.h, decision W2): the collector also downloads the
/// published run's eval results (not its server logs), so the collected bundle carries the cohort
/// rows and Check 2 compares the head's scores with them. An eval artifact of the published run
/// that cannot be downloaded is a named fact, and Check 2 FAILs naming it, never an empty cohort.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_published_runs_eval_results_are_collected_and_compared_as_the_cohort() {
    let (original, fake, upstream, url, names) = with_published_run("eval-sigma-consistent", &[]).await;
    let eval = names.iter().find(|n| n.starts_with("eval_")).expect("the published run has an eval set").clone();
    let dir = tempfile::tempdir().unwrap();
    let out = collect(&fake, &upstream, original.pull_request.number, &url, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let got = read_bundle(dir.path()).unwrap();
    assert_eq!(got.runs[&PUBLISHED].artifacts[&eval], Fact::Ok(()));
    assert!(got
        .artifacts
        .paths()
        .any(|p| p.starts_with(&format!("{PUBLISHED}/{eval}/")) && p.ends_with("meta_env.json")));
    let verdict: serde_json::Value = serde_json::from_slice(&verify(dir.path(), "json").stdout).unwrap();
    let (status, summary) = check_row(&verdict, 2);
    assert_eq!(status, "PASS", "{summary}");
    assert!(summary.contains(&format!("exact ingested cohort (run {PUBLISHED})")), "{summary}");

    let (original, fake, upstream, url, _) = with_published_run("eval-sigma-consistent", &["eval_"]).await;
    let dir = tempfile::tempdir().unwrap();
    let out = collect(&fake, &upstream, original.pull_request.number, &url, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let got = read_bundle(dir.path()).unwrap();
    assert!(reason(&got.runs[&PUBLISHED].artifacts[&eval]).contains("410"), "{:?}", got.runs[&PUBLISHED].artifacts);
    let verdict: serde_json::Value = serde_json::from_slice(&verify(dir.path(), "json").stdout).unwrap();
    let (status, summary) = check_row(&verdict, 2);
    assert_eq!(status, "FAIL", "{summary}");
    assert!(summary.contains(&format!("eval artifacts {eval} of the ingested run {PUBLISHED}")), "{summary}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_new_at_head_has_no_published_run_and_an_unreadable_base_is_named() {
    let (original, fake, upstream, url) = green_sweep().await;
    let dir = tempfile::tempdir().unwrap();
    let out = collect(&fake, &upstream, original.pull_request.number, &url, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let got = read_bundle(dir.path()).unwrap();
    // green-sweep adds its config: absent from every base master config, it has no series yet.
    assert!(!got.upstream.published_runs.is_empty());
    for (key, fact) in &got.upstream.published_runs {
        assert_eq!(*fact, Fact::Ok(None), "{key}");
    }
    // A base tarball that is not a tarball: the tree and everything derived from it are named.
    let base = original.pull_request.base_sha.clone();
    fake.world().tarballs.insert((REPO.into(), base), b"not a tarball".to_vec());
    let out = collect_with(&fake, &upstream, original.pull_request.number, &url, dir.path(), &["--force"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let got = read_bundle(dir.path()).unwrap();
    assert!(reason(&got.trees.base).contains("not a readable tar"), "{:?}", got.trees.base);
    for fact in got.upstream.published_runs.values() {
        assert!(reason(fact).contains("base tree is unavailable"), "{fact:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_head_master_config_still_gives_a_bundle_with_named_facts() {
    let mut original = read_bundle(&fixture("green-sweep")).unwrap();
    original.head.insert("configs/nvidia-master.yaml", "dsr1-fp4-b200-sglang: [unclosed\n");
    let (original, fake, upstream, url) = served(original).await;
    let dir = tempfile::tempdir().unwrap();
    let out = collect(&fake, &upstream, original.pull_request.number, &url, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let got = read_bundle(dir.path()).unwrap();
    assert_eq!(got.trees.head, Fact::Ok(()));
    let all = &got.upstream.published_runs[sweepgate::evidence::ALL_SERIES];
    assert!(reason(all).contains("affected configs are unknown"), "{all:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reused_out_is_refused_without_force_and_replaced_whole_with_it() {
    let (original, fake, upstream, url) = green_sweep().await;
    // The out dir sits alone in its own parent, so a concurrent test's staging dirs in the
    // system temp dir are never taken for this collection's leftovers.
    let parent = tempfile::tempdir().unwrap();
    let out_dir = parent.path().join("out");
    let stale = out_dir.join(format!("artifacts/{RUN}/eval_stale/results_2026.json"));
    std::fs::create_dir_all(stale.parent().unwrap()).unwrap();
    std::fs::write(&stale, "{}").unwrap();
    let before = fake.world().log.len();
    let out = collect(&fake, &upstream, original.pull_request.number, &url, &out_dir);
    assert!(!out.status.success() && stderr(&out).contains("--force"), "{}", stderr(&out));
    assert_eq!(fake.world().log.len(), before, "refused before any request");
    assert!(stale.exists(), "nothing was touched");
    let out = collect_with(&fake, &upstream, original.pull_request.number, &url, &out_dir, &["--force"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stale.exists(), "the stale eval is gone");
    assert!(out_dir.join("evidence.json").exists());
    let leftovers: Vec<_> = std::fs::read_dir(parent.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name().to_string_lossy().contains(".new-") || e.file_name().to_string_lossy().contains(".old-")
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn colliding_zip_entries_make_that_artifact_unavailable_not_the_collection() {
    let (original, fake, upstream, url) = green_sweep().await;
    fake.world().artifact_zips.insert(RUN * 100, support::serve_bundle::zip_of(&[("a", b"file"), ("a/b", b"under a")]));
    let dir = tempfile::tempdir().unwrap();
    let out = collect(&fake, &upstream, original.pull_request.number, &url, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let got = read_bundle(dir.path()).unwrap();
    let run = &got.runs[&RUN];
    assert!(reason(&run.artifacts[EVAL]).contains("collide"), "{:?}", run.artifacts);
    assert!(run.artifacts.iter().filter(|(n, _)| n.starts_with("bmk_")).all(|(_, f)| *f == Fact::Ok(())));
}

/// Issue 24 item 5: an artifact name with `../` made folders outside the bundle and failed the
/// whole collection. Now that artifact alone is unavailable, before anything touches the disk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_artifact_name_that_climbs_out_is_unavailable_and_nothing_is_written_outside() {
    let (original, fake, upstream, url) = green_sweep().await;
    let evil = "bmk_x/../../../../escaped";
    {
        let mut w = fake.world();
        let list = w.artifacts.get_mut(&(REPO.to_string(), RUN)).expect("the run has artifacts");
        list.push(serde_json::json!({"id": RUN * 100 + 99, "name": evil, "expired": false}));
        w.artifact_zips.insert(RUN * 100 + 99, support::serve_bundle::zip_of(&[("a", b"file")]));
    }
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("a/b/bundle");
    let out = collect(&fake, &upstream, original.pull_request.number, &url, &bundle);
    assert!(out.status.success(), "{}", stderr(&out));
    let got = read_bundle(&bundle).unwrap();
    let run = &got.runs[&RUN];
    assert!(reason(&run.artifacts[evil]).contains("not a single safe folder name"), "{:?}", run.artifacts);
    let mut others = run.artifacts.iter().filter(|(n, _)| n.starts_with("bmk_") && n.as_str() != evil);
    assert!(others.clone().count() > 0 && others.all(|(_, f)| *f == Fact::Ok(())), "{:?}", run.artifacts);
    let beside: Vec<_> = std::fs::read_dir(dir.path().join("a/b")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(beside, ["bundle"]);
    assert!(!fake.world().log.iter().any(|l| l.contains(&format!("/artifacts/{}/zip", RUN * 100 + 99))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn global_bounds_make_the_artifacts_past_them_unavailable() {
    let (original, fake, upstream, url) = green_sweep().await;
    let (tarballs, zips): (usize, Vec<usize>) = {
        let w = fake.world();
        let tarballs = w.tarballs.values().map(Vec::len).sum();
        let mut ids: Vec<u64> = w.artifact_zips.keys().copied().collect();
        ids.sort();
        (tarballs, ids.iter().map(|id| w.artifact_zips[id].len()).collect())
    };
    // Room for the tarballs and every collected zip but one byte: the last artifact in priority
    // order (the qualifying run's, by name) is left out, and says why.
    let bound = (tarballs + zips.iter().sum::<usize>() - 1).to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = collect_with(
        &fake,
        &upstream,
        original.pull_request.number,
        &url,
        dir.path(),
        &["--max-download-bytes", &bound],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let got = read_bundle(dir.path()).unwrap();
    let run = &got.runs[&RUN];
    let last = EVAL.replace("_conc32_", "_conc64_");
    assert!(reason(&run.artifacts[&last]).contains("global bound of"), "{:?}", run.artifacts);
    assert!(!got.artifacts.paths().any(|p| p.contains(&format!("/{last}/"))));
    assert_eq!(run.artifacts[EVAL], Fact::Ok(()));

    let out = collect_with(
        &fake,
        &upstream,
        original.pull_request.number,
        &url,
        dir.path(),
        &["--force", "--max-unpacked-bytes", "1"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let got = read_bundle(dir.path()).unwrap();
    for (name, fact) in got.runs[&RUN].artifacts.iter().filter(|(n, _)| n.starts_with("bmk_") || n.starts_with("eval_"))
    {
        assert!(reason(fact).contains("global bound of 1 bytes unpacked"), "{name}: {fact:?}");
    }
    let verdict: serde_json::Value = serde_json::from_slice(&verify(dir.path(), "json").stdout).unwrap();
    assert_eq!(verdict["verdict"], "REJECTED", "missing evals never approve");
}

/// Issue 14 item 5: an image a PR names on a loopback registry is never contacted, even with
/// private addresses allowed for the configured fake upstream, and the reason is named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_on_loopback_named_in_a_pr_config_is_not_contacted() {
    let probe = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let evil = format!("{}/evil/probe:v1", probe.local_addr().unwrap());
    let contacted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = contacted.clone();
    let listener = tokio::spawn(async move {
        while probe.accept().await.is_ok() {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    let mut original = read_bundle(&fixture("green-sweep")).unwrap();
    let master =
        original.head.text("configs/nvidia-master.yaml").unwrap().replace("lmsysorg/sglang:v0.5.9-cu130", &evil);
    assert!(master.contains(&evil));
    original.head.insert("configs/nvidia-master.yaml", master);
    let (original, fake, upstream, url) = served(original).await;
    let dir = tempfile::tempdir().unwrap();
    let out = collect(&fake, &upstream, original.pull_request.number, &url, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let got = read_bundle(dir.path()).unwrap();
    let why = reason(&got.upstream.image_digests[&evil]);
    assert!(why.contains("not on the upstream allowlist; not contacted"), "{why}");
    assert!(!why.starts_with("not found:"), "a refusal is not a definite answer");
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(contacted.load(std::sync::atomic::Ordering::SeqCst), 0, "the probe listener was contacted");
    listener.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nested_archive_that_will_not_extract_is_named_and_its_artifact_kept() {
    let (original, fake, upstream, url) = green_sweep().await;
    let zip = support::serve_bundle::zip_of(&[("meta_env.json", b"{}"), ("server_logs.tar.gz", b"not gzip at all")]);
    fake.world().artifact_zips.insert(RUN * 100, zip);
    let dir = tempfile::tempdir().unwrap();
    let out = collect(&fake, &upstream, original.pull_request.number, &url, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let got = read_bundle(dir.path()).unwrap();
    let run = &got.runs[&RUN];
    assert_eq!(run.artifacts[EVAL], Fact::Ok(()));
    assert!(
        reason(&run.archives[&format!("{EVAL}/server_logs.tar.gz")]).contains("not a readable tar"),
        "{:?}",
        run.archives
    );
    assert!(!run.artifacts.keys().any(|k| k.contains(':')), "no name:path keys in artifacts");
}

/// Serves what a bundle records of its commits besides base and head: the git tree listing of
/// each commit with blobs, and a tarball at each commit with texts (the contents API reads it).
fn serve_commits(fake: &FakeGitHub, ev: &sweepgate::evidence::Evidence) {
    let mut w = fake.world();
    for (sha, blobs) in &ev.blobs {
        let listing = blobs.as_ok().unwrap().iter().map(|(p, b)| (p.clone(), b.clone())).collect();
        w.git_trees.insert((REPO.into(), sha.clone()), listing);
    }
    for (sha, texts) in &ev.texts_at {
        let mut tree = sweepgate::repo::MemTree::new();
        for (path, text) in texts.as_ok().unwrap() {
            tree.insert(path, text.as_str());
        }
        let tarball = support::serve_bundle::tar_gz(&format!("example-inferencex-{}", &sha[..7]), &tree);
        w.tarballs.insert((REPO.into(), sha.clone()), tarball);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_before_a_merge_of_main_is_collected_with_the_master_text_check_1_compares() {
    for (name, check_1) in [("merged-main-after-sweep", "PASS"), ("merged-main-changed-entry", "FAIL")] {
        let (original, fake, upstream, url) = served(read_bundle(&fixture(name)).unwrap()).await;
        serve_commits(&fake, &original);
        let dir = tempfile::tempdir().unwrap();
        let out = collect(&fake, &upstream, original.pull_request.number, &url, dir.path());
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let got = read_bundle(dir.path()).unwrap();
        assert_eq!(got.texts_at, original.texts_at, "{name}: the differing master file's text at the sweep commit");
        let verdict: serde_json::Value = serde_json::from_slice(&verify(dir.path(), "json").stdout).unwrap();
        let row = &verdict["checks"][1];
        assert_eq!(row["status"], check_1, "{name}: {}", row["summary"]);
        if check_1 == "FAIL" {
            let summary = row["summary"].as_str().unwrap_or_default();
            assert!(summary.contains("configs/nvidia-master.yaml: dsr1-fp4-b200-sglang"), "{summary}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_job_list_is_a_named_fact_of_the_run() {
    let (original, fake, upstream, url) = green_sweep().await;
    // The fake serves the bundle's job list; take it away so the listing answers 404.
    fake.world().jobs.clear();
    let dir = tempfile::tempdir().unwrap();
    let out = collect(&fake, &upstream, original.pull_request.number, &url, dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = &read_bundle(dir.path()).unwrap().runs[&RUN];
    let reason = run.jobs_unavailable.as_deref().unwrap_or_default();
    assert!(reason.contains(&format!("job list of run {RUN}")) && reason.contains("404"), "{reason:?}");
    assert!(run.jobs.is_empty());
}

/// Off a terminal (CI logs, these tests) collect writes plain lines only: no carriage return,
/// no escape sequence, and the summary names the artifacts downloaded. On a terminal (a pty
/// from util-linux `script`, part of every Debian system) it draws the progress bar.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collect_shows_download_progress_only_on_a_terminal() {
    let (original, fake, upstream, url) = green_sweep().await;
    let dir = tempfile::tempdir().unwrap();
    let out = collect(&fake, &upstream, original.pull_request.number, &url, &dir.path().join("plain"));
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains('\r') && !err.contains('\x1b'), "{err:?}");
    assert!(err.contains("7 of 7 artifacts downloaded ("), "{err}");

    let command = [
        env!("CARGO_BIN_EXE_sweepgate"),
        "collect",
        "--repo",
        REPO,
        "--pr",
        &original.pull_request.number.to_string(),
        "--signoff",
        &url,
        "--out",
        &dir.path().join("tty").to_string_lossy(),
        "--api-url",
        &fake.url,
        "--token",
        TOKEN,
        "--review-date",
        "2026-11-29",
        "--upstream-github-api",
        &upstream.url,
        "--upstream-allow-host",
        upstream.host(),
        "--upstream-allow-private",
    ]
    .map(|arg| format!("'{}'", arg.replace('\'', r"'\''")))
    .join(" ");
    let tty = Command::new("script").args(["-qefc", &command, "/dev/null"]).env_remove("GITHUB_TOKEN").output();
    let tty = tty.expect("run collect under script(1)");
    let shown = String::from_utf8_lossy(&tty.stdout);
    assert!(tty.status.success(), "{shown}");
    assert!(shown.contains("\r\x1b[2K[") && shown.contains("] artifacts 7/7 · "), "{shown:?}");
}

/// Check 13 judges a separate draft by its own config.json (decision E30): the collector
/// fetches the config of the draft the launcher serves (`--speculative-draft-model-path`),
/// though the sign-off links no Hugging Face page of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_draft_the_launcher_serves_has_its_config_collected() {
    const DRAFT: &str = "RadixArk/Muse-Spark-Open-DFlash2";
    let mut original = read_bundle(&fixture("seed-004")).unwrap();
    // Only the upstream facts matter here; the run's artifacts are another test's subject.
    original.artifacts = Default::default();
    assert!(!original.signoff.body.contains("huggingface.co"), "the sign-off links no HF page");
    let (original, fake, upstream, url) = served(original).await;
    upstream.state().model_configs.insert(DRAFT.into(), serde_json::json!({"torch_dtype": "bfloat16"}));
    let dir = tempfile::tempdir().unwrap();
    let out = collect(&fake, &upstream, original.pull_request.number, &url, &dir.path().join("b"));
    assert!(out.status.success(), "collect failed: {}", stderr(&out));
    let got = read_bundle(&dir.path().join("b")).unwrap();
    let config = got.upstream.model_configs.get(DRAFT).and_then(|f| f.as_ok().cloned());
    assert_eq!(
        config.as_ref().and_then(|c| c["torch_dtype"].as_str()),
        Some("bfloat16"),
        "{:?}",
        got.upstream.model_configs
    );
}

/// The checkout ref the fixture's launcher pins, as upstream's `runners/launch_gb200-nv.sh` does
/// for its `dynamo-vllm` branch (`git checkout sa-submission-q2-2026`).
const SRT_REF: &str = "sa-submission-q2-2026";
const SRT_RECIPE: &str = "recipes/gb200-fp8/8k1k/low-latency.yaml";

/// green-sweep with one more affected entry, shaped like upstream's `dsr1-fp8-gb200-dynamo-sglang`
/// (nvidia-master.yaml at the history tip): a multi-node config whose `CONFIG_FILE` names a recipe
/// of the srt-slurm checkout its gb200 launcher clones at a pinned ref and copies nothing over.
fn with_external_recipe() -> sweepgate::evidence::Evidence {
    let mut e = read_bundle(&fixture("green-sweep")).unwrap();
    let master = e.head.text("configs/nvidia-master.yaml").unwrap().to_owned();
    let entry = format!(
        "dsr1-fp8-gb200-dynamo-sglang:\n  image: lmsysorg/sglang:v0.5.8.post1-cu130\n  model: deepseek-ai/DeepSeek-R1-0528\n  model-prefix: dsr1\n  runner: gb200\n  precision: fp8\n  framework: dynamo-sglang\n  multinode: true\n  disagg: true\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - conc-list: [4, 8, 16]\n        prefill:\n          num-worker: 1\n          tp: 8\n          ep: 1\n          dp-attn: false\n          additional-settings:\n          - \"CONFIG_FILE={SRT_RECIPE}\"\n        decode:\n          num-worker: 1\n          tp: 8\n          ep: 1\n          dp-attn: false\n"
    );
    let (before, base_lines) =
        (master.lines().count(), e.base.text("configs/nvidia-master.yaml").unwrap().lines().count());
    e.head.insert("configs/nvidia-master.yaml", format!("{master}{entry}"));
    let hunk: String = entry.lines().map(|l| format!("+{l}\n")).collect();
    let file = e.files.iter_mut().find(|f| f.filename == "configs/nvidia-master.yaml").unwrap();
    let patch = file.patch.take().unwrap_or_default();
    file.patch = Some(format!("{patch}@@ -{base_lines},0 +{},{} @@\n{hunk}", before + 1, entry.lines().count()));
    let runners = e.head.text("configs/runners.yaml").unwrap().to_owned();
    e.head.insert("configs/runners.yaml", format!("{runners}  gb200: [gb200-nv_0]\n"));
    e.head.insert(
        "runners/launch_gb200-nv.sh",
        format!("SRT_REPO_DIR=\"srt-slurm\"\ngit clone https://github.com/NVIDIA/srt-slurm.git \"$SRT_REPO_DIR\"\ncd \"$SRT_REPO_DIR\"\ngit checkout {SRT_REF}\nsrtctl apply -f \"$CONFIG_FILE\"\n"),
    );
    e
}

/// Issue 33 item 2 end to end: `collect` fetches the recipe the launcher reads from its srt-slurm
/// checkout at the pinned ref; the bundle holds it; Check 3 judges it, naming a setting the
/// cookbook lacks at `owner/repo@ref:path:line`. A fetch that fails is a named unavailable fact,
/// and Check 3 FAILs naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recipe_of_the_launchers_srt_slurm_checkout_is_collected_and_judged() {
    let (original, fake, upstream, url) = served(with_external_recipe()).await;
    // A recipe of srt-slurm's shape (schema 1: `backend.sglang_config.<role>`), written for the test.
    let recipe = "name: dsr1-gb200-fp8-low-latency\nmodel: {path: dsr1-fp8, container: lmsysorg/sglang:v0.5.8.post1-cu130, precision: fp8}\nresources: {gpu_type: gb200, gpus_per_node: 4, prefill_nodes: 2, decode_nodes: 2, prefill_workers: 1, decode_workers: 1}\nbackend:\n  type: sglang\n  sglang_config:\n    prefill:\n      tensor-parallel-size: 8\n      mem-fraction-static: 0.85\n      chunked-prefill-size: 16384\n    decode:\n      tensor-parallel-size: 8\n      mem-fraction-static: 0.85\nbenchmark: {type: sa-bench, isl: 8192, osl: 1024, concurrencies: [4, 8, 16]}\n";
    let at_ref = ("NVIDIA/srt-slurm".to_owned(), SRT_REF.to_owned(), SRT_RECIPE.to_owned());
    upstream.state().contents_at.insert(at_ref, recipe.to_owned());
    let checkout = format!("NVIDIA/srt-slurm@{SRT_REF}");
    let pr = original.pull_request.number;
    let dir = tempfile::tempdir().unwrap();

    let out = collect(&fake, &upstream, pr, &url, &dir.path().join("fetched"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let asked = format!("GET /repos/NVIDIA/srt-slurm/contents/{SRT_RECIPE}?ref={SRT_REF}");
    assert_eq!(upstream.state().log.iter().filter(|l| **l == asked).count(), 1, "{:#?}", upstream.state().log);
    let got = read_bundle(&dir.path().join("fetched")).unwrap();
    assert_eq!(got.upstream.checkouts[&checkout][SRT_RECIPE], Fact::Ok(recipe.to_owned()));
    let verdict: serde_json::Value =
        serde_json::from_slice(&verify(&dir.path().join("fetched"), "json").stdout).unwrap();
    let (status, summary) = check_row(&verdict, 3);
    assert_eq!(status, "FAIL", "{summary}");
    assert!(summary.contains("chunked-prefill-size"), "{summary}");
    assert!(summary.contains(&format!("{checkout}:{SRT_RECIPE}")), "named in the checkout: {summary}");

    // The ref is gone upstream: the fact names the 404, and Check 3 names the checkout and why.
    upstream.state().contents_at.clear();
    let out = collect(&fake, &upstream, pr, &url, &dir.path().join("gone"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got = read_bundle(&dir.path().join("gone")).unwrap();
    let fact = &got.upstream.checkouts[&checkout][SRT_RECIPE];
    assert!(fact.is_not_found(), "{fact:?}");
    let verdict: serde_json::Value = serde_json::from_slice(&verify(&dir.path().join("gone"), "json").stdout).unwrap();
    let (status, summary) = check_row(&verdict, 3);
    assert_eq!(status, "FAIL", "{summary}");
    assert!(summary.contains("could not be fetched") && summary.contains("HTTP 404"), "{summary}");
}
