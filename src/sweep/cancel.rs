//! Cancelling every job of a pull request (spec 50 §8): the intent goes into the ledger first,
//! so a running dispatcher stops submitting, then Slurm ends the live jobs whose names carry the
//! PR's prefix, and only those (decision S2). Used by `dispatch --cancel` and by the bot on a
//! new push, a removed primary label or a closed PR.

use std::path::Path;

use super::dispatch::job_prefix;
use super::ledger::{Ledger, LedgerError};
use super::scheduler::{JobId, Scheduler, SchedulerError};

#[derive(Debug, thiserror::Error)]
pub enum CancelError {
    #[error("ledger {path}: {source}")]
    Ledger { path: String, source: Box<LedgerError> },
    #[error("cancelling {prefix}*: {source}")]
    Slurm { prefix: String, source: SchedulerError },
}

/// What a cancel did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cancelled {
    /// The job-name prefix the cancel covered.
    pub prefix: String,
    /// Sweeps whose ledger records now carry the cancel request.
    pub sweeps: Vec<String>,
    /// Live jobs Slurm was asked to end.
    pub jobs: Vec<JobId>,
}

/// Records the cancel in `ledger` (when given) and ends the PR's live jobs.
pub fn cancel_pull_request(
    scheduler: &dyn Scheduler,
    ledger: Option<&Path>,
    repo: &str,
    pr: u64,
) -> Result<Cancelled, CancelError> {
    let sweeps = match ledger {
        Some(path) => {
            let ledger_error =
                |source| CancelError::Ledger { path: path.display().to_string(), source: Box::new(source) };
            Ledger::open(path).map_err(ledger_error)?.request_cancel(repo, pr).map_err(ledger_error)?
        }
        None => Vec::new(),
    };
    let prefix = job_prefix(repo, pr);
    let slurm_error = |source| CancelError::Slurm { prefix: prefix.clone(), source };
    let live: Vec<JobId> = scheduler
        .jobs_named(&prefix)
        .map_err(slurm_error)?
        .into_iter()
        .filter(|j| !j.state.is_final())
        .map(|j| j.id)
        .collect();
    if !live.is_empty() {
        scheduler.cancel(&live).map_err(slurm_error)?;
    }
    Ok(Cancelled { prefix, sweeps, jobs: live })
}
