//! Choosing and checking the one SRT recipe variant a multinode benchmark point runs
//! (spec 50 §3). InferenceX trusts `CONFIG_FILE=…` blindly; sweepgate selects exactly one
//! variant and proves it runs what the point claims: ISL/OSL, concurrencies, topology,
//! per-role parallelism, speculative decoding, framework, precision, and the pool's SKU.

use std::collections::HashMap;
use std::fmt;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::domain::launch::RecipeSources;
use crate::domain::srt_recipe::overrides::{self, OverrideError};
use crate::domain::srt_recipe::{
    pos_of, Backend, Recipe, RecipeError, RecipeFacts, RecipeRef, Role, Selector, SingleNodePoint, Variant,
};
use crate::repo::Tree;
use crate::yaml::{self, Pos};

/// One worker side of a multinode matrix row (spec 20 §3.4, §5.3).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PointWorker {
    pub num_worker: i64,
    pub tp: i64,
    #[serde(default = "one")]
    pub pp: i64,
    /// Prefill context parallelism: the GPU count is `tp × pp × pcp-size` (spec 20 §5.6).
    #[serde(default = "one")]
    pub pcp_size: i64,
    pub ep: i64,
    pub dp_attn: bool,
    #[serde(default)]
    pub additional_settings: Vec<String>,
}

fn one() -> i64 {
    1
}

/// A multinode matrix row as the generator emits it (fixed-seq-len or agentic). Other row keys
/// (image, runner, exp-name, eval fields, …) are not needed here and are ignored.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Point {
    pub framework: String,
    pub precision: String,
    /// Absent on agentic rows.
    pub isl: Option<i64>,
    pub osl: Option<i64>,
    pub spec_decoding: String,
    pub conc: Vec<i64>,
    #[serde(default)]
    pub disagg: bool,
    pub prefill: PointWorker,
    pub decode: PointWorker,
    pub image: Option<String>,
}

impl Point {
    /// Reads a row; a single-node row (no `prefill`/`decode`, scalar `conc`) is refused.
    pub fn from_json(row: &serde_json::Value) -> Result<Point, SelectError> {
        // An aggregated multinode row (decision TD3) runs its `worker` as the aggregated role:
        // the shape of an aggregated disagg=false row, `prefill` that worker and no decode side.
        if let (Some(worker), None) = (row.get("worker"), row.get("prefill")) {
            let mut row = row.clone();
            row["prefill"] = worker.clone();
            row["decode"] = serde_json::json!({"num-worker": 0, "tp": 1, "ep": 1, "dp-attn": false});
            return Point::deserialize(&row).map_err(|e| SelectError::BadPoint(e.to_string()));
        }
        Point::deserialize(row).map_err(|e| SelectError::BadPoint(e.to_string()))
    }

    /// The `CONFIG_FILE=<path>[:selector]` setting (prefill side first, then decode).
    pub fn config_file(&self) -> Result<RecipeRef, SelectError> {
        let mut found: Vec<&str> = self
            .prefill
            .additional_settings
            .iter()
            .chain(&self.decode.additional_settings)
            .filter_map(|s| s.strip_prefix("CONFIG_FILE="))
            .collect();
        found.dedup();
        match found.as_slice() {
            [one] => RecipeRef::parse(one.trim()).map_err(SelectError::Recipe),
            [] => Err(SelectError::NoConfigFile),
            many => Err(SelectError::BadPoint(format!("the row names several recipes: {}", many.join(", ")))),
        }
    }
}

/// How the point's concurrency list must relate to the recipe's (spec 50 §12 Q5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConcurrencyRule {
    /// The two sets are equal: srtctl runs the recipe's list, so anything else misreports.
    #[default]
    Equal,
    /// Every point value is in the recipe's list.
    Subset,
}

impl std::str::FromStr for ConcurrencyRule {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "equal" => Ok(ConcurrencyRule::Equal),
            "subset" => Ok(ConcurrencyRule::Subset),
            other => Err(format!("unknown concurrency rule '{other}' (expected 'equal' or 'subset')")),
        }
    }
}

/// One way a variant disagrees with a point.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Mismatch {
    /// The point field (`isl`, `prefill.tp`, `conc`, …), or `recipe` for a recipe that
    /// contradicts itself.
    pub field: String,
    /// The point's (or, for `pool.*` fields, the pool's) value; empty when the recipe
    /// contradicts itself.
    pub point: String,
    pub recipe: String,
    /// Where the recipe's evidence is (dotted path) and its position.
    pub evidence: String,
    pub pos: Option<Pos>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.point.is_empty() {
            write!(f, "{}: {} ({}", self.field, self.recipe, self.evidence)?;
        } else {
            let holder = if self.field.starts_with("pool.") { "pool" } else { "point" };
            let (field, point, recipe, evidence) = (&self.field, &self.point, &self.recipe, &self.evidence);
            write!(f, "{field}: the {holder} has {point}, the recipe has {recipe} ({evidence}")?;
        }
        match self.pos {
            Some(pos) => write!(f, " at line {})", pos.line),
            None => f.write_str(")"),
        }
    }
}

/// Why no single variant could be chosen.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SelectError {
    #[error(transparent)]
    Recipe(#[from] RecipeError),
    #[error("not a multinode matrix row: {0}")]
    BadPoint(String),
    /// A multinode row that names no recipe (Check 18 judges only rows that name one).
    #[error("not a multinode matrix row: the row has no CONFIG_FILE=… in additional-settings")]
    NoConfigFile,
    #[error("{file}: selector '{selector}' is ambiguous: it yields {} variants ({}); a point needs exactly one, e.g. '{}'", candidates.len(), candidates.join(", "), candidates.first().map_or("", String::as_str))]
    Ambiguous { file: String, selector: String, candidates: Vec<String> },
    #[error("{file}:{selector}: the variant has a 'sweep' section, which srtctl expands into several jobs; sweepgate dispatches one point as one job: resolve the sweep into override_* variants")]
    Sweep { file: String, selector: String },
    #[error("{}: the variant does not match the point:\n  {}", with_selector(file, selector), join(mismatches))]
    Mismatch { file: String, selector: String, mismatches: Vec<Mismatch> },
    #[error("{file}: no variant matches the point; candidates:\n  {}", candidates.iter().map(|(s, why)| format!("{s}: {why}")).collect::<Vec<_>>().join("\n  "))]
    NoMatch { file: String, candidates: Vec<(String, Rejection)> },
    #[error("{file}: {} variants match the point ({}); name one with CONFIG_FILE=<path>:<selector>", candidates.len(), candidates.join(", "))]
    SeveralMatch { file: String, candidates: Vec<String> },
    /// A single-node `srt-recipe` row no variant serves (decision TD6).
    #[error("{file}: no variant serves the row ({point}){}", unreadable.as_ref().map_or(String::new(), |e| format!("; a variant cannot be read: {e}")))]
    NotServed { file: String, point: String, unreadable: Option<Box<RecipeError>> },
}

/// Why one candidate variant of a multi-variant file was not chosen.
#[derive(Debug, Clone, PartialEq)]
pub enum Rejection {
    Sweep,
    Recipe(RecipeError),
    /// The variant's first mismatch with the point, in the order of [`check`].
    Mismatch(Mismatch),
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::Sweep => f.write_str("has a 'sweep' section"),
            Rejection::Recipe(e) => write!(f, "{e}"),
            Rejection::Mismatch(m) => write!(f, "{m}"),
        }
    }
}

/// `path:selector`, or `path` alone for a plain file (its variant has no selector).
pub fn with_selector(path: &str, selector: &str) -> String {
    if selector.is_empty() {
        path.to_owned()
    } else {
        format!("{path}:{selector}")
    }
}

fn join(mismatches: &[Mismatch]) -> String {
    mismatches.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n  ")
}

/// The variant a point runs, with its facts.
#[derive(Debug, Clone, PartialEq)]
pub struct Selected {
    pub variant: Variant,
    pub facts: RecipeFacts,
}

/// What a recipe must match on the pool that runs it (spec 50 §3): implemented by the
/// dispatcher's pool profile, so that selection stays domain logic without depending on it.
pub trait TargetPool: fmt::Debug {
    fn name(&self) -> &str;
    /// The `resources.gpu_type` a recipe must declare.
    fn sku(&self) -> &str;
    fn gpus_per_node(&self) -> u32;
    /// Whether a recipe's `model.path` resolves on this pool.
    fn knows_model(&self, path: &str) -> bool;
}

/// What the check compares against besides the point.
#[derive(Debug, Clone, Copy, Default)]
pub struct Checks<'a> {
    pub pool: Option<&'a dyn TargetPool>,
    pub concurrency: ConcurrencyRule,
}

/// Selects exactly one variant of `recipe` for `point` (spec 50 §3 "Selection"): the
/// selector's variant when given, else the single variant that matches.
pub fn select(
    recipe: &Recipe,
    selector: Option<&Selector>,
    point: &Point,
    checks: Checks<'_>,
) -> Result<Selected, SelectError> {
    Candidates::new(recipe, selector)?.select(point, checks)
}

/// The variants one `CONFIG_FILE` reference can run, resolved and read once, so that many
/// points naming the same recipe only pay for the comparison.
#[derive(Debug, Clone)]
pub struct Candidates {
    file: String,
    /// The selector text when the point names one on a multi-variant file.
    explicit: Option<String>,
    variants: Vec<(Variant, Result<RecipeFacts, RecipeError>)>,
}

impl Candidates {
    pub fn new(recipe: &Recipe, selector: Option<&Selector>) -> Result<Candidates, SelectError> {
        let variants = recipe.resolve(selector)?.variants;
        let explicit = selector.filter(|_| recipe.is_multi_variant()).map(ToString::to_string);
        let variants = variants
            .into_iter()
            .map(|v| {
                let facts = RecipeFacts::read(&v.config, &recipe.file);
                (v, facts)
            })
            .collect();
        Ok(Candidates { file: recipe.file.clone(), explicit, variants })
    }

    /// The one variant that runs `point`, or why there is not exactly one.
    pub fn select(&self, point: &Point, checks: Checks<'_>) -> Result<Selected, SelectError> {
        let file = || self.file.clone();
        let must_be_single = self.explicit.is_some() || self.variants.len() == 1 && self.variants[0].0.suffix.is_none();
        if must_be_single {
            let [(variant, facts)] = self.variants.as_slice() else {
                return Err(SelectError::Ambiguous {
                    file: file(),
                    selector: self.explicit.clone().unwrap_or_default(),
                    candidates: self.variants.iter().map(|(v, _)| v.selector.clone()).collect(),
                });
            };
            if variant.has_sweep() {
                return Err(SelectError::Sweep { file: file(), selector: variant.selector.clone() });
            }
            let facts = facts.as_ref().map_err(|e| SelectError::Recipe(e.clone()))?;
            let mismatches = check(point, facts, variant, checks);
            if !mismatches.is_empty() {
                return Err(SelectError::Mismatch { file: file(), selector: variant.selector.clone(), mismatches });
            }
            return Ok(Selected { variant: variant.clone(), facts: facts.clone() });
        }
        let mut matches = Vec::new();
        let mut rejected = Vec::new();
        for (variant, facts) in &self.variants {
            let why = match facts {
                _ if variant.has_sweep() => Some(Rejection::Sweep),
                Err(e) => Some(Rejection::Recipe(e.clone())),
                Ok(facts) => check(point, facts, variant, checks).into_iter().next().map(Rejection::Mismatch),
            };
            match (why, facts) {
                (Some(why), _) => rejected.push((variant.selector.clone(), why)),
                (None, Ok(facts)) => matches.push((variant, facts)),
                (None, Err(_)) => {}
            }
        }
        match matches.as_slice() {
            [(variant, facts)] => Ok(Selected { variant: (*variant).clone(), facts: (*facts).clone() }),
            [] => Err(SelectError::NoMatch { file: file(), candidates: rejected }),
            _ => Err(SelectError::SeveralMatch {
                file: file(),
                candidates: matches.iter().map(|(v, _)| v.selector.clone()).collect(),
            }),
        }
    }
}

/// Every way `variant` disagrees with `point`, in the order of spec 50 §3's table.
pub fn check(point: &Point, facts: &RecipeFacts, variant: &Variant, checks: Checks<'_>) -> Vec<Mismatch> {
    let config = &variant.config;
    let mut out = Vec::new();
    let mut push = |field: &str, point: String, recipe: String, path: &[&str]| {
        out.push(Mismatch {
            field: field.to_owned(),
            point,
            recipe,
            evidence: path.join("."),
            pos: pos_of(config, path),
        });
    };
    let show = |v: Option<i64>| v.map_or("none".to_owned(), |v| v.to_string());
    // A custom benchmark that does not pin its sequence lengths runs what the launcher passes it.
    let custom = facts.benchmark_type == "custom";
    for (field, wanted, found) in [("isl", point.isl, facts.isl), ("osl", point.osl, facts.osl)] {
        if wanted.is_some() && wanted != found && !(custom && found.is_none()) {
            push(field, show(wanted), show(found), &["benchmark", field]);
        }
    }
    // A custom benchmark that does not pin its concurrency runs what the launcher passes it.
    let conc_pinned = facts.concurrencies.is_some() || facts.benchmark_type != "custom";
    let conc_ok = match &facts.concurrencies {
        None => !conc_pinned,
        Some(recipe) => {
            let subset = point.conc.iter().all(|c| recipe.contains(c));
            match checks.concurrency {
                ConcurrencyRule::Subset => subset,
                ConcurrencyRule::Equal => subset && recipe.iter().all(|c| point.conc.contains(c)),
            }
        }
    };
    if !conc_ok {
        let recipe = facts.concurrencies.as_ref().map_or("none".to_owned(), |c| format!("{c:?}"));
        push("conc", format!("{:?}", point.conc), recipe, &["benchmark", "concurrencies"]);
    }
    for issue in facts.topology_issues() {
        push("recipe", String::new(), issue, &["resources"]);
    }
    if point.disagg != facts.is_disaggregated() {
        let mode = |d: bool| if d { "disaggregated" } else { "aggregated" }.to_owned();
        push("disagg", mode(point.disagg), mode(facts.is_disaggregated()), &["resources"]);
    }
    let roles: &[(&str, &PointWorker, Role)] = if facts.is_disaggregated() {
        &[("prefill", &point.prefill, Role::Prefill), ("decode", &point.decode, Role::Decode)]
    } else {
        &[("prefill", &point.prefill, Role::Agg)]
    };
    if !facts.is_disaggregated() && point.decode.num_worker != 0 {
        push(
            "decode.num-worker",
            point.decode.num_worker.to_string(),
            "an aggregated recipe (0)".into(),
            &["resources"],
        );
    }
    let engine_path = format!("{}_config", facts.backend.as_str());
    for (side, worker, role) in roles {
        let workers_key = match role {
            Role::Prefill => "prefill_workers",
            Role::Decode => "decode_workers",
            Role::Agg => "agg_workers",
        };
        if worker.num_worker != facts.workers(*role) {
            push(
                &format!("{side}.num-worker"),
                worker.num_worker.to_string(),
                facts.workers(*role).to_string(),
                &["resources", workers_key],
            );
        }
        let gpus_per_worker = facts.gpus_per_worker(*role);
        let engine_at = ["backend", engine_path.as_str(), role.config_key()];
        let Some(engine) = facts.engine(*role) else {
            if facts.backend != Backend::Mocker {
                push(&format!("{side}.tp"), worker.tp.to_string(), "no engine config for this role".into(), &engine_at);
            }
            continue;
        };
        if engine.gpus() != gpus_per_worker {
            let detail = format!(
                "{side} workers get {gpus_per_worker} GPUs from resources but the engine flags use {}",
                engine.gpus()
            );
            push("recipe", String::new(), detail, &["resources"]);
        }
        // InferenceX writes a vLLM DEP worker both as its GPU count (tp 8) and as its literal
        // tensor-parallel size (tp 1, ep 8); either is accepted (decision R5).
        let point_tp = worker.tp * worker.pp.max(1) * worker.pcp_size.max(1);
        if point_tp != engine.gpus() && point_tp != engine.tp * engine.pp {
            let recipe = format!("tp {} x pp {} x dp {} = {} GPUs", engine.tp, engine.pp, engine.dp, engine.gpus());
            push(&format!("{side}.tp"), point_tp.to_string(), recipe, &engine_at);
        }
        if engine.ep != worker.ep {
            push(&format!("{side}.ep"), worker.ep.to_string(), engine.ep.to_string(), &engine_at);
        }
        if engine.dp_attention != worker.dp_attn {
            push(&format!("{side}.dp-attn"), worker.dp_attn.to_string(), engine.dp_attention.to_string(), &engine_at);
        }
    }
    let recipe_spec =
        [Role::Prefill, Role::Decode, Role::Agg].iter().any(|r| facts.engine(*r).is_some_and(|e| e.spec_decoding));
    if (point.spec_decoding != "none") != recipe_spec {
        let recipe = if recipe_spec { "speculative decoding" } else { "no speculative decoding" };
        push("spec-decoding", point.spec_decoding.clone(), recipe.into(), &["backend", engine_path.as_str()]);
    }
    if !facts.runs_framework(&point.framework) {
        let recipe = format!("backend {}", facts.engines.join(", "));
        push("framework", point.framework.clone(), recipe, &["backend", "type"]);
    }
    if let Some(precision) = &facts.precision {
        if normalize_precision(precision) != normalize_precision(&point.precision) {
            push("precision", point.precision.clone(), precision.clone(), &["model", "precision"]);
        }
    }
    if let Some(pool) = checks.pool {
        let gpu_type = facts.gpu_type.clone().unwrap_or_else(|| "none".into());
        if !gpu_type.eq_ignore_ascii_case(pool.sku()) {
            push("pool.sku", pool.sku().to_owned(), gpu_type, &["resources", "gpu_type"]);
        }
        if facts.gpus_per_node != i64::from(pool.gpus_per_node()) {
            push(
                "pool.gpus_per_node",
                pool.gpus_per_node().to_string(),
                facts.gpus_per_node.to_string(),
                &["resources", "gpus_per_node"],
            );
        }
        if let Some(model) = &facts.model_path {
            if !pool.knows_model(model) {
                push(
                    "pool.models",
                    format!("no model alias '{model}' (pool '{}')", pool.name()),
                    format!("model.path '{model}'"),
                    &["model", "path"],
                );
            }
        }
    }
    out
}

/// `fp4` ≈ `nvfp4` ≈ `mxfp4`; otherwise case-insensitive equality.
fn normalize_precision(p: &str) -> String {
    let lower = p.trim().to_ascii_lowercase();
    match lower.as_str() {
        "nvfp4" | "mxfp4" => "fp4".into(),
        _ => lower,
    }
}

/// The recipe variant a matrix row runs, found in a repository (provenance: spec 50 §11).
#[derive(Debug, Clone, PartialEq)]
pub struct RowRecipe {
    /// The row's `CONFIG_FILE` path without its selector, as srtctl reads it (`recipes/….yaml`).
    pub reference: String,
    /// The recipe's path in the repository.
    pub path: String,
    /// sha256 of the recipe file's bytes.
    pub sha256: String,
    /// What reading the file warned about (duplicate keys, read as srtctl reads them).
    pub warnings: Vec<String>,
    pub selected: Selected,
}

/// One recipe file as the book keeps it.
struct LoadedRecipe {
    path: String,
    sha256: String,
    warnings: Vec<String>,
    candidates: Candidates,
}

/// A repository's SRT recipes as rows reference them, each file read, parsed and resolved
/// once, so planning hundreds of points pays for each recipe file once. Which file a
/// `CONFIG_FILE` names is the launch model's answer ([`RecipeSources`], decision LM12).
pub struct RecipeBook<'t> {
    tree: &'t dyn Tree,
    sources: RecipeSources,
    /// Keyed by path and selector: the file and its variants, or why not.
    files: HashMap<String, Result<LoadedRecipe, RecipeLookupError>>,
}

/// Why a row's recipe could not be found or read in the repository.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RecipeLookupError {
    #[error("CONFIG_FILE={0}: no multi-node master-config entry runs this recipe")]
    NotLaunched(String),
    #[error("CONFIG_FILE={0}: the runner launcher does not decide where this recipe is read from (`sweepgate launch` shows why)")]
    Unresolved(String),
    #[error("CONFIG_FILE={reference} is read from the srt-slurm checkout {checkout} the runner launcher clones, which the repository does not hold")]
    External { reference: String, checkout: String },
    #[error("{path}: not in the repository (CONFIG_FILE={reference})")]
    Missing { path: String, reference: String },
    #[error("{0}")]
    Repo(String),
    #[error(transparent)]
    Select(#[from] SelectError),
    /// A launcher `--set` srtctl would refuse (decision TD9).
    #[error(transparent)]
    Override(#[from] OverrideError),
}

impl<'t> RecipeBook<'t> {
    pub fn new(tree: &'t dyn Tree, sources: RecipeSources) -> RecipeBook<'t> {
        RecipeBook { tree, sources, files: HashMap::new() }
    }

    /// The one variant `row` (a multinode matrix row) runs, checked against the row.
    pub fn select_row(&mut self, row: &serde_json::Value, checks: Checks<'_>) -> Result<RowRecipe, RecipeLookupError> {
        let point = Point::from_json(row)?;
        let reference = point.config_file()?;
        let selector = reference.selector.as_ref();
        let key = format!("{}\0{}", reference.path, selector.map(ToString::to_string).unwrap_or_default());
        let (tree, sources) = (self.tree, &self.sources);
        let loaded = self.files.entry(key).or_insert_with(|| load_recipe(tree, sources, &reference));
        let loaded = loaded.as_ref().map_err(Clone::clone)?;
        let selected = loaded.candidates.select(&point, checks)?;
        Ok(RowRecipe {
            reference: reference.path.clone(),
            path: loaded.path.clone(),
            sha256: loaded.sha256.clone(),
            warnings: loaded.warnings.clone(),
            selected,
        })
    }
}

impl RecipeBook<'_> {
    /// The one variant a single-node `srt-recipe` row runs (decision TD6): the variant that
    /// serves its TP, EP, concurrency and KV band, as Check 18 pairs them
    /// (`RecipeFacts::serves`); a `sweep` variant never runs one point.
    pub fn select_single_row(&mut self, row: &serde_json::Value) -> Result<RowRecipe, RecipeLookupError> {
        let bad = |what: &str| SelectError::BadPoint(format!("a single-node srt-recipe row needs {what}"));
        let written = row.get("srt-recipe").and_then(serde_json::Value::as_str).ok_or_else(|| bad("`srt-recipe`"))?;
        let int = |k: &str| row.get(k).and_then(serde_json::Value::as_i64);
        let point = SingleNodePoint {
            tp: int("tp").ok_or_else(|| bad("an integer `tp`"))?,
            ep: int("ep").unwrap_or(1),
            conc: int("conc").ok_or_else(|| bad("an integer `conc`"))?,
            kv_offloading: row.get("kv-offloading").and_then(serde_json::Value::as_str).unwrap_or("none").to_owned(),
        };
        let reference = RecipeRef::parse(written.trim()).map_err(SelectError::Recipe)?;
        let (tree, sources) = (self.tree, &self.sources);
        let key = format!("{}\0", reference.path);
        let loaded = self.files.entry(key).or_insert_with(|| load_recipe(tree, sources, &reference));
        let loaded = loaded.as_ref().map_err(Clone::clone)?;
        let mut unreadable = None;
        let mut serving = Vec::new();
        for (variant, facts) in &loaded.candidates.variants {
            match facts {
                Err(e) => unreadable = unreadable.or_else(|| Some(Box::new(e.clone()))),
                Ok(facts) if !variant.has_sweep() && facts.serves(&point) => serving.push((variant, facts)),
                Ok(_) => {}
            }
        }
        // Two variants at the point's TP (a TP8 worker and a DEP8 one) differ in DP attention.
        if serving.len() > 1 {
            if let Some(dp_attn) = row.get("dp-attn").and_then(serde_json::Value::as_bool) {
                serving.retain(|(_, f)| f.engine(Role::Agg).is_some_and(|e| e.dp_attention == dp_attn));
            }
        }
        let file = loaded.path.clone();
        let selected = match serving.as_slice() {
            [(variant, facts)] => Selected { variant: (*variant).clone(), facts: (*facts).clone() },
            [] => {
                let shown = format!(
                    "tp {} ep {} conc {} kv-offloading {}",
                    point.tp, point.ep, point.conc, point.kv_offloading
                );
                return Err(SelectError::NotServed { file, point: shown, unreadable }.into());
            }
            many => {
                let candidates = many.iter().map(|(v, _)| v.selector.clone()).collect();
                return Err(SelectError::SeveralMatch { file, candidates }.into());
            }
        };
        Ok(RowRecipe {
            reference: reference.path.clone(),
            path: loaded.path.clone(),
            sha256: loaded.sha256.clone(),
            warnings: loaded.warnings.clone(),
            selected,
        })
    }
}

/// Reads, parses and resolves the recipe `reference` names, from the file the launch model
/// says the launcher reads.
fn load_recipe(
    tree: &dyn Tree,
    sources: &RecipeSources,
    reference: &RecipeRef,
) -> Result<LoadedRecipe, RecipeLookupError> {
    let shown = reference.path.clone();
    let source = sources.source(&shown).ok_or_else(|| RecipeLookupError::NotLaunched(shown.clone()))?;
    if let Some(checkout) = &source.external {
        return Err(RecipeLookupError::External { reference: shown, checkout: checkout.clone() });
    }
    if source.path.is_empty() {
        return Err(RecipeLookupError::Unresolved(shown));
    }
    let path = source.path.clone();
    let bytes = tree
        .read(&path)
        .map_err(|e| RecipeLookupError::Repo(e.to_string()))?
        .ok_or_else(|| RecipeLookupError::Missing { path: path.clone(), reference: shown })?;
    let text = yaml::text_of(&bytes).map_err(|e| SelectError::Recipe(RecipeError::Yaml(e.in_file(&path))))?;
    let mut recipe = Recipe::parse(text, &path).map_err(SelectError::Recipe)?;
    // The launcher's `--set`s are the recipe's effective values (decision TD9).
    let sets = overrides::parse_sets(source.sets.iter().map(|s| (s.unset, s.arg.as_str(), s.at.as_str())))?;
    overrides::apply(&mut recipe.root, &sets)?;
    let candidates = Candidates::new(&recipe, reference.selector.as_ref())?;
    let warnings = recipe.warnings.iter().map(ToString::to_string).collect();
    Ok(LoadedRecipe { path, sha256: hex::encode(Sha256::digest(&bytes)), warnings, candidates })
}

#[cfg(test)]
mod tests;
