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
