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

/// Shares `free` slots: highest priority first, one slot at a time round-robin between the
/// demands of that priority, starting after PR `cursor`. Returns the slots of each demand and
/// the PR served last (the next cursor).
pub fn allocate(demands: &[Demand], mut free: usize, cursor: u64) -> (Vec<usize>, Option<u64>) {
    let mut grants = vec![0; demands.len()];
    let mut last = None;
    // Rotated PR order: PRs after the cursor first, then the rest.
    let mut order: Vec<usize> = (0..demands.len()).collect();
    order.sort_by_key(|&i| (demands[i].pr <= cursor, demands[i].pr));
    while free > 0 {
        let open = |i: &usize| grants[*i] < demands[*i].wanted;
        let Some(top) = order.iter().filter(|i| open(i)).map(|&i| demands[i].priority).reduce(f64::max) else {
            break;
        };
        let tier: Vec<usize> = order.iter().copied().filter(|i| open(i) && demands[*i].priority == top).collect();
        for i in tier {
            if free == 0 {
                break;
            }
            grants[i] += 1;
            free -= 1;
            last = Some(demands[i].pr);
        }
    }
    (grants, last)
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
    /// A sweep whose pool stopped answering has its open points recorded as failed or skipped
    /// (naming the pool), so no sweep waits forever.
    pub fn round(&mut self, emit: &mut dyn FnMut(&str, Event)) -> Result<Vec<(String, SweepProgress)>, EngineError> {
        let mut progress = Vec::new();
        let pool_names: Vec<String> = self.pools.keys().cloned().collect();
        for pool_name in pool_names {
            let members: Vec<usize> =
                (0..self.sweeps.len()).filter(|&i| self.sweeps[i].sweep.pool == pool_name).collect();
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
                progress.push(self.round_one(i, limit, emit)?);
            }
        }
        self.sweeps.retain(|l| {
            !progress.iter().any(|(id, p)| *id == l.sweep.plan.sweep_id && matches!(p, SweepProgress::Finished(_)))
        });
        Ok(progress)
    }

    fn round_one(
        &mut self,
        index: usize,
        limit: Option<u32>,
        emit: &mut dyn FnMut(&str, Event),
    ) -> Result<(String, SweepProgress), EngineError> {
        let live = &mut self.sweeps[index];
        let id = live.sweep.plan.sweep_id.clone();
        let pool = self
            .pools
            .get(&live.sweep.pool)
            .ok_or_else(|| EngineError::UnknownPool { sweep: id.clone(), pool: live.sweep.pool.clone() })?;
        let config = dispatch_config(pool, self.poll_interval, self.unreachable_limit);
        let dispatch_err = |e| EngineError::Dispatch { sweep: id.clone(), source: Box::new(e) };
        let mut dispatcher =
            Dispatcher::new(&live.sweep.plan, &pool.pool, pool.scheduler.as_ref(), &mut self.ledger, config)
                .map_err(dispatch_err)?;
        let mut forward = |e: Event| emit(&id, e);
        match dispatcher.round(limit, &mut live.last_answer, &mut forward) {
            Ok(Some(records)) => Ok((id, SweepProgress::Finished(records))),
            Ok(None) => Ok((id.clone(), SweepProgress::Running(self.ledger.points(&id)?))),
            Err(DispatchError::Unreachable { seconds, last }) => {
                let why = format!("pool {} has not answered for {seconds}s (last error: {last})", live.sweep.pool);
                close_open_points(&mut self.ledger, &id, &why)?;
                Ok((id.clone(), SweepProgress::Finished(self.ledger.points(&id)?)))
            }
            Err(e) => Err(dispatch_err(e)),
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
        ledger.finish(sweep, &r.point_id, state, &Outcome { reason: Some(reason), ..Outcome::default() })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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
