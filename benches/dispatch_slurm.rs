//! Manual benchmark on the local Slurm (`scripts/slurm-up.sh`): `cargo bench --bench dispatch_slurm`.
//!
//! 1. Submission rate: 400 trivial jobs through `SlurmCli` exactly as the dispatcher submits them
//!    (`sbatch --parsable --hold`, then `scontrol release`), and the time until all have ended.
//! 2. A 400-point `sweepgate dispatch` run: wall time and the dispatcher's peak RSS (sampled from
//!    /proc every 50 ms).
//!
//! Set `BENCH_JOBS` to change 400.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sweepgate::sweep::scheduler::{JobRequest, Scheduler};
use sweepgate::sweep::slurm::SlurmCli;

const BIN: &str = env!("CARGO_BIN_EXE_sweepgate");
const BENCH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/dispatch/bench.sh");

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find(|l| l.starts_with("VmRSS:"))?.split_whitespace().nth(1)?.parse().ok()
}

fn submission_rate(n: usize, dir: &Path) {
    let slurm = SlurmCli::default();
    let tag = std::process::id();
    let start = Instant::now();
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        let script = format!("#!/bin/bash\n#SBATCH --output={}/%j.out\n#SBATCH --time=2\ntrue\n", dir.display());
        let id = slurm.submit_held(&JobRequest { name: format!("sg-bench-{tag}-{i}"), script }).expect("sbatch");
        slurm.release(&id).expect("release");
        ids.push(id);
    }
    let submitted = start.elapsed();
    let mut polls = 0;
    loop {
        polls += 1;
        let infos = slurm.jobs(&ids).expect("squeue");
        if infos.len() == ids.len() && infos.iter().all(|j| j.state.is_final()) {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(1800), "jobs did not finish");
        std::thread::sleep(Duration::from_millis(500));
    }
    let ended = start.elapsed();
    let poll_start = Instant::now();
    slurm.jobs(&ids).expect("squeue");
    let one_poll = poll_start.elapsed();
    println!(
        "submit+release {n} jobs: {:.1}s ({:.1} jobs/s, {:.1} ms/job); all ended after {:.1}s ({polls} polls); one squeue poll of {n} ids: {} ms",
        submitted.as_secs_f64(),
        n as f64 / submitted.as_secs_f64(),
        submitted.as_secs_f64() * 1000.0 / n as f64,
        ended.as_secs_f64(),
        one_poll.as_millis()
    );
}

fn dispatch_run(n: usize, dir: &Path) {
    let points: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            serde_json::json!({"id": format!("p{i}"), "row": {"conc": i + 1},
                "job": {"script": BENCH, "env": {"BENCH_SECONDS": "0", "CONC": (i + 1).to_string()}, "gpus": 1, "time_limit_minutes": 5}})
        })
        .collect();
    let plan = serde_json::json!({"version": 1, "sweep_id": format!("bench-{}", std::process::id()), "repo": "sweepgate/bench",
        "pr": 1, "families": [{"name": "f", "fail_fast": false, "points": points}]});
    std::fs::write(dir.join("plan.json"), serde_json::to_vec(&plan).unwrap()).unwrap();
    std::fs::write(dir.join("pool.toml"), "name = \"bench\"\npartition = \"gpu\"\ngpus_per_node = 8\n").unwrap();
    let start = Instant::now();
    let mut child = Command::new(BIN)
        .args(["dispatch", "--poll-ms", "1000", "--format", "json", "--plan"])
        .arg(dir.join("plan.json"))
        .arg("--pool")
        .arg(dir.join("pool.toml"))
        .arg("--ledger")
        .arg(dir.join("ledger.db"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        peak = peak.max(rss_kib(child.id()).unwrap_or(0));
        std::thread::sleep(Duration::from_millis(50));
    };
    println!(
        "dispatch of {n} points: {:.1}s wall, exit {status}, dispatcher peak RSS {:.1} MiB",
        start.elapsed().as_secs_f64(),
        peak as f64 / 1024.0
    );
}

fn main() {
    // `cargo test --all-targets` runs bench binaries too; only `cargo bench` passes --bench.
    if !std::env::args().any(|a| a == "--bench") {
        eprintln!("dispatch_slurm: a benchmark; run it with `cargo bench --bench dispatch_slurm`");
        return;
    }
    if std::env::var_os("SWEEPGATE_SLURM").is_none() {
        eprintln!("dispatch_slurm bench needs the local Slurm: eval \"$(scripts/slurm-up.sh)\" first");
        return;
    }
    let n: usize = std::env::var("BENCH_JOBS").ok().and_then(|v| v.parse().ok()).unwrap_or(400);
    let dir = tempfile::tempdir().unwrap();
    submission_rate(n, dir.path());
    dispatch_run(n, dir.path());
}
