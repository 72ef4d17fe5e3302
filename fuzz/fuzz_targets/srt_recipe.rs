//! SRT-Slurm recipes are read leniently (duplicate keys: last wins) like upstream; the typed
//! recipe model is not on main yet, so this target covers the lenient YAML reader.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sweepgate::yaml::parse_lenient;

fuzz_target!(|text: &str| {
    if let Ok((node, _warnings)) = parse_lenient(text, "recipe.yaml") {
        let _ = node.to_json();
    }
});
