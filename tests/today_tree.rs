//! sweepgate on the benchmark repository as its users have it today (issue 36): the
//! `inferencex-e2e/` tree of Oct 2026 (`../shared/acceptance/inferencex-2026-11/`, plain files
//! rebuilt from stored public copies; a git copy is made where a commit is needed). Its
//! `MISSING.txt` lists each referenced file the copy lacks: a gap of the copy, not an upstream
//! defect. The tree itself is never edited.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use sweepgate::diag::Severity;
use sweepgate::domain::launch::{Class, LaunchTree, LAUNCH_DIRS};
use sweepgate::matrix::generate::{self, TestConfigOptions};
use sweepgate::matrix::inputs;
use sweepgate::repo::{GitTree, Layout, MemTree};

/// The 2026-11 tree, or `None` when `SWEEPGATE_SKIP_CORPUS=1` skips it on purpose.
fn today_dir() -> Option<PathBuf> {
    if std::env::var_os("SWEEPGATE_SKIP_CORPUS").is_some_and(|v| v == "1") {
        eprintln!("SWEEPGATE_SKIP_CORPUS=1: the 2026-11 tree is skipped");
        return None;
    }
    let candidates = [
        std::env::var_os("SWEEPGATE_ACCEPTANCE_DIR").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/acceptance")),
        Some(PathBuf::from("/work/shared/acceptance")),
    ];
    let found = candidates.into_iter().flatten().map(|d| d.join("inferencex-2026-11")).find(|p| p.is_dir());
    assert!(found.is_some(), "../shared/acceptance/inferencex-2026-11 is missing (SWEEPGATE_SKIP_CORPUS=1 skips it)");
    found
}

/// A git copy of the tree (one commit), so it is read as a revision like a real repository.
fn git_copy(dir: &Path, into: &Path) -> GitTree {
    let copy = Command::new("cp").arg("-a").arg(format!("{}/.", dir.display())).arg(into).status().unwrap();
    assert!(copy.success());
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "inferencex-2026-11"],
    ] {
        let out = Command::new("git").args(args).current_dir(into).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    GitTree::open(into, "HEAD").unwrap()
}

/// `MISSING.txt`: each referenced path the copy lacks → the configs that reference it.
fn missing(dir: &Path) -> BTreeMap<String, Vec<String>> {
    let text = std::fs::read_to_string(dir.join("MISSING.txt")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let mut cols = l.split('\t');
            let path = cols.next()?.trim().to_owned();
            let configs = cols.nth(1).unwrap_or("-");
            Some((path, configs.split(',').map(|c| c.trim().to_owned()).filter(|c| c != "-").collect()))
        })
        .collect()
}

/// Launchers of clusters the copy holds no `runners/launch_*.sh` for: the README lists the five
/// it has (b200-nscale-slurm, b300-dsxe, gb200-nv, gb300-nv, mi300x-amd) as complete files and
/// MISSING.txt does not list the others, so they are gaps of the copy.
const LAUNCHERS_IN_COPY: [&str; 5] = ["b200-nscale-slurm", "b300-dsxe", "gb200-nv", "gb300-nv", "mi300x-amd"];

#[test]
fn lint_reads_the_2026_11_tree_with_no_error() {
    let Some(dir) = today_dir() else { return };
    let work = tempfile::tempdir().unwrap();
    let git = git_copy(&dir, work.path());
    let report = sweepgate::lint::lint(&git, &Layout::default()).unwrap();
    let errors: Vec<String> =
        report.diagnostics.iter().filter(|d| d.severity == Severity::Error).map(|d| d.to_string()).collect();
    let warnings: Vec<String> =
        report.diagnostics.iter().filter(|d| d.severity == Severity::Warning).map(|d| d.to_string()).collect();
    for w in &warnings {
        println!("{w}");
    }
    assert!(errors.is_empty(), "{} errors:\n{}", errors.len(), errors.join("\n"));
    assert_eq!(report.counts.get("master_configs"), Some(&216), "{:?}", report.counts);
    assert_eq!(report.counts.get("runner_clusters"), Some(&13), "{:?}", report.counts);
    // 56 single-node recipes and 9 multi-node ones.
    assert_eq!(report.counts.get("srt_recipes"), Some(&65), "{:?}", report.counts);
}

#[test]
fn generate_gives_the_rows_of_every_config() {
    let Some(dir) = today_dir() else { return };
    let work = tempfile::tempdir().unwrap();
    let git = git_copy(&dir, work.path());
    let (inputs, invalid) = inputs::read_each(&git, &Layout::default()).unwrap();
    assert!(invalid.is_empty(), "{invalid:#?}");
    assert_eq!(inputs.configs.len(), 216);
    let all = generate::full_sweep(&inputs.configs, &inputs.runners, &Default::default(), &Default::default())
        .unwrap_or_else(|e| panic!("full-sweep: {e}"));
    let mut empty = Vec::new();
    let mut rows = 0;
    for key in inputs.configs.keys() {
        let options = TestConfigOptions { config_keys: vec![key.to_owned()], ..Default::default() };
        match generate::test_config(&inputs.configs, &inputs.runners, &options, &Default::default()) {
            Ok(r) if r.is_empty() => empty.push(key.to_owned()),
            Ok(r) => rows += r.len(),
            Err(e) => empty.push(format!("{key}: {e}")),
        }
    }
    assert!(empty.is_empty(), "configs without rows:\n{}", empty.join("\n"));
    println!("full-sweep: {} rows; test-config per key: {rows} rows", all.len());
    assert!(!all.is_empty());
    // Aggregated multinode rows carry their worker and node count.
    let aggregated = all.iter().filter(|r| r.get("worker").is_some() && r.get("num-nodes").is_some()).count();
    assert!(aggregated > 0, "the num-nodes entries give rows");
}

#[test]
fn one_unreadable_entry_is_named_and_the_others_give_rows() {
    let Some(dir) = today_dir() else { return };
    let work = tempfile::tempdir().unwrap();
    let git = git_copy(&dir, work.path());
    let mut tree = MemTree::new();
    tree.copy_from(&git, "inferencex-e2e/configs").unwrap();
    let amd = "inferencex-e2e/configs/amd-master.yaml";
    let text = tree.text(amd).unwrap().replacen("  precision: fp4\n", "  precision: [fp4]\n", 1);
    let tree = tree.with(amd, text);
    let (inputs, invalid) = inputs::read_each(&tree, &Layout::default()).unwrap();
    assert_eq!(invalid.len(), 1, "{invalid:#?}");
    let named = invalid[0].to_string();
    assert!(named.contains("dsr1-fp4-mi355x-sglang") && named.contains("precision"), "{named}");
    assert_eq!(inputs.configs.len(), 215);
    let rows =
        generate::full_sweep(&inputs.configs, &inputs.runners, &Default::default(), &Default::default()).unwrap();
    assert!(!rows.is_empty());
}

/// Configs whose recipes the copy holds, yet whose settings sweepgate cannot read, with why.
const NO_ENGINE_SETTING: &[(&str, &str)] = &[];

#[test]
fn launch_resolves_every_config_of_the_2026_11_tree() {
    let Some(dir) = today_dir() else { return };
    let work = tempfile::tempdir().unwrap();
    let git = git_copy(&dir, work.path());
    let mut tree = MemTree::new();
    for d in LAUNCH_DIRS {
        tree.copy_from(&git, d).unwrap();
    }
    let missing = missing(&dir);
    let model = LaunchTree::new(&tree).all(&[]);
    assert_eq!(model.len(), 216);

    let mut problems = Vec::new();
    let mut gaps: BTreeSet<String> = BTreeSet::new();
    for c in &model {
        if c.runners.is_empty() || c.clusters.is_empty() {
            problems.push(format!(
                "{}: no runner or cluster ({:?} {:?}) {:?}",
                c.config, c.runners, c.clusters, c.unresolved
            ));
        }
        for runner in &c.runners {
            let launcher = format!("inferencex-e2e/runners/launch_{runner}.sh");
            let has_job = c.jobs.iter().any(|j| j.launcher.as_deref() == Some(launcher.as_str()));
            if LAUNCHERS_IN_COPY.contains(&runner.as_str()) != has_job {
                problems.push(format!("{}: launcher {launcher} in the copy: {}, job: {has_job}", c.config, !has_job));
            }
            if !LAUNCHERS_IN_COPY.contains(&runner.as_str()) {
                gaps.insert(launcher);
            }
        }
        for r in c.recipes.iter().filter(|r| !r.exists && r.external.is_none()) {
            if !missing.contains_key(&r.path) {
                problems.push(format!("{}: {} is missing but not in MISSING.txt", c.config, r.path));
            }
            if !c.unresolved.iter().any(|u| u.why == "missing" && u.what == r.path) {
                problems.push(format!("{}: missing {} is not in unresolved", c.config, r.path));
            }
        }
        let present = c.recipes.iter().any(|r| r.exists);
        let engine = c.settings.iter().any(|s| s.class == Class::Engine);
        let listed = NO_ENGINE_SETTING.iter().any(|(k, _)| *k == c.config);
        if present && !engine && !listed {
            problems.push(format!(
                "{}: its recipe is in the copy but it has no engine setting: {:?}",
                c.config, c.unresolved
            ));
        }
        if listed && (!present || engine) {
            problems.push(format!("{}: listed in NO_ENGINE_SETTING, remove it", c.config));
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));

    // The chain: runner mi300x → label and cluster mi300x-amd → its launcher → the
    // native single-node run on the mi300x-amd pool profile.
    let dsr1 = model.iter().find(|c| c.config == "dsr1-fp8-mi300x-sglang").unwrap();
    assert_eq!(dsr1.runners, ["mi300x-amd"]);
    assert_eq!(dsr1.clusters, ["mi300x-amd"]);
    let native: Vec<_> = dsr1.jobs.iter().filter_map(|j| j.native.as_deref()).collect();
    assert_eq!(native, ["mi300x-amd"], "{:?}", dsr1.jobs);
    // dsr1-fp4-b200-trt: `engine: {type: trtllm}`, tensor_parallel_size 4, max_batch_size [4, 8, 16, 32].
    let trt = model.iter().find(|c| c.config == "dsr1-fp4-b200-trt").unwrap();
    let value = |name: &str| -> Vec<&str> {
        trt.settings.iter().filter(|s| s.name == name).map(|s| s.value.as_str()).collect()
    };
    assert!(value("--tensor-parallel-size").contains(&"4"), "{:?}", trt.settings);

    let mut table: BTreeMap<(&str, Class), usize> = BTreeMap::new();
    for s in model.iter().flat_map(|c| &c.settings) {
        *table.entry((s.name.as_str(), s.class)).or_default() += 1;
    }
    println!("{:<56} {:<8} {:>6}", "setting", "class", "count");
    for ((name, class), count) in &table {
        println!("{name:<56} {:<8} {count:>6}", class.as_str());
    }
    let with_recipe = model.iter().filter(|c| c.recipes.iter().any(|r| r.exists)).count();
    println!(
        "{} configs, {with_recipe} with a recipe in the copy; launchers the copy lacks: {}",
        model.len(),
        gaps.into_iter().collect::<Vec<_>>().join(", ")
    );
}

/// The commands as a user runs them on a git copy: `lint` exits 0; `generate full-sweep` with
/// one unreadable entry names it on stderr, exits 1, and still prints every other row.
#[test]
fn the_commands_on_a_git_copy() {
    let Some(dir) = today_dir() else { return };
    let work = tempfile::tempdir().unwrap();
    git_copy(&dir, work.path());
    let sweepgate = env!("CARGO_BIN_EXE_sweepgate");
    let lint = Command::new(sweepgate).args(["lint", "--ref", "HEAD", "--repo"]).arg(work.path()).output().unwrap();
    let stderr = String::from_utf8_lossy(&lint.stderr);
    assert!(lint.status.success(), "{stderr}\n{}", String::from_utf8_lossy(&lint.stdout));
    assert!(stderr.contains("0 error(s)"), "{stderr}");
    let amd = work.path().join("inferencex-e2e/configs/amd-master.yaml");
    let text = std::fs::read_to_string(&amd).unwrap().replacen("  precision: fp4\n", "  precision: [fp4]\n", 1);
    std::fs::write(&amd, text).unwrap();
    let generate =
        Command::new(sweepgate).args(["generate", "full-sweep", "--repo"]).arg(work.path()).output().unwrap();
    let stderr = String::from_utf8_lossy(&generate.stderr);
    assert_eq!(generate.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Master config entry 'dsr1-fp4-mi355x-sglang' failed validation"), "{stderr}");
    let rows: serde_json::Value = serde_json::from_slice(&generate.stdout).unwrap();
    assert!(rows.as_array().is_some_and(|r| r.len() > 1000), "every other entry gives its rows");
}
