//! sweepgate: the merge gate for GPU-inference benchmark repositories.
//!
//! Pure core (parsers, matrix, checks, plan) over immutable inputs; I/O only at the edge.
//! See README.md for the map of modules.

pub mod checks;
pub mod diag;
pub mod domain;
pub mod escape;
pub mod evidence;
pub mod github;
pub mod intake;
pub mod lint;
pub mod matrix;
pub mod offload;
pub mod pr;
pub mod repo;
pub mod report;
pub mod results;
pub mod server;
pub mod sweep;
pub mod yaml;
