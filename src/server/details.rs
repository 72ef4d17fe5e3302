//! The details page behind every status and check run (`GET /prs/{owner}/{repo}/{number}`):
//! the label decision and its reasons, the PR's sweeps (re-read from the dispatch ledger on
//! every request, so live while they run), each sign-off's verdict with its rows and SVG
//! frontier charts, its comparison with the published curve (overlay charts and the full table),
//! and the commit each was assessed at.
//!
//! Handlers record what they published into a [`DetailsStore`] (its own SQLite file, WAL);
//! the page renders from it with HTML autoescape and no JavaScript, English and 中文. Only
//! repositories a webhook payload marked `private: false` are served unless the operator set
//! `details_private`; unknown visibility is not public.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use minijinja::{Environment, UndefinedBehavior, Value};
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

use crate::checks::c14_pareto_coverage::FrontierChart;
use crate::checks::{Catalog, Lang, Verdict, VerdictWord};
use crate::github::RepoRef;
use crate::intake::labels::LabelDecision;
use crate::pr::fingerprint::Fingerprint;
use crate::pr::performance::Performance;
use crate::report::performance::{overlays, performance_view};
use crate::report::verdict::message_text;
use crate::sweep::ledger::Ledger;

#[derive(Debug, thiserror::Error)]
pub enum DetailsError {
    #[error("details store {path}: {source}")]
    Sqlite {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("details store {path}: stored {what} is not readable JSON: {source}")]
    Json { path: String, what: &'static str, source: serde_json::Error },
    #[error("details page template: {0}")]
    Template(#[from] minijinja::Error),
    #[error("details store {path}: a writer panicked while holding it")]
    Poisoned { path: String },
}

/// The link a status or check run carries: `{public_url}/prs/{owner}/{repo}/{number}`.
pub fn url(public_url: &str, repo: &RepoRef, pr: u64) -> String {
    format!("{}/prs/{}/{}/{pr}", public_url.trim_end_matches('/'), repo.owner, repo.name)
}

/// One verdict row as the page shows it (text rendered from the catalog when recorded).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct RowView {
    id: u8,
    status: String,
    name_en: String,
    name_zh: String,
    en: String,
    zh: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct ReasonView {
    code: String,
    blocking: bool,
    en: String,
    zh: String,
}

/// The store of what the bot published per PR, and where its page lives.
#[derive(Debug)]
pub struct DetailsStore {
    conn: Mutex<Connection>,
    path: String,
    public_url: String,
    serve_private: bool,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS repo (repo TEXT PRIMARY KEY, private INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS label (repo TEXT NOT NULL, pr INTEGER NOT NULL, head TEXT NOT NULL,
  sweep INTEGER NOT NULL, primary_label TEXT, reasons TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (repo, pr));
CREATE TABLE IF NOT EXISTS verdict (repo TEXT NOT NULL, pr INTEGER NOT NULL, signoff TEXT NOT NULL,
  sha TEXT NOT NULL, word TEXT NOT NULL, rows TEXT NOT NULL, charts TEXT NOT NULL, at TEXT NOT NULL,
  PRIMARY KEY (repo, pr, signoff));
CREATE TABLE IF NOT EXISTS verdict_inputs (repo TEXT NOT NULL, pr INTEGER NOT NULL, signoff TEXT NOT NULL,
  policy_sha TEXT, fingerprint TEXT, PRIMARY KEY (repo, pr, signoff));
CREATE TABLE IF NOT EXISTS performance (repo TEXT NOT NULL, pr INTEGER NOT NULL, signoff TEXT NOT NULL,
  comparison TEXT NOT NULL, PRIMARY KEY (repo, pr, signoff));
CREATE TABLE IF NOT EXISTS sweep (repo TEXT NOT NULL, pr INTEGER NOT NULL, sweep_id TEXT NOT NULL,
  head TEXT NOT NULL, ledger TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (repo, pr, sweep_id));
";

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

impl DetailsStore {
    /// Opens (creating) the store at `path`; `public_url` is where `serve` is reachable.
    pub fn open(path: &Path, public_url: &str, serve_private: bool) -> Result<DetailsStore, DetailsError> {
        let shown = path.display().to_string();
        let sql = |source| DetailsError::Sqlite { path: shown.clone(), source };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| sql(rusqlite::Error::ToSqlConversionFailure(Box::new(e))))?;
        }
        let conn = Connection::open(path).map_err(sql)?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(sql)?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(sql)?;
        conn.execute_batch(SCHEMA).map_err(sql)?;
        Ok(DetailsStore { conn: Mutex::new(conn), path: shown, public_url: public_url.to_string(), serve_private })
    }

    /// The page of `repo#pr`.
    pub fn url(&self, repo: &RepoRef, pr: u64) -> String {
        url(&self.public_url, repo, pr)
    }

    fn write(&self, what: &str, f: impl FnOnce(&Connection) -> rusqlite::Result<usize>) {
        // The status is already published: a page that cannot be recorded never fails the event.
        let result = match self.conn.lock() {
            Ok(conn) => f(&conn).map(drop).map_err(|source| DetailsError::Sqlite { path: self.path.clone(), source }),
            Err(_) => Err(DetailsError::Poisoned { path: self.path.clone() }),
        };
        if let Err(err) = result {
            tracing::error!(what, "details page not recorded: {err}");
        }
    }

    /// Remembers the visibility the latest webhook payload gave `repo` (`repository.private`).
    pub fn note_visibility(&self, repo: &RepoRef, payload: &[u8]) {
        #[derive(Deserialize)]
        struct Payload {
            repository: Option<Repository>,
        }
        #[derive(Deserialize)]
        struct Repository {
            private: Option<bool>,
        }
        let private = serde_json::from_slice::<Payload>(payload).ok().and_then(|p| p.repository?.private);
        // A payload that does not say is treated as private (fail closed).
        let private = private.unwrap_or(true);
        self.write("visibility", |c| {
            c.execute(
                "INSERT INTO repo (repo, private) VALUES (?1, ?2) ON CONFLICT (repo) DO UPDATE SET private = ?2",
                params![repo.to_string(), private],
            )
        });
    }

    pub fn record_label(&self, repo: &RepoRef, pr: u64, head: &str, decision: &LabelDecision) {
        let reasons: Vec<ReasonView> = decision
            .reasons
            .iter()
            .map(|r| ReasonView { code: r.code.into(), blocking: r.blocking, en: r.en.clone(), zh: r.zh.clone() })
            .collect();
        let reasons = serde_json::to_string(&reasons).unwrap_or_else(|_| "[]".into());
        let primary = decision.primary.map(|p| p.name());
        self.write("label decision", |c| {
            c.execute(
                "INSERT OR REPLACE INTO label (repo, pr, head, sweep, primary_label, reasons, at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![repo.to_string(), pr as i64, head, decision.sweep, primary, reasons, now()],
            )
        });
    }

    /// Records the verdict of sign-off `signoff` assessed at `sha`.
    pub fn record_verdict(&self, repo: &RepoRef, pr: u64, signoff: &str, sha: &str, verdict: &Verdict) {
        let rows: Vec<RowView> = verdict
            .results
            .iter()
            .map(|r| {
                let spec = Catalog::embedded().check(r.id);
                let text = |lang| message_text(r, lang).unwrap_or_else(|e| format!("(message not rendered: {e})"));
                RowView {
                    id: r.id,
                    status: r.outcome.status.word().to_string(),
                    name_en: spec.name.en.clone(),
                    name_zh: spec.name.zh.clone(),
                    en: text(Lang::En),
                    zh: text(Lang::Zh),
                }
            })
            .collect();
        let word = match verdict.word {
            VerdictWord::Approved => "APPROVED",
            VerdictWord::Rejected => "REJECTED",
        };
        let rows = serde_json::to_string(&rows).unwrap_or_else(|_| "[]".into());
        let charts = serde_json::to_string(&FrontierChart::of_verdict(verdict)).unwrap_or_else(|_| "[]".into());
        self.write("verdict", |c| {
            c.execute(
                "INSERT OR REPLACE INTO verdict (repo, pr, signoff, sha, word, rows, charts, at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![repo.to_string(), pr as i64, signoff, sha, word, rows, charts, now()],
            )
        });
    }

    /// Records the comparison with the published curve of sign-off `signoff` (issue 26).
    /// Records what a sign-off's verdict covers (issue 25): where policy was read, and the
    /// fingerprint of the change (its inputs and the commits it covers).
    pub fn record_inputs(
        &self,
        repo: &RepoRef,
        pr: u64,
        signoff: &str,
        policy_sha: Option<&str>,
        fingerprint: Option<&Fingerprint>,
    ) {
        let fingerprint = fingerprint.and_then(|f| serde_json::to_string(f).ok());
        self.write("verdict inputs", |c| {
            c.execute(
                "INSERT OR REPLACE INTO verdict_inputs (repo, pr, signoff, policy_sha, fingerprint) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![repo.to_string(), pr as i64, signoff, policy_sha, fingerprint],
            )
        });
    }

    /// The recorded inputs of a sign-off's verdict as the page shows them.
    fn inputs_of(&self, conn: &Connection, repo: &str, pr: u64, signoff: &str) -> Result<(Value, Value), DetailsError> {
        let found: Option<(Option<String>, Option<String>)> = conn
            .query_row(
                "SELECT policy_sha, fingerprint FROM verdict_inputs WHERE repo = ?1 AND pr = ?2 AND signoff = ?3",
                params![repo, pr as i64, signoff],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        let (policy, fingerprint) = found.unwrap_or_default();
        let fingerprint = match fingerprint {
            Some(text) => {
                let f: Fingerprint = self.json("fingerprint", &text)?;
                let files: Vec<Value> = f
                    .files
                    .iter()
                    .map(|(path, state)| minijinja::context! { path, status => state.status.clone(), blob => state.blob.clone().unwrap_or_else(|| "-".into()) })
                    .collect();
                let configs: Vec<Value> = f.configs.iter().map(|(key, sha)| minijinja::context! { key, sha }).collect();
                minijinja::context! { digest => f.digest(), signed => f.signed, head => f.head, files, configs }
            }
            None => Value::from(()),
        };
        Ok((Value::from(policy), fingerprint))
    }

    pub fn record_performance(&self, repo: &RepoRef, pr: u64, signoff: &str, performance: &Performance) {
        let comparison = serde_json::to_string(performance).unwrap_or_else(|_| "{}".into());
        self.write("performance", |c| {
            c.execute(
                "INSERT OR REPLACE INTO performance (repo, pr, signoff, comparison) VALUES (?1, ?2, ?3, ?4)",
                params![repo.to_string(), pr as i64, signoff, comparison],
            )
        });
    }

    /// The recorded comparison of a sign-off as the page shows it: the full table and the
    /// overlay charts (our SVG writer escapes every label it prints).
    fn performance_of(&self, conn: &Connection, repo: &str, pr: u64, signoff: &str) -> Result<Value, DetailsError> {
        let found: Option<String> = conn
            .query_row(
                "SELECT comparison FROM performance WHERE repo = ?1 AND pr = ?2 AND signoff = ?3",
                params![repo, pr as i64, signoff],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        let Some(text) = found else { return Ok(Value::from(())) };
        let performance: Performance = self.json("performance comparison", &text)?;
        let overlays: Vec<Value> = overlays(&performance)
            .into_iter()
            .map(|o| minijinja::context! { config => o.config, scenario => o.scenario, svg => Value::from_safe_string(o.svg) })
            .collect();
        Ok(minijinja::context! {
            table => Value::from(minijinja::value::Serde(&performance_view(&performance, false))),
            overlays,
        })
    }

    /// Records that sweep `sweep_id` of `repo#pr` at `head` is tracked in the ledger at `ledger`.
    pub fn record_sweep(&self, repo: &RepoRef, pr: u64, head: &str, ledger: &Path, sweep_id: &str) {
        let ledger = ledger.display().to_string();
        self.write("sweep", |c| {
            c.execute(
                "INSERT OR REPLACE INTO sweep (repo, pr, sweep_id, head, ledger, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![repo.to_string(), pr as i64, sweep_id, head, ledger, now()],
            )
        });
    }

    fn sql(&self, source: rusqlite::Error) -> DetailsError {
        DetailsError::Sqlite { path: self.path.clone(), source }
    }

    fn json<T: serde::de::DeserializeOwned>(&self, what: &'static str, text: &str) -> Result<T, DetailsError> {
        serde_json::from_str(text).map_err(|source| DetailsError::Json { path: self.path.clone(), what, source })
    }

    /// The page of `repo#pr`, or `None` when it is not served (nothing recorded, or a repository
    /// not known to be public while private ones are not served).
    pub fn render(&self, repo: &RepoRef, pr: u64) -> Result<Option<String>, DetailsError> {
        let conn = self.conn.lock().map_err(|_| DetailsError::Poisoned { path: self.path.clone() })?;
        let name = repo.to_string();
        let private: Option<bool> = conn
            .query_row("SELECT private FROM repo WHERE repo = ?1", [&name], |r| r.get(0))
            .optional()
            .map_err(|e| self.sql(e))?;
        if !self.serve_private && private != Some(false) {
            return Ok(None);
        }
        let label = conn
            .query_row(
                "SELECT head, sweep, primary_label, reasons, at FROM label WHERE repo = ?1 AND pr = ?2",
                params![name, pr as i64],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, bool>(1)?,
                        r.get::<_, Option<String>>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        let label = match label {
            Some((head, sweep, primary, reasons, at)) => {
                let reasons: Vec<ReasonView> = self.json("label reasons", &reasons)?;
                Some(
                    minijinja::context! { head, sweep, primary, reasons => Value::from(minijinja::value::Serde(&reasons)), at },
                )
            }
            None => None,
        };
        let mut verdicts = Vec::new();
        let mut stmt = conn
            .prepare("SELECT signoff, sha, word, rows, charts, at FROM verdict WHERE repo = ?1 AND pr = ?2 ORDER BY at, signoff")
            .map_err(|e| self.sql(e))?;
        let found = stmt
            .query_map(params![name, pr as i64], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                ))
            })
            .and_then(Iterator::collect::<Result<Vec<_>, _>>)
            .map_err(|e| self.sql(e))?;
        for (signoff, sha, word, rows, charts, at) in found {
            let rows: Vec<RowView> = self.json("verdict rows", &rows)?;
            let charts: Vec<FrontierChart> = self.json("frontier charts", &charts)?;
            // Our own SVG writer escapes every label it prints (results::chart).
            let charts: Vec<Value> = charts
                .iter()
                .map(|c| minijinja::context! { curve => c.curve.clone(), svg => Value::from_safe_string(c.svg()) })
                .collect();
            let performance = self.performance_of(&conn, &name, pr, &signoff)?;
            let (policy_sha, fingerprint) = self.inputs_of(&conn, &name, pr, &signoff)?;
            verdicts.push(minijinja::context! { signoff, sha, word, rows => Value::from(minijinja::value::Serde(&rows)), charts, performance, policy_sha, fingerprint, at });
        }
        drop(stmt);
        let mut stmt = conn
            .prepare("SELECT sweep_id, head, ledger, at FROM sweep WHERE repo = ?1 AND pr = ?2 ORDER BY at, sweep_id")
            .map_err(|e| self.sql(e))?;
        let sweeps = stmt
            .query_map(params![name, pr as i64], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?))
            })
            .and_then(Iterator::collect::<Result<Vec<_>, _>>)
            .map_err(|e| self.sql(e))?;
        drop(stmt);
        drop(conn);
        if label.is_none() && verdicts.is_empty() && sweeps.is_empty() {
            return Ok(None);
        }
        let sweeps: Vec<Value> =
            sweeps.into_iter().map(|(id, head, ledger, at)| sweep_view(id, head, ledger, at)).collect();
        let page = environment()
            .get_template("details.html.j2")?
            .render(minijinja::context! { repo => name, pr, label, sweeps, verdicts })?;
        Ok(Some(page))
    }
}

/// One sweep with its points read now from its ledger; a ledger that cannot be read is shown
/// as such (never as an empty sweep).
fn sweep_view(id: String, head: String, ledger: String, at: String) -> Value {
    let path = PathBuf::from(&ledger);
    let points = if path.is_file() {
        Ledger::open(&path).and_then(|l| l.points(&id)).map_err(|e| e.to_string())
    } else {
        Err(format!("ledger {ledger} does not exist"))
    };
    // The path and the error are the operators' (the log); the page says the ledger is unreadable.
    if let Err(e) = &points {
        tracing::warn!(sweep = %id, error = %e, "the details page cannot read a sweep's ledger");
    }
    let (points, error) = match points {
        Ok(points) => (
            points
                .iter()
                .map(|p| {
                    minijinja::context! {
                        point => p.point_id.clone(), family => p.family.clone(), canary => p.is_canary,
                        state => p.state.as_str(), state_zh => p.state.name_zh(), job => p.job_id.as_ref().map(|j| j.to_string()),
                        exit_code => p.exit_code, reason => p.reason.clone().or(p.cancel_reason.clone()),
                        refusal => Value::from(minijinja::value::Serde(crate::sweep::check_run::refusal(p))),
                    }
                })
                .collect::<Vec<_>>(),
            None,
        ),
        Err(_) => (Vec::new(), Some(true)),
    };
    minijinja::context! { id, head, at, points, error }
}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

fn environment() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        // Every value is HTML-escaped: reasons and rows quote PR-sourced text.
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
        // Bidi controls would reorder what a reader sees; they are shown as their code point.
        env.set_formatter(|out, state, value| match value.as_str() {
            Some(text) if !value.is_safe() && text.chars().any(is_bidi_control) => {
                let shown: String = text
                    .chars()
                    .map(|c| if is_bidi_control(c) { format!("[U+{:04X}]", c as u32) } else { c.to_string() })
                    .collect();
                minijinja::escape_formatter(out, state, &Value::from(shown))
            }
            _ => minijinja::escape_formatter(out, state, value),
        });
        if let Err(err) = env.add_template("details.html.j2", include_str!("../../templates/details.html.j2")) {
            tracing::error!("template details.html.j2 does not compile: {err:#}");
        }
        env
    })
}

/// `GET /prs/{owner}/{repo}/{number}`, to merge into the server's router.
pub fn router<S: Clone + Send + Sync + 'static>(store: Arc<DetailsStore>) -> Router<S> {
    Router::new().route("/prs/{owner}/{repo}/{number}", get(page)).with_state(store)
}

async fn page(
    State(store): State<Arc<DetailsStore>>,
    UrlPath((owner, name, number)): UrlPath<(String, String, u64)>,
) -> Response {
    let not_found = || (StatusCode::NOT_FOUND, "no details page for this pull request\n").into_response();
    let Ok(repo) = RepoRef::parse(&format!("{owner}/{name}")) else { return not_found() };
    // SQLite and the ledger reads block.
    match tokio::task::spawn_blocking(move || store.render(&repo, number)).await {
        Ok(Ok(Some(html))) => Html(html).into_response(),
        Ok(Ok(None)) => not_found(),
        Ok(Err(err)) => {
            tracing::error!("details page: {err}");
            (StatusCode::INTERNAL_SERVER_ERROR, "the details page could not be rendered; see the server log\n")
                .into_response()
        }
        Err(err) => {
            tracing::error!("details page task: {err}");
            (StatusCode::INTERNAL_SERVER_ERROR, "the details page could not be rendered; see the server log\n")
                .into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intake::labels::Reason;
    use crate::sweep::ledger::{PointSeed, SweepSeed};
    use std::collections::BTreeMap;

    fn repo() -> RepoRef {
        RepoRef::parse("acme/bench").unwrap()
    }

    fn store(dir: &Path, serve_private: bool) -> DetailsStore {
        DetailsStore::open(&dir.join("d.sqlite"), "https://gate.example/", serve_private).unwrap()
    }

    fn decision(en: &str) -> LabelDecision {
        let mut d = crate::intake::labels::decide::<&str>(&[], &crate::intake::labels::PrFacts::default());
        d.block(Reason { code: "test-reason", en: en.into(), zh: format!("中文 {en}"), blocking: true });
        d
    }

    #[test]
    fn url_names_the_pull_request() {
        assert_eq!(url("https://gate.example/", &repo(), 7), "https://gate.example/prs/acme/bench/7");
    }

    #[test]
    fn pr_sourced_text_is_escaped() {
        let dir = tempfile::tempdir().unwrap();
        let store = store(dir.path(), false);
        store.note_visibility(&repo(), br#"{"repository":{"private":false}}"#);
        store.record_label(&repo(), 7, "abc123", &decision("<script>alert(1)</script> @octocat \u{202E}txt.exe"));
        let html = store.render(&repo(), 7).unwrap().unwrap();
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"), "{html}");
        assert!(!html.contains('\u{202E}') && html.contains("[U+202E]txt.exe"), "{html}");
        assert!(html.contains("@octocat") && !html.contains("<a "), "a mention stays plain text");
        assert!(html.contains("no sweep") && html.contains("<code>abc123</code>"));
    }

    /// Issue 25: the page shows where policy was read and the fingerprint's inputs (changed
    /// paths with status and blob, affected configs) and the commits it covers, escaped.
    #[test]
    fn a_verdict_shows_its_policy_commit_and_fingerprint() {
        let dir = tempfile::tempdir().unwrap();
        let store = store(dir.path(), false);
        store.note_visibility(&repo(), br#"{"repository":{"private":false}}"#);
        let verdict = crate::checks::verify(&crate::checks::tests_support::evidence());
        store.record_verdict(&repo(), 7, "issuecomment-1", &"b".repeat(40), &verdict);
        let blobs = BTreeMap::from([("configs/<x>.yaml".to_owned(), "f".repeat(40))]);
        let files = crate::pr::fingerprint::file_states([("configs/<x>.yaml", None, "modified")], &blobs);
        let configs = BTreeMap::from([("dsr1-fp4".to_owned(), "e".repeat(64))]);
        let fp = Fingerprint { signed: "a".repeat(40), head: "b".repeat(40), files, configs };
        store.record_inputs(&repo(), 7, "issuecomment-1", Some(&"1".repeat(40)), Some(&fp));
        let html = store.render(&repo(), 7).unwrap().unwrap();
        assert!(html.contains(&format!("<code>{}</code>", "1".repeat(40))), "policy commit: {html}");
        assert!(
            html.contains(&format!("Fingerprint <span class=\"zh\">指纹</span> <code>{}</code>", fp.digest())),
            "{html}"
        );
        assert!(html.contains(&format!("signed at <span class=\"zh\">签核于</span> <code>{}</code>", "a".repeat(40))));
        assert!(html.contains("<code>configs&#x2f;&lt;x&gt;.yaml</code>") && !html.contains("<x>"), "{html}");
        assert!(html.contains(&format!("<code>{}</code>", "f".repeat(40))) && html.contains("<code>dsr1-fp4</code>"));
    }

    #[test]
    fn only_public_repositories_are_served_unless_configured() {
        let dir = tempfile::tempdir().unwrap();
        let public_only = store(dir.path(), false);
        public_only.record_label(&repo(), 7, "abc", &decision("x"));
        assert!(public_only.render(&repo(), 7).unwrap().is_none(), "unknown visibility is not public");
        public_only.note_visibility(&repo(), br#"{"repository":{"private":true}}"#);
        assert!(public_only.render(&repo(), 7).unwrap().is_none());
        public_only.note_visibility(&repo(), br#"{"repository":{}}"#);
        assert!(public_only.render(&repo(), 7).unwrap().is_none(), "a payload that does not say is private");
        let private_ok = DetailsStore::open(&dir.path().join("d.sqlite"), "https://g", true).unwrap();
        assert!(private_ok.render(&repo(), 7).unwrap().is_some());
        public_only.note_visibility(&repo(), br#"{"repository":{"private":false}}"#);
        assert!(public_only.render(&repo(), 7).unwrap().is_some());
        assert!(public_only.render(&repo(), 8).unwrap().is_none(), "nothing recorded for #8");
    }

    #[test]
    fn sweeps_are_read_live_from_the_ledger_and_an_unreadable_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let store = store(dir.path(), true);
        let path = dir.path().join("ledger.sqlite");
        let mut ledger = Ledger::open(&path).unwrap();
        let point = |id: &'static str| PointSeed {
            point_id: id,
            family: "dsr1-fp8",
            is_canary: false,
            job_name: format!("sg-{id}"),
        };
        let seed = SweepSeed {
            id: "sw1",
            repo: "acme/bench",
            pr: 7,
            plan_sha256: "00",
            job_prefix: "sg-",
            points: vec![point("p-a"), point("p-b")],
        };
        ledger.register_sweep(&seed).unwrap();
        store.record_sweep(&repo(), 7, "abc", &path, "sw1");
        let html = store.render(&repo(), 7).unwrap().unwrap();
        assert!(html.contains("<code>p-a</code>") && html.contains("<code>p-b</code>"), "{html}");
        assert!(html.contains(r#"<td>planned <span class="zh">计划中</span></td>"#), "{html}");
        ledger.mark_submitting("sw1", "p-a").unwrap();
        let html = store.render(&repo(), 7).unwrap().unwrap();
        assert!(
            html.contains(r#"<td>submitting <span class="zh">提交中</span></td>"#),
            "the page re-reads the ledger: {html}"
        );
        // Issue 24: the page showed raw sbatch stderr (account, service user, host) and paths.
        let stderr = "sbatch: error: Batch job submission failed: Invalid account or account/partition \
                      combination specified (user svc-bench, host login-07.corp.internal, account proj-x)";
        let outcome = crate::sweep::ledger::Outcome {
            reason: Some(format!("sbatch refused the job: {stderr}")),
            provenance: Some(serde_json::json!({"refusal": "invalid_account"})),
            ..Default::default()
        };
        ledger.finish("sw1", "p-a", crate::sweep::ledger::PointState::Failed, &outcome).unwrap();
        let html = store.render(&repo(), 7).unwrap().unwrap();
        assert!(html.contains("the scheduler refused the job: invalid account"), "{html}");
        assert!(html.contains("调度器拒绝了该作业：账户无效"), "{html}");
        assert!(!html.contains("svc-bench") && !html.contains("login-07") && !html.contains("proj-x"), "{html}");
        assert_eq!(
            ledger.points("sw1").unwrap()[0].reason.as_deref(),
            outcome.reason.as_deref(),
            "the ledger keeps it"
        );
        store.record_sweep(&repo(), 7, "abc", &dir.path().join("gone.sqlite"), "sw2");
        let html = store.render(&repo(), 7).unwrap().unwrap();
        assert!(html.contains("could not be read") && !html.contains("gone.sqlite"), "no server path: {html}");
    }
}
