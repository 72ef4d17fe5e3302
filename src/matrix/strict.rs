//! The strict byte rules of the merge path (`validate_perf_changelog.py`: `parse_changelog`,
//! `compare_entries`, `validate_raw_change`; spec 20 §4.4). Stricter than the CI gate: history
//! is byte-immutable, new entries go at the physical end with exactly one empty line between.

use regex::bytes::Regex;
use serde_json::Value;

use crate::domain::changelog::ChangelogEntry;
use crate::yaml;

const PR_URL_PREFIX: &str = "https://github.com/SemiAnalysisAI/InferenceX/pull/";
const PLACEHOLDERS: [&str; 2] = ["XXX", "https://github.com/SemiAnalysisAI/InferenceX/pull/XXX"];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StrictError(pub String);

fn fail<T>(message: impl Into<String>) -> Result<T, StrictError> {
    Err(StrictError(message.into()))
}

fn canonical_link(link: &str) -> bool {
    link.strip_prefix(PR_URL_PREFIX).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// `parse_changelog(raw, label)`: file-level invariants; returns each entry's raw mapping.
pub fn parse_changelog(raw: &[u8], label: &str) -> Result<Vec<Value>, StrictError> {
    if !raw.ends_with(b"\n") {
        return fail(format!("{label} does not end with a newline"));
    }
    if raw.contains(&b'\r') {
        return fail(format!("{label} contains CR characters"));
    }
    if raw.contains(&b'\t') {
        return fail(format!("{label} contains tabs"));
    }
    if raw.contains(&0) {
        return fail(format!("{label} contains NUL bytes"));
    }
    let text = match yaml::text_of(raw) {
        Ok(t) => t,
        Err(e) => return fail(format!("{label} is not UTF-8: {}", e.message)),
    };
    let root = yaml::parse(text, label).map_err(|e| StrictError(format!("{label} is not valid YAML: {e}")))?;
    let Some(items) = root.as_seq() else { return fail(format!("{label} root must be a YAML list")) };
    let top_level = text.lines().filter(|l| l.starts_with("- config-keys:")).count();
    if top_level != items.len() {
        return fail(format!(
            "{label} has {top_level} top-level config entries but YAML parsed {} entries",
            items.len()
        ));
    }
    let mut entries = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if item.as_map().is_none() {
            return fail(format!("{label} entry {} is not a mapping", i + 1));
        }
        if let Err(e) = ChangelogEntry::from_node(item) {
            return fail(format!("{label} entry {} fails ChangelogEntry validation: {e}", i + 1));
        }
        entries.push(item.to_json());
    }
    Ok(entries)
}

fn without_pr_link(entry: &Value) -> Value {
    let mut e = entry.clone();
    if let Some(m) = e.as_object_mut() {
        m.shift_remove("pr-link");
    }
    e
}

fn link_of(entry: &Value) -> String {
    match entry.get("pr-link") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// `compare_entries`: (number of appended entries, number of pr-link corrections).
pub fn compare_entries(base: &[Value], head: &[Value], pr_number: Option<u64>) -> Result<(usize, usize), StrictError> {
    if head.len() < base.len() {
        return fail("perf-changelog.yaml entries were deleted");
    }
    let mut corrections = 0;
    for (i, (b, h)) in base.iter().zip(head).enumerate() {
        if b == h {
            continue;
        }
        let n = i + 1;
        if without_pr_link(b) != without_pr_link(h) {
            return fail(format!(
                "entry {n} changed; existing entries are immutable except for pr-link-only corrections"
            ));
        }
        let (old, new) = (link_of(b), link_of(h));
        if old == new {
            return fail(format!("entry {n} was reformatted without a semantic change"));
        }
        if !canonical_link(&new) {
            return fail(format!("entry {n} pr-link correction is not canonical: '{new}'"));
        }
        corrections += 1;
    }
    let additions = &head[base.len()..];
    if corrections > 0 && !additions.is_empty() {
        return fail("do not mix historical pr-link corrections with new changelog entries");
    }
    for entry in additions {
        let link = link_of(entry);
        match pr_number {
            None if !canonical_link(&link) => {
                return fail(format!("new main-branch entry has invalid pr-link: '{link}'"))
            }
            Some(n) => {
                let expected = format!("{PR_URL_PREFIX}{n}");
                if !PLACEHOLDERS.contains(&link.as_str()) && link != expected {
                    return fail(format!("new PR entry must use '{expected}' or an XXX placeholder; found '{link}'"));
                }
            }
            None => {}
        }
    }
    Ok((additions.len(), corrections))
}

/// `validate_raw_change`: historical bytes unchanged outside explicit link fixes.
pub fn validate_raw_change(base: &[u8], head: &[u8], additions: usize, corrections: usize) -> Result<(), StrictError> {
    if additions > 0 {
        if !head.starts_with(base) {
            return fail("appended entries changed historical perf-changelog.yaml bytes; restore the base file byte-for-byte and append at the end");
        }
        let suffix = &head[base.len()..];
        let expected: &[u8] = if base.ends_with(b"\n\n") { b"- config-keys:" } else { b"\n- config-keys:" };
        if !suffix.starts_with(expected) {
            return fail(
                "new changelog entries must be separated from history by one empty line and appended at the end",
            );
        }
        let Ok(starts_re) = Regex::new(r"(?m)^- config-keys:[^\r\n]*\n") else {
            return fail("internal error: entry-start pattern");
        };
        let starts: Vec<usize> = starts_re.find_iter(head).map(|m| m.start()).collect();
        let appended = &starts[starts.len().saturating_sub(additions)..];
        for &start in appended.iter().skip(1) {
            let prefix = &head[..start];
            if !prefix.ends_with(b"\n\n") || prefix.ends_with(b"\n\n\n") {
                return fail("appended changelog entries must have exactly one empty separator line");
            }
        }
        if head.ends_with(b"\n\n") {
            return fail("the final appended changelog entry must end with one newline");
        }
        return Ok(());
    }
    if corrections > 0 {
        let lines = |b: &[u8]| -> Vec<Vec<u8>> { b.split_inclusive(|c| *c == b'\n').map(<[u8]>::to_vec).collect() };
        let (bl, hl) = (lines(base), lines(head));
        if bl.len() != hl.len() {
            return fail("pr-link corrections may not add or delete lines");
        }
        let mut changed = 0;
        for (n, (b, h)) in bl.iter().zip(&hl).enumerate() {
            if b == h {
                continue;
            }
            changed += 1;
            let ok = |l: &[u8]| l.starts_with(b"  pr-link:") && l.ends_with(b"\n");
            if !(ok(b) && ok(h)) {
                return fail(format!("historical bytes changed outside a pr-link line at line {}", n + 1));
            }
        }
        if changed != corrections {
            return fail(format!("expected {corrections} changed pr-link line(s), found {changed}"));
        }
        return Ok(());
    }
    if base != head {
        return fail("changelog diff has no appended entry or pr-link correction; historical whitespace and formatting are immutable");
    }
    Ok(())
}

/// All three steps: the strict verdict on a change of the changelog file.
pub fn check_change(
    base: &[u8],
    head: &[u8],
    path: &str,
    pr_number: Option<u64>,
) -> Result<(usize, usize), StrictError> {
    let base_entries = parse_changelog(base, &format!("base {path}"))?;
    let head_entries = parse_changelog(head, &format!("head {path}"))?;
    let (additions, corrections) = compare_entries(&base_entries, &head_entries, pr_number)?;
    validate_raw_change(base, head, additions, corrections)?;
    Ok((additions, corrections))
}

#[cfg(test)]
mod tests {
    use super::*;

    const E1: &str = "- config-keys:\n    - a\n  description:\n    - x\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1\n";
    const E2: &str = "- config-keys:\n    - b\n  description:\n    - y\n  pr-link: XXX\n";

    fn check(base: &str, head: &str, pr: Option<u64>) -> Result<(usize, usize), StrictError> {
        check_change(base.as_bytes(), head.as_bytes(), "perf-changelog.yaml", pr)
    }

    #[test]
    fn clean_append_passes_on_a_pr_and_needs_a_real_link_on_main() {
        let head = format!("{E1}\n{E2}");
        assert_eq!(check(E1, &head, Some(7)).unwrap(), (1, 0));
        let e = check(E1, &head, None).unwrap_err();
        assert_eq!(e.0, "new main-branch entry has invalid pr-link: 'XXX'");
        let tbd = format!("{E1}\n{}", E2.replace("XXX", "TBD"));
        assert_eq!(
            check(E1, &tbd, Some(7)).unwrap_err().0,
            "new PR entry must use 'https://github.com/SemiAnalysisAI/InferenceX/pull/7' or an XXX placeholder; found 'TBD'"
        );
    }

    #[test]
    fn separators_are_exact() {
        let e = check(E1, &format!("{E1}{E2}"), Some(7)).unwrap_err();
        assert!(e.0.starts_with("new changelog entries must be separated"), "{e}");
        let two = format!("{E1}\n{E2}  \n{}", E2.replace("- b", "- c"));
        let e = check(E1, &two, Some(7)).unwrap_err();
        assert_eq!(e.0, "appended changelog entries must have exactly one empty separator line");
        let e = check(E1, &format!("{E1}\n{E2}\n"), Some(7)).unwrap_err();
        assert_eq!(e.0, "the final appended changelog entry must end with one newline");
        let mid = format!("{E2}\n{E1}");
        assert!(check(E1, &mid, Some(7)).unwrap_err().0.contains("changed; existing entries are immutable"));
    }

    #[test]
    fn pr_link_corrections() {
        let base = E1.replace("pull/1", "pull/XXX");
        assert_eq!(check(&base, E1, None).unwrap(), (0, 1));
        let e = check(&base, &E1.replace("pull/1", "pull/abc"), None).unwrap_err();
        assert_eq!(
            e.0,
            "entry 1 pr-link correction is not canonical: 'https://github.com/SemiAnalysisAI/InferenceX/pull/abc'"
        );
        let e = check(&base, &format!("{E1}\n{E2}"), Some(3)).unwrap_err();
        assert_eq!(e.0, "do not mix historical pr-link corrections with new changelog entries");
        let quoted = E1.replace("pr-link: h", "pr-link: \"h").replace("/1\n", "/1\"\n");
        // Re-quoting a link changes bytes but not entries: no addition, no correction.
        assert!(check(E1, &quoted, None).unwrap_err().0.starts_with("changelog diff has no appended entry"));
        assert!(check(E1, &format!("{E1}\n"), None)
            .unwrap_err()
            .0
            .contains("historical whitespace and formatting are immutable"));
        assert_eq!(check(&format!("{E1}{E2}"), E1, None).unwrap_err().0, "perf-changelog.yaml entries were deleted");
    }

    #[test]
    fn file_level_rules() {
        let p = |s: &str| parse_changelog(s.as_bytes(), "head perf-changelog.yaml").unwrap_err().0;
        assert_eq!(p("- config-keys: [a]"), "head perf-changelog.yaml does not end with a newline");
        assert_eq!(p("a\r\n"), "head perf-changelog.yaml contains CR characters");
        assert_eq!(p("a:\t1\n"), "head perf-changelog.yaml contains tabs");
        assert_eq!(p("a: 1\n"), "head perf-changelog.yaml root must be a YAML list");
        assert!(p("- {config-keys: [a], description: [x], pr-link: x}\n")
            .contains("has 0 top-level config entries but YAML parsed 1"));
        assert!(p("- config-keys: [a]\n  config-keys: [b]\n").contains("is not valid YAML"));
        assert!(p("- config-keys: [a]\n").contains("entry 1 fails ChangelogEntry validation"));
    }
}
