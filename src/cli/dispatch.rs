use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use indexmap::IndexMap;
use secrecy::SecretString;
use sweepgate::github::octo::{OctoGitHub, RetryPolicy};
use sweepgate::github::sticky::{self, Thread};
use sweepgate::github::{ApiMetrics, GitHub, RepoRef};
use sweepgate::sweep::cancel::cancel_pull_request;
use sweepgate::sweep::dispatch::{Counts, DispatchConfig, Dispatcher, Event};
use sweepgate::sweep::dispatch_pool::DispatchPool;
use sweepgate::sweep::ledger::{Ledger, PointRecord, PointState};
use sweepgate::sweep::plan_input::{Plan, MAX_PLAN_BYTES};
use sweepgate::sweep::slurm::SlurmCli;
use sweepgate::sweep::status_comment::{self, StatusRow};

use super::OutputFormat;

/// Run a sweep plan on Slurm to completion (resumable), or cancel a pull request's jobs.
#[derive(Debug, clap::Args)]
pub struct DispatchArgs {
    /// Plan JSON (format: src/sweep/plan_input.rs). With --cancel it only supplies repo and PR.
    #[arg(long, required_unless_present_any = ["cancel", "status"])]
    pub plan: Option<PathBuf>,
    /// Pool profile TOML (partition, account, GPUs per node, max_concurrent_allocations, …).
    #[arg(long, required_unless_present_any = ["cancel", "status"])]
    pub pool: Option<PathBuf>,
    /// SQLite ledger file; created when missing. Run the same command again to resume.
    #[arg(long, env = "SWEEPGATE_LEDGER", required_unless_present = "cancel")]
    pub ledger: Option<PathBuf>,
    /// Where `<job id>/logs/` go (default: the pool's output_root, else `outputs/` beside the ledger).
    #[arg(long)]
    pub output_dir: Option<PathBuf>,
    /// Milliseconds between two looks at Slurm.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(50..=600_000))]
    pub poll_ms: u64,
    /// Stop (resumably) when Slurm has not answered for this many seconds.
    #[arg(long, default_value_t = 1800)]
    pub unreachable_secs: u64,
    /// Cancel every job of the pull request (--pr, and --repo or --plan) instead of dispatching.
    #[arg(long, conflicts_with = "status")]
    pub cancel: bool,
    /// Print the final table (or JSON) of a sweep from the ledger alone (--ledger, and --sweep or
    /// --plan); Slurm is not contacted.
    #[arg(long)]
    pub status: bool,
    /// Sweep id for --status (default: the --plan's).
    #[arg(long, requires = "status")]
    pub sweep: Option<String>,
    /// Pull request whose jobs --cancel ends.
    #[arg(long, requires = "cancel")]
    pub pr: Option<u64>,
    /// owner/name of the repository (with --cancel, when no --plan is given).
    #[arg(long)]
    pub repo: Option<String>,
    /// Final table as text, or the ledger records as JSON.
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutputFormat,
    /// Keep one bilingual status comment on the plan's pull request, edited as the sweep moves
    /// and once at the end (needs a token).
    #[arg(long, requires = "github_token", conflicts_with_all = ["cancel", "status"])]
    pub status_comment: bool,
    #[arg(long, env = "GITHUB_TOKEN", hide_env_values = true)]
    pub github_token: Option<String>,
    #[arg(long, env = "SWEEPGATE_GITHUB_API_URL", default_value = "https://api.github.com")]
    pub github_api_url: String,
    /// The login the token acts as: only its comments are edited.
    #[arg(long, env = "SWEEPGATE_BOT_LOGIN", default_value = "sweepgate[bot]")]
    pub bot_login: String,
    /// Seconds between two edits of the status comment while the sweep runs.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub comment_every_secs: u64,
}

fn read_bounded(path: &Path, limit: usize) -> anyhow::Result<Vec<u8>> {
    let size = std::fs::metadata(path).with_context(|| format!("{}", path.display()))?.len();
    anyhow::ensure!(size <= limit as u64, "{}: {size} bytes, above the {limit}-byte limit", path.display());
    std::fs::read(path).with_context(|| format!("{}", path.display()))
}

fn load_plan(path: &Path) -> anyhow::Result<Plan> {
    let bytes = read_bounded(path, MAX_PLAN_BYTES)?;
    Ok(Plan::parse(&bytes, &path.display().to_string())?)
}

pub fn run(args: &DispatchArgs) -> anyhow::Result<ExitCode> {
    if args.cancel {
        return cancel(args);
    }
    if args.status {
        return status(args);
    }
    let (Some(plan_path), Some(pool_path), Some(ledger_path)) = (&args.plan, &args.pool, &args.ledger) else {
        anyhow::bail!("--plan, --pool and --ledger are required to dispatch");
    };
    let plan = load_plan(plan_path)?;
    let pool = DispatchPool::parse(&read_bounded(pool_path, 1024 * 1024)?, pool_path)?;
    let _running = lock_ledger(ledger_path)?;
    let mut ledger = Ledger::open(ledger_path)?;
    let output_root = match (&args.output_dir, &pool.output_root) {
        (Some(dir), _) => dir.clone(),
        (None, Some(dir)) => dir.clone(),
        (None, None) => {
            std::path::absolute(ledger_path)?.parent().map(Path::to_path_buf).unwrap_or_default().join("outputs")
        }
    };
    let output_root = std::path::absolute(&output_root).with_context(|| format!("{}", output_root.display()))?;
    let plan_dir = std::path::absolute(plan_path)?.parent().map(Path::to_path_buf).unwrap_or_default();
    let config = DispatchConfig {
        output_root,
        plan_dir,
        poll_interval: Duration::from_millis(args.poll_ms),
        unreachable_limit: Duration::from_secs(args.unreachable_secs),
    };
    let slurm = SlurmCli::default();
    let mut status_comment = args.status_comment.then(|| StatusComment::new(args, &plan)).transpose()?;
    let mut dispatcher = Dispatcher::new(&plan, &pool, &slurm, &mut ledger, config)?;
    let mut progress = Progress::new(std::io::stderr().is_terminal());
    let records = dispatcher.run(&mut |e| {
        progress.show(&e);
        if let Some(comment) = status_comment.as_mut() {
            if let Some(problem) = comment.observe(&e) {
                progress.line(format!("note: the status comment was not updated: {problem}"));
            }
        }
    })?;
    progress.finish();
    if let Some(comment) = status_comment.as_mut() {
        if let Some(problem) = comment.finish(&records) {
            eprintln!("warning: the final status comment was not posted: {problem}");
        }
    }
    report(&records, args.format)
}

/// Prints the records; exit 0 only when every point succeeded.
fn report(records: &[PointRecord], format: OutputFormat) -> anyhow::Result<ExitCode> {
    match format {
        // Through a value, so that the stored provenance is pretty-printed like the rest.
        OutputFormat::Json => println!("{}", serde_json::to_string_pretty(&serde_json::to_value(records)?)?),
        OutputFormat::Text => print!("{}", table(records)),
    }
    let all_ok = records.iter().all(|r| r.state == PointState::Succeeded);
    Ok(if all_ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn status(args: &DispatchArgs) -> anyhow::Result<ExitCode> {
    let Some(ledger_path) = &args.ledger else {
        anyhow::bail!("--status needs --ledger");
    };
    let sweep = match (&args.sweep, &args.plan) {
        (Some(id), _) => id.clone(),
        (None, Some(plan)) => load_plan(plan)?.sweep_id,
        (None, None) => anyhow::bail!("--status needs --sweep ID or --plan PLAN.json"),
    };
    anyhow::ensure!(ledger_path.exists(), "{}: no such ledger", ledger_path.display());
    let records = Ledger::open(ledger_path)?.points(&sweep)?;
    anyhow::ensure!(!records.is_empty(), "{}: no sweep {sweep:?}", ledger_path.display());
    report(&records, args.format)
}

/// One dispatcher per ledger: a second would race the first for the same points (the ledger's
/// checked transitions would stop it, but with a confusing error). The OS releases the lock when
/// the process dies, so a SIGKILLed dispatcher never blocks its own resume.
fn lock_ledger(ledger: &Path) -> anyhow::Result<std::fs::File> {
    let path = PathBuf::from(format!("{}.lock", ledger.display()));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("{}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
            "another `sweepgate dispatch` is running on {} (lock {}); wait for it, or stop it and run again to resume",
            ledger.display(),
            path.display()
        ),
        Err(std::fs::TryLockError::Error(e)) => Err(e).with_context(|| format!("locking {}", path.display())),
    }
}

fn cancel(args: &DispatchArgs) -> anyhow::Result<ExitCode> {
    let plan = args.plan.as_deref().map(load_plan).transpose()?;
    let repo = args.repo.clone().or_else(|| plan.as_ref().map(|p| p.repo.clone()));
    let pr = args.pr.or_else(|| plan.as_ref().map(|p| p.pr));
    let (Some(repo), Some(pr)) = (repo, pr) else {
        anyhow::bail!("--cancel needs --pr N and --repo OWNER/NAME (or a --plan that names them)");
    };
    let done = cancel_pull_request(&SlurmCli::default(), args.ledger.as_deref(), &repo, pr)?;
    if let Some(path) = &args.ledger {
        eprintln!("cancel recorded for {} sweep(s) of {repo} PR #{pr} in {}", done.sweeps.len(), path.display());
    }
    let ids: Vec<String> = done.jobs.iter().map(|j| j.0.clone()).collect();
    println!("cancelled {} job(s) of {repo} PR #{pr} (names {}*): {}", ids.len(), done.prefix, ids.join(" "));
    Ok(ExitCode::SUCCESS)
}

/// Untrusted text (sbatch stderr, reasons) on one table line: no control characters, bounded.
fn clean(text: &str, max: usize) -> String {
    let mut out: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).take(max).collect();
    if text.chars().count() > max {
        out.push('…');
    }
    out
}

/// `valid`, `invalid: <reasons>` or `-` from the record's power validation (provenance).
fn power_cell(record: &PointRecord) -> String {
    let provenance = record.provenance.as_ref().and_then(|p| p.value().ok());
    let checks = provenance.as_ref().and_then(|p| p.get("power")).and_then(|p| p.as_array());
    let Some(checks) = checks.filter(|c| !c.is_empty()) else {
        return "-".into();
    };
    let mut reasons: Vec<&str> =
        checks.iter().filter_map(|c| c.get("reasons")?.as_array()).flatten().filter_map(|r| r.as_str()).collect();
    reasons.sort_unstable();
    reasons.dedup();
    if reasons.is_empty() {
        "valid".into()
    } else {
        clean(&format!("invalid: {}", reasons.join(",")), 60)
    }
}

fn table(records: &[PointRecord]) -> String {
    let header = ["POINT", "FAMILY", "STATE", "JOB", "EXIT", "SOURCE", "POWER", "REASON"];
    let rows: Vec<[String; 8]> = records
        .iter()
        .map(|r| {
            [
                format!("{}{}", r.point_id, if r.is_canary { " (canary)" } else { "" }),
                clean(&r.family, 40),
                r.state.as_str().to_string(),
                r.job_id.as_ref().map(|j| j.0.clone()).unwrap_or_else(|| "-".into()),
                r.exit_code.map(|c| c.to_string()).unwrap_or_else(|| "-".into()),
                r.state_source.clone().unwrap_or_else(|| "-".into()),
                power_cell(r),
                r.reason.as_deref().map(|t| clean(t, 100)).unwrap_or_default(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == cells.len() {
                s.push_str(cell);
            } else {
                s.push_str(&format!("{cell:<w$}  "));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(&header.map(String::from));
    for row in &rows {
        out.push_str(&line(row));
    }
    let c = Counts::of(records);
    out.push_str(&format!(
        "{} point(s): {} succeeded, {} failed, {} cancelled, {} skipped\n",
        c.total, c.succeeded, c.failed, c.cancelled, c.skipped
    ));
    out
}

/// A redrawn bar on a terminal; one plain line per event otherwise (CI logs).
/// The sticky status comment on the plan's PR: posted at the first round, edited at most every
/// `--comment-every-secs` and at the end. A GitHub problem is reported, never fatal: the sweep
/// matters more than its comment.
struct StatusComment {
    runtime: tokio::runtime::Runtime,
    gh: OctoGitHub,
    repo: RepoRef,
    pr: u64,
    bot_login: String,
    sweep_id: String,
    every: Duration,
    last_post: Option<Instant>,
    counts: Counts,
    families: HashMap<String, String>,
    /// Points that ended other than succeeded, in the order they ended.
    problems: IndexMap<String, StatusRow>,
}

impl StatusComment {
    fn new(args: &DispatchArgs, plan: &Plan) -> anyhow::Result<StatusComment> {
        let token = args.github_token.clone().context("--status-comment needs --github-token or GITHUB_TOKEN")?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let gh = {
            let _entered = runtime.enter();
            OctoGitHub::with_token(
                &args.github_api_url,
                SecretString::from(token),
                RetryPolicy::default(),
                Arc::new(ApiMetrics::default()),
            )?
        };
        Ok(StatusComment {
            runtime,
            gh,
            repo: RepoRef::parse(&plan.repo)?,
            pr: plan.pr,
            bot_login: args.bot_login.clone(),
            sweep_id: plan.sweep_id.clone(),
            every: Duration::from_secs(args.comment_every_secs),
            last_post: None,
            counts: Counts::default(),
            families: plan.placed_points().iter().map(|p| (p.point.id.clone(), p.family.to_owned())).collect(),
            problems: IndexMap::new(),
        })
    }

    /// Follows the sweep; posts when due. Returns what went wrong with GitHub, if anything.
    fn observe(&mut self, event: &Event) -> Option<String> {
        match event {
            Event::Finished { point, state, job, detail } if *state != PointState::Succeeded => {
                let row = StatusRow {
                    point: point.clone(),
                    family: self.families.get(point).cloned().unwrap_or_default(),
                    state: *state,
                    job: job.as_ref().map(|j| j.0.clone()),
                    detail: detail.clone(),
                };
                self.problems.insert(point.clone(), row);
                None
            }
            Event::Tick(counts) => {
                self.counts = *counts;
                let due = self.last_post.is_none_or(|at| at.elapsed() >= self.every);
                due.then(|| self.post(false)).flatten()
            }
            _ => None,
        }
    }

    /// The final edit, from the ledger's records.
    fn finish(&mut self, records: &[PointRecord]) -> Option<String> {
        self.counts = Counts::of(records);
        self.problems = records
            .iter()
            .filter(|r| r.state != PointState::Succeeded)
            .map(|r| (r.point_id.clone(), r.into()))
            .collect();
        self.post(true)
    }

    fn post(&mut self, finished: bool) -> Option<String> {
        self.last_post = Some(Instant::now());
        let problems: Vec<StatusRow> = self.problems.values().cloned().collect();
        let body = match status_comment::render(&self.sweep_id, &self.counts, &problems, finished) {
            Ok(body) => body,
            Err(e) => return Some(e.to_string()),
        };
        let marker = status_comment::marker(self.pr, &self.sweep_id);
        let thread = Thread { repo: &self.repo, issue: self.pr, bot_login: &self.bot_login };
        let result = self.runtime.block_on(async {
            let comments = self.gh.list_issue_comments(&self.repo, self.pr).await?;
            sticky::upsert(&self.gh, thread, &comments, &marker, &marker, &body).await
        });
        result.err().map(|e| e.to_string())
    }
}

struct Progress {
    tty: bool,
    bar_shown: bool,
}

impl Progress {
    fn new(tty: bool) -> Progress {
        Progress { tty, bar_shown: false }
    }

    fn line(&mut self, text: String) {
        let mut err = std::io::stderr().lock();
        if self.bar_shown {
            let _ = write!(err, "\r\x1b[2K");
            self.bar_shown = false;
        }
        let _ = writeln!(err, "{} {}", chrono::Utc::now().format("%H:%M:%S"), clean(&text, 300));
    }

    fn show(&mut self, event: &Event) {
        match event {
            Event::Submitted { point, job } => self.line(format!("submitted {point} as job {job}")),
            Event::Started { point, job, nodes } => {
                self.line(format!("running   {point} (job {job} on {})", nodes.as_deref().unwrap_or("?")))
            }
            Event::Finished { point, state, job, detail } => self.line(format!(
                "{:<9} {point}{}{}",
                state.as_str(),
                job.as_ref().map(|j| format!(" (job {j})")).unwrap_or_default(),
                detail.as_ref().map(|d| format!(": {d}")).unwrap_or_default()
            )),
            Event::Notice(text) => self.line(format!("note: {text}")),
            Event::Tick(c) if self.tty => {
                let _ = write!(
                    std::io::stderr().lock(),
                    "\r\x1b[2K{} {}/{} done · {} active · {} failed",
                    super::progress_bar(c.done(), c.total, 30, '.'),
                    c.done(),
                    c.total,
                    c.active,
                    c.failed
                );
                self.bar_shown = true;
            }
            Event::Tick(_) => {}
        }
    }

    fn finish(&mut self) {
        if self.bar_shown {
            let _ = writeln!(std::io::stderr());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sweepgate::sweep::ledger::StoredJson;

    fn record(id: &str, state: PointState, job: Option<&str>, exit: Option<i64>, reason: Option<&str>) -> PointRecord {
        PointRecord {
            point_id: id.into(),
            ord: 0,
            family: "single-node 1k1k".into(),
            is_canary: id == "canary",
            state,
            job_name: format!("sg-x-{id}"),
            job_id: job.map(|j| sweepgate::sweep::scheduler::JobId(j.into())),
            sbatch_calls: 1,
            submit_info: None,
            cancel_reason: None,
            reason: reason.map(String::from),
            exit_code: exit,
            state_source: job.map(|_| "squeue".into()),
            provenance: None,
        }
    }

    #[test]
    fn final_table() {
        let with_power = |mut r: PointRecord, reasons: serde_json::Value| {
            let power = serde_json::json!({"power": [{"result": "r.json", "reasons": reasons}]});
            r.provenance = Some(StoredJson::from_value(&power).unwrap());
            r
        };
        let records = [
            with_power(record("canary", PointState::Succeeded, Some("7"), Some(0), None), serde_json::json!([])),
            with_power(
                record("tp2-c2", PointState::Succeeded, Some("10"), Some(0), None),
                serde_json::json!(["sampling_gap_exceeded", "expected_gpu_count_mismatch"]),
            ),
            record("tp2-c4", PointState::Failed, Some("8"), Some(3), Some("exit code 3 (NonZeroExitCode)")),
            record("tp2-c8", PointState::TimedOut, Some("9"), Some(0), Some("time limit reached (TimeLimit)")),
            record(
                "tp4-c4",
                PointState::Cancelled,
                None,
                None,
                Some("fail-fast: tp2-c4 in family single-node 1k1k ended failed"),
            ),
            record("tp8-c4", PointState::Skipped, None, None, Some("evil\n\u{1b}[31mreason")),
        ];
        insta::assert_snapshot!(table(&records));
    }

    #[test]
    fn clean_strips_control_characters_and_bounds_length() {
        assert_eq!(clean("a\nb\x1b[31m", 10), "a b [31m");
        assert_eq!(clean("abcdef", 3), "abc…");
    }
}
