//! docs/security.md "Secret handling": the webhook secret and the GitHub token never appear in
//! `sweepgate serve`'s output (debug logs included), its HTTP answers, `/metrics`, or `--help`.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;

use sweepgate::github::webhook::sign;

const SECRET: &str = "canary-webhook-secret-7f3a9c";
const OLD_SECRET: &str = "canary-rotated-out-secret-1b2d";
const TOKEN: &str = "ghs_canaryTokenValue0123456789abcdef";

fn drain(mut from: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = from.read_to_string(&mut text);
        text
    })
}

struct Served {
    child: Child,
    url: String,
    stdout: Option<JoinHandle<String>>,
    stderr: Option<JoinHandle<String>>,
}

impl Served {
    /// Stops the server and returns everything it printed.
    fn finish(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut all = String::new();
        for handle in [self.stdout.take(), self.stderr.take()].into_iter().flatten() {
            all.push_str(&handle.join().unwrap_or_default());
        }
        all
    }
}

fn serve(outbox: &std::path::Path) -> Served {
    serve_with(outbox, &[], Some(&format!("{SECRET},{OLD_SECRET}")))
}

/// The server with extra `args`, and the secrets env var when given.
fn serve_with(outbox: &std::path::Path, args: &[&str], secrets_env: Option<&str>) -> Served {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sweepgate"));
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--workers", "1", "--outbox"])
        .arg(outbox)
        .arg("--state")
        .arg(outbox.with_file_name("state.sqlite"))
        .args(args)
        .env_remove("SWEEPGATE_WEBHOOK_SECRETS")
        .env("SWEEPGATE_LOG", "trace")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(secrets) = secrets_env {
        command.env("SWEEPGATE_WEBHOOK_SECRETS", secrets);
    }
    let mut child = command.spawn().expect("spawn sweepgate serve");
    let stdout = child.stdout.take().expect("stdout");
    let mut reader = BufReader::new(stdout);
    let mut line = String::new();
    reader.read_line(&mut line).expect("listening line");
    let url = line.trim().strip_prefix("listening on ").expect("listening line").to_string();
    let stderr = child.stderr.take().expect("stderr");
    Served { child, url: url.clone(), stdout: Some(drain(reader)), stderr: Some(drain(stderr)) }
}

async fn post(client: &reqwest::Client, url: &str, delivery: &str, signature: &str, body: &[u8]) -> (u16, String) {
    let resp = client
        .post(format!("{url}/webhook"))
        .header("x-github-event", "pull_request")
        .header("x-github-delivery", delivery)
        .header("x-hub-signature-256", signature)
        .header("content-type", "application/json")
        .body(body.to_vec())
        .send()
        .await
        .expect("post webhook");
    (resp.status().as_u16(), resp.text().await.unwrap_or_default())
}

#[tokio::test]
async fn secrets_never_appear_in_output_answers_or_metrics() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = serve(&dir.path().join("outbox.sqlite"));
    let body = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/events/pull_request.opened.json"))
        .expect("fixture event");
    let client = reqwest::Client::new();
    let mut seen = String::new();
    let (ok, text) = post(&client, &server.url, "s-1", &sign(SECRET.as_bytes(), &body), &body).await;
    assert_eq!(ok, 202, "{text}");
    seen.push_str(&text);
    // The rotated-out secret is still accepted; a wrong one is refused with an answer naming no secret.
    let (ok, text) = post(&client, &server.url, "s-2", &sign(OLD_SECRET.as_bytes(), &body), &body).await;
    assert_eq!(ok, 202, "{text}");
    let (refused, text) = post(&client, &server.url, "s-3", &sign(b"wrong", &body), &body).await;
    assert_eq!(refused, 401);
    seen.push_str(&text);
    let metrics = client.get(format!("{}/metrics", server.url)).send().await.expect("metrics");
    seen.push_str(&metrics.text().await.unwrap_or_default());
    let output = server.finish();
    assert!(
        output.contains("webhook delivery") && output.contains("unauthorized"),
        "the refusal is logged (the test sees the logs): {output}"
    );
    seen.push_str(&output);
    for secret in [SECRET, OLD_SECRET] {
        assert!(!seen.contains(secret), "secret leaked:\n{seen}");
    }
}

#[test]
fn help_hides_secret_and_token_env_values() {
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(["serve", "--help"])
        .env("SWEEPGATE_WEBHOOK_SECRETS", SECRET)
        .env("SWEEPGATE_GITHUB_TOKEN", TOKEN)
        .output()
        .expect("run serve --help");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("SWEEPGATE_WEBHOOK_SECRETS"), "{text}");
    assert!(!text.contains(SECRET) && !text.contains(TOKEN), "{text}");
}

#[test]
fn a_bad_token_setup_error_does_not_echo_the_token() {
    // The setup error names the URL, never the token.
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(["serve", "--listen", "127.0.0.1:0", "--github-api-url", "not a url"])
        .env("SWEEPGATE_WEBHOOK_SECRETS", SECRET)
        .env("SWEEPGATE_GITHUB_TOKEN", TOKEN)
        .env("SWEEPGATE_LOG", "trace")
        .output()
        .expect("run serve");
    assert!(!out.status.success(), "an API URL that is no URL is refused at start");
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!all.is_empty(), "the failure is reported");
    assert!(!all.contains(TOKEN) && !all.contains(SECRET), "{all}");
}

#[tokio::test]
async fn a_flag_secret_with_a_comma_is_one_secret_and_logs_carry_no_colour_codes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = serve_with(&dir.path().join("outbox.sqlite"), &["--webhook-secret", "Str0ng,x"], None);
    let body = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/events/pull_request.opened.json"))
        .expect("fixture event");
    let client = reqwest::Client::new();
    for part in ["x", "Str0ng"] {
        let (status, _) = post(&client, &server.url, "c-1", &sign(part.as_bytes(), &body), &body).await;
        assert_eq!(status, 401, "{part:?} alone must not authenticate");
    }
    let (status, text) = post(&client, &server.url, "c-2", &sign(b"Str0ng,x", &body), &body).await;
    assert_eq!(status, 202, "{text}");
    let output = server.finish();
    assert!(output.contains("webhook delivery"), "{output}");
    assert!(!output.contains('\u{1b}'), "stderr is a pipe: no ANSI escapes\n{output}");
}
