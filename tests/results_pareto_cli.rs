//! `sweepgate pareto`: the Check 14 counter through the real binary.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

fn run_pareto(input: &[u8]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .arg("pareto")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sweepgate");
    child.stdin.take().expect("stdin").write_all(input).expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn counts_the_fixture_curves() {
    let input = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/results/pareto/curves.json"))
        .expect("fixture");
    let (code, stdout, stderr) = run_pareto(&input);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON output");
    // The report's shape: 7 of 10 measured points on the frontier (c4 … c40), no invalid point.
    assert_eq!(v[0]["status"], "PASS");
    assert_eq!(v[0]["measuredPoints"], 10);
    assert_eq!(v[0]["frontierPoints"], 7);
    let concs: Vec<i64> =
        v[0]["frontier"].as_array().into_iter().flatten().filter_map(|p| p["conc"].as_i64()).collect();
    assert_eq!(concs, vec![4, 8, 10, 16, 24, 28, 40]);
    // Zero, null and NaN coordinates are invalid evidence: WARN even with the rest fine.
    assert_eq!(v[1]["status"], "WARN");
    assert_eq!(v[1]["invalidPoints"], 3);
    assert_eq!(v[2]["canonicalRestriction"], true);
    insta::assert_snapshot!("pareto_fixture_output", stdout);
}

#[test]
fn malformed_input_exits_1_with_a_message() {
    let cases: [(&[u8], &str); 6] = [
        (b"[]", "Provide every affected curve; an empty list cannot prove coverage"),
        (b"not json", "input is not valid JSON"),
        (b"[\"curve\"]", "Each curve must be an object"),
        (br#"[{"key": "", "points": []}]"#, "Each curve needs a nonempty key and a points array"),
        (br#"[{"key": "k", "points": []}, {"key": "k", "points": [{"x": 1, "y": 1}]}]"#, "Curve keys must be unique"),
        (b"\xff\xfe", "not UTF-8"),
    ];
    for (input, message) in cases {
        let (code, stdout, stderr) = run_pareto(input);
        assert_eq!(code, 1, "{message}");
        assert!(stdout.is_empty());
        assert!(stderr.contains(message), "{stderr:?} should contain {message:?}");
    }
}

#[test]
fn warn_curves_still_exit_0() {
    let (code, stdout, _) = run_pareto(br#"[{"key": "k", "points": [{"x": 1, "y": 1}]}]"#);
    assert_eq!(code, 0);
    assert!(stdout.contains("\"status\": \"WARN\""));
}
