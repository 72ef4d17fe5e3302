//! The dispatch ledger: one SQLite file (WAL) recording, per sweep point, which Slurm job runs it
//! and how it ended. Every state is written BEFORE the side effect it announces (intent before
//! `sbatch`, cancel intent before `scancel`), so a dispatcher killed at any moment resumes
//! without submitting a point twice or losing one (ARCHITECTURE "State").
//!
//! Point state machine:
//!
//! ```text
//! planned ──► submitting(job name) ──► submitted(job id) ──► running ──► succeeded
//!    │              │  (nothing found on restart: back to planned;   └──► failed | cancelled
//!    │              │   sbatch refused the request: failed)
//!    │              │                                                    | timed_out | node_failed
//!    └──► skipped | cancelled   (canary failed, fail-fast, cancel requested: never submitted)
//! ```

use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};

use super::scheduler::JobId;

/// Schema migrations, applied in order; `PRAGMA user_version` is the number applied.
const MIGRATIONS: &[&str] = &[
    // 1: sweeps, points, and an append-only transition log.
    "CREATE TABLE sweep (
        id TEXT PRIMARY KEY,
        repo TEXT NOT NULL,
        pr INTEGER NOT NULL,
        plan_sha256 TEXT NOT NULL,
        job_prefix TEXT NOT NULL,
        created_at TEXT NOT NULL,
        cancel_requested_at TEXT
     );
     CREATE TABLE point (
        sweep_id TEXT NOT NULL REFERENCES sweep(id),
        point_id TEXT NOT NULL,
        ord INTEGER NOT NULL,
        family TEXT NOT NULL,
        is_canary INTEGER NOT NULL,
        state TEXT NOT NULL,
        job_name TEXT NOT NULL,
        job_id TEXT,
        sbatch_calls INTEGER NOT NULL DEFAULT 0,
        submit_info TEXT,
        cancel_reason TEXT,
        reason TEXT,
        exit_code INTEGER,
        state_source TEXT,
        provenance TEXT,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (sweep_id, point_id)
     );
     CREATE INDEX point_job ON point(job_id);
     CREATE TABLE transition (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        sweep_id TEXT NOT NULL,
        point_id TEXT NOT NULL,
        from_state TEXT NOT NULL,
        to_state TEXT NOT NULL,
        job_id TEXT,
        note TEXT,
        at TEXT NOT NULL
     );",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PointState {
    Planned,
    Submitting,
    Submitted,
    Running,
    Succeeded,
    Failed,
    Cancelled,
    TimedOut,
    NodeFailed,
    Skipped,
}

impl PointState {
    pub const ALL: [PointState; 10] = [
        PointState::Planned,
        PointState::Submitting,
        PointState::Submitted,
        PointState::Running,
        PointState::Succeeded,
        PointState::Failed,
        PointState::Cancelled,
        PointState::TimedOut,
        PointState::NodeFailed,
        PointState::Skipped,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PointState::Planned => "planned",
            PointState::Submitting => "submitting",
            PointState::Submitted => "submitted",
            PointState::Running => "running",
            PointState::Succeeded => "succeeded",
            PointState::Failed => "failed",
            PointState::Cancelled => "cancelled",
            PointState::TimedOut => "timed_out",
            PointState::NodeFailed => "node_failed",
            PointState::Skipped => "skipped",
        }
    }

    /// The state's name in the Chinese text of the status comment, the check run and the
    /// details page (issue 27: no English word in a Chinese row).
    pub fn name_zh(self) -> &'static str {
        match self {
            PointState::Planned => "计划中",
            PointState::Submitting => "提交中",
            PointState::Submitted => "已提交",
            PointState::Running => "运行中",
            PointState::Succeeded => "成功",
            PointState::Failed => "失败",
            PointState::Cancelled => "已取消",
            PointState::TimedOut => "超时",
            PointState::NodeFailed => "节点故障",
            PointState::Skipped => "已跳过",
        }
    }

    pub fn parse(text: &str) -> Option<PointState> {
        PointState::ALL.into_iter().find(|s| s.as_str() == text)
    }

    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            PointState::Succeeded
                | PointState::Failed
                | PointState::Cancelled
                | PointState::TimedOut
                | PointState::NodeFailed
                | PointState::Skipped
        )
    }

    /// A job exists (or may exist) for this point and has not ended.
    pub fn is_active(self) -> bool {
        matches!(self, PointState::Submitting | PointState::Submitted | PointState::Running)
    }

    /// Ended without success (what canary gating and fail-fast react to).
    pub fn is_failure(self) -> bool {
        matches!(self, PointState::Failed | PointState::TimedOut | PointState::NodeFailed)
    }

    /// The edges of the state machine in the module documentation.
    pub fn can_go_to(self, to: PointState) -> bool {
        use PointState::*;
        match self {
            Planned => matches!(to, Submitting | Skipped | Cancelled),
            // Failed: sbatch refused the job outright (bad request), nothing was queued.
            Submitting => matches!(to, Planned | Submitted | Failed),
            Submitted => matches!(to, Running) || (to.is_terminal() && to != Skipped),
            Running => to.is_terminal() && to != Skipped,
            _ => false,
        }
    }
}

/// A point as the ledger knows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PointRecord {
    pub point_id: String,
    pub ord: i64,
    pub family: String,
    pub is_canary: bool,
    pub state: PointState,
    pub job_name: String,
    pub job_id: Option<JobId>,
    pub sbatch_calls: i64,
    /// What was submitted: script and batch-script hashes, time (provenance, spec 50 §11).
    pub submit_info: Option<serde_json::Value>,
    pub cancel_reason: Option<String>,
    pub reason: Option<String>,
    pub exit_code: Option<i64>,
    pub state_source: Option<String>,
    pub provenance: Option<StoredJson>,
}

/// A JSON document kept as the text the ledger stored (checked to be JSON when read), parsed
/// only by the reader that needs it: the dispatch loop reads every record each round and never
/// looks at provenance, which is ~25 KB per point once parsed.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(transparent)]
pub struct StoredJson(Box<serde_json::value::RawValue>);

impl StoredJson {
    pub fn from_value(value: &serde_json::Value) -> Result<StoredJson, serde_json::Error> {
        serde_json::value::to_raw_value(value).map(StoredJson)
    }

    pub fn value(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::from_str(self.0.get())
    }
}

impl PartialEq for StoredJson {
    fn eq(&self, other: &StoredJson) -> bool {
        self.0.get() == other.0.get()
    }
}

/// What a new sweep registers.
#[derive(Debug, Clone)]
pub struct SweepSeed<'a> {
    pub id: &'a str,
    pub repo: &'a str,
    pub pr: u64,
    pub plan_sha256: &'a str,
    pub job_prefix: &'a str,
    pub points: Vec<PointSeed<'a>>,
}

#[derive(Debug, Clone)]
pub struct PointSeed<'a> {
    pub point_id: &'a str,
    pub family: &'a str,
    pub is_canary: bool,
    pub job_name: String,
}

/// The outcome fields written with a terminal transition.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub reason: Option<String>,
    pub exit_code: Option<i64>,
    pub state_source: Option<String>,
    pub provenance: Option<serde_json::Value>,
}

#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("ledger {path}: {source}")]
    Sqlite { path: String, source: rusqlite::Error },
    #[error("ledger {path} has schema version {found}, newer than this sweepgate ({known}); use a newer sweepgate")]
    TooNew { path: String, found: i64, known: i64 },
    #[error("ledger {path}: sweep {sweep} was registered from a different plan (sha256 {stored}, now {given}); use a new sweep id or a new ledger")]
    PlanChanged { path: String, sweep: String, stored: String, given: String },
    #[error("ledger {path}: sweep {sweep} point {point}: cannot go from {from} to {to}")]
    BadTransition { path: String, sweep: String, point: String, from: String, to: String },
    #[error("ledger {path}: sweep {sweep} has no point {point}")]
    NoSuchPoint { path: String, sweep: String, point: String },
    #[error("ledger {path}: unreadable value {value:?} in column {column}")]
    Corrupt { path: String, column: &'static str, value: String },
}

pub struct Ledger {
    conn: Connection,
    path: String,
}

fn corrupt(column: usize, message: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(column, rusqlite::types::Type::Text, message.into())
}

/// A JSON text column, parsed (submit info).
fn json_column(row: &rusqlite::Row<'_>, column: usize) -> rusqlite::Result<Option<serde_json::Value>> {
    row.get::<_, Option<String>>(column)?
        .map(|text| serde_json::from_str(&text).map_err(|e| corrupt(column, format!("not JSON: {e}"))))
        .transpose()
}

/// A JSON text column, checked but kept as text (provenance).
fn stored_json_column(row: &rusqlite::Row<'_>, column: usize) -> rusqlite::Result<Option<StoredJson>> {
    row.get::<_, Option<String>>(column)?
        .map(|text| {
            serde_json::value::RawValue::from_string(text)
                .map(StoredJson)
                .map_err(|e| corrupt(column, format!("not JSON: {e}")))
        })
        .transpose()
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

impl Ledger {
    /// Opens (creating if needed) and migrates the ledger at `path`.
    pub fn open(path: &Path) -> Result<Ledger, LedgerError> {
        let shown = path.display().to_string();
        let sql = |source| LedgerError::Sqlite { path: shown.clone(), source };
        let conn = Connection::open(path).map_err(sql)?;
        conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(sql)?;
        // WAL: the `--cancel` process writes while a dispatcher reads; FULL sync: an intent
        // record must survive a power cut before sbatch runs.
        conn.pragma_update(None, "journal_mode", "WAL").map_err(sql)?;
        conn.pragma_update(None, "synchronous", "FULL").map_err(sql)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(sql)?;
        let mut ledger = Ledger { conn, path: shown };
        ledger.migrate()?;
        Ok(ledger)
    }

    fn sql(&self, source: rusqlite::Error) -> LedgerError {
        LedgerError::Sqlite { path: self.path.clone(), source }
    }

    fn migrate(&mut self) -> Result<(), LedgerError> {
        let known = MIGRATIONS.len() as i64;
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| LedgerError::Sqlite { path: self.path.clone(), source: e })?;
        let version: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| LedgerError::Sqlite { path: self.path.clone(), source: e })?;
        if version > known {
            return Err(LedgerError::TooNew { path: self.path.clone(), found: version, known });
        }
        for (index, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            tx.execute_batch(sql)
                .and_then(|_| tx.pragma_update(None, "user_version", index as i64 + 1))
                .map_err(|e| LedgerError::Sqlite { path: self.path.clone(), source: e })?;
        }
        tx.commit().map_err(|e| LedgerError::Sqlite { path: self.path.clone(), source: e })
    }

    pub fn schema_version(&self) -> Result<i64, LedgerError> {
        self.conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|e| self.sql(e))
    }

    /// Registers a sweep and its points as `planned`; a second call with the same plan is a
    /// no-op (resume), with a different plan an error.
    pub fn register_sweep(&mut self, seed: &SweepSeed<'_>) -> Result<(), LedgerError> {
        let path = self.path.clone();
        let sql = |source| LedgerError::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(sql)?;
        let stored: Option<String> = tx
            .query_row("SELECT plan_sha256 FROM sweep WHERE id = ?1", [seed.id], |r| r.get(0))
            .optional()
            .map_err(sql)?;
        match stored {
            Some(stored) if stored == seed.plan_sha256 => return Ok(()),
            Some(stored) => {
                return Err(LedgerError::PlanChanged {
                    path: path.clone(),
                    sweep: seed.id.to_string(),
                    stored,
                    given: seed.plan_sha256.to_string(),
                })
            }
            None => {}
        }
        let at = now();
        tx.execute(
            "INSERT INTO sweep (id, repo, pr, plan_sha256, job_prefix, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![seed.id, seed.repo, seed.pr as i64, seed.plan_sha256, seed.job_prefix, at],
        )
        .map_err(sql)?;
        {
            let mut insert = tx
                .prepare(
                    "INSERT INTO point (sweep_id, point_id, ord, family, is_canary, state, job_name, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, 'planned', ?6, ?7)",
                )
                .map_err(sql)?;
            for (ord, p) in seed.points.iter().enumerate() {
                insert
                    .execute(params![seed.id, p.point_id, ord as i64, p.family, p.is_canary, p.job_name, at])
                    .map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)
    }

    /// All points of a sweep in plan order.
    pub fn points(&self, sweep: &str) -> Result<Vec<PointRecord>, LedgerError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT point_id, ord, family, is_canary, state, job_name, job_id, sbatch_calls, cancel_reason,
                        reason, exit_code, state_source, provenance, submit_info
                 FROM point WHERE sweep_id = ?1 ORDER BY ord",
            )
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([sweep], |r| {
                let state: String = r.get(4)?;
                let state =
                    PointState::parse(&state).ok_or_else(|| corrupt(4, format!("unknown point state {state:?}")))?;
                Ok(PointRecord {
                    point_id: r.get(0)?,
                    ord: r.get(1)?,
                    family: r.get(2)?,
                    is_canary: r.get(3)?,
                    state,
                    job_name: r.get(5)?,
                    job_id: r.get::<_, Option<String>>(6)?.map(JobId),
                    sbatch_calls: r.get(7)?,
                    cancel_reason: r.get(8)?,
                    reason: r.get(9)?,
                    exit_code: r.get(10)?,
                    state_source: r.get(11)?,
                    provenance: stored_json_column(r, 12)?,
                    submit_info: json_column(r, 13)?,
                })
            })
            .map_err(|e| self.sql(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.sql(e))
    }

    /// Moves a point along one edge of the state machine, atomically checking where it was.
    fn transition(
        &mut self,
        sweep: &str,
        point: &str,
        to: PointState,
        update: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<()>,
        note: Option<&str>,
    ) -> Result<PointState, LedgerError> {
        let path = self.path.clone();
        let sql = |source| LedgerError::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(sql)?;
        let row: Option<(String, Option<String>)> = tx
            .query_row("SELECT state, job_id FROM point WHERE sweep_id = ?1 AND point_id = ?2", [sweep, point], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
            .map_err(sql)?;
        let Some((from_text, _)) = row else {
            return Err(LedgerError::NoSuchPoint { path, sweep: sweep.into(), point: point.into() });
        };
        let from = PointState::parse(&from_text).ok_or_else(|| LedgerError::Corrupt {
            path: path.clone(),
            column: "point.state",
            value: from_text.clone(),
        })?;
        if !from.can_go_to(to) {
            return Err(LedgerError::BadTransition {
                path,
                sweep: sweep.into(),
                point: point.into(),
                from: from.as_str().into(),
                to: to.as_str().into(),
            });
        }
        let at = now();
        tx.execute(
            "UPDATE point SET state = ?3, updated_at = ?4 WHERE sweep_id = ?1 AND point_id = ?2",
            params![sweep, point, to.as_str(), at],
        )
        .map_err(sql)?;
        update(&tx).map_err(sql)?;
        let job_id: Option<String> = tx
            .query_row("SELECT job_id FROM point WHERE sweep_id = ?1 AND point_id = ?2", [sweep, point], |r| r.get(0))
            .map_err(sql)?;
        tx.execute(
            "INSERT INTO transition (sweep_id, point_id, from_state, to_state, job_id, note, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![sweep, point, from.as_str(), to.as_str(), job_id, note, at],
        )
        .map_err(sql)?;
        tx.commit().map_err(sql)?;
        Ok(from)
    }

    /// Intent: this point is about to be given to sbatch (under its recorded job name).
    pub fn mark_submitting(&mut self, sweep: &str, point: &str) -> Result<(), LedgerError> {
        self.transition(sweep, point, PointState::Submitting, |_| Ok(()), None).map(drop)
    }

    /// sbatch returned this id (or a reconcile found the job under the point's name).
    pub fn mark_submitted(
        &mut self,
        sweep: &str,
        point: &str,
        job: &JobId,
        by_sbatch: bool,
        submit_info: &serde_json::Value,
    ) -> Result<(), LedgerError> {
        let (s, p) = (sweep.to_string(), point.to_string());
        let info = submit_info.to_string();
        let note = if by_sbatch { "sbatch" } else { "found by job name after a restart" };
        self.transition(
            sweep,
            point,
            PointState::Submitted,
            |tx| {
                tx.execute(
                    "UPDATE point SET job_id = ?3, sbatch_calls = sbatch_calls + ?4, submit_info = ?5
                     WHERE sweep_id = ?1 AND point_id = ?2",
                    params![s, p, job.0, by_sbatch as i64, info],
                )
                .map(drop)
            },
            Some(note),
        )
        .map(drop)
    }

    /// The intent had no effect (sbatch failed, or nothing carries the name): plan again.
    pub fn back_to_planned(&mut self, sweep: &str, point: &str, why: &str) -> Result<(), LedgerError> {
        self.transition(sweep, point, PointState::Planned, |_| Ok(()), Some(why)).map(drop)
    }

    pub fn mark_running(&mut self, sweep: &str, point: &str) -> Result<(), LedgerError> {
        self.transition(sweep, point, PointState::Running, |_| Ok(()), None).map(drop)
    }

    /// A terminal state with its outcome and provenance.
    pub fn finish(&mut self, sweep: &str, point: &str, to: PointState, outcome: &Outcome) -> Result<(), LedgerError> {
        let (s, p) = (sweep.to_string(), point.to_string());
        let provenance = outcome.provenance.as_ref().map(|v| v.to_string());
        self.transition(
            sweep,
            point,
            to,
            |tx| {
                tx.execute(
                    "UPDATE point SET reason = ?3, exit_code = ?4, state_source = ?5, provenance = ?6
                     WHERE sweep_id = ?1 AND point_id = ?2",
                    params![s, p, outcome.reason, outcome.exit_code, outcome.state_source, provenance],
                )
                .map(drop)
            },
            outcome.reason.as_deref(),
        )
        .map(drop)
    }

    /// Intent to cancel one point's job (fail-fast), recorded before scancel.
    pub fn set_cancel_reason(&mut self, sweep: &str, point: &str, reason: &str) -> Result<(), LedgerError> {
        self.conn
            .execute(
                "UPDATE point SET cancel_reason = ?3 WHERE sweep_id = ?1 AND point_id = ?2 AND cancel_reason IS NULL",
                params![sweep, point, reason],
            )
            .map(drop)
            .map_err(|e| self.sql(e))
    }

    /// Records a cancel request for every sweep of this repository's PR; returns their ids.
    pub fn request_cancel(&mut self, repo: &str, pr: u64) -> Result<Vec<String>, LedgerError> {
        self.conn
            .execute(
                "UPDATE sweep SET cancel_requested_at = ?3 WHERE repo = ?1 AND pr = ?2 AND cancel_requested_at IS NULL",
                params![repo, pr as i64, now()],
            )
            .map_err(|e| self.sql(e))?;
        let mut stmt = self
            .conn
            .prepare("SELECT id FROM sweep WHERE repo = ?1 AND pr = ?2 ORDER BY id")
            .map_err(|e| self.sql(e))?;
        let ids = stmt
            .query_map(params![repo, pr as i64], |r| r.get::<_, String>(0))
            .map_err(|e| self.sql(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.sql(e))?;
        Ok(ids)
    }

    pub fn cancel_requested(&self, sweep: &str) -> Result<bool, LedgerError> {
        self.conn
            .query_row("SELECT cancel_requested_at IS NOT NULL FROM sweep WHERE id = ?1", [sweep], |r| r.get(0))
            .optional()
            .map(|v| v.unwrap_or(false))
            .map_err(|e| self.sql(e))
    }

    /// Number of recorded transitions into `to` for one point (for audits and tests).
    pub fn transitions_into(&self, sweep: &str, point: &str, to: PointState) -> Result<i64, LedgerError> {
        self.conn
            .query_row(
                "SELECT count(*) FROM transition WHERE sweep_id = ?1 AND point_id = ?2 AND to_state = ?3",
                params![sweep, point, to.as_str()],
                |r| r.get(0),
            )
            .map_err(|e| self.sql(e))
    }
}

/// A point record as the dispatcher's and engine's unit tests need it (active states carry a
/// job id).
#[cfg(test)]
pub(crate) fn test_record(id: &str, family: &str, canary: bool, state: PointState) -> PointRecord {
    PointRecord {
        point_id: id.into(),
        ord: 0,
        family: family.into(),
        is_canary: canary,
        state,
        job_name: format!("sg-{id}"),
        job_id: state.is_active().then(|| JobId(format!("{}", id.len()))),
        sbatch_calls: 0,
        submit_info: None,
        cancel_reason: None,
        reason: None,
        exit_code: None,
        state_source: None,
        provenance: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed<'a>(plan: &'a str) -> SweepSeed<'a> {
        SweepSeed {
            id: "s1",
            repo: "acme/bench",
            pr: 7,
            plan_sha256: plan,
            job_prefix: "sg-x-pr7-",
            points: vec![
                PointSeed { point_id: "c0", family: "f", is_canary: true, job_name: "sg-x-pr7-s-c0".into() },
                PointSeed { point_id: "a1", family: "f", is_canary: false, job_name: "sg-x-pr7-s-a1".into() },
            ],
        }
    }

    fn open_temp() -> (tempfile::TempDir, Ledger) {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("ledger.db")).unwrap();
        (dir, ledger)
    }

    #[test]
    fn state_machine_edges() {
        use PointState::*;
        assert!(Planned.can_go_to(Submitting));
        assert!(Planned.can_go_to(Skipped));
        assert!(!Planned.can_go_to(Submitted), "no submission without an intent record");
        assert!(Submitting.can_go_to(Planned));
        assert!(!Submitting.can_go_to(Succeeded));
        assert!(Submitted.can_go_to(Succeeded));
        assert!(!Submitted.can_go_to(Skipped));
        assert!(Running.can_go_to(TimedOut));
        for terminal in PointState::ALL.into_iter().filter(|s| s.is_terminal()) {
            assert!(PointState::ALL.iter().all(|to| !terminal.can_go_to(*to)), "{terminal:?} is final");
            assert_eq!(PointState::parse(terminal.as_str()), Some(terminal));
        }
        assert_eq!(PointState::parse("bogus"), None);
    }

    #[test]
    fn register_is_idempotent_and_detects_a_changed_plan() {
        let (_dir, mut ledger) = open_temp();
        ledger.register_sweep(&seed("aaa")).unwrap();
        ledger.register_sweep(&seed("aaa")).unwrap();
        let points = ledger.points("s1").unwrap();
        assert_eq!(points.len(), 2);
        assert!(points.iter().all(|p| p.state == PointState::Planned));
        assert!(points[0].is_canary);
        let err = ledger.register_sweep(&seed("bbb")).unwrap_err();
        assert!(matches!(err, LedgerError::PlanChanged { .. }), "{err}");
    }

    #[test]
    fn full_lifecycle_is_recorded_and_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.db");
        {
            let mut ledger = Ledger::open(&path).unwrap();
            ledger.register_sweep(&seed("p")).unwrap();
            ledger.mark_submitting("s1", "a1").unwrap();
            ledger.mark_submitted("s1", "a1", &JobId("42".into()), true, &serde_json::json!({"h": 1})).unwrap();
            ledger.mark_running("s1", "a1").unwrap();
            let outcome = Outcome {
                reason: None,
                exit_code: Some(0),
                state_source: Some("squeue".into()),
                provenance: Some(serde_json::json!({"job_id": "42"})),
            };
            ledger.finish("s1", "a1", PointState::Succeeded, &outcome).unwrap();
        }
        let ledger = Ledger::open(&path).unwrap();
        assert_eq!(ledger.schema_version().unwrap(), MIGRATIONS.len() as i64);
        let a1 = ledger.points("s1").unwrap().into_iter().find(|p| p.point_id == "a1").unwrap();
        assert_eq!(a1.state, PointState::Succeeded);
        assert_eq!(a1.job_id, Some(JobId("42".into())));
        assert_eq!(a1.sbatch_calls, 1);
        assert_eq!(a1.submit_info, Some(serde_json::json!({"h": 1})));
        assert_eq!(a1.provenance.map(|p| p.value().unwrap()), Some(serde_json::json!({"job_id": "42"})));
        assert_eq!(ledger.transitions_into("s1", "a1", PointState::Submitted).unwrap(), 1);
    }

    #[test]
    fn illegal_transitions_and_unknown_points_are_errors() {
        let (_dir, mut ledger) = open_temp();
        ledger.register_sweep(&seed("p")).unwrap();
        let err = ledger.mark_running("s1", "a1").unwrap_err();
        assert!(matches!(err, LedgerError::BadTransition { .. }), "{err}");
        assert!(err.to_string().contains("planned to running"), "{err}");
        let err = ledger.mark_submitting("s1", "nope").unwrap_err();
        assert!(matches!(err, LedgerError::NoSuchPoint { .. }));
        ledger.finish("s1", "a1", PointState::Skipped, &Outcome::default()).unwrap();
        assert!(ledger.mark_submitting("s1", "a1").is_err(), "skipped is final");
    }

    #[test]
    fn reconcile_found_job_does_not_count_as_an_sbatch_call() {
        let (_dir, mut ledger) = open_temp();
        ledger.register_sweep(&seed("p")).unwrap();
        ledger.mark_submitting("s1", "c0").unwrap();
        ledger.mark_submitted("s1", "c0", &JobId("9".into()), false, &serde_json::json!({})).unwrap();
        ledger.mark_submitting("s1", "a1").unwrap();
        ledger.back_to_planned("s1", "a1", "sbatch failed").unwrap();
        let points = ledger.points("s1").unwrap();
        assert_eq!(points[0].sbatch_calls, 0);
        assert_eq!(points[1].state, PointState::Planned);
    }

    #[test]
    fn cancel_requests_are_scoped_to_repo_and_pr() {
        let (_dir, mut ledger) = open_temp();
        ledger.register_sweep(&seed("p")).unwrap();
        assert!(!ledger.cancel_requested("s1").unwrap());
        assert!(ledger.request_cancel("acme/bench", 8).unwrap().is_empty());
        assert!(ledger.request_cancel("other/repo", 7).unwrap().is_empty());
        assert!(!ledger.cancel_requested("s1").unwrap());
        assert_eq!(ledger.request_cancel("acme/bench", 7).unwrap(), ["s1"]);
        assert!(ledger.cancel_requested("s1").unwrap());
        ledger.set_cancel_reason("s1", "a1", "first").unwrap();
        ledger.set_cancel_reason("s1", "a1", "second").unwrap();
        assert_eq!(ledger.points("s1").unwrap()[1].cancel_reason.as_deref(), Some("first"));
    }

    #[test]
    fn concurrent_connections_wait_instead_of_failing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.db");
        let ids: Vec<String> = (0..100).map(|i| format!("p{i}")).collect();
        let mut seed = seed("p");
        seed.points = ids
            .iter()
            .map(|id| PointSeed { point_id: id, family: "f", is_canary: false, job_name: format!("n-{id}") })
            .collect();
        Ledger::open(&path).unwrap().register_sweep(&seed).unwrap();
        let writer_path = path.clone();
        let writer = std::thread::spawn(move || {
            let mut ledger = Ledger::open(&writer_path).unwrap();
            for i in 0..100 {
                ledger.mark_submitting("s1", &format!("p{i}")).unwrap();
            }
        });
        for _ in 0..50 {
            let mut other = Ledger::open(&path).unwrap();
            other.points("s1").unwrap();
            other.request_cancel("acme/bench", 7).unwrap();
        }
        writer.join().unwrap();
        let points = Ledger::open(&path).unwrap().points("s1").unwrap();
        assert!(points.iter().all(|p| p.state == PointState::Submitting));
    }

    #[test]
    fn corrupt_state_is_an_error_naming_the_column() {
        let (_dir, mut ledger) = open_temp();
        ledger.register_sweep(&seed("p")).unwrap();
        ledger.conn.execute("UPDATE point SET state = 'bogus' WHERE point_id = 'a1'", []).unwrap();
        let err = ledger.points("s1").unwrap_err().to_string();
        assert!(err.contains("unknown point state \"bogus\""), "{err}");
    }

    #[test]
    fn provenance_that_is_not_json_is_an_error_and_json_stays_as_written() {
        let (_dir, mut ledger) = open_temp();
        ledger.register_sweep(&seed("p")).unwrap();
        ledger.conn.execute(r#"UPDATE point SET provenance = '{"b": 1, "a": [2]}' WHERE point_id = 'a1'"#, []).unwrap();
        let a1 = ledger.points("s1").unwrap().into_iter().find(|p| p.point_id == "a1").unwrap();
        let provenance = a1.provenance.unwrap();
        assert_eq!(serde_json::to_string(&provenance).unwrap(), r#"{"b": 1, "a": [2]}"#);
        assert_eq!(provenance.value().unwrap(), serde_json::json!({"b": 1, "a": [2]}));
        ledger.conn.execute("UPDATE point SET provenance = '{truncated' WHERE point_id = 'a1'", []).unwrap();
        let err = ledger.points("s1").unwrap_err().to_string();
        assert!(err.contains("not JSON"), "{err}");
    }

    #[test]
    fn newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.db");
        Connection::open(&path).unwrap().pragma_update(None, "user_version", 99).unwrap();
        let err = Ledger::open(&path).err().unwrap();
        assert!(matches!(err, LedgerError::TooNew { found: 99, .. }), "{err}");
    }

    #[test]
    fn garbage_file_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.db");
        std::fs::write(&path, b"this is not a database, just text padding to be long enough ....").unwrap();
        assert!(Ledger::open(&path).is_err());
    }
}
