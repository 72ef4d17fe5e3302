//! The launch model (issue 22; ARCHITECTURE decision 11; decisions LM1-LM6): what a
//! master-config entry runs, read once from a tree, for every check and the planner.
//!
//! For each entry and each of its launch variants (scenario × `spec-decoding` × `CONFIG_FILE`):
//! - the runner nodes of its `runner:` label (`configs/runners.yaml`) and each node's launcher,
//!   `runners/launch_${RUNNER_NAME%%_*}.sh`, as the benchmark workflows pick it;
//! - the benchmark script that launcher computes, evaluated from the launcher's own text with
//!   the workflow's inputs bound from the entry ([`runner`], [`shell`]);
//! - the recipes its rows name (`CONFIG_FILE=recipes/…`, `CONFIG_FILE=benchmarks/…/srt-slurm-
//!   recipes/…`, `srt-recipe:`);
//! - the files those reach ([`follow`]), bounded;
//! - what could not be computed, as [`Unresolved`] facts with `file:line`.
//!
//! A tree that holds no launcher for the entry's runner (a partial tree, a bundle collected
//! without `runners/`) gets the benchmark-script naming rule of spec 20 §3.2 instead, and the
//! job says so (`launcher: None`, decision LM3).

pub mod amd_disagg;
pub mod class;
pub mod follow;
pub mod handoff;
pub mod runner;
pub mod settings;
pub mod shell;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

pub use class::Class;
pub use follow::{LaunchPath, ReachKind, Reached, Unreachable, Why};
pub use runner::RunnerRun;
pub use settings::{RoleSettings, Setting, SettingKind};
pub use shell::Unresolved;

use crate::domain::master_config::{self, FixedSpaces, KvOffloading, MasterConfig, SrtRecipeRow};
use crate::domain::runners::Runners;
use crate::domain::srt_recipe::{self, overrides, FactVariant, Recipe, RecipeRef, Selector, SingleNodePoint};
use crate::repo::{normalize_path, Layout, Logical, MemTree, RepoError, Tree};
use crate::yaml::{self, Node, Value};

/// The workflow environment names a job binds (unset ones read as empty in a launcher):
/// `benchmark-tmpl.yml` and `benchmark-multinode-tmpl.yml` `env:` blocks.
pub(crate) const WORKFLOW_ENV: &[&str] = &[
    "RANDOM_RANGE_RATIO",
    "HF_TOKEN",
    "HF_HUB_CACHE",
    "EXP_NAME",
    "RECIPE_FINGERPRINT",
    "MODEL",
    "MODEL_PREFIX",
    "ISL",
    "OSL",
    "MAX_MODEL_LEN",
    "IMAGE",
    "FRAMEWORK",
    "PRECISION",
    "TP",
    "PP_SIZE",
    "DCP_SIZE",
    "PCP_SIZE",
    "EP_SIZE",
    "DP_ATTENTION",
    "CONC",
    "CONC_LIST",
    "SPEC_DECODING",
    "DISAGG",
    "RUN_EVAL",
    "EVAL_ONLY",
    "EVAL_CONC",
    "EVAL_LIMIT",
    "SWEBENCH_GEN_MODE",
    "SWEBENCH_USE_MODAL",
    "SCENARIO_TYPE",
    "SCENARIO_SUBDIR",
    "IS_AGENTIC",
    "IS_MULTINODE",
    "KV_OFFLOADING",
    "KV_OFFLOAD_BACKEND",
    "KV_OFFLOAD_BACKEND_METADATA",
    "ROUTER_METADATA",
    "KV_P2P_TRANSFER",
    "TOTAL_CPU_DRAM_GB",
    "DURATION",
    "REQUIRE_POWER",
    "AIPERF_EXPERIMENTAL_FAST",
    "AIPERF_FAILED_REQUEST_THRESHOLD",
    "RESULT_DIR",
    "RESULT_FILENAME",
    "GPU_COUNT",
    "RUNNER_NAME",
    "RUNNER_TYPE",
    "GITHUB_WORKSPACE",
    "PREFILL_HARDWARE",
    "DECODE_HARDWARE",
    "PREFILL_NUM_WORKERS",
    "PREFILL_TP",
    "PREFILL_EP",
    "PREFILL_DP_ATTN",
    "DECODE_NUM_WORKERS",
    "DECODE_TP",
    "DECODE_EP",
    "DECODE_DP_ATTN",
    "CONFIG_FILE",
    "EVAL_CONFIG_FILE",
    "POWER_PRODUCER_SHA",
];

/// The folders the model reads, in both layouts (`sweepgate launch` copies these).
pub const LAUNCH_DIRS: [&str; 6] = [
    "configs",
    "runners",
    "benchmarks",
    "inferencex-e2e/configs",
    "inferencex-e2e/runners",
    "inferencex-e2e/benchmarks",
];

/// One launch variant of an entry: what the workflow binds differently per search-space row.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Variant {
    /// `fixed-seq-len` or `agentic-coding`.
    pub scenario: String,
    pub spec_decoding: String,
    /// `(isl, osl)` of a fixed-seq-len block (`(0, 0)` for agentic).
    pub seq: (i64, i64),
    /// The row's `additional-settings` (`KEY=value`, with its line), exported into the job.
    pub settings: Vec<(String, String, u32)>,
}

impl Variant {
    /// `fixed-seq-len/mtp`, for rows and settings.
    pub fn label(&self) -> String {
        format!("{}/{}", self.scenario, self.spec_decoding)
    }

    fn setting(&self, key: &str) -> Option<(&str, u32)> {
        self.settings.iter().find(|(k, _, _)| k == key).map(|(_, v, l)| (v.as_str(), *l))
    }
}

/// One job shape: a runner node's launcher run for one variant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Job {
    /// The node-name prefix (`h200-nb`).
    pub runner: String,
    /// The launcher script, `None` when the tree holds none (the naming rule was used).
    pub launcher: Option<String>,
    pub variant: String,
    /// The benchmark script the launcher runs for this variant, if it runs one.
    pub script: Option<String>,
    pub script_exists: bool,
    /// The pool profile of a native single-node run (`launch_srt_single_node <profile>`):
    /// the job runs the row's `srt-recipe:` (decision TD5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native: Option<String>,
    /// `file:line` that runs it.
    pub at: String,
}

/// A recipe a config runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecipeUse {
    /// As written in the master config.
    pub written: String,
    /// Repository path.
    pub path: String,
    pub selector: Option<String>,
    pub exists: bool,
    /// The checkout the recipe is read from when it is not this repository's: the srt-slurm
    /// repository and ref the runner launcher clones (`NVIDIA/srt-slurm@sa-submission-q2-2026`);
    /// `path` is then checkout-relative.
    pub external: Option<String>,
    /// `file:line` of the row naming it.
    pub at: String,
    /// The `--set KEY=VALUE` arguments its launcher surely passes srtctl with it, in order
    /// (decision TD9): the recipe's effective values are the recipe's with these applied.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sets: Vec<RecipeSet>,
}

/// One `--set KEY=VALUE` (or `--unset KEY`) a launcher passes srtctl, where it is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecipeSet {
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unset: bool,
    pub arg: String,
    /// `file:line`.
    pub at: String,
}

/// What one master-config entry runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigLaunch {
    pub config: String,
    pub file: String,
    pub line: u32,
    pub framework: String,
    pub multinode: bool,
    /// Runner node prefixes of its label.
    pub runners: Vec<String>,
    /// The `clusters` entries of runners.yaml its nodes belong to (Oct 2026 layout).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<String>,
    pub jobs: Vec<Job>,
    pub recipes: Vec<RecipeUse>,
    #[serde(skip)]
    pub reach: LaunchPath,
    pub unresolved: Vec<Unresolved>,
    /// Every value of [`ConfigLaunch::scopes`], one per line (`sweepgate launch`).
    pub settings: Vec<LaunchSetting>,
    /// The model the entry serves (`model:`).
    pub model: String,
    /// Every value each search-space key (`tp`, `ep`, `dcp-size`, …) takes in the entry's rows.
    #[serde(skip)]
    pub space: BTreeMap<String, BTreeSet<String>>,
    /// The effective settings per role and the rows or variant they serve: what the checks
    /// judge (Checks 3 and 8).
    #[serde(skip)]
    pub scopes: Vec<SettingScope>,
    /// The settings sources that could not be read, in reading order (`srt-recipe` rows,
    /// `CONFIG_FILE` recipes, benchmark scripts).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<SettingsGap>,
}

/// The settings of one role of one source, and the rows or variant they serve.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingScope {
    /// The launch variant of a script (`fixed-seq-len/mtp`), the selector of a `CONFIG_FILE`
    /// recipe (`plain` without one), the label of an `srt-recipe` row.
    pub variant: String,
    /// The `srt-recipe` row (`TP4/EP4 HiCache`) whose points the recipe variants serve.
    pub row: Option<String>,
    pub settings: RoleSettings,
}

/// A settings source of a config that could not be read: a check that needs the settings
/// names it instead of judging nothing.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum SettingsGap {
    /// The entry's rows could not be read (`error` says where).
    InvalidEntry {
        error: String,
    },
    /// A row's recipe is not in the tree; `row` is the `srt-recipe` row's place, `None` for a
    /// `CONFIG_FILE` recipe (`written` as the row writes it).
    RecipeAbsent {
        path: String,
        written: String,
        row: Option<String>,
    },
    /// The recipe is read from the srt-slurm checkout the launcher clones (`owner/repo@ref`),
    /// and the model was given no file of it (offline, not fetched).
    ExternalRecipe {
        checkout: String,
        path: String,
        at: String,
    },
    /// The recipe of the checkout was fetched and could not be read (`reason` says why).
    ExternalUnavailable {
        checkout: String,
        path: String,
        at: String,
        reason: String,
    },
    /// The launcher's checkout could not be decided (`why` of the unresolved fact).
    RecipeUnlocated {
        written: String,
        at: String,
    },
    UnparsableRecipe {
        path: String,
        error: String,
    },
    /// No variant of the recipe serves one of the row's points.
    NoServingVariant {
        path: String,
        label: String,
        conc: i64,
        row: String,
    },
    NotText {
        path: String,
    },
    /// A disaggregated job's model table (`amd_utils/models*.yaml`): `job.slurm` in `dir`
    /// names none the tree has for the engine, or (`tried` not empty) the table at `path` has
    /// no entry for the model under any name the renderer tries.
    DisaggTable {
        path: String,
        at: String,
        tried: Vec<String>,
    },
    /// The benchmark script starts no engine server the reader knows.
    NoServerStarted {
        path: String,
    },
}

/// One effective setting of a config: one value, for one role and variant.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct LaunchSetting {
    pub name: String,
    pub value: String,
    /// `aggregated`, `prefill`, `decode`, `frontend`.
    pub role: String,
    /// The launch variant (`fixed-seq-len/mtp`) of a script, the recipe selector of a recipe.
    pub variant: String,
    pub class: Class,
    /// `file:line`.
    pub at: String,
    /// Whether the value is fully evaluated: `false` when it still holds an expression the
    /// model cannot evaluate (`$(…)`, a backquote, a variable unbound on the serving path).
    pub resolved: bool,
}

/// Whether a setting's value is fully evaluated: no `$(…)`, no backquote, no `$NAME`/`${…}`,
/// no positional or special parameter (`$2`, `$@`, `$#`, …: a function's arguments are never
/// known) left (an escaped `\$` is a literal dollar).
pub fn is_resolved(value: &str) -> bool {
    let bytes = value.as_bytes();
    !bytes.iter().enumerate().any(|(i, &b)| {
        let escaped = i > 0 && bytes[i - 1] == b'\\';
        match b {
            b'`' => !escaped,
            b'$' => {
                !escaped
                    && bytes
                        .get(i + 1)
                        .is_some_and(|&n| b"({_@*#?!$".contains(&n) || n.is_ascii_alphabetic() || n.is_ascii_digit())
            }
            _ => false,
        }
    })
}

impl ConfigLaunch {
    /// The distinct benchmark scripts its jobs run that exist in the tree, in job order.
    pub fn scripts(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for j in self.jobs.iter().filter(|j| j.script_exists) {
            if let Some(s) = j.script.as_deref().filter(|s| !out.contains(s)) {
                out.push(s);
            }
        }
        out
    }

    /// Whether it resolves to an existing script or recipe of the tree, or to a recipe of the
    /// srt-slurm checkout its launcher clones (named by repository and ref).
    pub fn resolves(&self) -> bool {
        !self.scripts().is_empty() || self.recipes.iter().any(|r| r.exists || r.external.is_some())
    }
}

/// The model of a tree: runners and master configs read once, then each entry on demand.
pub struct LaunchTree<'t> {
    tree: &'t MemTree,
    /// `""` or `inferencex-e2e/`.
    root: String,
    runners: Result<Runners, Unresolved>,
    recipes_dir: Option<String>,
    references: follow::References,
    /// Files of the external checkouts the launchers clone, as the collector fetched them
    /// ([`LaunchTree::with_external`]): `(owner/repo@ref, path)` → text, or why it could not be read.
    external: BTreeMap<(&'t str, &'t str), Result<&'t str, &'t str>>,
}

fn text_field(entry: &Node, key: &str) -> String {
    entry.get(key).and_then(Node::key_text).map(|t| t.into_owned()).unwrap_or_default()
}

/// Every `KEY=value` string under an `additional-settings` list of `node`.
fn additional_settings(node: &Node, out: &mut Vec<(String, String, u32)>) {
    match &node.value {
        Value::Map(items) => {
            for (k, v) in items {
                if k.key_text().as_deref() == Some("additional-settings") {
                    for item in v.as_seq().unwrap_or_default() {
                        if let Some((key, value)) = item.as_str().and_then(|s| s.trim().split_once('=')) {
                            out.push((key.trim().to_owned(), value.trim().to_owned(), item.pos.line));
                        }
                    }
                } else {
                    additional_settings(v, out);
                }
            }
        }
        Value::Seq(items) => items.iter().for_each(|i| additional_settings(i, out)),
        _ => {}
    }
}

/// The workflow inputs one single-node search-space row binds, as `benchmark-tmpl.yml` passes
/// them from the generator's matrix row (`matrix::generate`), for the launch variant it runs.
#[derive(Debug, Default)]
struct RowInputs {
    /// The launch variant (`fixed-seq-len/mtp`).
    variant: String,
    /// `TP8/EP8 DPA`, `TP8 DCP2`, `TP8 vllm-simple`.
    label: String,
    inputs: Vec<(String, String)>,
}

/// One single-node search-space row that names no recipe, as the workflow binds it.
struct PlainRow<'a> {
    scenario: &'a str,
    tp: i64,
    pp: i64,
    dcp: i64,
    pcp: i64,
    ep: i64,
    dp_attn: bool,
    spec: &'a str,
    seq: Option<(i64, i64)>,
    /// `KV_OFFLOADING`, `KV_OFFLOAD_BACKEND` (the backend's name).
    kv: (&'a str, &'a str),
}

/// The inputs of every single-node row that names no recipe (a script reads them).
fn row_inputs(master: &MasterConfig) -> Vec<RowInputs> {
    let mut rows: Vec<PlainRow> = Vec::new();
    for block in &master.fixed {
        let FixedSpaces::Single(spaces) = &block.search_space else { continue };
        for s in spaces.iter().filter(|s| s.srt_recipe.is_none()) {
            rows.push(PlainRow {
                scenario: "fixed-seq-len",
                tp: s.tp,
                pp: s.pp,
                dcp: s.dcp_size,
                pcp: s.pcp_size,
                ep: s.ep.unwrap_or(1),
                dp_attn: s.dp_attn.unwrap_or(false),
                spec: s.spec_decoding.as_str(),
                seq: Some((block.isl, block.osl)),
                kv: ("", ""),
            });
        }
    }
    for block in &master.agentic {
        let single =
            block.search_space.iter().filter(|s| s.prefill.is_none() && s.decode.is_none() && s.worker.is_none());
        for s in single {
            let Some(tp) = s.tp.filter(|_| s.srt_recipe.is_none()) else { continue };
            rows.push(PlainRow {
                scenario: "agentic-coding",
                tp,
                pp: s.pp,
                dcp: s.dcp_size,
                pcp: s.pcp_size,
                ep: s.ep.unwrap_or(1),
                dp_attn: s.dp_attn.unwrap_or(false),
                spec: s.spec_decoding.as_str(),
                seq: None,
                kv: (
                    s.kv_offloading.unwrap_or(KvOffloading::None).as_str(),
                    s.kv_offload_backend.as_ref().map_or("", |b| b.name.as_str()),
                ),
            });
        }
    }
    let mut out: Vec<RowInputs> = Vec::new();
    for r in rows {
        let mut inputs: Vec<(String, String)> = vec![
            ("TP".into(), r.tp.to_string()),
            ("PP_SIZE".into(), r.pp.to_string()),
            ("DCP_SIZE".into(), r.dcp.to_string()),
            ("PCP_SIZE".into(), r.pcp.to_string()),
            ("EP_SIZE".into(), r.ep.to_string()),
            ("DP_ATTENTION".into(), r.dp_attn.to_string()),
            ("SPEC_DECODING".into(), r.spec.to_owned()),
            ("KV_OFFLOADING".into(), r.kv.0.to_owned()),
            ("KV_OFFLOAD_BACKEND".into(), r.kv.1.to_owned()),
        ];
        if let Some((isl, osl)) = r.seq {
            inputs.extend([("ISL".into(), isl.to_string()), ("OSL".into(), osl.to_string())]);
        }
        let mut label = master_config::parallelism_label(r.tp, r.ep);
        for (on, part) in [
            (r.dp_attn, "DPA".to_owned()),
            (r.dcp > 1, format!("DCP{}", r.dcp)),
            (r.pcp > 1, format!("PCP{}", r.pcp)),
            (r.pp > 1, format!("PP{}", r.pp)),
            (!r.kv.1.is_empty(), r.kv.1.to_owned()),
        ] {
            if on {
                label.push(' ');
                label.push_str(&part);
            }
        }
        let variant = format!("{}/{}", r.scenario, r.spec);
        if !out.iter().any(|o| o.variant == variant && o.inputs == inputs) {
            out.push(RowInputs { variant, label, inputs });
        }
    }
    out
}

/// Every scalar `key: value` under `node`, by key.
fn search_space(node: &Node, out: &mut BTreeMap<String, BTreeSet<String>>) {
    match &node.value {
        Value::Map(items) => {
            for (k, v) in items {
                if let (Some(key), Some(value)) = (k.key_text(), v.key_text()) {
                    out.entry(key.into_owned()).or_default().insert(value.into_owned());
                }
                search_space(v, out);
            }
        }
        Value::Seq(items) => items.iter().for_each(|i| search_space(i, out)),
        _ => {}
    }
}

/// The launch variants of an entry, each with the `srt-recipe:` it names (and its line).
fn variants(entry: &Node) -> Vec<(Variant, Option<(String, u32)>)> {
    let mut out: Vec<(Variant, Option<(String, u32)>)> = Vec::new();
    let scenarios = entry.get("scenarios");
    for scenario in ["fixed-seq-len", "agentic-coding"] {
        for block in scenarios.and_then(|s| s.get(scenario)).and_then(Node::as_seq).unwrap_or_default() {
            let int = |k: &str| match block.get(k).map(|n| &n.value) {
                Some(Value::Int(i)) => *i,
                _ => 0,
            };
            for row in block.get("search-space").and_then(Node::as_seq).unwrap_or_default() {
                let mut settings = Vec::new();
                additional_settings(row, &mut settings);
                let mut v = Variant {
                    scenario: scenario.to_owned(),
                    spec_decoding: row
                        .get("spec-decoding")
                        .and_then(Node::key_text)
                        .map_or("none".into(), |t| t.into_owned()),
                    seq: (int("isl"), int("osl")),
                    settings,
                };
                let srt = row.get("srt-recipe").and_then(|n| n.as_str().map(|s| (s.to_owned(), n.pos.line)));
                if let Some((written, line)) = &srt {
                    // The workflow exports the row's recipe to the launcher as SRT_RECIPE.
                    v.settings.push(("SRT_RECIPE".into(), written.clone(), *line));
                }
                let key = |v: &Variant| {
                    (v.scenario.clone(), v.spec_decoding.clone(), v.setting("CONFIG_FILE").map(|(c, _)| c.to_owned()))
                };
                if !out.iter().any(|(o, s)| key(o) == key(&v) && *s == srt) {
                    out.push((v, srt));
                }
            }
        }
    }
    out
}

/// The repository path of a `CONFIG_FILE` value: srt-slurm's `recipes/<rest>` is the
/// repository's recipe folder (the launchers copy it there), the Aug-2026+ form is a
/// repository path already.
fn recipe_path(written: &str, recipes_dir: Option<&str>, root: &str) -> Option<String> {
    let rel = written_path(written);
    if let Some(rest) = rel.strip_prefix("recipes/") {
        return recipes_dir.map(|d| format!("{}/{rest}", d.trim_end_matches('/')));
    }
    rel.contains("srt-slurm-recipes/").then(|| if rel.starts_with(root) { rel } else { format!("{root}{rel}") })
}

/// The launch folders of a repository tree ([`LAUNCH_DIRS`]), read into memory once.
pub fn launch_files(tree: &dyn Tree) -> Result<MemTree, RepoError> {
    let mut files = MemTree::new();
    for dir in LAUNCH_DIRS {
        files.copy_from(tree, dir)?;
    }
    Ok(files)
}

/// The recipe sources of every multi-node entry of a repository tree.
pub fn recipe_sources(tree: &dyn Tree) -> Result<RecipeSources, RepoError> {
    Ok(LaunchTree::new(&launch_files(tree)?).recipe_sources())
}

/// The path a `CONFIG_FILE` value names, without its `:selector` and leading `./`: how the
/// model, the planner and Check 18 key a recipe reference.
pub fn written_path(written: &str) -> String {
    normalize_path(written.split(':').next().unwrap_or(written).trim().trim_start_matches("./"))
}

/// Where each recipe reference of a set of configs is read from, as their launchers read it
/// (decision LM12): the sweep planner and Check 18 select recipe variants through it, so a
/// launcher's copies and its srt-slurm checkout decide the file for them as for every check.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecipeSources {
    by_written: BTreeMap<String, Vec<RecipeUse>>,
}

impl RecipeSources {
    pub fn of<'a>(launches: impl IntoIterator<Item = &'a ConfigLaunch>) -> RecipeSources {
        let mut by_written: BTreeMap<String, Vec<RecipeUse>> = BTreeMap::new();
        for r in launches.into_iter().flat_map(|c| &c.recipes) {
            let uses = by_written.entry(written_path(&r.written)).or_default();
            if !uses.iter().any(|u| u.path == r.path && u.external == r.external) {
                uses.push(r.clone());
            }
        }
        RecipeSources { by_written }
    }

    /// How the configs read `written`: a repository file that exists first, then a checkout's
    /// file, then the rest (a missing file, an undecided checkout). `None`: no config names it.
    pub fn source(&self, written: &str) -> Option<&RecipeUse> {
        let uses = self.by_written.get(&written_path(written))?;
        uses.iter().find(|u| u.exists).or_else(|| uses.iter().find(|u| u.external.is_some())).or_else(|| uses.first())
    }
}

impl<'t> LaunchTree<'t> {
    pub fn new(tree: &'t MemTree) -> LaunchTree<'t> {
        let layout = Layout::default();
        let configs = layout.resolve(tree, Logical::ConfigsDir).ok().flatten().unwrap_or_else(|| "configs".into());
        let root = configs.strip_suffix("configs").unwrap_or("").to_owned();
        let runners_file = format!("{configs}/runners.yaml");
        let runners = match tree.text(&runners_file) {
            None if tree.get(&runners_file).is_some() => Err(Unresolved::new(&runners_file, "not_text", &runners_file)),
            None => Err(Unresolved::new(&runners_file, "missing", &runners_file)),
            Some(text) => Runners::parse(text, &runners_file)
                .map_err(|e| Unresolved::new(&e.to_string(), "unparsable_runners", &runners_file)),
        };
        let recipes_dir = layout.resolve(tree, Logical::SrtRecipesDir).ok().flatten();
        LaunchTree {
            tree,
            root,
            runners,
            recipes_dir,
            references: follow::References::default(),
            external: BTreeMap::new(),
        }
    }

    /// The model with the files of external checkouts (`owner/repo@ref`, checkout-relative
    /// path, text or why it could not be read), given as data (decision EX3): a recipe a
    /// launcher reads from a checkout is read from here exactly as a recipe of the tree.
    pub fn with_external(
        mut self,
        files: impl IntoIterator<Item = (&'t str, &'t str, Result<&'t str, &'t str>)>,
    ) -> LaunchTree<'t> {
        self.external.extend(files.into_iter().map(|(checkout, path, text)| ((checkout, path), text)));
        self
    }

    pub fn tree(&self) -> &MemTree {
        self.tree
    }

    /// Every active entry of every master file (`configs/*-master.yaml`), parsed once each.
    pub fn entries(&self) -> Vec<(String, Node, Node)> {
        let prefix = format!("{}configs/", self.root);
        let mut out = Vec::new();
        for path in self.tree.paths().filter(|p| {
            p.strip_prefix(&prefix).is_some_and(|rest| !rest.contains('/') && rest.ends_with("-master.yaml"))
        }) {
            let Some(text) = self.tree.text(path) else { continue };
            let Ok(root) = yaml::parse(text, path) else { continue };
            for (key, entry) in root.as_map().unwrap_or_default() {
                out.push((path.to_owned(), key.clone(), entry.clone()));
            }
        }
        out
    }

    /// The model of every entry (`keys`: only those).
    pub fn all(&self, keys: &[String]) -> Vec<ConfigLaunch> {
        let entries = self.entries();
        let wanted: Vec<&(String, Node, Node)> = entries
            .iter()
            .filter(|(_, k, _)| keys.is_empty() || k.key_text().is_some_and(|t| keys.iter().any(|x| *x == *t)))
            .collect();
        // Each config is read on its own, over the machine's cores: each worker takes the next
        // config not yet taken (configs differ a hundredfold in cost, and contiguous runs left
        // one core with 72% of the work), and the output is put back in file order.
        let workers = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let mut read: Vec<(usize, ConfigLaunch)> = std::thread::scope(|scope| {
            let runs: Vec<_> = (0..workers.clamp(1, wanted.len().max(1)))
                .map(|_| {
                    scope.spawn(|| {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some((f, k, e)) = wanted.get(i) else { break mine };
                            mine.push((i, self.config(f, k, e)));
                        }
                    })
                })
                .collect();
            runs.into_iter()
                .flat_map(|run| run.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
                .collect()
        });
        read.sort_unstable_by_key(|(i, _)| *i);
        read.into_iter().map(|(_, c)| c).collect()
    }

    /// The model of the entry `key_node: entry` of master file `file`.
    pub fn config(&self, file: &str, key_node: &Node, entry: &Node) -> ConfigLaunch {
        let mut out = self.jobs_and_recipes(file, key_node, entry);
        self.follow(&mut out, entry);
        self.settings(&mut out, entry);
        out.unresolved.sort();
        out.unresolved.dedup();
        out
    }

    /// Where the recipes of every multi-node entry and every single-node `srt-recipe` row are
    /// read from, as their launchers read them (the jobs and recipes of the model, without the
    /// reach and settings).
    pub fn recipe_sources(&self) -> RecipeSources {
        let launches: Vec<ConfigLaunch> = self
            .entries()
            .iter()
            .filter(|(_, _, entry)| {
                matches!(entry.get("multinode").map(|n| &n.value), Some(Value::Bool(true)))
                    || variants(entry).iter().any(|(_, srt)| srt.is_some())
            })
            .map(|(file, key, entry)| self.jobs_and_recipes(file, key, entry))
            .collect();
        RecipeSources::of(&launches)
    }

    /// The runners, jobs and recipes of an entry: what its launchers run, per variant.
    fn jobs_and_recipes(&self, file: &str, key_node: &Node, entry: &Node) -> ConfigLaunch {
        let key = key_node.key_text().map(|t| t.into_owned()).unwrap_or_default();
        let at = format!("{file}:{}", key_node.pos.line);
        let label = text_field(entry, "runner");
        let multinode = matches!(entry.get("multinode").map(|n| &n.value), Some(Value::Bool(true)));
        let mut out = ConfigLaunch {
            config: key.clone(),
            file: file.to_owned(),
            line: key_node.pos.line,
            framework: text_field(entry, "framework"),
            multinode,
            runners: Vec::new(),
            clusters: Vec::new(),
            jobs: Vec::new(),
            recipes: Vec::new(),
            reach: LaunchPath::default(),
            unresolved: Vec::new(),
            settings: Vec::new(),
            model: text_field(entry, "model"),
            space: BTreeMap::new(),
            scopes: Vec::new(),
            gaps: Vec::new(),
        };
        if let Some(scenarios) = entry.get("scenarios") {
            search_space(scenarios, &mut out.space);
        }
        let launchers: Vec<(String, Option<String>)> = match &self.runners {
            Ok(runners) => {
                let mut nodes: Vec<&str> = runners.nodes(&label).iter().map(String::as_str).collect();
                // A label runners.yaml does not list still names GitHub's self-hosted runners
                // `<label>_N` when the tree has their launcher (`gb300-nv`: nodes `gb300-nv_0…`).
                let by_name = format!("{}runners/launch_{label}.sh", self.root);
                if nodes.is_empty() && !label.contains([':', '/']) && self.tree.get(&by_name).is_some() {
                    nodes.push(&label);
                } else if nodes.is_empty() {
                    out.unresolved.push(Unresolved::new(&format!("runner: {label}"), "unknown_runner", &at));
                }
                let mut prefixes: Vec<String> = Vec::new();
                for node in nodes {
                    let p = node.split('_').next().unwrap_or(node).to_owned();
                    if !prefixes.contains(&p) {
                        prefixes.push(p);
                    }
                }
                out.runners = prefixes.clone();
                out.clusters = runners.clusters_of_label(&label).into_iter().map(str::to_owned).collect();
                prefixes
                    .into_iter()
                    .map(|p| {
                        let path = format!("{}runners/launch_{p}.sh", self.root);
                        let present = self.tree.get(&path).is_some();
                        (p, present.then_some(path))
                    })
                    .collect()
            }
            Err(u) => {
                out.unresolved.push(u.clone());
                Vec::new()
            }
        };
        let prefix = text_field(entry, "model-prefix");
        for (variant, srt) in variants(entry) {
            if let Some((written, line)) = &srt {
                let master_root = file.rsplit_once("configs/").map_or("", |(r, _)| r);
                let path = format!("{master_root}{}", normalize_path(written.trim_start_matches("./")));
                let exists = self.tree.get(&path).is_some();
                let use_ = RecipeUse {
                    written: written.clone(),
                    path,
                    selector: None,
                    exists,
                    external: None,
                    at: format!("{file}:{line}"),
                    sets: Vec::new(),
                };
                if !out.recipes.contains(&use_) {
                    out.recipes.push(use_);
                }
            }
            let before = out.jobs.len();
            let mut runs = Vec::new();
            for (node, launcher) in &launchers {
                let Some(path) = launcher else { continue };
                runs.extend(self.run_launcher(&mut out, entry, &prefix, node, path, &variant));
            }
            // The `--set` arguments the launchers surely pass srtctl with the row's recipe; one
            // under an undecided test is named, not applied.
            let mut sets: Vec<RecipeSet> = Vec::new();
            let srtctl_row = variant.setting("CONFIG_FILE").is_some();
            for set in runs.iter().flat_map(|r| &r.sets).filter(|_| srtctl_row) {
                let flag = if set.unset { "--unset" } else { "--set" };
                if !set.sure {
                    out.unresolved.push(Unresolved::new(&format!("{flag} {}", set.arg), "undecided_set", &set.at));
                } else if !sets.iter().any(|s| s.arg == set.arg && s.at == set.at && s.unset == set.unset) {
                    sets.push(RecipeSet { unset: set.unset, arg: set.arg.clone(), at: set.at.clone() });
                }
            }
            for (_, written, line) in variant.settings.iter().filter(|(k, _, _)| k == "CONFIG_FILE") {
                let at = format!("{file}:{line}");
                let srtctl: Vec<&RunnerRun> = runs.iter().filter(|r| r.srtctl.is_some()).collect();
                if srtctl.is_empty() {
                    self.add_recipe(&mut out, written, None, &at, &sets);
                }
                for run in srtctl {
                    self.add_recipe(&mut out, written, Some(run), &at, &sets);
                }
            }
            // Spec 20 §3.2's naming rule also stands in when the runner's launcher did not
            // evaluate to an existing script (its unresolved facts stay recorded and shown by
            // `sweepgate launch`): the rule every reader used before the model.
            let evaluated = out.jobs[before..].iter().any(|j| j.script_exists);
            if !evaluated && variant.setting("CONFIG_FILE").is_none() && srt.is_none() {
                self.by_naming_rule(&mut out, entry, &prefix, &variant, &label, &at);
            }
        }
        out
    }

    /// The files the config's scripts and recipes reach, and what they cannot.
    fn follow(&self, out: &mut ConfigLaunch, entry: &Node) {
        let mut roots: Vec<Reached> = Vec::new();
        let mut unavailable: Vec<Unreachable> = Vec::new();
        for j in &out.jobs {
            if let Some(s) = j.script.as_ref().filter(|_| j.script_exists) {
                if !roots.iter().any(|r| r.path == *s) {
                    roots.push(Reached { path: s.clone(), kind: ReachKind::Launcher, via: j.at.clone(), depth: 0 });
                }
            }
        }
        for r in &out.recipes {
            if r.exists && !roots.iter().any(|x| x.path == r.path) {
                roots.push(Reached { path: r.path.clone(), kind: ReachKind::Recipe, via: r.at.clone(), depth: 0 });
            } else if !r.exists {
                // A checkout file the collector fetched is read like a file of the tree (EX1):
                // its settings are in the model, nothing of it is missing.
                let fetched = r
                    .external
                    .as_deref()
                    .is_some_and(|checkout| matches!(self.external.get(&(checkout, r.path.as_str())), Some(Ok(_))));
                if fetched {
                    continue;
                }
                let why = if r.path.is_empty() || r.external.is_some() { Why::ExternalRecipe } else { Why::Missing };
                if why == Why::Missing {
                    // Decision TD5: a recipe the tree lacks is named, like a missing script.
                    out.unresolved.push(Unresolved::new(&r.path, "missing", &r.at));
                }
                unavailable.push(Unreachable {
                    reference: format!("CONFIG_FILE={}", r.written),
                    via: r.at.clone(),
                    why,
                });
            }
        }
        for j in out.jobs.iter().filter(|j| !j.script_exists) {
            if let Some(s) = &j.script {
                out.unresolved.push(Unresolved::new(s, "missing", &j.at));
            }
        }
        if roots.is_empty() && unavailable.is_empty() {
            let (prefix, label) = (text_field(entry, "model-prefix"), text_field(entry, "runner"));
            let stem = format!("{prefix}_{}_{}_{}", text_field(entry, "precision"), sku(&label), out.framework);
            unavailable.push(Unreachable {
                reference: format!("benchmarks/…/{stem}.sh"),
                via: format!("{}:{}", out.file, out.line),
                why: Why::NoLauncher,
            });
        }
        out.reach = follow::reach_with(&self.references, self.tree, roots, unavailable);
    }

    /// The effective settings, each source read once: the recipe variants that serve each
    /// `srt-recipe` row's points; each `CONFIG_FILE` recipe (every variant its selector picks,
    /// with the launcher's `--set`s); the benchmark scripts of the variants whose rows name no
    /// recipe (server command and env, sourced scripts included). What cannot be read is a gap.
    fn settings(&self, out: &mut ConfigLaunch, entry: &Node) {
        let plan = variants(entry);
        let srt_written: Vec<&str> = plan.iter().filter_map(|(_, srt)| srt.as_ref().map(|(w, _)| w.as_str())).collect();
        let master = master_config::read_entry(&out.config, &out.file, entry.pos, entry);
        if !srt_written.is_empty() {
            match &master {
                Ok(master) => self.srt_row_settings(out, &master.srt_recipe_rows()),
                Err(e) => out.gaps.push(SettingsGap::InvalidEntry { error: e.to_string() }),
            }
        }
        // Lent out while their settings are read (reading adds no recipe).
        let recipes = std::mem::take(&mut out.recipes);
        for r in recipes.iter().filter(|r| !srt_written.contains(&r.written.as_str())) {
            self.recipe_settings(out, r);
        }
        out.recipes = recipes;
        // A variant whose rows run a recipe serves the recipe's settings, not its script's.
        let plain: Vec<String> = plan
            .iter()
            .filter(|(v, srt)| srt.is_none() && v.setting("CONFIG_FILE").is_none())
            .map(|(v, _)| v.label())
            .collect();
        let rows = master.as_ref().map(row_inputs).unwrap_or_default();
        let resolve = |from: &str, target: &str| sourced(self.tree, from, target);
        let mut read: Vec<(&str, &str)> = Vec::new();
        // Lent out while the scripts are read (reading adds no job).
        let jobs = std::mem::take(&mut out.jobs);
        for job in jobs.iter().filter(|j| j.script_exists && plain.contains(&j.variant)) {
            let Some(script) = job.script.as_deref() else { continue };
            if read.contains(&(script, job.variant.as_str())) {
                continue;
            }
            read.push((script, job.variant.as_str()));
            let Some(text) = self.tree.text(script) else {
                out.gaps.push(SettingsGap::NotText { path: script.to_owned() });
                continue;
            };
            if let Some(submission) = amd_disagg::submission(text, script) {
                match &master {
                    Ok(master) => self.disagg_settings(out, master, &submission, &job.variant),
                    Err(e) => out.gaps.push(SettingsGap::InvalidEntry { error: e.to_string() }),
                }
                continue;
            }
            // One reading per distinct row binding of this variant (one, unbound, without rows).
            let unbound = [RowInputs::default()];
            let bindings: Vec<&RowInputs> = rows.iter().filter(|r| r.variant == job.variant).collect();
            let bindings: Vec<&RowInputs> = if bindings.is_empty() { unbound.iter().collect() } else { bindings };
            let mut read_rows: Vec<(RoleSettings, Vec<&str>)> = Vec::new();
            for row in bindings {
                match settings::from_script(text, script, &resolve, &row.inputs) {
                    Some(roles) => match read_rows.iter_mut().find(|(r, _)| *r == roles) {
                        Some((_, labels)) => labels.push(&row.label),
                        None => read_rows.push((roles, vec![&row.label])),
                    },
                    None => {
                        // A script that hands the job to another script is read through it.
                        let handed = handoff::scopes(text, script, &resolve, master.as_ref().ok(), &job.variant);
                        if handed.is_empty() {
                            out.gaps.push(SettingsGap::NoServerStarted { path: script.to_owned() });
                        }
                        let scopes = handed.into_iter().map(|(row, settings)| SettingScope {
                            variant: job.variant.clone(),
                            row,
                            settings,
                        });
                        out.scopes.extend(scopes);
                        read_rows.clear();
                        break;
                    }
                }
            }
            // Rows that read alike are one scope; rows that differ are named.
            let named = read_rows.len() > 1;
            for (roles, labels) in read_rows {
                let row = named.then(|| labels.join(", "));
                out.scopes.push(SettingScope { variant: job.variant.clone(), row, settings: roles });
            }
        }
        out.jobs = jobs;
        let mut flat = Vec::new();
        for scope in &out.scopes {
            let role = &scope.settings;
            for s in role.settings.values() {
                for value in &s.values {
                    flat.push(LaunchSetting {
                        name: s.name.clone(),
                        value: value.clone(),
                        role: role.role.to_owned(),
                        variant: scope.row.clone().unwrap_or_else(|| scope.variant.clone()),
                        class: class::class_of(&s.name, s.kind == SettingKind::Flag),
                        at: s.at.clone(),
                        resolved: is_resolved(value),
                    });
                }
            }
        }
        flat.sort();
        flat.dedup();
        out.settings = flat;
    }

    /// The settings of a script that submits AMD's disaggregated job: per row, each role's
    /// flags from the model table the job renders them from (decision PM11).
    fn disagg_settings(
        &self,
        out: &mut ConfigLaunch,
        master: &MasterConfig,
        submission: &amd_disagg::Submission,
        variant: &str,
    ) {
        let rows = amd_disagg::rows(master);
        let mut read: Vec<(Vec<RoleSettings>, Vec<String>)> = Vec::new();
        // The job reads one entry for agentic rows and one for the others.
        let mut entries: BTreeMap<bool, amd_disagg::TableEntry> = BTreeMap::new();
        for row in &rows {
            let entry = match entries.entry(row.agentic) {
                std::collections::btree_map::Entry::Occupied(known) => known.into_mut(),
                std::collections::btree_map::Entry::Vacant(slot) => {
                    match amd_disagg::table_entry(self.tree, submission, &master.framework, &master.model, row.agentic)
                    {
                        Ok(entry) => slot.insert(entry),
                        Err(gap) => {
                            out.gaps.push(match gap {
                                amd_disagg::TableGap::Unparsable { path, error } => {
                                    SettingsGap::UnparsableRecipe { path, error }
                                }
                                amd_disagg::TableGap::NoTable { dir, .. } => {
                                    SettingsGap::DisaggTable { path: dir, at: submission.at.clone(), tried: Vec::new() }
                                }
                                amd_disagg::TableGap::NoEntry { path, tried } => {
                                    SettingsGap::DisaggTable { path, at: submission.at.clone(), tried }
                                }
                            });
                            return;
                        }
                    }
                }
            };
            let roles = amd_disagg::role_settings(entry, row);
            match read.iter_mut().find(|(r, _)| *r == roles) {
                Some((_, labels)) => labels.push(row.label()),
                None => read.push((roles, vec![row.label()])),
            }
        }
        let named = read.len() > 1;
        for (roles, labels) in read {
            let row = named.then(|| labels.join(", "));
            for settings in roles {
                out.scopes.push(SettingScope { variant: variant.to_owned(), row: row.clone(), settings });
            }
        }
    }

    /// Per `srt-recipe` row, the settings of the recipe variants that serve its points (TP, EP,
    /// concurrency and KV band, [`FactVariant::serves`]), labelled with the row.
    fn srt_row_settings(&self, out: &mut ConfigLaunch, rows: &[SrtRecipeRow]) {
        let mut parsed: BTreeMap<String, Result<Vec<FactVariant>, String>> = BTreeMap::new();
        for row in rows {
            let candidates = row.candidate_paths(&out.file);
            let Some((path, text)) = candidates.iter().find_map(|p| self.tree.text(p).map(|t| (p.clone(), t))) else {
                let path = candidates.first().cloned().unwrap_or_default();
                out.gaps.push(SettingsGap::RecipeAbsent {
                    path,
                    written: row.recipe.clone(),
                    row: Some(row.at.clone()),
                });
                continue;
            };
            let variants = parsed.entry(path.clone()).or_insert_with(|| {
                Recipe::parse(text, &path).and_then(|r| r.fact_variants()).map_err(|e| e.to_string())
            });
            let all = match variants {
                Ok(all) => all,
                Err(error) => {
                    let gap = SettingsGap::UnparsableRecipe { path: path.clone(), error: error.clone() };
                    if !out.gaps.contains(&gap) {
                        out.gaps.push(gap);
                    }
                    continue;
                }
            };
            let label = row.label();
            let mut chosen: Vec<srt_recipe::Variant> = Vec::new();
            for conc in row.concurrencies() {
                let point =
                    SingleNodePoint { tp: row.tp, ep: row.ep, conc, kv_offloading: row.kv_offloading.to_owned() };
                let serving: Vec<&FactVariant> = all.iter().filter(|v| v.serves(&point)).collect();
                if serving.is_empty() {
                    let row = row.at.clone();
                    out.gaps.push(SettingsGap::NoServingVariant {
                        path: path.clone(),
                        label: label.clone(),
                        conc,
                        row,
                    });
                    chosen.clear();
                    break;
                }
                for v in serving {
                    if !chosen.iter().any(|c| c.selector == v.variant.selector) {
                        chosen.push(v.variant.clone());
                    }
                }
            }
            match settings::from_variants(&path, &chosen) {
                Ok(roles) => out.scopes.extend(roles.into_iter().map(|settings| SettingScope {
                    variant: label.clone(),
                    row: Some(label.clone()),
                    settings,
                })),
                Err(e) => out.gaps.push(SettingsGap::UnparsableRecipe { path: path.clone(), error: e.to_string() }),
            }
        }
    }

    /// The settings of a `CONFIG_FILE` recipe: every variant its selector picks, with the
    /// launcher's `--set`s applied (decision TD9).
    fn recipe_settings(&self, out: &mut ConfigLaunch, r: &RecipeUse) {
        if let Some(checkout) = &r.external {
            let found = self.external.get(&(checkout.as_str(), r.path.as_str())).copied();
            let (checkout, path, at) = (checkout.clone(), r.path.clone(), r.at.clone());
            match found {
                // Named `owner/repo@ref:path`, so every `file:line` says which checkout it is.
                Some(Ok(text)) => self.read_recipe(out, r, text, &format!("{checkout}:{path}")),
                Some(Err(reason)) => {
                    out.gaps.push(SettingsGap::ExternalUnavailable { checkout, path, at, reason: reason.to_owned() })
                }
                None => out.gaps.push(SettingsGap::ExternalRecipe { checkout, path, at }),
            }
            return;
        }
        if r.path.is_empty() {
            out.gaps.push(SettingsGap::RecipeUnlocated { written: r.written.clone(), at: r.at.clone() });
            return;
        }
        let Some(text) = self.tree.text(&r.path).filter(|_| r.exists) else {
            let gap = match self.tree.get(&r.path) {
                Some(_) => SettingsGap::NotText { path: r.path.clone() },
                None => SettingsGap::RecipeAbsent { path: r.path.clone(), written: r.written.clone(), row: None },
            };
            out.gaps.push(gap);
            return;
        };
        self.read_recipe(out, r, text, &r.path);
    }

    /// The settings of recipe `r` whose text is `text`, named `file` in every `file:line`.
    fn read_recipe(&self, out: &mut ConfigLaunch, r: &RecipeUse, text: &str, file: &str) {
        let parsed = Recipe::parse(text, file).map_err(|e| e.to_string()).and_then(|mut recipe| {
            // The effective values: the recipe with the launcher's `--set`s (decision TD9).
            overrides::parse_sets(r.sets.iter().map(|s| (s.unset, s.arg.as_str(), s.at.as_str())))
                .and_then(|sets| overrides::apply(&mut recipe.root, &sets))
                .map_err(|e| {
                    out.unresolved.push(Unresolved::new(&e.to_string(), "bad_override", &r.at));
                    e.to_string()
                })?;
            let selector = r.selector.as_deref().map(Selector::parse).transpose().map_err(|e| e.to_string())?;
            settings::from_recipe(&recipe, selector.as_ref()).map_err(|e| e.to_string())
        });
        match parsed {
            Ok(roles) => {
                let variant = r.selector.clone().unwrap_or_else(|| "plain".to_owned());
                let scopes =
                    roles.into_iter().map(|settings| SettingScope { variant: variant.clone(), row: None, settings });
                out.scopes.extend(scopes);
            }
            Err(error) => out.gaps.push(SettingsGap::UnparsableRecipe { path: file.to_owned(), error }),
        }
    }

    /// Records the recipe `CONFIG_FILE=written` names, as the launcher `run` that runs
    /// `srtctl apply` in its checkout reads it: a folder it copies from the repository over the
    /// checkout, a repository path, else the checkout's own file. Without such a run (a tree
    /// without the runner's launcher), `recipes/…` is the repository's recipe folder.
    fn add_recipe(&self, out: &mut ConfigLaunch, written: &str, run: Option<&RunnerRun>, at: &str, sets: &[RecipeSet]) {
        let reference = RecipeRef::parse(written).ok();
        let selector = reference.as_ref().and_then(|r| r.selector.as_ref()).map(ToString::to_string);
        let rel = written_path(written);
        let copied = run.and_then(|run| {
            let mut copies: Vec<&runner::CheckoutCopy> = run.copies.iter().collect();
            copies.sort_by_key(|c| !c.sure);
            copies.into_iter().find_map(|c| c.source_of(&rel))
        });
        let (path, external) = match (copied, run) {
            (Some(path), _) => (path, None),
            (None, Some(run)) if !rel.contains("srt-slurm-recipes/") => match run.checkout() {
                Some(c) => (rel, Some(format!("{}@{}", c.repo, c.rev.as_deref().unwrap_or("HEAD")))),
                None => {
                    let why = if run.checkouts.is_empty() { "no_checkout" } else { "undecided_checkout" };
                    out.unresolved.push(Unresolved::new(&format!("CONFIG_FILE={written}"), why, at));
                    (String::new(), None)
                }
            },
            _ => (recipe_path(written, self.recipes_dir.as_deref(), &self.root).unwrap_or_default(), None),
        };
        let exists = external.is_none() && !path.is_empty() && self.tree.get(&path).is_some();
        if path.is_empty() && run.is_none() {
            out.unresolved.push(Unresolved::new(&format!("CONFIG_FILE={written}"), "external_recipe", at));
        }
        let use_ = RecipeUse {
            written: written.to_owned(),
            path,
            selector,
            exists,
            external,
            at: at.to_owned(),
            sets: sets.to_vec(),
        };
        if !out.recipes.contains(&use_) {
            out.recipes.push(use_);
        }
    }

    /// The bindings of one job: the workflow's inputs from the entry and the variant.
    fn env(&self, entry: &Node, prefix: &str, node: &str, variant: &Variant, multinode: bool) -> shell::Env {
        let mut env = shell::Env::new(WORKFLOW_ENV);
        let agentic = variant.scenario == "agentic-coding";
        let (isl, osl) = variant.seq;
        let exp = if agentic {
            format!("{prefix}_agentic")
        } else {
            format!("{prefix}_{}", crate::matrix::generate::seq_name(isl, osl))
        };
        let isl = isl.to_string();
        let osl = osl.to_string();
        let node_name = format!("{node}_0");
        let fields: Vec<(&str, String)> = ["model", "image", "precision", "framework", "runner", "disagg"]
            .iter()
            .map(|f| (*f, text_field(entry, f)))
            .collect();
        let field = |f: &str| fields.iter().find(|(k, _)| *k == f).map_or("", |(_, v)| v.as_str());
        for (k, v) in [
            ("EXP_NAME", exp.as_str()),
            ("MODEL_PREFIX", prefix),
            ("MODEL", field("model")),
            ("IMAGE", field("image")),
            ("PRECISION", field("precision")),
            ("FRAMEWORK", field("framework")),
            ("SPEC_DECODING", variant.spec_decoding.as_str()),
            ("SCENARIO_TYPE", variant.scenario.as_str()),
            ("SCENARIO_SUBDIR", if agentic { "agentic/" } else { "fixed_seq_len/" }),
            ("IS_AGENTIC", if agentic { "1" } else { "0" }),
            ("IS_MULTINODE", if multinode { "true" } else { "false" }),
            ("RUNNER_TYPE", field("runner")),
            ("RUNNER_NAME", node_name.as_str()),
            ("GITHUB_WORKSPACE", "."),
            ("ISL", isl.as_str()),
            ("OSL", osl.as_str()),
            ("DISAGG", field("disagg")),
        ] {
            env.bind(k, v);
        }
        for (k, v, _) in &variant.settings {
            env.bind(k, v);
        }
        env
    }

    fn run_launcher(
        &self,
        out: &mut ConfigLaunch,
        entry: &Node,
        prefix: &str,
        node: &str,
        path: &str,
        variant: &Variant,
    ) -> Option<RunnerRun> {
        let Some(text) = self.tree.text(path) else {
            out.unresolved.push(Unresolved::new(path, "not_text", path));
            return None;
        };
        let mut env = self.env(entry, prefix, node, variant, out.multinode);
        let mut run = runner::evaluate(self.tree, path, text, &mut env, &self.root);
        out.unresolved.append(&mut run.unresolved);
        let label = variant.label();
        let srtctl = variant.setting("CONFIG_FILE").is_some();
        let native = run.native.iter().find(|n| n.sure).or(run.native.first()).cloned();
        if run.scripts.is_empty() && !srtctl && native.is_none() {
            out.unresolved.push(Unresolved::new(path, "no_script", format!("{path} ({label})")));
        }
        for (script, at, _sure) in std::mem::take(&mut run.scripts) {
            let exists = self.tree.get(&script).is_some();
            let job = Job {
                runner: node.to_owned(),
                launcher: Some(path.to_owned()),
                variant: label.clone(),
                script: Some(script),
                script_exists: exists,
                native: None,
                at,
            };
            if !out.jobs.contains(&job) {
                out.jobs.push(job);
            }
        }
        if out.jobs.iter().all(|j| j.runner != node || j.variant != label) {
            out.jobs.push(Job {
                runner: node.to_owned(),
                launcher: Some(path.to_owned()),
                variant: label,
                script: None,
                script_exists: false,
                at: native.as_ref().map_or_else(|| path.to_owned(), |n| n.at.clone()),
                native: native.map(|n| n.profile),
            });
        }
        Some(run)
    }

    /// Spec 20 §3.2's naming rule (decision LM3), for a tree without the runner's launcher or
    /// whose launcher did not evaluate to an existing script:
    /// `<prefix>_<precision>_<sku>_<framework><spec>.sh`, else `<prefix>_<precision>_<sku><spec>.sh`,
    /// else a script of the `<…>_<framework>_` stem, under the scenario's folder.
    fn by_naming_rule(
        &self,
        out: &mut ConfigLaunch,
        entry: &Node,
        prefix: &str,
        variant: &Variant,
        label: &str,
        at: &str,
    ) {
        let base = format!("{prefix}_{}_{}", text_field(entry, "precision"), sku(label)).to_ascii_lowercase();
        let node = if out.multinode { "benchmarks/multi_node/" } else { "benchmarks/single_node/" };
        let agentic = variant.scenario == "agentic-coding";
        let spec = if out.multinode || variant.spec_decoding == "none" {
            String::new()
        } else {
            format!("_{}", variant.spec_decoding)
        };
        let scripts = |fits: &dyn Fn(&str) -> bool| -> Vec<String> {
            self.tree
                .paths()
                .filter(|p| {
                    let logical = p.strip_prefix(&self.root).unwrap_or(p);
                    logical.starts_with(node) && logical.contains("/agentic/") == agentic
                })
                .filter(|p| fits(&p.rsplit('/').next().unwrap_or(p).to_ascii_lowercase()))
                .map(str::to_owned)
                .collect()
        };
        let stem = format!("{base}_{}", out.framework.to_ascii_lowercase());
        let mut found = scripts(&|n| n == format!("{stem}{spec}.sh"));
        if found.is_empty() {
            found = scripts(&|n| n == format!("{base}{spec}.sh"));
        }
        if found.is_empty() {
            found = scripts(&|n| n.starts_with(&format!("{stem}_")) && n.ends_with(".sh"));
        }
        for script in found {
            let job = Job {
                runner: String::new(),
                launcher: None,
                variant: variant.label(),
                script: Some(script),
                script_exists: true,
                native: None,
                at: at.to_owned(),
            };
            if !out.jobs.contains(&job) {
                out.jobs.push(job);
            }
        }
    }
}

/// The base GPU SKU of a runner label (`cluster:mi355x-amds` → `mi355x`, `gb300-nv` → `gb300`).
/// Any case: eval rows carry the label upper-cased as upstream's collector writes it
/// (`CLUSTER:B200-DGXC` → `b200`; `benchmark_lib.sh` writes `"hw": "${RUNNER_TYPE}"`).
pub fn sku(runner: &str) -> String {
    let r = runner.to_ascii_lowercase();
    let r = r.strip_prefix("cluster:").unwrap_or(&r);
    r.split(['-', '_']).next().unwrap_or(r).to_owned()
}

/// The script a script sources: relative to it, else the tree's file ending with the path.
pub fn sourced(tree: &MemTree, from: &str, target: &str) -> Option<(String, String)> {
    let dir = from.rsplit_once('/').map_or("", |(d, _)| d);
    let relative = normalize_path(&format!("{dir}/{target}"));
    if let Some(text) = tree.text(&relative) {
        return Some((relative, text.to_owned()));
    }
    let tail = normalize_path(target.trim_start_matches("./").trim_start_matches("../"));
    let suffix = format!("/{tail}");
    let found = tree.paths().find(|p| p.ends_with(&suffix) || *p == tail)?;
    Some((found.to_owned(), tree.text(found)?.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values as upstream launchers leave them: `--max-model-len $(compute_eval_context_length …)`
    /// (`dsr1_fp8_mi355x.sh`), `--tp $TP`, `--served-model-name \\$NAME`, a JSON literal.
    #[test]
    fn a_value_with_an_expression_left_is_unresolved() {
        assert!(!is_resolved("$(compute_eval_context_length $MODEL 10240)"));
        assert!(!is_resolved("$TP"));
        assert!(!is_resolved("{\"cudagraph_capture_sizes\":[${SIZES}]}"));
        assert!(!is_resolved("`cat x`"));
        assert!(is_resolved("\\$NAME"), "an escaped dollar is a literal");
        assert!(is_resolved("{\"method\": \"mtp\", \"num_speculative_tokens\": 3}"));
        assert!(is_resolved("0.85"));
        assert!(is_resolved("$"), "a lone dollar names nothing");
        // benchmark_lib.sh's `start_gpu_monitor`: `--output) output="$2"` then `GPU_METRICS_CSV="$output"`.
        assert!(!is_resolved("$2"), "a function's positional argument is never known");
        assert!(!is_resolved("--x \"$@\""));
        assert!(is_resolved("10 $ per hour"));
    }

    #[test]
    fn config_file_paths_resolve_in_both_layouts() {
        let dir = Some("benchmarks/multi_node/srt-slurm-recipes");
        let want = "benchmarks/multi_node/srt-slurm-recipes/trtllm/a.yaml";
        assert_eq!(recipe_path("recipes/trtllm/a.yaml:override_x", dir, "").as_deref(), Some(want));
        assert_eq!(
            recipe_path("benchmarks/multi_node/srt-slurm-recipes/trtllm/a.yaml", dir, "").as_deref(),
            Some(want)
        );
        assert_eq!(recipe_path("recipes/trtllm/a.yaml", None, ""), None, "no recipe folder");
        assert_eq!(recipe_path("sglang/a.yaml", dir, ""), None, "srt-slurm's own");
    }

    const RUNNERS: &str = "labels:\n  h200:\n  - h200-nb_0\n  - h200-cw_0\n";
    const MASTER: &str = "qwen3.5-fp8-h200-sglang:\n  image: img\n  model: Qwen/Qwen3.5\n  model-prefix: qwen3.5\n  runner: h200\n  precision: fp8\n  framework: sglang\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-start: 4, conc-end: 8 }\n      - { tp: 8, spec-decoding: mtp, conc-start: 4, conc-end: 8 }\n";
    const NB: &str = "MODEL_CODE=\"${EXP_NAME%%_*}\"\nFRAMEWORK_SUFFIX=$([[ \"$FRAMEWORK\" == \"trt\" ]] && printf '_trt' || printf '')\nSPEC_SUFFIX=$([[ \"$SPEC_DECODING\" == \"mtp\" ]] && printf '_mtp' || printf '')\nsrun --x \\\nbash benchmarks/single_node/${SCENARIO_SUBDIR}${MODEL_CODE}_${PRECISION}_h200${FRAMEWORK_SUFFIX}${SPEC_SUFFIX}.sh\n";
    const SCRIPT: &str = "source \"$(dirname \"$0\")/../../benchmark_lib.sh\"\nexport SGLANG_ENABLE_JIT_DEEPGEMM=1\npython3 -m sglang.launch_server --model-path $MODEL --tp $TP --chunked-prefill-size 8192 --port $PORT\n";

    fn tree() -> MemTree {
        MemTree::new()
            .with("configs/runners.yaml", RUNNERS)
            .with("configs/nvidia-master.yaml", MASTER)
            .with("runners/launch_h200-nb.sh", NB)
            .with("runners/launch_h200-cw.sh", "X=$(pick_script)\nbash \"$X\"\n")
            .with("benchmarks/benchmark_lib.sh", "export AIPERF_MMAP_CACHE_DIR=/c\nOPENAI_API_KEY=x\n")
            .with("benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_h200.sh", SCRIPT)
    }

    /// Decision PM8: a script is read once per distinct row binding of its variant; rows that
    /// read alike are one scope, rows that differ are named; the settings sources a variant's
    /// rows do not use (a `mooncake)` arm no row selects, a DCP flag at DCP 1) are not read.
    #[test]
    fn a_script_is_read_per_row_and_rows_that_read_differently_are_named() {
        const SCRIPT: &str = "if [ \"$DCP_SIZE\" -gt 1 ]; then\n  CP=(--decode-context-parallel-size $DCP_SIZE)\nfi\ncase \"$KV_OFFLOAD_BACKEND\" in\n  mooncake) KV=(--kv-transfer-config mooncake) ;;\nesac\nvllm serve $MODEL --tensor-parallel-size $TP \"${CP[@]}\" \"${KV[@]}\"\n";
        let model = |rows: &str| {
            let master = MASTER
                .replace(
                    "      - { tp: 8, conc-start: 4, conc-end: 8 }\n      - { tp: 8, spec-decoding: mtp, conc-start: 4, conc-end: 8 }\n",
                    rows,
                )
                .replace("  framework: sglang\n", "  framework: sglang\n  multinode: false\n");
            let t = tree()
                .with("configs/nvidia-master.yaml", master.as_str())
                .with("benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_h200.sh", SCRIPT);
            LaunchTree::new(&t).all(&["qwen3.5-fp8-h200-sglang".to_owned()]).remove(0)
        };
        let one =
            model("      - { tp: 8, conc-start: 4, conc-end: 8 }\n      - { tp: 4, conc-start: 4, conc-end: 8 }\n");
        assert_eq!(one.scopes.len(), 1, "both rows read alike: {:?}", one.scopes);
        assert_eq!(one.scopes[0].row, None);
        let names: BTreeSet<&str> = one.settings.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, BTreeSet::from(["--tensor-parallel-size"]), "no DCP flag, no mooncake arm");

        let two = model("      - { tp: 8, conc-start: 4, conc-end: 8 }\n      - { tp: 8, dcp-size: 2, conc-start: 4, conc-end: 8 }\n");
        let rows: Vec<Option<&str>> = two.scopes.iter().map(|s| s.row.as_deref()).collect();
        assert_eq!(rows, [Some("TP8"), Some("TP8 DCP2")]);
        assert!(two.scopes[1].settings.settings.contains_key("--decode-context-parallel-size"));
        assert!(two.gaps.is_empty(), "{:?}", two.gaps);
    }

    #[test]
    fn a_config_runs_the_script_its_runner_launchers_compute_and_names_what_they_cannot() {
        let t = tree();
        let model = LaunchTree::new(&t).all(&[]);
        assert_eq!(model.len(), 1);
        let c = &model[0];
        assert_eq!(c.runners, ["h200-nb", "h200-cw"]);
        assert_eq!(c.scripts(), ["benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_h200.sh"]);
        let mtp = c.jobs.iter().find(|j| j.runner == "h200-nb" && j.variant == "fixed-seq-len/mtp").unwrap();
        assert_eq!(mtp.script.as_deref(), Some("benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_h200_mtp.sh"));
        assert!(!mtp.script_exists);
        assert!(c.resolves());
        let whys: Vec<(&str, &str)> = c.unresolved.iter().map(|u| (u.why, u.at.as_str())).collect();
        assert!(whys.contains(&("command_substitution", "runners/launch_h200-cw.sh:1")), "{whys:?}");
        assert!(whys.contains(&("missing", "runners/launch_h200-nb.sh:4")), "{whys:?}");
        assert!(c.reach.contains("benchmarks/benchmark_lib.sh"));
        let class = |n: &str| c.settings.iter().find(|s| s.name == n).map(|s| s.class);
        assert_eq!(class("--chunked-prefill-size"), Some(Class::Engine));
        assert_eq!(class("SGLANG_ENABLE_JIT_DEEPGEMM"), Some(Class::Engine));
        assert_eq!(class("AIPERF_MMAP_CACHE_DIR"), Some(Class::Harness));
    }

    #[test]
    fn without_runners_the_naming_rule_is_used_and_said() {
        let t = MemTree::new()
            .with("configs/nvidia-master.yaml", MASTER)
            .with("benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_h200.sh", SCRIPT);
        let c = &LaunchTree::new(&t).all(&[])[0];
        assert_eq!(c.scripts(), ["benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_h200.sh"]);
        assert!(c.jobs.iter().all(|j| j.launcher.is_none()));
        assert_eq!(c.unresolved[0].why, "missing");
        assert_eq!(c.unresolved[0].what, "configs/runners.yaml");
    }

    const MULTINODE: &str = "dsr1-fp4-b200-dynamo-sglang:\n  image: img\n  model: dsr1\n  model-prefix: dsr1\n  runner: b200-multinode\n  precision: fp4\n  framework: dynamo-sglang\n  multinode: true\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - conc-list: [4]\n        prefill:\n          additional-settings:\n          - \"CONFIG_FILE=recipes/sglang/dsr1-nv/b200-fp4/1k1k.yaml\"\n      - conc-list: [8]\n        prefill:\n          additional-settings:\n          - \"CONFIG_FILE=recipes/trtllm/b200-fp4/1k1k.yaml:override_x\"\ndsr1-fp4-gb300-dynamo-sglang:\n  image: img\n  model: dsr1\n  model-prefix: dsr1\n  runner: gb300-nv\n  precision: fp4\n  framework: dynamo-sglang\n  multinode: true\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - conc-list: [4]\n        prefill:\n          additional-settings:\n          - \"CONFIG_FILE=recipes/sglang/other.yaml\"\n";
    // The shape of upstream's multi-node launchers: one clone per framework branch, a
    // repository folder copied over the checkout (renamed), `srtctl apply` in a `$(…)`.
    const SRT_LAUNCHER: &str = "if [[ \"$IS_MULTINODE\" == \"true\" ]]; then\n  if [[ $FRAMEWORK == \"dynamo-sglang\" && $MODEL_PREFIX == \"dsr1\" && ( $PRECISION == \"fp4\" || $PRECISION == \"fp8\" ) ]]; then\n    git clone https://github.com/NVIDIA/srt-slurm.git \"$SRT_REPO_DIR\"\n    cd \"$SRT_REPO_DIR\" || exit 1\n    git checkout a98738de\n    cp -rT \"$GITHUB_WORKSPACE/benchmarks/multi_node/srt-slurm-recipes/sglang/dsr1/b200-fp4\" \\\n      recipes/sglang/dsr1-nv/b200-fp4 || exit 1\n  else\n    git clone --branch v1.0.36 --single-branch https://github.com/NVIDIA/srt-slurm.git \"$SRT_REPO_DIR\"\n  fi\n  OUT=$(RUNNER_NAME=\"$X\" srtctl apply -f \"$CONFIG_FILE\" 2>&1)\nfi\n";

    #[test]
    fn a_srtctl_launcher_reads_recipes_through_its_checkout_and_the_folders_it_copies_over_it() {
        let t = MemTree::new()
            .with("configs/runners.yaml", "labels:\n  b200-multinode:\n  - b200-dgxc_0\n")
            .with("configs/nvidia-master.yaml", MULTINODE)
            .with("runners/launch_b200-dgxc.sh", SRT_LAUNCHER)
            .with(
                "runners/launch_gb300-nv.sh",
                "git clone https://github.com/NVIDIA/srt-slurm.git s\nsrtctl apply -f \"$CONFIG_FILE\"\n",
            )
            .with("benchmarks/multi_node/srt-slurm-recipes/sglang/dsr1/b200-fp4/1k1k.yaml", "name: x\n")
            .with("benchmarks/multi_node/srt-slurm-recipes/trtllm/b200-fp4/1k1k.yaml", "name: y\n");
        let model = LaunchTree::new(&t).all(&[]);
        let c = &model[0];
        assert!(c.resolves());
        let at = |w: &str| c.recipes.iter().find(|r| r.written.starts_with(w)).unwrap();
        // Copied over the checkout under another name: the repository's file.
        let copied = at("recipes/sglang/dsr1-nv/");
        assert_eq!(copied.path, "benchmarks/multi_node/srt-slurm-recipes/sglang/dsr1/b200-fp4/1k1k.yaml");
        assert!(copied.exists && copied.external.is_none());
        // Not copied: the checkout's own file, though the repository has one at the same path.
        let own = at("recipes/trtllm/");
        assert_eq!(own.path, "recipes/trtllm/b200-fp4/1k1k.yaml");
        assert_eq!(own.external.as_deref(), Some("NVIDIA/srt-slurm@a98738de"));
        assert_eq!(own.selector.as_deref(), Some("override_x"));
        assert!(!own.exists);
        assert!(c.reach.unavailable.iter().any(|u| u.why == Why::ExternalRecipe), "{:?}", c.reach.unavailable);

        // `gb300-nv` is no label of runners.yaml: GitHub's runners `gb300-nv_N` run its launcher.
        let gb300 = &model[1];
        assert_eq!(gb300.runners, ["gb300-nv"]);
        assert_eq!(gb300.recipes[0].external.as_deref(), Some("NVIDIA/srt-slurm@HEAD"));
        assert!(gb300.unresolved.is_empty(), "{:?}", gb300.unresolved);

        // The planner and Check 18 read the same files through the recipe sources.
        let sources = LaunchTree::new(&t).recipe_sources();
        assert_eq!(sources, RecipeSources::of(&model));
        let copied_source = sources.source(&format!("./{}", copied.written)).unwrap();
        assert_eq!(copied_source.path, copied.path, "selector and ./ do not change the key");
        assert_eq!(sources.source(&own.written).unwrap().external, own.external);
        assert_eq!(sources.source("recipes/none.yaml"), None);
    }

    /// Issue 33 item 2 (EX3): an external recipe given to the model is read exactly as a recipe
    /// of the tree, its `file:line` naming the checkout; one not given stays a gap naming the
    /// checkout; one that could not be fetched is a gap naming why.
    #[test]
    fn an_external_recipe_is_read_from_the_fetched_checkout_files() {
        const RECIPE: &str = "base:\n  schema: 2\n  name: x\n  engine: trtllm\n  roles:\n    agg: {nodes: 1, workers: 1, gpus: 4, args: {tensor-parallel-size: 4}}\noverride_x:\n  roles:\n    agg: {args: {max-batch-size: 64}}\n";
        let t = MemTree::new()
            .with("configs/runners.yaml", "labels:\n  b200-multinode:\n  - b200-dgxc_0\n")
            .with("configs/nvidia-master.yaml", MULTINODE)
            .with("runners/launch_b200-dgxc.sh", SRT_LAUNCHER)
            .with("benchmarks/multi_node/srt-slurm-recipes/sglang/dsr1/b200-fp4/1k1k.yaml", "name: x\n");
        let key = ["dsr1-fp4-b200-dynamo-sglang".to_owned()];
        let checkout = "NVIDIA/srt-slurm@a98738de";
        let path = "recipes/trtllm/b200-fp4/1k1k.yaml";
        let external = |c: &ConfigLaunch| -> Vec<SettingsGap> {
            c.gaps.iter().filter(|g| !matches!(g, SettingsGap::UnparsableRecipe { .. })).cloned().collect()
        };

        let offline = LaunchTree::new(&t).all(&key).remove(0);
        let at = "configs/nvidia-master.yaml:21".to_owned();
        assert_eq!(
            external(&offline),
            [SettingsGap::ExternalRecipe { checkout: checkout.into(), path: path.into(), at: at.clone() }]
        );

        let read = LaunchTree::new(&t).with_external([(checkout, path, Ok(RECIPE))]).all(&key).remove(0);
        assert!(external(&read).is_empty(), "{:?}", read.gaps);
        let batch = read
            .settings
            .iter()
            .find(|s| s.name == "--max-batch-size")
            .unwrap_or_else(|| panic!("{:?} {:?}", read.settings, read.gaps));
        assert_eq!((batch.value.as_str(), batch.variant.as_str()), ("64", "override_x"));
        assert_eq!(batch.at, format!("{checkout}:{path}:9"));
        let tp = read.settings.iter().find(|s| s.name == "--tensor-parallel-size").unwrap();
        assert_eq!(tp.at, format!("{checkout}:{path}:6"));
        assert_eq!(read.recipes.iter().find(|r| r.path == path).and_then(|r| r.external.as_deref()), Some(checkout));
        // Read, the checkout file is no unreachable part of the launch path (Check 13's missing
        // evidence); unread or unavailable, it is.
        let external_unreachable =
            |c: &ConfigLaunch| c.reach.unavailable.iter().filter(|u| u.why == Why::ExternalRecipe).count();
        assert_eq!(external_unreachable(&offline), 1, "{:?}", offline.reach.unavailable);
        assert_eq!(external_unreachable(&read), 0, "{:?}", read.reach.unavailable);

        let why = "not found: http://x/repos/NVIDIA/srt-slurm/contents/recipes/trtllm/b200-fp4/1k1k.yaml?ref=a98738de: HTTP 404";
        let failed = LaunchTree::new(&t).with_external([(checkout, path, Err(why))]).all(&key).remove(0);
        assert_eq!(
            external(&failed),
            [SettingsGap::ExternalUnavailable { checkout: checkout.into(), path: path.into(), at, reason: why.into() }]
        );
        assert_eq!(external_unreachable(&failed), 1);
        // Another checkout's file is not this one's.
        let other = LaunchTree::new(&t).with_external([("NVIDIA/srt-slurm@v1.0.50", path, Ok(RECIPE))]);
        assert!(matches!(external(&other.all(&key).remove(0))[..], [SettingsGap::ExternalRecipe { .. }]));
    }

    #[test]
    fn an_undecided_checkout_is_a_named_fact() {
        let launcher = "if [[ -d /lustre ]]; then\n  git clone https://github.com/a/srt.git s\nelse\n  git clone https://github.com/b/srt.git s\nfi\nsrtctl apply -f \"$CONFIG_FILE\"\n";
        let t = MemTree::new()
            .with("configs/runners.yaml", "labels:\n  b200-multinode:\n  - b200-dgxc_0\n")
            .with("configs/nvidia-master.yaml", MULTINODE)
            .with("runners/launch_b200-dgxc.sh", launcher);
        let c = &LaunchTree::new(&t).all(&["dsr1-fp4-b200-dynamo-sglang".into()])[0];
        assert!(!c.resolves());
        assert!(c.unresolved.iter().any(|u| u.why == "undecided_checkout"), "{:?}", c.unresolved);
    }

    /// A launcher's `--set` reaches the recipe's effective values (decision TD9): surely passed,
    /// it is applied before the settings are read and recorded with its `file:line`; under an
    /// undecided test it is named, not applied; a bad one is named with where it is written.
    #[test]
    fn a_launchers_set_arguments_are_the_recipes_effective_values() {
        const RECIPE: &str = "schema: 2\nname: x\nengine: sglang\nroles:\n  agg: {nodes: 1, workers: 1, gpus: 4, args: {tensor-parallel-size: 4, mem-fraction-static: 0.8}}\n";
        let launcher = |extra: &str| {
            format!(
                "git clone https://github.com/NVIDIA/srt-slurm.git s\ncp -rT \"$GITHUB_WORKSPACE/benchmarks/multi_node/srt-slurm-recipes/sglang/dsr1/b200-fp4\" recipes/sglang/dsr1-nv/b200-fp4\nARGS=(-f \"$CONFIG_FILE\")\n{extra}\nsrtctl apply \"${{ARGS[@]}}\"\n"
            )
        };
        let model = |extra: &str| {
            let t = MemTree::new()
                .with("configs/runners.yaml", "labels:\n  b200-multinode:\n  - b200-dgxc_0\n")
                .with("configs/nvidia-master.yaml", MULTINODE)
                .with("runners/launch_b200-dgxc.sh", launcher(extra))
                .with("benchmarks/multi_node/srt-slurm-recipes/sglang/dsr1/b200-fp4/1k1k.yaml", RECIPE)
                .with("runners/launch_gb300-nv.sh", "srtctl apply -f \"$CONFIG_FILE\"\n");
            LaunchTree::new(&t).all(&["dsr1-fp4-b200-dynamo-sglang".to_owned()]).remove(0)
        };
        let value = |c: &ConfigLaunch, name: &str| -> Vec<String> {
            c.settings.iter().filter(|s| s.name == name).map(|s| s.value.clone()).collect()
        };
        let plain = model("");
        assert_eq!(value(&plain, "--mem-fraction-static"), ["0.8"]);

        let set = model(
            "ARGS+=(--set roles.agg.args.mem-fraction-static=0.9)\nARGS+=(--set \"benchmark.env.RUN=$MODEL_PREFIX\")",
        );
        assert_eq!(value(&set, "--mem-fraction-static"), ["0.9"], "{:?}", set.unresolved);
        let recipe = set.recipes.iter().find(|r| r.exists).unwrap();
        let sets: Vec<(&str, &str)> = recipe.sets.iter().map(|s| (s.arg.as_str(), s.at.as_str())).collect();
        assert_eq!(
            sets,
            [
                ("roles.agg.args.mem-fraction-static=0.9", "runners/launch_b200-dgxc.sh:4"),
                ("benchmark.env.RUN=dsr1", "runners/launch_b200-dgxc.sh:5")
            ]
        );

        let unset = model("ARGS+=(--unset roles.agg.args.mem-fraction-static)");
        assert!(value(&unset, "--mem-fraction-static").is_empty(), "--unset removes it: {:?}", unset.settings);
        assert_eq!(value(&unset, "--tensor-parallel-size"), ["4"]);

        let maybe = model("if [[ -d /lustre ]]; then\n  ARGS+=(--set roles.agg.args.mem-fraction-static=0.9)\nfi");
        assert_eq!(value(&maybe, "--mem-fraction-static"), ["0.8"], "an undecided --set is not applied");
        assert!(maybe.unresolved.iter().any(|u| u.why == "undecided_set" && u.at == "runners/launch_b200-dgxc.sh:5"));

        let bad = model("ARGS+=(--set roles.agg.args.tensor-parallel-size[0]=8)");
        let named = bad.unresolved.iter().find(|u| u.why == "bad_override").unwrap();
        assert!(
            named.what.starts_with("runners/launch_b200-dgxc.sh:4: --set roles.agg.args.tensor-parallel-size[0]=8: "),
            "{named:?}"
        );
        assert!(value(&bad, "--mem-fraction-static").is_empty(), "no settings from a recipe srtctl would refuse");
    }
}
