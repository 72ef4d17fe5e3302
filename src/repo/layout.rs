//! Where each logical policy file lives, in both repository layouts (spec 00 Rule L1,
//! ARCHITECTURE decision 5): the first candidate that exists at the ref being read wins.

use super::{RepoError, Tree};

/// The files and folders of a benchmark repository that sweepgate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Logical {
    Changelog,
    ConfigsDir,
    ModelsMd,
    ModelsZhMd,
    ReviewChecklist,
    WaiverDir,
    GoldenAlDir,
    EvalThresholds,
    /// SRT-Slurm recipes root (the folder that holds `sglang/`, `trtllm/`, `vllm/`).
    SrtRecipesDir,
    Codeowners,
    /// What the repository opts in to (`domain::sweepgate_policy`).
    SweepgatePolicy,
}

impl Logical {
    pub const ALL: [Logical; 11] = [
        Logical::Changelog,
        Logical::ConfigsDir,
        Logical::ModelsMd,
        Logical::ModelsZhMd,
        Logical::ReviewChecklist,
        Logical::WaiverDir,
        Logical::GoldenAlDir,
        Logical::EvalThresholds,
        Logical::SrtRecipesDir,
        Logical::Codeowners,
        Logical::SweepgatePolicy,
    ];

    /// Whether this names a folder rather than a file.
    pub fn is_dir(self) -> bool {
        matches!(self, Logical::ConfigsDir | Logical::WaiverDir | Logical::GoldenAlDir | Logical::SrtRecipesDir)
    }

    /// Default candidates, newer layout first.
    pub fn default_candidates(self) -> &'static [&'static str] {
        match self {
            Logical::Changelog => &["inferencex-e2e/perf-changelog.yaml", "perf-changelog.yaml"],
            Logical::ConfigsDir => &["inferencex-e2e/configs", "configs"],
            Logical::ModelsMd => &["inferencex-e2e/docs/MODELS.md", "MODELS.md"],
            Logical::ModelsZhMd => &["inferencex-e2e/docs/MODELS_zh.md", "MODELS_zh.md"],
            Logical::ReviewChecklist => &["inferencex-e2e/docs/PR_REVIEW_CHECKLIST.md", "docs/PR_REVIEW_CHECKLIST.md"],
            Logical::WaiverDir => &["inferencex-e2e/docs/waiver", "docs/waiver"],
            Logical::GoldenAlDir => &["inferencex-e2e/infx/golden_al_distribution", "golden_al_distribution"],
            Logical::EvalThresholds => &[
                "inferencex-e2e/utils/evals/thresholds.yaml",
                "inferencex-e2e/infx/evals/thresholds.yaml",
                "utils/evals/thresholds.yaml",
            ],
            Logical::SrtRecipesDir => {
                &["inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes", "benchmarks/multi_node/srt-slurm-recipes"]
            }
            Logical::Codeowners => &[".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"],
            Logical::SweepgatePolicy => &[".github/sweepgate.yaml"],
        }
    }
}

/// Candidate paths per logical file. `Layout::default()` is ARCHITECTURE decision 5; the bot's
/// configuration may override any entry.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    overrides: Vec<(Logical, Vec<String>)>,
}

impl Layout {
    /// Replaces the candidates of one logical file.
    pub fn with_candidates(mut self, logical: Logical, candidates: Vec<String>) -> Layout {
        self.overrides.retain(|(l, _)| *l != logical);
        self.overrides.push((logical, candidates));
        self
    }

    pub fn candidates(&self, logical: Logical) -> Vec<String> {
        match self.overrides.iter().find(|(l, _)| *l == logical) {
            Some((_, c)) => c.clone(),
            None => logical.default_candidates().iter().map(|s| s.to_string()).collect(),
        }
    }

    /// The first candidate that exists in `tree`, or `None` when none does.
    pub fn resolve(&self, tree: &dyn Tree, logical: Logical) -> Result<Option<String>, RepoError> {
        for candidate in self.candidates(logical) {
            let present = if logical.is_dir() { tree.dir_exists(&candidate)? } else { tree.exists(&candidate)? };
            if present {
                return Ok(Some(candidate));
            }
        }
        Ok(None)
    }

    /// Rule L1 for any other repository path `p`: `inferencex-e2e/<p>` if it exists, else `p`.
    pub fn resolve_path(tree: &dyn Tree, path: &str) -> Result<String, RepoError> {
        let prefixed = format!("inferencex-e2e/{path}");
        if tree.exists(&prefixed)? || tree.dir_exists(&prefixed)? {
            Ok(prefixed)
        } else {
            Ok(path.to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::MemTree;

    #[test]
    fn top_level_layout() {
        let t =
            MemTree::new().with("perf-changelog.yaml", "").with("configs/nvidia-master.yaml", "").with("MODELS.md", "");
        let l = Layout::default();
        assert_eq!(l.resolve(&t, Logical::Changelog).unwrap().as_deref(), Some("perf-changelog.yaml"));
        assert_eq!(l.resolve(&t, Logical::ConfigsDir).unwrap().as_deref(), Some("configs"));
        assert_eq!(l.resolve(&t, Logical::ModelsMd).unwrap().as_deref(), Some("MODELS.md"));
        assert_eq!(l.resolve(&t, Logical::GoldenAlDir).unwrap(), None);
    }

    #[test]
    fn newer_layout_wins_when_present() {
        let t = MemTree::new()
            .with("perf-changelog.yaml", "old")
            .with("inferencex-e2e/perf-changelog.yaml", "new")
            .with("inferencex-e2e/infx/golden_al_distribution/a.yaml", "")
            .with("inferencex-e2e/infx/evals/thresholds.yaml", "");
        let l = Layout::default();
        assert_eq!(l.resolve(&t, Logical::Changelog).unwrap().as_deref(), Some("inferencex-e2e/perf-changelog.yaml"));
        assert_eq!(
            l.resolve(&t, Logical::GoldenAlDir).unwrap().as_deref(),
            Some("inferencex-e2e/infx/golden_al_distribution")
        );
        assert_eq!(
            l.resolve(&t, Logical::EvalThresholds).unwrap().as_deref(),
            Some("inferencex-e2e/infx/evals/thresholds.yaml")
        );
        assert_eq!(Layout::resolve_path(&t, "perf-changelog.yaml").unwrap(), "inferencex-e2e/perf-changelog.yaml");
        assert_eq!(Layout::resolve_path(&t, "benchmarks/x.sh").unwrap(), "benchmarks/x.sh");
    }

    #[test]
    fn overrides_replace_defaults() {
        let t = MemTree::new().with("custom/changelog.yaml", "");
        let l = Layout::default().with_candidates(Logical::Changelog, vec!["custom/changelog.yaml".into()]);
        assert_eq!(l.resolve(&t, Logical::Changelog).unwrap().as_deref(), Some("custom/changelog.yaml"));
    }
}
