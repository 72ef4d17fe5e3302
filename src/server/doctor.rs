//! `sweepgate doctor` (issue 24 item 7): checks a `serve` configuration before it serves, one
//! line per check, each failure with its fix. The CLI layers the settings as `serve` does and
//! calls these; an operator reads the lines, so they are plain English like every CLI message.

use std::fmt;
use std::path::Path;
use std::time::Duration;

use crate::github::app;
use crate::github::octo::{AppClients, RetryPolicy};
use crate::server::instance::{InstanceError, InstanceLock};
use crate::sweep::pool::{self, PoolProfile, Transport};
use crate::sweep::transport;

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub check: String,
    pub outcome: Result<String, Failure>,
}

/// What is wrong and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub problem: String,
    pub fix: String,
}

impl Line {
    pub fn ok(check: impl Into<String>, detail: impl Into<String>) -> Line {
        Line { check: check.into(), outcome: Ok(detail.into()) }
    }

    pub fn fail(check: impl Into<String>, problem: impl Into<String>, fix: impl Into<String>) -> Line {
        Line { check: check.into(), outcome: Err(Failure { problem: problem.into(), fix: fix.into() }) }
    }

    pub fn passed(&self) -> bool {
        self.outcome.is_ok()
    }
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One line each, whatever the texts hold (an error may quote a multi-line stderr).
        let flat = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
        match &self.outcome {
            Ok(detail) => write!(f, "ok    {}: {}", self.check, flat(detail)),
            Err(failure) => {
                write!(f, "FAIL  {}: {} -- fix: {}", self.check, flat(&failure.problem), flat(&failure.fix))
            }
        }
    }
}

/// Whether a state path is a SQLite file (its folder holds the `-wal`/`-shm` files) or a folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateKind {
    File,
    Dir,
}

/// The state at `path` (setting `setting`): its folder is writable, and no server holds its lock
/// (`server::instance`; the lock is let go at once).
pub fn state(setting: &str, path: &Path, kind: StateKind) -> Line {
    let folder = match kind {
        StateKind::File => path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")),
        StateKind::Dir => path,
    };
    let writable = std::fs::create_dir_all(folder).and_then(|()| {
        let probe = folder.join(format!(".sweepgate-doctor-{}", std::process::id()));
        std::fs::write(&probe, b"probe")?;
        std::fs::remove_file(&probe)
    });
    if let Err(e) = writable {
        return Line::fail(
            setting,
            format!("cannot write in {}: {e}", folder.display()),
            format!("create {} and give the server's user write access to it", folder.display()),
        );
    }
    match InstanceLock::acquire(path) {
        Ok(_released_at_once) => Line::ok(setting, format!("{} is writable and no server holds it", path.display())),
        Err(e @ InstanceError::Held { .. }) => Line::fail(
            setting,
            e.to_string(),
            "stop that server first, or give this configuration a state of its own (README: rolling restarts)",
        ),
        Err(e) => {
            Line::fail(setting, e.to_string(), format!("give the server's user write access to {}", folder.display()))
        }
    }
}

/// How long a pool's controller may take to answer `doctor`.
pub const POOL_TIMEOUT: Duration = Duration::from_secs(15);

/// The pool profile at `path` parses and its Slurm controller answers (per transport kind).
pub fn pool(path: &Path, timeout: Duration) -> Line {
    let check = format!("pool {}", path.display());
    let profile = match pool::load_file(path) {
        Ok(profile) => profile,
        Err(e) => {
            return Line::fail(check, e.to_string(), "correct the pool profile (`sweepgate dispatch` reads it too)")
        }
    };
    match transport::ping(&profile, timeout) {
        Ok(()) => Line::ok(check, format!("{} answers ({})", profile.cluster, reach(&profile))),
        Err(e) => Line::fail(check, format!("{} does not answer: {e}", profile.cluster), pool_fix(&profile)),
    }
}

fn reach(profile: &PoolProfile) -> String {
    match &profile.transport {
        Transport::Cli { ssh_host: None } => "sinfo on this host".to_owned(),
        Transport::Cli { ssh_host: Some(host) } => format!("sinfo on {host} over ssh"),
        Transport::Slurmrestd { url, .. } => format!("slurmrestd ping at {url}"),
    }
}

fn pool_fix(profile: &PoolProfile) -> String {
    match &profile.transport {
        Transport::Cli { ssh_host: None } => {
            "install the Slurm client on this host and check that `sinfo` answers as the server's user".to_owned()
        }
        Transport::Cli { ssh_host: Some(host) } => format!(
            "check that `ssh -o BatchMode=yes {host} sinfo` answers as the server's user (key, known_hosts, Slurm on {host})"
        ),
        Transport::Slurmrestd { url, .. } => format!(
            "check that slurmrestd runs at {url} with transport.api_version {}, and that transport.token_file holds a valid JWT",
            crate::sweep::slurmrestd::API_VERSION
        ),
    }
}

/// The sweeps' clone of the benchmark repository is a git repository.
pub fn sweep_repo(path: &Path) -> Line {
    let check = "sweep_repo";
    let fix = format!("clone the benchmark repository into {} (the server fetches PR heads into it)", path.display());
    let answer = std::process::Command::new("git")
        .arg("-C")
        .arg(path)
        .args(["rev-parse", "--git-dir"])
        .stdin(std::process::Stdio::null())
        .output();
    match answer {
        Ok(out) if out.status.success() => Line::ok(check, format!("{} is a git repository", path.display())),
        Ok(out) => Line::fail(
            check,
            format!("{} is not a git repository: {}", path.display(), String::from_utf8_lossy(&out.stderr)),
            fix,
        ),
        Err(e) => Line::fail(check, format!("git could not be run: {e}"), "install git on this host"),
    }
}

/// The public URL is an absolute http(s) URL without credentials, query or fragment, and its
/// host resolves.
pub fn public_url(url: &str) -> Line {
    let check = "public_url";
    let malformed = |why: &str| {
        Line::fail(
            check,
            format!("{url:?} {why}"),
            "set public_url to the address people reach this server at, e.g. https://sweepgate.example.com",
        )
    };
    let parsed = match reqwest::Url::parse(url) {
        Ok(parsed) => parsed,
        Err(e) => return malformed(&format!("is not a URL: {e}")),
    };
    if !matches!(parsed.scheme(), "http" | "https") {
        return malformed("is not an http(s) URL");
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return malformed("carries credentials");
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return malformed("has a query or a fragment");
    }
    let (Some(host), Some(port)) = (parsed.host_str(), parsed.port_or_known_default()) else {
        return malformed("names no host");
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match std::net::ToSocketAddrs::to_socket_addrs(&(host, port)).map(|mut addrs| addrs.next()) {
        Ok(Some(addr)) => Line::ok(check, format!("{url} ({host} resolves to {})", addr.ip())),
        Ok(None) => Line::fail(check, format!("{host} resolves to no address"), "publish a DNS record for it"),
        Err(e) => Line::fail(
            check,
            format!("{host} does not resolve: {e}"),
            "publish a DNS record for it, or set public_url to a name that resolves",
        ),
    }
}

/// The App's private key is readable and an RSA PEM key.
pub fn private_key(path: &Path) -> Line {
    let check = "private_key_file";
    let fix =
        "download a private key from the App's settings (Private keys → Generate) and point private_key_file at it";
    match std::fs::read(path) {
        Err(e) => Line::fail(check, format!("cannot read {}: {e}", path.display()), fix),
        Ok(pem) => match octocrab::EncodingKey::from_rsa_pem(&pem) {
            Ok(_) => Line::ok(check, format!("{} is an RSA private key", path.display())),
            Err(e) => Line::fail(check, format!("{} is not an RSA PEM key: {e}", path.display()), fix),
        },
    }
}

/// The App's installations, asked as the App `app_id` with its key `pem` at `api_url`, hold
/// every permission and event `serve` needs (`github::app`).
pub async fn installations(api_url: &str, app_id: u64, pem: &[u8], retry: RetryPolicy) -> Vec<Line> {
    let check = "github app";
    // Inside the runtime: the client starts its connection task as it is built.
    let listed = match AppClients::new(api_url, app_id, pem, retry, Default::default()) {
        Ok(clients) => clients.installations().await,
        Err(e) => Err(e),
    };
    let installations = match listed {
        Ok(found) => found,
        Err(e) => {
            return vec![Line::fail(
                check,
                format!("cannot list the App's installations: {e}"),
                "check that app_id and private_key_file belong to the same App, and github_api_url",
            )]
        }
    };
    if installations.is_empty() {
        return vec![Line::fail(
            check,
            "the App is installed on no account",
            "install it on the benchmark repository (App settings → Install App)",
        )];
    }
    installations
        .iter()
        .map(|i| {
            let check = format!("installation {} ({})", i.id, i.account.login);
            let gaps = app::missing(i);
            if gaps.is_empty() {
                return Line::ok(check, "grants every permission and event serve needs");
            }
            let list = |items: &[String]| if items.is_empty() { "none".to_owned() } else { items.join(", ") };
            Line::fail(
                check,
                format!("lacks permissions [{}] and events [{}]", list(&gaps.permissions), list(&gaps.events)),
                format!(
                    "grant them in the App's settings (Permissions & events; `sweepgate app-manifest` lists them all), \
                     then accept the new permissions on {}",
                    i.account.login
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_one_line_whatever_its_texts_hold() {
        let line = Line::fail("pool p", "sinfo failed:\n  line two", "fix\tit");
        assert_eq!(line.to_string(), "FAIL  pool p: sinfo failed: line two -- fix: fix it");
        assert_eq!(Line::ok("state", "fine").to_string(), "ok    state: fine");
    }

    #[test]
    fn public_urls_are_absolute_http_without_credentials_query_or_fragment() {
        assert!(public_url("http://127.0.0.1:8080").passed());
        assert!(public_url("https://localhost/").passed());
        for bad in ["not a url", "ftp://host/", "https://u:p@host/", "https://host/?a=1", "https://host/#x", "unix:/x"]
        {
            assert!(!public_url(bad).passed(), "{bad}");
        }
    }

    #[test]
    fn a_state_beneath_a_file_is_not_writable_and_a_held_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state.sqlite");
        assert!(state("state", &file, StateKind::File).passed());
        let held = InstanceLock::acquire(&file).unwrap();
        let line = state("state", &file, StateKind::File);
        assert!(line.to_string().contains("another sweepgate serve"), "{line}");
        drop(held);
        std::fs::write(dir.path().join("file"), "").unwrap();
        let line = state("sweep_state", &dir.path().join("file/sweeps"), StateKind::Dir);
        assert!(line.to_string().contains("cannot write in"), "{line}");
    }
}
