//! The upstream recipe links of a sign-off's additional detail section (spec 30 Check 3 (a)):
//! full PR URLs and `owner/repo#N` short refs of the recipe repositories, and published-page
//! URLs. One reader: Check 3 judges them, the collector fetches them, the server waits on them.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::Regex;

/// Upstream repositories whose PRs the collector reads (Check 3's recipe sources).
pub const RECIPE_REPOSITORIES: [&str; 2] = ["sgl-project/sglang", "vllm-project/recipes"];
/// Published-page prefixes whose pages the collector fetches.
pub const PAGE_PREFIXES: [&str; 2] = ["https://docs.sglang.io/cookbook/", "https://recipes.vllm.ai/"];

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum LinkKind {
    Pull { repo: String, number: u64 },
    Page,
}

/// A recipe link of the detail section, keyed the way `Upstream::pulls` and
/// `Upstream::contents` are: `https://github.com/<owner>/<repo>/pull/<n>` or the page URL
/// without its fragment.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct UpstreamLink {
    pub key: String,
    pub kind: LinkKind,
}

impl UpstreamLink {
    pub fn pull(repo: &str, number: u64) -> UpstreamLink {
        let repo = repo.to_ascii_lowercase();
        UpstreamLink { key: format!("https://github.com/{repo}/pull/{number}"), kind: LinkKind::Pull { repo, number } }
    }

    /// `sglang#47394` for a PR, the URL for a page.
    pub fn short(&self) -> String {
        match &self.kind {
            LinkKind::Pull { repo, number } => format!("{}#{number}", repo.rsplit('/').next().unwrap_or(repo)),
            LinkKind::Page => self.key.clone(),
        }
    }
}

fn regex(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("a valid built-in pattern"))
}

/// Recipe links of the detail section: PR URLs and `owner/repo#N` short refs of the recipe
/// repositories, and URLs under the published-page prefixes. Other links are not recipe links.
pub fn upstream_links<'a>(detail: &str, urls: impl Iterator<Item = &'a str>) -> Vec<UpstreamLink> {
    static SHORT: OnceLock<Regex> = OnceLock::new();
    let mut out = BTreeSet::new();
    for url in urls {
        let url = url.trim();
        if let Some(rest) = url.strip_prefix("https://github.com/") {
            let mut parts = rest.split(['/', '#', '?']);
            let (owner, name, kind, number) = (parts.next(), parts.next(), parts.next(), parts.next());
            if let (Some(owner), Some(name), Some("pull"), Some(Ok(number))) =
                (owner, name, kind, number.map(str::parse::<u64>))
            {
                out.insert(UpstreamLink::pull(&format!("{owner}/{name}"), number));
            }
        } else if let Some(prefix) = PAGE_PREFIXES.iter().find(|p| url.starts_with(*p)) {
            let page = url.split(['#', '?']).next().unwrap_or(url);
            if page.len() > prefix.len() {
                out.insert(UpstreamLink { key: page.to_owned(), kind: LinkKind::Page });
            }
        }
    }
    let short = regex(&SHORT, r"(?:^|[\s(\[:,;*`])([A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+)#([0-9]{1,9})\b");
    for c in short.captures_iter(detail) {
        if let Ok(number) = c[2].parse::<u64>() {
            out.insert(UpstreamLink::pull(&c[1], number));
        }
    }
    out.into_iter()
        .filter(|l| match &l.kind {
            LinkKind::Pull { repo, number } => RECIPE_REPOSITORIES.contains(&repo.as_str()) && *number > 0,
            LinkKind::Page => true,
        })
        .collect()
}

/// `https://huggingface.co/<org>/<name>[/…]` → `org/name`.
pub fn hf_repo_of(url: &str) -> Option<String> {
    let rest = url.trim().strip_prefix("https://huggingface.co/")?;
    let mut parts = rest.split(['/', '#', '?']);
    let (org, name) = (parts.next()?, parts.next()?);
    let ok = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    (ok(org) && ok(name) && !["datasets", "spaces", "docs"].contains(&org)).then(|| format!("{org}/{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hugging_face_repos_are_read_from_model_links() {
        assert_eq!(
            hf_repo_of("https://huggingface.co/nvidia/DSR1-Eagle3/blob/main/config.json").as_deref(),
            Some("nvidia/DSR1-Eagle3")
        );
        assert_eq!(hf_repo_of("https://huggingface.co/datasets/x/y"), None);
    }
}
