use std::io::Read;
use std::process::ExitCode;

use sweepgate::results::counter::{run_counter, MAX_INPUT_BYTES};

/// Count Pareto frontier points per curve (Check 14's review-time counter).
///
/// Reads `[{"key": …, "points": [{"x": E2EL, "y": tput/GPU, …}, …]}, …]` on stdin and prints,
/// per curve, key, status (PASS/WARN), measuredPoints, invalidPoints, frontierPoints,
/// recommendedPoints, canonicalRestriction and the frontier points. Exit 0 after printing
/// (WARN included), 1 with a message on malformed input.
#[derive(Debug, clap::Args)]
pub struct ParetoArgs {}

pub fn run(_args: &ParetoArgs) -> anyhow::Result<ExitCode> {
    let mut input = Vec::new();
    std::io::stdin().take(MAX_INPUT_BYTES as u64 + 1).read_to_end(&mut input)?;
    let text = match String::from_utf8(input) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("input is not valid JSON: stdin is not UTF-8 ({e})");
            return Ok(ExitCode::from(1));
        }
    };
    match run_counter(&text) {
        Ok(output) => {
            println!("{output}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{e}");
            Ok(ExitCode::from(1))
        }
    }
}
