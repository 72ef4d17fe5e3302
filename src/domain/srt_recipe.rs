//! SRT-Slurm recipes: `base`, `override_*`, `zip_override_*` (spec 50 §1-2).
//!
//! A recipe is kept as the positioned YAML tree, so every resolved value still points at the
//! line it came from (the base or the variant section). Variant resolution copies srtctl's
//! `generate_override_configs` exactly: deep merge (maps merge, lists replace, `null` deletes),
//! `override_<suffix>` → one variant, `zip_override_<group>` → N variants paired by index, the
//! selector forms of `parse_config_arg`, and srtctl's enumeration order.

use std::fmt;

use regex::Regex;

use crate::diag::Diagnostic;
use crate::yaml::{self, KeyIndex, Node, Pos, Value, YamlError};

mod facts;
pub mod overrides;

pub use facts::{is_schema2, pos_of, Backend, EngineFacts, RecipeFacts, Role};

/// Mapping entries in document order.
pub type Entries = [(Node, Node)];

const OVERRIDE_PREFIX: &str = "override_";
/// The top-level key that declares a recipe's schema (srt-slurm schema 2).
const SCHEMA_KEY: &str = "schema";
const ZIP_PREFIX: &str = "zip_override_";

/// A recipe problem, located in its file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RecipeError {
    #[error(transparent)]
    Yaml(#[from] YamlError),
    #[error("{}", Located { file, pos: *pos, message })]
    Invalid { file: String, pos: Option<Pos>, message: String },
    #[error(
        "invalid selector '{0}': it must be 'base', 'override_<name>', 'zip_override_<name>', \
         'zip_override_<name>[N]', or a glob pattern like '*mtp*'"
    )]
    BadSelector(String),
}

struct Located<'a> {
    file: &'a str,
    pos: Option<Pos>,
    message: &'a str,
}

impl fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pos {
            Some(pos) => write!(f, "{}:{pos}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl RecipeError {
    pub fn invalid(file: &str, pos: Option<Pos>, message: impl Into<String>) -> RecipeError {
        RecipeError::Invalid { file: file.to_owned(), pos, message: message.into() }
    }

    /// The error as a lint diagnostic of `file`.
    pub fn to_diagnostic(&self, file: &str) -> Diagnostic {
        match self {
            RecipeError::Yaml(e) => Diagnostic::from_yaml(file, e),
            RecipeError::Invalid { file, pos, message } => Diagnostic::new(file.clone(), *pos, message.clone()),
            RecipeError::BadSelector(_) => Diagnostic::new(file, None, self.to_string()),
        }
    }
}

/// Which variants of a multi-variant file to resolve (the text after the last `:` of `-f`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// `base`: the base section alone.
    Base,
    /// `override_<name>`: that one variant.
    Override(String),
    /// `zip_override_<group>`: every variant of the group.
    ZipGroup(String),
    /// `zip_override_<group>[i]`: variant i (0-based) of the group.
    ZipIndex(String, usize),
    /// Contains `*` or `?`: fnmatch against the sorted `override_*` and `zip_override_*` keys.
    Glob(String),
}

impl Selector {
    /// Parses a selector the way `srtctl` validates it before loading anything.
    pub fn parse(text: &str) -> Result<Selector, RecipeError> {
        let bad = || RecipeError::BadSelector(text.to_owned());
        if let Some(caps) = zip_index_regex().captures(text) {
            let group = caps.get(1).map_or("", |m| m.as_str()).to_owned();
            let index = caps.get(2).and_then(|m| m.as_str().parse::<usize>().ok()).ok_or_else(bad)?;
            return Ok(Selector::ZipIndex(group, index));
        }
        if text == "base" {
            return Ok(Selector::Base);
        }
        if text.contains('*') || text.contains('?') {
            return Ok(Selector::Glob(text.to_owned()));
        }
        if let Some(group) = text.strip_prefix(ZIP_PREFIX) {
            if is_zip_group_name(group) {
                return Ok(Selector::ZipGroup(text.to_owned()));
            }
        }
        if text
            .strip_prefix(OVERRIDE_PREFIX)
            .is_some_and(|rest| !rest.is_empty() && !rest.contains(char::is_whitespace))
        {
            return Ok(Selector::Override(text.to_owned()));
        }
        Err(bad())
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selector::Base => f.write_str("base"),
            Selector::Override(key) | Selector::ZipGroup(key) | Selector::Glob(key) => f.write_str(key),
            Selector::ZipIndex(key, i) => write!(f, "{key}[{i}]"),
        }
    }
}

fn zip_index_regex() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^(zip_override_[\w-]+)\[(\d+)\]$").unwrap_or_else(|e| unreachable!("{e}")))
}

fn is_zip_group_name(group: &str) -> bool {
    !group.is_empty() && group.chars().all(|c| c == '-' || c == '_' || c.is_alphanumeric())
}

/// `CONFIG_FILE=<path>[:selector]` split like srtctl's `parse_config_arg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipeRef {
    pub path: String,
    pub selector: Option<Selector>,
}

impl RecipeRef {
    pub fn parse(arg: &str) -> Result<RecipeRef, RecipeError> {
        match arg.rsplit_once(':') {
            None => Ok(RecipeRef { path: arg.to_owned(), selector: None }),
            Some((path, _)) if path.trim().is_empty() => {
                Err(RecipeError::invalid(arg, None, "invalid config path in selector syntax (nothing before ':')"))
            }
            Some((path, selector)) => {
                Ok(RecipeRef { path: path.to_owned(), selector: Some(Selector::parse(selector)?) })
            }
        }
    }
}

impl fmt::Display for RecipeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.selector {
            Some(s) => write!(f, "{}:{s}", self.path),
            None => f.write_str(&self.path),
        }
    }
}

/// One parsed recipe file.
#[derive(Debug, Clone)]
pub struct Recipe {
    pub file: String,
    pub root: Node,
    /// Duplicate keys (srtctl keeps the last value; so does sweepgate).
    pub warnings: Vec<YamlError>,
}

/// One resolved variant: the config srtctl would run.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// How to select exactly this variant: `base`, `override_x`, `zip_override_g[i]`; empty for
    /// a plain (single-variant) file.
    pub selector: String,
    /// srtctl's suffix (`config_<suffix>.yaml`); None for a plain file.
    pub suffix: Option<String>,
    pub config: Node,
}

/// The variants a selector yields, plus warnings (a selector on a plain file is ignored).
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    pub variants: Vec<Variant>,
    pub warnings: Vec<String>,
}

impl Variant {
    /// The resolved `name` field (srtctl's job name).
    pub fn name(&self) -> Option<&Node> {
        self.config.get("name")
    }

    /// srtctl expands a top-level `sweep:` into several jobs; sweepgate dispatches one point as
    /// one job, so such a variant is refused for dispatch.
    pub fn has_sweep(&self) -> bool {
        self.config.get("sweep").is_some()
    }

    /// `{"name": …, "selector": …, "config": {…}}`, as `sweepgate recipe resolve` prints it.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "name": self.name().map_or(serde_json::Value::Null, Node::to_json),
            "selector": self.selector,
            "config": self.config.to_json(),
        })
    }
}

impl Recipe {
    /// Parses recipe text. Duplicate keys are kept as warnings, as srtctl (PyYAML) reads them.
    pub fn parse(text: &str, file: &str) -> Result<Recipe, RecipeError> {
        let (root, warnings) = yaml::parse_lenient(text, file)?;
        match &root.value {
            Value::Map(_) => Ok(Recipe { file: file.to_owned(), root, warnings }),
            Value::Null => Err(RecipeError::invalid(file, Some(root.pos), "the recipe is empty")),
            other => Err(RecipeError::invalid(
                file,
                Some(root.pos),
                format!("the top level of a recipe must be a mapping, found {}", other.kind()),
            )),
        }
    }

    /// The model the recipe serves (`model.path`), as written at its top level.
    pub fn model_path(&self) -> Option<&str> {
        self.root.get("model").and_then(|m| m.get("path")).and_then(Node::as_str)
    }

    /// A multi-variant file has a top-level `base` key (spec 50 §2.1).
    pub fn is_multi_variant(&self) -> bool {
        self.root.get("base").is_some()
    }

    /// `override_*` keys, then `zip_override_*` keys, each sorted (srtctl's order).
    pub fn variant_keys(&self) -> (Vec<&str>, Vec<&str>) {
        let keys = || self.root.as_map().unwrap_or_default().iter().filter_map(|(k, _)| k.as_str());
        let mut overrides: Vec<&str> = keys().filter(|k| k.starts_with(OVERRIDE_PREFIX)).collect();
        let mut zips: Vec<&str> = keys().filter(|k| k.starts_with(ZIP_PREFIX)).collect();
        overrides.sort_unstable();
        zips.sort_unstable();
        (overrides, zips)
    }

    /// Resolves the variants `selector` names; `None` enumerates every variant (never `base`).
    pub fn resolve(&self, selector: Option<&Selector>) -> Result<Resolution, RecipeError> {
        if !self.is_multi_variant() {
            let warnings = selector
                .map(|s| format!("{}: selector '{s}' ignored: the recipe has no 'base' section", self.file))
                .into_iter()
                .collect();
            let plain = Variant { selector: String::new(), suffix: None, config: self.root.clone() };
            return Ok(Resolution { variants: vec![plain], warnings });
        }
        let base = self.base()?;
        let (overrides, zips) = self.variant_keys();
        let budget = &mut NodeBudget { left: yaml::MAX_NODES };
        let variants = match selector {
            None => {
                let mut out = Vec::new();
                for key in &overrides {
                    out.push(self.override_variant(base, key, budget)?);
                }
                for key in &zips {
                    out.extend(self.zip_variants(base, key, budget)?);
                }
                out
            }
            Some(Selector::Base) => {
                vec![Variant { selector: "base".into(), suffix: Some("base".into()), config: base.clone() }]
            }
            Some(Selector::ZipIndex(key, index)) => {
                if self.root.get(key).is_none() {
                    let available = list_or_none(zips.iter().map(|k| format!("{k}[i]")));
                    return Err(self.error(None, format!("'{key}' not found; available zip groups: {available}")));
                }
                let mut all = self.zip_variants(base, key, budget)?;
                if *index >= all.len() {
                    return Err(self.error(
                        self.root.get(key).map(|n| n.pos),
                        format!(
                            "index [{index}] out of range for '{key}' (it has {} variants, valid: 0-{})",
                            all.len(),
                            all.len() - 1
                        ),
                    ));
                }
                vec![all.swap_remove(*index)]
            }
            Some(Selector::Glob(pattern)) => {
                let matcher = fnmatch_regex(pattern);
                let mut all: Vec<&str> = overrides.iter().chain(zips.iter()).copied().collect();
                all.sort_unstable();
                let matched: Vec<&str> = all.into_iter().filter(|k| matcher.is_match(k)).collect();
                if matched.is_empty() {
                    return Err(self.error(
                        None,
                        format!("no variants match '{pattern}'; available: {}", self.available(&overrides, &zips)),
                    ));
                }
                let mut out = Vec::new();
                for key in matched {
                    if key.starts_with(ZIP_PREFIX) {
                        out.extend(self.zip_variants(base, key, budget)?);
                    } else {
                        out.push(self.override_variant(base, key, budget)?);
                    }
                }
                out
            }
            Some(Selector::ZipGroup(key)) => {
                if self.root.get(key).is_none() {
                    let available = list_or_none(zips.iter().map(|k| (*k).to_owned()));
                    return Err(self.error(None, format!("'{key}' not found; available: {available}")));
                }
                self.zip_variants(base, key, budget)?
            }
            Some(Selector::Override(key)) => {
                if self.root.get(key).is_none() {
                    return Err(self.error(
                        None,
                        format!("override '{key}' not found; available: {}", self.available(&overrides, &zips)),
                    ));
                }
                vec![self.override_variant(base, key, budget)?]
            }
        };
        Ok(Resolution { variants: self.with_file_schema(variants), warnings: Vec::new() })
    }

    /// Schema-2 files may declare `schema: 2` once at the top, next to `base` (InferenceX's
    /// `dsv41flash/vllm/mi300x-fp4/agentx/*-variants.yaml`): every variant has that schema
    /// unless its own config says otherwise (decision TD4).
    fn with_file_schema(&self, mut variants: Vec<Variant>) -> Vec<Variant> {
        let Some(entry) = self.root.as_map().unwrap_or_default().iter().find(|(k, _)| k.as_str() == Some(SCHEMA_KEY))
        else {
            return variants;
        };
        for v in &mut variants {
            if let Value::Map(entries) = &mut v.config.value {
                if !entries.iter().any(|(k, _)| k.as_str() == Some(SCHEMA_KEY)) {
                    entries.insert(0, entry.clone());
                }
            }
        }
        variants
    }

    fn available(&self, overrides: &[&str], zips: &[&str]) -> String {
        list_or_none(overrides.iter().map(|k| (*k).to_owned()).chain(zips.iter().map(|k| format!("{k}[i]"))))
    }

    fn error(&self, pos: Option<Pos>, message: String) -> RecipeError {
        RecipeError::invalid(&self.file, pos, message)
    }

    fn base(&self) -> Result<&Node, RecipeError> {
        let base = self.root.get("base").ok_or_else(|| self.error(None, "no 'base' section".into()))?;
        match base.value {
            Value::Map(_) => Ok(base),
            ref other => Err(self.error(Some(base.pos), format!("'base' must be a mapping, found {}", other.kind()))),
        }
    }

    /// The section under `key`, which must be a mapping.
    fn section(&self, key: &str) -> Result<(&Node, &Entries), RecipeError> {
        let (key_node, value) = self
            .root
            .as_map()
            .unwrap_or_default()
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .ok_or_else(|| self.error(None, format!("no section '{key}'")))?;
        match value.as_map() {
            Some(entries) => Ok((key_node, entries)),
            None => Err(self.error(
                Some(value.pos),
                format!("'{key}' must be a mapping of fields to merge onto 'base', found {}", value.value.kind()),
            )),
        }
    }

    /// srtctl's textual form of the base name in synthesized names (`str(base.get("name",
    /// "unnamed"))`).
    fn base_name(&self, base: &Node) -> Result<String, RecipeError> {
        match base.get("name") {
            None => Ok("unnamed".into()),
            Some(n) => python_str(n).ok_or_else(|| {
                self.error(Some(n.pos), format!("base.name must be a string, found {}", n.value.kind()))
            }),
        }
    }

    fn override_variant(&self, base: &Node, key: &str, budget: &mut NodeBudget) -> Result<Variant, RecipeError> {
        let (key_node, entries) = self.section(key)?;
        budget.spend(self, key, key_node.pos, 1, base.size() + entries_size(entries))?;
        let suffix = key.strip_prefix(OVERRIDE_PREFIX).unwrap_or(key).to_owned();
        let mut merged = deep_merge(map_entries(base), entries);
        if !entries.iter().any(|(k, _)| k.as_str() == Some("name")) {
            let name = format!("{}_{suffix}", self.base_name(base)?);
            set_key(&mut merged, "name", Node { value: Value::Str(name), pos: key_node.pos });
        }
        Ok(Variant {
            selector: key.to_owned(),
            suffix: Some(suffix),
            config: Node { value: Value::Map(merged), pos: base.pos },
        })
    }

    fn zip_variants(&self, base: &Node, key: &str, budget: &mut NodeBudget) -> Result<Vec<Variant>, RecipeError> {
        let (key_node, entries) = self.section(key)?;
        let group = key.strip_prefix(ZIP_PREFIX).unwrap_or(key);
        let n = self.zip_length(key, key_node, entries)?;
        budget.spend(self, key, key_node.pos, n, base.size() + entries_size(entries))?;
        let has_name_list = entries.iter().any(|(k, v)| k.as_str() == Some("name") && v.as_seq().is_some());
        let base_name = if has_name_list { String::new() } else { self.base_name(base)? };
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let sliced = zip_slice(entries, i);
            let mut merged = deep_merge(map_entries(base), &sliced);
            if !has_name_list {
                let name = Node { value: Value::Str(format!("{base_name}_{group}_{i}")), pos: key_node.pos };
                set_key(&mut merged, "name", name);
            }
            out.push(Variant {
                selector: format!("{key}[{i}]"),
                suffix: Some(format!("{group}_{i}")),
                config: Node { value: Value::Map(merged), pos: base.pos },
            });
        }
        Ok(out)
    }

    /// N for a zip group: one-element lists broadcast, every other list must have length N.
    fn zip_length(&self, key: &str, key_node: &Node, entries: &Entries) -> Result<usize, RecipeError> {
        let mut lists: Vec<(usize, Pos, String)> = Vec::new();
        collect_lists(entries, "", &mut lists);
        if lists.is_empty() {
            return Err(self.error(
                Some(key_node.pos),
                format!("'{key}' contains no list values: nothing to zip (use override_* for a single variant)"),
            ));
        }
        if let Some((_, pos, path)) = lists.iter().find(|(len, _, _)| *len == 0) {
            return Err(self.error(Some(*pos), format!("{key}.{path}: an empty list cannot be zipped")));
        }
        let mut lengths: Vec<usize> = lists.iter().map(|(len, _, _)| *len).filter(|len| *len != 1).collect();
        lengths.sort_unstable();
        lengths.dedup();
        match lengths.as_slice() {
            [] => Ok(1),
            [n] => Ok(*n),
            _ => {
                let detail: Vec<String> = lists
                    .iter()
                    .filter(|(len, _, _)| *len != 1)
                    .map(|(len, pos, path)| format!("{path} has {len} (line {})", pos.line))
                    .collect();
                Err(self.error(
                    Some(key_node.pos),
                    format!(
                        "'{key}': incompatible zip lengths {lengths:?}; every list must have the same length or \
                         length 1 (broadcast): {}",
                        detail.join(", ")
                    ),
                ))
            }
        }
    }
}

/// A single-node master search-space point (newer master schema: the row names its recipe
/// with `srt-recipe:`): what the schema-2 variant serving it must run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SingleNodePoint {
    pub tp: i64,
    pub ep: i64,
    pub conc: i64,
    /// `none` or `dram`.
    pub kv_offloading: String,
}

/// A resolved variant with its facts.
#[derive(Debug, Clone)]
pub struct FactVariant {
    pub variant: Variant,
    pub facts: RecipeFacts,
}

impl FactVariant {
    /// The variant's aggregated engine parallelism as (TP, EP); `(1, 1)` without engine flags.
    pub fn tp_ep(&self) -> (i64, i64) {
        self.facts.tp_ep()
    }

    /// It runs `conc` in the point's KV band (a variant without `KV_OFFLOADING` serves either).
    pub fn runs(&self, conc: i64, kv_offloading: &str) -> bool {
        self.facts.runs(conc, kv_offloading)
    }

    /// It serves the point: same concurrency and KV band, same TP and EP.
    pub fn serves(&self, point: &SingleNodePoint) -> bool {
        self.facts.serves(point)
    }
}

impl RecipeFacts {
    /// The aggregated engine parallelism as (TP, EP); `(1, 1)` without engine flags.
    pub fn tp_ep(&self) -> (i64, i64) {
        self.engine(Role::Agg).map_or((1, 1), |e| (e.tp, e.ep))
    }

    /// It runs `conc` in the point's KV band (a variant without `KV_OFFLOADING` serves either).
    /// A custom benchmark that pins no concurrency runs what the launcher passes it
    /// (`qwen3.5/sglang/h100-fp8/agentic.yaml`: one variant per KV band), as [`srt::check`]
    /// reads multinode recipes.
    ///
    /// [`srt::check`]: crate::domain::srt::check
    pub fn runs(&self, conc: i64, kv_offloading: &str) -> bool {
        let conc_ok = match self.concurrencies.as_deref() {
            Some(pinned) => pinned == [conc],
            None => self.benchmark_type == "custom",
        };
        conc_ok && self.kv_offloading.as_deref().is_none_or(|kv| kv == kv_offloading)
    }

    /// It serves a single-node point: same concurrency and KV band, same EP, and the point's TP
    /// is the worker's literal tensor-parallel size or, as InferenceX writes a vLLM DEP worker,
    /// its GPU count (`tp: 8` for `tensor-parallel-size: 1, data-parallel-size: 8`, decision R5).
    pub fn serves(&self, point: &SingleNodePoint) -> bool {
        let (tp, ep) = self.tp_ep();
        let gpus = self.engine(Role::Agg).map_or(1, EngineFacts::gpus);
        self.runs(point.conc, &point.kv_offloading) && (point.tp == tp || point.tp == gpus) && point.ep == ep
    }
}

impl Recipe {
    /// Every variant srtctl enumerates (`base` excluded; a plain file is its one variant), with
    /// its facts.
    pub fn fact_variants(&self) -> Result<Vec<FactVariant>, RecipeError> {
        self.resolve(None)?
            .variants
            .into_iter()
            .map(|variant| Ok(FactVariant { facts: RecipeFacts::read(&variant.config, &self.file)?, variant }))
            .collect()
    }
}

/// Lint findings for one recipe file (spec 50 §2): duplicate keys and ignored keys are
/// warnings; syntax, multi-variant structure and ill-typed dispatch fields are errors; a
/// `sweep:` variant is a warning (srtctl runs it, sweepgate will not dispatch it).
pub fn lint(text: &str, file: &str) -> Vec<Diagnostic> {
    let recipe = match Recipe::parse(text, file) {
        Ok(r) => r,
        Err(e) => return vec![e.to_diagnostic(file)],
    };
    let mut out: Vec<Diagnostic> = recipe.warnings.iter().map(|w| Diagnostic::from_yaml(file, w).warning()).collect();
    let multi = recipe.is_multi_variant();
    for (key, _) in recipe.root.as_map().unwrap_or_default() {
        let Some(name) = key.key_text() else { continue };
        let variant_key = name.starts_with(OVERRIDE_PREFIX) || name.starts_with(ZIP_PREFIX);
        if multi && name != "base" && name != SCHEMA_KEY && !variant_key {
            let message =
                format!("top-level key '{name}' next to 'base' is ignored by srtctl (not override_*/zip_override_*)");
            out.push(Diagnostic::new(file, Some(key.pos), message).warning());
        } else if !multi && variant_key {
            let message =
                format!("'{name}' needs a 'base' section; without one srtctl reads it as an unknown config field");
            out.push(Diagnostic::new(file, Some(key.pos), message));
        }
    }
    let variants = match recipe.resolve(None) {
        Ok(resolution) => resolution.variants,
        Err(e) => {
            out.push(e.to_diagnostic(file));
            return out;
        }
    };
    for variant in &variants {
        let label = if variant.selector.is_empty() { String::new() } else { format!("[{}] ", variant.selector) };
        if variant.has_sweep() {
            let pos = variant.config.get("sweep").map(|n| n.pos);
            let message =
                format!("{label}has a 'sweep' section: sweepgate dispatches one point as one job and refuses it");
            out.push(Diagnostic::new(file, pos, message).warning());
            continue;
        }
        match RecipeFacts::read(&variant.config, file) {
            Ok(facts) => {
                for (name, pos) in facts.unknown_engines {
                    let message = format!(
                        "{label}engine '{name}' is not one sweepgate knows (sglang, trtllm, vllm, atom, mocker): \
                         its settings are read by name and no topology check applies"
                    );
                    let d = Diagnostic::new(file, Some(pos), message).warning();
                    if !out.contains(&d) {
                        out.push(d);
                    }
                }
            }
            Err(e) => {
                let mut d = e.to_diagnostic(file);
                d.message = format!("{label}{}", d.message);
                out.push(d);
            }
        }
    }
    out
}

/// Nodes the variants of one resolution may copy in total: [`yaml::MAX_NODES`], the bound of one
/// document. Every variant is a copy of `base`, so without it a 2.5 KB recipe (a base that aliases
/// expand to 778,789 nodes, and a 1,000-element zip list) asked for 779 M nodes.
struct NodeBudget {
    left: usize,
}

impl NodeBudget {
    /// Takes `variants × per_variant` nodes (an upper bound of what the merges copy) or refuses
    /// the section `key` before anything is copied.
    fn spend(
        &mut self,
        recipe: &Recipe,
        key: &str,
        pos: Pos,
        variants: usize,
        per_variant: usize,
    ) -> Result<(), RecipeError> {
        match variants.checked_mul(per_variant).and_then(|cost| self.left.checked_sub(cost)) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(recipe.error(
                Some(pos),
                format!(
                    "'{key}': its {variants} variant(s) of {per_variant} nodes each (base included) would take \
                     the recipe's variants past {} nodes",
                    yaml::MAX_NODES
                ),
            )),
        }
    }
}

fn entries_size(entries: &Entries) -> usize {
    entries.iter().map(|(k, v)| k.size() + v.size()).sum()
}

fn list_or_none(items: impl Iterator<Item = String>) -> String {
    let all: Vec<String> = items.collect();
    if all.is_empty() {
        "(none)".into()
    } else {
        all.join(", ")
    }
}

fn map_entries(node: &Node) -> &Entries {
    node.as_map().unwrap_or_default()
}

/// Python's `str()` of a scalar; None for collections.
fn python_str(node: &Node) -> Option<String> {
    match &node.value {
        Value::Str(s) => Some(s.clone()),
        Value::Null => Some("None".into()),
        Value::Bool(true) => Some("True".into()),
        Value::Bool(false) => Some("False".into()),
        Value::Int(_) | Value::Float(_) => node.key_text().map(|t| t.into_owned()),
        Value::Seq(_) | Value::Map(_) => None,
    }
}

/// srtctl's `deep_merge`: mappings merge recursively, `null` deletes, anything else replaces.
/// Replaced keys keep their place; new keys are appended (Python dict order).
pub fn deep_merge(base: &Entries, overlay: &Entries) -> Vec<(Node, Node)> {
    let mut result = base.to_vec();
    merge_into(&mut result, overlay);
    result
}

/// `deep_merge` in place, so nested mappings are not copied once per level. Keys are found
/// through a hash index (a scan per key made a 400 KB recipe, two 20,000-key mappings, take 7 s);
/// deleted entries are dropped at the end so the indices stay valid meanwhile.
fn merge_into(result: &mut Vec<(Node, Node)>, overlay: &Entries) {
    let mut keys = KeyIndex::of(result);
    let mut deleted: Vec<usize> = Vec::new();
    for (key, value) in overlay {
        let existing = keys.position(result, key);
        match (&value.value, existing) {
            (Value::Null, Some(i)) => {
                keys.forget(key, i);
                deleted.push(i);
            }
            (Value::Null, None) => {}
            (Value::Map(over), Some(i)) => {
                let slot = &mut result[i].1;
                if let Value::Map(current) = &mut slot.value {
                    merge_into(current, over);
                    slot.pos = value.pos;
                } else {
                    *slot = value.clone();
                }
            }
            (_, Some(i)) => result[i].1 = value.clone(),
            (_, None) => keys.push(result, (key.clone(), value.clone())),
        }
    }
    if !deleted.is_empty() {
        deleted.sort_unstable();
        let mut index = 0;
        result.retain(|_| {
            index += 1;
            deleted.binary_search(&(index - 1)).is_err()
        });
    }
}

fn set_key(entries: &mut Vec<(Node, Node)>, key: &str, value: Node) {
    match entries.iter_mut().find(|(k, _)| k.as_str() == Some(key)) {
        Some(entry) => entry.1 = value,
        None => entries.push((Node { value: Value::Str(key.to_owned()), pos: value.pos }, value)),
    }
}

/// Every list-valued leaf reachable through mappings (lists inside lists are not descended).
fn collect_lists(entries: &Entries, prefix: &str, out: &mut Vec<(usize, Pos, String)>) {
    for (k, v) in entries {
        let path = match prefix {
            "" => k.key_text().unwrap_or_default().into_owned(),
            _ => format!("{prefix}.{}", k.key_text().unwrap_or_default()),
        };
        match &v.value {
            Value::Seq(items) => out.push((items.len(), v.pos, path)),
            Value::Map(inner) => collect_lists(inner, &path, out),
            _ => {}
        }
    }
}

/// Replaces each list leaf by its element `index` (element 0 for one-element lists).
fn zip_slice(entries: &Entries, index: usize) -> Vec<(Node, Node)> {
    entries
        .iter()
        .map(|(k, v)| {
            let value = match &v.value {
                Value::Seq(items) => {
                    let pick = if items.len() == 1 { 0 } else { index };
                    items.get(pick).cloned().unwrap_or(Node { value: Value::Null, pos: v.pos })
                }
                Value::Map(inner) => Node { value: Value::Map(zip_slice(inner, index)), pos: v.pos },
                _ => v.clone(),
            };
            (k.clone(), value)
        })
        .collect()
}

/// Python's `fnmatch.fnmatch` on POSIX (case-sensitive): `*`, `?`, `[seq]`, `[!seq]`.
fn fnmatch_regex(pattern: &str) -> Regex {
    let chars: Vec<char> = pattern.chars().collect();
    let mut re = String::from("(?s)^");
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            '[' => {
                let mut j = i;
                if chars.get(j) == Some(&'!') {
                    j += 1;
                }
                if chars.get(j) == Some(&']') {
                    j += 1;
                }
                while j < chars.len() && chars[j] != ']' {
                    j += 1;
                }
                if j >= chars.len() {
                    re.push_str("\\[");
                } else {
                    let mut class: String = chars[i..j].iter().collect();
                    if let Some(rest) = class.strip_prefix('!') {
                        class = format!("^{rest}");
                    }
                    let class = class.replace('\\', "\\\\").replace('[', "\\[").replace("&&", "\\&\\&");
                    re.push('[');
                    re.push_str(&class);
                    re.push(']');
                    i = j + 1;
                }
            }
            other => re.push_str(&regex::escape(&other.to_string())),
        }
    }
    re.push('$');
    // A class the regex crate cannot compile matches nothing rather than everything.
    Regex::new(&re).unwrap_or_else(|_| Regex::new("[^\\s\\S]").unwrap_or_else(|e| unreachable!("{e}")))
}

#[cfg(test)]
mod tests;
