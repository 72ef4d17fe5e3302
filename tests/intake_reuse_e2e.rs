//! End to end: `/use` and `/reuse-sweep-run` comments → a 👍/👎 reaction on the command and the
//! bilingual reasons in the `sweepgate/reuse` check run; no comment (InferenceX #2986, #3192).

mod support;

use support::fake_github::FakeGitHub;
use support::*;

const RUN: u64 = 40714803265;

async fn setup(labels: &[&str]) -> (FakeGitHub, ServerProcess) {
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    fake.add_pull(REPO, 42, &head_sha(), labels, &[("perf-changelog.yaml", 6)]);
    fake.add_run(
        REPO,
        RUN,
        "run-sweep.yml",
        "pull_request",
        "success",
        &head_sha(),
        "branch-42",
        &["results_bmk", "run-stats"],
    );
    let server = ServerProcess::with_token(&fake.url).await;
    (fake, server)
}

/// Posts `body` as a comment by `login` and delivers its webhook; returns the comment id.
async fn command(fake: &FakeGitHub, server: &ServerProcess, n: u64, login: &str, assoc: &str, body: &str) -> u64 {
    let id = fake.add_comment(REPO, 42, login, assoc, body);
    let (status, _) =
        server.deliver("issue_comment", &format!("c-{id}"), &comment_event(42, id, login, assoc, body, None)).await;
    assert_eq!(status, 202);
    server.wait_handled(n).await;
    id
}

/// Edits comment `id` by "m" from `previous` to `body` (stored first, as GitHub does) and
/// delivers the `edited` event; `n` events are then handled.
async fn edit(fake: &FakeGitHub, server: &ServerProcess, id: u64, (body, previous): (&str, &str), n: u64) {
    fake.world().comments.iter_mut().find(|c| c.id == id).unwrap().body = body.into();
    let event = comment_event(42, id, "m", "MEMBER", body, Some(previous));
    server.deliver("issue_comment", &format!("e-{n}"), &event).await;
    server.wait_handled(n).await;
}

fn reactions(fake: &FakeGitHub, comment: u64) -> Vec<String> {
    fake.world()
        .reactions
        .iter()
        .filter(|(c, _, who, _)| *c == comment && who == BOT)
        .map(|(_, r, ..)| r.clone())
        .collect()
}

/// The summary of the PR head's `sweepgate/reuse` check run (one, edited in place), after
/// checking that the bot posted no comment at all.
fn reuse_report(fake: &FakeGitHub) -> String {
    reuse_check(fake).1
}

/// (conclusion, summary) of the one `sweepgate/reuse` check run.
fn reuse_check(fake: &FakeGitHub) -> (String, String) {
    let w = fake.world();
    assert!(w.comments_on(REPO, 42).iter().all(|c| c.login != BOT), "no comment by the bot");
    let runs: Vec<_> = w.check_runs.iter().filter(|(_, c)| c["name"] == "sweepgate/reuse").collect();
    assert_eq!(runs.len(), 1, "one reuse check run, edited in place");
    let run = &runs[0].1;
    (run["conclusion"].as_str().unwrap().to_owned(), run["output"]["summary"].as_str().unwrap().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pinned_use_from_a_member_is_accepted() {
    // No sweep label is needed to reuse a run (#2986).
    let (fake, server) = setup(&[]).await;
    let id = command(&fake, &server, 1, "maintainer-amd", "MEMBER", "Looks good.\n\n/use 40714803265\n").await;
    assert_eq!(reactions(&fake, id), ["+1"]);
    let (conclusion, body) = reuse_check(&fake);
    assert_eq!(conclusion, "success");
    insta::assert_snapshot!("reuse_accepted", body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_run_that_failed_or_was_cancelled_is_a_partial_source() {
    let (fake, server) = setup(&[]).await;
    for (n, (run, conclusion)) in [(RUN + 1, "failure"), (RUN + 2, "cancelled")].into_iter().enumerate() {
        fake.add_run(
            REPO,
            run,
            "run-sweep.yml",
            "pull_request",
            conclusion,
            &head_sha(),
            "branch-42",
            &["results_bmk"],
        );
        let id = command(&fake, &server, n as u64 + 1, "m", "MEMBER", &format!("/use {run}")).await;
        assert_eq!(reactions(&fake, id), ["+1"], "{conclusion}");
        let body = reuse_report(&fake);
        assert!(
            body.contains(&format!(
                "Run {run} concluded `{conclusion}`: only the artifacts it has are reused, a partial source"
            )),
            "{body}"
        );
        assert!(
            body.contains(&format!("运行 {run} 的结论为 `{conclusion}`：只复用其已有的产物，作为部分来源")),
            "{body}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bare_legacy_command_picks_the_newest_successful_run_with_results() {
    let (fake, server) = setup(&["full-sweep-enabled"]).await;
    // A newer successful run without artifacts (a gated no-op) is skipped.
    fake.add_run(REPO, RUN + 10, "run-sweep.yml", "pull_request", "success", &head_sha(), "branch-42", &[]);
    fake.add_run(
        REPO,
        RUN + 20,
        "run-sweep.yml",
        "pull_request",
        "failure",
        &head_sha(),
        "branch-42",
        &["results_bmk"],
    );
    let id = command(&fake, &server, 1, "owner", "OWNER", "/reuse-sweep-run").await;
    assert_eq!(reactions(&fake, id), ["+1"]);
    let body = reuse_report(&fake);
    assert!(body.contains(&format!("[run {RUN}]")) && !body.contains("partial"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unauthorized_authors_get_a_thumbs_down_and_a_reason() {
    let (fake, server) = setup(&["full-sweep-fail-fast"]).await;
    let id = command(&fake, &server, 1, "drive-by", "CONTRIBUTOR", "/use 40714803265").await;
    assert_eq!(reactions(&fake, id), ["-1"]);
    let (conclusion, body) = reuse_check(&fake);
    assert_eq!(conclusion, "neutral", "advisory: a refusal never blocks");
    insta::assert_snapshot!("reuse_unauthorized", body);
    assert_eq!(
        fake.world().count("GET /repos/example-org/bench-repo/actions"),
        0,
        "no validation for unauthorized users"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rejection_reason_is_explained() {
    let (fake, server) = setup(&["full-sweep-fail-fast"]).await;
    command(&fake, &server, 1, "m", "COLLABORATOR", "/use 999").await;
    assert!(reuse_report(&fake).contains("Run 999 was not found in this repository."));

    fake.add_run(REPO, 777, "e2e-tests.yml", "workflow_dispatch", "success", &"c".repeat(40), "main", &["results_bmk"]);
    command(&fake, &server, 2, "m", "COLLABORATOR", "/use 777").await;
    let body = reuse_report(&fake);
    for expected in
        ["is from `.github/workflows/e2e-tests.yml`", "not a pull_request run", "is not in this PR's commit list"]
    {
        assert!(body.contains(expected), "{expected}: {body}");
    }

    fake.add_run(REPO, 778, "run-sweep.yml", "pull_request", "success", &head_sha(), "branch-42", &["server_logs_x"]);
    command(&fake, &server, 3, "m", "COLLABORATOR", "/use 778").await;
    assert!(reuse_report(&fake).contains("has no unexpired benchmark, eval, or agentic result artifact"));

    let id = command(&fake, &server, 4, "m", "COLLABORATOR", "/use abc").await;
    assert_eq!(reactions(&fake, id), ["-1"]);
    insta::assert_snapshot!("reuse_malformed", reuse_report(&fake));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evals_only_and_agentx_fast_runs_are_not_eligible() {
    for label in ["evals-only", "agentx-fast"] {
        let (fake, server) = setup(&["full-sweep-fail-fast", label]).await;
        let id = command(&fake, &server, 1, "m", "MEMBER", "/use 40714803265").await;
        assert_eq!(reactions(&fake, id), ["-1"], "{label}");
        let body = reuse_report(&fake);
        assert!(body.contains(&format!("`{label}`, which blocks artifact reuse")), "{body}");
        assert!(body.contains(&format!("本 PR 带有 `{label}`，会阻止产物复用")), "{body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_newest_authorized_command_across_both_names_wins_and_a_refusal_names_it() {
    let (fake, server) = setup(&["full-sweep-fail-fast"]).await;
    fake.add_run(REPO, RUN + 5, "run-sweep.yml", "pull_request", "success", &head_sha(), "branch-42", &["results_bmk"]);
    let first = command(&fake, &server, 1, "m", "MEMBER", "/use 40714803265").await;
    let newest = command(&fake, &server, 2, "o", "OWNER", &format!("/reuse-sweep-run {}", RUN + 5)).await;
    assert_eq!((reactions(&fake, first), reactions(&fake, newest)), (vec!["+1".to_string()], vec!["+1".to_string()]));
    // A drive-by command changes nothing; its refusal names the command in force.
    command(&fake, &server, 3, "drive-by", "CONTRIBUTOR", "/use 1").await;
    let body = reuse_report(&fake);
    let in_force = format!("In force: `/reuse-sweep-run {}` (comment {newest})", RUN + 5);
    assert!(body.contains(&in_force), "{body}");
    assert!(body.contains(&format!("当前生效：`/reuse-sweep-run {}`（评论 {newest}）", RUN + 5)), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quoted_code_and_unchanged_edits_do_nothing_while_a_changed_edit_is_revalidated() {
    let (fake, server) = setup(&["full-sweep-fail-fast"]).await;
    command(&fake, &server, 1, "m", "MEMBER", "> /use 40714803265\n\n```\n/use 40714803265\n```").await;
    assert!(fake.world().reactions.is_empty());
    assert!(fake.world().comments_on(REPO, 42).iter().all(|c| c.login != BOT));
    assert!(fake.world().check_runs.is_empty());

    let id = command(&fake, &server, 2, "m", "MEMBER", "/use 40714803265").await;
    assert_eq!(reactions(&fake, id), ["+1"]);
    let calls = fake.world().log.len();
    // Typo fixed around the command: nothing happens.
    edit(&fake, &server, id, ("/use 40714803265\nthanks!", "/use 40714803265"), 3).await;
    assert_eq!(fake.world().log.len(), calls, "no GitHub call for an edit that keeps the command");
    // The command itself edited: validated again, the reaction flips, the check run is edited.
    edit(&fake, &server, id, ("/use 5", "/use 40714803265\nthanks!"), 4).await;
    assert_eq!(reactions(&fake, id), ["-1"], "the stale 👍 is removed");
    let (conclusion, body) = reuse_check(&fake);
    assert_eq!(conclusion, "neutral");
    assert!(body.contains("Run 5 was not found") && body.contains("找不到运行 5"), "{body}");
    // Edited back: 👍 again.
    edit(&fake, &server, id, ("/use 40714803265", "/use 5"), 5).await;
    assert_eq!(reactions(&fake, id), ["+1"], "the stale 👎 is removed");
    assert_eq!(reuse_check(&fake).0, "success");
    // The command edited away: its answer is withdrawn (#3192), a human's reaction stays.
    fake.world().reactions.push((id, "heart".into(), "m".into(), 999_999));
    edit(&fake, &server, id, ("never mind", "/use 40714803265"), 6).await;
    assert!(reactions(&fake, id).is_empty(), "{:?}", fake.world().reactions);
    assert_eq!(fake.world().reactions.iter().filter(|(c, ..)| *c == id).count(), 1, "the human's ❤ stays");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_between_the_command_and_its_processing_is_not_granted() {
    let (fake, server) = setup(&["full-sweep-fail-fast"]).await;
    // The maintainer comments at TIME; 30 s later, before the bot processes the comment, a new
    // commit lands on the head (the run's commit stays in the PR, so only the timing refuses).
    let pushed = "d".repeat(40);
    {
        let mut w = fake.world();
        let pull = w.pulls.get_mut(&(REPO.into(), 42)).unwrap();
        pull["head"]["sha"] = serde_json::json!(pushed);
        pull["head"]["repo"]["pushed_at"] = serde_json::json!("2026-09-01T10:00:30Z");
        w.commits
            .get_mut(&(REPO.into(), 42))
            .unwrap()
            .push(serde_json::json!({"sha": pushed, "commit": {"message": "x"}}));
    }
    for (handled, use_cmd) in [(1, "/use 40714803265"), (2, "/reuse-sweep-run")] {
        let id = fake.add_comment(REPO, 42, "maintainer-amd", "MEMBER", use_cmd);
        let event = comment_event(42, id, "maintainer-amd", "MEMBER", use_cmd, None);
        server.deliver("issue_comment", &format!("p-{id}"), &event).await;
        server.wait_handled(handled).await;
        assert_eq!(reactions(&fake, id), ["-1"], "{use_cmd}");
        let body = reuse_report(&fake);
        assert!(body.contains(&format!("Re-post the command after reviewing `{}`", &pushed[..12])), "{body}");
        assert!(body.contains("重新发布命令"), "{body}");
    }
    // Posted again after the push (the maintainer saw the new head): granted.
    let id = fake.add_comment(REPO, 42, "maintainer-amd", "MEMBER", "/use 40714803265");
    let mut event = comment_event(42, id, "maintainer-amd", "MEMBER", "/use 40714803265", None);
    event["comment"]["created_at"] = serde_json::json!("2026-09-01T10:05:00Z");
    server.deliver("issue_comment", "p-again", &event).await;
    server.wait_handled(3).await;
    assert_eq!(reactions(&fake, id), ["+1"]);
    assert_eq!(reuse_check(&fake).0, "success");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_action_mode_the_reasons_are_in_the_job_summary() {
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    fake.add_pull(REPO, 42, &head_sha(), &[], &[("perf-changelog.yaml", 6)]);
    let body = "/use 40714803265";
    let id = fake.add_comment(REPO, 42, "drive-by", "CONTRIBUTOR", body);
    let dir = tempfile::tempdir().unwrap();
    let event_path = dir.path().join("event.json");
    let event = comment_event(42, id, "drive-by", "CONTRIBUTOR", body, None);
    std::fs::write(&event_path, serde_json::to_vec(&event).unwrap()).unwrap();
    let summary = dir.path().join("summary.md");
    let (fake_url, written) = (fake.url.clone(), summary.clone());
    let out = tokio::task::spawn_blocking(move || {
        action_command(&fake_url, &fake_url, "issue_comment", &event_path)
            .env("GITHUB_STEP_SUMMARY", &written)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.contains("👎 `/use 40714803265` from drive-by is not accepted"), "{text}");
    assert!(text.contains("👎 未接受 drive-by 的 `/use 40714803265`"), "{text}");
    assert_eq!(reactions(&fake, id), ["-1"]);
    assert!(fake.world().comments_on(REPO, 42).iter().all(|c| c.login != BOT), "no comment");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_older_than_the_comment_is_not_answered() {
    let (fake, server) = setup(&[]).await;
    // The `created` event of `/use 5` arrives after the comment was edited to the good run (and
    // before the `edited` event): the comment is read again, and only its own text is answered.
    let id = fake.add_comment(REPO, 42, "m", "MEMBER", "/use 40714803265");
    server.deliver("issue_comment", "late-1", &comment_event(42, id, "m", "MEMBER", "/use 5", None)).await;
    server.wait_handled(1).await;
    assert!(reactions(&fake, id).is_empty(), "the older text is not answered");
    assert!(fake.world().check_runs.is_empty());
    let event = comment_event(42, id, "m", "MEMBER", "/use 40714803265", Some("/use 5"));
    server.deliver("issue_comment", "late-2", &event).await;
    server.wait_handled(2).await;
    assert_eq!(reactions(&fake, id), ["+1"]);
    // A deleted comment gets no answer either.
    let gone = fake.add_comment(REPO, 42, "m", "MEMBER", "/use 40714803265");
    fake.world().comments.retain(|c| c.id != gone);
    server.deliver("issue_comment", "late-3", &comment_event(42, gone, "m", "MEMBER", "/use 40714803265", None)).await;
    server.wait_handled(3).await;
    assert!(reactions(&fake, gone).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_malformed_comment_gets_a_bounded_check_run() {
    let (fake, server) = setup(&[]).await;
    // 2,000 malformed lines, each quoted back in both languages, and a very long first line.
    let long = format!("/use {}", "x".repeat(5_000));
    let body = format!("{long}\n{}", "/use 1 2\n".repeat(2_000));
    let id = command(&fake, &server, 1, "m", "MEMBER", &body).await;
    assert_eq!(reactions(&fake, id), ["-1"]);
    let w = fake.world();
    let run = &w.check_runs.iter().find(|(_, c)| c["name"] == "sweepgate/reuse").unwrap().1;
    let (title, summary) = (run["output"]["title"].as_str().unwrap(), run["output"]["summary"].as_str().unwrap());
    assert!(title.chars().count() < 120 && title.contains('…'), "{title}");
    assert!(summary.chars().count() <= 61_000 && summary.contains("已截断"), "{}", summary.len());
}
