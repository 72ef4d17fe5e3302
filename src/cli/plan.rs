//! `sweepgate plan`: the label decision and the sweep plan of a PR's changelog change.

use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;
use sweepgate::domain::launch::recipe_sources;
use sweepgate::domain::srt::RecipeBook;
use sweepgate::intake::labels::LabelDecision;
use sweepgate::matrix::process::ProcessOptions;
use sweepgate::sweep::plan::{plan, SweepPlan};
use sweepgate::sweep::plan_input::{Plan, MAX_POINTS};
use sweepgate::sweep::plan_jobs::{dispatch_plan, JobDefaults, PoolPlan};
use sweepgate::sweep::pool::load_file;

use super::labels::{decision_text, PrLabelArgs};
use super::matrix::{additions, compute_from, open, Opened, RevisionArgs};

/// Plan the sweep a PR's labels ask for: the canary, then the job families in order; with
/// `--format dispatch`, the plan `sweepgate dispatch --plan` runs (recipes selected, jobs sized).
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub revisions: RevisionArgs,
    #[command(flatten)]
    pub pr: PrLabelArgs,
    #[arg(long, value_enum, default_value = "text")]
    pub format: PlanFormat,
    /// Pool profile the jobs are sized for and the recipes are checked against (dispatch format).
    #[arg(long, required_if_eq("format", "dispatch"))]
    pub pool: Option<PathBuf>,
    /// The script every job runs (relative to the plan file when it is read).
    #[arg(long, required_if_eq("format", "dispatch"))]
    pub launcher: Option<String>,
    /// owner/name of the benchmark repository (scopes job names and cancellation).
    #[arg(long, required_if_eq("format", "dispatch"))]
    pub github_repo: Option<String>,
    /// Pull request number.
    #[arg(long, required_if_eq("format", "dispatch"))]
    pub pr_number: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PlanFormat {
    Text,
    Json,
    /// The dispatch plan (src/sweep/plan_input.rs), ready for `sweepgate dispatch --plan`.
    Dispatch,
}

#[derive(Serialize)]
struct PlanOutput<'a> {
    #[serde(flatten)]
    plan: &'a SweepPlan,
    points: usize,
    decision: &'a LabelDecision,
}

pub fn run(args: &PlanArgs) -> anyhow::Result<ExitCode> {
    let opened = open(&args.revisions)?;
    let added = additions(&args.revisions, &opened)?;
    let (decision, sweep) = if added.text.trim().is_empty() {
        (args.pr.decide(false), SweepPlan::none())
    } else {
        let decision = args.pr.decide(true);
        let options = ProcessOptions {
            trim_conc: false,
            all_evals: decision.all_evals,
            evals_only: decision.evals_only,
            max_rows: Some(MAX_POINTS),
        };
        let matrix = compute_from(&added, &args.revisions, &opened, options)?;
        let sweep = plan(&decision, &matrix);
        (decision, sweep)
    };
    match args.format {
        PlanFormat::Json => {
            let output = PlanOutput { plan: &sweep, points: sweep.point_count(), decision: &decision };
            println!("{}", serde_json::to_string_pretty(&output)?);
        }
        PlanFormat::Text => print!("{}{}", decision_text(&decision), plan_text(&sweep)),
        PlanFormat::Dispatch => {
            if !sweep.sweep {
                eprint!("{}", decision_text(&decision));
            }
            let dispatch = to_dispatch(args, &opened, &sweep)?;
            for row in &dispatch.skipped {
                eprintln!("skipped (runner {} is another pool's): {} {}", row.runner, row.family, row.exp_name);
            }
            println!("{}", serde_json::to_string_pretty(&dispatch.plan)?);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn to_dispatch(args: &PlanArgs, opened: &Opened, sweep: &SweepPlan) -> anyhow::Result<PoolPlan> {
    let (Some(pool), Some(launcher), Some(repo), Some(pr)) =
        (&args.pool, &args.launcher, &args.github_repo, args.pr_number)
    else {
        anyhow::bail!("--format dispatch needs --pool, --launcher, --github-repo and --pr-number");
    };
    let pool = load_file(pool)?;
    let head = opened.head.commit();
    let sweep_id = format!("pr{pr}-{}", head.get(..10).unwrap_or(head));
    let defaults = JobDefaults { launcher, pool: &pool, repo, pr, sweep_id: &sweep_id };
    let mut recipes = RecipeBook::new(&opened.head, recipe_sources(&opened.head)?);
    let pool_plan = dispatch_plan(sweep, &defaults, &mut recipes)?;
    // The dispatcher's own validation, so what is printed is known to be accepted.
    Plan::parse(&serde_json::to_vec(&pool_plan.plan)?, "the generated plan")?;
    Ok(pool_plan)
}

fn plan_text(sweep: &SweepPlan) -> String {
    if !sweep.sweep {
        return String::new();
    }
    let mut out = match &sweep.canary {
        Some(row) => format!("canary: {}\n", row_label(row)),
        None => "canary: none\n".to_owned(),
    };
    for family in &sweep.families {
        let flags =
            [(family.fail_fast, " fail-fast"), (family.eval_only, " evals"), (family.agentx_fast, " agentx-fast")];
        let flags: String = flags.iter().filter(|(on, _)| *on).map(|(_, f)| *f).collect();
        out += &format!("{}: {} point(s){flags}\n", family.name, family.rows.len());
    }
    out += &format!("total: {} point(s)\n", sweep.point_count());
    out
}

fn row_label(row: &sweepgate::matrix::Row) -> String {
    let field = |k: &str| row.get(k).map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned));
    ["exp-name", "runner", "conc"]
        .iter()
        .filter_map(|k| field(k).map(|v| format!("{k}={v}")))
        .collect::<Vec<_>>()
        .join(" ")
}
