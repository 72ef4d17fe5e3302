//! The CI shapes table (`src/results/shapes.toml`, issue 28 items 1 and 7) against the real
//! workflows of the history bundle's tip: every source line a row names uploads exactly the
//! row's pattern, and `docs/ci-shapes.md` lists every row. Skip rules: `support/history.rs`.

#[path = "support/history.rs"]
mod history;

use std::process::Command;

use sweepgate::results::shapes::{self, Shape};

/// A row's pattern as a workflow spells it: `{RF}` is `${{ env.RESULT_FILENAME }}`, `{EXP_NAME}`
/// is `${{ env.EXP_NAME }}`, and a free placeholder is the upload's glob `*`.
fn workflow_form(pattern: &str) -> String {
    pattern
        .replace("{RF}", "${{ env.RESULT_FILENAME }}")
        .replace("{EXP_NAME}", "${{ env.EXP_NAME }}")
        .replace("{CONC}", "*")
        .replace("{SUFFIX}", "*")
}

/// The values an upload line's `name:` or `path:` can take: `${{ inputs.eval-only && 'A' || 'B' }}`
/// is A or B, and collect-evals' `${{ inputs.result-prefix || 'all' }}` is `all` (run-sweep.yml
/// calls it without a prefix).
fn upload_values(line: &str) -> Vec<String> {
    let value = line.trim().trim_start_matches("- ");
    let Some(value) = value.strip_prefix("name: ").or_else(|| value.strip_prefix("path: ")) else {
        return Vec::new();
    };
    let value = value.replace("${{ inputs.result-prefix || 'all' }}", "all");
    let ternary = "${{ inputs.eval-only && '";
    match value.split_once(ternary) {
        Some((before, rest)) => {
            let Some((a, rest)) = rest.split_once("' || '") else { return vec![value] };
            let Some((b, after)) = rest.split_once("' }}") else { return vec![value] };
            vec![format!("{before}{a}{after}"), format!("{before}{b}{after}")]
        }
        None => vec![value],
    }
}

#[test]
fn every_shape_is_uploaded_by_the_workflow_line_it_names_and_documented() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/ci-shapes.md")).unwrap();
    let rows: Vec<&Shape> = shapes::artifacts().iter().chain(shapes::aggregate_files()).collect();
    for shape in &rows {
        let documented = shape.name.replace('{', "<").replace('}', ">");
        assert!(docs.contains(&format!("`{documented}`")), "docs/ci-shapes.md does not list `{documented}`");
    }

    let Some(history) = history::history_bundle("the CI shapes check") else { return };
    let work = tempfile::tempdir().unwrap();
    let clone = work.path().join("ix");
    history::clone_history(&history, &clone);
    let mut wrong = Vec::new();
    for shape in &rows {
        for source in &shape.sources {
            let (path, line) = source.rsplit_once(':').unwrap();
            let line: usize = line.parse().unwrap();
            let out =
                Command::new("git").arg("-C").arg(&clone).args(["show", &format!("HEAD:{path}")]).output().unwrap();
            assert!(out.status.success(), "{path} is not in the tip");
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let at = text.lines().nth(line - 1).unwrap_or_default();
            let form = workflow_form(&shape.name);
            if !upload_values(at).contains(&form) {
                wrong.push(format!("{} ({source}): expected `{form}`, the line is `{}`", shape.name, at.trim()));
            }
        }
    }
    assert!(wrong.is_empty(), "{} shape rows do not match their workflow lines:\n{}", wrong.len(), wrong.join("\n"));
    println!("{} shape rows checked against their workflow lines", rows.len());
}

#[test]
fn upload_values_expand_the_workflows_expressions() {
    assert_eq!(
        upload_values("          name: ${{ inputs.eval-only && 'eval_server_logs_' || 'server_logs_' }}${{ env.RESULT_FILENAME }}"),
        ["eval_server_logs_${{ env.RESULT_FILENAME }}", "server_logs_${{ env.RESULT_FILENAME }}"]
    );
    assert_eq!(
        upload_values("          name: eval_results_${{ inputs.result-prefix || 'all' }}"),
        ["eval_results_all"]
    );
    assert_eq!(upload_values("      - name: Upload result"), ["Upload result"]);
    assert!(upload_values("        run: |").is_empty());
}
