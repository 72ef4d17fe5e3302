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

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use crate::sweep::scheduler::{JobInfo, JobRequest, SlurmState, StateSource};

    /// A scheduler holding a fixed job list; records what it was asked to cancel.
    struct Listed {
        jobs: Result<Vec<JobInfo>, ()>,
        cancelled: RefCell<Vec<JobId>>,
    }

    fn down() -> SchedulerError {
        SchedulerError::Failed {
            command: "squeue".into(),
            code: 1,
            stderr: "Unable to contact slurm controller".into(),
        }
    }

    impl Scheduler for Listed {
        fn submit_held(&self, _: &JobRequest) -> Result<JobId, SchedulerError> {
            Err(down())
        }
        fn release(&self, _: &JobId) -> Result<(), SchedulerError> {
            Err(down())
        }
        fn jobs(&self, _: &[JobId]) -> Result<Vec<JobInfo>, SchedulerError> {
            Err(down())
        }
        fn jobs_named(&self, prefix: &str) -> Result<Vec<JobInfo>, SchedulerError> {
            let jobs = self.jobs.clone().map_err(|()| down())?;
            Ok(jobs.into_iter().filter(|j| j.name.as_deref().is_some_and(|n| n.starts_with(prefix))).collect())
        }
        fn cancel(&self, ids: &[JobId]) -> Result<(), SchedulerError> {
            self.cancelled.borrow_mut().extend_from_slice(ids);
            Ok(())
        }
    }

    fn job(id: &str, name: String, state: SlurmState) -> JobInfo {
        JobInfo {
            id: JobId(id.into()),
            name: Some(name),
            state,
            reason: None,
            exit: None,
            nodes: None,
            submitted_at: None,
            started_at: None,
            ended_at: None,
            source: StateSource::Squeue,
        }
    }

    #[test]
    fn only_the_prs_live_jobs_are_cancelled() {
        let ours = job_prefix("o/r", 7);
        let jobs = vec![
            job("1", format!("{ours}a"), SlurmState::Running),
            job("2", format!("{ours}b"), SlurmState::Completed),
            job("3", format!("{}a", job_prefix("o/r", 70)), SlurmState::Running),
        ];
        let slurm = Listed { jobs: Ok(jobs), cancelled: RefCell::new(Vec::new()) };
        let done = cancel_pull_request(&slurm, None, "o/r", 7).unwrap();
        assert_eq!((done.prefix, done.jobs.clone(), done.sweeps), (ours, vec![JobId("1".into())], vec![]));
        assert_eq!(*slurm.cancelled.borrow(), done.jobs);
    }

    #[test]
    fn slurm_and_ledger_failures_name_what_failed() {
        let slurm = Listed { jobs: Err(()), cancelled: RefCell::new(Vec::new()) };
        let err = cancel_pull_request(&slurm, None, "o/r", 7).unwrap_err().to_string();
        assert!(err.starts_with(&format!("cancelling {}*: ", job_prefix("o/r", 7))), "{err}");
        assert!(err.contains("Unable to contact slurm controller"), "{err}");

        let dir = tempfile::tempdir().unwrap();
        let not_a_ledger = dir.path().join("ledger.db");
        std::fs::write(&not_a_ledger, b"this is not SQLite, just text long enough to be read as a header").unwrap();
        let ok = Listed { jobs: Ok(vec![]), cancelled: RefCell::new(Vec::new()) };
        let err = cancel_pull_request(&ok, Some(&not_a_ledger), "o/r", 7).unwrap_err().to_string();
        assert!(err.starts_with(&format!("ledger {}: ", not_a_ledger.display())), "{err}");
        assert!(ok.cancelled.borrow().is_empty(), "nothing is cancelled before the intent is recorded");
    }
}
