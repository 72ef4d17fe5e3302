//! The sign-off verifier wired to events (spec 30 §1, ARCHITECTURE decisions 2-3): collect the
//! Evidence at a pinned head, decide, upsert the ONE verdict comment of that sign-off resource
//! (found again by its marker among the bot's own comments), and set the commit status
//! `codeowner-signoff-verify` on the pinned head: pending while verifying, then success on
//! APPROVED or failure on REJECTED (or when evidence could not be collected).
//! Before any of that, an event's sign-off must be *eligible* (`intake::eligibility`): an
//! ineligible one gets one short bilingual reply, edited in place per PR, and never touches
//! the status, so a stranger's pasted checklist costs a handful of API calls, not a collection.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::json;

use crate::checks::c03_upstream_recipe::{awaited_pulls, MAX_AWAITED};
use crate::checks::c14_pareto_coverage::FrontierChart;
use crate::checks::{verify, VerdictWord};
use crate::domain::upstream_links::RECIPE_REPOSITORIES;
use crate::evidence::collect::{
    collect, resolve_policy, CollectError, CollectLimits, CollectRequest, Known, UpstreamClient, UpstreamConfig,
};
use crate::evidence::Fact;
use crate::github::types::{
    BranchActivity, CollaboratorPermission, Comment, PullRequest, SignoffResource, StatusInput, StatusState, User,
};
use crate::github::{GitHub, GitHubError, RepoRef};
use crate::intake::eligibility::{self, Eligibility};
use crate::intake::signoff::{has_signoff_phrase, SignoffKey, SignoffKind, SignoffUrl};
use crate::offload::{run_checks, Overrun};
use crate::pr::fingerprint::{changed_files, changes, file_states, Changes, Fingerprint};
use crate::report::marker::Marker;
use crate::report::render_bilingual;
use crate::report::verdict::{render_markdown, ReportOptions};

use super::shared_head::{approved_at, newest_verdict, shared_head_description, uncovered_sharer, MAX_SHARERS};
use super::unchanged::{Posted, PostedStatus};
use super::{post_status, upsert, HandlerError, Outcome, Target};
use crate::github::sticky::find_own;
use crate::server::state::{now_ms, StateDb, StateError, WatchWait, WatchedPr, MAX_WATCHES};

/// Settings of the sign-off verifier.
#[derive(Debug, Clone)]
pub struct VerifyConfig {
    /// Commit-status context; `None` is advisory mode (comments only, spec 30 §3.2).
    pub status_context: Option<String>,
    /// Handles asked to review WARN rows.
    pub reviewers: Vec<String>,
    pub upstream: UpstreamConfig,
    pub limits: CollectLimits,
    /// The details page statuses link to and handlers record into (`serve --public-url`).
    pub details: Option<std::sync::Arc<crate::server::details::DetailsStore>>,
    /// When the reconcile may next poll each PR's awaited recipe PRs.
    pub watch: std::sync::Arc<WatchBackoff>,
    /// Run preflight (the check run `sweepgate/preflight`) on each push; on unless
    /// `--preflight=false`.
    pub preflight: bool,
    /// What each PR's last judged head got, for pushes that change no file (HT12).
    pub judged: std::sync::Arc<super::JudgedHeads>,
    /// Each PR's preflight upstream budget (HT14).
    pub preflight_budgets: std::sync::Arc<super::PreflightBudgets>,
}

/// The reconcile's backoff per PR for polling linked recipe PRs (issue 25 item 4): after a poll
/// that finds one still open, the next waits [`WATCH_FIRST_WAIT`], doubling up to
/// [`WATCH_MAX_WAIT`]. Kept in the server's state file once [`WatchBackoff::attach`]ed (decision
/// HG7), so a restarted server keeps each PR's wait; at most [`MAX_WATCHES`] PRs (past it the
/// one due soonest is forgotten and polled at the next pass). Wall-clock times: a deadline
/// further away than [`WATCH_MAX_WAIT`] (the clock went back) is due.
#[derive(Default)]
pub struct WatchBackoff {
    waits: std::sync::Mutex<BTreeMap<WatchedPr, WatchWait>>,
    store: std::sync::OnceLock<std::sync::Arc<StateDb>>,
}

impl std::fmt::Debug for WatchBackoff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchBackoff")
            .field("waits", &self.lock().len())
            .field("stored", &self.store.get().is_some())
            .finish()
    }
}

/// The wait after the first poll that finds a recipe PR still open.
pub const WATCH_FIRST_WAIT: std::time::Duration = std::time::Duration::from_secs(2);
/// The longest wait between two polls of one PR's recipe PRs.
pub const WATCH_MAX_WAIT: std::time::Duration = std::time::Duration::from_secs(3600);

impl WatchBackoff {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<WatchedPr, WatchWait>> {
        self.waits.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps the backoff in `state` from now on, starting from the waits it recorded.
    pub fn attach(&self, state: std::sync::Arc<StateDb>) -> Result<(), StateError> {
        let recorded = state.watches()?;
        self.lock().extend(recorded);
        // Attached once per server; a second attach keeps the first store.
        let _ = self.store.set(state);
        Ok(())
    }

    /// Whether the PR's recipe PRs may be polled at `now_ms`.
    fn due(&self, pr: &WatchedPr, now_ms: i64) -> bool {
        let max_ms = WATCH_MAX_WAIT.as_millis() as i64;
        self.lock().get(pr).is_none_or(|w| now_ms >= w.next_ms || w.next_ms - now_ms > max_ms)
    }

    /// A poll at `now_ms` found a recipe PR still open (or unreadable): wait longer before the next.
    fn wait(&self, pr: &WatchedPr, now_ms: i64) {
        let wait = {
            let mut waits = self.lock();
            let first = WATCH_FIRST_WAIT.as_millis() as u64;
            let wait_ms = waits
                .get(pr)
                .map_or(first, |w| w.wait_ms.saturating_mul(2).clamp(first, WATCH_MAX_WAIT.as_millis() as u64));
            let wait = WatchWait { next_ms: now_ms.saturating_add(wait_ms as i64), wait_ms };
            if !waits.contains_key(pr) && waits.len() >= MAX_WATCHES {
                let soonest = waits.iter().min_by_key(|(_, w)| w.next_ms).map(|(k, _)| k.clone());
                soonest.map(|k| waits.remove(&k));
            }
            waits.insert(pr.clone(), wait);
            wait
        };
        if let Some(state) = self.store.get() {
            if let Err(err) = state.put_watch(&pr.0, pr.1, wait) {
                tracing::warn!(%err, "recording a recipe-watch backoff (kept in memory)");
            }
        }
    }

    /// The watch of the PR ended (merged, closed, or a new verdict).
    fn clear(&self, pr: &WatchedPr) {
        let known = self.lock().remove(pr).is_some();
        if let Some(state) = self.store.get().filter(|_| known) {
            if let Err(err) = state.drop_watch(&pr.0, pr.1) {
                tracing::warn!(%err, "forgetting a recipe-watch backoff");
            }
        }
    }
}

impl Default for VerifyConfig {
    fn default() -> Self {
        VerifyConfig {
            status_context: Some("codeowner-signoff-verify".into()),
            reviewers: Vec::new(),
            upstream: UpstreamConfig::default(),
            limits: CollectLimits::default(),
            details: None,
            watch: Default::default(),
            preflight: true,
            judged: Default::default(),
            preflight_budgets: Default::default(),
        }
    }
}

/// What asked for a verification.
#[derive(Debug, Clone, Copy)]
pub enum Trigger<'a> {
    /// A new or `edited` sign-off by `author`, posted at `posted_at` (`None`: the payload did not
    /// say): the PR must be open and ready, the author eligible, and no newer sign-off verified.
    /// An edit is verified quietly: no `pending` first, so an edit that changes neither the
    /// verdict nor its evidence posts nothing (issue 34 item 8, RV8).
    Event { author: &'a User, posted_at: Option<DateTime<Utc>>, edited: bool },
    /// A manual `workflow_dispatch`, which only writers can start: any PR state, and Check 0
    /// alone judges the signer (spec 30 §1.2, docs/decisions.md C7/A1).
    Dispatch,
    /// A new head whose change looks identical to the one the signer saw (`signed`): the
    /// sign-off is verified again like an [`Trigger::Event`], and carries forward only when the
    /// fingerprint of the fresh evidence still equals `signed` (docs/decisions.md HG1).
    CarryForward { author: &'a User, posted_at: Option<DateTime<Utc>>, signed: &'a Fingerprint },
    /// The linked recipe PRs a verdict waited for (`merged`, `owner/repo#N`) merged: the
    /// sign-off is verified again like an [`Trigger::Event`]; with the verdict's record
    /// (`signed`) it must still be the signed change, as in [`Trigger::CarryForward`].
    RecipeMerged {
        author: &'a User,
        posted_at: Option<DateTime<Utc>>,
        signed: Option<&'a Fingerprint>,
        merged: &'a [String],
    },
}

/// Which sign-off to verify, and what asked for it.
pub struct SignoffTarget<'a> {
    pub repo: &'a RepoRef,
    pub pr: u64,
    pub key: SignoffKey,
    pub trigger: Trigger<'a>,
}

/// Sets the status on `sha`. `after_own_pending`: this verification set `pending` there itself,
/// so a verdict state changes it for certain and is written without reading the statuses first.
#[allow(clippy::too_many_arguments)] // private; each argument is one part of the status
async fn set_status<G: GitHub>(
    gh: &G,
    cfg: &VerifyConfig,
    target: (&RepoRef, u64),
    sha: &str,
    state: StatusState,
    description: String,
    after_own_pending: bool,
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let Some(context) = &cfg.status_context else { return Ok(()) };
    let (repo, pr) = target;
    let target_url = cfg.details.as_ref().map(|d| d.url(repo, pr));
    let status = StatusInput { state, context: context.clone(), description, target_url };
    if after_own_pending {
        gh.create_status(repo, sha, &status).await?;
        out.note(format!("status {context} {state:?} on {sha}"));
    } else if post_status(gh, repo, sha, &status).await? {
        out.note(format!("status {context} {state:?} on {sha}"));
    } else {
        out.note(format!("status {context} {state:?} on {sha} unchanged"));
    }
    let posted = PostedStatus { state, description: status.description };
    cfg.judged.posted(repo, pr, sha, Posted::Signoff(posted));
    Ok(())
}

/// Whether `author` may start a verification: one permission call (RV7). A permission GitHub
/// does not answer is [`Eligibility::Unreadable`], never eligible; dry-run mode's refusal is an
/// error, as for every other read.
/// Also returns the permission as read, which the collector records instead of reading it again.
pub async fn eligibility_of<G: GitHub>(
    gh: &G,
    repo: &RepoRef,
    author: &str,
) -> Result<(Eligibility, CollaboratorPermission), GitHubError> {
    match gh.collaborator_permission_detail(repo, author).await {
        Ok(detail) => Ok((eligibility::decide(&detail), detail)),
        Err(err @ GitHubError::DryRun(_)) => Err(err),
        Err(err) => {
            let unread = CollaboratorPermission { permission: String::new(), role_name: String::new() };
            Ok((Eligibility::Unreadable { why: err.to_string() }, unread))
        }
    }
}

/// Posts the one reply per PR for sign-offs that do not count (edited in place for the next
/// one), rendered from `template` (English and 中文) with `context`.
async fn reply_not_counted<G: GitHub>(
    gh: &G,
    bot_login: &str,
    target: Target<'_>,
    comments: &[Comment],
    (template, context): (&str, &serde_json::Value),
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let body = render_bilingual(template, context)?;
    let marker = Marker::new("signoff-refused").with("pr", target.number);
    upsert(gh, bot_login, target, comments, &marker, &body, out).await
}

/// The reply for a signer without write access (RV7). A permission that could not be read gets
/// no reply (it is not the signer's doing): the next reconcile pass asks again.
async fn refuse<G: GitHub>(
    gh: &G,
    bot_login: &str,
    target: (&RepoRef, u64, SignoffKey),
    comments: &[Comment],
    author: &str,
    why: &Eligibility,
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let (repo, pr, key) = target;
    if let Eligibility::NotWriter { permission } = why {
        let context = json!({"key": key.to_string(), "signer": author, "permission": permission});
        let reply = ("signoff_refused", &context);
        reply_not_counted(gh, bot_login, Target { repo, number: pr }, comments, reply, out).await?;
    }
    out.note(format!("sign-off {key} by {author} not counted ({why:?}): no verification, the status is unchanged"));
    Ok(())
}

/// The head a sign-off's author saw, against the PR's head now (issue 35 case 6).
#[derive(Debug, Clone, PartialEq, Eq)]
enum HeadSeen {
    /// The PR's head was already there when the sign-off was posted.
    Current,
    /// The branch held this other commit then.
    Earlier(String),
    /// GitHub does not say (a deleted head repository, no activity before the sign-off): the
    /// sign-off cannot be shown to cover the head, so it does not (fail closed).
    Unknown,
}

/// Which head the branch held strictly before `posted_at` (a push in the same second may not
/// have been seen), from its activity, newest first.
fn head_in_activity(activity: &[BranchActivity], head: &str, posted_at: DateTime<Utc>) -> HeadSeen {
    match activity.iter().filter(|a| a.timestamp < posted_at).max_by_key(|a| a.timestamp) {
        Some(a) if a.after == head => HeadSeen::Current,
        Some(a) => HeadSeen::Earlier(a.after.clone()),
        None => HeadSeen::Unknown,
    }
}

/// Whether the sign-off posted at `posted_at` saw the PR's head. The head repository's last
/// push before it answers at no cost; otherwise the head branch's activity says which commit
/// it held then, whatever order the deliveries of the sign-off and the push arrive in.
async fn head_seen_at<G: GitHub>(
    gh: &G,
    pull: &PullRequest,
    posted_at: DateTime<Utc>,
) -> Result<HeadSeen, GitHubError> {
    let Some(head_repo) = pull.head.repo.as_ref() else { return Ok(HeadSeen::Unknown) };
    if head_repo.pushed_at.is_some_and(|pushed| pushed < posted_at) {
        return Ok(HeadSeen::Current);
    }
    let Ok(repo) = RepoRef::parse(&head_repo.full_name) else { return Ok(HeadSeen::Unknown) };
    match gh.list_branch_activity(&repo, &pull.head.ref_name).await {
        Ok(activity) => Ok(head_in_activity(&activity, &pull.head.sha, posted_at)),
        // A fork the App cannot read: nothing shows the head was seen.
        Err(err) if err.is_not_found() => Ok(HeadSeen::Unknown),
        Err(err) => Err(err),
    }
}

/// A sign-off posted before the PR's head was pushed does not count for it: the one reply for
/// sign-offs that do not count says so, and the status is unchanged (it was not verified).
async fn not_the_head_signed<G: GitHub>(
    gh: &G,
    bot_login: &str,
    target: (&RepoRef, &PullRequest, SignoffKey),
    comments: &[Comment],
    signer: (&str, DateTime<Utc>),
    seen: &HeadSeen,
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let (repo, pull, key) = target;
    let (author, posted_at) = signer;
    let earlier = match seen {
        HeadSeen::Earlier(sha) => Some(sha.as_str()),
        _ => None,
    };
    let context = json!({
        "key": key.to_string(), "signer": author, "head": pull.head.sha,
        "posted_at": posted_at.format("%Y-%m-%d %H:%M:%S UTC").to_string(), "earlier": earlier,
    });
    let target = Target { repo, number: pull.number };
    reply_not_counted(gh, bot_login, target, comments, ("signoff_stale", &context), out).await?;
    out.note(format!(
        "sign-off {key} by {author} was posted before the head {} was pushed ({seen:?}): a fresh sign-off is needed; the status is unchanged",
        pull.head.sha
    ));
    Ok(())
}

/// Most verdicts of other sign-offs read per event to find a newer one (each review-kind
/// sign-off costs one read; conversation comments are in the list already).
const MAX_VERDICTS_COMPARED: usize = 20;

/// When a sign-off resource was posted (a review's `submitted_at`, a comment's `created_at`).
fn posted_at(resource: &SignoffResource) -> Option<DateTime<Utc>> {
    resource.submitted_at.or(resource.created_at)
}

/// When sign-off `key` was posted: from the PR's comment list for a conversation comment, else
/// through its endpoint. `None` when it is gone (deleted).
async fn posted_at_of<G: GitHub>(
    gh: &G,
    repo: &RepoRef,
    pr: u64,
    key: SignoffKey,
    comments: &[Comment],
) -> Result<Option<DateTime<Utc>>, GitHubError> {
    if key.kind == SignoffKind::ConversationComment {
        return Ok(comments.iter().find(|c| c.id == key.id).map(|c| c.created_at));
    }
    match gh.get_signoff_resource(repo, pr, key.kind, key.id).await {
        Ok(resource) => Ok(posted_at(&resource)),
        Err(err) if err.is_not_found() => Ok(None),
        Err(err) => Err(err),
    }
}

/// The sign-offs the bot has verified on the PR (only eligible ones get a verdict comment), by
/// their verdict markers, newest verdict first.
fn verified_signoffs(comments: &[Comment], bot_login: &str) -> Vec<SignoffKey> {
    let mut keys: Vec<SignoffKey> = comments
        .iter()
        .rev()
        .filter(|c| c.user.as_ref().is_some_and(|u| u.login.eq_ignore_ascii_case(bot_login)))
        .filter_map(|c| Marker::parse(&c.body))
        .filter(|m| m.kind == "verdict")
        .filter_map(|m| m.get("signoff")?.parse().ok())
        .collect();
    let mut seen = std::collections::HashSet::new();
    keys.retain(|k| seen.insert(*k));
    keys
}

/// Whether `(at, key)` was posted after `than`; equal times are ordered by key, so that two
/// sign-offs never both count as the newer one.
fn is_newer(candidate: (DateTime<Utc>, SignoffKey), than: (DateTime<Utc>, SignoffKey)) -> bool {
    candidate > than
}

/// A verified sign-off posted after this one (`this` = key and posting time): the status
/// follows the newest eligible sign-off, so an older one (edited, redelivered late) must not
/// overwrite it. A verified sign-off since deleted does not count.
async fn newer_verified_signoff<G: GitHub>(
    gh: &G,
    bot_login: &str,
    repo: &RepoRef,
    pr: u64,
    this: (SignoffKey, DateTime<Utc>),
    comments: &[Comment],
) -> Result<Option<SignoffKey>, GitHubError> {
    let (key, at) = this;
    for other in verified_signoffs(comments, bot_login).into_iter().filter(|k| *k != key).take(MAX_VERDICTS_COMPARED) {
        if let Some(other_at) = posted_at_of(gh, repo, pr, other, comments).await? {
            if is_newer((other_at, other), (at, key)) {
                return Ok(Some(other));
            }
        }
    }
    Ok(None)
}

pub async fn verify_signoff<G: GitHub>(
    gh: &G,
    bot_login: &str,
    cfg: &VerifyConfig,
    target: SignoffTarget<'_>,
    review_date: chrono::NaiveDate,
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let SignoffTarget { repo, pr, key, trigger } = target;
    let pull = match gh.get_pull(repo, pr).await {
        Ok(pull) => pull,
        // Like the label policy: dry-run decides what it can and names what it could not.
        Err(GitHubError::DryRun(what)) => {
            out.note(format!("sign-off {key} not verified: dry-run mode cannot do {what}"));
            return Ok(());
        }
        Err(err) => return Err(err.into()),
    };
    // The comment list read to judge the event is the collector's too (one read, not two).
    let mut listed_comments = None;
    let mut known_permissions = BTreeMap::new();
    // A sign-off delivered now is checked against the head it saw; a carried one by its fingerprint.
    let delivered = matches!(trigger, Trigger::Event { .. });
    let (carried, merged) = match trigger {
        Trigger::CarryForward { signed, .. } => (Some(signed), None),
        Trigger::RecipeMerged { signed, merged, .. } => (signed, Some(merged)),
        Trigger::Dispatch | Trigger::Event { .. } => (None, None),
    };
    let quiet = matches!(trigger, Trigger::Event { edited: true, .. });
    if let Trigger::Event { author, posted_at, .. }
    | Trigger::CarryForward { author, posted_at, .. }
    | Trigger::RecipeMerged { author, posted_at, .. } = trigger
    {
        if pull.state != "open" || pull.draft {
            out.note(format!(
                "sign-off {key} skipped: PR #{pr} is {}",
                if pull.draft { "a draft" } else { "not open" }
            ));
            return Ok(());
        }
        let comments = gh.list_issue_comments(repo, pr).await?;
        let posted_at = match posted_at {
            Some(at) => Some(at),
            None => posted_at_of(gh, repo, pr, key, &comments).await?,
        };
        let Some(posted_at) = posted_at else {
            out.note(format!("sign-off {key} no longer exists: not verified"));
            return Ok(());
        };
        if let Some(newer) = newer_verified_signoff(gh, bot_login, repo, pr, (key, posted_at), &comments).await? {
            out.note(format!(
                "sign-off {key} is older than {newer}, which is verified: the status follows {newer}, unchanged"
            ));
            return Ok(());
        }
        let eligibility = match eligibility_of(gh, repo, &author.login).await {
            Err(GitHubError::DryRun(what)) => {
                out.note(format!("sign-off {key} not verified: dry-run mode cannot do {what}"));
                return Ok(());
            }
            other => other?,
        };
        let (eligibility, permission) = eligibility;
        if !eligibility.is_eligible() {
            return refuse(gh, bot_login, (repo, pr, key), &comments, &author.login, &eligibility, out).await;
        }
        out.note(format!("sign-off {key} by {} is eligible ({eligibility:?})", author.login));
        let seen = if delivered {
            match head_seen_at(gh, &pull, posted_at).await {
                Err(GitHubError::DryRun(what)) => {
                    out.note(format!("sign-off {key} not verified: dry-run mode cannot do {what}"));
                    return Ok(());
                }
                other => other?,
            }
        } else {
            HeadSeen::Current
        };
        if seen != HeadSeen::Current {
            let target = (repo, &pull, key);
            return not_the_head_signed(gh, bot_login, target, &comments, (&author.login, posted_at), &seen, out).await;
        }
        listed_comments = Some(comments);
        known_permissions.insert(author.login.clone(), permission);
    }
    // Policy at the default branch's tip, resolved once for the collection and the checks.
    let policy = resolve_policy(gh, repo, &pull, &cfg.limits.policy_branches).await;
    let head = pull.head.sha.clone();
    if !quiet {
        let verifying = format!("verifying sign-off {key}");
        set_status(gh, cfg, (repo, pr), &head, StatusState::Pending, verifying, false, out).await?;
    }
    // Whether this verification set `pending` on the head itself.
    let own_pending = !quiet;
    let url = SignoffUrl { repo: repo.to_string(), pr, key };
    let request = CollectRequest { repo: repo.clone(), pr, signoff: url, review_date };
    let upstream = UpstreamClient::new(cfg.upstream.clone())
        .map_err(|e| HandlerError::GitHub(crate::github::GitHubError::Setup(e.to_string())))?;
    let known = Known {
        files: out.reads.files_of(&pull),
        pull: Some(pull),
        comments: listed_comments,
        permissions: known_permissions,
        policy: Some(policy),
        signoff: None,
    };
    let evidence = match collect(gh, &upstream, &request, &cfg.limits, known).await {
        Ok(evidence) => {
            let evidence = std::sync::Arc::new(evidence);
            out.reads.evidence = Some(evidence.clone());
            evidence
        }
        // The PR's files took the PR model past the deadline: named like the checks' overrun.
        Err(CollectError::Overrun(overrun)) => {
            return overran(gh, cfg, (repo, pr), key, &head, own_pending, overrun, out).await
        }
        Err(err) => {
            let description = format!("sign-off {key} could not be verified: evidence unavailable");
            set_status(gh, cfg, (repo, pr), &head, StatusState::Failure, description, own_pending, out).await?;
            return Err(err.into());
        }
    };
    // Evidence pins the head it read; the status goes on that commit, not on a later one.
    let pinned = evidence.pull_request.head_sha.clone();
    let signed_head = carried.map_or(pinned.as_str(), |f| f.signed.as_str());
    let signed = signed_head.to_owned();
    let fingerprint =
        match run_checks(cfg.limits.deadline, evidence.clone(), move |ev| Fingerprint::of(ev, &signed)).await {
            Ok(fingerprint) => fingerprint,
            Err(overrun) => {
                return overran(gh, cfg, (repo, pr), key, &pinned, own_pending && pinned == head, overrun, out).await
            }
        };
    let comments = gh.list_issue_comments(repo, pr).await?;
    let find = Marker::new("verdict").with("signoff", key);
    let existing = find_own(&comments, bot_login, &find).map(|(c, _)| c);
    if let Some(signed) = carried {
        let changed = match &fingerprint {
            Ok(now) => changes(signed, now),
            Err(why) => {
                out.note(format!("the fingerprint at {pinned} is unknown ({why}): no carry-forward"));
                Changes { files: evidence.files.iter().map(|f| f.filename.clone()).collect(), configs: Vec::new() }
            }
        };
        if !changed.is_empty() {
            let stale = Stale { key, signed: Some(signed), signed_head, head: &pinned, changes: changed };
            return fresh_signoff_needed(gh, cfg, (repo, pr), existing, stale, pinned == head, out).await;
        }
    }
    let fingerprint = fingerprint.map_err(|why| out.note(format!("no fingerprint recorded at {pinned}: {why}"))).ok();
    let verdict = match run_checks(cfg.limits.deadline, evidence.clone(), verify).await {
        Ok(verdict) => verdict,
        Err(overrun) => {
            return overran(gh, cfg, (repo, pr), key, &pinned, own_pending && pinned == head, overrun, out).await
        }
    };
    out.charts = FrontierChart::of_verdict(&verdict);
    let digest = fingerprint.as_ref().map(Fingerprint::digest);
    // A REJECTED verdict whose only blocker is a linked recipe PR still open is watched.
    let awaited = awaited_pulls(&verdict);
    cfg.watch.clear(&(repo.to_string(), pr));
    let options = ReportOptions {
        reviewers: cfg.reviewers.clone(),
        lang: None,
        fingerprint: digest.clone(),
        policy_sha: evidence.pull_request.policy_sha.clone(),
        watch: awaited.iter().map(|(r, n)| format!("{r}:{n}")).collect(),
    };
    let rendered = render_markdown(&evidence, &verdict, &options)?;
    let mut notes = Vec::new();
    if carried.is_some() && signed_head != pinned {
        notes.push(render_bilingual(
            "head_note",
            &json!({"carried": true, "signed": signed_head, "head": pinned, "fingerprint": digest,
                    "files": [], "configs": [], "more": 0}),
        )?);
    }
    let watching: Vec<String> = awaited.iter().map(|(r, n)| format!("{r}#{n}")).collect();
    if merged.is_some() || !watching.is_empty() {
        let merged = merged.unwrap_or_default();
        let context = json!({"merged": merged, "closed": [], "watching": watching});
        notes.push(render_bilingual("recipe_note", &context)?);
        out.note(format!("recipe PRs merged: {merged:?}; watching: {watching:?}"));
    }
    let note = (!notes.is_empty()).then(|| notes.join("\n\n"));
    let body = compose(&rendered, note.as_deref(), fingerprint.as_ref());
    match existing {
        Some(c) if c.body == body => out.note(format!("verdict comment {} unchanged", c.id)),
        Some(c) => {
            gh.update_issue_comment(repo, c.id, &body).await?;
            out.note(format!("edited verdict comment {}", c.id));
        }
        None => {
            let c = gh.create_issue_comment(repo, pr, &body).await?;
            out.note(format!("posted verdict comment {}", c.id));
        }
    }
    let (state, word) = match verdict.word {
        VerdictWord::Approved => (StatusState::Success, "APPROVED"),
        VerdictWord::Rejected => (StatusState::Failure, "REJECTED"),
    };
    out.verdict = Some(word);
    cfg.details.iter().for_each(|d| d.record_verdict(repo, pr, &key.to_string(), &pinned, &verdict));
    cfg.details.iter().for_each(|d| d.record_performance(repo, pr, &key.to_string(), &verdict.performance));
    let policy_sha = evidence.pull_request.policy_sha.as_deref();
    cfg.details.iter().for_each(|d| d.record_inputs(repo, pr, &key.to_string(), policy_sha, fingerprint.as_ref()));
    out.performance = verdict.performance.clone();
    // Success covers every open PR at this commit: each needs its own approved sign-off (HT15).
    let (state, sharer) = match state {
        StatusState::Success => match uncovered_sharer(gh, bot_login, repo, pr, &pinned).await? {
            Some(sharer) => (StatusState::Failure, Some(sharer)),
            None => (state, None),
        },
        _ => (state, None),
    };
    let short = pinned.get(..7).unwrap_or(&pinned);
    let description = if let Some(sharer) = sharer {
        out.note(format!("{word}, but #{sharer} shares {pinned} without an approved sign-off of its own"));
        shared_head_description(sharer)
    } else if evidence.head_moved() {
        format!("{word} for {short} only; the head moved: a fresh sign-off is needed")
    } else if carried.is_some() {
        format!(
            "sign-off {key}: {word} at {short}, carried forward from {}",
            signed_head.get(..7).unwrap_or(signed_head)
        )
    } else {
        format!("sign-off {key}: {word} at {short}")
    };
    set_status(gh, cfg, (repo, pr), &pinned, state, description, own_pending && pinned == head, out).await
}

/// The checks gave no verdict (their deadline passed): the status on `pinned` is a failure
/// naming why, never left pending, and the event fails with the same reason.
#[allow(clippy::too_many_arguments)] // private; each argument is one part of the status
async fn overran<G: GitHub>(
    gh: &G,
    cfg: &VerifyConfig,
    target: (&RepoRef, u64),
    key: SignoffKey,
    pinned: &str,
    after_own_pending: bool,
    overrun: Overrun,
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let description = match &overrun {
        Overrun::Deadline(d) => format!("sign-off {key} could not be verified: the checks ran past {} s", d.as_secs()),
        Overrun::Panicked(_) => format!("sign-off {key} could not be verified: the checks stopped"),
    };
    set_status(gh, cfg, target, pinned, StatusState::Failure, description, after_own_pending, out).await?;
    Err(overrun.into())
}

/// The line that opens the note the bot appends to a verdict about a later head.
const NOTE_LINE: &str = "<!-- sweepgate:head-note -->";
/// The line that holds the fingerprint record, always the last of a verdict comment.
const RECORD_PREFIX: &str = "<!-- sweepgate:fingerprint ";
const RECORD_SUFFIX: &str = " -->";

/// A verdict comment: the rendered verdict, the note about a later head (if any), the record.
fn compose(verdict: &str, note: Option<&str>, fingerprint: Option<&Fingerprint>) -> String {
    let record = fingerprint.and_then(Fingerprint::record);
    if note.is_none() && record.is_none() {
        return verdict.to_owned();
    }
    let mut body = verdict.trim_end().to_owned();
    if let Some(note) = note {
        body.push_str(&format!("\n\n{NOTE_LINE}\n{}", note.trim_end()));
    }
    if let Some(record) = record {
        body.push_str(&format!("\n\n{RECORD_PREFIX}{record}{RECORD_SUFFIX}"));
    }
    body.push('\n');
    body
}

/// The rendered verdict of a verdict comment (without note and record), and its record.
fn decompose(body: &str) -> (&str, Option<Fingerprint>) {
    let (rest, record) = match body.trim_end().rsplit_once('\n') {
        Some((rest, last)) if last.starts_with(RECORD_PREFIX) => {
            let record = last.strip_prefix(RECORD_PREFIX).and_then(|r| r.strip_suffix(RECORD_SUFFIX));
            (rest, record.and_then(Fingerprint::from_record))
        }
        _ => (body, None),
    };
    let verdict = match rest.find(&format!("\n{NOTE_LINE}\n")) {
        Some(at) => &rest[..at],
        None => rest,
    };
    (verdict.trim_end(), record)
}

/// Most changed paths a note lists (the rest are counted).
const MAX_LISTED: usize = 100;

/// A new head whose change differs from the one a sign-off saw.
struct Stale<'a> {
    key: SignoffKey,
    /// The recorded fingerprint (`None`: the verdict has none, e.g. written before HG1).
    signed: Option<&'a Fingerprint>,
    signed_head: &'a str,
    head: &'a str,
    changes: Changes,
}

/// "A fresh sign-off is needed": the note on the sign-off's verdict comment (its verdict and
/// record kept, so a later head identical to the signed change carries forward again), and
/// `failure` on the new head. `after_own_pending`: this handler set `pending` there.
async fn fresh_signoff_needed<G: GitHub>(
    gh: &G,
    cfg: &VerifyConfig,
    target: (&RepoRef, u64),
    comment: Option<&Comment>,
    stale: Stale<'_>,
    after_own_pending: bool,
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let Stale { key, signed, signed_head, head, changes } = stale;
    let listed: Vec<&String> = changes.files.iter().take(MAX_LISTED).collect();
    let context = json!({
        "carried": false, "signed": signed_head, "head": head, "files": listed,
        "more": changes.files.len() - listed.len(), "configs": changes.configs,
        "fingerprint": signed.map(Fingerprint::digest),
    });
    let note = render_bilingual("head_note", &context)?;
    if let Some(c) = comment {
        let (verdict, _) = decompose(&c.body);
        let body = compose(verdict, Some(note.as_str()), signed);
        if body == c.body {
            out.note(format!("verdict comment {} unchanged", c.id));
        } else {
            gh.update_issue_comment(target.0, c.id, &body).await?;
            out.note(format!("edited verdict comment {}: a fresh sign-off is needed", c.id));
        }
    }
    let short = signed_head.get(..7).unwrap_or(signed_head);
    let description = match (changes.files.len(), changes.configs.len()) {
        (0, n) if n > 0 => {
            format!("a fresh sign-off is needed: {n} affected config(s) changed since the sign-off of {short}")
        }
        (n, _) => format!("a fresh sign-off is needed: {n} file(s) changed since the sign-off of {short}"),
    };
    out.note(format!("sign-off {key} does not carry forward to {head}"));
    set_status(gh, cfg, target, head, StatusState::Failure, description, after_own_pending, out).await
}

/// The author and posting time of sign-off `key`; `None` when it is gone.
async fn signer_of<G: GitHub>(
    gh: &G,
    repo: &RepoRef,
    pr: u64,
    key: SignoffKey,
    comments: &[Comment],
) -> Result<Option<(User, Option<DateTime<Utc>>)>, GitHubError> {
    if key.kind == SignoffKind::ConversationComment {
        return Ok(comments
            .iter()
            .find(|c| c.id == key.id)
            .and_then(|c| c.user.clone().map(|u| (u, Some(c.created_at)))));
    }
    match gh.get_signoff_resource(repo, pr, key.kind, key.id).await {
        Ok(resource) => Ok(resource.user.clone().map(|u| (u, posted_at(&resource)))),
        Err(err) if err.is_not_found() => Ok(None),
        Err(err) => Err(err),
    }
}

/// Every new head gets a status at once (ARCHITECTURE decision 3): on a push, and when the
/// reconcile finds the head without one, the newest verified sign-off (the bot's newest
/// verdict comment) is compared with the new head through two reads (the PR's files and the
/// head's git tree). An identical change is verified again against the head and carries the
/// sign-off forward; anything else sets `failure` ("a fresh sign-off is needed") at once.
/// `retargeted`: the PR's base changed (issue 35 case 5), so a verdict at this very head covers
/// another change and is compared like one at an earlier head.
pub(super) async fn follow_head<G: GitHub>(
    gh: &G,
    cfg: &super::BotConfig,
    repo: &RepoRef,
    pull: &PullRequest,
    comments: &[Comment],
    retargeted: bool,
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    if pull.state != "open" || pull.draft {
        return Ok(());
    }
    let Some((comment, marker)) = newest_verdict(comments, &cfg.bot_login) else { return Ok(()) };
    let Some(key) = marker.get("signoff").and_then(|k| k.parse::<SignoffKey>().ok()) else { return Ok(()) };
    let head = pull.head.sha.as_str();
    let verified_at = marker.get("sha").unwrap_or_default();
    if verified_at == head && !retargeted {
        return Ok(()); // verified (or carried forward) at this head already
    }
    let (_, recorded) = decompose(&comment.body);
    let signed_head = recorded.as_ref().map_or(verified_at, |r| r.signed.as_str()).to_owned();
    let listed = match out.reads.files_of(pull) {
        Some(files) => Ok(files),
        None => gh.list_pull_files(repo, pull.number).await,
    };
    let files = match listed {
        Ok(files) => files,
        Err(GitHubError::DryRun(_)) => return Ok(()),
        Err(err) => return Err(err.into()),
    };
    let blobs: Option<BTreeMap<String, String>> = match gh.get_tree(repo, head).await {
        Ok(listing) if !listing.truncated => {
            Some(listing.tree.into_iter().filter(|e| e.kind == "blob").map(|e| (e.path, e.sha)).collect())
        }
        Ok(_) => None,
        Err(err) => {
            out.note(format!("git tree of {head} unreadable ({err}): no carry-forward"));
            None
        }
    };
    let changed =
        |f: &crate::github::types::PullFile| (f.filename.clone(), f.previous_filename.clone(), f.status.clone());
    let listed: Vec<(String, Option<String>, String)> = files.iter().map(changed).collect();
    let now = blobs.map(|blobs| {
        file_states(listed.iter().map(|(p, prev, status)| (p.as_str(), prev.as_deref(), status.as_str())), &blobs)
    });
    let changed_paths = match (&recorded, &now) {
        (Some(signed), Some(now)) => changed_files(&signed.files, now),
        // Nothing to compare with: every path of the PR counts as changed (fail closed).
        _ => listed.iter().flat_map(|(p, prev, _)| std::iter::once(p.clone()).chain(prev.clone())).collect(),
    };
    let target = (repo, pull.number);
    if let (true, Some(signed)) = (changed_paths.is_empty(), &recorded) {
        if let Some((author, posted_at)) = signer_of(gh, repo, pull.number, key, comments).await? {
            out.note(format!("head {head}: the change signed at {signed_head} is identical; re-verifying {key}"));
            let trigger = Trigger::CarryForward { author: &author, posted_at, signed };
            let target = SignoffTarget { repo, pr: pull.number, key, trigger };
            let today = chrono::Utc::now().date_naive();
            // Boxed: a verification nested in an event handler would deepen the worker's stack.
            return Box::pin(verify_signoff(gh, &cfg.bot_login, &cfg.verify, target, today, out)).await;
        }
        out.note(format!("sign-off {key} no longer exists: it cannot carry forward"));
    }
    let changes = Changes { files: changed_paths, configs: Vec::new() };
    let stale = Stale { key, signed: recorded.as_ref(), signed_head: &signed_head, head, changes };
    fresh_signoff_needed(gh, &cfg.verify, target, Some(comment), stale, false, out).await
}

/// The recipe PRs of a verdict marker's `watch=` (`owner/repo:N` joined by `+`).
fn watched(marker: &Marker) -> Vec<(String, u64)> {
    let Some(list) = marker.get("watch") else { return Vec::new() };
    list.split('+')
        .filter_map(|item| {
            let (repo, number) = item.rsplit_once(':')?;
            Some((repo.to_owned(), number.parse().ok()?))
        })
        .filter(|(repo, _)| RECIPE_REPOSITORIES.contains(&repo.as_str()))
        .take(MAX_AWAITED)
        .collect()
}

/// The reconcile's watch of linked recipe PRs (issue 25 item 4): the head's status is
/// `failure` and the bot's newest verdict, at this head, waits for linked recipe PRs (its
/// marker's `watch=`). Each is polled through the upstream client (its host allowlist and
/// bounds), at most [`MAX_AWAITED`], with a backoff per PR. All merged: the sign-off is
/// verified again and the verdict says so. One closed without merge: the watch stops (the
/// marker loses `watch=`, the verdict says why). Otherwise nothing changes until the next poll.
async fn watch_recipes<G: GitHub>(
    gh: &G,
    cfg: &super::BotConfig,
    repo: &RepoRef,
    pull: &PullRequest,
    comments: &[Comment],
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let Some((comment, marker)) = newest_verdict(comments, &cfg.bot_login) else { return Ok(()) };
    let awaited = watched(&marker);
    let key = marker.get("signoff").and_then(|k| k.parse::<SignoffKey>().ok());
    let Some(key) = key.filter(|_| !awaited.is_empty() && marker.get("sha") == Some(pull.head.sha.as_str())) else {
        return Ok(());
    };
    let id = (repo.to_string(), pull.number);
    if !cfg.verify.watch.due(&id, now_ms()) {
        return Ok(());
    }
    let upstream = UpstreamClient::new(cfg.verify.upstream.clone())
        .map_err(|e| HandlerError::GitHub(GitHubError::Setup(e.to_string())))?;
    let (mut merged, mut closed, mut open) = (Vec::new(), Vec::new(), Vec::new());
    for (owner_repo, number) in &awaited {
        let name = format!("{owner_repo}#{number}");
        match upstream.pull(owner_repo, *number).await {
            Fact::Ok(p) if p.merged_at.is_some() => merged.push(name),
            Fact::Ok(p) if p.state == "closed" => closed.push(name),
            Fact::Ok(_) => open.push(name),
            Fact::Unavailable(reason) => {
                out.note(format!("watch: {name} could not be read ({reason})"));
                open.push(name);
            }
        }
    }
    let (verdict, record) = decompose(&comment.body);
    if !closed.is_empty() {
        cfg.verify.watch.clear(&id);
        let mut unwatched = marker.clone();
        unwatched.fields.retain(|(k, _)| k != "watch");
        let rest = verdict.split_once('\n').map_or("", |(_, rest)| rest);
        let note = render_bilingual("recipe_note", &json!({"merged": [], "closed": closed, "watching": []}))?;
        let body = compose(&format!("{unwatched}\n{rest}"), Some(&note), record.as_ref());
        gh.update_issue_comment(repo, comment.id, &body).await?;
        out.note(format!("watch of {closed:?} stopped: closed without merge"));
        return Ok(());
    }
    if !open.is_empty() {
        cfg.verify.watch.wait(&id, now_ms());
        out.note(format!("watch: {open:?} not merged yet"));
        return Ok(());
    }
    cfg.verify.watch.clear(&id);
    let Some((author, posted_at)) = signer_of(gh, repo, pull.number, key, comments).await? else {
        out.note(format!("sign-off {key} no longer exists: not verified again"));
        return Ok(());
    };
    out.note(format!("recipe PRs {merged:?} merged: re-verifying sign-off {key}"));
    let trigger = Trigger::RecipeMerged { author: &author, posted_at, signed: record.as_ref(), merged: &merged };
    let target = SignoffTarget { repo, pr: pull.number, key, trigger };
    let today = chrono::Utc::now().date_naive();
    Box::pin(verify_signoff(gh, &cfg.bot_login, &cfg.verify, target, today, out)).await
}

/// The reconcile pass's repair of a lost or interrupted verification: on an open, ready PR whose
/// required status on the head is `pending` (a verification that never finished), or missing
/// while the newest eligible sign-off has no verdict comment (a delivery that never arrived),
/// that sign-off is verified again. Every shape the intake accepts counts: conversation
/// comments (listed already), review summaries and inline review comments (one list each, read
/// only when the status needs a repair). A head without a status whose newest sign-off was
/// verified at an earlier head goes to [`follow_head`] (carried forward, or `failure`).
pub(super) async fn repair<G: GitHub>(
    gh: &G,
    cfg: &super::BotConfig,
    repo: &RepoRef,
    pull: &PullRequest,
    comments: &[Comment],
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let Some(context) = &cfg.verify.status_context else { return Ok(()) };
    if pull.state != "open" || pull.draft {
        return Ok(());
    }
    let current = match gh.list_commit_statuses(repo, &pull.head.sha).await {
        Ok(list) => list.into_iter().find(|s| &s.context == context).map(|s| s.state),
        Err(GitHubError::DryRun(_)) => return Ok(()),
        Err(err) => return Err(err.into()),
    };
    if current == Some(StatusState::Failure) {
        return watch_recipes(gh, cfg, repo, pull, comments, out).await;
    }
    if !matches!(current, None | Some(StatusState::Pending)) {
        return Ok(());
    }
    let mut candidates: Vec<(DateTime<Utc>, SignoffKey, User)> = comments
        .iter()
        .filter(|c| has_signoff_phrase(&c.body))
        .filter_map(|c| {
            let author = c.user.clone().filter(|u| User::is_person(Some(u)))?;
            Some((c.created_at, SignoffKey { kind: SignoffKind::ConversationComment, id: c.id }, author))
        })
        .collect();
    for kind in [SignoffKind::ReviewSummary, SignoffKind::InlineReviewComment] {
        for resource in gh.list_signoff_resources(repo, pull.number, kind).await? {
            let Some(at) = posted_at(&resource) else { continue };
            let Some(author) = resource.user.filter(|u| User::is_person(Some(u))) else { continue };
            if resource.body.as_deref().is_some_and(has_signoff_phrase) {
                candidates.push((at, SignoffKey { kind, id: resource.id }, author));
            }
        }
    }
    candidates.sort_by_key(|(at, key, _)| std::cmp::Reverse((*at, *key)));
    for (at, key, author) in &candidates {
        if !eligibility_of(gh, repo, &author.login).await?.0.is_eligible() {
            continue;
        }
        let has_verdict = find_own(comments, &cfg.bot_login, &Marker::new("verdict").with("signoff", key)).is_some();
        if current.is_none() && has_verdict {
            // Verified at an earlier head: carried forward or "a fresh sign-off is needed".
            return follow_head(gh, cfg, repo, pull, comments, false, out).await;
        }
        out.note(format!("reconcile: re-verifying sign-off {key} (status {current:?})"));
        let trigger = Trigger::Event { author, posted_at: Some(*at), edited: false };
        let target = SignoffTarget { repo, pr: pull.number, key: *key, trigger };
        let today = chrono::Utc::now().date_naive();
        return Box::pin(verify_signoff(gh, &cfg.bot_login, &cfg.verify, target, today, out)).await;
    }
    Ok(())
}

/// A PR without any verdict whose head carries another PR's `success` (a second PR opened on
/// an approved head, issue 35 case 5): that success was not computed for this PR and its
/// base, so the head gets `failure` naming this PR until it has its own approved sign-off or
/// is closed (HT15).
pub(super) async fn claim_shared_head<G: GitHub>(
    gh: &G,
    cfg: &super::BotConfig,
    repo: &RepoRef,
    pull: &PullRequest,
    comments: &[Comment],
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let Some(context) = &cfg.verify.status_context else { return Ok(()) };
    // A PR with a verdict is followed by its own (follow_head, verify_signoff).
    if pull.state != "open" || newest_verdict(comments, &cfg.bot_login).is_some() {
        return Ok(());
    }
    let head = &pull.head.sha;
    let current = match gh.list_commit_statuses(repo, head).await {
        Ok(list) => list.into_iter().find(|s| &s.context == context),
        Err(GitHubError::DryRun(_)) => return Ok(()),
        Err(err) => return Err(err.into()),
    };
    if current.is_none_or(|s| s.state != StatusState::Success) {
        return Ok(());
    }
    out.note(format!("{head} carries another PR's success: #{} needs a sign-off of its own", pull.number));
    let description = shared_head_description(pull.number);
    set_status(gh, &cfg.verify, (repo, pull.number), head, StatusState::Failure, description, false, out).await
}

/// `closed` was the PR a shared head's failure named: another open PR at the head whose own
/// verdict there is APPROVED gets its success back (or the failure names the next PR at the
/// head without one).
pub(super) async fn release_shared_head<G: GitHub>(
    gh: &G,
    cfg: &super::BotConfig,
    repo: &RepoRef,
    closed: &PullRequest,
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let Some(context) = &cfg.verify.status_context else { return Ok(()) };
    let head = &closed.head.sha;
    let current = match gh.list_commit_statuses(repo, head).await {
        Ok(list) => list.into_iter().find(|s| &s.context == context),
        Err(GitHubError::DryRun(_)) => return Ok(()),
        Err(err) => return Err(err.into()),
    };
    let named: String = shared_head_description(closed.number).chars().take(140).collect();
    if current.and_then(|s| s.description).is_none_or(|d| d != named) {
        return Ok(());
    }
    let pulls = match gh.list_commit_pulls(repo, head).await {
        Ok(pulls) => pulls,
        Err(GitHubError::DryRun(_)) => return Ok(()),
        Err(err) => return Err(err.into()),
    };
    let others = pulls.iter().filter(|p| p.number != closed.number && p.state == "open" && p.head.sha == *head);
    for other in others.take(MAX_SHARERS) {
        let comments = gh.list_issue_comments(repo, other.number).await?;
        let Some(key) = approved_at(&comments, &cfg.bot_login, head) else { continue };
        let (state, description) = match uncovered_sharer(gh, &cfg.bot_login, repo, other.number, head).await? {
            Some(sharer) => (StatusState::Failure, shared_head_description(sharer)),
            None => (StatusState::Success, format!("sign-off {key}: APPROVED at {}", head.get(..7).unwrap_or(head))),
        };
        out.note(format!(
            "#{} was closed: the status on {head} follows #{}'s own verdict",
            closed.number, other.number
        ));
        return set_status(gh, &cfg.verify, (repo, other.number), head, state, description, false, out).await;
    }
    out.note(format!("#{} was closed: no other open PR at {head} has an approved sign-off", closed.number));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35 case 6: the head a sign-off covers is the one the branch held strictly before it
    /// was posted, whatever the order the deliveries arrive in.
    #[test]
    fn the_head_a_signoff_saw_is_the_branch_head_strictly_before_it() {
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        let push = |after: &str, t: &str| BranchActivity { after: after.into(), timestamp: at(t) };
        let activity = [push("c", "2026-09-01T10:05:00Z"), push("a", "2026-09-01T09:00:00Z")];
        let signed = at("2026-09-01T10:00:00Z");
        assert_eq!(head_in_activity(&activity, "c", signed), HeadSeen::Earlier("a".into()));
        assert_eq!(head_in_activity(&activity, "a", signed), HeadSeen::Current);
        // A push in the sign-off's own second may not have been seen.
        assert_eq!(head_in_activity(&activity, "c", at("2026-09-01T10:05:00Z")), HeadSeen::Earlier("a".into()));
        assert_eq!(head_in_activity(&activity, "c", at("2026-09-01T10:05:01Z")), HeadSeen::Current);
        assert_eq!(head_in_activity(&activity, "a", at("2026-09-01T08:00:00Z")), HeadSeen::Unknown);
        assert_eq!(head_in_activity(&[], "a", signed), HeadSeen::Unknown);
    }

    #[test]
    fn a_restarted_server_keeps_each_recipe_watch_backoff() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let pr = ("o/r".to_owned(), 7);
        let first = WATCH_FIRST_WAIT.as_millis() as i64;
        let watch = WatchBackoff::default();
        watch.attach(std::sync::Arc::new(StateDb::open(&path).unwrap())).unwrap();
        assert!(watch.due(&pr, 1_000), "never polled: due");
        watch.wait(&pr, 1_000);
        assert!(!watch.due(&pr, 1_000 + first - 1) && watch.due(&pr, 1_000 + first));
        watch.wait(&pr, 1_000 + first);
        drop(watch);

        // The restart: a new server reads the same state file.
        let watch = WatchBackoff::default();
        watch.attach(std::sync::Arc::new(StateDb::open(&path).unwrap())).unwrap();
        let next = 1_000 + 3 * first;
        assert!(!watch.due(&pr, next - 1), "the doubled wait survived the restart");
        assert!(watch.due(&pr, next));
        watch.wait(&pr, next);
        assert!(!watch.due(&pr, next + 4 * first - 1) && watch.due(&pr, next + 4 * first), "and goes on doubling");
        watch.clear(&pr);
        assert!(watch.due(&pr, 0), "a cleared watch polls at once");
        let reopened = StateDb::open(&path).unwrap();
        assert!(reopened.watches().unwrap().is_empty(), "cleared in the file too");
    }

    #[test]
    fn a_recipe_watch_deadline_beyond_the_longest_wait_is_due() {
        let watch = WatchBackoff::default();
        let pr = ("o/r".to_owned(), 7);
        watch.wait(&pr, 10_000_000);
        let max = WATCH_MAX_WAIT.as_millis() as i64;
        assert!(!watch.due(&pr, 10_000_000), "waiting");
        assert!(watch.due(&pr, 10_000_000 - max), "the clock went back: polled");
    }

    fn comment(id: u64, login: &str, body: &str) -> Comment {
        Comment {
            id,
            body: body.into(),
            user: Some(User { login: login.into(), kind: "User".into() }),
            author_association: "MEMBER".into(),
            created_at: Utc::now(),
            updated_at: Utc::now(),
            html_url: String::new(),
        }
    }

    #[test]
    fn verified_signoffs_are_the_bots_own_verdict_markers_newest_first() {
        let comments = [
            comment(1, "sweepgate[bot]", "<!-- sweepgate:verdict signoff=issuecomment-10 sha=abc -->\nx"),
            comment(2, "mallory", "<!-- sweepgate:verdict signoff=issuecomment-99 sha=abc -->"),
            comment(3, "sweepgate[bot]", "<!-- sweepgate:labels pr=1 -->"),
            comment(4, "sweepgate[bot]", "<!-- sweepgate:verdict signoff=discussion_r7 sha=abc -->"),
            comment(5, "sweepgate[bot]", "<!-- sweepgate:verdict signoff=not-a-key sha=abc -->"),
        ];
        let key = |kind, id| SignoffKey { kind, id };
        assert_eq!(
            verified_signoffs(&comments, "sweepgate[bot]"),
            [key(SignoffKind::InlineReviewComment, 7), key(SignoffKind::ConversationComment, 10)]
        );
    }

    #[test]
    fn the_newer_signoff_is_decided_by_time_then_key() {
        let t = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().to_utc();
        let (a, b) = (
            SignoffKey { kind: SignoffKind::ConversationComment, id: 5 },
            SignoffKey { kind: SignoffKind::ReviewSummary, id: 1 },
        );
        assert!(is_newer((t("2026-09-01T11:00:00Z"), b), (t("2026-09-01T10:00:00Z"), a)));
        assert!(!is_newer((t("2026-09-01T10:00:00Z"), a), (t("2026-09-01T11:00:00Z"), b)));
        let same = t("2026-09-01T10:00:00Z");
        assert_ne!(is_newer((same, a), (same, b)), is_newer((same, b), (same, a)), "a tie has one winner");
        assert!(!is_newer((same, a), (same, a)));
    }

    #[test]
    fn a_verdict_comment_keeps_its_verdict_and_record_when_its_note_changes() {
        let fp = Fingerprint {
            signed: "s".into(),
            head: "h".into(),
            files: Default::default(),
            configs: Default::default(),
        };
        let verdict = "<!-- sweepgate:verdict signoff=issuecomment-1 sha=s -->\n## APPROVED\n";
        assert_eq!(compose(verdict, None, None), verdict, "no note, no record: the rendered verdict as is");
        let first = compose(verdict, Some("carried"), Some(&fp));
        assert!(first.trim_end().lines().last().unwrap().starts_with(RECORD_PREFIX), "{first}");
        let (kept, record) = decompose(&first);
        assert_eq!((kept, record.as_ref()), (verdict.trim_end(), Some(&fp)));
        let second = compose(kept, Some("a fresh sign-off is needed"), record.as_ref());
        assert!(second.contains("a fresh sign-off is needed") && !second.contains("carried"), "{second}");
        assert_eq!(decompose(&second).0, verdict.trim_end());
        // A record line someone else typed into the verdict text is not the last line.
        let (_, none) = decompose("x\n<!-- sweepgate:fingerprint e30= -->\ntrailing");
        assert_eq!(none, None);
    }

    #[test]
    fn bots_and_missing_accounts_never_sign_off() {
        let user = |login: &str, kind: &str| User { login: login.into(), kind: kind.into() };
        assert!(User::is_person(Some(&user("nv-owner", "User"))));
        assert!(!User::is_person(Some(&user("sweepgate[bot]", "Bot"))));
        assert!(!User::is_person(Some(&user("renamed-bot", "Bot"))));
        assert!(!User::is_person(Some(&user("github-actions[bot]", ""))));
        assert!(!User::is_person(None));
    }
}
