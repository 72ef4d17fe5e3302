//! The generator (`generate_sweep_configs.py`): master configs → matrix rows (spec 20 §5).
//!
//! Rows are JSON objects in upstream's key insertion order, holding the raw values the
//! generator copies (worker dicts in YAML order, `router`, `kv-offload-backend`).

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::evals::{mark_all_eval_entries, mark_eval_entries};
use super::{MatrixError, Row};
use crate::domain::changelog::ScenarioType;
use crate::domain::master_config::{
    conc_range, AgenticBlock, AgenticSpace, ConcFields, FixedSpaces, KvOffloading, MasterConfig, MasterConfigs,
    MultiNodeSpace, SingleNodeSpace, Worker,
};
use crate::domain::runners::Runners;

/// `MAX_AGENTIC_AVAILABLE_CPU_DRAM_MIB`: 3 TB decimal, in MiB.
pub const MAX_AGENTIC_AVAILABLE_CPU_DRAM_MIB: i64 = 2_861_022;
/// Fixed duration of every agentic point, in seconds.
pub const AGENTIC_DURATION_SECONDS: i64 = 3600;

/// The two named sequence-length pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SeqLen {
    OneKOneK,
    EightKOneK,
}

impl SeqLen {
    pub fn parse(text: &str) -> Option<SeqLen> {
        match text {
            "1k1k" => Some(SeqLen::OneKOneK),
            "8k1k" => Some(SeqLen::EightKOneK),
            _ => None,
        }
    }

    pub fn pair(self) -> (i64, i64) {
        match self {
            SeqLen::OneKOneK => (1024, 1024),
            SeqLen::EightKOneK => (8192, 1024),
        }
    }
}

/// `seq_len_to_str`: `1k1k`, `8k1k`, else `<isl>_<osl>`.
pub fn seq_name(isl: i64, osl: i64) -> String {
    match (isl, osl) {
        (1024, 1024) => "1k1k".into(),
        (8192, 1024) => "8k1k".into(),
        _ => format!("{isl}_{osl}"),
    }
}

/// Eval handling shared by both subcommands (`--no-evals`, `--evals-only`, `--all-evals`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EvalFlags {
    pub no_evals: bool,
    pub evals_only: bool,
    pub all_evals: bool,
}

impl EvalFlags {
    pub fn check(&self) -> Result<(), MatrixError> {
        if self.no_evals && self.evals_only {
            return Err(MatrixError::Usage("--no-evals and --evals-only cannot be combined".into()));
        }
        if self.no_evals && self.all_evals {
            return Err(MatrixError::Usage("--all-evals cannot be combined with --no-evals".into()));
        }
        Ok(())
    }
}

/// Options of both subcommands.
#[derive(Debug, Clone, Default)]
pub struct CommonOptions {
    pub evals: EvalFlags,
    pub runner_node_filter: Option<String>,
    /// `--scenario-type`; `None` = every scenario.
    pub scenario_types: Option<Vec<ScenarioType>>,
    /// Stop with [`MatrixError::TooManyRows`] past this many rows (a sweep's point bound), so a
    /// PR-written `conc-list` cannot make the generator build millions of rows first.
    pub max_rows: Option<usize>,
}

impl CommonOptions {
    fn wants(&self, scenario: ScenarioType) -> bool {
        self.scenario_types.as_ref().is_none_or(|s| s.contains(&scenario))
    }
}

/// `test-config` options.
#[derive(Debug, Clone, Default)]
pub struct TestConfigOptions {
    pub config_keys: Vec<String>,
    pub conc: Option<Vec<i64>>,
    pub seq_lens: Option<Vec<SeqLen>>,
}

/// `full-sweep` filters.
#[derive(Debug, Clone)]
pub struct FullSweepOptions {
    pub model_prefix: Option<Vec<String>>,
    pub precision: Option<Vec<String>>,
    pub framework: Option<Vec<String>>,
    pub runner_type: Option<Vec<String>>,
    pub seq_lens: Option<Vec<SeqLen>>,
    pub step_size: i64,
    pub min_conc: Option<i64>,
    pub max_conc: Option<i64>,
    pub max_tp: Option<i64>,
    pub max_ep: Option<i64>,
    /// `--single-node` / `--multi-node`; neither set means both.
    pub single_node: bool,
    pub multi_node: bool,
}

impl Default for FullSweepOptions {
    fn default() -> Self {
        FullSweepOptions {
            model_prefix: None,
            precision: None,
            framework: None,
            runner_type: None,
            seq_lens: None,
            step_size: 2,
            min_conc: None,
            max_conc: None,
            max_tp: None,
            max_ep: None,
            single_node: false,
            multi_node: false,
        }
    }
}

/// `test-config`: rows for explicit keys, then eval marking (`main()` steps 5-7).
pub fn test_config(
    configs: &MasterConfigs,
    runners: &Runners,
    options: &TestConfigOptions,
    common: &CommonOptions,
) -> Result<Vec<Row>, MatrixError> {
    common.evals.check()?;
    let keys = expand_config_keys(&options.config_keys, configs)?;
    let rows = test_config_rows(configs, runners, &keys, options, common)?;
    Ok(finish(rows, common.evals))
}

/// `full-sweep`: every config through the filters, then eval marking.
pub fn full_sweep(
    configs: &MasterConfigs,
    runners: &Runners,
    options: &FullSweepOptions,
    common: &CommonOptions,
) -> Result<Vec<Row>, MatrixError> {
    if options.step_size <= 1 {
        return Err(MatrixError::Usage("--step-size must be greater than 1".into()));
    }
    if let (Some(min), Some(max)) = (options.min_conc, options.max_conc) {
        if min > max {
            return Err(MatrixError::Usage("--min-conc must be less than or equal to --max-conc".into()));
        }
    }
    common.evals.check()?;
    let rows = full_sweep_rows(configs, runners, options, common)?;
    Ok(finish(rows, common.evals))
}

/// Eval marking and the evals-only filter (`main()` steps 6-7).
pub fn finish(mut rows: Vec<Row>, evals: EvalFlags) -> Vec<Row> {
    if !evals.no_evals {
        mark_eval_entries(&mut rows, evals.evals_only || evals.all_evals);
        if evals.all_evals {
            rows = mark_all_eval_entries(rows);
        }
    }
    if evals.evals_only || evals.all_evals {
        rows.retain(|r| r.get("run-eval").and_then(Value::as_bool).unwrap_or(false));
        for row in &mut rows {
            row.insert("eval-only".into(), Value::Bool(true));
        }
    }
    rows
}

/// `expand_config_keys`: fnmatch globs (`*`, `?`, `[...]`) when a key has `*` or `?`.
pub fn expand_config_keys(patterns: &[String], configs: &MasterConfigs) -> Result<Vec<String>, MatrixError> {
    let available = || {
        let mut keys: Vec<&str> = configs.keys().collect();
        keys.sort();
        keys.join(", ")
    };
    let mut out: Vec<String> = Vec::new();
    for pattern in patterns {
        if pattern.contains(['*', '?']) {
            let matcher = globset::GlobBuilder::new(pattern)
                .literal_separator(false)
                .backslash_escape(false)
                .build()
                .map_err(|e| MatrixError::Usage(format!("invalid config-key pattern '{pattern}': {e}")))?
                .compile_matcher();
            let matches: Vec<&str> = configs.keys().filter(|k| matcher.is_match(k)).collect();
            if matches.is_empty() {
                return Err(MatrixError::Generate(format!(
                    "Pattern '{pattern}' matched no config keys.\nAvailable keys: {}",
                    available()
                )));
            }
            for m in matches {
                if !out.iter().any(|k| k == m) {
                    out.push(m.to_owned());
                }
            }
        } else if configs.get(pattern).is_none() {
            return Err(MatrixError::Generate(format!(
                "Config key(s) not found: {pattern}.\nAvailable keys: {}",
                available()
            )));
        } else if !out.contains(pattern) {
            out.push(pattern.clone());
        }
    }
    Ok(out)
}

/// The list when `conc-list` is truthy, else the range.
fn conc_truthy(c: &ConcFields, step: i64) -> Vec<i64> {
    match &c.list {
        Some(list) if !list.is_empty() => list.clone(),
        _ => conc_range(c.start.unwrap_or(0), c.end.unwrap_or(-1), step),
    }
}

/// `test-config` fixed-seq-len: the list whenever the key is present (even `[]`, §5.2).
fn conc_present(space_raw: &Map<String, Value>, c: &ConcFields) -> Vec<i64> {
    if space_raw.contains_key("conc-list") {
        c.list.clone().unwrap_or_default()
    } else {
        conc_range(c.start.unwrap_or(0), c.end.unwrap_or(-1), 2)
    }
}

/// `_runner_values_for_filter` (test-config).
fn runners_for_filter(label: &str, runners: &Runners, filter: Option<&str>) -> Vec<String> {
    let Some(filter) = filter.filter(|f| !f.is_empty()) else { return vec![label.to_owned()] };
    let mut candidates: Vec<&str> = Vec::new();
    if label.contains(filter) {
        candidates.push(label);
    }
    candidates.extend(runners.nodes(label).iter().map(String::as_str));
    let mut out: Vec<String> = Vec::new();
    for c in candidates {
        if c.contains(filter) && !out.iter().any(|o| o == c) {
            out.push(c.to_owned());
        }
    }
    out
}

/// `test-config` rows (before eval marking) for already-resolved keys.
pub fn test_config_rows(
    configs: &MasterConfigs,
    runners: &Runners,
    keys: &[String],
    options: &TestConfigOptions,
    common: &CommonOptions,
) -> Result<Vec<Row>, MatrixError> {
    let seq_filter: Option<HashSet<(i64, i64)>> =
        options.seq_lens.as_ref().filter(|s| !s.is_empty()).map(|s| s.iter().map(|l| l.pair()).collect());
    let conc_filter = options.conc.as_ref().filter(|c| !c.is_empty());
    let keep = |values: Vec<i64>| -> Vec<i64> {
        match conc_filter {
            Some(allowed) => values.into_iter().filter(|c| allowed.contains(c)).collect(),
            None => values,
        }
    };
    let mut rows = Vec::new();
    for key in keys {
        let config = configs
            .get(key)
            .ok_or_else(|| MatrixError::Generate(format!("Config key '{key}' not found in master configs.")))?;
        let runner_values = runners_for_filter(&config.runner, runners, common.runner_node_filter.as_deref());
        if runner_values.is_empty() {
            continue;
        }
        if common.wants(ScenarioType::FixedSeqLen) {
            for block in &config.fixed {
                if seq_filter.as_ref().is_some_and(|f| !f.contains(&(block.isl, block.osl))) {
                    continue;
                }
                match &block.search_space {
                    FixedSpaces::Multi(spaces) => {
                        for space in spaces {
                            let conc = keep(conc_present(&space.raw, &space.conc()));
                            if conc_filter.is_some() && conc.is_empty() {
                                continue;
                            }
                            for runner in &runner_values {
                                within_rows(common.max_rows, rows.len() + 1)?;
                                rows.push(multi_fixed_row(config, block.isl, block.osl, space, &conc, runner));
                            }
                        }
                    }
                    FixedSpaces::Single(spaces) => {
                        for space in spaces {
                            let conc = keep(conc_present(&space.raw, &space.conc()));
                            for c in conc {
                                for runner in &runner_values {
                                    within_rows(common.max_rows, rows.len() + 1)?;
                                    rows.push(single_fixed_row(
                                        config, block.isl, block.osl, space, c, runner, space.ep,
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
        if common.wants(ScenarioType::AgenticCoding) {
            for block in &config.agentic {
                for space in &block.search_space {
                    let dram = agentic_dram_gb(block, space, &config.runner, runners)?;
                    let conc = keep(conc_truthy(&space.conc(), 2));
                    if conc.is_empty() {
                        continue;
                    }
                    within_rows(common.max_rows, rows.len() + conc.len().saturating_mul(runner_values.len()))?;
                    rows.extend(agentic_rows(config, space, &conc, &runner_values, dram)?);
                }
            }
        }
    }
    Ok(rows)
}

/// Refuses rows past the bound, before they are built (`rows`: the count once they are).
pub fn within_rows(max_rows: Option<usize>, rows: usize) -> Result<(), MatrixError> {
    match max_rows {
        Some(max) if rows > max => Err(MatrixError::TooManyRows { max }),
        _ => Ok(()),
    }
}

/// `generate_full_sweep` rows (before eval marking).
pub fn full_sweep_rows(
    configs: &MasterConfigs,
    runners: &Runners,
    o: &FullSweepOptions,
    common: &CommonOptions,
) -> Result<Vec<Row>, MatrixError> {
    if let Some(types) = &o.runner_type {
        let invalid: Vec<&String> = types.iter().filter(|t| !runners.labels.contains_key(*t)).collect();
        if !invalid.is_empty() {
            let mut valid: Vec<&str> = runners.labels.keys().map(String::as_str).collect();
            valid.sort();
            let listed: Vec<String> = invalid.iter().map(|t| format!("'{t}'")).collect();
            return Err(MatrixError::Generate(format!(
                "Invalid runner type(s): {{{}}}. Valid runner types are: {}",
                listed.join(", "),
                valid.join(", ")
            )));
        }
    }
    let (single_node, multi_node) =
        if !o.single_node && !o.multi_node { (true, true) } else { (o.single_node, o.multi_node) };
    let seq_filter: Option<HashSet<(i64, i64)>> =
        o.seq_lens.as_ref().filter(|s| !s.is_empty()).map(|s| s.iter().map(|l| l.pair()).collect());
    let any_of = |filter: &Option<Vec<String>>, value: &str| {
        filter.as_ref().is_none_or(|f| f.is_empty() || f.iter().any(|x| x == value))
    };
    let mut rows = Vec::new();
    for (key, config) in &configs.configs {
        if let Some(prefixes) = o.model_prefix.as_ref().filter(|p| !p.is_empty()) {
            if !prefixes.iter().any(|p| key.starts_with(p.as_str())) {
                continue;
            }
        }
        if !any_of(&o.precision, &config.precision)
            || !any_of(&o.framework, &config.framework)
            || !any_of(&o.runner_type, &config.runner)
        {
            continue;
        }
        let runner_values: Vec<String> = match common.runner_node_filter.as_deref().filter(|f| !f.is_empty()) {
            Some(filter) => {
                let nodes: Vec<String> =
                    runners.nodes(&config.runner).iter().filter(|n| n.contains(filter)).cloned().collect();
                if nodes.is_empty() {
                    continue;
                }
                nodes
            }
            None => vec![config.runner.clone()],
        };
        let topology_wanted = if config.multinode { multi_node } else { single_node };
        if common.wants(ScenarioType::FixedSeqLen) && topology_wanted {
            for block in &config.fixed {
                if seq_filter.as_ref().is_some_and(|f| !f.contains(&(block.isl, block.osl))) {
                    continue;
                }
                match &block.search_space {
                    FixedSpaces::Multi(spaces) => {
                        for space in spaces {
                            let Some(conc) = full_sweep_multi_conc(&space.conc(), o) else { continue };
                            for runner in &runner_values {
                                rows.push(multi_fixed_row(config, block.isl, block.osl, space, &conc, runner));
                            }
                        }
                    }
                    FixedSpaces::Single(spaces) => {
                        for space in spaces {
                            if let Some(max_tp) = o.max_tp {
                                if max_tp <= 0 || space.tp > max_tp {
                                    continue;
                                }
                            }
                            let mut ep = space.ep;
                            if let Some(max_ep) = o.max_ep {
                                if max_ep <= 0 {
                                    continue;
                                }
                                if ep.is_some_and(|e| e > max_ep) {
                                    ep = Some(max_ep);
                                }
                            }
                            let Some(conc) = full_sweep_single_conc(&space.conc(), o) else { continue };
                            for c in conc {
                                for runner in &runner_values {
                                    rows.push(single_fixed_row(config, block.isl, block.osl, space, c, runner, ep));
                                }
                            }
                        }
                    }
                }
            }
        }
        if !topology_wanted || !common.wants(ScenarioType::AgenticCoding) {
            continue;
        }
        for block in &config.agentic {
            for space in &block.search_space {
                let dram = agentic_dram_gb(block, space, &config.runner, runners)?;
                let conc: Vec<i64> = conc_truthy(&space.conc(), o.step_size)
                    .into_iter()
                    .filter(|c| o.min_conc.is_none_or(|m| *c >= m) && o.max_conc.is_none_or(|m| *c <= m))
                    .collect();
                if conc.is_empty() {
                    continue;
                }
                rows.extend(agentic_rows(config, space, &conc, &runner_values, dram)?);
            }
        }
    }
    Ok(rows)
}

/// `--min-conc` on a list: `None` (skip the entry) when min ≤ 0 or nothing is left.
fn keep_at_least(conc: &mut Vec<i64>, min: Option<i64>) -> Option<()> {
    if let Some(min) = min {
        if min <= 0 {
            return None;
        }
        conc.retain(|v| *v >= min);
        if conc.is_empty() {
            return None;
        }
    }
    Some(())
}

fn full_sweep_multi_conc(c: &ConcFields, o: &FullSweepOptions) -> Option<Vec<i64>> {
    let mut conc = conc_truthy(c, o.step_size);
    keep_at_least(&mut conc, o.min_conc)?;
    if let Some(max) = o.max_conc {
        let filtered: Vec<i64> = conc.iter().copied().filter(|v| *v <= max).collect();
        conc = if filtered.is_empty() {
            if max <= 0 {
                return None;
            }
            vec![max]
        } else {
            filtered
        };
    }
    Some(conc)
}

fn full_sweep_single_conc(c: &ConcFields, o: &FullSweepOptions) -> Option<Vec<i64>> {
    if let Some(list) = c.list.as_ref().filter(|l| !l.is_empty()) {
        let mut conc = list.clone();
        keep_at_least(&mut conc, o.min_conc)?;
        if let Some(max) = o.max_conc {
            if max <= 0 {
                return None;
            }
            conc.retain(|v| *v <= max);
            if conc.is_empty() {
                conc = vec![max];
            }
        }
        return Some(conc);
    }
    let (mut start, mut end) = (c.start.unwrap_or(0), c.end.unwrap_or(-1));
    if let Some(min) = o.min_conc {
        if min <= 0 || end < min {
            return None;
        }
        start = start.max(min);
    }
    if let Some(max) = o.max_conc {
        if max <= 0 {
            return None;
        }
        if start > max {
            start = max;
            end = max;
        } else {
            end = end.min(max);
        }
    }
    Some(conc_range(start, end, o.step_size))
}

/// `component_metadata`: the search-space value if the key is present (even null), else the
/// config's; added only when non-null.
fn add_component_metadata(row: &mut Row, space_raw: &Map<String, Value>, config: &MasterConfig) {
    for field in ["router", "kv-p2p-transfer"] {
        let value = match space_raw.get(field) {
            Some(v) => v.clone(),
            None => config.raw.get(field).cloned().unwrap_or(Value::Null),
        };
        if !value.is_null() {
            row.insert(field.into(), value);
        }
    }
}

fn head(config: &MasterConfig, runner: &str) -> Row {
    let mut row = Map::new();
    row.insert("image".into(), json!(config.image));
    row.insert("model".into(), json!(config.model));
    row.insert("model-prefix".into(), json!(config.model_prefix));
    row.insert("precision".into(), json!(config.precision));
    row.insert("framework".into(), json!(config.framework));
    row.insert("runner".into(), json!(runner));
    row
}

fn single_fixed_row(
    config: &MasterConfig,
    isl: i64,
    osl: i64,
    space: &SingleNodeSpace,
    conc: i64,
    runner: &str,
    ep: Option<i64>,
) -> Row {
    let mut row = head(config, runner);
    row.insert("isl".into(), json!(isl));
    row.insert("osl".into(), json!(osl));
    row.insert("tp".into(), json!(space.tp));
    row.insert("pp".into(), json!(space.pp));
    row.insert("dcp-size".into(), json!(space.dcp_size));
    row.insert("pcp-size".into(), json!(space.pcp_size));
    row.insert("conc".into(), json!(conc));
    row.insert("max-model-len".into(), json!(isl + osl + 256));
    row.insert("ep".into(), json!(ep.unwrap_or(1)));
    row.insert("dp-attn".into(), json!(space.dp_attn.unwrap_or(false)));
    row.insert("spec-decoding".into(), json!(space.spec_decoding.as_str()));
    row.insert("exp-name".into(), json!(format!("{}_{}", config.model_prefix, seq_name(isl, osl))));
    row.insert("disagg".into(), json!(config.disagg));
    row.insert("run-eval".into(), json!(false));
    add_component_metadata(&mut row, &space.raw, config);
    add_srt_recipe(&mut row, space.srt_recipe.as_deref());
    row
}

/// A native single-node row names its recipe (`srt-recipe`, as written): the workflow hands it
/// to the launcher as `SRT_RECIPE` (decision TD5) and the dispatch planner binds its variant
/// (decision TD6).
fn add_srt_recipe(row: &mut Row, recipe: Option<&str>) {
    if let Some(recipe) = recipe {
        row.insert("srt-recipe".into(), json!(recipe));
    }
}

/// `with_worker_parallelism_defaults` over the raw worker dict.
fn worker_json(space_raw: &Map<String, Value>, role: &str, worker: &Worker) -> Value {
    let mut m = match space_raw.get(role) {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    m.insert("pp".into(), json!(worker.pp));
    m.insert("dcp-size".into(), json!(worker.dcp_size));
    m.insert("pcp-size".into(), json!(worker.pcp_size));
    Value::Object(m)
}

fn multi_fixed_row(
    config: &MasterConfig,
    isl: i64,
    osl: i64,
    space: &MultiNodeSpace,
    conc: &[i64],
    runner: &str,
) -> Row {
    let mut row = head(config, runner);
    row.insert("isl".into(), json!(isl));
    row.insert("osl".into(), json!(osl));
    row.insert("spec-decoding".into(), json!(space.spec_decoding.as_str()));
    row.insert("prefill".into(), worker_json(&space.raw, "prefill", &space.prefill));
    row.insert("decode".into(), worker_json(&space.raw, "decode", &space.decode));
    row.insert("conc".into(), json!(conc));
    row.insert("max-model-len".into(), json!(isl + osl + 256));
    row.insert("exp-name".into(), json!(format!("{}_{}", config.model_prefix, seq_name(isl, osl))));
    row.insert("disagg".into(), json!(config.disagg));
    row.insert("run-eval".into(), json!(false));
    add_component_metadata(&mut row, &space.raw, config);
    row
}

fn kv_suffix(space: &AgenticSpace) -> String {
    match (space.kv_offloading, &space.kv_offload_backend) {
        (Some(KvOffloading::Dram), Some(b)) => format!("kvdram-{}", b.name),
        _ => "kvnone".into(),
    }
}

fn worker_tag(w: &Worker, role: char) -> String {
    let mut tag = format!("{role}{}x{}", w.num_worker, w.tp);
    if w.ep != 1 {
        tag.push_str(&format!("ep{}", w.ep));
    }
    if w.dp_attn {
        tag.push_str("dpa");
    }
    tag
}

/// Agentic rows of one search-space entry: single-node (conc outer, runner inner) or
/// multinode (runner outer, one conc per row).
fn agentic_rows(
    config: &MasterConfig,
    space: &AgenticSpace,
    conc: &[i64],
    runner_values: &[String],
    dram: i64,
) -> Result<Vec<Row>, MatrixError> {
    let mut rows = Vec::new();
    let kv_mode = space.kv_offloading.unwrap_or(KvOffloading::None);
    let backend = space.raw.get("kv-offload-backend").filter(|b| !b.is_null()).cloned();
    match (space.tp, &space.prefill, &space.decode, &space.worker) {
        (Some(tp), None, None, None) if !config.multinode => {
            for c in conc {
                for runner in runner_values {
                    let mut row = head(config, runner);
                    row.insert("tp".into(), json!(tp));
                    row.insert("pp".into(), json!(space.pp));
                    row.insert("dcp-size".into(), json!(space.dcp_size));
                    row.insert("pcp-size".into(), json!(space.pcp_size));
                    row.insert("ep".into(), json!(space.ep.unwrap_or(1)));
                    row.insert("dp-attn".into(), json!(space.dp_attn.unwrap_or(false)));
                    row.insert("spec-decoding".into(), json!(space.spec_decoding.as_str()));
                    row.insert("conc".into(), json!(c));
                    row.insert("kv-offloading".into(), json!(kv_mode.as_str()));
                    row.insert("total-cpu-dram-gb".into(), json!(dram));
                    row.insert("duration".into(), json!(AGENTIC_DURATION_SECONDS));
                    let mut name = format!("{}_tp{tp}_conc{c}_{}", config.model_prefix, kv_suffix(space));
                    if space.spec_decoding.as_str() != "none" {
                        name.push_str(&format!("_spec-{}", space.spec_decoding.as_str()));
                    }
                    row.insert("exp-name".into(), json!(name));
                    row.insert("scenario-type".into(), json!(ScenarioType::AgenticCoding.as_str()));
                    if let Some(b) = &backend {
                        row.insert("kv-offload-backend".into(), b.clone());
                    }
                    add_component_metadata(&mut row, &space.raw, config);
                    add_srt_recipe(&mut row, space.srt_recipe.as_deref());
                    rows.push(row);
                }
            }
        }
        (None, Some(prefill), Some(decode), None) if config.multinode => {
            let offload = if kv_mode == KvOffloading::None { String::new() } else { format!("_{}", kv_suffix(space)) };
            for runner in runner_values {
                for c in conc {
                    let mut row = head(config, runner);
                    row.insert("spec-decoding".into(), json!(space.spec_decoding.as_str()));
                    row.insert("prefill".into(), worker_json(&space.raw, "prefill", prefill));
                    row.insert("decode".into(), worker_json(&space.raw, "decode", decode));
                    row.insert("conc".into(), json!([c]));
                    row.insert("kv-offloading".into(), json!(kv_mode.as_str()));
                    row.insert("total-cpu-dram-gb".into(), json!(dram));
                    row.insert("duration".into(), json!(AGENTIC_DURATION_SECONDS));
                    let name = format!(
                        "{}_{}_{}_conc{c}{offload}",
                        config.model_prefix,
                        worker_tag(prefill, 'p'),
                        worker_tag(decode, 'd')
                    );
                    row.insert("exp-name".into(), json!(name));
                    row.insert("disagg".into(), json!(config.disagg));
                    row.insert("scenario-type".into(), json!(ScenarioType::AgenticCoding.as_str()));
                    if let Some(b) = &backend {
                        row.insert("kv-offload-backend".into(), b.clone());
                    }
                    add_component_metadata(&mut row, &space.raw, config);
                    rows.push(row);
                }
            }
        }
        (None, None, None, Some(worker)) if config.multinode => {
            // Decision TD3: an aggregated multinode entry gives one row per runner and
            // concurrency, like a disaggregated one, with its `worker` and `num-nodes` in place
            // of `prefill` and `decode` (upstream's generator for this era is not in the tree).
            let nodes = space.num_nodes.unwrap_or(1);
            let offload = if kv_mode == KvOffloading::None { String::new() } else { format!("_{}", kv_suffix(space)) };
            for runner in runner_values {
                for c in conc {
                    let mut row = head(config, runner);
                    row.insert("spec-decoding".into(), json!(space.spec_decoding.as_str()));
                    row.insert("num-nodes".into(), json!(nodes));
                    row.insert("worker".into(), worker_json(&space.raw, "worker", worker));
                    row.insert("conc".into(), json!([c]));
                    row.insert("kv-offloading".into(), json!(kv_mode.as_str()));
                    row.insert("total-cpu-dram-gb".into(), json!(dram));
                    row.insert("duration".into(), json!(AGENTIC_DURATION_SECONDS));
                    let name = format!("{}_{}_n{nodes}_conc{c}{offload}", config.model_prefix, worker_tag(worker, 'w'));
                    row.insert("exp-name".into(), json!(name));
                    row.insert("disagg".into(), json!(config.disagg));
                    row.insert("scenario-type".into(), json!(ScenarioType::AgenticCoding.as_str()));
                    if let Some(b) = &backend {
                        row.insert("kv-offload-backend".into(), b.clone());
                    }
                    add_component_metadata(&mut row, &space.raw, config);
                    rows.push(row);
                }
            }
        }
        _ => {
            return Err(MatrixError::Generate(format!(
                "config '{}': agentic search-space entry does not match multinode={}",
                config.key, config.multinode
            )))
        }
    }
    Ok(rows)
}

/// The decimal digits of Python's `str(float)`: (N, k) with value = N / 10^k.
fn decimal_of(x: f64) -> Option<(i128, u32)> {
    let repr = format!("{x:?}");
    let (mantissa, exp) = match repr.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (repr.as_str(), 0),
    };
    let (int_part, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: i128 = format!("{int_part}{frac}").parse().ok()?;
    let k = frac.len() as i32 - exp;
    if k >= 0 {
        Some((digits, k as u32))
    } else {
        Some((digits.checked_mul(10i128.checked_pow((-k) as u32)?)?, 0))
    }
}

/// `agentic_dram_offload_gb` (spec 20 §5.6), in exact integer arithmetic.
pub fn agentic_dram_gb(
    block: &AgenticBlock,
    space: &AgenticSpace,
    runner: &str,
    runners: &Runners,
) -> Result<i64, MatrixError> {
    if space.kv_offloading != Some(KvOffloading::Dram) {
        return Ok(0);
    }
    let field = |name: &str| -> Result<i64, MatrixError> {
        let hw = runners.hardware.get(runner);
        let value =
            hw.map(|h| if name == "available-cpu-dram-mib" { h.available_cpu_dram_mib } else { h.gpus_per_node });
        value.ok_or_else(|| {
            let mut keys: Vec<&str> = runners.hardware.keys().map(String::as_str).collect();
            keys.sort();
            MatrixError::Generate(format!(
                "Runner '{runner}' requires '{name}' in runner hardware metadata. Available hardware keys: {}",
                keys.join(", ")
            ))
        })
    };
    let avail = field("available-cpu-dram-mib")?.min(MAX_AGENTIC_AVAILABLE_CPU_DRAM_MIB);
    let utilization = block.dram_utilization.unwrap_or(0.0);
    let (n, k) = decimal_of(utilization)
        .ok_or_else(|| MatrixError::Generate(format!("dram-utilization {utilization} is not a finite decimal")))?;
    let g = field("gpus-per-node")?;
    let count = match space.prefill.as_ref().or(space.worker.as_ref()) {
        Some(w) => {
            let r = w.tp * w.pp * w.pcp_size;
            if r > g {
                if r % g != 0 {
                    return Err(MatrixError::Generate(format!(
                        "worker tp*pp*pcp-size={r} spans multiple nodes but is not a multiple of gpus-per-node={g}"
                    )));
                }
                g
            } else {
                if r <= 0 || g % r != 0 {
                    return Err(MatrixError::Generate(format!(
                        "worker tp*pp*pcp-size={r} does not divide gpus-per-node={g} evenly"
                    )));
                }
                r
            }
        }
        None => {
            let tp = space.tp.unwrap_or(0);
            let n = tp * space.pp * space.pcp_size;
            if n > g {
                return Err(MatrixError::Generate(format!(
                    "tp={tp} with pp={} and pcp-size={} requires {n} GPUs and exceeds gpus-per-node={g} for runner '{runner}'",
                    space.pp, space.pcp_size
                )));
            }
            n
        }
    };
    let overflow = || MatrixError::Generate(format!("DRAM budget overflows for runner '{runner}'"));
    let numerator = (avail as i128)
        .checked_mul(1_048_576)
        .and_then(|v| v.checked_mul(n))
        .and_then(|v| v.checked_mul(count as i128))
        .ok_or_else(overflow)?;
    let denominator = (g as i128)
        .checked_mul(10i128.checked_pow(k).ok_or_else(overflow)?)
        .and_then(|v| v.checked_mul(1_000_000_000))
        .ok_or_else(overflow)?;
    i64::try_from(numerator / denominator).map_err(|_| overflow())
}

#[cfg(test)]
mod tests;
