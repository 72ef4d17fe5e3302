//! From a PR's label decision to the dispatch plans the server runs: the same code path as
//! `sweepgate plan --format dispatch` (matrix of the changelog change base→head, canary,
//! families, fail-fast, modifiers, recipe selection), once per configured pool. Rows that no
//! pool serves are listed with their runner. Points are ordered by CI priority (spec 10 §9,
//! `configs/ci-priority.yaml` at the default branch's tip) within each family, so the highest-priority pending
//! point always starts first. The policy is the target branch's (decision 6), never the head's.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::plan::{plan, SweepPlan};
use super::plan_input::{Plan, MAX_POINTS};
use super::plan_jobs::{dispatch_plan, JobDefaults, PlanJobError, SkippedRow};
use super::pool::PoolProfile;
use crate::domain::ci_priority::{self, CiPriority, PolicySource};
use crate::domain::launch::recipe_sources;
use crate::domain::srt::RecipeBook;
use crate::intake::labels::LabelDecision;
use crate::matrix::diff::{additions_from_unified_diff, git_diff};
use crate::matrix::inputs::configs_dir;
use crate::matrix::process::{process, ProcessOptions, Revision};
use crate::matrix::{MatrixError, Row};
use crate::repo::{GitTree, Layout, Logical, RepoError, Tree};
use crate::yaml::{self, YamlError};

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
    /// Which CI priority policy scored them.
    pub priority_policy: PolicySource,
}

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("benchmark repository {path}: {source}")]
    Repo { path: String, source: RepoError },
    #[error("the matrix of the changelog change: {0}")]
    Matrix(#[from] MatrixError),
    #[error("pool {pool}: {source}")]
    Pool { pool: String, source: PlanJobError },
    #[error("CI priority policy (fix the file or remove it to use spec 10 §9's defaults): {0}")]
    CiPriority(YamlError),
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
    /// The tip of the PR's target branch: where the CI-priority policy is read.
    pub policy_sha: &'a str,
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
    let options = ProcessOptions {
        trim_conc: false,
        all_evals: decision.all_evals,
        evals_only: decision.evals_only,
        max_rows: Some(MAX_POINTS),
    };
    let matrix = process(
        &additions,
        &changelog,
        Revision { name: target.base_sha, tree: &base },
        Revision { name: target.head_sha, tree: &head },
        &layout,
        options,
    )?;
    let sweep = plan(decision, &matrix);
    let policy_tree = GitTree::open(target.repo_dir, target.policy_sha).map_err(repo_err)?;
    let (policy, priority_policy) = priority_policy(&policy_tree, target.policy_sha, &head, &layout)?;
    let mut recipes = RecipeBook::new(&head, recipe_sources(&head).map_err(repo_err)?);
    let mut launch = Launch { plans: Vec::new(), skipped: Vec::new(), priorities: HashMap::new(), priority_policy };
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
                order_by_priority(&mut pool_plan.plan, &policy, target.labels, &mut launch.priorities);
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

/// The policy file at the default branch's tip (`policy`), or spec 10 §9's table when the file
/// is absent there (a named source). The head's version is only compared: a PR cannot order
/// its own points (docs/security.md §1).
fn priority_policy(
    policy: &dyn Tree,
    at: &str,
    head: &dyn Tree,
    layout: &Layout,
) -> Result<(CiPriority, PolicySource), LaunchError> {
    let path = format!("{}/{}", configs_dir(policy, layout)?, ci_priority::FILE);
    let repo_err = |source| LaunchError::Repo { path: path.clone(), source };
    let bytes = policy.read(&path).map_err(repo_err)?;
    let proposed = head.read(&path).map_err(repo_err)? != bytes;
    let at = at.to_owned();
    let Some(bytes) = bytes else {
        return Ok((CiPriority::spec_default(), PolicySource::SpecDefault { path, at, proposed }));
    };
    let text = yaml::text_of(&bytes).map_err(|e| LaunchError::CiPriority(e.in_file(&path)))?;
    let policy = CiPriority::parse(text, &path).map_err(LaunchError::CiPriority)?;
    Ok((policy, PolicySource::File { path, at, proposed }))
}

/// Stable sort of each family's points, highest priority first; records every priority.
/// The server's sweeps come from pull-request events (the policy's `event` table).
fn order_by_priority(plan: &mut Plan, policy: &CiPriority, labels: &[String], priorities: &mut HashMap<String, f64>) {
    let score = |row: &serde_json::Map<String, Value>| policy.score(row, "pull_request", labels);
    if let Some(canary) = &plan.canary {
        priorities.insert(canary.point.id.clone(), score(&canary.point.row));
    }
    for family in &mut plan.families {
        for point in &family.points {
            priorities.insert(point.id.clone(), score(&point.row));
        }
        family.points.sort_by(|a, b| priorities[&b.id].total_cmp(&priorities[&a.id]));
    }
}

#[cfg(test)]
mod tests {
    use super::super::plan_input::{Family, JobSpec, Point};
    use super::*;
    use crate::repo::MemTree;
    use serde_json::json;

    const POLICY: &str = "version: 1\nbase-score: 1\nadjustments:\n  precision: {fp8: 3}\n\
                          labels:\n  skip-queue: {name: skip_queue}\n  patchwork: {names: [ci-patchwork], score: 0}\n";

    fn point(id: &str, precision: &str) -> Point {
        let row = json!({"framework": "sglang", "precision": precision}).as_object().cloned().unwrap_or_default();
        let job = JobSpec {
            script: "s".into(),
            env: Default::default(),
            gpus: 1,
            nodes: 1,
            time_limit_minutes: 1,
            recipe: None,
        };
        Point { id: id.into(), row, job }
    }

    /// The family's point order after scoring with the policy `tree` holds (the head: `head`).
    fn order(tree: &MemTree, head: &MemTree) -> (Vec<String>, PolicySource) {
        let (policy, source) = priority_policy(tree, "tip", head, &Layout::default()).unwrap_or_else(|e| panic!("{e}"));
        let points = vec![point("fp8-point", "fp8"), point("fp4-point", "fp4")];
        let families = vec![Family { name: "f".into(), fail_fast: false, points }];
        let mut plan = Plan { version: 1, sweep_id: "s".into(), repo: "o/r".into(), pr: 1, canary: None, families };
        order_by_priority(&mut plan, &policy, &[], &mut HashMap::new());
        (plan.families[0].points.iter().map(|p| p.id.clone()).collect(), source)
    }

    #[test]
    fn the_target_branchs_ci_priority_file_orders_the_points_and_its_absence_is_named() {
        let path = || "configs/ci-priority.yaml".to_owned();
        let (ids, source) = order(&MemTree::new(), &MemTree::new());
        assert_eq!(ids, ["fp4-point", "fp8-point"], "spec 10 §9: fp4 +0.75");
        assert_eq!(source, PolicySource::SpecDefault { path: path(), at: "tip".into(), proposed: false });
        let with_policy = MemTree::new().with("configs/ci-priority.yaml", POLICY);
        let (ids, source) = order(&with_policy, &with_policy);
        assert_eq!(ids, ["fp8-point", "fp4-point"], "the repository's policy: fp8 +3");
        assert_eq!(source, PolicySource::File { path: path(), at: "tip".into(), proposed: false });
    }

    #[test]
    fn the_pr_heads_ci_priority_file_is_only_proposed() {
        let path = || "configs/ci-priority.yaml".to_owned();
        let head = MemTree::new().with("configs/ci-priority.yaml", POLICY);
        let (ids, source) = order(&MemTree::new(), &head);
        assert_eq!(ids, ["fp4-point", "fp8-point"], "the head's policy (fp8 +3) orders nothing");
        assert_eq!(source, PolicySource::SpecDefault { path: path(), at: "tip".into(), proposed: true });
        // A head that makes every priority NaN-prone cannot reach the engine either.
        let hostile = MemTree::new().with(
            "configs/ci-priority.yaml",
            POLICY.replace("base-score: 1", "base-score: 1e308").replace("fp8: 3", "fp8: 1e308"),
        );
        let (_, source) = order(&MemTree::new().with("configs/ci-priority.yaml", POLICY), &hostile);
        assert_eq!(source, PolicySource::File { path: path(), at: "tip".into(), proposed: true });
    }

    #[test]
    fn a_malformed_ci_priority_file_stops_the_launch_with_its_line() {
        let tree = MemTree::new().with("configs/ci-priority.yaml", POLICY.replace("base-score: 1", "base-score: high"));
        let err = priority_policy(&tree, "tip", &tree, &Layout::default()).map(|_| ()).unwrap_err().to_string();
        assert!(err.contains("configs/ci-priority.yaml:2:13: base-score: "), "{err}");
        assert!(err.starts_with("CI priority policy (fix the file or remove it"), "{err}");
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
