//! Canary selection (`canary-select` in `run-sweep.yml`, spec 10 §5.1 / spec 20 §9.4).

use serde_json::Value;

use super::{MatrixOutput, Row};

const CANARY_BUCKETS: [&str; 2] = ["1k1k", "8k1k"];

/// The canary (the single-node 1k1k/8k1k benchmark row with the lowest `conc`, first wins)
/// and the output with that row removed once from each of the two buckets, which are always
/// present in `remaining` (empty when missing).
pub fn select_canary(output: &MatrixOutput) -> (Option<Row>, MatrixOutput) {
    let candidates = CANARY_BUCKETS
        .iter()
        .filter_map(|b| output.single_node.get(*b))
        .flatten()
        .filter(|r| r.get("run-eval") != Some(&Value::Bool(true)));
    let mut canary: Option<(&Row, f64)> = None;
    for row in candidates {
        let conc = row.get("conc").and_then(Value::as_f64).unwrap_or(f64::INFINITY);
        if canary.is_none_or(|(_, best)| conc < best) {
            canary = Some((row, conc));
        }
    }
    let canary = canary.map(|(r, _)| r.clone());
    let mut remaining = output.clone();
    for bucket in CANARY_BUCKETS {
        let rows = remaining.single_node.entry(bucket.to_owned()).or_default();
        if let Some(c) = &canary {
            if let Some(at) = rows.iter().position(|r| r == c) {
                rows.remove(at);
            }
        }
    }
    (canary, remaining)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::output::ChangelogMetadata;
    use indexmap::IndexMap;
    use serde_json::json;

    fn row(conc: i64, tag: &str) -> Row {
        serde_json::from_value(json!({"conc": conc, "tag": tag, "run-eval": false})).unwrap()
    }

    fn output(single: Vec<(&str, Vec<Row>)>) -> MatrixOutput {
        MatrixOutput {
            single_node: single.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
            multi_node: IndexMap::new(),
            evals: vec![],
            agentic_evals: vec![],
            multinode_evals: vec![],
            multinode_agentic_evals: vec![],
            changelog_metadata: ChangelogMetadata { base_ref: "b".into(), head_ref: "h".into(), entries: vec![] },
        }
    }

    #[test]
    fn lowest_conc_first_wins_and_1k1k_beats_8k1k_on_ties() {
        let out = output(vec![
            ("8k1k", vec![row(4, "a8"), row(4, "b8")]),
            ("1k1k", vec![row(8, "a1"), row(4, "b1"), row(4, "c1")]),
            ("agentic", vec![row(1, "ag")]),
        ]);
        let (canary, remaining) = select_canary(&out);
        assert_eq!(canary.unwrap()["tag"], json!("b1"));
        let tags = |b: &str| {
            remaining.single_node[b].iter().map(|r| r["tag"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
        };
        assert_eq!(tags("1k1k"), ["a1", "c1"]);
        assert_eq!(tags("8k1k"), ["a8", "b8"]);
        assert_eq!(tags("agentic"), ["ag"]);
    }

    #[test]
    fn eval_rows_are_not_candidates_and_buckets_always_exist() {
        let mut eval_row = row(1, "e");
        eval_row.insert("run-eval".into(), json!(true));
        let (canary, remaining) = select_canary(&output(vec![("8k1k", vec![eval_row.clone(), row(2, "x")])]));
        assert_eq!(canary.unwrap()["tag"], json!("x"));
        assert_eq!(remaining.single_node["1k1k"], Vec::<Row>::new());
        assert_eq!(remaining.single_node["8k1k"], vec![eval_row]);
        let (none, remaining) = select_canary(&output(vec![]));
        assert!(none.is_none());
        assert_eq!(remaining.single_node.len(), 2);
    }
}
