//! `sweepgate app-manifest`: the GitHub App manifest for a host (`github::app`, the table the
//! server's calls and events are checked against).

use std::process::ExitCode;

use sweepgate::github::app;

#[derive(Debug, clap::Args)]
pub struct AppManifestArgs {
    /// The server's public webhook URL (`https://HOST/webhook`).
    #[arg(long, default_value = app::EXAMPLE_WEBHOOK_URL)]
    pub webhook_url: String,
}

pub fn run(args: &AppManifestArgs) -> anyhow::Result<ExitCode> {
    println!("{}", serde_json::to_string_pretty(&app::manifest(&args.webhook_url))?);
    Ok(ExitCode::SUCCESS)
}
