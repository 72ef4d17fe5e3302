//! The local-Slurm side of the dispatch tests (`tests/slurm_dispatch.rs`, `tests/slurm_faults.rs`):
//! a sweep's files in a temporary directory, the `sweepgate dispatch` command on them, bounded
//! waits, and assertions on the ledger and on Slurm's jobs.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sweepgate::sweep::dispatch::sweep_prefix;
use sweepgate::sweep::ledger::{Ledger, PointRecord, PointState};
use sweepgate::sweep::scheduler::{JobId, Scheduler};
use sweepgate::sweep::slurm::SlurmCli;

pub const BIN: &str = env!("CARGO_BIN_EXE_sweepgate");
pub const BENCH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/dispatch/bench.sh");
/// Safety bound for every wait: far above what any test needs, so a hang fails instead of hanging.
pub const BOUND: Duration = Duration::from_secs(300);

pub fn slurm_enabled(test: &str) -> bool {
    if std::env::var_os("SWEEPGATE_SLURM").is_none() {
        eprintln!("skipping {test}: SWEEPGATE_SLURM is unset (scripts/test.sh starts the local Slurm and sets it)");
        return false;
    }
    true
}

/// One sweep's files in a temporary directory, with a repository name no other test uses.
pub struct Sweep {
    pub dir: tempfile::TempDir,
    pub repo: String,
    pub pr: u64,
    pub sweep_id: String,
}

impl Sweep {
    pub fn new(tag: &str, pr: u64) -> Sweep {
        let dir = tempfile::Builder::new().prefix(&format!("sg-e2e-{tag}-")).tempdir().unwrap();
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        Sweep {
            dir,
            repo: format!("sweepgate-e2e/{tag}-{}-{nanos}", std::process::id()),
            pr,
            sweep_id: format!("{tag}-1"),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn write_plan(&self, canary: Option<Value>, families: Value) {
        let mut plan = json!({
            "version": 1, "sweep_id": self.sweep_id, "repo": self.repo, "pr": self.pr, "families": families
        });
        if let Some(c) = canary {
            plan["canary"] = c;
        }
        std::fs::write(self.path("plan.json"), serde_json::to_vec_pretty(&plan).unwrap()).unwrap();
    }

    pub fn write_pool(&self, extra: &str) {
        let text = format!("name = \"e2e\"\npartition = \"gpu\"\ngpus_per_node = 8\n{extra}\n");
        std::fs::write(self.path("pool.toml"), text).unwrap();
    }

    pub fn dispatch(&self, format: &str) -> Command {
        let mut cmd = Command::new(BIN);
        cmd.args(["dispatch", "--poll-ms", "300", "--format", format, "--plan"])
            .arg(self.path("plan.json"))
            .arg("--pool")
            .arg(self.path("pool.toml"))
            .arg("--ledger")
            .arg(self.path("ledger.db"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    pub fn points(&self) -> Vec<PointRecord> {
        Ledger::open(&self.path("ledger.db")).unwrap().points(&self.sweep_id).unwrap()
    }

    pub fn point(&self, id: &str) -> PointRecord {
        self.points().into_iter().find(|p| p.point_id == id).unwrap_or_else(|| panic!("no point {id}"))
    }

    /// Every Slurm job (active or finished) carrying this sweep's names, grouped by name.
    pub fn slurm_jobs_by_name(&self) -> HashMap<String, Vec<JobId>> {
        let mut by_name: HashMap<String, Vec<JobId>> = HashMap::new();
        for job in SlurmCli::default().jobs_named(&sweep_prefix(&self.repo, self.pr, &self.sweep_id)).unwrap() {
            by_name.entry(job.name.unwrap_or_default()).or_default().push(job.id);
        }
        by_name
    }

    pub fn assert_one_job_per_point(&self) {
        self.assert_one_job_per_point_besides(&[]);
    }

    /// As [`Sweep::assert_one_job_per_point`], not counting jobs a test submitted itself.
    pub fn assert_one_job_per_point_besides(&self, injected: &[JobId]) {
        let by_name = self.slurm_jobs_by_name();
        for p in self.points().iter().filter(|p| p.job_id.is_some()) {
            let mut jobs = by_name.get(&p.job_name).cloned().unwrap_or_default();
            jobs.retain(|j| !injected.contains(j));
            assert_eq!(jobs, [p.job_id.clone().unwrap()], "point {} must have exactly one Slurm job", p.point_id);
        }
    }

    /// The ledger tells one story: every point's transition log walks the state machine's edges
    /// from `planned` to the point's current state, and a point with a job entered `submitted`
    /// exactly once, with that job.
    pub fn assert_ledger_consistent(&self) {
        let conn = rusqlite::Connection::open(self.path("ledger.db")).unwrap();
        let mut stmt = conn
            .prepare("SELECT point_id, from_state, to_state, job_id FROM transition WHERE sweep_id = ?1 ORDER BY seq")
            .unwrap();
        let mut history: HashMap<String, Vec<(String, String, Option<String>)>> = HashMap::new();
        let rows = stmt
            .query_map([&self.sweep_id], |r| Ok((r.get::<_, String>(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap();
        for row in rows {
            let (point, from, to, job) = row.unwrap();
            history.entry(point).or_default().push((from, to, job));
        }
        for p in self.points() {
            let steps = history.remove(&p.point_id).unwrap_or_default();
            let mut at = PointState::Planned;
            for (from, to, _) in &steps {
                let (from, to) = (PointState::parse(from).unwrap(), PointState::parse(to).unwrap());
                assert_eq!(from, at, "point {}: a transition from {from:?} while at {at:?}: {steps:?}", p.point_id);
                assert!(from.can_go_to(to), "point {}: {from:?} -> {to:?} is no edge", p.point_id);
                at = to;
            }
            assert_eq!(at, p.state, "point {}: the log ends elsewhere than the state: {steps:?}", p.point_id);
            let submitted: Vec<_> = steps.iter().filter(|(_, to, _)| to == "submitted").collect();
            if let Some(job) = &p.job_id {
                assert_eq!(submitted.len(), 1, "point {}: entered submitted {} times", p.point_id, submitted.len());
                assert_eq!(submitted[0].2.as_deref(), Some(job.0.as_str()), "point {}: job", p.point_id);
            }
        }
        assert!(history.is_empty(), "transitions of unknown points: {history:?}");
    }
}

/// A failing test must not leave 5-minute jobs holding the cluster's GPUs.
impl Drop for Sweep {
    fn drop(&mut self) {
        let slurm = SlurmCli::default();
        if let Ok(jobs) = slurm.jobs_named(&sweep_prefix(&self.repo, self.pr, &self.sweep_id)) {
            let live: Vec<JobId> = jobs.into_iter().filter(|j| !j.state.is_final()).map(|j| j.id).collect();
            let _ = slurm.cancel(&live);
        }
    }
}

pub fn point(id: &str, gpus: u32, minutes: u32, env: Value) -> Value {
    json!({"id": id, "row": {"conc": 4, "isl": 1024, "osl": 1024}, "job": {"script": BENCH, "env": env, "gpus": gpus, "time_limit_minutes": minutes}})
}

/// Waits for `done` while the dispatcher runs; a dispatcher that exits first fails the test
/// with its output.
pub fn wait_until(child: &mut Child, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            if let Some(mut pipe) = child.stderr.take() {
                std::io::Read::read_to_string(&mut pipe, &mut err).ok();
            }
            panic!("dispatcher exited ({status}) before {what}:\n{err}");
        }
        assert!(start.elapsed() < BOUND, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

pub fn wait_output(child: Child) -> Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(BOUND) {
        Ok(out) => out.unwrap(),
        Err(_) => panic!("dispatcher pid {pid} did not finish within {BOUND:?}"),
    }
}
