//! A small, bounded, pure evaluator of the shell subset the runner launchers use to compute the
//! benchmark script they run (decision LM1): `VAR=…`/`export VAR=…`, `${VAR}`, `${VAR%%pat}`,
//! `${VAR%pat}`, `${VAR#pat}`, `${VAR##pat}`, `${VAR:-d}`, `${VAR-d}`, `${VAR:?m}`,
//! `$([[ "$X" == "v" ]] && printf 'a' || printf 'b')`, `if`/`elif`/`else` on `[[ … ]]` tests
//! (`==`, `!=`, globs, `-f`/`! -f` against the tree, `-z`, `-n`), `case` arms, heredocs skipped,
//! function bodies skipped, loop bodies undecided.
//!
//! Nothing is guessed: a value the evaluator cannot compute (an unknown command substitution,
//! a variable of the runner machine's environment, an assignment in a loop or under a test it
//! cannot decide) is an [`Unresolved`] fact naming `file:line`; whatever expands it carries
//! that fact. A test it cannot decide makes the branch *maybe*: scripts run there are kept
//! (the job may run them), assignments there are unresolved.

use std::collections::BTreeMap;

/// Most logical lines one runner script is evaluated for (past it: an unresolved fact).
pub const MAX_LINES: usize = 4096;
/// Deepest nesting of `$(…)`/`${…}` expanded, and of test groups and statement prefixes
/// (`then`, `else`, a case arm) read.
pub(super) const MAX_NESTING: usize = 8;
/// Longest value computed (decision HT1). Linux refuses an argument or environment string
/// longer than 128 KiB (`MAX_ARG_STRLEN`), so a longer value cannot reach the command it is
/// computed for; real launcher values are under 1 KiB. Past it the value is `too_long`.
pub const MAX_VALUE_BYTES: usize = 64 * 1024;
/// Most bytes of known values one script's variables hold together (decision HT1): 4,096
/// lines of 64 KiB values would otherwise keep 256 MiB per evaluated job.
pub const MAX_ENV_BYTES: usize = 1024 * 1024;
/// Most steps one glob match or one `${V%…}` strip takes (pattern length × value length, each
/// bounded); past it the test is undecided and the value `too_long`.
const MAX_GLOB_STEPS: usize = 1 << 26;
/// Most expansions one [`ScriptValues::expand`] evaluates, over every nesting level.
const MAX_EXPANSIONS: usize = 4096;

/// A value the model could not compute, and why (`why` is a stable code, `at` is `file:line`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Unresolved {
    /// The expression or variable, as written (bounded).
    pub what: String,
    /// `command_substitution`, `runner_environment`, `loop`, `undecided_branch`,
    /// `unsupported_expansion`, `arithmetic`, `too_long`, `missing`, `not_text`, `too_deep`,
    /// `too_many_values`, `unparsable_recipe`, `external_recipe`, `no_script`, `unknown_runner`,
    /// `undecided_set` (a launcher `--set` under an undecided test), `bad_override` (a `--set`
    /// srtctl would refuse).
    pub why: &'static str,
    pub at: String,
}

/// Longest `what` kept (untrusted text goes into reports).
pub(crate) const MAX_WHAT: usize = 160;

impl Unresolved {
    pub fn new(what: &str, why: &'static str, at: impl Into<String>) -> Unresolved {
        Unresolved { what: what.chars().take(MAX_WHAT).collect(), why, at: at.into() }
    }
}

/// A variable's value: known, or why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Val {
    Known(String),
    Unresolved(Unresolved),
}

/// Three-valued truth of a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tri {
    No,
    Maybe,
    Yes,
}

impl Tri {
    pub(super) fn of(b: bool) -> Tri {
        if b {
            Tri::Yes
        } else {
            Tri::No
        }
    }
    pub(super) fn not(self) -> Tri {
        match self {
            Tri::Yes => Tri::No,
            Tri::No => Tri::Yes,
            Tri::Maybe => Tri::Maybe,
        }
    }
    pub(super) fn and(self, o: Tri) -> Tri {
        self.min(o)
    }
    pub(super) fn or(self, o: Tri) -> Tri {
        self.max(o)
    }
}

/// The variables in scope: bound inputs, assignments, and which unassigned names read as empty.
#[derive(Debug, Clone, Default)]
pub struct Env {
    vars: BTreeMap<String, Val>,
    /// Names the workflow sets (unset ones read as empty, as bash reads them).
    workflow: Vec<String>,
    /// Bytes of the known values in `vars` (bounded by [`MAX_ENV_BYTES`]).
    bytes: usize,
}

impl Env {
    /// An environment where `workflow` names are the job's (empty unless bound).
    pub fn new(workflow: &[&str]) -> Env {
        Env { vars: BTreeMap::new(), workflow: workflow.iter().map(|s| (*s).to_owned()).collect(), bytes: 0 }
    }

    pub fn bind(&mut self, name: &str, value: &str) {
        self.set(name, Val::Known(value.to_owned()));
    }

    pub fn set(&mut self, name: &str, value: Val) {
        let size = |v: &Val| match v {
            Val::Known(s) => s.len(),
            Val::Unresolved(_) => 0,
        };
        self.bytes += size(&value);
        if let Some(old) = self.vars.insert(name.to_owned(), value) {
            self.bytes -= size(&old);
        }
    }

    /// `value` computed at `at` for variable `name`, unless keeping it would bring the known
    /// values past [`MAX_ENV_BYTES`] (then a `too_long` fact).
    pub fn admit(&self, name: &str, value: String, at: &str) -> Result<String, Unresolved> {
        let replaced = match self.vars.get(name) {
            Some(Val::Known(old)) => old.len(),
            _ => 0,
        };
        match self.bytes - replaced + value.len() > MAX_ENV_BYTES {
            true => Err(Unresolved::new(&format!("${name}"), "too_long", at)),
            false => Ok(value),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Val> {
        self.vars.get(name)
    }

    fn lookup(&self, name: &str, at: &str) -> Result<Option<String>, Unresolved> {
        match self.vars.get(name) {
            Some(Val::Known(v)) => Ok(Some(v.clone())),
            Some(Val::Unresolved(u)) => Err(u.clone()),
            None if self.workflow.iter().any(|w| w == name) => Ok(None),
            None => Err(Unresolved::new(&format!("${name}"), "runner_environment", at)),
        }
    }

    /// Expands one shell word (quotes as bash reads them) at `at` (`file:line`).
    pub fn expand(&self, word: &str, at: &str) -> Result<String, Unresolved> {
        self.expand_depth(word, at, 0)
    }

    fn expand_depth(&self, word: &str, at: &str, depth: usize) -> Result<String, Unresolved> {
        if depth > MAX_NESTING {
            return Err(Unresolved::new(word, "too_deep", at));
        }
        let chars: Vec<char> = word.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        let mut dq = false;
        while i < chars.len() {
            let c = chars[i];
            match c {
                '\'' if !dq => {
                    let end = chars[i + 1..].iter().position(|&c| c == '\'').map_or(chars.len(), |p| i + 1 + p);
                    out.extend(&chars[(i + 1).min(end)..end]);
                    i = end + 1;
                }
                '"' => {
                    dq = !dq;
                    i += 1;
                }
                '\\' if i + 1 < chars.len() => {
                    out.push(chars[i + 1]);
                    i += 2;
                }
                '$' if i + 1 < chars.len() => {
                    let (value, next) = self.dollar(&chars, i, at, depth)?;
                    out.push_str(&value);
                    i = next;
                }
                '`' => return Err(Unresolved::new(word, "command_substitution", at)),
                c => {
                    out.push(c);
                    i += 1;
                }
            }
            // Checked as it grows: `$V$V` of two bounded values is refused before a third.
            if out.len() > MAX_VALUE_BYTES {
                return Err(Unresolved::new(word, "too_long", at));
            }
        }
        Ok(out)
    }

    /// The expansion starting at `chars[i] == '$'` and the index after it.
    fn dollar(&self, chars: &[char], i: usize, at: &str, depth: usize) -> Result<(String, usize), Unresolved> {
        match chars[i + 1] {
            '(' => {
                let end =
                    closing(chars, i + 1, '(', ')').ok_or_else(|| text_err(chars, i, "command_substitution", at))?;
                let inner: String = chars[i + 2..end].iter().collect();
                if inner.starts_with('(') {
                    return Err(Unresolved::new(&format!("$({inner})"), "arithmetic", at));
                }
                Ok((self.substitution(&inner, at, depth)?, end + 1))
            }
            '{' => {
                let end =
                    closing(chars, i + 1, '{', '}').ok_or_else(|| text_err(chars, i, "unsupported_expansion", at))?;
                let inner: String = chars[i + 2..end].iter().collect();
                Ok((self.braced(&inner, at, depth)?, end + 1))
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let end = (i + 1..chars.len())
                    .find(|&j| !(chars[j].is_ascii_alphanumeric() || chars[j] == '_'))
                    .unwrap_or(chars.len());
                let name: String = chars[i + 1..end].iter().collect();
                Ok((self.lookup(&name, at)?.unwrap_or_default(), end))
            }
            _ => Err(text_err(chars, i, "unsupported_expansion", at)),
        }
    }

    /// `${…}`: a name with an operator.
    fn braced(&self, inner: &str, at: &str, depth: usize) -> Result<String, Unresolved> {
        let name_end = inner.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(inner.len());
        let (name, op) = inner.split_at(name_end);
        let unsupported = || Unresolved::new(&format!("${{{inner}}}"), "unsupported_expansion", at);
        if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
            return Err(unsupported());
        }
        let value = || self.lookup(name, at);
        let arg = |rest: &str| self.expand_depth(rest, at, depth + 1);
        if op.is_empty() {
            return Ok(value()?.unwrap_or_default());
        }
        let strip = |pattern: &str, suffix: bool, longest: bool| -> Result<String, Unresolved> {
            let v = value()?.unwrap_or_default();
            let p = arg(pattern)?;
            strip_glob(&v, &p, suffix, longest).ok_or_else(|| Unresolved::new(&format!("${{{inner}}}"), "too_long", at))
        };
        if let Some(rest) = op.strip_prefix("%%") {
            strip(rest, true, true)
        } else if let Some(rest) = op.strip_prefix('%') {
            strip(rest, true, false)
        } else if let Some(rest) = op.strip_prefix("##") {
            strip(rest, false, true)
        } else if let Some(rest) = op.strip_prefix('#') {
            strip(rest, false, false)
        } else if let Some(rest) = op.strip_prefix(":-").or_else(|| op.strip_prefix(":=")) {
            match value()? {
                Some(v) if !v.is_empty() => Ok(v),
                _ => arg(rest),
            }
        } else if let Some(rest) = op.strip_prefix('-') {
            match self.vars.get(name) {
                Some(_) => Ok(value()?.unwrap_or_default()),
                None => arg(rest),
            }
        } else if op.starts_with(":?") || op.starts_with('?') {
            match value()? {
                Some(v) if !v.is_empty() => Ok(v),
                _ => Err(Unresolved::new(&format!("${{{inner}}}"), "runner_environment", at)),
            }
        } else {
            Err(unsupported())
        }
    }

    /// `$(…)`: only `[[ test ]] && printf/echo 'a' || printf/echo 'b'` and a bare
    /// `printf`/`echo` of a word are computed.
    fn substitution(&self, inner: &str, at: &str, depth: usize) -> Result<String, Unresolved> {
        let unknown = || Unresolved::new(&format!("$({inner})"), "command_substitution", at);
        let parts = split_top(inner.trim(), &["&&", "||"]);
        let printed = |cmd: &str| -> Result<Option<String>, Unresolved> {
            let words = split_words(cmd.trim());
            match words.first().map(String::as_str) {
                Some("printf" | "echo") if words.len() <= 2 => {
                    Ok(Some(words.get(1).map(|w| self.expand_depth(w, at, depth + 1)).transpose()?.unwrap_or_default()))
                }
                _ => Ok(None),
            }
        };
        match parts.as_slice() {
            [(_, only)] => printed(only)?.ok_or_else(unknown),
            [(_, test), (and, yes), (or, no)] if and == "&&" && or == "||" => {
                let (Some(yes), Some(no)) = (printed(yes)?, printed(no)?) else { return Err(unknown()) };
                match self.test(test.trim(), at, &|_| Tri::Maybe) {
                    Tri::Yes => Ok(yes),
                    Tri::No => Ok(no),
                    Tri::Maybe => Err(unknown()),
                }
            }
            _ => Err(unknown()),
        }
    }

    /// The truth of a test command (`[[ … ]]`, `[ … ]`, `!`, `&&`/`||` chains); `file` answers
    /// `-f path` for a computed path.
    pub fn test(&self, text: &str, at: &str, file: &dyn Fn(&str) -> Tri) -> Tri {
        self.test_depth(text, at, file, 0)
    }

    /// `depth`: the groups and `[[ … ]]` nested around `text`; past [`MAX_NESTING`] undecided.
    fn test_depth(&self, text: &str, at: &str, file: &dyn Fn(&str) -> Tri, depth: usize) -> Tri {
        if depth > MAX_NESTING {
            return Tri::Maybe;
        }
        let parts = split_top(text, &["&&", "||"]);
        let mut acc: Option<Tri> = None;
        for (op, term) in &parts {
            let t = self.term(term.trim(), at, file, depth);
            acc = Some(match (acc, op.as_str()) {
                (None, _) => t,
                (Some(a), "&&") => a.and(t),
                (Some(a), _) => a.or(t),
            });
        }
        acc.unwrap_or(Tri::Maybe)
    }

    fn term(&self, term: &str, at: &str, file: &dyn Fn(&str) -> Tri, depth: usize) -> Tri {
        // `! ! … x`: negations are counted, not recursed into (60 KB of them took the stack).
        let mut negated = false;
        let mut term = term;
        while let Some(rest) = term.strip_prefix("! ") {
            negated = !negated;
            term = rest.trim();
        }
        let t = self.bare_term(term, at, file, depth);
        match negated {
            true => t.not(),
            false => t,
        }
    }

    fn bare_term(&self, term: &str, at: &str, file: &dyn Fn(&str) -> Tri, depth: usize) -> Tri {
        let inner = term
            .strip_prefix("[[")
            .and_then(|t| t.strip_suffix("]]"))
            .or_else(|| term.strip_prefix('[').and_then(|t| t.strip_suffix(']')));
        let Some(inner) = inner else { return Tri::Maybe };
        let inner = inner.trim();
        let chars: Vec<char> = inner.chars().collect();
        if chars.first() == Some(&'(') && closing(&chars, 0, '(', ')') == Some(chars.len() - 1) {
            // `[[ a && ( b || c ) ]]`: a group is a test of its own.
            let group = format!("[[ {} ]]", &inner[1..inner.len() - 1].trim());
            return match depth < MAX_NESTING {
                true => self.term(&group, at, file, depth + 1),
                false => Tri::Maybe,
            };
        }
        if inner.contains(" && ") || inner.contains(" || ") {
            let wrapped: Vec<(String, String)> = split_top(inner, &["&&", "||"]);
            let joined = wrapped.iter().map(|(op, t)| format!("{op} [[ {} ]] ", t.trim())).collect::<String>();
            return self.test_depth(joined.trim(), at, file, depth + 1);
        }
        let words = split_words(inner);
        let bangs = words.iter().take_while(|w| *w == "!").count();
        if bangs > 0 {
            let rest = self.bare_term(&format!("[[ {} ]]", words[bangs..].join(" ")), at, file, depth + 1);
            return match bangs % 2 {
                1 => rest.not(),
                _ => rest,
            };
        }
        let ex = |w: &str| self.expand(w, at).ok();
        match words.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
            ["-f", p] => ex(p).map_or(Tri::Maybe, |p| file(&p)),
            ["-z", v] => ex(v).map_or(Tri::Maybe, |v| Tri::of(v.is_empty())),
            ["-n", v] => ex(v).map_or(Tri::Maybe, |v| Tri::of(!v.is_empty())),
            [a, op @ ("==" | "=" | "!="), b] => {
                let (Some(a), Some(b)) = (ex(a), self.pattern(b, at)) else { return Tri::Maybe };
                let m = glob(&b, &a).map_or(Tri::Maybe, Tri::of);
                if *op == "!=" {
                    m.not()
                } else {
                    m
                }
            }
            _ => Tri::Maybe,
        }
    }

    /// The right side of `==` as a glob: quoted parts literal (escaped), unquoted `*`/`?` live.
    fn pattern(&self, word: &str, at: &str) -> Option<String> {
        let quoted = word.starts_with('"') || word.starts_with('\'');
        let v = self.expand(word, at).ok()?;
        Some(if quoted { v.replace('*', "\\*").replace('?', "\\?") } else { v })
    }
}

fn text_err(chars: &[char], i: usize, why: &'static str, at: &str) -> Unresolved {
    Unresolved::new(&chars[i..].iter().collect::<String>(), why, at)
}

/// The index of the bracket closing `chars[open]`, quotes respected.
fn closing(chars: &[char], open: usize, o: char, c: char) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    for (j, &ch) in chars.iter().enumerate().skip(open) {
        match (quote, ch) {
            (Some(q), ch) if ch == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') if j > open => quote = Some(ch),
            (None, ch) if ch == o => depth += 1,
            (None, ch) if ch == c => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    None
}

/// Splits at top-level (outside quotes and brackets) operators: `[("", first), ("&&", second), …]`.
pub fn split_top(text: &str, ops: &[&str]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let (mut op, mut cur) = (String::new(), String::new());
    let mut quote: Option<char> = None;
    let mut depth = 0i32;
    let mut rest = text;
    while let Some(ch) = rest.chars().next() {
        if quote.is_none() && depth == 0 {
            if let Some(found) = ops.iter().find(|o| rest.starts_with(**o)) {
                out.push((std::mem::replace(&mut op, (*found).to_owned()), std::mem::take(&mut cur)));
                rest = &rest[found.len()..];
                continue;
            }
        }
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(ch),
            (None, '(' | '{') => depth += 1,
            (None, ')' | '}') => depth -= 1,
            (None, '[') if rest.starts_with("[[") => depth += 1,
            (None, ']') if rest.starts_with("]]") => depth -= 1,
            _ => {}
        }
        if ch == '\\' && rest.len() > 1 {
            let next = rest[1..].chars().next().unwrap_or(' ');
            cur.push(ch);
            cur.push(next);
            rest = &rest[1 + next.len_utf8()..];
            continue;
        }
        cur.push(ch);
        rest = &rest[ch.len_utf8()..];
    }
    out.push((op, cur));
    out
}

/// Shell words of a command with their quotes kept (for [`Env::expand`]); `$(…)`, `${…}` and
/// quoted text stay in one word; a `#` at a word start ends the line.
pub fn split_words(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                i += 1;
            }
            '#' if cur.is_empty() => break,
            '\'' | '"' => {
                let end = (i + 1..chars.len())
                    .find(|&j| chars[j] == c && (c == '\'' || chars[j - 1] != '\\'))
                    .unwrap_or(chars.len() - 1);
                cur.extend(&chars[i..=end]);
                i = end + 1;
            }
            '$' if matches!(chars.get(i + 1), Some('(' | '{')) => {
                let (o, cl) = if chars[i + 1] == '(' { ('(', ')') } else { ('{', '}') };
                let end = closing(&chars, i + 1, o, cl).unwrap_or(chars.len() - 1);
                cur.extend(&chars[i..=end]);
                i = end + 1;
            }
            '\\' if i + 1 < chars.len() => {
                cur.push(c);
                cur.push(chars[i + 1]);
                i += 2;
            }
            c => {
                cur.push(c);
                i += 1;
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// One element of a shell glob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GlobToken {
    Star,
    Any,
    Literal(char),
}

/// The tokens of a glob (`*`, `?`, `\x` literal; runs of `*` are one).
fn glob_tokens(pattern: &str) -> Vec<GlobToken> {
    let mut out = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        let token = match c {
            '*' => GlobToken::Star,
            '?' => GlobToken::Any,
            '\\' => GlobToken::Literal(chars.next().unwrap_or('\\')),
            c => GlobToken::Literal(c),
        };
        if !(token == GlobToken::Star && out.last() == Some(&GlobToken::Star)) {
            out.push(token);
        }
    }
    out
}

/// For every prefix length `k` of `text` (`0..=len`), whether `tokens` match `text[..k]`: one
/// pass over the text with the set of pattern positions reached (decision HT1), so a strip tries
/// every cut point in time linear in the value, not a glob per cut point. `None` past
/// [`MAX_GLOB_STEPS`].
fn prefix_matches(tokens: &[GlobToken], text: &[char]) -> Option<Vec<bool>> {
    let n = tokens.len();
    if text.len().saturating_add(1).saturating_mul(n + 1) > MAX_GLOB_STEPS {
        return None;
    }
    // A `*` also matches nothing: reaching it reaches the position after it.
    let close = |set: &mut [bool]| {
        for i in 0..n {
            if set[i] && tokens[i] == GlobToken::Star {
                set[i + 1] = true;
            }
        }
    };
    let mut reached = vec![false; n + 1];
    reached[0] = true;
    close(&mut reached);
    let mut matches = vec![false; text.len() + 1];
    matches[0] = reached[n];
    let mut next = vec![false; n + 1];
    for (k, &c) in text.iter().enumerate() {
        next.iter_mut().for_each(|r| *r = false);
        for i in (0..n).filter(|&i| reached[i]) {
            match tokens[i] {
                GlobToken::Star => next[i] = true,
                GlobToken::Any => next[i + 1] = true,
                GlobToken::Literal(l) if l == c => next[i + 1] = true,
                GlobToken::Literal(_) => {}
            }
        }
        close(&mut next);
        std::mem::swap(&mut reached, &mut next);
        if !reached.contains(&true) {
            break; // no longer prefix can match
        }
        matches[k + 1] = reached[n];
    }
    Some(matches)
}

/// Whether `text` matches the shell glob `pattern` (`*`, `?`, `\x` literal); `None` when
/// deciding it would take more than [`MAX_GLOB_STEPS`].
pub fn glob(pattern: &str, text: &str) -> Option<bool> {
    let text: Vec<char> = text.chars().collect();
    prefix_matches(&glob_tokens(pattern), &text).map(|m| m[text.len()])
}

/// `${v%pat}` family: removes the shortest/longest prefix/suffix matching `pattern`. A suffix
/// is matched as a prefix of the reversed value by the reversed pattern. `None` when it would
/// take more than [`MAX_GLOB_STEPS`].
fn strip_glob(v: &str, pattern: &str, suffix: bool, longest: bool) -> Option<String> {
    let chars: Vec<char> = v.chars().collect();
    let mut tokens = glob_tokens(pattern);
    let text: Vec<char> = match suffix {
        true => {
            tokens.reverse();
            chars.iter().rev().copied().collect()
        }
        false => chars.clone(),
    };
    let matches = prefix_matches(&tokens, &text)?;
    let cut = match longest {
        true => matches.iter().rposition(|&m| m),
        false => matches.iter().position(|&m| m),
    };
    Some(match (cut, suffix) {
        (None, _) => v.to_owned(),
        (Some(k), true) => chars[..chars.len() - k].iter().collect(),
        (Some(k), false) => chars[k..].iter().collect(),
    })
}

/// `NAME=value` at a command's start.
pub(super) fn assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    let ok = !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !name.as_bytes()[0].is_ascii_digit();
    ok.then_some((name, value))
}

/// The words of a statement after its declaration keyword (`export`, `local`, `declare -x`, …).
pub(super) fn after_declaration(words: &[String]) -> &[String] {
    let mut i = 0;
    let mut declared = false;
    while let Some(w) = words.get(i) {
        if matches!(w.as_str(), "export" | "local" | "declare" | "readonly" | "typeset") {
            declared = true;
        } else if !(w == "{" || declared && w.starts_with('-')) {
            break;
        }
        i += 1;
    }
    &words[i..]
}

/// Every value each variable of a script may hold: each `NAME=value` it assigns, on any line
/// and in any branch, as written. A check that must consider every path a script may touch
/// (Check 10's engine writes) expands words over all of them, through [`Env::expand`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScriptValues {
    written: BTreeMap<String, Vec<String>>,
}

impl ScriptValues {
    pub fn of(text: &str) -> ScriptValues {
        let mut written: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (_, line) in logical_lines(text).into_iter().take(MAX_LINES) {
            for statement in split_top(&line, &["&&", "||", ";"]).into_iter().map(|(_, st)| st) {
                let mut words = split_words(statement.trim());
                // A `case` arm's pattern (`8)`, `*)`) opens the statement it guards.
                if words.first().is_some_and(|w| w.ends_with(')') && !w.contains(['=', '$', '('])) {
                    words.remove(0);
                }
                for word in after_declaration(&words).iter().map_while(|w| assignment(w)) {
                    // An unquoted `;` ends a statement (`8) AL=3.5;;`), never a value.
                    let (name, value) = (word.0, word.1.trim_end_matches(';'));
                    let known = written.entry(name.to_owned()).or_default();
                    if !known.iter().any(|v| v == value) {
                        known.push(value.to_owned());
                    }
                }
            }
        }
        ScriptValues { written }
    }

    /// Every expansion of `word` over the values its variables may hold, at most `max`.
    /// `fixed` binds names whatever the script assigns. A variable the script never assigns
    /// reads as unset where the word gives it a default (`${NAME:-d}`), and is unresolved
    /// elsewhere; a command substitution is unresolved (its text is in the fact).
    /// At most [`MAX_EXPANSIONS`] expansions are evaluated over every nesting level (past it:
    /// `too_many_values`): values naming many multi-valued variables, nested eight deep,
    /// would otherwise multiply.
    pub fn expand(&self, word: &str, fixed: &[(&str, &str)], max: usize) -> Result<Vec<String>, Unresolved> {
        self.expand_within(word, fixed, max, &[], &std::cell::Cell::new(0))
    }

    /// `within`: the variables whose values are being expanded. A value that names its own
    /// variable (`N="${N:-2}"`) reads it as it was before the assignment: unset.
    fn expand_within(
        &self,
        word: &str,
        fixed: &[(&str, &str)],
        max: usize,
        within: &[String],
        spent: &std::cell::Cell<usize>,
    ) -> Result<Vec<String>, Unresolved> {
        if within.len() > MAX_NESTING {
            return Err(Unresolved::new(word, "too_deep", word));
        }
        let mut choices: Vec<(String, Vec<String>)> = Vec::new();
        let mut unset: Vec<String> = Vec::new();
        for (name, defaulted) in references(word) {
            if choices.iter().any(|(n, _)| *n == name) || unset.contains(&name) {
                continue;
            }
            if let Some((_, v)) = fixed.iter().find(|(n, _)| *n == name) {
                choices.push((name, vec![(*v).to_owned()]));
            } else if let Some(raws) = self.written.get(&name).filter(|_| !within.contains(&name)) {
                let mut values: Vec<String> = Vec::new();
                let inner: Vec<String> = within.iter().cloned().chain([name.clone()]).collect();
                for raw in raws {
                    // A value computed by a command keeps its text, so what it names stays visible.
                    let expanded = match self.expand_within(raw, fixed, max, &inner, spent) {
                        Err(u) if u.why == "command_substitution" => vec![raw.clone()],
                        other => other?,
                    };
                    for v in expanded {
                        if !values.contains(&v) {
                            values.push(v);
                        }
                    }
                }
                choices.push((name, values));
            } else if defaulted {
                unset.push(name);
            } else {
                return Err(Unresolved::new(&format!("${name}"), "runner_environment", word));
            }
        }
        let combinations = choices.iter().try_fold(1usize, |n, (_, v)| n.checked_mul(v.len().max(1)));
        if combinations.is_none_or(|n| n > max) {
            return Err(Unresolved::new(word, "too_many_values", word));
        }
        let unset: Vec<&str> = unset.iter().map(String::as_str).collect();
        let mut out: Vec<String> = Vec::new();
        let mut pick = vec![0usize; choices.len()];
        loop {
            let mut env = Env::new(&unset);
            for ((name, values), &i) in choices.iter().zip(&pick) {
                if let Some(v) = values.get(i) {
                    env.bind(name, v);
                }
            }
            spent.set(spent.get() + 1);
            if spent.get() > MAX_EXPANSIONS {
                return Err(Unresolved::new(word, "too_many_values", word));
            }
            let value = env.expand(word, word)?;
            if !out.contains(&value) {
                out.push(value);
            }
            // The next combination, odometer-style.
            let Some(k) = (0..pick.len()).rev().find(|&k| pick[k] + 1 < choices[k].1.len()) else { break };
            pick[k] += 1;
            pick[k + 1..].iter_mut().for_each(|p| *p = 0);
        }
        Ok(out)
    }
}

/// The variables a word references (`$NAME`, `${NAME…}`, nested defaults included), each with
/// whether that reference gives a default (`${NAME:-…}`, `${NAME-…}`, `${NAME:=…}`).
fn references(word: &str) -> Vec<(String, bool)> {
    let bytes = word.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        let braced = bytes.get(i + 1) == Some(&b'{');
        let start = i + 1 + usize::from(braced);
        let end = (start..bytes.len())
            .find(|&j| !(bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_'))
            .unwrap_or(bytes.len());
        if end > start && !bytes[start].is_ascii_digit() {
            let rest = &word[end..];
            let defaulted = braced && (rest.starts_with(":-") || rest.starts_with('-') || rest.starts_with(":="));
            out.push((word[start..end].to_owned(), defaulted));
        }
        i = end.max(i + 1);
    }
    out
}

/// Lines with `\` continuations joined, each with its first line number.
pub fn logical_lines(text: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut pending: Option<(u32, String)> = None;
    for (index, raw) in text.lines().enumerate() {
        let line = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let (start, mut joined) = pending.take().unwrap_or((line, String::new()));
        let trimmed = raw.trim_end();
        if let Some(body) = trimmed.strip_suffix('\\') {
            joined.push_str(body);
            joined.push(' ');
            pending = Some((start, joined));
        } else {
            joined.push_str(trimmed);
            out.push((start, joined));
        }
    }
    out.extend(pending);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_values_expand_words_over_every_value_a_variable_may_hold() {
        let script =
            "if [[ $X ]]; then\n  DIR=/opt/a\nelse\n  declare -x DIR=\"/opt/b\"\nfi\nSUB=${DIR}/s; LOG=$(date)\n";
        let v = ScriptValues::of(script);
        assert_eq!(v.expand("$SUB/f", &[], 16).unwrap(), ["/opt/a/s/f", "/opt/b/s/f"]);
        assert_eq!(v.expand("${UNSET:-${DIR}}", &[], 16).unwrap(), ["/opt/a", "/opt/b"], "nested defaults");
        assert_eq!(v.expand("$WS/x", &[("WS", "<repository>")], 16).unwrap(), ["<repository>/x"]);
        assert_eq!(v.expand("$UNSET/x", &[], 16).unwrap_err().why, "runner_environment");
        assert_eq!(v.expand("$LOG", &[], 16).unwrap(), ["$(date)"], "a command's value keeps its text");
        assert_eq!(
            v.expand("$SUB$SUB", &[], 2).unwrap(),
            ["/opt/a/s/opt/a/s", "/opt/b/s/opt/b/s"],
            "one value per run"
        );
        assert_eq!(v.expand("$SUB", &[], 1).unwrap_err().why, "too_many_values");
        // A default that names its own variable, and assignments in `case` arms.
        let v = ScriptValues::of("N=\"${N:-2}\"\ncase $C in\n  8) AL=3.5;;\n  *) AL=2.9 ;;\nesac\n");
        assert_eq!(v.expand("$N", &[], 16).unwrap(), ["2"]);
        assert_eq!(v.expand("$AL", &[], 16).unwrap(), ["3.5", "2.9"]);
    }

    fn env() -> Env {
        let mut e = Env::new(&["SCENARIO_SUBDIR", "CONFIG_FILE"]);
        e.bind("EXP_NAME", "qwen3.5_1k1k");
        e.bind("FRAMEWORK", "sglang");
        e.bind("SPEC_DECODING", "mtp");
        e
    }

    #[test]
    fn parameter_expansions_and_printf_substitutions_compute() {
        let e = env();
        assert_eq!(e.expand("\"${EXP_NAME%%_*}\"", "f:1").unwrap(), "qwen3.5");
        assert_eq!(e.expand("${EXP_NAME#*_}", "f:1").unwrap(), "1k1k");
        assert_eq!(e.expand("${SCENARIO_SUBDIR:-fixed_seq_len/}x", "f:1").unwrap(), "fixed_seq_len/x");
        assert_eq!(e.expand("$CONFIG_FILE", "f:1").unwrap(), "");
        let fw = "$([[ \"$FRAMEWORK\" == \"trt\" ]] && printf '_trt' || printf '')";
        assert_eq!(e.expand(fw, "f:1").unwrap(), "");
        let spec = "$([[ \"$SPEC_DECODING\" == \"mtp\" ]] && printf '_mtp' || printf '')";
        assert_eq!(e.expand(spec, "f:1").unwrap(), "_mtp");
    }

    #[test]
    fn what_cannot_be_computed_is_named_with_its_line() {
        let e = env();
        let u = e.expand("$(ls /x | head -1)", "r.sh:7").unwrap_err();
        assert_eq!((u.why, u.at.as_str()), ("command_substitution", "r.sh:7"));
        assert_eq!(e.expand("$MODEL_PATH/x", "r.sh:8").unwrap_err().why, "runner_environment");
        assert_eq!(e.expand("$((1+2))", "r.sh:9").unwrap_err().why, "arithmetic");
        assert_eq!(e.expand("${EXP_NAME/q/x}", "r.sh:9").unwrap_err().why, "unsupported_expansion");
        // Hostile text never panics.
        for odd in ["$", "${", "$(", "\"", "'", "${:}", "$((", "`x`", "${A:-${B:-${C"] {
            let _ = e.expand(odd, "x:1");
        }
    }

    #[test]
    fn tests_decide_on_values_and_the_tree_and_stay_undecided_otherwise() {
        let e = env();
        let no_file = |_: &str| Tri::No;
        assert_eq!(e.test("[[ \"$FRAMEWORK\" == \"sglang\" ]]", "f:1", &no_file), Tri::Yes);
        assert_eq!(e.test("[[ $EXP_NAME == qwen* && $FRAMEWORK != trt ]]", "f:1", &no_file), Tri::Yes);
        assert_eq!(e.test("[[ \"$EXP_NAME\" == \"qwen*\" ]]", "f:1", &no_file), Tri::No, "quoted globs are literal");
        assert_eq!(e.test("[[ ! -f \"x.sh\" ]]", "f:1", &no_file), Tri::Yes);
        assert_eq!(e.test("[[ -z \"$CONFIG_FILE\" ]]", "f:1", &no_file), Tri::Yes);
        assert_eq!(e.test("[[ -d /lustre ]]", "f:1", &no_file), Tri::Maybe);
        assert_eq!(e.test("command -v srtctl", "f:1", &no_file), Tri::Maybe);
        assert_eq!(e.test("[[ $FRAMEWORK == trt ]] || [[ -d /x ]]", "f:1", &no_file), Tri::Maybe);
        assert_eq!(e.test("[[ $FRAMEWORK == sglang ]] || [[ -d /x ]]", "f:1", &no_file), Tri::Yes);
        // launch_b300-nv.sh:100: a group inside `[[ ]]` is decided like any test.
        let mut e = e;
        e.bind("PRECISION", "fp8");
        let grouped = "[[ $FRAMEWORK == trt && ( $PRECISION == fp4 || $PRECISION == fp8 ) ]]";
        assert_eq!(e.test(grouped, "f:1", &no_file), Tri::No);
        let grouped = "[[ $FRAMEWORK == sglang && ( $PRECISION == fp4 || $PRECISION == fp8 ) ]]";
        assert_eq!(e.test(grouped, "f:1", &no_file), Tri::Yes);
        assert_eq!(e.test("[[ ( -d /x ) ]]", "f:1", &no_file), Tri::Maybe);
    }

    #[test]
    fn globs_and_strips_follow_bash() {
        assert_eq!(glob("*NVFP4-V2", "nvidia/Qwen3.5-NVFP4-V2"), Some(true));
        assert_eq!(glob("a\\*", "ab"), Some(false));
        assert_eq!(glob("a\\*", "a*"), Some(true));
        assert_eq!(glob("recipes/*/b*.yaml", "recipes/x/y/bz.yaml"), Some(true));
        assert_eq!(glob("?x**", "ax"), Some(true));
        assert_eq!(glob("a*b", "ab_"), Some(false));
        let strip = |v, p, suffix, longest| strip_glob(v, p, suffix, longest).unwrap();
        assert_eq!(strip("a_b_c", "_*", true, true), "a");
        assert_eq!(strip("a_b_c", "_*", true, false), "a_b");
        assert_eq!(strip("a_b_c", "*_", false, true), "c");
        assert_eq!(strip("a_b_c", "*_", false, false), "b_c");
        assert_eq!(strip("a_b_c", "x*", true, true), "a_b_c", "no match keeps the value");
        assert_eq!(strip("a_b_c", "*", true, false), "a_b_c", "the shortest suffix `*` matches is empty");
        assert_eq!(strip("recipes/x.yaml:sel", ":*", true, true), "recipes/x.yaml");
        assert_eq!(strip("qwen3.5_1k1k", "q?en", false, false), "3.5_1k1k");
    }

    /// Issue 35 case 1: `V1=$V0$V0` for 21 lines took `serve` to 3.7 GB. A value stops at
    /// [`MAX_VALUE_BYTES`]; what expands it is `too_long`.
    #[test]
    fn a_doubling_value_stops_at_the_value_bound() {
        let mut e = Env::new(&[]);
        e.bind("V0", &"x".repeat(64));
        let mut last = None;
        for i in 1..=21 {
            let computed = e.expand(&format!("$V{}$V{}", i - 1, i - 1), &format!("r.sh:{i}"));
            e.set(&format!("V{i}"), computed.clone().map_or_else(Val::Unresolved, Val::Known));
            last = Some(computed);
        }
        let u = last.unwrap().unwrap_err();
        assert_eq!(
            (u.why, u.at.as_str()),
            ("too_long", "r.sh:11"),
            "64 B doubled 10 times is 64 KiB, the 11th is past it"
        );
        assert!(e.expand("$V10", "r.sh:22").is_ok_and(|v| v.len() == MAX_VALUE_BYTES));
        // The env's total is bounded too: a second 64 KiB value is admitted, the 17th is not.
        let big = "y".repeat(MAX_VALUE_BYTES);
        let mut e = Env::new(&[]);
        for i in 0..(MAX_ENV_BYTES / MAX_VALUE_BYTES) {
            let v = e.admit(&format!("B{i}"), big.clone(), "r.sh:1").unwrap();
            e.set(&format!("B{i}"), Val::Known(v));
        }
        assert_eq!(e.admit("B0", big.clone(), "r.sh:2").unwrap().len(), big.len(), "a replaced value frees its bytes");
        assert_eq!(e.admit("MORE", big, "r.sh:3").unwrap_err().why, "too_long");
    }

    /// Issue 35 case 2: `if ! ! ! … true` (60 KB) overflowed a worker's stack.
    #[test]
    fn sixty_kilobytes_of_negations_and_groups_are_read_without_recursion() {
        let e = env();
        let no_file = |_: &str| Tri::No;
        let bangs = "! ".repeat(30_000);
        assert_eq!(e.test(&format!("{bangs}[[ -z \"\" ]]"), "f:1", &no_file), Tri::Yes, "an even count");
        assert_eq!(e.test(&format!("! {bangs}[[ -z \"\" ]]"), "f:1", &no_file), Tri::No, "an odd count");
        assert_eq!(e.test(&format!("{bangs}true"), "f:1", &no_file), Tri::Maybe);
        assert_eq!(e.test(&format!("[[ {bangs}-z \"\" ]]"), "f:1", &no_file), Tri::Yes, "inside [[ ]]");
        let groups = format!("[[ {}-z \"\"{} ]]", "( ".repeat(20_000), " )".repeat(20_000));
        assert_eq!(e.test(&groups, "f:1", &no_file), Tri::Maybe, "groups past the nesting bound are undecided");
        let groups = format!("[[ {}-z \"\"{} ]]", "( ".repeat(3), " )".repeat(3));
        assert_eq!(e.test(&groups, "f:1", &no_file), Tri::Yes);
    }

    /// Issue 35 case 4: `W=${V%%*b}` on a 128 KiB value tried a glob at every cut point
    /// (16.8 s). The strip is one pass; a match too costly to decide is `too_long`.
    #[test]
    fn strips_are_linear_in_the_value() {
        let v = "a".repeat(128 * 1024);
        let started = std::time::Instant::now();
        assert_eq!(strip_glob(&v, "*b", true, true).unwrap().len(), v.len());
        assert_eq!(strip_glob(&v, "*a", true, false).unwrap().len(), v.len() - 1);
        assert_eq!(strip_glob(&v, "a*a", false, true).unwrap(), "");
        assert_eq!(glob("*a*a*a*a*b", &v), Some(false));
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "took {:?}", started.elapsed());
        let mut e = Env::new(&[]);
        e.bind("V", &"a".repeat(MAX_VALUE_BYTES));
        assert_eq!(e.expand("${V%%*b}", "r.sh:3").unwrap().len(), MAX_VALUE_BYTES);
        e.bind("P", &"*a".repeat(2048));
        assert_eq!(e.expand("${V%%$P}", "r.sh:4").unwrap_err().why, "too_long", "pattern × value past the step bound");
        assert_eq!(e.test("[[ $V == $P ]]", "r.sh:5", &|_| Tri::No), Tri::Maybe);
    }

    /// Variables naming many multi-valued variables, nested: the expansions are counted.
    #[test]
    fn script_values_count_their_expansions() {
        let mut script = String::new();
        for level in 0..8 {
            for value in 0..4 {
                if level < 7 {
                    let refs: String = (0..4).map(|v| format!("$L{}_{v}", level + 1)).collect();
                    script.push_str(&format!("L{level}_{value}={refs}\n"));
                }
                script.push_str(&format!("L{level}_{value}=x{value}\n"));
            }
        }
        let values = ScriptValues::of(&script);
        let started = std::time::Instant::now();
        assert_eq!(values.expand("$L0_0", &[], 1 << 20).unwrap_err().why, "too_many_values");
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "took {:?}", started.elapsed());
    }
}
