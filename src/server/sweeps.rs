//! The loop from a sweep label to a check run: when the label decision for a PR's head is
//! "sweep", [`SweepService::start`] plans the sweep (the `plan` code) for every configured pool
//! and hands it to the [`Engine`]; one thread runs engine rounds for all sweeps and keeps each
//! sweep's `sweepgate/sweep` check run up to date (at most every `check_every`). A new push,
//! an unlabel or a close goes through today's cancel path ([`SweepService::cancel`]); the next
//! qualifying event starts a new sweep for the head. Everything needed to resume lives under
//! `state_dir` (the ledger, one JSON record per sweep, the results store), so a killed server
//! resumes every unfinished sweep and never submits a point twice.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::Clients;
use crate::evidence::collect::head::head_request;
use crate::evidence::collect::{collect, CollectLimits, UpstreamClient, UpstreamConfig};
use crate::github::types::CheckRunInput;
use crate::github::{GitHub, GitHubError, RepoRef};
use crate::intake::labels::LabelDecision;
use crate::pr::performance::{compare_run, Performance};
use crate::server::details::DetailsStore;
use crate::sweep::cancel::{cancel_pull_request, CancelError, Cancelled};
use crate::sweep::check_run::SweepView;
use crate::sweep::dispatch::job_prefix;
use crate::sweep::dispatch_pool::DispatchPool;
use crate::sweep::engine::{Engine, EnginePool, EngineSweep};
use crate::sweep::launch::{self, LaunchPool, LaunchTarget};
use crate::sweep::ledger::Ledger;
use crate::sweep::plan_input::Plan;
use crate::sweep::plan_jobs::SkippedRow;
use crate::sweep::pool::load_file;
use crate::sweep::results_store::{ResultsStore, StoredSweep};
use crate::sweep::scheduler::Scheduler;
use crate::sweep::slurm::SlurmCli;
use crate::sweep::transport;

/// The server's sweep settings (`serve --pool`, `pools = [...]`, `sweep_*` keys).
#[derive(Debug, Clone)]
pub struct SweepSettings {
    pub pools: Vec<PathBuf>,
    /// A local clone of the benchmark repository holding the PRs' base and head commits
    /// (fetched with `git fetch origin pull/<N>/head` when a commit is missing).
    pub repo_dir: PathBuf,
    /// Ledger, sweep records and results store.
    pub state_dir: PathBuf,
    pub check_name: String,
    pub check_every: Duration,
    pub poll_interval: Duration,
    pub unreachable_limit: Duration,
    /// The details page's store: each sweep is recorded there and its check run links to it.
    pub details: Option<Arc<DetailsStore>>,
}

/// Creates and edits check runs for the service's thread (any deployment's GitHub clients).
pub trait CheckRuns: Send + Sync {
    fn create<'a>(
        &'a self,
        installation: Option<u64>,
        repo: &'a RepoRef,
        input: &'a CheckRunInput,
    ) -> Pin<Box<dyn Future<Output = Result<u64, GitHubError>> + Send + 'a>>;
    fn update<'a>(
        &'a self,
        installation: Option<u64>,
        repo: &'a RepoRef,
        id: u64,
        input: &'a CheckRunInput,
    ) -> Pin<Box<dyn Future<Output = Result<(), GitHubError>> + Send + 'a>>;
    /// The completed sweep whose check run is `check_run` against the published curve (issue 26):
    /// the PR's Evidence as the collector gathers it (the sweep read back from the results
    /// store, the published runs looked up and their aggregates read as for a verdict), compared
    /// by `checks::performance`. `Err` names why it could not be made.
    fn performance<'a>(
        &'a self,
        installation: Option<u64>,
        repo: &'a RepoRef,
        pr: u64,
        check_run: u64,
    ) -> Pin<Box<dyn Future<Output = Result<Performance, String>> + Send + 'a>>;
}

/// The server's clients as a [`CheckRuns`], with the upstream settings and limits the comparison collects by.
pub struct ClientCheckRuns<C>(pub Arc<C>, pub UpstreamConfig, pub CollectLimits);

impl<C: Clients> CheckRuns for ClientCheckRuns<C> {
    fn create<'a>(
        &'a self,
        installation: Option<u64>,
        repo: &'a RepoRef,
        input: &'a CheckRunInput,
    ) -> Pin<Box<dyn Future<Output = Result<u64, GitHubError>> + Send + 'a>> {
        Box::pin(async move { self.0.client(installation)?.create_check_run(repo, input).await })
    }
    fn update<'a>(
        &'a self,
        installation: Option<u64>,
        repo: &'a RepoRef,
        id: u64,
        input: &'a CheckRunInput,
    ) -> Pin<Box<dyn Future<Output = Result<(), GitHubError>> + Send + 'a>> {
        Box::pin(async move { self.0.client(installation)?.update_check_run(repo, id, input).await })
    }
    fn performance<'a>(
        &'a self,
        installation: Option<u64>,
        repo: &'a RepoRef,
        pr: u64,
        check_run: u64,
    ) -> Pin<Box<dyn Future<Output = Result<Performance, String>> + Send + 'a>> {
        Box::pin(async move {
            let gh = self.0.client(installation).map_err(|e| e.to_string())?;
            let pull = gh.get_pull(repo, pr).await.map_err(|e| format!("the PR could not be read: {e}"))?;
            let (request, known) = head_request(repo, &pull);
            let upstream = UpstreamClient::new(self.1.clone()).map_err(|e| e.to_string())?;
            let evidence = collect(gh.as_ref(), &upstream, &request, &self.2, known)
                .await
                .map_err(|e| format!("the PR's evidence could not be collected: {e}"))?;
            Ok(compare_run(&evidence, check_run))
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SweepSetupError {
    #[error(transparent)]
    Pool(#[from] crate::sweep::pool::PoolError),
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
    #[error(transparent)]
    Ledger(#[from] crate::sweep::ledger::LedgerError),
    #[error(transparent)]
    Store(#[from] crate::sweep::results_store::StoreError),
    #[error("sweep state {path}: {message}")]
    State { path: String, message: String },
}

/// A PR head whose label decision is "sweep".
#[derive(Clone, Copy)]
pub struct SweepRequest<'a> {
    pub repo: &'a RepoRef,
    pub installation: Option<u64>,
    pub pr: u64,
    pub base_sha: &'a str,
    /// The branch whose tip holds the CI-priority policy (`evidence::collect::policy_branch`);
    /// empty when unknown (the base commit's is used).
    pub policy_branch: &'a str,
    pub head_sha: &'a str,
    pub labels: &'a [String],
    pub decision: &'a LabelDecision,
    /// Whether a head whose sweep already finished runs again: only an explicit `labeled`
    /// event asks for that; edits, reopenings and reconcile passes must not re-run a sweep.
    pub rerun_finished: bool,
}

/// One sweep of one PR head, as the service records it (`<state>/sweeps/<id>.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SweepRecord {
    id: String,
    repo: String,
    pr: u64,
    head_sha: String,
    installation: Option<u64>,
    /// (pool, plan) — each plan's sweep id is `<id>-<pool>`.
    plans: Vec<(String, Plan)>,
    /// A `null` (a NaN saved by an older server) reads as NaN, which the engine ranks lowest.
    #[serde(default, deserialize_with = "priorities_or_nan")]
    priorities: HashMap<String, f64>,
    skipped: Vec<SkippedRow>,
    /// Why nothing could run (planning failed).
    error: Option<String>,
    cancelled: bool,
    check_run_id: Option<u64>,
    /// The completed check run was accepted by GitHub: nothing more to do.
    concluded: bool,
    #[serde(default)]
    notes: Vec<String>,
    /// Which CI priority policy ordered the points.
    #[serde(default)]
    priority_policy: Option<crate::domain::ci_priority::PolicySource>,
    #[serde(skip)]
    last_post: Option<Instant>,
    /// Being planned (outside the service lock): counts as live, has no check run yet.
    #[serde(skip)]
    planning: bool,
}

fn priorities_or_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<HashMap<String, f64>, D::Error> {
    let read: HashMap<String, Option<f64>> = Deserialize::deserialize(d)?;
    Ok(read.into_iter().map(|(point, p)| (point, p.unwrap_or(f64::NAN))).collect())
}

impl SweepRecord {
    fn live(&self) -> bool {
        !self.concluded && !self.cancelled && self.error.is_none()
    }
}

/// What the sweeps thread is told: run these sweeps (of this record), or just look again.
enum Msg {
    Wake,
    Add { record: String, sweeps: Vec<EngineSweep> },
}

/// The sweep service. The [`Engine`] (and every Slurm call it makes) belongs to the sweeps
/// thread alone; the records' lock is never held across Slurm, git or GitHub, so an event for
/// one PR is handled while another PR's Slurm calls are slow (decision HE2).
pub struct SweepService {
    settings: SweepSettings,
    pools: Vec<LaunchPool>,
    sweeps: Mutex<BTreeMap<String, SweepRecord>>,
    wake: Mutex<mpsc::Sender<Msg>>,
    store: ResultsStore,
    /// Each pool's transport for the cancel path (its own instance: no engine lock needed).
    cancellers: Vec<Box<dyn Scheduler + Send + Sync>>,
}

impl std::fmt::Debug for SweepService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SweepService").field("settings", &self.settings).finish_non_exhaustive()
    }
}

fn state_err(path: &Path, e: impl std::fmt::Display) -> SweepSetupError {
    SweepSetupError::State { path: path.display().to_string(), message: e.to_string() }
}

/// A pool as the server runs it: what plans name, what the engine drives, and a second
/// transport for cancels.
struct LoadedPool {
    launch: LaunchPool,
    engine: EnginePool,
    canceller: Box<dyn Scheduler + Send + Sync>,
}

/// Reads a pool file for the server: a full profile with a `launcher`, and the scheduler its
/// transport names (decision L22).
fn load_pool(path: &Path) -> Result<LoadedPool, SweepSetupError> {
    let file = path.display().to_string();
    let invalid = |message: String| SweepSetupError::Invalid { file: file.clone(), message };
    let profile = load_file(path)?;
    let scheduler = transport::scheduler(&profile).map_err(|e| invalid(e.to_string()))?;
    let canceller = transport::scheduler(&profile).map_err(|e| invalid(e.to_string()))?;
    if !profile.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') || profile.name.len() > 20 {
        return Err(invalid(format!(
            "pool name {:?} must be ≤ 20 of [A-Za-z0-9_-] (it is part of sweep ids)",
            profile.name
        )));
    }
    let launcher = profile.launcher.clone().ok_or_else(|| invalid("no `launcher`: the script each job runs".into()))?;
    let launcher = path.parent().unwrap_or(Path::new(".")).join(launcher);
    let launcher = launcher.canonicalize().map_err(|e| invalid(format!("launcher {}: {e}", launcher.display())))?;
    let bytes = std::fs::read(path).map_err(|e| invalid(e.to_string()))?;
    let pool = DispatchPool::parse(&bytes, path).map_err(|e| invalid(e.to_string()))?;
    let engine = EnginePool { output_root: PathBuf::from(&profile.output_root), pool, scheduler };
    Ok(LoadedPool { launch: LaunchPool { profile, launcher: launcher.display().to_string() }, engine, canceller })
}

/// Reads every sweep record under `dir`. A record that cannot be read is moved to
/// `dir/quarantine/` and logged with why, so one bad file never stops the server (its sweep
/// is not resumed; the ledger still has its points for an operator).
fn load_records(dir: &Path) -> Result<Vec<SweepRecord>, SweepSetupError> {
    let mut records = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| state_err(dir, e))? {
        let path = entry.map_err(|e| state_err(dir, e))?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let read = std::fs::read(&path).map_err(|e| e.to_string());
        match read.and_then(|text| serde_json::from_slice::<SweepRecord>(&text).map_err(|e| e.to_string())) {
            Ok(record) => records.push(record),
            Err(why) => quarantine(dir, &path, &why),
        }
    }
    Ok(records)
}

fn quarantine(dir: &Path, path: &Path, why: &str) {
    let to = dir.join("quarantine").join(path.file_name().unwrap_or_default());
    let moved = std::fs::create_dir_all(dir.join("quarantine")).and_then(|()| std::fs::rename(path, &to));
    match moved {
        Ok(()) => tracing::error!(
            record = %path.display(), moved_to = %to.display(), error = why,
            "a sweep record cannot be read: quarantined, its sweep is not resumed"
        ),
        Err(e) => tracing::error!(
            record = %path.display(), error = why, move_error = %e,
            "a sweep record cannot be read and cannot be moved aside: skipped"
        ),
    }
}

impl SweepService {
    /// Loads the pools, opens the state, resumes every unfinished sweep and starts the thread
    /// that runs them; check runs are posted through `checks` on `runtime`.
    pub fn open(
        settings: SweepSettings,
        checks: Arc<dyn CheckRuns>,
        runtime: tokio::runtime::Handle,
    ) -> Result<Arc<SweepService>, SweepSetupError> {
        let mut launch_pools = Vec::new();
        let mut engine_pools = BTreeMap::new();
        let mut cancellers = Vec::new();
        for path in &settings.pools {
            let loaded = load_pool(path)?;
            engine_pools.insert(loaded.launch.profile.name.clone(), loaded.engine);
            launch_pools.push(loaded.launch);
            cancellers.push(loaded.canceller);
        }
        let records_dir = settings.state_dir.join("sweeps");
        std::fs::create_dir_all(&records_dir).map_err(|e| state_err(&records_dir, e))?;
        let ledger = Ledger::open(&settings.state_dir.join("ledger.db"))?;
        let store = ResultsStore::open(&settings.state_dir.join("results"))?;
        let mut engine = Engine::new(engine_pools, ledger, settings.poll_interval, settings.unreachable_limit);
        let mut sweeps = BTreeMap::new();
        for mut record in load_records(&records_dir)? {
            if !record.concluded {
                for (pool, plan) in &record.plans {
                    let sweep =
                        EngineSweep { plan: plan.clone(), pool: pool.clone(), priorities: record.priorities.clone() };
                    if let Err(e) = engine.add(sweep) {
                        record.notes.push(format!("could not resume on pool {pool}: {e}"));
                    }
                }
                tracing::info!(sweep = %record.id, "resuming sweep");
            }
            sweeps.insert(record.id.clone(), record);
        }
        let (tx, rx) = mpsc::channel();
        let service = Arc::new(SweepService {
            settings,
            pools: launch_pools,
            sweeps: Mutex::new(sweeps),
            wake: Mutex::new(tx),
            store,
            cancellers,
        });
        let worker = service.clone();
        std::thread::Builder::new()
            .name("sweeps".into())
            .spawn(move || worker.run(engine, &rx, checks.as_ref(), &runtime))
            .map_err(|e| state_err(Path::new("sweeps thread"), e))?;
        Ok(service)
    }

    /// The records; held for map edits and local file writes only.
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, SweepRecord>> {
        self.sweeps.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn save(&self, record: &SweepRecord) {
        let path = self.settings.state_dir.join("sweeps").join(format!("{}.json", record.id));
        let tmp = path.with_extension("json.tmp");
        let written = serde_json::to_vec_pretty(record)
            .map_err(std::io::Error::other)
            .and_then(|text| std::fs::write(&tmp, text))
            .and_then(|_| std::fs::rename(&tmp, &path));
        if let Err(e) = written {
            tracing::error!(path = %path.display(), error = %e, "cannot record the sweep; a restart would not resume it");
        }
    }

    fn send(&self, msg: Msg) {
        let _ = self.wake.lock().unwrap_or_else(|p| p.into_inner()).send(msg);
    }

    /// Starts the sweep of the PR's head unless one is live for it (a redelivery or a second
    /// qualifying event changes nothing). Returns a line for the event's outcome. Git runs
    /// outside the records' lock: the sweep is held as "planning" meanwhile.
    pub fn start(&self, request: &SweepRequest<'_>) -> String {
        let SweepRequest {
            repo,
            installation,
            pr,
            base_sha,
            policy_branch,
            head_sha,
            labels,
            decision,
            rerun_finished,
        } = *request;
        let full = repo.to_string();
        let short = head_sha.get(..10).unwrap_or(head_sha);
        let id = {
            let mut sweeps = self.lock();
            let same_head = || sweeps.values().filter(|s| s.repo == full && s.pr == pr && s.head_sha == head_sha);
            if let Some(live) = same_head().find(|s| s.live()) {
                return format!("sweep {} already runs for {short}", live.id);
            }
            if let Some(done) = same_head().next_back().filter(|_| !rerun_finished) {
                return format!("sweep {} already ran for {short}; add the label again to run it again", done.id);
            }
            let id = format!("pr{pr}-{short}-a{}", same_head().count() + 1);
            let record = SweepRecord {
                id: id.clone(),
                repo: full.clone(),
                pr,
                head_sha: head_sha.to_owned(),
                installation,
                plans: Vec::new(),
                priorities: HashMap::new(),
                skipped: Vec::new(),
                error: None,
                cancelled: false,
                check_run_id: None,
                concluded: false,
                notes: Vec::new(),
                priority_policy: None,
                last_post: None,
                planning: true,
            };
            sweeps.insert(id.clone(), record);
            id
        };
        ensure_commits(&self.settings.repo_dir, pr, &[base_sha, head_sha]);
        let policy_sha = target_tip(&self.settings.repo_dir, policy_branch).unwrap_or_else(|| base_sha.to_owned());
        let target = LaunchTarget {
            repo_dir: &self.settings.repo_dir,
            base_sha,
            head_sha,
            policy_sha: &policy_sha,
            repo: &full,
            pr,
            sweep_id: &id,
            labels,
        };
        let built = launch::build(&target, decision, &self.pools);
        let mut sweeps = self.lock();
        let Some(record) = sweeps.get_mut(&id) else { return format!("sweep {id} was dropped while planned") };
        let mut engine_sweeps = Vec::new();
        let line = match built {
            Ok(built) => {
                record.skipped = built.skipped;
                record.priorities = built.priorities;
                record.priority_policy = Some(built.priority_policy);
                record.plans = built.plans;
                if record.plans.is_empty() {
                    record.error = Some("no configured pool serves any row of the sweep".into());
                }
                if let Some(details) = &self.settings.details {
                    let ledger = self.settings.state_dir.join("ledger.db");
                    for (_, plan) in &record.plans {
                        details.record_sweep(repo, pr, head_sha, &ledger, &plan.sweep_id);
                    }
                }
                if !record.cancelled {
                    engine_sweeps = record
                        .plans
                        .iter()
                        .map(|(pool, plan)| EngineSweep {
                            plan: plan.clone(),
                            pool: pool.clone(),
                            priorities: record.priorities.clone(),
                        })
                        .collect();
                }
                let points: usize = record.plans.iter().map(|(_, p)| p.placed_points().len()).sum();
                format!(
                    "sweep {id} started: {points} point(s) on {} pool(s), {} row(s) skipped",
                    record.plans.len(),
                    record.skipped.len()
                )
            }
            Err(e) => {
                record.error = Some(e.to_string());
                format!("sweep {id} could not be planned: {e}")
            }
        };
        // Still "planning" until the sweeps thread holds its plans: a round in between would
        // otherwise publish it as finished with no point in the ledger.
        record.planning = !engine_sweeps.is_empty();
        // Recorded before the engine may submit anything, so a restart finds it.
        let copy = record.clone();
        self.save(&copy);
        drop(sweeps);
        self.send(Msg::Add { record: id, sweeps: engine_sweeps });
        line
    }

    /// Today's cancel path (ledger intent first, then `scancel` of the PR's jobs), with the
    /// PR's sweeps marked cancelled so the next qualifying event starts a new one. Slurm is
    /// asked only when the ledger has a sweep of the PR (the server submits nothing that is
    /// not registered there first), and never under the records' lock.
    pub fn cancel(&self, repo: &RepoRef, pr: u64) -> Result<Cancelled, crate::sweep::cancel::CancelError> {
        let full = repo.to_string();
        let ledger = self.settings.state_dir.join("ledger.db");
        let ledger_error =
            |source| CancelError::Ledger { path: ledger.display().to_string(), source: Box::new(source) };
        let registered = Ledger::open(&ledger).and_then(|mut l| l.request_cancel(&full, pr)).map_err(ledger_error)?;
        let mut done = Cancelled { prefix: job_prefix(&full, pr), ..Cancelled::default() };
        if !registered.is_empty() {
            let local = SlurmCli::default();
            let mut schedulers: Vec<&dyn Scheduler> =
                self.cancellers.iter().map(|s| s.as_ref() as &dyn Scheduler).collect();
            if schedulers.is_empty() {
                schedulers.push(&local);
            }
            // Each pool through its own transport; the ledger intent is idempotent.
            for scheduler in schedulers {
                let one = cancel_pull_request(scheduler, Some(&ledger), &full, pr)?;
                done.sweeps.extend(one.sweeps.into_iter().filter(|s| !done.sweeps.contains(s)).collect::<Vec<_>>());
                done.jobs.extend(one.jobs);
            }
        }
        let mut sweeps = self.lock();
        for record in sweeps.values_mut().filter(|s| s.repo == full && s.pr == pr && s.live()) {
            record.cancelled = true;
            let copy = record.clone();
            self.save(&copy);
        }
        drop(sweeps);
        self.send(Msg::Wake);
        Ok(done)
    }

    /// The sweeps thread: the engine is its own, so rounds (Slurm calls) block nobody else.
    fn run(
        &self,
        mut engine: Engine,
        wake: &mpsc::Receiver<Msg>,
        checks: &dyn CheckRuns,
        runtime: &tokio::runtime::Handle,
    ) {
        loop {
            let first = match wake.recv_timeout(self.settings.poll_interval) {
                Ok(msg) => Some(msg),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            };
            for msg in first.into_iter().chain(wake.try_iter()) {
                let Msg::Add { record, sweeps } = msg else { continue };
                let mut error = None;
                for sweep in sweeps {
                    if let Err(e) = engine.add(sweep) {
                        error = Some(e.to_string());
                    }
                }
                let mut records = self.lock();
                if let Some(entry) = records.get_mut(&record) {
                    entry.planning = false;
                    if let Some(e) = error {
                        entry.error = Some(e);
                        let copy = entry.clone();
                        self.save(&copy);
                    }
                }
            }
            if let Err(e) = engine.round(&mut |sweep, event| tracing::debug!(sweep, ?event, "dispatch")) {
                tracing::error!(error = %e, "sweep round failed; retrying next round");
            }
            let due: Vec<String> =
                self.lock().values().filter(|s| !s.concluded && !s.planning).map(|s| s.id.clone()).collect();
            for id in due {
                self.publish(&engine, &id, checks, runtime);
            }
        }
    }

    /// Posts the sweep's check run when it changed state or `check_every` has passed; a finished
    /// sweep's results are stored first, and it is concluded once GitHub accepted the completed
    /// check run. A refused update is a note in the check run and retried next time, never a
    /// stuck sweep. GitHub is called without the records' lock.
    fn publish(&self, engine: &Engine, id: &str, checks: &dyn CheckRuns, runtime: &tokio::runtime::Handle) {
        let Some(record) = self.lock().get(id).cloned() else { return };
        let mut pools = Vec::new();
        for (pool, plan) in &record.plans {
            match engine.ledger().points(&plan.sweep_id) {
                Ok(points) => pools.push((pool.as_str(), points)),
                Err(e) => {
                    tracing::error!(sweep = id, error = %e, "cannot read the ledger");
                    return;
                }
            }
        }
        let view = SweepView {
            check_name: &self.settings.check_name,
            sweep_id: &record.id,
            head_sha: &record.head_sha,
            pools,
            skipped: &record.skipped,
            error: record.error.as_deref(),
            cancelled: record.cancelled,
            notes: &record.notes,
            priority_policy: record.priority_policy.as_ref(),
            performance: None,
        };
        let finished = view.finished();
        let due = record.last_post.is_none_or(|t| t.elapsed() >= self.settings.check_every);
        if !finished && !due {
            return;
        }
        let mut input = match view.render() {
            Ok(input) => input,
            Err(e) => {
                tracing::error!(sweep = id, error = %e, "cannot render the check run");
                return;
            }
        };
        let conclusion = input.conclusion.clone();
        let all_points: Vec<_> = view.pools.iter().flat_map(|(_, p)| p.iter().cloned()).collect();
        let repo = match RepoRef::parse(&record.repo) {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(sweep = id, error = %e, "bad repository name in the sweep record");
                return;
            }
        };
        input.details_url = self.settings.details.as_ref().map(|d| d.url(&repo, record.pr));
        // The results are stored before GitHub shows the sweep completed, so a verifier that
        // sees the completed check run finds them (decision L7).
        if let Some(conclusion) = &conclusion {
            let stored = StoredSweep {
                sweep_id: record.id.clone(),
                repo: record.repo.clone(),
                pr: record.pr,
                head_sha: record.head_sha.clone(),
                conclusion: conclusion.clone(),
                completed_at: chrono::Utc::now().to_rfc3339(),
                points: Vec::new(),
            };
            if let Err(e) = self.store.store(stored, &all_points) {
                tracing::error!(sweep = id, error = %e, "cannot store the sweep's results");
            }
        }
        let posted = runtime.block_on(async {
            match record.check_run_id {
                Some(run) => checks.update(record.installation, &repo, run, &input).await.map(|()| run),
                None => checks.create(record.installation, &repo, &input).await,
            }
        });
        // Once GitHub shows the sweep succeeded, the collector can read it back: the check run
        // gains the comparison with the published curve (or why it could not be made; decision
        // PF6). A refused update leaves the sweep unconcluded, so the next round posts both again.
        let posted = match (posted, conclusion.as_deref()) {
            // Only a sweep that succeeded is a run a reviewer compares (Check 1's rule too).
            (Ok(run), Some("success")) => {
                let performance = runtime.block_on(checks.performance(record.installation, &repo, record.pr, run));
                if let Err(why) = &performance {
                    tracing::warn!(sweep = id, error = %why, "no comparison with the published curve");
                }
                let view = SweepView { performance: Some(&performance), ..view };
                match view.render() {
                    Ok(mut compared) => {
                        compared.details_url.clone_from(&input.details_url);
                        runtime.block_on(checks.update(record.installation, &repo, run, &compared)).map(|()| run)
                    }
                    Err(e) => {
                        tracing::error!(sweep = id, error = %e, "cannot render the check run with its comparison");
                        Ok(run)
                    }
                }
            }
            (posted, _) => posted,
        };
        let mut records = self.lock();
        let Some(entry) = records.get_mut(id) else { return };
        entry.last_post = Some(Instant::now());
        match posted {
            Ok(run) => {
                entry.check_run_id = Some(run);
                entry.concluded |= conclusion.is_some();
            }
            Err(e) => {
                tracing::warn!(sweep = id, error = %e, "GitHub refused the check run; retrying");
                let note = format!("a check-run update was refused by GitHub: {e}");
                if !entry.notes.contains(&note) {
                    entry.notes.push(note);
                }
            }
        }
        let copy = entry.clone();
        self.save(&copy);
    }
}

/// The current tip of the PR's target branch, fetched into `refs/sweepgate/target/<branch>`
/// (ARCHITECTURE decision 6: the CI-priority policy is read there). `None` when the name is not
/// a plain branch name or the branch cannot be fetched nor found: the caller falls back to the
/// event's `base.sha`, which the check run names as the policy's commit.
fn target_tip(repo_dir: &Path, branch: &str) -> Option<String> {
    let git = || {
        let mut c = std::process::Command::new("git");
        c.arg("-C").arg(repo_dir);
        c
    };
    let plain = !branch.is_empty()
        && !branch.starts_with('-')
        && git().args(["check-ref-format", "--branch", branch]).output().is_ok_and(|o| o.status.success());
    if !plain {
        return None;
    }
    let local = format!("refs/sweepgate/target/{branch}");
    let fetched = git()
        .args(["fetch", "-q", "origin", &format!("+refs/heads/{branch}:{local}")])
        .status()
        .is_ok_and(|s| s.success());
    if !fetched {
        tracing::warn!(repo = %repo_dir.display(), branch, "git fetch of the target branch failed");
    }
    let out = git().args(["rev-parse", "--verify", "-q", &format!("{local}^{{commit}}")]).output().ok()?;
    let sha = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !sha.is_empty()).then_some(sha)
}

/// Makes sure the clone has both commits, fetching the PR's head ref when one is missing; what
/// still cannot be found fails the planning, naming the commit.
fn ensure_commits(repo_dir: &Path, pr: u64, shas: &[&str]) {
    let has = |sha: &str| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(repo_dir)
            .args(["cat-file", "-e", &format!("{sha}^{{commit}}")])
            .status()
            .is_ok_and(|s| s.success())
    };
    if shas.iter().all(|s| has(s)) {
        return;
    }
    let fetched = std::process::Command::new("git")
        .arg("-C")
        .arg(repo_dir)
        .args(["fetch", "-q", "origin", &format!("pull/{pr}/head"), "HEAD"])
        .status();
    if !fetched.is_ok_and(|s| s.success()) {
        tracing::warn!(repo = %repo_dir.display(), pr, "git fetch of the PR's commits failed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool_file(dir: &Path, name: &str, transform: impl Fn(String) -> String) -> PathBuf {
        let local = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("pools/local.toml")).unwrap();
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(&path, transform(local)).unwrap();
        path
    }

    const CLI: (&str, &str) =
        ("kind = \"slurmrestd\"\nurl = \"http://127.0.0.1:6820\"\napi_version = \"v0.0.38\"", "kind = \"cli\"");

    /// Issue 24: a NaN priority was saved as `null` and the restart failed with "invalid type:
    /// null, expected f64" until someone deleted the record by hand.
    #[test]
    fn every_record_reloads_and_one_that_cannot_is_quarantined() {
        let dir = tempfile::tempdir().unwrap();
        let record = serde_json::json!({
            "id": "pr7-abc-a1", "repo": "o/r", "pr": 7, "head_sha": "abc", "installation": null,
            "plans": [], "priorities": {"p0": null, "p1": 2.5}, "skipped": [], "error": null,
            "cancelled": false, "check_run_id": null, "concluded": false
        });
        std::fs::write(dir.path().join("pr7-abc-a1.json"), record.to_string()).unwrap();
        std::fs::write(dir.path().join("pr8-def-a1.json"), "{\"id\": \"pr8\", \"truncated").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a record").unwrap();
        let records = load_records(dir.path()).unwrap();
        assert_eq!(records.len(), 1, "the server starts with what it can read");
        assert!(records[0].priorities["p0"].is_nan() && records[0].priorities["p1"] == 2.5);
        assert!(!dir.path().join("pr8-def-a1.json").exists());
        assert!(dir.path().join("quarantine/pr8-def-a1.json").exists(), "moved aside for an operator");
        assert!(dir.path().join("notes.txt").exists());
        assert_eq!(load_records(dir.path()).unwrap().len(), 1, "the quarantined record stays out of the next start");
    }

    #[test]
    fn pools_need_a_launcher_and_a_transport_the_server_implements() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bench.sh"), "#!/bin/sh\n").unwrap();
        let err = load_pool(&pool_file(dir.path(), "rest", |t| format!("launcher = \"bench.sh\"\n{t}"))).err().unwrap();
        assert!(err.to_string().contains("sweepgate speaks slurmrestd v0.0.39"), "{err}");
        let rest = |token: &'static str| {
            move |t: String| {
                format!("launcher = \"bench.sh\"\n{}", t.replace("v0.0.38\"", &format!("v0.0.39\"{token}")))
            }
        };
        let gone =
            load_pool(&pool_file(dir.path(), "rest2", rest("\ntoken_file = \"/nonexistent/jwt\""))).err().unwrap();
        assert!(gone.to_string().contains("transport.token_file /nonexistent/jwt"), "{gone}");
        assert!(load_pool(&pool_file(dir.path(), "rest3", rest(""))).is_ok());
        let ssh =
            |t: String| format!("launcher = \"bench.sh\"\n{}", t.replace(CLI.0, "kind = \"cli\"\nssh_host = \"c\""));
        assert!(load_pool(&pool_file(dir.path(), "ssh", ssh)).is_ok());
        let err = load_pool(&pool_file(dir.path(), "nolauncher", |t| t.replace(CLI.0, CLI.1))).err().unwrap();
        assert!(err.to_string().contains("no `launcher`"), "{err}");
        let missing = |t: String| format!("launcher = \"gone.sh\"\n{}", t.replace(CLI.0, CLI.1));
        assert!(load_pool(&pool_file(dir.path(), "missing", missing)).err().unwrap().to_string().contains("gone.sh"));
        let ok = |t: String| format!("launcher = \"bench.sh\"\n{}", t.replace(CLI.0, CLI.1));
        let LoadedPool { launch, engine, .. } = load_pool(&pool_file(dir.path(), "good", ok)).unwrap();
        assert_eq!(launch.launcher, dir.path().join("bench.sh").canonicalize().unwrap().display().to_string());
        assert_eq!((launch.profile.name.as_str(), engine.pool.name.as_str()), ("good", "good"));
    }
}
