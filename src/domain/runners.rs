//! `configs/runners.yaml`: runner labels (label → concrete node names) and per-label hardware
//! facts used for agentic DRAM budgets (spec 20 §3.7).

use indexmap::IndexMap;
use serde::Deserialize;

use crate::yaml::{self, Node, Value, YamlError};

/// Hardware facts of one runner label.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RunnerHardware {
    pub available_cpu_dram_mib: i64,
    pub gpus_per_node: i64,
}

/// The validated runner file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Runners {
    /// Label → node names, in file order.
    pub labels: IndexMap<String, Vec<String>>,
    /// Hardware key (a runner label) → facts.
    pub hardware: IndexMap<String, RunnerHardware>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RunnerFile {
    labels: IndexMap<String, Vec<String>>,
    #[serde(default)]
    hardware: Option<IndexMap<String, RunnerHardware>>,
}

impl Runners {
    /// Parses and validates the runner file text (checks in upstream's order).
    pub fn parse(text: &str, file: &str) -> Result<Runners, YamlError> {
        let root = yaml::parse(text, file)?;
        Runners::from_node(&root).map_err(|e| e.in_file(file))
    }

    pub fn from_node(root: &Node) -> Result<Runners, YamlError> {
        if root.as_map().is_none() {
            // Upstream crashes with an AttributeError here (spec 20 §12 Q13, decision M9).
            return Err(YamlError::at(
                root.pos,
                format!("Runner config must be a mapping, found {}", root.value.kind()),
            ));
        }
        let labels = root
            .get("labels")
            .filter(|l| l.as_map().is_some())
            .ok_or_else(|| YamlError::at(root.pos, "Runner config must define a labels mapping"))?;
        for (key, value) in labels.as_map().unwrap_or_default() {
            let name = key.key_text().unwrap_or_default();
            let Some(items) = value.as_seq() else {
                return Err(YamlError::at(
                    value.pos,
                    format!("Runner config entry '{name}' must be a list, got {}", python_type(&value.value)),
                ));
            };
            if let Some(bad) = items.iter().find(|i| i.as_str().is_none()) {
                return Err(YamlError::at(bad.pos, format!("Runner config entry '{name}' must contain only strings")));
            }
            if items.is_empty() {
                return Err(YamlError::at(value.pos, format!("Runner config entry '{name}' cannot be an empty list")));
            }
        }
        let file: RunnerFile = yaml::from_node(root)
            .map_err(|e| YamlError { message: format!("Runner config failed validation: {}", e.message), ..e })?;
        let hardware = file.hardware.unwrap_or_default();
        for (key, hw) in &hardware {
            for (field, value) in
                [("available-cpu-dram-mib", hw.available_cpu_dram_mib), ("gpus-per-node", hw.gpus_per_node)]
            {
                if value <= 0 {
                    let pos = root.get("hardware").and_then(|h| h.get(key)).and_then(|h| h.get(field)).map(|n| n.pos);
                    return Err(YamlError {
                        file: None,
                        pos: pos.or(Some(root.pos)),
                        field: Some(format!("hardware.{key}.{field}")),
                        message: format!("Runner config failed validation: must be greater than 0, found {value}"),
                    });
                }
            }
        }
        Ok(Runners { labels: file.labels, hardware })
    }

    /// Node names of a label (empty when the label is unknown).
    pub fn nodes(&self, label: &str) -> &[String] {
        self.labels.get(label).map(Vec::as_slice).unwrap_or_default()
    }
}

/// Python's `type(value).__name__` for a YAML value, as upstream's message prints it.
fn python_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Int(_) => "int",
        Value::Float(_) => "float",
        Value::Str(_) => "str",
        Value::Seq(_) => "list",
        Value::Map(_) => "dict",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Runners, YamlError> {
        Runners::parse(text, "configs/runners.yaml")
    }

    #[test]
    fn parses_labels_and_underscore_integers() {
        let r = parse(
            "labels:\n  b200: [b200-a_0, b200-a_1]\n  cluster:b200-x: [b200-x_0]\nhardware:\n  cluster:b200-x:\n    available-cpu-dram-mib: 2_063_837\n    gpus-per-node: 8\n",
        )
        .unwrap();
        assert_eq!(r.nodes("b200"), ["b200-a_0", "b200-a_1"]);
        assert!(r.nodes("missing").is_empty());
        assert_eq!(
            r.hardware["cluster:b200-x"],
            RunnerHardware { available_cpu_dram_mib: 2_063_837, gpus_per_node: 8 }
        );
    }

    #[test]
    fn rejects_in_upstream_order() {
        let e = parse("hardware: {}\n").unwrap_err();
        assert!(e.to_string().ends_with("Runner config must define a labels mapping"), "{e}");
        let e = parse("labels:\n  a: b\n").unwrap_err();
        assert!(e.to_string().ends_with("Runner config entry 'a' must be a list, got str"), "{e}");
        let e = parse("labels:\n  a: [1]\n").unwrap_err();
        assert!(e.to_string().ends_with("Runner config entry 'a' must contain only strings"), "{e}");
        let e = parse("labels:\n  a: []\n").unwrap_err();
        assert!(e.to_string().ends_with("Runner config entry 'a' cannot be an empty list"), "{e}");
        let e = parse("labels:\n  a: [x]\nextra: 1\n").unwrap_err();
        assert!(e.message.starts_with("Runner config failed validation:"), "{e}");
        let e =
            parse("labels:\n  a: [x]\nhardware:\n  a: {available-cpu-dram-mib: 0, gpus-per-node: 8}\n").unwrap_err();
        assert_eq!(e.pos.unwrap().line, 4, "{e}");
        assert!(e.to_string().contains("hardware.a.available-cpu-dram-mib"), "{e}");
        let e = parse("labels:\n  a: [x]\nhardware:\n  a: {gpus-per-node: 8, cores: 3}\n").unwrap_err();
        assert!(e.message.contains("Runner config failed validation"), "{e}");
    }

    #[test]
    fn empty_file_is_a_clean_error() {
        let e = parse("").unwrap_err();
        assert!(e.to_string().contains("Runner config must be a mapping"), "{e}");
    }
}
