//! The dispatcher: runs a [`Plan`] on a [`Scheduler`] to completion, recording every step in the
//! [`Ledger`] before doing it, so that it can be killed at any moment and resumed.
//!
//! Order of work (spec 10 §5): the canary first and alone; if it does not succeed every other
//! point is skipped. Then all families, points in plan order, at most
//! `max_concurrent_allocations` jobs at once. In a `fail_fast` family the first failure cancels
//! the family's queued and running siblings; other families carry on.
//!
//! Submission of one point: intent (`submitting`, with its unique job name) → `sbatch --hold`
//! → `submitted(job id)` → create `<output_root>/<id>/logs` → `scontrol release`. A restart
//! finds a `submitting` point's job by name (or plans it again when there is none), and
//! releases held jobs whose release was lost.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::dispatch_pool::DispatchPool;
use super::job_script::{self, JobScriptInput};
use super::ledger::{Ledger, LedgerError, Outcome, PointRecord, PointSeed, PointState, SweepSeed};
use super::plan_input::{PlacedPoint, Plan};
use super::results_collect::{self, Collected};
use super::scheduler::{JobId, JobInfo, JobRequest, Scheduler, SlurmState, StateSource};

/// `sg-<first 8 hex of sha256(repo)>-pr<N>-`: every job of this repository's PR, and only those.
pub fn job_prefix(repo: &str, pr: u64) -> String {
    format!("sg-{}-pr{pr}-", &hex::encode(Sha256::digest(repo.as_bytes()))[..8])
}

/// `<PR prefix><first 8 hex of sha256(sweep id)>-`: every job of one sweep.
pub fn sweep_prefix(repo: &str, pr: u64, sweep_id: &str) -> String {
    format!("{}{}-", job_prefix(repo, pr), &hex::encode(Sha256::digest(sweep_id.as_bytes()))[..8])
}

#[derive(Debug, Clone)]
pub struct DispatchConfig {
    /// Absolute; job output goes to `<output_root>/<job id>/`.
    pub output_root: PathBuf,
    /// Relative job scripts are resolved against this directory (the plan file's).
    pub plan_dir: PathBuf,
    pub poll_interval: Duration,
    /// Give up (resumably) when Slurm has not answered for this long.
    pub unreachable_limit: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    #[error("point {point}: {message}")]
    Point { point: String, message: String },
    #[error("output root {path}: {message}")]
    OutputRoot { path: String, message: String },
    #[error("Slurm has not answered for {seconds}s (last error: {last}); the ledger is consistent: run the same command again to resume")]
    Unreachable { seconds: u64, last: String },
}

/// What happened, for progress display.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Submitted {
        point: String,
        job: JobId,
    },
    Started {
        point: String,
        job: JobId,
        nodes: Option<String>,
    },
    Finished {
        point: String,
        state: PointState,
        job: Option<JobId>,
        detail: Option<String>,
    },
    /// Something worth telling the operator that changes nothing by itself.
    Notice(String),
    /// Counts after each round.
    Tick(Counts),
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    pub total: usize,
    pub planned: usize,
    pub active: usize,
    pub succeeded: usize,
    pub failed: usize,
    pub cancelled: usize,
    pub skipped: usize,
}

impl Counts {
    pub fn of(records: &[PointRecord]) -> Counts {
        let mut c = Counts { total: records.len(), ..Counts::default() };
        for r in records {
            match r.state {
                PointState::Planned => c.planned += 1,
                s if s.is_active() => c.active += 1,
                PointState::Succeeded => c.succeeded += 1,
                PointState::Cancelled => c.cancelled += 1,
                PointState::Skipped => c.skipped += 1,
                _ => c.failed += 1,
            }
        }
        c
    }
    pub fn done(&self) -> usize {
        self.succeeded + self.failed + self.cancelled + self.skipped
    }
}

const CANCEL_REQUESTED: &str = "cancel requested (sweepgate dispatch --cancel)";

/// What the dispatcher does next, decided from the ledger alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Submit {
        point: String,
    },
    /// Never submitted: the canary did not succeed.
    Skip {
        point: String,
        reason: String,
    },
    /// Never submitted: fail-fast or a cancel request.
    CancelPlanned {
        point: String,
        reason: String,
    },
    /// Submitted: record why, then scancel.
    CancelJob {
        point: String,
        job: JobId,
        reason: String,
    },
}

/// The scheduling policy (pure): canary gate, fail-fast, cancel requests, concurrency limit.
pub fn decide(
    records: &[PointRecord],
    cancel_requested: bool,
    fail_fast: &HashSet<&str>,
    max_active: Option<u32>,
) -> Vec<Action> {
    let mut actions = Vec::new();
    let cancel_all = |reason: &str, targets: &mut dyn Iterator<Item = &PointRecord>, actions: &mut Vec<Action>| {
        for r in targets {
            if r.state == PointState::Planned {
                actions.push(Action::CancelPlanned { point: r.point_id.clone(), reason: reason.to_string() });
            } else if let (true, Some(job), None) = (r.state.is_active(), &r.job_id, &r.cancel_reason) {
                actions.push(Action::CancelJob {
                    point: r.point_id.clone(),
                    job: job.clone(),
                    reason: reason.to_string(),
                });
            }
        }
    };
    if cancel_requested {
        cancel_all(CANCEL_REQUESTED, &mut records.iter(), &mut actions);
        return actions;
    }
    let mut active = records.iter().filter(|r| r.state.is_active()).count();
    let has_slot = |active: usize| max_active.is_none_or(|m| active < m as usize);
    if let Some(canary) = records.iter().find(|r| r.is_canary) {
        if canary.state == PointState::Planned && has_slot(active) {
            actions.push(Action::Submit { point: canary.point_id.clone() });
        }
        if !canary.state.is_terminal() {
            return actions;
        }
        if canary.state != PointState::Succeeded {
            let reason = format!("canary {} ended {}", canary.point_id, canary.state.as_str());
            for r in records.iter().filter(|r| r.state == PointState::Planned) {
                actions.push(Action::Skip { point: r.point_id.clone(), reason: reason.clone() });
            }
            return actions;
        }
    }
    let mut halted: HashSet<&str> = HashSet::new();
    for family in fail_fast {
        let members = || records.iter().filter(|r| !r.is_canary && r.family == *family);
        if let Some(first) = members().find(|r| r.state.is_failure()) {
            let reason = format!("fail-fast: {} in family {family} ended {}", first.point_id, first.state.as_str());
            cancel_all(&reason, &mut members(), &mut actions);
            halted.insert(family);
        }
    }
    for r in records.iter().filter(|r| !r.is_canary && r.state == PointState::Planned) {
        if !has_slot(active) {
            break;
        }
        if !halted.contains(r.family.as_str()) {
            actions.push(Action::Submit { point: r.point_id.clone() });
            active += 1;
        }
    }
    actions
}

/// The point's final state and reason from what Slurm (or the log) says and what the job wrote.
pub fn judge(
    info: &JobInfo,
    cancel_reason: Option<&str>,
    collected: &Collected,
    submitted_script_sha256: Option<&str>,
) -> (PointState, Option<String>) {
    let exit =
        info.exit.map(|e| if e.signal != 0 { format!("signal {}", e.signal) } else { format!("exit code {}", e.code) });
    let with_reason = |what: String| match &info.reason {
        Some(r) if r != "None" => format!("{what} ({r})"),
        _ => what,
    };
    match &info.state {
        SlurmState::Completed => {
            let results: Vec<_> = collected.results().collect();
            if results.is_empty() {
                return (
                    PointState::Failed,
                    Some("job completed but wrote no results_concurrency_*.json under logs/".into()),
                );
            }
            if let Some(bad) = results.iter().find(|f| !f.problems.is_empty()) {
                return (PointState::Failed, Some(format!("{}: {}", bad.path, bad.problems.join("; "))));
            }
            match (submitted_script_sha256, collected.markers.script_sha256.as_deref()) {
                (Some(submitted), Some(ran)) if submitted != ran => (
                    PointState::Failed,
                    Some(format!(
                        "the benchmark script changed after submission (sha256 {submitted} submitted, {ran} ran)"
                    )),
                ),
                _ => (PointState::Succeeded, None),
            }
        }
        SlurmState::Failed => (PointState::Failed, Some(with_reason(exit.unwrap_or_else(|| "failed".into())))),
        SlurmState::Cancelled => {
            (PointState::Cancelled, Some(cancel_reason.unwrap_or("cancelled outside sweepgate (scancel)").to_string()))
        }
        SlurmState::Timeout => (PointState::TimedOut, Some(with_reason("time limit reached".into()))),
        SlurmState::NodeFail => (PointState::NodeFailed, Some(with_reason("node failure".into()))),
        other => (PointState::Failed, Some(with_reason(format!("Slurm state {other:?}")))),
    }
}

/// When no source knows the job: the log's end marker, else "ended, outcome unknown" — which is
/// never a success (spec 50 §7 step 4).
pub fn from_log(id: &JobId, collected: &Collected) -> JobInfo {
    let (state, reason) = match collected.markers.exit_code {
        Some(0) => (SlurmState::Completed, None),
        Some(_) => (SlurmState::Failed, Some("exit status from the job log".to_string())),
        None => (
            SlurmState::Failed,
            Some(
                "no record in squeue, sacct or sacct -c, and no end marker in the job log: outcome unknown".to_string(),
            ),
        ),
    };
    JobInfo {
        id: id.clone(),
        name: None,
        state,
        reason,
        exit: collected.markers.exit_code.map(|c| super::scheduler::ExitStatus { code: c as i32, signal: 0 }),
        nodes: None,
        submitted_at: None,
        started_at: None,
        ended_at: None,
        source: StateSource::Log,
    }
}

pub struct Dispatcher<'a> {
    plan: &'a Plan,
    pool: &'a DispatchPool,
    scheduler: &'a dyn Scheduler,
    ledger: &'a mut Ledger,
    config: DispatchConfig,
    /// Each point with its place in the plan, and its script's absolute path.
    points: HashMap<String, (PlacedPoint<'a>, PathBuf)>,
    fail_fast: HashSet<String>,
}

fn sha256_file(path: &Path) -> Option<String> {
    std::fs::read(path).ok().map(|b| hex::encode(Sha256::digest(b)))
}

impl<'a> Dispatcher<'a> {
    /// Checks the plan against the pool and the file system, and registers the sweep (or finds
    /// it registered: resume).
    pub fn new(
        plan: &'a Plan,
        pool: &'a DispatchPool,
        scheduler: &'a dyn Scheduler,
        ledger: &'a mut Ledger,
        config: DispatchConfig,
    ) -> Result<Self, DispatchError> {
        let root = config.output_root.display().to_string();
        if !config.output_root.is_absolute() || root.contains('%') || root.chars().any(|c| c.is_control()) {
            return Err(DispatchError::OutputRoot {
                path: root,
                message: "must be an absolute path without % or control characters (Slurm expands % in --output)"
                    .into(),
            });
        }
        std::fs::create_dir_all(&config.output_root)
            .map_err(|e| DispatchError::OutputRoot { path: root.clone(), message: e.to_string() })?;
        let mut points = HashMap::new();
        let placed = plan.placed_points();
        for p in &placed {
            let point_err = |message: String| DispatchError::Point { point: p.point.id.clone(), message };
            let job = &p.point.job;
            if job.gpus > pool.gpus_per_node {
                return Err(point_err(format!(
                    "job.gpus = {} but pool {} has {} GPUs per node",
                    job.gpus, pool.name, pool.gpus_per_node
                )));
            }
            let script = config.plan_dir.join(&job.script);
            let meta =
                std::fs::metadata(&script).map_err(|e| point_err(format!("job.script {}: {e}", script.display())))?;
            if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
                return Err(point_err(format!(
                    "job.script {} is not an executable file (chmod +x?)",
                    script.display()
                )));
            }
            let script =
                script.canonicalize().map_err(|e| point_err(format!("job.script {}: {e}", script.display())))?;
            points.insert(p.point.id.clone(), (*p, script));
        }
        let fail_fast = plan.families.iter().filter(|f| f.fail_fast).map(|f| f.name.clone()).collect();
        let plan_sha256 = plan.sha256();
        let prefix = job_prefix(&plan.repo, plan.pr);
        let sweep = sweep_prefix(&plan.repo, plan.pr, &plan.sweep_id);
        ledger.register_sweep(&SweepSeed {
            id: &plan.sweep_id,
            repo: &plan.repo,
            pr: plan.pr,
            plan_sha256: &plan_sha256,
            job_prefix: &prefix,
            points: placed
                .iter()
                .map(|p| PointSeed {
                    point_id: &p.point.id,
                    family: p.family,
                    is_canary: p.is_canary,
                    job_name: format!("{sweep}{}", p.point.id),
                })
                .collect(),
        })?;
        Ok(Dispatcher { plan, pool, scheduler, ledger, config, points, fail_fast })
    }

    fn render(&self, record: &PointRecord) -> Result<(String, String), DispatchError> {
        let (placed, script) = self.points.get(&record.point_id).ok_or_else(|| DispatchError::Point {
            point: record.point_id.clone(),
            message: "in the ledger but not in the plan".into(),
        })?;
        let text = job_script::render(&JobScriptInput {
            job_name: &record.job_name,
            sweep_id: &self.plan.sweep_id,
            point: placed.point,
            script,
            pool: self.pool,
            output_root: &self.config.output_root,
        });
        let script_sha = sha256_file(script).unwrap_or_default();
        Ok((text, script_sha))
    }

    fn job_dir(&self, job: &JobId) -> PathBuf {
        self.config.output_root.join(&job.0)
    }

    /// Creates the job's log directory (it must exist before the job starts) and stores the
    /// batch script and point next to it, then releases the job.
    fn prepare_and_release(&self, record: &PointRecord, job: &JobId, batch: &str) -> Result<(), String> {
        let dir = self.job_dir(job);
        let written = std::fs::create_dir_all(dir.join("logs"))
            .and_then(|_| std::fs::write(dir.join("sbatch_script.sh"), batch))
            .and_then(|_| {
                let point = self.points.get(&record.point_id).map(|(p, _)| serde_json::to_vec_pretty(p.point));
                std::fs::write(dir.join("point.json"), point.and_then(Result::ok).unwrap_or_default())
            });
        if let Err(e) = written {
            // Releasing now would fail the job at launch (no --output directory): keep it held,
            // the next round retries.
            return Err(format!("cannot prepare {}: {e}", dir.display()));
        }
        self.scheduler.release(job).map_err(|e| e.to_string())
    }

    fn submit(&mut self, record: &PointRecord, emit: &mut dyn FnMut(Event)) -> Result<(), DispatchError> {
        let sweep = self.plan.sweep_id.clone();
        let (batch, script_sha) = self.render(record)?;
        self.ledger.mark_submitting(&sweep, &record.point_id)?;
        match self.scheduler.submit_held(&JobRequest { name: record.job_name.clone(), script: batch.clone() }) {
            Ok(job) => {
                let info = serde_json::json!({
                    "script_sha256": script_sha,
                    "sbatch_sha256": hex::encode(Sha256::digest(batch.as_bytes())),
                    "submitted_at": chrono::Utc::now().to_rfc3339(),
                });
                self.ledger.mark_submitted(&sweep, &record.point_id, &job, true, &info)?;
                emit(Event::Submitted { point: record.point_id.clone(), job: job.clone() });
                if let Err(e) = self.prepare_and_release(record, &job, &batch) {
                    emit(Event::Notice(format!("point {}: job {job} stays held for now: {e}", record.point_id)));
                }
            }
            Err(e) if e.outcome_unknown() => {
                emit(Event::Notice(format!(
                    "point {}: submission outcome unknown ({e}); will look for job {} before retrying",
                    record.point_id, record.job_name
                )));
            }
            Err(e) => {
                // The scheduler's text (accounts, users, hosts) is for operators: the log and the
                // ledger. Public pages show the class only (decision HE6).
                tracing::warn!(sweep = %sweep, point = %record.point_id, error = %e, "the scheduler refused the job");
                let outcome = Outcome {
                    reason: Some(format!("sbatch refused the job: {e}")),
                    provenance: Some(serde_json::json!({ "refusal": e.refusal() })),
                    ..Outcome::default()
                };
                self.ledger.finish(&sweep, &record.point_id, PointState::Failed, &outcome)?;
                emit(Event::Finished {
                    point: record.point_id.clone(),
                    state: PointState::Failed,
                    job: None,
                    detail: outcome.reason,
                });
            }
        }
        Ok(())
    }

    /// Points left `submitting` (by a crash, or an sbatch whose outcome is unknown): adopt the
    /// job carrying the point's name, or plan the point again when there is none. The inner
    /// error is Slurm not answering (counted towards `unreachable_limit`, like a failed poll).
    fn reconcile(
        &mut self,
        records: &[PointRecord],
        emit: &mut dyn FnMut(Event),
    ) -> Result<Result<(), String>, DispatchError> {
        let pending: Vec<&PointRecord> = records.iter().filter(|r| r.state == PointState::Submitting).collect();
        if pending.is_empty() {
            return Ok(Ok(()));
        }
        let prefix = sweep_prefix(&self.plan.repo, self.plan.pr, &self.plan.sweep_id);
        let known = match self.scheduler.jobs_named(&prefix) {
            Ok(k) => k,
            Err(e) => {
                emit(Event::Notice(format!("cannot look up jobs named {prefix}*: {e}")));
                return Ok(Err(e.to_string()));
            }
        };
        let sweep = self.plan.sweep_id.clone();
        for r in pending {
            let mut same: Vec<&JobInfo> =
                known.iter().filter(|j| j.name.as_deref() == Some(r.job_name.as_str())).collect();
            same.sort_by_key(|j| j.id.0.parse::<u64>().unwrap_or(u64::MAX));
            match same.split_first() {
                Some((first, extra)) => {
                    if !extra.is_empty() {
                        let ids: Vec<JobId> = extra.iter().map(|j| j.id.clone()).collect();
                        emit(Event::Notice(format!("point {}: cancelling duplicate jobs {ids:?}", r.point_id)));
                        self.scheduler.cancel(&ids).ok();
                    }
                    let (_, script_sha) = self.render(r)?;
                    let info = serde_json::json!({ "script_sha256": script_sha, "recovered_by_name": true });
                    self.ledger.mark_submitted(&sweep, &r.point_id, &first.id, false, &info)?;
                    emit(Event::Notice(format!(
                        "point {}: found job {} by name after an interrupted submission",
                        r.point_id, first.id
                    )));
                }
                None => {
                    self.ledger.back_to_planned(
                        &sweep,
                        &r.point_id,
                        "no job carries the point's name: submission never happened",
                    )?;
                }
            }
        }
        Ok(Ok(()))
    }

    /// Cancels live jobs that carry a point's name but are not its recorded job. An sbatch left
    /// running by a killed dispatcher can land after its successor found no job by that name and
    /// submitted again; such a job was never released (its id was never recorded), so it is
    /// held and cancelling it loses nothing (decision S4).
    fn cancel_strays(&self, records: &[PointRecord], emit: &mut dyn FnMut(Event)) {
        let prefix = sweep_prefix(&self.plan.repo, self.plan.pr, &self.plan.sweep_id);
        let known = match self.scheduler.jobs_named(&prefix) {
            Ok(k) => k,
            Err(e) => {
                emit(Event::Notice(format!("cannot look for stray jobs named {prefix}*: {e}")));
                return;
            }
        };
        let strays: Vec<JobId> = known
            .into_iter()
            .filter(|j| !j.state.is_final())
            .filter(|j| {
                records.iter().any(|r| {
                    r.job_id.as_ref().is_some_and(|id| *id != j.id) && j.name.as_deref() == Some(r.job_name.as_str())
                })
            })
            .map(|j| j.id)
            .collect();
        if strays.is_empty() {
            return;
        }
        emit(Event::Notice(format!("cancelling stray jobs {strays:?}: duplicates of the points' recorded jobs")));
        if let Err(e) = self.scheduler.cancel(&strays) {
            emit(Event::Notice(format!("scancel {strays:?} failed: {e}")));
        }
    }

    /// Asks Slurm about every active job and records what changed. `Ok(Err(why))`: Slurm did
    /// not answer, nothing was concluded.
    fn poll(
        &mut self,
        records: &[PointRecord],
        emit: &mut dyn FnMut(Event),
    ) -> Result<Result<(), String>, DispatchError> {
        let active: Vec<&PointRecord> = records
            .iter()
            .filter(|r| matches!(r.state, PointState::Submitted | PointState::Running) && r.job_id.is_some())
            .collect();
        if active.is_empty() {
            return Ok(Ok(()));
        }
        let ids: Vec<JobId> = active.iter().filter_map(|r| r.job_id.clone()).collect();
        let infos = match self.scheduler.jobs(&ids) {
            Ok(i) => i,
            Err(e) => {
                emit(Event::Notice(format!("Slurm did not answer: {e}")));
                return Ok(Err(e.to_string()));
            }
        };
        let sweep = self.plan.sweep_id.clone();
        let sweep_cancelled = self.ledger.cancel_requested(&sweep)?;
        for r in active {
            let Some(job) = r.job_id.clone() else { continue };
            let log = job_script::job_log_path(&self.config.output_root, &job.0);
            let info = match infos.iter().find(|i| i.id == job) {
                Some(i) => i.clone(),
                None => from_log(&job, &results_collect::collect(&self.job_dir(&job), &log)),
            };
            if info.is_held() {
                let (batch, _) = self.render(r)?;
                if let Err(e) = self.prepare_and_release(r, &job, &batch) {
                    emit(Event::Notice(format!("point {}: cannot release held job {job}: {e}", r.point_id)));
                }
                continue;
            }
            if !info.state.is_final() {
                if r.state == PointState::Submitted
                    && matches!(info.state, SlurmState::Running | SlurmState::Completing)
                {
                    self.ledger.mark_running(&sweep, &r.point_id)?;
                    emit(Event::Started { point: r.point_id.clone(), job: job.clone(), nodes: info.nodes.clone() });
                }
                continue;
            }
            let collected = results_collect::collect(&self.job_dir(&job), &log);
            let submitted_sha = r.submit_info.as_ref().and_then(|i| i.get("script_sha256")).and_then(|v| v.as_str());
            let cancel_reason = r.cancel_reason.as_deref().or(sweep_cancelled.then_some(CANCEL_REQUESTED));
            let (state, reason) = judge(&info, cancel_reason, &collected, submitted_sha);
            let outcome = Outcome {
                reason: reason.clone(),
                exit_code: info.exit.map(|e| i64::from(e.code)),
                state_source: Some(info.source.as_str().to_string()),
                provenance: Some(self.provenance(r, &info, &collected)),
            };
            self.ledger.finish(&sweep, &r.point_id, state, &outcome)?;
            emit(Event::Finished { point: r.point_id.clone(), state, job: Some(job), detail: reason });
        }
        Ok(Ok(()))
    }

    /// The per-point provenance record (spec 50 §11): the point with its job and recipe, pool,
    /// Slurm job, script hashes, result files and their power validation.
    fn provenance(&self, r: &PointRecord, info: &JobInfo, collected: &Collected) -> serde_json::Value {
        let placed = self.points.get(&r.point_id);
        let serving_gpus = placed.map_or(0, |(p, _)| p.point.job.gpus.saturating_mul(p.point.job.nodes));
        let power = results_collect::validate_power(&self.job_dir(&info.id), collected, serving_gpus);
        serde_json::json!({
            "dispatcher": format!("sweepgate {}", env!("CARGO_PKG_VERSION")),
            "sweep_id": self.plan.sweep_id,
            "repo": self.plan.repo,
            "pr": self.plan.pr,
            "point": placed.map(|(p, _)| serde_json::to_value(p.point).unwrap_or_default()),
            "family": r.family,
            "canary": r.is_canary,
            "pool": { "name": self.pool.name, "sha256": self.pool.sha256 },
            "slurm": {
                "job_id": info.id,
                "job_name": r.job_name,
                "partition": self.pool.partition,
                "account": self.pool.account,
                "qos": self.pool.qos,
                "nodes": info.nodes,
                "submitted_at": info.submitted_at,
                "started_at": info.started_at,
                "ended_at": info.ended_at,
                "state": format!("{:?}", info.state),
                "reason": info.reason,
                "exit": info.exit,
                "state_source": info.source.as_str(),
            },
            "submission": r.submit_info,
            "script": {
                "path": placed.map(|(_, script)| script.display().to_string()),
                "sha256_at_run": collected.markers.script_sha256,
            },
            "output_dir": self.job_dir(&info.id).display().to_string(),
            "files": collected.files,
            "power": power,
            "collection_problems": collected.problems,
        })
    }

    fn close_unsubmitted(
        &mut self,
        point: String,
        reason: String,
        state: PointState,
        emit: &mut dyn FnMut(Event),
    ) -> Result<(), DispatchError> {
        let outcome = Outcome { reason: Some(reason.clone()), ..Outcome::default() };
        self.ledger.finish(&self.plan.sweep_id, &point, state, &outcome)?;
        emit(Event::Finished { point, state, job: None, detail: Some(reason) });
        Ok(())
    }

    fn apply(
        &mut self,
        actions: Vec<Action>,
        records: &[PointRecord],
        emit: &mut dyn FnMut(Event),
    ) -> Result<(), DispatchError> {
        let sweep = self.plan.sweep_id.clone();
        let mut to_cancel = Vec::new();
        for action in actions {
            match action {
                Action::Submit { point } => {
                    if let Some(r) = records.iter().find(|r| r.point_id == point) {
                        self.submit(r, emit)?;
                    }
                }
                Action::Skip { point, reason } => self.close_unsubmitted(point, reason, PointState::Skipped, emit)?,
                Action::CancelPlanned { point, reason } => {
                    self.close_unsubmitted(point, reason, PointState::Cancelled, emit)?
                }
                Action::CancelJob { point, job, reason } => {
                    self.ledger.set_cancel_reason(&sweep, &point, &reason)?;
                    to_cancel.push(job);
                }
            }
        }
        if !to_cancel.is_empty() {
            if let Err(e) = self.scheduler.cancel(&to_cancel) {
                emit(Event::Notice(format!("scancel {to_cancel:?} failed: {e}; retrying next round")));
            }
        }
        Ok(())
    }

    /// Runs until every point is final. Returns the ledger's view of the sweep.
    pub fn run(&mut self, emit: &mut dyn FnMut(Event)) -> Result<Vec<PointRecord>, DispatchError> {
        let max_active = self.pool.max_concurrent_allocations;
        let mut last_answer = Instant::now();
        loop {
            if let Some(records) = self.round(max_active, &mut last_answer, emit)? {
                return Ok(records);
            }
            std::thread::sleep(self.config.poll_interval);
        }
    }

    /// One round: reconcile interrupted submissions, poll Slurm, then submit or cancel with at
    /// most `max_active` of this sweep's jobs active. `last_answer` is when Slurm last answered
    /// (kept by the caller across rounds). Returns the final records once every point is final.
    pub fn round(
        &mut self,
        max_active: Option<u32>,
        last_answer: &mut Instant,
        emit: &mut dyn FnMut(Event),
    ) -> Result<Option<Vec<PointRecord>>, DispatchError> {
        self.observe(last_answer, emit)?;
        self.act(max_active, emit)
    }

    /// The first half of a round: reconcile interrupted submissions and poll Slurm, so the
    /// ledger knows which jobs ended (and which slots are free) before anything is submitted.
    pub fn observe(&mut self, last_answer: &mut Instant, emit: &mut dyn FnMut(Event)) -> Result<(), DispatchError> {
        let sweep = self.plan.sweep_id.clone();
        // Each step reads the ledger afresh; only one copy of the records is alive at a time.
        let reconciled = self.reconcile(&self.ledger.points(&sweep)?, emit)?;
        // A sweep whose only open points wait for a by-name lookup must also give up in time.
        match reconciled.and(self.poll(&self.ledger.points(&sweep)?, emit)?) {
            Ok(()) => *last_answer = Instant::now(),
            Err(last) if last_answer.elapsed() > self.config.unreachable_limit => {
                return Err(DispatchError::Unreachable { seconds: self.config.unreachable_limit.as_secs(), last });
            }
            Err(_) => {}
        }
        Ok(())
    }

    /// The second half of a round: submit or cancel with at most `max_active` of this sweep's
    /// jobs active. Returns the final records once every point is final.
    pub fn act(
        &mut self,
        max_active: Option<u32>,
        emit: &mut dyn FnMut(Event),
    ) -> Result<Option<Vec<PointRecord>>, DispatchError> {
        let sweep = self.plan.sweep_id.clone();
        {
            let records = self.ledger.points(&sweep)?;
            let cancel = self.ledger.cancel_requested(&sweep)?;
            let fail_fast: HashSet<&str> = self.fail_fast.iter().map(String::as_str).collect();
            let actions = decide(&records, cancel, &fail_fast, max_active);
            self.apply(actions, &records, emit)?;
        }
        let records = self.ledger.points(&sweep)?;
        let counts = Counts::of(&records);
        emit(Event::Tick(counts));
        if counts.done() == counts.total {
            self.cancel_strays(&records, emit);
            return Ok(Some(records));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::results_collect::{CollectedFile, FileKind, LogMarkers};
    use crate::sweep::scheduler::ExitStatus;

    fn rec(id: &str, family: &str, canary: bool, state: PointState) -> PointRecord {
        crate::sweep::ledger::test_record(id, family, canary, state)
    }

    fn submits(actions: &[Action]) -> Vec<&str> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::Submit { point } => Some(point.as_str()),
                _ => None,
            })
            .collect()
    }

    use PointState::*;

    #[test]
    fn canary_runs_first_and_alone() {
        let records = [rec("c", "f", true, Planned), rec("a", "f", false, Planned), rec("b", "g", false, Planned)];
        assert_eq!(submits(&decide(&records, false, &HashSet::new(), None)), ["c"]);
        let running = [rec("c", "f", true, Running), rec("a", "f", false, Planned)];
        assert!(decide(&running, false, &HashSet::new(), None).is_empty());
    }

    #[test]
    fn canary_failure_skips_everything_else() {
        for state in [Failed, TimedOut, Cancelled, NodeFailed] {
            let records = [rec("c", "f", true, state), rec("a", "f", false, Planned), rec("b", "g", false, Planned)];
            let actions = decide(&records, false, &HashSet::new(), None);
            assert_eq!(actions.len(), 2, "{state:?}");
            assert!(actions.iter().all(|a| matches!(a, Action::Skip { reason, .. } if reason.contains("canary c"))));
        }
    }

    #[test]
    fn after_a_successful_canary_all_families_fan_out_in_order() {
        let records = [rec("c", "f", true, Succeeded), rec("a", "f", false, Planned), rec("b", "g", false, Planned)];
        assert_eq!(submits(&decide(&records, false, &HashSet::new(), None)), ["a", "b"]);
        let no_canary = [rec("a", "f", false, Planned), rec("b", "g", false, Planned)];
        assert_eq!(submits(&decide(&no_canary, false, &HashSet::new(), None)), ["a", "b"]);
    }

    #[test]
    fn concurrency_limit_counts_active_jobs() {
        let records = [rec("a", "f", false, Running), rec("b", "f", false, Planned), rec("c", "f", false, Planned)];
        assert!(submits(&decide(&records, false, &HashSet::new(), Some(1))).is_empty());
        assert_eq!(submits(&decide(&records, false, &HashSet::new(), Some(2))), ["b"]);
        let submitting = [rec("a", "f", false, Submitting), rec("b", "f", false, Planned)];
        assert!(
            submits(&decide(&submitting, false, &HashSet::new(), Some(1))).is_empty(),
            "an unknown submission holds its slot"
        );
    }

    #[test]
    fn fail_fast_cancels_only_its_family() {
        let records = [
            rec("a1", "f", false, Failed),
            rec("a2", "f", false, Running),
            rec("a3", "f", false, Planned),
            rec("b1", "g", false, Failed),
            rec("b2", "g", false, Planned),
        ];
        let ff: HashSet<&str> = ["f"].into();
        let actions = decide(&records, false, &ff, None);
        assert!(actions.contains(&Action::CancelJob {
            point: "a2".into(),
            job: JobId("2".into()),
            reason: "fail-fast: a1 in family f ended failed".into()
        }));
        assert!(actions.iter().any(|a| matches!(a, Action::CancelPlanned { point, .. } if point == "a3")));
        assert_eq!(submits(&actions), ["b2"], "family g has no fail-fast");
        let mut already = records.clone();
        already[1].cancel_reason = Some("x".into());
        assert!(
            !decide(&already, false, &ff, None).iter().any(|a| matches!(a, Action::CancelJob { .. })),
            "scancel once"
        );
    }

    #[test]
    fn cancel_request_cancels_everything_and_submits_nothing() {
        let records = [rec("c", "f", true, Succeeded), rec("a", "f", false, Running), rec("b", "g", false, Planned)];
        let actions = decide(&records, true, &HashSet::new(), None);
        assert_eq!(actions.len(), 2);
        assert!(submits(&actions).is_empty());
    }

    fn info(state: SlurmState, exit: Option<(i32, i32)>) -> JobInfo {
        JobInfo {
            id: JobId("5".into()),
            name: None,
            state,
            reason: Some("NonZeroExitCode".into()),
            exit: exit.map(|(code, signal)| ExitStatus { code, signal }),
            nodes: None,
            submitted_at: None,
            started_at: None,
            ended_at: None,
            source: StateSource::Squeue,
        }
    }

    fn collected_with(result_problems: Option<Vec<String>>, ran_sha: Option<&str>) -> Collected {
        Collected {
            files: result_problems
                .map(|problems| {
                    vec![CollectedFile {
                        path: "logs/results_concurrency_1_gpus_1.json".into(),
                        kind: FileKind::Result,
                        sha256: None,
                        bytes: 1,
                        problems,
                    }]
                })
                .unwrap_or_default(),
            markers: LogMarkers { began: true, script_sha256: ran_sha.map(String::from), exit_code: Some(0) },
            problems: vec![],
        }
    }

    #[test]
    fn judging_completed_jobs_needs_valid_results_from_the_submitted_script() {
        let ok = collected_with(Some(vec![]), Some("aa"));
        assert_eq!(judge(&info(SlurmState::Completed, Some((0, 0))), None, &ok, Some("aa")), (Succeeded, None));
        let (s, why) = judge(&info(SlurmState::Completed, None), None, &collected_with(None, None), None);
        assert_eq!(s, Failed);
        assert!(why.unwrap().contains("no results_concurrency"));
        let (s, why) = judge(
            &info(SlurmState::Completed, None),
            None,
            &collected_with(Some(vec!["completed = 0".into()]), None),
            None,
        );
        assert_eq!(s, Failed);
        assert!(why.unwrap().contains("completed = 0"));
        let (s, why) = judge(&info(SlurmState::Completed, None), None, &ok, Some("bb"));
        assert_eq!(s, Failed);
        assert!(why.unwrap().contains("changed after submission"));
    }

    #[test]
    fn judging_other_terminal_states() {
        let none = collected_with(None, None);
        let (s, why) = judge(&info(SlurmState::Failed, Some((3, 0))), None, &none, None);
        assert_eq!((s, why.as_deref()), (Failed, Some("exit code 3 (NonZeroExitCode)")));
        assert_eq!(judge(&info(SlurmState::Timeout, None), None, &none, None).0, TimedOut);
        assert_eq!(judge(&info(SlurmState::NodeFail, None), None, &none, None).0, NodeFailed);
        assert_eq!(judge(&info(SlurmState::OutOfMemory, None), None, &none, None).0, Failed);
        let (s, why) = judge(&info(SlurmState::Cancelled, None), Some("fail-fast: x"), &none, None);
        assert_eq!((s, why.as_deref()), (Cancelled, Some("fail-fast: x")));
        let (_, why) = judge(&info(SlurmState::Cancelled, None), None, &none, None);
        assert!(why.unwrap().contains("outside sweepgate"));
    }

    #[test]
    fn unknown_jobs_are_never_successes() {
        let mut c = collected_with(None, None);
        c.markers.exit_code = None;
        let i = from_log(&JobId("9".into()), &c);
        assert_eq!(i.state, SlurmState::Failed);
        assert_eq!(i.source, StateSource::Log);
        assert!(i.reason.unwrap().contains("outcome unknown"));
        c.markers.exit_code = Some(0);
        assert_eq!(from_log(&JobId("9".into()), &c).state, SlurmState::Completed);
        c.markers.exit_code = Some(2);
        assert_eq!(from_log(&JobId("9".into()), &c).exit, Some(ExitStatus { code: 2, signal: 0 }));
    }

    #[test]
    fn job_names_are_scoped_by_repo_pr_and_sweep() {
        let a = job_prefix("acme/bench", 7);
        assert!(a.starts_with("sg-") && a.ends_with("-pr7-"));
        assert_eq!(a.len(), "sg-".len() + 8 + "-pr7-".len());
        assert_ne!(a, job_prefix("acme/other", 7));
        assert!(!job_prefix("acme/bench", 71).starts_with(&a), "pr7 must not prefix pr71");
        let s = sweep_prefix("acme/bench", 7, "s1");
        assert!(s.starts_with(&a));
        assert_ne!(s, sweep_prefix("acme/bench", 7, "s2"));
    }
}
