//! Check 14 — Pareto coverage (spec 30 Check 14, spec 40 §3.4): every affected curve of the
//! qualifying in-PR run has ≥ 5 points on its throughput-vs-E2EL frontier and no invalid
//! points. Advisory: WARN, never FAIL. The outcome carries a [`FrontierChart`] per curve (arg
//! `charts`): the report prints it as Mermaid in a collapsed section, `sweepgate action` writes
//! it as SVG next to the job summary.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{reason, Context, Outcome, Verdict};
use crate::evidence::{Evidence, Fact};
use crate::pr::affected::affected_configs;
use crate::pr::curves::{run_curves, Curve};
use crate::pr::sweep_runs::qualifying_run;
use crate::results::chart::{self, CurveChart};
use crate::results::pareto::{assess_curve, CoverageStatus, CurveEvidence, Point, RECOMMENDED_POINTS};

/// A comment that records an admin bypass: its author is a repository admin (permission and
/// role both `admin`, spec 30 Check 14 rule 7), it is not a bot, it says "bypass" and names
/// the assessed commit (its first 7 hex digits suffice).
fn admin_bypass(ev: &Evidence) -> Option<String> {
    let sha = ev.short_sha().to_ascii_lowercase();
    ev.comments.iter().find_map(|c| {
        let admin = matches!(ev.permissions.get(&c.author),
            Some(Fact::Ok(p)) if p.permission == "admin" && p.role_name == "admin");
        let body = c.body.to_ascii_lowercase();
        let human = !c.author.ends_with("[bot]");
        (admin && human && body.contains("bypass") && body.contains(&sha)).then(|| c.author.clone())
    })
}

fn mermaid_label(s: &str) -> String {
    s.chars().map(|c| if matches!(c, '"' | '\n' | '\r' | '`' | '[' | ']' | '<' | '>') { ' ' } else { c }).collect()
}

/// One measured point of a charted curve, in the E2EL plane.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ChartPoint {
    pub conc: i64,
    /// Median E2EL (s).
    pub e2el: f64,
    /// Total throughput per GPU (tok/s).
    pub tput: f64,
    /// On the frontier Check 14 counted.
    pub frontier: bool,
}

/// One affected curve as Check 14 charts it: its eligible points and the frontier it judged.
/// Computed once by the check and carried in its outcome (arg `charts`), so the verdict's
/// Mermaid and the Action's SVG draw the same data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrontierChart {
    /// The curve's series key (`model/scenario/hw/precision/run/percentile`).
    pub curve: String,
    /// Measurement order; invalid points are left out (they are counted in the row).
    pub points: Vec<ChartPoint>,
}

const X_LABEL: &str = "E2EL (s), by concurrency";
const Y_LABEL: &str = "Total tput per GPU (tok/s)";

impl FrontierChart {
    fn new(curve: &Curve, points: &[Point], front: &[usize]) -> FrontierChart {
        let points = points
            .iter()
            .zip(&curve.points)
            .enumerate()
            .filter(|(_, (p, _))| p.is_eligible())
            .map(|(i, (p, m))| ChartPoint { conc: m.conc, e2el: p.x, tput: p.y, frontier: front.contains(&i) })
            .collect();
        FrontierChart { curve: curve.key.to_string(), points }
    }

    /// The charts of a verdict's Check 14 (none when it drew none).
    pub fn of_verdict(verdict: &Verdict) -> Vec<FrontierChart> {
        let charts = verdict.result(14).and_then(|r| r.outcome.message.args.get("charts"));
        charts.and_then(|c| serde_json::from_value(c.clone()).ok()).unwrap_or_default()
    }

    fn plane(&self) -> Vec<Point> {
        self.points.iter().map(|p| Point::new(p.e2el, p.tput)).collect()
    }

    /// `xychart-beta`: a bar per measured point (x = E2EL, labelled with its conc), and the
    /// frontier as a step line (the best frontier throughput reached at or below that E2EL).
    pub fn mermaid(&self) -> String {
        let mut order: Vec<&ChartPoint> = self.points.iter().collect();
        order.sort_by(|a, b| a.e2el.total_cmp(&b.e2el));
        let labels: Vec<String> = order.iter().map(|p| format!("\"c{} {:.1}s\"", p.conc, p.e2el)).collect();
        let bars: Vec<String> = order.iter().map(|p| format!("{:.1}", p.tput)).collect();
        let mut best = 0.0f64;
        let steps: Vec<String> = order
            .iter()
            .map(|p| {
                if p.frontier {
                    best = best.max(p.tput);
                }
                format!("{best:.1}")
            })
            .collect();
        let y_max = self.points.iter().fold(0.0f64, |m, p| m.max(p.tput));
        let mut out = String::new();
        let _ = writeln!(out, "xychart-beta");
        let _ = writeln!(out, "    title \"{}\"", mermaid_label(&self.curve));
        let _ = writeln!(out, "    x-axis \"{X_LABEL}\" [{}]", labels.join(", "));
        let _ = writeln!(out, "    y-axis \"{Y_LABEL}\" 0 --> {:.0}", (y_max * 1.1).ceil().max(1.0));
        let _ = writeln!(out, "    bar [{}]", bars.join(", "));
        let _ = write!(out, "    line [{}]", steps.join(", "));
        out
    }

    /// The same curve as a standalone SVG scatter with the frontier polyline.
    pub fn svg(&self) -> String {
        let head = self.plane();
        let front: Vec<usize> = (0..self.points.len()).filter(|&i| self.points[i].frontier).collect();
        chart::svg(&CurveChart {
            title: &self.curve,
            x_label: "E2EL (s)",
            y_label: Y_LABEL,
            head: &head,
            frontier: &front,
            removed: &[],
        })
    }
}

pub fn check(cx: &Context) -> Outcome {
    let ev = cx.evidence;
    let bypass = admin_bypass(ev);
    let bypass_arg = bypass.clone().unwrap_or_default();
    let affected = match affected_configs(cx) {
        Ok(a) => a,
        Err(error) => {
            return Outcome::warn("unverifiable")
                .arg("reason", reason("affected_unknown").arg("error", error))
                .arg("bypass", bypass_arg)
        }
    };
    if affected.is_empty() {
        return Outcome::na("no_curve_affected");
    }
    let Some(run) = qualifying_run(ev) else {
        return Outcome::warn("unverifiable").arg("reason", reason("no_passing_run")).arg("bypass", bypass_arg);
    };
    let measured = run_curves(ev, run.benchmark_run_id);
    let mut rows = Vec::new();
    let mut charts = Vec::new();
    let mut all_pass = measured.unreadable.is_empty();
    let mut missing: Vec<String> = Vec::new();
    for config in &affected {
        if !measured.curves.iter().any(|c| c.belongs_to(config)) {
            missing.push(config.key.clone());
        }
    }
    all_pass &= missing.is_empty();
    for curve in measured.curves.iter().filter(|c| affected.iter().any(|a| c.belongs_to(a))) {
        let points: Vec<Point> = curve.points.iter().map(|p| p.e2el).collect();
        let coverage = assess_curve(CurveEvidence { points: &points, north_star: None });
        all_pass &= coverage.status == CoverageStatus::Pass;
        let on_front: Vec<String> = coverage.frontier.iter().map(|&i| format!("c{}", curve.points[i].conc)).collect();
        // Why a curve does not pass, for the row's sub-rules (14.c invalid points, else 14.a).
        let problem = (coverage.status != CoverageStatus::Pass).then_some(if coverage.invalid_points > 0 {
            "invalid_points"
        } else {
            "few_points"
        });
        rows.push(json!({
            "problem": problem,
            "curve": curve.key.to_string(),
            "frontier": coverage.frontier_points(),
            "measured": coverage.measured_points,
            "invalid": coverage.invalid_points,
            "points": on_front.join(", "),
            "ok": coverage.status == CoverageStatus::Pass,
        }));
        charts.push(FrontierChart::new(curve, &points, &coverage.frontier));
    }
    let outcome = if all_pass {
        Outcome::pass("covered")
    } else {
        Outcome::warn("under_covered")
            .arg("missing", missing)
            .arg(
                "unreadable",
                measured.unreadable.into_iter().map(|u| u.reason.into()).collect::<Vec<serde_json::Value>>(),
            )
            .arg("bypass", bypass_arg)
    };
    outcome
        .arg("curves", rows)
        .arg("run", run.label())
        .arg("recommended", RECOMMENDED_POINTS)
        // Finite numbers only (invalid points are left out), so this cannot fail.
        .arg("charts", serde_json::to_value(&charts).unwrap_or_default())
        // A sweepgate sweep has no Actions page; it is named instead (decision L7).
        .evidence(match &run.sweep_id {
            Some(_) => run.evidence_line(),
            None => format!("https://github.com/{}/actions/runs/{}", ev.repository, run.run_id),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, run, with_change};
    use crate::checks::Status;
    use crate::evidence::{Comment, Permission};
    use crate::pr::curves::fixtures::add_fixed_point;

    const MASTER: &str = "dsr1-fp4-b200-sglang:\n  image: lmsysorg/sglang:v0.5.9\n  model-prefix: dsr1\n  runner: b200\n  precision: fp4\n  framework: sglang\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-list: [4, 8, 16, 32, 64] }\n";

    fn affected_evidence(points: usize) -> Evidence {
        let mut e = with_change(
            evidence(),
            "configs/nvidia-master.yaml",
            "@@ -12,1 +12,1 @@\n+      - { tp: 8, conc-list: [4, 8, 16, 32, 64] }\n",
        );
        e.head.insert("configs/nvidia-master.yaml", MASTER);
        let sha = e.pull_request.head_sha.clone();
        e.check_runs.insert(
            sha,
            Fact::Ok(vec![run("single-node 8k1k / dsr1", "success", 7), run("eval / dsr1", "success", 7)]),
        );
        for i in 0..points {
            let conc = 4u32 << i;
            add_fixed_point(&mut e, 7, 8, conc, 10.0 * (i + 1) as f64, 100.0, 100.0 * (i + 1) as f64);
        }
        e
    }

    #[test]
    fn five_frontier_points_pass_with_a_chart() {
        let o = check(&Context::new(&affected_evidence(5)));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        let charts: Vec<FrontierChart> = serde_json::from_value(o.message.args["charts"].clone()).unwrap();
        assert!(charts[0].mermaid().starts_with("xychart-beta\n    title \"dsr1/8k1k/b200_sglang/fp4/7/median\""));
        let svg = charts[0].svg();
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>\n"), "{svg}");
        assert_eq!(svg.matches(r##"r="4.5" fill="#1565c0""##).count(), 5 + 1, "five frontier knots and the legend");
    }

    #[test]
    fn three_points_warn_and_say_three_of_five() {
        let o = check(&Context::new(&affected_evidence(3)));
        assert_eq!(o.status, Status::Warn);
        assert_eq!(o.message.args["curves"][0]["frontier"], 3);
        assert_eq!(o.message.args["bypass"], "");
    }

    #[test]
    fn dominated_and_invalid_points_do_not_count() {
        let mut e = affected_evidence(5);
        // Slower and lower than c4: dominated; and one point with no E2EL.
        add_fixed_point(&mut e, 7, 4, 128, 60.0, 10.0, 50.0);
        add_fixed_point(&mut e, 7, 4, 256, f64::NAN, 10.0, 5000.0);
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Warn);
        assert_eq!(o.message.args["curves"][0]["invalid"], 1);
        assert_eq!(o.message.args["curves"][0]["frontier"], 5);
    }

    #[test]
    fn missing_artifacts_or_run_are_unverifiable_not_pass() {
        let mut e = affected_evidence(0);
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.message.args["missing"][0].as_str()), (Status::Warn, Some("dsr1-fp4-b200-sglang")));
        // A result file in no shape the workflows upload is named, never read as "no points".
        e.artifacts.insert("7/bmk_agentic_x/x_c8.json", "{}");
        let o = check(&Context::new(&e));
        assert_eq!(
            o.message.args["unreadable"][0],
            json!({"$reason": "result_name_unknown", "path": "7/bmk_agentic_x/x_c8.json"}),
        );
        let [en, _] = crate::checks::tests_support::assert_renders(14, &o);
        assert!(en.contains("unreadable artifact: `7/bmk_agentic_x/x_c8.json`: matches no result file"), "{en}");
        e.check_runs.clear();
        assert_eq!(check(&Context::new(&e)).message.key, "unverifiable");
    }

    #[test]
    fn admin_bypass_needs_admin_permission_and_role() {
        let mut e = affected_evidence(2);
        let comment = |author: &str| Comment {
            id: 5,
            author: author.into(),
            author_association: "MEMBER".into(),
            body: format!("Admin bypass for {}: coverage accepted", &"b".repeat(40)[..7]),
            created_at: String::new(),
            updated_at: String::new(),
            url: String::new(),
        };
        e.comments.push(comment("maint"));
        e.permissions
            .insert("maint".into(), Fact::Ok(Permission { permission: "admin".into(), role_name: "maintain".into() }));
        assert_eq!(check(&Context::new(&e)).message.args["bypass"], "");
        e.permissions
            .insert("maint".into(), Fact::Ok(Permission { permission: "admin".into(), role_name: "admin".into() }));
        let o = check(&Context::new(&e));
        assert_eq!((o.status, &o.message.args["bypass"]), (Status::Warn, &json!("maint")));
    }

    #[test]
    fn no_config_change_is_na() {
        assert_eq!(check(&Context::new(&evidence())).status, Status::NotApplicable);
    }
}
