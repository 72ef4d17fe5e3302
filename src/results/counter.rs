//! The review-time Pareto coverage counter (spec 40 §3.4): JSON curves in, per-curve counts out,
//! with the same answers, messages and output text as upstream's `pareto_coverage.py`.
//!
//! Input parity details: Python's `json.load` accepts the tokens `NaN`, `Infinity` and
//! `-Infinity`; they are read here too and make a coordinate invalid evidence (decision E8).
//! Output is `json.dumps(indent=2)` text: Python float repr and ASCII-only strings.

use std::io;

use serde_json::{Map, Value};

use super::pareto::{assess_curve, CoverageStatus, CurveEvidence, Point, RECOMMENDED_POINTS};

/// Largest input the counter reads (a real sweep has a few hundred points).
pub const MAX_INPUT_BYTES: usize = 16 * 1024 * 1024;

const CANONICAL_FLAG: &str = "isOnNormalizedInteractivityFrontier";
/// Stand-in for Python's non-finite float literals while serde_json parses.
const NON_FINITE_MARK: &str = "\u{0}sweepgate-non-finite\u{0}";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CounterError {
    #[error("input is {0} bytes; the counter reads at most {MAX_INPUT_BYTES} bytes")]
    TooLarge(usize),
    #[error("input is not valid JSON: {0}")]
    Json(String),
    #[error("Provide every affected curve; an empty list cannot prove coverage")]
    EmptyOrNotList,
    #[error("Each curve must be an object")]
    CurveNotObject,
    #[error("Each curve needs a nonempty key and a points array")]
    BadCurve,
    #[error("Curve keys must be unique; do not split one curve across inputs")]
    DuplicateKey,
    #[error("Out of range float values are not JSON compliant")]
    NonFiniteOutput,
}

/// Parse the counter's input, assess every curve and render the output text (no trailing
/// newline). Errors carry upstream's messages.
pub fn run_counter(input: &str) -> Result<String, CounterError> {
    if input.len() > MAX_INPUT_BYTES {
        return Err(CounterError::TooLarge(input.len()));
    }
    let value: Value = serde_json::from_str(&mark_non_finite(input)).map_err(|e| CounterError::Json(e.to_string()))?;
    let results = assess_coverage(&value)?;
    if results.iter().any(contains_non_finite_mark) {
        return Err(CounterError::NonFiniteOutput);
    }
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PythonFormatter::default());
    serde::Serialize::serialize(&Value::Array(results), &mut ser).map_err(|e| CounterError::Json(e.to_string()))?;
    String::from_utf8(out).map_err(|e| CounterError::Json(e.to_string()))
}

/// Assess each curve of the input list, in input order.
pub fn assess_coverage(curves: &Value) -> Result<Vec<Value>, CounterError> {
    let curves = match curves.as_array() {
        Some(list) if !list.is_empty() => list,
        _ => return Err(CounterError::EmptyOrNotList),
    };
    let mut keys: Vec<&str> = Vec::with_capacity(curves.len());
    let mut results = Vec::with_capacity(curves.len());
    for curve in curves {
        let curve = curve.as_object().ok_or(CounterError::CurveNotObject)?;
        let (key, result) = assess_json_curve(curve)?;
        if keys.contains(&key) {
            return Err(CounterError::DuplicateKey);
        }
        keys.push(key);
        results.push(result);
    }
    Ok(results)
}

fn assess_json_curve(curve: &Map<String, Value>) -> Result<(&str, Value), CounterError> {
    let key = curve.get("key").and_then(Value::as_str).filter(|k| !k.trim().is_empty());
    let points = curve.get("points").and_then(Value::as_array);
    let (Some(key), Some(points)) = (key, points) else {
        return Err(CounterError::BadCurve);
    };
    let coords: Vec<Point> = points.iter().map(json_point).collect();
    let canonical = points.iter().any(|p| p.as_object().is_some_and(|o| o.contains_key(CANONICAL_FLAG)));
    let flags: Vec<bool> = points.iter().map(|p| p.get(CANONICAL_FLAG) == Some(&Value::Bool(true))).collect();
    let coverage = assess_curve(CurveEvidence { points: &coords, north_star: canonical.then_some(flags.as_slice()) });
    let status = match coverage.status {
        CoverageStatus::Pass => "PASS",
        CoverageStatus::Warn => "WARN",
    };
    let frontier: Vec<Value> = coverage.frontier.iter().filter_map(|&i| points.get(i).cloned()).collect();
    let mut out = Map::new();
    out.insert("key".into(), Value::from(key));
    out.insert("status".into(), Value::from(status));
    out.insert("measuredPoints".into(), Value::from(coverage.measured_points));
    out.insert("invalidPoints".into(), Value::from(coverage.invalid_points));
    out.insert("frontierPoints".into(), Value::from(coverage.frontier_points()));
    out.insert("recommendedPoints".into(), Value::from(RECOMMENDED_POINTS));
    out.insert("canonicalRestriction".into(), Value::from(coverage.canonical_restriction));
    out.insert("frontier".into(), Value::Array(frontier));
    Ok((key, Value::Object(out)))
}

/// A point's coordinates; anything but a JSON number (booleans, strings, null, missing,
/// non-objects, non-finite tokens) becomes NaN, i.e. invalid evidence.
fn json_point(point: &Value) -> Point {
    let coord = |name: &str| point.get(name).and_then(Value::as_f64).unwrap_or(f64::NAN);
    Point::new(coord("x"), coord("y"))
}

/// Replace `NaN`, `Infinity` and `-Infinity` outside strings by a marked string.
fn mark_non_finite(input: &str) -> std::borrow::Cow<'_, str> {
    if !input.contains("NaN") && !input.contains("Infinity") {
        return input.into();
    }
    let mut out = String::with_capacity(input.len());
    let mut in_string = false;
    let mut escaped = false;
    let mut rest = input;
    while let Some(c) = rest.chars().next() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c == '"' {
            in_string = true;
        } else if let Some(token) = ["NaN", "Infinity", "-Infinity"].into_iter().find(|t| rest.starts_with(t)) {
            out.push('"');
            out.push_str(&NON_FINITE_MARK.replace('\u{0}', "\\u0000"));
            out.push('"');
            rest = &rest[token.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out.into()
}

fn contains_non_finite_mark(value: &Value) -> bool {
    match value {
        Value::String(s) => s == NON_FINITE_MARK,
        Value::Array(items) => items.iter().any(contains_non_finite_mark),
        Value::Object(map) => map.values().any(contains_non_finite_mark),
        _ => false,
    }
}

/// serde_json formatter that writes what Python's `json.dumps(indent=2)` writes.
#[derive(Default)]
struct PythonFormatter {
    indent: usize,
    has_value: bool,
}

impl PythonFormatter {
    fn newline_indent<W: ?Sized + io::Write>(&self, w: &mut W) -> io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.indent {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    fn open<W: ?Sized + io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.indent += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    /// Empty containers stay on one line (`[]`, `{}`), as Python writes them.
    fn close<W: ?Sized + io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.indent -= 1;
        if self.has_value {
            self.newline_indent(w)?;
        }
        w.write_all(bracket)
    }

    fn entry<W: ?Sized + io::Write>(&self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        self.newline_indent(w)
    }
}

impl serde_json::ser::Formatter for PythonFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        w.write_all(python_float_repr(value).as_bytes())
    }

    fn write_string_fragment<W: ?Sized + io::Write>(&mut self, w: &mut W, fragment: &str) -> io::Result<()> {
        for c in fragment.chars() {
            if (' '..='~').contains(&c) {
                w.write_all(&[c as u8])?;
            } else {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    write!(w, "\\u{unit:04x}")?;
                }
            }
        }
        Ok(())
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.entry(w, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.entry(w, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Python's `repr(float)`: shortest round-trip digits, fixed notation for exponents in
/// [-4, 16), otherwise `d.ddde+XX`.
fn python_float_repr(value: f64) -> String {
    let sci = format!("{value:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if negative { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let point = exp + 1;
        let body = if point <= 0 {
            format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
        } else if (point as usize) >= digits.len() {
            format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            let (int, frac) = digits.split_at(point as usize);
            format!("{int}.{frac}")
        };
        format!("{sign}{body}")
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        let frac = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        let exp_sign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{first}{frac}e{exp_sign}{:02}", exp.unsigned_abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_float_repr_matches_cpython() {
        let cases = [
            (5.0, "5.0"),
            (0.1, "0.1"),
            (451.60531535097147, "451.60531535097147"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456789012345.6, "123456789012345.6"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.25e-7, "1.25e-07"),
            (-2.5, "-2.5"),
            (0.0, "0.0"),
            (1e300, "1e+300"),
        ];
        for (v, want) in cases {
            assert_eq!(python_float_repr(v), want, "{v}");
        }
    }

    #[test]
    fn output_is_python_indent_2_with_ascii_escapes() {
        let out = run_counter(r#"[{"key": "mü/α", "points": [{"x": 1, "y": 2.0, "tags": [], "m": {}}]}]"#);
        let want = "[\n  {\n    \"key\": \"m\\u00fc/\\u03b1\",\n    \"status\": \"WARN\",\n    \"measuredPoints\": 1,\n    \"invalidPoints\": 0,\n    \"frontierPoints\": 1,\n    \"recommendedPoints\": 5,\n    \"canonicalRestriction\": false,\n    \"frontier\": [\n      {\n        \"x\": 1,\n        \"y\": 2.0,\n        \"tags\": [],\n        \"m\": {}\n      }\n    ]\n  }\n]";
        assert_eq!(out.as_deref(), Ok(want));
    }

    #[test]
    fn upstream_error_messages() {
        let err = |s: &str| run_counter(s).err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(err("[]"), "Provide every affected curve; an empty list cannot prove coverage");
        assert_eq!(err("{}"), "Provide every affected curve; an empty list cannot prove coverage");
        assert_eq!(err("[1]"), "Each curve must be an object");
        assert_eq!(err(r#"[{"key": " ", "points": []}]"#), "Each curve needs a nonempty key and a points array");
        assert_eq!(err(r#"[{"key": "a", "points": {}}]"#), "Each curve needs a nonempty key and a points array");
        assert_eq!(err(r#"[{"key": 3, "points": []}]"#), "Each curve needs a nonempty key and a points array");
        assert_eq!(
            err(r#"[{"key": "a", "points": []}, {"key": "a", "points": []}]"#),
            "Curve keys must be unique; do not split one curve across inputs"
        );
        assert!(err("[{").starts_with("input is not valid JSON"));
        assert!(err("").starts_with("input is not valid JSON"));
    }

    #[test]
    fn python_non_finite_tokens_are_invalid_points_not_errors() {
        let out = run_counter(
            r#"[{"key": "k", "points": [{"x": NaN, "y": 1}, {"x": 1, "y": -Infinity}, {"x": Infinity, "y": 2},
                {"x": true, "y": 1}, {"x": "1", "y": 1}, {"y": 1}, 7, {"x": 0, "y": 1}, {"x": -1, "y": 1},
                {"x": 2, "y": 3, "note": "NaN in a string stays"}]}]"#,
        )
        .unwrap_or_default();
        let v: Value = serde_json::from_str(&out).unwrap_or_default();
        assert_eq!(v[0]["measuredPoints"], 10);
        assert_eq!(v[0]["invalidPoints"], 9);
        assert_eq!(v[0]["frontier"][0]["note"], "NaN in a string stays");
    }

    #[test]
    fn non_finite_extra_field_on_a_frontier_point_fails_like_upstream() {
        let r = run_counter(r#"[{"key": "k", "points": [{"x": 1, "y": 1, "extra": NaN}]}]"#);
        assert_eq!(r, Err(CounterError::NonFiniteOutput));
        // Not on the frontier: fine.
        let r = run_counter(r#"[{"key": "k", "points": [{"x": 1, "y": 5}, {"x": 2, "y": 1, "extra": NaN}]}]"#);
        assert!(r.is_ok());
    }

    #[test]
    fn canonical_flag_presence_anywhere_restricts() {
        let out = run_counter(
            r#"[{"key": "k", "points": [{"x": 1, "y": 1, "isOnNormalizedInteractivityFrontier": "yes"},
                {"x": 2, "y": 2}, {"x": 3, "y": 3, "isOnNormalizedInteractivityFrontier": true}]}]"#,
        )
        .unwrap_or_default();
        let v: Value = serde_json::from_str(&out).unwrap_or_default();
        assert_eq!(v[0]["canonicalRestriction"], true);
        assert_eq!(v[0]["frontierPoints"], 1);
        assert_eq!(v[0]["frontier"][0]["x"], 3);
    }

    #[test]
    fn oversized_input_is_refused() {
        let big = " ".repeat(MAX_INPUT_BYTES + 1);
        assert_eq!(run_counter(&big), Err(CounterError::TooLarge(MAX_INPUT_BYTES + 1)));
    }
}
