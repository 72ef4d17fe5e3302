//! `sweepgate launch`: what each master-config entry runs, from the launch model (issue 22).

use std::process::ExitCode;

use serde_json::json;
use sweepgate::domain::launch::{launch_files, ConfigLaunch, LaunchTree};

use super::{OutputFormat, RepoArgs};

/// Print the runner launchers, benchmark script, recipes, unresolved facts and classed settings
/// of every master-config entry (or the named ones).
#[derive(Debug, clap::Args)]
pub struct LaunchArgs {
    #[command(flatten)]
    pub repo: RepoArgs,
    /// Only this master-config key (repeatable).
    #[arg(long = "config")]
    pub configs: Vec<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutputFormat,
}

/// The JSON shape, plus `jobs` (every runner launcher × variant the first job stands
/// for), the settings sources that could not be read (`gaps`) and the recipes read from an
/// external srt-slurm checkout (`external`).
fn to_json(c: &ConfigLaunch) -> serde_json::Value {
    let first = c.jobs.iter().find(|j| j.script_exists).or_else(|| c.jobs.first());
    let mut out = json!({
        "config": c.config,
        "runners": c.runners,
        "launcher": first.and_then(|j| j.launcher.clone()),
        "script": first.and_then(|j| j.script.clone()),
        "script_exists": first.is_some_and(|j| j.script_exists),
        "recipes": c.recipes.iter().map(|r| &r.path).collect::<Vec<_>>(),
        "unresolved": c.unresolved.iter().map(|u| json!({"what": u.what, "why": u.why, "at": u.at})).collect::<Vec<_>>(),
        "settings": c.settings,
        "gaps": c.gaps,
        "external": c
            .recipes
            .iter()
            .filter_map(|r| r.external.as_ref().map(|checkout| json!({"checkout": checkout, "path": r.path})))
            .collect::<Vec<_>>(),
        "jobs": c.jobs,
    });
    if !c.clusters.is_empty() {
        out["clusters"] = json!(c.clusters);
    }
    out
}

fn text(c: &ConfigLaunch) -> String {
    let mut out = format!("{} ({}:{})\n  runners: {}\n", c.config, c.file, c.line, c.runners.join(", "));
    if !c.clusters.is_empty() {
        out.push_str(&format!("  clusters: {}\n", c.clusters.join(", ")));
    }
    for j in &c.jobs {
        let launcher = j.launcher.as_deref().unwrap_or("(no launcher in the tree: naming rule)");
        let native = j.native.as_ref().map(|p| format!("native srt-slurm on pool profile {p}"));
        let script = j.script.as_deref().or(native.as_deref()).unwrap_or("-");
        let mark = if j.script_exists || j.native.is_some() { "" } else { " [missing]" };
        out.push_str(&format!("  job {} {}: {launcher} -> {script}{mark}\n", j.runner, j.variant));
    }
    for r in &c.recipes {
        let mark = if r.exists { "" } else { " [missing]" };
        out.push_str(&format!("  recipe {}{mark} ({})\n", r.path, r.at));
    }
    for u in &c.unresolved {
        out.push_str(&format!("  unresolved {} {} ({})\n", u.why, u.what, u.at));
    }
    for g in &c.gaps {
        out.push_str(&format!("  settings unread {}\n", serde_json::to_string(g).unwrap_or_default()));
    }
    for s in &c.settings {
        out.push_str(&format!(
            "  setting {} {}={} [{} {}] {}\n",
            s.class.as_str(),
            s.name,
            s.value,
            s.role,
            s.variant,
            s.at
        ));
    }
    out
}

pub fn run(args: &LaunchArgs) -> anyhow::Result<ExitCode> {
    let tree = launch_files(args.repo.open()?.as_ref())?;
    let model = LaunchTree::new(&tree).all(&args.configs);
    if let Some(missing) = args.configs.iter().find(|k| !model.iter().any(|c| &c.config == *k)) {
        anyhow::bail!("--config {missing}: no such master-config entry");
    }
    match args.format {
        OutputFormat::Json => {
            // One config's JSON at a time, straight to stdout: the whole document as one value
            // and one string cost a third of the peak memory on a real tree.
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            let mut json = serde_json::Serializer::pretty(&mut out);
            serde::Serializer::collect_seq(&mut json, model.iter().map(to_json))?;
            std::io::Write::write_all(&mut out, b"\n")?;
            std::io::Write::flush(&mut out)?;
        }
        OutputFormat::Text => model.iter().for_each(|c| print!("{}", text(c))),
    }
    Ok(ExitCode::SUCCESS)
}
