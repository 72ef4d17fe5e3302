//! `sweepgate doctor`: checks a `serve` configuration (the same flags, variables and `--config`
//! file, layered the same way) and prints one line per check with the fix; non-zero on any
//! failure. The checks are `server::doctor`'s.

use std::process::ExitCode;
use std::time::Duration;

use clap::ArgMatches;
use sweepgate::github::octo::RetryPolicy;
use sweepgate::server::config::redact_credentials;
use sweepgate::server::doctor::{self, Line, StateKind};

/// Check a `serve` configuration before serving: secrets readable, state writable and not
/// locked, pools reachable, public URL, and (with App credentials) the App's installations.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub serve: super::serve::ServeArgs,
}

pub fn run(args: &DoctorArgs, matches: &ArgMatches) -> anyhow::Result<ExitCode> {
    let lines = match super::serve::layered(&args.serve, matches) {
        Ok((settings, _)) => checks(&settings)?,
        Err(e) => vec![Line::fail(
            "configuration",
            format!("{e:#}"),
            "correct the setting it names (`sweepgate serve --print-config` shows each setting and where it came from)",
        )],
    };
    for line in &lines {
        println!("{}", redact_credentials(&line.to_string()));
    }
    Ok(if lines.iter().all(Line::passed) { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn checks(a: &super::serve::ServeArgs) -> anyhow::Result<Vec<Line>> {
    let mut lines = vec![Line::ok("webhook secrets", format!("{} readable", a.webhook_secrets.len()))];
    lines.push(doctor::state("state", &a.state, StateKind::File));
    match (a.app_id, &a.private_key_file, &a.github_token) {
        (Some(app_id), Some(key_file), _) => {
            let key = doctor::private_key(key_file);
            let readable = key.passed();
            lines.push(key);
            if readable {
                let pem = std::fs::read(key_file)?;
                let retry = RetryPolicy {
                    max_retries: 0,
                    request_timeout: Duration::from_secs(a.github_timeout_secs),
                    ..RetryPolicy::default()
                };
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
                lines.extend(runtime.block_on(doctor::installations(&a.github_api_url, app_id, &pem, retry)));
            }
        }
        (_, _, Some(_)) => lines.push(Line::ok(
            "github",
            "a token: its permissions are its owner's (doctor checks the installations of an App)",
        )),
        _ => lines.push(Line::ok(
            "github",
            format!("no credentials: a dry run; what would be posted goes to {}", a.outbox.display()),
        )),
    }
    if !a.pools.is_empty() {
        if let Some(repo) = &a.sweep_repo {
            lines.push(doctor::sweep_repo(repo));
        }
        lines.push(doctor::state("sweep_state", &a.sweep_state, StateKind::Dir));
        lines.extend(a.pools.iter().map(|p| doctor::pool(p, doctor::POOL_TIMEOUT)));
    }
    if let Some(url) = &a.public_url {
        lines.push(doctor::public_url(url));
    }
    Ok(lines)
}
