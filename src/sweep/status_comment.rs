//! The bilingual sticky status comment `sweepgate dispatch --status-comment` keeps on the PR:
//! counts, then every point that did not succeed with its reason, English then 中文. Pure.
//! Point ids, families and reasons (Slurm's or a job's words) are escaped like any user text.

use super::dispatch::Counts;
use super::ledger::{PointRecord, PointState};
use crate::report::escape::{code, inline};
use crate::report::marker::Marker;

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

fn state_zh(state: PointState) -> &'static str {
    match state {
        PointState::Planned => "计划中",
        PointState::Submitting => "提交中",
        PointState::Submitted => "已提交",
        PointState::Running => "运行中",
        PointState::Succeeded => "成功",
        PointState::Failed => "失败",
        PointState::Cancelled => "已取消",
        PointState::TimedOut => "超时",
        PointState::NodeFailed => "节点故障",
        PointState::Skipped => "已跳过",
    }
}

/// The comment body (without the marker line).
pub fn render(sweep_id: &str, counts: &Counts, problems: &[StatusRow], finished: bool) -> String {
    let sweep = code(sweep_id);
    let c = counts;
    let (title_en, title_zh) = match (finished, c.failed + c.cancelled + c.skipped) {
        (false, _) => ("⏳ running", "⏳ 运行中"),
        (true, 0) => ("✅ finished: every point succeeded", "✅ 已结束：全部成功"),
        (true, _) => ("❌ finished with failures", "❌ 已结束，存在失败"),
    };
    let mut out = format!("### Sweep {sweep}: {title_en}\n\n");
    out += "| total | succeeded | failed | cancelled | skipped | active | waiting |\n|---|---|---|---|---|---|---|\n";
    let numbers = format!(
        "| {} | {} | {} | {} | {} | {} | {} |\n",
        c.total, c.succeeded, c.failed, c.cancelled, c.skipped, c.active, c.planned
    );
    out += &numbers;
    out += &problem_list(problems, "Points that did not succeed:", "more", |s| s.as_str());
    out += &format!("\n---\n\n### 扫描 {sweep}：{title_zh}\n\n");
    out += "| 总数 | 成功 | 失败 | 已取消 | 已跳过 | 运行中 | 等待 |\n|---|---|---|---|---|---|---|\n";
    out += &numbers;
    out += &problem_list(problems, "未成功的点：", "更多", state_zh);
    out
}

fn problem_list(
    problems: &[StatusRow],
    heading: &str,
    more: &str,
    state: impl Fn(PointState) -> &'static str,
) -> String {
    if problems.is_empty() {
        return String::new();
    }
    let mut out = format!("\n{heading}\n\n");
    for row in problems.iter().take(MAX_LISTED) {
        let job = row.job.as_deref().map(|j| format!(" (job {})", inline(j))).unwrap_or_default();
        let detail = row.detail.as_deref().map(|d| format!(": {}", inline(d))).unwrap_or_default();
        out += &format!("- {} · {}{job}: **{}**{detail}\n", inline(&row.point), inline(&row.family), state(row.state));
    }
    if problems.len() > MAX_LISTED {
        out += &format!("- … {} {more}\n", problems.len() - MAX_LISTED);
    }
    out
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
        insta::assert_snapshot!(render("pr7-abc", &counts, &problems, true));
    }

    #[test]
    fn running_and_all_green_titles() {
        let running = render("s", &Counts { total: 3, active: 1, planned: 2, ..Counts::default() }, &[], false);
        assert!(running.starts_with("### Sweep `s`: ⏳ running") && running.contains("扫描 `s`：⏳ 运行中"));
        let green = render("s", &Counts { total: 3, succeeded: 3, ..Counts::default() }, &[], true);
        assert!(green.contains("every point succeeded") && green.contains("全部成功") && !green.contains("did not"));
    }

    #[test]
    fn long_problem_lists_are_bounded() {
        let problems: Vec<StatusRow> = (0..30).map(|i| row(&format!("p{i}"), PointState::Failed, None)).collect();
        let text = render("s", &Counts { total: 30, failed: 30, ..Counts::default() }, &problems, true);
        assert_eq!(text.matches("- p").count(), 2 * MAX_LISTED);
        assert!(text.contains("- … 5 more") && text.contains("- … 5 更多"));
    }

    #[test]
    fn marker_names_pr_and_sweep() {
        assert_eq!(marker(7, "pr7-abc").to_string(), "<!-- sweepgate:dispatch pr=7 sweep=pr7-abc -->");
    }
}
