//! Multi-node power: the srt-slurm `dcgm-power` v1 package (spec 40 §4.6, spec 50 §10.1),
//! re-validated the way InferenceX's `aggregate_power_multinode.py` does it: the stored
//! `publication_valid` is never trusted but recomputed from the bytes (wire contract, samples,
//! device identity, window audit, stored evidence), the producer commit must equal the pin,
//! role GPU counts must match the result's prefill/decode totals, exactly one completed window
//! must belong to the processed result by content, and energy is integrated per device.
//!
//! Pure: the caller reads the package (manifest, samples, window files, original results) and
//! passes bytes. Symlinked or non-regular window entries are flagged by the caller.

use std::collections::{BTreeMap, BTreeSet};

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::csv::parse_csv;
use super::power::{load_benchmark_window, trapezoid, BenchmarkWindow};

pub const SCHEMA_VERSION: i64 = 1;
/// Fixed by the producer contract, not a multiple of the sample interval.
pub const MAX_SAMPLE_GAP_SECONDS: f64 = 3.0;
const SAMPLES_HEADER: [&str; 7] =
    ["schema_version", "timestamp_unix", "scrape_seq", "hostname", "gpu_index", "gpu_uuid", "power_w"];
const CLOCK_SOURCE: &str = "head_node_unix_clock";
const FATAL_LIFECYCLE: [&str; 5] = [
    "exporter_exited",
    "collector_exception",
    "collector_interrupted",
    "collector_join_timeout",
    "benchmark_child_reap_timeout",
];
const STARTUP_FAILURES: [&str; 3] =
    ["exporter_startup_timeout", "exporter_launch_failed", "endpoint_resolution_failed"];

/// One entry of `power/windows/`.
#[derive(Debug, Clone, Copy)]
pub struct WindowFile<'a> {
    /// File name inside `windows/`.
    pub name: &'a str,
    /// `None` when the entry is a symlink or not a regular file.
    pub bytes: Option<&'a [u8]>,
}

/// The package as read from disk, plus a reader for original results under `logs/`.
pub struct DcgmPackage<'a> {
    /// `None` when `power/manifest.json` is missing.
    pub manifest: Option<&'a [u8]>,
    /// `None` when `power/samples.csv` is missing.
    pub samples_csv: Option<&'a [u8]>,
    /// `None` when `power/windows/` does not exist.
    pub windows: Option<Vec<WindowFile<'a>>>,
    /// Contents of `logs/<relative path>`, `None` when absent.
    pub read_result: &'a dyn Fn(&str) -> Option<Vec<u8>>,
}

/// What the workflow knows about the point.
#[derive(Debug, Clone, Copy)]
pub struct MultinodeInputs<'a> {
    /// The processed (renamed) raw result in the workspace.
    pub processed_result: &'a [u8],
    pub prefill_gpus: u32,
    pub decode_gpus: u32,
    /// `power-producer-sha.txt`.
    pub expected_producer_sha: Option<&'a str>,
}

/// The audit (sidecar content): verdict, reason codes, human-readable failures, evidence.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct MultinodePowerAudit {
    pub power_valid: bool,
    pub reasons: Vec<String>,
    pub failures: Vec<String>,
    pub benchmark_window: Option<BenchmarkWindow>,
    pub selected_window: Option<Value>,
    pub producer_git_commit: Option<String>,
    pub expected_producer_git_commit: Option<String>,
    pub exporter_image_sha256: Option<String>,
    pub stored_publication_valid: Option<bool>,
    pub recomputed_publication_valid: Option<bool>,
    pub expected_gpu_count: usize,
    pub observed_gpu_count: usize,
    pub per_gpu_role: IndexMap<String, String>,
    pub per_gpu_max_sample_gap_s: IndexMap<String, f64>,
    pub per_gpu_energy_j: IndexMap<String, f64>,
    /// Unrounded; whole-deployment and role metrics, only when valid.
    pub metrics: IndexMap<&'static str, f64>,
}

impl MultinodePowerAudit {
    fn add(&mut self, reason: &str, detail: Option<String>) {
        if !self.reasons.iter().any(|r| r == reason) {
            self.reasons.push(reason.to_string());
        }
        self.failures.extend(detail);
    }
}

type DeviceKey = (String, i64);

#[derive(Debug, Clone)]
struct ExpectedDevice {
    key: DeviceKey,
    roles: BTreeSet<String>,
    het_groups: BTreeSet<Option<i64>>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct SampleRow {
    t: f64,
    seq: i64,
    power: f64,
}

#[derive(Debug, Clone)]
struct Observed {
    uuids: Vec<String>,
    /// (seq, t, power) sorted by seq.
    rows: Vec<SampleRow>,
}

impl Observed {
    fn times_sorted(&self) -> Vec<f64> {
        let mut t: Vec<f64> = self.rows.iter().map(|r| r.t).collect();
        t.sort_by(f64::total_cmp);
        t
    }

    fn to_json(&self, key: &DeviceKey) -> Value {
        let times = self.times_sorted();
        json!({
            "hostname": key.0, "gpu_index": key.1, "gpu_uuids": self.uuids,
            "first_sample_time_unix": times.first(), "last_sample_time_unix": times.last(),
        })
    }
}

#[derive(Debug, Clone)]
struct Window {
    file: String,
    benchmark_type: String,
    concurrency: i64,
    result_path: String,
    status: String,
    start: f64,
    end: Option<f64>,
    duration: Option<f64>,
}

fn finite(v: Option<&Value>) -> Option<f64> {
    v.filter(|v| v.is_number()).and_then(Value::as_f64).filter(|f| f.is_finite())
}

fn whole(v: Option<&Value>, min: i64) -> Option<i64> {
    v.and_then(Value::as_i64).filter(|n| *n >= min)
}

fn safe_relative(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.starts_with('~')
        && path.split('/').all(|p| !p.is_empty() && p != "..")
}

fn stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(s, _)| s)
}

/// The manifest's wire and lifecycle contract (verdict excluded).
fn wire_contract(m: &Map<String, Value>) -> Vec<String> {
    let mut f = Vec::new();
    let expect = [
        ("schema_version", json!(SCHEMA_VERSION)),
        ("producer", json!("srt-slurm.dcgm-power")),
        ("source_metric", json!("DCGM_FI_DEV_POWER_USAGE")),
        ("unit", json!("W")),
        ("power_scope", json!("gpu_device_board_as_reported_by_dcgm")),
        ("timestamp_source", json!(CLOCK_SOURCE)),
        ("status", json!("complete")),
    ];
    for (key, want) in expect {
        if m.get(key) != Some(&want) {
            f.push(format!("{key} is {}, expected {want}", m.get(key).unwrap_or(&Value::Null)));
        }
    }
    for key in ["started_at_unix", "stopped_at_unix"] {
        if finite(m.get(key)).is_none() {
            f.push(format!("{key} is not a finite number"));
        }
    }
    for key in ["sample_interval_seconds", "request_timeout_seconds"] {
        if !finite(m.get(key)).is_some_and(|v| v > 0.0) {
            f.push(format!("{key} is not finite and positive"));
        }
    }
    for key in ["scrape_count", "sample_row_count"] {
        if whole(m.get(key), 0).is_none() {
            f.push(format!("{key} is not a non-negative integer"));
        }
    }
    let required = m.get("required").and_then(Value::as_bool);
    if required.is_none() {
        f.push("required is not a boolean".into());
    }
    match m
        .get("reason_codes")
        .and_then(Value::as_array)
        .and_then(|l| l.iter().map(Value::as_str).collect::<Option<Vec<_>>>())
    {
        None => f.push("reason_codes is not a list of strings".into()),
        Some(codes) => {
            let mut blocking: Vec<&str> = FATAL_LIFECYCLE.to_vec();
            if required == Some(true) {
                blocking.extend(STARTUP_FAILURES);
            }
            let bad: BTreeSet<&str> = codes.into_iter().filter(|c| blocking.contains(c)).collect();
            if !bad.is_empty() {
                f.push(format!(
                    "complete manifest carries lifecycle-failure reasons: {}",
                    bad.into_iter().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    match m.get("dcgm_exporter").and_then(Value::as_object) {
        None => f.push("dcgm_exporter is not an object".into()),
        Some(e) if e.get("container_image_resolved").and_then(Value::as_str).is_none_or(str::is_empty) => {
            f.push("dcgm_exporter.container_image_resolved is empty".into());
        }
        Some(_) => {}
    }
    f
}

type WindowKey = (String, i64);

fn parse_expected(m: &Map<String, Value>) -> Result<(Vec<ExpectedDevice>, Vec<WindowKey>), String> {
    let list = |key: &str| match m.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => Ok(a.clone()),
        Some(other) => Err(format!("{key} is not a list: {other}")),
    };
    let mut devices = Vec::new();
    for entry in list("expected_devices")? {
        let hostname = entry
            .get("hostname")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or("hostname is not a non-empty string")?;
        let index = whole(entry.get("gpu_index"), 0).ok_or("gpu_index is not an integer >= 0")?;
        let assignments = entry
            .get("assignments")
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
            .ok_or("assignments is not a non-empty list")?;
        let mut roles = BTreeSet::new();
        let mut het_groups = BTreeSet::new();
        for a in assignments {
            let role =
                a.get("worker_role").and_then(Value::as_str).filter(|r| ["prefill", "decode", "agg"].contains(r));
            roles.insert(role.ok_or("worker_role is not one of prefill, decode, agg")?.to_string());
            whole(a.get("worker_index"), 0).ok_or("worker_index is not an integer >= 0")?;
            whole(a.get("worker_process"), 0).ok_or("worker_process is not an integer >= 0")?;
            het_groups.insert(match a.get("het_group") {
                None | Some(Value::Null) => None,
                g => Some(whole(g, 0).ok_or("het_group is not an integer >= 0")?),
            });
        }
        devices.push(ExpectedDevice { key: (hostname.to_string(), index), roles, het_groups });
    }
    let mut windows = Vec::new();
    for entry in list("expected_windows")? {
        let t = entry
            .get("benchmark_type")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or("benchmark_type is not a non-empty string")?;
        windows.push((t.to_string(), whole(entry.get("concurrency"), 1).ok_or("concurrency is not an integer >= 1")?));
    }
    Ok((devices, windows))
}

/// samples.csv → per device rows (duplicates dropped) and reason codes.
fn read_samples(bytes: Option<&[u8]>) -> (BTreeMap<DeviceKey, Observed>, usize, i64, Vec<&'static str>) {
    let mut reasons = Vec::new();
    let mut devices: BTreeMap<DeviceKey, Observed> = BTreeMap::new();
    let Some(bytes) = bytes else {
        return (devices, 0, -1, vec!["samples_csv_missing"]);
    };
    let table = match std::str::from_utf8(bytes).ok().map(parse_csv) {
        Some(Ok(t)) => t,
        _ => return (devices, 0, -1, vec!["samples_csv_malformed"]),
    };
    if table.header != SAMPLES_HEADER {
        return (devices, 0, -1, vec!["samples_csv_header_mismatch"]);
    }
    let mut seen = BTreeSet::new();
    let (mut count, mut max_seq) = (0usize, -1i64);
    for raw in &table.rows {
        let parsed = (raw.len() == 7)
            .then(|| {
                let int = |i: usize| raw[i].trim().parse::<i64>().ok();
                let float = |i: usize| raw[i].trim().parse::<f64>().ok().filter(|f| f.is_finite());
                let row = SampleRow {
                    t: float(1)?,
                    seq: int(2).filter(|s| *s >= 0)?,
                    power: float(6).filter(|p| *p >= 0.0)?,
                };
                let ok = int(0) == Some(SCHEMA_VERSION) && !raw[3].is_empty() && !raw[5].is_empty();
                ok.then_some((row, (raw[3].clone(), int(4).filter(|i| *i >= 0)?), raw[5].clone()))
            })
            .flatten();
        let Some((row, key, uuid)) = parsed else {
            push_once(&mut reasons, "samples_csv_malformed");
            continue;
        };
        if !seen.insert((row.seq, key.clone())) {
            push_once(&mut reasons, "duplicate_sample_row");
            continue;
        }
        count += 1;
        max_seq = max_seq.max(row.seq);
        let device = devices.entry(key).or_insert_with(|| Observed { uuids: Vec::new(), rows: Vec::new() });
        if !device.uuids.contains(&uuid) {
            device.uuids.push(uuid);
        }
        device.rows.push(row);
    }
    for device in devices.values_mut() {
        device.rows.sort_by_key(|r| r.seq);
    }
    if devices.values().any(|d| d.rows.windows(2).any(|w| w[1].t <= w[0].t)) {
        push_once(&mut reasons, "timestamp_non_monotonic");
    }
    (devices, count, max_seq, reasons)
}

fn push_once<'a>(list: &mut Vec<&'a str>, item: &'a str) {
    if !list.contains(&item) {
        list.push(item);
    }
}

fn parse_window(name: &str, bytes: &[u8]) -> Result<Window, &'static str> {
    let p: Map<String, Value> = serde_json::from_slice(bytes).map_err(|_| "measurement_window_malformed")?;
    let status = p
        .get("status")
        .and_then(Value::as_str)
        .filter(|s| ["running", "completed", "failed", "interrupted"].contains(s));
    let (Some(status), Some(benchmark_type), Some(concurrency), Some(start), true, true) = (
        status,
        p.get("benchmark_type").and_then(Value::as_str),
        p.get("concurrency").and_then(Value::as_i64),
        finite(p.get("benchmark_start_time_unix")),
        p.get("schema_version") == Some(&json!(SCHEMA_VERSION)),
        p.get("clock_source") == Some(&json!(CLOCK_SOURCE)),
    ) else {
        return Err("measurement_window_malformed");
    };
    let result_path =
        p.get("result_path").and_then(Value::as_str).filter(|r| safe_relative(r) && stem(r) == stem(name));
    let result_path = result_path.ok_or("measurement_window_result_path_invalid")?;
    let (end, duration) = (p.get("benchmark_end_time_unix"), p.get("duration"));
    let reason = p.get("reason").and_then(Value::as_str).filter(|r| !r.is_empty());
    let null = |v: Option<&Value>| v.is_none_or(Value::is_null);
    let reason_null = null(p.get("reason"));
    let ok = match status {
        "running" => null(end) && null(duration) && reason_null,
        "interrupted" => null(end) && null(duration) && reason.is_some(),
        _ => {
            let timed = finite(end).is_some() && finite(duration).is_some_and(|d| d > 0.0);
            timed && if status == "completed" { reason_null } else { reason.is_some() }
        }
    };
    if !ok {
        return Err("measurement_window_malformed");
    }
    Ok(Window {
        file: format!("windows/{name}"),
        benchmark_type: benchmark_type.to_string(),
        concurrency,
        result_path: result_path.to_string(),
        status: status.to_string(),
        start,
        end: finite(end),
        duration: finite(duration),
    })
}

/// [last sample ≤ start, samples inside, first sample ≥ end], or `None` when not bracketed.
fn bracketing(times: &[f64], start: f64, end: f64) -> Option<Vec<f64>> {
    let before = times.iter().rev().find(|t| **t <= start)?;
    let after = times.iter().find(|t| **t >= end)?;
    let mut seq = vec![*before];
    seq.extend(times.iter().filter(|t| start < **t && **t < end));
    seq.push(*after);
    Some(seq)
}

fn max_gap(seq: &[f64]) -> f64 {
    seq.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max)
}

fn label(key: &DeviceKey, observed: &BTreeMap<DeviceKey, Observed>) -> String {
    match observed.get(key).map(|o| o.uuids.as_slice()) {
        Some([uuid]) => format!("{}/{uuid}", key.0),
        _ => format!("{}/{}", key.0, key.1),
    }
}

/// Validate the package and integrate energy (upstream `validate_and_integrate` + `run`).
pub fn validate_multinode(package: &DcgmPackage<'_>, inputs: &MultinodeInputs<'_>) -> MultinodePowerAudit {
    let (benchmark, benchmark_reasons) = load_benchmark_window(inputs.processed_result);
    let mut audit = MultinodePowerAudit {
        expected_producer_git_commit: inputs.expected_producer_sha.map(str::to_string),
        benchmark_window: benchmark,
        ..MultinodePowerAudit::default()
    };
    let effective = benchmark.filter(|_| benchmark_reasons.is_empty());
    integrate_package(&mut audit, package, inputs, effective);
    for reason in benchmark_reasons.as_slice() {
        audit.add(&reason.to_string(), None);
    }
    if benchmark.is_none() || !audit.reasons.is_empty() {
        audit.power_valid = false;
        audit.metrics.clear();
    }
    audit
}

fn integrate_package(
    audit: &mut MultinodePowerAudit,
    package: &DcgmPackage<'_>,
    inputs: &MultinodeInputs<'_>,
    benchmark: Option<BenchmarkWindow>,
) {
    let Some(manifest_bytes) = package.manifest else {
        return audit.add("manifest_missing", Some("manifest missing: power/manifest.json".into()));
    };
    let manifest: Map<String, Value> = match serde_json::from_slice(manifest_bytes) {
        Ok(m) => m,
        Err(e) => return audit.add("manifest_malformed", Some(format!("manifest unreadable: {e}"))),
    };
    audit.stored_publication_valid = manifest.get("publication_valid").and_then(Value::as_bool);
    audit.producer_git_commit = manifest.get("producer_git_commit").and_then(Value::as_str).map(str::to_string);
    audit.exporter_image_sha256 = manifest
        .get("dcgm_exporter")
        .and_then(|e| e.get("container_image_sha256"))
        .and_then(Value::as_str)
        .map(str::to_string);
    match inputs.expected_producer_sha.filter(|s| !s.is_empty()) {
        None => audit.add("producer_pin_missing", Some("no expected producer SHA configured".into())),
        Some(pin) if audit.producer_git_commit.as_deref() != Some(pin) => audit.add(
            "producer_commit_mismatch",
            Some(format!("producer_git_commit {:?} != expected {pin:?}", audit.producer_git_commit)),
        ),
        Some(_) => {}
    }
    let mut failures = wire_contract(&manifest);
    let (expected, expected_windows) = match parse_expected(&manifest) {
        Ok(v) => v,
        Err(e) => {
            audit.recomputed_publication_valid = Some(false);
            return audit.add("manifest_malformed", Some(format!("manifest malformed: {e}")));
        }
    };
    let (observed, row_count, max_seq, sample_reasons) = read_samples(package.samples_csv);
    failures.extend(sample_reasons.iter().map(|r| format!("{r} in samples.csv")));

    // Device identity and topology.
    let expected_keys: BTreeSet<DeviceKey> = expected.iter().map(|d| d.key.clone()).collect();
    let observed_keys: BTreeSet<DeviceKey> = observed.keys().cloned().collect();
    let mut device_reasons = Vec::new();
    if expected_keys.is_empty() || !expected_keys.is_subset(&observed_keys) {
        device_reasons.push("expected_device_missing");
    }
    if !observed_keys.is_subset(&expected_keys) {
        device_reasons.push("unexpected_device");
    }
    let uuids: Vec<&String> = observed.values().flat_map(|o| o.uuids.iter()).collect();
    if observed.values().any(|o| o.uuids.len() != 1) || uuids.iter().collect::<BTreeSet<_>>().len() != uuids.len() {
        device_reasons.push("gpu_uuid_changed");
    }
    let roles_ok = expected.iter().all(|d| d.roles.len() == 1);
    if !roles_ok {
        device_reasons.push("conflicting_worker_roles");
    }
    let het = het_groups(&expected);
    if het.is_none() {
        device_reasons.push("conflicting_het_groups");
    }
    failures.extend(device_reasons.iter().map(|r| format!("{r} (device identity/topology)")));
    let roles: BTreeMap<DeviceKey, String> = if roles_ok {
        expected.iter().filter_map(|d| Some((d.key.clone(), d.roles.first()?.clone()))).collect()
    } else {
        BTreeMap::new()
    };

    // Window audit.
    let (parsed, duplicates, mut artifact_errors) = scan_windows(package.windows.as_deref());
    let expected_window_keys: BTreeSet<WindowKey> = expected_windows.iter().cloned().collect();
    for (key, w) in &parsed {
        if !expected_window_keys.contains(key) {
            artifact_errors.push(json!({"path": w.file, "reason_codes": ["measurement_window_unexpected"]}));
        }
    }
    let validations: Vec<Value> = expected_windows
        .iter()
        .map(|key| {
            window_validation(key, parsed.get(key), duplicates.contains(key), &expected_keys, &observed, package)
        })
        .collect();
    if expected_windows.is_empty() {
        failures.push("no expected measurement window".into());
    }
    for v in &validations {
        for r in v["reason_codes"].as_array().into_iter().flatten() {
            failures.push(format!(
                "{} (window {}/{})",
                r.as_str().unwrap_or_default(),
                v["benchmark_type"].as_str().unwrap_or_default(),
                v["concurrency"]
            ));
        }
    }
    for e in &artifact_errors {
        for r in e["reason_codes"].as_array().into_iter().flatten() {
            failures.push(format!("{} ({})", r.as_str().unwrap_or_default(), e["path"].as_str().unwrap_or_default()));
        }
    }
    // Stored evidence must equal what the bytes say.
    if manifest.get("sample_row_count").and_then(Value::as_u64) != Some(row_count as u64) {
        failures.push(format!(
            "sample_row_count is {}, disk has {row_count} rows",
            manifest.get("sample_row_count").unwrap_or(&Value::Null)
        ));
    }
    if row_count > 0 && whole(manifest.get("scrape_count"), 0).is_none_or(|s| s <= max_seq) {
        failures.push(format!(
            "scrape_count is {}, disk needs at least {}",
            manifest.get("scrape_count").unwrap_or(&Value::Null),
            max_seq + 1
        ));
    }
    if observed.is_empty() {
        failures.push("observed_devices is empty".into());
    }
    let observed_json: Vec<Value> = observed.iter().map(|(k, o)| o.to_json(k)).collect();
    for (field, recomputed) in
        [("observed_devices", observed_json), ("window_validations", validations), ("artifact_errors", artifact_errors)]
    {
        if manifest.get(field) != Some(&Value::Array(recomputed)) {
            failures.push(format!("{field} does not match the recomputation from the package bytes"));
        }
    }
    if expected_keys.len() != expected.len() {
        failures.push("expected_devices contains duplicate keys".into());
    }
    if expected_window_keys.len() != expected_windows.len() {
        failures.push("expected_windows contains duplicate keys".into());
    }
    let recomputed = failures.is_empty();
    audit.recomputed_publication_valid = Some(recomputed);
    audit.failures.append(&mut failures);
    if !recomputed {
        audit.add("package_recompute_invalid", None);
    }
    if audit.stored_publication_valid != Some(recomputed) {
        audit.add(
            "producer_verdict_mismatch",
            Some(format!("stored publication_valid={:?}, recomputed={recomputed}", audit.stored_publication_valid)),
        );
    } else if !recomputed {
        audit.add("package_recompute_invalid", Some("stored and recomputed both invalid".into()));
    }

    let expected_roles: BTreeMap<&str, usize> = [("prefill", inputs.prefill_gpus), ("decode", inputs.decode_gpus)]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(r, n)| (r, n as usize))
        .collect();
    if expected_roles.is_empty() {
        audit.add("topology_env_mismatch", Some("PREFILL_GPUS/DECODE_GPUS are both zero".into()));
    } else if !roles.is_empty() {
        for failure in role_topology(&expected, &roles, &expected_roles) {
            audit.add("topology_env_mismatch", Some(failure));
        }
    }
    audit.expected_gpu_count = expected.len();
    audit.observed_gpu_count = observed.len();
    audit.per_gpu_role = roles.iter().map(|(k, r)| (label(k, &observed), r.clone())).collect();

    let window = select_window(audit, &parsed, package, inputs.processed_result, benchmark);
    let (Some(window), Some(bench), true) = (window, benchmark, audit.reasons.is_empty()) else {
        return;
    };
    let end = window.end.unwrap_or(window.start);
    let duration = end - window.start;
    let mut role_energy: BTreeMap<&str, f64> = BTreeMap::new();
    for device in &expected {
        let Some(obs) = observed.get(&device.key) else { continue };
        let mut samples: Vec<(f64, f64)> = obs.rows.iter().map(|r| (r.t, r.power)).collect();
        samples.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let Some(energy) = trapezoid(&samples, window.start, end) else { continue };
        let name = label(&device.key, &observed);
        audit.per_gpu_energy_j.insert(name.clone(), energy);
        audit
            .per_gpu_max_sample_gap_s
            .insert(name, bracketing(&obs.times_sorted(), window.start, end).map_or(0.0, |s| max_gap(&s)));
        if let Some(role @ ("prefill" | "decode")) = roles.get(&device.key).map(String::as_str) {
            *role_energy.entry(role).or_default() += energy;
        }
    }
    let total: f64 = audit.per_gpu_energy_j.values().sum();
    let (tin, tout) = (bench.total_input_tokens as f64, bench.total_output_tokens as f64);
    let m = &mut audit.metrics;
    m.insert("avg_power_w", total / duration / expected.len() as f64);
    m.insert("avg_total_gpu_power_w", total / duration);
    m.insert("total_gpu_energy_j", total);
    m.insert("joules_per_successful_query", total / bench.completed as f64);
    m.insert("joules_per_input_token", total / tin);
    m.insert("joules_per_output_token", total / tout);
    m.insert("joules_per_total_token", total / (tin + tout));
    if inputs.prefill_gpus > 0 {
        let e = role_energy.get("prefill").copied().unwrap_or(0.0);
        m.insert("prefill_gpu_energy_j", e);
        m.insert("prefill_avg_power_w", e / duration / f64::from(inputs.prefill_gpus));
        m.insert("prefill_joules_per_input_token", e / tin);
    }
    if inputs.decode_gpus > 0 {
        let e = role_energy.get("decode").copied().unwrap_or(0.0);
        m.insert("decode_gpu_energy_j", e);
        m.insert("decode_avg_power_w", e / duration / f64::from(inputs.decode_gpus));
        m.insert("decode_joules_per_output_token", e / tout);
    }
    let non_finite: Vec<&str> = m.iter().filter(|(_, v)| !v.is_finite()).map(|(k, _)| *k).collect();
    if !non_finite.is_empty() {
        let detail = format!("non-finite: {}", non_finite.join(", "));
        audit.metrics.clear();
        return audit.add("non_finite_power_metric", Some(detail));
    }
    audit.power_valid = true;
}

/// Host → het group, `None` on conflicts (per device or per host).
fn het_groups(expected: &[ExpectedDevice]) -> Option<BTreeMap<String, Option<i64>>> {
    let mut groups = BTreeMap::new();
    for d in expected {
        let [group] = d.het_groups.iter().copied().collect::<Vec<_>>()[..] else { return None };
        if groups.insert(d.key.0.clone(), group).is_some_and(|g| g != group) {
            return None;
        }
    }
    Some(groups)
}

fn role_topology(
    expected: &[ExpectedDevice],
    roles: &BTreeMap<DeviceKey, String>,
    want: &BTreeMap<&str, usize>,
) -> Vec<String> {
    let mut failures = Vec::new();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for r in roles.values() {
        *counts.entry(r.as_str()).or_default() += 1;
    }
    if counts.keys().collect::<Vec<_>>() != want.keys().collect::<Vec<_>>() {
        failures.push(format!(
            "expected roles {:?}, found {:?}",
            want.keys().collect::<Vec<_>>(),
            counts.keys().collect::<Vec<_>>()
        ));
    }
    for (role, n) in want {
        let found = counts.get(role).copied().unwrap_or(0);
        if found != *n {
            failures.push(format!("expected {n} {role} GPUs, found {found}"));
        }
    }
    let Some(groups) = het_groups(expected) else {
        failures.push("conflicting_het_groups (topology)".into());
        return failures;
    };
    let mut per_role: BTreeMap<&str, BTreeSet<Option<i64>>> = BTreeMap::new();
    for d in expected {
        if let (Some(role), Some(group)) = (roles.get(&d.key), groups.get(&d.key.0)) {
            per_role.entry(role.as_str()).or_default().insert(*group);
        }
    }
    let non_het = groups.values().all(Option::is_none);
    let mut assigned = Vec::new();
    for (role, set) in per_role {
        match set.iter().copied().collect::<Vec<_>>()[..] {
            [None] if non_het => {}
            [None] => {
                failures.push(format!("role {role} has het group None while other devices report real het groups"))
            }
            [Some(g)] => assigned.push(g),
            _ => failures.push(format!("role {role} spans het groups {set:?}, expected exactly one")),
        }
    }
    if assigned.iter().collect::<BTreeSet<_>>().len() != assigned.len() {
        failures.push("roles share a het group".into());
    }
    failures
}

type ParsedWindows = BTreeMap<WindowKey, Window>;

fn scan_windows(files: Option<&[WindowFile<'_>]>) -> (ParsedWindows, BTreeSet<WindowKey>, Vec<Value>) {
    let (mut parsed, mut duplicates, mut errors) = (BTreeMap::new(), BTreeSet::new(), Vec::new());
    let mut files: Vec<WindowFile<'_>> = files.unwrap_or_default().to_vec();
    files.sort_by(|a, b| a.name.cmp(b.name));
    for f in files {
        let path = format!("windows/{}", f.name);
        let Some(bytes) = f.bytes else {
            errors.push(json!({"path": path, "reason_codes": ["measurement_window_artifact_path_invalid"]}));
            continue;
        };
        match parse_window(f.name, bytes) {
            Err(reason) => errors.push(json!({"path": path, "reason_codes": [reason]})),
            Ok(w) => {
                let key = (w.benchmark_type.clone(), w.concurrency);
                if let Some(first) = parsed.get(&key).map(|p: &Window| p.file.clone()) {
                    duplicates.insert(key);
                    errors.push(json!({"path": first, "reason_codes": ["measurement_window_duplicate"]}));
                    errors.push(json!({"path": path, "reason_codes": ["measurement_window_duplicate"]}));
                } else {
                    parsed.insert(key, w);
                }
            }
        }
    }
    for key in &duplicates {
        parsed.remove(key);
    }
    (parsed, duplicates, errors)
}

fn window_validation(
    key: &WindowKey,
    window: Option<&Window>,
    duplicate: bool,
    expected_keys: &BTreeSet<DeviceKey>,
    observed: &BTreeMap<DeviceKey, Observed>,
    package: &DcgmPackage<'_>,
) -> Value {
    let Some(w) = window else {
        let reason = if duplicate { "measurement_window_duplicate" } else { "measurement_window_missing" };
        return json!({"benchmark_type": key.0, "concurrency": key.1, "window_file": null, "power_coverage_valid": false,
                      "reason_codes": [reason], "per_device_max_sample_gap_seconds": {}});
    };
    let mut reasons: Vec<&str> = Vec::new();
    if w.status != "completed" {
        reasons.push("measurement_window_incomplete");
    } else if let Some(r) = check_window_result(w, package) {
        reasons.push(r);
    }
    let mut gaps = Map::new();
    if reasons.is_empty() {
        let end = w.end.unwrap_or(w.start);
        for key in expected_keys {
            let Some(device) = observed.get(key) else {
                push_once(&mut reasons, "measurement_window_not_bracketed");
                continue;
            };
            let [uuid] = device.uuids.as_slice() else {
                push_once(&mut reasons, "gpu_uuid_changed");
                continue;
            };
            let Some(seq) = bracketing(&device.times_sorted(), w.start, end) else {
                push_once(&mut reasons, "measurement_window_not_bracketed");
                continue;
            };
            let gap = max_gap(&seq);
            gaps.insert(format!("{}/{uuid}", key.0), json!(gap));
            if gap > MAX_SAMPLE_GAP_SECONDS {
                push_once(&mut reasons, "sample_gap_exceeded");
            }
        }
        if !reasons.is_empty() {
            gaps.clear();
        }
    }
    json!({"benchmark_type": key.0, "concurrency": key.1, "window_file": w.file, "power_coverage_valid": reasons.is_empty(),
           "reason_codes": reasons, "per_device_max_sample_gap_seconds": gaps})
}

fn check_window_result(w: &Window, package: &DcgmPackage<'_>) -> Option<&'static str> {
    let Some(result) = (package.read_result)(&w.result_path).and_then(|b| serde_json::from_slice::<Value>(&b).ok())
    else {
        return Some("measurement_window_result_missing");
    };
    let same = |k: &str, v: Option<f64>| finite(result.get(k)) == v && result.get(k).is_some();
    if !result.is_object()
        || !same("benchmark_start_time_unix", Some(w.start))
        || !same("benchmark_end_time_unix", w.end)
        || !same("duration", w.duration)
    {
        return Some("measurement_window_result_mismatch");
    }
    let (end, duration) = (w.end.unwrap_or(w.start), w.duration.unwrap_or(0.0));
    ((end - w.start - duration).abs() > f64::max(0.5, 0.01 * duration)).then_some("measurement_window_clock_mismatch")
}

/// Bind the processed result to its completed window by content (the workspace copy was
/// renamed by the launcher).
fn select_window<'w>(
    audit: &mut MultinodePowerAudit,
    parsed: &'w ParsedWindows,
    package: &DcgmPackage<'_>,
    processed: &[u8],
    benchmark: Option<BenchmarkWindow>,
) -> Option<&'w Window> {
    let Ok(processed) = serde_json::from_slice::<Value>(processed).map_err(|_| ()).and_then(|v| {
        if v.is_object() {
            Ok(v)
        } else {
            Err(())
        }
    }) else {
        audit.add("invalid_benchmark_result", Some("processed result is not a JSON object".into()));
        return None;
    };
    let conc = processed.get("max_concurrency");
    let matches: Vec<&Window> =
        parsed.values().filter(|w| w.status == "completed" && Some(&json!(w.concurrency)) == conc).collect();
    let [window] = matches[..] else {
        audit.add(
            "window_for_result_missing",
            Some(format!("found {} completed windows for concurrency {}", matches.len(), conc.unwrap_or(&Value::Null))),
        );
        return None;
    };
    let Some(original) =
        (package.read_result)(&window.result_path).and_then(|b| serde_json::from_slice::<Value>(&b).ok())
    else {
        audit.add(
            "measurement_window_result_missing",
            Some(format!("original result unreadable: {}", window.result_path)),
        );
        return None;
    };
    if original != processed {
        audit.add(
            "result_content_mismatch",
            Some(format!("workspace copy differs from original {}", window.result_path)),
        );
        return None;
    }
    if benchmark.is_some_and(|b| b.start_unix != window.start || Some(b.end_unix) != window.end) {
        audit.add(
            "measurement_window_result_mismatch",
            Some("benchmark window fields do not match the selected window file".into()),
        );
        return None;
    }
    audit.selected_window = Some(json!({
        "window_file": window.file, "result_path": window.result_path, "benchmark_type": window.benchmark_type,
        "concurrency": window.concurrency, "start_time_unix": window.start, "end_time_unix": window.end, "duration": window.duration,
    }));
    Some(window)
}

#[cfg(test)]
mod tests;
