//! The shapes upstream's workflows give CI artifacts: artifact name patterns and the file name
//! patterns inside them, as data (`shapes.toml` beside this module) with the workflow lines each
//! comes from (`docs/ci-shapes.md` lists them). The fixture generators and the real-PR corpus
//! write their artifacts from the same file, so an upstream shape change is one data change.

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

use crate::matrix::evals::conc_values;
use crate::matrix::Row;

/// What an artifact of a workflow run holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
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

/// A name pattern of `shapes.toml`: an artifact's name, or a file's inside an aggregate artifact.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shape {
    /// The pattern: literal text and `{RF}`, `{EXP_NAME}`, `{CONC}`, `{SUFFIX}` placeholders.
    pub name: String,
    pub kind: ArtifactKind,
    /// The single-node (`false`) or multi-node (`true`) job's shape; `None`: both jobs'.
    #[serde(default)]
    pub multinode: Option<bool>,
    /// The workflow lines that write it (`<path>:<line>` in upstream's tree).
    pub sources: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    artifact: Vec<Shape>,
    aggregate_file: Vec<Shape>,
}

/// The shapes table as text, for readers outside the crate's Rust (the generators read the file).
pub const TABLE_FILE: &str = include_str!("shapes.toml");

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    // Built-in data; `tests::the_table_loads_and_every_pattern_is_well_formed` keeps it valid.
    TABLE.get_or_init(|| toml::from_str(TABLE_FILE).expect("src/results/shapes.toml is valid"))
}

/// Every artifact name pattern sweepgate reads, in matching order.
pub fn artifacts() -> &'static [Shape] {
    &table().artifact
}

/// Every aggregate file pattern (the `path:` of the upload steps).
pub fn aggregate_files() -> &'static [Shape] {
    &table().aggregate_file
}

/// A piece of a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece<'a> {
    Text(&'a str),
    Hole(&'a str),
}

/// The pieces of a pattern; `None` for an unclosed `{`.
fn pieces(pattern: &str) -> Option<Vec<Piece<'_>>> {
    let mut out = Vec::new();
    let mut rest = pattern;
    while let Some(open) = rest.find('{') {
        let close = open + rest[open..].find('}')?;
        if open > 0 {
            out.push(Piece::Text(&rest[..open]));
        }
        out.push(Piece::Hole(&rest[open + 1..close]));
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    Some(out)
}

/// Whether `text` is what placeholder `hole` stands for when no value is given for it.
fn fills(hole: &str, text: &str) -> bool {
    !text.is_empty() && (hole != "CONC" || text.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `text` matches `pieces`, with `given` placeholders standing for their values.
fn matches(pieces: &[Piece<'_>], given: &[(&str, &str)], text: &str) -> bool {
    match pieces.split_first() {
        None => text.is_empty(),
        Some((Piece::Text(t), rest)) => text.strip_prefix(t).is_some_and(|t| matches(rest, given, t)),
        Some((Piece::Hole(h), rest)) => match given.iter().find(|(k, _)| k == h) {
            Some((_, v)) => text.strip_prefix(v).is_some_and(|t| matches(rest, given, t)),
            None => (1..=text.len())
                .filter(|&i| text.is_char_boundary(i))
                .any(|i| fills(h, &text[..i]) && matches(rest, given, &text[i..])),
        },
    }
}

/// `pattern` with each placeholder replaced by its value in `values`; `None` when a placeholder
/// has no value.
fn fill(pattern: &str, values: &[(&str, &str)]) -> Option<String> {
    pieces(pattern)?
        .into_iter()
        .map(|p| match p {
            Piece::Text(t) => Some(t),
            Piece::Hole(h) => values.iter().find(|(k, _)| *k == h).map(|(_, v)| *v),
        })
        .collect()
}

/// The text of a pattern before its first placeholder (the whole name when it has none).
fn literal_head(pattern: &str) -> &str {
    pattern.split('{').next().unwrap_or(pattern)
}

/// Per-point eval artifacts (`eval_<RF>`, `eval_<exp>_<RF>`), not logs or GPU metrics.
pub fn is_eval_results_artifact(name: &str) -> bool {
    artifact_kind(name).is_some_and(|(kind, _)| kind == ArtifactKind::EvalSet)
}

/// An artifact's kind and the part of its name after the pattern's literal head (the result
/// filename `RF`, `EXP_NAME_RF` for single-node eval sets); `None` for a name no workflow uploads.
pub fn artifact_kind(name: &str) -> Option<(ArtifactKind, &str)> {
    artifacts().iter().find_map(|shape| {
        let head = literal_head(&shape.name);
        match head.len() == shape.name.len() {
            true => (name == head).then_some((shape.kind, "")),
            false => name.strip_prefix(head).map(|rest| (shape.kind, rest)),
        }
    })
}

/// The shape of file `file` in aggregate artifact `<prefix><rf>` of kind `kind`; `None` when the
/// file matches no pattern the workflows upload (an unreadable fact for the caller, never
/// "no points").
pub fn aggregate_file(kind: ArtifactKind, rf: &str, file: &str) -> Option<&'static Shape> {
    aggregate_files()
        .iter()
        .find(|shape| shape.kind == kind && pieces(&shape.name).is_some_and(|p| matches(&p, &[("RF", rf)], file)))
}

/// The first pattern of `kind` for a single- or multi-node job, filled with `values`.
fn name_of(shapes: &[Shape], kind: ArtifactKind, multinode: bool, values: &[(&str, &str)]) -> Option<String> {
    shapes
        .iter()
        .find(|s| s.kind == kind && s.multinode.is_none_or(|m| m == multinode))
        .and_then(|s| fill(&s.name, values))
}

/// The name a workflow gives an artifact of `kind` (`values`: `RF`, `EXP_NAME`); `None` when no
/// row gives one or a placeholder has no value.
pub fn artifact_name(kind: ArtifactKind, multinode: bool, values: &[(&str, &str)]) -> Option<String> {
    name_of(artifacts(), kind, multinode, values)
}

/// The name a workflow gives an aggregate file of `kind` (`values`: `RF`, `CONC`, `SUFFIX`).
pub fn aggregate_file_name(kind: ArtifactKind, multinode: bool, values: &[(&str, &str)]) -> Option<String> {
    name_of(aggregate_files(), kind, multinode, values)
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
        let shape = |kind, file: &str| aggregate_file(kind, RF, file).map(|s| (s.name.as_str(), s.multinode));
        assert_eq!(shape(A, &format!("{RF}.json")), Some(("{RF}.json", Some(false))));
        assert_eq!(shape(A, &format!("{RF}_conc16.json")), Some(("{RF}_conc{CONC}.json", Some(true))));
        assert_eq!(shape(F, &format!("agg_{RF}.json")), Some(("agg_{RF}.json", Some(false))));
        assert_eq!(
            shape(F, &format!("agg_{RF}_ctx_4_gen_8_gpus_12.json")),
            Some(("agg_{RF}_{SUFFIX}.json", Some(true)))
        );
        for other in
            [format!("{RF}_concX.json"), format!("{RF}_conc.json"), "agg_other.json".into(), format!("{RF}.txt")]
        {
            assert_eq!(shape(A, &other), None, "{other}");
        }
        assert_eq!(shape(F, &format!("{RF}.json")), None, "a fixed-seq aggregate is agg_-prefixed");
        assert_eq!(shape(F, &format!("agg_{RF}_.json")), None);
    }

    /// The built-in table parses, every pattern is well formed with known placeholders, every row
    /// names its source, and a name the table builds is matched back to its own row.
    #[test]
    fn the_table_loads_and_every_pattern_is_well_formed() {
        assert!(artifacts().len() >= 12 && aggregate_files().len() >= 4);
        for shape in artifacts().iter().chain(aggregate_files()) {
            let p = pieces(&shape.name).unwrap_or_else(|| panic!("{}: unclosed placeholder", shape.name));
            for piece in &p {
                if let Piece::Hole(h) = piece {
                    assert!(
                        ["RF", "EXP_NAME", "CONC", "SUFFIX"].contains(h),
                        "{}: unknown placeholder {h}",
                        shape.name
                    );
                }
            }
            assert!(!shape.sources.is_empty(), "{}: no workflow line", shape.name);
            assert!(shape.sources.iter().all(|s| s.starts_with(".github/workflows/") && s.contains(".yml:")));
        }
        let values = [("RF", RF), ("EXP_NAME", "dsv4_8k1k"), ("CONC", "16"), ("SUFFIX", "ctx_4_gen_8_gpus_12")];
        for shape in artifacts() {
            let name = fill(&shape.name, &values).unwrap_or_default();
            assert_eq!(artifact_kind(&name).map(|k| k.0), Some(shape.kind), "{name}");
        }
        for shape in aggregate_files() {
            let name = fill(&shape.name, &values).unwrap_or_default();
            assert_eq!(aggregate_file(shape.kind, RF, &name).map(|s| &s.name), Some(&shape.name), "{name}");
        }
    }

    #[test]
    fn names_are_built_from_the_table_for_each_job_kind() {
        use ArtifactKind::*;
        let rf = [("RF", RF)];
        assert_eq!(artifact_name(AgenticAggregate, true, &rf), Some(format!("bmk_agentic_{RF}")));
        assert_eq!(artifact_name(EvalSet, true, &rf), Some(format!("eval_{RF}")));
        assert_eq!(
            artifact_name(EvalSet, false, &[("RF", RF), ("EXP_NAME", "x_8k1k")]),
            Some(format!("eval_x_8k1k_{RF}"))
        );
        assert_eq!(artifact_name(EvalSet, false, &rf), None, "EXP_NAME has no value");
        assert_eq!(artifact_name(ServerLogs, true, &rf), None, "a multi-node job's logs are multinode_server_logs_");
        assert_eq!(
            aggregate_file_name(AgenticAggregate, true, &[("RF", RF), ("CONC", "8")]),
            Some(format!("{RF}_conc8.json"))
        );
        assert_eq!(aggregate_file_name(FixedSeqAggregate, false, &rf), Some(format!("agg_{RF}.json")));
    }

    /// A `{SUFFIX}` or `{CONC}` placeholder never matches the empty text, and the match of a long
    /// hostile name is bounded (one free placeholder per pattern).
    #[test]
    fn free_placeholders_match_non_empty_text_only() {
        let p = pieces("a{SUFFIX}.json").unwrap_or_default();
        assert!(matches(&p, &[], "ab.json"));
        assert!(!matches(&p, &[], "a.json"));
        assert!(matches(&p, &[], &format!("a{}.json", ".json".repeat(2000))));
        let c = pieces("{RF}_conc{CONC}.json").unwrap_or_default();
        assert!(!matches(&c, &[("RF", "r")], "r_conc1a.json"));
        assert_eq!(pieces("x{RF"), None);
    }
}
