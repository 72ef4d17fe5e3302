//! The server's durable state (`--state`, one SQLite file): the repositories deliveries came
//! from, which the periodic reconcile visits, and the reconcile's backoff per PR watching linked
//! recipe PRs (issue 25 item 4). The same file holds the event queue ([`super::queue`]), which
//! also deduplicates deliveries.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{params, Connection};

use crate::github::outbox::blocking;
use crate::github::RepoRef;

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("state database {path}: {source}")]
    Sqlite {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("creating the folder of the state database {path}: {source}")]
    Folder {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

pub struct StateDb {
    conn: Mutex<Connection>,
    /// The `repos` table in memory: a delivery writes only when its repository is new.
    repos: Mutex<BTreeMap<RepoRef, Option<u64>>>,
    path: String,
}

impl StateDb {
    /// Opens (creating when needed) the state file; `":memory:"` keeps it in memory.
    pub fn open(path: &Path) -> Result<StateDb, StateError> {
        let shown = path.display().to_string();
        let err = |source| StateError::Sqlite { path: shown.clone(), source };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StateError::Folder { path: shown.clone(), source })?;
        }
        let conn = Connection::open(path).map_err(err)?;
        conn.busy_timeout(Duration::from_secs(5)).map_err(err)?;
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;
             CREATE TABLE IF NOT EXISTS repos (full_name TEXT PRIMARY KEY, installation_id INTEGER);
             CREATE TABLE IF NOT EXISTS recipe_watch (repo TEXT NOT NULL, pr INTEGER NOT NULL,
                 next_ms INTEGER NOT NULL, wait_ms INTEGER NOT NULL, PRIMARY KEY (repo, pr));
             CREATE TABLE IF NOT EXISTS judged_heads (repo TEXT NOT NULL, pr INTEGER NOT NULL,
                 record TEXT NOT NULL, at_ms INTEGER NOT NULL, PRIMARY KEY (repo, pr));",
        )
        .map_err(err)?;
        let repos = conn
            .prepare("SELECT full_name, installation_id FROM repos")
            .and_then(|mut stmt| {
                stmt.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, Option<i64>>(1)?)))?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(err)?
            .into_iter()
            // A row that is not a repository name cannot have been written by us: skip it.
            .filter_map(|(name, id)| Some((RepoRef::parse(&name).ok()?, id.map(|id| id as u64))))
            .collect();
        Ok(StateDb { conn: Mutex::new(conn), repos: Mutex::new(repos), path: shown })
    }

    fn err(&self, source: rusqlite::Error) -> StateError {
        StateError::Sqlite { path: self.path.clone(), source }
    }

    /// Records that deliveries come from `repo` (through App installation `installation`).
    pub fn remember_repo(&self, repo: &RepoRef, installation: Option<u64>) -> Result<(), StateError> {
        let mut repos = self.repos.lock().unwrap_or_else(|p| p.into_inner());
        if repos.get(repo) == Some(&installation) {
            return Ok(());
        }
        blocking(|| {
            self.conn.lock().unwrap_or_else(|p| p.into_inner()).execute(
                "INSERT INTO repos (full_name, installation_id) VALUES (?1, ?2)
                 ON CONFLICT (full_name) DO UPDATE SET installation_id = excluded.installation_id",
                params![repo.to_string(), installation.map(|id| id as i64)],
            )
        })
        .map_err(|e| self.err(e))?;
        repos.insert(repo.clone(), installation);
        Ok(())
    }

    /// Every repository deliveries came from, by name, with its installation.
    pub fn known_repos(&self) -> Vec<(RepoRef, Option<u64>)> {
        let repos = self.repos.lock().unwrap_or_else(|p| p.into_inner());
        repos.iter().map(|(repo, id)| (repo.clone(), *id)).collect()
    }
}

/// Most PRs whose recipe watch keeps a backoff (a row is a few dozen bytes). Past it the
/// backoff due soonest is forgotten: that PR is polled at the next pass, as it would be anyway.
pub const MAX_WATCHES: usize = 10_000;

/// A watched PR: its repository's full name and its number.
pub type WatchedPr = (String, u64);

/// One PR's backoff for polling its linked recipe PRs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchWait {
    /// Not polled before this wall-clock instant (ms since the epoch).
    pub next_ms: i64,
    /// The wait that set `next_ms` (the next one doubles it).
    pub wait_ms: u64,
}

impl StateDb {
    /// Every recorded recipe-watch backoff, by repository name and PR number (at most
    /// [`MAX_WATCHES`], the latest first).
    pub fn watches(&self) -> Result<Vec<(WatchedPr, WatchWait)>, StateError> {
        blocking(|| {
            let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
            let mut stmt =
                conn.prepare("SELECT repo, pr, next_ms, wait_ms FROM recipe_watch ORDER BY next_ms DESC LIMIT ?1")?;
            let rows = stmt.query_map([MAX_WATCHES as i64], |row| {
                let key = (row.get::<_, String>(0)?, row.get::<_, i64>(1)?.max(0) as u64);
                Ok((key, WatchWait { next_ms: row.get(2)?, wait_ms: row.get::<_, i64>(3)?.max(0) as u64 }))
            })?;
            rows.collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| self.err(e))
    }

    /// Records the backoff of `repo`'s PR `pr`, keeping at most [`MAX_WATCHES`] rows.
    pub fn put_watch(&self, repo: &str, pr: u64, wait: WatchWait) -> Result<(), StateError> {
        blocking(|| {
            let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
            conn.execute(
                "INSERT INTO recipe_watch (repo, pr, next_ms, wait_ms) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (repo, pr) DO UPDATE SET next_ms = excluded.next_ms, wait_ms = excluded.wait_ms",
                params![repo, pr as i64, wait.next_ms, wait.wait_ms.min(i64::MAX as u64) as i64],
            )?;
            conn.execute(
                "DELETE FROM recipe_watch WHERE rowid IN (SELECT rowid FROM recipe_watch ORDER BY next_ms
                 LIMIT max(0, (SELECT count(*) FROM recipe_watch) - ?1))",
                [MAX_WATCHES as i64],
            )
        })
        .map(drop)
        .map_err(|e| self.err(e))
    }

    /// Forgets the backoff of `repo`'s PR `pr` (its watch ended).
    pub fn drop_watch(&self, repo: &str, pr: u64) -> Result<(), StateError> {
        blocking(|| {
            self.conn
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .execute("DELETE FROM recipe_watch WHERE repo = ?1 AND pr = ?2", params![repo, pr as i64])
        })
        .map(drop)
        .map_err(|e| self.err(e))
    }
}

/// Most PRs whose last judged head is kept (a row holds at most one preflight summary, 64 KB).
/// Past it the PR judged longest ago is forgotten: its next push is handled in full.
pub const MAX_JUDGED: usize = 10_000;

impl StateDb {
    /// The record of what was posted on `repo`'s PR `pr`'s last judged head (JSON), if any.
    pub fn judged(&self, repo: &str, pr: u64) -> Result<Option<String>, StateError> {
        blocking(|| {
            let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
            let mut stmt = conn.prepare("SELECT record FROM judged_heads WHERE repo = ?1 AND pr = ?2")?;
            let mut rows = stmt.query(params![repo, pr as i64])?;
            rows.next()?.map(|row| row.get::<_, String>(0)).transpose()
        })
        .map_err(|e| self.err(e))
    }

    /// Replaces the record of `repo`'s PR `pr`, keeping at most [`MAX_JUDGED`] rows.
    pub fn put_judged(&self, repo: &str, pr: u64, record: &str) -> Result<(), StateError> {
        blocking(|| {
            let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
            conn.execute(
                "INSERT INTO judged_heads (repo, pr, record, at_ms) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (repo, pr) DO UPDATE SET record = excluded.record, at_ms = excluded.at_ms",
                params![repo, pr as i64, record, now_ms()],
            )?;
            conn.execute(
                "DELETE FROM judged_heads WHERE rowid IN (SELECT rowid FROM judged_heads ORDER BY at_ms
                 LIMIT max(0, (SELECT count(*) FROM judged_heads) - ?1))",
                [MAX_JUDGED as i64],
            )
        })
        .map(drop)
        .map_err(|e| self.err(e))
    }
}

/// Wall-clock milliseconds: ids must keep their age across restarts, so no `Instant`.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repositories_survive_reopening_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/state.sqlite");
        let d = StateDb::open(&path).unwrap();
        let repo = RepoRef::parse("o/r").unwrap();
        d.remember_repo(&repo, Some(7)).unwrap();
        d.remember_repo(&repo, Some(8)).unwrap();
        drop(d);
        let d = StateDb::open(&path).unwrap();
        assert_eq!(d.known_repos(), [(repo, Some(8))]);
    }

    #[test]
    fn recipe_watch_backoffs_survive_reopening_the_file_and_stay_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let d = StateDb::open(&path).unwrap();
        let wait = |next_ms| WatchWait { next_ms, wait_ms: 4000 };
        d.put_watch("o/r", 7, wait(10)).unwrap();
        d.put_watch("o/r", 7, wait(20)).unwrap();
        d.put_watch("o/r", 8, wait(30)).unwrap();
        d.drop_watch("o/r", 8).unwrap();
        drop(d);
        let d = StateDb::open(&path).unwrap();
        assert_eq!(d.watches().unwrap(), [(("o/r".to_owned(), 7), wait(20))]);
        for pr in 0..MAX_WATCHES as u64 + 2 {
            d.put_watch("o/many", pr, wait(100 + pr as i64)).unwrap();
        }
        let kept = d.watches().unwrap();
        assert_eq!(kept.len(), MAX_WATCHES, "bounded");
        assert!(!kept.iter().any(|(k, _)| k.0 == "o/r" || k.1 < 2), "the ones due soonest were forgotten");
    }
}
