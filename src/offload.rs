//! The CPU work of a verification or a preflight (the PR model and the checks over a collected
//! Evidence) runs on a blocking thread with a deadline (issue 35, decision HT3). On the async
//! runtime's threads a PR's launcher that took the checks 17 s left `/healthz` and every other
//! PR's webhook unanswered as long; here the runtime only waits. Past the deadline the
//! verification is a named failure; the thread finishes on its own (every evaluation is
//! bounded) while holding one of the few slots, so overrunning PRs cannot take every core.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::evidence::Evidence;

/// How long the checks of one verification or preflight may take by default
/// (`serve --verify-deadline-secs`); the real repository's verifications take a few seconds.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(60);

/// Checks running at once, over every worker: one per core.
static SLOTS: LazyLock<Arc<Semaphore>> = LazyLock::new(|| {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    Arc::new(Semaphore::new(cores))
});

/// Why the checks gave no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Overrun {
    #[error("the checks did not finish within the verification deadline of {} s", .0.as_secs())]
    Deadline(Duration),
    #[error("the checks stopped with an internal error: {0}")]
    Panicked(String),
}

/// Runs `work` over `evidence` on a blocking thread; waiting for a free slot counts toward
/// `deadline`.
pub async fn run_checks<T: Send + 'static>(
    deadline: Duration,
    evidence: Arc<Evidence>,
    work: impl FnOnce(&Evidence) -> T + Send + 'static,
) -> Result<T, Overrun> {
    let run = async {
        let slot = SLOTS.clone().acquire_owned().await.map_err(|e| Overrun::Panicked(e.to_string()))?;
        let job = tokio::task::spawn_blocking(move || {
            let _slot = slot;
            work(&evidence)
        });
        job.await.map_err(|e| {
            let why = match e.try_into_panic() {
                Ok(payload) => payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".to_owned()),
                Err(e) => e.to_string(),
            };
            Overrun::Panicked(why)
        })
    };
    tokio::time::timeout(deadline, run).await.unwrap_or(Err(Overrun::Deadline(deadline)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence() -> Arc<Evidence> {
        let bundle = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bundles/append-only-new-point");
        Arc::new(crate::evidence::read_bundle(&bundle).unwrap())
    }

    #[tokio::test(flavor = "current_thread")]
    async fn the_checks_run_off_the_runtime_and_a_deadline_or_a_panic_is_named() {
        let ev = evidence();
        let verdict = run_checks(DEFAULT_DEADLINE, ev.clone(), crate::checks::verify).await.unwrap();
        assert_eq!(verdict.word, crate::checks::verify(&ev).word);
        // The single runtime thread stays free while the checks run past their deadline.
        let slow = run_checks(Duration::from_millis(100), ev.clone(), |_| std::thread::sleep(Duration::from_secs(1)));
        let ticks = async {
            let mut n = 0;
            while n < 5 {
                tokio::time::sleep(Duration::from_millis(10)).await;
                n += 1;
            }
            n
        };
        let (slow, ticks) = tokio::join!(slow, ticks);
        assert_eq!((slow, ticks), (Err(Overrun::Deadline(Duration::from_millis(100))), 5));
        let panicked = run_checks(DEFAULT_DEADLINE, ev, |_| panic!("boom")).await.unwrap_err();
        assert_eq!(panicked, Overrun::Panicked("boom".into()));
        assert_eq!(
            Overrun::Deadline(Duration::from_secs(60)).to_string(),
            "the checks did not finish within the verification deadline of 60 s"
        );
    }
}
