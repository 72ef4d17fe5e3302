//! The srt-slurm engine each InferenceX `framework` runs (`checks/data/frameworks.toml`,
//! decision TD7). The repository has no such table, so it is sweepgate's data, kept in one file
//! and read only here.

use std::collections::BTreeMap;
use std::sync::OnceLock;

const DATA_FILE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/checks/data/frameworks.toml"));

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FrameworksFile {
    frameworks: BTreeMap<String, String>,
}

fn table() -> &'static BTreeMap<String, String> {
    static TABLE: OnceLock<BTreeMap<String, String>> = OnceLock::new();
    TABLE.get_or_init(|| {
        toml::from_str::<FrameworksFile>(DATA_FILE).expect("checks/data/frameworks.toml is valid").frameworks
    })
}

/// The engine (`sglang`, `trtllm`, `vllm`, `atom`, `tilert`, …) `framework` runs; `None` for a
/// framework the table does not name.
pub fn engine_of(framework: &str) -> Option<&'static str> {
    table().get(framework).map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_framework_of_the_table_names_its_engine() {
        assert_eq!(engine_of("atom-disagg"), Some("atom"));
        assert_eq!(engine_of("dynamo-trt"), Some("trtllm"));
        assert_eq!(engine_of("tilert"), Some("tilert"));
        assert_eq!(engine_of("llmd-vllm"), Some("vllm"));
        assert_eq!(engine_of("mystery"), None);
        assert!(table().values().all(|e| !e.is_empty()));
    }
}
