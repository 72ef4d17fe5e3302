//! GitHub's own example payloads (fixtures/events/real, from `@octokit/webhooks-examples`) for
//! every subscribed event, plus the shapes GitHub's schema allows that the examples lack (null
//! accounts, no `sender`, a form-encoded delivery), delivered signed to the real `sweepgate
//! serve`: every row answers 2xx. GitHub never retries a 4xx, so a refused real shape is a lost
//! event. The Action answers a `workflow_dispatch` without our input with exit 0.

mod support;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::fake_github::FakeGitHub;
use support::{ServerProcess, SECRET, TOKEN};
use sweepgate::github::webhook::sign;

fn real_payloads() -> Vec<(String, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/events/real");
    let mut rows: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .expect("fixtures/events/real")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem.split('.').next().unwrap().to_owned(), p)
        })
        .collect();
    rows.sort();
    rows
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("read payload")).expect("payload is JSON")
}

/// `application/x-www-form-urlencoded`: `payload=<urlencoded JSON>`, as GitHub sends it.
fn form_encoded(payload: &Value) -> Vec<u8> {
    let mut form = String::from("payload=");
    for b in serde_json::to_vec(payload).unwrap() {
        match b {
            b' ' => form.push('+'),
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => form.push(b as char),
            _ => form.push_str(&format!("%{b:02X}")),
        }
    }
    form.into_bytes()
}

async fn post_form(server: &ServerProcess, event: &str, delivery: &str, body: Vec<u8>) -> u16 {
    let signature = sign(SECRET.as_bytes(), &body);
    reqwest::Client::new()
        .post(format!("{}/webhook", server.url))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("x-github-event", event)
        .header("x-github-delivery", delivery)
        .header("x-hub-signature-256", signature)
        .body(body)
        .send()
        .await
        .expect("POST /webhook")
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_real_payload_shape_is_accepted() {
    let fake = FakeGitHub::start(TOKEN, support::BOT).await;
    let server = ServerProcess::with_token(&fake.url).await;
    let rows = real_payloads();
    assert!(rows.len() >= 25, "one example per event and action: {rows:?}");
    for name in [
        "pull_request",
        "issue_comment",
        "pull_request_review",
        "pull_request_review_comment",
        "merge_group",
        "ping",
        "workflow_dispatch",
    ] {
        assert!(rows.iter().any(|(event, _)| event == name), "no example of {name}");
    }
    let mut failures = Vec::new();
    for (i, (event, path)) in rows.iter().enumerate() {
        let payload = read(path);
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut variants = vec![(file.clone(), payload.clone())];
        let mut no_sender = payload.clone();
        if no_sender.as_object_mut().and_then(|o| o.remove("sender")).is_some() {
            variants.push((format!("{file} without sender"), no_sender));
        }
        for account in [&["comment", "user"][..], &["pull_request", "user"], &["review", "user"]] {
            let mut nulled = payload.clone();
            if let Some(user) = nulled.get_mut(account[0]).and_then(|o| o.get_mut(account[1])) {
                *user = Value::Null;
                variants.push((format!("{file} with {}.user null", account[0]), nulled));
            }
        }
        for (j, (row, variant)) in variants.iter().enumerate() {
            let (status, body) = server.deliver(event, &format!("real-{i}-{j}"), variant).await;
            if !(200..300).contains(&status) {
                failures.push(format!("{row}: {status} {}", body.trim()));
            }
        }
        let status = post_form(&server, event, &format!("real-{i}-form"), form_encoded(&payload)).await;
        if !(200..300).contains(&status) {
            failures.push(format!("{file} form-encoded: {status}"));
        }
    }
    assert!(failures.is_empty(), "real shapes refused:\n{}", failures.join("\n"));
    // Refused rows would show here too; accepted ones are never counted as bad requests.
    let metrics = server.metrics().await;
    assert!(!metrics.contains("outcome=\"bad_request\""), "{metrics}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_encoded_comment_is_decoded_and_handled() {
    let fake = FakeGitHub::start(TOKEN, support::BOT).await;
    fake.add_pull(support::REPO, 42, &support::head_sha(), &[], &[("perf-changelog.yaml", 3)]);
    let server = ServerProcess::with_token(&fake.url).await;
    let id = fake.add_comment(support::REPO, 42, "vendor-dev", "NONE", "/use 12");
    let comment = support::comment_event(42, id, "vendor-dev", "NONE", "/use 12", None);
    assert_eq!(post_form(&server, "issue_comment", "form-1", form_encoded(&comment)).await, 202);
    server.wait_handled(1).await;
    // The unauthorized command got its answer: the payload was read, not just acknowledged.
    let w = fake.world();
    assert!(w.reactions.iter().any(|(c, content, ..)| *c == id && content == "-1"), "{:#?}", w.reactions);
    assert!(w.check_runs.iter().any(|(_, c)| c["name"] == "sweepgate/reuse"), "{:#?}", w.check_runs);
}

#[test]
fn the_action_exits_0_on_a_dispatch_without_our_input() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/events/real/workflow_dispatch.json");
    assert_eq!(read(&path)["inputs"], json!({}));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .arg("action")
        .env("GITHUB_EVENT_NAME", "workflow_dispatch")
        .env("GITHUB_EVENT_PATH", &path)
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_API_URL", "http://127.0.0.1:9")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .expect("run sweepgate action");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("workflow_dispatch without a comment_url input"), "{stdout}");
}
