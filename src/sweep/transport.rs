//! The scheduler a pool's `[transport]` names: the Slurm CLI on this host, the same CLI on
//! `ssh_host` over ssh, or slurmrestd. Job outputs (`output_root`) are read by the server, so for
//! remote pools that directory must be shared with the server's host at the same path.

use std::time::Duration;

use super::pool::{PoolProfile, Transport};
use super::scheduler::Scheduler;
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
        Transport::Cli { ssh_host: None } => Box::new(SlurmCli::default()),
        Transport::Cli { ssh_host: Some(host) } => {
            Box::new(SlurmCli { ssh: Some(Ssh::new(host)), ..SlurmCli::default() })
        }
        Transport::Slurmrestd { url, api_version, token_file } => {
            let token = match token_file {
                None => None,
                Some(file) => {
                    let token_err = |message: String| TransportError::Token { file: file.clone(), message };
                    let text = std::fs::read_to_string(file).map_err(|e| token_err(e.to_string()))?;
                    if text.trim().is_empty() {
                        return Err(token_err("is empty".into()));
                    }
                    Some(text)
                }
            };
            Box::new(SlurmRest::new(url, api_version, token, REST_TIMEOUT)?)
        }
    })
}
