//! Check 3 — Upstream recipe (spec 30 Check 3 (a), (b); docs/decisions.md D15): every affected
//! vLLM/SGLang production serving configuration is documented by a merged upstream recipe or
//! cookbook pull request (or a published page) linked from the additional detail section.

use std::collections::BTreeMap;

use serde_json::json;

use super::affected::affected_configs;
use super::{Context, Outcome};
use crate::evidence::Fact;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Engine {
    Vllm,
    Sglang,
}

impl Engine {
    fn of_framework(framework: &str) -> Option<Engine> {
        match framework {
            "vllm" | "dynamo-vllm" | "llmd-vllm" => Some(Engine::Vllm),
            "sglang" | "dynamo-sglang" | "sglang-disagg" => Some(Engine::Sglang),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Engine::Vllm => "vLLM",
            Engine::Sglang => "SGLang",
        }
    }

    /// Upstream PR repository, the path its PR must touch, and the published-page prefix.
    fn upstream(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Engine::Vllm => ("https://github.com/vllm-project/recipes/pull/", "", "https://recipes.vllm.ai/"),
            Engine::Sglang => {
                ("https://github.com/sgl-project/sglang/pull/", "docs/cookbook/", "https://docs.sglang.io/cookbook/")
            }
        }
    }
}

/// `https://github.com/o/r/pull/123/files#x` → `https://github.com/o/r/pull/123`.
fn canonical_pull(url: &str, prefix: &str) -> Option<String> {
    let rest = url.strip_prefix(prefix)?;
    let number: String = rest.chars().take_while(char::is_ascii_digit).collect();
    (!number.is_empty()).then(|| format!("{prefix}{number}"))
}

pub fn check(cx: &Context) -> Outcome {
    let ev = cx.evidence;
    let configs = match affected_configs(cx) {
        Ok(c) => c,
        Err(reason) => return Outcome::unreadable("the master configs", reason),
    };
    let mut by_engine: BTreeMap<Engine, Vec<String>> = BTreeMap::new();
    for c in &configs {
        if let Some(engine) = Engine::of_framework(&c.framework) {
            by_engine.entry(engine).or_default().push(c.key.clone());
        }
    }
    if by_engine.is_empty() {
        let scope = if configs.is_empty() {
            "no master-config entry changed".to_owned()
        } else {
            configs.iter().map(|c| format!("{} ({})", c.key, c.framework)).collect::<Vec<_>>().join(", ")
        };
        return Outcome::na("no_serving_config").arg("scope", scope);
    }
    let links: Vec<String> = match cx.signoff() {
        Ok(s) => s.detail_links().map(|l| l.url.clone()).collect(),
        Err(_) => Vec::new(),
    };
    let mut problems = Vec::new();
    let mut good = Vec::new();
    for (engine, keys) in &by_engine {
        let (pull_prefix, required_path, page_prefix) = engine.upstream();
        let pulls: Vec<String> = links.iter().filter_map(|l| canonical_pull(l, pull_prefix)).collect();
        let pages: Vec<&String> = links.iter().filter(|l| l.starts_with(page_prefix)).collect();
        if pulls.is_empty() && pages.is_empty() {
            problems.push(json!({"kind": "no_link", "engine": engine.name(), "configs": keys, "expected": pull_prefix.trim_end_matches("pull/")}));
            continue;
        }
        for page in pages {
            good.push(json!({"url": page, "kind": "page"}));
        }
        for url in pulls {
            match ev.upstream.pulls.get(&url) {
                Some(Fact::Ok(pull)) => match &pull.merged_at {
                    Some(merged_at)
                        if !required_path.is_empty() && !pull.files.iter().any(|f| f.starts_with(required_path)) =>
                    {
                        let _ = merged_at;
                        problems.push(json!({"kind": "wrong_place", "url": url, "expected": required_path}));
                    }
                    Some(merged_at) => good.push(json!({"url": url, "kind": "pull", "merged_at": merged_at})),
                    None => {
                        let state = if pull.draft {
                            "a draft"
                        } else if pull.state == "open" {
                            "open"
                        } else {
                            "closed without merge"
                        };
                        problems.push(json!({"kind": "not_merged", "url": url, "state": state}));
                    }
                },
                Some(Fact::Unavailable(reason)) => {
                    problems.push(json!({"kind": "unverifiable", "url": url, "reason": reason}))
                }
                None => problems.push(json!({"kind": "unverifiable", "url": url, "reason": "not collected"})),
            }
        }
    }
    if !problems.is_empty() {
        return Outcome::fail("not_documented").arg("problems", problems).evidence(ev.signoff.url.clone());
    }
    let all: Vec<String> = by_engine.into_values().flatten().collect();
    Outcome::pass("merged").arg("links", good).arg("configs", all).evidence(ev.signoff.url.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, with_change};
    use crate::checks::Status;
    use crate::evidence::{Evidence, UpstreamPull};

    const MASTER: &str = "q-mi355x-sglang:\n  image: lmsysorg/sglang:v1\n  model: m\n  model-prefix: qwen3.5\n  runner: mi355x\n  precision: fp8\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-list: [4] }\n";

    fn pr(detail: &str) -> Evidence {
        let mut e = with_change(evidence(), "configs/amd-master.yaml", "@@ -1,1 +1,1 @@\n+x\n");
        e.head.insert("configs/amd-master.yaml", MASTER);
        e.signoff.body = format!("As a PR reviewer and CODEOWNER, I have reviewed this and have:\n- [x] item\n\n### Additional detail section:\n{detail}\n\nSigned: `alice`\n");
        e
    }

    fn pull(state: &str, merged: Option<&str>, files: &[&str]) -> Fact<UpstreamPull> {
        Fact::Ok(UpstreamPull {
            state: state.into(),
            draft: false,
            merged_at: merged.map(str::to_owned),
            files: files.iter().map(|f| f.to_string()).collect(),
        })
    }

    const URL: &str = "https://github.com/sgl-project/sglang/pull/47394";

    #[test]
    fn a_merged_cookbook_pr_passes() {
        let mut e = pr(&format!("Cookbook: {URL}/files"));
        e.upstream
            .pulls
            .insert(URL.into(), pull("closed", Some("2026-10-30T05:24:00Z"), &["docs/cookbook/qwen3.5.mdx"]));
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Pass, "{o:?}");
    }

    #[test]
    fn an_open_or_unverifiable_pr_fails() {
        let mut e = pr(&format!("Cookbook: {URL}"));
        e.upstream.pulls.insert(URL.into(), pull("open", None, &["docs/cookbook/qwen3.5.mdx"]));
        assert_eq!(check(&Context::new(&e)).message.args["problems"][0]["kind"], "not_merged");
        e.upstream.pulls.insert(URL.into(), Fact::Unavailable("HTTP 502".into()));
        assert_eq!(check(&Context::new(&e)).message.args["problems"][0]["kind"], "unverifiable");
        e.upstream.pulls.clear();
        assert_eq!(check(&Context::new(&e)).status, Status::Fail);
    }

    #[test]
    fn no_link_or_a_pr_outside_the_cookbook_fails() {
        let e = pr("Recipes are similar to the existing ones.");
        assert_eq!(check(&Context::new(&e)).message.args["problems"][0]["kind"], "no_link");
        let mut e = pr(&format!("Cookbook: {URL}"));
        e.upstream.pulls.insert(URL.into(), pull("closed", Some("2026-10-30T05:24:00Z"), &["python/sglang/srt/x.py"]));
        assert_eq!(check(&Context::new(&e)).message.args["problems"][0]["kind"], "wrong_place");
    }

    #[test]
    fn published_pages_count_and_vendor_frameworks_are_out_of_scope() {
        assert_eq!(check(&Context::new(&pr("https://docs.sglang.io/cookbook/qwen3.5"))).status, Status::Pass);
        let mut e = pr("");
        e.head.insert("configs/amd-master.yaml", MASTER.replace("framework: sglang", "framework: atom"));
        assert_eq!(check(&Context::new(&e)).status, Status::NotApplicable);
    }
}
