//! `sweepgate doctor` end to end (issue 24 item 7): the real binary checks a `serve`
//! configuration (its `--config` file) against a fake GitHub, fake Slurm tools on `PATH`, a fake
//! slurmrestd and real files; a good configuration passes, and each failure it reports is a test
//! of its own: the line names the problem and the fix, and the exit code is non-zero.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use support::fake_github::FakeGitHub;
use support::rsa_key;
use sweepgate::github::app::PERMISSIONS;
use sweepgate::server::instance::InstanceLock;

fn executable(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// An installation granting everything `serve` needs (`github::app`), less `without`.
fn installation(without: &[&str]) -> Value {
    let permissions: serde_json::Map<String, Value> = PERMISSIONS
        .iter()
        .filter(|p| !without.contains(&p.name))
        .map(|p| (p.name.to_owned(), json!(p.level)))
        .collect();
    let events: Vec<&str> = sweepgate::intake::event::handled_events().filter(|e| !without.contains(e)).collect();
    json!({"id": 1001, "account": {"login": "example-org"}, "permissions": permissions, "events": events})
}

/// A slurmrestd answering `ping` on 127.0.0.1.
async fn fake_slurmrestd() -> String {
    let router = axum::Router::new().route(
        "/slurm/v0.0.39/ping",
        axum::routing::get(|| async {
            axum::Json(json!({"pings": [{"hostname": "ctl", "ping": "UP"}], "errors": []}))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    url
}

/// A port nothing listens on.
fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", listener.local_addr().unwrap())
}

/// A configuration that passes every check, in a folder of its own: secrets, state, App
/// credentials against `github`, a git clone for sweeps, three pools (local CLI, CLI over ssh,
/// slurmrestd) whose tools are fakes in `bin/`, and a public URL.
struct Setup {
    dir: tempfile::TempDir,
    bin: PathBuf,
    /// `key = value` lines of the config file, replaced by [`Setup::set`].
    settings: Vec<(String, String)>,
}

impl Setup {
    /// `None` without openssl (to make the App's key).
    fn new(github: &str, rest_url: &str) -> Option<Setup> {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let key = rsa_key(d)?;
        std::fs::write(d.join("secrets"), "s3cret\n").unwrap();
        let bin = d.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        executable(&bin.join("sinfo"), "#!/bin/sh\necho gpu\n");
        // The fake ssh runs the remote command here, as a reachable host would.
        executable(
            &bin.join("ssh"),
            "#!/bin/sh\nwhile [ \"$1\" != \"--\" ]; do shift; done\nshift\nexec sh -c \"$*\"\n",
        );
        assert!(Command::new("git").args(["init", "-q"]).arg(d.join("clone")).status().unwrap().success());
        let local = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("pools/local.toml")).unwrap();
        let rest = "kind = \"slurmrestd\"\nurl = \"http://127.0.0.1:6820\"\napi_version = \"v0.0.38\"";
        for (name, transport) in [
            ("cli", "kind = \"cli\"".to_owned()),
            ("ssh", "kind = \"cli\"\nssh_host = \"login-1\"".to_owned()),
            ("rest", format!("kind = \"slurmrestd\"\nurl = \"{rest_url}\"\napi_version = \"v0.0.39\"")),
        ] {
            let text = local.replace(rest, &transport);
            std::fs::write(d.join(format!("{name}.toml")), format!("launcher = \"bench.sh\"\n{text}")).unwrap();
        }
        let quoted = |s: &str| format!("{s:?}");
        let settings = [
            ("webhook_secrets_file", quoted("secrets")),
            ("state", quoted("state/state.sqlite")),
            ("app_id", "123".to_owned()),
            ("private_key_file", quoted(&key.display().to_string())),
            ("github_api_url", quoted(github)),
            ("github_timeout_secs", "5".to_owned()),
            ("pools", "[\"cli.toml\", \"ssh.toml\", \"rest.toml\"]".to_owned()),
            ("sweep_repo", quoted("clone")),
            ("sweep_state", quoted("sweeps")),
            ("public_url", quoted("http://127.0.0.1:8080")),
        ];
        let settings = settings.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        Some(Setup { dir, bin, settings })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn set(&mut self, key: &str, value: &str) {
        self.settings.retain(|(k, _)| k != key);
        self.settings.push((key.to_owned(), value.to_owned()));
    }

    /// Runs `sweepgate doctor --config FILE`: the exit code and stdout.
    async fn doctor(&self) -> (i32, String) {
        let config = self.path("serve.toml");
        let text: String = self.settings.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
        std::fs::write(&config, text).unwrap();
        let path = format!("{}:{}", self.bin.display(), std::env::var("PATH").unwrap_or_default());
        let out = tokio::task::spawn_blocking(move || {
            Command::new(env!("CARGO_BIN_EXE_sweepgate"))
                .args(["doctor", "--config"])
                .arg(&config)
                .env("PATH", path)
                .env_remove("SWEEPGATE_CONFIG")
                .output()
                .unwrap()
        })
        .await
        .unwrap();
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// The fake GitHub with the App installed with everything, the fake slurmrestd, and a key;
/// `None` without openssl.
async fn world() -> Option<(FakeGitHub, Setup)> {
    let fake = FakeGitHub::start("unused", "nobody").await;
    fake.world().installations = vec![installation(&[])];
    let Some(setup) = Setup::new(&fake.url, &fake_slurmrestd().await) else {
        eprintln!("skipping: openssl is not available to make a test App key");
        return None;
    };
    Some((fake, setup))
}

/// The one failing line of a run, which must exit 1.
fn failing(code: i32, out: &str) -> String {
    assert_eq!(code, 1, "{out}");
    let failed: Vec<&str> = out.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert_eq!(failed.len(), 1, "one failure: {out}");
    assert!(failed[0].contains(" -- fix: "), "the line names the fix: {out}");
    failed[0].to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_good_configuration_passes_every_check() {
    let Some((_fake, setup)) = world().await else { return };
    let (code, out) = setup.doctor().await;
    assert_eq!(code, 0, "{out}");
    let checks: Vec<&str> = out.lines().map(|l| l.split(':').next().unwrap_or_default()).collect();
    assert!(out.lines().all(|l| l.starts_with("ok    ")), "{out}");
    for check in ["webhook secrets", "state", "private_key_file", "installation 1001 (example-org)", "sweep_repo"] {
        assert!(checks.iter().any(|c| c.ends_with(check)), "{check}: {out}");
    }
    assert!(out.contains("sinfo on this host"), "{out}");
    assert!(out.contains("sinfo on login-1 over ssh"), "{out}");
    assert!(out.contains("slurmrestd ping at http://127.0.0.1:"), "{out}");
    assert!(out.contains("ok    public_url: http://127.0.0.1:8080"), "{out}");
    assert!(!out.contains("s3cret"), "secrets are never printed: {out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_webhook_secrets_file_fails_the_configuration() {
    let Some((_fake, mut setup)) = world().await else { return };
    setup.set("webhook_secrets_file", "\"missing-secrets\"");
    let (code, out) = setup.doctor().await;
    let line = failing(code, &out);
    assert!(line.starts_with("FAIL  configuration: reading ") && line.contains("missing-secrets"), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_another_server_holds_fails_naming_its_pid() {
    let Some((_fake, setup)) = world().await else { return };
    let held = InstanceLock::acquire(&setup.path("state/state.sqlite")).unwrap();
    let (code, out) = setup.doctor().await;
    let line = failing(code, &out);
    let pid = std::process::id();
    assert!(line.starts_with(&format!("FAIL  state: another sweepgate serve (pid {pid}) holds")), "{line}");
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_that_cannot_be_written_fails() {
    let Some((_fake, mut setup)) = world().await else { return };
    std::fs::write(setup.path("a-file"), "").unwrap();
    setup.set("state", "\"a-file/state.sqlite\"");
    let (code, out) = setup.doctor().await;
    assert!(failing(code, &out).starts_with("FAIL  state: cannot write in "), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_state_that_cannot_be_written_fails() {
    let Some((_fake, mut setup)) = world().await else { return };
    std::fs::write(setup.path("a-file"), "").unwrap();
    setup.set("sweep_state", "\"a-file/sweeps\"");
    let (code, out) = setup.doctor().await;
    assert!(failing(code, &out).starts_with("FAIL  sweep_state: cannot write in "), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_key_that_is_not_rsa_pem_fails() {
    let Some((_fake, mut setup)) = world().await else { return };
    std::fs::write(setup.path("bad.pem"), "-----BEGIN NOTHING-----\n").unwrap();
    setup.set("private_key_file", "\"bad.pem\"");
    let (code, out) = setup.doctor().await;
    let line = failing(code, &out);
    assert!(line.starts_with("FAIL  private_key_file: ") && line.contains("is not an RSA PEM key"), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_github_cannot_be_asked_about_fails() {
    let Some((_fake, mut setup)) = world().await else { return };
    setup.set("github_api_url", &format!("{:?}", closed_port()));
    let (code, out) = setup.doctor().await;
    assert!(failing(code, &out).starts_with("FAIL  github app: cannot list the App's installations"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_installed_nowhere_fails() {
    let Some((fake, setup)) = world().await else { return };
    fake.world().installations.clear();
    let (code, out) = setup.doctor().await;
    assert!(failing(code, &out).starts_with("FAIL  github app: the App is installed on no account"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_installation_lacking_a_permission_and_an_event_names_both() {
    let Some((fake, setup)) = world().await else { return };
    fake.world().installations = vec![installation(&["checks", "merge_group"])];
    let (code, out) = setup.doctor().await;
    let line = failing(code, &out);
    assert!(
        line.starts_with(
            "FAIL  installation 1001 (example-org): lacks permissions [checks: write] and events [merge_group]"
        ),
        "{line}"
    );
    assert!(line.contains("accept the new permissions on example-org"), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_slurm_that_does_not_answer_fails() {
    let Some((_fake, setup)) = world().await else { return };
    executable(&setup.bin.join("sinfo"), "#!/bin/sh\necho 'Unable to contact slurm controller' >&2\nexit 1\n");
    let (code, out) = setup.doctor().await;
    // The ssh pool runs the same sinfo on its (fake) host: both fail, each on its own line.
    assert_eq!(code, 1, "{out}");
    let failed: Vec<&str> = out.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert_eq!(failed.len(), 2, "{out}");
    assert!(failed[0].contains("cli.toml: slurm-local does not answer") && failed[0].contains("install the Slurm"));
    assert!(failed[1].contains("ssh.toml: slurm-local does not answer") && failed[1].contains("ssh -o BatchMode=yes"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ssh_host_that_cannot_be_reached_fails() {
    let Some((_fake, setup)) = world().await else { return };
    executable(
        &setup.bin.join("ssh"),
        "#!/bin/sh\necho 'ssh: connect to host login-1: No route to host' >&2\nexit 255\n",
    );
    let (code, out) = setup.doctor().await;
    let line = failing(code, &out);
    assert!(line.contains("ssh.toml: slurm-local does not answer") && line.contains("No route to host"), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slurmrestd_that_does_not_answer_fails() {
    let Some((_fake, setup)) = world().await else { return };
    let text = std::fs::read_to_string(setup.path("rest.toml")).unwrap();
    let url = text.lines().find_map(|l| l.strip_prefix("url = ")).unwrap().trim_matches('"').to_owned();
    std::fs::write(setup.path("rest.toml"), text.replace(&url, &closed_port())).unwrap();
    let (code, out) = setup.doctor().await;
    let line = failing(code, &out);
    assert!(line.contains("rest.toml: slurm-local does not answer") && line.contains("slurmrestd runs at"), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_pool_profile_fails() {
    let Some((_fake, setup)) = world().await else { return };
    let text = std::fs::read_to_string(setup.path("cli.toml")).unwrap();
    std::fs::write(setup.path("cli.toml"), format!("unknown_key = 1\n{text}")).unwrap();
    let (code, out) = setup.doctor().await;
    let line = failing(code, &out);
    assert!(
        line.contains("cli.toml") && line.contains("unknown") && line.contains("correct the pool profile"),
        "{line}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_repo_that_is_not_a_clone_fails() {
    let Some((_fake, mut setup)) = world().await else { return };
    std::fs::create_dir_all(setup.path("empty")).unwrap();
    setup.set("sweep_repo", "\"empty\"");
    let (code, out) = setup.doctor().await;
    assert!(failing(code, &out).starts_with("FAIL  sweep_repo: "), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_or_unresolvable_public_url_fails() {
    let Some((_fake, mut setup)) = world().await else { return };
    setup.set("public_url", "\"sweepgate.example.com/prs\"");
    let (code, out) = setup.doctor().await;
    assert!(failing(code, &out).starts_with("FAIL  public_url: \"sweepgate.example.com/prs\" is not a URL"), "{out}");
    setup.set("public_url", "\"https://sweepgate.invalid\"");
    let (code, out) = setup.doctor().await;
    assert!(failing(code, &out).starts_with("FAIL  public_url: sweepgate.invalid "), "{out}");
}
