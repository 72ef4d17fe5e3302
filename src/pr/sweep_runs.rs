//! The sweep runs of the PR: which in-PR (commit, run) pair stands for the head (Check 1's
//! subject, the run Checks 2, 14 and 18 and the performance view read, and what the collector
//! fetches first), and why each other run does not.

use std::collections::BTreeMap;

use serde_json::json;

use super::generated;
use super::{reason, Reason};
use crate::evidence::{CheckRun, Evidence, Fact, WorkflowRun};
use crate::matrix::process::parse_additions;

/// Benchmark job families, by display-name prefix (spec 10 §6.1; e2e-tests.yml prefixes too).
const BENCHMARK_PREFIXES: [&str; 9] = [
    "canary /",
    "single-node 1k1k /",
    "single-node 8k1k /",
    "single-node /",
    "multi-node 1k1k /",
    "multi-node 8k1k /",
    "multi-node /",
    "agentic /",
    "multi-node agentic /",
];
const EVAL_PREFIXES: [&str; 4] = ["eval /", "agentic eval /", "multi-node eval /", "multi-node agentic eval /"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Benchmark,
    Eval,
}

fn family(name: &str) -> Option<Family> {
    let name = name.trim_start();
    if EVAL_PREFIXES.iter().any(|p| name.starts_with(p)) {
        Some(Family::Eval)
    } else if BENCHMARK_PREFIXES.iter().any(|p| name.starts_with(p)) {
        Some(Family::Benchmark)
    } else {
        None // aggregators (collect-evals, …) and plain jobs never count
    }
}

/// The passing run Checks 2, 14 and 18 build on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QualifyingRun {
    pub sha: String,
    /// The key of the run in `Evidence.runs` and `artifacts` whose eval jobs passed (Check 2).
    pub run_id: u64,
    /// The run whose benchmark jobs passed (Checks 14 and 18): `run_id` unless the commit's
    /// benchmark and eval jobs ran in separate runs (1.f, decision CO6).
    pub benchmark_run_id: u64,
    pub benchmark_jobs: usize,
    pub eval_jobs: usize,
    /// Set when the run is a sweep sweepgate ran itself (decision L7).
    pub sweep_id: Option<String>,
    /// False when the run has no eval job because the PR's matrix expects none (1.c).
    pub evals_expected: bool,
}

impl QualifyingRun {
    /// How reports name the run: the sweep id of a sweepgate sweep, else the run id (a number).
    pub fn label(&self) -> serde_json::Value {
        self.sweep_id.as_ref().map_or_else(|| json!(self.run_id), |sweep| json!(sweep))
    }

    /// The evidence line that names the run.
    pub fn evidence_line(&self) -> String {
        match &self.sweep_id {
            Some(sweep) => format!("sweepgate sweep {sweep}"),
            None => format!("run {}", self.run_id),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    Failed {
        count: usize,
        example: String,
    },
    Running {
        count: usize,
    },
    NoBenchmark,
    /// Every executed job succeeded, and there are benchmark jobs but no eval job.
    NoEval {
        bench: usize,
    },
}

fn judge_run(runs: &[&CheckRun]) -> Result<(usize, usize), Problem> {
    let mut failed: Vec<&str> = Vec::new();
    let mut running = 0;
    let (mut bench, mut evals) = (0, 0);
    for run in runs {
        let Some(fam) = family(&run.name) else { continue };
        if run.status != "completed" {
            running += 1;
            continue;
        }
        match run.conclusion.as_deref() {
            Some("skipped") => {}
            Some("success") => match fam {
                Family::Benchmark => bench += 1,
                Family::Eval => evals += 1,
            },
            _ => failed.push(&run.name),
        }
    }
    if let Some(first) = failed.first() {
        return Err(Problem::Failed { count: failed.len(), example: (*first).to_owned() });
    }
    if running > 0 {
        return Err(Problem::Running { count: running });
    }
    if bench == 0 {
        return Err(Problem::NoBenchmark);
    }
    if evals == 0 {
        return Err(Problem::NoEval { bench });
    }
    Ok((bench, evals))
}

/// A sweepgate sweep counts like a run: completed `success`, with stored benchmark and eval
/// results (points, not jobs: one `bmk_`/`eval_` artifact per point). Results that could not be
/// read are named as the failure.
fn judge_sweep(check: &CheckRun, run: &WorkflowRun) -> Result<(usize, usize), Problem> {
    if check.status != "completed" {
        return Err(Problem::Running { count: 1 });
    }
    if check.conclusion.as_deref() != Some("success") {
        let conclusion = check.conclusion.as_deref().unwrap_or("none");
        return Err(Problem::Failed { count: 1, example: format!("{} concluded {conclusion}", check.name) });
    }
    if let Some(Fact::Unavailable(reason)) = run.artifacts.get("*") {
        return Err(Problem::Failed { count: 1, example: format!("its results: {reason}") });
    }
    let count = |prefix: &str| run.artifacts.keys().filter(|a| a.starts_with(prefix)).count();
    match (count("bmk_"), count("eval_")) {
        (0, _) => Err(Problem::NoBenchmark),
        (bench, 0) => Err(Problem::NoEval { bench }),
        counts => Ok(counts),
    }
}

/// What examining the PR's check-runs found.
pub struct Examination {
    pub best: Option<QualifyingRun>,
    /// The newest run that succeeded with benchmark jobs and no eval job: it qualifies only
    /// when the PR's matrix expects no eval (1.c).
    pub benchmarks_only: Option<QualifyingRun>,
    /// (short SHA, run label, why that run does not qualify).
    pub problems: Vec<(String, serde_json::Value, Problem)>,
    /// Short SHAs whose check-runs could not be read.
    pub unreadable: Vec<String>,
}

/// Examines every (in-PR commit, run) pair; the newest qualifying one wins.
pub fn examine(evidence: &Evidence) -> Examination {
    let mut problems = Vec::new();
    let mut unreadable = Vec::new();
    let mut best = None;
    let mut benchmarks_only = None;
    for sha in &evidence.commits {
        let short = sha.get(..7).unwrap_or(sha).to_owned();
        let runs = match evidence.check_runs.get(sha) {
            // A commit whose check-runs the evidence lacks is as unknown as an unreadable one.
            None | Some(Fact::Unavailable(_)) => {
                unreadable.push(short);
                continue;
            }
            Some(Fact::Ok(runs)) => runs,
        };
        let mut by_run: BTreeMap<u64, Vec<&CheckRun>> = BTreeMap::new();
        for run in runs.iter().filter(|r| family(&r.name).is_some()) {
            by_run.entry(run.run_id.unwrap_or(0)).or_default().push(run);
        }
        let own_run_qualified = by_run.values().any(|group| judge_run(group).is_ok());
        // Upstream asks per commit (1.f): a green benchmark run and a separate green eval run on
        // the same in-PR commit qualify together, as long as every executed job succeeded.
        if !own_run_qualified && by_run.len() > 1 {
            let all: Vec<&CheckRun> = by_run.values().flatten().copied().collect();
            let newest = |wanted: Family| {
                all.iter().filter(|r| family(&r.name) == Some(wanted)).filter_map(|r| r.run_id).max().unwrap_or(0)
            };
            if let Ok((benchmark_jobs, eval_jobs)) = judge_run(&all) {
                best = Some(QualifyingRun {
                    sha: sha.clone(),
                    run_id: newest(Family::Eval),
                    benchmark_run_id: newest(Family::Benchmark),
                    benchmark_jobs,
                    eval_jobs,
                    sweep_id: None,
                    evals_expected: true,
                });
            }
        }
        for (run_id, group) in by_run {
            let found = |benchmark_jobs, eval_jobs| QualifyingRun {
                sha: sha.clone(),
                run_id,
                benchmark_run_id: run_id,
                benchmark_jobs,
                eval_jobs,
                sweep_id: None,
                evals_expected: eval_jobs > 0,
            };
            match judge_run(&group) {
                Ok((benchmark_jobs, eval_jobs)) => best = Some(found(benchmark_jobs, eval_jobs)),
                Err(problem) => {
                    if let Problem::NoEval { bench } = problem {
                        benchmarks_only = Some(found(bench, 0));
                    }
                    problems.push((short.clone(), json!(run_id), problem));
                }
            }
        }
        // sweepgate's own sweeps on this commit, preferred over a workflow run on the same one.
        for check in runs {
            let Some((run, sweep_id)) = check
                .run_id
                .and_then(|id| evidence.runs.get(&id))
                .and_then(|run| Some((run, run.sweep_id.clone()?)))
                .filter(|(run, _)| run.head_sha == *sha)
            else {
                continue;
            };
            let found = |benchmark_jobs, eval_jobs| QualifyingRun {
                sha: sha.clone(),
                run_id: run.id,
                benchmark_run_id: run.id,
                benchmark_jobs,
                eval_jobs,
                sweep_id: Some(sweep_id.clone()),
                evals_expected: eval_jobs > 0,
            };
            match judge_sweep(check, run) {
                Ok((benchmark_jobs, eval_jobs)) => best = Some(found(benchmark_jobs, eval_jobs)),
                Err(problem) => {
                    if let Problem::NoEval { bench } = problem {
                        benchmarks_only = Some(found(bench, 0));
                    }
                    problems.push((short.clone(), json!(sweep_id), problem));
                }
            }
        }
    }
    Examination { best, benchmarks_only, problems, unreadable }
}

/// Why the PR's matrix has no eval job (1.c), or `Err` when that cannot be decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoEvalReason {
    /// Its changelog entries are all `append-only`, which generate no evals (spec 20 §8).
    AppendOnly,
    /// No generated point is eval-eligible (8k1k at concurrency >= MIN_EVAL_CONC, agentic).
    NoEligiblePoint,
}

/// Whether the PR's matrix (upstream's processor over its appended changelog entries, with its
/// `all-evals`/`evals-only` labels) has eval jobs: `Ok(None)` when it does, `Ok(Some(why))` when
/// it has benchmark jobs and none, `Err` naming what could not be read.
pub fn no_eval_expected(ev: &Evidence) -> Result<Option<NoEvalReason>, Reason> {
    let Some(changelog) = generated::pr_changelog(ev)? else {
        return Err(reason("no_changelog_entry"));
    };
    let path = &changelog.path;
    let entries = parse_additions(&changelog.additions, path, changelog.options)
        .map_err(|e| reason("path_error").arg("path", path.as_str()).error(e))?
        .entries;
    let out = changelog.process(ev).map_err(|e| reason("pr_matrix_not_generated").error(e))?;
    let evals =
        out.evals.len() + out.agentic_evals.len() + out.multinode_evals.len() + out.multinode_agentic_evals.len();
    let benchmarks = out.single_node.values().chain(out.multi_node.values()).map(Vec::len).sum::<usize>();
    Ok(match (evals, benchmarks) {
        (0, 1..) if entries.iter().all(|e| e.append_only) => Some(NoEvalReason::AppendOnly),
        (0, 1..) => Some(NoEvalReason::NoEligiblePoint),
        _ => None,
    })
}

/// The newest in-PR (commit, run) whose benchmark and eval jobs all succeeded; else the newest
/// one with successful benchmark jobs and no eval job, when the PR's matrix expects none.
pub fn qualifying_run(evidence: &Evidence) -> Option<QualifyingRun> {
    let found = examine(evidence);
    found.best.or_else(|| found.benchmarks_only.filter(|_| matches!(no_eval_expected(evidence), Ok(Some(_)))))
}
