//! Check 10 — No engine patches (spec 30 Check 10, §7.4): the pinned image runs as shipped,
//! unless a waiver named after this PR covers the patch and the sign-off links it.

use serde_json::json;

use std::collections::BTreeSet;

use super::reach::{self, LaunchPath, ReachKind, Why};
use super::scan::{self, Role};
use super::{Context, Outcome};
use crate::domain::waiver::{links_to_waiver, Waiver};
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
const ENGINE_PACKAGES: [&str; 6] = ["vllm", "sglang", "sgl-kernel", "sgl_kernel", "tensorrt", "flashinfer"];

#[derive(Debug)]
struct Patch {
    file: String,
    line: u32,
    kind: &'static str,
    /// `file:line` that reaches an unchanged file on the launch path; `None` for the PR's own lines.
    via: Option<String>,
}

/// Commands that overwrite a file (copies, moves, links, syncs), as words of the command line.
const OVERWRITE_COMMANDS: [&str; 5] = ["cp", "mv", "ln", "rsync", "tee"];
/// In-place edits, heredocs and Python writes, anywhere in the line.
const OVERWRITE_MARKERS: [&str; 6] = ["sed -i", "cat >", "write_text(", "shutil.copy", "'w')", "\"w\")"];

fn overwrites(code: &str) -> bool {
    OVERWRITE_MARKERS.iter().any(|m| code.contains(m))
        || code
            .split(|c: char| c.is_whitespace() || matches!(c, '(' | ';' | '&' | '|'))
            .any(|word| OVERWRITE_COMMANDS.contains(&word))
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

fn classify(code: &str) -> Option<&'static str> {
    if code.contains("git apply") || code.contains("patch -p") || code.trim_start().starts_with("patch ") {
        return Some("apply");
    }
    if touches_engine(code) && overwrites(code) {
        return Some("source_edit");
    }
    if shadows_modules(code) {
        return Some("monkey_patch");
    }
    if code.contains("sitecustomize") || code.contains("importlib.util.find_spec") {
        return Some("monkey_patch");
    }
    let installs = code.contains("pip install") || code.contains("uv pip install");
    let engine_build = ENGINE_PACKAGES.iter().any(|p| code.contains(p))
        && (code.contains("git+") || code.contains(".whl") || code.contains("--force-reinstall"));
    (installs && engine_build).then_some("wheel")
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
fn patches_in(lines: &[scan::AddedLine]) -> Vec<(u32, &'static str)> {
    let harness = harness_lines(lines);
    let engine =
        |(line, kind): &(u32, &'static str)| !(harness.contains(line) && matches!(*kind, "monkey_patch" | "apply"));
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
        out.extend(classify(&command).map(|kind| (start, kind)));
        command.clear();
    }
    out.extend(classify(&command).map(|kind| (start, kind)));
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
    let mut serving = 0;
    let mut patches = Vec::new();
    for (file, role) in scan::changed(ev) {
        if role == Role::Other {
            continue;
        }
        serving += 1;
        let name = &file.filename;
        // A patch file the PR adds, changes or renames is a patch of this PR (removals are not).
        if file.status != "removed" && is_patch_file(name) {
            patches.push(Patch { file: name.clone(), line: 1, kind: "patch_file", via: None });
            continue;
        }
        let Some(lines) = scan::added_lines_of(ev, file) else {
            return Err(Outcome::unreadable(name, "neither its diff nor its content is in the evidence"));
        };
        patches.extend(patches_in(&lines).into_iter().map(|(line, kind)| Patch {
            file: name.clone(),
            line,
            kind,
            via: None,
        }));
    }
    let (reached, configs, unavailable) = launch_paths(cx)?;
    let mut count = 0;
    for file in reached {
        count += 1;
        if file.kind == ReachKind::Patch {
            patches.push(Patch { file: file.path, line: 1, kind: "reached_patch", via: Some(file.via) });
            continue;
        }
        let Some(lines) = scan::head_lines(ev, &file.path) else { continue };
        let found = patches_in(&lines);
        patches.extend(found.into_iter().map(|(line, kind)| Patch {
            file: file.path.clone(),
            line,
            kind,
            via: Some(file.via.clone()),
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
    let reaches = reach::affected_reach(cx)
        .map_err(|reason| Outcome::unreadable("the affected master-config entries", reason))?;
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
    let base = &cx.evidence.base;
    let dir = Layout::default().resolve(base, Logical::WaiverDir).ok().flatten()?;
    base.paths().filter(|p| p.starts_with(&format!("{dir}/")) && p.ends_with(".md")).find_map(|p| {
        let number: u64 = p.rsplit('/').next()?.strip_suffix(".md")?.parse().ok()?;
        let waiver = Waiver::parse(base.text(p)?, p).ok()?;
        waiver.mentions(file).then(|| (p.to_owned(), number))
    })
}

pub fn check(cx: &Context) -> Outcome {
    let Found { serving, configs, reached, patches, unavailable } = match find_patches(cx) {
        Ok(found) => found,
        Err(outcome) => return outcome,
    };
    if serving == 0 && configs == 0 {
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
        return Outcome::pass("no_patches").arg("count", serving).arg("reached", reached).arg("configs", configs);
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
    let mut o = Outcome::pass("waived").arg("patches", patch_args).arg("waiver", names.join(", "));
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

    #[test]
    fn an_inline_sed_into_engine_sources_without_waiver_fails() {
        assert_eq!(status(&patched()), (Status::Fail, "no_waiver".into()));
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
        assert_eq!(patches_in(&numbered(lib)), []);
        let engine: &'static str = Box::leak(
            lib.replace("_patch_lm_eval", "_patch_server")
                .replace("lm_eval_sitecustomize", "server_sitecustomize")
                .into_boxed_str(),
        );
        assert_eq!(patches_in(&numbered(engine)), [(4, "monkey_patch"), (5, "monkey_patch")]);
        let into_engine: &'static str = Box::leak(
            lib.replace("\"$patch_dir/sitecustomize.py\"", "/sgl-workspace/sitecustomize.py").into_boxed_str(),
        );
        assert!(!patches_in(&numbered(into_engine)).is_empty());
    }
}
