//! A fake GitHub REST API on 127.0.0.1 for end-to-end tests: the endpoints sweepgate calls,
//! with state (pulls, comments, reactions, statuses, check runs, workflow runs, artifacts,
//! permissions, App installation tokens), authentication, pagination, fault injection and a
//! request log, so tests assert every side effect the real client produced.

#![allow(dead_code)] // each test binary uses a different part of the fake

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::extract::{Path, Query, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, patch, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

pub const TIME: &str = "2026-09-01T10:00:00Z";
/// When `add_pull`'s head repository was last pushed: before every comment (`TIME`).
pub const PUSHED: &str = "2026-09-01T09:00:00Z";

#[derive(Debug, Clone)]
pub struct StoredComment {
    pub id: u64,
    pub repo: String,
    pub issue: u64,
    pub body: String,
    pub login: String,
    pub association: String,
    pub created_at: String,
    pub updated_at: String,
}

impl StoredComment {
    fn json(&self) -> Value {
        json!({
            "id": self.id, "body": self.body,
            "user": {"login": self.login, "type": if self.login.ends_with("[bot]") { "Bot" } else { "User" }},
            "author_association": self.association,
            "created_at": self.created_at, "updated_at": self.updated_at,
            "html_url": format!("https://github.com/{}/pull/{}#issuecomment-{}", self.repo, self.issue, self.id),
            "issue_url": format!("https://api.github.com/repos/{}/issues/{}", self.repo, self.issue),
        })
    }
}

/// A canned failure for the next matching request: an error status, a slow answer, or a
/// connection closed without any answer.
#[derive(Debug, Clone, Default)]
pub struct Fault {
    /// Answered instead of the real answer, with `headers`; 0 keeps the real answer (and so
    /// does a drop, which answers nothing).
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    /// Only requests whose "METHOD path" starts with this are affected (empty: any).
    pub matching: String,
    /// Held this long before answering (or dropping); beyond the client's timeout it gives up.
    pub delay: Duration,
    /// Close the connection without an HTTP answer.
    pub drop: Option<Dropped>,
}

/// When a dropped connection is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dropped {
    /// Before the request takes effect: nothing happened.
    BeforeHandling,
    /// After it took effect (a comment exists): only the answer is lost.
    AfterHandling,
}

impl Fault {
    /// The real answer to the next `matching` request, after `delay`.
    pub fn slow(matching: &str, delay: Duration) -> Fault {
        Fault { matching: matching.into(), delay, ..Fault::default() }
    }

    /// No answer at all to the next `matching` request.
    pub fn dropped(matching: &str, when: Dropped) -> Fault {
        Fault { matching: matching.into(), drop: Some(when), ..Fault::default() }
    }
}

#[derive(Debug, Default)]
pub struct World {
    pub pulls: HashMap<(String, u64), Value>,
    pub commits: HashMap<(String, u64), Vec<Value>>,
    pub files: HashMap<(String, u64), Vec<Value>>,
    pub comments: Vec<StoredComment>,
    /// (comment id, content, login, reaction id)
    pub reactions: Vec<(u64, String, String, u64)>,
    /// (repo, sha, status body)
    pub statuses: Vec<(String, String, Value)>,
    pub check_runs: Vec<(String, Value)>,
    pub runs: HashMap<(String, u64), Value>,
    pub artifacts: HashMap<(String, u64), Vec<Value>>,
    /// (repo, login) → role name
    pub permissions: HashMap<(String, String), String>,
    /// token → login it authenticates
    pub tokens: HashMap<String, String>,
    /// Login of App installation tokens.
    pub app_login: String,
    pub installation_tokens_issued: u64,
    pub faults: VecDeque<Fault>,
    /// (repo, sha) → gzipped tarball served by `GET …/tarball/{sha}` (through a redirect).
    pub tarballs: HashMap<(String, String), Vec<u8>>,
    /// artifact id → zip served by `GET …/actions/artifacts/{id}/zip` (through a redirect).
    pub artifact_zips: HashMap<u64, Vec<u8>>,
    /// (repo, review id) → review JSON; (repo, comment id) → inline review comment JSON.
    pub reviews: HashMap<(String, u64), Value>,
    pub review_comments: HashMap<(String, u64), Value>,
    /// (org, team) → active members; teams not listed answer 404 like hidden teams do.
    pub teams: HashMap<(String, String), Vec<String>>,
    /// After this many reads of a PR, its head becomes the given SHA (a push mid-verification).
    pub head_moves: Option<(u64, String)>,
    pub pull_reads: u64,
    /// Redirected downloads that arrived with an Authorization header (must stay 0).
    pub leaked_auth: u64,
    /// "METHOD path?query" of every request, in order.
    pub log: Vec<String>,
    /// (repo, sha) → `path → blob SHA` served by `GET …/git/trees/{sha}?recursive=1`.
    pub git_trees: HashMap<(String, String), Vec<(String, String)>>,
    /// (repo, run id) → jobs JSON (`id`, `name`, `conclusion`) served by `…/runs/{id}/jobs`.
    pub jobs: HashMap<(String, u64), Vec<Value>>,
    /// job id → log text served by `GET …/actions/jobs/{id}/logs` (through a redirect).
    pub job_logs: HashMap<u64, Vec<u8>>,
    /// (repo, commit) → its parents, newest history first, for `GET …/compare/{base}...{head}`
    /// (which also needs both commits' `git_trees`).
    pub parents: HashMap<(String, String), Vec<String>>,
    /// (repo, branch) → the commit it points at (`GET …/branches/{branch}`). A branch not set
    /// points at the base commit of the repository's lowest-numbered open PR that targets it
    /// (of a closed one when none is open).
    pub branches: HashMap<(String, String), String>,
    /// (repo, branch) → its changes, newest first (`after`, `timestamp`), served by
    /// `GET …/activity?ref=refs/heads/{branch}`. `add_pull` records the head's push at [`PUSHED`].
    pub branch_activity: HashMap<(String, String), Vec<Value>>,
    /// Added before every answer (a remote GitHub's round trip, for benchmarks).
    pub latency: Duration,
    /// Bytes of every answer body sent, `/_blobs/` downloads included.
    pub bytes_sent: u64,
    /// The App's installations (`GET /app/installations`): `id`, `account.login`, `permissions`, `events`.
    pub installations: Vec<Value>,
    next_id: u64,
}

impl World {
    fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// A fresh `updated_at`: every change to a PR is later than the one before.
    fn tick(&mut self) -> String {
        let base = chrono::DateTime::parse_from_rfc3339(TIME).expect("TIME is RFC 3339");
        (base + chrono::Duration::seconds(self.next_id() as i64)).to_rfc3339()
    }

    pub fn comments_on(&self, repo: &str, issue: u64) -> Vec<&StoredComment> {
        self.comments.iter().filter(|c| c.repo == repo && c.issue == issue).collect()
    }

    pub fn count(&self, prefix: &str) -> usize {
        self.log.iter().filter(|l| l.starts_with(prefix)).count()
    }
}

/// A published run's artifact: its name and the files of its zip (`None`: its zip is gone).
pub type PublishedArtifact<'a> = (&'a str, Option<Vec<(&'a str, &'a [u8])>>);

pub struct FakeGitHub {
    pub url: String,
    pub world: Arc<Mutex<World>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeGitHub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

type Shared = Arc<Mutex<World>>;

fn lock(world: &Shared) -> MutexGuard<'_, World> {
    world.lock().unwrap_or_else(|p| p.into_inner())
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"message": message, "documentation_url": "https://docs.github.com/rest"}))).into_response()
}

impl FakeGitHub {
    /// Starts the fake on 127.0.0.1:0. `token` authenticates as `login`.
    pub async fn start(token: &str, login: &str) -> FakeGitHub {
        let world =
            Arc::new(Mutex::new(World { next_id: 1000, app_login: "sweepgate[bot]".into(), ..World::default() }));
        lock(&world).tokens.insert(token.to_string(), login.to_string());
        let router = Router::new()
            .route("/app/installations/{id}/access_tokens", post(access_token))
            .route("/app/installations", get(list_installations))
            .route("/repos/{o}/{r}/issues/{n}/comments", get(list_comments).post(create_comment))
            .route("/repos/{o}/{r}/issues/comments/{id}", get(get_comment).patch(update_comment))
            .route("/repos/{o}/{r}/issues/comments/{id}/reactions", get(list_reactions).post(add_reaction))
            .route("/repos/{o}/{r}/issues/comments/{id}/reactions/{reaction}", delete(delete_reaction))
            .route("/repos/{o}/{r}/pulls/{n}/reviews/{id}", get(get_review))
            .route("/repos/{o}/{r}/pulls/comments/{id}", get(get_review_comment))
            .route("/repos/{o}/{r}/pulls/{n}/reviews", get(list_reviews))
            .route("/repos/{o}/{r}/pulls/{n}/comments", get(list_review_comments))
            .route("/repos/{o}/{r}/tarball/{sha}", get(tarball_redirect))
            .route("/repos/{o}/{r}/actions/artifacts/{id}/zip", get(artifact_redirect))
            .route("/orgs/{org}/teams/{team}/memberships/{user}", get(team_membership))
            .route("/_blobs/tarball/{o}/{r}/{sha}", get(tarball_blob))
            .route("/_blobs/artifact/{id}", get(artifact_blob))
            .route("/repos/{o}/{r}/pulls", get(list_pulls))
            .route("/repos/{o}/{r}/pulls/{n}", get(get_pull))
            .route("/repos/{o}/{r}/pulls/{n}/commits", get(list_commits))
            .route("/repos/{o}/{r}/pulls/{n}/files", get(list_files))
            .route("/repos/{o}/{r}/statuses/{sha}", post(create_status))
            .route("/repos/{o}/{r}/commits/{sha}/statuses", get(list_statuses))
            .route("/repos/{o}/{r}/commits/{sha}/pulls", get(list_commit_pulls))
            .route("/repos/{o}/{r}/commits/{sha}/check-runs", get(list_check_runs))
            .route("/repos/{o}/{r}/check-runs", post(create_check_run))
            .route("/repos/{o}/{r}/check-runs/{id}", patch(update_check_run))
            .route("/repos/{o}/{r}/actions/runs/{id}", get(get_run))
            .route("/repos/{o}/{r}/actions/runs/{id}/artifacts", get(list_artifacts))
            .route("/repos/{o}/{r}/actions/workflows/{file}/runs", get(list_runs))
            .route("/repos/{o}/{r}/collaborators/{user}/permission", get(permission))
            .route("/repos/{o}/{r}/git/trees/{sha}", get(git_tree))
            .route("/repos/{o}/{r}/compare/{basehead}", get(compare))
            .route("/repos/{o}/{r}/branches/{*branch}", get(get_branch))
            .route("/repos/{o}/{r}/activity", get(branch_activity))
            .route("/repos/{o}/{r}/actions/runs/{id}/jobs", get(list_jobs))
            .route("/repos/{o}/{r}/actions/jobs/{id}/logs", get(job_log_redirect))
            .route("/_blobs/job-log/{id}", get(job_log_blob))
            .route("/repos/{o}/{r}/contents/{*path}", get(contents))
            .layer(middleware::from_fn_with_state(world.clone(), gate))
            .with_state(world.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind fake GitHub");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        FakeGitHub { url, world, task }
    }

    pub fn world(&self) -> MutexGuard<'_, World> {
        lock(&self.world)
    }

    /// A same-repository PR with `labels`, head `head_sha` (message `head_message`) and files.
    pub fn add_pull(&self, repo: &str, number: u64, head_sha: &str, labels: &[&str], files: &[(&str, u64)]) {
        let mut w = self.world();
        let updated_at = w.tick();
        w.pulls.insert(
            (repo.into(), number),
            json!({
                "number": number, "state": "open", "draft": false, "title": "Add a sweep", "updated_at": updated_at,
                "head": {"sha": head_sha, "ref": format!("branch-{number}"), "repo": {"full_name": repo, "pushed_at": PUSHED}},
                "base": {"sha": "b".repeat(40), "ref": "main", "repo": {"full_name": repo, "default_branch": "main"}},
                "labels": labels.iter().map(|l| json!({"name": l})).collect::<Vec<_>>(),
                "merged_at": null,
                "user": {"login": "vendor-dev", "type": "User"},
            }),
        );
        w.commits
            .insert((repo.into(), number), vec![json!({"sha": head_sha, "commit": {"message": "Add sweep config"}})]);
        w.files.insert(
            (repo.into(), number),
            files
                .iter()
                .map(|(name, additions)| json!({"filename": name, "status": "modified", "additions": additions, "deletions": 0}))
                .collect(),
        );
        let push = json!({"after": head_sha, "timestamp": PUSHED, "activity_type": "push"});
        w.branch_activity.insert((repo.into(), format!("branch-{number}")), vec![push]);
    }

    /// The author pushes `sha` to PR `number`'s branch at GitHub time `at` (RFC 3339): the
    /// PR's head, its head repository's `pushed_at` and the branch's activity follow.
    pub fn push(&self, repo: &str, number: u64, sha: &str, at: &str) {
        let mut w = self.world();
        let updated_at = w.tick();
        let pull = w.pulls.get_mut(&(repo.into(), number)).expect("the PR exists");
        pull["head"]["sha"] = json!(sha);
        pull["head"]["repo"]["pushed_at"] = json!(at);
        pull["updated_at"] = json!(updated_at);
        let push = json!({"after": sha, "timestamp": at, "activity_type": "push"});
        w.branch_activity.entry((repo.into(), format!("branch-{number}"))).or_default().insert(0, push);
    }

    /// A status on `sha` posted by `creator` (e.g. a status the bot set before).
    pub fn add_status(&self, repo: &str, sha: &str, creator: &str, state: &str, context: &str, description: &str) {
        self.world().statuses.push((
            repo.into(),
            sha.into(),
            json!({"state": state, "context": context, "description": description, "creator": {"login": creator}}),
        ));
    }

    pub fn set_labels(&self, repo: &str, number: u64, labels: &[&str]) {
        let mut w = self.world();
        let updated_at = w.tick();
        if let Some(pull) = w.pulls.get_mut(&(repo.to_string(), number)) {
            pull["labels"] = labels.iter().map(|l| json!({"name": l})).collect();
            pull["updated_at"] = json!(updated_at);
        }
    }

    pub fn add_comment(&self, repo: &str, issue: u64, login: &str, association: &str, body: &str) -> u64 {
        let mut w = self.world();
        let id = w.next_id();
        w.comments.push(StoredComment {
            id,
            repo: repo.into(),
            issue,
            body: body.into(),
            login: login.into(),
            association: association.into(),
            created_at: TIME.into(),
            updated_at: TIME.into(),
        });
        id
    }

    /// A workflow run of `.github/workflows/<file>` and its artifacts.
    #[allow(clippy::too_many_arguments)]
    pub fn add_run(
        &self,
        repo: &str,
        id: u64,
        file: &str,
        event: &str,
        conclusion: &str,
        head_sha: &str,
        branch: &str,
        artifacts: &[&str],
    ) {
        let mut w = self.world();
        w.runs.insert(
            (repo.into(), id),
            json!({
                "id": id, "name": "Run Sweep", "path": format!(".github/workflows/{file}"), "event": event,
                "status": "completed", "conclusion": conclusion, "head_sha": head_sha, "head_branch": branch,
                "html_url": format!("https://github.com/{repo}/actions/runs/{id}"), "run_attempt": 1,
            }),
        );
        let list = artifacts
            .iter()
            .enumerate()
            .map(|(i, name)| json!({"id": id * 100 + i as u64, "name": name, "expired": false}))
            .collect();
        w.artifacts.insert((repo.into(), id), list);
    }

    /// The published run the collector finds from a base changelog entry linking PR `pr`: that
    /// PR, merged at `merge_sha`, and its `run-sweep.yml` push run `run` on the merge commit,
    /// listing `artifacts` (name and the files of its zip; `None`: listed, its zip gone).
    pub fn add_published_run(
        &self,
        repo: &str,
        pr: u64,
        run: u64,
        merge_sha: &str,
        artifacts: &[PublishedArtifact<'_>],
    ) {
        self.add_pull(repo, pr, &"5e".repeat(20), &[], &[]);
        {
            let mut w = self.world();
            let pull = w.pulls.get_mut(&(repo.to_string(), pr)).unwrap();
            pull["state"] = json!("closed");
            pull["merged_at"] = json!("2026-11-01T00:00:00Z");
            pull["merge_commit_sha"] = json!(merge_sha);
        }
        let names: Vec<&str> = artifacts.iter().map(|(name, _)| *name).collect();
        self.add_run(repo, run, "run-sweep.yml", "push", "success", merge_sha, "main", &names);
        for (i, (_, files)) in artifacts.iter().enumerate() {
            if let Some(files) = files {
                self.world().artifact_zips.insert(run * 100 + i as u64, zip_of(files));
            }
        }
    }

    pub fn fail_next(&self, fault: Fault) {
        self.world().faults.push_back(fault);
    }
}

/// Logs and injects faults, around [`authenticated`].
async fn gate(State(world): State<Shared>, request: Request, next: Next) -> Response {
    let line = format!("{} {}", request.method(), request.uri().path_and_query().map(|p| p.as_str()).unwrap_or("/"));
    let fault = {
        let mut w = lock(&world);
        w.log.push(line.clone());
        let hit = w.faults.iter().position(|f| line.starts_with(&f.matching));
        hit.and_then(|i| w.faults.remove(i))
    };
    let latency = lock(&world).latency;
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let Some(fault) = fault else { return counted(&world, authenticated(world.clone(), request, next).await).await };
    tokio::time::sleep(fault.delay).await;
    if fault.drop == Some(Dropped::BeforeHandling) {
        drop_connection();
    }
    if fault.status != 0 && fault.drop.is_none() {
        let mut response = error(StatusCode::from_u16(fault.status).unwrap(), "injected fault");
        for (k, v) in fault.headers {
            response.headers_mut().insert(k, v.parse().unwrap());
        }
        return response;
    }
    let response = authenticated(world, request, next).await;
    if fault.drop == Some(Dropped::AfterHandling) {
        drop_connection();
    }
    response
}

/// Adds the answer's body size to [`World::bytes_sent`].
async fn counted(world: &Shared, response: Response) -> Response {
    use http_body_util::BodyExt;
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    lock(world).bytes_sent += bytes.len() as u64;
    Response::from_parts(parts, axum::body::Body::from(bytes))
}

/// Ends the connection's task without an answer: the socket is closed, the client sees the
/// connection end before any response. `resume_unwind` skips the panic hook (no noise), and
/// tokio contains the unwind to the connection's task.
fn drop_connection() -> ! {
    std::panic::resume_unwind(Box::new("fake GitHub: connection dropped by a fault"))
}

/// Authenticates the request and runs it.
async fn authenticated(world: Shared, request: Request, next: Next) -> Response {
    let auth = request.headers().get("authorization").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let token = auth.strip_prefix("Bearer ").or_else(|| auth.strip_prefix("token ")).unwrap_or("");
    let is_app_route = request.uri().path().starts_with("/app/");
    if request.uri().path().starts_with("/_blobs/") {
        // Storage URLs carry their own signature; a client must not send its GitHub token there.
        if !auth.is_empty() {
            lock(&world).leaked_auth += 1;
            return error(StatusCode::BAD_REQUEST, "Only one auth mechanism allowed");
        }
        return next.run(request).await;
    }
    if is_app_route {
        // An App JWT: header.payload.signature (octocrab signs it with the App key).
        if token.split('.').count() != 3 {
            return error(StatusCode::UNAUTHORIZED, "A JSON web token could not be decoded");
        }
    } else if !lock(&world).tokens.contains_key(token) {
        return error(StatusCode::UNAUTHORIZED, "Bad credentials");
    }
    let mut request = request;
    request.extensions_mut().insert(Caller(lock(&world).tokens.get(token).cloned().unwrap_or_default()));
    next.run(request).await
}

#[derive(Clone)]
struct Caller(String);

#[derive(Deserialize)]
struct Page {
    per_page: Option<usize>,
    page: Option<usize>,
    event: Option<String>,
    branch: Option<String>,
    status: Option<String>,
    head_sha: Option<String>,
}

#[derive(Deserialize)]
struct ActivityQuery {
    #[serde(rename = "ref")]
    reference: Option<String>,
}

async fn branch_activity(
    State(world): State<Shared>,
    Path((o, r)): Path<(String, String)>,
    Query(q): Query<ActivityQuery>,
) -> Response {
    let w = lock(&world);
    let Some(branch) = q.reference.as_deref().and_then(|r| r.strip_prefix("refs/heads/")) else {
        return Json(Vec::<Value>::new()).into_response();
    };
    let listed = w.branch_activity.get(&(format!("{o}/{r}"), branch.to_owned())).cloned().unwrap_or_default();
    Json(listed.into_iter().take(100).collect::<Vec<_>>()).into_response()
}

fn paginate(items: Vec<Value>, q: &Page) -> Vec<Value> {
    let per_page = q.per_page.unwrap_or(30).clamp(1, 100);
    let page = q.page.unwrap_or(1).max(1);
    items.into_iter().skip((page - 1) * per_page).take(per_page).collect()
}

fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "Not Found")
}

async fn access_token(State(world): State<Shared>, Path(id): Path<u64>) -> Response {
    let mut w = lock(&world);
    w.installation_tokens_issued += 1;
    let token = format!("ghs_fake_{id}_{}", w.installation_tokens_issued);
    let login = w.app_login.clone();
    w.tokens.insert(token.clone(), login);
    let expires = (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    (StatusCode::CREATED, Json(json!({"token": token, "expires_at": expires, "permissions": {}}))).into_response()
}

async fn list_installations(State(world): State<Shared>, Query(q): Query<Page>) -> Response {
    Json(paginate(lock(&world).installations.clone(), &q)).into_response()
}

async fn list_comments(
    State(world): State<Shared>,
    Path((o, r, n)): Path<(String, String, u64)>,
    Query(q): Query<Page>,
) -> Response {
    let w = lock(&world);
    let repo = format!("{o}/{r}");
    let items = w.comments_on(&repo, n).into_iter().map(StoredComment::json).collect();
    Json(paginate(items, &q)).into_response()
}

#[derive(Deserialize)]
struct BodyInput {
    body: String,
}

async fn create_comment(
    State(world): State<Shared>,
    axum::Extension(Caller(login)): axum::Extension<Caller>,
    Path((o, r, n)): Path<(String, String, u64)>,
    Json(input): Json<BodyInput>,
) -> Response {
    let mut w = lock(&world);
    let id = w.next_id();
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let comment = StoredComment {
        id,
        repo: format!("{o}/{r}"),
        issue: n,
        body: input.body,
        login,
        association: "NONE".into(),
        created_at: now.clone(),
        updated_at: now,
    };
    let json = comment.json();
    w.comments.push(comment);
    (StatusCode::CREATED, Json(json)).into_response()
}

async fn update_comment(
    State(world): State<Shared>,
    axum::Extension(Caller(login)): axum::Extension<Caller>,
    Path((_o, _r, id)): Path<(String, String, u64)>,
    Json(input): Json<BodyInput>,
) -> Response {
    let mut w = lock(&world);
    let Some(comment) = w.comments.iter_mut().find(|c| c.id == id) else { return not_found() };
    if comment.login != login {
        return error(StatusCode::FORBIDDEN, "Resource not accessible by integration");
    }
    comment.body = input.body;
    comment.updated_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    Json(comment.json()).into_response()
}

#[derive(Deserialize)]
struct ReactionInput {
    content: String,
}

async fn add_reaction(
    State(world): State<Shared>,
    axum::Extension(Caller(login)): axum::Extension<Caller>,
    Path((_o, _r, id)): Path<(String, String, u64)>,
    Json(input): Json<ReactionInput>,
) -> Response {
    let mut w = lock(&world);
    if !w.comments.iter().any(|c| c.id == id) {
        return not_found();
    }
    if !["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"].contains(&input.content.as_str()) {
        return error(StatusCode::UNPROCESSABLE_ENTITY, "Validation Failed");
    }
    let existing =
        w.reactions.iter().find(|(c, content, who, _)| *c == id && *content == input.content && *who == login);
    let (status, reaction_id) = match existing {
        Some((.., rid)) => (StatusCode::OK, *rid),
        None => {
            let rid = w.next_id();
            w.reactions.push((id, input.content.clone(), login.clone(), rid));
            (StatusCode::CREATED, rid)
        }
    };
    (status, Json(json!({"id": reaction_id, "content": input.content, "user": {"login": login}}))).into_response()
}

async fn list_reactions(
    State(world): State<Shared>,
    Path((_o, _r, id)): Path<(String, String, u64)>,
    Query(q): Query<Page>,
) -> Response {
    let items = lock(&world)
        .reactions
        .iter()
        .filter(|(c, ..)| *c == id)
        .map(|(_, content, login, rid)| json!({"id": rid, "content": content, "user": {"login": login, "type": "Bot"}}))
        .collect();
    Json(paginate(items, &q)).into_response()
}

async fn delete_reaction(
    State(world): State<Shared>,
    axum::Extension(Caller(login)): axum::Extension<Caller>,
    Path((_o, _r, id, reaction)): Path<(String, String, u64, u64)>,
) -> Response {
    let mut w = lock(&world);
    let Some(index) = w.reactions.iter().position(|(c, .., rid)| *c == id && *rid == reaction) else {
        return not_found();
    };
    if w.reactions[index].2 != login {
        return error(StatusCode::FORBIDDEN, "Must have admin rights to Repository.");
    }
    w.reactions.remove(index);
    StatusCode::NO_CONTENT.into_response()
}

async fn get_pull(State(world): State<Shared>, Path((o, r, n)): Path<(String, String, u64)>) -> Response {
    let mut w = lock(&world);
    w.pull_reads += 1;
    let moved = w.head_moves.clone().filter(|(after, _)| w.pull_reads > *after);
    if let (Some((_, sha)), Some(pull)) = (moved, w.pulls.get_mut(&(format!("{o}/{r}"), n))) {
        pull["head"]["sha"] = json!(sha);
    }
    match w.pulls.get(&(format!("{o}/{r}"), n)) {
        Some(pull) => Json(pull.clone()).into_response(),
        None => not_found(),
    }
}

async fn list_commits(
    State(world): State<Shared>,
    Path((o, r, n)): Path<(String, String, u64)>,
    Query(q): Query<Page>,
) -> Response {
    match lock(&world).commits.get(&(format!("{o}/{r}"), n)) {
        Some(list) => Json(paginate(list.clone(), &q)).into_response(),
        None => not_found(),
    }
}

async fn list_files(
    State(world): State<Shared>,
    Path((o, r, n)): Path<(String, String, u64)>,
    Query(q): Query<Page>,
) -> Response {
    match lock(&world).files.get(&(format!("{o}/{r}"), n)) {
        Some(list) => Json(paginate(list.clone(), &q)).into_response(),
        None => not_found(),
    }
}

async fn create_status(
    State(world): State<Shared>,
    axum::Extension(Caller(login)): axum::Extension<Caller>,
    Path((o, r, sha)): Path<(String, String, String)>,
    Json(body): Json<Value>,
) -> Response {
    let valid_state = ["pending", "success", "failure", "error"].contains(&body["state"].as_str().unwrap_or(""));
    if !valid_state || body["description"].as_str().is_some_and(|d| d.chars().count() > 140) {
        return error(StatusCode::UNPROCESSABLE_ENTITY, "Validation Failed");
    }
    let mut stored = body;
    stored["creator"] = json!({"login": login, "type": if login.ends_with("[bot]") { "Bot" } else { "User" }});
    lock(&world).statuses.push((format!("{o}/{r}"), sha, stored.clone()));
    (StatusCode::CREATED, Json(stored)).into_response()
}

/// Open pull requests, most recently updated first (`sort=updated&direction=desc`).
async fn list_pulls(
    State(world): State<Shared>,
    Path((o, r)): Path<(String, String)>,
    Query(q): Query<Page>,
) -> Response {
    let repo = format!("{o}/{r}");
    let w = lock(&world);
    let mut open: Vec<&Value> =
        w.pulls.iter().filter(|((r, _), p)| *r == repo && p["state"] == "open").map(|(_, p)| p).collect();
    open.sort_by_key(|p| std::cmp::Reverse(p["updated_at"].as_str().unwrap_or_default().to_string()));
    Json(paginate(open.into_iter().cloned().collect(), &q)).into_response()
}

/// The PRs whose head or recorded commits hold `sha`, by number.
async fn list_commit_pulls(
    State(world): State<Shared>,
    Path((o, r, sha)): Path<(String, String, String)>,
    Query(q): Query<Page>,
) -> Response {
    let repo = format!("{o}/{r}");
    let w = lock(&world);
    let mut found: Vec<(&u64, &Value)> = w
        .pulls
        .iter()
        .filter(|((name, n), pull)| {
            let in_commits = w.commits.get(&(repo.clone(), *n)).is_some_and(|cs| cs.iter().any(|c| c["sha"] == sha));
            *name == repo && (pull["head"]["sha"] == sha.as_str() || in_commits)
        })
        .map(|((_, n), pull)| (n, pull))
        .collect();
    found.sort_by_key(|(n, _)| **n);
    Json(paginate(found.into_iter().map(|(_, p)| p.clone()).collect(), &q)).into_response()
}

/// Statuses of one commit, newest first (as GitHub lists them).
async fn list_statuses(
    State(world): State<Shared>,
    Path((o, r, sha)): Path<(String, String, String)>,
    Query(q): Query<Page>,
) -> Response {
    let repo = format!("{o}/{r}");
    let items: Vec<Value> = lock(&world)
        .statuses
        .iter()
        .rev()
        .filter(|(r, s, _)| *r == repo && *s == sha)
        .map(|(_, _, v)| v.clone())
        .collect();
    Json(paginate(items, &q)).into_response()
}

async fn list_check_runs(
    State(world): State<Shared>,
    Path((o, r, sha)): Path<(String, String, String)>,
    Query(q): Query<Page>,
) -> Response {
    let repo = format!("{o}/{r}");
    let items: Vec<Value> = lock(&world)
        .check_runs
        .iter()
        .filter(|(r, c)| *r == repo && c["head_sha"] == sha)
        .map(|(_, c)| c.clone())
        .collect();
    let total = items.len();
    Json(json!({"total_count": total, "check_runs": paginate(items, &q)})).into_response()
}

async fn get_run(State(world): State<Shared>, Path((o, r, id)): Path<(String, String, u64)>) -> Response {
    match lock(&world).runs.get(&(format!("{o}/{r}"), id)) {
        Some(run) => Json(run.clone()).into_response(),
        None => not_found(),
    }
}

async fn list_artifacts(
    State(world): State<Shared>,
    Path((o, r, id)): Path<(String, String, u64)>,
    Query(q): Query<Page>,
) -> Response {
    let w = lock(&world);
    match w.artifacts.get(&(format!("{o}/{r}"), id)) {
        Some(list) => {
            // Like GitHub, each artifact declares its zip's size.
            let sized = list
                .iter()
                .map(|a| {
                    let mut a = a.clone();
                    let size = a["id"].as_u64().and_then(|id| w.artifact_zips.get(&id)).map_or(0, Vec::len);
                    a["size_in_bytes"] = json!(size);
                    a
                })
                .collect();
            Json(json!({"total_count": list.len(), "artifacts": paginate(sized, &q)})).into_response()
        }
        None => not_found(),
    }
}

async fn list_runs(
    State(world): State<Shared>,
    Path((o, r, file)): Path<(String, String, String)>,
    Query(q): Query<Page>,
) -> Response {
    let repo = format!("{o}/{r}");
    let path = format!(".github/workflows/{file}");
    let w = lock(&world);
    let mut items: Vec<Value> = w
        .runs
        .iter()
        .filter(|((r, _), run)| {
            *r == repo
                && run["path"] == path
                && q.event.as_ref().is_none_or(|e| run["event"] == *e)
                && q.branch.as_ref().is_none_or(|b| run["head_branch"] == *b)
                && q.status.as_ref().is_none_or(|s| run["status"] == *s)
                && q.head_sha.as_ref().is_none_or(|s| run["head_sha"] == *s)
        })
        .map(|(_, run)| run.clone())
        .collect();
    items.sort_by_key(|run| std::cmp::Reverse(run["id"].as_u64()));
    Json(json!({"total_count": items.len(), "workflow_runs": paginate(items, &q)})).into_response()
}

async fn permission(State(world): State<Shared>, Path((o, r, user)): Path<(String, String, String)>) -> Response {
    match lock(&world).permissions.get(&(format!("{o}/{r}"), user.clone())) {
        Some(role) => {
            let legacy = if role == "maintain" { "write" } else { role.as_str() };
            Json(json!({"permission": legacy, "role_name": role, "user": {"login": user}})).into_response()
        }
        None => not_found(),
    }
}

async fn get_comment(State(world): State<Shared>, Path((o, r, id)): Path<(String, String, u64)>) -> Response {
    let repo = format!("{o}/{r}");
    match lock(&world).comments.iter().find(|c| c.id == id && c.repo == repo) {
        Some(c) => Json(c.json()).into_response(),
        None => not_found(),
    }
}

async fn get_review(State(world): State<Shared>, Path((o, r, _n, id)): Path<(String, String, u64, u64)>) -> Response {
    match lock(&world).reviews.get(&(format!("{o}/{r}"), id)) {
        Some(review) => Json(review.clone()).into_response(),
        None => not_found(),
    }
}

async fn get_review_comment(State(world): State<Shared>, Path((o, r, id)): Path<(String, String, u64)>) -> Response {
    match lock(&world).review_comments.get(&(format!("{o}/{r}"), id)) {
        Some(comment) => Json(comment.clone()).into_response(),
        None => not_found(),
    }
}

/// The stored reviews (or inline review comments) whose `pull_request_url` names PR `n`.
fn of_pull(items: &HashMap<(String, u64), Value>, repo: &str, n: u64) -> Vec<Value> {
    let suffix = format!("/repos/{repo}/pulls/{n}");
    let mut found: Vec<(u64, Value)> = items
        .iter()
        .filter(|((r, _), v)| r == repo && v["pull_request_url"].as_str().is_some_and(|u| u.ends_with(&suffix)))
        .map(|((_, id), v)| (*id, v.clone()))
        .collect();
    found.sort_by_key(|(id, _)| *id);
    found.into_iter().map(|(_, v)| v).collect()
}

async fn list_reviews(
    State(world): State<Shared>,
    Path((o, r, n)): Path<(String, String, u64)>,
    Query(q): Query<Page>,
) -> Response {
    Json(paginate(of_pull(&lock(&world).reviews, &format!("{o}/{r}"), n), &q)).into_response()
}

async fn list_review_comments(
    State(world): State<Shared>,
    Path((o, r, n)): Path<(String, String, u64)>,
    Query(q): Query<Page>,
) -> Response {
    Json(paginate(of_pull(&lock(&world).review_comments, &format!("{o}/{r}"), n), &q)).into_response()
}

fn redirect(location: String) -> Response {
    (StatusCode::FOUND, [("location", location)]).into_response()
}

fn self_url(request: &Request) -> String {
    let host = request.headers().get("host").and_then(|h| h.to_str().ok()).unwrap_or("127.0.0.1");
    format!("http://{host}")
}

async fn tarball_redirect(
    State(world): State<Shared>,
    Path((o, r, sha)): Path<(String, String, String)>,
    request: Request,
) -> Response {
    if !lock(&world).tarballs.contains_key(&(format!("{o}/{r}"), sha.clone())) {
        return not_found();
    }
    redirect(format!("{}/_blobs/tarball/{o}/{r}/{sha}", self_url(&request)))
}

async fn tarball_blob(State(world): State<Shared>, Path((o, r, sha)): Path<(String, String, String)>) -> Response {
    match lock(&world).tarballs.get(&(format!("{o}/{r}"), sha)) {
        Some(bytes) => bytes.clone().into_response(),
        None => not_found(),
    }
}

async fn artifact_redirect(
    State(world): State<Shared>,
    Path((_o, _r, id)): Path<(String, String, u64)>,
    request: Request,
) -> Response {
    if !lock(&world).artifact_zips.contains_key(&id) {
        return error(StatusCode::GONE, "Artifact has expired");
    }
    redirect(format!("{}/_blobs/artifact/{id}", self_url(&request)))
}

async fn artifact_blob(State(world): State<Shared>, Path(id): Path<u64>) -> Response {
    match lock(&world).artifact_zips.get(&id) {
        Some(bytes) => bytes.clone().into_response(),
        None => not_found(),
    }
}

async fn team_membership(
    State(world): State<Shared>,
    Path((org, team, user)): Path<(String, String, String)>,
) -> Response {
    match lock(&world).teams.get(&(org, team)) {
        Some(members) if members.contains(&user) => {
            Json(json!({"state": "active", "role": "member", "url": "x"})).into_response()
        }
        Some(_) | None => not_found(),
    }
}

async fn git_tree(State(world): State<Shared>, Path((o, r, sha)): Path<(String, String, String)>) -> Response {
    match lock(&world).git_trees.get(&(format!("{o}/{r}"), sha.clone())) {
        Some(entries) => {
            let tree: Vec<Value> = entries
                .iter()
                .map(|(path, blob)| json!({"path": path, "type": "blob", "sha": blob, "mode": "100644"}))
                .collect();
            Json(json!({"sha": sha, "tree": tree, "truncated": false})).into_response()
        }
        None => not_found(),
    }
}

/// `head` compared with `base` along recorded [`World::parents`]: `ahead` with the commits on
/// the first-parent line from `head` back to `base` (each listed with all its parents), or
/// `diverged` when `base` is not on it; the files whose blobs differ between the two trees.
async fn compare(State(world): State<Shared>, Path((o, r, basehead)): Path<(String, String, String)>) -> Response {
    let w = lock(&world);
    let repo = format!("{o}/{r}");
    let Some((base, head)) = basehead.split_once("...") else { return not_found() };
    let tree = |sha: &str| w.git_trees.get(&(repo.clone(), sha.to_owned())).cloned();
    let (Some(base_tree), Some(head_tree)) = (tree(base), tree(head)) else { return not_found() };
    let mut line = Vec::new();
    let mut at = head.to_owned();
    while at != base && line.len() < 1000 {
        let parents = w.parents.get(&(repo.clone(), at.clone())).cloned().unwrap_or_default();
        line.push((at.clone(), parents.clone()));
        match parents.first() {
            Some(first) => at = first.clone(),
            None => break,
        }
    }
    let message = |sha: &str| {
        w.commits
            .values()
            .flatten()
            .find(|c| c["sha"] == sha)
            .and_then(|c| c["commit"]["message"].as_str())
            .unwrap_or("commit")
            .to_owned()
    };
    let reached = at == base;
    let commits: Vec<Value> = line
        .iter()
        .rev()
        .map(|(sha, parents)| {
            json!({"sha": sha, "commit": {"message": message(sha)},
                                     "parents": parents.iter().map(|p| json!({"sha": p})).collect::<Vec<_>>()})
        })
        .collect();
    let blobs = |t: &[(String, String)]| t.iter().cloned().collect::<std::collections::BTreeMap<_, _>>();
    let (before, after) = (blobs(&base_tree), blobs(&head_tree));
    let files: Vec<Value> = before
        .keys()
        .chain(after.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|p| before.get(*p) != after.get(*p))
        .map(|p| json!({"filename": p}))
        .collect();
    let status = match (reached, commits.is_empty()) {
        (true, true) => "identical",
        (true, false) => "ahead",
        (false, _) => "diverged",
    };
    let behind_by = u64::from(!reached);
    Json(json!({"status": status, "ahead_by": commits.len(), "behind_by": behind_by,
                "total_commits": commits.len(), "commits": commits, "files": files}))
    .into_response()
}

async fn get_branch(State(world): State<Shared>, Path((o, r, branch)): Path<(String, String, String)>) -> Response {
    let w = lock(&world);
    let repo = format!("{o}/{r}");
    let set = w.branches.get(&(repo.clone(), branch.clone())).cloned();
    let mut targeting: Vec<(&u64, &Value)> = w
        .pulls
        .iter()
        .filter(|((name, _), pull)| *name == repo && pull["base"]["ref"] == branch.as_str())
        .map(|((_, n), pull)| (n, pull))
        .collect();
    // Open PRs first: a merged PR's recorded base is history, not the branch.
    targeting.sort_by_key(|(n, pull)| (pull["state"] != "open", **n));
    let sha = set.or_else(|| targeting.first().and_then(|(_, p)| p["base"]["sha"].as_str().map(str::to_owned)));
    match sha {
        Some(sha) => Json(json!({"name": branch, "commit": {"sha": sha}})).into_response(),
        None => not_found(),
    }
}

async fn list_jobs(
    State(world): State<Shared>,
    Path((o, r, id)): Path<(String, String, u64)>,
    Query(q): Query<Page>,
) -> Response {
    match lock(&world).jobs.get(&(format!("{o}/{r}"), id)) {
        Some(list) => Json(json!({"total_count": list.len(), "jobs": paginate(list.clone(), &q)})).into_response(),
        None => not_found(),
    }
}

async fn job_log_redirect(
    State(world): State<Shared>,
    Path((_o, _r, id)): Path<(String, String, u64)>,
    request: Request,
) -> Response {
    if !lock(&world).job_logs.contains_key(&id) {
        return error(StatusCode::GONE, "Log has expired");
    }
    redirect(format!("{}/_blobs/job-log/{id}", self_url(&request)))
}

async fn job_log_blob(State(world): State<Shared>, Path(id): Path<u64>) -> Response {
    match lock(&world).job_logs.get(&id) {
        Some(bytes) => bytes.clone().into_response(),
        None => not_found(),
    }
}

/// `POST /repos/{o}/{r}/check-runs`: stored with an id and the creating App's login.
async fn create_check_run(
    State(world): State<Shared>,
    axum::Extension(Caller(login)): axum::Extension<Caller>,
    Path((o, r)): Path<(String, String)>,
    Json(body): Json<Value>,
) -> Response {
    if !check_run_is_valid(&body) || body["name"].as_str().is_none_or(str::is_empty) {
        return error(StatusCode::UNPROCESSABLE_ENTITY, "Validation Failed");
    }
    let mut w = lock(&world);
    let mut stored = body;
    stored["id"] = json!(w.next_id());
    stored["app"] = json!({"slug": login.trim_end_matches("[bot]")});
    w.check_runs.push((format!("{o}/{r}"), stored.clone()));
    (StatusCode::CREATED, Json(stored)).into_response()
}

/// `PATCH /repos/{o}/{r}/check-runs/{id}`: the given fields replace the stored ones.
async fn update_check_run(
    State(world): State<Shared>,
    Path((o, r, id)): Path<(String, String, u64)>,
    Json(body): Json<Value>,
) -> Response {
    if !check_run_is_valid(&body) {
        return error(StatusCode::UNPROCESSABLE_ENTITY, "Validation Failed");
    }
    let repo = format!("{o}/{r}");
    let mut w = lock(&world);
    let Some((_, stored)) = w.check_runs.iter_mut().find(|(r, c)| *r == repo && c["id"] == id) else {
        return not_found();
    };
    for (key, value) in body.as_object().into_iter().flatten() {
        stored[key] = value.clone();
    }
    Json(stored.clone()).into_response()
}

/// GitHub's rules the bot must respect: a known status, a conclusion exactly when completed,
/// output fields within 65535 characters.
fn check_run_is_valid(body: &Value) -> bool {
    let status = body["status"].as_str().unwrap_or("queued");
    let known = ["queued", "in_progress", "completed"].contains(&status);
    let concluded = body["conclusion"].is_string() == (status == "completed");
    let bounded = ["summary", "text", "title"]
        .iter()
        .all(|k| body["output"][k].as_str().is_none_or(|t| t.chars().count() <= 65535));
    known && concluded && bounded
}

#[derive(Deserialize)]
struct RefQuery {
    #[serde(rename = "ref")]
    git_ref: String,
}

/// One file of the tarball at `ref` (its top directory stripped), as the contents API answers
/// for files up to 1 MB: base64 in JSON.
async fn contents(
    State(world): State<Shared>,
    Path((o, r, path)): Path<(String, String, String)>,
    Query(q): Query<RefQuery>,
) -> Response {
    use std::io::Read;
    let Some(gz) = lock(&world).tarballs.get(&(format!("{o}/{r}"), q.git_ref)).cloned() else { return not_found() };
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(gz.as_slice()));
    let Ok(entries) = archive.entries() else { return not_found() };
    for entry in entries.flatten() {
        let mut entry = entry;
        let name = entry.path().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
        if name.split_once('/').map(|(_, rest)| rest) != Some(path.as_str()) {
            continue;
        }
        let mut bytes = Vec::new();
        if entry.read_to_end(&mut bytes).is_err() {
            return error(StatusCode::INTERNAL_SERVER_ERROR, "unreadable tarball entry");
        }
        use base64::Engine as _;
        let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
        return Json(
            json!({"type": "file", "path": path, "size": bytes.len(), "encoding": "base64", "content": encoded}),
        )
        .into_response();
    }
    not_found()
}

/// A zip archive of `files` (path, bytes), as GitHub serves an artifact.
pub fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    use std::io::Write;
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (path, data) in files {
        writer.start_file(*path, zip::write::SimpleFileOptions::default()).unwrap();
        writer.write_all(data).unwrap();
    }
    writer.finish().unwrap().into_inner()
}
