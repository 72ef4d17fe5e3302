//! `perf-changelog.yaml` entries (spec 20 §4.1): a YAML list of `ChangelogEntry` mappings.
//! Values are strict (no `"yes"` for true, no `"4"` for 4; decision M1).

use serde::Deserialize;
use serde_json::{json, Map, Value as Json};

use super::forward::{self, UnknownField};
use crate::yaml::{self, Node, Pos, YamlError};

/// The two scenario kinds, in upstream's canonical order (`SCENARIO_TYPES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScenarioType {
    FixedSeqLen,
    AgenticCoding,
}

impl ScenarioType {
    pub const ALL: [ScenarioType; 2] = [ScenarioType::FixedSeqLen, ScenarioType::AgenticCoding];

    pub fn as_str(self) -> &'static str {
        match self {
            ScenarioType::FixedSeqLen => "fixed-seq-len",
            ScenarioType::AgenticCoding => "agentic-coding",
        }
    }

    pub fn parse(text: &str) -> Option<ScenarioType> {
        ScenarioType::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// One changelog entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ChangelogEntry {
    pub config_keys: Vec<String>,
    pub description: Vec<String>,
    pub pr_link: String,
    #[serde(default)]
    pub evals_only: bool,
    #[serde(default)]
    pub all_evals: bool,
    #[serde(default)]
    pub append_only: bool,
    #[serde(default)]
    pub eval_min_prefill_ep: Option<i64>,
    #[serde(default)]
    pub scenario_type: Option<Vec<ScenarioType>>,
}

impl ChangelogEntry {
    /// Validates one entry node (schema + the append-only combination rule).
    pub fn from_node(node: &Node) -> Result<ChangelogEntry, YamlError> {
        ChangelogEntry::validated(yaml::from_node(node)?, node)
    }

    /// [`Self::from_node`] read forward (decision TD1): unknown keys are returned beside it.
    pub fn read_forward(node: &Node) -> Result<(ChangelogEntry, Vec<UnknownField>), YamlError> {
        let (entry, unknown) = forward::from_node(node)?;
        Ok((ChangelogEntry::validated(entry, node)?, unknown))
    }

    fn validated(entry: ChangelogEntry, node: &Node) -> Result<ChangelogEntry, YamlError> {
        let at = |key: &str, message: &str| YamlError {
            file: None,
            pos: Some(node.get(key).map_or(node.pos, |n| n.pos)),
            field: Some(key.to_owned()),
            message: message.to_owned(),
        };
        if entry.config_keys.is_empty() {
            return Err(at("config-keys", "List should have at least 1 item after validation, not 0"));
        }
        if entry.description.is_empty() {
            return Err(at("description", "List should have at least 1 item after validation, not 0"));
        }
        if entry.eval_min_prefill_ep.is_some_and(|n| n < 1) {
            return Err(at("eval-min-prefill-ep", "Input should be greater than or equal to 1"));
        }
        if entry.scenario_type.as_ref().is_some_and(Vec::is_empty) {
            return Err(at("scenario-type", "List should have at least 1 item after validation, not 0"));
        }
        if entry.append_only && (entry.evals_only || entry.all_evals || entry.eval_min_prefill_ep.is_some()) {
            return Err(YamlError::at(node.pos, "append-only cannot be combined with eval selection fields"));
        }
        Ok(entry)
    }

    /// Scenarios this entry covers (`scenario-type`, or both), in the entry's order.
    pub fn scenarios(&self) -> Vec<ScenarioType> {
        self.scenario_type.clone().unwrap_or_else(|| ScenarioType::ALL.to_vec())
    }

    /// The entry as upstream's final output dumps it: defaults filled, nulls omitted.
    pub fn to_json(&self) -> Json {
        let mut m = Map::new();
        m.insert("config-keys".into(), json!(self.config_keys));
        m.insert("description".into(), json!(self.description));
        m.insert("pr-link".into(), json!(self.pr_link));
        m.insert("evals-only".into(), json!(self.evals_only));
        m.insert("all-evals".into(), json!(self.all_evals));
        m.insert("append-only".into(), json!(self.append_only));
        if let Some(n) = self.eval_min_prefill_ep {
            m.insert("eval-min-prefill-ep".into(), json!(n));
        }
        if let Some(s) = &self.scenario_type {
            m.insert("scenario-type".into(), Json::Array(s.iter().map(|s| json!(s.as_str())).collect()));
        }
        Json::Object(m)
    }
}

/// A parsed changelog: its entries with the position of each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changelog {
    pub entries: Vec<(Pos, ChangelogEntry)>,
}

impl Changelog {
    /// Parses a whole changelog file (a YAML list of entries).
    pub fn parse(text: &str, file: &str) -> Result<Changelog, YamlError> {
        let root = yaml::parse(text, file)?;
        Changelog::from_node(&root).map_err(|e| e.in_file(file))
    }

    pub fn from_node(root: &Node) -> Result<Changelog, YamlError> {
        Changelog::read(root, |item| ChangelogEntry::from_node(item).map(|e| (e, Vec::new()))).map(|(c, _)| c)
    }

    /// [`Self::from_node`] read forward (decision TD1): each entry's unknown keys, with the
    /// entry's index in their path.
    pub fn read_forward(root: &Node) -> Result<(Changelog, Vec<UnknownField>), YamlError> {
        Changelog::read(root, ChangelogEntry::read_forward)
    }

    fn read(
        root: &Node,
        entry_of: impl Fn(&Node) -> Result<(ChangelogEntry, Vec<UnknownField>), YamlError>,
    ) -> Result<(Changelog, Vec<UnknownField>), YamlError> {
        let Some(items) = root.as_seq() else {
            return Err(YamlError::at(
                root.pos,
                format!("the changelog must be a YAML list of entries, found {}", root.value.kind()),
            ));
        };
        let mut entries = Vec::with_capacity(items.len());
        let mut unknown = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let (entry, extra) = entry_of(item).map_err(|mut e| {
                e.field = Some(match e.field.take() {
                    Some(f) => format!("[{i}].{f}"),
                    None => format!("[{i}]"),
                });
                e
            })?;
            unknown.extend(extra.into_iter().map(|u| UnknownField { path: format!("[{i}].{}", u.path), ..u }));
            entries.push((item.pos, entry));
        }
        Ok((Changelog { entries }, unknown))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> Result<ChangelogEntry, YamlError> {
        ChangelogEntry::from_node(&yaml::parse(text, "c.yaml").unwrap())
    }

    #[test]
    fn valid_entry_with_defaults_and_output_order() {
        let e = entry("config-keys: [a, 'b*']\ndescription: ['x']\npr-link: XXX\nscenario-type: [agentic-coding]\n")
            .unwrap();
        assert_eq!(e.scenarios(), vec![ScenarioType::AgenticCoding]);
        assert_eq!(
            serde_json::to_string(&e.to_json()).unwrap(),
            r#"{"config-keys":["a","b*"],"description":["x"],"pr-link":"XXX","evals-only":false,"all-evals":false,"append-only":false,"scenario-type":["agentic-coding"]}"#
        );
        let e = entry("config-keys: [a]\ndescription: ['']\npr-link: x\neval-min-prefill-ep: 8\n").unwrap();
        assert_eq!(e.eval_min_prefill_ep, Some(8));
        assert_eq!(e.scenarios(), ScenarioType::ALL.to_vec());
    }

    #[test]
    fn schema_failures() {
        for (text, needle) in [
            ("description: [x]\npr-link: x\n", "missing field `config-keys`"),
            ("config-keys: []\ndescription: [x]\npr-link: x\n", "at least 1 item"),
            ("config-keys: [a]\ndescription: []\npr-link: x\n", "at least 1 item"),
            ("config-keys: [a]\ndescription: [x]\npr-link: x\nfoo: 1\n", "unknown field `foo`"),
            ("config-keys: [a]\ndescription: [yes]\npr-link: x\n", "expected a string"),
            ("config-keys: [a]\ndescription: [x]\npr-link: x\nevals-only: 'yes'\n", "expected a boolean"),
            ("config-keys: [a]\ndescription: [x]\npr-link: x\nevals-only: null\n", "expected a boolean"),
            ("config-keys: [a]\ndescription: [x]\npr-link: x\neval-min-prefill-ep: '4'\n", "expected an integer"),
            ("config-keys: [a]\ndescription: [x]\npr-link: x\neval-min-prefill-ep: 0\n", "greater than or equal to 1"),
            ("config-keys: [a]\ndescription: [x]\npr-link: x\nscenario-type: []\n", "at least 1 item"),
            ("config-keys: [a]\ndescription: [x]\npr-link: x\nscenario-type: [foo]\n", "unknown variant `foo`"),
            (
                "config-keys: [a]\ndescription: [x]\npr-link: x\nappend-only: true\nevals-only: true\n",
                "append-only cannot be combined with eval selection fields",
            ),
            (
                "config-keys: [a]\ndescription: [x]\npr-link: x\nappend-only: true\neval-min-prefill-ep: 2\n",
                "append-only cannot be combined with eval selection fields",
            ),
        ] {
            let err = entry(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }

    #[test]
    fn whole_file_positions_and_root_shape() {
        let c = Changelog::parse("- config-keys: [a]\n  description: [x]\n  pr-link: x\n\n- config-keys: [b]\n  description: [y]\n  pr-link: y\n", "perf-changelog.yaml").unwrap();
        assert_eq!(c.entries.len(), 2);
        assert_eq!(c.entries[1].0.line, 5);
        let e = Changelog::parse("- config-keys: [a]\n  description: [x]\n", "perf-changelog.yaml").unwrap_err();
        assert!(e.to_string().starts_with("perf-changelog.yaml:1:3: [0]: missing field `pr-link`"), "{e}");
        let e = Changelog::parse("config-keys: [a]\n", "perf-changelog.yaml").unwrap_err();
        assert!(e.to_string().contains("must be a YAML list"), "{e}");
    }
}
