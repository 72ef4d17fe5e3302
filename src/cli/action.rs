use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use secrecy::SecretString;
use sweepgate::checks::c14_pareto_coverage::FrontierChart;
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
    let (mut summary, code) = match &result {
        Ok(outcome) => {
            let lines: Vec<String> = outcome.lines.iter().map(|l| format!("- {l}")).collect();
            (format!("### sweepgate: {}\n\n{}\n", args.event_name, lines.join("\n")), ExitCode::SUCCESS)
        }
        Err(err) => (format!("### sweepgate: {}\n\n❌ {err}\n", args.event_name), ExitCode::from(1)),
    };
    if let (Some(path), Ok(outcome)) = (&args.step_summary, &result) {
        for line in write_charts(path, &outcome.charts) {
            summary.push_str(&line);
            summary.push('\n');
        }
    }
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

/// Most frontier charts written per run, so a PR touching many configs cannot flood the runner.
const MAX_CHARTS: usize = 32;

/// `sweepgate-frontier-<n>-<key>.svg`, the key reduced to `[A-Za-z0-9._-]` and bounded in length.
fn chart_file_name(n: usize, key: &str) -> String {
    let safe: String = key
        .chars()
        .take(96)
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .collect();
    format!("sweepgate-frontier-{n}-{safe}.svg")
}

/// Writes each of the verdict's frontier charts as SVG next to the job summary; returns one
/// summary line per chart. A chart that cannot be written is named, not fatal: the verdict is
/// already posted.
fn write_charts(summary: &Path, charts: &[FrontierChart]) -> Vec<String> {
    let dir = summary.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut lines: Vec<String> = charts
        .iter()
        .take(MAX_CHARTS)
        .enumerate()
        .map(|(i, chart)| {
            let name = chart_file_name(i + 1, &chart.curve);
            match std::fs::write(dir.join(&name), chart.svg()) {
                Ok(()) => format!("- frontier chart `{name}` ({} points)", chart.points.len()),
                Err(err) => format!("- frontier chart `{name}` not written: {err}"),
            }
        })
        .collect();
    if charts.len() > MAX_CHARTS {
        lines.push(format!("- {} more frontier charts not written (at most {MAX_CHARTS})", charts.len() - MAX_CHARTS));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_file_names_are_safe_and_bounded() {
        assert_eq!(
            chart_file_name(1, "dsr1/8k1k/b200_sglang/fp4/7/median"),
            "sweepgate-frontier-1-dsr1_8k1k_b200_sglang_fp4_7_median.svg"
        );
        assert_eq!(chart_file_name(2, "../é x`$"), "sweepgate-frontier-2-..___x__.svg");
        assert_eq!(chart_file_name(3, &"k".repeat(500)).len(), "sweepgate-frontier-3-.svg".len() + 96);
    }
}
