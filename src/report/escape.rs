//! Escaping of untrusted text (PR titles, paths, logins, quoted config values) before it
//! appears in a Markdown comment: no @-mention pings, no HTML (so no forged hidden markers),
//! nothing that breaks a table row or a one-line report row, bounded length.

/// Longest untrusted value shown inline; longer values are cut with an ellipsis.
pub const MAX_INLINE_CHARS: usize = 300;

/// Escapes a value for inline Markdown text. Intraword underscores (`multi_node`) stay as they
/// are: GitHub never reads them as emphasis.
pub fn inline(text: &str) -> String {
    let chars: Vec<char> = text.chars().take(MAX_INLINE_CHARS + 1).collect();
    let mut out = String::with_capacity(text.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        if i == MAX_INLINE_CHARS {
            out.push('…');
            break;
        }
        let word_char = |j: Option<usize>| j.and_then(|j| chars.get(j)).is_some_and(|c| c.is_alphanumeric());
        match c {
            // A word joiner after '@' keeps the text readable but stops the mention.
            '@' => out.push_str("@\u{2060}"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '_' if word_char(i.checked_sub(1)) && word_char(Some(i + 1)) => out.push('_'),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '\r' | '\n' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Text shown as an inline code span: backticks and line breaks removed, length bounded.
/// Markdown does not interpret anything inside a code span, and HTML is not rendered there.
pub fn code_span(text: &str) -> String {
    let cleaned: String =
        text.chars().take(MAX_INLINE_CHARS).map(|c| if c == '`' || c.is_control() { ' ' } else { c }).collect();
    let cleaned = cleaned.trim();
    if cleaned.is_empty() {
        return "` `".to_owned();
    }
    format!("`{cleaned}`")
}

/// A GitHub login as it may be @-mentioned on purpose (the signer of a sign-off): only a
/// well-formed login is returned as is; anything else is escaped.
pub fn login(text: &str) -> String {
    let well_formed = !text.is_empty()
        && text.len() <= 39 + "[bot]".len()
        && text.trim_end_matches("[bot]").chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if well_formed {
        text.to_owned()
    } else {
        inline(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_html_and_markers_are_neutralised() {
        let hostile = "@org/team <!-- sweepgate:verdict signoff=issuecomment-1 --> <img src=x>";
        let escaped = inline(hostile);
        assert!(!escaped.contains("@org"), "{escaped}");
        assert!(!escaped.contains("<!--"), "{escaped}");
        assert!(!escaped.contains('<'), "{escaped}");
    }

    #[test]
    fn table_and_row_breakers_are_neutralised() {
        assert_eq!(inline("a|b\nc"), "a\\|b c");
        assert_eq!(inline("`code`"), "\\`code\\`");
        assert_eq!(inline("[link](http://x)"), "\\[link\\](http://x)");
    }

    #[test]
    fn intraword_underscores_stay_readable() {
        assert_eq!(inline("benchmarks/multi_node/x_y.sh"), "benchmarks/multi_node/x_y.sh");
        assert_eq!(inline("_emphasis_"), "\\_emphasis\\_");
    }

    #[test]
    fn long_values_are_cut() {
        let long = "x".repeat(1000);
        assert_eq!(inline(&long).chars().count(), MAX_INLINE_CHARS + 1);
    }

    #[test]
    fn code_spans_cannot_be_closed_early() {
        assert_eq!(code_span("--hf-overrides"), "`--hf-overrides`");
        assert_eq!(code_span("a`b\nc"), "`a b c`");
        assert_eq!(code_span("``"), "` `");
    }

    #[test]
    fn logins() {
        assert_eq!(login("alice-amd"), "alice-amd");
        assert_eq!(login("github-actions[bot]"), "github-actions[bot]");
        assert_eq!(login("evil <b>"), "evil &lt;b&gt;");
        assert_eq!(login(""), "");
    }
}
