//! The server's durable state (`--state`, one SQLite file): the webhook delivery ids already
//! accepted, so that GitHub's redelivery of an event is not processed again after a restart
//! (bounded in age (TTL) and in count (capacity, pruned in batches)); and the repositories
//! deliveries came from, which the periodic reconcile visits.

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
    db: Mutex<Db>,
    /// The `repos` table in memory: a delivery writes only when its repository is new.
    repos: Mutex<BTreeMap<RepoRef, Option<u64>>>,
    path: String,
    capacity: usize,
    ttl_ms: i64,
    /// Inserts between two prunes: the table may exceed `capacity` by this many rows.
    prune_every: usize,
}

struct Db {
    conn: Connection,
    inserts_since_prune: usize,
}

impl StateDb {
    /// Opens (creating when needed) the state file; `":memory:"` keeps it in memory.
    pub fn open(path: &Path, capacity: usize, ttl: Duration) -> Result<StateDb, StateError> {
        let shown = path.display().to_string();
        let err = |source| StateError::Sqlite { path: shown.clone(), source };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StateError::Folder { path: shown.clone(), source })?;
        }
        let conn = Connection::open(path).map_err(err)?;
        conn.busy_timeout(Duration::from_secs(5)).map_err(err)?;
        // WAL + NORMAL: an accepted id costs one small write and no fsync; losing the last few
        // ids in a power cut only means a redelivery is processed again (handlers are idempotent).
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;
             CREATE TABLE IF NOT EXISTS deliveries (id TEXT PRIMARY KEY, seen_ms INTEGER NOT NULL);
             CREATE INDEX IF NOT EXISTS deliveries_by_age ON deliveries (seen_ms);
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
        let capacity = capacity.max(1);
        let state = StateDb {
            db: Mutex::new(Db { conn, inserts_since_prune: 0 }),
            repos: Mutex::new(repos),
            path: shown,
            capacity,
            ttl_ms: i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX),
            prune_every: (capacity / 16).clamp(1, 1024),
        };
        state.prune(now_ms())?;
        Ok(state)
    }

    fn err(&self, source: rusqlite::Error) -> StateError {
        StateError::Sqlite { path: self.path.clone(), source }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Db> {
        self.db.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// True when delivery `id` was not accepted within the TTL (and is now remembered as
    /// accepted at `now_ms`): one indexed upsert.
    pub fn accept_delivery(&self, id: &str, now_ms: i64) -> Result<bool, StateError> {
        let due = blocking(|| {
            let mut db = self.lock();
            let changed = db
                .conn
                .prepare_cached(
                    "INSERT INTO deliveries (id, seen_ms) VALUES (?1, ?2)
                     ON CONFLICT (id) DO UPDATE SET seen_ms = excluded.seen_ms WHERE seen_ms <= ?3",
                )
                .and_then(|mut stmt| stmt.execute(params![id, now_ms, now_ms.saturating_sub(self.ttl_ms)]))
                .map_err(|e| self.err(e))?;
            db.inserts_since_prune += changed;
            Ok::<_, StateError>((changed == 1, db.inserts_since_prune >= self.prune_every))
        })?;
        if due.1 {
            self.prune(now_ms)?;
        }
        Ok(due.0)
    }

    /// Forgets an accepted id (its event could not be queued: GitHub's redelivery must count).
    pub fn forget_delivery(&self, id: &str) -> Result<(), StateError> {
        blocking(|| self.lock().conn.execute("DELETE FROM deliveries WHERE id = ?1", [id]).map(drop))
            .map_err(|e| self.err(e))
    }

    /// Records that deliveries come from `repo` (through App installation `installation`).
    pub fn remember_repo(&self, repo: &RepoRef, installation: Option<u64>) -> Result<(), StateError> {
        let mut repos = self.repos.lock().unwrap_or_else(|p| p.into_inner());
        if repos.get(repo) == Some(&installation) {
            return Ok(());
        }
        blocking(|| {
            self.lock().conn.execute(
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

    /// Drops ids older than the TTL, then all but the `capacity` newest.
    fn prune(&self, now_ms: i64) -> Result<(), StateError> {
        blocking(|| {
            let mut db = self.lock();
            db.inserts_since_prune = 0;
            db.conn.execute(
                "DELETE FROM deliveries WHERE seen_ms <= ?1 OR rowid IN
                     (SELECT rowid FROM deliveries ORDER BY seen_ms DESC, rowid DESC LIMIT -1 OFFSET ?2)",
                params![now_ms.saturating_sub(self.ttl_ms), self.capacity as i64],
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

    fn rows(state: &StateDb) -> i64 {
        state.lock().conn.query_row("SELECT count(*) FROM deliveries", [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn deliveries_are_remembered_and_evicted_by_count_and_age() {
        let t0 = 1_000_000;
        let d = StateDb::open(Path::new(":memory:"), 2, Duration::from_secs(60)).unwrap();
        assert!(d.accept_delivery("a", t0).unwrap());
        assert!(!d.accept_delivery("a", t0).unwrap());
        assert!(d.accept_delivery("b", t0).unwrap());
        assert!(d.accept_delivery("c", t0).unwrap(), "capacity 2: a is evicted");
        assert_eq!(rows(&d), 2);
        assert!(d.accept_delivery("a", t0).unwrap());
        let later = t0 + 61_000;
        assert!(d.accept_delivery("c", later).unwrap(), "ids older than the TTL are forgotten");
        assert!(!d.accept_delivery("c", later).unwrap());
        d.forget_delivery("c").unwrap();
        assert!(d.accept_delivery("c", later).unwrap());
    }

    #[test]
    fn ids_survive_reopening_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/state.sqlite");
        let d = StateDb::open(&path, 100, Duration::from_secs(3600)).unwrap();
        assert!(d.accept_delivery("x", now_ms()).unwrap());
        drop(d);
        let d = StateDb::open(&path, 100, Duration::from_secs(3600)).unwrap();
        assert!(!d.accept_delivery("x", now_ms()).unwrap());
        let repo = RepoRef::parse("o/r").unwrap();
        d.remember_repo(&repo, Some(7)).unwrap();
        d.remember_repo(&repo, Some(8)).unwrap();
        drop(d);
        let d = StateDb::open(&path, 100, Duration::from_secs(3600)).unwrap();
        assert_eq!(d.known_repos(), [(repo, Some(8))]);
        // Reopened with a shorter TTL, old ids are pruned at once.
        drop(d);
        let d = StateDb::open(&path, 100, Duration::ZERO).unwrap();
        assert_eq!(rows(&d), 0);
    }
}
