//! Append-only entries (spec 20 §8): the scope rule over master configs and the
//! `append_only_delta` over generated rows ("base matrix ⊆ head matrix", only new points run).

use std::collections::{BTreeSet, HashMap, HashSet};

use serde_json::{json, Value};

use super::evals::conc_values;
use super::json::frozen_without;
use super::{MatrixError, Row};
use crate::domain::changelog::ScenarioType;
use crate::domain::master_config::MasterConfigs;

const CURVE_IGNORED: [&str; 3] = ["conc", "exp-name", "recipe-fingerprint"];

fn fail(message: impl Into<String>) -> MatrixError {
    MatrixError::AppendOnly(message.into())
}

/// Python `repr` of a list of strings, as upstream prints `sorted(...)`.
fn py_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("'{s}'")).collect();
    format!("[{}]", quoted.join(", "))
}

/// `validate_append_only_scope`: edits outside the selected configs and scenarios are refused.
pub fn validate_scope(
    base: &MasterConfigs,
    head: &MasterConfigs,
    selected: &[(String, BTreeSet<ScenarioType>)],
) -> Result<(), MatrixError> {
    let is_selected = |k: &str| selected.iter().any(|(s, _)| s == k);
    let mut unrelated: Vec<&str> = base
        .keys()
        .chain(head.keys())
        .filter(|k| !is_selected(k))
        .filter(|k| base.get(k).map(|c| &c.raw) != head.get(k).map(|c| &c.raw))
        .collect();
    unrelated.sort_unstable();
    unrelated.dedup();
    if !unrelated.is_empty() {
        return Err(fail(format!(
            "append-only PR changed configs not selected by its changelog entry: {}",
            py_list(&unrelated)
        )));
    }
    for (config, allowed) in selected {
        let (Some(b), Some(h)) = (base.get(config), head.get(config)) else { continue };
        let scenarios = |v: &Value| v.get("scenarios").and_then(Value::as_object).cloned().unwrap_or_default();
        let (bs, hs) = (scenarios(&b.raw), scenarios(&h.raw));
        let keys = |m: &serde_json::Map<String, Value>| m.keys().cloned().collect::<HashSet<_>>();
        if keys(&bs) != keys(&hs) {
            return Err(fail(format!("append-only added or removed a scenario in config '{config}'")));
        }
        let allowed_names: HashSet<&str> = allowed.iter().map(|s| s.as_str()).collect();
        let has_unselected = bs.keys().any(|k| !allowed_names.contains(k.as_str()));
        let top = |v: &Value| {
            let mut m = v.as_object().cloned().unwrap_or_default();
            m.shift_remove("scenarios");
            m
        };
        if has_unselected && top(&b.raw) != top(&h.raw) {
            return Err(fail(format!(
                "append-only changed config-wide fields that can affect scenarios outside its changelog scope: '{config}'"
            )));
        }
        for (scenario, value) in &bs {
            if !allowed_names.contains(scenario.as_str()) && hs.get(scenario) != Some(value) {
                return Err(fail(format!(
                    "append-only changed a scenario outside its changelog scope: '{config}' / '{scenario}'"
                )));
            }
        }
    }
    Ok(())
}

fn concurrencies(row: &Row) -> Result<Vec<i64>, MatrixError> {
    let conc = row.get("conc");
    let valid = match conc {
        Some(Value::Number(n)) => n.is_i64(),
        Some(Value::Array(items)) => !items.is_empty() && items.iter().all(Value::is_i64),
        _ => false,
    };
    if !valid {
        let shown = conc.map_or("None".to_owned(), |c| c.to_string());
        return Err(fail(format!("append-only matrix entry has invalid concurrency value: {shown}")));
    }
    Ok(conc_values(row))
}

/// The visual series a row belongs to (`_matrix_visual_series_key`).
fn series_key(row: &Row) -> String {
    let agentic = row.get("scenario-type").and_then(Value::as_str) == Some("agentic-coding");
    let kv = row.get("kv-offloading").and_then(Value::as_str).unwrap_or("none");
    let offload = if kv.is_empty() || kv == "none" { "off" } else { "on" };
    let hardware = |role: &str| row.get(role).and_then(|w| w.get("hardware")).cloned().unwrap_or(Value::Null);
    json!([
        row.get("model"),
        row.get("model-prefix"),
        row.get("precision"),
        row.get("framework"),
        row.get("runner"),
        row.get("disagg").and_then(Value::as_bool).unwrap_or(false),
        if agentic { "agentic_traces" } else { "single_turn" },
        if agentic { None } else { row.get("isl") },
        if agentic { None } else { row.get("osl") },
        offload,
        if agentic { json!("") } else { row.get("spec-decoding").cloned().unwrap_or(json!("none")) },
        hardware("prefill"),
        hardware("decode"),
    ])
    .to_string()
}

/// `append_only_delta(base_rows, head_rows)`.
pub fn append_only_delta(base: &[Row], head: &[Row]) -> Result<Vec<Row>, MatrixError> {
    let mut base_groups: HashMap<String, HashSet<i64>> = HashMap::new();
    let mut base_order: Vec<String> = Vec::new();
    for row in base {
        let key = frozen_without(row, &CURVE_IGNORED);
        let concs = concurrencies(row)?;
        let entry = base_groups.entry(key.clone()).or_insert_with(|| {
            base_order.push(key);
            HashSet::new()
        });
        entry.extend(concs);
    }
    let mut head_groups: HashMap<String, HashSet<i64>> = HashMap::new();
    let mut head_keys: Vec<String> = Vec::with_capacity(head.len());
    for row in head {
        let key = frozen_without(row, &CURVE_IGNORED);
        head_groups.entry(key.clone()).or_default().extend(concurrencies(row)?);
        head_keys.push(key);
    }
    if base_groups.is_empty() {
        return Err(fail("append-only requires an existing curve in the base revision"));
    }
    if base_order.iter().any(|k| !head_groups.contains_key(k)) {
        return Err(fail("append-only may not remove or modify existing generated recipes"));
    }
    for key in &base_order {
        let mut removed: Vec<i64> = base_groups[key].difference(&head_groups[key]).copied().collect();
        if !removed.is_empty() {
            removed.sort_unstable();
            let shown: Vec<String> = removed.iter().map(i64::to_string).collect();
            return Err(fail(format!(
                "append-only may not remove existing concurrency points: [{}]",
                shown.join(", ")
            )));
        }
    }
    let empty = HashSet::new();
    let mut emitted: HashMap<&str, HashSet<i64>> = HashMap::new();
    let mut delta: Vec<Row> = Vec::new();
    for (row, key) in head.iter().zip(&head_keys) {
        let base_points = base_groups.get(key).unwrap_or(&empty);
        let added: HashSet<i64> = head_groups[key].difference(base_points).copied().collect();
        let done = emitted.entry(key.as_str()).or_default();
        match row.get("conc") {
            Some(Value::Number(n)) => {
                if let Some(c) = n.as_i64() {
                    if added.contains(&c) && done.insert(c) {
                        delta.push(row.clone());
                    }
                }
            }
            _ => {
                let fresh: Vec<i64> =
                    conc_values(row).into_iter().filter(|c| added.contains(c) && done.insert(*c)).collect();
                if !fresh.is_empty() {
                    let mut copy = row.clone();
                    copy.insert("conc".into(), json!(fresh));
                    delta.push(copy);
                }
            }
        }
    }
    if delta.is_empty() {
        return Err(fail("append-only did not add any generated points"));
    }
    let mut base_images: HashMap<String, HashSet<String>> = HashMap::new();
    for row in base {
        base_images
            .entry(series_key(row))
            .or_default()
            .insert(row.get("image").map(Value::to_string).unwrap_or_default());
    }
    for row in &delta {
        let image = row.get("image").filter(|v| !v.is_null()).map(Value::to_string);
        let series = base_images.get(&series_key(row));
        let ok = match (image, series) {
            (Some(image), Some(images)) => images.len() == 1 && images.contains(&image),
            _ => false,
        };
        if !ok {
            return Err(fail(
                "append-only additions must belong to an existing visual curve with one unchanged non-null image",
            ));
        }
    }
    Ok(delta)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(v: Value) -> Row {
        match v {
            Value::Object(m) => m,
            _ => unreachable!("test rows are objects"),
        }
    }

    fn sn(tp: i64, conc: i64, image: &str) -> Row {
        row(json!({"image": image, "model": "m", "runner": "r", "isl": 8192, "osl": 1024, "tp": tp, "conc": conc,
            "exp-name": "m_8k1k", "spec-decoding": "none"}))
    }

    #[test]
    fn delta_holds_new_points_and_new_recipes_in_the_same_series() {
        let base = vec![sn(8, 4, "img"), sn(8, 8, "img")];
        let head = vec![sn(8, 2, "img"), sn(8, 4, "img"), sn(8, 8, "img"), sn(4, 4, "img"), sn(4, 4, "img")];
        let delta = append_only_delta(&base, &head).unwrap();
        let got: Vec<(i64, i64)> =
            delta.iter().map(|r| (r["tp"].as_i64().unwrap(), r["conc"].as_i64().unwrap())).collect();
        assert_eq!(got, [(8, 2), (4, 4)], "duplicate head rows are emitted once");
    }

    #[test]
    fn list_rows_keep_only_new_values_in_source_order() {
        let mn = |conc: Value| row(json!({"image": "i", "prefill": {"tp": 4}, "conc": conc, "exp-name": "x"}));
        let delta = append_only_delta(&[mn(json!([8, 4]))], &[mn(json!([16, 4, 2, 8]))]).unwrap();
        assert_eq!(delta.len(), 1);
        assert_eq!(delta[0]["conc"], json!([16, 2]));
    }

    #[test]
    fn rejections() {
        let base = vec![sn(8, 4, "img"), sn(8, 8, "img")];
        let msg = |head: Vec<Row>| append_only_delta(&base, &head).unwrap_err().to_string();
        assert!(msg(base.clone()).ends_with("append-only did not add any generated points"));
        assert!(msg(vec![sn(8, 8, "img"), sn(8, 16, "img")])
            .ends_with("append-only may not remove existing concurrency points: [4]"));
        assert!(msg(vec![sn(8, 4, "new"), sn(8, 8, "new")])
            .ends_with("append-only may not remove or modify existing generated recipes"));
        assert!(msg(vec![sn(8, 4, "img"), sn(8, 8, "img"), sn(8, 2, "new")]).ends_with(
            "append-only additions must belong to an existing visual curve with one unchanged non-null image"
        ));
        assert!(append_only_delta(&[], &base)
            .unwrap_err()
            .to_string()
            .ends_with("requires an existing curve in the base revision"));
        let bad = row(json!({"image": "i", "conc": []}));
        assert!(append_only_delta(&[bad], &base).unwrap_err().to_string().contains("invalid concurrency value: []"));
    }
}
