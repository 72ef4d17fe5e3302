//! `sweepgate serve --config FILE`: one test per precedence rule (flag > env > config file >
//! default), unknown keys named by file:line, secrets read from files and never printed, and a
//! real server configured by its file alone.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use support::*;

/// `sweepgate serve ARGS` with exactly the env vars given (nothing inherited).
fn serve(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .arg("serve")
        .args(args)
        .env_clear()
        .envs(env.iter().copied())
        .output()
        .expect("run sweepgate serve")
}

/// The `--print-config` line of `key`: (value, source).
fn setting(output: &Output, key: &str) -> (String, String) {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no {key} in\n{stdout}"));
    let (value, source) = line.rsplit_once("  # ").expect("source comment");
    (value.to_string(), source.to_string())
}

fn write_config(dir: &Path, text: &str) -> String {
    let path = dir.join("sweepgate.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

const CONFIG: &str = "webhook_secrets = [\"from-file\"]\nworkers = 8\nstatus_context = \"ctx/file\"\n";

#[test]
fn built_in_defaults_apply_when_nothing_else_sets_a_value() {
    let out = serve(&["--webhook-secret", "s", "--print-config"], &[]);
    assert_eq!(setting(&out, "workers"), ("4".into(), "default".into()));
    assert_eq!(setting(&out, "github_timeout_secs"), ("30".into(), "default".into()));
    assert_eq!(setting(&out, "state"), ("\".sweepgate/state.sqlite\"".into(), "default".into()));
    assert_eq!(setting(&out, "webhook_secrets"), ("\"<1 redacted>\"".into(), "flag".into()));
    assert_eq!(setting(&out, "preflight"), ("true".into(), "default".into()), "preflight is on by default");
}

#[test]
fn preflight_is_turned_off_by_the_file_the_env_or_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &format!("{CONFIG}preflight = false\n"));
    let out = serve(&["--config", &config, "--print-config"], &[]);
    assert_eq!(setting(&out, "preflight"), ("false".into(), "config".into()));
    let out = serve(&["--webhook-secret", "s", "--print-config"], &[("SWEEPGATE_PREFLIGHT", "false")]);
    assert_eq!(setting(&out, "preflight"), ("false".into(), "env".into()));
    let out = serve(&["--config", &config, "--preflight", "--print-config"], &[]);
    assert_eq!(setting(&out, "preflight"), ("true".into(), "flag".into()), "a bare --preflight is on");
    let out = serve(&["--webhook-secret", "s", "--preflight=false", "--print-config"], &[]);
    assert_eq!(setting(&out, "preflight"), ("false".into(), "flag".into()));
}

#[test]
fn the_config_file_beats_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &format!("{CONFIG}state = \"run/state.sqlite\"\nadvisory = true\n"));
    let out = serve(&["--config", &config, "--print-config"], &[]);
    assert_eq!(setting(&out, "workers"), ("8".into(), "config".into()));
    assert_eq!(setting(&out, "status_context"), ("\"ctx/file\"".into(), "config".into()));
    assert_eq!(setting(&out, "advisory"), ("true".into(), "config".into()));
    assert_eq!(setting(&out, "webhook_secrets").1, "config");
    // Relative paths are relative to the config file's folder.
    let state = dir.path().join("run/state.sqlite");
    assert_eq!(setting(&out, "state").0, format!("{:?}", state.to_str().unwrap()));
    assert_eq!(setting(&out, "queue_capacity"), ("4096".into(), "default".into()));
    // The file may also come from SWEEPGATE_CONFIG.
    let out = serve(&["--print-config"], &[("SWEEPGATE_CONFIG", &config)]);
    assert_eq!(setting(&out, "workers"), ("8".into(), "config".into()));
}

#[test]
fn an_env_var_beats_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), CONFIG);
    let env = [("SWEEPGATE_WORKERS", "6"), ("SWEEPGATE_WEBHOOK_SECRETS", "a,b")];
    let out = serve(&["--config", &config, "--print-config"], &env);
    assert_eq!(setting(&out, "workers"), ("6".into(), "env".into()));
    assert_eq!(setting(&out, "webhook_secrets"), ("\"<2 redacted>\"".into(), "env".into()));
    assert_eq!(setting(&out, "status_context"), ("\"ctx/file\"".into(), "config".into()));
}

#[test]
fn a_flag_beats_the_env_var_and_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), CONFIG);
    let out = serve(
        &["--config", &config, "--workers", "5", "--status-context", "ctx/flag", "--print-config"],
        &[("SWEEPGATE_WORKERS", "6")],
    );
    assert_eq!(setting(&out, "workers"), ("5".into(), "flag".into()));
    assert_eq!(setting(&out, "status_context"), ("\"ctx/flag\"".into(), "flag".into()));
}

#[test]
fn unknown_keys_and_bad_values_are_errors_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "webhook_secrets = [\"s\"]\n\nqueue_capacty = 10\n");
    let out = serve(&["--config", &config], &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("{config}:3:1: unknown field `queue_capacty`")), "{stderr}");
    let config = write_config(dir.path(), "workers = -1\n");
    let stderr = String::from_utf8_lossy(&serve(&["--config", &config], &[]).stderr).to_string();
    assert!(stderr.contains(&format!("{config}:1:11: invalid value")), "{stderr}");
}

#[test]
fn webhook_secrets_must_come_from_somewhere_and_are_never_printed() {
    let out = serve(&["--print-config"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "no webhook secret: pass --webhook-secret-file (or --webhook-secret), set SWEEPGATE_WEBHOOK_SECRETS"
        ),
        "{stderr}"
    );

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secrets"), "canary-secret-one\ncanary-secret-two\n").unwrap();
    std::fs::write(dir.path().join("token"), "ghs_canaryToken\n").unwrap();
    let config = write_config(dir.path(), "webhook_secrets_file = \"secrets\"\ngithub_token_file = \"token\"\n");
    let out = serve(&["--config", &config, "--print-config"], &[]);
    assert_eq!(setting(&out, "webhook_secrets"), ("\"<2 redacted>\"".into(), "config".into()));
    assert_eq!(setting(&out, "github_token"), ("\"<redacted>\"".into(), "config".into()));
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!all.contains("canary"), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_configured_by_its_file_alone_verifies_with_the_files_secret() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secrets"), format!("old-secret\n{SECRET}\n")).unwrap();
    let config = write_config(
        dir.path(),
        "listen = \"127.0.0.1:0\"\nwebhook_secrets_file = \"secrets\"\nstate = \"state.sqlite\"\n\
         outbox = \"outbox.sqlite\"\nworkers = 1\n",
    );
    let server = ServerProcess::spawn(&["serve", "--config", &config]).await;
    let event = pr_event("opened", 42, &[], None, "vendor-dev");
    assert_eq!(server.deliver("pull_request", "cfg-1", &event).await.0, 202);
    let body = serde_json::to_vec(&event).unwrap();
    let wrong = sweepgate::github::webhook::sign(b"from-nowhere", &body);
    assert_eq!(server.post("pull_request", "cfg-2", Some(&wrong), body).await.0, 401);
    server.wait_handled(1).await;
    assert!(dir.path().join("state.sqlite").exists() && dir.path().join("outbox.sqlite").exists());
}

#[test]
fn secret_files_on_the_command_line_and_a_whole_flag_secret() {
    let dir = tempfile::tempdir().unwrap();
    let secrets = dir.path().join("secrets");
    let token = dir.path().join("token");
    std::fs::write(&secrets, "canary-one\n\ncanary-two,with-comma\n").unwrap();
    std::fs::write(&token, "ghs_canaryToken\n").unwrap();
    let args = ["--webhook-secret-file", secrets.to_str().unwrap(), "--github-token-file", token.to_str().unwrap()];
    let out = serve(&[&args[..], &["--print-config"]].concat(), &[]);
    assert_eq!(setting(&out, "webhook_secrets"), ("\"<2 redacted>\"".into(), "flag".into()));
    assert_eq!(setting(&out, "github_token"), ("\"<redacted>\"".into(), "flag".into()));
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!all.contains("canary"), "{all}");
    // A flag's commas belong to the secret; the env var is the one place they separate.
    let out = serve(&["--webhook-secret", "Str0ng,x", "--print-config"], &[]);
    assert_eq!(setting(&out, "webhook_secrets"), ("\"<1 redacted>\"".into(), "flag".into()));
    let out = serve(&["--print-config"], &[("SWEEPGATE_WEBHOOK_SECRETS", "Str0ng,x")]);
    assert_eq!(setting(&out, "webhook_secrets"), ("\"<2 redacted>\"".into(), "env".into()));
    // A missing file is named; nothing else is shown.
    let out = serve(&["--webhook-secret-file", "/nonexistent/secrets", "--print-config"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("reading /nonexistent/secrets"), "{stderr}");
    assert_eq!(stderr.matches("(os error 2)").count(), 1, "the cause is not repeated: {stderr}");
}

#[test]
fn a_mistyped_secret_in_the_config_file_is_not_echoed() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "webhook_secrets = \"Str0ngCanary,x\"\n");
    let out = serve(&["--config", &config, "--print-config"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("{config}:1:19: webhook_secrets must be a list of strings")), "{stderr}");
    assert!(!stderr.contains("Str0ngCanary"), "{stderr}");
}

/// Issue 35 case 8: an upstream token for the cookbook reads comes from the environment or a
/// file (the config file may name one), is shown redacted, and is never a flag. A file that
/// cannot be read stops the server with its name, not its content.
#[test]
fn the_upstream_token_comes_from_the_environment_or_a_file_and_is_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.sqlite");
    let state = state.to_str().unwrap();
    let base = ["--webhook-secret", "s", "--state", state, "--print-config"];
    let out = serve(&base, &[("SWEEPGATE_UPSTREAM_TOKEN", "ghp_upstr3am")]);
    assert_eq!(setting(&out, "upstream_token"), ("\"<redacted>\"".into(), "env".into()));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("upstr3am"));

    std::fs::write(dir.path().join("upstream.token"), "ghp_fr0m_file\n").unwrap();
    let config = write_config(dir.path(), "upstream_token_file = \"upstream.token\"\n");
    let out = serve(&[&base[..], &["--config", &config]].concat(), &[]);
    let (path, source) = setting(&out, "upstream_token_file");
    assert!(path.ends_with("upstream.token\"") && source == "config", "{path} {source}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("fr0m_file"));

    let flag = serve(&["--webhook-secret", "s", "--state", state, "--upstream-token", "x", "--print-config"], &[]);
    assert!(!flag.status.success(), "there is no token flag");

    let missing = dir.path().join("absent.token");
    let out = serve(
        &["--webhook-secret", "s", "--state", state, "--listen", "127.0.0.1:0"],
        &[("SWEEPGATE_UPSTREAM_TOKEN_FILE", missing.to_str().unwrap())],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("reading the upstream token file") && err.contains("absent.token"),
        "{err}"
    );
}
