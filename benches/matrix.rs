//! Matrix benchmarks on the real upstream revisions (run manually:
//! `cargo bench --bench matrix`). Prints the median wall time of repeated in-process runs of:
//! parsing every policy file the matrix reads, a full sweep over all 208 configs, and the
//! processor over the last five Aug-2026 changelog entries (de871da → 843c625).
//!
//! With `SWEEPGATE_UPSTREAM_INFERENCEX` set to a checkout of upstream InferenceX at 843c625 (and
//! python3 with PyYAML and pydantic), it also runs upstream's `generate_sweep_configs.py
//! full-sweep` beside `sweepgate generate full-sweep` as processes on the same files, and prints
//! wall time, peak RSS, their ratios and whether the outputs are byte-identical.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sweepgate::domain::changelog::Changelog;
use sweepgate::matrix::diff::additions_between;
use sweepgate::matrix::generate::{full_sweep, CommonOptions, FullSweepOptions};
use sweepgate::matrix::inputs;
use sweepgate::matrix::json::python_dumps;
use sweepgate::matrix::process::{process, ProcessOptions, Revision};
use sweepgate::repo::{GitTree, Layout, WorkTree};

fn acceptance() -> Option<PathBuf> {
    [
        std::env::var_os("SWEEPGATE_ACCEPTANCE_DIR").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/acceptance")),
        Some(PathBuf::from("/work/shared/acceptance")),
    ]
    .into_iter()
    .flatten()
    .find(|p| p.join("inferencex/843c625").is_dir())
}

/// On-CPU time of this thread (Linux `schedstat`), so that other processes competing for the
/// cores do not inflate the numbers; `None` elsewhere.
fn cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(Duration::from_nanos(text.split_whitespace().next()?.parse().ok()?))
}

/// Median wall time and median on-CPU time of `runs` runs after one warm-up.
struct Timing {
    wall: Duration,
    cpu: Option<Duration>,
}

impl std::fmt::Display for Timing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.cpu {
            Some(cpu) => {
                write!(f, "{:.1} ms CPU ({:.1} ms wall)", cpu.as_secs_f64() * 1e3, self.wall.as_secs_f64() * 1e3)
            }
            None => write!(f, "{:.1} ms wall", self.wall.as_secs_f64() * 1e3),
        }
    }
}

fn median(runs: usize, mut f: impl FnMut()) -> Timing {
    f(); // warm-up
    let mut walls = Vec::with_capacity(runs);
    let mut cpus = Vec::with_capacity(runs);
    for _ in 0..runs {
        let (start, cpu_start) = (Instant::now(), cpu_time());
        f();
        walls.push(start.elapsed());
        if let (Some(a), Some(b)) = (cpu_start, cpu_time()) {
            cpus.push(b.saturating_sub(a));
        }
    }
    walls.sort();
    cpus.sort();
    Timing { wall: walls[runs / 2], cpu: (cpus.len() == runs).then(|| cpus[runs / 2]) }
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git").arg("-C").arg(dir).args(args).status().map(|s| s.success()).unwrap_or(false);
    assert!(ok, "git {args:?} failed");
}

fn main() {
    let Some(root) = acceptance() else {
        eprintln!("acceptance data not found; set SWEEPGATE_ACCEPTANCE_DIR");
        return;
    };
    let head_dir = root.join("inferencex/843c625");
    let layout = Layout::default();
    let tree = WorkTree::new(&head_dir);
    let changelog = std::fs::read_to_string(head_dir.join("perf-changelog.yaml")).unwrap();

    let master = std::fs::read_to_string(head_dir.join("configs/nvidia-master.yaml")).unwrap();
    let yaml_only = median(21, || {
        sweepgate::yaml::parse(&master, "nvidia-master.yaml").unwrap();
        sweepgate::yaml::parse(&changelog, "perf-changelog.yaml").unwrap();
    });
    println!("  of which YAML syntax trees of nvidia-master.yaml and perf-changelog.yaml: {yaml_only}");
    let parse = median(21, || {
        let inputs = inputs::load(&tree, &layout).unwrap();
        assert_eq!(inputs.configs.len(), 208);
        Changelog::parse(&changelog, "perf-changelog.yaml").unwrap();
    });
    println!("parse + validate both master files, runners.yaml and perf-changelog.yaml: {parse}");

    let loaded = inputs::load(&tree, &layout).unwrap();
    let sweep = median(21, || {
        let rows =
            full_sweep(&loaded.configs, &loaded.runners, &FullSweepOptions::default(), &CommonOptions::default())
                .unwrap();
        assert_eq!(rows.len(), 1820);
    });
    println!("full sweep (generate + eval marking, 1,820 rows): {sweep}");
    let end_to_end = median(11, || {
        let inputs = inputs::load(&tree, &layout).unwrap();
        let rows =
            full_sweep(&inputs.configs, &inputs.runners, &FullSweepOptions::default(), &CommonOptions::default())
                .unwrap();
        let text = python_dumps(&serde_json::Value::Array(rows.into_iter().map(serde_json::Value::Object).collect()));
        assert!(text.len() > 1_000_000);
    });
    println!("full sweep from files to JSON text: {end_to_end}");

    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q"]);
    git(repo.path(), &["config", "user.email", "b@example.com"]);
    git(repo.path(), &["config", "user.name", "b"]);
    for (rev, message) in [("de871da", "base"), ("843c625", "head")] {
        for f in
            ["configs/amd-master.yaml", "configs/nvidia-master.yaml", "configs/runners.yaml", "perf-changelog.yaml"]
        {
            let to = repo.path().join(f);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(root.join("inferencex").join(rev).join(f), &to).unwrap();
        }
        git(repo.path(), &["add", "-A"]);
        git(repo.path(), &["commit", "-q", "-m", message]);
    }
    let base = GitTree::open(repo.path(), "HEAD~1").unwrap();
    let head = GitTree::open(repo.path(), "HEAD").unwrap();
    let base_text = std::fs::read_to_string(root.join("inferencex/de871da/perf-changelog.yaml")).unwrap();
    let matrix = median(11, || {
        let additions = additions_between(&base_text, &changelog, "perf-changelog.yaml").unwrap();
        let out = process(
            &additions,
            "perf-changelog.yaml",
            Revision { name: "HEAD~1", tree: &base },
            Revision { name: "HEAD", tree: &head },
            &layout,
            ProcessOptions::default(),
        )
        .unwrap();
        assert_eq!(out.changelog_metadata.entries.len(), 5);
    });
    println!("matrix over the last five entries (git objects, 10 generator groups): {matrix}");
    side_by_side(&head_dir);
}

/// One finished run of a process: wall time, its own peak RSS and its stdout.
struct ProcessRun {
    wall: Duration,
    max_rss_kib: u64,
    stdout: Vec<u8>,
}

// The child is reaped by wait4 (for its rusage), which clippy does not recognise as a wait.
#[allow(clippy::zombie_processes)]
fn run_process(mut command: Command) -> ProcessRun {
    let start = Instant::now();
    let mut child = command.stdout(Stdio::piped()).spawn().expect("spawn");
    let mut stdout = Vec::new();
    child.stdout.take().expect("piped stdout").read_to_end(&mut stdout).expect("read stdout");
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills in; the child is ours and not yet reaped.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4 failed: {}", std::io::Error::last_os_error());
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "{command:?} failed ({status})");
    ProcessRun { wall: start.elapsed(), max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0), stdout }
}

/// Median wall time and median peak RSS of `runs` runs (after one warm-up), and the last output.
fn median_process(runs: usize, command: impl Fn() -> Command) -> (Duration, f64, Vec<u8>) {
    run_process(command());
    let mut all: Vec<ProcessRun> = (0..runs).map(|_| run_process(command())).collect();
    let mut walls: Vec<Duration> = all.iter().map(|r| r.wall).collect();
    let mut rss: Vec<u64> = all.iter().map(|r| r.max_rss_kib).collect();
    walls.sort();
    rss.sort();
    let stdout = all.pop().map(|r| r.stdout).unwrap_or_default();
    (walls[runs / 2], rss[runs / 2] as f64 / 1024.0, stdout)
}

fn side_by_side(head_dir: &Path) {
    let Some(upstream) = std::env::var_os("SWEEPGATE_UPSTREAM_INFERENCEX").map(PathBuf::from) else {
        println!("side by side with upstream Python: skipped (set SWEEPGATE_UPSTREAM_INFERENCEX to a checkout)");
        return;
    };
    let script = upstream.join("utils/matrix_logic/generate_sweep_configs.py");
    assert!(script.is_file(), "{} not found", script.display());
    // The order upstream's workflow loads them in, which `--repo` follows (sorted file names).
    let python = || {
        let mut c = Command::new("python3");
        c.arg(&script)
            .args(["full-sweep", "--config-files", "configs/amd-master.yaml", "configs/nvidia-master.yaml"])
            .args(["--runner-config", "configs/runners.yaml"])
            .current_dir(head_dir);
        c
    };
    let ours = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_sweepgate"));
        c.args(["generate", "full-sweep", "--repo"]).arg(head_dir);
        c
    };
    let (py_wall, py_rss, py_out) = median_process(5, python);
    let (sg_wall, sg_rss, sg_out) = median_process(5, ours);
    println!(
        "full sweep as processes, median of 5: sweepgate {:.1} ms, peak RSS {sg_rss:.1} MiB; upstream Python {:.0} ms, peak RSS {py_rss:.1} MiB",
        sg_wall.as_secs_f64() * 1e3,
        py_wall.as_secs_f64() * 1e3
    );
    println!(
        "  ratios sweepgate/Python: time {:.3}× ({:.0}× faster), peak RSS {:.2}×; outputs byte-identical: {}",
        sg_wall.as_secs_f64() / py_wall.as_secs_f64(),
        py_wall.as_secs_f64() / sg_wall.as_secs_f64(),
        sg_rss / py_rss,
        if sg_out == py_out { "yes" } else { "NO" }
    );
}
