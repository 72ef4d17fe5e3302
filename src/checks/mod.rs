//! Checks 0-18: pure functions over [`Evidence`], the catalog in `checks/`, and the verdict.
//!
//! A check returns an [`Outcome`]: a status, a message (a key into its catalog entry plus
//! arguments, so all wording lives in `checks/*.toml` in both languages) and evidence
//! references. `verify` runs all 19 and aggregates: APPROVED iff no check FAILs.

pub mod affected;
pub mod c00_codeowner;
pub mod c01_in_pr_sweep;
pub mod c02_evals_pass;
pub mod c03_upstream_recipe;
pub mod c04_reuse_command;
pub mod c05_checklist_template;
pub mod c06_upstream_image;
pub mod c07_deprecated_models;
pub mod c08_architecture_hacks;
pub mod c09_chat_template;
pub mod c10_engine_patches;
pub mod c11_golden_al;
pub mod c12_append_only;
pub mod c13_draft_precision;
pub mod c14_pareto_coverage;
pub mod c15_pr_description;
pub mod c16_nvidia_overview;
pub mod c17_metrics_publication;
pub mod c18_consistency;
pub mod catalog;
mod context;
pub mod curves;
pub mod generated;
pub mod scan;
#[cfg(test)]
mod tests_support;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::evidence::Evidence;
pub use catalog::{Bilingual, Catalog, CheckSpec, Lang, CHECK_COUNT};
pub use context::Context;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Status {
    #[serde(rename = "PASS")]
    Pass,
    #[serde(rename = "FAIL")]
    Fail,
    #[serde(rename = "WARN")]
    Warn,
    #[serde(rename = "NA")]
    NotApplicable,
}

impl Status {
    /// The word used in report rows (`N/A` for not applicable).
    pub fn word(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Warn => "WARN",
            Status::NotApplicable => "N/A",
        }
    }

    pub fn emoji(self) -> &'static str {
        match self {
            Status::Pass => "✅",
            Status::Fail => "❌",
            Status::Warn => "⚠️",
            Status::NotApplicable => "➖",
        }
    }
}

/// A JSON object (a finding of a check) with the fields of `extra` added.
pub(crate) fn with_fields(mut base: serde_json::Value, extra: serde_json::Value) -> serde_json::Value {
    if let (Some(base_fields), serde_json::Value::Object(extra)) = (base.as_object_mut(), extra) {
        base_fields.extend(extra);
    }
    base
}

/// A catalog message and the values of its placeholders (escaped when rendered).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub key: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub args: BTreeMap<String, serde_json::Value>,
}

/// What one check decided, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub status: Status,
    pub message: Message,
    /// References a reader can follow: `path:line`, run ids, comment URLs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
}

impl Outcome {
    pub fn new(status: Status, key: &str) -> Outcome {
        Outcome { status, message: Message { key: key.to_owned(), args: BTreeMap::new() }, evidence: Vec::new() }
    }

    pub fn pass(key: &str) -> Outcome {
        Outcome::new(Status::Pass, key)
    }

    pub fn fail(key: &str) -> Outcome {
        Outcome::new(Status::Fail, key)
    }

    pub fn warn(key: &str) -> Outcome {
        Outcome::new(Status::Warn, key)
    }

    pub fn na(key: &str) -> Outcome {
        Outcome::new(Status::NotApplicable, key)
    }

    /// Sets a placeholder value (a string, number or list).
    pub fn arg(mut self, name: &str, value: impl Into<serde_json::Value>) -> Outcome {
        self.message.args.insert(name.to_owned(), value.into());
        self
    }

    pub fn evidence(mut self, reference: impl Into<String>) -> Outcome {
        self.evidence.push(reference.into());
        self
    }

    /// The common FAIL for evidence that exists but cannot be parsed.
    pub fn unreadable(what: &str, reason: impl Into<String>) -> Outcome {
        Outcome::fail("unreadable").arg("what", what).arg("reason", reason.into())
    }
}

/// One row of the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub id: u8,
    #[serde(flatten)]
    pub outcome: Outcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum VerdictWord {
    Approved,
    Rejected,
}

/// The verdict over one Evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub word: VerdictWord,
    pub results: Vec<CheckResult>,
}

impl Verdict {
    pub fn result(&self, id: u8) -> Option<&CheckResult> {
        self.results.iter().find(|r| r.id == id)
    }

    pub fn with_status(&self, status: Status) -> impl Iterator<Item = &CheckResult> {
        self.results.iter().filter(move |r| r.outcome.status == status)
    }
}

type CheckFn = fn(&Context) -> Outcome;

/// Checks 0..=18 in order.
const CHECKS: [CheckFn; CHECK_COUNT] = [
    c00_codeowner::check,
    c01_in_pr_sweep::check,
    c02_evals_pass::check,
    c03_upstream_recipe::check,
    c04_reuse_command::check,
    c05_checklist_template::check,
    c06_upstream_image::check,
    c07_deprecated_models::check,
    c08_architecture_hacks::check,
    c09_chat_template::check,
    c10_engine_patches::check,
    c11_golden_al::check,
    c12_append_only::check,
    c13_draft_precision::check,
    c14_pareto_coverage::check,
    c15_pr_description::check,
    c16_nvidia_overview::check,
    c17_metrics_publication::check,
    c18_consistency::check,
];

/// Runs every check over the evidence and aggregates the verdict.
pub fn verify(evidence: &Evidence) -> Verdict {
    // Bounds what the checks' YAML parses of PR-sourced files may cost (issue 14, item 4).
    let _yaml_budget = crate::yaml::Budget::PER_VERIFICATION.enter();
    let catalog = Catalog::embedded();
    let cx = Context::new(evidence);
    let results: Vec<CheckResult> = CHECKS
        .iter()
        .enumerate()
        .map(|(index, check)| {
            let id = u8::try_from(index).unwrap_or(u8::MAX);
            let outcome = check(&cx);
            let allowed = &catalog.check(id).allowed;
            // A status the catalog does not allow for this check would slip past the report's
            // rules; fail closed and say so.
            let outcome = if allowed.contains(&outcome.status) {
                outcome
            } else {
                Outcome::fail("status_not_allowed").arg("status", outcome.status.word())
            };
            CheckResult { id, outcome }
        })
        .collect();
    let word = if results.iter().any(|r| r.outcome.status == Status::Fail) {
        VerdictWord::Rejected
    } else {
        VerdictWord::Approved
    };
    Verdict { word, results }
}
