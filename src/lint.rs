//! `sweepgate lint`: parse every policy file of a benchmark repository and report each problem
//! as `path:line:col: message`. Each domain parser contributes one section.

use crate::diag::{read_text, Diagnostic, LintReport};
use crate::domain::eval_thresholds::EvalThresholds;
use crate::domain::golden_al::{self, GoldenAlFile};
use crate::domain::models_md::{self, ModelsMd};
use crate::domain::sweepgate_policy::SweepgatePolicy;
use crate::domain::waiver::Waiver;
use crate::repo::{Layout, Logical, RepoError, Tree};
use crate::yaml;

/// Where the native single-node srt-slurm recipes sit, below the configs folder's root.
const SINGLE_NODE_RECIPES: &str = "benchmarks/single_node/srt-slurm-recipes";

/// Lints every policy file the layout finds in `tree`.
pub fn lint(tree: &dyn Tree, layout: &Layout) -> Result<LintReport, RepoError> {
    let mut report = LintReport::default();
    for logical in Logical::ALL {
        if let Some(path) = layout.resolve(tree, logical)? {
            let key =
                serde_json::to_value(logical).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
            report.layout.insert(key, path.clone());
            match logical {
                Logical::ConfigsDir => {
                    let handled = crate::matrix::lint::lint_configs(tree, &path, &mut report);
                    for file in yaml_files(tree, &path)?.into_iter().filter(|f| !handled.contains(f)) {
                        lint_yaml_syntax(tree, &file, &mut report);
                    }
                    // The native single-node recipes `srt-recipe:` rows name (newer layout).
                    let root = path.strip_suffix("configs").unwrap_or("");
                    for file in yaml_files(tree, &format!("{root}{SINGLE_NODE_RECIPES}"))? {
                        lint_recipe(tree, &file, &mut report);
                    }
                }
                Logical::GoldenAlDir => lint_golden_al(tree, &path, &mut report)?,
                Logical::WaiverDir => {
                    for file in tree.list(&path)?.into_iter().filter(|f| is_waiver_candidate(f)) {
                        lint_parsed(tree, &file, &mut report, "waivers", Waiver::parse);
                    }
                }
                Logical::SrtRecipesDir => {
                    for file in yaml_files(tree, &path)? {
                        lint_recipe(tree, &file, &mut report);
                    }
                }
                Logical::Changelog => crate::matrix::lint::lint_changelog(tree, &path, &mut report),
                Logical::EvalThresholds => {
                    lint_parsed(tree, &path, &mut report, "eval_threshold_files", EvalThresholds::parse)
                }
                Logical::Codeowners => lint_codeowners(tree, &path, &mut report),
                Logical::SweepgatePolicy => {
                    lint_parsed(tree, &path, &mut report, "sweepgate_policy_files", SweepgatePolicy::parse)
                }
                Logical::ReviewChecklist => lint_checklist(tree, &path, &mut report),
                Logical::ModelsMd => lint_models_md(tree, &path, &mut report),
                Logical::ModelsZhMd => lint_parsed(tree, &path, &mut report, "models_md_files", ModelsMd::parse),
            }
        }
    }
    lint_models_translation(tree, layout, &mut report)?;
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

/// Parses one file with a policy parser that returns its value or positioned errors.
fn lint_parsed<T>(
    tree: &dyn Tree,
    path: &str,
    report: &mut LintReport,
    what: &'static str,
    parse: fn(&str, &str) -> Result<T, Vec<Diagnostic>>,
) {
    let Some(text) = read_text(tree, path, report) else { return };
    match parse(&text, path) {
        Ok(_) => report.count(what, 1),
        Err(diags) => report.diagnostics.extend(diags),
    }
}

/// MODELS.md: its problems, the sentences it cannot read (warnings), and the deprecation facts
/// it read (decision RV4).
fn lint_models_md(tree: &dyn Tree, path: &str, report: &mut LintReport) {
    let Some(text) = read_text(tree, path, report) else { return };
    match ModelsMd::parse(&text, path) {
        Ok(models) => {
            report.count("models_md_files", 1);
            report.diagnostics.extend(models.unread_warnings());
            report.facts.extend(models.facts());
        }
        Err(diags) => report.diagnostics.extend(diags),
    }
}

/// Golden AL curves, and the folder README's table of them.
fn lint_golden_al(tree: &dyn Tree, dir: &str, report: &mut LintReport) -> Result<(), RepoError> {
    let mut parsed = Vec::new();
    let present = yaml_files(tree, dir)?;
    for file in &present {
        let Some(text) = read_text(tree, file, report) else { continue };
        match GoldenAlFile::parse(&text, file) {
            Ok(golden) => parsed.push(golden),
            Err(diags) => report.diagnostics.extend(diags),
        }
    }
    report.count("golden_al_files", parsed.len());
    let readme = format!("{dir}/README.md");
    if let Some(text) = tree.read(&readme)?.and_then(|b| yaml::text_of(&b).ok().map(str::to_owned)) {
        report.diagnostics.extend(golden_al::readme_drift(&text, &readme, &present, &parsed));
    }
    Ok(())
}

/// Warns where `MODELS_zh.md` disagrees with `MODELS.md` (both already linted on their own).
fn lint_models_translation(tree: &dyn Tree, layout: &Layout, report: &mut LintReport) -> Result<(), RepoError> {
    let (Some(en_path), Some(zh_path)) =
        (layout.resolve(tree, Logical::ModelsMd)?, layout.resolve(tree, Logical::ModelsZhMd)?)
    else {
        return Ok(());
    };
    let parse = |path: &str| -> Result<Option<ModelsMd>, RepoError> {
        let text = tree.read(path)?.and_then(|b| yaml::text_of(&b).ok().map(str::to_owned));
        Ok(text.and_then(|t| ModelsMd::parse(&t, path).ok()))
    };
    if let (Some(en), Some(zh)) = (parse(&en_path)?, parse(&zh_path)?) {
        report.diagnostics.extend(models_md::translation_drift(&en, &zh));
    }
    Ok(())
}

/// Waiver files: Markdown in the waiver folder other than a README.
fn is_waiver_candidate(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or_default();
    name.ends_with(".md") && !name.to_ascii_lowercase().starts_with("readme")
}

fn lint_codeowners(tree: &dyn Tree, path: &str, report: &mut LintReport) {
    let Some(text) = read_text(tree, path, report) else { return };
    let (owners, diags) = crate::domain::codeowners::Codeowners::parse(&text, path);
    report.count("codeowners_rules", owners.rules.len());
    report.diagnostics.extend(diags);
}

fn lint_checklist(tree: &dyn Tree, path: &str, report: &mut LintReport) {
    let Some(text) = read_text(tree, path, report) else { return };
    let (template, diags) = crate::domain::checklist_template::ChecklistTemplate::parse(&text, path);
    report.count("checklist_items", template.map_or(0, |t| t.items.len()));
    report.diagnostics.extend(diags);
}

fn yaml_files(tree: &dyn Tree, dir: &str) -> Result<Vec<String>, RepoError> {
    Ok(tree.list(dir)?.into_iter().filter(|f| f.ends_with(".yaml") || f.ends_with(".yml")).collect())
}

fn lint_recipe(tree: &dyn Tree, path: &str, report: &mut LintReport) {
    let Some(text) = read_text(tree, path, report) else { return };
    report.count("srt_recipes", 1);
    report.diagnostics.extend(crate::domain::srt_recipe::lint(&text, path));
}
