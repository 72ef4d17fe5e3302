//! Single-node power validation over sweepgate's own telemetry fixtures, good and broken.

use std::path::Path;

use sweepgate::results::power::{validate_single_node, PowerOptions, PowerValidation, SourceNames, Telemetry};

fn validate(csv_name: &str, expected_gpus: i64) -> PowerValidation {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/results/power");
    let bench = std::fs::read(dir.join("bench_c4.json")).expect("bench fixture");
    let csv = std::fs::read(dir.join(csv_name)).expect("csv fixture");
    let names = SourceNames { telemetry: csv_name, benchmark_result: "bench_c4.json" };
    validate_single_node(&bench, Telemetry::Bytes(&csv), expected_gpus, &PowerOptions::default(), names).0
}

fn reasons(v: &PowerValidation) -> Vec<String> {
    v.reasons.as_slice().iter().map(ToString::to_string).collect()
}

#[test]
fn clean_stream_is_valid_with_exact_energy() {
    let v = validate("gpu_metrics_ok.csv", 4);
    assert!(v.power_valid, "{:?}", v.reasons);
    let total = v.metrics.get("total_gpu_energy_j").copied().unwrap_or(0.0);
    assert!((total - (400.0 + 410.0 + 420.0 + 430.0) * 10.0).abs() < 1e-3, "{total}");
    assert_eq!(v.metrics.get("joules_per_successful_query").copied(), Some(415.0));
    assert!(v.max_sample_gap_s().is_some_and(|g| (g - 1.0).abs() < 1e-3));
}

#[test]
fn broken_streams_name_their_reason() {
    let cases: [(&str, i64, &[&str]); 4] = [
        ("gpu_metrics_8_gpus.csv", 4, &["expected_gpu_count_mismatch"]),
        ("gpu_metrics_bad_timestamp.csv", 4, &["invalid_timestamp_sample"]),
        ("gpu_metrics_gap.csv", 4, &["sampling_gap_exceeded"]),
        ("gpu_metrics_buffered_truncated.csv", 4, &["invalid_timestamp_sample", "benchmark_window_not_bracketed"]),
    ];
    for (file, gpus, want) in cases {
        let v = validate(file, gpus);
        assert!(!v.power_valid, "{file}");
        assert_eq!(reasons(&v), want, "{file}");
        assert!(v.metrics.is_empty(), "{file}: no metrics when invalid");
    }
    let gap = validate("gpu_metrics_gap.csv", 4);
    assert_eq!(gap.devices.device_issues.keys().collect::<Vec<_>>(), vec!["2"]);
    assert!(gap.devices.per_gpu_max_sample_gap_s.get("2").is_some_and(|g| (g - 5.0).abs() < 1e-3));
}
