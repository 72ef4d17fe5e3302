//! Matrix benchmarks on the real upstream revisions (run manually:
//! `cargo bench --bench matrix`). Prints the median wall time of repeated in-process runs of:
//! parsing every policy file the matrix reads, a full sweep over all 208 configs, and the
//! processor over the last five Aug-2026 changelog entries (de871da → 843c625).

use std::path::{Path, PathBuf};
use std::process::Command;
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

fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    f(); // warm-up
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
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

    let parse = median(21, || {
        let inputs = inputs::load(&tree, &layout).unwrap();
        assert_eq!(inputs.configs.len(), 208);
        Changelog::parse(&changelog, "perf-changelog.yaml").unwrap();
    });
    println!("parse + validate both master files, runners.yaml and perf-changelog.yaml: {parse:?}");

    let loaded = inputs::load(&tree, &layout).unwrap();
    let sweep = median(21, || {
        let rows =
            full_sweep(&loaded.configs, &loaded.runners, &FullSweepOptions::default(), &CommonOptions::default())
                .unwrap();
        assert_eq!(rows.len(), 1820);
    });
    println!("full sweep (generate + eval marking, 1,820 rows): {sweep:?}");
    let end_to_end = median(11, || {
        let inputs = inputs::load(&tree, &layout).unwrap();
        let rows =
            full_sweep(&inputs.configs, &inputs.runners, &FullSweepOptions::default(), &CommonOptions::default())
                .unwrap();
        let text = python_dumps(&serde_json::Value::Array(rows.into_iter().map(serde_json::Value::Object).collect()));
        assert!(text.len() > 1_000_000);
    });
    println!("full sweep from files to JSON text: {end_to_end:?}");

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
    println!("matrix over the last five entries (git objects, 10 generator groups): {matrix:?}");
}
