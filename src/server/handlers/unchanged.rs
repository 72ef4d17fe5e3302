//! A push that changes no file (issue 35 case 9, docs/decisions.md HT12). Every push used to
//! get a full collection, empty commits included (44 GitHub requests and 2 tarballs). The
//! server now keeps, per PR, what it posted on the last head it judged in full: the label
//! status, the sign-off status, the preflight report, and the change they were computed for
//! (base commit and branch, labels, draft). A push whose new commits hold exactly that head's
//! files, on one line of history from it (so the merge base and the PR's diff are the same), is
//! answered from that record: one comparison, then the same statuses and preflight report on
//! the new head. Anything else (another base, a label change, a merge, a file changed, a fork,
//! a sign-off status other than `success`, no record) is handled in full.

use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

use super::shared_head::{shared_head_description, uncovered_sharer};
use super::{BotConfig, HandlerError, Outcome};
use crate::github::types::{Comparison, PullRequest, StatusInput, StatusState};
use crate::github::{GitHub, GitHubError, RepoRef};
use crate::intake::event::PullRequestEvent;
use crate::intake::labels::{self, PrFacts};
use crate::server::state::StateDb;

/// What was posted on each PR's last judged head, kept in the server's state file once
/// [`JudgedHeads::attach`]ed; without a state file (`sweepgate action`) nothing is kept and
/// every push is handled in full.
#[derive(Default)]
pub struct JudgedHeads {
    store: OnceLock<Arc<StateDb>>,
}

impl std::fmt::Debug for JudgedHeads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JudgedHeads").field("stored", &self.store.get().is_some()).finish()
    }
}

/// The record of one PR's last judged head.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Judged {
    head: String,
    /// Set when a push, label or retarget event was handled in full at `head`.
    change: Option<JudgedChange>,
    labels: Option<PostedLabels>,
    signoff: Option<PostedStatus>,
    preflight: Option<PostedPreflight>,
}

/// What the head's statuses were computed for, besides its files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct JudgedChange {
    base_sha: String,
    base_ref: String,
    /// Sorted.
    labels: Vec<String>,
    draft: bool,
}

impl JudgedChange {
    pub(super) fn of(pull: &PullRequest) -> JudgedChange {
        let mut labels: Vec<String> = pull.label_names().into_iter().map(str::to_owned).collect();
        labels.sort();
        JudgedChange {
            base_sha: pull.base.sha.clone(),
            base_ref: pull.base.ref_name.clone(),
            labels,
            draft: pull.draft,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct PostedStatus {
    pub state: StatusState,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct PostedLabels {
    pub status: PostedStatus,
    /// The head commit's message asked for no sweep (the one fact of the label decision that
    /// a new commit with the same files can change).
    pub skip_sweep: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct PostedPreflight {
    pub conclusion: String,
    pub title: String,
    pub summary: String,
}

/// One thing posted on a head.
pub(super) enum Posted {
    Labels(PostedLabels),
    Signoff(PostedStatus),
    Preflight(PostedPreflight),
}

impl JudgedHeads {
    /// Keeps the records in `state` from now on.
    pub fn attach(&self, state: Arc<StateDb>) {
        // Attached once per server; a second attach keeps the first store.
        let _ = self.store.set(state);
    }

    fn get(&self, repo: &RepoRef, pr: u64) -> Option<Judged> {
        let store = self.store.get()?;
        match store.judged(&repo.to_string(), pr) {
            Ok(record) => record.and_then(|text| serde_json::from_str(&text).ok()),
            Err(err) => {
                tracing::warn!(%err, "reading the PR's judged head (the push is handled in full)");
                None
            }
        }
    }

    fn put(&self, repo: &RepoRef, pr: u64, judged: &Judged) {
        let Some(store) = self.store.get() else { return };
        let written = serde_json::to_string(judged)
            .map_err(|e| e.to_string())
            .and_then(|text| store.put_judged(&repo.to_string(), pr, &text).map_err(|e| e.to_string()));
        if let Err(err) = written {
            tracing::warn!(%err, "recording the PR's judged head (its next push is handled in full)");
        }
    }

    /// Records `posted` on `head`; a record of another head is replaced.
    pub(super) fn posted(&self, repo: &RepoRef, pr: u64, head: &str, posted: Posted) {
        if self.store.get().is_none() {
            return;
        }
        let mut judged = self
            .get(repo, pr)
            .filter(|j| j.head == head)
            .unwrap_or_else(|| Judged { head: head.to_owned(), ..Judged::default() });
        match posted {
            Posted::Labels(labels) => judged.labels = Some(labels),
            Posted::Signoff(status) => judged.signoff = Some(status),
            Posted::Preflight(preflight) => judged.preflight = Some(preflight),
        }
        self.put(repo, pr, &judged);
    }

    /// `head` was handled in full for `change`.
    pub(super) fn judged(&self, repo: &RepoRef, pr: u64, head: &str, change: JudgedChange) {
        if self.store.get().is_none() {
            return;
        }
        let mut judged = self
            .get(repo, pr)
            .filter(|j| j.head == head)
            .unwrap_or_else(|| Judged { head: head.to_owned(), ..Judged::default() });
        judged.change = Some(change);
        self.put(repo, pr, &judged);
    }
}

/// Whether `comparison` (from the judged head to `head`) adds only commits of one parent each
/// and changes no file: the same files, the same merge base, so the same diff.
fn same_files(comparison: &Comparison, head: &str) -> bool {
    comparison.status == "ahead"
        && comparison.behind_by == 0
        && comparison.files.is_empty()
        && comparison.total_commits as usize == comparison.commits.len()
        && comparison.commits.iter().all(|c| c.parents.len() == 1)
        && comparison.commits.last().is_some_and(|c| c.sha == head)
}

/// Answers a `synchronize` whose new head holds the files of the PR's last judged head from
/// the record (see the module). `Ok(false)`: handle the push in full.
pub(super) async fn answer_unchanged<G: GitHub>(
    gh: &G,
    cfg: &BotConfig,
    e: &PullRequestEvent,
    out: &mut Outcome,
) -> Result<bool, HandlerError> {
    let pull = &e.pull;
    let Some(judged) = cfg.verify.judged.get(&e.repo, pull.number) else { return Ok(false) };
    let (Some(change), Some(labels)) = (&judged.change, &judged.labels) else { return Ok(false) };
    // A fork's label approval names its head; a new head is decided again.
    if pull.is_fork() || pull.state != "open" || *change != JudgedChange::of(pull) {
        return Ok(false);
    }
    let preflight = match (&judged.preflight, cfg.verify.preflight) {
        (None, true) => return Ok(false),
        (found, _) => found.as_ref().filter(|_| cfg.verify.preflight),
    };
    // A verification still running (or interrupted) at the judged head decides nothing yet; a
    // failing sign-off is followed in full, so that its verdict moves to the new head (the
    // reconcile watches a verdict's linked recipe PRs only at the PR's head).
    if judged.signoff.as_ref().is_some_and(|s| s.state != StatusState::Success) {
        return Ok(false);
    }
    let head = pull.head.sha.as_str();
    // A redelivery of the judged head is handled in full: its writes are idempotent, and they
    // repair what was lost meanwhile (a deleted comment).
    if judged.head == head {
        return Ok(false);
    }
    let comparison = match gh.compare_commits(&e.repo, &judged.head, head).await {
        Ok(comparison) => comparison,
        Err(GitHubError::DryRun(_)) => return Ok(false),
        Err(err) => {
            out.note(format!("comparing {} with {head} failed ({err}): the push is handled in full", judged.head));
            return Ok(false);
        }
    };
    if !same_files(&comparison, head) {
        return Ok(false);
    }
    let message = comparison.commits.last().map(|c| c.commit.message.clone());
    let facts = PrFacts { head_message: message, ..PrFacts::default() };
    let skip_sweep = labels::decide::<&str>(&[], &facts).reasons.iter().any(|r| r.code == "skip-sweep");
    if skip_sweep != labels.skip_sweep {
        return Ok(false);
    }
    let short = judged.head.get(..7).unwrap_or(&judged.head);
    out.note(format!("{head} holds the files of {} (judged): its statuses are posted again", judged.head));
    let target_url = cfg.verify.details.as_ref().map(|d| d.url(&e.repo, pull.number));
    let status = |context: &str, posted: &PostedStatus| StatusInput {
        state: posted.state,
        context: context.to_owned(),
        description: posted.description.clone(),
        target_url: target_url.clone(),
    };
    gh.create_status(&e.repo, head, &status(&cfg.status_context, &labels.status)).await?;
    out.note(format!("status {} {:?} on {head}: same files as {short}", cfg.status_context, labels.status.state));
    out.decision = Some(if labels.status.state == StatusState::Success { "sweep" } else { "no-sweep" });
    if let (Some(context), Some(signoff)) = (&cfg.verify.status_context, &judged.signoff) {
        // Another open PR at the new head needs its own approved sign-off (HT15).
        let sharer = match signoff.state {
            StatusState::Success => uncovered_sharer(gh, &cfg.bot_login, &e.repo, pull.number, head).await?,
            _ => None,
        };
        let posted = match sharer {
            Some(sharer) => PostedStatus { state: StatusState::Failure, description: shared_head_description(sharer) },
            None => signoff.clone(),
        };
        gh.create_status(&e.repo, head, &status(context, &posted)).await?;
        out.note(format!("status {context} {:?} on {head}: same files as {short}", posted.state));
    }
    if let Some(preflight) = preflight {
        let title = format!("{} · same files as {short} / 文件与 {short} 相同", preflight.title);
        let input = preflight.check_run(head, target_url.clone(), title);
        out.preflight = Some(preflight.summary.clone());
        match gh.create_check_run(&e.repo, &input).await {
            Ok(_) => out.note(format!("preflight on {head}: {} (same files as {short})", preflight.conclusion)),
            Err(GitHubError::Http { status: 403, .. }) => out.note(format!("preflight on {head}: check run refused")),
            Err(err) => return Err(err.into()),
        }
    }
    cfg.verify.judged.put(&e.repo, pull.number, &Judged { head: head.to_owned(), ..judged.clone() });
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::types::{CommitDetail, ComparedCommit, ComparedFile, ParentRef};

    fn commit(sha: &str, parents: &[&str]) -> ComparedCommit {
        ComparedCommit {
            sha: sha.into(),
            commit: CommitDetail { message: "empty".into() },
            parents: parents.iter().map(|p| ParentRef { sha: (*p).into() }).collect(),
        }
    }

    #[test]
    fn a_record_holds_one_head_and_survives_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let repo = RepoRef::parse("o/r").unwrap();
        let status = |state| PostedStatus { state, description: "d".into() };
        let heads = JudgedHeads::default();
        heads.posted(&repo, 7, "h1", Posted::Signoff(status(StatusState::Success)));
        assert_eq!(heads.get(&repo, 7), None, "without a state file nothing is kept");
        heads.attach(std::sync::Arc::new(StateDb::open(&path).unwrap()));
        let labels = PostedLabels { status: status(StatusState::Success), skip_sweep: false };
        heads.posted(&repo, 7, "h1", Posted::Labels(labels.clone()));
        let change = JudgedChange { base_sha: "b".into(), base_ref: "main".into(), labels: vec![], draft: false };
        heads.judged(&repo, 7, "h1", change.clone());
        let restarted = JudgedHeads::default();
        restarted.attach(std::sync::Arc::new(StateDb::open(&path).unwrap()));
        let kept = restarted.get(&repo, 7).unwrap();
        assert_eq!((kept.head.as_str(), kept.labels, kept.change), ("h1", Some(labels), Some(change)));
        restarted.posted(&repo, 7, "h2", Posted::Signoff(status(StatusState::Failure)));
        let moved = restarted.get(&repo, 7).unwrap();
        assert_eq!(
            (moved.head.as_str(), moved.labels, moved.change, moved.signoff),
            ("h2", None, None, Some(status(StatusState::Failure))),
            "a status on another head starts that head's record"
        );
    }

    #[test]
    fn only_single_parent_commits_that_change_no_file_keep_the_files() {
        let empty = Comparison {
            status: "ahead".into(),
            behind_by: 0,
            total_commits: 2,
            commits: vec![commit("b", &["a"]), commit("c", &["b"])],
            files: vec![],
        };
        assert!(same_files(&empty, "c"));
        assert!(!same_files(&empty, "b"), "the comparison must end at the new head");
        let changed = Comparison { files: vec![ComparedFile { filename: "x".into() }], ..empty.clone() };
        assert!(!same_files(&changed, "c"), "a file changed");
        let merged = Comparison { commits: vec![commit("b", &["a"]), commit("c", &["b", "m"])], ..empty.clone() };
        assert!(!same_files(&merged, "c"), "a merge (even `-s ours`) moves the merge base");
        let unlisted = Comparison { total_commits: 300, ..empty.clone() };
        assert!(!same_files(&unlisted, "c"), "commits not listed are not known to be single-parent");
        for status in ["identical", "behind", "diverged"] {
            assert!(!same_files(&Comparison { status: status.into(), ..empty.clone() }, "c"), "{status}");
        }
    }
}
