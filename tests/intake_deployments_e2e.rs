//! End to end for each deployment: GitHub App auth (JWT → installation token), `sweepgate
//! action` inside a simulated Actions run (with the verdict's frontier charts as SVG files next
//! to the job summary), dry-run mode with `sweepgate replay`, and the fork approval flow (the
//! label approves exactly one head SHA).

mod support;

use std::process::Command;

use support::fake_github::FakeGitHub;
use support::fake_upstream::FakeUpstream;
use support::serve_bundle::{fixture, serve, serve_upstream};
use support::*;
use sweepgate::github::outbox::OutboxGitHub;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_app_auth_mints_one_installation_token_and_reuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some(key) = rsa_key(dir.path()) else {
        eprintln!("skipping: openssl is not available to make a test App key");
        return;
    };
    let fake = FakeGitHub::start("unused", "nobody").await;
    fake.add_pull(REPO, 42, &head_sha(), &["full-sweep-enabled"], &[("perf-changelog.yaml", 3)]);
    let server = ServerProcess::start(&[
        "--app-id",
        "123",
        "--private-key-file",
        key.to_str().unwrap(),
        "--github-api-url",
        &fake.url,
    ])
    .await;
    for (i, action) in ["opened", "synchronize", "labeled"].iter().enumerate() {
        let event = pr_event(action, 42, &["full-sweep-enabled"], Some("full-sweep-enabled"), "m");
        assert_eq!(server.deliver("pull_request", &format!("a-{i}"), &event).await.0, 202);
    }
    server.wait_handled(3).await;
    assert_eq!(server.metric("sweepgate_events_handled_total{result=\"ok\"}").await, 3);
    let w = fake.world();
    assert_eq!(w.installation_tokens_issued, 1, "the installation token is cached");
    assert_eq!(w.count("POST /app/installations/1001/access_tokens"), 1);
    assert!(w.comments_on(REPO, 42).iter().all(|c| c.login == BOT));
    assert_eq!(w.comments_on(REPO, 42).len(), 2, "welcome + labels");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn action_mode_handles_one_event_and_writes_the_job_summary() {
    let fake = FakeGitHub::start(TOKEN, "github-actions[bot]").await;
    fake.add_pull(REPO, 42, &head_sha(), &["non-canary-full-sweep-enabled"], &[("perf-changelog.yaml", 3)]);
    let dir = tempfile::tempdir().unwrap();
    let event_path = dir.path().join("event.json");
    let summary = dir.path().join("summary.md");
    let event = pr_event("opened", 42, &["non-canary-full-sweep-enabled"], None, "vendor-dev");
    std::fs::write(&event_path, serde_json::to_vec(&event).unwrap()).unwrap();
    let outputs = dir.path().join("outputs");
    let (url, summary_path, outputs_path) = (fake.url.clone(), summary.clone(), outputs.clone());
    let output = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_sweepgate"))
            .arg("action")
            .env("GITHUB_EVENT_NAME", "pull_request_target")
            .env("GITHUB_EVENT_PATH", &event_path)
            .env("GITHUB_TOKEN", TOKEN)
            .env("GITHUB_API_URL", url)
            .env("GITHUB_STEP_SUMMARY", summary_path)
            .env("GITHUB_OUTPUT", outputs_path)
            .env_remove("SWEEPGATE_BOT_LOGIN")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let summary = std::fs::read_to_string(summary).unwrap();
    assert!(summary.starts_with("### sweepgate: pull_request_target"));
    assert!(summary.contains("posted welcome comment") && summary.contains("posted labels comment"), "{summary}");
    let outputs = std::fs::read_to_string(outputs).unwrap();
    assert_eq!(
        outputs,
        format!("decision=sweep\nverdict=none\nsummary-path={}\n", dir.path().join("summary.md").display())
    );
    let w = fake.world();
    assert_eq!(w.comments_on(REPO, 42).len(), 2);
    assert!(w.comments_on(REPO, 42).iter().all(|c| c.login == "github-actions[bot]"));
    assert_eq!(w.statuses[0].2["state"], "success");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn action_mode_writes_the_verdicts_frontier_charts_next_to_the_summary() {
    let bundle = sweepgate::evidence::read_bundle(&fixture("pareto-covered")).unwrap();
    let (repo, pr) = (support::serve_bundle::REPO, bundle.pull_request.number);
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    let upstream = FakeUpstream::start().await;
    serve_upstream(&upstream, &bundle);
    let url = serve(&fake, &bundle);
    let id: u64 = url.rsplit('-').next().unwrap().parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (event_path, summary) = (dir.path().join("event.json"), dir.path().join("summary.md"));
    let mut event = comment_event(pr, id, &bundle.signoff.author, "MEMBER", &bundle.signoff.body, None);
    event["repository"]["full_name"] = serde_json::json!(repo);
    std::fs::write(&event_path, serde_json::to_vec(&event).unwrap()).unwrap();
    let outputs = dir.path().join("outputs");
    let (fake_url, upstream_url, summary_path, outputs_path) =
        (fake.url.clone(), upstream.url.clone(), summary.clone(), outputs.clone());
    let output = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_sweepgate"))
            .arg("action")
            .args(["--upstream-github-api", &upstream_url, "--huggingface-url", &upstream_url])
            .args(["--registry", &format!("docker.io={upstream_url}")])
            .args(["--upstream-allow-host", upstream_url.trim_start_matches("http://"), "--upstream-allow-private"])
            .env("GITHUB_EVENT_NAME", "issue_comment")
            .env("GITHUB_EVENT_PATH", &event_path)
            .env("GITHUB_TOKEN", TOKEN)
            .env("GITHUB_API_URL", fake_url)
            .env("SWEEPGATE_BOT_LOGIN", BOT)
            .env("GITHUB_STEP_SUMMARY", summary_path)
            .env("GITHUB_OUTPUT", outputs_path)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let summary = std::fs::read_to_string(summary).unwrap();
    assert!(summary.contains("posted verdict comment"), "{summary}");
    assert!(std::fs::read_to_string(&outputs).unwrap().starts_with("decision=none\nverdict=APPROVED\n"));
    let name = "sweepgate-frontier-1-dsr1_8k1k_b200_sglang_fp4_40714803265_median.svg";
    assert!(summary.contains(&format!("- frontier chart `{name}` (5 points)")), "{summary}");
    let svg = std::fs::read_to_string(dir.path().join(name)).unwrap();
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\"") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("<title>dsr1/8k1k/b200_sglang/fp4/40714803265/median</title>"), "{svg}");
    assert_eq!(svg.matches("<svg").count(), 1);
    let mut written: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".svg"))
        .collect();
    written.sort();
    // One SVG per charted curve, and the performance overlay of the affected config (issue 26).
    let overlay = "sweepgate-performance-1-dsr1-fp4-b200-sglang_8k1k.svg";
    assert_eq!(written, [name, overlay], "one SVG per charted curve and one overlay per config");
    let overlay_svg = std::fs::read_to_string(dir.path().join(overlay)).unwrap();
    assert!(overlay_svg.starts_with("<svg") && overlay_svg.trim_end().ends_with("</svg>"), "{overlay_svg}");
    // The same chart the verdict comment embeds as Mermaid.
    let world = fake.world();
    let verdict = world.comments_on(repo, pr).into_iter().find(|c| c.body.contains("```mermaid")).unwrap();
    assert!(verdict.body.contains("title \"dsr1/8k1k/b200_sglang/fp4/40714803265/median\""), "{}", verdict.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn action_mode_fails_visibly_when_github_refuses() {
    let fake = FakeGitHub::start(TOKEN, "github-actions[bot]").await;
    let dir = tempfile::tempdir().unwrap();
    let event_path = dir.path().join("event.json");
    std::fs::write(&event_path, serde_json::to_vec(&pr_event("opened", 42, &[], None, "x")).unwrap()).unwrap();
    let url = fake.url.clone();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_sweepgate"))
            .arg("action")
            .env("GITHUB_EVENT_NAME", "pull_request")
            .env("GITHUB_EVENT_PATH", &event_path)
            .env("GITHUB_TOKEN", "wrong-token")
            .env("GITHUB_API_URL", url)
            .env_remove("GITHUB_STEP_SUMMARY")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("HTTP 401: Bad credentials"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_run_without_credentials_keeps_an_outbox_and_replay_signs_deliveries() {
    let dir = tempfile::tempdir().unwrap();
    let outbox = dir.path().join("state/outbox.sqlite");
    let server = ServerProcess::start(&["--outbox", outbox.to_str().unwrap()]).await;
    let event_file = dir.path().join("opened.json");
    let event = pr_event("opened", 42, &["full-sweep-enabled"], None, "vendor-dev");
    std::fs::write(&event_file, serde_json::to_vec(&event).unwrap()).unwrap();
    let replay = |secret: &'static str| {
        let (url, file) = (format!("{}/webhook", server.url), event_file.clone());
        tokio::task::spawn_blocking(move || {
            Command::new(env!("CARGO_BIN_EXE_sweepgate"))
                .args(["replay", "--event-name", "pull_request", "--secret", secret, "--url", &url, "--event"])
                .arg(file)
                .output()
                .unwrap()
        })
    };
    let bad = replay("wrong").await.unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stdout).starts_with("401 "));
    let good = replay(SECRET).await.unwrap();
    assert!(good.status.success(), "{}", String::from_utf8_lossy(&good.stdout));
    assert!(String::from_utf8_lossy(&good.stdout).starts_with("202 queued"));
    server.wait_handled(1).await;
    drop(server);
    let outbox = OutboxGitHub::open(&outbox, BOT).unwrap();
    let entries = outbox.entries().unwrap();
    let actions: Vec<&str> = entries.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(actions, ["create_comment", "create_comment", "create_status"]);
    let labels = entries[1].payload["body"].as_str().unwrap();
    assert!(labels.contains("dry-run mode has no GitHub credentials"), "{labels}");
    assert_eq!(entries[2].payload["state"], "failure");
}

fn make_fork(fake: &FakeGitHub, payload: &mut serde_json::Value) {
    let fork = serde_json::json!({"full_name": "vendor-dev/bench-repo"});
    payload["pull_request"]["head"]["repo"] = fork.clone();
    fake.world().pulls.get_mut(&(REPO.to_string(), 42)).unwrap()["head"]["repo"] = fork;
}

fn push_new_head(fake: &FakeGitHub, sha: &str) {
    let mut w = fake.world();
    let key = (REPO.to_string(), 42);
    w.pulls.get_mut(&key).unwrap()["head"]["sha"] = sha.into();
    w.commits.get_mut(&key).unwrap().push(serde_json::json!({"sha": sha, "commit": {"message": "more"}}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_label_approves_exactly_one_head_sha() {
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    fake.add_pull(REPO, 42, &head_sha(), &["full-sweep-fail-fast"], &[("perf-changelog.yaml", 3)]);
    fake.world().permissions.insert((REPO.into(), "triager".into()), "triage".into());
    fake.world().permissions.insert((REPO.into(), "maintainer".into()), "maintain".into());
    let server = ServerProcess::with_token(&fake.url).await;
    let labels_comment = || {
        let w = fake.world();
        let mine: Vec<String> =
            w.comments_on(REPO, 42).iter().filter(|c| c.login == BOT).map(|c| c.body.clone()).collect();
        assert_eq!(mine.len(), 1);
        mine[0].clone()
    };
    let last_status = || fake.world().statuses.last().unwrap().2.clone();

    let mut by_triager = pr_event("labeled", 42, &["full-sweep-fail-fast"], Some("full-sweep-fail-fast"), "triager");
    make_fork(&fake, &mut by_triager);
    server.deliver("pull_request", "fk-1", &by_triager).await;
    server.wait_handled(1).await;
    assert!(labels_comment().contains("the labeler has triage"));
    assert_eq!(last_status()["description"], "no sweep: fork-labeler-not-authorized");

    let mut by_maintainer = by_triager.clone();
    by_maintainer["sender"]["login"] = "maintainer".into();
    server.deliver("pull_request", "fk-2", &by_maintainer).await;
    server.wait_handled(2).await;
    let body = labels_comment();
    assert!(body.starts_with(&format!("<!-- sweepgate:labels pr=42 approved={} -->", head_sha())), "{body}");
    assert!(body.contains("canary no, fail-fast yes"), "no canary on the fork path: {body}");
    assert_eq!(last_status()["state"], "success");

    // A new push is not approved automatically.
    let new_sha = "d".repeat(40);
    push_new_head(&fake, &new_sha);
    let mut sync = pr_event("synchronize", 42, &["full-sweep-fail-fast"], None, "vendor-dev");
    make_fork(&fake, &mut sync);
    server.deliver("pull_request", "fk-3", &sync).await;
    server.wait_handled(3).await;
    assert!(labels_comment().contains("remove and re-add the sweep label"));
    let (_, sha, status) = fake.world().statuses.last().unwrap().clone();
    assert_eq!(
        (sha.as_str(), status["description"].as_str()),
        (new_sha.as_str(), Some("no sweep: fork-approval-stale"))
    );

    // Re-applying the label approves the new head.
    let mut again = by_maintainer.clone();
    again["pull_request"]["head"]["sha"] = new_sha.clone().into();
    server.deliver("pull_request", "fk-4", &again).await;
    server.wait_handled(4).await;
    assert!(labels_comment().starts_with(&format!("<!-- sweepgate:labels pr=42 approved={new_sha} -->")));
    assert_eq!(last_status()["state"], "success");
}

/// Statuses of `sha` as (state, description), oldest first.
fn statuses_of(fake: &FakeGitHub, sha: &str) -> Vec<(String, String)> {
    let w = fake.world();
    w.statuses
        .iter()
        .filter(|(_, s, _)| s == sha)
        .map(|(_, _, b)| (b["state"].as_str().unwrap_or("").into(), b["description"].as_str().unwrap_or("").into()))
        .collect()
}

fn labels_comment(fake: &FakeGitHub) -> String {
    let w = fake.world();
    let mine: Vec<String> = w
        .comments_on(REPO, 42)
        .iter()
        .filter(|c| c.login == BOT && c.body.starts_with("<!-- sweepgate:labels "))
        .map(|c| c.body.clone())
        .collect();
    assert_eq!(mine.len(), 1, "{mine:#?}");
    mine[0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_between_the_label_and_its_processing_is_not_approved() {
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    fake.add_pull(REPO, 42, &head_sha(), &["full-sweep-fail-fast"], &[("perf-changelog.yaml", 3)]);
    fake.world().permissions.insert((REPO.into(), "maintainer".into()), "maintain".into());
    let mut labeled = pr_event("labeled", 42, &["full-sweep-fail-fast"], Some("full-sweep-fail-fast"), "maintainer");
    make_fork(&fake, &mut labeled);
    // The maintainer reviewed head_sha() and labeled; the fork pushes before the bot reads the PR.
    let pushed = "e".repeat(40);
    push_new_head(&fake, &pushed);
    let server = ServerProcess::with_token(&fake.url).await;
    server.deliver("pull_request", "race-1", &labeled).await;
    server.wait_handled(1).await;
    let body = labels_comment(&fake);
    assert!(body.starts_with(&format!("<!-- sweepgate:labels pr=42 approved={} -->", head_sha())), "{body}");
    assert!(body.contains(&format!("re-label after reviewing `{}`", &pushed[..12])), "{body}");
    assert_eq!(statuses_of(&fake, &pushed), [("failure".into(), "no sweep: fork-approval-stale".into())]);
    assert!(fake.world().statuses.iter().all(|(_, _, s)| s["state"] != "success"), "nothing approved");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_label_body_under_a_new_delivery_id_grants_nothing() {
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    fake.add_pull(REPO, 42, &head_sha(), &["full-sweep-fail-fast"], &[("perf-changelog.yaml", 3)]);
    fake.world().permissions.insert((REPO.into(), "maintainer".into()), "maintain".into());
    let server = ServerProcess::with_token(&fake.url).await;
    let mut labeled = pr_event("labeled", 42, &["full-sweep-fail-fast"], Some("full-sweep-fail-fast"), "maintainer");
    make_fork(&fake, &mut labeled);
    server.deliver("pull_request", "rp-1", &labeled).await;
    server.wait_handled(1).await;
    assert_eq!(statuses_of(&fake, &head_sha()).last().unwrap().0, "success");

    // The fork pushes unreviewed code; a captured copy of the signed label body is replayed.
    let pushed = "f".repeat(40);
    push_new_head(&fake, &pushed);
    let (status, _) = server.deliver("pull_request", "rp-replay-1", &labeled).await;
    assert_eq!(status, 202);
    server.wait_handled(2).await;
    assert_eq!(statuses_of(&fake, &pushed), [("failure".into(), "no sweep: fork-approval-stale".into())]);
    assert!(!labels_comment(&fake).contains(&format!("approved={pushed}")));

    // After a real review and re-label of the new head, replaying the old body revokes nothing
    // and writes no status again.
    let mut relabeled = labeled.clone();
    relabeled["pull_request"]["head"]["sha"] = pushed.clone().into();
    server.deliver("pull_request", "rp-2", &relabeled).await;
    server.wait_handled(3).await;
    let approved = statuses_of(&fake, &pushed);
    assert_eq!(approved.last().unwrap().0, "success");
    server.deliver("pull_request", "rp-replay-2", &labeled).await;
    server.wait_handled(4).await;
    assert_eq!(statuses_of(&fake, &pushed), approved, "unchanged status not re-posted");
    assert!(labels_comment(&fake).starts_with(&format!("<!-- sweepgate:labels pr=42 approved={pushed} -->")));
}
