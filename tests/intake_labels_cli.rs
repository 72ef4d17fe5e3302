//! `sweepgate labels`: the offline label policy, driven through the real binary.

use std::process::Command;

fn labels(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .arg("labels")
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("run sweepgate");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("json output")
}

#[test]
fn documented_json_shape_for_a_sweep() {
    let v = labels(&["--labels", "full-sweep-fail-fast,all-evals,bug"]);
    insta::assert_json_snapshot!(v);
}

#[test]
fn conflicting_and_retired_labels_explained_in_both_languages() {
    let v = labels(&["--labels", "full-sweep-enabled,non-canary-full-sweep-enabled,sweep-enabled", "--draft"]);
    insta::assert_json_snapshot!(v);
}

#[test]
fn fork_with_triage_labeler_and_skip_sweep() {
    let v = labels(&[
        "--labels",
        "full-sweep-enabled",
        "--fork",
        "--labeler-permission",
        "triage",
        "--head-message",
        "chore: refresh [skip-sweep]",
        "--no-changelog-append",
    ]);
    assert_eq!(v["sweep"], false);
    let codes: Vec<&str> = v["reasons"].as_array().unwrap().iter().map(|r| r["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["no-changelog-append", "skip-sweep", "fork-labeler-not-authorized"]);
}

#[test]
fn no_labels_at_all() {
    let v = labels(&[]);
    assert_eq!(v["sweep"], false);
    assert_eq!(v["primary"], serde_json::Value::Null);
    assert_eq!(v["reasons"][0]["code"], "no-primary-label");
}

#[test]
fn bad_permission_value_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(["labels", "--labels", "full-sweep-enabled", "--labeler-permission", "owner"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("owner"));
}
