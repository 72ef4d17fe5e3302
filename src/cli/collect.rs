use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use anyhow::Context;
use secrecy::SecretString;
use sweepgate::evidence::collect::upstream::DEFAULT_ALLOWED_HOSTS;
use sweepgate::evidence::collect::{
    collect_with_progress, CollectLimits, CollectRequest, DownloadProgress, UpstreamClient, UpstreamConfig,
};
use sweepgate::evidence::write_bundle;
use sweepgate::github::octo::{OctoGitHub, RetryPolicy};
use sweepgate::github::{ApiMetrics, RepoRef};
use sweepgate::intake::signoff::SignoffUrl;
use sweepgate::server::handlers::VerifyConfig;

/// Gather the Evidence of one sign-off through the GitHub API and upstream sources into a
/// bundle directory (then: `sweepgate verify --bundle DIR`).
#[derive(Debug, clap::Args)]
pub struct CollectArgs {
    /// Repository under verification, `owner/name`.
    #[arg(long)]
    pub repo: String,
    #[arg(long)]
    pub pr: u64,
    /// Sign-off URL: `https://github.com/<repo>/pull/<n>#issuecomment-<id>` (or review kinds).
    #[arg(long)]
    pub signoff: String,
    /// Bundle directory to write. It must not exist or be empty, unless --force.
    #[arg(long)]
    pub out: PathBuf,
    /// Replace a non-empty --out (the old contents are removed only once the new bundle is
    /// complete).
    #[arg(long)]
    pub force: bool,
    /// Global bound on bytes downloaded per verification (tarballs, artifacts, job logs).
    #[arg(long, default_value_t = CollectLimits::default().max_download_bytes)]
    pub max_download_bytes: u64,
    /// Global bound on bytes unpacked from artifacts per verification.
    #[arg(long, default_value_t = CollectLimits::default().max_unpacked_bytes)]
    pub max_unpacked_bytes: u64,
    #[arg(long, env = "GITHUB_API_URL", default_value = "https://api.github.com")]
    pub api_url: String,
    #[arg(long, env = "GITHUB_TOKEN", hide_env_values = true)]
    pub token: String,
    /// Review date (UTC) recorded in the bundle; default today.
    #[arg(long)]
    pub review_date: Option<chrono::NaiveDate>,
    #[command(flatten)]
    pub upstream: UpstreamArgs,
}

/// Where upstream facts come from (overridable for mirrors and tests).
#[derive(Debug, Clone, clap::Args)]
pub struct UpstreamArgs {
    /// GitHub REST base for upstream recipe PRs.
    #[arg(long, env = "SWEEPGATE_UPSTREAM_GITHUB_API", default_value = "https://api.github.com")]
    pub upstream_github_api: String,
    #[arg(long, env = "SWEEPGATE_HUGGINGFACE_URL", default_value = "https://huggingface.co")]
    pub huggingface_url: String,
    /// Registry base URL override, `NAME=URL` (repeatable), e.g. `docker.io=https://mirror`.
    #[arg(long = "registry", value_parser = parse_registry)]
    pub registries: Vec<(String, String)>,
    /// Another upstream host that may be contacted, `NAME` or `NAME:PORT` (repeatable, added to
    /// api.github.com, huggingface.co, registry-1.docker.io, auth.docker.io, nvcr.io, ghcr.io).
    /// Every other host, including a registry a PR names, is refused.
    #[arg(long = "upstream-allow-host", env = "SWEEPGATE_UPSTREAM_ALLOW_HOSTS", value_delimiter = ',')]
    pub allow_hosts: Vec<String>,
    /// Allow upstream hosts on loopback, private or link-local addresses (local mirrors, tests).
    #[arg(long = "upstream-allow-private", env = "SWEEPGATE_UPSTREAM_ALLOW_PRIVATE")]
    pub allow_private: bool,
    /// File holding a token for upstream GitHub reads (cookbook PRs and their files): anonymous
    /// reads share 60 requests an hour per address. The token itself comes from this file or
    /// from `SWEEPGATE_UPSTREAM_TOKEN`, never from a flag (a flag shows in `ps`).
    #[arg(long, env = "SWEEPGATE_UPSTREAM_TOKEN_FILE")]
    pub upstream_token_file: Option<std::path::PathBuf>,
    /// `SWEEPGATE_UPSTREAM_TOKEN`, read from the environment only.
    #[arg(skip = std::env::var("SWEEPGATE_UPSTREAM_TOKEN").ok().filter(|t| !t.trim().is_empty()))]
    pub upstream_token: Option<String>,
}

fn parse_registry(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, url)) if !name.is_empty() && (url.starts_with("https://") || url.starts_with("http://")) => {
            Ok((name.to_string(), url.to_string()))
        }
        _ => Err(format!("{text:?}: expected NAME=URL, e.g. docker.io=https://registry-1.docker.io")),
    }
}

impl UpstreamArgs {
    /// The upstream client's settings; an upstream token file that cannot be read is an error
    /// naming the file (never its content).
    pub fn config(&self) -> anyhow::Result<UpstreamConfig> {
        let github_token = match (&self.upstream_token_file, &self.upstream_token) {
            (Some(_), Some(_)) => {
                anyhow::bail!("set SWEEPGATE_UPSTREAM_TOKEN or an upstream token file, not both")
            }
            (Some(path), None) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| anyhow::anyhow!("reading the upstream token file {}: {e}", path.display()))?;
                Some(text.trim().to_owned()).filter(|t| !t.is_empty())
            }
            (None, token) => token.as_ref().map(|t| t.trim().to_owned()),
        };
        let mut config = UpstreamConfig {
            github_api: self.upstream_github_api.clone(),
            github_token,
            huggingface: self.huggingface_url.clone(),
            ..UpstreamConfig::default()
        };
        config.registries.extend(self.registries.iter().cloned());
        config.allowed_hosts = DEFAULT_ALLOWED_HOSTS.iter().map(|h| h.to_string()).collect();
        config.allowed_hosts.extend(self.allow_hosts.iter().map(|h| h.trim().to_ascii_lowercase()));
        config.allow_private_addresses = self.allow_private;
        Ok(config)
    }
}

/// The sign-off verifier's settings in `serve` and `action`.
#[derive(Debug, Clone, clap::Args)]
pub struct VerifierArgs {
    /// Commit-status context of the sign-off verdict.
    #[arg(long, env = "SWEEPGATE_SIGNOFF_STATUS_CONTEXT", default_value = "codeowner-signoff-verify")]
    pub signoff_status_context: String,
    /// Advisory mode: post verdict comments but no commit status (spec 30 §3.2).
    #[arg(long, env = "SWEEPGATE_ADVISORY")]
    pub advisory: bool,
    /// Handles asked to review WARN rows (repeatable), e.g. --reviewer @maint-a.
    #[arg(long = "reviewer", env = "SWEEPGATE_REVIEWERS", value_delimiter = ',')]
    pub reviewers: Vec<String>,
    /// Preflight for authors, on by default: on each push of a PR that touches benchmark files,
    /// the check run `sweepgate/preflight` lists what would FAIL before sign-off (one collection
    /// per head). `--preflight=false` (or `SWEEPGATE_PREFLIGHT=false`) turns it off.
    #[arg(long, env = "SWEEPGATE_PREFLIGHT", default_value_t = true, action = clap::ArgAction::Set,
          num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub preflight: bool,
    /// A protected target branch that holds its own policy (repeatable, e.g. `--policy-branch
    /// release`): a PR that targets it is judged with the CODEOWNERS and policy files at its
    /// tip. A PR that targets any other branch is judged with the default branch's policy.
    /// Name only branches that authors cannot push to.
    #[arg(long = "policy-branch", env = "SWEEPGATE_POLICY_BRANCHES", value_delimiter = ',')]
    pub policy_branches: Vec<String>,
    #[command(flatten)]
    pub upstream: UpstreamArgs,
}

impl VerifierArgs {
    pub fn verify_config(&self) -> anyhow::Result<VerifyConfig> {
        Ok(VerifyConfig {
            status_context: (!self.advisory).then(|| self.signoff_status_context.clone()),
            reviewers: self.reviewers.clone(),
            upstream: self.upstream.config()?,
            preflight: self.preflight,
            limits: CollectLimits { policy_branches: self.policy_branches.clone(), ..CollectLimits::default() },
            ..VerifyConfig::default()
        })
    }
}

pub fn run(args: &CollectArgs) -> anyhow::Result<ExitCode> {
    let repo = RepoRef::parse(&args.repo)?;
    let signoff = SignoffUrl::parse(&args.signoff)?;
    let review_date = args.review_date.unwrap_or_else(|| chrono::Utc::now().date_naive());
    let request = CollectRequest { repo, pr: args.pr, signoff, review_date };
    // Refused before any request: a reused directory kept stale files that changed a verdict.
    if !args.force && is_non_empty_dir(&args.out)? {
        anyhow::bail!(
            "{} exists and is not empty; pass --force to replace it, or choose a new --out",
            args.out.display()
        );
    }
    let limits = CollectLimits {
        max_download_bytes: args.max_download_bytes,
        max_unpacked_bytes: args.max_unpacked_bytes,
        ..CollectLimits::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let metrics = Arc::new(ApiMetrics::default());
        let token = SecretString::from(args.token.clone());
        let gh = OctoGitHub::with_token(&args.api_url, token, RetryPolicy::default(), metrics.clone())?;
        let upstream = UpstreamClient::new(args.upstream.config()?)?;
        // A progress bar only on a terminal (as `dispatch` does); logs get the summary line.
        let tty = std::io::stderr().is_terminal();
        let last = std::sync::Mutex::new(DownloadProgress { done: 0, total: 0, bytes: 0 });
        let show = |p: DownloadProgress| {
            if let Ok(mut last) = last.lock() {
                *last = p;
            }
            if tty {
                let _ = write!(std::io::stderr().lock(), "\r\x1b[2K{}", progress_line(p));
            }
        };
        let collected = collect_with_progress(&gh, &upstream, &request, &limits, &show).await;
        let last = last.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
        if tty && last.total > 0 {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
        let evidence = collected?;
        write_into_place(&args.out, &evidence)?;
        eprintln!(
            "collected PR #{} at {} into {}: {} GitHub API requests, {} upstream requests, {} of {} artifacts downloaded ({} bytes)",
            request.pr,
            evidence.pull_request.head_sha,
            args.out.display(),
            metrics.calls.load(Ordering::Relaxed),
            upstream.requests(),
            last.done,
            last.total,
            last.bytes
        );
        anyhow::Ok(ExitCode::SUCCESS)
    })
}

/// `[#######-------] artifacts 12/31 · 3.4 MiB`: the terminal progress line.
fn progress_line(p: DownloadProgress) -> String {
    format!(
        "{} artifacts {}/{} · {:.1} MiB",
        super::progress_bar(p.done, p.total, 24, '-'),
        p.done,
        p.total,
        p.bytes as f64 / (1024.0 * 1024.0)
    )
}

fn is_non_empty_dir(path: &Path) -> anyhow::Result<bool> {
    match std::fs::read_dir(path) {
        Ok(mut entries) => Ok(entries.next().is_some()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(err) if err.kind() == std::io::ErrorKind::NotADirectory => {
            anyhow::bail!("{} exists and is not a directory", path.display())
        }
        Err(err) => Err(err).with_context(|| format!("reading {}", path.display())),
    }
}

/// Writes the bundle into a fresh directory next to `out`, then renames it into place, so
/// `out` is either the old bundle or the complete new one, never a mix.
fn write_into_place(out: &Path, evidence: &sweepgate::evidence::Evidence) -> anyhow::Result<()> {
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).with_context(|| format!("creating {}", parent.display()))?;
    let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "bundle".into());
    let nonce = format!("{}-{}", std::process::id(), chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default());
    let fresh = parent.join(format!(".{name}.new-{nonce}"));
    let written = write_bundle(&fresh, evidence).with_context(|| format!("writing the bundle to {}", fresh.display()));
    if let Err(err) = written {
        let _ = std::fs::remove_dir_all(&fresh);
        return Err(err);
    }
    let old = parent.join(format!(".{name}.old-{nonce}"));
    let replaced = out.exists();
    if replaced {
        std::fs::rename(out, &old).with_context(|| format!("moving the old {} aside", out.display()))?;
    }
    if let Err(err) = std::fs::rename(&fresh, out) {
        if replaced {
            let _ = std::fs::rename(&old, out);
        }
        let _ = std::fs::remove_dir_all(&fresh);
        return Err(err).with_context(|| format!("renaming the new bundle to {}", out.display()));
    }
    if replaced {
        std::fs::remove_dir_all(&old).with_context(|| format!("removing the old bundle {}", old.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_counts_artifacts_and_bytes() {
        let line = progress_line(DownloadProgress { done: 12, total: 24, bytes: 3 << 20 });
        assert_eq!(line, format!("[{}{}] artifacts 12/24 · 3.0 MiB", "#".repeat(12), "-".repeat(12)));
        let none = progress_line(DownloadProgress { done: 0, total: 0, bytes: 0 });
        assert_eq!(none, format!("[{}] artifacts 0/0 · 0.0 MiB", "-".repeat(24)));
    }
}
