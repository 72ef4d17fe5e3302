//! Escaping of untrusted text (PR titles, comment bodies, label names, logins) before it appears
//! in a comment the bot posts. Every function here guarantees: no @-mention or team ping, no raw
//! HTML (so no forged `<!-- sweepgate:` marker and no hidden text), no Markdown structure
//! (links, images, emphasis, headings, table pipes), no autolink (bare URLs, `www.`, `#123`,
//! `GH-123`), no invisible or reordering character (bidi controls and zero-width characters
//! are shown as U+FFFD), one line, bounded length.

/// Longest escaped snippet, in characters, before it is cut with `…`.
pub const MAX_CHARS: usize = 300;

/// Zero-width space: breaks `@user` mentions, `#123` / `GH-123` cross-references and bare-URL
/// autolinks without changing what a reader sees. Inserted only by us: the same character in
/// user text is replaced first.
const ZWSP: char = '\u{200B}';

/// Characters that hide or reorder text (Trojan Source): bidi embeddings, overrides and
/// isolates, directional marks, and zero-width characters.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

fn one_line_bounded(text: &str) -> (String, bool) {
    let mut out = String::new();
    let mut cut = false;
    for (count, c) in text.chars().enumerate() {
        if count == MAX_CHARS {
            cut = true;
            break;
        }
        out.push(if c.is_control() {
            ' '
        } else if is_invisible(c) {
            '\u{FFFD}'
        } else {
            c
        });
    }
    (out, cut)
}

/// Whether `chars[at..]` starts with `word` (ASCII, case-insensitive) at a word start.
fn word_at(chars: &[char], at: usize, word: &str) -> bool {
    let starts = at.checked_sub(1).and_then(|j| chars.get(j)).is_none_or(|c| !c.is_alphanumeric());
    starts && word.chars().enumerate().all(|(k, w)| chars.get(at + k).is_some_and(|c| c.eq_ignore_ascii_case(&w)))
}

/// Text for Markdown prose and table cells: every Markdown and HTML metacharacter escaped.
/// Intraword underscores (`multi_node`) stay as they are: GitHub never reads them as emphasis.
pub fn inline(text: &str) -> String {
    let (line, cut) = one_line_bounded(text);
    let chars: Vec<char> = line.chars().collect();
    let word_char = |j: Option<usize>| j.and_then(|j| chars.get(j)).is_some_and(|c| c.is_alphanumeric());
    let mut out = String::with_capacity(line.len() + 8);
    let digit_at = |j: usize| chars.get(j).is_some_and(char::is_ascii_digit);
    for (i, &c) in chars.iter().enumerate() {
        match c {
            // `GH-123` links an issue: `GH` + ZWSP + `-123` does not.
            '-' if i >= 2 && word_at(&chars, i - 2, "gh") && digit_at(i + 1) => {
                out.push(ZWSP);
                out.push('-');
            }
            // Bare URLs (`https://…`, any scheme) and `www.` hosts autolink.
            ':' if chars.get(i + 1) == Some(&'/') && chars.get(i + 2) == Some(&'/') => {
                out.push(':');
                out.push(ZWSP);
            }
            '.' if i >= 3 && word_at(&chars, i - 3, "www") => {
                out.push(ZWSP);
                out.push('.');
            }
            // `#123` links an issue even when the `#` is escaped.
            '#' if digit_at(i + 1) => {
                out.push_str("\\#");
                out.push(ZWSP);
            }
            '_' if word_char(i.checked_sub(1)) && word_char(Some(i + 1)) => out.push('_'),
            // List markers matter only at the start of a line.
            '-' | '+' if i > 0 => out.push(c),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '@' => {
                out.push('@');
                out.push(ZWSP);
            }
            '\\' | '`' | '*' | '_' | '{' | '}' | '[' | ']' | '(' | ')' | '#' | '+' | '-' | '!' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    if cut {
        out.push('…');
    }
    out
}

/// Text for plain-text output (JSON): one line, bounded, invisible characters shown as U+FFFD,
/// nothing escaped. Whoever displays it escapes it for their medium.
pub fn plain(text: &str) -> String {
    let (line, cut) = one_line_bounded(text);
    if cut {
        format!("{line}…")
    } else {
        line
    }
}

/// Text shown verbatim as an inline code span (GitHub neither links mentions nor renders HTML
/// inside code). The fence is longer than any backtick run in the text.
pub fn code(text: &str) -> String {
    let (line, cut) = one_line_bounded(text);
    let line = if cut { format!("{line}…") } else { line };
    let longest_run = line.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run + 1);
    let pad = if line.starts_with('`') || line.ends_with('`') || line.is_empty() { " " } else { "" };
    format!("{fence}{pad}{line}{pad}{fence}")
}

/// A GitHub login as a mention-free name: `@` is not added, and the login is escaped.
pub fn login(name: &str) -> String {
    inline(name)
}

/// A login the bot mentions on purpose (the signer of a sign-off, configured reviewers): a
/// well-formed login is returned as is, to be written after `@`; anything else is escaped.
pub fn mention(name: &str) -> String {
    let name = name.trim_start_matches('@');
    let bare = name.strip_suffix("[bot]").unwrap_or(name);
    let well_formed = !bare.is_empty()
        && bare.len() <= 39
        && !bare.starts_with('-')
        && bare.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if well_formed {
        name.to_owned()
    } else {
        inline(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_and_team_pings_are_broken() {
        let out = inline("ping @alice and @SemiAnalysisAI/core");
        assert!(!out.contains("@alice") && !out.contains("@SemiAnalysisAI"));
        assert!(out.contains("@\u{200B}alice"));
    }

    #[test]
    fn html_and_forged_markers_are_inert() {
        let out = inline("<!-- sweepgate:labels pr=1 --><img src=x onerror=alert(1)>");
        assert!(!out.contains('<') && !out.contains('>'));
        assert!(out.starts_with("&lt;\\!-- sweepgate:labels"));
    }

    #[test]
    fn markdown_structure_is_escaped_and_table_safe() {
        assert_eq!(inline("[x](javascript:y) | **b**"), "\\[x\\]\\(javascript:y\\) \\| \\*\\*b\\*\\*");
        assert_eq!(inline("- item-1 + 2"), "\\- item-1 + 2");
        assert_eq!(inline("line1\nline2\r\n# h"), "line1 line2  \\# h");
    }

    #[test]
    fn intraword_underscores_stay_readable() {
        assert_eq!(inline("benchmarks/multi_node/x_y.sh"), "benchmarks/multi_node/x_y.sh");
        assert_eq!(inline("_emphasis_"), "\\_emphasis\\_");
    }

    #[test]
    fn mentions_on_purpose_only_for_well_formed_logins() {
        assert_eq!(mention("alice-amd"), "alice-amd");
        assert_eq!(mention("@maint-a"), "maint-a");
        assert_eq!(mention("github-actions[bot]"), "github-actions[bot]");
        assert_eq!(mention("evil <b>"), "evil &lt;b&gt;");
    }

    #[test]
    fn autolinks_and_references_are_broken() {
        assert_eq!(inline("see #12"), "see \\#\u{200B}12");
        assert_eq!(inline("GH-7 and gh-8, not AGH-9 or GH-x"), "GH\u{200B}-7 and gh\u{200B}-8, not AGH-9 or GH-x");
        assert_eq!(inline("https://evil.example/x"), "https:\u{200B}//evil.example/x");
        assert_eq!(inline("www.evil.example"), "www\u{200B}.evil.example");
        assert_eq!(inline("a@b.example"), "a@\u{200B}b.example");
    }

    #[test]
    fn invisible_and_bidi_characters_are_shown() {
        let trojan = "ok\u{202E}dcba\u{2066}x\u{200B}y\u{FEFF}";
        assert_eq!(inline(trojan), "ok\u{FFFD}dcba\u{FFFD}x\u{FFFD}y\u{FFFD}");
        assert_eq!(code(trojan), "`ok\u{FFFD}dcba\u{FFFD}x\u{FFFD}y\u{FFFD}`");
    }

    #[test]
    fn long_text_is_cut() {
        let out = inline(&"a".repeat(1000));
        assert_eq!(out.chars().count(), MAX_CHARS + 1);
        assert!(out.ends_with('…'));
    }

    #[test]
    fn code_spans_survive_backticks() {
        assert_eq!(code("/use 12"), "`/use 12`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x`"), "`` `x` ``");
        assert_eq!(code(""), "`  `");
        assert_eq!(code("a\nb"), "`a b`");
    }
}
