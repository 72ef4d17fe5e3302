//! Performance against the published curve (issue 26) over one Evidence: per affected config and
//! point, the head run against the config's last published run, with the point's history from
//! the ingested cohort (the published runs and the main-branch `push` runs the evidence holds,
//! as Check 2's cohort). Advisory: it never changes a check's status.
//!
//! Curves are read through [`run_curves`] (one reader); the comparison itself is
//! [`crate::results::compare`].

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::affected::affected_configs;
use super::configs::AffectedConfig;
use super::curves::{run_curves, Curve, MeasuredPoint, RunCurves};
use super::generated::has_config;
use super::sweep_runs::qualifying_run;
use super::Context;
use crate::domain::sweepgate_policy::SweepgatePolicy;
use crate::evidence::{Evidence, Fact, ALL_SERIES};
use crate::repo::Logical;
use crate::results::compare::{compare_point, Class, Coverage, Metric, PointInput, Row, Values};
use crate::results::pareto::{frontier, removed_point_coverage, Direction, Point};

/// Most rows of one comparison (4 per point); the rest are counted in `truncated`.
pub const MAX_ROWS: usize = 4096;
/// Most main-branch runs read as history (the newest).
pub const MAX_HISTORY_RUNS: usize = 16;

/// The comparison of one head run: rows sorted by config, then as the points were matched.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Performance {
    pub rows: Vec<Row>,
    /// Rows left out beyond [`MAX_ROWS`].
    pub truncated: usize,
    /// The WARN row a repository opts in to (decision PF4): set only when a point of the
    /// published frontier regresses beyond its band. Never changes a check's status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<Warning>,
}

/// Frontier points that regress beyond their noise band, in a repository that asks to be warned
/// (`performance.warn-on-frontier-regression` in `.github/sweepgate.yaml` at the target tip).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warning {
    /// The policy file that opts in (or that could not be read).
    pub policy: String,
    /// Why the opt-in could not be read: the row then says a warning may be wanted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
    pub points: Vec<WarnPoint>,
}

/// One regressing frontier point and the metrics that regress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WarnPoint {
    pub config: String,
    pub point: String,
    pub metrics: Vec<Metric>,
}

/// Whether the repository opts in to the WARN row: `Ok(Some(path))` yes, `Ok(None)` no (no
/// file, or the key off), `Err((path, why))` the policy could not be read.
fn opt_in(cx: &Context) -> Result<Option<String>, (String, String)> {
    let ev = cx.evidence;
    let default = Logical::SweepgatePolicy.default_candidates().join(" or ");
    if let Fact::Unavailable(reason) = ev.policy_fact() {
        return Err((default, reason.clone()));
    }
    let tree = ev.policy_tree();
    let path = match cx.layout().resolve(tree, Logical::SweepgatePolicy) {
        Ok(Some(path)) => path,
        Ok(None) => return Ok(None),
        Err(e) => return Err((default, e.to_string())),
    };
    let Some(text) = tree.text(&path) else { return Err((path, "not UTF-8 text".into())) };
    match SweepgatePolicy::parse(text, &path) {
        Ok(policy) => Ok(policy.warn_on_frontier_regression.then_some(path)),
        Err(diags) => {
            let why = diags.first().map_or_else(|| "unreadable".to_owned(), ToString::to_string);
            Err((path, why))
        }
    }
}

/// The WARN row of `rows`, when a published frontier point regresses beyond its band and the
/// repository opts in (or its opt-in cannot be read). Within the band, or not opted in: none.
fn warning(cx: &Context, rows: &[Row]) -> Option<Warning> {
    let mut points: Vec<WarnPoint> = Vec::new();
    for r in rows.iter().filter(|r| r.frontier && r.class == Class::Regression) {
        match points.last_mut() {
            Some(p) if p.config == r.config && p.point == r.point => p.metrics.push(r.metric),
            _ => points.push(WarnPoint { config: r.config.clone(), point: r.point.clone(), metrics: vec![r.metric] }),
        }
    }
    if points.is_empty() {
        return None;
    }
    let (policy, unreadable) = match opt_in(cx) {
        Ok(None) => return None,
        Ok(Some(path)) => (path, None),
        Err((path, why)) => (path, Some(why)),
    };
    Some(Warning { policy, unreadable, points })
}

/// The comparison for the verdict: the qualifying in-PR run against the published runs (empty
/// when there is no qualifying run or the affected configs are unknown; Checks 1 and 18 say why).
pub fn compare(evidence: &Evidence) -> Performance {
    compare_in(&Context::new(evidence))
}

/// [`compare`] in a verification's context: the affected configs and curves the checks derived
/// are not derived again (`checks::verify` computes it once, into the [`super::Verdict`]).
pub fn compare_in(cx: &Context) -> Performance {
    qualifying_run(cx.evidence).map(|run| compare_run_in(cx, run.run_id)).unwrap_or_default()
}

/// What the evidence knows of a config's published series.
enum Baseline {
    Run(u64),
    /// The config is new at the head: every point is `new`.
    New,
    /// The lookup failed or is not recorded: no baseline.
    Unknown,
}

fn baseline(ev: &Evidence, config: &AffectedConfig) -> Baseline {
    let runs = &ev.upstream.published_runs;
    match runs.get(&config.key).or_else(|| runs.get(ALL_SERIES)) {
        Some(Fact::Ok(Some(run))) => Baseline::Run(run.run_id),
        Some(Fact::Ok(None)) => Baseline::New,
        Some(Fact::Unavailable(_)) => Baseline::Unknown,
        None if has_config(&ev.base, &config.key) => Baseline::Unknown,
        None => Baseline::New,
    }
}

/// A point's identity within its series: recipe and conc; multinode: conc only.
type PointKey = (Option<String>, i64);

fn key_of(config: &AffectedConfig, p: &MeasuredPoint) -> PointKey {
    ((!config.multinode).then(|| p.recipe.clone()), p.conc)
}

fn label(scenario: &str, key: &PointKey) -> String {
    match &key.0 {
        Some(recipe) => format!("{scenario} {recipe} c{}", key.1),
        None => format!("{scenario} c{}", key.1),
    }
}

fn values(p: &MeasuredPoint) -> Values {
    Values { tput_per_gpu: p.interactivity.y, interactivity: p.interactivity.x, ttft: p.ttft, e2el: p.e2el.x }
}

/// Indices of a curve's frontier in the interactivity plane (as Check 18(g) draws it).
fn frontier_set(curve: Option<&Curve>) -> BTreeSet<usize> {
    let points: Vec<Point> = curve.map(|c| c.points.iter().map(|p| p.interactivity).collect()).unwrap_or_default();
    frontier(&points, Direction::UpperLeft).into_iter().collect()
}

/// Reads each run's curves once.
struct Runs<'e> {
    ev: &'e Evidence,
    read: BTreeMap<u64, RunCurves>,
}

impl Runs<'_> {
    fn curves(&mut self, run: u64) -> &RunCurves {
        let ev = self.ev;
        self.read.entry(run).or_insert_with(|| run_curves(ev, run))
    }
}

/// The comparison of run `head_run` (a qualifying in-PR run or a completed sweepgate sweep).
pub fn compare_run(ev: &Evidence, head_run: u64) -> Performance {
    compare_run_in(&Context::new(ev), head_run)
}

fn compare_run_in(cx: &Context, head_run: u64) -> Performance {
    let ev = cx.evidence;
    let Ok(configs) = affected_configs(cx) else { return Performance::default() };
    let mut pushes: Vec<u64> =
        ev.runs.values().filter(|r| r.event == "push" && r.id != head_run).map(|r| r.id).collect();
    pushes.sort_unstable_by_key(|&id| std::cmp::Reverse(id));
    pushes.truncate(MAX_HISTORY_RUNS);
    let mut runs = Runs { ev, read: BTreeMap::new() };
    let mut out = Performance::default();
    for config in &configs {
        let base = baseline(ev, config);
        let head: Vec<Curve> = runs.curves(head_run).curves.iter().filter(|c| c.belongs_to(config)).cloned().collect();
        let published_run = match base {
            Baseline::Run(id) => Some(id),
            _ => None,
        };
        let published: Vec<Curve> = published_run
            .map(|id| runs.curves(id).curves.iter().filter(|c| c.belongs_to(config)).cloned().collect())
            .unwrap_or_default();
        let baseline_known = match base {
            Baseline::Run(_) => !published.is_empty(),
            Baseline::New => true,
            Baseline::Unknown => false,
        };
        let history_runs: BTreeSet<u64> = published_run.into_iter().chain(pushes.iter().copied()).collect();
        // Every series of the config: the head's (with its published curve), then the published
        // ones the head no longer measures.
        let mut series: Vec<(Option<&Curve>, Option<&Curve>)> =
            head.iter().map(|h| (published.iter().find(|b| b.same_series(h)), Some(h))).collect();
        series.extend(published.iter().filter(|b| !head.iter().any(|h| h.same_series(b))).map(|b| (Some(b), None)));
        for (b, h) in series {
            for mut input in series_inputs(config, b, h, &history_runs, &mut runs) {
                input.baseline_known = baseline_known;
                input.published_run = published_run;
                input.head_run = Some(head_run);
                if out.rows.len() + 4 > MAX_ROWS {
                    out.truncated += 4;
                    continue;
                }
                out.rows.extend(compare_point(&input));
            }
        }
    }
    out.warning = warning(cx, &out.rows);
    out
}

/// The points of one series (published curve `b`, head curve `h`) with their histories.
fn series_inputs<'c>(
    config: &'c AffectedConfig,
    b: Option<&Curve>,
    h: Option<&Curve>,
    history_runs: &BTreeSet<u64>,
    runs: &mut Runs<'_>,
) -> Vec<PointInput<'c>> {
    let Some(any) = h.or(b) else { return Vec::new() };
    let scenario = any.key.scenario.clone();
    let (b_front, h_front) = (frontier_set(b), frontier_set(h));
    let b_points: &[MeasuredPoint] = b.map(|c| &c.points[..]).unwrap_or_default();
    let h_points: &[MeasuredPoint] = h.map(|c| &c.points[..]).unwrap_or_default();
    let in_head = |p: &MeasuredPoint| h_points.iter().any(|q| key_of(config, q) == key_of(config, p));
    // Points only in the published run, with Check 18(g)'s coverage by the head curve.
    let removed: Vec<usize> = (0..b_points.len()).filter(|&i| !in_head(&b_points[i])).collect();
    let removed_xy: Vec<Point> = removed.iter().map(|&i| b_points[i].interactivity).collect();
    let head_xy: Vec<Point> = h_points.iter().map(|p| p.interactivity).collect();
    let coverage: BTreeMap<usize, Coverage> = removed_point_coverage(&removed_xy, &head_xy)
        .iter()
        .map(|f| (removed[f.removed], Coverage::of(&f.coverage)))
        .collect();
    let mut keys: Vec<PointKey> = h_points.iter().map(|p| key_of(config, p)).collect();
    keys.extend(removed.iter().map(|&i| key_of(config, &b_points[i])));
    let mut seen = BTreeSet::new();
    keys.retain(|k| seen.insert(k.clone()));
    keys.into_iter()
        .map(|key| {
            let find = |points: &[MeasuredPoint]| points.iter().position(|p| key_of(config, p) == key);
            let (bi, hi) = (find(b_points), find(h_points));
            let history: Vec<Values> = history_runs
                .iter()
                .filter_map(|&run| {
                    let curve = runs.curves(run).curves.iter().find(|c| c.belongs_to(config) && c.same_series(any))?;
                    curve.points.iter().find(|p| key_of(config, p) == key).map(values)
                })
                .collect();
            PointInput {
                config: &config.key,
                scenario: scenario.clone(),
                point: label(&scenario, &key),
                published: bi.map(|i| values(&b_points[i])),
                head: hi.map(|i| values(&h_points[i])),
                history,
                baseline_known: true,
                published_run: None,
                head_run: None,
                frontier: match (bi, hi) {
                    (Some(i), _) => b_front.contains(&i),
                    (None, Some(i)) => h_front.contains(&i),
                    (None, None) => false,
                },
                coverage: bi.and_then(|i| coverage.get(&i).copied()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::c18_consistency::tests::with_curves;
    use crate::evidence::{PublishedRun, WorkflowRun};
    use crate::pr::curves::fixtures::add_fixed_point;
    use crate::results::compare::Note;

    fn classes(perf: &Performance, metric: Metric) -> Vec<(&str, Class, Option<f64>)> {
        perf.rows.iter().filter(|r| r.metric == metric).map(|r| (r.point.as_str(), r.class, r.delta_pct)).collect()
    }

    #[test]
    fn a_bundle_without_a_published_run_shows_new_rows_only() {
        let mut e = with_curves(76.3, 2600.0);
        e.upstream.published_runs.insert(ALL_SERIES.into(), Fact::Ok(None));
        let perf = compare(&e);
        assert_eq!(perf.rows.len(), 8, "{perf:#?}");
        assert!(perf.rows.iter().all(|r| r.class == Class::New && r.published.is_none()), "{perf:#?}");
    }

    #[test]
    fn the_head_is_compared_with_the_published_run_point_by_point() {
        // Published run 3: tp8 c4 (1000 tok/s/GPU, 120 tok/s/user, E2EL 5 s, TTFT 0.5 s),
        // tp8 c16 (2000, 90, 9 s), tp4 c64 (2600, 76.3); head run 7: tp8 c4 (1200, 130, 4 s),
        // tp8 c16 (2400, 100, 8 s). No history beyond the published run: the 10 % default band.
        let perf = compare(&with_curves(76.3, 2600.0));
        let (c4, c16, c64) = (
            "8k1k tp8 ep1 dpa:false spec:none c4",
            "8k1k tp8 ep1 dpa:false spec:none c16",
            "8k1k tp4 ep1 dpa:false spec:none c64",
        );
        assert_eq!(
            classes(&perf, Metric::TputPerGpu),
            [(c4, Class::Improvement, Some(20.0)), (c16, Class::Improvement, Some(20.0)), (c64, Class::Removed, None)]
        );
        // 120 → 130 is +8.33 %: within the default band.
        assert_eq!(
            classes(&perf, Metric::Interactivity),
            [(c4, Class::Noise, Some(8.33)), (c16, Class::Improvement, Some(11.11)), (c64, Class::Removed, None)]
        );
        // Latency: lower is better; 5 s → 4 s is −20 %.
        assert_eq!(
            classes(&perf, Metric::E2el),
            [
                (c4, Class::Improvement, Some(-20.0)),
                (c16, Class::Improvement, Some(-11.11)),
                (c64, Class::Removed, None)
            ]
        );
        let first = &perf.rows[0];
        assert_eq!(
            (first.published_run, first.head_run, &first.notes[..]),
            (Some(3), Some(7), &[Note::DefaultBand][..])
        );
        let removed = perf.rows.iter().find(|r| r.class == Class::Removed).unwrap();
        assert_eq!(removed.coverage, Some(Coverage::OutsideFrontier), "Check 18(g)'s verdict on the removed point");
    }

    /// Three main-branch runs of tp8 c4 around 1000 tok/s/GPU (with the published run: 1000,
    /// 1000, 990, 1010 → MAD 5 → band 3 × 1.4826 × 0.5 % = 2.22 %), and the head at `head_tput`.
    fn with_history(head_tput: f64) -> Evidence {
        let mut e = with_curves(76.3, 2600.0);
        for (run, tput) in [(11, 1000.0), (12, 990.0), (13, 1010.0)] {
            let listed = serde_json::json!({"id": run, "name": "Run Sweep", "path": ".github/workflows/run-sweep.yml",
                "head_sha": "f".repeat(40), "event": "push", "status": "completed", "conclusion": "success"});
            e.runs.insert(run, serde_json::from_value::<WorkflowRun>(listed).expect("a workflow run"));
            add_fixed_point(&mut e, run, 8, 4, 5.0, 120.0, tput);
        }
        add_fixed_point(&mut e, 7, 8, 4, 4.0, 130.0, head_tput);
        e
    }

    #[test]
    fn main_branch_runs_narrow_the_band_and_a_regression_beyond_it_is_named() {
        let perf = compare(&with_history(950.0));
        let row = perf.rows.iter().find(|r| r.metric == Metric::TputPerGpu).unwrap();
        assert_eq!(
            (row.class, row.delta_pct, row.noise_pct, row.history),
            (Class::Regression, Some(-5.0), Some(2.22), 4)
        );
        assert!(row.notes.is_empty() && row.frontier, "{row:?}");
        assert_eq!(perf.warning, None, "advisory by default: no WARN row without the opt-in");
    }

    const OPT_IN: &str = "performance:\n  warn-on-frontier-regression: true\n";

    #[test]
    fn an_opted_in_repository_gets_a_warn_row_for_a_frontier_regression_beyond_its_band() {
        let mut e = with_history(950.0);
        let quiet = compare(&e);
        e.base.insert(".github/sweepgate.yaml", OPT_IN);
        let perf = compare(&e);
        let warning = perf.warning.as_ref().expect("a WARN row");
        assert_eq!((warning.policy.as_str(), warning.unreadable.as_deref()), (".github/sweepgate.yaml", None));
        assert_eq!(
            warning.points,
            [WarnPoint {
                config: perf.rows[0].config.clone(),
                point: "8k1k tp8 ep1 dpa:false spec:none c4".into(),
                metrics: vec![Metric::TputPerGpu]
            }]
        );
        assert_eq!(perf.rows, quiet.rows, "the opt-in changes no row, it adds the warning");
        // Policy is read at the default branch's tip, never from the PR head.
        let mut at_tip = with_history(950.0);
        at_tip.head.insert(".github/sweepgate.yaml", OPT_IN);
        at_tip.trees.policy = Some(Fact::Ok(()));
        assert_eq!(compare(&at_tip).warning, None, "the PR cannot opt itself in");
        at_tip.policy.insert(".github/sweepgate.yaml", OPT_IN);
        assert!(compare(&at_tip).warning.is_some());
    }

    #[test]
    fn within_the_band_or_opted_out_there_is_no_warn_row_and_an_unreadable_opt_in_is_named() {
        // −0.5 % is within the 2.22 % band.
        let mut within = with_history(995.0);
        within.base.insert(".github/sweepgate.yaml", OPT_IN);
        assert_eq!(compare(&within).warning, None);
        let mut off = with_history(950.0);
        off.base.insert(".github/sweepgate.yaml", OPT_IN.replace("true", "false"));
        assert_eq!(compare(&off).warning, None);
        let mut broken = with_history(950.0);
        broken.base.insert(".github/sweepgate.yaml", "performance:\n  warn-on-frontier-regression: sometimes\n");
        let warning = compare(&broken).warning.expect("the regression still shows, with why the opt-in is unknown");
        assert!(warning.unreadable.as_deref().is_some_and(|w| w.contains("expected true or false")), "{warning:?}");
        let mut no_tip = with_history(950.0);
        no_tip.trees.policy = Some(Fact::Unavailable("the tip of the target branch main: HTTP 502".into()));
        let warning = compare(&no_tip).warning.expect("an unknown opt-in is named, never read as 'off'");
        assert!(warning.unreadable.as_deref().is_some_and(|w| w.contains("HTTP 502")), "{warning:?}");
    }

    #[test]
    fn an_unreadable_published_series_is_no_baseline_never_new() {
        let mut e = with_curves(76.3, 2600.0);
        let published = PublishedRun { run_id: 99, pr: 1, source: "main".into(), merged_at: None };
        e.upstream.published_runs.insert(ALL_SERIES.into(), Fact::Ok(Some(published)));
        let perf = compare(&e);
        assert!(!perf.rows.is_empty());
        assert!(perf.rows.iter().all(|r| r.class == Class::Unknown && r.notes == [Note::NoBaseline]), "{perf:#?}");
        e.upstream.published_runs.insert(ALL_SERIES.into(), Fact::Unavailable("HTTP 502".into()));
        assert!(compare(&e).rows.iter().all(|r| r.notes == [Note::NoBaseline]));
    }

    /// Some upstream aggregates have no TTFT: the row names the missing metric, the other
    /// metrics of the point are still compared, and nothing panics or is skipped.
    #[test]
    fn an_aggregate_without_ttft_names_the_missing_metric_in_its_row() {
        let mut e = with_curves(76.3, 2600.0);
        let head: Vec<String> = e.artifacts.paths().filter(|p| p.starts_with("7/bmk_")).map(str::to_owned).collect();
        assert!(!head.is_empty());
        for path in head {
            let mut agg: serde_json::Value = serde_json::from_str(e.artifacts.text(&path).unwrap()).unwrap();
            agg.as_object_mut().unwrap().remove("median_ttft");
            e.artifacts.insert(path, agg.to_string());
        }
        let perf = compare(&e);
        let c4 = "8k1k tp8 ep1 dpa:false spec:none c4";
        let ttft = perf.rows.iter().find(|r| r.metric == Metric::Ttft && r.point == c4).unwrap();
        assert_eq!((ttft.class, ttft.head, ttft.delta_pct), (Class::Unknown, None, None), "{ttft:?}");
        assert!(ttft.published.is_some() && ttft.notes.contains(&Note::NoMetric), "{ttft:?}");
        let tput = perf.rows.iter().find(|r| r.metric == Metric::TputPerGpu && r.point == c4).unwrap();
        assert_eq!((tput.class, tput.delta_pct), (Class::Improvement, Some(20.0)), "the other metrics still compare");
        assert_eq!(perf.rows.iter().filter(|r| r.point == c4).count(), 4, "no metric is skipped silently");
    }
}
