//! The master-config entries a PR affects: entries of a changed master file whose lines the PR
//! added to, and entries named by the changelog entries it appended. Read from the raw YAML at
//! the head (positions kept), so a check can name `file:line`.

use std::collections::BTreeSet;

use super::scan::{self, Role};
use super::Context;
use crate::yaml::{self, Node, Value};

/// One affected master-config entry, with the fields the checks compare.
#[derive(Debug, Clone, PartialEq)]
pub struct AffectedConfig {
    pub key: String,
    pub file: String,
    pub line: u32,
    pub image: String,
    pub model_prefix: String,
    pub precision: String,
    pub framework: String,
    pub runner: String,
    pub multinode: bool,
    /// `(isl, osl)` of each fixed-seq-len block.
    pub fixed_seq: Vec<(i64, i64)>,
    pub agentic: bool,
    /// Distinct `spec-decoding` values of its search spaces (`none` when unset).
    pub spec_decoding: BTreeSet<String>,
}

fn text_field(entry: &Node, key: &str) -> String {
    entry.get(key).and_then(Node::key_text).map(|t| t.into_owned()).unwrap_or_default()
}

fn collect_spec(blocks: Option<&Node>, out: &mut BTreeSet<String>) {
    for block in blocks.and_then(Node::as_seq).unwrap_or_default() {
        for point in block.get("search-space").and_then(Node::as_seq).unwrap_or_default() {
            out.insert(point.get("spec-decoding").and_then(Node::as_str).unwrap_or("none").to_owned());
        }
    }
}

fn entry_of(file: &str, key: &Node, entry: &Node) -> AffectedConfig {
    let scenarios = entry.get("scenarios");
    let fixed = scenarios.and_then(|s| s.get("fixed-seq-len"));
    let agentic = scenarios.and_then(|s| s.get("agentic-coding"));
    let mut spec_decoding = BTreeSet::new();
    collect_spec(fixed, &mut spec_decoding);
    collect_spec(agentic, &mut spec_decoding);
    let int = |n: Option<&Node>| match n.map(|n| &n.value) {
        Some(Value::Int(i)) => *i,
        _ => 0,
    };
    AffectedConfig {
        key: key.key_text().map(|t| t.into_owned()).unwrap_or_default(),
        file: file.to_owned(),
        line: key.pos.line,
        image: text_field(entry, "image"),
        model_prefix: text_field(entry, "model-prefix"),
        precision: text_field(entry, "precision"),
        framework: text_field(entry, "framework"),
        runner: text_field(entry, "runner"),
        multinode: matches!(entry.get("multinode").map(|n| &n.value), Some(Value::Bool(true))),
        fixed_seq: fixed
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .map(|b| (int(b.get("isl")), int(b.get("osl"))))
            .collect(),
        agentic: agentic.and_then(Node::as_seq).is_some_and(|s| !s.is_empty()),
        spec_decoding,
    }
}

/// All entries of every master file at the head, in file order (parsed once per Context: the
/// master files are hundreds of KiB and most checks read them).
pub fn all_configs(cx: &Context) -> Result<Vec<AffectedConfig>, String> {
    cx.all_configs.get_or_init(|| parse_all_configs(cx)).clone()
}

fn parse_all_configs(cx: &Context) -> Result<Vec<AffectedConfig>, String> {
    let ev = cx.evidence;
    let mut out = Vec::new();
    for path in ev.head.paths().filter(|p| scan::role(p) == Role::MasterConfig) {
        let text = ev.head.text(path).ok_or_else(|| format!("{path} is not UTF-8"))?;
        let root = yaml::parse(text, path).map_err(|e| e.to_string())?;
        for (key, entry) in root.as_map().unwrap_or_default() {
            out.push(entry_of(path, key, entry));
        }
    }
    Ok(out)
}

/// Keys named by the `config-keys` of changelog entries the PR appended (`*` full-match
/// wildcards resolved against `known`).
pub fn changelog_keys(cx: &Context, known: &[AffectedConfig]) -> BTreeSet<String> {
    let ev = cx.evidence;
    let mut keys = BTreeSet::new();
    for file in ev.files.iter().filter(|f| scan::logical_path(&f.filename) == "perf-changelog.yaml") {
        let Some(lines) = scan::added_lines_of(ev, file) else { continue };
        let block: String = lines.iter().map(|l| format!("{}\n", l.text)).collect();
        let Ok(root) = yaml::parse(&block, &file.filename) else { continue };
        for entry in root.as_seq().unwrap_or_default() {
            for pattern in entry.get("config-keys").and_then(Node::as_seq).unwrap_or_default() {
                let Some(pattern) = pattern.as_str() else { continue };
                for config in known.iter().filter(|c| wildcard_match(pattern, &c.key)) {
                    keys.insert(config.key.clone());
                }
            }
        }
    }
    keys
}

/// The changelog processor's wildcard: `*` matches any run of characters, everything else is
/// literal, the whole key must match (spec 20 §4.2).
pub fn wildcard_match(pattern: &str, key: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == key;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !key.starts_with(first) || !key[first.len()..].ends_with(last) || key.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &key[first.len()..key.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

/// Entries the PR affects: edited entries of changed master files, and entries its new
/// changelog entries name. `Err` when a changed master file cannot be read.
pub fn affected_configs(cx: &Context) -> Result<Vec<AffectedConfig>, String> {
    let ev = cx.evidence;
    let all = all_configs(cx)?;
    let mut wanted: BTreeSet<String> = changelog_keys(cx, &all);
    for (file, role) in scan::changed(ev) {
        if role != Role::MasterConfig {
            continue;
        }
        let lines = scan::added_lines_of(ev, file)
            .ok_or_else(|| format!("{}: neither its diff nor its content is in the evidence", file.filename))?;
        let mut entries: Vec<&AffectedConfig> = all.iter().filter(|c| c.file == file.filename).collect();
        entries.sort_by_key(|c| c.line);
        for added in lines {
            if let Some(entry) = entries.iter().rev().find(|c| c.line <= added.line) {
                wanted.insert(entry.key.clone());
            }
        }
        if entries.is_empty() && ev.head.get(&file.filename).is_none() {
            return Err(format!("{} is not in the evidence at the head", file.filename));
        }
    }
    Ok(all.into_iter().filter(|c| wanted.contains(&c.key)).collect())
}

/// The base GPU SKU of a runner label (`cluster:mi355x-amds` → `mi355x`, `gb300-nv` → `gb300`).
pub fn sku(runner: &str) -> String {
    let r = runner.strip_prefix("cluster:").unwrap_or(runner);
    r.split(['-', '_']).next().unwrap_or(r).to_ascii_lowercase()
}

/// NVIDIA GPU SKUs (for Check 16's applicability).
pub fn is_nvidia_sku(sku: &str) -> bool {
    ["h100", "h200", "b200", "b300", "gb200", "gb300", "rtx", "l40", "a100", "vr", "rubin"]
        .iter()
        .any(|p| sku.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, with_change};

    const NVIDIA: &str = "dsr1-fp4-b200-sglang:\n  image: lmsysorg/sglang:v0.5.9\n  model: deepseek-r1-fp4\n  model-prefix: dsr1\n  runner: b200\n  precision: fp4\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-list: [4, 8] }\ndsr1-fp4-b200-trt-mtp:\n  image: nvcr.io/nvidia/tensorrt-llm/release:1.2\n  model: deepseek-r1-fp4\n  model-prefix: dsr1\n  runner: b200\n  precision: fp4\n  framework: trt\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, spec-decoding: mtp, conc-list: [4] }\n";

    #[test]
    fn edited_entries_are_found_by_line() {
        let mut e = with_change(evidence(), "configs/nvidia-master.yaml", "@@ -27,1 +27,1 @@\n-      - { tp: 8, spec-decoding: mtp, conc-list: [2] }\n+      - { tp: 8, spec-decoding: mtp, conc-list: [4] }\n");
        e.head.insert("configs/nvidia-master.yaml", NVIDIA);
        let affected = affected_configs(&Context::new(&e)).unwrap();
        assert_eq!(affected.iter().map(|c| c.key.as_str()).collect::<Vec<_>>(), ["dsr1-fp4-b200-trt-mtp"]);
        assert_eq!(affected[0].spec_decoding.iter().collect::<Vec<_>>(), ["mtp"]);
        assert_eq!(affected[0].fixed_seq, [(8192, 1024)]);
        e.files.clear();
        assert!(affected_configs(&Context::new(&e)).unwrap().is_empty());
    }

    #[test]
    fn changelog_keys_with_wildcards_count() {
        let mut e = with_change(evidence(), "perf-changelog.yaml", "@@ -10,1 +10,5 @@\n   pr-link: x\n+\n+- config-keys:\n+  - dsr1-fp4-b200-*\n+  pr-link: https://github.com/example/bench/pull/42\n");
        e.head.insert("configs/nvidia-master.yaml", NVIDIA);
        let affected = affected_configs(&Context::new(&e)).unwrap();
        assert_eq!(affected.len(), 2);
    }

    #[test]
    fn wildcards_and_skus() {
        assert!(wildcard_match("dsr1-*-b200-*", "dsr1-fp4-b200-sglang"));
        assert!(wildcard_match("*", "x"));
        assert!(!wildcard_match("dsr1-*", "dsv4-fp4"));
        assert!(!wildcard_match("a*a", "a"));
        assert!(wildcard_match("dsr1?", "dsr1?"), "? is literal");
        assert_eq!(sku("cluster:mi355x-amds"), "mi355x");
        assert_eq!(sku("gb300-nv"), "gb300");
        assert!(is_nvidia_sku("gb300") && !is_nvidia_sku("mi355x"));
    }
}
