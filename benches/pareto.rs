//! Frontier + coverage + removed-point bracketing over 100 curves × 64 points (target ≤ 5 ms).
//! Run: `cargo bench --bench pareto`, or without a release build of every dependency:
//! `cargo bench --profile dev --config 'profile.dev.package.sweepgate.opt-level=3' --bench pareto`.
//! Measured 2026-11-30 on the shared 2-core machine (load ~12): median 1.5 ms.

use std::hint::black_box;
use std::time::{Duration, Instant};

use sweepgate::results::pareto::{assess_curve, frontier, removed_point_coverage, CurveEvidence, Direction, Point};

const CURVES: usize = 100;
const POINTS: usize = 64;
const REMOVED: usize = 8;

/// Deterministic throughput/interactivity-like clouds: y falls with x, with noise.
fn curves() -> Vec<(Vec<Point>, Vec<Point>)> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..CURVES)
        .map(|_| {
            let mut cloud = |n: usize| -> Vec<Point> {
                (0..n)
                    .map(|_| {
                        let x = 5.0 + 300.0 * next();
                        Point::new(x, 40_000.0 / (1.0 + x / 50.0) * (0.8 + 0.4 * next()))
                    })
                    .collect()
            };
            (cloud(POINTS), cloud(REMOVED))
        })
        .collect()
}

fn run(data: &[(Vec<Point>, Vec<Point>)]) -> usize {
    let mut sink = 0;
    for (head, removed) in data {
        sink += assess_curve(CurveEvidence { points: head, north_star: None }).frontier.len();
        sink += frontier(head, Direction::UpperLeft).len();
        sink += removed_point_coverage(removed, head).iter().filter(|f| f.covered).count();
    }
    sink
}

fn main() {
    let data = curves();
    for _ in 0..20 {
        black_box(run(black_box(&data)));
    }
    let mut samples: Vec<Duration> = (0..200)
        .map(|_| {
            let t = Instant::now();
            black_box(run(black_box(&data)));
            t.elapsed()
        })
        .collect();
    samples.sort();
    let pct = |p: usize| samples[(samples.len() - 1) * p / 100];
    println!(
        "pareto: {CURVES} curves x {POINTS} points (+{REMOVED} removed each): median {:?}, p95 {:?}, max {:?} (target <= 5 ms)",
        pct(50),
        pct(95),
        pct(100)
    );
}
