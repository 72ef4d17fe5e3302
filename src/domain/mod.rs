//! The benchmark repository as types: one module per policy file, each a pure parser from
//! text to a typed value with positioned errors.

pub mod changelog;
pub mod checklist_template;
pub mod ci_priority;
pub mod codeowners;
pub mod eval_thresholds;
pub mod forward;
pub mod frameworks;
pub mod golden_al;
pub mod launch;
pub mod master_config;
pub mod models_md;
pub mod precision;
pub mod runners;
pub mod srt;
pub mod srt_recipe;
pub mod sweepgate_policy;
pub mod upstream_links;
pub mod waiver;
