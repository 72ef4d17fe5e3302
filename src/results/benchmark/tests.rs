use super::*;

/// A consistent raw result: `n` prompts at conc n/10, all succeeded, 1000 in / 100 out each.
fn raw(n: i64, completed: i64) -> Value {
    let duration = 50.0;
    let input: Vec<i64> = vec![1000; n as usize];
    let output: Vec<i64> = (0..n).map(|i| if i < completed { 100 } else { 0 }).collect();
    let tin = 1000 * completed;
    let tout = 100 * completed;
    serde_json::json!({
        "date": "20260821-140321", "backend": "vllm", "model_id": "org/model", "num_prompts": n,
        "max_concurrency": n / 10, "duration": duration,
        "benchmark_start_time_unix": 1_787_321_000.0, "benchmark_end_time_unix": 1_787_321_050.2,
        "completed": completed, "total_input_tokens": tin, "total_output_tokens": tout,
        "request_throughput": completed as f64 / duration, "request_goodput:": null,
        "output_throughput": tout as f64 / duration, "total_token_throughput": (tin + tout) as f64 / duration,
        "input_lens": input, "output_lens": output,
        "median_tpot_ms": 8.0, "std_tpot_ms": 0.5, "median_e2el_ms": 9000.0
    })
}

fn parse_raw(v: &Value) -> RawResult {
    RawResult::parse(v.to_string().as_bytes(), "r.json").unwrap_or_else(|e| panic!("{e}"))
}

fn agg_for(raw: &RawResult, tp: i64) -> Value {
    serde_json::json!({
        "hw": "h200", "conc": raw.max_concurrency, "image": "img:1", "model": raw.model_id,
        "infmax_model_prefix": "m", "framework": "sglang", "precision": "fp8", "spec_decoding": "none",
        "disagg": false, "recipe_fingerprint": "", "isl": 1024, "osl": 1024, "is_multinode": false,
        "tp": tp, "pp": 1, "dcp_size": 1, "pcp_size": 1, "ep": tp, "dp_attention": "false",
        "tput_per_gpu": raw.total_token_throughput / tp as f64,
        "output_tput_per_gpu": raw.output_throughput / tp as f64,
        "input_tput_per_gpu": (raw.total_token_throughput - raw.output_throughput) / tp as f64,
        "median_tpot": 0.008, "median_intvty": 125.0, "std_tpot": 0.0005, "std_intvty": 2000.0, "median_e2el": 9.0
    })
}

fn kinds(findings: &[ResultFinding]) -> Vec<String> {
    findings
        .iter()
        .map(|f| serde_json::to_value(f).ok().and_then(|v| v["kind"].as_str().map(str::to_string)).unwrap_or_default())
        .collect()
}

#[test]
fn consistent_raw_result_has_no_findings() {
    assert_eq!(validate_raw(&parse_raw(&raw(40, 40))), vec![]);
}

#[test]
fn failure_rate_above_five_percent_and_count_edges() {
    // 39/40 passes. 38/40 is "exactly" 5%, but `1 - 38/40` is 0.050000000000000044 in f64,
    // so the client's own expression fails it; sweepgate evaluates the same expression.
    let mut v = raw(40, 39);
    v["total_input_tokens"] = 39_000.into();
    assert_eq!(kinds(&validate_raw(&parse_raw(&v))), Vec::<String>::new());
    let mut v = raw(40, 38);
    v["total_input_tokens"] = 38_000.into();
    assert_eq!(kinds(&validate_raw(&parse_raw(&v))), vec!["request_failure_rate"]);
    let v = raw(40, 37);
    let f = validate_raw(&parse_raw(&v));
    assert_eq!(kinds(&f), vec!["request_failure_rate"]);
    assert_eq!(f[0].to_string(), "37/40 requests succeeded: 7.5% failed, above the client's 5% limit");
    assert!(f[0].is_fatal());
    let mut v = raw(40, 40);
    v["completed"] = 41.into();
    assert!(kinds(&validate_raw(&parse_raw(&v))).contains(&"completed_exceeds_requested".to_string()));
    let mut v = raw(40, 40);
    v["completed"] = 0.into();
    assert!(kinds(&validate_raw(&parse_raw(&v))).contains(&"no_successful_requests".to_string()));
}

#[test]
fn token_totals_throughputs_and_window() {
    let mut v = raw(40, 40);
    v["total_output_tokens"] = 3999.into();
    let k = kinds(&validate_raw(&parse_raw(&v)));
    assert_eq!(k, vec!["token_total_mismatch", "throughput_mismatch", "throughput_mismatch"]);

    let mut v = raw(40, 40);
    v["output_lens"] = serde_json::json!([100, 100]);
    assert_eq!(kinds(&validate_raw(&parse_raw(&v))), vec!["per_request_array_length", "token_total_mismatch"]);

    let mut v = raw(40, 40);
    v["duration"] = 0.0.into();
    assert_eq!(kinds(&validate_raw(&parse_raw(&v))), vec!["non_positive_duration"]);

    let mut v = raw(40, 40);
    v["benchmark_end_time_unix"] = 1_787_321_052.0.into();
    assert_eq!(kinds(&validate_raw(&parse_raw(&v))), vec!["window_duration_mismatch"]);

    let mut v = raw(40, 40);
    v.as_object_mut().map(|o| o.remove("benchmark_end_time_unix"));
    let f = validate_raw(&parse_raw(&v));
    assert_eq!(kinds(&f), vec!["window_missing"]);
    assert!(!f[0].is_fatal());

    let mut v = raw(40, 40);
    v["max_concurrency"] = 8.into();
    assert_eq!(kinds(&validate_raw(&parse_raw(&v))), vec!["unusual_prompt_count"]);
}

#[test]
fn malformed_raw_results_are_errors_naming_the_file() {
    let err = RawResult::parse(br#"{"model_id": "m"}"#, "bmk/x.json").err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.starts_with("bmk/x.json: missing field `num_prompts`"), "{err}");
    let mut v = raw(40, 40);
    v["completed"] = "40".into();
    let err = RawResult::parse(v.to_string().as_bytes(), "x.json").err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("invalid type: string \"40\""), "{err}");
    let big = vec![b' '; MAX_RESULT_JSON_BYTES + 1];
    assert!(matches!(RawResult::parse(&big, "x"), Err(ArtifactError::TooLarge { .. })));
}

#[test]
fn aggregate_rederivation_catches_wrong_gpu_divisor_and_latency_units() {
    let r = parse_raw(&raw(40, 40));
    let good =
        FixedSeqAggregate::parse(agg_for(&r, 8).to_string().as_bytes(), "agg.json").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(validate_aggregate(&good, &r), vec![]);
    assert_eq!(good.point(Plane::FixedSeqE2el), Point::new(9.0, r.total_token_throughput / 8.0));
    assert_eq!(good.point(Plane::FixedSeqInteractivity).x, 125.0);

    // Divided by the node's 8 GPUs while only TP4 served.
    let mut wrong = agg_for(&r, 8);
    wrong["tp"] = 4.into();
    wrong["ep"] = 4.into();
    wrong["median_e2el"] = 9000.0.into();
    wrong["recipe_fingerprint"] = "ABC".into();
    let agg = FixedSeqAggregate::parse(wrong.to_string().as_bytes(), "agg.json").unwrap_or_else(|e| panic!("{e}"));
    let fields: Vec<String> = validate_aggregate(&agg, &r)
        .iter()
        .filter_map(|f| match f {
            ResultFinding::AggregateMismatch { field, .. } => Some(field.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        fields,
        vec!["recipe_fingerprint", "tput_per_gpu", "output_tput_per_gpu", "input_tput_per_gpu", "median_e2el"]
    );

    let mut missing = agg_for(&r, 8);
    missing.as_object_mut().map(|o| o.remove("median_intvty"));
    let agg = FixedSeqAggregate::parse(missing.to_string().as_bytes(), "agg.json").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(validate_aggregate(&agg, &r), vec![ResultFinding::FieldMissing { field: "median_intvty".into() }]);
    assert!(agg.point(Plane::FixedSeqInteractivity).x.is_nan());
}

#[test]
fn multinode_divisors() {
    let r = parse_raw(&raw(40, 40));
    let mut v = agg_for(&r, 8);
    let o = v.as_object_mut().map(|o| {
        o.insert("is_multinode".into(), true.into());
        o.insert("num_prefill_gpu".into(), 4.into());
        o.insert("num_decode_gpu".into(), 12.into());
    });
    assert!(o.is_some());
    v["tput_per_gpu"] = (r.total_token_throughput / 16.0).into();
    v["output_tput_per_gpu"] = (r.output_throughput / 12.0).into();
    v["input_tput_per_gpu"] = ((r.total_token_throughput - r.output_throughput) / 4.0).into();
    let agg = FixedSeqAggregate::parse(v.to_string().as_bytes(), "agg.json").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(validate_aggregate(&agg, &r), vec![]);
}

#[test]
fn agentic_points_and_checks() {
    let v = serde_json::json!({
        "num_requests_total": 100, "num_requests_successful": 97,
        "request_accounting": {"records_total": 110, "records_profiled": 97, "records_dropped_total": 13},
        "request_metrics": {
            "latency": {"e2el": {"p90": 40.0, "p75": 30.0}, "itl": {"p90": 0.02}, "full_response_itl": {"p90": 0.025},
                        "e2e_norm_intvty": {"p90": 55.0}},
            "throughput": {"per_gpu": {"total_tput_tps": 1500.5}}
        }
    });
    let agg = AgenticAggregate::parse(v.to_string().as_bytes(), "a.json").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(validate_agentic(&agg), vec![]);
    assert_eq!(agg.point(Plane::AgenticE2el, "p90"), Point::new(40.0, 1500.5));
    assert_eq!(
        agg.point(Plane::AgenticInteractivity, "p90"),
        Point::new(40.0, 1500.5),
        "1/0.025 from the full-response ITL"
    );
    assert_eq!(agg.point(Plane::AgenticCanonical, "p90").x, 55.0);
    assert!(agg.point(Plane::AgenticE2el, "p95").x.is_nan());

    let bad = serde_json::json!({"num_requests_successful": 0, "request_accounting": {"records_total": 5, "records_profiled": 1, "records_dropped_total": 1}});
    let agg = AgenticAggregate::parse(bad.to_string().as_bytes(), "a.json").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(kinds(&validate_agentic(&agg)), vec!["no_successful_requests", "aggregate_mismatch", "field_missing"]);
    assert!(AgenticAggregate::parse(b"[1]", "a.json").is_err());
}

#[test]
fn aiperf_gate_is_inclusive_at_ten_percent() {
    let p = |errors: f64, completed: f64| serde_json::json!({"request_count": {"avg": 100.0}, "error_request_count": {"avg": errors}, "completed_request_count": {"avg": completed}});
    assert_eq!(validate_aiperf_profile(&p(10.0, 100.0)), vec![]);
    assert_eq!(kinds(&validate_aiperf_profile(&p(11.0, 100.0))), vec!["error_rate_above_gate"]);
    assert_eq!(kinds(&validate_aiperf_profile(&p(0.0, 0.0))), vec!["no_successful_requests"]);
    let derived = serde_json::json!({"request_count": {"avg": 10.0}, "success_request_count": {"avg": 9.0}, "error_request_count": {"avg": 1.0}});
    assert_eq!(validate_aiperf_profile(&derived), vec![]);
    assert_eq!(kinds(&validate_aiperf_profile(&serde_json::json!({}))), vec!["field_missing"]);
}

#[test]
fn curve_keys_follow_the_app_series() {
    let r = parse_raw(&raw(40, 40));
    let mut v = agg_for(&r, 8);
    v["hw"] = "h200-cw_01".into();
    v["isl"] = 8192.into();
    v["spec_decoding"] = "mtp".into();
    let agg = FixedSeqAggregate::parse(v.to_string().as_bytes(), "agg.json").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(agg.curve_key("40714803265", &|_| false).to_string(), "m/8k1k/h200_sglang_mtp/fp8/40714803265/median");
    assert_eq!(sequence_scenario(1000, 500), "1000_500");
    let a = serde_json::json!({"infmax_model_prefix": "glm5", "hw": "mi355x-amds", "framework": "sglang", "precision": "fp8",
        "spec_decoding": "mtp", "disagg": false, "scenario_type": "agentic-coding"});
    let agg = AgenticAggregate::parse(a.to_string().as_bytes(), "a.json").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(agg.curve_key("1", "p90", &|_| false).to_string(), "glm5/agentic-coding/mi355x_sglang/fp8/1/p90");
}
