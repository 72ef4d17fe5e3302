//! Dry-run mode: with no App credentials, what the bot would post is logged and kept in a
//! SQLite outbox (default `./.sweepgate/outbox.sqlite`). Comments written here are listed back,
//! so sticky comments stay sticky across deliveries; reads of PR data are unavailable and the
//! handlers say so in their output.

use std::path::Path;
use std::sync::Mutex;

use chrono::Utc;
use rusqlite::{params, Connection};
use serde_json::json;

use super::types::*;
use super::{GitHub, GitHubError, RepoRef};
use crate::intake::labels::Permission;
use crate::intake::signoff::SignoffKind;

pub struct OutboxGitHub {
    db: Mutex<Connection>,
    bot_login: String,
}

/// One recorded side effect.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct OutboxEntry {
    pub seq: i64,
    pub at: String,
    pub action: String,
    pub repo: String,
    pub target: String,
    pub payload: serde_json::Value,
}

/// Runs blocking SQLite work without stalling the async runtime's other tasks (webhook
/// acknowledgements) on a multi-threaded runtime.
pub(crate) fn blocking<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

fn db_err(err: rusqlite::Error) -> GitHubError {
    GitHubError::Setup(format!("outbox database: {err}"))
}

impl OutboxGitHub {
    /// Opens (creating when needed) the outbox at `path`; `":memory:"` keeps it in memory.
    pub fn open(path: &Path, bot_login: &str) -> Result<OutboxGitHub, GitHubError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| GitHubError::Setup(format!("creating outbox folder {}: {e}", dir.display())))?;
        }
        let db = Connection::open(path).map_err(db_err)?;
        db.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;
             CREATE TABLE IF NOT EXISTS comments (
                 id INTEGER PRIMARY KEY AUTOINCREMENT, repo TEXT NOT NULL, issue INTEGER NOT NULL,
                 body TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS outbox (
                 seq INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, action TEXT NOT NULL,
                 repo TEXT NOT NULL, target TEXT NOT NULL, payload TEXT NOT NULL);",
        )
        .map_err(db_err)?;
        Ok(OutboxGitHub { db: Mutex::new(db), bot_login: bot_login.to_string() })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.db.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn record(
        &self,
        action: &str,
        repo: &RepoRef,
        target: &str,
        payload: serde_json::Value,
    ) -> Result<(), GitHubError> {
        tracing::info!(action, repo = %repo, target, payload = %payload, "dry-run: would call GitHub");
        blocking(|| {
            self.conn()
                .execute(
                    "INSERT INTO outbox (at, action, repo, target, payload) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![Utc::now().to_rfc3339(), action, repo.to_string(), target, payload.to_string()],
                )
                .map(drop)
                .map_err(db_err)
        })
    }

    /// Everything recorded so far, oldest first.
    pub fn entries(&self) -> Result<Vec<OutboxEntry>, GitHubError> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare("SELECT seq, at, action, repo, target, payload FROM outbox ORDER BY seq").map_err(db_err)?;
        let rows = stmt
            .query_map([], |row| {
                let payload: String = row.get(5)?;
                Ok(OutboxEntry {
                    seq: row.get(0)?,
                    at: row.get(1)?,
                    action: row.get(2)?,
                    repo: row.get(3)?,
                    target: row.get(4)?,
                    payload: serde_json::from_str(&payload).unwrap_or(serde_json::Value::String(payload)),
                })
            })
            .map_err(db_err)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db_err)
    }

    fn comments_of(&self, repo: &RepoRef, issue: u64) -> Result<Vec<Comment>, GitHubError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare("SELECT id, body, created_at, updated_at FROM comments WHERE repo = ?1 AND issue = ?2 ORDER BY id")
            .map_err(db_err)?;
        let rows =
            stmt.query_map(params![repo.to_string(), issue as i64], |row| self.comment_row(row)).map_err(db_err)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db_err)
    }

    fn comment_by_id(&self, conn: &Connection, id: i64) -> Result<Comment, GitHubError> {
        conn.query_row("SELECT id, body, created_at, updated_at FROM comments WHERE id = ?1", [id], |row| {
            self.comment_row(row)
        })
        .map_err(db_err)
    }

    fn insert_comment(&self, repo: &RepoRef, issue: u64, body: &str) -> Result<Comment, GitHubError> {
        let conn = self.conn();
        conn.execute(
            "INSERT INTO comments (repo, issue, body, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)",
            params![repo.to_string(), issue as i64, body, Utc::now().to_rfc3339()],
        )
        .map_err(db_err)?;
        self.comment_by_id(&conn, conn.last_insert_rowid())
    }

    fn edit_comment(&self, comment_id: u64, body: &str) -> Result<Comment, GitHubError> {
        let conn = self.conn();
        conn.execute(
            "UPDATE comments SET body = ?1, updated_at = ?2 WHERE id = ?3",
            params![body, Utc::now().to_rfc3339(), comment_id as i64],
        )
        .map_err(db_err)?;
        self.comment_by_id(&conn, comment_id as i64)
    }

    fn comment_row(&self, row: &rusqlite::Row<'_>) -> rusqlite::Result<Comment> {
        let parse = |text: String| {
            chrono::DateTime::parse_from_rfc3339(&text).map(|t| t.with_timezone(&Utc)).unwrap_or_else(|_| Utc::now())
        };
        Ok(Comment {
            id: row.get::<_, i64>(0)? as u64,
            body: row.get(1)?,
            user: Some(User { login: self.bot_login.clone(), kind: "Bot".into() }),
            author_association: "NONE".into(),
            created_at: parse(row.get(2)?),
            updated_at: parse(row.get(3)?),
            html_url: String::new(),
        })
    }
}

impl GitHub for OutboxGitHub {
    async fn list_issue_comments(&self, repo: &RepoRef, issue: u64) -> Result<Vec<Comment>, GitHubError> {
        blocking(|| self.comments_of(repo, issue))
    }

    async fn create_issue_comment(&self, repo: &RepoRef, issue: u64, body: &str) -> Result<Comment, GitHubError> {
        self.record("create_comment", repo, &format!("issue {issue}"), json!({ "body": body }))?;
        blocking(|| self.insert_comment(repo, issue, body))
    }

    async fn update_issue_comment(&self, repo: &RepoRef, comment_id: u64, body: &str) -> Result<Comment, GitHubError> {
        self.record("update_comment", repo, &format!("comment {comment_id}"), json!({ "body": body }))?;
        blocking(|| self.edit_comment(comment_id, body))
    }

    async fn add_reaction(&self, repo: &RepoRef, comment_id: u64, reaction: Reaction) -> Result<(), GitHubError> {
        self.record("add_reaction", repo, &format!("comment {comment_id}"), json!({ "content": reaction }))
    }

    async fn list_reactions(&self, _: &RepoRef, _: u64) -> Result<Vec<ReactionRecord>, GitHubError> {
        Ok(Vec::new())
    }

    async fn delete_reaction(&self, repo: &RepoRef, comment_id: u64, reaction_id: u64) -> Result<(), GitHubError> {
        self.record("delete_reaction", repo, &format!("comment {comment_id}"), json!({ "reaction": reaction_id }))
    }

    async fn get_pull(&self, _: &RepoRef, _: u64) -> Result<PullRequest, GitHubError> {
        Err(GitHubError::DryRun("reading the pull request"))
    }

    async fn list_open_pulls(&self, _: &RepoRef, _: usize) -> Result<Vec<PullRequest>, GitHubError> {
        Err(GitHubError::DryRun("listing pull requests"))
    }

    async fn list_pull_commits(&self, _: &RepoRef, _: u64) -> Result<Vec<PullCommit>, GitHubError> {
        Err(GitHubError::DryRun("reading the PR's commits"))
    }

    async fn list_pull_files(&self, _: &RepoRef, _: u64) -> Result<Vec<PullFile>, GitHubError> {
        Err(GitHubError::DryRun("reading the PR's files"))
    }

    async fn create_status(&self, repo: &RepoRef, sha: &str, status: &StatusInput) -> Result<(), GitHubError> {
        self.record("create_status", repo, sha, serde_json::to_value(status).unwrap_or_default())
    }

    async fn list_commit_pulls(&self, _: &RepoRef, _: &str) -> Result<Vec<PullRequest>, GitHubError> {
        Err(GitHubError::DryRun("listing a commit's pull requests"))
    }

    async fn list_commit_statuses(&self, _: &RepoRef, _: &str) -> Result<Vec<CommitStatus>, GitHubError> {
        Err(GitHubError::DryRun("reading commit statuses"))
    }

    async fn list_check_runs(&self, _: &RepoRef, _: &str) -> Result<Vec<CheckRun>, GitHubError> {
        Err(GitHubError::DryRun("reading check runs"))
    }

    async fn get_workflow_run(&self, _: &RepoRef, _: u64) -> Result<Option<WorkflowRun>, GitHubError> {
        Err(GitHubError::DryRun("reading workflow runs"))
    }

    async fn list_workflow_runs(&self, _: &RepoRef, _: &str, _: &RunQuery) -> Result<Vec<WorkflowRun>, GitHubError> {
        Err(GitHubError::DryRun("reading workflow runs"))
    }

    async fn list_run_artifacts(&self, _: &RepoRef, _: u64) -> Result<Vec<Artifact>, GitHubError> {
        Err(GitHubError::DryRun("reading artifacts"))
    }

    async fn collaborator_permission(&self, _: &RepoRef, _: &str) -> Result<Permission, GitHubError> {
        Err(GitHubError::DryRun("reading collaborator permissions"))
    }

    async fn get_signoff_resource(
        &self,
        _: &RepoRef,
        _: u64,
        _: SignoffKind,
        _: u64,
    ) -> Result<SignoffResource, GitHubError> {
        Err(GitHubError::DryRun("reading the sign-off"))
    }

    async fn collaborator_permission_detail(
        &self,
        _: &RepoRef,
        _: &str,
    ) -> Result<CollaboratorPermission, GitHubError> {
        Err(GitHubError::DryRun("reading collaborator permissions"))
    }

    async fn team_membership(&self, _: &str, _: &str, _: &str) -> Result<bool, GitHubError> {
        Err(GitHubError::DryRun("reading team membership"))
    }

    async fn download_tarball(&self, _: &RepoRef, _: &str, _: u64) -> Result<Vec<u8>, GitHubError> {
        Err(GitHubError::DryRun("downloading repository contents"))
    }

    async fn download_artifact(&self, _: &RepoRef, _: u64, _: u64) -> Result<Vec<u8>, GitHubError> {
        Err(GitHubError::DryRun("downloading artifacts"))
    }

    async fn get_branch_sha(&self, _: &RepoRef, _: &str) -> Result<String, GitHubError> {
        Err(GitHubError::DryRun("resolving a branch"))
    }

    async fn list_branch_activity(&self, _: &RepoRef, _: &str) -> Result<Vec<BranchActivity>, GitHubError> {
        Err(GitHubError::DryRun("reading a branch's activity"))
    }

    async fn get_tree(&self, _: &RepoRef, _: &str) -> Result<GitTreeListing, GitHubError> {
        Err(GitHubError::DryRun("listing a git tree"))
    }

    async fn compare_commits(&self, _: &RepoRef, _: &str, _: &str) -> Result<Comparison, GitHubError> {
        Err(GitHubError::DryRun("comparing commits"))
    }

    async fn list_workflow_runs_at(&self, _: &RepoRef, _: &str, _: &str) -> Result<Vec<WorkflowRun>, GitHubError> {
        Err(GitHubError::DryRun("listing workflow runs"))
    }

    async fn list_run_jobs(&self, _: &RepoRef, _: u64) -> Result<Vec<RunJob>, GitHubError> {
        Err(GitHubError::DryRun("listing run jobs"))
    }

    async fn download_job_log(&self, _: &RepoRef, _: u64, _: u64) -> Result<Vec<u8>, GitHubError> {
        Err(GitHubError::DryRun("downloading job logs"))
    }

    /// Recorded; the dry run has no check run, so its id is 0 (updates record against it).
    async fn create_check_run(&self, repo: &RepoRef, input: &CheckRunInput) -> Result<u64, GitHubError> {
        self.record("create_check_run", repo, &input.head_sha, serde_json::to_value(input).unwrap_or_default())?;
        Ok(0)
    }

    async fn update_check_run(
        &self,
        repo: &RepoRef,
        check_run_id: u64,
        input: &CheckRunInput,
    ) -> Result<(), GitHubError> {
        let target = check_run_id.to_string();
        self.record("update_check_run", repo, &target, serde_json::to_value(input).unwrap_or_default())
    }

    async fn get_file_text(&self, _: &RepoRef, _: &str, _: &str, _: u64) -> Result<Option<String>, GitHubError> {
        Err(GitHubError::DryRun("reading repository files"))
    }

    async fn list_signoff_resources(
        &self,
        _: &RepoRef,
        _: u64,
        _: SignoffKind,
    ) -> Result<Vec<SignoffResource>, GitHubError> {
        Err(GitHubError::DryRun("listing the sign-offs"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn comments_are_recorded_and_listed_back() {
        let dir = tempfile::tempdir().unwrap();
        let outbox = OutboxGitHub::open(&dir.path().join("sub/outbox.sqlite"), "sweepgate[bot]").unwrap();
        let repo = RepoRef::parse("o/r").unwrap();
        let c = outbox.create_issue_comment(&repo, 7, "hello").await.unwrap();
        outbox.update_issue_comment(&repo, c.id, "edited").await.unwrap();
        outbox.add_reaction(&repo, 99, Reaction::ThumbsUp).await.unwrap();
        let listed = outbox.list_issue_comments(&repo, 7).await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!((listed[0].body.as_str(), User::login_of(listed[0].user.as_ref())), ("edited", "sweepgate[bot]"));
        assert!(outbox.list_issue_comments(&repo, 8).await.unwrap().is_empty());
        let actions: Vec<String> = outbox.entries().unwrap().into_iter().map(|e| e.action).collect();
        assert_eq!(actions, ["create_comment", "update_comment", "add_reaction"]);
        assert!(matches!(outbox.get_pull(&repo, 7).await, Err(GitHubError::DryRun(_))));
    }
}
