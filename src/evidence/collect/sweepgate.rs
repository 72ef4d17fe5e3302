//! Sweeps sweepgate ran itself, as evidence (issue 16 item 4, decision L7). The server posts one
//! check run per sweep (named `sweepgate/sweep` by default) whose `external_id` is the sweep id;
//! a completed one on an in-PR commit is read back from the results store
//! ([`results_store::export`]) into the Evidence: a [`WorkflowRun`] keyed by the check run's
//! GitHub id, with `sweep_id` set, and its files under `<check run id>/bmk_<point>/…`,
//! `eval_<point>/…`, `power_<point>/…`, the layout `run-sweep.yml` artifacts have, so Checks 1,
//! 2, 14 and 18 read it as they read a workflow run. Which sources count is `sweep_source`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::evidence::{CheckRun, Evidence, Fact, WorkflowRun};
use crate::sweep::results_store::{self, ResultsStore};

/// Where an in-PR sweep may come from (`sweep_source`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SweepSource {
    /// Sweeps this bot ran (`sweepgate`).
    Sweepgate,
    /// An Actions workflow, by file name (`workflow:run-sweep.yml`).
    Workflow(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("sweep_source {0:?}: expected \"sweepgate\" or \"workflow:<file>.yml\"")]
pub struct SourceError(pub String);

impl std::str::FromStr for SweepSource {
    type Err = SourceError;

    fn from_str(text: &str) -> Result<SweepSource, SourceError> {
        if text == "sweepgate" {
            return Ok(SweepSource::Sweepgate);
        }
        let file = text.strip_prefix("workflow:").ok_or_else(|| SourceError(text.into()))?;
        let plain = !file.is_empty() && !file.contains('/') && (file.ends_with(".yml") || file.ends_with(".yaml"));
        if plain {
            Ok(SweepSource::Workflow(file.to_owned()))
        } else {
            Err(SourceError(text.into()))
        }
    }
}

/// Parses a `sweep_source` list; an empty list would let nothing count, so it is refused too.
pub fn parse_sources(list: &[String]) -> Result<Vec<SweepSource>, SourceError> {
    if list.is_empty() {
        return Err(SourceError(String::new()));
    }
    list.iter().map(|s| s.parse()).collect()
}

/// The collector's settings for sweepgate's own sweeps.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// Only these sources count, in this order of preference.
    pub sources: Vec<SweepSource>,
    /// The name of the server's sweep check runs (`serve --sweep-check-name`).
    pub check_name: String,
    /// `<sweep state>/results`; `None` when this collector cannot read the server's store.
    pub results_dir: Option<PathBuf>,
}

impl Default for SweepOptions {
    fn default() -> Self {
        SweepOptions {
            sources: vec![SweepSource::Sweepgate, SweepSource::Workflow("run-sweep.yml".into())],
            check_name: "sweepgate/sweep".into(),
            results_dir: None,
        }
    }
}

impl SweepOptions {
    fn counts_sweepgate(&self) -> bool {
        self.sources.contains(&SweepSource::Sweepgate)
    }

    fn counts_workflow(&self, path: &str) -> bool {
        let file = path.rsplit('/').next().unwrap_or(path);
        self.sources.iter().any(|s| matches!(s, SweepSource::Workflow(w) if w == file))
    }
}

/// A sweepgate check run found on an in-PR commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepCheck {
    pub sha: String,
    /// The check run's GitHub id: the key of the sweep in `Evidence.runs` and `artifacts`.
    pub check_run_id: u64,
    pub sweep_id: String,
    pub status: String,
    pub conclusion: Option<String>,
}

/// One commit's check runs as evidence, and the sweepgate sweeps among them (when that source
/// counts). A sweep check run gets its own id as `run_id`, so it is never mistaken for an
/// Actions run and Checks 1 and 4 find its run.
pub fn split_check_runs(
    sha: &str,
    list: Vec<crate::github::types::CheckRun>,
    options: &SweepOptions,
) -> (Vec<CheckRun>, Vec<SweepCheck>) {
    let mut runs = Vec::with_capacity(list.len());
    let mut sweeps = Vec::new();
    for c in list {
        let details_url = c.details_url.unwrap_or_default();
        let mut run_id = super::run_id_of(&details_url);
        let sweep_id = c.external_id.filter(|id| !id.is_empty() && id.len() <= 100);
        if let (true, true, Some(sweep_id)) = (options.counts_sweepgate(), c.name == options.check_name, sweep_id) {
            run_id = Some(c.id);
            sweeps.push(SweepCheck {
                sha: sha.to_owned(),
                check_run_id: c.id,
                sweep_id,
                status: c.status.clone(),
                conclusion: c.conclusion.clone(),
            });
        }
        runs.push(CheckRun { name: c.name, status: c.status, conclusion: c.conclusion, details_url, run_id });
    }
    (runs, sweeps)
}

/// Puts each sweep into the Evidence: a completed one with its stored results, anything else
/// (still running, no store configured, not stored, stored for another PR or commit, content
/// that fails its hash) as a run whose artifacts are a named `Unavailable` fact, so Check 1
/// says why it does not count. A key already taken by a workflow run is left alone (logged).
pub fn attach(evidence: &mut Evidence, sweeps: &[SweepCheck], options: &SweepOptions) {
    let store = options.results_dir.as_ref().map(|dir| ResultsStore::open(dir).map_err(|e| e.to_string()));
    for sweep in sweeps {
        if evidence.runs.contains_key(&sweep.check_run_id) {
            tracing::warn!(sweep = sweep.sweep_id, "check run id {} is also a workflow run id", sweep.check_run_id);
            continue;
        }
        let mut run = WorkflowRun {
            id: sweep.check_run_id,
            name: options.check_name.clone(),
            path: String::new(),
            head_sha: sweep.sha.clone(),
            event: "sweepgate".into(),
            status: sweep.status.clone(),
            conclusion: sweep.conclusion.clone(),
            artifacts: BTreeMap::new(),
            archives: BTreeMap::new(),
            jobs: BTreeMap::new(),
            sweep_id: Some(sweep.sweep_id.clone()),
            jobs_unavailable: None,
        };
        if sweep.status == "completed" {
            match read_results(evidence, sweep, store.as_ref(), &options.check_name) {
                Ok(files) => {
                    for (artifact, file, bytes) in files {
                        run.artifacts.insert(artifact.clone(), Fact::Ok(()));
                        evidence.artifacts.insert(format!("{}/{artifact}/{file}", sweep.check_run_id), bytes);
                    }
                }
                Err(reason) => {
                    run.artifacts.insert("*".into(), Fact::Unavailable(reason));
                }
            }
        }
        evidence.runs.insert(sweep.check_run_id, run);
    }
}

/// `(artifact, file name, content)` of a stored sweep that belongs to this PR and commit.
fn read_results(
    evidence: &Evidence,
    sweep: &SweepCheck,
    store: Option<&Result<ResultsStore, String>>,
    check_name: &str,
) -> Result<Vec<(String, String, Vec<u8>)>, String> {
    let id = &sweep.sweep_id;
    let store = match store {
        None => return Err(format!("sweep {id}: this collector has no results store of sweepgate's sweeps")),
        Some(Err(e)) => return Err(format!("sweep {id}: {e}")),
        Some(Ok(store)) => store,
    };
    let stored = store.load(id).map_err(|e| format!("sweep {id}: {e}"))?;
    let pr = &evidence.pull_request;
    if !stored.repo.eq_ignore_ascii_case(&evidence.repository) || stored.pr != pr.number || stored.head_sha != sweep.sha
    {
        return Err(format!(
            "sweep {id} is stored for {}#{} at {}, not for this PR's commit {}",
            stored.repo, stored.pr, stored.head_sha, sweep.sha
        ));
    }
    let exported = results_store::export(store, id, check_name).map_err(|e| format!("sweep {id}: {e}"))?;
    if exported.run.conclusion != sweep.conclusion.as_deref().unwrap_or_default() {
        return Err(format!(
            "sweep {id}: the check run says {:?} but the store says {}",
            sweep.conclusion, exported.run.conclusion
        ));
    }
    let prefix = format!("{id}/");
    Ok(exported
        .artifacts
        .into_iter()
        .filter_map(|(path, bytes)| {
            let (artifact, file) = path.strip_prefix(&prefix)?.split_once('/')?;
            Some((artifact.to_owned(), file.to_owned(), bytes))
        })
        .collect())
}

/// Drops the check runs of workflow runs whose workflow file is not a listed source. A run
/// whose workflow is unknown (not listed by the collector) keeps its check runs unless no
/// workflow source is listed at all. Returns how many were dropped.
pub fn drop_unlisted_workflows(evidence: &mut Evidence, options: &SweepOptions) -> usize {
    let any_workflow = options.sources.iter().any(|s| matches!(s, SweepSource::Workflow(_)));
    let unlisted: BTreeSet<u64> = evidence
        .runs
        .values()
        .filter(|r| r.sweep_id.is_none() && !options.counts_workflow(&r.path))
        .map(|r| r.id)
        .collect();
    let sweeps: BTreeSet<u64> = evidence.runs.values().filter(|r| r.sweep_id.is_some()).map(|r| r.id).collect();
    let mut dropped = 0;
    for fact in evidence.check_runs.values_mut() {
        let Fact::Ok(list) = fact else { continue };
        let before = list.len();
        list.retain(|c| match c.run_id {
            Some(id) if sweeps.contains(&id) => true,
            Some(id) => any_workflow && !unlisted.contains(&id),
            None => any_workflow,
        });
        dropped += before - list.len();
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, run};
    use crate::sweep::ledger::{PointState, StoredJson};
    use crate::sweep::results_store::StoredSweep;

    fn check_run(id: u64, name: &str, external_id: Option<&str>) -> crate::github::types::CheckRun {
        crate::github::types::CheckRun {
            id,
            name: name.into(),
            head_sha: "b".repeat(40),
            status: "completed".into(),
            conclusion: Some("success".into()),
            details_url: Some("https://sweepgate.example/prs/example/bench/42".into()),
            external_id: external_id.map(Into::into),
        }
    }

    #[test]
    fn sources_parse_and_refuse() {
        assert_eq!(
            parse_sources(&["sweepgate".into(), "workflow:run-sweep.yml".into()]).unwrap(),
            SweepOptions::default().sources
        );
        for bad in ["", "workflow:", "workflow:../x.yml", "workflow:run-sweep", "actions"] {
            assert!(parse_sources(&[bad.into()]).is_err(), "{bad}");
        }
        assert!(parse_sources(&[]).is_err(), "nothing listed would let nothing count");
    }

    #[test]
    fn only_the_configured_check_with_a_sweep_id_is_a_sweep() {
        let options = SweepOptions::default();
        let list = vec![
            check_run(900, "sweepgate/sweep", Some("pr42-bbbbbbbbbb-a1")),
            check_run(901, "sweepgate/sweep", None),
            check_run(902, "other/sweep", Some("pr42-bbbbbbbbbb-a1")),
        ];
        let (runs, sweeps) = split_check_runs(&"b".repeat(40), list.clone(), &options);
        assert_eq!(sweeps.len(), 1);
        assert_eq!((sweeps[0].check_run_id, sweeps[0].sweep_id.as_str()), (900, "pr42-bbbbbbbbbb-a1"));
        assert_eq!(runs.iter().map(|r| r.run_id).collect::<Vec<_>>(), [Some(900), None, None]);
        let only_workflows = SweepOptions { sources: vec![SweepSource::Workflow("run-sweep.yml".into())], ..options };
        assert!(split_check_runs("x", list, &only_workflows).1.is_empty(), "sweepgate not listed: not a sweep");
    }

    /// A store holding sweep `pr42-bbbbbbbbbb-a1` of example/bench#42 at the head, one point with
    /// a benchmark and an eval file.
    fn stored(dir: &std::path::Path, conclusion: &str) -> PathBuf {
        let job = dir.join("job");
        std::fs::create_dir_all(job.join("logs/eval")).unwrap();
        std::fs::write(job.join("logs/results_concurrency_4_gpus_8.json"), b"{}").unwrap();
        std::fs::write(job.join("logs/eval/results_2026-12-01.json"), b"{\"results\":{}}").unwrap();
        let provenance = serde_json::json!({"output_dir": job.display().to_string(), "files": [
            {"path": "logs/results_concurrency_4_gpus_8.json", "kind": "result"},
            {"path": "logs/eval/results_2026-12-01.json", "kind": "result"}]});
        let mut record = crate::sweep::results_store::tests::record("p1", PointState::Succeeded, &job);
        record.provenance = Some(StoredJson::from_value(&provenance).unwrap());
        let root = dir.join("results");
        let sweep = StoredSweep {
            sweep_id: "pr42-bbbbbbbbbb-a1".into(),
            repo: "example/bench".into(),
            pr: 42,
            head_sha: "b".repeat(40),
            conclusion: conclusion.into(),
            completed_at: "2026-12-01T00:00:00Z".into(),
            points: vec![],
        };
        ResultsStore::open(&root).unwrap().store(sweep, &[record]).unwrap();
        root
    }

    fn sweep_check() -> SweepCheck {
        SweepCheck {
            sha: "b".repeat(40),
            check_run_id: 900,
            sweep_id: "pr42-bbbbbbbbbb-a1".into(),
            status: "completed".into(),
            conclusion: Some("success".into()),
        }
    }

    #[test]
    fn a_stored_sweep_becomes_a_run_with_run_sweep_artifacts() {
        let dir = tempfile::tempdir().unwrap();
        let options = SweepOptions { results_dir: Some(stored(dir.path(), "success")), ..SweepOptions::default() };
        let mut e = evidence();
        attach(&mut e, &[sweep_check()], &options);
        let run = &e.runs[&900];
        assert_eq!(run.sweep_id.as_deref(), Some("pr42-bbbbbbbbbb-a1"));
        assert_eq!(run.artifacts.keys().collect::<Vec<_>>(), ["bmk_p1", "eval_p1"]);
        assert!(e.artifacts.get("900/bmk_p1/results_concurrency_4_gpus_8.json").is_some());
        assert!(e.artifacts.get("900/eval_p1/results_2026-12-01.json").is_some());
    }

    #[test]
    fn sweeps_that_cannot_be_read_are_named_never_empty() {
        let unavailable = |e: &Evidence| match &e.runs[&900].artifacts["*"] {
            Fact::Unavailable(reason) => reason.clone(),
            Fact::Ok(()) => panic!("read"),
        };
        let mut e = evidence();
        attach(&mut e, &[sweep_check()], &SweepOptions::default());
        assert!(unavailable(&e).contains("no results store"), "{}", unavailable(&e));

        let dir = tempfile::tempdir().unwrap();
        let options = SweepOptions { results_dir: Some(stored(dir.path(), "success")), ..SweepOptions::default() };
        let mut other_commit = sweep_check();
        other_commit.sha = "a".repeat(40);
        let mut e = evidence();
        attach(&mut e, &[other_commit], &options);
        assert!(unavailable(&e).contains("not for this PR's commit"), "{}", unavailable(&e));

        let mut missing = sweep_check();
        missing.sweep_id = "pr42-bbbbbbbbbb-a9".into();
        let mut e = evidence();
        attach(&mut e, &[missing], &options);
        assert!(unavailable(&e).contains("not stored"), "{}", unavailable(&e));

        let mut disagrees = sweep_check();
        disagrees.conclusion = Some("failure".into());
        let mut e = evidence();
        attach(&mut e, &[disagrees], &options);
        assert!(unavailable(&e).contains("the store says success"), "{}", unavailable(&e));
    }

    #[test]
    fn unlisted_workflows_do_not_count() {
        let mut e = evidence();
        e.check_runs.insert("b".repeat(40), Fact::Ok(vec![run("single-node 1k1k / x", "success", 7)]));
        let workflow = |path: &str| WorkflowRun {
            id: 7,
            name: "w".into(),
            path: path.into(),
            head_sha: "b".repeat(40),
            event: "pull_request".into(),
            status: "completed".into(),
            conclusion: Some("success".into()),
            artifacts: BTreeMap::new(),
            archives: BTreeMap::new(),
            jobs: BTreeMap::new(),
            sweep_id: None,
            jobs_unavailable: None,
        };
        e.runs.insert(7, workflow(".github/workflows/run-sweep.yml"));
        assert_eq!(drop_unlisted_workflows(&mut e.clone(), &SweepOptions::default()), 0);
        let only_sweepgate = SweepOptions { sources: vec![SweepSource::Sweepgate], ..SweepOptions::default() };
        assert_eq!(drop_unlisted_workflows(&mut e.clone(), &only_sweepgate), 1);
        e.runs.insert(7, workflow(".github/workflows/e2e-tests.yml"));
        assert_eq!(drop_unlisted_workflows(&mut e, &SweepOptions::default()), 1);
    }
}
