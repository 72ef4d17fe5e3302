//! The real client: octocrab for transport and auth (App JWT → installation token, cached and
//! refreshed by octocrab; or a plain token in Actions), our own DTOs, pagination and retries.
//!
//! Retries: rate limits (429, or 403 with `x-ratelimit-remaining: 0` / `retry-after`) are
//! retried for every method, waiting what `Retry-After` or `X-RateLimit-Reset` asks (GitHub did
//! not process the request). 5xx and transport errors are retried with exponential backoff only
//! for idempotent calls: a comment POST that failed with 502 may have been created, so it is
//! reported instead of duplicated (the sticky-comment upsert re-lists before writing again).
//! Every call gets `RetryPolicy::request_timeout` to be answered in full; a call that times out
//! (or whose connection drops) is a transport error, so the same rules apply.
//! Answers are bounded by [`TransferLimits`]: bytes per answer and per list (whatever
//! `per_page` a server honours), and downloads by a total time and a minimum rate.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, Method, StatusCode};
use octocrab::Octocrab;
use secrecy::SecretString;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::transfer::{read_body, Meter, TransferCut, TransferLimits};
use super::types::*;
use super::{ApiMetrics, GitHub, GitHubError, RepoRef};
use crate::intake::labels::Permission;
use crate::intake::signoff::SignoffKind;

#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    pub max_retries: u32,
    pub base_delay: Duration,
    /// Longest wait honoured for a rate limit; beyond it the call fails (and is logged).
    pub max_wait: Duration,
    /// Longest one API call may take, from sending to the last byte of the answer (for a
    /// download: to the start of its answer; the body is bounded by its size instead).
    pub request_timeout: Duration,
    /// Bounds on answer sizes and download times.
    pub transfer: TransferLimits,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_wait: Duration::from_secs(120),
            request_timeout: Duration::from_secs(30),
            transfer: TransferLimits::default(),
        }
    }
}

/// Most pages read from one list endpoint (100 items each).
const MAX_PAGES: u32 = 50;
const PER_PAGE: usize = 100;

pub struct OctoGitHub {
    client: Octocrab,
    retry: RetryPolicy,
    metrics: Arc<ApiMetrics>,
}

fn setup_err(err: impl std::fmt::Display) -> GitHubError {
    GitHubError::Setup(err.to_string())
}

fn build_base(
    base_url: &str,
) -> Result<
    octocrab::OctocrabBuilder<
        octocrab::NoSvc,
        octocrab::DefaultOctocrabBuilderConfig,
        octocrab::NoAuth,
        octocrab::NotLayerReady,
    >,
    GitHubError,
> {
    // octocrab's own retry layer would repeat POSTs after a 5xx; retries are ours (see above).
    let builder = Octocrab::builder().add_retry_config(octocrab::service::middleware::retry::RetryConfig::None);
    builder.base_uri(base_url.trim_end_matches('/')).map_err(setup_err)
}

impl OctoGitHub {
    /// Token auth (`GITHUB_TOKEN` in Actions, or a fine-grained token).
    pub fn with_token(
        base_url: &str,
        token: SecretString,
        retry: RetryPolicy,
        metrics: Arc<ApiMetrics>,
    ) -> Result<OctoGitHub, GitHubError> {
        let client = build_base(base_url)?.personal_token(token).build().map_err(setup_err)?;
        Ok(OctoGitHub { client, retry, metrics })
    }

    async fn send_once(
        &self,
        method: &Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(StatusCode, HeaderMap, String), SendFailure> {
        let max_bytes = self.retry.transfer.max_answer_bytes;
        let exchange = async {
            let response = match *method {
                Method::GET => self.client._get(path).await,
                Method::POST => self.client._post(path, body).await,
                Method::PATCH => self.client._patch(path, body).await,
                Method::PUT => self.client._put(path, body).await,
                Method::DELETE => self.client._delete(path, body).await,
                _ => return Err(SendFailure::Transport(format!("unsupported method {method}"))),
            }
            .map_err(|e| SendFailure::Transport(format!("{e}")))?;
            let status =
                StatusCode::from_u16(response.status().as_u16()).map_err(|e| SendFailure::Transport(e.to_string()))?;
            let headers = response.headers().clone();
            // The whole exchange is under `request_timeout`; the body is bounded by its size.
            let unhurried = TransferLimits {
                download_timeout: self.retry.request_timeout,
                min_window_bytes: 0,
                ..self.retry.transfer
            };
            let body = match read_body(response.into_body(), unhurried, max_bytes).await {
                Ok(body) => body,
                Err(TransferCut::TooLarge(_)) => return Err(SendFailure::TooLarge(max_bytes)),
                Err(cut) => return Err(SendFailure::Transport(format!("reading body: {cut}"))),
            };
            let text = String::from_utf8(body).map_err(|e| SendFailure::Transport(format!("reading body: {e}")))?;
            Ok((status, headers, text))
        };
        self.within_timeout(exchange).await.map_err(SendFailure::Transport)?
    }

    /// `work`, or an error once `request_timeout` has passed (the connection is dropped).
    async fn within_timeout<T>(&self, work: impl std::future::Future<Output = T>) -> Result<T, String> {
        let limit = self.retry.request_timeout;
        tokio::time::timeout(limit, work).await.map_err(|_| format!("no complete answer within {limit:?}"))
    }

    /// One call with retries; `idempotent` allows retrying after 5xx and transport errors.
    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        idempotent: bool,
    ) -> Result<String, GitHubError> {
        let mut attempt = 0;
        loop {
            ApiMetrics::bump(&self.metrics.calls);
            super::EventRequests::count_github();
            let outcome = self.send_once(&method, path, body).await;
            let wait = match &outcome {
                Ok((status, _, text)) if status.is_success() => return Ok(text.clone()),
                Ok((status, headers, _)) if is_rate_limited(*status, headers) => {
                    let wait = rate_limit_wait(headers, chrono::Utc::now().timestamp(), self.backoff(attempt));
                    if wait > self.retry.max_wait {
                        ApiMetrics::bump(&self.metrics.errors);
                        return Err(GitHubError::RateLimited {
                            method: method.to_string(),
                            path: path.to_string(),
                            wait_secs: wait.as_secs(),
                            max_secs: self.retry.max_wait.as_secs(),
                        });
                    }
                    Some(wait)
                }
                Ok((status, _, _)) if status.is_server_error() && idempotent => Some(self.backoff(attempt)),
                Err(SendFailure::TooLarge(max_bytes)) => {
                    ApiMetrics::bump(&self.metrics.errors);
                    return Err(GitHubError::TooLarge { path: path.to_string(), max_bytes: *max_bytes });
                }
                Err(SendFailure::Transport(_)) if idempotent => Some(self.backoff(attempt)),
                _ => None,
            };
            match wait {
                Some(wait) if attempt < self.retry.max_retries => {
                    attempt += 1;
                    ApiMetrics::bump(&self.metrics.retries);
                    let failure = match &outcome {
                        Ok((status, _, _)) => status.to_string(),
                        Err(failure) => failure.to_string(),
                    };
                    tracing::warn!(%method, path, attempt, wait_ms = wait.as_millis() as u64, failure, "GitHub call failed; retrying");
                    tokio::time::sleep(wait).await;
                }
                _ => {
                    ApiMetrics::bump(&self.metrics.errors);
                    return Err(match outcome {
                        Ok((status, _, text)) => GitHubError::Http {
                            method: method.to_string(),
                            path: path.to_string(),
                            status: status.as_u16(),
                            message: error_message(&text),
                        },
                        Err(failure) => GitHubError::Transport {
                            method: method.to_string(),
                            path: path.to_string(),
                            message: failure.to_string(),
                        },
                    });
                }
            }
        }
    }

    fn backoff(&self, attempt: u32) -> Duration {
        self.retry.base_delay.saturating_mul(2u32.saturating_pow(attempt.min(10)))
    }

    async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, GitHubError> {
        let text = self.call(Method::GET, path, None, true).await?;
        decode(path, &text)
    }

    /// All pages of a list endpoint; `field` names the array inside a wrapper object.
    async fn paginate<T: DeserializeOwned>(&self, path: &str, field: Option<&str>) -> Result<Vec<T>, GitHubError> {
        self.paginate_up_to(path, field, usize::MAX).await
    }

    /// The first `limit` items of a list endpoint (no more pages are read than they need).
    /// A page with more items than asked for is refused, and all pages together are bounded by
    /// `max_list_bytes`.
    async fn paginate_up_to<T: DeserializeOwned>(
        &self,
        path: &str,
        field: Option<&str>,
        limit: usize,
    ) -> Result<Vec<T>, GitHubError> {
        let sep = if path.contains('?') { '&' } else { '?' };
        let per_page = limit.clamp(1, PER_PAGE);
        let mut items = Vec::new();
        let (max_list_bytes, mut read) = (self.retry.transfer.max_list_bytes, 0u64);
        for page in 1..=MAX_PAGES {
            let page_path = format!("{path}{sep}per_page={per_page}&page={page}");
            let text = self.call(Method::GET, &page_path, None, true).await?;
            read = read.saturating_add(text.len() as u64);
            if read > max_list_bytes {
                return Err(GitHubError::TooLarge { path: path.to_string(), max_bytes: max_list_bytes });
            }
            let value: Value = decode(&page_path, &text)?;
            let list = match field {
                Some(f) => value.get(f).cloned().unwrap_or(Value::Null),
                None => value,
            };
            let batch: Vec<T> = decode_value(&page_path, list)?;
            if batch.len() > per_page {
                let message = format!("{} items on a page of at most {per_page}", batch.len());
                return Err(GitHubError::Decode { path: page_path, message });
            }
            let done = batch.len() < per_page;
            items.extend(batch);
            if done || items.len() >= limit {
                items.truncate(limit);
                return Ok(items);
            }
        }
        Err(GitHubError::TooManyPages { path: path.to_string(), max_pages: MAX_PAGES })
    }
}

impl OctoGitHub {
    /// A binary download. GitHub answers 302 with a short-lived storage URL; that URL is
    /// fetched without our credentials (it carries its own signature). Bounded by `max_bytes`;
    /// 5xx and transport errors are retried like every read.
    async fn download(&self, path: &str, max_bytes: u64) -> Result<Vec<u8>, GitHubError> {
        let mut attempt = 0;
        loop {
            ApiMetrics::bump(&self.metrics.calls);
            super::EventRequests::count_github();
            match self.download_once(path, max_bytes).await {
                Err(DownloadFailure::Retryable(message)) if attempt < self.retry.max_retries => {
                    attempt += 1;
                    ApiMetrics::bump(&self.metrics.retries);
                    tracing::warn!(path, attempt, "download failed ({message}); retrying");
                    tokio::time::sleep(self.backoff(attempt - 1)).await;
                }
                Err(DownloadFailure::Retryable(message)) => {
                    ApiMetrics::bump(&self.metrics.errors);
                    return Err(GitHubError::Transport { method: "GET".into(), path: path.into(), message });
                }
                Err(DownloadFailure::Final(err)) => {
                    ApiMetrics::bump(&self.metrics.errors);
                    return Err(err);
                }
                Ok(bytes) => return Ok(bytes),
            }
        }
    }

    async fn download_once(&self, path: &str, max_bytes: u64) -> Result<Vec<u8>, DownloadFailure> {
        let response = self
            .within_timeout(self.client._get(path))
            .await
            .map_err(DownloadFailure::Retryable)?
            .map_err(|e| DownloadFailure::Retryable(e.to_string()))?;
        let status = response.status().as_u16();
        if (300..400).contains(&status) {
            let location = response
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| DownloadFailure::Final(http_error(path, status, "redirect without a Location")))?
                .to_string();
            return fetch_unauthenticated(&location, path, max_bytes, self.retry).await;
        }
        if status >= 500 {
            return Err(DownloadFailure::Retryable(format!("HTTP {status}")));
        }
        if !(200..300).contains(&status) {
            let text = self.client.body_to_string(response).await.unwrap_or_default();
            return Err(DownloadFailure::Final(http_error(path, status, &error_message(&text))));
        }
        read_body(response.into_body(), self.retry.transfer, max_bytes).await.map_err(|cut| cut_failure(path, cut))
    }
}

/// Why one API exchange gave no answer to judge.
enum SendFailure {
    Transport(String),
    /// The body exceeds this many bytes (not retried: it would be as large again).
    TooLarge(u64),
}

impl std::fmt::Display for SendFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendFailure::Transport(message) => f.write_str(message),
            SendFailure::TooLarge(max_bytes) => write!(f, "the answer exceeds {max_bytes} bytes"),
        }
    }
}

enum DownloadFailure {
    Retryable(String),
    Final(GitHubError),
}

/// A body that broke off is retried; one too large, too slow or too long is not (it would be
/// again).
fn cut_failure(path: &str, cut: TransferCut) -> DownloadFailure {
    match cut {
        TransferCut::Broken(message) => DownloadFailure::Retryable(message),
        TransferCut::TooLarge(max_bytes) => {
            DownloadFailure::Final(GitHubError::TooLarge { path: path.into(), max_bytes })
        }
        cut => DownloadFailure::Final(GitHubError::Cut { path: path.into(), cut }),
    }
}

fn http_error(path: &str, status: u16, message: &str) -> GitHubError {
    GitHubError::Http { method: "GET".into(), path: path.into(), status, message: message.into() }
}

/// The redirect target of a download, read with a plain client and the same bounds: its answer
/// within `request_timeout`, its body within the transfer limits.
async fn fetch_unauthenticated(
    url: &str,
    path: &str,
    max_bytes: u64,
    retry: RetryPolicy,
) -> Result<Vec<u8>, DownloadFailure> {
    let client = reqwest::Client::builder()
        .connect_timeout(retry.request_timeout)
        .redirect(reqwest::redirect::Policy::limited(5))
        .build()
        .map_err(|e| DownloadFailure::Final(GitHubError::Setup(e.to_string())))?;
    let mut response = tokio::time::timeout(retry.request_timeout, client.get(url).send())
        .await
        .map_err(|_| DownloadFailure::Retryable(format!("no answer within {:?}", retry.request_timeout)))?
        .map_err(|e| DownloadFailure::Retryable(e.to_string()))?;
    let status = response.status().as_u16();
    if status >= 500 {
        return Err(DownloadFailure::Retryable(format!("HTTP {status} from the storage redirect")));
    }
    if !response.status().is_success() {
        return Err(DownloadFailure::Final(http_error(path, status, "the storage redirect failed")));
    }
    if response.content_length().is_some_and(|len| len > max_bytes) {
        return Err(DownloadFailure::Final(GitHubError::TooLarge { path: path.into(), max_bytes }));
    }
    let mut meter = Meter::new(retry.transfer, max_bytes);
    while meter.take(response.chunk()).await.map_err(|cut| cut_failure(path, cut))? {}
    Ok(meter.into_bytes())
}

fn is_rate_limited(status: StatusCode, headers: &HeaderMap) -> bool {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    status == StatusCode::TOO_MANY_REQUESTS
        || (status == StatusCode::FORBIDDEN
            && (header("retry-after").is_some() || header("x-ratelimit-remaining") == Some("0")))
}

/// How long GitHub asks us to wait: `Retry-After` seconds, else until `X-RateLimit-Reset`
/// (epoch seconds) plus one second, else the caller's backoff.
fn rate_limit_wait(headers: &HeaderMap, now_epoch: i64, fallback: Duration) -> Duration {
    let number = |name: &str| headers.get(name)?.to_str().ok()?.trim().parse::<i64>().ok();
    if let Some(secs) = number("retry-after") {
        return Duration::from_secs(secs.max(0) as u64);
    }
    if let Some(reset) = number("x-ratelimit-reset") {
        return Duration::from_secs((reset - now_epoch + 1).max(0) as u64);
    }
    fallback
}

fn error_message(body: &str) -> String {
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| body.to_string());
    message.chars().take(300).collect()
}

fn decode<T: DeserializeOwned>(path: &str, text: &str) -> Result<T, GitHubError> {
    serde_json::from_str(text).map_err(|e| GitHubError::Decode { path: path.to_string(), message: e.to_string() })
}

fn decode_value<T: DeserializeOwned>(path: &str, value: Value) -> Result<Vec<T>, GitHubError> {
    serde_json::from_value(value).map_err(|e| GitHubError::Decode { path: path.to_string(), message: e.to_string() })
}

/// A login fit for a URL path segment (GitHub logins, plus the `[bot]` suffix).
fn valid_login(user: &str) -> bool {
    let name = user.strip_suffix("[bot]").unwrap_or(user);
    !name.is_empty() && name.len() <= 39 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

fn query_escape(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl GitHub for OctoGitHub {
    async fn list_issue_comments(&self, repo: &RepoRef, issue: u64) -> Result<Vec<Comment>, GitHubError> {
        self.paginate(&format!("/repos/{repo}/issues/{issue}/comments"), None).await
    }

    async fn create_issue_comment(&self, repo: &RepoRef, issue: u64, body: &str) -> Result<Comment, GitHubError> {
        let path = format!("/repos/{repo}/issues/{issue}/comments");
        let text = self.call(Method::POST, &path, Some(&json!({ "body": body })), false).await?;
        decode(&path, &text)
    }

    async fn update_issue_comment(&self, repo: &RepoRef, comment_id: u64, body: &str) -> Result<Comment, GitHubError> {
        let path = format!("/repos/{repo}/issues/comments/{comment_id}");
        let text = self.call(Method::PATCH, &path, Some(&json!({ "body": body })), true).await?;
        decode(&path, &text)
    }

    async fn add_reaction(&self, repo: &RepoRef, comment_id: u64, reaction: Reaction) -> Result<(), GitHubError> {
        // GitHub answers 200 for a reaction that already exists: safe to retry.
        let path = format!("/repos/{repo}/issues/comments/{comment_id}/reactions");
        self.call(Method::POST, &path, Some(&json!({ "content": reaction })), true).await.map(drop)
    }

    async fn list_reactions(&self, repo: &RepoRef, comment_id: u64) -> Result<Vec<ReactionRecord>, GitHubError> {
        self.paginate(&format!("/repos/{repo}/issues/comments/{comment_id}/reactions"), None).await
    }

    async fn delete_reaction(&self, repo: &RepoRef, comment_id: u64, reaction_id: u64) -> Result<(), GitHubError> {
        let path = format!("/repos/{repo}/issues/comments/{comment_id}/reactions/{reaction_id}");
        match self.call(Method::DELETE, &path, None, true).await {
            Err(err) if err.is_not_found() => Ok(()),
            other => other.map(drop),
        }
    }

    async fn get_pull(&self, repo: &RepoRef, number: u64) -> Result<PullRequest, GitHubError> {
        self.get(&format!("/repos/{repo}/pulls/{number}")).await
    }

    async fn list_open_pulls(&self, repo: &RepoRef, max: usize) -> Result<Vec<PullRequest>, GitHubError> {
        let path = format!("/repos/{repo}/pulls?state=open&sort=updated&direction=desc");
        self.paginate_up_to(&path, None, max).await
    }

    async fn list_pull_commits(&self, repo: &RepoRef, number: u64) -> Result<Vec<PullCommit>, GitHubError> {
        self.paginate(&format!("/repos/{repo}/pulls/{number}/commits"), None).await
    }

    async fn list_pull_files(&self, repo: &RepoRef, number: u64) -> Result<Vec<PullFile>, GitHubError> {
        self.paginate(&format!("/repos/{repo}/pulls/{number}/files"), None).await
    }

    async fn create_status(&self, repo: &RepoRef, sha: &str, status: &StatusInput) -> Result<(), GitHubError> {
        if sha.len() != 40 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(GitHubError::Setup(format!("refusing to post a status on {sha:?}: not a 40-hex commit SHA")));
        }
        let mut status = status.clone();
        status.description = status.description.chars().take(140).collect();
        let body = serde_json::to_value(&status).map_err(setup_err)?;
        // Repeating a status only adds an identical entry: safe to retry.
        self.call(Method::POST, &format!("/repos/{repo}/statuses/{sha}"), Some(&body), true).await.map(drop)
    }

    async fn list_commit_pulls(&self, repo: &RepoRef, sha: &str) -> Result<Vec<PullRequest>, GitHubError> {
        self.paginate_up_to(&format!("/repos/{repo}/commits/{}/pulls", query_escape(sha)), None, 100).await
    }

    async fn list_commit_statuses(&self, repo: &RepoRef, sha: &str) -> Result<Vec<CommitStatus>, GitHubError> {
        self.paginate(&format!("/repos/{repo}/commits/{}/statuses", query_escape(sha)), None).await
    }

    async fn list_check_runs(&self, repo: &RepoRef, sha: &str) -> Result<Vec<CheckRun>, GitHubError> {
        self.paginate(&format!("/repos/{repo}/commits/{}/check-runs", query_escape(sha)), Some("check_runs")).await
    }

    async fn get_workflow_run(&self, repo: &RepoRef, run_id: u64) -> Result<Option<WorkflowRun>, GitHubError> {
        match self.get(&format!("/repos/{repo}/actions/runs/{run_id}")).await {
            Ok(run) => Ok(Some(run)),
            Err(err) if err.is_not_found() => Ok(None),
            Err(err) => Err(err),
        }
    }

    async fn list_workflow_runs(
        &self,
        repo: &RepoRef,
        workflow_file: &str,
        query: &RunQuery,
    ) -> Result<Vec<WorkflowRun>, GitHubError> {
        let mut path = format!("/repos/{repo}/actions/workflows/{}/runs?", query_escape(workflow_file));
        for (key, value) in [("event", &query.event), ("branch", &query.branch), ("status", &query.status)] {
            if let Some(value) = value {
                path.push_str(&format!("{key}={}&", query_escape(value)));
            }
        }
        let path = path.trim_end_matches(['&', '?']).to_string();
        self.paginate(&path, Some("workflow_runs")).await
    }

    async fn list_run_artifacts(&self, repo: &RepoRef, run_id: u64) -> Result<Vec<Artifact>, GitHubError> {
        self.paginate(&format!("/repos/{repo}/actions/runs/{run_id}/artifacts"), Some("artifacts")).await
    }

    async fn collaborator_permission(&self, repo: &RepoRef, user: &str) -> Result<Permission, GitHubError> {
        if !valid_login(user) {
            return Ok(Permission::None);
        }
        #[derive(serde::Deserialize)]
        struct Answer {
            #[serde(default)]
            permission: String,
            #[serde(default)]
            role_name: Option<String>,
        }
        match self.get::<Answer>(&format!("/repos/{repo}/collaborators/{user}/permission")).await {
            Ok(a) => Ok(Permission::parse(a.role_name.as_deref().unwrap_or(&a.permission))),
            Err(err) if err.is_not_found() => Ok(Permission::None),
            Err(err) => Err(err),
        }
    }

    async fn get_signoff_resource(
        &self,
        repo: &RepoRef,
        pr: u64,
        kind: SignoffKind,
        id: u64,
    ) -> Result<SignoffResource, GitHubError> {
        let path = match kind {
            SignoffKind::ConversationComment => format!("/repos/{repo}/issues/comments/{id}"),
            SignoffKind::ReviewSummary => format!("/repos/{repo}/pulls/{pr}/reviews/{id}"),
            SignoffKind::InlineReviewComment => format!("/repos/{repo}/pulls/comments/{id}"),
        };
        self.get(&path).await
    }

    async fn collaborator_permission_detail(
        &self,
        repo: &RepoRef,
        user: &str,
    ) -> Result<CollaboratorPermission, GitHubError> {
        let none = || CollaboratorPermission { permission: "none".into(), role_name: "none".into() };
        if !valid_login(user) {
            return Ok(none());
        }
        match self.get(&format!("/repos/{repo}/collaborators/{user}/permission")).await {
            Ok(answer) => Ok(answer),
            Err(err) if err.is_not_found() => Ok(none()),
            Err(err) => Err(err),
        }
    }

    async fn team_membership(&self, org: &str, team: &str, user: &str) -> Result<bool, GitHubError> {
        let segment_ok = |s: &str| RepoRef::parse(&format!("{s}/x")).is_ok();
        if !(segment_ok(org) && segment_ok(team) && valid_login(user)) {
            return Err(GitHubError::InvalidRepo(format!("{org}/{team} member {user}")));
        }
        #[derive(serde::Deserialize)]
        struct Membership {
            #[serde(default)]
            state: String,
        }
        let answer: Membership = self.get(&format!("/orgs/{org}/teams/{team}/memberships/{user}")).await?;
        Ok(answer.state == "active")
    }

    async fn download_tarball(&self, repo: &RepoRef, sha: &str, max_bytes: u64) -> Result<Vec<u8>, GitHubError> {
        self.download(&format!("/repos/{repo}/tarball/{}", query_escape(sha)), max_bytes).await
    }

    async fn download_artifact(
        &self,
        repo: &RepoRef,
        artifact_id: u64,
        max_bytes: u64,
    ) -> Result<Vec<u8>, GitHubError> {
        self.download(&format!("/repos/{repo}/actions/artifacts/{artifact_id}/zip"), max_bytes).await
    }

    async fn get_branch_sha(&self, repo: &RepoRef, branch: &str) -> Result<String, GitHubError> {
        #[derive(serde::Deserialize)]
        struct Branch {
            commit: Commit,
        }
        #[derive(serde::Deserialize)]
        struct Commit {
            sha: String,
        }
        let segments: Vec<String> = branch.split('/').map(query_escape).collect();
        let answer: Branch = self.get(&format!("/repos/{repo}/branches/{}", segments.join("/"))).await?;
        Ok(answer.commit.sha)
    }

    async fn list_branch_activity(&self, repo: &RepoRef, branch: &str) -> Result<Vec<BranchActivity>, GitHubError> {
        let reference = query_escape(&format!("refs/heads/{branch}"));
        self.get(&format!("/repos/{repo}/activity?ref={reference}&direction=desc&per_page=100")).await
    }

    async fn get_tree(&self, repo: &RepoRef, sha: &str) -> Result<GitTreeListing, GitHubError> {
        self.get(&format!("/repos/{repo}/git/trees/{}?recursive=1", query_escape(sha))).await
    }

    async fn compare_commits(&self, repo: &RepoRef, base: &str, head: &str) -> Result<Comparison, GitHubError> {
        self.get(&format!("/repos/{repo}/compare/{}...{}?per_page=100", query_escape(base), query_escape(head))).await
    }

    async fn list_workflow_runs_at(
        &self,
        repo: &RepoRef,
        workflow_file: &str,
        head_sha: &str,
    ) -> Result<Vec<WorkflowRun>, GitHubError> {
        let path = format!(
            "/repos/{repo}/actions/workflows/{}/runs?head_sha={}",
            query_escape(workflow_file),
            query_escape(head_sha)
        );
        self.paginate_up_to(&path, Some("workflow_runs"), PER_PAGE).await
    }

    async fn list_run_jobs(&self, repo: &RepoRef, run_id: u64) -> Result<Vec<RunJob>, GitHubError> {
        self.paginate(&format!("/repos/{repo}/actions/runs/{run_id}/jobs"), Some("jobs")).await
    }

    async fn download_job_log(&self, repo: &RepoRef, job_id: u64, max_bytes: u64) -> Result<Vec<u8>, GitHubError> {
        self.download(&format!("/repos/{repo}/actions/jobs/{job_id}/logs"), max_bytes).await
    }

    async fn create_check_run(&self, repo: &RepoRef, input: &CheckRunInput) -> Result<u64, GitHubError> {
        if input.head_sha.len() != 40 || !input.head_sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(GitHubError::Setup(format!(
                "refusing to create a check run on {:?}: not a 40-hex commit SHA",
                input.head_sha
            )));
        }
        let path = format!("/repos/{repo}/check-runs");
        let body = serde_json::to_value(input).map_err(setup_err)?;
        // Not idempotent: a retried create would leave a second check run.
        let text = self.call(Method::POST, &path, Some(&body), false).await?;
        let created: CheckRun = decode(&path, &text)?;
        Ok(created.id)
    }

    async fn update_check_run(
        &self,
        repo: &RepoRef,
        check_run_id: u64,
        input: &CheckRunInput,
    ) -> Result<(), GitHubError> {
        let body = serde_json::to_value(input).map_err(setup_err)?;
        self.call(Method::PATCH, &format!("/repos/{repo}/check-runs/{check_run_id}"), Some(&body), true).await.map(drop)
    }

    async fn get_file_text(
        &self,
        repo: &RepoRef,
        path: &str,
        sha: &str,
        max_bytes: u64,
    ) -> Result<Option<String>, GitHubError> {
        #[derive(serde::Deserialize)]
        struct Contents {
            #[serde(default)]
            size: u64,
            #[serde(default)]
            encoding: String,
            #[serde(default)]
            content: String,
        }
        let segments: Vec<String> = path.split('/').map(query_escape).collect();
        let api_path = format!("/repos/{repo}/contents/{}?ref={}", segments.join("/"), query_escape(sha));
        let answer: Contents = match self.get(&api_path).await {
            Ok(answer) => answer,
            Err(err) if err.is_not_found() => return Ok(None),
            Err(err) => return Err(err),
        };
        if answer.size > max_bytes {
            return Err(GitHubError::TooLarge { path: api_path, max_bytes });
        }
        let decoded = match answer.encoding.as_str() {
            "base64" => {
                use base64::Engine as _;
                let packed: String = answer.content.chars().filter(|c| !c.is_ascii_whitespace()).collect();
                base64::engine::general_purpose::STANDARD.decode(packed).map_err(|e| e.to_string())
            }
            // Files over 1 MB come without content ("none"): not a policy file we can read here.
            other => Err(format!("content encoding {other:?} (the file is too large for the contents API)")),
        };
        let bytes = decoded.map_err(|message| GitHubError::Decode { path: api_path.clone(), message })?;
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| GitHubError::Decode { path: api_path, message: "not UTF-8 text".into() })
    }

    async fn list_signoff_resources(
        &self,
        repo: &RepoRef,
        pr: u64,
        kind: SignoffKind,
    ) -> Result<Vec<SignoffResource>, GitHubError> {
        let path = match kind {
            SignoffKind::ConversationComment => format!("/repos/{repo}/issues/{pr}/comments"),
            SignoffKind::ReviewSummary => format!("/repos/{repo}/pulls/{pr}/reviews"),
            SignoffKind::InlineReviewComment => format!("/repos/{repo}/pulls/{pr}/comments"),
        };
        self.paginate(&path, None).await
    }
}

/// GitHub App credentials → one client per installation (from each webhook's
/// `installation.id`), each holding an installation token that octocrab refreshes.
pub struct AppClients {
    app: Octocrab,
    retry: RetryPolicy,
    metrics: Arc<ApiMetrics>,
    installations: Mutex<HashMap<u64, Arc<OctoGitHub>>>,
}

impl AppClients {
    pub fn new(
        base_url: &str,
        app_id: u64,
        private_key_pem: &[u8],
        retry: RetryPolicy,
        metrics: Arc<ApiMetrics>,
    ) -> Result<AppClients, GitHubError> {
        let key = octocrab::EncodingKey::from_rsa_pem(private_key_pem)
            .map_err(|e| GitHubError::Setup(format!("GitHub App private key is not an RSA PEM key: {e}")))?;
        let app = build_base(base_url)?.app(app_id.into(), key).build().map_err(setup_err)?;
        Ok(AppClients { app, retry, metrics, installations: Mutex::new(HashMap::new()) })
    }

    pub fn installation(&self, id: u64) -> Result<Arc<OctoGitHub>, GitHubError> {
        let mut cache = self.installations.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(client) = cache.get(&id) {
            return Ok(client.clone());
        }
        let client = self.app.installation(id.into()).map_err(setup_err)?;
        let client = Arc::new(OctoGitHub { client, retry: self.retry, metrics: self.metrics.clone() });
        cache.insert(id, client.clone());
        Ok(client)
    }

    /// The App's installations with what each granted (`GET /app/installations`, as the App:
    /// `sweepgate doctor` compares them with `github::app`), bounded like every list.
    pub async fn installations(&self) -> Result<Vec<super::app::Installation>, GitHubError> {
        let app = OctoGitHub { client: self.app.clone(), retry: self.retry, metrics: self.metrics.clone() };
        app.paginate("/app/installations", None).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hostile server on 127.0.0.1: artifact zips redirect to `/storage`, which trickles one
    /// byte every 50 ms, as job logs do directly; `/many` ignores `per_page` (101 items a page);
    /// `/big` answers full pages of 100 strings of 100 bytes, forever.
    async fn hostile_server() -> String {
        use tokio::io::AsyncWriteExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let base = url.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let base = base.clone();
                tokio::spawn(async move {
                    let Some(text) = crate::github::transfer::read_request_head(&mut socket).await else { return };
                    let path = text.split(' ').nth(1).unwrap_or_default().to_owned();
                    let json = |items: Vec<Value>| {
                        let body = Value::Array(items).to_string();
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                            body.len()
                        )
                    };
                    let answer = if path.ends_with("/zip") {
                        format!("HTTP/1.1 302 Found\r\nlocation: {base}/storage\r\ncontent-length: 0\r\n\r\n")
                    } else if path.starts_with("/many") {
                        json((0..101).map(|i| json!(i)).collect())
                    } else if path.starts_with("/big") {
                        json((0..100).map(|_| json!("x".repeat(100))).collect())
                    } else {
                        let _ = socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 1000000\r\n\r\n").await;
                        while socket.write_all(b"x").await.is_ok() {
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                        return;
                    };
                    let _ = socket.write_all(answer.as_bytes()).await;
                });
            }
        });
        url
    }

    fn client(url: &str, transfer: TransferLimits) -> OctoGitHub {
        let retry = RetryPolicy {
            max_retries: 0,
            base_delay: Duration::from_millis(1),
            max_wait: Duration::from_secs(1),
            request_timeout: Duration::from_secs(20),
            transfer,
        };
        OctoGitHub::with_token(url, SecretString::from("t"), retry, Arc::default()).unwrap()
    }

    /// Issue 24 item 5: a download that trickled had no timeout (`collect` hung until killed).
    #[tokio::test]
    async fn a_trickling_download_is_cut_off_directly_and_behind_a_redirect() {
        let url = hostile_server().await;
        let limits = TransferLimits {
            rate_window: Duration::from_millis(200),
            min_window_bytes: 1_000,
            ..TransferLimits::default()
        };
        let gh = client(&url, limits);
        let repo = RepoRef::parse("o/r").unwrap();
        let slow = |r: &Result<Vec<u8>, GitHubError>| {
            matches!(r, Err(GitHubError::Cut { cut: TransferCut::TooSlow { .. }, .. }))
        };
        let log = gh.download_job_log(&repo, 1, 10 << 20).await;
        assert!(slow(&log), "{log:?}");
        let zip = gh.download_artifact(&repo, 1, 10 << 20).await;
        assert!(slow(&zip), "{zip:?}");
    }

    /// Issue 24 item 5: pagination trusted `per_page` and no answer was bounded (24 GB, then the
    /// OOM killer).
    #[tokio::test]
    async fn pagination_is_bounded_by_items_per_page_answer_bytes_and_list_bytes() {
        let url = hostile_server().await;
        let gh = client(&url, TransferLimits::default());
        let many = gh.paginate::<Value>("/many", None).await;
        assert!(matches!(&many, Err(GitHubError::Decode { message, .. }) if message.contains("101 items")), "{many:?}");

        let small_list = client(&url, TransferLimits { max_list_bytes: 25_000, ..TransferLimits::default() });
        let list = small_list.paginate::<Value>("/big", None).await;
        assert!(matches!(list, Err(GitHubError::TooLarge { max_bytes: 25_000, .. })), "{list:?}");

        let small_answer = client(&url, TransferLimits { max_answer_bytes: 5_000, ..TransferLimits::default() });
        let answer = small_answer.paginate::<Value>("/big", None).await;
        assert!(matches!(answer, Err(GitHubError::TooLarge { max_bytes: 5_000, .. })), "{answer:?}");
        let endless = gh.paginate::<Value>("/big", None).await;
        assert!(matches!(endless, Err(GitHubError::TooManyPages { max_pages: MAX_PAGES, .. })), "{endless:?}");
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, v.parse().unwrap());
        }
        map
    }

    #[test]
    fn rate_limit_detection() {
        assert!(is_rate_limited(StatusCode::TOO_MANY_REQUESTS, &HeaderMap::new()));
        assert!(is_rate_limited(StatusCode::FORBIDDEN, &headers(&[("x-ratelimit-remaining", "0")])));
        assert!(is_rate_limited(StatusCode::FORBIDDEN, &headers(&[("retry-after", "30")])));
        assert!(!is_rate_limited(StatusCode::FORBIDDEN, &headers(&[("x-ratelimit-remaining", "12")])));
        assert!(!is_rate_limited(StatusCode::BAD_GATEWAY, &HeaderMap::new()));
    }

    #[test]
    fn waits_honour_retry_after_then_reset() {
        let fallback = Duration::from_millis(500);
        assert_eq!(rate_limit_wait(&headers(&[("retry-after", "7")]), 0, fallback), Duration::from_secs(7));
        assert_eq!(
            rate_limit_wait(&headers(&[("x-ratelimit-reset", "1060")]), 1000, fallback),
            Duration::from_secs(61)
        );
        assert_eq!(rate_limit_wait(&headers(&[("x-ratelimit-reset", "900")]), 1000, fallback), Duration::ZERO);
        assert_eq!(rate_limit_wait(&headers(&[("retry-after", "soon")]), 0, fallback), fallback);
    }

    #[test]
    fn error_messages_come_from_the_json_body() {
        assert_eq!(error_message(r#"{"message":"Not Found","documentation_url":"x"}"#), "Not Found");
        assert_eq!(error_message("<html>bad gateway</html>"), "<html>bad gateway</html>");
    }

    #[test]
    fn logins_and_query_values_are_path_safe() {
        assert!(valid_login("alice-amd") && valid_login("sweepgate[bot]"));
        assert!(!valid_login("../admin") && !valid_login("a b") && !valid_login(""));
        assert_eq!(query_escape("feat/x y&z"), "feat%2Fx%20y%26z");
    }
}
