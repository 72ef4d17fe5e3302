use super::*;

const HEADER: &str = "timestamp, index, power.draw [W], temperature.gpu, clocks.current.sm [MHz], clocks.current.memory [MHz], utilization.gpu [%], utilization.memory [%]";
/// 2026-08-21 13:46:40 UTC.
const T0: i64 = 1_787_320_000;

fn wall(epoch: f64) -> String {
    let secs = epoch.floor() as i64;
    let millis = ((epoch - secs as f64) * 1000.0).round() as u32;
    let dt = chrono::DateTime::from_timestamp(secs, millis * 1_000_000).unwrap_or_default();
    dt.format("%Y/%m/%d %H:%M:%S%.3f").to_string()
}

/// An nvidia-smi stream: `gpus` GPUs sampled every `step` s from `from` to `to` (epoch s),
/// each GPU drawing `watts` (+ index).
fn nvidia(gpus: usize, from: f64, to: f64, step: f64, watts: f64) -> String {
    let mut out = format!("{HEADER}\n");
    let mut t = from;
    while t <= to + 1e-9 {
        for g in 0..gpus {
            let ts = t + g as f64 * 0.002;
            out.push_str(&format!(
                "{}, {g}, {:.2} W, 50, 1980 MHz, 3201 MHz, 50 %, 10 %\n",
                wall(ts),
                watts + g as f64
            ));
        }
        t += step;
    }
    out
}

fn bench(start: f64, end: f64) -> String {
    format!(
        r#"{{"duration": {}, "benchmark_start_time_unix": {start}, "benchmark_end_time_unix": {end}, "completed": 40, "total_input_tokens": 1000, "total_output_tokens": 500}}"#,
        end - start
    )
}

fn validate(bench_json: &str, csv: &str, expected: i64) -> PowerValidation {
    let names = SourceNames { telemetry: "gpu_metrics.csv", benchmark_result: "r.json" };
    validate_single_node(
        bench_json.as_bytes(),
        Telemetry::Bytes(csv.as_bytes()),
        expected,
        &PowerOptions::default(),
        names,
    )
    .0
}

fn reasons(v: &PowerValidation) -> Vec<String> {
    v.reasons.as_slice().iter().map(ToString::to_string).collect()
}

const START: f64 = T0 as f64 + 5.25;
const END: f64 = T0 as f64 + 65.75;

#[test]
fn clean_stream_is_valid_and_energy_is_exact_for_constant_power() {
    let csv = nvidia(4, T0 as f64, T0 as f64 + 70.0, 1.0, 400.0);
    let v = validate(&bench(START, END), &csv, 4);
    assert!(v.power_valid, "{:?}", v.reasons);
    assert_eq!(v.observed_gpu_ids, vec!["0", "1", "2", "3"]);
    let duration = END - START;
    for (g, e) in v.devices.per_gpu_energy_j.values().enumerate() {
        assert!((e - (400.0 + g as f64) * duration).abs() < 1e-6, "gpu {g}: {e}");
    }
    assert!((v.max_sample_gap_s().unwrap_or(0.0) - 1.0).abs() < 1e-6);
    assert_eq!(v.metrics.len(), 7);
    let avg = v.metrics.get("avg_power_w").copied().unwrap_or(0.0);
    assert!((avg - 401.5).abs() < 1e-6);
}

#[test]
fn wrong_gpu_count_is_reported_and_metrics_withheld() {
    let csv = nvidia(8, T0 as f64, T0 as f64 + 70.0, 1.0, 400.0);
    let v = validate(&bench(START, END), &csv, 4);
    assert!(!v.power_valid);
    assert_eq!(reasons(&v), vec!["expected_gpu_count_mismatch"]);
    assert_eq!(v.observed_gpu_count, 8);
    assert!(v.metrics.is_empty());
    // Energies are still computed for audit.
    assert_eq!(v.devices.per_gpu_energy_j.len(), 8);
}

#[test]
fn one_bad_timestamp_anywhere_invalidates_the_stream() {
    let mut csv = nvidia(2, T0 as f64, T0 as f64 + 70.0, 1.0, 300.0);
    // Far outside the window (warmup), still fatal: the scan runs before the window filter.
    csv = csv.replacen(&wall(T0 as f64), "2026/08/21 25:61:00.000", 1);
    let v = validate(&bench(START, END), &csv, 2);
    assert_eq!(reasons(&v), vec!["invalid_timestamp_sample"]);
    // A repeated header line mid-file is a bad timestamp too.
    let csv = nvidia(2, T0 as f64, T0 as f64 + 70.0, 1.0, 300.0) + HEADER + "\n";
    assert_eq!(reasons(&validate(&bench(START, END), &csv, 2)), vec!["invalid_timestamp_sample"]);
}

#[test]
fn gap_above_three_seconds_fails_and_exactly_three_passes() {
    let mut csv = nvidia(1, T0 as f64, T0 as f64 + 70.0, 1.0, 300.0);
    // Drop samples 20..=23 s: gap 19 → 24 = 5 s.
    for s in 20..=23 {
        let line = format!("{}, 0,", wall(T0 as f64 + s as f64));
        csv = csv.lines().filter(|l| !l.starts_with(&line)).map(|l| format!("{l}\n")).collect();
    }
    let v = validate(&bench(START, END), &csv, 1);
    assert_eq!(reasons(&v), vec!["sampling_gap_exceeded"]);
    assert_eq!(v.devices.device_issues.get("0"), Some(&vec![PowerReason::SamplingGapExceeded]));
    assert_eq!(v.max_sample_gap_s(), Some(5.0));

    let csv3 = nvidia(1, T0 as f64, T0 as f64 + 70.0, 3.0, 300.0);
    let v = validate(&bench(START, END), &csv3, 1);
    assert!(v.power_valid, "a gap of exactly 3.0 s passes: {:?}", v.reasons);
}

#[test]
fn buffered_stream_that_stops_early_is_not_bracketed() {
    // The mawk case: samples stop ~4 s before the end.
    let csv = nvidia(2, T0 as f64, END - 4.0, 1.0, 300.0);
    let v = validate(&bench(START, END), &csv, 2);
    assert_eq!(reasons(&v), vec!["benchmark_window_not_bracketed"]);
    assert!(v.devices.per_gpu_energy_j.is_empty());
    assert_eq!(v.metrics.len(), 0);
    // Starting late is the same failure.
    let csv = nvidia(2, START + 0.5, END + 2.0, 1.0, 300.0);
    assert_eq!(reasons(&validate(&bench(START, END), &csv, 2)), vec!["benchmark_window_not_bracketed"]);
}

#[test]
fn truncated_last_row_and_bad_power_cells() {
    let csv = nvidia(1, T0 as f64, T0 as f64 + 70.0, 1.0, 300.0) + "2026/08/21 14:0";
    assert_eq!(reasons(&validate(&bench(START, END), &csv, 1)), vec!["invalid_timestamp_sample"]);
    for bad in ["[N/A]", "N/A", "", "-5.0 W", "W"] {
        let csv = nvidia(1, T0 as f64, T0 as f64 + 70.0, 1.0, 300.0).replacen("300.00 W", bad, 3).replacen(
            &format!("{}, 0, 300.00 W", wall(T0 as f64 + 30.0)),
            &format!("{}, 0, {bad}", wall(T0 as f64 + 30.0)),
            1,
        );
        let v = validate(&bench(START, END), &csv, 1);
        assert!(reasons(&v).contains(&"invalid_power_sample".to_string()), "{bad:?}: {:?}", v.reasons);
    }
    // A bad power cell far outside the window is ignored (only timestamps are scanned there).
    let csv = nvidia(1, T0 as f64 - 20.0, T0 as f64 + 70.0, 1.0, 300.0).replacen("300.00 W", "[N/A]", 1);
    assert!(validate(&bench(START, END), &csv, 1).power_valid);
}

#[test]
fn empty_gpu_id_and_missing_columns() {
    let csv = nvidia(2, T0 as f64, T0 as f64 + 70.0, 1.0, 300.0).replacen(", 1, ", ", , ", 1);
    // The first sample (t0) is > 3 s before the window start and skipped; use one inside.
    let inside = wall(T0 as f64 + 10.002);
    let csv = csv.replacen(&format!("{inside}, 1,"), &format!("{inside}, ,"), 1);
    assert_eq!(reasons(&validate(&bench(START, END), &csv, 2)), vec!["gpu_identity_missing"]);

    let v = validate(&bench(START, END), "time, power.limit [W], uuid\n1,2,3\n", 1);
    assert_eq!(reasons(&v), vec!["power_column_missing", "gpu_identity_column_missing"]);
    let v = validate(&bench(START, END), "stamp, index, power.draw [W]\n", 1);
    assert_eq!(reasons(&v), vec!["timestamp_column_missing"]);
}

#[test]
fn file_states_and_window_guards() {
    let names = SourceNames { telemetry: "t", benchmark_result: "b" };
    let opts = PowerOptions::default();
    let b = bench(START, END);
    let run = |t: Telemetry<'_>| reasons(&validate_single_node(b.as_bytes(), t, 1, &opts, names).0);
    assert_eq!(run(Telemetry::Missing), vec!["telemetry_file_missing"]);
    assert_eq!(run(Telemetry::Bytes(b"")), vec!["telemetry_file_empty"]);
    assert_eq!(run(Telemetry::Unreadable), vec!["telemetry_file_unreadable"]);
    assert_eq!(run(Telemetry::Bytes(b"timestamp,index,power\n1,\0,2\n")), vec!["telemetry_file_unreadable"]);
    assert_eq!(run(Telemetry::Bytes(format!("{HEADER}\n").as_bytes())), vec!["no_usable_power_samples"]);

    let csv = nvidia(1, T0 as f64, T0 as f64 + 70.0, 1.0, 300.0);
    assert_eq!(reasons(&validate("not json", &csv, 1)), vec!["invalid_benchmark_result"]);
    assert_eq!(reasons(&validate("[1]", &csv, 1)), vec!["invalid_benchmark_result"]);
    let no_window = r#"{"duration": 3, "benchmark_start_time_unix": true, "benchmark_end_time_unix": 5}"#;
    assert_eq!(reasons(&validate(no_window, &csv, 1)), vec!["invalid_benchmark_window"]);
    assert_eq!(reasons(&validate(&bench(END, START), &csv, 1)), vec!["invalid_benchmark_window"]);
    let mismatch = bench(START, END).replacen(&format!("\"duration\": {}", END - START), "\"duration\": 59.0", 1);
    assert_eq!(reasons(&validate(&mismatch, &csv, 1)), vec!["benchmark_duration_mismatch"]);
    let counts = bench(START, END)
        .replace("\"completed\": 40", "\"completed\": 0")
        .replace("\"total_input_tokens\": 1000", "\"total_input_tokens\": 10.0");
    let v = validate(&counts.replace("\"total_output_tokens\": 500", "\"total_output_tokens\": -1"), &csv, 1);
    assert_eq!(
        reasons(&v),
        vec!["invalid_successful_query_count", "invalid_input_token_count", "invalid_output_token_count"]
    );
    assert!(v.metrics.is_empty());
    assert_eq!(reasons(&validate(&bench(START, END), &csv, 0)), vec!["invalid_expected_gpu_count"]);

    let bad_gap = PowerOptions { max_sample_gap_s: f64::NAN, ..PowerOptions::default() };
    let i = integrate_power(Telemetry::Bytes(csv.as_bytes()), START, END, Some(0), &bad_gap);
    assert_eq!(i.reasons.as_slice(), &[PowerReason::InvalidMaxSampleGap]);
}

#[test]
fn amd_smi_iso_seconds_and_timezone_offset() {
    // amd-smi: ISO timestamps with whole seconds, `gpu` and `socket_power` columns, 2 s gaps.
    let amd = |shift: i64| {
        let mut csv = String::from("timestamp,gpu,socket_power,gfx_clk,power_management\n");
        for s in (0..=80).step_by(2) {
            for g in 0..2 {
                let t = chrono::DateTime::from_timestamp(T0 + s + shift, 0).unwrap_or_default();
                csv.push_str(&format!("{},{g},{},2100,ENABLED\n", t.format("%Y-%m-%dT%H:%M:%S"), 700 + g));
            }
        }
        csv
    };
    let v = validate(&bench(START, END), &amd(0), 2);
    assert!(v.power_valid, "{:?}", v.reasons);
    assert_eq!(v.max_sample_gap_s(), Some(2.0));

    // The same wall clock written in a UTC+08:00 cluster and validated as UTC is 8 h off.
    let shifted = amd(8 * 3600);
    assert_eq!(reasons(&validate(&bench(START, END), &shifted, 2)), vec!["no_usable_power_samples"]);
    let opts = PowerOptions {
        utc_offset: crate::results::power_agentic::parse_offset_file("+0800").unwrap_or(utc()),
        ..PowerOptions::default()
    };
    let names = SourceNames { telemetry: "t", benchmark_result: "b" };
    let (v, _) =
        validate_single_node(bench(START, END).as_bytes(), Telemetry::Bytes(shifted.as_bytes()), 2, &opts, names);
    assert!(v.power_valid, "{:?}", v.reasons);
}

#[test]
fn timestamp_forms() {
    let utc = utc();
    assert_eq!(parse_timestamp("1787320000.5", utc), Some(1_787_320_000.5));
    assert_eq!(parse_timestamp("1787320000500", utc), Some(1_787_320_000.5));
    assert_eq!(parse_timestamp("2026/08/21 14:03:15.657", utc), Some(1_787_320_995.0 + 0.657));
    assert_eq!(parse_timestamp("2026/08/21 14:03:15", utc), Some(1_787_320_995.0));
    // strptime accepts one-digit fields, so a line cut after "14:03:2" still parses (as :02).
    assert_eq!(parse_timestamp("2026/08/21 14:03:2", utc), Some(1_787_320_982.0));
    assert_eq!(parse_timestamp("2026-08-21T14:03:15.5+02:00", utc), Some(1_787_313_795.5));
    assert_eq!(parse_timestamp("2026-08-21 14:03:15Z", utc), Some(1_787_320_995.0));
    assert_eq!(parse_timestamp("2026-08-21", utc), Some(1_787_270_400.0));
    for bad in [
        "",
        "1e12",
        "2026/08/21",
        "2026/13/21 14:03:15",
        "2026/08/21 14:03:15.1234567",
        "yesterday",
        "2026-08-21T14:03:15+2",
    ] {
        assert_eq!(parse_timestamp(bad, utc), None, "{bad:?}");
    }
    assert_eq!(parse_power(" 412.34 W"), Some(412.34));
    assert_eq!(parse_power("abc 7"), Some(7.0));
}

#[test]
fn duplicate_timestamps_are_averaged_and_ids_sort_numerically() {
    let mut csv = String::from("timestamp,index,power\n");
    for s in 0..=70 {
        for g in ["10", "2", "gpu-x"] {
            csv.push_str(&format!("{},{g},100\n", T0 + s));
            csv.push_str(&format!("{},{g},300\n", T0 + s));
        }
    }
    let v = validate(&bench(START, END), &csv, 3);
    assert!(v.power_valid, "{:?}", v.reasons);
    assert_eq!(v.observed_gpu_ids, vec!["2", "10", "gpu-x"]);
    assert_eq!(
        v.devices.per_gpu_sample_counts.get("2"),
        Some(&66),
        "rows more than 3 s outside the window are skipped"
    );
    let e = v.devices.per_gpu_energy_j.get("10").copied().unwrap_or(0.0);
    assert!((e - 200.0 * (END - START)).abs() < 1e-6);
}

#[test]
fn aggregate_fields_round_like_process_result() {
    let csv = nvidia(1, T0 as f64, T0 as f64 + 70.0, 1.0, 333.333_333_3);
    let names = SourceNames { telemetry: "t", benchmark_result: "b" };
    let (v, raw) = validate_single_node(
        bench(START, END).as_bytes(),
        Telemetry::Bytes(csv.as_bytes()),
        1,
        &PowerOptions::default(),
        names,
    );
    let fields = v.aggregate_fields(&raw);
    assert_eq!(fields.get("power_valid"), Some(&Value::from(1)));
    assert_eq!(fields.get("power_metric_schema_version"), Some(&Value::from(2)));
    assert_eq!(fields.get("avg_power_w"), Some(&Value::from(333.33)));
    let invalid = validate(&bench(START, END), &csv, 2);
    let fields = invalid.aggregate_fields(&IndexMap::new());
    assert_eq!(fields.len(), 2);
    assert_eq!(fields.get("power_valid"), Some(&Value::from(0)));
}

#[test]
fn accumulator_cross_check_is_advisory() {
    // 11 samples at 1 Hz and 500 W: a 10 s span, 5000 J.
    let mut csv = String::from("timestamp,gpu,socket_power\n");
    for s in 0..=10 {
        csv.push_str(&format!("{},0,500\n", T0 + s));
        csv.push_str(&format!("{},1,500\n", T0 + s));
    }
    let snap = |a: f64, b: f64| format!("gpu,total_energy_consumption\n0,{a}\n1,{b}\n2,7\n");
    let start = snap(1_000_000.0, 2_000_000.0);
    let end = "gpu,total_energy_consumption\n0,1005000\n1,2004000\n".to_string();
    let opts = PowerOptions::default();
    let check = cross_check_accumulator(csv.as_bytes(), Some(start.as_bytes()), Some(end.as_bytes()), &opts);
    let v = serde_json::to_value(&check).unwrap_or_default();
    assert_eq!(v["available"], true);
    assert_eq!(v["accumulator_delta_j"], 9000.0);
    assert_eq!(v["integrated_stream_j"], 10000.0);
    assert_eq!(v["within_tolerance"], false, "11% apart");
    assert_eq!(v["unmatched_gpus"], serde_json::json!(["2"]));
    assert_eq!(v["stream_span_s"], 10.0);

    let end_ok = "gpu,total_energy_consumption\n0,1005000\n1,2005100\n";
    let v = serde_json::to_value(cross_check_accumulator(
        csv.as_bytes(),
        Some(start.as_bytes()),
        Some(end_ok.as_bytes()),
        &opts,
    ))
    .unwrap_or_default();
    assert_eq!(v["within_tolerance"], true);
    let backwards = "gpu,total_energy_consumption\n0,1005000\n1,1999000\n";
    let v = serde_json::to_value(cross_check_accumulator(
        csv.as_bytes(),
        Some(start.as_bytes()),
        Some(backwards.as_bytes()),
        &opts,
    ))
    .unwrap_or_default();
    assert_eq!(v["negative_delta_gpus"], serde_json::json!(["1"]));
    assert_eq!(v["within_tolerance"], false);

    assert_eq!(cross_check_accumulator(csv.as_bytes(), None, None, &opts), None);
    let reason = |c: Option<AccumulatorCheck>| serde_json::to_value(c).unwrap_or_default()["reason"].clone();
    assert_eq!(reason(cross_check_accumulator(csv.as_bytes(), None, Some(b"x"), &opts)), "missing_start_snapshot");
    assert_eq!(
        reason(cross_check_accumulator(csv.as_bytes(), Some(b"gpu\n0\n"), Some(b"x"), &opts)),
        "unparseable_start_snapshot"
    );
    assert_eq!(
        reason(cross_check_accumulator(csv.as_bytes(), Some(start.as_bytes()), Some(b"gpu,x\n"), &opts)),
        "unparseable_end_snapshot"
    );
    assert_eq!(
        reason(cross_check_accumulator(b"a\n\"", Some(start.as_bytes()), Some(end.as_bytes()), &opts)),
        "cross_check_error"
    );
}
