//! The `sweepgate` command line: clap parses, the library decides, this file only wires.

mod cli;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(name = "sweepgate", version, about = "Deterministic merge gate for GPU-inference benchmark repositories")]
struct Opts {
    /// Log format: human-readable lines, or JSON objects for servers.
    #[arg(long, value_enum, default_value = "human", env = "SWEEPGATE_LOG_FORMAT", global = true)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum LogFormat {
    Human,
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    Lint(cli::lint::LintArgs),
    Verify(cli::verify::VerifyArgs),
    /// Collect the Evidence of one sign-off into a bundle directory.
    Collect(cli::collect::CollectArgs),
    /// Print the sweep matrix of the changelog entries added between two revisions.
    Matrix(cli::matrix::MatrixArgs),
    /// Generate matrix rows from the master configs (test-config | full-sweep).
    Generate(cli::generate::GenerateArgs),
    /// Validate a changelog change like the CI gate (add --strict for the merge path's rules).
    ValidateChangelog(cli::matrix::ValidateChangelogArgs),
    Pareto(cli::pareto::ParetoArgs),
    Labels(cli::labels::LabelsArgs),
    Plan(cli::plan::PlanArgs),
    // Boxed: the serve flags are the largest variant by far.
    Serve(Box<cli::serve::ServeArgs>),
    Replay(cli::replay::ReplayArgs),
    Action(cli::action::ActionArgs),
    Dispatch(cli::dispatch::DispatchArgs),
    Recipe(cli::recipe::RecipeArgs),
    /// What each master-config entry runs: runner launchers, benchmark script, recipes, settings.
    Launch(cli::launch::LaunchArgs),
    /// Operate the server's durable event queue (list, retry, drop deliveries).
    Queue(cli::queue::QueueArgs),
    /// List the sub-rules of checks 0-18: how each is decided, its fixture or reason, its source.
    Checks(cli::checks::ChecksArgs),
    /// Print the GitHub App manifest (events and permissions `serve` needs) for a webhook URL.
    AppManifest(cli::app_manifest::AppManifestArgs),
    // Boxed: it holds every serve flag.
    Doctor(Box<cli::doctor::DoctorArgs>),
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("SWEEPGATE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Colour codes only for a person at a terminal, never into files or journals.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi);
    match format {
        LogFormat::Human => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

fn main() -> ExitCode {
    // The matches are kept: `serve` asks them which settings were defaulted (its config file
    // fills those).
    let matches = Opts::command().get_matches();
    let opts = Opts::from_arg_matches(&matches).unwrap_or_else(|err| err.exit());
    init_logging(opts.log_format);
    let result = match &opts.command {
        Command::Lint(args) => cli::lint::run(args),
        Command::Verify(args) => cli::verify::run(args),
        Command::Collect(args) => cli::collect::run(args),
        Command::Matrix(args) => cli::matrix::run_matrix(args),
        Command::Generate(args) => cli::generate::run(args),
        Command::ValidateChangelog(args) => cli::matrix::run_validate(args),
        Command::Pareto(args) => cli::pareto::run(args),
        Command::Labels(args) => cli::labels::run(args),
        Command::Plan(args) => cli::plan::run(args),
        Command::Serve(args) => {
            let serve_matches = matches.subcommand_matches("serve").unwrap_or(&matches);
            cli::serve::run(args, serve_matches)
        }
        Command::Replay(args) => cli::replay::run(args),
        Command::Action(args) => cli::action::run(args),
        Command::Dispatch(args) => cli::dispatch::run(args),
        Command::Recipe(args) => cli::recipe::run(args),
        Command::Launch(args) => cli::launch::run(args),
        Command::Queue(args) => cli::queue::run(args),
        Command::Checks(args) => cli::checks::run(args),
        Command::AppManifest(args) => cli::app_manifest::run(args),
        Command::Doctor(args) => {
            let doctor_matches = matches.subcommand_matches("doctor").unwrap_or(&matches);
            cli::doctor::run(args, doctor_matches)
        }
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {}", error_chain(&err));
            ExitCode::from(1)
        }
    }
}

/// The error and its causes joined by ": ", leaving out a cause whose text the message before
/// it already contains (errors that embed their source would otherwise repeat it).
fn error_chain(err: &anyhow::Error) -> String {
    let mut text = String::new();
    let mut previous = String::new();
    for cause in err.chain() {
        let message = cause.to_string();
        if !previous.contains(&message) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&message);
        }
        previous = message;
    }
    text
}

#[cfg(test)]
mod tests {
    use super::error_chain;

    #[derive(Debug, thiserror::Error)]
    #[error("reading {path}: {source}")]
    struct Read {
        path: String,
        #[source]
        source: std::io::Error,
    }

    #[test]
    fn a_cause_the_message_already_shows_is_not_repeated() {
        let io = std::io::Error::from_raw_os_error(2);
        let err = anyhow::Error::new(Read { path: "/x".into(), source: io }).context("loading the config");
        let text = error_chain(&err);
        assert_eq!(text.matches("(os error 2)").count(), 1, "{text}");
        assert!(text.starts_with("loading the config: reading /x: "), "{text}");
        let plain = anyhow::anyhow!("inner").context("outer");
        assert_eq!(error_chain(&plain), "outer: inner");
    }
}
