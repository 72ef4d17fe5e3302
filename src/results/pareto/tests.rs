use super::*;

fn pts(raw: &[(f64, f64)]) -> Vec<Point> {
    raw.iter().map(|&(x, y)| Point::new(x, y)).collect()
}

fn coords(points: &[Point], idx: &[usize]) -> Vec<(f64, f64)> {
    idx.iter().map(|&i| (points[i].x, points[i].y)).collect()
}

#[test]
fn upper_right_keeps_plateau_and_collapses_duplicates() {
    // x = E2EL seconds, y = tput/GPU.
    let p = pts(&[(2.0, 100.0), (1.0, 50.0), (3.0, 100.0), (3.0, 100.0), (4.0, 90.0), (5.0, 120.0), (1.0, 60.0)]);
    let f = frontier(&p, Direction::UpperRight);
    // (1,60) beats (1,50) on the tie; (3,100) is an equal-throughput plateau at larger latency;
    // the duplicate (3,100) collapses; (4,90) is below maxY.
    assert_eq!(coords(&p, &f), vec![(1.0, 60.0), (2.0, 100.0), (3.0, 100.0), (5.0, 120.0)]);
    // Identical coordinates: the first in input order stays (stable sort).
    assert_eq!(f[2], 2);
}

#[test]
fn upper_right_is_not_strict_non_dominance() {
    // (2,100) is dominated by nothing at lower x with higher y, but (3,100) only ties it.
    let p = pts(&[(2.0, 100.0), (3.0, 100.0)]);
    assert_eq!(frontier(&p, Direction::UpperRight).len(), 2);
    assert_eq!(frontier(&p, Direction::UpperLeft).len(), 1);
}

#[test]
fn upper_left_is_strict_and_tie_in_y_goes_to_larger_x() {
    // x = interactivity, y = tput/GPU.
    let p = pts(&[(10.0, 500.0), (20.0, 400.0), (20.0, 450.0), (30.0, 450.0), (40.0, 100.0), (35.0, 50.0)]);
    let f = frontier(&p, Direction::UpperLeft);
    // (20,450) ties (30,450) in y: the larger x wins; (35,50) is dominated by (40,100).
    assert_eq!(coords(&p, &f), vec![(10.0, 500.0), (30.0, 450.0), (40.0, 100.0)]);
    for w in f.windows(2) {
        assert!(p[w[0]].x < p[w[1]].x && p[w[0]].y > p[w[1]].y);
    }
}

#[test]
fn upper_left_matches_brute_force_non_dominance() {
    // A deterministic pseudo-random cloud with many ties.
    let mut state = 12345u64;
    let mut next = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 33) % 20 + 1) as f64
    };
    for _ in 0..50 {
        let p: Vec<Point> = (0..30).map(|_| Point::new(next(), next())).collect();
        let f = frontier(&p, Direction::UpperLeft);
        let mut expected: Vec<(f64, f64)> = p
            .iter()
            .filter(|a| !p.iter().any(|b| dominates(*b, **a, Direction::UpperLeft)))
            .map(|a| (a.x, a.y))
            .collect();
        expected.sort_by(|a, b| a.0.total_cmp(&b.0));
        expected.dedup();
        assert_eq!(coords(&p, &f), expected);
    }
}

#[test]
fn invalid_points_never_enter_and_never_panic() {
    let p = pts(&[
        (f64::NAN, 1.0),
        (1.0, f64::NAN),
        (0.0, 5.0),
        (1.0, 0.0),
        (-1.0, 5.0),
        (f64::INFINITY, 9.0),
        (2.0, f64::NEG_INFINITY),
        (3.0, 7.0),
    ]);
    for dir in [Direction::UpperLeft, Direction::UpperRight] {
        assert_eq!(coords(&p, &frontier(&p, dir)), vec![(3.0, 7.0)]);
    }
    assert!(frontier(&[], Direction::UpperLeft).is_empty());
}

#[test]
fn coverage_pass_needs_five_frontier_points_and_no_invalid() {
    let good = pts(&[(1.0, 10.0), (2.0, 20.0), (3.0, 30.0), (4.0, 40.0), (5.0, 50.0), (6.0, 45.0)]);
    let c = assess_curve(CurveEvidence { points: &good, north_star: None });
    assert_eq!((c.status, c.measured_points, c.invalid_points, c.frontier_points()), (CoverageStatus::Pass, 6, 0, 5));

    let mut with_bad = good.clone();
    with_bad.push(Point::new(f64::NAN, 1.0));
    let c = assess_curve(CurveEvidence { points: &with_bad, north_star: None });
    assert_eq!((c.status, c.measured_points, c.invalid_points, c.frontier_points()), (CoverageStatus::Warn, 7, 1, 5));

    let four = &good[..4];
    let c = assess_curve(CurveEvidence { points: four, north_star: None });
    assert_eq!((c.status, c.frontier_points()), (CoverageStatus::Warn, 4));

    let c = assess_curve(CurveEvidence { points: &[], north_star: None });
    assert_eq!((c.status, c.measured_points, c.frontier_points()), (CoverageStatus::Warn, 0, 0));
}

#[test]
fn canonical_restriction_intersects_after_the_frontier() {
    let p = pts(&[(1.0, 10.0), (2.0, 20.0), (2.5, 15.0), (3.0, 30.0)]);
    // (2.5,15) is a North-Star winner but dominated in this plane: never promoted.
    let flags = [true, false, true, true];
    let c = assess_curve(CurveEvidence { points: &p, north_star: Some(&flags) });
    assert!(c.canonical_restriction);
    assert_eq!(coords(&p, &c.frontier), vec![(1.0, 10.0), (3.0, 30.0)]);
}

#[test]
fn hw_key_rules() {
    let known = |k: &str| k == "gb200_dynamo-sglang-disagg";
    let none = |_: &str| false;
    assert_eq!(hw_key("h200-cw", "sglang", false, "none", false, &none), "h200_sglang");
    assert_eq!(hw_key("h200-nb", "sglang", false, "mtp", false, &none), "h200_sglang_mtp");
    assert_eq!(hw_key("h200", "sglang", false, "mtp", true, &none), "h200_sglang");
    assert_eq!(hw_key("gb200-nv", "dynamo-sglang", true, "none", false, &known), "gb200_dynamo-sglang-disagg");
    assert_eq!(hw_key("b200", "trt", true, "none", false, &known), "b200_trt");
    let key = CurveKey {
        model: "qwen3.5".into(),
        scenario: "8k1k".into(),
        hw_key: "h200_sglang".into(),
        precision: "fp8".into(),
        run: "40714803265".into(),
        percentile: "median".into(),
    };
    assert_eq!(key.to_string(), "qwen3.5/8k1k/h200_sglang/fp8/40714803265/median");
}

#[test]
fn published_removed_point_left_of_head_frontier_is_not_covered() {
    // The report's numbers: removed TP8/EP8 c64 at 76.3 tok/s/user, head frontier starts at
    // c40 (116.3, 32588.5).
    let head = pts(&[(116.3, 32588.5), (150.2, 25000.0), (210.0, 12000.0), (300.0, 4000.0)]);
    let removed = pts(&[(76.3, 32849.8)]);
    let f = removed_point_coverage(&removed, &head);
    assert_eq!(f.len(), 1);
    assert!(!f[0].covered);
    assert_eq!(f[0].coverage, RemovedCoverage::OutsideFrontier { nearest: Some(0) });
    assert_eq!(f[0].monotone_head_y, None);
}

#[test]
fn removed_point_dominated_by_any_head_point_including_equal() {
    let head = pts(&[(116.3, 32588.5), (80.0, 33000.0)]);
    let f = removed_point_coverage(&pts(&[(76.3, 32849.8), (80.0, 33000.0)]), &head);
    assert_eq!(f[0].coverage, RemovedCoverage::Dominated { head: 1 });
    assert_eq!(f[1].coverage, RemovedCoverage::Dominated { head: 1 }, "an equal point covers");
}

#[test]
fn removed_point_bracketed_on_or_below_segment_no_tolerance() {
    let head = pts(&[(100.0, 1000.0), (200.0, 500.0)]);
    // Interpolation at x=150 is exactly 750.
    let f = removed_point_coverage(&pts(&[(150.0, 750.0), (150.0, 749.0), (150.0, 750.0000001)]), &head);
    assert_eq!(f[0].coverage, RemovedCoverage::Bracketed { left: 0, right: 1, head_y: 750.0 });
    assert!(f[0].covered && f[1].covered);
    assert_eq!(f[2].coverage, RemovedCoverage::AboveSegment { left: 0, right: 1, head_y: 750.0 });
    assert!(!f[2].covered, "no run-to-run noise tolerance");
}

#[test]
fn removed_point_right_of_frontier_and_empty_head() {
    let head = pts(&[(100.0, 1000.0), (200.0, 500.0)]);
    let f = removed_point_coverage(&pts(&[(250.0, 600.0)]), &head);
    assert_eq!(f[0].coverage, RemovedCoverage::OutsideFrontier { nearest: Some(1) });
    let f = removed_point_coverage(&pts(&[(250.0, 600.0)]), &pts(&[(f64::NAN, 1.0)]));
    assert_eq!(f[0].coverage, RemovedCoverage::OutsideFrontier { nearest: None });
    let f = removed_point_coverage(&pts(&[(0.0, 600.0), (1.0, f64::NAN)]), &head);
    assert!(f.iter().all(|x| x.coverage == RemovedCoverage::InvalidEvidence && !x.covered));
}

#[test]
fn bracketing_reports_head_indices_not_knot_positions() {
    // Head input order differs from frontier order, and contains a dominated point.
    let head = pts(&[(300.0, 100.0), (50.0, 90.0), (100.0, 1000.0), (200.0, 500.0)]);
    let f = removed_point_coverage(&pts(&[(250.0, 250.0)]), &head);
    // Linear between (200,500) and (300,100) at 250 is 300.
    assert_eq!(f[0].coverage, RemovedCoverage::Bracketed { left: 3, right: 0, head_y: 300.0 });
}

#[test]
fn monotone_second_opinion_and_disagreement() {
    let head = pts(&[(100.0, 1000.0), (110.0, 990.0), (200.0, 100.0)]);
    let f = removed_point_coverage(&pts(&[(150.0, 600.0), (105.0, 995.0)]), &head);
    let m = f[0].monotone_head_y.unwrap_or(f64::NAN);
    assert!((100.0..=1000.0).contains(&m));
    match f[0].coverage {
        RemovedCoverage::Bracketed { head_y, .. } | RemovedCoverage::AboveSegment { head_y, .. } => {
            assert!((head_y - (990.0 - 40.0 / 90.0 * 890.0)).abs() < 1e-9);
            assert_eq!(f[0].interpolations_disagree, (600.0 <= m) != f[0].covered);
        }
        ref other => panic!("unexpected {other:?}"),
    }
    // Monotone interpolation stays within the knot range and passes through knots.
    let slopes = monotone_slopes(&head);
    assert_eq!(monotone_at(&head, &slopes, 110.0), Some(990.0));
    assert_eq!(monotone_at(&head, &slopes, 99.0), None);
    let single = pts(&[(5.0, 7.0)]);
    assert_eq!(monotone_at(&single, &[0.0], 5.0000001), Some(7.0));
    assert_eq!(monotone_at(&single, &[0.0], 5.1), None);
}

#[test]
fn retune_deltas_match_the_report_line_shape() {
    let base = vec![(1u32, Point::new(100.0, 1000.0)), (4, Point::new(50.0, 2000.0)), (64, Point::new(10.0, 0.0))];
    let head = vec![(1u32, Point::new(149.0, 1199.0)), (8, Point::new(40.0, 2500.0)), (64, Point::new(12.0, 100.0))];
    let d = retune_deltas(&base, &head);
    assert_eq!(d.len(), 2);
    assert_eq!(d[0].key, 1);
    assert!((d[0].tput_pct.unwrap_or(0.0) - 19.9).abs() < 1e-9);
    assert!((d[0].intvty_pct.unwrap_or(0.0) - 49.0).abs() < 1e-9);
    assert_eq!(d[1].tput_pct, None, "a zero base has no ratio");
}

#[test]
fn planes_have_the_spec_directions() {
    assert_eq!(Plane::FixedSeqE2el.direction(), Direction::UpperRight);
    assert_eq!(Plane::AgenticE2el.direction(), Direction::UpperRight);
    assert_eq!(Plane::FixedSeqInteractivity.direction(), Direction::UpperLeft);
    assert_eq!(Plane::AgenticInteractivity.direction(), Direction::UpperLeft);
    assert!(weakly_dominates(Point::new(1.0, 5.0), Point::new(2.0, 5.0), Direction::UpperRight));
    assert!(!dominates(Point::new(1.0, 5.0), Point::new(1.0, 5.0), Direction::UpperRight));
}
