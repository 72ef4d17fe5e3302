use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::parser::ValueSource;
use clap::ArgMatches;
use secrecy::SecretString;
use sweepgate::github::octo::{AppClients, OctoGitHub, RetryPolicy};
use sweepgate::github::outbox::OutboxGitHub;
use sweepgate::github::ApiMetrics;
use sweepgate::server::config::ServeFile;
use sweepgate::server::details::DetailsStore;
use sweepgate::server::handlers::{BotConfig, SlurmCancel};
use sweepgate::server::metrics::Metrics;
use sweepgate::server::{build, Clients, ServerConfig, Single};

/// Run the GitHub App webhook server. Without App credentials or a token it runs in dry-run
/// mode: decisions are computed and what would be posted goes to a SQLite outbox.
/// Precedence of every setting: flag, then `SWEEPGATE_*` variable, then `--config` file, then
/// the built-in default.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// TOML file with the same settings (keys named like the flags, e.g. `queue_capacity`).
    #[arg(long, env = "SWEEPGATE_CONFIG")]
    pub config: Option<PathBuf>,
    /// Print the effective settings (secrets redacted) and where each came from, then exit.
    #[arg(long)]
    pub print_config: bool,
    /// Address to listen on.
    #[arg(long, env = "SWEEPGATE_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Webhook secret; repeat (or comma-separate in the env var) to accept several during
    /// rotation. Required here, in the env var, or in the config file.
    #[arg(long = "webhook-secret", env = "SWEEPGATE_WEBHOOK_SECRETS", value_delimiter = ',', hide_env_values = true)]
    pub webhook_secrets: Vec<String>,
    /// GitHub App id (with --private-key-file).
    #[arg(long, env = "SWEEPGATE_APP_ID")]
    pub app_id: Option<u64>,
    /// GitHub App private key (PEM).
    #[arg(long, env = "SWEEPGATE_PRIVATE_KEY_FILE")]
    pub private_key_file: Option<PathBuf>,
    /// A token instead of App credentials (one installation, e.g. for trials).
    #[arg(long, env = "SWEEPGATE_GITHUB_TOKEN", hide_env_values = true)]
    pub github_token: Option<String>,
    #[arg(long, env = "SWEEPGATE_GITHUB_API_URL", default_value = "https://api.github.com")]
    pub github_api_url: String,
    /// Seconds one GitHub API call may take before it counts as failed (and is retried when
    /// that is safe).
    #[arg(long, env = "SWEEPGATE_GITHUB_TIMEOUT_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub github_timeout_secs: u64,
    /// The bot's own login (its comments carry the trusted markers).
    #[arg(long, env = "SWEEPGATE_BOT_LOGIN", default_value = "sweepgate[bot]")]
    pub bot_login: String,
    /// Commit-status context of the label policy.
    #[arg(long, env = "SWEEPGATE_STATUS_CONTEXT", default_value = "sweepgate/sweep-labels")]
    pub status_context: String,
    /// Dry-run outbox (SQLite).
    #[arg(long, env = "SWEEPGATE_OUTBOX", default_value = ".sweepgate/outbox.sqlite")]
    pub outbox: PathBuf,
    /// Durable server state (SQLite): accepted delivery ids survive restarts.
    #[arg(long, env = "SWEEPGATE_STATE", default_value = ".sweepgate/state.sqlite")]
    pub state: PathBuf,
    #[arg(long, env = "SWEEPGATE_WORKERS", default_value_t = 4)]
    pub workers: usize,
    /// Events waiting per worker before deliveries get 503.
    #[arg(long, env = "SWEEPGATE_QUEUE_CAPACITY", default_value_t = 1024)]
    pub queue_capacity: usize,
    /// Every N seconds, re-run the label handler on the open PRs of every repository seen, so
    /// a missed delivery is repaired (0: off).
    #[arg(long, env = "SWEEPGATE_RECONCILE_SECS", default_value_t = 0)]
    pub reconcile_secs: u64,
    /// Most PRs one reconcile pass queues (the most recently updated first).
    #[arg(long, env = "SWEEPGATE_RECONCILE_MAX_PRS", default_value_t = 100)]
    pub reconcile_max_prs: usize,
    /// Cancel a PR's Slurm jobs (names `sg-<repo>-pr<N>-…`) when it is closed, gets a new push,
    /// or stops qualifying for a sweep (primary label removed, draft); needs Slurm on this host.
    #[arg(long, env = "SWEEPGATE_CANCEL_SLURM_JOBS")]
    pub cancel_slurm_jobs: bool,
    /// The dispatcher's ledger, where a cancel is recorded first so a running dispatcher stops
    /// submitting (with --cancel-slurm-jobs).
    #[arg(long, env = "SWEEPGATE_LEDGER")]
    pub dispatch_ledger: Option<PathBuf>,
    #[command(flatten)]
    pub verifier: super::collect::VerifierArgs,
    /// The URL this server is reachable at: serves /prs/{owner}/{repo}/{number} and links every
    /// status to it.
    #[arg(long, env = "SWEEPGATE_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// The details page's SQLite store [default: the state file with `.details.sqlite`].
    #[arg(long, env = "SWEEPGATE_DETAILS_DB")]
    pub details_db: Option<PathBuf>,
    /// Also serve details pages of private repositories.
    #[arg(long, env = "SWEEPGATE_DETAILS_PRIVATE")]
    pub details_private: bool,
}

/// Where a setting's value came from.
#[derive(Debug, Clone, Copy)]
enum Source {
    Flag,
    Env,
    ConfigFile,
    Default,
}

impl Source {
    fn label(self) -> &'static str {
        match self {
            Source::Flag => "flag",
            Source::Env => "env",
            Source::ConfigFile => "config",
            Source::Default => "default",
        }
    }
}

/// Fills every setting that neither a flag nor an env var gave from the config file, and
/// records each setting's value (secrets redacted) and source for `--print-config`.
struct Layers<'a> {
    matches: &'a ArgMatches,
    shown: Vec<(&'static str, Option<toml::Value>, Source)>,
}

impl Layers<'_> {
    fn source(&self, id: &str, in_file: bool) -> Source {
        match self.matches.value_source(id) {
            Some(ValueSource::CommandLine) => Source::Flag,
            Some(ValueSource::EnvVariable) => Source::Env,
            _ if in_file => Source::ConfigFile,
            _ => Source::Default,
        }
    }

    fn take<T>(&mut self, id: &'static str, slot: &mut T, from_file: Option<T>) -> Source {
        let source = self.source(id, from_file.is_some());
        if let (Source::ConfigFile, Some(value)) = (source, from_file) {
            *slot = value;
        }
        source
    }

    fn set<T: serde::Serialize>(&mut self, id: &'static str, slot: &mut T, from_file: Option<T>) {
        let source = self.take(id, slot, from_file);
        self.shown.push((id, toml::Value::try_from(&*slot).ok(), source));
    }

    fn set_secret<T: Redact>(&mut self, id: &'static str, slot: &mut T, from_file: Option<T>) {
        let source = self.take(id, slot, from_file);
        self.shown.push((id, slot.redacted().map(toml::Value::String), source));
    }
}

/// How a secret setting is shown: how many values it holds, never the values.
trait Redact {
    fn redacted(&self) -> Option<String>;
}

impl Redact for Vec<String> {
    fn redacted(&self) -> Option<String> {
        Some(format!("<{} redacted>", self.len()))
    }
}

impl Redact for Option<String> {
    fn redacted(&self) -> Option<String> {
        self.as_ref().map(|_| "<redacted>".to_string())
    }
}

/// The settings after layering flags, env vars and the config file over the defaults.
fn layered(args: &ServeArgs, matches: &ArgMatches) -> anyhow::Result<(ServeArgs, String)> {
    let file = match &args.config {
        Some(path) => ServeFile::load(path)?,
        None => ServeFile::default(),
    };
    let mut a = args.clone();
    let mut l = Layers { matches, shown: Vec::new() };
    l.set("listen", &mut a.listen, file.listen);
    l.set_secret("webhook_secrets", &mut a.webhook_secrets, file.webhook_secrets);
    l.set("app_id", &mut a.app_id, file.app_id.map(Some));
    l.set("private_key_file", &mut a.private_key_file, file.private_key_file.map(Some));
    l.set_secret("github_token", &mut a.github_token, file.github_token.map(Some));
    l.set("github_api_url", &mut a.github_api_url, file.github_api_url);
    l.set("github_timeout_secs", &mut a.github_timeout_secs, file.github_timeout_secs);
    l.set("bot_login", &mut a.bot_login, file.bot_login);
    l.set("status_context", &mut a.status_context, file.status_context);
    l.set("outbox", &mut a.outbox, file.outbox);
    l.set("state", &mut a.state, file.state);
    l.set("workers", &mut a.workers, file.workers);
    l.set("queue_capacity", &mut a.queue_capacity, file.queue_capacity);
    l.set("reconcile_secs", &mut a.reconcile_secs, file.reconcile_secs);
    l.set("reconcile_max_prs", &mut a.reconcile_max_prs, file.reconcile_max_prs);
    l.set("cancel_slurm_jobs", &mut a.cancel_slurm_jobs, file.cancel_slurm_jobs);
    l.set("dispatch_ledger", &mut a.dispatch_ledger, file.dispatch_ledger.map(Some));
    let v = &mut a.verifier;
    l.set("signoff_status_context", &mut v.signoff_status_context, file.signoff_status_context);
    l.set("advisory", &mut v.advisory, file.advisory);
    l.set("reviewers", &mut v.reviewers, file.reviewers);
    l.set("upstream_github_api", &mut v.upstream.upstream_github_api, file.upstream_github_api);
    l.set("huggingface_url", &mut v.upstream.huggingface_url, file.huggingface_url);
    l.set("registries", &mut v.upstream.registries, file.registries.map(|r| r.into_iter().collect()));
    l.set("public_url", &mut a.public_url, file.public_url.map(Some));
    l.set("details_db", &mut a.details_db, file.details_db.map(Some));
    l.set("details_private", &mut a.details_private, file.details_private);
    let mut shown = String::new();
    for (id, value, source) in l.shown {
        match value {
            Some(value) => shown.push_str(&format!("{id} = {value}  # {}\n", source.label())),
            None => shown.push_str(&format!("# {id} is not set\n")),
        }
    }
    a.webhook_secrets.retain(|s| !s.is_empty());
    anyhow::ensure!(
        !a.webhook_secrets.is_empty(),
        "no webhook secret: pass --webhook-secret, set SWEEPGATE_WEBHOOK_SECRETS, or set webhook_secrets or \
         webhook_secrets_file in the --config file"
    );
    anyhow::ensure!(a.app_id.is_some() == a.private_key_file.is_some(), "app_id and private_key_file go together");
    anyhow::ensure!(
        a.app_id.is_none() || a.github_token.is_none(),
        "both GitHub App credentials (app_id) and a github_token are set; keep one"
    );
    Ok((a, shown))
}

pub fn run(args: &ServeArgs, matches: &ArgMatches) -> anyhow::Result<ExitCode> {
    let (args, shown) = layered(args, matches)?;
    if args.print_config {
        print!("{shown}");
        return Ok(ExitCode::SUCCESS);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(serve(&args))?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(args: &ServeArgs) -> anyhow::Result<()> {
    let mut verify = args.verifier.verify_config();
    verify.details = details_store(args)?;
    let config = ServerConfig {
        secrets: args.webhook_secrets.iter().map(|s| SecretString::from(s.clone())).collect(),
        bot: BotConfig {
            bot_login: args.bot_login.clone(),
            status_context: args.status_context.clone(),
            verify,
            slurm_cancel: args.cancel_slurm_jobs.then(|| SlurmCancel { ledger: args.dispatch_ledger.clone() }),
            ..BotConfig::default()
        },
        workers: args.workers,
        queue_capacity: args.queue_capacity,
        state_file: args.state.clone(),
        reconcile_every: Some(Duration::from_secs(args.reconcile_secs)),
        reconcile_max_prs: args.reconcile_max_prs,
        ..ServerConfig::default()
    };
    let retry =
        RetryPolicy { request_timeout: Duration::from_secs(args.github_timeout_secs), ..RetryPolicy::default() };
    let api = Arc::new(ApiMetrics::default());
    let metrics = Arc::new(Metrics::new(api.clone()));
    let listener =
        tokio::net::TcpListener::bind(args.listen).await.with_context(|| format!("binding {}", args.listen))?;
    let addr = listener.local_addr()?;
    match (&args.app_id, &args.private_key_file, &args.github_token) {
        (Some(app_id), Some(key_file), _) => {
            let pem = std::fs::read(key_file).with_context(|| format!("reading {}", key_file.display()))?;
            let clients = AppClients::new(&args.github_api_url, *app_id, &pem, retry, api)?;
            run_server(listener, addr, "GitHub App", config, Arc::new(clients), metrics).await
        }
        (_, _, Some(token)) => {
            let gh = OctoGitHub::with_token(&args.github_api_url, SecretString::from(token.clone()), retry, api)?;
            run_server(listener, addr, "token", config, Arc::new(Single(Arc::new(gh))), metrics).await
        }
        _ => {
            let outbox = OutboxGitHub::open(&args.outbox, &args.bot_login)?;
            let mode = format!("dry-run (outbox {})", args.outbox.display());
            run_server(listener, addr, &mode, config, Arc::new(Single(Arc::new(outbox))), metrics).await
        }
    }
}

/// The details page's store when `--public-url` is set.
fn details_store(args: &ServeArgs) -> anyhow::Result<Option<Arc<DetailsStore>>> {
    let Some(public_url) = &args.public_url else { return Ok(None) };
    let path = args.details_db.clone().unwrap_or_else(|| args.state.with_extension("details.sqlite"));
    Ok(Some(Arc::new(DetailsStore::open(&path, public_url, args.details_private)?)))
}

async fn run_server<C: Clients>(
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
    mode: &str,
    config: ServerConfig,
    clients: Arc<C>,
    metrics: Arc<Metrics>,
) -> anyhow::Result<()> {
    let server = build(config, clients, metrics)?;
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
