//! Benchmark, eval and power artifacts; Pareto frontiers and removed-point coverage (spec 40).
//!
//! Everything here is pure: parsers take text, validators take parsed values and return typed
//! findings. Reading files, clocks and environment belong to the callers.

pub mod counter;
pub mod pareto;
