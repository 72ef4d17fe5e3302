//! The fixture benchmark repository (`fixtures/repo`) as a two-commit git repository.

use std::path::Path;
use std::process::Command;

/// The fixture changelog's base ends before this entry; the last four entries are the change.
pub const FIRST_NEW_ENTRY: &str = "- config-keys:\n    - dsr1-fp4-gb200-dynamo-trt-mtp";

pub fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Copies the fixture repository into `into` (an empty directory) and commits it twice:
/// `HEAD~1` has the changelog up to [`FIRST_NEW_ENTRY`], `HEAD` all of it.
pub fn fixture_git_repo(into: &Path) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/repo");
    let copied = Command::new("cp").arg("-r").arg(fixture.join(".")).arg(into).status().expect("cp runs");
    assert!(copied.success(), "copying {}", fixture.display());
    let changelog = std::fs::read_to_string(into.join("perf-changelog.yaml")).unwrap();
    let cut = changelog.find(FIRST_NEW_ENTRY).expect("the fixture changelog has the first new entry");
    git(into, &["init", "-q"]);
    git(into, &["config", "user.email", "t@example.com"]);
    git(into, &["config", "user.name", "t"]);
    std::fs::write(into.join("perf-changelog.yaml"), &changelog[..cut]).unwrap();
    git(into, &["add", "-A"]);
    git(into, &["commit", "-q", "-m", "base"]);
    std::fs::write(into.join("perf-changelog.yaml"), &changelog).unwrap();
    git(into, &["commit", "-q", "-a", "-m", "head"]);
}

/// The bundle whose PR [`vendor_pr_git_repo`] rebuilds: a vendor retune of one config.
pub const VENDOR_PR_BUNDLE: &str = "green-sweep";

/// A vendor PR as a two-commit git repository in `into` (an empty directory), with the trees of
/// the `green-sweep` bundle: `HEAD~1` is its base tree (policy files, no master config yet, so
/// the config has no published curve), `HEAD` adds its head tree (the config, its launcher and
/// the changelog entry naming it).
pub fn vendor_pr_git_repo(into: &Path) {
    let bundle = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bundles").join(VENDOR_PR_BUNDLE);
    let copy = |tree: &str| {
        let copied = Command::new("cp").arg("-r").arg(bundle.join(tree).join(".")).arg(into).status().expect("cp runs");
        assert!(copied.success(), "copying {tree} of {}", bundle.display());
    };
    copy("base");
    git(into, &["init", "-q"]);
    git(into, &["config", "user.email", "t@example.com"]);
    git(into, &["config", "user.name", "t"]);
    git(into, &["add", "-A"]);
    git(into, &["commit", "-q", "-m", "base"]);
    copy("head");
    git(into, &["add", "-A"]);
    git(into, &["commit", "-q", "-m", "dsr1 fp4 b200 sglang: retune conc 4-64"]);
}
