//! The affected configs and what each runs, as the checks share them: computed once per
//! verification by `affected` and `reach`, kept in the [`super::Context`].

use std::collections::BTreeSet;

use crate::domain::launch::follow::LaunchPath;
use crate::domain::launch::ConfigLaunch;

/// One affected master-config entry, with the fields the checks compare.
#[derive(Debug, Clone, PartialEq)]
pub struct AffectedConfig {
    pub key: String,
    pub file: String,
    pub line: u32,
    pub image: String,
    /// The checkpoint it serves (`model`: a Hugging Face repo id).
    pub model: String,
    pub model_prefix: String,
    pub precision: String,
    pub framework: String,
    pub runner: String,
    pub multinode: bool,
    /// `(isl, osl)` of each fixed-seq-len block.
    pub fixed_seq: Vec<(i64, i64)>,
    pub agentic: bool,
    /// Distinct `spec-decoding` values of its search spaces (`none` when unset).
    pub spec_decoding: BTreeSet<String>,
}

impl AffectedConfig {
    /// Whether a search space of the entry runs a draft (`spec-decoding` other than `none`).
    pub fn speculative(&self) -> bool {
        self.spec_decoding.iter().any(|s| s != "none")
    }
}

/// The reach of one affected config, and the rest of its launch model.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigReach {
    pub config: AffectedConfig,
    pub path: LaunchPath,
    pub launch: ConfigLaunch,
}
