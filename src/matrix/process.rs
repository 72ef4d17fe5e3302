//! The processor (`process_changelog.py`, spec 20 §6): changelog additions → generator calls
//! grouped exactly as upstream's subprocesses (per entry, per unseen scenario tuple) → trim,
//! fingerprints, buckets.

use std::collections::{BTreeSet, HashMap};

use indexmap::IndexMap;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::append_only::{append_only_delta, validate_scope};
use super::diff::Additions;
use super::generate::{finish, seq_name, test_config_rows, within_rows, CommonOptions, EvalFlags, TestConfigOptions};
use super::inputs::{self, Inputs};
use super::json::{canonical, frozen_without};
use super::output::{normalize, ChangelogMetadata, MatrixOutput, RowKind};
use super::{MatrixError, Row};
use crate::domain::changelog::{ChangelogEntry, ScenarioType};
use crate::domain::master_config::MasterConfigs;
use crate::repo::{Layout, Tree};
use crate::yaml::{self, Value as YamlValue, YamlError};

/// CLI modifiers of the processor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessOptions {
    pub trim_conc: bool,
    pub all_evals: bool,
    pub evals_only: bool,
    /// The generator stops past this many rows ([`MatrixError::TooManyRows`]): the sweep
    /// paths pass their point bound; the verifier reads the matrix as upstream builds it.
    pub max_rows: Option<usize>,
}

/// One side of the comparison: the ref as the user wrote it and the files at it.
pub struct Revision<'a> {
    pub name: &'a str,
    pub tree: &'a dyn Tree,
}

/// The validated entries of the additions, in file order.
pub struct AddedEntries {
    pub entries: Vec<ChangelogEntry>,
}

fn is_falsy(v: &YamlValue) -> bool {
    match v {
        YamlValue::Null => true,
        YamlValue::Bool(b) => !b,
        YamlValue::Int(i) => *i == 0,
        YamlValue::Float(x) => *x == 0.0,
        YamlValue::Str(s) => s.is_empty(),
        YamlValue::Seq(s) => s.is_empty(),
        YamlValue::Map(m) => m.is_empty(),
    }
}

/// Steps 1-2 of the processor: parse and validate the added entries.
pub fn parse_additions(
    additions: &Additions,
    changelog_path: &str,
    options: ProcessOptions,
) -> Result<AddedEntries, MatrixError> {
    if additions.text.trim().is_empty() {
        return Err(MatrixError::Changelog("No additions found in the changelog file.".into()));
    }
    // Positions point into the head file, not into the joined added lines.
    let relocate = |e: YamlError| -> YamlError {
        let pos = e.pos.map(|p| yaml::Pos { line: additions.head_line(p.line).unwrap_or(p.line), col: p.col });
        YamlError { file: Some(changelog_path.to_owned()), pos, ..e }
    };
    let root = yaml::parse(&additions.text, changelog_path).map_err(|e| MatrixError::Entry(relocate(e)))?;
    if is_falsy(&root.value) {
        return Err(MatrixError::Changelog("No valid YAML entries found in the changelog additions.".into()));
    }
    let Some(items) = root.as_seq() else {
        return Err(MatrixError::Entry(relocate(YamlError::at(
            root.pos,
            format!("the added lines must form a YAML list of changelog entries, found {}", root.value.kind()),
        ))));
    };
    let entries = items
        .iter()
        .map(|n| ChangelogEntry::from_node(n).map_err(|e| MatrixError::Entry(relocate(e))))
        .collect::<Result<Vec<_>, _>>()?;
    let any_append = entries.iter().any(|e| e.append_only);
    if any_append && !entries.iter().all(|e| e.append_only) {
        return Err(MatrixError::Changelog(
            "append-only entries cannot share a sweep with regular changelog entries".into(),
        ));
    }
    if any_append && (options.all_evals || options.evals_only) {
        return Err(MatrixError::Changelog("append-only sweeps cannot use all-evals or evals-only modifiers".into()));
    }
    Ok(AddedEntries { entries })
}

/// `get_config_keys_from_master`: exact keys, or `*` wildcards (full match, `*` = any run).
pub fn resolve_config_keys(patterns: &[String], configs: &MasterConfigs) -> Result<Vec<String>, MatrixError> {
    let mut out: Vec<String> = Vec::new();
    for pattern in patterns {
        if pattern.contains('*') {
            let parts: Vec<&str> = pattern.split('*').collect();
            let matches: Vec<&str> = configs.keys().filter(|k| wildcard_match(&parts, k)).collect();
            if matches.is_empty() {
                return Err(MatrixError::Changelog(format!(
                    "No config keys matched the wildcard pattern '{pattern}' in master configs."
                )));
            }
            for m in matches {
                if !out.iter().any(|k| k == m) {
                    out.push(m.to_owned());
                }
            }
        } else if configs.get(pattern).is_none() {
            return Err(MatrixError::Changelog(format!("Config key '{pattern}' not found in master configs.")));
        } else if !out.contains(pattern) {
            out.push(pattern.clone());
        }
    }
    Ok(out)
}

/// Full match of literal `parts` separated by `*` (each `*` matches any run, even empty).
fn wildcard_match(parts: &[&str], text: &str) -> bool {
    let (Some(first), Some(last)) = (parts.first(), parts.last()) else { return false };
    if parts.len() == 1 {
        return *first == text;
    }
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

/// One in-process "generator subprocess": `test-config` for resolved keys.
fn generator_call(
    inputs: &Inputs,
    keys: &[String],
    scenarios: &[ScenarioType],
    evals: EvalFlags,
    max_rows: Option<usize>,
) -> Result<Vec<Row>, MatrixError> {
    let common = CommonOptions { evals, runner_node_filter: None, scenario_types: Some(scenarios.to_vec()), max_rows };
    let rows = test_config_rows(&inputs.configs, &inputs.runners, keys, &TestConfigOptions::default(), &common)?;
    Ok(finish(rows, evals))
}

/// Groups configs by the scenarios they still need, in first-insertion order.
fn group_unseen(
    configs: &[String],
    scenarios: &[ScenarioType],
    seen: &mut HashMap<String, BTreeSet<ScenarioType>>,
) -> Vec<(Vec<ScenarioType>, Vec<String>)> {
    let mut groups: Vec<(Vec<ScenarioType>, Vec<String>)> = Vec::new();
    for config in configs {
        let done = seen.entry(config.clone()).or_default();
        let unseen: Vec<ScenarioType> =
            ScenarioType::ALL.into_iter().filter(|s| scenarios.contains(s) && !done.contains(s)).collect();
        if unseen.is_empty() {
            continue;
        }
        done.extend(unseen.iter().copied());
        match groups.iter_mut().find(|(s, _)| *s == unseen) {
            Some((_, keys)) => keys.push(config.clone()),
            None => groups.push((unseen, vec![config.clone()])),
        }
    }
    groups
}

/// `trim_conc`: multinode lists to their minimum; other rows to the lowest conc per recipe.
pub fn trim_conc(rows: Vec<Row>) -> Vec<Row> {
    let mut out: Vec<Row> = Vec::with_capacity(rows.len());
    let mut groups: IndexMap<String, Vec<usize>> = IndexMap::new();
    for mut row in rows {
        if row.get("prefill").is_some_and(|p| !p.is_null()) {
            if let Some(Value::Array(items)) = row.get("conc") {
                if items.len() > 1 {
                    let min = items.iter().filter_map(Value::as_i64).min();
                    row.insert("conc".into(), json!([min]));
                }
            }
            out.push(row);
            continue;
        }
        groups.entry(frozen_without(&row, &["conc", "exp-name"])).or_default().push(out.len());
        out.push(row);
    }
    let mut drop = vec![false; out.len()];
    for indices in groups.values().filter(|i| i.len() > 1) {
        let conc = |i: usize| out[i].get("conc").and_then(Value::as_i64).unwrap_or(i64::MAX);
        let keep = indices.iter().copied().fold(indices[0], |best, i| if conc(i) < conc(best) { i } else { best });
        for &i in indices {
            drop[i] = i != keep;
        }
    }
    out.into_iter().zip(drop).filter(|(_, d)| !d).map(|(r, _)| r).collect()
}

/// `recipe_fingerprint`: SHA-256 of the canonical row without point-level keys.
pub fn recipe_fingerprint(row: &Row) -> String {
    let mut recipe = row.clone();
    for k in ["conc", "exp-name", "recipe-fingerprint"] {
        recipe.shift_remove(k);
    }
    hex::encode(Sha256::digest(canonical(&Value::Object(recipe)).as_bytes()))
}

/// The whole processor over two revisions.
pub fn process(
    additions: &Additions,
    changelog_path: &str,
    base: Revision<'_>,
    head: Revision<'_>,
    layout: &Layout,
    options: ProcessOptions,
) -> Result<MatrixOutput, MatrixError> {
    let AddedEntries { entries } = parse_additions(additions, changelog_path, options)?;
    let head_inputs = inputs::load(head.tree, layout)?;
    let mut resolved: Vec<(&ChangelogEntry, Vec<String>)> = Vec::with_capacity(entries.len());
    for entry in &entries {
        resolved.push((entry, resolve_config_keys(&entry.config_keys, &head_inputs.configs)?));
    }
    let base_inputs = if entries.iter().any(|e| e.append_only) {
        Some(prepare_append_only(&resolved, base.tree, layout, &head_inputs.configs)?)
    } else {
        None
    };
    resolved.sort_by_key(|(e, _)| !e.all_evals);

    let mut bench_seen: HashMap<String, BTreeSet<ScenarioType>> = HashMap::new();
    let mut eval_seen: HashMap<String, BTreeSet<ScenarioType>> = HashMap::new();
    let mut bench_rows: Vec<Row> = Vec::new();
    let mut eval_rows: Vec<Row> = Vec::new();
    for (entry, configs) in &resolved {
        let scenarios = entry.scenarios();
        let expand_all = options.all_evals || entry.all_evals;
        let suppress = options.evals_only || entry.evals_only || entry.all_evals;
        if !suppress {
            for (unseen, keys) in group_unseen(configs, &scenarios, &mut bench_seen) {
                let no_evals = EvalFlags { no_evals: true, ..EvalFlags::default() };
                let mut rows = generator_call(&head_inputs, &keys, &unseen, no_evals, options.max_rows)?;
                if let (true, Some(base_inputs)) = (entry.append_only, &base_inputs) {
                    let base_rows = generator_call(base_inputs, &keys, &unseen, no_evals, options.max_rows)?;
                    rows = append_only_delta(&base_rows, &rows)?;
                }
                bench_rows.extend(rows);
                within_rows(options.max_rows, bench_rows.len() + eval_rows.len())?;
            }
        }
        if entry.append_only {
            continue;
        }
        for (unseen, keys) in group_unseen(configs, &scenarios, &mut eval_seen) {
            let flags = EvalFlags { no_evals: false, evals_only: true, all_evals: expand_all };
            let mut rows = generator_call(&head_inputs, &keys, &unseen, flags, options.max_rows)?;
            if let Some(min_ep) = entry.eval_min_prefill_ep {
                rows.retain(|r| match r.get("prefill") {
                    Some(Value::Object(p)) => p.get("ep").map_or(Some(1), Value::as_i64).is_some_and(|ep| ep >= min_ep),
                    _ => true,
                });
            }
            eval_rows.extend(rows);
            within_rows(options.max_rows, bench_rows.len() + eval_rows.len())?;
        }
    }
    if options.trim_conc {
        bench_rows = trim_conc(bench_rows);
    }
    let mut out = MatrixOutput {
        single_node: IndexMap::new(),
        multi_node: IndexMap::new(),
        evals: Vec::new(),
        agentic_evals: Vec::new(),
        multinode_evals: Vec::new(),
        multinode_agentic_evals: Vec::new(),
        changelog_metadata: ChangelogMetadata {
            base_ref: base.name.to_owned(),
            head_ref: head.name.to_owned(),
            entries: entries.iter().map(ChangelogEntry::to_json).collect(),
        },
    };
    for mut row in bench_rows {
        let fingerprint = recipe_fingerprint(&row);
        row.insert("recipe-fingerprint".into(), json!(fingerprint));
        let seq = || {
            seq_name(
                row.get("isl").and_then(Value::as_i64).unwrap_or(0),
                row.get("osl").and_then(Value::as_i64).unwrap_or(0),
            )
        };
        let (family, bucket) = match RowKind::of(&row) {
            RowKind::SingleNodeAgentic => (&mut out.single_node, "agentic".to_owned()),
            RowKind::MultiNodeAgentic => (&mut out.multi_node, "agentic".to_owned()),
            RowKind::SingleNode => (&mut out.single_node, seq()),
            RowKind::MultiNode => (&mut out.multi_node, seq()),
        };
        family.entry(bucket).or_default().push(normalize(&row));
    }
    for row in eval_rows {
        let target = match RowKind::of(&row) {
            RowKind::SingleNode => &mut out.evals,
            RowKind::SingleNodeAgentic => &mut out.agentic_evals,
            RowKind::MultiNode => &mut out.multinode_evals,
            RowKind::MultiNodeAgentic => &mut out.multinode_agentic_evals,
        };
        target.push(normalize(&row));
    }
    Ok(out)
}

/// Processor step 4 (spec 20 §8.1): base inputs, selected configs, scope rule.
fn prepare_append_only(
    resolved: &[(&ChangelogEntry, Vec<String>)],
    base_tree: &dyn Tree,
    layout: &Layout,
    head: &MasterConfigs,
) -> Result<Inputs, MatrixError> {
    let dir = inputs::configs_dir(base_tree, layout)?;
    let mut missing: Vec<String> = inputs::MASTER_FILES
        .iter()
        .chain([&inputs::RUNNER_FILE])
        .map(|f| format!("{dir}/{f}"))
        .filter(|p| !base_tree.exists(p).unwrap_or(false))
        .collect();
    if !missing.is_empty() {
        missing.sort();
        let quoted: Vec<String> = missing.iter().map(|m| format!("'{m}'")).collect();
        return Err(MatrixError::AppendOnly(format!(
            "append-only base revision is missing generation inputs: [{}]",
            quoted.join(", ")
        )));
    }
    let base = inputs::load(base_tree, layout)?;
    let mut selected: Vec<(String, BTreeSet<ScenarioType>)> = Vec::new();
    for (entry, configs) in resolved {
        for config in configs {
            let scenarios = entry.scenarios();
            match selected.iter_mut().find(|(c, _)| c == config) {
                Some((_, s)) => s.extend(scenarios),
                None => selected.push((config.clone(), scenarios.into_iter().collect())),
            }
        }
    }
    let mut absent: Vec<&str> =
        selected.iter().map(|(c, _)| c.as_str()).filter(|c| base.configs.get(c).is_none()).collect();
    if !absent.is_empty() {
        absent.sort_unstable();
        let quoted: Vec<String> = absent.iter().map(|m| format!("'{m}'")).collect();
        return Err(MatrixError::AppendOnly(format!(
            "append-only requires every selected config to exist in the base revision; missing: [{}]",
            quoted.join(", ")
        )));
    }
    validate_scope(&base.configs, head, &selected)?;
    Ok(base)
}

#[cfg(test)]
mod tests;
