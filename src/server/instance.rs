//! One server per state: `serve` holds an exclusive lock on a file beside its state for as
//! long as it runs (`flock`-style, through std's `File::try_lock`). The operating system drops
//! the lock with the process, even on SIGKILL, so a stale lock file never blocks a restart. A
//! second server on the same state exits at once, naming the holder's pid; two servers would
//! re-queue and handle each other's in-flight deliveries (issue 24).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The held lock; dropping it (or the process ending) releases it.
#[derive(Debug)]
pub struct InstanceLock {
    _file: File,
    path: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    #[error("another sweepgate serve (pid {pid}) holds {state}")]
    Held { pid: String, state: String },
    #[error("cannot lock {path}: {source}")]
    Io { path: String, source: std::io::Error },
}

impl InstanceLock {
    /// Locks `state` (a state file or directory) through `<state>.lock` beside it, and writes this
    /// process's pid into it for the next server's refusal.
    pub fn acquire(state: &Path) -> Result<InstanceLock, InstanceError> {
        let path = lock_path(state);
        let io = |source| InstanceError::Io { path: path.display().to_string(), source };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let mut file =
            OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut pid = String::new();
                // The holder writes its pid right after locking; an empty read names no pid.
                let _ = file.read_to_string(&mut pid);
                let pid = pid.trim();
                let pid = if pid.is_empty() || pid.len() > 20 { "unknown".to_owned() } else { pid.to_owned() };
                return Err(InstanceError::Held { pid, state: state.display().to_string() });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        file.set_len(0).and_then(|()| file.rewind()).map_err(io)?;
        writeln!(file, "{}", std::process::id()).and_then(|()| file.flush()).map_err(io)?;
        Ok(InstanceLock { _file: file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// `<state>.lock` beside the state (file or directory, existing or not yet: the same name
/// either way, so the first start and the next agree).
fn lock_path(state: &Path) -> PathBuf {
    let mut name = state.file_name().map(std::ffi::OsStr::to_os_string).unwrap_or_default();
    name.push(".lock");
    state.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_ones_pid_until_it_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("deep/state.sqlite");
        let first = InstanceLock::acquire(&state).unwrap();
        assert_eq!(first.path(), dir.path().join("deep/state.sqlite.lock"));
        let err = InstanceLock::acquire(&state).unwrap_err().to_string();
        assert_eq!(err, format!("another sweepgate serve (pid {}) holds {}", std::process::id(), state.display()));
        drop(first);
        let again = InstanceLock::acquire(&state).unwrap();
        assert_eq!(std::fs::read_to_string(again.path()).unwrap(), format!("{}\n", std::process::id()));
    }

    #[test]
    fn a_state_directory_is_locked_beside_it_whether_or_not_it_exists_yet() {
        let dir = tempfile::tempdir().unwrap();
        let sweeps = dir.path().join("sweeps");
        let held = InstanceLock::acquire(&sweeps).unwrap();
        assert_eq!(held.path(), dir.path().join("sweeps.lock"));
        std::fs::create_dir(&sweeps).unwrap();
        assert!(matches!(InstanceLock::acquire(&sweeps), Err(InstanceError::Held { .. })));
    }
}
