use super::*;

const META: &str = r#"{"is_multinode": false, "framework": "sglang", "precision": "fp8", "spec_decoding": "none",
  "recipe_fingerprint": "", "tp": 8, "pp": 1, "dcp_size": 1, "pcp_size": 1, "conc": 64, "ep": 1, "dp_attention": false,
  "prefill_tp": 8, "prefill_pp": 1, "prefill_dcp_size": 1, "prefill_pcp_size": 1, "prefill_ep": 1, "prefill_dp_attention": false,
  "prefill_num_workers": 1, "decode_tp": 8, "decode_pp": 1, "decode_dcp_size": 1, "decode_pcp_size": 1, "decode_ep": 1,
  "decode_dp_attention": false, "decode_num_workers": 1, "model": "Qwen/Qwen3.5-397B-A17B-FP8",
  "infmax_model_prefix": "qwen3.5", "hw": "h200", "isl": "8192", "osl": "1024"}"#;

fn lm(results: &str, configs: &str, n: i64) -> LmEvalResults {
    let text = format!(
        r#"{{"lm_eval_version": "0.4.9.1", "model_name": "m", "results": {results}, "configs": {configs},
            "n-samples": {{"gsm8k": {{"original": 1319, "effective": {n}}}, "gpqa_diamond_cot_n_shot": {{"effective": 396}}}}}}"#
    );
    LmEvalResults::parse(text.as_bytes(), "results.json").unwrap_or_else(|e| panic!("{e}"))
}

fn gsm8k(strict: f64, flex: f64, n: i64) -> LmEvalResults {
    lm(
        &format!(
            r#"{{"gsm8k": {{"alias": "gsm8k", "exact_match,strict-match": {strict}, "exact_match_stderr,strict-match": 0.005,
                "exact_match,flexible-extract": {flex}, "exact_match_stderr,flexible-extract": 0.005}}}}"#
        ),
        r#"{"gsm8k": {"metric_list": [{"metric": "exact_match"}], "filter_list": [{"name": "strict-match"}, {"name": "flexible-extract"}]}}"#,
        n,
    )
}

fn qwen_thresholds(prefix: Option<&str>, task: &str) -> Option<Threshold> {
    match (prefix, task) {
        (Some("qwen3.5"), "gsm8k") => Some(Threshold { value: 0.94, source: "models.qwen3.5".into() }),
        (_, "gsm8k") => Some(Threshold { value: 0.90, source: "default".into() }),
        (_, "gpqa_diamond_cot_n_shot") => Some(Threshold { value: 0.30, source: "default".into() }),
        _ => None,
    }
}

#[test]
fn meta_env_types_are_strict_and_errors_name_the_file() {
    let meta = MetaEnv::parse(META.as_bytes(), "meta_env.json").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((meta.tp, meta.ep, meta.isl.as_str(), meta.model_prefix()), (8, 1, "8192", Some("qwen3.5")));
    assert!(meta.extra.contains_key("prefill_pp"));
    let bad = META.replace(r#""isl": "8192""#, r#""isl": 8192"#);
    let err = MetaEnv::parse(bad.as_bytes(), "eval_x/meta_env.json").err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.starts_with("eval_x/meta_env.json: invalid type: integer `8192`, expected a string"), "{err}");
    let unknown = META.replace(r#""qwen3.5""#, r#""unknown""#);
    assert_eq!(MetaEnv::parse(unknown.as_bytes(), "m").map(|m| m.model_prefix().is_none()), Ok(true));
}

#[test]
fn ep_comes_from_the_result_name() {
    let name = "eval_qwen3.5_8k1k_qwen3.5_8k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep8-dpafalse_disagg-false_spec-none_conc64_h200-nb_1";
    assert_eq!(ep_from_result_name(name), Some(8));
    assert_eq!(ep_from_result_name("prefill-tp4-pp1-ep16-dptrue"), Some(16));
    assert_eq!(ep_from_result_name("no_parallelism_here_epic"), None);
}

#[test]
fn slots_follow_filter_names() {
    let r = gsm8k(0.9613, 0.9644, 1319);
    let t = &r.tasks[0];
    assert_eq!(
        (t.scores.em_strict, t.scores.em_flexible, t.scores.n_eff, t.model.as_deref()),
        (Some(0.9613), Some(0.9644), Some(1319), Some("m"))
    );
    // GPQA's extract_abcd lands in the flexible slot; the strict slot (and score) stay empty.
    let g = lm(
        r#"{"gpqa_diamond_cot_n_shot": {"exact_match,extract_abcd": 0.61, "exact_match_stderr,extract_abcd": 0.024}}"#,
        r#"{"gpqa_diamond_cot_n_shot": {"metric_list": [{"metric": "exact_match"}], "filter_list": [{"name": "extract_abcd"}]}}"#,
        396,
    );
    assert_eq!((g.tasks[0].scores.em_strict, g.tasks[0].scores.em_flexible), (None, Some(0.61)));
    // SWE-bench: `resolved` is strict. No filter_list: acc, else the base metric.
    let s = lm(
        r#"{"swebench_lite": {"exact_match,resolved": 0.52}}"#,
        r#"{"swebench_lite": {"filter_list": [{"name": "resolved"}]}}"#,
        300,
    );
    assert_eq!(s.tasks[0].scores.em_strict, Some(0.52));
    let a = lm(
        r#"{"t": {"acc,none": 0.7, "acc_stderr,none": 0.01}, "u": {"f1": 0.4}}"#,
        r#"{"u": {"metric_list": [{"metric": "f1"}]}}"#,
        1,
    );
    assert_eq!(
        (a.tasks[0].scores.em_strict, a.tasks[0].scores.em_strict_se, a.tasks[1].scores.em_strict),
        (Some(0.7), Some(0.01), Some(0.4))
    );
    assert!(matches!(LmEvalResults::parse(br#"{"results": {}}"#, "x.json"), Err(ArtifactError::NotLmEval { .. })));
    assert!(matches!(LmEvalResults::parse(b"{", "x.json"), Err(ArtifactError::Json { .. })));
}

#[test]
fn thresholds_pass_at_equality_and_check_flexible_too() {
    let prefix = resolve_model_prefix(None, Some("qwen3.5"), Some("other"));
    let checks = check_scores(&gsm8k(0.94, 0.9375, 1319), prefix, &qwen_thresholds, FALLBACK_MIN_SCORE);
    assert_eq!(checks.len(), 2, "stderr keys are not checked");
    assert!(checks[0].passed, "equality passes");
    assert!(!checks[1].passed, "the published 0.9375 < 0.94 fails");
    assert!(!scores_pass(&checks));
    assert_eq!(checks[1].to_string(), "FAIL: gsm8k exact_match,flexible-extract = 0.9375 (< 0.94 from models.qwen3.5)");
    // Prefixes missing from models fall back to default; unknown tasks to --min-score.
    let checks = check_scores(&gsm8k(0.91, 0.91, 1319), Some("musespark"), &qwen_thresholds, FALLBACK_MIN_SCORE);
    assert!(scores_pass(&checks));
    let other = lm(r#"{"mmlu": {"exact_match,none": 0.84}}"#, "{}", 1);
    let checks = check_scores(&other, None, &qwen_thresholds, FALLBACK_MIN_SCORE);
    assert_eq!((checks[0].threshold.source.as_str(), checks[0].passed), ("--min-score", false));
    // No exact_match metric at all: nothing checked, which is a failure.
    let none = lm(r#"{"t": {"acc,none": 0.99}}"#, "{}", 1);
    assert!(!scores_pass(&check_scores(&none, None, &qwen_thresholds, FALLBACK_MIN_SCORE)));
    assert_eq!(resolve_model_prefix(Some("unknown"), Some("unknown"), None), None);
}

#[test]
fn batch_manifest_rules() {
    let meta = |json: &str| serde_json::from_str::<Map<String, Value>>(json).unwrap_or_default();
    let good = meta(r#"{"conc": 8, "eval_concs": [8, 16], "completed_eval_concs": [16, 8], "failed_eval_concs": []}"#);
    let files = ["results_2026_conc8.json", "results_2026_conc16_2.json"];
    assert_eq!(validate_batch_manifest(Some(&good), &files, &[8, 16]), vec![]);

    let bad = meta(r#"{"conc": 8, "eval_concs": [8, 8, 32], "completed_eval_concs": [8], "failed_eval_concs": [32]}"#);
    let problems = validate_batch_manifest(Some(&bad), &["results_conc8.json", "results.json"], &[8, 16]);
    assert_eq!(
        problems,
        vec![
            BatchProblem::DuplicateConcs { field: "eval_concs" },
            BatchProblem::EvalConcsMismatch { eval_concs: vec![8, 8, 32], expected: vec![8, 16] },
            BatchProblem::FailedConcs { failed: vec![32] },
            BatchProblem::MissingCompleted { missing: vec![16] },
            BatchProblem::ResultWithoutConcSuffix { file: "results.json".into() },
            BatchProblem::ResultConcsMismatch { found: vec![8], expected: vec![8, 16] },
        ]
    );
    assert_eq!(
        validate_batch_manifest(Some(&meta(r#"{"eval_concs": "8"}"#)), &[], &[8]),
        vec![
            BatchProblem::ListInvalid { field: "eval_concs" },
            BatchProblem::ListInvalid { field: "completed_eval_concs" },
            BatchProblem::ListInvalid { field: "failed_eval_concs" }
        ]
    );
    let single = meta(r#"{"conc": 32}"#);
    assert_eq!(validate_batch_manifest(Some(&single), &["r.json"], &[32]), vec![]);
    assert_eq!(
        validate_batch_manifest(Some(&single), &["a.json", "b.json"], &[64]),
        vec![BatchProblem::ConcMismatch { meta_conc: 32, expected: 64 }, BatchProblem::ResultFileCount { found: 2 }]
    );
    assert_eq!(
        validate_batch_manifest(Some(&single), &[], &[8, 16]),
        vec![BatchProblem::SeveralExpectedWithoutBatch { expected: vec![8, 16] }]
    );
    assert_eq!(validate_batch_manifest(None, &["r_conc8.json"], &[]), vec![BatchProblem::MetaUnreadable]);
    assert_eq!(validate_batch_manifest(None, &["r.json"], &[]), vec![]);
    assert_eq!(validate_batch_manifest(None, &[], &[0]), vec![BatchProblem::ExpectedConcsInvalid]);
    assert_eq!(result_concurrency("results_x_conc64_3.json"), Some(64));
    assert_eq!(result_concurrency("results_x_conc.json"), None);
    assert_eq!(result_concurrency("results_x_conc8_b.json"), None);
}

#[test]
fn two_sigma_worked_example_and_severity_direction() {
    // 0.9773 vs 0.9765 at n = 1319: σ ≈ 0.0041 each, limit ≈ 0.0117.
    let sigma = |s: f64| Some((s * (1.0 - s) / 1318.0).sqrt());
    assert_eq!(two_sigma((0.9765, sigma(0.9765)), (0.9773, sigma(0.9773))), Consistency::Within);
    assert_eq!(two_sigma((0.95, Some(0.004)), (0.97, Some(0.004))), Consistency::Below);
    assert_eq!(two_sigma((0.99, Some(0.004)), (0.97, Some(0.004))), Consistency::Above);
    assert_eq!(two_sigma((0.99, None), (0.97, Some(0.004))), Consistency::Unknown);
    assert_eq!(two_sigma((f64::NAN, Some(0.1)), (0.97, Some(0.004))), Consistency::Unknown);
}

#[test]
fn assessed_score_falls_back_to_flexible_and_binomial_sigma() {
    let meta = MetaEnv::parse(META.as_bytes(), "m").unwrap_or_else(|e| panic!("{e}"));
    let scores = TaskScores {
        task: "gpqa_diamond_cot_n_shot".into(),
        em_strict: None,
        em_strict_se: None,
        em_flexible: Some(0.6),
        em_flexible_se: None,
        n_eff: Some(396),
    };
    let gpqa = TaskMetrics { scores, model: None };
    let row = build_row(&meta, &gpqa, "eval_x/results.json", None);
    assert_eq!((row.score, row.score_name.as_deref()), (None, None), "upstream leaves GPQA unscored");
    let (s, se) = assessed_score(&row).unwrap_or((0.0, None));
    assert_eq!(s, 0.6);
    assert!((se.unwrap_or(0.0) - (0.24f64 / 395.0).sqrt()).abs() < 1e-15);
    assert_eq!(partial_sets(std::slice::from_ref(&row)), vec![]);
    let smoke = EvalRow { scores: TaskScores { task: "gsm8k".into(), n_eff: Some(16), ..row.scores.clone() }, ..row };
    assert_eq!(partial_sets(&[smoke]), vec![PartialEvalSet { task: "gsm8k".into(), n_eff: Some(16), full: 1319 }]);
}

#[test]
fn multinode_dp_attention_mismatch_renders_both() {
    let json = META
        .replace(r#""is_multinode": false"#, r#""is_multinode": true"#)
        .replace(r#""decode_dp_attention": false"#, r#""decode_dp_attention": true"#);
    let meta = MetaEnv::parse(json.as_bytes(), "m").unwrap_or_else(|e| panic!("{e}"));
    let row = build_row(&meta, &gsm8k(0.9, 0.9, 1319).tasks[0], "s", Some(128));
    assert_eq!(
        (row.dp_attention.as_str(), row.decode_dp_attention.as_str(), row.conc),
        ("prefill=false,decode=true", "true", 128)
    );
}
