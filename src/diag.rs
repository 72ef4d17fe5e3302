//! Diagnostics: one problem in one file, printed as `path:line:col: message`, and the report
//! that collects them (shared by `lint` and the matrix lint it calls, so neither imports the other).

use std::collections::BTreeMap;
use std::fmt;

use crate::repo::Tree;
use crate::yaml::{self, Pos, YamlError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The file is invalid: lint exits 1.
    Error,
    /// Accepted as upstream accepts it, but worth fixing.
    Warning,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Diagnostic {
    pub file: String,
    /// Absent when the problem concerns the whole file (missing, unreadable, too large).
    pub pos: Option<Pos>,
    pub message: String,
    pub severity: Severity,
}

impl Diagnostic {
    pub fn new(file: impl Into<String>, pos: Option<Pos>, message: impl Into<String>) -> Diagnostic {
        Diagnostic { file: file.into(), pos, message: message.into(), severity: Severity::Error }
    }

    pub fn warning(mut self) -> Diagnostic {
        self.severity = Severity::Warning;
        self
    }

    /// A YAML error in `file`, keeping its position and field path.
    pub fn from_yaml(file: &str, err: &YamlError) -> Diagnostic {
        let message = match &err.field {
            Some(field) => format!("{field}: {}", err.message),
            None => err.message.clone(),
        };
        Diagnostic::new(err.file.clone().unwrap_or_else(|| file.to_owned()), err.pos, message)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.severity == Severity::Warning {
            return match self.pos {
                Some(pos) => write!(f, "{}:{}:{}: warning: {}", self.file, pos.line, pos.col, self.message),
                None => write!(f, "{}: warning: {}", self.file, self.message),
            };
        }
        match self.pos {
            Some(pos) => write!(f, "{}:{}:{}: {}", self.file, pos.line, pos.col, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_forms() {
        let d = Diagnostic::new("a.yaml", Some(Pos { line: 3, col: 7 }), "bad");
        assert_eq!(d.to_string(), "a.yaml:3:7: bad");
        assert_eq!(Diagnostic::new("a.yaml", None, "missing").to_string(), "a.yaml: missing");
        let e = YamlError {
            file: None,
            pos: Some(Pos { line: 2, col: 1 }),
            field: Some("k.tp".into()),
            message: "m".into(),
        };
        assert_eq!(Diagnostic::from_yaml("f.yaml", &e).to_string(), "f.yaml:2:1: k.tp: m");
        assert_eq!(Diagnostic::from_yaml("f.yaml", &e).warning().to_string(), "f.yaml:2:1: warning: k.tp: m");
    }
}

/// What lint found: problems, and counts of what parsed (for `--format json`).
#[derive(Debug, Default, serde::Serialize)]
pub struct LintReport {
    /// Files read, by logical role.
    pub files_read: usize,
    /// Counts of parsed things (configs, changelog entries, CODEOWNERS rules, …).
    pub counts: BTreeMap<&'static str, usize>,
    /// Resolved location of each logical file (absent: not in this repository).
    pub layout: BTreeMap<String, String>,
    pub diagnostics: Vec<Diagnostic>,
    /// Facts read that a maintainer checks by eye (`path:line: fact: …`; MODELS.md's deprecations).
    pub facts: Vec<String>,
}

impl LintReport {
    /// No errors (warnings allowed).
    pub fn ok(&self) -> bool {
        self.errors() == 0
    }

    pub fn errors(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.severity == Severity::Error).count()
    }

    pub(crate) fn count(&mut self, what: &'static str, n: usize) {
        *self.counts.entry(what).or_default() += n;
    }
}

/// Reads a file for linting: the text, or a diagnostic (unreadable, too large, not UTF-8).
pub fn read_text(tree: &dyn Tree, path: &str, report: &mut LintReport) -> Option<String> {
    report.files_read += 1;
    match tree.read(path) {
        Ok(Some(bytes)) => match yaml::text_of(&bytes) {
            Ok(text) => Some(text.to_owned()),
            Err(e) => {
                report.diagnostics.push(Diagnostic::from_yaml(path, &e));
                None
            }
        },
        Ok(None) => {
            report.diagnostics.push(Diagnostic::new(path, None, "file does not exist"));
            None
        }
        Err(e) => {
            report.diagnostics.push(Diagnostic::new(path, None, e.to_string()));
            None
        }
    }
}
