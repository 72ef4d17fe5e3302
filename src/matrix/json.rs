//! JSON text in the exact flavours upstream produces (spec 20 §6.1-6.2, decision M12):
//! Python `json.dumps` (generator output: `", "`/`": "`, ASCII with `\uXXXX` escapes), the
//! canonical form hashed into `recipe-fingerprint` (sorted keys, compact, ASCII), and the
//! processor's compact UTF-8 (serde_json).

use serde_json::{Map, Value};

#[derive(Clone, Copy)]
struct Style {
    spaced: bool,
    sort_keys: bool,
}

/// `json.dumps(value)` with Python's defaults (what `generate_sweep_configs.py` prints).
pub fn python_dumps(value: &Value) -> String {
    let mut out = String::new();
    write(value, Style { spaced: true, sort_keys: false }, &mut out);
    out
}

/// `json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)`.
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write(value, Style { spaced: false, sort_keys: true }, &mut out);
    out
}

/// Canonical text of a mapping without some keys: the frozen, order-insensitive identity
/// upstream builds with `tuple(sorted(...))` for grouping rows.
pub fn frozen_without(row: &Map<String, Value>, ignored: &[&str]) -> String {
    let mut out = String::new();
    let mut keys: Vec<&String> = row.keys().filter(|k| !ignored.contains(&k.as_str())).collect();
    keys.sort();
    out.push('{');
    for (i, k) in keys.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_str(k, &mut out);
        out.push(':');
        write(&row[k.as_str()], Style { spaced: false, sort_keys: true }, &mut out);
    }
    out.push('}');
    out
}

fn write(value: &Value, style: Style, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => out.push_str(&i.to_string()),
            (_, Some(u), _) => out.push_str(&u.to_string()),
            (_, _, Some(x)) => out.push_str(&python_float(x)),
            _ => out.push_str(&n.to_string()),
        },
        Value::String(s) => write_str(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(if style.spaced { ", " } else { "," });
                }
                write(item, style, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            if style.sort_keys {
                entries.sort_by(|a, b| a.0.cmp(b.0));
            }
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(if style.spaced { ", " } else { "," });
                }
                write_str(k, out);
                out.push_str(if style.spaced { ": " } else { ":" });
                write(v, style, out);
            }
            out.push('}');
        }
    }
}

/// Python's `float.__repr__` (only reachable through hand-written floats in rows).
fn python_float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    let s = format!("{x:?}");
    if s.contains(['.', 'e']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// A JSON string with `ensure_ascii=True` escaping (lowercase hex, surrogate pairs).
fn write_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7f => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn python_default_separators_and_ascii_escapes() {
        let v = json!([{"b": 1, "a": "≥ x", "c": [true, null, 0.8]}]);
        assert_eq!(python_dumps(&v), r#"[{"b": 1, "a": "\u2265 x", "c": [true, null, 0.8]}]"#);
        assert_eq!(python_dumps(&json!("\u{1F600}\u{7f}\n\"")), "\"\\ud83d\\ude00\u{7f}\\n\\\"\"");
    }

    #[test]
    fn canonical_sorts_recursively_and_is_compact() {
        let v = json!({"z": {"b": 2, "a": [1, {"d": 1, "c": 2}]}, "y": "é"});
        assert_eq!(canonical(&v), r#"{"y":"\u00e9","z":{"a":[1,{"c":2,"d":1}],"b":2}}"#);
    }

    #[test]
    fn frozen_ignores_keys_and_order() {
        let a: Map<String, Value> = serde_json::from_str(r#"{"conc": 4, "tp": 8, "ep": 1}"#).unwrap();
        let b: Map<String, Value> = serde_json::from_str(r#"{"ep": 1, "tp": 8, "conc": 16}"#).unwrap();
        assert_eq!(frozen_without(&a, &["conc"]), frozen_without(&b, &["conc"]));
        assert_ne!(frozen_without(&a, &[]), frozen_without(&b, &[]));
    }
}
