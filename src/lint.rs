//! `sweepgate lint`: parse every policy file of a benchmark repository and report each problem
//! as `path:line:col: message`. Each domain parser contributes one section.

use std::collections::BTreeMap;

use crate::diag::{Diagnostic, Severity};
use crate::repo::{Layout, Logical, RepoError, Tree};
use crate::yaml;

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
}

impl LintReport {
    /// No errors (warnings allowed).
    pub fn ok(&self) -> bool {
        self.errors() == 0
    }

    pub fn errors(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.severity == Severity::Error).count()
    }

    fn count(&mut self, what: &'static str, n: usize) {
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

/// Lints every policy file the layout finds in `tree`.
pub fn lint(tree: &dyn Tree, layout: &Layout) -> Result<LintReport, RepoError> {
    let mut report = LintReport::default();
    for logical in Logical::ALL {
        if let Some(path) = layout.resolve(tree, logical)? {
            let key =
                serde_json::to_value(logical).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
            report.layout.insert(key, path.clone());
            match logical {
                Logical::ConfigsDir | Logical::GoldenAlDir => {
                    for file in yaml_files(tree, &path)? {
                        lint_yaml_syntax(tree, &file, &mut report);
                    }
                }
                Logical::SrtRecipesDir => {
                    for file in yaml_files(tree, &path)? {
                        lint_recipe(tree, &file, &mut report);
                    }
                }
                Logical::Changelog | Logical::EvalThresholds => lint_yaml_syntax(tree, &path, &mut report),
                Logical::ModelsMd
                | Logical::ModelsZhMd
                | Logical::ReviewChecklist
                | Logical::WaiverDir
                | Logical::Codeowners => {}
            }
        }
    }
    report.diagnostics.sort();
    Ok(report)
}

fn lint_yaml_syntax(tree: &dyn Tree, path: &str, report: &mut LintReport) {
    let Some(text) = read_text(tree, path, report) else { return };
    match yaml::parse(&text, path) {
        Ok(_) => report.count("yaml_files", 1),
        Err(e) => report.diagnostics.push(Diagnostic::from_yaml(path, &e)),
    }
}

fn yaml_files(tree: &dyn Tree, dir: &str) -> Result<Vec<String>, RepoError> {
    Ok(tree.list(dir)?.into_iter().filter(|f| f.ends_with(".yaml") || f.ends_with(".yml")).collect())
}

fn lint_recipe(tree: &dyn Tree, path: &str, report: &mut LintReport) {
    let Some(text) = read_text(tree, path, report) else { return };
    report.count("srt_recipes", 1);
    report.diagnostics.extend(crate::domain::srt_recipe::lint(&text, path));
}
