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
use sweepgate::evidence::collect::sweepgate::{parse_sources, SweepOptions};
use sweepgate::github::octo::{AppClients, OctoGitHub, RetryPolicy};
use sweepgate::github::outbox::OutboxGitHub;
use sweepgate::github::ApiMetrics;
use sweepgate::server::config::{redact_credentials, refuse_credentials, ServeFile};
use sweepgate::server::conn::{self, ConnLimits};
use sweepgate::server::details::DetailsStore;
use sweepgate::server::handlers::{BotConfig, SlurmCancel};
use sweepgate::server::instance::InstanceLock;
use sweepgate::server::metrics::Metrics;
use sweepgate::server::sweeps::{ClientCheckRuns, SweepService, SweepSettings};
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
    /// Webhook secret, taken whole (commas included); repeat to accept several during
    /// rotation. A flag shows in `ps`: prefer --webhook-secret-file, or the env var
    /// SWEEPGATE_WEBHOOK_SECRETS (comma-separated there), or the config file.
    #[arg(long = "webhook-secret")]
    pub webhook_secrets: Vec<String>,
    /// File with one webhook secret per line (blank lines ignored).
    #[arg(long, env = "SWEEPGATE_WEBHOOK_SECRET_FILE")]
    pub webhook_secret_file: Option<PathBuf>,
    /// GitHub App id (with --private-key-file).
    #[arg(long, env = "SWEEPGATE_APP_ID")]
    pub app_id: Option<u64>,
    /// GitHub App private key (PEM).
    #[arg(long, env = "SWEEPGATE_PRIVATE_KEY_FILE")]
    pub private_key_file: Option<PathBuf>,
    /// A token instead of App credentials (one installation, e.g. for trials). A flag shows
    /// in `ps`: prefer --github-token-file or the env var.
    #[arg(long, env = "SWEEPGATE_GITHUB_TOKEN", hide_env_values = true)]
    pub github_token: Option<String>,
    /// File holding the token (surrounding whitespace ignored).
    #[arg(long, env = "SWEEPGATE_GITHUB_TOKEN_FILE")]
    pub github_token_file: Option<PathBuf>,
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
    /// Durable server state (SQLite, WAL): the event queue (accepted deliveries are stored
    /// before they are acknowledged, and resumed after a restart) and the repositories seen.
    #[arg(long, env = "SWEEPGATE_STATE", default_value = ".sweepgate/state.sqlite")]
    pub state: PathBuf,
    /// Events processed at once (different PRs; one PR's events run one at a time).
    #[arg(long, env = "SWEEPGATE_WORKERS", default_value_t = 4, value_parser = in_range::<usize>(WORKERS))]
    pub workers: usize,
    /// Events waiting in the queue before deliveries get 503.
    #[arg(long, env = "SWEEPGATE_QUEUE_CAPACITY", default_value_t = 4096, value_parser = in_range::<usize>(QUEUE_CAPACITY))]
    pub queue_capacity: usize,
    /// Connections served at once; more wait in the listen backlog.
    #[arg(long, env = "SWEEPGATE_MAX_CONNECTIONS", default_value_t = 1024, value_parser = in_range::<usize>(MAX_CONNECTIONS))]
    pub max_connections: usize,
    /// Seconds a client may take to send a request's headers.
    #[arg(long, env = "SWEEPGATE_HEADER_TIMEOUT_SECS", default_value_t = 10, value_parser = in_range::<u64>(TIMEOUT_SECS))]
    pub header_timeout_secs: u64,
    /// Seconds a client may take to send a whole request body.
    #[arg(long, env = "SWEEPGATE_BODY_TIMEOUT_SECS", default_value_t = 30, value_parser = in_range::<u64>(TIMEOUT_SECS))]
    pub body_timeout_secs: u64,
    /// Seconds a connection may stay without any byte read or written before it is closed.
    #[arg(long, env = "SWEEPGATE_IDLE_TIMEOUT_SECS", default_value_t = 20, value_parser = in_range::<u64>(TIMEOUT_SECS))]
    pub idle_timeout_secs: u64,
    /// On SIGTERM/Ctrl-C: seconds to go on processing queued events before exiting (the rest
    /// stays queued for the next start).
    #[arg(long, env = "SWEEPGATE_DRAIN_SECS", default_value_t = 10, value_parser = in_range::<u64>(DRAIN_SECS))]
    pub drain_secs: u64,
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
    /// Seconds the checks of one sign-off verification or preflight may run (on their own
    /// thread); past it the status or check run is a failure naming the deadline.
    #[arg(long, env = "SWEEPGATE_VERIFY_DEADLINE_SECS", default_value_t = 60, value_parser = in_range::<u64>(TIMEOUT_SECS))]
    pub verify_deadline_secs: u64,
    #[command(flatten)]
    pub verifier: super::collect::VerifierArgs,
    /// Pool profile the server runs sweeps on (repeatable); a "sweep" label decision starts the
    /// PR head's sweep on these pools. Each needs `launcher` and a `cli` transport.
    #[arg(long = "pool", env = "SWEEPGATE_POOLS", value_delimiter = ',')]
    pub pools: Vec<PathBuf>,
    /// Local clone of the benchmark repository holding the PRs' commits (with --pool).
    #[arg(long, env = "SWEEPGATE_SWEEP_REPO")]
    pub sweep_repo: Option<PathBuf>,
    /// Ledger, sweep records and results store of the server's sweeps.
    #[arg(long, env = "SWEEPGATE_SWEEP_STATE", default_value = ".sweepgate/sweeps")]
    pub sweep_state: PathBuf,
    /// Name of the per-sweep check run.
    #[arg(long, env = "SWEEPGATE_SWEEP_CHECK_NAME", default_value = "sweepgate/sweep")]
    pub sweep_check_name: String,
    /// The check run of a running sweep is edited at most this often.
    #[arg(long, env = "SWEEPGATE_SWEEP_CHECK_EVERY_SECS", default_value_t = 10)]
    pub sweep_check_every_secs: u64,
    /// How often the sweeps poll Slurm.
    #[arg(long, env = "SWEEPGATE_SWEEP_POLL_MS", default_value_t = 2000, value_parser = clap::value_parser!(u64).range(50..))]
    pub sweep_poll_ms: u64,
    /// Which in-PR sweeps count for the verifier, in order of preference (repeatable):
    /// `sweepgate` (this server's sweeps, read from its results store) and `workflow:<file>`.
    #[arg(long, env = "SWEEPGATE_SWEEP_SOURCE", value_delimiter = ',', default_values_t = ["sweepgate".to_owned(), "workflow:run-sweep.yml".to_owned()])]
    pub sweep_source: Vec<String>,
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

const WORKERS: (u64, u64) = (1, 256);
const QUEUE_CAPACITY: (u64, u64) = (1, 1_000_000);
const MAX_CONNECTIONS: (u64, u64) = (1, 65_536);
const TIMEOUT_SECS: (u64, u64) = (1, 3600);
const DRAIN_SECS: (u64, u64) = (0, 3600);

/// A flag's parser refusing values outside `bounds` (inclusive) with a clear error.
fn in_range<T>((low, high): (u64, u64)) -> clap::builder::RangedU64ValueParser<T>
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
    <T as TryFrom<u64>>::Error: std::fmt::Display + Send + Sync + 'static,
{
    clap::builder::RangedU64ValueParser::<T>::new().range(low..=high)
}

/// The same bound for a value from the config file.
fn check_range(name: &str, value: u64, (low, high): (u64, u64)) -> anyhow::Result<()> {
    anyhow::ensure!((low..=high).contains(&value), "{name} = {value} is out of range: it must be {low}..={high}");
    Ok(())
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
pub(super) fn layered(args: &ServeArgs, matches: &ArgMatches) -> anyhow::Result<(ServeArgs, String)> {
    let file = match &args.config {
        Some(path) => ServeFile::load(path)?,
        None => ServeFile::default(),
    };
    let mut a = args.clone();
    let mut l = Layers { matches, shown: Vec::new() };
    l.set("listen", &mut a.listen, file.listen);
    let (secrets, source) = webhook_secrets(args, matches, file.webhook_secrets)?;
    a.webhook_secrets = secrets;
    l.shown.push(("webhook_secrets", a.webhook_secrets.redacted().map(toml::Value::String), source));
    l.set("app_id", &mut a.app_id, file.app_id.map(Some));
    l.set("private_key_file", &mut a.private_key_file, file.private_key_file.map(Some));
    if let Some(path) = &args.github_token_file {
        anyhow::ensure!(args.github_token.is_none(), "set --github-token or --github-token-file, not both");
        a.github_token = Some(read_secret_file(path)?.trim().to_string());
        l.shown.push((
            "github_token",
            a.github_token.redacted().map(toml::Value::String),
            l.source("github_token_file", false),
        ));
    } else {
        l.set_secret("github_token", &mut a.github_token, file.github_token.map(Some));
    }
    l.set("github_api_url", &mut a.github_api_url, file.github_api_url);
    l.set("github_timeout_secs", &mut a.github_timeout_secs, file.github_timeout_secs);
    l.set("bot_login", &mut a.bot_login, file.bot_login);
    l.set("status_context", &mut a.status_context, file.status_context);
    l.set("outbox", &mut a.outbox, file.outbox);
    l.set("state", &mut a.state, file.state);
    l.set("workers", &mut a.workers, file.workers);
    l.set("queue_capacity", &mut a.queue_capacity, file.queue_capacity);
    l.set("max_connections", &mut a.max_connections, file.max_connections);
    l.set("header_timeout_secs", &mut a.header_timeout_secs, file.header_timeout_secs);
    l.set("body_timeout_secs", &mut a.body_timeout_secs, file.body_timeout_secs);
    l.set("idle_timeout_secs", &mut a.idle_timeout_secs, file.idle_timeout_secs);
    l.set("drain_secs", &mut a.drain_secs, file.drain_secs);
    l.set("verify_deadline_secs", &mut a.verify_deadline_secs, file.verify_deadline_secs);
    l.set("reconcile_secs", &mut a.reconcile_secs, file.reconcile_secs);
    l.set("reconcile_max_prs", &mut a.reconcile_max_prs, file.reconcile_max_prs);
    l.set("cancel_slurm_jobs", &mut a.cancel_slurm_jobs, file.cancel_slurm_jobs);
    l.set("dispatch_ledger", &mut a.dispatch_ledger, file.dispatch_ledger.map(Some));
    l.set("pools", &mut a.pools, file.pools);
    l.set("sweep_repo", &mut a.sweep_repo, file.sweep_repo.map(Some));
    l.set("sweep_state", &mut a.sweep_state, file.sweep_state);
    l.set("sweep_check_name", &mut a.sweep_check_name, file.sweep_check_name);
    l.set("sweep_check_every_secs", &mut a.sweep_check_every_secs, file.sweep_check_every_secs);
    l.set("sweep_poll_ms", &mut a.sweep_poll_ms, file.sweep_poll_ms);
    l.set("sweep_source", &mut a.sweep_source, file.sweep_source);
    let v = &mut a.verifier;
    l.set("signoff_status_context", &mut v.signoff_status_context, file.signoff_status_context);
    l.set("advisory", &mut v.advisory, file.advisory);
    l.set("preflight", &mut v.preflight, file.preflight);
    l.set("reviewers", &mut v.reviewers, file.reviewers);
    l.set("policy_branches", &mut v.policy_branches, file.policy_branches);
    l.set("upstream_github_api", &mut v.upstream.upstream_github_api, file.upstream_github_api);
    l.set("huggingface_url", &mut v.upstream.huggingface_url, file.huggingface_url);
    l.set("registries", &mut v.upstream.registries, file.registries.map(|r| r.into_iter().collect()));
    l.set("upstream_token_file", &mut v.upstream.upstream_token_file, file.upstream_token_file.map(Some));
    if v.upstream.upstream_token.is_some() {
        l.shown.push(("upstream_token", v.upstream.upstream_token.redacted().map(toml::Value::String), Source::Env));
    }
    l.set("public_url", &mut a.public_url, file.public_url.map(Some));
    l.set("details_db", &mut a.details_db, file.details_db.map(Some));
    l.set("details_private", &mut a.details_private, file.details_private);
    let mut shown = String::new();
    for (id, value, source) in l.shown {
        if let (Some(toml::Value::String(url)), "public_url") = (&value, id) {
            refuse_credentials(id, url, source.label()).map_err(anyhow::Error::msg)?;
        }
        match value {
            // A URL setting may carry `user:password@`: shown redacted like the secrets.
            Some(value) => shown.push_str(&redact_credentials(&format!("{id} = {value}  # {}\n", source.label()))),
            None => shown.push_str(&format!("# {id} is not set\n")),
        }
    }
    for (name, value, bounds) in [
        ("workers", a.workers as u64, WORKERS),
        ("queue_capacity", a.queue_capacity as u64, QUEUE_CAPACITY),
        ("max_connections", a.max_connections as u64, MAX_CONNECTIONS),
        ("header_timeout_secs", a.header_timeout_secs, TIMEOUT_SECS),
        ("body_timeout_secs", a.body_timeout_secs, TIMEOUT_SECS),
        ("idle_timeout_secs", a.idle_timeout_secs, TIMEOUT_SECS),
        ("drain_secs", a.drain_secs, DRAIN_SECS),
        ("verify_deadline_secs", a.verify_deadline_secs, TIMEOUT_SECS),
    ] {
        check_range(name, value, bounds)?;
    }
    a.webhook_secrets.retain(|s| !s.is_empty());
    anyhow::ensure!(
        !a.webhook_secrets.is_empty(),
        "no webhook secret: pass --webhook-secret-file (or --webhook-secret), set SWEEPGATE_WEBHOOK_SECRETS, or \
         set webhook_secrets or webhook_secrets_file in the --config file"
    );
    anyhow::ensure!(a.app_id.is_some() == a.private_key_file.is_some(), "app_id and private_key_file go together");
    anyhow::ensure!(
        a.pools.is_empty() || a.sweep_repo.is_some(),
        "--pool needs --sweep-repo (a local clone of the benchmark repository) to plan the sweeps"
    );
    anyhow::ensure!(
        a.app_id.is_none() || a.github_token.is_none(),
        "both GitHub App credentials (app_id) and a github_token are set; keep one"
    );
    Ok((a, shown))
}

/// The webhook secrets and where they came from: `--webhook-secret` flags (each taken whole),
/// else `--webhook-secret-file`, else `SWEEPGATE_WEBHOOK_SECRETS` (the one place commas
/// separate secrets), else the config file.
fn webhook_secrets(
    args: &ServeArgs,
    matches: &ArgMatches,
    from_file: Option<Vec<String>>,
) -> anyhow::Result<(Vec<String>, Source)> {
    if !args.webhook_secrets.is_empty() {
        return Ok((args.webhook_secrets.clone(), Source::Flag));
    }
    if let Some(path) = &args.webhook_secret_file {
        let source = match matches.value_source("webhook_secret_file") {
            Some(ValueSource::EnvVariable) => Source::Env,
            _ => Source::Flag,
        };
        let text = read_secret_file(path)?;
        return Ok((text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect(), source));
    }
    if let Some(value) = std::env::var_os("SWEEPGATE_WEBHOOK_SECRETS") {
        let value = value.into_string().map_err(|_| anyhow::anyhow!("SWEEPGATE_WEBHOOK_SECRETS is not UTF-8"))?;
        return Ok((value.split(',').map(str::to_string).collect(), Source::Env));
    }
    Ok(match from_file {
        Some(secrets) => (secrets, Source::ConfigFile),
        None => (Vec::new(), Source::Default),
    })
}

/// Reads a file holding a secret; the error names the file, never its content.
fn read_secret_file(path: &std::path::Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

pub fn run(args: &ServeArgs, matches: &ArgMatches) -> anyhow::Result<ExitCode> {
    let (args, shown) = layered(args, matches)?;
    if args.print_config {
        print!("{shown}");
        return Ok(ExitCode::SUCCESS);
    }
    // One server per state (decision HE4): refused before anything is opened or bound.
    let _state_lock = InstanceLock::acquire(&args.state)?;
    let _sweeps_lock = match sweep_settings(&args) {
        Some(settings) => Some(InstanceLock::acquire(&settings.state_dir)?),
        None => None,
    };
    // A main thread's 8 MiB, not tokio's 2 MiB: a sign-off's handler nests collect, octocrab and
    // hyper futures, and a debug build's poll frames of that chain overflowed 2 MiB in the reconcile.
    let runtime = tokio::runtime::Builder::new_multi_thread().thread_stack_size(8 << 20).enable_all().build()?;
    let served = runtime.block_on(serve(&args));
    // The drain already had its time: blocking tasks still stuck (a hung Slurm call) must not
    // keep a stopped server alive (dropping the runtime would wait for them).
    runtime.shutdown_timeout(Duration::from_secs(1));
    served?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(args: &ServeArgs) -> anyhow::Result<()> {
    let mut verify = args.verifier.verify_config()?;
    verify.details = details_store(args)?;
    verify.limits.sweeps = sweep_options(args)?;
    verify.limits.deadline = Duration::from_secs(args.verify_deadline_secs);
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
        body_timeout: Duration::from_secs(args.body_timeout_secs),
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
    let limits = Limits {
        conn: ConnLimits {
            max_connections: args.max_connections,
            header_timeout: Duration::from_secs(args.header_timeout_secs),
            idle_timeout: Duration::from_secs(args.idle_timeout_secs),
        },
        drain: Duration::from_secs(args.drain_secs),
    };
    match (&args.app_id, &args.private_key_file, &args.github_token) {
        (Some(app_id), Some(key_file), _) => {
            let pem = std::fs::read(key_file).with_context(|| format!("reading {}", key_file.display()))?;
            let clients = AppClients::new(&args.github_api_url, *app_id, &pem, retry, api)?;
            run_server(listener, "GitHub App", config, limits, Arc::new(clients), metrics, sweep_settings(args)).await
        }
        (_, _, Some(token)) => {
            let gh = OctoGitHub::with_token(&args.github_api_url, SecretString::from(token.clone()), retry, api)?;
            let clients = Arc::new(Single(Arc::new(gh)));
            run_server(listener, "token", config, limits, clients, metrics, sweep_settings(args)).await
        }
        _ => {
            let outbox = OutboxGitHub::open(&args.outbox, &args.bot_login)?;
            let mode = format!("dry-run (outbox {})", args.outbox.display());
            let clients = Arc::new(Single(Arc::new(outbox)));
            run_server(listener, &mode, config, limits, clients, metrics, sweep_settings(args)).await
        }
    }
}

/// The details page's store when `--public-url` is set.
fn details_store(args: &ServeArgs) -> anyhow::Result<Option<Arc<DetailsStore>>> {
    let Some(public_url) = &args.public_url else { return Ok(None) };
    let path = args.details_db.clone().unwrap_or_else(|| args.state.with_extension("details.sqlite"));
    Ok(Some(Arc::new(DetailsStore::open(&path, public_url, args.details_private)?)))
}

/// The connection limits and the drain bound of one run.
struct Limits {
    conn: ConnLimits,
    drain: Duration,
}

async fn run_server<C: Clients>(
    listener: tokio::net::TcpListener,
    mode: &str,
    mut config: ServerConfig,
    limits: Limits,
    clients: Arc<C>,
    metrics: Arc<Metrics>,
    sweeps: Option<SweepSettings>,
) -> anyhow::Result<()> {
    let addr = listener.local_addr()?;
    if let Some(mut settings) = sweeps {
        settings.details = config.bot.verify.details.clone();
        let verify = &config.bot.verify;
        let checks = Arc::new(ClientCheckRuns(clients.clone(), verify.upstream.clone(), verify.limits.clone()));
        config.bot.sweeps = Some(SweepService::open(settings, checks, tokio::runtime::Handle::current())?);
    }
    let server = build(config, clients, metrics)?;
    // The first stdout line is machine-readable: tests and scripts read the bound port from it.
    println!("listening on http://{addr}");
    std::io::stdout().flush()?;
    tracing::info!(%addr, mode, "sweepgate serve started");
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let serving = tokio::spawn(conn::serve(listener, server.router.clone(), limits.conn, stopped));
    shutdown_signal().await;
    tracing::info!(drain_secs = limits.drain.as_secs(), "stopping: no new connections; draining the queue");
    let _ = stop.send(true);
    let drained = server.drain(limits.drain).await;
    // Requests still being answered had the drain to finish; the rest of their connections go.
    if tokio::time::timeout(Duration::from_secs(1), serving).await.is_err() {
        tracing::warn!("connections still open at exit were closed");
    }
    tracing::info!(left_queued = drained.left, interrupted = drained.interrupted, "sweepgate serve stopped");
    Ok(())
}

/// What the verifier counts as an in-PR sweep; this server's results store only when it runs sweeps.
fn sweep_options(args: &ServeArgs) -> anyhow::Result<SweepOptions> {
    Ok(SweepOptions {
        sources: parse_sources(&args.sweep_source)?,
        check_name: args.sweep_check_name.clone(),
        results_dir: sweep_settings(args).map(|s| s.state_dir.join("results")),
    })
}

/// The sweep settings when pools are configured.
fn sweep_settings(args: &ServeArgs) -> Option<SweepSettings> {
    let repo_dir = args.sweep_repo.clone().filter(|_| !args.pools.is_empty())?;
    Some(SweepSettings {
        pools: args.pools.clone(),
        repo_dir,
        state_dir: args.sweep_state.clone(),
        check_name: args.sweep_check_name.clone(),
        check_every: Duration::from_secs(args.sweep_check_every_secs),
        poll_interval: Duration::from_millis(args.sweep_poll_ms),
        unreachable_limit: Duration::from_secs(600),
        details: None,
    })
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
