//! The server's durable state (`--state`, one SQLite file): the repositories deliveries came
//! from, which the periodic reconcile visits. The same file holds the event queue
//! ([`super::queue`]), which also deduplicates deliveries.

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
             CREATE TABLE IF NOT EXISTS repos (full_name TEXT PRIMARY KEY, installation_id INTEGER);",
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
}
