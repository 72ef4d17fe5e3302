//! The axum webhook server: verify the signature while the body streams in, parse into an
//! [`Event`], store the delivery in the durable queue, answer 202. Workers take events from the
//! per-PR lanes (one event per PR at a time, in arrival order), mark them done, retry transient
//! failures with backoff and then mark them failed, and count every outcome. Events still queued
//! at shutdown or after a crash are resumed at the next start.
//! Routes: `POST /webhook`, `GET /healthz`, `GET /metrics`.

pub mod config;
pub mod conn;
pub mod details;
pub mod doctor;
pub mod handlers;
pub mod instance;
pub mod metrics;
pub mod queue;
mod reconcile;
pub mod state;
pub mod sweeps;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::Router;
use http_body_util::BodyExt;
use secrecy::{ExposeSecret, SecretString};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use crate::github::octo::{AppClients, OctoGitHub};
use crate::github::{webhook, GitHub, GitHubError, RepoRef};
use crate::intake::event::{self, Event};
use handlers::{BotConfig, HandlerError};
use metrics::{event_label, Metrics, QueueGauges};
use queue::{Accepted, Entry, Lanes, Pushed, QueueStore, RowState};
use state::{now_ms, StateDb, StateError};

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
    /// Bytes of bodies not yet authenticated held at once, over all connections; past it a
    /// delivery gets 503 (so slow unfinished bodies cannot take the memory).
    pub inflight_body_bytes: usize,
    /// Events waiting in the queue before deliveries are refused with 503.
    pub queue_capacity: usize,
    pub workers: usize,
    /// The SQLite file of the durable state (the event queue, repositories).
    pub state_file: PathBuf,
    /// Finished deliveries remembered for deduplication, and for how long.
    pub dedupe_capacity: usize,
    pub dedupe_ttl: Duration,
    /// Attempts per event on transient failures, and the first backoff.
    pub handler_attempts: u32,
    pub retry_delay: Duration,
    /// Period of the reconcile pass over open PRs (`None` or zero: off), and its bound.
    pub reconcile_every: Option<Duration>,
    pub reconcile_max_prs: usize,
    /// Time a whole request body may take to arrive.
    pub body_timeout: Duration,
    /// How often the queue is checked for deliveries an operator queued again.
    pub requeue_poll: Duration,
    /// Starts interrupted in a delivery (the server crashed, was killed, or its drain ran out
    /// while processing it) after which it is failed instead of run again.
    pub poison_limit: u32,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            secrets: Vec::new(),
            bot: BotConfig::default(),
            max_body_bytes: 25 * 1024 * 1024,
            inflight_body_bytes: 100 * 1024 * 1024,
            queue_capacity: 4096,
            workers: 4,
            state_file: PathBuf::from(".sweepgate/state.sqlite"),
            dedupe_capacity: 100_000,
            dedupe_ttl: Duration::from_secs(24 * 3600),
            handler_attempts: 4,
            retry_delay: Duration::from_secs(2),
            reconcile_every: None,
            reconcile_max_prs: 100,
            body_timeout: Duration::from_secs(30),
            requeue_poll: Duration::from_secs(2),
            poison_limit: 3,
        }
    }
}

/// An event for the workers: its delivery id (or the reconcile's own name for it) and the event.
pub struct Job {
    pub delivery: String,
    pub event: Event,
}

/// The queue the reconcile pass feeds: in memory only (the next pass queues them again).
struct Queues {
    lanes: Arc<Lanes>,
}

impl Queues {
    /// Queues the job on its PR's lane; false when the queue is full.
    fn enqueue(&self, repo: &RepoRef, pr: u64, job: Job) -> bool {
        let entry = Entry { job, durable: false, received_ms: now_ms(), not_before: None };
        matches!(self.lanes.push(repo, pr, entry, false), Pushed::Queued { .. })
    }
}

struct AppState {
    secrets: Vec<SecretString>,
    state: Arc<StateDb>,
    store: Arc<QueueStore>,
    lanes: Arc<Lanes>,
    metrics: Arc<Metrics>,
    max_body_bytes: usize,
    body_timeout: Duration,
    /// Permits are KiB of unauthenticated body bytes.
    inflight: Arc<Semaphore>,
    details: Option<Arc<details::DetailsStore>>,
}

/// The router and its tasks: the workers, the poll for operators' retries, and the optional
/// reconciler. [`Server::drain`] ends them.
pub struct Server {
    pub router: Router,
    pub workers: Vec<JoinHandle<()>>,
    pub reconciler: Option<JoinHandle<()>>,
    pub metrics: Arc<Metrics>,
    lanes: Arc<Lanes>,
    requeue: JoinHandle<()>,
}

/// What a drain left behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drained {
    /// Events still queued (they are resumed at the next start).
    pub left: usize,
    /// Whether the drain deadline interrupted events being processed.
    pub interrupted: bool,
}

impl Server {
    /// Lets the workers finish what is ready within `limit`, then stops every task; events not
    /// finished stay queued in the state file.
    pub async fn drain(self, limit: Duration) -> Drained {
        self.requeue.abort();
        if let Some(reconciler) = &self.reconciler {
            reconciler.abort();
        }
        self.lanes.drain();
        let aborts: Vec<_> = self.workers.iter().map(JoinHandle::abort_handle).collect();
        let finished = tokio::time::timeout(limit, async {
            for worker in self.workers {
                let _ = worker.await;
            }
        })
        .await;
        aborts.iter().for_each(tokio::task::AbortHandle::abort);
        Drained { left: self.lanes.depth().0, interrupted: finished.is_err() }
    }
}

/// Opens the state file, resumes the events left queued, and starts the workers (and the
/// reconciler when configured).
pub fn build<C: Clients>(config: ServerConfig, clients: Arc<C>, metrics: Arc<Metrics>) -> Result<Server, StateError> {
    let state = Arc::new(StateDb::open(&config.state_file)?);
    config.bot.verify.watch.attach(state.clone())?;
    config.bot.verify.judged.attach(state.clone());
    let store = Arc::new(QueueStore::open(&config.state_file, config.dedupe_capacity, config.dedupe_ttl)?);
    store.checkpoint_in_background(Duration::from_secs(1))?;
    for delivery in store.fail_interrupted(config.poison_limit.max(1), now_ms())? {
        tracing::error!(delivery, limit = config.poison_limit, "failed: the server stopped every time it processed it");
    }
    let lanes = Arc::new(Lanes::new(config.queue_capacity));
    let resumed = resume(&store, &lanes, &metrics, Duration::ZERO)?;
    if resumed > 0 {
        tracing::info!(events = resumed, "resuming events left queued");
    }
    let bot = Arc::new(config.bot.clone());
    let workers = (0..config.workers.max(1))
        .map(|_| {
            let worker = Worker {
                clients: clients.clone(),
                bot: bot.clone(),
                metrics: metrics.clone(),
                store: store.clone(),
                lanes: lanes.clone(),
                attempts: config.handler_attempts.max(1),
                retry_delay: config.retry_delay,
            };
            tokio::spawn(worker.run())
        })
        .collect();
    let requeue = tokio::spawn(poll_requeued(store.clone(), lanes.clone(), metrics.clone(), config.requeue_poll));
    let queues = Arc::new(Queues { lanes: lanes.clone() });
    let reconciler = config.reconcile_every.filter(|every| !every.is_zero()).map(|every| {
        let reconciler = reconcile::Reconciler {
            clients,
            state: state.clone(),
            queues,
            metrics: metrics.clone(),
            bot_login: config.bot.bot_login.clone(),
            max_prs: config.reconcile_max_prs.max(1),
        };
        tokio::spawn(reconciler.run(every))
    });
    let details = config.bot.verify.details.clone();
    let inflight_kib = (config.inflight_body_bytes / 1024).clamp(1, Semaphore::MAX_PERMITS);
    let app = Arc::new(AppState {
        secrets: config.secrets,
        state,
        store,
        lanes: lanes.clone(),
        metrics: metrics.clone(),
        max_body_bytes: config.max_body_bytes,
        body_timeout: config.body_timeout,
        inflight: Arc::new(Semaphore::new(inflight_kib)),
        details: details.clone(),
    });
    let request_log = tower_http::trace::TraceLayer::new_for_http()
        .make_span_with(tower_http::trace::DefaultMakeSpan::new().level(tracing::Level::INFO))
        .on_request(())
        .on_response(tower_http::trace::DefaultOnResponse::new().level(tracing::Level::INFO));
    let router = Router::new()
        .merge(details.map(details::router).unwrap_or_default())
        .route("/webhook", post(receive))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/metrics", get(render_metrics))
        .layer(tower_http::catch_panic::CatchPanicLayer::new())
        .layer(request_log)
        .with_state(app);
    Ok(Server { router, workers, reconciler, metrics, lanes, requeue })
}

/// Loads the stored queued deliveries `lanes` does not hold yet, in their order; returns how
/// many. A stored body that no longer parses is marked failed with the reason. Rows received
/// less than `min_age` ago are left to `receive`, which may be between storing and queuing them.
fn resume(store: &QueueStore, lanes: &Lanes, metrics: &Metrics, min_age: Duration) -> Result<usize, StateError> {
    let mut loaded = 0;
    let newest = now_ms() - i64::try_from(min_age.as_millis()).unwrap_or(i64::MAX);
    for row in store.unfinished()? {
        if lanes.is_present(&row.delivery) || row.received_ms > newest {
            continue;
        }
        let event = match event::parse(&row.event, &row.body) {
            Ok(event) => event,
            Err(err) => {
                store.finish(&row.delivery, RowState::Failed, Some(&err.to_string()), now_ms())?;
                continue;
            }
        };
        let Some((repo, pr)) = event.pr_key().map(|(repo, pr)| (repo.clone(), pr)) else {
            store.finish(&row.delivery, RowState::Done, None, now_ms())?;
            continue;
        };
        let entry = Entry {
            job: Job { delivery: row.delivery, event },
            durable: true,
            received_ms: row.received_ms,
            not_before: None,
        };
        if let Pushed::Queued { superseded } = lanes.push(&repo, pr, entry, true) {
            mark_superseded(store, metrics, &superseded);
        }
        loaded += 1;
    }
    Ok(loaded)
}

/// Picks up deliveries an operator queued again (`sweepgate queue retry`) while running.
async fn poll_requeued(store: Arc<QueueStore>, lanes: Arc<Lanes>, metrics: Arc<Metrics>, every: Duration) {
    let mut ticker = tokio::time::interval(every.max(Duration::from_millis(100)));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await;
    loop {
        ticker.tick().await;
        match resume(&store, &lanes, &metrics, Duration::from_secs(1)) {
            Ok(0) => {}
            Ok(n) => tracing::info!(events = n, "queued again by an operator"),
            Err(err) => {
                metrics.state_error();
                tracing::error!("reading the queue failed: {err}");
            }
        }
    }
}

fn mark_superseded(store: &QueueStore, metrics: &Metrics, superseded: &[String]) {
    for delivery in superseded {
        tracing::info!(delivery, "superseded by a newer sign-off of the same signer");
        if let Err(err) = store.finish(delivery, RowState::Superseded, None, now_ms()) {
            metrics.state_error();
            tracing::error!(delivery, "marking a superseded delivery failed: {err}");
        }
    }
}

async fn render_metrics(State(state): State<Arc<AppState>>) -> ([(&'static str, &'static str); 1], String) {
    let (depth, oldest) = state.lanes.depth();
    let gauges = QueueGauges {
        depth,
        oldest_age: oldest.map(|ms| Duration::from_millis(u64::try_from(now_ms() - ms).unwrap_or(0))),
    };
    ([("content-type", "text/plain; version=0.0.4")], state.metrics.render(&gauges))
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The one log line and the metric of a delivery, and its answer.
struct Delivery<'a> {
    event: &'static str,
    action: &'a str,
    id: &'a str,
    metrics: &'a Metrics,
}

impl Delivery<'_> {
    fn answer(&self, outcome: &'static str, status: StatusCode, reason: &str) -> (StatusCode, String) {
        self.log(outcome, status, reason);
        (status, format!("{reason}\n"))
    }

    /// An event the bot does not act on: the reason is logged, the answer stays "nothing to do".
    fn ignored(&self, reason: &str) -> (StatusCode, String) {
        self.log("ignored", StatusCode::ACCEPTED, reason);
        (StatusCode::ACCEPTED, "nothing to do\n".into())
    }

    fn log(&self, outcome: &'static str, status: StatusCode, reason: &str) {
        self.metrics.delivery(self.event, outcome);
        let (event, action, delivery) = (self.event, self.action, self.id);
        if status.is_server_error() {
            tracing::error!(event, action, delivery, outcome, reason, "webhook delivery");
        } else if status.is_client_error() {
            tracing::warn!(event, action, delivery, outcome, reason, "webhook delivery");
        } else {
            tracing::info!(event, action, delivery, outcome, reason, "webhook delivery");
        }
    }
}

/// The webhook event an [`Event`] came from, as a metric label.
fn event_name(event: &Event) -> &'static str {
    match event {
        Event::PullRequest(_) => "pull_request",
        Event::IssueComment(_) => "issue_comment",
        Event::Review(_) => "pull_request_review",
        Event::Dispatch(_) => "workflow_dispatch",
        Event::MergeGroup(_) => "merge_group",
        Event::Ping => "ping",
        Event::Ignored { .. } => "other",
    }
}

fn action_of(event: &Event) -> &str {
    match event {
        Event::PullRequest(e) => &e.action,
        Event::IssueComment(e) => &e.action,
        Event::Review(e) => &e.action,
        Event::Dispatch(_) | Event::MergeGroup(_) | Event::Ping | Event::Ignored { .. } => "",
    }
}

/// Why a body was not read whole.
enum BodyRefused {
    TooLarge,
    Busy,
    Slow,
    Broken(String),
}

/// Reads the body into the signature check as it arrives, bounded in size, time, and the
/// server-wide budget of unauthenticated bytes (held until the delivery is answered). A body
/// over the bound is read on without being kept, up to twice the bound, so that the client
/// (which is still sending) gets its 413 instead of a reset connection.
async fn read_signed_body(
    state: &AppState,
    body: Body,
    verifier: &mut webhook::Verifier,
) -> Result<(Vec<u8>, tokio::sync::OwnedSemaphorePermit), BodyRefused> {
    let mut held = state.inflight.clone().try_acquire_many_owned(1).map_err(|_| BodyRefused::Busy)?;
    let deadline = tokio::time::Instant::now() + state.body_timeout;
    let mut body = body;
    let mut bytes = Vec::new();
    let mut discarded: usize = 0;
    loop {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) => return Err(BodyRefused::Slow),
            Ok(None) if discarded > 0 => return Err(BodyRefused::TooLarge),
            Ok(None) => return Ok((bytes, held)),
            Ok(Some(Err(err))) => return Err(BodyRefused::Broken(err.to_string())),
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(chunk) = frame.into_data() else { continue };
        if discarded > 0 || bytes.len() + chunk.len() > state.max_body_bytes {
            discarded += chunk.len();
            bytes = Vec::new();
            if discarded > state.max_body_bytes {
                return Err(BodyRefused::TooLarge);
            }
            continue;
        }
        let want = (bytes.len() + chunk.len()).div_ceil(1024) as u32;
        if let Some(more) = want.checked_sub(held.num_permits() as u32).filter(|n| *n > 0) {
            held.merge(state.inflight.clone().try_acquire_many_owned(more).map_err(|_| BodyRefused::Busy)?);
        }
        verifier.update(&chunk);
        bytes.extend_from_slice(&chunk);
    }
}

async fn receive(State(state): State<Arc<AppState>>, request: Request) -> (StatusCode, String) {
    let (parts, body) = request.into_parts();
    let headers = &parts.headers;
    let name = header(headers, "x-github-event").unwrap_or("");
    let id = header(headers, "x-github-delivery").unwrap_or("");
    let mut delivery = Delivery { event: event_label(name), action: "", id, metrics: &state.metrics };
    let secrets: Vec<&[u8]> = state.secrets.iter().map(|s| s.expose_secret().as_bytes()).collect();
    let mut verifier = match webhook::Verifier::new(&secrets, header(headers, "x-hub-signature-256")) {
        Ok(verifier) => verifier,
        Err(err) => return delivery.answer("unauthorized", StatusCode::UNAUTHORIZED, &err.to_string()),
    };
    let declared = header(headers, "content-length").and_then(|v| v.parse::<u64>().ok());
    // Far over the bound: refused before reading (the connection closes); a little over: the
    // body is read and dropped, so the client sees the 413.
    if declared.is_some_and(|n| n > 2 * state.max_body_bytes as u64) {
        let reason = format!("body larger than {} bytes", state.max_body_bytes);
        return delivery.answer("too_large", StatusCode::PAYLOAD_TOO_LARGE, &reason);
    }
    let (body, _held) = match read_signed_body(&state, body, &mut verifier).await {
        Ok(read) => read,
        Err(BodyRefused::TooLarge) => {
            let reason = format!("body larger than {} bytes", state.max_body_bytes);
            return delivery.answer("too_large", StatusCode::PAYLOAD_TOO_LARGE, &reason);
        }
        Err(BodyRefused::Busy) => {
            let reason = "too many unfinished request bodies; redeliver later";
            return delivery.answer("busy", StatusCode::SERVICE_UNAVAILABLE, reason);
        }
        Err(BodyRefused::Slow) => {
            let reason = format!("body not received within {} s", state.body_timeout.as_secs());
            return delivery.answer("timeout", StatusCode::REQUEST_TIMEOUT, &reason);
        }
        // The client went away or its connection timed out mid-body: nobody reads an answer.
        Err(BodyRefused::Broken(err)) => {
            return delivery.answer("incomplete_body", StatusCode::BAD_REQUEST, &format!("reading the body: {err}"))
        }
    };
    if let Err(err) = verifier.finish() {
        return delivery.answer("unauthorized", StatusCode::UNAUTHORIZED, &err.to_string());
    }
    if id.is_empty() || id.len() > 128 || !id.is_ascii() {
        return delivery.answer("bad_request", StatusCode::BAD_REQUEST, "missing or invalid X-GitHub-Delivery header");
    }
    if name.is_empty() {
        return delivery.answer("bad_request", StatusCode::BAD_REQUEST, "missing X-GitHub-Event header");
    }
    let event = match event::parse(name, &body) {
        Ok(event) => event,
        Err(err) => return delivery.answer("bad_request", StatusCode::BAD_REQUEST, &err.to_string()),
    };
    let action = action_of(&event).to_string();
    delivery.action = &action;
    let Some((repo, pr)) = event.pr_key().map(|(repo, pr)| (repo.clone(), pr)) else {
        let reason = match &event {
            Event::Ignored { reason, .. } => reason,
            _ => "nothing to do",
        };
        return delivery.ignored(reason);
    };
    state.details.iter().for_each(|d| d.note_visibility(&repo, &body));
    // Stored (committed) before the 202: a crash after the answer loses nothing.
    let received = now_ms();
    let accepted = match state.store.accept(id, name, &queue::pr_name(&repo, pr), &body, received) {
        Ok(accepted) => accepted,
        Err(err) => {
            state.metrics.state_error();
            let reason = format!("the event queue could not store the delivery ({err}); redeliver later");
            return delivery.answer("state_error", StatusCode::SERVICE_UNAVAILABLE, &reason);
        }
    };
    let outcome = match accepted {
        Accepted::Duplicate(_) => return delivery.answer("duplicate", StatusCode::OK, "duplicate delivery"),
        Accepted::New => "queued",
        Accepted::Again => "queued_again",
    };
    // Remembered for the reconcile pass; a failure only costs that (the delivery is stored).
    if let Err(err) = state.state.remember_repo(&repo, event.installation_id()) {
        state.metrics.state_error();
        tracing::error!(delivery = id, "repository not recorded: {err}");
    }
    let entry =
        Entry { job: Job { delivery: id.to_string(), event }, durable: true, received_ms: received, not_before: None };
    match state.lanes.push(&repo, pr, entry, false) {
        Pushed::Queued { superseded } => {
            mark_superseded(&state.store, &state.metrics, &superseded);
            let reason = if outcome == "queued" { "queued" } else { "failed before; queued again" };
            delivery.answer(outcome, StatusCode::ACCEPTED, reason)
        }
        Pushed::Full => {
            // Not kept: GitHub's redelivery of this event must be accepted later.
            if let Err(err) = state.store.finish(id, RowState::Failed, Some("queue full"), now_ms()) {
                state.metrics.state_error();
                tracing::error!(delivery = id, "delivery not released: {err}");
            }
            delivery.answer("queue_full", StatusCode::SERVICE_UNAVAILABLE, "work queue full; redeliver later")
        }
    }
}

struct Worker<C> {
    clients: Arc<C>,
    bot: Arc<BotConfig>,
    metrics: Arc<Metrics>,
    store: Arc<QueueStore>,
    lanes: Arc<Lanes>,
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

/// How one attempt at an event ended.
enum Attempt {
    Done,
    Retry(String),
    Failed(String),
}

impl<C: Clients> Worker<C> {
    async fn run(self) {
        while let Some((key, mut entry)) = self.lanes.next().await {
            let delivery = entry.job.delivery.clone();
            // A stored delivery counts its attempt first; one no longer queued (an operator
            // dropped it) is skipped.
            let attempt = if entry.durable {
                match self.store.start(&delivery) {
                    Ok(Some(attempt)) => attempt,
                    Ok(None) => {
                        tracing::info!(delivery, "skipped: no longer queued");
                        self.lanes.done(key, &delivery, None);
                        continue;
                    }
                    Err(err) => {
                        self.metrics.state_error();
                        tracing::error!(delivery, "counting the attempt failed: {err}");
                        1
                    }
                }
            } else {
                1
            };
            let started = Instant::now();
            let result = self.attempt(&entry.job, attempt).await;
            let finished = match &result {
                Attempt::Done => Some((RowState::Done, None)),
                Attempt::Failed(err) => Some((RowState::Failed, Some(err.as_str()))),
                Attempt::Retry(err) => {
                    self.metrics.event_retry();
                    if entry.durable {
                        if let Err(e) = self.store.retry_later(&delivery, err) {
                            self.metrics.state_error();
                            tracing::error!(delivery, "recording the failure failed: {e}");
                        }
                    }
                    None
                }
            };
            if let Some((row, error)) = finished {
                self.metrics.handled(started.elapsed(), row == RowState::Done);
                if entry.durable {
                    if let Err(err) = self.store.finish(&delivery, row, error, now_ms()) {
                        self.metrics.state_error();
                        tracing::error!(delivery, "marking the delivery {} failed: {err}", row.as_str());
                    }
                }
                self.lanes.done(key, &delivery, None);
            } else {
                let backoff = self.retry_delay.saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1)));
                entry.not_before = Some(Instant::now() + backoff);
                self.lanes.done(key, &delivery, Some(entry));
            }
        }
    }

    async fn attempt(&self, job: &Job, attempt: u32) -> Attempt {
        let delivery = &job.delivery;
        let gh = match self.clients.client(job.event.installation_id()) {
            Ok(gh) => gh,
            Err(err) => {
                tracing::error!(delivery, "event failed: no GitHub client: {err}");
                return Attempt::Failed(format!("no GitHub client: {err}"));
            }
        };
        let counts = Arc::new(crate::github::EventRequests::default());
        let handled =
            crate::github::EventRequests::scope(counts.clone(), handlers::handle(gh.as_ref(), &self.bot, &job.event));
        let handled = handled.await;
        let (event, action) = (event_name(&job.event), metrics::action_label(action_of(&job.event)));
        let load = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
        self.metrics.event_requests(event, action, load(&counts.github), load(&counts.upstream));
        match handled {
            Ok(outcome) => {
                tracing::info!(delivery, attempt, actions = ?outcome.lines, "event handled");
                Attempt::Done
            }
            // An error may quote a configured URL: its credentials are neither logged nor stored.
            Err(err) if is_transient(&err) && attempt < self.attempts => {
                let err = config::redact_credentials(&err.to_string());
                tracing::warn!(delivery, attempt, "transient failure, retrying later: {err}");
                Attempt::Retry(err)
            }
            Err(err) => {
                let err = config::redact_credentials(&err.to_string());
                tracing::error!(delivery, attempt, "event failed: {err}");
                Attempt::Failed(err)
            }
        }
    }
}
