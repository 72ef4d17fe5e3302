//! The models whose architecture a change of the PR overrides at load time (Check 8's subject,
//! and what the collector fetches the `config.json` of).

use std::collections::BTreeSet;

use super::affected::{affected_configs, all_configs, sku};
use super::configs::AffectedConfig;
use super::scan::{self, Role};
use super::Context;

/// Knobs that rewrite a model's architecture at load time.
pub const OVERRIDE_KNOBS: [&str; 6] = [
    "--hf-overrides",
    "hf_overrides",
    "hf-overrides",
    "--json-model-override-args",
    "json-model-override-args",
    "json_model_override_args",
];

/// The model repos a changed file serves: a recipe's `model.path`, else the `model` of every
/// master-config entry whose launcher stem (`<prefix>_<precision>_<sku>_<engine>`) starts the
/// file name, else the models of the PR's affected configs.
pub fn served_models(cx: &Context, path: &str) -> Vec<String> {
    if scan::role(path) == Role::Recipe {
        let recipe = cx.head_recipe(path);
        let model = recipe.as_deref().and_then(|r| r.as_ref().ok()).and_then(|r| r.model_path().map(str::to_owned));
        if let Some(model) = model {
            return vec![model];
        }
    }
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let stem = |c: &AffectedConfig| {
        let engine = c.framework.trim_start_matches("dynamo-").replace('-', "_");
        format!("{}_{}_{}_{engine}", c.model_prefix, c.precision, sku(&c.runner)).to_ascii_lowercase()
    };
    let mut models: BTreeSet<String> = all_configs(cx)
        .unwrap_or_default()
        .iter()
        .filter(|c| name.starts_with(&stem(c)))
        .map(|c| c.model.clone())
        .collect();
    if models.is_empty() {
        models = affected_configs(cx).unwrap_or_default().iter().map(|c| c.model.clone()).collect();
    }
    models.into_iter().filter(|m| !m.is_empty()).collect()
}

/// Model repos whose config.json Check 8 reads: those served by changed files that add an
/// override (the collector fetches them with the other Hugging Face configs).
pub fn override_models(cx: &Context) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (file, role) in scan::changed(cx.evidence) {
        let adds_override = role != Role::Other
            && scan::added_lines_of(cx.evidence, file).is_some_and(|lines| {
                lines.iter().any(|l| OVERRIDE_KNOBS.iter().any(|k| scan::code_part(l.text).contains(k)))
            });
        if adds_override {
            out.extend(served_models(cx, &file.filename));
        }
    }
    out
}
