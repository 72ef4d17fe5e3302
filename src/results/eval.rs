//! Eval artifacts (spec 40 §1): `meta_env.json`, lm-eval results JSON, `agg_eval_all.json`
//! rows, the `validate_scores.py` threshold rule, batch manifests, and the pieces of Check 2
//! (assessed score, 2σ consistency, full-set size). Pure: callers pass file contents.

use std::fmt;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{parse_json, ArtifactError};

/// Largest eval JSON read (real lm-eval results are ~50 KB; `agg_eval_all.json` a few MB).
pub const MAX_EVAL_JSON_BYTES: usize = 32 * 1024 * 1024;
/// `validate_scores.py --min-score` default.
pub const FALLBACK_MIN_SCORE: f64 = 0.85;

/// `meta_env.json` as `_write_lm_eval_meta_json` writes it (§1.2). Types are strict; extra keys
/// written by newer producers are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct MetaEnv {
    pub is_multinode: bool,
    pub framework: String,
    pub precision: String,
    pub spec_decoding: String,
    #[serde(default)]
    pub recipe_fingerprint: String,
    pub tp: i64,
    #[serde(default = "one")]
    pub pp: i64,
    #[serde(default = "one")]
    pub dcp_size: i64,
    #[serde(default = "one")]
    pub pcp_size: i64,
    pub conc: i64,
    /// Quirk: 1 on single-node runs whatever `EP_SIZE` was; see [`ep_from_result_name`].
    pub ep: i64,
    pub dp_attention: bool,
    pub model: String,
    pub infmax_model_prefix: String,
    pub hw: String,
    /// Strings on the wire (`"8192"`; AgentX writes `"0"`).
    pub isl: String,
    pub osl: String,
    /// `prefill_*` / `decode_*` (mirrors of the aggregate worker on single-node runs), the
    /// batch lists' neighbours and any key a newer producer adds; read with [`MetaEnv::int`]
    /// and [`MetaEnv::flag`].
    #[serde(flatten)]
    pub extra: IndexMap<String, Value>,
}

fn one() -> i64 {
    1
}

impl MetaEnv {
    pub fn parse(bytes: &[u8], file: &str) -> Result<MetaEnv, ArtifactError> {
        parse_json(bytes, file, MAX_EVAL_JSON_BYTES)
    }

    /// An integer key of `extra` (`prefill_tp`, `decode_num_workers`, …).
    pub fn int(&self, key: &str) -> Option<i64> {
        self.extra.get(key).and_then(Value::as_i64)
    }

    /// A boolean key of `extra` (`prefill_dp_attention`, …).
    pub fn flag(&self, key: &str) -> Option<bool> {
        self.extra.get(key).and_then(Value::as_bool)
    }

    /// The model prefix unless the producer wrote `"unknown"`.
    pub fn model_prefix(&self) -> Option<&str> {
        Some(self.infmax_model_prefix.as_str()).filter(|p| *p != "unknown" && !p.is_empty())
    }
}

/// The EP of an eval job taken from its `RESULT_FILENAME` / artifact name (`…-ep8-…`), which,
/// unlike `meta_env.json`, is the real `EP_SIZE` (decision E4).
pub fn ep_from_result_name(name: &str) -> Option<i64> {
    name.split(['-', '_', '/']).find_map(|part| {
        let digits = part.strip_prefix("ep")?;
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| digits.parse().ok())?
    })
}

/// A task's slots, as both the extractor and the collector row carry them.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct TaskScores {
    pub task: String,
    pub em_strict: Option<f64>,
    pub em_strict_se: Option<f64>,
    pub em_flexible: Option<f64>,
    pub em_flexible_se: Option<f64>,
    pub n_eff: Option<i64>,
}

/// One task's metrics from an lm-eval results file (`extract_lm_metrics`, §1.3).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskMetrics {
    #[serde(flatten)]
    pub scores: TaskScores,
    pub model: Option<String>,
}

/// A parsed lm-eval results file: the raw object (for the threshold rule) and its tasks.
#[derive(Debug, Clone, PartialEq)]
pub struct LmEvalResults {
    pub raw: Map<String, Value>,
    pub tasks: Vec<TaskMetrics>,
}

impl LmEvalResults {
    pub fn parse(bytes: &[u8], file: &str) -> Result<LmEvalResults, ArtifactError> {
        let raw: Map<String, Value> = parse_json(bytes, file, MAX_EVAL_JSON_BYTES)?;
        if !raw.contains_key("lm_eval_version") {
            return Err(ArtifactError::NotLmEval { file: file.to_string() });
        }
        let tasks = extract_tasks(&raw);
        Ok(LmEvalResults { raw, tasks })
    }

    /// `results.<task>` objects in file order.
    pub fn task_results(&self) -> impl Iterator<Item = (&str, &Map<String, Value>)> {
        self.raw
            .get("results")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(task, v)| Some((task.as_str(), v.as_object()?)))
    }
}

fn extract_tasks(raw: &Map<String, Value>) -> Vec<TaskMetrics> {
    let Some(results) = raw.get("results").and_then(Value::as_object) else {
        return Vec::new();
    };
    let empty = Map::new();
    let configs = raw.get("configs").and_then(Value::as_object).unwrap_or(&empty);
    results
        .iter()
        .filter_map(|(task, values)| {
            let values = values.as_object()?;
            let config = configs.get(task).and_then(Value::as_object).unwrap_or(&empty);
            let base = config
                .get("metric_list")
                .and_then(|l| l.get(0))
                .and_then(|m| m.get("metric"))
                .and_then(Value::as_str)
                .unwrap_or("exact_match");
            let pair = |metric: &str, filter: Option<&str>| {
                let suffix = filter.map(|f| format!(",{f}")).unwrap_or_default();
                let num = |k: String| values.get(&k).and_then(Value::as_f64);
                (num(format!("{metric}{suffix}")), num(format!("{metric}_stderr{suffix}")))
            };
            let mut strict = (None, None);
            let mut flexible = (None, None);
            let filters: Vec<&str> = config
                .get("filter_list")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|f| f.get("name").and_then(Value::as_str))
                .collect();
            if filters.is_empty() {
                let acc = [pair("acc", Some("none")), pair("acc", None)].into_iter().find(|p| p.0.is_some());
                strict = acc.unwrap_or_else(|| {
                    let with_none = pair(base, Some("none"));
                    if with_none.0.is_some() {
                        with_none
                    } else {
                        pair(base, None)
                    }
                });
            }
            for name in filters {
                let lower = name.to_lowercase();
                if lower.contains("strict") || lower.contains("resolved") {
                    strict = pair(base, Some(name));
                } else if lower.contains("flex") || lower.contains("extract") {
                    flexible = pair(base, Some(name));
                }
            }
            let n_eff =
                raw.get("n-samples").and_then(|n| n.get(task)).and_then(|n| n.get("effective")).and_then(Value::as_i64);
            let model = raw
                .get("model_name")
                .and_then(Value::as_str)
                .or_else(|| config.get("metadata").and_then(|m| m.get("model")).and_then(Value::as_str))
                .map(str::to_string);
            let scores = TaskScores {
                task: task.clone(),
                em_strict: strict.0,
                em_strict_se: strict.1,
                em_flexible: flexible.0,
                em_flexible_se: flexible.1,
                n_eff,
            };
            Some(TaskMetrics { scores, model })
        })
        .collect()
}

/// One row of `agg_eval_all.json` (§1.4), field order as the collector writes it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct EvalRow {
    pub is_multinode: bool,
    pub model_prefix: String,
    pub model: String,
    pub hw: String,
    pub framework: String,
    pub precision: String,
    pub spec_decoding: String,
    pub isl: i64,
    pub osl: i64,
    pub tp: i64,
    pub ep: i64,
    pub prefill_tp: i64,
    pub prefill_ep: i64,
    pub prefill_num_workers: i64,
    pub decode_tp: i64,
    pub decode_ep: i64,
    pub decode_num_workers: i64,
    pub conc: i64,
    pub dp_attention: String,
    pub prefill_dp_attention: String,
    pub decode_dp_attention: String,
    #[serde(flatten)]
    pub scores: TaskScores,
    pub source: Option<String>,
    pub score: Option<f64>,
    pub score_name: Option<String>,
    pub score_se: Option<f64>,
}

/// Parse `agg_eval_all.json`.
pub fn parse_agg_eval_all(bytes: &[u8], file: &str) -> Result<Vec<EvalRow>, ArtifactError> {
    parse_json(bytes, file, MAX_EVAL_JSON_BYTES)
}

/// Re-derive a collector row from `meta_env.json` and one task's metrics (`build_row`).
/// `conc` overrides `meta.conc` for batched sets.
pub fn build_row(meta: &MetaEnv, m: &TaskMetrics, source: &str, conc: Option<i64>) -> EvalRow {
    let prefill_dpa = meta.flag("prefill_dp_attention").unwrap_or(meta.dp_attention);
    let decode_dpa = meta.flag("decode_dp_attention").unwrap_or(meta.dp_attention);
    let dp_attention = if meta.is_multinode && prefill_dpa != decode_dpa {
        format!("prefill={prefill_dpa},decode={decode_dpa}")
    } else if meta.is_multinode {
        prefill_dpa.to_string()
    } else {
        meta.dp_attention.to_string()
    };
    EvalRow {
        is_multinode: meta.is_multinode,
        model_prefix: meta.infmax_model_prefix.clone(),
        model: m.model.clone().unwrap_or_else(|| meta.model.clone()),
        hw: meta.hw.to_uppercase(),
        framework: meta.framework.to_lowercase(),
        precision: meta.precision.to_lowercase(),
        spec_decoding: meta.spec_decoding.clone(),
        isl: meta.isl.trim().parse().unwrap_or(0),
        osl: meta.osl.trim().parse().unwrap_or(0),
        tp: meta.tp,
        ep: meta.ep,
        prefill_tp: meta.int("prefill_tp").unwrap_or(meta.tp),
        prefill_ep: meta.int("prefill_ep").unwrap_or(meta.ep),
        prefill_num_workers: meta.int("prefill_num_workers").unwrap_or(1),
        decode_tp: meta.int("decode_tp").unwrap_or(meta.tp),
        decode_ep: meta.int("decode_ep").unwrap_or(meta.ep),
        decode_num_workers: meta.int("decode_num_workers").unwrap_or(1),
        conc: conc.unwrap_or(meta.conc),
        dp_attention,
        prefill_dp_attention: prefill_dpa.to_string(),
        decode_dp_attention: decode_dpa.to_string(),
        scores: m.scores.clone(),
        source: Some(source.to_string()),
        score: m.scores.em_strict,
        score_name: m.scores.em_strict.map(|_| "em_strict".to_string()),
        score_se: m.scores.em_strict.and(m.scores.em_strict_se),
    }
}

// ---------------------------------------------------------------------------------------------
// Thresholds and the pass rule (§1.6)
// ---------------------------------------------------------------------------------------------

/// A minimum score and where it came from (`models.qwen3.5`, `default`, `--min-score`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Threshold {
    pub value: f64,
    pub source: String,
}

/// The thresholds file, as the policy layer parsed it: `models[prefix][task]`, then
/// `default[task]`; `None` when neither has the task.
pub trait ThresholdLookup {
    fn lookup(&self, model_prefix: Option<&str>, task: &str) -> Option<Threshold>;
}

impl<F: Fn(Option<&str>, &str) -> Option<Threshold>> ThresholdLookup for F {
    fn lookup(&self, model_prefix: Option<&str>, task: &str) -> Option<Threshold> {
        self(model_prefix, task)
    }
}

/// Model prefix resolution: CLI, then `meta_env.json`, then `MODEL_PREFIX`; `"unknown"` skipped.
pub fn resolve_model_prefix<'a>(cli: Option<&'a str>, meta: Option<&'a str>, env: Option<&'a str>) -> Option<&'a str> {
    [cli, meta, env].into_iter().flatten().find(|p| !p.is_empty() && *p != "unknown")
}

/// One checked metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoreCheck {
    pub task: String,
    /// The results key, e.g. `exact_match,flexible-extract`.
    pub metric: String,
    pub value: f64,
    pub threshold: Threshold,
    pub passed: bool,
}

impl fmt::Display for ScoreCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.passed { "PASS" } else { "FAIL" };
        let op = if self.passed { ">=" } else { "<" };
        write!(
            f,
            "{verdict}: {} {} = {} ({op} {} from {})",
            self.task, self.metric, self.value, self.threshold.value, self.threshold.source
        )
    }
}

/// `validate_scores.py`: every numeric `exact_match,*` value of every task against its
/// threshold (`≥` passes). An empty result means "no metrics matched prefix": a failure.
pub fn check_scores(
    results: &LmEvalResults,
    model_prefix: Option<&str>,
    thresholds: &dyn ThresholdLookup,
    min_score: f64,
) -> Vec<ScoreCheck> {
    let mut checks = Vec::new();
    for (task, values) in results.task_results() {
        let threshold = thresholds
            .lookup(model_prefix, task)
            .unwrap_or_else(|| Threshold { value: min_score, source: "--min-score".into() });
        for (metric, value) in values {
            let Some(value) = value.as_f64().filter(|_| metric.starts_with("exact_match,")) else {
                continue;
            };
            checks.push(ScoreCheck {
                task: task.to_string(),
                metric: metric.clone(),
                value,
                passed: value >= threshold.value,
                threshold: threshold.clone(),
            });
        }
    }
    checks
}

/// `true` when every check passed and there was at least one.
pub fn scores_pass(checks: &[ScoreCheck]) -> bool {
    !checks.is_empty() && checks.iter().all(|c| c.passed)
}

// ---------------------------------------------------------------------------------------------
// Batch manifests (§1.7)
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BatchProblem {
    MetaUnreadable,
    ExpectedConcsInvalid,
    SeveralExpectedWithoutBatch { expected: Vec<i64> },
    ConcMismatch { meta_conc: i64, expected: i64 },
    ResultFileCount { found: usize },
    ListInvalid { field: &'static str },
    DuplicateConcs { field: &'static str },
    EvalConcsMismatch { eval_concs: Vec<i64>, expected: Vec<i64> },
    FailedConcs { failed: Vec<i64> },
    MissingCompleted { missing: Vec<i64> },
    UnexpectedCompleted { unexpected: Vec<i64> },
    ResultWithoutConcSuffix { file: String },
    ResultConcsMismatch { found: Vec<i64>, expected: Vec<i64> },
}

impl fmt::Display for BatchProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BatchProblem::MetaUnreadable => {
                write!(f, "meta_env.json is unreadable but batch results or expected concurrencies exist")
            }
            BatchProblem::ExpectedConcsInvalid => write!(f, "--expected-concs must be unique positive integers"),
            BatchProblem::SeveralExpectedWithoutBatch { expected } => {
                write!(f, "several concurrencies {expected:?} expected but meta_env.json has no eval_concs")
            }
            BatchProblem::ConcMismatch { meta_conc, expected } => {
                write!(f, "meta_env.json conc {meta_conc} differs from the expected {expected}")
            }
            BatchProblem::ResultFileCount { found } => {
                write!(f, "expected exactly one lm-eval results file, found {found}")
            }
            BatchProblem::ListInvalid { field } => write!(f, "{field} must be a list of positive integers"),
            BatchProblem::DuplicateConcs { field } => write!(f, "{field} contains duplicates"),
            BatchProblem::EvalConcsMismatch { eval_concs, expected } => {
                write!(f, "eval_concs {eval_concs:?} differ from the expected {expected:?}")
            }
            BatchProblem::FailedConcs { failed } => write!(f, "failed_eval_concs is not empty: {failed:?}"),
            BatchProblem::MissingCompleted { missing } => write!(f, "concurrencies not completed: {missing:?}"),
            BatchProblem::UnexpectedCompleted { unexpected } => {
                write!(f, "unexpected completed concurrencies: {unexpected:?}")
            }
            BatchProblem::ResultWithoutConcSuffix { file } => {
                write!(f, "{file}: batch result file without a _conc<N> suffix")
            }
            BatchProblem::ResultConcsMismatch { found, expected } => {
                write!(f, "result files cover {found:?}, expected {expected:?}")
            }
        }
    }
}

/// The `_conc<N>` (or `_conc<N>_<k>`) suffix of a staged results file name.
pub fn result_concurrency(file_name: &str) -> Option<i64> {
    let stem = file_name.strip_suffix(".json").unwrap_or(file_name);
    let at = stem.rfind("_conc")?;
    let rest = &stem[at + "_conc".len()..];
    let digits = rest.split('_').next()?;
    let tail_ok =
        rest[digits.len()..].strip_prefix('_').is_none_or(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()));
    (tail_ok && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| digits.parse().ok()).flatten()
}

fn positive_list(value: Option<&Value>) -> Option<Vec<i64>> {
    value?.as_array()?.iter().map(|v| v.as_i64().filter(|n| *n > 0)).collect()
}

fn has_duplicates(list: &[i64]) -> bool {
    list.iter().enumerate().any(|(i, v)| list[..i].contains(v))
}

fn sorted_set(list: &[i64]) -> Vec<i64> {
    let mut v = list.to_vec();
    v.sort_unstable();
    v.dedup();
    v
}

/// `validate_batch_manifest`: `meta` is the parsed `meta_env.json` object (`None` when it could
/// not be read), `result_files` the lm-eval result file names of the set.
pub fn validate_batch_manifest(
    meta: Option<&Map<String, Value>>,
    result_files: &[&str],
    expected: &[i64],
) -> Vec<BatchProblem> {
    let mut problems = Vec::new();
    if expected.iter().any(|c| *c <= 0) || has_duplicates(expected) {
        return vec![BatchProblem::ExpectedConcsInvalid];
    }
    let Some(meta) = meta else {
        let any_batched = result_files.iter().any(|f| result_concurrency(f).is_some());
        if any_batched || !expected.is_empty() {
            problems.push(BatchProblem::MetaUnreadable);
        }
        return problems;
    };
    let expected_set = sorted_set(expected);
    if !meta.contains_key("eval_concs") {
        match expected {
            [] => {}
            [single] => {
                let meta_conc = meta.get("conc").and_then(Value::as_i64).unwrap_or(0);
                if meta_conc != *single {
                    problems.push(BatchProblem::ConcMismatch { meta_conc, expected: *single });
                }
                if result_files.len() != 1 {
                    problems.push(BatchProblem::ResultFileCount { found: result_files.len() });
                }
            }
            _ => problems.push(BatchProblem::SeveralExpectedWithoutBatch { expected: expected.to_vec() }),
        }
        return problems;
    }
    let mut lists = Vec::new();
    for field in ["eval_concs", "completed_eval_concs", "failed_eval_concs"] {
        match positive_list(meta.get(field)) {
            Some(list) => lists.push(list),
            None => {
                problems.push(BatchProblem::ListInvalid { field });
                lists.push(Vec::new());
            }
        }
    }
    if !problems.is_empty() {
        return problems;
    }
    let (eval_concs, completed, failed) = (&lists[0], &lists[1], &lists[2]);
    for (field, list) in [("eval_concs", eval_concs), ("completed_eval_concs", completed)] {
        if has_duplicates(list) {
            problems.push(BatchProblem::DuplicateConcs { field });
        }
    }
    if sorted_set(eval_concs) != expected_set {
        problems
            .push(BatchProblem::EvalConcsMismatch { eval_concs: eval_concs.clone(), expected: expected_set.clone() });
    }
    if !failed.is_empty() {
        problems.push(BatchProblem::FailedConcs { failed: failed.clone() });
    }
    let completed_set = sorted_set(completed);
    let missing: Vec<i64> = expected_set.iter().copied().filter(|c| !completed_set.contains(c)).collect();
    let unexpected: Vec<i64> = completed_set.iter().copied().filter(|c| !expected_set.contains(c)).collect();
    if !missing.is_empty() {
        problems.push(BatchProblem::MissingCompleted { missing });
    }
    if !unexpected.is_empty() {
        problems.push(BatchProblem::UnexpectedCompleted { unexpected });
    }
    let mut found = Vec::new();
    for file in result_files {
        match result_concurrency(file) {
            Some(c) => found.push(c),
            None => problems.push(BatchProblem::ResultWithoutConcSuffix { file: file.to_string() }),
        }
    }
    let found = sorted_set(&found);
    if found != expected_set {
        problems.push(BatchProblem::ResultConcsMismatch { found, expected: expected_set });
    }
    problems
}

// ---------------------------------------------------------------------------------------------
// Check 2 pieces: assessed score, full-set size, 2σ consistency (decisions E3, E5, E6)
// ---------------------------------------------------------------------------------------------

/// Full split sizes: GSM8K test, GPQA diamond (198 × 2 shuffles), SWE-bench Lite.
pub fn full_set_size(task: &str) -> Option<i64> {
    match task {
        "gsm8k" => Some(1319),
        "gpqa_diamond_cot_n_shot" => Some(396),
        "swebench_lite" => Some(300),
        _ => None,
    }
}

/// The score Check 2 assesses and its standard error: `em_strict`, or `em_flexible` when the
/// strict slot is empty (GPQA's `extract_abcd` filter); σ falls back to √(s(1−s)/(n−1)).
pub fn assessed_score(row: &EvalRow) -> Option<(f64, Option<f64>)> {
    let r = &row.scores;
    let (score, se) = match (r.em_strict, r.em_flexible) {
        (Some(s), _) => (s, r.em_strict_se),
        (None, Some(f)) => (f, r.em_flexible_se),
        (None, None) => return None,
    };
    let fallback = r.n_eff.filter(|n| *n > 1).map(|n| (score * (1.0 - score) / (n - 1) as f64).sqrt());
    Some((score, se.or(fallback)))
}

/// A row scored on fewer samples than the full split (an `EVAL_LIMIT` smoke run).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartialEvalSet {
    pub task: String,
    pub n_eff: Option<i64>,
    pub full: i64,
}

/// Rows of known tasks whose `n_eff` is missing or below the full split.
pub fn partial_sets(rows: &[EvalRow]) -> Vec<PartialEvalSet> {
    rows.iter()
        .filter_map(|r| {
            let s = &r.scores;
            let full = full_set_size(&s.task)?;
            (s.n_eff.is_none_or(|n| n < full)).then(|| PartialEvalSet { task: s.task.clone(), n_eff: s.n_eff, full })
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Consistency {
    Within,
    /// More than 2σ below the other: an accuracy regression.
    Below,
    /// More than 2σ above the other: noted, not failed.
    Above,
    /// A σ is missing or not finite.
    Unknown,
}

/// Pairwise test |a − b| ≤ 2·√(σa² + σb²), seen from `a`.
pub fn two_sigma(a: (f64, Option<f64>), b: (f64, Option<f64>)) -> Consistency {
    let (Some(sa), Some(sb)) = (a.1, b.1) else {
        return Consistency::Unknown;
    };
    let limit = 2.0 * (sa * sa + sb * sb).sqrt();
    if !limit.is_finite() || !a.0.is_finite() || !b.0.is_finite() {
        return Consistency::Unknown;
    }
    let diff = a.0 - b.0;
    if diff.abs() <= limit {
        Consistency::Within
    } else if diff < 0.0 {
        Consistency::Below
    } else {
        Consistency::Above
    }
}

#[cfg(test)]
mod tests;
