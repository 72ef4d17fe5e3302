//! `verify` over the largest fixture bundle (target ≤ 50 ms per verdict). Run manually:
//! `cargo bench --bench verify`.

use std::path::Path;
use std::time::Instant;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bundles/published-rejected");
    let evidence = match sweepgate::evidence::read_bundle(&dir) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("cannot read {}: {e}", dir.display());
            std::process::exit(1);
        }
    };
    let rounds = 200;
    let start = Instant::now();
    let mut fails = 0;
    for _ in 0..rounds {
        let verdict = sweepgate::checks::verify(&evidence);
        fails += verdict.with_status(sweepgate::checks::Status::Fail).count();
    }
    let per = start.elapsed() / rounds;
    println!("verify published-rejected: {per:?} per verdict ({rounds} rounds, {fails} FAIL rows)");
}
