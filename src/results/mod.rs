//! Benchmark, eval and power artifacts; Pareto frontiers and removed-point coverage (spec 40).
//!
//! Everything here is pure: parsers take text, validators take parsed values and return typed
//! findings. Reading files, clocks and environment belong to the callers.

pub mod counter;
pub mod csv;
pub mod pareto;
pub mod power;
pub mod power_agentic;
pub mod power_dcgm;
pub mod shapes;

/// Python's `round(value, digits)` for finite values: the decimal rounding of the exact binary
/// value, read back as the nearest `f64`.
pub fn round_to(value: f64, digits: usize) -> f64 {
    format!("{value:.digits$}").parse().unwrap_or(value)
}
pub mod benchmark;
pub mod chart;
pub mod eval;
pub mod eval_logs;

/// A result or eval artifact that could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArtifactError {
    #[error("{file}: {size} bytes is above the {limit}-byte limit")]
    TooLarge { file: String, size: usize, limit: usize },
    #[error("{file}: {message}")]
    Json { file: String, message: String },
    #[error("{file}: not an lm-eval results file (no top-level `lm_eval_version`)")]
    NotLmEval { file: String },
}

/// Deserialize a JSON artifact of at most `limit` bytes; errors name the file (and serde's
/// line, column and field).
pub fn parse_json<T: for<'de> serde::Deserialize<'de>>(
    bytes: &[u8],
    file: &str,
    limit: usize,
) -> Result<T, ArtifactError> {
    if bytes.len() > limit {
        return Err(ArtifactError::TooLarge { file: file.to_string(), size: bytes.len(), limit });
    }
    serde_json::from_slice(bytes).map_err(|e| ArtifactError::Json { file: file.to_string(), message: e.to_string() })
}
