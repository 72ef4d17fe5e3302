//! End to end: signed webhooks into the real `sweepgate serve` binary → the real octocrab client
//! → the fake GitHub; assertions on every side effect, snapshots of the posted comments.

mod support;

use support::fake_github::{Dropped, FakeGitHub, Fault};
use support::*;

const CHANGELOG: (&str, u64) = ("perf-changelog.yaml", 6);

async fn setup(labels: &[&str]) -> (FakeGitHub, ServerProcess) {
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    fake.add_pull(REPO, 42, &head_sha(), labels, &[CHANGELOG, ("configs/amd-master.yaml", 12)]);
    let server = ServerProcess::with_token(&fake.url).await;
    (fake, server)
}

fn bot_comments(fake: &FakeGitHub, marker_kind: &str) -> Vec<(u64, String)> {
    let w = fake.world();
    w.comments_on(REPO, 42)
        .into_iter()
        .filter(|c| c.login == BOT && c.body.starts_with(&format!("<!-- sweepgate:{marker_kind} ")))
        .map(|c| (c.id, c.body.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn welcome_once_and_sticky_label_comment_edited_not_duplicated() {
    let (fake, server) = setup(&[]).await;
    let (status, _) = server.deliver("pull_request", "d-1", &pr_event("opened", 42, &[], None, "vendor-dev")).await;
    assert_eq!(status, 202);
    server.wait_handled(1).await;
    let welcome = bot_comments(&fake, "welcome");
    assert_eq!(welcome.len(), 1);
    insta::assert_snapshot!("welcome_comment", welcome[0].1);
    let first = bot_comments(&fake, "labels");
    assert_eq!(first.len(), 1);
    insta::assert_snapshot!("labels_no_primary", first[0].1);
    {
        let w = fake.world();
        let (_, sha, status) = w.statuses.last().unwrap();
        assert_eq!(sha, &head_sha());
        assert_eq!(
            (status["state"].as_str(), status["context"].as_str()),
            (Some("failure"), Some("sweepgate/sweep-labels"))
        );
        assert_eq!(status["description"], "no sweep: no-primary-label");
    }

    // A maintainer applies the primary label: the same comment is edited.
    fake.set_labels(REPO, 42, &["full-sweep-fail-fast", "all-evals"]);
    let labeled = pr_event("labeled", 42, &["full-sweep-fail-fast", "all-evals"], Some("all-evals"), "maintainer");
    assert_eq!(server.deliver("pull_request", "d-2", &labeled).await.0, 202);
    server.wait_handled(2).await;
    let second = bot_comments(&fake, "labels");
    assert_eq!(second.len(), 1, "sticky comment is edited, not duplicated");
    assert_eq!(second[0].0, first[0].0);
    insta::assert_snapshot!("labels_sweep", second[0].1);
    assert_eq!(fake.world().statuses.last().unwrap().2["state"], "success");

    // Redelivery of the same delivery id: acknowledged, nothing done.
    let (status, body) = server.deliver("pull_request", "d-2", &labeled).await;
    assert_eq!((status, body.trim()), (200, "duplicate delivery"));
    // A reopen (new delivery) finds the welcome by its marker and does not post it again.
    let before = fake.world().count("POST /repos/example-org/bench-repo/issues/42/comments");
    assert_eq!(server.deliver("pull_request", "d-3", &pr_event("reopened", 42, &[], None, "x")).await.0, 202);
    server.wait_handled(3).await;
    assert_eq!(fake.world().count("POST /repos/example-org/bench-repo/issues/42/comments"), before);
    assert_eq!(bot_comments(&fake, "welcome").len(), 1);
    assert!(server
        .metrics()
        .await
        .contains("sweepgate_webhook_deliveries_total{event=\"pull_request\",outcome=\"duplicate\"} 1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_missing_and_stale_signatures_get_401_and_nothing_is_queued() {
    let (fake, server) = setup(&[]).await;
    let payload = serde_json::to_vec(&pr_event("opened", 42, &[], None, "eve")).unwrap();
    let wrong = sweepgate::github::webhook::sign(b"not-the-secret", &payload);
    assert_eq!(server.post("pull_request", "f-1", Some(&wrong), payload.clone()).await.0, 401);
    assert_eq!(server.post("pull_request", "f-2", None, payload.clone()).await.0, 401);
    assert_eq!(server.post("pull_request", "f-3", Some("sha1=deadbeef"), payload.clone()).await.0, 401);
    // A signature of another body (a replayed header on a tampered payload).
    let stale = sweepgate::github::webhook::sign(SECRET.as_bytes(), b"{}");
    assert_eq!(server.post("pull_request", "f-4", Some(&stale), payload).await.0, 401);
    let metrics = server.metrics().await;
    assert!(metrics.contains("outcome=\"unauthorized\"} 4"), "{metrics}");
    assert_eq!(server.metric("sweepgate_queue_depth").await, 0);
    assert!(!metrics.contains("outcome=\"queued\""));
    assert!(fake.world().log.is_empty(), "no GitHub call for a refused delivery");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_unknown_and_oversized_deliveries() {
    let (fake, server) = setup(&[]).await;
    let garbage = b"this is not json".to_vec();
    let signed = sweepgate::github::webhook::sign(SECRET.as_bytes(), &garbage);
    assert_eq!(server.post("pull_request", "m-1", Some(&signed), garbage).await.0, 400);
    let (status, _) = server.deliver("workflow_job", "m-2", &serde_json::json!({"action": "queued"})).await;
    assert_eq!(status, 202);
    assert_eq!(server.deliver("ping", "m-3", &serde_json::json!({"zen": "hi"})).await.0, 202);
    let missing_fields = serde_json::json!({"action": "opened", "repository": {"full_name": REPO}});
    assert_eq!(server.deliver("pull_request", "m-4", &missing_fields).await.0, 400);
    let huge = vec![b' '; 26 * 1024 * 1024];
    let signed = sweepgate::github::webhook::sign(SECRET.as_bytes(), &huge);
    assert_eq!(server.post("pull_request", "m-5", Some(&signed), huge).await.0, 413);
    assert!(fake.world().log.is_empty());
    assert_eq!(server.post("pull_request", "", Some("sha256=00"), b"{}".to_vec()).await.0, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn label_storm_ends_in_one_comment_with_the_final_state() {
    let (fake, server) = setup(&[]).await;
    fake.set_labels(REPO, 42, &["full-sweep-enabled"]);
    let labels = ["full-sweep-enabled", "all-evals", "evals-only", "agentx-fast", "bug"];
    let mut sent = 0;
    for i in 0..40 {
        let label = labels[i % labels.len()];
        let action = if i % 2 == 0 { "labeled" } else { "unlabeled" };
        let event = pr_event(action, 42, &["full-sweep-enabled"], Some(label), "maintainer");
        assert_eq!(server.deliver("pull_request", &format!("s-{i}"), &event).await.0, 202);
        sent += 1;
    }
    server.wait_handled(sent).await;
    let comments = bot_comments(&fake, "labels");
    assert_eq!(comments.len(), 1, "one sticky comment after {sent} label events");
    assert!(comments[0].1.contains("This PR sweeps with `full-sweep-enabled`"));
    let w = fake.world();
    assert_eq!(w.count("POST /repos/example-org/bench-repo/issues/42/comments"), 1);
    assert_eq!(w.count("PATCH "), 0, "later events compute the same text: no needless edits");
    assert!(w.statuses.iter().all(|(_, _, s)| s["state"] == "success"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_outage_and_rate_limits_are_retried() {
    let (fake, server) = setup(&["full-sweep-fail-fast"]).await;
    for _ in 0..2 {
        fake.fail_next(Fault {
            status: 502,
            headers: vec![],
            matching: "GET /repos/example-org/bench-repo/pulls/42".into(),
            ..Fault::default()
        });
    }
    fake.fail_next(Fault {
        status: 429,
        headers: vec![("retry-after", "0".into())],
        matching: "POST /repos/example-org/bench-repo/issues/42/comments".into(),
        ..Fault::default()
    });
    fake.fail_next(Fault {
        status: 403,
        headers: vec![("x-ratelimit-remaining", "0".into()), ("x-ratelimit-reset", "0".into())],
        matching: "POST /repos/example-org/bench-repo/statuses".into(),
        ..Fault::default()
    });
    let event = pr_event("synchronize", 42, &["full-sweep-fail-fast"], None, "vendor-dev");
    assert_eq!(server.deliver("pull_request", "o-1", &event).await.0, 202);
    server.wait_handled(1).await;
    assert_eq!(server.metric("sweepgate_events_handled_total{result=\"ok\"}").await, 1);
    assert_eq!(bot_comments(&fake, "labels").len(), 1);
    assert_eq!(fake.world().statuses.len(), 1);
    assert!(server.metric("sweepgate_github_api_retries_total").await >= 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comment_post_failing_with_502_is_not_blindly_repeated() {
    let (fake, server) = setup(&["full-sweep-fail-fast"]).await;
    fake.fail_next(Fault {
        status: 502,
        headers: vec![],
        matching: "POST /repos/example-org/bench-repo/issues/42/comments".into(),
        ..Fault::default()
    });
    let event = pr_event("synchronize", 42, &["full-sweep-fail-fast"], None, "vendor-dev");
    assert_eq!(server.deliver("pull_request", "p-1", &event).await.0, 202);
    server.wait_handled(1).await;
    // The client does not retry the POST; the handler retries the whole event, which re-lists
    // the comments first and so would find a comment the failed POST had created.
    let w = fake.world();
    assert_eq!(w.count("POST /repos/example-org/bench-repo/issues/42/comments"), 2);
    assert!(w.count("GET /repos/example-org/bench-repo/issues/42/comments") >= 2);
    drop(w);
    assert_eq!(bot_comments(&fake, "labels").len(), 1);
}

/// A server whose GitHub calls time out after 1 s (the default is 30 s).
async fn setup_with_short_timeout() -> (FakeGitHub, ServerProcess) {
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    fake.add_pull(REPO, 42, &head_sha(), &["full-sweep-fail-fast"], &[CHANGELOG, ("configs/amd-master.yaml", 12)]);
    let args =
        ["--github-token", TOKEN, "--github-api-url", &fake.url, "--bot-login", BOT, "--github-timeout-secs", "1"];
    let server = ServerProcess::start(&args).await;
    (fake, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_and_dropped_reads_are_retried() {
    let (fake, server) = setup_with_short_timeout().await;
    // Far beyond the client's 1 s: only the timeout ends this call.
    fake.fail_next(Fault::slow("GET /repos/example-org/bench-repo/pulls/42", std::time::Duration::from_secs(60)));
    fake.fail_next(Fault::dropped("GET /repos/example-org/bench-repo/issues/42/comments", Dropped::BeforeHandling));
    fake.fail_next(Fault::dropped("GET /repos/example-org/bench-repo/pulls/42/files", Dropped::AfterHandling));
    let started = std::time::Instant::now();
    let event = pr_event("synchronize", 42, &["full-sweep-fail-fast"], None, "vendor-dev");
    assert_eq!(server.deliver("pull_request", "slow-1", &event).await.0, 202);
    server.wait_handled(1).await;
    assert!(started.elapsed() < std::time::Duration::from_secs(15), "took {:?}", started.elapsed());
    assert_eq!(server.metric("sweepgate_events_handled_total{result=\"ok\"}").await, 1);
    assert!(server.metric("sweepgate_github_api_retries_total").await >= 3);
    assert!(fake.world().faults.is_empty(), "every fault was hit");
    let labels = bot_comments(&fake, "labels");
    assert_eq!(labels.len(), 1);
    assert!(labels[0].1.contains("This PR sweeps with `full-sweep-fail-fast`"), "{}", labels[0].1);
    assert_eq!(fake.world().statuses.last().unwrap().2["state"], "success");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comment_post_whose_connection_drops_is_not_repeated_blindly() {
    let (fake, server) = setup_with_short_timeout().await;
    // GitHub created the comment, but its answer never arrived.
    let post = "POST /repos/example-org/bench-repo/issues/42/comments";
    fake.fail_next(Fault::dropped(post, Dropped::AfterHandling));
    let event = pr_event("synchronize", 42, &["full-sweep-fail-fast"], None, "vendor-dev");
    assert_eq!(server.deliver("pull_request", "drop-1", &event).await.0, 202);
    server.wait_handled(1).await;
    // The client did not repeat the POST; the retried event re-listed, found the comment by its
    // marker, and had nothing left to post.
    {
        let w = fake.world();
        assert_eq!(w.count(post), 1, "{:#?}", w.log);
        assert!(w.count("GET /repos/example-org/bench-repo/issues/42/comments") >= 2);
    }
    let labels = bot_comments(&fake, "labels");
    assert_eq!(labels.len(), 1, "one sticky comment");
    assert!(labels[0].1.contains("This PR sweeps with `full-sweep-fail-fast`"), "{}", labels[0].1);
    assert_eq!(fake.world().statuses.last().unwrap().2["state"], "success");
    // The lost answer is visible: an API error and an event-level retry, and the event ended ok.
    assert!(server.metric("sweepgate_github_api_errors_total").await >= 1);
    assert_eq!(server.metric("sweepgate_events_handled_total{result=\"ok\"}").await, 1);

    // The same loss before GitHub acted: the retried event posts the comment once.
    fake.world().comments.clear();
    fake.fail_next(Fault::dropped(post, Dropped::BeforeHandling));
    assert_eq!(server.deliver("pull_request", "drop-2", &event).await.0, 202);
    server.wait_handled(2).await;
    assert_eq!(fake.world().count(post), 3);
    assert_eq!(bot_comments(&fake, "labels").len(), 1);
    assert_eq!(server.metric("sweepgate_events_handled_total{result=\"ok\"}").await, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_markers_and_the_bots_own_comments_are_ignored() {
    let (fake, server) = setup(&["full-sweep-enabled"]).await;
    // Someone else types the bot's marker: the bot must not treat it as its comment.
    fake.add_comment(REPO, 42, "eve", "NONE", "<!-- sweepgate:labels pr=42 -->\nforged");
    fake.add_comment(REPO, 42, "eve", "NONE", "<!-- sweepgate:welcome pr=42 -->\nforged");
    assert_eq!(
        server.deliver("pull_request", "k-1", &pr_event("opened", 42, &["full-sweep-enabled"], None, "x")).await.0,
        202
    );
    server.wait_handled(1).await;
    assert_eq!(bot_comments(&fake, "labels").len(), 1);
    assert_eq!(bot_comments(&fake, "welcome").len(), 1);
    // A comment by the bot itself (even with a command) is never acted on.
    let own = comment_event(42, 1, BOT, "NONE", "/use 1", None);
    assert_eq!(server.deliver("issue_comment", "k-2", &own).await.0, 202);
    server.wait_handled(2).await;
    assert!(fake.world().reactions.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redelivery_after_a_restart_is_acknowledged_but_not_processed() {
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    fake.add_pull(REPO, 42, &head_sha(), &["full-sweep-enabled"], &[CHANGELOG]);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.sqlite");
    let args = ["--github-token", TOKEN, "--github-api-url", &fake.url, "--bot-login", BOT, "--state"];
    let args: Vec<&str> = args.into_iter().chain([state.to_str().unwrap()]).collect();
    let opened = pr_event("opened", 42, &["full-sweep-enabled"], None, "vendor-dev");

    let server = ServerProcess::start(&args).await;
    assert_eq!(server.deliver("pull_request", "restart-1", &opened).await.0, 202);
    server.wait_handled(1).await;
    let (comments, statuses) = {
        let w = fake.world();
        (w.comments.len(), w.statuses.len())
    };
    assert_eq!((comments, statuses), (2, 1), "welcome + labels comment, one status");
    server.stop();

    // Restarted on the same state file, GitHub redelivers the same id.
    let server = ServerProcess::start(&args).await;
    let (status, body) = server.deliver("pull_request", "restart-1", &opened).await;
    assert_eq!((status, body.trim()), (200, "duplicate delivery"));
    let metrics = server.metrics().await;
    assert!(metrics.contains("sweepgate_webhook_deliveries_total{event=\"pull_request\",outcome=\"duplicate\"} 1"));
    assert!(!metrics.contains("outcome=\"queued\""), "{metrics}");
    // A new delivery is processed; the redelivered one never was.
    let sync = pr_event("synchronize", 42, &["full-sweep-enabled"], None, "vendor-dev");
    assert_eq!(server.deliver("pull_request", "restart-2", &sync).await.0, 202);
    server.wait_handled(1).await;
    assert_eq!(server.metric("sweepgate_events_handled_total{result=\"ok\"}").await, 1);
    let w = fake.world();
    assert_eq!(w.comments.len(), comments, "nothing posted again");
    assert_eq!(w.statuses.len(), statuses, "the new delivery decided the same: the status is not re-posted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reconcile_pass_repairs_a_missed_delivery_within_its_bound() {
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    fake.add_pull(REPO, 42, &head_sha(), &["full-sweep-enabled"], &[CHANGELOG]);
    let server = ServerProcess::start(&[
        "--github-token",
        TOKEN,
        "--github-api-url",
        &fake.url,
        "--bot-login",
        BOT,
        "--reconcile-secs",
        "1",
        "--reconcile-max-prs",
        "2",
    ])
    .await;
    // One delivery makes the repository known; its status says "sweep".
    let opened = pr_event("opened", 42, &["full-sweep-enabled"], None, "vendor-dev");
    assert_eq!(server.deliver("pull_request", "rc-1", &opened).await.0, 202);
    server.wait_handled(1).await;
    assert_eq!(fake.world().statuses.last().unwrap().2["state"], "success");
    // Two PRs are opened without any delivery; then PR 42's label is removed and that delivery
    // is lost. A pass takes the 2 most recently updated of the 3 open PRs: 42 and 44.
    fake.add_pull(REPO, 43, &"c".repeat(40), &["full-sweep-enabled"], &[CHANGELOG]);
    fake.add_pull(REPO, 44, &"d".repeat(40), &["full-sweep-enabled"], &[CHANGELOG]);
    fake.set_labels(REPO, 42, &[]);
    let pass_queued = |metrics: &str| {
        let value = |series: &str| {
            metrics.lines().find_map(|l| l.strip_prefix(series)).and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(0)
        };
        (value("sweepgate_reconcile_passes_total "), value("sweepgate_reconcile_prs_total{result=\"queued\"} "))
    };
    let mut repaired = false;
    for _ in 0..200 {
        let (passes, queued) = pass_queued(&server.metrics().await);
        assert_eq!(queued, 2 * passes, "every pass queues exactly its bound of 2 of the 3 open PRs");
        let statuses_42: Vec<String> = {
            let w = fake.world();
            w.statuses.iter().filter(|(_, sha, _)| *sha == head_sha()).map(|(_, _, s)| s["state"].to_string()).collect()
        };
        repaired = passes >= 2 && statuses_42.last().is_some_and(|s| s == "\"failure\"");
        if repaired {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(repaired, "PR 42's status follows its labels again:\n{}", server.metrics().await);
    let w = fake.world();
    // Pages are asked for no more PRs than the bound.
    assert!(w
        .log
        .iter()
        .filter(|l| l.starts_with("GET /repos/example-org/bench-repo/pulls?"))
        .all(|l| l.contains("per_page=2")));
    assert_eq!(w.comments_on(REPO, 42).iter().filter(|c| c.body.contains("sweepgate:welcome")).count(), 1);
    assert_eq!(
        w.comments_on(REPO, 42).iter().filter(|c| c.body.contains("sweepgate:labels")).count(),
        1,
        "the label comment is edited, not duplicated"
    );
    assert!(
        w.comments_on(REPO, 43).iter().all(|c| !c.body.contains("sweepgate:welcome")),
        "reconcile posts no welcome"
    );
}
