//! Check 3 — Upstream recipe (spec 30 Check 3 (a)-(c); docs/decisions.md D15, R11-R14): every
//! affected vLLM/SGLang production serving configuration is documented by a merged upstream
//! recipe or cookbook pull request (or a published page) linked from the additional detail
//! section, and that upstream content covers the config's production-useful settings.
//!
//! (a) links: full URLs and short refs (`sgl-project/sglang#47394`) alike;
//! (b) merged: from the collected upstream PR fact, never inferred;
//! (c) coverage: the collected upstream content (PR files at the merge commit, published page
//!     text) is tied to each config by the model it names; every setting of every role and
//!     variant (`domain::launch::settings`) that is not informational
//!     (`checks/data/03-serving-settings.toml`) must be stated there with its values, or given a
//!     derivation rule, or excluded by name in the detail section. Unreadable content FAILs.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use serde_json::{json, Value as Json};

use super::{reason, Context, Outcome};
use crate::domain::checklist_template::Topic;
use crate::domain::launch::{self, ConfigLaunch, RoleSettings, Setting, SettingKind};
use crate::domain::upstream_links::{upstream_links, LinkKind, UpstreamLink, RECIPE_REPOSITORIES};
use crate::evidence::{Fact, UpstreamContent};
use crate::intake::signoff::Signoff;
use crate::pr::affected::affected_configs;
use crate::pr::configs::AffectedConfig;
use crate::pr::settings::{effective_settings, launch_of};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Engine {
    Vllm,
    Sglang,
}

impl Engine {
    /// The engine a framework runs (`domain::frameworks`, decision TD7), when it is one whose
    /// documentation this check knows.
    fn of_framework(framework: &str) -> Option<Engine> {
        match crate::domain::frameworks::engine_of(framework) {
            Some("vllm") => Some(Engine::Vllm),
            Some("sglang") => Some(Engine::Sglang),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Engine::Vllm => "vLLM",
            Engine::Sglang => "SGLang",
        }
    }

    /// What its upstream documentation is called (the catalog words it per language).
    fn documentation(self) -> &'static str {
        match self {
            Engine::Vllm => "recipe",
            Engine::Sglang => "cookbook",
        }
    }

    /// Upstream PR repository, the path its PR must touch, and the published-page prefix.
    fn upstream(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Engine::Vllm => ("vllm-project/recipes", "", "https://recipes.vllm.ai/"),
            Engine::Sglang => ("sgl-project/sglang", "docs/cookbook/", "https://docs.sglang.io/cookbook/"),
        }
    }

    fn owns(self, link: &UpstreamLink) -> bool {
        let (repo, _, page) = self.upstream();
        match &link.kind {
            LinkKind::Pull { repo: r, .. } => r == repo,
            LinkKind::Page => link.key.starts_with(page),
        }
    }
}

/// Most linked PRs one verdict waits for (issue 25 item 4).
pub const MAX_AWAITED: usize = 3;

/// The linked upstream recipe PRs a REJECTED verdict waits for (issue 25 item 4): when Check 3
/// is its only FAIL and every problem of that row is a linked recipe PR still open or a draft
/// (`owner/repo`, number). Empty otherwise, or when more than [`MAX_AWAITED`] would be awaited.
pub fn awaited_pulls(verdict: &super::Verdict) -> Vec<(String, u64)> {
    let mut fails = verdict.with_status(super::Status::Fail);
    let (Some(row), None) = (fails.next(), fails.next()) else { return Vec::new() };
    if row.id != 3 || row.outcome.message.key != "not_documented" {
        return Vec::new();
    }
    let problems = row.outcome.message.args.get("problems").and_then(Json::as_array).cloned().unwrap_or_default();
    let mut awaited = Vec::new();
    for p in &problems {
        let open = p["kind"] == "not_merged" && matches!(p["state"].as_str(), Some("open" | "draft"));
        let link = p["url"].as_str().and_then(|url| upstream_links("", std::iter::once(url)).into_iter().next());
        match (open, link.map(|l| l.kind)) {
            (true, Some(LinkKind::Pull { repo, number })) if RECIPE_REPOSITORIES.contains(&repo.as_str()) => {
                awaited.push((repo, number));
            }
            _ => return Vec::new(),
        }
    }
    awaited.dedup();
    if awaited.len() > MAX_AWAITED {
        return Vec::new();
    }
    awaited
}

/// How settings are classified (`checks/data/03-serving-settings.toml`).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Classes {
    informational: Vec<InformationalGroup>,
    sweep_variables: Vec<String>,
    master_variables: BTreeMap<String, String>,
    /// Search-space key → the value it takes where no row of the config sets it.
    #[serde(default)]
    master_defaults: BTreeMap<String, String>,
    markers: Markers,
    /// Groups of flag spellings an engine treats as one setting (`--tp` is `--tensor-parallel-size`).
    aliases: Vec<Vec<String>>,
    /// Keys of a JSON flag value that are InferenceX-only benchmark controls, by flag.
    synthetic_keys: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct InformationalGroup {
    group: String,
    names: Vec<String>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Markers {
    derivation: Vec<String>,
    exclusion: Vec<String>,
}

const CLASSES_FILE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/checks/data/03-serving-settings.toml"));

fn classes() -> &'static Classes {
    static CLASSES: OnceLock<Classes> = OnceLock::new();
    // Built-in data; `tests::the_settings_data_file_loads` keeps it valid.
    CLASSES.get_or_init(|| toml::from_str(CLASSES_FILE).expect("checks/data/03-serving-settings.toml is valid"))
}

impl Classes {
    fn informational(&self, name: &str) -> Option<&str> {
        self.informational.iter().find(|g| g.names.iter().any(|n| n == name)).map(|g| g.group.as_str())
    }

    /// Every spelling of a setting: its own name first, then its aliases.
    fn spellings<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> {
        let group = self.aliases.iter().find(|g| g.iter().any(|n| n == name));
        std::iter::once(name).chain(group.into_iter().flatten().map(String::as_str).filter(move |n| *n != name))
    }

    /// `value` of flag `name` without its synthetic benchmark keys (`--speculative-config`'s
    /// `rejection_sample_method`, `synthetic_acceptance_length`): upstream documents the
    /// production configuration, which has none. Other values unchanged.
    fn without_synthetic_keys(&self, name: &str, value: &str) -> String {
        let Some(keys) = self.synthetic_keys.get(name) else { return value.to_owned() };
        match serde_json::from_str::<Json>(value) {
            Ok(Json::Object(mut fields)) if keys.iter().any(|k| fields.contains_key(k)) => {
                keys.iter().for_each(|k| {
                    fields.remove(k);
                });
                Json::Object(fields).to_string()
            }
            _ => value.to_owned(),
        }
    }

    /// Whether `value` derives from a sweep variable: `$CONC`, `${CONC…}`, or an arithmetic
    /// expansion that names it (`$((2 * CONC))`, where bash reads bare names as variables).
    fn names_sweep_variable(&self, value: &str) -> bool {
        let arithmetic: Vec<&str> = value.match_indices("$((").map(|(at, _)| &value[at..]).collect();
        self.sweep_variables.iter().any(|v| {
            value.contains(&format!("${v}"))
                || value.contains(&format!("${{{v}"))
                || arithmetic.iter().any(|expr| {
                    let expr = expr.find("))").map_or(*expr, |end| &expr[..end]);
                    expr.split(|c: char| !(is_name_char(c))).any(|name| name == v)
                })
        })
    }
}

/// Lowercase letters and digits only, so `Muse-Spark-Open` matches `MuseSparkOpen.mdx`.
fn squash(text: &str) -> String {
    text.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect()
}

/// The upstream content names the model (its repository name), in a file path or its text.
fn names_model(content: &UpstreamContent, model: &str) -> bool {
    let name = squash(model.rsplit('/').next().unwrap_or(model));
    !name.is_empty()
        && content.files.iter().any(|(path, text)| squash(path).contains(&name) || squash(text).contains(&name))
}

/// What the upstream text says about one setting: the values written after its name and
/// whether a line naming it gives a derivation rule. `None`: the name does not occur.
#[derive(Debug, Default, PartialEq)]
struct Stated {
    values: BTreeSet<String>,
    rule: bool,
}

/// Longest value read after a setting's name (upstream text is untrusted and goes into the report).
const MAX_VALUE_CHARS: usize = 64;

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

/// Longest quoted or bracketed value read (a JSON override such as `--hf-overrides '{…}'`).
const MAX_QUOTED_CHARS: usize = 512;

/// A setting's value as the upstream text writes it: a quoted string up to its closing quote, a
/// JSON object or array up to its closing bracket, else one word. Never past the line.
fn read_value(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(quote @ ('"' | '\'' | '`')) => {
            let inner: String =
                chars.clone().take_while(|c| *c != quote && *c != '\n').take(MAX_QUOTED_CHARS).collect();
            if inner.starts_with(['{', '[']) {
                inner
            } else {
                // A quoted word (`"0.85"`, `"$TP"`, `"rc,sm,cuda_ipc"`): the word inside.
                word(&inner, ";)]}<|")
            }
        }
        Some('{' | '[') => {
            let mut depth = 0usize;
            let mut out = String::new();
            for c in text.chars().take(MAX_QUOTED_CHARS) {
                if c == '\n' {
                    break;
                }
                out.push(c);
                match c {
                    '{' | '[' => depth += 1,
                    '}' | ']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
            out
        }
        _ => word(text, "\"'`;)]}<|"),
    }
}

/// One word of `text`, up to whitespace or a `stops` character: a comma list without spaces is
/// one value (`NCCL_IB_HCA=mlx5_0,mlx5_1`, `UCX_TLS=rc,sm`); a comma that ends a clause
/// (`--tp 8, and`) does not belong to it.
fn word(text: &str, stops: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let ends_clause = c == ',' && chars.peek().is_none_or(|n| n.is_whitespace() || stops.contains(*n) || *n == ',');
        if c.is_whitespace() || stops.contains(c) || ends_clause || out.chars().count() == MAX_VALUE_CHARS {
            break;
        }
        out.push(c);
    }
    out
}

/// A placeholder a cookbook writes for per-parallelism values, `<0.95 on DEP4, 0.92 on DEP8>`:
/// each alternative's value (`0.95`, `0.92`). `None` when the text is no such placeholder.
fn alternatives(text: &str) -> Option<Vec<String>> {
    let line = text.strip_prefix('<')?.lines().next()?;
    let inner = &line[..line.find('>')?];
    let values: Vec<String> =
        inner.split([',', ';']).map(|part| word(part.trim(), "\"'`;)]}<|")).filter(|v| !v.is_empty()).collect();
    (!values.is_empty()).then_some(values)
}

fn stated(text: &str, setting: &Setting) -> Option<Stated> {
    let mut forms = Vec::new();
    for name in classes().spellings(&setting.name) {
        forms.push((name.to_owned(), false));
        let bare = name.trim_start_matches('-');
        if bare != name {
            forms.push((bare.to_owned(), true));
            forms.push((bare.replace('-', "_"), true));
            // vLLM's argument parser takes `--kv_offloading_backend` for `--kv-offloading-backend`
            // (InferenceX's `dsv4_fp4_mi355x_vllm_mtp.sh:134-137` writes it so).
            if bare.contains('-') {
                forms.push((format!("--{}", bare.replace('-', "_")), false));
            }
        }
    }
    let markers = &classes().markers.derivation;
    let mut out: Option<Stated> = None;
    for (form, needs_separator) in forms {
        for (at, _) in text.match_indices(&form) {
            let before = text[..at].chars().next_back();
            let rest = &text[at + form.len()..];
            if before.is_some_and(is_name_char) || rest.chars().next().is_some_and(is_name_char) {
                continue;
            }
            let after = rest.trim_start_matches([' ', '\t']);
            let separated = after.starts_with(['=', ':']);
            if needs_separator && !separated {
                continue;
            }
            let found = out.get_or_insert_with(Stated::default);
            let after = after.trim_start_matches(['=', ':']).trim_start_matches([' ', '\t']);
            let values = alternatives(after).unwrap_or_else(|| vec![read_value(after)]);
            for value in &values {
                let value = value.trim_end_matches('.');
                if !value.is_empty() && !value.starts_with("--") {
                    found.values.insert(value.to_owned());
                }
            }
            let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let line_end = rest.find('\n').map_or(text.len(), |i| at + form.len() + i);
            let line = text[line_start..line_end].to_ascii_lowercase();
            found.rule |= markers.iter().any(|m| line.contains(m.as_str()));
        }
    }
    out
}

/// Whether the upstream text names `setting` and writes `value`, an expression the verifier
/// cannot evaluate, as the launcher does (quotes and spacing aside): the rule that derives the
/// value is stated (`--chunked-prefill-size $((8192 * TP))`).
fn states_expression(text: &str, setting: &Setting, value: &str) -> bool {
    let plain = |s: &str| s.replace(['"', '\''], "").split_whitespace().collect::<Vec<_>>().join(" ");
    let value = plain(value);
    !value.is_empty() && stated(text, setting).is_some() && plain(&text.replace("\\\n", " ")).contains(&value)
}

fn same_value(a: &str, b: &str) -> bool {
    let clean = |s: &str| s.trim().trim_matches(['"', '\'']).to_owned();
    let (a, b) = (clean(a), clean(b));
    let json = |s: &str| serde_json::from_str::<serde_json::Value>(s).ok().filter(|v| v.is_object() || v.is_array());
    a == b
        || matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y)
        || matches!((json(&a), json(&b)), (Some(x), Some(y)) if x == y)
}

/// `8192/16384`, or `0.86–0.96` for several numbers.
fn show_values(values: &BTreeSet<String>) -> String {
    let numbers: Option<Vec<(f64, &String)>> = values.iter().map(|v| v.parse::<f64>().ok().map(|n| (n, v))).collect();
    match numbers {
        Some(mut n) if n.len() > 2 => {
            n.sort_by(|a, b| a.0.total_cmp(&b.0));
            format!("{}–{}", n[0].1, n[n.len() - 1].1)
        }
        Some(mut n) => {
            n.sort_by(|a, b| a.0.total_cmp(&b.0));
            n.iter().map(|(_, v)| v.as_str()).collect::<Vec<_>>().join("/")
        }
        None => values.iter().take(8).cloned().collect::<Vec<_>>().join("/"),
    }
}

pub(super) fn show_concurrencies(c: &BTreeSet<i64>) -> String {
    match (c.first(), c.last()) {
        (Some(a), Some(b)) if a == b => format!("c{a}"),
        (Some(a), Some(b)) => format!("c{a}–c{b}"),
        _ => String::new(),
    }
}

/// Lines of the detail section that exclude a setting as InferenceX-only, by name.
fn exclusion_lines<'d>(detail: &'d str, name: &'d str) -> impl Iterator<Item = &'d str> + 'd {
    let markers = &classes().markers.exclusion;
    detail.lines().filter(move |line| {
        let lower = line.to_ascii_lowercase();
        line.contains(name) && markers.iter().any(|m| lower.contains(m.as_str()))
    })
}

fn excluded(detail: &str, name: &str) -> bool {
    exclusion_lines(detail, name).next().is_some()
}

/// Whether `line` names `value` as a whole token (`0.9` is not in `0.95`).
fn names_value(line: &str, value: &str) -> bool {
    let boundary = |c: Option<char>| c.is_none_or(|c| !(is_name_char(c) || c == '.'));
    line.match_indices(value)
        .any(|(at, _)| boundary(line[..at].chars().next_back()) && boundary(line[at + value.len()..].chars().next()))
}

/// What the detail section excludes of a setting (issue 33 item 4): the values its exclusion
/// lines name, when they name some (`--mem-fraction-static 0.96 at c64 is InferenceX-only`
/// excludes 0.96, not 0.9); the whole setting when they name none. Empty: nothing excluded.
fn excluded_values(detail: &str, name: &str, values: &BTreeSet<String>) -> BTreeSet<String> {
    let lines: Vec<&str> = exclusion_lines(detail, name).collect();
    if lines.is_empty() {
        return BTreeSet::new();
    }
    let named: BTreeSet<String> = (values.iter())
        .filter(|v| v.as_str() != "true" && lines.iter().any(|line| names_value(&line.replacen(name, "", 1), v)))
        .cloned()
        .collect();
    if named.is_empty() {
        values.clone()
    } else {
        named
    }
}

#[derive(Default)]
struct Coverage {
    uncovered: Vec<Json>,
    /// Values on the serving path the verifier cannot evaluate (`$(…)`, a variable no row or
    /// assignment binds): `{name, value, at}`; coverage cannot be judged for them.
    unresolvable: Vec<Json>,
    covered: usize,
    /// (name, class id of the data file, or `sweep`).
    informational: BTreeSet<(String, String)>,
    excluded: BTreeSet<String>,
}

/// Judges every setting of one role against the tied upstream text.
fn judge(settings: &RoleSettings, launch: &ConfigLaunch, text: &str, detail: &str, out: &mut Coverage) {
    let classes = classes();
    for setting in settings.settings.values() {
        // The launch model's class (decision LM5): harness settings never count; `unknown`
        // ones do (fail closed: they may reach the engine process).
        let flag = setting.kind == SettingKind::Flag;
        if launch::class::class_of(&setting.name, flag) == launch::Class::Harness {
            out.informational.insert((setting.name.clone(), "harness".to_owned()));
            continue;
        }
        if let Some(group) = classes.informational(&setting.name) {
            out.informational.insert((setting.name.clone(), group.to_owned()));
            continue;
        }
        let mut values = BTreeSet::new();
        let mut unresolvable = Vec::new();
        for value in &setting.values {
            let master = classes.master_variables.iter().find(|(var, _)| value == &format!("${var}"));
            let space = master.and_then(|(_, key)| {
                let default = || classes.master_defaults.get(key).map(|d| BTreeSet::from([d.clone()]));
                launch.space.get(key).cloned().or_else(default)
            });
            match space {
                Some(space) => values.extend(space),
                None if classes.names_sweep_variable(value) => {}
                None if !launch::is_resolved(value) => unresolvable.push(value.clone()),
                None => {
                    values.insert(classes.without_synthetic_keys(&setting.name, value));
                }
            }
        }
        // A value upstream states as written is stated with the rule that derives it (3.e).
        unresolvable.retain(|value| !states_expression(text, setting, value));
        if !unresolvable.is_empty() && !excluded(detail, &setting.name) {
            for value in unresolvable {
                out.unresolvable.push(json!({"name": setting.name, "value": value, "at": setting.at}));
            }
        }
        if values.is_empty() {
            out.informational.insert((setting.name.clone(), "sweep".to_owned()));
            continue;
        }
        let excluded = excluded_values(detail, &setting.name, &values);
        if !excluded.is_empty() && excluded.len() == values.len() {
            out.excluded.insert(setting.name.clone());
            continue;
        }
        if !excluded.is_empty() {
            out.excluded.insert(format!("{} {}", setting.name, show_values(&excluded)));
            values.retain(|v| !excluded.contains(v));
        }
        let found = stated(text, setting);
        let missing: BTreeSet<String> = match &found {
            None => values.clone(),
            Some(s) if s.rule => BTreeSet::new(),
            Some(s) => values
                .iter()
                .filter(|v| {
                    // Upstream's value compared as the head's: without synthetic benchmark keys.
                    let stated = |w: &String| same_value(v, &classes.without_synthetic_keys(&setting.name, w));
                    v.as_str() != "true" && !v.contains('$') && !s.values.iter().any(stated)
                })
                .cloned()
                .collect(),
        };
        if missing.is_empty() {
            out.covered += 1;
            continue;
        }
        // Concurrencies are named where they narrow the scope: a setting only some points set
        // ("(c28–c40)"), a missing value only some points use ("253 at c10–c24").
        let narrower = |c: &BTreeSet<i64>| {
            if c.is_empty() || c == &settings.concurrencies {
                String::new()
            } else {
                show_concurrencies(c)
            }
        };
        let missing_at: BTreeSet<i64> =
            missing.iter().flat_map(|v| setting.value_concurrencies.get(v).into_iter().flatten().copied()).collect();
        let missing_at =
            if missing_at == setting.concurrencies { String::new() } else { show_concurrencies(&missing_at) };
        out.uncovered.push(json!({
            "name": setting.name,
            "kind": setting.kind,
            "values": show_values(&values),
            "missing": show_values(&missing),
            "partial": missing.len() < values.len(),
            "missing_at": missing_at,
            "concurrencies": narrower(&setting.concurrencies),
            "stated": found.map(|s| show_values(&s.values)).unwrap_or_default(),
            "at": setting.at,
        }));
    }
}

/// A recipe link whose content can be judged, with how the report names it.
struct Usable<'e> {
    link: &'e UpstreamLink,
    /// `{short, kind, merged_at, files}`, rendered by the catalog in both languages.
    label: Json,
    content: &'e UpstreamContent,
}

fn file_names(content: &UpstreamContent) -> String {
    content.files.keys().map(|p| p.rsplit('/').next().unwrap_or(p)).collect::<Vec<_>>().join(", ")
}

/// The recipe-coverage item (T15) of the checklist template in force at the PR's base, when it
/// asks for single-node recipes only (issue 28 item 6): upstream's template up to the Aug-2026
/// prompt reads "Verified that every single-node vLLM/SGLang recipe in this PR is documented"
/// (`docs/PR_REVIEW_CHECKLIST.md:28` at `2719ad8c`, since #2210; "the single-node recipes are
/// similar" from #1886), and the prompt of that era makes
/// multi-node/disagg/Dynamo submissions N/A (spec 30 §6 Check 3 Applicability, Aug-2026/V15a).
/// From V15b the item asks for every production serving configuration, Dynamo included. An
/// unreadable template or one without the item keeps the newest scope (fail closed).
fn single_node_item(cx: &Context) -> Option<(String, u32)> {
    let (path, template) = cx.template().as_ref().ok()?;
    let item = template.items.iter().find(|i| i.topic == Some(Topic::T15))?;
    item.normalized.contains("single-node").then(|| (path.clone(), item.line))
}

/// A configuration the single-node era leaves out: multi-node, disaggregated or Dynamo
/// (spec 30 §6 Check 3 Applicability, Aug-2026: `multinode: true`, `dynamo-*`, `*-disagg`).
fn multi_node_or_disagg(c: &AffectedConfig) -> bool {
    c.multinode || c.framework.starts_with("dynamo-") || c.framework.ends_with("-disagg")
}

pub fn check(cx: &Context) -> Outcome {
    let ev = cx.evidence;
    let configs = match affected_configs(cx) {
        Ok(c) => c,
        Err(error) => return Outcome::unreadable(reason("what_master_configs"), error),
    };
    let era = single_node_item(cx);
    let in_scope = |c: &&AffectedConfig| era.is_none() || !multi_node_or_disagg(c);
    let mut by_engine: BTreeMap<Engine, Vec<&AffectedConfig>> = BTreeMap::new();
    for c in configs.iter().filter(in_scope) {
        if let Some(engine) = Engine::of_framework(&c.framework) {
            by_engine.entry(engine).or_default().push(c);
        }
    }
    if let (true, Some((template, line))) = (by_engine.is_empty(), &era) {
        let served = configs.iter().filter(|c| Engine::of_framework(&c.framework).is_some());
        let keys: Vec<&str> = served.map(|c| c.key.as_str()).collect();
        if !keys.is_empty() {
            return Outcome::na("single_node_era")
                .arg("configs", keys)
                .arg("template", template.as_str())
                .arg("line", *line)
                .evidence(format!("{template}:{line}"));
        }
    }
    if by_engine.is_empty() {
        let scope: serde_json::Value = if configs.is_empty() {
            reason("no_master_change").into()
        } else {
            configs.iter().map(|c| format!("{} ({})", c.key, c.framework)).collect::<Vec<_>>().join(", ").into()
        };
        return Outcome::na("no_serving_config").arg("scope", scope);
    }
    let detail = cx.detail();
    let links = cx.signoff().as_ref().map(Signoff::recipe_links).unwrap_or_default();
    let mut problems = Vec::new();
    let mut good = Vec::new();
    let mut documented = Vec::new();
    let mut coverage = Coverage::default();
    for (engine, keys) in &by_engine {
        let (repo, required_path, _) = engine.upstream();
        let mine: Vec<&UpstreamLink> = links.iter().filter(|l| engine.owns(l)).collect();
        if mine.is_empty() {
            let keys: Vec<&str> = keys.iter().map(|c| c.key.as_str()).collect();
            problems.push(json!({"kind": "no_link", "engine": engine.name(), "configs": keys, "expected": format!("https://github.com/{repo}")}));
            continue;
        }
        let mut usable = Vec::new();
        let mut elsewhere = Vec::new();
        let mut blocked = false;
        for link in mine {
            let content = ev.upstream.contents.get(&link.key);
            let merged_at = match &link.kind {
                LinkKind::Page => None,
                LinkKind::Pull { .. } => match ev.upstream.pulls.get(&link.key) {
                    Some(Fact::Ok(pull)) => match &pull.merged_at {
                        Some(_)
                            if !required_path.is_empty()
                                && !pull.files.iter().any(|f| f.starts_with(required_path)) =>
                        {
                            elsewhere.push(link);
                            continue;
                        }
                        Some(at) => Some(at.clone()),
                        None => {
                            let state = if pull.draft {
                                "draft"
                            } else if pull.state == "open" {
                                "open"
                            } else {
                                "closed"
                            };
                            problems.push(json!({"kind": "not_merged", "url": link.key, "state": state}));
                            blocked = true;
                            continue;
                        }
                    },
                    Some(Fact::Unavailable(reason)) => {
                        problems.push(json!({"kind": "unverifiable", "url": link.key, "reason": reason}));
                        blocked = true;
                        continue;
                    }
                    None => {
                        problems.push(json!({"kind": "unverifiable", "url": link.key, "reason": null}));
                        blocked = true;
                        continue;
                    }
                },
            };
            match content {
                Some(Fact::Ok(content)) => {
                    let label = json!({
                        "short": link.short(),
                        "kind": if merged_at.is_some() { "pull" } else { "page" },
                        "merged_at": merged_at.clone().unwrap_or_default(),
                        "files": file_names(content),
                    });
                    good.push(label.clone());
                    usable.push(Usable { link, label, content });
                }
                Some(Fact::Unavailable(reason)) => {
                    problems.push(json!({"kind": "content_unavailable", "url": link.key, "reason": reason}));
                    blocked = true;
                }
                None => {
                    problems.push(json!({"kind": "content_unavailable", "url": link.key, "reason": null}));
                    blocked = true;
                }
            }
        }
        if usable.is_empty() {
            if !blocked {
                for link in elsewhere {
                    problems.push(json!({"kind": "wrong_place", "url": link.key, "expected": required_path}));
                }
            }
            continue;
        }
        for config in keys {
            judge_config(cx, config, &usable, detail, &mut problems, &mut documented, &mut coverage);
        }
    }
    if !problems.is_empty() {
        return Outcome::fail("not_documented").arg("problems", problems).evidence(ev.signoff.url.clone());
    }
    Outcome::pass("merged")
        .arg("links", good)
        .arg("configs", documented)
        .arg("covered", coverage.covered)
        .arg(
            "informational",
            coverage
                .informational
                .into_iter()
                .map(|(name, class)| json!({"name": name, "class": class}))
                .collect::<Vec<_>>(),
        )
        .arg("excluded", coverage.excluded.into_iter().collect::<Vec<_>>())
        .evidence(ev.signoff.url.clone())
}

fn judge_config(
    cx: &Context,
    config: &AffectedConfig,
    usable: &[Usable],
    detail: &str,
    problems: &mut Vec<Json>,
    documented: &mut Vec<String>,
    coverage: &mut Coverage,
) {
    let key = config.key.as_str();
    let launch = match launch_of(cx, config) {
        Ok(e) => e,
        Err(reason) => {
            problems.push(json!({"kind": "settings_unknown", "config": key, "reason": Json::from(reason)}));
            return;
        }
    };
    let tied: Vec<&Usable> = usable.iter().filter(|u| names_model(u.content, &launch.model)).collect();
    if tied.is_empty() {
        let links: Vec<String> = usable.iter().map(|u| u.link.short()).collect();
        problems.push(json!({"kind": "not_tied", "config": key, "model": launch.model, "links": links}));
        return;
    }
    let scopes = match effective_settings(launch) {
        Ok(r) => r,
        Err(reason) => {
            problems.push(json!({"kind": "settings_unknown", "config": key, "reason": Json::from(reason)}));
            return;
        }
    };
    let text: String =
        tied.iter().flat_map(|u| u.content.files.values()).map(String::as_str).collect::<Vec<_>>().join("\n");
    let label: Vec<&Json> = tied.iter().map(|u| &u.label).collect();
    let before = problems.len();
    let mut covered = 0;
    for scope in scopes {
        let role = &scope.settings;
        let mut found = Coverage::default();
        judge(role, launch, &text, detail, &mut found);
        covered += found.covered;
        coverage.covered += found.covered;
        if !found.unresolvable.is_empty() {
            problems.push(json!({
                "kind": "unresolvable",
                "config": key,
                "source": role.source,
                "role": role.role,
                "variant": scope.row,
                "settings": found.unresolvable,
            }));
        }
        coverage.informational.extend(found.informational);
        coverage.excluded.extend(found.excluded);
        if !found.uncovered.is_empty() {
            problems.push(json!({
                "kind": "uncovered",
                "config": key,
                "documentation": Engine::of_framework(&config.framework).map_or("recipe", Engine::documentation),
                "source": role.source,
                "role": role.role,
                "variant": scope.row,
                "concurrencies": show_concurrencies(&role.concurrencies),
                "links": label,
                "settings": found.uncovered,
            }));
        }
    }
    // No PASS without something checked (issue 33 item 3): settings were read, but none is one
    // upstream must state; the sources a maintainer must open are named.
    if problems.len() == before && covered == 0 {
        let sources: BTreeSet<&str> = scopes.iter().map(|s| s.settings.source.as_str()).collect();
        problems.push(json!({"kind": "nothing_checked", "config": key, "sources": sources}));
    }
    if problems.len() == before {
        documented.push(key.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{english, evidence, with_change};
    use crate::checks::Status;
    use crate::evidence::{Evidence, UpstreamPull};

    const MASTER: &str = "qwen3.5-fp8-mi355x-sglang:\n  image: lmsysorg/sglang:v1\n  model: Qwen/Qwen3.5-397B-A17B-FP8\n  model-prefix: qwen3.5\n  runner: mi355x\n  precision: fp8\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-list: [4] }\n";
    const SCRIPT_PATH: &str = "benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_mi355x_sglang.sh";
    const SCRIPT: &str = "#!/usr/bin/env bash\nexport SGLANG_USE_AITER=1\nif [[ $CONC -ge 64 ]]; then MEM=0.9; else MEM=0.85; fi\npython3 -m sglang.launch_server --model-path $MODEL --tp $TP \\\n  --mem-fraction-static $MEM --max-running-requests $CONC --port $PORT \\\n  --attention-backend aiter\n";
    const COOKBOOK: &str = "# Qwen3.5-397B-A17B on MI355X\n\n```bash\nSGLANG_USE_AITER=1 python3 -m sglang.launch_server --model Qwen/Qwen3.5-397B-A17B-FP8 --tp 8 \\\n  --attention-backend aiter --mem-fraction-static 0.85\n```\nAt 64 concurrent requests and more use `--mem-fraction-static 0.9`.\n";

    fn pr(detail: &str) -> Evidence {
        let mut e = with_change(evidence(), "configs/amd-master.yaml", "@@ -1,1 +1,1 @@\n+x\n");
        e.head.insert("configs/amd-master.yaml", MASTER);
        e.head.insert(SCRIPT_PATH, SCRIPT);
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

    fn content(path: &str, text: &str) -> Fact<UpstreamContent> {
        Fact::Ok(UpstreamContent { source: "test".into(), files: [(path.to_owned(), text.to_owned())].into() })
    }

    const URL: &str = "https://github.com/sgl-project/sglang/pull/47394";
    const MDX: &str = "docs/cookbook/qwen3.5.mdx";

    fn merged(e: &mut Evidence, text: &str) {
        e.upstream.pulls.insert(URL.into(), pull("closed", Some("2026-10-30T05:24:00Z"), &[MDX]));
        e.upstream.contents.insert(URL.into(), content(MDX, text));
    }

    fn kinds(o: &Outcome) -> Vec<String> {
        o.message.args["problems"]
            .as_array()
            .map_or(Vec::new(), |p| p.iter().map(|p| p["kind"].as_str().unwrap_or_default().to_owned()).collect())
    }

    #[test]
    fn the_settings_data_file_loads() {
        let c = classes();
        assert_eq!(c.informational("--port"), Some("harness"));
        for group in &c.informational {
            assert!(
                ["harness", "results", "synthetic"].contains(&group.group.as_str()),
                "the catalog names {}",
                group.group
            );
        }
        assert_eq!(c.informational("--chunked-prefill-size"), None, "production-useful since V15b");
        assert!(c.names_sweep_variable("$CONC") && c.names_sweep_variable("${ISL}") && !c.names_sweep_variable("$TP"));
    }

    #[test]
    fn a_verdict_waits_only_for_open_recipe_prs_that_are_its_only_failure() {
        let row = |id: u8, status: Status, problems: Json| crate::checks::CheckResult {
            id,
            outcome: Outcome::new(status, "not_documented").arg("problems", problems),
        };
        let verdict = |results: Vec<crate::checks::CheckResult>| crate::checks::Verdict {
            word: crate::checks::VerdictWord::Rejected,
            results,
            performance: Default::default(),
        };
        let open = json!([{"kind": "not_merged", "url": URL, "state": "open"}]);
        let awaited =
            awaited_pulls(&verdict(vec![row(3, Status::Fail, open.clone()), row(14, Status::Warn, json!([]))]));
        assert_eq!(awaited, [("sgl-project/sglang".to_owned(), 47394)]);
        let draft = json!([{"kind": "not_merged", "url": URL, "state": "draft"}]);
        assert_eq!(awaited_pulls(&verdict(vec![row(3, Status::Fail, draft)])).len(), 1);
        // Another FAIL, a closed PR, or any other problem of Check 3: nothing to wait for.
        assert!(awaited_pulls(&verdict(vec![row(3, Status::Fail, open.clone()), row(12, Status::Fail, json!([]))]))
            .is_empty());
        let closed = json!([{"kind": "not_merged", "url": URL, "state": "closed"}]);
        assert!(awaited_pulls(&verdict(vec![row(3, Status::Fail, closed)])).is_empty());
        let mixed = json!([{"kind": "not_merged", "url": URL, "state": "open"}, {"kind": "no_link", "engine": "vLLM"}]);
        assert!(awaited_pulls(&verdict(vec![row(3, Status::Fail, mixed)])).is_empty());
        let elsewhere =
            json!([{"kind": "not_merged", "url": "https://github.com/example/other/pull/1", "state": "open"}]);
        assert!(awaited_pulls(&verdict(vec![row(3, Status::Fail, elsewhere)])).is_empty());
    }

    #[test]
    fn short_refs_and_urls_are_the_same_link_and_other_repos_are_not_recipe_links() {
        let links = upstream_links(
            "Cookbook PR: sgl-project/sglang#47394, also SGL-Project/sglang#47394 and foo/bar#3; vllm-project/recipes#88",
            [format!("{URL}/files#diff"), "https://docs.sglang.io/cookbook/qwen3.5#tp8".into(), "https://example.com/x".into()]
                .iter()
                .map(String::as_str),
        );
        let keys: Vec<&str> = links.iter().map(|l| l.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "https://docs.sglang.io/cookbook/qwen3.5",
                "https://github.com/sgl-project/sglang/pull/47394",
                "https://github.com/vllm-project/recipes/pull/88"
            ]
        );
        assert_eq!(links[1].short(), "sglang#47394");
    }

    #[test]
    fn a_merged_cookbook_that_states_every_setting_passes() {
        let mut e = pr("Cookbook PR: sgl-project/sglang#47394");
        merged(&mut e, COOKBOOK);
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["covered"], 4, "{o:?}");
        let info = o.message.args["informational"].to_string();
        assert!(info.contains(r#"{"name":"--port","class":"harness"}"#), "{info}");
        assert!(info.contains(r#"{"name":"--max-running-requests","class":"sweep"}"#), "{info}");
    }

    /// Issue 33 item 3: a value the verifier cannot evaluate is named with its `file:line` and
    /// expression, never skipped; a launch whose settings are all informational checked
    /// nothing and FAILs naming its script.
    #[test]
    fn an_unevaluable_value_or_nothing_to_compare_fails_naming_what_to_open() {
        let mut e = pr("Cookbook PR: sgl-project/sglang#47394");
        merged(&mut e, COOKBOOK);
        e.head.insert(SCRIPT_PATH, SCRIPT.replace("else MEM=0.85; fi", "else MEM=$(python3 pick.py); fi"));
        let o = check(&Context::new(&e));
        assert_eq!((o.status, kinds(&o)), (Status::Fail, vec!["unresolvable".to_owned()]), "{o:?}");
        let s = &o.message.args["problems"][0]["settings"][0];
        assert_eq!((&s["name"], &s["value"]), (&json!("--mem-fraction-static"), &json!("$(python3 pick.py)")));
        assert!(s["at"].as_str().is_some_and(|at| at.starts_with(SCRIPT_PATH)), "{s}");
        let [en, zh] = crate::checks::tests_support::assert_renders(3, &o);
        assert!(en.contains("open benchmarks/") && zh.contains("请查看 benchmarks/"), "{en}\n{zh}");

        let bare = "python3 -m sglang.launch_server --model-path $MODEL --port $PORT --max-running-requests $CONC\n";
        e.head.insert(SCRIPT_PATH, bare);
        let o = check(&Context::new(&e));
        assert_eq!((o.status, kinds(&o)), (Status::Fail, vec!["nothing_checked".to_owned()]), "{o:?}");
        assert_eq!(o.message.args["problems"][0]["sources"], json!([SCRIPT_PATH]));
    }

    /// PM5, from the real-PR corpus: a value computed from the concurrency (`$((2 * CONC))`,
    /// #2580) is a sweep value like `$CONC`; one upstream writes as the launcher does
    /// (`$((8192 * TP))`, #2600) is stated with its rule; a search-space key no row sets takes the
    /// schema's default (`$DCP_SIZE` is 1, #2621); a file under the harness's `$RESULT_DIR` is
    /// result plumbing (#2590).
    #[test]
    fn computed_values_are_sweep_values_stated_rules_or_defaults() {
        let c = classes();
        assert!(c.names_sweep_variable("$((2 * CONC))") && c.names_sweep_variable("$((2*CONC/TP))"));
        assert!(c.names_sweep_variable("$RESULT_DIR/mooncake_config.json"));
        assert!(!c.names_sweep_variable("$((8192 * TP))") && !c.names_sweep_variable("$((CONCURRENCY))"));
        assert_eq!(c.master_defaults.get("dcp-size").map(String::as_str), Some("1"));
        let script = |value: &str| {
            SCRIPT.replace(
                "--attention-backend aiter\n",
                &format!("--attention-backend aiter --chunked-prefill-size {value}\n"),
            )
        };
        let mut e = pr("Cookbook PR: sgl-project/sglang#47394");
        e.head.insert(SCRIPT_PATH, script("$((8192 * TP))"));
        let stating = |v: &str| {
            COOKBOOK.replace(
                "--mem-fraction-static 0.85\n",
                &format!("--mem-fraction-static 0.85 \\\n  --chunked-prefill-size \"{v}\"\n"),
            )
        };
        merged(&mut e, &stating("$((8192 * TP))"));
        assert_eq!(check(&Context::new(&e)).status, Status::Pass, "upstream states the rule as written");
        merged(&mut e, &stating("$((4096 * TP))"));
        let o = check(&Context::new(&e));
        assert_eq!(kinds(&o), ["unresolvable"], "another expression states another value: {o:?}");
    }

    /// Issue 33 "Done when", the seed's published case with its launcher rendering the
    /// engine's arguments from the recipe (`ARGS=$(python3 render_args.py --recipe …)`, PM10):
    /// the recipe's settings are judged, so the cookbook's gaps FAIL as uncovered (the seed's
    /// `--hicache-size 253`), never as unreadable or nothing checked; a cookbook that states
    /// them passes.
    #[test]
    fn a_launcher_rendering_its_arguments_from_a_recipe_is_judged_on_the_recipe() {
        const RECIPE_PATH: &str = "benchmarks/single_node/recipes/qwen3.5-mi355x.yaml";
        const RECIPE: &str = "base:\n  schema: 2\n  name: q\n  resources: {gpu_type: mi355x, gpus_per_node: 8}\n  engine: sglang\n  roles:\n    agg:\n      nodes: 1\n      workers: 1\n      args: {tensor-parallel-size: 8, mem-fraction-static: 0.85, attention-backend: aiter}\noverride_tp8_c10_hicache:\n  roles:\n    agg:\n      args: {hicache-size: 253}\n  benchmark: {env: {CONC: '10', KV_OFFLOADING: dram}}\noverride_tp8_c40_hicache:\n  roles:\n    agg:\n      args: {hicache-size: 310}\n  benchmark: {env: {CONC: '40', KV_OFFLOADING: dram}}\n";
        let script = format!(
            "ARGS=$(python3 utils/render_args.py --recipe {RECIPE_PATH})\npython3 -m sglang.launch_server --model-path $MODEL $ARGS --port $PORT\n"
        );
        let mut e = pr("Cookbook PR: sgl-project/sglang#47394");
        e.head.insert(SCRIPT_PATH, script.as_str());
        e.head.insert(RECIPE_PATH, RECIPE);
        let cookbook = "# Qwen3.5-397B-A17B on MI355X\n\n```bash\npython3 -m sglang.launch_server --model Qwen/Qwen3.5-397B-A17B-FP8 --tp 8 \\\n  --attention-backend aiter --mem-fraction-static 0.85 --hicache-size 310\n```\n";
        merged(&mut e, cookbook);
        let o = check(&Context::new(&e));
        assert_eq!((o.status, kinds(&o)), (Status::Fail, vec!["uncovered".to_owned()]), "{o:?}");
        let missing = &o.message.args["problems"][0]["settings"][0];
        assert_eq!((&missing["name"], &missing["missing"]), (&json!("--hicache-size"), &json!("253")), "{o:?}");
        merged(
            &mut e,
            &cookbook.replace(
                "--hicache-size 310",
                "--hicache-size 310\n```\nAt 10 concurrent requests use `--hicache-size 253`.\n```",
            ),
        );
        assert_eq!(check(&Context::new(&e)).status, Status::Pass);
    }

    /// PM7: a recipe the launcher reads from the srt-slurm checkout it clones is not in the
    /// evidence; Check 3 FAILs naming the checkout and the recipe, never judging nothing.
    #[test]
    fn a_recipe_of_the_launchers_srt_slurm_checkout_is_named_unread() {
        const MASTER: &str = "qwen3.5-fp8-gb300-dynamo-sglang:\n  image: img\n  model: Qwen/Qwen3.5-397B-A17B-FP8\n  model-prefix: qwen3.5\n  runner: gb300-nv\n  precision: fp8\n  framework: dynamo-sglang\n  multinode: true\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - conc-list: [4]\n        prefill:\n          additional-settings:\n          - \"CONFIG_FILE=recipes/sglang/qwen.yaml\"\n";
        let mut e = pr("Cookbook PR: sgl-project/sglang#47394");
        e.head.insert("configs/amd-master.yaml", MASTER);
        e.head.insert("configs/runners.yaml", "labels:\n  mi355x:\n  - mi355x-amd_0\n");
        e.head.insert(
            "runners/launch_gb300-nv.sh",
            "git clone https://github.com/NVIDIA/srt-slurm.git s\nsrtctl apply -f \"$CONFIG_FILE\"\n",
        );
        merged(&mut e, COOKBOOK);
        let o = check(&Context::new(&e));
        assert_eq!((o.status, kinds(&o)), (Status::Fail, vec!["settings_unknown".to_owned()]), "{o:?}");
        let reason = &o.message.args["problems"][0]["reason"];
        assert_eq!(reason["$reason"], "external_recipe_unread", "{o:?}");
        assert_eq!(
            (&reason["checkout"], &reason["path"]),
            (&json!("NVIDIA/srt-slurm@HEAD"), &json!("recipes/sglang/qwen.yaml"))
        );
        let [en, zh] = crate::checks::tests_support::assert_renders(3, &o);
        assert!(en.contains("NVIDIA/srt-slurm@HEAD") && zh.contains("NVIDIA/srt-slurm@HEAD"), "{en}\n{zh}");
    }

    /// EX3: a recipe of the launcher's srt-slurm checkout that the collector fetched is judged
    /// like a recipe of the repository, its settings named at `owner/repo@ref:path:line`; a
    /// setting the cookbook lacks FAILs, a covered recipe PASSes; a fetch that failed FAILs
    /// naming the checkout and why.
    #[test]
    fn a_fetched_recipe_of_the_srt_slurm_checkout_is_judged() {
        const MASTER: &str = "qwen3.5-fp8-gb300-dynamo-sglang:\n  image: img\n  model: Qwen/Qwen3.5-397B-A17B-FP8\n  model-prefix: qwen3.5\n  runner: gb300-nv\n  precision: fp8\n  framework: dynamo-sglang\n  multinode: true\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - conc-list: [4]\n        prefill:\n          additional-settings:\n          - \"CONFIG_FILE=recipes/sglang/qwen.yaml\"\n";
        const RECIPE: &str = "schema: 2\nname: q\nengine: sglang\nroles:\n  agg:\n    nodes: 1\n    workers: 1\n    args: {tensor-parallel-size: 8, attention-backend: aiter, mem-fraction-static: 0.85}\n    env: {SGLANG_USE_AITER: '1'}\n";
        const CHECKOUT: &str = "NVIDIA/srt-slurm@v1.0.50";
        const PATH: &str = "recipes/sglang/qwen.yaml";
        let with = |recipe: Fact<String>| {
            let mut e = pr("Cookbook PR: sgl-project/sglang#47394");
            e.head.insert("configs/amd-master.yaml", MASTER);
            e.head.insert("configs/runners.yaml", "labels:\n  mi355x:\n  - mi355x-amd_0\n");
            e.head.insert(
                "runners/launch_gb300-nv.sh",
                "git clone --branch v1.0.50 --single-branch https://github.com/NVIDIA/srt-slurm.git s\nsrtctl apply -f \"$CONFIG_FILE\"\n",
            );
            e.upstream.checkouts.insert(CHECKOUT.into(), [(PATH.to_owned(), recipe)].into());
            merged(&mut e, COOKBOOK);
            check(&Context::new(&e))
        };
        let o = with(Fact::Ok(RECIPE.into()));
        assert_eq!(o.status, Status::Pass, "{o:?}");

        let uncovered = RECIPE.replace("mem-fraction-static: 0.85}", "mem-fraction-static: 0.85, hicache-size: 253}");
        let o = with(Fact::Ok(uncovered));
        assert_eq!((o.status, kinds(&o)), (Status::Fail, vec!["uncovered".to_owned()]), "{o:?}");
        let missing = &o.message.args["problems"][0]["settings"][0];
        assert_eq!((&missing["name"], &missing["missing"]), (&json!("--hicache-size"), &json!("253")), "{o:?}");
        assert_eq!(missing["at"], format!("{CHECKOUT}:{PATH}:8"), "{o:?}");

        let why = "not found: http://x/repos/NVIDIA/srt-slurm/contents/recipes/sglang/qwen.yaml?ref=v1.0.50: HTTP 404";
        let o = with(Fact::Unavailable(why.into()));
        assert_eq!((o.status, kinds(&o)), (Status::Fail, vec!["settings_unknown".to_owned()]), "{o:?}");
        let reason = &o.message.args["problems"][0]["reason"];
        assert_eq!(reason["$reason"], "external_recipe_unavailable", "{o:?}");
        assert_eq!((&reason["checkout"], &reason["reason"]), (&json!(CHECKOUT), &json!(why)));
        let [en, zh] = crate::checks::tests_support::assert_renders(3, &o);
        assert!(en.contains("HTTP 404") && zh.contains("HTTP 404") && zh.contains(CHECKOUT), "{en}\n{zh}");
    }

    /// PM11: an AMD disaggregated config's settings come from the model table its job renders
    /// them from; a table without the model's entry FAILs naming the table and the names tried,
    /// and a table flag the cookbook lacks is uncovered at its table line.
    #[test]
    fn an_amd_disaggregated_config_is_judged_on_its_model_table() {
        const MASTER: &str = "dsr1-fp8-mi355x-sglang-disagg:\n  image: img\n  model: deepseek-ai/DeepSeek-R1-0528\n  model-prefix: dsr1\n  runner: mi355x-disagg\n  precision: fp8\n  framework: sglang-disagg\n  multinode: true\n  disagg: true\n  kv-p2p-transfer: mori\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - conc-list: [4]\n        prefill: {num-worker: 1, tp: 8, ep: 1, dp-attn: false}\n        decode: {num-worker: 1, tp: 8, ep: 1, dp-attn: false}\n";
        const SCRIPT: &str = "cd \"$GITHUB_WORKSPACE/benchmarks/multi_node/amd_utils\" || exit 1\nJOB_ID=$(bash ./submit.sh $PREFILL_NODES)\n";
        const TABLE: &str = "DeepSeek-R1-0528-DI:\n  base_flags: \"--attention-backend aiter --mem-fraction-static 0.85 --hicache-size 253\"\n";
        // Written like upstream's runners.yaml and runners/launch_mi355x-amds.sh.
        const LAUNCHER: &str = "SCRIPT_NAME=\"${EXP_NAME%%_*}_${PRECISION}_mi355x_${FRAMEWORK}.sh\"\nJOB_ID=$(bash \"benchmarks/multi_node/${SCRIPT_NAME}\")\n";
        let dir = "benchmarks/multi_node/amd_utils";
        let mut e = pr("Cookbook PR: sgl-project/sglang#47394");
        e.head.insert("configs/amd-master.yaml", MASTER);
        e.head.insert("configs/runners.yaml", "labels:\n  mi355x-disagg:\n  - mi355x-amds_06\n");
        e.head.insert("runners/launch_mi355x-amds.sh", LAUNCHER);
        e.head.insert("benchmarks/multi_node/dsr1_fp8_mi355x_sglang-disagg.sh", SCRIPT);
        e.head.insert(format!("{dir}/job.slurm"), "MODELS_YAML=\"$(pwd)/models.yaml\"\n");
        e.head.insert(format!("{dir}/models.yaml"), "DeepSeek-V3:\n  base_flags: \"--tp 8\"\n");
        let cookbook = "# DeepSeek-R1-0528 on MI355X\n\n```bash\npython3 -m sglang.launch_server --model deepseek-ai/DeepSeek-R1-0528 --tp 8 \\\n  --attention-backend aiter --mem-fraction-static 0.85\n```\n";
        merged(&mut e, cookbook);
        let o = check(&Context::new(&e));
        assert_eq!((o.status, kinds(&o)), (Status::Fail, vec!["settings_unknown".to_owned()]), "{o:?}");
        let reason = &o.message.args["problems"][0]["reason"];
        assert_eq!(reason["$reason"], "disagg_entry_absent", "{o:?}");
        assert_eq!(reason["tried"], json!("DeepSeek-R1-0528-DI, DeepSeek-R1-0528"));
        let [en, zh] = crate::checks::tests_support::assert_renders(3, &o);
        assert!(en.contains("models.yaml") && zh.contains("models.yaml"), "{en}\n{zh}");

        e.head.insert(format!("{dir}/models.yaml"), TABLE);
        let o = check(&Context::new(&e));
        let both = vec!["uncovered".to_owned(), "uncovered".to_owned()];
        assert_eq!((o.status, kinds(&o)), (Status::Fail, both), "prefill and decode both run it: {o:?}");
        let missing = &o.message.args["problems"][0]["settings"];
        assert!(
            missing.to_string().contains("--hicache-size") && missing.to_string().contains("models.yaml:2"),
            "{o:?}"
        );

        e.head.insert(format!("{dir}/models.yaml"), TABLE.replace(" --hicache-size 253", "").as_str());
        assert_eq!(check(&Context::new(&e)).status, Status::Pass);
    }

    /// Issue 33 item 4: the synthetic-acceptance keys of `--speculative-config` are InferenceX
    /// benchmark controls; the rest of the JSON is compared with the cookbook.
    #[test]
    fn synthetic_acceptance_keys_are_not_compared_with_the_cookbook() {
        let spec = r#"'{"method": "mtp", "num_speculative_tokens": 3, "rejection_sample_method": "synthetic", "synthetic_acceptance_length": 2.49}'"#;
        let script = SCRIPT.replace(
            "--attention-backend aiter\n",
            &format!("--attention-backend aiter --speculative-config {spec}\n"),
        );
        let stated = |tokens: u8| {
            COOKBOOK.replace(
            "--mem-fraction-static 0.85\n",
            &format!("--mem-fraction-static 0.85 \\\n  --speculative-config '{{\"method\": \"mtp\", \"num_speculative_tokens\": {tokens}}}'\n"),
        )
        };
        let mut e = pr("Cookbook PR: sgl-project/sglang#47394");
        e.head.insert(SCRIPT_PATH, script.as_str());
        merged(&mut e, &stated(3));
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        merged(&mut e, &stated(2));
        let o = check(&Context::new(&e));
        assert_eq!(kinds(&o), ["uncovered"], "{o:?}");
        let missing = o.message.args["problems"][0]["settings"][0]["missing"].as_str().unwrap_or_default().to_owned();
        assert!(missing.contains("num_speculative_tokens") && !missing.contains("synthetic"), "{missing}");
    }

    /// Issue 33 item 4: `<0.95 on DEP4, 0.92 on DEP8>` states both values, not the first only.
    #[test]
    fn per_parallelism_placeholders_state_every_alternative() {
        assert_eq!(alternatives("<0.95 on DEP4, 0.92 on DEP8> for"), Some(vec!["0.95".to_owned(), "0.92".to_owned()]));
        assert_eq!(alternatives("0.95"), None);
        assert_eq!(alternatives("<unclosed\n0.9>"), None);
        let mut e = pr("Cookbook PR: sgl-project/sglang#47394");
        let placeholder = |v: &str| {
            COOKBOOK
                .replace(
                    "--mem-fraction-static 0.85\n",
                    &format!("--mem-fraction-static <{v} on TP8 below 64, 0.85 on TP8>\n"),
                )
                .replace("At 64 concurrent requests and more use `--mem-fraction-static 0.9`.\n", "")
        };
        merged(&mut e, &placeholder("0.9"));
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        merged(&mut e, &placeholder("0.95"));
        let o = check(&Context::new(&e));
        assert_eq!(kinds(&o), ["uncovered"], "{o:?}");
        assert_eq!(o.message.args["problems"][0]["settings"][0]["missing"], "0.9");
    }

    /// Issue 33 item 4: an exclusion that names a value excludes that value, not the flag.
    #[test]
    fn an_exclusion_naming_a_value_excludes_that_value_only() {
        let values: BTreeSet<String> = ["0.85".to_owned(), "0.9".to_owned()].into();
        let line = "`--mem-fraction-static 0.9` is InferenceX-only: it sizes the pool for the sweep.";
        assert_eq!(excluded_values(line, "--mem-fraction-static", &values), ["0.9".to_owned()].into());
        let whole = "`--mem-fraction-static` is InferenceX-only.";
        assert_eq!(excluded_values(whole, "--mem-fraction-static", &values), values);
        assert!(excluded_values("nothing here", "--mem-fraction-static", &values).is_empty());
        assert!(!names_value("0.95 on DEP4", "0.9"));

        let omitted = COOKBOOK
            .replace(" --mem-fraction-static 0.85", "")
            .replace("At 64 concurrent requests and more use `--mem-fraction-static 0.9`.\n", "");
        let mut e = pr(&format!("Cookbook PR: sgl-project/sglang#47394\n{line}"));
        merged(&mut e, &omitted);
        let o = check(&Context::new(&e));
        assert_eq!(kinds(&o), ["uncovered"], "0.85 is not excluded: {o:?}");
        assert_eq!(o.message.args["problems"][0]["settings"][0]["missing"], "0.85");
        let mut e = pr(&format!("Cookbook PR: sgl-project/sglang#47394\n{line}"));
        merged(&mut e, &COOKBOOK.replace("At 64 concurrent requests and more use `--mem-fraction-static 0.9`.\n", ""));
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert!(o.message.args["excluded"].to_string().contains("--mem-fraction-static 0.9"), "{o:?}");
    }

    /// Issue 24: the launch model's reading shares the verification's byte budget (charged once,
    /// for every file the config's launch reaches); past it the settings are unknown, naming the
    /// budget and the config (the test above passes within it).
    #[test]
    fn past_the_scan_budget_the_settings_are_unknown_naming_it() {
        let mut e = pr("Cookbook PR: sgl-project/sglang#47394");
        merged(&mut e, COOKBOOK);
        let within = Context::new(&e);
        within.charge_scan("earlier checks", crate::evidence::limits::MAX_SCAN_BYTES - SCRIPT.len()).unwrap();
        assert_eq!(check(&within).status, Status::Pass, "the script's bytes are charged once");
        let cx = Context::new(&e);
        cx.charge_scan("earlier checks", crate::evidence::limits::MAX_SCAN_BYTES - SCRIPT.len() + 1).unwrap();
        let o = check(&cx);
        assert_eq!((o.status, kinds(&o)), (Status::Fail, vec!["settings_unknown".to_owned()]), "{o:?}");
        let what = json!({"$reason": "launch_path_of", "key": "qwen3.5-fp8-mi355x-sglang"});
        assert_eq!(
            o.message.args["problems"][0]["reason"],
            json!({"$reason": "scan_budget_exceeded", "what": what, "budget": 33554432}),
        );
    }

    #[test]
    fn a_setting_or_a_value_the_content_omits_is_uncovered_with_its_values() {
        let mut e = pr("Cookbook PR: sgl-project/sglang#47394");
        merged(
            &mut e,
            &COOKBOOK
                .replace("At 64 concurrent requests and more use `--mem-fraction-static 0.9`.\n", "")
                .replace("--attention-backend aiter ", ""),
        );
        let o = check(&Context::new(&e));
        assert_eq!(kinds(&o), ["uncovered"], "{o:?}");
        let settings = &o.message.args["problems"][0]["settings"];
        assert_eq!(settings[0]["name"], "--attention-backend");
        assert_eq!(settings[0]["stated"], "");
        assert_eq!(settings[1]["name"], "--mem-fraction-static");
        assert_eq!(settings[1]["values"], "0.85/0.9");
        assert_eq!(settings[1]["missing"], "0.9");
        assert_eq!(settings[1]["stated"], "0.85");
        let link = &o.message.args["problems"][0]["links"][0];
        assert_eq!(
            (&link["short"], &link["merged_at"], &link["files"]),
            (&json!("sglang#47394"), &json!("2026-10-30T05:24:00Z"), &json!("qwen3.5.mdx"))
        );
    }

    #[test]
    fn a_derivation_rule_or_a_named_exclusion_covers_a_setting() {
        let rule = COOKBOOK.replace(
            "At 64 concurrent requests and more use `--mem-fraction-static 0.9`.",
            "--mem-fraction-static scales with concurrency: 0.85 below 64, 0.9 above.",
        );
        let mut e = pr("Cookbook PR: sgl-project/sglang#47394");
        merged(&mut e, &rule);
        assert_eq!(check(&Context::new(&e)).status, Status::Pass);
        let omitted = COOKBOOK
            .replace(" --mem-fraction-static 0.85", "")
            .replace("At 64 concurrent requests and more use `--mem-fraction-static 0.9`.\n", "");
        let mut e = pr("Cookbook PR: sgl-project/sglang#47394\n`--mem-fraction-static` is InferenceX-only: it sizes the KV pool for the sweep.");
        merged(&mut e, &omitted);
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["excluded"][0], "--mem-fraction-static");
        // A generic argument that does not name the setting excludes nothing (seed 004).
        let mut e = pr("Cookbook PR: sgl-project/sglang#47394\nThe memory fractions are per-concurrency selections, not a separate serving configuration.");
        merged(&mut e, &omitted);
        assert_eq!(kinds(&check(&Context::new(&e))), ["uncovered"]);
    }

    #[test]
    fn unreadable_content_an_untied_link_or_unknown_settings_fail() {
        let mut e = pr("Cookbook PR: sgl-project/sglang#47394");
        merged(&mut e, COOKBOOK);
        e.upstream.contents.insert(URL.into(), Fact::Unavailable("HTTP 502 (after 3 attempts)".into()));
        assert_eq!(kinds(&check(&Context::new(&e))), ["content_unavailable"]);
        e.upstream.contents.clear();
        assert_eq!(kinds(&check(&Context::new(&e))), ["content_unavailable"]);
        merged(&mut e, "# DeepSeek-R1 on B200\n--tp 8\n");
        assert_eq!(kinds(&check(&Context::new(&e))), ["not_tied"]);
        merged(&mut e, COOKBOOK);
        e.head.insert(SCRIPT_PATH, "echo no server here\n");
        assert_eq!(kinds(&check(&Context::new(&e))), ["settings_unknown"]);
        e.head.insert(SCRIPT_PATH.replace(".sh", ".txt"), SCRIPT);
        e.head.insert(SCRIPT_PATH, SCRIPT);
        e.head.insert("configs/amd-master.yaml", MASTER.replace("precision: fp8", "precision: fp4"));
        let o = check(&Context::new(&e));
        assert_eq!(kinds(&o), ["settings_unknown"]);
        assert!(english(&o.message.args["problems"][0]["reason"])
            .contains("no benchmark script or CONFIG_FILE recipe of `qwen3.5-fp8-mi355x-sglang`"));
    }

    #[test]
    fn an_unfetched_published_page_fails_and_a_fetched_one_is_judged() {
        let page = "https://docs.sglang.io/cookbook/qwen3.5";
        let e = pr(page);
        assert_eq!(kinds(&check(&Context::new(&e))), ["content_unavailable"], "a URL under the prefix is not trusted");
        let mut e = pr(page);
        e.upstream.contents.insert(page.into(), content("page", COOKBOOK));
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(
            (&o.message.args["links"][0]["short"], &o.message.args["links"][0]["kind"]),
            (&json!(page), &json!("page"))
        );
    }

    #[test]
    fn an_open_or_unverifiable_pr_fails() {
        let mut e = pr(&format!("Cookbook: {URL}"));
        e.upstream.pulls.insert(URL.into(), pull("open", None, &[MDX]));
        assert_eq!(kinds(&check(&Context::new(&e))), ["not_merged"]);
        e.upstream.pulls.insert(URL.into(), Fact::Unavailable("HTTP 502".into()));
        assert_eq!(kinds(&check(&Context::new(&e))), ["unverifiable"]);
        e.upstream.pulls.clear();
        assert_eq!(check(&Context::new(&e)).status, Status::Fail);
    }

    #[test]
    fn a_non_cookbook_sglang_pr_fails_only_without_a_cookbook_link() {
        let e = pr("Recipes are similar to the existing ones.");
        assert_eq!(kinds(&check(&Context::new(&e))), ["no_link"]);
        let kernel = "https://github.com/sgl-project/sglang/pull/47000";
        let mut e = pr(&format!("Kernel fix: {kernel}"));
        e.upstream
            .pulls
            .insert(kernel.into(), pull("closed", Some("2026-10-01T00:00:00Z"), &["python/sglang/srt/x.py"]));
        assert_eq!(kinds(&check(&Context::new(&e))), ["wrong_place"]);
        let mut e = pr(&format!("Kernel fix: {kernel}\nCookbook PR: sgl-project/sglang#47394"));
        e.upstream
            .pulls
            .insert(kernel.into(), pull("closed", Some("2026-10-01T00:00:00Z"), &["python/sglang/srt/x.py"]));
        merged(&mut e, COOKBOOK);
        assert_eq!(check(&Context::new(&e)).status, Status::Pass);
    }

    #[test]
    fn an_engine_alias_states_the_setting() {
        let tp = Setting {
            name: "--tensor-parallel-size".into(),
            kind: SettingKind::Flag,
            values: BTreeSet::new(),
            concurrencies: BTreeSet::new(),
            value_concurrencies: BTreeMap::new(),
            at: String::new(),
        };
        let found = stated("python3 -m sglang.launch_server --tp 8 --ep-size 8", &tp).unwrap();
        assert!(found.values.contains("8"));
        assert!(stated("python3 -m sglang.launch_server --tpx 8", &tp).is_none());
    }

    #[test]
    fn stated_values_are_bounded_and_read_in_every_written_form() {
        let setting = |name: &str| Setting {
            name: name.into(),
            kind: SettingKind::Flag,
            values: BTreeSet::new(),
            concurrencies: BTreeSet::new(),
            value_concurrencies: BTreeMap::new(),
            at: String::new(),
        };
        let long = format!("--hicache-size {}", "9".repeat(10_000));
        assert_eq!(
            stated(&long, &setting("--hicache-size")).unwrap().values.iter().next().unwrap().len(),
            MAX_VALUE_CHARS
        );
        let yaml = "sglang_config:\n  hicache_size: 310\n  mem-fraction-static: \"0.9\"\n";
        assert_eq!(stated(yaml, &setting("--hicache-size")).unwrap().values, ["310".to_string()].into());
        assert_eq!(stated(yaml, &setting("--mem-fraction-static")).unwrap().values, ["0.9".to_string()].into());
        assert_eq!(stated("use a larger hicache size", &setting("--hicache-size")), None, "prose is not a setting");
        let underscored = stated("--kv_offloading_backend native", &setting("--kv-offloading-backend"));
        assert_eq!(underscored.unwrap().values, ["native".to_string()].into());
        assert_eq!(stated("--hicache-size-ratio 2", &setting("--hicache-size")), None, "a longer flag is another flag");
        // A JSON value is read whole, quoted or not, and compared as JSON.
        let json = r#"--hf-overrides '{"rope_scaling": {"type": "yarn", "factor": 40}}' --tp 8"#;
        let read = stated(json, &setting("--hf-overrides")).unwrap().values;
        assert_eq!(read, [r#"{"rope_scaling": {"type": "yarn", "factor": 40}}"#.to_string()].into());
        assert!(same_value(read.first().unwrap(), r#"{"rope_scaling":{"factor":40,"type":"yarn"}}"#));
        assert!(!same_value(read.first().unwrap(), r#"{"rope_scaling":{"factor":4,"type":"yarn"}}"#));
        let bare =
            stated("--json-model-override-args {\"a\": [1, 2]} --x", &setting("--json-model-override-args")).unwrap();
        assert_eq!(bare.values, [r#"{"a": [1, 2]}"#.to_string()].into());
        assert_eq!(stated("--tp \"$TP\"", &setting("--tp")).unwrap().values, ["$TP".to_string()].into());
        // Comma lists are read whole, bare, quoted, in prose and in code blocks; a clause comma is not.
        let hca = "mlx5_0,mlx5_1,mlx5_2,mlx5_3".to_string();
        for text in [
            "```bash\nexport NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3\n```",
            "Set NCCL_IB_HCA=\"mlx5_0,mlx5_1,mlx5_2,mlx5_3\" on every node.",
            "use `NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3`, then launch",
        ] {
            assert_eq!(stated(text, &setting("NCCL_IB_HCA")).unwrap().values, [hca.clone()].into(), "{text}");
        }
        assert_eq!(
            stated("UCX_TLS='rc,sm,cuda_ipc' UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1", &setting("UCX_TLS")).unwrap().values,
            ["rc,sm,cuda_ipc".to_string()].into()
        );
        assert_eq!(
            stated("UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1", &setting("UCX_NET_DEVICES")).unwrap().values,
            ["mlx5_0:1,mlx5_1:1".to_string()].into()
        );
        assert_eq!(stated("run with --tp 8, then --ep 8", &setting("--tp")).unwrap().values, ["8".to_string()].into());
        let unclosed = format!("--hf-overrides '{{{}", "x".repeat(10_000));
        assert_eq!(
            stated(&unclosed, &setting("--hf-overrides")).unwrap().values.first().unwrap().len(),
            MAX_QUOTED_CHARS
        );
    }

    /// A single-node row naming a schema-2 recipe (newer master schema): one variant per point.
    const SRT_MASTER: &str = "qwen3.5-fp8-mi355x-sglang:\n  image: lmsysorg/sglang:v1\n  model: Qwen/Qwen3.5-397B-A17B-FP8\n  model-prefix: qwen3.5\n  runner: cluster:mi355x\n  precision: fp8\n  framework: sglang\n  multinode: false\n  scenarios:\n    agentic-coding:\n    - dram-utilization: 0.5\n      search-space:\n      - { tp: 4, ep: 4, kv-offloading: dram, kv-offload-backend: { name: hicache }, conc-list: [10, 40], srt-recipe: benchmarks/single_node/srt-slurm-recipes/q/agentic.yaml }\n";
    const SRT_RECIPE: &str = "base:\n  schema: 2\n  resources: {gpu_type: mi355x, gpus_per_node: 8}\n  engine: sglang\n  roles:\n    agg: {nodes: 1, workers: 1, args: {tensor-parallel-size: 8, attention-backend: aiter}}\noverride_tp4_c10:\n  roles:\n    agg: {gpus: 4, args: {tensor-parallel-size: 4, expert-parallel-size: 4, hicache-size: 253}}\n  benchmark: {env: {CONC: '10', KV_OFFLOADING: dram}}\noverride_tp4_c40:\n  roles:\n    agg: {gpus: 4, args: {tensor-parallel-size: 4, expert-parallel-size: 4, hicache-size: 310}, env: {HONOR: '1'}}\n  benchmark: {env: {CONC: '40', KV_OFFLOADING: dram}}\noverride_tp8_c4:\n  roles:\n    agg: {args: {hicache-size: 999}}\n  benchmark: {env: {CONC: '4', KV_OFFLOADING: none}}\n";

    #[test]
    fn srt_recipe_rows_are_judged_per_variant_and_name_it() {
        let mut e = pr("Cookbook PR: sgl-project/sglang#47394");
        e.head.insert("configs/amd-master.yaml", SRT_MASTER);
        e.head.insert("benchmarks/single_node/srt-slurm-recipes/q/agentic.yaml", SRT_RECIPE);
        merged(&mut e, "Qwen3.5-397B-A17B-FP8: `--tp 4 --ep 4 --attention-backend aiter --hicache-size 310`\n");
        let o = check(&Context::new(&e));
        assert_eq!(kinds(&o), ["uncovered"], "{o:?}");
        let p = &o.message.args["problems"][0];
        assert_eq!((&p["variant"], &p["concurrencies"]), (&json!("TP4/EP4 HiCache"), &json!("c10–c40")));
        let names: Vec<&str> = p["settings"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["--hicache-size", "HONOR"], "the TP8 variant's 999 is another row's");
        assert_eq!((&p["settings"][0]["missing"], &p["settings"][0]["missing_at"]), (&json!("253"), &json!("c10")));
        assert_eq!(p["settings"][1]["concurrencies"], "c40", "set by one point only");
        e.head.insert(
            "benchmarks/single_node/srt-slurm-recipes/q/agentic.yaml",
            SRT_RECIPE.replace("CONC: '40'", "CONC: '44'"),
        );
        assert_eq!(kinds(&check(&Context::new(&e))), ["settings_unknown"], "a point without a variant");
    }

    /// Issue 28 item 6: the multi-node scope follows the checklist in force at the base. Under
    /// upstream's template up to Aug 2026 ("every single-node vLLM/SGLang recipe", its
    /// `docs/PR_REVIEW_CHECKLIST.md:28`) a multi-node/disagg/Dynamo submission is N/A naming the
    /// item; under the production-serving wording (V15b) it is judged; single-node configs are
    /// judged in both eras.
    #[test]
    fn the_multi_node_scope_follows_the_template_in_force() {
        let template = include_str!("../../fixtures/bundles/green-sweep/base/docs/PR_REVIEW_CHECKLIST.md");
        let current =
            "Every affected vLLM/SGLang production serving configuration, Dynamo deployments included, is documented";
        assert!(template.contains(current));
        let single =
            template.replace(current, "Verified that every single-node vLLM/SGLang recipe in this PR is documented");
        let disagg = MASTER
            .replace("framework: sglang", "framework: sglang-disagg")
            .replace("multinode: false", "multinode: true");
        let run = |template: &str, master: &str| {
            let mut e = pr("");
            e.base.insert("docs/PR_REVIEW_CHECKLIST.md", template);
            e.head.insert("configs/amd-master.yaml", master);
            check(&Context::new(&e))
        };
        let o = run(&single, &disagg);
        assert_eq!((o.status, o.message.key.as_str()), (Status::NotApplicable, "single_node_era"), "{o:?}");
        assert_eq!(o.evidence, ["docs/PR_REVIEW_CHECKLIST.md:23"]);
        let [en, zh] = crate::checks::tests_support::assert_renders(3, &o);
        assert!(en.contains("asks for single-node vLLM/SGLang recipes only") && zh.contains("单机"), "{en}");
        assert_eq!(kinds(&run(template, &disagg)), ["no_link"], "V15b judges multi-node configs");
        assert_eq!(kinds(&run(&single, MASTER)), ["no_link"], "single-node configs are judged in both eras");
    }

    /// Every problem kind of `not_documented` renders in both languages, with both link kinds,
    /// both setting kinds and each optional part of an uncovered row (issue 28, done when).
    #[test]
    fn every_problem_kind_renders_in_both_languages() {
        let links = json!([{"kind": "pull", "short": "sglang#1", "merged_at": "2026-08-01T00:00:00Z", "files": "a.mdx"},
            {"kind": "page", "short": "recipes.vllm.ai/x", "merged_at": "", "files": ""}]);
        let setting = |kind: &str, missing_at: &str, partial: bool, stated: &str| {
            json!({"name": "--x", "kind": kind, "values": "1/2", "missing": "2", "partial": partial,
                "missing_at": missing_at, "concurrencies": "c8", "stated": stated, "at": "r.yaml:3"})
        };
        let uncovered = |documentation: &str, variant: serde_json::Value, role: &str| {
            json!({"kind": "uncovered", "config": "c", "documentation": documentation, "source": "r.yaml", "role": role,
                "variant": variant, "concurrencies": "c8–c16", "links": links,
                "settings": [setting("flag", "c8", false, "1"), setting("env", "", true, ""), setting("flag", "", false, "")]})
        };
        let problems = [
            json!({"kind": "no_link", "engine": "SGLang", "configs": ["c"], "expected": "https://github.com/sgl-project/sglang"}),
            json!({"kind": "not_merged", "url": "u", "state": "open"}),
            json!({"kind": "unverifiable", "url": "u", "reason": "r"}),
            json!({"kind": "content_unavailable", "url": "u", "reason": "r"}),
            json!({"kind": "not_tied", "config": "c", "links": ["u"], "model": "m"}),
            json!({"kind": "settings_unknown", "config": "c", "reason": "r"}),
            uncovered("cookbook", json!("TP4"), "frontend"),
            uncovered("recipe", json!("TP4"), "decode"),
            uncovered("recipe", serde_json::Value::Null, "prefill"),
            json!({"kind": "wrong_place", "url": "u", "expected": "docs/cookbook/"}),
            json!({"kind": "unresolvable", "config": "c", "source": "s.sh", "role": "aggregated", "variant": null,
                "settings": [{"name": "--x", "value": "$(cat a.json)", "at": "s.sh:4"}]}),
            json!({"kind": "unresolvable", "config": "c", "source": "r.yaml", "role": "decode", "variant": "TP4",
                "settings": [{"name": "--x", "value": "$A", "at": "r.yaml:4"}, {"name": "--y", "value": "$B", "at": "r.yaml:5"}]}),
            json!({"kind": "nothing_checked", "config": "c", "sources": ["s.sh"]}),
            json!({"kind": "nothing_checked", "config": "c", "sources": []}),
        ];
        let examples: Vec<Outcome> =
            problems.into_iter().map(|p| Outcome::fail("not_documented").arg("problems", vec![p])).collect();
        crate::checks::tests_support::assert_every_kind_renders(3, "not_documented", &examples);
    }

    #[test]
    fn vendor_frameworks_are_out_of_scope() {
        let mut e = pr("");
        e.head.insert("configs/amd-master.yaml", MASTER.replace("framework: sglang", "framework: atom"));
        assert_eq!(check(&Context::new(&e)).status, Status::NotApplicable);
    }
}
