//! Reading forward (decision TD1): a field sweepgate does not know is carried as a fact and the
//! reading goes on; a known field with a bad value stays an error naming `file:line`.
//!
//! The typed readers keep `deny_unknown_fields`, so the strict reading (what upstream's own
//! validators do at one revision) is still there for the checks that need it. This module runs
//! the same typed reading and, each time it stops at an unknown key, notes the key and its
//! position, drops that key from a private copy of the tree and reads again. Every other error
//! is returned as it is.

use serde::de::DeserializeOwned;

use crate::diag::Diagnostic;
use crate::yaml::{self, Node, Pos, Value, YamlError};

/// A key the typed reader does not know, where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownField {
    pub pos: Pos,
    /// Dotted path of the key (`scenarios.agentic-coding[0].search-space[2].trace-source`).
    pub path: String,
}

impl UnknownField {
    /// The `lint` warning for this key in `file`.
    pub fn diagnostic(&self, file: &str, context: &str) -> Diagnostic {
        let context = if context.is_empty() { String::new() } else { format!("{context}: ") };
        Diagnostic::new(
            file,
            Some(self.pos),
            format!(
                "{context}unknown field `{}` (not read by sweepgate; a newer upstream field is carried and the rest is read)",
                self.path
            ),
        )
        .warning()
    }
}

/// The field name of serde's ``unknown field `x`, expected …`` message.
fn unknown_name(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("unknown field `")?;
    rest.split_once('`').map(|(name, _)| name)
}

/// Removes every mapping key written at `pos` whose text is `name` (aliases copy nodes, so the
/// same key may appear more than once). Returns whether one was removed.
fn drop_key(node: &mut Node, pos: Pos, name: &str) -> bool {
    match &mut node.value {
        Value::Map(entries) => {
            let before = entries.len();
            entries.retain(|(k, _)| !(k.pos == pos && k.key_text().as_deref() == Some(name)));
            let mut removed = entries.len() != before;
            for (_, v) in entries.iter_mut() {
                removed |= drop_key(v, pos, name);
            }
            removed
        }
        Value::Seq(items) => items.iter_mut().fold(false, |acc, item| drop_key(item, pos, name) | acc),
        _ => false,
    }
}

/// Reads `T` from `node` forward: unknown keys are returned beside the value instead of
/// failing the reading.
pub fn from_node<T: DeserializeOwned>(node: &Node) -> Result<(T, Vec<UnknownField>), YamlError> {
    let mut unknown = Vec::new();
    let mut copy: Option<Node> = None;
    // Each round removes at least one key, so the tree's size bounds the rounds.
    for _ in 0..=node.size() {
        let current = copy.as_ref().unwrap_or(node);
        let err = match yaml::from_node::<T>(current) {
            Ok(value) => return Ok((value, unknown)),
            Err(e) => e,
        };
        let (Some(name), Some(pos)) = (unknown_name(&err.message), err.pos) else { return Err(err) };
        let name = name.to_owned();
        let work = copy.get_or_insert_with(|| node.clone());
        if !drop_key(work, pos, &name) {
            return Err(err);
        }
        let path = match &err.field {
            Some(parent) => format!("{parent}.{name}"),
            None => name,
        };
        unknown.push(UnknownField { pos, path });
    }
    Err(YamlError::at(node.pos, "too many unknown fields to read forward"))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields, rename_all = "kebab-case")]
    struct Inner {
        tp: i64,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Outer {
        name: String,
        items: Vec<Inner>,
    }

    fn read(text: &str) -> Result<(Outer, Vec<UnknownField>), YamlError> {
        from_node(&yaml::parse(text, "t.yaml").unwrap())
    }

    #[test]
    fn unknown_keys_are_carried_and_the_reading_goes_on() {
        let (outer, unknown) = read("name: x\nnew-top: 1\nitems:\n  - tp: 8\n    num-nodes: 2\n  - tp: 4\n").unwrap();
        assert_eq!(outer, Outer { name: "x".into(), items: vec![Inner { tp: 8 }, Inner { tp: 4 }] });
        assert_eq!(
            unknown,
            vec![
                UnknownField { pos: Pos { line: 2, col: 1 }, path: "new-top".into() },
                UnknownField { pos: Pos { line: 5, col: 5 }, path: "items[0].num-nodes".into() },
            ]
        );
        let d = unknown[1].diagnostic("t.yaml", "master config 'k'");
        assert!(
            d.to_string().starts_with("t.yaml:5:5: warning: master config 'k': unknown field `items[0].num-nodes`"),
            "{d}"
        );
    }

    #[test]
    fn a_known_field_with_a_bad_value_stays_an_error() {
        let err = read("name: x\nextra: 1\nitems:\n  - tp: \"8\"\n").unwrap_err().in_file("t.yaml");
        assert_eq!(err.to_string(), "t.yaml:4:9: items[0].tp: expected an integer, found the string \"8\"");
        let err = read("extra: 1\nitems: []\n").unwrap_err();
        assert!(err.message.contains("missing field `name`"), "{err}");
    }
}
