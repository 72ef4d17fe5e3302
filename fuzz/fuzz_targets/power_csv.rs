//! Power telemetry CSV (nvidia-smi / DCGM output copied from the cluster) integrated over a
//! benchmark window, and the raw benchmark JSON the window comes from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sweepgate::results::csv::parse_csv;
use sweepgate::results::power::{integrate_power, load_benchmark_window, PowerOptions, Telemetry};

fuzz_target!(|data: &[u8]| {
    let _ = load_benchmark_window(data);
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = parse_csv(text);
    }
    let options = PowerOptions::default();
    let _ = integrate_power(Telemetry::Bytes(data), 1_700_000_000.0, 1_700_000_060.0, Some(8), &options);
    let _ = integrate_power(Telemetry::Bytes(data), 0.0, 1e12, None, &options);
});
