use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use secrecy::SecretString;
use sweepgate::github::octo::{OctoGitHub, RetryPolicy};
use sweepgate::github::ApiMetrics;
use sweepgate::intake::event;
use sweepgate::server::handlers::{handle, BotConfig};

/// Handle the one event of a GitHub Actions run (`GITHUB_EVENT_NAME`, `GITHUB_EVENT_PATH`) with
/// the same handlers as the App server; writes a job summary to `GITHUB_STEP_SUMMARY`.
#[derive(Debug, clap::Args)]
pub struct ActionArgs {
    #[arg(long, env = "GITHUB_EVENT_NAME")]
    pub event_name: String,
    #[arg(long, env = "GITHUB_EVENT_PATH")]
    pub event_path: PathBuf,
    #[arg(long, env = "GITHUB_TOKEN", hide_env_values = true)]
    pub token: String,
    #[arg(long, env = "GITHUB_API_URL", default_value = "https://api.github.com")]
    pub api_url: String,
    /// The account the token posts as (its comments carry the trusted markers).
    #[arg(long, env = "SWEEPGATE_BOT_LOGIN", default_value = "github-actions[bot]")]
    pub bot_login: String,
    #[arg(long, env = "SWEEPGATE_STATUS_CONTEXT", default_value = "sweepgate/sweep-labels")]
    pub status_context: String,
    #[arg(long, env = "GITHUB_STEP_SUMMARY")]
    pub step_summary: Option<PathBuf>,
    #[command(flatten)]
    pub verifier: super::collect::VerifierArgs,
}

pub fn run(args: &ActionArgs) -> anyhow::Result<ExitCode> {
    let body = std::fs::read(&args.event_path).with_context(|| format!("reading {}", args.event_path.display()))?;
    // pull_request_target carries the pull_request payload (and is what fork PRs need).
    let name = match args.event_name.as_str() {
        "pull_request_target" => "pull_request",
        other => other,
    };
    let event = event::parse(name, &body)?;
    let bot = BotConfig {
        bot_login: args.bot_login.clone(),
        status_context: args.status_context.clone(),
        verify: args.verifier.verify_config(),
        ..BotConfig::default()
    };
    // octocrab's client needs the runtime while it is built.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let result = runtime.block_on(async {
        let metrics = Arc::new(ApiMetrics::default());
        let token = SecretString::from(args.token.clone());
        let gh = OctoGitHub::with_token(&args.api_url, token, RetryPolicy::default(), metrics)?;
        anyhow::Ok(handle(&gh, &bot, &event).await?)
    });
    let (summary, code) = match &result {
        Ok(outcome) => {
            let lines: Vec<String> = outcome.lines.iter().map(|l| format!("- {l}")).collect();
            (format!("### sweepgate: {}\n\n{}\n", args.event_name, lines.join("\n")), ExitCode::SUCCESS)
        }
        Err(err) => (format!("### sweepgate: {}\n\n❌ {err}\n", args.event_name), ExitCode::from(1)),
    };
    if let Some(path) = &args.step_summary {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        file.write_all(summary.as_bytes())?;
    }
    print!("{summary}");
    if let Err(err) = result {
        eprintln!("error: {err}");
    }
    Ok(code)
}
