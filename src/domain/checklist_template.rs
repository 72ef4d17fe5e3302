//! The PR review checklist template (spec 30 §4).
