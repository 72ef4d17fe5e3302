//! Check 10 — No engine patches (spec 30 Check 10, §7.4): the pinned image runs as shipped,
//! unless a waiver named after this PR covers the patch and the sign-off links it.

use serde_json::json;

use std::collections::BTreeSet;

use super::{reason, Context, Outcome};
use crate::domain::launch::shell::ScriptValues;
use crate::domain::waiver::{links_to_waiver, Waiver};
use crate::pr::affected::affected_configs;
use crate::pr::reach::{self, LaunchPath, ReachKind, Why};
use crate::pr::scan::{self, Role};
use crate::repo::{Layout, Logical};

/// Markers of an installed engine or its container, wherever they appear in the line.
const ENGINE_PATHS: [&str; 7] =
    ["site-packages", "dist-packages", "/sgl-workspace", "find_spec", "__file__", "tensorrt_llm/", "/opt/dynamo"];
/// Engine source directories: an engine path only inside an absolute path. The repository's own
/// `srt-slurm-recipes/sglang/…` and a checkout's `recipes/sglang/…` are not engine files, and
/// copying them (`cp -rT "$GITHUB_WORKSPACE/…/sglang/…" recipes/sglang/…`) patches nothing.
const ENGINE_SOURCE_DIRS: [&str; 2] = ["/vllm/", "/sglang/"];

/// Whether the line names a file of the installed engine.
fn touches_engine(code: &str) -> bool {
    ENGINE_PATHS.iter().any(|p| code.contains(p))
        || code
            .split_whitespace()
            .map(|t| t.trim_matches(|c| c == '"' || c == '\''))
            .any(|token| token.starts_with('/') && ENGINE_SOURCE_DIRS.iter().any(|d| token.contains(d)))
}
/// The engines and their kernel packages, as pip normalizes names (`_` → `-`, lower case).
const ENGINE_PACKAGES: [&str; 7] =
    ["vllm", "sglang", "sgl-kernel", "tensorrt", "tensorrt-llm", "flashinfer", "flashinfer-python"];

/// Variables that name the repository's checkout (its own files, never the engine's).
/// Each bound to `<repository>`: not an absolute path, so never an engine path.
const REPOSITORY_VARIABLES: [(&str, &str); 4] = [
    ("GITHUB_WORKSPACE", "<repository>"),
    ("SCRIPT_DIR", "<repository>"),
    ("INFMAX_WORKSPACE", "<repository>"),
    ("REPO_ROOT", "<repository>"),
];

/// The values a script's variables may hold (every assignment, any branch: the launch model's
/// [`ScriptValues`]), and the image versions an engine install is compared with.
#[derive(Debug, Default)]
struct Variables {
    values: ScriptValues,
    /// The version of every affected config's image tag (`lmsysorg/sglang:v0.5.9-cu130` → `0.5.9`),
    /// or `None` for a tag without one.
    image_versions: Vec<Option<String>>,
}

impl Variables {
    fn of(text: &str, images: &[String]) -> Variables {
        Variables {
            values: ScriptValues::of(text),
            image_versions: images.iter().map(|i| image_version(i.as_str())).collect(),
        }
    }

    /// Every expansion of `token`, as the shell expands it over every value its variables may
    /// hold, or why there is none: a variable that no assignment and no repository variable
    /// resolves, or more expansions than [`MAX_EXPANSIONS`] (PR input is bounded; such a path is
    /// unresolved). A command substitution is not evaluated: its text stays, so an engine marker
    /// in it (`sglang.__file__`) still names the engine.
    fn expand(&self, token: &str) -> Result<Vec<String>, Unexpanded> {
        match self.values.expand(token, &REPOSITORY_VARIABLES, MAX_EXPANSIONS) {
            Ok(paths) => Ok(paths),
            Err(u) if u.why == "command_substitution" => Ok(vec![token.to_owned()]),
            Err(u) if u.why == "too_many_values" => Err(Unexpanded::TooMany),
            Err(_) => Err(Unexpanded::Unknown),
        }
    }
}

/// Why a path has no expansion.
#[derive(Debug, PartialEq)]
enum Unexpanded {
    /// A variable nothing in the script assigns (the container's environment, an argument).
    Unknown,
    /// More than [`MAX_EXPANSIONS`] combinations of assigned values.
    TooMany,
}

/// The expansions of one path that are looked at.
const MAX_EXPANSIONS: usize = 256;

/// The version an image tag names: `v0.5.9-cu130` → `0.5.9`.
fn image_version(image: &str) -> Option<String> {
    let tag = image.rsplit_once(':').map(|(_, t)| t)?.trim_start_matches('v');
    let version: String = tag.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    let version = version.trim_end_matches('.');
    (!version.is_empty() && version.contains('.')).then(|| version.to_owned())
}

/// Names of the engines, their kernels and serving stacks as a submodule's path spells them
/// (lower case, `-`, `_` and `.` dropped): such a submodule is serving code (decision RV2).
const SERVING_SUBMODULES: [&str; 8] =
    ["vllm", "sglang", "sglkernel", "tensorrt", "tensorrtllm", "trtllm", "flashinfer", "dynamo"];

/// Whether a submodule at `path` holds serving code: a component of its path names an engine,
/// its kernels or a serving stack (`third_party/sglang`, `deps/TensorRT-LLM`). The pointer's
/// content is in no archive, so the path is what can be read.
fn serves(path: &str) -> bool {
    path.split('/').any(|part| {
        let name: String =
            part.chars().filter(|c| !matches!(c, '-' | '_' | '.')).collect::<String>().to_ascii_lowercase();
        SERVING_SUBMODULES.contains(&name.as_str())
    })
}

/// The submodules the PR moves, adds or removes, as the rows name them.
fn submodule_args(cx: &Context) -> Vec<serde_json::Value> {
    let short = |sha: &Option<String>| sha.as_deref().map(|s| s[..7].to_owned());
    cx.evidence
        .files
        .iter()
        .filter_map(|f| f.gitlink())
        .map(|g| json!({"serving": serves(&g.path), "path": g.path, "old": short(&g.old), "new": short(&g.new)}))
        .collect()
}

/// Where a written path goes once its variables are expanded.
#[derive(Debug, PartialEq)]
enum Target {
    Engine,
    /// A variable no assignment resolves, in a path that names an engine source tree.
    Unresolved(String),
    Other,
}

/// Names in a path (or in the command substitution a variable holds) that make it the engine's
/// own tree, not any installed package (`rixl._api.__file__` is a library of the container).
const ENGINE_TREES: [&str; 7] =
    ["vllm", "sglang", "sgl_kernel", "tensorrt_llm", "flashinfer", "/sgl-workspace", "/opt/dynamo"];

fn target_of(token: &str, vars: &Variables) -> Target {
    let token = token.trim_matches(['"', '\'']);
    if !token.contains('$') {
        return if touches_engine(token) { Target::Engine } else { Target::Other };
    }
    let engine = |p: &String| touches_engine(p) && ENGINE_TREES.iter().any(|n| p.contains(n));
    match vars.expand(token) {
        Ok(paths) if paths.iter().any(engine) => Target::Engine,
        Ok(_) => Target::Other,
        // Too many combinations to look at: unresolved, whatever the path names.
        Err(Unexpanded::TooMany) => Target::Unresolved(token.to_owned()),
        // Unresolvable: it matters only when what follows the variable names an engine tree.
        Err(Unexpanded::Unknown) if ENGINE_SOURCE_DIRS.iter().chain(&ENGINE_PATHS).any(|d| token.contains(d)) => {
            Target::Unresolved(token.to_owned())
        }
        Err(Unexpanded::Unknown) => Target::Other,
    }
}

/// What a package installer (`pip`, `pip3`, `python -m pip`, `uv pip`, `conda`) installs: the
/// specs that name an engine or its kernels from anything but the image's own version (a fork, a
/// git or archive URL, a wheel, a local tree, another or no pinned version).
fn engine_installs(code: &str, vars: &Variables) -> Vec<String> {
    static INSTALL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let install = INSTALL.get_or_init(|| {
        regex::Regex::new(
            r"(?:^|[\s;&|(])(?:pip3?|python3?(?:\.[0-9]+)?\s+-m\s+pip|uv\s+pip|conda|mamba|micromamba)\s+install\s+([^;|&>]*)",
        )
        .expect("literal regex")
    });
    // Options whose value is not a package.
    const VALUED: [&str; 14] = [
        "-r",
        "--requirement",
        "-c",
        "--constraint",
        "-i",
        "--index-url",
        "--extra-index-url",
        "--python",
        "-t",
        "--target",
        "--prefix",
        "-f",
        "--find-links",
        "--channel",
    ];
    let mut out = Vec::new();
    for args in install.captures_iter(code).map(|c| c[1].to_owned()) {
        let mut skip = false;
        for word in args.split_whitespace() {
            if std::mem::take(&mut skip) {
                continue;
            }
            if word.starts_with('-') {
                skip = VALUED.contains(&word);
                continue;
            }
            let spec = word.trim_matches(['"', '\'']);
            let specs = match vars.expand(spec) {
                Ok(specs) => specs,
                // Bounded PR input: what it installs cannot be looked at, so it counts.
                Err(Unexpanded::TooMany) => {
                    out.push(spec.to_owned());
                    continue;
                }
                // The container's environment: judged as written.
                Err(Unexpanded::Unknown) => vec![spec.to_owned()],
            };
            for spec in specs {
                if let Some(name) = engine_package(&spec) {
                    let pinned = spec.split_once("==").map(|(_, v)| v.trim_start_matches('v').to_owned());
                    let image_version = pinned.is_some_and(|v| vars.image_versions.iter().flatten().any(|i| *i == v))
                        && !spec.contains("://");
                    if !image_version {
                        out.push(format!("{name} ({spec})"));
                    }
                }
            }
        }
    }
    out
}

/// The engine package a pip/conda spec installs: a requirement (`sglang[all]==0.5.7`), a wheel
/// file, a git or archive URL (`git+https://…/sglang.git@fork`, `#egg=sglang`), or a local tree.
fn engine_package(spec: &str) -> Option<String> {
    let name = if let Some((_, egg)) = spec.split_once("#egg=") {
        egg.to_owned()
    } else if spec.contains("://") || spec.starts_with("git+") {
        let path = spec.rsplit("://").next().unwrap_or(spec);
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let repo = match parts.iter().position(|p| *p == "archive") {
            Some(i) if i > 0 => parts[i - 1],
            _ => parts.last().copied().unwrap_or_default(),
        };
        repo.split('@').next().unwrap_or(repo).trim_end_matches(".git").to_owned()
    } else if let Some(wheel) = spec.strip_suffix(".whl") {
        wheel.rsplit('/').next().unwrap_or(wheel).split('-').next().unwrap_or_default().to_owned()
    } else if spec.starts_with(['.', '/', '~']) {
        spec.trim_end_matches('/').rsplit('/').next().unwrap_or_default().to_owned()
    } else {
        spec.split(|c: char| "=<>!~[;@ ".contains(c)).next().unwrap_or_default().to_owned()
    };
    let name = name.to_ascii_lowercase().replace('_', "-");
    ENGINE_PACKAGES.contains(&name.as_str()).then_some(name)
}

#[derive(Debug)]
struct Patch {
    file: String,
    line: u32,
    kind: &'static str,
    /// `file:line` that reaches an unchanged file on the launch path; `None` for the PR's own lines.
    via: Option<String>,
    /// What the line writes or installs, when that is what makes it a patch.
    target: Option<String>,
}

/// Commands that overwrite a file (copies, moves, links, syncs), as words of the command line.
const OVERWRITE_COMMANDS: [&str; 5] = ["cp", "mv", "ln", "rsync", "tee"];
/// In-place edits, heredocs and Python writes, anywhere in the line.
const OVERWRITE_MARKERS: [&str; 6] = ["sed -i", "cat >", "write_text(", "shutil.copy", "'w')", "\"w\")"];

fn overwrites(code: &str) -> bool {
    OVERWRITE_MARKERS.iter().any(|m| code.contains(m))
        || code
            .split(|c: char| c.is_whitespace() || matches!(c, '(' | ';' | '&' | '|'))
            .any(|word| OVERWRITE_COMMANDS.contains(&word) || word == "patch")
}

/// The files a redirection writes (`> f`, `>> f`, `&> f`); a file descriptor (`2>&1`) and
/// `/dev/null` are not files.
fn redirect_targets(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find('>') {
        let after = rest[at + 1..].trim_start_matches('>').trim_start();
        let target =
            after.split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | ')')).next().unwrap_or("");
        if !target.is_empty() && !after.starts_with('&') && target != "/dev/null" {
            out.push(target);
        }
        rest = &rest[at + 1..];
    }
    out
}

/// `PYTHONPATH` with a first entry the PR controls (a variable or command substitution such as
/// a temp dir of `sitecustomize.py`, or the repository's checkout) shadows the engine's
/// modules; an absolute directory of the container (`/sgl-workspace/aiter:$PYTHONPATH`) does not.
fn shadows_modules(code: &str) -> bool {
    let Some(at) = code.find("PYTHONPATH=") else { return false };
    let value = code[at + "PYTHONPATH=".len()..].trim_start_matches(['"', '\'']);
    let first = value.split(':').next().unwrap_or_default();
    let own =
        ["$GITHUB_WORKSPACE", "${GITHUB_WORKSPACE}", "/infmax-workspace", "$(dirname", "$SCRIPT_DIR", "${SCRIPT_DIR}"];
    let variable = first.starts_with('$') && !first.trim_start_matches(['$', '{']).starts_with("PYTHONPATH");
    !first.is_empty() && (variable || own.iter().any(|o| first.starts_with(o)))
}

/// What makes a command a patch, and of what (a written path or an installed spec).
fn classify(code: &str, vars: &Variables) -> Option<(&'static str, Option<String>)> {
    if code.contains("git apply") || code.contains("patch -p") || code.trim_start().starts_with("patch ") {
        return Some(("apply", None));
    }
    let written: Vec<&str> = if overwrites(code) {
        code.split_whitespace().filter(|w| w.contains('/') || w.contains('$')).collect()
    } else {
        redirect_targets(code)
    };
    if (overwrites(code) && touches_engine(code)) || written.iter().any(|w| target_of(w, vars) == Target::Engine) {
        return Some(("source_edit", None));
    }
    if let Some(Target::Unresolved(path)) =
        written.iter().map(|w| target_of(w, vars)).find(|t| matches!(t, Target::Unresolved(_)))
    {
        return Some(("unresolved_write", Some(path)));
    }
    if let Some(spec) = engine_installs(code, vars).into_iter().next() {
        return Some(("wheel", Some(spec)));
    }
    classify_shadowing(code).map(|kind| (kind, None))
}

fn classify_shadowing(code: &str) -> Option<&'static str> {
    if shadows_modules(code) {
        return Some("monkey_patch");
    }
    (code.contains("sitecustomize") || code.contains("importlib.util.find_spec")).then_some("monkey_patch")
}

/// Markers of eval and client tooling (spec 30 Check 10 rule 2: harness dependencies are allowed).
const HARNESS: [&str; 4] = ["lm_eval", "lm-eval", "aiperf", "evals/"];

/// Lines inside a shell function that sets up eval or client tooling (`_patch_lm_eval() { … }`
/// shadows lm-eval with a `sitecustomize.py`): its function name or body names the harness and
/// no line names an engine path.
fn harness_lines(lines: &[scan::AddedLine]) -> std::collections::BTreeSet<u32> {
    static START: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let start = START.get_or_init(|| {
        regex::Regex::new(r"^\s*(?:function\s+)?([A-Za-z_][A-Za-z0-9_:-]*)\s*\(\)\s*\{?\s*$").expect("literal regex")
    });
    let mut out = std::collections::BTreeSet::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(name) = start.captures(lines[i].text).map(|c| c[1].to_owned()) else {
            i += 1;
            continue;
        };
        let indent = lines[i].text.len() - lines[i].text.trim_start().len();
        let end = lines[i + 1..]
            .iter()
            .position(|l| l.text.trim() == "}" && l.text.len() - l.text.trim_start().len() <= indent)
            .map_or(lines.len(), |p| i + 1 + p);
        let body = &lines[i..end];
        let harness =
            HARNESS.iter().any(|h| name.contains(h) || body.iter().any(|l| scan::code_part(l.text).contains(h)));
        if harness && !body.iter().any(|l| touches_engine(scan::code_part(l.text))) {
            out.extend(body.iter().map(|l| l.line));
        }
        i = end.max(i + 1);
    }
    out
}

/// The patches among numbered lines of one file; a command continued with `\\` is judged
/// whole, at the line it starts on. Monkey-patches and applied patches of eval or client
/// tooling inside a harness function are not engine patches.
fn patches_in(lines: &[scan::AddedLine], vars: &Variables) -> Vec<(u32, &'static str, Option<String>)> {
    let harness = harness_lines(lines);
    let engine = |(line, kind, _): &(u32, &'static str, Option<String>)| {
        !(harness.contains(line) && matches!(*kind, "monkey_patch" | "apply"))
    };
    let mut out = Vec::new();
    let mut command = String::new();
    let mut start = 0;
    for added in lines {
        let code = scan::code_part(added.text);
        if command.is_empty() {
            start = added.line;
        }
        match code.trim_end().strip_suffix('\\') {
            Some(head) if added.line.saturating_sub(start) < 64 => {
                command.push_str(head);
                command.push(' ');
                continue;
            }
            _ => command.push_str(code),
        }
        out.extend(classify(&command, vars).map(|(kind, target)| (start, kind, target)));
        command.clear();
    }
    out.extend(classify(&command, vars).map(|(kind, target)| (start, kind, target)));
    out.retain(engine);
    out
}

fn is_patch_file(name: &str) -> bool {
    name.ends_with(".patch") || name.ends_with(".diff")
}

/// What the PR's changed files add, and what their launch paths reach unchanged.
struct Found {
    serving: usize,
    configs: usize,
    reached: usize,
    patches: Vec<Patch>,
    unavailable: Vec<reach::Unreachable>,
}

fn find_patches(cx: &Context) -> Result<Found, Outcome> {
    let ev = cx.evidence;
    // Unknown affected configs: no image version is known, so any pinned engine install counts.
    let images: Vec<String> =
        affected_configs(cx).map(|a| a.into_iter().map(|c| c.image).collect()).unwrap_or_default();
    let vars_of = |path: &str, lines: &[scan::AddedLine]| match ev.head.text(path) {
        Some(text) => Variables::of(text, &images),
        None => Variables::of(&lines.iter().map(|l| l.text).collect::<Vec<_>>().join("\n"), &images),
    };
    let mut serving = 0;
    let mut patches = Vec::new();
    for (file, role) in scan::changed(ev) {
        // A submodule holding serving code runs whatever its commit holds, and no archive holds
        // it: it cannot be inspected, so it is a patch a waiver must name (decision RV2).
        if let Some(gitlink) = file.gitlink() {
            if gitlink.new.is_some() && serves(&gitlink.path) {
                serving += 1;
                patches.push(Patch { file: gitlink.path, line: 1, kind: "submodule", via: None, target: None });
            }
            continue;
        }
        if role == Role::Other {
            continue;
        }
        serving += 1;
        let name = &file.filename;
        // A patch file the PR adds, changes or renames is a patch of this PR (removals are not).
        if file.status != "removed" && is_patch_file(name) {
            patches.push(Patch { file: name.clone(), line: 1, kind: "patch_file", via: None, target: None });
            continue;
        }
        let Some(lines) = scan::added_lines_of(ev, file) else {
            return Err(Outcome::unreadable(name.as_str(), reason("no_diff_or_content")));
        };
        // Past the verification's scan budget the file is unread, and the check cannot pass.
        let bytes = lines.iter().map(|l| l.text.len()).sum();
        cx.charge_scan(name.as_str(), bytes).map_err(|spent| Outcome::unreadable(name.as_str(), spent))?;
        let vars = vars_of(name, &lines);
        patches.extend(patches_in(&lines, &vars).into_iter().map(|(line, kind, target)| Patch {
            file: name.clone(),
            line,
            kind,
            via: None,
            target,
        }));
    }
    let (reached, configs, unavailable) = launch_paths(cx)?;
    let mut count = 0;
    for file in reached {
        if file.kind == ReachKind::Data {
            continue; // read by the serving path, not run: nothing in it is scanned, nor counted
        }
        count += 1;
        if file.kind == ReachKind::Patch {
            patches.push(Patch { file: file.path, line: 1, kind: "reached_patch", via: Some(file.via), target: None });
            continue;
        }
        let Some(lines) = scan::head_lines(ev, &file.path) else { continue };
        let found = patches_in(&lines, &vars_of(&file.path, &lines));
        patches.extend(found.into_iter().map(|(line, kind, target)| Patch {
            file: file.path.clone(),
            line,
            kind,
            via: Some(file.via.clone()),
            target,
        }));
    }
    Ok(Found { serving, configs, reached: count, patches, unavailable })
}

/// The unchanged files the launch paths reach (of every affected config and every changed
/// script), the number of affected configs, and what could not be read. Recipes srt-slurm ships
/// itself (a `CONFIG_FILE=` outside this repository) belong to the pinned orchestrator and are
/// not the repository's to patch.
type Paths = (Vec<reach::Reached>, usize, Vec<reach::Unreachable>);

fn launch_paths(cx: &Context) -> Result<Paths, Outcome> {
    let ev = cx.evidence;
    let reaches =
        reach::affected_reach(cx).map_err(|error| Outcome::unreadable(reason("what_affected_entries"), error))?;
    let mut paths: Vec<LaunchPath> = reaches.iter().map(|r| r.path.clone()).collect();
    for (file, role) in scan::changed(ev) {
        // A changed script the head lacks is judged by its diff (the lost file is the head
        // tree's problem, `Context::head_available`).
        if role == Role::Script && file.filename.ends_with(".sh") && ev.head.get(&file.filename).is_some() {
            paths.push(reach::script_reach(cx, &file.filename));
        }
    }
    let changed: BTreeSet<&str> = ev.files.iter().map(|f| f.filename.as_str()).collect();
    let mut seen = BTreeSet::new();
    let mut files = Vec::new();
    let mut unavailable = Vec::new();
    for path in paths {
        for f in path.files {
            if !changed.contains(f.path.as_str()) && seen.insert(f.path.clone()) {
                files.push(f);
            }
        }
        for u in path.unavailable.into_iter().filter(|u| u.why != Why::ExternalRecipe) {
            if !unavailable.contains(&u) {
                unavailable.push(u);
            }
        }
    }
    Ok((files, reaches.len(), unavailable))
}

/// A waiver that mentions `file`: this PR's at the head, else one already on the default branch
/// (a patch filed before this PR is waived by the PR that introduced it).
fn waiver_of(cx: &Context, own: Option<(&str, &Waiver)>, file: &str) -> Option<(String, u64)> {
    let pr = cx.evidence.pull_request.number;
    if let Some((path, _)) = own.filter(|(_, w)| w.mentions(file)) {
        return Some((path.to_owned(), pr));
    }
    let policy = cx.evidence.policy_tree();
    let dir = Layout::default().resolve(policy, Logical::WaiverDir).ok().flatten()?;
    policy.paths().filter(|p| p.starts_with(&format!("{dir}/")) && p.ends_with(".md")).find_map(|p| {
        let number: u64 = p.rsplit('/').next()?.strip_suffix(".md")?.parse().ok()?;
        let waiver = Waiver::parse(policy.text(p)?, p).ok()?;
        waiver.mentions(file).then(|| (p.to_owned(), number))
    })
}

pub fn check(cx: &Context) -> Outcome {
    let Found { serving, configs, reached, patches, unavailable } = match find_patches(cx) {
        Ok(found) => found,
        Err(outcome) => return outcome,
    };
    let submodules = submodule_args(cx);
    if serving == 0 && configs == 0 && submodules.is_empty() {
        return Outcome::na("untouched");
    }
    // A definite patch finding is reported before what could not be read; a PASS needs both.
    let unreadable = || {
        let mut o = Outcome::fail("path_unavailable")
            .arg("unreachable", unavailable.iter().map(|u| u.to_json()).collect::<Vec<_>>());
        for u in &unavailable {
            o = o.evidence(format!("{} ({})", u.reference, u.via));
        }
        o
    };
    if patches.is_empty() && !unavailable.is_empty() {
        return unreadable();
    }
    if patches.is_empty() {
        return Outcome::pass("no_patches")
            .arg("count", serving)
            .arg("reached", reached)
            .arg("configs", configs)
            .arg("submodules", submodules);
    }
    let ev = cx.evidence;
    let pr = ev.pull_request.number;
    let patch_args: Vec<serde_json::Value> = patches
        .iter()
        .map(|p| {
            let mut arg = json!({"file": p.file, "line": p.line, "kind": p.kind});
            if let Some(via) = &p.via {
                arg["via"] = json!(via);
            }
            if let Some(target) = &p.target {
                arg["target"] = json!(target);
            }
            arg
        })
        .collect();
    let refs: Vec<String> = patches.iter().map(|p| format!("{}:{}", p.file, p.line)).collect();
    let fail = |problem: &str, waiver: &str, detail: String| {
        let mut o = Outcome::fail("patched")
            .arg("patches", patch_args.clone())
            .arg("problem", problem)
            .arg("waiver", waiver)
            .arg("expected", format!("docs/waiver/{pr}.md"))
            .arg("detail", detail);
        for r in &refs {
            o = o.evidence(r.clone());
        }
        o
    };
    // The waiver is filed in this PR, so it is read at the head (in the layout the head uses).
    let dir =
        Layout::default().resolve(&ev.head, Logical::WaiverDir).ok().flatten().unwrap_or_else(|| {
            Layout::resolve_path(&ev.head, "docs/waiver").unwrap_or_else(|_| "docs/waiver".to_owned())
        });
    let path = format!("{dir}/{pr}.md");
    let own = match ev.head.text(&path).map(|text| Waiver::parse(text, &path)) {
        None => None,
        Some(Ok(w)) => Some(w),
        Some(Err(diags)) => {
            let detail = diags.iter().map(|d| d.message.clone()).collect::<Vec<_>>().join("; ");
            return fail("waiver_invalid", &path, detail);
        }
    };
    // The PR's own patches need this PR's waiver; an unchanged patch its launch path reaches
    // needs the waiver of the PR that introduced it, on the default branch, or this PR's.
    let mut waivers: Vec<(String, u64)> = Vec::new();
    for p in &patches {
        let covering = match (&p.via, &own) {
            (None, Some(w)) => w.mentions(&p.file).then(|| (path.clone(), pr)),
            (None, None) => return fail("no_waiver", &path, String::new()),
            (Some(_), _) => waiver_of(cx, own.as_ref().map(|w| (path.as_str(), w)), &p.file),
        };
        match covering {
            Some(w) if !waivers.contains(&w) => waivers.push(w),
            Some(_) => {}
            None if p.via.is_some() => return fail("reached_not_waived", &path, p.file.clone()),
            None => return fail("not_covered", &path, p.file.clone()),
        }
    }
    let links: Vec<String> =
        cx.signoff().as_ref().map_or(vec![], |s| s.detail_links().map(|l| l.url.clone()).collect());
    if let Some((unlinked, _)) = waivers.iter().find(|(_, n)| !links.iter().any(|l| links_to_waiver(l, *n))) {
        return fail("not_linked", unlinked, String::new());
    }
    if !unavailable.is_empty() {
        return unreadable();
    }
    let names: Vec<&str> = waivers.iter().map(|(p, _)| p.as_str()).collect();
    let mut o = Outcome::pass("waived")
        .arg("patches", patch_args)
        .arg("waiver", names.join(", "))
        .arg("submodules", submodules);
    for w in &waivers {
        o = o.evidence(w.0.clone());
    }
    for r in refs {
        o = o.evidence(r);
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, with_change};
    use crate::checks::Status;
    use crate::evidence::Evidence;
    use crate::repo::MemTree;

    const SCRIPT: &str = "benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_mi355x_sglang.sh";
    const SED_PATCH: &str = "@@ -20,2 +20,3 @@\n export SGLANG_USE_AITER=1\n+sed -i 's/max_tokens=128/max_tokens=512/' $(python3 -c 'import sglang,os;print(os.path.dirname(sglang.__file__))')/srt/site-packages-fix.py\n python3 -m sglang.launch_server\n";

    const WAIVER: &str = "# Inference-engine patch waiver — PR #42\n\nPer the checklist.\n\n## Config covered\n\n- `qwen3.5-fp8-mi355x-sglang`, script `benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_mi355x_sglang.sh`\n\n## What is patched\n\n| Upstream PR/issue | What it changes | Notes |\n|---|---|---|\n| https://github.com/sgl-project/sglang/pull/1 | max tokens | |\n\n## Why the unmodified upstream image cannot run this benchmark\n\nIt crashes at 8k input.\n\n## Upstream PR / issue links\n\n- https://github.com/sgl-project/sglang/pull/1\n\n## Removal plan\n\nBump the image when sglang#1 ships, drop the sed line and delete this waiver in the same PR.\n";

    fn patched() -> Evidence {
        with_change(evidence(), SCRIPT, SED_PATCH)
    }

    fn status(e: &Evidence) -> (Status, String) {
        let o = check(&Context::new(e));
        let problem = o.message.args.get("problem").and_then(|p| p.as_str()).unwrap_or(&o.message.key).to_owned();
        (o.status, problem)
    }

    /// Every patch kind of `patched` renders in both languages, with and without `via` and
    /// `target`, under each waiver problem (issue 28, done when).
    #[test]
    fn every_patch_kind_renders_in_both_languages() {
        let patch = |kind: &str, extra: serde_json::Value| {
            crate::checks::with_fields(json!({"file": "b.sh", "line": 4, "kind": kind}), extra)
        };
        let patches = [
            patch("patch_file", json!({})),
            patch("apply", json!({"via": "runners/launch_b200.sh"})),
            patch("source_edit", json!({})),
            patch("monkey_patch", json!({})),
            patch("reached_patch", json!({"via": "b.sh"})),
            patch("unresolved_write", json!({"target": "$X/site-packages/vllm"})),
            patch("wheel", json!({"target": "vllm==0.9"})),
            patch("wheel", json!({})),
            patch("submodule", json!({})),
        ];
        let problems = ["no_waiver", "waiver_invalid", "not_covered", "reached_not_waived", "not_linked"];
        let examples: Vec<Outcome> = patches
            .iter()
            .zip(problems.iter().cycle())
            .map(|(p, problem)| {
                Outcome::fail("patched")
                    .arg("patches", vec![p.clone()])
                    .arg("problem", *problem)
                    .arg("waiver", "docs/waiver/7.md")
                    .arg("expected", "docs/waiver/7.md")
                    .arg("detail", "b.sh")
            })
            .collect();
        crate::checks::tests_support::assert_every_kind_renders(10, "patched", &examples);
    }

    #[test]
    fn an_inline_sed_into_engine_sources_without_waiver_fails() {
        assert_eq!(status(&patched()), (Status::Fail, "no_waiver".into()));
    }

    /// PR #2548's bump of `utils/aiperf` (history bundle b7e8b0e3), at `path`.
    fn bump(path: &str) -> Evidence {
        let patch = "@@ -1 +1 @@\n-Subproject commit e9f2a5459ba8894becc5d6079e0092b2a0d0a669\n+Subproject commit b7e8b0e3fb8c7bf99404ba1d78d5242b01d04a9a\n";
        with_change(evidence(), path, patch)
    }

    #[test]
    fn a_benchmark_client_submodule_bump_passes_naming_the_submodule() {
        let e = bump("utils/aiperf");
        let cx = Context::new(&e);
        assert_eq!(cx.head_available().map_err(|r| r.to_string()), Ok(()), "a gitlink is no lost file");
        assert_eq!(cx.base_available().map_err(|r| r.to_string()), Ok(()));
        let o = check(&cx);
        assert_eq!((o.status, o.message.key.as_str()), (Status::Pass, "no_patches"));
        assert_eq!(
            o.message.args["submodules"],
            json!([{"path": "utils/aiperf", "old": "e9f2a54", "new": "b7e8b0e", "serving": false}])
        );
        let [en, zh] = crate::checks::tests_support::assert_renders(10, &o);
        assert!(
            en.contains("The PR moves the submodule `utils/aiperf` (e9f2a54 → b7e8b0e), whose path names no engine"),
            "{en}"
        );
        assert!(zh.contains("本 PR 移动了子模块 `utils/aiperf`（e9f2a54 → b7e8b0e）"), "{zh}");
    }

    #[test]
    fn a_serving_submodule_bump_needs_a_waiver_that_names_it() {
        let mut e = bump("third_party/sglang");
        assert_eq!(status(&e), (Status::Fail, "no_waiver".into()));
        let o = check(&Context::new(&e));
        assert_eq!(o.message.args["patches"][0], json!({"file": "third_party/sglang", "line": 1, "kind": "submodule"}));
        let waiver = WAIVER.replace(
            "script `benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_mi355x_sglang.sh`",
            "submodule `third_party/sglang`",
        );
        e.head.insert("docs/waiver/42.md", waiver.as_str());
        e.signoff.body = "As a PR reviewer and CODEOWNER, I have reviewed this and have:\n- [x] item\n\n### Additional detail section:\nWaiver: https://github.com/example/bench/blob/feature/docs/waiver/42.md\n\nSigned: `alice`\n".into();
        assert_eq!(status(&e), (Status::Pass, "waived".into()));
        assert!(serves("deps/TensorRT-LLM") && serves("vendor/sgl-kernel") && !serves("utils/aiperf"));
    }

    #[test]
    fn a_complete_linked_waiver_passes() {
        let mut e = patched();
        e.head.insert("docs/waiver/42.md", WAIVER);
        assert_eq!(status(&e), (Status::Fail, "not_linked".into()));
        e.signoff.body = "As a PR reviewer and CODEOWNER, I have reviewed this and have:\n- [x] item\n\n### Additional detail section:\nWaiver: https://github.com/example/bench/blob/feature/docs/waiver/42.md\n\nSigned: `alice`\n".into();
        assert_eq!(status(&e), (Status::Pass, "waived".into()));
    }

    #[test]
    fn an_incomplete_or_unrelated_waiver_fails() {
        let mut e = patched();
        e.head.insert("docs/waiver/42.md", WAIVER.replace("## Removal plan", "## Later").as_str());
        assert_eq!(status(&e).1, "waiver_invalid");
        let mut e = patched();
        e.head.insert("docs/waiver/42.md", WAIVER.replace("qwen3.5_fp8_mi355x_sglang.sh", "other.sh").as_str());
        assert_eq!(status(&e).1, "not_covered");
    }

    #[test]
    fn patch_files_git_apply_and_engine_wheels_are_patches() {
        let e = with_change(evidence(), "benchmarks/x.sh", "@@ -1 +1,2 @@\n x\n+git apply /ix/patches/fix.patch\n");
        assert_eq!(status(&e).0, Status::Fail);
        let e = with_change(
            evidence(),
            "benchmarks/x.sh",
            "@@ -1 +1,2 @@\n x\n+pip install git+https://github.com/fork/vllm@hack\n",
        );
        assert_eq!(status(&e).0, Status::Fail);
        let e = with_change(evidence(), "benchmarks/x.sh", "@@ -1 +1,2 @@\n x\n+pip install aiperf==0.3\n");
        assert_eq!(status(&e), (Status::Pass, "no_patches".into()), "harness dependencies are allowed");
    }

    /// Issue 24: the per-file scan of the changed files is bounded by the verification's scan
    /// budget; past it the file is unread and the check FAILs naming it.
    #[test]
    fn a_changed_file_past_the_scan_budget_is_unreadable() {
        let e = with_change(evidence(), "benchmarks/x.sh", "@@ -1 +1,2 @@\n x\n+pip install aiperf==0.3\n");
        let cx = Context::new(&e);
        cx.charge_scan("earlier checks", crate::evidence::limits::MAX_SCAN_BYTES).unwrap();
        let o = check(&cx);
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "unreadable"), "{o:?}");
        assert_eq!(o.message.args["what"], "benchmarks/x.sh");
        assert_eq!(status(&e), (Status::Pass, "no_patches".into()), "with the budget left it passes");
    }

    #[test]
    fn untouched_serving_paths_are_not_applicable() {
        let e = with_change(evidence(), "README.md", "@@ -1 +1 @@\n+git apply x\n");
        assert_eq!(status(&e).0, Status::NotApplicable);
    }

    /// The corpus' #2608: a launcher copies the repository's own recipes into the orchestrator's
    /// checkout. The same `cp` into an engine directory is a patch, across a continued line too.
    #[test]
    fn copying_own_recipes_is_not_a_patch_but_copying_into_the_engine_is() {
        let own = "@@ -1 +1,3 @@\n x\n+cp -rT \"$GITHUB_WORKSPACE/benchmarks/multi_node/srt-slurm-recipes/sglang/glm5.2/gb300-fp4\" \\\n+    recipes/sglang/glm5.2/gb300-fp4\n";
        let e = with_change(evidence(), "runners/launch_gb300-nv.sh", own);
        assert_eq!(status(&e), (Status::Pass, "no_patches".into()));
        let into_engine = "@@ -1 +1,3 @@\n x\n+cp \"$GITHUB_WORKSPACE/benchmarks/fix.py\" \\\n+    /sgl-workspace/sglang/python/sglang/srt/fix.py\n";
        let e = with_change(evidence(), "runners/launch_gb300-nv.sh", into_engine);
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.message.args["patches"][0]["line"].as_u64()), (Status::Fail, Some(2)), "{o:?}");
        let absolute = "@@ -1 +1,2 @@\n x\n+cp fix.py /usr/lib/python3/vllm/model_executor/fix.py\n";
        assert_eq!(status(&with_change(evidence(), "benchmarks/x.sh", absolute)).0, Status::Fail);
    }

    /// Issue 17 item 4 (Check 10): a `.patch` file the PR modifies or renames is a patch, as an
    /// added one is; moves, links, syncs and Python writes into engine paths are source edits;
    /// a PYTHONPATH whose first entry the PR controls shadows engine modules. The same commands
    /// on the repository's own files, and a container directory prepended, are not patches.
    #[test]
    fn modified_patch_files_and_overwrite_patterns_are_patches() {
        let kinds = |e: &Evidence| -> Vec<String> {
            let o = check(&Context::new(e));
            let patches = o.message.args.get("patches").and_then(|p| p.as_array()).cloned().unwrap_or_default();
            patches.iter().map(|p| p["kind"].as_str().unwrap_or_default().to_owned()).collect()
        };
        let mut e = with_change(evidence(), "benchmarks/patches/sglang-aiter.patch", "@@ -1,1 +1,1 @@\n-a\n+b\n");
        e.files[0].status = "renamed".into();
        e.files[0].previous_filename = Some("benchmarks/patches/old.patch".into());
        assert_eq!(kinds(&e), ["patch_file"]);
        let line = |text: &str| with_change(evidence(), SCRIPT, &format!("@@ -20,1 +20,2 @@\n export X=1\n+{text}\n"));
        for edit in [
            "rsync -a overrides/ /usr/local/lib/python3.12/dist-packages/sglang/",
            "mv fixed_backend.py /sgl-workspace/sglang/python/sglang/srt/layers/backend.py",
            "ln -sf \"$PWD/backend.py\" /sgl-workspace/sglang/python/sglang/srt/layers/backend.py",
            "python3 -c \"open('/opt/dynamo/launch.py', 'w').write(src)\"",
        ] {
            assert_eq!(kinds(&line(edit)), ["source_edit"], "{edit}");
        }
        assert_eq!(kinds(&line("export PYTHONPATH=\"${patch_dir}${PYTHONPATH:+:${PYTHONPATH}}\"")), ["monkey_patch"]);
        assert_eq!(kinds(&line("export PYTHONPATH=$GITHUB_WORKSPACE/overrides:$PYTHONPATH")), ["monkey_patch"]);
        for clean in [
            "rsync -a \"$GITHUB_WORKSPACE/benchmarks/multi_node/srt-slurm-recipes/\" recipes/",
            "mv results.json \"$RESULT_DIR/\"",
            "export PYTHONPATH=/sgl-workspace/aiter:${PYTHONPATH}",
            "export PYTHONPATH=${PYTHONPATH}:/workspace/utils",
        ] {
            let e = line(clean);
            assert_eq!(check(&Context::new(&e)).status, Status::Pass, "{clean}");
        }
    }

    /// Issue 17 item 4 (10.d): the changed launcher `source`s an unchanged helper that edits
    /// engine sources, and applies an unchanged `.patch`; both FAIL without a waiver. A waiver on
    /// the default branch that mentions them, linked from the detail section, covers them; a
    /// helper the launcher names that is not in the evidence is unverifiable.
    #[test]
    fn the_whole_launch_path_is_scanned() {
        let launcher = "benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_mi355x_sglang.sh";
        let change = "@@ -1,1 +1,3 @@\n export X=1\n+source \"$(dirname \"$0\")/../common/fix_engine.sh\"\n+git apply \"$(dirname \"$0\")/patches/aiter.patch\"\n";
        let build = |helper: &str| {
            let mut e = with_change(evidence(), launcher, change);
            e.head.insert(launcher, "export X=1\nsource \"$(dirname \"$0\")/../common/fix_engine.sh\"\ngit apply \"$(dirname \"$0\")/patches/aiter.patch\"\n");
            e.head.insert("benchmarks/single_node/common/fix_engine.sh", helper);
            e.head.insert("benchmarks/single_node/fixed_seq_len/patches/aiter.patch", "--- a/x\n+++ b/x\n");
            e
        };
        let e = build("export Y=1\n");
        let o = check(&Context::new(&e));
        // The PR's own `git apply` line, and the unchanged patch file it reaches.
        let kinds: Vec<&str> =
            o.message.args["patches"].as_array().unwrap().iter().map(|p| p["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["apply", "reached_patch"], "{o:?}");

        let e = build("sed -i 's/a/b/' /sgl-workspace/sglang/python/sglang/srt/x.py\n");
        let o = check(&Context::new(&e));
        let reached: Vec<(&str, &str)> = o.message.args["patches"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| Some((p["file"].as_str()?, p["via"].as_str()?)))
            .collect();
        assert_eq!(
            reached,
            [
                (
                    "benchmarks/single_node/common/fix_engine.sh",
                    "benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_mi355x_sglang.sh:2"
                ),
                (
                    "benchmarks/single_node/fixed_seq_len/patches/aiter.patch",
                    "benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_mi355x_sglang.sh:3"
                ),
            ]
        );
        assert_eq!(o.message.args["problem"], "no_waiver");

        // This PR's waiver covers its own line; the reached files need a waiver that names them.
        let mut e = build("sed -i 's/a/b/' /sgl-workspace/sglang/python/sglang/srt/x.py\n");
        e.head.insert(
            "docs/waiver/42.md",
            WAIVER.replace("qwen3.5_fp8_mi355x_sglang.sh", "qwen3.5_fp8_mi355x_sglang.sh`, `aiter.patch").as_str(),
        );
        e.signoff.body = "As a PR reviewer and CODEOWNER, I have reviewed this and have:\n- [x] item\n\n### Additional detail section:\nWaiver: https://github.com/example/bench/blob/feature/docs/waiver/42.md\nOld: https://github.com/example/bench/blob/main/docs/waiver/7.md\n\nSigned: `alice`\n".into();
        assert_eq!(status(&e), (Status::Fail, "reached_not_waived".into()));
        e.base.insert(
            "docs/waiver/7.md",
            WAIVER.replace("PR #42", "PR #7").replace("qwen3.5_fp8_mi355x_sglang.sh", "common/fix_engine.sh").as_str(),
        );
        assert_eq!(status(&e), (Status::Pass, "waived".into()), "{:?}", check(&Context::new(&e)));
        e.signoff.body =
            e.signoff.body.replace("Old: https://github.com/example/bench/blob/main/docs/waiver/7.md\n", "");
        assert_eq!(status(&e), (Status::Fail, "not_linked".into()));

        let mut e = build("export Y=1\n");
        e.head = MemTree::new().with(launcher, "source ./missing_helper.sh\n");
        e.files[0].patch = Some("@@ -1,1 +1,1 @@\n+source ./missing_helper.sh\n".into());
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "path_unavailable"));
        assert_eq!(o.evidence, [format!("benchmarks/single_node/fixed_seq_len/missing_helper.sh ({launcher}:1)")]);
    }

    /// An image bump (changelog only) is judged through the affected config's unchanged launcher.
    #[test]
    fn an_image_bump_scans_the_unchanged_launcher_of_the_affected_config() {
        let master = "qwen3.5-fp8-mi355x-sglang:\n  image: img\n  model-prefix: qwen3.5\n  runner: mi355x\n  precision: fp8\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - { tp: 8 }\n";
        let changelog = "@@ -1,1 +1,3 @@\n x\n+- config-keys:\n+  - qwen3.5-fp8-mi355x-sglang\n";
        let mut e = with_change(evidence(), "perf-changelog.yaml", changelog);
        e.head.insert("configs/amd-master.yaml", master);
        e.head.insert(SCRIPT, "export X=1\npython3 -m sglang.launch_server\n");
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.message.args["reached"].as_u64()), (Status::Pass, Some(1)), "{o:?}");
        e.head.insert(SCRIPT, "pip install --force-reinstall /wheels/sglang-fork.whl\n");
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.evidence.as_slice()), (Status::Fail, [format!("{SCRIPT}:1")].as_slice()), "{o:?}");
    }

    /// The corpus (#2592, #2345, …): benchmark_lib.sh's `_patch_lm_eval` shadows lm-eval with a
    /// sitecustomize through PYTHONPATH — eval tooling, not the engine. The same lines outside a
    /// harness function, or naming an engine path, are patches.
    #[test]
    fn monkey_patches_of_eval_tooling_in_a_harness_function_are_not_engine_patches() {
        let lib = "_patch_lm_eval() {\n    local patch_dir\n    patch_dir=\"$(mktemp -d)\"\n    cp \"$(_eval_patches_dir)/lm_eval_sitecustomize.py\" \"$patch_dir/sitecustomize.py\"\n    export PYTHONPATH=\"${patch_dir}${PYTHONPATH:+:${PYTHONPATH}}\"\n}\n";
        let numbered = |t: &'static str| -> Vec<scan::AddedLine<'static>> {
            t.lines().enumerate().map(|(i, text)| scan::AddedLine { line: i as u32 + 1, text }).collect()
        };
        let none = Variables::default();
        assert_eq!(patches_in(&numbered(lib), &none), []);
        let engine: &'static str = Box::leak(
            lib.replace("_patch_lm_eval", "_patch_server")
                .replace("lm_eval_sitecustomize", "server_sitecustomize")
                .into_boxed_str(),
        );
        assert_eq!(patches_in(&numbered(engine), &none), [(4, "monkey_patch", None), (5, "monkey_patch", None)]);
        let into_engine: &'static str = Box::leak(
            lib.replace("\"$patch_dir/sitecustomize.py\"", "/sgl-workspace/sitecustomize.py").into_boxed_str(),
        );
        assert!(!patches_in(&numbered(into_engine), &none).is_empty());
    }

    fn kinds(script: &str) -> Vec<(&'static str, Option<String>)> {
        let lines: Vec<scan::AddedLine> =
            script.lines().enumerate().map(|(i, text)| scan::AddedLine { line: i as u32 + 1, text }).collect();
        let vars = Variables::of(script, &["lmsysorg/sglang:v0.5.9-rocm700-mi35x".to_owned()]);
        patches_in(&lines, &vars).into_iter().map(|(_, kind, target)| (kind, target)).collect()
    }

    /// Issue 23's literal-shape bypasses: each installs or edits the engine by effect.
    #[test]
    fn engine_installs_and_writes_are_found_by_effect() {
        let fork = "pip3 install --no-deps git+https://github.com/someone/sglang.git@fork-branch\n";
        assert_eq!(
            kinds(fork),
            [("wheel", Some("sglang (git+https://github.com/someone/sglang.git@fork-branch)".into()))]
        );
        for installer in ["pip", "pip3", "python -m pip", "python3 -m pip", "uv pip", "conda"] {
            assert_eq!(kinds(&format!("{installer} install sglang==0.5.7\n")).len(), 1, "{installer}");
            assert_eq!(kinds(&format!("{installer} install -U sgl_kernel\n")).len(), 1, "{installer}: kernels");
        }
        assert_eq!(kinds("pip install 'sglang[all]==0.5.9'\n"), [], "the image's own version");
        assert_eq!(kinds("pip install https://github.com/x/flashinfer/archive/abc.tar.gz\n").len(), 1);
        assert_eq!(kinds("pip install ./wheels/vllm-0.9.0-cp312-linux_x86_64.whl\n").len(), 1);
        // Through a variable the script assigns, into the engine's installed tree.
        let via = "SGL_DIR=/sgl-workspace/sglang/python\nsed -i 's/a/b/' \"$SGL_DIR/sglang/srt/layers/x.py\"\n";
        assert_eq!(kinds(via), [("source_edit", None)]);
        let py = "SITE=$(python3 -c 'import sglang,os;print(os.path.dirname(sglang.__file__))')\necho fix > \"$SITE/srt/x.py\"\n";
        assert_eq!(kinds(py), [("source_edit", None)]);
        // A library of the container that is not the engine (upstream server_vllm.sh's RIXL fix).
        let rixl = "nixl_api=$(python3 -c \"import rixl._api; print(rixl._api.__file__)\" 2>/dev/null)\nsed -i 's/a/b/' \"$nixl_api\"\n";
        assert_eq!(kinds(rixl), []);
        // A variable nothing resolves, in a path into an engine tree: unverifiable, named.
        // PR input is bounded: a path with too many combinations of assigned values is unresolved.
        let many: String = (0..40).map(|i| format!("A=a{i}\nB=b{i}\n")).collect::<String>() + "cp x \"$A/$B/x\"\n";
        assert_eq!(kinds(&many), [("unresolved_write", Some("$A/$B/x".into()))]);
        // Nested defaults expand whole, as the shell (and the launch model) expands them.
        let nested =
            "ROOT=${SGL_ROOT:-${WORKSPACE:-/sgl-workspace}}/sglang\ncp fix.py \"$ROOT/python/sglang/srt/x.py\"\n";
        assert_eq!(kinds(nested), [("source_edit", None)]);
        let unresolved = "sed -i 's/a/b/' \"$SGL_DIR/sglang/srt/layers/x.py\"\n";
        assert_eq!(kinds(unresolved), [("unresolved_write", Some("$SGL_DIR/sglang/srt/layers/x.py".into()))]);
    }

    /// Real upstream launchers install benchmark-harness dependencies (spec 30 Check 10 rule 2).
    #[test]
    fn harness_dependency_installs_are_not_patches() {
        for script in [
            "pip install -q datasets pandas\n",
            "python3 -m pip install -q --no-cache-dir --no-deps --force-reinstall --break-system-packages \"git+https://github.com/EleutherAI/lm-evaluation-harness.git@${lm_eval_ref}\"\n",
            "python -m pip install --extra-index-url https://pypi.amd.com/triton/release/rocm-7.2.0/simple/ triton==3.7.0 2>/dev/null\n",
            "pip install -U transformers\n",
            "pip3 install --user --break-system-packages sentencepiece\n",
            "python3 -c 'import sglang; print(sglang.__file__)' 2>/dev/null > /tmp/where\n",
            "cp -r \"$GITHUB_WORKSPACE/benchmarks/srt-slurm-recipes/sglang/x\" recipes/sglang/x\n",
        ] {
            assert_eq!(kinds(script), [], "{script}");
        }
    }
}
