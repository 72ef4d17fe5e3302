//! The `sweepgate` command line: clap parses, the library decides, this file only wires.

mod cli;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

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
    Recipe(cli::recipe::RecipeArgs),
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("SWEEPGATE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match format {
        LogFormat::Human => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

fn main() -> ExitCode {
    let opts = Opts::parse();
    init_logging(opts.log_format);
    let result = match &opts.command {
        Command::Lint(args) => cli::lint::run(args),
        Command::Recipe(args) => cli::recipe::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(1)
        }
    }
}
