//! Eval server logs and the conditional-kernel-path table (Check 2, spec 30 "eval coverage of
//! conditional code paths"). Logs are untrusted: read as lossy UTF-8, ANSI escape sequences
//! removed, lines cut at [`MAX_LINE_BYTES`] and at most [`MAX_SCAN_BYTES`] scanned per search.
//! Pure: callers pass file contents.

use std::borrow::Cow;

use regex::Regex;
use serde::Deserialize;

/// Longest log line kept for matching and quoting (longer lines are cut, not skipped).
pub const MAX_LINE_BYTES: usize = 16 * 1024;
/// Most log bytes one search reads across all files (a 1 GiB log does not cost 1 GiB of regex).
pub const MAX_SCAN_BYTES: usize = 256 << 20;
/// Largest compiled pattern of the table (`regex` size limit), so a bad entry cannot blow up.
const MAX_PATTERN_BYTES: usize = 1 << 20;

/// A kernel path table that does not load: the file, the entry and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelPathError {
    #[error("checks/02-kernel-paths.toml: {0}")]
    Toml(String),
    #[error("checks/02-kernel-paths.toml: entry '{id}': {field} is not a valid pattern: {message}")]
    Pattern { id: String, field: &'static str, message: String },
    #[error("checks/02-kernel-paths.toml: entry '{0}' is listed twice")]
    Duplicate(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawName {
    en: String,
    zh: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPath {
    id: String,
    name: RawName,
    enabled_by: String,
    evidence: String,
    source: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    paths: Vec<RawPath>,
}

/// One conditional kernel path: the serving flag or env value that enables it (a pattern over
/// launch text) and the log line that proves an eval ran through it (a pattern over server logs).
#[derive(Debug, Clone)]
pub struct KernelPath {
    pub id: String,
    pub name_en: String,
    pub name_zh: String,
    pub enabled_by: Regex,
    pub evidence: Regex,
    pub source: String,
}

fn compile(id: &str, field: &'static str, pattern: &str) -> Result<Regex, KernelPathError> {
    regex::RegexBuilder::new(pattern).size_limit(MAX_PATTERN_BYTES).build().map_err(|e| KernelPathError::Pattern {
        id: id.to_owned(),
        field,
        message: e.to_string(),
    })
}

/// Parses the table (`[[paths]]` with `id`, `name = { en, zh }`, `enabled_by`, `evidence`, `source`).
pub fn parse_kernel_paths(text: &str) -> Result<Vec<KernelPath>, KernelPathError> {
    let raw: RawTable = toml::from_str(text).map_err(|e| KernelPathError::Toml(e.to_string()))?;
    let mut out: Vec<KernelPath> = Vec::with_capacity(raw.paths.len());
    for p in raw.paths {
        if out.iter().any(|k| k.id == p.id) {
            return Err(KernelPathError::Duplicate(p.id));
        }
        out.push(KernelPath {
            enabled_by: compile(&p.id, "enabled_by", &p.enabled_by)?,
            evidence: compile(&p.id, "evidence", &p.evidence)?,
            id: p.id,
            name_en: p.name.en,
            name_zh: p.name.zh,
            source: p.source,
        });
    }
    Ok(out)
}

/// `line` without ANSI escape sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL|ESC \`, and
/// two-byte `ESC x`); a lone or cut-off escape is dropped.
pub fn strip_ansi(line: &str) -> Cow<'_, str> {
    if !line.contains('\u{1b}') {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                // Parameters and intermediates up to the final byte (0x40..=0x7e).
                for c in chars.by_ref() {
                    if ('\u{40}'..='\u{7e}').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    Cow::Owned(out)
}

/// Cuts `line` at [`MAX_LINE_BYTES`] on a character boundary.
fn bounded(line: &str) -> &str {
    if line.len() <= MAX_LINE_BYTES {
        return line;
    }
    let mut end = MAX_LINE_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

/// A line that matched: 1-based line number and the cleaned line (ANSI removed, bounded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogMatch {
    pub line: usize,
    pub text: String,
}

/// The lines of `bytes` that `pattern` matches after ANSI codes are removed, at most `max`.
/// Reads at most `budget` bytes and takes them off it, so one search over many files stays
/// bounded.
pub fn find_lines(bytes: &[u8], pattern: &Regex, budget: &mut usize, max: usize) -> Vec<LogMatch> {
    let take = bytes.len().min(*budget);
    *budget -= take;
    let text = String::from_utf8_lossy(&bytes[..take]);
    text.lines()
        .enumerate()
        .filter_map(|(index, raw)| {
            let clean = strip_ansi(bounded(raw));
            pattern.is_match(&clean).then(|| LogMatch { line: index + 1, text: clean.trim().to_owned() })
        })
        .take(max)
        .collect()
}

/// The first line of `bytes` that `pattern` matches (see [`find_lines`]).
pub fn find_line(bytes: &[u8], pattern: &Regex, budget: &mut usize) -> Option<LogMatch> {
    find_lines(bytes, pattern, budget, 1).pop()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_sequences_are_removed_and_cut_escapes_do_not_panic() {
        assert_eq!(strip_ansi("\u{1b}[1;32mINFO\u{1b}[0m routed"), "INFO routed");
        assert_eq!(strip_ansi("\u{1b}]0;title\u{7}text"), "text");
        assert_eq!(strip_ansi("\u{1b}]8;;http://x\u{1b}\\link"), "link");
        assert_eq!(strip_ansi("cut \u{1b}[38;5"), "cut ");
        assert_eq!(strip_ansi("lone \u{1b}"), "lone ");
        assert!(matches!(strip_ansi("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn find_line_matches_through_colour_codes_and_stays_bounded() {
        let pattern = Regex::new(r"monokernel \S+ on gfx\d+ runs target_verify").unwrap();
        let log =
            b"start\n\x1b[32m[TP0]\x1b[0m monokernel muse_spark_dflash2_draft_hip on gfx950 runs target_verify steps\n";
        let mut budget = MAX_SCAN_BYTES;
        let m = find_line(log, &pattern, &mut budget).unwrap();
        assert_eq!(m.line, 2);
        assert!(m.text.starts_with("[TP0] monokernel"), "{}", m.text);
        // Invalid UTF-8 and a huge line are read without panics; the budget stops the scan.
        let mut huge = vec![0xff_u8; 3];
        huge.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES * 4));
        huge.extend_from_slice(b"\nmonokernel k on gfx950 runs target_verify\n");
        let mut budget = MAX_SCAN_BYTES;
        assert_eq!(find_line(&huge, &pattern, &mut budget).map(|m| m.line), Some(2));
        let mut small = 10;
        assert_eq!(find_line(&huge, &pattern, &mut small), None);
        assert_eq!(small, 0);
    }

    #[test]
    fn the_table_refuses_bad_patterns_duplicates_and_unknown_fields() {
        let entry = |id: &str, evidence: &str| {
            format!("[[paths]]\nid = \"{id}\"\nname = {{ en = \"p\", zh = \"p\" }}\nenabled_by = 'x'\nevidence = '{evidence}'\nsource = \"s\"\n")
        };
        assert!(parse_kernel_paths(&entry("a", "ok")).is_ok());
        assert!(matches!(
            parse_kernel_paths(&entry("a", "(")),
            Err(KernelPathError::Pattern { field: "evidence", .. })
        ));
        let twice = entry("a", "x") + &entry("a", "y");
        assert_eq!(parse_kernel_paths(&twice).unwrap_err(), KernelPathError::Duplicate("a".into()));
        assert!(matches!(parse_kernel_paths("[[paths]]\nid = 1\n"), Err(KernelPathError::Toml(_))));
    }
}
