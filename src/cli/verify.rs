use std::path::PathBuf;
use std::process::ExitCode;

use sweepgate::checks::{verify, Lang, VerdictWord};
use sweepgate::evidence::read_bundle;
use sweepgate::report::verdict::{render_json, render_markdown, ReportOptions};

/// Decide the sign-off verdict offline from an Evidence bundle (same bundle → same bytes).
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// Bundle directory (evidence.json + base/ + head/ + artifacts/).
    #[arg(long)]
    pub bundle: PathBuf,
    #[arg(long, value_enum, default_value = "markdown")]
    pub format: VerdictFormat,
    /// Handles asked to review WARN rows (repeatable), e.g. --reviewer @maint-a.
    #[arg(long = "reviewer", env = "SWEEPGATE_REVIEWERS", value_delimiter = ',')]
    pub reviewers: Vec<String>,
    /// Report language(s) of the Markdown verdict.
    #[arg(long, value_enum, default_value = "both")]
    pub lang: LangChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LangChoice {
    En,
    Zh,
    Both,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum VerdictFormat {
    Markdown,
    Json,
}

/// Exit 0 on APPROVED, 1 on REJECTED (and on errors), like a gate.
pub fn run(args: &VerifyArgs) -> anyhow::Result<ExitCode> {
    let evidence = read_bundle(&args.bundle)?;
    // On stderr, so the report on stdout stays byte-identical for a bundle.
    eprintln!("sweepgate verify: read bundle format {} from {}", evidence.format, args.bundle.display());
    let verdict = verify(&evidence);
    let text = match args.format {
        VerdictFormat::Markdown => {
            let lang = match args.lang {
                LangChoice::En => Some(Lang::En),
                LangChoice::Zh => Some(Lang::Zh),
                LangChoice::Both => None,
            };
            render_markdown(
                &evidence,
                &verdict,
                &ReportOptions {
                    reviewers: args.reviewers.clone(),
                    lang,
                    fingerprint: None,
                    policy_sha: None,
                    watch: Vec::new(),
                },
            )?
        }
        VerdictFormat::Json => render_json(&evidence, &verdict)?,
    };
    print!("{text}");
    Ok(match verdict.word {
        VerdictWord::Approved => ExitCode::SUCCESS,
        VerdictWord::Rejected => ExitCode::from(1),
    })
}
