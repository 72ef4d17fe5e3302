//! `sweepgate verify` over every fixture bundle: the verdict and each check's status equal the
//! bundle's expected.json, the output is byte-identical across runs, and the Markdown report is
//! snapshotted so every wording change is reviewed.

mod support;

use std::path::Path;
use std::process::{Command, Output};

fn verify(bundle: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(["verify", "--bundle"])
        .arg(bundle)
        .args(extra)
        .output()
        .expect("run sweepgate")
}

fn name(bundle: &Path) -> String {
    bundle.file_name().unwrap_or_default().to_string_lossy().into_owned()
}

#[test]
fn every_bundle_matches_its_expected_verdict() {
    let all = support::fixture_bundles();
    assert!(all.len() >= 2, "fixture bundles are missing");
    for bundle in all {
        let expected: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(bundle.join("expected.json")).expect("expected.json"))
                .expect("expected.json is JSON");
        let out = verify(&bundle, &["--format", "json"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let got: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
            panic!("{}: not JSON ({e}): {stdout}{}", name(&bundle), String::from_utf8_lossy(&out.stderr))
        });
        assert_eq!(got["verdict"], expected["verdict"], "{}: verdict", name(&bundle));
        let checks = got["checks"].as_array().expect("checks array");
        assert_eq!(checks.len(), 19, "{}: all 19 checks are reported", name(&bundle));
        for check in checks {
            let id = check["id"].to_string();
            assert_eq!(check["status"], expected["checks"][&id], "{}: check {id}: {}", name(&bundle), check["summary"]);
            // Issue 33 item 5: the JSON summary is plain text, and the row carries what it judged.
            for lang in ["summary", "summary_zh"] {
                let text = check[lang].as_str().unwrap_or_default();
                for markup in ["\\#", "\\-", "\\*", "\\_", "\\(", "&amp;", "&lt;", "&gt;", "&quot;", "\u{200B}"] {
                    assert!(!text.contains(markup), "{}: check {id} {lang} holds {markup:?}: {text}", name(&bundle));
                }
            }
            assert!(check["details"].is_object(), "{}: check {id} has its structured details", name(&bundle));
        }
        let approved = expected["verdict"] == "APPROVED";
        assert_eq!(out.status.success(), approved, "{}: exit code follows the verdict", name(&bundle));
    }
}

#[test]
fn reports_are_deterministic_and_snapshotted() {
    for bundle in support::fixture_bundles() {
        let first = verify(&bundle, &[]);
        let second = verify(&bundle, &[]);
        assert_eq!(first.stdout, second.stdout, "{}: same bundle, same bytes", name(&bundle));
        let text = String::from_utf8(first.stdout).expect("UTF-8 report");
        insta::assert_snapshot!(format!("verdict-{}", name(&bundle)), text);
    }
}

#[test]
fn english_and_chinese_halves_can_be_rendered_alone() {
    let bundle = &support::fixture_bundles()[0];
    let en = String::from_utf8(verify(bundle, &["--lang", "en"]).stdout).expect("UTF-8");
    let zh = String::from_utf8(verify(bundle, &["--lang", "zh"]).stdout).expect("UTF-8");
    assert!(en.contains("Check 1 (In-PR sweep + evals)") && !en.contains("检查"), "{en}");
    assert!(zh.contains("检查 1（PR 内提交的扫描与评测）") && !zh.contains("Check 1 ("), "{zh}");
}

#[test]
fn broken_bundles_are_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = verify(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("evidence.json"), "{err}");

    std::fs::write(dir.path().join("evidence.json"), "{\"format\": 1,\n \"repository\": ").expect("write");
    let err = String::from_utf8_lossy(&verify(dir.path(), &[]).stderr).into_owned();
    assert!(err.contains("not valid evidence JSON") && err.contains("line 2"), "{err}");

    std::fs::write(dir.path().join("evidence.json"), "{\"format\": 99}").expect("write");
    let err = String::from_utf8_lossy(&verify(dir.path(), &[]).stderr).into_owned();
    assert!(err.contains("bundle format 99 is not supported"), "{err}");

    let good = std::fs::read_to_string(support::fixture_bundles()[0].join("evidence.json")).expect("read");
    std::fs::write(dir.path().join("evidence.json"), good.replacen("\"title\"", "\"titel\"", 1)).expect("write");
    let err = String::from_utf8_lossy(&verify(dir.path(), &[]).stderr).into_owned();
    assert!(err.contains("unknown field `titel`"), "{err}");
}
