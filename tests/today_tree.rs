//! sweepgate on the benchmark repository as its users have it today (issue 36): the
//! `inferencex-e2e/` tree of Oct 2026 (`../shared/acceptance/inferencex-2026-11/`, plain files
//! rebuilt from stored public copies; a git copy is made where a commit is needed). Its
//! `MISSING.txt` lists each referenced file the copy lacks: a gap of the copy, not an upstream
//! defect. The tree itself is never edited.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use sweepgate::diag::Severity;
use sweepgate::domain::launch::{Class, LaunchTree, LAUNCH_DIRS};
use sweepgate::matrix::generate::{self, TestConfigOptions};
use sweepgate::matrix::inputs;
use sweepgate::repo::{Layout, MemTree};

mod support;

use support::today_tree::{commit_changelog_entry, git_copy, mi355x_pool, today_dir};

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

    // The issue's chain: runner mi300x → label and cluster mi300x-amd → its launcher → the
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
    // Schema-2 recipes: each role's `args` and `env`, the top-level `environment` (every worker,
    // srtctl's v1 -> v2 migration leaves it in place) and the router's `frontend.env` are settings,
    // classed as a script's are (decision TD11).
    let roles_of = |config: &str, name: &str, value: &str| -> BTreeSet<(String, Class)> {
        let c = model.iter().find(|c| c.config == config).unwrap();
        c.settings.iter().filter(|s| s.name == name && s.value == value).map(|s| (s.role.clone(), s.class)).collect()
    };
    let both = |class: Class| BTreeSet::from([("decode".to_owned(), class), ("prefill".to_owned(), class)]);
    let tilert = "glm5.3-fp8-mi355x-tilert-agentic";
    assert_eq!(roles_of(tilert, "TILERT_VERSION", "0.1.6.post3"), both(Class::Engine));
    assert_eq!(roles_of(tilert, "RDMAV_FORK_SAFE", "1"), both(Class::Unknown));
    assert_eq!(roles_of(tilert, "TILERT_ROLE", "router"), BTreeSet::from([("frontend".to_owned(), Class::Engine)]));
    assert_eq!(roles_of(tilert, "--num-mtp", "3"), BTreeSet::from([("decode".to_owned(), Class::Engine)]));
    let agg = |class: Class| BTreeSet::from([("aggregated".to_owned(), class)]);
    let dspark = "dsv41flash-fp4-mi300x-vllm-agentic-dspark";
    assert_eq!(roles_of(dspark, "VLLM_USE_RUST_FRONTEND", "1"), agg(Class::Engine));
    assert_eq!(roles_of(dspark, "HF_HUB_CACHE", "/hf_hub_cache"), agg(Class::Harness));
    assert_eq!(roles_of("dsv41flash-fp4-mi300x-vllm-agentic-nixl", "UCX_LOG_LEVEL", "info"), both(Class::Engine));
    // TRT-LLM's nested engine args are one setting per top-level key, its mapping as JSON, one
    // value per variant: `dsr1-fp4-b200-trt`'s `zip_override_tp4_ep1` zips
    // `cuda_graph_config.max_batch_size: [4, 8, 16, 32]` into four variants.
    let nested = |config: &str, name: &str| -> Vec<String> {
        let c = model.iter().find(|c| c.config == config).unwrap();
        c.settings.iter().filter(|s| s.name == name).map(|s| s.value.clone()).collect()
    };
    assert!(
        nested("dsr1-fp4-gb200-dynamo-trt", "--kv-cache-config")
            .iter()
            .any(|v| v.contains("\"free_gpu_memory_fraction\":0.6")),
        "{:?}",
        nested("dsr1-fp4-gb200-dynamo-trt", "--kv-cache-config")
    );
    let graphs = value("--cuda-graph-config");
    for bs in [4, 8, 16, 32] {
        let json = format!("{{\"enable_padding\":true,\"max_batch_size\":{bs}}}");
        assert!(graphs.contains(&json.as_str()), "{graphs:?}");
    }
    // The table's classes: every name has one class, and these are its rows for the names above.
    let classes: BTreeMap<&str, BTreeSet<Class>> = table.keys().fold(BTreeMap::new(), |mut m, (name, class)| {
        m.entry(*name).or_default().insert(*class);
        m
    });
    assert!(classes.values().all(|c| c.len() == 1), "a name with two classes: {classes:?}");
    let rows: Vec<(&str, Class, usize)> =
        ["TILERT_VERSION", "RDMAV_FORK_SAFE", "VLLM_USE_RUST_FRONTEND", "UCX_LOG_LEVEL"]
            .iter()
            .map(|name| table.iter().find(|((n, _), _)| n == name).map(|((n, c), k)| (*n, *c, *k)).unwrap())
            .collect();
    assert_eq!(
        rows,
        [
            ("TILERT_VERSION", Class::Engine, 2),
            ("RDMAV_FORK_SAFE", Class::Unknown, 2),
            ("VLLM_USE_RUST_FRONTEND", Class::Engine, 14),
            ("UCX_LOG_LEVEL", Class::Engine, 8),
        ]
    );
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

/// Rows of this copy that bind to no variant as the recipe is written, because launcher code the
/// copy lacks gives srtctl the row's benchmark values: (config, why). Gaps of this copy.
const LEFT_TO_MISSING_LAUNCHER_CODE: &[(&str, &str)] = &[(
    "glm5.2-fp4-gb200-dynamo-sglang-agentic-agg",
    "agentx/agg.yaml pins `concurrencies: [1]`; the gb200-nv launcher rewrites them to the row's \
     CONC_LIST with runners/inject_srt_power_concurrencies.py (launch_gb200-nv.sh:486-489), not in the copy",
)];

/// Where the copy contradicts itself (its files come from about 40 commits, README): (config,
/// the row's `no variant serves` text, why).
const CONTRADICTIONS: &[(&str, &[&str], &str)] = &[(
    "qwen3.5-fp8-mi355x-sglang-agentic-mtp",
    &["conc 48 ", "conc 56 ", "conc 64 ", "conc 72 ", "conc 80 "],
    "amd-master.yaml lists conc 48-80 in the dram band; this copy of mi355x-fp8-mtp/agentic.yaml stops at \
     override_tp4_hicache_c40",
)];

/// Why a row the copy cannot bind is a gap of the copy, or `None` when it is not one.
fn launcher_gap(config: &str, error: &str) -> Option<String> {
    if let Some((_, why)) = LEFT_TO_MISSING_LAUNCHER_CODE.iter().find(|(c, _)| *c == config) {
        return Some((*why).to_owned());
    }
    let contradiction =
        CONTRADICTIONS.iter().find(|(c, rows, _)| *c == config && rows.iter().any(|r| error.contains(r)));
    if let Some((_, _, why)) = contradiction {
        return Some(format!("contradiction of the copy: {why}"));
    }
    // A recipe that states no ISL, OSL or concurrency gets them from `apply_srt_recipe`
    // (runners/slurm_utils.sh, NOT_COPIED in MISSING.txt), as every launcher of the copy calls it.
    let details: Vec<&str> = error.lines().skip(1).collect();
    let unstated = !details.is_empty() && details.iter().all(|l| l.contains("the recipe has none"));
    unstated.then(|| "the recipe leaves isl/osl/concurrencies to apply_srt_recipe (runners/slurm_utils.sh)".to_owned())
}

/// `plan --format dispatch` binds each row through the recipe book: every multinode row and
/// every native single-node (`srt-recipe`) row of a config whose recipe the copy holds binds to
/// exactly one variant; a row whose recipe the copy lacks is `Missing`, and MISSING.txt names the
/// file for that config; rows left to launcher code the copy lacks are named with why.
#[test]
fn every_row_binds_to_one_schema2_variant() {
    use sweepgate::domain::srt::{Checks, RecipeBook, RecipeLookupError};
    let Some(dir) = today_dir() else { return };
    let work = tempfile::tempdir().unwrap();
    let git = git_copy(&dir, work.path());
    let missing = missing(&dir);
    let (inputs, _) = inputs::read_each(&git, &Layout::default()).unwrap();
    let sources = sweepgate::domain::launch::recipe_sources(&git).unwrap();
    let mut book = RecipeBook::new(&git, sources);
    let mut problems = Vec::new();
    let mut left: BTreeMap<String, usize> = BTreeMap::new();
    let (mut bound_configs, mut missing_configs, mut named_configs) = (0, 0, 0);
    let (mut script_rows, mut bound_rows, mut gap_rows) = (0, 0, 0);
    for key in inputs.configs.keys() {
        let options = TestConfigOptions { config_keys: vec![key.to_owned()], ..Default::default() };
        let rows = generate::test_config(&inputs.configs, &inputs.runners, &options, &Default::default()).unwrap();
        let (mut bound, mut gaps, mut named) = (0_usize, 0_usize, 0_usize);
        for row in &rows {
            let value = serde_json::Value::Object(row.clone());
            let found = if row.contains_key("prefill") || row.contains_key("worker") {
                book.select_row(&value, Checks::default())
            } else if row.contains_key("srt-recipe") {
                book.select_single_row(&value)
            } else {
                script_rows += 1;
                continue;
            };
            match found {
                Ok(found) => {
                    bound += 1;
                    let variant = &found.selected.variant;
                    if found.selected.variant.suffix.is_some() && variant.selector.is_empty() {
                        problems.push(format!("{key}: {} bound to no concrete variant", found.path));
                    }
                }
                Err(RecipeLookupError::Missing { path, .. }) => {
                    if missing.get(&path).is_some_and(|configs| configs.iter().any(|c| c == key)) {
                        gaps += 1;
                    } else {
                        problems.push(format!("{key}: {path} is missing but MISSING.txt does not name it for {key}"));
                    }
                }
                Err(e) => match launcher_gap(key, &e.to_string()) {
                    Some(why) => {
                        named += 1;
                        *left.entry(format!("{key}: {why}")).or_default() += 1;
                    }
                    None => problems.push(format!("{key} {}: {e}", row["exp-name"])),
                },
            }
        }
        bound_rows += bound;
        gap_rows += gaps;
        match (bound, gaps, named) {
            (1.., _, _) => bound_configs += 1,
            (0, 1.., 0) => missing_configs += 1,
            (0, _, 1..) => named_configs += 1,
            (0, 0, 0) => problems.push(format!("{key}: no row names a recipe")),
        }
    }
    println!(
        "{bound_configs} configs bind rows to recipe variants ({bound_rows} rows); {missing_configs} configs have only \
         recipes MISSING.txt lists ({gap_rows} rows); {script_rows} rows run a script"
    );
    for (what, rows) in &left {
        println!("left to launcher code the copy lacks ({rows} rows): {what}");
    }
    assert!(problems.is_empty(), "{} rows:\n{}", problems.len(), problems.join("\n"));
    // The README: 66 of the 216 configs have at least one of their recipes in the copy.
    assert_eq!((bound_configs, named_configs, missing_configs), (61, 5, 150));
}

/// The copy's launchers pass srtctl two `--set`s (`launch_b300-dsxe.sh:329`,
/// `launch_gb300-nv.sh:200`); the launch model records each with the recipe it applies to, or
/// names it when its test is undecided (decision TD9).
#[test]
fn launcher_set_arguments_reach_the_recipes() {
    let Some(dir) = today_dir() else { return };
    let work = tempfile::tempdir().unwrap();
    let git = git_copy(&dir, work.path());
    let mut tree = MemTree::new();
    for d in LAUNCH_DIRS {
        tree.copy_from(&git, d).unwrap();
    }
    let model = LaunchTree::new(&tree).all(&[]);
    let mut applied = BTreeSet::new();
    let mut undecided = BTreeSet::new();
    for c in &model {
        for r in &c.recipes {
            for s in &r.sets {
                applied.insert(format!("{} {}: {} ({})", c.config, r.path, s.arg, s.at));
            }
        }
        for u in c.unresolved.iter().filter(|u| u.why == "undecided_set" || u.why == "bad_override") {
            undecided.insert(format!("{} {}: {} ({})", c.config, u.why, u.what, u.at));
        }
    }
    println!("applied:\n{}", applied.iter().cloned().collect::<Vec<_>>().join("\n"));
    assert!(undecided.is_empty(), "{undecided:#?}");
    // The agentic multinode config of b300-dsxe whose recipe the copy holds: its launcher
    // passes the workflow's RESULT_FILENAME (unset in the model, so empty).
    assert_eq!(
        applied.into_iter().collect::<Vec<_>>(),
        ["qwen3.5-fp8-b300-dynamo-sglang-agentic-disagg inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes/\
          qwen3.5/sglang/b300-fp8/agentx/disagg-variants.yaml: benchmark.env.RESULT_FILENAME= \
          (inferencex-e2e/runners/launch_b300-dsxe.sh:329)"]
    );
}

/// `plan --format dispatch` on a changelog change of the copy (the issue's done-when): a PR that
/// appends an entry for two native single-node configs and the ATOM disaggregated agentic config
/// plans every row of them on an MI355X pool profile, each bound to one schema-2 variant.
#[test]
fn plan_dispatch_on_a_changelog_change_binds_every_row() {
    let Some(dir) = today_dir() else { return };
    let work = tempfile::tempdir().unwrap();
    git_copy(&dir, work.path());
    commit_changelog_entry(
        work.path(),
        &["dsr1-fp4-mi355x-sglang", "dsr1-fp4-mi355x-atom", "dsv4-fp4-mi355x-atom-disagg-agentic-lmcache-dspark"],
    );
    // The pool the multinode rows' `cluster:mi355x-amds` runner names.
    let pools = tempfile::tempdir().unwrap();
    let pool_file = pools.path().join("mi355x-amds.toml");
    std::fs::write(&pool_file, mi355x_pool(None)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(["plan", "--repo"])
        .arg(work.path())
        .args(["--base", "HEAD~1", "--head", "HEAD", "--labels", "full-sweep-enabled", "--format", "dispatch"])
        .arg("--pool")
        .arg(&pool_file)
        .args(["--launcher", "launch.sh", "--github-repo", "o/r", "--pr-number", "7"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.is_empty(), "no row is skipped: {stderr}");
    let plan = sweepgate::sweep::plan_input::Plan::parse(&out.stdout, "stdout").unwrap_or_else(|e| panic!("{e}"));
    let points = plan.placed_points();
    let mut selectors = BTreeSet::new();
    for p in &points {
        let job = &p.point.job;
        let recipe = job.recipe.as_ref().unwrap_or_else(|| panic!("{} has no recipe", p.point.id));
        assert!(!recipe.selector.is_empty() && recipe.sha256.len() == 64, "{recipe:?}");
        let env = if job.env.contains_key("CONFIG_FILE") { "CONFIG_FILE" } else { "SRT_RECIPE" };
        assert_eq!(job.env[env], recipe.config_file, "{}", p.point.id);
        selectors.insert(recipe.config_file.rsplit('/').next().unwrap().to_owned());
    }
    assert_eq!(points.len(), 33, "the canary and every row of the three configs: {selectors:#?}");
    assert!(selectors.contains("disagg-lmcache-dspark.yaml:override_dpa8_c256_lmcache"), "{selectors:#?}");
    assert!(selectors.contains("8k1k.yaml:zip_override_tp8_ep1[4]"), "{selectors:#?}");
}
