//! `sweepgate app-manifest`: the repository's `github-app-manifest.json` is its output, and a
//! webhook URL changes only the hook (issue 24 item 7).

use std::process::Command;

fn manifest(args: &[&str]) -> serde_json::Value {
    let out =
        Command::new(env!("CARGO_BIN_EXE_sweepgate")).arg("app-manifest").args(args).output().expect("sweepgate runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn the_manifest_file_is_the_commands_output_and_the_url_is_the_hosts() {
    let file: serde_json::Value =
        serde_json::from_str(include_str!("../github-app-manifest.json")).expect("the manifest file is JSON");
    assert_eq!(manifest(&[]), file);
    let mine = manifest(&["--webhook-url", "https://ci.example.org/webhook"]);
    assert_eq!(mine["hook_attributes"]["url"], "https://ci.example.org/webhook");
    let mut expected = file;
    expected["hook_attributes"]["url"] = "https://ci.example.org/webhook".into();
    assert_eq!(mine, expected);
    assert_eq!(mine["default_permissions"]["contents"], "read", "least privilege: contents are never written");
}
