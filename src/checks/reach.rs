//! The launcher reach (issue 17 item 4; decision J1): the files a benchmark run reaches at the
//! head, from an affected config (its launcher script and the srt recipes its `CONFIG_FILE=`
//! rows name) or from a changed script, following what each reached file runs: `source`/`.`,
//! `bash`/`sh`, `sbatch`/`srun`/`nohup` commands, `RUN_FILE=x.sh`-style names of the repository's
//! scripts, `.py` helpers and the `.patch` files it applies — `submit.sh → job.slurm →
//! server.sh → server_sglang.sh` chains included (a `cd` into a folder is followed).
//!
//! Bounded: at most [`MAX_DEPTH`] steps and [`MAX_FILES`] files per root set; a file named by a
//! repository path (`…/benchmarks/…`, `./x`, `$(dirname "$0")/x`) that is not in the evidence,
//! or a reference beyond the bounds, is an [`Unreachable`] fact — never silently dropped. A bare
//! name or a `$VAR/x` that names no file of the referencing folder is not a repository file
//! (a container or orchestrator checkout path) and is not followed. Cycles stop (each file once).

use std::collections::{BTreeSet, VecDeque};

use super::affected::{affected_configs, entry_items, sku, AffectedConfig};
use super::scan::{self, Role};
use super::Context;
use crate::domain::master_config::{self, SrtRecipeRow};
use crate::domain::serving_settings::{logical_lines, script_relative, words};
use crate::domain::srt_recipe::RecipeRef;
use crate::repo::{normalize_path, Layout, Logical, MemTree};

/// Deepest chain followed (launcher → submit.sh → job.slurm → server.sh → server_sglang.sh →
/// setup_deps.sh is 5).
pub const MAX_DEPTH: usize = 8;
/// Most files one reach holds.
pub const MAX_FILES: usize = 96;

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
    /// Beyond [`MAX_DEPTH`] or [`MAX_FILES`].
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

/// The reach of one affected config.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigReach {
    pub config: AffectedConfig,
    pub path: LaunchPath,
}

const FOLLOWED: [&str; 6] = [".sh", ".bash", ".slurm", ".py", ".patch", ".diff"];

/// One file a line names.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reference {
    written: String,
    line: u32,
    /// Candidate repository paths, most likely first.
    candidates: Vec<String>,
    /// Written as a repository path: absent from the evidence is a fact, not "external".
    anchored: bool,
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
    for (line, logical) in logical_lines(text) {
        let toks = tokens(&logical);
        if toks.first().is_some_and(|t| t == "cd") {
            if let Some((candidates, _)) = toks.get(1).and_then(|t| resolve(t, path, &cwd)) {
                cwd = candidates[0].clone();
            }
            continue;
        }
        for token in toks.iter().filter(|t| FOLLOWED.iter().any(|ext| t.ends_with(ext))) {
            if let Some((candidates, anchored)) = resolve(token, path, &cwd) {
                out.push(Reference { written: token.clone(), line, candidates, anchored });
            }
        }
    }
    out
}

/// Everything `roots` reach in `head` (pure: the tree is the evidence's head).
pub fn reach_from(head: &MemTree, roots: Vec<Reached>, mut unavailable: Vec<Unreachable>) -> LaunchPath {
    let mut seen: BTreeSet<String> = roots.iter().map(|r| r.path.clone()).collect();
    let mut queue: VecDeque<Reached> = roots.into();
    let mut files = Vec::new();
    while let Some(file) = queue.pop_front() {
        let text = match head.text(&file.path) {
            Some(text) => text,
            None => {
                let why = if head.get(&file.path).is_some() { Why::NotText } else { Why::Missing };
                unavailable.push(Unreachable { reference: file.path.clone(), via: file.via.clone(), why });
                continue;
            }
        };
        if file.kind != ReachKind::Patch {
            for reference in references(&file.path, text) {
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

/// The benchmark scripts named for a config, as the runners pick them (`launch_<sku>.sh`:
/// `<prefix>_<precision>_<sku>_<framework>[_mtp].sh`, or `<prefix>_<precision>_<sku>[_mtp].sh`
/// when that is absent), under `benchmarks/multi_node/` or `benchmarks/single_node/`, agentic
/// folders for agentic scenarios.
fn launchers(head: &MemTree, config: &AffectedConfig) -> Vec<String> {
    let base = format!("{}_{}_{}", config.model_prefix, config.precision, sku(&config.runner)).to_ascii_lowercase();
    // Single-node runners add `_<spec-decoding>` for drafting search spaces and nothing for
    // `none`; multi-node runners name one script for both.
    let plain = config.multinode || config.spec_decoding.is_empty() || config.spec_decoding.contains("none");
    let suffixes: Vec<String> = plain
        .then(String::new)
        .into_iter()
        .chain(config.spec_decoding.iter().filter(|s| *s != "none").map(|s| format!("_{s}")))
        .collect();
    let node = if config.multinode { "benchmarks/multi_node/" } else { "benchmarks/single_node/" };
    let scenario_fits = |p: &str| {
        let agentic = p.contains("/agentic/");
        (agentic && config.agentic)
            || (!agentic && !config.fixed_seq.is_empty())
            || (!config.agentic && config.fixed_seq.is_empty())
    };
    let scripts = |fits: &dyn Fn(&str) -> bool| -> Vec<String> {
        head.paths()
            .filter(|p| scan::logical_path(p).starts_with(node) && scenario_fits(scan::logical_path(p)))
            .filter(|p| fits(&p.rsplit('/').next().unwrap_or(p).to_ascii_lowercase()))
            .map(str::to_owned)
            .collect()
    };
    let named = |stem: &str| scripts(&|name| suffixes.iter().any(|s| name == format!("{stem}{s}.sh")));
    let framework = config.framework.to_ascii_lowercase();
    let stem = format!("{base}_{framework}");
    let mut found = named(&stem);
    if found.is_empty() {
        found = named(&base);
    }
    if found.is_empty() {
        // A variant the runners' suffix rule does not spell (`…_sglang_dflash.sh` for
        // `spec-decoding: draft_model`): every script of the config's stem.
        found = scripts(&|name| name.starts_with(&format!("{stem}_")) && name.ends_with(".sh"));
    }
    found
}

/// The roots of a config: its launchers and its rows' recipes; what cannot be found is named.
fn config_roots(cx: &Context, config: &AffectedConfig) -> (Vec<Reached>, Vec<Unreachable>) {
    let head = &cx.evidence.head;
    let at = format!("{}:{}", config.file, config.line);
    let mut roots: Vec<Reached> = launchers(head, config)
        .into_iter()
        .map(|path| Reached { path, kind: ReachKind::Launcher, via: at.clone(), depth: 0 })
        .collect();
    let mut unavailable = Vec::new();
    let recipes_dir = Layout::default().resolve(head, Logical::SrtRecipesDir).ok().flatten();
    for (key, value, line) in entry_items(cx, config).into_iter().filter(|(k, _, _)| k == "CONFIG_FILE") {
        let via = format!("{}:{line}", config.file);
        let path = RecipeRef::parse(&value).ok().and_then(|r| {
            let dir = recipes_dir.as_deref()?;
            crate::domain::srt::repo_path(&r.path, dir)
        });
        match path {
            Some(path) if head.get(&path).is_some() => {
                if !roots.iter().any(|r| r.path == path) {
                    roots.push(Reached { path, kind: ReachKind::Recipe, via, depth: 0 });
                }
            }
            _ => unavailable.push(Unreachable { reference: format!("{key}={value}"), via, why: Why::ExternalRecipe }),
        }
    }
    // Single-node rows of the newer schema name their recipe with `srt-recipe:` (decision U1).
    for row in srt_recipe_rows(head, config) {
        let via = format!("{}:{}", config.file, config.line);
        let candidates = row.candidate_paths(&config.file);
        match candidates.iter().find(|p| head.get(p).is_some()) {
            Some(path) if !roots.iter().any(|r| &r.path == path) => {
                roots.push(Reached { path: path.clone(), kind: ReachKind::Recipe, via, depth: 0 })
            }
            Some(_) => {}
            None => unavailable.push(Unreachable { reference: candidates[0].clone(), via, why: Why::Missing }),
        }
    }
    if roots.is_empty() && unavailable.is_empty() {
        let stem = format!("{}_{}_{}_{}", config.model_prefix, config.precision, sku(&config.runner), config.framework);
        unavailable.push(Unreachable { reference: format!("benchmarks/…/{stem}.sh"), via: at, why: Why::NoLauncher });
    }
    (roots, unavailable)
}

/// The config's single-node rows that name an srt recipe (none when its entry does not validate:
/// that is Check 18(a)'s finding).
fn srt_recipe_rows(head: &MemTree, config: &AffectedConfig) -> Vec<SrtRecipeRow> {
    let Some(text) = head.text(&config.file) else { return Vec::new() };
    let Ok(root) = crate::yaml::parse(text, &config.file) else { return Vec::new() };
    let Some(node) = root.get(&config.key) else { return Vec::new() };
    master_config::validate_entry(&config.key, &config.file, node.pos, node)
        .map_or_else(|_| Vec::new(), |m| m.srt_recipe_rows())
}

fn compute(cx: &Context) -> Result<Vec<ConfigReach>, String> {
    Ok(affected_configs(cx)?
        .into_iter()
        .map(|config| {
            let (roots, unavailable) = config_roots(cx, &config);
            ConfigReach { path: reach_from(&cx.evidence.head, roots, unavailable), config }
        })
        .collect())
}

/// The reach of every affected config (computed once per Context). `Err` when the affected
/// configs cannot be read.
pub fn affected_reach(cx: &Context) -> Result<Vec<ConfigReach>, String> {
    cx.reach.get_or_init(|| compute(cx)).clone()
}

/// What one script reaches at the head (a changed launcher that no affected config names).
pub fn script_reach(cx: &Context, path: &str) -> LaunchPath {
    let root = Reached { path: path.to_owned(), kind: ReachKind::Launcher, via: path.to_owned(), depth: 0 };
    reach_from(&cx.evidence.head, vec![root], vec![])
}

/// The files a content check (9, 11) judges: the scripts and recipes the PR adds or changes,
/// and the launchers and recipes every affected config runs (an image bump or a master-only
/// change reaches them unchanged), each with the affected config whose reach holds it.
pub fn judged_files<'r>(cx: &Context, reaches: &'r [ConfigReach]) -> Vec<(String, Role, Option<&'r ConfigReach>)> {
    let owner_of =
        |path: &str| reaches.iter().find(|r| r.path.files.iter().any(|f| f.path == path && f.kind != ReachKind::Patch));
    let mut out: Vec<(String, Role, Option<&ConfigReach>)> = scan::changed(cx.evidence)
        .filter(|(_, role)| matches!(role, Role::Script | Role::Recipe))
        .map(|(file, role)| (file.filename.clone(), role, owner_of(&file.filename)))
        .collect();
    for r in reaches {
        for f in r.path.files.iter().filter(|f| matches!(f.kind, ReachKind::Launcher | ReachKind::Recipe)) {
            if !out.iter().any(|(p, _, _)| *p == f.path) {
                out.push((f.path.clone(), scan::role(&f.path), Some(r)));
            }
        }
    }
    out
}

/// Whether the config's launcher `path` runs a draft: the config's search spaces draft, and
/// either all of them do or the script is the `_<spec-decoding>.sh` one the runners pick for them.
pub fn launcher_drafts(reach: &ConfigReach, path: &str) -> bool {
    let spec = &reach.config.spec_decoding;
    let name = path.rsplit('/').next().unwrap_or(path);
    is_root_of(reach, path)
        && reach.config.speculative()
        && (!spec.contains("none") || spec.iter().any(|s| s != "none" && name.ends_with(&format!("_{s}.sh"))))
}

/// Whether `path` is a root (launcher or recipe) of the config's reach.
pub fn is_root_of(reach: &ConfigReach, path: &str) -> bool {
    reach.path.files.iter().any(|f| f.path == path && matches!(f.kind, ReachKind::Launcher | ReachKind::Recipe))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, with_change};

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

    const MASTER: &str = "dsv4-fp4-mi355x-sglang-disagg-agentic-mtp:\n  image: img\n  model: deepseek-ai/DeepSeek-V4-Pro\n  model-prefix: dsv4\n  runner: cluster:mi355x-amds\n  precision: fp4\n  framework: sglang-disagg\n  multinode: true\n  scenarios:\n    agentic-coding:\n    - search-space:\n      - spec-decoding: \"mtp\"\n        decode:\n          additional-settings:\n          - \"DECODE_MTP_SIZE=3\"\ndsr1-fp4-gb200-dynamo-trt:\n  image: img\n  model-prefix: dsr1\n  runner: gb200\n  precision: fp4\n  framework: dynamo-trt\n  multinode: true\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - prefill:\n          additional-settings:\n          - \"CONFIG_FILE=recipes/trtllm/dsr1/a.yaml:override_x\"\n          - \"CONFIG_FILE=recipes/trtllm/dsr1/gone.yaml\"\n";

    #[test]
    fn an_image_bump_reaches_the_configs_launcher_recipes_and_names_what_is_missing() {
        let changelog = "@@ -1,1 +1,4 @@\n x\n+- config-keys:\n+  - dsv4-fp4-mi355x-sglang-disagg-agentic-mtp\n+  - dsr1-fp4-gb200-dynamo-trt\n";
        let mut e = with_change(evidence(), "perf-changelog.yaml", changelog);
        for (path, text) in
            amd_tree().paths().map(|p| (p.to_owned(), amd_tree().text(p).unwrap_or_default().to_owned()))
        {
            e.head.insert(&path, text.as_str());
        }
        e.head.insert("benchmarks/multi_node/dsv4_fp4_mi355x_sglang-disagg.sh", "echo fixed-seq-len sibling\n");
        e.head.insert("configs/amd-master.yaml", MASTER);
        e.head.insert("benchmarks/multi_node/srt-slurm-recipes/trtllm/dsr1/a.yaml", "name: a\n");
        let cx = Context::new(&e);
        let reach = affected_reach(&cx).unwrap();
        assert_eq!(reach.len(), 2);
        let amd = reach.iter().find(|r| r.config.framework == "sglang-disagg").unwrap();
        assert_eq!(amd.path.files[0].path, "benchmarks/multi_node/agentic/dsv4_fp4_mi355x_sglang-disagg.sh");
        assert!(!amd.path.contains("benchmarks/multi_node/dsv4_fp4_mi355x_sglang-disagg.sh"), "not its scenario");
        assert!(amd.path.contains("benchmarks/multi_node/amd_utils/server_sglang.sh"));
        let trt = reach.iter().find(|r| r.config.framework == "dynamo-trt").unwrap();
        let recipes: Vec<&str> = trt.path.recipes().map(|r| r.path.as_str()).collect();
        assert_eq!(recipes, ["benchmarks/multi_node/srt-slurm-recipes/trtllm/dsr1/a.yaml"]);
        assert_eq!(trt.path.unavailable.len(), 1);
        assert_eq!(trt.path.unavailable[0].reference, "CONFIG_FILE=recipes/trtllm/dsr1/gone.yaml");
        assert_eq!(trt.path.unavailable[0].via, "configs/amd-master.yaml:31");
    }

    #[test]
    fn a_config_with_no_launcher_and_no_recipe_is_a_named_fact() {
        let changelog = "@@ -1,1 +1,3 @@\n x\n+- config-keys:\n+  - dsv4-fp4-mi355x-sglang-disagg-agentic-mtp\n";
        let mut e = with_change(evidence(), "perf-changelog.yaml", changelog);
        e.head.insert("configs/amd-master.yaml", MASTER);
        let cx = Context::new(&e);
        let reach = affected_reach(&cx).unwrap();
        assert!(reach[0].path.files.is_empty());
        assert_eq!(reach[0].path.unavailable[0].why, Why::NoLauncher, "{:?}", reach[0].path);
    }
}
