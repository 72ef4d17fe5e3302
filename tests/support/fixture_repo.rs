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
    vendor_pr_commits(into, None);
}

/// The config PR of [`vendor_pr_git_repo`] retuning a published config: the base already has the
/// head's master configs, and its changelog's last entry for `dsr1-fp4-b200-sglang` links PR
/// `pr` of `repo` (the PR that published its curve); the head appends the bundle's entry.
pub fn published_vendor_pr_git_repo(into: &Path, repo: &str, pr: u64) {
    vendor_pr_commits(into, Some((repo, pr)));
}

fn vendor_pr_commits(into: &Path, published: Option<(&str, u64)>) {
    let bundle = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bundles").join(VENDOR_PR_BUNDLE);
    let copy = |from: &Path, to: &Path| {
        let copied = Command::new("cp").arg("-r").arg(from.join(".")).arg(to).status().expect("cp runs");
        assert!(copied.success(), "copying {}", from.display());
    };
    copy(&bundle.join("base"), into);
    let changelog = into.join("perf-changelog.yaml");
    let bundle_base = std::fs::read_to_string(&changelog).unwrap();
    if let Some((repo, pr)) = published {
        std::fs::create_dir_all(into.join("configs")).unwrap();
        copy(&bundle.join("head/configs"), &into.join("configs"));
        let entry = format!(
            "\n- config-keys:\n  - dsr1-fp4-b200-sglang\n  description:\n  - Add the TP8/EP8 sweep\n  pr-link: https://github.com/{repo}/pull/{pr}\n"
        );
        std::fs::write(&changelog, format!("{bundle_base}{entry}")).unwrap();
    }
    let base_changelog = std::fs::read_to_string(&changelog).unwrap();
    git(into, &["init", "-q"]);
    git(into, &["config", "user.email", "t@example.com"]);
    git(into, &["config", "user.name", "t"]);
    git(into, &["add", "-A"]);
    git(into, &["commit", "-q", "-m", "base"]);
    copy(&bundle.join("head"), into);
    // The head appends to the base's changelog.
    let head = std::fs::read_to_string(&changelog).unwrap();
    let appended = head.strip_prefix(&bundle_base).expect("the bundle's head changelog appends to its base's");
    std::fs::write(&changelog, format!("{base_changelog}{appended}")).unwrap();
    git(into, &["add", "-A"]);
    git(into, &["commit", "-q", "-m", "dsr1 fp4 b200 sglang: retune conc 4-64"]);
}
