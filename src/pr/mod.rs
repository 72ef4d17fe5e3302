//! The PR model: what the PR under verification is, computed from the immutable [`Evidence`]
//! once per verification, below the checks (issue 33). The [`Context`] holds it: the affected
//! master-config entries (one parse per tree), their launches and effective settings per row
//! (`domain::launch`), the files each reaches, the PR's generated matrix, its sweep runs, the
//! fingerprint, the curves and the performance comparison, and what the collector must fetch
//! ([`needs`]). The checks (`crate::checks`) are rules over it; collect, the server and the
//! sweeps read it here, never from a check.
//!
//! [`Evidence`]: crate::evidence::Evidence

pub mod affected;
pub mod configs;
mod context;
pub mod curves;
pub mod drafts;
pub mod fingerprint;
pub mod generated;
mod needs;
pub mod overrides;
pub mod performance;
pub mod reach;
mod reason;
pub mod scan;
pub mod settings;
pub mod sweep_runs;

pub use context::{Context, Side};
pub use needs::{needs, Needs};
pub use reason::{reason, Reason, REASON_KEY};
