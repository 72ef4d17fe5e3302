//! End-to-end: `sweepgate matrix`, `generate` and `validate-changelog` on temporary git
//! repositories built from the fixture repo. The snapshots were checked byte for byte against
//! upstream's `process_changelog.py` / `generate_sweep_configs.py` (843c625) run on the same
//! fixture repository.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod support;

use support::fixture_repo::{fixture_git_repo, git};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/repo");

fn write(dir: &Path, path: &str, text: &str) {
    let full = dir.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, text).unwrap();
}

fn fixture(path: &str) -> String {
    std::fs::read_to_string(Path::new(FIXTURE).join(path)).unwrap()
}

/// The fixture repository: HEAD~1 lacks the last four changelog entries, HEAD has them.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fixture_git_repo(dir.path());
    dir
}

fn commit(d: &Path, message: &str) {
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", message]);
}

fn sweepgate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweepgate")).args(args).output().expect("sweepgate runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn repo_arg(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().to_path_buf()
}

#[test]
fn matrix_matches_upstream_on_the_fixture() {
    let dir = repo();
    let r = repo_arg(&dir);
    let out = sweepgate(&["matrix", "--repo", r.to_str().unwrap(), "--base", "HEAD~1", "--head", "HEAD"]);
    assert!(out.status.success(), "{}", stderr(&out));
    insta::assert_snapshot!("matrix_default", stdout(&out));
    let out = sweepgate(&[
        "matrix",
        "--repo",
        r.to_str().unwrap(),
        "--base",
        "HEAD~1",
        "--head",
        "HEAD",
        "--trim-conc",
        "--all-evals",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    insta::assert_snapshot!("matrix_trim_all_evals", stdout(&out));
}

#[test]
fn generate_full_sweep_matches_upstream_on_the_fixture() {
    let out = sweepgate(&["generate", "full-sweep", "--repo", FIXTURE]);
    assert!(out.status.success(), "{}", stderr(&out));
    insta::assert_snapshot!("generate_full_sweep", stdout(&out));
}

#[test]
fn generate_test_config_options_and_usage_errors() {
    let out = sweepgate(&[
        "generate",
        "test-config",
        "--repo",
        FIXTURE,
        "--config-keys",
        "dsr1-fp4-b200-*",
        "--conc",
        "8",
        "--seq-lens",
        "8k1k",
        "--no-evals",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let concs: Vec<i64> = rows.as_array().unwrap().iter().map(|r| r["conc"].as_i64().unwrap()).collect();
    assert_eq!(concs, [8, 8, 8]);
    let out =
        sweepgate(&["generate", "test-config", "--repo", FIXTURE, "--config-keys", "x", "--no-evals", "--all-evals"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--all-evals cannot be combined with --no-evals"));
    let out = sweepgate(&["generate", "test-config", "--repo", FIXTURE, "--config-keys", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("Config key(s) not found: nope."), "{}", stderr(&out));
    let out = sweepgate(&["generate", "full-sweep", "--repo", FIXTURE, "--step-size", "1"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn validate_changelog_passes_and_strict_mode_is_stricter() {
    let dir = repo();
    let r = repo_arg(&dir);
    let r = r.to_str().unwrap();
    let out = sweepgate(&["validate-changelog", "--repo", r, "--base", "HEAD~1", "--head", "HEAD", "--strict"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Validated perf-changelog.yaml: final newline present and matrix generated\n");
    // A PR placeholder link is fine on a PR, not on main.
    let text = fixture("perf-changelog.yaml");
    let appended =
        format!("{text}\n- config-keys:\n    - dsr1-fp4-b200-trt\n  description:\n    - \"x\"\n  pr-link: XXX\n");
    write(dir.path(), "perf-changelog.yaml", &appended);
    commit(dir.path(), "placeholder");
    let ok =
        sweepgate(&["validate-changelog", "--repo", r, "--base", "HEAD~1", "--head", "HEAD", "--strict", "--pr", "9"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let main = sweepgate(&["validate-changelog", "--repo", r, "--base", "HEAD~1", "--head", "HEAD", "--strict"]);
    assert_eq!(main.status.code(), Some(1));
    assert_eq!(stderr(&main), "ERROR: new main-branch entry has invalid pr-link: 'XXX'\n");
    // Two empty separator lines: CI accepts (warning), the strict path rejects.
    write(
        dir.path(),
        "perf-changelog.yaml",
        &appended.replacen(
            "\n\n- config-keys:\n    - dsr1-fp4-b200-trt\n  description:\n    - \"x\"",
            "\n\n\n- config-keys:\n    - dsr1-fp4-b200-trt\n  description:\n    - \"x\"",
            1,
        ),
    );
    commit(dir.path(), "two separators");
    let lax = sweepgate(&["validate-changelog", "--repo", r, "--base", "HEAD~2", "--head", "HEAD"]);
    assert!(lax.status.success(), "{}", stderr(&lax));
    assert!(
        stderr(&lax).starts_with("warning: the merge path's strict changelog rules would reject this change:"),
        "{}",
        stderr(&lax)
    );
}

#[test]
fn gate_failures_are_reported_with_exit_1() {
    let dir = repo();
    let r = repo_arg(&dir);
    let r = r.to_str().unwrap();
    // Rewriting history is a deletion in the two-dot diff.
    let text = fixture("perf-changelog.yaml").replace("pull/101", "pull/1010");
    write(dir.path(), "perf-changelog.yaml", &text);
    commit(dir.path(), "rewrite");
    let out = sweepgate(&["matrix", "--repo", r, "--base", "HEAD~1", "--head", "HEAD"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: Deletions are not allowed in perf-changelog.yaml. Only additions to the changelog are permitted. Found deleted line:   pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/101\n"
    );
    let out = sweepgate(&["validate-changelog", "--repo", r, "--base", "HEAD~1", "--head", "HEAD"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).starts_with("ERROR: the matrix processor rejected the diff:\nDeletions are not allowed"));
    // No final newline.
    write(dir.path(), "perf-changelog.yaml", text.trim_end());
    commit(dir.path(), "no newline");
    let out = sweepgate(&["validate-changelog", "--repo", r, "--base", "HEAD~1", "--head", "HEAD"]);
    assert_eq!(stderr(&out), "ERROR: perf-changelog.yaml at HEAD does not end with a newline\n");
    // Bad refs get a clean error instead of "No additions found".
    let out = sweepgate(&["matrix", "--repo", r, "--base", "nope", "--head", "HEAD"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("'nope' is not a commit"), "{}", stderr(&out));
    // No change at all.
    let out = sweepgate(&["matrix", "--repo", r, "--base", "HEAD", "--head", "HEAD"]);
    assert_eq!(stderr(&out), "error: No additions found in the changelog file.\n");
}

#[test]
fn lint_accepts_the_fixture_repo() {
    let out = sweepgate(&["lint", "--repo", FIXTURE]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    for count in ["changelog_entries=9", "master_configs=8", "runner_labels=6"] {
        assert!(stderr(&out).contains(count), "{count}: {}", stderr(&out));
    }
}
