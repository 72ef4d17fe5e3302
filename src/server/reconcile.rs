//! The periodic reconcile (`--reconcile-secs`): every period, list the open PRs of each
//! repository deliveries came from and queue each for the label handler under the bot's own
//! action `RECONCILE_ACTION` (label policy and status; no welcome; fork approval from the bot's
//! marker; unlike a real `synchronize`, never a cancel of the PR's jobs for a new head). The
//! handler is idempotent, so a PR whose delivery was missed is repaired and any other is left
//! unchanged. Jobs go through the PR's worker shard, in order with its webhook events.
//! The same job repairs sign-offs (`handlers::signoff::repair`): a required status left
//! `pending`, or missing while the newest eligible sign-off has no verdict, is verified again.
//! Bounded: at most `max_prs` PRs per pass, the most recently updated first; the pass starts at
//! a different repository each time so that none is starved.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::MissedTickBehavior;

use super::state::StateDb;
use super::{Clients, Job, Queues};
use crate::github::types::User;
use crate::github::{GitHub, GitHubError};
use crate::intake::event::{Event, PullRequestEvent};
use crate::server::handlers::RECONCILE_ACTION;
use crate::server::metrics::{Metrics, ReconcilePass};

pub(super) struct Reconciler<C> {
    pub clients: Arc<C>,
    pub state: Arc<StateDb>,
    pub queues: Arc<Queues>,
    pub metrics: Arc<Metrics>,
    pub bot_login: String,
    pub max_prs: usize,
}

impl<C: Clients> Reconciler<C> {
    pub async fn run(self, every: Duration) {
        let mut ticker = tokio::time::interval(every);
        ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
        ticker.tick().await; // the first tick is immediate: the first pass waits one period
        for pass in 1u64.. {
            ticker.tick().await;
            let done = self.pass(pass).await;
            tracing::info!(
                pass,
                repos = done.repos,
                queued = done.queued,
                skipped = done.skipped,
                errors = done.errors,
                "reconcile pass"
            );
            self.metrics.reconciled(&done);
        }
    }

    async fn pass(&self, pass: u64) -> ReconcilePass {
        let repos = self.state.known_repos();
        let mut done = ReconcilePass { repos: repos.len(), ..ReconcilePass::default() };
        let start = if repos.is_empty() { 0 } else { (pass as usize) % repos.len() };
        let mut budget = self.max_prs;
        for (repo, installation) in repos.iter().cycle().skip(start).take(repos.len()) {
            if budget == 0 {
                break;
            }
            let listed = match self.clients.client(*installation) {
                Ok(gh) => gh.list_open_pulls(repo, budget).await,
                Err(err) => Err(err),
            };
            let pulls = match listed {
                Ok(pulls) => pulls,
                Err(GitHubError::DryRun(_)) => {
                    tracing::debug!("reconcile: dry-run mode cannot list pull requests");
                    return done;
                }
                Err(err) => {
                    done.errors += 1;
                    tracing::warn!(%repo, "reconcile: listing open pull requests failed: {err}");
                    continue;
                }
            };
            for pull in pulls.into_iter().take(budget) {
                budget -= 1;
                let number = pull.number;
                let event = Event::PullRequest(Box::new(PullRequestEvent {
                    action: RECONCILE_ACTION.into(),
                    repo: repo.clone(),
                    installation_id: *installation,
                    pull,
                    label: None,
                    previous_base: None,
                    sender: Some(User { login: self.bot_login.clone(), kind: "Bot".into() }),
                }));
                let job = Job { delivery: format!("reconcile-{pass}-{repo}#{number}"), event };
                if self.queues.enqueue(repo, number, job) {
                    done.queued += 1;
                } else {
                    done.skipped += 1;
                }
            }
        }
        done
    }
}
