//! Check 13 — Draft precision (spec 30 Check 13): every draft model or head is served as it
//! ships, and no setting converts its precision in either direction (InferenceX #3283, "Prohibit
//! all precision conversions"; decision RV5). A proven conversion in the effective recipe FAILs:
//! `SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE` or `SGLANG_GLM_NEXTN_MOE_PTPC` enabled, a draft quantization
//! (an unquantized load of a quantized draft too), a draft dtype/KV-dtype override, or
//! quantization/dtype fields inside `--speculative-config`, unless the value restates what the
//! draft ships at ([`precision::Shipped`]). The effective recipe is every changed
//! speculative-decoding script or recipe at the head (whole file: unchanged lines are inherited
//! settings), the head files it names (sourced libraries, base recipes), and the launch of every
//! affected speculative-decoding config as the launch model reads it (an image-only bump changes
//! no file, its unchanged launch still runs). Comments never count. Without a violation the check
//! PASSes only when provenance is established (docs/decisions.md V2); otherwise it WARNs, listing
//! what was verified and what is missing, a whole-checkpoint quantization or dtype that may reach
//! an embedded head among them. N/A when no speculative-decoding benchmark is affected.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::{json, Value};

use super::{not_in_force, reason, Context, Outcome, Reason};
use crate::domain::checklist_template::Topic;
use crate::domain::launch::shell::ScriptValues;
use crate::domain::launch::LaunchSetting;
use crate::domain::precision::{self, Effect, OnlineQuant, Shipped};
use crate::evidence::{Evidence, Fact};
use crate::pr::affected::affected_configs;
use crate::pr::configs::{AffectedConfig, ConfigReach};
use crate::pr::drafts::{draft_checkpoints, effective_files, separate_drafts, spec_settings, target_models};
use crate::pr::reach::{affected_reach, Why};
use crate::pr::scan;

const DRAFT_WORDS: [&str; 6] = ["draft", "mtp", "nextn", "eagle", "dspark", "dflash"];

/// One proven lowering of draft precision.
#[derive(Debug, Clone, PartialEq)]
struct Violation {
    file: String,
    line: u32,
    setting: String,
    value: String,
    /// The draft layers an online quantization reaches (13.h); empty for other findings.
    layers: Vec<u64>,
}

/// `(pattern, what)`: group 1 is the value when the setting has one.
fn rules() -> &'static [(Regex, &'static str)] {
    static RULES: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    RULES.get_or_init(|| {
        let value = r#"["']?\s*(?:=|:|\s)\s*["']?([^\s"',}\]]*)"#;
        [
            (format!("(SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE){value}"), "env"),
            (format!("(SGLANG_GLM_NEXTN_MOE_PTPC){value}"), "env"),
            (format!(r"-{{0,2}}(speculative[-_]draft[-_]model[-_]quantization){value}"), "value"),
            (format!(r"-{{0,2}}(speculative[-_]draft[-_](?:model[-_])?(?:dtype|kv[-_]cache[-_]dtype|torch[-_]dtype)){value}"), "value"),
            (r#"(speculative[-_]config)\b.*?["']?((?:quantization|kv_cache_dtype|dtype)["']?\s*[:=]\s*["']?[\w.-]+)"#.to_owned(), "embedded"),
        ]
        .into_iter()
        .filter_map(|(p, w)| Regex::new(&p).ok().map(|r| (r, w)))
        .collect()
    })
}

/// Whether an env value enables the setting, through the launch model's shell
/// ([`ScriptValues`]) when it names a variable of the file; `None` when the variable cannot be
/// resolved, or enables the setting on one branch and not on another.
fn enabling(value: &str, vars: &ScriptValues) -> Option<bool> {
    let values = match value.starts_with('$') {
        true => vars.expand(value, &[], 16).ok()?,
        false => vec![value.to_owned()],
    };
    let enables =
        |v: &String| !matches!(v.to_ascii_lowercase().as_str(), "" | "0" | "false" | "no" | "off" | "none" | "null");
    match (values.iter().all(enables), values.iter().any(enables)) {
        (true, _) => Some(true),
        (false, false) => Some(false),
        (false, true) => None,
    }
}

fn scan_file(path: &str, text: &str, found: &mut Vec<Violation>, unresolved: &mut Vec<Reason>) {
    let vars = ScriptValues::of(text);
    for (index, raw) in text.lines().enumerate() {
        let code = scan::code_part(raw);
        for (re, what) in rules() {
            for c in re.captures_iter(code) {
                let setting = c[1].to_owned();
                let value = c.get(2).map_or("", |m| m.as_str()).to_owned();
                let violation = match *what {
                    "embedded" => Some(true),
                    _ => enabling(&value, &vars),
                };
                let line = index as u32 + 1;
                match violation {
                    Some(true) => {
                        found.push(Violation { file: path.to_owned(), line, setting, value, layers: Vec::new() })
                    }
                    Some(false) => {}
                    None => unresolved.push(
                        reason("draft_setting_unresolved")
                            .arg("setting", format!("{setting}={value}"))
                            .arg("file", path)
                            .arg("line", line),
                    ),
                }
            }
        }
    }
}

/// Where a launch setting is written, `(file, line)`: its `file:line`; an export recorded by its
/// file alone is at the first code line of that file that names it.
fn file_line(ev: &Evidence, setting: &LaunchSetting) -> (String, u32) {
    let (file, line) = match setting.at.rsplit_once(':') {
        Some((file, line)) => (file.to_owned(), line.parse().unwrap_or(0)),
        None => (setting.at.clone(), 0),
    };
    if line > 0 {
        return (file, line);
    }
    let named = ev.head.text(&file).and_then(|text| {
        text.lines().position(|l| scan::code_part(l).contains(setting.name.as_str())).map(|i| i as u32 + 1)
    });
    (file, named.unwrap_or(0))
}

/// A setting and value compared across their spellings (`--flag`, `flag`, `flag_name`; quoting
/// and separators of an embedded field).
fn same_finding(a: &Violation, b: &Violation) -> bool {
    let setting = |s: &str| s.trim_start_matches('-').replace('_', "-").to_ascii_lowercase();
    let value = |s: &str| s.chars().filter(|c| !matches!(c, '"' | '\'' | ' ' | ':' | '=')).collect::<String>();
    a.file == b.file && setting(&a.setting) == setting(&b.setting) && value(&a.value) == value(&b.value)
}

pub fn check(cx: &Context) -> Outcome {
    if let Some(outcome) = not_in_force(cx, Topic::T6) {
        return outcome;
    }
    let ev = cx.evidence;
    let affected = match affected_configs(cx) {
        Ok(a) => a,
        Err(error) => {
            return Outcome::warn("unverified")
                .arg("configs", Vec::<String>::new())
                .arg("verified", Vec::<String>::new())
                .arg("missing", vec![reason("affected_unknown").arg("error", error)])
        }
    };
    let spec_configs: Vec<&AffectedConfig> = affected.iter().filter(|c| c.speculative()).collect();
    let files = effective_files(ev);
    if spec_configs.is_empty() && files.is_empty() {
        return Outcome::na("no_spec_decode");
    }
    let names: Vec<String> = if spec_configs.is_empty() {
        files.iter().map(|f| f.to_string()).collect()
    } else {
        spec_configs.iter().map(|c| c.key.clone()).collect()
    };
    let (mut violations, mut unresolved) = (Vec::new(), Vec::new());
    for path in &files {
        if let Some(text) = ev.head.text(path) {
            // Past the verification's scan budget the effective recipe is unread: advisory, so WARN.
            if let Err(spent) = cx.charge_scan(*path, text.len()) {
                return Outcome::warn("unverified")
                    .arg("configs", names)
                    .arg("verified", Vec::<String>::new())
                    .arg("missing", vec![spent]);
            }
            scan_file(path, text, &mut violations, &mut unresolved);
        }
    }
    // 13.k: the launch of every affected speculative-decoding config, image-only bumps included.
    let mut launch_missing: Vec<Reason> = Vec::new();
    let reaches: &[ConfigReach] = match spec_configs.is_empty() {
        true => &[],
        false => affected_reach(cx).unwrap_or_else(|error| {
            launch_missing.push(error);
            &[]
        }),
    };
    let models = target_models(&spec_configs);
    let separate = separate_drafts(ev, reaches);
    let shipped_of = |model: &str| ev.upstream.model_configs.get(model).and_then(Fact::as_ok).map(Shipped::of);
    let mut checkpoint_settings: Vec<(&ConfigReach, Effect, &LaunchSetting)> = Vec::new();
    for (reach, s) in spec_settings(reaches) {
        let Some(effect) = precision::effect_of(&s.name) else { continue };
        let (file, line) = file_line(ev, s);
        // A file the scan above read names its own unresolved values.
        if !s.resolved && !files.contains(file.as_str()) {
            unresolved.push(
                reason("draft_setting_unresolved")
                    .arg("setting", format!("{}={}", s.name, s.value))
                    .arg("file", file.as_str())
                    .arg("line", line),
            );
        }
        if !s.resolved {
            continue;
        }
        let mut found = |setting: &str, value: String, layers: Vec<u64>| {
            let v = Violation { file: file.clone(), line, setting: setting.to_owned(), value, layers };
            if !violations.iter().any(|o| same_finding(o, &v)) {
                violations.push(v);
            }
        };
        match effect {
            Effect::NamedFlag | Effect::DraftEnvFlag => {
                if enabling(&s.value, &ScriptValues::of("")) == Some(true) {
                    found(&s.name, s.value.clone(), Vec::new());
                }
            }
            Effect::DraftQuantization => found(&s.name, s.value.clone(), Vec::new()),
            // `auto` asks for the draft's own dtype.
            Effect::DraftDtype if !Shipped::default().restates_dtype(&s.value) => {
                found(&s.name, s.value.clone(), Vec::new())
            }
            Effect::DraftDtype => {}
            Effect::SpeculativeConfig => {
                for (field, value) in precision::speculative_config_fields(&s.value) {
                    found(&s.name, format!("{field}: {value}"), Vec::new());
                }
            }
            // 13.h: the scheme reaches every embedded draft layer no `exclude_layer` pattern covers;
            // the layers come from the checkpoint's config.json, else the coverage is unknown. A
            // separate draft's module names are not in the evidence: its coverage is unknown too.
            Effect::OnlineQuantConfig => {
                let model = match separate.is_empty() {
                    true => models.get(&reach.config.key).cloned().unwrap_or_default(),
                    false => separate.iter().cloned().collect::<Vec<_>>().join(", "),
                };
                let layers = (ev.upstream.model_configs.get(&model).and_then(Fact::as_ok))
                    .and_then(precision::draft_layers)
                    .filter(|_| separate.is_empty());
                match (OnlineQuant::parse(&s.value), layers) {
                    (Some(config), _) if config.scheme.is_none() => {}
                    (Some(config), Some(layers)) => {
                        let uncovered = config.uncovered(&layers);
                        if !uncovered.is_empty() {
                            found(&s.name, config.scheme.clone().unwrap_or_default(), uncovered);
                        }
                    }
                    _ => launch_missing.push(
                        reason("draft_online_quant_unmapped")
                            .arg("setting", s.name.as_str())
                            .arg("at", s.at.as_str())
                            .arg("model", model)
                            .arg("problem", "online_quant"),
                    ),
                }
            }
            Effect::CheckpointQuantization | Effect::CheckpointDtype => checkpoint_settings.push((reach, effect, s)),
        }
    }
    // A file of the launch path the evidence cannot show (a missing or external recipe, a path
    // beyond the bounds) may set the draft's precision: its settings are missing evidence.
    for reach in reaches.iter().filter(|r| r.config.speculative()) {
        for u in reach.path.unavailable.iter().filter(|u| u.why != Why::NoLauncher) {
            launch_missing.push(
                reason("launch_unresolved")
                    .arg("what", u.reference.as_str())
                    .arg("why", u.why.as_str())
                    .arg("at", u.via.as_str()),
            );
        }
    }
    let checkpoints = draft_checkpoints(&separate, &spec_configs, &models);
    // A draft quantization or dtype that restates what every draft checkpoint ships at (its own
    // config.json, or the target's for an embedded head) keeps the draft as it ships; against an
    // unknown or other precision it converts it, in either direction (#3283).
    let drafts_shipped: Vec<(String, Option<Shipped>)> =
        checkpoints.iter().map(|(_, model)| (model.clone(), shipped_of(model))).collect();
    let mut kept_as_shipped = Vec::new();
    violations.retain(|v| {
        let restates = |s: &Shipped| match precision::effect_of(&v.setting) {
            Some(Effect::DraftQuantization) => s.restates_quantization(&v.value),
            Some(Effect::DraftDtype) => s.restates_dtype(&v.value),
            _ => false,
        };
        let as_shipped =
            !drafts_shipped.is_empty() && drafts_shipped.iter().all(|(_, s)| s.as_ref().is_some_and(restates));
        if as_shipped {
            kept_as_shipped.push(
                reason("draft_quantized_as_shipped")
                    .arg("file", v.file.as_str())
                    .arg("line", v.line)
                    .arg("value", v.value.as_str()),
            );
        }
        !as_shipped
    });
    if !violations.is_empty() {
        // What each separate draft ships at, by its own config.json (13.b), beside the findings.
        let shipped: Vec<Value> = separate
            .iter()
            .filter_map(|d| shipped_of(d).and_then(|s| s.label().map(|l| json!({"draft": d, "precision": l}))))
            .collect();
        let mut outcome = Outcome::fail("lowered")
            .arg(
                "findings",
                violations
                    .iter()
                    .map(|v| {
                        // What the finding is (an env flag, an unquantized load of the draft, a
                        // draft override) and where it comes from: the PR's own files, a file they
                        // name (13.e), or only the launch of an affected config (13.k).
                        let kind = match precision::effect_of(&v.setting) {
                            Some(Effect::NamedFlag | Effect::DraftEnvFlag) => "env",
                            Some(Effect::DraftQuantization) if precision::unquantizes(&v.value) => "unquantized",
                            Some(Effect::OnlineQuantConfig) => "online_quant",
                            _ => "override",
                        };
                        let origin = if ev.files.iter().any(|f| f.filename == v.file) {
                            "changed"
                        } else if files.contains(v.file.as_str()) {
                            "inherited"
                        } else {
                            "launch"
                        };
                        json!({"file": v.file, "line": v.line, "setting": v.setting, "value": v.value, "kind": kind, "origin": origin, "layers": v.layers})
                    })
                    .collect::<Vec<_>>(),
            )
            .arg("shipped", shipped);
        for v in &violations {
            outcome = outcome.evidence(format!("{}:{}", v.file, v.line));
        }
        return outcome;
    }
    let mut read: BTreeSet<&str> = files.iter().copied().collect();
    for reach in reaches.iter().filter(|r| r.config.speculative()) {
        read.extend(reach.path.files.iter().map(|f| f.path.as_str()));
    }
    let mut verified = vec![reason("draft_no_override").arg("files", read.len())];
    verified.extend(kept_as_shipped);
    let mut missing: Vec<Reason> = unresolved;
    missing.extend(launch_missing);
    if read.is_empty() || reaches.iter().any(|r| r.config.speculative() && !r.launch.resolves()) {
        missing.push(reason("draft_launch_script_missing"));
    }
    // 13.m: a quantization or dtype of the whole checkpoint reaches the head it embeds unless the
    // engine excludes it; unless it restates what the checkpoint ships, that needs showing.
    if separate.is_empty() {
        for (reach, effect, s) in checkpoint_settings {
            let model = models.get(&reach.config.key).map_or("", String::as_str);
            let shipped = shipped_of(model).unwrap_or_default();
            let kept = match effect {
                Effect::CheckpointQuantization => shipped.restates_quantization(&s.value),
                _ => shipped.restates_dtype(&s.value),
            };
            if !kept {
                missing.push(
                    reason("draft_checkpoint_conversion")
                        .arg("setting", s.name.as_str())
                        .arg("value", s.value.as_str())
                        .arg("at", s.at.as_str())
                        .arg("model", model)
                        .arg("shipped", shipped.label().unwrap_or_default())
                        .arg("problem", "checkpoint_conversion"),
                );
            }
        }
    }
    let detail = cx.detail().to_ascii_lowercase();
    let mut shipped_all = Vec::new();
    for (owner, model) in &checkpoints {
        match ev.upstream.model_configs.get(model).map(|f| f.as_ok().map(|c| Shipped::of(c).label().map(str::to_owned)))
        {
            Some(Some(Some(shipped))) => {
                verified.push(reason("draft_ships").arg("model", model.as_str()).arg("precision", shipped.as_str()));
                if !detail.contains(&shipped.to_ascii_lowercase()) {
                    missing.push(reason("draft_precision_not_recorded").arg("precision", shipped.as_str()));
                }
                shipped_all.push(shipped);
            }
            Some(Some(None)) => missing.push(reason("draft_config_without_precision").arg("model", model.as_str())),
            _ => missing.push(
                reason("draft_metadata_missing").arg("model", if model.is_empty() { owner.as_str() } else { model }),
            ),
        }
    }
    let records_draft = DRAFT_WORDS.iter().any(|w| detail.contains(w));
    if !(records_draft && detail.contains("default")) {
        missing.push(reason("draft_default_provenance"));
    }
    // Upstream's evidence list ends with "the effective serving precision" (#3283's
    // "checkpoint/native/effective precision evidence"; prompt Check 13).
    if !detail.contains("effective") {
        missing.push(reason("draft_effective_not_recorded"));
    }
    if missing.is_empty() {
        Outcome::pass("as_shipped").arg("configs", names).arg("shipped", shipped_all)
    } else {
        let list = |reasons: Vec<Reason>| reasons.into_iter().map(Value::from).collect::<Vec<_>>();
        Outcome::warn("unverified").arg("configs", names).arg("verified", list(verified)).arg("missing", list(missing))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{checklist_with_and_without, evidence, with_added_file, with_change};
    use crate::checks::Status;

    const MASTER: &str = "dsr1-fp4-b200-sglang-mtp:\n  image: lmsysorg/sglang:v0.5.9\n  model: nvidia/DeepSeek-R1-FP4\n  model-prefix: dsr1\n  runner: b200\n  precision: fp4\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, spec-decoding: mtp, conc-list: [4] }\n";
    const SCRIPT: &str = "benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200_mtp.sh";

    fn spec_pr(script: &str) -> Evidence {
        let mut e = with_change(
            evidence(),
            "configs/nvidia-master.yaml",
            "@@ -14,1 +14,1 @@\n+      - { tp: 8, spec-decoding: mtp, conc-list: [4] }\n",
        );
        e.head.insert("configs/nvidia-master.yaml", MASTER);
        e.head.insert("configs/amd-master.yaml", "{}\n");
        with_added_file(e, SCRIPT, script)
    }

    #[test]
    fn the_named_flag_fails_wherever_it_is_enabled() {
        for script in [
            "export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\npython -m sglang.launch_server --speculative-algorithm NEXTN\n",
            "ON=true\nSGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=$ON python -m sglang.launch_server --speculative-algorithm NEXTN\n",
        ] {
            let o = check(&Context::new(&spec_pr(script)));
            assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "lowered"), "{script}");
            assert_eq!(o.evidence[0], format!("{SCRIPT}:{}", if script.starts_with("ON") { 2 } else { 1 }));
        }
    }

    #[test]
    fn draft_overrides_fail_in_scripts_and_recipes() {
        let o = check(&Context::new(&spec_pr("python -m sglang.launch_server --speculative-algorithm EAGLE --speculative-draft-model-quantization quark_mxfp4\n")));
        assert_eq!(o.message.args["findings"][0]["value"], "quark_mxfp4");
        let o = check(&Context::new(&spec_pr(
            "vllm serve x --speculative-config '{\"method\": \"mtp\", \"quantization\": \"fp8\"}'\n",
        )));
        assert_eq!(o.status, Status::Fail);
        let recipe = "backend:\n  sglang_config:\n    decode:\n      speculative-algorithm: NEXTN\n      speculative-draft-model-quantization: fp8\n";
        let e = with_added_file(evidence(), "benchmarks/multi_node/srt-slurm-recipes/sglang/x/mtp.yaml", recipe);
        let o = check(&Context::new(&e));
        assert_eq!(
            (o.status, o.evidence[0].as_str()),
            (Status::Fail, "benchmarks/multi_node/srt-slurm-recipes/sglang/x/mtp.yaml:5")
        );
    }

    #[test]
    fn inherited_settings_from_a_sourced_file_count() {
        let mut e =
            spec_pr("source ../common_mtp_env.sh\npython -m sglang.launch_server --speculative-algorithm NEXTN\n");
        e.head.insert("benchmarks/single_node/common_mtp_env.sh", "export SGLANG_GLM_NEXTN_MOE_PTPC=1\n");
        assert_eq!(check(&Context::new(&e)).status, Status::Fail);
    }

    /// Issue 24: the effective recipe's scan is bounded by the verification's scan budget; past
    /// it a lowering could go unseen, so the advisory check WARNs naming the bound, never passes
    /// or fails on what it did not read.
    #[test]
    fn a_recipe_past_the_scan_budget_warns_unverified() {
        let e = spec_pr("python -m sglang.launch_server --speculative-algorithm EAGLE --speculative-draft-model-quantization quark_mxfp4\n");
        assert_eq!(check(&Context::new(&e)).status, Status::Fail);
        let cx = Context::new(&e);
        cx.charge_scan("earlier checks", crate::evidence::limits::MAX_SCAN_BYTES).unwrap();
        let o = check(&cx);
        assert_eq!((o.status, o.message.key.as_str()), (Status::Warn, "unverified"), "{o:?}");
        assert!(o.message.args["missing"][0].to_string().contains("scan_budget_exceeded"), "{o:?}");
    }

    /// A head file is part of the effective recipe when a changed file's code names it, also when
    /// names overlap (`env.sh` inside `mtp_env.sh`) and several files share a name.
    #[test]
    fn every_head_file_a_changed_file_names_is_found_in_one_pass() {
        let mut e = spec_pr("source ../mtp_env.sh\n# source ../ignored.sh\npython -m sglang.launch_server --speculative-algorithm NEXTN\n");
        for (path, text) in [
            ("benchmarks/single_node/mtp_env.sh", "export A=1\n"),
            ("benchmarks/single_node/env.sh", "export B=1\n"),
            ("benchmarks/multi_node/env.sh", "export C=1\n"),
            ("benchmarks/single_node/ignored.sh", "export D=1\n"),
        ] {
            e.head.insert(path, text);
        }
        let files = effective_files(&e);
        for named in
            ["benchmarks/single_node/mtp_env.sh", "benchmarks/single_node/env.sh", "benchmarks/multi_node/env.sh"]
        {
            assert!(files.contains(named), "{named}: {files:?}");
        }
        assert!(!files.contains("benchmarks/single_node/ignored.sh"), "a comment names nothing: {files:?}");
    }

    #[test]
    fn comments_and_disabled_values_do_not_fail_but_provenance_warns() {
        let o = check(&Context::new(&spec_pr("# SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1 was removed\nexport SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0\npython -m sglang.launch_server --speculative-algorithm NEXTN\n")));
        assert_eq!((o.status, o.message.key.as_str()), (Status::Warn, "unverified"));
        // The draft's metadata, its default handling and its effective precision: no finding.
        assert_eq!(o.message.args["missing"].as_array().unwrap().len(), 3, "{o:?}");
    }

    #[test]
    fn an_unresolvable_variable_is_missing_evidence_not_a_pass() {
        let o = check(&Context::new(&spec_pr(
            "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=$FROM_CI python -m sglang.launch_server --speculative-algorithm NEXTN\n",
        )));
        assert_eq!(o.status, Status::Warn);
        assert!(o.message.args["missing"][0]["setting"].as_str().unwrap().contains("FROM_CI"), "{o:?}");
    }

    #[test]
    fn established_provenance_passes() {
        let mut e = spec_pr("python -m sglang.launch_server --speculative-algorithm NEXTN\n");
        e.upstream.model_configs.insert(
            "nvidia/DeepSeek-R1-FP4".into(),
            Fact::Ok(json!({"torch_dtype": "bfloat16", "quantization_config": {"quant_method": "modelopt"}})),
        );
        e.signoff.body = "LGTM\n\n## Additional detail section\n\nDraft: embedded MTP head of nvidia/DeepSeek-R1-FP4, stored modelopt; the image loads it with default handling; effective modelopt.\n".into();
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Pass, "{o:?} detail={:?}", Context::new(&e).detail());
    }

    /// The record names the stored precision and the default handling, but not the effective
    /// serving precision upstream also asks for: missing evidence.
    #[test]
    fn a_record_without_the_effective_precision_warns() {
        let mut e = spec_pr("python -m sglang.launch_server --speculative-algorithm NEXTN\n");
        e.upstream.model_configs.insert(
            "nvidia/DeepSeek-R1-FP4".into(),
            Fact::Ok(json!({"torch_dtype": "bfloat16", "quantization_config": {"quant_method": "modelopt"}})),
        );
        e.signoff.body = "LGTM\n\n## Additional detail section\n\nDraft: embedded MTP head of nvidia/DeepSeek-R1-FP4, stored modelopt; the image loads it with default handling.\n".into();
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Warn, "{o:?}");
        assert_eq!(o.message.args["missing"][0]["$reason"], "draft_effective_not_recorded", "{o:?}");
    }

    /// The stored precision that counts is the separate draft's, not the target checkpoint's:
    /// the target's config.json alone leaves the draft's precision missing (WARN).
    #[test]
    fn a_separate_draft_is_judged_by_its_own_config() {
        let script =
            "python -m sglang.launch_server --speculative-algorithm EAGLE --speculative-draft-model-path org/Draft-A\n";
        let target = Fact::Ok(json!({"torch_dtype": "bfloat16", "quantization_config": {"quant_method": "modelopt"}}));
        let detail = "LGTM\n\n## Additional detail section\n\nDraft: org/Draft-A ships bfloat16, loaded with default handling; effective bfloat16.\n";
        let mut e = spec_pr(script);
        e.upstream.model_configs.insert("nvidia/DeepSeek-R1-FP4".into(), target);
        e.signoff.body = detail.into();
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Warn, "{o:?}");
        assert_eq!(o.message.args["missing"][0]["model"], "org/Draft-A", "{o:?}");
        e.upstream.model_configs.insert("org/Draft-A".into(), Fact::Ok(json!({"torch_dtype": "bfloat16"})));
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["shipped"][0], "bfloat16");
    }

    /// Quantizing a separate draft to the precision its own config.json gives keeps it as it
    /// ships; the same flag on a draft that ships BF16 lowers it. The target's config never counts.
    #[test]
    fn a_draft_quantization_is_judged_against_the_drafts_own_precision() {
        let script = "python3 -m sglang.launch_server --speculative-algorithm EAGLE3 --speculative-draft-model-path org/Draft-Q --speculative-draft-model-quantization fp8\n";
        let detail = "LGTM\n\n## Additional detail section\n\nDraft: org/Draft-Q stored fp8, loaded with default handling; effective fp8.\n";
        let mut e = spec_pr(script);
        e.signoff.body = detail.into();
        e.upstream
            .model_configs
            .insert("nvidia/DeepSeek-R1-FP4".into(), Fact::Ok(json!({"quantization_config": {"quant_method": "fp8"}})));
        e.upstream.model_configs.insert("org/Draft-Q".into(), Fact::Ok(json!({"torch_dtype": "bfloat16"})));
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "lowered"), "{o:?}");
        assert_eq!(o.message.args["shipped"][0], json!({"draft": "org/Draft-Q", "precision": "bfloat16"}));
        e.upstream.model_configs.insert(
            "org/Draft-Q".into(),
            Fact::Ok(json!({"torch_dtype": "bfloat16", "quantization_config": {"quant_method": "fp8"}})),
        );
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        e.upstream.model_configs.remove("org/Draft-Q");
        assert_eq!(check(&Context::new(&e)).status, Status::Fail, "an unknown draft precision is never the flag's");
    }

    /// An image-only bump of a speculative-decoding config (13.k): no script changes, yet the
    /// unchanged launcher the config runs is its effective recipe, judged like a changed one.
    fn image_bump(script: &str) -> Evidence {
        let mut e = with_change(
            evidence(),
            "configs/nvidia-master.yaml",
            "@@ -2,1 +2,1 @@\n-  image: lmsysorg/sglang:v0.5.8\n+  image: lmsysorg/sglang:v0.5.9\n",
        );
        e.head.insert("configs/nvidia-master.yaml", MASTER);
        e.head.insert("configs/amd-master.yaml", "{}\n");
        e.head.insert(SCRIPT, script);
        e
    }

    #[test]
    fn an_image_only_bump_is_judged_on_the_configs_unchanged_launch() {
        let e = image_bump(
            "export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\npython -m sglang.launch_server --speculative-algorithm NEXTN\n",
        );
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "lowered"), "{o:?}");
        assert_eq!(o.message.args["findings"][0]["origin"], "launch", "{o:?}");
        assert_eq!(o.evidence, [format!("{SCRIPT}:1")], "the export's own line");
        let clean = image_bump("python -m sglang.launch_server --speculative-algorithm NEXTN\n");
        let o = check(&Context::new(&clean));
        assert_eq!(o.status, Status::Warn, "no conversion; provenance missing: {o:?}");
        assert_eq!(o.message.args["verified"][0]["files"], 1, "{o:?}");
    }

    /// A recipe value reached through the launch model counts: vLLM's speculative config with a
    /// quantization field, the recipe's base inherited by the variant the config runs.
    #[test]
    fn a_speculative_config_of_the_launch_with_a_precision_field_fails() {
        let e = image_bump(
            "vllm serve $MODEL --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 3, \"quantization\": \"fp8\"}'\n",
        );
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "lowered"), "{o:?}");
        assert_eq!(o.message.args["findings"][0]["value"], "quantization: fp8");
        let e = image_bump(
            "vllm serve $MODEL --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 3}'\n",
        );
        assert_eq!(check(&Context::new(&e)).status, Status::Warn);
    }

    /// Every conversion counts, not only a lowering (#3283): an unquantized load of a draft that
    /// ships FP8 fails; of a draft that ships BF16 it restates the default.
    #[test]
    fn an_unquantized_load_of_a_quantized_draft_fails() {
        let script = "python3 -m sglang.launch_server --speculative-algorithm EAGLE3 --speculative-draft-model-path org/Draft-Q --speculative-draft-model-quantization unquant\n";
        let mut e = spec_pr(script);
        e.upstream.model_configs.insert(
            "org/Draft-Q".into(),
            Fact::Ok(json!({"torch_dtype": "bfloat16", "quantization_config": {"quant_method": "fp8"}})),
        );
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "lowered"), "{o:?}");
        assert_eq!(o.message.args["findings"][0]["kind"], "unquantized");
        e.upstream.model_configs.insert("org/Draft-Q".into(), Fact::Ok(json!({"torch_dtype": "bfloat16"})));
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Warn, "restated, provenance missing: {o:?}");
        assert_eq!(o.message.args["verified"][1]["$reason"], "draft_quantized_as_shipped", "{o:?}");
    }

    /// An embedded head ships at its target checkpoint's precision: a draft quantization that
    /// restates it keeps the head as it ships.
    #[test]
    fn a_draft_quantization_of_an_embedded_head_is_judged_against_its_target() {
        let mut e = spec_pr("python -m sglang.launch_server --speculative-algorithm NEXTN --speculative-draft-model-quantization modelopt_fp4\n");
        assert_eq!(check(&Context::new(&e)).status, Status::Fail, "an unknown precision is never restated");
        e.upstream.model_configs.insert(
            "nvidia/DeepSeek-R1-FP4".into(),
            Fact::Ok(json!({"torch_dtype": "bfloat16", "quantization_config": {"quant_method": "modelopt"}})),
        );
        e.signoff.body = "LGTM\n\n## Additional detail section\n\nDraft: embedded MTP head of nvidia/DeepSeek-R1-FP4, stored modelopt; the image loads it with default handling; effective modelopt.\n".into();
        assert_eq!(check(&Context::new(&e)).status, Status::Pass);
    }

    /// 13.m: a quantization or dtype of the whole checkpoint reaches the head it embeds; unless it
    /// restates what the checkpoint ships, the WARN names it.
    #[test]
    fn a_checkpoint_conversion_of_an_embedded_head_warns() {
        let run = |flags: &str| {
            let mut e = image_bump(&format!("python -m sglang.launch_server --speculative-algorithm NEXTN {flags}\n"));
            e.upstream.model_configs.insert(
                "nvidia/DeepSeek-R1-FP4".into(),
                Fact::Ok(json!({"torch_dtype": "bfloat16", "quantization_config": {"quant_method": "modelopt"}})),
            );
            e.signoff.body = "LGTM\n\n## Additional detail section\n\nDraft: embedded MTP head of nvidia/DeepSeek-R1-FP4, stored modelopt; the image loads it with default handling; effective modelopt.\n".into();
            check(&Context::new(&e))
        };
        let o = run("--quantization fp8");
        assert_eq!(o.status, Status::Warn, "{o:?}");
        let conversion = &o.message.args["missing"][0];
        assert_eq!(
            (conversion["problem"].as_str(), conversion["value"].as_str()),
            (Some("checkpoint_conversion"), Some("fp8"))
        );
        assert_eq!(run("--dtype float16").status, Status::Warn);
        for restating in
            ["--quantization modelopt_fp4", "--dtype auto", "--dtype bfloat16", "--kv-cache-dtype fp8_e4m3"]
        {
            assert_eq!(run(restating).status, Status::Pass, "{restating}");
        }
    }

    /// 13.h: an online quantization reaches the embedded head unless its exclude_layer patterns
    /// cover the checkpoint's draft layer (from its config.json); unknown layers are missing
    /// evidence, never a pass.
    #[test]
    fn an_online_quantization_must_exclude_the_embedded_head() {
        let run = |exclude: &str, config: Option<Value>| {
            let flag = format!(
                "--online_quant_config '{{\"global_quant_config\":\"ptpc_fp8\",\"exclude_layer\":[\"lm_head\",\"model.layers.[0-9].mlp.*expert*\"{exclude}]}}'"
            );
            let mut e = image_bump(&format!("python3 -m atom.entrypoints.openai_server --model $MODEL {flag}\n"));
            if let Some(config) = config {
                e.upstream.model_configs.insert("nvidia/DeepSeek-R1-FP4".into(), Fact::Ok(config));
            }
            check(&Context::new(&e))
        };
        let dsr1 = json!({"num_hidden_layers": 61, "num_nextn_predict_layers": 1, "torch_dtype": "bfloat16"});
        let o = run("", Some(dsr1.clone()));
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "lowered"), "{o:?}");
        assert_eq!(o.message.args["findings"][0]["kind"], "online_quant");
        assert_eq!(o.message.args["findings"][0]["layers"], json!([61]));
        let o = run(",\"model.layers.61.*\"", Some(dsr1));
        assert_eq!(o.status, Status::Warn, "covered; provenance missing: {o:?}");
        assert!(!json!(o.message.args).to_string().contains("online_quant"), "{o:?}");
        let o = run(",\"model.layers.61.*\"", None);
        assert_eq!(o.status, Status::Warn);
        assert!(json!(o.message.args).to_string().contains("draft_online_quant_unmapped"), "{o:?}");
    }

    /// The collector fetches the config.json of every draft checkpoint Check 13 reads: the
    /// separate drafts of the launch, else the target checkpoint that embeds the head.
    #[test]
    fn the_draft_checkpoints_include_embedded_heads_targets_and_launch_drafts() {
        let embedded = image_bump("python -m sglang.launch_server --speculative-algorithm NEXTN\n");
        assert_eq!(crate::pr::drafts::draft_models(&embedded), BTreeSet::from(["nvidia/DeepSeek-R1-FP4".to_owned()]));
        let separate = image_bump("python -m sglang.launch_server --speculative-algorithm EAGLE3 --speculative-draft-model-path org/Draft-L\n");
        assert_eq!(crate::pr::drafts::draft_models(&separate), BTreeSet::from(["org/Draft-L".to_owned()]));
    }

    #[test]
    fn no_spec_decode_is_na() {
        assert_eq!(check(&Context::new(&evidence())).status, Status::NotApplicable);
        let e = with_added_file(
            evidence(),
            "benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200.sh",
            "python -m sglang.launch_server --tp 8\n",
        );
        assert_eq!(check(&Context::new(&e)).status, Status::NotApplicable);
    }

    /// Check 13 came into force with the draft-precision item (T6, spec 30 §4.5): a PR whose
    /// base template lacks it is not judged by it; one whose template has it is.
    #[test]
    fn the_rule_applies_from_the_template_that_asks_for_it() {
        let (template, older) = checklist_with_and_without("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE");
        for (text, status) in [(template, Status::Fail), (older, Status::NotApplicable)] {
            let mut e = spec_pr("export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\npython -m sglang.launch_server --speculative-algorithm NEXTN\n");
            e.base.insert("docs/PR_REVIEW_CHECKLIST.md", text);
            let o = check(&Context::new(&e));
            assert_eq!(o.status, status, "{o:?}");
        }
    }
}
