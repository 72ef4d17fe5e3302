//! Shared helpers of the end-to-end tests: the fake GitHub, the real `sweepgate serve` process,
//! signed webhook deliveries, and waiting on the server's own metrics.

#![allow(dead_code)] // each test binary uses a different part

pub mod fake_github;
pub mod fake_upstream;
pub mod fixture_repo;
pub mod history;
pub mod serve_bundle;
pub mod slurm_sweep;
pub mod today_tree;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use sweepgate::github::webhook::sign;

pub const SECRET: &str = "test-secret";
pub const TOKEN: &str = "ghs_test_token";
pub const BOT: &str = "sweepgate[bot]";
pub const REPO: &str = "example-org/bench-repo";

/// `sweepgate action` on the event `name` whose payload is at `event_path`, against the fake
/// GitHub at `fake_url`, every upstream (GitHub API, Hugging Face, registries) at `upstream_url`.
pub fn action_command(fake_url: &str, upstream_url: &str, name: &str, event_path: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sweepgate"));
    command
        .arg("action")
        .args(["--upstream-github-api", upstream_url, "--huggingface-url", upstream_url])
        .args(["--registry", &format!("docker.io={upstream_url}"), "--registry", &format!("nvcr.io={upstream_url}")])
        .args(["--upstream-allow-host", upstream_url.trim_start_matches("http://"), "--upstream-allow-private"])
        .env("GITHUB_EVENT_NAME", name)
        .env("GITHUB_EVENT_PATH", event_path)
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_API_URL", fake_url)
        .env("SWEEPGATE_BOT_LOGIN", BOT);
    command
}

/// A new 2048-bit RSA key `dir/app.pem` for a test GitHub App; `None` without openssl.
pub fn rsa_key(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let path = dir.join("app.pem");
    let ok = Command::new("openssl")
        .args(["genrsa", "-traditional", "-out"])
        .arg(&path)
        .arg("2048")
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(path)
}

/// `sweepgate serve` as a child process; killed when dropped.
pub struct ServerProcess {
    pub url: String,
    child: Child,
    /// Holds the state file unless the test passed its own `--state`.
    _state_dir: tempfile::TempDir,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl ServerProcess {
    /// Starts the server with `args` after the common ones; waits for its listening line.
    /// Each server gets a fresh state file unless `args` name one (`--state`).
    pub async fn start(args: &[&str]) -> ServerProcess {
        let state_dir = tempfile::tempdir().expect("state folder");
        let state = state_dir.path().join("state.sqlite");
        let mut all = vec!["serve", "--listen", "127.0.0.1:0", "--webhook-secret", SECRET, "--workers", "2"];
        if !args.contains(&"--state") {
            all.extend(["--state", state.to_str().expect("UTF-8 temp path")]);
        }
        all.extend(args);
        ServerProcess::spawn_holding(&all, state_dir).await
    }

    /// Runs the binary with exactly `args` (e.g. `serve --config FILE`).
    pub async fn spawn(args: &[&str]) -> ServerProcess {
        ServerProcess::spawn_holding(args, tempfile::tempdir().expect("temp folder")).await
    }

    async fn spawn_holding(args: &[&str], state_dir: tempfile::TempDir) -> ServerProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
            .args(args)
            // `TEST_SERVER_LOG=info cargo test …` shows each event's handled actions when debugging.
            .env("SWEEPGATE_LOG", std::env::var("TEST_SERVER_LOG").unwrap_or_else(|_| "warn".into()))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn sweepgate serve");
        let stdout = child.stdout.take().expect("stdout");
        let line = tokio::task::spawn_blocking(move || {
            let mut line = String::new();
            BufReader::new(stdout).read_line(&mut line).expect("read listening line");
            line
        })
        .await
        .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        ServerProcess { url, child, _state_dir: state_dir }
    }

    /// The server's process id (for /proc measurements).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Server with a token, talking to `fake`.
    pub async fn with_token(fake_url: &str) -> ServerProcess {
        ServerProcess::start(&["--github-token", TOKEN, "--github-api-url", fake_url, "--bot-login", BOT]).await
    }

    pub async fn deliver(&self, event: &str, delivery: &str, payload: &serde_json::Value) -> (u16, String) {
        let body = serde_json::to_vec(payload).unwrap();
        let signature = sign(SECRET.as_bytes(), &body);
        self.post(event, delivery, Some(&signature), body).await
    }

    pub async fn post(&self, event: &str, delivery: &str, signature: Option<&str>, body: Vec<u8>) -> (u16, String) {
        let mut request = reqwest::Client::new()
            .post(format!("{}/webhook", self.url))
            .header("x-github-event", event)
            .header("x-github-delivery", delivery)
            .body(body);
        if let Some(signature) = signature {
            request = request.header("x-hub-signature-256", signature);
        }
        let response = request.send().await.expect("POST /webhook");
        (response.status().as_u16(), response.text().await.unwrap_or_default())
    }

    /// Stops the server (as a restart would) and waits until it has exited.
    pub fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends SIGTERM and waits (bounded by `limit`) for the exit: (exit code, time taken);
    /// a server still running at the limit is killed and reported as `None`.
    pub fn terminate(mut self, limit: Duration) -> (Option<i32>, Duration) {
        let started = std::time::Instant::now();
        let sent = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        assert!(sent.is_ok_and(|s| s.success()), "SIGTERM sent");
        while started.elapsed() < limit {
            if let Ok(Some(status)) = self.child.try_wait() {
                return (status.code(), started.elapsed());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        (None, started.elapsed())
    }

    pub async fn metrics(&self) -> String {
        reqwest::get(format!("{}/metrics", self.url)).await.unwrap().text().await.unwrap()
    }

    /// Value of one metric line (`name{labels}`), 0 when absent.
    pub async fn metric(&self, series: &str) -> u64 {
        let text = self.metrics().await;
        text.lines()
            .find_map(|l| l.strip_prefix(series).and_then(|rest| rest.trim().parse::<f64>().ok()))
            .map_or(0, |v| v as u64)
    }

    /// Waits (bounded) until the server has processed `n` events in total.
    pub async fn wait_handled(&self, n: u64) {
        for _ in 0..1000 {
            let ok = self.metric("sweepgate_events_handled_total{result=\"ok\"}").await;
            let failed = self.metric("sweepgate_events_handled_total{result=\"failed\"}").await;
            if ok + failed >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("server did not process {n} events:\n{}", self.metrics().await);
    }
}

pub fn head_sha() -> String {
    "3f1c2a9b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a".into()
}

/// A `pull_request` payload for PR `number` of [`REPO`].
pub fn pr_event(action: &str, number: u64, labels: &[&str], label: Option<&str>, sender: &str) -> serde_json::Value {
    let mut payload = serde_json::json!({
        "action": action,
        "repository": {"full_name": REPO},
        "installation": {"id": 1001},
        "sender": {"login": sender, "type": "User"},
        "pull_request": {
            "number": number, "state": "open", "draft": false, "title": "Add a sweep",
            "head": {"sha": head_sha(), "ref": format!("branch-{number}"), "repo": {"full_name": REPO}},
            "base": {"sha": "b".repeat(40), "ref": "main", "repo": {"full_name": REPO, "default_branch": "main"}},
            "labels": labels.iter().map(|l| serde_json::json!({"name": l})).collect::<Vec<_>>(),
            "user": {"login": "vendor-dev", "type": "User"}
        }
    });
    if let Some(label) = label {
        payload["label"] = serde_json::json!({"name": label});
    }
    payload
}

/// An `issue_comment` payload (action `created`, or `edited` with the previous body).
pub fn comment_event(
    number: u64,
    id: u64,
    login: &str,
    association: &str,
    body: &str,
    previous: Option<&str>,
) -> serde_json::Value {
    let mut payload = serde_json::json!({
        "action": if previous.is_some() { "edited" } else { "created" },
        "repository": {"full_name": REPO},
        "installation": {"id": 1001},
        "issue": {"number": number, "pull_request": {"url": "x"}},
        "sender": {"login": login, "type": "User"},
        "comment": {
            "id": id, "body": body, "user": {"login": login, "type": "User"},
            "author_association": association,
            "created_at": fake_github::TIME, "updated_at": fake_github::TIME
        }
    });
    if let Some(previous) = previous {
        payload["changes"] = serde_json::json!({"body": {"from": previous}});
    }
    payload
}

/// Every fixture bundle directory (`fixtures/bundles/*/evidence.json`), sorted.
pub fn fixture_bundles() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bundles");
    let mut dirs: Vec<std::path::PathBuf> = std::fs::read_dir(&root)
        .expect("fixtures/bundles exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("evidence.json").is_file())
        .collect();
    dirs.sort();
    dirs
}
