//! The results store beside the ledger: each finished point's collected files (benchmark
//! results, eval results, power samples) kept by content (`objects/<sha256>`), and per sweep a
//! manifest with every point's state and provenance record (`sweeps/<sweep id>.json`).
//! [`export`] turns a stored sweep into the evidence pieces the verifier reads for upstream's
//! `run-sweep.yml`: a workflow-run-like record and an artifact tree
//! `<run id>/<artifact>/<file>` (`bmk_<point>`, `eval_<point>`, `power_<point>`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::ledger::{PointRecord, PointState};

/// Files above this size are not stored (a result or power file is far smaller).
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("results store {path}: {message}")]
    Io { path: String, message: String },
    #[error("results store: sweep {0} is not stored")]
    NoSuchSweep(String),
    #[error("results store {path}: {message}")]
    Corrupt { path: String, message: String },
}

/// A stored sweep: what ran, for which commit, and each point's files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredSweep {
    pub sweep_id: String,
    pub repo: String,
    pub pr: u64,
    pub head_sha: String,
    /// `success`, `failure` or `cancelled`: the check run's conclusion.
    pub conclusion: String,
    pub completed_at: String,
    pub points: Vec<StoredPoint>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredPoint {
    pub point_id: String,
    pub state: String,
    pub job_id: Option<String>,
    pub reason: Option<String>,
    pub files: Vec<StoredFile>,
    /// The dispatcher's provenance record (spec 50 §11), as the ledger kept it.
    pub provenance: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredFile {
    /// Relative to the job directory (`logs/…`).
    pub path: String,
    /// `result`, `eval` or `power`.
    pub kind: String,
    pub sha256: String,
    pub bytes: u64,
}

/// The workflow-run-like record of an exported sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepRun {
    /// The sweep id (what `/reuse-sweep-run` names).
    pub id: String,
    pub name: String,
    pub head_sha: String,
    pub status: String,
    pub conclusion: String,
    pub completed_at: String,
}

/// A sweep as evidence: the run record and its artifact files by `<run id>/<artifact>/<file>`.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportedSweep {
    pub run: SweepRun,
    pub artifacts: BTreeMap<String, Vec<u8>>,
}

pub struct ResultsStore {
    root: PathBuf,
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError::Io { path: path.display().to_string(), message: e.to_string() }
}

fn kind_of(path: &str, kind: &str) -> &'static str {
    if kind == "power" {
        "power"
    } else if path.contains("eval") || path.rsplit('/').next().is_some_and(|f| f.starts_with("results_2")) {
        "eval"
    } else {
        "result"
    }
}

impl ResultsStore {
    pub fn open(root: &Path) -> Result<ResultsStore, StoreError> {
        for sub in ["objects", "sweeps"] {
            std::fs::create_dir_all(root.join(sub)).map_err(|e| io_err(root, e))?;
        }
        Ok(ResultsStore { root: root.to_path_buf() })
    }

    fn manifest(&self, sweep_id: &str) -> PathBuf {
        self.root.join("sweeps").join(format!("{sweep_id}.json"))
    }

    /// Copies every file the provenance of each point lists (from its job directory) into the
    /// store and writes the sweep's manifest. A file that cannot be read or whose content no
    /// longer matches its recorded hash is left out and named in the point's `reason`.
    pub fn store(&self, mut sweep: StoredSweep, records: &[PointRecord]) -> Result<StoredSweep, StoreError> {
        sweep.points.clear();
        for r in records {
            let provenance = r.provenance.as_ref().and_then(|p| p.value().ok());
            let mut point = StoredPoint {
                point_id: r.point_id.clone(),
                state: r.state.as_str().to_owned(),
                job_id: r.job_id.as_ref().map(|j| j.0.clone()),
                reason: r.reason.clone(),
                files: Vec::new(),
                provenance: provenance.clone(),
            };
            let job_dir = provenance.as_ref().and_then(|p| p["output_dir"].as_str()).map(PathBuf::from);
            let files = provenance.as_ref().and_then(|p| p["files"].as_array().cloned()).unwrap_or_default();
            for f in files {
                let (Some(rel), Some(dir)) = (f["path"].as_str(), &job_dir) else { continue };
                match self.put(&dir.join(rel)) {
                    Ok((sha256, bytes)) => point.files.push(StoredFile {
                        path: rel.to_owned(),
                        kind: kind_of(rel, f["kind"].as_str().unwrap_or_default()).to_owned(),
                        sha256,
                        bytes,
                    }),
                    Err(e) => {
                        let note = format!("{rel} not stored: {e}");
                        point.reason = Some(point.reason.map_or(note.clone(), |r| format!("{r}; {note}")));
                    }
                }
            }
            sweep.points.push(point);
        }
        let path = self.manifest(&sweep.sweep_id);
        let text = serde_json::to_vec_pretty(&sweep).map_err(|e| io_err(&path, e))?;
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, &path)).map_err(|e| io_err(&path, e))?;
        Ok(sweep)
    }

    fn put(&self, file: &Path) -> Result<(String, u64), StoreError> {
        let meta = std::fs::metadata(file).map_err(|e| io_err(file, e))?;
        if meta.len() > MAX_FILE_BYTES {
            return Err(io_err(file, format!("{} bytes, above {MAX_FILE_BYTES}", meta.len())));
        }
        let bytes = std::fs::read(file).map_err(|e| io_err(file, e))?;
        let sha = hex::encode(Sha256::digest(&bytes));
        let object = self.root.join("objects").join(&sha);
        if !object.exists() {
            let tmp = object.with_extension("tmp");
            std::fs::write(&tmp, &bytes)
                .and_then(|_| std::fs::rename(&tmp, &object))
                .map_err(|e| io_err(&object, e))?;
        }
        Ok((sha, bytes.len() as u64))
    }

    pub fn load(&self, sweep_id: &str) -> Result<StoredSweep, StoreError> {
        let path = self.manifest(sweep_id);
        let text = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(StoreError::NoSuchSweep(sweep_id.into())),
            Err(e) => return Err(io_err(&path, e)),
        };
        serde_json::from_slice(&text)
            .map_err(|e| StoreError::Corrupt { path: path.display().to_string(), message: e.to_string() })
    }
}

/// A stored sweep as the evidence of a `run-sweep.yml` run: the run record and its artifacts.
/// Every object is re-hashed on the way out; a mismatch is an error, never a silent file.
pub fn export(store: &ResultsStore, sweep_id: &str, check_name: &str) -> Result<ExportedSweep, StoreError> {
    let sweep = store.load(sweep_id)?;
    let mut artifacts = BTreeMap::new();
    for point in sweep.points.iter().filter(|p| p.state == PointState::Succeeded.as_str()) {
        for file in &point.files {
            let object = store.root.join("objects").join(&file.sha256);
            let bytes = std::fs::read(&object).map_err(|e| io_err(&object, e))?;
            if hex::encode(Sha256::digest(&bytes)) != file.sha256 {
                return Err(StoreError::Corrupt {
                    path: object.display().to_string(),
                    message: format!("content does not match {} of {}", file.sha256, file.path),
                });
            }
            let artifact = match file.kind.as_str() {
                "eval" => "eval",
                "power" => "power",
                _ => "bmk",
            };
            let name = file.path.rsplit('/').next().unwrap_or(&file.path);
            artifacts.insert(format!("{}/{artifact}_{}/{name}", sweep.sweep_id, point.point_id), bytes);
        }
    }
    let run = SweepRun {
        id: sweep.sweep_id.clone(),
        name: check_name.to_owned(),
        head_sha: sweep.head_sha.clone(),
        status: "completed".into(),
        conclusion: sweep.conclusion.clone(),
        completed_at: sweep.completed_at.clone(),
    };
    Ok(ExportedSweep { run, artifacts })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::sweep::ledger::StoredJson;
    use crate::sweep::scheduler::JobId;

    /// A point record whose provenance lists a result and a power file under `job_dir`.
    pub(crate) fn record(id: &str, state: PointState, job_dir: &Path) -> PointRecord {
        let provenance = serde_json::json!({
            "output_dir": job_dir.display().to_string(),
            "files": [
                {"path": "logs/sa-bench_isl_1024_osl_1024/results_concurrency_4_gpus_8.json", "kind": "result"},
                {"path": "logs/power/samples.csv", "kind": "power"}
            ]
        });
        PointRecord {
            point_id: id.into(),
            ord: 0,
            family: "f".into(),
            is_canary: false,
            state,
            job_name: format!("sg-{id}"),
            job_id: Some(JobId("77".into())),
            sbatch_calls: 1,
            submit_info: None,
            cancel_reason: None,
            reason: None,
            exit_code: Some(0),
            state_source: None,
            provenance: Some(StoredJson::from_value(&provenance).unwrap()),
        }
    }

    fn sweep(id: &str) -> StoredSweep {
        StoredSweep {
            sweep_id: id.into(),
            repo: "o/r".into(),
            pr: 4,
            head_sha: "a".repeat(40),
            conclusion: "success".into(),
            completed_at: "2026-12-01T00:00:00Z".into(),
            points: vec![],
        }
    }

    #[test]
    fn stored_results_export_as_run_sweep_artifacts() {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join("jobs/77");
        std::fs::create_dir_all(job.join("logs/sa-bench_isl_1024_osl_1024")).unwrap();
        std::fs::create_dir_all(job.join("logs/power")).unwrap();
        std::fs::write(job.join("logs/sa-bench_isl_1024_osl_1024/results_concurrency_4_gpus_8.json"), b"{\"a\":1}")
            .unwrap();
        std::fs::write(job.join("logs/power/samples.csv"), b"schema_version\n").unwrap();
        let store = ResultsStore::open(&dir.path().join("store")).unwrap();
        let records = [record("p1", PointState::Succeeded, &job), record("p2", PointState::Failed, &job)];
        let stored = store.store(sweep("s1"), &records).unwrap();
        assert_eq!(stored.points[0].files.len(), 2);
        assert_eq!(stored.points[0].files[1].kind, "power");
        // The same content is stored once.
        assert_eq!(std::fs::read_dir(dir.path().join("store/objects")).unwrap().count(), 2);

        let exported = export(&store, "s1", "sweepgate/sweep").unwrap();
        assert_eq!((exported.run.id.as_str(), exported.run.conclusion.as_str()), ("s1", "success"));
        let paths: Vec<&str> = exported.artifacts.keys().map(String::as_str).collect();
        assert_eq!(
            paths,
            ["s1/bmk_p1/results_concurrency_4_gpus_8.json", "s1/power_p1/samples.csv"],
            "failed points are not evidence"
        );
        assert_eq!(exported.artifacts["s1/bmk_p1/results_concurrency_4_gpus_8.json"], b"{\"a\":1}");
    }

    #[test]
    fn missing_and_tampered_files_are_named_never_silent() {
        let dir = tempfile::tempdir().unwrap();
        let store = ResultsStore::open(&dir.path().join("store")).unwrap();
        let stored =
            store.store(sweep("s2"), &[record("p1", PointState::Succeeded, &dir.path().join("gone"))]).unwrap();
        assert!(stored.points[0].files.is_empty());
        assert!(stored.points[0].reason.as_deref().unwrap().contains("not stored"), "{:?}", stored.points[0].reason);
        assert!(matches!(export(&store, "nope", "x"), Err(StoreError::NoSuchSweep(_))));

        let job = dir.path().join("job");
        std::fs::create_dir_all(job.join("logs/power")).unwrap();
        std::fs::write(job.join("logs/power/samples.csv"), b"x").unwrap();
        let stored = store.store(sweep("s3"), &[record("p1", PointState::Succeeded, &job)]).unwrap();
        let object = dir.path().join("store/objects").join(&stored.points[0].files[0].sha256);
        std::fs::write(object, b"tampered").unwrap();
        assert!(matches!(export(&store, "s3", "x"), Err(StoreError::Corrupt { .. })));
    }
}
