//! Manual benchmark on the local Slurm (`scripts/slurm-up.sh`): `cargo bench --bench sweep_engine`.
//!
//! The server's engine (`sweep::engine`, the code `serve --pool` runs) over the real Slurm CLI,
//! with fast stand-in jobs (`fixtures/dispatch/bench.sh`, `BENCH_SECONDS=0`, 1 GPU each) and one
//! pool capped at `max_concurrent_allocations` (default 16, the local cluster's GPUs):
//! 1. one 300-point sweep of one PR: wall time;
//! 2. three 100-point sweeps of three PRs at once: wall time, and its ratio to (1) (goal ≤ 1.2);
//! 3. the engine's time from `add` to the first `sbatch` answered, and this process's peak RSS
//!    (`VmHWM`: the engine, ledger and Slurm client, without the HTTP server).
//!
//! `BENCH_POINTS` (default 300) sets the total; `BENCH_CAP` the cap.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use sweepgate::sweep::dispatch::Event;
use sweepgate::sweep::dispatch_pool::DispatchPool;
use sweepgate::sweep::engine::{Engine, EnginePool, EngineSweep, SweepProgress};
use sweepgate::sweep::ledger::{Ledger, PointState};
use sweepgate::sweep::plan_input::Plan;
use sweepgate::sweep::slurm::SlurmCli;

const BENCH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/dispatch/bench.sh");

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

fn plan(tag: &str, pr: u64, points: usize) -> Plan {
    let points: Vec<serde_json::Value> = (0..points)
        .map(|i| {
            json!({"id": format!("p{i}"), "row": {"conc": i + 1},
                "job": {"script": BENCH, "env": {"BENCH_SECONDS": "0", "CONC": (i + 1).to_string()}, "gpus": 1, "time_limit_minutes": 5}})
        })
        .collect();
    let plan = json!({"version": 1, "sweep_id": format!("{tag}-pr{pr}"), "repo": format!("sweepgate/bench-{tag}"),
        "pr": pr, "families": [{"name": "f", "fail_fast": false, "points": points}]});
    Plan::parse(&serde_json::to_vec(&plan).unwrap(), "plan.json").unwrap()
}

/// Runs `sweeps` (PR → points) in one engine until all are final. Returns (wall, time to the
/// first submitted job, succeeded points).
fn run(dir: &Path, tag: &str, sweeps: &[(u64, usize)], cap: usize) -> (Duration, Duration, usize) {
    let pool_file = dir.join(format!("{tag}.toml"));
    let text =
        format!("name = \"bench\"\npartition = \"gpu\"\ngpus_per_node = 8\nmax_concurrent_allocations = {cap}\n");
    std::fs::write(&pool_file, text).unwrap();
    let pool = DispatchPool::parse(&std::fs::read(&pool_file).unwrap(), &pool_file).unwrap();
    let outputs = dir.join(format!("{tag}-outputs"));
    std::fs::create_dir_all(&outputs).unwrap();
    let scheduler = Box::new(SlurmCli::default());
    let pools = BTreeMap::from([("bench".to_owned(), EnginePool { pool, scheduler, output_root: outputs })]);
    let ledger = Ledger::open(&dir.join(format!("{tag}.db"))).unwrap();
    let mut engine = Engine::new(pools, ledger, Duration::from_millis(500), Duration::from_secs(600));
    let start = Instant::now();
    for &(pr, points) in sweeps {
        engine
            .add(EngineSweep { plan: plan(tag, pr, points), pool: "bench".into(), priorities: HashMap::new() })
            .unwrap();
    }
    let mut first_submit = None;
    let mut open: Vec<String> = sweeps.iter().map(|(pr, _)| format!("{tag}-pr{pr}")).collect();
    let mut succeeded = 0;
    while !open.is_empty() {
        let mut emit = |_: &str, e: Event| {
            if matches!(e, Event::Submitted { .. }) && first_submit.is_none() {
                first_submit = Some(start.elapsed());
            }
        };
        for (id, progress) in engine.round(&mut emit).unwrap() {
            if let SweepProgress::Finished(records) = progress {
                succeeded += records.iter().filter(|r| r.state == PointState::Succeeded).count();
                open.retain(|o| *o != id);
            }
        }
        assert!(start.elapsed() < Duration::from_secs(3600), "sweeps did not finish");
        std::thread::sleep(Duration::from_millis(500));
    }
    (start.elapsed(), first_submit.unwrap_or_default(), succeeded)
}

fn main() {
    // `cargo test --all-targets` runs bench binaries too; only `cargo bench` passes --bench.
    if !std::env::args().any(|a| a == "--bench") {
        eprintln!("sweep_engine: a benchmark; run it with `cargo bench --bench sweep_engine`");
        return;
    }
    if std::env::var_os("SWEEPGATE_SLURM").is_none() {
        eprintln!("sweep_engine: SWEEPGATE_SLURM is unset; run `eval \"$(bash scripts/slurm-up.sh up)\"` first");
        return;
    }
    let total = env_number("BENCH_POINTS", 300);
    let cap = env_number("BENCH_CAP", 16);
    let third = total / 3;
    let dir = tempfile::Builder::new().prefix("sg-bench-engine-").tempdir().unwrap();
    let tag = format!("e{}", std::process::id());
    let (one, first_one, ok_one) = run(dir.path(), &format!("{tag}a"), &[(1, 3 * third)], cap);
    println!(
        "one sweep of {} points: {:.1}s wall, {ok_one} succeeded, first sbatch after {} ms",
        3 * third,
        one.as_secs_f64(),
        first_one.as_millis()
    );
    let (three, first_three, ok_three) =
        run(dir.path(), &format!("{tag}b"), &[(1, third), (2, third), (3, third)], cap);
    println!(
        "three sweeps of {third} points (3 PRs): {:.1}s wall, {ok_three} succeeded, first sbatch after {} ms",
        three.as_secs_f64(),
        first_three.as_millis()
    );
    println!(
        "wall ratio three/one: {:.3} (goal <= 1.2); peak RSS of the engine process: {:.1} MiB (goal <= 64)",
        three.as_secs_f64() / one.as_secs_f64(),
        peak_rss_mib()
    );
}
