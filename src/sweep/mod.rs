//! Sweep planning and dispatch: plan, pools, Slurm, ledger (spec 50). SRT variant selection is
//! domain logic (`domain::srt`), shared with Check 18.

pub mod cancel;
pub mod check_run;
pub mod dispatch;
pub mod dispatch_pool;
pub mod engine;
pub mod job_script;
pub mod launch;
pub mod ledger;
pub mod plan;
pub mod plan_input;
pub mod plan_jobs;
pub mod pool;
pub mod results_collect;
pub mod results_store;
pub mod scheduler;
pub mod slurm;
pub mod slurmrestd;
pub mod status_comment;
pub mod transport;
