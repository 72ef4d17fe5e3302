//! Benchmark points of one workflow run, grouped into app curves (spec 40 §3.3), for Checks 14
//! and 18(g)/(h). Read from `Evidence.artifacts` (`<run id>/<artifact>/<file>`) in the shapes the
//! workflows upload (`results::shapes`): fixed-sequence `bmk_<RF>/agg_<RF>.json` (multi-node
//! `agg_<RF>_*.json`) and AgentX `bmk_agentic_<RF>/<RF>.json` (multi-node `<RF>_conc<N>.json`).
//! Failed, unreadable or unknown-shape files never become points; they are reported.

use std::collections::BTreeMap;

use super::affected::sku;
use super::configs::AffectedConfig;
use super::{reason, Reason};
use crate::evidence::{Evidence, Fact};
use crate::results::benchmark::{AgenticAggregate, FixedSeqAggregate};
use crate::results::pareto::{hw_key, CurveKey, Plane, Point};
use crate::results::shapes::{self, ArtifactKind};

/// One measured point, with the identity Check 18 compares across runs.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredPoint {
    /// The E2EL plane (Check 14).
    pub e2el: Point,
    /// The interactivity plane (Check 18(g)).
    pub interactivity: Point,
    /// Time to first token in seconds at the run's percentile; NaN when absent.
    pub ttft: f64,
    pub conc: i64,
    /// Recipe identity without conc (`tp8 ep8 dpa:false spec:none`), for removed-point matching.
    pub recipe: String,
    pub image: String,
    pub artifact: String,
}

/// A curve and the config fields it is matched on.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub key: CurveKey,
    pub model_prefix: String,
    pub framework: String,
    pub sku: String,
    pub points: Vec<MeasuredPoint>,
}

impl Curve {
    /// The same series as `other` in another run (the curve key without its run).
    pub fn same_series(&self, other: &Curve) -> bool {
        let (a, b) = (&self.key, &other.key);
        (&a.model, &a.scenario, &a.hw_key, &a.precision, &a.percentile)
            == (&b.model, &b.scenario, &b.hw_key, &b.precision, &b.percentile)
    }

    /// Whether this curve holds results of `config` (same model prefix, precision, framework
    /// and GPU SKU; the series key merges agg/disagg and images, spec 40 §3.3).
    pub fn belongs_to(&self, config: &AffectedConfig) -> bool {
        self.model_prefix == config.model_prefix
            && self.key.precision == config.precision
            && self.framework == config.framework
            && self.sku == sku(&config.runner)
    }
}

/// The curves of one run, and the artifacts that could not be read.
#[derive(Debug, Default)]
pub struct RunCurves {
    pub curves: Vec<Curve>,
    pub unreadable: Vec<UnreadableArtifact>,
}

/// A benchmark result file (or artifact) of a run that could not be read, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct UnreadableArtifact {
    /// `<run>/<artifact>[/<file>]`.
    pub path: String,
    /// Names the path (a parse error carries it, as `results::ArtifactError` does).
    pub reason: Reason,
}

impl RunCurves {
    /// The unreadable aggregates that could hold `config`'s points: their result filename carries
    /// the config's `_<precision>_<framework>_` (benchmark-tmpl.yml:278,
    /// benchmark-multinode-tmpl.yml:345).
    pub fn unreadable_of(&self, config: &AffectedConfig) -> Vec<UnreadableArtifact> {
        let fields = format!("_{}_{}_", config.precision, config.framework).to_ascii_lowercase();
        self.unreadable.iter().filter(|u| u.path.to_ascii_lowercase().contains(&fields)).cloned().collect()
    }
}

/// The scenario part of a series key (`8k1k`, `1024_8192` style as upstream names it).
pub fn scenario_of(isl: i64, osl: i64) -> String {
    let k = |n: i64| if n % 1024 == 0 { format!("{}k", n / 1024) } else { n.to_string() };
    format!("{}{}", k(isl), k(osl))
}

/// A JSON value as the text the identities compare (`8`, `false`, `mtp`; empty when absent).
pub fn text(v: Option<&serde_json::Value>) -> String {
    match v {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) if !other.is_null() => other.to_string(),
        _ => String::new(),
    }
}

struct Identity {
    model_prefix: String,
    framework: String,
    hw: String,
    precision: String,
    spec: String,
    scenario: String,
    percentile: &'static str,
    agentic: bool,
}

/// A point's recipe identity without conc (`tp8 ep8 dpa:false spec:none`).
pub fn recipe_of(tp: &str, ep: &str, dpa: &str, spec: &str) -> String {
    format!("tp{tp} ep{ep} dpa:{dpa} spec:{spec}")
}

/// A point of aggregate file `<run>/<artifact>/<file>`: `None` for a file outside the benchmark
/// aggregate artifacts, an error for one that does not parse or that matches no shape the
/// workflows upload (`results::shapes`).
fn read_point(path: &str, bytes: &[u8]) -> Option<Result<(Identity, MeasuredPoint), Reason>> {
    let mut parts = path.splitn(3, '/');
    let (_, artifact, file) = (parts.next()?, parts.next()?, parts.next()?);
    let (kind, rf) = shapes::artifact_kind(artifact)?;
    if !matches!(kind, ArtifactKind::AgenticAggregate | ArtifactKind::FixedSeqAggregate) {
        return None;
    }
    if shapes::is_raw_result(file) {
        return None;
    }
    if shapes::aggregate_file(kind, rf, file).is_none() {
        return Some(Err(reason("result_name_unknown").arg("path", path)));
    }
    let parse_err = |e: crate::results::ArtifactError| Reason::from(e.to_string());
    if kind == ArtifactKind::AgenticAggregate {
        return Some(AgenticAggregate::parse(bytes, path).map_err(parse_err).map(|agg| {
            let raw = &agg.raw;
            let get = |k: &str| text(raw.get(k));
            let id = Identity {
                model_prefix: get("infmax_model_prefix"),
                framework: get("framework"),
                hw: get("hw"),
                precision: get("precision"),
                spec: get("spec_decoding"),
                scenario: "agentic-coding".into(),
                percentile: "p90",
                agentic: true,
            };
            let point = MeasuredPoint {
                e2el: agg.point(Plane::AgenticE2el, "p90"),
                interactivity: agg.point(Plane::AgenticInteractivity, "p90"),
                ttft: agg.latency("ttft", "p90").unwrap_or(f64::NAN),
                conc: raw.get("conc").and_then(serde_json::Value::as_i64).unwrap_or(0),
                recipe: recipe_of(&get("tp"), &get("ep"), &get("dp_attention"), &id.spec),
                image: get("image"),
                artifact: artifact.to_owned(),
            };
            (id, point)
        }));
    }
    Some(FixedSeqAggregate::parse(bytes, path).map_err(parse_err).map(|agg| {
        let m = |k: &str| text(agg.metrics.get(k));
        let id = Identity {
            model_prefix: agg.infmax_model_prefix.clone(),
            framework: agg.framework.clone(),
            hw: agg.hw.clone(),
            precision: agg.precision.clone(),
            spec: agg.spec_decoding.clone(),
            scenario: scenario_of(agg.isl, agg.osl),
            percentile: "median",
            agentic: false,
        };
        let point = MeasuredPoint {
            e2el: agg.point(Plane::FixedSeqE2el),
            interactivity: agg.point(Plane::FixedSeqInteractivity),
            ttft: agg.number("median_ttft").unwrap_or(f64::NAN),
            conc: agg.conc,
            recipe: recipe_of(&m("tp"), &m("ep"), &m("dp_attention"), &agg.spec_decoding),
            image: agg.image.clone(),
            artifact: artifact.to_owned(),
        };
        (id, point)
    }))
}

/// Every benchmark point of run `run_id`, grouped by curve key (sorted, deterministic).
pub fn run_curves(evidence: &Evidence, run_id: u64) -> RunCurves {
    let prefix = format!("{run_id}/");
    let mut by_key: BTreeMap<CurveKey, Curve> = BTreeMap::new();
    let mut unreadable = Vec::new();
    for path in evidence.artifacts.paths().filter(|p| p.starts_with(&prefix)) {
        let Some(bytes) = evidence.artifacts.get(path) else { continue };
        match read_point(path, bytes) {
            None => {}
            Some(Err(why)) => unreadable.push(UnreadableArtifact { path: path.to_owned(), reason: why }),
            Some(Ok((id, point))) => {
                // No HARDWARE_CONFIG table here: disagg never adds a suffix, so agg and disagg
                // variants of one series form one curve (spec 40 §3.3).
                let hw = hw_key(&id.hw, &id.framework, false, &id.spec, id.agentic, &|_| false);
                let key = CurveKey {
                    model: id.model_prefix.clone(),
                    scenario: id.scenario,
                    hw_key: hw,
                    precision: id.precision.clone(),
                    run: run_id.to_string(),
                    percentile: id.percentile.to_owned(),
                };
                by_key
                    .entry(key.clone())
                    .or_insert_with(|| Curve {
                        key,
                        model_prefix: id.model_prefix,
                        framework: id.framework,
                        sku: sku(&id.hw),
                        points: Vec::new(),
                    })
                    .points
                    .push(point);
            }
        }
    }
    for curve in by_key.values_mut() {
        curve.points.sort_by_key(|p| p.conc);
    }
    // A benchmark artifact (or an archive nested in one) the collector could not fetch is as
    // unreadable as one that does not parse: its points are unknown, not absent.
    if let Some(run) = evidence.runs.get(&run_id) {
        for (name, fact) in run.artifacts.iter().chain(&run.archives) {
            if let (true, Fact::Unavailable(error)) = (name.starts_with("bmk_"), fact) {
                let path = format!("{run_id}/{name}");
                let why = reason("path_error").arg("path", path.as_str()).error(error);
                unreadable.push(UnreadableArtifact { path, reason: why });
            }
        }
    }
    RunCurves { curves: by_key.into_values().collect(), unreadable }
}

/// Test fixtures: aggregate JSON in the shape `process_result.py` writes.
#[cfg(test)]
pub mod fixtures {
    use crate::evidence::Evidence;

    /// Adds `bmk_<rf>/agg_<rf>.json` for one fixed-seq point of `run` (dsr1 fp4 b200 sglang 8k1k).
    pub fn add_fixed_point(e: &mut Evidence, run: u64, tp: u32, conc: u32, e2el: f64, intvty: f64, tput: f64) {
        let rf = format!("dsr1_8k1k_fp4_sglang_tp{tp}-ep1_conc{conc}_b200-nv_0");
        let json = serde_json::json!({
            "hw": "b200-nv", "conc": conc, "image": "lmsysorg/sglang:v0.5.9", "model": "deepseek-r1-fp4",
            "infmax_model_prefix": "dsr1", "framework": "sglang", "precision": "fp4", "spec_decoding": "none",
            "disagg": false, "recipe_fingerprint": "x", "isl": 8192, "osl": 1024, "is_multinode": false,
            "tput_per_gpu": tput, "output_tput_per_gpu": tput / 9.0, "input_tput_per_gpu": tput * 8.0 / 9.0,
            "tp": tp, "ep": 1, "dp_attention": "false", "median_e2el": e2el, "median_intvty": intvty,
            "median_ttft": e2el / 10.0,
        });
        e.artifacts.insert(format!("{run}/bmk_{rf}/agg_{rf}.json"), json.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::add_fixed_point;
    use super::*;
    use crate::checks::tests_support::evidence;

    #[test]
    fn points_group_by_series_and_skip_other_runs() {
        let mut e = evidence();
        add_fixed_point(&mut e, 7, 8, 4, 10.0, 100.0, 500.0);
        add_fixed_point(&mut e, 7, 8, 16, 20.0, 50.0, 900.0);
        add_fixed_point(&mut e, 8, 8, 4, 10.0, 100.0, 500.0);
        e.artifacts.insert("7/bmk_broken/agg_broken.json", "{not json");
        e.artifacts.insert("7/eval_x/results.json", "{}");
        let run = run_curves(&e, 7);
        assert_eq!(run.curves.len(), 1);
        assert_eq!(run.curves[0].key.to_string(), "dsr1/8k1k/b200_sglang/fp4/7/median");
        assert_eq!(run.curves[0].points.iter().map(|p| p.conc).collect::<Vec<_>>(), [4, 16]);
        assert_eq!(run.curves[0].points[0].recipe, "tp8 ep1 dpa:false spec:none");
        assert_eq!(run.unreadable.len(), 1, "{:?}", run.unreadable);
    }

    #[test]
    fn agentic_points_use_p90() {
        let mut e = evidence();
        let json = serde_json::json!({"hw": "mi355x-amds", "conc": 8, "infmax_model_prefix": "musespark",
            "framework": "sglang", "precision": "fp4", "spec_decoding": "mtp", "tp": 8, "ep": 8,
            "request_metrics": {"throughput": {"per_gpu": {"total_tput_tps": 1000.0}},
                "latency": {"e2el": {"p90": 30.0}, "itl": {"p90": 0.02}}}});
        e.artifacts.insert("9/bmk_agentic_ms_c8/ms_c8.json", json.to_string());
        let run = run_curves(&e, 9);
        assert_eq!(run.curves[0].key.to_string(), "musespark/agentic-coding/mi355x_sglang/fp4/9/p90");
        assert_eq!(run.curves[0].points[0].e2el, Point::new(30.0, 1000.0));
        assert_eq!(run.curves[0].points[0].interactivity, Point::new(50.0, 1000.0));
    }

    #[test]
    fn multinode_result_files_are_points_and_unknown_shapes_are_named() {
        // benchmark-multinode-tmpl.yml:461-462 (agentic) and :432-433 (fixed-seq).
        let mut e = evidence();
        let rf =
            "dsv4_fp4_sglang-disagg_prefill-tp8-ep8-nw1_decode-tp8-ep8-nw2_disagg-true_spec-mtp_conc8x16_mi355x-amds_0";
        for conc in [8, 16] {
            let json = serde_json::json!({"hw": "cluster:mi355x-amds", "conc": conc, "infmax_model_prefix": "dsv4",
                "framework": "sglang-disagg", "precision": "fp4", "spec_decoding": "mtp",
                "request_metrics": {"throughput": {"per_gpu": {"total_tput_tps": 100.0 * conc as f64}},
                    "latency": {"e2el": {"p90": 30.0}, "itl": {"p90": 0.02}}}});
            e.artifacts.insert(format!("9/bmk_agentic_{rf}/{rf}_conc{conc}.json"), json.to_string());
        }
        let fixed = "dsr1_8k1k_fp4_dynamo-trt_prefill-tp4_decode-tp8_disagg-true_spec-none_conc64x128_gb200-nv_0";
        let mut agg = serde_json::json!({"hw": "gb200-nv", "conc": 64, "image": "i", "model": "m",
            "infmax_model_prefix": "dsr1", "framework": "dynamo-trt", "precision": "fp4", "spec_decoding": "none",
            "disagg": true, "recipe_fingerprint": "x", "isl": 8192, "osl": 1024, "is_multinode": true,
            "tput_per_gpu": 900.0, "output_tput_per_gpu": 100.0, "input_tput_per_gpu": 800.0,
            "median_e2el": 20.0, "median_intvty": 50.0});
        e.artifacts.insert(format!("9/bmk_{fixed}/agg_{fixed}_ctx_4_gen_8_gpus_12_conc64.json"), agg.to_string());
        agg["conc"] = 128.into();
        e.artifacts.insert(format!("9/bmk_{fixed}/agg_{fixed}_ctx_4_gen_8_gpus_12_conc128.json"), agg.to_string());
        e.artifacts.insert(format!("9/bmk_agentic_{rf}/notes.json"), "{}");
        let run = run_curves(&e, 9);
        let concs: Vec<(String, Vec<i64>)> =
            run.curves.iter().map(|c| (c.key.model.clone(), c.points.iter().map(|p| p.conc).collect())).collect();
        assert_eq!(concs, [("dsr1".to_owned(), vec![64, 128]), ("dsv4".to_owned(), vec![8, 16])]);
        assert_eq!(run.curves[1].sku, "mi355x", "a cluster: runner label is its SKU");
        let path = format!("9/bmk_agentic_{rf}/notes.json");
        assert_eq!(
            run.unreadable,
            [UnreadableArtifact { reason: reason("result_name_unknown").arg("path", path.as_str()), path }]
        );
    }
}
