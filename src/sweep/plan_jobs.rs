//! From a sweep plan to the dispatch plan `sweepgate dispatch` runs on one pool: one job per
//! matrix row whose `runner` the pool serves, each multinode row and each native single-node
//! (`srt-recipe`) row bound to exactly one SRT recipe variant (spec 50 §3, decision TD6), sized
//! by the pool. Rows of other runners are listed as skipped: a sweep
//! over several clusters is one dispatch plan per pool, and the canary gates only the plan of
//! the pool that runs it.
//!
//! The job's environment carries the row (each key upper-cased, `-` → `_`, non-scalars as JSON),
//! `SWEEP_FAMILY`, `EVAL_ONLY`, `AIPERF_EXPERIMENTAL_FAST=1` on `agentx-fast` families, and for
//! multinode rows `CONFIG_FILE=<recipe>:<selector>` naming the selected variant, so the launcher
//! never re-selects. Decision S12 (docs/decisions.md).

use std::collections::BTreeMap;

use serde_json::Value;

use super::plan::{PlannedFamily, SweepPlan, Template};
use super::plan_input::{reserved_env, Canary, Family, JobSpec, Plan, Point, RecipeProvenance};
use super::pool::{slurm_time_minutes, PoolProfile};
use crate::domain::srt::{with_selector, Checks, ConcurrencyRule, RecipeBook, RecipeLookupError, RowRecipe};
use crate::matrix::generate::seq_name;
use crate::matrix::Row;

/// What every job of the plan shares.
pub struct JobDefaults<'a> {
    /// The launcher each job runs (relative paths are relative to the plan file).
    pub launcher: &'a str,
    pub pool: &'a PoolProfile,
    /// owner/name of the benchmark repository.
    pub repo: &'a str,
    pub pr: u64,
    /// Stable id of this sweep run, e.g. `pr123-7f3a9c1`.
    pub sweep_id: &'a str,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanJobError {
    #[error("point {point} ({exp_name}): {source}")]
    Recipe { point: String, exp_name: String, source: Box<RecipeLookupError> },
    #[error("point {point} ({exp_name}): {message}")]
    Row { point: String, exp_name: String, message: String },
    #[error("pool {pool}: time_limit '{time_limit}' is not a Slurm time")]
    TimeLimit { pool: String, time_limit: String },
    #[error("nothing to dispatch: {0}")]
    Empty(String),
}

/// A row of the sweep that another pool runs.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SkippedRow {
    pub family: String,
    pub exp_name: String,
    pub runner: String,
}

/// The dispatch plan of one pool, and the rows left to other pools.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolPlan {
    pub plan: Plan,
    pub skipped: Vec<SkippedRow>,
}

/// The dispatch plan of the rows of `sweep` the pool serves; recipes are selected through
/// `recipes`.
pub fn dispatch_plan(
    sweep: &SweepPlan,
    defaults: &JobDefaults<'_>,
    recipes: &mut RecipeBook<'_>,
) -> Result<PoolPlan, PlanJobError> {
    if !sweep.sweep {
        return Err(PlanJobError::Empty("the labels ask for no sweep".into()));
    }
    let pool = defaults.pool;
    let mut skipped = Vec::new();
    let mut served = |family: &str, row: &Row| {
        let runner = row.get("runner").and_then(Value::as_str).unwrap_or_default();
        let yes = pool.serves(runner);
        if !yes {
            skipped.push(SkippedRow { family: family.to_owned(), exp_name: exp_name(row), runner: runner.to_owned() });
        }
        yes
    };
    let time_limit_minutes = slurm_time_minutes(&defaults.pool.time_limit).ok_or_else(|| PlanJobError::TimeLimit {
        pool: defaults.pool.name.clone(),
        time_limit: defaults.pool.time_limit.clone(),
    })?;
    let mut builder = Builder { defaults, recipes, time_limit_minutes };
    let canary = match &sweep.canary {
        Some(row) if served("canary", row) => {
            let family = canary_family(row);
            let point = builder.point("canary", &family, row)?;
            Some(Canary { family: family.name, point })
        }
        _ => None,
    };
    let mut families = Vec::new();
    for family in &sweep.families {
        let slug = family.job.trim_start_matches("sweep-");
        let mut points = Vec::new();
        for (i, row) in family.rows.iter().enumerate() {
            if served(&family.name, row) {
                points.push(builder.point(&format!("{slug}-{i:04}"), family, row)?);
            }
        }
        if !points.is_empty() {
            families.push(Family { name: family.name.clone(), fail_fast: family.fail_fast, points });
        }
    }
    if canary.is_none() && families.is_empty() {
        let mut runners: Vec<&str> = skipped.iter().map(|s| s.runner.as_str()).collect();
        runners.sort_unstable();
        runners.dedup();
        return Err(PlanJobError::Empty(format!(
            "pool {} serves none of the sweep's runners ({}); set its `runners` or pick another pool",
            pool.name,
            runners.join(", ")
        )));
    }
    let plan = Plan {
        version: 1,
        sweep_id: defaults.sweep_id.to_owned(),
        repo: defaults.repo.to_owned(),
        pr: defaults.pr,
        canary,
        families,
    };
    Ok(PoolPlan { plan, skipped })
}

fn exp_name(row: &Row) -> String {
    row.get("exp-name").and_then(Value::as_str).unwrap_or("?").to_owned()
}

/// The canary as a one-row family: single-node, never evals, never fail-fast (spec 10 §5.2),
/// reported under the single-node family of its sequence lengths.
fn canary_family(row: &Row) -> PlannedFamily {
    let int = |k: &str| row.get(k).and_then(Value::as_i64).unwrap_or(0);
    PlannedFamily {
        name: format!("single-node {}", seq_name(int("isl"), int("osl"))),
        job: "canary".to_owned(),
        template: Template::SingleNode,
        eval_only: false,
        fail_fast: false,
        agentx_fast: false,
        rows: Vec::new(),
    }
}

struct Builder<'b, 'a, 'r> {
    defaults: &'b JobDefaults<'a>,
    recipes: &'b mut RecipeBook<'r>,
    time_limit_minutes: u32,
}

impl Builder<'_, '_, '_> {
    fn point(&mut self, id: &str, family: &PlannedFamily, row: &Row) -> Result<Point, PlanJobError> {
        let exp_name = exp_name(row);
        let row_error =
            |message: String| PlanJobError::Row { point: id.to_owned(), exp_name: exp_name.clone(), message };
        let mut env = row_env(row);
        env.insert("SWEEP_FAMILY".into(), family.name.clone());
        env.insert("EVAL_ONLY".into(), family.eval_only.to_string());
        if family.agentx_fast {
            env.insert("AIPERF_EXPERIMENTAL_FAST".into(), "1".into());
        }
        let pool_gpus = self.defaults.pool.gpus_per_node;
        let (gpus, nodes, recipe) = match family.template {
            Template::SingleNode => {
                let tp = row
                    .get("tp")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| row_error("the row has no integer tp".into()))?;
                let gpus = u32::try_from(tp).ok().filter(|g| (1..=pool_gpus).contains(g)).ok_or_else(|| {
                    row_error(format!(
                        "tp {tp} does not fit one node of pool {} ({pool_gpus} GPUs)",
                        self.defaults.pool.name
                    ))
                })?;
                // A native row runs the one variant of its recipe that serves it; the launcher
                // gets it as `SRT_RECIPE=<recipe>:<selector>` and never re-selects (decision TD6).
                let recipe = match row.get("srt-recipe") {
                    None => None,
                    Some(_) => {
                        let found = self.recipes.select_single_row(&Value::Object(row.clone())).map_err(|source| {
                            PlanJobError::Recipe {
                                point: id.to_owned(),
                                exp_name: exp_name.clone(),
                                source: Box::new(source),
                            }
                        })?;
                        let recipe = provenance(&found);
                        env.insert("SRT_RECIPE".into(), recipe.config_file.clone());
                        Some(recipe)
                    }
                };
                (gpus, 1, recipe)
            }
            Template::MultiNode => {
                let checks = Checks { pool: Some(self.defaults.pool), concurrency: ConcurrencyRule::Equal };
                let found = self.recipes.select_row(&Value::Object(row.clone()), checks).map_err(|source| {
                    PlanJobError::Recipe { point: id.to_owned(), exp_name: exp_name.clone(), source: Box::new(source) }
                })?;
                let facts = &found.selected.facts;
                let nodes = facts
                    .agg_nodes
                    .unwrap_or_else(|| facts.prefill_nodes.unwrap_or(0) + facts.decode_nodes.unwrap_or(0));
                let nodes = u32::try_from(nodes)
                    .ok()
                    .filter(|n| *n >= 1)
                    .ok_or_else(|| row_error(format!("recipe {} allocates {nodes} nodes", found.reference)))?;
                let recipe = provenance(&found);
                env.insert("CONFIG_FILE".into(), recipe.config_file.clone());
                (pool_gpus, nodes, Some(recipe))
            }
        };
        Ok(Point {
            id: id.to_owned(),
            row: row.clone(),
            job: JobSpec {
                script: self.defaults.launcher.to_owned(),
                env,
                gpus,
                nodes,
                time_limit_minutes: self.time_limit_minutes,
                recipe,
            },
        })
    }
}

/// Which file and variant a job runs: `<reference>:<selector>` as srtctl's `-f` takes it.
fn provenance(found: &RowRecipe) -> RecipeProvenance {
    let selector = found.selected.variant.selector.clone();
    RecipeProvenance {
        config_file: with_selector(&found.reference, &selector),
        path: found.path.clone(),
        selector,
        sha256: found.sha256.clone(),
    }
}

/// The row as environment variables (`max-model-len` → `MAX_MODEL_LEN`); nulls are left out,
/// lists and maps are JSON text.
fn row_env(row: &Row) -> BTreeMap<String, String> {
    row.iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| {
            let name: String =
                k.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect();
            let value = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (name, value)
        })
        .filter(|(name, _)| !name.starts_with(|c: char| c.is_ascii_digit()) && !reserved_env(name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::launch::recipe_sources;
    use crate::intake::labels::{decide, PrFacts};
    use crate::repo::MemTree;
    use crate::sweep::plan::plan;
    use serde_json::json;

    const RECIPE: &str =
        include_str!("../../fixtures/repo/benchmarks/multi_node/srt-slurm-recipes/sglang/demo/disagg-1p1d.yaml");
    const RECIPE_PATH: &str = "benchmarks/multi_node/srt-slurm-recipes/sglang/demo/disagg-1p1d.yaml";
    const POOL: &str = include_str!("../../pools/gb200-nv.toml");
    /// The master-config entry whose rows name the recipe: the planner reads recipes where the
    /// launch model says the entry's launcher reads them.
    const MASTER: &str = "dsr1-fp4-gb200-dynamo-sglang:\n  multinode: true\n  runner: gb200\n  framework: dynamo-sglang\n  scenarios:\n    fixed-seq-len:\n      - isl: 1024\n        osl: 1024\n        search-space:\n          - prefill:\n              additional-settings:\n                - CONFIG_FILE=recipes/sglang/demo/disagg-1p1d.yaml\n";

    fn book(tree: &MemTree) -> RecipeBook<'_> {
        RecipeBook::new(tree, recipe_sources(tree).unwrap_or_else(|e| panic!("{e}")))
    }

    fn pool(extra: &str) -> PoolProfile {
        PoolProfile::parse(&format!("{extra}\n{POOL}"), "gb200-nv", "pools/gb200-nv.toml")
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn multinode_row() -> Row {
        let worker = |tp: i64, config: &[&str]| json!({"num-worker": 1, "tp": tp, "pp": 1, "pcp-size": 1, "ep": tp, "dp-attn": true, "additional-settings": config});
        let row = json!({
            "image": "lmsysorg/sglang:v0.5.9-cu130", "model": "nvidia/DeepSeek-R1-0528-FP4-v2", "precision": "fp4",
            "framework": "dynamo-sglang", "spec-decoding": "none", "runner": "gb200", "isl": 1024, "osl": 1024,
            "prefill": worker(4, &["CONFIG_FILE=recipes/sglang/demo/disagg-1p1d.yaml"]), "decode": worker(8, &[]),
            "conc": [4, 8, 16, 32], "max-model-len": 2304, "exp-name": "dsr1_1k1k", "disagg": true, "run-eval": false
        });
        serde_json::from_value(row).unwrap()
    }

    fn single_node_row(runner: &str, tp: i64, agentic: bool) -> Row {
        let mut row = json!({"runner": runner, "tp": tp, "conc": 4, "isl": 1024, "osl": 1024, "exp-name": "sn",
            "max-model-len": 2048, "run-eval": false, "note": null});
        if agentic {
            row["scenario-type"] = json!("agentic-coding");
        }
        serde_json::from_value(row).unwrap()
    }

    fn sweep(labels: &[&str], single: Vec<(&str, Vec<Row>)>, multi: Vec<Row>) -> SweepPlan {
        let matrix = crate::matrix::MatrixOutput {
            single_node: single.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
            multi_node: [("1k1k".to_owned(), multi)].into_iter().collect(),
            evals: vec![],
            agentic_evals: vec![],
            multinode_evals: vec![],
            multinode_agentic_evals: vec![],
            changelog_metadata: crate::matrix::output::ChangelogMetadata {
                base_ref: "b".into(),
                head_ref: "h".into(),
                entries: vec![],
            },
        };
        plan(&decide(labels, &PrFacts { changelog_appended: true, ..PrFacts::default() }), &matrix)
    }

    fn build(sweep: &SweepPlan, pool: &PoolProfile, recipe: &str) -> Result<PoolPlan, PlanJobError> {
        let tree = MemTree::new().with("configs/dsr1-master.yaml", MASTER).with(RECIPE_PATH, recipe);
        let mut book = book(&tree);
        let defaults = JobDefaults { launcher: "launch.sh", pool, repo: "o/r", pr: 7, sweep_id: "pr7-abc" };
        dispatch_plan(sweep, &defaults, &mut book)
    }

    #[test]
    fn a_multinode_row_runs_the_one_matching_variant_on_whole_nodes() {
        let s = sweep(&["full-sweep-fail-fast"], vec![], vec![multinode_row()]);
        let out = build(&s, &pool(""), RECIPE).unwrap_or_else(|e| panic!("{e}"));
        assert!(out.skipped.is_empty());
        let point = &out.plan.families[0].points[0];
        assert_eq!((point.id.as_str(), point.job.gpus, point.job.nodes), ("multi-node-1k1k-0000", 4, 3));
        assert_eq!(point.job.time_limit_minutes, 240);
        assert_eq!(point.job.env["CONFIG_FILE"], "recipes/sglang/demo/disagg-1p1d.yaml:override_dep8_1k1k");
        let recipe = point.job.recipe.as_ref().unwrap();
        assert_eq!((recipe.path.as_str(), recipe.selector.as_str()), (RECIPE_PATH, "override_dep8_1k1k"));
        assert_eq!(recipe.sha256, hex::encode(<sha2::Sha256 as sha2::Digest>::digest(RECIPE.as_bytes())));
        assert!(out.plan.families[0].fail_fast);
        let text = serde_json::to_vec(&out.plan).unwrap();
        assert_eq!(Plan::parse(&text, "generated").unwrap(), out.plan, "the dispatcher accepts it as is");
    }

    #[test]
    fn two_matching_variants_are_an_error_naming_both() {
        let twin = format!("{RECIPE}\noverride_twin_1k1k:\n  benchmark:\n    isl: 1024\n    osl: 1024\n    concurrencies: [4, 8, 16, 32]\n");
        let s = sweep(&["full-sweep-enabled"], vec![], vec![multinode_row()]);
        let err = build(&s, &pool(""), &twin).unwrap_err().to_string();
        assert!(err.starts_with("point multi-node-1k1k-0000 (dsr1_1k1k): "), "{err}");
        assert!(err.contains("override_dep8_1k1k") && err.contains("override_twin_1k1k"), "{err}");
    }

    #[test]
    fn a_missing_recipe_is_an_error_naming_the_path() {
        let s = sweep(&["full-sweep-enabled"], vec![], vec![multinode_row()]);
        let tree = MemTree::new()
            .with("configs/dsr1-master.yaml", MASTER)
            .with("benchmarks/multi_node/srt-slurm-recipes/other.yaml", "x: 1\n");
        let mut book = book(&tree);
        let p = pool("");
        let defaults = JobDefaults { launcher: "l", pool: &p, repo: "o/r", pr: 7, sweep_id: "s" };
        let err = dispatch_plan(&s, &defaults, &mut book).unwrap_err().to_string();
        assert!(err.contains(&format!("{RECIPE_PATH}: not in the repository")), "{err}");
    }

    #[test]
    fn single_node_rows_take_tp_gpus_and_carry_the_row_and_family_flags() {
        let rows = vec![("1k1k", vec![single_node_row("gb200", 2, false), single_node_row("gb200", 4, false)])];
        let mut s = sweep(&["full-sweep-fail-fast", "agentx-fast"], rows, vec![]);
        s.families.push(PlannedFamily {
            name: "agentic".into(),
            job: "sweep-agentic".into(),
            template: Template::SingleNode,
            eval_only: false,
            fail_fast: true,
            agentx_fast: true,
            rows: vec![single_node_row("gb200", 4, true)],
        });
        let out = build(&s, &pool(""), RECIPE).unwrap_or_else(|e| panic!("{e}"));
        let canary = out.plan.canary.as_ref().unwrap();
        assert_eq!((canary.family.as_str(), canary.point.job.gpus), ("single-node 1k1k", 2));
        let env = &canary.point.job.env;
        assert_eq!(
            (env["MAX_MODEL_LEN"].as_str(), env["CONC"].as_str(), env["EVAL_ONLY"].as_str()),
            ("2048", "4", "false")
        );
        assert!(!env.contains_key("NOTE") && !env.contains_key("AIPERF_EXPERIMENTAL_FAST"));
        assert_eq!(env["SWEEP_FAMILY"], "single-node 1k1k");
        let agentic = &out.plan.families[1].points[0].job;
        assert_eq!(agentic.env["AIPERF_EXPERIMENTAL_FAST"], "1");
        assert_eq!((agentic.gpus, agentic.nodes, agentic.recipe.is_none()), (4, 1, true));
    }

    /// A launcher's `--set` is part of the recipe the row binds to (decision TD9): the variant's
    /// concurrencies are the overridden ones, and a `--set` srtctl would refuse is an error
    /// naming where it is written.
    #[test]
    fn a_launchers_set_arguments_decide_the_variant_a_row_binds_to() {
        let launcher = |set: &str| {
            format!(
                "git clone https://github.com/NVIDIA/srt-slurm.git s\ncp -rT \"$GITHUB_WORKSPACE/benchmarks/multi_node/srt-slurm-recipes/sglang/demo\" recipes/sglang/demo\nsrtctl apply -f \"$CONFIG_FILE\" --set {set}\n"
            )
        };
        let plan = |set: &str, conc: &[i64]| {
            let mut row = multinode_row();
            row.insert("conc".into(), json!(conc));
            let s = sweep(&["full-sweep-enabled"], vec![], vec![row]);
            let tree = MemTree::new()
                .with("configs/dsr1-master.yaml", MASTER)
                .with(RECIPE_PATH, RECIPE)
                .with("configs/runners.yaml", "labels:\n  gb200:\n  - gb200-nv_0\n")
                .with("runners/launch_gb200-nv.sh", launcher(set));
            let mut book = book(&tree);
            let p = pool("");
            let defaults = JobDefaults { launcher: "l", pool: &p, repo: "o/r", pr: 7, sweep_id: "s" };
            dispatch_plan(&s, &defaults, &mut book)
                .map(|out| out.plan.families[0].points[0].job.env["CONFIG_FILE"].clone())
        };
        let set = "benchmark.concurrencies=[4,8]";
        assert_eq!(plan(set, &[4, 8]).unwrap(), "recipes/sglang/demo/disagg-1p1d.yaml:override_dep8_1k1k");
        let err = plan(set, &[4, 8, 16, 32]).unwrap_err().to_string();
        assert!(err.contains("conc: the point has [4, 8, 16, 32], the recipe has [4, 8]"), "{err}");
        let err = plan("benchmark.concurrencies[9]=4", &[4, 8, 16, 32]).unwrap_err().to_string();
        assert!(
            err.contains(
                "runners/launch_gb200-nv.sh:3: --set benchmark.concurrencies[9]=4: benchmark.concurrencies[9]: index"
            ),
            "{err}"
        );
    }

    const NATIVE_PATH: &str = "benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/gb200-fp4/8k1k.yaml";
    /// The shape of the Oct 2026 native single-node recipes (`dsr1/sglang/mi355x-fp4/8k1k.yaml`).
    const NATIVE: &str = "base:\n  schema: 2\n  name: n\n  resources: {gpu_type: gb200, gpus_per_node: 4}\n  engine: sglang\n  roles:\n    agg: {nodes: 1, workers: 1, gpus: 2, args: {tensor-parallel-size: 2}}\nzip_override_tp2_ep1:\n  benchmark:\n    env:\n      CONC: ['4', '8']\nzip_override_tp4_ep1:\n  roles:\n    agg: {gpus: 4, args: {tensor-parallel-size: 4}}\n  benchmark:\n    env:\n      CONC: ['4', '8']\n";
    const NATIVE_MASTER: &str = "dsr1-fp4-gb200-sglang:\n  multinode: false\n  runner: gb200\n  framework: sglang\n  scenarios:\n    fixed-seq-len:\n      - isl: 8192\n        osl: 1024\n        search-space:\n          - tp: 4\n            srt-recipe: benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/gb200-fp4/8k1k.yaml\n";

    fn native_row(tp: i64, conc: i64) -> Row {
        let mut row = single_node_row("gb200", tp, false);
        row.insert("conc".into(), json!(conc));
        row.insert("srt-recipe".into(), json!(NATIVE_PATH));
        row
    }

    fn build_native(rows: Vec<Row>) -> Result<PoolPlan, PlanJobError> {
        let s = sweep(&["full-sweep-enabled"], vec![("8k1k", rows)], vec![]);
        let tree = MemTree::new().with("configs/dsr1-master.yaml", NATIVE_MASTER).with(NATIVE_PATH, NATIVE);
        let mut book = book(&tree);
        let p = pool("");
        let defaults = JobDefaults { launcher: "launch.sh", pool: &p, repo: "o/r", pr: 7, sweep_id: "pr7-abc" };
        dispatch_plan(&s, &defaults, &mut book)
    }

    #[test]
    fn a_native_single_node_row_runs_the_variant_that_serves_it() {
        let out = build_native(vec![native_row(4, 8)]).unwrap_or_else(|e| panic!("{e}"));
        let job = &out.plan.canary.as_ref().unwrap().point.job;
        let recipe = job.recipe.as_ref().unwrap();
        assert_eq!((recipe.path.as_str(), recipe.selector.as_str()), (NATIVE_PATH, "zip_override_tp4_ep1[1]"));
        assert_eq!(job.env["SRT_RECIPE"], format!("{NATIVE_PATH}:zip_override_tp4_ep1[1]"));
        assert_eq!((job.gpus, job.nodes), (4, 1));
        let text = serde_json::to_vec(&out.plan).unwrap();
        assert_eq!(Plan::parse(&text, "generated").unwrap(), out.plan, "the dispatcher accepts it as is");
        // No variant runs concurrency 16: the row is an error naming the recipe, never a job.
        let err = build_native(vec![native_row(4, 16)]).unwrap_err().to_string();
        assert!(err.contains(NATIVE_PATH) && err.contains("no variant serves the row (tp 4 ep 1 conc 16"), "{err}");
    }

    #[test]
    fn rows_of_other_runners_are_skipped_and_a_pool_serving_none_is_an_error() {
        let rows = vec![("1k1k", vec![single_node_row("b200", 2, false), single_node_row("gb200", 4, false)])];
        let s = sweep(&["full-sweep-fail-fast"], rows, vec![]);
        let out = build(&s, &pool(""), RECIPE).unwrap_or_else(|e| panic!("{e}"));
        assert!(out.plan.canary.is_none(), "the canary runs on the b200 pool");
        assert_eq!(out.skipped, [SkippedRow { family: "canary".into(), exp_name: "sn".into(), runner: "b200".into() }]);
        let err = build(&s, &pool("runners = [\"h100\"]"), RECIPE).unwrap_err().to_string();
        assert_eq!(
            err,
            "nothing to dispatch: pool gb200-nv serves none of the sweep's runners (b200, gb200); \
             set its `runners` or pick another pool"
        );
    }

    #[test]
    fn a_row_wider_than_a_node_or_no_sweep_is_an_error() {
        let s = sweep(&["full-sweep-enabled"], vec![("1k1k", vec![single_node_row("gb200", 8, false)])], vec![]);
        let err = build(&s, &pool(""), RECIPE).unwrap_err().to_string();
        assert_eq!(err, "point canary (sn): tp 8 does not fit one node of pool gb200-nv (4 GPUs)");
        let none = sweep(&["evals-only"], vec![], vec![multinode_row()]);
        assert_eq!(
            build(&none, &pool(""), RECIPE).unwrap_err().to_string(),
            "nothing to dispatch: the labels ask for no sweep"
        );
    }
}
