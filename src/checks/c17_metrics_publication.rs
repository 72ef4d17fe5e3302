//! Check 17 — Metrics publication (spec 30 Check 17, docs/decisions.md D7).
//!
//! For every added or changed Dynamo TRT-LLM recipe: the Dynamo version is read from the recipe
//! (`dynamo.version`, `dynamo.wheel`, `identity.frameworks.dynamo`), never from the container
//! tag. Dynamo builds after the KV-events/metrics decoupling (1.4+, or a dev build dated
//! 2026-07-25 or later) need `return_perf_metrics: true` and `enable_iter_perf_stats: true`;
//! older ones publish through `publish_events_and_metrics`, which must not be false. Any
//! `publish_events_and_metrics: false` fails.

use serde_json::json;

use super::{not_in_force, reason, with_fields, Context, Outcome};
use crate::domain::checklist_template::Topic;
use crate::domain::srt_recipe::RecipeError;
use crate::pr::reach;
use crate::pr::scan::{self, Role};
use crate::yaml::{Node, Value};

/// The first dev-build date that ships the decoupled metrics controls (Dynamo PR #12162).
const DECOUPLED_DEV_DATE: u32 = 20260725;

/// Whether this Dynamo version has the decoupled metrics controls.
fn decoupled(version: &str) -> bool {
    let mut parts = version.split('.');
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let dev_date = version.split(".dev").nth(1).and_then(|d| d.get(..8)).and_then(|d| d.parse::<u32>().ok());
    (major, minor) >= (1, 4) || dev_date.is_some_and(|d| d >= DECOUPLED_DEV_DATE)
}

fn scalar_text(node: &Node) -> Option<String> {
    match &node.value {
        Value::Str(s) => Some(s.clone()),
        Value::Float(_) | Value::Int(_) => node.key_text().map(|t| t.into_owned()),
        _ => None,
    }
}

fn dynamo_version(root: &Node) -> Option<String> {
    let dynamo = root.get("dynamo");
    dynamo
        .and_then(|d| d.get("version"))
        .or_else(|| dynamo.and_then(|d| d.get("wheel")))
        .or_else(|| root.get("identity").and_then(|i| i.get("frameworks")).and_then(|f| f.get("dynamo")))
        .and_then(scalar_text)
}

/// Every value of `key` anywhere in the tree, with its line.
fn values_of<'a>(node: &'a Node, key: &str, out: &mut Vec<&'a Node>) {
    match &node.value {
        Value::Map(entries) => {
            for (k, v) in entries {
                if k.as_str() == Some(key) {
                    out.push(v);
                }
                values_of(v, key, out);
            }
        }
        Value::Seq(items) => items.iter().for_each(|i| values_of(i, key, out)),
        _ => {}
    }
}

fn is_dynamo_trtllm(root: &Node) -> bool {
    let backend_trtllm = root.get("backend").and_then(|b| b.get("type")).and_then(Node::as_str) == Some("trtllm");
    let dynamo = root.get("dynamo").is_some()
        || root.get("frontend").and_then(|f| f.get("type")).and_then(Node::as_str) == Some("dynamo");
    backend_trtllm && dynamo
}

enum Judgement {
    Published { version: String, decoupled: bool },
    Findings(Vec<serde_json::Value>),
}

fn judge(file: &str, root: &Node) -> Judgement {
    let mut findings = Vec::new();
    let mut publish = Vec::new();
    values_of(root, "publish_events_and_metrics", &mut publish);
    for node in publish.iter().filter(|n| matches!(n.value, Value::Bool(false))) {
        findings.push(
            json!({"file": file, "line": node.pos.line, "kind": "disabled", "key": "publish_events_and_metrics"}),
        );
    }
    let Some(version) = dynamo_version(root) else {
        findings.push(json!({"file": file, "line": 0, "kind": "unresolved"}));
        return Judgement::Findings(findings);
    };
    let is_decoupled = decoupled(&version);
    if is_decoupled {
        for key in ["return_perf_metrics", "enable_iter_perf_stats"] {
            let mut values = Vec::new();
            values_of(root, key, &mut values);
            match values.iter().find(|n| !matches!(n.value, Value::Bool(true))) {
                Some(off) => findings.push(json!({"file": file, "line": off.pos.line, "kind": "disabled", "key": key})),
                None if values.is_empty() => {
                    findings.push(json!({"file": file, "line": 0, "kind": "missing", "key": key, "version": version}))
                }
                None => {}
            }
        }
    }
    if findings.is_empty() {
        Judgement::Published { version, decoupled: is_decoupled }
    } else {
        Judgement::Findings(findings)
    }
}

pub fn check(cx: &Context) -> Outcome {
    if let Some(outcome) = not_in_force(cx, Topic::T11) {
        return outcome;
    }
    let ev = cx.evidence;
    let mut published = Vec::new();
    let mut findings = Vec::new();
    let reaches = match reach::affected_reach(cx) {
        Ok(r) => r,
        Err(error) => return Outcome::unreadable(reason("what_affected_entries"), error),
    };
    // The recipes the PR adds or changes, and those every affected config runs unchanged.
    let mut recipes: Vec<String> =
        scan::changed(ev).filter(|(_, role)| *role == Role::Recipe).map(|(f, _)| f.filename.clone()).collect();
    for r in reaches {
        for f in r.path.recipes() {
            if !recipes.contains(&f.path) {
                recipes.push(f.path.clone());
            }
        }
        // A Dynamo TRT-LLM config whose recipe the evidence does not hold cannot be verified.
        if r.config.framework == "dynamo-trt" {
            for u in &r.path.unavailable {
                let (file, line) =
                    u.via.rsplit_once(':').map_or((u.via.as_str(), 0), |(f, l)| (f, l.parse().unwrap_or(0)));
                findings.push(with_fields(json!({"file": file, "line": line, "kind": "unreachable"}), u.to_json()));
            }
        }
    }
    for path in &recipes {
        let Some(recipe) = cx.head_recipe(path) else { continue };
        let root = match recipe.as_ref() {
            Ok(recipe) => &recipe.root,
            Err(e @ RecipeError::Yaml(_)) => return Outcome::unreadable(path.as_str(), e.to_string()),
            // YAML that is no recipe (empty, a list) is no Dynamo TRT-LLM recipe.
            Err(_) => continue,
        };
        if !is_dynamo_trtllm(root) {
            continue;
        }
        match judge(path, root) {
            Judgement::Published { version, decoupled } => {
                published.push(json!({"file": path, "version": version, "decoupled": decoupled}))
            }
            Judgement::Findings(f) => findings.extend(f),
        }
    }
    if !findings.is_empty() {
        let refs: Vec<String> = findings
            .iter()
            .map(|f| match f["line"].as_u64() {
                Some(line) if line > 0 => format!("{}:{line}", f["file"].as_str().unwrap_or_default()),
                _ => f["file"].as_str().unwrap_or_default().to_owned(),
            })
            .collect();
        let mut outcome = Outcome::fail("not_published").arg("findings", findings);
        for r in refs {
            outcome = outcome.evidence(r);
        }
        return outcome;
    }
    if published.is_empty() {
        return Outcome::na("not_dynamo_trtllm");
    }
    Outcome::pass("published").arg("recipes", published)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, with_added_file};
    use crate::checks::Status;

    const PATH: &str = "benchmarks/multi_node/srt-slurm-recipes/trtllm/x/disagg.yaml";

    fn recipe(dynamo: &str, worker: &str, extra: &str) -> String {
        format!(
            "name: x\ndynamo:\n  install: true\n{dynamo}backend:\n  type: trtllm\n  trtllm_config:\n    decode:\n{worker}{extra}frontend:\n  type: dynamo\n"
        )
    }

    fn outcome(text: &str) -> Outcome {
        check(&Context::new(&with_added_file(evidence(), PATH, text)))
    }

    /// Every finding kind of `not_published` renders in both languages (issue 28, done when).
    #[test]
    fn every_finding_kind_renders_in_both_languages() {
        let f = |finding: serde_json::Value| Outcome::fail("not_published").arg("findings", vec![finding]);
        let mut examples = vec![
            f(json!({"file": "r.yaml", "line": 4, "kind": "disabled", "key": "publish_events_and_metrics"})),
            f(
                json!({"file": "r.yaml", "line": null, "kind": "missing", "key": "publish_events_and_metrics", "version": "0.9"}),
            ),
            f(json!({"file": "r.yaml", "line": 1, "kind": "unresolved"})),
        ];
        for why in ["external_recipe", "missing", "not_text", "too_deep", "not_a_launcher"] {
            examples.push(f(
                json!({"file": "r.yaml", "line": 1, "kind": "unreachable", "reference": "x.yaml", "why": why}),
            ));
        }
        crate::checks::tests_support::assert_every_kind_renders(17, "not_published", &examples);
    }

    #[test]
    fn decoupled_dynamo_needs_perf_metrics_controls() {
        let on = "      return_perf_metrics: true\n      enable_iter_perf_stats: true\n";
        assert_eq!(outcome(&recipe("  wheel: 1.4.0.dev20260807\n", on, "")).status, Status::Pass);
        let off = "      return_perf_metrics: false\n      enable_iter_perf_stats: true\n";
        let o = outcome(&recipe("  wheel: 1.4.0.dev20260807\n", off, ""));
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.args["findings"][0]["key"], "return_perf_metrics");
        let none = "      print_iter_log: true\n";
        let o = outcome(&recipe("  version: 1.4.1\n", none, ""));
        assert_eq!(o.message.args["findings"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn publish_events_and_metrics_false_always_fails() {
        let o = outcome(&recipe(
            "  version: 1.3.0.dev20260708\n",
            "      print_iter_log: true\n",
            "  publish_events_and_metrics: false\n",
        ));
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.args["findings"][0]["kind"], "disabled");
        assert_eq!(
            outcome(&recipe("  version: 1.3.0.dev20260708\n", "      print_iter_log: true\n", "")).status,
            Status::Pass
        );
    }

    #[test]
    fn an_unresolvable_dynamo_version_fails() {
        let o = outcome(&recipe("  hash: 4025cb6a\n", "      return_perf_metrics: true\n", ""));
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.args["findings"][0]["kind"], "unresolved");
    }

    #[test]
    fn other_serving_paths_are_not_applicable() {
        let sglang = "name: x\nbackend:\n  type: sglang\nfrontend:\n  type: dynamo\n";
        assert_eq!(outcome(sglang).status, Status::NotApplicable);
    }

    #[test]
    fn version_cutoff() {
        assert!(decoupled("1.4.0"));
        assert!(decoupled("1.4.0.dev20260807"));
        assert!(decoupled("1.3.0.dev20260801"));
        assert!(!decoupled("1.3.0.dev20260708"));
        assert!(!decoupled("0.8.1.post1"));
    }

    /// Check 17 came into force with the Dynamo TRT-LLM metrics item (T11, spec 30 §4.5).
    #[test]
    fn the_rule_applies_from_the_template_that_asks_for_it() {
        let template = include_str!("../../fixtures/bundles/green-sweep/base/docs/PR_REVIEW_CHECKLIST.md");
        let older: String =
            template.lines().filter(|l| !l.contains("Dynamo TRT-LLM benchmarks")).map(|l| format!("{l}\n")).collect();
        let text = recipe(
            "  wheel: 1.4.0.dev20260807\n",
            "      return_perf_metrics: false\n      enable_iter_perf_stats: true\n",
            "",
        );
        for (template, status) in [(template.to_owned(), Status::Fail), (older, Status::NotApplicable)] {
            let mut e = with_added_file(evidence(), PATH, &text);
            e.base.insert("docs/PR_REVIEW_CHECKLIST.md", template);
            let o = check(&Context::new(&e));
            assert_eq!(o.status, status, "{o:?}");
        }
    }

    /// Issue 17 item 4: an image bump (changelog only) of a Dynamo TRT-LLM config judges the
    /// unchanged recipe its row names; a recipe the evidence does not hold is unverifiable.
    #[test]
    fn an_image_bump_judges_the_unchanged_recipe_of_the_affected_config() {
        let master = "dsr1-fp4-gb200-dynamo-trt:\n  image: img\n  model-prefix: dsr1\n  runner: gb200\n  precision: fp4\n  framework: dynamo-trt\n  multinode: true\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - prefill:\n          additional-settings:\n          - \"CONFIG_FILE=recipes/trtllm/x/disagg.yaml\"\n";
        let changelog = "@@ -1,1 +1,3 @@\n x\n+- config-keys:\n+  - dsr1-fp4-gb200-dynamo-trt\n";
        let build = |text: &str| {
            let mut e = crate::checks::tests_support::with_change(evidence(), "perf-changelog.yaml", changelog);
            e.head.insert("configs/nvidia-master.yaml", master);
            e.head.insert(PATH, text);
            e
        };
        let off = recipe("  version: 1.2.0\n", "      publish_events_and_metrics: false\n", "");
        let o = check(&Context::new(&build(&off)));
        assert_eq!((o.status, o.evidence.as_slice()), (Status::Fail, [format!("{PATH}:9")].as_slice()), "{o:?}");
        let on = recipe("  version: 1.2.0\n", "      tensor_parallel_size: 4\n", "");
        assert_eq!(check(&Context::new(&build(&on))).status, Status::Pass);
        let mut e = build(&on);
        e.head.insert("configs/nvidia-master.yaml", master.replace("x/disagg.yaml", "x/upstream-only.yaml").as_str());
        let o = check(&Context::new(&e));
        assert_eq!(o.message.args["findings"][0]["kind"], "unreachable", "{o:?}");
        assert_eq!(o.evidence, ["configs/nvidia-master.yaml:15"]);
    }
}
