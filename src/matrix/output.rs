//! The processor's final JSON object (spec 20 §6.2): rows re-ordered in upstream's model
//! declaration order, defaults added, nulls omitted, compact UTF-8.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Row;

/// Which output model a row belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    SingleNode,
    MultiNode,
    SingleNodeAgentic,
    MultiNodeAgentic,
}

impl RowKind {
    pub fn of(row: &Row) -> RowKind {
        let agentic = row.get("scenario-type").and_then(Value::as_str) == Some("agentic-coding");
        // Aggregated multinode rows (decision TD3) carry `worker` instead of `prefill`/`decode`.
        let multinode = ["prefill", "worker"].iter().any(|k| row.get(*k).is_some_and(|p| !p.is_null()));
        match (agentic, multinode) {
            (false, false) => RowKind::SingleNode,
            (false, true) => RowKind::MultiNode,
            (true, false) => RowKind::SingleNodeAgentic,
            (true, true) => RowKind::MultiNodeAgentic,
        }
    }

    /// (key, default when absent) in declaration order.
    fn fields(self) -> &'static [(&'static str, Fill)] {
        use Fill::{False, Req, Skip};
        match self {
            RowKind::SingleNode => &[
                ("image", Req),
                ("model", Req),
                ("model-prefix", Req),
                ("precision", Req),
                ("framework", Req),
                ("spec-decoding", Req),
                ("runner", Req),
                ("isl", Req),
                ("osl", Req),
                ("tp", Req),
                ("pp", Req),
                ("dcp-size", Req),
                ("pcp-size", Req),
                ("ep", Req),
                ("dp-attn", Req),
                ("conc", Req),
                ("max-model-len", Req),
                ("exp-name", Req),
                ("disagg", Req),
                ("run-eval", Req),
                ("eval-only", False),
                ("router", Skip),
                ("recipe-fingerprint", Skip),
            ],
            RowKind::MultiNode => &[
                ("image", Req),
                ("model", Req),
                ("model-prefix", Req),
                ("precision", Req),
                ("framework", Req),
                ("spec-decoding", Req),
                ("runner", Req),
                ("isl", Req),
                ("osl", Req),
                ("prefill", Req),
                ("decode", Req),
                ("conc", Req),
                ("max-model-len", Req),
                ("exp-name", Req),
                ("disagg", Req),
                ("run-eval", Req),
                ("eval-only", False),
                ("eval-conc", Skip),
                ("eval-all-concs", False),
                ("router", Skip),
                ("kv-p2p-transfer", Skip),
                ("recipe-fingerprint", Skip),
            ],
            RowKind::SingleNodeAgentic => &[
                ("image", Req),
                ("model", Req),
                ("model-prefix", Req),
                ("precision", Req),
                ("framework", Req),
                ("runner", Req),
                ("tp", Req),
                ("pp", Req),
                ("dcp-size", Req),
                ("pcp-size", Req),
                ("ep", Req),
                ("dp-attn", Req),
                ("spec-decoding", Req),
                ("conc", Req),
                ("kv-offloading", Req),
                ("kv-offload-backend", Skip),
                ("router", Skip),
                ("total-cpu-dram-gb", Req),
                ("duration", Req),
                ("exp-name", Req),
                ("scenario-type", Req),
                ("run-eval", Skip),
                ("eval-only", Skip),
                ("recipe-fingerprint", Skip),
            ],
            RowKind::MultiNodeAgentic => &[
                ("image", Req),
                ("model", Req),
                ("model-prefix", Req),
                ("precision", Req),
                ("framework", Req),
                ("spec-decoding", Req),
                ("runner", Req),
                ("prefill", Req),
                ("decode", Req),
                ("num-nodes", Req),
                ("worker", Req),
                ("conc", Req),
                ("kv-offloading", Req),
                ("kv-offload-backend", Skip),
                ("router", Skip),
                ("kv-p2p-transfer", Skip),
                ("total-cpu-dram-gb", Req),
                ("duration", Req),
                ("exp-name", Req),
                ("disagg", Req),
                ("scenario-type", Req),
                ("run-eval", Skip),
                ("eval-only", Skip),
                ("eval-conc", Skip),
                ("recipe-fingerprint", Skip),
            ],
        }
    }
}

#[derive(Clone, Copy)]
enum Fill {
    /// Always present in generated rows.
    Req,
    /// `false` when absent.
    False,
    /// Omitted when absent or null.
    Skip,
}

const WORKER_FIELDS: [&str; 7] = ["num-worker", "tp", "pp", "dcp-size", "pcp-size", "ep", "dp-attn"];

fn worker(value: &Value) -> Value {
    let Some(w) = value.as_object() else { return value.clone() };
    let mut out = Map::new();
    for k in WORKER_FIELDS {
        if let Some(v) = w.get(k).filter(|v| !v.is_null()) {
            out.insert(k.into(), v.clone());
        }
    }
    if let Some(h) = w.get("hardware").filter(|v| !v.is_null()) {
        out.insert("hardware".into(), h.clone());
    }
    match w.get("additional-settings") {
        None => {
            out.insert("additional-settings".into(), Value::Array(Vec::new()));
        }
        Some(Value::Null) => {}
        Some(v) => {
            out.insert("additional-settings".into(), v.clone());
        }
    }
    Value::Object(out)
}

fn ordered(value: &Value, keys: &[&str]) -> Value {
    let Some(m) = value.as_object() else { return value.clone() };
    let mut out = Map::new();
    for k in keys {
        if let Some(v) = m.get(*k).filter(|v| !v.is_null()) {
            out.insert((*k).into(), v.clone());
        }
    }
    Value::Object(out)
}

/// A generator row in its output model's shape.
pub fn normalize(row: &Row) -> Row {
    let kind = RowKind::of(row);
    let mut out = Map::new();
    for (key, default) in kind.fields() {
        let value = match row.get(*key).filter(|v| !v.is_null()) {
            Some(v) => match *key {
                "prefill" | "decode" | "worker" => worker(v),
                "router" => ordered(v, &["name", "version"]),
                "kv-offload-backend" => ordered(v, &["name", "version"]),
                _ => v.clone(),
            },
            None => match default {
                Fill::False => Value::Bool(false),
                Fill::Req | Fill::Skip => continue,
            },
        };
        out.insert((*key).into(), value);
    }
    out
}

/// `changelog_metadata`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangelogMetadata {
    pub base_ref: String,
    pub head_ref: String,
    pub entries: Vec<Value>,
}

/// The processor's output (`ChangelogMatrixEntry`), rows already normalized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixOutput {
    pub single_node: IndexMap<String, Vec<Row>>,
    pub multi_node: IndexMap<String, Vec<Row>>,
    pub evals: Vec<Row>,
    pub agentic_evals: Vec<Row>,
    pub multinode_evals: Vec<Row>,
    pub multinode_agentic_evals: Vec<Row>,
    pub changelog_metadata: ChangelogMetadata,
}

impl MatrixOutput {
    /// Compact UTF-8 JSON, as upstream prints it (without the final newline).
    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Every row of every family, in output order.
    pub fn all_rows(&self) -> impl Iterator<Item = &Row> {
        self.single_node
            .values()
            .chain(self.multi_node.values())
            .flatten()
            .chain(&self.evals)
            .chain(&self.agentic_evals)
            .chain(&self.multinode_evals)
            .chain(&self.multinode_agentic_evals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn multinode_worker_defaults_and_order() {
        let row: Row = serde_json::from_value(json!({
            "image": "i", "model": "m", "model-prefix": "p", "precision": "fp4", "framework": "f", "runner": "r",
            "isl": 8192, "osl": 1024, "spec-decoding": "none",
            "prefill": {"dp-attn": true, "ep": 4, "tp": 4, "num-worker": 1, "pp": 1, "dcp-size": 1, "pcp-size": 1},
            "decode": {"num-worker": 1, "tp": 8, "ep": 8, "dp-attn": false, "additional-settings": null, "hardware": "h",
                       "pp": 1, "dcp-size": 1, "pcp-size": 1},
            "conc": [4], "max-model-len": 9472, "exp-name": "p_8k1k", "disagg": true, "run-eval": false,
            "kv-p2p-transfer": "nixl", "router": {"version": "1", "name": "r"}
        }))
        .unwrap();
        assert_eq!(RowKind::of(&row), RowKind::MultiNode);
        let out = serde_json::to_string(&normalize(&row)).unwrap();
        assert_eq!(
            out,
            r#"{"image":"i","model":"m","model-prefix":"p","precision":"fp4","framework":"f","spec-decoding":"none","runner":"r","isl":8192,"osl":1024,"prefill":{"num-worker":1,"tp":4,"pp":1,"dcp-size":1,"pcp-size":1,"ep":4,"dp-attn":true,"additional-settings":[]},"decode":{"num-worker":1,"tp":8,"pp":1,"dcp-size":1,"pcp-size":1,"ep":8,"dp-attn":false,"hardware":"h"},"conc":[4],"max-model-len":9472,"exp-name":"p_8k1k","disagg":true,"run-eval":false,"eval-only":false,"eval-all-concs":false,"router":{"name":"r","version":"1"},"kv-p2p-transfer":"nixl"}"#
        );
    }

    #[test]
    fn agentic_rows_omit_absent_eval_fields() {
        let row: Row = serde_json::from_value(json!({
            "image": "i", "model": "m", "model-prefix": "p", "precision": "fp4", "framework": "f", "runner": "r",
            "tp": 8, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 1, "dp-attn": false, "spec-decoding": "none",
            "conc": 4, "kv-offloading": "none", "total-cpu-dram-gb": 0, "duration": 3600, "exp-name": "e",
            "scenario-type": "agentic-coding", "recipe-fingerprint": "ab"
        }))
        .unwrap();
        let out = normalize(&row);
        assert_eq!(RowKind::of(&row), RowKind::SingleNodeAgentic);
        assert!(!out.contains_key("run-eval") && !out.contains_key("eval-only"));
        assert_eq!(out.keys().next_back().map(String::as_str), Some("recipe-fingerprint"));
    }
}
