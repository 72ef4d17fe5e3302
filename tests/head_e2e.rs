//! A gate that stays on the head (issue 25 item 1, ARCHITECTURE decision 3), end to end through
//! `sweepgate serve` and the fake GitHub: after a sign-off is APPROVED at S, a push of the
//! target branch that leaves the PR's own change identical carries the sign-off forward to the
//! new head (verified again, no new sign-off), and a push that changes a PR file gets `failure`
//! at once, naming the file, without a collection. The reconcile gives a head left without a
//! status the same answer.

mod support;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use support::fake_github::{FakeGitHub, Fault};
use support::fake_upstream::FakeUpstream;
use support::serve_bundle::{fixture, served, start_verifier, tar_gz, REPO};
use support::{action_command, comment_event, pr_event, ServerProcess, BOT};
use sweepgate::evidence::{read_bundle, Evidence};
use sweepgate::repo::{MemTree, Tree};

const CONTEXT: &str = "codeowner-signoff-verify";

/// A stand-in for git's blob SHA: any content hash serves, the fake only has to be consistent.
fn blob(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))[..40].to_owned()
}

/// Serves `tree` at `sha`: its tarball and its git tree listing.
fn serve_commit(fake: &FakeGitHub, sha: &str, tree: &MemTree) {
    let listing = tree.paths().map(|p| (p.to_owned(), blob(&tree.read(p).unwrap().unwrap()))).collect();
    let mut w = fake.world();
    w.tarballs.insert((REPO.into(), sha.into()), tar_gz(&format!("example-inferencex-{}", &sha[..7]), tree));
    w.git_trees.insert((REPO.into(), sha.into()), listing);
}

/// Moves the PR's head to `sha` (a new commit of the PR), as a push does.
fn push(fake: &FakeGitHub, pr: u64, sha: &str) {
    let mut w = fake.world();
    w.pulls.get_mut(&(REPO.into(), pr)).unwrap()["head"]["sha"] = json!(sha);
    w.commits.get_mut(&(REPO.into(), pr)).unwrap().push(json!({"sha": sha, "commit": {"message": "push"}}));
}

fn synchronize(pr: u64, sha: &str) -> Value {
    let mut event = pr_event("synchronize", pr, &[], None, "vendor-dev");
    event["repository"]["full_name"] = json!(REPO);
    event["pull_request"]["head"]["sha"] = json!(sha);
    event
}

fn verdict(fake: &FakeGitHub, pr: u64) -> (u64, String) {
    let w = fake.world();
    let all: Vec<_> = w
        .comments_on(REPO, pr)
        .into_iter()
        .filter(|c| c.login == BOT && c.body.starts_with("<!-- sweepgate:verdict "))
        .map(|c| (c.id, c.body.clone()))
        .collect();
    assert_eq!(all.len(), 1, "one verdict comment per sign-off: {all:#?}");
    all[0].clone()
}

/// The states and descriptions of the sign-off status on `sha`, in order.
fn statuses_on(fake: &FakeGitHub, sha: &str) -> Vec<(String, String)> {
    fake.world()
        .statuses
        .iter()
        .filter(|(_, s, body)| s == sha && body["context"] == CONTEXT)
        .map(|(_, _, b)| (b["state"].as_str().unwrap().into(), b["description"].as_str().unwrap().into()))
        .collect()
}

async fn start_server(fake: &FakeGitHub, upstream: &FakeUpstream, extra: &[&str]) -> ServerProcess {
    start_verifier(fake, upstream, extra).await
}

/// The green-sweep fixture served with git trees, signed off and APPROVED at its head.
async fn approved(extra: &[&str]) -> (Evidence, FakeGitHub, FakeUpstream, ServerProcess) {
    let signed = signed_off(extra, |_| {}).await;
    assert_eq!(statuses_on(&signed.1, &signed.0.pull_request.head_sha).last().unwrap().0, "success");
    signed
}

/// The green-sweep fixture served with git trees (`upstream` changed by `edit` first) and
/// signed off at its head: one verdict comment with its fingerprint.
async fn signed_off(
    extra: &[&str],
    edit: impl FnOnce(&FakeUpstream),
) -> (Evidence, FakeGitHub, FakeUpstream, ServerProcess) {
    signed_off_bundle(read_bundle(&fixture("green-sweep")).unwrap(), extra, edit).await
}

/// [`signed_off`] for a bundle the test changed first.
async fn signed_off_bundle(
    original: Evidence,
    extra: &[&str],
    edit: impl FnOnce(&FakeUpstream),
) -> (Evidence, FakeGitHub, FakeUpstream, ServerProcess) {
    let (original, fake, upstream, id) = served(original).await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    edit(&upstream);
    serve_commit(&fake, &head, &original.head);
    serve_commit(&fake, &original.pull_request.base_sha, &original.base);
    let server = start_server(&fake, &upstream, extra).await;
    let mut event = comment_event(pr, id, "nv-owner", "MEMBER", &original.signoff.body, None);
    event["repository"]["full_name"] = json!(REPO);
    server.deliver("issue_comment", "s-1", &event).await;
    server.wait_handled(1).await;
    let (_, body) = verdict(&fake, pr);
    assert!(body.starts_with(&format!("<!-- sweepgate:verdict signoff=issuecomment-{id} sha={head} fp=")), "{body}");
    assert!(body.trim_end().lines().last().unwrap().starts_with("<!-- sweepgate:fingerprint "), "{body}");
    (original, fake, upstream, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_main_merge_carries_the_signoff_forward_and_a_content_push_needs_a_fresh_one() {
    let (original, fake, _upstream, server) = approved(&[]).await;
    let (pr, signed) = (original.pull_request.number, original.pull_request.head_sha.clone());
    let comments_before = fake.world().comments.len();

    // (a) A merge of main that changes only files the PR does not touch.
    let merged = "c".repeat(40);
    let mut tree = original.head.clone();
    tree.insert("README.md", "main moved on\n");
    serve_commit(&fake, &merged, &tree);
    push(&fake, pr, &merged);
    server.deliver("pull_request", "p-1", &synchronize(pr, &merged)).await;
    server.wait_handled(2).await;
    let on_merged = statuses_on(&fake, &merged);
    assert_eq!(on_merged.first().unwrap().0, "pending", "{on_merged:?}");
    let (state, description) = on_merged.last().unwrap().clone();
    assert_eq!(state, "success", "{on_merged:?}");
    assert!(description.contains(&format!("carried forward from {}", &signed[..7])), "{description}");
    let (verdict_id, body) = verdict(&fake, pr);
    assert!(body.contains(&format!(" sha={merged} fp=")), "the verdict now covers the new head: {body}");
    assert!(body.contains(&format!("Carried forward from `{signed}`: the PR's changes are identical")), "{body}");
    assert!(body.contains(&format!("签核沿用自 `{signed}`")), "{body}");
    assert!(body.contains("**APPROVED**"), "{body}");
    let new_comments = fake.world().comments.len() - comments_before;
    assert!(new_comments <= 1, "no new sign-off, at most the label comment: {new_comments}");

    // (b) A push that changes one byte of a PR file: failure at once, naming the file.
    let content = "d".repeat(40);
    let mut tree = tree.clone();
    let master = "configs/nvidia-master.yaml";
    let text = format!("{}\n", tree.text(master).unwrap());
    tree.insert(master, text);
    serve_commit(&fake, &content, &tree);
    push(&fake, pr, &content);
    let logged = fake.world().log.len();
    server.deliver("pull_request", "p-2", &synchronize(pr, &content)).await;
    server.wait_handled(3).await;
    assert_eq!(
        statuses_on(&fake, &content),
        [(
            "failure".to_string(),
            format!("a fresh sign-off is needed: 1 file(s) changed since the sign-off of {}", &signed[..7])
        )],
        "no pending: no verification runs"
    );
    // The status comes before any collection (preflight, on by default, collects afterwards).
    let log = fake.world().log[logged..].to_vec();
    let status = log.iter().position(|l| l.starts_with(&format!("POST /repos/{REPO}/statuses/{content}")));
    let first_tarball = log.iter().position(|l| l.starts_with(&format!("GET /repos/{REPO}/tarball/")));
    assert!(status.is_some_and(|s| first_tarball.is_none_or(|t| s < t)), "no collection before the status: {log:#?}");
    let (id, body) = verdict(&fake, pr);
    assert_eq!(id, verdict_id, "the same verdict comment, edited");
    assert!(body.contains("### A fresh sign-off is needed") && body.contains("### 需要重新签核"), "{body}");
    assert!(body.contains(&format!("- `{master}`")), "{body}");
    assert!(body.trim_end().lines().last().unwrap().starts_with("<!-- sweepgate:fingerprint "), "record kept: {body}");

    // A redelivery changes nothing; a revert to the signed content carries forward again.
    server.deliver("pull_request", "p-3", &synchronize(pr, &content)).await;
    server.wait_handled(4).await;
    assert_eq!(statuses_on(&fake, &content).len(), 1, "the failure stands, not written twice");
    let reverted = "e".repeat(40);
    serve_commit(&fake, &reverted, &original.head);
    push(&fake, pr, &reverted);
    server.deliver("pull_request", "p-4", &synchronize(pr, &reverted)).await;
    server.wait_handled(5).await;
    assert_eq!(statuses_on(&fake, &reverted).last().unwrap().0, "success");
    let (_, body) = verdict(&fake, pr);
    assert!(!body.contains("A fresh sign-off is needed") && body.contains("Carried forward from"), "{body}");
    assert_eq!(server.metric("sweepgate_events_handled_total{result=\"failed\"}").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_gives_a_head_without_a_status_the_same_answer() {
    let (original, fake, _upstream, _server) = approved(&["--reconcile-secs", "1"]).await;
    let pr = original.pull_request.number;
    // A push whose delivery was lost: a file added to the PR.
    let pushed = "f".repeat(40);
    let mut tree = original.head.clone();
    tree.insert("benchmarks/new_launcher.sh", "#!/bin/sh\n");
    serve_commit(&fake, &pushed, &tree);
    // The file list first: a reconcile pass between the two writes still sees the signed head.
    fake.world()
        .files
        .get_mut(&(REPO.into(), pr))
        .unwrap()
        .push(json!({"filename": "benchmarks/new_launcher.sh", "status": "added", "additions": 1, "deletions": 0}));
    push(&fake, pr, &pushed);
    for _ in 0..1200 {
        if !statuses_on(&fake, &pushed).is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let on_pushed = statuses_on(&fake, &pushed);
    assert_eq!(on_pushed.len(), 1, "{on_pushed:?}");
    assert_eq!(on_pushed[0].0, "failure");
    assert!(on_pushed[0].1.starts_with("a fresh sign-off is needed: 1 file(s) changed"), "{on_pushed:?}");
    assert!(verdict(&fake, pr).1.contains("- `benchmarks/new_launcher.sh`"));
}

/// Asks for the sign-off's verification again (its comment edited), as a signer does.
async fn reverify(original: &Evidence, fake: &FakeGitHub, server: &ServerProcess, delivery: &str, handled: u64) {
    let pr = original.pull_request.number;
    let (id, body) = {
        let w = fake.world();
        let signoff = w.comments.iter().find(|c| c.login == original.signoff.author && c.body == original.signoff.body);
        signoff.map(|c| (c.id, c.body.clone())).unwrap()
    };
    let mut event = comment_event(pr, id, "nv-owner", "MEMBER", &body, Some("an earlier text"));
    event["repository"]["full_name"] = json!(REPO);
    server.deliver("issue_comment", delivery, &event).await;
    server.wait_handled(handled).await;
}

/// (d) Policy at the default branch's tip (ARCHITECTURE decision 6, issue 25 item 2): a
/// CODEOWNERS change on `main` after the PR's base applies to the next verification, and the
/// verdict records the commit it read policy at.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_codeowners_change_on_the_target_branch_applies_to_the_next_verification() {
    let (original, fake, _upstream, server) = approved(&[]).await;
    let (pr, head, base) =
        (original.pull_request.number, original.pull_request.head_sha.clone(), original.pull_request.base_sha.clone());
    let (_, body) = verdict(&fake, pr);
    assert!(body.lines().next().unwrap().ends_with(&format!(" policy={base} -->")), "tip = base: {body}");

    // main moves on: the signer no longer owns the master config the PR changes.
    let tip = "1".repeat(40);
    let mut tree = original.base.clone();
    let codeowners = tree.text(".github/CODEOWNERS").unwrap().replace("@nv-owner", "@nv-lead");
    tree.insert(".github/CODEOWNERS", codeowners);
    serve_commit(&fake, &tip, &tree);
    fake.world().branches.insert((REPO.into(), "main".into()), tip.clone());
    reverify(&original, &fake, &server, "s-2", 2).await;
    let (state, description) = statuses_on(&fake, &head).last().unwrap().clone();
    assert_eq!(state, "failure", "{description}");
    assert!(description.contains("REJECTED"), "{description}");
    let (_, body) = verdict(&fake, pr);
    assert!(body.lines().next().unwrap().ends_with(&format!(" policy={tip} -->")), "{body}");
    let check0 = body.lines().find(|l| l.contains("Check 0 (CODEOWNER)")).unwrap_or_default();
    assert!(check0.starts_with("❌") && check0.contains("FAIL"), "Check 0 reads CODEOWNERS at the tip: {body}");
    assert!(
        fake.world().count(&format!("GET /repos/{REPO}/tarball/{tip}")) >= 1,
        "the policy files are read at the tip"
    );

    // A tip that cannot be resolved is a named fact: FAIL, never the stale base.
    fake.world().branches.clear();
    fake.fail_next(Fault { status: 404, matching: format!("GET /repos/{REPO}/branches/main"), ..Fault::default() });
    reverify(&original, &fake, &server, "s-3", 3).await;
    assert_eq!(statuses_on(&fake, &head).last().unwrap().0, "failure");
    let (_, body) = verdict(&fake, pr);
    assert!(!body.lines().next().unwrap().contains(" policy="), "no policy commit recorded: {body}");
    assert!(
        body.contains("the policy files at the default branch") && body.contains("the tip of the default branch main"),
        "{body}"
    );
}

/// Waits until the last sign-off status on `sha` is `state` (the reconcile runs every second).
async fn wait_for_state(fake: &FakeGitHub, sha: &str, state: &str) -> Vec<(String, String)> {
    for _ in 0..1200 {
        let now = statuses_on(fake, sha);
        if now.last().is_some_and(|(s, _)| s == state) {
            return now;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("no {state} on {sha}: {:?}", statuses_on(fake, sha));
}

/// (e) Issue 25 item 4: a verdict whose only FAIL is Check 3 because the linked cookbook PR is
/// open is watched; when the PR merges, the reconcile verifies the sign-off again and the
/// status turns to `success`, with no new sign-off. A PR closed without merge stops the watch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_linked_recipe_pr_that_merges_turns_the_status_to_success_through_reconcile() {
    const RECIPE: (&str, u64) = ("sgl-project/sglang", 47394);
    let set_state = |upstream: &FakeUpstream, state: &str, merged_at: Value| {
        let mut s = upstream.state();
        let (pull, _) = s.pulls.get_mut(&(RECIPE.0.to_owned(), RECIPE.1)).unwrap();
        pull["state"] = json!(state);
        pull["merged_at"] = merged_at;
    };
    let (original, fake, upstream, _server) =
        signed_off(&["--reconcile-secs", "1"], |u| set_state(u, "open", Value::Null)).await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    let on_head = statuses_on(&fake, &head);
    assert_eq!(on_head.last().unwrap().0, "failure", "{on_head:?}");
    let (id, body) = verdict(&fake, pr);
    assert!(body.lines().next().unwrap().contains(" watch=sgl-project/sglang:47394 "), "{body}");
    assert!(
        body.contains("### Waiting for the linked recipe PR") && body.contains("### 等待所链接的配方 PR 合并"),
        "{body}"
    );
    let comments_before = fake.world().comments.len();

    // Still open at the next passes: nothing changes.
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    assert_eq!(statuses_on(&fake, &head).last().unwrap().0, "failure");
    assert!(upstream.state().log.iter().any(|l| l.contains("/pulls/47394")), "the reconcile polled the PR");

    set_state(&upstream, "closed", json!("2026-12-01T08:00:00Z"));
    let on_head = wait_for_state(&fake, &head, "success").await;
    assert!(on_head.last().unwrap().1.contains("APPROVED"), "{on_head:?}");
    let (same, body) = verdict(&fake, pr);
    assert_eq!(same, id, "the same verdict comment, edited");
    assert!(body.contains("**APPROVED**") && !body.lines().next().unwrap().contains("watch="), "{body}");
    assert!(
        body.contains("### Re-verified: the linked recipe PR merged") && body.contains("`sgl-project/sglang#47394`"),
        "{body}"
    );
    assert!(body.contains("### 已重新验证：所链接的配方 PR 已合并"), "{body}");
    assert!(fake.world().comments.len() - comments_before <= 1, "no new sign-off, at most a label comment");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_linked_recipe_pr_closed_without_merge_stops_the_watch() {
    let recipe = ("sgl-project/sglang".to_owned(), 47394);
    let (original, fake, upstream, _server) = signed_off(&["--reconcile-secs", "1"], |u| {
        let mut s = u.state();
        let pull = &mut s.pulls.get_mut(&recipe).unwrap().0;
        pull["state"] = json!("open");
        pull["merged_at"] = Value::Null;
    })
    .await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    assert!(verdict(&fake, pr).1.lines().next().unwrap().contains(" watch="));
    upstream.state().pulls.get_mut(&recipe).unwrap().0["state"] = json!("closed");
    let mut body = String::new();
    for _ in 0..1200 {
        body = verdict(&fake, pr).1;
        if !body.lines().next().unwrap().contains(" watch=") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(!body.lines().next().unwrap().contains(" watch="), "the watch stopped: {body}");
    assert!(body.contains("### The linked recipe PR was closed without merge"), "{body}");
    assert!(body.contains("### 所链接的配方 PR 已关闭且未合并"), "{body}");
    assert!(body.contains("**REJECTED**"), "the verdict stands: {body}");
    assert_eq!(statuses_on(&fake, &head).last().unwrap().0, "failure");
    let polls = upstream.state().log.iter().filter(|l| l.contains("/pulls/47394")).count();
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let after = upstream.state().log.iter().filter(|l| l.contains("/pulls/47394")).count();
    assert_eq!(after, polls, "no poll after the watch stopped");
}

/// (c) Issue 25 item 3: with `--preflight`, a push of a PR that touches benchmark files gets
/// the check run `sweepgate/preflight` on its head, listing each would-be FAIL of the checks
/// that judge the PR's own files with its fix in both languages, `neutral` (never blocking),
/// before any sign-off; a redelivery leaves the one check run; nothing from the PR body is
/// echoed raw.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preflight_lists_a_would_be_fail_before_any_signoff() {
    let (original, fake, upstream, _) = served(read_bundle(&fixture("append-only-mixed-entries")).unwrap()).await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    let hostile = "Cookbook: https://github.com/sgl-project/sglang/pull/99999\n<!-- sweepgate:verdict signoff=issuecomment-1 sha=x -->\n@maint-a <img src=x>";
    fake.world().pulls.get_mut(&(REPO.into(), pr)).unwrap()["body"] = json!(hostile);
    let server = start_server(&fake, &upstream, &["--preflight"]).await;
    let mut event = synchronize(pr, &head);
    event["action"] = json!("opened");
    let sent = |fake: &FakeGitHub| {
        let w = fake.world();
        (w.log.len(), w.bytes_sent)
    };
    let before = sent(&fake);
    server.deliver("pull_request", "p-1", &event).await;
    server.wait_handled(1).await;
    let after = sent(&fake);
    let (requests, bytes) = (after.0 - before.0, after.1 - before.1);
    eprintln!(
        "preflight of append-only-mixed-entries: {requests} GitHub requests, {bytes} bytes (label policy included)"
    );
    let runs = |fake: &FakeGitHub| -> Vec<Value> {
        let w = fake.world();
        w.check_runs.iter().filter(|(_, c)| c["name"] == "sweepgate/preflight").map(|(_, c)| c.clone()).collect()
    };
    let found = runs(&fake);
    assert_eq!(found.len(), 1, "{found:#?}");
    let run = &found[0];
    assert_eq!((run["head_sha"].as_str(), run["conclusion"].as_str()), (Some(head.as_str()), Some("neutral")));
    let summary = run["output"]["summary"].as_str().unwrap();
    assert!(summary.contains("❌ Check 12 (Append-only) would FAIL"), "{summary}");
    assert!(summary.contains("❌ 检查 12（"), "{summary}");
    assert!(summary.contains("Fix: ") && summary.contains("修复："), "{summary}");
    assert!(summary.contains("After sign-off") && summary.contains("Check 0 (CODEOWNER)"), "{summary}");
    assert!(!summary.contains("Check 2 (Evals pass) would FAIL"), "Check 2 needs the sweep: {summary}");
    assert!(summary.contains("sglang/pull/99999"), "the body's cookbook link is judged (3(b)): {summary}");
    assert!(!summary.contains("<!--") && !summary.contains("@maint-a") && !summary.contains("<img"), "{summary}");
    assert!(run["output"]["title"].as_str().unwrap().contains("would fail"), "{run:#?}");
    assert!(statuses_on(&fake, &head).is_empty(), "preflight sets no sign-off status");
    assert!(fake.world().comments.iter().all(|c| !c.body.starts_with("<!-- sweepgate:verdict")), "no verdict");

    server.deliver("pull_request", "p-2", &event).await;
    server.wait_handled(2).await;
    assert_eq!(runs(&fake).len(), 1, "one preflight check run per head");
}

/// Runs `sweepgate action` on one `pull_request` event against the fake GitHub: (stdout, the
/// job summary it wrote).
async fn run_action(fake: &FakeGitHub, upstream: &FakeUpstream, event: &Value) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (event_path, summary) = (dir.path().join("event.json"), dir.path().join("summary.md"));
    std::fs::write(&event_path, serde_json::to_vec(event).unwrap()).unwrap();
    let (fake_url, upstream_url) = (fake.url.clone(), upstream.url.clone());
    let summary_path = summary.clone();
    let out = tokio::task::spawn_blocking(move || {
        action_command(&fake_url, &upstream_url, "pull_request", &event_path)
            .env("GITHUB_STEP_SUMMARY", &summary_path)
            .env_remove("GITHUB_OUTPUT")
            .env_remove("SWEEPGATE_PREFLIGHT")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    (stdout, std::fs::read_to_string(&summary).unwrap())
}

/// Issue 25 item 5: the Action, in its own event model (one `pull_request` `synchronize` per
/// run, no reconcile), carries an APPROVED sign-off forward across a main merge, sets
/// `failure` "a fresh sign-off is needed" on a content push, and writes the preflight report
/// (on by default) into its job summary as well as the check run, the summary alone when the
/// token may not use check runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_action_carries_forward_or_fails_on_synchronize_and_writes_preflight_to_the_job_summary() {
    let (original, fake, upstream, server) = approved(&[]).await;
    server.stop();
    let (pr, signed) = (original.pull_request.number, original.pull_request.head_sha.clone());
    let merged = "c".repeat(40);
    let mut tree = original.head.clone();
    tree.insert("README.md", "main moved on\n");
    serve_commit(&fake, &merged, &tree);
    push(&fake, pr, &merged);
    let (stdout, summary) = run_action(&fake, &upstream, &synchronize(pr, &merged)).await;
    let (state, description) = statuses_on(&fake, &merged).last().unwrap().clone();
    assert_eq!(state, "success", "{stdout}");
    assert!(description.contains(&format!("carried forward from {}", &signed[..7])), "{description}");
    assert!(verdict(&fake, pr).1.contains(&format!("Carried forward from `{signed}`")));
    assert!(summary.contains(&format!("## Preflight for `{merged}`")), "{summary}");
    assert!(summary.contains(&format!("## `{merged}` 的预检")), "{summary}");
    let runs: Vec<Value> = fake.world().check_runs.iter().map(|(_, c)| c.clone()).collect();
    assert!(runs.iter().any(|c| c["name"] == "sweepgate/preflight" && c["head_sha"] == merged.as_str()), "{runs:#?}");

    let content = "d".repeat(40);
    let master = "configs/nvidia-master.yaml";
    let text = format!("{}\n", tree.text(master).unwrap());
    tree.insert(master, text);
    serve_commit(&fake, &content, &tree);
    push(&fake, pr, &content);
    // A token without the `checks` permission: the report still reaches the job summary.
    let checks = format!("GET /repos/{REPO}/commits/{content}/check-runs");
    fake.fail_next(Fault { status: 403, matching: checks, ..Fault::default() });
    let (stdout, summary) = run_action(&fake, &upstream, &synchronize(pr, &content)).await;
    assert!(summary.contains(&format!("## Preflight for `{content}`")), "{summary}");
    assert!(stdout.contains("(no check run)"), "{stdout}");
    assert!(!fake.world().check_runs.iter().any(|(_, c)| c["head_sha"] == content.as_str()));
    let on_content = statuses_on(&fake, &content);
    assert_eq!(on_content.len(), 1, "{on_content:?} {stdout}");
    assert_eq!(on_content[0].0, "failure");
    assert!(on_content[0].1.starts_with("a fresh sign-off is needed: 1 file(s) changed"), "{on_content:?}");
    assert!(verdict(&fake, pr).1.contains(&format!("- `{master}`")));
}

/// Issue 25 item 4: the reconcile's backoff per watched PR is kept in the state file, so a
/// restarted server resumes the watch where the last one left it and turns the status to
/// `success` when the recipe PR merges; the ended watch leaves the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_resumes_the_recipe_watch_with_its_backoff() {
    const RECIPE: (&str, u64) = ("sgl-project/sglang", 47394);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.sqlite");
    let args = ["--reconcile-secs", "1", "--state", state.to_str().unwrap()];
    let (original, fake, upstream, server) = signed_off(&args, |u| {
        let mut s = u.state();
        let pull = &mut s.pulls.get_mut(&(RECIPE.0.to_owned(), RECIPE.1)).unwrap().0;
        pull["state"] = json!("open");
        pull["merged_at"] = Value::Null;
    })
    .await;
    let head = original.pull_request.head_sha.clone();
    let rows = |state: &std::path::Path| -> Vec<(String, i64, i64)> {
        let conn = rusqlite::Connection::open(state).unwrap();
        let mut stmt = conn.prepare("SELECT repo, pr, wait_ms FROM recipe_watch").unwrap();
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap();
        rows.collect::<Result<_, _>>().unwrap()
    };
    // The reconcile polls the open recipe PR and records its backoff.
    for _ in 0..1200 {
        if !rows(&state).is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    server.stop();
    let kept = rows(&state);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!((kept[0].0.as_str(), kept[0].1), (REPO, original.pull_request.number as i64));
    assert!(kept[0].2 >= 2000, "the backoff is in the state file: {kept:?}");

    {
        let mut s = upstream.state();
        let pull = &mut s.pulls.get_mut(&(RECIPE.0.to_owned(), RECIPE.1)).unwrap().0;
        pull["state"] = json!("closed");
        pull["merged_at"] = json!("2026-12-01T08:00:00Z");
    }
    let server = start_server(&fake, &upstream, &args).await;
    let on_head = wait_for_state(&fake, &head, "success").await;
    assert!(on_head.last().unwrap().1.contains("APPROVED"), "{on_head:?}");
    assert!(verdict(&fake, original.pull_request.number).1.contains("### Re-verified: the linked recipe PR merged"));
    server.stop();
    assert!(rows(&state).is_empty(), "the ended watch left the state file");
}

/// Issue 25 "Bad input and security": carry-forward never approves content no eligible signer
/// saw. Each push below, from the signed head, ends in `failure` "a fresh sign-off is needed"
/// naming what changed, through the server's `synchronize` handler (the fingerprint's own tests,
/// `checks::fingerprint::tests`, decide each case on its inputs, the affected-config part too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_push_that_changes_the_prs_own_content_needs_a_fresh_signoff() {
    let (original, fake, _upstream, server) = approved(&["--preflight=false"]).await;
    let (pr, signed) = (original.pull_request.number, original.pull_request.head_sha.clone());
    const MASTER: &str = "configs/nvidia-master.yaml";
    const CHANGELOG: &str = "perf-changelog.yaml";
    let (master, changelog) = (MASTER, CHANGELOG);
    let files = fake.world().files[&(REPO.to_owned(), pr)].clone();
    let text = |path: &str| original.head.text(path).unwrap().to_owned();
    type Case<'a> = (&'static str, Box<dyn Fn(&mut MemTree, &mut Vec<Value>) + 'a>, &'static [&'static str]);
    let cases: Vec<Case<'_>> = vec![
        ("one byte of a PR file", Box::new(move |t, _| t.insert(master, format!("{} ", text(master)))), &[MASTER]),
        (
            "a file added",
            Box::new(|t, f| {
                t.insert("benchmarks/new_launcher.sh", "#!/bin/sh\n");
                f.push(json!({"filename": "benchmarks/new_launcher.sh", "status": "added", "additions": 1, "deletions": 0}));
            }),
            &["benchmarks/new_launcher.sh"],
        ),
        (
            "a file removed from the change (its edit reverted)",
            Box::new(|t, f| {
                t.insert(changelog, original.base.text(changelog).unwrap().to_owned());
                f.retain(|x| x["filename"] != changelog);
            }),
            &[CHANGELOG],
        ),
        (
            "a rename",
            Box::new(move |t, f| {
                let content = t.remove(master).unwrap();
                t.insert("configs/nv-master.yaml", content);
                let entry = f.iter_mut().find(|x| x["filename"] == master).unwrap();
                entry["filename"] = json!("configs/nv-master.yaml");
                entry["previous_filename"] = json!(master);
                entry["status"] = json!("renamed");
            }),
            &["configs/nv-master.yaml", MASTER],
        ),
        (
            "a force-push to other content with the same paths",
            Box::new(move |t, _| {
                for path in [master, changelog] {
                    let other = format!("{}# rewritten\n", t.text(path).unwrap());
                    t.insert(path, other);
                }
            }),
            &[MASTER, CHANGELOG],
        ),
        (
            "a merge of the target branch touching a PR file",
            Box::new(move |t, _| {
                t.insert("README.md", "main moved on\n");
                let merged = format!("# main's header\n{}", t.text(master).unwrap());
                t.insert(master, merged);
            }),
            &[MASTER],
        ),
    ];
    for (n, (case, change, named)) in cases.into_iter().enumerate() {
        let sha = format!("{:040x}", 0xa0 + n);
        let mut tree = original.head.clone();
        let mut listed = files.clone();
        change(&mut tree, &mut listed);
        serve_commit(&fake, &sha, &tree);
        fake.world().files.insert((REPO.to_owned(), pr), listed);
        push(&fake, pr, &sha);
        server.deliver("pull_request", &format!("bad-{n}"), &synchronize(pr, &sha)).await;
        server.wait_handled(n as u64 + 2).await;
        let expected = format!(
            "a fresh sign-off is needed: {} file(s) changed since the sign-off of {}",
            named.len(),
            &signed[..7]
        );
        assert_eq!(statuses_on(&fake, &sha), [("failure".to_string(), expected)], "{case}");
        let (_, body) = verdict(&fake, pr);
        assert!(body.contains("### A fresh sign-off is needed"), "{case}: {body}");
        for path in named {
            assert!(body.contains(&format!("- `{path}`")), "{case} names {path}: {body}");
        }
    }
}

/// `pull_request.edited` as GitHub sends it: `changes` names what changed.
fn edited(pr: u64, head: &str, changes: Value) -> Value {
    let mut event = synchronize(pr, head);
    event["action"] = json!("edited");
    event["changes"] = changes;
    event
}

/// Issue 35 case 5: retargeting an approved PR changes the change under review like a push
/// does. The diff against the new base holds another file, so the head's `success` gives way
/// to "a fresh sign-off is needed" at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retargeted_pr_is_judged_again_against_its_new_base() {
    let (original, fake, _upstream, server) = approved(&[]).await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    {
        let mut w = fake.world();
        w.pulls.get_mut(&(REPO.into(), pr)).unwrap()["base"]["ref"] = json!("release-2026-11");
        let extra = json!({"filename": "README.md", "status": "modified", "patch": "@@ -1 +1 @@\n-a\n+b\n"});
        w.files.get_mut(&(REPO.into(), pr)).unwrap().push(extra);
    }
    let mut event = edited(pr, &head, json!({"base": {"ref": {"from": "main"}, "sha": {"from": "b".repeat(40)}}}));
    event["pull_request"]["base"]["ref"] = json!("release-2026-11");
    server.deliver("pull_request", "retarget-1", &event).await;
    server.wait_handled(2).await;
    let (state, description) = statuses_on(&fake, &head).last().unwrap().clone();
    assert_eq!(state, "failure", "{description}");
    assert!(description.starts_with("a fresh sign-off is needed"), "{description}");
    let (_, body) = verdict(&fake, pr);
    assert!(body.contains("### A fresh sign-off is needed") && body.contains("- `README.md`"), "{body}");
    assert_eq!(server.metric("sweepgate_events_handled_total{result=\"failed\"}").await, 0);
}

/// Issue 35 case 5: policy is read at the repository's default branch, whatever branch the PR
/// targets (a branch its author may push to could make the author a CODEOWNER), and the
/// verdict says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pr_targeting_another_branch_is_judged_with_the_default_branchs_policy() {
    let (original, fake, _upstream, server) = approved(&[]).await;
    let (pr, base) = (original.pull_request.number, original.pull_request.base_sha.clone());
    {
        let mut w = fake.world();
        w.pulls.get_mut(&(REPO.into(), pr)).unwrap()["base"]["ref"] = json!("vendor-staging");
        w.branches.insert((REPO.into(), "main".into()), base.clone());
        w.branches.insert((REPO.into(), "vendor-staging".into()), "9".repeat(40));
    }
    let logged = fake.world().log.len();
    reverify(&original, &fake, &server, "s-2", 2).await;
    let log = fake.world().log[logged..].to_vec();
    assert!(log.iter().any(|l| l == &format!("GET /repos/{REPO}/branches/main")), "{log:#?}");
    assert!(!log.iter().any(|l| l.contains("/branches/vendor-staging")), "{log:#?}");
    let (_, body) = verdict(&fake, pr);
    assert!(body.lines().next().unwrap().ends_with(&format!(" policy={base} -->")), "{body}");
    assert!(
        body.contains("This PR targets `vendor-staging`, not the default branch")
            && body.contains("read at the default branch `main`"),
        "{body}"
    );
    assert!(body.contains("本 PR 的目标分支是 `vendor-staging`，不是默认分支"), "{body}");
}

/// Issue 35 case 10: editing the PR description re-runs preflight, which judges the new text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editing_the_description_reruns_preflight_on_the_new_text() {
    let (original, fake, upstream, _) = served(read_bundle(&fixture("append-only-mixed-entries")).unwrap()).await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    let set_body = |text: &str| fake.world().pulls.get_mut(&(REPO.into(), pr)).unwrap()["body"] = json!(text);
    set_body("Cookbook: https://github.com/sgl-project/sglang/pull/99999");
    let server = start_server(&fake, &upstream, &[]).await;
    let mut opened = synchronize(pr, &head);
    opened["action"] = json!("opened");
    server.deliver("pull_request", "p-1", &opened).await;
    server.wait_handled(1).await;
    let summary = |fake: &FakeGitHub| -> String {
        let w = fake.world();
        let runs: Vec<&Value> =
            w.check_runs.iter().filter(|(_, c)| c["name"] == "sweepgate/preflight").map(|(_, c)| c).collect();
        assert_eq!(runs.len(), 1, "one preflight check run per head: {runs:#?}");
        runs[0]["output"]["summary"].as_str().unwrap_or_default().to_owned()
    };
    assert!(summary(&fake).contains("sglang/pull/99999"), "{}", summary(&fake));
    set_body("Cookbook: https://github.com/sgl-project/sglang/pull/88888");
    let changes = json!({"body": {"from": "Cookbook: https://github.com/sgl-project/sglang/pull/99999"}});
    server.deliver("pull_request", "p-2", &edited(pr, &head, changes)).await;
    server.wait_handled(2).await;
    let now = summary(&fake);
    assert!(now.contains("sglang/pull/88888") && !now.contains("pull/99999"), "{now}");
    assert!(statuses_on(&fake, &head).is_empty(), "an edit sets no sign-off status");
}

/// Issue 35 case 7: main changes a `.env` file the launcher sources, and the PR merges main.
/// The PR's own files are identical, but what the affected config runs is not: the sign-off
/// does not carry forward, and the verdict names the config.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_main_merge_that_changes_a_sourced_file_needs_a_fresh_signoff() {
    let mut original = read_bundle(&fixture("green-sweep")).unwrap();
    let launcher = "benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200_sglang.sh";
    let env = "benchmarks/single_node/fixed_seq_len/b200.env";
    let text = format!("source \"$(dirname \"$0\")/b200.env\"\n{}", original.head.text(launcher).unwrap());
    original.head.insert(launcher, text);
    original.head.insert(env, "# cluster notes, revision 1\n");
    let (original, fake, _upstream, server) = signed_off_bundle(original, &[], |_| {}).await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    assert_eq!(statuses_on(&fake, &head).last().unwrap().0, "success", "{}", verdict(&fake, pr).1);

    let merged = "f".repeat(40);
    let mut tree = original.head.clone();
    tree.insert(env, "# cluster notes, revision 2\n");
    serve_commit(&fake, &merged, &tree);
    push(&fake, pr, &merged);
    server.deliver("pull_request", "p-1", &synchronize(pr, &merged)).await;
    server.wait_handled(2).await;
    let (state, description) = statuses_on(&fake, &merged).last().unwrap().clone();
    assert_eq!(state, "failure", "{description}");
    assert_eq!(
        description,
        format!("a fresh sign-off is needed: 1 affected config(s) changed since the sign-off of {}", &head[..7])
    );
    let (_, body) = verdict(&fake, pr);
    assert!(
        body.contains("Affected configs that changed since the sign-off") && body.contains("- `dsr1-fp4-b200-sglang`"),
        "{body}"
    );
}

/// A `synchronize` to `sha` whose payload names the PR's real base, as GitHub's does.
fn synchronize_on(original: &Evidence, sha: &str) -> Value {
    let mut event = synchronize(original.pull_request.number, sha);
    event["pull_request"]["base"]["sha"] = json!(original.pull_request.base_sha);
    event["pull_request"]["labels"] =
        json!(original.pull_request.labels.iter().map(|l| json!({"name": l})).collect::<Vec<_>>());
    event
}

/// A new commit `sha` of the PR with `tree` and `parents` (the first is the PR's head).
fn commit_on(fake: &FakeGitHub, pr: u64, sha: &str, tree: &MemTree, parents: &[&str]) {
    serve_commit(fake, sha, tree);
    fake.world().parents.insert((REPO.into(), sha.into()), parents.iter().map(|p| (*p).to_owned()).collect());
    push(fake, pr, sha);
}

/// The GitHub and upstream requests `deliver` caused, and the GitHub ones, in order.
async fn cost(
    fake: &FakeGitHub,
    upstream: &FakeUpstream,
    deliver: impl std::future::Future<Output = ()>,
) -> (usize, usize, Vec<String>) {
    let (github, anonymous) = (fake.world().log.len(), upstream.state().log.len());
    deliver.await;
    let log = fake.world().log[github..].to_vec();
    (log.len(), upstream.state().log.len() - anonymous, log)
}

/// Pairs of texts: (state, description) of a status, (conclusion, title) of a check run.
type Pairs = Vec<(String, String)>;

/// The statuses of `context` and the preflight check runs on `sha`.
fn posted_on(fake: &FakeGitHub, sha: &str, context: &str) -> (Pairs, Pairs) {
    let w = fake.world();
    let statuses = w
        .statuses
        .iter()
        .filter(|(_, s, body)| s == sha && body["context"] == context)
        .map(|(_, _, b)| (b["state"].as_str().unwrap().into(), b["description"].as_str().unwrap().into()))
        .collect();
    let runs = w
        .check_runs
        .iter()
        .filter(|(_, c)| c["name"] == "sweepgate/preflight" && c["head_sha"] == sha)
        .map(|(_, c)| (c["conclusion"].as_str().unwrap_or("").into(), c["output"]["title"].as_str().unwrap().into()))
        .collect();
    (statuses, runs)
}

/// Issue 35 case 9: `opened`, then an empty commit pushed. The empty push holds the judged
/// head's files on one line of history, so it gets that head's statuses and preflight report
/// from the record: at most 3 GitHub requests and no upstream request (HT12). A push that
/// changes a file is handled in full.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_push_costs_at_most_three_github_requests_and_no_upstream_request() {
    let (original, fake, upstream, _) = served(read_bundle(&fixture("green-sweep")).unwrap()).await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    serve_commit(&fake, &head, &original.head);
    serve_commit(&fake, &original.pull_request.base_sha, &original.base);
    let server = start_server(&fake, &upstream, &[]).await;
    let mut opened = synchronize_on(&original, &head);
    opened["action"] = json!("opened");
    let (github, anonymous, _) = cost(&fake, &upstream, async {
        server.deliver("pull_request", "p-1", &opened).await;
        server.wait_handled(1).await
    })
    .await;
    eprintln!("opened: {github} GitHub requests, {anonymous} upstream requests");
    let labels = "sweepgate/sweep-labels";
    let (on_head, runs_on_head) = posted_on(&fake, &head, labels);
    assert_eq!((on_head.len(), runs_on_head.len()), (1, 1), "{on_head:?} {runs_on_head:?}");

    let empty = "e".repeat(40);
    commit_on(&fake, pr, &empty, &original.head, &[&head]);
    let push = synchronize_on(&original, &empty);
    let (github, anonymous, log) = cost(&fake, &upstream, async {
        server.deliver("pull_request", "p-2", &push).await;
        server.wait_handled(2).await
    })
    .await;
    eprintln!("empty push: {github} GitHub requests, {anonymous} upstream requests: {log:#?}");
    assert!(github <= 3, "the empty push costs at most 3 GitHub requests: {log:#?}");
    assert_eq!(anonymous, 0, "and no upstream request");
    let (on_empty, runs_on_empty) = posted_on(&fake, &empty, labels);
    assert_eq!(on_empty, on_head, "the label status is the judged head's");
    assert_eq!(runs_on_empty.len(), 1, "{runs_on_empty:?}");
    assert_eq!(runs_on_empty[0].0, runs_on_head[0].0, "the same preflight conclusion");
    let short = &head[..7];
    assert!(runs_on_empty[0].1.ends_with(&format!("same files as {short} / 文件与 {short} 相同")), "{runs_on_empty:?}");
    let series = "{event=\"pull_request\",action=\"synchronize\"}";
    assert_eq!(server.metric(&format!("sweepgate_event_github_requests_sum{series}")).await, github as u64);
    assert_eq!(server.metric(&format!("sweepgate_event_upstream_requests_sum{series}")).await, 0);

    server.deliver("pull_request", "p-3", &push).await;
    server.wait_handled(3).await;
    assert_eq!(posted_on(&fake, &empty, labels).1.len(), 1, "a redelivery keeps one preflight check run");

    // One byte changed: handled in full (the label policy reads the PR again).
    let changed = "f".repeat(40);
    let mut tree = original.head.clone();
    tree.insert("README.md", "one more line\n");
    commit_on(&fake, pr, &changed, &tree, &[&empty]);
    let (github, _, log) = cost(&fake, &upstream, async {
        server.deliver("pull_request", "p-4", &synchronize_on(&original, &changed)).await;
        server.wait_handled(4).await
    })
    .await;
    assert!(github > 3 && log.iter().any(|l| l.starts_with(&format!("GET /repos/{REPO}/tarball/"))), "{log:#?}");
    assert_eq!(server.metric("sweepgate_events_handled_total{result=\"failed\"}").await, 0);
}
/// Issue 35 case 9: a push that only merges main, on a PR whose sign-off carries forward: the
/// carry-forward's verification and preflight share one collection of the new head (two
/// tarballs, not four), and the PR's file list is read once (it was read four times: the
/// handler, the carry-forward's comparison, and each collection).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_main_merge_collects_the_new_head_once() {
    let (original, fake, upstream, server) = approved(&[]).await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    let merged = "c".repeat(40);
    let mut tree = original.head.clone();
    tree.insert("README.md", "main moved on\n");
    let main = "a".repeat(40);
    commit_on(&fake, pr, &merged, &tree, &[&head, &main]);
    let (github, anonymous, log) = cost(&fake, &upstream, async {
        server.deliver("pull_request", "p-1", &synchronize_on(&original, &merged)).await;
        server.wait_handled(2).await
    })
    .await;
    let count = |prefix: &str| log.iter().filter(|l| l.starts_with(prefix)).count();
    let (tarballs, file_lists) =
        (count(&format!("GET /repos/{REPO}/tarball/")), count(&format!("GET /repos/{REPO}/pulls/{pr}/files")));
    eprintln!("main merge: {github} GitHub requests, {anonymous} upstream requests, {tarballs} tarballs, {file_lists} file lists");
    assert_eq!(statuses_on(&fake, &merged).last().unwrap().0, "success", "carried forward");
    assert_eq!(posted_on(&fake, &merged, "sweepgate/sweep-labels").1.len(), 1, "preflight ran on the new head");
    assert_eq!(tarballs, 2, "one collection: base and head: {log:#?}");
    assert_eq!(file_lists, 1, "{log:#?}");
}

/// Issue 35 case 8: the author controls the links in the PR body and how often preflight runs;
/// one PR's preflights read upstream at most 24 times an hour (HT14), so they cannot spend the
/// anonymous budget every verification shares. Past it the links are named as not read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_prs_preflights_read_upstream_within_their_hourly_budget() {
    let (original, fake, upstream, _) = served(read_bundle(&fixture("append-only-mixed-entries")).unwrap()).await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    let links = |from: u64| -> String {
        (from..from + 16).map(|n| format!("Cookbook: https://github.com/sgl-project/sglang/pull/{n}\n")).collect()
    };
    fake.world().pulls.get_mut(&(REPO.into(), pr)).unwrap()["body"] = json!(links(90_000));
    let server = start_server(&fake, &upstream, &[]).await;
    let mut opened = synchronize(pr, &head);
    opened["action"] = json!("opened");
    server.deliver("pull_request", "p-1", &opened).await;
    server.wait_handled(1).await;
    let first = upstream.state().log.len();
    assert!((16..=24).contains(&first), "one request per link: {first}");
    for (i, from) in [(2, 91_000), (3, 92_000)] {
        fake.world().pulls.get_mut(&(REPO.into(), pr)).unwrap()["body"] = json!(links(from));
        let changes = json!({"body": {"from": links(from - 1000)}});
        server.deliver("pull_request", &format!("p-{i}"), &edited(pr, &head, changes)).await;
        server.wait_handled(i).await;
    }
    assert_eq!(upstream.state().log.len(), 24, "{:#?}", upstream.state().log);
    let w = fake.world();
    let run = w.check_runs.iter().rev().find(|(_, c)| c["name"] == "sweepgate/preflight").unwrap();
    let summary = run.1["output"]["summary"].as_str().unwrap();
    assert!(summary.contains("may read upstream 24 times an hour"), "{summary}");
}

/// Issue 35 case 5: a second PR opened on an approved head showed the first PR's `success`. A
/// commit status shows on every PR at its commit, so the head's status is `success` only while
/// every open PR at it has an approved sign-off of its own (HT15): the second PR turns it to
/// `failure` naming it, the first PR's re-verification keeps that, and closing the second PR
/// gives the first its own decision back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_pr_on_an_approved_head_gets_its_own_decision() {
    let (original, fake, _upstream, server) = approved(&[]).await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    let second = pr + 1;
    fake.add_pull(REPO, second, &head, &[], &[("configs/nvidia-master.yaml", 1)]);
    let mut opened = synchronize(second, &head);
    opened["action"] = json!("opened");
    server.deliver("pull_request", "p-1", &opened).await;
    server.wait_handled(2).await;
    let named = format!("#{second} shares this commit without its own approved sign-off / #{second} 共用此提交");
    let (state, description) = statuses_on(&fake, &head).last().unwrap().clone();
    assert_eq!(state, "failure", "{description}");
    assert!(description.starts_with(&named), "{description}");

    reverify(&original, &fake, &server, "s-2", 3).await;
    let (state, description) = statuses_on(&fake, &head).last().unwrap().clone();
    assert!(
        state == "failure" && description.starts_with(&named),
        "the first PR's approval covers only it: {description}"
    );
    assert!(verdict(&fake, pr).1.contains("**APPROVED**"), "its own verdict stands");

    fake.world().pulls.get_mut(&(REPO.into(), second)).unwrap()["state"] = json!("closed");
    let mut closed = synchronize(second, &head);
    closed["action"] = json!("closed");
    closed["pull_request"]["state"] = json!("closed");
    server.deliver("pull_request", "p-2", &closed).await;
    server.wait_handled(4).await;
    let (state, description) = statuses_on(&fake, &head).last().unwrap().clone();
    assert_eq!(state, "success", "{description}");
    assert!(description.starts_with("sign-off issuecomment-") && description.contains("APPROVED at"), "{description}");
    assert_eq!(server.metric("sweepgate_events_handled_total{result=\"failed\"}").await, 0);
}

/// HT12 with a sign-off: an empty push of an approved PR gets the label status, the sign-off's
/// `success` (after the open PRs at the new head are listed, HT15) and the preflight report, for
/// 5 GitHub requests and no collection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_push_of_an_approved_pr_keeps_its_success_without_a_collection() {
    let (original, fake, upstream, server) = approved(&[]).await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    // The PR's own push first: the judged record is written by a push, label or retarget event.
    let mut opened = synchronize_on(&original, &head);
    opened["action"] = json!("reopened");
    server.deliver("pull_request", "p-1", &opened).await;
    server.wait_handled(2).await;
    let empty = "e".repeat(40);
    commit_on(&fake, pr, &empty, &original.head, &[&head]);
    let (github, anonymous, log) = cost(&fake, &upstream, async {
        server.deliver("pull_request", "p-2", &synchronize_on(&original, &empty)).await;
        server.wait_handled(3).await
    })
    .await;
    eprintln!("empty push of an approved PR: {github} GitHub requests, {anonymous} upstream requests: {log:#?}");
    assert!(github <= 5 && anonymous == 0, "{log:#?}");
    assert!(!log.iter().any(|l| l.contains("/tarball/")), "no collection: {log:#?}");
    assert_eq!(statuses_on(&fake, &empty), [statuses_on(&fake, &head).last().unwrap().clone()]);
    assert_eq!(statuses_on(&fake, &empty)[0].0, "success");
}

/// Issue 35 "what to build": policy comes from the default branch, or from a configured set of
/// protected target branches (HT16). With `--policy-branch release-2026-11`, a PR that targets
/// it is judged with the policy at that branch's tip and the verdict adds no note; a PR that
/// targets an unlisted branch is still judged at the default branch (the test above).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pr_targeting_a_configured_policy_branch_is_judged_with_its_policy() {
    let (original, fake, _upstream, server) = approved(&["--policy-branch", "release-2026-11"]).await;
    let (pr, base) = (original.pull_request.number, original.pull_request.base_sha.clone());
    let release = "9".repeat(40);
    {
        let mut w = fake.world();
        w.pulls.get_mut(&(REPO.into(), pr)).unwrap()["base"]["ref"] = json!("release-2026-11");
        w.branches.insert((REPO.into(), "main".into()), base.clone());
        w.branches.insert((REPO.into(), "release-2026-11".into()), release.clone());
        let tarball = w.tarballs[&(REPO.to_owned(), base.clone())].clone();
        w.tarballs.insert((REPO.into(), release.clone()), tarball);
    }
    let logged = fake.world().log.len();
    reverify(&original, &fake, &server, "s-2", 2).await;
    let log = fake.world().log[logged..].to_vec();
    assert!(log.iter().any(|l| l == &format!("GET /repos/{REPO}/branches/release-2026-11")), "{log:#?}");
    assert!(!log.iter().any(|l| l.contains("/branches/main")), "{log:#?}");
    let (_, body) = verdict(&fake, pr);
    assert!(body.lines().next().unwrap().ends_with(&format!(" policy={release} -->")), "{body}");
    assert!(!body.contains("not the default branch") && !body.contains("不是默认分支"), "{body}");
}

/// HT12's limit: a sign-off status other than `success` is followed in full on an empty push,
/// so a REJECTED verdict that waits for a linked recipe PR moves to the new head, where the
/// reconcile watches it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_push_of_a_rejected_pr_moves_its_verdict_to_the_new_head() {
    let open_recipe = |u: &FakeUpstream| {
        let mut s = u.state();
        let (pull, _) = s.pulls.get_mut(&("sgl-project/sglang".to_owned(), 47394)).unwrap();
        pull["state"] = json!("open");
        pull["merged_at"] = Value::Null;
    };
    let (original, fake, _upstream, server) = signed_off(&[], open_recipe).await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    assert_eq!(statuses_on(&fake, &head).last().unwrap().0, "failure");
    let mut reopened = synchronize_on(&original, &head);
    reopened["action"] = json!("reopened");
    server.deliver("pull_request", "p-1", &reopened).await;
    server.wait_handled(2).await;
    let empty = "e".repeat(40);
    commit_on(&fake, pr, &empty, &original.head, &[&head]);
    server.deliver("pull_request", "p-2", &synchronize_on(&original, &empty)).await;
    server.wait_handled(3).await;
    let (_, body) = verdict(&fake, pr);
    let marker = body.lines().next().unwrap();
    assert!(
        marker.contains(&format!(" sha={empty} ")) && marker.contains(" watch=sgl-project/sglang:47394 "),
        "{marker}"
    );
    assert_eq!(statuses_on(&fake, &empty).last().unwrap().0, "failure");
}
