//! Fail-closed property over every fixture bundle: removing one kind of evidence at a time
//! (`head/`, `base/`, `artifacts/`, the check-runs, the upstream facts, the blob SHAs and texts
//! at other commits, the runs' job lists), deleting files while evidence.json still records them
//! as read, or marking facts unavailable while the files stay, never makes the verdict more
//! favourable (decisions FC1, FC2). Runs the real `sweepgate verify` binary on a mutated copy of
//! each bundle.

mod support;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("read dir").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

/// The verdict JSON and exit code; panics unless a verdict came out.
fn verdict(bundle: &Path, what: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(["verify", "--format", "json", "--bundle"])
        .arg(bundle)
        .output()
        .expect("run sweepgate");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{what}: no verdict ({e}): {stdout}{}", String::from_utf8_lossy(&out.stderr)));
    let approved = json["verdict"] == "APPROVED";
    assert_eq!(out.status.code(), Some(if approved { 0 } else { 1 }), "{what}: exit code follows the verdict");
    json
}

fn status(verdict: &Value, id: usize) -> &str {
    verdict["checks"][id]["status"].as_str().unwrap_or_default()
}

/// One ablation: a name and how it mutates the copied bundle.
type Ablation = (&'static str, fn(&Path));

fn remove_dir(dir: &Path) {
    if dir.is_dir() {
        std::fs::remove_dir_all(dir).expect("remove dir");
    }
}

fn edit_evidence(bundle: &Path, edit: impl FnOnce(&mut serde_json::Map<String, Value>)) {
    let path = bundle.join("evidence.json");
    let mut json: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("JSON");
    edit(json.as_object_mut().expect("an object"));
    std::fs::write(&path, serde_json::to_string_pretty(&json).expect("serialize")).expect("write");
}

/// Every run's fact lists of evidence.json, for an edit.
fn for_each_run(bundle: &Path, mut edit: impl FnMut(&mut serde_json::Map<String, Value>)) {
    edit_evidence(bundle, |e| {
        for run in e.get_mut("runs").and_then(Value::as_object_mut).into_iter().flat_map(|r| r.values_mut()) {
            if let Some(run) = run.as_object_mut() {
                edit(run);
            }
        }
    })
}

fn unavailable(reason: &str) -> Value {
    serde_json::json!({ "unavailable": reason })
}

/// The directories below `artifacts/<run id>/` named `job-logs`.
fn job_log_dirs(bundle: &Path) -> Vec<std::path::PathBuf> {
    let runs = std::fs::read_dir(bundle.join("artifacts")).into_iter().flatten().flatten();
    runs.map(|run| run.path().join("job-logs")).filter(|dir| dir.is_dir()).collect()
}

/// Replaces a directory of the bundle by an empty one.
fn empty_dir(dir: &Path) {
    remove_dir(dir);
    std::fs::create_dir_all(dir).expect("create dir");
}

const ABLATIONS: [Ablation; 13] = [
    ("head/", |b| remove_dir(&b.join("head"))),
    ("base/", |b| remove_dir(&b.join("base"))),
    // The trees are emptied while `trees` still says `ok`: every file the PR lists as changed is
    // missing from a side that must hold it (decision FC2).
    ("head/ emptied, facts kept", |b| empty_dir(&b.join("head"))),
    ("base/ emptied, facts kept", |b| empty_dir(&b.join("base"))),
    ("artifacts/", |b| remove_dir(&b.join("artifacts"))),
    ("check-runs", |b| {
        edit_evidence(b, |e| {
            e.remove("check_runs");
        })
    }),
    ("upstream", |b| {
        edit_evidence(b, |e| {
            e.remove("upstream");
        })
    }),
    // Check 1's head equivalence reads the blob SHAs and the master-config text at the sweep commit.
    ("blobs and texts", |b| {
        edit_evidence(b, |e| {
            e.remove("blobs");
            e.remove("texts_at");
        })
    }),
    // The files are deleted but evidence.json still says they were downloaded (issue 23).
    ("artifacts/ emptied, facts kept", |b| empty_dir(&b.join("artifacts"))),
    ("job logs deleted, facts kept", |b| {
        for dir in job_log_dirs(b) {
            remove_dir(&dir);
        }
    }),
    // The facts say unavailable while the files stay: the facts win.
    ("tree facts unavailable, files kept", |b| {
        edit_evidence(b, |e| {
            e.insert(
                "trees".into(),
                serde_json::json!({"base": unavailable("tarball: HTTP 502"), "head": unavailable("tarball: HTTP 502")}),
            );
        })
    }),
    ("artifact and job-log facts unavailable, files kept", |b| {
        for_each_run(b, |run| {
            for key in ["artifacts", "archives"] {
                for fact in run.get_mut(key).and_then(Value::as_object_mut).into_iter().flat_map(|m| m.values_mut()) {
                    *fact = unavailable("download: HTTP 502");
                }
            }
            for job in run.get_mut("jobs").and_then(Value::as_object_mut).into_iter().flat_map(|m| m.values_mut()) {
                if let Some(job) = job.as_object_mut() {
                    job.insert("log".into(), unavailable("job log: HTTP 502"));
                }
            }
        })
    }),
    // The qualifying run's job list could not be read: no job (log) of any run is known.
    ("job lists", |b| {
        for_each_run(b, |run| {
            run.remove("jobs");
            run.insert("jobs_unavailable".into(), Value::from("the job list could not be read: HTTP 502"));
        })
    }),
];

/// The advisory checks (spec 30 §3.1, the newest known WARN set); every other check blocks.
const ADVISORY: [usize; 4] = [4, 13, 14, 15];

#[test]
fn removing_evidence_never_makes_a_verdict_more_favourable() {
    let all = support::fixture_bundles();
    assert!(all.len() >= 20, "fixture bundles are missing");
    let mut violations = Vec::new();
    for bundle in &all {
        let name = bundle.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let original = verdict(bundle, &name);
        for (what, ablate) in ABLATIONS {
            let dir = tempfile::tempdir().expect("tempdir");
            let copy = dir.path().join(&name);
            copy_dir(bundle, &copy);
            ablate(&copy);
            let label = format!("{name} without {what}");
            let ablated = verdict(&copy, &label);
            if original["verdict"] == "REJECTED" && ablated["verdict"] == "APPROVED" {
                violations.push(format!("{label}: REJECTED became APPROVED"));
            }
            let tree_gone = matches!(
                what,
                "head/"
                    | "base/"
                    | "head/ emptied, facts kept"
                    | "base/ emptied, facts kept"
                    | "tree facts unavailable, files kept"
            );
            if tree_gone && ablated["verdict"] != "REJECTED" {
                violations.push(format!("{label}: not REJECTED"));
            }
            for id in 0..19 {
                let (before, after) = (status(&original, id), status(&ablated, id));
                let advisory = ADVISORY.contains(&id);
                // A blocking check never routes missing evidence to a WARN (decision FC1); only
                // an advisory check (4, 13, 14, 15) may turn a FAIL into a WARN.
                let worse = matches!((before, after), ("FAIL" | "WARN", "PASS" | "NA"))
                    || (!advisory && before == "FAIL" && after == "WARN");
                if worse {
                    let summary = &ablated["checks"][id]["summary"];
                    violations.push(format!("{label}: check {id} {before} became {after}: {summary}"));
                }
            }
        }
    }
    assert!(violations.is_empty(), "{} violations:\n{}", violations.len(), violations.join("\n"));
}
