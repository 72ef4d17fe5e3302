//! `sweepgate matrix` (the processor's JSON) and `sweepgate validate-changelog` (the CI gate,
//! optionally with the merge path's strict byte rules).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use sweepgate::matrix::diff::{additions_from_unified_diff, git_diff, Additions};
use sweepgate::matrix::process::{process, ProcessOptions, Revision};
use sweepgate::matrix::strict::check_change;
use sweepgate::matrix::{MatrixError, MatrixOutput};
use sweepgate::repo::{GitTree, Layout, Logical, Tree};

/// Two revisions of a git repository and the changelog between them.
#[derive(Debug, clap::Args)]
pub struct RevisionArgs {
    /// The benchmark repository (a git work tree or bare repository).
    #[arg(long, env = "SWEEPGATE_REPO")]
    pub repo: PathBuf,
    /// Base revision (on a PR: the tip of the base branch, as CI uses it).
    #[arg(long)]
    pub base: String,
    /// Head revision; master configs, runners and the changelog are read at this commit.
    #[arg(long)]
    pub head: String,
    /// Changelog path (default: found at the head by the layout rule).
    #[arg(long)]
    pub changelog_file: Option<String>,
}

/// The revisions and the eval modifiers the matrix is computed with.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    #[command(flatten)]
    pub revisions: RevisionArgs,
    /// Run every entry's eval selection as --all-evals.
    #[arg(long)]
    pub all_evals: bool,
    /// Suppress throughput rows for every entry.
    #[arg(long)]
    pub evals_only: bool,
}

/// Print the sweep matrix of the changelog entries added between two revisions.
#[derive(Debug, clap::Args)]
pub struct MatrixArgs {
    #[command(flatten)]
    pub diff: DiffArgs,
    /// Keep only the lowest concurrency of each recipe (upstream's sweep-enabled PRs).
    #[arg(long)]
    pub trim_conc: bool,
}

/// Validate a changelog change like the CI gate (newline + matrix generation).
#[derive(Debug, clap::Args)]
pub struct ValidateChangelogArgs {
    #[command(flatten)]
    pub diff: DiffArgs,
    /// Also enforce the merge path's byte rules (append at the end, one empty separator line,
    /// immutable history, pr-link rules) as errors instead of warnings.
    #[arg(long)]
    pub strict: bool,
    /// PR number for the strict pr-link rule (placeholders allowed only on PRs).
    #[arg(long, requires = "strict")]
    pub pr: Option<u64>,
}

/// Both revisions opened, and the changelog path at the head.
pub struct Opened {
    pub base: GitTree,
    pub head: GitTree,
    pub path: String,
}

pub fn open(revisions: &RevisionArgs) -> Result<Opened, MatrixError> {
    let base = GitTree::open(&revisions.repo, &revisions.base)?;
    let head = GitTree::open(&revisions.repo, &revisions.head)?;
    let path = match &revisions.changelog_file {
        Some(p) => p.clone(),
        None => Layout::default().resolve(&head, Logical::Changelog)?.unwrap_or_else(|| "perf-changelog.yaml".into()),
    };
    Ok(Opened { base, head, path })
}

/// The lines the head adds to the changelog.
pub fn additions(revisions: &RevisionArgs, opened: &Opened) -> Result<Additions, MatrixError> {
    let text = git_diff(&revisions.repo, opened.base.commit(), opened.head.commit(), &opened.path)?;
    additions_from_unified_diff(&text, &opened.path)
}

/// The matrix of the changelog entries added between the two revisions.
pub fn compute(
    revisions: &RevisionArgs,
    opened: &Opened,
    options: ProcessOptions,
) -> Result<MatrixOutput, MatrixError> {
    compute_from(&additions(revisions, opened)?, revisions, opened, options)
}

/// The matrix of `additions`.
pub fn compute_from(
    additions: &Additions,
    revisions: &RevisionArgs,
    opened: &Opened,
    options: ProcessOptions,
) -> Result<MatrixOutput, MatrixError> {
    process(
        additions,
        &opened.path,
        Revision { name: &revisions.base, tree: &opened.base },
        Revision { name: &revisions.head, tree: &opened.head },
        &Layout::default(),
        options,
    )
}

fn options(diff: &DiffArgs, trim_conc: bool) -> ProcessOptions {
    ProcessOptions { trim_conc, all_evals: diff.all_evals, evals_only: diff.evals_only, max_rows: None }
}

pub fn run_matrix(args: &MatrixArgs) -> anyhow::Result<ExitCode> {
    let revisions = &args.diff.revisions;
    let result = open(revisions).and_then(|opened| compute(revisions, &opened, options(&args.diff, args.trim_conc)));
    match result {
        Ok(output) => {
            let mut stdout = std::io::stdout().lock();
            writeln!(stdout, "{}", output.to_json_string())?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

pub fn run_validate(args: &ValidateChangelogArgs) -> anyhow::Result<ExitCode> {
    let revisions = &args.diff.revisions;
    let opened = match open(revisions) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("ERROR: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let head_raw = opened.head.read(&opened.path)?.unwrap_or_default();
    if !head_raw.ends_with(b"\n") {
        eprintln!("ERROR: {} at {} does not end with a newline", opened.path, revisions.head);
        return Ok(ExitCode::from(1));
    }
    if let Err(e) = compute(revisions, &opened, options(&args.diff, false)) {
        eprintln!("ERROR: the matrix processor rejected the diff:\n{e}");
        return Ok(ExitCode::from(1));
    }
    let base_raw = opened.base.read(&opened.path)?.unwrap_or_default();
    if let Err(e) = check_change(&base_raw, &head_raw, &opened.path, args.pr) {
        if args.strict {
            eprintln!("ERROR: {e}");
            return Ok(ExitCode::from(1));
        }
        eprintln!("warning: the merge path's strict changelog rules would reject this change: {e}");
    }
    println!("Validated {}: final newline present and matrix generated", opened.path);
    Ok(ExitCode::SUCCESS)
}
