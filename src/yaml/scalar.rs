//! PyYAML 1.1 implicit scalar resolution (what `yaml.safe_load` does to a plain scalar).

use std::borrow::Cow;

use super::Value;
use saphyr_parser::Tag;

/// Resolves a scalar to a value. Quoted scalars are always strings; plain ones follow PyYAML's
/// implicit resolvers (null, bool, int incl. `_` separators/octal/hex/binary/base-60, float).
/// Takes the parser's text as it comes, so that a string scalar the parser already owns is
/// moved into the tree rather than copied.
pub(super) fn resolve(text: Cow<'_, str>, quoted: bool, tag: Option<&Tag>) -> Result<Value, String> {
    if let Some(tag) = tag {
        return resolve_tagged(&text, tag);
    }
    if quoted {
        return Ok(Value::Str(text.into_owned()));
    }
    Ok(resolve_plain(text))
}

fn resolve_tagged(text: &str, tag: &Tag) -> Result<Value, String> {
    let core = tag.handle == "!!" || tag.handle == "tag:yaml.org,2002:";
    if !core {
        return Err(format!("unsupported YAML tag '{}{}'", tag.handle, tag.suffix));
    }
    let plain = resolve_plain(Cow::Borrowed(text));
    let ok = match tag.suffix.as_str() {
        "str" => return Ok(Value::Str(text.to_owned())),
        "null" => matches!(plain, Value::Null),
        "bool" => matches!(plain, Value::Bool(_)),
        "int" => matches!(plain, Value::Int(_)),
        "float" => match plain {
            Value::Int(i) => return Ok(Value::Float(i as f64)),
            Value::Float(_) => true,
            _ => false,
        },
        other => return Err(format!("unsupported YAML tag '!!{other}'")),
    };
    if ok {
        Ok(plain)
    } else {
        Err(format!("'{text}' is not a valid !!{}", tag.suffix))
    }
}

fn resolve_plain(text: Cow<'_, str>) -> Value {
    match &*text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => return Value::Bool(true),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => return Value::Bool(false),
        _ => {}
    }
    if let Some(v) = resolve_int(&text) {
        return v;
    }
    if let Some(x) = resolve_float(&text) {
        return Value::Float(x);
    }
    Value::Str(text.into_owned())
}

fn split_sign(text: &str) -> (bool, &str) {
    match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    }
}

/// PyYAML int regex: `[-+]?0b[0-1_]+ | [-+]?0[0-7_]+ | [-+]?(?:0|[1-9][0-9_]*) | [-+]?0x[0-9a-fA-F_]+
/// | [-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+`.
fn resolve_int(text: &str) -> Option<Value> {
    let (negative, body) = split_sign(text);
    if body.is_empty() {
        return None;
    }
    let magnitude: Option<i128> = if let Some(bits) = body.strip_prefix("0b") {
        digits(bits, 2)
    } else if let Some(hex) = body.strip_prefix("0x") {
        digits(hex, 16)
    } else if body.contains(':') {
        base60(body)
    } else if body == "0" {
        Some(0)
    } else if let Some(oct) = body.strip_prefix('0') {
        digits(oct, 8)
    } else if body.as_bytes()[0].is_ascii_digit() {
        digits(body, 10)
    } else {
        None
    };
    let magnitude = magnitude?;
    let signed = if negative { -magnitude } else { magnitude };
    Some(match i64::try_from(signed) {
        Ok(i) => Value::Int(i),
        Err(_) => Value::Float(signed as f64),
    })
}

/// Digits with `_` separators (at least one digit, PyYAML allows `_` anywhere after the first).
fn digits(s: &str, radix: u32) -> Option<i128> {
    if s.is_empty() || s.starts_with('_') && radix == 10 {
        return None;
    }
    let mut value: i128 = 0;
    let mut any = false;
    for c in s.chars() {
        if c == '_' {
            continue;
        }
        let d = c.to_digit(radix)?;
        value = value.checked_mul(radix as i128)?.checked_add(d as i128)?;
        any = true;
    }
    any.then_some(value)
}

fn base60(body: &str) -> Option<i128> {
    let mut parts = body.split(':');
    let head = parts.next()?;
    if !head.starts_with(|c: char| ('1'..='9').contains(&c)) {
        return None;
    }
    let mut value = digits(head, 10)?;
    for part in parts {
        if part.is_empty() || part.len() > 2 || !part.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        if part.len() == 2 && part.as_bytes()[0] > b'5' {
            return None;
        }
        value = value.checked_mul(60)?.checked_add(part.parse::<i128>().ok()?)?;
    }
    Some(value)
}

/// PyYAML float regex: `[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)? | \.[0-9_]+(?:[eE][-+][0-9]+)?
/// | [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]* | [-+]?\.(?:inf|Inf|INF) | \.(?:nan|NaN|NAN)`.
fn resolve_float(text: &str) -> Option<f64> {
    match text {
        ".nan" | ".NaN" | ".NAN" => return Some(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return Some(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    let signed = text.starts_with(['-', '+']);
    let (negative, body) = split_sign(text);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    if let Some(exp) = exponent {
        let exp_digits = exp.strip_prefix(['-', '+'])?;
        if exp_digits.is_empty() || !exp_digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
    }
    let (int_part, frac_part) = mantissa.split_once('.')?;
    let digits_or_underscore = |s: &str| s.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    let shape_ok = if int_part.is_empty() {
        !signed && !frac_part.is_empty()
    } else {
        int_part.starts_with(|c: char| c.is_ascii_digit())
    };
    if !shape_ok || !digits_or_underscore(int_part) || !digits_or_underscore(frac_part) {
        return None; // includes sexagesimal floats, which never occur in real files
    }
    let mut cleaned = format!("0{int_part}.{frac_part}0").replace('_', "");
    if let Some(exp) = exponent {
        cleaned = format!("{cleaned}e{exp}");
    }
    let value: f64 = cleaned.parse().ok()?;
    Some(if negative { -value } else { value })
}

/// Python's `repr(float)`: shortest round-trip digits, always with a `.` or exponent.
pub(crate) fn python_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = format!("{x:?}");
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(s: &str) -> Value {
        resolve(s.into(), false, None).unwrap()
    }

    #[test]
    fn yaml_1_1_integers() {
        assert_eq!(plain("2_063_837"), Value::Int(2_063_837));
        assert_eq!(plain("017"), Value::Int(15));
        assert_eq!(plain("0x1F"), Value::Int(31));
        assert_eq!(plain("0b101"), Value::Int(5));
        assert_eq!(plain("1:30"), Value::Int(90));
        assert_eq!(plain("-8"), Value::Int(-8));
        assert_eq!(plain("0"), Value::Int(0));
        assert_eq!(plain("08"), Value::Str("08".into()), "08 is not octal and not decimal in YAML 1.1");
        assert_eq!(plain("1:75"), Value::Str("1:75".into()));
    }

    #[test]
    fn yaml_1_1_booleans_and_nulls() {
        for t in ["yes", "Yes", "YES", "on", "ON", "true", "True"] {
            assert_eq!(plain(t), Value::Bool(true), "{t}");
        }
        for f in ["no", "No", "off", "OFF", "false", "FALSE"] {
            assert_eq!(plain(f), Value::Bool(false), "{f}");
        }
        assert_eq!(plain("y"), Value::Str("y".into()));
        assert_eq!(plain("n"), Value::Str("n".into()));
        assert_eq!(plain("~"), Value::Null);
        assert_eq!(plain(""), Value::Null);
        assert_eq!(resolve("yes".into(), true, None).unwrap(), Value::Str("yes".into()));
    }

    #[test]
    fn yaml_1_1_floats() {
        assert_eq!(plain("0.80"), Value::Float(0.8));
        assert_eq!(plain("1.0"), Value::Float(1.0));
        assert_eq!(plain("1."), Value::Float(1.0));
        assert_eq!(plain(".5"), Value::Float(0.5));
        assert_eq!(plain("1.5e+3"), Value::Float(1500.0));
        assert_eq!(plain("1e3"), Value::Str("1e3".into()), "PyYAML needs a dot and a signed exponent");
        assert_eq!(plain("1.5e3"), Value::Str("1.5e3".into()));
        assert_eq!(plain("-.inf"), Value::Float(f64::NEG_INFINITY));
        assert!(matches!(plain(".nan"), Value::Float(x) if x.is_nan()));
        assert_eq!(plain("1.2.3"), Value::Str("1.2.3".into()));
        assert_eq!(plain("0.8.1.post1"), Value::Str("0.8.1.post1".into()));
    }

    #[test]
    fn strings_stay_strings() {
        assert_eq!(plain("fp4"), Value::Str("fp4".into()));
        assert_eq!(plain("dsr1-fp4-b200"), Value::Str("dsr1-fp4-b200".into()));
        assert_eq!(plain("-"), Value::Str("-".into()));
        assert_eq!(plain("+"), Value::Str("+".into()));
        assert_eq!(plain("_1"), Value::Str("_1".into()));
    }

    #[test]
    fn python_repr_of_floats() {
        assert_eq!(python_float_repr(0.8), "0.8");
        assert_eq!(python_float_repr(1.0), "1.0");
        assert_eq!(python_float_repr(1e22), "1e22");
    }
}
