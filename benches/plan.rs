//! Sweep planning + recipe variant resolution for 400 points (issue #7 target: ≤ 50 ms): the
//! label decision, `sweep::plan::plan` over a 400-row matrix (300 single-node, 100 multinode
//! rows cycling through the fixture recipe's three topologies), then `plan_jobs::dispatch_plan`
//! on the gb200-nv pool, which binds every multinode row to its one recipe variant (recipes read
//! from the fixture repository's work tree) and validates the result like the dispatcher.
//! `cargo bench --bench plan`.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use serde_json::{json, Value};
use sweepgate::domain::launch::recipe_sources;
use sweepgate::domain::srt::RecipeBook;
use sweepgate::intake::labels::{decide, PrFacts};
use sweepgate::matrix::output::ChangelogMetadata;
use sweepgate::matrix::{MatrixOutput, Row};
use sweepgate::repo::WorkTree;
use sweepgate::sweep::plan::plan;
use sweepgate::sweep::plan_input::Plan;
use sweepgate::sweep::plan_jobs::{dispatch_plan, JobDefaults};
use sweepgate::sweep::pool::load_file;

const ROUNDS: usize = 30;

fn row(value: Value) -> Row {
    serde_json::from_value(value).unwrap_or_else(|e| panic!("{e}"))
}

fn multinode(i: usize) -> Row {
    let worker = |tp: i64, ep: i64, dpa: bool, config: &[&str]| json!({"num-worker": 1, "tp": tp, "pp": 1, "pcp-size": 1, "ep": ep, "dp-attn": dpa, "additional-settings": config});
    let recipe = ["CONFIG_FILE=recipes/sglang/demo/disagg-1p1d.yaml"];
    let (isl, prefill, decode, conc) = match i % 3 {
        0 => (1024, worker(4, 4, true, &recipe), worker(8, 8, true, &[]), json!([4, 8, 16, 32])),
        1 => (8192, worker(4, 4, true, &recipe), worker(8, 8, true, &[]), json!([64, 128, 256])),
        _ => (8192, worker(4, 4, false, &recipe), worker(4, 1, false, &[]), json!([8, 16])),
    };
    row(json!({
        "image": "lmsysorg/sglang:v0.5.9-cu130", "model": "nvidia/DeepSeek-R1-0528-FP4-v2", "precision": "fp4",
        "framework": "dynamo-sglang", "spec-decoding": "none", "runner": "gb200", "isl": isl, "osl": 1024,
        "prefill": prefill, "decode": decode, "conc": conc, "max-model-len": isl + 1280,
        "exp-name": format!("dsr1_mn{i}"), "disagg": true, "run-eval": false
    }))
}

fn single_node(i: usize) -> Row {
    let (tp, conc) = ([1, 2, 4][i % 3], 4 << (i % 6));
    row(json!({"image": "img", "model": "m", "precision": "fp4", "framework": "sglang", "runner": "gb200",
        "tp": tp, "ep": 1, "dp-attn": false, "conc": conc, "isl": 1024, "osl": 1024,
        "max-model-len": 2304, "exp-name": format!("dsr1_sn{i}"), "run-eval": false}))
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pool = load_file(&root.join("pools/gb200-nv.toml")).unwrap_or_else(|e| panic!("{e}"));
    let tree = WorkTree::new(root.join("fixtures/repo"));
    let matrix = MatrixOutput {
        single_node: [("1k1k".to_owned(), (0..300).map(single_node).collect())].into_iter().collect(),
        multi_node: [("1k1k".to_owned(), (0..100).map(multinode).collect())].into_iter().collect(),
        evals: vec![],
        agentic_evals: vec![],
        multinode_evals: vec![],
        multinode_agentic_evals: vec![],
        changelog_metadata: ChangelogMetadata { base_ref: "b".into(), head_ref: "h".into(), entries: vec![] },
    };
    let facts = PrFacts { changelog_appended: true, ..PrFacts::default() };
    let defaults = JobDefaults { launcher: "launch.sh", pool: &pool, repo: "o/r", pr: 1, sweep_id: "pr1-bench" };
    let mut best = f64::MAX;
    let mut points = 0;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let decision = decide(&["full-sweep-fail-fast"], &facts);
        let sweep = plan(&decision, &matrix);
        // The planner reads where the launch model says each recipe is read (decision LM12).
        let sources = recipe_sources(&tree).unwrap_or_else(|e| panic!("{e}"));
        let mut book = RecipeBook::new(&tree, sources);
        let out = dispatch_plan(&sweep, &defaults, &mut book).unwrap_or_else(|e| panic!("{e}"));
        let bytes = serde_json::to_vec(&out.plan).unwrap_or_default();
        let parsed = Plan::parse(&bytes, "bench").unwrap_or_else(|e| panic!("{e}"));
        points = parsed.placed_points().len();
        black_box(parsed);
        best = best.min(start.elapsed().as_secs_f64() * 1000.0);
    }
    println!("| metric | value | goal |");
    println!("|---|---|---|");
    println!("| plan + variant resolution + dispatch-plan validation, {points} points (best of {ROUNDS}) | {best:.2} ms | ≤ 50 ms |");
}
