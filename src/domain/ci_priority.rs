//! `configs/ci-priority.yaml`, policy version 1: how matrix rows are scored for the CI queue
//! (spec 10 §9). Higher runs sooner. Read the way upstream's `utils/ci_priority.py` reads it,
//! without the AI classifier (criteria absent); ordering only, never a verdict.

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value as Json};

use crate::yaml::{self, YamlError};

/// The file, under the repository's configs folder.
pub const FILE: &str = "ci-priority.yaml";

/// Spec 10 §9's table, used only when the repository has no policy file.
const SPEC_DEFAULT: &str = "\
version: 1
base-score: 1.0
adjustments:
  event: {push: 2.0}
  multi-node: 1.25
  agentic: 1.0
  eval-only: 0.0
  precision: {fp4: 0.75}
  spec-decoding: {mtp: 0.75, eagle: 0.75, eagle3: 0.75}
  framework-prefix: {sglang: 0.5, vllm: 0.5, dynamo-sglang: 0.5, dynamo-vllm: 0.5}
  model-prefix: {kimik3: 1.5, glm5: 0.75, glm5.1: 0.75, kimik2.5: 0.75, dsv4: 0.75, minimaxm3: 0.75, qwen3.5: 0.75, dsr1: 0.75}
labels:
  skip-queue: {name: skip_queue}
  checklist-complete: {names: [ci-checklist-complete], adjustment: 0.25}
  patchwork: {names: [ci-patchwork, engine-patch], score: 0.0, waived-by: [ci-patchwork-waived]}
";

/// A finite number (`.inf`/`.nan` would make every comparison meaningless).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Score(f64);

impl<'de> Deserialize<'de> for Score {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Score, D::Error> {
        let x = f64::deserialize(d)?;
        if x.is_finite() {
            Ok(Score(x))
        } else {
            Err(serde::de::Error::custom(format!("must be a finite number, found {x}")))
        }
    }
}

/// The validated policy.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CiPriority {
    version: u32,
    base_score: Score,
    #[serde(default)]
    adjustments: Adjustments,
    labels: Labels,
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Adjustments {
    #[serde(default)]
    event: IndexMap<String, Score>,
    #[serde(default)]
    multi_node: Score,
    #[serde(default)]
    agentic: Score,
    #[serde(default)]
    eval_only: Score,
    #[serde(default)]
    precision: IndexMap<String, Score>,
    #[serde(default)]
    spec_decoding: IndexMap<String, Score>,
    /// First match in file order wins (equal, or starts with `<prefix>-`).
    #[serde(default)]
    framework_prefix: IndexMap<String, Score>,
    /// Exact match.
    #[serde(default)]
    model_prefix: IndexMap<String, Score>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Labels {
    /// Read by upstream's external queue only: validated (upstream needs it), not scored.
    #[serde(rename = "skip-queue")]
    _skip_queue: SkipQueue,
    #[serde(default)]
    checklist_complete: Option<LabelBonus>,
    patchwork: Patchwork,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct SkipQueue {
    #[serde(rename = "name")]
    _name: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct LabelBonus {
    #[serde(default)]
    names: Vec<String>,
    #[serde(default)]
    adjustment: Score,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Patchwork {
    names: Vec<String>,
    score: Score,
    #[serde(default)]
    waived_by: Vec<String>,
}

/// Which policy scored a sweep's points: a named fact in the check run, never silent. The
/// policy is read at the tip of the PR's target branch (`at`, ARCHITECTURE decision 6), never
/// from the PR head: `proposed` says the head changes the file, which orders nothing until it
/// is merged.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PolicySource {
    /// The repository's file at the default branch's tip.
    File {
        path: String,
        #[serde(default)]
        at: String,
        #[serde(default)]
        proposed: bool,
    },
    /// The file is absent at the default branch's tip: spec 10 §9's table was used.
    SpecDefault {
        path: String,
        #[serde(default)]
        at: String,
        #[serde(default)]
        proposed: bool,
    },
}

impl CiPriority {
    /// Parses and validates the policy text; errors name `file:line:col`.
    pub fn parse(text: &str, file: &str) -> Result<CiPriority, YamlError> {
        let root = yaml::parse(text, file)?;
        let policy: CiPriority = yaml::from_node(&root).map_err(|e| e.in_file(file))?;
        if policy.version != 1 {
            let pos = root.get("version").map_or(root.pos, |n| n.pos);
            let message =
                format!("unsupported CI priority policy version {} (sweepgate reads version 1)", policy.version);
            return Err(YamlError::at(pos, message).in_file(file));
        }
        policy.check_sums(&root).map_err(|e| e.in_file(file))?;
        Ok(policy)
    }

    /// Every score the policy can give is finite: each number is, but a row combines the base
    /// score with one entry of each adjustment (and the checklist bonus), and `1e308 + 1e308`
    /// is `inf` (with `-inf`, `NaN`), which orders nothing. Upstream's `Decimal` quantize
    /// raises on an infinite sum too. The entry whose addition can overflow is named.
    fn check_sums(&self, root: &yaml::Node) -> Result<(), YamlError> {
        let a = &self.adjustments;
        let checklist = self.labels.checklist_complete.as_ref();
        let terms = [
            Some((self.base_score.0, vec!["base-score"])),
            largest(&a.event, "event"),
            Some((a.multi_node.0, vec!["adjustments", "multi-node"])),
            Some((a.agentic.0, vec!["adjustments", "agentic"])),
            Some((a.eval_only.0, vec!["adjustments", "eval-only"])),
            largest(&a.precision, "precision"),
            largest(&a.spec_decoding, "spec-decoding"),
            largest(&a.framework_prefix, "framework-prefix"),
            largest(&a.model_prefix, "model-prefix"),
            checklist.map(|c| (c.adjustment.0, vec!["labels", "checklist-complete", "adjustment"])),
        ];
        let mut sum = 0.0_f64;
        let combined = terms.into_iter().flatten().map(|term| (term, true));
        // A patchwork label's score replaces the sum: it only has to stay finite itself.
        let patchwork = ((self.labels.patchwork.score.0, vec!["labels", "patchwork", "score"]), false);
        for ((value, path), adds) in combined.chain([patchwork]) {
            sum = if adds { sum + value.abs() } else { value.abs() };
            // The half-up rounding scales by 1000: the sum must stay finite after that too.
            if !(sum * 1000.0).is_finite() {
                let message = format!(
                    "{} = {value:e} can make a priority infinite: base-score plus the adjustments one row \
                     can combine must stay a finite number (|sum| ≤ {:e})",
                    path.join("."),
                    f64::MAX / 1000.0
                );
                return Err(YamlError::at(path_in(root, &path), message));
            }
        }
        Ok(())
    }

    /// Spec 10 §9's policy (version 1).
    pub fn spec_default() -> CiPriority {
        // A constant of this module, covered by `the_spec_default_is_the_spec_table`.
        CiPriority::parse(SPEC_DEFAULT, "spec 10 §9").unwrap_or_else(|e| unreachable!("built-in policy: {e}"))
    }

    /// The score of one matrix row for a GitHub event (`pull_request` for PR sweeps) and the
    /// PR's labels, rounded half-up to 0.001 like upstream's `Decimal` quantize.
    pub fn score(&self, row: &Map<String, Json>, event: &str, labels: &[String]) -> f64 {
        let has = |names: &[String]| labels.iter().any(|l| names.contains(l));
        let patchwork = &self.labels.patchwork;
        if has(&patchwork.names) && !has(&patchwork.waived_by) {
            return round(patchwork.score.0);
        }
        let text = |k: &str| row.get(k).and_then(Json::as_str).unwrap_or_default();
        let a = &self.adjustments;
        let of = |table: &IndexMap<String, Score>, key: &str| table.get(key).map_or(0.0, |s| s.0);
        let mut score = self.base_score.0 + of(&a.event, event);
        if row.get("prefill").is_some_and(|p| !p.is_null()) {
            score += a.multi_node.0;
        }
        if text("scenario-type") == "agentic-coding" {
            score += a.agentic.0;
        }
        if row.get("eval-only") == Some(&Json::Bool(true)) {
            score += a.eval_only.0;
        }
        score += of(&a.precision, text("precision")) + of(&a.spec_decoding, text("spec-decoding"));
        let framework = text("framework");
        let prefixed = |p: &str| framework == p || framework.strip_prefix(p).is_some_and(|rest| rest.starts_with('-'));
        score += a.framework_prefix.iter().find(|(p, _)| prefixed(p)).map_or(0.0, |(_, s)| s.0);
        score += of(&a.model_prefix, text("model-prefix"));
        if let Some(checklist) = &self.labels.checklist_complete {
            if has(&checklist.names) {
                score += checklist.adjustment.0;
            }
        }
        round(score)
    }
}

/// The entry of an adjustment table with the largest magnitude, with its path in the file.
fn largest<'a>(table: &'a IndexMap<String, Score>, name: &'static str) -> Option<(f64, Vec<&'a str>)> {
    let entry = table.iter().max_by(|x, y| x.1 .0.abs().total_cmp(&y.1 .0.abs()));
    entry.map(|(key, score)| (score.0, vec!["adjustments", name, key.as_str()]))
}

/// Where `path` (map keys from the root) is in the file, or the deepest map on the way.
fn path_in(root: &yaml::Node, path: &[&str]) -> yaml::Pos {
    let mut node = root;
    for key in path {
        match node.get(key) {
            Some(next) => node = next,
            None => break,
        }
    }
    node.pos
}

/// Half-up to 0.001; the small bias absorbs binary representation error (2.0005 → 2.001).
fn round(score: f64) -> f64 {
    ((score * 1000.0) + 1e-9).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(v: Json) -> Map<String, Json> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn labels(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_spec_default_is_the_spec_table() {
        let p = CiPriority::spec_default();
        let plain = row(json!({"framework": "trt", "precision": "fp8", "model-prefix": "gptoss"}));
        assert_eq!(p.score(&plain, "pull_request", &[]), 1.0);
        assert_eq!(p.score(&plain, "push", &[]), 3.0);
        let rich = row(json!({"framework": "dynamo-sglang", "precision": "fp4", "model-prefix": "dsr1",
            "spec-decoding": "mtp", "prefill": {}}));
        assert_eq!(p.score(&rich, "pull_request", &[]), 5.0);
        assert_eq!(p.score(&rich, "pull_request", &labels(&["ci-checklist-complete"])), 5.25);
        assert_eq!(p.score(&rich, "pull_request", &labels(&["engine-patch"])), 0.0);
        assert_eq!(p.score(&rich, "pull_request", &labels(&["ci-patchwork", "ci-patchwork-waived"])), 5.0);
        let sglang_like = row(json!({"framework": "sglang-disagg", "model-prefix": "kimik3"}));
        assert_eq!(p.score(&sglang_like, "pull_request", &[]), 3.0);
        let agentic = row(json!({"framework": "trt", "scenario-type": "agentic-coding", "prefill": null}));
        assert_eq!(p.score(&agentic, "pull_request", &[]), 2.0, "agentic +1, a null prefill is not multi-node");
        let not_prefixed = row(json!({"framework": "sglangx"}));
        assert_eq!(p.score(&not_prefixed, "pull_request", &[]), 1.0);
    }

    #[test]
    fn a_repository_policy_changes_the_scores() {
        let text = "version: 1\nbase-score: 0.5\nadjustments:\n  precision: {fp8: 2}\n  framework-prefix: {dynamo: 0.125, dynamo-sglang: 9}\n\
                    labels:\n  skip-queue: {name: skip_queue}\n  patchwork: {names: [patch], score: 0.25}\n";
        let p = CiPriority::parse(text, "configs/ci-priority.yaml").unwrap_or_else(|e| panic!("{e}"));
        let r = row(json!({"framework": "dynamo-sglang", "precision": "fp8", "model-prefix": "dsr1"}));
        assert_eq!(p.score(&r, "pull_request", &[]), 2.625, "first framework prefix in file order wins");
        assert_eq!(p.score(&r, "pull_request", &labels(&["patch"])), 0.25);
        assert_eq!(p.score(&r, "pull_request", &labels(&["ci-checklist-complete"])), 2.625, "no checklist bonus");
        assert_eq!(round(2.0005), 2.001);
    }

    #[test]
    fn malformed_policies_are_located() {
        let file = "configs/ci-priority.yaml";
        let err = |text: &str| CiPriority::parse(text, file).map(|_| ()).unwrap_err().to_string();
        let base = "labels:\n  skip-queue: {name: q}\n  patchwork: {names: [p], score: 0}\n";
        let e = err(&format!("version: 2\nbase-score: 1\n{base}"));
        assert!(e.starts_with("configs/ci-priority.yaml:1:10: unsupported CI priority policy version 2"), "{e}");
        let e = err(&format!("version: 1\nbase-score: '1.0'\n{base}"));
        assert!(e.starts_with("configs/ci-priority.yaml:2:13: base-score: "), "{e}");
        let e = err(&format!("version: 1\nbase-score: 1\nadjustments:\n  precison: {{fp4: 1}}\n{base}"));
        assert!(e.starts_with("configs/ci-priority.yaml:4:") && e.contains("precison"), "{e}");
        let e = err(&format!("version: 1\nbase-score: .inf\n{base}"));
        assert!(e.starts_with("configs/ci-priority.yaml:2:13: base-score: must be a finite number"), "{e}");
        let e = err(&format!("version: 1\nbase-score: 1.0e+305\nadjustments:\n  event: {{push: 1.0e+305}}\n{base}"));
        assert!(
            e.starts_with("configs/ci-priority.yaml:4:17: adjustments.event.push = 1e305 can make a priority infinite"),
            "{e}"
        );
        let e = err(&format!(
            "version: 1\nbase-score: 0\nadjustments:\n  precision: {{fp4: -1.0e+305, fp8: 1}}\n  spec-decoding:\n    mtp: -1.0e+305\n{base}"
        ));
        assert!(e.starts_with("configs/ci-priority.yaml:6:10: adjustments.spec-decoding.mtp = -1e305 can make"), "{e}");
        let e = err(&format!("version: 1\nbase-score: 1.0e+306\n{base}"));
        assert!(
            e.starts_with("configs/ci-priority.yaml:2:13: base-score = 1e306 can make"),
            "{e}: rounding scales by 1000"
        );
        let e = err(
            "version: 1\nbase-score: 1\nlabels:\n  skip-queue: {name: q}\n  patchwork: {names: [p], score: -1.0e+307}\n",
        );
        assert!(e.starts_with("configs/ci-priority.yaml:5:") && e.contains("labels.patchwork.score"), "{e}");
        let huge_but_finite =
            format!("version: 1\nbase-score: 1.0e+300\nadjustments:\n  event: {{push: -1.0e+300}}\n{base}");
        assert!(CiPriority::parse(&huge_but_finite, file).is_ok(), "sums that stay finite are accepted");
        let e = err("version: 1\nbase-score: 1\nlabels:\n  skip-queue: {name: q}\n");
        assert!(e.contains("patchwork"), "{e}");
        let e = err("version: 1\nbase-score: [1\n");
        assert!(e.starts_with("configs/ci-priority.yaml:"), "{e}");
    }
}
