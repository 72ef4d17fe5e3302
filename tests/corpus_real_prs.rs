//! Corpus: real merged upstream PRs, rebuilt from `../shared/acceptance/inferencex-history.bundle`
//! (upstream main up to 2026-08-19) and verified offline.
//!
//! Each PR in `fixtures/corpus/prs.toml` becomes an Evidence bundle the way `collect` records one
//! (format 2): base = the merge commit's parent, head = the merge commit, the real per-file
//! patches, the trees filtered to the paths a verdict reads (runners/ and the real
//! `benchmarks/benchmark_lib.sh` included, read from the history clone); a clean synthetic
//! sign-off (the checklist template at base, every box checked, signed by a CODEOWNER of the
//! changed files); a green `run-sweep.yml` run on the head for the PR's own matrix (one successful
//! check-run per job of every family, named as GitHub names reusable-workflow jobs) with the eval
//! artifacts its eval jobs upload (`eval_<EXP_NAME>_<RESULT_FILENAME>`, `meta_env.json` as
//! `benchmark_lib.sh` writes it, passing lm-eval results); and a digest for every image.
//!
//! All 19 checks are judged: none may FAIL a merged PR unless `fixtures/corpus/exceptions.toml`
//! writes down the rule it really broke (in force at its date) with the offending lines, or lists
//! the FAIL as an `open` sweepgate defect with its class. The table of FAIL counts per check is
//! printed, and each PR's build, bundle and verify times (two PRs are verified at a time,
//! decision CP2).
//!
//! The bundle must be present: a missing one fails the test (CI has `../shared/` beside the
//! clone). `SWEEPGATE_SKIP_CORPUS=1` skips it deliberately on a machine without it.

#[path = "support/history.rs"]
mod history;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Deserialize;
use serde_json::Value;
use sweepgate::checks::{verify, Context, Status, Verdict};
use sweepgate::domain::codeowners::{Codeowners, Owner};
use sweepgate::evidence::{
    read_bundle, write_bundle, ChangedFile, CheckRun, Evidence, Fact, Permission, PublishedRun, PullRequest, Signoff,
    SignoffKind, UpstreamContent, UpstreamPull, WorkflowRun,
};
use sweepgate::matrix::{MatrixOutput, Row};
use sweepgate::pr::affected::{affected_configs, is_nvidia_sku, sku};
use sweepgate::pr::generated;
use sweepgate::pr::reach::affected_reach;
use sweepgate::repo::{GitTree, Layout, Logical, MemTree, Tree};
use sweepgate::results::shapes::{self, ArtifactKind};

/// Every check is judged: a FAIL on a merged PR is a false rejection unless written down as an
/// exception (the PR's fault) or an open sweepgate defect.
const CHECKS: u8 = 19;

#[derive(Deserialize)]
struct PrList {
    pr: Vec<PrEntry>,
}

#[derive(Deserialize)]
struct PrEntry {
    number: u64,
    merge: String,
}

#[derive(Deserialize)]
struct ExceptionList {
    #[serde(default)]
    exception: Vec<Exception>,
    /// False rejections sweepgate still makes: its own defects, not the PR's, each with the
    /// class it belongs to. The list only shrinks: an entry that no longer FAILs must go.
    #[serde(default)]
    open: Vec<OpenDefect>,
}

#[derive(Deserialize)]
struct OpenDefect {
    pr: u64,
    check: u8,
    class: String,
    /// What the FAIL says, in a few words (the lead prunes by it).
    #[serde(default)]
    why: String,
}

/// A rule the merged PR really broke, with the offending lines.
#[derive(Deserialize)]
struct Exception {
    pr: u64,
    check: u8,
    rule: String,
    lines: Vec<String>,
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The files the PR changed, with GitHub's status words and per-file patches (hunks only).
fn changed_files(repo: &Path, base: &str, head: &str) -> Vec<ChangedFile> {
    let mut files = Vec::new();
    for line in git(repo, &["diff", "--name-status", "-M", base, head]).lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        let (status, previous, filename) = match fields.as_slice() {
            [s, old, new] if s.starts_with('R') => ("renamed", Some((*old).to_owned()), *new),
            [s, path] => (
                match s.chars().next() {
                    Some('A') => "added",
                    Some('D') => "removed",
                    _ => "modified",
                },
                None,
                *path,
            ),
            _ => panic!("unexpected name-status line {line:?}"),
        };
        let mut paths = vec![filename];
        paths.extend(previous.as_deref());
        let mut args = vec!["diff", "-M", "--no-color", base, head, "--"];
        args.extend(paths.iter().copied());
        let diff = git(repo, &args);
        // GitHub's `patch` starts at the first hunk header; binary files have none.
        let patch = diff.find("\n@@").map(|at| diff[at + 1..].to_owned());
        files.push(ChangedFile {
            filename: filename.to_owned(),
            previous_filename: previous,
            status: status.into(),
            patch,
        });
    }
    files
}

/// A tree as `collect` keeps it (decision C1): every logical file in both layouts, the benchmark
/// scripts and recipes, the runners, and the changed files.
fn tree_at(repo: &Path, commit: &str, files: &[ChangedFile]) -> MemTree {
    let git_tree = GitTree::open(repo, commit).expect("commit opens");
    let layout = Layout::default();
    let mut prefixes: Vec<String> = Logical::ALL.iter().flat_map(|l| layout.candidates(*l)).collect();
    prefixes.extend(["benchmarks", "inferencex-e2e/benchmarks", "runners", "inferencex-e2e/runners"].map(String::from));
    let mut tree = MemTree::new();
    for prefix in &prefixes {
        if let Some(bytes) = git_tree.read(prefix).expect("file reads") {
            tree.insert(prefix.clone(), bytes);
        } else {
            tree.copy_from(&git_tree, prefix).expect("directory reads");
        }
    }
    for path in files.iter().flat_map(|f| std::iter::once(&f.filename).chain(f.previous_filename.as_ref())) {
        if let Some(bytes) = git_tree.read(path).expect("file reads") {
            tree.insert(path.clone(), bytes);
        }
    }
    tree
}

/// The signer: a user the last matching CODEOWNERS rule lists for the changed files (master
/// configs first), and the teams that own the rest, which the signer is recorded a member of.
fn signer_and_teams(base: &MemTree, files: &[ChangedFile]) -> (String, BTreeSet<String>) {
    let text = base.text(".github/CODEOWNERS").expect("CODEOWNERS at base");
    let (owners, _) = Codeowners::parse(text, ".github/CODEOWNERS");
    let mut paths: Vec<&str> = files.iter().map(|f| f.filename.as_str()).collect();
    paths.sort_by_key(|p| !p.contains("-master.yaml"));
    let mut signer = None;
    let mut teams = BTreeSet::new();
    for path in paths {
        let Some((rule, _)) = owners.owners_of(path) else { continue };
        for owner in &rule.owners {
            match owner {
                Owner::User { login } if signer.is_none() => signer = Some(login.clone()),
                Owner::Team { org, slug } => {
                    teams.insert(format!("{org}/{slug}"));
                }
                _ => {}
            }
        }
    }
    (signer.unwrap_or_else(|| "corpus-maintainer".into()), teams)
}

/// The checklist template block at base with every box checked, signed by `signer`; the detail
/// section links the waiver the PR files, as a clean sign-off does.
fn signoff_body(base: &MemTree, signer: &str, number: u64, files: &[ChangedFile]) -> String {
    let waiver = format!("docs/waiver/{number}.md");
    let mut detail = "Synthetic clean sign-off of the real-PR corpus.".to_owned();
    if files.iter().any(|f| f.filename == waiver) {
        detail.push_str(&format!("\nWaiver: https://github.com/SemiAnalysisAI/InferenceX/blob/main/{waiver}"));
    }
    let text = base.text("docs/PR_REVIEW_CHECKLIST.md").expect("checklist template at base");
    let block = text.split("```").nth(1).expect("the template is in a code block");
    let mut body = String::new();
    for line in block.lines().skip(1) {
        let line = line.replacen("- [ ]", "- [x]", 1).replace("FILL_IN_GITHUB_USERNAME", signer);
        let line = if line.trim() == "- insert any additional info here" { detail.clone() } else { line };
        body.push_str(&line);
        body.push('\n');
    }
    body
}

/// Every image of the head master configs, as resolved digests.
fn image_digests(head: &MemTree) -> BTreeMap<String, Fact<String>> {
    let mut digests = BTreeMap::new();
    for path in head.paths().filter(|p| p.starts_with("configs/") && p.ends_with("-master.yaml")) {
        for line in head.text(path).unwrap_or_default().lines() {
            if let Some(image) = line.trim().strip_prefix("image:") {
                let image = image.trim().trim_matches('"').trim_matches('\'');
                // A reference pinned by digest resolves to that digest; others get a fresh one.
                let digest = match image.split_once("@sha256:") {
                    Some((_, pinned)) => format!("sha256:{pinned}"),
                    None => format!("sha256:{:064x}", digests.len() + 1),
                };
                digests.entry(image.to_owned()).or_insert(Fact::Ok(digest));
            }
        }
    }
    digests
}

fn build_evidence(repo: &Path, entry: &PrEntry) -> Evidence {
    let head_sha = entry.merge.clone();
    let base_sha = git(repo, &["rev-parse", &format!("{head_sha}^")]).trim().to_owned();
    let files = changed_files(repo, &base_sha, &head_sha);
    let base = tree_at(repo, &base_sha, &files);
    let head = tree_at(repo, &head_sha, &files);
    let meta = git(repo, &["log", "-1", "--format=%cs%n%an%n%s", &head_sha]);
    let mut meta = meta.lines();
    let date = meta.next().unwrap_or_default();
    let author = meta.next().unwrap_or_default().replace(' ', "-");
    let title = meta.next().unwrap_or_default().to_owned();
    let review_date = chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").expect("commit date");
    let (signer, teams) = signer_and_teams(&base, &files);
    let number = entry.number;
    let run_id = 50_000_000_000 + number;
    let run = WorkflowRun {
        id: run_id,
        name: "Run Sweep".into(),
        path: ".github/workflows/run-sweep.yml".into(),
        head_sha: head_sha.clone(),
        event: "pull_request".into(),
        status: "completed".into(),
        conclusion: Some("success".into()),
        artifacts: BTreeMap::new(),
        archives: BTreeMap::new(),
        jobs: BTreeMap::new(),
        sweep_id: None,
        jobs_unavailable: None,
    };
    let member: BTreeMap<String, Fact<bool>> = BTreeMap::from([(signer.clone(), Fact::Ok(true))]);
    let signoff_id = 4_000_000_000 + number;
    let mut evidence = Evidence {
        repository: "SemiAnalysisAI/InferenceX".into(),
        review_date,
        pull_request: PullRequest {
            number,
            title,
            body: String::new(),
            author,
            state: "open".into(),
            draft: false,
            head_sha: head_sha.clone(),
            head_ref: format!("pr-{number}"),
            base_sha,
            base_ref: "main".into(),
            policy_sha: None,
            policy_branch: None,
            fork: false,
            labels: vec![],
        },
        live_head_sha: None,
        signoff: Signoff {
            kind: SignoffKind::Comment,
            id: signoff_id,
            author: signer.clone(),
            body: signoff_body(&base, &signer, number, &files),
            url: format!("https://github.com/SemiAnalysisAI/InferenceX/pull/{number}#issuecomment-{signoff_id}"),
            created_at: format!("{date}T12:00:00Z"),
            updated_at: String::new(),
        },
        commits: vec![head_sha.clone()],
        files,
        check_runs: BTreeMap::new(),
        runs: BTreeMap::from([(run_id, run)]),
        comments: vec![],
        permissions: BTreeMap::from([(
            signer,
            Fact::Ok(Permission { permission: "write".into(), role_name: "maintain".into() }),
        )]),
        team_members: teams.into_iter().map(|t| (t, member.clone())).collect(),
        upstream: Default::default(),
        trees: Default::default(),
        blobs: Default::default(),
        texts_at: Default::default(),
        format: sweepgate::evidence::BUNDLE_FORMAT,
        base,
        head,
        policy: MemTree::new(),
        artifacts: MemTree::new(),
    };
    evidence.upstream.image_digests = image_digests(&evidence.head);
    sweep(&mut evidence, run_id);
    cookbooks(&mut evidence, date);
    evidence
}

/// The text of a master-config entry (`key:` at column 0 up to the next such line), read as a
/// person reads the YAML file.
fn entry_text(head: &MemTree, key: &str) -> String {
    for path in head.paths().filter(|p| p.starts_with("configs/") && p.ends_with("-master.yaml")) {
        let text = head.text(path).unwrap_or_default();
        let mut lines = text.lines().skip_while(|l| *l != format!("{key}:"));
        if let Some(first) = lines.next() {
            let rest: Vec<&str> = lines.take_while(|l| l.is_empty() || l.starts_with([' ', '#', '-'])).collect();
            return format!("{first}\n{}", rest.join("\n"));
        }
    }
    String::new()
}

/// Words that start an engine's server command in a launcher.
const SERVER_STARTS: [&str; 4] = ["vllm serve", "sglang.launch_server", "sglang serve", "sglang_router.launch_server"];

/// The lines of the shell block that starts at `at`: a bash array `NAME=( … )` up to its `)`, or a
/// command up to the line that does not end in `\`.
fn block(lines: &[&str], at: usize) -> Vec<String> {
    let first = lines[at].trim();
    let array = first.ends_with("=(") || first.ends_with("+=(") || (first.contains("=(") && !first.contains(')'));
    let mut out = Vec::new();
    for line in &lines[at..] {
        let code = line.trim();
        if code.starts_with('#') || code.is_empty() {
            continue;
        }
        out.push(code.to_owned());
        let done = if array { code == ")" || code.ends_with(')') && out.len() > 1 } else { !code.ends_with('\\') };
        if done || out.len() > 200 {
            break;
        }
    }
    out
}

/// Shell variables a line reads (`$NAME`, `${NAME…}`).
fn variables(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in line.split('$').skip(1) {
        let name: String =
            part.trim_start_matches('{').chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if !name.is_empty() && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// What a cookbook author copies from a launcher: the server command (a bash array or a
/// continued command), the definitions of the variables and argument arrays it uses (a few levels
/// deep), and the environment the script exports for the server. Independent of sweepgate's
/// readers. Each line is written with the values the config runs with (decision CO9): a `$VAR`
/// the launcher gives a value (`X=8`, `X="${X:-0.83}"`, one per branch) or the master entry's
/// search space gives (`$TP`) is replaced by that value; a value the script computes (`$((…))`,
/// `$(…)`, a string built by `+=`) stays as written.
fn server_command(script: &str, space: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    let lines: Vec<&str> = script.lines().collect();
    let starts_server = |line: &str| {
        let code = line.trim();
        !code.starts_with('#')
            && SERVER_STARTS.iter().any(|s| {
                // The words of a command, not of a message (`echo "Starting vllm server..."`).
                line.match_indices(s).any(|(at, _)| line[..at].matches(['"', '\'']).count().is_multiple_of(2))
            })
    };
    let Some(start) = lines.iter().position(|l| starts_server(l)) else {
        return Vec::new();
    };
    // The array that holds the command starts on this line or the code line above it.
    let opener = (0..=start).rev().take(2).find(|i| lines[*i].contains("=(")).unwrap_or(start);
    let mut out = block(&lines, opener);
    let mut wanted: Vec<String> = out.iter().flat_map(|l| variables(l)).collect();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..3 {
        let mut next = Vec::new();
        for name in wanted.iter().filter(|n| seen.insert((*n).clone())) {
            for (i, line) in lines.iter().enumerate() {
                let code = line.trim().trim_start_matches("export ").trim_start_matches("local ");
                let defines = code
                    .strip_prefix(name.as_str())
                    .is_some_and(|rest| rest.starts_with('=') || rest.starts_with("+="));
                if defines && i != opener {
                    let defined = block(&lines, i);
                    next.extend(defined.iter().flat_map(|l| variables(l)));
                    out.extend(defined);
                }
            }
        }
        wanted = next;
    }
    for line in &lines {
        if let Some(assign) = line.trim().strip_prefix("export ") {
            out.push(assign.to_owned());
        }
    }
    let defs = definitions(script, space);
    let mut written = Vec::new();
    for line in join_flag_values(&out) {
        for variant in expand(&line, &defs, &mut Vec::new(), 0).iter().map(|l| requote(l)) {
            if !written.contains(&variant) {
                written.push(variant);
            }
        }
    }
    written
}

/// A flag alone on its line of an argument array and its value on the next (`--kv-transfer-config`
/// / `'{…}'`), written on one line as an author writes them.
fn join_flag_values(lines: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in lines {
        let joins = out.last().is_some_and(|last| {
            last.starts_with("--")
                && !last.contains([' ', '='])
                && !line.starts_with(['-', ')', '$'])
                && !line.starts_with("\"$")
        });
        match out.last_mut() {
            Some(last) if joins => {
                last.push(' ');
                last.push_str(line);
            }
            _ => out.push(line.clone()),
        }
    }
    out
}

/// The values a launcher gives each variable, as its author reads them: every `NAME=value`
/// (plain, `export`/`local`, after `;` or a case pattern), shell quotes removed; a variable the
/// script appends to (`NAME+=`) has no value of its own. The search-space keys of the master
/// entry give `TP`, `EP_SIZE`/`EP`, `DP_ATTENTION`, `DCP_SIZE` and `PCP_SIZE`.
fn definitions(script: &str, space: &BTreeMap<String, Vec<String>>) -> BTreeMap<String, Vec<String>> {
    let mut defs: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut appended = BTreeSet::new();
    for line in script.lines().map(str::trim).filter(|l| !l.starts_with('#')) {
        let bytes = line.as_bytes();
        let mut at = 0;
        while at < line.len() {
            let starts_word = at == 0 || matches!(bytes[at - 1], b' ' | b'\t' | b';' | b'(');
            let name_len =
                line[at..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(line.len() - at);
            if !starts_word || name_len == 0 || bytes[at].is_ascii_digit() {
                at += line[at..].chars().next().map_or(1, char::len_utf8);
                continue;
            }
            let name = &line[at..at + name_len];
            let rest = &line[at + name_len..];
            if rest.starts_with("+=") {
                appended.insert(name.to_owned());
            } else if let Some(value) = rest.strip_prefix('=').filter(|v| !v.starts_with(['=', '('])) {
                let (value, used) = shell_word(value);
                defs.entry(name.to_owned()).or_default().push(value);
                at += name_len + 1 + used;
                continue;
            }
            at += name_len;
        }
    }
    for name in appended {
        defs.remove(&name);
    }
    for (var, key) in [
        ("TP", "tp"),
        ("EP_SIZE", "ep"),
        ("EP", "ep"),
        ("DP_ATTENTION", "dp-attn"),
        ("DCP_SIZE", "dcp-size"),
        ("PCP_SIZE", "pcp-size"),
    ] {
        if let Some(values) = space.get(key) {
            defs.insert(var.to_owned(), values.clone());
        }
    }
    defs
}

/// One shell word at the start of `text`, quotes removed (`\"` inside double quotes is `"`), and
/// how many bytes it took. `$(…)` and `$((…))` are kept whole, as written.
fn shell_word(text: &str) -> (String, usize) {
    let mut out = String::new();
    let mut quote: Option<char> = None;
    let mut depth = 0usize;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (Some('"'), '\\') => {
                if let Some((_, next)) = chars.next() {
                    if !matches!(next, '"' | '\\' | '$' | '`') {
                        out.push('\\');
                    }
                    out.push(next);
                }
            }
            (Some(q), c) if c == q && depth == 0 => quote = None,
            (None, '"' | '\'') if depth == 0 => quote = Some(c),
            (_, '$') if chars.peek().is_some_and(|(_, n)| *n == '(') => {
                out.push(c);
                depth += 1;
                chars.next();
                out.push('(');
            }
            (_, '(') if depth > 0 => {
                depth += 1;
                out.push(c);
            }
            (_, ')') if depth > 0 => {
                depth -= 1;
                out.push(c);
            }
            (None, ' ' | '\t' | ';') if depth == 0 => return (out, i),
            (_, c) => out.push(c),
        }
    }
    (out, text.len())
}

/// Every way `line` reads with the variables' values (at most 64): `$NAME`, `${NAME}` and
/// `${NAME:-default}` are replaced; a quoted `"$NAME"` whose value holds quotes or spaces is
/// written in single quotes, one that is a plain word without quotes. Unknown variables and
/// other expansions stay as written.
fn expand(line: &str, defs: &BTreeMap<String, Vec<String>>, stack: &mut Vec<String>, depth: usize) -> Vec<String> {
    let Some(dollar) = line.find('$') else { return vec![line.to_owned()] };
    let (head, rest) = line.split_at(dollar);
    let after = &rest[1..];
    let (name, default, tail) = if let Some(inner) = after.strip_prefix('{') {
        let Some(close) = inner.find('}') else { return vec![line.to_owned()] };
        let body = &inner[..close];
        let (name, default) = match body.split_once(":-").or_else(|| body.split_once(":=")) {
            Some((n, d)) => (n, Some(d)),
            None => (body, None),
        };
        (name, default, &inner[close + 1..])
    } else {
        let end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
        (&after[..end], None, &after[end..])
    };
    let literal = &line[dollar..line.len() - tail.len()];
    let known = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.is_empty();
    let values: Vec<String> = match defs.get(name) {
        _ if !known || depth > 4 => vec![literal.to_owned()],
        // A definition that reads its own variable (`MEM="${MEM:-0.83}"`) takes the default.
        _ if stack.iter().any(|s| s == name) => match default {
            Some(d) => expand(d, defs, stack, depth + 1),
            None => vec![literal.to_owned()],
        },
        Some(values) => {
            stack.push(name.to_owned());
            let out = values.iter().flat_map(|v| expand(v, defs, stack, depth + 1)).collect();
            stack.pop();
            out
        }
        None => match default {
            Some(d) => expand(d, defs, stack, depth + 1),
            None => vec![literal.to_owned()],
        },
    };
    // Only a word of the line itself is re-quoted, never text inside a value (JSON's quotes).
    let quoted = depth == 0 && head.ends_with('"') && !head.ends_with("\\\"") && tail.starts_with('"');
    let rests = expand(tail, defs, stack, depth);
    let mut out = Vec::new();
    for value in values {
        let plain = !value.is_empty() && value.chars().all(|c| c.is_ascii_alphanumeric() || "._-/:,+".contains(c));
        // The rests start with the closing `"` where the word is quoted: dropped with the opening one.
        let (head, unquote, value) = if quoted && value.contains(['"', ' ']) && !value.contains('\'') {
            (&head[..head.len() - 1], 1, format!("'{value}'"))
        } else if quoted && plain {
            (&head[..head.len() - 1], 1, value)
        } else {
            (head, 0, value)
        };
        for rest in &rests {
            if out.len() < 64 {
                out.push(format!("{head}{value}{}", &rest[unquote..]));
            }
        }
    }
    out
}

/// A double-quoted word with escaped quotes (`"{\"a\": 1}"`) written in single quotes as an
/// author writes JSON (`'{"a": 1}'`); other text unchanged.
fn requote(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(open) = rest.find(['"', '\'']) {
        let quote = rest[open..].chars().next().unwrap_or('"');
        out.push_str(&rest[..open]);
        let body = &rest[open + 1..];
        let mut end = None;
        let mut escaped = false;
        for (i, c) in body.char_indices() {
            match c {
                '\\' if quote == '"' && !escaped => escaped = true,
                c if c == quote && !escaped => {
                    end = Some(i);
                    break;
                }
                _ => escaped = false,
            }
        }
        let Some(end) = end else {
            out.push_str(&rest[open..]);
            return out;
        };
        let inner = &body[..end];
        if quote == '"' && inner.contains("\\\"") && !inner.contains('\'') {
            out.push('\'');
            out.push_str(&inner.replace("\\\"", "\"").replace("\\\\", "\\"));
            out.push('\'');
        } else {
            out.push_str(&rest[open..open + end + 2]);
        }
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The values each search-space key of a master entry takes (`tp: 8`, `{ tp: 4, ep: 4 }`).
fn search_space(entry: &str) -> BTreeMap<String, Vec<String>> {
    let mut space: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for key in ["tp", "ep", "dp-attn", "dcp-size", "pcp-size"] {
        let pattern = format!("{key}:");
        for (at, _) in entry.match_indices(&pattern) {
            if entry[..at].chars().next_back().is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                continue;
            }
            let value: String = entry[at + pattern.len()..]
                .trim_start()
                .chars()
                .take_while(|c| !matches!(c, ',' | '}' | '\n' | ' ' | '#'))
                .collect();
            let values = space.entry(key.to_owned()).or_default();
            if !value.is_empty() && !values.contains(&value) {
                values.push(value);
            }
        }
    }
    // A row without `dcp-size`/`pcp-size` runs with the generator's default, 1.
    let rows = entry.matches("conc-list:").count() + entry.matches("conc-start:").count();
    for key in ["dcp-size", "pcp-size"] {
        let stated = entry.matches(&format!(" {key}:")).count();
        if let Some(values) = space.get_mut(key).filter(|v| stated < rows && !v.iter().any(|v| v == "1")) {
            values.push("1".to_owned());
        }
    }
    space
}

/// For every affected vLLM/SGLang config: a merged upstream cookbook (SGLang) or recipe (vLLM)
/// PR whose page states what the config's launch gives the engine, written from the real files
/// as a cookbook author writes it (the server command and environment of the scripts the config
/// runs and the PR changes, with the values the config runs with, `server_command`; the recipe
/// files the entry names, verbatim), linked from the sign-off's detail section. Settings of
/// unchanged scripts the launch also sources are not copied: where Check 3 wants them, that is
/// its reader's claim to judge.
fn cookbooks(evidence: &mut Evidence, date: &str) {
    let cx = Context::new(evidence);
    // Which script a config runs is the one fact taken from sweepgate (the launch model, checked
    // on the whole real tree by launch_real_tree.rs); what the page says is copied independently.
    let configs: Vec<_> = affected_reach(&cx)
        .unwrap_or_default()
        .iter()
        .map(|r| (r.config.clone(), r.launch.scripts().into_iter().map(str::to_owned).collect::<Vec<_>>()))
        .collect();
    drop(cx);
    let mut pages: BTreeMap<&str, String> = BTreeMap::new();
    for (config, runs) in &configs {
        let engine = match config.framework.as_str() {
            "vllm" | "dynamo-vllm" | "llmd-vllm" | "vllm-disagg" => "vllm",
            "sglang" | "dynamo-sglang" | "sglang-disagg" => "sglang",
            _ => continue,
        };
        let entry = entry_text(&evidence.head, &config.key);
        let model = entry.lines().find_map(|l| l.trim().strip_prefix("model:")).unwrap_or_default().trim().to_owned();
        let space = search_space(&entry);
        let mut page = format!("## {model} ({}, {}, {})\n\n", config.key, config.runner, config.framework);
        let mut sources: Vec<String> = evidence
            .files
            .iter()
            .map(|f| f.filename.clone())
            .filter(|p| p.starts_with("benchmarks/") && p.ends_with(".sh") && !p.ends_with("benchmark_lib.sh"))
            .chain(runs.iter().cloned())
            .collect();
        for line in entry.lines() {
            for marker in ["CONFIG_FILE=", "srt-recipe:"] {
                if let Some(at) = line.find(marker) {
                    let recipe = line[at + marker.len()..].trim().trim_matches(['"', '\'']);
                    let recipe = recipe.split(':').next().unwrap_or(recipe);
                    let path = match recipe.strip_prefix("recipes/") {
                        Some(rest) => format!("benchmarks/multi_node/srt-slurm-recipes/{rest}"),
                        None => recipe.to_owned(),
                    };
                    sources.push(path);
                }
            }
        }
        sources.sort();
        sources.dedup();
        for path in sources {
            let Some(text) = evidence.head.text(&path) else { continue };
            if path.ends_with(".sh") {
                let command = server_command(text, &space);
                if !command.is_empty() {
                    page.push_str(&format!("From `{path}`:\n\n```bash\n{}\n```\n\n", command.join("\n")));
                }
            } else {
                page.push_str(&format!("Recipe `{path}`:\n\n```yaml\n{text}\n```\n\n"));
            }
        }
        pages.entry(engine).or_default().push_str(&page);
    }
    let number = evidence.pull_request.number;
    let mut links = Vec::new();
    for (engine, page) in pages {
        let (url, file) = match engine {
            "vllm" => (
                format!("https://github.com/vllm-project/recipes/pull/{}", 9000 + number),
                format!("InferenceX/pr-{number}.md"),
            ),
            _ => (
                format!("https://github.com/sgl-project/sglang/pull/{}", 90000 + number),
                format!("docs/cookbook/inferencex/pr-{number}.mdx"),
            ),
        };
        evidence.upstream.pulls.insert(
            url.clone(),
            Fact::Ok(UpstreamPull {
                state: "closed".into(),
                draft: false,
                merged_at: Some(format!("{date}T08:00:00Z")),
                files: vec![file.clone()],
            }),
        );
        evidence.upstream.contents.insert(
            url.clone(),
            Fact::Ok(UpstreamContent { source: format!("{url}/files"), files: BTreeMap::from([(file, page)]) }),
        );
        links.push(format!("Upstream {engine} documentation: {url} (merged)."));
    }
    if !links.is_empty() {
        let detail = "Synthetic clean sign-off of the real-PR corpus.";
        let body = &mut evidence.signoff.body;
        *body = body.replacen(detail, &format!("{detail}\n{}", links.join("\n")), 1);
    }
}

/// The families of `run-sweep.yml`: the calling job's `name:` for each matrix list.
fn families(out: &MatrixOutput) -> Vec<(String, Vec<&Row>)> {
    let mut families: Vec<(String, Vec<&Row>)> = Vec::new();
    for (node, lists) in [("single-node", &out.single_node), ("multi-node", &out.multi_node)] {
        for (scenario, rows) in lists {
            let name = match (node, scenario.as_str()) {
                ("single-node", "agentic") => "agentic".to_owned(),
                (node, scenario) => format!("{node} {scenario}"),
            };
            families.push((name, rows.iter().collect()));
        }
    }
    for (name, rows) in [
        ("eval", &out.evals),
        ("agentic eval", &out.agentic_evals),
        ("multi-node eval", &out.multinode_evals),
        ("multi-node agentic eval", &out.multinode_agentic_evals),
    ] {
        families.push((name.to_owned(), rows.iter().collect()));
    }
    families.retain(|(_, rows)| !rows.is_empty());
    families
}

fn text(row: &Row, key: &str) -> String {
    match row.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    }
}

/// The concurrencies of a row (`conc` is a number for single-node rows, a list for multi-node).
fn concs(row: &Row) -> Vec<i64> {
    match row.get("conc") {
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_i64).collect(),
        Some(v) => v.as_i64().into_iter().collect(),
        None => vec![],
    }
}

/// `benchmark-tmpl.yml`'s job name: `p<priority> | <prefix> <precision> <runner> <framework> …`.
fn job_name(row: &Row) -> String {
    let framework = match text(row, "framework").as_str() {
        "sglang" => "sgl".to_owned(),
        "dynamo-sglang" => "dyn-sgl".to_owned(),
        "sglang-disagg" => "sgl-disagg".to_owned(),
        other => other.to_owned(),
    };
    let conc: Vec<String> = concs(row).iter().map(i64::to_string).collect();
    format!(
        "p1 | {} {} {} {framework} TP{} c{}",
        text(row, "model-prefix"),
        text(row, "precision"),
        text(row, "runner"),
        text(row, "tp"),
        conc.join("-")
    )
}

/// `RESULT_FILENAME` as the templates build it (`results::shapes::result_filename`, the one
/// place the workflows' pattern lives); the runner's machine name ends it.
fn result_filename(row: &Row, concs: &[i64]) -> String {
    let machine = format!("{}_0", text(row, "runner").trim_start_matches("cluster:"));
    shapes::result_filename(row, concs, &machine)
}

/// The eval artifact of one eval row as the templates upload it (`eval_${EXP_NAME}_${RF}`
/// single-node, `eval_${RF}` multi-node, by `src/results/shapes.toml`), with the `meta_env.json` `benchmark_lib.sh` writes
/// (`hw` is the runner label, `cluster:` prefix included) and a passing GSM8K results file.
fn eval_artifact(row: &Row, conc: i64) -> (String, String, String) {
    let multinode = row.get("prefill").is_some();
    let int = |v: String| v.parse::<i64>().unwrap_or(1);
    let pick =
        |key: &str| row.get("prefill").and_then(|w| w.get(key)).map(Value::to_string).unwrap_or_else(|| text(row, key));
    let rf = if multinode { result_filename(row, &concs(row)) } else { result_filename(row, &[conc]) };
    let values = [("RF", rf.as_str()), ("EXP_NAME", &text(row, "exp-name"))];
    let name = shapes::artifact_name(ArtifactKind::EvalSet, multinode, &values).expect("shapes.toml names eval sets");
    // `bridge_disagg_eval_metadata` and `_write_lm_eval_meta_json` (benchmark_lib.sh:1150-1250):
    // `tp`/`ep` are the prefill workers' on a multi-node job, `decode_*` the decode workers'
    // (a single-node job's are its own).
    let role = |r: &str, key: &str| {
        row.get(r).and_then(|w| w.get(key)).map(Value::to_string).unwrap_or_else(|| text(row, key))
    };
    let mut meta = serde_json::json!({
        "is_multinode": multinode, "framework": text(row, "framework"), "precision": text(row, "precision"),
        "spec_decoding": text(row, "spec-decoding"), "recipe_fingerprint": "", "tp": int(pick("tp")), "pp": 1,
        "dcp_size": int(pick("dcp-size")), "pcp_size": int(pick("pcp-size")), "conc": conc, "ep": int(pick("ep")), "dp_attention": pick("dp-attn") == "true",
        "model": text(row, "model"), "infmax_model_prefix": text(row, "model-prefix"), "hw": text(row, "runner"),
        "isl": text(row, "isl"), "osl": text(row, "osl"),
    });
    for r in ["prefill", "decode"] {
        meta[format!("{r}_tp")] = int(role(r, "tp")).into();
        meta[format!("{r}_ep")] = int(role(r, "ep")).into();
        meta[format!("{r}_dp_attention")] = (role(r, "dp-attn") == "true").into();
        meta[format!("{r}_num_workers")] = int(role(r, "num-worker")).into();
    }
    // Every eval job runs GSM8K: `run_eval`'s default framework is lm-eval for agentic rows too
    // (benchmark_lib.sh, since #2464 "run gsm8k for agentic evals", 2026-08-03; no template sets
    // EVAL_FRAMEWORK).
    let (task, score, filter, n) = ("gsm8k", 0.97, "strict-match", 1319);
    let results = serde_json::json!({
        "lm_eval_version": "0.4.9", "model_name": text(row, "model"),
        "results": {task: {"alias": task, format!("exact_match,{filter}"): score, format!("exact_match_stderr,{filter}"): 0.005}},
        "configs": {task: {"metric_list": [{"metric": "exact_match"}], "filter_list": [{"name": filter}]}},
        "n-samples": {task: {"original": n, "effective": n}},
    });
    (name, meta.to_string(), results.to_string())
}

/// One measured point: throughput rises and interactivity falls with concurrency, so every point
/// of a curve is on its frontier.
fn point(conc: i64) -> (f64, f64, f64) {
    let c = conc.max(1) as f64;
    (120.0 * c.powf(0.7), 180.0 / c.sqrt(), 2.0 + 0.5 * c)
}

/// The benchmark artifacts of one benchmark row, named by `src/results/shapes.toml` as the
/// workflows name them: `bmk_${RF}` with `agg_${RF}.json` (single-node fixed-seq),
/// `agg_${RF}_<suffix>.json` (multi-node), or `bmk_agentic_${RF}` with `${RF}.json` (single-node
/// AgentX) and `${RF}_conc<N>.json` (multi-node AgentX).
fn benchmark_artifacts(row: &Row) -> Vec<(String, String, String)> {
    let multinode = row.get("prefill").is_some();
    let agentic = text(row, "scenario-type") == "agentic-coding";
    let int = |k: &str| text(row, k).parse::<i64>().unwrap_or(1);
    let workers = |r: &str| {
        let w = |k: &str| row.get(r).and_then(|w| w.get(k)).and_then(Value::as_i64).unwrap_or(1);
        w("tp") * w("num-worker")
    };
    let mut out = Vec::new();
    let rows: Vec<Vec<i64>> =
        if multinode { vec![concs(row)] } else { concs(row).into_iter().map(|c| vec![c]).collect() };
    for list in rows {
        let rf = result_filename(row, &list);
        let artifact =
            |kind| shapes::artifact_name(kind, multinode, &[("RF", &rf)]).expect("shapes.toml names aggregates");
        let aggregate_file_name = |kind, values: &[(&str, &str)]| {
            let values: Vec<(&str, &str)> = [("RF", rf.as_str())].into_iter().chain(values.iter().copied()).collect();
            shapes::aggregate_file_name(kind, multinode, &values).expect("shapes.toml names aggregate files")
        };
        for conc in list.iter().copied() {
            let (tput, intvty, e2el) = point(conc);
            let (artifact, file, body) = if agentic {
                let file = aggregate_file_name(ArtifactKind::AgenticAggregate, &[("CONC", &conc.to_string())]);
                let latency = |v: f64| serde_json::json!({"median": v, "p75": v, "p90": v});
                let body = serde_json::json!({
                    "infmax_model_prefix": text(row, "model-prefix"), "hw": text(row, "runner"),
                    "framework": text(row, "framework"), "precision": text(row, "precision"), "image": text(row, "image"),
                    "scenario_type": "agentic-coding", "disagg": multinode, "conc": conc, "is_multinode": multinode,
                    "request_metrics": {"throughput": {"per_gpu": {"total_tput_tps": tput}},
                                        "latency": {"e2el": latency(e2el), "itl": latency(1.0 / intvty),
                                                    "e2e_norm_intvty": latency(intvty)}},
                });
                (artifact(ArtifactKind::AgenticAggregate), file, body)
            } else {
                let file = aggregate_file_name(ArtifactKind::FixedSeqAggregate, &[("SUFFIX", &format!("conc{conc}"))]);
                let body = serde_json::json!({
                    "hw": text(row, "runner"), "conc": conc, "image": text(row, "image"), "model": text(row, "model"),
                    "infmax_model_prefix": text(row, "model-prefix"), "framework": text(row, "framework"),
                    "precision": text(row, "precision"), "spec_decoding": text(row, "spec-decoding"), "disagg": multinode,
                    "recipe_fingerprint": "", "isl": int("isl"), "osl": int("osl"), "is_multinode": multinode,
                    "tp": int("tp"), "pp": int("pp"), "ep": int("ep"), "num_prefill_gpu": workers("prefill"),
                    "num_decode_gpu": workers("decode"), "tput_per_gpu": tput, "output_tput_per_gpu": tput / 9.0,
                    "input_tput_per_gpu": tput * 8.0 / 9.0, "median_intvty": intvty, "median_e2el": e2el,
                });
                (artifact(ArtifactKind::FixedSeqAggregate), file, body)
            };
            out.push((artifact, file, body.to_string()));
        }
    }
    out
}

/// A green `run-sweep.yml` run on the head for the PR's own matrix (upstream's processor over the
/// entries it appends, `checks::generated::pr_changelog`): one successful check-run per job of
/// each family (ARCHITECTURE decision 7), named `<family> / <job>` as GitHub names reusable-workflow
/// jobs, and the eval artifacts every eval job uploads. A PR without a changelog entry runs no
/// sweep and gets the changelog check only.
fn sweep(evidence: &mut Evidence, run_id: u64) {
    let head_sha = evidence.pull_request.head_sha.clone();
    let url = |job: usize| format!("https://github.com/SemiAnalysisAI/InferenceX/actions/runs/{run_id}/job/{job}");
    let mut check_runs = Vec::new();
    let mut artifacts = BTreeMap::new();
    let changelog = generated::pr_changelog(evidence).ok().flatten();
    let matrix = changelog.as_ref().map(|c| c.process(evidence));
    let mut names = vec!["check-changelog".to_owned(), "setup / generate-matrix".to_owned()];
    if let Some(Ok(out)) = &matrix {
        for (family, rows) in families(out) {
            let eval = family.contains("eval");
            for row in rows {
                names.push(format!("{family} / {}", job_name(row)));
                if !eval {
                    for (artifact, file, body) in benchmark_artifacts(row) {
                        evidence.artifacts.insert(format!("{run_id}/{artifact}/{file}"), body);
                        artifacts.insert(artifact, Fact::Ok(()));
                    }
                    continue;
                }
                // A multi-node eval job evaluates `eval-conc`, else the largest of its conc list
                // (benchmark-multinode-tmpl.yml:141-142, 493-495).
                let eval_concs = match row.get("eval-conc").and_then(Value::as_i64) {
                    Some(conc) => vec![conc],
                    None if row.get("prefill").is_some() => concs(row).into_iter().max().into_iter().collect(),
                    None => concs(row),
                };
                for conc in eval_concs {
                    let (name, meta, results) = eval_artifact(row, conc);
                    evidence.artifacts.insert(format!("{run_id}/{name}/meta_env.json"), meta);
                    evidence.artifacts.insert(format!("{run_id}/{name}/results_2026-08-19T12-00-00.json"), results);
                    artifacts.insert(name, Fact::Ok(()));
                }
            }
        }
        names.push("collect-evals / collect-evals".to_owned());
    }
    for (job, name) in names.into_iter().enumerate() {
        check_runs.push(CheckRun {
            name,
            status: "completed".into(),
            conclusion: Some("success".into()),
            details_url: url(job + 1),
            run_id: Some(run_id),
        });
    }
    evidence.check_runs.insert(head_sha, Fact::Ok(check_runs));
    if let Some(run) = evidence.runs.get_mut(&run_id) {
        run.artifacts = artifacts.clone();
    }
    published(evidence, run_id, artifacts);
}

/// What `collect` records for each affected config's series (format 2): a config new at the head
/// has none (`Ok(None)`); one at base has the run its last changelog entry published, a `push`
/// run on the base commit here, whose points and evals are those of this PR's run (a retune that
/// keeps the curve).
fn published(evidence: &mut Evidence, run_id: u64, artifacts: BTreeMap<String, Fact<()>>) {
    let cx = Context::new(evidence);
    let configs = affected_configs(&cx).unwrap_or_default();
    drop(cx);
    let main_run = run_id + 10_000_000_000;
    let mut any = false;
    for config in &configs {
        let run = generated::has_config(&evidence.base, &config.key).then(|| PublishedRun {
            run_id: main_run,
            pr: 0,
            source: "main".into(),
            merged_at: None,
        });
        any |= run.is_some();
        evidence.upstream.published_runs.insert(config.key.clone(), Fact::Ok(run));
    }
    if !any {
        return;
    }
    let copies: Vec<(String, Vec<u8>)> = evidence
        .artifacts
        .paths()
        .filter_map(|p| p.strip_prefix(&format!("{run_id}/")).map(str::to_owned))
        .filter_map(|rest| Some((rest.clone(), evidence.artifacts.read(&format!("{run_id}/{rest}")).ok()??)))
        .collect();
    for (rest, bytes) in copies {
        evidence.artifacts.insert(format!("{main_run}/{rest}"), bytes);
    }
    let mut run = evidence.runs[&run_id].clone();
    run.id = main_run;
    run.event = "push".into();
    run.head_sha = evidence.pull_request.base_sha.clone();
    run.artifacts = artifacts;
    evidence.runs.insert(main_run, run);
}

/// Whether check `id` FAILs.
fn judged_fail(verdict: &Verdict, id: u8) -> bool {
    verdict.result(id).is_some_and(|r| r.outcome.status == Status::Fail)
}

/// One PR's verdict, with the frameworks and vendors of the configs it affects.
struct Verified {
    configs: Vec<(String, &'static str)>,
    verdict: Verdict,
}

/// Builds PR `entry`'s evidence, writes it as a bundle under `bundles` and verifies what reads
/// back (the bundle is removed after reading unless kept); prints where the time went.
fn verify_pr(clone: &Path, entry: &PrEntry, bundles: &Path, remove: bool) -> Verified {
    let at = std::time::Instant::now();
    let built = build_evidence(clone, entry);
    let build_time = at.elapsed();
    let dir = bundles.join(format!("pr-{}", entry.number));
    write_bundle(&dir, &built).unwrap();
    drop(built);
    let evidence = read_bundle(&dir).unwrap();
    if remove {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    let bundle_time = at.elapsed() - build_time;
    let cx = Context::new(&evidence);
    let configs = affected_configs(&cx)
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.framework.clone(), if is_nvidia_sku(&sku(&c.runner)) { "nvidia" } else { "amd" }))
        .collect();
    drop(cx);
    let verify_at = std::time::Instant::now();
    let verdict = verify(&evidence);
    eprintln!(
        "#{}: build {build_time:.1?}, bundle {bundle_time:.1?}, verify {:.1?}",
        entry.number,
        verify_at.elapsed()
    );
    Verified { configs, verdict }
}

#[test]
fn real_merged_prs_are_not_falsely_rejected() {
    let Some(history) = history::history_bundle("the real-PR corpus") else { return };
    let started = std::time::Instant::now();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/corpus");
    let prs: PrList = toml::from_str(&std::fs::read_to_string(root.join("prs.toml")).unwrap()).unwrap();
    let exceptions: ExceptionList =
        toml::from_str(&std::fs::read_to_string(root.join("exceptions.toml")).unwrap()).unwrap();
    for e in &exceptions.exception {
        assert!(prs.pr.iter().any(|p| p.number == e.pr), "exception for #{} which is not in the corpus", e.pr);
        assert!(!e.lines.is_empty() && !e.rule.is_empty(), "exception #{} check {} names no lines", e.pr, e.check);
    }
    for o in &exceptions.open {
        assert!(
            prs.pr.iter().any(|p| p.number == o.pr) && !o.class.is_empty(),
            "open defect #{} check {}",
            o.pr,
            o.check
        );
    }
    assert!(prs.pr.len() >= 40, "the corpus needs at least 40 PRs");

    // Bundles are thousands of small files each: on a memory file system where there is one
    // (at most the clone and two bundles, ~40 MB, at a time), written and removed several times
    // faster than on a loaded disk.
    let work = tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir()).unwrap();
    let clone = work.path().join("ix");
    history::clone_history(&history, &clone);

    let mut fails_per_check: BTreeMap<u8, Vec<u64>> = BTreeMap::new();
    let mut false_rejections = Vec::new();
    let mut still_open = BTreeSet::new();
    let (mut frameworks, mut vendors) = (BTreeSet::new(), BTreeSet::new());
    // `SWEEPGATE_CORPUS_PRS=2660,2672` verifies only those PRs (a debugging aid: the completeness
    // assertions below then only hold for the whole corpus), `SWEEPGATE_CORPUS_OUT=DIR` keeps the
    // bundles for `sweepgate verify --bundle`.
    let only: Option<BTreeSet<u64>> = std::env::var("SWEEPGATE_CORPUS_PRS")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().trim_start_matches('#').parse().ok()).collect());
    let keep = std::env::var_os("SWEEPGATE_CORPUS_OUT").map(PathBuf::from);
    let selected: Vec<&PrEntry> =
        prs.pr.iter().filter(|p| only.as_ref().is_none_or(|o| o.contains(&p.number))).collect();
    eprintln!("history cloned in {:.1?}", started.elapsed());
    // Two PRs at a time (each has its own bundle directory, evidence and verdict); the verdicts
    // are judged below in the list's order.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(2);
    let next = AtomicUsize::new(0);
    let bundles = keep.as_deref().unwrap_or(work.path());
    let mut verified: Vec<(usize, Verified)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        let Some(entry) = selected.get(index) else { break };
                        out.push((index, verify_pr(&clone, entry, bundles, keep.is_none())));
                    }
                    out
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("a corpus worker panicked")).collect()
    });
    verified.sort_by_key(|(index, _)| *index);
    for (entry, Verified { configs, verdict }) in selected.iter().zip(verified.into_iter().map(|(_, v)| v)) {
        for (framework, vendor) in configs {
            frameworks.insert(framework);
            vendors.insert(vendor);
        }
        for result in verdict.with_status(Status::Fail) {
            fails_per_check.entry(result.id).or_default().push(entry.number);
        }
        for id in (0..CHECKS).filter(|id| judged_fail(&verdict, *id)) {
            let outcome = &verdict.result(id).unwrap().outcome;
            if exceptions.open.iter().any(|o| o.pr == entry.number && o.check == id) {
                still_open.insert((entry.number, id));
                eprintln!("open #{} check {id}: {}", entry.number, serde_json::to_string(&outcome.message).unwrap());
                continue;
            }
            if !exceptions.exception.iter().any(|e| e.pr == entry.number && e.check == id) {
                false_rejections.push(format!(
                    "#{} check {id}: {} {}",
                    entry.number,
                    serde_json::to_string(&outcome.message).unwrap(),
                    outcome.evidence.join(" ")
                ));
            }
        }
    }

    drop(work);
    eprintln!("real-PR corpus: {} merged PRs in {:.1?} on {threads} threads", selected.len(), started.elapsed());
    eprintln!("check | FAILs | exception | open | PRs");
    for id in 0..CHECKS {
        let prs = fails_per_check.get(&id).cloned().unwrap_or_default();
        let excused = exceptions.exception.iter().filter(|e| e.check == id && prs.contains(&e.pr)).count();
        let open = exceptions.open.iter().filter(|o| o.check == id && prs.contains(&o.pr)).count();
        let list: Vec<String> = prs.iter().map(|n| format!("#{n}")).collect();
        eprintln!("{id:>5} | {:>5} | {excused:>9} | {open:>4} | {}", prs.len(), list.join(" "));
    }
    eprintln!("frameworks: {frameworks:?}; vendors: {vendors:?}");
    if only.is_some() {
        assert!(false_rejections.is_empty(), "false rejections of merged PRs:\n{}", false_rejections.join("\n"));
        return;
    }
    for wanted in ["vllm", "sglang", "trt", "atom", "dynamo"] {
        assert!(frameworks.iter().any(|f| f.contains(wanted)), "the corpus has no {wanted} config: {frameworks:?}");
    }
    assert_eq!(vendors.len(), 2, "the corpus covers AMD and NVIDIA: {vendors:?}");
    let open_count = exceptions.open.len();
    eprintln!("open sweepgate defects (false rejections still made): {open_count}");
    for o in &exceptions.open {
        eprintln!("  #{} check {}: {} ({})", o.pr, o.check, o.class, o.why);
    }
    let fixed: Vec<String> = exceptions
        .open
        .iter()
        .filter(|o| !still_open.contains(&(o.pr, o.check)))
        .map(|o| format!("#{} check {}", o.pr, o.check))
        .collect();
    assert!(fixed.is_empty(), "no longer FAIL; remove them from exceptions.toml [[open]]: {}", fixed.join(", "));
    assert!(false_rejections.is_empty(), "false rejections of merged PRs:\n{}", false_rejections.join("\n"));
}

/// The names of the settings Check 3 finds uncovered.
fn uncovered(verdict: &Verdict) -> Vec<String> {
    let Some(result) = verdict.result(3) else { return vec![] };
    let problems = result.outcome.message.args.get("problems").and_then(Value::as_array).cloned().unwrap_or_default();
    problems
        .iter()
        .filter(|p| p["kind"] == "uncovered")
        .flat_map(|p| p["settings"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| s["name"].as_str().map(str::to_owned))
        .collect()
}

/// Check 3 on a real merged SGLang PR (#2652, GLM-5.2 B200 AgentX HiCache tuning), whose launcher
/// sources the real `benchmarks/benchmark_lib.sh`: with the cookbook written from the launcher the
/// setting it tunes (`--mem-fraction-static`) is covered; a cookbook that leaves that line out
/// FAILs naming it (the launch-model done-when: Check 3 bundles built with the real library).
#[test]
fn check_3_on_a_real_launcher_with_the_real_benchmark_library() {
    let Some(history) = history::history_bundle("the real-PR corpus") else { return };
    let work = tempfile::tempdir().unwrap();
    let clone = work.path().join("ix");
    history::clone_history(&history, &clone);
    let entry = PrEntry { number: 2652, merge: "bb91726d161baf66c588aeeafff3aed60b54cf93".into() };
    let evidence = build_evidence(&clone, &entry);
    assert!(evidence.head.text("benchmarks/benchmark_lib.sh").is_some_and(|t| t.len() > 10_000), "the real library");
    let launcher = "benchmarks/single_node/agentic/glm5.2_fp4_b200_sglang_mtp.sh";
    assert!(evidence.head.text(launcher).is_some_and(|t| t.contains("benchmark_lib.sh")), "{launcher} sources it");
    let setting = "--mem-fraction-static";
    let url = "https://github.com/sgl-project/sglang/pull/92652";
    let page = |e: &Evidence| match e.upstream.contents.get(url) {
        Some(Fact::Ok(c)) => c.files.values().cloned().collect::<String>(),
        other => panic!("no cookbook for #2652: {other:?}"),
    };
    assert!(page(&evidence).contains(setting), "the cookbook states {setting}:\n{}", page(&evidence));
    // The page states the value the launcher runs with (its default, 0.83), not the variable.
    let default = "MEM_FRACTION_STATIC=\"${MEM_FRACTION_STATIC:-0.83}\"";
    assert!(evidence.head.text(launcher).is_some_and(|t| t.contains(default)), "{launcher} defaults it to 0.83");
    assert!(
        page(&evidence).contains(&format!("{setting} 0.83")),
        "the cookbook states the value:\n{}",
        page(&evidence)
    );

    let complete = verify(&evidence);
    let named = uncovered(&complete);
    assert!(!named.iter().any(|n| n == setting), "{setting} is stated, yet Check 3 names it: {named:?}");
    let exceptions: ExceptionList = toml::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/corpus/exceptions.toml"))
            .unwrap(),
    )
    .unwrap();
    let open = exceptions.open.iter().any(|o| o.pr == 2652 && o.check == 3);
    let status = complete.result(3).map(|r| r.outcome.status);
    assert!(open || status == Some(Status::Pass), "Check 3 on the complete cookbook: {status:?}, uncovered {named:?}");

    let mut missing = evidence.clone();
    if let Some(Fact::Ok(content)) = missing.upstream.contents.get_mut(url) {
        for text in content.files.values_mut() {
            *text = text.lines().filter(|l| !l.contains(setting)).map(|l| format!("{l}\n")).collect();
        }
    }
    assert!(!page(&missing).contains(setting));
    let verdict = verify(&missing);
    assert_eq!(verdict.result(3).map(|r| r.outcome.status), Some(Status::Fail));
    let named = uncovered(&verdict);
    assert!(named.iter().any(|n| n == setting), "Check 3 must name {setting}: {named:?}");
}
