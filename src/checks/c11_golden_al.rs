//! Check 11 — Golden AL (spec 30 Check 11, §7.3): agentic speculative-decoding configurations
//! run with simulated acceptance at the committed golden acceptance length; non-agentic ones never
//! simulate acceptance.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::json;

use super::affected::{all_configs, AffectedConfig};
use super::scan::{self, Role};
use super::{with_fields, Context, Outcome};
use crate::domain::golden_al::{GoldenAlFile, GoldenAlSet, ThinkingMode};
use crate::repo::{Layout, Logical};

const METHODS: [&str; 5] = ["eagle3", "eagle", "dspark", "dflash", "mtp"];

struct Knob {
    line: u32,
    al: f64,
}

fn regex(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    // The patterns are literals of this file; an invalid one is caught by the tests.
    cell.get_or_init(|| Regex::new(pattern).unwrap_or_else(|_| Regex::new("$^").expect("trivial regex")))
}

/// A knob's value: a number, or a shell variable (`$X`, `${X}`) the file assigns a number.
const VALUE: &str = r#"\\?["']?(\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|[0-9]+(?:\.[0-9]+)?)"#;

/// `NAME=<number>` shell assignments of a file (`export` or not, quoted or not); the last wins.
fn numeric_assignments(text: &str) -> std::collections::BTreeMap<String, f64> {
    static ASSIGN: OnceLock<Regex> = OnceLock::new();
    let re = regex(&ASSIGN, r#"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=["']?([0-9]+(?:\.[0-9]+)?)["']?\s*$"#);
    text.lines()
        .filter_map(|l| re.captures(scan::code_part(l)))
        .filter_map(|c| Some((c[1].to_owned(), c[2].parse().ok()?)))
        .collect()
}

/// The simulated acceptance length a file sets, with its line (TRT-LLM's knob excludes the bonus
/// token, so AL = value + 1). Values may sit in escaped JSON inside a shell string
/// (`\"synthetic_acceptance_length\": 2.49`) or come through a shell variable of the file.
fn simulated_al(text: &str) -> Option<Knob> {
    static SGL: OnceLock<Regex> = OnceLock::new();
    static VLLM: OnceLock<Regex> = OnceLock::new();
    static TRT: OnceLock<Regex> = OnceLock::new();
    static ATOM: OnceLock<Regex> = OnceLock::new();
    static ATOM_AL: OnceLock<Regex> = OnceLock::new();
    let vars = numeric_assignments(text);
    // ATOM derives its acceptance rate from a pinned `SIMULATE_ACC_LEN` (AL) variable.
    let atom_rate = text.contains("--spec-decode-acceptance-rate");
    let knobs: [(&Regex, f64); 4] = [
        (regex(&SGL, &format!(r#"SGLANG_SIMULATE_ACC_LEN["']?\s*[=:]\s*{VALUE}"#)), 0.0),
        (regex(&VLLM, &format!(r#"synthetic_acceptance_length\\?["']?\s*:\s*{VALUE}"#)), 0.0),
        (regex(&TRT, &format!(r#"TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS["']?\s*[=:]\s*{VALUE}"#)), 1.0),
        (regex(&ATOM, &format!(r#"--spec-decode-acceptance-length[= ]\s*{VALUE}"#)), 0.0),
    ];
    let resolve = |token: &str| match token.strip_prefix('$') {
        Some(name) => vars.get(name.trim_start_matches('{').trim_end_matches('}')).copied(),
        None => token.parse::<f64>().ok(),
    };
    for (i, raw) in text.lines().enumerate() {
        let code = scan::code_part(raw);
        let line = i as u32 + 1;
        for (re, bonus) in &knobs {
            if let Some(value) = re.captures(code).and_then(|c| c.get(1)).and_then(|m| resolve(m.as_str())) {
                return Some(Knob { line, al: value + bonus });
            }
        }
        let atom = regex(&ATOM_AL, r#"^\s*(?:export\s+)?SIMULATE_ACC_LEN=["']?([0-9]+(?:\.[0-9]+)?)"#);
        if atom_rate {
            if let Some(al) = atom.captures(code).and_then(|c| c[1].parse::<f64>().ok()) {
                return Some(Knob { line, al });
            }
        }
    }
    None
}

/// The number of draft tokens (MTP level / num_speculative_tokens / TRT-LLM's `max_draft_len`),
/// possibly through a shell variable of the file. SGLang's `--speculative-num-draft-tokens N`
/// counts the verified token too: N − 1 draft tokens.
fn draft_length(text: &str) -> Option<u32> {
    static STEPS: OnceLock<Regex> = OnceLock::new();
    static DRAFT_TOKENS: OnceLock<Regex> = OnceLock::new();
    let vars = numeric_assignments(text);
    let code: String = text.lines().map(scan::code_part).collect::<Vec<_>>().join("\n");
    let resolve = |token: &str| -> Option<u32> {
        match token.strip_prefix('$') {
            Some(name) => vars.get(name.trim_start_matches('{').trim_end_matches('}')).map(|v| *v as u32),
            None => token.parse().ok(),
        }
    };
    let steps = regex(
        &STEPS,
        &format!(
            r#"(?:num_speculative_tokens|num-speculative-tokens|speculative-num-steps|speculative_num_steps|num_nextn_predict_layers|max_draft_len)\\?["']?\s*[:= ]\s*{VALUE}"#
        ),
    );
    if let Some(n) = steps.captures_iter(&code).find_map(|c| resolve(&c[1])) {
        return Some(n);
    }
    let tokens = regex(&DRAFT_TOKENS, &format!(r#"speculative[-_]num[-_]draft[-_]tokens\\?["']?\s*[:= ]\s*{VALUE}"#));
    tokens.captures_iter(&code).find_map(|c| resolve(&c[1])).map(|n| n.saturating_sub(1))
}

fn thinking(text: &str) -> ThinkingMode {
    let lower = text.to_ascii_lowercase().replace(['"', '\'', ' '], "");
    if lower.contains("enable_thinking:false")
        || lower.contains("thinking:false")
        || lower.contains("enable_thinking=false")
    {
        ThinkingMode::ThinkingOff
    } else {
        ThinkingMode::ThinkingOn
    }
}

fn method(path: &str, text: &str) -> Option<&'static str> {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let lower = text.to_ascii_lowercase();
    METHODS.iter().copied().find(|m| name.contains(m)).or_else(|| METHODS.iter().copied().find(|m| lower.contains(m)))
}

/// The master-config entry whose `CONFIG_FILE=` names a recipe.
fn recipe_owner(cx: &Context, path: &str) -> Option<AffectedConfig> {
    let relative = path.split("/srt-slurm-recipes/").nth(1)?;
    let configs = all_configs(cx).ok()?;
    let files: std::collections::BTreeSet<&str> = configs.iter().map(|c| c.file.as_str()).collect();
    let owner = files.into_iter().find_map(|file| {
        let text = cx.evidence.head.text(file)?;
        let line = text.lines().position(|l| l.contains(relative))? as u32 + 1;
        configs.iter().filter(|c| c.file == file && c.line <= line).max_by_key(|c| c.line).cloned()
    });
    owner
}

/// The model prefix of a script (`<prefix>_<precision>_<gpu>_<fw>…sh`) or of a recipe (its
/// owning master-config entry).
fn model_prefix(owner: Option<&AffectedConfig>, path: &str, role: Role) -> Option<String> {
    if role == Role::Script {
        return path.rsplit('/').next()?.split('_').next().map(str::to_owned);
    }
    owner.map(|c| c.model_prefix.clone())
}

/// An eval-only recipe or script (`*-eval-*`) measures accuracy with real acceptance by design.
fn eval_only(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.contains("-eval-") || name.contains("_eval_") || name.contains("-eval.") || name.contains("_eval.")
}

fn golden_set(cx: &Context) -> GoldenAlSet {
    let base = &cx.evidence.base;
    let Ok(Some(dir)) = Layout::default().resolve(base, Logical::GoldenAlDir) else { return GoldenAlSet::default() };
    let files = base
        .paths()
        .filter(|p| p.starts_with(&format!("{dir}/")) && (p.ends_with(".yaml") || p.ends_with(".yml")))
        .filter_map(|p| base.text(p).and_then(|t| GoldenAlFile::parse(t, p).ok()))
        .collect();
    GoldenAlSet { files }
}

fn round2(x: f64) -> i64 {
    (x * 100.0).round() as i64
}

pub fn check(cx: &Context) -> Outcome {
    let ev = cx.evidence;
    let golden = golden_set(cx);
    let detail = cx.detail().to_ascii_lowercase();
    let mut matches = Vec::new();
    let mut findings = Vec::new();
    for (file, role) in scan::changed(ev) {
        if !matches!(role, Role::Script | Role::Recipe) {
            continue;
        }
        let path = file.filename.as_str();
        let Some(text) = ev.head.text(path) else { continue };
        let Some(method) = method(path, text) else { continue };
        if eval_only(path) {
            continue;
        }
        // The master config's scenario decides, where a config owns the recipe; the path only
        // for files no config names.
        let owner = if role == Role::Recipe { recipe_owner(cx, path) } else { None };
        let agentic = owner.as_ref().map_or_else(|| scan::logical_path(path).contains("agentic"), |c| c.agentic);
        let knob = simulated_al(text);
        let finding = |line: u32, kind: &str, extra: serde_json::Value| {
            with_fields(json!({"file": path, "line": line, "kind": kind}), extra)
        };
        if !agentic {
            if let Some(k) = knob {
                findings.push(finding(k.line, "non_agentic", json!({})));
            }
            continue;
        }
        let Some(knob) = knob else {
            findings.push(finding(1, "not_simulated", json!({})));
            continue;
        };
        let Some(draft) = draft_length(text) else {
            findings.push(finding(knob.line, "no_draft_length", json!({})));
            continue;
        };
        let Some(prefix) = model_prefix(owner.as_ref(), path, role) else {
            findings.push(finding(knob.line, "unknown_model", json!({})));
            continue;
        };
        let mode = thinking(text);
        let curve = golden.find(&prefix, method, None).and_then(|g| g.lookup(None, mode, draft).map(|v| (g, v)));
        match curve {
            Some((g, value)) if round2(value) == round2(knob.al) => matches.push(json!({
                "file": path, "al": knob.al, "golden_file": g.file, "mode": mode.key(), "draft": draft,
            })),
            Some((g, value)) => findings.push(finding(
                knob.line,
                "mismatch",
                json!({"al": knob.al, "golden": value, "golden_file": g.file, "mode": mode.key(), "draft": draft}),
            )),
            None if detail.contains("al source") => matches.push(json!({
                "file": path, "al": knob.al, "golden_file": "the AL source stated in the additional detail section",
                "mode": mode.key(), "draft": draft,
            })),
            None => findings.push(finding(
                knob.line,
                "no_curve",
                json!({"prefix": prefix, "method": method, "mode": mode.key(), "draft": draft}),
            )),
        }
    }
    if !findings.is_empty() {
        let refs: Vec<String> =
            findings.iter().map(|f| format!("{}:{}", f["file"].as_str().unwrap_or_default(), f["line"])).collect();
        let mut o = Outcome::fail("off_golden").arg("findings", findings);
        for r in refs {
            o = o.evidence(r);
        }
        return o;
    }
    if matches.is_empty() {
        return Outcome::na("not_agentic_spec");
    }
    Outcome::pass("golden").arg("matches", matches)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, with_added_file};
    use crate::checks::Status;
    use crate::evidence::Evidence;

    const GOLDEN: &str = "# Source GitHub Actions run: https://github.com/example/bench/actions/runs/7100000001\n# Acceptance Length (AL) reference values measured with SPEED-Bench.\n# dataset: coding | output_len: 4096\n# thinking_on chat_template_kwargs: {\"thinking\": true}\n# Measured on deepseek-v4-pro (B300, vLLM MTP), per num_speculative_tokens.\n# Auto-generated by benchmarks/single_node/speedbench/dsv4_fp4_b300_vllm.sh (speedbench-al.yml).\n#\n# key = num_speculative_tokens (MTP level); value = golden AL\ndeepseek-v4-pro:\n  thinking_on:\n    1: 1.85\n    2: 2.43\n    3: 2.86\n";
    const SCRIPT: &str = "benchmarks/single_node/agentic/dsv4_fp4_b200_sglang_mtp.sh";

    fn script(al: &str) -> String {
        format!("#!/usr/bin/env bash\nexport SGLANG_SIMULATE_ACC_LEN={al}\nexport SGLANG_SIMULATE_ACC_METHOD=match-expected\npython3 -m sglang.launch_server --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-num-draft-tokens 4\n")
    }

    fn pr(path: &str, text: &str) -> Evidence {
        let mut e = with_added_file(evidence(), path, text);
        e.base.insert("golden_al_distribution/dsv4_mtp.yaml", GOLDEN);
        e
    }

    fn kinds(e: &Evidence) -> (Status, Vec<String>) {
        let o = check(&Context::new(e));
        let kinds = o
            .message
            .args
            .get("findings")
            .and_then(|f| f.as_array())
            .map_or(vec![], |a| a.iter().map(|f| f["kind"].as_str().unwrap_or_default().to_owned()).collect());
        (o.status, kinds)
    }

    #[test]
    fn the_golden_value_at_two_decimals_passes() {
        assert_eq!(kinds(&pr(SCRIPT, &script("2.86"))).0, Status::Pass);
        assert_eq!(kinds(&pr(SCRIPT, &script("2.8601"))).0, Status::Pass);
    }

    #[test]
    fn another_value_fails_with_the_golden_one() {
        let e = pr(SCRIPT, &script("3.10"));
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.args["findings"][0]["golden"], 2.86);
        assert_eq!(o.evidence, [format!("{SCRIPT}:2")]);
    }

    #[test]
    fn trtllm_counts_without_the_bonus_token_and_vllm_uses_its_json() {
        let trt = "export TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.86\nnum_nextn_predict_layers: 3\n";
        assert_eq!(kinds(&pr("benchmarks/single_node/agentic/dsv4_fp4_b200_trt_mtp.sh", trt)).0, Status::Pass);
        let vllm = "--speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 2, \"rejection_sample_method\": \"synthetic\", \"synthetic_acceptance_length\": 2.43}'\n";
        assert_eq!(kinds(&pr("benchmarks/single_node/agentic/dsv4_fp4_b200_vllm_mtp.sh", vllm)).0, Status::Pass);
    }

    #[test]
    fn missing_simulation_missing_curve_and_non_agentic_hacks_fail() {
        let plain = "python3 -m sglang.launch_server --speculative-algorithm EAGLE --speculative-num-steps 3\n";
        assert_eq!(kinds(&pr(SCRIPT, plain)).1, ["not_simulated"]);
        let other = "benchmarks/single_node/agentic/glm5_fp4_b200_sglang_mtp.sh";
        assert_eq!(kinds(&pr(other, &script("2.0"))).1, ["no_curve"]);
        let fixed = "benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200_sglang_mtp.sh";
        assert_eq!(kinds(&pr(fixed, &script("2.86"))).1, ["non_agentic"]);
    }

    #[test]
    fn a_recipe_takes_the_model_of_the_master_config_that_references_it() {
        let recipe_path = "benchmarks/multi_node/srt-slurm-recipes/sglang/deepseek-v4/agentic/disagg-mtp.yaml";
        let recipe = "name: x\nbackend:\n  decode_environment:\n    SGLANG_SIMULATE_ACC_LEN: \"2.43\"\n  sglang_config:\n    decode:\n      speculative-algorithm: EAGLE\n      speculative-num-steps: 2\n";
        let mut e = pr(recipe_path, recipe);
        e.head.insert("configs/amd-master.yaml", "{}\n");
        e.head.insert(
            "configs/nvidia-master.yaml",
            "dsv4-fp4-gb300-dynamo-sglang:\n  model-prefix: dsv4\n  scenarios:\n    agentic-coding:\n    - search-space:\n      - additional-settings:\n        - CONFIG_FILE=sglang/deepseek-v4/agentic/disagg-mtp.yaml\n",
        );
        assert_eq!(kinds(&e).0, Status::Pass, "{:?}", check(&Context::new(&e)));
        // The owning config's scenario decides, not the directory name (the corpus' #2612).
        let fixed = "dsv4-fp4-gb300-dynamo-sglang:\n  model-prefix: dsv4\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - additional-settings:\n        - CONFIG_FILE=sglang/deepseek-v4/agentic/disagg-mtp.yaml\n";
        e.head.insert("configs/nvidia-master.yaml", fixed);
        assert_eq!(kinds(&e).1, ["non_agentic"]);
    }

    #[test]
    fn no_agentic_spec_change_is_not_applicable() {
        assert_eq!(
            kinds(&pr("benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200_sglang.sh", "run\n")).0,
            Status::NotApplicable
        );
    }

    /// The corpus' real scripts (#2621, #2658, #2580, #2576): vLLM's knob in escaped JSON of a
    /// shell string, TRT-LLM's draft length as `max_draft_len`, values through shell variables,
    /// ATOM's pinned `SIMULATE_ACC_LEN`. Each also FAILs with a value off the curve.
    #[test]
    fn real_script_spellings_are_read() {
        let vllm = |al: &str| {
            format!("SPEC_CONFIG=\"{{\\\"method\\\": \\\"mtp\\\", \\\"num_speculative_tokens\\\": 3, \\\"rejection_sample_method\\\": \\\"synthetic\\\", \\\"synthetic_acceptance_length\\\": {al}}}\"\n")
        };
        let trt = |al: &str| format!("    max_draft_len: 3\nexport TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS={al}\n");
        let var = |al: &str| {
            format!("NUM_SPEC_TOKENS=3\nSYNTHETIC_ACCEPT_LEN={al}\nSPEC_CONFIG=\"{{\\\"method\\\":\\\"mtp\\\",\\\"num_speculative_tokens\\\":$NUM_SPEC_TOKENS,\\\"rejection_sample_method\\\":\\\"synthetic\\\",\\\"synthetic_acceptance_length\\\":$SYNTHETIC_ACCEPT_LEN}}\"\n")
        };
        let atom = |al: &str| {
            format!("NUM_SPEC_TOKENS=3\nSIMULATE_ACC_LEN={al}\nRATE=$(awk \"BEGIN{{print ($SIMULATE_ACC_LEN-1)/$NUM_SPEC_TOKENS}}\")\nserve --method mtp --num-speculative-tokens 3 --spec-decode-acceptance-rate \"$RATE\"\n")
        };
        type Spelling<'a> = &'a dyn Fn(&str) -> String;
        let cases: [(&str, Spelling, &str, &str); 4] = [
            ("dsv4_fp4_b200_vllm_mtp.sh", &vllm, "2.86", "2.49"),
            ("dsv4_fp4_b300_trt_mtp.sh", &trt, "1.86", "1.78"),
            ("dsv4_fp8_mi300x_mtp.sh", &var, "2.86", "2.78"),
            ("dsv4_fp4_mi355x_atom_mtp.sh", &atom, "2.86", "2.99"),
        ];
        for (name, text, golden, off) in cases {
            let path = format!("benchmarks/single_node/agentic/{name}");
            assert_eq!(kinds(&pr(&path, &text(golden))), (Status::Pass, vec![]), "{name}");
            assert_eq!(kinds(&pr(&path, &text(off))), (Status::Fail, vec!["mismatch".to_owned()]), "{name}");
        }
    }

    /// Eval-only recipes run real acceptance by design; the same file under another name FAILs.
    #[test]
    fn eval_only_files_are_not_judged() {
        let plain = "python3 -m sglang.launch_server --speculative-algorithm EAGLE --speculative-num-steps 3\n";
        let eval = "benchmarks/single_node/agentic/dsv4_fp4_b200_sglang_mtp-eval-only.sh";
        assert_eq!(kinds(&pr(eval, plain)).0, Status::NotApplicable);
        assert_eq!(kinds(&pr(SCRIPT, plain)).1, ["not_simulated"]);
    }
}
