use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use sha2::{Digest, Sha256};
use sweepgate::github::webhook::sign;

/// Sign a recorded webhook payload and send it to a running `sweepgate serve`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The payload (JSON file, as GitHub sends it).
    #[arg(long)]
    pub event: PathBuf,
    /// The `X-GitHub-Event` name, e.g. pull_request or issue_comment.
    #[arg(long)]
    pub event_name: String,
    /// The server's webhook URL.
    #[arg(long, default_value = "http://127.0.0.1:8080/webhook")]
    pub url: String,
    #[arg(long, env = "SWEEPGATE_REPLAY_SECRET", hide_env_values = true)]
    pub secret: String,
    /// `X-GitHub-Delivery` id (default: derived from the payload and the current time).
    #[arg(long)]
    pub delivery: Option<String>,
}

const MAX_PAYLOAD: u64 = 25 * 1024 * 1024;

pub fn run(args: &ReplayArgs) -> anyhow::Result<ExitCode> {
    let size = std::fs::metadata(&args.event).with_context(|| format!("reading {}", args.event.display()))?.len();
    anyhow::ensure!(size <= MAX_PAYLOAD, "{}: {size} bytes is more than GitHub's 25 MiB", args.event.display());
    let body = std::fs::read(&args.event).with_context(|| format!("reading {}", args.event.display()))?;
    let delivery = args.delivery.clone().unwrap_or_else(|| {
        let mut hash = Sha256::new();
        hash.update(&body);
        hash.update(chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default().to_le_bytes());
        hex::encode(&hash.finalize()[..16])
    });
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let (status, text) = runtime.block_on(async {
        let response = reqwest::Client::new()
            .post(&args.url)
            .header("content-type", "application/json")
            .header("x-github-event", &args.event_name)
            .header("x-github-delivery", &delivery)
            .header("x-hub-signature-256", sign(args.secret.as_bytes(), &body))
            .body(body)
            .send()
            .await
            .with_context(|| format!("POST {}", args.url))?;
        let status = response.status();
        anyhow::Ok((status, response.text().await.unwrap_or_default()))
    })?;
    println!("{} {} (delivery {delivery})", status.as_u16(), text.trim());
    Ok(if status.is_success() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
