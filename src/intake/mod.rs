//! Intake: what arrives from GitHub, parsed purely — labels, commands, sign-off checklists.
pub mod signoff;
