//! Hidden markers that identify the bot's own comments: the first line of every comment the
//! bot owns is `<!-- sweepgate:<kind> key=value … -->`. Markers are read only from comments
//! written by the bot's own account; anyone can type a marker, nobody else can author as the bot.

use std::fmt;

const PREFIX: &str = "<!-- sweepgate:";
const SUFFIX: &str = " -->";

/// A parsed or to-be-written marker. Keys and values are restricted to a safe alphabet so a
/// marker can never close the HTML comment early or carry Markdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub kind: String,
    pub fields: Vec<(String, String)>,
}

fn is_token(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 128
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'/' | b'-' | b'+'))
}

impl Marker {
    /// A marker of `kind`. Panics never: invalid kinds and values are replaced by `invalid`.
    pub fn new(kind: &str) -> Marker {
        Marker { kind: if is_token(kind) { kind.to_string() } else { "invalid".into() }, fields: Vec::new() }
    }

    /// Adds `key=value`; a value outside the safe alphabet is written as `invalid`.
    pub fn with(mut self, key: &str, value: impl fmt::Display) -> Marker {
        let value = value.to_string();
        let value = if is_token(&value) { value } else { "invalid".into() };
        if is_token(key) {
            self.fields.push((key.to_string(), value));
        }
        self
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// The marker on the first line of `body`, if that line is exactly a well-formed marker.
    pub fn parse(body: &str) -> Option<Marker> {
        let first = body.lines().next()?.trim_end();
        let inner = first.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
        let mut words = inner.split(' ');
        let kind = words.next().filter(|k| is_token(k))?;
        let mut fields = Vec::new();
        for word in words {
            let (k, v) = word.split_once('=')?;
            if !is_token(k) || !is_token(v) {
                return None;
            }
            fields.push((k.to_string(), v.to_string()));
        }
        Some(Marker { kind: kind.to_string(), fields })
    }

    /// True when `self` is of the same kind and has every field of `wanted` with equal values.
    pub fn matches(&self, wanted: &Marker) -> bool {
        self.kind == wanted.kind && wanted.fields.iter().all(|(k, v)| self.get(k) == Some(v.as_str()))
    }
}

impl fmt::Display for Marker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}", self.kind)?;
        for (k, v) in &self.fields {
            write!(f, " {k}={v}")?;
        }
        f.write_str(SUFFIX)
    }
}

/// Prefixes `body` with `marker` on its own line.
pub fn with_marker(marker: &Marker, body: &str) -> String {
    format!("{marker}\n{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let m = Marker::new("reuse").with("comment", 42).with("cmd", "/use+7");
        let text = m.to_string();
        assert_eq!(text, "<!-- sweepgate:reuse comment=42 cmd=/use+7 -->");
        assert_eq!(Marker::parse(&with_marker(&m, "hello")), Some(m));
    }

    #[test]
    fn unsafe_values_cannot_break_out() {
        let m = Marker::new("labels").with("x", "a --> <b>").with("bad key", 1);
        assert_eq!(m.to_string(), "<!-- sweepgate:labels x=invalid -->");
    }

    #[test]
    fn only_the_first_line_counts() {
        assert_eq!(Marker::parse("hi\n<!-- sweepgate:welcome pr=1 -->"), None);
        assert_eq!(Marker::parse("<!-- sweepgate:welcome pr=1 -->trailing"), None);
        assert_eq!(Marker::parse("<!-- sweepgate:welcome pr -->"), None);
        assert_eq!(Marker::parse(""), None);
    }

    #[test]
    fn matching_by_subset_of_fields() {
        let found = Marker::parse("<!-- sweepgate:labels pr=5 sha=abc -->").unwrap();
        assert!(found.matches(&Marker::new("labels").with("pr", 5)));
        assert!(!found.matches(&Marker::new("labels").with("pr", 6)));
        assert!(!found.matches(&Marker::new("welcome").with("pr", 5)));
    }
}
