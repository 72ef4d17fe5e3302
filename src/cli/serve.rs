use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use secrecy::SecretString;
use sweepgate::github::octo::{AppClients, OctoGitHub, RetryPolicy};
use sweepgate::github::outbox::OutboxGitHub;
use sweepgate::github::ApiMetrics;
use sweepgate::server::handlers::BotConfig;
use sweepgate::server::metrics::Metrics;
use sweepgate::server::{build, Clients, ServerConfig, Single};

/// Run the GitHub App webhook server. Without App credentials or a token it runs in dry-run
/// mode: decisions are computed and what would be posted goes to a SQLite outbox.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "SWEEPGATE_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Webhook secret; repeat (or comma-separate in the env var) to accept several during rotation.
    #[arg(
        long = "webhook-secret",
        env = "SWEEPGATE_WEBHOOK_SECRETS",
        value_delimiter = ',',
        required = true,
        hide_env_values = true
    )]
    pub webhook_secrets: Vec<String>,
    /// GitHub App id (with --private-key-file).
    #[arg(long, env = "SWEEPGATE_APP_ID", requires = "private_key_file")]
    pub app_id: Option<u64>,
    /// GitHub App private key (PEM).
    #[arg(long, env = "SWEEPGATE_PRIVATE_KEY_FILE", requires = "app_id")]
    pub private_key_file: Option<PathBuf>,
    /// A token instead of App credentials (one installation, e.g. for trials).
    #[arg(long, env = "SWEEPGATE_GITHUB_TOKEN", hide_env_values = true, conflicts_with = "app_id")]
    pub github_token: Option<String>,
    #[arg(long, env = "SWEEPGATE_GITHUB_API_URL", default_value = "https://api.github.com")]
    pub github_api_url: String,
    /// The bot's own login (its comments carry the trusted markers).
    #[arg(long, env = "SWEEPGATE_BOT_LOGIN", default_value = "sweepgate[bot]")]
    pub bot_login: String,
    /// Commit-status context of the label policy.
    #[arg(long, env = "SWEEPGATE_STATUS_CONTEXT", default_value = "sweepgate/sweep-labels")]
    pub status_context: String,
    /// Dry-run outbox (SQLite).
    #[arg(long, env = "SWEEPGATE_OUTBOX", default_value = ".sweepgate/outbox.sqlite")]
    pub outbox: PathBuf,
    #[arg(long, env = "SWEEPGATE_WORKERS", default_value_t = 4)]
    pub workers: usize,
    /// Events waiting per worker before deliveries get 503.
    #[arg(long, env = "SWEEPGATE_QUEUE_CAPACITY", default_value_t = 1024)]
    pub queue_capacity: usize,
    #[command(flatten)]
    pub verifier: super::collect::VerifierArgs,
}

pub fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(serve(args))?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(args: &ServeArgs) -> anyhow::Result<()> {
    let config = ServerConfig {
        secrets: args.webhook_secrets.iter().filter(|s| !s.is_empty()).map(|s| SecretString::from(s.clone())).collect(),
        bot: BotConfig {
            bot_login: args.bot_login.clone(),
            status_context: args.status_context.clone(),
            verify: args.verifier.verify_config(),
            ..BotConfig::default()
        },
        workers: args.workers,
        queue_capacity: args.queue_capacity,
        ..ServerConfig::default()
    };
    anyhow::ensure!(!config.secrets.is_empty(), "--webhook-secret must not be empty");
    let api = Arc::new(ApiMetrics::default());
    let metrics = Arc::new(Metrics::new(api.clone()));
    let listener =
        tokio::net::TcpListener::bind(args.listen).await.with_context(|| format!("binding {}", args.listen))?;
    let addr = listener.local_addr()?;
    match (&args.app_id, &args.private_key_file, &args.github_token) {
        (Some(app_id), Some(key_file), _) => {
            let pem = std::fs::read(key_file).with_context(|| format!("reading {}", key_file.display()))?;
            let clients = AppClients::new(&args.github_api_url, *app_id, &pem, RetryPolicy::default(), api)?;
            run_server(listener, addr, "GitHub App", config, Arc::new(clients), metrics).await
        }
        (_, _, Some(token)) => {
            let gh = OctoGitHub::with_token(
                &args.github_api_url,
                SecretString::from(token.clone()),
                RetryPolicy::default(),
                api,
            )?;
            run_server(listener, addr, "token", config, Arc::new(Single(Arc::new(gh))), metrics).await
        }
        _ => {
            let outbox = OutboxGitHub::open(&args.outbox, &args.bot_login)?;
            let mode = format!("dry-run (outbox {})", args.outbox.display());
            run_server(listener, addr, &mode, config, Arc::new(Single(Arc::new(outbox))), metrics).await
        }
    }
}

async fn run_server<C: Clients>(
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
    mode: &str,
    config: ServerConfig,
    clients: Arc<C>,
    metrics: Arc<Metrics>,
) -> anyhow::Result<()> {
    let server = build(config, clients, metrics);
    // The first stdout line is machine-readable: tests and scripts read the bound port from it.
    println!("listening on http://{addr}");
    std::io::stdout().flush()?;
    tracing::info!(%addr, mode, "sweepgate serve started");
    axum::serve(listener, server.router).with_graceful_shutdown(shutdown_signal()).await?;
    tracing::info!("sweepgate serve stopped");
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(term) => term,
            Err(_) => {
                let _ = ctrl_c.await;
                return;
            }
        };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
