//! Engine-patch waivers `docs/waiver/<PR>.md` (spec 30 §7.4): named after the PR that introduced
//! the patch, stating what is patched, why the unmodified upstream image cannot run the
//! benchmark, the upstream PR/issue links and the removal plan.

use crate::diag::Diagnostic;
use crate::yaml::Pos;

/// Largest waiver read.
pub const MAX_WAIVER_BYTES: usize = 512 * 1024;

/// The four required topics (spec 30 §7.4 deterministic check 3), plus the covered config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaiverTopic {
    ConfigCovered,
    WhatIsPatched,
    WhyUpstreamCannot,
    UpstreamLinks,
    RemovalPlan,
}

impl WaiverTopic {
    pub const REQUIRED: [WaiverTopic; 5] = [
        WaiverTopic::ConfigCovered,
        WaiverTopic::WhatIsPatched,
        WaiverTopic::WhyUpstreamCannot,
        WaiverTopic::UpstreamLinks,
        WaiverTopic::RemovalPlan,
    ];

    /// The heading upstream's waiver uses for the topic.
    pub fn heading(self) -> &'static str {
        match self {
            WaiverTopic::ConfigCovered => "## Config covered",
            WaiverTopic::WhatIsPatched => "## What is patched",
            WaiverTopic::WhyUpstreamCannot => "## Why the unmodified upstream image cannot run this benchmark",
            WaiverTopic::UpstreamLinks => "## Upstream PR / issue links",
            WaiverTopic::RemovalPlan => "## Removal plan",
        }
    }

    /// Whether a heading (lower-cased) is about this topic; tolerant of rewording.
    fn matches(self, heading: &str) -> bool {
        match self {
            WaiverTopic::ConfigCovered => heading.contains("config") && heading.contains("cover"),
            WaiverTopic::WhatIsPatched => heading.contains("what") && heading.contains("patch"),
            WaiverTopic::WhyUpstreamCannot => heading.contains("why") && heading.contains("upstream"),
            WaiverTopic::UpstreamLinks => {
                heading.contains("upstream")
                    && (heading.contains("link") || heading.contains("pr") && heading.contains("issue"))
            }
            WaiverTopic::RemovalPlan => heading.contains("removal") || heading.contains("remove"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WaiverSection {
    pub heading: String,
    pub line: u32,
    pub topic: Option<WaiverTopic>,
    /// The section's text (without the heading).
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Waiver {
    pub file: String,
    /// The PR number in the file name.
    pub pr: u64,
    pub sections: Vec<WaiverSection>,
    /// Backticked names in the "Config covered" section (config keys, images, scripts).
    pub covered_names: Vec<String>,
    /// `http(s)` links in the upstream-links section.
    pub upstream_links: Vec<String>,
}

impl Waiver {
    pub fn parse(text: &str, file: &str) -> Result<Waiver, Vec<Diagnostic>> {
        let mut diags = Vec::new();
        let at = |line: u32, message: String| Diagnostic::new(file, Some(Pos { line, col: 1 }), message);
        if text.len() > MAX_WAIVER_BYTES {
            return Err(vec![Diagnostic::new(file, None, format!("waiver exceeds {MAX_WAIVER_BYTES} bytes"))]);
        }
        let pr = waiver_pr(file);
        if pr.is_none() {
            diags.push(Diagnostic::new(
                file,
                None,
                "a waiver is named after the PR that introduced the patch: docs/waiver/<PR_NUMBER>.md",
            ));
        }
        let mut sections: Vec<WaiverSection> = Vec::new();
        let mut title: Option<(u32, String)> = None;
        let mut in_fence = false;
        for (index, raw) in text.lines().enumerate() {
            let line = u32::try_from(index + 1).unwrap_or(u32::MAX);
            let trimmed = raw.trim_start();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                in_fence = !in_fence;
            }
            let level = trimmed.chars().take_while(|&c| c == '#').count();
            let is_heading = !in_fence && level > 0 && trimmed.chars().nth(level) == Some(' ');
            if is_heading && level == 1 && title.is_none() {
                title = Some((line, trimmed.to_owned()));
            } else if is_heading && level == 2 {
                let lower = trimmed.to_lowercase();
                let topic = WaiverTopic::REQUIRED.into_iter().find(|t| t.matches(&lower));
                sections.push(WaiverSection { heading: trimmed.to_owned(), line, topic, text: String::new() });
            } else if let Some(section) = sections.last_mut() {
                section.text.push_str(raw);
                section.text.push('\n');
            }
        }
        match (&title, pr) {
            (None, _) => diags.push(at(1, "missing the title `# Inference-engine patch waiver — PR #<n>`".into())),
            (Some((line, t)), Some(pr)) => {
                let named = t.rsplit_once('#').and_then(|(_, n)| n.trim().parse::<u64>().ok());
                if named.is_some_and(|n| n != pr) {
                    diags.push(at(*line, format!("the title names a different PR than the file name (#{pr})")));
                }
            }
            _ => {}
        }
        for topic in WaiverTopic::REQUIRED {
            match sections.iter().find(|s| s.topic == Some(topic)) {
                None => diags.push(Diagnostic::new(
                    file,
                    None,
                    format!("missing the required section `{}` (spec 30 §7.4)", topic.heading()),
                )),
                Some(s) if s.text.trim().is_empty() => {
                    diags.push(at(s.line, format!("section `{}` is empty", s.heading)))
                }
                Some(_) => {}
            }
        }
        let section_text = |topic| sections.iter().filter(move |s| s.topic == Some(topic)).map(|s| s.text.as_str());
        let covered_names = section_text(WaiverTopic::ConfigCovered).flat_map(backticked).collect();
        let upstream_links = section_text(WaiverTopic::UpstreamLinks).flat_map(links).collect();
        match (diags.is_empty(), pr) {
            (true, Some(pr)) => Ok(Waiver { file: file.to_owned(), pr, sections, covered_names, upstream_links }),
            _ => Err(diags),
        }
    }

    /// Whether the waiver text mentions `name` (a config key or patch script path; a script is
    /// also found by its file name).
    pub fn mentions(&self, name: &str) -> bool {
        let base = name.rsplit('/').next().unwrap_or(name);
        self.sections.iter().any(|s| s.text.contains(name) || (!base.is_empty() && s.text.contains(base)))
    }
}

/// The PR number of `…/waiver/<n>.md`.
pub fn waiver_pr(path: &str) -> Option<u64> {
    let name = path.rsplit('/').next()?;
    let digits = name.strip_suffix(".md")?;
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Whether `url` (e.g. a link in the sign-off's additional detail section) points at the waiver
/// of PR `pr`: any URL or relative path ending in `waiver/<pr>.md` (optionally with `#…`/`?…`).
pub fn links_to_waiver(url: &str, pr: u64) -> bool {
    let path = url.split(['#', '?']).next().unwrap_or_default();
    path.ends_with(&format!("/waiver/{pr}.md")) || path == format!("waiver/{pr}.md")
}

fn backticked(text: &str) -> Vec<String> {
    text.split('`').skip(1).step_by(2).filter(|s| !s.trim().is_empty()).map(str::to_owned).collect()
}

fn links(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || matches!(c, ',' | '(' | ')' | '<' | '>' | '[' | ']'))
        .filter(|t| t.starts_with("https://") || t.starts_with("http://"))
        .map(|t| t.trim_end_matches(['.', ';', ':']).to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const WAIVER: &str = "\
# Inference-engine patch waiver — PR #4100

Filed per the checklist's no-engine-patch item.

## Config covered

- **Master config entry:** `toy-fp8-mi355x-vllm` in configs/amd-master.yaml
- **Patch script:** `benchmarks/single_node/fix_toy_kernels.sh`

## What is patched

| Upstream PR/issue | What it changes | Notes |
|---|---|---|
| vllm #1 | a kernel fix | offline diff |

## Why the unmodified upstream image cannot run this benchmark

The pinned image crashes during graph capture.

## Upstream PR / issue links

- https://github.com/vllm-project/vllm/pull/1, https://github.com/ROCm/aiter/pull/2.

## Removal plan

Bump the image once vllm #1 ships; drop the script and delete this waiver in the same PR.
";

    #[test]
    fn parses_sections_names_and_links() {
        let w = Waiver::parse(WAIVER, "docs/waiver/4100.md").unwrap();
        assert_eq!(w.pr, 4100);
        assert_eq!(w.sections.len(), 5);
        assert_eq!(w.sections[0].line, 5);
        assert_eq!(w.covered_names, ["toy-fp8-mi355x-vllm", "benchmarks/single_node/fix_toy_kernels.sh"]);
        assert_eq!(
            w.upstream_links,
            ["https://github.com/vllm-project/vllm/pull/1", "https://github.com/ROCm/aiter/pull/2"]
        );
        assert!(w.mentions("toy-fp8-mi355x-vllm"));
        assert!(w.mentions("other/dir/fix_toy_kernels.sh"), "found by file name");
        assert!(!w.mentions("toy-fp8-b300-sglang"));
    }

    #[test]
    fn links_from_the_signoff() {
        assert!(links_to_waiver("https://github.com/o/r/blob/abc/docs/waiver/4100.md", 4100));
        assert!(links_to_waiver(
            "https://github.com/o/r/blob/main/inferencex-e2e/docs/waiver/4100.md#removal-plan",
            4100
        ));
        assert!(links_to_waiver("docs/waiver/4100.md", 4100));
        assert!(!links_to_waiver("https://github.com/o/r/blob/main/docs/waiver/41000.md", 4100));
        assert!(!links_to_waiver("https://github.com/o/r/blob/main/docs/waiver/", 4100));
    }

    #[test]
    fn missing_or_empty_sections_and_bad_names_are_errors() {
        let without_plan = WAIVER.split("## Removal plan").next().unwrap();
        let errs = Waiver::parse(without_plan, "docs/waiver/4100.md").unwrap_err();
        assert_eq!(errs.len(), 1);
        assert!(errs[0].message.contains("`## Removal plan`"), "{}", errs[0]);

        let empty_why = WAIVER.replace("The pinned image crashes during graph capture.", "");
        let errs = Waiver::parse(&empty_why, "docs/waiver/4100.md").unwrap_err();
        assert!(errs[0].to_string().starts_with("docs/waiver/4100.md:16:1: section `## Why"), "{}", errs[0]);

        let errs = Waiver::parse(WAIVER, "docs/waiver/4101.md").unwrap_err();
        assert!(errs[0].to_string().contains("1:1: the title names a different PR"), "{}", errs[0]);

        for bad in ["docs/waiver/notes.md", "docs/waiver/0410.md", "docs/waiver/4100.txt"] {
            assert!(Waiver::parse(WAIVER, bad).is_err(), "{bad}");
        }
        let errs = Waiver::parse("just text\n", "docs/waiver/5.md").unwrap_err();
        assert_eq!(errs.len(), 6, "title and the five sections: {errs:?}");
    }

    #[test]
    fn headings_inside_code_fences_do_not_count() {
        let fenced = WAIVER.replace("## Removal plan", "```\n## Removal plan\n```");
        assert!(Waiver::parse(&fenced, "docs/waiver/4100.md").is_err());
    }
}
