//! `.github/sweepgate.yaml`: what a benchmark repository opts in to, read at the target
//! branch's tip like every policy file (ARCHITECTURE decision 6). Today one key (decision PF4):
//!
//! ```yaml
//! performance:
//!   warn-on-frontier-regression: true
//! ```
//!
//! With it, the comparison with the published curve (issue 26) adds a WARN row when a point of
//! the published frontier regresses beyond its noise band. It never FAILs.

use crate::diag::Diagnostic;
use crate::yaml::{self, Node, Value};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct SweepgatePolicy {
    /// `performance.warn-on-frontier-regression` (default false: the comparison stays advisory).
    pub warn_on_frontier_regression: bool,
}

impl SweepgatePolicy {
    pub fn parse(text: &str, file: &str) -> Result<SweepgatePolicy, Vec<Diagnostic>> {
        let root = yaml::parse(text, file).map_err(|e| vec![Diagnostic::from_yaml(file, &e)])?;
        let mut diags = Vec::new();
        let mut out = SweepgatePolicy::default();
        match &root.value {
            // An empty file opts in to nothing.
            Value::Null => {}
            _ => match root.as_map() {
                Some(entries) => {
                    for (key, value) in entries {
                        match key.as_str() {
                            Some("performance") => performance(value, file, &mut out, &mut diags),
                            _ => diags.push(unknown(file, key, "sweepgate.yaml has only `performance`")),
                        }
                    }
                }
                None => diags.push(kind_error(file, &root, "the file", "a mapping")),
            },
        }
        if diags.is_empty() {
            Ok(out)
        } else {
            Err(diags)
        }
    }
}

fn performance(node: &Node, file: &str, out: &mut SweepgatePolicy, diags: &mut Vec<Diagnostic>) {
    let Some(entries) = node.as_map() else {
        diags.push(kind_error(file, node, "performance", "a mapping"));
        return;
    };
    for (key, value) in entries {
        match (key.as_str(), &value.value) {
            (Some("warn-on-frontier-regression"), Value::Bool(on)) => out.warn_on_frontier_regression = *on,
            (Some("warn-on-frontier-regression"), _) => {
                diags.push(kind_error(file, value, "performance.warn-on-frontier-regression", "true or false"))
            }
            _ => diags.push(unknown(file, key, "`performance` has only `warn-on-frontier-regression`")),
        }
    }
}

fn unknown(file: &str, key: &Node, known: &str) -> Diagnostic {
    Diagnostic::new(file, Some(key.pos), format!("unknown key `{}`; {known}", key.key_text().unwrap_or_default()))
}

fn kind_error(file: &str, node: &Node, field: &str, expected: &str) -> Diagnostic {
    Diagnostic::new(file, Some(node.pos), format!("{field}: expected {expected}, found {}", node.value.kind()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = ".github/sweepgate.yaml";

    #[test]
    fn the_opt_in_is_read_and_anything_else_is_a_positioned_error() {
        let on = SweepgatePolicy::parse("performance:\n  warn-on-frontier-regression: true\n", FILE).unwrap();
        assert!(on.warn_on_frontier_regression);
        let off = SweepgatePolicy::parse("performance:\n  warn-on-frontier-regression: false\n", FILE).unwrap();
        assert!(!off.warn_on_frontier_regression);
        assert_eq!(
            SweepgatePolicy::parse("", FILE),
            Ok(SweepgatePolicy::default()),
            "an empty file opts in to nothing"
        );
        for (bad, says) in [
            ("performance:\n  warn-on-frontier-regression: \"yes\"\n", "expected true or false"),
            ("performance:\n  warn-on-regression: true\n", "unknown key `warn-on-regression`"),
            ("perf: {}\n", "unknown key `perf`"),
            ("- performance\n", "expected a mapping"),
            ("performance: [\n", ""),
        ] {
            let diags = SweepgatePolicy::parse(bad, FILE).unwrap_err();
            assert!(diags[0].to_string().contains(says) && diags[0].file == FILE, "{bad}: {diags:?}");
        }
    }
}
