//! The dispatch plan: the JSON document `sweepgate dispatch --plan` runs.
//!
//! ```json
//! {
//!   "version": 1,
//!   "sweep_id": "pr123-7f3a9c1",           // stable id of this sweep run ([A-Za-z0-9._-], ≤ 64)
//!   "repo": "SemiAnalysisAI/InferenceX",   // owner/name: scopes job names (and cancellation)
//!   "pr": 123,                             // pull request number
//!   "canary": {                            // optional: runs first, alone; any non-success skips the rest
//!     "family": "single-node 1k1k",        // the family it was taken from (reporting only)
//!     "point": { …a point… }
//!   },
//!   "families": [
//!     { "name": "single-node 1k1k", "fail_fast": true, "points": [ …points, in order… ] }
//!   ]
//! }
//! ```
//!
//! A point:
//!
//! ```json
//! { "id": "dsr1-fp8-h100-tp8-c4",          // stable, unique in the plan ([A-Za-z0-9._-], ≤ 64)
//!   "row": { "model": "…", "conc": 4, … }, // the matrix row exactly as the matrix generator emits it
//!   "job": {
//!     "script": "benchmarks/run.sh",       // executable; relative paths are relative to the plan file
//!     "env": { "CONC": "4" },              // exported to the script (names not SLURM_/SWEEPGATE_/CUDA_VISIBLE_DEVICES)
//!     "gpus": 8,                           // GPUs per node the point serves on (CUDA_VISIBLE_DEVICES is cut to this)
//!     "nodes": 1,                          // optional, default 1
//!     "time_limit_minutes": 60,            // Slurm --time, whole minutes (Slurm's granularity)
//!     "recipe": {                          // optional: the SRT recipe variant (provenance)
//!       "config_file": "recipes/x.yaml:override_tp8", "path": "…/x.yaml",
//!       "selector": "override_tp8", "sha256": "…" }
//!   } }
//! ```
//!
//! `sweepgate plan --format dispatch` writes such a plan from the matrix (`sweep::plan_jobs`).
//! Parsing is strict (unknown fields are errors), size-bounded and panic-free.

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Plans above this size are refused before parsing.
pub const MAX_PLAN_BYTES: usize = 16 * 1024 * 1024;
/// More points than this in one plan is a mistake, not a sweep.
pub const MAX_POINTS: usize = 10_000;
const MAX_ID_LEN: usize = 64;
const MAX_ENV_VARS: usize = 256;
const MAX_TIME_LIMIT_MINUTES: u32 = 7 * 24 * 60;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub version: u32,
    pub sweep_id: String,
    pub repo: String,
    pub pr: u64,
    #[serde(default)]
    pub canary: Option<Canary>,
    pub families: Vec<Family>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Canary {
    pub family: String,
    pub point: Point,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Family {
    pub name: String,
    pub fail_fast: bool,
    pub points: Vec<Point>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Point {
    pub id: String,
    pub row: serde_json::Map<String, serde_json::Value>,
    pub job: JobSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    pub script: String,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub gpus: u32,
    #[serde(default = "one")]
    pub nodes: u32,
    pub time_limit_minutes: u32,
    /// The SRT recipe variant the job runs (multinode points), recorded as provenance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipe: Option<RecipeProvenance>,
}

/// Which recipe file and variant a job runs, and the file's content hash (spec 50 §11).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecipeProvenance {
    /// `CONFIG_FILE` as srtctl reads it: `recipes/…yaml[:selector]`.
    pub config_file: String,
    /// The file's path in the benchmark repository.
    pub path: String,
    /// The variant's selector (empty for a plain recipe).
    pub selector: String,
    pub sha256: String,
}

fn one() -> u32 {
    1
}

/// One point with where it sits in the plan, in dispatch order.
#[derive(Debug, Clone, Copy)]
pub struct PlacedPoint<'a> {
    pub family: &'a str,
    pub is_canary: bool,
    pub fail_fast: bool,
    pub point: &'a Point,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PlanError {
    #[error("{file}: plan is {size} bytes, above the {MAX_PLAN_BYTES}-byte limit")]
    TooLarge { file: String, size: usize },
    #[error("{file}:{line}:{column}: {message}")]
    Json { file: String, line: usize, column: usize, message: String },
    #[error("{file}: {path}: {message}")]
    Invalid { file: String, path: String, message: String },
}

impl Plan {
    /// Parse and validate a plan file's bytes; `file` names it in errors.
    pub fn parse(bytes: &[u8], file: &str) -> Result<Plan, PlanError> {
        if bytes.len() > MAX_PLAN_BYTES {
            return Err(PlanError::TooLarge { file: file.to_string(), size: bytes.len() });
        }
        let plan: Plan = serde_json::from_slice(bytes).map_err(|e| PlanError::Json {
            file: file.to_string(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        plan.validate().map_err(|(path, message)| PlanError::Invalid { file: file.to_string(), path, message })?;
        Ok(plan)
    }

    /// Every point in dispatch order: the canary first, then each family's points in order.
    pub fn placed_points(&self) -> Vec<PlacedPoint<'_>> {
        let canary = self.canary.iter().map(|c| PlacedPoint {
            family: &c.family,
            is_canary: true,
            fail_fast: false,
            point: &c.point,
        });
        let rest = self.families.iter().flat_map(|f| {
            f.points.iter().map(move |p| PlacedPoint {
                family: &f.name,
                is_canary: false,
                fail_fast: f.fail_fast,
                point: p,
            })
        });
        canary.chain(rest).collect()
    }

    /// Content hash of the plan as parsed (key order kept), to detect a different plan
    /// being resumed under the same sweep id.
    pub fn sha256(&self) -> String {
        let canonical = serde_json::to_vec(self).unwrap_or_default();
        hex::encode(Sha256::digest(canonical))
    }

    fn validate(&self) -> Result<(), (String, String)> {
        if self.version != 1 {
            return Err((
                "version".into(),
                format!("unsupported plan version {}; this sweepgate reads version 1", self.version),
            ));
        }
        check_id(&self.sweep_id).map_err(|m| ("sweep_id".to_string(), m))?;
        let repo_ok = self
            .repo
            .split_once('/')
            .is_some_and(|(o, n)| !o.is_empty() && !n.is_empty() && !n.contains('/') && self.repo.len() <= 140);
        if !repo_ok {
            return Err(("repo".into(), format!("expected owner/name, got {:?}", self.repo)));
        }
        if self.pr == 0 {
            return Err(("pr".into(), "pull request numbers start at 1".into()));
        }
        let mut family_names = HashSet::new();
        for (i, f) in self.families.iter().enumerate() {
            if f.name.trim().is_empty() {
                return Err((format!("families[{i}].name"), "must not be empty".into()));
            }
            if !family_names.insert(f.name.as_str()) {
                return Err((format!("families[{i}].name"), format!("family {:?} appears twice", f.name)));
            }
        }
        let mut ids = HashSet::new();
        let mut count = 0usize;
        let canary = self.canary.iter().map(|c| ("canary.point".to_string(), &c.point));
        let rest = self.families.iter().enumerate().flat_map(|(fi, f)| {
            f.points.iter().enumerate().map(move |(pi, p)| (format!("families[{fi}].points[{pi}]"), p))
        });
        for (path, point) in canary.chain(rest) {
            count += 1;
            if count > MAX_POINTS {
                return Err(("families".into(), format!("more than {MAX_POINTS} points")));
            }
            check_id(&point.id).map_err(|m| (format!("{path}.id"), m))?;
            if !ids.insert(point.id.as_str()) {
                return Err((format!("{path}.id"), format!("point id {:?} appears twice", point.id)));
            }
            check_job(&point.job).map_err(|(field, m)| (format!("{path}.job.{field}"), m))?;
        }
        if count == 0 {
            return Err(("families".into(), "the plan has no points".into()));
        }
        Ok(())
    }
}

fn check_id(id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !id.starts_with(['.', '-']);
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{id:?} is not a valid id: use 1-{MAX_ID_LEN} characters of A-Z a-z 0-9 . _ -, not starting with . or -"
        ))
    }
}

/// Variables the job wrapper sets itself; a plan may not override them.
pub fn reserved_env(name: &str) -> bool {
    name.starts_with("SLURM_") || name.starts_with("SWEEPGATE_") || name == "CUDA_VISIBLE_DEVICES"
}

fn check_job(job: &JobSpec) -> Result<(), (&'static str, String)> {
    if job.script.trim().is_empty() || job.script.contains('\0') || job.script.contains('\n') {
        return Err(("script", "must be a path (no NUL or newline)".into()));
    }
    if job.gpus == 0 || job.gpus > 64 {
        return Err(("gpus", format!("{} is out of range 1..=64", job.gpus)));
    }
    if job.nodes == 0 || job.nodes > 256 {
        return Err(("nodes", format!("{} is out of range 1..=256", job.nodes)));
    }
    if job.time_limit_minutes == 0 || job.time_limit_minutes > MAX_TIME_LIMIT_MINUTES {
        return Err((
            "time_limit_minutes",
            format!("{} is out of range 1..={MAX_TIME_LIMIT_MINUTES}", job.time_limit_minutes),
        ));
    }
    if job.env.len() > MAX_ENV_VARS {
        return Err(("env", format!("more than {MAX_ENV_VARS} variables")));
    }
    for (name, value) in &job.env {
        let valid_name = name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !valid_name {
            return Err(("env", format!("{name:?} is not a shell variable name")));
        }
        if reserved_env(name) {
            return Err(("env", format!("{name} is set by the dispatcher and cannot be overridden")));
        }
        if value.contains('\0') {
            return Err(("env", format!("{name}: value contains a NUL byte")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> serde_json::Value {
        serde_json::json!({
            "version": 1, "sweep_id": "pr7-abc", "repo": "acme/bench", "pr": 7,
            "canary": {"family": "single-node 1k1k", "point": {
                "id": "c0", "row": {"conc": 1}, "job": {"script": "bench.sh", "gpus": 1, "time_limit_minutes": 5}}},
            "families": [
                {"name": "single-node 1k1k", "fail_fast": true, "points": [
                    {"id": "a1", "row": {"conc": 4}, "job": {"script": "bench.sh", "env": {"CONC": "4"}, "gpus": 2, "time_limit_minutes": 5}},
                    {"id": "a2", "row": {"conc": 8}, "job": {"script": "bench.sh", "gpus": 2, "nodes": 2, "time_limit_minutes": 5}}]},
                {"name": "multi-node 1k1k", "fail_fast": false, "points": [
                    {"id": "b1", "row": {}, "job": {"script": "/abs/bench.sh", "gpus": 8, "time_limit_minutes": 60}}]}
            ]
        })
    }

    fn parse(v: &serde_json::Value) -> Result<Plan, PlanError> {
        Plan::parse(&serde_json::to_vec(v).unwrap(), "plan.json")
    }

    fn invalid_path(v: &serde_json::Value) -> String {
        match parse(v) {
            Err(PlanError::Invalid { path, .. }) => path,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn parses_and_orders_canary_first() {
        let plan = parse(&sample()).unwrap();
        let order: Vec<_> =
            plan.placed_points().iter().map(|p| (p.point.id.as_str(), p.is_canary, p.fail_fast)).collect();
        assert_eq!(order, [("c0", true, false), ("a1", false, true), ("a2", false, true), ("b1", false, false)]);
        assert_eq!(plan.families[0].points[1].job.nodes, 2);
        assert_eq!(plan.families[0].points[0].job.nodes, 1, "nodes defaults to 1");
        assert_eq!(plan.sha256(), parse(&sample()).unwrap().sha256());
    }

    #[test]
    fn unknown_fields_and_bad_json_are_positioned_errors() {
        let mut v = sample();
        v["families"][0]["points"][0]["job"]["gpu"] = 1.into();
        let err = parse(&v).unwrap_err().to_string();
        assert!(err.contains("unknown field `gpu`"), "{err}");
        let err = Plan::parse(b"{\n \"version\": 1,\n oops }", "p.json").unwrap_err();
        assert!(matches!(err, PlanError::Json { line: 3, .. }), "{err:?}");
        assert!(matches!(Plan::parse(&vec![b' '; MAX_PLAN_BYTES + 1], "p"), Err(PlanError::TooLarge { .. })));
    }

    #[test]
    fn rejects_every_invalid_field() {
        let cases: Vec<(&str, serde_json::Value, &str)> = vec![
            ("/version", 2.into(), "version"),
            ("/sweep_id", "has space".into(), "sweep_id"),
            ("/sweep_id", "-lead".into(), "sweep_id"),
            ("/repo", "noslash".into(), "repo"),
            ("/repo", "a/b/c".into(), "repo"),
            ("/pr", 0.into(), "pr"),
            ("/families/1/name", "single-node 1k1k".into(), "families[1].name"),
            ("/families/0/points/1/id", "a1".into(), "families[0].points[1].id"),
            ("/families/0/points/0/id", "c0".into(), "families[0].points[0].id"),
            ("/families/0/points/0/job/gpus", 0.into(), "families[0].points[0].job.gpus"),
            ("/families/0/points/1/job/nodes", 0.into(), "families[0].points[1].job.nodes"),
            ("/families/0/points/0/job/time_limit_minutes", 0.into(), "families[0].points[0].job.time_limit_minutes"),
            ("/families/0/points/0/job/script", "".into(), "families[0].points[0].job.script"),
            ("/canary/point/id", "x".repeat(65).into(), "canary.point.id"),
        ];
        for (pointer, value, want) in cases {
            let mut v = sample();
            *v.pointer_mut(pointer).unwrap() = value;
            assert_eq!(invalid_path(&v), want, "{pointer}");
        }
    }

    #[test]
    fn rejects_reserved_or_malformed_env() {
        for (name, value) in [
            ("CUDA_VISIBLE_DEVICES", "0"),
            ("SLURM_JOB_ID", "1"),
            ("SWEEPGATE_X", "1"),
            ("1BAD", "x"),
            ("A-B", "x"),
            ("OK", "a\0b"),
        ] {
            let mut v = sample();
            v["families"][0]["points"][0]["job"]["env"] = serde_json::json!({ name: value });
            assert_eq!(invalid_path(&v), "families[0].points[0].job.env", "{name}");
        }
    }

    #[test]
    fn empty_plan_is_an_error() {
        let v = serde_json::json!({"version": 1, "sweep_id": "s", "repo": "a/b", "pr": 1, "families": []});
        assert_eq!(invalid_path(&v), "families");
    }
}
