//! Check 11 — Golden AL (spec 30 Check 11, §7.3): agentic speculative-decoding configurations
//! run with simulated acceptance at the committed golden acceptance length; non-agentic ones never
//! simulate acceptance.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::json;

use super::{reason, with_fields, Context, Outcome};
use crate::domain::golden_al::{GoldenAlFile, GoldenAlSet, GoldenName, ThinkingMode};
use crate::domain::launch::runner::{self, Assignment};
use crate::domain::launch::settings;
use crate::domain::launch::shell::{self, Env, ScriptValues};
use crate::pr::affected::{all_configs, entry_items, recipe_rows, RecipeRow};
use crate::pr::configs::AffectedConfig;
use crate::pr::reach::{self, LaunchPath, ReachKind};
use crate::pr::scan::{self, Role};
use crate::repo::{Layout, Logical};

const METHODS: [&str; 5] = ["eagle3", "eagle", "dspark", "dflash", "mtp"];

struct Knob {
    line: u32,
    al: f64,
    /// The shell variable the value came through (`$SYNTHETIC_ACCEPT_LEN`), if any.
    var: Option<String>,
}

fn regex(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    // The patterns are literals of this file; an invalid one is caught by the tests.
    cell.get_or_init(|| Regex::new(pattern).unwrap_or_else(|_| Regex::new("$^").expect("trivial regex")))
}

/// A knob's value: a number, or a shell variable (`$X`, `${X}`) the file assigns a number.
const VALUE: &str = r#"\\?["']?(\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|[0-9]+(?:\.[0-9]+)?)"#;

/// The number a variable of the file holds, through the launch model's shell ([`ScriptValues`]):
/// the last value assigned, defaults and quotes expanded as the shell expands them.
fn number_of(vars: &ScriptValues, name: &str) -> Option<f64> {
    vars.expand(&format!("${{{name}}}"), &[], 16).ok()?.iter().rev().find_map(|v| v.trim().parse().ok())
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
    let vars = ScriptValues::of(text);
    // ATOM derives its acceptance rate from a pinned `SIMULATE_ACC_LEN` (AL) variable.
    let atom_rate = text.contains("--spec-decode-acceptance-rate");
    let knobs: [(&Regex, f64); 4] = [
        (regex(&SGL, &format!(r#"SGLANG_SIMULATE_ACC_LEN["']?\s*[=:]\s*{VALUE}"#)), 0.0),
        (regex(&VLLM, &format!(r#"synthetic_acceptance_length\\?["']?\s*:\s*{VALUE}"#)), 0.0),
        (regex(&TRT, &format!(r#"TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS["']?\s*[=:]\s*{VALUE}"#)), 1.0),
        (regex(&ATOM, &format!(r#"--spec-decode-acceptance-length[= ]\s*{VALUE}"#)), 0.0),
    ];
    let resolve = |token: &str| match token.strip_prefix('$') {
        Some(name) => number_of(&vars, var_name(name)),
        None => token.parse::<f64>().ok(),
    };
    for (i, raw) in text.lines().enumerate() {
        let code = scan::code_part(raw);
        let line = i as u32 + 1;
        if let Some(token) = printf_argument(text, line, "synthetic_acceptance_length") {
            if let Some(value) = resolve(&token) {
                let var = token.strip_prefix('$').map(|n| var_name(n).to_owned());
                return Some(Knob { line, al: value, var });
            }
        }
        for (re, bonus) in &knobs {
            let Some(token) = re.captures(code).and_then(|c| c.get(1)).map(|m| m.as_str()) else { continue };
            if let Some(value) = resolve(token) {
                let var = token.strip_prefix('$').map(|n| var_name(n).to_owned());
                return Some(Knob { line, al: value + bonus, var });
            }
        }
        let atom = regex(&ATOM_AL, r#"^\s*(?:export\s+)?SIMULATE_ACC_LEN=["']?([0-9]+(?:\.[0-9]+)?)"#);
        if atom_rate {
            if let Some(al) = atom.captures(code).and_then(|c| c[1].parse::<f64>().ok()) {
                return Some(Knob { line, al, var: None });
            }
        }
    }
    None
}

/// The argument a `printf` format's conversion for `key` takes (`"key":%.2f`), where line
/// `line` holds that format: InferenceX's MiniMax-M3 B200 launcher (#2611) builds its
/// speculative config with `SPEC_CONFIG=$(printf '{…"num_speculative_tokens":%d,…,
/// "synthetic_acceptance_length":%.2f}' "$DRAFT_MODEL_PATH" "$NUM_SPEC_TOKENS"
/// "$SYNTHETIC_ACCEPT_LEN")`, continued over lines.
fn printf_argument(text: &str, line: u32, key: &str) -> Option<String> {
    let code = scan::code_part(text.lines().nth(usize::try_from(line).ok()?.checked_sub(1)?)?);
    let after = &code[code.find(key)? + key.len()..];
    let conversion = after.trim_start_matches(['\\', '"', '\'']).trim_start().strip_prefix(':')?.trim_start();
    if !conversion.starts_with('%') {
        return None;
    }
    let (_, joined) = shell::logical_lines(text).into_iter().take_while(|(start, _)| *start <= line).last()?;
    let words = settings::words(&joined);
    let printf = words.iter().position(|w| w.ends_with("printf"))?;
    let format = printf + 1 + words[printf + 1..].iter().position(|w| w.contains(key))?;
    // Conversions before the key's, in the format as the shell passes it (`%%` is no conversion).
    let before = &words[format][..words[format].find(key)?];
    let index = before.replace("%%", "").matches('%').count();
    Some(words.get(format + 1 + index)?.trim_end_matches(')').to_owned())
}

/// `NAME` of `${NAME}` / `NAME`.
fn var_name(token: &str) -> &str {
    token.trim_start_matches('{').trim_end_matches('}')
}

/// The numeric values the launch model's evaluation of a file assigns to `var`
/// (`runner::evaluate`): a script that sets the AL per branch (`if [ "$CONC" -le 8 ]; then
/// NUM_SPEC_TOKENS=7; SYNTHETIC_ACCEPT_LEN=3.84; …`) is judged branch by branch.
fn numbers_of<'a>(assigned: &'a [Assignment], var: &str) -> Vec<(&'a Assignment, f64)> {
    assigned.iter().filter(|a| a.name == var).filter_map(|a| Some((a, a.value.as_ref().ok()?.parse().ok()?))).collect()
}

/// The draft length assigned with an acceptance length: in the same branch of an `if`/`case`
/// (the nearest before it, else the first after it: `AL=…; N=…` pairs as `N=…; AL=…` does), else
/// the last one before it in a block that encloses it. A draft length of a sibling branch never
/// pairs.
fn paired_draft(al: &Assignment, drafts: &[(&Assignment, f64)]) -> Option<u32> {
    let same = || drafts.iter().filter(|(d, _)| d.branch == al.branch);
    let before = |(d, _): &&(&Assignment, f64)| d.line < al.line;
    let same = same().rfind(before).or_else(|| same().find(|(d, _)| d.line > al.line));
    let enclosing = || drafts.iter().filter(before).rfind(|(d, _)| al.branch.starts_with(&d.branch));
    same.or_else(enclosing).map(|(_, v)| *v as u32)
}

/// A `case` arm's pattern and the command after it (`*DeepSeek-V4*:3) AL=2.49 ;;`); a line that
/// opens no arm has no pattern.
fn case_arm(code: &str) -> (Option<&str>, &str) {
    match code.split_once(')') {
        Some((pattern, rest)) if !pattern.is_empty() && !pattern.contains(['=', ' ', '(', '$', '"']) => {
            (Some(pattern), rest.trim_start())
        }
        _ => (None, code),
    }
}

/// The draft length a `case` arm at `line` is keyed by: the arm's number where the `case`
/// subject has a draft variable (`case "${MODEL_NAME}:${DECODE_MTP_SIZE}" in` … `*V4*:3)`),
/// with that variable's name.
fn case_arm_draft(text: &str, line: u32) -> Option<(String, u32)> {
    let lines: Vec<&str> = text.lines().collect();
    let pattern = case_arm(scan::code_part(lines.get(line as usize - 1)?).trim()).0?;
    let subject = lines[..line as usize - 1].iter().rev().find_map(|l| {
        let code = scan::code_part(l).trim();
        code.strip_prefix("case ")?.strip_suffix(" in").map(|s| s.trim().trim_matches(['"', '\'']))
    })?;
    let keyed: Vec<(String, u32)> = subject
        .split(':')
        .zip(pattern.split(':'))
        .filter_map(|(var, value)| {
            let name = var_name(var.strip_prefix('$')?);
            Some((name.to_owned(), value.parse().ok()?))
        })
        .collect();
    let drafts = ["MTP", "SPEC", "DRAFT", "STEPS", "NEXTN"];
    keyed.iter().find(|(name, _)| drafts.iter().any(|d| name.to_ascii_uppercase().contains(d))).cloned()
}

/// The number of draft tokens (MTP level / num_speculative_tokens / TRT-LLM's `max_draft_len`),
/// possibly through a shell variable of the file (returned too). SGLang's
/// `--speculative-num-draft-tokens N` counts the verified token too: N − 1 draft tokens.
fn draft_length(text: &str) -> Option<(u32, Option<String>)> {
    static STEPS: OnceLock<Regex> = OnceLock::new();
    static DRAFT_TOKENS: OnceLock<Regex> = OnceLock::new();
    let vars = ScriptValues::of(text);
    let code: String = text.lines().map(scan::code_part).collect::<Vec<_>>().join("\n");
    let resolve = |token: &str| -> Option<(u32, Option<String>)> {
        match token.strip_prefix('$') {
            Some(name) => number_of(&vars, var_name(name)).map(|v| (v as u32, Some(var_name(name).to_owned()))),
            None => token.parse().ok().map(|n| (n, None)),
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
    let lines = 1..=u32::try_from(text.lines().count()).unwrap_or(u32::MAX);
    if let Some(n) =
        lines.filter_map(|line| printf_argument(text, line, "num_speculative_tokens")).find_map(|t| resolve(&t))
    {
        return Some(n);
    }
    let tokens = regex(&DRAFT_TOKENS, &format!(r#"speculative[-_]num[-_]draft[-_]tokens\\?["']?\s*[:= ]\s*{VALUE}"#));
    tokens.captures_iter(&code).find_map(|c| resolve(&c[1])).map(|(n, var)| (n.saturating_sub(1), var))
}

/// The text of the role that accepts drafts: acceptance happens where tokens are decoded, so a
/// disaggregated recipe's draft length is its `decode:` role's (its prefill may draft
/// differently, the corpus' #2642), an aggregated one's its `aggregated:` role's. Every such
/// section of the file (the base's and each variant's) is returned; none: the whole text.
fn decode_roles(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut sections = Vec::new();
    for key in ["decode:", "aggregated:"] {
        for (i, line) in lines.iter().enumerate() {
            if scan::code_part(line).trim() != key {
                continue;
            }
            let depth = indent(line);
            let body: Vec<&str> =
                lines[i + 1..].iter().take_while(|l| l.trim().is_empty() || indent(l) > depth).copied().collect();
            sections.push(body.join("\n"));
        }
        if !sections.is_empty() {
            break;
        }
    }
    sections
}

/// The draft lengths a file runs at: each decode role's (see [`decode_roles`]) that names one,
/// else the file's.
fn draft_lengths(text: &str) -> Vec<(u32, Option<String>)> {
    let roles: Vec<_> = decode_roles(text).iter().filter_map(|r| draft_length(r)).collect();
    if roles.is_empty() {
        draft_length(text).into_iter().collect()
    } else {
        let mut unique = Vec::new();
        for r in roles {
            if !unique.contains(&r) {
                unique.push(r);
            }
        }
        unique
    }
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

/// What the config drafts with: the draft checkpoint it names (`Inferact/MiniMax-M3-EAGLE3-GQA`)
/// and the methods it may be measured by, most specific first.
struct Drafting {
    /// The draft checkpoint's name, lower case, without its organisation.
    draft: Option<String>,
    methods: Vec<&'static str>,
    /// The file's code, lower case, for a curve's `speculative-config:` settings.
    code: String,
}

/// A config drafts by the checkpoint it names, not by its file name: the draft's name says its
/// method and variant (EAGLE3-GQA has its own curve), then the method the engine is told
/// (`"method": "eagle3"`, `decoding_type: Eagle3`, `speculative-algorithm: NEXTN`), then the file
/// name. SGLang's `EAGLE`/`NEXTN` without a draft checkpoint runs the model's own MTP heads.
fn drafting(path: &str, text: &str) -> Option<Drafting> {
    static DRAFT: OnceLock<Regex> = OnceLock::new();
    static METHOD: OnceLock<Regex> = OnceLock::new();
    let code = text.lines().map(scan::code_part).collect::<Vec<_>>().join("\n").to_ascii_lowercase();
    let draft_re = regex(&DRAFT, r"[a-z0-9_.-]+/([a-z0-9_.-]*(?:eagle|dspark|dflash|mtp|draft)[a-z0-9_.-]*)");
    let draft = draft_re.captures(&code).map(|c| c[1].to_owned()).filter(|d| !d.starts_with('$'));
    let mut methods: Vec<&'static str> = Vec::new();
    let mut add = |m: &'static str| {
        if !methods.contains(&m) {
            methods.push(m);
        }
    };
    if let Some(d) = &draft {
        METHODS.iter().filter(|m| d.contains(**m)).for_each(|m| add(m));
    }
    let method_re = regex(
        &METHOD,
        r#"(?:\\?"method\\?"\s*:\s*\\?"|\bmethod:\s*|decoding_type:\s*|speculative[-_]algorithm["']?\s*[:= ]\s*["']?|--method\s+)([a-z0-9]+)"#,
    );
    for c in method_re.captures_iter(&code) {
        match &c[1] {
            "nextn" => add("mtp"),
            "eagle" if draft.is_none() => add("mtp"),
            other => {
                if let Some(m) = METHODS.iter().find(|m| **m == other) {
                    add(m);
                }
            }
        }
    }
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    METHODS.iter().filter(|m| name.contains(**m)).for_each(|m| add(m));
    // Only a file that names no method anywhere else is read for a method word in its code.
    let named_elsewhere = draft.is_some() || method_re.is_match(&code) || METHODS.iter().any(|m| name.contains(m));
    if !named_elsewhere {
        METHODS.iter().filter(|m| code.contains(**m)).for_each(|m| add(m));
    }
    (!methods.is_empty()).then_some(Drafting { draft, methods, code })
}

/// The committed curves a config's AL may come from, for this model and drafting: per method
/// (most specific first), the file whose variant the config runs — its `speculative-config:`
/// header settings (other than the rejection method synthetic acceptance replaces) all set by the
/// config, or its variant named by the draft checkpoint (`…_eagle3_gqa` ← `…-EAGLE3-GQA`) — else
/// the plain file (unless its header names another draft checkpoint) and every variant whose
/// settings the launch does not mention: where the launch does not say how it samples, each
/// curve measured for the draft is a candidate (issue 22).
fn golden_files<'g>(golden: &'g GoldenAlSet, prefix: &str, d: &Drafting) -> Vec<&'g GoldenAlFile> {
    let settings = |f: &GoldenAlFile| -> Option<Vec<(String, String)>> {
        let header = f.header.speculative_config.as_deref()?;
        let pairs = header.split('|').filter_map(|kv| kv.split_once('='));
        let pairs = pairs.map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_ascii_lowercase()));
        Some(pairs.filter(|(k, _)| k != "rejection_sample_method").collect())
    };
    let sets =
        |(k, v): &(String, String)| d.code.lines().any(|l| l.find(k).is_some_and(|at| l[at + k.len()..].contains(v)));
    let runs_variant = |f: &GoldenAlFile, variant: &str| match settings(f) {
        Some(pairs) => pairs.iter().all(sets),
        None => d.draft.as_deref().is_some_and(|draft| draft.contains(&variant.replace('_', "-"))),
    };
    let unsaid = |f: &GoldenAlFile| settings(f).is_some_and(|pairs| pairs.iter().all(|(k, _)| !d.code.contains(k)));
    let other_draft = |f: &GoldenAlFile| {
        let named = f.header.measured_on.as_deref().and_then(|m| m.split("draft:").nth(1));
        match (named, &d.draft) {
            (Some(named), Some(draft)) => {
                let named = named.trim().trim_end_matches([')', ',']).to_ascii_lowercase();
                !named.rsplit('/').next().unwrap_or(&named).starts_with(draft.as_str())
            }
            _ => false,
        }
    };
    for method in &d.methods {
        let named: Vec<(&GoldenAlFile, Option<String>)> = golden
            .files
            .iter()
            .filter_map(|f| GoldenName::from_file_name(&f.file).map(|n| (f, n)))
            .filter(|(_, n)| n.model_prefix.eq_ignore_ascii_case(prefix) && n.method == *method)
            .map(|(f, n)| (f, n.variant))
            .collect();
        if let Some((f, _)) = named.iter().find(|(f, v)| v.as_deref().is_some_and(|v| runs_variant(f, v))) {
            return vec![*f];
        }
        let plain = named.iter().filter(|(f, v)| v.is_none() && !other_draft(f));
        let candidates: Vec<&GoldenAlFile> =
            plain.chain(named.iter().filter(|(f, v)| v.is_some() && unsaid(f))).map(|(f, _)| *f).collect();
        if !candidates.is_empty() {
            return candidates;
        }
    }
    vec![]
}

/// Frameworks whose srt-slurm launcher writes synthetic acceptance into the recipe when the
/// master-config row sets `SYNTHETIC_ACCEPTANCE=true` (upstream's
/// `runners/inject_synthetic_acceptance.py`; at Aug-2026 `runners/synthetic_injectors/`
/// registers these two). For any other framework the setting does nothing.
const INJECTING_FRAMEWORKS: [&str; 2] = ["dynamo-sglang", "dynamo-vllm"];

/// The launcher injects synthetic acceptance into the recipe for this row.
fn injects(row: &RecipeRow) -> bool {
    row.setting("SYNTHETIC_ACCEPTANCE").is_some_and(|(v, _)| v.eq_ignore_ascii_case("true"))
        && INJECTING_FRAMEWORKS.contains(&row.owner.framework.as_str())
}

/// The model prefix of a script (`<prefix>_<precision>_<gpu>_<fw>…sh`) or of a recipe (its
/// owning master-config entry).
fn model_prefix(owner: Option<&AffectedConfig>, path: &str, role: Role) -> Option<String> {
    if role == Role::Script {
        return path.rsplit('/').next()?.split('_').next().map(str::to_owned);
    }
    owner.map(|c| c.model_prefix.clone())
}

/// A script another benchmark script runs or sources by name (`bash "$(dirname "$0")/x.sh"`,
/// `source …/x.sh`) is a helper of that launcher (a patch or setup step), not a launcher: the
/// launcher that reaches it is the one judged.
fn is_helper(cx: &Context, path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let head = &cx.evidence.head;
    head.paths().filter(|p| *p != path && scan::role(p) == Role::Script && p.ends_with(".sh")).any(|p| {
        head.text(p).is_some_and(|t| {
            t.lines().map(scan::code_part).any(|l| {
                l.find(name).is_some_and(|at| matches!(l[..at].chars().last(), Some('/' | ' ' | '"' | '\'')))
                    && ["bash ", "source ", ". ", "sh "].iter().any(|verb| l.trim_start().starts_with(verb))
            })
        })
    })
}

/// An eval-only recipe or script (`*-eval-*`) measures accuracy with real acceptance by design.
fn eval_only(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.contains("-eval-") || name.contains("_eval_") || name.contains("-eval.") || name.contains("_eval.")
}

fn golden_set(cx: &Context) -> GoldenAlSet {
    let policy = cx.evidence.policy_tree();
    let Ok(Some(dir)) = Layout::default().resolve(policy, Logical::GoldenAlDir) else { return GoldenAlSet::default() };
    let files = policy
        .paths()
        .filter(|p| p.starts_with(&format!("{dir}/")) && (p.ends_with(".yaml") || p.ends_with(".yml")))
        .filter_map(|p| policy.text(p).and_then(|t| GoldenAlFile::parse(t, p).ok()))
        .collect();
    GoldenAlSet { files }
}

fn round2(x: f64) -> i64 {
    (x * 100.0).round() as i64
}

/// One acceptance length a config runs at: where it is set, the value (None: the launcher looks
/// the golden value up itself) and the draft length it goes with.
struct Pinned {
    file: String,
    line: u32,
    al: Option<f64>,
    draft: Option<u32>,
}

/// The acceptance lengths a file pins, each with its draft length: one per decode role, or, for
/// a value set per shell branch, each assignment with the draft length of its branch (see
/// [`paired_draft`]; or the draft length its `case` arm is keyed by, for the arms `runs` says the
/// config runs). `assigned` is the launch model's evaluation of the file.
fn pinned_in_file(
    path: &str,
    text: &str,
    knob: &Knob,
    assigned: &[Assignment],
    runs: &dyn Fn(&str, u32) -> bool,
) -> Vec<Pinned> {
    let drafts = draft_lengths(text);
    let branch_values = knob.var.as_deref().map(|v| numbers_of(assigned, v)).filter(|a| a.len() > 1);
    let Some(values) = branch_values else {
        let at = |draft| Pinned { file: path.to_owned(), line: knob.line, al: Some(knob.al), draft };
        return if drafts.is_empty() { vec![at(None)] } else { drafts.iter().map(|(d, _)| at(Some(*d))).collect() };
    };
    // The knob read the file's last assignment; the bonus token (TRT-LLM) is the difference.
    let bonus = knob.al - values.last().map_or(knob.al, |(_, v)| *v);
    let draft_var = drafts.first().and_then(|(_, var)| var.clone());
    let draft_values = draft_var.map(|v| numbers_of(assigned, &v)).unwrap_or_default();
    values
        .into_iter()
        .filter_map(|(a, al)| {
            let line = a.line;
            if let Some((var, draft)) = case_arm_draft(text, line) {
                return runs(&var, draft).then(|| Pinned {
                    file: path.to_owned(),
                    line,
                    al: Some(al + bonus),
                    draft: Some(draft),
                });
            }
            let draft = paired_draft(a, &draft_values).or_else(|| drafts.first().map(|(d, _)| *d));
            Some(Pinned { file: path.to_owned(), line, al: Some(al + bonus), draft })
        })
        .collect()
}

/// The acceptance lengths the launcher injects for the master-config rows of a recipe
/// (`SYNTHETIC_ACCEPTANCE_LENGTH`, or the golden value it looks up when unset), at the row's
/// `NUM_SPEC_TOKENS` or the recipe's draft length.
fn pinned_by_rows(rows: &[&RecipeRow], text: &str) -> Vec<Pinned> {
    let drafts = draft_lengths(text);
    rows.iter()
        .flat_map(|row| {
            let length = row.setting("SYNTHETIC_ACCEPTANCE_LENGTH");
            let (line, al) = match length {
                Some((v, line)) => (line, v.parse::<f64>().ok()),
                None => (row.line, None),
            };
            let tokens = row.setting("NUM_SPEC_TOKENS").and_then(|(v, _)| v.parse::<u32>().ok());
            let lengths: Vec<Option<u32>> = match (tokens, drafts.is_empty()) {
                (Some(n), _) => vec![Some(n)],
                (None, true) => vec![None],
                (None, false) => drafts.iter().map(|(d, _)| Some(*d)).collect(),
            };
            lengths.into_iter().map(move |draft| Pinned { file: row.file.clone(), line, al, draft })
        })
        .collect()
}

/// The first script on a launch path (other than the launcher) that sets a simulation knob.
fn knob_on_path<'e>(
    ev: &'e crate::evidence::Evidence,
    path: &LaunchPath,
    launcher: &str,
) -> Option<(String, &'e str, Knob)> {
    path.files.iter().filter(|f| f.kind == ReachKind::Script && f.path != launcher).find_map(|f| {
        let text = ev.head.text(&f.path)?;
        simulated_al(text).map(|k| (f.path.clone(), text, k))
    })
}

pub fn check(cx: &Context) -> Outcome {
    let ev = cx.evidence;
    let golden = golden_set(cx);
    let detail = cx.detail().to_ascii_lowercase();
    let mut matches = Vec::new();
    let mut findings = Vec::new();
    let mut exceptions = Vec::new();
    let finding = |file: &str, line: u32, kind: &str, extra: serde_json::Value| {
        with_fields(json!({"file": file, "line": line, "kind": kind}), extra)
    };
    let reaches = match reach::affected_reach(cx) {
        Ok(r) => r,
        Err(error) => return Outcome::unreadable(reason("what_affected_entries"), error),
    };
    let mut judged_configs = std::collections::BTreeSet::new();
    for (path, role, reach_owner) in reach::judged_files(cx, reaches) {
        let path = path.as_str();
        let Some(text) = ev.head.text(path) else { continue };
        let Some(drafting) = drafting(path, text) else { continue };
        if eval_only(path) || (role == Role::Script && is_helper(cx, path)) {
            continue;
        }
        if let Some(o) = reach_owner {
            judged_configs.insert(o.config.key.clone());
        }
        // The master config's scenario decides, where a config runs the recipe; the path only
        // for files no config names.
        let rows = if role == Role::Recipe { recipe_rows(cx, path) } else { vec![] };
        // A multi-node recipe runs only through a master-config row; one that no row at the head
        // names produces no benchmark result to judge (the corpus' #2637 adds such a recipe).
        // Unreadable master configs leave `rows` empty too, so that case is judged by path.
        if rows.is_empty()
            && role == Role::Recipe
            && path.contains("multi_node/")
            && all_configs(cx).is_ok_and(|c| !c.is_empty())
        {
            continue;
        }
        let owner = rows.first().map(|r| r.owner.clone());
        let agentic = if rows.is_empty() {
            scan::logical_path(path).contains("agentic")
        } else {
            rows.iter().any(|r| r.owner.agentic)
        };
        let knob = simulated_al(text);
        if !agentic {
            if let Some(k) = knob {
                let file_name = path.rsplit('/').next().unwrap_or(path);
                let mut names: Vec<&str> = vec![path, file_name];
                names.extend(rows.iter().map(|r| r.owner.key.as_str()));
                names.extend(reach_owner.map(|o| o.config.key.as_str()));
                match documented_exception(cx.detail(), &names) {
                    Some(quote) => exceptions.push(json!({"file": path, "line": k.line, "quote": quote})),
                    None => findings.push(finding(path, k.line, "non_agentic", json!({}))),
                }
            }
            continue;
        }
        // A launcher that sets no knob itself may reach a script that does (#2309: the shared
        // server script's `case` table), with the config's rows choosing the arm.
        let launch_path = match (role, reach_owner) {
            (Role::Script, Some(o)) => o.path.clone(),
            (Role::Script, None) => reach::script_reach(cx, path),
            _ => Default::default(),
        };
        let (knob_file, knob_text, knob) = match knob {
            Some(k) => (path.to_owned(), text, Some(k)),
            None => {
                knob_on_path(ev, &launch_path, path).map_or((path.to_owned(), text, None), |(f, t, k)| (f, t, Some(k)))
            }
        };
        let items = reach_owner.map(|o| entry_items(cx, &o.config)).unwrap_or_default();
        let runs = |var: &str, n: u32| {
            let set: Vec<&String> = items.iter().filter(|(k, _, _)| k == var).map(|(_, v, _)| v).collect();
            set.is_empty() || set.iter().any(|v| v.parse::<u32>().ok() == Some(n))
        };
        let injected: Vec<&RecipeRow> = rows.iter().filter(|r| r.owner.agentic && injects(r)).collect();
        let mut pinned = match &knob {
            Some(k) => {
                let assigned = runner::evaluate(&ev.head, &knob_file, knob_text, &mut Env::new(&[]), "").assignments;
                pinned_in_file(&knob_file, knob_text, k, &assigned, &runs)
            }
            None if !injected.is_empty() => pinned_by_rows(&injected, text),
            None => {
                match launch_path.unavailable.first() {
                    Some(u) => findings.push(finding(path, 1, "unreachable", u.to_json())),
                    None => findings.push(finding(path, 1, "not_simulated", json!({}))),
                }
                continue;
            }
        };
        if pinned.is_empty() {
            continue;
        }
        if knob_file != path {
            let own = draft_lengths(text).first().map(|(d, _)| *d);
            pinned.iter_mut().filter(|p| p.draft.is_none()).for_each(|p| p.draft = own);
        }
        let text = &format!("{text}\n{}", if knob_file != path { knob_text } else { "" });
        let Some(prefix) = model_prefix(owner.as_ref(), path, role) else {
            findings.push(finding(path, pinned[0].line, "unknown_model", json!({})));
            continue;
        };
        let mode = thinking(text);
        let curves = golden_files(&golden, &prefix, &drafting);
        for p in pinned {
            let Some(draft) = p.draft else {
                findings.push(finding(&p.file, p.line, "no_draft_length", json!({})));
                continue;
            };
            let values: Vec<(&GoldenAlFile, f64)> =
                curves.iter().filter_map(|g| g.lookup(None, mode, draft).map(|v| (*g, v))).collect();
            let equal = p.al.and_then(|al| values.iter().find(|(_, golden)| round2(*golden) == round2(al)));
            match (equal, values.first(), p.al) {
                (Some((g, _)), _, Some(al)) => matches.push(json!({
                    "file": p.file, "al": al, "golden_file": g.file, "mode": mode.key(), "draft": draft,
                })),
                // The launcher injects the curve's own value (the row sets no length).
                (_, Some((g, golden)), None) => matches.push(json!({
                    "file": p.file, "al": golden, "golden_file": g.file, "mode": mode.key(), "draft": draft,
                })),
                // Off every candidate curve: each is named with its value.
                (None, Some(_), Some(al)) => {
                    for (g, golden) in &values {
                        findings.push(finding(
                            &p.file,
                            p.line,
                            "mismatch",
                            json!({"al": al, "golden": golden, "golden_file": g.file, "mode": mode.key(), "draft": draft}),
                        ));
                    }
                }
                (_, None, Some(al)) if detail.contains("al source") => matches.push(json!({
                    "file": p.file, "al": al, "golden_file": serde_json::Value::from(reason("al_source_in_detail")),
                    "mode": mode.key(), "draft": draft,
                })),
                (_, None, _) => findings.push(finding(
                    &p.file,
                    p.line,
                    "no_curve",
                    json!({"prefix": prefix, "method": drafting.methods.join("/"), "mode": mode.key(), "draft": draft}),
                )),
            }
        }
    }
    // An agentic speculative config whose launch path could not be read at all is unverifiable.
    for r in
        reaches.iter().filter(|r| r.config.agentic && r.config.speculative() && !judged_configs.contains(&r.config.key))
    {
        if r.path.files.iter().any(|f| matches!(f.kind, ReachKind::Launcher | ReachKind::Recipe)) {
            continue;
        }
        if let Some(u) = r.path.unavailable.first() {
            findings.push(finding(&r.config.file, r.config.line, "unreachable", u.to_json()));
        }
    }
    if !findings.is_empty() {
        let mut refs: Vec<String> =
            findings.iter().map(|f| format!("{}:{}", f["file"].as_str().unwrap_or_default(), f["line"])).collect();
        refs.dedup();
        let mut o = Outcome::fail("off_golden").arg("findings", findings);
        for r in refs {
            o = o.evidence(r);
        }
        return o;
    }
    if matches.is_empty() && exceptions.is_empty() {
        return Outcome::na("not_agentic_spec");
    }
    Outcome::pass("golden").arg("matches", matches).arg("exceptions", exceptions)
}

/// The longest quote of a documented exception a row shows (characters).
const EXCEPTION_QUOTE_CHARS: usize = 200;

/// The line of the additional detail section that documents the sanctioned exception for
/// simulated acceptance on a non-agentic config (upstream prompt Check 11: FAIL "unless the
/// sign-off documents a sanctioned exception"; spec 30 Check 11(c)): a line that says
/// "exception" (or 例外) and names the script (its path or file name) or its config key. Whether the
/// exception really is sanctioned is for a maintainer (11.i); the row quotes the line.
fn documented_exception(detail: &str, names: &[&str]) -> Option<String> {
    detail.lines().map(str::trim).find_map(|line| {
        let lower = line.to_lowercase();
        let names_it = names.iter().any(|n| !n.is_empty() && lower.contains(&n.to_lowercase()));
        (names_it && (lower.contains("exception") || line.contains("例外")))
            .then(|| line.chars().take(EXCEPTION_QUOTE_CHARS).collect())
    })
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

    /// Upstream's prompt: simulated acceptance on a non-agentic config FAILs "unless the sign-off
    /// documents a sanctioned exception" (11.b); the line must name the script or its config.
    #[test]
    fn a_documented_sanctioned_exception_excuses_a_non_agentic_config() {
        let fixed = "benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200_sglang_mtp.sh";
        let signed = |detail: &str| {
            let mut e = pr(fixed, &script("2.86"));
            e.signoff.body = format!("- [x] item\n\n### Additional detail section:\n{detail}\n\nSigned: `nv-owner`\n");
            e
        };
        let line = "Sanctioned exception: dsv4_fp4_b200_sglang_mtp.sh simulates acceptance at the golden AL (maintainers, #123).";
        let o = check(&Context::new(&signed(line)));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["exceptions"], json!([{"file": fixed, "line": 2, "quote": line}]));
        for (detail, why) in [
            ("Sanctioned exception for dsv4_fp4_b200_sglang.sh.", "another script"),
            ("dsv4_fp4_b200_sglang_mtp.sh simulates acceptance.", "no exception"),
            ("", "no detail section"),
        ] {
            assert_eq!(kinds(&signed(detail)).1, ["non_agentic"], "{why}");
        }
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
        // #2611's MiniMax-M3 B200 launcher (`minimaxm3_fp4_b200_mtp.sh:171-173`): a `printf`
        // format whose `%.2f` takes the AL variable, continued over lines.
        let printf = |al: &str| {
            format!("NUM_SPEC_TOKENS=3\nSYNTHETIC_ACCEPT_LEN={al}\nSPEC_CONFIG=$(printf \\\n    '{{\"method\":\"mtp\",\"model\":\"%s\",\"num_speculative_tokens\":%d,\"rejection_sample_method\":\"synthetic\",\"synthetic_acceptance_length\":%.2f}}' \\\n    \"$DRAFT_MODEL_PATH\" \"$NUM_SPEC_TOKENS\" \"$SYNTHETIC_ACCEPT_LEN\")\n")
        };
        type Spelling<'a> = &'a dyn Fn(&str) -> String;
        let cases: [(&str, Spelling, &str, &str); 5] = [
            ("dsv4_fp4_b200_vllm_mtp.sh", &vllm, "2.86", "2.49"),
            ("dsv4_fp4_b300_trt_mtp.sh", &trt, "1.86", "1.78"),
            ("dsv4_fp8_mi300x_mtp.sh", &var, "2.86", "2.78"),
            ("dsv4_fp4_mi355x_atom_mtp.sh", &atom, "2.86", "2.99"),
            ("dsv4_fp4_h200_vllm_mtp.sh", &printf, "2.86", "2.78"),
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

    fn golden(model: &str, header: &str, values: &str) -> String {
        format!("# Source GitHub Actions run: https://github.com/example/bench/actions/runs/7100000002\n# Acceptance Length (AL) reference values measured with SPEED-Bench.\n# dataset: coding | output_len: 4096\n{header}#\n# key = num_speculative_tokens; value = golden AL\n{model}:\n  thinking_on:\n{values}")
    }

    /// The corpus' #2660/#2571/#2609: an srt recipe is simulated by the launcher, which writes
    /// the row's `SYNTHETIC_ACCEPTANCE_LENGTH` (or the golden value it looks up) into it; the
    /// length is judged at the row's line. A framework without an injector is not simulated.
    #[test]
    fn srt_recipes_are_simulated_by_the_launcher_from_the_master_config_row() {
        let path = "benchmarks/multi_node/srt-slurm-recipes/vllm/deepseek-v4/agentic/agg-gb300-tp4-mtp-agentic.yaml";
        let recipe = "name: agg\nbackend:\n  vllm_config:\n    aggregated:\n      speculative-config: '{\"method\":\"mtp\",\"num_speculative_tokens\":3}'\n";
        let master = |framework: &str, length: &str| {
            format!("dsv4-fp4-gb300-dynamo-vllm-agentic:\n  model-prefix: dsv4\n  framework: {framework}\n  scenarios:\n    agentic-coding:\n    - search-space:\n      - spec-decoding: mtp\n        prefill:\n          additional-settings:\n          - \"SYNTHETIC_ACCEPTANCE=true\"\n{length}          - \"CONFIG_FILE=recipes/vllm/deepseek-v4/agentic/agg-gb300-tp4-mtp-agentic.yaml\"\n")
        };
        let run = |framework: &str, length: &str| {
            let mut e = pr(path, recipe);
            e.head.insert("configs/nvidia-master.yaml", master(framework, length).as_str());
            let o = check(&Context::new(&e));
            let kinds: Vec<String> = o.message.args.get("findings").and_then(|f| f.as_array()).map_or(vec![], |a| {
                a.iter()
                    .map(|f| {
                        format!(
                            "{}:{}:{}",
                            f["kind"].as_str().unwrap_or_default(),
                            f["file"].as_str().unwrap_or_default(),
                            f["line"]
                        )
                    })
                    .collect()
            });
            (o.status, kinds)
        };
        assert_eq!(run("dynamo-vllm", "          - \"SYNTHETIC_ACCEPTANCE_LENGTH=2.86\"\n"), (Status::Pass, vec![]));
        assert_eq!(run("dynamo-vllm", ""), (Status::Pass, vec![]), "the launcher looks the golden value up");
        assert_eq!(
            run("dynamo-vllm", "          - \"SYNTHETIC_ACCEPTANCE_LENGTH=2.49\"\n"),
            (Status::Fail, vec!["mismatch:configs/nvidia-master.yaml:11".to_owned()])
        );
        assert_eq!(
            run("dynamo-trt", "          - \"SYNTHETIC_ACCEPTANCE_LENGTH=2.86\"\n").1,
            [format!("not_simulated:{path}:1")]
        );
    }

    /// The corpus' #2658/#2580/#2620: the curve is the draft checkpoint's — an EAGLE3-GQA draft
    /// in a `…_mtp.sh` script has its own curve; SGLang's EAGLE without a draft checkpoint is the
    /// model's MTP; a DSpark run with probabilistic drafting takes the curve measured so.
    #[test]
    fn the_curve_is_picked_by_the_draft_model() {
        let trt = |al: &str| {
            format!("DRAFT_MODEL=\"Inferact/MiniMax-M3-EAGLE3-GQA\"\nspeculative_config:\n    decoding_type: Eagle3\n    max_draft_len: 3\n    speculative_model: $DRAFT_MODEL_PATH\nexport TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS={al}\n")
        };
        let path = "benchmarks/single_node/agentic/minimaxm3_fp4_b300_trt_mtp.sh";
        let with_curves = |text: &str| {
            let mut e = pr(path, text);
            e.base.insert(
                "golden_al_distribution/minimaxm3_eagle3.yaml",
                golden(
                    "minimax-m3",
                    "# Measured on minimax-m3 (B300, vLLM EAGLE3), per num_speculative_tokens.\n",
                    "    3: 2.70\n",
                )
                .as_str(),
            );
            e.base.insert(
                "golden_al_distribution/minimaxm3_eagle3_gqa.yaml",
                golden(
                    "minimax-m3",
                    "# Measured on minimax-m3 (B300, vLLM EAGLE3), per num_speculative_tokens.\n",
                    "    3: 2.78\n",
                )
                .as_str(),
            );
            e
        };
        assert_eq!(kinds(&with_curves(&trt("1.78"))), (Status::Pass, vec![]));
        assert_eq!(kinds(&with_curves(&trt("1.70"))).1, ["mismatch"], "the plain EAGLE3 curve is not the GQA draft's");

        let recipe = |al: &str| {
            format!("backend:\n  aggregated_environment:\n    SGLANG_SIMULATE_ACC_LEN: '{al}'\n  sglang_config:\n    aggregated:\n      speculative-algorithm: EAGLE\n      speculative-num-steps: 3\n")
        };
        let e = pr("benchmarks/single_node/agentic/dsv4_fp4_b200_sglang.sh", &recipe("2.86"));
        assert_eq!(kinds(&e), (Status::Pass, vec![]), "EAGLE without a draft checkpoint reads the MTP curve");

        let dspark = |variant: &str| {
            format!("DRAFT_MODEL=\"${{DRAFT_MODEL:-Inferact/Kimi-K3-DSpark}}\"\nNUM_SPEC_TOKENS=3\nSYNTHETIC_ACCEPT_LEN=3.00\nSPEC_CONFIG=\"{{\\\"method\\\": \\\"dspark\\\", \\\"num_speculative_tokens\\\": $NUM_SPEC_TOKENS, {variant}\\\"rejection_sample_method\\\": \\\"synthetic\\\", \\\"synthetic_acceptance_length\\\": $SYNTHETIC_ACCEPT_LEN}}\"\n")
        };
        let kimi = |text: &str| {
            let mut e = pr("benchmarks/single_node/agentic/kimik3_fp4_b300_vllm_mtp.sh", text);
            e.base.insert("golden_al_distribution/kimik3_dspark.yaml", golden("kimi-k3", "# Measured on kimi-k3 (B300, vLLM DSpark, draft: Inferact/Kimi-K3-DSpark), per num_speculative_tokens.\n", "    3: 2.86\n").as_str());
            e.base.insert("golden_al_distribution/kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method.yaml", golden("kimi-k3", "# speculative-config: draft_sample_method=probabilistic | rejection_sample_method=block\n# Measured on kimi-k3 (B300, vLLM DSpark, draft: Inferact/Kimi-K3-DSpark), per num_speculative_tokens.\n", "    3: 3.00\n").as_str());
            e
        };
        assert_eq!(
            kinds(&kimi(&dspark("\\\"draft_sample_method\\\": \\\"probabilistic\\\", "))),
            (Status::Pass, vec![])
        );
        assert_eq!(
            kinds(&kimi(&dspark("\\\"draft_sample_method\\\": \\\"greedy\\\", "))).1,
            ["mismatch"],
            "greedy drafting reads the plain DSpark curve"
        );
        // Issue 22: a launch that does not say how it samples may take either curve of the
        // draft; the match names the curve it equals, a value off both names each.
        let o = check(&Context::new(&kimi(&dspark(""))));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(
            o.message.args["matches"][0]["golden_file"],
            "golden_al_distribution/kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method.yaml"
        );
        let plain = dspark("").replace("=3.00", "=2.86");
        let o = check(&Context::new(&kimi(&plain)));
        assert_eq!(o.message.args["matches"][0]["golden_file"], "golden_al_distribution/kimik3_dspark.yaml");
        let o = check(&Context::new(&kimi(&dspark("").replace("=3.00", "=2.95"))));
        assert_eq!(o.status, Status::Fail);
        let named: Vec<_> =
            o.message.args["findings"].as_array().unwrap().iter().map(|f| f["golden"].clone()).collect();
        assert_eq!(named, [2.86, 3.0], "each candidate curve is named with its value");
        assert_eq!(o.evidence.len(), 1, "one offending line");
    }

    /// The corpus' #2642/#2608: a disaggregated recipe's prefill drafts 1 token, its decode 2;
    /// acceptance happens in decode, so the AL is judged at the decode role's draft length.
    #[test]
    fn a_disaggregated_recipe_is_judged_at_its_decode_draft_length() {
        let recipe = |al: &str| {
            format!("backend:\n  decode_environment:\n    SGLANG_SIMULATE_ACC_LEN: '{al}'\n  sglang_config:\n    prefill:\n      speculative-algorithm: EAGLE\n      speculative-num-steps: 1\n    decode:\n      speculative-algorithm: EAGLE\n      speculative-num-steps: 2\n      speculative-num-draft-tokens: 3\n")
        };
        let path = "benchmarks/single_node/agentic/dsv4_fp4_gb200_sglang_disagg.sh";
        assert_eq!(kinds(&pr(path, &recipe("2.43"))), (Status::Pass, vec![]));
        assert_eq!(kinds(&pr(path, &recipe("1.85"))).1, ["mismatch"]);
    }

    /// The corpus' #2616 and #2508: a script that sets the draft length and AL per branch is
    /// judged branch by branch; a `${VAR:-2}` default is the draft length; a patch helper the
    /// launcher runs (`bash "$(dirname "$0")/apply_patches.sh"`) is not itself a launcher.
    #[test]
    fn branch_values_defaults_and_helpers_of_real_scripts() {
        let branches = |low: &str| {
            format!("if [ \"$CONC\" -le 8 ]; then\n    NUM_SPEC_TOKENS=3\n    SYNTHETIC_ACCEPT_LEN={low}\nelif [ \"$CONC\" -le 16 ]; then\n    NUM_SPEC_TOKENS=2\n    SYNTHETIC_ACCEPT_LEN=2.43\nelse\n    NUM_SPEC_TOKENS=0\nfi\nSPEC_CONFIG=\"{{\\\"method\\\": \\\"mtp\\\", \\\"num_speculative_tokens\\\": $NUM_SPEC_TOKENS, \\\"rejection_sample_method\\\": \\\"synthetic\\\", \\\"synthetic_acceptance_length\\\": $SYNTHETIC_ACCEPT_LEN}}\"\n")
        };
        let path = "benchmarks/single_node/agentic/dsv4_fp4_b300_vllm_mtp.sh";
        assert_eq!(kinds(&pr(path, &branches("2.86"))), (Status::Pass, vec![]));
        let e = pr(path, &branches("2.43"));
        assert_eq!(check(&Context::new(&e)).evidence, [format!("{path}:3")]);

        let launcher = "bash \"$(dirname \"$0\")/apply_patches.sh\"\nNUM_SPEC_TOKENS=\"${NUM_SPEC_TOKENS:-2}\"\nSYNTHETIC_ACCEPT_LEN=2.43\nSPEC=\"{\\\"method\\\":\\\"mtp\\\",\\\"num_speculative_tokens\\\":$NUM_SPEC_TOKENS,\\\"rejection_sample_method\\\":\\\"synthetic\\\",\\\"synthetic_acceptance_length\\\":$SYNTHETIC_ACCEPT_LEN}\"\n";
        let helper = "patch -p1 <<'EOF'\n+ if speculative_config.method in (\"mtp\",):\nEOF\n";
        let mut e = pr(path, launcher);
        e = with_added_file(e, "benchmarks/single_node/agentic/apply_patches.sh", helper);
        assert_eq!(kinds(&e), (Status::Pass, vec![]));
        e.head.insert(path, "echo no launcher runs the helper\n");
        let o = check(&Context::new(&e));
        assert!(o.evidence.contains(&"benchmarks/single_node/agentic/apply_patches.sh:1".to_owned()), "{o:?}");
    }

    /// Issue 28 item 5: each branch of an `if` sets the AL before its draft length; each AL is
    /// paired with the draft length of its own branch, not the other branch's.
    #[test]
    fn an_al_is_paired_with_the_draft_length_of_its_own_branch() {
        let script = |at_one: &str| {
            format!("if [ \"$CONC\" = 1 ]; then\n    SPEC_DECODE_AL={at_one}\n    NUM_SPEC_TOKENS=2\nelse\n    SPEC_DECODE_AL=2.86\n    NUM_SPEC_TOKENS=3\nfi\nSPEC_CONFIG=\"{{\\\"method\\\": \\\"mtp\\\", \\\"num_speculative_tokens\\\": $NUM_SPEC_TOKENS, \\\"rejection_sample_method\\\": \\\"synthetic\\\", \\\"synthetic_acceptance_length\\\": $SPEC_DECODE_AL}}\"\n")
        };
        let path = "benchmarks/single_node/agentic/dsv4_fp4_b300_vllm_mtp.sh";
        let o = check(&Context::new(&pr(path, &script("2.43"))));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        let drafts: Vec<_> = o.message.args["matches"].as_array().unwrap().iter().map(|m| m["draft"].clone()).collect();
        assert_eq!(drafts, [2, 3]);
        // The value of the other branch's draft length at this branch's is off the curve.
        let o = check(&Context::new(&pr(path, &script("2.86"))));
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.evidence, [format!("{path}:2")]);
        assert_eq!(o.message.args["findings"][0]["draft"], 2);
    }

    /// Every finding kind of `off_golden` renders in both languages (issue 28, done when).
    #[test]
    fn every_finding_kind_renders_in_both_languages() {
        let f = |kind: &str, extra: serde_json::Value| {
            let finding = with_fields(json!({"file": "x.sh", "line": 3, "kind": kind}), extra);
            Outcome::fail("off_golden").arg("findings", vec![finding])
        };
        let mut examples = vec![
            f("not_simulated", json!({})),
            f(
                "mismatch",
                json!({"al": 2.9, "golden": 2.86, "golden_file": "g.yaml", "mode": "thinking_on", "draft": 3}),
            ),
            f("no_draft_length", json!({})),
            f("no_curve", json!({"prefix": "dsv4", "method": "mtp", "mode": "thinking_on", "draft": 3})),
            f("unknown_model", json!({})),
            f("non_agentic", json!({})),
        ];
        for why in ["missing", "not_text", "too_deep", "external_recipe", "not_a_launcher"] {
            examples.push(f("unreachable", json!({"reference": "s.sh", "via": "bash", "why": why})));
        }
        crate::checks::tests_support::assert_every_kind_renders(11, "off_golden", &examples);
    }

    const AMD_MASTER: &str = "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp:\n  image: lmsysorg/sglang-rocm:v0.5.15\n  model: deepseek-ai/DeepSeek-V4-Pro\n  model-prefix: dsv4\n  runner: cluster:mi355x-amds\n  precision: fp4\n  framework: sglang-disagg\n  multinode: true\n  scenarios:\n    agentic-coding:\n    - search-space:\n      - spec-decoding: \"mtp\"\n        decode:\n          additional-settings:\n          - \"DECODE_NODES=1\"\n          - \"DECODE_MTP_SIZE=3\"\n";
    const AMD_LAUNCHER: &str = "benchmarks/multi_node/agentic/dsv4_fp4_mi355x_sglang-disagg.sh";

    /// #2309's shape: the launcher sets no knob; it runs submit.sh → job.slurm → server.sh →
    /// server_sglang.sh, whose `case "${MODEL_NAME}:${DECODE_MTP_SIZE}"` table sets the AL, and
    /// the row's `DECODE_MTP_SIZE=3` picks the arm.
    fn amd_chain(al_at_3: &str) -> Evidence {
        let changelog =
            "@@ -1,1 +1,3 @@\n x\n+- config-keys:\n+  - dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp\n";
        let mut e = pr(AMD_LAUNCHER, "# ── MTP ──\nexport DECODE_MTP_SIZE=\"${DECODE_MTP_SIZE:-0}\"\ncd \"$GITHUB_WORKSPACE/benchmarks/multi_node/amd_utils\" || exit 1\nJOB_ID=$(bash ./submit.sh $PREFILL_NODES)\n");
        e = crate::checks::tests_support::with_change(e, "perf-changelog.yaml", changelog);
        e.head.insert("configs/amd-master.yaml", AMD_MASTER);
        e.head.insert("benchmarks/multi_node/amd_utils/submit.sh", "sbatch \"$(dirname \"$0\")/job.slurm\"\n");
        e.head.insert("benchmarks/multi_node/amd_utils/job.slurm", "RUN_FILE=\"server.sh\"\n");
        e.head.insert("benchmarks/multi_node/amd_utils/server.sh", "source \"$WS_PATH/server_sglang.sh\"\n");
        let server = format!("if [[ \"$DECODE_MTP_SIZE\" -gt 0 ]]; then\n    mtp_config=\"--speculative-num-steps ${{decode_mtp_size}}\"\nfi\nDSV4_GOLDEN_AL=\"\"\ncase \"${{MODEL_NAME}}:${{DECODE_MTP_SIZE}}\" in\n    *DeepSeek-V4*:1) DSV4_GOLDEN_AL=1.85 ;;\n    *DeepSeek-V4*:2) DSV4_GOLDEN_AL=1.00 ;;\n    *DeepSeek-V4*:3) DSV4_GOLDEN_AL={al_at_3} ;;\nesac\nDECODE_SIM_ACC_ENV=\"SGLANG_SIMULATE_ACC_LEN=${{DSV4_GOLDEN_AL}} SGLANG_SIMULATE_ACC_METHOD=match-expected\"\n");
        e.head.insert("benchmarks/multi_node/amd_utils/server_sglang.sh", server.as_str());
        e
    }

    #[test]
    fn the_launchers_call_chain_sets_the_al_in_a_case_table_keyed_by_the_rows_draft_length() {
        let o = check(&Context::new(&amd_chain("2.86")));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["matches"][0]["file"], "benchmarks/multi_node/amd_utils/server_sglang.sh");
        assert_eq!(o.message.args["matches"][0]["draft"], 3);
        assert_eq!(o.message.args["matches"].as_array().map(Vec::len), Some(1), "only the arm the row runs");
        let o = check(&Context::new(&amd_chain("2.49")));
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.evidence, ["benchmarks/multi_node/amd_utils/server_sglang.sh:8"]);
        // A chain whose server script is missing is unverifiable, naming it.
        let mut e = amd_chain("2.86");
        e.head.insert("benchmarks/multi_node/amd_utils/job.slurm", "bash ./server_gone.sh\n");
        let o = check(&Context::new(&e));
        assert_eq!(o.message.args["findings"][0]["kind"], "unreachable", "{o:?}");
        assert_eq!(o.message.args["findings"][0]["reference"], "benchmarks/multi_node/amd_utils/server_gone.sh");
    }

    /// Issue 17 item 4: an image bump (changelog only) reaches the config's unchanged agentic
    /// launcher; it is judged, not N/A.
    #[test]
    fn an_image_bump_judges_the_unchanged_launcher_of_the_affected_config() {
        let mut e = amd_chain("2.49");
        e.files.retain(|f| f.filename == "perf-changelog.yaml");
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert_eq!(o.message.args["findings"][0]["kind"], "mismatch");
        let mut e = amd_chain("2.86");
        e.files.retain(|f| f.filename == "perf-changelog.yaml");
        assert_eq!(check(&Context::new(&e)).status, Status::Pass);
        e.files.clear();
        assert_eq!(check(&Context::new(&e)).status, Status::NotApplicable, "no affected config, no change");
    }
}
