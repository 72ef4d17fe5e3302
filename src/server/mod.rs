//! The axum webhook server: verify the signature, dedupe the delivery id, parse into an
//! [`Event`], enqueue, answer 202 at once. Workers process events of one PR in arrival order
//! (one shard per PR), retry transient failures with backoff, and count every outcome.
//! Routes: `POST /webhook`, `GET /healthz`, `GET /metrics`.

pub mod config;
pub mod details;
pub mod handlers;
pub mod metrics;
mod reconcile;
pub mod state;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::Router;
use secrecy::{ExposeSecret, SecretString};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::github::octo::{AppClients, OctoGitHub};
use crate::github::{webhook, GitHub, GitHubError, RepoRef};
use crate::intake::event::{self, Event};
use handlers::{BotConfig, HandlerError};
use metrics::{event_label, Metrics};
use state::{StateDb, StateError};

/// Where the GitHub client for a delivery comes from.
pub trait Clients: Send + Sync + 'static {
    type G: GitHub + 'static;
    fn client(&self, installation: Option<u64>) -> Result<Arc<Self::G>, GitHubError>;
}

/// One client for every delivery (a token, or the dry-run outbox).
pub struct Single<G>(pub Arc<G>);

impl<G: GitHub + 'static> Clients for Single<G> {
    type G = G;
    fn client(&self, _: Option<u64>) -> Result<Arc<G>, GitHubError> {
        Ok(self.0.clone())
    }
}

impl Clients for AppClients {
    type G = OctoGitHub;
    fn client(&self, installation: Option<u64>) -> Result<Arc<OctoGitHub>, GitHubError> {
        let id = installation
            .ok_or_else(|| GitHubError::Setup("the delivery names no App installation (installation.id)".into()))?;
        self.installation(id)
    }
}

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub secrets: Vec<SecretString>,
    pub bot: BotConfig,
    /// GitHub's own limit for webhook payloads.
    pub max_body_bytes: usize,
    /// Events waiting per worker shard before deliveries are refused with 503.
    pub queue_capacity: usize,
    pub workers: usize,
    /// The SQLite file of the durable state (accepted delivery ids).
    pub state_file: PathBuf,
    /// Delivery ids remembered for deduplication, and for how long.
    pub dedupe_capacity: usize,
    pub dedupe_ttl: Duration,
    /// Attempts per event on transient failures, and the first backoff.
    pub handler_attempts: u32,
    pub retry_delay: Duration,
    /// Period of the reconcile pass over open PRs (`None` or zero: off), and its bound.
    pub reconcile_every: Option<Duration>,
    pub reconcile_max_prs: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            secrets: Vec::new(),
            bot: BotConfig::default(),
            max_body_bytes: 25 * 1024 * 1024,
            queue_capacity: 1024,
            workers: 4,
            state_file: PathBuf::from(".sweepgate/state.sqlite"),
            dedupe_capacity: 100_000,
            dedupe_ttl: Duration::from_secs(24 * 3600),
            handler_attempts: 4,
            retry_delay: Duration::from_secs(2),
            reconcile_every: None,
            reconcile_max_prs: 100,
        }
    }
}

struct Job {
    delivery: String,
    event: Event,
}

/// The worker shards: events of one PR always go to the same shard, so they run in order.
struct Queues {
    shards: Vec<mpsc::Sender<Job>>,
    metrics: Arc<Metrics>,
}

impl Queues {
    /// Queues the job on its PR's shard; false when that shard is full.
    fn enqueue(&self, repo: &RepoRef, pr: u64, job: Job) -> bool {
        let mut hasher = DefaultHasher::new();
        (repo, pr).hash(&mut hasher);
        let shard = &self.shards[(hasher.finish() % self.shards.len() as u64) as usize];
        self.metrics.queue_depth.fetch_add(1, Ordering::Relaxed);
        let queued = shard.try_send(job).is_ok();
        if !queued {
            self.metrics.queue_depth.fetch_sub(1, Ordering::Relaxed);
        }
        queued
    }
}

struct AppState {
    secrets: Vec<SecretString>,
    state: Arc<StateDb>,
    queues: Arc<Queues>,
    metrics: Arc<Metrics>,
    details: Option<Arc<details::DetailsStore>>,
}

/// The router and its tasks: the workers (which end when the router, its state and the
/// reconciler are dropped) and the optional reconciler.
pub struct Server {
    pub router: Router,
    pub workers: Vec<JoinHandle<()>>,
    pub reconciler: Option<JoinHandle<()>>,
    pub metrics: Arc<Metrics>,
}

/// Opens the state file and starts the workers (and the reconciler when configured).
pub fn build<C: Clients>(config: ServerConfig, clients: Arc<C>, metrics: Arc<Metrics>) -> Result<Server, StateError> {
    let state = Arc::new(StateDb::open(&config.state_file, config.dedupe_capacity, config.dedupe_ttl)?);
    let bot = Arc::new(config.bot.clone());
    let mut shards = Vec::new();
    let mut workers = Vec::new();
    for _ in 0..config.workers.max(1) {
        let (tx, rx) = mpsc::channel(config.queue_capacity.max(1));
        shards.push(tx);
        let worker = Worker {
            clients: clients.clone(),
            bot: bot.clone(),
            metrics: metrics.clone(),
            attempts: config.handler_attempts.max(1),
            retry_delay: config.retry_delay,
        };
        workers.push(tokio::spawn(worker.run(rx)));
    }
    let queues = Arc::new(Queues { shards, metrics: metrics.clone() });
    let reconciler = config.reconcile_every.filter(|every| !every.is_zero()).map(|every| {
        let reconciler = reconcile::Reconciler {
            clients,
            state: state.clone(),
            queues: queues.clone(),
            metrics: metrics.clone(),
            bot_login: config.bot.bot_login.clone(),
            max_prs: config.reconcile_max_prs.max(1),
        };
        tokio::spawn(reconciler.run(every))
    });
    let details = config.bot.verify.details.clone();
    let app = Arc::new(AppState {
        secrets: config.secrets,
        state,
        queues,
        metrics: metrics.clone(),
        details: details.clone(),
    });
    let router = Router::new()
        .merge(details.map(details::router).unwrap_or_default())
        .route("/webhook", post(receive))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/metrics", get(render_metrics))
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
        .layer(tower_http::catch_panic::CatchPanicLayer::new())
        .with_state(app);
    Ok(Server { router, workers, reconciler, metrics })
}

async fn render_metrics(State(state): State<Arc<AppState>>) -> ([(&'static str, &'static str); 1], String) {
    ([("content-type", "text/plain; version=0.0.4")], state.metrics.render())
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

async fn receive(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Bytes) -> (StatusCode, String) {
    let name = header(&headers, "x-github-event").unwrap_or("");
    let label = event_label(name);
    let secrets: Vec<&[u8]> = state.secrets.iter().map(|s| s.expose_secret().as_bytes()).collect();
    if let Err(err) = webhook::verify(&secrets, header(&headers, "x-hub-signature-256"), &body) {
        state.metrics.delivery(label, "unauthorized");
        tracing::warn!(event = label, "webhook refused: {err}");
        return (StatusCode::UNAUTHORIZED, format!("{err}\n"));
    }
    let delivery = match header(&headers, "x-github-delivery") {
        Some(id) if !id.is_empty() && id.len() <= 128 && id.is_ascii() => id.to_string(),
        _ => {
            state.metrics.delivery(label, "bad_request");
            return (StatusCode::BAD_REQUEST, "missing or invalid X-GitHub-Delivery header\n".into());
        }
    };
    if name.is_empty() {
        state.metrics.delivery(label, "bad_request");
        return (StatusCode::BAD_REQUEST, "missing X-GitHub-Event header\n".into());
    }
    let event = match event::parse(name, &body) {
        Ok(event) => event,
        Err(err) => {
            state.metrics.delivery(label, "bad_request");
            tracing::warn!(delivery, "webhook payload refused: {err}");
            return (StatusCode::BAD_REQUEST, format!("{err}\n"));
        }
    };
    let Some((repo, pr)) = event.pr_key() else {
        state.metrics.delivery(label, "ignored");
        return (StatusCode::ACCEPTED, "nothing to do\n".into());
    };
    // A state file that cannot be written must not lose events: the delivery is processed
    // (the handlers are idempotent) and the failure is logged and counted.
    let first = state.state.accept_delivery(&delivery, state::now_ms()).unwrap_or_else(|err| {
        state.metrics.state_error();
        tracing::error!(delivery, "delivery id not recorded: {err}");
        true
    });
    if !first {
        state.metrics.delivery(label, "duplicate");
        return (StatusCode::OK, "duplicate delivery\n".into());
    }
    // Remembered for the reconcile pass; a failure only costs that (the delivery is queued).
    if let Err(err) = state.state.remember_repo(repo, event.installation_id()) {
        state.metrics.state_error();
        tracing::error!(delivery, "repository not recorded: {err}");
    }
    state.details.iter().for_each(|d| d.note_visibility(repo, &body));
    let (repo, pr) = (repo.clone(), pr);
    if state.queues.enqueue(&repo, pr, Job { delivery: delivery.clone(), event }) {
        state.metrics.delivery(label, "queued");
        return (StatusCode::ACCEPTED, "queued\n".into());
    }
    // Forget the id so GitHub's redelivery of this event is accepted later.
    if let Err(err) = state.state.forget_delivery(&delivery) {
        state.metrics.state_error();
        tracing::error!(delivery, "delivery id not forgotten: {err}");
    }
    state.metrics.delivery(label, "queue_full");
    tracing::error!(delivery, "work queue full; delivery refused with 503");
    (StatusCode::SERVICE_UNAVAILABLE, "work queue full; redeliver later\n".into())
}

struct Worker<C> {
    clients: Arc<C>,
    bot: Arc<BotConfig>,
    metrics: Arc<Metrics>,
    attempts: u32,
    retry_delay: Duration,
}

fn is_transient(err: &HandlerError) -> bool {
    match err {
        HandlerError::GitHub(GitHubError::Http { status, .. }) => *status >= 500 || *status == 429,
        HandlerError::GitHub(GitHubError::Transport { .. } | GitHubError::RateLimited { .. }) => true,
        _ => false,
    }
}

impl<C: Clients> Worker<C> {
    async fn run(self, mut rx: mpsc::Receiver<Job>) {
        while let Some(job) = rx.recv().await {
            self.metrics.queue_depth.fetch_sub(1, Ordering::Relaxed);
            let started = Instant::now();
            let ok = self.process(&job).await;
            self.metrics.handled(started.elapsed(), ok);
        }
    }

    async fn process(&self, job: &Job) -> bool {
        let gh = match self.clients.client(job.event.installation_id()) {
            Ok(gh) => gh,
            Err(err) => {
                tracing::error!(delivery = job.delivery, "no GitHub client: {err}");
                return false;
            }
        };
        let mut delay = self.retry_delay;
        for attempt in 1..=self.attempts {
            match handlers::handle(gh.as_ref(), &self.bot, &job.event).await {
                Ok(outcome) => {
                    tracing::info!(delivery = job.delivery, actions = ?outcome.lines, "event handled");
                    return true;
                }
                Err(err) if is_transient(&err) && attempt < self.attempts => {
                    tracing::warn!(delivery = job.delivery, attempt, "transient failure, retrying: {err}");
                    tokio::time::sleep(delay).await;
                    delay = delay.saturating_mul(2);
                }
                Err(err) => {
                    tracing::error!(delivery = job.delivery, attempt, "event failed: {err}");
                    return false;
                }
            }
        }
        false
    }
}
