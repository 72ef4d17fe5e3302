//! Pareto frontiers (spec 40 §3): eligibility, the app's two frontier algorithms, Check 14
//! coverage counts, Check 18(g) removed-point coverage (ARCHITECTURE decision 9) and Check 18(h)
//! re-tune deltas. All comparisons are exact `f64` with no epsilon, as in the dashboard.

use std::fmt;

use serde::Serialize;

/// Frontier points per curve that Check 14 asks for (`RECOMMENDED_POINTS`).
pub const RECOMMENDED_POINTS: usize = 5;

/// One measured point of a curve: x is latency or interactivity, y is throughput per GPU.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

impl Point {
    pub fn new(x: f64, y: f64) -> Point {
        Point { x, y }
    }

    /// Valid evidence: both coordinates finite and strictly positive (the coverage tool's rule).
    pub fn is_eligible(&self) -> bool {
        self.x.is_finite() && self.x > 0.0 && self.y.is_finite() && self.y > 0.0
    }
}

/// Which corner of the plane is "better".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Lower x (latency) and higher y are better; the measured frontier of the E2EL planes,
    /// keeping equal-throughput plateaus (Check 14).
    UpperRight,
    /// Higher x (interactivity) and higher y are better; strict non-dominance (Check 18(g)).
    UpperLeft,
}

/// The planes of spec 40 §3.1 and their frontier direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Plane {
    /// `median_intvty` vs `tput_per_gpu`.
    FixedSeqInteractivity,
    /// `median_e2el` vs `tput_per_gpu` (Check 14).
    FixedSeqE2el,
    /// `p90_e2el` vs per-GPU total throughput (Check 14).
    AgenticE2el,
    /// `1/p90_itl` vs per-GPU total throughput (Check 18(g), decision E2).
    AgenticInteractivity,
    /// `p90_e2e_norm_intvty` vs per-GPU total throughput (the app's North-Star set).
    AgenticCanonical,
}

impl Plane {
    pub fn direction(self) -> Direction {
        match self {
            Plane::FixedSeqE2el | Plane::AgenticE2el => Direction::UpperRight,
            Plane::FixedSeqInteractivity | Plane::AgenticInteractivity | Plane::AgenticCanonical => {
                Direction::UpperLeft
            }
        }
    }
}

/// Eligible indices sorted by x ascending, ties by y descending; stable, so equal points keep
/// input order (as Python's `sorted` and JavaScript's `Array.sort` do).
fn sorted_eligible(points: &[Point]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len()).filter(|&i| points[i].is_eligible()).collect();
    order.sort_by(|&a, &b| {
        let (pa, pb) = (points[a], points[b]);
        pa.x.total_cmp(&pb.x).then_with(|| pb.y.total_cmp(&pa.y))
    });
    order
}

/// Indices of the frontier points of `points`, in x-ascending order. Ineligible points never
/// take part; the result is empty when no point is eligible.
pub fn frontier(points: &[Point], direction: Direction) -> Vec<usize> {
    let order = sorted_eligible(points);
    let mut front: Vec<usize> = Vec::new();
    match direction {
        Direction::UpperRight => {
            let mut max_y = f64::NEG_INFINITY;
            for i in order {
                let p = points[i];
                let last = front.last().map(|&l| points[l]);
                let plateau = last.is_some_and(|l| p.y == max_y && p.x > l.x);
                if p.y > max_y || plateau {
                    match last {
                        Some(l) if p.x == l.x => {
                            if let Some(slot) = front.last_mut() {
                                *slot = i;
                            }
                        }
                        _ => front.push(i),
                    }
                    max_y = p.y;
                }
            }
        }
        Direction::UpperLeft => {
            for i in order {
                let p = points[i];
                if let Some(&l) = front.last() {
                    if p.x == points[l].x {
                        if p.y > points[l].y {
                            if let Some(slot) = front.last_mut() {
                                *slot = i;
                            }
                        }
                        continue;
                    }
                }
                while front.last().is_some_and(|&l| p.y >= points[l].y) {
                    front.pop();
                }
                front.push(i);
            }
        }
    }
    front
}

/// `a` weakly dominates `b` (x ≥ and y ≥ in the interactivity plane; x ≤ in the E2EL plane).
pub fn weakly_dominates(a: Point, b: Point, direction: Direction) -> bool {
    let x_ok = match direction {
        Direction::UpperLeft => a.x >= b.x,
        Direction::UpperRight => a.x <= b.x,
    };
    x_ok && a.y >= b.y
}

/// `a` strictly dominates `b`: weakly, and better in at least one coordinate.
pub fn dominates(a: Point, b: Point, direction: Direction) -> bool {
    weakly_dominates(a, b, direction) && (a.x != b.x || a.y > b.y)
}

// ---------------------------------------------------------------------------------------------
// Check 14: coverage counting (the review-time counter of spec 40 §3.4)
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum CoverageStatus {
    Pass,
    Warn,
}

/// One curve's evidence for the counter.
#[derive(Debug, Clone, Copy)]
pub struct CurveEvidence<'a> {
    pub points: &'a [Point],
    /// Per point, the app's `isOnNormalizedInteractivityFrontier` flag: `None` when the app
    /// revision stamps no flag on any point (no restriction), else `Some(flags)` with one entry
    /// per point (`true` only when the flag is exactly `true`).
    pub north_star: Option<&'a [bool]>,
}

/// The counter's answer for one curve.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurveCoverage {
    pub status: CoverageStatus,
    pub measured_points: usize,
    pub invalid_points: usize,
    /// Indices into the curve's points, x ascending (E2EL plane: `upper_right`).
    pub frontier: Vec<usize>,
    pub canonical_restriction: bool,
}

impl CurveCoverage {
    pub fn frontier_points(&self) -> usize {
        self.frontier.len()
    }
}

/// Count one curve as Check 14 does: `upper_right` frontier over the eligible points, restricted
/// afterwards (never promoting dominated points) to North-Star winners when flags exist.
pub fn assess_curve(evidence: CurveEvidence<'_>) -> CurveCoverage {
    let points = evidence.points;
    let invalid_points = points.iter().filter(|p| !p.is_eligible()).count();
    let mut front = frontier(points, Direction::UpperRight);
    if let Some(flags) = evidence.north_star {
        front.retain(|&i| flags.get(i).copied().unwrap_or(false));
    }
    let status = if invalid_points == 0 && front.len() >= RECOMMENDED_POINTS {
        CoverageStatus::Pass
    } else {
        CoverageStatus::Warn
    };
    CurveCoverage {
        status,
        measured_points: points.len(),
        invalid_points,
        frontier: front,
        canonical_restriction: evidence.north_star.is_some(),
    }
}

// ---------------------------------------------------------------------------------------------
// Curve keys (spec 40 §3.3)
// ---------------------------------------------------------------------------------------------

/// The app's hardware key: `hw` up to the first `-`, `_framework`, `-disagg` when the app knows
/// that key, and the spec suffix for fixed-sequence series (`_mtp`, `_<spec>`; none for AgentX).
pub fn hw_key(
    hw: &str,
    framework: &str,
    disagg: bool,
    spec_decoding: &str,
    agentic: bool,
    known_disagg_keys: &dyn Fn(&str) -> bool,
) -> String {
    let base = hw.split('-').next().unwrap_or(hw);
    let mut key = format!("{base}_{framework}");
    if disagg {
        let candidate = format!("{key}-disagg");
        if known_disagg_keys(&candidate) {
            key = candidate;
        }
    }
    if !agentic && !spec_decoding.is_empty() && spec_decoding != "none" {
        key.push('_');
        key.push_str(spec_decoding);
    }
    key
}

/// One app series: never pooled across runs, dates, percentiles or scenarios.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct CurveKey {
    pub model: String,
    /// `1k1k`, `8k1k`, `agentic-coding`, …
    pub scenario: String,
    pub hw_key: String,
    pub precision: String,
    /// Run id or date: the pooling boundary.
    pub run: String,
    /// `median`, `p90`, `p75`.
    pub percentile: String,
}

impl fmt::Display for CurveKey {
    /// The coverage tool's key: `model/scenario/hwKey/precision/run/percentile`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let CurveKey { model, scenario, hw_key, precision, run, percentile } = self;
        write!(f, "{model}/{scenario}/{hw_key}/{precision}/{run}/{percentile}")
    }
}

// ---------------------------------------------------------------------------------------------
// Check 18(g): removed-point coverage (decision 9; decisions E1, E2)
// ---------------------------------------------------------------------------------------------

/// Why a removed base point is, or is not, covered by the head curve.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RemovedCoverage {
    /// x or y is not a finite positive number: evidence to fix, not a verdict.
    InvalidEvidence,
    /// A head point has x ≥ and y ≥ (an equal point covers).
    Dominated { head: usize },
    /// Between two adjacent head frontier knots (or on a knot) and at or below the segment.
    Bracketed { left: usize, right: usize, head_y: f64 },
    /// Within the frontier's x-range but above the segment: the head regressed there.
    AboveSegment { left: usize, right: usize, head_y: f64 },
    /// Left or right of every head frontier point; extrapolation is not allowed.
    OutsideFrontier { nearest: Option<usize> },
}

impl RemovedCoverage {
    pub fn is_covered(&self) -> bool {
        matches!(self, RemovedCoverage::Dominated { .. } | RemovedCoverage::Bracketed { .. })
    }
}

/// One removed point's finding. `monotone_head_y` is the dashboard's monotone-cubic head value
/// at the same x (second opinion, never the verdict); `interpolations_disagree` is true when the
/// two interpolations give different covered/not-covered answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RemovedPointFinding {
    pub removed: usize,
    pub point: Point,
    pub covered: bool,
    pub coverage: RemovedCoverage,
    pub monotone_head_y: Option<f64>,
    pub interpolations_disagree: bool,
}

/// Judge each removed base point (interactivity plane: x higher is better) against the head
/// curve. `head` may contain ineligible points; they are ignored.
pub fn removed_point_coverage(removed: &[Point], head: &[Point]) -> Vec<RemovedPointFinding> {
    let knots_idx = frontier(head, Direction::UpperLeft);
    let knots: Vec<Point> = knots_idx.iter().map(|&i| head[i]).collect();
    let slopes = monotone_slopes(&knots);
    removed
        .iter()
        .enumerate()
        .map(|(index, &r)| {
            let coverage = judge_removed(r, head, &knots_idx, &knots);
            let monotone_head_y = if r.is_eligible() { monotone_at(&knots, &slopes, r.x) } else { None };
            let covered = coverage.is_covered();
            let interpolations_disagree = match (&coverage, monotone_head_y) {
                (RemovedCoverage::Bracketed { .. } | RemovedCoverage::AboveSegment { .. }, Some(m)) => {
                    (r.y <= m) != covered
                }
                _ => false,
            };
            RemovedPointFinding {
                removed: index,
                point: r,
                covered,
                coverage,
                monotone_head_y,
                interpolations_disagree,
            }
        })
        .collect()
}

fn judge_removed(r: Point, head: &[Point], knots_idx: &[usize], knots: &[Point]) -> RemovedCoverage {
    if !r.is_eligible() {
        return RemovedCoverage::InvalidEvidence;
    }
    if let Some(h) =
        (0..head.len()).find(|&h| head[h].is_eligible() && weakly_dominates(head[h], r, Direction::UpperLeft))
    {
        return RemovedCoverage::Dominated { head: h };
    }
    let (Some(first), Some(last)) = (knots.first(), knots.last()) else {
        return RemovedCoverage::OutsideFrontier { nearest: None };
    };
    if r.x < first.x {
        return RemovedCoverage::OutsideFrontier { nearest: knots_idx.first().copied() };
    }
    if r.x > last.x {
        return RemovedCoverage::OutsideFrontier { nearest: knots_idx.last().copied() };
    }
    // First knot with x ≥ r.x; r.x ≤ last.x so it exists.
    let right = knots.partition_point(|k| k.x < r.x).min(knots.len() - 1);
    let (left, head_y) = if knots[right].x == r.x {
        (right, knots[right].y)
    } else {
        let left = right.saturating_sub(1);
        let (a, b) = (knots[left], knots[right]);
        (left, a.y + (r.x - a.x) / (b.x - a.x) * (b.y - a.y))
    };
    let (left, right) = (knots_idx[left], knots_idx[right]);
    if r.y <= head_y {
        RemovedCoverage::Bracketed { left, right, head_y }
    } else {
        RemovedCoverage::AboveSegment { left, right, head_y }
    }
}

/// Tangents of d3's `curveMonotoneX` (Steffen) at each knot.
fn monotone_slopes(knots: &[Point]) -> Vec<f64> {
    let n = knots.len();
    if n < 2 {
        return vec![0.0; n];
    }
    let secant = |i: usize| (knots[i + 1].y - knots[i].y) / (knots[i + 1].x - knots[i].x);
    if n == 2 {
        let s = secant(0);
        return vec![s, s];
    }
    let sign = |v: f64| if v < 0.0 { -1.0 } else { 1.0 };
    let mut t = vec![0.0; n];
    for i in 1..n - 1 {
        let (h0, h1) = (knots[i].x - knots[i - 1].x, knots[i + 1].x - knots[i].x);
        let (s0, s1) = (secant(i - 1), secant(i));
        let p = (s0 * h1 + s1 * h0) / (h0 + h1);
        let v = (sign(s0) + sign(s1)) * s0.abs().min(s1.abs()).min(0.5 * p.abs());
        t[i] = if v.is_nan() { 0.0 } else { v };
    }
    t[0] = (3.0 * secant(0) - t[1]) / 2.0;
    t[n - 1] = (3.0 * secant(n - 2) - t[n - 2]) / 2.0;
    t
}

/// The dashboard's head value at `x`: Hermite on monotone tangents, clamped to [min y, max y];
/// `None` outside [x₁, x_k]; one knot answers only within 1e-6 of its x.
fn monotone_at(knots: &[Point], slopes: &[f64], x: f64) -> Option<f64> {
    let (first, last) = (knots.first()?, knots.last()?);
    if knots.len() == 1 {
        return ((x - first.x).abs() < 1e-6).then_some(first.y);
    }
    if x < first.x || x > last.x {
        return None;
    }
    let right = knots.partition_point(|k| k.x < x).clamp(1, knots.len() - 1);
    let (a, b) = (knots[right - 1], knots[right]);
    let h = b.x - a.x;
    let s = (x - a.x) / h;
    let (s2, s3) = (s * s, s * s * s);
    let y = (2.0 * s3 - 3.0 * s2 + 1.0) * a.y
        + (s3 - 2.0 * s2 + s) * h * slopes[right - 1]
        + (-2.0 * s3 + 3.0 * s2) * b.y
        + (s3 - s2) * h * slopes[right];
    let (lo, hi) = knots.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), k| (lo.min(k.y), hi.max(k.y)));
    Some(y.clamp(lo, hi))
}

// ---------------------------------------------------------------------------------------------
// Check 18(h): re-tune deltas (informational)
// ---------------------------------------------------------------------------------------------

/// Change of one configuration measured in both base and head. A percentage is `None` when the
/// base value is not a finite positive number (no meaningful ratio).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RetuneDelta<K> {
    pub key: K,
    pub base: Point,
    pub head: Point,
    pub tput_pct: Option<f64>,
    pub intvty_pct: Option<f64>,
}

fn pct_change(head: f64, base: f64) -> Option<f64> {
    (base.is_finite() && base > 0.0 && head.is_finite()).then(|| (head / base - 1.0) * 100.0)
}

/// Deltas for every key present in both `base` and `head` (key = conc, or conc + topology),
/// in `head` order. Points are (interactivity, tput/GPU).
pub fn retune_deltas<K: PartialEq + Clone>(base: &[(K, Point)], head: &[(K, Point)]) -> Vec<RetuneDelta<K>> {
    head.iter()
        .filter_map(|(key, h)| {
            let (_, b) = base.iter().find(|(k, _)| k == key)?;
            Some(RetuneDelta {
                key: key.clone(),
                base: *b,
                head: *h,
                tput_pct: pct_change(h.y, b.y),
                intvty_pct: pct_change(h.x, b.x),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
