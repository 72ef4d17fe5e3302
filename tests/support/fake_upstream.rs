//! Fake upstream services on 127.0.0.1 for the collectors: an OCI registry with the anonymous
//! Bearer token flow (401 + `WWW-Authenticate` → `/token` → manifest HEAD), the Hugging Face
//! `resolve/main/config.json` route, upstream GitHub PRs (`/repos/{o}/{r}/pulls/{n}[/files]`) with
//! raw file contents (`/repos/{o}/{r}/contents/{path}?ref=`), and published pages (any other path).

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

pub const TOKEN: &str = "anon-pull-token";

#[derive(Debug, Default)]
pub struct Upstream {
    /// "repository:reference" → digest.
    pub manifests: HashMap<String, String>,
    /// "org/name" → config.json.
    pub model_configs: HashMap<String, Value>,
    /// (owner/repo, number) → (PR JSON, file names).
    pub pulls: HashMap<(String, u64), (Value, Vec<String>)>,
    /// (owner/repo, path) → raw file text at any ref (`/repos/{o}/{r}/contents/{path}`).
    pub contents: HashMap<(String, String), String>,
    /// (owner/repo, ref, path) → raw file text at that ref only (a checkout a launcher clones);
    /// asked first. The ref is `""` when the request names none (the default branch).
    pub contents_at: HashMap<(String, String, String), String>,
    /// Request path → (status, body) of a published page.
    pub pages: HashMap<String, (u16, Vec<u8>)>,
    /// 5xx answers to give before serving normally (retries are tested with it).
    pub fail_first: u32,
    pub log: Vec<String>,
}

pub struct FakeUpstream {
    pub url: String,
    pub state: Arc<Mutex<Upstream>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeUpstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

type Shared = Arc<Mutex<Upstream>>;

impl FakeUpstream {
    pub async fn start() -> FakeUpstream {
        let state: Shared = Arc::default();
        let router = Router::new()
            .route("/token", get(token))
            .route("/v2/{*rest}", get(manifest).head(manifest))
            .route("/repos/{o}/{r}/pulls/{n}", get(pull))
            .route("/repos/{o}/{r}/pulls/{n}/files", get(pull_files))
            .route("/{org}/{name}/resolve/main/config.json", get(model_config))
            .route("/repos/{o}/{r}/contents/{*path}", get(file_content))
            .fallback(page)
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind fake upstream");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        FakeUpstream { url, state, task }
    }

    /// `127.0.0.1:<port>`, the entry a collector's allowlist needs for this fake.
    pub fn host(&self) -> &str {
        self.url.trim_start_matches("http://")
    }

    pub fn state(&self) -> std::sync::MutexGuard<'_, Upstream> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn lock(state: &Shared) -> std::sync::MutexGuard<'_, Upstream> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

fn injected(state: &Shared, line: String) -> Option<Response> {
    let mut s = lock(state);
    s.log.push(line);
    if s.fail_first > 0 {
        s.fail_first -= 1;
        return Some(StatusCode::BAD_GATEWAY.into_response());
    }
    None
}

async fn token(State(state): State<Shared>, Query(q): Query<HashMap<String, String>>) -> Response {
    if let Some(r) = injected(&state, format!("GET /token {}", q.get("scope").cloned().unwrap_or_default())) {
        return r;
    }
    if q.get("service").map(String::as_str) != Some("fake-registry") {
        return (StatusCode::BAD_REQUEST, "unknown service").into_response();
    }
    Json(json!({"token": TOKEN, "expires_in": 300})).into_response()
}

async fn manifest(State(state): State<Shared>, Path(rest): Path<String>, request: Request) -> Response {
    let method = request.method().clone();
    if let Some(r) = injected(&state, format!("{method} /v2/{rest}")) {
        return r;
    }
    let Some((repository, reference)) = rest.split_once("/manifests/") else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let headers: &HeaderMap = request.headers();
    let authorized = headers.get("authorization").and_then(|v| v.to_str().ok()) == Some(&format!("Bearer {TOKEN}"));
    if !authorized {
        let host = headers.get("host").and_then(|h| h.to_str().ok()).unwrap_or("127.0.0.1");
        let challenge = format!(
            "Bearer realm=\"http://{host}/token\",service=\"fake-registry\",scope=\"repository:{repository}:pull\""
        );
        return (StatusCode::UNAUTHORIZED, [("www-authenticate", challenge)]).into_response();
    }
    let accepts_index = headers
        .get("accept")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("application/vnd.oci.image.index.v1+json"));
    match lock(&state).manifests.get(&format!("{repository}:{reference}")) {
        Some(digest) if accepts_index => {
            let body = if method == Method::HEAD { String::new() } else { "{}".into() };
            (StatusCode::OK, [("docker-content-digest", digest.clone())], body).into_response()
        }
        Some(_) => (StatusCode::NOT_ACCEPTABLE, "manifest unknown for this Accept").into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn pull(State(state): State<Shared>, Path((o, r, n)): Path<(String, String, u64)>) -> Response {
    if let Some(resp) = injected(&state, format!("GET /repos/{o}/{r}/pulls/{n}")) {
        return resp;
    }
    match lock(&state).pulls.get(&(format!("{o}/{r}"), n)) {
        Some((pull, _)) => Json(pull.clone()).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn pull_files(State(state): State<Shared>, Path((o, r, n)): Path<(String, String, u64)>) -> Response {
    if let Some(resp) = injected(&state, format!("GET /repos/{o}/{r}/pulls/{n}/files")) {
        return resp;
    }
    match lock(&state).pulls.get(&(format!("{o}/{r}"), n)) {
        Some((_, files)) => Json(files.iter().map(|f| json!({"filename": f})).collect::<Vec<_>>()).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn model_config(State(state): State<Shared>, Path((org, name)): Path<(String, String)>) -> Response {
    if let Some(resp) = injected(&state, format!("GET /{org}/{name}/resolve/main/config.json")) {
        return resp;
    }
    match lock(&state).model_configs.get(&format!("{org}/{name}")) {
        Some(config) => Json(config.clone()).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn file_content(
    State(state): State<Shared>,
    Path((o, r, path)): Path<(String, String, String)>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let reference = q.get("ref").cloned().unwrap_or_default();
    if let Some(resp) = injected(&state, format!("GET /repos/{o}/{r}/contents/{path}?ref={reference}")) {
        return resp;
    }
    let s = lock(&state);
    let repo = format!("{o}/{r}");
    match s.contents_at.get(&(repo.clone(), reference, path.clone())).or_else(|| s.contents.get(&(repo, path))) {
        Some(text) => text.clone().into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn page(State(state): State<Shared>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    if let Some(resp) = injected(&state, format!("GET {path}")) {
        return resp;
    }
    match lock(&state).pages.get(&path) {
        Some((status, body)) => {
            (StatusCode::from_u16(*status).unwrap_or(StatusCode::OK), [("content-type", "text/html")], body.clone())
                .into_response()
        }
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
