//! `sweepgate queue list|retry ID|drop ID --state FILE`: the operator's view of the durable
//! event queue. Safe while the server runs (SQLite WAL): a retried delivery is picked up by the
//! running server within seconds, a dropped one is skipped when its turn comes.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use sweepgate::server::queue::QueueStore;
use sweepgate::server::state::now_ms;

#[derive(Debug, clap::Args)]
pub struct QueueArgs {
    /// The server's state file (`serve --state`).
    #[arg(long, env = "SWEEPGATE_STATE", default_value = ".sweepgate/state.sqlite", global = true)]
    pub state: PathBuf,
    #[command(subcommand)]
    pub command: QueueCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum QueueCommand {
    /// The newest deliveries: id, state, attempts, event, PR, age, last error.
    List {
        /// How many rows.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Queue a failed, superseded or dropped delivery again.
    Retry { delivery: String },
    /// Drop a queued or failed delivery (it is never processed unless retried).
    Drop { delivery: String },
}

pub fn run(args: &QueueArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(args.state.exists(), "no state file at {} (pass the server's --state FILE)", args.state.display());
    // Retention only matters to the server: the CLI opens with bounds that prune nothing.
    let store = QueueStore::open(&args.state, usize::MAX, Duration::MAX)?;
    match &args.command {
        QueueCommand::List { limit } => {
            let now = now_ms();
            println!("delivery\tstate\tattempts\tevent\tpr\tage_s\terror");
            for row in store.list(*limit)? {
                let age = (now - row.received_ms).max(0) / 1000;
                println!(
                    "{}\t{}\t{}\t{}\t{}\t{age}\t{}",
                    row.delivery,
                    row.state.as_str(),
                    row.attempts,
                    row.event,
                    row.pr.as_deref().unwrap_or("-"),
                    one_line(row.error.as_deref().unwrap_or("-")),
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        QueueCommand::Retry { delivery } => {
            if store.retry(delivery)? {
                println!("{delivery}: queued again");
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("{delivery}: nothing to retry (unknown, still queued, or done with no body kept)");
                Ok(ExitCode::from(2))
            }
        }
        QueueCommand::Drop { delivery } => {
            if store.drop_row(delivery, now_ms())? {
                println!("{delivery}: dropped");
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("{delivery}: nothing to drop (unknown, or already finished)");
                Ok(ExitCode::from(2))
            }
        }
    }
}

/// Errors may span lines; a list row stays one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
