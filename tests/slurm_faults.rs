//! Fault injection on the real local Slurm of `scripts/slurm-up.sh`: a dispatcher SIGKILLed at
//! pseudo-random moments, and a node taken down under a running job. They skip (with a message)
//! when `SWEEPGATE_SLURM` is unset. They disturb processes and nodes, so they run one at a time
//! (`SERIAL`), in a test binary of their own: cargo runs test binaries one after another, so
//! these never run beside `tests/slurm_dispatch.rs`.

mod support;

use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::slurm_sweep::{point, slurm_enabled, wait_output, wait_until, Sweep, BOUND};
use sweepgate::sweep::ledger::PointState;
use sweepgate::sweep::scheduler::{JobRequest, Scheduler, SlurmState};
use sweepgate::sweep::slurm::SlurmCli;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// splitmix64: reproducible pseudo-random delays without a dependency.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `low..=high` milliseconds (modulo bias is irrelevant here).
    fn millis_between(&mut self, low: u64, high: u64) -> Duration {
        Duration::from_millis(low + self.next() % (high - low + 1))
    }
}

/// `SWEEPGATE_FAULT_SEED` replays a run; otherwise the clock seeds it.
fn seed() -> u64 {
    std::env::var("SWEEPGATE_FAULT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
    })
}

#[test]
fn a_dispatcher_killed_twenty_times_at_random_moments_submits_every_point_once() {
    if !slurm_enabled("a_dispatcher_killed_twenty_times_at_random_moments_submits_every_point_once") {
        return;
    }
    let _serial = serial();
    let started = Instant::now();
    let seed = seed();
    eprintln!("kill delays seeded with {seed} (replay: SWEEPGATE_FAULT_SEED={seed})");
    let mut delays = SplitMix64(seed);
    let s = Sweep::new("kill20", 201);
    s.write_pool("max_concurrent_allocations = 2");
    // 5 s points keep the sweep unfinished for most of the 20 kills (with 1 s points it was done
    // after the 7th): kills land at start-up, around sbatch and release, while polling, and
    // while results are collected.
    let points: Vec<Value> = (0..8).map(|i| point(&format!("p{i}"), 1, 5, json!({"BENCH_SECONDS": "5"}))).collect();
    s.write_plan(None, json!([{"name": "single-node 1k1k", "fail_fast": false, "points": points}]));
    for round in 1..=20 {
        let delay = delays.millis_between(100, 3000);
        let mut child = s.dispatch("json").stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        std::thread::sleep(delay);
        let exited_by_itself = child.try_wait().unwrap().is_some();
        child.kill().ok(); // SIGKILL: no chance to clean up
        child.wait().unwrap();
        let now = s.points();
        let count = |f: &dyn Fn(PointState) -> bool| now.iter().filter(|p| f(p.state)).count();
        eprintln!(
            "kill {round:2} after {:4} ms{}: {} submitting, {} with a job, {} finished",
            delay.as_millis(),
            if exited_by_itself { " (had already exited)" } else { "" },
            count(&|st| st == PointState::Submitting),
            now.iter().filter(|p| p.job_id.is_some()).count(),
            count(&PointState::is_terminal),
        );
    }
    // The late sbatch of a killed dispatcher: a held job under a point's name, landing after its
    // successor had submitted that point again.
    let late = {
        let p0 = s.point("p0");
        let script =
            format!("#!/bin/bash\n#SBATCH --output={}/late-%j.log\n#SBATCH --time=1\ntrue\n", s.path("").display());
        SlurmCli::default().submit_held(&JobRequest { name: p0.job_name, script }).unwrap()
    };
    let out = wait_output(s.dispatch("json").spawn().unwrap());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stray = SlurmCli::default().jobs(std::slice::from_ref(&late)).unwrap();
    assert_eq!(stray[0].state, SlurmState::Cancelled, "the stray held job is cancelled: {stray:?}");
    let after = s.points();
    // A point whose sbatch the kill interrupted is adopted by name (0 calls recorded), never
    // submitted twice.
    assert!(after.iter().all(|p| p.state == PointState::Succeeded && p.sbatch_calls <= 1), "{after:#?}");
    s.assert_one_job_per_point_besides(std::slice::from_ref(&late));
    let jobs: usize = s.slurm_jobs_by_name().values().map(Vec::len).sum();
    assert_eq!(jobs, after.len() + 1, "no other job carries the sweep's names");
    s.assert_ledger_consistent();
    let adopted = after.iter().filter(|p| p.sbatch_calls == 0).count();
    eprintln!("20 kills and the final run: {:.1} s; {adopted} job(s) adopted by name", started.elapsed().as_secs_f64());
}

/// Resumes the node when dropped, so a failing test leaves the cluster with both nodes.
struct DownNode(String);

impl DownNode {
    fn take_down(node: &str) -> DownNode {
        let guard = DownNode(node.to_string());
        scontrol_update(node, &["state=down", "reason=sweepgate-test"]).expect("scontrol update state=down");
        guard
    }
}

impl Drop for DownNode {
    fn drop(&mut self) {
        // `ReturnToService=2` may have brought the node back already (Slurm refuses to resume an
        // idle node).
        let state = node_state(&self.0);
        if state.starts_with("down") || state.starts_with("drain") {
            if let Err(e) = scontrol_update(&self.0, &["state=resume"]) {
                eprintln!("cannot resume node {} ({state}): {e}", self.0);
            }
        }
    }
}

fn scontrol_update(node: &str, settings: &[&str]) -> Result<(), String> {
    let out = Command::new("scontrol")
        .args(["update", &format!("nodename={node}")])
        .args(settings)
        .output()
        .map_err(|e| e.to_string())?;
    match out.status.success() {
        true => Ok(()),
        false => Err(String::from_utf8_lossy(&out.stderr).trim().to_string()),
    }
}

fn node_state(node: &str) -> String {
    let out = Command::new("sinfo").args(["-h", "-N", "-n", node, "-o", "%T"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn a_node_going_down_under_a_running_job_is_recorded_as_node_failed() {
    if !slurm_enabled("a_node_going_down_under_a_running_job_is_recorded_as_node_failed") {
        return;
    }
    let _serial = serial();
    let s = Sweep::new("nodedown", 202);
    // --exclusive: the node holds this job alone, so taking it down touches no other test's job.
    s.write_pool("exclusive = true");
    s.write_plan(
        None,
        json!([{"name": "f", "fail_fast": false, "points": [point("doomed", 1, 5, json!({"BENCH_SECONDS": "300"}))]}]),
    );
    let mut child = s.dispatch("json").spawn().unwrap();
    wait_until(&mut child, "the point to run", || s.points().iter().any(|p| p.state == PointState::Running));
    let job = s.point("doomed").job_id.unwrap();
    let node = SlurmCli::default().jobs(std::slice::from_ref(&job)).unwrap()[0].nodes.clone().expect("a node");
    let down = DownNode::take_down(&node);
    let out = wait_output(child);
    drop(down);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let doomed = s.point("doomed");
    assert_eq!(doomed.state, PointState::NodeFailed, "{doomed:#?}");
    assert!(doomed.reason.as_deref().is_some_and(|r| r.starts_with("node failure")), "{doomed:#?}");
    assert_eq!((doomed.sbatch_calls, doomed.job_id), (1, Some(job)), "not requeued, not resubmitted");
    s.assert_one_job_per_point();
    s.assert_ledger_consistent();
    let deadline = Instant::now() + BOUND;
    while !matches!(node_state(&node).as_str(), "idle" | "mixed" | "allocated") {
        assert!(Instant::now() < deadline, "node {node} stays {}", node_state(&node));
        std::thread::sleep(Duration::from_millis(200));
    }
}
