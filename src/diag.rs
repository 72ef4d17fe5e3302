//! Diagnostics: one problem in one file, printed as `path:line:col: message`.

use std::fmt;

use crate::yaml::{Pos, YamlError};

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
