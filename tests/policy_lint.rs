//! `sweepgate lint` over the policy files, end to end through the binary: the fixture
//! repository and the real upstream files lint clean; a repository with one mistake in each
//! policy file reports every mistake with its position and exits 1.

use std::path::{Path, PathBuf};
use std::process::Command;

fn lint(repo: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate")).arg("lint").arg("--repo").arg(repo).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

fn fixture_repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/repo")
}

fn acceptance_dir() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("SWEEPGATE_ACCEPTANCE_DIR").map(PathBuf::from),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/acceptance")),
        Some(PathBuf::from("/work/shared/acceptance")),
    ];
    let found = candidates.into_iter().flatten().find(|p| p.join("inferencex/843c625").is_dir());
    if found.is_none() {
        eprintln!("acceptance data not found; skipping (set SWEEPGATE_ACCEPTANCE_DIR)");
    }
    found
}

/// The policy files this area owns, copied from the fixture repository.
const POLICY_FILES: [&str; 9] = [
    ".github/CODEOWNERS",
    "MODELS.md",
    "MODELS_zh.md",
    "docs/PR_REVIEW_CHECKLIST.md",
    "docs/waiver/4100.md",
    "golden_al_distribution/dsr1_mtp.yaml",
    "golden_al_distribution/glm5_eagle3.yaml",
    "golden_al_distribution/README.md",
    "utils/evals/thresholds.yaml",
];

fn copy_policy_files(to: &Path) {
    for rel in POLICY_FILES {
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(fixture_repo().join(rel), dest).unwrap();
    }
}

fn edit(root: &Path, rel: &str, from: &str, to: &str) {
    let path = root.join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{rel} has no `{from}`");
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn fixture_policy_files_lint_clean() {
    let dir = tempfile::tempdir().unwrap();
    copy_policy_files(dir.path());
    let (code, stdout) = lint(dir.path());
    assert_eq!((code, stdout.as_str()), (0, ""));
}

#[test]
fn real_upstream_files_lint_clean() {
    let Some(dir) = acceptance_dir() else { return };
    let (code, stdout) = lint(&dir.join("inferencex/843c625"));
    assert_eq!(code, 0, "{stdout}");
    let policy_paths = [".github/", "MODELS", "docs/", "golden_al_distribution/", "utils/evals/"];
    let about_policy: Vec<&str> = stdout.lines().filter(|l| policy_paths.iter().any(|p| l.starts_with(p))).collect();
    assert!(about_policy.is_empty(), "{about_policy:?}");
}

#[test]
fn one_mistake_per_policy_file_is_reported_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_policy_files(root);
    edit(root, ".github/CODEOWNERS", "/docs/generated/", "!docs/generated/ @benchlab/core");
    edit(root, ".github/CODEOWNERS", "@kernel-dev", "kernel dev");
    edit(root, "MODELS.md", "| `kimik3` | TBD |", "| `kimik3` | next quarter |");
    edit(root, "docs/PR_REVIEW_CHECKLIST.md", "As a PR reviewer and CODEOWNER, I have", "As a reviewer, I have");
    edit(root, "docs/waiver/4100.md", "## Removal plan", "## Next steps");
    edit(root, "golden_al_distribution/dsr1_mtp.yaml", "    4: 2.98", "    4: 5.98");
    edit(root, "golden_al_distribution/glm5_eagle3.yaml", "  thinking_on:", "  thinking:");
    edit(root, "utils/evals/thresholds.yaml", "gsm8k: 0.94", "gsm8k: ninety");
    let (code, stdout) = lint(root);
    assert_eq!(code, 1);
    insta::assert_snapshot!("policy_lint_mistakes", stdout);
}

#[test]
fn translation_drift_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    copy_policy_files(dir.path());
    edit(dir.path(), "MODELS_zh.md", "| `gptoss` |", "| `gpt-oss` |");
    let (code, stdout) = lint(dir.path());
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        "MODELS_zh.md: warning: model `gptoss` is in MODELS.md but not in this translation\n\
         MODELS_zh.md:65:1: warning: model `gpt-oss-120b` is not in MODELS.md\n"
    );
}

/// `sweepgate lint` prints the MODELS.md deprecation facts it read (decision RV4), on stderr:
/// upstream's day-0 arm row and dated sentence, as the real file at 843c625 writes them.
#[test]
fn lint_prints_the_models_md_facts_it_read() {
    let Some(dir) = acceptance_dir() else { return };
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .arg("lint")
        .arg("--repo")
        .arg(dir.join("inferencex/843c625"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("MODELS.md:33: fact: kimik3 Agentic coding, non-DSpark (deprecated from day 0), non-spec-decoding arm: deprecated from day 0"),
        "{stderr}"
    );
    assert!(
        stderr.contains("MODELS.md:41: fact: kimik2.5 Single-turn 8k1k: last day 2026-08-06, retired from the next day; model fully retired after 2026-08-06"),
        "{stderr}"
    );
}
