//! The slice of a pool profile (spec 50 §4) the dispatcher reads: where jobs go and how many may
//! hold an allocation at once. The full profile (mounts, containers, model locations, …) is
//! parsed by `sweep::pool`; this reader ignores the fields it does not use and, like it, names
//! the pool after its file, so one `pools/X.toml` serves `plan` and `dispatch` alike. A bare
//! file of just these fields also works, for clusters that run stand-in scripts, not srtctl.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

const MAX_POOL_BYTES: usize = 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct DispatchPool {
    /// The file stem unless the file sets `name` (bare dispatch-only files may).
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub partition: Option<String>,
    #[serde(default)]
    pub account: Option<String>,
    #[serde(default)]
    pub qos: Option<String>,
    #[serde(default)]
    pub reservation: Option<String>,
    #[serde(default)]
    pub constraint: Option<String>,
    pub gpus_per_node: u32,
    /// `--exclusive`: the job gets whole nodes (and every GPU on them; the job wrapper then
    /// narrows `CUDA_VISIBLE_DEVICES` to the point's GPU count).
    #[serde(default)]
    pub exclusive: bool,
    /// At most this many jobs of one sweep hold or wait for an allocation at once;
    /// `1` = one allocation at a time. Absent = no limit beyond Slurm's own.
    #[serde(default)]
    pub max_concurrent_allocations: Option<u32>,
    /// Where `<job id>/logs/…` directories are created; must be visible to the compute nodes.
    #[serde(default)]
    pub output_root: Option<PathBuf>,
    /// sha256 of the profile file, recorded as provenance.
    #[serde(skip)]
    pub sha256: String,
}

#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
}

impl DispatchPool {
    pub fn parse(bytes: &[u8], file: &Path) -> Result<DispatchPool, PoolError> {
        let invalid = |message: String| PoolError::Invalid { file: file.display().to_string(), message };
        if bytes.len() > MAX_POOL_BYTES {
            return Err(invalid(format!("{} bytes, above the {MAX_POOL_BYTES}-byte limit", bytes.len())));
        }
        let text = std::str::from_utf8(bytes).map_err(|e| invalid(format!("not UTF-8: {e}")))?;
        let mut pool: DispatchPool = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
        if pool.gpus_per_node == 0 {
            return Err(invalid("gpus_per_node must be at least 1".into()));
        }
        if pool.max_concurrent_allocations == Some(0) {
            return Err(invalid("max_concurrent_allocations must be at least 1 (or absent for no limit)".into()));
        }
        for (field, value) in [
            ("partition", &pool.partition),
            ("account", &pool.account),
            ("qos", &pool.qos),
            ("reservation", &pool.reservation),
            ("constraint", &pool.constraint),
        ] {
            if let Some(v) = value {
                if v.is_empty() || v.chars().any(|c| c.is_whitespace() || c.is_control()) {
                    return Err(invalid(format!("{field} = {v:?}: must be a non-empty word without whitespace")));
                }
            }
        }
        if pool.name.is_empty() {
            pool.name = file.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_owned();
        }
        pool.sha256 = hex::encode(Sha256::digest(bytes));
        Ok(pool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<DispatchPool, PoolError> {
        DispatchPool::parse(text.as_bytes(), Path::new("pools/x.toml"))
    }

    #[test]
    fn reads_its_fields_and_ignores_the_rest_of_the_profile() {
        let pool = parse(
            "name = \"local\"\npartition = \"gpu\"\ngpus_per_node = 8\nexclusive = true\nmax_concurrent_allocations = 1\n\
             segment_supported = false\n[mounts]\n\"/a\" = \"/b\"\n",
        )
        .unwrap();
        assert_eq!(pool.partition.as_deref(), Some("gpu"));
        assert!(pool.exclusive);
        assert_eq!(pool.max_concurrent_allocations, Some(1));
        assert_eq!(pool.sha256.len(), 64);
    }

    #[test]
    fn the_full_profiles_in_pools_are_readable_and_named_after_their_file() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("pools");
        for name in ["local", "gb200-nv"] {
            let file = dir.join(format!("{name}.toml"));
            let pool = DispatchPool::parse(&std::fs::read(&file).unwrap(), &file).unwrap();
            let profile = crate::sweep::pool::load_file(&file).unwrap();
            assert_eq!((pool.name.as_str(), pool.gpus_per_node), (name, profile.gpus_per_node));
            assert_eq!(pool.partition.as_deref(), Some(profile.partition.as_str()));
        }
    }

    #[test]
    fn rejects_bad_values_naming_the_file() {
        for text in [
            "name = \"x\"\ngpus_per_node = 0\n",
            "name = \"x\"\ngpus_per_node = 8\nmax_concurrent_allocations = 0\n",
            "name = \"x\"\ngpus_per_node = 8\npartition = \"a b\"\n",
            "name = \"x\"\n",
            "partition = \"gpu\"\n",
            "gpus_per_node = \"8\"\n",
            "not toml",
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.starts_with("pools/x.toml: "), "{err}");
        }
    }
}
