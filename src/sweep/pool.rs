//! Pool profiles (`pools/<name>.toml`): what sweepgate knows about one Slurm cluster, the
//! equivalent of srtctl's `srtslurm.yaml` (spec 50 §4). Parsed strictly (unknown keys are
//! errors) and checked for shape before any dispatch reads it.

use std::collections::BTreeMap;
use std::fmt;

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::Value as Json;

use crate::domain::srt::TargetPool;
use crate::yaml::Pos;

/// A pool profile problem, located in its file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct PoolError {
    pub file: String,
    pub pos: Option<Pos>,
    pub message: String,
}

impl fmt::Display for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pos {
            Some(pos) => write!(f, "{}:{pos}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// How sweepgate reaches the cluster's Slurm controller.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Transport {
    /// `sbatch`/`squeue`/`scancel` on this host, or on `ssh_host` over ssh.
    Cli { ssh_host: Option<String> },
    /// The slurmrestd REST API (`url` is `http(s)://…` or `unix:/path`).
    Slurmrestd {
        url: String,
        api_version: String,
        /// A file holding the JWT sent as `X-SLURM-USER-TOKEN` (read at start-up; never logged).
        token_file: Option<String>,
    },
}

/// How an image reference becomes a squash-file name in the cache (InferenceX replaces
/// `/ : @ #` by `_` or by `+`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SqshNaming {
    Underscore,
    Plus,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ContainerCache {
    /// Directory of `<image>.sqsh` files.
    pub cache_dir: String,
    pub naming: SqshNaming,
    /// Recipe `model.container` aliases → image or squash file, for points without an image.
    #[serde(default)]
    pub aliases: IndexMap<String, String>,
}

/// The srt-slurm checkout the pool runs (spec 50 §12 Q3: pinned and verified).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SrtSlurmPin {
    pub repo: String,
    pub commit: String,
    /// Where that checkout lives on the cluster (`srtctl_root`).
    pub root: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct HealthCheck {
    pub max_attempts: u32,
    pub interval_seconds: u32,
}

/// One Slurm cluster (spec 50 §4).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct PoolProfile {
    /// The file stem (`pools/gb200-nv.toml` → `gb200-nv`).
    #[serde(skip_deserializing)]
    pub name: String,
    /// Slurm cluster name, recorded with every job.
    pub cluster: String,
    /// The `resources.gpu_type` recipes must declare to run here (`gb200`, `h100`, …).
    pub sku: String,
    pub gpus_per_node: u32,
    pub partition: String,
    pub account: Option<String>,
    pub qos: Option<String>,
    pub reservation: Option<String>,
    pub constraint: Option<String>,
    /// Slurm time format: `MM`, `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM`, `D-HH:MM:SS`.
    pub time_limit: String,
    /// Render `--exclusive` (B200 DGXC clusters need it).
    #[serde(default)]
    pub exclusive: bool,
    /// The cluster accepts `--segment` (Slurm ≥ 23.x with topology; 22.05 rejects it).
    pub segment_supported: bool,
    /// Render `--gpus-per-node`.
    #[serde(default = "yes")]
    pub gpus_per_node_directive: bool,
    /// Default for recipes whose `resources.het_jobs` is unset.
    #[serde(default)]
    pub het_jobs: bool,
    pub network_interface: Option<String>,
    /// Where job outputs (`<root>/<job id>/logs`) are written.
    pub output_root: String,
    /// Working directory inside the containers.
    pub container_workdir: String,
    pub srt_slurm: SrtSlurmPin,
    pub transport: Transport,
    pub containers: ContainerCache,
    /// Host path → container path, mounted into every step.
    #[serde(default)]
    pub mounts: IndexMap<String, String>,
    /// Model alias (recipe `model.path`) → directory on the cluster, or `hf:<repo>`.
    #[serde(default)]
    pub models: IndexMap<String, String>,
    /// Exported before anything else runs in the batch script.
    #[serde(default)]
    pub environment: IndexMap<String, String>,
    /// Shell lines run before srtctl (module loads, proxies).
    pub bash_preamble: Option<String>,
    /// Extra `#SBATCH --k=v` defaults, applied only where the recipe has no value.
    #[serde(default)]
    pub sbatch_directives: IndexMap<String, String>,
    pub health_check: Option<HealthCheck>,
    /// At most this many jobs of one sweep hold or wait for an allocation at once (`1` = one
    /// allocation at a time); read by the dispatcher (decision S10).
    pub max_concurrent_allocations: Option<u32>,
    /// Matrix `runner` values whose rows this pool runs; empty = its `sku` and `cluster:<name>`.
    #[serde(default)]
    pub runners: Vec<String>,
    /// The script each job of a server-dispatched sweep runs (what `dispatch --launcher` takes);
    /// it gets the point and the approved head SHA (`BENCHMARK_REPO_SHA`, with `BENCHMARK_REPO`). Relative paths are
    /// relative to the pool file.
    pub launcher: Option<String>,
}

fn yes() -> bool {
    true
}

/// One alias replaced while applying a profile to a recipe (recorded in provenance).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AliasResolution {
    pub field: &'static str,
    pub from: String,
    pub to: String,
}

impl TargetPool for PoolProfile {
    fn name(&self) -> &str {
        &self.name
    }
    fn sku(&self) -> &str {
        &self.sku
    }
    fn gpus_per_node(&self) -> u32 {
        self.gpus_per_node
    }
    /// A recipe `model.path` this pool can serve: a known alias, an absolute path or `hf:`.
    fn knows_model(&self, path: &str) -> bool {
        self.models.contains_key(path) || path.starts_with('/') || path.starts_with("hf:")
    }
}

impl PoolProfile {
    /// Whether rows with this matrix `runner` run on this pool.
    pub fn serves(&self, runner: &str) -> bool {
        if self.runners.is_empty() {
            runner == self.sku || runner.strip_prefix("cluster:") == Some(self.name.as_str())
        } else {
            self.runners.iter().any(|r| r == runner)
        }
    }

    /// Parses and checks one profile; `name` is the file stem, `file` is used in errors.
    pub fn parse(text: &str, name: &str, file: &str) -> Result<PoolProfile, PoolError> {
        let mut profile: PoolProfile = toml::from_str(text).map_err(|e| PoolError {
            file: file.to_owned(),
            pos: e.span().map(|span| Pos::at_offset(text, span.start)),
            message: e.message().to_owned(),
        })?;
        profile.name = name.to_owned();
        let problems = profile.problems();
        if problems.is_empty() {
            Ok(profile)
        } else {
            Err(PoolError { file: file.to_owned(), pos: None, message: problems.join("; ") })
        }
    }

    /// Every shape problem of the profile (empty when it is usable).
    fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut absolute = |what: &str, path: &str| {
            if !path.starts_with('/') {
                out.push(format!("{what} '{path}' must be an absolute path"));
            }
        };
        absolute("output_root", &self.output_root);
        absolute("container_workdir", &self.container_workdir);
        absolute("containers.cache_dir", &self.containers.cache_dir);
        absolute("srt_slurm.root", &self.srt_slurm.root);
        for (host, ctr) in &self.mounts {
            absolute("mount source", host);
            absolute("mount target", ctr);
        }
        for (alias, path) in &self.models {
            if !path.starts_with("hf:") {
                absolute(&format!("models.{alias}"), path);
            }
        }
        if self.gpus_per_node == 0 {
            out.push("gpus_per_node must be at least 1".into());
        }
        for (what, value) in [("cluster", &self.cluster), ("sku", &self.sku), ("partition", &self.partition)] {
            if value.trim().is_empty() {
                out.push(format!("{what} must not be empty"));
            }
        }
        if slurm_time_minutes(&self.time_limit).is_none() {
            out.push(format!(
                "time_limit '{}' is not a Slurm time (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)",
                self.time_limit
            ));
        }
        let commit = &self.srt_slurm.commit;
        if commit.len() != 40 || !commit.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()) {
            out.push(format!("srt_slurm.commit '{commit}' must be a full 40-character lowercase commit id"));
        }
        for key in self.environment.keys() {
            if !is_shell_name(key) {
                out.push(format!("environment key '{key}' is not a shell variable name"));
            }
        }
        for key in self.sbatch_directives.keys() {
            if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                out.push(format!("sbatch_directives key '{key}' is not an sbatch option name"));
            }
        }
        match &self.transport {
            Transport::Slurmrestd { url, token_file, .. } => {
                if !(url.starts_with("http://") || url.starts_with("https://") || url.starts_with("unix:/")) {
                    out.push(format!("transport.url '{url}' must start with http://, https:// or unix:/"));
                }
                if let Some(file) = token_file.as_ref().filter(|f| !f.starts_with('/')) {
                    out.push(format!("transport.token_file '{file}' must be an absolute path"));
                }
            }
            Transport::Cli { ssh_host: Some(host) } => {
                // An argument to ssh: a leading `-` would be read as an option.
                let ok = !host.starts_with('-')
                    && !host.is_empty()
                    && host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '@'));
                if !ok {
                    out.push(format!("transport.ssh_host '{host}' must be [user@]host of [A-Za-z0-9._-]"));
                }
            }
            Transport::Cli { ssh_host: None } => {}
        }
        out
    }

    /// The squash file an image is cached as.
    pub fn sqsh_path(&self, image: &str) -> String {
        let sep = match self.containers.naming {
            SqshNaming::Underscore => '_',
            SqshNaming::Plus => '+',
        };
        let file: String = image.chars().map(|c| if matches!(c, '/' | ':' | '@' | '#') { sep } else { c }).collect();
        format!("{}/{file}.sqsh", self.containers.cache_dir.trim_end_matches('/'))
    }

    /// `#SBATCH` defaults this profile contributes (QoS, reservation, constraint, extras).
    pub fn default_sbatch_directives(&self) -> IndexMap<String, String> {
        let mut out = IndexMap::new();
        for (key, value) in [("qos", &self.qos), ("reservation", &self.reservation), ("constraint", &self.constraint)] {
            if let Some(v) = value {
                out.insert(key.to_owned(), v.clone());
            }
        }
        out.extend(self.sbatch_directives.iter().map(|(k, v)| (k.clone(), v.clone())));
        out
    }

    /// Applies the profile to a resolved recipe the way srtctl's `resolve_config_with_defaults`
    /// applies `srtslurm.yaml` (spec 50 §4): Slurm defaults and sbatch directives only where
    /// absent, `het_jobs` only when null, model alias → path, container alias → image. With
    /// `point_image`, the point's image wins over any container alias (InferenceX behaviour),
    /// as its cached squash file.
    pub fn apply(&self, config: &Json, point_image: Option<&str>) -> (Json, Vec<AliasResolution>) {
        let mut config = config.clone();
        let mut aliases = Vec::new();
        let Some(root) = config.as_object_mut() else { return (config, aliases) };
        let slurm = object_entry(root, "slurm");
        let mut defaults = vec![("partition", self.partition.clone()), ("time_limit", self.time_limit.clone())];
        if let Some(account) = &self.account {
            defaults.insert(0, ("account", account.clone()));
        }
        for (key, value) in defaults {
            slurm.entry(key).or_insert(Json::String(value));
        }
        let directives = object_entry(root, "sbatch_directives");
        for (key, value) in self.default_sbatch_directives() {
            directives.entry(key).or_insert(Json::String(value));
        }
        if let Some(resources) = root.get_mut("resources").and_then(Json::as_object_mut) {
            if resources.get("het_jobs").is_none_or(Json::is_null) {
                resources.insert("het_jobs".into(), Json::Bool(self.het_jobs));
            }
        }
        if let Some(model) = root.get_mut("model").and_then(Json::as_object_mut) {
            if let Some(path) = model.get("path").and_then(Json::as_str).map(str::to_owned) {
                if let Some(resolved) = self.models.get(&path) {
                    model.insert("path".into(), Json::String(resolved.clone()));
                    aliases.push(AliasResolution { field: "model.path", from: path, to: resolved.clone() });
                }
            }
            if let Some(container) = model.get("container").and_then(Json::as_str).map(str::to_owned) {
                let resolved = match point_image {
                    Some(image) => Some(self.sqsh_path(image)),
                    None => self.containers.aliases.get(&container).cloned(),
                };
                if let Some(resolved) = resolved {
                    model.insert("container".into(), Json::String(resolved.clone()));
                    aliases.push(AliasResolution { field: "model.container", from: container, to: resolved });
                }
            }
        }
        if let Some(health) = self.health_check {
            root.entry("health_check").or_insert_with(|| {
                serde_json::json!({"max_attempts": health.max_attempts, "interval_seconds": health.interval_seconds})
            });
        }
        (config, aliases)
    }
}

fn object_entry<'a>(root: &'a mut serde_json::Map<String, Json>, key: &str) -> &'a mut serde_json::Map<String, Json> {
    let slot = root.entry(key).or_insert_with(|| Json::Object(serde_json::Map::new()));
    if !slot.is_object() {
        *slot = Json::Object(serde_json::Map::new());
    }
    match slot {
        Json::Object(map) => map,
        _ => unreachable!("replaced by an object above"),
    }
}

fn is_shell_name(key: &str) -> bool {
    let mut chars = key.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Slurm's `--time` formats.
/// A Slurm time (`MM`, `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM`, `D-HH:MM:SS`) in whole minutes,
/// rounded up (Slurm's own granularity).
pub fn slurm_time_minutes(text: &str) -> Option<u32> {
    let numbers = |s: &str| -> Option<Vec<u64>> {
        s.split(':').map(|p| if p.is_empty() { None } else { p.parse().ok() }).collect()
    };
    // Seconds per field, most significant first.
    let weighted = |parts: &[u64], weights: &[u64]| -> Option<u64> {
        parts.iter().zip(weights).try_fold(0u64, |acc, (v, w)| acc.checked_add(v.checked_mul(*w)?))
    };
    let seconds = match text.split_once('-') {
        Some((days, rest)) => {
            let parts = numbers(rest).filter(|p| (1..=3).contains(&p.len()))?;
            let days: u64 = days.parse().ok()?;
            weighted(&[days], &[86_400])?.checked_add(weighted(&parts, &[3600, 60, 1])?)?
        }
        None => match numbers(text)?.as_slice() {
            [m] => weighted(&[*m], &[60])?,
            [m, s] => weighted(&[*m, *s], &[60, 1])?,
            hms @ [_, _, _] => weighted(hms, &[3600, 60, 1])?,
            _ => return None,
        },
    };
    u32::try_from(seconds.div_ceil(60)).ok()
}

/// Reads every `*.toml` of a pools directory, by name.
pub fn load_dir(dir: &std::path::Path) -> Result<BTreeMap<String, PoolProfile>, PoolError> {
    let err = |message: String| PoolError { file: dir.display().to_string(), pos: None, message };
    let entries = std::fs::read_dir(dir).map_err(|e| err(format!("cannot read the pools directory: {e}")))?;
    let mut out = BTreeMap::new();
    for entry in entries {
        let path = entry.map_err(|e| err(e.to_string()))?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let profile = load_file(&path)?;
        out.insert(profile.name.clone(), profile);
    }
    Ok(out)
}

/// Reads one profile file; its name is the file stem.
pub fn load_file(path: &std::path::Path) -> Result<PoolProfile, PoolError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| PoolError {
        file: file.clone(),
        pos: None,
        message: format!("cannot read: {e}"),
    })?;
    let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    PoolProfile::parse(&text, name, &file)
}

#[cfg(test)]
mod tests;
