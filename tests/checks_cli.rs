//! `sweepgate checks`: the catalog's sub-rules, one a line (text) or as JSON rows.

use std::process::Command;

fn checks(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate")).arg("checks").args(args).output().expect("sweepgate runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn text_and_json_list_the_same_subrules() {
    let rows: Vec<serde_json::Value> = serde_json::from_str(&checks(&["--format", "json"])).expect("JSON");
    let text = checks(&[]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), rows.len());
    let checks_listed: std::collections::BTreeSet<u64> = rows.iter().filter_map(|r| r["check"].as_u64()).collect();
    assert_eq!(checks_listed.len(), 19, "every check 0-18 has sub-rules");
    for (line, row) in lines.iter().zip(&rows) {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields[0], row["id"].as_str().unwrap_or_default());
        assert!(matches!(fields[1], "enforced" | "human"), "{line}");
        assert!(!row["text"]["zh"].as_str().unwrap_or_default().is_empty(), "{row}");
        let named = if fields[1] == "enforced" { &row["fixture"] } else { &row["reason"]["en"] };
        assert!(named.as_str().is_some_and(|s| !s.is_empty()), "{row}");
    }
}
