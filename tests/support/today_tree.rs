//! The benchmark repository as its users have it today (issue 36): the `inferencex-e2e/` tree of
//! Oct 2026 (`../shared/acceptance/inferencex-2026-11/`, plain files rebuilt from stored public
//! copies), and a git copy of it where a command needs a commit. The tree is never edited.

use std::path::{Path, PathBuf};
use std::process::Command;

use sweepgate::repo::GitTree;

/// The 2026-11 tree, or `None` when `SWEEPGATE_SKIP_CORPUS=1` skips it on purpose.
pub fn today_dir() -> Option<PathBuf> {
    super::history::acceptance("inferencex-2026-11", "the 2026-11 tree", Path::is_dir)
}

/// A git copy of the tree (one commit), so it is read as a revision like a real repository.
pub fn git_copy(dir: &Path, into: &Path) -> GitTree {
    let copy = Command::new("cp").arg("-a").arg(format!("{}/.", dir.display())).arg(into).status().unwrap();
    assert!(copy.success());
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "inferencex-2026-11"],
    ] {
        let out = Command::new("git").args(args).current_dir(into).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    GitTree::open(into, "HEAD").unwrap()
}

/// Appends a changelog entry for `configs` to the copy at `into` and commits it: the head of a
/// PR whose base is `HEAD~1`.
pub fn commit_changelog_entry(into: &Path, configs: &[&str]) {
    let keys: String = configs.iter().map(|c| format!("    - {c}\n")).collect();
    let entry = format!(
        "\n- config-keys:\n{keys}  description:\n    - \"Plan test\"\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/9999\n"
    );
    let changelog = into.join("inferencex-e2e/perf-changelog.yaml");
    let text = std::fs::read_to_string(&changelog).unwrap() + &entry;
    std::fs::write(&changelog, text).unwrap();
    let commit = ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "head"];
    assert!(Command::new("git").args(commit).current_dir(into).status().unwrap().success());
}

/// The local pool profile (`pools/local.toml`) as an MI355X cluster that knows the model alias
/// of the Oct 2026 `dsv4/atom/mi355x-fp4/agentx` recipe (the pool profiles of
/// `runners/srt-slurm/` are not in the copy), writing into `output_root` when given.
pub fn mi355x_pool(output_root: Option<&Path>) -> String {
    let local = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/pools/local.toml")).unwrap();
    let pool = local
        .replace("sku = \"h100\"", "sku = \"mi355x\"")
        .replace("[models]\n", "[models]\n\"DeepSeek-V4-Pro-0813\" = \"/models/DeepSeek-V4-Pro-0813\"\n");
    match output_root {
        Some(root) => pool
            .replace("output_root = \"/srv/slurm-scratch/outputs\"", &format!("output_root = \"{}\"", root.display())),
        None => pool,
    }
}
