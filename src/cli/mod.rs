//! Subcommand implementations: argument structs and thin calls into the library.

pub mod action;
pub mod app_manifest;
pub mod checks;
pub mod collect;
pub mod dispatch;
pub mod doctor;
pub mod generate;
pub mod labels;
pub mod launch;
pub mod lint;
pub mod matrix;
pub mod pareto;
pub mod plan;
pub mod queue;
pub mod recipe;
pub mod replay;
pub mod serve;
pub mod verify;

use std::path::PathBuf;

use sweepgate::repo::{GitTree, Tree, WorkTree};

/// `--repo DIR [--ref REV]`: a work tree, or a commit of the git repository at DIR.
#[derive(Debug, clap::Args)]
pub struct RepoArgs {
    /// Repository folder (a git work tree or a plain directory).
    #[arg(long, env = "SWEEPGATE_REPO")]
    pub repo: PathBuf,
    /// Read the files at this git revision instead of the work tree.
    #[arg(long = "ref")]
    pub rev: Option<String>,
}

impl RepoArgs {
    pub fn open(&self) -> anyhow::Result<Box<dyn Tree>> {
        if !self.repo.is_dir() {
            anyhow::bail!("--repo {}: no such directory", self.repo.display());
        }
        Ok(match &self.rev {
            Some(rev) => Box::new(GitTree::open(&self.repo, rev)?),
            None => Box::new(WorkTree::new(&self.repo)),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
}

/// A terminal progress bar `[###...]` of `width` cells, `done` of `total` filled (`dispatch`, `collect`).
fn progress_bar(done: usize, total: usize, width: usize, empty: char) -> String {
    let filled = (done * width).checked_div(total).unwrap_or(0).min(width);
    format!("[{}{}]", "#".repeat(filled), empty.to_string().repeat(width - filled))
}
