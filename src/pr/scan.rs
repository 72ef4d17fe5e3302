//! What the PR changed, as the content checks (8, 9, 10, 13, 17) read it: changed files by
//! role, and the lines a PR added (from GitHub's patch hunks), with head line numbers.
//! Comment lines never count as configuration (spec 30 Check 13: "comments, docs and removed
//! diff lines do not count").

use crate::evidence::{ChangedFile, Evidence};

/// The role of a repository path, in either layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `configs/*-master.yaml`.
    MasterConfig,
    /// `benchmarks/**/srt-slurm-recipes/**.yaml`.
    Recipe,
    /// Launch and benchmark scripts under `benchmarks/` (and `runners/`).
    Script,
    Other,
}

/// The path without the newer layout's `inferencex-e2e/` prefix.
pub fn logical_path(path: &str) -> &str {
    path.strip_prefix("inferencex-e2e/").unwrap_or(path)
}

pub fn role(path: &str) -> Role {
    let p = logical_path(path);
    let yaml = p.ends_with(".yaml") || p.ends_with(".yml");
    if p.starts_with("configs/") && p.ends_with("-master.yaml") {
        Role::MasterConfig
    } else if yaml && p.contains("/srt-slurm-recipes/") {
        Role::Recipe
    } else if (p.starts_with("benchmarks/") || p.starts_with("runners/"))
        && [".sh", ".py", ".bash", ".j2", ".patch", ".diff"].iter().any(|ext| p.ends_with(ext))
    {
        Role::Script
    } else {
        Role::Other
    }
}

/// Files the PR added or changed (not removed), with their role.
pub fn changed(evidence: &Evidence) -> impl Iterator<Item = (&ChangedFile, Role)> {
    evidence.files.iter().filter(|f| f.status != "removed").map(|f| (f, role(&f.filename)))
}

/// One added line: 1-based line number at the head, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedLine<'a> {
    pub line: u32,
    pub text: &'a str,
}

/// Lines added by a unified-diff patch (GitHub's `patch` field), numbered at the new side.
/// Malformed hunks are skipped, never a panic.
pub fn added_lines(patch: &str) -> Vec<AddedLine<'_>> {
    let mut out = Vec::new();
    let mut next_line: Option<u32> = None;
    for raw in patch.lines() {
        if let Some(header) = raw.strip_prefix("@@") {
            next_line = parse_new_start(header);
            continue;
        }
        let Some(line) = next_line else { continue };
        match raw.as_bytes().first() {
            Some(b'+') => {
                out.push(AddedLine { line, text: &raw[1..] });
                next_line = Some(line + 1);
            }
            Some(b'-') | Some(b'\\') => {}
            _ => next_line = Some(line + 1),
        }
    }
    out
}

/// `@@ -a,b +c,d @@` → c.
fn parse_new_start(header: &str) -> Option<u32> {
    let plus = header.split_whitespace().find(|t| t.starts_with('+'))?;
    plus[1..].split(',').next()?.parse().ok()
}

/// The lines a PR added to one file: from its patch, or the whole head file when GitHub gave no
/// patch (large or new files). `None` when neither is in the evidence: the caller must say the
/// file could not be inspected, never treat it as clean.
pub fn added_lines_of<'a>(evidence: &'a Evidence, file: &'a ChangedFile) -> Option<Vec<AddedLine<'a>>> {
    if let Some(patch) = &file.patch {
        return Some(added_lines(patch));
    }
    head_lines(evidence, &file.filename)
}

/// Every line of a file at the head, if the evidence holds it as text.
pub fn head_lines<'a>(evidence: &'a Evidence, path: &str) -> Option<Vec<AddedLine<'a>>> {
    let text = evidence.head.text(path)?;
    Some(text.lines().enumerate().map(|(i, t)| AddedLine { line: i as u32 + 1, text: t }).collect())
}

/// A shell or YAML comment line (after leading whitespace).
pub fn is_comment(text: &str) -> bool {
    text.trim_start().starts_with('#')
}

/// The part of a line before a trailing ` #` comment (shell/YAML), approximately: a `#` that
/// starts a word. Quoted `#` inside values is rare in these files and errs on the side of
/// scanning more, not less.
pub fn code_part(text: &str) -> &str {
    if is_comment(text) {
        return "";
    }
    match text.find(" #") {
        Some(i) => &text[..i],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_in_both_layouts() {
        assert_eq!(role("configs/nvidia-master.yaml"), Role::MasterConfig);
        assert_eq!(role("inferencex-e2e/configs/amd-master.yaml"), Role::MasterConfig);
        assert_eq!(role("configs/runners.yaml"), Role::Other);
        assert_eq!(role("benchmarks/multi_node/srt-slurm-recipes/sglang/x/a.yaml"), Role::Recipe);
        assert_eq!(role("inferencex-e2e/benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200_mtp.sh"), Role::Script);
        assert_eq!(role("benchmarks/patches/fix.patch"), Role::Script);
        assert_eq!(role("docs/README.md"), Role::Other);
    }

    #[test]
    fn added_lines_carry_head_line_numbers() {
        let patch = "@@ -1,3 +1,4 @@\n a\n-b\n+B\n+C\n c\n@@ -10,2 +11,3 @@\n x\n+y\n z\n\\ No newline at end of file";
        let lines = added_lines(patch);
        assert_eq!(
            lines,
            vec![AddedLine { line: 2, text: "B" }, AddedLine { line: 3, text: "C" }, AddedLine { line: 12, text: "y" }]
        );
    }

    #[test]
    fn malformed_patches_yield_nothing_and_never_panic() {
        assert!(added_lines("+no header\n+still none").is_empty());
        assert!(added_lines("@@ garbage @@\n+x").is_empty());
        assert!(added_lines("@@ -1 +99999999999 @@\n+x").is_empty());
        let _ = added_lines("@@ -1 + @@\n+x\n@@\n+\n");
    }

    #[test]
    fn comments_are_not_code() {
        assert!(is_comment("  # --hf-overrides here"));
        assert_eq!(code_part("--tp 8 # --hf-overrides"), "--tp 8");
        assert_eq!(code_part("# only"), "");
    }
}
