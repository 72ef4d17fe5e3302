//! The upstream history bundle (`../shared/acceptance/inferencex-history.bundle`): where it is,
//! and a clone of its branch. Included by path (`#[path = "support/history.rs"]`) by the tests
//! that read the real tree, so they do not compile the fake servers of `support/mod.rs`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The entry `name` of `../shared/acceptance/` (`present` says it is what is expected), or `None`
/// when `SWEEPGATE_SKIP_CORPUS=1` skips `what` on purpose. A missing entry fails the test (CI has
/// `../shared/` beside the clone).
pub fn acceptance(name: &str, what: &str, present: fn(&Path) -> bool) -> Option<PathBuf> {
    if std::env::var_os("SWEEPGATE_SKIP_CORPUS").is_some_and(|v| v == "1") {
        eprintln!("SWEEPGATE_SKIP_CORPUS=1: {what} is skipped");
        return None;
    }
    let candidates = [
        std::env::var_os("SWEEPGATE_ACCEPTANCE_DIR").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/acceptance")),
        Some(PathBuf::from("/work/shared/acceptance")),
    ];
    let found = candidates.into_iter().flatten().map(|d| d.join(name)).find(|p| present(p));
    assert!(
        found.is_some(),
        "../shared/acceptance/{name} is missing: {what} cannot run \
         (set SWEEPGATE_ACCEPTANCE_DIR, or SWEEPGATE_SKIP_CORPUS=1 to skip it on purpose)"
    );
    found
}

/// The bundle, or `None` when `SWEEPGATE_SKIP_CORPUS=1` skips `what` on purpose.
pub fn history_bundle(what: &str) -> Option<PathBuf> {
    acceptance("inferencex-history.bundle", what, Path::is_file)
}

/// A clone of the bundle's `upto-2026-08-19` branch (no work tree) at `into`.
pub fn clone_history(bundle: &Path, into: &Path) {
    let out = Command::new("git")
        .args(["clone", "-q", "--no-checkout", "-b", "upto-2026-08-19"])
        .arg(bundle)
        .arg(into)
        .output()
        .unwrap();
    assert!(out.status.success(), "cloning {}: {}", bundle.display(), String::from_utf8_lossy(&out.stderr));
}
