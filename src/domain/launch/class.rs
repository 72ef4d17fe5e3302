//! Which settings reach the serving engine (issue 22 item 1; decision LM4): the classes are
//! data, `classes.toml` beside this module.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// What a setting is to the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// Reaches the serving engine process.
    Engine,
    /// Benchmark client, eval, upload, scheduling, credentials.
    Harness,
    Unknown,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Engine => "engine",
            Class::Harness => "harness",
            Class::Unknown => "unknown",
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Rules {
    engine_prefixes: Vec<String>,
    engine_names: Vec<String>,
    harness_prefixes: Vec<String>,
    harness_names: Vec<String>,
}

const RULES_FILE: &str = include_str!("classes.toml");

fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    // Built-in data; `tests::the_rules_load` keeps it valid.
    RULES.get_or_init(|| toml::from_str(RULES_FILE).expect("src/domain/launch/classes.toml is valid"))
}

/// The class of a setting: a flag of the server command is `engine`; an environment variable
/// by exact name, then by its longest listed prefix.
pub fn class_of(name: &str, flag: bool) -> Class {
    if flag {
        return Class::Engine;
    }
    let r = rules();
    if r.harness_names.iter().any(|n| n == name) {
        return Class::Harness;
    }
    if r.engine_names.iter().any(|n| n == name) {
        return Class::Engine;
    }
    let longest = |prefixes: &[String]| prefixes.iter().filter(|p| name.starts_with(p.as_str())).map(String::len).max();
    match (longest(&r.engine_prefixes), longest(&r.harness_prefixes)) {
        (Some(e), Some(h)) if h > e => Class::Harness,
        (Some(_), _) => Class::Engine,
        (None, Some(_)) => Class::Harness,
        (None, None) => Class::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_load_and_classify_by_name_then_longest_prefix() {
        let _ = rules();
        assert_eq!(class_of("--chunked-prefill-size", true), Class::Engine);
        assert_eq!(class_of("SGLANG_ENABLE_JIT_DEEPGEMM", false), Class::Engine);
        assert_eq!(class_of("NCCL_IB_HCA", false), Class::Engine);
        assert_eq!(class_of("AIPERF_MMAP_CACHE_HOST_PATH", false), Class::Harness);
        assert_eq!(class_of("OPENAI_API_KEY", false), Class::Harness);
        assert_eq!(class_of("MODAL_TOKEN_ID", false), Class::Harness);
        assert_eq!(class_of("CONC", false), Class::Harness);
        assert_eq!(class_of("HF_TOKEN", false), Class::Harness);
        assert_eq!(class_of("MY_LOCAL_THING", false), Class::Unknown);
    }
}
