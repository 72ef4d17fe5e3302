//! One runner launcher (`runners/launch_<node>.sh`) evaluated for one job: which benchmark
//! script it runs (decision LM1). Control flow is followed as bash runs it where the tests can
//! be decided (see [`super::shell`]); undecided branches are *maybe*.

use super::shell::logical_lines;
use super::shell::{
    after_declaration, assignment, split_top, split_words, Env, Tri, Unresolved, Val, MAX_LINES, MAX_NESTING,
};
use crate::repo::{normalize_path, MemTree};

/// What a runner launcher runs for one job.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunnerRun {
    /// Benchmark scripts it runs (repository paths, as computed) with the `file:line` that runs
    /// each and whether that line runs for sure (`false`: under an undecided test).
    pub scripts: Vec<(String, String, bool)>,
    /// The srt-slurm checkouts it clones (`git clone` then `git checkout`), in order.
    pub checkouts: Vec<Checkout>,
    /// Repository folders it copies into the checkout (`cp -rT <workspace dir> <checkout dir>`).
    pub copies: Vec<CheckoutCopy>,
    /// `file:line` of its `srtctl apply`: the job runs the `CONFIG_FILE` recipe of the checkout.
    pub srtctl: Option<String>,
    /// Its native single-node runs (`launch_srt_single_node <pool profile>`, Oct 2026 layout):
    /// the job runs the row's `srt-recipe:` recipe on that pool profile (decision TD5).
    pub native: Vec<NativeRun>,
    /// The `--set KEY=VALUE` and `--unset KEY` arguments it gives srtctl (decision TD9), in order.
    pub sets: Vec<SetArg>,
    pub unresolved: Vec<Unresolved>,
    /// Every variable assignment in a branch that may run, with the branch it sits in.
    pub assignments: Vec<Assignment>,
}

/// One `launch_srt_single_node <profile>` call of a launcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeRun {
    /// The pool profile the call names (`mi300x-amd`: `runners/srt-slurm/mi300x-amd.yaml`).
    pub profile: String,
    pub at: String,
    /// Whether the call runs for sure (`false`: under an undecided test).
    pub sure: bool,
}

/// One `--set KEY=VALUE` or `--unset KEY` a launcher passes srtctl
/// (`SRTCTL_APPLY_ARGS+=(--set "…")`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetArg {
    /// `--unset` (else `--set`).
    pub unset: bool,
    /// `KEY=VALUE` (`KEY` for `--unset`) as computed for the job.
    pub arg: String,
    pub at: String,
    /// Whether it is passed for sure (`false`: under an undecided test).
    pub sure: bool,
}

/// The `runners/slurm_utils.sh` function that runs a native single-node srt-slurm recipe.
pub const NATIVE_SINGLE_NODE: &str = "launch_srt_single_node";

/// One `NAME=value` statement as the evaluator met it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    pub name: String,
    /// The value computed as written, whether or not the branch surely runs.
    pub value: Result<String, Unresolved>,
    pub line: u32,
    /// The branch it sits in: for each enclosing `if`/`case`/loop, outermost first, the block's
    /// number in the file and its arm (`then` 0, each `elif`/`else`/case arm the next).
    pub branch: Vec<(usize, usize)>,
}

/// A repository the launcher clones to run `srtctl` from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    /// `owner/name` of a GitHub URL, else the URL as computed.
    pub repo: String,
    /// The branch, tag or commit checked out; `None`: the default branch.
    pub rev: Option<String>,
    pub at: String,
    /// Whether the clone runs for sure (`false`: under an undecided test).
    pub sure: bool,
}

/// A repository folder or file copied over the checkout, as the recipes `srtctl` reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckoutCopy {
    /// Repository path of the source.
    pub from: String,
    /// Checkout-relative destination (`recipes/vllm/kimi-k3/agentic`, or a file's path).
    pub to: String,
    /// A folder's contents (`cp -rT`), else one file.
    pub folder: bool,
    pub at: String,
    pub sure: bool,
}

impl CheckoutCopy {
    /// The repository file a checkout path `rel` is, if this copy wrote it.
    pub fn source_of(&self, rel: &str) -> Option<String> {
        if self.folder {
            rel.strip_prefix(&format!("{}/", self.to)).map(|rest| format!("{}/{rest}", self.from))
        } else {
            (rel == self.to).then(|| self.from.clone())
        }
    }
}

impl RunnerRun {
    /// The checkout a job runs `srtctl` in: the one clone that surely runs, else the only one.
    pub fn checkout(&self) -> Option<&Checkout> {
        let sure: Vec<&Checkout> = self.checkouts.iter().filter(|c| c.sure).collect();
        match (sure.as_slice(), self.checkouts.as_slice()) {
            ([one], _) => Some(*one),
            ([], [one]) => Some(one),
            _ => None,
        }
    }
}

#[derive(Debug)]
enum Frame {
    /// `if` chain: activity of the current branch, and whether an earlier branch surely ran.
    If {
        active: Tri,
        done: Tri,
        arm: (usize, usize),
    },
    Case {
        value: Option<String>,
        active: Tri,
        done: Tri,
        arm: (usize, usize),
    },
    Loop {
        arm: (usize, usize),
    },
}

/// The open `if`/`case`/loop blocks, innermost last, how many blocks the file opened so far, and
/// the logical line being read.
#[derive(Debug, Default)]
struct Frames {
    stack: Vec<Frame>,
    opened: usize,
    line: u32,
}

impl Frames {
    fn open(&mut self, frame: impl FnOnce((usize, usize)) -> Frame) {
        self.opened += 1;
        self.stack.push(frame((self.opened, 0)));
    }
}

/// The branch the current statement is in (see [`Assignment::branch`]).
fn branch(frames: &[Frame]) -> Vec<(usize, usize)> {
    frames
        .iter()
        .map(|f| match f {
            Frame::If { arm, .. } | Frame::Case { arm, .. } | Frame::Loop { arm } => *arm,
        })
        .collect()
}

fn activity(frames: &[Frame]) -> Tri {
    frames.iter().fold(Tri::Yes, |acc, f| {
        acc.min(match f {
            Frame::If { active, .. } | Frame::Case { active, .. } => *active,
            Frame::Loop { .. } => Tri::Maybe,
        })
    })
}

fn in_loop(frames: &[Frame]) -> bool {
    frames.iter().any(|f| matches!(f, Frame::Loop { .. }))
}

/// Heredoc terminator of a line (`<<EOF`, `<<'EOF'`, `<<-"EOF"`).
fn heredoc(line: &str) -> Option<String> {
    let at = line.find("<<")?;
    let rest = line[at + 2..].trim_start_matches('-').trim_start();
    if rest.starts_with('<') {
        return None; // `<<<` here-string
    }
    let word: String = rest.chars().take_while(|c| !c.is_whitespace() && *c != ';' && *c != ')').collect();
    let word = word.trim_matches(['\'', '"']).to_owned();
    (!word.is_empty()).then_some(word)
}

/// A `name() {` / `function name {` line.
fn function_start(line: &str) -> bool {
    let t = line.trim();
    let t = t.strip_prefix("function ").unwrap_or(t);
    let Some((name, rest)) = t.split_once("()").or_else(|| t.split_once(" {")) else { return false };
    let name = name.trim();
    !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && (rest.trim() == "{" || rest.trim().is_empty() || t.ends_with('{'))
        && !t.starts_with("if ")
}

/// Whether a quote opened on this line stays open at its end (a multi-line `bash -c "…"`).
fn open_quote(line: &str, mut quote: Option<char>) -> Option<char> {
    let mut escaped = false;
    let mut word_start = true;
    for c in line.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (_, '\\') if quote != Some('\'') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (None, '#') if word_start => break,
            (None, '\'' | '"') => quote = Some(c),
            _ => {}
        }
        word_start = quote.is_none() && (c.is_whitespace() || c == ';');
    }
    quote
}

/// Evaluates `text` (the runner script at `path`) in `env`; `root` is the repository prefix the
/// job's working directory is (`""`, or `inferencex-e2e/` in the newer layout).
pub fn evaluate(tree: &MemTree, path: &str, text: &str, env: &mut Env, root: &str) -> RunnerRun {
    let mut run = RunnerRun::default();
    let mut frames = Frames::default();
    // A heredoc's terminator, or (function body) the indentation of its `}`.
    let mut skip_until: Option<(String, Option<usize>)> = None;
    let mut quote: Option<char> = None;
    let exists = |p: &str| -> Tri {
        match repo_path(p, root) {
            Some(rp) => Tri::of(tree.get(&rp).is_some()),
            None => Tri::Maybe,
        }
    };
    let lines = logical_lines(text);
    if lines.len() > MAX_LINES {
        run.unresolved.push(Unresolved::new(path, "too_long", format!("{path}:{MAX_LINES}")));
    }
    for (number, raw) in lines.into_iter().take(MAX_LINES) {
        let at = format!("{path}:{number}");
        if let Some((term, function)) = &skip_until {
            let t = raw.trim();
            let indent = raw.len() - raw.trim_start().len();
            let ends = match function {
                Some(at) => t.starts_with('}') && indent <= *at,
                None => t == term,
            };
            if ends {
                skip_until = None;
            }
            continue;
        }
        let inside_string = quote.is_some();
        quote = open_quote(&raw, quote);
        let act = activity(&frames.stack);
        if inside_string {
            // A line of a multi-line `bash -c "…"`: commands run remotely; only runs count.
            scan_runs(&raw, &at, act, env, root, &mut run, 0);
            continue;
        }
        if let Some(term) = heredoc(&raw) {
            skip_until = Some((term, None));
        }
        if function_start(&raw) && !raw.trim_end().ends_with('}') {
            skip_until = Some((String::new(), Some(raw.len() - raw.trim_start().len())));
            continue;
        }
        frames.line = number;
        let statements = split_top(raw.trim(), &[";", "&&", "||"]);
        // A list after `&&`/`||` may not run: its `exit` ends the script only when all of it runs.
        let unconditional = statements.iter().all(|(op, _)| op.is_empty() || op == ";");
        for (_, statement) in statements {
            let statement = statement.trim();
            statement_step(statement, &at, &mut frames, env, &exists, root, &mut run, 0);
            let exits = unconditional && statement.split_whitespace().next() == Some("exit");
            if exits && run.native.iter().any(|n| n.sure) && activity(&frames.stack) == Tri::Yes {
                // Decision TD5: after a surely-run native single-node call, a surely-run `exit`
                // ends the launcher (the Oct 2026 launchers exit before their Bash benchmark
                // path). Other exits stay unfollowed: their tests read files of a checkout the
                // tree does not hold.
                run.unresolved.sort();
                run.unresolved.dedup();
                return run;
            }
        }
    }
    run.unresolved.sort();
    run.unresolved.dedup();
    run
}

/// `depth`: the prefixes (`then`, `do`, `else`, a case arm) read before `st` on its line; past
/// [`MAX_NESTING`] the rest of the statement is a `too_deep` fact, not another stack frame.
#[allow(clippy::too_many_arguments)]
fn statement_step(
    st: &str,
    at: &str,
    frames: &mut Frames,
    env: &mut Env,
    exists: &dyn Fn(&str) -> Tri,
    root: &str,
    run: &mut RunnerRun,
    depth: usize,
) {
    if depth > MAX_NESTING {
        run.unresolved.push(Unresolved::new(st, "too_deep", at));
        return;
    }
    let first = st.split_whitespace().next().unwrap_or("");
    match first {
        "if" => {
            let t = env.test(st[2..].trim(), at, exists);
            // The caller splits `if …; then body` at `;`: the test alone is read here.
            frames.open(|arm| Frame::If { active: t, done: t, arm });
            return;
        }
        "elif" => {
            if let Some(Frame::If { active, done, arm }) = frames.stack.last_mut() {
                let t = env.test(st[4..].trim(), at, exists);
                let next = done.not().and(t);
                *active = next;
                *done = done.or(t);
                arm.1 += 1;
            }
            return;
        }
        "else" => {
            if let Some(Frame::If { active, done, arm }) = frames.stack.last_mut() {
                *active = done.not();
                *done = Tri::Yes;
                arm.1 += 1;
            }
            let rest = st[4..].trim();
            if !rest.is_empty() {
                statement_step(rest, at, frames, env, exists, root, run, depth + 1);
            }
            return;
        }
        "then" | "do" => {
            let rest = st[first.len()..].trim();
            if !rest.is_empty() {
                statement_step(rest, at, frames, env, exists, root, run, depth + 1);
            }
            return;
        }
        "fi" | "esac" | "done" => {
            frames.stack.pop();
            return;
        }
        "for" | "while" | "until" | "select" => {
            frames.open(|arm| Frame::Loop { arm });
            return;
        }
        "case" => {
            let words = split_words(st);
            let value = words.get(1).and_then(|w| env.expand(w, at).ok());
            // Arm 0 is before the first pattern; each pattern line opens the next.
            frames.open(|arm| Frame::Case { value, active: Tri::No, done: Tri::No, arm });
            return;
        }
        _ => {}
    }
    // A case arm: `pat|pat) commands`.
    if let Some(Frame::Case { value, active, done, arm }) = frames.stack.last_mut() {
        let trimmed = st.trim_start_matches('(');
        if let Some(close) = arm_end(trimmed) {
            let patterns = &trimmed[..close];
            let m = match value {
                Some(v) => patterns
                    .split('|')
                    .filter_map(|p| env.expand(p.trim(), at).ok())
                    .map(|p| super::shell::glob(&p, v).map_or(Tri::Maybe, Tri::of))
                    .fold(Tri::No, Tri::or),
                None => Tri::Maybe,
            };
            *active = done.not().and(m);
            *done = done.or(m);
            arm.1 += 1;
            let rest = trimmed[close + 1..].trim().trim_end_matches(";;").trim();
            if !rest.is_empty() {
                statement_step(rest, at, frames, env, exists, root, run, depth + 1);
            }
            return;
        }
    }
    let act = activity(&frames.stack);
    if act == Tri::No {
        return;
    }
    let words = split_words(st);
    let i = words.len() - after_declaration(&words).len();
    let assigns = words[i..].iter().take_while(|w| assignment(w).is_some()).count();
    let is_command = i + assigns < words.len();
    for word in &words[i..i + assigns] {
        let Some((name, value)) = assignment(word) else { continue };
        if value.starts_with('(') {
            env.set(name, Val::Unresolved(Unresolved::new(word, "unsupported_expansion", at)));
            continue;
        }
        let computed = env.expand(value, at).and_then(|v| env.admit(name, v, at));
        if !is_command {
            run.assignments.push(Assignment {
                name: name.to_owned(),
                value: computed.clone(),
                line: frames.line,
                branch: branch(&frames.stack),
            });
        }
        let val = if in_loop(&frames.stack) {
            Val::Unresolved(Unresolved::new(word, "loop", at))
        } else {
            match computed {
                Ok(v) if act == Tri::Yes => Val::Known(v),
                Ok(v) if env.get(name) == Some(&Val::Known(v.clone())) => Val::Known(v),
                Ok(_) => Val::Unresolved(Unresolved::new(word, "undecided_branch", at)),
                Err(u) => Val::Unresolved(u),
            }
        };
        if !is_command {
            env.set(name, val);
        }
    }
    if is_command {
        scan_checkout(&words[i + assigns..], at, act, env, (root, exists), run);
    }
    if run.srtctl.is_none() && runs_srtctl(&words) {
        run.srtctl = Some(at.to_owned());
    }
    if act != Tri::No {
        scan_native(&words, at, act, env, run);
        scan_sets(&words, at, act, env, run);
    }
    scan_runs(st, at, act, env, root, run, 0);
}

/// `git clone [-b REF] URL [DIR]`, `git checkout REF` and `cp -rT SRC DST` / `cp FILE DST[/]`
/// from the workspace: how a multi-node launcher prepares the srt-slurm checkout whose recipe the
/// job runs.
fn scan_checkout(
    words: &[String],
    at: &str,
    act: Tri,
    env: &Env,
    (root, exists): (&str, &dyn Fn(&str) -> Tri),
    run: &mut RunnerRun,
) {
    let sure = act == Tri::Yes;
    let expand = |w: &str| env.expand(w, at);
    match words.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["git", "clone", args @ ..] => {
            let mut rev = None;
            let mut url = None;
            let mut it = args.iter();
            while let Some(a) = it.next() {
                match *a {
                    "-b" | "--branch" => rev = it.next().and_then(|r| expand(r).ok()),
                    "--depth" | "--origin" | "-o" | "--reference" => {
                        it.next();
                    }
                    a if a.starts_with('-') => {}
                    a if url.is_none() => url = Some(expand(a)),
                    _ => {}
                }
            }
            match url {
                Some(Ok(url)) => run.checkouts.push(Checkout { repo: github_repo(&url), rev, at: at.to_owned(), sure }),
                Some(Err(u)) => run.unresolved.push(u),
                None => {}
            }
        }
        ["git", "checkout", rev] if !rev.starts_with('-') => match (expand(rev), run.checkouts.last_mut()) {
            (Ok(rev), Some(c)) => c.rev = Some(rev),
            (Err(u), Some(_)) => run.unresolved.push(u),
            _ => {}
        },
        ["cp", args @ ..] => {
            let flags: String = args.iter().filter(|a| a.starts_with('-')).map(|a| a.trim_start_matches('-')).collect();
            let paths: Vec<&str> = args.iter().copied().filter(|a| !a.starts_with('-')).collect();
            let [from, to] = paths.as_slice() else { return };
            match (expand(from), expand(to)) {
                (Ok(from), Ok(to)) => {
                    let Some(source) = repo_path(&from, root).filter(|_| from.starts_with("./")) else { return };
                    let folder = flags.contains('T');
                    let name = source.rsplit('/').next().unwrap_or(&source).to_owned();
                    let to = match (folder, to.ends_with('/')) {
                        (false, _) if exists(&from) != Tri::Yes => return, // a folder copied without -T: ambiguous
                        (false, true) => format!("{}/{name}", normalize_path(to.trim_start_matches("./"))),
                        _ => normalize_path(to.trim_start_matches("./")),
                    };
                    run.copies.push(CheckoutCopy { from: source, to, folder, at: at.to_owned(), sure });
                }
                (Err(u), _) | (_, Err(u)) => run.unresolved.push(u),
            }
        }
        _ => {}
    }
}

/// `--set KEY=VALUE` / `--set=KEY=VALUE` / `--unset KEY` words, alone or opening an array
/// (`SRTCTL_EVAL_ARGS+=(--set frontend.placement.node=head)`).
fn scan_sets(words: &[String], at: &str, act: Tri, env: &Env, run: &mut RunnerRun) {
    let mut it = words.iter();
    while let Some(word) = it.next() {
        let name_len = word.len() - word.trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_').len();
        let (name, after) = word.split_at(name_len);
        let array = if name.is_empty() {
            after.strip_prefix('(')
        } else {
            after.strip_prefix("+=(").or_else(|| after.strip_prefix("=("))
        };
        let in_array = array.is_some();
        let opening = match array {
            Some(opening) => opening,
            None if name.is_empty() => after,
            None => continue,
        };
        let (unset, rest) = match (opening.strip_prefix("--set"), opening.strip_prefix("--unset")) {
            (Some(rest), _) => (false, rest),
            (_, Some(rest)) => (true, rest),
            _ => continue,
        };
        let written = match rest {
            "" => match it.next() {
                Some(next) => next.as_str(),
                None => continue,
            },
            rest => match rest.strip_prefix('=') {
                Some(inline) => inline,
                None => continue,
            },
        };
        // The last word of a one-line array keeps its closing parenthesis.
        let written = match written.strip_suffix(')') {
            Some(inner) if in_array => inner,
            _ => written,
        };
        match env.expand(written, at) {
            Ok(arg) => run.sets.push(SetArg { unset, arg, at: at.to_owned(), sure: act == Tri::Yes }),
            Err(u) => run.unresolved.push(u),
        }
    }
}

/// `launch_srt_single_node <profile> …`: a native single-node run on a pool profile.
fn scan_native(words: &[String], at: &str, act: Tri, env: &Env, run: &mut RunnerRun) {
    let Some(i) = words.iter().position(|w| w == NATIVE_SINGLE_NODE) else { return };
    let Some(profile) = words.get(i + 1) else { return };
    match env.expand(profile, at) {
        Ok(profile) => {
            let native = NativeRun { profile, at: at.to_owned(), sure: act == Tri::Yes };
            if !run.native.contains(&native) {
                run.native.push(native);
            }
        }
        Err(u) => run.unresolved.push(u),
    }
}

/// Whether a command runs `srtctl apply`, itself or in a `$(…)`
/// (`OUT=$(RUNNER_NAME="$N" srtctl apply -f …)`).
fn runs_srtctl(words: &[String]) -> bool {
    words.windows(2).any(|w| w[0] == "srtctl" && w[1] == "apply")
        || words.iter().any(|w| {
            w.split("$(").skip(1).any(|inner| {
                let inner = split_words(inner);
                let start = inner.iter().take_while(|w| assignment(w).is_some()).count();
                inner.get(start..start + 2).is_some_and(|c| c[0] == "srtctl" && c[1] == "apply")
            })
        })
}

/// `owner/name` of a `https://github.com/owner/name(.git)` URL, else the URL.
fn github_repo(url: &str) -> String {
    url.strip_prefix("https://github.com/")
        .map(|r| r.trim_end_matches('/').trim_end_matches(".git").to_owned())
        .unwrap_or_else(|| url.to_owned())
}

/// The index of the `)` that ends a case arm's patterns (none for a command with parentheses).
fn arm_end(st: &str) -> Option<usize> {
    let close = st.find(')')?;
    let pats = &st[..close];
    let ok = !pats.is_empty() && !pats.contains(['(', '$', '=', ' ']) || pats.trim() == "*";
    (ok && !pats.starts_with('[')).then_some(close)
}

/// The benchmark scripts a command runs: a word after `bash`/`sh`/`exec`/`--entrypoint=…bash`
/// (also inside `$(…)`) that computes to `benchmarks/…/*.sh`. A word that cannot be computed
/// but names a script (`$BENCH_SCRIPT`, `…/benchmarks/…`) is an unresolved fact. `depth`: the
/// `$(bash …)` around `st`; past [`MAX_NESTING`] a `too_deep` fact.
fn scan_runs(st: &str, at: &str, act: Tri, env: &Env, root: &str, run: &mut RunnerRun, depth: usize) {
    if act == Tri::No {
        return;
    }
    if depth > MAX_NESTING {
        run.unresolved.push(Unresolved::new(st, "too_deep", at));
        return;
    }
    let words = split_words(st);
    let Some(start) = words.iter().position(|w| {
        let w = w.trim_start_matches("$(");
        w == "bash" || w == "sh" || w.ends_with("/bash") || w.ends_with("=/bin/bash")
    }) else {
        for w in words.iter().filter(|w| w.contains("$(bash") || w.contains("$(exec bash")) {
            let inner = &w[w.find("$(").unwrap_or(0) + 2..];
            scan_runs(inner.strip_suffix(')').unwrap_or(inner), at, act, env, root, run, depth + 1);
        }
        return;
    };
    for word in &words[start + 1..] {
        let word = word.trim_end_matches(')');
        if word == "-c" {
            break; // a command string, not a script path
        }
        if word.starts_with('-') || word == "bash" {
            continue;
        }
        match env.expand(word, at) {
            Ok(v) => {
                if let Some(p) = repo_path(&v, root).filter(|p| p.ends_with(".sh") && p.contains("benchmarks/")) {
                    if !run.scripts.iter().any(|(s, _, _)| *s == p) {
                        run.scripts.push((p, at.to_owned(), act == Tri::Yes));
                    }
                }
            }
            Err(u) if word.contains("benchmarks/") || word.contains("SCRIPT") || is_var_ref(word) => {
                run.unresolved.push(u)
            }
            Err(_) => {}
        }
    }
}

/// `$NAME`, `${NAME}` or `"$NAME"`: a word that is one variable.
fn is_var_ref(word: &str) -> bool {
    let w = word.trim_matches('"');
    let name = w.strip_prefix("${").and_then(|n| n.strip_suffix('}')).or_else(|| w.strip_prefix('$'));
    name.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
}

/// The repository path a computed path names: relative to the job's working directory (the
/// repository root), `./x`, or under the workspace (`/workspace/…` is the checkout mount).
pub fn repo_path(computed: &str, root: &str) -> Option<String> {
    let p = computed.trim();
    if p.is_empty() {
        return None;
    }
    let rel = if let Some(rest) = p.strip_prefix("/workspace/") {
        rest
    } else if p.starts_with('/') {
        return None;
    } else {
        p
    };
    Some(format!("{root}{}", normalize_path(rel)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(framework: &str, spec: &str) -> Env {
        let mut e = Env::new(&["SCENARIO_SUBDIR", "CONFIG_FILE", "GITHUB_WORKSPACE"]);
        for (k, v) in [
            ("EXP_NAME", "qwen3.5_1k1k"),
            ("PRECISION", "fp8"),
            ("FRAMEWORK", framework),
            ("SPEC_DECODING", spec),
            ("SCENARIO_SUBDIR", "fixed_seq_len/"),
            ("IS_MULTINODE", "false"),
            ("GITHUB_WORKSPACE", "."),
        ] {
            e.bind(k, v);
        }
        e
    }

    const H200_NB: &str = "export PORT=8888\nMODEL_CODE=\"${EXP_NAME%%_*}\"\nFRAMEWORK_SUFFIX=$([[ \"$FRAMEWORK\" == \"trt\" ]] && printf '_trt' || printf '')\nSPEC_SUFFIX=$([[ \"$SPEC_DECODING\" == \"mtp\" ]] && printf '_mtp' || printf '')\nset -x\nsrun --partition=$PARTITION \\\n--container-image=$IMAGE \\\nbash benchmarks/single_node/${SCENARIO_SUBDIR}${MODEL_CODE}_${PRECISION}_h200${FRAMEWORK_SUFFIX}${SPEC_SUFFIX}.sh\n";

    #[test]
    fn the_h200_nb_runner_computes_the_sglang_script_without_a_framework_suffix() {
        let tree = MemTree::new();
        let r = evaluate(&tree, "runners/launch_h200-nb.sh", H200_NB, &mut env("sglang", "none"), "");
        assert_eq!(
            r.scripts,
            [(
                "benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_h200.sh".to_owned(),
                "runners/launch_h200-nb.sh:6".to_owned(),
                true
            )]
        );
        let r = evaluate(&tree, "runners/launch_h200-nb.sh", H200_NB, &mut env("trt", "mtp"), "");
        assert_eq!(r.scripts[0].0, "benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_h200_trt_mtp.sh");
    }

    /// Shaped like the Oct 2026 `runners/launch_mi300x-amd.sh`: a row with `srt-recipe:` (here
    /// bound as `SRT_RECIPE`) takes the native single-node path on the `mi300x-amd` profile;
    /// an agentic row without one does not.
    #[test]
    fn the_native_single_node_path_names_its_pool_profile() {
        let text = "EXECUTION_PATH=agentic
if [[ \"$IS_MULTINODE\" == true ]]; then
    EXECUTION_PATH=multinode
elif [[ \"$IS_AGENTIC\" == 0 || -n \"${SRT_RECIPE:-}\" ]]; then
    EXECUTION_PATH=native-single-node
fi
if [[ \"$EXECUTION_PATH\" == native-single-node ]]; then
    launch_srt_single_node mi300x-amd --var GITHUB_WORKSPACE \"$GITHUB_WORKSPACE\"
    exit $?
fi
bash benchmarks/single_node/x.sh
";
        let mut e = env("sglang", "none");
        e.bind("IS_AGENTIC", "0");
        let r = evaluate(&MemTree::new(), "runners/launch_mi300x-amd.sh", text, &mut e, "");
        assert_eq!(
            r.native,
            [NativeRun { profile: "mi300x-amd".into(), at: "runners/launch_mi300x-amd.sh:8".into(), sure: true }]
        );
        assert!(r.scripts.is_empty(), "the native branch exits before the Bash path: {:?}", r.scripts);
        let mut e = env("sglang", "none");
        e.bind("IS_AGENTIC", "1");
        e.bind("SRT_RECIPE", "");
        let r = evaluate(&MemTree::new(), "runners/launch_mi300x-amd.sh", text, &mut e, "");
        assert!(r.native.is_empty(), "{:?}", r.native);
        assert_eq!(r.scripts[0].0, "benchmarks/single_node/x.sh");
    }

    /// Every assignment of a branch that may run is recorded with its branch: the two arms of an
    /// undecided `if` differ, a `case` arm is its own branch, a decided-out branch is absent.
    #[test]
    fn assignments_carry_their_branch() {
        let text = "A=0\nif [ \"$CONC\" = 1 ]; then\n  AL=2.4; N=2\nelse\n  N=3\n  AL=2.8\nfi\ncase \"$M\" in\n  x) AL=1 ;;\nesac\nif [[ \"$SPEC_DECODING\" == \"none\" ]]; then AL=9; fi\n";
        let r = evaluate(&MemTree::new(), "s.sh", text, &mut env("sglang", "mtp"), "");
        let seen: Vec<_> = r.assignments.iter().map(|a| (a.name.as_str(), a.line, a.branch.clone())).collect();
        assert_eq!(
            seen,
            [
                ("A", 1, vec![]),
                ("AL", 3, vec![(1, 0)]),
                ("N", 3, vec![(1, 0)]),
                ("N", 5, vec![(1, 1)]),
                ("AL", 6, vec![(1, 1)]),
                ("AL", 9, vec![(2, 1)]),
            ]
        );
        assert_eq!(r.assignments[1].value, Ok("2.4".to_owned()), "a maybe-branch value is computed");
    }

    const B200: &str = "if [[ \"$IS_MULTINODE\" == \"true\" ]]; then\n    case \"$FRAMEWORK\" in\n        dynamo-trt|dynamo-vllm) X=1 ;;\n        *)\n            exit 1\n            ;;\n    esac\nelse\n    cat > x.py <<'EOF'\nif True:\n    bash benchmarks/nope.sh\nEOF\n    BENCH_BASE=\"benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_b200\"\n    BENCH_SCRIPT=\"${BENCH_BASE}_${FRAMEWORK}${SPEC_SUFFIX}.sh\"\n    if [[ ! -f \"$BENCH_SCRIPT\" ]]; then\n        BENCH_SCRIPT=\"${BENCH_BASE}${SPEC_SUFFIX}.sh\"\n    fi\n    srun --jobid=$JOB_ID bash -c \"\n        cd /workspace\n        bash $BENCH_SCRIPT\n    \"\nfi\n";

    #[test]
    fn the_fallback_is_read_from_the_tree_and_heredocs_and_other_branches_are_skipped() {
        let mut e = env("sglang", "none");
        e.bind("SPEC_SUFFIX", "");
        let tree = MemTree::new().with("benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_b200_sglang.sh", "x");
        let r = evaluate(&tree, "r.sh", B200, &mut e.clone(), "");
        assert_eq!(r.scripts.len(), 1, "{r:?}");
        assert_eq!(r.scripts[0].0, "benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_b200_sglang.sh");
        let r = evaluate(&MemTree::new(), "r.sh", B200, &mut e, "");
        assert_eq!(r.scripts[0].0, "benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_b200.sh");
        assert_eq!(r.scripts[0].1, "r.sh:20");
    }

    #[test]
    fn an_uncomputable_script_path_is_a_named_fact() {
        let text =
            "S=$(ls benchmarks | head -1)\nbash \"$S\"\nfor f in a b; do\n  T=benchmarks/$f.sh\ndone\nbash \"$T\"\n";
        let r = evaluate(&MemTree::new(), "r.sh", text, &mut env("sglang", "none"), "");
        assert!(r.scripts.is_empty(), "{r:?}");
        let whys: Vec<(&str, &str)> = r.unresolved.iter().map(|u| (u.why, u.at.as_str())).collect();
        assert_eq!(whys, [("command_substitution", "r.sh:1"), ("loop", "r.sh:4")]);
    }

    #[test]
    fn copies_over_the_checkout_are_read_in_each_form_cp_writes() {
        let text = "git clone https://github.com/NVIDIA/srt-slurm.git s\ncd s\n\
cp -rT \"$GITHUB_WORKSPACE/benchmarks/r/sglang/a\" recipes/sglang/renamed || exit 1\n\
cp \"$GITHUB_WORKSPACE/benchmarks/r/vllm/one.yaml\" recipes/vllm/\n\
LOCAL=\"$GITHUB_WORKSPACE/benchmarks/r/${CONFIG_FILE#recipes/}\"\n\
if [[ -f \"$LOCAL\" ]]; then\n  cp \"$LOCAL\" \"$CONFIG_FILE\"\nfi\n\
cp -r \"$GITHUB_WORKSPACE/benchmarks/r/trtllm\" recipes/\n";
        let tree = MemTree::new()
            .with("benchmarks/r/vllm/one.yaml", "a")
            .with("benchmarks/r/trt/x.yaml", "b")
            .with("benchmarks/r/trtllm/y.yaml", "c");
        let mut e = env("dynamo-trt", "none");
        e.bind("CONFIG_FILE", "recipes/trt/x.yaml");
        let run = evaluate(&tree, "runners/l.sh", text, &mut e, "");
        let copies: Vec<(&str, &str, bool)> =
            run.copies.iter().map(|c| (c.from.as_str(), c.to.as_str(), c.folder)).collect();
        assert_eq!(
            copies,
            [
                ("benchmarks/r/sglang/a", "recipes/sglang/renamed", true),
                ("benchmarks/r/vllm/one.yaml", "recipes/vllm/one.yaml", false),
                ("benchmarks/r/trt/x.yaml", "recipes/trt/x.yaml", false),
            ],
            "a folder copied without -T lands in or as its destination: not read"
        );
        assert_eq!(
            run.copies[0].source_of("recipes/sglang/renamed/b/c.yaml").as_deref(),
            Some("benchmarks/r/sglang/a/b/c.yaml")
        );
        assert_eq!(run.copies[1].source_of("recipes/vllm/one.yaml").as_deref(), Some("benchmarks/r/vllm/one.yaml"));
        assert_eq!(run.copies[1].source_of("recipes/vllm/two.yaml"), None);
        assert_eq!(run.checkout().map(|c| c.repo.as_str()), Some("NVIDIA/srt-slurm"));
    }

    /// Issue 35 cases 1 and 2 as launchers: 21 doubling lines, and a 60 KB `if ! ! ! … true`,
    /// `then then …` and `$(bash $(bash …))`. Each is evaluated to named facts, in bounded memory.
    #[test]
    fn hostile_launchers_evaluate_to_named_facts() {
        let mut doubling = String::from("V0=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n");
        for i in 1..=21 {
            doubling.push_str(&format!("V{i}=$V{}$V{}\n", i - 1, i - 1));
        }
        doubling.push_str("bash benchmarks/single_node/$V21.sh\n");
        let r = evaluate(&MemTree::new(), "runners/launch_x.sh", &doubling, &mut env("sglang", "none"), "");
        assert!(
            r.unresolved.iter().any(|u| u.why == "too_long" && u.at == "runners/launch_x.sh:12"),
            "{:?}",
            r.unresolved
        );
        let kept: usize = r.assignments.iter().filter_map(|a| a.value.as_ref().ok()).map(String::len).sum();
        assert!(kept <= 2 * super::super::shell::MAX_VALUE_BYTES, "{kept} bytes kept");

        let bangs = format!("if {}true; then\n  bash benchmarks/single_node/a.sh\nfi\n", "! ".repeat(30_000));
        let r = evaluate(&MemTree::new(), "runners/launch_x.sh", &bangs, &mut env("sglang", "none"), "");
        assert_eq!(r.scripts, [("benchmarks/single_node/a.sh".to_owned(), "runners/launch_x.sh:2".to_owned(), false)]);

        let thens = format!("if true; {}bash benchmarks/single_node/a.sh; fi\n", "then ".repeat(30_000));
        let r = evaluate(&MemTree::new(), "runners/launch_x.sh", &thens, &mut env("sglang", "none"), "");
        assert!(r.unresolved.iter().any(|u| u.why == "too_deep"), "{:?}", r.unresolved);

        let nested = format!("X={}benchmarks/single_node/a.sh{}\n", "$(bash ".repeat(20_000), ")".repeat(20_000));
        let r = evaluate(&MemTree::new(), "runners/launch_x.sh", &nested, &mut env("sglang", "none"), "");
        // An assignment's `$(…)` is never run by the reader: one named fact, its text cut short.
        assert!(
            r.unresolved
                .iter()
                .any(|u| u.why == "command_substitution" && u.what.chars().count() <= super::super::shell::MAX_WHAT),
            "{:?}",
            r.unresolved
        );
    }
}
