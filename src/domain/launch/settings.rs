//! Effective serving settings of a vLLM/SGLang config (spec 30 Check 3(c)): the engine flags and
//! environment variables each role runs with, and every value each one takes across the recipe's
//! variants or the launcher's branches. Pure: the caller hands in file texts.
//!
//! Two sources:
//! - an SRT recipe: every variant (`override_*`, `zip_override_*[i]`, deep-merged with `base`),
//!   per role, `backend.<engine>_config.<role>` flags and `backend.<role>_environment`, or, in a
//!   schema-2 recipe, `roles.<role>.args` and `roles.<role>.env`; in both, the top-level
//!   `environment` of every worker, and a schema-2 router's `frontend.args`/`frontend.env`;
//! - a launcher script: the engine command (`sglang.launch_server`, `sglang serve`, `vllm serve`,
//!   vLLM's `api_server`), its flags, the variables they expand (every value a variable is
//!   assigned anywhere, branches included, and `${VAR:-default}`), exports and `VAR=x cmd`
//!   prefixes, scripts it sources first (inherited).
//!
//! A value that still names a variable after resolution is kept as written (`$CONC`): the
//! caller decides whether that variable is harness plumbing or a sweep range.

use std::collections::{BTreeMap, BTreeSet};

use super::shell::logical_lines;
use crate::domain::srt_recipe::{Recipe, RecipeError, RecipeFacts, Role, Selector, Variant};
use crate::yaml::{Node, Value};

/// Deepest chain of sourced scripts followed (a script sourcing itself stops here too).
const MAX_SOURCE_DEPTH: usize = 4;
/// Most values one variable is expanded to (a combinatorial script stays bounded).
const MAX_VALUES: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SettingKind {
    Flag,
    Env,
}

/// One setting and every value it takes in the scope it was read for.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Setting {
    /// `--flag` or `ENV_NAME`.
    pub name: String,
    pub kind: SettingKind,
    /// Values as written after resolution; a flag without a value is `true`.
    pub values: BTreeSet<String>,
    /// Concurrencies of the variants that set it (empty when unknown, e.g. a script).
    pub concurrencies: BTreeSet<i64>,
    /// Per value, the concurrencies of the variants that set it to that value (recipes only).
    pub value_concurrencies: BTreeMap<String, BTreeSet<i64>>,
    /// `file:line` where it was first read.
    pub at: String,
}

/// The settings of one role of one source (a recipe file or a launcher script).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RoleSettings {
    pub source: String,
    /// `aggregated`, `prefill`, `decode` or (schema-2 `frontend.args`) `frontend`.
    pub role: &'static str,
    /// Variants read (`base` excluded, as srtctl never runs it alone).
    pub variants: Vec<String>,
    /// Concurrencies of those variants.
    pub concurrencies: BTreeSet<i64>,
    pub settings: BTreeMap<String, Setting>,
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Agg => "aggregated",
        Role::Prefill => "prefill",
        Role::Decode => "decode",
    }
}

pub(super) fn scalar_text(node: &Node) -> Option<String> {
    match &node.value {
        Value::Null => None,
        Value::Seq(items) => Some(items.iter().filter_map(scalar_text).collect::<Vec<_>>().join(",")),
        Value::Map(_) => Some(node.to_json().to_string()),
        _ => node.key_text().map(|t| t.into_owned()),
    }
}

pub(super) fn add(
    settings: &mut BTreeMap<String, Setting>,
    name: String,
    kind: SettingKind,
    value: String,
    at: String,
) {
    let entry = settings.entry(name.clone()).or_insert_with(|| Setting {
        name,
        kind,
        values: BTreeSet::new(),
        concurrencies: BTreeSet::new(),
        value_concurrencies: BTreeMap::new(),
        at,
    });
    if entry.values.len() < MAX_VALUES {
        entry.values.insert(value);
    }
}

/// Per role, every setting of every variant `selector` picks (all variants when `None`).
pub fn from_recipe(recipe: &Recipe, selector: Option<&Selector>) -> Result<Vec<RoleSettings>, RecipeError> {
    from_variants(&recipe.file, &recipe.resolve(selector)?.variants)
}

/// Per role, every setting of the given resolved variants of recipe `file`, each value with the
/// concurrencies of the variants that set it. Schema-2 recipes keep flags in
/// `roles.<role>.args` and env in `roles.<role>.env`; schema 1 in
/// `backend.<engine>_config.<role>` and `backend.<role>_environment`; both in `environment`.
pub fn from_variants(file: &str, variants: &[Variant]) -> Result<Vec<RoleSettings>, RecipeError> {
    let mut roles: BTreeMap<&'static str, RoleSettings> = BTreeMap::new();
    for variant in variants {
        let config = &variant.config;
        let facts = RecipeFacts::read(config, file)?;
        let concurrencies: BTreeSet<i64> = facts.concurrencies.clone().unwrap_or_default().into_iter().collect();
        let label = if variant.selector.is_empty() { "plain".to_owned() } else { variant.selector.clone() };
        let at_path = |path: &[String]| path.iter().try_fold(config, |n, k| n.get(k));
        for role in [Role::Agg, Role::Prefill, Role::Decode] {
            let Some(flags) = at_path(&role.flags_path(facts.schema2, facts.backend)).and_then(Node::as_map) else {
                continue;
            };
            let name = role_name(role);
            let out = roles.entry(name).or_insert_with(|| RoleSettings {
                source: file.to_owned(),
                role: name,
                variants: Vec::new(),
                concurrencies: BTreeSet::new(),
                settings: BTreeMap::new(),
            });
            out.variants.push(label.clone());
            out.concurrencies.extend(&concurrencies);
            let at = |n: &Node| format!("{file}:{}", n.pos.line);
            let mut touched = Vec::new();
            for (key, value) in flags {
                let (Some(key), Some(text)) = (key.key_text(), scalar_text(value)) else { continue };
                if matches!(value.value, Value::Bool(false)) {
                    continue;
                }
                let flag = format!("--{}", key.replace('_', "-"));
                touched.push((flag.clone(), text.clone()));
                add(&mut out.settings, flag, SettingKind::Flag, text, at(value));
            }
            // The top-level `environment` reaches every worker in both schemas: srtctl's v1 -> v2
            // migration leaves it in place (srt-slurm `src/srtctl/core/migrate.py`).
            let env_maps = [at_path(&role.env_path(facts.schema2)), config.get("environment")];
            for env in env_maps.into_iter().flatten().filter_map(Node::as_map) {
                for (key, value) in env {
                    let (Some(key), Some(text)) = (key.key_text(), scalar_text(value)) else { continue };
                    touched.push((key.to_string(), text.clone()));
                    add(&mut out.settings, key.into_owned(), SettingKind::Env, text, at(value));
                }
            }
            for (name, value) in touched {
                if let Some(s) = out.settings.get_mut(&name) {
                    s.concurrencies.extend(&concurrencies);
                    s.value_concurrencies.entry(value).or_default().extend(&concurrencies);
                }
            }
        }
    }
    frontend_settings(file, variants, &mut roles);
    Ok(roles.into_values().collect())
}

/// Router/frontend settings of schema-2 variants (`frontend.args`, e.g. the sglang-router's
/// `policy: cache_aware`, and `frontend.env`): one `frontend` role, each value with its variants'
/// concurrencies.
fn frontend_settings(file: &str, variants: &[Variant], roles: &mut BTreeMap<&'static str, RoleSettings>) {
    for variant in variants {
        let config = &variant.config;
        if !super::srt_recipe::is_schema2(config) {
            continue;
        }
        let Some(frontend) = config.get("frontend") else { continue };
        let args = frontend.get("args").and_then(Node::as_map);
        let env = frontend.get("env").and_then(Node::as_map);
        if args.is_none() && env.is_none() {
            continue;
        }
        let concurrencies: BTreeSet<i64> = RecipeFacts::read(config, file)
            .ok()
            .and_then(|f| f.concurrencies)
            .unwrap_or_default()
            .into_iter()
            .collect();
        let out = roles.entry("frontend").or_insert_with(|| RoleSettings {
            source: file.to_owned(),
            role: "frontend",
            variants: Vec::new(),
            concurrencies: BTreeSet::new(),
            settings: BTreeMap::new(),
        });
        out.variants.push(variant.selector.clone());
        out.concurrencies.extend(&concurrencies);
        let flags = args.into_iter().flatten().map(|kv| (kv, SettingKind::Flag));
        for ((key, value), kind) in flags.chain(env.into_iter().flatten().map(|kv| (kv, SettingKind::Env))) {
            let (Some(key), Some(text)) = (key.key_text(), scalar_text(value)) else { continue };
            if kind == SettingKind::Flag && matches!(value.value, Value::Bool(false)) {
                continue;
            }
            let name = match kind {
                SettingKind::Flag => format!("--{}", key.replace('_', "-")),
                SettingKind::Env => key.into_owned(),
            };
            add(&mut out.settings, name.clone(), kind, text.clone(), format!("{file}:{}", value.pos.line));
            if let Some(s) = out.settings.get_mut(&name) {
                s.concurrencies.extend(&concurrencies);
                s.value_concurrencies.entry(text).or_default().extend(&concurrencies);
            }
        }
    }
}

/// Shell words of one logical line: quotes removed, `$VAR` kept as written. A backslash escapes
/// the next character outside quotes, and `"` or `\` inside double quotes (`"{\"a\": 1}"` is
/// `{"a": 1}`); `\$` stays escaped, so it is never read as a variable.
pub fn words(line: &str) -> Vec<String> {
    split_words(line, false)
}

/// [`words`], with a command substitution kept as one word (`$(python3 pick.py $CONC)`, its
/// double quotes dropped): how the launcher reader sees an assignment or a flag value, so a
/// value it cannot evaluate is named whole.
fn shell_words(line: &str) -> Vec<String> {
    split_words(line, true)
}

fn split_words(line: &str, substitutions: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        // A command substitution is one word, spaces inside it included, as the shell reads it
        // (`$(python3 pick.py "$CONC")`); its double quotes are dropped, as [`words`] drops them
        // (`source "$(dirname "$0")/x.sh"` reads `$(dirname $0)/x.sh` either way).
        if substitutions && c == '$' && quote != Some('\'') && chars.peek() == Some(&'(') {
            current.push(c);
            let mut depth = 0usize;
            for inner in chars.by_ref() {
                if inner != '"' {
                    current.push(inner);
                }
                match inner {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
            continue;
        }
        match (quote, c) {
            (None | Some('"'), '\\') => match chars.next() {
                Some(next) if next != '$' && (quote.is_none() || matches!(next, '"' | '\\' | '`')) => {
                    current.push(next);
                }
                next => {
                    current.push('\\');
                    current.extend(next);
                }
            },
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
                any = false;
            }
            (None, '#') if current.is_empty() && !any => break,
            (None, c) => current.push(c),
        }
    }
    if any || !current.is_empty() {
        out.push(current);
    }
    out
}

/// A heredoc a script writes to a file (`cat > $F << EOF` … `EOF`, `cat << EOF >> $F`).
#[derive(Debug, Clone)]
struct Heredoc {
    /// The line of the command that writes it.
    line: u32,
    /// The redirection target as written (`$EXTRA_CONFIG_FILE`).
    target: String,
    /// The first body line.
    body_line: u32,
    body: String,
}

/// Most heredoc bytes read from one script (bounded input).
const MAX_HEREDOC_BYTES: usize = 64 << 10;

/// Every heredoc of `text` and the lines its bodies span (which are data, not commands).
fn heredocs(text: &str) -> (Vec<Heredoc>, BTreeSet<u32>) {
    let (mut out, mut body_lines) = (Vec::new(), BTreeSet::new());
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        // Not a here-string (`<<<`), nor a shift inside arithmetic (`$(( 1 << 4 ))`).
        let Some(at) = line.find("<<").filter(|at| {
            let before = &line[..*at];
            !line[at + 2..].starts_with('<') && before.matches("((").count() <= before.matches("))").count()
        }) else {
            continue;
        };
        let rest = line[at + 2..].trim_start_matches('-').trim_start();
        let delimiter: String = rest
            .trim_start_matches(['\'', '"'])
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if delimiter.is_empty() {
            continue;
        }
        let words = split_words(line, false);
        let target = words.iter().enumerate().find_map(|(k, w)| match w.as_str() {
            ">" | ">>" => words.get(k + 1).cloned(),
            w if w.starts_with(">>") || (w.starts_with('>') && !w.starts_with(">&")) => {
                Some(w.trim_start_matches('>').to_owned())
            }
            _ => None,
        });
        let start = i;
        let mut body = String::new();
        while i < lines.len() && lines[i].trim() != delimiter {
            if body.len() < MAX_HEREDOC_BYTES {
                body.push_str(lines[i]);
                body.push('\n');
            }
            body_lines.insert(u32::try_from(i + 1).unwrap_or(u32::MAX));
            i += 1;
        }
        i += 1;
        let number = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        if let Some(target) = target.filter(|t| !t.is_empty()) {
            out.push(Heredoc { line: number(start), target, body_line: number(start + 1), body });
        }
    }
    (out, body_lines)
}

/// The heredocs a script writes, and its logical lines that are commands (heredoc bodies left
/// out).
fn script_commands(text: &str) -> (Vec<Heredoc>, Vec<(u32, String)>) {
    let (written, bodies) = heredocs(text);
    (written, logical_lines(text).into_iter().filter(|(line, _)| !bodies.contains(line)).collect())
}

/// A script's text read once: the heredocs it writes, its command lines with their shell words,
/// and its function bodies. Every config and row that runs or sources the same script reads
/// from this (decision TR2).
struct ParsedScript {
    written: Vec<Heredoc>,
    lines: Vec<(u32, String)>,
    /// [`shell_words`] of each of `lines`.
    words: Vec<Vec<String>>,
    bodies: Vec<(String, std::ops::RangeInclusive<u32>)>,
}

impl ParsedScript {
    fn of(text: &str) -> ParsedScript {
        let (written, lines) = script_commands(text);
        let words = lines.iter().map(|(_, l)| shell_words(l)).collect();
        ParsedScript { written, lines, words, bodies: function_bodies(text) }
    }
}

/// Most script text whose reading one thread keeps; past it the memo starts over.
const MAX_PARSED_BYTES: usize = 4 << 20;

/// The scripts one thread has read, and the bytes of their text.
#[derive(Default)]
struct Readings {
    by_text: std::collections::HashMap<String, std::rc::Rc<ParsedScript>>,
    bytes: usize,
}

thread_local! {
    /// A memo of a pure function of the text: the history tip's 262 scripts are 1.5 MB, and
    /// each was read again for every config and row that runs or sources it (`benchmark_lib.sh`
    /// by nearly every launcher).
    static PARSED: std::cell::RefCell<Readings> = Default::default();
}

/// The reading of `text`, from the memo when this thread read it before.
fn parsed(text: &str) -> std::rc::Rc<ParsedScript> {
    PARSED.with(|memo| {
        let mut memo = memo.borrow_mut();
        if let Some(found) = memo.by_text.get(text) {
            return found.clone();
        }
        let read = std::rc::Rc::new(ParsedScript::of(text));
        if text.len() > MAX_PARSED_BYTES {
            return read;
        }
        if memo.bytes + text.len() > MAX_PARSED_BYTES {
            *memo = Readings::default();
        }
        memo.bytes += text.len();
        memo.by_text.insert(text.to_owned(), read.clone());
        read
    })
}

fn is_var_name(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') && !s.as_bytes()[0].is_ascii_digit()
}

/// `NAME=value` → (NAME, value).
fn assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    is_var_name(name).then_some((name, value))
}

fn is_engine_command(words: &[String]) -> bool {
    let joined = words.join(" ");
    joined.contains("sglang.launch_server")
        || joined.contains("sglang serve")
        || joined.contains("vllm serve")
        || joined.contains("vllm.entrypoints.openai.api_server")
        // AMD's ATOM server (`python3 -m atom.entrypoints.openai_server`, the `*_atom.sh` launchers).
        || joined.contains("atom.entrypoints.openai_server")
        // TRT-LLM's server (`mpirun … trtllm-serve $MODEL …`, the `*_trt.sh` launchers).
        || words.iter().any(|w| w.ends_with("trtllm-serve"))
        // TileRT's decode server (`python -m tilert.pd_vllm.decode_server`, `tilert_utils/run_node.sh`).
        || joined.contains("tilert.pd_vllm.decode_server")
}

/// Variables of a script and the scripts it sources, with every value each is assigned.
#[derive(Debug, Default)]
struct Scope {
    vars: BTreeMap<String, BTreeSet<String>>,
    exports: BTreeMap<String, String>,
    /// Bash arrays (`EXTRA=(…)`, `EXTRA+=(…)`): the words of every assignment and append, all
    /// branches included, in file order, each with its line (`"${EXTRA[@]}"` in the engine
    /// command splices them). A function's `local` array is keyed `function:name`.
    arrays: BTreeMap<String, Vec<(String, u32)>>,
    /// Strings the script builds by appending (`SIZES+=","` in a loop): no value of theirs is
    /// known, so they stay as written (`$SIZES`), never their first literal.
    appended: BTreeSet<String>,
    /// Words of the commands read outside function bodies: the functions a sourced library
    /// defines bind variables only when one of these calls them.
    called: BTreeSet<String>,
    /// The workflow inputs the tests of the script decide on ([`serving_inputs`]).
    inputs: Vec<(String, String)>,
    /// Variables the script is handed by the script that runs it ([`from_script_with`]).
    inherited: BTreeSet<String>,
}

/// The functions `text` defines (`name() {`, `function name {`), each with the lines of its
/// body, the definition line through the `}` that closes it at the definition's indentation
/// (a one-line `f() { …; }` is its own line).
pub(super) fn function_bodies(text: &str) -> Vec<(String, std::ops::RangeInclusive<u32>)> {
    let lines = logical_lines(text);
    let mut out = Vec::new();
    for (i, (start, line)) in lines.iter().enumerate() {
        let indent = line.len() - line.trim_start().len();
        let code = line.trim();
        let code = code.strip_prefix("function ").unwrap_or(code);
        let Some((name, rest)) = code.split_once(['(', ' ', '{']) else { continue };
        let rest = rest.trim_start_matches([')', ' ', '(']);
        let defines = is_var_name(name) && (code.contains("()") || line.trim().starts_with("function "));
        if !defines || !(rest.is_empty() || rest.starts_with('{')) {
            continue;
        }
        if rest.starts_with('{') && rest.trim_end().ends_with('}') {
            out.push((name.to_owned(), *start..=*start));
            continue;
        }
        let end =
            lines[i + 1..].iter().find(|(_, l)| l.len() - l.trim_start().len() == indent && l.trim().starts_with('}'));
        out.push((name.to_owned(), *start..=end.map_or(u32::MAX, |(n, _)| *n)));
    }
    out
}

/// `NAME=(` / `NAME+=(` opening a bash array assignment → (NAME, the rest of the word).
fn array_open(word: &str) -> Option<(&str, &str)> {
    let (name, rest) = word.split_once('=')?;
    let name = name.strip_suffix('+').unwrap_or(name);
    let rest = rest.strip_prefix('(')?;
    is_var_name(name).then_some((name, rest))
}

/// Whether a command's words open a bash array (`CMD=(vllm serve …`, `local cmd=(…`): its items
/// are data until the closing `)`, whatever command they spell.
fn opens_array(words: &[String]) -> bool {
    words.iter().take(2).any(|w| array_open(w).is_some())
}

/// A `case` arm's pattern (`10)`, `*)`, `a|b)`): the commands after it start fresh.
fn is_case_pattern(word: &str) -> bool {
    word.len() > 1 && word.ends_with(')') && !word.contains(['=', '(', '$'])
}

impl Scope {
    fn inputs(&self) -> Vec<(&str, &str)> {
        self.inputs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }

    /// The engine command's words, each with its line, with `${NAME[@]}` of a known array
    /// spliced in (the items at the lines they are written on; in a `function`, its `local`
    /// array of that name first), arrays inside arrays too (a command array holding
    /// `"${SPEC_ARGS[@]}"`), [`MAX_SOURCE_DEPTH`] levels deep so an array that names itself stays
    /// bounded.
    fn splice_arrays(&self, words: &[String], line: u32, function: Option<&str>) -> Vec<(String, u32)> {
        let words: Vec<(String, u32)> = words.iter().map(|w| (w.clone(), line)).collect();
        self.splice_depth(&words, function, 0)
    }

    fn splice_depth(&self, words: &[(String, u32)], function: Option<&str>, depth: usize) -> Vec<(String, u32)> {
        let mut out = Vec::with_capacity(words.len());
        for (word, line) in words {
            let name = word.strip_prefix("${").and_then(|w| w.strip_suffix("[@]}").or_else(|| w.strip_suffix("[*]}")));
            let items = name.and_then(|n| {
                function.and_then(|f| self.arrays.get(&format!("{f}:{n}"))).or_else(|| self.arrays.get(n))
            });
            match items.filter(|_| depth < MAX_SOURCE_DEPTH) {
                Some(items) => out.extend(self.splice_depth(items, function, depth + 1)),
                None => out.push((word.clone(), *line)),
            }
        }
        out
    }

    fn assign(&mut self, name: &str, value: &str) {
        // The script's own default of a variable it is handed set (`X=${X:-d}`) keeps the value.
        let own_default = [format!("${{{name}:-"), format!("${{{name}-")];
        let handed = self.inherited.contains(name)
            && self.vars.get(name).is_some_and(|v| !v.is_empty() && v.iter().all(|v| !v.is_empty()));
        if handed && own_default.iter().any(|d| value.trim_matches('"').starts_with(d.as_str())) {
            return;
        }
        let values = self.vars.entry(name.to_owned()).or_default();
        if values.len() < MAX_VALUES {
            values.insert(value.to_owned());
        }
    }

    /// Every expansion of `text`; an unknown variable stays as written.
    fn expand(&self, text: &str, depth: usize) -> BTreeSet<String> {
        self.expand_in(text, depth, &[])
    }

    /// `expanding`: the variables whose values are being expanded. A value that names its own
    /// variable reads the value from before the assignment: a job input's stays symbolic
    /// (`TP="${PREFILL_TP:-${TP:-1}}"` is `$TP`), another's default applies (`MEM="${MEM:-0.83}"`).
    fn expand_in(&self, text: &str, depth: usize, expanding: &[&str]) -> BTreeSet<String> {
        let Some(start) = text.find('$') else { return [text.to_owned()].into() };
        let (head, rest) = text.split_at(start);
        let rest = &rest[1..];
        let (name, default, tail) = if let Some(inner) = rest.strip_prefix('{') {
            // The `}` that closes this `${`, nested `${…}` in a default included.
            let mut depth = 0usize;
            let close = inner.char_indices().find(|&(i, c)| match c {
                '{' if inner[..i].ends_with('$') => {
                    depth += 1;
                    false
                }
                '}' if depth == 0 => true,
                '}' => {
                    depth -= 1;
                    false
                }
                _ => false,
            });
            let Some((end, _)) = close else { return [text.to_owned()].into() };
            let body = &inner[..end];
            let (name, default) = match body.split_once(":-").or_else(|| body.split_once('-')) {
                Some((n, d)) => (n, Some(d)),
                None => (body, None),
            };
            (name, default, &inner[end + 1..])
        } else {
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            (&rest[..end], None, &rest[end..])
        };
        let literal = &text[start..text.len() - tail.len()];
        let inner: Vec<&str> = expanding.iter().copied().chain([name]).collect();
        let job_input = super::WORKFLOW_ENV.contains(&name);
        let values: BTreeSet<String> = if expanding.contains(&name) && (job_input || default.is_none()) {
            [format!("${name}")].into()
        } else if expanding.contains(&name) {
            self.expand_in(default.unwrap_or_default(), depth + 1, expanding)
        } else {
            let known = depth < MAX_SOURCE_DEPTH && is_var_name(name) && !self.appended.contains(name);
            match self.vars.get(name).filter(|_| known) {
                Some(values) => values.iter().flat_map(|v| self.expand_in(v, depth + 1, &inner)).collect(),
                None if self.appended.contains(name) => [literal.to_owned()].into(),
                None => match default {
                    Some(d) => self.expand_in(d, depth + 1, expanding),
                    None => [literal.to_owned()].into(),
                },
            }
        };
        let tails = self.expand_in(tail, depth, expanding);
        let mut out = BTreeSet::new();
        for v in &values {
            for t in &tails {
                if out.len() < MAX_VALUES {
                    out.insert(format!("{head}{v}{t}"));
                }
            }
        }
        out
    }
}

/// Finds a sourced script: `(sourcing file, path as written)` → its path and text.
pub type SourceResolver<'a> = dyn Fn(&str, &str) -> Option<(String, String)> + 'a;

/// The path a `source x` / `. x` line names, with `$(dirname "$0")`-style prefixes dropped.
fn sourced_path(words: &[String]) -> Option<String> {
    let (first, path) = (words.first()?, words.get(1)?);
    if first != "source" && first != "." {
        return None;
    }
    Some(script_relative(path))
}

/// A path written relative to the running script's own folder (`$(dirname "$0")/x`,
/// `$SCRIPT_DIR/x`, `${BASH_SOURCE%/*}/x`), as `./x`; other paths unchanged.
pub fn script_relative(path: &str) -> String {
    [
        "$(dirname $0)",
        "$(dirname ${BASH_SOURCE[0]})",
        "$(dirname $BASH_SOURCE)",
        "${BASH_SOURCE%/*}",
        "${SCRIPT_DIR}",
        "$SCRIPT_DIR",
    ]
    .iter()
    .fold(path.to_owned(), |p, prefix| p.replace(prefix, "."))
}

/// The workflow inputs of the serving configuration (issue 33 item 2): a job's throughput run
/// has `EVAL_ONLY` off (`benchmark-tmpl.yml` passes `eval-only: false`), so a launcher's
/// `EVAL_ONLY` branch (the eval context length, real-verification speculative config) is not a
/// serving setting.
const SERVING_INPUTS: &[(&str, &str)] = &[("EVAL_ONLY", "false")];

/// The inputs a script's tests are decided on (decision PM8): the serving run's, and the
/// search-space row's (`TP`, `DCP_SIZE`, `KV_OFFLOAD_BACKEND`, … as the workflow binds them),
/// less any the script assigns itself other than as its own default (`X="${X:-1}"`). Tests on
/// anything else stay undecided: every branch is read.
fn serving_inputs(words: &[Vec<String>], row: &[(String, String)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> =
        SERVING_INPUTS.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let mut assigned: BTreeSet<String> = BTreeSet::new();
    for word in words.iter().flatten() {
        if let Some((name, value)) = assignment(word) {
            let value = value.trim_matches('"');
            if !(value.starts_with(&format!("${{{name}:-")) || value.starts_with(&format!("${{{name}-"))) {
                assigned.insert(name.to_owned());
            }
        }
    }
    for (k, v) in row {
        if !out.iter().any(|(o, _)| o == k) && !assigned.contains(k) {
            out.push((k.clone(), v.clone()));
        }
    }
    out
}

/// An operand of a test: a literal, or a variable of `inputs` (`$X`, `${X}`, `${X:-d}`,
/// `${X-d}`; `${X:-d}` of an empty input is `d`). `None`: it names anything else.
fn operand<'a>(word: &'a str, inputs: &[(&str, &'a str)]) -> Option<&'a str> {
    if !word.contains(['$', '`']) {
        return Some(word);
    }
    let body = word.strip_prefix("${").and_then(|w| w.strip_suffix('}')).or_else(|| word.strip_prefix('$'))?;
    let (name, default) = match body.split_once(":-") {
        Some((n, d)) => (n, Some(d)),
        None => (body.split_once('-').map_or(body, |(n, _)| n), None),
    };
    let value = inputs.iter().find(|(k, _)| *k == name).map(|(_, v)| *v)?;
    match default {
        Some(d) if value.is_empty() => (!d.contains(['$', '`'])).then_some(d),
        _ => Some(value),
    }
}

/// Whether `[ a = b ]` / `[[ a == b ]]` / `[[ a != b ]]` (optionally `!`-negated) holds for
/// `inputs`; `None` for any other test or one naming another variable.
fn decide(test: &[String], inputs: &[(&str, &str)]) -> Option<bool> {
    let test: Vec<&str> = test.iter().map(|w| w.trim_end_matches(';')).filter(|w| !w.is_empty()).collect();
    let (negated, test) = match test.split_first() {
        Some((&"!", rest)) => (true, rest),
        _ => (false, &test[..]),
    };
    let inner = match test {
        ["[", inner @ .., "]"] | ["[[", inner @ .., "]]"] => inner,
        _ => return None,
    };
    let [a, op, b] = inner else { return None };
    let (a, b) = (operand(a, inputs)?, operand(b, inputs)?);
    let holds = match *op {
        "=" | "==" => a == b,
        "!=" => a != b,
        _ => {
            let (x, y) = (a.parse::<i64>().ok()?, b.parse::<i64>().ok()?);
            match *op {
                "-eq" => x == y,
                "-ne" => x != y,
                "-gt" => x > y,
                "-ge" => x >= y,
                "-lt" => x < y,
                "-le" => x <= y,
                _ => return None,
            }
        }
    };
    Some(holds != negated)
}

/// One open `if` or `case` while reading a script for [`dead_lines`].
struct Branch {
    /// The lines of the current branch may run.
    live: bool,
    /// A branch before was certainly taken (the rest are dead).
    taken: bool,
    /// A `case` subject's value, when `inputs` decide it.
    subject: Option<String>,
}

/// The lines of `text` inside an `if`/`elif`/`else` branch or a `case` arm that `inputs` rule
/// out. Tests it cannot decide keep every branch (the reader then takes every value).
pub(super) fn dead_lines(lines: &[(u32, String)], inputs: &[(&str, &str)]) -> BTreeSet<u32> {
    let words: Vec<Vec<String>> = lines.iter().map(|(_, l)| shell_words(l)).collect();
    dead_lines_of(lines, &words, inputs)
}

/// [`dead_lines`] of lines whose shell words are read already.
fn dead_lines_of(lines: &[(u32, String)], words: &[Vec<String>], inputs: &[(&str, &str)]) -> BTreeSet<u32> {
    let mut open: Vec<Branch> = Vec::new();
    let mut dead = BTreeSet::new();
    for ((line, _), words) in lines.iter().zip(words) {
        let line = *line;
        let first = words.first().map(|w| w.trim_end_matches(';')).unwrap_or_default();
        let one_line = words.iter().any(|w| matches!(w.trim_end_matches(';'), "fi" | "esac"));
        let live_before = open.iter().all(|b| b.live);
        match first {
            "if" if !one_line => {
                let end = words.iter().position(|w| w == "then" || w == ";then").unwrap_or(words.len());
                let decided = decide(&words[1..end], inputs);
                open.push(Branch { live: decided != Some(false), taken: decided == Some(true), subject: None });
            }
            "elif" => {
                if let Some(b) = open.last_mut() {
                    let end = words.iter().position(|w| w == "then" || w == ";then").unwrap_or(words.len());
                    let decided = if b.taken { Some(false) } else { decide(&words[1..end], inputs) };
                    b.live = decided != Some(false);
                    b.taken |= decided == Some(true);
                }
            }
            "else" => {
                if let Some(b) = open.last_mut() {
                    b.live = !b.taken;
                }
            }
            "fi" | "esac" => {
                open.pop();
            }
            "case" if !one_line && words.last().is_some_and(|w| w == "in") => {
                let subject = words.get(1).and_then(|w| operand(w, inputs)).map(str::to_owned);
                open.push(Branch { live: true, taken: false, subject });
            }
            _ => {
                if let Some(b) = open.last_mut().filter(|b| b.subject.is_some()) {
                    let pattern = first.strip_prefix('(').unwrap_or(first);
                    if let Some(pattern) = pattern.strip_suffix(')').filter(|_| is_case_pattern(first)) {
                        let subject = b.subject.as_deref().unwrap_or_default();
                        // A pattern too costly to decide may match: its branch stays live.
                        let matches = pattern
                            .split('|')
                            .any(|p| super::shell::glob(p.trim_matches(['"', '\'']), subject) != Some(false));
                        b.live = !b.taken && matches;
                        b.taken |= matches;
                    }
                }
            }
        }
        let live = open.iter().all(|b| b.live);
        if !live || (!live_before && matches!(first, "fi" | "esac")) {
            dead.insert(line);
        }
    }
    dead
}

/// Reads the variables, arrays and exports of a script's command `lines` (`dead` ones skipped),
/// and of the scripts it sources.
fn read_scope(
    script: &ParsedScript,
    dead: &BTreeSet<u32>,
    path: &str,
    resolve: &SourceResolver,
    scope: &mut Scope,
    depth: usize,
) {
    // A bash array assignment spans lines (`CMD=(` … `)`): its lines are items, whatever they
    // hold (an engine command included), until the closing parenthesis.
    let mut array: Option<String> = None;
    // A sourced library's function binds its variables only where something calls it
    // (`bridge_disagg_eval_metadata` sets `TP` from `PREFILL_TP` for the eval's metadata only).
    let (lines, split, all_bodies) = (&script.lines, &script.words, &script.bodies);
    let bodies = if depth == 0 { &[][..] } else { &all_bodies[..] };
    let in_body = |number: u32| bodies.iter().find(|(_, lines)| lines.contains(&number));
    let function_of = |number: u32| all_bodies.iter().find(|(_, lines)| lines.contains(&number)).map(|(n, _)| n);
    // A function the launcher calls once its server runs (`run_eval` after the benchmark sets
    // `CONC="$eval_conc"`, #2433) binds nothing the server's command read.
    let server_at = (depth == 0)
        .then(|| lines.iter().zip(split).find(|(_, w)| is_engine_command(w) && !opens_array(w)).map(|((n, _), _)| *n))
        .flatten();
    for ((number, _), words) in lines.iter().zip(split) {
        let number = *number;
        if in_body(number).is_none() && !dead.contains(&number) && server_at.is_none_or(|at| number < at) {
            scope.called.extend(words.iter().cloned());
        }
    }
    for ((number, _), words) in lines.iter().zip(split) {
        let number = *number;
        if dead.contains(&number) && array.is_none() {
            continue;
        }
        if in_body(number).is_some_and(|(name, _)| !scope.called.contains(name)) {
            continue;
        }
        if array.is_none() {
            if let Some(target) = sourced_path(words) {
                if depth < MAX_SOURCE_DEPTH {
                    if let Some((sub_path, sub_text)) = resolve(path, &target) {
                        let sub = parsed(&sub_text);
                        let sub_dead = dead_lines_of(&sub.lines, &sub.words, &scope.inputs());
                        read_scope(&sub, &sub_dead, &sub_path, resolve, scope, depth + 1);
                    }
                }
                continue;
            }
            if is_engine_command(words) && !opens_array(words) {
                continue;
            }
        }
        // Assignments open a command: at the line start and after `;`, `then`, `&&`, a case
        // arm's pattern, ….
        let (mut at_start, mut exported) = (true, false);
        // `local NAME=(…)` in a function: an array of that function only.
        let mut local = false;
        for word in words {
            if let Some(name) = &array {
                // The `)` that closes the array, not one of an item's own (`"$((2 * CONC))"`),
                // also where a `;` ends the command (`then A+=(--x 1); fi`).
                let bare = word.strip_suffix(';').unwrap_or(word);
                let closes = bare.matches(')').count() > bare.matches('(').count();
                let item = bare.strip_suffix(')').filter(|_| closes);
                let items = scope.arrays.entry(name.clone()).or_default();
                match item {
                    Some(last) => {
                        items.extend((!last.is_empty()).then(|| (last.to_owned(), number)));
                        array = None;
                    }
                    None => items.push((word.clone(), number)),
                }
                continue;
            }
            let (w, ends) = match word.strip_suffix(';') {
                Some(w) => (w, true),
                None => (word.as_str(), false),
            };
            if matches!(w, "if" | "then" | "else" | "elif" | "do" | "&&" | "||" | "fi" | "done" | "{" | "}" | ";")
                || is_case_pattern(w)
            {
                (at_start, exported, local) = (true, false, false);
                continue;
            }
            if at_start && !local && w == "local" {
                local = true;
                continue;
            }
            if let Some((name, rest)) = array_open(w).filter(|_| at_start) {
                // In a function, `local NAME=(…)` and later `NAME+=(…)` are the function's array.
                let own = function_of(number).map(|f| format!("{f}:{name}"));
                let key = match own.filter(|own| local || scope.arrays.contains_key(own)) {
                    Some(own) => own,
                    None => name.to_owned(),
                };
                let items = scope.arrays.entry(key.clone()).or_default();
                match rest.strip_suffix(')') {
                    Some(last) => items.extend((!last.is_empty()).then(|| (last.to_owned(), number))),
                    None => {
                        items.extend((!rest.is_empty()).then(|| (rest.to_owned(), number)));
                        array = Some(key);
                    }
                }
                continue;
            }
            if local {
                // A `local` scalar is the function's own, not a variable of the script.
                (at_start, exported, local) = (false, false, false);
                continue;
            }
            if at_start {
                if w == "export" {
                    exported = true;
                } else if let Some(name) = w.split_once("+=").map(|(n, _)| n).filter(|n| is_var_name(n)) {
                    scope.appended.insert(name.to_owned());
                } else if let Some((name, value)) = assignment(w) {
                    scope.assign(name, value);
                    if exported {
                        scope.exports.insert(name.to_owned(), path.to_owned());
                    }
                } else if exported && is_var_name(w) {
                    scope.exports.insert(w.to_owned(), path.to_owned());
                } else {
                    (at_start, exported) = (false, false);
                }
            }
            if ends {
                (at_start, exported) = (true, false);
            }
        }
    }
}

/// Whether the word after a flag is its value: not another flag, a redirection (`>>`, `2>&1`),
/// a pipe or `&`, nor a variable that expands to nothing or to flags (`$EVAL_CONTEXT_ARGS`, `""`
/// or `--context-length …`, word-split by the shell after a boolean flag, #2492).
/// The `--flag value` and `--flag=value` pairs of an argument list, each name written `--a-b`
/// (`_` read as `-`); a flag whose next word is no value (`is_value`) is `true`.
pub(super) fn flag_pairs(words: &[String], is_value: impl Fn(&str) -> bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        i += 1;
        let Some(flag) = word.strip_prefix("--").filter(|f| !f.is_empty()) else { continue };
        let (flag, value) = match flag.split_once('=') {
            Some((f, v)) => (f, v.to_owned()),
            None => match words.get(i).filter(|w| is_value(w)) {
                Some(v) => {
                    i += 1;
                    (flag, v.clone())
                }
                None => (flag, "true".to_owned()),
            },
        };
        out.push((format!("--{}", flag.replace('_', "-")), value));
    }
    out
}

fn is_value(scope: &Scope, word: &str) -> bool {
    let redirect = word.trim_start_matches(|c: char| c.is_ascii_digit()).starts_with(['>', '<', '|', '&']);
    let flags = || scope.expand(word, 0).iter().any(|v| v.is_empty() || v.starts_with("--"));
    !(word.starts_with("--") || redirect || (word.starts_with('$') && flags()))
}

/// The settings of a recipe the launcher hands to a helper program that renders the engine's
/// arguments (`eval "$(python3 render_args.py --recipe recipes/x.yaml)"`, issue 33 item 2): the
/// recipe is the truth, the renderer plumbing. A YAML path of the tree named inside a command
/// substitution on a live line, that parses as an srt-slurm recipe, adds every variant's
/// settings of its aggregated role.
fn rendered_recipe_settings(
    lines: &[(u32, String)],
    path: &str,
    resolve: &SourceResolver,
    scope: &Scope,
    dead: &BTreeSet<u32>,
    settings: &mut BTreeMap<String, Setting>,
) {
    let mut read: Vec<String> = Vec::new();
    for (_, logical) in lines.iter().filter(|(line, _)| !dead.contains(line)) {
        for (at, _) in logical.match_indices("$(") {
            let inner = &logical[at + 2..];
            let inner = &inner[..inner.find(')').unwrap_or(inner.len())];
            if inner.trim_start().starts_with("cat ") {
                continue;
            }
            for word in split_words(inner, false) {
                for target in scope.expand(&word, 0) {
                    let target = target.trim_matches(['"', '\'']).to_owned();
                    if !(target.ends_with(".yaml") || target.ends_with(".yml")) || read.contains(&target) {
                        continue;
                    }
                    read.push(target.clone());
                    let Some((recipe_path, recipe_text)) = resolve(path, &target) else { continue };
                    let roles = Recipe::parse(&recipe_text, &recipe_path).and_then(|r| from_recipe(&r, None));
                    for role in roles.into_iter().flatten().filter(|r| r.role == "aggregated") {
                        for (name, setting) in role.settings {
                            for value in setting.values {
                                add(settings, name.clone(), setting.kind, value, setting.at.clone());
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Longest file a `$(cat file)` value is read from (bounded input).
const MAX_CAT_BYTES: usize = 64 << 10;

/// The value of `$(cat file)` (`--speculative-config "$(cat spec.json)"`): the file's text when
/// the tree has it, trimmed as command substitution trims it.
fn file_contents(value: &str, path: &str, resolve: &SourceResolver) -> Option<String> {
    let target = value.strip_prefix("$(cat ")?.strip_suffix(')')?.trim().trim_matches(['"', '\'']);
    if target.is_empty() || target.contains(['$', '`', ' ']) {
        return None;
    }
    let (_, text) = resolve(path, target)?;
    (text.len() <= MAX_CAT_BYTES).then(|| text.trim_end_matches('\n').to_owned())
}

/// Engine flags whose value is a file of settings (TRT-LLM's `--extra_llm_api_options`, the
/// `--config` file of `trtllm-serve` and `vllm serve`).
const OPTION_FILE_FLAGS: &[&str] = &["--extra-llm-api-options", "--config"];

/// The top-level keys of an option file a heredoc writes, as flags (`kv_cache_config:` is
/// `--kv-cache-config` with its mapping as JSON, as a recipe's engine config reads), each value
/// expanded. A body that does not parse as YAML (a shell expansion inside a flow list) gives
/// nothing; the flag naming the file stays a setting.
fn option_file_settings(h: &Heredoc, path: &str, scope: &Scope, settings: &mut BTreeMap<String, Setting>) {
    let Ok(root) = crate::yaml::parse(&h.body, path) else { return };
    for (key, value) in root.as_map().unwrap_or_default() {
        let (Some(key), Some(text)) = (key.key_text(), scalar_text(value)) else { continue };
        let at = format!("{path}:{}", h.body_line + value.pos.line.saturating_sub(1));
        for v in scope.expand(&text, 0) {
            add(settings, format!("--{}", key.replace('_', "-")), SettingKind::Flag, v, at.clone());
        }
    }
}

/// The aggregated settings of a launcher script for one search-space row's workflow inputs
/// (`row`, empty when none is known): the engine command's flags and the env it runs with.
/// `resolve(from, target)` finds a sourced script's path and text. `None` when the script
/// starts no vLLM/SGLang/ATOM/TRT-LLM server.
pub fn from_script(text: &str, path: &str, resolve: &SourceResolver, row: &[(String, String)]) -> Option<RoleSettings> {
    from_script_with(text, path, resolve, row, &[])
}

/// One variable a script hands to the script it runs: name, value, and the file that exports it.
pub type Inherited = (String, String, String);

/// A script read for one row: its scope, the heredocs it writes, its command lines, the dead ones.
struct ReadScript {
    scope: Scope,
    script: std::rc::Rc<ParsedScript>,
    dead: BTreeSet<u32>,
}

/// The scope of a script: its inputs for `row`, what it inherits, its variables, arrays and
/// exports (sourced scripts included), its command lines and the dead ones.
fn script_scope(
    text: &str,
    path: &str,
    resolve: &SourceResolver,
    row: &[(String, String)],
    inherited: &[Inherited],
) -> ReadScript {
    let script = parsed(text);
    let mut scope = Scope { inputs: serving_inputs(&script.words, row), ..Scope::default() };
    for (name, value, from) in inherited {
        scope.assign(name, value);
        scope.exports.insert(name.clone(), from.clone());
        scope.inherited.insert(name.clone());
    }
    let dead = dead_lines_of(&script.lines, &script.words, &scope.inputs());
    read_scope(&script, &dead, path, resolve, &mut scope, 0);
    ReadScript { scope, script, dead }
}

/// What a script exports to the programs it runs for `row` (what it inherits included), each
/// value expanded.
pub fn exports(
    text: &str,
    path: &str,
    resolve: &SourceResolver,
    row: &[(String, String)],
    inherited: &[Inherited],
) -> Vec<Inherited> {
    let scope = script_scope(text, path, resolve, row, inherited).scope;
    let mut out = Vec::new();
    for (name, from) in &scope.exports {
        let values = scope.vars.get(name).cloned().unwrap_or_default();
        for v in values.iter().flat_map(|v| scope.expand(v, 0)) {
            out.push((name.clone(), v, from.clone()));
        }
    }
    out
}

/// The functions a live line outside every function body calls (a word naming them), and those
/// the bodies of called functions call in turn.
fn called_functions(
    lines: &[(u32, String)],
    dead: &BTreeSet<u32>,
    bodies: &[(String, std::ops::RangeInclusive<u32>)],
) -> BTreeSet<String> {
    let in_body = |n: u32| bodies.iter().find(|(_, l)| l.contains(&n)).map(|(f, _)| f.as_str());
    let live: Vec<(u32, Vec<String>)> =
        lines.iter().filter(|(n, _)| !dead.contains(n)).map(|(n, logical)| (*n, words(logical))).collect();
    let mut called: BTreeSet<String> = BTreeSet::new();
    // Each round adds a function or stops: at most one round per function.
    for _ in 0..=bodies.len() {
        let before = called.len();
        for (number, split) in &live {
            if in_body(*number).is_some_and(|f| !called.contains(f)) {
                continue;
            }
            for word in split {
                if bodies.iter().any(|(f, _)| f == word) && in_body(*number) != Some(word.as_str()) {
                    called.insert(word.clone());
                }
            }
        }
        if called.len() == before {
            break;
        }
    }
    called
}

/// [`from_script`] for a script another script runs: `inherited` are the variables it is handed
/// (exported by the scripts before it, or bound by the command that runs it).
pub fn from_script_with(
    text: &str,
    path: &str,
    resolve: &SourceResolver,
    row: &[(String, String)],
    inherited: &[Inherited],
) -> Option<RoleSettings> {
    let ReadScript { scope, script, dead } = script_scope(text, path, resolve, row, inherited);
    let (lines, bodies) = (&script.lines, &script.bodies);
    let mut settings = BTreeMap::new();
    let mut found = false;
    let written: Vec<&Heredoc> = script.written.iter().filter(|h| !dead.contains(&h.line)).collect();
    // A server started in a function runs only when a live line calls it (`start_prefill` in
    // the `prefill)` arm of a role `case`).
    let called = called_functions(lines, &dead, bodies);
    for ((line, _), written_words) in lines.iter().zip(&script.words).filter(|((line, _), _)| !dead.contains(line)) {
        let function = bodies.iter().find(|(_, l)| l.contains(line)).map(|(f, _)| f.as_str());
        // An array's items are data: the command that splices them is the engine command.
        if function.is_some_and(|f| !called.contains(f)) || opens_array(written_words) {
            continue;
        }
        let spliced = scope.splice_arrays(written_words, *line, function);
        let (line, words) = (*line, spliced.iter().map(|(w, _)| w.clone()).collect::<Vec<_>>());
        let engine = |w: &String| {
            w.contains("sglang")
                || w == "vllm"
                || w.contains("vllm.")
                || w.contains("atom.entrypoints")
                || w.ends_with("trtllm-serve")
        };
        let Some(start) = words.iter().position(engine) else {
            continue;
        };
        if !is_engine_command(&words) {
            continue;
        }
        found = true;
        let at = format!("{path}:{line}");
        for word in &words[..start] {
            if let Some((name, value)) = assignment(word) {
                for v in scope.expand(value, 0) {
                    add(&mut settings, name.to_owned(), SettingKind::Env, v, at.clone());
                }
            }
        }
        // Each `--flag` word gives one pair, in order: its line is the flag's.
        let flag_lines = spliced[start + 1..].iter().filter(|(w, _)| w.len() > 2 && w.starts_with("--"));
        for ((name, value), (_, flag_line)) in
            flag_pairs(&words[start + 1..], |w| is_value(&scope, w)).into_iter().zip(flag_lines)
        {
            let at = format!("{path}:{flag_line}");
            if OPTION_FILE_FLAGS.contains(&name.as_str()) {
                // The file the script writes with a heredoc holds the engine's settings.
                let files = scope.expand(&value, 0);
                for h in written.iter().filter(|h| !scope.expand(&h.target, 0).is_disjoint(&files)) {
                    option_file_settings(h, path, &scope, &mut settings);
                }
            }
            for v in scope.expand(&value, 0) {
                let v = file_contents(&v, path, resolve).unwrap_or(v);
                add(&mut settings, name.clone(), SettingKind::Flag, v, at.clone());
            }
        }
    }
    if !found {
        return None;
    }
    rendered_recipe_settings(lines, path, resolve, &scope, &dead, &mut settings);
    for (name, from) in &scope.exports {
        let values = scope.vars.get(name).cloned().unwrap_or_default();
        for v in values.iter().flat_map(|v| scope.expand(v, 0)) {
            add(&mut settings, name.clone(), SettingKind::Env, v, from.clone());
        }
    }
    Some(RoleSettings {
        source: path.to_owned(),
        role: "aggregated",
        variants: Vec::new(),
        concurrencies: BTreeSet::new(),
        settings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(s: &RoleSettings, name: &str) -> Vec<String> {
        s.settings.get(name).map(|s| s.values.iter().cloned().collect()).unwrap_or_default()
    }

    /// Shaped like InferenceX's MI355X TP4/EP4 HiCache recipe: a base plus per-concurrency zips.
    const HICACHE: &str = "base:\n  name: muse-tep4\n  model: {path: /models/m, container: lmsysorg/sglang:v0.5.10-rocm700-mi35x, precision: fp8}\n  resources: {gpu_type: mi355x, gpus_per_node: 8, agg_nodes: 1, agg_workers: 2}\n  backend:\n    type: sglang\n    aggregated_environment:\n      PYTORCH_HIP_ALLOC_CONF: \"expandable_segments:True\"\n      ROCM_QUICK_REDUCE_QUANTIZATION: NONE\n    sglang_config:\n      aggregated:\n        tensor-parallel-size: 4\n        expert-parallel-size: 4\n        enable-hierarchical-cache: true\n        hicache-size: 310\n        chunked-prefill-size: 8192\n        disable-radix-cache: false\n  benchmark: {type: sa-bench, isl: 8192, osl: 1024, concurrencies: [10]}\nzip_override_conc:\n  name: [c10, c24, c40]\n  benchmark:\n    concurrencies: [[10], [24], [40]]\n  backend:\n    sglang_config:\n      aggregated:\n        hicache-size: [253, 253, 310]\n        mem_fraction_static: [0.86, 0.9, 0.96]\n";

    /// Shaped like seed 004's launcher: flags collected in a bash array per branch, values set
    /// per concurrency in `case` arms, the array spliced into the engine command.
    /// Issue 33 item 2, shaped like `dsv4_fp4_b200_vllm_mtp.sh:255-259` and the ATOM launchers'
    /// `CALCULATED_MAX_MODEL_LEN` (843c625): the `EVAL_ONLY` branch is the eval configuration,
    /// not a serving setting; a test on anything else keeps both branches.
    /// Issue 33 item 2: ATOM's server, as `dsr1_fp4_mi355x_atom.sh:48-53` at 843c625 starts it.
    #[test]
    fn an_atom_server_is_an_engine_command() {
        let script = "BLOCK_SIZE=${BLOCK_SIZE:-16}\npython3 -m atom.entrypoints.openai_server \\\n    --model $MODEL \\\n    --server-port $PORT \\\n    -tp $TP \\\n    --kv_cache_dtype fp8 $CALCULATED_MAX_MODEL_LEN $EP \\\n    --block-size $BLOCK_SIZE > $SERVER_LOG 2>&1 &\n";
        let s = standalone(script);
        let values = |n: &str| s.settings.get(n).map(|x| x.values.iter().cloned().collect::<Vec<_>>());
        assert_eq!(values("--kv-cache-dtype"), Some(vec!["fp8".to_owned()]));
        assert_eq!(values("--block-size"), Some(vec!["16".to_owned()]));
        assert_eq!(s.settings["--block-size"].at, "l.sh:2");
    }

    #[test]
    fn the_eval_only_branch_is_not_the_serving_configuration() {
        let script = "if [ \"${EVAL_ONLY:-false}\" = \"true\" ]; then\n    SPEC='{\"method\": \"mtp\"}'\n    EXTRA=\"--max-model-len\"\nelse\n    SPEC='{\"method\": \"mtp\", \"synthetic_acceptance_length\": 2.49}'\nfi\nif [[ \"$EVAL_ONLY\" == \"true\" ]]; then\n  vllm serve $MODEL --max-model-len $(compute_eval_context_length $MODEL)\nelif [[ $CONC -ge 64 ]]; then\n  MEM=0.9\nelse\n  MEM=0.85\nfi\ncase \"$EVAL_ONLY\" in\n  true) KV=fp8 ;;\n  *) KV=auto ;;\nesac\nvllm serve $MODEL --speculative-config \"$SPEC\" --gpu-memory-utilization $MEM --kv-cache-dtype $KV\n";
        let s = from_script(script, "l.sh", &|_: &str, _: &str| None, &[]).unwrap();
        let values = |n: &str| s.settings.get(n).map(|x| x.values.iter().cloned().collect::<Vec<_>>());
        assert_eq!(
            values("--speculative-config"),
            Some(vec!["{\"method\": \"mtp\", \"synthetic_acceptance_length\": 2.49}".to_owned()])
        );
        assert_eq!(values("--max-model-len"), None, "the eval server's command is not read");
        assert_eq!(
            values("--gpu-memory-utilization"),
            Some(vec!["0.85".to_owned(), "0.9".to_owned()]),
            "undecided: both"
        );
        assert_eq!(values("--kv-cache-dtype"), Some(vec!["auto".to_owned()]));
        assert_eq!(dead_lines(&script_commands(script).1, &[]), BTreeSet::new(), "without inputs nothing is ruled out");
    }

    /// Decision PM8, from the real `dsv4_fp4_b200_vllm_mtp.sh` (DCP/PCP) and the agentic
    /// launchers' `case "$KV_OFFLOAD_BACKEND"` arms: a row's inputs decide the launcher's tests,
    /// numeric ones and a `${X:-1}` default included; a variable the script sets itself is not
    /// an input; without a row every branch is read.
    #[test]
    fn a_rows_inputs_decide_the_launchers_branches() {
        let script = "DCP_SIZE=\"${DCP_SIZE:-1}\"\nARGS=()\nif [ \"$DCP_SIZE\" -gt 1 ]; then\n    ARGS+=(--decode-context-parallel-size \"$DCP_SIZE\")\nfi\ncase \"$KV_OFFLOAD_BACKEND\" in\n  mooncake) ARGS+=(--kv-transfer-config mooncake) ;;\n  vllm-simple) ARGS+=(--kv-offloading-backend native) ;;\nesac\nMEM=0.9\nif [ \"$MEM\" = \"0.9\" ]; then ARGS+=(--x 1); fi\nTP=4\nif [ \"$TP\" -ge 8 ]; then ARGS+=(--big 1); fi\nvllm serve $MODEL --tensor-parallel-size $TP \"${ARGS[@]}\"\n";
        let row =
            |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect::<Vec<_>>();
        let read = |inputs: &[(String, String)]| from_script(script, "l.sh", &|_: &str, _: &str| None, inputs).unwrap();
        let flags = |s: &RoleSettings| s.settings.keys().cloned().collect::<Vec<_>>();
        let plain = read(&row(&[("DCP_SIZE", "1"), ("KV_OFFLOAD_BACKEND", "vllm-simple"), ("TP", "8")]));
        assert_eq!(
            flags(&plain),
            ["--big", "--kv-offloading-backend", "--tensor-parallel-size", "--x"],
            "no DCP flag at DCP 1, the row's backend arm only; TP is the script's own (4): --big stays undecided"
        );
        let dcp = read(&row(&[("DCP_SIZE", "2"), ("KV_OFFLOAD_BACKEND", "mooncake")]));
        // The value stays the workflow variable, which Check 3 reads as the row's values.
        assert_eq!(dcp.settings["--decode-context-parallel-size"].values, BTreeSet::from(["$DCP_SIZE".to_owned()]));
        assert!(
            dcp.settings.contains_key("--kv-transfer-config") && !dcp.settings.contains_key("--kv-offloading-backend")
        );
        let test = |w: &[&str], inputs: &[(&str, &str)]| {
            decide(&w.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>(), inputs)
        };
        assert_eq!(
            test(&["[", "${DCP_SIZE:-1}", "-gt", "1", "]"], &[("DCP_SIZE", "")]),
            Some(false),
            "empty: the default"
        );
        assert_eq!(test(&["[[", "$DCP_SIZE", "-le", "x", "]]"], &[("DCP_SIZE", "2")]), None, "not a number: undecided");
        let all = read(&[]);
        assert!(["--decode-context-parallel-size", "--kv-transfer-config", "--kv-offloading-backend"]
            .iter()
            .all(|f| all.settings.contains_key(*f)));
    }

    /// PM9, shaped like the real `dsr1_fp4_b200_trt.sh` (843c625): `trtllm-serve` under
    /// `mpirun` is the engine command, and the option file it names, written by heredocs (one
    /// appended under a branch, one whose shell expansion is no YAML), gives its settings.
    #[test]
    fn a_trtllm_server_reads_the_option_file_its_script_writes() {
        let script = "MOE_BACKEND=\"TRTLLM\"\nif [[ \"$DP_ATTENTION\" == \"true\" ]]; then\n    MOE_BACKEND=\"CUTLASS\"\nfi\nEXTRA_CONFIG_FILE=\"dsr1-fp4.yml\"\ncat > $EXTRA_CONFIG_FILE << EOF\nkv_cache_config:\n    dtype: fp8\n    free_gpu_memory_fraction: 0.8\nenable_attention_dp: $DP_ATTENTION\nmoe_config:\n    backend: $MOE_BACKEND\nEOF\nif [[ \"$DP_ATTENTION\" == \"true\" ]]; then\n    cat << EOF >> $EXTRA_CONFIG_FILE\nattention_dp_config:\n    enable_balance: true\nEOF\nfi\ncat << EOF >> $EXTRA_CONFIG_FILE\ntorch_compile_config:\n    capture_num_tokens: [${LIST%, }]\nEOF\nmpirun -n 1 --oversubscribe \\\n    trtllm-serve $MODEL --port=$PORT \\\n    --tp_size=$TP --ep_size=$EP_SIZE \\\n    --extra_llm_api_options=$EXTRA_CONFIG_FILE \\\n    > $SERVER_LOG 2>&1 &\n";
        let row = |dpa: &str| vec![("DP_ATTENTION".to_owned(), dpa.to_owned())];
        let s = from_script(script, "t.sh", &|_: &str, _: &str| None, &row("false")).expect("trtllm-serve is a server");
        let values =
            |s: &RoleSettings, n: &str| s.settings.get(n).map(|x| x.values.iter().cloned().collect::<Vec<_>>());
        assert_eq!(values(&s, "--tp-size"), Some(vec!["$TP".to_owned()]));
        assert_eq!(
            values(&s, "--kv-cache-config"),
            Some(vec![r#"{"dtype":"fp8","free_gpu_memory_fraction":0.8}"#.to_owned()])
        );
        assert_eq!(s.settings["--kv-cache-config"].at, "t.sh:8");
        assert_eq!(values(&s, "--moe-config"), Some(vec![r#"{"backend":"TRTLLM"}"#.to_owned()]));
        assert_eq!(values(&s, "--attention-dp-config"), None, "the DP-attention branch is not this row's");
        assert_eq!(values(&s, "--torch-compile-config"), None, "a body that is no YAML gives nothing");
        assert_eq!(values(&s, "--extra-llm-api-options"), Some(vec!["dsr1-fp4.yml".to_owned()]));
        assert!(!s.settings.contains_key("--dtype"), "heredoc bodies are data, not commands");
        let shifted = "N=$(( 1 << 4 ))\n4\nvllm serve $MODEL --max-num-seqs $N\n";
        let s = from_script(shifted, "t.sh", &|_: &str, _: &str| None, &[]).expect("an arithmetic shift is no heredoc");
        assert_eq!(values(&s, "--max-num-seqs"), Some(vec!["$(( 1 << 4 ))".to_owned()]));
        let dpa = from_script(script, "t.sh", &|_: &str, _: &str| None, &row("true")).unwrap();
        // A variable takes every value assigned on the live lines (assignments are not ordered).
        assert!(values(&dpa, "--moe-config").unwrap().contains(&r#"{"backend":"CUTLASS"}"#.to_owned()));
        assert_eq!(values(&dpa, "--attention-dp-config"), Some(vec![r#"{"enable_balance":true}"#.to_owned()]));
    }

    /// PM10: a flag's value read from a file of the tree (`"$(cat spec.json)"`) is the file's
    /// text; a file the tree lacks leaves the expression, which stays unresolved.
    #[test]
    fn a_flag_value_read_from_a_file_is_the_files_text() {
        let script =
            "vllm serve $MODEL --speculative-config \"$(cat spec.json)\" --kv-transfer-config \"$(cat gone.json)\"\n";
        let resolve = |from: &str, target: &str| {
            (from == "b/l.sh" && target == "spec.json")
                .then(|| ("b/spec.json".to_owned(), "{\"method\": \"mtp\"}\n".to_owned()))
        };
        let s = from_script(script, "b/l.sh", &resolve, &[]).unwrap();
        let values = |n: &str| s.settings[n].values.iter().cloned().collect::<Vec<_>>();
        assert_eq!(values("--speculative-config"), ["{\"method\": \"mtp\"}"]);
        assert_eq!(values("--kv-transfer-config"), ["$(cat gone.json)"]);
    }

    #[test]
    fn script_arrays_and_case_arms_reach_the_engine_command() {
        let script = "EXTRA=()\nif [ \"$TP\" = \"8\" ]; then\n  EXTRA+=(--mem-fraction-static 0.85)\nelse\n  case \"$CONC\" in\n    10) MEM=0.86; HICACHE=253 ;;\n    40) MEM=0.96; HICACHE=310; export HONOR=1 ;;\n  esac\n  EXTRA+=(--mem-fraction-static \"$MEM\" --hicache-size \"$HICACHE\")\nfi\npython3 -m sglang.launch_server --tp 4 \"${EXTRA[@]}\" &\n";
        let none = |_: &str, _: &str| None;
        let s = from_script(script, "l.sh", &none, &[]).unwrap();
        assert_eq!(values(&s, "--mem-fraction-static"), ["0.85", "0.86", "0.96"]);
        assert_eq!(values(&s, "--hicache-size"), ["253", "310"]);
        assert_eq!(values(&s, "HONOR"), ["1"]);
        assert!(!s.settings.contains_key("--${EXTRA[@]}"));
    }

    /// Shaped like InferenceX's GLM-5.2 B200 launcher (#2652): the whole engine command is a
    /// multi-line array with comments inside, printed and then run through `"${CMD[@]}"`. Before,
    /// an array's later lines were dropped, so none of the command's flags reached Check 3.
    #[test]
    fn a_multi_line_command_array_reaches_the_engine_command() {
        let script = "MEM=\"${MEM:-0.83}\"\nSPEC=(\n    --speculative-algorithm EAGLE\n)\nCMD=(\n    python3 -m sglang.launch_server\n    --model-path \"$MODEL\"\n    # a comment (with parentheses)\n    --mem-fraction-static \"$MEM\"\n    \"${SPEC[@]}\"\n)\nprintf '%q ' \"${CMD[@]}\" | tee cmd.txt\n\"${CMD[@]}\" >> \"$LOG\" 2>&1 &\n";
        let none = |_: &str, _: &str| None;
        let s = from_script(script, "l.sh", &none, &[]).unwrap();
        assert_eq!(values(&s, "--mem-fraction-static"), ["0.83"]);
        assert_eq!(values(&s, "--speculative-algorithm"), ["EAGLE"]);
        assert!(s.settings.contains_key("--model-path"));
    }

    /// The settings of a launcher that sources nothing.
    fn standalone(script: &str) -> RoleSettings {
        from_script(script, "l.sh", &|_: &str, _: &str| None, &[]).expect("the script starts a server")
    }

    /// Shaped like InferenceX's DeepSeek-V4 B200 vLLM launcher (#2621,
    /// `benchmarks/single_node/agentic/dsv4_fp4_b200_vllm_mtp.sh:257-303`): a JSON value built in
    /// double quotes with `\"`, and a capture-size list built by `+=` in a loop. The JSON reads
    /// as JSON (it read `{\method\: …}` before); the built list stays `$SIZES`, never its first
    /// literal `""` (which read `"cudagraph_capture_sizes":[]`, a value the launch never runs).
    #[test]
    fn escaped_quotes_and_appended_strings_read_as_the_shell_runs_them() {
        let script = "N=3\nif [ \"$SPEC_DECODING\" = \"mtp\" ]; then\n    SPEC=\"{\\\"method\\\": \\\"mtp\\\", \\\"num_speculative_tokens\\\": $N}\"\nfi\nSIZES=\"\"\nfor ((s = 1; s <= 4; s++)); do\n    SIZES+=\",\"\n    SIZES+=\"$((s * 4))\"\ndone\nCOMP=\"{\\\"cudagraph_capture_sizes\\\":[${SIZES}]}\"\nCMD=(\n    vllm serve m\n    --speculative-config \"$SPEC\"\n    --compilation-config \"$COMP\"\n    --served-model-name \\$NAME\n)\n\"${CMD[@]}\" &\n";
        let s = standalone(script);
        assert_eq!(values(&s, "--speculative-config"), [r#"{"method": "mtp", "num_speculative_tokens": 3}"#]);
        assert_eq!(values(&s, "--compilation-config"), [r#"{"cudagraph_capture_sizes":[${SIZES}]}"#]);
        assert_eq!(values(&s, "--served-model-name"), [r"\$NAME"], "an escaped $ is no variable");
        assert_eq!(words(r#"a\ b "c\d" 'e\"'"#), ["a b", r"c\d", r#"e\""#]);
    }

    /// #2577 (`dsv4_fp4_b300_sglang_mtp.sh:213`) ends a boolean flag with `>> "$LOG"`; #2492
    /// (`dsr1_fp4_b200.sh:80`) follows one with `$EVAL_CONTEXT_ARGS`, empty or
    /// `--context-length …`. Neither is the flag's value.
    #[test]
    fn redirections_and_flag_variables_are_no_flag_values() {
        let script = "EXTRA=\"\"\nif [ \"$EVAL_ONLY\" = true ]; then EXTRA=\"--context-length 8192\"; fi\npython3 -m sglang.launch_server --enable-prefill-delayer $EXTRA --skip-server-warmup >> \"$LOG\" 2>&1 &\n";
        let s = standalone(script);
        assert_eq!(values(&s, "--enable-prefill-delayer"), ["true"]);
        assert_eq!(values(&s, "--skip-server-warmup"), ["true"]);
    }

    #[test]
    fn recipe_settings_collect_every_variant_value_per_role() {
        let recipe = Recipe::parse(HICACHE, "r.yaml").unwrap();
        let roles = from_recipe(&recipe, None).unwrap();
        assert_eq!(roles.len(), 1);
        let agg = &roles[0];
        assert_eq!(agg.role, "aggregated");
        assert_eq!(agg.variants.len(), 3);
        assert_eq!(agg.concurrencies, [10, 24, 40].into());
        assert_eq!(values(agg, "--hicache-size"), ["253", "310"]);
        assert_eq!(values(agg, "--mem-fraction-static"), ["0.86", "0.9", "0.96"]);
        assert_eq!(values(agg, "PYTORCH_HIP_ALLOC_CONF"), ["expandable_segments:True"]);
        assert_eq!(values(agg, "--enable-hierarchical-cache"), ["true"]);
        assert!(!agg.settings.contains_key("--disable-radix-cache"), "false booleans are not set");
        assert_eq!(agg.settings["--mem-fraction-static"].at, "r.yaml:27");
        let one = Selector::parse("zip_override_conc[2]").unwrap();
        let last = from_recipe(&recipe, Some(&one)).unwrap();
        assert_eq!(values(&last[0], "--hicache-size"), ["310"]);
        assert_eq!(last[0].concurrencies, [40].into());
    }

    /// Shaped like InferenceX's single-node schema-2 recipes (after Aug 2026): `roles.agg` with
    /// `args`/`env`, one `override_*` variant per point with `benchmark.env.CONC`.
    const SCHEMA2: &str = "base:\n  schema: 2\n  name: m\n  resources: {gpu_type: mi355x, gpus_per_node: 8}\n  engine: sglang\n  roles:\n    agg:\n      nodes: 1\n      workers: 1\n      args: {tensor-parallel-size: 8, chunked-prefill-size: 16384}\n      env: {SGLANG_USE_AITER: '1'}\noverride_tp4_c10_hicache:\n  roles:\n    agg:\n      gpus: 4\n      args: {tensor-parallel-size: 4, hicache-size: 253}\n  benchmark: {env: {CONC: '10', KV_OFFLOADING: dram}}\noverride_tp4_c40_hicache:\n  roles:\n    agg:\n      gpus: 4\n      args: {tensor-parallel-size: 4, hicache-size: 310}\n      env: {HONOR: '1'}\n  benchmark: {env: {CONC: '40', KV_OFFLOADING: dram}}\n";

    #[test]
    fn schema2_recipes_read_role_args_and_env_with_per_value_concurrencies() {
        let roles = from_recipe(&Recipe::parse(SCHEMA2, "s.yaml").unwrap(), None).unwrap();
        assert_eq!(roles.len(), 1);
        let agg = &roles[0];
        assert_eq!((agg.role, agg.concurrencies.clone()), ("aggregated", [10, 40].into()));
        assert_eq!(values(agg, "--hicache-size"), ["253", "310"]);
        assert_eq!(agg.settings["--hicache-size"].value_concurrencies["253"], [10].into());
        assert_eq!(values(agg, "SGLANG_USE_AITER"), ["1"]);
        assert_eq!(agg.settings["HONOR"].concurrencies, [40].into(), "set by one variant only");
        assert_eq!(agg.settings["--chunked-prefill-size"].concurrencies, [10, 40].into());
        let routed = SCHEMA2.replace(
            "override_tp4_c40_hicache:\n",
            "override_tp4_c40_hicache:\n  frontend: {type: sglang-router, args: {policy: cache_aware, dp-aware: true}}\n",
        );
        let roles = from_recipe(&Recipe::parse(&routed, "s.yaml").unwrap(), None).unwrap();
        let frontend = roles.iter().find(|r| r.role == "frontend").expect("a frontend role");
        assert_eq!(values(frontend, "--policy"), ["cache_aware"]);
        assert_eq!(
            (frontend.concurrencies.clone(), frontend.variants.clone()),
            ([40].into(), vec!["override_tp4_c40_hicache".to_owned()])
        );
    }

    /// Shaped like the Oct 2026 `glm5.3/tilert/mi355x-fp8/agentx/disagg-1p1d-tp8-mtp.yaml`: a
    /// schema-2 top-level `environment`, per-role engines and env, and a router with its own env.
    const SCHEMA2_DISAGG: &str = "schema: 2\nname: g\nresources: {gpu_type: mi355x, gpus_per_node: 8}\nenvironment: {TILERT_VERSION: '0.1.6.post3', NCCL_IB_HCA: '@fabric.nccl-ib-hca'}\nroles:\n  prefill:\n    engine: {type: vllm}\n    nodes: 1\n    workers: 1\n    gpus: 8\n    env: {TILERT_ROLE: prefill}\n    args: {tensor-parallel-size: 8}\n  decode:\n    engine: tilert\n    nodes: 1\n    workers: 1\n    gpus: 8\n    env: {TILERT_ROLE: decode}\n    args: {num-mtp: 3}\nfrontend:\n  type: tilert-router\n  env: {TILERT_ROLE: router}\n  args: {parser: none}\nbenchmark: {type: custom, command: bash run.sh, env: {CONC: '1'}}\n";

    #[test]
    fn schema2_top_level_environment_reaches_every_worker_and_the_router_env_is_read() {
        let roles = from_recipe(&Recipe::parse(SCHEMA2_DISAGG, "g.yaml").unwrap(), None).unwrap();
        let role = |name: &str| roles.iter().find(|r| r.role == name).unwrap_or_else(|| panic!("{name}: {roles:?}"));
        for worker in ["prefill", "decode"] {
            assert_eq!(values(role(worker), "TILERT_VERSION"), ["0.1.6.post3"], "{worker}");
            assert_eq!(values(role(worker), "NCCL_IB_HCA"), ["@fabric.nccl-ib-hca"], "{worker}");
            assert_eq!(role(worker).settings["TILERT_VERSION"].at, "g.yaml:4");
            assert_eq!(values(role(worker), "TILERT_ROLE"), [worker], "the role's own env");
        }
        let router = role("frontend");
        assert_eq!(values(router, "TILERT_ROLE"), ["router"]);
        assert_eq!(router.settings["TILERT_ROLE"].kind, SettingKind::Env);
        assert_eq!(values(router, "--parser"), ["none"]);
        assert!(!router.settings.contains_key("TILERT_VERSION"), "the top-level environment is the workers'");
    }

    const DISAGG: &str = "name: dsr1-1p1d\nmodel: {path: m, container: c, precision: fp4}\nresources: {gpu_type: gb200, gpus_per_node: 4, prefill_nodes: 1, decode_nodes: 2, prefill_workers: 1, decode_workers: 1}\nbackend:\n  type: sglang\n  prefill_environment: {SGLANG_DISAGG_X: \"1\"}\n  sglang_config:\n    prefill: {tp-size: 4, disaggregation-mode: prefill, disaggregation-transfer-backend: nixl}\n    decode: {tp-size: 8, disaggregation-mode: decode, cuda-graph-max-bs: 256}\nbenchmark: {type: sa-bench, isl: 8192, osl: 1024, concurrencies: [64, 128]}\n";

    #[test]
    fn a_plain_disagg_recipe_has_one_entry_per_role() {
        let roles = from_recipe(&Recipe::parse(DISAGG, "d.yaml").unwrap(), None).unwrap();
        let names: Vec<&str> = roles.iter().map(|r| r.role).collect();
        assert_eq!(names, ["decode", "prefill"]);
        assert_eq!(values(&roles[1], "SGLANG_DISAGG_X"), ["1"]);
        assert!(!roles[0].settings.contains_key("SGLANG_DISAGG_X"), "prefill env stays on prefill");
        assert_eq!(values(&roles[0], "--cuda-graph-max-bs"), ["256"]);
    }

    const SHARED: &str = "#!/bin/bash\nexport SGLANG_USE_AITER=1\nexport ROCM_QUICK_REDUCE_QUANTIZATION=NONE\n";
    const LAUNCHER: &str = "#!/usr/bin/env bash\nsource \"$(dirname \"$0\")/../amd_utils/server_sglang.sh\"\nif [[ $CONC -ge 32 ]]; then\n  MEM=0.9\nelse\n  MEM=0.85\nfi\nif [[ $CONC -ge 64 ]]; then MEM=0.95; fi\nPREFILL=${PREFILL_SIZE:-16384}\nPYTORCH_HIP_ALLOC_CONF=expandable_segments:True python3 -m sglang.launch_server \\\n  --model-path \"$MODEL\" --tp \"$TP\" \\\n  --mem-fraction-static $MEM \\\n  --chunked-prefill-size=$PREFILL \\\n  --enable-torch-compile \\\n  --max-running-requests $CONC --port 8888 > $LOG 2>&1 &\n";

    #[test]
    fn script_settings_follow_variables_branches_and_sourced_files() {
        let resolve = |_: &str, target: &str| {
            target.ends_with("amd_utils/server_sglang.sh").then(|| ("amd_utils/server_sglang.sh".into(), SHARED.into()))
        };
        let s = from_script(LAUNCHER, "bench/x.sh", &resolve, &[]).unwrap();
        assert_eq!(values(&s, "--mem-fraction-static"), ["0.85", "0.9", "0.95"]);
        assert_eq!(values(&s, "--chunked-prefill-size"), ["16384"]);
        assert_eq!(values(&s, "--enable-torch-compile"), ["true"]);
        assert_eq!(values(&s, "--tp"), ["$TP"], "harness variables stay symbolic");
        assert_eq!(values(&s, "--port"), ["8888"]);
        assert_eq!(values(&s, "PYTORCH_HIP_ALLOC_CONF"), ["expandable_segments:True"]);
        assert_eq!(values(&s, "ROCM_QUICK_REDUCE_QUANTIZATION"), ["NONE"], "inherited from the sourced script");
        assert_eq!(s.settings["ROCM_QUICK_REDUCE_QUANTIZATION"].at, "amd_utils/server_sglang.sh");
        assert_eq!(s.settings["--mem-fraction-static"].at, "bench/x.sh:10");
        assert!(!s.settings.contains_key("MEM"), "plain variables are not env settings");
    }

    #[test]
    fn a_scripts_text_is_read_once_per_thread_and_the_memo_is_bounded() {
        let script = "source lib.sh\nvllm serve $MODEL --tp 8\n";
        let first = parsed(script);
        assert!(std::rc::Rc::ptr_eq(&first, &parsed(script)), "the same text is read once");
        assert_eq!(first.words[1], ["vllm", "serve", "$MODEL", "--tp", "8"]);
        assert!(!std::rc::Rc::ptr_eq(&first, &parsed("vllm serve $MODEL --tp 4\n")));
        // A text past the bound is not kept; texts that fill it make the memo start over.
        parsed(&"#\n".repeat(MAX_PARSED_BYTES / 2 + 1));
        assert!(std::rc::Rc::ptr_eq(&first, &parsed(script)), "nothing was dropped for a text not kept");
        parsed(&"#\n".repeat(MAX_PARSED_BYTES / 2 - 8));
        assert!(PARSED.with(|m| m.borrow().bytes <= MAX_PARSED_BYTES));
        assert!(!std::rc::Rc::ptr_eq(&first, &parsed(script)), "the memo started over");
    }

    #[test]
    fn a_nested_default_expands_whole() {
        // benchmark_lib.sh: `export TP="${PREFILL_TP:-${PREFILL_TP_SIZE:-${TP:-1}}}"`.
        let lib = "export TP=\"${PREFILL_TP:-${PREFILL_TP_SIZE:-${TP:-1}}}\"\n";
        let resolve = |_: &str, _: &str| Some(("lib.sh".to_owned(), lib.to_owned()));
        let s = from_script("source lib.sh\nvllm serve $MODEL --tensor-parallel-size=\"$TP\"\n", "v.sh", &resolve, &[])
            .unwrap();
        let tp = values(&s, "--tensor-parallel-size");
        assert_eq!(tp, ["$TP"], "the job's TP, from before the assignment that names it");
    }

    /// `benchmark_lib.sh` at #2566 (4506c84): `bridge_disagg_eval_metadata` sets
    /// `TP="${PREFILL_TP:-…}"` and the batched eval sets `CONC="$eval_conc"`, for the eval only.
    /// A library's function binds its variables where the launcher calls it on the serving path:
    /// not from its `EVAL_ONLY` branch, not after its server started (#2433's `run_eval`); an
    /// item `"$((2 * CONC))"` does not close its array.
    #[test]
    fn a_sourced_library_binds_only_through_the_functions_the_launcher_calls() {
        let lib = "bridge_meta() {\n    export TP=\"${PREFILL_TP:-${TP:-1}}\"\n}\n\nrun_eval() {\n    local eval_conc=\"$2\"\n    bridge_meta\n    export CONC=\"$eval_conc\"\n}\n\nset_mem() { MEM=0.9; }\ntune() {\n    KV=fp8\n}\n";
        let resolve = |_: &str, _: &str| Some(("lib.sh".to_owned(), lib.to_owned()));
        let script = "source lib.sh\nset_mem\ntune\nCMD=(\n  vllm serve $MODEL\n  --tensor-parallel-size \"$TP\"\n  --max-num-seqs \"$((2 * CONC))\"\n  --kv-cache-dtype $KV\n  --gpu-memory-utilization $MEM\n  --max-num-batched-tokens $CONC\n)\n\"${CMD[@]}\" &\nif [ \"$EVAL_ONLY\" = \"true\" ]; then\n  bridge_meta\nfi\nif [ \"$RUN_EVAL\" = \"true\" ]; then\n  run_eval --port 8000\nfi\n";
        let s = from_script(script, "v.sh", &resolve, &[]).unwrap();
        assert_eq!(values(&s, "--tensor-parallel-size"), ["$TP"], "the eval's metadata function is not called");
        assert_eq!(values(&s, "--max-num-seqs"), ["$((2 * CONC))"], "the item keeps its parentheses");
        assert_eq!(values(&s, "--max-num-batched-tokens"), ["$CONC"], "run_eval runs after the server started");
        assert_eq!(values(&s, "--kv-cache-dtype"), ["fp8"], "the array stays open past the item");
        assert_eq!(values(&s, "--gpu-memory-utilization"), ["0.9"], "a called one-line function binds");
        let bodies: Vec<String> = function_bodies(lib).into_iter().map(|(n, l)| format!("{n} {l:?}")).collect();
        assert_eq!(bodies, ["bridge_meta 1..=3", "run_eval 5..=9", "set_mem 11..=11", "tune 12..=14"]);
    }

    #[test]
    fn vllm_serve_and_scripts_without_a_server() {
        let s = from_script("vllm serve $MODEL --max-num-seqs 256 --kv-cache-dtype fp8\n", "v.sh", &|_, _| None, &[])
            .unwrap();
        assert_eq!(values(&s, "--kv-cache-dtype"), ["fp8"]);
        assert_eq!(from_script("echo hi\n# vllm serve --x\n", "n.sh", &|_, _| None, &[]), None);
        // A script sourcing itself and an unterminated quote never loop or panic.
        let selfish = |_: &str, _: &str| Some(("s.sh".to_owned(), "source s.sh\nX=\"1\n".to_owned()));
        assert_eq!(from_script("source s.sh\n", "s.sh", &selfish, &[]), None);
    }
}
