//! Resolution + selection throughput: 400 multinode points, each resolved from its recipe text
//! and matched to exactly one variant (spec 50 §3). Run manually:
//! `cargo bench --bench recipe_select` (add `--profile dev` for a quick debug-build figure).
//! Uses the fixture repository's recipes; the points cycle through their four topologies.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use serde_json::json;
use sweepgate::domain::srt::{select, Candidates, Checks, Point};
use sweepgate::domain::srt_recipe::Recipe;
use sweepgate::sweep::pool::load_file;

const POINTS: usize = 400;
const ROUNDS: usize = 20;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("fixtures/repo/benchmarks/multi_node/srt-slurm-recipes");
    let read = |rel: &str| std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let (sglang, trt) = (read("sglang/demo/disagg-1p1d.yaml"), read("trtllm/demo/zip-ctx-gen.yaml"));
    let pool = load_file(&root.join("pools/gb200-nv.toml")).unwrap_or_else(|e| panic!("{e}"));
    let w = |n: i64, tp: i64, ep: i64, dpa: bool| json!({"num-worker": n, "tp": tp, "ep": ep, "dp-attn": dpa});
    let point =
        |framework: &str, isl: i64, spec: &str, p: serde_json::Value, d: serde_json::Value, conc: serde_json::Value| {
            let row = json!({"framework": framework, "precision": "fp4", "isl": isl, "osl": 1024, "spec-decoding": spec,
                         "prefill": p, "decode": d, "conc": conc, "disagg": true});
            Point::from_json(&row).unwrap_or_else(|e| panic!("{e}"))
        };
    let cases = [
        (&sglang, point("dynamo-sglang", 8192, "none", w(1, 4, 4, true), w(1, 8, 8, true), json!([64, 128, 256]))),
        (&sglang, point("dynamo-sglang", 8192, "none", w(1, 4, 4, false), w(1, 4, 1, false), json!([8, 16]))),
        (&sglang, point("dynamo-sglang", 1024, "none", w(1, 4, 4, true), w(1, 8, 8, true), json!([4, 8, 16, 32]))),
        (&trt, point("dynamo-trt", 8192, "mtp", w(1, 4, 4, true), w(2, 8, 8, false), json!([8, 32]))),
    ];
    let checks = Checks { pool: Some(&pool), ..Checks::default() };
    let mut best = f64::MAX;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for i in 0..POINTS {
            let (text, point) = &cases[i % cases.len()];
            // Parse per point: the dispatcher reads each point's recipe at the pinned head.
            let recipe = Recipe::parse(text, "recipe.yaml").unwrap_or_else(|e| panic!("{e}"));
            let chosen = select(&recipe, None, point, checks).unwrap_or_else(|e| panic!("{e}"));
            black_box(chosen);
        }
        best = best.min(start.elapsed().as_secs_f64() * 1000.0);
    }
    println!("recipe_select: {POINTS} points (parse + resolve all variants + select), best of {ROUNDS}: {best:.2} ms");
    let phase = |label: &str, run: &dyn Fn(usize)| {
        let mut best = f64::MAX;
        for _ in 0..ROUNDS {
            let start = Instant::now();
            (0..POINTS).for_each(run);
            best = best.min(start.elapsed().as_secs_f64() * 1000.0);
        }
        println!("  {label}: {best:.2} ms");
    };
    let parsed: Vec<Recipe> =
        cases.iter().map(|(t, _)| Recipe::parse(t, "recipe.yaml").unwrap_or_else(|e| panic!("{e}"))).collect();
    phase("parse only", &|i| {
        black_box(Recipe::parse(cases[i % cases.len()].0, "recipe.yaml").ok());
    });
    phase("resolve all variants (pre-parsed)", &|i| {
        black_box(parsed[i % cases.len()].resolve(None).ok());
    });
    phase("resolve + select per point (pre-parsed)", &|i| {
        black_box(select(&parsed[i % cases.len()], None, &cases[i % cases.len()].1, checks).ok());
    });
    let candidates: Vec<Candidates> =
        parsed.iter().map(|r| Candidates::new(r, None).unwrap_or_else(|e| panic!("{e}"))).collect();
    phase("select per point (candidates resolved once per recipe)", &|i| {
        black_box(candidates[i % cases.len()].select(&cases[i % cases.len()].1, checks).ok());
    });
}
