//! End to end: a `merge_group` delivery (GitHub's merge queue) into the real server → the
//! statuses the bot set on the queued PR's head are copied to the merge group's commit; a PR
//! without them, or a group naming no PR, fails the group at once (decision I11).

mod support;

use serde_json::Value;
use support::fake_github::FakeGitHub;
use support::*;

const LABELS: &str = "sweepgate/sweep-labels";
const SIGNOFF: &str = "codeowner-signoff-verify";

fn fixture() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/events/merge_group.checks_requested.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// (context, state, description) of the statuses posted on `sha`, oldest first.
fn statuses_on(fake: &FakeGitHub, sha: &str) -> Vec<(String, String, String)> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    fake.world()
        .statuses
        .iter()
        .filter(|(_, s, _)| s == sha)
        .map(|(_, _, v)| (text(&v["context"]), text(&v["state"]), text(&v["description"])))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merge_groups_get_the_bots_statuses_of_the_queued_pr_head() {
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    fake.add_pull(REPO, 42, &head_sha(), &["full-sweep-enabled"], &[("perf-changelog.yaml", 4)]);
    fake.add_status(REPO, &head_sha(), BOT, "failure", LABELS, "no sweep: no-primary-label");
    fake.add_status(REPO, &head_sha(), BOT, "success", LABELS, "sweep: full-sweep-enabled");
    fake.add_status(REPO, &head_sha(), BOT, "failure", SIGNOFF, "sign-off issuecomment-9: REJECTED at 3f1c2a9");
    // Someone else's later status under the bot's context is not laundered into the group.
    fake.add_status(REPO, &head_sha(), "mallory", "success", SIGNOFF, "looks good");
    let server = ServerProcess::with_token(&fake.url).await;

    let event = fixture();
    let group_sha = event["merge_group"]["head_sha"].as_str().unwrap().to_string();
    assert_eq!(server.deliver("merge_group", "mq-1", &event).await.0, 202);
    server.wait_handled(1).await;
    assert_eq!(
        statuses_on(&fake, &group_sha),
        [
            (LABELS.into(), "success".into(), "PR #42 head 3f1c2a9b8d7e: sweep: full-sweep-enabled".into()),
            (
                SIGNOFF.into(),
                "failure".into(),
                "PR #42 head 3f1c2a9b8d7e: sign-off issuecomment-9: REJECTED at 3f1c2a9".into()
            ),
        ]
    );
    assert!(server
        .metrics()
        .await
        .contains("sweepgate_webhook_deliveries_total{event=\"merge_group\",outcome=\"queued\"} 1"));

    // A queued PR whose head has no status of the bot: the group fails at once.
    fake.add_pull(REPO, 43, &"c".repeat(40), &[], &[("perf-changelog.yaml", 1)]);
    let mut unverified = fixture();
    unverified["merge_group"]["head_sha"] = Value::from("d".repeat(40));
    unverified["merge_group"]["head_ref"] =
        Value::from(format!("refs/heads/gh-readonly-queue/main/pr-43-{}", "e".repeat(40)));
    assert_eq!(server.deliver("merge_group", "mq-2", &unverified).await.0, 202);
    // A group ref of another shape names no PR: failed too, never left pending.
    let mut unnamed = fixture();
    unnamed["merge_group"]["head_sha"] = Value::from("f".repeat(40));
    unnamed["merge_group"]["head_ref"] = Value::from("refs/heads/some-other-queue");
    assert_eq!(server.deliver("merge_group", "mq-3", &unnamed).await.0, 202);
    // Only `checks_requested` is acted on.
    let mut destroyed = fixture();
    destroyed["action"] = Value::from("destroyed");
    assert_eq!(server.deliver("merge_group", "mq-4", &destroyed).await.1.trim(), "nothing to do");
    server.wait_handled(3).await;
    let unverified = statuses_on(&fake, &"d".repeat(40));
    assert_eq!(unverified.len(), 2);
    assert!(unverified
        .iter()
        .all(|(_, state, text)| state == "failure" && text.starts_with("PR #43 head cccccccccccc has no ")));
    let unnamed = statuses_on(&fake, &"f".repeat(40));
    assert_eq!(
        unnamed.iter().map(|(c, s, _)| (c.as_str(), s.as_str())).collect::<Vec<_>>(),
        [(LABELS, "failure"), (SIGNOFF, "failure")]
    );
    assert_eq!(server.metric("sweepgate_events_handled_total{result=\"failed\"}").await, 0);
}
