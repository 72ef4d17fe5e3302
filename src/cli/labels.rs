use std::process::ExitCode;

use sweepgate::intake::labels::{decide, LabelDecision, Permission, PrFacts};

use super::OutputFormat;

/// The PR's labels and the facts the label policy reads.
#[derive(Debug, clap::Args)]
pub struct PrLabelArgs {
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
    /// Full message of the PR head commit (checked for `[skip-sweep]`).
    #[arg(long)]
    pub head_message: Option<String>,
    /// Fork PRs: head SHA the primary label approved.
    #[arg(long, requires = "head_sha")]
    pub approved_sha: Option<String>,
    /// Fork PRs: current head SHA.
    #[arg(long)]
    pub head_sha: Option<String>,
}

impl PrLabelArgs {
    /// The policy's decision, given whether the PR appends a changelog entry.
    pub fn decide(&self, changelog_appended: bool) -> LabelDecision {
        let labels: Vec<&str> = self.labels.iter().map(|l| l.as_str()).filter(|l| !l.is_empty()).collect();
        let facts = PrFacts {
            draft: self.draft,
            fork: self.fork,
            changelog_appended,
            head_message: self.head_message.clone(),
            labeler_permission: self.labeler_permission,
            approved_sha: self.approved_sha.clone(),
            head_sha: self.head_sha.clone(),
        };
        decide(&labels, &facts)
    }
}

/// Decide the sweep from PR labels and facts, offline (the same policy the bot applies).
#[derive(Debug, clap::Args)]
pub struct LabelsArgs {
    #[command(flatten)]
    pub pr: PrLabelArgs,
    /// The PR does not append a `perf-changelog.yaml` entry.
    #[arg(long)]
    pub no_changelog_append: bool,
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutputFormat,
}

pub fn run(args: &LabelsArgs) -> anyhow::Result<ExitCode> {
    let decision = args.pr.decide(!args.no_changelog_append);
    match args.format {
        OutputFormat::Json => println!("{}", serde_json::to_string_pretty(&decision)?),
        OutputFormat::Text => print!("{}", decision_text(&decision)),
    }
    Ok(ExitCode::SUCCESS)
}

/// The decision as the text format prints it (shared with `sweepgate plan`).
pub fn decision_text(decision: &LabelDecision) -> String {
    let primary = decision.primary.map_or("none", |p| p.name());
    let mut out = format!("sweep: {} (primary: {primary})\n", if decision.sweep { "yes" } else { "no" });
    if decision.sweep {
        out += &format!(
            "plan: canary={} fail-fast={} evals-only={} all-evals={} agentx-fast={}\n",
            decision.canary, decision.fail_fast, decision.evals_only, decision.all_evals, decision.agentx_fast
        );
    }
    for r in &decision.reasons {
        out += &format!("- [{}] {}\n  {}\n", r.code, r.en, r.zh);
    }
    out
}
