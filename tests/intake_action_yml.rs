//! `action.yml`: a composite action whose inputs are documented and reach shell steps only
//! through the environment.

use sweepgate::yaml::{self, Node};

fn action() -> Node {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/action.yml");
    yaml::parse(&std::fs::read_to_string(path).unwrap(), "action.yml").unwrap()
}

#[test]
fn composite_action_with_documented_inputs() {
    let action = action();
    assert_eq!(action.get("runs").and_then(|r| r.get("using")).and_then(Node::as_str), Some("composite"));
    let inputs = action.get("inputs").and_then(Node::as_map).expect("inputs");
    for (name, input) in inputs {
        assert!(
            input.get("description").and_then(Node::as_str).is_some_and(|d| !d.is_empty()),
            "{:?}",
            name.key_text()
        );
    }
}

#[test]
fn no_expression_is_interpolated_into_a_script() {
    let action = action();
    let steps = action.get("runs").and_then(|r| r.get("steps")).and_then(Node::as_seq).expect("steps");
    for step in steps {
        let run = step.get("run").and_then(Node::as_str).unwrap_or("");
        assert!(!run.contains("${{"), "expression in a run script: {run}");
    }
    let last = steps.last().unwrap();
    assert!(last.get("run").and_then(Node::as_str).unwrap().ends_with("action"));
    let env = last.get("env").and_then(Node::as_map).unwrap();
    assert!(env.iter().any(|(k, _)| k.key_text().as_deref() == Some("GITHUB_TOKEN")));
}
