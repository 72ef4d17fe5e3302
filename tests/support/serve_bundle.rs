//! A fixture bundle served through the fake GitHub: its PR, commits, files, check-runs, sign-off
//! comment, tarballs at base and head, and one run with a result artifact (zip holding a nested
//! server-log tarball) and the fixture's benchmark artifacts, so collection can be tested against
//! the real HTTP client.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::json;
use sweepgate::evidence::Evidence;
use sweepgate::repo::{MemTree, Tree};

pub use super::fake_github::zip_of;
use super::fake_github::FakeGitHub;
use super::fake_upstream::FakeUpstream;
use super::{ServerProcess, BOT, TOKEN};

pub const REPO: &str = "example/inferencex";
pub const RUN: u64 = 40714803265;

/// `sweepgate serve` talking to `fake`, with every upstream fact (GitHub, Hugging Face, the
/// registries) from `upstream`, plus `extra` flags.
pub async fn start_verifier(fake: &FakeGitHub, upstream: &FakeUpstream, extra: &[&str]) -> ServerProcess {
    let (docker, nvcr) = (format!("docker.io={}", upstream.url), format!("nvcr.io={}", upstream.url));
    let mut args = vec!["--github-token", TOKEN, "--github-api-url", &fake.url, "--bot-login", BOT];
    args.extend(["--upstream-github-api", &upstream.url, "--huggingface-url", &upstream.url]);
    args.extend(["--registry", &docker, "--registry", &nvcr]);
    args.extend(["--upstream-allow-host", upstream.host(), "--upstream-allow-private"]);
    args.extend(extra);
    ServerProcess::start(&args).await
}

/// A bundle served whole: the fake GitHub holding its PR (with its sign-off comment) and the
/// fake upstream its upstream facts. Returns the bundle, both servers and the sign-off
/// comment's id.
pub async fn served(original: Evidence) -> (Evidence, FakeGitHub, FakeUpstream, u64) {
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    let upstream = FakeUpstream::start().await;
    serve_upstream(&upstream, &original);
    let url = serve(&fake, &original);
    let id = url.rsplit('-').next().unwrap().parse().unwrap();
    (original, fake, upstream, id)
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bundles").join(name)
}

pub fn tar_gz(top: &str, tree: &MemTree) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
    for path in tree.paths() {
        let data = tree.read(path).unwrap().unwrap();
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append_data(&mut header, format!("{top}/{path}"), data.as_slice()).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap()
}

/// Serves the upstream facts of `ev` (recipe pull requests, image digests) from the fake upstream.
pub fn serve_upstream(upstream: &FakeUpstream, ev: &Evidence) {
    for (image, fact) in &ev.upstream.image_digests {
        if let Some(digest) = fact.as_ok() {
            upstream.state().manifests.insert(image.clone(), digest.clone());
        }
    }
    for (url, fact) in &ev.upstream.pulls {
        let parsed = url.strip_prefix("https://github.com/").and_then(|r| r.split_once("/pull/"));
        let (Some(pull), Some((repo, number))) = (fact.as_ok(), parsed) else { continue };
        let Ok(number) = number.parse() else { continue };
        let merge_sha = "6f1c2a9e0b7d4c3a8e5f9b1d2c7a4e6f8b0d3c5a";
        let json = json!({"state": pull.state, "draft": pull.draft, "merged_at": pull.merged_at, "merge_commit_sha": merge_sha});
        upstream.state().pulls.insert((repo.to_owned(), number), (json, pull.files.clone()));
    }
    // Check 3's content: the PR files' text, served at any ref.
    for (url, fact) in &ev.upstream.contents {
        let repo = url.strip_prefix("https://github.com/").and_then(|r| r.split_once("/pull/")).map(|(repo, _)| repo);
        let (Some(content), Some(repo)) = (fact.as_ok(), repo) else { continue };
        for (path, text) in &content.files {
            upstream.state().contents.insert((repo.to_owned(), path.clone()), text.clone());
        }
    }
}

/// The name of the qualifying run's first eval artifact as [`serve`] serves it (id `RUN * 100`,
/// holding the nested `eval_server_logs.tar.gz`): the fixture's first eval set, or `eval_dsr1_c64`
/// (the log tarball alone) when it has none.
pub fn first_eval_artifact(ev: &Evidence) -> String {
    let prefix = format!("{RUN}/");
    ev.artifacts
        .paths()
        .filter_map(|p| p.strip_prefix(&prefix)?.split_once('/').map(|(dir, _)| dir))
        .find(|dir| dir.starts_with("eval_"))
        .unwrap_or("eval_dsr1_c64")
        .to_owned()
}

/// Puts everything of `ev` into the fake; returns the sign-off URL.
pub fn serve(fake: &FakeGitHub, ev: &Evidence) -> String {
    let pr = ev.pull_request.number;
    fake.add_pull(REPO, pr, &ev.pull_request.head_sha, &[], &[]);
    // The fixture's conversation (e.g. a maintainer's /reuse-sweep-run), then the sign-off.
    for c in &ev.comments {
        fake.add_comment(REPO, pr, &c.author, &c.author_association, &c.body);
    }
    let id = fake.add_comment(REPO, pr, &ev.signoff.author, "MEMBER", &ev.signoff.body);
    let mut w = fake.world();
    let pull = w.pulls.get_mut(&(REPO.into(), pr)).unwrap();
    pull["base"]["sha"] = json!(ev.pull_request.base_sha);
    pull["title"] = json!(ev.pull_request.title);
    pull["body"] = json!(ev.pull_request.body);
    pull["labels"] = json!(ev.pull_request.labels.iter().map(|l| json!({"name": l})).collect::<Vec<_>>());
    w.commits.insert(
        (REPO.into(), pr),
        ev.commits.iter().map(|sha| json!({"sha": sha, "commit": {"message": "m"}})).collect(),
    );
    w.files.insert(
        (REPO.into(), pr),
        ev.files
            .iter()
            .map(|f| json!({"filename": f.filename, "status": f.status, "patch": f.patch, "previous_filename": f.previous_filename}))
            .collect(),
    );
    for (sha, runs) in &ev.check_runs {
        for (i, c) in runs.as_ok().unwrap().iter().enumerate() {
            let run = json!({"id": i, "name": c.name, "head_sha": sha, "status": c.status, "conclusion": c.conclusion, "details_url": c.details_url});
            w.check_runs.push((REPO.into(), run));
        }
    }
    let top = |sha: &str| format!("example-inferencex-{}", &sha[..7]);
    w.tarballs
        .insert((REPO.into(), ev.pull_request.base_sha.clone()), tar_gz(&top(&ev.pull_request.base_sha), &ev.base));
    w.tarballs
        .insert((REPO.into(), ev.pull_request.head_sha.clone()), tar_gz(&top(&ev.pull_request.head_sha), &ev.head));
    w.permissions.insert((REPO.into(), ev.signoff.author.clone()), "write".into());
    w.teams.insert(("benchlab".into(), "core".into()), vec!["someone-else".into()]);
    drop(w);
    // The fixture's eval sets and benchmark results: one artifact per `eval_*` (results) and
    // `bmk_*` directory of the run, in that order around a server-log artifact no check reads
    // (their ids follow the list order); the first eval set also holds a nested log tarball.
    let prefix = format!("{RUN}/");
    let mut dirs: std::collections::BTreeMap<&str, Vec<(&str, &[u8])>> = std::collections::BTreeMap::new();
    for path in ev.artifacts.paths() {
        let Some((dir, file)) = path.strip_prefix(&prefix).and_then(|rest| rest.split_once('/')) else { continue };
        if let (true, Some(bytes)) = (dir.starts_with("bmk_") || dir.starts_with("eval_"), ev.artifacts.get(path)) {
            dirs.entry(dir).or_default().push((file, bytes));
        }
    }
    let first = first_eval_artifact(ev);
    dirs.entry(first.as_str()).or_default();
    let (evals, bmk): (Vec<_>, Vec<_>) = dirs.into_iter().partition(|(dir, _)| dir.starts_with("eval_"));
    let mut names: Vec<&str> = evals.iter().map(|(dir, _)| *dir).collect();
    names.push("server_logs_other");
    names.extend(bmk.iter().map(|(dir, _)| *dir));
    fake.add_run(REPO, RUN, "run-sweep.yml", "pull_request", "success", &ev.pull_request.head_sha, "b", &names);
    // The run's jobs and their logs, as GitHub lists them (the bundle's `runs[].jobs` and
    // `job-logs/<id>.log`); a job whose log the bundle lacks answers 410 like an expired log.
    if let Some(run) = ev.runs.get(&RUN) {
        let mut w = fake.world();
        let jobs = run.jobs.iter().map(|(id, job)| json!({"id": id, "name": job.name, "conclusion": job.conclusion}));
        w.jobs.insert((REPO.into(), RUN), jobs.collect());
        for id in run.jobs.keys() {
            if let Some(log) = ev.artifacts.get(&format!("{RUN}/job-logs/{id}.log")) {
                w.job_logs.insert(*id, log.to_vec());
            }
        }
    }
    let logs = {
        let mut t = MemTree::new();
        t.insert("server.log", "Uvicorn running on 0.0.0.0:8000\n");
        tar_gz("logs", &t)
    };
    for (i, (dir, files)) in evals.iter().enumerate() {
        let mut files = files.clone();
        if *dir == first {
            files.push(("eval_server_logs.tar.gz", logs.as_slice()));
        }
        fake.world().artifact_zips.insert(RUN * 100 + i as u64, zip_of(&files));
    }
    for (i, (_, files)) in bmk.iter().enumerate() {
        fake.world().artifact_zips.insert(RUN * 100 + (evals.len() + 1 + i) as u64, zip_of(files));
    }
    format!("https://github.com/{REPO}/pull/{pr}#issuecomment-{id}")
}
