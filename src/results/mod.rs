//! Benchmark, eval and power artifacts; Pareto frontiers and removed-point coverage (spec 40).
//!
//! Everything here is pure: parsers take text, validators take parsed values and return typed
//! findings. Reading files, clocks and environment belong to the callers.

pub mod counter;
pub mod csv;
pub mod pareto;
pub mod power;

/// Python's `round(value, digits)` for finite values: the decimal rounding of the exact binary
/// value, read back as the nearest `f64`.
pub fn round_to(value: f64, digits: usize) -> f64 {
    format!("{value:.digits$}").parse().unwrap_or(value)
}
pub mod eval;
