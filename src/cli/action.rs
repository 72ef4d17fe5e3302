use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use secrecy::SecretString;
use sweepgate::checks::Lang;
use sweepgate::github::octo::{OctoGitHub, RetryPolicy};
use sweepgate::github::ApiMetrics;
use sweepgate::intake::event;
use sweepgate::report::performance::{markdown, overlays, performance_view};
use sweepgate::server::handlers::{handle, BotConfig};

/// Handle the one event of a GitHub Actions run (`GITHUB_EVENT_NAME`, `GITHUB_EVENT_PATH`) with
/// the same handlers as the App server; writes a job summary to `GITHUB_STEP_SUMMARY` and the
/// outputs `decision`, `verdict` and `summary-path` to `GITHUB_OUTPUT`.
#[derive(Debug, clap::Args)]
pub struct ActionArgs {
    #[arg(long, env = "GITHUB_EVENT_NAME")]
    pub event_name: Option<String>,
    #[arg(long, env = "GITHUB_EVENT_PATH")]
    pub event_path: Option<PathBuf>,
    /// Optional for clap so that its absence is reported as a missing `GITHUB_TOKEN`.
    #[arg(long, env = "GITHUB_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    #[arg(long, env = "GITHUB_API_URL", default_value = "https://api.github.com")]
    pub api_url: String,
    /// The account the token posts as (its comments carry the trusted markers).
    #[arg(long, env = "SWEEPGATE_BOT_LOGIN", default_value = "github-actions[bot]")]
    pub bot_login: String,
    #[arg(long, env = "SWEEPGATE_STATUS_CONTEXT", default_value = "sweepgate/sweep-labels")]
    pub status_context: String,
    #[arg(long, env = "GITHUB_STEP_SUMMARY")]
    pub step_summary: Option<PathBuf>,
    /// The step's output file (`name=value` lines).
    #[arg(long, env = "GITHUB_OUTPUT")]
    pub github_output: Option<PathBuf>,
    #[command(flatten)]
    pub verifier: super::collect::VerifierArgs,
}

/// Every failure, the ones before any event is read included, ends in the job summary, an
/// `::error::` annotation and exit code 1; the outputs are written in every case.
pub fn run(args: &ActionArgs) -> anyhow::Result<ExitCode> {
    let event_name = args.event_name.as_deref().unwrap_or("(no GITHUB_EVENT_NAME)");
    let result = handle_event(args);
    let (mut summary, code) = match &result {
        Ok(outcome) => {
            let lines: Vec<String> = outcome.lines.iter().map(|l| format!("- {l}")).collect();
            (format!("### sweepgate: {event_name}\n\n{}\n", lines.join("\n")), ExitCode::SUCCESS)
        }
        Err(err) => (format!("### sweepgate: {event_name}\n\n❌ {err:#}\n"), ExitCode::from(1)),
    };
    if let (Some(path), Ok(outcome)) = (&args.step_summary, &result) {
        for report in [&outcome.preflight, &outcome.reuse].into_iter().flatten() {
            summary.push('\n');
            summary.push_str(report);
        }
        let charts = outcome.charts.iter().map(|c| (c.curve.clone(), c.svg(), c.points.len()));
        for line in write_charts(path, "frontier", charts.collect()) {
            summary.push_str(&line);
            summary.push('\n');
        }
        // The comparison with the published curve: its full table in both languages, and an
        // overlay SVG per config and scenario beside it.
        let view = performance_view(&outcome.performance, false);
        for lang in [Lang::En, Lang::Zh] {
            let text = markdown(&view, lang).unwrap_or_else(|e| format!("\n- performance table not rendered: {e}\n"));
            summary.push_str(&text);
        }
        let overlays = overlays(&outcome.performance).into_iter().map(|o| {
            let points = outcome.performance.rows.iter().filter(|r| r.config == o.config && r.scenario == o.scenario);
            let points = points.map(|r| r.point.as_str()).collect::<std::collections::BTreeSet<_>>().len();
            (format!("{} {}", o.config, o.scenario), o.svg, points)
        });
        for line in write_charts(path, "performance", overlays.collect()) {
            summary.push_str(&line);
            summary.push('\n');
        }
    }
    let mut problems = Vec::new();
    if let Some(path) = &args.step_summary {
        if let Err(e) = append(path, &summary) {
            problems.push(format!("the job summary {} was not written: {e}", path.display()));
        }
    }
    let outcome = result.as_ref().ok();
    let outputs = [
        ("decision", outcome.and_then(|o| o.decision).unwrap_or("none").to_string()),
        ("verdict", outcome.and_then(|o| o.verdict).unwrap_or("none").to_string()),
        ("summary-path", args.step_summary.as_ref().map(|p| p.display().to_string()).unwrap_or_default()),
    ];
    if let Some(path) = &args.github_output {
        let text: String = outputs.iter().map(|(k, v)| format!("{k}={}\n", one_line(v))).collect();
        if let Err(e) = append(path, &text) {
            problems.push(format!("the step outputs {} were not written: {e}", path.display()));
        }
    }
    print!("{summary}");
    let mut stdout = std::io::stdout().lock();
    if let Err(err) = &result {
        writeln!(
            stdout,
            "::error title=sweepgate {}::{}",
            annotation_property(event_name),
            annotation_data(&format!("{err:#}"))
        )?;
    }
    for problem in &problems {
        writeln!(stdout, "::warning title=sweepgate::{}", annotation_data(problem))?;
    }
    if let Err(err) = result {
        eprintln!("error: {err:#}");
    }
    Ok(code)
}

fn handle_event(args: &ActionArgs) -> anyhow::Result<sweepgate::server::handlers::Outcome> {
    let Some(token) = args.token.clone().filter(|t| !t.trim().is_empty()) else {
        anyhow::bail!(
            "GITHUB_TOKEN is not set: give the action a token (its `github-token` input defaults to \
             `${{{{ github.token }}}}`), or export GITHUB_TOKEN for `sweepgate action`"
        );
    };
    let (Some(event_name), Some(event_path)) = (&args.event_name, &args.event_path) else {
        anyhow::bail!(
            "GITHUB_EVENT_NAME and GITHUB_EVENT_PATH are not set: `sweepgate action` runs inside a GitHub Actions job"
        );
    };
    let body =
        std::fs::read(event_path).with_context(|| format!("reading the event payload {}", event_path.display()))?;
    // pull_request_target carries the pull_request payload (and is what fork PRs need).
    let name = match event_name.as_str() {
        "pull_request_target" => "pull_request",
        other => other,
    };
    let event = event::parse(name, &body)?;
    let bot = BotConfig {
        bot_login: args.bot_login.clone(),
        status_context: args.status_context.clone(),
        verify: args.verifier.verify_config()?,
        ..BotConfig::default()
    };
    // octocrab's client needs the runtime while it is built.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let metrics = Arc::new(ApiMetrics::default());
        let gh = OctoGitHub::with_token(&args.api_url, SecretString::from(token), RetryPolicy::default(), metrics)?;
        anyhow::Ok(handle(&gh, &bot, &event).await?)
    })
}

fn append(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::OpenOptions::new().create(true).append(true).open(path)?.write_all(text.as_bytes())
}

/// An output value on one line (GITHUB_OUTPUT's `name=value` form ends at the newline).
fn one_line(value: &str) -> String {
    value.replace(['\r', '\n'], " ")
}

/// Workflow-command data: `%`, CR and LF escaped, as the runner decodes them.
fn annotation_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A workflow-command property value: also `:` and `,` escaped.
fn annotation_property(text: &str) -> String {
    annotation_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// Most charts of one kind written per run, so a PR touching many configs cannot flood the runner.
const MAX_CHARTS: usize = 32;

/// `sweepgate-<kind>-<n>-<key>.svg`, the key reduced to `[A-Za-z0-9._-]` and bounded in length.
fn chart_file_name(kind: &str, n: usize, key: &str) -> String {
    let safe: String = key
        .chars()
        .take(96)
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .collect();
    format!("sweepgate-{kind}-{n}-{safe}.svg")
}

/// Writes each chart `(key, svg, points)` of one kind (`frontier`: Check 14's; `performance`: the
/// overlays of the comparison with the published curve) as SVG next to the job summary; returns
/// one summary line per chart. A chart that cannot be written is named, not fatal: the verdict
/// is already posted.
fn write_charts(summary: &Path, kind: &str, charts: Vec<(String, String, usize)>) -> Vec<String> {
    let dir = summary.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let total = charts.len();
    let mut lines: Vec<String> = charts
        .into_iter()
        .take(MAX_CHARTS)
        .enumerate()
        .map(|(i, (key, svg, points))| {
            let name = chart_file_name(kind, i + 1, &key);
            match std::fs::write(dir.join(&name), svg) {
                Ok(()) => format!("- {kind} chart `{name}` ({points} points)"),
                Err(err) => format!("- {kind} chart `{name}` not written: {err}"),
            }
        })
        .collect();
    if total > MAX_CHARTS {
        lines.push(format!("- {} more {kind} charts not written (at most {MAX_CHARTS})", total - MAX_CHARTS));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_file_names_are_safe_and_bounded() {
        assert_eq!(
            chart_file_name("frontier", 1, "dsr1/8k1k/b200_sglang/fp4/7/median"),
            "sweepgate-frontier-1-dsr1_8k1k_b200_sglang_fp4_7_median.svg"
        );
        assert_eq!(chart_file_name("frontier", 2, "../é x`$"), "sweepgate-frontier-2-..___x__.svg");
        assert_eq!(chart_file_name("frontier", 3, &"k".repeat(500)).len(), "sweepgate-frontier-3-.svg".len() + 96);
        assert_eq!(chart_file_name("performance", 1, "k 8k1k"), "sweepgate-performance-1-k_8k1k.svg");
    }

    #[test]
    fn annotations_and_outputs_stay_one_command_each() {
        assert_eq!(annotation_data("50% done\nnext: a,b"), "50%25 done%0Anext: a,b");
        assert_eq!(annotation_property("a:b,c"), "a%3Ab%2Cc");
        assert_eq!(one_line("x\ny=1"), "x y=1");
    }
}
