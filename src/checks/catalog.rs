//! The check catalog: one data file per check in `checks/` (bilingual name, rule, remediation,
//! allowed statuses and message templates), embedded in the binary and validated at load.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use serde::Deserialize;

use super::{Outcome, Status, TREE_UNAVAILABLE};

/// English and Chinese text side by side.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Bilingual {
    pub en: String,
    pub zh: String,
}

impl Bilingual {
    pub fn get(&self, lang: Lang) -> &str {
        match lang {
            Lang::En => &self.en,
            Lang::Zh => &self.zh,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    En,
    Zh,
}

/// One check's catalog entry (`checks/NN-<slug>.toml`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    pub id: u8,
    pub slug: String,
    pub allowed: Vec<Status>,
    pub name: Bilingual,
    pub rule: Bilingual,
    pub remediation: Bilingual,
    #[serde(default)]
    pub messages: BTreeMap<String, Bilingual>,
    /// The verdict header's plain sentence for a blocking row, by message key (rendered with the
    /// same arguments); a key without one falls back to `headlines.default` of common.toml.
    #[serde(default)]
    pub headlines: BTreeMap<String, Bilingual>,
    /// What the check is made of, one rule at a time (rule coverage as data).
    #[serde(default)]
    pub subrules: Vec<SubRule>,
    /// What a PASS says it checked (issue 33 item 3), by PASS message key: the arguments that
    /// count it (a number, a list's length, a non-empty text as one). A PASS counts more than
    /// nothing ([`CheckSpec::checked`]).
    #[serde(default)]
    pub subjects: BTreeMap<String, Vec<String>>,
}

/// How a sub-rule is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum How {
    /// Decided by sweepgate; `fixture` names a bundle under `fixtures/bundles/` that makes the
    /// check FAIL (WARN for a check that may not FAIL).
    Enforced,
    /// Left to a human; `reason` says why a machine does not decide it (or "not yet enforced").
    Human,
}

/// One sub-rule of a check (`[[subrules]]` of `checks/NN-*.toml`).
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SubRule {
    /// `<check>.<letter or number>`, unique in the catalog.
    pub id: String,
    pub text: Bilingual,
    /// Where the rule comes from: a spec section, the upstream prompt, a published verdict.
    pub source: String,
    pub how: How,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixture: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Bilingual>,
    /// An enforced sub-rule's bundle that makes the check PASS (the rule is met there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_fixture: Option<String>,
    /// A sub-rule of a blocking check whose violation only calls for human review: its fixture
    /// gives WARN, not FAIL (16.a: upstream's rule text is unpublished; decision FC1).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warns: bool,
    /// What in a row's outcome shows this enforced sub-rule decided it (see [`outcome_kinds`]):
    /// a message key, or `field:value` of a finding (`kind:below`, `sub:g`), or the name of a
    /// non-empty list argument (`unchecked`), or `name:true|false` of a flag argument.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<String>,
}

/// The fields of a finding, at any depth of a message's arguments, whose string value names
/// what was found (`kind:below`, `problem:no_eval`, `sub:g`, `role:frontend`, `origin:inherited`).
const KIND_FIELDS: [&str; 5] = ["kind", "problem", "sub", "role", "origin"];

/// What an outcome is made of, in the terms of the sub-rules' `kinds`: its message key; for
/// every `kind`, `problem`, `sub`, `role` or `origin` string anywhere in its arguments,
/// `field:value`; for each top-level argument that is a non-empty list, its name; for each
/// top-level flag, `name:true|false`.
pub fn outcome_kinds(outcome: &Outcome) -> BTreeSet<String> {
    fn walk(value: &serde_json::Value, out: &mut BTreeSet<String>) {
        match value {
            serde_json::Value::Object(fields) => {
                for (name, value) in fields {
                    match value {
                        serde_json::Value::String(text) if KIND_FIELDS.contains(&name.as_str()) => {
                            out.insert(format!("{name}:{text}"));
                        }
                        _ => walk(value, out),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|item| walk(item, out)),
            _ => {}
        }
    }
    let mut out = BTreeSet::from([outcome.message.key.clone()]);
    for (name, value) in &outcome.message.args {
        match value {
            serde_json::Value::Array(items) if !items.is_empty() => {
                out.insert(name.clone());
            }
            serde_json::Value::Bool(flag) => {
                out.insert(format!("{name}:{flag}"));
            }
            serde_json::Value::String(text) if KIND_FIELDS.contains(&name.as_str()) => {
                out.insert(format!("{name}:{text}"));
            }
            _ => {}
        }
        walk(value, &mut out);
    }
    out
}

/// How many things one argument of a message counts: a number itself, a list its length, a
/// non-empty text or an object one, anything else none.
fn count_of(value: &serde_json::Value) -> u64 {
    match value {
        serde_json::Value::Number(n) => n.as_u64().unwrap_or(0),
        serde_json::Value::Array(items) => items.len() as u64,
        serde_json::Value::String(text) => u64::from(!text.trim().is_empty()),
        serde_json::Value::Object(fields) => u64::from(!fields.is_empty()),
        serde_json::Value::Bool(_) | serde_json::Value::Null => 0,
    }
}

impl CheckSpec {
    /// What a PASS outcome says it checked: the sum of its subject arguments' counts. `None`
    /// for a PASS whose message declares no subject (a catalog gap the bundle test reports) and
    /// for other statuses.
    pub fn checked(&self, outcome: &Outcome) -> Option<u64> {
        if outcome.status != Status::Pass {
            return None;
        }
        let args = self.subjects.get(&outcome.message.key)?;
        Some(args.iter().map(|a| outcome.message.args.get(a).map_or(0, count_of)).sum())
    }

    /// The status an enforced sub-rule's fixture must give this check: FAIL, or WARN for an
    /// advisory check that may not FAIL.
    pub fn violation_status(&self) -> Status {
        if self.allowed.contains(&Status::Fail) {
            Status::Fail
        } else {
            Status::Warn
        }
    }

    /// The enforced sub-rules whose violation, or whose missing evidence, made this outcome FAIL
    /// or WARN: those with a kind the outcome has; all of them when a tree the check reads was
    /// unavailable (none could be decided; decision FC7). Empty for PASS and N/A.
    pub fn rules_of(&self, outcome: &Outcome) -> Vec<&str> {
        if !matches!(outcome.status, Status::Fail | Status::Warn) {
            return Vec::new();
        }
        let undecided = outcome.message.key == TREE_UNAVAILABLE;
        let kinds = outcome_kinds(outcome);
        self.subrules
            .iter()
            .filter(|rule| rule.how == How::Enforced && (undecided || rule.kinds.iter().any(|k| kinds.contains(k))))
            .map(|rule| rule.id.as_str())
            .collect()
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CommonMessages {
    messages: BTreeMap<String, Bilingual>,
    #[serde(default)]
    headlines: BTreeMap<String, Bilingual>,
}

/// The whole catalog: checks 0..=18 in order, plus the shared messages and the reasons.
#[derive(Debug)]
pub struct Catalog {
    checks: Vec<CheckSpec>,
    common: BTreeMap<String, Bilingual>,
    common_headlines: BTreeMap<String, Bilingual>,
    reasons: BTreeMap<String, Bilingual>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CatalogError {
    #[error("checks/{file}: {message}")]
    Invalid { file: String, message: String },
}

macro_rules! catalog_files {
    ($($file:literal),* $(,)?) => {
        [$(($file, include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/checks/", $file)))),*]
    };
}

const CHECK_FILES: [(&str, &str); 19] = catalog_files!(
    "00-codeowner.toml",
    "01-in-pr-sweep.toml",
    "02-evals-pass.toml",
    "03-upstream-recipe.toml",
    "04-reuse-command.toml",
    "05-checklist-template.toml",
    "06-upstream-image.toml",
    "07-deprecated-models.toml",
    "08-architecture-hacks.toml",
    "09-chat-template.toml",
    "10-engine-patches.toml",
    "11-golden-al.toml",
    "12-append-only.toml",
    "13-draft-precision.toml",
    "14-pareto-coverage.toml",
    "15-pr-description.toml",
    "16-nvidia-overview.toml",
    "17-metrics-publication.toml",
    "18-consistency.toml",
);

const COMMON_FILE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/checks/common.toml"));

/// The one catalog of reasons (decision ZH1): a finding, a lower layer's error or a part of a
/// sentence that a check passes into its message as a value, by kind, in both languages.
const REASONS_FILE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/checks/reasons.toml"));

/// Number of numbered checks (0..=18).
pub const CHECK_COUNT: usize = 19;

/// Sub-rule ids are `<check id>.<suffix>` and unique; an enforced one names its fixture, a
/// human one its reason, never both.
fn validate_subrules(spec: &CheckSpec) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    let prefix = format!("{}.", spec.id);
    for rule in &spec.subrules {
        if !rule.id.starts_with(&prefix) || rule.id.len() == prefix.len() {
            return Err(format!("sub-rule '{}' must be named {prefix}<suffix>", rule.id));
        }
        if !seen.insert(rule.id.as_str()) {
            return Err(format!("sub-rule '{}' is listed twice", rule.id));
        }
        if rule.text.en.is_empty() || rule.text.zh.is_empty() || rule.source.is_empty() {
            return Err(format!("sub-rule '{}' needs English and Chinese text and a source", rule.id));
        }
        match (rule.how, &rule.fixture, &rule.reason) {
            (How::Enforced, Some(_), None) | (How::Human, None, Some(_)) => {}
            (How::Enforced, _, _) => {
                return Err(format!("enforced sub-rule '{}' names a fixture and no reason", rule.id))
            }
            (How::Human, _, _) => return Err(format!("human sub-rule '{}' names a reason and no fixture", rule.id)),
        }
        if rule.how == How::Human && rule.pass_fixture.is_some() {
            return Err(format!("human sub-rule '{}' names a pass fixture", rule.id));
        }
        match (rule.how, rule.kinds.is_empty()) {
            (How::Enforced, true) => {
                return Err(format!("enforced sub-rule '{}' names no kinds (what in a row shows it decided)", rule.id))
            }
            (How::Human, false) => return Err(format!("human sub-rule '{}' names kinds", rule.id)),
            _ => {}
        }
    }
    Ok(())
}

impl Catalog {
    /// The embedded catalog (parsed once).
    pub fn embedded() -> &'static Catalog {
        static CATALOG: OnceLock<Catalog> = OnceLock::new();
        // The embedded files are part of the binary and validated by tests; a broken catalog
        // is a build defect, not user input.
        CATALOG.get_or_init(|| {
            Catalog::parse(&CHECK_FILES, COMMON_FILE, REASONS_FILE).expect("embedded check catalog is valid")
        })
    }

    fn parse(files: &[(&str, &str)], common: &str, reasons: &str) -> Result<Catalog, CatalogError> {
        let invalid = |file: &str, message: String| CatalogError::Invalid { file: file.to_owned(), message };
        let mut checks = Vec::with_capacity(files.len());
        for (index, (file, text)) in files.iter().enumerate() {
            let spec: CheckSpec = toml::from_str(text).map_err(|e| invalid(file, e.to_string()))?;
            if usize::from(spec.id) != index {
                return Err(invalid(file, format!("id {} where {} was expected", spec.id, index)));
            }
            if !file.starts_with(&format!("{:02}-{}.", spec.id, spec.slug)) {
                return Err(invalid(file, format!("file name does not match id {} and slug {}", spec.id, spec.slug)));
            }
            if spec.allowed.is_empty() {
                return Err(invalid(file, "no allowed statuses".into()));
            }
            validate_subrules(&spec).map_err(|message| invalid(file, message))?;
            if let Some(key) = spec.headlines.keys().find(|k| !spec.messages.contains_key(*k)) {
                return Err(invalid(file, format!("headline '{key}' has no message of that name")));
            }
            checks.push(spec);
        }
        let common: CommonMessages = toml::from_str(common).map_err(|e| invalid("common.toml", e.to_string()))?;
        for spec in &checks {
            if let Some(key) = spec.messages.keys().find(|k| common.messages.contains_key(*k)) {
                return Err(invalid(&spec.slug, format!("message '{key}' shadows a message of common.toml")));
            }
            let known = |k: &String| spec.messages.contains_key(k) || common.messages.contains_key(k);
            if let Some((key, _)) = spec.subjects.iter().find(|(k, args)| !known(k) || args.is_empty()) {
                return Err(invalid(&spec.slug, format!("subject '{key}' names no message or no argument")));
            }
        }
        if !common.headlines.contains_key("default") {
            return Err(invalid("common.toml", "no headlines.default (the header sentence of a blocking row)".into()));
        }
        let reasons: BTreeMap<String, Bilingual> =
            toml::from_str(reasons).map_err(|e| invalid("reasons.toml", e.to_string()))?;
        if let Some(kind) = reasons.iter().find(|(_, text)| text.en.trim().is_empty() || text.zh.trim().is_empty()) {
            return Err(invalid("reasons.toml", format!("reason '{}' needs English and Chinese text", kind.0)));
        }
        Ok(Catalog { checks, common: common.messages, common_headlines: common.headlines, reasons })
    }

    pub fn check(&self, id: u8) -> &CheckSpec {
        &self.checks[usize::from(id)]
    }

    pub fn checks(&self) -> &[CheckSpec] {
        &self.checks
    }

    /// The message template for `key` of check `id` (its own messages, then the shared ones).
    pub fn message(&self, id: u8, key: &str) -> Option<&Bilingual> {
        self.checks.get(usize::from(id)).and_then(|c| c.messages.get(key)).or_else(|| self.common.get(key))
    }

    /// The text of reason `kind` (`checks/reasons.toml`).
    pub fn reason(&self, kind: &str) -> Option<&Bilingual> {
        self.reasons.get(kind)
    }

    /// Every reason kind of the catalog.
    pub fn reason_kinds(&self) -> impl Iterator<Item = &str> {
        self.reasons.keys().map(String::as_str)
    }

    /// The header sentence for a blocking row with message `key`: the check's own, then the
    /// shared one of that key, then `headlines.default`.
    pub fn headline(&self, id: u8, key: &str) -> &Bilingual {
        self.checks
            .get(usize::from(id))
            .and_then(|c| c.headlines.get(key))
            .or_else(|| self.common_headlines.get(key))
            .unwrap_or_else(|| &self.common_headlines["default"])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMON_MIN: &str = "[messages]\n[headlines.default]\nen = \"a\"\nzh = \"b\"\n";
    const REASONS_MIN: &str = "[r]\nen = \"a\"\nzh = \"b\"\n";

    /// A value inside hand-written backticks keeps its Markdown escapes (`\(` shows as typed);
    /// values are put in code spans by the `code` filter, which fences the raw text.
    #[test]
    fn no_message_writes_a_value_inside_hand_written_backticks() {
        for (file, text) in
            CHECK_FILES.iter().chain(&[("checks/common.toml", COMMON_FILE), ("checks/reasons.toml", REASONS_FILE)])
        {
            let hand_written = text.lines().filter(|l| !l.trim_start().starts_with('#')).find(|l| l.contains("`{{"));
            assert_eq!(hand_written, None, "{file}: use `{{{{ value | code }}}}`");
        }
    }

    #[test]
    fn embedded_catalog_has_all_checks_in_order() {
        let catalog = Catalog::embedded();
        assert_eq!(catalog.checks().len(), CHECK_COUNT);
        for (i, c) in catalog.checks().iter().enumerate() {
            assert_eq!(usize::from(c.id), i);
            assert!(!c.name.en.is_empty() && !c.name.zh.is_empty(), "check {i} name");
            assert!(!c.rule.zh.is_empty() && !c.remediation.zh.is_empty(), "check {i} Chinese text");
        }
        assert_eq!(catalog.check(18).name.en, "Recipe/image/sweep consistency");
        assert!(catalog.message(3, "unreadable").is_some(), "common messages are shared");
    }

    #[test]
    fn row_names_are_upstreams_verbatim() {
        let names: Vec<&str> = Catalog::embedded().checks().iter().map(|c| c.name.en.as_str()).collect();
        assert_eq!(
            names,
            [
                "CODEOWNER",
                "In-PR sweep + evals",
                "Evals pass",
                "Upstream recipe",
                "Reuse command",
                "Checklist template",
                "Upstream image",
                "Deprecated models",
                "Architecture hacks",
                "Chat template",
                "No engine patches",
                "Golden AL",
                "Append-only",
                "Draft precision",
                "Pareto coverage",
                "PR description",
                "NVIDIA overview",
                "Metrics publication",
                "Recipe/image/sweep consistency",
            ]
        );
    }

    #[test]
    fn invalid_catalogs_are_refused() {
        let good = "id = 0\nslug = \"x\"\nallowed = [\"PASS\"]\nname = { en = \"a\", zh = \"b\" }\nrule = { en = \"a\", zh = \"b\" }\nremediation = { en = \"a\", zh = \"b\" }\n";
        assert!(Catalog::parse(&[("00-x.toml", good)], COMMON_MIN, REASONS_MIN).is_ok());
        let err = Catalog::parse(&[("01-x.toml", good)], COMMON_MIN, REASONS_MIN).unwrap_err();
        assert!(err.to_string().contains("file name does not match"), "{err}");
        let unknown = format!("{good}colour = \"red\"\n");
        let err = Catalog::parse(&[("00-x.toml", &unknown)], COMMON_MIN, REASONS_MIN).unwrap_err();
        assert!(err.to_string().contains("unknown field"), "{err}");
        let bad_status = good.replace("\"PASS\"", "\"MAYBE\"");
        assert!(Catalog::parse(&[("00-x.toml", &bad_status)], COMMON_MIN, REASONS_MIN).is_err());
        let rule =
            "[[subrules]]\nid = \"0.a\"\ntext = { en = \"a\", zh = \"b\" }\nsource = \"spec\"\nhow = \"enforced\"\nkinds = [\"k\"]\n";
        for (extra, error) in [
            ("fixture = \"x\"\n", None),
            ("", Some("names a fixture")),
            ("fixture = \"x\"\nreason = { en = \"a\", zh = \"b\" }\n", Some("names a fixture")),
        ] {
            let text = format!("{good}{rule}{extra}");
            let result = Catalog::parse(&[("00-x.toml", &text)], COMMON_MIN, REASONS_MIN);
            match error {
                None => assert!(result.is_ok(), "{result:?}"),
                Some(e) => assert!(result.unwrap_err().to_string().contains(e)),
            }
        }
        let human = rule.replace("enforced", "human");
        let text = format!("{good}{human}fixture = \"x\"\n");
        assert!(Catalog::parse(&[("00-x.toml", &text)], COMMON_MIN, REASONS_MIN)
            .unwrap_err()
            .to_string()
            .contains("names a reason"));
        let unnamed = format!("{good}{}fixture = \"x\"\n", rule.replace("kinds = [\"k\"]\n", ""));
        assert!(Catalog::parse(&[("00-x.toml", &unnamed)], COMMON_MIN, REASONS_MIN)
            .unwrap_err()
            .to_string()
            .contains("names no kinds"));
        let human_kinds = format!("{good}{human}reason = {{ en = \"a\", zh = \"b\" }}\n");
        assert!(Catalog::parse(&[("00-x.toml", &human_kinds)], COMMON_MIN, REASONS_MIN)
            .unwrap_err()
            .to_string()
            .contains("human sub-rule '0.a' names kinds"));
        let orphan = format!("{good}[headlines.nope]\nen = \"a\"\nzh = \"b\"\n");
        let err = Catalog::parse(&[("00-x.toml", &orphan)], COMMON_MIN, REASONS_MIN).unwrap_err();
        assert!(err.to_string().contains("headline 'nope' has no message"), "{err}");
        assert!(Catalog::parse(&[("00-x.toml", good)], "[messages]\n", REASONS_MIN)
            .unwrap_err()
            .to_string()
            .contains("headlines.default"));
        let twice = format!("{good}{rule}fixture = \"x\"\n{rule}fixture = \"x\"\n");
        assert!(Catalog::parse(&[("00-x.toml", &twice)], COMMON_MIN, REASONS_MIN)
            .unwrap_err()
            .to_string()
            .contains("twice"));
    }

    #[test]
    fn a_row_names_the_enforced_subrules_whose_kinds_its_outcome_has() {
        let outcome = Outcome::fail("inconsistent")
            .arg("fails", serde_json::json!([{"sub": "g", "text": "removed point"}]))
            .arg("missing", serde_json::json!([{"sub": "e", "text": "registry"}]))
            .arg("noted", serde_json::json!([]));
        let kinds = outcome_kinds(&outcome);
        assert_eq!(
            kinds.iter().map(String::as_str).collect::<Vec<_>>(),
            ["fails", "inconsistent", "missing", "sub:e", "sub:g"],
            "an empty list names nothing"
        );
        let spec = Catalog::embedded().check(18);
        assert_eq!(spec.rules_of(&outcome), ["18.e", "18.g"]);
        let flags =
            Outcome::fail("incomplete").arg("signed", false).arg("problem", "no_waiver").arg("unchecked", vec!["T10"]);
        let kinds = outcome_kinds(&flags);
        assert!(["signed:false", "problem:no_waiver", "unchecked"].iter().all(|k| kinds.contains(*k)), "{kinds:?}");
        assert_eq!(Catalog::embedded().check(5).rules_of(&flags), ["5.c", "5.d"]);
        // PASS and N/A rows name no sub-rule, whatever their arguments hold.
        let mut passed = outcome.clone();
        for status in [Status::Pass, Status::NotApplicable] {
            passed.status = status;
            assert!(spec.rules_of(&passed).is_empty(), "{status:?}");
        }
        passed.status = Status::Warn;
        assert_eq!(spec.rules_of(&passed), ["18.e", "18.g"]);
        // A tree the check reads was unavailable: none of its enforced sub-rules was decided.
        let undecided = Outcome::fail(TREE_UNAVAILABLE).arg("reason", "tarball: HTTP 502");
        let enforced: Vec<&str> =
            spec.subrules.iter().filter(|r| r.how == How::Enforced).map(|r| r.id.as_str()).collect();
        assert!(enforced.len() > 1);
        assert_eq!(spec.rules_of(&undecided), enforced);
    }

    /// Every FAIL or WARN row of every fixture bundle names at least one enforced sub-rule, but
    /// Check 13's `unverified`: a draft whose provenance is missing without a proven violation
    /// is 13.g, a human sub-rule (spec 30 Check 13), so no enforced rule decided it.
    #[test]
    fn every_fail_or_warn_row_of_every_bundle_names_a_subrule() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bundles");
        let catalog = Catalog::embedded();
        let mut unnamed = Vec::new();
        let mut dirs: Vec<_> =
            std::fs::read_dir(&root).expect("fixtures/bundles").flatten().map(|e| e.path()).collect();
        dirs.sort();
        for dir in dirs.iter().filter(|d| d.join("evidence.json").is_file()) {
            let evidence = crate::evidence::read_bundle(dir).expect("fixture bundle reads");
            for row in crate::checks::verify(&evidence).results {
                let open = matches!(row.outcome.status, Status::Fail | Status::Warn);
                let human = row.id == 13 && row.outcome.message.key == "unverified";
                if open && !human && catalog.check(row.id).rules_of(&row.outcome).is_empty() {
                    unnamed.push(format!("{}: check {} {}", dir.display(), row.id, row.outcome.message.key));
                }
            }
        }
        assert!(unnamed.is_empty(), "rows that name no sub-rule:\n{}", unnamed.join("\n"));
    }

    /// No PASS without something checked (issue 33 item 3): every PASS row of every fixture
    /// bundle names what it checked (its message's `subjects`), counting more than nothing.
    #[test]
    fn every_pass_row_of_every_bundle_says_what_it_checked() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bundles");
        let catalog = Catalog::embedded();
        let mut empty = Vec::new();
        let mut dirs: Vec<_> =
            std::fs::read_dir(&root).expect("fixtures/bundles").flatten().map(|e| e.path()).collect();
        dirs.sort();
        let mut passes = 0;
        for dir in dirs.iter().filter(|d| d.join("evidence.json").is_file()) {
            let evidence = crate::evidence::read_bundle(dir).expect("fixture bundle reads");
            for row in crate::checks::verify(&evidence).results.iter().filter(|r| r.outcome.status == Status::Pass) {
                passes += 1;
                match catalog.check(row.id).checked(&row.outcome) {
                    Some(n) if n > 0 => {}
                    count => empty.push(format!(
                        "{}: check {} {} counts {count:?} ({:?})",
                        dir.file_name().unwrap_or_default().to_string_lossy(),
                        row.id,
                        row.outcome.message.key,
                        row.outcome.message.args.keys().collect::<Vec<_>>()
                    )),
                }
            }
        }
        assert!(passes > 100, "the bundles have PASS rows, read {passes}");
        assert!(empty.is_empty(), "{} PASS rows say nothing checked:\n{}", empty.len(), empty.join("\n"));
    }

    #[test]
    fn a_pass_counts_its_subject_arguments() {
        let spec = Catalog::embedded().check(3);
        let pass = |covered: u64| Outcome::pass("merged").arg("covered", covered);
        assert_eq!(spec.checked(&pass(2)), Some(2));
        assert_eq!(spec.checked(&pass(0)), Some(0), "nothing checked");
        assert_eq!(spec.checked(&Outcome::fail("merged").arg("covered", 2u64)), None, "only a PASS");
        assert_eq!(count_of(&serde_json::json!(["a", "b"])), 2);
        assert_eq!(count_of(&serde_json::json!("")), 0);
        let bad = "id = 0\nslug = \"x\"\nallowed = [\"PASS\"]\nname = { en = \"a\", zh = \"b\" }\nrule = { en = \"a\", zh = \"b\" }\nremediation = { en = \"a\", zh = \"b\" }\n[subjects]\nnone = [\"n\"]\n";
        let err = Catalog::parse(&[("00-x.toml", bad)], COMMON_MIN, REASONS_MIN).unwrap_err().to_string();
        assert!(err.contains("subject 'none'"), "{err}");
    }

    /// Every enforced sub-rule's fixture exists, gives its check the violation status and lists
    /// that sub-rule in the row's `rules`; its pass fixture passes without listing it. The
    /// catalog lists sub-rules for every check.
    #[test]
    fn every_enforced_subrule_fixture_gives_its_status() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bundles");
        let mut verdicts = BTreeMap::new();
        for spec in Catalog::embedded().checks() {
            assert!(!spec.subrules.is_empty(), "check {} lists no sub-rules", spec.id);
            for rule in spec.subrules.iter().filter(|r| r.how == How::Enforced) {
                let name = rule.fixture.as_deref().unwrap_or_default();
                let verdict = verdicts.entry(name.to_owned()).or_insert_with(|| {
                    let dir = root.join(name);
                    assert!(dir.is_dir(), "sub-rule {}: fixture {} does not exist", rule.id, dir.display());
                    let evidence = crate::evidence::read_bundle(&dir).expect("fixture bundle reads");
                    crate::checks::verify(&evidence)
                });
                let row = verdict.result(spec.id).map(|r| &r.outcome);
                let violation = if rule.warns { Status::Warn } else { spec.violation_status() };
                assert_eq!(row.map(|o| o.status), Some(violation), "sub-rule {}: fixture {name}", rule.id);
                // The row names this sub-rule as one that decided it (issue 23 item 3).
                let rules = row.map(|o| spec.rules_of(o)).unwrap_or_default();
                assert!(rules.contains(&rule.id.as_str()), "sub-rule {}: fixture {name} lists {rules:?}", rule.id);
                if let Some(pass) = rule.pass_fixture.as_deref() {
                    let dir = root.join(pass);
                    assert!(dir.is_dir(), "sub-rule {}: pass fixture {} does not exist", rule.id, dir.display());
                    let evidence = crate::evidence::read_bundle(&dir).expect("fixture bundle reads");
                    let verdict = crate::checks::verify(&evidence);
                    let row = verdict.result(spec.id).map(|r| &r.outcome);
                    assert_eq!(row.map(|o| o.status), Some(Status::Pass), "sub-rule {}: pass fixture {pass}", rule.id);
                    let rules = row.map(|o| spec.rules_of(o)).unwrap_or_default();
                    assert!(!rules.contains(&rule.id.as_str()), "sub-rule {}: pass fixture {pass}", rule.id);
                }
            }
        }
    }
}
