//! End-to-end: `sweepgate plan` on the fixture repository, in its three formats.

mod support;

use std::process::{Command, Output};

use serde_json::Value;
use support::fixture_repo::fixture_git_repo;
use sweepgate::matrix::canary::select_canary;
use sweepgate::matrix::MatrixOutput;
use sweepgate::sweep::plan_input::Plan;

const POOLS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/pools");

/// `sweepgate ARGS --repo REPO --base HEAD~1 --head HEAD`.
fn sweepgate(repo: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(args)
        .args(["--repo", repo.to_str().unwrap(), "--base", "HEAD~1", "--head", "HEAD"])
        .output()
        .expect("sweepgate runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn text_plan_lists_the_canary_and_families_in_upstream_order() {
    let repo = tempfile::tempdir().unwrap();
    fixture_git_repo(repo.path());
    let out = sweepgate(repo.path(), &["plan", "--labels", "full-sweep-fail-fast,agentx-fast"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    insta::assert_snapshot!(text(&out.stdout));
}

#[test]
fn json_plan_runs_every_matrix_row_once_with_the_canary_upstream_picks() {
    let repo = tempfile::tempdir().unwrap();
    fixture_git_repo(repo.path());
    let matrix: MatrixOutput = serde_json::from_slice(&sweepgate(repo.path(), &["matrix"]).stdout).unwrap();
    let out = sweepgate(repo.path(), &["plan", "--labels", "full-sweep-enabled", "--format", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (canary, _) = select_canary(&matrix);
    assert_eq!(plan["canary"], Value::Object(canary.unwrap()));
    let families = plan["families"].as_array().unwrap();
    assert!(families.iter().all(|f| f["fail_fast"] == false));
    let planned: usize = families.iter().map(|f| f["rows"].as_array().unwrap().len()).sum();
    assert_eq!(planned + 1, matrix.all_rows().count());
    assert_eq!(plan["points"], matrix.all_rows().count());
    assert_eq!(plan["decision"]["primary"], "full-sweep-enabled");

    let refused = sweepgate(repo.path(), &["plan", "--labels", "all-evals", "--format", "json"]);
    let refused: Value = serde_json::from_slice(&refused.stdout).unwrap();
    assert_eq!(
        (&refused["sweep"], &refused["canary"], refused["points"].as_u64()),
        (&Value::Bool(false), &Value::Null, Some(0))
    );
    assert!(refused["decision"]["reasons"].as_array().unwrap().iter().any(|r| r["code"] == "modifier-without-primary"));
}

#[test]
fn no_changelog_entry_means_no_sweep() {
    let repo = tempfile::tempdir().unwrap();
    fixture_git_repo(repo.path());
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(["plan", "--repo", repo.path().to_str().unwrap(), "--base", "HEAD", "--head", "HEAD"])
        .args(["--labels", "full-sweep-fail-fast", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["sweep"], false);
    assert!(plan["decision"]["reasons"].as_array().unwrap().iter().any(|r| r["code"] == "no-changelog-append"));
}

#[test]
fn dispatch_plan_selects_recipe_variants_and_skips_other_pools_rows() {
    let repo = tempfile::tempdir().unwrap();
    fixture_git_repo(repo.path());
    let pool = format!("{POOLS}/gb200-nv.toml");
    let dispatch = |pool: &str| -> Output {
        let args = ["plan", "--labels", "full-sweep-fail-fast", "--format", "dispatch", "--pool", pool];
        sweepgate(
            repo.path(),
            &[&args[..], &["--launcher", "launch.sh", "--github-repo", "o/r", "--pr-number", "7"]].concat(),
        )
    };
    let out = dispatch(&pool);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.lines().all(|l| l.starts_with("skipped (runner ")), "{stderr}");
    assert!(stderr.contains("skipped (runner b200 is another pool's): canary dsr1_8k1k"), "{stderr}");
    let plan = Plan::parse(&out.stdout, "stdout").unwrap_or_else(|e| panic!("{e}"));
    assert!(plan.sweep_id.starts_with("pr7-") && plan.canary.is_none());
    let points: Vec<_> = plan.placed_points();
    assert_eq!(points.len(), 7);
    for p in &points {
        let recipe = p.point.job.recipe.as_ref().unwrap_or_else(|| panic!("{} has no recipe", p.point.id));
        assert_eq!(p.point.job.env["CONFIG_FILE"], recipe.config_file);
        assert!(!recipe.selector.is_empty() && recipe.sha256.len() == 64);
        assert_eq!(p.point.job.gpus, 4);
        assert!(p.fail_fast);
    }

    let missing = sweepgate(repo.path(), &["plan", "--labels", "full-sweep-fail-fast", "--format", "dispatch"]);
    assert_eq!(missing.status.code(), Some(2), "clap refuses the missing flags");
    let none = dispatch(&format!("{POOLS}/local.toml"));
    assert_eq!(none.status.code(), Some(1));
    assert!(text(&none.stderr).contains("pool local serves none of the sweep's runners"), "{}", text(&none.stderr));
}

/// Issue 24 item 2: a head file whose name holds a newline split one `git cat-file --batch`
/// request in two, so `plan --format dispatch` validated (and recorded the sha256 of) another
/// blob. The name below asks for the real recipe, then for another blob (by id: a `:` would read
/// as a recipe selector): the plan must judge the file's own bytes.
#[test]
fn a_newline_in_a_recipe_name_cannot_make_the_plan_validate_another_blob() {
    use sha2::{Digest, Sha256};
    const DIR: &str = "benchmarks/multi_node/srt-slurm-recipes/trtllm/demo";
    let plan_with = |content: &[u8]| -> (Output, String) {
        let repo = tempfile::tempdir().unwrap();
        let d = repo.path();
        fixture_git_repo(d);
        let rev = ["rev-parse", "HEAD~1:configs/nvidia-master.yaml"];
        let other = String::from_utf8(Command::new("git").arg("-C").arg(d).args(rev).output().unwrap().stdout).unwrap();
        let evil = format!("{DIR}/zip-ctx-gen.yaml\n{}", other.trim());
        std::fs::create_dir_all(d.join(&evil).parent().unwrap()).unwrap();
        std::fs::write(d.join(&evil), content).unwrap();
        let master = std::fs::read_to_string(d.join("configs/nvidia-master.yaml")).unwrap();
        let written = format!("\"CONFIG_FILE=recipes/trtllm/demo/zip-ctx-gen.yaml\\n{}\"", other.trim());
        let changed = master.replace("\"CONFIG_FILE=recipes/trtllm/demo/zip-ctx-gen.yaml\"", &written);
        assert_ne!(changed, master);
        std::fs::write(d.join("configs/nvidia-master.yaml"), changed).unwrap();
        support::fixture_repo::git(d, &["add", "-A"]);
        support::fixture_repo::git(d, &["commit", "-q", "--amend", "--no-edit"]);
        let args = ["plan", "--labels", "full-sweep-fail-fast", "--format", "dispatch", "--pool"];
        let pool = format!("{POOLS}/gb200-nv.toml");
        let rest = ["--launcher", "launch.sh", "--github-repo", "o/r", "--pr-number", "7"];
        (sweepgate(d, &[&args[..], &[pool.as_str()], &rest[..]].concat()), evil)
    };

    // A valid recipe of its own: the plan records the sha256 of exactly these bytes.
    let real = std::fs::read(format!("{}/fixtures/repo/{DIR}/zip-ctx-gen.yaml", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let own = [&real[..], b"# the newline-named file's own bytes\n"].concat();
    let (out, evil) = plan_with(&own);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plan = Plan::parse(&out.stdout, "stdout").unwrap_or_else(|e| panic!("{e}"));
    let recipes: Vec<_> = plan.placed_points().iter().filter_map(|p| p.point.job.recipe.clone()).collect();
    let evil_recipes: Vec<_> = recipes.iter().filter(|r| r.config_file.contains('\n')).collect();
    assert!(!evil_recipes.is_empty(), "{recipes:?}");
    for r in evil_recipes {
        assert_eq!(r.sha256, hex::encode(Sha256::digest(&own)), "{evil:?}");
    }

    // Bytes that are no recipe: refused, where the desynchronised read validated the real one.
    let (out, _) = plan_with(b"this: is not a recipe\n");
    assert!(!out.status.success(), "{}", text(&out.stdout));
}
