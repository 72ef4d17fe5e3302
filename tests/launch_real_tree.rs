//! The launch model on the whole real upstream tree (issue 22 item 3): every active config of
//! the master configs at the history bundle's tip resolves to an existing benchmark script or
//! recipe of the tree, or to a recipe of the srt-slurm checkout its runner launcher clones
//! (repository and ref named; exceptions listed below with their reasons), reviewed harness names are never
//! `engine` and engine flags never `harness`; the table of every distinct setting name with its
//! class and count is printed. Skip rules: `support/history.rs`.

#[path = "support/history.rs"]
mod history;

use std::collections::BTreeMap;

use sweepgate::domain::launch::{Class, LaunchTree, SettingsGap, LAUNCH_DIRS};
use sweepgate::repo::{GitTree, MemTree};

/// Active configs that resolve to no existing script or recipe at the tip, each with why
/// (reviewed against the runner launchers and benchmark folders of the tip).
const EXCEPTIONS: &[(&str, &str)] = &[
    (
        "qwen3.5-fp8-h100-sglang-agentic",
        "runners/launch_h100-dgxc-slurm.sh:318 runs benchmarks/single_node/agentic/qwen3.5_fp8_h100.sh \
     (no spec-decoding, so SPEC_SUFFIX is empty), which the tip does not have: only \
     qwen3.5_fp8_h100_mtp.sh exists. The job would fail upstream too.",
    ),
    (
        "dsv4-fp4-gb300-dynamo-vllm-agentic",
        "its CONFIG_FILE rows name recipes/vllm/deepseek-v4/agentic/disagg-gb300-1p6d-dep4-tp4-agentic.yaml \
     and …-4p1d-dep4-dep8-24-c4096-agentic.yaml; runners/launch_gb300-nv.sh copies that folder from \
     benchmarks/multi_node/srt-slurm-recipes/vllm/deepseek-v4/agentic, where #2561 deleted both files.",
    ),
];

/// Names that are benchmark client, eval, upload, scheduling or credentials: never `engine`.
const HARNESS: &[&str] = &[
    "AIPERF_MMAP_CACHE_HOST_PATH",
    "AIPERF_DATASET_MMAP_CACHE_DIR",
    "EVAL_CONC",
    "EVAL_LIMIT",
    "MODAL_TOKEN_ID",
    "MODAL_TOKEN_SECRET",
    "OPENAI_API_KEY",
    "HF_TOKEN",
    "PYTHONPATH",
    "CONC",
    "RESULT_FILENAME",
    "PORT",
    "HF_HUB_CACHE",
    "RUN_EVAL",
    "EVAL_ONLY",
];

/// Engine flags: never `harness`.
const ENGINE_FLAGS: &[&str] = &[
    "--tensor-parallel-size",
    "--tp",
    "--mem-fraction-static",
    "--chunked-prefill-size",
    "--max-num-batched-tokens",
    "--gpu-memory-utilization",
    "--kv-cache-dtype",
    "--quantization",
    "--enable-expert-parallel",
    "--cuda-graph-max-bs",
];

#[test]
fn every_active_config_of_the_real_tree_resolves_and_settings_are_classed() {
    let Some(history) = history::history_bundle("the real tree") else { return };
    let work = tempfile::tempdir().unwrap();
    let clone = work.path().join("ix");
    history::clone_history(&history, &clone);
    let git = GitTree::open(&clone, "HEAD").unwrap();
    let mut tree = MemTree::new();
    for dir in LAUNCH_DIRS {
        tree.copy_from(&git, dir).unwrap();
    }
    let model = LaunchTree::new(&tree).all(&[]);
    assert!(model.len() > 100, "the tip has hundreds of active configs, read {}", model.len());

    let mut unresolved = Vec::new();
    for c in &model {
        let exception = EXCEPTIONS.iter().find(|(k, _)| *k == c.config);
        match (c.resolves(), exception) {
            (true, Some((k, _))) => panic!("{k} resolves now: remove it from EXCEPTIONS"),
            (false, None) => {
                unresolved.push(format!("{} ({}:{}): {:?} {:?}", c.config, c.file, c.line, c.jobs, c.unresolved))
            }
            _ => {}
        }
    }
    assert!(unresolved.is_empty(), "{} configs resolve to nothing:\n{}", unresolved.len(), unresolved.join("\n"));

    let mut table: BTreeMap<(&str, Class), usize> = BTreeMap::new();
    for s in model.iter().flat_map(|c| &c.settings) {
        *table.entry((s.name.as_str(), s.class)).or_default() += 1;
        if HARNESS.contains(&s.name.as_str()) {
            assert_ne!(s.class, Class::Engine, "{} at {} is harness", s.name, s.at);
        }
        if ENGINE_FLAGS.contains(&s.name.as_str()) {
            assert_eq!(s.class, Class::Engine, "{} at {} reaches the engine", s.name, s.at);
        }
    }
    assert!(table.keys().any(|(_, c)| *c == Class::Engine), "the tree's server commands have engine settings");
    println!("{:<56} {:<8} {:>6}", "setting", "class", "count");
    for ((name, class), count) in &table {
        println!("{name:<56} {:<8} {count:>6}", class.as_str());
    }
    let scripts = model.iter().filter(|c| !c.scripts().is_empty()).count();
    let recipes = model.iter().filter(|c| c.recipes.iter().any(|r| r.exists)).count();
    let external = model.iter().filter(|c| c.recipes.iter().any(|r| r.external.is_some())).count();
    println!(
        "{} configs: {scripts} with a benchmark script, {recipes} with a recipe of the tree, \
         {external} with a recipe of the srt-slurm checkout their launcher clones",
        model.len()
    );
    assert!(external > 0 && recipes > 0, "both recipe sources occur at the tip");

    // Issue 33 item 2: how many configs the model finds an engine setting for. Those without
    // are printed; the floor keeps what is read from shrinking (ATOM servers counted since PM4).
    let engine = |c: &&sweepgate::domain::launch::ConfigLaunch| c.settings.iter().any(|s| s.class == Class::Engine);
    let with_engine = model.iter().filter(engine).count();
    println!("{with_engine} of {} configs have at least one engine setting; without:", model.len());
    let mut unexplained = Vec::new();
    for c in model.iter().filter(|c| !engine(c)) {
        let external: Vec<String> = c
            .gaps
            .iter()
            .filter_map(|g| match g {
                SettingsGap::ExternalRecipe { checkout, .. } => Some(checkout.clone()),
                _ => None,
            })
            .collect();
        let why = if !external.is_empty() && c.gaps.iter().all(|g| matches!(g, SettingsGap::ExternalRecipe { .. })) {
            // Issue 33 item 2: offline, a config whose recipes are all in the srt-slurm checkout
            // its launcher clones is listed with the checkout (`collect` fetches them).
            let mut checkouts = external;
            checkouts.dedup();
            format!("recipes in the srt-slurm checkout {}", checkouts.join(", "))
        } else if let Some((_, why)) = EXCEPTIONS.iter().find(|(k, _)| *k == c.config) {
            format!("upstream defect: {why}")
        } else {
            unexplained.push(format!("{}: {:?}", c.config, c.gaps));
            "unexplained".to_owned()
        };
        println!("  {} ({}, {}): {why}", c.config, c.framework, if c.multinode { "multi-node" } else { "single-node" });
    }
    assert!(with_engine >= ENGINE_FLOOR, "{with_engine} configs with an engine setting, fewer than {ENGINE_FLOOR}");
    assert!(
        unexplained.is_empty(),
        "configs without an engine setting and no named reason:\n{}",
        unexplained.join("\n")
    );
}

/// Configs of the tip with at least one engine setting: 149 of 199 measured (PM5), 163 since
/// TRT-LLM servers and their heredoc option files are read (PM9), 175 since TileRT's chain of
/// scripts is followed to its server arrays (TR1); raise it as launch styles are read.
const ENGINE_FLOOR: usize = 175;
