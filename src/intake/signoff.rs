//! Sign-off checklists (spec 30 §1 and §4.4): detecting the phrase, parsing a comment or review
//! body into items, the additional-detail section, links and the `Signed:` line, parsing sign-off
//! URLs into a typed key, and matching the items against the current template for Check 5.
//!
//! Bodies are untrusted: the size is bounded, parsing is line-based and tolerant of broken
//! Markdown (missing bullets, lost indentation, a template pasted inside a code fence), and no
//! input makes it panic.

use std::fmt;
use std::str::FromStr;

use crate::domain::checklist_template::{
    anchors_match, is_detail_heading, normalize, parse_checkbox, signed_value, ChecklistTemplate, TemplateItem,
    TemplateVersion, Topic, SIGNOFF_PHRASE,
};

/// Largest sign-off body parsed (GitHub caps comments at 65,536 characters; this leaves room).
pub const MAX_SIGNOFF_BYTES: usize = 256 * 1024;

/// The template's placeholder for the additional detail section.
const DETAIL_PLACEHOLDER: &str = "insert any additional info here";

/// Share of a template item's words that a sign-off line must contain to match it by wording.
const WORD_COVERAGE: f64 = 0.8;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignoffError {
    #[error("sign-off body is {size} bytes; sweepgate reads at most {MAX_SIGNOFF_BYTES} bytes")]
    TooLarge { size: usize },
    #[error(
        "`{url}` is not a sign-off URL; expected https://github.com/<owner>/<repo>/pull/<n>[/files]#issuecomment-<id>, \
         #pullrequestreview-<id> or #discussion_r<id>"
    )]
    BadUrl { url: String },
    #[error("`{key}` is not a sign-off key; expected issuecomment-<id>, pullrequestreview-<id> or discussion_r<id>")]
    BadKey { key: String },
}

/// Whether a raw body is a sign-off (spec 30 §1.1: case-sensitive substring).
pub fn has_signoff_phrase(body: &str) -> bool {
    body.contains(SIGNOFF_PHRASE)
}

/// Where a sign-off lives (spec 30 §1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SignoffKind {
    /// A PR conversation comment: `issuecomment-<id>`.
    ConversationComment,
    /// A review summary: `pullrequestreview-<id>`.
    ReviewSummary,
    /// An inline review comment: `discussion_r<id>`.
    InlineReviewComment,
}

impl SignoffKind {
    const ALL: [SignoffKind; 3] =
        [SignoffKind::ConversationComment, SignoffKind::ReviewSummary, SignoffKind::InlineReviewComment];

    pub fn key_prefix(self) -> &'static str {
        match self {
            SignoffKind::ConversationComment => "issuecomment-",
            SignoffKind::ReviewSummary => "pullrequestreview-",
            SignoffKind::InlineReviewComment => "discussion_r",
        }
    }

    /// Upstream's wording of the kind ("conversation comment", …).
    pub fn describe(self) -> &'static str {
        match self {
            SignoffKind::ConversationComment => "conversation comment",
            SignoffKind::ReviewSummary => "review summary",
            SignoffKind::InlineReviewComment => "inline review comment",
        }
    }
}

/// The sign-off resource key: `issuecomment-N`, `pullrequestreview-N` or `discussion_rN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct SignoffKey {
    pub kind: SignoffKind,
    pub id: u64,
}

impl fmt::Display for SignoffKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.kind.key_prefix(), self.id)
    }
}

impl FromStr for SignoffKey {
    type Err = SignoffError;

    /// Case-insensitive prefix; the id is `[1-9][0-9]*` (spec 30 §3.1).
    fn from_str(s: &str) -> Result<SignoffKey, SignoffError> {
        let bad = || SignoffError::BadKey { key: s.chars().take(120).collect() };
        let lower = s.to_ascii_lowercase();
        SignoffKind::ALL
            .iter()
            .find_map(|&kind| {
                let digits = lower.strip_prefix(kind.key_prefix())?;
                let valid = !digits.is_empty()
                    && digits.len() <= 19
                    && !digits.starts_with('0')
                    && digits.bytes().all(|b| b.is_ascii_digit());
                let id = if valid { digits.parse().ok()? } else { return None };
                Some(SignoffKey { kind, id })
            })
            .ok_or_else(bad)
    }
}

/// A parsed sign-off URL (manual dispatch input).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SignoffUrl {
    /// `owner/name`, as written in the URL.
    pub repo: String,
    pub pr: u64,
    pub key: SignoffKey,
}

impl SignoffUrl {
    /// Parses `https://github.com/<owner>/<repo>/pull/<n>[/files]#<key>` (case-insensitive, the
    /// whole string must match; spec 30 §1.2 "Newer").
    pub fn parse(url: &str) -> Result<SignoffUrl, SignoffError> {
        let bad = || SignoffError::BadUrl { url: url.chars().take(200).collect() };
        if url.len() > 1024 {
            return Err(bad());
        }
        let trimmed = url.trim();
        let lower = trimmed.to_ascii_lowercase();
        let rest_lower = lower.strip_prefix("https://github.com/").ok_or_else(bad)?;
        let rest = trimmed.get(trimmed.len() - rest_lower.len()..).ok_or_else(bad)?;
        let (path, fragment) = rest.split_once('#').ok_or_else(bad)?;
        let key: SignoffKey = fragment.parse().map_err(|_| bad())?;
        let parts: Vec<&str> = path.split('/').collect();
        let (owner, name, pull, number, tail) = match parts.as_slice() {
            [o, n, p, num] => (*o, *n, *p, *num, None),
            [o, n, p, num, t] => (*o, *n, *p, *num, Some(*t)),
            _ => return Err(bad()),
        };
        let name_ok = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
        let tail_ok = tail.is_none_or(|t| t.eq_ignore_ascii_case("files"));
        let pr: u64 = match number.parse() {
            Ok(n) if n > 0 && number.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => return Err(bad()),
        };
        if !(name_ok(owner) && name_ok(name) && pull.eq_ignore_ascii_case("pull") && tail_ok) {
            return Err(bad());
        }
        Ok(SignoffUrl { repo: format!("{owner}/{name}"), pr, key })
    }
}

/// One checkbox line of a sign-off, with its continuation lines.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SignoffItem {
    /// 1-based line in the body.
    pub line: u32,
    pub indent: usize,
    pub checked: bool,
    /// The text after the checkbox, continuation lines joined with spaces.
    pub text: String,
    #[serde(skip)]
    normalized: String,
}

/// A link found in the body, and the part of the sign-off it sits in.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Link {
    pub line: u32,
    pub url: String,
    pub section: Section,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "in", content = "item")]
pub enum Section {
    /// Before the first item (preamble).
    Preamble,
    /// On an item (index into `Signoff::items`).
    Item(usize),
    /// In the additional detail section.
    Detail,
    /// After the `Signed:` line.
    Trailer,
}

/// The `Signed:` line.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Signed {
    pub line: u32,
    /// The login as written, without backticks or `@`.
    pub login: String,
    /// Still the template placeholder (`FILL_IN_GITHUB_USERNAME`) or empty.
    pub placeholder: bool,
}

/// A parsed sign-off body.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Signoff {
    /// Line of the opening phrase (absent in a dispatched body without it).
    pub phrase_line: Option<u32>,
    pub items: Vec<SignoffItem>,
    /// Line of the additional-detail heading.
    pub detail_line: Option<u32>,
    /// The additional-detail text (placeholder lines dropped), as written.
    pub detail: String,
    pub signed: Option<Signed>,
    pub links: Vec<Link>,
    /// The checklist was pasted inside a code fence, so GitHub shows no checkboxes.
    pub fenced: bool,
}

impl Signoff {
    /// Parses a body. Errors only on oversized input; anything else yields a (possibly empty)
    /// structure for the checks to judge.
    pub fn parse(body: &str) -> Result<Signoff, SignoffError> {
        if body.len() > MAX_SIGNOFF_BYTES {
            return Err(SignoffError::TooLarge { size: body.len() });
        }
        let mut out = Signoff::default();
        let mut section = Section::Preamble;
        // Whether the previous line may continue into this one (item text wraps).
        let mut continuing = false;
        let mut detail_lines: Vec<&str> = Vec::new();
        let mut in_fence = false;
        for (index, raw) in body.lines().enumerate() {
            let line = u32::try_from(index + 1).unwrap_or(u32::MAX);
            let trimmed = raw.trim();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                in_fence = !in_fence;
                continuing = false;
                continue;
            }
            if out.phrase_line.is_none() && raw.contains(SIGNOFF_PHRASE) {
                out.phrase_line = Some(line);
                out.fenced |= in_fence;
            }
            if let Some(value) = signed_value(raw) {
                let login = value.trim_matches('`').trim().trim_start_matches('@').trim().to_owned();
                let placeholder = login.is_empty() || login.eq_ignore_ascii_case("FILL_IN_GITHUB_USERNAME");
                out.signed = Some(Signed { line, login, placeholder });
                section = Section::Trailer;
                continuing = false;
            } else if section != Section::Trailer && section != Section::Detail && is_detail_heading(raw) {
                out.detail_line = Some(line);
                section = Section::Detail;
                continuing = false;
                // Text after the heading on the same line belongs to the section.
                if let Some((_, after)) = raw.split_once(':') {
                    if !after.trim().trim_matches(['*', '_']).is_empty() {
                        detail_lines.push(after);
                    }
                }
            } else if matches!(section, Section::Preamble | Section::Item(_)) {
                if let Some(cb) = parse_checkbox(raw) {
                    out.fenced |= in_fence;
                    out.items.push(SignoffItem {
                        line,
                        indent: cb.indent,
                        checked: cb.checked,
                        text: cb.text.to_owned(),
                        normalized: String::new(),
                    });
                    section = Section::Item(out.items.len() - 1);
                    continuing = true;
                } else if trimmed.is_empty() || trimmed.starts_with('#') {
                    continuing = false;
                } else if let (true, Some(item)) = (continuing, out.items.last_mut()) {
                    item.text.push(' ');
                    item.text.push_str(trimmed);
                }
            } else if section == Section::Detail {
                detail_lines.push(raw);
            }
            for url in urls_in(raw) {
                out.links.push(Link { line, url, section });
            }
        }
        for item in &mut out.items {
            item.normalized = normalize(&item.text);
        }
        let detail: Vec<&str> = detail_lines
            .into_iter()
            .filter(|l| !normalize(l).trim_start_matches(['-', ' ']).starts_with(DETAIL_PLACEHOLDER))
            .collect();
        out.detail = detail.join("\n").trim().to_owned();
        Ok(out)
    }

    /// Whether the `Signed:` name is `author` (logins compare case-insensitively). `None` when
    /// there is no usable `Signed:` line. Upstream ignores this; sweepgate reports it (P5).
    pub fn signed_by(&self, author: &str) -> Option<bool> {
        let signed = self.signed.as_ref().filter(|s| !s.placeholder)?;
        Some(signed.login.eq_ignore_ascii_case(author.trim_start_matches('@')))
    }

    /// Links in the additional detail section.
    pub fn detail_links(&self) -> impl Iterator<Item = &Link> {
        self.links.iter().filter(|l| l.section == Section::Detail)
    }

    /// The upstream recipe links of the additional detail section.
    pub fn recipe_links(&self) -> Vec<crate::domain::upstream_links::UpstreamLink> {
        crate::domain::upstream_links::upstream_links(&self.detail, self.detail_links().map(|l| l.url.as_str()))
    }
}

/// `http(s)://…` URLs in a line, from Markdown links and bare text, trailing punctuation trimmed.
fn urls_in(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find("http") {
        let candidate = rest.get(start..).unwrap_or_default();
        if !(candidate.starts_with("https://") || candidate.starts_with("http://")) {
            rest = candidate.get(4..).unwrap_or_default();
            continue;
        }
        let end = candidate.find(|c: char| c.is_whitespace() || "<>()[]`\"'|".contains(c)).unwrap_or(candidate.len());
        let url = candidate.get(..end).unwrap_or_default().trim_end_matches(['.', ',', ';', ':', '!', '?', '*']);
        if url.len() > "https://".len() {
            out.push(url.to_owned());
        }
        rest = candidate.get(end.max(1)..).unwrap_or_default();
    }
    out
}

/// How one template item fares in a sign-off (spec 30 §4.3–4.4). A result, not a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum ItemState {
    /// Present and checked.
    Checked,
    /// Present, not checked; `explained` when the additional detail section mentions the item.
    Unchecked { explained: bool },
    /// Only an older wording of the item is present (a stale copy of the template).
    Stale { wording_of: TemplateVersion },
    /// No matching item.
    Missing,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ItemMatch {
    /// Index into the template's items.
    pub template_item: usize,
    /// Index into the sign-off's items, when one matched.
    pub signoff_item: Option<usize>,
    pub state: ItemState,
}

/// Per-item results of matching a sign-off against the template.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TemplateMatch {
    pub items: Vec<ItemMatch>,
    /// Sign-off items that match no template item (often items of an older template).
    pub unmatched_signoff_items: Vec<usize>,
    /// The template generation the sign-off's items look like.
    pub signoff_version: TemplateVersion,
}

impl TemplateMatch {
    pub fn all_checked(&self) -> bool {
        self.items.iter().all(|m| m.state == ItemState::Checked)
    }
}

/// Matches every template item (sub-items included) with the sign-off's items. An item is
/// present when one sign-off line (with its continuation) carries all anchors of the template's
/// wording for that topic, or at least 80% of the template item's words (P4).
pub fn match_template(signoff: &Signoff, template: &ChecklistTemplate) -> TemplateMatch {
    let mut used = vec![false; signoff.items.len()];
    let detail = normalize(&signoff.detail);
    let mut items = Vec::with_capacity(template.items.len());
    for (ti, titem) in template.items.iter().enumerate() {
        let current = find_unused(&signoff.items, &used, |s| matches_current(titem, s));
        let state = match current {
            Some(si) => {
                if let Some(u) = used.get_mut(si) {
                    *u = true;
                }
                let checked = signoff.items.get(si).is_some_and(|s| s.checked);
                let m = if checked {
                    ItemState::Checked
                } else {
                    ItemState::Unchecked { explained: explained(titem, &detail) }
                };
                (Some(si), m)
            }
            None => match stale_match(titem, &signoff.items, &used) {
                Some((si, version)) => {
                    if let Some(u) = used.get_mut(si) {
                        *u = true;
                    }
                    (Some(si), ItemState::Stale { wording_of: version })
                }
                None => (None, ItemState::Missing),
            },
        };
        items.push(ItemMatch { template_item: ti, signoff_item: state.0, state: state.1 });
    }
    let unmatched_signoff_items = used.iter().enumerate().filter(|(_, u)| !**u).map(|(i, _)| i).collect();
    let mut topics = Vec::new();
    let mut legacy_t15 = false;
    for s in &signoff.items {
        if let Some((topic, wording)) = Topic::classify(&s.normalized) {
            legacy_t15 |= topic == Topic::T15 && wording.legacy.is_some();
            topics.push(topic);
        }
    }
    TemplateMatch { items, unmatched_signoff_items, signoff_version: TemplateVersion::recognise(&topics, legacy_t15) }
}

fn find_unused(items: &[SignoffItem], used: &[bool], pred: impl Fn(&SignoffItem) -> bool) -> Option<usize> {
    items.iter().enumerate().find(|(i, s)| !used.get(*i).copied().unwrap_or(true) && pred(s)).map(|(i, _)| i)
}

fn matches_current(titem: &TemplateItem, s: &SignoffItem) -> bool {
    titem.wording.is_some_and(|w| anchors_match(w.anchors, &s.normalized))
        || word_coverage(&titem.normalized, &s.normalized) >= WORD_COVERAGE
}

/// A sign-off item that carries another known wording of the template item's topic.
fn stale_match(titem: &TemplateItem, items: &[SignoffItem], used: &[bool]) -> Option<(usize, TemplateVersion)> {
    let topic = titem.topic?;
    let own = titem.wording.map(|w| w.anchors);
    topic.wordings().iter().filter(|w| Some(w.anchors) != own).find_map(|w| {
        let si = find_unused(items, used, |s| anchors_match(w.anchors, &s.normalized))?;
        // A newer wording than the template's own is not "stale"; report it by the template's era.
        Some((si, w.legacy.unwrap_or(TemplateVersion::Newest)))
    })
}

/// Whether the additional detail section addresses the item (spec 30 §9 Q12, decision P3):
/// it names the item's topic (any anchor, or its short name) or its number ("item 12", "T17").
fn explained(titem: &TemplateItem, detail: &str) -> bool {
    if detail.is_empty() {
        return false;
    }
    if contains_phrase(detail, &format!("item {}", titem.number)) {
        return true;
    }
    match (titem.topic, titem.wording) {
        (Some(topic), Some(wording)) => {
            wording.anchors.iter().flat_map(|g| g.iter()).any(|a| detail.contains(a))
                || detail.contains(&topic.short_name().to_lowercase())
                || contains_phrase(detail, &topic.id().to_lowercase())
        }
        _ => {
            // No known topic: any four consecutive words of the item quoted in the detail.
            let words: Vec<&str> = titem.normalized.split(' ').collect();
            words.windows(4).any(|w| detail.contains(&w.join(" ")))
        }
    }
}

/// Whether `phrase` occurs in `text` on word boundaries ("item 1" is not in "item 12").
fn contains_phrase(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(at, _)| {
        let before = text.get(..at).and_then(|b| b.chars().next_back());
        let after = text.get(at + phrase.len()..).and_then(|a| a.chars().next());
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// Share of the distinct significant words (3+ characters) of `template` found in `text`.
fn word_coverage(template: &str, text: &str) -> f64 {
    let words = |s: &str| -> std::collections::BTreeSet<String> {
        s.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
            .filter(|w| w.chars().count() >= 3)
            .map(str::to_owned)
            .collect()
    };
    let wanted = words(template);
    if wanted.is_empty() {
        return 0.0;
    }
    let have = words(text);
    let found = wanted.iter().filter(|w| have.contains(*w)).count();
    found as f64 / wanted.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(items: &str) -> ChecklistTemplate {
        let text = format!(
            "## Template\n```\n{SIGNOFF_PHRASE}, I have reviewed this and have:\n{items}\n\
             ### Additional detail section:\n- insert any additional info here\n\nSigned: `FILL_IN_GITHUB_USERNAME`\n```\n"
        );
        ChecklistTemplate::parse(&text, "t.md").0.unwrap()
    }

    const ITEMS: &str = "\
- [ ] Verified that this PR passes evals.  Please link to GitHub Action workflow that shows this.
- [ ] Verified that every affected vLLM/SGLang production serving configuration, Dynamo deployments included, is documented:
  - [ ] I linked the corresponding upstream PR in the [vLLM recipe repo](https://github.com/vllm-project/recipes) and verified that it is **MERGED**.
- [ ] If this PR uses `append-only: true`, verified that it only adds generated points.
- [ ] Confirmed the tea kettle policy for every benchmark node rack.";

    #[test]
    fn phrase_is_a_case_sensitive_substring() {
        assert!(has_signoff_phrase("x As a PR reviewer and CODEOWNER, I have"));
        assert!(!has_signoff_phrase("as a pr reviewer and codeowner"));
    }

    #[test]
    fn parses_items_detail_links_and_signature() {
        let body = "\
As a PR reviewer and CODEOWNER, I have reviewed this and have:
- [x] Verified that this PR passes evals. Link: https://github.com/o/r/actions/runs/123.
- [X] Verified that every affected vLLM/SGLang production serving configuration,
  Dynamo deployments included, is documented:
  - [ ] I linked the corresponding upstream PR and verified that it is **MERGED**.
* [x] If this PR uses `append-only: true`, verified.

### Additional detail section:
- insert any additional info here
- Recipe: [sglang#47394](https://github.com/sgl-project/sglang/pull/47394)
- waiver docs/waiver/2508.md

Signed: `alice-amd`
";
        let s = Signoff::parse(body).unwrap();
        assert_eq!(s.phrase_line, Some(1));
        assert_eq!(s.items.len(), 4);
        assert!(s.items[0].checked && s.items[1].checked && !s.items[2].checked && s.items[3].checked);
        assert_eq!(s.items[1].text, "Verified that every affected vLLM/SGLang production serving configuration, Dynamo deployments included, is documented:");
        assert_eq!(s.items[2].indent, 2);
        assert_eq!(s.detail_line, Some(8));
        assert!(!s.detail.contains("insert any additional"));
        assert!(s.detail.starts_with("- Recipe"));
        assert_eq!(s.signed, Some(Signed { line: 13, login: "alice-amd".into(), placeholder: false }));
        assert_eq!(s.signed_by("Alice-AMD"), Some(true));
        assert_eq!(s.signed_by("bob"), Some(false));
        assert_eq!(
            s.links,
            vec![
                Link { line: 2, url: "https://github.com/o/r/actions/runs/123".into(), section: Section::Item(0) },
                Link {
                    line: 10,
                    url: "https://github.com/sgl-project/sglang/pull/47394".into(),
                    section: Section::Detail
                },
            ]
        );
        assert_eq!(s.detail_links().count(), 1);
        assert!(!s.fenced);
    }

    #[test]
    fn placeholder_signature_and_missing_parts() {
        let s = Signoff::parse("As a PR reviewer and CODEOWNER\n- [x] a\nSigned: `FILL_IN_GITHUB_USERNAME`").unwrap();
        assert!(s.signed.as_ref().unwrap().placeholder);
        assert_eq!(s.signed_by("x"), None);
        assert_eq!(s.detail_line, None);
        let empty = Signoff::parse("").unwrap();
        assert!(empty.items.is_empty() && empty.signed.is_none() && empty.phrase_line.is_none());
    }

    #[test]
    fn fenced_paste_is_flagged_but_parsed() {
        let s = Signoff::parse("```\nAs a PR reviewer and CODEOWNER, I have:\n- [x] one\n```\n").unwrap();
        assert!(s.fenced);
        assert_eq!(s.items.len(), 1);
        let quoted_before = "```\nlog line\n```\nAs a PR reviewer and CODEOWNER, I have:\n- [x] one\n";
        assert!(!Signoff::parse(quoted_before).unwrap().fenced, "a closed fence before the checklist is not a paste");
    }

    #[test]
    fn crlf_bodies_parse_like_lf() {
        let lf = "As a PR reviewer and CODEOWNER\n- [x] one\n  continued\n### Additional detail section:\nwhy\nSigned: `a`\n";
        let crlf = lf.replace('\n', "\r\n");
        assert_eq!(Signoff::parse(&crlf).unwrap(), Signoff::parse(lf).unwrap());
    }

    #[test]
    fn item_numbers_match_on_word_boundaries() {
        assert!(contains_phrase("see item 1: n/a", "item 1"));
        assert!(!contains_phrase("see item 12: n/a", "item 1"));
        assert!(contains_phrase("t17 does not apply", "t17"));
        assert!(!contains_phrase("t170", "t17"));
    }

    #[test]
    fn oversized_body_is_refused() {
        let body = "a".repeat(MAX_SIGNOFF_BYTES + 1);
        assert_eq!(Signoff::parse(&body), Err(SignoffError::TooLarge { size: MAX_SIGNOFF_BYTES + 1 }));
    }

    #[test]
    fn garbage_never_panics() {
        for body in
            ["[", "- [", "Signed:", "### Additional detail section:", "http", "https://", "é[x]ü", "\u{0}- [x]\u{0}"]
        {
            let s = Signoff::parse(body).unwrap();
            let _ = match_template(&s, &template(ITEMS));
        }
    }

    #[test]
    fn complete_signoff_matches_every_item() {
        let t = template(ITEMS);
        let body = format!("{SIGNOFF_PHRASE}, I have reviewed this and have:\n{}\n", ITEMS.replace("[ ]", "[x]"));
        let m = match_template(&Signoff::parse(&body).unwrap(), &t);
        assert!(m.all_checked(), "{m:?}");
        assert!(m.unmatched_signoff_items.is_empty());
        assert_eq!(m.items.iter().map(|i| i.signoff_item).collect::<Vec<_>>(), [0, 1, 2, 3, 4].map(Some));
    }

    #[test]
    fn reworded_items_match_by_anchor_and_extra_link_text_is_ignored() {
        let t = template(ITEMS);
        let body = "\
- [x] Verified this PR passes evals: https://github.com/o/r/actions/runs/9
- [x] Every vLLM/SGLang production serving configuration (Dynamo too) is documented upstream
- [x] linked the vLLM recipe repo PR, verified MERGED
- [x] append-only: true is not used
- [x] Confirmed the tea kettle policy for every benchmark node rack";
        let m = match_template(&Signoff::parse(body).unwrap(), &t);
        assert!(m.all_checked(), "{m:?}");
    }

    #[test]
    fn unchecked_items_with_and_without_explanation() {
        let t = template(ITEMS);
        let body = format!(
            "{}\n### Additional detail section:\n- append-only: N/A, this PR appends nothing\n",
            ITEMS
                .replace("[ ]", "[x]")
                .replace("- [x] If this PR", "- [ ] If this PR")
                .replace("- [x] Confirmed", "- [ ] Confirmed")
        );
        let m = match_template(&Signoff::parse(&body).unwrap(), &t);
        assert_eq!(m.items[3].state, ItemState::Unchecked { explained: true });
        assert_eq!(m.items[4].state, ItemState::Unchecked { explained: false });
        let by_number =
            body.replace("append-only: N/A", "item 5: the tea kettle policy does not apply; append-only: N/A");
        let m = match_template(&Signoff::parse(&by_number).unwrap(), &t);
        assert_eq!(m.items[4].state, ItemState::Unchecked { explained: true });
    }

    #[test]
    fn stale_copy_is_detected_per_item() {
        let t = template(ITEMS);
        let body = "\
- [x] Verified that this PR passes evals.
- [x] Verified that every single-node vLLM/SGLang recipe in this PR is documented in the official vLLM recipes
  - [x] I linked the corresponding upstream PR in the vLLM recipe repo and verified that it is **MERGED**.
- [x] Some item that no longer exists in the template at all";
        let m = match_template(&Signoff::parse(body).unwrap(), &t);
        assert_eq!(m.items[0].state, ItemState::Checked);
        assert_eq!(m.items[1].state, ItemState::Stale { wording_of: TemplateVersion::Aug2026 });
        assert_eq!(m.items[2].state, ItemState::Checked);
        assert_eq!(m.items[3].state, ItemState::Missing, "the append-only item is missing (#2643)");
        assert_eq!(m.items[4].state, ItemState::Missing);
        assert_eq!(m.unmatched_signoff_items, [3]);
        assert_eq!(m.signoff_version, TemplateVersion::Aug2026);
        assert!(!m.all_checked());
    }

    #[test]
    fn signoff_keys() {
        for (s, kind, id) in [
            ("issuecomment-123", SignoffKind::ConversationComment, 123),
            ("PullRequestReview-9", SignoffKind::ReviewSummary, 9),
            ("discussion_r77", SignoffKind::InlineReviewComment, 77),
        ] {
            let key: SignoffKey = s.parse().unwrap();
            assert_eq!((key.kind, key.id), (kind, id));
            assert_eq!(key.to_string().to_lowercase(), s.to_lowercase());
        }
        for bad in [
            "issuecomment-",
            "issuecomment-0",
            "issuecomment-01",
            "comment-1",
            "discussion_r1x",
            "issuecomment-99999999999999999999",
        ] {
            assert!(bad.parse::<SignoffKey>().is_err(), "{bad}");
        }
    }

    #[test]
    fn signoff_urls() {
        let u = SignoffUrl::parse("https://github.com/SemiAnalysisAI/InferenceX/pull/2508#issuecomment-4242").unwrap();
        assert_eq!(u.repo, "SemiAnalysisAI/InferenceX");
        assert_eq!(u.pr, 2508);
        assert_eq!(u.key.to_string(), "issuecomment-4242");
        let u = SignoffUrl::parse("HTTPS://GitHub.com/o/r/pull/7/files#discussion_r5").unwrap();
        assert_eq!((u.repo.as_str(), u.pr, u.key.kind), ("o/r", 7, SignoffKind::InlineReviewComment));
        let u = SignoffUrl::parse("https://github.com/o/r/pull/7#pullrequestreview-3").unwrap();
        assert_eq!(u.key.kind, SignoffKind::ReviewSummary);
        for bad in [
            "https://github.com/o/r/pull/7",
            "https://github.com/o/r/issues/7#issuecomment-1",
            "http://github.com/o/r/pull/7#issuecomment-1",
            "https://github.com/o/r/pull/0#issuecomment-1",
            "https://github.com/o/r/pull/7/commits#issuecomment-1",
            "https://github.com/o/r/pull/7#issuecomment-1x",
            "https://evil.com/o/r/pull/7#issuecomment-1",
            "https://github.com/o/r/pull/7#issuecomment-1 trailing",
            "https://github.com/o r/x/pull/7#issuecomment-1",
        ] {
            assert!(SignoffUrl::parse(bad).is_err(), "{bad}");
        }
    }
}
