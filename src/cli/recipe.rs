use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use sweepgate::domain::launch::recipe_sources;
use sweepgate::domain::srt::{self, Checks, ConcurrencyRule, Point, RecipeBook, TargetPool};
use sweepgate::domain::srt_recipe::{Recipe, RecipeRef, Variant};
use sweepgate::sweep::pool;
use sweepgate::yaml;

use super::{OutputFormat, RepoArgs};

/// SRT-Slurm recipes: resolve variants like srtctl, select the one a matrix point runs.
#[derive(Debug, clap::Args)]
pub struct RecipeArgs {
    #[command(subcommand)]
    pub command: RecipeCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum RecipeCommand {
    /// Print the variants FILE[:selector] resolves to, as srtctl resolves them.
    Resolve(ResolveArgs),
    /// Find the recipe a matrix row names (CONFIG_FILE=…) in a repository and select its variant.
    Select(SelectArgs),
}

/// Options shared by both commands when a point is checked.
#[derive(Debug, clap::Args)]
pub struct PointArgs {
    /// A multinode matrix row: inline JSON, or @FILE.
    #[arg(long)]
    pub point: Option<String>,
    /// Pool profile (pools/<name>.toml) to check the SKU, GPUs per node and model aliases against.
    #[arg(long, requires = "point")]
    pub pool: Option<PathBuf>,
    /// How the point's concurrencies must relate to the recipe's: equal sets, or a subset.
    #[arg(long, default_value = "equal")]
    pub conc_rule: ConcurrencyRule,
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutputFormat,
}

#[derive(Debug, clap::Args)]
pub struct ResolveArgs {
    /// Recipe path, optionally with :base, :override_x, :zip_override_g, :zip_override_g[i] or a glob.
    pub file: String,
    #[command(flatten)]
    pub point: PointArgs,
}

#[derive(Debug, clap::Args)]
pub struct SelectArgs {
    #[command(flatten)]
    pub repo: RepoArgs,
    #[command(flatten)]
    pub point: PointArgs,
}

pub fn run(args: &RecipeArgs) -> anyhow::Result<ExitCode> {
    match &args.command {
        RecipeCommand::Resolve(a) => resolve(a),
        RecipeCommand::Select(a) => select(a),
    }
}

fn resolve(args: &ResolveArgs) -> anyhow::Result<ExitCode> {
    let reference = RecipeRef::parse(&args.file)?;
    let bytes = std::fs::read(&reference.path).with_context(|| format!("cannot read {}", reference.path))?;
    let text = yaml::text_of(&bytes).map_err(|e| e.in_file(&reference.path))?;
    let recipe = Recipe::parse(text, &reference.path)?;
    run_on(&recipe, &reference, &args.point)
}

fn select(args: &SelectArgs) -> anyhow::Result<ExitCode> {
    let point_text = args.point.point.as_deref().context("select needs --point (a matrix row)")?;
    let row = read_row(point_text)?;
    let tree = args.repo.open()?;
    let pool = args.point.pool.as_deref().map(pool::load_file).transpose()?;
    let checks = Checks { pool: pool.as_ref().map(|p| p as &dyn TargetPool), concurrency: args.point.conc_rule };
    let found = RecipeBook::new(tree.as_ref(), recipe_sources(tree.as_ref())?).select_row(&row, checks)?;
    for warning in &found.warnings {
        eprintln!("warning: {warning}");
    }
    print_variants(&[found.selected.variant], args.point.format)
}

fn run_on(recipe: &Recipe, reference: &RecipeRef, args: &PointArgs) -> anyhow::Result<ExitCode> {
    for warning in &recipe.warnings {
        eprintln!("warning: {warning}");
    }
    let variants = match &args.point {
        None => {
            let resolution = recipe.resolve(reference.selector.as_ref())?;
            for warning in &resolution.warnings {
                eprintln!("warning: {warning}");
            }
            resolution.variants
        }
        Some(text) => {
            let point = Point::from_json(&read_row(text)?)?;
            let pool = args.pool.as_deref().map(pool::load_file).transpose()?;
            let checks = Checks { pool: pool.as_ref().map(|p| p as &dyn TargetPool), concurrency: args.conc_rule };
            vec![srt::select(recipe, reference.selector.as_ref(), &point, checks)?.variant]
        }
    };
    print_variants(&variants, args.format)
}

fn print_variants(variants: &[Variant], format: OutputFormat) -> anyhow::Result<ExitCode> {
    match format {
        OutputFormat::Json => {
            let all: Vec<serde_json::Value> = variants.iter().map(|v| v.to_json()).collect();
            println!("{}", serde_json::to_string_pretty(&all)?);
        }
        OutputFormat::Text => {
            for v in variants {
                let name = v.name().and_then(|n| n.key_text().map(|t| t.into_owned())).unwrap_or_default();
                let selector = if v.selector.is_empty() { "(plain)" } else { v.selector.as_str() };
                println!("{selector}\t{name}{}", if v.has_sweep() { "\t(sweep: not dispatchable)" } else { "" });
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Inline JSON, or `@FILE`.
fn read_row(text: &str) -> anyhow::Result<serde_json::Value> {
    let json = match text.strip_prefix('@') {
        Some(path) => {
            std::fs::read_to_string(Path::new(path)).with_context(|| format!("cannot read the point file {path}"))?
        }
        None => text.to_owned(),
    };
    serde_json::from_str(&json).context("--point is not valid JSON")
}
