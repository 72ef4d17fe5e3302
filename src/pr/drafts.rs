//! The draft checkpoints the PR serves (Check 13's subject, and what the collector fetches the
//! `config.json` of): the effective recipe's files (changed speculative-decoding scripts and
//! recipes and the head files they name), the separate drafts they and the affected launches
//! name, else each speculative config's target checkpoint (its embedded draft head).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use regex::Regex;

use super::affected::affected_configs;
use super::configs::{AffectedConfig, ConfigReach};
use super::reach::affected_reach;
use super::scan::{self, Role};
use super::Context;
use crate::domain::launch::shell::ScriptValues;
use crate::domain::launch::LaunchSetting;
use crate::domain::precision;
use crate::evidence::Evidence;

pub const SPEC_MARKERS: [&str; 6] = ["mtp", "eagle", "dspark", "dflash", "nextn", "speculative"];

pub fn is_spec_file(path: &str, text: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    SPEC_MARKERS.iter().any(|m| name.contains(m))
        || text.lines().map(scan::code_part).any(|c| SPEC_MARKERS.iter().any(|m| c.to_ascii_lowercase().contains(m)))
}

/// Changed speculative-decoding scripts and recipes, and the head scripts and recipes whose file
/// name their code (comments aside) contains. One pass over each changed file finds every name
/// (issue 24: a name-by-name rescan was quadratic in the tree's size).
pub fn effective_files(ev: &Evidence) -> BTreeSet<&str> {
    let changed: Vec<&str> = scan::changed(ev)
        .filter(|(_, role)| matches!(role, Role::Script | Role::Recipe))
        .map(|(f, _)| f.filename.as_str())
        .filter(|p| ev.head.text(p).is_some_and(|t| is_spec_file(p, t)))
        .collect();
    let mut files: BTreeSet<&str> = changed.iter().copied().collect();
    // File name → the head scripts and recipes of that name. A name is looked for inside one
    // code line, so one holding a newline (or none) never matches.
    let mut by_name: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for other in ev.head.paths().filter(|o| matches!(scan::role(o), Role::Script | Role::Recipe)) {
        let name = other.rsplit('/').next().unwrap_or(other);
        if !name.is_empty() && !name.contains('\n') {
            by_name.entry(name).or_default().push(other);
        }
    }
    let names: Vec<&str> = by_name.keys().copied().collect();
    let finder = AhoCorasick::new(&names);
    for path in &changed {
        let Some(text) = ev.head.text(path) else { continue };
        let code = text.lines().map(scan::code_part).collect::<Vec<_>>().join("\n");
        // Automaton limits (far beyond a bounded evidence's names): every file counts as named,
        // so nothing the recipe may inherit goes unread.
        let named: Vec<&str> = match &finder {
            Ok(finder) => finder.find_overlapping_iter(&code).map(|m| names[m.pattern().as_usize()]).collect(),
            Err(_) => names.clone(),
        };
        for name in named {
            files.extend(by_name.get(name).into_iter().flatten().filter(|other| **other != *path));
        }
    }
    files
}

/// HF repo ids of separate draft checkpoints the effective recipe serves: SGLang's
/// `--speculative-draft-model-path` (flag or recipe key), the `model` of vLLM's
/// `--speculative-config` (inline JSON, or a YAML mapping under `speculative-config:`) and
/// TRT-LLM's `speculative_model_dir` / `speculative_model` (extra LLM-API config), `$VAR` values
/// resolved from the file's assignments. A config without one serves the draft head embedded in
/// its target checkpoint (MTP/NextN).
pub fn drafts_in(text: &str) -> BTreeSet<String> {
    static DRAFT: OnceLock<Option<(Regex, Regex, Regex)>> = OnceLock::new();
    let Some((inline, block_start, block_model)) = DRAFT
        .get_or_init(|| {
            let value = r#"["']?(\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|[A-Za-z0-9][\w.-]*/[\w.-]+)"#;
            let inline = Regex::new(&format!(
                r#"(?:speculative[-_]draft[-_]model[-_]path["']?\s*(?:=|:|\s)\s*|speculative[-_]model(?:[-_]dir)?["']?\s*(?:=|:)\s*|speculative[-_]config\b.*?["']model["']\s*:\s*){value}"#
            ))
            .ok()?;
            // A YAML mapping `speculative-config:` / `speculative_config:` with nothing after it.
            let block_start = Regex::new(r#"^(\s*)["']?speculative[-_]config["']?\s*:\s*$"#).ok()?;
            let block_model = Regex::new(&format!(r#"^\s*["']?model["']?\s*:\s*{value}"#)).ok()?;
            Some((inline, block_start, block_model))
        })
        .as_ref()
    else {
        return BTreeSet::new();
    };
    let vars = ScriptValues::of(text);
    let mut ids = Vec::new();
    let mut block: Option<usize> = None;
    for line in text.lines().map(scan::code_part) {
        let indent = line.len() - line.trim_start().len();
        if let Some(open) = block {
            if line.trim().is_empty() || indent > open {
                ids.extend(block_model.captures(line).map(|c| c[1].to_owned()));
                ids.extend(inline.captures_iter(line).map(|c| c[1].to_owned()));
                continue;
            }
            block = None;
        }
        if let Some(c) = block_start.captures(line) {
            block = Some(c[1].len());
            continue;
        }
        ids.extend(inline.captures_iter(line).map(|c| c[1].to_owned()));
    }
    // A draft named through a variable is each checkpoint the variable may hold.
    ids.into_iter()
        .flat_map(|id| match id.starts_with('$') {
            true => vars.expand(&id, &[], 16).unwrap_or_default(),
            false => vec![id],
        })
        .filter(|id| id.contains('/') && !id.starts_with('/'))
        .collect()
}

/// The settings of the affected speculative-decoding configs' launches (13.k): their scripts, the
/// files those source and their recipes (base and launcher `--set`s applied), as the launch model
/// reads them, unchanged files included (an image-only bump changes none). Settings of a
/// launch variant without speculative decoding (`…/none`) are not the draft's.
pub fn spec_settings(reaches: &[ConfigReach]) -> impl Iterator<Item = (&ConfigReach, &LaunchSetting)> {
    reaches
        .iter()
        .filter(|r| r.config.speculative())
        .flat_map(|r| r.launch.settings.iter().filter(|s| !s.variant.ends_with("/none")).map(move |s| (r, s)))
}

/// The separate draft checkpoint a launch setting names: SGLang's `--speculative-draft-model-path`,
/// TRT-LLM's `speculative_model(_dir)`, ATOM's `--draft-model` (a recipe's `draft-model:`, TD8),
/// the `model` of a speculative config.
pub fn launch_draft(setting: &LaunchSetting) -> Option<String> {
    let name = setting.name.trim_start_matches('-').replace('_', "-").to_ascii_lowercase();
    let id = match name.as_str() {
        "speculative-draft-model-path" | "speculative-model" | "speculative-model-dir" | "draft-model" => {
            Some(setting.value.clone())
        }
        "speculative-config" => precision::speculative_config_model(&setting.value),
        _ => None,
    }?;
    (setting.resolved && id.contains('/') && !id.starts_with('/')).then_some(id)
}

/// The separate draft checkpoints the effective recipe serves: named by a changed file or a file
/// it names, or by the launch of an affected speculative-decoding config.
pub fn separate_drafts(ev: &Evidence, reaches: &[ConfigReach]) -> BTreeSet<String> {
    let mut out: BTreeSet<String> =
        effective_files(ev).into_iter().filter_map(|p| ev.head.text(p)).flat_map(drafts_in).collect();
    out.extend(spec_settings(reaches).filter_map(|(_, s)| launch_draft(s)));
    out
}

/// The checkpoint (model repo) of each speculative-decoding config, by key, from the head's
/// master configs.
pub fn target_models(spec_configs: &[&AffectedConfig]) -> BTreeMap<String, String> {
    spec_configs.iter().map(|c| (c.key.clone(), c.model.clone())).collect()
}

/// The checkpoints whose stored precision counts, `(owner, repo)`: the separate drafts the recipe
/// serves, else each config's target checkpoint (its embedded draft head, 13.b).
pub fn draft_checkpoints(
    separate: &BTreeSet<String>,
    spec_configs: &[&AffectedConfig],
    models: &BTreeMap<String, String>,
) -> BTreeSet<(String, String)> {
    if separate.is_empty() {
        spec_configs.iter().map(|c| (c.key.clone(), models.get(&c.key).cloned().unwrap_or_default())).collect()
    } else {
        separate.iter().map(|d| (d.clone(), d.clone())).collect()
    }
}

/// The draft checkpoints whose `config.json` Check 13 reads (the collector fetches them): the
/// separate drafts of the effective recipe, else the target checkpoints that embed the heads.
pub fn draft_models(ev: &Evidence) -> BTreeSet<String> {
    let cx = Context::new(ev);
    let affected = affected_configs(&cx).unwrap_or_default();
    let spec_configs: Vec<&AffectedConfig> = affected.iter().filter(|c| c.speculative()).collect();
    let reaches = if spec_configs.is_empty() { &[][..] } else { affected_reach(&cx).unwrap_or_default() };
    let separate = separate_drafts(ev, reaches);
    draft_checkpoints(&separate, &spec_configs, &target_models(&spec_configs))
        .into_iter()
        .map(|(_, model)| model)
        .filter(|m| !m.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separate_drafts_are_read_from_flags_recipe_keys_and_speculative_config() {
        let sglang = "DRAFT=org/Draft-A\npython -m sglang.launch_server --speculative-draft-model-path \"$DRAFT\"\n";
        assert_eq!(drafts_in(sglang), BTreeSet::from(["org/Draft-A".to_owned()]));
        let recipe = "      speculative-draft-model-path: org/Draft-B\n# --speculative-draft-model-path org/Old\n";
        assert_eq!(drafts_in(recipe), BTreeSet::from(["org/Draft-B".to_owned()]));
        let vllm = "vllm serve x --speculative-config '{\"method\": \"eagle3\", \"model\": \"org/Draft-C\"}'\n";
        assert_eq!(drafts_in(vllm), BTreeSet::from(["org/Draft-C".to_owned()]));
        assert!(drafts_in("--speculative-draft-model-path /models/local --speculative-draft-model-path $UNSET\n")
            .is_empty());
        // vLLM's speculative-config as a YAML mapping in a recipe.
        let block = "    decode:\n      speculative-config:\n        method: eagle3\n        model: org/Draft-D\n      tensor-parallel-size: 8\n      model: org/Target\n";
        assert_eq!(drafts_in(block), BTreeSet::from(["org/Draft-D".to_owned()]));
        // TRT-LLM's extra LLM-API config (both spellings).
        let trt =
            "speculative_config:\n  decoding_type: Eagle\n  max_draft_len: 3\n  speculative_model_dir: org/Draft-E\n";
        assert_eq!(drafts_in(trt), BTreeSet::from(["org/Draft-E".to_owned()]));
        assert_eq!(drafts_in("  speculative_model: \"org/Draft-F\"\n"), BTreeSet::from(["org/Draft-F".to_owned()]));
    }
}
