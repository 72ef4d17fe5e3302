use std::process::ExitCode;

use sweepgate::lint::lint;
use sweepgate::repo::Layout;

use super::{OutputFormat, RepoArgs};

/// Parse every policy file of a benchmark repository; report problems as path:line:col.
#[derive(Debug, clap::Args)]
pub struct LintArgs {
    #[command(flatten)]
    pub repo: RepoArgs,
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutputFormat,
}

pub fn run(args: &LintArgs) -> anyhow::Result<ExitCode> {
    let tree = args.repo.open()?;
    let report = lint(tree.as_ref(), &Layout::default())?;
    match args.format {
        OutputFormat::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        OutputFormat::Text => {
            for d in &report.diagnostics {
                println!("{d}");
            }
            // What was read, beside the problems: on stderr, so stdout stays the problem list.
            for fact in &report.facts {
                eprintln!("{fact}");
            }
            let counts: Vec<String> = report.counts.iter().map(|(k, v)| format!("{k}={v}")).collect();
            eprintln!(
                "{} files read, {} error(s), {} warning(s); {}",
                report.files_read,
                report.errors(),
                report.diagnostics.len() - report.errors(),
                counts.join(" ")
            );
        }
    }
    Ok(if report.ok() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
