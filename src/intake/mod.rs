//! Intake: what arrives from GitHub, parsed purely — labels, commands, sign-off checklists.

pub mod command;
pub mod eligibility;
pub mod event;
pub mod labels;
pub mod signoff;
