//! Single-node power validation (spec 40 §4.1–4.3, spec 50 §10.2): nvidia-smi / amd-smi CSV,
//! column detection, per-GPU trapezoidal integration over the formal benchmark window, and the
//! `power_validation_<RF>.json` sidecar (schema 1). Same reason codes, order and numbers as
//! upstream `utils/aggregate_power.py`; the timezone of naive timestamps is an explicit input
//! (decision E7), never the process environment.

use std::fmt;

use chrono::{FixedOffset, NaiveDate, NaiveDateTime, NaiveTime};
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use super::csv::{parse_csv, CsvError};
use super::round_to;

/// Maximum allowed gap between samples, and the ± band around the window for row filtering.
pub const DEFAULT_MAX_SAMPLE_GAP_S: f64 = 3.0;
/// Largest telemetry file read (a monitor running for a day at 8 GPUs/s is ~70 MB).
pub const MAX_TELEMETRY_BYTES: usize = 256 * 1024 * 1024;
pub const INTEGRATION_METHOD: &str = "per_device_trapezoidal_with_linear_boundary_interpolation";

/// Upstream's reason codes, serialized exactly as upstream writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PowerReason {
    InvalidBenchmarkResult,
    InvalidBenchmarkWindow,
    BenchmarkDurationMismatch,
    InvalidSuccessfulQueryCount,
    InvalidInputTokenCount,
    InvalidOutputTokenCount,
    InvalidExpectedGpuCount,
    InvalidMaxSampleGap,
    TelemetryFileMissing,
    TelemetryFileEmpty,
    TelemetryFileUnreadable,
    TimestampColumnMissing,
    PowerColumnMissing,
    GpuIdentityColumnMissing,
    InvalidTimestampSample,
    InvalidPowerSample,
    GpuIdentityMissing,
    NoUsablePowerSamples,
    ExpectedGpuCountMismatch,
    InsufficientPowerSamples,
    BenchmarkWindowNotBracketed,
    SamplingGapExceeded,
}

impl fmt::Display for PowerReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match serde_json::to_value(self) {
            Ok(Value::String(s)) => f.write_str(&s),
            _ => write!(f, "{self:?}"),
        }
    }
}

/// Reasons de-duplicated in discovery order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Reasons(Vec<PowerReason>);

impl Reasons {
    pub fn push(&mut self, reason: PowerReason) {
        if !self.0.contains(&reason) {
            self.0.push(reason);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn as_slice(&self) -> &[PowerReason] {
        &self.0
    }

    pub fn contains(&self, reason: PowerReason) -> bool {
        self.0.contains(&reason)
    }
}

/// How to read the telemetry.
#[derive(Debug, Clone, Copy)]
pub struct PowerOptions {
    pub max_sample_gap_s: f64,
    /// The cluster's UTC offset for naive timestamps (nvidia-smi writes local wall clock).
    pub utc_offset: FixedOffset,
}

impl Default for PowerOptions {
    fn default() -> Self {
        PowerOptions { max_sample_gap_s: DEFAULT_MAX_SAMPLE_GAP_S, utc_offset: utc() }
    }
}

fn utc() -> FixedOffset {
    chrono::Offset::fix(&chrono::Utc)
}

/// The telemetry file as the caller found it.
#[derive(Debug, Clone, Copy)]
pub enum Telemetry<'a> {
    Missing,
    Unreadable,
    Bytes(&'a [u8]),
}

/// The energy-normalization contract read from the raw benchmark JSON.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BenchmarkWindow {
    #[serde(rename = "start_time_unix")]
    pub start_unix: f64,
    #[serde(rename = "end_time_unix")]
    pub end_unix: f64,
    #[serde(rename = "reported_duration_s")]
    pub reported_duration_s: f64,
    pub integration_duration_s: f64,
    pub completed: i64,
    pub total_input_tokens: i64,
    pub total_output_tokens: i64,
}

/// Read the window and denominators from a raw `<RF>.json` (step 1 of §4.3).
pub fn load_benchmark_window(raw: &[u8]) -> (Option<BenchmarkWindow>, Reasons) {
    let mut reasons = Reasons::default();
    let Ok(Value::Object(bench)) = serde_json::from_slice::<Value>(raw) else {
        reasons.push(PowerReason::InvalidBenchmarkResult);
        return (None, reasons);
    };
    let number = |key: &str| bench.get(key).and_then(Value::as_f64);
    let (Some(start), Some(end), Some(duration)) =
        (number("benchmark_start_time_unix"), number("benchmark_end_time_unix"), number("duration"))
    else {
        reasons.push(PowerReason::InvalidBenchmarkWindow);
        return (None, reasons);
    };
    if !(start.is_finite() && end.is_finite() && duration.is_finite()) || end <= start || duration <= 0.0 {
        reasons.push(PowerReason::InvalidBenchmarkWindow);
        return (None, reasons);
    }
    let integration = end - start;
    if (duration - integration).abs() > f64::max(0.5, integration * 0.01) {
        reasons.push(PowerReason::BenchmarkDurationMismatch);
    }
    let mut count = |key: &str, reason: PowerReason| match bench.get(key).and_then(Value::as_i64) {
        Some(n) if n > 0 => n,
        _ => {
            reasons.push(reason);
            0
        }
    };
    let completed = count("completed", PowerReason::InvalidSuccessfulQueryCount);
    let total_input_tokens = count("total_input_tokens", PowerReason::InvalidInputTokenCount);
    let total_output_tokens = count("total_output_tokens", PowerReason::InvalidOutputTokenCount);
    let window = BenchmarkWindow {
        start_unix: start,
        end_unix: end,
        reported_duration_s: duration,
        integration_duration_s: integration,
        completed,
        total_input_tokens,
        total_output_tokens,
    };
    (Some(window), reasons)
}

/// Per-GPU audit figures, keyed by GPU id in observed order.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct DeviceAudit {
    pub per_gpu_sample_counts: IndexMap<String, usize>,
    pub per_gpu_max_sample_gap_s: IndexMap<String, f64>,
    pub per_gpu_energy_j: IndexMap<String, f64>,
    pub device_issues: IndexMap<String, Vec<PowerReason>>,
}

/// Result of integrating one telemetry stream (upstream `PowerIntegration`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PowerIntegration {
    pub reasons: Reasons,
    pub expected_num_gpus: Option<i64>,
    pub observed_gpu_ids: Vec<String>,
    pub devices: DeviceAudit,
    /// Present when every observed GPU has an energy value.
    pub total_gpu_energy_j: Option<f64>,
    pub avg_total_gpu_power_w: Option<f64>,
    pub avg_power_w: Option<f64>,
}

impl PowerIntegration {
    fn failed(expected_num_gpus: Option<i64>, reasons: Reasons) -> PowerIntegration {
        PowerIntegration { reasons, expected_num_gpus, ..PowerIntegration::default() }
    }
}

/// The CSV columns that matter (§4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Columns {
    pub timestamp: Option<usize>,
    pub power: Option<usize>,
    pub gpu: Option<usize>,
}

/// Detect columns on a stripped header. A name that appears twice reads its last column, as
/// Python's `csv.DictReader` does.
pub fn detect_columns(header: &[String]) -> Columns {
    let last_of = |name: &str| header.iter().rposition(|h| h == name);
    let find = |pred: &dyn Fn(&str) -> bool| header.iter().find(|h| pred(h)).and_then(|h| last_of(h));
    let lower = |h: &str| h.to_ascii_lowercase();
    Columns {
        timestamp: find(&|h| lower(h).contains("time")),
        power: find(&|h| {
            let l = lower(h);
            l.contains("power") && !["limit", "cap", "max", "min"].iter().any(|w| l.contains(w))
        }),
        gpu: find(&|h| ["index", "gpu", "gpu_id", "gpu_index", "card", "device"].contains(&lower(h.trim()).as_str())),
    }
}

/// A timestamp cell as epoch seconds (§4.2): epoch s/ms, nvidia-smi `YYYY/MM/DD HH:MM:SS[.f]`,
/// or ISO 8601; naive values are wall clock at `utc_offset`.
pub fn parse_timestamp(cell: &str, utc_offset: FixedOffset) -> Option<f64> {
    let value = cell.trim();
    if value.is_empty() {
        return None;
    }
    if is_plain_number(value) {
        let n: f64 = value.parse().ok()?;
        return Some(if n > 1e12 { n / 1000.0 } else { n });
    }
    if let Some(naive) = parse_slash_datetime(value) {
        return Some(naive_epoch(naive, utc_offset));
    }
    parse_iso(value, utc_offset)
}

/// `-?\d+(?:\.\d+)?`, whole cell.
fn is_plain_number(s: &str) -> bool {
    let s = s.strip_prefix('-').unwrap_or(s);
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s, None),
    };
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    digits(int) && frac.is_none_or(digits)
}

/// First number in the cell (`-?\d+(?:\.\d+)?`) as in `_NUMBER_RE.search`.
fn first_number(s: &str) -> Option<f64> {
    let bytes = s.as_bytes();
    let start = bytes.iter().position(u8::is_ascii_digit)?;
    let negative = start > 0 && bytes[start - 1] == b'-';
    let mut end = start + bytes[start..].iter().take_while(|b| b.is_ascii_digit()).count();
    if bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit) {
        end += 1 + bytes[end + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
    }
    let n: f64 = s.get(start..end)?.parse().ok()?;
    Some(if negative { -n } else { n })
}

/// A power cell: the first number; empty and N/A spellings are unparseable.
pub fn parse_power(cell: &str) -> Option<f64> {
    let value = cell.trim();
    if value.is_empty() || ["[n/a]", "n/a", "na"].contains(&value.to_ascii_lowercase().as_str()) {
        return None;
    }
    first_number(value)
}

/// Python's `datetime.timestamp()`: whole seconds, then microseconds added as a float.
fn naive_epoch(naive: NaiveDateTime, offset: FixedOffset) -> f64 {
    let utc_seconds = naive.and_utc().timestamp() - i64::from(offset.local_minus_utc());
    utc_seconds as f64 + f64::from(naive.and_utc().timestamp_subsec_micros()) / 1e6
}

/// strptime `%Y/%m/%d %H:%M:%S.%f` then `%Y/%m/%d %H:%M:%S` (1–2 digit fields, 1–6 digit %f).
fn parse_slash_datetime(value: &str) -> Option<NaiveDateTime> {
    let (date, time) = value.split_once(' ')?;
    let mut d = date.split('/');
    let (y, m, day) = (d.next()?, d.next()?, d.next()?);
    if d.next().is_some() || y.len() != 4 {
        return None;
    }
    let date = NaiveDate::from_ymd_opt(field(y, 4)?, field(m, 2)? as u32, field(day, 2)? as u32)?;
    let (hms, frac) = match time.split_once('.') {
        Some((hms, frac)) => (hms, Some(frac)),
        None => (time, None),
    };
    let mut t = hms.split(':');
    let (h, mi, s) = (t.next()?, t.next()?, t.next()?);
    if t.next().is_some() {
        return None;
    }
    let micros = match frac {
        Some(f) if (1..=6).contains(&f.len()) => field(f, 6)? as u32 * 10u32.pow(6 - f.len() as u32),
        Some(_) => return None,
        None => 0,
    };
    let time = NaiveTime::from_hms_micro_opt(field(h, 2)? as u32, field(mi, 2)? as u32, field(s, 2)? as u32, micros)?;
    Some(NaiveDateTime::new(date, time))
}

/// An all-digit field of 1..=max_len digits.
fn field(s: &str, max_len: usize) -> Option<i32> {
    if s.is_empty() || s.len() > max_len || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `datetime.fromisoformat` (3.11) for the forms SMI tools write: `YYYY-MM-DD`, then optionally
/// `T` (or one space) and `HH[:MM[:SS[.fff…]]]`, then optionally `Z` or `±HH[:MM]`/`±HHMM`.
fn parse_iso(value: &str, utc_offset: FixedOffset) -> Option<f64> {
    let value =
        if value.contains(' ') && !value.contains('T') { value.replacen(' ', "T", 1) } else { value.to_string() };
    let (date, rest) = match value.split_once('T') {
        Some((d, r)) => (d, Some(r)),
        None => (value.as_str(), None),
    };
    let mut d = date.split('-');
    let (y, m, day) = (d.next()?, d.next()?, d.next()?);
    if d.next().is_some() || y.len() != 4 || m.len() != 2 || day.len() != 2 {
        return None;
    }
    let date = NaiveDate::from_ymd_opt(field(y, 4)?, field(m, 2)? as u32, field(day, 2)? as u32)?;
    let (time, offset) = match rest {
        None => (NaiveTime::MIN, None),
        Some(rest) => {
            let split = rest.find(['Z', 'z', '+', '-']).unwrap_or(rest.len());
            let (clock, tz) = rest.split_at(split);
            (parse_iso_time(clock)?, if tz.is_empty() { None } else { Some(parse_iso_offset(tz)?) })
        }
    };
    let naive = NaiveDateTime::new(date, time);
    match offset {
        None => Some(naive_epoch(naive, utc_offset)),
        Some(offset) => {
            let utc = naive.and_utc().timestamp() - i64::from(offset.local_minus_utc());
            let micros = i64::from(naive.and_utc().timestamp_subsec_micros());
            Some((utc * 1_000_000 + micros) as f64 / 1e6)
        }
    }
}

fn parse_iso_time(clock: &str) -> Option<NaiveTime> {
    let (hms, frac) = match clock.split_once(['.', ',']) {
        Some((h, f)) => (h, Some(f)),
        None => (clock, None),
    };
    let parts: Vec<&str> = hms.split(':').collect();
    if parts.iter().any(|p| p.len() != 2) || parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let get = |i: usize| parts.get(i).map_or(Some(0), |p| field(p, 2));
    let micros = match frac {
        None => 0,
        Some(f) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) && parts.len() == 3 => {
            let six: String = f.chars().chain(std::iter::repeat('0')).take(6).collect();
            six.parse().ok()?
        }
        Some(_) => return None,
    };
    NaiveTime::from_hms_micro_opt(get(0)? as u32, get(1)? as u32, get(2)? as u32, micros)
}

fn parse_iso_offset(tz: &str) -> Option<FixedOffset> {
    if tz.eq_ignore_ascii_case("z") {
        return Some(utc());
    }
    let sign = if tz.starts_with('-') { -1 } else { 1 };
    let digits: String = tz.get(1..)?.chars().filter(|c| *c != ':').collect();
    let (h, m) = match digits.len() {
        2 => (field(&digits, 2)?, 0),
        4 => (field(digits.get(..2)?, 2)?, field(digits.get(2..)?, 2)?),
        _ => return None,
    };
    if h > 23 || m > 59 {
        return None;
    }
    FixedOffset::east_opt(sign * (h * 3600 + m * 60))
}

/// Validate and integrate per-GPU power over [start, end] (upstream `integrate_power`).
pub fn integrate_power(
    telemetry: Telemetry<'_>,
    start_unix: f64,
    end_unix: f64,
    expected_num_gpus: Option<i64>,
    options: &PowerOptions,
) -> PowerIntegration {
    let mut reasons = Reasons::default();
    if !start_unix.is_finite() || !end_unix.is_finite() || end_unix <= start_unix {
        reasons.push(PowerReason::InvalidBenchmarkWindow);
        return PowerIntegration::failed(expected_num_gpus, reasons);
    }
    if expected_num_gpus.is_some_and(|n| n <= 0) {
        reasons.push(PowerReason::InvalidExpectedGpuCount);
    }
    let gap_limit = options.max_sample_gap_s;
    if !gap_limit.is_finite() || gap_limit <= 0.0 {
        return PowerIntegration::failed(expected_num_gpus, Reasons(vec![PowerReason::InvalidMaxSampleGap]));
    }
    let bytes = match telemetry {
        Telemetry::Missing => {
            reasons.push(PowerReason::TelemetryFileMissing);
            return PowerIntegration::failed(expected_num_gpus, reasons);
        }
        Telemetry::Bytes([]) => {
            reasons.push(PowerReason::TelemetryFileEmpty);
            return PowerIntegration::failed(expected_num_gpus, reasons);
        }
        Telemetry::Unreadable => &[][..],
        Telemetry::Bytes(b) => b,
    };
    let table = match (telemetry, bytes.len() > MAX_TELEMETRY_BYTES) {
        (Telemetry::Unreadable, _) | (_, true) => Err(CsvError::TooLarge),
        _ => parse_csv(&String::from_utf8_lossy(bytes)),
    };
    let Ok(table) = table else {
        reasons.push(PowerReason::TelemetryFileUnreadable);
        return PowerIntegration::failed(expected_num_gpus, reasons);
    };
    let header: Vec<String> = table.header.iter().map(|h| h.trim().to_string()).collect();
    let columns = detect_columns(&header);
    let (Some(ts_col), Some(power_col), Some(gpu_col)) = (columns.timestamp, columns.power, columns.gpu) else {
        for (col, reason) in [
            (columns.timestamp, PowerReason::TimestampColumnMissing),
            (columns.power, PowerReason::PowerColumnMissing),
            (columns.gpu, PowerReason::GpuIdentityColumnMissing),
        ] {
            if col.is_none() {
                reasons.push(reason);
            }
        }
        return PowerIntegration::failed(expected_num_gpus, reasons);
    };

    // gpu id -> (timestamp, power) readings in file order.
    let mut raw: IndexMap<String, Vec<(f64, f64)>> = IndexMap::new();
    let mut missing_identity = false;
    for row in &table.rows {
        let cell = |i: usize| row.get(i).map_or("", String::as_str).trim();
        let Some(t) = parse_timestamp(cell(ts_col), options.utc_offset).filter(|t| t.is_finite()) else {
            reasons.push(PowerReason::InvalidTimestampSample);
            continue;
        };
        if t < start_unix - gap_limit || t > end_unix + gap_limit {
            continue;
        }
        let power = parse_power(cell(power_col));
        let gpu = cell(gpu_col);
        match power {
            Some(p) if p.is_finite() && p >= 0.0 => {
                if gpu.is_empty() {
                    missing_identity = true;
                } else {
                    raw.entry(gpu.to_string()).or_default().push((t, p));
                }
            }
            _ => reasons.push(PowerReason::InvalidPowerSample),
        }
    }
    if missing_identity {
        reasons.push(PowerReason::GpuIdentityMissing);
    }
    if raw.is_empty() {
        reasons.push(PowerReason::NoUsablePowerSamples);
        return PowerIntegration::failed(expected_num_gpus, reasons);
    }

    let mut ids: Vec<String> = raw.keys().cloned().collect();
    ids.sort_by_key(|id| gpu_sort_key(id));
    if expected_num_gpus.is_some_and(|n| n > 0 && usize::try_from(n).ok() != Some(ids.len())) {
        reasons.push(PowerReason::ExpectedGpuCountMismatch);
    }

    let mut out = PowerIntegration { expected_num_gpus, ..PowerIntegration::default() };
    for id in &ids {
        let samples = average_duplicate_timestamps(raw.get(id).map_or(&[][..], Vec::as_slice));
        out.devices.per_gpu_sample_counts.insert(id.clone(), samples.len());
        let issue = match device_energy(&samples, start_unix, end_unix) {
            Err(issue) => Some(issue),
            Ok((max_gap, energy)) => {
                out.devices.per_gpu_max_sample_gap_s.insert(id.clone(), max_gap);
                out.devices.per_gpu_energy_j.insert(id.clone(), energy);
                (max_gap > gap_limit).then_some(PowerReason::SamplingGapExceeded)
            }
        };
        if let Some(issue) = issue {
            reasons.push(issue);
            out.devices.device_issues.insert(id.clone(), vec![issue]);
        }
    }
    if out.devices.per_gpu_energy_j.len() == ids.len() {
        let total: f64 = out.devices.per_gpu_energy_j.values().sum();
        let avg_total = total / (end_unix - start_unix);
        out.total_gpu_energy_j = Some(total);
        out.avg_total_gpu_power_w = Some(avg_total);
        out.avg_power_w = Some(avg_total / ids.len() as f64);
    }
    out.observed_gpu_ids = ids;
    out.reasons = reasons;
    out
}

/// Numeric ids first (by value), then the rest by text.
fn gpu_sort_key(id: &str) -> (u8, u128, String) {
    match id.parse::<u128>() {
        Ok(n) if id.bytes().all(|b| b.is_ascii_digit()) => (0, n, String::new()),
        _ => (1, 0, id.to_string()),
    }
}

/// Sort by time; readings sharing a timestamp are averaged.
fn average_duplicate_timestamps(readings: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut sorted = readings.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(sorted.len());
    let mut i = 0;
    while i < sorted.len() {
        let t = sorted[i].0;
        let group: Vec<f64> = sorted[i..].iter().take_while(|r| r.0 == t).map(|r| r.1).collect();
        i += group.len();
        out.push((t, group.iter().sum::<f64>() / group.len() as f64));
    }
    out
}

/// (max gap over the bracketing slice, trapezoidal energy) or the device's issue.
fn device_energy(samples: &[(f64, f64)], start: f64, end: f64) -> Result<(f64, f64), PowerReason> {
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
        return Err(PowerReason::InsufficientPowerSamples);
    };
    if samples.len() < 2 {
        return Err(PowerReason::InsufficientPowerSamples);
    }
    if first.0 > start || last.0 < end {
        return Err(PowerReason::BenchmarkWindowNotBracketed);
    }
    let left = samples.partition_point(|s| s.0 <= start).saturating_sub(1);
    let right = samples.partition_point(|s| s.0 < end).min(samples.len() - 1);
    let max_gap = samples[left..=right].windows(2).map(|w| w[1].0 - w[0].0).fold(0.0, f64::max);
    let energy = trapezoid(samples, start, end).ok_or(PowerReason::BenchmarkWindowNotBracketed)?;
    Ok((max_gap, energy))
}

/// Trapezoidal energy over [start, end] of time-sorted samples, with linear interpolation at
/// both boundaries (a sample within 1e-9 s of a boundary is taken as is); `None` when a
/// boundary is not bracketed.
pub(super) fn trapezoid(samples: &[(f64, f64)], start: f64, end: f64) -> Option<f64> {
    let at = |t: f64| -> Option<f64> {
        let right = samples.partition_point(|s| s.0 < t);
        if let Some(s) = samples.get(right).filter(|s| (s.0 - t).abs() <= 1e-9) {
            return Some(s.1);
        }
        let (l, r) = (samples.get(right.checked_sub(1)?)?, samples.get(right)?);
        Some(l.1 + (t - l.0) / (r.0 - l.0) * (r.1 - l.1))
    };
    let mut clipped = vec![(start, at(start)?)];
    clipped.extend(samples.iter().copied().filter(|s| start < s.0 && s.0 < end));
    clipped.push((end, at(end)?));
    Some(clipped.windows(2).map(|w| (w[1].0 - w[0].0) * (w[0].1 + w[1].1) / 2.0).sum())
}

/// The whole-deployment metrics of a valid measurement, unrounded, in upstream's key order.
pub fn derived_metrics(integration: &PowerIntegration, window: &BenchmarkWindow) -> IndexMap<&'static str, f64> {
    let mut m = IndexMap::new();
    let (Some(avg), Some(avg_total), Some(energy)) =
        (integration.avg_power_w, integration.avg_total_gpu_power_w, integration.total_gpu_energy_j)
    else {
        return m;
    };
    m.insert("avg_power_w", avg);
    m.insert("avg_total_gpu_power_w", avg_total);
    m.insert("total_gpu_energy_j", energy);
    m.insert("joules_per_successful_query", energy / window.completed as f64);
    m.insert("joules_per_input_token", energy / window.total_input_tokens as f64);
    m.insert("joules_per_output_token", energy / window.total_output_tokens as f64);
    m.insert("joules_per_total_token", energy / (window.total_input_tokens + window.total_output_tokens) as f64);
    m
}

/// The sidecar `power_validation_<RF>.json` (schema 1), field order as upstream writes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PowerValidation {
    pub schema_version: u32,
    pub power_valid: bool,
    pub reasons: Reasons,
    pub telemetry_source: String,
    pub benchmark_result: String,
    pub benchmark_window: Option<BenchmarkWindow>,
    pub integration_method: &'static str,
    pub expected_gpu_count: Option<i64>,
    pub observed_gpu_count: usize,
    pub observed_gpu_ids: Vec<String>,
    #[serde(flatten)]
    pub devices: DeviceAudit,
    /// Advisory AMD accumulator cross-check ([`cross_check_accumulator`]); null when the
    /// monitor wrote no energy snapshots. Never affects validity.
    pub accumulator_check: Option<AccumulatorCheck>,
    /// Rounded to 6 dp; empty unless valid.
    pub metrics: IndexMap<&'static str, f64>,
}

impl PowerValidation {
    /// Largest per-GPU gap, the figure reports quote ("maximum sample gap 1.161 s").
    pub fn max_sample_gap_s(&self) -> Option<f64> {
        self.devices.per_gpu_max_sample_gap_s.values().copied().reduce(f64::max)
    }

    /// The keys `process_result.py` patches into the aggregate: `power_metric_schema_version`,
    /// numeric `power_valid`, and when valid the metrics rounded to 3 dp (`_w`, `_j`) or 6 dp.
    pub fn aggregate_fields(&self, unrounded: &IndexMap<&'static str, f64>) -> IndexMap<&'static str, Value> {
        let mut out = IndexMap::new();
        out.insert("power_metric_schema_version", Value::from(2));
        out.insert("power_valid", Value::from(i32::from(self.power_valid)));
        if self.power_valid {
            for (&key, &value) in unrounded {
                let digits = if key.ends_with("_w") || key.ends_with("_j") { 3 } else { 6 };
                out.insert(key, Value::from(round_to(value, digits)));
            }
        }
        out
    }
}

/// Names of the inputs, for the sidecar's provenance fields.
#[derive(Debug, Clone, Copy)]
pub struct SourceNames<'a> {
    pub telemetry: &'a str,
    pub benchmark_result: &'a str,
}

/// Everything the single-node path checks (§4.3 steps 1–7): benchmark contract, then telemetry.
/// Returns the sidecar and the unrounded metrics (empty unless valid).
pub fn validate_single_node(
    benchmark_raw: &[u8],
    telemetry: Telemetry<'_>,
    expected_num_gpus: i64,
    options: &PowerOptions,
    names: SourceNames<'_>,
) -> (PowerValidation, IndexMap<&'static str, f64>) {
    let (window, mut reasons) = load_benchmark_window(benchmark_raw);
    let integration = match &window {
        Some(w) => integrate_power(telemetry, w.start_unix, w.end_unix, Some(expected_num_gpus), options),
        None => PowerIntegration::failed(Some(expected_num_gpus), reasons.clone()),
    };
    for &r in integration.reasons.as_slice() {
        reasons.push(r);
    }
    let power_valid = reasons.is_empty();
    let metrics = match (&window, power_valid) {
        (Some(w), true) => derived_metrics(&integration, w),
        _ => IndexMap::new(),
    };
    let validation = PowerValidation {
        schema_version: 1,
        power_valid,
        reasons,
        telemetry_source: names.telemetry.to_string(),
        benchmark_result: names.benchmark_result.to_string(),
        benchmark_window: window,
        integration_method: INTEGRATION_METHOD,
        expected_gpu_count: integration.expected_num_gpus,
        observed_gpu_count: integration.observed_gpu_ids.len(),
        observed_gpu_ids: integration.observed_gpu_ids,
        devices: integration.devices,
        accumulator_check: None,
        metrics: metrics.iter().filter(|(_, v)| v.is_finite()).map(|(&k, &v)| (k, round_to(v, 6))).collect(),
    };
    (validation, metrics)
}

/// Relative tolerance of the advisory accumulator check.
pub const ACCUMULATOR_TOLERANCE: f64 = 0.05;

/// The AMD accumulator cross-check: hardware energy counters (`amd-smi metric -E` snapshots at
/// monitor start and stop) against the trapezoid over the whole telemetry stream.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum AccumulatorCheck {
    Unavailable {
        available: bool,
        reason: &'static str,
    },
    Available {
        available: bool,
        accumulator_delta_j: f64,
        integrated_stream_j: f64,
        relative_error: Option<f64>,
        within_tolerance: bool,
        tolerance: f64,
        per_gpu_delta_j: IndexMap<String, f64>,
        integrated_gpu_ids: Vec<String>,
        unmatched_gpus: Vec<String>,
        negative_delta_gpus: Vec<String>,
        stream_span_s: f64,
    },
}

/// GPU id → joules from one snapshot (`gpu`, `total_energy_consumption` columns).
fn energy_snapshot(bytes: &[u8]) -> Option<IndexMap<String, f64>> {
    let table = parse_csv(&String::from_utf8_lossy(bytes)).ok()?;
    let header: Vec<String> = table.header.iter().map(|h| h.trim().to_string()).collect();
    let gpu = header.iter().rposition(|h| h == "gpu")?;
    let energy = header.iter().rposition(|h| h == "total_energy_consumption")?;
    let mut out = IndexMap::new();
    for row in &table.rows {
        let id = row.get(gpu).map_or("", |c| c.trim());
        let joules = row.get(energy).and_then(|c| c.trim().parse::<f64>().ok()).filter(|j| j.is_finite());
        if let (false, Some(j)) = (id.is_empty(), joules) {
            out.insert(id.to_string(), j);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Every parseable (time, watts) sample per GPU, sorted; `None` when the CSV is unreadable.
fn stream_samples(csv: &[u8], utc_offset: FixedOffset) -> Option<IndexMap<String, Vec<(f64, f64)>>> {
    let table = parse_csv(&String::from_utf8_lossy(csv)).ok()?;
    let header: Vec<String> = table.header.iter().map(|h| h.trim().to_string()).collect();
    let mut out: IndexMap<String, Vec<(f64, f64)>> = IndexMap::new();
    let cols = detect_columns(&header);
    let (Some(ts), Some(pw), Some(gpu)) = (cols.timestamp, cols.power, cols.gpu) else {
        return Some(out);
    };
    for row in &table.rows {
        let cell = |i: usize| row.get(i).map_or("", |c| c.trim());
        let sample = (parse_timestamp(cell(ts), utc_offset), parse_power(cell(pw)));
        if let (Some(t), Some(p), false) = (sample.0, sample.1, cell(gpu).is_empty()) {
            if t.is_finite() && p.is_finite() {
                out.entry(cell(gpu).to_string()).or_default().push((t, p));
            }
        }
    }
    for samples in out.values_mut() {
        samples.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    }
    Some(out)
}

/// Compare the accumulator delta with the whole-stream integral (advisory, §4.3). `None` when
/// neither snapshot exists.
pub fn cross_check_accumulator(
    telemetry: &[u8],
    start: Option<&[u8]>,
    end: Option<&[u8]>,
    options: &PowerOptions,
) -> Option<AccumulatorCheck> {
    let unavailable = |reason| Some(AccumulatorCheck::Unavailable { available: false, reason });
    let (start, end) = match (start, end) {
        (None, None) => return None,
        (None, _) => return unavailable("missing_start_snapshot"),
        (_, None) => return unavailable("missing_end_snapshot"),
        (Some(s), Some(e)) => (s, e),
    };
    let Some(start) = energy_snapshot(start) else { return unavailable("unparseable_start_snapshot") };
    let Some(end) = energy_snapshot(end) else { return unavailable("unparseable_end_snapshot") };
    let sorted = |mut ids: Vec<String>| {
        ids.sort_by_key(|id| gpu_sort_key(id));
        ids
    };
    let matched = sorted(start.keys().filter(|k| end.contains_key(*k)).cloned().collect());
    let per_gpu_delta_j: IndexMap<String, f64> = matched
        .iter()
        .map(|id| (id.clone(), end.get(id).copied().unwrap_or(0.0) - start.get(id).copied().unwrap_or(0.0)))
        .collect();
    let unmatched_gpus = sorted(
        start.keys().chain(end.keys()).filter(|k| !(start.contains_key(*k) && end.contains_key(*k))).cloned().collect(),
    );
    let negative_delta_gpus: Vec<String> =
        per_gpu_delta_j.iter().filter(|(_, d)| **d < 0.0).map(|(k, _)| k.clone()).collect();
    let Some(stream) = stream_samples(telemetry, options.utc_offset) else { return unavailable("cross_check_error") };
    let integrated_gpu_ids = sorted(stream.keys().filter(|k| per_gpu_delta_j.contains_key(*k)).cloned().collect());
    let series: Vec<&Vec<(f64, f64)>> = integrated_gpu_ids.iter().filter_map(|id| stream.get(id)).collect();
    let integrated_stream_j: f64 =
        series.iter().map(|s| s.windows(2).map(|w| (w[1].0 - w[0].0) * (w[0].1 + w[1].1) / 2.0).sum::<f64>()).sum();
    let bounds: Vec<f64> = series.iter().flat_map(|s| [s.first(), s.last()]).flatten().map(|p| p.0).collect();
    let stream_span_s = match (bounds.iter().copied().reduce(f64::min), bounds.iter().copied().reduce(f64::max)) {
        (Some(lo), Some(hi)) => hi - lo,
        _ => 0.0,
    };
    let accumulator_delta_j: f64 = per_gpu_delta_j.values().sum();
    let relative_error =
        (accumulator_delta_j > 0.0).then(|| (accumulator_delta_j - integrated_stream_j).abs() / accumulator_delta_j);
    let within_tolerance = negative_delta_gpus.is_empty() && relative_error.is_some_and(|e| e <= ACCUMULATOR_TOLERANCE);
    Some(AccumulatorCheck::Available {
        available: true,
        accumulator_delta_j,
        integrated_stream_j,
        relative_error,
        within_tolerance,
        tolerance: ACCUMULATOR_TOLERANCE,
        per_gpu_delta_j,
        integrated_gpu_ids,
        unmatched_gpus,
        negative_delta_gpus,
        stream_span_s,
    })
}

#[cfg(test)]
mod tests;
