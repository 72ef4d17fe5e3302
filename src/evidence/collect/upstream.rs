//! The `Upstream` edge (ARCHITECTURE decision 6): upstream recipe PRs on GitHub, OCI image
//! digests through the registries' anonymous token flow, and Hugging Face `config.json` files.
//! Every answer is a [`Fact`]: what could not be fetched says why, and never stops collection.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use reqwest::header::{HeaderMap, ACCEPT, AUTHORIZATION, WWW_AUTHENTICATE};
use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::evidence::{Fact, UpstreamPull};

/// Manifest media types a registry may answer with; an index digest is what `docker pull` pins.
const MANIFEST_ACCEPT: &str = "application/vnd.oci.image.index.v1+json, \
application/vnd.docker.distribution.manifest.list.v2+json, \
application/vnd.docker.distribution.manifest.v2+json, \
application/vnd.oci.image.manifest.v1+json";

/// Largest JSON answer read from any upstream (configs and PR listings are small).
const MAX_JSON_BYTES: usize = 4 * 1024 * 1024;
/// Most pages of an upstream PR's file list (100 files each).
const MAX_FILE_PAGES: u32 = 5;

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
    pub timeout: Duration,
    pub attempts: u32,
    pub backoff: Duration,
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
            timeout: Duration::from_secs(30),
            attempts: 3,
            backoff: Duration::from_millis(300),
        }
    }
}

pub struct UpstreamClient {
    config: UpstreamConfig,
    http: reqwest::Client,
    requests: AtomicU64,
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
    /// `library/` for single-segment names, `latest` when no tag is given).
    pub fn parse(text: &str) -> Option<ImageRef> {
        let text = text.trim();
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

impl UpstreamClient {
    pub fn new(config: UpstreamConfig) -> Result<UpstreamClient, reqwest::Error> {
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .user_agent(concat!("sweepgate/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::limited(5))
            .build()?;
        Ok(UpstreamClient { config, http, requests: AtomicU64::new(0) })
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
        self.requests.fetch_add(1, Ordering::Relaxed);
        let mut request = self.http.request(method, url);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let mut response = request.send().await.map_err(|e| Failure::Retry(format!("{url}: {e}")))?;
        let status = response.status();
        if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
            return Err(Failure::Retry(format!("{url}: HTTP {}", status.as_u16())));
        }
        let headers = response.headers().clone();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| Failure::Retry(format!("{url}: {e}")))? {
            if body.len() + chunk.len() > MAX_JSON_BYTES {
                return Err(Failure::Final(format!("{url}: answer larger than {MAX_JSON_BYTES} bytes")));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((status, headers, body))
    }

    async fn get_json(&self, url: &str, auth: Option<&str>) -> Result<Value, String> {
        let mut headers = vec![(ACCEPT, "application/json".to_string())];
        if let Some(token) = auth {
            headers.push((AUTHORIZATION, format!("Bearer {token}")));
        }
        let (status, _, body) = self.send(Method::GET, url, &headers).await?;
        if !status.is_success() {
            return Err(format!("{url}: HTTP {}", status.as_u16()));
        }
        serde_json::from_slice(&body).map_err(|e| format!("{url}: not JSON: {e}"))
    }

    /// State, merge time and files of `owner/repo#number` (e.g. a vLLM recipes PR).
    pub async fn pull(&self, owner_repo: &str, number: u64) -> Fact<UpstreamPull> {
        match self.fetch_pull(owner_repo, number).await {
            Ok(pull) => Fact::Ok(pull),
            Err(reason) => Fact::Unavailable(reason),
        }
    }

    async fn fetch_pull(&self, owner_repo: &str, number: u64) -> Result<UpstreamPull, String> {
        let base = format!("{}/repos/{owner_repo}/pulls/{number}", self.config.github_api.trim_end_matches('/'));
        let token = self.config.github_token.as_deref();
        let pull = self.get_json(&base, token).await?;
        let text = |key: &str| pull.get(key).and_then(Value::as_str).map(str::to_string);
        let mut files = Vec::new();
        for page in 1..=MAX_FILE_PAGES {
            let listing = self.get_json(&format!("{base}/files?per_page=100&page={page}"), token).await?;
            let batch = listing.as_array().ok_or_else(|| format!("{base}/files: not a list"))?;
            files.extend(batch.iter().filter_map(|f| f.get("filename").and_then(Value::as_str)).map(str::to_string));
            if batch.len() < 100 {
                break;
            }
        }
        Ok(UpstreamPull {
            state: text("state").ok_or_else(|| format!("{base}: no state"))?,
            draft: pull.get("draft").and_then(Value::as_bool).unwrap_or(false),
            merged_at: text("merged_at"),
            files,
        })
    }

    /// The manifest digest `image` resolves to now (`sha256:…`).
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
        match self.get_json(&url, None).await {
            Ok(value) => Fact::Ok(value),
            Err(reason) => Fact::Unavailable(reason),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
