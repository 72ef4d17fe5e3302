//! `sweepgate generate test-config|full-sweep`: the generator's rows as upstream prints them.

use std::io::Write;
use std::process::ExitCode;

use sweepgate::domain::changelog::ScenarioType;
use sweepgate::matrix::generate::{self, CommonOptions, EvalFlags, FullSweepOptions, SeqLen, TestConfigOptions};
use sweepgate::matrix::inputs;
use sweepgate::matrix::json::python_dumps;
use sweepgate::matrix::MatrixError;
use sweepgate::repo::Layout;

use super::RepoArgs;

/// Generate matrix rows from the master configs (upstream's generate_sweep_configs.py).
#[derive(Debug, clap::Args)]
pub struct GenerateArgs {
    #[command(subcommand)]
    pub command: GenerateCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum GenerateCommand {
    /// Rows for explicit config keys (fnmatch globs allowed).
    TestConfig(TestConfigArgs),
    /// Rows for every config, through optional filters.
    FullSweep(FullSweepArgs),
}

#[derive(Debug, clap::Args)]
pub struct CommonArgs {
    #[command(flatten)]
    pub repo: RepoArgs,
    /// Throughput rows only.
    #[arg(long, conflicts_with = "evals_only")]
    pub no_evals: bool,
    /// Only the eval rows.
    #[arg(long)]
    pub evals_only: bool,
    /// Expand eval selection (every 8k1k point, every agentic point).
    #[arg(long)]
    pub all_evals: bool,
    /// Expand each config to the runner nodes whose name contains this text.
    #[arg(long)]
    pub runner_node_filter: Option<String>,
    /// Scenario types to include.
    #[arg(long, num_args = 1.., value_parser = ["fixed-seq-len", "agentic-coding"])]
    pub scenario_type: Option<Vec<String>>,
}

#[derive(Debug, clap::Args)]
pub struct TestConfigArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[arg(long, num_args = 1.., required = true)]
    pub config_keys: Vec<String>,
    /// Keep only these concurrencies.
    #[arg(long, num_args = 1..)]
    pub conc: Option<Vec<i64>>,
    #[arg(long, num_args = 1.., value_parser = ["1k1k", "8k1k"])]
    pub seq_lens: Option<Vec<String>>,
}

#[derive(Debug, clap::Args)]
pub struct FullSweepArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Keep configs whose key starts with one of these.
    #[arg(long, num_args = 1..)]
    pub model_prefix: Option<Vec<String>>,
    #[arg(long, num_args = 1..)]
    pub precision: Option<Vec<String>>,
    #[arg(long, num_args = 1..)]
    pub framework: Option<Vec<String>>,
    #[arg(long, num_args = 1..)]
    pub runner_type: Option<Vec<String>>,
    #[arg(long, num_args = 1.., value_parser = ["1k1k", "8k1k"])]
    pub seq_lens: Option<Vec<String>>,
    #[arg(long, default_value_t = 2, allow_negative_numbers = true)]
    pub step_size: i64,
    #[arg(long, allow_negative_numbers = true)]
    pub min_conc: Option<i64>,
    #[arg(long, allow_negative_numbers = true)]
    pub max_conc: Option<i64>,
    #[arg(long, allow_negative_numbers = true)]
    pub max_tp: Option<i64>,
    #[arg(long, allow_negative_numbers = true)]
    pub max_ep: Option<i64>,
    #[arg(long)]
    pub single_node: bool,
    #[arg(long)]
    pub multi_node: bool,
}

fn seq_lens(values: &Option<Vec<String>>) -> Option<Vec<SeqLen>> {
    values.as_ref().map(|v| v.iter().filter_map(|s| SeqLen::parse(s)).collect())
}

impl CommonArgs {
    fn options(&self) -> CommonOptions {
        CommonOptions {
            evals: EvalFlags { no_evals: self.no_evals, evals_only: self.evals_only, all_evals: self.all_evals },
            runner_node_filter: self.runner_node_filter.clone(),
            scenario_types: self
                .scenario_type
                .as_ref()
                .map(|v| v.iter().filter_map(|s| ScenarioType::parse(s)).collect()),
            max_rows: None,
        }
    }
}

pub fn run(args: &GenerateArgs) -> anyhow::Result<ExitCode> {
    let common = match &args.command {
        GenerateCommand::TestConfig(a) => &a.common,
        GenerateCommand::FullSweep(a) => &a.common,
    };
    let tree = common.repo.open()?;
    // Decision TD1: an entry that cannot be read is named, and every other entry gives its rows.
    let mut invalid = Vec::new();
    let result = inputs::read_each(tree.as_ref(), &Layout::default()).and_then(|(inputs, bad)| {
        invalid = bad;
        generate_rows(&args.command, &inputs)
    });
    for e in &invalid {
        eprintln!("error: {e}");
    }
    match result {
        Ok(rows) => {
            let value = serde_json::Value::Array(rows.into_iter().map(serde_json::Value::Object).collect());
            writeln!(std::io::stdout().lock(), "{}", python_dumps(&value))?;
            Ok(if invalid.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Err(e @ MatrixError::Usage(_)) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(2))
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

fn generate_rows(
    command: &GenerateCommand,
    inputs: &inputs::Inputs,
) -> Result<Vec<sweepgate::matrix::Row>, MatrixError> {
    match command {
        GenerateCommand::TestConfig(a) => {
            let options = TestConfigOptions {
                config_keys: a.config_keys.clone(),
                conc: a.conc.clone(),
                seq_lens: seq_lens(&a.seq_lens),
            };
            generate::test_config(&inputs.configs, &inputs.runners, &options, &a.common.options())
        }
        GenerateCommand::FullSweep(a) => {
            let options = FullSweepOptions {
                model_prefix: a.model_prefix.clone(),
                precision: a.precision.clone(),
                framework: a.framework.clone(),
                runner_type: a.runner_type.clone(),
                seq_lens: seq_lens(&a.seq_lens),
                step_size: a.step_size,
                min_conc: a.min_conc,
                max_conc: a.max_conc,
                max_tp: a.max_tp,
                max_ep: a.max_ep,
                single_node: a.single_node,
                multi_node: a.multi_node,
            };
            generate::full_sweep(&inputs.configs, &inputs.runners, &options, &a.common.options())
        }
    }
}
