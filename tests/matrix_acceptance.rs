//! Acceptance: the real upstream revisions in `../shared/acceptance/inferencex/` (skipped when
//! absent). Exact values below were checked by hand against upstream's Python (843c625) run on
//! the same revisions, whose outputs were byte-identical to sweepgate's; the remaining checks are
//! structural invariants.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use sweepgate::matrix::canary::select_canary;
use sweepgate::matrix::MatrixOutput;

fn acceptance_dir() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("SWEEPGATE_ACCEPTANCE_DIR").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/acceptance")),
        Some(PathBuf::from("/work/shared/acceptance")),
    ];
    let found = candidates.into_iter().flatten().find(|p| p.join("inferencex/843c625").is_dir());
    if found.is_none() {
        eprintln!("acceptance data not found; skipping (set SWEEPGATE_ACCEPTANCE_DIR)");
    }
    found
}

const FILES: [&str; 4] =
    ["configs/amd-master.yaml", "configs/nvidia-master.yaml", "configs/runners.yaml", "perf-changelog.yaml"];

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn commit_revision(dir: &Path, source: &Path, extra_changelog: &str) {
    for f in FILES {
        let to = dir.join(f);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        let mut bytes = std::fs::read(source.join(f)).unwrap();
        if f == "perf-changelog.yaml" {
            bytes.extend_from_slice(extra_changelog.as_bytes());
        }
        std::fs::write(to, bytes).unwrap();
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "revision"]);
}

/// A repo with two commits: base revision, then head revision (+ optional appended text).
fn pair(root: &Path, base: &str, head: &str, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["config", "user.email", "t@example.com"]);
    git(dir.path(), &["config", "user.name", "t"]);
    commit_revision(dir.path(), &root.join("inferencex").join(base), "");
    commit_revision(dir.path(), &root.join("inferencex").join(head), extra);
    dir
}

fn sweepgate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweepgate")).args(args).output().expect("sweepgate runs")
}

fn matrix(dir: &Path, flags: &[&str]) -> MatrixOutput {
    let mut args = vec!["matrix", "--repo", dir.to_str().unwrap(), "--base", "HEAD~1", "--head", "HEAD"];
    args.extend_from_slice(flags);
    let out = sweepgate(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.ends_with("}\n") && text.matches('\n').count() == 1, "one JSON line with a final newline");
    serde_json::from_str(&text).unwrap()
}

fn len(out: &MatrixOutput, family: &str, bucket: &str) -> usize {
    let f = if family == "single" { &out.single_node } else { &out.multi_node };
    f.get(bucket).map_or(0, Vec::len)
}

fn check_invariants(out: &MatrixOutput) {
    for rows in out.single_node.values().chain(out.multi_node.values()) {
        for r in rows {
            let fp = r["recipe-fingerprint"].as_str().unwrap();
            assert!(fp.len() == 64 && fp.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
            assert_ne!(r.get("run-eval"), Some(&Value::Bool(true)), "benchmark rows never run evals");
        }
    }
    for r in out.evals.iter().chain(&out.agentic_evals).chain(&out.multinode_evals).chain(&out.multinode_agentic_evals)
    {
        assert!(!r.contains_key("recipe-fingerprint"));
        assert_eq!(r["run-eval"], Value::Bool(true));
        assert_eq!(r["eval-only"], Value::Bool(true));
    }
}

#[test]
fn last_five_aug_2026_entries() {
    let Some(root) = acceptance_dir() else { return };
    let repo = pair(&root, "de871da", "843c625", "");
    let out = matrix(repo.path(), &[]);
    check_invariants(&out);
    let links: Vec<&str> = out
        .changelog_metadata
        .entries
        .iter()
        .map(|e| e["pr-link"].as_str().unwrap().rsplit('/').next().unwrap())
        .collect();
    assert_eq!(links, ["2703", "2657", "2663", "2685", "2707"]);
    assert_eq!((len(&out, "single", "agentic"), len(&out, "multi", "agentic")), (33, 13));
    assert_eq!(
        (out.evals.len(), out.agentic_evals.len(), out.multinode_evals.len(), out.multinode_agentic_evals.len()),
        (0, 3, 0, 10)
    );
    let agg = &out.multi_node["agentic"][0];
    assert_eq!(agg["exp-name"], "glm5.2_p1x8_d0x8_conc1");
    assert_eq!(agg["recipe-fingerprint"], "4e0ac988e4f521a4edd0a81fbc0a183935f6fcb95111a7d7fe5ec5f6ad6b929a");
    assert_eq!(out.multinode_agentic_evals[0]["eval-conc"], 30);
    let (canary, _) = select_canary(&out);
    assert!(canary.is_none(), "no single-node 1k1k/8k1k rows, no canary");

    let trimmed = matrix(repo.path(), &["--trim-conc"]);
    assert_eq!((len(&trimmed, "single", "agentic"), len(&trimmed, "multi", "agentic")), (8, 13));
    let all = matrix(repo.path(), &["--all-evals"]);
    assert_eq!(
        (len(&all, "single", "agentic"), all.agentic_evals.len(), all.multinode_agentic_evals.len()),
        (33, 33, 12)
    );
    let only = matrix(repo.path(), &["--evals-only"]);
    assert!(only.single_node.is_empty() && only.multi_node.is_empty());
    assert_eq!((only.agentic_evals.len(), only.multinode_agentic_evals.len()), (3, 10));
    let both = matrix(repo.path(), &["--evals-only", "--all-evals"]);
    assert_eq!((both.agentic_evals.len(), both.multinode_agentic_evals.len()), (33, 12));
}

#[test]
fn real_append_only_entry() {
    let Some(root) = acceptance_dir() else { return };
    let repo = pair(&root, "6816ed0", "43996b8", "");
    let out = matrix(repo.path(), &[]);
    check_invariants(&out);
    let rows = &out.single_node["agentic"];
    let points: Vec<(i64, i64)> =
        rows.iter().map(|r| (r["tp"].as_i64().unwrap(), r["conc"].as_i64().unwrap())).collect();
    assert_eq!(points, [(4, 1), (4, 2), (4, 4), (4, 6)]);
    assert!(rows.iter().all(|r| r["image"] == rows[0]["image"] && r["model-prefix"] == "dsv4"));
    assert!(out.agentic_evals.is_empty());
}

#[test]
fn wildcard_entry_over_every_config() {
    let Some(root) = acceptance_dir() else { return };
    let entry = "\n- config-keys:\n    - \"*\"\n  description:\n    - \"all\"\n  pr-link: XXX\n";
    let repo = pair(&root, "843c625", "843c625", entry);
    let out = matrix(repo.path(), &[]);
    check_invariants(&out);
    let bench: usize = out.single_node.values().chain(out.multi_node.values()).map(Vec::len).sum();
    let evals =
        out.evals.len() + out.agentic_evals.len() + out.multinode_evals.len() + out.multinode_agentic_evals.len();
    assert_eq!((bench, evals), (1820, 645), "spec 20 §11: 1,820 throughput + 645 eval rows");
    let (canary, remaining) = select_canary(&out);
    let canary = canary.unwrap();
    let bucket = |b: &str| out.single_node.get(b).map_or(&[][..], Vec::as_slice);
    let min = bucket("1k1k").iter().chain(bucket("8k1k")).filter_map(|r| r["conc"].as_i64()).min();
    assert_eq!(canary["conc"].as_i64(), min);
    let before = bucket("1k1k").len() + bucket("8k1k").len();
    assert_eq!(remaining.single_node["1k1k"].len() + remaining.single_node["8k1k"].len(), before - 1);
}

#[test]
fn full_sweep_composition() {
    let Some(root) = acceptance_dir() else { return };
    let dir = root.join("inferencex/843c625");
    let out = sweepgate(&["generate", "full-sweep", "--repo", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<serde_json::Map<String, Value>> = serde_json::from_slice(&out.stdout).unwrap();
    let count = |f: &dyn Fn(&serde_json::Map<String, Value>) -> bool| rows.iter().filter(|r| f(r)).count();
    let agentic = |r: &serde_json::Map<String, Value>| r.contains_key("scenario-type");
    let eval = |r: &serde_json::Map<String, Value>| r["run-eval"] == Value::Bool(true);
    assert_eq!(rows.len(), 1820);
    assert_eq!(count(&|r| !agentic(r) && r.contains_key("tp") && !eval(r)), 488);
    assert_eq!(count(&|r| !agentic(r) && r.contains_key("tp") && eval(r)), 202);
    assert_eq!(count(&|r| agentic(r) && r.contains_key("tp")), 482);
    assert_eq!(count(&|r| !agentic(r) && r.contains_key("prefill") && !eval(r)), 67);
    assert_eq!(count(&|r| !agentic(r) && r.contains_key("prefill") && eval(r)), 317);
    assert_eq!(count(&|r| agentic(r) && r.contains_key("prefill")), 264);
}

#[test]
fn strict_rules_reject_the_real_main_history_ci_accepts_it() {
    let Some(root) = acceptance_dir() else { return };
    let repo = pair(&root, "de871da", "843c625", "");
    let r = repo.path().to_str().unwrap();
    let lax = sweepgate(&["validate-changelog", "--repo", r, "--base", "HEAD~1", "--head", "HEAD"]);
    assert!(lax.status.success());
    let strict = sweepgate(&["validate-changelog", "--repo", r, "--base", "HEAD~1", "--head", "HEAD", "--strict"]);
    assert_eq!(strict.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&strict.stderr),
        "ERROR: appended changelog entries must have exactly one empty separator line\n"
    );
}

#[test]
fn lint_accepts_every_revision() {
    let Some(root) = acceptance_dir() else { return };
    for rev in ["843c625", "de871da", "6816ed0", "43996b8"] {
        let out = sweepgate(&["lint", "--repo", root.join("inferencex").join(rev).to_str().unwrap()]);
        assert!(out.status.success(), "{rev}: {}", String::from_utf8_lossy(&out.stdout));
        let summary = String::from_utf8_lossy(&out.stderr);
        assert!(summary.contains(" 0 error(s)") && summary.contains("master_configs=2"), "{rev}: {summary}");
    }
}

/// `canary-select` of upstream's `run-sweep.yml` as spec 10 §5.1 describes it, in jq (the tool
/// the workflow runs): candidates are single-node 1k1k then 8k1k rows without `run-eval`, and
/// jq's `min_by` keeps the first of equal minima.
const CANARY_SELECT_JQ: &str = r#"[(.single_node["1k1k"] // [])[], (.single_node["8k1k"] // [])[] | select(.["run-eval"] != true)] | if length == 0 then null else min_by(.conc) end"#;

fn jq(filter: &str, input: &[u8]) -> Option<Value> {
    use std::io::Write;
    let mut child = Command::new("jq")
        .args(["-c", filter])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "jq failed");
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn plan_picks_the_canary_upstreams_canary_select_picks() {
    let Some(root) = acceptance_dir() else { return };
    let entry = "\n- config-keys:\n    - \"*\"\n  description:\n    - \"all\"\n  pr-link: XXX\n";
    let repo = pair(&root, "843c625", "843c625", entry);
    let r = repo.path().to_str().unwrap();
    let matrix_json = sweepgate(&["matrix", "--repo", r, "--base", "HEAD~1", "--head", "HEAD"]).stdout;
    let plan = |labels: &str| -> Value {
        let out = sweepgate(&[
            "plan", "--repo", r, "--base", "HEAD~1", "--head", "HEAD", "--labels", labels, "--format", "json",
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let fail_fast = plan("full-sweep-fail-fast");
    let canary = &fail_fast["canary"];
    assert!(canary.is_object());
    match jq(CANARY_SELECT_JQ, &matrix_json) {
        Some(upstream) => assert_eq!(canary, &upstream, "the canary upstream's jq picks"),
        None => eprintln!("jq not installed; the canary was compared with select_canary only"),
    }
    let (expected, _) = select_canary(&serde_json::from_slice(&matrix_json).unwrap());
    assert_eq!(canary, &Value::Object(expected.unwrap()));
    let families = fail_fast["families"].as_array().unwrap();
    assert!(families.iter().all(|f| f["fail_fast"] == Value::Bool(true)));
    let rows: usize = families.iter().map(|f| f["rows"].as_array().unwrap().len()).sum();
    assert_eq!(rows + 1, 1820 + 645, "every matrix row runs once, the canary included");
    assert_eq!(fail_fast["points"], 1820 + 645);

    let non_canary = plan("non-canary-full-sweep-enabled");
    assert!(non_canary["canary"].is_null());
    assert!(non_canary["families"].as_array().unwrap().iter().all(|f| f["fail_fast"] == Value::Bool(false)));
    let refused = plan("full-sweep-enabled,non-canary-full-sweep-enabled");
    assert_eq!((refused["sweep"].clone(), refused["families"].as_array().unwrap().len()), (Value::Bool(false), 0));
}
