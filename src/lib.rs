//! sweepgate: the merge gate for GPU-inference benchmark repositories.
//!
//! Pure core (parsers, matrix, checks, plan) over immutable inputs; I/O only at the edge.
//! See README.md for the map of modules.

pub mod diag;
pub mod lint;
pub mod repo;
pub mod yaml;
