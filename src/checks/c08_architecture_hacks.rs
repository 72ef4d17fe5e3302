//! Check 8 — Architecture hacks (spec 30 Check 8).
//!
//! 8.a/8.c: the override knobs anywhere in an added, non-comment line of a script, recipe or
//! master config. An `--hf-overrides`-style JSON whose every key is an option the model supports
//! natively (context/RoPE settings, or the value its own config.json already has) is not a hack;
//! any other key, an override that cannot be parsed, or a model whose config.json is not in the
//! evidence FAILs naming the line (decision N2). Edits of a checkpoint's config.json always FAIL.
//! 8.b: an affected config of a new model on ROCm must disable integer all-reduce in its
//! effective recipe (decision N1); the engines, env vars and the grandfathering date are data
//! (`checks/data/08-architecture.toml`).

use std::collections::BTreeSet;
use std::sync::OnceLock;

use chrono::NaiveDate;
use serde::Deserialize;
use serde_json::{json, Value as Json};

use super::{reason, Context, Outcome, Reason};
use crate::domain::checklist_template::Topic;
use crate::domain::launch::settings::SettingKind;
use crate::pr::affected::{affected_configs, is_nvidia_sku, sku};
use crate::pr::overrides::{served_models, OVERRIDE_KNOBS};
use crate::pr::scan::{self, Role};
use crate::pr::settings::config_settings;

const DATA_FILE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/checks/data/08-architecture.toml"));

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Data {
    integer_all_reduce: AllReduceRule,
    overrides: OverrideRule,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AllReduceRule {
    in_force_since: NaiveDate,
    engines: Vec<EngineRule>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EngineRule {
    frameworks: Vec<String>,
    vendor: String,
    env: String,
    allowed: Vec<String>,
    explicit: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OverrideRule {
    native_options: Vec<String>,
    flop_neutral: Vec<String>,
    compute_sizes: Vec<String>,
}

fn data() -> &'static Data {
    static DATA: OnceLock<Data> = OnceLock::new();
    // Built-in data; `tests::the_data_file_loads` keeps it valid.
    DATA.get_or_init(|| toml::from_str(DATA_FILE).expect("checks/data/08-architecture.toml is valid"))
}

#[derive(Debug, PartialEq, Eq)]
struct Finding {
    file: String,
    line: u32,
    flag: String,
    kind: &'static str,
    /// Why an override is not native: one fact a key (see [`NotNative`]).
    why: Vec<Json>,
}

/// The JSON object written after `knob` on the line (`--hf-overrides '{…}'`, `=` or `:` forms).
fn override_json(code: &str, knob: &str) -> Option<Json> {
    let rest = &code[code.find(knob)? + knob.len()..];
    let open = rest.find('{')?;
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, c) in rest[open..].char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => in_string = !in_string,
            '{' if !in_string => depth += 1,
            '}' if !in_string => {
                depth -= 1;
                if depth == 0 {
                    return serde_json::from_str(&rest[open..=open + i]).ok().filter(Json::is_object);
                }
            }
            _ => {}
        }
    }
    None
}

/// `(dotted path, value)` of every leaf of an override object.
fn leaves(value: &Json, prefix: &str, out: &mut Vec<(String, Json)>) {
    match value {
        Json::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                leaves(v, &path, out);
            }
        }
        _ => out.push((prefix.to_owned(), value.clone())),
    }
}

/// What a model's config.json says about one override leaf.
fn config_value<'c>(config: &'c Json, path: &str) -> Option<&'c Json> {
    path.split('.').try_fold(config, |node, key| node.get(key))
}

/// Why one override key is not native: `problem` is `differs` (config.json has `shipped`),
/// `absent` (config.json lacks the key), `no_config` / `unreadable_config` (the model's
/// config.json is not in the evidence / could not be read), `no_model` (no master-config entry
/// names the model the file serves) or `unparsed` (the value is not a JSON object on the line).
fn not_native_fact(problem: &str, key: &str, value: &Json, model: &str, shipped: Option<&Json>) -> Json {
    json!({"problem": problem, "key": key, "value": value.to_string(), "model": model,
           "shipped": shipped.map(Json::to_string).unwrap_or_default()})
}

/// The leaves of an override that a model does not support natively (facts, see
/// [`not_native_fact`]); empty when every key is native. `configs` are the served models'
/// config.json (`Err(problem)` when missing or unreadable).
fn not_native(overrides: &Json, configs: &[(String, Result<&Json, &'static str>)]) -> Vec<Json> {
    let rule = &data().overrides;
    let listed = |list: &[String], path: &str| path.split('.').any(|segment| list.iter().any(|n| n == segment));
    let mut all = Vec::new();
    leaves(overrides, "", &mut all);
    let mut out = Vec::new();
    for (path, value) in all {
        if listed(&rule.native_options, &path) || listed(&rule.flop_neutral, &path) {
            continue;
        }
        // A size where more computes more: at or above the shipped value nothing is removed
        // (decision CO7); below it, or without a shipped value to compare, it is judged below.
        let adds_compute = |shipped: &Json| {
            listed(&rule.compute_sizes, &path)
                && matches!((value.as_f64(), shipped.as_f64()), (Some(v), Some(s)) if v >= s)
        };
        if configs.is_empty() {
            out.push(not_native_fact("no_model", &path, &value, "", None));
        }
        for (model, config) in configs {
            match config {
                Ok(config) => match config_value(config, &path) {
                    Some(shipped) if *shipped == value || adds_compute(shipped) => {}
                    Some(shipped) => out.push(not_native_fact("differs", &path, &value, model, Some(shipped))),
                    None => out.push(not_native_fact("absent", &path, &value, model, None)),
                },
                Err(problem) => out.push(not_native_fact(problem, &path, &value, model, None)),
            }
        }
    }
    out
}

fn scan_line(cx: &Context, file: &str, code: &str) -> Option<(String, &'static str, Vec<Json>)> {
    if let Some(knob) = OVERRIDE_KNOBS.iter().find(|k| code.contains(*k)) {
        let Some(overrides) = override_json(code, knob) else {
            return Some((
                (*knob).to_owned(),
                "override",
                vec![not_native_fact("unparsed", "", &Json::Null, "", None)],
            ));
        };
        let models = served_models(cx, file);
        let configs: Vec<(String, Result<&Json, &'static str>)> = models
            .iter()
            .map(|m| {
                let config = match cx.evidence.upstream.model_configs.get(m) {
                    Some(fact) => fact.as_ok().ok_or("unreadable_config"),
                    None => Err("no_config"),
                };
                (m.clone(), config)
            })
            .collect();
        let why = not_native(&overrides, &configs);
        let kind = if why.is_empty() { "native" } else { "override" };
        return Some(((*knob).to_owned(), kind, why));
    }
    // In-place edits of a checkpoint's config (sed -i / jq / redirect into config.json).
    let edits_model_config = code.contains("config.json")
        && (code.contains("sed -i") || code.contains("jq ") || code.contains("> ") && code.contains(".json"));
    edits_model_config.then(|| (code.trim().chars().take(80).collect(), "model_file_edit", Vec::new()))
}

/// One affected config that does not disable integer all-reduce (8.b).
#[derive(Debug, PartialEq, Eq)]
struct AllReduce {
    config: String,
    env: String,
    /// `unset`, `value` (an enabling value), `unverifiable` (the effective value cannot be read)
    /// or `baseline_unknown` (MODELS.md cannot say whether the model is new).
    problem: &'static str,
    value: String,
    /// Where: `file:line` of the setting, the sources read, or a reason naming what could not
    /// be read.
    at: serde_json::Value,
}

/// Whether a model prefix is grandfathered for integer all-reduce: listed in MODELS.md's
/// policy-baseline matrix, or, when MODELS.md has none, added before the rule came into force.
fn grandfathered(cx: &Context, prefix: &str) -> Result<bool, Reason> {
    let (_, models) = cx.models_md().as_ref().map_err(Clone::clone)?;
    if !models.policy_baseline.is_empty() {
        return Ok(models.policy_baseline.iter().any(|p| p == prefix));
    }
    let since = data().integer_all_reduce.in_force_since;
    Ok(models.model(prefix).and_then(|row| row.added).is_some_and(|added| added < since))
}

/// 8.b over the affected configs: `(problems, grandfathered prefixes, configs that disable it)`.
fn integer_all_reduce(cx: &Context) -> (Vec<AllReduce>, BTreeSet<String>, Vec<String>) {
    let (mut problems, mut old, mut disabled) = (Vec::new(), BTreeSet::new(), Vec::new());
    if cx.in_force(Topic::T10) == Some(false) {
        return (problems, old, disabled);
    }
    let configs = match affected_configs(cx) {
        Ok(configs) => configs,
        Err(error) => {
            problems.push(AllReduce {
                config: "*".into(),
                env: String::new(),
                problem: "unverifiable",
                value: String::new(),
                at: reason("unreadable_because")
                    .arg("what", reason("what_pr_master_configs"))
                    .arg("error", error)
                    .into(),
            });
            return (problems, old, disabled);
        }
    };
    for config in &configs {
        let vendor = if is_nvidia_sku(&sku(&config.runner)) { "nvidia" } else { "amd" };
        let Some(rule) = data()
            .integer_all_reduce
            .engines
            .iter()
            .find(|e| e.vendor == vendor && e.frameworks.contains(&config.framework))
        else {
            continue;
        };
        let problem = |problem, value: &str, at: serde_json::Value| AllReduce {
            config: config.key.clone(),
            env: rule.env.clone(),
            problem,
            value: value.to_owned(),
            at,
        };
        let mut found = Vec::new();
        match config_settings(cx, config) {
            Ok(roles) => {
                for role in &roles {
                    let Some(setting) = role.settings.get(&rule.env).filter(|s| s.kind == SettingKind::Env) else {
                        if rule.explicit {
                            found.push(problem("unset", "", format!("{} ({})", role.source, role.role).into()));
                        }
                        continue;
                    };
                    for value in &setting.values {
                        if value.contains('$') {
                            found.push(problem("unverifiable", value, setting.at.clone().into()));
                        } else if !rule.allowed.iter().any(|a| a.eq_ignore_ascii_case(value)) {
                            found.push(problem("value", value, setting.at.clone().into()));
                        }
                    }
                }
            }
            Err(error) => found.push(problem("unverifiable", "", error.into())),
        }
        if found.is_empty() {
            disabled.push(config.key.clone());
            continue;
        }
        // Only a config that does not disable it needs the grandfathering question answered.
        match grandfathered(cx, &config.model_prefix) {
            Ok(true) => {
                old.insert(config.model_prefix.clone());
            }
            Ok(false) => problems.extend(found),
            Err(error) => problems.push(problem("baseline_unknown", "", error.into())),
        }
    }
    problems.dedup();
    (problems, old, disabled)
}

pub fn check(cx: &Context) -> Outcome {
    let ev = cx.evidence;
    let mut serving_files = 0usize;
    let mut findings = Vec::new();
    let mut native = Vec::new();
    for (file, role) in scan::changed(ev) {
        if role == Role::Other {
            continue;
        }
        serving_files += 1;
        let Some(lines) = scan::added_lines_of(ev, file) else {
            return Outcome::unreadable(file.filename.as_str(), reason("no_diff_or_content"));
        };
        for added in lines {
            match scan_line(cx, &file.filename, scan::code_part(added.text)) {
                Some((flag, "native", _)) => native.push(format!("{}:{} ({flag})", file.filename, added.line)),
                Some((flag, kind, why)) => {
                    findings.push(Finding { file: file.filename.clone(), line: added.line, flag, kind, why })
                }
                None => {}
            }
        }
    }
    if serving_files == 0 {
        return Outcome::na("untouched");
    }
    let (all_reduce, grandfathered, disabled) = integer_all_reduce(cx);
    let grandfathered: Vec<String> = grandfathered.into_iter().collect();
    if findings.is_empty() && all_reduce.is_empty() {
        return Outcome::pass("clean")
            .arg("count", serving_files)
            .arg("native", native)
            .arg("grandfathered", grandfathered)
            .arg("disabled", disabled);
    }
    let mut outcome = Outcome::fail("hacks")
        .arg(
            "findings",
            findings
                .iter()
                .map(|f| json!({"file": f.file, "line": f.line, "flag": f.flag, "kind": f.kind, "why": f.why}))
                .collect::<Vec<_>>(),
        )
        .arg(
            "all_reduce",
            all_reduce
                .iter()
                .map(|a| json!({"config": a.config, "env": a.env, "problem": a.problem, "value": a.value, "at": a.at}))
                .collect::<Vec<_>>(),
        );
    for f in &findings {
        outcome = outcome.evidence(format!("{}:{}", f.file, f.line));
    }
    for at in all_reduce.iter().filter_map(|a| a.at.as_str()) {
        outcome = outcome.evidence(at);
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{checklist_with_and_without, evidence, with_change};
    use crate::checks::Status;
    use crate::evidence::{Evidence, Fact};

    /// Both finding kinds of `hacks` render in both languages, with each reason an override is
    /// not native (issue 28, done when).
    #[test]
    fn every_finding_kind_renders_in_both_languages() {
        let why = |problem: &str| json!({"problem": problem, "key": "k", "value": "1", "model": "m", "shipped": "2"});
        let reasons: Vec<serde_json::Value> =
            ["unparsed", "differs", "absent", "no_config", "unreadable_config", "no_model"].map(why).into();
        let finding = |kind: &str, why: Vec<serde_json::Value>| json!({"file": "b.sh", "line": 3, "flag": "--hf-overrides", "kind": kind, "why": why});
        let examples: Vec<Outcome> =
            [finding("override", reasons), finding("override", vec![]), finding("model_file_edit", vec![])]
                .map(|f| {
                    Outcome::fail("hacks").arg("findings", vec![f]).arg("all_reduce", Vec::<serde_json::Value>::new())
                })
                .into();
        crate::checks::tests_support::assert_every_kind_renders(8, "hacks", &examples);
    }

    #[test]
    fn hf_overrides_in_an_added_script_line_fails_with_file_and_line() {
        let e = with_change(
            evidence(),
            "benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200_sglang.sh",
            "@@ -10,2 +10,3 @@\n python3 -m sglang.launch_server \\\n+  --hf-overrides '{\"index_topk_freq\": 4}' \\\n   --tp 8\n",
        );
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.args["findings"][0]["line"], 11);
        assert_eq!(o.evidence, ["benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200_sglang.sh:11"]);
    }

    #[test]
    fn recipe_keys_and_model_config_edits_fail() {
        let e = with_change(
            evidence(),
            "benchmarks/multi_node/srt-slurm-recipes/sglang/x/a.yaml",
            "@@ -1,1 +1,3 @@\n backend:\n+  json-model-override-args: '{\"num_hidden_layers\": 40}'\n+  setup: sed -i 's/61/40/' /models/x/config.json\n",
        );
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Fail);
        let findings = o.message.args["findings"].as_array().unwrap();
        assert_eq!(findings.len(), 2);
        assert_eq!(findings[1]["kind"], "model_file_edit");
    }

    #[test]
    fn comments_and_removed_lines_do_not_count() {
        let e = with_change(
            evidence(),
            "benchmarks/single_node/fixed_seq_len/x.sh",
            "@@ -1,2 +1,2 @@\n-  --hf-overrides '{}'\n+  # no --hf-overrides any more\n+  --tp 8 # was --hf-overrides\n",
        );
        assert_eq!(check(&Context::new(&e)).status, Status::Pass);
    }

    #[test]
    fn a_serving_file_without_diff_or_content_is_never_clean() {
        let mut e = evidence();
        e.files.push(crate::evidence::ChangedFile {
            filename: "configs/nvidia-master.yaml".into(),
            previous_filename: None,
            status: "modified".into(),
            patch: None,
        });
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "unreadable"));
    }

    /// The row and its header sentence render in both languages (no fallback sentence).
    fn assert_renders(o: &Outcome) {
        use crate::checks::catalog::Lang;
        use crate::checks::text::{headline_text, message_text};
        let result = crate::checks::CheckResult { id: 8, outcome: o.clone() };
        for lang in [Lang::En, Lang::Zh] {
            let row = message_text(&result, lang).unwrap_or_else(|e| panic!("{lang:?}: {e}: {o:?}"));
            assert!(!row.is_empty());
            if o.status == Status::Fail {
                let headline = headline_text(&result, lang);
                assert!(!headline.contains("does not pass") && !headline.contains("未通过"), "{headline}");
            }
        }
    }

    #[test]
    fn the_data_file_loads() {
        let d = data();
        assert!(d.integer_all_reduce.engines.iter().any(|e| e.env == "ROCM_QUICK_REDUCE_QUANTIZATION" && e.explicit));
        assert!(d.overrides.native_options.iter().any(|o| o == "rope_scaling"));
    }

    /// Decision CO7: only overrides that remove FLOPs fail; FLOP-neutral keys and sizes raised
    /// above the shipped config pass, an unknown differing key still fails (undecidable).
    #[test]
    fn only_flop_reducing_overrides_fail() {
        let shipped = serde_json::json!({"num_hidden_layers": 61, "num_experts_per_tok": 8, "torch_dtype": "bfloat16"});
        let configs = [("m".to_owned(), Ok(&shipped))];
        let judge = |o: &str| not_native(&serde_json::from_str(o).unwrap(), &configs);
        assert!(judge(r#"{"torch_dtype":"float16","attn_implementation":"flash_attention_2"}"#).is_empty());
        assert!(judge(r#"{"num_experts_per_tok":10}"#).is_empty(), "more experts per token computes more");
        assert_eq!(judge(r#"{"num_experts_per_tok":4}"#).len(), 1, "fewer experts per token removes FLOPs");
        assert_eq!(judge(r#"{"num_hidden_layers":58}"#).len(), 1);
        assert_eq!(judge(r#"{"index_skip_every":4}"#).len(), 1, "an unknown key cannot be judged");
    }

    const SGLANG_SCRIPT: &str = "benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200_sglang.sh";
    const NVIDIA: &str = "dsv4-fp4-b200-sglang:\n  image: lmsysorg/sglang:v0.5.9\n  model: deepseek-ai/DeepSeek-V4\n  model-prefix: dsv4\n  runner: b200\n  precision: fp4\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-list: [4, 8] }\n";

    fn override_pr(json_arg: &str) -> Evidence {
        let mut e = with_change(
            evidence(),
            SGLANG_SCRIPT,
            &format!("@@ -10,1 +10,2 @@\n python3 -m sglang.launch_server \\\n+  --hf-overrides '{json_arg}' \\\n"),
        );
        e.head.insert("configs/nvidia-master.yaml", NVIDIA);
        e.head.insert("configs/amd-master.yaml", "{}\n");
        e
    }

    /// 8.c: an override is a hack only where the model lacks the option natively.
    #[test]
    fn overrides_of_native_options_pass_and_architecture_changes_fail() {
        // Context/RoPE settings are native options of every model.
        let o = check(&Context::new(&override_pr(r#"{"rope_scaling": {"rope_type": "yarn", "factor": 4.0}}"#)));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        // Restating the shipped config.json value is not a change of architecture.
        let mut e = override_pr(r#"{"text_config": {"index_topk_freq": 1}}"#);
        e.upstream.model_configs.insert(
            "deepseek-ai/DeepSeek-V4".into(),
            Fact::Ok(serde_json::json!({"text_config": {"index_topk_freq": 1}, "num_hidden_layers": 61})),
        );
        assert_eq!(check(&Context::new(&e)).status, Status::Pass);
        // Skipping the indexer where config.json says every layer has one: FAIL, with the facts.
        let mut e = override_pr(r#"{"text_config": {"index_topk_freq": 4}}"#);
        e.upstream.model_configs.insert(
            "deepseek-ai/DeepSeek-V4".into(),
            Fact::Ok(serde_json::json!({"text_config": {"index_topk_freq": 1}})),
        );
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "hacks"));
        assert_renders(&o);
        let why = &o.message.args["findings"][0]["why"][0];
        assert_eq!(
            (why["problem"].as_str(), why["key"].as_str(), why["value"].as_str(), why["shipped"].as_str()),
            (Some("differs"), Some("text_config.index_topk_freq"), Some("4"), Some("1"))
        );
        // A key the model's config does not have, and a config that is not in the evidence.
        let o = check(&Context::new(&override_pr(r#"{"num_hidden_layers": 40}"#)));
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.args["findings"][0]["why"][0]["problem"], "no_config", "{o:?}");
        assert_renders(&o);
        assert_eq!(
            crate::pr::overrides::override_models(&Context::new(&override_pr("{}"))),
            BTreeSet::from(["deepseek-ai/DeepSeek-V4".to_owned()])
        );
    }

    #[test]
    fn override_values_are_read_in_every_spelling() {
        let value = override_json(r#"--hf-overrides='{"a": {"b": "}"}}' --tp 8"#, "--hf-overrides").unwrap();
        assert_eq!(value, serde_json::json!({"a": {"b": "}"}}));
        assert_eq!(override_json("hf_overrides: {\"x\": 1}", "hf_overrides"), Some(serde_json::json!({"x": 1})));
        assert_eq!(override_json("--hf-overrides \"$OVERRIDES\"", "--hf-overrides"), None);
        let o = check(&Context::new(&override_pr("$OVERRIDES")));
        assert_eq!(o.status, Status::Fail, "an override that cannot be read is never native");
        assert_renders(&o);
    }

    const AMD: &str = "glm5.3-fp8-mi355x-sglang:\n  image: lmsysorg/sglang:v0.5.9-rocm700-mi35x\n  model: zai-org/GLM-5.3-FP8\n  model-prefix: glm5.3\n  runner: mi355x\n  precision: fp8\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-list: [4, 8] }\n";
    const AMD_SCRIPT: &str = "benchmarks/single_node/fixed_seq_len/glm5.3_fp8_mi355x_sglang.sh";
    const MODELS: &str = "# Models\n\n## Scenarios\n\n| Scenario | ISL/OSL | Status |\n|---|---|---|\n| Single-turn 8k1k | 8192/1024 | Active |\n\n## Model support matrix\n\n| Model architecture class | Prefix | Date added | Active scenarios | Deprecated scenarios |\n|---|---|---|---|---|\n| GLM 5.3 | `glm5.3` | 2026-11-12 ([#3200](https://github.com/x/y/pull/3200)) | Single-turn 8k1k | — |\n| GLM 5 | `glm5` | 2026-05-01 ([#900](https://github.com/x/y/pull/900)) | Single-turn 8k1k | — |\n";

    fn rocm_pr(script: &str, models_md: &str) -> Evidence {
        let mut e = with_change(
            evidence(),
            "configs/amd-master.yaml",
            "@@ -14,1 +14,1 @@\n+      - { tp: 8, conc-list: [4, 8] }\n",
        );
        e.head.insert("configs/amd-master.yaml", AMD);
        e.head.insert("configs/nvidia-master.yaml", "{}\n");
        e.head.insert(AMD_SCRIPT, script);
        e.base.insert("MODELS.md", models_md);
        e
    }

    const LAUNCH: &str = "python3 -m sglang.launch_server --model-path \"$MODEL\" --tp \"$TP\" --port \"$PORT\" &\n";

    /// 8.b: a new model on SGLang/ROCm must set ROCM_QUICK_REDUCE_QUANTIZATION=NONE.
    #[test]
    fn a_new_model_on_rocm_sglang_must_disable_integer_all_reduce() {
        let o = check(&Context::new(&rocm_pr(LAUNCH, MODELS)));
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "hacks"), "{o:?}");
        assert_eq!(o.message.args["all_reduce"][0]["problem"], "unset");
        assert_renders(&o);
        assert_eq!(o.evidence, [format!("{AMD_SCRIPT} (aggregated)")]);
        let set = format!("export ROCM_QUICK_REDUCE_QUANTIZATION=NONE\n{LAUNCH}");
        let o = check(&Context::new(&rocm_pr(&set, MODELS)));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["disabled"][0], "glm5.3-fp8-mi355x-sglang");
        let int8 = format!("export ROCM_QUICK_REDUCE_QUANTIZATION=INT8\n{LAUNCH}");
        let o = check(&Context::new(&rocm_pr(&int8, MODELS)));
        assert_eq!(o.message.args["all_reduce"][0]["problem"], "value");
        assert_renders(&o);
        let unresolved = format!("export ROCM_QUICK_REDUCE_QUANTIZATION=$QR_MODE\n{LAUNCH}");
        let o = check(&Context::new(&rocm_pr(&unresolved, MODELS)));
        assert_eq!(
            (o.status, o.message.args["all_reduce"][0]["problem"].as_str()),
            (Status::Fail, Some("unverifiable"))
        );
        assert!(o.evidence[0].starts_with(AMD_SCRIPT), "names the file: {o:?}");
        assert_renders(&o);
    }

    /// Grandfathering is MODELS.md's: the policy-baseline matrix when it has one, else the date
    /// the model was added, against the date the rule came into force (data file).
    #[test]
    fn established_models_are_grandfathered() {
        let old = MODELS.replace("2026-11-12", "2026-10-01");
        let o = check(&Context::new(&rocm_pr(LAUNCH, &old)));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["grandfathered"][0], "glm5.3");
        assert_renders(&o);
        let baseline = format!(
            "{old}\n## Policy-baseline matrix\n\n| Model | Notes |\n|---|---|\n| GLM 5 (`glm5`) | grandfathered |\n"
        );
        let o = check(&Context::new(&rocm_pr(LAUNCH, &baseline)));
        assert_eq!(o.status, Status::Fail, "a baseline that does not list the model: new, whatever its date");
        let not_listed = MODELS.replace("| GLM 5.3 |", "| Other |").replace("`glm5.3`", "`other`");
        assert_eq!(check(&Context::new(&rocm_pr(LAUNCH, &not_listed))).status, Status::Fail);
        let mut unreadable = rocm_pr(LAUNCH, MODELS);
        unreadable.base = Default::default();
        let o = check(&Context::new(&unreadable));
        assert_eq!(o.message.args["all_reduce"][0]["problem"], "baseline_unknown", "{o:?}");
        assert_renders(&o);
    }

    #[test]
    fn vllm_on_rocm_fails_only_an_enabling_value() {
        let vllm = AMD
            .replace("framework: sglang", "framework: vllm")
            .replace("glm5.3-fp8-mi355x-sglang", "glm5.3-fp8-mi355x-vllm");
        let script = "benchmarks/single_node/fixed_seq_len/glm5.3_fp8_mi355x_vllm.sh";
        for (env, status) in [("", Status::Pass), ("export VLLM_ROCM_QUICK_REDUCE_QUANTIZATION=INT4\n", Status::Fail)] {
            let mut e = rocm_pr("", MODELS);
            e.head.insert("configs/amd-master.yaml", vllm.as_str());
            e.head.insert(script, format!("{env}vllm serve \"$MODEL\" --tensor-parallel-size \"$TP\" &\n"));
            let o = check(&Context::new(&e));
            assert_eq!(o.status, status, "{env}: {o:?}");
        }
    }

    /// The rule came with checklist item T10: a PR whose base template lacks it is not judged by it.
    #[test]
    fn the_all_reduce_rule_applies_from_the_template_that_asks_for_it() {
        let (template, older) = checklist_with_and_without("ROCM_QUICK_REDUCE_QUANTIZATION");
        for (text, status) in [(template, Status::Fail), (older, Status::Pass)] {
            let mut e = rocm_pr(LAUNCH, MODELS);
            e.base.insert("docs/PR_REVIEW_CHECKLIST.md", text);
            assert_eq!(check(&Context::new(&e)).status, status);
        }
    }

    #[test]
    fn docs_only_changes_are_not_applicable() {
        let e = with_change(evidence(), "docs/notes.md", "@@ -1 +1 @@\n+--hf-overrides in prose\n");
        assert_eq!(check(&Context::new(&e)).status, Status::NotApplicable);
    }
}
