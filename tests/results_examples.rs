//! The published example artifacts (`reference/examples/`, upstream producer formats) through
//! sweepgate's parsers and validators. Skipped with a message when the examples are absent.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sweepgate::results::benchmark::{validate_aggregate, validate_raw, FixedSeqAggregate, RawResult};
use sweepgate::results::eval::{
    build_row, check_scores, ep_from_result_name, parse_agg_eval_all, scores_pass, LmEvalResults, MetaEnv, Threshold,
    FALLBACK_MIN_SCORE,
};
use sweepgate::results::pareto::Plane;
use sweepgate::results::power::{validate_single_node, PowerOptions, PowerReason, SourceNames, Telemetry};

const RF: &str = "qwen3.5_8k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep8-dpafalse_disagg-false_spec-none_conc4_h200-cw_01_recipe-3f9c2a7e51d04b86";

fn examples_dir() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("SWEEPGATE_REFERENCE_DIR").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/examples")),
        Some(PathBuf::from("/work/shared/reference/examples")),
    ];
    let found = candidates.into_iter().flatten().find(|p| p.join("README.md").is_file());
    if found.is_none() {
        eprintln!("reference examples not found (set SWEEPGATE_REFERENCE_DIR); skipping");
    }
    found
}

fn read(dir: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn power_sidecar_matches_upstream_byte_for_byte_in_values() {
    let Some(dir) = examples_dir() else { return };
    let bench = read(&dir, &format!("benchmark/{RF}.json"));
    let csv = read(&dir, "power/gpu_metrics.csv");
    let names = SourceNames { telemetry: "gpu_metrics.csv", benchmark_result: &format!("{RF}.json") };
    let (ours, metrics) = validate_single_node(&bench, Telemetry::Bytes(&csv), 8, &PowerOptions::default(), names);
    let theirs: Value =
        serde_json::from_slice(&read(&dir, &format!("power/power_validation_{RF}.json"))).expect("sidecar JSON");
    let ours_json = serde_json::to_value(&ours).expect("serialize");
    assert_eq!(ours_json, theirs);
    assert_eq!(ours.max_sample_gap_s(), Some(1.1610000133514404));

    // The aggregate's patched power keys are what process_result.py wrote.
    let agg: Value = serde_json::from_slice(&read(&dir, &format!("benchmark/agg_{RF}.json"))).expect("agg JSON");
    for (key, value) in ours.aggregate_fields(&metrics) {
        assert_eq!(agg.get(key), Some(&value), "{key}");
    }

    // The same CSV against TP4's 4 serving GPUs.
    let (tp4, _) = validate_single_node(&bench, Telemetry::Bytes(&csv), 4, &PowerOptions::default(), names);
    assert!(!tp4.power_valid);
    assert_eq!(tp4.reasons.as_slice(), &[PowerReason::ExpectedGpuCountMismatch]);
}

#[test]
fn eval_rows_rederive_to_the_collector_row_and_pass_the_qwen_threshold() {
    let Some(dir) = examples_dir() else { return };
    let set = "eval_qwen3.5_8k1k_qwen3.5_8k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep8-dpafalse_disagg-false_spec-none_conc64_h200-nb_1";
    let results_name = "results_2026-08-21T16-23-10.412233.json";
    let meta = MetaEnv::parse(&read(&dir, &format!("eval/{set}/meta_env.json")), "meta_env.json").expect("meta_env");
    let results =
        LmEvalResults::parse(&read(&dir, &format!("eval/{set}/{results_name}")), results_name).expect("lm-eval");
    let rows: Vec<_> =
        results.tasks.iter().map(|t| build_row(&meta, t, &format!("{set}/{results_name}"), None)).collect();
    let collected = parse_agg_eval_all(&read(&dir, "eval/agg_eval_all.json"), "agg_eval_all.json").expect("agg");
    assert_eq!(rows, collected);
    // The producer quirk: meta says ep 1, the artifact name says 8.
    assert_eq!((meta.ep, ep_from_result_name(set)), (1, Some(8)));

    let thresholds = |prefix: Option<&str>, task: &str| {
        (prefix == Some("qwen3.5") && task == "gsm8k")
            .then(|| Threshold { value: 0.94, source: "models.qwen3.5".into() })
    };
    let checks = check_scores(&results, meta.model_prefix(), &thresholds, FALLBACK_MIN_SCORE);
    let lines: Vec<String> = checks.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        vec![
            "PASS: gsm8k exact_match,strict-match = 0.9613343442001516 (>= 0.94 from models.qwen3.5)",
            "PASS: gsm8k exact_match,flexible-extract = 0.9643669446550417 (>= 0.94 from models.qwen3.5)",
        ]
    );
    assert!(scores_pass(&checks));
}

#[test]
fn benchmark_raw_and_aggregate_are_consistent() {
    let Some(dir) = examples_dir() else { return };
    let raw = RawResult::parse(&read(&dir, &format!("benchmark/{RF}.json")), "raw").expect("raw result");
    assert_eq!(validate_raw(&raw), vec![], "40/40 requests, totals and throughputs agree");
    let agg = FixedSeqAggregate::parse(&read(&dir, &format!("benchmark/agg_{RF}.json")), "agg").expect("aggregate");
    assert_eq!(validate_aggregate(&agg, &raw), vec![]);
    let p = agg.point(Plane::FixedSeqInteractivity);
    assert_eq!((p.x, p.y), (111.7070844828534, 451.60531535097147));
}
