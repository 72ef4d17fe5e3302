//! Check 1 — In-PR sweep + evals (spec 30 Check 1, ARCHITECTURE decision 7).

use std::collections::BTreeMap;

use serde_json::json;

use super::scan::{role, Role};
use super::{Context, Outcome};
use crate::evidence::{CheckRun, Evidence, Fact, WorkflowRun};

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
    /// The key of the run in `Evidence.runs` and `artifacts`.
    pub run_id: u64,
    pub benchmark_jobs: usize,
    pub eval_jobs: usize,
    /// Set when the run is a sweep sweepgate ran itself (decision L7).
    pub sweep_id: Option<String>,
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
        (_, 0) => Err(Problem::NoEval),
        counts => Ok(counts),
    }
}

/// What examining the PR's check-runs found.
struct Examination {
    best: Option<QualifyingRun>,
    /// (short SHA, run label, why that run does not qualify).
    problems: Vec<(String, serde_json::Value, Problem)>,
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
        for (run_id, group) in by_run {
            match judge_run(&group) {
                Ok((benchmark_jobs, eval_jobs)) => {
                    best = Some(QualifyingRun { sha: sha.clone(), run_id, benchmark_jobs, eval_jobs, sweep_id: None });
                }
                Err(problem) => problems.push((short.clone(), json!(run_id), problem)),
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
            match judge_sweep(check, run) {
                Ok((benchmark_jobs, eval_jobs)) => {
                    let sweep_id = Some(sweep_id);
                    best =
                        Some(QualifyingRun { sha: sha.clone(), run_id: run.id, benchmark_jobs, eval_jobs, sweep_id });
                }
                Err(problem) => problems.push((short.clone(), json!(sweep_id), problem)),
            }
        }
    }
    Examination { best, problems, unreadable }
}

/// The newest in-PR (commit, run) whose benchmark and eval jobs all succeeded.
pub fn qualifying_run(evidence: &Evidence) -> Option<QualifyingRun> {
    examine(evidence).best
}

/// Why a sweep on an older in-PR commit does not stand for the head.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NotEquivalent {
    /// A file the sweep ran differs at the head (path, how).
    Changed(String, &'static str),
    /// The evidence cannot tell (what is missing).
    Unverifiable(String),
}

fn blobs_at<'e>(ev: &'e Evidence, sha: &str) -> Result<&'e BTreeMap<String, String>, NotEquivalent> {
    let short = sha.get(..7).unwrap_or(sha);
    match ev.blobs.get(sha) {
        Some(Fact::Ok(blobs)) => Ok(blobs),
        Some(Fact::Unavailable(reason)) => {
            Err(NotEquivalent::Unverifiable(format!("the blob SHAs at {short} could not be read ({reason})")))
        }
        None => Err(NotEquivalent::Unverifiable(format!("the evidence has no blob SHAs at {short}"))),
    }
}

/// Whether every recipe, launcher script and master config the sweep at `sweep_sha` ran is
/// blob-identical at the head (ARCHITECTURE decision 7; the published "keeps the recipe blob"
/// argument). The collector records in `Evidence.blobs` the files the sweep's points ran at both
/// commits. A master config whose blob differs is a change: its entries cannot be compared
/// without its text at the sweep commit, which the evidence does not carry (decision F5).
fn head_equivalent(ev: &Evidence, sweep_sha: &str) -> Result<usize, NotEquivalent> {
    let (sweep, head) = (blobs_at(ev, sweep_sha)?, blobs_at(ev, &ev.pull_request.head_sha)?);
    let ran = |path: &&String| matches!(role(path), Role::Script | Role::Recipe | Role::MasterConfig);
    let paths: std::collections::BTreeSet<&String> = sweep.keys().chain(head.keys()).filter(ran).collect();
    if paths.is_empty() {
        return Err(NotEquivalent::Unverifiable(
            "the evidence records no blob SHA of a recipe, launcher script or master config the sweep ran".into(),
        ));
    }
    for path in &paths {
        let how = match (sweep.get(*path), head.get(*path)) {
            (Some(a), Some(b)) if a == b => continue,
            (Some(_), Some(_)) => "changed",
            (Some(_), None) => "removed",
            _ => "added",
        };
        return Err(NotEquivalent::Changed((*path).clone(), how));
    }
    Ok(paths.len())
}

pub fn check(cx: &Context) -> Outcome {
    let ev = cx.evidence;
    let Examination { best, problems, unreadable } = examine(ev);
    if let Some(q) = best {
        let short = |sha: &str| sha.get(..7).unwrap_or(sha).to_owned();
        let head = &ev.pull_request.head_sha;
        let base = |key| {
            Outcome::new(if key == "qualifying_run" { super::Status::Pass } else { super::Status::Fail }, key)
                .arg("sha", short(&q.sha))
                .arg("bench", q.benchmark_jobs)
                .arg("evals", q.eval_jobs)
                .arg("run", q.label())
                .arg("head", short(head))
                .evidence(q.evidence_line())
        };
        if q.sha == *head {
            return base("qualifying_run").arg("files", 0);
        }
        return match head_equivalent(ev, &q.sha) {
            Ok(files) => base("qualifying_run").arg("files", files),
            Err(NotEquivalent::Changed(path, how)) => base("head_changed").arg("file", path).arg("how", how),
            Err(NotEquivalent::Unverifiable(reason)) => base("head_unverifiable").arg("reason", reason),
        };
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
        outcome = outcome.evidence(match run.as_str() {
            Some(sweep) => format!("sweepgate sweep {sweep}"),
            None => format!("run {run}"),
        });
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

    fn green_on_the_older_commit() -> Evidence {
        let mut e = evidence();
        e.check_runs.insert(
            "a".repeat(40),
            Fact::Ok(vec![run("single-node 8k1k / x", "success", 5), run("eval / x", "success", 5)]),
        );
        e.check_runs.insert("b".repeat(40), Fact::Ok(vec![]));
        let files = |recipe: &str| {
            Fact::Ok(BTreeMap::from([
                ("benchmarks/multi_node/srt-slurm-recipes/sglang/x/disagg.yaml".to_owned(), recipe.to_owned()),
                ("benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200_sglang.sh".to_owned(), "2b7c".to_owned()),
                ("configs/nvidia-master.yaml".to_owned(), "77aa".to_owned()),
                ("README.md".to_owned(), recipe.to_owned()),
            ]))
        };
        e.blobs.insert("a".repeat(40), files("1ea4e7f"));
        e.blobs.insert("b".repeat(40), files("1ea4e7f"));
        e
    }

    #[test]
    fn a_sweep_on_an_older_commit_passes_only_when_the_head_keeps_its_blobs() {
        let recipe = "benchmarks/multi_node/srt-slurm-recipes/sglang/x/disagg.yaml";
        let with_head = |path: &str, blob: Option<&str>| {
            let mut e = green_on_the_older_commit();
            if let Some(Fact::Ok(head)) = e.blobs.get_mut(&"b".repeat(40)) {
                match blob {
                    Some(blob) => head.insert(path.into(), blob.into()),
                    None => head.remove(path),
                };
            }
            outcome(&e)
        };
        let o = outcome(&green_on_the_older_commit());
        assert_eq!((o.status, o.message.args["files"].clone()), (Status::Pass, json!(3)), "{o:?}");
        assert_eq!(
            with_head("README.md", Some("docs only")).status,
            Status::Pass,
            "a file the sweep did not run may change"
        );
        let o = with_head(recipe, Some("9f00d"));
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "head_changed"));
        assert_eq!((o.message.args["file"].as_str(), o.message.args["how"].as_str()), (Some(recipe), Some("changed")));
        assert_eq!(with_head(recipe, None).message.args["how"], "removed");
        let master = with_head("configs/nvidia-master.yaml", Some("88bb"));
        assert_eq!(master.message.args["file"], "configs/nvidia-master.yaml", "a changed master config is named");
    }

    #[test]
    fn a_sweep_on_an_older_commit_without_blobs_is_unverifiable() {
        let mut e = green_on_the_older_commit();
        e.blobs.insert("b".repeat(40), Fact::Unavailable("HTTP 502".into()));
        let o = outcome(&e);
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "head_unverifiable"));
        assert!(o.message.args["reason"].as_str().is_some_and(|r| r.contains("bbbbbbb") && r.contains("HTTP 502")));
        e.blobs.clear();
        assert_eq!(outcome(&e).message.key, "head_unverifiable", "format 1 has no blobs");
        e.blobs.insert("a".repeat(40), Fact::Ok(BTreeMap::new()));
        e.blobs.insert("b".repeat(40), Fact::Ok(BTreeMap::new()));
        assert_eq!(outcome(&e).message.key, "head_unverifiable", "nothing recorded proves nothing");
    }

    /// A sweepgate sweep (check run 900) on `sha`, as the collector attaches it.
    fn with_sweep(sha: &str, conclusion: &str, artifacts: &[(&str, Fact<()>)]) -> Evidence {
        let mut e = evidence();
        let mut check = run("sweepgate/sweep", conclusion, 900);
        check.details_url = "https://sweepgate.example/prs/example/bench/42".into();
        e.check_runs.insert(sha.into(), Fact::Ok(vec![check]));
        e.runs.insert(
            900,
            WorkflowRun {
                id: 900,
                name: "sweepgate/sweep".into(),
                path: String::new(),
                head_sha: sha.into(),
                event: "sweepgate".into(),
                status: "completed".into(),
                conclusion: Some(conclusion.into()),
                artifacts: artifacts.iter().map(|(n, f)| ((*n).to_owned(), f.clone())).collect(),
                archives: BTreeMap::new(),
                jobs: BTreeMap::new(),
                sweep_id: Some("pr42-bbbbbbbbbb-a1".into()),
            },
        );
        e
    }

    #[test]
    fn a_sweepgate_sweep_with_stored_results_is_the_in_pr_sweep_and_is_named() {
        let ok = [("bmk_p1", Fact::Ok(())), ("bmk_p2", Fact::Ok(())), ("eval_p1", Fact::Ok(()))];
        let e = with_sweep(&"b".repeat(40), "success", &ok);
        let o = outcome(&e);
        assert_eq!((o.status, o.message.key.as_str()), (Status::Pass, "qualifying_run"), "{o:?}");
        assert_eq!(o.message.args["run"], "pr42-bbbbbbbbbb-a1");
        assert_eq!((o.message.args["bench"].clone(), o.message.args["evals"].clone()), (json!(2), json!(1)));
        assert_eq!(o.evidence, ["sweepgate sweep pr42-bbbbbbbbbb-a1"]);
        let q = qualifying_run(&e).unwrap();
        assert_eq!((q.run_id, q.sweep_id.as_deref()), (900, Some("pr42-bbbbbbbbbb-a1")));
    }

    #[test]
    fn a_sweepgate_sweep_that_failed_or_cannot_be_read_does_not_count() {
        let ok = [("bmk_p1", Fact::Ok(())), ("eval_p1", Fact::Ok(()))];
        let o = outcome(&with_sweep(&"b".repeat(40), "failure", &ok));
        assert_eq!((o.status, o.message.args["runs"][0]["problem"].as_str()), (Status::Fail, Some("failed")));
        assert_eq!(o.message.args["runs"][0]["run"], "pr42-bbbbbbbbbb-a1");
        let unread = [("*", Fact::Unavailable("sweep pr42-bbbbbbbbbb-a1: not stored".into()))];
        let o = outcome(&with_sweep(&"b".repeat(40), "success", &unread));
        assert_eq!(o.status, Status::Fail);
        assert!(o.message.args["runs"][0]["example"].as_str().unwrap().contains("not stored"), "{o:?}");
        let no_eval = [("bmk_p1", Fact::Ok(()))];
        let o = outcome(&with_sweep(&"b".repeat(40), "success", &no_eval));
        assert_eq!(o.message.args["runs"][0]["problem"], "no_eval");
        let o = outcome(&with_sweep(&"f".repeat(40), "success", &ok));
        assert_eq!(o.message.key, "no_qualifying_run", "a sweep on a commit rebased out of the PR");
    }

    #[test]
    fn head_equivalence_applies_to_a_sweepgate_sweep_on_an_older_commit() {
        let ok = [("bmk_p1", Fact::Ok(())), ("eval_p1", Fact::Ok(()))];
        let mut e = with_sweep(&"a".repeat(40), "success", &ok);
        e.check_runs.insert("b".repeat(40), Fact::Ok(vec![]));
        let o = outcome(&e);
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "head_unverifiable"), "{o:?}");
        assert_eq!(o.message.args["run"], "pr42-bbbbbbbbbb-a1");
        let blobs = Fact::Ok(BTreeMap::from([("configs/nvidia-master.yaml".to_owned(), "77aa".to_owned())]));
        e.blobs.insert("a".repeat(40), blobs.clone());
        e.blobs.insert("b".repeat(40), blobs);
        assert_eq!(outcome(&e).status, Status::Pass);
    }

    #[test]
    fn unreadable_check_runs_never_pass() {
        let mut e = evidence();
        e.check_runs.insert("b".repeat(40), Fact::Unavailable("HTTP 502".into()));
        let o = outcome(&e);
        assert_eq!(o.status, Status::Fail);
        assert_eq!(
            o.message.args["unreadable"],
            json!(["aaaaaaa", "bbbbbbb"]),
            "a commit without check-runs is unknown too"
        );
    }
}
