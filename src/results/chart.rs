//! Chart text for one curve: the head points, the head frontier (as the caller computed it for
//! the curve's plane) and, in the interactivity plane (Check 18(g) evidence), the removed base
//! points with their coverage verdicts, as Mermaid `xychart-beta` (renders inside a GitHub
//! comment) and as a standalone SVG (Check 14's frontier charts in Action mode).
//! Deterministic output; every label is escaped for its target.

use std::fmt::Write as _;

use super::pareto::{frontier, removed_point_coverage, Direction, Point, RemovedPointFinding};

/// What to draw. Ineligible points are left out of the drawing (they are reported elsewhere).
#[derive(Debug, Clone, Copy)]
pub struct CurveChart<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub head: &'a [Point],
    /// Indices into `head` of its frontier points (e.g. `pareto::frontier` or Check 14's
    /// coverage frontier), so the drawing shows the frontier the verdict judged.
    pub frontier: &'a [usize],
    pub removed: &'a [Point],
}

/// The drawable pieces, computed once for both renderers.
struct Layout {
    head: Vec<Point>,
    knots: Vec<Point>,
    removed: Vec<(Point, bool)>,
    x_max: f64,
    y_max: f64,
}

fn layout(chart: &CurveChart<'_>) -> Layout {
    let head: Vec<Point> = chart.head.iter().copied().filter(Point::is_eligible).collect();
    let mut knots: Vec<Point> =
        chart.frontier.iter().filter_map(|&i| chart.head.get(i)).copied().filter(Point::is_eligible).collect();
    knots.sort_by(|a, b| a.x.total_cmp(&b.x));
    let findings: Vec<RemovedPointFinding> = removed_point_coverage(chart.removed, chart.head);
    let removed: Vec<(Point, bool)> =
        findings.iter().filter(|f| f.point.is_eligible()).map(|f| (f.point, f.covered)).collect();
    let all = head.iter().chain(removed.iter().map(|(p, _)| p));
    let (x_max, y_max) = all.fold((0.0f64, 0.0f64), |(x, y), p| (x.max(p.x), y.max(p.y)));
    Layout { head, knots, removed, x_max: nice_ceiling(x_max), y_max: nice_ceiling(y_max) }
}

/// The smallest 1/2/5 × 10ⁿ step multiple ≥ `v` (an axis end); 1 for an empty chart.
fn nice_ceiling(v: f64) -> f64 {
    if !(v > 0.0 && v.is_finite()) {
        return 1.0;
    }
    let step = 10f64.powf((v / 5.0).log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * step).find(|s| s * 5.0 >= v).unwrap_or(step * 10.0);
    (v / step).ceil() * step
}

/// Linear head value at `x` within the frontier's range (no extrapolation).
fn frontier_at(knots: &[Point], x: f64) -> Option<f64> {
    let right = knots.partition_point(|k| k.x < x);
    let b = knots.get(right)?;
    if b.x == x {
        return Some(b.y);
    }
    let a = knots.get(right.checked_sub(1)?)?;
    Some(a.y + (x - a.x) / (b.x - a.x) * (b.y - a.y))
}

fn mermaid_text(s: &str) -> String {
    s.chars().map(|c| if matches!(c, '"' | '\n' | '\r' | '`' | '[' | ']') { ' ' } else { c }).collect()
}

/// Mermaid `xychart-beta`: one category per distinct x (head and removed points, ascending);
/// bars for head points and removed points, a line for the head frontier (0 where no value
/// exists, since xychart has no gaps).
pub fn mermaid(chart: &CurveChart<'_>) -> String {
    let l = layout(chart);
    let mut xs: Vec<f64> = l.head.iter().map(|p| p.x).chain(l.removed.iter().map(|(p, _)| p.x)).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let series = |value: &dyn Fn(f64) -> Option<f64>| -> String {
        let values: Vec<String> = xs.iter().map(|&x| format!("{:.1}", value(x).unwrap_or(0.0))).collect();
        format!("[{}]", values.join(", "))
    };
    let at = |points: &[Point], x: f64| points.iter().filter(|p| p.x == x).map(|p| p.y).reduce(f64::max);
    let removed: Vec<Point> = l.removed.iter().map(|(p, _)| *p).collect();
    let labels: Vec<String> = xs.iter().map(|x| format!("\"{x:.1}\"")).collect();
    let mut out = String::from("xychart-beta\n");
    let _ = writeln!(out, "    title \"{}\"", mermaid_text(chart.title));
    let _ = writeln!(out, "    x-axis \"{}\" [{}]", mermaid_text(chart.x_label), labels.join(", "));
    let _ = writeln!(out, "    y-axis \"{}\" 0 --> {}", mermaid_text(chart.y_label), l.y_max);
    let _ = writeln!(out, "    %% bars 1: head points; bars 2: removed base points; line: head frontier (0 = none)");
    let _ = writeln!(out, "    bar {}", series(&|x| at(&l.head, x)));
    let _ = writeln!(out, "    bar {}", series(&|x| at(&removed, x)));
    let _ = writeln!(out, "    line {}", series(&|x| frontier_at(&l.knots, x)));
    out
}

fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 440.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 180.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;

/// A standalone SVG scatter of the same chart: grey head points, the blue frontier polyline,
/// removed points as green rings (covered) or red crosses (not covered), axes with 5 ticks.
pub fn svg(chart: &CurveChart<'_>) -> String {
    let l = layout(chart);
    let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let sx = |x: f64| LEFT + x / l.x_max * pw;
    let sy = |y: f64| TOP + ph - y / l.y_max * ph;
    let mut o = frame(chart.title, chart.x_label, chart.y_label, l.x_max, l.y_max);
    for p in &l.head {
        let _ = writeln!(o, r##"<circle cx="{:.2}" cy="{:.2}" r="3.5" fill="#9e9e9e"/>"##, sx(p.x), sy(p.y));
    }
    if !l.knots.is_empty() {
        let pts: Vec<String> = l.knots.iter().map(|k| format!("{:.2},{:.2}", sx(k.x), sy(k.y))).collect();
        let _ =
            writeln!(o, r##"<polyline points="{}" fill="none" stroke="#1565c0" stroke-width="2"/>"##, pts.join(" "));
        for k in &l.knots {
            let _ = writeln!(o, r##"<circle cx="{:.2}" cy="{:.2}" r="4.5" fill="#1565c0"/>"##, sx(k.x), sy(k.y));
        }
    }
    for (p, covered) in &l.removed {
        removed_mark(&mut o, sx(p.x), sy(p.y), *covered);
    }
    let legend = [
        (r##"<circle cx="{x}" cy="{y}" r="3.5" fill="#9e9e9e"/>"##, "head points"),
        (r##"<circle cx="{x}" cy="{y}" r="4.5" fill="#1565c0"/>"##, "head frontier"),
        (COVERED, "removed, covered"),
        (NOT_COVERED, "removed, NOT covered"),
    ];
    // A chart without removed points (Check 14) has no use for their legend entries.
    let shown = if chart.removed.is_empty() { 2 } else { legend.len() };
    write_legend(&mut o, &legend[..shown]);
    o.push_str("</svg>\n");
    o
}

const COVERED: &str = r##"<circle cx="{x}" cy="{y}" r="6" fill="none" stroke="#2e7d32" stroke-width="2"/>"##;
const NOT_COVERED: &str =
    r##"<path d="M{x0} {y0}L{x1} {y1}M{x0} {y1}L{x1} {y0}" stroke="#c62828" stroke-width="2.5"/>"##;

/// A removed point: a green ring (covered) or a red cross (not covered).
fn removed_mark(o: &mut String, cx: f64, cy: f64, covered: bool) {
    if covered {
        let _ =
            writeln!(o, r##"<circle cx="{cx:.2}" cy="{cy:.2}" r="6" fill="none" stroke="#2e7d32" stroke-width="2"/>"##);
    } else {
        let _ = writeln!(
            o,
            r##"<path d="M{:.2} {:.2}L{:.2} {:.2}M{:.2} {:.2}L{:.2} {:.2}" stroke="#c62828" stroke-width="2.5"/>"##,
            cx - 6.0,
            cy - 6.0,
            cx + 6.0,
            cy + 6.0,
            cx - 6.0,
            cy + 6.0,
            cx + 6.0,
            cy - 6.0
        );
    }
}

/// The legend at the right: each shape template (`{x}`, `{y}`, `{x0}`…) with its label.
fn write_legend(o: &mut String, entries: &[(&str, &str)]) {
    let lx = WIDTH - RIGHT + 16.0;
    for (i, (shape, text)) in entries.iter().enumerate() {
        let y = TOP + 10.0 + 22.0 * i as f64;
        let shape = shape
            .replace("{x}", &format!("{lx}"))
            .replace("{y}", &format!("{y}"))
            .replace("{x0}", &format!("{}", lx - 6.0))
            .replace("{x1}", &format!("{}", lx + 6.0))
            .replace("{y0}", &format!("{}", y - 6.0))
            .replace("{y1}", &format!("{}", y + 6.0));
        let _ = writeln!(o, "{shape}");
        let _ = writeln!(o, r#"<text x="{}" y="{}">{}</text>"#, lx + 14.0, y + 4.0, xml_escape(text));
    }
}

/// The SVG root, title, background and axes with 5 ticks (the `</svg>` is the caller's).
fn frame(title: &str, x_label: &str, y_label: &str, x_max: f64, y_max: f64) -> String {
    let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(o, r#"<title>{}</title>"#, xml_escape(title));
    let _ = writeln!(o, r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#);
    let _ = writeln!(
        o,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="14">{}</text>"#,
        WIDTH / 2.0,
        xml_escape(title)
    );
    let (x0, y0, x1, y1) = (LEFT, TOP + ph, LEFT + pw, TOP);
    let _ = writeln!(o, r#"<path d="M{x0} {y1}V{y0}H{x1}" fill="none" stroke="black"/>"#);
    for i in 0..=5 {
        let f = f64::from(i) / 5.0;
        let (tx, ty) = (x0 + f * pw, y0 - f * ph);
        let _ = writeln!(o, r#"<line x1="{tx:.1}" y1="{y0}" x2="{tx:.1}" y2="{:.1}" stroke="black"/>"#, y0 + 5.0);
        let _ =
            writeln!(o, r#"<text x="{tx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#, y0 + 18.0, tick(f * x_max));
        let _ = writeln!(o, r#"<line x1="{:.1}" y1="{ty:.1}" x2="{x0}" y2="{ty:.1}" stroke="black"/>"#, x0 - 5.0);
        let _ = writeln!(
            o,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            x0 - 8.0,
            ty + 4.0,
            tick(f * y_max)
        );
    }
    let _ = writeln!(
        o,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        x0 + pw / 2.0,
        HEIGHT - 16.0,
        xml_escape(x_label)
    );
    let _ = writeln!(
        o,
        r#"<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">{}</text>"#,
        TOP + ph / 2.0,
        TOP + ph / 2.0,
        xml_escape(y_label)
    );
    o
}

/// The published curve against the head curve of one series (issue 26), both in the same plane.
#[derive(Debug, Clone, Copy)]
pub struct OverlayChart<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub published: &'a [Point],
    pub head: &'a [Point],
    /// Head points with a regression beyond their band.
    pub regressions: &'a [Point],
    /// Published points the head no longer measures, with whether the head frontier covers them.
    pub removed: &'a [(Point, bool)],
}

/// The overlay as SVG: the published frontier dashed grey (`class="published-frontier"`), the
/// head frontier solid blue (`class="head-frontier"`), regressions ringed orange, removed points
/// as in [`svg`]. Ineligible points are left out.
pub fn overlay_svg(chart: &OverlayChart<'_>) -> String {
    let eligible = |points: &[Point]| -> Vec<Point> { points.iter().copied().filter(Point::is_eligible).collect() };
    let (published, head) = (eligible(chart.published), eligible(chart.head));
    let removed: Vec<(Point, bool)> = chart.removed.iter().copied().filter(|(p, _)| p.is_eligible()).collect();
    let all = published.iter().chain(&head).chain(removed.iter().map(|(p, _)| p));
    let (x_max, y_max) = all.fold((0.0f64, 0.0f64), |(x, y), p| (x.max(p.x), y.max(p.y)));
    let (x_max, y_max) = (nice_ceiling(x_max), nice_ceiling(y_max));
    let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let sx = |x: f64| LEFT + x / x_max * pw;
    let sy = |y: f64| TOP + ph - y / y_max * ph;
    let mut o = frame(chart.title, chart.x_label, chart.y_label, x_max, y_max);
    let curves = [
        (
            &published,
            "published-frontier",
            r##"fill="none" stroke="#757575" stroke-width="1.5""##,
            r##"stroke="#757575" stroke-width="2" stroke-dasharray="6 4""##,
        ),
        (&head, "head-frontier", r##"fill="#1565c0""##, r##"stroke="#1565c0" stroke-width="2""##),
    ];
    for (points, class, dot, line) in curves {
        for p in points.iter() {
            let _ =
                writeln!(o, r#"<circle class="{class}-point" cx="{:.2}" cy="{:.2}" r="3.5" {dot}/>"#, sx(p.x), sy(p.y));
        }
        let knots: Vec<String> = frontier(points, Direction::UpperLeft)
            .iter()
            .map(|&i| format!("{:.2},{:.2}", sx(points[i].x), sy(points[i].y)))
            .collect();
        if !knots.is_empty() {
            let _ = writeln!(o, r#"<polyline class="{class}" points="{}" fill="none" {line}/>"#, knots.join(" "));
        }
    }
    for p in chart.regressions.iter().filter(|p| p.is_eligible()) {
        let _ = writeln!(
            o,
            r##"<circle class="regression" cx="{:.2}" cy="{:.2}" r="7" fill="none" stroke="#ef6c00" stroke-width="2.5"/>"##,
            sx(p.x),
            sy(p.y)
        );
    }
    for (p, covered) in &removed {
        removed_mark(&mut o, sx(p.x), sy(p.y), *covered);
    }
    write_legend(
        &mut o,
        &[
            (
                r##"<path d="M{x0} {y}H{x1}" stroke="#757575" stroke-width="2" stroke-dasharray="4 3"/>"##,
                "published / 已发布",
            ),
            (r##"<path d="M{x0} {y}H{x1}" stroke="#1565c0" stroke-width="2"/>"##, "head / 头部"),
            (
                r##"<circle cx="{x}" cy="{y}" r="6" fill="none" stroke="#ef6c00" stroke-width="2.5"/>"##,
                "regression / 退步",
            ),
            (COVERED, "removed, covered / 已移除，已覆盖"),
            (NOT_COVERED, "removed, not covered / 已移除，未覆盖"),
        ],
    );
    o.push_str("</svg>\n");
    o
}

fn tick(v: f64) -> String {
    if v >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::pareto::{frontier, Direction};

    fn pts(raw: &[(f64, f64)]) -> Vec<Point> {
        raw.iter().map(|&(x, y)| Point::new(x, y)).collect()
    }

    fn published() -> (Vec<Point>, Vec<Point>) {
        let head = pts(&[(116.3, 32588.5), (150.2, 25000.0), (140.0, 20000.0), (210.0, 12000.0)]);
        (head, pts(&[(76.3, 32849.8), (180.0, 10000.0)]))
    }

    #[test]
    fn mermaid_for_the_published_removed_point() {
        let (head, removed) = published();
        let front = frontier(&head, Direction::UpperLeft);
        let chart = CurveChart {
            title: "qwen3.5 \"8k1k\" h200_sglang fp8",
            x_label: "Interactivity (tok/s/user)",
            y_label: "tput/GPU (tok/s)",
            head: &head,
            frontier: &front,
            removed: &removed,
        };
        insta::assert_snapshot!(mermaid(&chart), @r#"
        xychart-beta
            title "qwen3.5  8k1k  h200_sglang fp8"
            x-axis "Interactivity (tok/s/user)" ["76.3", "116.3", "140.0", "150.2", "180.0", "210.0"]
            y-axis "tput/GPU (tok/s)" 0 --> 40000
            %% bars 1: head points; bars 2: removed base points; line: head frontier (0 = none)
            bar [0.0, 32588.5, 20000.0, 25000.0, 0.0, 12000.0]
            bar [32849.8, 0.0, 0.0, 0.0, 10000.0, 0.0]
            line [0.0, 32588.5, 27283.3, 25000.0, 18521.7, 12000.0]
        "#);
    }

    #[test]
    fn svg_marks_coverage_and_escapes_labels() {
        let (head, removed) = published();
        let front = frontier(&head, Direction::UpperLeft);
        let chart = CurveChart {
            title: "<script>alert('x')</script> & co",
            x_label: "x",
            y_label: "y",
            head: &head,
            frontier: &front,
            removed: &removed,
        };
        let s = svg(&chart);
        assert!(s.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(s.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; co"));
        assert!(!s.contains("<script>"));
        // One red cross (76.3 not covered) and one green ring (180 under the segment), plus legend.
        assert_eq!(s.matches(r##"stroke="#c62828""##).count(), 2);
        assert_eq!(s.matches(r##"stroke="#2e7d32""##).count(), 2);
        assert_eq!(s.matches("<polyline").count(), 1);
        insta::assert_snapshot!("published_removed_point_svg", s);
    }

    #[test]
    fn the_overlay_draws_both_frontiers_and_marks_regressions_and_removed_points() {
        let (head, removed) = published();
        let base = pts(&[(76.3, 32849.8), (120.0, 30000.0), (180.0, 10000.0), (f64::NAN, 1.0)]);
        let chart = OverlayChart {
            title: "k <b>",
            x_label: "x",
            y_label: "y",
            published: &base,
            head: &head,
            regressions: &head[..1],
            removed: &[(removed[0], false), (removed[1], true)],
        };
        let s = overlay_svg(&chart);
        assert_eq!(s.matches(r#"<polyline class="published-frontier""#).count(), 1);
        assert_eq!(s.matches(r#"<polyline class="head-frontier""#).count(), 1);
        assert_eq!(s.matches(r#"class="published-frontier-point""#).count(), 3, "the NaN point is left out");
        assert_eq!(s.matches(r#"<circle class="regression""#).count(), 1);
        assert!(s.contains("k &lt;b&gt;") && !s.contains("NaN"));
        insta::assert_snapshot!("overlay_svg", s);
    }

    #[test]
    fn empty_and_invalid_inputs_still_render() {
        let bad = pts(&[(f64::NAN, 1.0), (0.0, 5.0)]);
        let chart =
            CurveChart { title: "t", x_label: "x", y_label: "y", head: &bad, frontier: &[0, 1, 7], removed: &bad };
        let m = mermaid(&chart);
        assert!(m.contains("x-axis \"x\" []"));
        let s = svg(&chart);
        assert!(!s.contains("<polyline") && !s.contains("NaN"));
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(nice_ceiling(32849.8), 40000.0);
        assert_eq!(nice_ceiling(211.0), 250.0);
    }
}
