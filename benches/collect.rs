//! End-to-end sign-off verification against the fake GitHub with injected latency (issue 13,
//! Performance): `cargo bench --bench collect`.
//!
//! A PR the size of the published case: the `published-rejected` fixture grown to 10 agentic
//! points and 3 evals (about 31 artifacts on its run, 3 eval jobs with logs) plus a published
//! run found through the base changelog (10 `bmk_agentic_*`). The real `sweepgate serve` gets a
//! signed sign-off webhook; the clock runs until the verdict comment exists. Every fake GitHub
//! answer waits `SWEEPGATE_BENCH_LATENCY_MS` (default 50) first, storage downloads included.
//!
//! Prints Markdown table rows (`| metric | value |`) that `scripts/bench.sh` collects.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::fake_github::FakeGitHub;
use support::fake_upstream::FakeUpstream;
use support::serve_bundle::{fixture, serve, serve_upstream, zip_of, REPO, RUN};
use support::{comment_event, ServerProcess, BOT, TOKEN};
use sweepgate::evidence::read_bundle;

const PUBLISHED: u64 = 39659301076;
const PUBLISHING_PR: u64 = 3290;
const AGENTIC_POINTS: u64 = 10;
const EVALS: u64 = 3;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// An AgentX aggregate of one point (spec 40 §2.3 shape, enough to be read as a curve point).
fn agentic_aggregate(conc: u64) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "conc": conc, "tput_per_gpu": 1000.0 + conc as f64, "p90_intvty": 100.0 - conc as f64,
        "median_intvty": 110.0 - conc as f64, "model": "dsr1", "framework": "sglang",
    }))
    .unwrap()
}

/// Adds the case's extra artifacts to `run` (after those `serve` put there) and returns how
/// many artifacts the run lists.
fn grow_run(fake: &FakeGitHub, run: u64, published: bool) -> usize {
    let mut w = fake.world();
    let list = w.artifacts.entry((REPO.into(), run)).or_default();
    let mut added: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..AGENTIC_POINTS {
        let rf = format!("dsr1_fp4_sglang_tp8-ep8_conc{}_b200", 4 << (i % 5));
        added.push((format!("bmk_agentic_{rf}_{i}"), zip_of(&[("agg.json", &agentic_aggregate(i + 1))])));
        if !published {
            added.push((format!("agentic_{rf}_{i}"), zip_of(&[("raw.log", &[b'x'; 4096][..])])));
        }
    }
    if published {
        // The published run's eval results: Check 2's ingested cohort, collected (decision W2).
        for i in 0..EVALS {
            added.push((format!("eval_published_{i}"), zip_of(&[("meta_env.json", b"{}")])));
        }
    } else {
        for i in 1..EVALS {
            added.push((format!("eval_extra_{i}"), zip_of(&[("meta_env.json", b"{}")])));
        }
        for name in ["results_bmk", "eval_results_all"] {
            added.push((name.to_string(), zip_of(&[("x.json", b"{}")])));
        }
    }
    let first = list.len() as u64;
    for (i, (name, _)) in added.iter().enumerate() {
        list.push(json!({"id": run * 100 + first + i as u64, "name": name, "expired": false}));
    }
    let total = list.len();
    for (i, (_, zip)) in added.into_iter().enumerate() {
        w.artifact_zips.insert(run * 100 + first + i as u64, zip);
    }
    total
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let latency = Duration::from_millis(env_u64("SWEEPGATE_BENCH_LATENCY_MS", 50));
    let mut original = read_bundle(&fixture("published-rejected")).unwrap();
    original.upstream.published_runs.clear();
    original.base.insert(
        "perf-changelog.yaml",
        format!(
            "- config-keys:\n  - dsr1-fp4-b200-sglang\n  description:\n  - Add the sweep\n  pr-link: https://github.com/{REPO}/pull/{PUBLISHING_PR}\n"
        ),
    );
    let (pr, head) = (original.pull_request.number, original.pull_request.head_sha.clone());
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    let upstream = FakeUpstream::start().await;
    serve_upstream(&upstream, &original);
    let url = serve(&fake, &original);
    let id: u64 = url.rsplit('-').next().unwrap().parse().unwrap();
    let artifacts = grow_run(&fake, RUN, false);

    // The published run: PR 3290 merged, its main run on the merge commit.
    let merge_sha = "4d".repeat(20);
    fake.add_pull(REPO, PUBLISHING_PR, &"5e".repeat(20), &[], &[]);
    fake.add_run(REPO, PUBLISHED, "run-sweep.yml", "push", "success", &merge_sha, "main", &[]);
    grow_run(&fake, PUBLISHED, true);
    {
        let mut w = fake.world();
        let pull = w.pulls.get_mut(&(REPO.to_string(), PUBLISHING_PR)).unwrap();
        pull["state"] = json!("closed");
        pull["merged_at"] = json!("2026-11-01T00:00:00Z");
        pull["merge_commit_sha"] = json!(merge_sha);
        let eval_jobs: Vec<_> = (0..EVALS)
            .map(|i| json!({"id": 9000 + i, "name": format!("eval / p1 | dsr1 fp4 b200 sgl TP8/EP8 c{} | eval", 4 << i), "conclusion": "success"}))
            .collect();
        w.jobs.insert((REPO.into(), RUN), eval_jobs);
        for i in 0..EVALS {
            w.job_logs.insert(9000 + i, vec![b'l'; 64 * 1024]);
        }
        for sha in [original.pull_request.base_sha.clone(), head.clone()] {
            let entries = original.head.paths().map(|p| (p.to_string(), "ab".repeat(20))).collect();
            w.git_trees.insert((REPO.into(), sha), entries);
        }
        w.latency = latency;
        w.log.clear();
        w.bytes_sent = 0;
    }

    let (docker, nvcr) = (format!("docker.io={}", upstream.url), format!("nvcr.io={}", upstream.url));
    let mut args = vec!["--github-token", TOKEN, "--github-api-url", &fake.url, "--bot-login", BOT];
    args.extend(["--upstream-github-api", &upstream.url, "--huggingface-url", &upstream.url]);
    args.extend(["--registry", &docker, "--registry", &nvcr]);
    args.extend(["--upstream-allow-host", upstream.host(), "--upstream-allow-private"]);
    let server = ServerProcess::start(&args).await;

    let mut event = comment_event(pr, id, &original.signoff.author, "MEMBER", &original.signoff.body, None);
    event["repository"]["full_name"] = json!(REPO);
    let started = Instant::now();
    let (status, _) = server.deliver("issue_comment", "bench-1", &event).await;
    assert_eq!(status, 202);
    let verdict = loop {
        let found = fake
            .world()
            .comments_on(REPO, pr)
            .into_iter()
            .find(|c| c.login == BOT && c.body.starts_with("<!-- sweepgate:verdict "))
            .map(|c| c.body.clone());
        if let Some(body) = found {
            break body;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "no verdict within 120 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let wall = started.elapsed();
    // The verdict status follows the comment: requests are counted until it is set.
    let verdict_status = || fake.world().statuses.iter().any(|(_, sha, s)| *sha == head && s["state"] != "pending");
    while !verdict_status() {
        assert!(started.elapsed() < Duration::from_secs(120), "no verdict status within 120 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let w = fake.world();
    let api = w.log.iter().filter(|l| !l.contains(" /_blobs/")).count();
    let storage = w.log.len() - api;
    let outcome = if verdict.contains("**APPROVED**") { "APPROVED" } else { "REJECTED" };
    println!("| metric | value |");
    println!("|---|---|");
    println!("| injected latency per request | {} ms |", latency.as_millis());
    println!("| artifacts listed on the PR run | {artifacts} |");
    println!("| webhook → verdict comment (wall) | {:.2} s |", wall.as_secs_f64());
    println!("| GitHub API requests (webhook to verdict status, incl. status and comment writes) | {api} |");
    println!("| storage downloads (redirect targets) | {storage} |");
    println!("| bytes sent by the fake GitHub | {} |", w.bytes_sent);
    println!("| upstream requests (registry, HF, upstream PRs) | {} |", upstream.state().log.len());
    println!("| verdict | {outcome} |");
    if std::env::var_os("SWEEPGATE_BENCH_LOG").is_some() {
        for line in &w.log {
            eprintln!("{line}");
        }
        eprintln!("| requests | route |");
        eprintln!("|---|---|");
        for (route, count) in requests_by_route(&w.log) {
            eprintln!("| {count} | {route} |");
        }
    }
}

/// Request lines grouped by route: ids, SHAs and the query string replaced by placeholders.
fn requests_by_route(log: &[String]) -> Vec<(String, usize)> {
    let mut routes = std::collections::BTreeMap::<String, usize>::new();
    for line in log {
        let path = line.split('?').next().unwrap_or(line);
        let route: Vec<String> = path
            .split('/')
            .map(|part| {
                let hex = part.len() == 40 && part.bytes().all(|b| b.is_ascii_hexdigit());
                let number = !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
                if hex {
                    "{sha}".into()
                } else if number {
                    "{n}".into()
                } else {
                    part.to_string()
                }
            })
            .collect();
        *routes.entry(route.join("/")).or_default() += 1;
    }
    let mut routes: Vec<_> = routes.into_iter().collect();
    routes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    routes
}
