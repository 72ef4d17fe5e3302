//! `utils/evals/thresholds.yaml` (spec 40 §1.6): minimum eval scores per task, with per-model
//! overrides, and the lookup and pass rule upstream's `validate_scores.py` applies.

use indexmap::IndexMap;

use crate::diag::Diagnostic;
use crate::yaml::{self, Node, Value};

/// `--min-score` default: the bar when neither the model nor `default` names the task.
pub const DEFAULT_MIN_SCORE: f64 = 0.85;

/// Only result keys with this prefix are checked.
pub const METRIC_PREFIX: &str = "exact_match,";

/// Task → minimum score.
pub type TaskBars = IndexMap<String, f64>;

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct EvalThresholds {
    pub default: TaskBars,
    /// Model prefix → task → minimum score.
    pub models: IndexMap<String, TaskBars>,
    /// The file had neither `default` nor `models`: the whole mapping was read as `default`.
    pub legacy_format: bool,
}

/// Where a threshold came from (resolution order of spec 40 §1.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThresholdSource {
    Model,
    Default,
    MinScore,
}

/// One checked metric of one task.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MetricCheck {
    pub key: String,
    pub value: f64,
    pub passed: bool,
}

/// The pass rule applied to one task's results.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TaskCheck {
    pub task: String,
    pub threshold: f64,
    pub source: ThresholdSource,
    pub metrics: Vec<MetricCheck>,
}

impl TaskCheck {
    /// Every checked metric reaches the bar (`≥`), and at least one was checked ("no metrics
    /// matched prefix" is a failure).
    pub fn passed(&self) -> bool {
        !self.metrics.is_empty() && self.metrics.iter().all(|m| m.passed)
    }
}

impl EvalThresholds {
    /// Parses YAML (or JSON, which the YAML reader accepts).
    pub fn parse(text: &str, file: &str) -> Result<EvalThresholds, Vec<Diagnostic>> {
        let root = yaml::parse(text, file).map_err(|e| vec![Diagnostic::from_yaml(file, &e)])?;
        let mut diags = Vec::new();
        let Some(entries) = root.as_map() else {
            return Err(vec![Diagnostic::new(
                file,
                Some(root.pos),
                format!("expected a mapping with `default` and `models`, found {}", root.value.kind()),
            )]);
        };
        let mut out = EvalThresholds::default();
        let has_sections = entries.iter().any(|(k, _)| matches!(k.as_str(), Some("default" | "models")));
        if !has_sections {
            out.legacy_format = true;
            out.default = task_bars(&root, file, "", &mut diags);
        } else {
            for (key, value) in entries {
                match key.as_str() {
                    Some("default") => out.default = task_bars(value, file, "default", &mut diags),
                    Some("models") => match value.as_map() {
                        Some(models) => {
                            for (prefix, bars) in models {
                                let name = prefix.key_text().map(|t| t.into_owned()).unwrap_or_default();
                                let field = format!("models.{name}");
                                out.models.insert(name, task_bars(bars, file, &field, &mut diags));
                            }
                        }
                        None => diags.push(kind_error(file, value, "models", "a mapping of model prefix to tasks")),
                    },
                    _ => diags.push(Diagnostic::new(
                        file,
                        Some(key.pos),
                        format!(
                            "unknown key `{}`; thresholds.yaml has only `default` and `models`",
                            key.key_text().unwrap_or_default()
                        ),
                    )),
                }
            }
        }
        if diags.is_empty() {
            Ok(out)
        } else {
            Err(diags)
        }
    }

    /// The bar for `task` (exact, case-sensitive key) of model `prefix`: `models[prefix][task]`,
    /// then `default[task]`, then `min_score`.
    pub fn threshold(&self, prefix: Option<&str>, task: &str, min_score: f64) -> (f64, ThresholdSource) {
        if let Some(v) = prefix.and_then(|p| self.models.get(p)).and_then(|bars| bars.get(task)) {
            return (*v, ThresholdSource::Model);
        }
        match self.default.get(task) {
            Some(v) => (*v, ThresholdSource::Default),
            None => (min_score, ThresholdSource::MinScore),
        }
    }

    /// Applies the pass rule to one task's lm-eval `results.<task>` object: every numeric key
    /// that starts with `exact_match,` must be `≥` the bar.
    pub fn check_task(
        &self,
        prefix: Option<&str>,
        task: &str,
        results: &serde_json::Value,
        min_score: f64,
    ) -> TaskCheck {
        let (threshold, source) = self.threshold(prefix, task, min_score);
        let metrics = results
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| k.starts_with(METRIC_PREFIX))
            .filter_map(|(k, v)| {
                v.as_f64().map(|value| MetricCheck { key: k.clone(), value, passed: value >= threshold })
            })
            .collect();
        TaskCheck { task: task.to_owned(), threshold, source, metrics }
    }
}

/// Model prefix resolution (spec 40 §1.6): CLI, then `meta_env.json`, then `MODEL_PREFIX`,
/// skipping the literal `"unknown"`.
pub fn resolve_model_prefix<'a>(
    cli: Option<&'a str>,
    meta_env: Option<&'a str>,
    env: Option<&'a str>,
) -> Option<&'a str> {
    [cli, meta_env.filter(|p| *p != "unknown"), env.filter(|p| *p != "unknown")]
        .into_iter()
        .flatten()
        .find(|p| !p.is_empty())
}

fn task_bars(node: &Node, file: &str, field: &str, diags: &mut Vec<Diagnostic>) -> TaskBars {
    let mut bars = TaskBars::new();
    let Some(entries) = node.as_map() else {
        diags.push(kind_error(file, node, field, "a mapping of task to minimum score"));
        return bars;
    };
    for (task, value) in entries {
        let name = task.key_text().map(|t| t.into_owned()).unwrap_or_default();
        let path = if field.is_empty() { name.clone() } else { format!("{field}.{name}") };
        let score = match value.value {
            Value::Float(x) => Some(x),
            Value::Int(i) => Some(i as f64),
            _ => None,
        };
        match score {
            Some(x) if (0.0..=1.0).contains(&x) => {
                bars.insert(name, x);
            }
            Some(x) => diags.push(Diagnostic::new(
                file,
                Some(value.pos),
                format!("{path}: {x} is outside 0..1; a threshold is a minimum accuracy score"),
            )),
            None => diags.push(kind_error(file, value, &path, "a number between 0 and 1")),
        }
    }
    bars
}

fn kind_error(file: &str, node: &Node, field: &str, expected: &str) -> Diagnostic {
    Diagnostic::new(file, Some(node.pos), format!("{field}: expected {expected}, found {}", node.value.kind()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const REAL_SHAPE: &str = "\
# Model thresholds override task defaults.
default:
  gsm8k: 0.90
  gpqa_diamond_cot_n_shot: 0.30
models:
  qwen3.5:
    gsm8k: 0.94
  glm5.1:
    gsm8k: 0.93
";

    #[test]
    fn lookup_order_model_default_min_score() {
        let t = EvalThresholds::parse(REAL_SHAPE, "t.yaml").unwrap();
        assert_eq!(t.threshold(Some("qwen3.5"), "gsm8k", DEFAULT_MIN_SCORE), (0.94, ThresholdSource::Model));
        assert_eq!(t.threshold(Some("kimik3"), "gsm8k", DEFAULT_MIN_SCORE), (0.90, ThresholdSource::Default));
        assert_eq!(t.threshold(Some("qwen3.5"), "gpqa_diamond_cot_n_shot", 0.85), (0.30, ThresholdSource::Default));
        assert_eq!(t.threshold(None, "gsm8k", 0.85), (0.90, ThresholdSource::Default));
        assert_eq!(t.threshold(Some("qwen3.5"), "GSM8K", 0.85), (0.85, ThresholdSource::MinScore), "case-sensitive");
        assert_eq!(t.threshold(None, "mmlu", 0.7), (0.7, ThresholdSource::MinScore));
        assert!(!t.legacy_format);
    }

    #[test]
    fn pass_rule_checks_strict_and_flexible_with_equality_passing() {
        let t = EvalThresholds::parse(REAL_SHAPE, "t.yaml").unwrap();
        let results = serde_json::json!({
            "alias": "gsm8k",
            "exact_match,strict-match": 0.94,
            "exact_match_stderr,strict-match": 0.004,
            "exact_match,flexible-extract": 0.9375,
        });
        let c = t.check_task(Some("qwen3.5"), "gsm8k", &results, DEFAULT_MIN_SCORE);
        assert_eq!(c.metrics.len(), 2);
        assert!(c.metrics[0].passed, "equality passes");
        assert!(!c.metrics[1].passed, "0.9375 < 0.94 fails");
        assert!(!c.passed());
        let none = t.check_task(Some("qwen3.5"), "gsm8k", &serde_json::json!({"acc,none": 1.0}), 0.85);
        assert!(none.metrics.is_empty() && !none.passed(), "no metrics matched prefix is a failure");
    }

    #[test]
    fn legacy_flat_format_is_the_default_map() {
        let t = EvalThresholds::parse("gsm8k: 0.9\n", "t.yaml").unwrap();
        assert!(t.legacy_format);
        assert_eq!(t.threshold(Some("x"), "gsm8k", 0.85), (0.9, ThresholdSource::Default));
        let json = EvalThresholds::parse("{\"default\": {\"gsm8k\": 0.9}, \"models\": {}}", "t.json").unwrap();
        assert_eq!(json.default.get("gsm8k"), Some(&0.9));
    }

    #[test]
    fn malformed_files_are_positioned_errors() {
        let cases = [
            ("default: {gsm8k: high}\n", "1:18: default.gsm8k: expected a number between 0 and 1, found a string"),
            ("default: {gsm8k: 1.5}\n", "1:18: default.gsm8k: 1.5 is outside 0..1"),
            ("default: {}\nmodels: [a]\n", "2:9: models: expected a mapping"),
            ("default: {}\nextra: 1\n", "2:1: unknown key `extra`"),
            ("models:\n  qwen3.5: 0.9\n", "2:12: models.qwen3.5: expected a mapping of task"),
            ("- 1\n", "1:1: expected a mapping with `default` and `models`, found a sequence"),
            ("default: {gsm8k: 0.9, gsm8k: 0.8}\n", "duplicate key"),
        ];
        for (text, expected) in cases {
            let errs = EvalThresholds::parse(text, "t.yaml").unwrap_err();
            let shown = errs[0].to_string();
            assert!(shown.contains(expected), "{text:?}: {shown}");
        }
    }

    #[test]
    fn model_prefix_resolution() {
        assert_eq!(resolve_model_prefix(Some("a"), Some("b"), Some("c")), Some("a"));
        assert_eq!(resolve_model_prefix(None, Some("unknown"), Some("c")), Some("c"));
        assert_eq!(resolve_model_prefix(None, Some("b"), None), Some("b"));
        assert_eq!(resolve_model_prefix(None, Some("unknown"), Some("unknown")), None);
    }
}
