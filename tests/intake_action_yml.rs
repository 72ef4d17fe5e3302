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

#[test]
fn outputs_come_from_the_run_step_and_cargo_builds_only_without_a_release_asset() {
    let action = action();
    let outputs = action.get("outputs").and_then(Node::as_map).expect("outputs");
    let names: Vec<String> = outputs.iter().filter_map(|(k, _)| k.key_text().map(|t| t.into_owned())).collect();
    assert_eq!(names, ["decision", "verdict", "summary-path"]);
    for (name, output) in outputs {
        let name = name.key_text().unwrap();
        assert_eq!(
            output.get("value").and_then(Node::as_str),
            Some(format!("${{{{ steps.run.outputs.{name} }}}}").as_str())
        );
    }
    let steps = action.get("runs").and_then(|r| r.get("steps")).and_then(Node::as_seq).expect("steps");
    let step = |id: &str| steps.iter().find(|s| s.get("id").and_then(Node::as_str) == Some(id)).expect(id);
    let download = step("download");
    assert!(download.get("run").and_then(Node::as_str).unwrap().contains("scripts/action-download.sh"));
    let build = step("build");
    assert!(build.get("run").and_then(Node::as_str).unwrap().contains("cargo build --release --locked"));
    assert!(build.get("if").and_then(Node::as_str).unwrap().contains("steps.download.outputs.found == 'false'"));
    // Third-party code runs only pinned to a commit.
    for uses in steps.iter().filter_map(|s| s.get("uses").and_then(Node::as_str)) {
        let (_, rev) = uses.split_once('@').unwrap();
        assert!(rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit()), "{uses}");
    }
}

#[test]
fn a_missing_token_is_named_in_the_summary_an_annotation_and_the_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let (summary, output) = (dir.path().join("summary.md"), dir.path().join("output"));
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .arg("action")
        .env_remove("GITHUB_TOKEN")
        .env("GITHUB_EVENT_NAME", "pull_request_target")
        .env("GITHUB_EVENT_PATH", concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/events/pull_request.opened.json"))
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &output)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout
            .contains("::error title=sweepgate pull_request_target::GITHUB_TOKEN is not set: give the action a token"),
        "{stdout}"
    );
    let summary_text = std::fs::read_to_string(&summary).unwrap();
    assert!(
        summary_text.starts_with("### sweepgate: pull_request_target\n\n❌ GITHUB_TOKEN is not set"),
        "{summary_text}"
    );
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        format!("decision=none\nverdict=none\nsummary-path={}\n", summary.display())
    );
    assert!(!String::from_utf8_lossy(&run.stderr).contains("--token"), "not clap's flag message");
}
