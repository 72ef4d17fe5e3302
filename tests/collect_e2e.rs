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
use sweepgate::evidence::{read_bundle, SignoffKind};

fn collect(fake: &FakeGitHub, upstream: &FakeUpstream, pr: u64, signoff: &str, out: &Path) -> Output {
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
    let original = read_bundle(&fixture("green-sweep")).unwrap();
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
    let digest = format!("sha256:{}", "ab".repeat(32));
    upstream.state().manifests.insert("lmsysorg/sglang:v0.5.9-cu130".into(), digest.clone());
    let pr = original.pull_request.number;
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("first"), dir.path().join("second"));

    let out = collect(&fake, &upstream, pr, &url, &first);
    assert!(out.status.success(), "collect failed: {}", String::from_utf8_lossy(&out.stderr));
    let requests = api_requests(&fake);
    eprintln!("GitHub API requests for one collection: {requests}");
    assert!(requests <= 25, "{requests} requests: {:#?}", fake.world().log);
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
    assert_eq!(run.artifacts["eval_dsr1_c64"], sweepgate::evidence::Fact::Ok(()));
    assert!(matches!(run.artifacts["server_logs_other"], sweepgate::evidence::Fact::Unavailable(_)));
    let nested = format!("{RUN}/eval_dsr1_c64/eval_server_logs.tar.gz.d/logs/server.log");
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
    assert!(
        matches!(&got.runs[&RUN].artifacts["eval_dsr1_c64"], sweepgate::evidence::Fact::Unavailable(r) if r.contains("410"))
    );
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
    assert_eq!(got.runs[&RUN].artifacts["eval_dsr1_c64"], sweepgate::evidence::Fact::Ok(()));
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
