//! Bundles: Evidence on disk, a public interface (README "Evidence bundles").
//!
//! ```text
//! <bundle>/evidence.json     everything but file trees, with "format": 2
//! <bundle>/base/<path>       files at the base SHA (policy files, configs, recipes, …)
//! <bundle>/head/<path>       files at the pinned head SHA
//! <bundle>/policy/<path>     policy files at `policy_sha`, the default branch's tip, when it is
//!                            not the base commit (absent: policy is read from base/)
//! <bundle>/artifacts/<run id>/<artifact name>/<path>   unpacked workflow artifacts
//! <bundle>/artifacts/<run id>/job-logs/<job id>.log    job logs a check reads
//! ```
//!
//! Format 2 records whether each tree could be read (`trees`), nested-archive and job-log
//! availability per run (and a job list that could not be read), blob SHAs per commit, the
//! master-config text at the sweep commit (`texts_at`), published runs per series and upstream
//! content, and (since issue 25) `pull_request.policy_sha` with `trees.policy`; a bundle without
//! them read its policy at `base_sha`.
//! Format 1 is still read: a tree directory that is absent is unavailable, its single
//! `upstream.published_run` applies to every series, and the facts it never had (blobs) are
//! simply absent, which the checks read as unavailable.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::limits::{self, MAX_ARTIFACT_BYTES, MAX_EVIDENCE_JSON, MAX_TREE_BYTES};
use super::{Evidence, Fact, PublishedRun, ALL_SERIES};
use crate::repo::{MemTree, RepoError, Tree, WorkTree};

/// The bundle format version this build writes.
pub const BUNDLE_FORMAT: u32 = 2;

/// The oldest format this build reads.
pub const OLDEST_BUNDLE_FORMAT: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: not valid evidence JSON: {message} (see README, \"Evidence bundles\")")]
    Json { path: PathBuf, message: String },
    #[error("{path}: bundle format {found} is not supported; this sweepgate reads formats {OLDEST_BUNDLE_FORMAT} to {BUNDLE_FORMAT}")]
    Format { path: PathBuf, found: u32 },
    #[error("{path}: evidence.json is {size} bytes; at most {MAX_EVIDENCE_JSON} are read")]
    TooLarge { path: PathBuf, size: u64 },
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Serialize)]
struct Envelope<E> {
    format: u32,
    #[serde(flatten)]
    evidence: E,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BundleError + '_ {
    move |source| BundleError::Io { path: path.to_owned(), source }
}

/// Reads a bundle directory.
pub fn read_bundle(dir: &Path) -> Result<Evidence, BundleError> {
    let json_path = dir.join("evidence.json");
    let size = std::fs::metadata(&json_path).map_err(io(&json_path))?.len();
    if size > MAX_EVIDENCE_JSON {
        return Err(BundleError::TooLarge { path: json_path, size });
    }
    let text = std::fs::read_to_string(&json_path).map_err(io(&json_path))?;
    let json_error = |e: serde_json::Error| BundleError::Json {
        path: json_path.clone(),
        message: format!("line {} column {}: {e}", e.line(), e.column()),
    };
    let mut raw: serde_json::Value = serde_json::from_str(&text).map_err(json_error)?;
    let found = raw.get("format").and_then(serde_json::Value::as_u64).unwrap_or(0);
    if !(u64::from(OLDEST_BUNDLE_FORMAT)..=u64::from(BUNDLE_FORMAT)).contains(&found) {
        return Err(BundleError::Format { path: json_path, found: u32::try_from(found).unwrap_or(u32::MAX) });
    }
    // Not through the flattened envelope: serde's flatten cannot read integer map keys
    // (`runs` is keyed by run id), so the format field is removed and the rest read directly.
    if let Some(object) = raw.as_object_mut() {
        object.remove("format");
    }
    let mut evidence: Evidence = serde_json::from_value(raw)
        .map_err(|e| BundleError::Json { path: json_path.clone(), message: e.to_string() })?;
    evidence.format = u32::try_from(found).unwrap_or(BUNDLE_FORMAT);
    if let Some(run_id) = evidence.upstream.published_run.take() {
        let run = PublishedRun { run_id, pr: 0, source: "format1".into(), merged_at: None };
        evidence.upstream.published_runs.entry(ALL_SERIES.into()).or_insert(Fact::Ok(Some(run)));
    }
    limits::bound_patches(&mut evidence.files);
    evidence.base = load_tree(dir, "base", MAX_TREE_BYTES, &mut evidence.trees.base);
    evidence.head = load_tree(dir, "head", MAX_TREE_BYTES, &mut evidence.trees.head);
    match &mut evidence.trees.policy {
        Some(fact) => evidence.policy = load_tree(dir, "policy", MAX_TREE_BYTES, fact),
        // Policy read at the base commit (or a bundle from before `policy_sha`).
        None if evidence.pull_request.policy_sha.is_none() => {
            evidence.pull_request.policy_sha = Some(evidence.pull_request.base_sha.clone());
        }
        None => {}
    }
    let mut artifacts_fact = Fact::Ok(());
    evidence.artifacts = load_tree(dir, "artifacts", MAX_ARTIFACT_BYTES, &mut artifacts_fact);
    if let Fact::Unavailable(reason) = artifacts_fact {
        mark_artifacts_unavailable(&mut evidence, &reason);
    }
    mark_contradicted_facts_unavailable(&mut evidence);
    Ok(evidence)
}

/// A bundle whose evidence.json contradicts its directories is unavailable evidence, never a
/// reading of the empty directory (decision FC2): an artifact recorded as downloaded whose
/// directory `artifacts/<run id>/<name>/` is missing or empty, and a job log recorded as read
/// that is not at `artifacts/<run id>/job-logs/<job id>.log`, become unavailable naming the
/// contradiction.
fn mark_contradicted_facts_unavailable(evidence: &mut Evidence) {
    let files = &evidence.artifacts;
    for (run_id, run) in &mut evidence.runs {
        for (name, fact) in &mut run.artifacts {
            if fact.as_ok().is_some() && !files.has_files_under(&format!("{run_id}/{name}/")) {
                *fact = Fact::Unavailable(format!(
                    "evidence.json records the artifact as downloaded, but the bundle's artifacts/{run_id}/{name}/ is missing or empty"
                ));
            }
        }
        for (job_id, job) in &mut run.jobs {
            let path = format!("{run_id}/job-logs/{job_id}.log");
            if job.log.as_ok().is_some() && files.get(&path).is_none() {
                job.log = Fact::Unavailable(format!(
                    "evidence.json records the job log as read, but the bundle has no artifacts/{path}"
                ));
            }
        }
    }
}

/// Without `artifacts/`, no artifact, nested archive or job log the runs list is readable.
fn mark_artifacts_unavailable(evidence: &mut Evidence, reason: &str) {
    for run in evidence.runs.values_mut() {
        let facts = run
            .artifacts
            .values_mut()
            .chain(run.archives.values_mut())
            .chain(run.jobs.values_mut().map(|j| &mut j.log));
        for fact in facts.filter(|f| f.as_ok().is_some()) {
            *fact = Fact::Unavailable(reason.to_owned());
        }
    }
}

/// Loads the tree directory `name` of a bundle; one that is absent, cannot be read or is beyond
/// the size policy (`limits::check_tree`, the collector's bound) is empty and its fact
/// unavailable (a recorded reason is kept). The reason names the directory relative to the
/// bundle, so the report does not depend on where the bundle is.
fn load_tree(bundle: &Path, name: &str, max_bytes: u64, fact: &mut Fact<()>) -> MemTree {
    let dir = bundle.join(name);
    let mut tree = MemTree::new();
    let loaded = match dir.is_dir() {
        true => tree
            .copy_from(&WorkTree::new(&dir), "")
            .map_err(|e| e.to_string())
            .and_then(|()| limits::check_tree(&tree, max_bytes)),
        false => Err(format!("the bundle has no {name}/ directory")),
    };
    match loaded {
        Ok(()) => tree,
        Err(reason) => {
            if fact.as_ok().is_some() {
                *fact = Fact::Unavailable(match dir.is_dir() {
                    true => format!("the bundle's {name}/: {reason}"),
                    false => reason,
                });
            }
            MemTree::new()
        }
    }
}

/// Writes a bundle directory (created if missing; existing files are overwritten).
pub fn write_bundle(dir: &Path, evidence: &Evidence) -> Result<(), BundleError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let json_path = dir.join("evidence.json");
    let envelope = Envelope { format: BUNDLE_FORMAT, evidence };
    let mut text = serde_json::to_string_pretty(&envelope)
        .map_err(|e| BundleError::Json { path: json_path.clone(), message: e.to_string() })?;
    text.push('\n');
    std::fs::write(&json_path, text).map_err(io(&json_path))?;
    let trees = [
        ("base", &evidence.base, Some(&evidence.trees.base)),
        ("head", &evidence.head, Some(&evidence.trees.head)),
        ("policy", &evidence.policy, evidence.trees.policy.as_ref()),
        ("artifacts", &evidence.artifacts, Some(&Fact::Ok(()))),
    ];
    for (name, tree, fact) in trees {
        // An unreadable tree is written as no directory, so it reads back unavailable too;
        // policy read at the base has no directory of its own.
        if fact.and_then(Fact::as_ok).is_none() {
            continue;
        }
        std::fs::create_dir_all(dir.join(name)).map_err(io(dir))?;
        for path in tree.paths() {
            let target = dir.join(name).join(path);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent))?;
            }
            let bytes = tree.read(path)?.unwrap_or_default();
            std::fs::write(&target, bytes).map_err(io(&target))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::evidence;
    use crate::evidence::{Job, WorkflowRun};
    use std::collections::BTreeMap;

    fn with_run() -> Evidence {
        let mut e = evidence();
        let run = WorkflowRun {
            id: 7,
            name: "Run Sweep".into(),
            path: ".github/workflows/run-sweep.yml".into(),
            head_sha: e.pull_request.head_sha.clone(),
            event: "pull_request".into(),
            status: "completed".into(),
            conclusion: Some("success".into()),
            artifacts: [("bmk_x".to_owned(), Fact::Ok(())), ("eval_x".to_owned(), Fact::Ok(()))].into(),
            archives: BTreeMap::new(),
            jobs: [(41, Job { name: "eval / x".into(), conclusion: Some("success".into()), log: Fact::Ok(()) })].into(),
            sweep_id: None,
            jobs_unavailable: None,
        };
        e.runs.insert(7, run);
        e.artifacts.insert("7/bmk_x/agg_bmk_x.json", "{}");
        e.artifacts.insert("7/eval_x/results.json", "{}");
        e.artifacts.insert("7/job-logs/41.log", "+ python3 -m sglang.launch_server\n");
        e
    }

    /// Issue 24: a bundle beyond the size policy is read; what is beyond it is unavailable. A
    /// head file above the file bound made the whole bundle unreadable before.
    #[test]
    fn a_tree_or_diff_beyond_the_size_policy_is_unavailable_not_a_refused_bundle() {
        let dir = tempfile::tempdir().unwrap();
        let e = crate::checks::tests_support::with_change(
            evidence(),
            "benchmarks/x.sh",
            &"+".repeat(limits::MAX_PATCH_BYTES + 1),
        );
        write_bundle(dir.path(), &e).unwrap();
        let read = read_bundle(dir.path()).unwrap();
        assert_eq!(read.trees.head, Fact::Ok(()), "within the policy");
        assert!(read.files[0].patch.is_none(), "a diff above the policy is left out, as collect leaves it out");
        std::fs::write(dir.path().join("head/big.sh"), vec![b'x'; limits::MAX_FILE_BYTES as usize + 1]).unwrap();
        let read = read_bundle(dir.path()).unwrap();
        assert_eq!(
            read.trees.head,
            Fact::Unavailable(
                "the bundle's head/: big.sh is 8388609 bytes; sweepgate reads repository files of at most 8388608 bytes"
                    .into()
            )
        );
        assert!(read.head.paths().next().is_none());
        let verdict = crate::checks::verify(&read);
        assert_eq!(verdict.word, crate::checks::VerdictWord::Rejected);
    }

    #[test]
    fn policy_at_the_tip_round_trips_and_a_bundle_without_it_reads_policy_at_base() {
        let dir = tempfile::tempdir().unwrap();
        let mut e = evidence();
        e.base.insert(".github/CODEOWNERS", "* @old\n");
        write_bundle(dir.path(), &e).unwrap();
        let read = read_bundle(dir.path()).unwrap();
        assert_eq!(read.pull_request.policy_sha.as_deref(), Some(e.pull_request.base_sha.as_str()));
        assert_eq!(read.policy_tree().text(".github/CODEOWNERS"), Some("* @old\n"));
        assert!(!dir.path().join("policy").exists());

        let dir = tempfile::tempdir().unwrap();
        e.pull_request.policy_sha = Some("1".repeat(40));
        e.trees.policy = Some(Fact::Ok(()));
        e.policy.insert(".github/CODEOWNERS", "* @new\n");
        write_bundle(dir.path(), &e).unwrap();
        let read = read_bundle(dir.path()).unwrap();
        assert_eq!(read.pull_request.policy_sha, Some("1".repeat(40)));
        assert_eq!(read.policy_tree().text(".github/CODEOWNERS"), Some("* @new\n"));
        assert_eq!(read.base.text(".github/CODEOWNERS"), Some("* @old\n"), "the diff side keeps the base");
        // A recorded policy tree whose directory is gone is unavailable, not the base's.
        std::fs::remove_dir_all(dir.path().join("policy")).unwrap();
        let read = read_bundle(dir.path()).unwrap();
        assert_eq!(read.policy_fact(), &Fact::Unavailable("the bundle has no policy/ directory".into()));
    }

    #[test]
    fn facts_the_directories_contradict_are_unavailable_naming_the_contradiction() {
        let dir = tempfile::tempdir().unwrap();
        write_bundle(dir.path(), &with_run()).unwrap();
        let read = read_bundle(dir.path()).unwrap();
        assert_eq!(read.runs[&7].artifacts["bmk_x"], Fact::Ok(()), "a consistent bundle reads as written");
        assert_eq!(read.runs[&7].jobs[&41].log, Fact::Ok(()));
        std::fs::remove_dir_all(dir.path().join("artifacts/7/bmk_x")).unwrap();
        std::fs::create_dir_all(dir.path().join("artifacts/7/eval_x")).unwrap();
        std::fs::remove_file(dir.path().join("artifacts/7/eval_x/results.json")).unwrap();
        std::fs::remove_file(dir.path().join("artifacts/7/job-logs/41.log")).unwrap();
        let read = read_bundle(dir.path()).unwrap();
        let run = &read.runs[&7];
        for name in ["bmk_x", "eval_x"] {
            let reason = run.artifacts[name].clone();
            let expected = format!(
                "evidence.json records the artifact as downloaded, but the bundle's artifacts/7/{name}/ is missing or empty"
            );
            assert_eq!(reason, Fact::Unavailable(expected));
        }
        assert_eq!(
            run.jobs[&41].log,
            Fact::Unavailable(
                "evidence.json records the job log as read, but the bundle has no artifacts/7/job-logs/41.log".into()
            )
        );
        // A verdict still comes out.
        assert_eq!(crate::checks::verify(&read).results.len(), crate::checks::CHECK_COUNT);
    }
}
