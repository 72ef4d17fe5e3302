//! The master-config entries a PR affects: entries of a changed master file whose lines the PR
//! added to, and entries named by the changelog entries it appended. Read from the raw YAML at
//! the head (positions kept), so a check can name `file:line`.

use std::collections::BTreeSet;

use super::configs::AffectedConfig;
use super::context::Side;
use super::scan::{self, Role};
use super::{reason, Context, Reason};
use crate::domain::master_config::{entry_spans, is_entry_line, EntrySpan};
use crate::yaml::{self, Node, Value};

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
        model: text_field(entry, "model"),
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

/// `configs/deprecated/*-master.yaml` archives retired entries "removed from the active master
/// config so sweep generation no longer selects them" (its header): a changelog key naming an
/// active entry does not also select the archived entry of the same key.
fn archived(path: &str) -> bool {
    scan::logical_path(path).starts_with("configs/deprecated/")
}

fn parse_all_configs(cx: &Context) -> Result<Vec<AffectedConfig>, String> {
    configs_in(cx, Side::Head)
}

/// All active entries of every master file of `tree`, in file order (Check 6 reads the base's
/// to tell an entry that existed before the PR from one the PR adds).
pub fn configs_in(cx: &Context, side: Side) -> Result<Vec<AffectedConfig>, String> {
    let tree = cx.tree(side);
    let mut out = Vec::new();
    for path in tree.paths().filter(|p| scan::role(p) == Role::MasterConfig && !archived(p)) {
        let (root, _) = cx.master_root(side, path).ok_or_else(|| format!("{path} is not UTF-8"))?;
        let root = root.as_ref().as_ref().map_err(|e| e.to_string())?;
        for (key, entry) in root.as_map().unwrap_or_default() {
            out.push(entry_of(path, key, entry));
        }
    }
    Ok(out)
}

/// One master-config row that runs a recipe: `CONFIG_FILE=<recipe>` and its sibling settings.
pub struct RecipeRow {
    pub owner: AffectedConfig,
    pub file: String,
    pub line: u32,
    /// `KEY=value` settings of the row's `additional-settings` list, with their lines.
    pub settings: std::collections::BTreeMap<String, (String, u32)>,
}

impl RecipeRow {
    pub fn setting(&self, key: &str) -> Option<(&str, u32)> {
        self.settings.get(key).map(|(v, l)| (v.as_str(), *l))
    }
}

/// Every master-config row whose `CONFIG_FILE=` (or single-node `srt-recipe:`) names the recipe at `path`.
pub fn recipe_rows(cx: &Context, path: &str) -> Vec<RecipeRow> {
    let Some(relative) = path.split("/srt-slurm-recipes/").nth(1) else { return vec![] };
    let Ok(configs) = all_configs(cx) else { return vec![] };
    let files: std::collections::BTreeSet<&str> = configs.iter().map(|c| c.file.as_str()).collect();
    let mut rows = Vec::new();
    for file in files {
        let Some(text) = cx.evidence.head.text(file) else { continue };
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let Some(at) = l.find(relative) else { continue };
            // Multinode rows name it with `CONFIG_FILE=`, single-node rows (newer schema) with `srt-recipe:`.
            let names_recipe = l.contains("CONFIG_FILE=") || l.contains("srt-recipe:");
            if !names_recipe || !matches!(l[..at].chars().last(), Some('/' | '=')) {
                continue;
            }
            let line = i as u32 + 1;
            let Some(owner) = configs.iter().filter(|c| c.file == file && c.line <= line).max_by_key(|c| c.line) else {
                continue;
            };
            rows.push(RecipeRow { owner: owner.clone(), file: file.to_owned(), line, settings: siblings(&lines, i) });
        }
    }
    rows
}

/// The `- "KEY=value"` items of the list holding line `at` (comments between items skipped).
fn siblings(lines: &[&str], at: usize) -> std::collections::BTreeMap<String, (String, u32)> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let depth = indent(lines[at]);
    let in_list = |l: &&str| scan::is_comment(l) || (indent(l) == depth && l.trim_start().starts_with("- "));
    let first = lines[..at].iter().rposition(|l| !in_list(l)).map_or(0, |p| p + 1);
    let last = lines[at..].iter().position(|l| !in_list(l)).map_or(lines.len(), |p| at + p);
    (first..last)
        .filter(|i| !scan::is_comment(lines[*i]))
        .filter_map(|i| {
            let item = lines[i].trim_start().trim_start_matches("- ").trim().trim_matches(['"', '\'']);
            let (k, v) = item.split_once('=')?;
            Some((k.trim().to_owned(), (v.trim().to_owned(), i as u32 + 1)))
        })
        .collect()
}

/// Every `- "KEY=value"` list item of a master-config entry (its rows' `additional-settings`,
/// `CONFIG_FILE=` included), with its line, in file order. Empty when the file is not readable.
pub fn entry_items(cx: &Context, config: &AffectedConfig) -> Vec<(String, String, u32)> {
    let Some(span) = head_span(cx, config) else { return vec![] };
    span.text
        .lines()
        .zip(*span.lines.start()..)
        .filter(|(l, _)| !scan::is_comment(l))
        .filter_map(|(l, line)| {
            let item = l.trim_start().strip_prefix("- ")?.trim().trim_matches(['"', '\'']);
            let (k, v) = item.split_once('=')?;
            let key = k.trim();
            (!key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
                .then(|| (key.to_owned(), v.trim().to_owned(), line))
        })
        .collect()
}

/// Keys named by the `config-keys` of changelog entries the PR appended (`*` full-match
/// wildcards resolved against `known`).
pub fn changelog_keys(cx: &Context, known: &[AffectedConfig]) -> BTreeSet<String> {
    let ev = cx.evidence;
    let mut keys = BTreeSet::new();
    for file in ev.files.iter().filter(|f| scan::logical_path(&f.filename) == "perf-changelog.yaml") {
        let Some(block) = appended_text(cx, file) else { continue };
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

/// The text a PR appended to a changelog: the head past the base when the base is a prefix of
/// it (exact, whatever the diff's hunks say about a repeated entry), else the added lines.
fn appended_text(cx: &Context, file: &crate::evidence::ChangedFile) -> Option<String> {
    let ev = cx.evidence;
    if let (Some(base), Some(head)) = (ev.base.text(&file.filename), ev.head.text(&file.filename)) {
        if let Some(appended) = head.strip_prefix(base.trim_end()) {
            return Some(appended.to_owned());
        }
    }
    let lines = scan::added_lines_of(ev, file)?;
    Some(lines.iter().map(|l| format!("{}\n", l.text)).collect())
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
pub fn affected_configs(cx: &Context) -> Result<Vec<AffectedConfig>, Reason> {
    let ev = cx.evidence;
    let all = all_configs(cx)?;
    let mut wanted: BTreeSet<String> = changelog_keys(cx, &all);
    for (file, role) in scan::changed(ev) {
        if role != Role::MasterConfig {
            continue;
        }
        let lines = scan::added_lines_of(ev, file)
            .ok_or_else(|| reason("path_no_diff_or_content").arg("path", file.filename.as_str()))?;
        let mut entries: Vec<&AffectedConfig> = all.iter().filter(|c| c.file == file.filename).collect();
        entries.sort_by_key(|c| c.line);
        let Some((head, head_text)) = cx.master_root(Side::Head, &file.filename) else {
            return Err(reason("missing_at_head").arg("path", file.filename.as_str()));
        };
        let base = cx.master_root(Side::Base, &file.filename);
        let base_root = base.as_ref().and_then(|(root, _)| root.as_ref().as_ref().ok());
        let base_spans = base.as_ref().and_then(|(root, text)| Some(entry_spans(root.as_ref().as_ref().ok()?, text)));
        let head_root = head.as_ref().as_ref().ok();
        let head_spans = head_root.map(|root| entry_spans(root, head_text)).unwrap_or_default();
        for (key, span) in head_spans {
            let touched = lines.iter().any(|added| span.lines.contains(&added.line) && is_entry_line(added.text));
            // The diff may slide an append into the previous entry; an entry whose text is
            // byte-identical at base was not changed, whatever the hunks say. Nor was one whose
            // YAML value is the same (a re-indented list, as #2487 re-indents
            // `glm5.2-fp4-mi355x-sglang-agentic-mtp`): the sweep it generates is the same.
            let unchanged = base_spans.as_ref().is_some_and(|base| base.get(&key).is_some_and(|b| b.text == span.text))
                || matches!((base_root, head_root), (Some(b), Some(h))
                    if b.get(&key).zip(h.get(&key)).is_some_and(|(b, h)| b.to_json() == h.to_json()));
            if touched && !unchanged {
                wanted.insert(key);
            }
        }
    }
    Ok(all.into_iter().filter(|c| wanted.contains(&c.key)).collect())
}

/// The span of `config`'s entry in its head master file (`None`: unreadable, or no such entry).
pub fn head_span(cx: &Context, config: &AffectedConfig) -> Option<EntrySpan> {
    let (root, text) = cx.master_root(Side::Head, &config.file)?;
    entry_spans(root.as_ref().as_ref().ok()?, text).remove(&config.key)
}

pub use crate::domain::launch::sku;

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
    use crate::evidence::Evidence;

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

    /// The corpus' #2492/#2433/#2606: an image bump whose changelog names `dsr1-fp4-b200-sglang`
    /// selects the active 8k1k entry, not the archived 1k1k entry of the same key in
    /// `configs/deprecated/` (sweep generation never reads it). The same entry in an active
    /// master file is affected.
    #[test]
    fn archived_entries_of_the_same_key_are_not_affected() {
        let archived =
            NVIDIA.split("dsr1-fp4-b200-trt-mtp:").next().unwrap_or_default().replace("isl: 8192", "isl: 1024");
        let mut e = with_change(evidence(), "perf-changelog.yaml", "@@ -10,1 +10,5 @@\n   pr-link: x\n+\n+- config-keys:\n+  - dsr1-fp4-b200-sglang\n+  pr-link: https://github.com/example/bench/pull/42\n");
        e.head.insert("configs/nvidia-master.yaml", NVIDIA);
        e.head.insert("configs/deprecated/nvidia-1k1k-master.yaml", archived.as_str());
        let affected = affected_configs(&Context::new(&e)).unwrap();
        let seqs: Vec<_> = affected.iter().map(|c| (c.key.as_str(), c.fixed_seq.clone())).collect();
        assert_eq!(seqs, [("dsr1-fp4-b200-sglang", vec![(8192, 1024)])]);
        e.head.insert("configs/amd-master.yaml", archived.as_str());
        assert_eq!(affected_configs(&Context::new(&e)).unwrap().len(), 2);
    }

    /// GitHub's `patch` of a change from `old` to `new`: the unified diff without its header.
    fn github_patch(old: &str, new: &str) -> String {
        let diff = similar::TextDiff::from_lines(old, new);
        let text = diff.unified_diff().context_radius(3).to_string();
        text.lines().filter(|l| !l.starts_with("---") && !l.starts_with("+++")).map(|l| format!("{l}\n")).collect()
    }

    const PREVIOUS_LOG: &str = "- config-keys:\n  - dsr1-fp4-b200-sglang\n  description:\n  - Initial sweep\n  pr-link: https://github.com/example/bench/pull/1\n";
    const NEW_ENTRY: &str = "\n- config-keys:\n  - dsr1-fp4-b200-trt-mtp\n  description:\n  - Initial sweep\n  pr-link: https://github.com/example/bench/pull/42\n";

    /// A PR that appends one master entry and one changelog entry, each after a blank line and a
    /// byte-identical previous entry, in the layout `prefix` (`""` or `inferencex-e2e/`).
    fn real_append(prefix: &str) -> Evidence {
        let (sglang, trt) = NVIDIA.split_at(NVIDIA.find("dsr1-fp4-b200-trt-mtp:").unwrap_or(0));
        let master_head = format!("{sglang}\n{trt}");
        let (master, log) = (format!("{prefix}configs/nvidia-master.yaml"), format!("{prefix}perf-changelog.yaml"));
        let log_head = format!("{PREVIOUS_LOG}{NEW_ENTRY}");
        let mut e = with_change(evidence(), &master, &github_patch(sglang, &master_head));
        e = with_change(e, &log, &github_patch(PREVIOUS_LOG, &log_head));
        e.base.insert(&master, sglang);
        e.base.insert(&log, PREVIOUS_LOG);
        e.head.insert(&master, master_head.as_str());
        e.head.insert(&log, log_head.as_str());
        e
    }

    fn keys(e: &Evidence) -> Vec<String> {
        let affected = affected_configs(&Context::new(e)).unwrap_or_else(|err| panic!("{err}"));
        affected.into_iter().map(|c| c.key).collect()
    }

    #[test]
    fn a_real_append_affects_only_the_new_entry_in_both_layouts() {
        for prefix in ["", "inferencex-e2e/"] {
            let e = real_append(prefix);
            assert!(e.files[0].patch.as_deref().is_some_and(|p| p.contains("\n+\n")), "the diff adds a blank line");
            assert_eq!(keys(&e), ["dsr1-fp4-b200-trt-mtp"], "layout {prefix:?}");
        }
    }

    #[test]
    fn a_blank_line_hunk_slid_onto_the_previous_entry_does_not_affect_it() {
        for prefix in ["", "inferencex-e2e/"] {
            let mut e = real_append(prefix);
            // Without the base file only the hunks decide: the blank line right after the
            // previous entry's last line still belongs to no entry.
            e.base = Default::default();
            assert_eq!(keys(&e), ["dsr1-fp4-b200-trt-mtp"], "layout {prefix:?}");
            // A hunk that claims a line of the previous entry changed does affect it...
            e.files[0].patch = Some("@@ -13,2 +13,3 @@\n       search-space:\n-      - { tp: 8, conc-list: [4, 8] }\n+      - { tp: 8, conc-list: [4, 8, 16] }\n+\n".into());
            assert_eq!(keys(&e), ["dsr1-fp4-b200-sglang", "dsr1-fp4-b200-trt-mtp"], "layout {prefix:?}");
            // ...unless the base shows that entry byte-identical (the diff slid).
            let base = real_append(prefix).base;
            e.base = base;
            assert_eq!(keys(&e), ["dsr1-fp4-b200-trt-mtp"], "layout {prefix:?}");
        }
    }

    /// #2487 (real merged PR) re-indents the search-space rows of an entry it does not change
    /// (`glm5.2-fp4-mi355x-sglang-agentic-mtp`, `configs/amd-master.yaml:1650-1651`): the YAML
    /// value, and so the sweep, is the same, so the entry is not affected; a changed value is.
    #[test]
    fn a_reindented_entry_with_the_same_value_is_not_affected() {
        let row = "      - { tp: 8, conc-list: [4, 8] }\n";
        for (head_row, expected) in [
            ("       - { tp: 8, conc-list: [4, 8] }\n", vec![]),
            ("      - { tp: 8, conc-list: [4, 16] }\n", vec!["dsr1-fp4-b200-sglang"]),
        ] {
            let head = NVIDIA.replacen(row, head_row, 1);
            let mut e = with_change(evidence(), "configs/nvidia-master.yaml", &github_patch(NVIDIA, &head));
            e.base.insert("configs/nvidia-master.yaml", NVIDIA);
            e.head.insert("configs/nvidia-master.yaml", head.as_str());
            assert_eq!(keys(&e), expected, "{head_row:?}");
        }
    }

    #[test]
    fn wildcards_and_skus() {
        assert!(wildcard_match("dsr1-*-b200-*", "dsr1-fp4-b200-sglang"));
        assert!(wildcard_match("*", "x"));
        assert!(!wildcard_match("dsr1-*", "dsv4-fp4"));
        assert!(!wildcard_match("a*a", "a"));
        assert!(wildcard_match("dsr1?", "dsr1?"), "? is literal");
        assert_eq!(sku("cluster:mi355x-amds"), "mi355x");
        assert_eq!(sku("CLUSTER:B200-DGXC"), "b200", "an upper-cased eval row's label");
        assert_eq!(sku("Cluster:gb200-nv"), "gb200");
        assert_eq!(sku("gb300-nv"), "gb300");
        assert!(is_nvidia_sku("gb300") && !is_nvidia_sku("mi355x"));
    }
}
