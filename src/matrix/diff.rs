//! The changelog additions between two revisions, as CI reads them (spec 20 §4.3): a two-dot
//! diff of the changelog file; any removed non-blank line is an error; added lines are joined.
//!
//! Diffs are parsed by hunk structure (decision M8), so a removed line whose text starts with
//! `--` or an added line starting with `++` is a content line, not a header.

use std::path::Path;

use similar::{ChangeTag, TextDiff};

use super::MatrixError;

/// The added lines of the changelog, and for each its line number in the head file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Additions {
    pub text: String,
    pub head_lines: Vec<u32>,
}

impl Additions {
    fn push(&mut self, line: &str, head_line: u32) {
        if !self.head_lines.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(line);
        self.head_lines.push(head_line);
    }

    /// The head-file line of line `n` (1-based) of the joined text.
    pub fn head_line(&self, n: u32) -> Option<u32> {
        self.head_lines.get((n as usize).checked_sub(1)?).copied()
    }
}

fn deletion_error(path: &str, text: &str) -> MatrixError {
    MatrixError::Changelog(format!(
        "Deletions are not allowed in {path}. Only additions to the changelog are permitted. Found deleted line: {text}"
    ))
}

/// Additions from `git diff` output for one file.
pub fn additions_from_unified_diff(diff: &str, path: &str) -> Result<Additions, MatrixError> {
    let mut out = Additions::default();
    let mut in_hunk = false;
    let mut new_line: u32 = 0;
    let (mut old_left, mut new_left) = (0u32, 0u32);
    for line in diff.split('\n') {
        if in_hunk && (old_left > 0 || new_left > 0) {
            if let Some(text) = line.strip_prefix('-') {
                if !text.trim().is_empty() {
                    return Err(deletion_error(path, text));
                }
                old_left = old_left.saturating_sub(1);
                continue;
            }
            if let Some(text) = line.strip_prefix('+') {
                out.push(text, new_line);
                new_line += 1;
                new_left = new_left.saturating_sub(1);
                continue;
            }
            if line.starts_with(' ') || line.is_empty() {
                new_line += 1;
                old_left = old_left.saturating_sub(1);
                new_left = new_left.saturating_sub(1);
                continue;
            }
            if line.starts_with('\\') {
                continue; // "\ No newline at end of file"
            }
        }
        if let Some(header) = line.strip_prefix("@@ ") {
            let (old, new) = parse_hunk_header(header).ok_or_else(|| {
                MatrixError::Changelog(format!("cannot read the diff of {path}: bad hunk header '{line}'"))
            })?;
            (old_left, new_left) = (old.1, new.1);
            new_line = new.0;
            in_hunk = true;
            continue;
        }
        if line.starts_with('\\') {
            continue;
        }
        in_hunk = false;
    }
    Ok(out)
}

/// `-a,b +c,d @@` → ((a, b), (c, d)); a missing count is 1.
fn parse_hunk_header(header: &str) -> Option<((u32, u32), (u32, u32))> {
    let mut parts = header.split_whitespace();
    let range = |s: &str| -> Option<(u32, u32)> {
        let (start, count) = s.split_once(',').unwrap_or((s, "1"));
        Some((start.parse().ok()?, count.parse().ok()?))
    };
    let old = range(parts.next()?.strip_prefix('-')?)?;
    let new = range(parts.next()?.strip_prefix('+')?)?;
    Some((old, new))
}

/// Additions between two texts (trees without git history: bundles, in-memory repos).
pub fn additions_between(base: &str, head: &str, path: &str) -> Result<Additions, MatrixError> {
    let mut out = Additions::default();
    let diff = TextDiff::from_lines(base, head);
    for change in diff.iter_all_changes() {
        let text = change.value().strip_suffix('\n').unwrap_or(change.value());
        match change.tag() {
            ChangeTag::Delete if !text.trim().is_empty() => return Err(deletion_error(path, text)),
            ChangeTag::Insert => {
                let line = change.new_index().map_or(0, |i| i as u32 + 1);
                out.push(text, line);
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Runs `git diff <base> <head> -- <path>` in `repo` (the one I/O step of this module).
pub fn git_diff(repo: &Path, base: &str, head: &str, path: &str) -> Result<String, MatrixError> {
    for rev in [base, head] {
        if rev.starts_with('-') {
            return Err(MatrixError::Usage(format!("'{rev}' is not a revision")));
        }
    }
    let stdout =
        crate::repo::git(repo, &["diff", "--no-color", "--no-ext-diff", "--no-renames", base, head, "--", path])
            .map_err(|e| MatrixError::Changelog(e.to_string()))?;
    String::from_utf8(stdout).map_err(|_| MatrixError::Changelog(format!("the diff of {path} is not UTF-8")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "diff --git a/perf-changelog.yaml b/perf-changelog.yaml\nindex 1..2 100644\n--- a/perf-changelog.yaml\n+++ b/perf-changelog.yaml\n@@ -3,2 +3,5 @@ x\n   pr-link: a\n-  \n+\n+- config-keys:\n+    - k\n+  pr-link: b\n";

    #[test]
    fn unified_diff_additions_with_head_lines() {
        let a = additions_from_unified_diff(DIFF, "perf-changelog.yaml").unwrap();
        assert_eq!(a.text, "\n- config-keys:\n    - k\n  pr-link: b");
        assert_eq!(a.head_lines, [4, 5, 6, 7]);
        assert_eq!(a.head_line(2), Some(5));
    }

    #[test]
    fn deleting_a_non_blank_line_fails() {
        let diff = "--- a/c\n+++ b/c\n@@ -1,2 +1,1 @@\n-  pr-link: old\n+  pr-link: new\n";
        let e = additions_from_unified_diff(diff, "perf-changelog.yaml").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Deletions are not allowed in perf-changelog.yaml. Only additions to the changelog are permitted. Found deleted line:   pr-link: old"
        );
    }

    #[test]
    fn dash_dash_content_is_not_a_header() {
        // Upstream skips a deleted line whose text starts with "--" (it looks like "---").
        let diff = "--- a/c\n+++ b/c\n@@ -1,1 +1,1 @@\n---- x\n+++ y\n";
        let e = additions_from_unified_diff(diff, "c").unwrap_err();
        assert!(e.to_string().ends_with("Found deleted line: --- x"), "{e}");
        let diff = "--- a/c\n+++ b/c\n@@ -0,0 +1,1 @@\n+++ y\n";
        assert_eq!(additions_from_unified_diff(diff, "c").unwrap().text, "++ y");
    }

    #[test]
    fn text_diff_matches_git_for_appends() {
        let base = "- config-keys: [a]\n  pr-link: x\n";
        let head = "- config-keys: [a]\n  pr-link: x\n\n- config-keys: [b]\n  pr-link: y\n";
        let a = additions_between(base, head, "c").unwrap();
        assert_eq!(a.text, "\n- config-keys: [b]\n  pr-link: y");
        assert_eq!(a.head_lines, [3, 4, 5]);
        assert!(additions_between(head, base, "c").is_err());
        assert_eq!(additions_between("a\n  \n", "a\n", "c").unwrap().text, "");
    }
}
