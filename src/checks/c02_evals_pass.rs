//! Check 2 — Evals pass (spec 30 Check 2, spec 40 §1.8): the eval results of the run behind
//! Check 1 exist; every `exact_match,*` score meets the model's threshold from the base
//! branch's thresholds file (model → default → 0.85); every set is the full split (decision E5)
//! with a valid batch manifest (§1.7); the evals ran on the image of the PR's config; each score
//! is within 2σ of its in-run siblings and of the ingested cohort (decision E6); and every
//! conditional kernel path the launch enables (`checks/02-kernel-paths.toml`) is proven served
//! by a line of the eval server logs. Every problem is reported, not only the first.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use regex::Regex;
use serde_json::{json, Map, Value};

use super::{reason, Context, Outcome, Reason};
use crate::domain::eval_thresholds::{EvalThresholds, ThresholdSource};
use crate::evidence::{Evidence, Fact};
use crate::matrix::evals::conc_values;
use crate::matrix::process::{parse_additions, ProcessOptions};
use crate::matrix::Row;
use crate::pr::affected;
use crate::pr::configs::AffectedConfig;
use crate::pr::generated;
use crate::repo::{Layout, Logical};
use crate::results::eval::{
    assessed_score, build_row, check_scores, ep_from_result_name, partial_sets, result_concurrency, two_sigma,
    validate_batch_manifest, Consistency, EvalRow, LmEvalResults, MetaEnv, Threshold, FALLBACK_MIN_SCORE,
};
use crate::results::eval_logs::{self, KernelPath, MAX_SCAN_BYTES};
use crate::results::shapes::{self, is_eval_results_artifact, ArtifactKind};

const KERNEL_PATHS: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/checks/02-kernel-paths.toml"));
/// Problems that say "could not be verified" rather than "is wrong" (the header orders them last).
const UNVERIFIED: [&str; 12] = [
    "no_score",
    "evals_expected_unknown",
    "kernel_trigger_unknown",
    "kernel_unreadable",
    "kernel_no_logs",
    "image_unknown",
    "sigma_unknown",
    "cohort_unknown",
    "cohort_unrecorded",
    "cohort_unavailable",
    "cohort_unreadable",
    "meta_missing",
];
/// Most image lines read from one eval job log.
const MAX_IMAGE_LINES: usize = 16;

/// The conditional kernel paths (`checks/02-kernel-paths.toml`), parsed once; a table that does
/// not load fails the check (it is embedded and tested, so this is a build defect).
fn kernel_paths() -> &'static Result<Vec<KernelPath>, String> {
    static TABLE: OnceLock<Result<Vec<KernelPath>, String>> = OnceLock::new();
    TABLE.get_or_init(|| eval_logs::parse_kernel_paths(KERNEL_PATHS).map_err(|e| e.to_string()))
}

fn is_server_log_artifact(name: &str) -> bool {
    shapes::artifact_kind(name).is_some_and(|(kind, _)| kind == ArtifactKind::EvalServerLogs)
}

fn is_archive(path: &str) -> bool {
    path.ends_with(".tar.gz") || path.ends_with(".tgz") || path.ends_with(".tar")
}

fn source_name(source: ThresholdSource, prefix: Option<&str>) -> String {
    match source {
        ThresholdSource::Model => format!("models.{}", prefix.unwrap_or_default()),
        ThresholdSource::Default => "default".into(),
        ThresholdSource::MinScore => "--min-score".into(),
    }
}

/// One eval artifact of a run: its `meta_env.json` (typed and raw) and its lm-eval results files.
struct EvalSet {
    artifact: String,
    meta: Option<(MetaEnv, Map<String, Value>)>,
    results: Vec<(String, LmEvalResults)>,
}

/// One task score of a set, as the collector row re-derives it.
struct Scored {
    artifact: String,
    /// `TP8 c13`: how the published report names an eval point.
    label: String,
    /// EP from the artifact name (decision E4), not `meta_env.json`.
    ep: i64,
    row: EvalRow,
}

impl Scored {
    /// Same model, hardware, engine, precision, spec method and task (spec 40 §1.8 step 5).
    fn identity(&self) -> (&str, &str, &str, &str, &str, &str) {
        let r = &self.row;
        (&r.model_prefix, &r.hw, &r.framework, &r.precision, &r.spec_decoding, &r.scores.task)
    }

    /// The same decode topology: the "exact" cohort.
    fn topology(&self) -> (i64, i64, &str) {
        (self.row.tp, self.ep, &self.row.dp_attention)
    }

    fn metric(&self) -> &'static str {
        if self.row.scores.em_strict.is_some() {
            "em_strict"
        } else {
            "em_flexible"
        }
    }
}

/// The eval sets of `run_id` in the bundle. `Err` names an artifact whose files do not parse.
fn read_sets(ev: &Evidence, run_id: u64) -> Result<Vec<EvalSet>, Outcome> {
    let run_prefix = format!("{run_id}/");
    let names: BTreeSet<&str> = ev
        .artifacts
        .paths()
        .filter_map(|p| p.strip_prefix(&run_prefix))
        .filter_map(|rest| rest.split('/').next())
        .filter(|name| is_eval_results_artifact(name))
        .collect();
    let mut sets = Vec::new();
    for artifact in names {
        let dir = format!("{run_prefix}{artifact}/");
        let files: Vec<&str> = ev.artifacts.paths().filter(|p| p.starts_with(&dir)).collect();
        let meta = match files.iter().find(|p| p.ends_with("meta_env.json")) {
            Some(m) => {
                let bytes = ev.artifacts.get(m).unwrap_or_default();
                let typed = MetaEnv::parse(bytes, m).map_err(|e| Outcome::unreadable(artifact, e.to_string()))?;
                let raw: Map<String, Value> = serde_json::from_slice(bytes).unwrap_or_default();
                Some((typed, raw))
            }
            None => None,
        };
        let mut results = Vec::new();
        for file in files
            .iter()
            .filter(|p| p.rsplit('/').next().is_some_and(|n| n.starts_with("results") && n.ends_with(".json")))
        {
            let parsed = LmEvalResults::parse(ev.artifacts.get(file).unwrap_or_default(), file)
                .map_err(|e| Outcome::unreadable(artifact, e.to_string()))?;
            results.push((file.rsplit('/').next().unwrap_or(file).to_owned(), parsed));
        }
        sets.push(EvalSet { artifact: artifact.to_owned(), meta, results });
    }
    Ok(sets)
}

/// The collector rows of a set (none without `meta_env.json`).
fn scored(set: &EvalSet) -> Vec<Scored> {
    let Some((meta, _)) = &set.meta else { return Vec::new() };
    let ep = ep_from_result_name(&set.artifact).unwrap_or(meta.ep);
    set.results
        .iter()
        .flat_map(|(file, results)| {
            let conc = result_concurrency(file);
            results.tasks.iter().map(move |m| build_row(meta, m, &set.artifact, conc))
        })
        .map(|row| Scored { artifact: set.artifact.clone(), label: format!("TP{} c{}", row.tp, row.conc), ep, row })
        .collect()
}

/// The concurrency an artifact name carries (`…_conc64_…`).
fn name_concurrency(artifact: &str) -> Option<i64> {
    artifact.split('_').find_map(|part| part.strip_prefix("conc")?.parse().ok())
}

/// Names of a run's artifacts (and nested archives, `<artifact>/<path>`) that match `wanted`
/// and could not be read, with the reason.
fn unavailable_of(ev: &Evidence, run_id: u64, wanted: fn(&str) -> bool) -> Vec<(String, String)> {
    let Some(run) = ev.runs.get(&run_id) else { return Vec::new() };
    run.artifacts
        .iter()
        .chain(&run.archives)
        .filter(|(name, _)| wanted(name.split('/').next().unwrap_or(name)))
        .filter_map(|(name, fact)| match fact {
            Fact::Unavailable(reason) => Some((name.clone(), reason.clone())),
            Fact::Ok(()) => None,
        })
        .collect()
}

/// The eval job logs of a run that are in the bundle: (job id, job name, log bytes).
fn job_logs(ev: &Evidence, run_id: u64) -> Vec<(u64, &str, &[u8])> {
    let Some(run) = ev.runs.get(&run_id) else { return Vec::new() };
    run.jobs
        .iter()
        .filter(|(_, job)| matches!(job.log, Fact::Ok(())))
        .filter_map(|(id, job)| {
            Some((*id, job.name.as_str(), ev.artifacts.get(&format!("{run_id}/job-logs/{id}.log"))?))
        })
        .collect()
}

fn image_line() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r#"(?i)\bimage\s*[:=]\s*["']?([A-Za-z0-9][A-Za-z0-9._/:@-]*[A-Za-z0-9])"#).expect("valid pattern")
    })
}

/// `repo:tag` and the digest of an image reference; a `docker.io/` registry prefix is dropped.
fn image_parts(image: &str) -> (&str, Option<&str>) {
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    (name.strip_prefix("docker.io/").unwrap_or(name), digest)
}

/// Equal tags, and equal digests when both are pinned (spec 40 §1.8 step 4).
fn same_image(config: &str, eval: &str) -> bool {
    let (a, da) = image_parts(config);
    let (b, db) = image_parts(eval);
    a == b && (da.is_none() || db.is_none() || da == db)
}

/// The result filenames (up to the runner's name, `shapes::result_filename_heads`) of the rows
/// each affected config generates at the head: a result belongs to the config whose rows name it
/// (issue 28 item 2).
fn result_heads(ev: &Evidence, configs: &[AffectedConfig]) -> BTreeMap<String, Vec<String>> {
    let generated = generated::rows_by_config(&ev.head, configs).unwrap_or_default();
    let heads = |rows: Vec<Row>| rows.iter().flat_map(shapes::result_filename_heads).collect();
    generated.into_iter().map(|(key, rows)| (key, heads(rows.unwrap_or_default()))).collect()
}

/// Whether `text` names config `key` as a whole word: `dsr1-fp4-b200-sglang-tp4` does not name
/// `dsr1-fp4-b200-sglang` (a key is letters, digits and `.`, `_`, `-`).
fn names_key(text: &str, key: &str) -> bool {
    let part = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    !key.is_empty()
        && text.match_indices(key).any(|(at, _)| {
            !text[..at].chars().next_back().is_some_and(part)
                && !text[at + key.len()..].chars().next().is_some_and(part)
        })
}

/// The images the evals of `config` ran on, each with where it was read (`{job, line}` or
/// `{artifact}`): the eval job logs that name the config, then the same run's `bmk_*`
/// aggregates whose identity (model, SKU, engine, precision) is this config's and whose result
/// filename one of its rows generates (`heads`); where no config's rows name the file, identity
/// and speculative decoding decide, and only when they single this config out (the eval
/// artifacts carry no image, spec 40 §1.2). An aggregate that several affected configs could
/// have written is returned in the second list: ambiguous evidence, never another config's image.
fn eval_images(
    ev: &Evidence,
    run_id: u64,
    config: &AffectedConfig,
    configs: &[AffectedConfig],
    heads: &BTreeMap<String, Vec<String>>,
) -> (Vec<(String, Value)>, Vec<String>) {
    let mut found = Vec::new();
    let mut ambiguous = Vec::new();
    for (id, name, log) in job_logs(ev, run_id) {
        let mut budget = MAX_SCAN_BYTES;
        let text_names_config = names_key(name, &config.key) || names_key(&String::from_utf8_lossy(log), &config.key);
        if !text_names_config {
            continue;
        }
        for m in eval_logs::find_lines(log, image_line(), &mut budget, MAX_IMAGE_LINES) {
            if let Some(image) = image_line().captures(&m.text).and_then(|c| c.get(1)) {
                found.push((image.as_str().to_owned(), json!({"job": id, "line": m.line})));
            }
        }
    }
    let prefix = format!("{run_id}/bmk_");
    for path in ev.artifacts.paths().filter(|p| p.starts_with(&prefix) && p.ends_with(".json")) {
        let Ok(agg) = serde_json::from_slice::<Value>(ev.artifacts.get(path).unwrap_or_default()) else { continue };
        let field = |k: &str| agg.get(k).and_then(Value::as_str).unwrap_or_default().to_ascii_lowercase();
        let spec = match field("spec_decoding") {
            s if s.is_empty() => "none".to_owned(),
            s => s,
        };
        let same = |c: &AffectedConfig| {
            field("infmax_model_prefix") == c.model_prefix.to_ascii_lowercase()
                && field("precision") == c.precision.to_ascii_lowercase()
                && field("framework") == c.framework.to_ascii_lowercase()
                && affected::sku(&field("hw")) == affected::sku(&c.runner)
        };
        let (Some(image), true) = (agg.get("image").and_then(Value::as_str), same(config)) else { continue };
        let artifact = path.strip_prefix(&format!("{run_id}/")).unwrap_or(path);
        let artifact = artifact.split('/').next().unwrap_or(artifact).to_owned();
        let rf = shapes::artifact_kind(&artifact).map_or("", |(_, rf)| rf);
        let names =
            |c: &AffectedConfig| heads.get(&c.key).is_some_and(|h| h.iter().any(|h| rf.starts_with(h.as_str())));
        let mut owners: Vec<&AffectedConfig> = configs.iter().filter(|c| same(c)).collect();
        // The result filename decides where a config's rows name it.
        if owners.iter().any(|c| names(c)) {
            owners.retain(|c| names(c));
        }
        if owners.len() > 1 {
            owners.retain(|c| c.spec_decoding.iter().any(|s| s.eq_ignore_ascii_case(&spec)));
        }
        match owners.as_slice() {
            [only] if only.key == config.key => found.push((image.to_owned(), json!({"artifact": artifact}))),
            [_] => {} // another config's aggregate
            _ => ambiguous.push(artifact),
        }
    }
    ambiguous.sort();
    ambiguous.dedup();
    (found, ambiguous)
}

/// One eval the sweep owes (spec 40 §1.5): an eval row of the processor's output for the
/// changelog entries the PR appends, with the concurrencies it is evaluated at.
struct ExpectedEval {
    /// The affected config key it belongs to, or its identity when no affected config matches.
    config: String,
    model_prefix: String,
    runner: String,
    framework: String,
    precision: String,
    spec_decoding: String,
    /// TP, or the decode workers' TP of a multi-node row (the eval row's `decode_tp`).
    tp: i64,
    /// EP of a single-node fixed-sequence row: its result name carries it (decision E4).
    ep: Option<i64>,
    concs: Vec<i64>,
    multinode: bool,
}

impl ExpectedEval {
    fn from_row(
        row: &Row,
        fixed_single_node: bool,
        configs: &[AffectedConfig],
        heads: &BTreeMap<String, Vec<String>>,
    ) -> Option<ExpectedEval> {
        let text = |k: &str| row.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        let decode_tp = row.get("decode").and_then(|d| d.get("tp")).and_then(Value::as_i64);
        let multinode = row.contains_key("prefill");
        let tp = if multinode { decode_tp? } else { row.get("tp").and_then(Value::as_i64)? };
        let all = conc_values(row);
        let concs = match row.get("eval-conc").and_then(Value::as_i64) {
            Some(c) if !row.get("eval-all-concs").and_then(Value::as_bool).unwrap_or(false) => vec![c],
            _ if multinode && !row.get("eval-all-concs").and_then(Value::as_bool).unwrap_or(false) => {
                all.iter().max().copied().into_iter().collect()
            }
            _ => all,
        };
        let (model_prefix, runner) = (text("model-prefix"), text("runner"));
        let (framework, precision) = (text("framework"), text("precision"));
        let ep = if fixed_single_node { row.get("ep").and_then(Value::as_i64) } else { None };
        let spec_decoding = row.get("spec-decoding").and_then(Value::as_str).unwrap_or("none").to_owned();
        // The row's own config: its identity and image (two configs may share model and SKU);
        // a row no single config can have generated is named by its identity.
        let mut own: Vec<&AffectedConfig> = configs
            .iter()
            .filter(|c| {
                c.model_prefix.eq_ignore_ascii_case(&model_prefix)
                    && c.precision.eq_ignore_ascii_case(&precision)
                    && c.framework.eq_ignore_ascii_case(&framework)
                    && affected::sku(&c.runner) == affected::sku(&runner)
            })
            .collect();
        if own.len() > 1 {
            // The config whose generated rows have this row's result filename (CE11).
            let named = shapes::result_filename_heads(row);
            let names = |c: &AffectedConfig| heads.get(&c.key).is_some_and(|h| named.iter().any(|n| h.contains(n)));
            if own.iter().any(|c| names(c)) {
                own.retain(|c| names(c));
            }
        }
        if own.len() > 1 {
            let image = text("image");
            own.retain(|c| c.image == image && c.spec_decoding.contains(&spec_decoding));
        }
        let config = match own.as_slice() {
            [only] => only.key.clone(),
            _ => format!("{model_prefix} {precision} {runner} {framework}"),
        };
        Some(ExpectedEval {
            config,
            model_prefix,
            runner,
            framework,
            precision,
            spec_decoding,
            tp,
            ep,
            concs,
            multinode,
        })
    }

    /// Whether the eval row `s` is this eval at concurrency `conc`.
    fn covered_by(&self, s: &Scored, conc: i64) -> bool {
        let r = &s.row;
        let topology = if self.multinode {
            r.decode_tp == self.tp
        } else {
            // EP only from the result name (meta_env.json says 1 whatever EP was, decision E4):
            // a name without it (sweepgate's own `eval_<point id>`) leaves EP unknown, not wrong.
            let named_ep = ep_from_result_name(&s.artifact);
            r.tp == self.tp && self.ep.is_none_or(|ep| named_ep.is_none_or(|named| named == ep))
        };
        r.model_prefix.eq_ignore_ascii_case(&self.model_prefix)
            && r.framework.eq_ignore_ascii_case(&self.framework)
            && r.precision.eq_ignore_ascii_case(&self.precision)
            && r.spec_decoding.eq_ignore_ascii_case(&self.spec_decoding)
            && affected::sku(&r.hw) == affected::sku(&self.runner)
            && topology
            && r.conc == conc
    }

    /// `TP8 EP8 c32`, `decode TP8 c64`: how the row names the point.
    fn label(&self, conc: i64) -> String {
        match (self.multinode, self.ep) {
            (true, _) => format!("decode TP{} c{conc}", self.tp),
            (false, Some(ep)) => format!("TP{} EP{ep} c{conc}", self.tp),
            (false, None) => format!("TP{} c{conc}", self.tp),
        }
    }
}

/// The evals the PR's sweep owes: the upstream processor's eval rows for the changelog entries
/// the PR appends (spec 20 §6 step 7, spec 40 §1.5), with the PR's eval labels. No appended
/// entry: none owed here (Check 1 decides whether a sweep was due). `Err`: the processor cannot
/// say, so a missing eval cannot be ruled out.
fn expected_evals(
    ev: &Evidence,
    configs: &[AffectedConfig],
    heads: &BTreeMap<String, Vec<String>>,
) -> Result<Vec<ExpectedEval>, Reason> {
    let Some(changelog) = generated::pr_changelog(ev)? else { return Ok(Vec::new()) };
    // Append-only entries run no evals (spec 20 §6 step 7), whatever Check 12 finds in them.
    let unlabelled = ProcessOptions { all_evals: false, evals_only: false, ..changelog.options };
    let only_appending = parse_additions(&changelog.additions, &changelog.path, unlabelled)
        .is_ok_and(|added| added.entries.iter().all(|e| e.append_only));
    if only_appending {
        return Ok(Vec::new());
    }
    let output = changelog.process(ev).map_err(|e| e.to_string())?;
    let fixed = output.evals.iter().map(|r| (r, true));
    let others = output.agentic_evals.iter().chain(&output.multinode_evals).chain(&output.multinode_agentic_evals);
    Ok(fixed
        .chain(others.map(|r| (r, false)))
        .filter_map(|(r, f)| ExpectedEval::from_row(r, f, configs, heads))
        .collect())
}

/// A problem for every owed eval point that no eval row of the run covers (spec 40 §1.8 step 3).
fn missing_evals(
    ev: &Evidence,
    configs: &[AffectedConfig],
    heads: &BTreeMap<String, Vec<String>>,
    rows: &[Scored],
) -> Vec<Value> {
    let expected = match expected_evals(ev, configs, heads) {
        Ok(expected) => expected,
        Err(why) => return vec![json!({"kind": "evals_expected_unknown", "reason": Value::from(why)})],
    };
    let mut out = Vec::new();
    for eval in &expected {
        for conc in &eval.concs {
            if !rows.iter().any(|s| eval.covered_by(s, *conc)) {
                let point = eval.label(*conc);
                if !out.iter().any(|p: &Value| p["config"] == eval.config.as_str() && p["point"] == point.as_str()) {
                    out.push(json!({"kind": "eval_missing", "config": eval.config, "point": point}));
                }
            }
        }
    }
    out
}

/// The runs whose eval rows form the ingested cohort: each affected config's published run
/// (`upstream.published_runs`, decision F6) and the main-branch (`push`) runs the bundle holds.
/// A published run that could not be looked up, or whose lookup the evidence does not record for
/// a config that exists at base, is a problem, never an empty cohort.
fn cohort_runs(ev: &Evidence, configs: &[AffectedConfig], qualifying: u64, problems: &mut Vec<Value>) -> Vec<u64> {
    let published = &ev.upstream.published_runs;
    let mut runs = BTreeSet::new();
    for config in configs {
        match published.get(&config.key).or_else(|| published.get("*")) {
            Some(Fact::Ok(Some(run))) => {
                runs.insert(run.run_id);
            }
            Some(Fact::Unavailable(reason)) => {
                problems.push(json!({"kind": "cohort_unknown", "config": config.key, "reason": reason}));
            }
            // A config at base has a published series: no record of its lookup is unknown, not
            // "no cohort" (as 18(g) reads it); a config new at head has none.
            None if crate::pr::generated::has_config(&ev.base, &config.key) => {
                problems.push(json!({"kind": "cohort_unrecorded", "config": config.key}));
            }
            Some(Fact::Ok(None)) | None => {}
        }
    }
    runs.extend(ev.runs.values().filter(|r| r.event == "push").map(|r| r.id));
    runs.remove(&qualifying);
    runs.into_iter().collect()
}

fn score_of(s: &Scored) -> Option<(f64, Option<f64>)> {
    assessed_score(&s.row)
}

/// 2σ findings of `row` against `others` (decision E6): below is a problem, above is noted
/// by the caller, an unknown σ is a problem (not a pass).
fn sigma_problems<'a>(row: &Scored, others: impl Iterator<Item = (&'a Scored, u64)>, scope: &str) -> Vec<Value> {
    let Some(own) = score_of(row) else { return Vec::new() };
    let mut out = Vec::new();
    for (other, run) in others {
        let Some(theirs) = score_of(other) else { continue };
        let kind = match two_sigma(own, theirs) {
            Consistency::Within | Consistency::Above => continue,
            Consistency::Below => "sigma_below",
            Consistency::Unknown => "sigma_unknown",
        };
        let limit = match (own.1, theirs.1) {
            (Some(a), Some(b)) => format!("{:.4}", 2.0 * (a * a + b * b).sqrt()),
            _ => "unknown".into(),
        };
        out.push(json!({
            "kind": kind, "scope": scope, "task": row.row.scores.task, "metric": row.metric(),
            "label": row.label, "value": format!("{:.4}", own.0),
            "other": other.label, "other_value": format!("{:.4}", theirs.0), "other_run": run, "limit": limit,
        }));
    }
    out
}

/// The conditional kernel paths the launch enables and whether the eval server logs prove
/// each ran: (problems, proofs).
fn kernel_path_findings(ev: &Evidence, run_id: u64, paths: &[KernelPath]) -> (Vec<Value>, Vec<Value>) {
    let (mut problems, mut proofs) = (Vec::new(), Vec::new());
    let logs = job_logs(ev, run_id);
    let mut unread_logs: Vec<Value> = ev.runs.get(&run_id).map_or_else(Vec::new, |run| {
        run.jobs.iter().filter(|(_, job)| matches!(job.log, Fact::Unavailable(_))).map(|(id, _)| json!(id)).collect()
    });
    // An unreadable job list hides every job log (fail closed, decision U9).
    if ev.runs.get(&run_id).is_some_and(|run| run.jobs_unavailable.is_some()) {
        unread_logs.push(reason("job_list_unreadable").arg("run", run_id).into());
    }
    let log_prefix = format!("{run_id}/");
    let server_logs: Vec<&str> = ev
        .artifacts
        .paths()
        .filter(|p| p.strip_prefix(&log_prefix).is_some_and(is_server_log_artifact) && !is_archive(p))
        .collect();
    for path in paths {
        let mut budget = MAX_SCAN_BYTES;
        let enabled_in_job = logs.iter().find_map(|(id, name, log)| {
            let m = eval_logs::find_line(log, &path.enabled_by, &mut budget)?;
            Some((json!({"job": id, "job_name": name}), m))
        });
        let enabled = enabled_in_job.or_else(|| {
            crate::pr::scan::changed(ev).find_map(|(file, _)| {
                let m = eval_logs::find_line(ev.head.get(&file.filename)?, &path.enabled_by, &mut budget)?;
                Some((json!({"file": file.filename}), m))
            })
        });
        let Some((enabled_at, enabling)) = enabled else {
            // A launch log the verifier could not read may hold the flag: unknown, not "off".
            if !unread_logs.is_empty() {
                problems.push(json!({
                    "kind": "kernel_trigger_unknown", "path": path.id, "name_en": path.name_en,
                    "name_zh": path.name_zh, "jobs": unread_logs, "pattern": path.enabled_by.as_str(),
                }));
            }
            continue;
        };
        let flag = path.enabled_by.find(&enabling.text).map_or(enabling.text.clone(), |m| m.as_str().to_owned());
        let mut budget = MAX_SCAN_BYTES;
        let proof = server_logs.iter().find_map(|file| {
            let m = eval_logs::find_line(ev.artifacts.get(file).unwrap_or_default(), &path.evidence, &mut budget)?;
            Some((file.strip_prefix(&log_prefix).unwrap_or(file), m))
        });
        let base = json!({
            "path": path.id, "name_en": path.name_en, "name_zh": path.name_zh, "flag": flag,
            "enabled_at": enabled_at, "enabled_line": enabling.line, "pattern": path.evidence.as_str(),
        });
        if let Some((file, m)) = proof {
            proofs.push(super::with_fields(base, json!({"file": file, "line": m.line})));
            continue;
        }
        let unreadable = unavailable_of(ev, run_id, is_server_log_artifact);
        let finding = if !unreadable.is_empty() {
            let (names, reasons): (Vec<String>, Vec<String>) = unreadable.into_iter().unzip();
            json!({"kind": "kernel_unreadable", "artifacts": names, "reason": reasons.first()})
        } else if server_logs.is_empty() {
            json!({"kind": "kernel_no_logs"})
        } else {
            json!({"kind": "kernel_not_shown", "files": server_logs.len()})
        };
        problems.push(super::with_fields(base, finding));
    }
    (problems, proofs)
}

pub fn check(cx: &Context) -> Outcome {
    let ev = cx.evidence;
    let Some(run) = crate::pr::sweep_runs::qualifying_run(ev) else { return Outcome::fail("no_run") };
    let policy = ev.policy_tree();
    let thresholds = match Layout::default().resolve(policy, Logical::EvalThresholds) {
        Ok(Some(path)) => match policy.text(&path).map(|t| EvalThresholds::parse(t, &path)) {
            Some(Ok(t)) => Some(t),
            Some(Err(diags)) => {
                return Outcome::unreadable(path.as_str(), diags.first().map(|d| d.to_string()).unwrap_or_default())
            }
            None => return Outcome::unreadable(path.as_str(), "not UTF-8 text"),
        },
        Ok(None) => None, // no thresholds file: upstream's --min-score applies to every task
        // A thresholds location the layout cannot resolve is not "no file": never the default.
        Err(e) => return Outcome::unreadable(reason("what_thresholds"), e.to_string()),
    };
    let table = match kernel_paths() {
        Ok(table) => table,
        Err(e) => return Outcome::unreadable("checks/02-kernel-paths.toml", e.clone()),
    };
    let configs = match affected::affected_configs(cx) {
        Ok(configs) => configs,
        Err(e) => return Outcome::unreadable(reason("what_pr_master_configs"), e),
    };
    let lookup = |prefix: Option<&str>, task: &str| {
        let (value, source) = match &thresholds {
            Some(t) => t.threshold(prefix, task, FALLBACK_MIN_SCORE),
            None => (FALLBACK_MIN_SCORE, ThresholdSource::MinScore),
        };
        Some(Threshold { value, source: source_name(source, prefix) })
    };
    let unavailable: Vec<String> =
        unavailable_of(ev, run.run_id, is_eval_results_artifact).into_iter().map(|(name, _)| name).collect();
    let sets = match read_sets(ev, run.run_id) {
        Ok(sets) => sets,
        Err(outcome) => return outcome,
    };
    let set_count: usize = sets.iter().map(|s| s.results.len()).sum();
    // Check 1 qualified a run without eval jobs only because the PR's matrix owes none (1.c).
    if set_count == 0 && unavailable.is_empty() && !run.evals_expected {
        return Outcome::pass("none_owed").arg("run", run.label()).evidence(run.evidence_line());
    }
    if set_count == 0 || !unavailable.is_empty() {
        return Outcome::fail("no_results")
            .arg("run", run.label())
            .arg("unavailable", unavailable)
            .evidence(run.evidence_line());
    }

    let mut problems = Vec::new();
    let mut passed = Vec::new();
    for set in &sets {
        let prefix = set.meta.as_ref().and_then(|(m, _)| m.model_prefix());
        for (_, results) in &set.results {
            let checks = check_scores(results, prefix, &lookup, FALLBACK_MIN_SCORE);
            if checks.is_empty() {
                problems.push(json!({"kind": "below", "artifact": set.artifact, "task": "(none)", "metric": "exact_match,*", "value": "missing", "threshold": FALLBACK_MIN_SCORE, "source": Value::from(reason("no_metric_matched"))}));
            }
            for c in checks {
                let row = json!({"kind": "below", "artifact": set.artifact, "task": c.task, "metric": c.metric, "value": format!("{:.4}", c.value), "threshold": c.threshold.value, "source": c.threshold.source, "raw": c.value});
                if c.passed {
                    passed.push(row);
                } else {
                    problems.push(row);
                }
            }
        }
        let Some((meta, raw)) = &set.meta else {
            problems.push(json!({"kind": "meta_missing", "artifact": set.artifact}));
            continue;
        };
        let rows: Vec<EvalRow> = scored(set).into_iter().map(|s| s.row).collect();
        for partial in partial_sets(&rows) {
            problems.push(json!({"kind": "partial", "artifact": set.artifact, "task": partial.task, "n_eff": partial.n_eff, "full": partial.full}));
        }
        let files: Vec<&str> = set.results.iter().map(|(f, _)| f.as_str()).collect();
        let expected: Vec<i64> = match raw.get("eval_concs").and_then(Value::as_array) {
            Some(concs) => concs.iter().filter_map(Value::as_i64).collect(),
            None => vec![name_concurrency(&set.artifact).unwrap_or(meta.conc)],
        };
        for problem in validate_batch_manifest(Some(raw), &files, &expected) {
            problems.push(json!({"kind": "manifest", "artifact": set.artifact, "problem": problem}));
        }
    }

    // The image the evals ran on, per affected config that has an eval set.
    let mut images = BTreeSet::new();
    let mut not_evaluated = Vec::new();
    let heads = result_heads(ev, &configs);
    for config in &configs {
        let evaluated = sets.iter().filter_map(|s| s.meta.as_ref()).any(|(m, _)| {
            m.infmax_model_prefix.eq_ignore_ascii_case(&config.model_prefix)
                && m.precision.eq_ignore_ascii_case(&config.precision)
                && m.framework.eq_ignore_ascii_case(&config.framework)
                && affected::sku(&m.hw) == affected::sku(&config.runner)
        });
        if !evaluated {
            // Which evals a config owes is spec 40 §1.5 (not decided here); the row says it.
            not_evaluated.push(config.key.clone());
            continue;
        }
        let (seen, ambiguous) = eval_images(ev, run.run_id, config, &configs, &heads);
        if seen.is_empty() {
            problems.push(json!({"kind": "image_unknown", "config": config.key, "config_image": config.image, "ambiguous": ambiguous}));
        }
        for (image, source) in seen {
            if same_image(&config.image, &image) {
                images.insert(config.image.clone());
            } else {
                problems.push(json!({"kind": "image_mismatch", "config": config.key, "config_image": config.image, "eval_image": image, "source": source}));
            }
        }
    }

    // 2σ consistency with in-run siblings and with the ingested cohort.
    let rows: Vec<Scored> = sets.iter().flat_map(scored).collect();
    let cohort_ids = cohort_runs(ev, &configs, run.run_id, &mut problems);
    let mut cohort: Vec<(Scored, u64)> = Vec::new();
    for id in &cohort_ids {
        let names: Vec<String> =
            unavailable_of(ev, *id, is_eval_results_artifact).into_iter().map(|(name, _)| name).collect();
        if !names.is_empty() {
            problems.push(json!({"kind": "cohort_unavailable", "run": id, "artifacts": names}));
        }
        match read_sets(ev, *id) {
            Ok(sets) => cohort.extend(sets.iter().flat_map(scored).map(|s| (s, *id))),
            Err(outcome) => problems
                .push(json!({"kind": "cohort_unreadable", "run": id, "reason": outcome.message.args.get("reason")})),
        }
    }
    problems.extend(missing_evals(ev, &configs, &heads, &rows));
    let mut compared = BTreeSet::new();
    for row in rows.iter().filter(|r| score_of(r).is_none()) {
        problems.push(json!({"kind": "no_score", "artifact": row.artifact, "task": row.row.scores.task}));
    }
    for row in &rows {
        let siblings = rows.iter().filter(|o| o.identity() == row.identity() && o.label != row.label);
        problems.extend(sigma_problems(row, siblings.map(|o| (o, run.run_id)), "sibling"));
        let exact: Vec<(&Scored, u64)> = cohort
            .iter()
            .filter(|(o, _)| o.identity() == row.identity() && o.topology() == row.topology())
            .map(|(o, id)| (o, *id))
            .collect();
        compared.extend(exact.iter().map(|(_, id)| *id));
        problems.extend(sigma_problems(row, exact.into_iter(), "cohort"));
    }
    let scores: Vec<Value> = rows
        .iter()
        .filter_map(|s| {
            let (value, _) = score_of(s)?;
            Some(json!({"task": s.row.scores.task, "metric": s.metric(), "value": format!("{value:.4}"), "label": s.label, "artifact": s.artifact}))
        })
        .collect();

    let (kernel_problems, proofs) = kernel_path_findings(ev, run.run_id, table);
    problems.extend(kernel_problems);
    let images: Vec<String> = images.into_iter().collect();
    let compared: Vec<u64> = compared.into_iter().collect();
    if !problems.is_empty() {
        let kind = |p: &Value| p["kind"].as_str().unwrap_or_default().to_owned();
        let accuracy_ok = problems.iter().all(|p| kind(p).starts_with("kernel_"));
        let unverified = problems.iter().all(|p| UNVERIFIED.contains(&kind(p).as_str()));
        return Outcome::fail("failed")
            .arg("problems", problems)
            .arg("unverified", unverified)
            .arg("accuracy_ok", accuracy_ok)
            .arg("scores", scores)
            .arg("images", images)
            .arg("cohort_runs", compared.clone())
            .arg("run", run.label())
            .evidence(run.evidence_line());
    }
    let lowest = passed.iter().min_by(|a, b| {
        let margin = |r: &Value| r["raw"].as_f64().unwrap_or(0.0) - r["threshold"].as_f64().unwrap_or(0.0);
        margin(a).total_cmp(&margin(b))
    });
    Outcome::pass("passed")
        .arg("count", set_count)
        .arg("run", run.label())
        .arg("lowest", lowest.cloned())
        .arg("scores", scores)
        .arg("images", images)
        .arg("cohort_runs", compared.clone())
        .arg("proofs", proofs)
        .arg("not_evaluated", not_evaluated)
        .evidence(run.evidence_line())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, run, with_change};
    use crate::checks::Status;
    use crate::evidence::{Job, WorkflowRun};

    const META: &str = r#"{"is_multinode": false, "framework": "sglang", "precision": "fp8", "spec_decoding": "none", "tp": 8, "conc": 64, "ep": 1, "dp_attention": false, "model": "Qwen/Qwen3.5-397B-A17B-FP8", "infmax_model_prefix": "qwen3.5", "hw": "h200", "isl": "8192", "osl": "1024"}"#;
    const THRESHOLDS: &str = "default:\n  gsm8k: 0.90\nmodels:\n  qwen3.5:\n    gsm8k: 0.94\n";
    const MASTER: &str = "qwen3.5-fp8-h200-sglang:\n  image: lmsysorg/sglang:v0.5.9-cu130\n  model: Qwen/Qwen3.5-397B-A17B-FP8\n  model-prefix: qwen3.5\n  runner: h200\n  precision: fp8\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-list: [32, 64] }\n";
    const RUN: u64 = 7;

    fn results(strict: f64, se: f64, n_eff: i64) -> String {
        format!(
            r#"{{"results": {{"gsm8k": {{"alias": "gsm8k", "exact_match,strict-match": {strict}, "exact_match_stderr,strict-match": {se}, "exact_match,flexible-extract": 0.97}}}}, "configs": {{"gsm8k": {{"metric_list": [{{"metric": "exact_match"}}], "filter_list": [{{"name": "strict-match"}}, {{"name": "flexible-extract"}}]}}}}, "n-samples": {{"gsm8k": {{"original": 1319, "effective": {n_eff}}}}}, "lm_eval_version": "0.4.9"}}"#
        )
    }

    fn artifact(conc: i64) -> String {
        format!("eval_qwen3.5_8k1k_qwen3.5_8k1k_fp8_sglang_tp8-ep8_conc{conc}_h200-nb_1")
    }

    /// One eval set of `run` at `conc`.
    fn add_set(e: &mut Evidence, run: u64, conc: i64, strict: f64, se: f64, n_eff: i64) {
        let dir = format!("{run}/{}", artifact(conc));
        e.artifacts.insert(format!("{dir}/meta_env.json"), META.replace("\"conc\": 64", &format!("\"conc\": {conc}")));
        e.artifacts.insert(format!("{dir}/results_2026-08-21T16-23-10.json"), results(strict, se, n_eff));
    }

    fn workflow(id: u64, event: &str) -> WorkflowRun {
        WorkflowRun {
            id,
            name: "Run Sweep".into(),
            path: ".github/workflows/run-sweep.yml".into(),
            head_sha: "b".repeat(40),
            event: event.into(),
            status: "completed".into(),
            conclusion: Some("success".into()),
            artifacts: Default::default(),
            archives: Default::default(),
            jobs: Default::default(),
            sweep_id: None,
            jobs_unavailable: None,
        }
    }

    /// A qualifying run 7 with one full, passing eval set (no master config: no image to compare).
    fn with_eval(strict: Option<f64>) -> Evidence {
        let mut e = evidence();
        e.check_runs.insert(
            "b".repeat(40),
            Fact::Ok(vec![run("single-node 8k1k / x", "success", RUN), run("eval / x", "success", RUN)]),
        );
        e.base.insert("utils/evals/thresholds.yaml", THRESHOLDS);
        if let Some(strict) = strict {
            add_set(&mut e, RUN, 64, strict, 0.0053, 1319);
        }
        e
    }

    /// `with_eval` plus the PR's master config and an eval job log naming it and `image`.
    fn with_config(image: Option<&str>) -> Evidence {
        let mut e = with_change(
            with_eval(Some(0.9613)),
            "configs/amd-master.yaml",
            "@@ -1,0 +1,1 @@\n+qwen3.5-fp8-h200-sglang:\n",
        );
        e.head.insert("configs/amd-master.yaml", MASTER);
        let mut w = workflow(RUN, "pull_request");
        if let Some(image) = image {
            w.jobs
                .insert(41, Job { name: "eval / qwen3.5-fp8-h200-sglang".into(), conclusion: None, log: Fact::Ok(()) });
            e.artifacts.insert(
                format!("{RUN}/job-logs/41.log"),
                format!("2026-08-21T10:00:00Z with:\n2026-08-21T10:00:00Z   config-key: qwen3.5-fp8-h200-sglang\n2026-08-21T10:00:00Z   image: {image}\n"),
            );
        }
        e.runs.insert(RUN, w);
        e
    }

    fn outcome(e: &Evidence) -> Outcome {
        check(&Context::new(e))
    }

    /// Every problem kind the `failed` message branches on renders in both languages with the
    /// arguments the code gives it (both shapes of `source` and `enabled_at`): "undefined value"
    /// cannot reach a verdict. The template's kinds are read from the catalog, so a new branch
    /// without an example here fails.
    #[test]
    fn every_problem_kind_renders_in_both_languages() {
        let sigma = |kind: &str, scope: &str| {
            json!({"kind": kind, "scope": scope, "task": "gsm8k", "metric": "exact_match,strict-match",
            "label": "c8", "value": "0.9100", "other": "c16", "other_value": "0.9500", "other_run": 3, "limit": "0.0200"})
        };
        let kernel = |finding: Value, enabled_at: Value| {
            let base = json!({"path": "p", "name_en": "FP8 KV cache", "name_zh": "FP8 KV 缓存", "flag": "--kv-cache-dtype fp8",
                "enabled_at": enabled_at, "enabled_line": 4, "pattern": "kv_cache_dtype=fp8"});
            crate::checks::with_fields(base, finding)
        };
        let manifest = |problem: Value| json!({"kind": "manifest", "artifact": "eval_x", "problem": problem});
        let mut problems = vec![
            json!({"kind": "below", "artifact": "eval_x", "task": "gsm8k", "metric": "exact_match,*", "value": "missing", "threshold": 0.9, "source": "default"}),
            json!({"kind": "partial", "artifact": "eval_x", "task": "gsm8k", "n_eff": null, "full": 1319}),
            json!({"kind": "partial", "artifact": "eval_x", "task": "gsm8k", "n_eff": 100, "full": 1319}),
            json!({"kind": "eval_missing", "config": "c", "point": "TP8 c196"}),
            json!({"kind": "evals_expected_unknown", "reason": "r"}),
            json!({"kind": "no_score", "artifact": "eval_x", "task": "gsm8k"}),
            json!({"kind": "meta_missing", "artifact": "eval_x"}),
            json!({"kind": "image_unknown", "config": "c", "config_image": "i:1", "ambiguous": []}),
            json!({"kind": "image_unknown", "config": "c", "config_image": "i:1", "ambiguous": ["bmk_x", "bmk_y"]}),
            json!({"kind": "image_mismatch", "config": "c", "config_image": "i:1", "eval_image": "i:2", "source": {"job": 5, "line": 9}}),
            json!({"kind": "image_mismatch", "config": "c", "config_image": "i:1", "eval_image": "i:2", "source": {"artifact": "bmk_x"}}),
            sigma("sigma_below", "sibling"),
            sigma("sigma_below", "cohort"),
            sigma("sigma_unknown", "sibling"),
            sigma("sigma_unknown", "cohort"),
            json!({"kind": "cohort_unknown", "config": "c", "reason": "r"}),
            json!({"kind": "cohort_unrecorded", "config": "c"}),
            json!({"kind": "cohort_unavailable", "run": 3, "artifacts": ["eval_x"]}),
            json!({"kind": "cohort_unreadable", "run": 3, "reason": "r"}),
            json!({"kind": "kernel_trigger_unknown", "path": "p", "name_en": "n", "name_zh": "n", "jobs": [5], "pattern": "x"}),
        ];
        for at in [json!({"job": 5, "job_name": "eval / x"}), json!({"file": "benchmarks/x.sh"})] {
            problems.push(kernel(
                json!({"kind": "kernel_unreadable", "artifacts": ["eval_server_logs_x"], "reason": "HTTP 410"}),
                at.clone(),
            ));
            problems.push(kernel(json!({"kind": "kernel_no_logs"}), at.clone()));
            problems.push(kernel(json!({"kind": "kernel_not_shown", "files": 2}), at));
        }
        for b in [
            json!({"kind": "meta_unreadable"}),
            json!({"kind": "expected_concs_invalid"}),
            json!({"kind": "several_expected_without_batch", "expected": [8, 16]}),
            json!({"kind": "conc_mismatch", "meta_conc": 8, "expected": 16}),
            json!({"kind": "result_file_count", "found": 2}),
            json!({"kind": "list_invalid", "field": "eval_concs"}),
            json!({"kind": "duplicate_concs", "field": "eval_concs"}),
            json!({"kind": "eval_concs_mismatch", "eval_concs": [8], "expected": [16]}),
            json!({"kind": "failed_concs", "failed": [8]}),
            json!({"kind": "missing_completed", "missing": [8]}),
            json!({"kind": "unexpected_completed", "unexpected": [8]}),
            json!({"kind": "result_without_conc_suffix", "file": "results.json"}),
            json!({"kind": "result_concs_mismatch", "found": [8], "expected": [16]}),
        ] {
            problems.push(manifest(b));
        }
        let template = crate::checks::Catalog::embedded().message(2, "failed").expect("failed message");
        let kind = regex::Regex::new(r"[pb]\.kind == '([a-z_]+)'").unwrap();
        let covered: BTreeSet<String> = problems
            .iter()
            .flat_map(|p| [p["kind"].as_str(), p["problem"]["kind"].as_str()])
            .flatten()
            .map(str::to_owned)
            .collect();
        for text in [&template.en, &template.zh] {
            for k in kind.captures_iter(text) {
                assert!(covered.contains(&k[1]), "problem kind {} has no example here", &k[1]);
            }
        }
        for p in problems {
            for (accuracy_ok, images) in [(true, json!(["i:1"])), (false, json!([]))] {
                let o = Outcome::fail("failed")
                    .arg("problems", vec![p.clone()])
                    .arg("unverified", false)
                    .arg("accuracy_ok", accuracy_ok)
                    .arg("scores", json!([{"task": "gsm8k", "metric": "em", "value": "0.95", "label": "c8"}]))
                    .arg("images", images)
                    .arg("cohort_runs", json!([3]))
                    .arg("run", "run 7");
                crate::checks::tests_support::assert_renders(2, &o);
            }
        }
    }

    fn kinds(o: &Outcome) -> Vec<String> {
        o.message.args["problems"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| p["kind"].as_str().unwrap_or("").to_owned())
            .collect()
    }

    #[test]
    fn the_embedded_kernel_path_table_loads() {
        let table = kernel_paths().as_ref().expect("checks/02-kernel-paths.toml loads");
        assert!(table.iter().any(|k| k.id == "amd-monokernel"));
    }

    #[test]
    fn scores_at_or_above_the_model_bar_pass() {
        let o = outcome(&with_eval(Some(0.9613)));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["lowest"]["source"], "models.qwen3.5");
        assert_eq!(outcome(&with_eval(Some(0.94))).status, Status::Pass, "equality passes");
    }

    #[test]
    fn a_score_below_the_model_bar_fails_with_numbers() {
        let o = outcome(&with_eval(Some(0.9312)));
        assert_eq!((o.status, kinds(&o)), (Status::Fail, vec!["below".to_owned()]));
        assert_eq!(o.message.args["problems"][0]["value"], "0.9312");
        assert_eq!(o.message.args["problems"][0]["threshold"], 0.94);
        assert_eq!(o.message.args["accuracy_ok"], false);
    }

    #[test]
    fn missing_or_undownloadable_results_fail() {
        assert_eq!(outcome(&with_eval(None)).message.key, "no_results");
        assert_eq!(outcome(&evidence()).message.key, "no_run");
        let mut e = with_eval(Some(0.96));
        e.artifacts = Default::default();
        let mut w = workflow(RUN, "pull_request");
        w.artifacts.insert("eval_x".into(), Fact::Unavailable("HTTP 410 expired".into()));
        e.runs.insert(RUN, w);
        let o = outcome(&e);
        assert_eq!(o.message.args["unavailable"][0], "eval_x");
    }

    /// `with_config` whose PR appends a changelog entry for its config (TP8/EP8 at c16, c32 and
    /// c64): the processor owes evals at the highest and upper-median, c64 and c32 (spec 40 §1.5).
    fn with_owed_evals(entry_extra: &str) -> Evidence {
        let mut e = with_config(Some("lmsysorg/sglang:v0.5.9-cu130"));
        let old = "- config-keys:\n  - qwen3.5-fp8-h200-sglang\n  description:\n  - first\n  pr-link: https://github.com/o/r/pull/1\n";
        let added = format!("- config-keys:\n  - qwen3.5-fp8-h200-sglang\n  description:\n  - second\n  pr-link: https://github.com/o/r/pull/2\n{entry_extra}");
        let master = MASTER.replace("{ tp: 8, conc-list: [32, 64] }", "{ tp: 8, ep: 8, conc-list: [16, 32, 64] }");
        // A config new at head (none at base): no published series, so no cohort to look up.
        e.head.insert("configs/amd-master.yaml", master);
        e.head.insert("configs/nvidia-master.yaml", "{}\n");
        e.head.insert("configs/runners.yaml", "labels:\n  h200: [h200-nb_1]\n");
        e.base.insert("perf-changelog.yaml", old);
        e.head.insert("perf-changelog.yaml", format!("{old}{added}"));
        let lines = added.lines().count();
        let patch: String = added.lines().map(|l| format!("+{l}\n")).collect();
        with_change(e, "perf-changelog.yaml", &format!("@@ -5,0 +6,{lines} @@\n{patch}"))
    }

    #[test]
    fn every_eval_the_matrix_owes_has_a_result() {
        // Only c64 was evaluated: the owed c32 is missing, named by config and point.
        let e = with_owed_evals("");
        let o = outcome(&e);
        assert_eq!(o.status, Status::Fail, "{:?}", o.message);
        assert_eq!(kinds(&o), ["eval_missing"]);
        let problem = &o.message.args["problems"][0];
        assert_eq!(
            (problem["config"].as_str(), problem["point"].as_str()),
            (Some("qwen3.5-fp8-h200-sglang"), Some("TP8 EP8 c32"))
        );
        // Both owed points evaluated: PASS.
        let mut e = with_owed_evals("");
        add_set(&mut e, RUN, 32, 0.9613, 0.0053, 1319);
        assert_eq!(outcome(&e).status, Status::Pass, "{:?}", outcome(&e).message.args);
        // A result name without EP (sweepgate's own `eval_<point id>`) leaves EP unknown: it covers.
        let mut e = with_owed_evals("");
        let dir = format!("{RUN}/eval_eval-0001");
        e.artifacts.insert(format!("{dir}/meta_env.json"), META.replace("\"conc\": 64", "\"conc\": 32"));
        e.artifacts.insert(format!("{dir}/results_2026-08-21T16-23-10.json"), results(0.9613, 0.0053, 1319));
        assert_eq!(outcome(&e).status, Status::Pass, "{:?}", outcome(&e).message.args);
        // An append-only entry owes no evals (spec 20 §6 step 7).
        assert_eq!(outcome(&with_owed_evals("  append-only: true\n")).status, Status::Pass);
        // Generator inputs that do not parse: the owed evals are unknown, never "none".
        let mut e = with_owed_evals("");
        add_set(&mut e, RUN, 32, 0.9613, 0.0053, 1319);
        e.head.insert("configs/runners.yaml", "labels: [unclosed\n");
        assert_eq!(kinds(&outcome(&e)), ["evals_expected_unknown"]);
    }

    #[test]
    fn a_config_at_base_without_a_recorded_published_run_has_an_unknown_cohort() {
        let mut e = with_owed_evals("");
        add_set(&mut e, RUN, 32, 0.9613, 0.0053, 1319);
        e.base.insert("configs/amd-master.yaml", MASTER);
        e.base.insert("configs/nvidia-master.yaml", "{}\n");
        assert_eq!(kinds(&outcome(&e)), ["cohort_unrecorded"]);
        // The collector looked and found none recorded as such: nothing to compare, PASS.
        e.upstream.published_runs.insert("qwen3.5-fp8-h200-sglang".into(), Fact::Ok(None));
        assert_eq!(outcome(&e).status, Status::Pass);
    }

    #[test]
    fn corrupt_results_are_unreadable_not_passing() {
        let mut e = with_eval(Some(0.96));
        e.artifacts.insert(format!("{RUN}/{}/results_2026-08-21T16-23-10.json", artifact(64)), "{not json");
        assert_eq!(outcome(&e).message.key, "unreadable");
    }

    #[test]
    fn a_partial_eval_limit_set_fails_and_the_full_split_passes() {
        let mut e = with_eval(None);
        add_set(&mut e, RUN, 64, 0.9613, 0.0053, 250);
        let o = outcome(&e);
        assert_eq!(kinds(&o), ["partial"]);
        assert_eq!(
            (o.message.args["problems"][0]["n_eff"].as_i64(), o.message.args["problems"][0]["full"].as_i64()),
            (Some(250), Some(1319))
        );
    }

    #[test]
    fn the_batch_manifest_is_validated() {
        let mut e = with_eval(None);
        let dir = format!("{RUN}/{}", artifact(32));
        let meta = META.replace(
            "\"conc\": 64",
            "\"conc\": 32, \"eval_concs\": [32, 64], \"completed_eval_concs\": [32], \"failed_eval_concs\": [64]",
        );
        e.artifacts.insert(format!("{dir}/meta_env.json"), meta.clone());
        e.artifacts.insert(format!("{dir}/results_x_conc32.json"), results(0.9613, 0.0053, 1319));
        let o = outcome(&e);
        assert_eq!(o.status, Status::Fail);
        let problems: Vec<&str> = o.message.args["problems"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["problem"]["kind"].as_str())
            .collect();
        assert_eq!(problems, ["failed_concs", "missing_completed", "result_concs_mismatch"]);
        // Complete: both concurrencies completed, one results file each.
        let complete =
            meta.replace("\"completed_eval_concs\": [32]", "\"completed_eval_concs\": [32, 64]").replace("[64]", "[]");
        e.artifacts.insert(format!("{dir}/meta_env.json"), complete);
        e.artifacts.insert(format!("{dir}/results_x_conc64.json"), results(0.9620, 0.0053, 1319));
        let o = outcome(&e);
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["scores"].as_array().map(Vec::len), Some(2), "one score per concurrency");
    }

    #[test]
    fn the_eval_image_must_be_the_configs_image() {
        let o = outcome(&with_config(Some("lmsysorg/sglang:v0.5.9-cu130")));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["images"], json!(["lmsysorg/sglang:v0.5.9-cu130"]));
        let o = outcome(&with_config(Some("lmsysorg/sglang:v0.5.8-cu130")));
        assert_eq!(kinds(&o), ["image_mismatch"]);
        assert_eq!(o.message.args["problems"][0]["source"]["job"], 41);
        // No job log and no same-run bmk_* aggregate: unknown, never assumed equal.
        let o = outcome(&with_config(None));
        assert_eq!(kinds(&o), ["image_unknown"]);
        assert_eq!(o.message.args["unverified"], true);
        // The same-run benchmark aggregate is a source too; a digest-pinned config compares tags.
        let mut e = with_config(None);
        e.artifacts.insert(
            format!("{RUN}/bmk_q_c64/agg_q_c64.json"),
            r#"{"hw": "h200-nb", "image": "lmsysorg/sglang:v0.5.9-cu130", "infmax_model_prefix": "qwen3.5", "framework": "sglang", "precision": "fp8"}"#,
        );
        assert_eq!(outcome(&e).status, Status::Pass);
        // A second affected config of the same model, SKU and engine on another image: the
        // aggregate could be either's, so it is ambiguous evidence, never the other's image.
        let second =
            MASTER.replace("qwen3.5-fp8-h200-sglang:", "qwen3.5-fp8-h200-sglang-b:").replace("v0.5.9-cu130", "v0.6.0");
        e.head.insert("configs/amd-master.yaml", format!("{MASTER}{second}"));
        for file in e.files.iter_mut().filter(|f| f.filename == "configs/amd-master.yaml") {
            file.patch = Some(
                "@@ -1,0 +1,1 @@\n+qwen3.5-fp8-h200-sglang:\n@@ -15,0 +15,1 @@\n+qwen3.5-fp8-h200-sglang-b:\n".into(),
            );
        }
        let o = outcome(&e);
        let unknown: Vec<&Value> =
            o.message.args["problems"].as_array().unwrap().iter().filter(|p| p["kind"] == "image_unknown").collect();
        assert_eq!(unknown.len(), 2, "{o:?}");
        assert!(unknown.iter().all(|p| p["ambiguous"] == json!(["bmk_q_c64"])), "{o:?}");
        let [en, _] = crate::checks::tests_support::assert_renders(2, &o);
        assert!(en.contains("bmk_q_c64 could belong to several of the PR's configs"), "{en}");
        assert!(same_image("lmsysorg/sglang:v1@sha256:aa", "docker.io/lmsysorg/sglang:v1"));
        assert!(!same_image("lmsysorg/sglang:v1@sha256:aa", "lmsysorg/sglang:v1@sha256:bb"));
    }

    /// Issue 28 item 2: two configs of one model, SKU and engine on two images in one run. Each
    /// aggregate belongs to the config whose rows generate its result filename
    /// (benchmark-tmpl.yml:278), so each config's image is read from its own results and neither
    /// is blamed on the other; swapped images are each a mismatch.
    #[test]
    fn aggregates_are_attributed_by_their_result_filename() {
        let two = |image_of_tp8: &str, image_of_tp4: &str| {
            let mut e = with_config(None);
            let second = MASTER
                .replace("qwen3.5-fp8-h200-sglang:", "qwen3.5-fp8-h200-sglang-b:")
                .replace("v0.5.9-cu130", "v0.6.0")
                .replace("tp: 8", "tp: 4");
            e.head.insert("configs/amd-master.yaml", format!("{MASTER}{second}"));
            e.head.insert("configs/runners.yaml", "labels:\n  h200: [h200-nb_1]\n");
            e.head.insert("configs/nvidia-master.yaml", "{}\n");
            for file in e.files.iter_mut().filter(|f| f.filename == "configs/amd-master.yaml") {
                file.patch = Some(
                    "@@ -1,0 +1,1 @@\n+qwen3.5-fp8-h200-sglang:\n@@ -15,0 +15,1 @@\n+qwen3.5-fp8-h200-sglang-b:\n"
                        .into(),
                );
            }
            let rf = |tp: u8| {
                format!(
                    "qwen3.5_8k1k_fp8_sglang_tp{tp}-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc64_h200-nb_1"
                )
            };
            for (tp, image) in [(8, image_of_tp8), (4, image_of_tp4)] {
                e.artifacts.insert(
                    format!("{RUN}/bmk_{}/agg_{}.json", rf(tp), rf(tp)),
                    format!(r#"{{"hw": "h200", "image": "{image}", "infmax_model_prefix": "qwen3.5", "framework": "sglang", "precision": "fp8"}}"#),
                );
            }
            let o = outcome(&e);
            let problems = o.message.args.get("problems").and_then(Value::as_array).cloned().unwrap_or_default();
            let images: Vec<(String, String)> = problems
                .iter()
                .filter(|p| p["kind"].as_str().is_some_and(|k| k.starts_with("image_")))
                .map(|p| {
                    (
                        p["kind"].as_str().unwrap_or_default().to_owned(),
                        p["config"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect();
            images
        };
        assert_eq!(two("lmsysorg/sglang:v0.5.9-cu130", "lmsysorg/sglang:v0.6.0"), []);
        assert_eq!(
            two("lmsysorg/sglang:v0.6.0", "lmsysorg/sglang:v0.5.9-cu130"),
            [
                ("image_mismatch".to_owned(), "qwen3.5-fp8-h200-sglang".to_owned()),
                ("image_mismatch".to_owned(), "qwen3.5-fp8-h200-sglang-b".to_owned())
            ]
        );
    }

    /// A job log of config `k-tp4` does not name config `k` (its image was read for both).
    #[test]
    fn a_config_key_is_named_as_a_whole_word() {
        assert!(names_key("eval / qwen3.5-fp8-h200-sglang tp8", "qwen3.5-fp8-h200-sglang"));
        assert!(names_key("config-key: qwen3.5-fp8-h200-sglang\n", "qwen3.5-fp8-h200-sglang"));
        assert!(!names_key("eval / qwen3.5-fp8-h200-sglang-tp4 tp4", "qwen3.5-fp8-h200-sglang"));
        assert!(!names_key("config-key: xqwen3.5-fp8-h200-sglang", "qwen3.5-fp8-h200-sglang"));
        assert!(!names_key("anything", ""));
    }

    #[test]
    fn scores_are_two_sigma_consistent_with_siblings_and_the_cohort() {
        // In-run: c32 is 0.0193 below c64, against a 2σ limit of 0.0150 (both above the 0.94 bar).
        let mut e = with_eval(Some(0.9613));
        add_set(&mut e, RUN, 32, 0.9420, 0.0053, 1319);
        let o = outcome(&e);
        assert_eq!(kinds(&o), ["sigma_below"]);
        let p = &o.message.args["problems"][0];
        assert_eq!(
            (p["label"].as_str(), p["other"].as_str(), p["scope"].as_str()),
            (Some("TP8 c32"), Some("TP8 c64"), Some("sibling"))
        );
        // Consistent siblings, and the config's published run: its exact cohort row (same TP/EP).
        let mut e = with_config(Some("lmsysorg/sglang:v0.5.9-cu130"));
        add_set(&mut e, RUN, 32, 0.9590, 0.0053, 1319);
        e.upstream.published_runs.insert(
            "*".into(),
            Fact::Ok(Some(crate::evidence::PublishedRun { run_id: 5, pr: 1, source: "main".into(), merged_at: None })),
        );
        add_set(&mut e, 5, 64, 0.9612, 0.0053, 1319);
        let o = outcome(&e);
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["cohort_runs"], json!([5]));
        add_set(&mut e, 5, 64, 0.9900, 0.0030, 1319);
        let o = outcome(&e);
        assert_eq!(kinds(&o), ["sigma_below", "sigma_below"], "both rows are below the cohort row");
        assert_eq!(o.message.args["problems"][0]["other_run"], 5);
        // A cohort the collector could not look up is a problem, never an empty cohort.
        e.upstream.published_runs.insert("*".into(), Fact::Unavailable("HTTP 502".into()));
        assert_eq!(kinds(&outcome(&e)), ["cohort_unknown"]);
    }

    /// Run 7 with an eval job log that launches with `--monokernel-backend amd`, and a server-log
    /// artifact holding `log` (or, for `None`, a nested tarball that did not extract).
    fn with_kernel_path(log: Option<&str>) -> Evidence {
        let mut e = with_eval(Some(0.9613));
        let mut w = workflow(RUN, "pull_request");
        w.jobs.insert(9, Job { name: "eval / x".into(), conclusion: None, log: Fact::Ok(()) });
        e.artifacts.insert(
            format!("{RUN}/job-logs/9.log"),
            "+ python3 -m sglang.launch_server --tp 8 --monokernel-backend amd\n",
        );
        w.artifacts.insert("eval_server_logs_x".into(), Fact::Ok(()));
        match log {
            Some(text) => e.artifacts.insert(format!("{RUN}/eval_server_logs_x/logs.tar.gz.d/server.log"), text),
            None => {
                w.archives.insert(
                    "eval_server_logs_x/logs.tar.gz".into(),
                    Fact::Unavailable("not a readable gzip archive".into()),
                );
            }
        }
        e.runs.insert(RUN, w);
        e
    }

    #[test]
    fn a_conditional_kernel_path_needs_its_log_line() {
        let o = outcome(&with_kernel_path(None));
        assert_eq!(kinds(&o), ["kernel_unreadable"]);
        let p = &o.message.args["problems"][0];
        assert_eq!(p["artifacts"], json!(["eval_server_logs_x/logs.tar.gz"]));
        assert_eq!(p["flag"], "--monokernel-backend amd");
        assert_eq!(
            (o.message.args["accuracy_ok"].as_bool(), o.message.args["unverified"].as_bool()),
            (Some(true), Some(true))
        );
        let o = outcome(&with_kernel_path(Some("[TP0] decode batch\n")));
        assert_eq!(kinds(&o), ["kernel_not_shown"]);
        assert_eq!(o.message.args["problems"][0]["pattern"], r"monokernel \S+ on gfx\d+ runs target_verify");
        assert_eq!(o.message.args["unverified"], false);
        let routed = "[TP0] start\n\u{1b}[32m[TP0] monokernel k_hip on gfx950 runs target_verify steps\u{1b}[0m\n";
        let o = outcome(&with_kernel_path(Some(routed)));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["proofs"][0]["line"], 2);
        // No server-log artifact at all.
        let mut e = with_kernel_path(Some(routed));
        e.artifacts = e
            .artifacts
            .paths()
            .filter(|p| !p.contains("server_logs"))
            .map(|p| (p.to_owned(), e.artifacts.get(p).unwrap_or_default().to_vec()))
            .fold(Default::default(), |mut t: crate::repo::MemTree, (p, b)| {
                t.insert(p, b);
                t
            });
        assert_eq!(kinds(&outcome(&e)), ["kernel_no_logs"]);
        // A launch without the flag needs nothing.
        let mut e = with_kernel_path(None);
        e.artifacts.insert(format!("{RUN}/job-logs/9.log"), "+ python3 -m sglang.launch_server --tp 8\n");
        assert_eq!(outcome(&e).status, Status::Pass);
        // A launch log that could not be downloaded may hold the flag: unknown, not "off".
        if let Some(w) = e.runs.get_mut(&RUN) {
            w.jobs.insert(
                10,
                Job { name: "eval / y".into(), conclusion: None, log: Fact::Unavailable("HTTP 500".into()) },
            );
        }
        let o = outcome(&e);
        assert_eq!(kinds(&o), ["kernel_trigger_unknown"]);
        assert_eq!(o.message.args["problems"][0]["jobs"], json!([10]));
    }
}
