//! Bundles: Evidence on disk, a public interface (README "Evidence bundles").
//!
//! ```text
//! <bundle>/evidence.json     everything but file trees, with "format": 1
//! <bundle>/base/<path>       files at the base SHA (policy files, configs, recipes, …)
//! <bundle>/head/<path>       files at the pinned head SHA
//! <bundle>/artifacts/<run id>/<artifact name>/<path>   unpacked workflow artifacts
//! ```

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Evidence;
use crate::repo::{MemTree, RepoError, Tree, WorkTree};

/// The bundle format version this build reads and writes.
pub const BUNDLE_FORMAT: u32 = 1;

/// evidence.json is bounded like every other input.
const MAX_EVIDENCE_JSON: u64 = 64 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: not valid evidence JSON: {message} (see README, \"Evidence bundles\")")]
    Json { path: PathBuf, message: String },
    #[error("{path}: bundle format {found} is not supported; this sweepgate reads format {BUNDLE_FORMAT}")]
    Format { path: PathBuf, found: u32 },
    #[error("{path}: evidence.json is {size} bytes; at most {MAX_EVIDENCE_JSON} are read")]
    TooLarge { path: PathBuf, size: u64 },
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Serialize)]
struct Envelope<E> {
    format: u32,
    #[serde(flatten)]
    evidence: E,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BundleError + '_ {
    move |source| BundleError::Io { path: path.to_owned(), source }
}

/// Reads a bundle directory.
pub fn read_bundle(dir: &Path) -> Result<Evidence, BundleError> {
    let json_path = dir.join("evidence.json");
    let size = std::fs::metadata(&json_path).map_err(io(&json_path))?.len();
    if size > MAX_EVIDENCE_JSON {
        return Err(BundleError::TooLarge { path: json_path, size });
    }
    let text = std::fs::read_to_string(&json_path).map_err(io(&json_path))?;
    let json_error = |e: serde_json::Error| BundleError::Json {
        path: json_path.clone(),
        message: format!("line {} column {}: {e}", e.line(), e.column()),
    };
    let mut raw: serde_json::Value = serde_json::from_str(&text).map_err(json_error)?;
    let found = raw.get("format").and_then(serde_json::Value::as_u64).unwrap_or(0);
    if found != u64::from(BUNDLE_FORMAT) {
        return Err(BundleError::Format { path: json_path, found: u32::try_from(found).unwrap_or(u32::MAX) });
    }
    // Not through the flattened envelope: serde's flatten cannot read integer map keys
    // (`runs` is keyed by run id), so the format field is removed and the rest read directly.
    if let Some(object) = raw.as_object_mut() {
        object.remove("format");
    }
    let mut evidence: Evidence = serde_json::from_value(raw)
        .map_err(|e| BundleError::Json { path: json_path.clone(), message: e.to_string() })?;
    evidence.base = load_tree(&dir.join("base"))?;
    evidence.head = load_tree(&dir.join("head"))?;
    evidence.artifacts = load_tree(&dir.join("artifacts"))?;
    Ok(evidence)
}

fn load_tree(dir: &Path) -> Result<MemTree, BundleError> {
    let mut tree = MemTree::new();
    if dir.is_dir() {
        tree.copy_from(&WorkTree::new(dir), "")?;
    }
    Ok(tree)
}

/// Writes a bundle directory (created if missing; existing files are overwritten).
pub fn write_bundle(dir: &Path, evidence: &Evidence) -> Result<(), BundleError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let json_path = dir.join("evidence.json");
    let envelope = Envelope { format: BUNDLE_FORMAT, evidence };
    let mut text = serde_json::to_string_pretty(&envelope)
        .map_err(|e| BundleError::Json { path: json_path.clone(), message: e.to_string() })?;
    text.push('\n');
    std::fs::write(&json_path, text).map_err(io(&json_path))?;
    for (name, tree) in [("base", &evidence.base), ("head", &evidence.head), ("artifacts", &evidence.artifacts)] {
        for path in tree.paths() {
            let target = dir.join(name).join(path);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent))?;
            }
            let bytes = tree.read(path)?.unwrap_or_default();
            std::fs::write(&target, bytes).map_err(io(&target))?;
        }
    }
    Ok(())
}
