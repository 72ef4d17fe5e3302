//! `verify` over the largest fixture bundle (target ≤ 50 ms per verdict), and the extra time of
//! the comparison with the published curve on seed-004 (issue 26, target ≤ 10 ms). Run manually:
//! `cargo bench --bench verify`.

use std::path::Path;
use std::time::{Duration, Instant};

use sweepgate::evidence::Evidence;

const ROUNDS: u32 = 200;

fn bundle(name: &str) -> Evidence {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bundles").join(name);
    sweepgate::evidence::read_bundle(&dir).unwrap_or_else(|e| {
        eprintln!("cannot read {}: {e}", dir.display());
        std::process::exit(1);
    })
}

/// The mean time of `f` over [`ROUNDS`] calls, and the sum of what it returned.
fn time(mut f: impl FnMut() -> usize) -> (Duration, usize) {
    let start = Instant::now();
    let total = (0..ROUNDS).map(|_| f()).sum();
    (start.elapsed() / ROUNDS, total)
}

fn main() {
    let evidence = bundle("published-rejected");
    let (per, fails) =
        time(|| sweepgate::checks::verify(&evidence).with_status(sweepgate::checks::Status::Fail).count());
    println!("verify published-rejected: {per:?} per verdict ({ROUNDS} rounds, {fails} FAIL rows)");
    // What `verify` does more with the comparison: `checks::performance::compare` on its own (an
    // upper bound: inside `verify` it shares the checks' context), on seed-004 (a published run and a head run of one agentic series).
    let evidence = bundle("seed-004");
    let (per, fails) =
        time(|| sweepgate::checks::verify(&evidence).with_status(sweepgate::checks::Status::Fail).count());
    println!("verify seed-004 (comparison included): {per:?} per verdict ({ROUNDS} rounds, {fails} FAIL rows)");
    let (per, rows) = time(|| sweepgate::pr::performance::compare(&evidence).rows.len());
    println!("comparison seed-004: {per:?} per comparison ({ROUNDS} rounds, {} rows)", rows / ROUNDS as usize);
}
