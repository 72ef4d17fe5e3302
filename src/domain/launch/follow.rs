//! The files a launch reaches (issue 17 item 4; decision J1, folded into the launch model by
//! LM1): from roots (benchmark scripts, recipes), what each reached file runs: `source`/`.`,
//! `bash`/`sh`, `sbatch`/`srun`/`nohup` commands, `RUN_FILE=x.sh`-style names of the repository's
//! scripts, `.py` helpers and the `.patch` files it applies — `submit.sh → job.slurm →
//! server.sh → server_sglang.sh` chains included (a `cd` into a folder is followed).
//!
//! Bounded: at most [`MAX_DEPTH`] steps, [`MAX_FILES`] files and [`MAX_BYTES`] bytes read per
//! root set; a file named by a repository path (`…/benchmarks/…`, `./x`, `$(dirname "$0")/x`)
//! that is not in the tree, or a reference beyond the bounds, is an [`Unreachable`] fact — never
//! silently dropped. A bare name or a `$VAR/x` that names no file of the referencing folder is
//! not a repository file (a container or orchestrator checkout path) and is not followed.
//! Cycles stop (each file once).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use super::settings::{script_relative, words};
use super::shell::logical_lines;
use crate::repo::{normalize_path, MemTree};

/// Deepest chain followed (launcher → submit.sh → job.slurm → server.sh → server_sglang.sh →
/// setup_deps.sh is 5).
pub const MAX_DEPTH: usize = 8;
/// Most files one reach holds.
pub const MAX_FILES: usize = 96;
/// Most bytes of reached files one root set reads.
pub const MAX_BYTES: usize = 4 << 20;

/// What a reached file is to the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ReachKind {
    /// The benchmark script named for the config (spec 20 §3.2), or a changed script.
    Launcher,
    /// An srt recipe a `CONFIG_FILE=` row names.
    Recipe,
    /// A script or Python helper a reached file runs.
    Script,
    /// A `.patch`/`.diff` a reached file names.
    Patch,
    /// A file a reached script reads but does not run: a config or options file passed by path
    /// (`--config x.yaml`, TRT-LLM's `extra_llm_api_options`, `.json`, `.conf`, `.env`). It is
    /// part of what runs (issue 35 case 7) and is not followed further.
    Data,
}

/// One reached file and the `file:line` that reaches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reached {
    pub path: String,
    pub kind: ReachKind,
    pub via: String,
    pub depth: usize,
}

/// Why a reached file cannot be shown (rendered by each check's catalog text, EN and 中文).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Named as a repository path, absent from the head tree.
    Missing,
    NotText,
    /// Beyond [`MAX_DEPTH`], [`MAX_FILES`] or [`MAX_BYTES`].
    TooDeep,
    /// A `CONFIG_FILE=` that names no recipe of this repository (srt-slurm's own, or gone).
    ExternalRecipe,
    /// The config names no launcher script and no recipe the evidence holds.
    NoLauncher,
}

impl Why {
    pub fn as_str(self) -> &'static str {
        match self {
            Why::Missing => "missing",
            Why::NotText => "not_text",
            Why::TooDeep => "too_deep",
            Why::ExternalRecipe => "external_recipe",
            Why::NoLauncher => "no_launcher",
        }
    }
}

/// A file the run reaches that the evidence cannot show: the reference as written, where, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreachable {
    pub reference: String,
    pub via: String,
    pub why: Why,
}

impl Unreachable {
    /// `{reference, via, why}` for a finding.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"reference": self.reference, "via": self.via, "why": self.why.as_str()})
    }
}

/// Everything one root set reaches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchPath {
    pub files: Vec<Reached>,
    pub unavailable: Vec<Unreachable>,
}

impl LaunchPath {
    pub fn recipes(&self) -> impl Iterator<Item = &Reached> {
        self.files.iter().filter(|f| f.kind == ReachKind::Recipe)
    }

    pub fn contains(&self, path: &str) -> bool {
        self.files.iter().any(|f| f.path == path)
    }
}

const FOLLOWED: [&str; 6] = [".sh", ".bash", ".slurm", ".py", ".patch", ".diff"];
/// Files a script reads by path: named only when the file is in the tree (a bare name of the
/// script's folder, or a repository path); an anchored path that is absent is a fact like any.
const READ: [&str; 7] = [".yaml", ".yml", ".json", ".conf", ".toml", ".env", ".cfg"];

/// One file a line names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    written: String,
    line: u32,
    /// Candidate repository paths, most likely first.
    candidates: Vec<String>,
    /// Written as a repository path: absent from the evidence is a fact, not "external".
    anchored: bool,
    /// Read, not run: a data file ([`READ`]).
    data: bool,
}

fn folder(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// `inferencex-e2e/` when `path` is in the newer layout.
fn layout_prefix(path: &str) -> &'static str {
    if path.starts_with("inferencex-e2e/") {
        "inferencex-e2e/"
    } else {
        ""
    }
}

/// The repository path inside a token that names one (`/workspace/benchmarks/x.sh`,
/// `$GITHUB_WORKSPACE/benchmarks/x.sh`, `benchmarks/x.sh`).
fn repository_path(token: &str, from: &str) -> Option<String> {
    ["benchmarks/", "runners/"].iter().find_map(|top| {
        let at = token.find(top).filter(|at| *at == 0 || token[..*at].ends_with('/'))?;
        Some(format!("{}{}", layout_prefix(from), normalize_path(&token[at..])))
    })
}

/// Where a token leads from `from` (run in `cwd`).
fn resolve(token: &str, from: &str, cwd: &str) -> Option<(Vec<String>, bool)> {
    if let Some(path) = repository_path(token, from) {
        return Some((vec![path], true));
    }
    let relative = |t: &str| {
        let mut c = vec![normalize_path(&format!("{cwd}/{t}"))];
        let own = normalize_path(&format!("{}/{t}", folder(from)));
        if !c.contains(&own) {
            c.push(own);
        }
        c
    };
    if token.starts_with("./") || token.starts_with("../") {
        return Some((relative(token), true));
    }
    if token.starts_with('/') {
        return None;
    }
    // `$SGLANG_WS_PATH/setup_deps.sh`, `server.sh`: a file of this folder, if it is one.
    let name = token.rsplit('/').next().unwrap_or(token);
    let unanchored = !token.contains('/') || token.starts_with('$');
    unanchored.then(|| (relative(name), false))
}

/// The tokens of a logical line that may name a file: shell words (quotes removed, the script's
/// own folder written as `./`), split at separators.
fn tokens(line: &str) -> Vec<String> {
    words(line)
        .iter()
        .flat_map(|w| {
            script_relative(w)
                .split(|c: char| c.is_whitespace() || "=;()|&<>,:`\"'".contains(c))
                .map(|t| t.trim_start_matches('-').trim_end_matches('}').to_owned())
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The files a script or recipe names, and the folder each line runs in (`cd` is followed).
fn references(path: &str, text: &str) -> Vec<Reference> {
    let mut out = Vec::new();
    let mut cwd = folder(path).to_owned();
    let shell = !(path.ends_with(".yaml") || path.ends_with(".yml"));
    for (line, logical) in logical_lines(text) {
        let toks = tokens(&logical);
        if toks.first().is_some_and(|t| t == "cd") {
            if let Some((candidates, _)) = toks.get(1).and_then(|t| resolve(t, path, &cwd)) {
                cwd = candidates[0].clone();
            }
            continue;
        }
        // `source FILE` / `. FILE` runs FILE in this shell, whatever its name (`.env`, `.rc`).
        let sourced = match toks.first().map(String::as_str) {
            Some("source" | ".") => toks.get(1),
            _ => None,
        };
        for token in &toks {
            let runs = Some(token) == sourced || FOLLOWED.iter().any(|ext| token.ends_with(ext));
            // A recipe names its own kind of files; what a script reads by path is a data file.
            let data = !runs && shell && READ.iter().any(|ext| token.ends_with(ext));
            if !runs && !data {
                continue;
            }
            if let Some((candidates, anchored)) = resolve(token, path, &cwd) {
                // A data file absent from the tree is written at run time or lives elsewhere.
                let anchored = anchored && !data;
                out.push(Reference { written: token.clone(), line, candidates, anchored, data });
            }
        }
    }
    out
}

/// Everything `roots` reach in `head` (pure: the tree is the evidence's head).
/// The files each file of a tree names, read once per tree: every config's launch reaches the
/// same libraries (`benchmark_lib.sh`), which were read again for each.
#[derive(Debug, Default)]
pub struct References(Mutex<HashMap<String, Arc<Vec<Reference>>>>);

impl References {
    fn of(&self, path: &str, text: &str) -> Arc<Vec<Reference>> {
        let mut read = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(read.entry(path.to_owned()).or_insert_with(|| Arc::new(references(path, text))))
    }
}

/// What `roots` reach in `head` (one reading of each file's references).
pub fn reach_from(head: &MemTree, roots: Vec<Reached>, unavailable: Vec<Unreachable>) -> LaunchPath {
    reach_with(&References::default(), head, roots, unavailable)
}

/// What `roots` reach in `head`, with the references `known` has read of `head` already.
pub fn reach_with(
    known: &References,
    head: &MemTree,
    roots: Vec<Reached>,
    mut unavailable: Vec<Unreachable>,
) -> LaunchPath {
    let mut seen: BTreeSet<String> = roots.iter().map(|r| r.path.clone()).collect();
    let mut queue: VecDeque<Reached> = roots.into();
    let mut files = Vec::new();
    let mut bytes = 0usize;
    while let Some(file) = queue.pop_front() {
        let text = match head.text(&file.path) {
            Some(text) if bytes + text.len() > MAX_BYTES => {
                unavailable.push(Unreachable {
                    reference: file.path.clone(),
                    via: file.via.clone(),
                    why: Why::TooDeep,
                });
                continue;
            }
            Some(text) => {
                bytes += text.len();
                text
            }
            None => {
                let why = if head.get(&file.path).is_some() { Why::NotText } else { Why::Missing };
                unavailable.push(Unreachable { reference: file.path.clone(), via: file.via.clone(), why });
                continue;
            }
        };
        if matches!(file.kind, ReachKind::Launcher | ReachKind::Recipe | ReachKind::Script) {
            for reference in known.of(&file.path, text).iter() {
                let via = format!("{}:{}", file.path, reference.line);
                let found = reference.candidates.iter().find(|c| head.get(c).is_some());
                let Some(target) = found else {
                    if reference.anchored {
                        unavailable.push(Unreachable {
                            reference: reference.candidates[0].clone(),
                            via,
                            why: Why::Missing,
                        });
                    }
                    continue;
                };
                if seen.contains(target) {
                    continue;
                }
                if file.depth + 1 > MAX_DEPTH || seen.len() >= MAX_FILES {
                    unavailable.push(Unreachable { reference: target.clone(), via, why: Why::TooDeep });
                    continue;
                }
                seen.insert(target.clone());
                let kind = if target.ends_with(".patch") || target.ends_with(".diff") {
                    ReachKind::Patch
                } else if reference.data {
                    ReachKind::Data
                } else {
                    ReachKind::Script
                };
                queue.push_back(Reached { path: target.clone(), kind, via, depth: file.depth + 1 });
            }
        }
        files.push(file);
    }
    LaunchPath { files, unavailable }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shaped like #2309's AMD disagg path: the launcher `cd`s into `amd_utils`, runs
    /// `./submit.sh`, which sbatches `job.slurm`, which names `RUN_FILE="server.sh"`, which
    /// sources `server_sglang.sh`, which applies a patch and sources a missing helper.
    fn amd_tree() -> MemTree {
        MemTree::new()
            .with(
                "benchmarks/multi_node/agentic/dsv4_fp4_mi355x_sglang-disagg.sh",
                "SCRIPT_DIR=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"\nsource \"$SCRIPT_DIR/../../benchmark_lib.sh\"\n# bash ./not_run.sh\ncd \"$GITHUB_WORKSPACE/benchmarks/multi_node/amd_utils\" || exit 1\nJOB_ID=$(bash ./submit.sh $PREFILL_NODES \\\n    $ISL)\n",
            )
            .with("benchmarks/benchmark_lib.sh", "run_benchmark_serving() { :; }\n")
            .with("benchmarks/multi_node/amd_utils/submit.sh", "sbatch --nodes=2 \\\n    \"$(dirname \"$0\")/job.slurm\"\n")
            .with("benchmarks/multi_node/amd_utils/job.slurm", "RUN_FILE=\"server.sh\"\nsrun bash -c \"bash $DI_REPO_DIR/benchmarks/multi_node/amd_utils/${RUN_FILE}\"\npython3 /opt/sync.py\n")
            .with("benchmarks/multi_node/amd_utils/server.sh", "source \"$WS_PATH/server_sglang.sh\"\n")
            .with(
                "benchmarks/multi_node/amd_utils/server_sglang.sh",
                "source $SGLANG_WS_PATH/env.sh\ngit apply ./patches/mori.patch\nsource ./helpers/missing.sh\nsource \"$WS_PATH/server.sh\"\n",
            )
            .with("benchmarks/multi_node/amd_utils/env.sh", "export X=1\n")
            .with("benchmarks/multi_node/amd_utils/patches/mori.patch", "--- a\n+++ b\n")
    }

    fn launcher() -> Reached {
        Reached {
            path: "benchmarks/multi_node/agentic/dsv4_fp4_mi355x_sglang-disagg.sh".into(),
            kind: ReachKind::Launcher,
            via: "configs/amd-master.yaml:1".into(),
            depth: 0,
        }
    }

    #[test]
    fn the_amd_disagg_chain_is_followed_to_the_server_script_and_its_patch() {
        let reach = reach_from(&amd_tree(), vec![launcher()], vec![]);
        let paths: Vec<(&str, ReachKind)> = reach.files.iter().map(|f| (f.path.as_str(), f.kind)).collect();
        assert_eq!(
            paths,
            [
                ("benchmarks/multi_node/agentic/dsv4_fp4_mi355x_sglang-disagg.sh", ReachKind::Launcher),
                ("benchmarks/benchmark_lib.sh", ReachKind::Script),
                ("benchmarks/multi_node/amd_utils/submit.sh", ReachKind::Script),
                ("benchmarks/multi_node/amd_utils/job.slurm", ReachKind::Script),
                ("benchmarks/multi_node/amd_utils/server.sh", ReachKind::Script),
                ("benchmarks/multi_node/amd_utils/server_sglang.sh", ReachKind::Script),
                ("benchmarks/multi_node/amd_utils/env.sh", ReachKind::Script),
                ("benchmarks/multi_node/amd_utils/patches/mori.patch", ReachKind::Patch),
            ]
        );
        let server = &reach.files[5];
        assert_eq!((server.via.as_str(), server.depth), ("benchmarks/multi_node/amd_utils/server.sh:1", 4));
        // The missing helper is named, not dropped; `/opt/sync.py` is a container file; the
        // cycle back to server.sh stops; the commented-out line is not followed.
        assert_eq!(
            reach.unavailable,
            [Unreachable {
                reference: "benchmarks/multi_node/amd_utils/helpers/missing.sh".into(),
                via: "benchmarks/multi_node/amd_utils/server_sglang.sh:3".into(),
                why: Why::Missing,
            }]
        );
    }

    /// Issue 35 case 7: what a script sources (any name) and the files it passes by path are part
    /// of what runs; a data file the script writes at run time is not a missing fact.
    #[test]
    fn sourced_files_of_any_name_and_files_read_by_path_are_reached() {
        let tree = MemTree::new()
            .with(
                "benchmarks/single_node/x.sh",
                "source \"$(dirname \"$0\")/b200.env\"\ncat > /workspace/benchmarks/gen.yaml <<EOF\nEOF\ntrtllm-serve --extra_llm_api_options /workspace/benchmarks/gen.yaml --config ./opts.yaml --tp ./tp.json\n",
            )
            .with("benchmarks/single_node/b200.env", ". ./more.rc\nexport NCCL_X=1\n")
            .with("benchmarks/single_node/more.rc", "export Y=2\n")
            .with("benchmarks/single_node/opts.yaml", "kv_cache: {free_gpu_memory_fraction: 0.8}\n")
            .with("benchmarks/single_node/tp.json", "{\"tp\": 4}\n");
        let root = Reached {
            path: "benchmarks/single_node/x.sh".into(),
            kind: ReachKind::Launcher,
            via: "configs/nvidia-master.yaml:1".into(),
            depth: 0,
        };
        let reach = reach_from(&tree, vec![root], vec![]);
        let paths: Vec<(&str, ReachKind)> = reach.files.iter().map(|f| (f.path.as_str(), f.kind)).collect();
        assert_eq!(
            paths,
            [
                ("benchmarks/single_node/x.sh", ReachKind::Launcher),
                ("benchmarks/single_node/b200.env", ReachKind::Script),
                ("benchmarks/single_node/opts.yaml", ReachKind::Data),
                ("benchmarks/single_node/tp.json", ReachKind::Data),
                ("benchmarks/single_node/more.rc", ReachKind::Script),
            ]
        );
        assert_eq!(reach.unavailable, [], "gen.yaml is written at run time");
    }

    #[test]
    fn depth_and_size_are_bounded_and_named() {
        let mut tree = MemTree::new();
        for i in 0..(MAX_DEPTH + 3) {
            tree = tree.with(format!("benchmarks/s{i}.sh"), format!("bash ./s{}.sh\n", i + 1));
        }
        let root = Reached { path: "benchmarks/s0.sh".into(), kind: ReachKind::Launcher, via: "x".into(), depth: 0 };
        let reach = reach_from(&tree, vec![root], vec![]);
        assert_eq!(reach.files.len(), MAX_DEPTH + 1);
        assert_eq!(reach.unavailable.len(), 1, "{:?}", reach.unavailable);
        assert_eq!(reach.unavailable[0].why, Why::TooDeep);
        // Hostile text never panics.
        let odd = MemTree::new().with("benchmarks/x.sh", "cd\nbash \"\nsource ${\n. ../../../../../../a.sh\n\\\n");
        let r = Reached { path: "benchmarks/x.sh".into(), kind: ReachKind::Launcher, via: "x".into(), depth: 0 };
        let _ = reach_from(&odd, vec![r], vec![]);
    }
}
