//! The bilingual sticky status comment `sweepgate dispatch --status-comment` keeps on the PR:
//! counts, then every point that did not succeed with its reason, English then 中文. Pure.
//! Point ids, families and reasons (Slurm's or a job's words) are escaped by the templates'
//! `inline` filter like any user text.

use super::dispatch::Counts;
use super::ledger::{PointRecord, PointState};
use serde_json::json;

use crate::report::marker::Marker;
use crate::report::{render_bilingual, RenderError};

/// At most this many problem points are listed (the rest are counted).
const MAX_LISTED: usize = 25;

/// What the comment shows of one point.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusRow {
    pub point: String,
    pub family: String,
    pub state: PointState,
    pub job: Option<String>,
    pub detail: Option<String>,
}

impl From<&PointRecord> for StatusRow {
    fn from(r: &PointRecord) -> StatusRow {
        StatusRow {
            point: r.point_id.clone(),
            family: r.family.clone(),
            state: r.state,
            job: r.job_id.as_ref().map(|j| j.0.clone()),
            detail: r.reason.clone(),
        }
    }
}

/// The marker that finds this sweep's comment on the PR again.
pub fn marker(pr: u64, sweep_id: &str) -> Marker {
    Marker::new("dispatch").with("pr", pr).with("sweep", sweep_id)
}

/// The comment body (without the marker line), from `templates/dispatch_status.*.md.j2`.
pub fn render(sweep_id: &str, counts: &Counts, problems: &[StatusRow], finished: bool) -> Result<String, RenderError> {
    let listed: Vec<serde_json::Value> = problems
        .iter()
        .take(MAX_LISTED)
        .map(|row| {
            json!({
                "point": row.point, "family": row.family, "job": row.job, "detail": row.detail,
                "state": row.state.as_str(), "state_zh": row.state.name_zh(),
            })
        })
        .collect();
    let context = json!({
        "sweep_id": sweep_id,
        "finished": finished,
        "all_succeeded": counts.failed + counts.cancelled + counts.skipped == 0,
        "counts": counts,
        "problems": listed,
        "more": problems.len().saturating_sub(MAX_LISTED),
    });
    render_bilingual("dispatch_status", &context)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(point: &str, state: PointState, detail: Option<&str>) -> StatusRow {
        StatusRow {
            point: point.into(),
            family: "single-node 1k1k".into(),
            state,
            job: Some("42".into()),
            detail: detail.map(String::from),
        }
    }

    #[test]
    fn finished_with_failures() {
        let counts = Counts { total: 4, succeeded: 2, failed: 1, cancelled: 1, ..Counts::default() };
        let problems = [
            row("tp2-c4", PointState::Failed, Some("exit code 3 @org/team <b>x</b> `y`")),
            row("tp2-c8", PointState::Cancelled, Some("fail-fast: tp2-c4 in family single-node 1k1k ended failed")),
        ];
        insta::assert_snapshot!(render("pr7-abc", &counts, &problems, true).unwrap());
    }

    #[test]
    fn running_and_all_green_titles() {
        let running =
            render("s", &Counts { total: 3, active: 1, planned: 2, ..Counts::default() }, &[], false).unwrap();
        assert!(running.starts_with("### Sweep `s`: ⏳ running") && running.contains("扫描 `s`：⏳ 运行中"));
        let green = render("s", &Counts { total: 3, succeeded: 3, ..Counts::default() }, &[], true).unwrap();
        assert!(green.contains("every point succeeded") && green.contains("全部成功") && !green.contains("did not"));
    }

    #[test]
    fn long_problem_lists_are_bounded() {
        let problems: Vec<StatusRow> = (0..30).map(|i| row(&format!("p{i}"), PointState::Failed, None)).collect();
        let text = render("s", &Counts { total: 30, failed: 30, ..Counts::default() }, &problems, true).unwrap();
        assert_eq!(text.matches("- p").count(), 2 * MAX_LISTED);
        assert!(text.contains("- … 5 more") && text.contains("- … 另有 5 个"));
    }

    #[test]
    fn marker_names_pr_and_sweep() {
        assert_eq!(marker(7, "pr7-abc").to_string(), "<!-- sweepgate:dispatch pr=7 sweep=pr7-abc -->");
    }
}
