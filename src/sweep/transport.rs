//! The scheduler a pool's `[transport]` names: the Slurm CLI on this host, the same CLI on
//! `ssh_host` over ssh, or slurmrestd. Job outputs (`output_root`) are read by the server, so for
//! remote pools that directory must be shared with the server's host at the same path.

use std::time::Duration;

use super::pool::{PoolProfile, Transport};
use super::scheduler::{Scheduler, SchedulerError};
use super::slurm::{SlurmCli, Ssh};
use super::slurmrestd::{RestSetupError, SlurmRest};

/// Bounds one slurmrestd request (as the CLI's per-command timeout does).
const REST_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error(transparent)]
    Rest(#[from] RestSetupError),
    /// The message never includes the file's content.
    #[error("transport.token_file {file}: {message}")]
    Token { file: String, message: String },
}

/// The scheduler that reaches `profile`'s cluster.
pub fn scheduler(profile: &PoolProfile) -> Result<Box<dyn Scheduler + Send + Sync>, TransportError> {
    Ok(match &profile.transport {
        Transport::Cli { ssh_host } => Box::new(cli(ssh_host.as_deref(), SlurmCli::default().timeout)),
        Transport::Slurmrestd { url, api_version, token_file } => {
            Box::new(rest(url, api_version, token_file.as_deref(), REST_TIMEOUT)?)
        }
    })
}

/// Why a pool's controller did not answer [`ping`].
#[derive(Debug, thiserror::Error)]
pub enum PingError {
    #[error(transparent)]
    Setup(#[from] TransportError),
    #[error(transparent)]
    Scheduler(#[from] SchedulerError),
}

/// Whether `profile`'s Slurm controller answers within `timeout` (`sweepgate doctor`): `sinfo` on
/// this host or over ssh, or slurmrestd's `ping`.
pub fn ping(profile: &PoolProfile, timeout: Duration) -> Result<(), PingError> {
    match &profile.transport {
        Transport::Cli { ssh_host } => cli(ssh_host.as_deref(), timeout).ping()?,
        Transport::Slurmrestd { url, api_version, token_file } => {
            rest(url, api_version, token_file.as_deref(), timeout)?.ping()?
        }
    }
    Ok(())
}

fn cli(ssh_host: Option<&str>, timeout: Duration) -> SlurmCli {
    SlurmCli { ssh: ssh_host.map(Ssh::new), timeout, ..SlurmCli::default() }
}

fn rest(
    url: &str,
    api_version: &str,
    token_file: Option<&str>,
    timeout: Duration,
) -> Result<SlurmRest, TransportError> {
    let token = match token_file {
        None => None,
        Some(file) => {
            let token_err = |message: String| TransportError::Token { file: file.to_owned(), message };
            let text = std::fs::read_to_string(file).map_err(|e| token_err(e.to_string()))?;
            if text.trim().is_empty() {
                return Err(token_err("is empty".into()));
            }
            Some(text)
        }
    };
    Ok(SlurmRest::new(url, api_version, token, timeout)?)
}
