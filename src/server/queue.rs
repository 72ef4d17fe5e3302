//! The durable event queue, in the `--state` SQLite file (WAL): a delivery is written (id,
//! event, body, received-at) before it is acknowledged, marked done when processed, retried with
//! backoff up to a bound and then marked failed with its error. Finished rows keep only their id
//! and outcome (for deduplication, bounded in age and count); a failed delivery redelivered by
//! GitHub is queued again, a done one is a duplicate. Operators list, retry and drop rows with
//! `sweepgate queue` while the server runs (the server picks retried rows up within seconds and
//! skips dropped ones).
//!
//! In memory, [`Lanes`] holds one FIFO lane per PR: a PR's events run one at a time and in
//! order (so at most one verification per PR), different PRs in parallel; a newer sign-off by
//! the same signer supersedes their older sign-offs still waiting in the lane.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rusqlite::{params, Connection, OptionalExtension};
use tokio::sync::Notify;

use super::state::StateError;
use super::Job;
use crate::github::outbox::blocking;
use crate::github::types::User;
use crate::github::RepoRef;
use crate::intake::event::Event;
use crate::intake::signoff::has_signoff_phrase;

/// Where a stored delivery is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowState {
    Queued,
    Done,
    Failed,
    /// A newer sign-off by the same signer on the same PR replaced it before it ran.
    Superseded,
    /// An operator dropped it (`sweepgate queue drop`).
    Dropped,
}

impl RowState {
    pub fn as_str(self) -> &'static str {
        match self {
            RowState::Queued => "queued",
            RowState::Done => "done",
            RowState::Failed => "failed",
            RowState::Superseded => "superseded",
            RowState::Dropped => "dropped",
        }
    }

    fn parse(text: &str) -> Option<RowState> {
        [RowState::Queued, RowState::Done, RowState::Failed, RowState::Superseded, RowState::Dropped]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// What [`QueueStore::accept`] did with a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accepted {
    /// Stored as queued for the first time.
    New,
    /// It had failed; GitHub's redelivery queued it again.
    Again,
    /// Already queued or finished: nothing to do.
    Duplicate(RowState),
}

/// One stored delivery as `sweepgate queue list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub delivery: String,
    pub event: String,
    pub pr: Option<String>,
    pub state: RowState,
    pub attempts: u32,
    pub received_ms: i64,
    pub error: Option<String>,
}

/// A queued delivery read back to be processed (at start, or after an operator's retry).
#[derive(Debug, Clone)]
pub struct Unfinished {
    pub delivery: String,
    pub event: String,
    pub body: Vec<u8>,
    pub received_ms: i64,
    pub attempts: u32,
}

pub struct QueueStore {
    conn: Mutex<Connection>,
    /// The acknowledging path's own connection (`accept` only), so a delivery never waits for
    /// the workers' bookkeeping on `conn`; `None` for an in-memory store (one database per
    /// connection there).
    intake: Option<Mutex<Connection>>,
    path: String,
    /// Finished rows kept for deduplication: at most this many, for at most this long.
    finished_capacity: usize,
    ttl_ms: i64,
    finishes_since_prune: Mutex<usize>,
}

const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS events (
        delivery TEXT PRIMARY KEY,
        seq INTEGER NOT NULL,
        event TEXT NOT NULL,
        pr TEXT,
        body BLOB,
        received_ms INTEGER NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        finished_ms INTEGER,
        running INTEGER NOT NULL DEFAULT 0,
        interrupted INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX IF NOT EXISTS events_by_state ON events (state, seq);
    CREATE INDEX IF NOT EXISTS events_by_seq ON events (seq);
    CREATE INDEX IF NOT EXISTS events_by_finish ON events (finished_ms);";

/// Columns added since the table was first made (an older state file gets them on open):
/// `running` is set while an attempt runs, `interrupted` counts attempts a server stopped in.
const ADDED_COLUMNS: [(&str, &str); 2] = [
    ("running", "ALTER TABLE events ADD COLUMN running INTEGER NOT NULL DEFAULT 0"),
    ("interrupted", "ALTER TABLE events ADD COLUMN interrupted INTEGER NOT NULL DEFAULT 0"),
];

/// Older state files remembered accepted ids only: they become done rows (still deduplicated).
const MIGRATE_DELIVERIES: &str = "
    INSERT OR IGNORE INTO events (delivery, seq, event, received_ms, state, finished_ms)
        SELECT id, 0, '', seen_ms, 'done', seen_ms FROM deliveries;
    DROP TABLE deliveries;";

const NEXT_SEQ: &str = "(SELECT coalesce(max(seq), 0) + 1 FROM events)";

impl QueueStore {
    /// Opens (creating when needed) the queue in the state file `path` (`":memory:"` for tests).
    pub fn open(path: &Path, finished_capacity: usize, ttl: Duration) -> Result<QueueStore, StateError> {
        let shown = path.display().to_string();
        let err = |source| StateError::Sqlite { path: shown.clone(), source };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StateError::Folder { path: shown.clone(), source })?;
        }
        let conn = connect(path).map_err(err)?;
        conn.execute_batch(SCHEMA).map_err(err)?;
        let old: bool = conn
            .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'deliveries'", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n > 0)
            .map_err(err)?;
        if old {
            conn.execute_batch(MIGRATE_DELIVERIES).map_err(err)?;
        }
        for (column, add) in ADDED_COLUMNS {
            let present: bool = conn
                .query_row("SELECT count(*) FROM pragma_table_info('events') WHERE name = ?1", [column], |r| {
                    r.get::<_, i64>(0)
                })
                .map(|n| n > 0)
                .map_err(err)?;
            if !present {
                conn.execute_batch(add).map_err(err)?;
            }
        }
        let intake = match shown.as_str() {
            ":memory:" => None,
            _ => Some(Mutex::new(connect(path).map_err(err)?)),
        };
        let store = QueueStore {
            conn: Mutex::new(conn),
            intake,
            path: shown,
            finished_capacity: finished_capacity.max(1),
            ttl_ms: i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX),
            finishes_since_prune: Mutex::new(0),
        };
        store.prune(super::state::now_ms())?;
        Ok(store)
    }

    fn err(&self, source: rusqlite::Error) -> StateError {
        StateError::Sqlite { path: self.path.clone(), source }
    }

    /// The server's checkpointer: WAL checkpoints (which fsync) run on their own connection and
    /// thread every `every`, not inside a commit on the acknowledging path. Returns false for an
    /// in-memory store (nothing to checkpoint).
    pub fn checkpoint_in_background(&self, every: Duration) -> Result<bool, StateError> {
        if self.path == ":memory:" {
            return Ok(false);
        }
        self.with(|conn| conn.execute_batch("PRAGMA wal_autocheckpoint=0;"))?;
        if let Some(intake) = &self.intake {
            let conn = intake.lock().unwrap_or_else(|p| p.into_inner());
            conn.execute_batch("PRAGMA wal_autocheckpoint=0;").map_err(|e| self.err(e))?;
        }
        let conn = Connection::open(&self.path).map_err(|e| self.err(e))?;
        let path = self.path.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(every);
            if let Err(err) = conn.execute_batch("PRAGMA wal_checkpoint(PASSIVE);") {
                tracing::warn!(path, "WAL checkpoint failed: {err}");
            }
        });
        Ok(true)
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn with<T>(&self, work: impl FnOnce(&mut Connection) -> rusqlite::Result<T>) -> Result<T, StateError> {
        blocking(|| work(&mut self.lock())).map_err(|e| self.err(e))
    }

    /// Stores delivery `id` as queued unless it is already queued or finished within the TTL;
    /// a failed one is queued again with the new `body`. Committed before it returns, on the
    /// intake connection.
    pub fn accept(&self, id: &str, event: &str, pr: &str, body: &[u8], now_ms: i64) -> Result<Accepted, StateError> {
        let expired = now_ms.saturating_sub(self.ttl_ms);
        let work = |conn: &mut Connection| {
            // IMMEDIATE: the write lock is taken first (through the busy handler); a deferred
            // read upgraded to a write would fail at once when the other connection committed.
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let found: Option<(String, Option<i64>)> = tx
                .prepare_cached("SELECT state, finished_ms FROM events WHERE delivery = ?1")?
                .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?;
            let state = found.as_ref().map(|(s, finished)| (RowState::parse(s), *finished));
            let accepted = match state {
                Some((Some(RowState::Failed), _)) => Accepted::Again,
                Some((Some(RowState::Queued), _)) => Accepted::Duplicate(RowState::Queued),
                Some((Some(done), Some(finished))) if finished > expired => Accepted::Duplicate(done),
                _ => Accepted::New,
            };
            if !matches!(accepted, Accepted::Duplicate(_)) {
                tx.prepare_cached(&format!(
                    "INSERT INTO events (delivery, seq, event, pr, body, received_ms, state, attempts)
                     VALUES (?1, {NEXT_SEQ}, ?2, ?3, ?4, ?5, 'queued', 0)
                     ON CONFLICT (delivery) DO UPDATE SET seq = excluded.seq, event = excluded.event,
                         pr = excluded.pr, body = excluded.body, received_ms = excluded.received_ms,
                         state = 'queued', attempts = 0, error = NULL, finished_ms = NULL,
                         running = 0, interrupted = 0"
                ))?
                .execute(params![id, event, pr, body, now_ms])?;
            }
            tx.commit()?;
            Ok(accepted)
        };
        match &self.intake {
            Some(intake) => {
                blocking(|| work(&mut intake.lock().unwrap_or_else(|p| p.into_inner()))).map_err(|e| self.err(e))
            }
            None => self.with(work),
        }
    }

    /// Counts an attempt of queued delivery `id`, marked running until it is finished or set to
    /// retry, and returns the attempts so far; `None` when it is no longer queued (an operator
    /// dropped it, or it finished meanwhile). Committed before the work starts, so an attempt
    /// the process dies in is still counted (see [`QueueStore::fail_interrupted`]).
    pub fn start(&self, id: &str) -> Result<Option<u32>, StateError> {
        self.with(|conn| {
            conn.prepare_cached(
                "UPDATE events SET attempts = attempts + 1, running = 1 WHERE delivery = ?1 AND state = 'queued'
                 RETURNING attempts",
            )?
            .query_row([id], |r| r.get::<_, u32>(0))
            .optional()
        })
    }

    /// Records the error of an attempt that will be retried.
    pub fn retry_later(&self, id: &str, error: &str) -> Result<(), StateError> {
        self.with(|conn| {
            conn.prepare_cached("UPDATE events SET error = ?2, running = 0 WHERE delivery = ?1")?
                .execute(params![id, error])
                .map(drop)
        })
    }

    /// Finishes delivery `id` (its body is dropped; the id stays for deduplication).
    pub fn finish(&self, id: &str, state: RowState, error: Option<&str>, now_ms: i64) -> Result<(), StateError> {
        self.with(|conn| {
            conn.prepare_cached(
                "UPDATE events SET state = ?2, error = ?3, finished_ms = ?4, body = NULL, running = 0 WHERE delivery = ?1",
            )?
            .execute(params![id, state.as_str(), error, now_ms])
            .map(drop)
        })?;
        let due = {
            let mut n = self.finishes_since_prune.lock().unwrap_or_else(|p| p.into_inner());
            *n += 1;
            // Pruning in batches: the table may exceed its bound by this many finished rows.
            let due = *n >= (self.finished_capacity / 16).clamp(1, 1024);
            if due {
                *n = 0;
            }
            due
        };
        if due {
            self.prune(now_ms)?;
        }
        Ok(())
    }

    /// At a server's start: every queued delivery an earlier server was processing when it
    /// stopped (crashed, was killed, or its drain ran out) counts one interruption; one
    /// interrupted `limit` times is marked failed with the reason and not run again, so one
    /// delivery that kills its server cannot make it crash-loop (issue 35). Keeps the body, so
    /// `sweepgate queue retry` can run it again. Returns the deliveries failed now.
    pub fn fail_interrupted(&self, limit: u32, now_ms: i64) -> Result<Vec<String>, StateError> {
        let reason = format!(
            "the server stopped {limit} times while processing this delivery (a crash, a kill or an \
             exhausted drain); it is not run again: `sweepgate queue retry` runs it once more"
        );
        self.with(|conn| {
            let tx = conn.transaction()?;
            tx.execute(
                "UPDATE events SET interrupted = interrupted + 1, running = 0 WHERE state = 'queued' AND running = 1",
                [],
            )?;
            let failed = tx
                .prepare(
                    "UPDATE events SET state = 'failed', error = ?2, finished_ms = ?3
                     WHERE state = 'queued' AND interrupted >= ?1 RETURNING delivery",
                )?
                .query_map(params![limit, reason, now_ms], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<String>>>()?;
            tx.commit()?;
            Ok(failed)
        })
    }

    /// Every queued delivery, oldest first (their order is the per-PR processing order).
    pub fn unfinished(&self) -> Result<Vec<Unfinished>, StateError> {
        self.with(|conn| {
            conn.prepare_cached(
                "SELECT delivery, event, body, received_ms, attempts FROM events WHERE state = 'queued' ORDER BY seq",
            )?
            .query_map([], |r| {
                Ok(Unfinished {
                    delivery: r.get(0)?,
                    event: r.get(1)?,
                    body: r.get::<_, Option<Vec<u8>>>(2)?.unwrap_or_default(),
                    received_ms: r.get(3)?,
                    attempts: r.get(4)?,
                })
            })?
            .collect()
        })
    }

    /// The newest `limit` rows, newest first.
    pub fn list(&self, limit: usize) -> Result<Vec<Row>, StateError> {
        self.with(|conn| {
            conn.prepare_cached(
                "SELECT delivery, event, pr, state, attempts, received_ms, error FROM events ORDER BY seq DESC LIMIT ?1",
            )?
            .query_map([i64::try_from(limit).unwrap_or(i64::MAX)], |r| {
                let state: String = r.get(3)?;
                Ok(Row {
                    delivery: r.get(0)?,
                    event: r.get(1)?,
                    pr: r.get(2)?,
                    // Only this module writes the column; an unknown value reads as failed.
                    state: RowState::parse(&state).unwrap_or(RowState::Failed),
                    attempts: r.get(4)?,
                    received_ms: r.get(5)?,
                    error: r.get(6)?,
                })
            })?
            .collect()
        })
    }

    /// An operator's retry: a failed, superseded or dropped delivery whose body is still stored
    /// is queued again (at the end of its PR's lane). False when there is nothing to retry.
    pub fn retry(&self, id: &str) -> Result<bool, StateError> {
        self.with(|conn| {
            conn.execute(
                &format!(
                    "UPDATE events SET state = 'queued', attempts = 0, error = NULL, finished_ms = NULL, seq = {NEXT_SEQ},
                         running = 0, interrupted = 0
                     WHERE delivery = ?1 AND state IN ('failed', 'superseded', 'dropped') AND body IS NOT NULL"
                ),
                [id],
            )
            .map(|n| n == 1)
        })
    }

    /// An operator's drop of a queued or failed delivery; false when there is no such row.
    pub fn drop_row(&self, id: &str, now_ms: i64) -> Result<bool, StateError> {
        self.with(|conn| {
            conn.execute(
                "UPDATE events SET state = 'dropped', finished_ms = ?2, error = coalesce(error, 'dropped by an operator')
                 WHERE delivery = ?1 AND state IN ('queued', 'failed')",
                params![id, now_ms],
            )
            .map(|n| n == 1)
        })
    }

    /// Drops finished rows older than the TTL, then all but the newest `finished_capacity`.
    /// Failed, superseded and dropped rows keep their body (for `queue retry`) until then.
    fn prune(&self, now_ms: i64) -> Result<(), StateError> {
        self.with(|conn| {
            conn.execute(
                "DELETE FROM events WHERE state != 'queued' AND (finished_ms <= ?1 OR rowid IN
                     (SELECT rowid FROM events WHERE state != 'queued'
                      ORDER BY finished_ms DESC, rowid DESC LIMIT -1 OFFSET ?2))",
                params![now_ms.saturating_sub(self.ttl_ms), i64::try_from(self.finished_capacity).unwrap_or(i64::MAX)],
            )
            .map(drop)
        })
    }
}

/// Longest a write waits for another connection's transaction (then the delivery gets 503).
const BUSY_WAIT: Duration = Duration::from_secs(5);

/// One connection to the queue file. WAL + NORMAL: a commit survives the process being killed
/// (SIGKILL) at once, without an fsync per commit; only a power cut can lose the last commits,
/// and GitHub's redelivery then brings them back. Waiting for the other connection's write lock
/// polls every 100 µs: SQLite's default busy handler sleeps in steps of up to 100 ms, which
/// would land on the acknowledging path.
fn connect(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    const STEP: Duration = Duration::from_micros(100);
    conn.busy_handler(Some(|attempt: i32| {
        std::thread::sleep(STEP);
        u128::try_from(attempt).unwrap_or(0) * STEP.as_micros() < BUSY_WAIT.as_micros()
    }))?;
    conn.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")?;
    Ok(conn)
}

/// The name a PR's lane and its stored rows go by, `owner/name#N`.
pub fn pr_name(repo: &RepoRef, pr: u64) -> String {
    format!("{repo}#{pr}")
}

/// The signer of a sign-off event (a person's comment or review carrying the phrase); a newer
/// sign-off by the same signer supersedes theirs still waiting. Dispatches are explicit
/// overrides and never superseded.
pub fn signoff_signer(event: &Event) -> Option<&str> {
    match event {
        Event::IssueComment(e) if has_signoff_phrase(&e.comment.body) => {
            e.comment.user.as_ref().filter(|u| User::is_person(Some(u))).map(|u| u.login.as_str())
        }
        Event::Review(e) if has_signoff_phrase(&e.body) => {
            e.author.as_ref().filter(|u| User::is_person(Some(u))).map(|u| u.login.as_str())
        }
        _ => None,
    }
}

/// One event waiting in (or taken from) a PR's lane.
pub struct Entry {
    pub job: Job,
    /// Whether a stored row backs it (webhook deliveries); reconcile jobs live in memory only.
    pub durable: bool,
    pub received_ms: i64,
    /// Not run before this instant (backoff after a transient failure).
    pub not_before: Option<Instant>,
}

type LaneKey = (RepoRef, u64);

#[derive(Default)]
struct LaneState {
    lanes: HashMap<LaneKey, VecDeque<Entry>>,
    /// PRs one of whose events a worker is processing.
    busy: HashSet<LaneKey>,
    /// Durable deliveries waiting or running, so an operator's retry is loaded only once.
    present: HashSet<String>,
    waiting: usize,
    /// Draining for shutdown: workers end once nothing is ready to run.
    draining: bool,
}

/// The in-memory per-PR lanes the workers take events from.
pub struct Lanes {
    state: Mutex<LaneState>,
    wake: Notify,
    capacity: usize,
}

/// What [`Lanes::push`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Pushed {
    /// Queued; these older durable deliveries were superseded by it (mark them so).
    Queued { superseded: Vec<String> },
    /// The lanes hold `capacity` events already.
    Full,
}

impl Lanes {
    pub fn new(capacity: usize) -> Lanes {
        Lanes { state: Mutex::new(LaneState::default()), wake: Notify::new(), capacity: capacity.max(1) }
    }

    fn lock(&self) -> MutexGuard<'_, LaneState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Events waiting (not running), and the receive time of the oldest.
    pub fn depth(&self) -> (usize, Option<i64>) {
        let s = self.lock();
        let oldest = s.lanes.values().filter_map(|lane| lane.iter().map(|j| j.received_ms).min()).min();
        (s.waiting, oldest)
    }

    pub fn is_present(&self, delivery: &str) -> bool {
        self.lock().present.contains(delivery)
    }

    /// Appends `job` to its PR's lane. `force` ignores the capacity (events already stored).
    pub fn push(&self, repo: &RepoRef, pr: u64, entry: Entry, force: bool) -> Pushed {
        let mut guard = self.lock();
        if !force && guard.waiting >= self.capacity {
            return Pushed::Full;
        }
        let s = &mut *guard;
        let lane = s.lanes.entry((repo.clone(), pr)).or_default();
        let mut superseded = Vec::new();
        let before = lane.len();
        if let Some(signer) = signoff_signer(&entry.job.event) {
            lane.retain(|older| {
                let replaced = signoff_signer(&older.job.event) == Some(signer);
                if replaced && older.durable {
                    superseded.push(older.job.delivery.clone());
                }
                !replaced
            });
        }
        s.waiting = s.waiting + lane.len() + 1 - before;
        for gone in &superseded {
            s.present.remove(gone);
        }
        if entry.durable {
            s.present.insert(entry.job.delivery.clone());
        }
        lane.push_back(entry);
        drop(guard);
        self.wake.notify_waiters();
        Pushed::Queued { superseded }
    }

    /// Takes the oldest ready event of a PR no worker is busy with; waits while there is none.
    /// `None` once draining and nothing is ready.
    pub async fn next(&self) -> Option<(LaneKey, Entry)> {
        loop {
            let notified = self.wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let wait = {
                let mut s = self.lock();
                let now = Instant::now();
                let mut best: Option<(&LaneKey, i64)> = None;
                let mut soonest: Option<Instant> = None;
                for (key, lane) in &s.lanes {
                    let Some(front) = lane.front().filter(|_| !s.busy.contains(key)) else { continue };
                    match front.not_before.filter(|t| *t > now) {
                        Some(t) => soonest = Some(soonest.map_or(t, |s| s.min(t))),
                        None if best.is_none_or(|(_, r)| front.received_ms < r) => {
                            best = Some((key, front.received_ms))
                        }
                        None => {}
                    }
                }
                if let Some(key) = best.map(|(k, _)| k.clone()) {
                    let lane = s.lanes.get_mut(&key).expect("the chosen lane exists");
                    let entry = lane.pop_front().expect("the chosen lane has a front");
                    if lane.is_empty() {
                        s.lanes.remove(&key);
                    }
                    s.waiting -= 1;
                    s.busy.insert(key.clone());
                    return Some((key, entry));
                }
                if s.draining {
                    return None;
                }
                soonest.map(|t| t - now)
            };
            match wait {
                Some(wait) => {
                    let _ = tokio::time::timeout(wait, notified).await;
                }
                None => notified.await,
            }
        }
    }

    /// The worker is done with `key`'s event; `again` puts it back at the front of its lane
    /// (a retry after backoff), otherwise its delivery leaves the lanes.
    pub fn done(&self, key: LaneKey, delivery: &str, again: Option<Entry>) {
        let mut s = self.lock();
        s.busy.remove(&key);
        match again {
            Some(entry) => {
                s.lanes.entry(key).or_default().push_front(entry);
                s.waiting += 1;
            }
            None => {
                s.present.remove(delivery);
            }
        }
        drop(s);
        self.wake.notify_waiters();
    }

    /// Workers finish what is ready now and end; events waiting for a backoff stay queued.
    pub fn drain(&self) {
        self.lock().draining = true;
        self.wake.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::types::{Comment, User};
    use crate::intake::event::CommentEvent;

    fn store() -> QueueStore {
        QueueStore::open(Path::new(":memory:"), 100, Duration::from_secs(3600)).unwrap()
    }

    fn state(store: &QueueStore, id: &str) -> RowState {
        store.list(1000).unwrap().into_iter().find(|r| r.delivery == id).unwrap().state
    }

    #[test]
    fn a_failed_delivery_is_accepted_again_and_a_done_one_is_a_duplicate() {
        let q = store();
        let t = 1_000;
        assert_eq!(q.accept("a", "pull_request", "o/r#1", b"{}", t).unwrap(), Accepted::New);
        assert_eq!(q.accept("a", "pull_request", "o/r#1", b"{}", t).unwrap(), Accepted::Duplicate(RowState::Queued));
        assert_eq!(q.start("a").unwrap(), Some(1));
        q.finish("a", RowState::Failed, Some("HTTP 403"), t).unwrap();
        assert_eq!(q.list(10).unwrap()[0].error.as_deref(), Some("HTTP 403"));
        assert_eq!(q.accept("a", "pull_request", "o/r#1", b"{\"v\":2}", t).unwrap(), Accepted::Again);
        let again = q.unfinished().unwrap();
        assert_eq!((again.len(), again[0].body.as_slice(), again[0].attempts), (1, &b"{\"v\":2}"[..], 0));
        q.start("a").unwrap();
        q.finish("a", RowState::Done, None, t).unwrap();
        assert_eq!(q.accept("a", "pull_request", "o/r#1", b"{}", t).unwrap(), Accepted::Duplicate(RowState::Done));
        assert!(q.unfinished().unwrap().is_empty());
    }

    /// Issue 35: a delivery whose attempt the server died in three times is failed with the
    /// reason at the next start (not replayed forever); an operator's retry runs it again.
    #[test]
    fn a_delivery_interrupted_three_times_is_failed_and_can_be_retried() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        // A state file of the previous schema gets the new columns.
        let added = ",\n        running INTEGER NOT NULL DEFAULT 0,\n        interrupted INTEGER NOT NULL DEFAULT 0";
        assert!(SCHEMA.contains(added));
        Connection::open(&path).unwrap().execute_batch(&SCHEMA.replace(added, "")).unwrap();
        let open = || QueueStore::open(&path, 100, Duration::from_secs(3600)).unwrap();
        let t = super::super::state::now_ms(); // rows finished longer than the TTL ago are pruned on open
        let q = open();
        q.accept("poison", "pull_request", "o/r#1", b"{}", t).unwrap();
        q.accept("flaky", "pull_request", "o/r#2", b"{}", t).unwrap();
        drop(q);
        for restart in 1..=3 {
            // A server takes both; it dies in `poison`, after `flaky` was set to retry.
            let q = open();
            assert_eq!(q.start("poison").unwrap(), Some(restart));
            q.start("flaky").unwrap();
            q.retry_later("flaky", "HTTP 502").unwrap();
            drop(q);
            let failed = open().fail_interrupted(3, t).unwrap();
            assert_eq!(failed, if restart == 3 { vec!["poison".to_owned()] } else { vec![] }, "restart {restart}");
        }
        let q = open();
        let row = q.list(10).unwrap().into_iter().find(|r| r.delivery == "poison").unwrap();
        assert_eq!((row.state, row.attempts), (RowState::Failed, 3));
        assert!(row.error.as_deref().is_some_and(|e| e.contains("stopped 3 times")), "{row:?}");
        assert_eq!(state(&q, "flaky"), RowState::Queued, "a retried delivery is not an interrupted one");
        assert!(q.retry("poison").unwrap(), "the body is kept for a retry");
        assert_eq!(q.start("poison").unwrap(), Some(1));
        q.finish("poison", RowState::Done, None, t).unwrap();
        assert!(q.fail_interrupted(3, t).unwrap().is_empty());
    }

    #[test]
    fn queued_rows_survive_reopening_in_order_and_finished_rows_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/state.sqlite");
        let q = QueueStore::open(&path, 2, Duration::from_secs(60)).unwrap();
        let now = super::super::state::now_ms();
        for id in ["x", "y", "z"] {
            q.accept(id, "issue_comment", "o/r#1", id.as_bytes(), now).unwrap();
        }
        q.finish("y", RowState::Done, None, now).unwrap();
        drop(q);
        let q = QueueStore::open(&path, 2, Duration::from_secs(60)).unwrap();
        let ids: Vec<String> = q.unfinished().unwrap().into_iter().map(|u| u.delivery).collect();
        assert_eq!(ids, ["x", "z"]);
        for id in ["x", "z"] {
            q.finish(id, RowState::Done, None, now).unwrap();
        }
        q.accept("w", "e", "o/r#1", b"", now).unwrap();
        q.finish("w", RowState::Done, None, now).unwrap();
        assert_eq!(q.list(10).unwrap().len(), 2, "capacity 2: the oldest finished rows are pruned");
        // Reopened with no TTL, every finished row is forgotten.
        drop(q);
        let q = QueueStore::open(&path, 2, Duration::ZERO).unwrap();
        assert!(q.list(10).unwrap().is_empty());
    }

    #[test]
    fn accepting_on_its_own_connection_never_fails_while_workers_write() {
        let dir = tempfile::tempdir().unwrap();
        let q = std::sync::Arc::new(
            QueueStore::open(&dir.path().join("q.sqlite"), 10_000, Duration::from_secs(60)).unwrap(),
        );
        assert!(q.intake.is_some(), "a file-backed store acknowledges on its own connection");
        let now = super::super::state::now_ms();
        let worker = {
            let q = q.clone();
            std::thread::spawn(move || {
                let mut finished = 0;
                while finished < 300 {
                    for row in q.unfinished().unwrap() {
                        q.start(&row.delivery).unwrap();
                        q.finish(&row.delivery, RowState::Done, None, now).unwrap();
                        finished += 1;
                    }
                }
            })
        };
        for i in 0..300 {
            // Each accept reads the row's state and then writes: it must never see SQLITE_BUSY.
            assert_eq!(q.accept(&format!("d{i}"), "e", "o/r#1", b"{}", now).unwrap(), Accepted::New);
        }
        worker.join().unwrap();
        assert!(q.unfinished().unwrap().is_empty());
    }

    #[test]
    fn operators_retry_and_drop_rows() {
        let q = store();
        q.accept("a", "e", "o/r#1", b"{}", 1).unwrap();
        assert!(!q.retry("a").unwrap(), "a queued row needs no retry");
        assert!(q.drop_row("a", 2).unwrap());
        assert_eq!(q.start("a").unwrap(), None, "a dropped row is not processed");
        assert_eq!(state(&q, "a"), RowState::Dropped);
        assert!(q.retry("a").unwrap());
        assert_eq!(state(&q, "a"), RowState::Queued);
        q.finish("a", RowState::Done, None, 3).unwrap();
        assert!(!q.retry("a").unwrap(), "a done row has no body left");
        assert!(!q.drop_row("a", 4).unwrap());
        assert!(!q.drop_row("missing", 4).unwrap());
    }

    #[test]
    fn an_old_deliveries_table_becomes_done_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE deliveries (id TEXT PRIMARY KEY, seen_ms INTEGER NOT NULL);").unwrap();
        let now = super::super::state::now_ms();
        conn.execute("INSERT INTO deliveries VALUES ('old', ?1)", [now]).unwrap();
        drop(conn);
        let q = QueueStore::open(&path, 10, Duration::from_secs(60)).unwrap();
        assert_eq!(q.accept("old", "e", "o/r#1", b"", now).unwrap(), Accepted::Duplicate(RowState::Done));
    }

    fn comment(login: &str, id: u64, body: &str) -> Event {
        Event::IssueComment(CommentEvent {
            action: "created".into(),
            repo: RepoRef::parse("o/r").unwrap(),
            installation_id: None,
            issue_number: 1,
            comment: Comment {
                id,
                body: body.into(),
                user: Some(User { login: login.into(), kind: "User".into() }),
                author_association: "NONE".into(),
                created_at: chrono::Utc::now(),
                updated_at: chrono::Utc::now(),
                html_url: String::new(),
            },
            previous_body: None,
            sender: Some(User { login: login.into(), kind: "User".into() }),
        })
    }

    fn job(delivery: &str, event: Event) -> Entry {
        Entry { job: Job { delivery: delivery.into(), event }, durable: true, received_ms: 0, not_before: None }
    }

    #[tokio::test]
    async fn one_event_per_pr_at_a_time_and_newer_signoffs_supersede() {
        let lanes = Lanes::new(10);
        let repo = RepoRef::parse("o/r").unwrap();
        let phrase = crate::domain::checklist_template::SIGNOFF_PHRASE;
        assert!(has_signoff_phrase(phrase), "the test phrase is a sign-off");
        lanes.push(&repo, 1, job("a1", comment("alice", 1, phrase)), false);
        lanes.push(&repo, 1, job("label", comment("carol", 9, "/use 3")), false);
        lanes.push(&repo, 1, job("b1", comment("bob", 2, phrase)), false);
        let (key, first) = lanes.next().await.unwrap();
        assert_eq!(first.job.delivery, "a1");
        // Alice signs off twice more while her first runs: the queued second one is replaced.
        lanes.push(&repo, 1, job("a2", comment("alice", 3, phrase)), false);
        let pushed = lanes.push(&repo, 1, job("a3", comment("alice", 4, phrase)), false);
        assert_eq!(pushed, Pushed::Queued { superseded: vec!["a2".into()] });
        lanes.push(&repo, 2, job("other-pr", comment("dave", 5, "hello")), false);
        // PR 1 is busy: the next ready event is PR 2's.
        let (key2, other) = lanes.next().await.unwrap();
        assert_eq!(other.job.delivery, "other-pr");
        lanes.done(key2, "other-pr", None);
        lanes.done(key, "a1", None);
        let mut order = Vec::new();
        lanes.drain();
        while let Some((key, entry)) = lanes.next().await {
            order.push(entry.job.delivery.clone());
            lanes.done(key, &entry.job.delivery, None);
        }
        assert_eq!(order, ["label", "b1", "a3"], "order kept; bob's sign-off is not alice's");
        assert_eq!(lanes.depth().0, 0);
    }

    #[tokio::test]
    async fn the_capacity_refuses_and_a_backoff_waits() {
        let lanes = Lanes::new(1);
        let repo = RepoRef::parse("o/r").unwrap();
        assert!(matches!(lanes.push(&repo, 1, job("a", Event::Ping), false), Pushed::Queued { .. }));
        assert_eq!(lanes.push(&repo, 2, job("b", Event::Ping), false), Pushed::Full);
        let later = Entry { received_ms: 1, ..job("b", Event::Ping) };
        assert!(matches!(lanes.push(&repo, 2, later, true), Pushed::Queued { .. }));
        assert_eq!(lanes.depth(), (2, Some(0)));
        let (key, mut a) = lanes.next().await.unwrap();
        a.not_before = Some(Instant::now() + Duration::from_millis(150));
        lanes.done(key, "a", Some(a));
        let started = Instant::now();
        let (_, b) = lanes.next().await.unwrap();
        assert_eq!(b.job.delivery, "b");
        let (_, a) = lanes.next().await.unwrap();
        assert_eq!(a.job.delivery, "a");
        assert!(started.elapsed() >= Duration::from_millis(140), "the backoff was kept");
        lanes.drain();
        assert!(lanes.next().await.is_none());
    }
}
