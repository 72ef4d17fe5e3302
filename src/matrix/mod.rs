//! Changelog validation and sweep-matrix generation with upstream parity (spec 20).
//!
//! - [`inputs`]: master configs and runners read from a [`Tree`](crate::repo::Tree);
//! - [`generate`]: the generator (`test-config`, `full-sweep`) and [`evals`] selection;
//! - [`diff`]: the changelog additions between two revisions;
//! - [`process`]: the processor (changelog additions → buckets), with [`append_only`];
//! - [`output`]: the final JSON in upstream's key order; [`canary`]: canary selection;
//! - [`strict`]: the byte rules of the merge path (a separate, stricter mode).

pub mod append_only;
pub mod canary;
pub mod diff;
pub mod evals;
pub mod generate;
pub mod inputs;
pub mod json;
pub mod lint;
pub mod output;
pub mod process;
pub mod strict;

use crate::domain::master_config::MasterConfigError;
use crate::repo::RepoError;
use crate::yaml::YamlError;

/// One generated matrix row: a JSON object in upstream's key order.
pub type Row = serde_json::Map<String, serde_json::Value>;

pub use output::MatrixOutput;

#[derive(Debug, thiserror::Error)]
pub enum MatrixError {
    /// Invalid option combination (upstream: argparse error).
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Config(#[from] MasterConfigError),
    #[error("{0}")]
    Runners(YamlError),
    #[error("{0}")]
    MissingFile(String),
    /// The changelog diff or its additions (spec 20 V4-V6, V8-V9).
    #[error("{0}")]
    Changelog(String),
    /// A changelog entry failed its schema (V7).
    #[error("invalid changelog entry: {0}")]
    Entry(YamlError),
    /// Generator errors (DRAM budget, unknown keys, shape).
    #[error("{0}")]
    Generate(String),
    #[error("{0}")]
    AppendOnly(String),
    /// The sweep's point bound (`sweep::plan_input::MAX_POINTS`), named in the refusal.
    #[error("the matrix has more than {max} rows: a sweep runs at most {max} points (MAX_POINTS); split the change")]
    TooManyRows { max: usize },
    #[error("{0}")]
    Repo(#[from] RepoError),
}
