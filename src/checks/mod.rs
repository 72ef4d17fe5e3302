//! Checks 0-18: pure functions over [`Evidence`], the catalog in `checks/`, and the verdict.
//!
//! A check returns an [`Outcome`]: a status, a message (a key into its catalog entry plus
//! arguments, so all wording lives in `checks/*.toml` in both languages) and evidence
//! references. `verify` runs all 19 and aggregates: APPROVED iff no check FAILs.

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
pub mod preflight;
#[cfg(test)]
pub(crate) mod tests_support;
pub mod text;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::evidence::Evidence;
pub use crate::pr::{reason, Context, Reason, REASON_KEY};
pub use catalog::{Bilingual, Catalog, CheckSpec, Lang, CHECK_COUNT};

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

/// A reason read outside a report (a log note, the collector's own text of an unavailable
/// fact): its English text of the catalog.
impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&text::reason_text(self.fields(), Lang::En))
    }
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

    /// The common FAIL for evidence that exists but cannot be parsed: `what` is a path or a
    /// reason naming it, `reason` a reason of the catalog or an outside text (quoted as code).
    pub fn unreadable(what: impl Into<serde_json::Value>, reason: impl Into<Reason>) -> Outcome {
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
    /// The head run against the published curve (advisory, issue 26), computed once in the
    /// verification's context for every report that shows it.
    pub performance: crate::pr::performance::Performance,
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

/// Which file trees a check reads. A check that reads a tree the verifier could not read is
/// never PASS or N/A: its row names the tree and why (ARCHITECTURE: fail closed).
#[derive(Debug, Clone, Copy)]
struct Reads {
    base: bool,
    head: bool,
    /// The policy files at the default branch's tip (ARCHITECTURE decision 6).
    policy: bool,
}

const HEAD: Reads = Reads { base: false, head: true, policy: false };
const BOTH: Reads = Reads { base: true, head: true, policy: false };
const NEITHER: Reads = Reads { base: false, head: false, policy: false };
/// Policy only (CODEOWNERS, the checklist template).
const POLICY: Reads = Reads { base: false, head: false, policy: true };
/// Head, base and policy.
const ALL: Reads = Reads { base: true, head: true, policy: true };

/// Checks 0..=18 in order, with the trees each reads (directly, through the policy files of
/// [`Context`], or through the affected configs and added lines, which fall back to the head).
const CHECKS: [(CheckFn, Reads); CHECK_COUNT] = [
    (c00_codeowner::check, POLICY),
    (c01_in_pr_sweep::check, NEITHER),
    (c02_evals_pass::check, ALL),
    (c03_upstream_recipe::check, HEAD),
    (c04_reuse_command::check, NEITHER),
    (c05_checklist_template::check, POLICY),
    (c06_upstream_image::check, HEAD),
    (c07_deprecated_models::check, ALL),
    (c08_architecture_hacks::check, HEAD),
    (c09_chat_template::check, HEAD),
    (c10_engine_patches::check, HEAD),
    (c11_golden_al::check, ALL),
    (c12_append_only::check, BOTH),
    (c13_draft_precision::check, HEAD),
    (c14_pareto_coverage::check, HEAD),
    (c15_pr_description::check, HEAD),
    (c16_nvidia_overview::check, HEAD),
    (c17_metrics_publication::check, HEAD),
    (c18_consistency::check, BOTH),
];

/// Renders a row's message in one language (the report's renderer, or a test's).
type RenderFn<'r> = &'r dyn Fn(&CheckResult, Lang) -> Result<String, String>;

/// Runs every check over the evidence and aggregates the verdict. Always returns one: a check
/// that panics, or whose message cannot be rendered, is a FAIL row naming the internal error.
pub fn verify(evidence: &Evidence) -> Verdict {
    // Bounds what the checks' YAML parses of PR-sourced files may cost (issue 14, item 4).
    let _yaml_budget = crate::yaml::Budget::PER_VERIFICATION.enter();
    let render = |result: &CheckResult, lang: Lang| text::message_text(result, lang).map_err(|e| e.to_string());
    decide(evidence, &CHECKS, &render)
}

fn decide(evidence: &Evidence, checks: &[(CheckFn, Reads); CHECK_COUNT], render: RenderFn) -> Verdict {
    let catalog = Catalog::embedded();
    let cx = Context::new(evidence);
    let results: Vec<CheckResult> = checks
        .iter()
        .enumerate()
        .map(|(index, (check, reads))| {
            let id = u8::try_from(index).unwrap_or(u8::MAX);
            let allowed = &catalog.check(id).allowed;
            let outcome = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&cx))) {
                Ok(outcome) => fail_closed_on_trees(&cx, *reads, allowed, outcome),
                Err(payload) => internal_error(reason("check_panicked").error(panic_text(payload.as_ref()))),
            };
            // A status the catalog does not allow for this check would slip past the report's
            // rules; fail closed and say so.
            let outcome = if allowed.contains(&outcome.status) || outcome.message.key == INTERNAL_ERROR {
                outcome
            } else {
                Outcome::fail("status_not_allowed").arg("status", outcome.status.word())
            };
            let result = CheckResult { id, outcome };
            match [Lang::En, Lang::Zh].into_iter().try_for_each(|lang| render(&result, lang).map(drop)) {
                Ok(()) => result,
                Err(error) => CheckResult { id, outcome: internal_error(reason("message_unrenderable").error(error)) },
            }
        })
        .collect();
    let word = if results.iter().any(|r| r.outcome.status == Status::Fail) {
        VerdictWord::Rejected
    } else {
        VerdictWord::Approved
    };
    Verdict { word, results, performance: crate::pr::performance::compare_in(&cx) }
}

/// The catalog key (checks/common.toml) of a row that reports a sweepgate defect.
pub const INTERNAL_ERROR: &str = "internal_error";

/// The catalog key (checks/common.toml) of a row whose check read a tree that was unavailable.
pub const TREE_UNAVAILABLE: &str = "unavailable";

fn internal_error(error: Reason) -> Outcome {
    Outcome::fail(INTERNAL_ERROR).arg("error", error)
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
}

/// A check that reads an unavailable tree cannot have decided: its row is FAIL (WARN for an
/// advisory check, whose catalog entry does not allow FAIL) naming the tree and the reason,
/// whatever it concluded from the empty tree.
fn fail_closed_on_trees(cx: &Context, reads: Reads, allowed: &[Status], outcome: Outcome) -> Outcome {
    let trees = [
        (reads.policy, "policy", cx.policy_available()),
        (reads.base, "base", cx.base_available()),
        (reads.head, "head", cx.head_available()),
    ];
    let missing =
        trees.into_iter().find_map(|(read, tree, fact)| if read { fact.err().map(|why| (tree, why)) } else { None });
    let Some((tree, why)) = missing else { return outcome };
    let status = if allowed.contains(&Status::Fail) { Status::Fail } else { Status::Warn };
    Outcome::new(status, TREE_UNAVAILABLE).arg("what", reason("what_tree").arg("tree", tree)).arg("reason", why)
}

/// The N/A of a rule that came into force after the PR's base (spec 30 §4.5 "Since"), or
/// `None` when it applies.
pub fn not_in_force(cx: &Context, topic: crate::domain::checklist_template::Topic) -> Option<Outcome> {
    let path = cx.template().as_ref().map(|(path, _)| path.clone()).ok()?;
    (cx.in_force(topic) == Some(false))
        .then(|| Outcome::na("not_in_force").arg("item", topic.short_name()).evidence(path))
}

#[cfg(test)]
mod tests {
    use super::text::message_text;
    use super::*;
    use crate::checks::tests_support::{evidence, with_change};
    use crate::evidence::Fact;
    // The verdict must render end to end: these tests drive the report over `decide`.
    use crate::report::verdict::{render_json, render_markdown, ReportOptions};

    fn real_render(result: &CheckResult, lang: Lang) -> Result<String, String> {
        message_text(result, lang).map_err(|e| e.to_string())
    }

    fn assert_internal_error(verdict: &Verdict, id: u8, needle: &str) {
        let row = verdict.result(id).unwrap_or_else(|| panic!("check {id} has a row"));
        assert_eq!(
            (row.outcome.status, row.outcome.message.key.as_str()),
            (Status::Fail, INTERNAL_ERROR),
            "check {id}"
        );
        let error = &row.outcome.message.args["error"]["error"];
        assert!(error.as_str().is_some_and(|e| e.contains(needle)), "check {id}: {row:?}");
        assert_eq!(verdict.word, VerdictWord::Rejected, "check {id}");
    }

    #[test]
    fn every_checks_message_rendering_can_fail_and_a_verdict_still_comes_out() {
        let e = evidence();
        for id in 0..CHECK_COUNT {
            let id = u8::try_from(id).unwrap_or(u8::MAX);
            let render = |r: &CheckResult, lang: Lang| {
                if r.id == id && r.outcome.message.key != INTERNAL_ERROR {
                    Err(format!("check {id}: message '{}' ({lang:?}): undefined value", r.outcome.message.key))
                } else {
                    real_render(r, lang)
                }
            };
            let verdict = decide(&e, &CHECKS, &render);
            assert_internal_error(&verdict, id, "undefined value");
            let report = render_markdown(&e, &verdict, &ReportOptions::default()).unwrap_or_else(|err| panic!("{err}"));
            assert!(
                report.contains(&format!("Check {id} (")) && report.contains("sweepgate could not decide"),
                "{report}"
            );
            assert!(
                render_json(&e, &verdict).is_ok_and(|j| j.contains("internal_error") || j.contains("could not decide"))
            );
        }
    }

    fn bypass_missing(_: &Context) -> Outcome {
        // Today's crash: Check 14's `unverifiable` message reads `bypass`, which this omits.
        Outcome::warn("unverifiable").arg("reason", "x")
    }

    fn panics(_: &Context) -> Outcome {
        panic!("index out of bounds")
    }

    #[test]
    fn a_real_template_error_and_a_panic_are_fail_rows() {
        let e = evidence();
        let mut checks = CHECKS;
        checks[14].0 = bypass_missing;
        checks[3].0 = panics;
        let verdict = decide(&e, &checks, &real_render);
        assert_internal_error(&verdict, 14, "undefined value");
        assert_internal_error(&verdict, 3, "index out of bounds");
        assert_eq!(
            verdict.result(3).map(|r| &r.outcome.message.args["error"][REASON_KEY]),
            Some(&"check_panicked".into())
        );
        let report = render_markdown(&e, &verdict, &ReportOptions::default()).unwrap_or_else(|err| panic!("{err}"));
        assert!(
            report.contains("the check panicked (`index out of bounds`)") && report.contains("检查执行时崩溃"),
            "{report}"
        );
    }

    #[test]
    fn an_unparsable_head_master_config_yields_a_verdict() {
        let mut e = with_change(evidence(), "configs/nvidia-master.yaml", "@@ -1,1 +1,1 @@\n-a: 1\n+a: [\n");
        e.head.insert("configs/nvidia-master.yaml", "a: [\n");
        let verdict = verify(&e);
        assert!(verdict.results.iter().all(|r| r.outcome.message.key != INTERNAL_ERROR), "{:?}", verdict.results);
        assert_eq!(verdict.result(14).map(|r| r.outcome.status), Some(Status::Warn));
        assert!(render_markdown(&e, &verdict, &ReportOptions::default()).is_ok());
    }

    #[test]
    fn checks_reading_an_unavailable_tree_fail_naming_it() {
        let trees = [
            ("base", CHECKS.map(|c| c.1.base)),
            ("head", CHECKS.map(|c| c.1.head)),
            ("policy", CHECKS.map(|c| c.1.policy)),
        ];
        for (tree, reads_it) in trees {
            let mut e = evidence();
            let reason = format!("{tree} tarball: HTTP 502");
            match tree {
                "base" => e.trees.base = Fact::Unavailable(reason.clone()),
                "head" => e.trees.head = Fact::Unavailable(reason.clone()),
                _ => e.trees.policy = Some(Fact::Unavailable(reason.clone())),
            }
            let verdict = verify(&e);
            assert_eq!(verdict.word, VerdictWord::Rejected, "{tree}");
            for (id, reads) in reads_it.iter().enumerate() {
                let row = &verdict.results[id];
                if !reads {
                    continue;
                }
                let advisory = !Catalog::embedded().check(row.id).allowed.contains(&Status::Fail);
                let expected = if advisory { Status::Warn } else { Status::Fail };
                assert_eq!(
                    (row.outcome.status, row.outcome.message.key.as_str()),
                    (expected, "unavailable"),
                    "{tree}: {id}"
                );
                assert_eq!(row.outcome.message.args["reason"]["error"], reason.as_str());
            }
        }
    }

    #[test]
    fn a_changed_file_missing_from_the_head_tree_is_unavailable() {
        let mut e = with_change(evidence(), "perf-changelog.yaml", "@@ -1,0 +1,1 @@\n+- config-keys: [x]\n");
        e.base.insert("perf-changelog.yaml", "");
        let verdict = verify(&e);
        let row = verdict.result(12).map(|r| (r.outcome.status, r.outcome.message.args["reason"].clone()));
        let lost = serde_json::json!({"$reason": "changed_file_lost", "path": "perf-changelog.yaml", "status": "modified", "tree": "head"});
        assert_eq!(row, Some((Status::Fail, lost)));
        e.head.insert("perf-changelog.yaml", "- config-keys: [x]\n");
        assert_ne!(verify(&e).result(12).map(|r| r.outcome.message.key.as_str()), Some("unavailable"));
    }

    #[test]
    fn a_modified_removed_or_renamed_away_file_missing_from_the_base_tree_is_unavailable() {
        for (status, filename, previous) in [
            ("modified", "configs/nvidia-master.yaml", None),
            ("removed", "benchmarks/gone.sh", None),
            ("renamed", "configs/new.yaml", Some("configs/old.yaml")),
        ] {
            let mut e = evidence();
            e.files.push(crate::evidence::ChangedFile {
                filename: filename.into(),
                previous_filename: previous.map(Into::into),
                status: status.into(),
                patch: None,
            });
            if status != "removed" {
                e.head.insert(filename, "a: 1\n");
            }
            let at_base = previous.unwrap_or(filename);
            // Check 12 reads the base tree (the diff side); Check 0 reads only policy.
            let verdict = verify(&e);
            let row = verdict.result(12).map(|r| (r.outcome.status, r.outcome.message.key.clone()));
            assert_eq!(row, Some((Status::Fail, "unavailable".to_owned())), "{status}");
            let reason = verdict.result(12).map(|r| r.outcome.message.args["reason"].clone());
            assert!(reason.is_some_and(|r| r["path"] == at_base && r["tree"] == "base"));
            assert_ne!(verdict.result(0).map(|r| r.outcome.message.key.as_str()), Some("unavailable"), "{status}");
            e.base.insert(at_base, "a: 1\n");
            assert_ne!(verify(&e).result(12).map(|r| r.outcome.message.key.as_str()), Some("unavailable"), "{status}");
        }
    }
}
