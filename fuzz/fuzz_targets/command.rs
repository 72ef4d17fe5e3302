//! Comment bodies scanned for `/use` and `/reuse-sweep-run` (untrusted comment text).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sweepgate::intake::command::{scan, Scan};

fuzz_target!(|body: &str| {
    if let Scan::Malformed(errors) = scan(body) {
        for e in errors {
            let _ = (e.en(), e.zh(), e.code());
        }
    }
});
