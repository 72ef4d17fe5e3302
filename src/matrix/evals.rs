//! Eval selection over one generator call's rows (spec 20 §5.7). The scope is the call: the
//! processor must group configs exactly as upstream's subprocess calls do (§10 item 12).

use std::collections::{BTreeSet, HashMap};

use indexmap::IndexMap;
use serde_json::{json, Value};

use super::json::frozen_without;
use super::Row;

/// `MIN_EVAL_CONC`: default-subset evals ignore lower concurrencies.
pub const MIN_EVAL_CONC: i64 = 16;

/// Fields that never distinguish one multinode topology from another.
const PARALLELISM_IGNORED: [&str; 6] = ["conc", "run-eval", "eval-only", "eval-conc", "eval-all-concs", "exp-name"];

fn is_8k1k(row: &Row) -> bool {
    row.get("isl").and_then(Value::as_i64) == Some(8192) && row.get("osl").and_then(Value::as_i64) == Some(1024)
}

fn is_agentic(row: &Row) -> bool {
    row.get("scenario-type").and_then(Value::as_str) == Some("agentic-coding")
}

/// Row indices (with a conc) per group key, in first-seen order.
type Groups = IndexMap<String, Vec<(usize, i64)>>;

/// A scalar conc as one value, a list as its items.
pub fn conc_values(row: &Row) -> Vec<i64> {
    match row.get("conc") {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_i64).collect(),
        Some(v) => v.as_i64().into_iter().collect(),
        None => Vec::new(),
    }
}

fn eligible(row: &Row) -> Vec<i64> {
    let mut v: Vec<i64> = conc_values(row).into_iter().filter(|c| *c >= MIN_EVAL_CONC).collect();
    v.sort_unstable();
    v
}

/// The multinode parallelism key (`_multinode_parallelism_key`).
pub fn parallelism_key(row: &Row) -> String {
    frozen_without(row, &PARALLELISM_IGNORED)
}

/// The first entry with the largest value (Python's `max(..., key=...)`).
fn first_max(entries: &[(usize, i64)]) -> Option<(usize, i64)> {
    entries.iter().copied().fold(None, |best, e| match best {
        Some(b) if b.1 >= e.1 => Some(b),
        _ => Some(e),
    })
}

/// `mark_eval_entries`: sets `run-eval` on every row and `eval-conc` on chosen multinode rows.
pub fn mark_eval_entries(rows: &mut [Row], include_agentic: bool) {
    let mut marked: BTreeSet<usize> = BTreeSet::new();
    let mut eval_conc: HashMap<usize, i64> = HashMap::new();

    // Single-node fixed: group by identity, mark the max and upper-median concs.
    let mut sn_groups: Groups = Groups::new();
    for (i, row) in rows.iter().enumerate() {
        if !row.contains_key("tp") || !is_8k1k(row) || eligible(row).is_empty() {
            continue;
        }
        let key = json!([
            row.get("model"),
            row.get("runner"),
            row.get("framework"),
            row.get("precision"),
            row.get("isl"),
            row.get("osl"),
            row.get("spec-decoding"),
            row.get("dp-attn")
        ])
        .to_string();
        let conc = row.get("conc").and_then(Value::as_i64).unwrap_or_default();
        sn_groups.entry(key).or_default().push((i, conc));
    }
    for entries in sn_groups.values() {
        let distinct: Vec<i64> = entries.iter().map(|e| e.1).collect::<BTreeSet<_>>().into_iter().collect();
        let (Some(max), Some(median)) = (distinct.last(), distinct.get(distinct.len() / 2)) else { continue };
        marked.extend(entries.iter().filter(|e| e.1 == *max || e.1 == *median).map(|e| e.0));
    }

    // Multinode fixed: the highest eligible conc per parallelism key.
    let mut mn_groups = Groups::new();
    let mut ag_mn_groups = Groups::new();
    let mut ag_sn_groups = Groups::new();
    let push = |groups: &mut Groups, key: String, item: (usize, i64)| groups.entry(key).or_default().push(item);
    for (i, row) in rows.iter().enumerate() {
        if row.contains_key("tp") || !row.contains_key("prefill") || !is_8k1k(row) {
            continue;
        }
        if let Some(best) = eligible(row).last() {
            push(&mut mn_groups, parallelism_key(row), (i, *best));
        }
    }
    if include_agentic {
        for (i, row) in rows.iter().enumerate() {
            if !is_agentic(row) {
                continue;
            }
            if row.contains_key("prefill") {
                if let Some(best) = eligible(row).last() {
                    push(&mut ag_mn_groups, parallelism_key(row), (i, *best));
                }
                continue;
            }
            let value = conc_values(row).into_iter().max().unwrap_or_default();
            let key =
                json!([row.get("model"), row.get("runner"), row.get("framework"), row.get("precision")]).to_string();
            push(&mut ag_sn_groups, key, (i, value));
        }
    }
    for entries in mn_groups.values().chain(ag_mn_groups.values()) {
        if let Some((i, c)) = first_max(entries) {
            marked.insert(i);
            eval_conc.insert(i, c);
        }
    }
    for entries in ag_sn_groups.values() {
        if let Some((i, _)) = first_max(entries) {
            marked.insert(i);
        }
    }
    for (i, row) in rows.iter_mut().enumerate() {
        row.insert("run-eval".into(), Value::Bool(marked.contains(&i)));
        if let Some(c) = eval_conc.get(&i) {
            row.insert("eval-conc".into(), json!(c));
        }
    }
}

/// Sorted distinct union of two conc lists.
fn union_sorted(a: &[i64], b: &[i64]) -> Vec<i64> {
    a.iter().chain(b).copied().collect::<BTreeSet<_>>().into_iter().collect()
}

/// `mark_all_eval_entries` (`--all-evals`): every 8k1k fixed point, every agentic point,
/// multinode topologies merged.
pub fn mark_all_eval_entries(rows: Vec<Row>) -> Vec<Row> {
    let mut out: Vec<Row> = Vec::with_capacity(rows.len());
    let mut mn_index: HashMap<String, usize> = HashMap::new();
    let mut mn_agentic_index: HashMap<String, usize> = HashMap::new();
    for mut row in rows {
        if is_agentic(&row) {
            if !row.contains_key("prefill") {
                row.insert("run-eval".into(), Value::Bool(true));
                out.push(row);
                continue;
            }
            let key = parallelism_key(&row);
            let concs = conc_values(&row);
            if let Some(&at) = mn_agentic_index.get(&key) {
                let merged = union_sorted(&conc_values(&out[at]), &concs);
                let max = merged.last().copied();
                out[at].insert("conc".into(), json!(merged));
                out[at].insert("eval-conc".into(), json!(max));
                continue;
            }
            let merged = union_sorted(&concs, &[]);
            let max = concs.iter().max().copied();
            row.insert("conc".into(), json!(merged));
            row.insert("run-eval".into(), Value::Bool(true));
            row.insert("eval-conc".into(), json!(max));
            mn_agentic_index.insert(key, out.len());
            out.push(row);
            continue;
        }
        if !is_8k1k(&row) {
            out.push(row);
            continue;
        }
        if row.contains_key("prefill") {
            let key = parallelism_key(&row);
            let concs = conc_values(&row);
            if let Some(&at) = mn_index.get(&key) {
                let merged = union_sorted(&conc_values(&out[at]), &concs);
                out[at].insert("conc".into(), json!(merged));
                continue;
            }
            row.insert("conc".into(), json!(union_sorted(&concs, &[])));
            row.insert("run-eval".into(), Value::Bool(true));
            row.insert("eval-all-concs".into(), Value::Bool(true));
            row.shift_remove("eval-conc");
            mn_index.insert(key, out.len());
            out.push(row);
            continue;
        }
        row.insert("run-eval".into(), Value::Bool(true));
        out.push(row);
    }
    out
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

    fn sn(tp: i64, conc: i64, dpa: bool) -> Row {
        row(json!({"model": "m", "runner": "r", "framework": "f", "precision": "p", "isl": 8192, "osl": 1024,
            "tp": tp, "conc": conc, "spec-decoding": "none", "dp-attn": dpa, "run-eval": false}))
    }

    fn marked(rows: &[Row]) -> Vec<bool> {
        rows.iter().map(|r| r["run-eval"].as_bool().unwrap()).collect()
    }

    #[test]
    fn single_node_marks_max_and_upper_median_across_tp() {
        let mut rows: Vec<Row> =
            [4, 8].iter().flat_map(|tp| [8, 16, 256, 512, 1024].map(|c| sn(*tp, c, false))).collect();
        mark_eval_entries(&mut rows, false);
        // distinct eligible {16, 256, 512, 1024}: median index 2 → 512, max 1024; both TPs marked.
        assert_eq!(marked(&rows), [false, false, false, true, true, false, false, false, true, true]);
    }

    #[test]
    fn dp_attn_splits_groups_and_low_conc_is_ignored() {
        let mut rows = vec![sn(8, 128, true), sn(8, 256, true), sn(8, 4, false), sn(8, 8, false)];
        mark_eval_entries(&mut rows, false);
        assert_eq!(marked(&rows), [false, true, false, false]);
    }

    #[test]
    fn non_8k1k_rows_never_marked() {
        let mut r = sn(8, 256, false);
        r.insert("isl".into(), json!(1024));
        let mut rows = vec![r];
        mark_eval_entries(&mut rows, true);
        assert_eq!(marked(&rows), [false]);
        let rows = mark_all_eval_entries(rows);
        assert_eq!(marked(&rows), [false]);
    }

    fn mn(conc: Value, decode_tp: i64) -> Row {
        row(json!({"model": "m", "isl": 8192, "osl": 1024, "prefill": {"tp": 4}, "decode": {"tp": decode_tp},
            "conc": conc, "exp-name": "x", "run-eval": false}))
    }

    #[test]
    fn multinode_first_row_with_highest_eligible_conc() {
        let mut rows = vec![mn(json!([4, 8]), 8), mn(json!([16, 64]), 8), mn(json!([64, 32]), 8), mn(json!([32]), 16)];
        mark_eval_entries(&mut rows, false);
        assert_eq!(marked(&rows), [false, true, false, true]);
        assert_eq!(rows[1]["eval-conc"], json!(64));
        assert_eq!(rows[3]["eval-conc"], json!(32));
        assert!(!rows[0].contains_key("eval-conc"));
    }

    #[test]
    fn agentic_only_with_include_agentic() {
        let ag = |tp: i64, conc: i64| {
            row(json!({"model": "m", "runner": "r", "framework": "f", "precision": "p", "tp": tp, "conc": conc,
                "scenario-type": "agentic-coding"}))
        };
        let mut rows = vec![ag(4, 2), ag(8, 6), ag(4, 6)];
        mark_eval_entries(&mut rows, false);
        assert_eq!(marked(&rows), [false, false, false]);
        mark_eval_entries(&mut rows, true);
        assert_eq!(marked(&rows), [false, true, false]);
    }

    #[test]
    fn all_evals_merges_multinode_and_marks_every_single_node_point() {
        let mut rows = vec![mn(json!([32, 4]), 8), mn(json!([8, 4]), 8), sn(8, 4, false)];
        mark_eval_entries(&mut rows, true);
        let rows = mark_all_eval_entries(rows);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0]["conc"], json!([4, 8, 32]));
        assert_eq!(rows[0]["eval-all-concs"], json!(true));
        assert!(!rows[0].contains_key("eval-conc"));
        assert_eq!(rows[1]["run-eval"], json!(true));
        let mag = |c: i64| {
            let mut r = mn(json!([c]), 8);
            r.insert("scenario-type".into(), json!("agentic-coding"));
            r.remove("isl");
            r
        };
        let rows = mark_all_eval_entries(vec![mag(1), mag(4), mag(2)]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0]["conc"], json!([1, 2, 4]));
        assert_eq!(rows[0]["eval-conc"], json!(4));
    }
}
