//! The review checklist template (`docs/PR_REVIEW_CHECKLIST.md`, spec 30 §4): the fenced block
//! under `## Template`, read from the default branch at verification time and never hard-coded.
//!
//! Each item is classified into a known topic (T1…T19, T15a) by the anchors of spec 30 §4.3
//! when its wording carries them; items of a future template that match no known topic are kept
//! and matched by wording alone (see `intake::signoff::match_template`).

use crate::diag::Diagnostic;
use crate::yaml::Pos;

/// The opening phrase that makes a comment a sign-off (spec 30 §1.1; case-sensitive substring).
pub const SIGNOFF_PHRASE: &str = "As a PR reviewer and CODEOWNER";

/// Largest checklist file read.
pub const MAX_TEMPLATE_BYTES: usize = 1024 * 1024;

/// A checklist topic of spec 30 §4.2, in template order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum Topic {
    T1,
    T2,
    T3,
    T4,
    T5,
    T6,
    T7,
    T8,
    T9,
    T10,
    T11,
    T12,
    T13,
    T14,
    T15,
    T15a,
    T16,
    T17,
    T18,
    T19,
}

/// Normalized phrases that must all occur (each group: any one alternative).
type AnchorSet = &'static [&'static [&'static str]];

/// One wording of a topic: its anchors, and whether it is an older wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Wording {
    #[serde(skip)]
    pub anchors: AnchorSet,
    /// `None` for the current wording; otherwise the template version that used it.
    pub legacy: Option<TemplateVersion>,
}

impl Topic {
    pub const ALL: [Topic; 20] = [
        Topic::T1,
        Topic::T2,
        Topic::T3,
        Topic::T4,
        Topic::T5,
        Topic::T6,
        Topic::T7,
        Topic::T8,
        Topic::T9,
        Topic::T10,
        Topic::T11,
        Topic::T12,
        Topic::T13,
        Topic::T14,
        Topic::T15,
        Topic::T15a,
        Topic::T16,
        Topic::T17,
        Topic::T18,
        Topic::T19,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Topic::T1 => "T1",
            Topic::T2 => "T2",
            Topic::T3 => "T3",
            Topic::T4 => "T4",
            Topic::T5 => "T5",
            Topic::T6 => "T6",
            Topic::T7 => "T7",
            Topic::T8 => "T8",
            Topic::T9 => "T9",
            Topic::T10 => "T10",
            Topic::T11 => "T11",
            Topic::T12 => "T12",
            Topic::T13 => "T13",
            Topic::T14 => "T14",
            Topic::T15 => "T15",
            Topic::T15a => "T15a",
            Topic::T16 => "T16",
            Topic::T17 => "T17",
            Topic::T18 => "T18",
            Topic::T19 => "T19",
        }
    }

    /// Short English name (spec 30 §4.3), used in Check 5 messages.
    pub fn short_name(self) -> &'static str {
        match self {
            Topic::T1 => "latest checklist",
            Topic::T2 => "code quality",
            Topic::T3 => "PR validation link",
            Topic::T4 => "evals link",
            Topic::T5 => "chat templates",
            Topic::T6 => "draft model as shipped",
            Topic::T7 => "golden AL",
            Topic::T8 => "deprecated models",
            Topic::T9 => "architecture hacks",
            Topic::T10 => "integer all-reduce",
            Topic::T11 => "Dynamo TRT-LLM metrics",
            Topic::T12 => "upstream docker repos",
            Topic::T13 => "main-branch images",
            Topic::T14 => "engine-first ordering",
            Topic::T15 => "upstream recipe coverage",
            Topic::T15a => "merged upstream PR link",
            Topic::T16 => "no engine patches / waiver",
            Topic::T17 => "append-only",
            Topic::T18 => "reasoning if not satisfied",
            Topic::T19 => "Pareto counts",
        }
    }

    /// The checks this item feeds (spec 30 §4.3).
    pub fn checks(self) -> &'static [u8] {
        match self {
            Topic::T1 | Topic::T18 => &[5],
            Topic::T2 => &[],
            Topic::T3 => &[1],
            Topic::T4 => &[1, 2],
            Topic::T5 => &[9],
            Topic::T6 => &[13],
            Topic::T7 => &[11],
            Topic::T8 => &[7],
            Topic::T9 | Topic::T10 => &[8],
            Topic::T11 => &[17],
            Topic::T12 | Topic::T13 | Topic::T14 => &[6],
            Topic::T15 | Topic::T15a => &[3],
            Topic::T16 => &[10],
            Topic::T17 => &[12],
            Topic::T19 => &[14],
        }
    }

    /// Known wordings, current first (anchors of spec 30 §4.3; legacy wordings of §4.4–4.5).
    pub fn wordings(self) -> &'static [Wording] {
        // Struct literals (not fn calls) so that the tables are promoted to statics.
        macro_rules! w {
            ($a:expr) => {
                Wording { anchors: $a, legacy: None }
            };
        }
        macro_rules! old {
            ($a:expr, $v:expr) => {
                Wording { anchors: $a, legacy: Some($v) }
            };
        }
        match self {
            Topic::T1 => &[w!(&[&["latest version of"], &["pr_review_checklist"]])],
            Topic::T2 => &[w!(&[&["general code quality"]])],
            Topic::T3 => &[w!(&[&["passed pr validation"]])],
            Topic::T4 => &[w!(&[&["passes evals"]])],
            Topic::T5 => &[w!(&[&["chat template"], &["al distribution"]])],
            Topic::T6 => &[
                w!(&[&["served as it ships"], &["sglang_nvfp4_ckpt_fp8_nextn_moe"]]),
                old!(&[&["served as it ships"]], TemplateVersion::Sep2026),
            ],
            Topic::T7 => &[w!(&[&["simulated synthetic acceptance"], &["golden al"]])],
            Topic::T8 => &[w!(&[&["models.md"], &["deprecated model"]])],
            Topic::T9 => &[w!(&[&["model architecture"], &["flops"]])],
            Topic::T10 => &[w!(&[&["integer all-reduce"], &["rocm_quick_reduce_quantization"]])],
            Topic::T11 => &[w!(&[&["dynamo trt-llm"], &["metrics"], &["check 17"]])],
            Topic::T12 => {
                &[w!(&[&["hub.docker.com/u/vllm", "vllm docker"], &["hub.docker.com/u/lmsysorg", "lmsysorg"]])]
            }
            Topic::T13 => &[w!(&[&["non-preview"], &["built from master"]])],
            Topic::T14 => &[w!(&[&["before additional frameworks"]])],
            Topic::T15 => &[
                w!(&[&["production serving configuration"], &["dynamo"]]),
                old!(&[&["every single-node vllm/sglang recipe"]], TemplateVersion::Aug2026),
                old!(&[&["recipes are similar"]], TemplateVersion::Aug2026),
            ],
            Topic::T15a => &[
                w!(&[&["merged"], &["vllm recipe repo", "sglang"]]),
                old!(&[&["if they are not"], &["pr has been opened"]], TemplateVersion::Aug2026),
            ],
            Topic::T16 => &[w!(&[&["does not patch the inference engine"], &["waiver"]])],
            Topic::T17 => &[w!(&[&["append-only: true"]])],
            Topic::T18 => &[w!(&[&["cannot reasonably be satisfied"]])],
            Topic::T19 => &[w!(&[&["pareto"], &["5 points", "≥5", "≥ 5", ">= 5"]])],
        }
    }

    /// The first known wording of any topic whose anchors all occur in `normalized` text.
    pub fn classify(normalized: &str) -> Option<(Topic, Wording)> {
        Topic::ALL.iter().find_map(|&topic| {
            topic.wordings().iter().find(|w| anchors_match(w.anchors, normalized)).map(|&w| (topic, w))
        })
    }
}

/// Whether every anchor group has an alternative contained in `normalized`.
pub fn anchors_match(anchors: AnchorSet, normalized: &str) -> bool {
    !anchors.is_empty() && anchors.iter().all(|group| group.iter().any(|a| normalized.contains(a)))
}

/// Known template generations (spec 30 §4.5), oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TemplateVersion {
    /// 14 items (T1–T5, T7–T9, T12, T14, T15+T15a, T16–T18), 2026-08-21.
    Aug2026,
    /// Adds T6 and T19; paths under `inferencex-e2e/`.
    Sep2026,
    /// T15/T15a take the production-serving wording.
    Oct2026,
    /// Adds T10, T11 and T13 (19 items + 1 sub-item).
    Newest,
}

impl TemplateVersion {
    /// The generation a set of recognised topics looks like: the newest generation whose
    /// distinguishing topics are all present.
    pub fn recognise(topics: &[Topic], legacy_t15: bool) -> TemplateVersion {
        let has = |t: Topic| topics.contains(&t);
        if has(Topic::T10) && has(Topic::T11) && has(Topic::T13) {
            TemplateVersion::Newest
        } else if (has(Topic::T6) || has(Topic::T19)) && has(Topic::T15) && !legacy_t15 {
            TemplateVersion::Oct2026
        } else if has(Topic::T6) || has(Topic::T19) {
            TemplateVersion::Sep2026
        } else {
            TemplateVersion::Aug2026
        }
    }
}

/// One `- [ ]` line of the template.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TemplateItem {
    /// 1-based position among top-level items; sub-items share their parent's number plus a
    /// letter ("11a").
    pub number: String,
    pub line: u32,
    /// The item text after the checkbox, as written.
    pub text: String,
    /// Lower-cased, whitespace-collapsed, links reduced to text (see [`normalize`]).
    pub normalized: String,
    /// Index of the parent item for a sub-item.
    pub parent: Option<usize>,
    pub topic: Option<Topic>,
    /// The wording the template itself uses for its topic.
    #[serde(skip)]
    pub wording: Option<Wording>,
}

impl TemplateItem {
    /// How the item is named in messages: "T17 (append-only)" or "item 14".
    pub fn label(&self) -> String {
        match self.topic {
            Some(t) => format!("{} ({})", t.id(), t.short_name()),
            None => format!("item {}", self.number),
        }
    }
}

/// The parsed template block.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ChecklistTemplate {
    pub file: String,
    /// Line of the opening phrase.
    pub opening_line: u32,
    pub items: Vec<TemplateItem>,
    /// The additional-detail heading as written (e.g. `### Additional detail section:`).
    pub detail_heading: Option<String>,
    /// The `Signed:` placeholder (e.g. `FILL_IN_GITHUB_USERNAME`).
    pub signed_placeholder: Option<String>,
    /// The generation this template looks like.
    pub version: TemplateVersion,
}

impl ChecklistTemplate {
    /// Parses the checklist file. `None` (with an error) when no template block can be found.
    pub fn parse(text: &str, file: &str) -> (Option<ChecklistTemplate>, Vec<Diagnostic>) {
        let mut diags = Vec::new();
        let err = |line: u32, message: String| Diagnostic::new(file, Some(Pos { line, col: 1 }), message);
        if text.len() > MAX_TEMPLATE_BYTES {
            diags.push(Diagnostic::new(file, None, format!("file exceeds {MAX_TEMPLATE_BYTES} bytes")));
            return (None, diags);
        }
        let Some(block) = template_block(text) else {
            diags.push(Diagnostic::new(
                file,
                None,
                format!(
                    "no template found: expected a fenced ``` block under `## Template` that starts with \
                     \"{SIGNOFF_PHRASE}, I have reviewed this and have:\""
                ),
            ));
            return (None, diags);
        };
        let mut items: Vec<TemplateItem> = Vec::new();
        let mut detail_heading = None;
        let mut signed_placeholder = None;
        let mut opening_line = 0;
        let mut top_count = 0usize;
        let mut sub_count = 0u8;
        // Whether the next plain line continues the last item's text (a wrapped item).
        let mut continuing = false;
        for (line, raw) in block {
            if raw.contains(SIGNOFF_PHRASE) {
                opening_line = line;
                continue;
            }
            if let Some(item) = parse_checkbox(raw) {
                continuing = true;
                if item.checked {
                    diags.push(err(line, "template item is pre-checked; the template should ship `- [ ]`".into()));
                }
                let top_parent = items.iter().rposition(|i| i.parent.is_none());
                let (number, parent) = match top_parent {
                    Some(p) if item.indent > 0 => {
                        sub_count = sub_count.saturating_add(1);
                        let letter = char::from(b'a'.saturating_add(sub_count.saturating_sub(1)).min(b'z'));
                        (format!("{top_count}{letter}"), Some(p))
                    }
                    _ => {
                        top_count += 1;
                        sub_count = 0;
                        (top_count.to_string(), None)
                    }
                };
                items.push(TemplateItem {
                    number,
                    line,
                    text: item.text.to_owned(),
                    normalized: String::new(),
                    parent,
                    topic: None,
                    wording: None,
                });
            } else if is_detail_heading(raw) {
                detail_heading = Some(raw.trim().to_owned());
                continuing = false;
            } else if let Some(rest) = signed_value(raw) {
                signed_placeholder = Some(rest.trim_matches('`').trim().to_owned());
                continuing = false;
            } else if raw.trim().is_empty() || raw.trim_start().starts_with('#') {
                continuing = false;
            } else if let (true, Some(last)) = (continuing, items.last_mut()) {
                last.text.push(' ');
                last.text.push_str(raw.trim());
            }
        }
        for item in &mut items {
            item.normalized = normalize(&item.text);
            let classified = Topic::classify(&item.normalized);
            item.topic = classified.map(|(t, _)| t);
            item.wording = classified.map(|(_, w)| w);
        }
        if opening_line == 0 {
            diags.push(Diagnostic::new(file, None, format!("the template does not contain \"{SIGNOFF_PHRASE}\"")));
        }
        if items.is_empty() {
            diags.push(Diagnostic::new(file, None, "the template block has no `- [ ]` items"));
        }
        if detail_heading.is_none() {
            diags.push(
                Diagnostic::new(file, None, "the template has no `### Additional detail section:` heading").warning(),
            );
        }
        if signed_placeholder.is_none() {
            diags.push(Diagnostic::new(file, None, "the template has no `Signed:` line").warning());
        }
        let mut seen: Vec<(Topic, u32)> = Vec::new();
        for item in &items {
            if let Some(t) = item.topic {
                if let Some((_, first)) = seen.iter().find(|(s, _)| *s == t) {
                    diags.push(
                        err(item.line, format!("item looks like {} again (first at line {first})", t.id())).warning(),
                    );
                } else {
                    seen.push((t, item.line));
                }
            }
        }
        let topics: Vec<Topic> = items.iter().filter_map(|i| i.topic).collect();
        let legacy_t15 =
            items.iter().any(|i| i.topic == Some(Topic::T15) && i.wording.is_some_and(|w| w.legacy.is_some()));
        let version = TemplateVersion::recognise(&topics, legacy_t15);
        let template = ChecklistTemplate {
            file: file.to_owned(),
            opening_line,
            items,
            detail_heading,
            signed_placeholder,
            version,
        };
        (Some(template), diags)
    }
}

/// The lines (1-based numbers) of the first fenced block that holds the sign-off phrase,
/// preferring one under a heading that starts with "Template" (or "模板").
fn template_block(text: &str) -> Option<Vec<(u32, &str)>> {
    let mut blocks: Vec<(bool, Vec<(u32, &str)>)> = Vec::new();
    let mut under_template = false;
    let mut current: Option<(String, Vec<(u32, &str)>)> = None;
    for (index, raw) in text.lines().enumerate() {
        let line = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let trimmed = raw.trim_start();
        match &mut current {
            Some((fence, lines)) => {
                if trimmed.starts_with(fence.as_str())
                    && trimmed.trim_start_matches(fence.chars().next().unwrap_or('`')).trim().is_empty()
                {
                    let (_, lines) = current.take().unwrap_or_default();
                    blocks.push((under_template, lines));
                } else {
                    lines.push((line, raw));
                }
            }
            None => {
                if let Some(fence) = fence_open(trimmed) {
                    current = Some((fence, Vec::new()));
                } else if let Some(heading) = trimmed.strip_prefix('#') {
                    let title = heading.trim_start_matches('#').trim().to_lowercase();
                    under_template = title.starts_with("template") || title.starts_with("模板");
                }
            }
        }
    }
    if let Some((_, lines)) = current {
        blocks.push((under_template, lines));
    }
    let has_phrase = |lines: &[(u32, &str)]| lines.iter().any(|(_, l)| l.contains(SIGNOFF_PHRASE));
    let pick = blocks
        .iter()
        .position(|(t, l)| *t && has_phrase(l))
        .or_else(|| blocks.iter().position(|(_, l)| has_phrase(l)))?;
    blocks.into_iter().nth(pick).map(|(_, l)| l)
}

/// The fence string when `line` opens a fenced code block (``` or ~~~, three or more).
fn fence_open(line: &str) -> Option<String> {
    for c in ['`', '~'] {
        let n = line.chars().take_while(|&x| x == c).count();
        if n >= 3 {
            return Some(std::iter::repeat_n(c, n).collect());
        }
    }
    None
}

/// A checkbox line as written: `- [ ] text`, `* [x] text`, `1. [X] text`, tolerating a missing
/// bullet or missing spaces (broken Markdown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkbox<'a> {
    /// Leading columns (tabs count as 4).
    pub indent: usize,
    pub checked: bool,
    pub text: &'a str,
}

pub fn parse_checkbox(line: &str) -> Option<Checkbox<'_>> {
    let body = line.trim_start();
    let indent: usize =
        line.get(..line.len() - body.len()).unwrap_or_default().chars().map(|c| if c == '\t' { 4 } else { 1 }).sum();
    let mut rest = body;
    if let Some(r) = rest.strip_prefix(['-', '*', '+']) {
        rest = r.trim_start();
    } else {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 {
            if let Some(r) = rest.get(digits..).and_then(|r| r.strip_prefix(['.', ')'])) {
                rest = r.trim_start();
            }
        }
    }
    let inner = rest.strip_prefix('[')?;
    let (mark, after) = inner.split_once(']')?;
    let checked = match mark.trim() {
        "" => false,
        "x" | "X" | "✓" | "✔" => true,
        _ => return None,
    };
    if mark.chars().count() > 2 {
        return None;
    }
    Some(Checkbox { indent, checked, text: after.trim() })
}

/// Whether a line is the additional-detail heading (any heading level, bold, or plain text).
///
/// Minor wording drift is fine (upstream prompt Check 5, decision CO3): `Additional details:`,
/// `## Additional detail section`, `**Additional Detail Section**` all open it.
pub fn is_detail_heading(line: &str) -> bool {
    let stripped = line.trim().trim_start_matches('#').trim().trim_matches(|c| c == '*' || c == '_').trim();
    stripped.to_lowercase().starts_with("additional detail")
}

/// Spellings of the signature line's label, lower-case, longest first (decision CO3: minor
/// wording drift is fine). The label must be followed by `:`/`：` or a space.
const SIGNED_LABELS: [&str; 5] = ["signed-off-by", "signed off by", "signed by", "signed-by", "signed"];

/// The value after `Signed:` (or a drifted label: `Signed by @a`, `Signed-off-by: a`) on a
/// signature line.
pub fn signed_value(line: &str) -> Option<&str> {
    let t = line.trim().trim_start_matches(['*', '_']).trim_start();
    let label = SIGNED_LABELS.iter().find(|l| t.get(..l.len()).is_some_and(|p| p.eq_ignore_ascii_case(l)))?;
    let rest = t[label.len()..].trim_start_matches(['*', '_']);
    let rest = match rest.strip_prefix(':').or_else(|| rest.strip_prefix('：')) {
        Some(after) => after,
        // Without a colon only a drifted label counts (`Signed by @a`), never a sentence
        // that starts with "Signed".
        None if *label != "signed" && rest.starts_with(' ') => rest,
        None => return None,
    };
    Some(rest.trim().trim_matches(['*', '_']).trim())
}

/// Normalizes text for anchor matching (spec 30 §4.3): Markdown links reduced to their text,
/// backticks and emphasis removed, lower-cased, whitespace collapsed.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            ']' => {
                // `[text](url)`: drop the `(url)` part.
                let rest = text.get(i + 1..).unwrap_or_default();
                if rest.starts_with('(') {
                    if let Some(close) = rest.find(')') {
                        let skip_to = i + 1 + close;
                        while chars.peek().is_some_and(|&(j, _)| j <= skip_to) {
                            chars.next();
                        }
                    }
                }
            }
            '[' | '`' | '*' => {}
            '_' if is_emphasis_underscore(text, i) => {}
            c if c.is_whitespace() => {
                if !out.ends_with(' ') && !out.is_empty() {
                    out.push(' ');
                }
            }
            c => out.extend(c.to_lowercase()),
        }
    }
    out.trim_end().to_owned()
}

/// `_` as emphasis (`__bold__`, `_it_`) rather than inside a word such as `pr_review_checklist`.
fn is_emphasis_underscore(text: &str, i: usize) -> bool {
    let before = text.get(..i).and_then(|s| s.chars().next_back());
    let after = text.get(i + 1..).and_then(|s| s.chars().next());
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric());
    !(word(before) && word(after))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NEWEST_ITEMS: &str = "\
- [ ] Verified that as of the moment of typing this, this is the latest version of [PR_REVIEW_CHECKLIST.md](https://x/inferencex-e2e/docs/PR_REVIEW_CHECKLIST.md)
- [ ] Verified that the general code quality meets the InferenceX standard.
- [ ] Verified that this PR has passed PR validation. Please link to GitHub Action workflow that shows this.
- [ ] Verified that this PR passes evals. Please link to GitHub Action workflow that shows this.
- [ ] Verified that speculative decoding PRs uses chat templates to align the AL distribution to real world
- [ ] Verified that every draft model and draft head is served as it ships; `SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE` is not enabled.
- [ ] For agentic workloads: verified simulated synthetic acceptance with the golden AL curve in [golden_al_distribution/](https://x).
- [ ] Verified against the current [MODELS.md](https://x) that this PR does not submit a deprecated model, scenario, or combination.
- [ ] Verified that the model architecture isn't changed with benchmark hacks; no fewer FLOPs.
- [ ] Verified that new models disable integer all-reduce; SGLang on ROCm sets `ROCM_QUICK_REDUCE_QUANTIZATION=NONE`.
- [ ] For affected Dynamo TRT-LLM benchmarks, verified iteration/KV-cache metrics are published (see verifier Check 17).
- [ ] Verified upstream https://hub.docker.com/u/vllm and https://hub.docker.com/u/lmsysorg docker repos.
- [ ] For official non-preview InferenceX, established models use upstream images built from master.
- [ ] Verified that the vLLM/SGLang submission has been made before additional frameworks (TRT-LLM, ATOM, etc.).
- [ ] Verified that every affected vLLM/SGLang production serving configuration, Dynamo included, is documented:
  - [ ] I linked the upstream PR in the [vLLM recipe repo](https://x) or [SGLang cookbook source repo](https://y) and verified it is **MERGED**.
- [ ] Verified that this PR does not patch the inference engine or serving stack, except under a waiver.
- [ ] If this PR uses `append-only: true`, verified that it only adds points.
- [ ] If any of the above criteria cannot reasonably be satisfied, I have provided additional reasoning below.
- [ ] Reported measured Pareto counts per affected curve (at least 5 points strongly recommended).
";

    fn newest_template() -> String {
        format!(
            "# PR Review Checklist\n\nIntro.\n\n## Template\n```\n{SIGNOFF_PHRASE}, I have reviewed this and have:\n\
             {NEWEST_ITEMS}\n### Additional detail section:\n- insert any additional info here\n\n\
             Signed: `FILL_IN_GITHUB_USERNAME`\n```\n\n## Example\n"
        )
    }

    #[test]
    fn newest_template_has_19_items_plus_one_sub_item_all_classified() {
        let (t, diags) = ChecklistTemplate::parse(&newest_template(), "docs/PR_REVIEW_CHECKLIST.md");
        assert!(diags.is_empty(), "{diags:?}");
        let t = t.unwrap();
        assert_eq!(t.items.len(), 20);
        assert_eq!(t.items.iter().filter(|i| i.parent.is_none()).count(), 19);
        let topics: Vec<Topic> = t.items.iter().map(|i| i.topic.unwrap()).collect();
        assert_eq!(topics, Topic::ALL);
        let sub = t.items.iter().find(|i| i.parent.is_some()).unwrap();
        assert_eq!(sub.number, "15a");
        assert_eq!(sub.topic, Some(Topic::T15a));
        assert_eq!(t.opening_line, 7);
        assert_eq!(t.items[0].line, 8);
        assert_eq!(t.detail_heading.as_deref(), Some("### Additional detail section:"));
        assert_eq!(t.signed_placeholder.as_deref(), Some("FILL_IN_GITHUB_USERNAME"));
        assert_eq!(t.version, TemplateVersion::Newest);
        assert_eq!(t.items[16].label(), "T16 (no engine patches / waiver)");
    }

    #[test]
    fn aug_2026_shape_is_recognised_with_its_old_t15_wording() {
        let text = format!(
            "## Template\n```\n{SIGNOFF_PHRASE}, I have reviewed this and have:\n\
             - [ ] Verified that every single-node vLLM/SGLang recipe in this PR is documented\n\
             \x20 - [ ] I linked the corresponding upstream PR in the [vLLM recipe repo](u) or [SGLang repo](v) and verified that it is **MERGED**\n\
             - [ ] A brand-new requirement nobody has anchors for\n\
             ### Additional detail section:\nSigned: `X`\n```\n"
        );
        let (t, diags) = ChecklistTemplate::parse(&text, "c.md");
        assert!(diags.is_empty(), "{diags:?}");
        let t = t.unwrap();
        assert_eq!(t.items[0].topic, Some(Topic::T15));
        assert_eq!(t.items[0].wording.unwrap().legacy, Some(TemplateVersion::Aug2026));
        assert_eq!(t.items[1].topic, Some(Topic::T15a));
        assert_eq!(t.items[2].topic, None);
        assert_eq!(t.items[2].label(), "item 2");
        assert_eq!(t.version, TemplateVersion::Aug2026);
    }

    #[test]
    fn missing_block_and_missing_parts_are_reported() {
        let (t, diags) = ChecklistTemplate::parse("# Checklist\n\nno template here\n", "c.md");
        assert!(t.is_none());
        assert!(diags[0].message.contains("no template found"), "{}", diags[0]);

        let text = format!("## Template\n```\n{SIGNOFF_PHRASE}\n- [x] pre-checked thing\n```\n");
        let (t, diags) = ChecklistTemplate::parse(&text, "c.md");
        assert_eq!(t.unwrap().items.len(), 1);
        let messages: Vec<String> = diags.iter().map(ToString::to_string).collect();
        assert!(messages[0].starts_with("c.md:4:1: template item is pre-checked"), "{messages:?}");
        assert!(messages.iter().any(|m| m.contains("warning: the template has no `### Additional detail")));
        assert!(messages.iter().any(|m| m.contains("no `Signed:` line")));
    }

    #[test]
    fn wrapped_items_keep_their_continuation() {
        let text = format!(
            "## Template\n```\n{SIGNOFF_PHRASE}\n- [ ] Verified that every draft model is served as it ships,\n  \
             and `SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE` is off.\n\n- [ ] next\n```\n"
        );
        let (t, _) = ChecklistTemplate::parse(&text, "c.md");
        let t = t.unwrap();
        assert_eq!(t.items.len(), 2);
        assert_eq!(t.items[0].topic, Some(Topic::T6));
        assert!(t.items[0].text.ends_with("is off."));
        assert_eq!(t.items[1].text, "next");
    }

    #[test]
    fn unterminated_fence_still_parses() {
        let text = format!("## Template\n```\n{SIGNOFF_PHRASE}\n- [ ] Verified that this PR passes evals.\n");
        let (t, _) = ChecklistTemplate::parse(&text, "c.md");
        assert_eq!(t.unwrap().items[0].topic, Some(Topic::T4));
    }

    #[test]
    fn checkbox_forms() {
        let ok = |l: &str| parse_checkbox(l).map(|c| (c.indent, c.checked, c.text.to_owned()));
        assert_eq!(ok("- [ ] a"), Some((0, false, "a".into())));
        assert_eq!(ok("  - [x] b"), Some((2, true, "b".into())));
        assert_eq!(ok("* [X] c"), Some((0, true, "c".into())));
        assert_eq!(ok("1. [x] d"), Some((0, true, "d".into())));
        assert_eq!(ok("-[x]e"), Some((0, true, "e".into())));
        assert_eq!(ok("[x] bare"), Some((0, true, "bare".into())));
        assert_eq!(ok("\t- [ ] tab"), Some((4, false, "tab".into())));
        assert_eq!(ok("- [y] no"), None);
        assert_eq!(ok("- [link](u)"), None);
        assert_eq!(ok("plain"), None);
        assert_eq!(ok("- ["), None);
    }

    #[test]
    fn normalization() {
        assert_eq!(
            normalize("Verified  **MERGED** in [vLLM recipe repo](https://github.com/x)  and `append-only: true`"),
            "verified merged in vllm recipe repo and append-only: true"
        );
        assert_eq!(normalize("the [PR_REVIEW_CHECKLIST.md](u) __now__"), "the pr_review_checklist.md now");
        assert_eq!(normalize("[unclosed](link"), "unclosed(link");
        assert_eq!(normalize(""), "");
    }

    #[test]
    fn detail_heading_and_signed_forms() {
        for l in ["### Additional detail section:", "**Additional detail section:**", "Additional Detail Section"] {
            assert!(is_detail_heading(l), "{l}");
        }
        assert!(!is_detail_heading("- detail"));
        assert_eq!(signed_value("Signed: `alice`"), Some("`alice`"));
        assert_eq!(signed_value("**Signed:** @bob"), Some("@bob"));
        assert_eq!(signed_value("Sign here"), None);
    }

    #[test]
    fn trailer_wording_drift_is_fine() {
        for l in ["## Additional details:", "**Additional details**", "Additional detail:"] {
            assert!(is_detail_heading(l), "{l}");
        }
        assert_eq!(signed_value("Signed by @alice"), Some("@alice"));
        assert_eq!(signed_value("Signed-off-by: alice"), Some("alice"));
        assert_eq!(signed_value("signed off by: `alice`"), Some("`alice`"));
        assert_eq!(signed_value("SIGNED：alice"), Some("alice"));
        // A sentence that starts with the word is no signature line.
        assert_eq!(signed_value("Signedness of the KV cache is unchanged"), None);
        assert_eq!(signed_value("Signed the CLA"), None);
    }
}
