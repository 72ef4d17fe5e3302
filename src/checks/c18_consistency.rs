//! Check 18 — Recipe/image/sweep consistency (spec 30 Check 18, ARCHITECTURE decisions 9-10,
//! docs/decisions.md V3-V5). Sub-items, in the report's order:
//! (a) the affected configs' search spaces generate at head (and at base when they exist there);
//! (b)-(d) each multinode point that names a recipe runs exactly one variant of it
//!     (`domain::srt`, spec 50 §3), and that variant agrees with the point:
//! (b) its benchmark: concurrency list (equal sets) and ISL/OSL;
//! (c) its roles and engine: per-role TP/EP/DP-attention and worker counts, disaggregation,
//!     speculative decoding, framework, precision;
//! (d) its GPU counts: `resources` is a valid topology and gives each worker as many GPUs as
//!     its engine flags use;
//! (e) the image resolves by digest (collector's registry lookup) and equals a registry
//!     `model.container` of the selected variant;
//! (f) every edited config is named by an appended `perf-changelog.yaml` entry;
//! (g) every point of the published curve that the head removes is dominated or bracketed
//!     under the head frontier (interactivity plane, no extrapolation);
//! (h) re-tune deltas per concurrency, informational.
//! A proven inconsistency FAILs, and so does a sub-item that cannot be decided because evidence
//! the collector gathers is missing (decision FC1, superseding V3): the row names the fact and
//! what a maintainer must open. Only (h) and a recipe (b)-(e) do not compare (one that lives
//! in the srt-slurm checkout the runner launcher clones, as the launch model reads it; Check 3
//! judges its settings when the collector fetched it, decision EX4) WARN, as informational.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::c03_upstream_recipe::show_concurrencies;
use super::c06_upstream_image::canonical_image;
use super::{reason, Context, Outcome, Reason, Status};
use crate::domain::launch::RecipeSources;
use crate::domain::master_config::{self, SrtRecipeRow};
use crate::domain::srt::{
    with_selector, Checks, ConcurrencyRule, RecipeBook, RecipeLookupError, Rejection, SelectError,
};
use crate::domain::srt_recipe::{FactVariant, Recipe, Role, SingleNodePoint};
use crate::evidence::{Evidence, Fact, ALL_SERIES};
use crate::matrix::Row;
use crate::pr::affected::{affected_configs, all_configs, changelog_keys, configs_in};
use crate::pr::configs::AffectedConfig;
use crate::pr::curves::{recipe_of, run_curves, scenario_of, text, Curve, MeasuredPoint, UnreadableArtifact};
use crate::pr::generated::{has_config, rows_by_config, LoadError};
use crate::pr::reach::affected_reach;
use crate::pr::sweep_runs::qualifying_run;
use crate::pr::Side;
use crate::results::pareto::{removed_point_coverage, retune_deltas, Point};

/// What a finding says about its sub-item.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A proven inconsistency.
    Fail,
    /// Evidence the collector gathers is missing or unreadable: the sub-item cannot be decided,
    /// which blocks (fail closed).
    Missing,
    /// A fact not compared for this config shape (a recipe of the srt-slurm checkout, EX4):
    /// informational, a human reviews it.
    NotGathered,
}

/// One sub-item's finding.
struct Finding {
    sub: char,
    kind: Kind,
    /// A reason of `checks/reasons.toml` (decision ZH1).
    text: Value,
    /// A curve of an affected config that cannot be read (`kind: curve_unreadable`, rendered by
    /// the catalog from its config, run and artifacts).
    unreadable: Option<Value>,
}

#[derive(Default)]
struct Findings {
    items: Vec<Finding>,
    /// Sub-items that were actually assessed (for the PASS summary).
    assessed: BTreeSet<char>,
    /// What (b)-(d) matched for single-node srt-recipe rows, per recipe file.
    recipes: Vec<Value>,
    deltas: Vec<Value>,
    /// (g) published points that are not the PR's to remove, counted with why (decision RV3).
    left_out: Vec<Value>,
}

impl Findings {
    fn push(&mut self, sub: char, kind: Kind, text: Reason) {
        self.items.push(Finding { sub, kind, text: text.into(), unreadable: None });
    }
    fn fail(&mut self, sub: char, text: Reason) {
        self.push(sub, Kind::Fail, text);
    }
    fn missing(&mut self, sub: char, text: Reason) {
        self.push(sub, Kind::Missing, text);
    }
    fn not_gathered(&mut self, sub: char, text: Reason) {
        self.push(sub, Kind::NotGathered, text);
    }
    /// (g) cannot be verified for `config`: its curve of run `run` cannot be read (the named
    /// artifacts), or the run holds no readable curve of it. Unverifiable (g) FAILs (blocking).
    fn curve_unreadable(&mut self, config: &str, run: u64, artifacts: &[UnreadableArtifact]) {
        let artifacts: Vec<Value> = artifacts.iter().map(|u| u.reason.clone().into()).collect();
        let detail =
            json!({"sub": "g", "kind": "curve_unreadable", "config": config, "run": run, "artifacts": artifacts});
        self.items.push(Finding { sub: 'g', kind: Kind::Fail, text: Value::Null, unreadable: Some(detail) });
    }
}

/// An error text of a lower layer, quoted as code: without its closing period, which the
/// catalog's sentence brings (as [`Reason::error`] sets it).
fn quoted(error: impl std::fmt::Display) -> String {
    let text = error.to_string();
    let text = text.trim_end();
    text.strip_suffix('.').unwrap_or(text).to_owned()
}

// --- recipes (spec 50 §3, decision V4) --------------------------------------------------------

/// The sub-item a recipe mismatch belongs to: the benchmark the variant runs (b), its roles and
/// engine (c), or its `resources` contradicting srtctl's topology rules or its own engine flags
/// (d; `domain::srt` reports those under the field `recipe`).
fn sub_item(field: &str) -> char {
    match field {
        "isl" | "osl" | "conc" => 'b',
        "recipe" => 'd',
        _ => 'c',
    }
}

/// A container the recipe pins by registry reference (not a pool alias such as `dynamo-sglang`,
/// nor a squash file path).
fn is_registry_image(container: &str) -> bool {
    !container.starts_with('/') && !container.starts_with("./") && container.contains('/') && container.contains(':')
}

/// (b)-(e) for every multinode row that names a recipe: the one variant `domain::srt` selects for
/// the row, or why there is none, read where the launch model says the launcher reads it
/// (decision LM12). A recipe of the srt-slurm checkout is informational (EX4); a recipe the launcher reads from the repository that is not there blocks.
fn check_recipes(book: &mut Result<RecipeBook<'_>, Reason>, key: &str, rows: &[Row], image: &str, out: &mut Findings) {
    let checks = Checks { pool: None, concurrency: ConcurrencyRule::Equal };
    // Single-node rows carry no `prefill` block and run no recipe.
    for row in rows.iter().filter(|r| r.contains_key("prefill")) {
        let book = match book {
            Ok(book) => book,
            Err(e) => {
                out.missing('b', reason("recipe_sources_unknown").arg("config", key).arg("error", e.clone()));
                continue;
            }
        };
        let found = match book.select_row(&Value::Object(row.clone()), checks) {
            Ok(found) => found,
            Err(RecipeLookupError::Select(SelectError::NoConfigFile)) => continue,
            Err(RecipeLookupError::Select(e)) => {
                recipe_failure(key, e, out);
                continue;
            }
            Err(e @ (RecipeLookupError::Repo(_) | RecipeLookupError::Override(_))) => {
                out.assessed.insert('b');
                out.fail('b', reason("recipe_unreadable").arg("config", key).arg("error", quoted(e)));
                continue;
            }
            Err(RecipeLookupError::External { reference, checkout }) => {
                out.not_gathered(
                    'b',
                    reason("recipe_in_checkout").arg("config", key).arg("recipe", reference).arg("checkout", checkout),
                );
                continue;
            }
            Err(
                e @ (RecipeLookupError::NotLaunched(_)
                | RecipeLookupError::Unresolved(_)
                | RecipeLookupError::Missing { .. }),
            ) => {
                out.missing('b', reason("recipe_not_found").arg("config", key).arg("error", quoted(e)));
                continue;
            }
        };
        out.assessed.extend(['b', 'c', 'd']);
        let container = found.selected.facts.container.as_deref().filter(|c| is_registry_image(c));
        if let Some(container) = container.filter(|c| canonical_image(c) != canonical_image(image)) {
            let at = with_selector(&found.path, &found.selected.variant.selector);
            out.fail(
                'e',
                reason("recipe_container_differs")
                    .arg("config", key)
                    .arg("at", at)
                    .arg("container", container)
                    .arg("image", image),
            );
        }
    }
}

/// A recipe whose variant was compared and disagrees FAILs each disagreeing sub-item; a recipe
/// that cannot be resolved to one variant FAILs (b).
fn recipe_failure(key: &str, error: SelectError, out: &mut Findings) {
    match error {
        SelectError::Mismatch { file, selector, mismatches } => {
            out.assessed.extend(['b', 'c', 'd']);
            let at = with_selector(&file, &selector);
            for m in mismatches {
                out.fail(
                    sub_item(&m.field),
                    reason("recipe_mismatch").arg("config", key).arg("at", at.as_str()).arg("error", quoted(m)),
                );
            }
        }
        SelectError::NoMatch { file, candidates } => {
            out.assessed.extend(['b', 'c', 'd']);
            // Every candidate's first mismatch, grouped by the sub-item it belongs to.
            let mut by_sub: BTreeMap<char, Vec<String>> = BTreeMap::new();
            for (selector, why) in candidates {
                let sub = match &why {
                    Rejection::Mismatch(m) => sub_item(&m.field),
                    Rejection::Sweep | Rejection::Recipe(_) => 'b',
                };
                by_sub.entry(sub).or_default().push(format!("{selector}: {}", quoted(why)));
            }
            for (sub, whys) in by_sub {
                out.fail(
                    sub,
                    reason("recipe_no_variant").arg("config", key).arg("file", file.as_str()).arg("errors", whys),
                );
            }
        }
        other => {
            out.assessed.insert('b');
            out.fail('b', reason("recipe_ambiguous").arg("config", key).arg("error", quoted(other)));
        }
    }
}

/// One recipe file's variants and the master rows that name it, with their concurrencies.
struct RecipeRows {
    variants: Vec<FactVariant>,
    rows: Vec<(SrtRecipeRow, Vec<i64>)>,
}

/// (b)-(d) for the single-node rows of the newer master schema that name their srt-slurm
/// recipe (`srt-recipe:`): every concurrency of the row is run by exactly one schema-2 variant
/// in the row's KV band (b), that variant runs the row's TP/EP (c), and its `gpus` (override or
/// `gpus_per_node`) is what its engine uses (d); a variant in the row's band whose concurrency
/// no master conc list holds FAILs (b) too (equal sets). Returns, per recipe, what matched.
fn check_srt_rows(cx: &Context, config: &AffectedConfig, out: &mut Findings) -> Vec<Value> {
    let key = &config.key;
    let Some((root, _)) = cx.master_root(Side::Head, &config.file) else { return Vec::new() };
    let Some(node) = root.as_ref().as_ref().ok().and_then(|root| root.get(key)) else { return Vec::new() };
    // An invalid entry is (a)'s finding.
    let Ok(master) = master_config::validate_entry(key, &config.file, node.pos, node) else { return Vec::new() };
    let mut by_recipe: BTreeMap<String, RecipeRows> = BTreeMap::new();
    for row in master.srt_recipe_rows() {
        let candidates = row.candidate_paths(&config.file);
        let Some((path, recipe)) = candidates.iter().find_map(|p| cx.head_recipe(p).map(|r| (p.clone(), r))) else {
            out.missing(
                'b',
                reason("srt_recipe_missing")
                    .arg("config", key.as_str())
                    .arg("at", row.at.as_str())
                    .arg("path", candidates[0].as_str()),
            );
            continue;
        };
        out.assessed.extend(['b', 'c', 'd']);
        if !by_recipe.contains_key(&path) {
            match recipe.as_ref().as_ref().map_err(Clone::clone).and_then(Recipe::fact_variants) {
                Ok(variants) => {
                    by_recipe.insert(path.clone(), RecipeRows { variants, rows: Vec::new() });
                }
                Err(e) => {
                    out.fail(
                        'b',
                        reason("srt_recipe_unreadable")
                            .arg("config", key.as_str())
                            .arg("path", path.as_str())
                            .arg("error", quoted(e)),
                    );
                    continue;
                }
            }
        }
        let concs = row.concurrencies();
        if let Some(recipe) = by_recipe.get_mut(&path) {
            recipe.rows.push((row, concs));
        }
    }
    let mut matched = Vec::new();
    for (path, RecipeRows { variants, rows }) in &by_recipe {
        let file = path.rsplit('/').next().unwrap_or(path);
        let mut parts: Vec<Value> = Vec::new();
        for (row, concs) in rows {
            let label = row.label();
            let mut gpus = BTreeSet::new();
            let failures = out.items.len();
            for &conc in concs {
                let point =
                    SingleNodePoint { tp: row.tp, ep: row.ep, conc, kv_offloading: row.kv_offloading.to_owned() };
                let at_conc: Vec<&FactVariant> = variants.iter().filter(|v| v.runs(conc, row.kv_offloading)).collect();
                let serving: Vec<&&FactVariant> = at_conc.iter().filter(|v| v.serves(&point)).collect();
                // A finding about this row's point: the config, the row's label and the concurrency.
                let at_point = |kind: &str| {
                    reason(kind).arg("config", key.as_str()).arg("label", label.as_str()).arg("conc", conc)
                };
                match serving.as_slice() {
                    [] if at_conc.is_empty() => out.fail(
                        'b',
                        at_point("srt_conc_not_run")
                            .arg("at", row.at.as_str())
                            .arg("path", path.as_str())
                            .arg("band", row.kv_offloading),
                    ),
                    [] => {
                        let runs: Vec<Value> = at_conc
                            .iter()
                            .map(|v| {
                                let (tp, ep) = v.tp_ep();
                                json!({"variant": v.variant.selector, "tp": tp, "ep": ep})
                            })
                            .collect();
                        out.fail(
                            'c',
                            at_point("srt_parallelism_differs").arg("runs", runs).arg("tp", row.tp).arg("ep", row.ep),
                        );
                    }
                    [one] => {
                        let have = one.facts.gpus_per_worker(Role::Agg);
                        let engine = one.facts.engine(Role::Agg).map_or(row.tp, |e| e.gpus());
                        if have != engine || have > one.facts.gpus_per_node {
                            out.fail(
                                'd',
                                at_point("srt_gpus_differ")
                                    .arg("at", format!("{path}:{}", one.variant.selector))
                                    .arg("have", have)
                                    .arg("engine", engine)
                                    .arg("per_node", one.facts.gpus_per_node),
                            );
                        }
                        gpus.insert(have);
                    }
                    many => {
                        let names: Vec<&str> = many.iter().map(|v| v.variant.selector.as_str()).collect();
                        out.fail('b', at_point("srt_many_variants").arg("path", path.as_str()).arg("variants", names));
                    }
                }
            }
            if out.items.len() == failures {
                parts.push(
                    reason("srt_row_matched")
                        .arg("label", label.as_str())
                        .arg("concs", show_concurrencies(&concs.iter().copied().collect()))
                        .arg("gpus", gpus.iter().copied().collect::<Vec<_>>())
                        .into(),
                );
            }
        }
        // Equal sets: a variant in a row's band that no master conc list of that band holds.
        for v in variants {
            let (tp, ep) = v.tp_ep();
            let Some(&[conc]) = v.facts.concurrencies.as_deref() else { continue };
            let band: Vec<&(SrtRecipeRow, Vec<i64>)> =
                rows.iter().filter(|(r, _)| (r.tp, r.ep) == (tp, ep) && v.runs(conc, r.kv_offloading)).collect();
            if !band.is_empty() && !band.iter().any(|(_, concs)| concs.contains(&conc)) {
                out.fail(
                    'b',
                    reason("srt_variant_unlisted")
                        .arg("config", key.as_str())
                        .arg("label", band[0].0.label())
                        .arg("variant", v.variant.selector.as_str())
                        .arg("path", path.as_str())
                        .arg("conc", conc),
                );
            }
        }
        if !parts.is_empty() {
            matched.push(reason("srt_recipe_matched").arg("file", file).arg("rows", parts).into());
        }
    }
    matched
}

/// A registry answer about `config`'s image, quoted as code (decision ZH1).
fn image_reason(kind: &str, config: &AffectedConfig, error: &str) -> Reason {
    reason(kind).arg("config", config.key.as_str()).arg("image", config.image.as_str()).arg("error", quoted(error))
}

fn check_image(ev: &Evidence, config: &AffectedConfig, out: &mut Findings) {
    out.assessed.insert('e');
    // The lookup is keyed by the reference as written, or as a registry reads it (`#` → `/`).
    let digests = &ev.upstream.image_digests;
    let lookup = digests.get(&config.image).or_else(|| digests.get(&canonical_image(&config.image)));
    match lookup {
        Some(Fact::Ok(digest)) => {
            let well_formed = digest
                .strip_prefix("sha256:")
                .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
            let pinned = config.image.split_once('@').map(|(_, d)| d);
            if !well_formed || pinned.is_some_and(|p| p != digest) {
                out.fail(
                    'e',
                    reason("image_digest_differs")
                        .arg("config", config.key.as_str())
                        .arg("image", config.image.as_str())
                        .arg("digest", digest.as_str()),
                );
            }
        }
        Some(fact @ Fact::Unavailable(reason)) if fact.is_not_found() => {
            out.fail('e', image_reason("image_not_found", config, reason))
        }
        // A transport error or an unreadable answer proves nothing about the image.
        Some(Fact::Unavailable(reason)) => out.missing('e', image_reason("image_lookup_failed", config, reason)),
        None => out.missing(
            'e',
            reason("image_lookup_absent").arg("config", config.key.as_str()).arg("image", config.image.as_str()),
        ),
    }
}

// --- curves (g, h) ----------------------------------------------------------------------------

/// The published run each affected config's series is compared with (its own entry, else
/// [`ALL_SERIES`]): `Ok(None)` for a new series. A lookup that is absent for a config that
/// exists at base, or unavailable, leaves (g) unverified.
fn published_runs(
    ev: &Evidence,
    affected: &[AffectedConfig],
    out: &mut Findings,
) -> BTreeMap<u64, Vec<AffectedConfig>> {
    let mut by_run: BTreeMap<u64, Vec<AffectedConfig>> = BTreeMap::new();
    for config in affected {
        let runs = &ev.upstream.published_runs;
        match runs.get(&config.key).or_else(|| runs.get(ALL_SERIES)) {
            Some(Fact::Ok(Some(run))) => by_run.entry(run.run_id).or_default().push(config.clone()),
            Some(Fact::Ok(None)) => {}
            Some(Fact::Unavailable(error)) => out.missing(
                'g',
                reason("published_run_unknown").arg("config", config.key.as_str()).arg("error", quoted(error)),
            ),
            None if has_config(&ev.base, &config.key) => {
                out.missing('g', reason("published_run_absent").arg("config", config.key.as_str()))
            }
            None => {} // a config new at the head: nothing published to remove
        }
    }
    by_run
}

/// The points the head's master configs generate, as (scenario, recipe identity, conc); a
/// multinode row's identity is its scenario and conc (its roles have no single tp).
type GeneratedPoints = BTreeSet<(String, Option<String>, i64)>;

fn generated_points(rows: &[Row]) -> GeneratedPoints {
    let mut out = GeneratedPoints::new();
    for row in rows {
        let int = |k: &str| row.get(k).and_then(serde_json::Value::as_i64).unwrap_or(0);
        let scenario = match row.get("scenario-type").and_then(serde_json::Value::as_str) {
            Some(kind) => kind.to_owned(),
            None => scenario_of(int("isl"), int("osl")),
        };
        match row.get("conc") {
            Some(serde_json::Value::Array(concs)) => {
                out.extend(concs.iter().filter_map(serde_json::Value::as_i64).map(|c| (scenario.clone(), None, c)));
            }
            conc => {
                let get = |k: &str| text(row.get(k));
                let recipe = recipe_of(&get("tp"), &get("ep"), &get("dp-attn"), &get("spec-decoding"));
                let conc = conc.and_then(serde_json::Value::as_i64).unwrap_or(0);
                out.insert((scenario, Some(recipe), conc));
            }
        }
    }
    out
}

/// Whether the head still generates a published point (spec 40 §3.5: removed means no longer
/// in the head's generated matrix; points the PR merely did not re-measure are not removed).
fn still_generated(generated: &GeneratedPoints, scenario: &str, point: &MeasuredPoint) -> bool {
    generated.contains(&(scenario.to_owned(), Some(point.recipe.clone()), point.conc))
        || generated.contains(&(scenario.to_owned(), None, point.conc))
}

/// Who generated a published point at base (decision RV3): the series key, scenario, ISL/OSL,
/// spec-decoding arm and parallelism of its recipe identity, and its conc.
#[derive(Debug, PartialEq)]
enum Owner {
    /// A config under review generates it at base: it is removed if the head no longer does.
    Reviewed,
    /// Only another config of the same series generates it at base (a sibling MTP/non-MTP
    /// config, another config of the model): not this PR's to remove.
    Other(String),
    /// Its scenario is generated by no base config of the series: retired before the PR.
    RetiredScenario,
    /// The base generates its scenario, but not this point, with any config.
    Unattributable,
}

/// The points each base config of a curve's series generates, or `None` when the base's
/// matrix cannot be generated for them (then every published point is attributed to the
/// configs under review, as before: fail closed).
fn base_owners(
    ev: &Evidence,
    base_configs: Option<&[AffectedConfig]>,
    b: &Curve,
) -> Option<Vec<(String, GeneratedPoints)>> {
    let series: Vec<AffectedConfig> = base_configs?.iter().filter(|c| b.belongs_to(c)).cloned().collect();
    let per_config = rows_by_config(&ev.base, &series).ok()?;
    per_config.into_iter().map(|(key, rows)| rows.ok().map(|rows| (key, generated_points(&rows)))).collect()
}

fn owner_of(
    owners: &[(String, GeneratedPoints)],
    reviewed: &[AffectedConfig],
    scenario: &str,
    p: &MeasuredPoint,
) -> Owner {
    let generating: Vec<&str> =
        owners.iter().filter(|(_, g)| still_generated(g, scenario, p)).map(|(k, _)| k.as_str()).collect();
    if generating.iter().any(|k| reviewed.iter().any(|c| c.key == *k)) {
        Owner::Reviewed
    } else if let Some(other) = generating.first() {
        Owner::Other((*other).to_owned())
    } else if owners.iter().all(|(_, g)| g.iter().all(|(s, _, _)| s != scenario)) {
        Owner::RetiredScenario
    } else {
        Owner::Unattributable
    }
}

/// The row's count of published points left out of (g), by why.
fn left_out_reasons(published: u64, scenario: &str, left: &BTreeMap<String, Vec<&MeasuredPoint>>) -> Vec<Value> {
    left.iter()
        .map(|(why, points)| {
            let r = match why.split_once(':') {
                Some(("other", config)) => reason("left_out_other_config").arg("config", config),
                _ if why == "retired" => reason("left_out_retired_scenario"),
                _ => reason("left_out_unattributable")
                    .arg("points", points.iter().map(|p| format!("{} c{}", p.recipe, p.conc)).collect::<Vec<_>>()),
            };
            r.arg("count", points.len()).arg("published", published).arg("scenario", scenario).into()
        })
        .collect()
}

fn check_curves(cx: &Context, affected: &[AffectedConfig], out: &mut Findings) {
    let ev = cx.evidence;
    let by_run = published_runs(ev, affected, out);
    if by_run.is_empty() {
        return;
    }
    let Some(run) = qualifying_run(ev) else {
        out.missing('g', reason("head_run_absent"));
        return;
    };
    // Every head config of a published series generates its points, affected or not.
    let head_configs = match all_configs(cx) {
        Ok(all) => all,
        Err(error) => return out.missing('g', reason("head_matrix_unknown").arg("error", quoted(error))),
    };
    let head = run_curves(ev, run.benchmark_run_id);
    // The in-PR run holds only the PR's configs: any unreadable aggregate may hide a head point.
    if !head.unreadable.is_empty() {
        let keys: Vec<&str> = affected.iter().map(|c| c.key.as_str()).collect();
        out.curve_unreadable(&keys.join(", "), run.benchmark_run_id, &head.unreadable);
    }
    out.assessed.extend(['g', 'h']);
    let base_configs = configs_in(cx, Side::Base).ok();
    for (published, configs) in by_run {
        let base = run_curves(ev, published);
        let mut attributed = BTreeSet::new();
        for config in &configs {
            let unreadable = base.unreadable_of(config);
            attributed.extend(unreadable.iter().map(|u| u.path.clone()));
            // "No points" is never coverage: a published series whose curve cannot be read
            // leaves its removed points unknown.
            if !unreadable.is_empty() || !base.curves.iter().any(|c| c.belongs_to(config)) {
                out.curve_unreadable(&config.key, published, &unreadable);
            }
        }
        for artifact in base.unreadable.iter().filter(|u| !attributed.contains(&u.path)) {
            out.missing('g', reason("artifact_unreadable").arg("error", artifact.reason.clone()));
        }
        for b in base.curves.iter().filter(|c| configs.iter().any(|a| c.belongs_to(a))) {
            let series: Vec<AffectedConfig> = head_configs.iter().filter(|c| b.belongs_to(c)).cloned().collect();
            let generated = match rows_by_config(&ev.head, &series) {
                Ok(per_config) => {
                    let mut rows = Vec::new();
                    for (key, generated) in per_config {
                        match generated {
                            Ok(r) => rows.extend(r),
                            Err(e) => out.missing(
                                'g',
                                reason("head_space_not_generated").arg("config", key.as_str()).arg("error", quoted(e)),
                            ),
                        }
                    }
                    generated_points(&rows)
                }
                Err(error) => {
                    out.missing('g', reason("head_matrix_unknown").arg("error", quoted(error)));
                    continue;
                }
            };
            let h = head.curves.iter().find(|h| b.same_series(h));
            let head_points: Vec<Point> =
                h.map(|h| h.points.iter().map(|p| p.interactivity).collect()).unwrap_or_default();
            // A point is the PR's to remove only when a config under review generated it at base.
            let owners = base_owners(ev, base_configs.as_deref(), b);
            let mut left: BTreeMap<String, Vec<&MeasuredPoint>> = BTreeMap::new();
            let mut removed: Vec<&MeasuredPoint> = Vec::new();
            for p in b.points.iter().filter(|p| !still_generated(&generated, &b.key.scenario, p)) {
                match owners.as_deref().map(|o| owner_of(o, affected, &b.key.scenario, p)) {
                    None | Some(Owner::Reviewed) => removed.push(p),
                    Some(Owner::Other(config)) => left.entry(format!("other:{config}")).or_default().push(p),
                    Some(Owner::RetiredScenario) => left.entry("retired".into()).or_default().push(p),
                    Some(Owner::Unattributable) => left.entry("unattributable".into()).or_default().push(p),
                }
            }
            out.left_out.extend(left_out_reasons(published, &b.key.scenario, &left));
            let removed_xy: Vec<Point> = removed.iter().map(|p| p.interactivity).collect();
            for finding in removed_point_coverage(&removed_xy, &head_points).iter().filter(|f| !f.covered) {
                let p = removed[finding.removed];
                let why = match &finding.coverage {
                    crate::results::pareto::RemovedCoverage::AboveSegment { head_y, .. } => {
                        reason("removed_above_head").arg("head_y", format!("{head_y:.1}"))
                    }
                    crate::results::pareto::RemovedCoverage::InvalidEvidence => reason("removed_invalid"),
                    _ => reason("removed_not_bracketed"),
                };
                out.fail(
                    'g',
                    reason("removed_point_uncovered")
                        .arg("recipe", p.recipe.as_str())
                        .arg("conc", p.conc)
                        .arg("published", published)
                        .arg("tput", format!("{:.1}", finding.point.y))
                        .arg("interactivity", format!("{:.1}", finding.point.x))
                        .arg("head_run", run.run_id)
                        .arg("why", why),
                );
            }
            if let Some(h) = h {
                let keyed =
                    |c: &Curve| -> Vec<(i64, Point)> { c.points.iter().map(|p| (p.conc, p.interactivity)).collect() };
                for d in retune_deltas(&keyed(b), &keyed(h)) {
                    // A signed percentage sweepgate formats itself: the catalog prints it as is (`safe`).
                    let pct = |v: Option<f64>| v.map_or(Value::Null, |v| format!("{v:+.1}%").into());
                    out.deltas.push(
                        reason("retune_delta")
                            .arg("conc", d.key)
                            .arg("tput", pct(d.tput_pct))
                            .arg("interactivity", pct(d.intvty_pct))
                            .into(),
                    );
                }
            }
        }
    }
}

/// The base's master file has an entry under the config's key. Read from the file's top-level
/// keys, not from the validated configs: an entry that no longer validates at base is (a)'s
/// finding, never a config that "did not exist".
fn written_at_base(cx: &Context, config: &AffectedConfig) -> bool {
    let Some((root, _)) = cx.master_root(Side::Base, &config.file) else {
        return has_config(&cx.evidence.base, &config.key);
    };
    match root.as_ref().as_ref().ok().and_then(|root| root.as_map()) {
        Some(entries) => entries.iter().any(|(key, _)| key.key_text().is_some_and(|k| k == config.key.as_str())),
        None => true,
    }
}

/// `(a)–(f)` for a run of three or more consecutive sub-items, else `(a)(e)`.
fn letters(subs: impl Iterator<Item = char>) -> String {
    let subs: Vec<char> = subs.collect();
    let mut out = String::new();
    let mut i = 0;
    while i < subs.len() {
        let mut j = i;
        while j + 1 < subs.len() && subs[j + 1] as u32 == subs[j] as u32 + 1 {
            j += 1;
        }
        if j - i >= 2 {
            out.push_str(&format!("({})–({})", subs[i], subs[j]));
        } else {
            subs[i..=j].iter().for_each(|s| out.push_str(&format!("({s})")));
        }
        i = j + 1;
    }
    out
}

pub fn check(cx: &Context) -> Outcome {
    let ev = cx.evidence;
    let affected = match affected_configs(cx) {
        Ok(a) => a,
        Err(error) => {
            return Outcome::fail("unverifiable").arg("reason", reason("affected_unknown").arg("error", error))
        }
    };
    if affected.is_empty() {
        return Outcome::na("no_change");
    }
    let mut out = Findings::default();
    out.assessed.insert('a');
    let mut recipes =
        affected_reach(cx).map(|r| RecipeBook::new(&ev.head, RecipeSources::of(r.iter().map(|c| &c.launch))));
    match rows_by_config(&ev.head, &affected) {
        Err(LoadError::Missing(error)) => {
            out.missing('a', reason("inputs_incomplete").arg("tree", "head").arg("error", quoted(error)))
        }
        Err(LoadError::Invalid(error)) => {
            out.fail('a', reason("masters_do_not_load").arg("tree", "head").arg("error", quoted(error)))
        }
        Ok(per_config) => {
            for ((key, rows), config) in per_config.iter().zip(&affected) {
                match rows {
                    Err(e) => out.fail(
                        'a',
                        reason("space_not_generated")
                            .arg("tree", "head")
                            .arg("config", key.as_str())
                            .arg("error", quoted(e)),
                    ),
                    Ok(rows) => check_recipes(&mut recipes, key, rows, &config.image, &mut out),
                }
            }
        }
    }
    let existing: Vec<AffectedConfig> = affected.iter().filter(|c| written_at_base(cx, c)).cloned().collect();
    if !existing.is_empty() {
        match rows_by_config(&ev.base, &existing) {
            Err(LoadError::Missing(error)) => {
                out.missing('a', reason("inputs_incomplete").arg("tree", "base").arg("error", quoted(error)))
            }
            Err(LoadError::Invalid(error)) => {
                out.fail('a', reason("masters_do_not_load").arg("tree", "base").arg("error", quoted(error)))
            }
            Ok(per_config) => {
                for (key, rows) in per_config {
                    if let Err(e) = rows {
                        out.fail(
                            'a',
                            reason("space_not_generated")
                                .arg("tree", "base")
                                .arg("config", key.as_str())
                                .arg("error", quoted(e)),
                        );
                    }
                }
            }
        }
    }
    for config in &affected {
        let matched = check_srt_rows(cx, config, &mut out);
        out.recipes.extend(matched);
        check_image(ev, config, &mut out);
    }
    out.assessed.insert('f');
    let named = changelog_keys(cx, &affected);
    let unnamed: Vec<&str> = affected.iter().filter(|c| !named.contains(&c.key)).map(|c| c.key.as_str()).collect();
    if !unnamed.is_empty() {
        out.fail('f', reason("changelog_misses").arg("configs", unnamed));
    }
    check_curves(cx, &affected, &mut out);
    let render = |items: &[&Finding]| -> Vec<Value> {
        items
            .iter()
            .map(|f| f.unreadable.clone().unwrap_or_else(|| json!({"sub": f.sub.to_string(), "text": f.text})))
            .collect()
    };
    let of = |kind: Kind| -> Vec<&Finding> { out.items.iter().filter(|f| f.kind == kind).collect() };
    let (fails, missing, noted) = (of(Kind::Fail), of(Kind::Missing), of(Kind::NotGathered));
    let failed: BTreeSet<char> = out.items.iter().map(|f| f.sub).collect();
    // (h) is informational: the deltas report it.
    let passed = letters(out.assessed.iter().copied().filter(|s| !failed.contains(s) && *s != 'h'));
    let (status, key) = if !fails.is_empty() {
        (Status::Fail, "inconsistent")
    } else if !missing.is_empty() {
        (Status::Fail, "unverified")
    } else if !noted.is_empty() {
        (Status::Warn, "incomplete")
    } else {
        (Status::Pass, "consistent")
    };
    Outcome::new(status, key)
        .arg("fails", render(&fails))
        .arg("missing", render(&missing))
        .arg("noted", render(&noted))
        .arg("passed", passed)
        .arg("recipes", out.recipes)
        .arg("deltas", out.deltas)
        .arg("left_out", out.left_out)
        .arg("configs", affected.iter().map(|c| c.key.as_str()).collect::<Vec<_>>())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::checks::tests_support::assert_renders;
    use crate::checks::tests_support::{english, evidence, run, with_change};
    use crate::pr::curves::fixtures::add_fixed_point;

    const RUNNERS: &str = "labels:\n  b200:\n    - b200-nb_0\n  gb200:\n    - gb200-nv_0\n";
    const SINGLE: &str = "dsr1-fp4-b200-sglang:\n  image: lmsysorg/sglang:v0.5.9\n  model: deepseek-ai/DeepSeek-R1\n  model-prefix: dsr1\n  runner: b200\n  precision: fp4\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-list: [4, 16] }\n";
    const MULTI: &str = "dsr1-fp4-gb200-dynamo-sglang:\n  image: lmsysorg/sglang:v0.5.9-cu130\n  model: nvidia/DeepSeek-R1-FP4\n  model-prefix: dsr1\n  runner: gb200\n  precision: fp4\n  framework: dynamo-sglang\n  multinode: true\n  disagg: true\n  kv-p2p-transfer: nixl\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - conc-list: [64, 128]\n        prefill:\n          num-worker: 1\n          tp: 4\n          ep: 4\n          dp-attn: true\n          additional-settings:\n          - \"CONFIG_FILE=recipes/sglang/demo/disagg.yaml:zip_override_hi[1]\"\n        decode:\n          num-worker: 1\n          tp: 8\n          ep: 8\n          dp-attn: true\n";
    const RECIPE: &str = "base:\n  name: demo\n  model: { path: dsr1, container: dynamo-sglang, precision: fp4 }\n  resources: { gpu_type: gb200, gpus_per_node: 4, prefill_nodes: 1, prefill_workers: 1, decode_nodes: 2, decode_workers: 1 }\n  backend:\n    type: sglang\n    sglang_config:\n      prefill: { tensor-parallel-size: 4, expert-parallel-size: 4, enable-dp-attention: true }\n      decode: { tensor-parallel-size: 8, expert-parallel-size: 8, enable-dp-attention: true }\n  benchmark: { type: sa-bench, isl: 8192, osl: 1024, concurrencies: \"4x8\" }\nzip_override_hi:\n  benchmark:\n    concurrencies: [\"16x32\", \"64x128\"]\n";
    const CHANGELOG: &str = "@@ -1,1 +1,4 @@\n+- config-keys:\n+  - dsr1-fp4-*\n+  description: tune\n+  pr-link: https://github.com/example/bench/pull/42\n";

    fn pr(master: &str, master_line: u32) -> Evidence {
        let mut e = with_change(
            evidence(),
            "configs/nvidia-master.yaml",
            &format!("@@ -{master_line},1 +{master_line},1 @@\n+  x: 1\n"),
        );
        e = with_change(e, "perf-changelog.yaml", CHANGELOG);
        e.head.insert("configs/nvidia-master.yaml", master);
        e.head.insert("configs/amd-master.yaml", "{}\n");
        e.head.insert("configs/runners.yaml", RUNNERS);
        e.head.insert("benchmarks/multi_node/srt-slurm-recipes/sglang/demo/disagg.yaml", RECIPE);
        for image in ["lmsysorg/sglang:v0.5.9", "lmsysorg/sglang:v0.5.9-cu130"] {
            e.upstream.image_digests.insert(image.into(), Fact::Ok(format!("sha256:{}", "a".repeat(64))));
        }
        e
    }

    fn sub_items(o: &Outcome, list: &str) -> Vec<String> {
        o.message.args[list].as_array().unwrap().iter().map(|f| f["sub"].as_str().unwrap().to_owned()).collect()
    }

    #[test]
    fn consistent_single_and_multinode_configs_pass() {
        for (master, line) in [(SINGLE, 14), (MULTI, 19)] {
            let o = check(&Context::new(&pr(master, line)));
            assert_eq!(o.status, Status::Pass, "{o:?}");
        }
        let o = check(&Context::new(&pr(MULTI, 19)));
        assert_eq!(o.message.args["passed"], "(a)–(f)");
    }

    fn with_recipe(master: &str, recipe: &str) -> Outcome {
        let mut e = pr(master, 19);
        e.head.insert("benchmarks/multi_node/srt-slurm-recipes/sglang/demo/disagg.yaml", recipe);
        check(&Context::new(&e))
    }

    #[test]
    fn recipe_mismatches_fail_with_their_letter() {
        let pass = with_recipe(MULTI, RECIPE);
        assert_eq!((pass.status, pass.message.args["passed"].as_str()), (Status::Pass, Some("(a)–(f)")));
        let cases = [
            (MULTI.replace("[64, 128]", "[64, 256]"), RECIPE.to_owned(), "b"),
            (MULTI.replace("          tp: 8\n", "          tp: 4\n"), RECIPE.to_owned(), "c"),
            // Two prefill nodes give the one prefill worker 8 GPUs, but its engine flags use 4.
            (MULTI.to_owned(), RECIPE.replace("prefill_nodes: 1,", "prefill_nodes: 2,"), "d"),
            (MULTI.to_owned(), RECIPE.replace("container: dynamo-sglang", "container: lmsysorg/sglang:v0.5.8"), "e"),
            (MULTI.replace("zip_override_hi[1]", "zip_override_lo"), RECIPE.to_owned(), "b"),
        ];
        for (master, recipe, letter) in cases {
            let o = with_recipe(&master, &recipe);
            assert_eq!((o.status, sub_items(&o, "fails")), (Status::Fail, vec![letter.to_owned()]), "{o:?}");
            assert!(!o.message.args["passed"].as_str().unwrap().contains(&format!("({letter})")), "{o:?}");
        }
        let o = with_recipe(&MULTI.replace("          tp: 8\n", "          tp: 4\n"), RECIPE);
        let [text, _] = assert_renders(18, &o);
        assert!(
            text.contains("disagg.yaml:zip_override_hi[1]`): `decode.tp: the point has 4, the recipe has"),
            "{text}"
        );
    }

    #[test]
    fn without_a_selector_every_candidate_names_its_first_mismatch() {
        let master = MULTI.replace(":zip_override_hi[1]", "");
        assert_eq!(with_recipe(&master, RECIPE).status, Status::Pass, "zip_override_hi[1] is the only match");
        let o = with_recipe(&master.replace("[64, 128]", "[64, 256]"), RECIPE);
        assert_eq!(sub_items(&o, "fails"), ["b"]);
        let [text, _] = assert_renders(18, &o);
        assert!(text.contains("zip_override_hi[0]: conc:") && text.contains("zip_override_hi[1]: conc:"), "{text}");
        let twin = RECIPE.replace("[\"16x32\", \"64x128\"]", "[\"64x128\", \"64x128\"]");
        let o = with_recipe(&master, &twin);
        let [text, _] = assert_renders(18, &o);
        assert!(text.contains("2 variants match the point"), "{text}");
    }

    #[test]
    fn a_recipe_missing_from_the_repository_fails_and_one_of_the_srt_slurm_checkout_is_informational() {
        // Without a launcher that clones srt-slurm, `recipes/…` is the repository's recipe folder:
        // a file missing there cannot be compared, so (b) FAILs naming it.
        let gone = MULTI.replace("demo/disagg.yaml", "demo/gone.yaml");
        let o = with_recipe(&gone, RECIPE);
        assert_eq!((o.status, sub_items(&o, "missing")), (Status::Fail, vec!["b".to_owned()]), "{o:?}");
        assert!(assert_renders(18, &o)[0].contains("demo/gone.yaml: not in the repository"), "{o:?}");
        // The gb200 launcher clones srt-slurm and copies nothing over it: the recipe is the
        // checkout's, which (b) does not compare (informational).
        let mut e = pr(&gone, 19);
        e.head.insert(
            "runners/launch_gb200-nv.sh",
            "git clone --branch v1 https://github.com/NVIDIA/srt-slurm.git s\ncd s\nsrtctl apply -f \"$CONFIG_FILE\"\n",
        );
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.message.key.as_str()), (Status::Warn, "incomplete"), "{o:?}");
        assert_eq!(sub_items(&o, "noted"), ["b"]);
        assert!(sub_items(&o, "missing").is_empty());
        let [en, zh] = assert_renders(18, &o);
        assert!(en.contains("srt-slurm checkout `NVIDIA/srt-slurm@v1`"), "{en}");
        assert!(zh.contains("`NVIDIA/srt-slurm@v1`"), "{zh}");
        // Fetched by the collector (EX3), the checkout's recipe is Check 3's to judge; (b) stays
        // informational (`recipe_in_checkout`, decision LM12).
        let fetched = [("recipes/sglang/demo/gone.yaml".to_owned(), Fact::Ok(RECIPE.to_owned()))].into();
        e.upstream.checkouts.insert("NVIDIA/srt-slurm@v1".into(), fetched);
        let o = check(&Context::new(&e));
        assert_eq!((o.status, sub_items(&o, "noted")), (Status::Warn, vec!["b".to_owned()]), "{o:?}");
        assert!(sub_items(&o, "missing").is_empty() && sub_items(&o, "fails").is_empty(), "{o:?}");
    }

    #[test]
    fn generation_changelog_and_image_failures() {
        let o = check(&Context::new(&pr(&SINGLE.replace("conc-list: [4, 16]", "conc-list: []"), 14)));
        assert!(sub_items(&o, "fails").contains(&"a".to_owned()), "{o:?}");
        let mut e = pr(SINGLE, 14);
        e.files.retain(|f| f.filename != "perf-changelog.yaml");
        assert_eq!(sub_items(&check(&Context::new(&e)), "fails"), ["f"]);
        let mut e = pr(SINGLE, 14);
        e.upstream
            .image_digests
            .insert("lmsysorg/sglang:v0.5.9".into(), Fact::Unavailable("not found: manifest unknown".into()));
        assert_eq!(sub_items(&check(&Context::new(&e)), "fails"), ["e"]);
        e.upstream
            .image_digests
            .insert("lmsysorg/sglang:v0.5.9".into(), Fact::Unavailable("timed out after 10 s".into()));
        // A transport error proves nothing about the image, and leaves (e) undecided: blocking.
        let o = check(&Context::new(&e));
        assert_eq!((o.status, sub_items(&o, "missing")), (Status::Fail, vec!["e".to_owned()]), "{o:?}");
        e.upstream.image_digests.clear();
        let o = check(&Context::new(&e));
        assert_eq!((o.status, sub_items(&o, "missing")), (Status::Fail, vec!["e".to_owned()]));
    }

    #[test]
    fn registry_hash_path_images_are_looked_up_as_registries_read_them() {
        let image = "nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc5";
        let mut e = pr(&SINGLE.replace("lmsysorg/sglang:v0.5.9", image), 14);
        e.upstream.image_digests.clear();
        let digest = format!("sha256:{}", "c".repeat(64));
        e.upstream.image_digests.insert("nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc5".into(), Fact::Ok(digest));
        let o = check(&Context::new(&e));
        assert!(
            !sub_items(&o, "fails").contains(&"e".to_owned()) && !sub_items(&o, "missing").contains(&"e".to_owned()),
            "{o:?}"
        );
        let gone = Fact::Unavailable(format!("{} manifest unknown", crate::evidence::NOT_FOUND));
        e.upstream.image_digests.insert(image.into(), gone);
        assert!(sub_items(&check(&Context::new(&e)), "fails").contains(&"e".to_owned()));
    }

    /// One single-node config at base and head: published run 3 (tp8 c4, tp8 c16, tp4 c64),
    /// head run 7 (tp8 c4, tp8 c16).
    pub(crate) fn with_curves(removed_intvty: f64, removed_tput: f64) -> Evidence {
        let mut e = head_curve();
        // Published: tp8 c4 and c16, plus tp4 c64 that the base generates and the head no
        // longer does (the PR removed it).
        e.base.insert("configs/nvidia-master.yaml", BASE_WITH_TP4);
        add_fixed_point(&mut e, 3, 8, 4, 5.0, 120.0, 1000.0);
        add_fixed_point(&mut e, 3, 8, 16, 9.0, 90.0, 2000.0);
        add_fixed_point(&mut e, 3, 4, 64, 30.0, removed_intvty, removed_tput);
        e
    }

    /// The base of [`with_curves`]: SINGLE with the tp4 c64 search space the PR removes.
    const BASE_WITH_TP4: &str = "dsr1-fp4-b200-sglang:\n  image: lmsysorg/sglang:v0.5.9\n  model: deepseek-ai/DeepSeek-R1\n  model-prefix: dsr1\n  runner: b200\n  precision: fp4\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-list: [4, 16] }\n      - { tp: 4, conc-list: [64] }\n";

    #[test]
    fn published_points_the_pr_did_not_remove_are_left_out_and_counted() {
        // tp4 c64 is uncovered, but the base does not generate it: not the PR's to remove.
        let mut e = with_curves(76.3, 2600.0);
        e.base.insert("configs/nvidia-master.yaml", SINGLE);
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        let left = &o.message.args["left_out"][0];
        assert_eq!((&left["$reason"], &left["count"]), (&json!("left_out_unattributable"), &json!(1)), "{o:?}");
        let [en, zh] = assert_renders(18, &o);
        assert!(en.contains("(g) Published points left out, not the PR's to remove: 1 point(s) of run 3 in scenario 8k1k that no config generates at base, so none can be attributed to a config: `tp4 ep1 dpa:false spec:none c64`"), "{en}");
        assert!(zh.contains("无法归属到任何配置"), "{zh}");

        // Another config generated it at base (here one the head no longer has; an unchanged
        // sibling whose head still generates the point never reaches the attribution).
        let sibling = SINGLE
            .replace("dsr1-fp4-b200-sglang:", "dsr1-fp4-b200-sglang-tp4:")
            .replace("tp: 8, conc-list: [4, 16]", "tp: 4, conc-list: [64]");
        let mut e = with_curves(76.3, 2600.0);
        e.base.insert("configs/nvidia-master.yaml", format!("{SINGLE}{sibling}"));
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["left_out"][0]["config"], "dsr1-fp4-b200-sglang-tp4", "{o:?}");
        assert!(assert_renders(18, &o)[0].contains(
            "that at base only `dsr1-fp4-b200-sglang-tp4` generates, a config other than those under review"
        ));

        // A retired scenario: neither base nor head generates 1k1k any more.
        let mut e = with_curves(80.0, 1500.0);
        let rf = "dsr1_1k1k_fp4_sglang_tp8-ep1_conc4_b200-nv_0";
        let point = json!({
            "hw": "b200-nv", "conc": 4, "image": "lmsysorg/sglang:v0.5.8", "model": "deepseek-r1-fp4",
            "infmax_model_prefix": "dsr1", "framework": "sglang", "precision": "fp4", "spec_decoding": "none",
            "disagg": false, "recipe_fingerprint": "x", "isl": 1024, "osl": 1024, "is_multinode": false,
            "tput_per_gpu": 9000.0, "output_tput_per_gpu": 4500.0, "input_tput_per_gpu": 4500.0,
            "tp": 8, "ep": 1, "dp_attention": "false", "median_e2el": 1.0, "median_intvty": 300.0, "median_ttft": 0.1,
        });
        e.artifacts.insert(format!("3/bmk_{rf}/agg_{rf}.json"), point.to_string());
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["left_out"][0]["$reason"], "left_out_retired_scenario", "{o:?}");
        assert!(assert_renders(18, &o)[0]
            .contains("1 point(s) of run 3 in scenario 1k1k, which neither the base nor the head generates"));
    }

    /// The head run's curve (run 7) and published run 3, which holds no point yet.
    fn head_curve() -> Evidence {
        let mut e = pr(SINGLE, 14);
        e.base.insert("configs/nvidia-master.yaml", SINGLE);
        e.base.insert("configs/amd-master.yaml", "{}\n");
        e.base.insert("configs/runners.yaml", RUNNERS);
        let sha = e.pull_request.head_sha.clone();
        e.check_runs
            .insert(sha, Fact::Ok(vec![run("single-node 8k1k / x", "success", 7), run("eval / x", "success", 7)]));
        e.upstream.published_runs.insert(
            crate::evidence::ALL_SERIES.into(),
            Fact::Ok(Some(crate::evidence::PublishedRun { run_id: 3, pr: 0, source: "main".into(), merged_at: None })),
        );
        add_fixed_point(&mut e, 7, 8, 4, 4.0, 130.0, 1200.0);
        add_fixed_point(&mut e, 7, 8, 16, 8.0, 100.0, 2400.0);
        e
    }

    #[test]
    fn a_removed_point_left_of_the_head_frontier_fails_g() {
        // The report's shape: higher throughput at lower interactivity than any head point.
        let o = check(&Context::new(&with_curves(76.3, 2600.0)));
        assert_eq!((o.status, sub_items(&o, "fails")), (Status::Fail, vec!["g".to_owned()]));
        let [en, zh] = assert_renders(18, &o);
        assert!(en.contains("extrapolation is not allowed"), "{en}");
        assert!(en.contains("(h) Re-tune deltas: c4 +20.0% tput / +8.3% interactivity, c16"), "{en}");
        assert!(zh.contains("不允许外推") && zh.contains("c4 吞吐量 +20.0% / 交互性 +8.3%"), "{zh}");
    }

    #[test]
    fn a_published_curve_that_cannot_be_read_fails_g_naming_it() {
        // No readable point of the series in its published run: "no points" is not coverage.
        let mut e = head_curve();
        let o = check(&Context::new(&e));
        assert_eq!((o.status, sub_items(&o, "fails")), (Status::Fail, vec!["g".to_owned()]), "{o:?}");
        let finding = &o.message.args["fails"][0];
        assert_eq!(
            (&finding["kind"], &finding["config"], &finding["run"]),
            (&json!("curve_unreadable"), &json!("dsr1-fp4-b200-sglang"), &json!(3))
        );
        assert_eq!(finding["artifacts"], json!([]));
        // A result file in a shape the workflows do not upload is named.
        let rf = "dsr1_8k1k_fp4_sglang_tp4-ep1_conc64_b200-nv_0";
        e.artifacts.insert(format!("3/bmk_{rf}/{rf}.json"), "{}");
        let o = check(&Context::new(&e));
        let artifacts = o.message.args["fails"][0]["artifacts"].as_array().unwrap().clone();
        assert_eq!(artifacts.len(), 1, "{o:?}");
        assert_eq!(artifacts[0], json!({"$reason": "result_name_unknown", "path": format!("3/bmk_{rf}/{rf}.json")}));
        let [en, zh] = assert_renders(18, &o);
        assert!(en.contains("(g) the curve of `dsr1-fp4-b200-sglang` in run 3 cannot be read (`3/bmk_"), "{en}");
        assert!(zh.contains("运行 3 中 `dsr1-fp4-b200-sglang` 的曲线无法读取"), "{zh}");
        let result = crate::checks::CheckResult { id: 18, outcome: o.clone() };
        let headline = crate::checks::text::headline_text(&result, crate::checks::catalog::Lang::En);
        assert!(headline.starts_with("The curve of an affected config cannot be read"), "{headline}");
        // The head run's unreadable aggregate is named too.
        let mut e = with_curves(80.0, 1500.0);
        e.artifacts.insert(format!("7/bmk_{rf}/agg_{rf}.json"), "{not json");
        let o = check(&Context::new(&e));
        assert_eq!((o.status, &o.message.args["fails"][0]["run"]), (Status::Fail, &json!(7)), "{o:?}");
    }

    #[test]
    fn a_published_point_the_head_still_generates_is_not_removed() {
        // The append-only shape: the head run re-measures only some points, but the head's
        // master config still generates tp4 c64, so it is not removed (spec 40 §3.5).
        let mut e = with_curves(76.3, 2600.0);
        let head =
            SINGLE.replace("conc-list: [4, 16] }\n", "conc-list: [4, 16] }\n      - { tp: 4, conc-list: [64] }\n");
        e.head.insert("configs/nvidia-master.yaml", head);
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Pass, "{o:?}");
    }

    #[test]
    fn an_unknown_published_run_is_not_a_pass_and_a_new_series_has_no_base() {
        let mut e = with_curves(76.3, 2600.0);
        e.upstream.published_runs.insert(crate::evidence::ALL_SERIES.into(), Fact::Unavailable("HTTP 502".into()));
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "unverified"), "{o:?}");
        assert_eq!(sub_items(&o, "missing"), ["g"]);
        assert!(assert_renders(18, &o)[0].contains("could not be determined (`HTTP 502`)"), "{o:?}");
        e.upstream.published_runs.insert("dsr1-fp4-b200-sglang".into(), Fact::Ok(None));
        assert_eq!(check(&Context::new(&e)).status, Status::Pass, "the config's own entry wins over *");
    }

    #[test]
    fn a_dominated_removed_point_passes_g() {
        let o = check(&Context::new(&with_curves(80.0, 1500.0)));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["passed"], "(a)(e)–(g)");
    }

    #[test]
    fn an_existing_config_without_a_published_run_fails_unverified() {
        let mut e = with_curves(80.0, 1500.0);
        e.upstream.published_runs.clear();
        let o = check(&Context::new(&e));
        assert_eq!((o.status, sub_items(&o, "missing")), (Status::Fail, vec!["g".to_owned()]), "{o:?}");
    }

    #[test]
    fn missing_image_lookups_and_artifacts_fail_unverified() {
        let mut e = pr(SINGLE, 14);
        e.upstream.image_digests.insert("lmsysorg/sglang:v0.5.9".into(), Fact::Unavailable("HTTP 503".into()));
        let o = check(&Context::new(&e));
        assert_eq!(
            (o.status, o.message.key.as_str(), sub_items(&o, "missing")),
            (Status::Fail, "unverified", vec!["e".to_owned()])
        );
        e.upstream.image_digests.clear();
        assert_eq!(sub_items(&check(&Context::new(&e)), "missing"), ["e"], "no lookup at all");
        // A head-run artifact cannot be read: (g) cannot be decided, and the row names the file.
        let mut e = with_curves(80.0, 1500.0);
        let rf = "dsr1_fp4_b200_sglang_tp8_c32";
        e.artifacts.insert(format!("7/bmk_{rf}/agg_{rf}.json"), "{ truncated");
        let o = check(&Context::new(&e));
        assert_eq!((o.status, sub_items(&o, "fails")), (Status::Fail, vec!["g".to_owned()]), "{o:?}");
        let finding = &o.message.args["fails"][0];
        assert_eq!(finding["kind"], "curve_unreadable", "{o:?}");
        assert!(english(&finding["artifacts"][0]).contains(&format!("agg_{rf}.json")), "{o:?}");
    }

    /// A single-node agentic row of the newer master schema naming a schema-2 recipe.
    const SRT_MASTER: &str = "dsr1-fp4-mi355x-sglang:\n  image: lmsysorg/sglang:v0.5.9\n  model: org/m\n  model-prefix: dsr1\n  runner: cluster:mi355x\n  precision: fp4\n  framework: sglang\n  multinode: false\n  scenarios:\n    agentic-coding:\n    - dram-utilization: 0.5\n      search-space:\n      - { tp: 4, ep: 4, kv-offloading: dram, kv-offload-backend: { name: hicache }, conc-list: [10, 40], srt-recipe: benchmarks/single_node/srt-slurm-recipes/m/agentic.yaml }\n";
    const SRT_RECIPE: &str = "base:\n  schema: 2\n  name: m\n  resources: {gpu_type: mi355x, gpus_per_node: 8}\n  engine: sglang\n  roles:\n    agg: {nodes: 1, workers: 1, args: {tensor-parallel-size: 8}}\noverride_tp4_c10:\n  roles:\n    agg: {gpus: 4, args: {tensor-parallel-size: 4, expert-parallel-size: 4}}\n  benchmark: {env: {CONC: '10', KV_OFFLOADING: dram}}\noverride_tp4_c40:\n  roles:\n    agg: {gpus: 4, args: {tensor-parallel-size: 4, expert-parallel-size: 4}}\n  benchmark: {env: {CONC: '40', KV_OFFLOADING: dram}}\n";

    fn srt_pr(recipe: Option<&str>) -> Evidence {
        let mut e = pr(SRT_MASTER, 13);
        e.head.insert("configs/nvidia-master.yaml", SRT_MASTER);
        e.head.insert("configs/runners.yaml", "labels:\n  cluster:mi355x: [mi355x-amds_0]\nhardware:\n  cluster:mi355x:\n    available-cpu-dram-mib: 1000000\n    gpus-per-node: 8\n");
        if let Some(recipe) = recipe {
            e.head.insert("benchmarks/single_node/srt-slurm-recipes/m/agentic.yaml", recipe);
        }
        e
    }

    fn srt(recipe: &str) -> Outcome {
        check(&Context::new(&srt_pr(Some(recipe))))
    }

    #[test]
    fn single_node_srt_recipe_rows_match_their_variants() {
        let o = srt(SRT_RECIPE);
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert!(assert_renders(18, &o)[0].contains("(agentic.yaml: TP4/EP4 HiCache c10–c40 with gpus: 4)"), "{o:?}");
        assert_eq!(o.message.args["passed"], "(a)–(f)");
        let fails = |recipe: String| sub_items(&srt(&recipe), "fails");
        assert_eq!(fails(SRT_RECIPE.replace("CONC: '40'", "CONC: '44'")), ["b", "b"], "both directions of equal sets");
        assert_eq!(fails(SRT_RECIPE.replace("expert-parallel-size: 4", "expert-parallel-size: 1")), ["c", "c"]);
        assert_eq!(fails(SRT_RECIPE.replace("gpus: 4, ", "")), ["d", "d"]);
        let twice = SRT_RECIPE.to_owned() + "override_tp4_c40_again:\n  roles:\n    agg: {gpus: 4, args: {tensor-parallel-size: 4, expert-parallel-size: 4}}\n  benchmark: {env: {CONC: '40'}}\n";
        assert_eq!(fails(twice), ["b"], "two variants serving one point");
        let o = check(&Context::new(&srt_pr(None)));
        assert_eq!(
            (o.status, sub_items(&o, "missing")),
            (Status::Fail, vec!["b".to_owned()]),
            "a recipe in the repository that is absent: unverified, blocking"
        );
    }

    #[test]
    fn passed_sub_items_are_runs_of_letters() {
        assert_eq!(letters("abcdef".chars()), "(a)–(f)");
        assert_eq!(letters("aef".chars()), "(a)(e)(f)");
        assert_eq!(letters("acdeg".chars()), "(a)(c)–(e)(g)");
    }

    #[test]
    fn no_config_change_is_na() {
        assert_eq!(check(&Context::new(&evidence())).status, Status::NotApplicable);
    }
}
