//! Check 2 — Evals pass (spec 30 Check 2, spec 40 §1): the eval results of the run behind
//! Check 1 exist and every `exact_match,*` score meets the model's threshold from the base
//! branch's thresholds file (model → default → 0.85).

use serde_json::json;

use super::{c01_in_pr_sweep, Context, Outcome};
use crate::domain::eval_thresholds::{EvalThresholds, ThresholdSource};
use crate::evidence::Fact;
use crate::repo::{Layout, Logical};
use crate::results::eval::{check_scores, LmEvalResults, MetaEnv, Threshold, FALLBACK_MIN_SCORE};

/// Per-point eval artifacts (`eval_<RF>`, `eval_<exp>_<RF>`), not logs or GPU metrics.
fn is_eval_results_artifact(name: &str) -> bool {
    name.starts_with("eval_")
        && !name.starts_with("eval_server_logs_")
        && !name.starts_with("eval_gpu_metrics_")
        && name != "eval_results_all"
}

fn source_name(source: ThresholdSource, prefix: Option<&str>) -> String {
    match source {
        ThresholdSource::Model => format!("models.{}", prefix.unwrap_or_default()),
        ThresholdSource::Default => "default".into(),
        ThresholdSource::MinScore => "--min-score".into(),
    }
}

pub fn check(cx: &Context) -> Outcome {
    let ev = cx.evidence;
    let Some(run) = c01_in_pr_sweep::qualifying_run(ev) else { return Outcome::fail("no_run") };
    let thresholds = match Layout::default().resolve(&ev.base, Logical::EvalThresholds) {
        Ok(Some(path)) => match ev.base.text(&path).map(|t| EvalThresholds::parse(t, &path)) {
            Some(Ok(t)) => Some(t),
            Some(Err(diags)) => {
                return Outcome::unreadable(&path, diags.first().map(|d| d.to_string()).unwrap_or_default())
            }
            None => return Outcome::unreadable(&path, "not UTF-8 text"),
        },
        Ok(None) => None, // no thresholds file: upstream's --min-score applies to every task
        // A thresholds location the layout cannot resolve is not "no file": never the default.
        Err(e) => return Outcome::unreadable("the eval thresholds file", e.to_string()),
    };
    let lookup = |prefix: Option<&str>, task: &str| {
        let (value, source) = match &thresholds {
            Some(t) => t.threshold(prefix, task, FALLBACK_MIN_SCORE),
            None => (FALLBACK_MIN_SCORE, ThresholdSource::MinScore),
        };
        Some(Threshold { value, source: source_name(source, prefix) })
    };
    let unavailable: Vec<String> = ev
        .runs
        .get(&run.run_id)
        .map(|r| {
            // An archive nested in an eval artifact (`<artifact>/<path>`) counts as that artifact.
            r.artifacts
                .iter()
                .chain(&r.archives)
                .filter(|(name, fact)| {
                    is_eval_results_artifact(name.split('/').next().unwrap_or(name))
                        && matches!(fact, Fact::Unavailable(_))
                })
                .map(|(name, _)| name.clone())
                .collect()
        })
        .unwrap_or_default();
    let run_prefix = format!("{}/", run.run_id);
    let mut artifacts: Vec<String> = ev
        .artifacts
        .paths()
        .filter_map(|p| p.strip_prefix(&run_prefix))
        .filter_map(|rest| rest.split('/').next())
        .filter(|name| is_eval_results_artifact(name))
        .map(str::to_owned)
        .collect();
    artifacts.dedup();
    let mut failures = Vec::new();
    let mut all_checks = Vec::new();
    let mut sets = 0;
    for artifact in &artifacts {
        let dir = format!("{run_prefix}{artifact}/");
        let files: Vec<&str> = ev.artifacts.paths().filter(|p| p.starts_with(&dir)).collect();
        let meta = files.iter().find(|p| p.ends_with("meta_env.json"));
        let prefix = match meta.map(|m| MetaEnv::parse(ev.artifacts.get(m).unwrap_or_default(), m)) {
            Some(Ok(meta)) => meta.model_prefix().map(str::to_owned),
            Some(Err(e)) => return Outcome::unreadable(artifact, e.to_string()),
            None => None,
        };
        for file in files
            .iter()
            .filter(|p| p.rsplit('/').next().is_some_and(|n| n.starts_with("results") && n.ends_with(".json")))
        {
            let results = match LmEvalResults::parse(ev.artifacts.get(file).unwrap_or_default(), file) {
                Ok(r) => r,
                Err(e) => return Outcome::unreadable(artifact, e.to_string()),
            };
            let checks = check_scores(&results, prefix.as_deref(), &lookup, FALLBACK_MIN_SCORE);
            sets += 1;
            if checks.is_empty() {
                failures.push(json!({"artifact": artifact, "task": "(none)", "metric": "exact_match,*", "value": "missing", "threshold": FALLBACK_MIN_SCORE, "source": "no metric matched"}));
            }
            for c in checks {
                let row = json!({"artifact": artifact, "task": c.task, "metric": c.metric, "value": format!("{:.4}", c.value), "threshold": c.threshold.value, "source": c.threshold.source, "raw": c.value});
                if c.passed {
                    all_checks.push(row);
                } else {
                    failures.push(row);
                }
            }
        }
    }
    if sets == 0 {
        return Outcome::fail("no_results")
            .arg("run", run.run_id)
            .arg("unavailable", unavailable)
            .evidence(format!("run {}", run.run_id));
    }
    if !failures.is_empty() || !unavailable.is_empty() {
        if failures.is_empty() {
            return Outcome::fail("no_results").arg("run", run.run_id).arg("unavailable", unavailable);
        }
        return Outcome::fail("below_threshold")
            .arg("failures", failures)
            .arg("run", run.run_id)
            .evidence(format!("run {}", run.run_id));
    }
    let lowest = all_checks.iter().min_by(|a, b| {
        let margin = |r: &serde_json::Value| r["raw"].as_f64().unwrap_or(0.0) - r["threshold"].as_f64().unwrap_or(0.0);
        margin(a).total_cmp(&margin(b))
    });
    Outcome::pass("passed")
        .arg("count", sets)
        .arg("run", run.run_id)
        .arg("lowest", lowest.cloned())
        .evidence(format!("run {}", run.run_id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, run};
    use crate::checks::Status;
    use crate::evidence::Evidence;

    const META: &str = r#"{"is_multinode": false, "framework": "sglang", "precision": "fp8", "spec_decoding": "none", "tp": 8, "conc": 64, "ep": 1, "dp_attention": false, "model": "Qwen/Qwen3.5-397B-A17B-FP8", "infmax_model_prefix": "qwen3.5", "hw": "h200", "isl": "8192", "osl": "1024"}"#;
    const THRESHOLDS: &str = "default:\n  gsm8k: 0.90\nmodels:\n  qwen3.5:\n    gsm8k: 0.94\n";

    fn results(strict: f64) -> String {
        format!(
            r#"{{"results": {{"gsm8k": {{"alias": "gsm8k", "exact_match,strict-match": {strict}, "exact_match,flexible-extract": 0.97}}}}, "lm_eval_version": "0.4.9"}}"#
        )
    }

    fn with_eval(strict: Option<f64>) -> Evidence {
        let mut e = evidence();
        e.check_runs.insert(
            "b".repeat(40),
            Fact::Ok(vec![run("single-node 8k1k / x", "success", 7), run("eval / x", "success", 7)]),
        );
        e.base.insert("utils/evals/thresholds.yaml", THRESHOLDS);
        if let Some(strict) = strict {
            let dir = "7/eval_qwen3.5_8k1k_qwen3.5_8k1k_fp8_sglang_tp8-ep8_conc64_h200-nb_1";
            e.artifacts.insert(format!("{dir}/meta_env.json"), META);
            e.artifacts.insert(format!("{dir}/results_2026-08-21T16-23-10.json"), results(strict));
        }
        e
    }

    fn outcome(e: &Evidence) -> Outcome {
        check(&Context::new(e))
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
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.args["failures"][0]["value"], "0.9312");
        assert_eq!(o.message.args["failures"][0]["threshold"], 0.94);
    }

    #[test]
    fn missing_or_undownloadable_results_fail() {
        assert_eq!(outcome(&with_eval(None)).message.key, "no_results");
        assert_eq!(outcome(&evidence()).message.key, "no_run");
        let mut e = with_eval(Some(0.96));
        e.artifacts = Default::default();
        e.runs.insert(
            7,
            crate::evidence::WorkflowRun {
                id: 7,
                name: "Run Sweep".into(),
                path: ".github/workflows/run-sweep.yml".into(),
                head_sha: "b".repeat(40),
                event: "pull_request".into(),
                status: "completed".into(),
                conclusion: Some("success".into()),
                artifacts: [("eval_x".to_owned(), Fact::Unavailable("HTTP 410 expired".into()))].into(),
                archives: Default::default(),
                jobs: Default::default(),
                jobs_unavailable: None,
            },
        );
        let o = outcome(&e);
        assert_eq!(o.message.args["unavailable"][0], "eval_x");
    }

    #[test]
    fn corrupt_results_are_unreadable_not_passing() {
        let mut e = with_eval(Some(0.96));
        e.artifacts.insert(
            "7/eval_qwen3.5_8k1k_qwen3.5_8k1k_fp8_sglang_tp8-ep8_conc64_h200-nb_1/results_2026-08-21T16-23-10.json",
            "{not json",
        );
        assert_eq!(outcome(&e).message.key, "unreadable");
    }
}
