//! A fixture bundle served through the fake GitHub: its PR, commits, files, check-runs, sign-off
//! comment, tarballs at base and head, and one run with a result artifact (zip holding a nested
//! server-log tarball) and the fixture's benchmark artifacts, so collection can be tested against
//! the real HTTP client.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::json;
use sweepgate::evidence::Evidence;
use sweepgate::repo::{MemTree, Tree};

use super::fake_github::FakeGitHub;
use super::fake_upstream::FakeUpstream;

pub const REPO: &str = "example/inferencex";
pub const RUN: u64 = 40714803265;

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

pub fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    use std::io::Write;
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (path, data) in files {
        writer.start_file(*path, zip::write::SimpleFileOptions::default()).unwrap();
        writer.write_all(data).unwrap();
    }
    writer.finish().unwrap().into_inner()
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
    // The fixture's benchmark results: one artifact per `bmk_*` directory of the run, after the
    // two artifacts below (their ids follow the list order).
    let prefix = format!("{RUN}/");
    let mut bmk: std::collections::BTreeMap<&str, Vec<(&str, &[u8])>> = std::collections::BTreeMap::new();
    for path in ev.artifacts.paths() {
        let Some((dir, file)) = path.strip_prefix(&prefix).and_then(|rest| rest.split_once('/')) else { continue };
        if let (true, Some(bytes)) = (dir.starts_with("bmk_"), ev.artifacts.get(path)) {
            bmk.entry(dir).or_default().push((file, bytes));
        }
    }
    let mut names = vec!["eval_dsr1_c64", "server_logs_other"];
    names.extend(bmk.keys());
    fake.add_run(REPO, RUN, "run-sweep.yml", "pull_request", "success", &ev.pull_request.head_sha, "b", &names);
    for (i, files) in bmk.values().enumerate() {
        fake.world().artifact_zips.insert(RUN * 100 + 2 + i as u64, zip_of(files));
    }
    let logs = {
        let mut t = MemTree::new();
        t.insert("server.log", "Uvicorn running on 0.0.0.0:8000\n");
        tar_gz("logs", &t)
    };
    // The fixture's own eval results (meta_env.json, results_*.json), plus a nested log tarball.
    let mut files: Vec<(String, Vec<u8>)> = ev
        .artifacts
        .paths()
        .filter(|p| p.starts_with(&prefix) && p.contains("/eval_"))
        .filter_map(|p| Some((p.rsplit('/').next()?.to_owned(), ev.artifacts.get(p)?.to_vec())))
        .collect();
    files.push(("eval_server_logs.tar.gz".to_owned(), logs));
    let entries: Vec<(&str, &[u8])> = files.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect();
    let artifact = zip_of(&entries);
    fake.world().artifact_zips.insert(RUN * 100, artifact);
    format!("https://github.com/{REPO}/pull/{pr}#issuecomment-{id}")
}
