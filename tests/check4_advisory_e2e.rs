//! Check 4 is advisory (InferenceX #3368, decision RV1): a PR on which no reuse command was
//! posted gets Check 4 WARN and an APPROVED verdict from `sweepgate serve` against the fake
//! GitHub, and the configured reviewers are not mentioned: escalation mentions belong to
//! Check 14 only.

mod support;

use serde_json::json;
use support::fake_github::FakeGitHub;
use support::fake_upstream::FakeUpstream;
use support::serve_bundle::{fixture, serve, serve_upstream, REPO};
use support::{comment_event, ServerProcess, BOT, TOKEN};
use sweepgate::evidence::read_bundle;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_reuse_command_warns_and_the_verdict_is_approved_without_mentions() {
    let mut evidence = read_bundle(&fixture("green-sweep")).unwrap();
    // green-sweep's one comment is the maintainer's `/reuse-sweep-run`; without it no check
    // but 4 has a reason to warn.
    assert!(evidence.comments.iter().all(|c| c.body.contains("/reuse-sweep-run")));
    evidence.comments.clear();
    let (pr, head) = (evidence.pull_request.number, evidence.pull_request.head_sha.clone());
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    let upstream = FakeUpstream::start().await;
    serve_upstream(&upstream, &evidence);
    let url = serve(&fake, &evidence);
    let id: u64 = url.rsplit('-').next().unwrap().parse().unwrap();
    let (docker, nvcr) = (format!("docker.io={}", upstream.url), format!("nvcr.io={}", upstream.url));
    let mut args = vec!["--github-token", TOKEN, "--github-api-url", &fake.url, "--bot-login", BOT];
    args.extend(["--upstream-github-api", &upstream.url, "--huggingface-url", &upstream.url]);
    args.extend(["--registry", &docker, "--registry", &nvcr]);
    args.extend(["--upstream-allow-host", upstream.host(), "--upstream-allow-private", "--reviewer", "@maint-a"]);
    let server = ServerProcess::start(&args).await;

    let mut payload = comment_event(pr, id, "nv-owner", "MEMBER", &evidence.signoff.body, None);
    payload["repository"]["full_name"] = json!(REPO);
    let (status, _) = server.deliver("issue_comment", "d-1", &payload).await;
    assert_eq!(status, 202);
    server.wait_handled(1).await;

    let verdicts: Vec<String> = fake
        .world()
        .comments_on(REPO, pr)
        .into_iter()
        .filter(|c| c.login == BOT && c.body.starts_with("<!-- sweepgate:verdict "))
        .map(|c| c.body.clone())
        .collect();
    assert_eq!(verdicts.len(), 1, "{verdicts:#?}");
    let body = &verdicts[0];
    assert!(body.contains("## ✅✅✅ **APPROVED** ✅✅✅"), "{body}");
    assert!(body.contains("⚠️ Check 4 (Reuse command): WARN (4.b) — No authorized reuse command"), "{body}");
    assert!(body.contains("⚠️ 检查 4（复用扫描指令）：WARN"), "{body}");
    assert!(body.contains("⚠️ 1 check needs human review.\n"), "{body}");
    assert!(!body.contains("❌"), "no check fails: {body}");
    assert!(!body.contains("maint-a"), "only Check 14's escalation mentions the reviewers: {body}");
    let statuses: Vec<(String, String)> = fake
        .world()
        .statuses
        .iter()
        .map(|(_, sha, b)| (sha.clone(), b["state"].as_str().unwrap_or_default().to_owned()))
        .collect();
    assert_eq!(statuses.last(), Some(&(head, "success".to_owned())));
}
