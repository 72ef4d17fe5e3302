//! The shapes upstream's workflows give CI artifacts: artifact name patterns and the file name
//! patterns inside them, as one table with the workflow line each comes from
//! (`docs/ci-shapes.md` lists them). An upstream shape change is one row here.

use serde_json::Value;

use crate::matrix::evals::conc_values;
use crate::matrix::Row;

/// What an artifact of a workflow run holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArtifactKind {
    /// `process_result.py` aggregates of a fixed-sequence run (`agg_<RF>*.json`).
    FixedSeqAggregate,
    /// AgentX aggregates of an agentic run (`<RF>.json`, `<RF>_conc<N>.json`).
    AgenticAggregate,
    /// Raw agentic results (aiperf outputs).
    AgenticRaw,
    /// One eval set: `meta_env.json`, `results*.json`, `sample*.jsonl`.
    EvalSet,
    /// The collected eval rows of a run (`collect-evals.yml`).
    CollectedEvals,
    /// Server logs of an eval-only job.
    EvalServerLogs,
    /// Server logs of a benchmark job (single-node).
    ServerLogs,
    /// `multinode_server_logs.tar.gz` of a multi-node job.
    MultinodeServerLogs,
    /// GPU metrics of an eval-only job.
    EvalGpuMetrics,
    /// GPU metrics of a benchmark job.
    GpuMetrics,
    /// The power audit bundle.
    PowerAudit,
}

/// An artifact name pattern: `<prefix><RF>` (or the exact name when `exact`).
#[derive(Debug, Clone, Copy)]
pub struct ArtifactShape {
    pub prefix: &'static str,
    pub exact: bool,
    pub kind: ArtifactKind,
    /// The workflow lines that upload it (`/tmp/ix/.github/workflows/…`).
    pub source: &'static str,
}

const fn artifact(prefix: &'static str, kind: ArtifactKind, source: &'static str) -> ArtifactShape {
    ArtifactShape { prefix, exact: false, kind, source }
}

/// Every artifact name pattern sweepgate reads. A name takes the first row it matches, so a
/// longer prefix comes before a shorter one it extends (`bmk_agentic_` before `bmk_`).
pub const ARTIFACTS: &[ArtifactShape] = &[
    artifact(
        "bmk_agentic_",
        ArtifactKind::AgenticAggregate,
        "benchmark-tmpl.yml:343, benchmark-multinode-tmpl.yml:461",
    ),
    artifact("bmk_", ArtifactKind::FixedSeqAggregate, "benchmark-tmpl.yml:336, benchmark-multinode-tmpl.yml:432"),
    artifact("agentic_", ArtifactKind::AgenticRaw, "benchmark-tmpl.yml:350, benchmark-multinode-tmpl.yml:468"),
    artifact("eval_server_logs_", ArtifactKind::EvalServerLogs, "benchmark-tmpl.yml:361"),
    artifact("eval_gpu_metrics_", ArtifactKind::EvalGpuMetrics, "benchmark-tmpl.yml:373"),
    ArtifactShape {
        prefix: "eval_results_all",
        exact: true,
        kind: ArtifactKind::CollectedEvals,
        source: "collect-evals.yml",
    },
    artifact("eval_", ArtifactKind::EvalSet, "benchmark-tmpl.yml:400, benchmark-multinode-tmpl.yml:479"),
    artifact("multinode_server_logs_", ArtifactKind::MultinodeServerLogs, "benchmark-multinode-tmpl.yml:452"),
    artifact("server_logs_", ArtifactKind::ServerLogs, "benchmark-tmpl.yml:361"),
    artifact("gpu_metrics_", ArtifactKind::GpuMetrics, "benchmark-tmpl.yml:373"),
    artifact("power_audit_", ArtifactKind::PowerAudit, "benchmark-tmpl.yml:385, benchmark-multinode-tmpl.yml:439"),
];

/// An artifact's kind and the part of its name after the pattern's prefix (the result
/// filename `RF`, `EXP_NAME_RF` for single-node eval sets); `None` for a name no workflow uploads.
pub fn artifact_kind(name: &str) -> Option<(ArtifactKind, &str)> {
    ARTIFACTS.iter().find_map(|shape| match shape.exact {
        true => (name == shape.prefix).then_some((shape.kind, "")),
        false => name.strip_prefix(shape.prefix).map(|rf| (shape.kind, rf)),
    })
}

/// What follows `RF` in an aggregate file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// `<RF>.json`
    Json,
    /// `<RF>_conc<N>.json`: one file per concurrency of a multi-node agentic job.
    ConcJson,
    /// `<RF>_<anything>.json`: one file per result of a multi-node fixed-sequence job.
    AnyJson,
}

/// A file name pattern inside an aggregate artifact: `<before><RF><tail>`.
#[derive(Debug, Clone, Copy)]
pub struct FileShape {
    pub kind: ArtifactKind,
    pub before: &'static str,
    pub tail: Tail,
    pub multinode: bool,
    pub source: &'static str,
}

/// Every aggregate file pattern (the `path:` of the upload steps).
pub const AGGREGATE_FILES: &[FileShape] = &[
    FileShape {
        kind: ArtifactKind::FixedSeqAggregate,
        before: "agg_",
        tail: Tail::Json,
        multinode: false,
        source: "benchmark-tmpl.yml:337",
    },
    FileShape {
        kind: ArtifactKind::FixedSeqAggregate,
        before: "agg_",
        tail: Tail::AnyJson,
        multinode: true,
        source: "benchmark-multinode-tmpl.yml:433",
    },
    FileShape {
        kind: ArtifactKind::AgenticAggregate,
        before: "",
        tail: Tail::Json,
        multinode: false,
        source: "benchmark-tmpl.yml:344",
    },
    FileShape {
        kind: ArtifactKind::AgenticAggregate,
        before: "",
        tail: Tail::ConcJson,
        multinode: true,
        source: "benchmark-multinode-tmpl.yml:462",
    },
];

/// The shape of file `file` in aggregate artifact `<prefix><rf>` of kind `kind`; `None` when the
/// file matches no pattern the workflows upload (an unreadable fact for the caller, never
/// "no points").
pub fn aggregate_file(kind: ArtifactKind, rf: &str, file: &str) -> Option<&'static FileShape> {
    AGGREGATE_FILES.iter().find(|shape| {
        let Some(rest) = file.strip_prefix(shape.before).and_then(|f| f.strip_prefix(rf)) else { return false };
        shape.kind == kind
            && match shape.tail {
                Tail::Json => rest == ".json",
                Tail::ConcJson => rest
                    .strip_prefix("_conc")
                    .and_then(|r| r.strip_suffix(".json"))
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())),
                Tail::AnyJson => {
                    rest.strip_prefix('_').and_then(|r| r.strip_suffix(".json")).is_some_and(|r| !r.is_empty())
                }
            }
    })
}

/// A raw per-concurrency result of srt-slurm's benchmark client
/// (`results_concurrency_<N>_gpus_<G>.json`): what sweepgate's own sweeps export in their
/// `bmk_<point>` artifacts (`sweep::results_store`, decision L7), beside or instead of an
/// aggregate. Not an aggregate file and not an unknown shape: a curve reader passes it over.
pub fn is_raw_result(file: &str) -> bool {
    let Some(rest) = file.strip_prefix("results_concurrency_").and_then(|f| f.strip_suffix(".json")) else {
        return false;
    };
    let Some((conc, gpus)) = rest.split_once("_gpus_") else { return false };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(conc) && digits(gpus)
}

/// `RESULT_FILENAME` of a matrix row as the workflow builds it from the row's inputs, before the
/// optional `_recipe-<fingerprint>` (benchmark-tmpl.yml:278 single-node, one conc;
/// benchmark-multinode-tmpl.yml:345 multi-node, the conc list joined by `x`); `machine` is the
/// runner's name that ends it (`""`: the head every machine's file starts with). An unset size
/// is 1 and an unset flag `false`, as the templates' input defaults give them.
pub fn result_filename(row: &Row, concs: &[i64], machine: &str) -> String {
    let value = |v: Option<&Value>| match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    };
    let size = |v: String| if v.is_empty() { "1".to_owned() } else { v };
    let flag = |v: String| if v.is_empty() { "false".to_owned() } else { v };
    let text = |k: &str| value(row.get(k));
    let conc: Vec<String> = concs.iter().map(i64::to_string).collect();
    let tail =
        format!("disagg-{}_spec-{}_conc{}_{machine}", flag(text("disagg")), text("spec-decoding"), conc.join("x"));
    let head = format!("{}_{}_{}", text("exp-name"), text("precision"), text("framework"));
    if row.contains_key("prefill") {
        let role = |r: &str| {
            let w = |k: &str| value(row.get(r).and_then(|w| w.get(k)));
            format!(
                "{r}-tp{}-pp{}-dcp{}-pcp{}-ep{}-dp{}-nw{}",
                size(w("tp")),
                size(w("pp")),
                size(w("dcp-size")),
                size(w("pcp-size")),
                size(w("ep")),
                flag(w("dp-attn")),
                size(w("num-worker"))
            )
        };
        format!("{head}_{}_{}_{tail}", role("prefill"), role("decode"))
    } else {
        format!(
            "{head}_tp{}-pp{}-dcp{}-pcp{}-ep{}-dpa{}_{tail}",
            size(text("tp")),
            size(text("pp")),
            size(text("dcp-size")),
            size(text("pcp-size")),
            size(text("ep")),
            flag(text("dp-attn"))
        )
    }
}

/// The result filenames a matrix row's jobs write, each up to the runner's name: one per conc
/// of a single-node row, one for a multi-node row's conc list.
pub fn result_filename_heads(row: &Row) -> Vec<String> {
    let concs = conc_values(row);
    if row.contains_key("prefill") {
        vec![result_filename(row, &concs, "")]
    } else {
        concs.iter().map(|c| result_filename(row, &[*c], "")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The workflows' `RESULT_FILENAME` of a single-node and a multi-node row (the corpus'
    /// #2642 shape), with unset sizes 1 and unset flags `false`.
    #[test]
    fn result_filenames_are_built_as_the_workflows_build_them() {
        let row = |v: serde_json::Value| v.as_object().cloned().unwrap_or_default();
        let single = row(serde_json::json!({"exp-name": "qwen3.5_8k1k", "precision": "fp8", "framework": "sglang",
            "tp": 8, "ep": 8, "dp-attn": false, "spec-decoding": "none", "conc": 64}));
        assert_eq!(
            result_filename_heads(&single),
            ["qwen3.5_8k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep8-dpafalse_disagg-false_spec-none_conc64_"]
        );
        let multi = row(serde_json::json!({"exp-name": "glm5.2_p1x8_d0x8_conc2_kvdram-hicache", "precision": "fp4",
            "framework": "dynamo-sglang", "spec-decoding": "mtp", "disagg": false, "conc": [2, 4],
            "prefill": {"tp": 8, "ep": 1, "dp-attn": false, "num-worker": 1},
            "decode": {"tp": 8, "ep": 1, "dp-attn": false, "num-worker": 0}}));
        assert_eq!(
            result_filename(&multi, &[2, 4], "gb200-nv_0"),
            "glm5.2_p1x8_d0x8_conc2_kvdram-hicache_fp4_dynamo-sglang_prefill-tp8-pp1-dcp1-pcp1-ep1-dpfalse-nw1_decode-tp8-pp1-dcp1-pcp1-ep1-dpfalse-nw0_disagg-false_spec-mtp_conc2x4_gb200-nv_0"
        );
        assert_eq!(result_filename_heads(&multi).len(), 1, "one job for the conc list");
    }

    #[test]
    fn raw_srt_slurm_results_are_known_and_nothing_else_is() {
        assert!(is_raw_result("results_concurrency_4_gpus_8.json"));
        assert!(!is_raw_result("results_concurrency_x_gpus_8.json"));
        assert!(!is_raw_result("results_concurrency_4.json"));
        assert!(!is_raw_result("agg_x.json"));
    }

    const RF: &str = "dsv4_fp4_sglang-disagg_prefill-tp8-pp1-dcp1-pcp1-ep8-dptrue-nw1_decode-tp8-pp1-dcp1-pcp1-ep8-dptrue-nw2_disagg-true_spec-mtp_conc8x16_mi355x-amds_0";

    #[test]
    fn artifact_names_take_the_longest_pattern() {
        assert_eq!(artifact_kind(&format!("bmk_agentic_{RF}")), Some((ArtifactKind::AgenticAggregate, RF)));
        assert_eq!(artifact_kind(&format!("bmk_{RF}")), Some((ArtifactKind::FixedSeqAggregate, RF)));
        assert_eq!(artifact_kind(&format!("eval_server_logs_{RF}")).map(|k| k.0), Some(ArtifactKind::EvalServerLogs));
        assert_eq!(artifact_kind("eval_results_all").map(|k| k.0), Some(ArtifactKind::CollectedEvals));
        assert_eq!(artifact_kind(&format!("eval_{RF}")).map(|k| k.0), Some(ArtifactKind::EvalSet));
        assert_eq!(
            artifact_kind(&format!("multinode_server_logs_{RF}")).map(|k| k.0),
            Some(ArtifactKind::MultinodeServerLogs)
        );
        assert_eq!(artifact_kind("results_bmk"), None);
    }

    #[test]
    fn aggregate_files_match_exactly_the_uploaded_paths() {
        use ArtifactKind::{AgenticAggregate as A, FixedSeqAggregate as F};
        let tail = |kind, file: &str| aggregate_file(kind, RF, file).map(|s| (s.tail, s.multinode));
        assert_eq!(tail(A, &format!("{RF}.json")), Some((Tail::Json, false)));
        assert_eq!(tail(A, &format!("{RF}_conc16.json")), Some((Tail::ConcJson, true)));
        assert_eq!(tail(F, &format!("agg_{RF}.json")), Some((Tail::Json, false)));
        assert_eq!(tail(F, &format!("agg_{RF}_ctx_4_gen_8_gpus_12.json")), Some((Tail::AnyJson, true)));
        for other in
            [format!("{RF}_concX.json"), format!("{RF}_conc.json"), "agg_other.json".into(), format!("{RF}.txt")]
        {
            assert_eq!(tail(A, &other), None, "{other}");
        }
        assert_eq!(tail(F, &format!("{RF}.json")), None, "a fixed-seq aggregate is agg_-prefixed");
        assert_eq!(tail(F, &format!("agg_{RF}_.json")), None);
    }
}
