//! `configs/runners.yaml`: runner labels (label → concrete node names) and per-label hardware
//! facts used for agentic DRAM budgets (spec 20 §3.7); in the newer layout (Oct 2026) also the
//! `clusters` section: one entry per hardware fleet with its hardware facts, its Slurm
//! partition and its srt-slurm pool profile (decision TD2).
//!
//! Read forward (decision TD1): a key this reader does not know is carried in
//! [`Runners::unknown`] and the rest is read.

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::Value as Json;

use super::forward::{self, UnknownField};
use crate::yaml::{self, Node, Value, YamlError};

/// Hardware facts of one runner label.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RunnerHardware {
    pub available_cpu_dram_mib: i64,
    pub gpus_per_node: i64,
}

/// One hardware fleet of the `clusters` section.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Cluster {
    pub gpus_per_node: i64,
    #[serde(default)]
    pub available_cpu_dram_mib: Option<i64>,
    #[serde(default)]
    pub arch: Option<String>,
    #[serde(default)]
    pub scheduler: Option<String>,
    /// Environment every job of the fleet gets.
    #[serde(default)]
    pub env: IndexMap<String, String>,
    /// Where the fleet keeps model weights (`entries: {name: {root, dir}}`), kept as written.
    #[serde(default)]
    pub models: Option<Json>,
    #[serde(default)]
    pub slurm: Option<ClusterSlurm>,
}

/// A fleet's Slurm allocation and its srt-slurm pool profile.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ClusterSlurm {
    #[serde(default)]
    pub partition: Option<String>,
    /// The allocation domains a `partition:<name>` runner label selects.
    #[serde(default)]
    pub partitions: Vec<String>,
    #[serde(default)]
    pub account: Option<String>,
    #[serde(default)]
    pub exclusive: Option<bool>,
    #[serde(default)]
    pub gres: Option<String>,
    #[serde(default)]
    pub cpus_per_task: Option<i64>,
    #[serde(default)]
    pub cpus_per_gpu: Option<i64>,
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub srun_args: Vec<String>,
    #[serde(default)]
    pub salloc_args: Vec<String>,
    /// Named host folders (`hf-hub-cache: {path, visibility}`), kept as written.
    #[serde(default)]
    pub volumes: Option<Json>,
    /// Container image cache, kept as written.
    #[serde(default)]
    pub squash: Option<Json>,
    /// The srt-slurm pool profile (`srtslurm.yaml` settings of the fleet), kept as written.
    #[serde(default)]
    pub srt_slurm: Option<Json>,
}

/// The validated runner file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Runners {
    /// Label → node names, in file order.
    pub labels: IndexMap<String, Vec<String>>,
    /// Hardware key (a runner label) → facts: the `hardware` section, and `cluster:<name>` for
    /// every cluster that states both facts.
    pub hardware: IndexMap<String, RunnerHardware>,
    /// Cluster name → fleet (newer layout).
    pub clusters: IndexMap<String, Cluster>,
    /// Keys of the file this reader does not know (decision TD1).
    pub unknown: Vec<UnknownField>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RunnerFile {
    labels: IndexMap<String, Vec<String>>,
    #[serde(default)]
    hardware: Option<IndexMap<String, RunnerHardware>>,
    #[serde(default)]
    clusters: Option<IndexMap<String, Cluster>>,
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
        let (file, unknown): (RunnerFile, _) = forward::from_node(root)
            .map_err(|e| YamlError { message: format!("Runner config failed validation: {}", e.message), ..e })?;
        let mut hardware = file.hardware.unwrap_or_default();
        let clusters = file.clusters.unwrap_or_default();
        for (name, cluster) in &clusters {
            if let Some(dram) = cluster.available_cpu_dram_mib {
                hardware
                    .entry(format!("cluster:{name}"))
                    .or_insert(RunnerHardware { available_cpu_dram_mib: dram, gpus_per_node: cluster.gpus_per_node });
            }
        }
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
        for (name, cluster) in &clusters {
            for (field, value) in [
                ("gpus-per-node", Some(cluster.gpus_per_node)),
                ("available-cpu-dram-mib", cluster.available_cpu_dram_mib),
            ] {
                if let Some(value) = value.filter(|v| *v <= 0) {
                    let pos = root.get("clusters").and_then(|c| c.get(name)).and_then(|c| c.get(field)).map(|n| n.pos);
                    return Err(YamlError {
                        file: None,
                        pos: pos.or(Some(root.pos)),
                        field: Some(format!("clusters.{name}.{field}")),
                        message: format!("Runner config failed validation: must be greater than 0, found {value}"),
                    });
                }
            }
        }
        Ok(Runners { labels: file.labels, hardware, clusters, unknown })
    }

    /// The cluster a runner node belongs to: the `cluster:<name>` label that lists it, when
    /// `clusters` has that name.
    pub fn cluster_of_node(&self, node: &str) -> Option<(&str, &Cluster)> {
        self.labels.iter().find_map(|(label, nodes)| {
            let name = label.strip_prefix(CLUSTER_LABEL)?;
            nodes.iter().any(|n| n == node).then_some(())?;
            self.clusters.get_key_value(name).map(|(k, c)| (k.as_str(), c))
        })
    }

    /// The clusters a runner label's nodes belong to, in node order, each once.
    pub fn clusters_of_label(&self, label: &str) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        if let Some((name, _)) = label.strip_prefix(CLUSTER_LABEL).and_then(|n| self.clusters.get_key_value(n)) {
            out.push(name.as_str());
        }
        // A label runners.yaml does not list schedules on GitHub's runners of that name
        // (`gb300-nv`: nodes `gb300-nv_N`), which are the cluster of that name.
        if let Some((name, _)) = self.clusters.get_key_value(label).filter(|_| !self.labels.contains_key(label)) {
            out.push(name.as_str());
        }
        for node in self.nodes(label) {
            if let Some((name, _)) = self.cluster_of_node(node) {
                if !out.contains(&name) {
                    out.push(name);
                }
            }
        }
        out
    }

    /// Node names of a label (empty when the label is unknown).
    pub fn nodes(&self, label: &str) -> &[String] {
        self.labels.get(label).map(Vec::as_slice).unwrap_or_default()
    }
}

/// Prefix of the labels that name one cluster's nodes.
const CLUSTER_LABEL: &str = "cluster:";

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
        let e =
            parse("labels:\n  a: [x]\nhardware: {a: {gpus-per-node: \"8\", available-cpu-dram-mib: 1}}\n").unwrap_err();
        assert!(e.message.starts_with("Runner config failed validation:"), "{e}");
        let e =
            parse("labels:\n  a: [x]\nhardware:\n  a: {available-cpu-dram-mib: 0, gpus-per-node: 8}\n").unwrap_err();
        assert_eq!(e.pos.unwrap().line, 4, "{e}");
        assert!(e.to_string().contains("hardware.a.available-cpu-dram-mib"), "{e}");
        let e = parse("labels:\n  a: [x]\nhardware:\n  a: {gpus-per-node: 8}\n").unwrap_err();
        assert!(e.message.contains("Runner config failed validation"), "{e}");
        let e = parse("labels:\n  a: [x]\nclusters:\n  c: {gpus-per-node: 0}\n").unwrap_err();
        assert!(e.to_string().contains("clusters.c.gpus-per-node"), "{e}");
    }

    /// Decision TD1: an unknown key is carried with its position and the rest is read.
    #[test]
    fn unknown_keys_are_carried() {
        let r = parse(
            "labels:\n  a: [x]\nextra: 1\nhardware:\n  a: {gpus-per-node: 8, available-cpu-dram-mib: 1, cores: 3}\n",
        )
        .unwrap();
        let unknown: Vec<String> = r.unknown.iter().map(|u| format!("{}:{}", u.pos, u.path)).collect();
        assert_eq!(unknown, ["3:1:extra", "5:52:hardware.a.cores"]);
        assert_eq!(r.hardware["a"].gpus_per_node, 8);
    }

    /// Shaped like the Oct 2026 runners.yaml: nodes `mi300x-amd_NN` under the `mi300x` label
    /// and `cluster:mi300x-amd`; the cluster's partition and hardware facts.
    #[test]
    fn clusters_resolve_nodes_and_hardware() {
        let r = parse(
            "labels:\n  mi300x: [mi300x-amd_00, mi300x-amd_01]\n  cluster:mi300x-amd: [mi300x-amd_00, mi300x-amd_01]\n\
             clusters:\n  mi300x-amd:\n    gpus-per-node: 8\n    available-cpu-dram-mib: 1_547_820\n    arch: x86_64\n\
             \x20   scheduler: slurm\n    slurm:\n      partition: MI300X-UBUNTU\n      exclusive: true\n\
             \x20     srt-slurm: {single-node-time-limit: 180}\n",
        )
        .unwrap();
        assert!(r.unknown.is_empty(), "{:?}", r.unknown);
        assert_eq!(r.clusters_of_label("mi300x"), ["mi300x-amd"]);
        assert_eq!(r.clusters_of_label("cluster:mi300x-amd"), ["mi300x-amd"]);
        let (name, cluster) = r.cluster_of_node("mi300x-amd_01").unwrap();
        assert_eq!(name, "mi300x-amd");
        assert_eq!(cluster.slurm.as_ref().and_then(|s| s.partition.as_deref()), Some("MI300X-UBUNTU"));
        assert_eq!(
            r.hardware["cluster:mi300x-amd"],
            RunnerHardware { available_cpu_dram_mib: 1_547_820, gpus_per_node: 8 }
        );
        assert!(r.cluster_of_node("h100-cw_00").is_none());
        assert_eq!(r.clusters_of_label("mi300x-amd"), ["mi300x-amd"], "an unlisted label named like a cluster");
    }

    #[test]
    fn empty_file_is_a_clean_error() {
        let e = parse("").unwrap_err();
        assert!(e.to_string().contains("Runner config must be a mapping"), "{e}");
    }
}
