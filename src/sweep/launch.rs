//! From a PR's label decision to the dispatch plans the server runs: the same code path as
//! `sweepgate plan --format dispatch` (matrix of the changelog change base→head, canary,
//! families, fail-fast, modifiers, recipe selection), once per configured pool. Rows that no
//! pool serves are listed with their runner. Points are ordered by CI priority (spec 10 §9)
//! within each family, so the highest-priority pending point always starts first.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::plan::{plan, SweepPlan};
use super::plan_input::Plan;
use super::plan_jobs::{dispatch_plan, JobDefaults, PlanJobError, SkippedRow};
use super::pool::PoolProfile;
use crate::domain::srt::RecipeBook;
use crate::intake::labels::LabelDecision;
use crate::matrix::diff::{additions_from_unified_diff, git_diff};
use crate::matrix::process::{process, ProcessOptions, Revision};
use crate::matrix::{MatrixError, Row};
use crate::repo::{GitTree, Layout, Logical, RepoError};

/// A pool the server dispatches to, with the launcher every job of it runs.
#[derive(Debug, Clone)]
pub struct LaunchPool {
    pub profile: PoolProfile,
    /// Absolute path of the script each job runs (the pool's `launcher` key).
    pub launcher: String,
}

/// The plans of one sweep, one per pool that serves any of its rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub plans: Vec<(String, Plan)>,
    /// Rows no configured pool serves.
    pub skipped: Vec<SkippedRow>,
    /// Point id → CI priority.
    pub priorities: HashMap<String, f64>,
}

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("benchmark repository {path}: {source}")]
    Repo { path: String, source: RepoError },
    #[error("the matrix of the changelog change: {0}")]
    Matrix(#[from] MatrixError),
    #[error("pool {pool}: {source}")]
    Pool { pool: String, source: PlanJobError },
    #[error("the labels ask for no sweep")]
    NoSweep,
}

/// Which PR head to sweep, and how its sweeps are named.
pub struct LaunchTarget<'a> {
    /// The benchmark repository (a local clone holding both commits).
    pub repo_dir: &'a Path,
    pub base_sha: &'a str,
    pub head_sha: &'a str,
    /// owner/name.
    pub repo: &'a str,
    pub pr: u64,
    /// Each pool's plan is `<sweep_id>-<pool>`.
    pub sweep_id: &'a str,
    /// The PR's labels (priority bonuses).
    pub labels: &'a [String],
}

/// Builds the sweep plan of the decision and one dispatch plan per pool.
pub fn build(target: &LaunchTarget<'_>, decision: &LabelDecision, pools: &[LaunchPool]) -> Result<Launch, LaunchError> {
    if !decision.sweep {
        return Err(LaunchError::NoSweep);
    }
    let repo_err = |source| LaunchError::Repo { path: target.repo_dir.display().to_string(), source };
    let base = GitTree::open(target.repo_dir, target.base_sha).map_err(repo_err)?;
    let head = GitTree::open(target.repo_dir, target.head_sha).map_err(repo_err)?;
    let layout = Layout::default();
    let changelog =
        layout.resolve(&head, Logical::Changelog).map_err(repo_err)?.unwrap_or_else(|| "perf-changelog.yaml".into());
    let diff = git_diff(target.repo_dir, base.commit(), head.commit(), &changelog)?;
    let additions = additions_from_unified_diff(&diff, &changelog)?;
    let options = ProcessOptions { trim_conc: false, all_evals: decision.all_evals, evals_only: decision.evals_only };
    let matrix = process(
        &additions,
        &changelog,
        Revision { name: target.base_sha, tree: &base },
        Revision { name: target.head_sha, tree: &head },
        &layout,
        options,
    )?;
    let sweep = plan(decision, &matrix);
    let mut recipes = RecipeBook::new(&head, &layout).map_err(repo_err)?;
    let mut launch = Launch { plans: Vec::new(), skipped: Vec::new(), priorities: HashMap::new() };
    let mut skipped_by_all: Option<Vec<SkippedRow>> = None;
    for pool in pools {
        let id = format!("{}-{}", target.sweep_id, pool.profile.name);
        let defaults = JobDefaults {
            launcher: &pool.launcher,
            pool: &pool.profile,
            repo: target.repo,
            pr: target.pr,
            sweep_id: &id,
        };
        match dispatch_plan(&sweep, &defaults, &mut recipes) {
            Ok(mut pool_plan) => {
                pin_head(&mut pool_plan.plan, target.repo, target.head_sha);
                order_by_priority(&mut pool_plan.plan, target.labels, &mut launch.priorities);
                keep_common(&mut skipped_by_all, pool_plan.skipped);
                launch.plans.push((pool.profile.name.clone(), pool_plan.plan));
            }
            // This pool serves none of the rows: every row is skipped as far as it goes.
            Err(PlanJobError::Empty(_)) if sweep.sweep => keep_common(&mut skipped_by_all, all_rows(&sweep)),
            Err(source) => return Err(LaunchError::Pool { pool: pool.profile.name.clone(), source }),
        }
    }
    launch.skipped = skipped_by_all.unwrap_or_else(|| all_rows(&sweep));
    Ok(launch)
}

/// Every job checks out the benchmark repository at the approved head, as upstream's runners do.
fn pin_head(plan: &mut Plan, repo: &str, head_sha: &str) {
    let canary = plan.canary.iter_mut().map(|c| &mut c.point);
    for point in canary.chain(plan.families.iter_mut().flat_map(|f| f.points.iter_mut())) {
        point.job.env.insert("BENCHMARK_REPO".into(), repo.to_owned());
        point.job.env.insert("BENCHMARK_REPO_SHA".into(), head_sha.to_owned());
    }
}

fn all_rows(sweep: &SweepPlan) -> Vec<SkippedRow> {
    let row = |family: &str, row: &Row| SkippedRow {
        family: family.to_owned(),
        exp_name: row.get("exp-name").and_then(Value::as_str).unwrap_or("?").to_owned(),
        runner: row.get("runner").and_then(Value::as_str).unwrap_or_default().to_owned(),
    };
    let canary = sweep.canary.iter().map(|r| row("canary", r));
    canary.chain(sweep.families.iter().flat_map(|f| f.rows.iter().map(|r| row(&f.name, r)))).collect()
}

fn keep_common(common: &mut Option<Vec<SkippedRow>>, skipped: Vec<SkippedRow>) {
    *common = Some(match common.take() {
        None => skipped,
        Some(before) => before.into_iter().filter(|r| skipped.contains(r)).collect(),
    });
}

/// Stable sort of each family's points, highest priority first; records every priority.
fn order_by_priority(plan: &mut Plan, labels: &[String], priorities: &mut HashMap<String, f64>) {
    if let Some(canary) = &plan.canary {
        priorities.insert(canary.point.id.clone(), row_priority(&canary.point.row, labels));
    }
    for family in &mut plan.families {
        for point in &family.points {
            priorities.insert(point.id.clone(), row_priority(&point.row, labels));
        }
        family.points.sort_by(|a, b| priorities[&b.id].total_cmp(&priorities[&a.id]));
    }
}

/// The CI priority of a matrix row (spec 10 §9, policy version 1 without the AI classifier):
/// higher runs sooner, rounded to 0.001.
pub fn row_priority(row: &serde_json::Map<String, Value>, labels: &[String]) -> f64 {
    let has = |l: &str| labels.iter().any(|x| x == l);
    if (has("ci-patchwork") || has("engine-patch")) && !has("ci-patchwork-waived") {
        return 0.0;
    }
    let text = |k: &str| row.get(k).and_then(Value::as_str).unwrap_or_default();
    let mut score = 1.0;
    if row.contains_key("prefill") {
        score += 1.25;
    }
    if text("precision") == "fp4" {
        score += 0.75;
    }
    if ["mtp", "eagle", "eagle3"].contains(&text("spec-decoding")) {
        score += 0.75;
    }
    let framework = text("framework");
    let prefixed = |p: &str| framework == p || framework.starts_with(&format!("{p}-"));
    if ["sglang", "vllm", "dynamo-sglang", "dynamo-vllm"].iter().any(|p| prefixed(p)) {
        score += 0.5;
    }
    let model = text("model-prefix");
    if model == "kimik3" {
        score += 1.5;
    } else if ["glm5", "glm5.1", "kimik2.5", "dsv4", "minimaxm3", "qwen3.5", "dsr1"].contains(&model) {
        score += 0.75;
    }
    if has("ci-checklist-complete") {
        score += 0.25;
    }
    (score * 1000.0_f64).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(v: Value) -> serde_json::Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn priority_follows_the_policy_table() {
        let plain = row(json!({"framework": "trt", "precision": "fp8", "model-prefix": "gptoss"}));
        assert_eq!(row_priority(&plain, &[]), 1.0);
        let rich = row(json!({"framework": "dynamo-sglang", "precision": "fp4", "model-prefix": "dsr1",
            "spec-decoding": "mtp", "prefill": {}}));
        assert_eq!(row_priority(&rich, &[]), 5.0);
        assert_eq!(row_priority(&rich, &["ci-checklist-complete".into()]), 5.25);
        assert_eq!(row_priority(&rich, &["ci-patchwork".into()]), 0.0);
        assert_eq!(row_priority(&rich, &["ci-patchwork".into(), "ci-patchwork-waived".into()]), 5.0);
        let sglang_like = row(json!({"framework": "sglang-disagg", "model-prefix": "kimik3"}));
        assert_eq!(row_priority(&sglang_like, &[]), 3.0);
    }

    #[test]
    fn rows_skipped_by_every_pool_are_the_ones_listed() {
        let r = |n: &str, runner: &str| SkippedRow { family: "f".into(), exp_name: n.into(), runner: runner.into() };
        let mut common = None;
        keep_common(&mut common, vec![r("a", "gb200"), r("b", "h100")]);
        keep_common(&mut common, vec![r("a", "gb200"), r("c", "b200")]);
        assert_eq!(common.unwrap(), [r("a", "gb200")]);
    }
}
