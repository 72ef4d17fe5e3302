//! The `sweepgate lint` sections for the master configs, the runner file and the changelog:
//! every invalid entry is reported (not only the first, as upstream's loader does), plus
//! warnings for what upstream accepts silently (decisions M5, M7, M13).

use std::collections::HashSet;

use crate::diag::{read_text, Diagnostic, LintReport};
use crate::domain::changelog::Changelog;
use crate::domain::master_config::{parse_master_file, read_entry, FixedSpaces, MasterConfig};
use crate::domain::runners::Runners;
use crate::yaml;

use super::generate::seq_name;
use super::inputs::{MASTER_FILES, RUNNER_FILE};

/// Lints `<dir>/amd-master.yaml`, `<dir>/nvidia-master.yaml` and `<dir>/runners.yaml`.
/// Returns the files it handled, so the caller lints the others for syntax only.
pub fn lint_configs(tree: &dyn crate::repo::Tree, dir: &str, report: &mut LintReport) -> Vec<String> {
    let runner_path = format!("{dir}/{RUNNER_FILE}");
    let runners = read_text(tree, &runner_path, report).and_then(|text| match Runners::parse(&text, &runner_path) {
        Ok(r) => {
            report.counts.entry("runner_labels").and_modify(|c| *c += r.labels.len()).or_insert(r.labels.len());
            report.count("runner_clusters", r.clusters.len());
            report.diagnostics.extend(r.unknown.iter().map(|u| u.diagnostic(&runner_path, "")));
            Some(r)
        }
        Err(e) => {
            report.diagnostics.push(Diagnostic::from_yaml(&runner_path, &e));
            None
        }
    });
    let mut seen: HashSet<String> = HashSet::new();
    let mut handled = vec![runner_path];
    for name in MASTER_FILES {
        let path = format!("{dir}/{name}");
        handled.push(path.clone());
        let Some(text) = read_text(tree, &path, report) else { continue };
        let entries = match parse_master_file(&text, &path) {
            Ok(e) => e,
            Err(e) => {
                report.diagnostics.push(e.diagnostic(&path));
                continue;
            }
        };
        for (key, pos, node) in entries {
            if !seen.insert(key.clone()) {
                report.diagnostics.push(Diagnostic::new(
                    &path,
                    Some(pos),
                    format!("Duplicate configuration keys found in '{path}': {key}"),
                ));
                continue;
            }
            match read_entry(&key, &path, pos, &node) {
                Ok(config) => {
                    *report.counts.entry("master_configs").or_default() += 1;
                    let context = format!("master config '{key}'");
                    report.diagnostics.extend(config.unknown.iter().map(|u| u.diagnostic(&path, &context)));
                    warn_accepted_oddities(&config, runners.as_ref(), report);
                }
                Err(e) => report.diagnostics.push(e.diagnostic(&path)),
            }
        }
    }
    handled
}

fn warn_accepted_oddities(config: &MasterConfig, runners: Option<&Runners>, report: &mut LintReport) {
    let warn = |message: String| Diagnostic::new(&config.file, Some(config.pos), message).warning();
    if let Some(r) = runners {
        if !r.labels.contains_key(&config.runner) {
            report.diagnostics.push(warn(format!(
                "'{}': runner label '{}' is not in runners.yaml (accepted: GitHub schedules on the label)",
                config.key, config.runner
            )));
        }
    }
    for block in &config.fixed {
        let name = seq_name(block.isl, block.osl);
        if name != "1k1k" && name != "8k1k" {
            report.diagnostics.push(warn(format!(
                "'{}': fixed-seq-len {name} rows are generated but no CI job runs them (only 1k1k and 8k1k)",
                config.key
            )));
        }
        let lists: Vec<&Option<Vec<i64>>> = match &block.search_space {
            FixedSpaces::Single(s) => s.iter().map(|s| &s.conc_list).collect(),
            FixedSpaces::Multi(s) => s.iter().map(|s| &s.conc_list).collect(),
        };
        for list in lists.into_iter().flatten() {
            warn_duplicate_conc(config, list, report);
        }
    }
    for block in &config.agentic {
        for space in &block.search_space {
            if let Some(list) = &space.conc_list {
                warn_duplicate_conc(config, list, report);
            }
        }
    }
}

fn warn_duplicate_conc(config: &MasterConfig, list: &[i64], report: &mut LintReport) {
    let mut seen = HashSet::new();
    if let Some(dup) = list.iter().find(|c| !seen.insert(**c)) {
        report.diagnostics.push(
            Diagnostic::new(
                &config.file,
                Some(config.pos),
                format!("'{}': conc-list repeats {dup}; each repeat becomes a duplicate CI job", config.key),
            )
            .warning(),
        );
    }
}

/// Lints the changelog: YAML, list shape and every entry's schema.
pub fn lint_changelog(tree: &dyn crate::repo::Tree, path: &str, report: &mut LintReport) {
    let Some(text) = read_text(tree, path, report) else { return };
    match yaml::parse(&text, path).and_then(|root| Changelog::read_forward(&root).map_err(|e| e.in_file(path))) {
        Ok((changelog, unknown)) => {
            *report.counts.entry("changelog_entries").or_default() += changelog.entries.len();
            report.diagnostics.extend(unknown.iter().map(|u| u.diagnostic(path, "")));
        }
        Err(e) => report.diagnostics.push(Diagnostic::from_yaml(path, &e)),
    }
    if !text.is_empty() && !text.ends_with('\n') {
        report.diagnostics.push(Diagnostic::new(path, None, "the changelog does not end with a newline"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Severity;
    use crate::repo::MemTree;

    #[test]
    fn reports_every_invalid_entry_and_warns_on_accepted_oddities() {
        let good = "  image: i\n  model: m\n  model-prefix: p\n  runner: gone\n  precision: fp8\n  framework: f\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - {isl: 1024, osl: 8192, search-space: [{tp: 8, conc-list: [4, 4]}]}\n";
        let bad = good.replace("tp: 8", "tp: \"8\"");
        let tree = MemTree::new()
            .with("configs/amd-master.yaml", format!("a:\n{good}b:\n{bad}"))
            .with("configs/nvidia-master.yaml", format!("c:\n{bad}a:\n{good}"))
            .with("configs/runners.yaml", "labels:\n  r: [r_0]\n")
            .with("perf-changelog.yaml", "- config-keys: [a]\n  description: [x]\n");
        let mut report = LintReport::default();
        let handled = lint_configs(&tree, "configs", &mut report);
        lint_changelog(&tree, "perf-changelog.yaml", &mut report);
        assert_eq!(handled.len(), 3);
        let lines: Vec<String> = report.diagnostics.iter().map(|d| d.to_string()).collect();
        let errors: Vec<&String> = lines.iter().filter(|l| !l.contains("warning")).collect();
        assert_eq!(errors.len(), 4, "{lines:#?}");
        assert!(errors[0].starts_with("configs/amd-master.yaml:22:50: master config 'b': scenarios.fixed-seq-len[0].search-space[0].tp: expected an integer"), "{lines:#?}");
        assert_eq!(
            errors[2],
            "configs/nvidia-master.yaml:12:1: Duplicate configuration keys found in 'configs/nvidia-master.yaml': a"
        );
        assert!(errors.iter().any(|e| e.starts_with("perf-changelog.yaml:1:3: [0]: missing field `pr-link`")));
        let mut forward = LintReport::default();
        let tree = MemTree::new().with("c.yaml", "- config-keys: [a]\n  description: [x]\n  pr-link: x\n  owner: y\n");
        lint_changelog(&tree, "c.yaml", &mut forward);
        let unknown: Vec<String> = forward.diagnostics.iter().map(|d| d.to_string()).collect();
        assert_eq!(unknown.len(), 1, "{unknown:?}");
        assert!(unknown[0].starts_with("c.yaml:4:3: warning: unknown field `[0].owner`"), "{unknown:?}");
        assert!(errors.iter().any(|e| e.contains("master config 'c'")));
        let warnings: Vec<&String> = lines.iter().filter(|l| l.contains("warning")).collect();
        assert_eq!(warnings.len(), 3, "{warnings:#?}");
        assert!(warnings.iter().any(|w| w.contains("runner label 'gone' is not in runners.yaml")));
        assert!(warnings
            .iter()
            .any(|w| w.contains("fixed-seq-len 1024_8192 rows are generated but no CI job runs them")));
        assert!(warnings.iter().any(|w| w.contains("conc-list repeats 4")));
        assert!(report.diagnostics.iter().filter(|d| d.severity == Severity::Warning).count() == 3);
    }

    /// Decision TD1: an unknown field of runners.yaml or of a master config is a warning with
    /// its line, and the entry is still read; a known field with a bad value stays an error.
    #[test]
    fn unknown_fields_are_warnings() {
        let entry = "  image: i\n  model: m\n  model-prefix: p\n  runner: r\n  precision: fp8\n  framework: f\n  multinode: false\n  trace-source: x\n  scenarios:\n    fixed-seq-len:\n    - {isl: 1024, osl: 1024, search-space: [{tp: 8, conc-list: [4]}]}\n";
        let tree = MemTree::new()
            .with("configs/amd-master.yaml", format!("a:\n{entry}"))
            .with("configs/nvidia-master.yaml", format!("b:\n{}", entry.replace("tp: 8", "tp: x")))
            .with("configs/runners.yaml", "labels:\n  r: [r_0]\npools: {}\n");
        let mut report = LintReport::default();
        lint_configs(&tree, "configs", &mut report);
        let lines: Vec<String> = report.diagnostics.iter().map(|d| d.to_string()).collect();
        assert!(lines.contains(&"configs/runners.yaml:3:1: warning: unknown field `pools` (not read by sweepgate; a newer upstream field is carried and the rest is read)".to_owned()), "{lines:#?}");
        assert!(
            lines.iter().any(|l| l
                .starts_with("configs/amd-master.yaml:9:3: warning: master config 'a': unknown field `trace-source`")),
            "{lines:#?}"
        );
        assert!(lines.iter().any(|l| l.starts_with("configs/nvidia-master.yaml:12:50: master config 'b': scenarios.fixed-seq-len[0].search-space[0].tp: expected an integer")), "{lines:#?}");
        assert_eq!(report.counts.get("master_configs"), Some(&1));
    }
}
