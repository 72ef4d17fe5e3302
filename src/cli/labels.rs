use std::process::ExitCode;

use sweepgate::intake::labels::{decide, Permission, PrFacts};

use super::OutputFormat;

/// Decide the sweep from PR labels and facts, offline (the same policy the bot applies).
#[derive(Debug, clap::Args)]
pub struct LabelsArgs {
    /// Comma-separated label names, exactly as on the PR.
    #[arg(long, value_delimiter = ',', default_value = "")]
    pub labels: Vec<String>,
    /// The PR is a draft.
    #[arg(long)]
    pub draft: bool,
    /// The PR comes from a fork.
    #[arg(long)]
    pub fork: bool,
    /// Fork PRs: permission of the user who applied the primary label.
    #[arg(long, value_enum)]
    pub labeler_permission: Option<Permission>,
    /// The PR does not append a `perf-changelog.yaml` entry.
    #[arg(long)]
    pub no_changelog_append: bool,
    /// Full message of the PR head commit (checked for `[skip-sweep]`).
    #[arg(long)]
    pub head_message: Option<String>,
    /// Fork PRs: head SHA the primary label approved.
    #[arg(long, requires = "head_sha")]
    pub approved_sha: Option<String>,
    /// Fork PRs: current head SHA.
    #[arg(long)]
    pub head_sha: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutputFormat,
}

pub fn run(args: &LabelsArgs) -> anyhow::Result<ExitCode> {
    let labels: Vec<&str> = args.labels.iter().map(|l| l.as_str()).filter(|l| !l.is_empty()).collect();
    let facts = PrFacts {
        draft: args.draft,
        fork: args.fork,
        changelog_appended: !args.no_changelog_append,
        head_message: args.head_message.clone(),
        labeler_permission: args.labeler_permission,
        approved_sha: args.approved_sha.clone(),
        head_sha: args.head_sha.clone(),
    };
    let decision = decide(&labels, &facts);
    match args.format {
        OutputFormat::Json => println!("{}", serde_json::to_string_pretty(&decision)?),
        OutputFormat::Text => {
            let primary = decision.primary.map_or("none", |p| p.name());
            println!("sweep: {} (primary: {primary})", if decision.sweep { "yes" } else { "no" });
            if decision.sweep {
                println!(
                    "plan: canary={} fail-fast={} evals-only={} all-evals={} agentx-fast={}",
                    decision.canary, decision.fail_fast, decision.evals_only, decision.all_evals, decision.agentx_fast
                );
            }
            for r in &decision.reasons {
                println!("- [{}] {}\n  {}", r.code, r.en, r.zh);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
