//! The loop from a sweep label to a check run: when the label decision for a PR's head is
//! "sweep", [`SweepService::start`] plans the sweep (the `plan` code) for every configured pool
//! and hands it to the [`Engine`]; one thread runs engine rounds for all sweeps and keeps each
//! sweep's `sweepgate/sweep` check run up to date (at most every `check_every`). A new push,
//! an unlabel or a close goes through today's cancel path ([`SweepService::cancel`]); the next
//! qualifying event starts a new sweep for the head. Everything needed to resume lives under
//! `state_dir` (the ledger, one JSON record per sweep, the results store), so a killed server
//! resumes every unfinished sweep and never submits a point twice.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::Clients;
use crate::github::types::CheckRunInput;
use crate::github::{GitHub, GitHubError, RepoRef};
use crate::intake::labels::LabelDecision;
use crate::server::details::DetailsStore;
use crate::sweep::cancel::{cancel_pull_request, Cancelled};
use crate::sweep::check_run::SweepView;
use crate::sweep::dispatch_pool::DispatchPool;
use crate::sweep::engine::{Engine, EnginePool, EngineSweep};
use crate::sweep::launch::{self, LaunchPool, LaunchTarget};
use crate::sweep::ledger::Ledger;
use crate::sweep::plan_input::Plan;
use crate::sweep::plan_jobs::SkippedRow;
use crate::sweep::pool::load_file;
use crate::sweep::results_store::{ResultsStore, StoredSweep};
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
}

/// The server's clients as a [`CheckRuns`].
pub struct ClientCheckRuns<C>(pub Arc<C>);

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
    #[serde(default)]
    priorities: std::collections::HashMap<String, f64>,
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
}

impl SweepRecord {
    fn live(&self) -> bool {
        !self.concluded && !self.cancelled && self.error.is_none()
    }
}

struct Inner {
    engine: Engine,
    sweeps: BTreeMap<String, SweepRecord>,
}

pub struct SweepService {
    settings: SweepSettings,
    pools: Vec<LaunchPool>,
    inner: Mutex<Inner>,
    wake: Mutex<mpsc::Sender<()>>,
    store: ResultsStore,
}

impl std::fmt::Debug for SweepService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SweepService").field("settings", &self.settings).finish_non_exhaustive()
    }
}

fn state_err(path: &Path, e: impl std::fmt::Display) -> SweepSetupError {
    SweepSetupError::State { path: path.display().to_string(), message: e.to_string() }
}

/// Reads a pool file for the server: a full profile with a `launcher`, and the scheduler its
/// transport names (decision L22).
fn load_pool(path: &Path) -> Result<(LaunchPool, EnginePool), SweepSetupError> {
    let file = path.display().to_string();
    let invalid = |message: String| SweepSetupError::Invalid { file: file.clone(), message };
    let profile = load_file(path)?;
    let scheduler = transport::scheduler(&profile).map_err(|e| invalid(e.to_string()))?;
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
    let engine_pool = EnginePool { output_root: PathBuf::from(&profile.output_root), pool, scheduler };
    Ok((LaunchPool { profile, launcher: launcher.display().to_string() }, engine_pool))
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
        for path in &settings.pools {
            let (launch, engine) = load_pool(path)?;
            engine_pools.insert(launch.profile.name.clone(), engine);
            launch_pools.push(launch);
        }
        let records_dir = settings.state_dir.join("sweeps");
        std::fs::create_dir_all(&records_dir).map_err(|e| state_err(&records_dir, e))?;
        let ledger = Ledger::open(&settings.state_dir.join("ledger.db"))?;
        let store = ResultsStore::open(&settings.state_dir.join("results"))?;
        let mut engine = Engine::new(engine_pools, ledger, settings.poll_interval, settings.unreachable_limit);
        let mut sweeps = BTreeMap::new();
        for entry in std::fs::read_dir(&records_dir).map_err(|e| state_err(&records_dir, e))? {
            let path = entry.map_err(|e| state_err(&records_dir, e))?.path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let text = std::fs::read(&path).map_err(|e| state_err(&path, e))?;
            let mut record: SweepRecord = serde_json::from_slice(&text).map_err(|e| state_err(&path, e))?;
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
            inner: Mutex::new(Inner { engine, sweeps }),
            wake: Mutex::new(tx),
            store,
        });
        let worker = service.clone();
        std::thread::Builder::new()
            .name("sweeps".into())
            .spawn(move || worker.run(&rx, checks.as_ref(), &runtime))
            .map_err(|e| state_err(Path::new("sweeps thread"), e))?;
        Ok(service)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
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

    fn wake(&self) {
        let _ = self.wake.lock().unwrap_or_else(|p| p.into_inner()).send(());
    }

    /// Starts the sweep of the PR's head unless one is live for it (a redelivery or a second
    /// qualifying event changes nothing). Returns a line for the event's outcome.
    pub fn start(&self, request: &SweepRequest<'_>) -> String {
        let SweepRequest { repo, installation, pr, base_sha, head_sha, labels, decision, rerun_finished } = *request;
        let full = repo.to_string();
        let short = head_sha.get(..10).unwrap_or(head_sha);
        let mut inner = self.lock();
        let same_head = || inner.sweeps.values().filter(|s| s.repo == full && s.pr == pr && s.head_sha == head_sha);
        if let Some(live) = same_head().find(|s| s.live()) {
            return format!("sweep {} already runs for {short}", live.id);
        }
        if let Some(done) = same_head().next_back().filter(|_| !rerun_finished) {
            return format!("sweep {} already ran for {short}; add the label again to run it again", done.id);
        }
        let id = format!("pr{pr}-{short}-a{}", same_head().count() + 1);
        ensure_commits(&self.settings.repo_dir, pr, &[base_sha, head_sha]);
        let target = LaunchTarget {
            repo_dir: &self.settings.repo_dir,
            base_sha,
            head_sha,
            repo: &full,
            pr,
            sweep_id: &id,
            labels,
        };
        let mut record = SweepRecord {
            id: id.clone(),
            repo: full.clone(),
            pr,
            head_sha: head_sha.to_owned(),
            installation,
            plans: Vec::new(),
            priorities: Default::default(),
            skipped: Vec::new(),
            error: None,
            cancelled: false,
            check_run_id: None,
            concluded: false,
            notes: Vec::new(),
            priority_policy: None,
            last_post: None,
        };
        let line = match launch::build(&target, decision, &self.pools) {
            Ok(built) => {
                record.skipped = built.skipped;
                record.priorities = built.priorities;
                record.priority_policy = Some(built.priority_policy);
                record.plans = built.plans;
                if record.plans.is_empty() {
                    record.error = Some("no configured pool serves any row of the sweep".into());
                }
                // Recorded before the engine may submit anything, so a restart finds it.
                self.save(&record);
                if let Some(details) = &self.settings.details {
                    let ledger = self.settings.state_dir.join("ledger.db");
                    for (_, plan) in &record.plans {
                        details.record_sweep(repo, pr, head_sha, &ledger, &plan.sweep_id);
                    }
                }
                for (pool, plan) in &record.plans {
                    let sweep =
                        EngineSweep { plan: plan.clone(), pool: pool.clone(), priorities: record.priorities.clone() };
                    if let Err(e) = inner.engine.add(sweep) {
                        record.error = Some(e.to_string());
                    }
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
        self.save(&record);
        inner.sweeps.insert(id, record);
        drop(inner);
        self.wake();
        line
    }

    /// Today's cancel path (ledger intent first, then `scancel` of the PR's jobs), with the
    /// PR's sweeps marked cancelled so the next qualifying event starts a new one.
    pub fn cancel(&self, repo: &RepoRef, pr: u64) -> Result<Cancelled, crate::sweep::cancel::CancelError> {
        let full = repo.to_string();
        let mut inner = self.lock();
        let ledger = self.settings.state_dir.join("ledger.db");
        let local = SlurmCli::default();
        let mut schedulers = inner.engine.schedulers();
        if schedulers.is_empty() {
            schedulers.push(&local);
        }
        let mut done = Cancelled::default();
        // Each pool through its own transport; the ledger intent is idempotent.
        for scheduler in schedulers {
            let one = cancel_pull_request(scheduler, Some(&ledger), &full, pr)?;
            done.sweeps.extend(one.sweeps.into_iter().filter(|s| !done.sweeps.contains(s)).collect::<Vec<_>>());
            done.jobs.extend(one.jobs);
            done.prefix = one.prefix;
        }
        let ids: Vec<String> =
            inner.sweeps.values().filter(|s| s.repo == full && s.pr == pr && s.live()).map(|s| s.id.clone()).collect();
        for id in ids {
            if let Some(record) = inner.sweeps.get_mut(&id) {
                record.cancelled = true;
                let copy = record.clone();
                self.save(&copy);
            }
        }
        drop(inner);
        self.wake();
        Ok(done)
    }

    fn run(&self, wake: &mpsc::Receiver<()>, checks: &dyn CheckRuns, runtime: &tokio::runtime::Handle) {
        loop {
            match wake.recv_timeout(self.settings.poll_interval) {
                Ok(()) | Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
            let mut inner = self.lock();
            if let Err(e) = inner.engine.round(&mut |sweep, event| tracing::debug!(sweep, ?event, "dispatch")) {
                tracing::error!(error = %e, "sweep round failed; retrying next round");
            }
            let due: Vec<String> = inner.sweeps.values().filter(|s| !s.concluded).map(|s| s.id.clone()).collect();
            for id in due {
                self.publish(&mut inner, &id, checks, runtime);
            }
        }
    }

    /// Posts the sweep's check run when it changed state or `check_every` has passed; a finished
    /// sweep's results are stored first, and it is concluded once GitHub accepted the completed
    /// check run. A
    /// refused update is a note in the check run and retried next time, never a stuck sweep.
    fn publish(&self, inner: &mut Inner, id: &str, checks: &dyn CheckRuns, runtime: &tokio::runtime::Handle) {
        let Some(record) = inner.sweeps.get(id).cloned() else { return };
        let mut pools = Vec::new();
        for (pool, plan) in &record.plans {
            match inner.engine.ledger().points(&plan.sweep_id) {
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
        let Some(entry) = inner.sweeps.get_mut(id) else { return };
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
        let (launch, engine) = load_pool(&pool_file(dir.path(), "good", ok)).unwrap();
        assert_eq!(launch.launcher, dir.path().join("bench.sh").canonicalize().unwrap().display().to_string());
        assert_eq!((launch.profile.name.as_str(), engine.pool.name.as_str()), ("good", "good"));
    }
}
