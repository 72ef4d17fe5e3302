//! The sign-off verifier wired into `sweepgate serve`: signed `issue_comment` deliveries with
//! the sign-off phrase → collect through the fake GitHub → verify → ONE bilingual verdict
//! comment per sign-off resource (edited in place on re-verification) and the commit status
//! `codeowner-signoff-verify` on the pinned head.

mod support;

use serde_json::{json, Value};
use support::fake_github::{FakeGitHub, Fault};
use support::fake_upstream::FakeUpstream;
use support::serve_bundle::{fixture, serve, serve_upstream, served, start_verifier, REPO};
use support::{action_command, comment_event, ServerProcess, BOT, TOKEN};
use sweepgate::evidence::{read_bundle, Evidence};

fn signoff_event(pr: u64, id: u64, login: &str, body: &str, previous: Option<&str>) -> Value {
    let mut payload = comment_event(pr, id, login, "MEMBER", body, previous);
    payload["repository"]["full_name"] = json!(REPO);
    payload
}

/// The bot's comments on `pr` that carry a verdict marker.
fn verdicts(fake: &FakeGitHub, pr: u64) -> Vec<(u64, String)> {
    let w = fake.world();
    w.comments_on(REPO, pr)
        .into_iter()
        .filter(|c| c.login == BOT && c.body.starts_with("<!-- sweepgate:verdict "))
        .map(|c| (c.id, c.body.clone()))
        .collect()
}

/// The green-sweep fixture served through a fake GitHub and a fake upstream: the bundle, both
/// fakes, and the id of its sign-off comment.
async fn green_sweep() -> (Evidence, FakeGitHub, FakeUpstream, u64) {
    served(read_bundle(&fixture("green-sweep")).unwrap()).await
}

async fn start_server(fake: &FakeGitHub, upstream: &FakeUpstream, extra: &[&str]) -> ServerProcess {
    start_verifier(fake, upstream, extra).await
}

fn statuses(fake: &FakeGitHub) -> Vec<(String, String, String)> {
    fake.world()
        .statuses
        .iter()
        .map(|(_, sha, body)| {
            (sha.clone(), body["context"].as_str().unwrap_or("").into(), body["state"].as_str().unwrap_or("").into())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signoff_posted_edited_and_by_a_non_owner() {
    let (original, fake, upstream, id) = green_sweep().await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    // Anyone can type a marker; only the bot's own comments count as verdicts.
    let forged =
        format!("<!-- sweepgate:verdict signoff=issuecomment-{id} sha={head} -->\n## ✅✅✅ **APPROVED** ✅✅✅");
    fake.add_comment(REPO, pr, "mallory", "NONE", &forged);
    let server = start_server(&fake, &upstream, &["--reviewer", "@maint-a"]).await;

    // 1. The sign-off is posted: one verdict comment, APPROVED, bilingual; pending then success.
    let (status, _) =
        server.deliver("issue_comment", "d-1", &signoff_event(pr, id, "nv-owner", &original.signoff.body, None)).await;
    assert_eq!(status, 202);
    server.wait_handled(1).await;
    let first = verdicts(&fake, pr);
    assert_eq!(first.len(), 1, "{first:#?}");
    let (verdict_id, body) = &first[0];
    // The marker records where policy was read: the default branch's tip (ARCHITECTURE decision 6).
    let policy = &original.pull_request.base_sha;
    let marker = format!("<!-- sweepgate:verdict signoff=issuecomment-{id} sha={head} policy={policy} -->\n");
    assert!(body.starts_with(&marker), "{body}");
    assert!(body.contains("**APPROVED**") && body.contains("检查 0"), "{body}");
    assert!(body.contains(&format!("Assessed commit: `{head}`")), "{body}");
    let context = "codeowner-signoff-verify".to_string();
    assert_eq!(
        statuses(&fake),
        vec![(head.clone(), context.clone(), "pending".into()), (head.clone(), context.clone(), "success".into())]
    );
    assert!(fake.world().comments.iter().any(|c| c.login == "mallory" && c.body == forged), "forged marker untouched");

    // 2. The sign-off is edited (an item unchecked): the same comment is edited, now REJECTED.
    let edited = original.signoff.body.replacen("- [x] General code quality", "- [ ] General code quality", 1);
    assert_ne!(edited, original.signoff.body);
    fake.world().comments.iter_mut().find(|c| c.id == id).unwrap().body = edited.clone();
    server
        .deliver("issue_comment", "d-2", &signoff_event(pr, id, "nv-owner", &edited, Some(&original.signoff.body)))
        .await;
    server.wait_handled(2).await;
    let second = verdicts(&fake, pr);
    assert_eq!(second.len(), 1, "edited in place, never duplicated");
    assert_eq!(second[0].0, *verdict_id);
    assert!(second[0].1.contains("**REJECTED**") && second[0].1.contains("❌ Check 5"), "{}", second[0].1);
    assert_eq!(statuses(&fake).last().unwrap(), &(head.clone(), context.clone(), "failure".into()));

    // 3. A redelivered-looking re-run with nothing changed rewrites nothing.
    server.deliver("issue_comment", "d-3", &signoff_event(pr, id, "nv-owner", &edited, Some(&edited))).await;
    server.wait_handled(3).await;
    assert_eq!(fake.world().count(&format!("PATCH /repos/{REPO}/issues/comments/{verdict_id}")), 1);

    // 4. A sign-off by a reader who owns no changed path is not eligible: no verdict, no
    //    collection, the status as it was, and one short bilingual reply.
    let stranger = fake.add_comment(REPO, pr, "random-dev", "CONTRIBUTOR", &original.signoff.body);
    fake.world().permissions.insert((REPO.into(), "random-dev".into()), "read".into());
    let before = statuses(&fake);
    server
        .deliver("issue_comment", "d-4", &signoff_event(pr, stranger, "random-dev", &original.signoff.body, None))
        .await;
    server.wait_handled(4).await;
    assert_eq!(verdicts(&fake, pr).len(), 1, "an ineligible sign-off gets no verdict");
    assert_eq!(statuses(&fake), before, "and never changes the status");
    let replies = refusals(&fake, pr);
    assert_eq!(replies.len(), 1);
    assert!(replies[0].contains("random-dev") && replies[0].contains("签核未计入"), "{}", replies[0]);
    assert_eq!(statuses(&fake).last().unwrap(), &(head.clone(), context, "failure".into()));
    assert_eq!(server.metric("sweepgate_events_handled_total{result=\"failed\"}").await, 0);
}

/// The bot's replies to sign-offs that do not count.
fn refusals(fake: &FakeGitHub, pr: u64) -> Vec<String> {
    let w = fake.world();
    w.comments_on(REPO, pr)
        .into_iter()
        .filter(|c| c.login == BOT && c.body.starts_with("<!-- sweepgate:signoff-refused "))
        .map(|c| c.body.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_none_association_signoff_leaves_the_status_as_it_was() {
    let (original, fake, upstream, id) = green_sweep().await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    let server = start_server(&fake, &upstream, &[]).await;
    server.deliver("issue_comment", "n-1", &signoff_event(pr, id, "nv-owner", &original.signoff.body, None)).await;
    server.wait_handled(1).await;
    assert_eq!(verdicts(&fake, pr).len(), 1);
    let approved = statuses(&fake);
    assert_eq!(approved.last().unwrap(), &(head.clone(), "codeowner-signoff-verify".into(), "success".into()));
    let tarballs = fake.world().count(&format!("GET /repos/{REPO}/tarball/"));

    // Two pasted checklists by a user with no association at all (not a collaborator: 404).
    for (n, delivery) in [(2, "n-2"), (3, "n-3")] {
        let pasted = fake.add_comment(REPO, pr, "mallory", "NONE", &original.signoff.body);
        let mut event = signoff_event(pr, pasted, "mallory", &original.signoff.body, None);
        event["comment"]["author_association"] = json!("NONE");
        server.deliver("issue_comment", delivery, &event).await;
        server.wait_handled(n).await;
    }
    assert_eq!(statuses(&fake), approved, "the CODEOWNER's APPROVED stands");
    assert_eq!(verdicts(&fake, pr).len(), 1, "no REJECTED verdict for mallory");
    assert_eq!(fake.world().count(&format!("GET /repos/{REPO}/tarball/")), tarballs, "no collection");
    let replies = refusals(&fake, pr);
    assert_eq!(replies.len(), 1, "one reply per PR, edited in place: {replies:#?}");
    assert!(
        replies[0].contains("mallory has `none`") && replies[0].contains("mallory 的权限为 `none`"),
        "{}",
        replies[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drafts_and_comments_without_the_phrase_are_not_verified() {
    let original = read_bundle(&fixture("green-sweep")).unwrap();
    let pr = original.pull_request.number;
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    let url = serve(&fake, &original);
    let id: u64 = url.rsplit('-').next().unwrap().parse().unwrap();
    fake.world().pulls.get_mut(&(REPO.into(), pr)).unwrap()["draft"] = json!(true);
    let server = ServerProcess::with_token(&fake.url).await;
    server.deliver("issue_comment", "d-1", &signoff_event(pr, id, "nv-owner", &original.signoff.body, None)).await;
    server.deliver("issue_comment", "d-2", &signoff_event(pr, id, "nv-owner", "LGTM", None)).await;
    server.wait_handled(2).await;
    assert!(verdicts(&fake, pr).is_empty());
    assert!(statuses(&fake).is_empty(), "a draft PR gets no status");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_summaries_are_verified_and_keyed_by_review() {
    let (original, fake, upstream, _) = green_sweep().await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    let review = json!({
        "id": 555, "body": original.signoff.body, "state": "APPROVED",
        "user": {"login": "nv-owner", "type": "User"},
        "html_url": format!("https://github.com/{REPO}/pull/{pr}#pullrequestreview-555"),
        "pull_request_url": format!("https://api.github.com/repos/{REPO}/pulls/{pr}"),
        "submitted_at": "2026-11-29T10:00:00Z"
    });
    fake.world().reviews.insert((REPO.into(), 555), review.clone());
    let server = start_server(&fake, &upstream, &["--advisory"]).await;
    let payload = json!({
        "action": "submitted", "repository": {"full_name": REPO}, "installation": {"id": 1001},
        "pull_request": {"number": pr}, "review": review, "sender": {"login": "nv-owner", "type": "User"}
    });
    server.deliver("pull_request_review", "r-1", &payload).await;
    server.wait_handled(1).await;
    let all = verdicts(&fake, pr);
    assert_eq!(all.len(), 1);
    let policy = &original.pull_request.base_sha;
    let marker = format!("<!-- sweepgate:verdict signoff=pullrequestreview-555 sha={head} policy={policy} -->");
    assert!(all[0].1.starts_with(&marker), "{}", all[0].1);
    assert!(statuses(&fake).is_empty(), "advisory mode posts no commit status");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manual_dispatch_through_the_action_verifies_a_closed_pr() {
    let original = read_bundle(&fixture("green-sweep")).unwrap();
    let pr = original.pull_request.number;
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    let upstream = FakeUpstream::start().await;
    serve_upstream(&upstream, &original);
    let url = serve(&fake, &original);
    fake.world().pulls.get_mut(&(REPO.into(), pr)).unwrap()["state"] = json!("closed");
    let dir = tempfile::tempdir().unwrap();
    let event_path = dir.path().join("event.json");
    let payload =
        json!({"repository": {"full_name": REPO}, "inputs": {"comment_url": url, "pr-number": pr.to_string()}});
    std::fs::write(&event_path, serde_json::to_vec(&payload).unwrap()).unwrap();
    let fake_url = fake.url.clone();
    let upstream_url = upstream.url.clone();
    let out = tokio::task::spawn_blocking(move || {
        action_command(&fake_url, &upstream_url, "workflow_dispatch", &event_path)
            .env_remove("GITHUB_STEP_SUMMARY")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("posted verdict comment"), "{stdout}");
    assert_eq!(verdicts(&fake, pr).len(), 1);
    assert_eq!(statuses(&fake).last().unwrap().2, "success");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_during_verification_is_named_and_the_status_stays_on_the_pinned_head() {
    let (original, fake, upstream, id) = green_sweep().await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    let pushed = "c".repeat(40);
    // Read 1: the handler's gate, whose head collection pins; read 2: the re-read sees the push.
    fake.world().head_moves = Some((1, pushed.clone()));
    let server = start_server(&fake, &upstream, &[]).await;
    server.deliver("issue_comment", "m-1", &signoff_event(pr, id, "nv-owner", &original.signoff.body, None)).await;
    server.wait_handled(1).await;
    let all = verdicts(&fake, pr);
    assert_eq!(all.len(), 1);
    let body = &all[0].1;
    assert!(body.contains(&format!("moved to `{pushed}`")) && body.contains("a fresh sign-off is needed"), "{body}");
    assert!(body.contains(&format!("Assessed commit: `{head}`")), "{body}");
    let w = fake.world();
    let (sha, status) = w.statuses.last().map(|(_, sha, body)| (sha.clone(), body.clone())).unwrap();
    assert_eq!(sha, head, "the status goes on the pinned head, never on the pushed commit");
    assert!(status["description"].as_str().unwrap().contains("fresh sign-off"), "{status}");
    assert!(w.statuses.iter().all(|(_, sha, _)| *sha != pushed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_repairs_a_signoff_left_pending() {
    let (original, fake, upstream, id) = green_sweep().await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    // A verification that died after its `pending` (the event itself was lost).
    fake.add_status(
        REPO,
        &head,
        BOT,
        "pending",
        "codeowner-signoff-verify",
        &format!("verifying sign-off issuecomment-{id}"),
    );
    let server = start_server(&fake, &upstream, &["--reconcile-secs", "1"]).await;
    // Any delivery from the repository makes it known to the reconcile pass.
    let chat = fake.add_comment(REPO, pr, "random-dev", "CONTRIBUTOR", "thanks");
    server.deliver("issue_comment", "rc-1", &signoff_event(pr, chat, "random-dev", "thanks", None)).await;
    server.wait_handled(1).await;
    // The reconcile pass runs a whole verification (collect and checks, debug build): up to a
    // minute on a loaded 2-core machine; the loop ends as soon as it is done.
    for _ in 0..1200 {
        if !verdicts(&fake, pr).is_empty() && statuses(&fake).last().unwrap().2 != "pending" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let all = verdicts(&fake, pr);
    assert_eq!(all.len(), 1, "the pending sign-off was verified again");
    assert!(all[0].1.contains(&format!("signoff=issuecomment-{id} ")), "{}", all[0].1);
    assert_eq!(statuses(&fake).last().unwrap(), &(head.clone(), "codeowner-signoff-verify".into(), "success".into()));
    // The next passes leave it alone: the status is no longer pending.
    let verified = statuses(&fake).len();
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    assert_eq!(statuses(&fake).len(), verified);
    assert_eq!(verdicts(&fake, pr).len(), 1);
}

/// The status of `context` on `sha` as the fake last received it: (state, description).
fn last_status(fake: &FakeGitHub, sha: &str) -> (String, String) {
    let w = fake.world();
    let (_, _, body) = w.statuses.iter().rfind(|(_, s, _)| s == sha).expect("a status on the head");
    (body["state"].as_str().unwrap_or("").into(), body["description"].as_str().unwrap_or("").into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_signoff_edited_after_a_newer_one_leaves_the_status_to_the_newer() {
    let (original, fake, upstream, older) = green_sweep().await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    let server = start_server(&fake, &upstream, &[]).await;
    server.deliver("issue_comment", "o-1", &signoff_event(pr, older, "nv-owner", &original.signoff.body, None)).await;
    server.wait_handled(1).await;
    assert_eq!(last_status(&fake, &head).0, "success");

    // An hour later the owner signs off again in a new comment: it is the newest, APPROVED.
    let later = "2026-09-01T11:00:00Z";
    let newer = fake.add_comment(REPO, pr, "nv-owner", "MEMBER", &original.signoff.body);
    if let Some(c) = fake.world().comments.iter_mut().find(|c| c.id == newer) {
        (c.created_at, c.updated_at) = (later.into(), later.into());
    }
    let mut event = signoff_event(pr, newer, "nv-owner", &original.signoff.body, None);
    (event["comment"]["created_at"], event["comment"]["updated_at"]) = (json!(later), json!(later));
    server.deliver("issue_comment", "o-2", &event).await;
    server.wait_handled(2).await;
    let (state, description) = last_status(&fake, &head);
    assert_eq!(state, "success");
    assert!(description.contains(&format!("issuecomment-{newer}")), "{description}");
    let approved = statuses(&fake);
    let before = verdicts(&fake, pr);
    assert_eq!(before.len(), 2);
    let tarballs = fake.world().count(&format!("GET /repos/{REPO}/tarball/"));

    // The older sign-off is edited into a rejection afterwards: the status stays the newer's,
    // nothing is collected, and no verdict changes.
    let edited = original.signoff.body.replacen("- [x] General code quality", "- [ ] General code quality", 1);
    fake.world().comments.iter_mut().find(|c| c.id == older).unwrap().body = edited.clone();
    let mut event = signoff_event(pr, older, "nv-owner", &edited, Some(&original.signoff.body));
    event["comment"]["updated_at"] = json!("2026-09-01T12:00:00Z");
    server.deliver("issue_comment", "o-3", &event).await;
    server.wait_handled(3).await;
    assert_eq!(statuses(&fake), approved, "the newer sign-off's status stands");
    assert_eq!(last_status(&fake, &head).1, description);
    assert_eq!(verdicts(&fake, pr), before, "no verdict rewritten");
    assert_eq!(fake.world().count(&format!("GET /repos/{REPO}/tarball/")), tarballs, "no collection");
    assert_eq!(server.metric("sweepgate_events_handled_total{result=\"failed\"}").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_repairs_review_and_inline_signoffs_newest_eligible_first() {
    let (original, fake, upstream, _) = green_sweep().await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    let pull_url = format!("https://api.github.com/repos/{REPO}/pulls/{pr}");
    // The owner's inline review comment is newer than the conversation sign-off; a stranger's
    // pasted review summary is newer still, but not eligible.
    fake.world().review_comments.insert(
        (REPO.into(), 777),
        json!({
            "id": 777, "body": original.signoff.body, "user": {"login": "nv-owner", "type": "User"},
            "html_url": format!("https://github.com/{REPO}/pull/{pr}#discussion_r777"),
            "pull_request_url": pull_url, "created_at": "2026-09-01T11:00:00Z", "updated_at": "2026-09-01T11:00:00Z"
        }),
    );
    fake.world().reviews.insert(
        (REPO.into(), 888),
        json!({
            "id": 888, "body": original.signoff.body, "state": "COMMENTED",
            "user": {"login": "random-dev", "type": "User"},
            "html_url": format!("https://github.com/{REPO}/pull/{pr}#pullrequestreview-888"),
            "pull_request_url": pull_url, "submitted_at": "2026-09-01T12:00:00Z"
        }),
    );
    fake.world().permissions.insert((REPO.into(), "random-dev".into()), "read".into());
    // Lost deliveries: no status at all on the head, and no verdict for the inline sign-off.
    let server = start_server(&fake, &upstream, &["--reconcile-secs", "1"]).await;
    let chat = fake.add_comment(REPO, pr, "random-dev", "CONTRIBUTOR", "thanks");
    server.deliver("issue_comment", "ri-1", &signoff_event(pr, chat, "random-dev", "thanks", None)).await;
    server.wait_handled(1).await;
    for _ in 0..1200 {
        if !verdicts(&fake, pr).is_empty() && statuses(&fake).last().is_some_and(|s| s.2 != "pending") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let all = verdicts(&fake, pr);
    assert_eq!(all.len(), 1, "{all:#?}");
    assert!(all[0].1.starts_with("<!-- sweepgate:verdict signoff=discussion_r777 "), "{}", all[0].1);
    let (state, description) = last_status(&fake, &head);
    assert_eq!(state, "success");
    assert!(description.contains("discussion_r777"), "{description}");
    assert!(fake.world().count(&format!("GET /repos/{REPO}/pulls/{pr}/reviews")) >= 1);
    // Verified now: the next passes leave it alone.
    let verified = statuses(&fake).len();
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    assert_eq!(statuses(&fake).len(), verified);
}

/// Issue 35 case 6: the author pushes C after a sign-off was posted for A, before the
/// sign-off's delivery is processed. The sign-off covers the head its author saw: nothing is
/// verified for C, no status is set, and the one reply for sign-offs that do not count says a
/// fresh sign-off is needed, naming both heads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signoff_posted_before_the_head_was_pushed_is_not_verified_for_it() {
    let (original, fake, upstream, id) = green_sweep().await;
    let (pr, signed) = (original.pull_request.number, original.pull_request.head_sha.clone());
    let pushed = "c".repeat(40);
    // The sign-off is posted at 10:00:00 (`comment_event`); the push lands 30 s later.
    fake.push(REPO, pr, &pushed, "2026-09-01T10:00:30Z");
    let server = start_server(&fake, &upstream, &[]).await;
    server.deliver("issue_comment", "race-1", &signoff_event(pr, id, "nv-owner", &original.signoff.body, None)).await;
    server.wait_handled(1).await;
    assert!(verdicts(&fake, pr).is_empty(), "nothing is verified for a head nobody signed");
    assert!(statuses(&fake).is_empty(), "the status is unchanged: {:?}", statuses(&fake));
    let replies = refusals(&fake, pr);
    assert_eq!(replies.len(), 1, "{replies:?}");
    let w = fake.world();
    let reply = &replies[0];
    assert!(reply.contains("### A fresh sign-off is needed") && reply.contains("### 需要重新签署"), "{reply}");
    assert!(reply.contains(&format!("before the PR's head `{pushed}` was pushed")), "{reply}");
    assert!(reply.contains(&format!("the branch then held `{signed}`")), "{reply}");
    assert!(w.log.iter().any(|l| l.contains(&format!("/activity?ref=refs%2Fheads%2Fbranch-{pr}"))), "{:?}", w.log);
    assert!(!w.log.iter().any(|l| l.contains("/tarball/")), "no evidence is collected for it");
}

/// Issue 34 item 7 (RV7): only a human with `write`, `maintain` or `admin` starts a verification.
/// A CODEOWNER of the changed paths who only reads the repository gets a short reply; a bot's
/// sign-off and a permission lookup that fails start nothing and reply nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_human_with_write_access_starts_a_verification() {
    let (original, fake, upstream, id) = green_sweep().await;
    let pr = original.pull_request.number;
    let body = &original.signoff.body;
    let server = start_server(&fake, &upstream, &[]).await;
    let nothing_started = |fake: &FakeGitHub| {
        verdicts(fake, pr).is_empty()
            && statuses(fake).is_empty()
            && fake.world().count(&format!("GET /repos/{REPO}/tarball/")) == 0
            && fake.world().count(&format!("GET /repos/{REPO}/branches/")) == 0
            && fake.world().count(&format!("GET /repos/{REPO}/contents/")) == 0
    };

    // A bot posts the checklist: nothing at all (no permission asked, no reply).
    let bot = fake.add_comment(REPO, pr, "renovate[bot]", "NONE", body);
    let mut event = signoff_event(pr, bot, "renovate[bot]", body, None);
    event["comment"]["user"]["type"] = json!("Bot");
    server.deliver("issue_comment", "w-1", &event).await;
    server.wait_handled(1).await;
    assert!(nothing_started(&fake), "{:?}", statuses(&fake));
    assert!(refusals(&fake, pr).is_empty());
    assert_eq!(fake.world().count(&format!("GET /repos/{REPO}/collaborators/")), 0);

    // GitHub refuses to say what the owner's permission is: no verification, no reply, no
    // failed event (the next reconcile pass asks again).
    let lookup = format!("GET /repos/{REPO}/collaborators/nv-owner/permission");
    fake.fail_next(Fault { status: 403, matching: lookup, ..Fault::default() });
    server.deliver("issue_comment", "w-2", &signoff_event(pr, id, "nv-owner", body, None)).await;
    server.wait_handled(2).await;
    assert!(nothing_started(&fake), "{:?}", statuses(&fake));
    assert!(refusals(&fake, pr).is_empty());
    assert_eq!(server.metric("sweepgate_events_handled_total{result=\"failed\"}").await, 0);

    // The owner of configs/nvidia-master.yaml only reads the repository (and `triage` is no
    // more): not verified, one reply naming the permission, in both languages.
    for (n, permission) in [(3, "read"), (4, "triage")] {
        fake.world().permissions.insert((REPO.into(), "nv-owner".into()), permission.into());
        server.deliver("issue_comment", &format!("w-{n}"), &signoff_event(pr, id, "nv-owner", body, None)).await;
        server.wait_handled(n).await;
        assert!(nothing_started(&fake), "{permission}: {:?}", statuses(&fake));
        let replies = refusals(&fake, pr);
        assert_eq!(replies.len(), 1, "one reply per PR, edited in place");
        assert!(replies[0].contains(&format!("nv-owner has `{permission}`")), "{}", replies[0]);
        assert!(replies[0].contains(&format!("的权限为 `{permission}`")), "{}", replies[0]);
    }

    // `maintain` starts it.
    fake.world().permissions.insert((REPO.into(), "nv-owner".into()), "maintain".into());
    server.deliver("issue_comment", "w-5", &signoff_event(pr, id, "nv-owner", body, None)).await;
    server.wait_handled(5).await;
    assert_eq!(verdicts(&fake, pr).len(), 1);
    assert_eq!(statuses(&fake).last().unwrap().2, "success");
}

/// Issue 34 item 8 (RV8): one verdict comment per sign-off resource, edited in place; an edit
/// that changes neither the sign-off's text nor its evidence posts nothing (no comment, no
/// status: an edit is verified without a `pending` first); a different sign-off gets its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_edit_posts_nothing_and_each_signoff_keeps_its_own_verdict() {
    let (original, fake, upstream, id) = green_sweep().await;
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    let server = start_server(&fake, &upstream, &[]).await;
    let body = &original.signoff.body;
    server.deliver("issue_comment", "q-1", &signoff_event(pr, id, "nv-owner", body, None)).await;
    server.wait_handled(1).await;
    let first = verdicts(&fake, pr);
    assert_eq!(first.len(), 1);
    let approved = statuses(&fake);
    assert_eq!(approved.last().unwrap().2, "success");
    let writes = |fake: &FakeGitHub| {
        let w = fake.world();
        (w.count(&format!("POST /repos/{REPO}/issues/{pr}/comments")), w.count(&format!("PATCH /repos/{REPO}/issues/")))
    };
    let written = writes(&fake);

    // Edited without a change (GitHub sends `edited` for an identical body too): nothing posted.
    server.deliver("issue_comment", "q-2", &signoff_event(pr, id, "nv-owner", body, Some(body))).await;
    server.wait_handled(2).await;
    assert_eq!(statuses(&fake), approved, "no pending, no repeated success");
    assert_eq!(writes(&fake), written, "no comment posted or edited");
    assert_eq!(verdicts(&fake, pr), first);

    // An edit that changes the verdict edits its own comment; the status goes straight to failure.
    let edited = body.replacen("- [x] General code quality", "- [ ] General code quality", 1);
    fake.world().comments.iter_mut().find(|c| c.id == id).unwrap().body = edited.clone();
    server.deliver("issue_comment", "q-3", &signoff_event(pr, id, "nv-owner", &edited, Some(body))).await;
    server.wait_handled(3).await;
    let now = verdicts(&fake, pr);
    assert_eq!((now.len(), now[0].0), (1, first[0].0), "the same comment, edited in place");
    assert!(now[0].1.contains("**REJECTED**"), "{}", now[0].1);
    let mut expected = approved.clone();
    expected.push((head.clone(), "codeowner-signoff-verify".into(), "failure".into()));
    assert_eq!(statuses(&fake), expected, "an edit is verified without a pending status");

    // A different sign-off (a new comment) gets its own verdict comment; the first stays as it is.
    let later = "2026-09-01T11:00:00Z";
    let second = fake.add_comment(REPO, pr, "nv-owner", "MEMBER", body);
    if let Some(c) = fake.world().comments.iter_mut().find(|c| c.id == second) {
        (c.created_at, c.updated_at) = (later.into(), later.into());
    }
    let mut event = signoff_event(pr, second, "nv-owner", body, None);
    (event["comment"]["created_at"], event["comment"]["updated_at"]) = (json!(later), json!(later));
    server.deliver("issue_comment", "q-4", &event).await;
    server.wait_handled(4).await;
    let both = verdicts(&fake, pr);
    assert_eq!(both.len(), 2, "{both:#?}");
    assert_eq!(both[0], now[0], "the first sign-off's verdict is untouched");
    assert!(both[1].1.starts_with(&format!("<!-- sweepgate:verdict signoff=issuecomment-{second} ")), "{}", both[1].1);
    assert_eq!(server.metric("sweepgate_events_handled_total{result=\"failed\"}").await, 0);
}

/// Issue 34 item 7 (RV7): verifications of one PR run one at a time. Two writers' sign-offs
/// arrive together on two workers, with every GitHub answer slowed: the second verification
/// starts (its `pending`) only after the first one's verdict status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_signoffs_of_one_pr_are_verified_one_after_the_other() {
    let (original, fake, upstream, first) = green_sweep().await;
    let pr = original.pull_request.number;
    let body = &original.signoff.body;
    let later = "2026-09-01T11:00:00Z";
    let second = fake.add_comment(REPO, pr, "maint-b", "MEMBER", body);
    {
        let mut w = fake.world();
        w.permissions.insert((REPO.into(), "maint-b".into()), "write".into());
        if let Some(c) = w.comments.iter_mut().find(|c| c.id == second) {
            (c.created_at, c.updated_at) = (later.into(), later.into());
        }
        w.latency = std::time::Duration::from_millis(5);
    }
    let server = start_server(&fake, &upstream, &[]).await;
    let mut event = signoff_event(pr, second, "maint-b", body, None);
    (event["comment"]["created_at"], event["comment"]["updated_at"]) = (json!(later), json!(later));
    // Both accepted before either is handled (a delivery is answered when it is queued).
    let (a, _) = server.deliver("issue_comment", "t-1", &signoff_event(pr, first, "nv-owner", body, None)).await;
    let (b, _) = server.deliver("issue_comment", "t-2", &event).await;
    assert_eq!((a, b), (202, 202));
    server.wait_handled(2).await;
    let descriptions: Vec<String> = fake
        .world()
        .statuses
        .iter()
        .map(|(_, _, s)| s["description"].as_str().unwrap_or("").split(" at ").next().unwrap().to_owned())
        .collect();
    let (first, second) = (format!("issuecomment-{first}"), format!("issuecomment-{second}"));
    let one_after_the_other = vec![
        format!("verifying sign-off {first}"),
        format!("sign-off {first}: APPROVED"),
        format!("verifying sign-off {second}"),
        // maint-b may start a verification but owns no changed path: Check 0 rejects it.
        format!("sign-off {second}: REJECTED"),
    ];
    assert_eq!(descriptions, one_after_the_other);
    assert_eq!(verdicts(&fake, pr).len(), 2);
}
