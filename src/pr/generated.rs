//! The generator's rows for the affected configs at one revision (the matrix module's own
//! `test-config`), shared by Check 15 (claims vs parameters) and Check 18 (a)-(d).

use super::configs::AffectedConfig;
use super::{reason, Reason};
use crate::domain::master_config::MasterConfigError;
use crate::matrix::diff::{additions_between, additions_from_unified_diff, Additions};
use crate::matrix::generate::{test_config_rows, CommonOptions, TestConfigOptions};
use crate::matrix::inputs;
use crate::matrix::{MatrixError, Row};
use crate::repo::{Layout, MemTree};

/// One config's generated rows, or why its search space does not generate.
pub type Generated = (String, Result<Vec<Row>, String>);

/// Why a revision's generator inputs are unusable.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadError {
    /// A master or runner file is not in the evidence: unverifiable, not a defect of the PR.
    Missing(String),
    /// The files are there and invalid: a proven defect.
    Invalid(String),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Missing(m) | LoadError::Invalid(m) => f.write_str(m),
        }
    }
}

/// Rows per affected config key: `Ok(rows)` or why the search space does not generate.
/// `Err` when the revision's master configs or runner file cannot be loaded at all.
pub fn rows_by_config(tree: &MemTree, configs: &[AffectedConfig]) -> Result<Vec<Generated>, LoadError> {
    let inputs = inputs::load(tree, &Layout::default()).map_err(|e| match e {
        MatrixError::MissingFile(m) => LoadError::Missing(m),
        MatrixError::Config(MasterConfigError::MissingFile { file }) => {
            LoadError::Missing(format!("{file} does not exist"))
        }
        other => LoadError::Invalid(other.to_string()),
    })?;
    let common = CommonOptions::default();
    Ok(configs
        .iter()
        .map(|c| {
            let rows = test_config_rows(
                &inputs.configs,
                &inputs.runners,
                std::slice::from_ref(&c.key),
                &TestConfigOptions::default(),
                &common,
            )
            .map_err(|e| e.to_string());
            (c.key.clone(), rows)
        })
        .collect())
}

/// Whether `key` is a config at this revision (a new config has no base search space).
pub fn has_config(tree: &MemTree, key: &str) -> bool {
    inputs::load_master(tree, &Layout::default()).is_ok_and(|m| m.get(key).is_some())
}

/// The changelog entries a PR appends, as upstream's processor reads them (spec 20 §6), with the
/// PR's eval labels: the input of the PR's own matrix (Check 1's "no eval expected", Check 2's
/// owed evals).
pub struct PrChangelog {
    pub path: String,
    pub additions: crate::matrix::diff::Additions,
    pub options: crate::matrix::process::ProcessOptions,
}

impl PrChangelog {
    /// The PR's matrix: the processor over its appended entries at base and head.
    pub fn process(
        &self,
        ev: &crate::evidence::Evidence,
    ) -> Result<crate::matrix::MatrixOutput, crate::matrix::MatrixError> {
        use crate::matrix::process::{process, Revision};
        let base = Revision { name: &ev.pull_request.base_sha, tree: &ev.base };
        let head = Revision { name: &ev.pull_request.head_sha, tree: &ev.head };
        process(&self.additions, &self.path, base, head, &Layout::default(), self.options)
    }
}

/// What the PR appends to the changelog: `Ok(None)` when it does not touch the changelog (or the
/// head has none), `Err` naming what could not be read.
pub fn pr_changelog(ev: &crate::evidence::Evidence) -> Result<Option<PrChangelog>, Reason> {
    use crate::matrix::process::ProcessOptions;
    let path = match Layout::default().resolve(&ev.head, crate::repo::Logical::Changelog) {
        Ok(Some(path)) => path,
        Ok(None) => return Ok(None),
        Err(e) => return Err(e.to_string().into()),
    };
    if !ev.files.iter().any(|f| f.filename == path) {
        return Ok(None);
    }
    let (Some(head), Some(base)) = (ev.head.text(&path), ev.base.text(&path)) else {
        return Err(reason("changelog_unreadable").arg("path", path));
    };
    let labelled = |name: &str| ev.pull_request.labels.iter().any(|l| l == name);
    let options =
        ProcessOptions { all_evals: labelled("all-evals"), evals_only: labelled("evals-only"), ..Default::default() };
    let additions = appended(ev, &path, base, head)?;
    Ok(Some(PrChangelog { path, additions, options }))
}

/// The lines the PR appended to the changelog: from its own diff when the evidence has it (the
/// diff upstream's processor reads; a re-computed line diff may slide an inserted entry across
/// the boundary of its repeated `- config-keys:` neighbours and cut it in two), else re-derived
/// from the two texts.
pub fn appended(ev: &crate::evidence::Evidence, path: &str, base: &str, head: &str) -> Result<Additions, String> {
    match ev.files.iter().find(|f| f.filename == path).and_then(|f| f.patch.as_deref()) {
        Some(patch) => additions_from_unified_diff(patch, path).map_err(|e| e.to_string()),
        None => additions_between(base, head, path).map_err(|e| e.to_string()),
    }
}
