//! A gate that stays on the head (issue 25 item 1, ARCHITECTURE decision 3), end to end through
//! `sweepgate serve` and the fake GitHub: after a sign-off is APPROVED at S, a push of the
//! target branch that leaves the PR's own change identical carries the sign-off forward to the
//! new head (verified again, no new sign-off), and a push that changes a PR file gets `failure`
//! at once, naming the file, without a collection. The reconcile gives a head left without a
//! status the same answer.

mod support;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use support::fake_github::FakeGitHub;
use support::fake_upstream::FakeUpstream;
use support::serve_bundle::{fixture, serve, serve_upstream, tar_gz, REPO};
use support::{comment_event, pr_event, ServerProcess, BOT, TOKEN};
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
    let (docker, nvcr) = (format!("docker.io={}", upstream.url), format!("nvcr.io={}", upstream.url));
    let mut args = vec!["--github-token", TOKEN, "--github-api-url", &fake.url, "--bot-login", BOT];
    args.extend(["--upstream-github-api", &upstream.url, "--huggingface-url", &upstream.url]);
    args.extend(["--registry", &docker, "--registry", &nvcr]);
    args.extend(["--upstream-allow-host", upstream.host(), "--upstream-allow-private"]);
    args.extend(extra);
    ServerProcess::start(&args).await
}

/// The green-sweep fixture served with git trees, signed off and APPROVED at its head.
async fn approved(extra: &[&str]) -> (Evidence, FakeGitHub, FakeUpstream, ServerProcess) {
    let original = read_bundle(&fixture("green-sweep")).unwrap();
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    let upstream = FakeUpstream::start().await;
    serve_upstream(&upstream, &original);
    let url = serve(&fake, &original);
    serve_commit(&fake, &head, &original.head);
    serve_commit(&fake, &original.pull_request.base_sha, &original.base);
    let id: u64 = url.rsplit('-').next().unwrap().parse().unwrap();
    let server = start_server(&fake, &upstream, extra).await;
    let mut event = comment_event(pr, id, "nv-owner", "MEMBER", &original.signoff.body, None);
    event["repository"]["full_name"] = json!(REPO);
    server.deliver("issue_comment", "s-1", &event).await;
    server.wait_handled(1).await;
    assert_eq!(statuses_on(&fake, &head).last().unwrap().0, "success");
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
    let tarballs = fake.world().count(&format!("GET /repos/{REPO}/tarball/"));
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
    assert_eq!(fake.world().count(&format!("GET /repos/{REPO}/tarball/")), tarballs, "no collection");
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
    for _ in 0..200 {
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
