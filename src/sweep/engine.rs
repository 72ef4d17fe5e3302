//! Many sweeps at once over shared pools (the server's dispatcher): each round, every pool's
//! `max_concurrent_allocations` is shared by all the sweeps on it. Free slots go to the sweep
//! whose next pending point has the highest CI priority (spec 10 §9), ties round-robin between
//! pull requests, so a 400-point sweep cannot starve a 4-point one. Each sweep's own canary
//! gate, fail-fast and cancel requests stay the [`Dispatcher`]'s (one [`Dispatcher::round`] per
//! sweep and round), and every step is in the one [`Ledger`], so a killed server resumes every
//! sweep without submitting a point twice.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::dispatch::{DispatchConfig, DispatchError, Dispatcher, Event};
use super::dispatch_pool::DispatchPool;
use super::ledger::{Ledger, LedgerError, Outcome, PointRecord, PointState};
use super::plan_input::Plan;
use super::scheduler::Scheduler;

/// A pool as the engine runs it: its dispatch fields, how to reach its Slurm, where jobs write.
pub struct EnginePool {
    pub pool: DispatchPool,
    pub scheduler: Box<dyn Scheduler + Send>,
    pub output_root: PathBuf,
}

/// One sweep on one pool. Points within each family are in the order they should run.
pub struct EngineSweep {
    pub plan: Plan,
    pub pool: String,
    /// Point id → CI priority (higher runs sooner); absent points count as 0.
    pub priorities: HashMap<String, f64>,
}

struct Live {
    sweep: EngineSweep,
    last_answer: Instant,
}

/// How an engine round ended for one sweep.
#[derive(Debug)]
pub enum SweepProgress {
    Running(Vec<PointRecord>),
    /// Every point is final.
    Finished(Vec<PointRecord>),
}

pub struct Engine {
    pools: BTreeMap<String, EnginePool>,
    ledger: Ledger,
    sweeps: Vec<Live>,
    poll_interval: Duration,
    unreachable_limit: Duration,
    /// The PR served last, for round-robin between equal priorities.
    cursor: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("sweep {sweep}: pool {pool} is not configured")]
    UnknownPool { sweep: String, pool: String },
    #[error("sweep {sweep}: {source}")]
    Dispatch { sweep: String, source: Box<DispatchError> },
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

/// A sweep's claim on free slots: its PR, the priority of its next pending point and how many
/// points it could start now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Demand {
    pub pr: u64,
    pub priority: f64,
    pub wanted: usize,
}

/// Shares `free` slots: highest priority first, round-robin between the demands of that
/// priority, starting after PR `cursor`. Returns the slots of each demand and the PR served
/// last (the next cursor). Terminates for any input: a NaN priority ranks below every number
/// (it cannot come from a validated policy, but a record or a caller may carry one), and each
/// pass over a tier either grants every open demand at least one slot or uses up `free`, so
/// the work is bounded by the number of demands, never by `free` or `wanted`.
pub fn allocate(demands: &[Demand], mut free: usize, cursor: u64) -> (Vec<usize>, Option<u64>) {
    let mut grants = vec![0; demands.len()];
    let mut last = None;
    // Rotated PR order: PRs after the cursor first, then the rest.
    let mut order: Vec<usize> = (0..demands.len()).collect();
    order.sort_by_key(|&i| (demands[i].pr <= cursor, demands[i].pr));
    let mut tiers: Vec<f64> = demands.iter().map(|d| rank(d.priority)).collect();
    tiers.sort_by(|a, b| b.total_cmp(a));
    tiers.dedup();
    for top in tiers {
        let mut tier: Vec<usize> = order.iter().copied().filter(|&i| rank(demands[i].priority) == top).collect();
        loop {
            tier.retain(|&i| grants[i] < demands[i].wanted);
            if free == 0 || tier.is_empty() {
                break;
            }
            // An equal share each (at least one slot), in rotated order; what a small demand
            // leaves goes round again.
            let share = (free / tier.len()).max(1);
            for &i in &tier {
                let granted = share.min(demands[i].wanted - grants[i]).min(free);
                if granted == 0 {
                    break;
                }
                grants[i] += granted;
                free -= granted;
                last = Some(demands[i].pr);
            }
        }
    }
    (grants, last)
}

/// A priority as [`allocate`] orders it: NaN is the lowest (never equal to itself otherwise).
fn rank(priority: f64) -> f64 {
    if priority.is_nan() {
        f64::NEG_INFINITY
    } else {
        priority
    }
}

/// What a sweep could start now and the priority of the first of those points.
fn demand(records: &[PointRecord], pr: u64, priorities: &HashMap<String, f64>) -> Demand {
    let priority = |r: &PointRecord| priorities.get(&r.point_id).copied().unwrap_or(0.0);
    if let Some(canary) = records.iter().find(|r| r.is_canary && !r.state.is_terminal()) {
        let wanted = usize::from(canary.state == PointState::Planned);
        return Demand { pr, priority: priority(canary), wanted };
    }
    let mut planned = records.iter().filter(|r| !r.is_canary && r.state == PointState::Planned);
    match planned.next() {
        Some(first) => Demand { pr, priority: priority(first), wanted: 1 + planned.count() },
        None => Demand { pr, priority: 0.0, wanted: 0 },
    }
}

impl Engine {
    pub fn new(
        pools: BTreeMap<String, EnginePool>,
        ledger: Ledger,
        poll_interval: Duration,
        unreachable_limit: Duration,
    ) -> Engine {
        Engine { pools, ledger, sweeps: Vec::new(), poll_interval, unreachable_limit, cursor: 0 }
    }

    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// Each configured pool's scheduler (the cancel path reaches every pool's transport).
    pub fn schedulers(&self) -> Vec<&dyn Scheduler> {
        self.pools.values().map(|p| p.scheduler.as_ref() as &dyn Scheduler).collect()
    }

    /// Registers the sweep in the ledger (or finds it registered: resume) and runs it from the
    /// next round on.
    pub fn add(&mut self, sweep: EngineSweep) -> Result<(), EngineError> {
        let id = sweep.plan.sweep_id.clone();
        let Some(pool) = self.pools.get(&sweep.pool) else {
            return Err(EngineError::UnknownPool { sweep: id, pool: sweep.pool });
        };
        let config = dispatch_config(pool, self.poll_interval, self.unreachable_limit);
        Dispatcher::new(&sweep.plan, &pool.pool, pool.scheduler.as_ref(), &mut self.ledger, config)
            .map_err(|e| EngineError::Dispatch { sweep: id.clone(), source: Box::new(e) })?;
        self.sweeps.retain(|l| l.sweep.plan.sweep_id != id);
        self.sweeps.push(Live { sweep, last_answer: Instant::now() });
        Ok(())
    }

    /// Sweep ids the engine still runs.
    pub fn running(&self) -> Vec<String> {
        self.sweeps.iter().map(|l| l.sweep.plan.sweep_id.clone()).collect()
    }

    /// One round over every pool. Reports each sweep's records; finished sweeps are dropped.
    /// Every sweep of a pool first hears from Slurm, so the slots its ended jobs free go back to
    /// the pool before any sweep takes the next one (a sweep cannot re-take its own slot ahead
    /// of the others). A sweep whose pool stopped answering has its open points recorded as
    /// failed or skipped (naming the pool), so no sweep waits forever.
    pub fn round(&mut self, emit: &mut dyn FnMut(&str, Event)) -> Result<Vec<(String, SweepProgress)>, EngineError> {
        let mut progress = Vec::new();
        let pool_names: Vec<String> = self.pools.keys().cloned().collect();
        for pool_name in pool_names {
            let mut members = Vec::new();
            let on_pool: Vec<usize> =
                (0..self.sweeps.len()).filter(|&i| self.sweeps[i].sweep.pool == pool_name).collect();
            for i in on_pool {
                match self.observe_one(i, emit)? {
                    Some(abandoned) => progress.push(abandoned),
                    None => members.push(i),
                }
            }
            if members.is_empty() {
                continue;
            }
            let cap = self.pools[&pool_name].pool.max_concurrent_allocations;
            let mut active = Vec::with_capacity(members.len());
            let mut demands = Vec::with_capacity(members.len());
            for &i in &members {
                let sweep = &self.sweeps[i].sweep;
                let records = self.ledger.points(&sweep.plan.sweep_id)?;
                active.push(records.iter().filter(|r| r.state.is_active()).count());
                demands.push(demand(&records, sweep.plan.pr, &sweep.priorities));
            }
            let limits: Vec<Option<u32>> = match cap {
                None => vec![None; members.len()],
                Some(cap) => {
                    let free = (cap as usize).saturating_sub(active.iter().sum());
                    let (grants, last) = allocate(&demands, free, self.cursor);
                    self.cursor = last.unwrap_or(self.cursor);
                    active.iter().zip(grants).map(|(a, g)| Some(u32::try_from(a + g).unwrap_or(u32::MAX))).collect()
                }
            };
            for (&i, limit) in members.iter().zip(limits) {
                progress.push(self.act_one(i, limit, emit)?);
            }
        }
        self.sweeps.retain(|l| {
            !progress.iter().any(|(id, p)| *id == l.sweep.plan.sweep_id && matches!(p, SweepProgress::Finished(_)))
        });
        Ok(progress)
    }

    /// The sweep's dispatcher over the engine's ledger.
    fn dispatcher(&mut self, index: usize) -> Result<(Dispatcher<'_>, &mut Instant), EngineError> {
        let live = &mut self.sweeps[index];
        let id = &live.sweep.plan.sweep_id;
        let pool = self
            .pools
            .get(&live.sweep.pool)
            .ok_or_else(|| EngineError::UnknownPool { sweep: id.clone(), pool: live.sweep.pool.clone() })?;
        let config = dispatch_config(pool, self.poll_interval, self.unreachable_limit);
        let dispatcher =
            Dispatcher::new(&live.sweep.plan, &pool.pool, pool.scheduler.as_ref(), &mut self.ledger, config)
                .map_err(|e| EngineError::Dispatch { sweep: id.clone(), source: Box::new(e) })?;
        Ok((dispatcher, &mut live.last_answer))
    }

    /// What Slurm says about the sweep's jobs; `Some` when its pool stopped answering and the
    /// sweep was closed.
    fn observe_one(
        &mut self,
        index: usize,
        emit: &mut dyn FnMut(&str, Event),
    ) -> Result<Option<(String, SweepProgress)>, EngineError> {
        let id = self.sweeps[index].sweep.plan.sweep_id.clone();
        let (mut dispatcher, last_answer) = self.dispatcher(index)?;
        let mut forward = |e: Event| emit(&id, e);
        match dispatcher.observe(last_answer, &mut forward) {
            Ok(()) => Ok(None),
            Err(DispatchError::Unreachable { seconds, last }) => {
                let pool = &self.sweeps[index].sweep.pool;
                let why = format!("pool {pool} has not answered for {seconds}s (last error: {last})");
                close_open_points(&mut self.ledger, &id, &why)?;
                Ok(Some((id.clone(), SweepProgress::Finished(self.ledger.points(&id)?))))
            }
            Err(e) => Err(EngineError::Dispatch { sweep: id, source: Box::new(e) }),
        }
    }

    /// Submits within `limit` (and cancels what the sweep's rules say).
    fn act_one(
        &mut self,
        index: usize,
        limit: Option<u32>,
        emit: &mut dyn FnMut(&str, Event),
    ) -> Result<(String, SweepProgress), EngineError> {
        let id = self.sweeps[index].sweep.plan.sweep_id.clone();
        let (mut dispatcher, _) = self.dispatcher(index)?;
        let mut forward = |e: Event| emit(&id, e);
        match dispatcher.act(limit, &mut forward) {
            Ok(Some(records)) => Ok((id, SweepProgress::Finished(records))),
            Ok(None) => Ok((id.clone(), SweepProgress::Running(self.ledger.points(&id)?))),
            Err(e) => Err(EngineError::Dispatch { sweep: id, source: Box::new(e) }),
        }
    }
}

fn dispatch_config(pool: &EnginePool, poll_interval: Duration, unreachable_limit: Duration) -> DispatchConfig {
    DispatchConfig {
        output_root: pool.output_root.clone(),
        // Plans built by the server name their launcher by absolute path.
        plan_dir: PathBuf::from("/"),
        poll_interval,
        unreachable_limit,
    }
}

/// Ends every open point of an abandoned sweep: never-submitted ones as skipped, submitted ones
/// as failed with their job named, so a maintainer knows which job to look at.
fn close_open_points(ledger: &mut Ledger, sweep: &str, why: &str) -> Result<(), LedgerError> {
    for r in ledger.points(sweep)? {
        let (state, reason) = match (r.state, &r.job_id) {
            (PointState::Planned, _) => (PointState::Skipped, why.to_owned()),
            (s, Some(job)) if s.is_active() => {
                (PointState::Failed, format!("{why}; outcome of job {job} unknown: check it on the cluster"))
            }
            (s, None) if s.is_active() => {
                (PointState::Failed, format!("{why}; the submission's outcome is unknown (job {})", r.job_name))
            }
            _ => continue,
        };
        // The reason (with the pool's last error) is the operators'; public pages show the class.
        let provenance = Some(serde_json::json!({ "refusal": super::scheduler::Refusal::Unreachable }));
        ledger.finish(
            sweep,
            &r.point_id,
            state,
            &Outcome { reason: Some(reason), provenance, ..Outcome::default() },
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::plan_input::{Family, JobSpec, Point};
    use super::super::scheduler::{JobId, JobInfo, SchedulerError, SlurmState, StateSource};
    use super::*;

    fn d(pr: u64, priority: f64, wanted: usize) -> Demand {
        Demand { pr, priority, wanted }
    }

    #[test]
    fn equal_priorities_share_slots_round_robin_between_prs() {
        let demands = [d(1, 1.0, 400), d(2, 1.0, 4), d(3, 1.0, 2)];
        assert_eq!(allocate(&demands, 3, 0).0, [1, 1, 1], "the 400-point sweep does not take every slot");
        assert_eq!(allocate(&demands, 10, 0).0, [4, 4, 2], "small sweeps get all they want");
        assert_eq!(allocate(&demands, 1, 1).0, [0, 1, 0], "the PR after the cursor goes first");
        assert_eq!(allocate(&demands, 1, 3).0, [1, 0, 0], "the cursor wraps around");
    }

    #[test]
    fn higher_priority_goes_first_and_nothing_is_over_granted() {
        let demands = [d(1, 1.0, 5), d(2, 3.25, 2), d(3, 0.0, 5)];
        assert_eq!(allocate(&demands, 3, 0).0, [1, 2, 0]);
        assert_eq!(allocate(&demands, 100, 0).0, [5, 2, 5]);
        assert_eq!(allocate(&demands, 0, 0).0, [0, 0, 0]);
        assert_eq!(allocate(&[], 4, 0), (Vec::<usize>::new(), None));
    }

    /// Allocation ends for any input (the server's sweeps thread runs it under no lock now,
    /// but a spinning thread would still stop every sweep): NaN, infinities and huge counts.
    #[test]
    fn allocation_terminates_and_never_over_grants_for_any_input() {
        let priorities = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, 1e308, -1e308, 1e6, f64::MIN_POSITIVE];
        let wants = [0, 1, 7, 400, usize::MAX / 2, usize::MAX];
        let frees = [0, 1, 2, 3, 1000, usize::MAX];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for case in 0..3000 {
            let len = next(6);
            let demands: Vec<Demand> = (0..len)
                .map(|_| d(next(4) as u64, priorities[next(priorities.len())], wants[next(wants.len())]))
                .collect();
            let free = frees[next(frees.len())];
            let cursor = next(5) as u64;
            let (grants, last) = allocate(&demands, free, cursor);
            let granted: u128 = grants.iter().map(|&g| g as u128).sum();
            let wanted: u128 = demands.iter().map(|d| d.wanted as u128).sum();
            assert_eq!(granted, (free as u128).min(wanted), "case {case}: {demands:?} free {free}");
            assert!(grants.iter().zip(&demands).all(|(g, d)| *g <= d.wanted), "case {case}: {demands:?}");
            assert_eq!(last.is_some(), granted > 0, "case {case}");
        }
        let all_nan = [d(1, f64::NAN, 3), d(2, f64::NAN, 3)];
        assert_eq!(allocate(&all_nan, 4, 0).0, [2, 2], "NaN priorities still share (the old loop spun here)");
        let mixed = [d(1, f64::NAN, 3), d(2, 0.5, 3)];
        assert_eq!(allocate(&mixed, 4, 0).0, [1, 3], "a NaN ranks below every number");
    }

    /// A scheduler whose released jobs end at the next poll; records the submission order.
    #[derive(Default)]
    struct Quick {
        submitted: std::sync::Mutex<Vec<String>>,
    }

    impl Scheduler for Quick {
        fn submit_held(&self, job: &super::super::scheduler::JobRequest) -> Result<JobId, SchedulerError> {
            let mut submitted = self.submitted.lock().unwrap();
            submitted.push(job.name.clone());
            Ok(JobId(submitted.len().to_string()))
        }
        fn release(&self, _: &JobId) -> Result<(), SchedulerError> {
            Ok(())
        }
        fn jobs(&self, ids: &[JobId]) -> Result<Vec<JobInfo>, SchedulerError> {
            Ok(ids.iter().map(ended).collect())
        }
        fn jobs_named(&self, _: &str) -> Result<Vec<JobInfo>, SchedulerError> {
            Ok(Vec::new())
        }
        fn cancel(&self, _: &[JobId]) -> Result<(), SchedulerError> {
            Ok(())
        }
    }

    fn ended(id: &JobId) -> JobInfo {
        JobInfo {
            id: id.clone(),
            name: None,
            state: SlurmState::Completed,
            reason: None,
            exit: None,
            nodes: None,
            submitted_at: None,
            started_at: None,
            ended_at: None,
            source: StateSource::Sacct,
        }
    }

    fn seven_point_sweep(pr: u64, script: &std::path::Path, priority: f64) -> EngineSweep {
        let point = |i: usize| Point {
            id: format!("p{i}"),
            row: serde_json::Map::new(),
            job: JobSpec {
                script: script.display().to_string(),
                env: Default::default(),
                gpus: 1,
                nodes: 1,
                time_limit_minutes: 1,
                recipe: None,
            },
        };
        let families = vec![Family { name: "f".into(), fail_fast: false, points: (0..7).map(point).collect() }];
        let plan = Plan { version: 1, sweep_id: format!("pr{pr}"), repo: "o/r".into(), pr, canary: None, families };
        let priorities = (0..7).map(|i| (format!("p{i}"), priority)).collect();
        EngineSweep { plan, pool: "one".into(), priorities }
    }

    /// Issue 24: with a cap of 1 the sweep whose job ended re-took its own slot in the same
    /// round, so one PR's 7 points all ran before the other's first (even at priority 1e6).
    fn submission_order(second_priority: f64) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("bench.sh");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let pool_file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("pools/local.toml");
        let text = format!("max_concurrent_allocations = 1\n{}", std::fs::read_to_string(&pool_file).unwrap());
        let pool = DispatchPool::parse(text.as_bytes(), &pool_file).unwrap();
        let quick = std::sync::Arc::new(Quick::default());
        struct Shared(std::sync::Arc<Quick>);
        impl Scheduler for Shared {
            fn submit_held(&self, job: &super::super::scheduler::JobRequest) -> Result<JobId, SchedulerError> {
                self.0.submit_held(job)
            }
            fn release(&self, id: &JobId) -> Result<(), SchedulerError> {
                self.0.release(id)
            }
            fn jobs(&self, ids: &[JobId]) -> Result<Vec<JobInfo>, SchedulerError> {
                self.0.jobs(ids)
            }
            fn jobs_named(&self, prefix: &str) -> Result<Vec<JobInfo>, SchedulerError> {
                self.0.jobs_named(prefix)
            }
            fn cancel(&self, ids: &[JobId]) -> Result<(), SchedulerError> {
                self.0.cancel(ids)
            }
        }
        let engine_pool =
            EnginePool { pool, scheduler: Box::new(Shared(quick.clone())), output_root: dir.path().join("out") };
        let ledger = Ledger::open(&dir.path().join("l.db")).unwrap();
        let pools = BTreeMap::from([("one".to_owned(), engine_pool)]);
        let mut engine = Engine::new(pools, ledger, Duration::ZERO, Duration::from_secs(600));
        engine.add(seven_point_sweep(1, &script, 0.0)).unwrap();
        engine.round(&mut |_, _| {}).unwrap();
        engine.add(seven_point_sweep(2, &script, second_priority)).unwrap();
        for _ in 0..40 {
            engine.round(&mut |_, _| {}).unwrap();
        }
        assert!(engine.running().is_empty(), "every point ran");
        let order = quick.submitted.lock().unwrap().clone();
        order.into_iter().map(|name| if name.contains("-pr1-") { "1" } else { "2" }.to_owned()).collect()
    }

    #[test]
    fn freed_slots_go_back_to_the_pool_before_any_sweep_takes_the_next() {
        let order = submission_order(1e6);
        assert_eq!(order.join(""), "12222222111111", "the higher priority takes the slot PR 1's job freed");
        let order = submission_order(0.0);
        assert_eq!(order.join(""), "12121212121212", "equal priorities alternate (round-robin)");
    }

    fn rec(id: &str, canary: bool, state: PointState) -> PointRecord {
        super::super::ledger::test_record(id, "f", canary, state)
    }

    #[test]
    fn demand_waits_for_the_canary_and_uses_the_next_points_priority() {
        let priorities: HashMap<String, f64> = [("c".into(), 2.0), ("a".into(), 1.5)].into();
        let before = [rec("c", true, PointState::Planned), rec("a", false, PointState::Planned)];
        assert_eq!(demand(&before, 7, &priorities), d(7, 2.0, 1));
        let running = [rec("c", true, PointState::Running), rec("a", false, PointState::Planned)];
        assert_eq!(demand(&running, 7, &priorities).wanted, 0, "nothing else starts beside the canary");
        let after = [
            rec("c", true, PointState::Succeeded),
            rec("a", false, PointState::Planned),
            rec("b", false, PointState::Planned),
        ];
        assert_eq!(demand(&after, 7, &priorities), d(7, 1.5, 2));
        let done = [rec("a", false, PointState::Succeeded)];
        assert_eq!(demand(&done, 7, &priorities).wanted, 0);
    }

    #[test]
    fn an_unreachable_pool_closes_every_open_point_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = Ledger::open(&dir.path().join("l.db")).unwrap();
        let names: Vec<String> = ["p", "s", "r", "done"].iter().map(|p| format!("sg-{p}")).collect();
        let seed = super::super::ledger::SweepSeed {
            id: "s1",
            repo: "o/r",
            pr: 3,
            plan_sha256: "x",
            job_prefix: "sg-",
            points: ["p", "s", "r", "done"]
                .iter()
                .zip(&names)
                .map(|(p, n)| super::super::ledger::PointSeed {
                    point_id: p,
                    family: "f",
                    is_canary: false,
                    job_name: n.clone(),
                })
                .collect(),
        };
        ledger.register_sweep(&seed).unwrap();
        let job = super::super::scheduler::JobId("41".into());
        for p in ["s", "r", "done"] {
            ledger.mark_submitting("s1", p).unwrap();
        }
        ledger.mark_submitted("s1", "r", &job, true, &serde_json::json!({})).unwrap();
        ledger.mark_submitted("s1", "done", &job, true, &serde_json::json!({})).unwrap();
        ledger.finish("s1", "done", PointState::Succeeded, &Outcome::default()).unwrap();
        close_open_points(&mut ledger, "s1", "pool x has not answered").unwrap();
        let states: Vec<(String, PointState)> =
            ledger.points("s1").unwrap().into_iter().map(|r| (r.point_id, r.state)).collect();
        assert_eq!(
            states,
            [
                ("p".into(), PointState::Skipped),
                ("s".into(), PointState::Failed),
                ("r".into(), PointState::Failed),
                ("done".into(), PointState::Succeeded)
            ]
        );
        let r = ledger.points("s1").unwrap().into_iter().find(|r| r.point_id == "r").unwrap();
        assert!(r.reason.unwrap().contains("job 41 unknown"));
    }
}
