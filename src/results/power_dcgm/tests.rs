use super::*;

const START: f64 = 1000.5;
const END: f64 = 1060.5;
const PIN: &str = "6fc1bed0aaaa";

/// node-a GPUs 0,1 serve prefill (het group 0), node-b GPUs 0,1 decode (het group 1); every
/// GPU is scraped each second from t=995 to t=1065 at 100 W (prefill) or 300 W (decode).
struct Fixture {
    samples: String,
    manifest: Value,
    window: Value,
    result: Value,
}

fn devices() -> Vec<(&'static str, i64, &'static str, &'static str, i64)> {
    vec![
        ("node-a", 0, "GPU-a0", "prefill", 0),
        ("node-a", 1, "GPU-a1", "prefill", 0),
        ("node-b", 0, "GPU-b0", "decode", 1),
        ("node-b", 1, "GPU-b1", "decode", 1),
    ]
}

fn fixture() -> Fixture {
    let mut samples = SAMPLES_HEADER.join(",") + "\n";
    for (seq, t) in (995..=1065).enumerate() {
        for (host, idx, uuid, role, _) in devices() {
            let watts = if role == "prefill" { 100.0 } else { 300.0 };
            samples.push_str(&format!("1,{t}.0,{seq},{host},{idx},{uuid},{watts}\n"));
        }
    }
    let result = json!({"max_concurrency": 64, "duration": END - START, "benchmark_start_time_unix": START,
        "benchmark_end_time_unix": END, "completed": 640, "total_input_tokens": 6_400_000, "total_output_tokens": 640_000});
    let window = json!({"schema_version": 1, "benchmark_type": "sa-bench", "result_path": "sa-bench_isl_8192_osl_1024/results_concurrency_64_gpus_4.json",
        "concurrency": 64, "benchmark_start_time_unix": START, "benchmark_end_time_unix": END, "duration": END - START,
        "clock_source": "head_node_unix_clock", "status": "completed", "reason": null});
    let expected_devices: Vec<Value> = devices()
        .iter()
        .map(|(h, i, _, role, g)| json!({"hostname": h, "gpu_index": i, "assignments": [{"worker_role": role, "worker_index": 0, "worker_process": i, "het_group": g}]}))
        .collect();
    let mut sorted = devices();
    sorted.sort();
    let observed: Vec<Value> = sorted
        .iter()
        .map(|(h, i, u, _, _)| json!({"hostname": h, "gpu_index": i, "gpu_uuids": [u], "first_sample_time_unix": 995.0, "last_sample_time_unix": 1065.0}))
        .collect();
    let gaps: Map<String, Value> = sorted.iter().map(|(h, _, u, _, _)| (format!("{h}/{u}"), json!(1.0))).collect();
    let manifest = json!({
        "schema_version": 1, "producer": "srt-slurm.dcgm-power", "producer_version": "1.0", "producer_git_commit": PIN,
        "source_metric": "DCGM_FI_DEV_POWER_USAGE", "unit": "W", "power_scope": "gpu_device_board_as_reported_by_dcgm",
        "timestamp_source": "head_node_unix_clock", "job_id": "123", "run_name": "r", "sample_interval_seconds": 1.0,
        "request_timeout_seconds": 0.5, "max_scrape_duration_seconds": 0.2, "required": true, "started_at_unix": 990.0,
        "stopped_at_unix": 1070.0, "status": "complete", "publication_valid": true,
        "dcgm_exporter": {"container_image_resolved": "nvcr.io/nvidia/k8s/dcgm-exporter:4", "container_image_sha256": "abc", "port": 9400},
        "expected_devices": expected_devices, "observed_devices": observed,
        "expected_windows": [{"benchmark_type": "sa-bench", "concurrency": 64}], "scrape_count": 71, "sample_row_count": 284,
        "window_validations": [{"benchmark_type": "sa-bench", "concurrency": 64, "window_file": "windows/results_concurrency_64_gpus_4.json",
            "power_coverage_valid": true, "reason_codes": [], "per_device_max_sample_gap_seconds": gaps}],
        "artifact_errors": [], "reason_codes": []
    });
    Fixture { samples, manifest, window, result }
}

/// Validate `f` whose original result under `logs/` is `original` (default: `f.result`).
fn run_with(
    f: &Fixture,
    original: Option<&Value>,
    prefill: u32,
    decode: u32,
    pin: Option<&str>,
) -> MultinodePowerAudit {
    let manifest = f.manifest.to_string();
    let window = f.window.to_string();
    let processed = f.result.to_string();
    let original = original.unwrap_or(&f.result).to_string();
    let read = |path: &str| {
        (path == "sa-bench_isl_8192_osl_1024/results_concurrency_64_gpus_4.json").then(|| original.clone().into_bytes())
    };
    let package = DcgmPackage {
        manifest: Some(manifest.as_bytes()),
        samples_csv: Some(f.samples.as_bytes()),
        windows: Some(vec![WindowFile { name: "results_concurrency_64_gpus_4.json", bytes: Some(window.as_bytes()) }]),
        read_result: &read,
    };
    let inputs = MultinodeInputs {
        processed_result: processed.as_bytes(),
        prefill_gpus: prefill,
        decode_gpus: decode,
        expected_producer_sha: pin,
    };
    validate_multinode(&package, &inputs)
}

fn run(f: &Fixture, prefill: u32, decode: u32, pin: Option<&str>) -> MultinodePowerAudit {
    run_with(f, None, prefill, decode, pin)
}

#[test]
fn valid_package_integrates_roles() {
    let a = run(&fixture(), 2, 2, Some(PIN));
    assert!(a.power_valid, "{:?} {:?}", a.reasons, a.failures);
    assert_eq!(a.recomputed_publication_valid, Some(true));
    let d = END - START;
    let m = |k: &str| a.metrics.get(k).copied().unwrap_or(f64::NAN);
    assert!((m("prefill_gpu_energy_j") - 200.0 * d).abs() < 1e-6);
    assert!((m("decode_gpu_energy_j") - 600.0 * d).abs() < 1e-6);
    assert!((m("avg_power_w") - 200.0).abs() < 1e-9);
    assert!((m("decode_avg_power_w") - 300.0).abs() < 1e-9);
    assert!((m("decode_joules_per_output_token") - 600.0 * d / 640_000.0).abs() < 1e-12);
    assert_eq!(a.per_gpu_role.get("node-a/GPU-a0").map(String::as_str), Some("prefill"));
    assert_eq!(a.per_gpu_max_sample_gap_s.get("node-b/GPU-b1"), Some(&1.0));
    assert_eq!(a.selected_window.as_ref().and_then(|w| w["concurrency"].as_i64()), Some(64));
}

#[test]
fn producer_pin_is_required_and_must_match() {
    let a = run(&fixture(), 2, 2, None);
    assert_eq!(a.reasons, vec!["producer_pin_missing"]);
    assert!(a.metrics.is_empty() && !a.power_valid);
    let a = run(&fixture(), 2, 2, Some("deadbeef"));
    assert_eq!(a.reasons, vec!["producer_commit_mismatch"]);
}

#[test]
fn stored_verdict_is_never_trusted() {
    let mut f = fixture();
    f.manifest["publication_valid"] = json!(false);
    assert_eq!(run(&f, 2, 2, Some(PIN)).reasons, vec!["producer_verdict_mismatch"]);

    // A gap the stored evidence hides: samples 1020..=1024 missing for node-b GPU 1.
    let mut f = fixture();
    f.samples = f
        .samples
        .lines()
        .filter(|l| !(l.contains("node-b,1,") && (1020..=1024).any(|t| l.starts_with(&format!("1,{t}.0,")))))
        .map(|l| format!("{l}\n"))
        .collect();
    let a = run(&f, 2, 2, Some(PIN));
    assert_eq!(a.reasons, vec!["package_recompute_invalid", "producer_verdict_mismatch"]);
    assert!(a.failures.iter().any(|x| x == "sample_gap_exceeded (window sa-bench/64)"), "{:?}", a.failures);
    assert!(a.failures.iter().any(|x| x.starts_with("sample_row_count is 284, disk has 279")));
}

#[test]
fn role_counts_must_match_the_result_name() {
    let a = run(&fixture(), 4, 2, Some(PIN));
    assert_eq!(a.reasons, vec!["topology_env_mismatch"]);
    assert_eq!(a.failures, vec!["expected 4 prefill GPUs, found 2"]);
    let a = run(&fixture(), 0, 0, Some(PIN));
    assert_eq!(a.reasons, vec!["topology_env_mismatch"]);
}

#[test]
fn result_must_match_by_content() {
    let mut f = fixture();
    f.result["completed"] = json!(639);
    // The workspace copy differs from the original at LOGS/<result_path>.
    let a = run_with(&f, Some(&fixture().result), 2, 2, Some(PIN));
    assert_eq!(a.reasons, vec!["result_content_mismatch"]);
}

#[test]
fn broken_samples_and_manifest() {
    let mut f = fixture();
    f.samples = f.samples.replacen("schema_version,", "version,", 1);
    let a = run(&f, 2, 2, Some(PIN));
    assert!(a.failures.iter().any(|x| x == "samples_csv_header_mismatch in samples.csv"));

    let mut f = fixture();
    f.samples.push_str("1,1066.0,70,node-a,0,GPU-a0,100\n1,oops,71,node-a,0,GPU-a0,100\n");
    let a = run(&f, 2, 2, Some(PIN));
    assert!(a.failures.iter().any(|x| x == "duplicate_sample_row in samples.csv"), "{:?}", a.failures);
    assert!(a.failures.iter().any(|x| x == "samples_csv_malformed in samples.csv"));

    let mut f = fixture();
    f.samples = f.samples.replace("1,1030.0,35,node-a,1,GPU-a1,", "1,1030.0,35,node-a,1,GPU-zz,");
    let a = run(&f, 2, 2, Some(PIN));
    assert!(a.failures.iter().any(|x| x == "gpu_uuid_changed (device identity/topology)"));

    let mut f = fixture();
    f.manifest["reason_codes"] = json!(["collector_join_timeout"]);
    f.manifest["status"] = json!("incomplete");
    let a = run(&f, 2, 2, Some(PIN));
    assert!(a.failures.iter().any(|x| x.starts_with("status is \"incomplete\"")));
    assert!(a
        .failures
        .iter()
        .any(|x| x == "complete manifest carries lifecycle-failure reasons: collector_join_timeout"));

    let mut f = fixture();
    f.manifest["expected_devices"][0]["assignments"] = json!([]);
    assert_eq!(run(&f, 2, 2, Some(PIN)).reasons, vec!["manifest_malformed"]);

    let read = |_: &str| None;
    let package = DcgmPackage { manifest: None, samples_csv: None, windows: None, read_result: &read };
    let inputs =
        MultinodeInputs { processed_result: b"{}", prefill_gpus: 1, decode_gpus: 1, expected_producer_sha: Some(PIN) };
    assert_eq!(validate_multinode(&package, &inputs).reasons, vec!["manifest_missing", "invalid_benchmark_window"]);
}

#[test]
fn window_file_problems() {
    let mut f = fixture();
    f.window["result_path"] = json!("../escape/results_concurrency_64_gpus_4.json");
    let a = run(&f, 2, 2, Some(PIN));
    assert!(
        a.failures
            .iter()
            .any(|x| x == "measurement_window_result_path_invalid (windows/results_concurrency_64_gpus_4.json)"),
        "{:?}",
        a.failures
    );
    assert!(a.reasons.contains(&"window_for_result_missing".to_string()));

    let mut f = fixture();
    f.window["status"] = json!("running");
    let a = run(&f, 2, 2, Some(PIN));
    assert!(a
        .failures
        .iter()
        .any(|x| x == "measurement_window_malformed (windows/results_concurrency_64_gpus_4.json)"));
}
