//! The narrow interface the dispatcher needs from a batch scheduler (ARCHITECTURE: narrow client
//! traits at the edge). The real implementation is [`crate::sweep::slurm::SlurmCli`]; tests run it
//! against the real local Slurm (`scripts/slurm-up.sh`), not against an in-process stub.

use std::fmt;

/// A Slurm job id as printed by `sbatch --parsable` (the cluster suffix removed).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct JobId(pub String);

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A job to submit: its unique name and the complete batch script (directives included).
#[derive(Debug, Clone)]
pub struct JobRequest {
    pub name: String,
    pub script: String,
}

/// Slurm's job states (`squeue %T`, `sacct State`), with the ones the dispatcher acts on named.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum SlurmState {
    Pending,
    Running,
    Completing,
    Suspended,
    Completed,
    Failed,
    Cancelled,
    Timeout,
    NodeFail,
    Preempted,
    BootFail,
    Deadline,
    OutOfMemory,
    /// A state this version does not name (e.g. REQUEUED); treated as not finished.
    Other(String),
}

impl SlurmState {
    /// Parses `squeue`/`sacct` spellings; sacct writes `CANCELLED by 0`.
    pub fn parse(text: &str) -> SlurmState {
        let word = text.split_whitespace().next().unwrap_or("");
        match word {
            "PENDING" | "PD" => SlurmState::Pending,
            "RUNNING" | "R" | "CONFIGURING" | "CF" => SlurmState::Running,
            "COMPLETING" | "CG" => SlurmState::Completing,
            "SUSPENDED" | "S" => SlurmState::Suspended,
            "COMPLETED" | "CD" => SlurmState::Completed,
            "FAILED" | "F" => SlurmState::Failed,
            "CANCELLED" | "CA" => SlurmState::Cancelled,
            "TIMEOUT" | "TO" => SlurmState::Timeout,
            "NODE_FAIL" | "NF" => SlurmState::NodeFail,
            "PREEMPTED" | "PR" => SlurmState::Preempted,
            "BOOT_FAIL" | "BF" => SlurmState::BootFail,
            "DEADLINE" | "DL" => SlurmState::Deadline,
            "OUT_OF_MEMORY" | "OOM" => SlurmState::OutOfMemory,
            other => SlurmState::Other(other.to_string()),
        }
    }

    /// Finished for good: Slurm will not run this job again.
    pub fn is_final(&self) -> bool {
        !matches!(
            self,
            SlurmState::Pending
                | SlurmState::Running
                | SlurmState::Completing
                | SlurmState::Suspended
                | SlurmState::Other(_)
        )
    }
}

/// How a job ended: exit code and terminating signal (`sacct ExitCode` is `code:signal`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ExitStatus {
    pub code: i32,
    pub signal: i32,
}

/// Where a final state was read, recorded as provenance (spec 50 §7, §11 item 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StateSource {
    Squeue,
    Sacct,
    SacctCompletion,
    Log,
}

impl StateSource {
    pub fn as_str(self) -> &'static str {
        match self {
            StateSource::Squeue => "squeue",
            StateSource::Sacct => "sacct",
            StateSource::SacctCompletion => "sacct -c",
            StateSource::Log => "log",
        }
    }
}

/// What the scheduler knows about one job.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct JobInfo {
    pub id: JobId,
    pub name: Option<String>,
    pub state: SlurmState,
    pub reason: Option<String>,
    pub exit: Option<ExitStatus>,
    pub nodes: Option<String>,
    pub submitted_at: Option<String>,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    pub source: StateSource,
}

impl JobInfo {
    /// Held by its owner (`sbatch --hold`) and not released yet, e.g. because a dispatcher died
    /// between sbatch and release. Admin holds (`JobHeldAdmin`) are not ours to release.
    pub fn is_held(&self) -> bool {
        self.state == SlurmState::Pending && self.reason.as_deref() == Some("JobHeldUser")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SchedulerError {
    #[error("`{command}` could not be run: {source}; is Slurm installed and on PATH?")]
    Spawn { command: String, source: std::io::Error },
    #[error("`{command}` did not finish within {seconds}s (is slurmctld up? `scontrol ping`)")]
    Timeout { command: String, seconds: u64 },
    #[error("`{command}` failed (exit {code}): {stderr}")]
    Failed { command: String, code: i32, stderr: String },
    #[error("`{command}` printed output that could not be read: {detail}")]
    Unparsable { command: String, detail: String },
    /// ssh could not reach the pool's host, or slurmrestd answered 5xx or not at all.
    #[error("`{command}`: {host} could not be reached: {stderr}")]
    Unreachable { command: String, host: String, stderr: String },
}

impl SchedulerError {
    /// The command may have taken effect, or the controller was unreachable: the caller must
    /// look the job up by name before trying again.
    pub fn outcome_unknown(&self) -> bool {
        matches!(
            self,
            SchedulerError::Timeout { .. } | SchedulerError::Unparsable { .. } | SchedulerError::Unreachable { .. }
        ) || matches!(self, SchedulerError::Failed { stderr, .. } if stderr.contains("Unable to contact slurm controller"))
    }
}

/// Why the scheduler refused a job, in the words a public page may show: the scheduler's own
/// text names accounts, users and hosts, so it stays in the ledger and the log (decision HE6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    InvalidAccount,
    InvalidPartition,
    InvalidQos,
    PolicyLimit,
    NodeConfiguration,
    TimeLimit,
    PermissionDenied,
    Unreachable,
    Other,
}

impl SchedulerError {
    /// The class of the refusal (Slurm's `sbatch` messages, case-insensitive).
    pub fn refusal(&self) -> Refusal {
        let text = match self {
            SchedulerError::Failed { stderr, .. } => stderr.to_ascii_lowercase(),
            SchedulerError::Unreachable { .. } | SchedulerError::Timeout { .. } => return Refusal::Unreachable,
            SchedulerError::Spawn { .. } | SchedulerError::Unparsable { .. } => return Refusal::Other,
        };
        let has = |words: &[&str]| words.iter().any(|w| text.contains(w));
        if has(&["invalid account", "account/partition combination"]) {
            Refusal::InvalidAccount
        } else if has(&["invalid partition"]) {
            Refusal::InvalidPartition
        } else if has(&["invalid qos"]) {
            Refusal::InvalidQos
        } else if has(&["accounting/qos policy", "qosmax", "assocmax", "job limit"]) {
            Refusal::PolicyLimit
        } else if has(&["node configuration is not available", "requested node config", "gres"]) {
            Refusal::NodeConfiguration
        } else if has(&["time limit"]) {
            Refusal::TimeLimit
        } else if has(&["permission denied", "access denied", "invalid user", "not permitted", "invalid group"]) {
            Refusal::PermissionDenied
        } else {
            Refusal::Other
        }
    }
}

/// Submit, release, look up and cancel batch jobs.
pub trait Scheduler {
    /// Submits the job held (`sbatch --hold`): it cannot start before [`Scheduler::release`], so the
    /// caller can record its id and create its output directory first (spec 50 §5.1 race).
    fn submit_held(&self, job: &JobRequest) -> Result<JobId, SchedulerError>;
    /// Releases a held job; releasing a job that already runs or ended is not an error.
    fn release(&self, id: &JobId) -> Result<(), SchedulerError>;
    /// What the scheduler knows about these jobs; ids it has no record of are absent.
    fn jobs(&self, ids: &[JobId]) -> Result<Vec<JobInfo>, SchedulerError>;
    /// This user's jobs whose name starts with `prefix`, active and recently finished.
    fn jobs_named(&self, prefix: &str) -> Result<Vec<JobInfo>, SchedulerError>;
    /// Cancels these jobs; cancelling an ended or unknown job is not an error.
    fn cancel(&self, ids: &[JobId]) -> Result<(), SchedulerError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_classified_without_their_text() {
        let failed = |stderr: &str| {
            SchedulerError::Failed { command: "sbatch".into(), code: 1, stderr: stderr.into() }.refusal()
        };
        let account = "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified (user svc-bench@login-07.corp.internal, account proj-x)";
        assert_eq!(failed(account), Refusal::InvalidAccount);
        assert_eq!(failed("sbatch: error: invalid partition specified: gpu-secret"), Refusal::InvalidPartition);
        assert_eq!(failed("sbatch: error: Invalid qos specification"), Refusal::InvalidQos);
        assert_eq!(
            failed("Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"),
            Refusal::PolicyLimit
        );
        assert_eq!(failed("Requested node configuration is not available"), Refusal::NodeConfiguration);
        assert_eq!(failed("Requested time limit is invalid (missing or exceeds some limit)"), Refusal::TimeLimit);
        assert_eq!(failed("Access/permission denied"), Refusal::PermissionDenied);
        assert_eq!(failed("something new"), Refusal::Other);
        let gone = SchedulerError::Unreachable { command: "sbatch".into(), host: "h".into(), stderr: "x".into() };
        assert_eq!(gone.refusal(), Refusal::Unreachable);
    }

    #[test]
    fn parses_long_short_and_sacct_spellings() {
        assert_eq!(SlurmState::parse("PENDING"), SlurmState::Pending);
        assert_eq!(SlurmState::parse("CF"), SlurmState::Running);
        assert_eq!(SlurmState::parse("CANCELLED by 0"), SlurmState::Cancelled);
        assert_eq!(SlurmState::parse("NODE_FAIL"), SlurmState::NodeFail);
        assert_eq!(SlurmState::parse("TIMEOUT"), SlurmState::Timeout);
        assert_eq!(SlurmState::parse("REQUEUED"), SlurmState::Other("REQUEUED".into()));
        assert_eq!(SlurmState::parse(""), SlurmState::Other(String::new()));
    }

    #[test]
    fn only_terminal_states_are_final() {
        for s in ["PENDING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED"] {
            assert!(!SlurmState::parse(s).is_final(), "{s}");
        }
        for s in ["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "OUT_OF_MEMORY"]
        {
            assert!(SlurmState::parse(s).is_final(), "{s}");
        }
    }

    #[test]
    fn unknown_outcome_covers_timeouts_and_unreachable_controller() {
        let t = SchedulerError::Timeout { command: "sbatch".into(), seconds: 1 };
        assert!(t.outcome_unknown());
        let down = SchedulerError::Failed {
            command: "sbatch".into(),
            code: 1,
            stderr: "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)"
                .into(),
        };
        assert!(down.outcome_unknown());
        let rejected = SchedulerError::Failed {
            command: "sbatch".into(),
            code: 1,
            stderr: "Requested node configuration is not available".into(),
        };
        assert!(!rejected.outcome_unknown());
    }
}
