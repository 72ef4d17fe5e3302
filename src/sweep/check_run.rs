//! The `sweepgate/sweep` check run of one sweep (all its pools): bilingual title, summary
//! (counts, canary, skipped rows) and per-point table (point, pool, job, state, result
//! summary, power validation), failures first, rendered from `templates/sweep_check*`. Once the
//! sweep completed, the summary also shows its run against the published curve (issue 26,
//! decision PF6), or why that comparison could not be made.

use serde::Serialize;
use serde_json::Value;

use super::dispatch::Counts;
use super::ledger::{PointRecord, PointState};
use super::plan_jobs::SkippedRow;
use super::scheduler::Refusal;
use crate::checks::Lang;
use crate::domain::ci_priority::PolicySource;
use crate::github::types::{CheckRunInput, CheckRunOutput};
use crate::pr::performance::Performance;
use crate::report::performance::{markdown, performance_view};
use crate::report::{render, render_bilingual, RenderError};

/// GitHub refuses output fields above 65535 characters; the table stops well before.
const MAX_TABLE_ROWS: usize = 200;
/// Most characters of the comparison per language in the summary (cut at a line, the rest is on
/// the details page), so the summary stays within GitHub's bound.
const MAX_COMPARISON_CHARS: usize = 20_000;

/// One sweep as the check run shows it.
pub struct SweepView<'a> {
    pub check_name: &'a str,
    pub sweep_id: &'a str,
    pub head_sha: &'a str,
    /// (pool, its points as the ledger knows them).
    pub pools: Vec<(&'a str, Vec<PointRecord>)>,
    pub skipped: &'a [SkippedRow],
    /// The sweep could not be planned or run at all.
    pub error: Option<&'a str>,
    pub cancelled: bool,
    pub notes: &'a [String],
    /// Which CI priority policy ordered the points (none when planning failed first).
    pub priority_policy: Option<&'a PolicySource>,
    /// The completed sweep's run against the published curve, or why it could not be compared
    /// (none before the sweep completed).
    pub performance: Option<&'a Result<Performance, String>>,
}

/// The comparison in one language, cut at a line below [`MAX_COMPARISON_CHARS`]; true when cut.
fn comparison(perf: &Performance, lang: Lang) -> Result<(String, bool), RenderError> {
    let text = markdown(&performance_view(perf, true), lang)?;
    if text.chars().count() <= MAX_COMPARISON_CHARS {
        return Ok((text, false));
    }
    let cut: String = text.chars().take(MAX_COMPARISON_CHARS).collect();
    Ok((cut.rsplit_once('\n').map_or(cut.as_str(), |(kept, _)| kept).to_owned(), true))
}

#[derive(Serialize)]
struct Row {
    point: String,
    pool: String,
    job: Option<String>,
    state: &'static str,
    state_zh: &'static str,
    /// The dispatcher's reason for the point's state (its own text, quoted in the Chinese table).
    summary: Option<String>,
    /// The result files of a point that succeeded without a reason.
    results: Option<usize>,
    /// Set instead of `summary` when the scheduler refused the job or did not answer: the
    /// templates name the class, never the scheduler's text.
    refusal: Option<Refusal>,
    power: Power,
}

/// The power validation of a point's results, worded by the templates.
#[derive(Serialize)]
struct Power {
    /// `None` when no power check ran.
    valid: Option<bool>,
    /// The failed checks' reason codes.
    reasons: Vec<String>,
}

#[derive(Serialize)]
struct CountsView {
    #[serde(flatten)]
    counts: Counts,
    done: usize,
    not_succeeded: usize,
}

impl SweepView<'_> {
    fn records(&self) -> impl Iterator<Item = (&str, &PointRecord)> {
        self.pools.iter().flat_map(|(pool, records)| records.iter().map(move |r| (*pool, r)))
    }

    /// Every point final (or nothing could run).
    pub fn finished(&self) -> bool {
        self.error.is_some() || self.records().all(|(_, r)| r.state.is_terminal())
    }

    /// `success` only when there was something to run and every point of it succeeded.
    pub fn conclusion(&self) -> Option<&'static str> {
        if !self.finished() {
            return None;
        }
        let all = self.records().count();
        let succeeded = self.records().filter(|(_, r)| r.state == PointState::Succeeded).count();
        Some(if self.error.is_none() && all > 0 && succeeded == all {
            "success"
        } else if self.cancelled {
            "cancelled"
        } else {
            "failure"
        })
    }

    pub fn render(&self) -> Result<CheckRunInput, RenderError> {
        let records: Vec<PointRecord> = self.records().map(|(_, r)| r.clone()).collect();
        let counts = Counts::of(&records);
        let conclusion = self.conclusion();
        let canary = self.records().find(|(_, r)| r.is_canary).map(|(_, r)| r.state);
        let mut rows: Vec<Row> = self.records().map(|(pool, r)| row(pool, r)).collect();
        // Failures first, then what is still running or waiting, then successes.
        let rank = |state: &str| match state {
            "succeeded" => 3,
            "planned" | "submitting" | "submitted" | "running" => 2,
            "skipped" => 1,
            _ => 0,
        };
        rows.sort_by_key(|r| rank(r.state));
        let more = rows.len().saturating_sub(MAX_TABLE_ROWS);
        rows.truncate(MAX_TABLE_ROWS);
        let (mut performance_en, mut performance_zh, mut performance_cut) = (String::new(), String::new(), false);
        if let Some(Ok(perf)) = self.performance {
            let (en, cut) = comparison(perf, Lang::En)?;
            let (zh, _) = comparison(perf, Lang::Zh)?;
            (performance_en, performance_zh, performance_cut) = (en, zh, cut);
        }
        let context = serde_json::json!({
            "sweep_id": self.sweep_id,
            "head_sha": self.head_sha,
            "finished": conclusion.is_some(),
            "conclusion": conclusion.unwrap_or(""),
            "counts": CountsView { counts, done: counts.done(), not_succeeded: counts.total - counts.succeeded },
            "canary": canary.map(PointState::as_str),
            "canary_zh": canary.map(PointState::name_zh),
            "error": self.error,
            "skipped": self.skipped,
            "notes": self.notes,
            "priority_policy": self.priority_policy,
            "points": rows,
            "more": more,
            "performance_en": performance_en,
            "performance_zh": performance_zh,
            "performance_cut": performance_cut,
            "performance_error": self.performance.and_then(|p| p.as_ref().err()),
        });
        let title = format!(
            "{} · {}",
            render("sweep_check_title.en.md.j2", &context)?.trim(),
            render("sweep_check_title.zh.md.j2", &context)?.trim()
        );
        Ok(CheckRunInput {
            name: self.check_name.to_owned(),
            head_sha: self.head_sha.to_owned(),
            status: if conclusion.is_some() { "completed" } else { "in_progress" }.to_owned(),
            conclusion: conclusion.map(str::to_owned),
            details_url: None,
            external_id: Some(self.sweep_id.to_owned()),
            output: CheckRunOutput {
                title,
                summary: render_bilingual("sweep_check", &context)?,
                text: render_bilingual("sweep_check_points", &context)?,
            },
        })
    }
}

/// Why the scheduler refused the point's job (or did not answer), as recorded by the
/// dispatcher: what public pages show instead of the scheduler's text.
pub fn refusal(r: &PointRecord) -> Option<Refusal> {
    let provenance = r.provenance.as_ref().and_then(|p| p.value().ok())?;
    serde_json::from_value(provenance.get("refusal")?.clone()).ok()
}

fn row(pool: &str, r: &PointRecord) -> Row {
    let provenance = r.provenance.as_ref().and_then(|p| p.value().ok());
    let results = provenance
        .as_ref()
        .and_then(|p| p["files"].as_array().map(|f| f.iter().filter(|f| f["kind"] == "result").count()))
        .unwrap_or(0);
    let results = (r.reason.is_none() && r.state == PointState::Succeeded).then_some(results);
    let power = provenance.as_ref().and_then(|p| p["power"].as_array().cloned()).unwrap_or_default();
    let power = match power.as_slice() {
        [] => Power { valid: None, reasons: Vec::new() },
        checks if checks.iter().all(|c| c["power_valid"] == Value::Bool(true)) => {
            Power { valid: Some(true), reasons: Vec::new() }
        }
        checks => {
            let reasons = checks
                .iter()
                .flat_map(|c| c["reasons"].as_array().into_iter().flatten())
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
            Power { valid: Some(false), reasons }
        }
    };
    Row {
        point: r.point_id.clone(),
        pool: pool.to_owned(),
        job: r.job_id.as_ref().map(|j| j.0.clone()),
        state: r.state.as_str(),
        state_zh: r.state.name_zh(),
        refusal: refusal(r),
        summary: r.reason.clone(),
        results,
        power,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::ledger::StoredJson;
    use crate::sweep::scheduler::JobId;

    fn rec(id: &str, state: PointState, reason: Option<&str>, power_valid: Option<bool>) -> PointRecord {
        let provenance = power_valid.map(|v| {
            StoredJson::from_value(&serde_json::json!({
                "files": [{"kind": "result"}],
                "power": [{"power_valid": v, "reasons": if v { vec![] } else { vec!["sampling_gap_exceeded"] }}]
            }))
            .unwrap()
        });
        PointRecord {
            point_id: id.into(),
            ord: 0,
            family: "f".into(),
            is_canary: id == "canary",
            state,
            job_name: format!("sg-{id}"),
            job_id: Some(JobId(format!("{}", 10 + id.len()))),
            sbatch_calls: 1,
            submit_info: None,
            cancel_reason: None,
            reason: reason.map(str::to_owned),
            exit_code: None,
            state_source: None,
            provenance,
        }
    }

    fn view(records: Vec<PointRecord>, cancelled: bool) -> CheckRunInput {
        let skipped = [SkippedRow { family: "multi-node".into(), exp_name: "dsr1 | x".into(), runner: "gb200".into() }];
        SweepView {
            check_name: "sweepgate/sweep",
            sweep_id: "pr7-abc-a1",
            head_sha: &"a".repeat(40),
            pools: vec![("local", records)],
            skipped: &skipped,
            error: None,
            cancelled,
            notes: &[],
            priority_policy: Some(&PolicySource::SpecDefault {
                path: "configs/ci-priority.yaml".into(),
                at: "0123456789abcdef".into(),
                proposed: true,
            }),
            performance: None,
        }
        .render()
        .unwrap()
    }

    /// Issue 24: the check run showed raw sbatch stderr (account, service user, host name).
    #[test]
    fn a_refused_job_shows_its_class_never_the_schedulers_text() {
        let mut refused = rec("p1", PointState::Failed, None, None);
        refused.reason = Some(
            "sbatch refused the job: `sbatch` failed (exit 1): Invalid account or account/partition combination \
             specified (user svc-bench, host login-07.corp.internal)"
                .into(),
        );
        refused.provenance = Some(StoredJson::from_value(&serde_json::json!({"refusal": "invalid_account"})).unwrap());
        let mut gone =
            rec("p2", PointState::Failed, Some("pool x has not answered for 600s (last error: ssh: login-07)"), None);
        gone.provenance = Some(StoredJson::from_value(&serde_json::json!({"refusal": "unreachable"})).unwrap());
        let done = view(vec![refused, gone], false);
        let text = &done.output.text;
        assert!(text.contains("the scheduler refused the job: invalid account"), "{text}");
        assert!(text.contains("调度器拒绝了该作业：账户无效"), "{text}");
        assert!(
            text.contains("the pool's scheduler did not answer") && text.contains("该池的调度器没有响应"),
            "{text}"
        );
        assert!(!text.contains("svc-bench") && !text.contains("login-07"), "{text}");
    }

    #[test]
    fn running_then_success_with_the_per_point_table() {
        let running = view(
            vec![rec("canary", PointState::Succeeded, None, Some(true)), rec("p1", PointState::Running, None, None)],
            false,
        );
        assert_eq!((running.status.as_str(), running.conclusion.as_deref()), ("in_progress", None));
        assert!(
            running.output.title.starts_with("Sweep running: 1/2 points done · 扫描运行中"),
            "{}",
            running.output.title
        );
        let done = view(
            vec![
                rec("canary", PointState::Succeeded, None, Some(true)),
                rec("p1", PointState::Succeeded, None, Some(true)),
            ],
            false,
        );
        assert_eq!((done.status.as_str(), done.conclusion.as_deref()), ("completed", Some("success")));
        assert!(
            done.output.summary.contains("Canary: **succeeded**") && done.output.summary.contains("金丝雀：**成功**")
        );
        assert!(done.output.summary.contains("runner `gb200`"), "{}", done.output.summary);
        assert!(
            done.output
                .summary
                .contains("CI priority: `configs/ci-priority.yaml` is absent at the default branch's tip `0123456789`")
                && done.output.summary.contains("The PR proposes a change to it: proposed only")
                && done
                    .output
                    .summary
                    .contains("CI 优先级：默认分支最新提交 `0123456789` 中没有 `configs/ci-priority.yaml`")
                && done.output.summary.contains("本 PR 提议修改该文件：仅为提议"),
            "{}",
            done.output.summary
        );
        assert!(
            done.output.text.contains("| p1 | local | 12 | succeeded | 1 result file | valid |"),
            "{}",
            done.output.text
        );
    }

    #[test]
    fn failures_come_first_and_decide_the_conclusion() {
        let out = view(
            vec![
                rec("canary", PointState::Succeeded, None, Some(true)),
                rec("ok", PointState::Succeeded, None, Some(false)),
                rec("bad", PointState::Failed, Some("exit code 3"), None),
            ],
            false,
        );
        assert_eq!(out.conclusion.as_deref(), Some("failure"));
        let text = &out.output.text;
        let bad = text.find("| bad |").unwrap();
        assert!(bad < text.find("| canary |").unwrap(), "{text}");
        assert!(text.contains("exit code 3") && text.contains("invalid: sampling_gap_exceeded"), "{text}");
        let cancelled = view(vec![rec("p", PointState::Cancelled, Some("cancel requested"), None)], true);
        assert_eq!(cancelled.conclusion.as_deref(), Some("cancelled"));
    }

    #[test]
    fn a_sweep_that_could_not_run_fails_naming_why() {
        let out = SweepView {
            check_name: "sweepgate/sweep",
            sweep_id: "s",
            head_sha: "h",
            pools: vec![],
            skipped: &[],
            error: Some("pool local: recipe x has two matching variants"),
            cancelled: false,
            notes: &[],
            priority_policy: None,
            performance: None,
        }
        .render()
        .unwrap();
        assert_eq!(out.conclusion.as_deref(), Some("failure"));
        assert!(out.output.summary.contains("two matching variants"));
        let empty = SweepView {
            error: None,
            ..SweepView {
                check_name: "n",
                sweep_id: "s",
                head_sha: "h",
                pools: vec![],
                skipped: &[],
                error: None,
                cancelled: false,
                notes: &[],
                priority_policy: None,
                performance: None,
            }
        };
        assert_eq!(empty.conclusion(), Some("failure"), "nothing ran is never a success");
    }

    /// Issue 26: the completed check run shows the sweep's run against the published curve
    /// (regressions first, noise counted), or says why it could not be compared.
    #[test]
    fn the_completed_check_run_shows_the_comparison_with_the_published_curve() {
        use crate::results::compare::{Class, Metric, Note, Row};
        let row = |point: &str, metric, published, head, delta, class| Row {
            config: "dsr1-fp4-b200-sglang".into(),
            scenario: "8k1k".into(),
            point: point.into(),
            metric,
            published: Some(published),
            head: Some(head),
            delta_pct: Some(delta),
            noise_pct: Some(2.22),
            class,
            notes: Vec::new(),
            published_run: Some(3),
            head_run: Some(901),
            history: 4,
            frontier: true,
            coverage: None,
        };
        let mut ttft = row("8k1k tp8 c16 <x>", Metric::Ttft, 0.5, 0.5, 0.0, Class::Unknown);
        (ttft.head, ttft.delta_pct, ttft.notes) = (None, None, vec![Note::NoMetric]);
        let perf = Ok(Performance {
            rows: vec![
                row("8k1k tp8 c4", Metric::TputPerGpu, 1000.0, 1005.0, 0.5, Class::Noise),
                row("8k1k tp8 c16 <x>", Metric::TputPerGpu, 2000.0, 1900.0, -5.0, Class::Regression),
                ttft,
            ],
            truncated: 0,
            warning: None,
        });
        let records = vec![rec("canary", PointState::Succeeded, None, Some(true))];
        let view = |performance| SweepView {
            check_name: "sweepgate/sweep",
            sweep_id: "pr7-abc-a1",
            head_sha: "h",
            pools: vec![("local", records.clone())],
            skipped: &[],
            error: None,
            cancelled: false,
            notes: &[],
            priority_policy: None,
            performance,
        };
        let done = view(Some(&perf)).render().unwrap();
        let summary = &done.output.summary;
        // The comparison in both languages (the Chinese half follows the English one).
        let comparison: String =
            summary.lines().skip_while(|l| !l.starts_with("**Performance against")).map(|l| format!("{l}\n")).collect();
        insta::assert_snapshot!("sweep_check_performance", comparison);
        assert!(summary.contains("head run 901 against published run 3; 1 within noise"), "{summary}");
        assert!(summary.contains("头部运行 901，对比已发布运行 3"), "{summary}");
        assert!(!summary.contains("<x>"), "point labels are escaped: {summary}");
        let failed = Err("the PR's evidence could not be collected: HTTP 502".to_owned());
        let done = view(Some(&failed)).render().unwrap();
        assert!(
            done.output.summary.contains(
                "**Performance against the published curve**: not compared (`the PR's evidence could not be collected: HTTP 502`)."
            ) && done.output.summary.contains("**与已发布曲线的性能对比**：未能对比（`the PR's evidence"),
            "{}",
            done.output.summary
        );
        let running = view(None).render().unwrap();
        assert!(!running.output.summary.contains("published curve"), "nothing before the sweep completed");
    }
}
