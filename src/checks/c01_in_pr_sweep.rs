//! Check 1 — In-PR sweep + evals (spec 30 Check 1, ARCHITECTURE decision 7).

use std::collections::BTreeMap;

use serde_json::json;

use super::{Context, Outcome};
use crate::evidence::{CheckRun, Evidence, Fact};

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
    pub run_id: u64,
    pub benchmark_jobs: usize,
    pub eval_jobs: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Problem {
    Failed { count: usize, example: String },
    Running { count: usize },
    NoBenchmark,
    NoEval,
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
        return Err(Problem::NoEval);
    }
    Ok((bench, evals))
}

/// What examining the PR's check-runs found.
struct Examination {
    best: Option<QualifyingRun>,
    /// (short SHA, run id, why that run does not qualify).
    problems: Vec<(String, u64, Problem)>,
    /// Short SHAs whose check-runs could not be read.
    unreadable: Vec<String>,
}

/// Examines every (in-PR commit, run) pair; the newest qualifying one wins.
fn examine(evidence: &Evidence) -> Examination {
    let mut problems = Vec::new();
    let mut unreadable = Vec::new();
    let mut best = None;
    for sha in &evidence.commits {
        let short = sha.get(..7).unwrap_or(sha).to_owned();
        let runs = match evidence.check_runs.get(sha) {
            None => continue,
            Some(Fact::Unavailable(_)) => {
                unreadable.push(short);
                continue;
            }
            Some(Fact::Ok(runs)) => runs,
        };
        let mut by_run: BTreeMap<u64, Vec<&CheckRun>> = BTreeMap::new();
        for run in runs.iter().filter(|r| family(&r.name).is_some()) {
            by_run.entry(run.run_id.unwrap_or(0)).or_default().push(run);
        }
        for (run_id, group) in by_run {
            match judge_run(&group) {
                Ok((benchmark_jobs, eval_jobs)) => {
                    best = Some(QualifyingRun { sha: sha.clone(), run_id, benchmark_jobs, eval_jobs });
                }
                Err(problem) => problems.push((short.clone(), run_id, problem)),
            }
        }
    }
    Examination { best, problems, unreadable }
}

/// The newest in-PR (commit, run) whose benchmark and eval jobs all succeeded.
pub fn qualifying_run(evidence: &Evidence) -> Option<QualifyingRun> {
    examine(evidence).best
}

pub fn check(cx: &Context) -> Outcome {
    let Examination { best, problems, unreadable } = examine(cx.evidence);
    if let Some(q) = best {
        return Outcome::pass("qualifying_run")
            .arg("sha", q.sha.get(..7).unwrap_or(&q.sha))
            .arg("bench", q.benchmark_jobs)
            .arg("evals", q.eval_jobs)
            .arg("run", q.run_id)
            .evidence(format!("run {}", q.run_id));
    }
    let runs: Vec<serde_json::Value> = problems
        .iter()
        .map(|(sha, run, problem)| match problem {
            Problem::Failed { count, example } => {
                json!({"sha": sha, "run": run, "problem": "failed", "count": count, "example": example})
            }
            Problem::Running { count } => json!({"sha": sha, "run": run, "problem": "running", "count": count}),
            Problem::NoBenchmark => json!({"sha": sha, "run": run, "problem": "no_bench"}),
            Problem::NoEval => json!({"sha": sha, "run": run, "problem": "no_eval"}),
        })
        .collect();
    let mut outcome = Outcome::fail("no_qualifying_run").arg("runs", runs).arg("unreadable", unreadable);
    for (_, run, _) in &problems {
        outcome = outcome.evidence(format!("run {run}"));
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, run};
    use crate::checks::Status;

    fn outcome(e: &Evidence) -> Outcome {
        check(&Context::new(e))
    }

    #[test]
    fn passes_with_successful_benchmark_and_eval_jobs_on_an_in_pr_commit() {
        let mut e = evidence();
        e.check_runs.insert(
            "b".repeat(40),
            Fact::Ok(vec![
                run("single-node 8k1k / p1 | dsr1 fp4 b200 sgl TP8 c4", "success", 7),
                run("single-node 8k1k / p1 | dsr1 fp4 b200 sgl TP8 c8", "success", 7),
                run("eval / p1 | dsr1 fp4 b200 sgl TP8 c64 | eval", "success", 7),
                run("collect-evals / collect-evals", "success", 7),
            ]),
        );
        let o = outcome(&e);
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["bench"], 2);
        assert_eq!(o.message.args["evals"], 1);
        assert_eq!(qualifying_run(&e).unwrap().run_id, 7);
    }

    #[test]
    fn a_green_sweep_on_a_commit_rebased_out_of_the_pr_does_not_count() {
        let mut e = evidence();
        e.check_runs.insert(
            "f".repeat(40), // not in e.commits
            Fact::Ok(vec![run("single-node 8k1k / x", "success", 9), run("eval / x", "success", 9)]),
        );
        let o = outcome(&e);
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.key, "no_qualifying_run");
    }

    #[test]
    fn skipped_evals_and_aggregators_are_not_evidence() {
        let mut e = evidence();
        e.check_runs.insert(
            "b".repeat(40),
            Fact::Ok(vec![
                run("single-node 8k1k / x", "success", 3),
                run("eval / x", "skipped", 3),
                run("collect-evals / collect-evals", "success", 3),
            ]),
        );
        let o = outcome(&e);
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.args["runs"][0]["problem"], "no_eval");
    }

    #[test]
    fn one_failed_job_disqualifies_its_run() {
        let mut e = evidence();
        e.check_runs.insert(
            "b".repeat(40),
            Fact::Ok(vec![
                run("multi-node agentic / x", "success", 4),
                run("multi-node agentic / y", "failure", 4),
                run("multi-node agentic eval / x", "success", 4),
            ]),
        );
        let o = outcome(&e);
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.args["runs"][0]["problem"], "failed");
        assert_eq!(o.message.args["runs"][0]["example"], "multi-node agentic / y");
    }

    #[test]
    fn unreadable_check_runs_never_pass() {
        let mut e = evidence();
        e.check_runs.insert("b".repeat(40), Fact::Unavailable("HTTP 502".into()));
        let o = outcome(&e);
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.args["unreadable"][0], "bbbbbbb");
    }
}
