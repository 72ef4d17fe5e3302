//! Sweep planning and dispatch: plan, SRT variant selection, pools, Slurm, ledger (spec 50).

pub mod pool;
pub mod srt;
