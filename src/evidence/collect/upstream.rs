//! The `Upstream` edge (ARCHITECTURE decision 6): upstream recipe PRs on GitHub, OCI image
//! digests through the registries' anonymous token flow, and Hugging Face `config.json` files.
//! Check 3's upstream content too: a recipe PR's changed files at its merge commit, and published
//! recipe pages as text (HTML stripped, bounded, lossy UTF-8).
//! Every answer is a [`Fact`]: what could not be fetched says why, and never stops collection.
//!
//! Definite answers ("this image tag, model or PR does not exist": HTTP 404) are
//! `Fact::Unavailable` with a reason starting [`NOT_FOUND`]; every other reason (timeouts,
//! 5xx, refused hosts) means "could not tell" (Check 18(e) fails only on the former).
//!
//! No SSRF (issue 14 item 5): the names in a PR pick the host (an image reference names its
//! registry), so every URL, Bearer realm and redirect target must be on
//! [`UpstreamConfig::allowed_hosts`], and every address a host resolves to must be public
//! unless [`UpstreamConfig::allow_private_addresses`] is set. The resolver checks the
//! addresses reqwest actually connects to, so a name that resolves to 127.0.0.1 is refused too.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, ACCEPT, AUTHORIZATION, WWW_AUTHENTICATE};
use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::evidence::{Fact, UpstreamContent, UpstreamPull};
use crate::github::transfer::{Meter, TransferCut, TransferLimits};

/// Manifest media types a registry may answer with; an index digest is what `docker pull` pins.
const MANIFEST_ACCEPT: &str = "application/vnd.oci.image.index.v1+json, \
application/vnd.docker.distribution.manifest.list.v2+json, \
application/vnd.docker.distribution.manifest.v2+json, \
application/vnd.oci.image.manifest.v1+json";

/// Largest JSON answer read from any upstream (configs and PR listings are small).
const MAX_JSON_BYTES: usize = 4 * 1024 * 1024;
/// Most pages of an upstream PR's file list (100 files each).
const MAX_FILE_PAGES: u32 = 5;
/// Most files of one upstream PR read for Check 3 (documentation and recipe files only).
const MAX_CONTENT_FILES: usize = 16;
/// Most bytes of text kept per upstream file or page (a cookbook page is tens of KiB).
const MAX_CONTENT_CHARS: usize = 512 * 1024;
/// File kinds of an upstream PR that document a recipe.
const CONTENT_EXTENSIONS: [&str; 8] = [".md", ".mdx", ".markdown", ".rst", ".txt", ".yaml", ".yml", ".sh"];

use crate::evidence::NOT_FOUND;

/// Hosts the defaults reach: the GitHub API, Hugging Face, and the registries the spec names
/// with their token realms (Docker Hub's `auth.docker.io`; nvcr.io and ghcr.io serve their own).
/// The published recipe sites (Check 3) are fetched too.
pub const DEFAULT_ALLOWED_HOSTS: [&str; 8] = [
    "api.github.com",
    "huggingface.co",
    "registry-1.docker.io",
    "auth.docker.io",
    "nvcr.io",
    "ghcr.io",
    "docs.sglang.io",
    "recipes.vllm.ai",
];

#[derive(Debug, Clone)]
pub struct UpstreamConfig {
    /// GitHub REST base for upstream repositories (`https://api.github.com`).
    pub github_api: String,
    /// Optional token for upstream GitHub reads (anonymous reads are rate-limited to 60/h).
    pub github_token: Option<String>,
    /// Hugging Face Hub base (`https://huggingface.co`).
    pub huggingface: String,
    /// Registry name in an image reference → base URL of its distribution API.
    pub registries: BTreeMap<String, String>,
    /// Published-page origin (`https://docs.sglang.io`) → base URL it is read from instead (a
    /// mirror, or a test fake). Empty: pages are read from their own origin.
    pub page_mirrors: BTreeMap<String, String>,
    /// Hosts (`name`, or `name:port` for one port) that may be contacted; everything else,
    /// including a registry a PR names, is refused before any connection.
    pub allowed_hosts: BTreeSet<String>,
    /// Allow loopback, private, link-local and other non-public addresses (local mirrors,
    /// tests). Off by default.
    pub allow_private_addresses: bool,
    pub timeout: Duration,
    pub attempts: u32,
    pub backoff: Duration,
    /// The minimum-rate rule of every answer's body (`github::transfer`, as for GitHub's
    /// downloads): a body that trickles is cut off and not retried.
    pub transfer: TransferLimits,
    /// Answers kept for every client made from this configuration (its clones share it).
    pub cache: Arc<UpstreamCache>,
    /// The pace of anonymous reads of api.github.com for every client of this configuration.
    pub anonymous: Arc<AnonymousPace>,
}

/// Anonymous reads of api.github.com one process sends in an hour (HT14). GitHub allows 60 an
/// hour per address to unauthenticated callers ("Rate limits for the REST API"); reads stop
/// well under it, so that no burst of PRs spends what every verification's Check 3 needs, and
/// the rest of the hour's answers come from the cache or name the bound.
pub const ANONYMOUS_GITHUB_PER_HOUR: u64 = 40;

/// The hourly count of [`ANONYMOUS_GITHUB_PER_HOUR`].
#[derive(Debug)]
pub struct AnonymousPace {
    per_hour: u64,
    window: std::sync::Mutex<Option<(std::time::Instant, u64)>>,
}

impl Default for AnonymousPace {
    fn default() -> Self {
        AnonymousPace::new(ANONYMOUS_GITHUB_PER_HOUR)
    }
}

impl AnonymousPace {
    pub fn new(per_hour: u64) -> AnonymousPace {
        AnonymousPace { per_hour, window: std::sync::Mutex::new(None) }
    }

    /// Takes one read of this hour while fewer than `cap` were taken; false otherwise.
    fn take(&self, cap: u64) -> bool {
        let mut window = self.window.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = std::time::Instant::now();
        let (start, used) = match *window {
            Some((start, used)) if now.duration_since(start) < Duration::from_secs(3600) => (start, used),
            _ => (now, 0),
        };
        let took = used < cap.min(self.per_hour);
        *window = Some((start, used + u64::from(took)));
        took
    }
}

/// Upstream answers kept by URL (issue 35 case 8, decision HT14), shared by every client of one
/// process: what a commit pins (a merged PR, its file list, a file at a commit) for a day, a
/// published page or a model's `config.json` for [`SHORT_LIVED`], and the last answer of every
/// other GitHub read with its `ETag`, asked again with `If-None-Match` (GitHub does not count a
/// `304` against the rate limit). At most [`MAX_CACHED`] answers and [`MAX_CACHED_BYTES`]
/// bytes; past either the oldest is dropped.
#[derive(Default)]
pub struct UpstreamCache {
    answers: std::sync::Mutex<std::collections::HashMap<String, Cached>>,
}

impl std::fmt::Debug for UpstreamCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstreamCache").field("answers", &self.lock().len()).finish()
    }
}

/// How long a page or a model configuration is kept.
pub const SHORT_LIVED: Duration = Duration::from_secs(300);
/// How long an answer a commit pins is kept.
const PINNED: Duration = Duration::from_secs(24 * 3600);
/// Most answers kept.
const MAX_CACHED: usize = 4096;
/// Most bytes of answers kept.
const MAX_CACHED_BYTES: usize = 64 << 20;

#[derive(Clone)]
struct Cached {
    stored: std::time::Instant,
    /// `None`: not fresh on its own; used only when the server answers `304`.
    fresh_for: Option<Duration>,
    etag: Option<String>,
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
}

type Answer = (StatusCode, HeaderMap, Vec<u8>);
/// How long an answer is kept, from its status and body (`None`: only for its `ETag`).
type KeepFor = dyn Fn(StatusCode, &[u8]) -> Option<Duration> + Sync;

impl UpstreamCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, Cached>> {
        self.answers.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn fresh(&self, key: &str) -> Option<Answer> {
        let answers = self.lock();
        let hit = answers.get(key)?;
        let fresh = hit.fresh_for.is_some_and(|ttl| hit.stored.elapsed() < ttl);
        fresh.then(|| (hit.status, hit.headers.clone(), hit.body.clone()))
    }

    fn etag(&self, key: &str) -> Option<String> {
        self.lock().get(key).and_then(|c| c.etag.clone())
    }

    /// The kept answer, confirmed by a `304`.
    fn revalidated(&self, key: &str) -> Option<Answer> {
        let mut answers = self.lock();
        let hit = answers.get_mut(key)?;
        hit.stored = std::time::Instant::now();
        Some((hit.status, hit.headers.clone(), hit.body.clone()))
    }

    fn store(&self, key: String, cached: Cached) {
        let mut answers = self.lock();
        answers.insert(key, cached);
        let mut bytes: usize = answers.values().map(|c| c.body.len()).sum();
        while answers.len() > MAX_CACHED || bytes > MAX_CACHED_BYTES {
            let Some(oldest) = answers.iter().min_by_key(|(_, c)| c.stored).map(|(k, _)| k.clone()) else { break };
            bytes -= answers.remove(&oldest).map_or(0, |c| c.body.len());
        }
    }
}

impl Default for UpstreamConfig {
    fn default() -> Self {
        let registries = [
            ("docker.io", "https://registry-1.docker.io"),
            ("nvcr.io", "https://nvcr.io"),
            ("ghcr.io", "https://ghcr.io"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        UpstreamConfig {
            github_api: "https://api.github.com".into(),
            github_token: None,
            huggingface: "https://huggingface.co".into(),
            registries,
            page_mirrors: BTreeMap::new(),
            allowed_hosts: DEFAULT_ALLOWED_HOSTS.map(String::from).into(),
            allow_private_addresses: false,
            timeout: Duration::from_secs(30),
            attempts: 3,
            backoff: Duration::from_millis(300),
            // Within the 30 s total timeout: every 10 s must bring 16 KiB (an answer is at most
            // MAX_JSON_BYTES; a whole small answer ends the body before a window is judged).
            transfer: TransferLimits {
                download_timeout: Duration::from_secs(30),
                rate_window: Duration::from_secs(10),
                min_window_bytes: 16 << 10,
                max_answer_bytes: MAX_JSON_BYTES as u64,
                max_list_bytes: MAX_JSON_BYTES as u64,
            },
            cache: Arc::default(),
            anonymous: Arc::default(),
        }
    }
}

pub struct UpstreamClient {
    config: UpstreamConfig,
    policy: HostPolicy,
    http: reqwest::Client,
    requests: AtomicU64,
    budget: Option<RequestBudget>,
}

/// Requests a client may still send, shared by the clients of one budget (a PR's preflight in
/// one hour), and what to say once they are spent.
#[derive(Debug, Clone)]
pub struct RequestBudget {
    pub left: Arc<AtomicU64>,
    pub spent: String,
}

/// An image reference split into registry, repository and tag or digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    pub registry: String,
    pub repository: String,
    /// A tag, or `sha256:…` when the reference is pinned by digest.
    pub reference: String,
}

impl ImageRef {
    /// Parses `[registry/]repo[:tag][@digest]` the way `docker pull` does (Docker Hub by default,
    /// `library/` for single-segment names, `latest` when no tag is given), and the enroot form
    /// `registry#repo[:tag]` the master configs use (`nvcr.io#nvidia/…`), as Check 6 reads it.
    pub fn parse(text: &str) -> Option<ImageRef> {
        let text = text.trim();
        let enroot = text.split_once('#').filter(|(registry, _)| !registry.contains('/'));
        let joined = enroot.map(|(registry, rest)| format!("{registry}/{rest}"));
        let text = joined.as_deref().unwrap_or(text);
        let valid = |s: &str| {
            !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-/:@".contains(&b)) && !s.contains("..")
        };
        if !valid(text) || text.len() > 512 {
            return None;
        }
        let (name, digest) = match text.split_once('@') {
            Some((name, digest)) => (name, Some(digest)),
            None => (text, None),
        };
        let (registry, rest) = match name.split_once('/') {
            Some((first, rest)) if first.contains('.') || first.contains(':') || first == "localhost" => {
                (first.to_string(), rest.to_string())
            }
            _ => ("docker.io".to_string(), name.to_string()),
        };
        let (repository, tag) = match rest.rsplit_once(':') {
            Some((repo, tag)) if !tag.contains('/') => (repo.to_string(), tag.to_string()),
            _ => (rest, "latest".to_string()),
        };
        let repository = if registry == "docker.io" && !repository.contains('/') {
            format!("library/{repository}")
        } else {
            repository
        };
        let reference = digest.map_or(tag, str::to_string);
        (!repository.is_empty() && !reference.is_empty()).then_some(ImageRef { registry, repository, reference })
    }
}

/// `Bearer realm="…",service="…",scope="…"` → its parameters.
fn bearer_challenge(header: &str) -> Option<BTreeMap<String, String>> {
    let rest = header.trim().strip_prefix("Bearer ").or_else(|| header.trim().strip_prefix("bearer "))?;
    let mut params = BTreeMap::new();
    for part in split_params(rest) {
        let (k, v) = part.split_once('=')?;
        params.insert(k.trim().to_ascii_lowercase(), v.trim().trim_matches('"').to_string());
    }
    params.contains_key("realm").then_some(params)
}

/// Splits on commas outside double quotes (scopes contain commas: `pull,push`).
fn split_params(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

enum Failure {
    Retry(String),
    Final(String),
}

/// The error and its causes, each said once (reqwest's own text omits the cause).
fn describe(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text = format!("{text}: {cause_text}");
        }
        source = cause.source();
    }
    text
}

/// The allowlist or address refusal inside a request error, if that is what stopped it (only
/// our own words, from "redirect refused" or "… not contacted" on).
fn refusal(err: &reqwest::Error) -> Option<String> {
    let text = describe(err);
    let parts: Vec<&str> = text.split(": ").collect();
    let start = parts.iter().position(|p| p.starts_with("redirect refused") || p.ends_with("not contacted"))?;
    Some(parts[start..].join(": "))
}

/// Why an address may not be contacted (`None`: it is public).
fn non_public(ip: IpAddr) -> Option<&'static str> {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            if v4.is_loopback() {
                Some("loopback")
            } else if v4.is_private() || (a == 100 && (64..128).contains(&b)) {
                Some("private")
            } else if v4.is_link_local() {
                Some("link-local")
            } else if v4.is_unspecified() || v4.is_broadcast() || v4.is_multicast() || a == 0 || a >= 240 {
                Some("reserved")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            if v6.is_loopback() {
                Some("loopback")
            } else if first & 0xfe00 == 0xfc00 {
                Some("private")
            } else if first & 0xffc0 == 0xfe80 {
                Some("link-local")
            } else if v6.is_unspecified() || v6.is_multicast() {
                Some("reserved")
            } else {
                None
            }
        }
    }
}

/// The allowlist and address rule, shared by the request path, the redirect policy and the
/// resolver.
#[derive(Debug, Clone)]
struct HostPolicy {
    allowed: BTreeSet<String>,
    allow_private: bool,
}

impl HostPolicy {
    /// Whether `url` may be fetched, before any connection. The reason names only what the
    /// URL itself says (no resolved address), so it can be posted publicly.
    fn check(&self, url: &reqwest::Url) -> Result<(), String> {
        if !matches!(url.scheme(), "https" | "http") {
            return Err(format!("scheme {:?} is not allowed", url.scheme()));
        }
        let host =
            url.host_str().unwrap_or_default().trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        let port = url.port_or_known_default().unwrap_or(0);
        if !self.allowed.contains(&host) && !self.allowed.contains(&format!("{host}:{port}")) {
            return Err(format!("host {host} is not on the upstream allowlist; not contacted"));
        }
        if let (Ok(ip), false) = (host.parse::<IpAddr>(), self.allow_private) {
            if let Some(kind) = non_public(ip) {
                return Err(format!("host {host} is a {kind} address; not contacted"));
            }
        }
        Ok(())
    }
}

/// Resolves with the system resolver and drops non-public addresses unless allowed, so a
/// public-looking allowed name that points inside the network is never connected to.
struct CheckedResolver {
    allow_private: bool,
}

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_string();
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let usable: Vec<SocketAddr> =
                found.into_iter().filter(|a| allow_private || non_public(a.ip()).is_none()).collect();
            if usable.is_empty() {
                let message = format!("{host} resolves to no public address; not contacted");
                return Err(Box::new(std::io::Error::other(message)) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(usable.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

impl UpstreamClient {
    pub fn new(config: UpstreamConfig) -> Result<UpstreamClient, reqwest::Error> {
        let allowed = config.allowed_hosts.iter().map(|h| h.trim().to_ascii_lowercase()).collect();
        let policy = HostPolicy { allowed, allow_private: config.allow_private_addresses };
        let redirects = policy.clone();
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .user_agent(concat!("sweepgate/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::custom(move |attempt| {
                if attempt.previous().len() >= 5 {
                    return attempt.error("more than 5 redirects");
                }
                match redirects.check(attempt.url()) {
                    Ok(()) => attempt.follow(),
                    Err(reason) => attempt.error(format!("redirect refused: {reason}")),
                }
            }))
            .dns_resolver(Arc::new(CheckedResolver { allow_private: config.allow_private_addresses }))
            .build()?;
        Ok(UpstreamClient { config, policy, http, requests: AtomicU64::new(0), budget: None })
    }

    /// This client sends at most what `budget` has left; answers from the cache cost nothing.
    pub fn with_budget(mut self, budget: RequestBudget) -> UpstreamClient {
        self.budget = Some(budget);
        self
    }

    /// [`UpstreamClient::send`] through the cache: a fresh kept answer is used as is; otherwise
    /// the request carries the kept `ETag` and a `304` uses the kept answer. A `200` or `404`
    /// is kept for the time `keep` gives it (`None`: only for its `ETag`).
    async fn send_cached(
        &self,
        url: &str,
        headers: &[(reqwest::header::HeaderName, String)],
        keep: impl Fn(StatusCode, &[u8]) -> Option<Duration>,
    ) -> Result<Answer, String> {
        let accept = headers.iter().find(|(name, _)| *name == ACCEPT).map_or("", |(_, v)| v.as_str());
        let key = format!("{url} {accept}");
        let cache = &self.config.cache;
        if let Some(hit) = cache.fresh(&key) {
            return Ok(hit);
        }
        let mut headers = headers.to_vec();
        if let Some(etag) = cache.etag(&key) {
            headers.push((reqwest::header::IF_NONE_MATCH, etag));
        }
        let (status, answer_headers, body) = self.send(Method::GET, url, &headers).await?;
        if status == StatusCode::NOT_MODIFIED {
            return cache.revalidated(&key).ok_or_else(|| format!("{url}: HTTP 304 for an answer not kept"));
        }
        if status == StatusCode::OK || status == StatusCode::NOT_FOUND {
            let etag = answer_headers.get(reqwest::header::ETAG).and_then(|v| v.to_str().ok()).map(str::to_owned);
            let fresh_for = keep(status, &body);
            if fresh_for.is_some() || etag.is_some() {
                let stored = std::time::Instant::now();
                let cached =
                    Cached { stored, fresh_for, etag, status, headers: answer_headers.clone(), body: body.clone() };
                cache.store(key, cached);
            }
        }
        Ok((status, answer_headers, body))
    }

    /// Requests sent so far (retries included).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// One request with retries on 5xx, 429 and transport errors. Returns status, headers, body.
    async fn send(
        &self,
        method: Method,
        url: &str,
        headers: &[(reqwest::header::HeaderName, String)],
    ) -> Result<(StatusCode, HeaderMap, Vec<u8>), String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("{url:?} is not a URL: {e}"))?;
        self.policy.check(&parsed)?;
        let mut last = String::new();
        for attempt in 0..self.config.attempts.max(1) {
            if attempt > 0 {
                tokio::time::sleep(self.config.backoff.saturating_mul(1 << attempt.min(6))).await;
            }
            match self.send_once(method.clone(), url, headers).await {
                Ok(answer) => return Ok(answer),
                Err(Failure::Final(message)) => return Err(message),
                Err(Failure::Retry(message)) => last = message,
            }
        }
        Err(format!("{last} (after {} attempts)", self.config.attempts.max(1)))
    }

    async fn send_once(
        &self,
        method: Method,
        url: &str,
        headers: &[(reqwest::header::HeaderName, String)],
    ) -> Result<(StatusCode, HeaderMap, Vec<u8>), Failure> {
        // A budgeted client (preflight) may take half the hour's anonymous reads: the rest is
        // left for the verifications.
        let pace = &self.config.anonymous;
        let cap = if self.budget.is_some() { pace.per_hour / 2 } else { pace.per_hour };
        if self.config.github_token.is_none() && url.starts_with("https://api.github.com/") && !pace.take(cap) {
            return Err(Failure::Final(format!(
                "{url}: not read: anonymous reads of api.github.com stop at {cap} an hour (GitHub allows 60); \
                 set SWEEPGATE_UPSTREAM_TOKEN"
            )));
        }
        if let Some(budget) = &self.budget {
            let took = budget.left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
            if took.is_err() {
                return Err(Failure::Final(format!("{url}: not read: {}", budget.spent)));
            }
        }
        self.requests.fetch_add(1, Ordering::Relaxed);
        crate::github::EventRequests::count_upstream();
        let mut request = self.http.request(method, url);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let mut response = request.send().await.map_err(|e| match refusal(&e) {
            // A refused redirect or address stays refused: retrying cannot change it.
            Some(reason) => Failure::Final(format!("{url}: {reason}")),
            None => Failure::Retry(format!("{url}: {}", describe(&e))),
        })?;
        let status = response.status();
        if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
            return Err(Failure::Retry(format!("{url}: HTTP {}", status.as_u16())));
        }
        let headers = response.headers().clone();
        let mut meter = Meter::new(self.config.transfer, MAX_JSON_BYTES as u64);
        loop {
            match meter.take(response.chunk()).await {
                Ok(true) => {}
                Ok(false) => return Ok((status, headers, meter.into_bytes())),
                Err(TransferCut::Broken(e)) => return Err(Failure::Retry(format!("{url}: {e}"))),
                Err(TransferCut::TooLarge(_)) => {
                    return Err(Failure::Final(format!("{url}: answer larger than {MAX_JSON_BYTES} bytes")))
                }
                // A server that trickles would trickle again: not retried.
                Err(cut) => return Err(Failure::Final(format!("{url}: {cut}"))),
            }
        }
    }

    async fn get_json(&self, url: &str, auth: Option<&str>) -> Result<Value, String> {
        self.get_json_kept(url, auth, None).await
    }

    /// [`UpstreamClient::get_json`] through the cache (`keep` as for [`Self::send_cached`]);
    /// `None`: not through the cache (a registry token).
    async fn get_json_kept(&self, url: &str, auth: Option<&str>, keep: Option<&KeepFor>) -> Result<Value, String> {
        let mut headers = vec![(ACCEPT, "application/json".to_string())];
        if let Some(token) = auth {
            headers.push((AUTHORIZATION, format!("Bearer {token}")));
        }
        let (status, _, body) = match keep {
            Some(keep) => self.send_cached(url, &headers, keep).await?,
            None => self.send(Method::GET, url, &headers).await?,
        };
        if status == StatusCode::NOT_FOUND {
            return Err(format!("{NOT_FOUND} {url}: HTTP 404"));
        }
        if !status.is_success() {
            return Err(format!("{url}: HTTP {}", status.as_u16()));
        }
        serde_json::from_slice(&body).map_err(|e| format!("{url}: not JSON: {e}"))
    }

    /// State, merge time and files of `owner/repo#number` (e.g. a vLLM recipes PR).
    pub async fn pull(&self, owner_repo: &str, number: u64) -> Fact<UpstreamPull> {
        match self.fetch_pull(owner_repo, number).await {
            Ok((pull, _)) => Fact::Ok(pull),
            Err(reason) => Fact::Unavailable(reason),
        }
    }

    /// The PR fact and its content: each changed documentation or recipe file's text at the
    /// merge commit (the head commit while unmerged). Content fails closed: one unreadable file
    /// makes the content unavailable, naming it.
    pub async fn pull_and_content(&self, owner_repo: &str, number: u64) -> (Fact<UpstreamPull>, Fact<UpstreamContent>) {
        let (pull, commit) = match self.fetch_pull(owner_repo, number).await {
            Ok(found) => found,
            Err(reason) => return (Fact::Unavailable(reason.clone()), Fact::Unavailable(reason)),
        };
        let content = match commit {
            None => Fact::Unavailable(format!("{owner_repo}#{number}: no merge or head commit to read files at")),
            Some(commit) => match self.fetch_files(owner_repo, &commit, &pull.files).await {
                Ok(content) => Fact::Ok(content),
                Err(reason) => Fact::Unavailable(reason),
            },
        };
        (Fact::Ok(pull), content)
    }

    async fn fetch_files(&self, owner_repo: &str, commit: &str, files: &[String]) -> Result<UpstreamContent, String> {
        let api = self.config.github_api.trim_end_matches('/');
        let wanted: Vec<&String> =
            files.iter().filter(|f| CONTENT_EXTENSIONS.iter().any(|e| f.to_ascii_lowercase().ends_with(e))).collect();
        if wanted.is_empty() {
            return Err(format!("{owner_repo}@{commit}: the PR changes no documentation or recipe file"));
        }
        let mut headers = vec![(ACCEPT, "application/vnd.github.raw".to_string())];
        if let Some(token) = self.config.github_token.as_deref() {
            headers.push((AUTHORIZATION, format!("Bearer {token}")));
        }
        let mut out = UpstreamContent {
            source: format!("{api}/repos/{owner_repo}/contents?ref={commit}"),
            files: BTreeMap::new(),
        };
        for path in wanted.into_iter().take(MAX_CONTENT_FILES) {
            let url = format!("{api}/repos/{owner_repo}/contents/{path}?ref={commit}");
            // A file at a commit never changes.
            let (status, _, body) = self.send_cached(&url, &headers, |_, _| Some(PINNED)).await?;
            match status {
                // Deleted by the PR: nothing to read at the merge commit.
                StatusCode::NOT_FOUND => continue,
                s if !s.is_success() => return Err(format!("{url}: HTTP {}", s.as_u16())),
                _ => {
                    out.files.insert(path.clone(), bounded_text(&String::from_utf8_lossy(&body)));
                }
            }
        }
        if out.files.is_empty() {
            return Err(format!("{owner_repo}@{commit}: none of the PR's documentation files could be read"));
        }
        Ok(out)
    }

    /// The text of `path` in GitHub repository `owner_repo` at `rev` (`None`: its default
    /// branch, what a `git clone` without `--branch` checks out), raw through the contents API.
    /// A file over `max_bytes`, or not UTF-8, is unavailable, never cut (a recipe read in part
    /// would be misread). A 404 is a definite [`NOT_FOUND`].
    pub async fn repository_file(
        &self,
        owner_repo: &str,
        rev: Option<&str>,
        path: &str,
        max_bytes: usize,
    ) -> Fact<String> {
        let api = self.config.github_api.trim_end_matches('/');
        let url = match rev {
            Some(rev) => format!("{api}/repos/{owner_repo}/contents/{path}?ref={rev}"),
            None => format!("{api}/repos/{owner_repo}/contents/{path}"),
        };
        let mut headers = vec![(ACCEPT, "application/vnd.github.raw".to_string())];
        if let Some(token) = self.config.github_token.as_deref() {
            headers.push((AUTHORIZATION, format!("Bearer {token}")));
        }
        // A file at a commit never changes; at a branch or tag it is asked again with its ETag.
        let pinned = rev.is_some_and(|r| r.len() == 40 && r.bytes().all(|b| b.is_ascii_hexdigit()));
        match self.send_cached(&url, &headers, |_, _| pinned.then_some(PINNED)).await {
            Ok((StatusCode::NOT_FOUND, _, _)) => Fact::Unavailable(format!("{NOT_FOUND} {url}: HTTP 404")),
            Ok((status, _, _)) if !status.is_success() => Fact::Unavailable(format!("{url}: HTTP {}", status.as_u16())),
            Ok((_, _, body)) if body.len() > max_bytes => {
                Fact::Unavailable(format!("{url}: {} bytes, more than the {max_bytes} read of one file", body.len()))
            }
            Ok((_, _, body)) => match String::from_utf8(body) {
                Ok(text) => Fact::Ok(text),
                Err(_) => Fact::Unavailable(format!("{url}: not UTF-8 text")),
            },
            Err(reason) => Fact::Unavailable(reason),
        }
    }

    /// A published recipe page as text (scripts, styles and tags removed, entities decoded).
    pub async fn page_text(&self, url: &str) -> Fact<UpstreamContent> {
        let fetched = self.mirrored(url);
        let headers = [(ACCEPT, "text/html, text/plain;q=0.9".to_string())];
        let answer = self.send_cached(&fetched, &headers, |_, _| Some(SHORT_LIVED)).await;
        match answer {
            Ok((StatusCode::NOT_FOUND, _, _)) => Fact::Unavailable(format!("{NOT_FOUND} {url}: HTTP 404")),
            Ok((status, _, _)) if !status.is_success() => Fact::Unavailable(format!("{url}: HTTP {}", status.as_u16())),
            Ok((_, _, body)) => {
                let text = html_to_text(&String::from_utf8_lossy(&body));
                Fact::Ok(UpstreamContent {
                    source: url.to_owned(),
                    files: [("page".to_owned(), bounded_text(&text))].into(),
                })
            }
            Err(reason) => Fact::Unavailable(reason),
        }
    }

    /// `url` with its origin replaced by a configured mirror.
    fn mirrored(&self, url: &str) -> String {
        for (origin, base) in &self.config.page_mirrors {
            if let Some(rest) = url.strip_prefix(origin.trim_end_matches('/')) {
                return format!("{}{rest}", base.trim_end_matches('/'));
            }
        }
        url.to_owned()
    }

    /// The PR fact and the commit its files are read at (merge commit, else head).
    async fn fetch_pull(&self, owner_repo: &str, number: u64) -> Result<(UpstreamPull, Option<String>), String> {
        let base = format!("{}/repos/{owner_repo}/pulls/{number}", self.config.github_api.trim_end_matches('/'));
        let token = self.config.github_token.as_deref();
        // A merged PR never changes; an open one is asked again with its ETag.
        let merged = |status: StatusCode, body: &[u8]| {
            let value: Value = serde_json::from_slice(body).unwrap_or_default();
            (status == StatusCode::OK && value.get("merged_at").is_some_and(|m| !m.is_null())).then_some(PINNED)
        };
        let pull = self.get_json_kept(&base, token, Some(&merged)).await?;
        let text = |key: &str| pull.get(key).and_then(Value::as_str).map(str::to_string);
        let is_merged = text("merged_at").is_some();
        let files_kept = move |_: StatusCode, _: &[u8]| is_merged.then_some(PINNED);
        // Bounded like `github::octo`'s lists: pages, items per page (a server that ignores
        // `per_page` is refused), and a list longer than the pages is unavailable, never cut short.
        let mut files = Vec::new();
        let mut complete = false;
        for page in 1..=MAX_FILE_PAGES {
            let listing =
                self.get_json_kept(&format!("{base}/files?per_page=100&page={page}"), token, Some(&files_kept)).await?;
            let batch = listing.as_array().ok_or_else(|| format!("{base}/files: not a list"))?;
            if batch.len() > 100 {
                return Err(format!("{base}/files: {} items on a page of at most 100", batch.len()));
            }
            files.extend(batch.iter().filter_map(|f| f.get("filename").and_then(Value::as_str)).map(str::to_string));
            if batch.len() < 100 {
                complete = true;
                break;
            }
        }
        if !complete {
            return Err(format!("{base}/files: more than {} files; refusing to read further", MAX_FILE_PAGES * 100));
        }
        let is_sha = |s: &String| s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit());
        let head = pull.get("head").and_then(|h| h.get("sha")).and_then(Value::as_str).map(str::to_string);
        let commit = text("merge_commit_sha").filter(|_| text("merged_at").is_some()).or(head).filter(is_sha);
        let fact = UpstreamPull {
            state: text("state").ok_or_else(|| format!("{base}: no state"))?,
            draft: pull.get("draft").and_then(Value::as_bool).unwrap_or(false),
            merged_at: text("merged_at"),
            files,
        };
        Ok((fact, commit))
    }

    /// The manifest digest `image` resolves to now (`sha256:…`); a registry's 404 (manifest
    /// or repository unknown) is `Unavailable` with a reason starting [`NOT_FOUND`].
    pub async fn image_digest(&self, image: &str) -> Fact<String> {
        match self.fetch_digest(image).await {
            Ok(digest) => Fact::Ok(digest),
            Err(reason) => Fact::Unavailable(reason),
        }
    }

    async fn fetch_digest(&self, image: &str) -> Result<String, String> {
        let parsed = ImageRef::parse(image).ok_or_else(|| format!("{image:?} is not an image reference"))?;
        let base = self
            .config
            .registries
            .get(&parsed.registry)
            .cloned()
            .unwrap_or_else(|| format!("https://{}", parsed.registry));
        let url = format!("{}/v2/{}/manifests/{}", base.trim_end_matches('/'), parsed.repository, parsed.reference);
        let accept = (ACCEPT, MANIFEST_ACCEPT.to_string());
        let (mut status, mut headers, _) = self.send(Method::HEAD, &url, std::slice::from_ref(&accept)).await?;
        if status == StatusCode::UNAUTHORIZED {
            let challenge = headers
                .get(WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .and_then(bearer_challenge)
                .ok_or_else(|| format!("{url}: HTTP 401 without a Bearer challenge"))?;
            let token = self.anonymous_token(&challenge, &parsed).await?;
            let auth = (AUTHORIZATION, format!("Bearer {token}"));
            (status, headers, _) = self.send(Method::HEAD, &url, &[accept, auth]).await?;
        }
        if status == StatusCode::NOT_FOUND {
            return Err(format!("{NOT_FOUND} {image}: manifest unknown to {} (HTTP 404)", parsed.registry));
        }
        if !status.is_success() {
            return Err(format!("{url}: HTTP {}", status.as_u16()));
        }
        let digest = headers
            .get("docker-content-digest")
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| format!("{url}: no Docker-Content-Digest header"))?;
        let valid =
            digest.strip_prefix("sha256:").is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
        if !valid {
            return Err(format!("{url}: digest {digest:?} is not sha256:<64 hex>"));
        }
        Ok(digest.to_string())
    }

    /// The registry's token endpoint, asked anonymously for pull access.
    async fn anonymous_token(&self, challenge: &BTreeMap<String, String>, image: &ImageRef) -> Result<String, String> {
        let realm = challenge.get("realm").map(String::as_str).unwrap_or_default();
        let mut url = reqwest::Url::parse(realm).map_err(|e| format!("token realm {realm:?}: {e}"))?;
        {
            let mut query = url.query_pairs_mut();
            if let Some(service) = challenge.get("service") {
                query.append_pair("service", service);
            }
            let scope =
                challenge.get("scope").cloned().unwrap_or_else(|| format!("repository:{}:pull", image.repository));
            query.append_pair("scope", &scope);
        }
        let answer = self.get_json(url.as_str(), None).await?;
        answer
            .get("token")
            .or_else(|| answer.get("access_token"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| format!("{realm}: token answer has no token"))
    }

    /// `config.json` of a Hugging Face model repository (`org/name`).
    pub async fn model_config(&self, repo_id: &str) -> Fact<Value> {
        let valid = repo_id.split('/').count() == 2
            && !repo_id.contains("..")
            && repo_id.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-/".contains(&b));
        if !valid {
            return Fact::Unavailable(format!("{repo_id:?} is not a Hugging Face repository id"));
        }
        let url = format!("{}/{repo_id}/resolve/main/config.json", self.config.huggingface.trim_end_matches('/'));
        match self.get_json_kept(&url, None, Some(&|_, _| Some(SHORT_LIVED))).await {
            Ok(value) => Fact::Ok(value),
            Err(reason) => Fact::Unavailable(reason),
        }
    }
}

/// `text` cut to [`MAX_CONTENT_CHARS`] bytes at a character boundary.
fn bounded_text(text: &str) -> String {
    let mut end = text.len().min(MAX_CONTENT_CHARS);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// Visible text of an HTML page: `<script>`, `<style>` and comments dropped, block tags as line
/// breaks, inline tags removed, the common entities decoded. Linear, never panics.
pub fn html_to_text(html: &str) -> String {
    const BLOCKS: [&str; 16] =
        ["p", "div", "br", "li", "ul", "ol", "pre", "tr", "td", "th", "h1", "h2", "h3", "h4", "section", "table"];
    let mut out = String::with_capacity(html.len() / 2);
    let lower = html.to_ascii_lowercase();
    let mut i = 0;
    while i < html.len() {
        let rest = &html[i..];
        if rest.starts_with("<!--") {
            i += rest.find("-->").map_or(rest.len(), |e| e + 3);
            continue;
        }
        if rest.starts_with('<') {
            let close = rest.find('>').map_or(rest.len(), |e| e + 1);
            let tag = lower[i..i + close].trim_start_matches('<').trim_end_matches('>').trim_start_matches('/');
            let name: String = tag.chars().take_while(char::is_ascii_alphanumeric).collect();
            if (name == "script" || name == "style") && !lower[i + 1..].starts_with('/') {
                let end = format!("</{name}");
                i += lower[i..]
                    .find(&end)
                    .map_or(rest.len(), |e| e + lower[i + e..].find('>').map_or(end.len(), |g| g + 1));
                continue;
            }
            if BLOCKS.contains(&name.as_str()) {
                out.push('\n');
            }
            i += close;
            continue;
        }
        if rest.starts_with('&') {
            let end = rest.as_bytes().iter().take(12).position(|&b| b == b';');
            let decoded = end.and_then(|e| {
                let entity = &rest[1..e];
                let ch = match entity {
                    "amp" => Some('&'),
                    "lt" => Some('<'),
                    "gt" => Some('>'),
                    "quot" => Some('"'),
                    "apos" | "#39" => Some('\''),
                    "nbsp" => Some(' '),
                    _ => entity
                        .strip_prefix("#x")
                        .or_else(|| entity.strip_prefix("#X"))
                        .and_then(|h| u32::from_str_radix(h, 16).ok())
                        .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                        .and_then(char::from_u32),
                };
                ch.map(|c| (c, e + 1))
            });
            if let Some((c, len)) = decoded {
                out.push(c);
                i += len;
                continue;
            }
        }
        let c = rest.chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
    let mut text = String::with_capacity(out.len());
    let mut blank = 0;
    for line in out.lines().map(str::trim_end) {
        blank = if line.trim().is_empty() { blank + 1 } else { 0 };
        if blank <= 1 {
            text.push_str(line);
            text.push('\n');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 24 item 5: an upstream answer that trickles is cut off by the minimum-rate rule
    /// and not retried; one that arrives whole is read.
    #[tokio::test]
    async fn a_trickling_upstream_answer_is_cut_off_and_not_retried() {
        use tokio::io::AsyncWriteExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let Some(request) = crate::github::transfer::read_request_head(&mut socket).await else { return };
                    if request.contains("/repos/o/fast/") {
                        let body = match request.contains("/files") {
                            true => "[]",
                            false => r#"{"state":"open","draft":false,"merged_at":null,"head":{"sha":"abc"}}"#,
                        };
                        let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", body.len());
                        let _ = socket.write_all((head + body).as_bytes()).await;
                        return;
                    }
                    let _ = socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\n{").await;
                    while socket.write_all(b" ").await.is_ok() {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                });
            }
        });
        let config = UpstreamConfig {
            github_api: format!("http://{address}"),
            allowed_hosts: [address.to_string()].into(),
            allow_private_addresses: true,
            backoff: Duration::from_millis(1),
            transfer: TransferLimits {
                rate_window: Duration::from_millis(200),
                min_window_bytes: 1_000,
                ..UpstreamConfig::default().transfer
            },
            ..UpstreamConfig::default()
        };
        let client = UpstreamClient::new(config).unwrap();
        let Fact::Unavailable(reason) = client.pull("o/slow", 1).await else { panic!("a trickle is no answer") };
        assert!(reason.contains("(the server trickles); the download was cut off"), "{reason}");
        assert_eq!(client.requests(), 1, "not retried");
        let fast = client.pull("o/fast", 1).await;
        assert!(matches!(&fast, Fact::Ok(p) if p.state == "open"), "{fast:?}");
    }

    /// Issue 35 case 8 (HT14): a merged PR and its files at the merge commit are read once per
    /// process; an open PR is asked again with its ETag (a `304` uses the kept answer); a client
    /// whose budget is spent sends nothing more and says why, while kept answers still serve.
    #[tokio::test]
    async fn upstream_answers_are_kept_by_url_and_a_budget_bounds_what_is_sent() {
        use std::sync::atomic::AtomicUsize;
        use tokio::io::AsyncWriteExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let served = Arc::new(AtomicUsize::new(0));
        let counted = served.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let counted = counted.clone();
                tokio::spawn(async move {
                    let Some(request) = crate::github::transfer::read_request_head(&mut socket).await else { return };
                    counted.fetch_add(1, Ordering::Relaxed);
                    let line = request.lines().next().unwrap_or_default().to_owned();
                    let revalidated = request.to_ascii_lowercase().contains("if-none-match: \"v1\"");
                    let (status, body) = match () {
                        _ if line.contains("/repos/o/open/pulls/2 ") && revalidated => {
                            ("304 Not Modified", String::new())
                        }
                        _ if line.contains("/repos/o/open/pulls/2 ") => {
                            ("200 OK", r#"{"state":"open","draft":false,"merged_at":null,"head":{"sha":"abc"}}"#.into())
                        }
                        _ if line.contains("/files") => ("200 OK", r#"[{"filename":"README.md"}]"#.into()),
                        _ if line.contains("/contents/") => ("200 OK", "the recipe".into()),
                        _ => (
                            "200 OK",
                            format!(
                                r#"{{"state":"closed","merged_at":"2026-11-01T00:00:00Z","merge_commit_sha":"{}"}}"#,
                                "a".repeat(40)
                            ),
                        ),
                    };
                    let head = format!("HTTP/1.1 {status}\r\netag: \"v1\"\r\ncontent-length: {}\r\n\r\n", body.len());
                    let _ = socket.write_all((head + &body).as_bytes()).await;
                });
            }
        });
        let config = UpstreamConfig {
            github_api: format!("http://{address}"),
            allowed_hosts: [address.to_string()].into(),
            allow_private_addresses: true,
            ..UpstreamConfig::default()
        };
        let first = UpstreamClient::new(config.clone()).unwrap();
        let (pull, content) = first.pull_and_content("o/merged", 1).await;
        assert!(matches!(&pull, Fact::Ok(p) if p.merged_at.is_some()), "{pull:?}");
        assert!(matches!(&content, Fact::Ok(c) if c.files["README.md"] == "the recipe"), "{content:?}");
        assert_eq!(served.load(Ordering::Relaxed), 3, "the PR, its files, one file at the merge commit");
        // Another client of the same configuration (the next event): nothing is sent.
        let budget = RequestBudget { left: Arc::new(AtomicU64::new(1)), spent: "the test budget is spent".into() };
        let second = UpstreamClient::new(config.clone()).unwrap().with_budget(budget.clone());
        assert_eq!(second.pull_and_content("o/merged", 1).await, (pull, content));
        assert_eq!((served.load(Ordering::Relaxed), second.requests()), (3, 0), "a merged PR is kept");
        // An open PR: read, then asked again with its ETag; the budget allows one request.
        assert!(matches!(second.pull("o/open", 2).await, Fact::Unavailable(_)), "its file list is past the budget");
        let Fact::Unavailable(reason) = second.pull("o/open", 2).await else { panic!("the budget is spent") };
        assert!(reason.contains("not read: the test budget is spent"), "{reason}");
        let open = UpstreamClient::new(config).unwrap().pull("o/open", 2).await;
        assert!(matches!(&open, Fact::Ok(p) if p.state == "open"), "{open:?}");
        assert_eq!(served.load(Ordering::Relaxed), 6, "the open PR twice (200, then 304), its files once");
    }

    /// Without an upstream token, reads of api.github.com stop at the process's hourly pace
    /// before any connection, naming the bound and the fix (HT14).
    #[tokio::test]
    async fn anonymous_github_reads_stop_at_their_hourly_pace() {
        let spent = UpstreamConfig { anonymous: Arc::new(AnonymousPace::new(0)), ..UpstreamConfig::default() };
        let client = UpstreamClient::new(spent).unwrap();
        let Fact::Unavailable(reason) = client.pull("sgl-project/sglang", 1).await else { panic!("not read") };
        assert!(reason.contains("anonymous reads of api.github.com stop at 0 an hour"), "{reason}");
        assert!(reason.contains("SWEEPGATE_UPSTREAM_TOKEN"), "{reason}");
        assert_eq!(client.requests(), 0, "nothing was sent");
        let pace = AnonymousPace::new(4);
        assert_eq!([pace.take(2), pace.take(2), pace.take(2)], [true, true, false], "preflight's half");
        assert_eq!([pace.take(4), pace.take(4), pace.take(4)], [true, true, false], "the verifications' rest");
    }

    /// Issue 24 item 5: the upstream PR's file list trusted `per_page` and was cut short after
    /// its last page; both make the fact unavailable, naming the bound.
    #[tokio::test]
    async fn an_upstream_file_list_past_its_bounds_is_unavailable() {
        use tokio::io::AsyncWriteExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let Some(request) = crate::github::transfer::read_request_head(&mut socket).await else { return };
                    let items = |n: usize| {
                        let files: Vec<Value> =
                            (0..n).map(|i| serde_json::json!({"filename": format!("f{i}")})).collect();
                        Value::Array(files).to_string()
                    };
                    let body = match (request.contains("/files"), request.contains("/repos/o/many/")) {
                        (false, _) => {
                            r#"{"state":"open","draft":false,"merged_at":null,"head":{"sha":"abc"}}"#.to_owned()
                        }
                        (true, true) => items(101),
                        (true, false) => items(100),
                    };
                    let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", body.len());
                    let _ = socket.write_all((head + &body).as_bytes()).await;
                });
            }
        });
        let config = UpstreamConfig {
            github_api: format!("http://{address}"),
            allowed_hosts: [address.to_string()].into(),
            allow_private_addresses: true,
            backoff: Duration::from_millis(1),
            ..UpstreamConfig::default()
        };
        let client = UpstreamClient::new(config).unwrap();
        let Fact::Unavailable(reason) = client.pull("o/many", 1).await else { panic!("101 items on a page") };
        assert!(reason.contains("101 items on a page of at most 100"), "{reason}");
        let Fact::Unavailable(reason) = client.pull("o/endless", 1).await else { panic!("full pages to the end") };
        assert!(reason.contains("more than 500 files"), "{reason}");
    }

    #[test]
    fn image_references_like_docker_pull() {
        let r = |s: &str| ImageRef::parse(s).map(|i| (i.registry, i.repository, i.reference));
        let t = |a: &str, b: &str, c: &str| Some((a.to_string(), b.to_string(), c.to_string()));
        assert_eq!(r("vllm/vllm-openai:v0.11.0"), t("docker.io", "vllm/vllm-openai", "v0.11.0"));
        assert_eq!(r("ubuntu"), t("docker.io", "library/ubuntu", "latest"));
        assert_eq!(r("nvcr.io/nvidia/tritonserver:25.01-py3"), t("nvcr.io", "nvidia/tritonserver", "25.01-py3"));
        assert_eq!(r("localhost:5000/x/y:1"), t("localhost:5000", "x/y", "1"));
        let digest = format!("sha256:{}", "a".repeat(64));
        assert_eq!(r(&format!("ghcr.io/o/i:tag@{digest}")), t("ghcr.io", "o/i", &digest));
        assert_eq!(
            r("nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc5"),
            t("nvcr.io", "nvidia/tensorrt-llm/release", "1.3.0rc5")
        );
        assert_eq!(r("ghcr.io#o/i:v1"), t("ghcr.io", "o/i", "v1"));
        assert_eq!(ImageRef::parse("o/i#x:v1"), None, "# only separates the registry");
        for bad in ["", "a b", "x/../y", "image:tag;rm"] {
            assert_eq!(ImageRef::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn bearer_challenges() {
        let c = bearer_challenge(
            r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:a/b:pull,push""#,
        )
        .unwrap();
        assert_eq!(c["realm"], "https://auth.docker.io/token");
        assert_eq!(c["scope"], "repository:a/b:pull,push");
        assert_eq!(bearer_challenge("Basic realm=\"x\""), None);
        assert_eq!(bearer_challenge("Bearer service=\"x\""), None);
    }

    #[test]
    fn only_allowed_public_hosts_are_contacted() {
        let policy = |allow_private| HostPolicy {
            allowed: ["registry-1.docker.io", "127.0.0.1:5000", "10.0.0.7"].map(String::from).into(),
            allow_private,
        };
        let url = |s: &str| reqwest::Url::parse(s).unwrap();
        assert_eq!(policy(false).check(&url("https://registry-1.docker.io/v2/")), Ok(()));
        let refused = policy(false).check(&url("http://127.0.0.1:19097/v2/evil/probe/manifests/v1")).unwrap_err();
        assert!(refused.contains("not on the upstream allowlist"), "{refused}");
        let private = policy(false).check(&url("http://10.0.0.7/v2/")).unwrap_err();
        assert!(private.contains("private address"), "{private}");
        assert_eq!(policy(true).check(&url("http://127.0.0.1:5000/v2/")), Ok(()));
        assert!(policy(true).check(&url("http://127.0.0.1:5001/v2/")).is_err(), "the port is part of the entry");
        assert!(policy(true).check(&url("file:///etc/passwd")).is_err());
        for (ip, kind) in [
            ("127.0.0.1", Some("loopback")),
            ("169.254.169.254", Some("link-local")),
            ("192.168.1.1", Some("private")),
            ("100.64.0.1", Some("private")),
            ("::1", Some("loopback")),
            ("fd00::1", Some("private")),
            ("fe80::1", Some("link-local")),
            ("::ffff:127.0.0.1", Some("loopback")),
            ("0.0.0.0", Some("reserved")),
            ("8.8.8.8", None),
            ("2606:4700::1111", None),
        ] {
            assert_eq!(non_public(ip.parse().unwrap()), kind, "{ip}");
        }
    }

    #[test]
    fn html_pages_become_their_visible_text() {
        let html = "<html><head><style>p{x:1}</style><script>var a='<p>';</script></head><body><!-- nav --><h1>Qwen3.5 &amp; MI355X</h1><p>Run <code>--tp</code> <code>8</code> with <b>SGLANG_USE_AITER=1</b>&nbsp;&#x2014;&#8212;</p><pre>python3 -m sglang.launch_server \\\n  --mem-fraction-static 0.85</pre></body></html>";
        let text = html_to_text(html);
        assert!(text.contains("Qwen3.5 & MI355X\n"), "{text}");
        assert!(text.contains("Run --tp 8 with SGLANG_USE_AITER=1 \u{2014}\u{2014}"), "{text}");
        assert!(text.contains("--mem-fraction-static 0.85"), "{text}");
        assert!(!text.contains("var a") && !text.contains("x:1") && !text.contains("nav"), "{text}");
        for bad in ["<", "<scr", "<script>never closed", "&#xFFFFFFFF;", "&#55296;", "a &", "<!-- open", "ä<ö>ü&"] {
            let _ = html_to_text(bad);
        }
        let huge = "é".repeat(MAX_CONTENT_CHARS);
        let cut = bounded_text(&huge);
        assert!(cut.len() <= MAX_CONTENT_CHARS && cut.chars().all(|c| c == 'é'));
    }
}
