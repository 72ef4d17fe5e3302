//! Check 18 — Recipe/image/sweep consistency (spec 30 Check 18, ARCHITECTURE decisions 9-10,
//! docs/decisions.md V3-V5). Sub-items, in the report's order:
//! (a) the affected configs' search spaces generate at head (and at base when they exist there);
//! (b) a multinode point's concurrency list equals its recipe variant's `benchmark.concurrencies`;
//! (c) per-role TP/EP/DP-attention and worker counts equal the recipe's engine config;
//! (d) a `gpus` override equals the recipe's `resources.gpus_per_node`;
//! (e) the image resolves by digest (collector's registry lookup) and equals a registry
//!     `model.container` of the recipe;
//! (f) every edited config is named by an appended `perf-changelog.yaml` entry;
//! (g) every point of the published curve that the head removes is dominated or bracketed
//!     under the head frontier (interactivity plane, no extrapolation);
//! (h) re-tune deltas per concurrency, informational.
//! A proven inconsistency FAILs; evidence the collector could not provide WARNs (V3).

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use super::affected::{affected_configs, changelog_keys, AffectedConfig};
use super::c01_in_pr_sweep::qualifying_run;
use super::curves::{run_curves, Curve};
use super::generated::{has_config, rows_by_config, LoadError};
use super::{Context, Outcome, Status};
use crate::evidence::{Evidence, Fact};
use crate::matrix::evals::conc_values;
use crate::matrix::Row;
use crate::results::pareto::{removed_point_coverage, retune_deltas, Point};
use crate::yaml;

/// One sub-item's finding: `fail` proves an inconsistency, otherwise it is missing evidence.
struct Finding {
    sub: char,
    fail: bool,
    text: String,
}

#[derive(Default)]
struct Findings {
    items: Vec<Finding>,
    /// Sub-items that were actually assessed (for the PASS summary).
    assessed: BTreeSet<char>,
    deltas: Vec<String>,
}

impl Findings {
    fn fail(&mut self, sub: char, text: String) {
        self.items.push(Finding { sub, fail: true, text });
    }
    fn missing(&mut self, sub: char, text: String) {
        self.items.push(Finding { sub, fail: false, text });
    }
}

// --- recipes (spec 50 §2) ---------------------------------------------------------------------

fn deep_merge(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                if v.is_null() {
                    b.remove(k);
                } else if let Some(slot) = b.get_mut(k) {
                    deep_merge(slot, v);
                } else {
                    b.insert(k.clone(), v.clone());
                }
            }
        }
        (slot, v) => *slot = v.clone(),
    }
}

/// Element `i` of every list leaf (length-1 lists broadcast); `Err` on inconsistent lengths.
fn zip_slice(v: &Value, i: usize) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), zip_slice(v, i))).collect()),
        Value::Array(items) if items.len() == 1 => items[0].clone(),
        Value::Array(items) => items.get(i).cloned().unwrap_or(Value::Null),
        other => other.clone(),
    }
}

fn zip_len(v: &Value) -> Result<usize, String> {
    let mut lens = BTreeSet::new();
    fn walk(v: &Value, lens: &mut BTreeSet<usize>) {
        match v {
            Value::Object(m) => m.values().for_each(|v| walk(v, lens)),
            Value::Array(items) if items.len() != 1 => {
                lens.insert(items.len());
            }
            _ => {}
        }
    }
    walk(v, &mut lens);
    match lens.len() {
        0 => Ok(1),
        1 if !lens.contains(&0) => Ok(lens.into_iter().next().unwrap_or(1)),
        _ => Err(format!("zip lists have different lengths {lens:?}")),
    }
}

/// The variants a `path[:selector]` names: `(name, resolved recipe)`.
fn variants(root: &Value, selector: Option<&str>) -> Result<Vec<(String, Value)>, String> {
    let Some(map) = root.as_object().filter(|m| m.contains_key("base")) else {
        return Ok(vec![("recipe".into(), root.clone())]);
    };
    let base = map.get("base").cloned().unwrap_or(Value::Null);
    let mut out = Vec::new();
    let mut keys: Vec<&String> = map.keys().filter(|k| k.starts_with("override_")).collect();
    keys.sort();
    let mut zips: Vec<&String> = map.keys().filter(|k| k.starts_with("zip_override_")).collect();
    zips.sort();
    if selector == Some("base") {
        return Ok(vec![("base".into(), base)]);
    }
    let (sel_key, sel_index) = match selector.and_then(|s| s.strip_suffix(']')).and_then(|s| s.split_once('[')) {
        Some((k, i)) => (Some(k), Some(i.parse::<usize>().map_err(|_| format!("bad selector index in {selector:?}"))?)),
        None => (selector, None),
    };
    for key in keys.into_iter().chain(zips) {
        if sel_key.is_some_and(|s| s != key.as_str()) {
            continue;
        }
        let section = &map[key.as_str()];
        let n = if key.starts_with("zip_") { zip_len(section).map_err(|e| format!("{key}: {e}"))? } else { 1 };
        for i in (0..n).filter(|i| sel_index.is_none_or(|s| s == *i)) {
            let mut merged = base.clone();
            deep_merge(&mut merged, &if key.starts_with("zip_") { zip_slice(section, i) } else { section.clone() });
            out.push((if key.starts_with("zip_") { format!("{key}[{i}]") } else { key.clone() }, merged));
        }
    }
    if out.is_empty() {
        return Err(format!("selector {:?} names no variant", selector.unwrap_or("")));
    }
    Ok(out)
}

fn concurrencies(recipe: &Value) -> BTreeSet<i64> {
    match recipe.pointer("/benchmark/concurrencies") {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_i64).collect(),
        Some(Value::String(s)) => s.split(['x', ',']).filter_map(|n| n.trim().parse().ok()).collect(),
        Some(v) => v.as_i64().into_iter().collect(),
        None => BTreeSet::new(),
    }
}

/// The engine config of one role (`prefill`/`decode`), for any backend.
fn engine<'v>(recipe: &'v Value, role: &str) -> Option<&'v Map<String, Value>> {
    let backend = recipe.get("backend")?.as_object()?;
    backend.iter().filter(|(k, _)| k.ends_with("_config")).find_map(|(_, cfg)| cfg.get(role)?.as_object())
}

fn first_int(m: &Map<String, Value>, keys: &[&str]) -> Option<i64> {
    keys.iter().find_map(|k| m.get(*k).and_then(|v| v.as_i64().or_else(|| v.as_str()?.parse().ok())))
}

/// Mismatches between a point's role and the recipe variant (sub-item, text).
fn role_mismatches(point: &Map<String, Value>, recipe: &Value, role: &str) -> Vec<(char, String)> {
    let mut out = Vec::new();
    let Some(cfg) = engine(recipe, role) else {
        return out;
    };
    let int = |k: &str| point.get(k).and_then(Value::as_i64);
    let recipe_tp = first_int(cfg, &["tensor-parallel-size", "tp-size", "tp", "tensor_parallel_size"]);
    let recipe_ep = first_int(cfg, &["expert-parallel-size", "ep-size", "moe_expert_parallel_size"]).unwrap_or(1);
    let recipe_dpa = [cfg.get("enable-dp-attention"), cfg.get("enable_attention_dp")]
        .into_iter()
        .flatten()
        .any(|v| v == &json!(true));
    let workers = recipe.pointer(&format!("/resources/{role}_workers")).and_then(Value::as_i64);
    if let (Some(p), Some(r)) = (int("tp"), recipe_tp) {
        if p != r {
            out.push(('c', format!("{role} tp {p} ≠ recipe {r}")));
        }
    }
    if let Some(p) = int("ep").filter(|p| *p != recipe_ep) {
        out.push(('c', format!("{role} ep {p} ≠ recipe {recipe_ep}")));
    }
    if let Some(p) = point.get("dp-attn").and_then(Value::as_bool).filter(|p| *p != recipe_dpa) {
        out.push(('c', format!("{role} dp-attn {p} ≠ recipe {recipe_dpa}")));
    }
    if let (Some(p), Some(r)) = (int("num-worker"), workers) {
        if p != r {
            out.push(('c', format!("{role} num-worker {p} ≠ recipe {role}_workers {r}")));
        }
    }
    if let Some(p) = int("gpus") {
        let r = recipe.pointer("/resources/gpus_per_node").and_then(Value::as_i64).unwrap_or(4);
        if p != r {
            out.push(('d', format!("{role} gpus {p} ≠ recipe gpus_per_node {r}")));
        }
    }
    out
}

fn config_file(row: &Row) -> Option<String> {
    let settings = row.get("prefill")?.get("additional-settings")?.as_array()?;
    settings.iter().filter_map(Value::as_str).find_map(|s| s.strip_prefix("CONFIG_FILE=")).map(str::to_owned)
}

/// The head path of a recipe reference (`recipes/…` lives under `…/srt-slurm-recipes/`).
fn recipe_path<'e>(ev: &'e Evidence, reference: &str) -> Option<&'e str> {
    let tail = reference.strip_prefix("recipes/").unwrap_or(reference);
    ev.head.paths().find(|p| p.ends_with(&format!("srt-slurm-recipes/{tail}")) || *p == reference)
}

fn check_recipes(ev: &Evidence, key: &str, rows: &[Row], image: &str, out: &mut Findings) {
    for row in rows {
        let Some(reference) = config_file(row) else { continue };
        out.assessed.extend(['b', 'c', 'd']);
        let (file, selector) = match reference.rsplit_once(':') {
            Some((f, s)) => (f.to_owned(), Some(s.to_owned())),
            None => (reference.clone(), None),
        };
        let Some(path) = recipe_path(ev, &file) else {
            out.missing('b', format!("{key}: recipe {reference} is not in the evidence"));
            continue;
        };
        let parsed = ev
            .head
            .text(path)
            .ok_or("not UTF-8".to_owned())
            .and_then(|t| yaml::parse_lenient(t, path).map(|(n, _)| n.to_json()).map_err(|e| e.to_string()));
        let candidates = match parsed.and_then(|root| variants(&root, selector.as_deref())) {
            Ok(c) => c,
            Err(e) => {
                out.fail('b', format!("{key}: recipe {reference} cannot be resolved: {e}"));
                continue;
            }
        };
        let point_conc: BTreeSet<i64> = conc_values(row).into_iter().collect();
        let judged: Vec<(String, Vec<(char, String)>)> = candidates
            .iter()
            .map(|(name, recipe)| {
                let mut problems = Vec::new();
                let rc = concurrencies(recipe);
                if rc != point_conc {
                    problems.push(('b', format!("conc {point_conc:?} ≠ recipe {rc:?}")));
                }
                for role in ["prefill", "decode"] {
                    if let Some(p) = row.get(role).and_then(Value::as_object) {
                        problems.extend(role_mismatches(p, recipe, role));
                    }
                }
                if let Some(container) = recipe.pointer("/model/container").and_then(Value::as_str) {
                    if container.contains('/') && container.contains(':') && container != image {
                        problems.push(('e', format!("recipe container {container} ≠ master image {image}")));
                    }
                }
                (name.clone(), problems)
            })
            .collect();
        if judged.iter().any(|(_, p)| p.is_empty()) {
            continue;
        }
        if let Some((name, problems)) = judged.first() {
            for (sub, text) in problems {
                out.fail(*sub, format!("{key} ({path} {name}): {text}"));
            }
        }
    }
}

fn check_image(ev: &Evidence, config: &AffectedConfig, out: &mut Findings) {
    out.assessed.insert('e');
    match ev.upstream.image_digests.get(&config.image) {
        Some(Fact::Ok(digest)) => {
            let well_formed = digest
                .strip_prefix("sha256:")
                .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
            let pinned = config.image.split_once('@').map(|(_, d)| d);
            if !well_formed || pinned.is_some_and(|p| p != digest) {
                out.fail(
                    'e',
                    format!("{}: image {} resolves to {digest}, not its pinned digest", config.key, config.image),
                );
            }
        }
        Some(Fact::Unavailable(reason)) => {
            out.fail('e', format!("{}: image {} does not resolve by digest ({reason})", config.key, config.image))
        }
        None => {
            out.missing('e', format!("{}: no registry lookup of image {} in the evidence", config.key, config.image))
        }
    }
}

// --- curves (g, h) ----------------------------------------------------------------------------

fn same_series(a: &Curve, b: &Curve) -> bool {
    (&a.key.model, &a.key.scenario, &a.key.hw_key, &a.key.precision, &a.key.percentile)
        == (&b.key.model, &b.key.scenario, &b.key.hw_key, &b.key.precision, &b.key.percentile)
}

fn check_curves(ev: &Evidence, affected: &[AffectedConfig], out: &mut Findings) {
    let existed = affected.iter().any(|c| has_config(&ev.base, &c.key));
    let Some(published) = ev.upstream.published_run else {
        if existed {
            out.missing('g', "no published run of the affected series in the evidence (base curve unknown)".into());
        }
        return;
    };
    let Some(run) = qualifying_run(ev) else {
        out.missing('g', "no passing in-PR run to take the head curve from".into());
        return;
    };
    out.assessed.extend(['g', 'h']);
    let base = run_curves(ev, published);
    let head = run_curves(ev, run.run_id);
    for reason in base.unreadable.iter().chain(&head.unreadable) {
        out.missing('g', format!("unreadable artifact: {reason}"));
    }
    for b in base.curves.iter().filter(|c| affected.iter().any(|a| c.belongs_to(a))) {
        let h = head.curves.iter().find(|h| same_series(b, h));
        let head_points: Vec<Point> = h.map(|h| h.points.iter().map(|p| p.interactivity).collect()).unwrap_or_default();
        let identities: BTreeSet<(&str, i64)> =
            h.map(|h| h.points.iter().map(|p| (p.recipe.as_str(), p.conc)).collect()).unwrap_or_default();
        let removed: Vec<_> = b.points.iter().filter(|p| !identities.contains(&(p.recipe.as_str(), p.conc))).collect();
        let removed_xy: Vec<Point> = removed.iter().map(|p| p.interactivity).collect();
        for finding in removed_point_coverage(&removed_xy, &head_points).iter().filter(|f| !f.covered) {
            let p = removed[finding.removed];
            out.fail('g', format!(
                "removed point {} c{} of run {published} ({:.1} tok/s/GPU at interactivity {:.1}) is not covered by the head curve of run {} ({}); keep a covering head point or add one",
                p.recipe, p.conc, finding.point.y, finding.point.x, run.run_id,
                match &finding.coverage {
                    crate::results::pareto::RemovedCoverage::AboveSegment { head_y, .. } => format!("head frontier reaches only {head_y:.1} there"),
                    crate::results::pareto::RemovedCoverage::InvalidEvidence => "its measurement is invalid".into(),
                    _ => "no head segment brackets it; extrapolation is not allowed".into(),
                }
            ));
        }
        if let Some(h) = h {
            let keyed =
                |c: &Curve| -> Vec<(i64, Point)> { c.points.iter().map(|p| (p.conc, p.interactivity)).collect() };
            for d in retune_deltas(&keyed(b), &keyed(h)) {
                let pct = |v: Option<f64>| v.map_or("n/a".to_owned(), |v| format!("{v:+.1}%"));
                out.deltas.push(format!("c{} {} tput / {} interactivity", d.key, pct(d.tput_pct), pct(d.intvty_pct)));
            }
        }
    }
}

pub fn check(cx: &Context) -> Outcome {
    let ev = cx.evidence;
    let affected = match affected_configs(cx) {
        Ok(a) => a,
        Err(reason) => return Outcome::warn("unverifiable").arg("reason", reason),
    };
    if affected.is_empty() {
        return Outcome::na("no_change");
    }
    let mut out = Findings::default();
    out.assessed.insert('a');
    match rows_by_config(&ev.head, &affected) {
        Err(LoadError::Missing(reason)) => {
            out.missing('a', format!("the head's generator inputs are incomplete: {reason}"))
        }
        Err(LoadError::Invalid(reason)) => out.fail('a', format!("the head's master configs do not load: {reason}")),
        Ok(per_config) => {
            for ((key, rows), config) in per_config.iter().zip(&affected) {
                match rows {
                    Err(e) => out.fail('a', format!("{key}: the head search space does not generate: {e}")),
                    Ok(rows) => check_recipes(ev, key, rows, &config.image, &mut out),
                }
            }
        }
    }
    let existing: Vec<AffectedConfig> = affected.iter().filter(|c| has_config(&ev.base, &c.key)).cloned().collect();
    if !existing.is_empty() {
        match rows_by_config(&ev.base, &existing) {
            Err(LoadError::Missing(reason)) => {
                out.missing('a', format!("the base's generator inputs are incomplete: {reason}"))
            }
            Err(LoadError::Invalid(reason)) => {
                out.fail('a', format!("the base's master configs do not load: {reason}"))
            }
            Ok(per_config) => {
                for (key, rows) in per_config {
                    if let Err(e) = rows {
                        out.fail('a', format!("{key}: the base search space does not generate: {e}"));
                    }
                }
            }
        }
    }
    for config in &affected {
        check_image(ev, config, &mut out);
    }
    out.assessed.insert('f');
    let named = changelog_keys(cx, &affected);
    let unnamed: Vec<&str> = affected.iter().filter(|c| !named.contains(&c.key)).map(|c| c.key.as_str()).collect();
    if !unnamed.is_empty() {
        out.fail('f', format!("no appended perf-changelog.yaml entry names {}", unnamed.join(", ")));
    }
    check_curves(ev, &affected, &mut out);
    let render = |items: &[&Finding]| -> Vec<Value> {
        items.iter().map(|f| json!({"sub": f.sub.to_string(), "text": f.text})).collect()
    };
    let fails: Vec<&Finding> = out.items.iter().filter(|f| f.fail).collect();
    let missing: Vec<&Finding> = out.items.iter().filter(|f| !f.fail).collect();
    let failed: BTreeSet<char> = out.items.iter().map(|f| f.sub).collect();
    let passed: String = out.assessed.iter().filter(|s| !failed.contains(s)).map(|s| format!("({s})")).collect();
    let status = if !fails.is_empty() {
        Status::Fail
    } else if !missing.is_empty() {
        Status::Warn
    } else {
        Status::Pass
    };
    let key = match status {
        Status::Fail => "inconsistent",
        Status::Warn => "incomplete",
        _ => "consistent",
    };
    Outcome::new(status, key)
        .arg("fails", render(&fails))
        .arg("missing", render(&missing))
        .arg("passed", passed)
        .arg("deltas", out.deltas)
        .arg("configs", affected.iter().map(|c| c.key.as_str()).collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::curves::fixtures::add_fixed_point;
    use crate::checks::tests_support::{evidence, run, with_change};

    const RUNNERS: &str = "labels:\n  b200:\n    - b200-nb_0\n  gb200:\n    - gb200-nv_0\n";
    const SINGLE: &str = "dsr1-fp4-b200-sglang:\n  image: lmsysorg/sglang:v0.5.9\n  model: deepseek-ai/DeepSeek-R1\n  model-prefix: dsr1\n  runner: b200\n  precision: fp4\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-list: [4, 16] }\n";
    const MULTI: &str = "dsr1-fp4-gb200-dynamo-sglang:\n  image: lmsysorg/sglang:v0.5.9-cu130\n  model: nvidia/DeepSeek-R1-FP4\n  model-prefix: dsr1\n  runner: gb200\n  precision: fp4\n  framework: dynamo-sglang\n  multinode: true\n  disagg: true\n  kv-p2p-transfer: nixl\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - conc-list: [64, 128]\n        prefill:\n          num-worker: 1\n          tp: 4\n          ep: 4\n          dp-attn: true\n          additional-settings:\n          - \"CONFIG_FILE=recipes/sglang/demo/disagg.yaml:zip_override_hi[1]\"\n        decode:\n          num-worker: 1\n          tp: 8\n          ep: 8\n          dp-attn: true\n";
    const RECIPE: &str = "base:\n  name: demo\n  model: { path: dsr1, container: dynamo-sglang, precision: fp4 }\n  resources: { gpu_type: gb200, gpus_per_node: 4, prefill_workers: 1, decode_workers: 1 }\n  backend:\n    type: sglang\n    sglang_config:\n      prefill: { tensor-parallel-size: 4, expert-parallel-size: 4, enable-dp-attention: true }\n      decode: { tensor-parallel-size: 8, expert-parallel-size: 8, enable-dp-attention: true }\n  benchmark: { type: sa-bench, isl: 8192, osl: 1024, concurrencies: \"4x8\" }\nzip_override_hi:\n  benchmark:\n    concurrencies: [\"16x32\", \"64x128\"]\n";
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
        assert_eq!(o.message.args["passed"], "(a)(b)(c)(d)(e)(f)");
    }

    #[test]
    fn recipe_mismatches_fail_with_their_letter() {
        let o = check(&Context::new(&pr(&MULTI.replace("[64, 128]", "[64, 256]"), 19)));
        assert_eq!((o.status, sub_items(&o, "fails")), (Status::Fail, vec!["b".to_owned()]));
        let o = check(&Context::new(&pr(&MULTI.replace("          tp: 8\n", "          tp: 4\n"), 19)));
        assert_eq!(sub_items(&o, "fails"), ["c"]);
        let o = check(&Context::new(&pr(&MULTI.replace("zip_override_hi[1]", "zip_override_lo"), 19)));
        assert_eq!(sub_items(&o, "fails"), ["b"], "an unknown variant is an error");
    }

    #[test]
    fn generation_changelog_and_image_failures() {
        let o = check(&Context::new(&pr(&SINGLE.replace("conc-list: [4, 16]", "conc-list: []"), 14)));
        assert!(sub_items(&o, "fails").contains(&"a".to_owned()), "{o:?}");
        let mut e = pr(SINGLE, 14);
        e.files.retain(|f| f.filename != "perf-changelog.yaml");
        assert_eq!(sub_items(&check(&Context::new(&e)), "fails"), ["f"]);
        let mut e = pr(SINGLE, 14);
        e.upstream.image_digests.insert("lmsysorg/sglang:v0.5.9".into(), Fact::Unavailable("manifest unknown".into()));
        assert_eq!(sub_items(&check(&Context::new(&e)), "fails"), ["e"]);
        e.upstream.image_digests.clear();
        let o = check(&Context::new(&e));
        assert_eq!((o.status, sub_items(&o, "missing")), (Status::Warn, vec!["e".to_owned()]));
    }

    fn with_curves(removed_intvty: f64, removed_tput: f64) -> Evidence {
        let mut e = pr(SINGLE, 14);
        e.base.insert("configs/nvidia-master.yaml", SINGLE);
        e.base.insert("configs/amd-master.yaml", "{}\n");
        e.base.insert("configs/runners.yaml", RUNNERS);
        let sha = e.pull_request.head_sha.clone();
        e.check_runs
            .insert(sha, Fact::Ok(vec![run("single-node 8k1k / x", "success", 7), run("eval / x", "success", 7)]));
        e.upstream.published_run = Some(3);
        // Published: tp8 c4 and c16, plus tp4 c64 that the head no longer measures.
        add_fixed_point(&mut e, 3, 8, 4, 5.0, 120.0, 1000.0);
        add_fixed_point(&mut e, 3, 8, 16, 9.0, 90.0, 2000.0);
        add_fixed_point(&mut e, 3, 4, 64, 30.0, removed_intvty, removed_tput);
        add_fixed_point(&mut e, 7, 8, 4, 4.0, 130.0, 1200.0);
        add_fixed_point(&mut e, 7, 8, 16, 8.0, 100.0, 2400.0);
        e
    }

    #[test]
    fn a_removed_point_left_of_the_head_frontier_fails_g() {
        // The report's shape: higher throughput at lower interactivity than any head point.
        let o = check(&Context::new(&with_curves(76.3, 2600.0)));
        assert_eq!((o.status, sub_items(&o, "fails")), (Status::Fail, vec!["g".to_owned()]));
        assert!(o.message.args["fails"][0]["text"].as_str().unwrap().contains("extrapolation is not allowed"));
        assert_eq!(o.message.args["deltas"][0], "c4 +20.0% tput / +8.3% interactivity");
    }

    #[test]
    fn a_dominated_removed_point_passes_g() {
        let o = check(&Context::new(&with_curves(80.0, 1500.0)));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["passed"], "(a)(e)(f)(g)(h)");
    }

    #[test]
    fn an_existing_config_without_a_published_run_warns() {
        let mut e = with_curves(80.0, 1500.0);
        e.upstream.published_run = None;
        assert_eq!(sub_items(&check(&Context::new(&e)), "missing"), ["g"]);
    }

    #[test]
    fn zip_variants_follow_srtctl() {
        let root = json!({"base": {"a": 1, "b": {"c": 2, "d": 3}}, "zip_override_z": {"b": {"c": [5, 6], "d": [7]}}, "override_x": {"a": null}});
        let all = variants(&root, None).unwrap();
        assert_eq!(
            all.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
            ["override_x", "zip_override_z[0]", "zip_override_z[1]"]
        );
        assert_eq!(all[0].1, json!({"b": {"c": 2, "d": 3}}));
        assert_eq!(all[2].1, json!({"a": 1, "b": {"c": 6, "d": 7}}));
        assert!(variants(&json!({"base": {}, "zip_override_z": {"a": [1, 2], "b": [1, 2, 3]}}), None).is_err());
        assert!(variants(&root, Some("zip_override_z[x]")).is_err());
    }

    #[test]
    fn no_config_change_is_na() {
        assert_eq!(check(&Context::new(&evidence())).status, Status::NotApplicable);
    }
}
