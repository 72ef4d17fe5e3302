use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use anyhow::Context;
use secrecy::SecretString;
use sweepgate::evidence::collect::{collect, CollectLimits, CollectRequest, UpstreamClient, UpstreamConfig};
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
    /// Bundle directory to write.
    #[arg(long)]
    pub out: PathBuf,
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
    pub fn config(&self) -> UpstreamConfig {
        let mut config = UpstreamConfig {
            github_api: self.upstream_github_api.clone(),
            huggingface: self.huggingface_url.clone(),
            ..UpstreamConfig::default()
        };
        config.registries.extend(self.registries.iter().cloned());
        config
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
    #[command(flatten)]
    pub upstream: UpstreamArgs,
}

impl VerifierArgs {
    pub fn verify_config(&self) -> VerifyConfig {
        VerifyConfig {
            status_context: (!self.advisory).then(|| self.signoff_status_context.clone()),
            reviewers: self.reviewers.clone(),
            upstream: self.upstream.config(),
            ..VerifyConfig::default()
        }
    }
}

pub fn run(args: &CollectArgs) -> anyhow::Result<ExitCode> {
    let repo = RepoRef::parse(&args.repo)?;
    let signoff = SignoffUrl::parse(&args.signoff)?;
    let review_date = args.review_date.unwrap_or_else(|| chrono::Utc::now().date_naive());
    let request = CollectRequest { repo, pr: args.pr, signoff, review_date };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let metrics = Arc::new(ApiMetrics::default());
        let token = SecretString::from(args.token.clone());
        let gh = OctoGitHub::with_token(&args.api_url, token, RetryPolicy::default(), metrics.clone())?;
        let upstream = UpstreamClient::new(args.upstream.config())?;
        let evidence = collect(&gh, &upstream, &request, &CollectLimits::default()).await?;
        write_bundle(&args.out, &evidence).with_context(|| format!("writing the bundle to {}", args.out.display()))?;
        eprintln!(
            "collected PR #{} at {} into {}: {} GitHub API requests, {} upstream requests",
            request.pr,
            evidence.pull_request.head_sha,
            args.out.display(),
            metrics.calls.load(Ordering::Relaxed),
            upstream.requests()
        );
        anyhow::Ok(ExitCode::SUCCESS)
    })
}
