//! The comparison with the published curve (issue 26) as template values: per config, the rows
//! a reader must see (regressions first), numbers formatted, the rest counted. Labels and
//! sentences come from the templates in both languages; every string here is data (config
//! keys and point identities from the PR, escaped by the template environment).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::checks::Lang;
use crate::pr::performance::{Performance, WarnPoint};
use crate::results::chart::{overlay_svg, OverlayChart};
use crate::results::compare::{Class, Coverage, Metric, Note, Row};
use crate::results::pareto::Point;

/// Rows shown per config in the verdict comment; the rest are counted (the details page has all).
pub const COMPACT_ROWS: usize = 12;

/// One row, formatted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowView {
    pub point: String,
    pub metric: Metric,
    pub published: String,
    pub head: String,
    pub delta: String,
    pub band: String,
    pub class: Class,
    pub notes: Vec<Note>,
    pub coverage: Option<Coverage>,
    pub frontier: bool,
}

/// One config's rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigView {
    pub config: String,
    pub published_run: Option<u64>,
    pub head_run: Option<u64>,
    pub rows: Vec<RowView>,
    /// Rows classed `noise` (left out of a compact table).
    pub noise: usize,
    /// Points only in the head (their rows are left out of a compact table).
    pub new_points: usize,
    /// Rows left out beyond the compact limit.
    pub more: usize,
    pub regressions: usize,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerformanceView {
    pub configs: Vec<ConfigView>,
    /// Compared rows in all.
    pub total: usize,
    /// True when every row is `noise` (the comment shows one line).
    pub all_noise: bool,
    /// Rows left out of the comparison itself (bounded input).
    pub truncated: usize,
    /// The opted-in WARN row (decision PF4), its points bounded at [`COMPACT_ROWS`].
    pub warning: Option<WarningView>,
}

/// The WARN row, as the templates word it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WarningView {
    pub policy: String,
    pub unreadable: Option<String>,
    /// Frontier points that regress beyond their band.
    pub count: usize,
    pub points: Vec<WarnPoint>,
    /// Points left out beyond [`COMPACT_ROWS`].
    pub more: usize,
}

/// A value in the precision a reader compares: whole numbers above 100, else three significant
/// digits; `–` when absent.
fn number(v: Option<f64>) -> String {
    match v {
        None => "–".into(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 1.0 => format!("{v:.2}"),
        Some(v) => format!("{v:.4}"),
    }
}

fn view(row: &Row) -> RowView {
    RowView {
        point: row.point.clone(),
        metric: row.metric,
        published: number(row.published),
        head: number(row.head),
        delta: row.delta_pct.map_or_else(|| "–".into(), |d| format!("{d:+.1}%")),
        band: row.noise_pct.map_or_else(|| "–".into(), |b| format!("±{b:.1}%")),
        class: row.class,
        notes: row.notes.clone(),
        coverage: row.coverage,
        frontier: row.frontier,
    }
}

/// `compact`: the verdict comment's table (noise and new points left out, regressions first, at most
/// [`COMPACT_ROWS`] per config); otherwise every row in comparison order (the details page).
pub fn performance_view(perf: &Performance, compact: bool) -> PerformanceView {
    let mut by_config: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for row in &perf.rows {
        by_config.entry(row.config.as_str()).or_default().push(row);
    }
    let configs = by_config
        .into_iter()
        .map(|(config, rows)| {
            let noise = rows.iter().filter(|r| r.class == Class::Noise).count();
            let regressions = rows.iter().filter(|r| r.class == Class::Regression).count();
            let new_points =
                rows.iter().filter(|r| r.class == Class::New).map(|r| &r.point).collect::<BTreeSet<_>>().len();
            let mut shown: Vec<&Row> = rows.clone();
            if compact {
                shown.retain(|r| !matches!(r.class, Class::Noise | Class::New));
                // Stable: within a class, the comparison's order.
                shown.sort_by_key(|r| r.class);
            }
            let limit = if compact { COMPACT_ROWS } else { usize::MAX };
            let more = shown.len().saturating_sub(limit);
            ConfigView {
                config: config.to_owned(),
                published_run: rows[0].published_run,
                head_run: rows[0].head_run,
                rows: shown.into_iter().take(limit).map(view).collect(),
                noise,
                new_points,
                more,
                regressions,
            }
        })
        .collect();
    PerformanceView {
        configs,
        total: perf.rows.len(),
        all_noise: !perf.rows.is_empty() && perf.rows.iter().all(|r| r.class == Class::Noise),
        truncated: perf.truncated,
        warning: perf.warning.as_ref().map(|w| WarningView {
            policy: w.policy.clone(),
            unreadable: w.unreadable.clone(),
            count: w.points.len(),
            points: w.points.iter().take(COMPACT_ROWS).cloned().collect(),
            more: w.points.len().saturating_sub(COMPACT_ROWS),
        }),
    }
}

/// The comparison as Markdown in one language (`templates/performance.<lang>.md.j2`), starting
/// with a blank line; empty when nothing was compared.
pub fn markdown(view: &PerformanceView, lang: Lang) -> Result<String, super::RenderError> {
    if view.total == 0 {
        return Ok(String::new());
    }
    let name = match lang {
        Lang::En => "performance.en.md.j2",
        Lang::Zh => "performance.zh.md.j2",
    };
    Ok(format!("\n{}\n", super::render(name, view)?.trim_end()))
}

/// Most overlay charts drawn for one comparison.
pub const MAX_OVERLAYS: usize = 32;

/// One overlay chart: a config's published and head curves of one scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overlay {
    pub config: String,
    pub scenario: String,
    pub svg: String,
}

/// A point's tput/GPU and interactivity in one run, when both are known.
fn plane_point(tput: Option<&Row>, intvty: Option<&Row>, value: fn(&Row) -> Option<f64>) -> Option<Point> {
    Some(Point::new(value(intvty?)?, value(tput?)?))
}

/// The overlay charts of a comparison (tput/GPU against interactivity), at most [`MAX_OVERLAYS`].
pub fn overlays(perf: &Performance) -> Vec<Overlay> {
    type Metrics<'r> = BTreeMap<Metric, &'r Row>;
    let mut series: BTreeMap<(&str, &str), BTreeMap<&str, Metrics>> = BTreeMap::new();
    for row in &perf.rows {
        let points = series.entry((row.config.as_str(), row.scenario.as_str())).or_default();
        points.entry(row.point.as_str()).or_default().insert(row.metric, row);
    }
    series
        .into_iter()
        .take(MAX_OVERLAYS)
        .map(|((config, scenario), points)| {
            let (mut published, mut head, mut regressions, mut removed) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for metrics in points.values() {
                let (tput, intvty) =
                    (metrics.get(&Metric::TputPerGpu).copied(), metrics.get(&Metric::Interactivity).copied());
                let old = plane_point(tput, intvty, |r| r.published);
                let new = plane_point(tput, intvty, |r| r.head);
                published.extend(old);
                head.extend(new);
                if metrics.values().any(|r| r.class == Class::Regression) {
                    regressions.extend(new);
                }
                if let (Some(p), Some(coverage)) = (old, tput.and_then(|r| r.coverage)) {
                    removed.push((p, coverage.is_covered()));
                }
            }
            let title = format!("{config} {scenario}");
            let chart = OverlayChart {
                title: &title,
                x_label: "Interactivity (tok/s/user) / 交互性",
                y_label: "tput/GPU (tok/s) / 每 GPU 吞吐量",
                published: &published,
                head: &head,
                regressions: &regressions,
                removed: &removed,
            };
            Overlay { config: config.to_owned(), scenario: scenario.to_owned(), svg: overlay_svg(&chart) }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(point: &str, metric: Metric, class: Class) -> Row {
        Row {
            config: "k".into(),
            scenario: "8k1k".into(),
            point: point.into(),
            metric,
            published: Some(1000.0),
            head: Some(900.0),
            delta_pct: Some(-10.0),
            noise_pct: Some(4.45),
            class,
            notes: Vec::new(),
            published_run: Some(3),
            head_run: Some(7),
            history: 5,
            frontier: true,
            coverage: None,
        }
    }

    #[test]
    fn the_compact_table_leaves_noise_out_and_puts_regressions_first() {
        let perf = Performance {
            rows: vec![
                row("c4", Metric::TputPerGpu, Class::Improvement),
                row("c4", Metric::E2el, Class::Noise),
                row("c16", Metric::TputPerGpu, Class::Regression),
            ],
            truncated: 0,
            warning: None,
        };
        let v = performance_view(&perf, true);
        let shown: Vec<(&str, Class)> = v.configs[0].rows.iter().map(|r| (r.point.as_str(), r.class)).collect();
        assert_eq!(shown, [("c16", Class::Regression), ("c4", Class::Improvement)]);
        assert_eq!((v.configs[0].noise, v.configs[0].regressions, v.all_noise), (1, 1, false));
        assert_eq!((v.configs[0].rows[0].delta.as_str(), v.configs[0].rows[0].band.as_str()), ("-10.0%", "±4.5%"));
        assert_eq!(performance_view(&perf, false).configs[0].rows.len(), 3);
        let quiet = Performance { rows: vec![row("c4", Metric::E2el, Class::Noise)], truncated: 0, warning: None };
        assert!(performance_view(&quiet, true).all_noise);
        assert_eq!(
            (number(Some(0.004545)), number(Some(35.0)), number(None)),
            ("0.0045".into(), "35.00".into(), "–".into())
        );
    }

    #[test]
    fn the_opted_in_warn_row_shows_in_both_languages_escaped() {
        let warning = crate::pr::performance::Warning {
            policy: ".github/sweepgate.yaml".into(),
            unreadable: None,
            points: vec![WarnPoint {
                config: "k".into(),
                point: "c16 <b>|x".into(),
                metrics: vec![Metric::TputPerGpu],
            }],
        };
        let perf = Performance {
            rows: vec![row("c16 <b>|x", Metric::TputPerGpu, Class::Regression)],
            truncated: 0,
            warning: Some(warning.clone()),
        };
        let en = markdown(&performance_view(&perf, true), Lang::En).unwrap();
        let zh = markdown(&performance_view(&perf, true), Lang::Zh).unwrap();
        assert!(
            en.contains(
                "⚠️ **WARN**: 1 published frontier point regresses beyond its noise band (`.github/sweepgate.yaml` \
                 asks to be warned; this never fails the verification): k c16 &lt;b&gt;\\|x (tput/GPU)."
            ),
            "{en}"
        );
        assert!(
            zh.contains("⚠️ **WARN**：1 个已发布前沿点的退步超出其噪声带（`.github/sweepgate.yaml` 要求发出警告"),
            "{zh}"
        );
        assert!(!en.contains("<b>") && !zh.contains("<b>"), "PR-sourced point labels are escaped: {en}");
        assert!(zh.contains("k c16 &lt;b&gt;\\|x（每 GPU 吞吐量）"), "{zh}");
        let unknown = Performance {
            warning: Some(crate::pr::performance::Warning { unreadable: Some("HTTP 502".into()), ..warning }),
            ..perf.clone()
        };
        let en = markdown(&performance_view(&unknown, true), Lang::En).unwrap();
        assert!(en.contains("whether this repository asks to be warned is unknown: `.github/sweepgate.yaml` cannot be read (`HTTP 502`)"), "{en}");
        let none = Performance { warning: None, ..perf };
        assert!(!markdown(&performance_view(&none, true), Lang::En).unwrap().contains("WARN"));
    }
}
