//! The AgentX power adapter (spec 40 §4.5): builds `agentic_power_window.json` from AIPerf's
//! profile summary and per-request records, so that the single-node validator
//! ([`super::power::validate_single_node`]) can run on it.

use chrono::FixedOffset;
use serde::Serialize;
use serde_json::Value;

use super::power::parse_timestamp;

/// Upstream's adapter reason codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AdapterReason {
    ProfileArtifactsMissing,
    ProfileArtifactsInvalid,
    ProfileWindowMissing,
    ProfileTimezoneOffsetMissing,
    ProfileTimezoneOffsetInvalid,
    ProfileWindowInvalid,
    SuccessfulRequestCountInvalid,
    IncompleteTokenAccounting,
}

/// `agentic_power_window.json`, key order as upstream writes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgenticPowerWindow {
    pub benchmark_start_time_unix: f64,
    pub benchmark_end_time_unix: f64,
    pub duration: f64,
    pub completed: i64,
    pub total_input_tokens: i64,
    pub total_output_tokens: i64,
}

/// `±HH:MM` or `±HHMM` (`agentic_power_timezone_offset.txt`), hours ≤ 23, minutes ≤ 59.
pub fn parse_offset_file(text: &str) -> Option<FixedOffset> {
    let t = text.trim();
    let sign = match t.as_bytes().first() {
        Some(b'+') => 1,
        Some(b'-') => -1,
        _ => return None,
    };
    let digits = t.get(1..)?;
    let digits = if digits.len() == 5 && digits.as_bytes().get(2) == Some(&b':') {
        digits.replacen(':', "", 1)
    } else {
        digits.to_string()
    };
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (h, m): (i32, i32) = (digits.get(..2)?.parse().ok()?, digits.get(2..)?.parse().ok()?);
    (h <= 23 && m <= 59).then(|| FixedOffset::east_opt(sign * (h * 3600 + m * 60))).flatten()
}

/// An ISO 8601 string (aware, or naive at `offset`) or epoch seconds.
fn profile_time(value: &Value, offset: Option<FixedOffset>) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64().filter(|f| f.is_finite()),
        Value::String(s) if !s.trim().is_empty() && !is_naive(s) => parse_timestamp(s, FixedOffset::east_opt(0)?),
        Value::String(s) if !s.trim().is_empty() => parse_timestamp(s, offset?),
        _ => None,
    }
}

/// An ISO timestamp without `Z` or a numeric offset after the time.
fn is_naive(s: &str) -> bool {
    let s = s.trim();
    let time = s.split_once(['T', ' ']).map_or("", |(_, t)| t);
    !(s.ends_with('Z') || s.ends_with('z') || time.contains('+') || time.contains('-'))
}

/// Successful profiling records: phase `profiling` (or none) and no truthy `error`.
fn successful_records(jsonl: &str) -> Option<Vec<Value>> {
    let mut out = Vec::new();
    for line in jsonl.lines().filter(|l| !l.trim().is_empty()) {
        let record: Value = serde_json::from_str(line).ok()?;
        let phase = record.get("metadata").and_then(|m| m.get("benchmark_phase")).and_then(Value::as_str);
        let failed = match record.get("error") {
            None | Some(Value::Null) | Some(Value::Bool(false)) => false,
            Some(Value::String(s)) => !s.is_empty(),
            Some(Value::Object(o)) => !o.is_empty(),
            Some(Value::Array(a)) => !a.is_empty(),
            Some(_) => true,
        };
        if phase.is_none_or(|p| p == "profiling") && !failed {
            out.push(record);
        }
    }
    Some(out)
}

fn record_int(record: &Value, metric: &str) -> Option<i64> {
    let m = record.get("metrics")?.get(metric)?;
    m.get("value").unwrap_or(m).as_i64()
}

/// Build the window from `profile_export_aiperf.json` (`start_time`, `end_time`) and
/// `profile_export.jsonl`; `offset_file` is the content of the timezone file when present.
pub fn build_power_window(
    aggregate: Option<&[u8]>,
    records: Option<&[u8]>,
    offset_file: Option<&str>,
) -> Result<AgenticPowerWindow, AdapterReason> {
    let (Some(aggregate), Some(records)) = (aggregate, records) else {
        return Err(AdapterReason::ProfileArtifactsMissing);
    };
    let aggregate: Value = serde_json::from_slice(aggregate).map_err(|_| AdapterReason::ProfileArtifactsInvalid)?;
    let records =
        std::str::from_utf8(records).ok().and_then(successful_records).ok_or(AdapterReason::ProfileArtifactsInvalid)?;
    let (Some(raw_start), Some(raw_end)) =
        (aggregate.get("start_time").filter(|v| !v.is_null()), aggregate.get("end_time").filter(|v| !v.is_null()))
    else {
        return Err(AdapterReason::ProfileWindowMissing);
    };
    let needs_offset = [raw_start, raw_end].iter().any(|v| v.as_str().is_some_and(is_naive));
    let offset = if needs_offset {
        let text = offset_file.ok_or(AdapterReason::ProfileTimezoneOffsetMissing)?;
        Some(parse_offset_file(text).ok_or(AdapterReason::ProfileTimezoneOffsetInvalid)?)
    } else {
        None
    };
    let (Some(start), Some(end)) = (profile_time(raw_start, offset), profile_time(raw_end, offset)) else {
        return Err(AdapterReason::ProfileWindowInvalid);
    };
    if end <= start {
        return Err(AdapterReason::ProfileWindowInvalid);
    }
    let completed = i64::try_from(records.len()).unwrap_or(0);
    if completed <= 0 {
        return Err(AdapterReason::SuccessfulRequestCountInvalid);
    }
    let tokens =
        |metric: &str| records.iter().map(|r| record_int(r, metric).filter(|v| *v >= 0)).collect::<Option<Vec<i64>>>();
    let (Some(input), Some(output)) = (tokens("input_sequence_length"), tokens("output_sequence_length")) else {
        return Err(AdapterReason::IncompleteTokenAccounting);
    };
    let (total_input_tokens, total_output_tokens) = (input.iter().sum::<i64>(), output.iter().sum::<i64>());
    if total_input_tokens <= 0 || total_output_tokens <= 0 {
        return Err(AdapterReason::IncompleteTokenAccounting);
    }
    Ok(AgenticPowerWindow {
        benchmark_start_time_unix: start,
        benchmark_end_time_unix: end,
        duration: end - start,
        completed,
        total_input_tokens,
        total_output_tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(phase: &str, error: Value, isl: i64, osl: i64) -> String {
        serde_json::json!({"metadata": {"benchmark_phase": phase}, "error": error,
            "metrics": {"input_sequence_length": {"value": isl, "unit": "tokens"}, "output_sequence_length": {"value": osl, "unit": "tokens"}}})
        .to_string()
    }

    fn jsonl() -> String {
        [
            record("warmup", Value::Null, 9, 9),
            record("profiling", Value::Null, 1000, 100),
            record("profiling", serde_json::json!({"type": "timeout"}), 5, 5),
            record("profiling", Value::Null, 2000, 200),
        ]
        .join("\n")
    }

    #[test]
    fn window_from_aware_and_naive_times() {
        let agg = br#"{"start_time": "2026-08-21T14:00:00Z", "end_time": "2026-08-21T14:15:00.5+00:00"}"#;
        let w = build_power_window(Some(agg), Some(jsonl().as_bytes()), None);
        assert_eq!(
            w,
            Ok(AgenticPowerWindow {
                benchmark_start_time_unix: 1_787_320_800.0,
                benchmark_end_time_unix: 1_787_321_700.5,
                duration: 900.5,
                completed: 2,
                total_input_tokens: 3000,
                total_output_tokens: 300,
            })
        );
        // Naive times need the captured offset: 16:00 at +02:00 is 14:00 UTC.
        let naive = br#"{"start_time": "2026-08-21T16:00:00", "end_time": 1787321700.5}"#;
        assert_eq!(
            build_power_window(Some(naive), Some(jsonl().as_bytes()), None),
            Err(AdapterReason::ProfileTimezoneOffsetMissing)
        );
        assert_eq!(
            build_power_window(Some(naive), Some(jsonl().as_bytes()), Some("+2:00")),
            Err(AdapterReason::ProfileTimezoneOffsetInvalid)
        );
        let w = build_power_window(Some(naive), Some(jsonl().as_bytes()), Some("+02:00\n"));
        assert_eq!(w.map(|w| w.benchmark_start_time_unix), Ok(1_787_320_800.0));
    }

    #[test]
    fn adapter_failures() {
        let agg = br#"{"start_time": 10.0, "end_time": 20.0}"#;
        let recs = jsonl();
        assert_eq!(build_power_window(None, Some(recs.as_bytes()), None), Err(AdapterReason::ProfileArtifactsMissing));
        assert_eq!(
            build_power_window(Some(b"{"), Some(recs.as_bytes()), None),
            Err(AdapterReason::ProfileArtifactsInvalid)
        );
        assert_eq!(build_power_window(Some(agg), Some(b"not json"), None), Err(AdapterReason::ProfileArtifactsInvalid));
        assert_eq!(
            build_power_window(Some(br#"{"start_time": 1}"#), Some(recs.as_bytes()), None),
            Err(AdapterReason::ProfileWindowMissing)
        );
        assert_eq!(
            build_power_window(Some(br#"{"start_time": 5, "end_time": 5}"#), Some(recs.as_bytes()), None),
            Err(AdapterReason::ProfileWindowInvalid)
        );
        assert_eq!(
            build_power_window(Some(br#"{"start_time": true, "end_time": 5}"#), Some(recs.as_bytes()), None),
            Err(AdapterReason::ProfileWindowInvalid)
        );
        let warm = record("warmup", Value::Null, 1, 1);
        assert_eq!(
            build_power_window(Some(agg), Some(warm.as_bytes()), None),
            Err(AdapterReason::SuccessfulRequestCountInvalid)
        );
        let no_tokens = serde_json::json!({"metrics": {"input_sequence_length": {"value": 5}}}).to_string();
        assert_eq!(
            build_power_window(Some(agg), Some(no_tokens.as_bytes()), None),
            Err(AdapterReason::IncompleteTokenAccounting)
        );
        let zero_out = record("profiling", Value::Null, 5, 0);
        assert_eq!(
            build_power_window(Some(agg), Some(zero_out.as_bytes()), None),
            Err(AdapterReason::IncompleteTokenAccounting)
        );
        assert_eq!(parse_offset_file("-0530").map(|o| o.local_minus_utc()), Some(-19_800));
        assert_eq!(parse_offset_file("+2400"), None);
    }
}
