//! Master configs (`configs/amd-master.yaml`, `configs/nvidia-master.yaml`): one entry per
//! config key, validated like upstream's pydantic models (spec 20 §3), strictly typed (no lax
//! coercions, decision D3) and with the agentic shape tied to `multinode` (decision M2).
//!
//! Each search-space entry keeps its raw YAML as JSON, because the generator copies raw values
//! (worker dicts in YAML key order, `router`, `kv-offload-backend`) into matrix rows.

use std::collections::BTreeMap;

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::{Map, Value as Json};

use super::forward::{self, UnknownField};
use crate::diag::Diagnostic;
use crate::yaml::{self, Node, Pos, YamlError};

/// Label prefix that agentic configs must use (one exact hardware fleet).
pub const CLUSTER_LABEL_PREFIX: &str = "cluster:";

/// `router` (and similar) metadata: `{name, version}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComponentMetadata {
    pub name: String,
    pub version: String,
}

/// `kv-offload-backend`: `{name, version?}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KvOffloadBackend {
    pub name: String,
    #[serde(default)]
    pub version: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpecDecoding {
    Mtp,
    DraftModel,
    #[default]
    None,
}

impl SpecDecoding {
    pub fn as_str(self) -> &'static str {
        match self {
            SpecDecoding::Mtp => "mtp",
            SpecDecoding::DraftModel => "draft_model",
            SpecDecoding::None => "none",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KvOffloading {
    None,
    Dram,
}

impl KvOffloading {
    pub fn as_str(self) -> &'static str {
        match self {
            KvOffloading::None => "none",
            KvOffloading::Dram => "dram",
        }
    }
}

fn one() -> i64 {
    1
}

/// A prefill or decode worker.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Worker {
    pub num_worker: i64,
    pub tp: i64,
    #[serde(default = "one")]
    pub pp: i64,
    #[serde(default = "one")]
    pub dcp_size: i64,
    #[serde(default = "one")]
    pub pcp_size: i64,
    pub ep: i64,
    pub dp_attn: bool,
    #[serde(default)]
    pub hardware: Option<String>,
    #[serde(default)]
    pub additional_settings: Option<Vec<String>>,
}

/// The concurrency fields shared by every search-space kind.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConcFields {
    pub start: Option<i64>,
    pub end: Option<i64>,
    pub list: Option<Vec<i64>>,
}

/// A single-node fixed-seq-len search-space entry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SingleNodeSpace {
    pub tp: i64,
    #[serde(default = "one")]
    pub pp: i64,
    #[serde(default = "one")]
    pub dcp_size: i64,
    #[serde(default = "one")]
    pub pcp_size: i64,
    #[serde(default)]
    pub ep: Option<i64>,
    #[serde(default)]
    pub spec_decoding: SpecDecoding,
    #[serde(default)]
    pub dp_attn: Option<bool>,
    #[serde(default)]
    pub router: Option<ComponentMetadata>,
    #[serde(default)]
    pub conc_start: Option<i64>,
    #[serde(default)]
    pub conc_end: Option<i64>,
    #[serde(default)]
    pub conc_list: Option<Vec<i64>>,
    /// Newer master schema: the srt-slurm recipe the row runs
    /// (`benchmarks/single_node/srt-slurm-recipes/…/agentic.yaml`, relative to the master
    /// file's repository root).
    #[serde(default)]
    pub srt_recipe: Option<String>,
    /// The entry as written (key order kept).
    #[serde(skip)]
    pub raw: Map<String, Json>,
}

/// A multinode fixed-seq-len search-space entry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MultiNodeSpace {
    #[serde(default)]
    pub spec_decoding: SpecDecoding,
    pub prefill: Worker,
    pub decode: Worker,
    #[serde(default)]
    pub router: Option<ComponentMetadata>,
    #[serde(default)]
    pub kv_p2p_transfer: Option<String>,
    #[serde(default)]
    pub conc_start: Option<i64>,
    #[serde(default)]
    pub conc_end: Option<i64>,
    #[serde(default)]
    pub conc_list: Option<Vec<i64>>,
    #[serde(skip)]
    pub raw: Map<String, Json>,
}

/// An agentic-coding search-space entry (single-node `tp` shape or multinode worker shape).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AgenticSpace {
    #[serde(default)]
    pub tp: Option<i64>,
    #[serde(default = "one")]
    pub pp: i64,
    #[serde(default = "one")]
    pub dcp_size: i64,
    #[serde(default = "one")]
    pub pcp_size: i64,
    #[serde(default)]
    pub ep: Option<i64>,
    #[serde(default)]
    pub dp_attn: Option<bool>,
    #[serde(default)]
    pub spec_decoding: SpecDecoding,
    #[serde(default)]
    pub prefill: Option<Worker>,
    #[serde(default)]
    pub decode: Option<Worker>,
    /// Newer master schema (Oct 2026): an aggregated multinode entry runs `worker` (one role,
    /// no prefill/decode split) over `num-nodes` nodes.
    #[serde(default)]
    pub worker: Option<Worker>,
    #[serde(default)]
    pub num_nodes: Option<i64>,
    #[serde(default)]
    pub kv_offloading: Option<KvOffloading>,
    #[serde(default)]
    pub kv_offload_backend: Option<KvOffloadBackend>,
    #[serde(default)]
    pub router: Option<ComponentMetadata>,
    #[serde(default)]
    pub kv_p2p_transfer: Option<String>,
    #[serde(default)]
    pub conc_start: Option<i64>,
    #[serde(default)]
    pub conc_end: Option<i64>,
    #[serde(default)]
    pub conc_list: Option<Vec<i64>>,
    /// Newer master schema: the srt-slurm recipe a single-node row runs.
    #[serde(default)]
    pub srt_recipe: Option<String>,
    #[serde(skip)]
    pub raw: Map<String, Json>,
}

macro_rules! conc_accessor {
    ($($ty:ty),*) => {$(
        impl $ty {
            pub fn conc(&self) -> ConcFields {
                ConcFields { start: self.conc_start, end: self.conc_end, list: self.conc_list.clone() }
            }
        }
    )*};
}
conc_accessor!(SingleNodeSpace, MultiNodeSpace, AgenticSpace);

/// A fixed-seq-len block of either topology.
#[derive(Debug, Clone, PartialEq)]
pub struct FixedBlock {
    pub isl: i64,
    pub osl: i64,
    pub search_space: FixedSpaces,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FixedSpaces {
    Single(Vec<SingleNodeSpace>),
    Multi(Vec<MultiNodeSpace>),
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AgenticBlock {
    pub search_space: Vec<AgenticSpace>,
    #[serde(default)]
    pub dram_utilization: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", bound(deserialize = "S: Deserialize<'de>"))]
struct RawFixedBlock<S> {
    isl: i64,
    osl: i64,
    search_space: Vec<S>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", bound(deserialize = "S: Deserialize<'de>"))]
struct RawScenarios<S> {
    #[serde(default)]
    fixed_seq_len: Option<Vec<RawFixedBlock<S>>>,
    #[serde(default)]
    agentic_coding: Option<Vec<AgenticBlock>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", bound(deserialize = "S: Deserialize<'de>"))]
struct RawEntry<S> {
    image: String,
    model: String,
    model_prefix: String,
    precision: String,
    framework: String,
    runner: String,
    multinode: bool,
    #[serde(default)]
    disagg: bool,
    #[serde(default)]
    router: Option<ComponentMetadata>,
    #[serde(default)]
    kv_p2p_transfer: Option<String>,
    scenarios: RawScenarios<S>,
}

/// One validated master config.
#[derive(Debug, Clone, PartialEq)]
pub struct MasterConfig {
    pub key: String,
    /// File it was read from and the position of its key.
    pub file: String,
    pub pos: Pos,
    pub image: String,
    pub model: String,
    pub model_prefix: String,
    pub precision: String,
    pub framework: String,
    pub runner: String,
    pub multinode: bool,
    pub disagg: bool,
    pub router: Option<ComponentMetadata>,
    pub kv_p2p_transfer: Option<String>,
    pub fixed: Vec<FixedBlock>,
    pub agentic: Vec<AgenticBlock>,
    /// The whole entry as JSON (for the append-only scope rule's deep equality).
    pub raw: Json,
    /// Fields this reader does not know (only when read forward, decision TD1).
    pub unknown: Vec<UnknownField>,
}

/// A single-node search-space row that names the srt-slurm recipe it runs (newer master
/// schema, `srt-recipe:`), with what the recipe's variants must agree with.
#[derive(Debug, Clone, PartialEq)]
pub struct SrtRecipeRow {
    /// `scenarios.<scenario>[i].search-space[j]`, for messages.
    pub at: String,
    pub tp: i64,
    /// `ep`, 1 when absent (the generator's default).
    pub ep: i64,
    pub conc: ConcFields,
    /// `none` or `dram` (fixed-seq-len rows: `none`).
    pub kv_offloading: &'static str,
    pub kv_offload_backend: Option<String>,
    /// The recipe path as written.
    pub recipe: String,
}

impl SrtRecipeRow {
    /// Where the recipe may be in the repository: relative to the root the master file's
    /// `configs/` directory sits in (`inferencex-e2e/configs/…` → `inferencex-e2e/<recipe>`),
    /// then as written.
    pub fn candidate_paths(&self, master_file: &str) -> Vec<String> {
        let written = self.recipe.trim_start_matches("./");
        let root = master_file.rsplit_once("configs/").map_or("", |(root, _)| root);
        let mut out = vec![format!("{root}{written}")];
        if !root.is_empty() {
            out.push(written.to_owned());
        }
        out
    }

    /// `TP4/EP4 HiCache`: the row's parallelism and, for a DRAM-offload band, its backend.
    pub fn label(&self) -> String {
        let mut label = parallelism_label(self.tp, self.ep);
        if self.kv_offloading == "dram" {
            let backend = match self.kv_offload_backend.as_deref() {
                Some("hicache") => "HiCache",
                Some("lmcache") => "LMCache",
                Some(other) => other,
                None => "DRAM-offload",
            };
            label.push(' ');
            label.push_str(backend);
        }
        label
    }

    /// The concurrencies the row generates (the generator's list or geometric range).
    pub fn concurrencies(&self) -> Vec<i64> {
        match &self.conc.list {
            Some(list) if !list.is_empty() => list.clone(),
            _ => conc_range(self.conc.start.unwrap_or(0), self.conc.end.unwrap_or(-1), 2),
        }
    }
}

/// The geometric range `start..=end` (×step, the end always emitted).
pub fn conc_range(start: i64, end: i64, step: i64) -> Vec<i64> {
    let mut out = Vec::new();
    let mut c = start;
    while c <= end {
        out.push(c);
        if c == end {
            break;
        }
        c = c.saturating_mul(step);
        if c > end {
            c = end;
        }
    }
    out
}

/// `TP4/EP4`, or `TP8` when EP is 1: how rows and their variants are named in reports.
pub fn parallelism_label(tp: i64, ep: i64) -> String {
    if ep > 1 {
        format!("TP{tp}/EP{ep}")
    } else {
        format!("TP{tp}")
    }
}

impl MasterConfig {
    /// Every single-node search-space row that names an srt-slurm recipe, in master order.
    pub fn srt_recipe_rows(&self) -> Vec<SrtRecipeRow> {
        let mut out = Vec::new();
        for (bi, block) in self.fixed.iter().enumerate() {
            let FixedSpaces::Single(spaces) = &block.search_space else { continue };
            for (si, s) in spaces.iter().enumerate() {
                let Some(recipe) = &s.srt_recipe else { continue };
                out.push(SrtRecipeRow {
                    at: format!("scenarios.fixed-seq-len[{bi}].search-space[{si}]"),
                    tp: s.tp,
                    ep: s.ep.unwrap_or(1),
                    conc: s.conc(),
                    kv_offloading: KvOffloading::None.as_str(),
                    kv_offload_backend: None,
                    recipe: recipe.clone(),
                });
            }
        }
        for (bi, block) in self.agentic.iter().enumerate() {
            for (si, s) in block.search_space.iter().enumerate() {
                let (Some(recipe), Some(tp)) = (&s.srt_recipe, s.tp) else { continue };
                out.push(SrtRecipeRow {
                    at: format!("scenarios.agentic-coding[{bi}].search-space[{si}]"),
                    tp,
                    ep: s.ep.unwrap_or(1),
                    conc: s.conc(),
                    kv_offloading: s.kv_offloading.unwrap_or(KvOffloading::None).as_str(),
                    kv_offload_backend: s.kv_offload_backend.as_ref().map(|b| b.name.clone()),
                    recipe: recipe.clone(),
                });
            }
        }
        out
    }
}

/// All master configs, in master order (AMD file first, then NVIDIA).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MasterConfigs {
    pub configs: IndexMap<String, MasterConfig>,
}

impl MasterConfigs {
    pub fn get(&self, key: &str) -> Option<&MasterConfig> {
        self.configs.get(key)
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.configs.keys().map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.configs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.configs.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MasterConfigError {
    #[error("Input file '{file}' does not exist.")]
    MissingFile { file: String },
    #[error("{0}")]
    Yaml(YamlError),
    #[error("{file}: Config file '{file}' must contain a dictionary (found {found})")]
    NotMapping { file: String, found: &'static str },
    // Upstream's message starts with a space (spec 20 §3.1).
    #[error("{file}:{pos}:  Wildcard '*' is not allowed in master config keys: '{key}'")]
    Wildcard { file: String, pos: Pos, key: String },
    #[error("Duplicate configuration keys found in '{file}': {}", keys.join(", "))]
    DuplicateKeys { file: String, keys: Vec<String> },
    #[error("Master config entry '{key}' failed validation:\n{detail}")]
    Invalid { key: String, detail: YamlError },
}

impl MasterConfigError {
    /// The error as a lint diagnostic in `file`.
    pub fn diagnostic(&self, file: &str) -> Diagnostic {
        match self {
            MasterConfigError::Yaml(e) => Diagnostic::from_yaml(file, e),
            MasterConfigError::Invalid { key, detail } => {
                let mut d = Diagnostic::from_yaml(file, detail);
                d.message = format!("master config '{key}': {}", d.message);
                d
            }
            MasterConfigError::Wildcard { file, pos, key } => Diagnostic::new(
                file.clone(),
                Some(*pos),
                format!("Wildcard '*' is not allowed in master config keys: '{key}'"),
            ),
            MasterConfigError::MissingFile { file }
            | MasterConfigError::NotMapping { file, .. }
            | MasterConfigError::DuplicateKeys { file, .. } => Diagnostic::new(file.clone(), None, self.to_string()),
        }
    }
}

/// The lines of one top-level entry of a master file: from its key to its last content line
/// (trailing blank and comment lines before the next key belong to no entry), and their text.
#[derive(Debug, PartialEq)]
pub struct EntrySpan {
    pub lines: std::ops::RangeInclusive<u32>,
    pub text: String,
}

/// A line that can belong to an entry: not blank, not a comment (separators belong to none).
pub fn is_entry_line(text: &str) -> bool {
    let text = text.trim_start();
    !text.is_empty() && !text.starts_with('#')
}

/// Each top-level key's span in `text`, whose parsed document is `root`.
pub fn entry_spans(root: &Node, text: &str) -> BTreeMap<String, EntrySpan> {
    let keys: Vec<(String, u32)> = root
        .as_map()
        .unwrap_or_default()
        .iter()
        .filter_map(|(key, _)| Some((key.key_text()?.into_owned(), key.pos.line)))
        .collect();
    let lines: Vec<&str> = text.lines().collect();
    let mut spans = BTreeMap::new();
    for (index, (key, start)) in keys.iter().enumerate() {
        let next = keys.get(index + 1).map_or(lines.len() as u32 + 1, |(_, line)| *line);
        let mut end = next.saturating_sub(1).max(*start);
        while end > *start && !lines.get(end as usize - 1).is_some_and(|l| is_entry_line(l)) {
            end -= 1;
        }
        let body = lines.get(*start as usize - 1..end as usize).unwrap_or_default().join("\n");
        spans.insert(key.clone(), EntrySpan { lines: *start..=end, text: body });
    }
    spans
}

/// The text of entry `key` of master file `text` at `path` (`None`: the file does not parse or
/// has no such entry).
pub fn entry_text(text: &str, path: &str, key: &str) -> Option<String> {
    let root = yaml::parse(text, path).ok()?;
    entry_spans(&root, text).remove(key).map(|span| span.text)
}

/// The top-level keys of one master file, with their nodes (checks 2-3 of spec 20 §3.1).
pub fn parse_master_file(text: &str, file: &str) -> Result<Vec<(String, Pos, Node)>, MasterConfigError> {
    let root = yaml::parse(text, file).map_err(MasterConfigError::Yaml)?;
    let Some(entries) = root.as_map() else {
        return Err(MasterConfigError::NotMapping { file: file.to_owned(), found: root.value.kind() });
    };
    let mut out = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        let name = key.key_text().map(|k| k.into_owned()).unwrap_or_default();
        if name.contains('*') {
            return Err(MasterConfigError::Wildcard { file: file.to_owned(), pos: key.pos, key: name });
        }
        out.push((name, key.pos, value.clone()));
    }
    Ok(out)
}

/// Loads and validates master files in order (`(path, text)` pairs), like `load_config_files`.
/// The first invalid entry (in master order) is the error.
pub fn load_master_configs(files: &[(&str, &str)]) -> Result<MasterConfigs, MasterConfigError> {
    let mut merged: IndexMap<String, (String, Pos, Node)> = IndexMap::new();
    for (file, text) in files {
        let entries = parse_master_file(text, file)?;
        let mut duplicates: Vec<String> =
            entries.iter().filter(|(k, _, _)| merged.contains_key(k)).map(|(k, _, _)| k.clone()).collect();
        if !duplicates.is_empty() {
            duplicates.sort();
            duplicates.dedup();
            return Err(MasterConfigError::DuplicateKeys { file: (*file).to_owned(), keys: duplicates });
        }
        for (key, pos, node) in entries {
            merged.insert(key, ((*file).to_owned(), pos, node));
        }
    }
    let mut configs = IndexMap::with_capacity(merged.len());
    for (key, (file, pos, node)) in merged {
        let config = validate_entry(&key, &file, pos, &node)?;
        configs.insert(key, config);
    }
    Ok(MasterConfigs { configs })
}

/// Loads master files in order, reading each entry forward (decision TD1): an entry that cannot
/// be read is an error of its own and the others are still read (`sweepgate generate`). Errors
/// of a whole file (missing, not a mapping, duplicate keys) still stop the loading.
pub fn read_master_configs(
    files: &[(&str, &str)],
) -> Result<(MasterConfigs, Vec<MasterConfigError>), MasterConfigError> {
    let mut configs = MasterConfigs::default();
    let mut invalid = Vec::new();
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (file, text) in files {
        let entries = parse_master_file(text, file)?;
        let mut duplicates: Vec<String> =
            entries.iter().filter(|(k, _, _)| seen.contains(k)).map(|(k, _, _)| k.clone()).collect();
        if !duplicates.is_empty() {
            duplicates.sort();
            duplicates.dedup();
            return Err(MasterConfigError::DuplicateKeys { file: (*file).to_owned(), keys: duplicates });
        }
        for (key, pos, node) in entries {
            seen.insert(key.clone());
            match read_entry(&key, file, pos, &node) {
                Ok(config) => {
                    configs.configs.insert(key, config);
                }
                Err(e) => invalid.push(e),
            }
        }
    }
    Ok((configs, invalid))
}

/// Validates one master config entry (spec 20 §3.2-3.6, validators in upstream's order); an
/// unknown field is an error, as upstream's models forbid extra fields.
pub fn validate_entry(key: &str, file: &str, pos: Pos, node: &Node) -> Result<MasterConfig, MasterConfigError> {
    entry(key, file, pos, node, Reading::Strict)
}

/// Reads one master config entry forward (decision TD1): the validators of [`validate_entry`],
/// but a field this reader does not know is carried in [`MasterConfig::unknown`].
pub fn read_entry(key: &str, file: &str, pos: Pos, node: &Node) -> Result<MasterConfig, MasterConfigError> {
    entry(key, file, pos, node, Reading::Forward)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    Strict,
    Forward,
}

fn typed<T: serde::de::DeserializeOwned>(node: &Node, reading: Reading) -> Result<(T, Vec<UnknownField>), YamlError> {
    match reading {
        Reading::Strict => yaml::from_node(node).map(|v| (v, Vec::new())),
        Reading::Forward => forward::from_node(node),
    }
}

fn entry(key: &str, file: &str, pos: Pos, node: &Node, reading: Reading) -> Result<MasterConfig, MasterConfigError> {
    let invalid = |detail: YamlError| MasterConfigError::Invalid { key: key.to_owned(), detail: detail.in_file(file) };
    if node.as_map().is_none() {
        return Err(invalid(YamlError::at(node.pos, format!("expected a mapping, found {}", node.value.kind()))));
    }
    let multinode = matches!(node.get("multinode").map(|n| &n.value), Some(yaml::Value::Bool(true)));
    let (mut config, unknown) = if multinode {
        let (raw, unknown): (RawEntry<MultiNodeSpace>, _) = typed(node, reading).map_err(invalid)?;
        let config = build(key, file, pos, node, raw, |b, block_node| {
            let mut spaces = b.search_space;
            for (i, s) in spaces.iter_mut().enumerate() {
                s.raw = raw_item(block_node, i);
            }
            FixedSpaces::Multi(spaces)
        });
        (config, unknown)
    } else {
        let (raw, unknown): (RawEntry<SingleNodeSpace>, _) = typed(node, reading).map_err(invalid)?;
        let config = build(key, file, pos, node, raw, |b, block_node| {
            let mut spaces = b.search_space;
            for (i, s) in spaces.iter_mut().enumerate() {
                s.raw = raw_item(block_node, i);
            }
            FixedSpaces::Single(spaces)
        });
        (config, unknown)
    };
    check(&config, node).map_err(invalid)?;
    config.unknown = unknown;
    Ok(config)
}

/// The raw JSON of search-space entry `index` of a scenario block (taken from the entry's JSON,
/// which is converted from YAML once).
fn raw_item(block: Option<&Json>, index: usize) -> Map<String, Json> {
    match block.and_then(|b| b.get("search-space")).and_then(|s| s.get(index)) {
        Some(Json::Object(m)) => m.clone(),
        _ => Map::new(),
    }
}

fn build<S>(
    key: &str,
    file: &str,
    pos: Pos,
    node: &Node,
    raw: RawEntry<S>,
    spaces: impl Fn(RawFixedBlock<S>, Option<&Json>) -> FixedSpaces,
) -> MasterConfig {
    let entry_json = node.to_json();
    let scenario = |name: &str| entry_json.get("scenarios").and_then(|s| s.get(name)).and_then(Json::as_array);
    let fixed_nodes = scenario("fixed-seq-len");
    let fixed = raw
        .scenarios
        .fixed_seq_len
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, b)| {
            let (isl, osl) = (b.isl, b.osl);
            FixedBlock { isl, osl, search_space: spaces(b, fixed_nodes.and_then(|f| f.get(i))) }
        })
        .collect();
    let agentic_nodes = scenario("agentic-coding");
    let agentic = raw
        .scenarios
        .agentic_coding
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, mut block)| {
            let block_node = agentic_nodes.and_then(|a| a.get(i));
            for (j, s) in block.search_space.iter_mut().enumerate() {
                s.raw = raw_item(block_node, j);
            }
            block
        })
        .collect();
    MasterConfig {
        key: key.to_owned(),
        file: file.to_owned(),
        pos,
        image: raw.image,
        model: raw.model,
        model_prefix: raw.model_prefix,
        precision: raw.precision,
        framework: raw.framework,
        runner: raw.runner,
        multinode: raw.multinode,
        disagg: raw.disagg,
        router: raw.router,
        kv_p2p_transfer: raw.kv_p2p_transfer,
        fixed,
        agentic,
        raw: entry_json,
        unknown: Vec::new(),
    }
}

/// Locates an error at a node found by path below the entry (falls back to the entry).
struct Locator<'a> {
    entry: &'a Node,
}

impl Locator<'_> {
    fn at(&self, path: &[PathSeg<'_>], message: impl Into<String>) -> YamlError {
        let mut node = Some(self.entry);
        let mut field = String::new();
        for seg in path {
            match seg {
                PathSeg::Key(k) => {
                    node = node.and_then(|n| n.get(k));
                    if !field.is_empty() {
                        field.push('.');
                    }
                    field.push_str(k);
                }
                PathSeg::Index(i) => {
                    node = node.and_then(|n| n.as_seq()).and_then(|s| s.get(*i));
                    field.push_str(&format!("[{i}]"));
                }
            }
        }
        YamlError {
            file: None,
            pos: Some(node.unwrap_or(self.entry).pos),
            field: (!field.is_empty()).then_some(field),
            message: message.into(),
        }
    }
}

#[derive(Clone, Copy)]
enum PathSeg<'a> {
    Key(&'a str),
    Index(usize),
}
use PathSeg::{Index, Key};

fn check_component(loc: &Locator<'_>, path: &[PathSeg<'_>], m: &ComponentMetadata) -> Result<(), YamlError> {
    if m.name.is_empty() {
        return Err(loc.at(&[path, &[Key("name")]].concat(), "String should have at least 1 character"));
    }
    if m.version.is_empty() {
        return Err(loc.at(&[path, &[Key("version")]].concat(), "String should have at least 1 character"));
    }
    if m.version.starts_with("image:") {
        return Err(loc.at(
            &[path, &[Key("version")]].concat(),
            "component version must be a release, package version, or source commit, not an image reference",
        ));
    }
    Ok(())
}

fn check_backend(loc: &Locator<'_>, path: &[PathSeg<'_>], b: &KvOffloadBackend) -> Result<(), YamlError> {
    if b.name.is_empty() {
        return Err(loc.at(&[path, &[Key("name")]].concat(), "String should have at least 1 character"));
    }
    match &b.version {
        Some(v) if v.is_empty() => {
            Err(loc.at(&[path, &[Key("version")]].concat(), "String should have at least 1 character"))
        }
        Some(v) if v.starts_with("image:") => Err(loc.at(
            &[path, &[Key("version")]].concat(),
            "component version must be a release, package version, or source commit, not an image reference",
        )),
        _ => Ok(()),
    }
}

fn check_positive(loc: &Locator<'_>, path: &[PathSeg<'_>], fields: &[(&str, i64)]) -> Result<(), YamlError> {
    for (name, value) in fields {
        if *value <= 0 {
            return Err(
                loc.at(&[path, &[Key(name)]].concat(), format!("Input should be greater than 0, found {value}"))
            );
        }
    }
    Ok(())
}

fn check_tp_dcp(loc: &Locator<'_>, path: &[PathSeg<'_>], tp: i64, dcp: i64) -> Result<(), YamlError> {
    if dcp != 0 && tp % dcp != 0 {
        return Err(loc.at(path, format!("'tp' ({tp}) must be divisible by 'dcp-size' ({dcp})")));
    }
    Ok(())
}

fn check_worker(loc: &Locator<'_>, path: &[PathSeg<'_>], w: &Worker) -> Result<(), YamlError> {
    check_positive(loc, path, &[("pp", w.pp), ("dcp-size", w.dcp_size), ("pcp-size", w.pcp_size)])?;
    if w.hardware.as_deref() == Some("") {
        return Err(loc.at(&[path, &[Key("hardware")]].concat(), "String should have at least 1 character"));
    }
    check_tp_dcp(loc, path, w.tp, w.dcp_size)
}

fn check_hardware_pair(loc: &Locator<'_>, path: &[PathSeg<'_>], p: &Worker, d: &Worker) -> Result<(), YamlError> {
    let has = |w: &Worker| w.hardware.as_deref().is_some_and(|h| !h.is_empty());
    if has(p) != has(d) {
        return Err(loc.at(path, "'hardware' must be specified for both 'prefill' and 'decode', or neither"));
    }
    Ok(())
}

/// `_validate_conc_fields`.
fn check_conc(loc: &Locator<'_>, path: &[PathSeg<'_>], c: &ConcFields) -> Result<(), YamlError> {
    let range = c.start.zip(c.end);
    let list = c.list.as_ref().filter(|l| !l.is_empty());
    match (range, list) {
        (Some(_), Some(_)) => Err(loc.at(
            path,
            "Cannot specify both 'conc-list' list and 'conc-start'/'conc-end'. Use either a list or a range, not both.",
        )),
        (None, None) => Err(loc.at(path, "Must specify either 'conc-list' list or both 'conc-start' and 'conc-end'.")),
        (Some((s, e)), None) => {
            if s <= 0 || e <= 0 {
                Err(loc.at(path, "Input 'conc-start' and 'conc-end' must be greater than 0."))
            } else if s > e {
                Err(loc.at(path, format!("'conc-start' ({s}) must be <= 'conc-end' ({e}).")))
            } else {
                Ok(())
            }
        }
        (None, Some(l)) => {
            if l.iter().any(|x| *x <= 0) {
                Err(loc.at(path, "Input 'conc-list' entries must be greater than 0."))
            } else {
                Ok(())
            }
        }
    }
}

fn check_optional_str(
    loc: &Locator<'_>,
    path: &[PathSeg<'_>],
    name: &str,
    v: &Option<String>,
) -> Result<(), YamlError> {
    if v.as_deref() == Some("") {
        return Err(loc.at(&[path, &[Key(name)]].concat(), "String should have at least 1 character"));
    }
    Ok(())
}

fn check_agentic_space(
    loc: &Locator<'_>,
    path: &[PathSeg<'_>],
    s: &AgenticSpace,
    multinode: bool,
) -> Result<(), YamlError> {
    if let Some(r) = &s.router {
        check_component(loc, &[path, &[Key("router")]].concat(), r)?;
    }
    if let Some(b) = &s.kv_offload_backend {
        check_backend(loc, &[path, &[Key("kv-offload-backend")]].concat(), b)?;
    }
    check_optional_str(loc, path, "kv-p2p-transfer", &s.kv_p2p_transfer)?;
    check_optional_str(loc, path, "srt-recipe", &s.srt_recipe)?;
    if multinode && s.srt_recipe.is_some() {
        return Err(loc.at(
            &[path, &[Key("srt-recipe")]].concat(),
            "srt-recipe is a single-node field; multinode rows name their recipe with CONFIG_FILE= in additional-settings",
        ));
    }
    check_positive(loc, path, &[("pp", s.pp), ("dcp-size", s.dcp_size), ("pcp-size", s.pcp_size)])?;
    for (role, w) in [("prefill", &s.prefill), ("decode", &s.decode), ("worker", &s.worker)] {
        if let Some(w) = w {
            check_worker(loc, &[path, &[Key(role)]].concat(), w)?;
        }
    }
    if let Some(n) = s.num_nodes {
        check_positive(loc, path, &[("num-nodes", n)])?;
    }
    check_conc(loc, path, &s.conc())?;
    match (s.kv_offloading, &s.kv_offload_backend) {
        (None, Some(_)) => return Err(loc.at(path, "kv-offload-backend requires kv-offloading")),
        (Some(KvOffloading::None), Some(_)) => {
            return Err(loc.at(path, "kv-offload-backend can only be set when kv-offloading is not 'none'"))
        }
        (Some(KvOffloading::Dram), None) => {
            return Err(loc.at(path, "kv-offload-backend is required when kv-offloading is 'dram'"))
        }
        _ => {}
    }
    let single_shape = s.tp.is_some();
    let aggregated = s.worker.is_some() || s.num_nodes.is_some();
    if aggregated {
        // Decision TD3: the aggregated multinode shape (`num-nodes` + `worker`) of the Oct 2026
        // master configs; it excludes the single-node and the disaggregated shapes.
        if single_shape || s.prefill.is_some() || s.decode.is_some() {
            return Err(loc.at(
                path,
                "Aggregated agentic search-space entries (worker, num-nodes) cannot also specify tp, prefill or decode",
            ));
        }
        if s.worker.is_none() || s.num_nodes.is_none() {
            return Err(loc.at(path, "Aggregated agentic search-space entries must specify both worker and num-nodes"));
        }
    }
    let valid = if single_shape {
        s.prefill.is_none() && s.decode.is_none()
    } else {
        aggregated || (s.prefill.is_some() && s.decode.is_some())
    };
    if !valid {
        return Err(loc.at(path, "Agentic search-space entries must specify either tp or both prefill and decode"));
    }
    if let Some(tp) = s.tp {
        if s.kv_offloading.is_none() {
            return Err(loc.at(path, "Single-node agentic search-space entries must specify kv-offloading"));
        }
        check_tp_dcp(loc, path, tp, s.dcp_size)?;
    }
    if let (Some(p), Some(d)) = (&s.prefill, &s.decode) {
        if ["pp", "dcp-size", "pcp-size"].iter().any(|k| s.raw.contains_key(*k)) {
            return Err(
                loc.at(path, "Multinode agentic search-space entries cannot specify 'pp', 'dcp-size', 'pcp-size'")
            );
        }
        check_hardware_pair(loc, path, p, d)?;
        if s.raw.get("kv-offloading").is_some_and(Json::is_null) {
            return Err(loc.at(
                &[path, &[Key("kv-offloading")]].concat(),
                "kv-offloading: null is not a mode; omit it (none) or write none or dram",
            ));
        }
    }
    // Decision M2: the agentic shape must match the config's topology (upstream: KeyError later).
    if multinode && single_shape {
        return Err(loc.at(path, "multinode configs need agentic search-space entries with prefill and decode, not tp"));
    }
    if !multinode && !single_shape {
        return Err(loc.at(path, "single-node configs need agentic search-space entries with tp, not prefill/decode"));
    }
    Ok(())
}

/// The model validators of spec 20 §3.2-3.6, inner models first (pydantic's order).
fn check(c: &MasterConfig, node: &Node) -> Result<(), YamlError> {
    let loc = Locator { entry: node };
    if let Some(r) = &c.router {
        check_component(&loc, &[Key("router")], r)?;
    }
    if !c.multinode {
        if node.get("kv-p2p-transfer").is_some() {
            return Err(loc.at(
                &[Key("kv-p2p-transfer")],
                "Extra inputs are not permitted (kv-p2p-transfer is only valid when multinode=true)",
            ));
        }
        if c.disagg {
            return Err(loc.at(&[Key("disagg")], "Input should be False (single-node configs cannot be disaggregated)"));
        }
    }
    check_optional_str(&loc, &[], "kv-p2p-transfer", &c.kv_p2p_transfer)?;
    for (bi, block) in c.fixed.iter().enumerate() {
        let base = [Key("scenarios"), Key("fixed-seq-len"), Index(bi), Key("search-space")];
        match &block.search_space {
            FixedSpaces::Single(spaces) => {
                for (si, s) in spaces.iter().enumerate() {
                    let path = [&base[..], &[Index(si)]].concat();
                    if let Some(r) = &s.router {
                        check_component(&loc, &[&path[..], &[Key("router")]].concat(), r)?;
                    }
                    check_positive(&loc, &path, &[("pp", s.pp), ("dcp-size", s.dcp_size), ("pcp-size", s.pcp_size)])?;
                    check_optional_str(&loc, &path, "srt-recipe", &s.srt_recipe)?;
                    check_conc(&loc, &path, &s.conc())?;
                    check_tp_dcp(&loc, &path, s.tp, s.dcp_size)?;
                }
            }
            FixedSpaces::Multi(spaces) => {
                for (si, s) in spaces.iter().enumerate() {
                    let path = [&base[..], &[Index(si)]].concat();
                    if let Some(r) = &s.router {
                        check_component(&loc, &[&path[..], &[Key("router")]].concat(), r)?;
                    }
                    check_optional_str(&loc, &path, "kv-p2p-transfer", &s.kv_p2p_transfer)?;
                    check_worker(&loc, &[&path[..], &[Key("prefill")]].concat(), &s.prefill)?;
                    check_worker(&loc, &[&path[..], &[Key("decode")]].concat(), &s.decode)?;
                    check_conc(&loc, &path, &s.conc())?;
                    check_hardware_pair(&loc, &path, &s.prefill, &s.decode)?;
                }
            }
        }
    }
    for (bi, block) in c.agentic.iter().enumerate() {
        let base = [Key("scenarios"), Key("agentic-coding"), Index(bi)];
        for (si, s) in block.search_space.iter().enumerate() {
            let path = [&base[..], &[Key("search-space"), Index(si)]].concat();
            check_agentic_space(&loc, &path, s, c.multinode)?;
        }
        if let Some(u) = block.dram_utilization {
            if !(u > 0.0 && u <= 1.0) {
                return Err(loc.at(
                    &[&base[..], &[Key("dram-utilization")]].concat(),
                    format!("dram-utilization must be > 0 and <= 1, found {u}"),
                ));
            }
        }
        let needs_dram = block.search_space.iter().any(|s| s.kv_offloading == Some(KvOffloading::Dram));
        if needs_dram && block.dram_utilization.is_none() {
            return Err(loc.at(&base, "kv-offloading='dram' requires dram-utilization with runner hardware metadata"));
        }
    }
    if c.fixed.is_empty() && c.agentic.is_empty() {
        return Err(loc.at(&[Key("scenarios")], "At least one scenario type must be specified"));
    }
    if !c.agentic.is_empty() && !c.runner.starts_with(CLUSTER_LABEL_PREFIX) {
        return Err(loc.at(
            &[Key("runner")],
            "Agentic master configs must use a 'cluster:<name>' runner so every point runs on one exact hardware fleet.",
        ));
    }
    check_component_scope(c, &loc)
}

fn check_component_scope(c: &MasterConfig, loc: &Locator<'_>) -> Result<(), YamlError> {
    // (router set, kv-p2p-transfer set) of every search-space entry.
    let mut entries: Vec<(bool, bool)> = Vec::new();
    for block in &c.fixed {
        match &block.search_space {
            FixedSpaces::Single(s) => entries.extend(s.iter().map(|s| (s.router.is_some(), false))),
            FixedSpaces::Multi(s) => {
                entries.extend(s.iter().map(|s| (s.router.is_some(), s.kv_p2p_transfer.is_some())))
            }
        }
    }
    for block in &c.agentic {
        entries.extend(block.search_space.iter().map(|s| (s.router.is_some(), s.kv_p2p_transfer.is_some())));
    }
    if c.router.is_some() && entries.iter().any(|e| e.0) {
        return Err(loc.at(
            &[Key("router")],
            "router must be declared either at the top level or in search-space entries, not both",
        ));
    }
    if c.kv_p2p_transfer.is_some() && entries.iter().any(|e| e.1) {
        return Err(loc.at(
            &[Key("kv-p2p-transfer")],
            "kv-p2p-transfer must be declared either at the top level or in search-space entries, not both",
        ));
    }
    if !c.multinode && entries.iter().any(|e| e.1) {
        return Err(loc.at(&[Key("scenarios")], "kv-p2p-transfer is only valid when multinode=true"));
    }
    if c.disagg && c.kv_p2p_transfer.is_none() && (entries.is_empty() || entries.iter().any(|e| !e.1)) {
        return Err(loc.at(
            &[Key("disagg")],
            "disagg=true requires kv-p2p-transfer at the top level or in every search-space entry",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
