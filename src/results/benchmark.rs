//! Benchmark result artifacts (spec 40 §2): the raw `benchmark_serving.py` result, the
//! fixed-sequence aggregate `agg_<RF>.json`, the AgentX aggregate and AIPerf's profile summary.
//! Typed parsers with size bounds, and validations that return typed findings.

use std::fmt;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::pareto::{hw_key, CurveKey, Plane, Point};
use super::{parse_json, ArtifactError};

/// Largest result JSON read (a c1024 raw result with per-request arrays is ~1 MB).
pub const MAX_RESULT_JSON_BYTES: usize = 64 * 1024 * 1024;
/// The client fails when more than this fraction of requests failed.
pub const MAX_REQUEST_FAILURE_FRACTION: f64 = 0.05;
/// AIPerf's failed-request gate (inclusive).
pub const AIPERF_FAILED_REQUEST_THRESHOLD: f64 = 0.10;
/// Relative tolerance for re-derived ratios (they are computed from the same floats upstream).
const RATIO_TOLERANCE: f64 = 1e-9;

/// The raw client result `<RF>.json` (§2.1): the fields sweepgate reads, typed; latency
/// statistics (`median_e2el_ms`, …) stay in `stats`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct RawResult {
    pub model_id: String,
    /// Requested requests.
    pub num_prompts: i64,
    pub max_concurrency: i64,
    pub duration: f64,
    pub benchmark_start_time_unix: Option<f64>,
    pub benchmark_end_time_unix: Option<f64>,
    /// Successful requests.
    pub completed: i64,
    pub total_input_tokens: i64,
    pub total_output_tokens: i64,
    pub request_throughput: f64,
    pub output_throughput: f64,
    pub total_token_throughput: f64,
    #[serde(default)]
    pub input_lens: Vec<i64>,
    #[serde(default)]
    pub output_lens: Vec<i64>,
    #[serde(flatten)]
    pub stats: IndexMap<String, Value>,
}

impl RawResult {
    pub fn parse(bytes: &[u8], file: &str) -> Result<RawResult, ArtifactError> {
        parse_json(bytes, file, MAX_RESULT_JSON_BYTES)
    }

    pub fn stat(&self, key: &str) -> Option<f64> {
        self.stats.get(key).and_then(Value::as_f64)
    }
}

/// A problem found in a result; `fatal` ones make the point unusable as evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ResultFinding {
    NoSuccessfulRequests,
    CompletedExceedsRequested {
        completed: i64,
        requested: i64,
    },
    RequestFailureRate {
        completed: i64,
        requested: i64,
        failed_fraction: f64,
    },
    NonPositiveDuration {
        duration: f64,
    },
    TokenTotalNotPositive {
        field: &'static str,
        value: i64,
    },
    TokenTotalMismatch {
        field: &'static str,
        reported: i64,
        per_request_sum: i64,
    },
    PerRequestArrayLength {
        field: &'static str,
        len: usize,
        requested: i64,
    },
    ThroughputMismatch {
        field: &'static str,
        reported: f64,
        derived: f64,
    },
    WindowMissing,
    WindowDurationMismatch {
        duration: f64,
        window: f64,
    },
    /// Fixed-sequence scripts send 10 × conc prompts.
    UnusualPromptCount {
        num_prompts: i64,
        conc: i64,
    },
    AggregateMismatch {
        field: String,
        aggregate: Value,
        expected: Value,
    },
    FieldMissing {
        field: String,
    },
    ErrorRateAboveGate {
        errors: f64,
        completed: f64,
        rate: f64,
    },
}

impl ResultFinding {
    /// Findings that make the measurement unusable (the rest are warnings).
    pub fn is_fatal(&self) -> bool {
        !matches!(self, ResultFinding::UnusualPromptCount { .. } | ResultFinding::WindowMissing)
    }
}

impl fmt::Display for ResultFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ResultFinding as F;
        match self {
            F::NoSuccessfulRequests => write!(f, "no successful requests (completed = 0)"),
            F::CompletedExceedsRequested { completed, requested } => {
                write!(f, "completed {completed} exceeds the {requested} requested prompts")
            }
            F::RequestFailureRate { completed, requested, failed_fraction } => write!(
                f,
                "{completed}/{requested} requests succeeded: {:.1}% failed, above the client's 5% limit",
                failed_fraction * 100.0
            ),
            F::NonPositiveDuration { duration } => write!(f, "duration {duration} s is not positive"),
            F::TokenTotalNotPositive { field, value } => write!(f, "{field} = {value} is not positive"),
            F::TokenTotalMismatch { field, reported, per_request_sum } => {
                write!(f, "{field} = {reported} but the per-request lengths sum to {per_request_sum}")
            }
            F::PerRequestArrayLength { field, len, requested } => {
                write!(f, "{field} has {len} entries for {requested} requested prompts")
            }
            F::ThroughputMismatch { field, reported, derived } => {
                write!(f, "{field} = {reported} but the totals and duration give {derived}")
            }
            F::WindowMissing => write!(f, "no benchmark_start/end_time_unix: the result cannot carry power"),
            F::WindowDurationMismatch { duration, window } => {
                write!(
                    f,
                    "duration {duration} s differs from the wall-clock window {window} s by more than max(0.5 s, 1%)"
                )
            }
            F::UnusualPromptCount { num_prompts, conc } => {
                write!(f, "num_prompts {num_prompts} is not 10 x conc {conc}")
            }
            F::AggregateMismatch { field, aggregate, expected } => {
                write!(f, "aggregate {field} = {aggregate} but the raw result gives {expected}")
            }
            F::FieldMissing { field } => write!(f, "{field} is missing or not a number"),
            F::ErrorRateAboveGate { errors, completed, rate } => write!(
                f,
                "{errors} errors over {completed} completed requests = {:.1}%, above the 10% AIPerf gate",
                rate * 100.0
            ),
        }
    }
}

fn relative_mismatch(reported: f64, derived: f64) -> bool {
    !(reported - derived).abs().le(&(RATIO_TOLERANCE * derived.abs().max(f64::MIN_POSITIVE)))
}

/// Internal consistency of a raw fixed-sequence result (§2.1).
pub fn validate_raw(raw: &RawResult) -> Vec<ResultFinding> {
    use ResultFinding as F;
    let mut out = Vec::new();
    if raw.completed <= 0 {
        out.push(F::NoSuccessfulRequests);
    } else if raw.completed > raw.num_prompts {
        out.push(F::CompletedExceedsRequested { completed: raw.completed, requested: raw.num_prompts });
    } else {
        let failed = 1.0 - raw.completed as f64 / raw.num_prompts as f64;
        if failed > MAX_REQUEST_FAILURE_FRACTION {
            out.push(F::RequestFailureRate {
                completed: raw.completed,
                requested: raw.num_prompts,
                failed_fraction: failed,
            });
        }
    }
    if raw.num_prompts != 10 * raw.max_concurrency {
        out.push(F::UnusualPromptCount { num_prompts: raw.num_prompts, conc: raw.max_concurrency });
    }
    for (field, value) in
        [("total_input_tokens", raw.total_input_tokens), ("total_output_tokens", raw.total_output_tokens)]
    {
        if value <= 0 {
            out.push(F::TokenTotalNotPositive { field, value });
        }
    }
    for (field, list) in [("input_lens", &raw.input_lens), ("output_lens", &raw.output_lens)] {
        if i64::try_from(list.len()).ok() != Some(raw.num_prompts) {
            out.push(F::PerRequestArrayLength { field, len: list.len(), requested: raw.num_prompts });
        }
    }
    // Σin counts successful requests only; output_lens is 0 for failed ones.
    let out_sum: i64 = raw.output_lens.iter().sum();
    if !raw.output_lens.is_empty() && out_sum != raw.total_output_tokens {
        out.push(F::TokenTotalMismatch {
            field: "total_output_tokens",
            reported: raw.total_output_tokens,
            per_request_sum: out_sum,
        });
    }
    let in_sum: i64 = raw.input_lens.iter().sum();
    let all_succeeded = raw.completed == raw.num_prompts;
    if !raw.input_lens.is_empty()
        && (raw.total_input_tokens > in_sum || (all_succeeded && raw.total_input_tokens != in_sum))
    {
        out.push(F::TokenTotalMismatch {
            field: "total_input_tokens",
            reported: raw.total_input_tokens,
            per_request_sum: in_sum,
        });
    }
    if !(raw.duration > 0.0 && raw.duration.is_finite()) {
        out.push(F::NonPositiveDuration { duration: raw.duration });
        return out;
    }
    let derived = [
        ("request_throughput", raw.request_throughput, raw.completed as f64 / raw.duration),
        ("output_throughput", raw.output_throughput, raw.total_output_tokens as f64 / raw.duration),
        (
            "total_token_throughput",
            raw.total_token_throughput,
            (raw.total_input_tokens + raw.total_output_tokens) as f64 / raw.duration,
        ),
    ];
    for (field, reported, derived) in derived {
        if relative_mismatch(reported, derived) {
            out.push(F::ThroughputMismatch { field, reported, derived });
        }
    }
    match (raw.benchmark_start_time_unix, raw.benchmark_end_time_unix) {
        (Some(start), Some(end)) => {
            let window = end - start;
            if (raw.duration - window).abs() > f64::max(0.5, window * 0.01) {
                out.push(F::WindowDurationMismatch { duration: raw.duration, window });
            }
        }
        _ => out.push(F::WindowMissing),
    }
    out
}

/// The fixed-sequence aggregate `agg_<RF>.json` (§2.2): identity, topology and the per-GPU
/// figures typed; latency keys (seconds) and power keys in `metrics`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct FixedSeqAggregate {
    pub hw: String,
    pub conc: i64,
    pub image: String,
    pub model: String,
    pub infmax_model_prefix: String,
    pub framework: String,
    pub precision: String,
    pub spec_decoding: String,
    pub disagg: bool,
    pub recipe_fingerprint: String,
    pub isl: i64,
    pub osl: i64,
    pub is_multinode: bool,
    pub tput_per_gpu: f64,
    pub output_tput_per_gpu: f64,
    pub input_tput_per_gpu: f64,
    #[serde(flatten)]
    pub metrics: IndexMap<String, Value>,
}

impl FixedSeqAggregate {
    pub fn parse(bytes: &[u8], file: &str) -> Result<FixedSeqAggregate, ArtifactError> {
        parse_json(bytes, file, MAX_RESULT_JSON_BYTES)
    }

    pub fn number(&self, key: &str) -> Option<f64> {
        self.metrics.get(key).and_then(Value::as_f64)
    }

    /// Serving GPUs: tp·pp·pcp_size single-node (DCP adds none), prefill + decode multi-node.
    pub fn gpu_count(&self) -> Option<(f64, f64)> {
        let int = |k: &str| self.metrics.get(k).and_then(Value::as_i64);
        if self.is_multinode {
            Some((int("num_prefill_gpu")? as f64, int("num_decode_gpu")? as f64))
        } else {
            let n = int("tp")? * int("pp").unwrap_or(1) * int("pcp_size").unwrap_or(1);
            Some((0.0, n as f64))
        }
    }

    /// The app series this point belongs to in run `run` (median statistics).
    pub fn curve_key(&self, run: &str, known_disagg_keys: &dyn Fn(&str) -> bool) -> CurveKey {
        CurveKey {
            model: self.infmax_model_prefix.clone(),
            scenario: sequence_scenario(self.isl, self.osl),
            hw_key: hw_key(&self.hw, &self.framework, self.disagg, &self.spec_decoding, false, known_disagg_keys),
            precision: self.precision.clone(),
            run: run.to_string(),
            percentile: "median".into(),
        }
    }

    /// This point in a fixed-sequence plane; missing values become NaN (invalid evidence).
    pub fn point(&self, plane: Plane) -> Point {
        let x = match plane {
            Plane::FixedSeqE2el => self.number("median_e2el"),
            _ => self.number("median_intvty"),
        };
        Point::new(x.unwrap_or(f64::NAN), self.tput_per_gpu)
    }
}

/// `1k1k`, `8k1k` (multiples of 1024), otherwise `<isl>_<osl>` as in `EXP_NAME`.
pub fn sequence_scenario(isl: i64, osl: i64) -> String {
    if isl > 0 && osl > 0 && isl % 1024 == 0 && osl % 1024 == 0 {
        format!("{}k{}k", isl / 1024, osl / 1024)
    } else {
        format!("{isl}_{osl}")
    }
}

/// Re-derive what `process_result.py` computes from the raw result and compare (§2.2).
pub fn validate_aggregate(agg: &FixedSeqAggregate, raw: &RawResult) -> Vec<ResultFinding> {
    let mut out = Vec::new();
    compare(&mut out, "conc", agg.conc.into(), raw.max_concurrency.into());
    compare(&mut out, "model", agg.model.clone().into(), raw.model_id.clone().into());
    let fp = &agg.recipe_fingerprint;
    if !(fp.is_empty() || (fp.len() == 64 && fp.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()))) {
        compare(&mut out, "recipe_fingerprint", fp.clone().into(), "64 lower-case hex digits or \"\"".into());
    }
    let Some((prefill, decode)) = agg.gpu_count() else {
        out.push(ResultFinding::FieldMissing { field: "tp / num_prefill_gpu / num_decode_gpu".into() });
        return out;
    };
    let (total, output) = (raw.total_token_throughput, raw.output_throughput);
    let all = prefill + decode;
    compare(&mut out, "tput_per_gpu", agg.tput_per_gpu.into(), (total / all).into());
    let output_div = if agg.is_multinode && decode > 0.0 { decode } else { all };
    compare(&mut out, "output_tput_per_gpu", agg.output_tput_per_gpu.into(), (output / output_div).into());
    let input_div = if agg.is_multinode { prefill } else { all };
    compare(&mut out, "input_tput_per_gpu", agg.input_tput_per_gpu.into(), ((total - output) / input_div).into());
    for (key, value) in &raw.stats {
        let (Some(stem), Some(ms)) = (key.strip_suffix("_ms"), value.as_f64()) else {
            continue;
        };
        match agg.number(stem) {
            Some(seconds) => compare(&mut out, stem, seconds.into(), (ms / 1000.0).into()),
            None => out.push(ResultFinding::FieldMissing { field: stem.to_string() }),
        }
        if stem.contains("tpot") && !stem.starts_with("std") && ms != 0.0 {
            let intvty = stem.replace("tpot", "intvty");
            match agg.number(&intvty) {
                Some(v) => compare(&mut out, &intvty, v.into(), (1000.0 / ms).into()),
                None => out.push(ResultFinding::FieldMissing { field: intvty }),
            }
        }
    }
    out
}

fn compare(out: &mut Vec<ResultFinding>, field: &str, aggregate: Value, expected: Value) {
    let differs = match (aggregate.as_f64(), expected.as_f64()) {
        (Some(a), Some(e)) if !(aggregate.is_i64() && expected.is_i64()) => relative_mismatch(a, e),
        _ => aggregate != expected,
    };
    if differs {
        out.push(ResultFinding::AggregateMismatch { field: field.to_string(), aggregate, expected });
    }
}

/// The AgentX aggregate (§2.3), as a JSON tree with typed accessors for what sweepgate reads.
#[derive(Debug, Clone, PartialEq)]
pub struct AgenticAggregate {
    pub raw: Value,
}

impl AgenticAggregate {
    pub fn parse(bytes: &[u8], file: &str) -> Result<AgenticAggregate, ArtifactError> {
        let raw: Value = parse_json(bytes, file, MAX_RESULT_JSON_BYTES)?;
        if !raw.is_object() {
            return Err(ArtifactError::Json { file: file.to_string(), message: "top level is not an object".into() });
        }
        Ok(AgenticAggregate { raw })
    }

    fn path(&self, path: &[&str]) -> Option<f64> {
        path.iter().try_fold(&self.raw, |v, k| v.get(k))?.as_f64()
    }

    /// `request_metrics.throughput.per_gpu.total_tput_tps`, the app's `tput_per_gpu`.
    pub fn tput_per_gpu(&self) -> Option<f64> {
        self.path(&["request_metrics", "throughput", "per_gpu", "total_tput_tps"])
    }

    /// A latency percentile in seconds, e.g. `("e2el", "p90")`.
    pub fn latency(&self, metric: &str, percentile: &str) -> Option<f64> {
        self.path(&["request_metrics", "latency", metric, percentile])
    }

    /// Conventional interactivity `1/pXX_itl`, from the full-response ITL when present (as
    /// the app re-derives it).
    pub fn interactivity(&self, percentile: &str) -> Option<f64> {
        let itl = self.latency("full_response_itl", percentile).or_else(|| self.latency("itl", percentile))?;
        Some(1.0 / itl)
    }

    /// The app series of this point: no spec suffix, topologies and offload modes pooled.
    pub fn curve_key(&self, run: &str, percentile: &str, known_disagg_keys: &dyn Fn(&str) -> bool) -> CurveKey {
        let text = |k: &str| self.raw.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        let disagg = self.raw.get("disagg").and_then(Value::as_bool).unwrap_or(false);
        CurveKey {
            model: text("infmax_model_prefix"),
            scenario: self.raw.get("scenario_type").and_then(Value::as_str).unwrap_or("agentic-coding").to_string(),
            hw_key: hw_key(&text("hw"), &text("framework"), disagg, "", true, known_disagg_keys),
            precision: text("precision"),
            run: run.to_string(),
            percentile: percentile.to_string(),
        }
    }

    /// This point in an AgentX plane at `percentile` (`p90`, `p75`); NaN when missing.
    pub fn point(&self, plane: Plane, percentile: &str) -> Point {
        let x = match plane {
            Plane::AgenticCanonical => self.latency("e2e_norm_intvty", percentile),
            Plane::AgenticInteractivity | Plane::FixedSeqInteractivity => self.interactivity(percentile),
            Plane::AgenticE2el | Plane::FixedSeqE2el => self.latency("e2el", percentile),
        };
        Point::new(x.unwrap_or(f64::NAN), self.tput_per_gpu().unwrap_or(f64::NAN))
    }
}

/// AgentX checks: successful requests, request accounting, per-GPU throughput present.
pub fn validate_agentic(agg: &AgenticAggregate) -> Vec<ResultFinding> {
    let mut out = Vec::new();
    let int = |path: &[&str]| path.iter().try_fold(&agg.raw, |v, k| v.get(k)).and_then(Value::as_i64);
    match int(&["num_requests_successful"]) {
        Some(n) if n > 0 => {}
        Some(_) => out.push(ResultFinding::NoSuccessfulRequests),
        None => out.push(ResultFinding::FieldMissing { field: "num_requests_successful".into() }),
    }
    let acc = |k: &str| int(&["request_accounting", k]);
    if let (Some(total), Some(profiled), Some(dropped)) =
        (acc("records_total"), acc("records_profiled"), acc("records_dropped_total"))
    {
        if profiled + dropped != total {
            out.push(ResultFinding::AggregateMismatch {
                field: "request_accounting.records_total".into(),
                aggregate: total.into(),
                expected: (profiled + dropped).into(),
            });
        }
    }
    if !agg.tput_per_gpu().is_some_and(|t| t.is_finite() && t > 0.0) {
        out.push(ResultFinding::FieldMissing { field: "request_metrics.throughput.per_gpu.total_tput_tps".into() });
    }
    out
}

/// The pre-upload gate on `profile_export_aiperf.json` (§2.3).
pub fn validate_aiperf_profile(profile: &Value) -> Vec<ResultFinding> {
    let avg = |k: &str| profile.get(k).and_then(|v| v.get("avg")).and_then(Value::as_f64);
    let mut out = Vec::new();
    if !avg("request_count").is_some_and(|n| n >= 0.0) {
        out.push(ResultFinding::FieldMissing { field: "request_count.avg".into() });
        return out;
    }
    let errors = avg("error_request_count").unwrap_or(0.0);
    let completed = avg("completed_request_count").or_else(|| Some(avg("success_request_count")? + errors));
    match completed {
        Some(c) if c > 0.0 => {
            let rate = errors / c;
            if rate > AIPERF_FAILED_REQUEST_THRESHOLD {
                out.push(ResultFinding::ErrorRateAboveGate { errors, completed: c, rate });
            }
        }
        _ => out.push(ResultFinding::NoSuccessfulRequests),
    }
    out
}

#[cfg(test)]
mod tests;
