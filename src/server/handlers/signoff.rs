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

use crate::checks::c14_pareto_coverage::FrontierChart;
use crate::checks::{verify, VerdictWord};
use crate::domain::codeowners::Codeowners;
use crate::evidence::collect::{collect, CollectLimits, CollectRequest, Known, UpstreamClient, UpstreamConfig};
use crate::github::types::{
    CollaboratorPermission, Comment, PullRequest, SignoffResource, StatusInput, StatusState, User,
};
use crate::github::{GitHub, GitHubError, RepoRef};
use crate::intake::eligibility::{self, Eligibility};
use crate::intake::labels::Permission;
use crate::intake::signoff::{has_signoff_phrase, SignoffKey, SignoffKind, SignoffUrl};
use crate::repo::Logical;
use crate::report::marker::Marker;
use crate::report::render_bilingual;
use crate::report::verdict::{render_markdown, ReportOptions};

use super::{post_status, upsert, HandlerError, Outcome, Target};
use crate::github::sticky::find_own;

/// Largest CODEOWNERS read (GitHub ignores files of 3 MB or more).
const MAX_CODEOWNERS_BYTES: u64 = 3 * 1024 * 1024;

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
}

impl Default for VerifyConfig {
    fn default() -> Self {
        VerifyConfig {
            status_context: Some("codeowner-signoff-verify".into()),
            reviewers: Vec::new(),
            upstream: UpstreamConfig::default(),
            limits: CollectLimits::default(),
            details: None,
        }
    }
}

/// What asked for a verification.
#[derive(Debug, Clone, Copy)]
pub enum Trigger<'a> {
    /// A new or edited sign-off by `author`, posted at `posted_at` (`None`: the payload did not
    /// say): the PR must be open and ready, the author eligible, and no newer sign-off verified.
    Event { author: &'a User, posted_at: Option<DateTime<Utc>> },
    /// A manual `workflow_dispatch`, which only writers can start: any PR state, and Check 0
    /// alone judges the signer (spec 30 §1.2, docs/decisions.md C7/A1).
    Dispatch,
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
    Ok(())
}

/// The changed paths of the PR (both paths of a rename).
async fn changed_paths<G: GitHub>(gh: &G, repo: &RepoRef, pr: u64) -> Result<Vec<String>, GitHubError> {
    let mut paths = Vec::new();
    for f in gh.list_pull_files(repo, pr).await? {
        paths.extend(f.previous_filename);
        paths.push(f.filename);
    }
    Ok(paths)
}

/// CODEOWNERS at `sha` from the first of GitHub's locations that has it; `None` when none does.
async fn codeowners_at<G: GitHub>(gh: &G, repo: &RepoRef, sha: &str) -> Result<Option<Codeowners>, GitHubError> {
    for path in Logical::Codeowners.default_candidates() {
        if let Some(text) = gh.get_file_text(repo, path, sha, MAX_CODEOWNERS_BYTES).await? {
            return Ok(Some(Codeowners::parse(&text, path).0));
        }
    }
    Ok(None)
}

/// Whether `author` may sign off on `pull`: one permission call; CODEOWNERS at the base, the
/// changed paths and team memberships only for a non-writer. A membership answered 404 is not
/// confirmed, one that fails otherwise is unknown (neither is eligibility); any other failed
/// read is an error of the event (retried).
/// Also returns the permission as read, which the collector records instead of reading it again.
pub async fn eligibility_of<G: GitHub>(
    gh: &G,
    repo: &RepoRef,
    pull: &PullRequest,
    author: &str,
) -> Result<(Eligibility, CollaboratorPermission), GitHubError> {
    let detail = gh.collaborator_permission_detail(repo, author).await?;
    let permission =
        Permission::parse(if detail.role_name.is_empty() { &detail.permission } else { &detail.role_name });
    if permission.can_write() {
        return Ok((Eligibility::Writer(permission), detail));
    }
    let Some(owners) = codeowners_at(gh, repo, &pull.base.sha).await? else {
        return Ok((Eligibility::NotEligible, detail));
    };
    let changed = changed_paths(gh, repo, pull.number).await?;
    let changed: Vec<&str> = changed.iter().map(String::as_str).collect();
    let mut memberships = BTreeMap::new();
    for (org, slug) in eligibility::teams_to_ask(&owners, &changed).into_iter().take(eligibility::MAX_TEAMS) {
        let member = match gh.team_membership(&org, &slug, author).await {
            Ok(member) => Some(member),
            // GitHub answers 404 both for "not a member" and for "team not visible": either
            // way membership is not confirmed, so the author is not eligible through it.
            Err(err) if err.is_not_found() => Some(false),
            Err(err) => {
                tracing::debug!(org, slug, "team membership unreadable: {err}");
                None
            }
        };
        memberships.insert(format!("{org}/{slug}"), member);
    }
    Ok((eligibility::decide(author, permission, Some(&owners), &changed, &memberships), detail))
}

/// The one reply per PR for sign-offs that do not count (edited in place for the next one).
async fn refuse<G: GitHub>(
    gh: &G,
    bot_login: &str,
    target: (&RepoRef, &PullRequest, SignoffKey),
    comments: &[Comment],
    author: &str,
    why: &Eligibility,
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let (repo, pull, key) = target;
    let pr = pull.number;
    let teams = match why {
        Eligibility::Unknown { teams } => teams.clone(),
        _ => Vec::new(),
    };
    let context = json!({"key": key.to_string(), "signer": author, "base_sha": pull.base.sha, "teams": teams});
    let body = render_bilingual("signoff_refused", &context)?;
    let marker = Marker::new("signoff-refused").with("pr", pr);
    upsert(gh, bot_login, Target { repo, number: pr }, comments, &marker, &body, out).await?;
    out.note(format!("sign-off {key} by {author} not counted ({why:?}): the status is unchanged"));
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
    if let Trigger::Event { author, posted_at } = trigger {
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
        let eligibility = match eligibility_of(gh, repo, &pull, &author.login).await {
            Err(GitHubError::DryRun(what)) => {
                out.note(format!("sign-off {key} not verified: dry-run mode cannot do {what}"));
                return Ok(());
            }
            other => other?,
        };
        let (eligibility, permission) = eligibility;
        if !eligibility.is_eligible() {
            return refuse(gh, bot_login, (repo, &pull, key), &comments, &author.login, &eligibility, out).await;
        }
        out.note(format!("sign-off {key} by {} is eligible ({eligibility:?})", author.login));
        listed_comments = Some(comments);
        known_permissions.insert(author.login.clone(), permission);
    }
    let head = pull.head.sha.clone();
    set_status(gh, cfg, (repo, pr), &head, StatusState::Pending, format!("verifying sign-off {key}"), false, out)
        .await?;
    let url = SignoffUrl { repo: repo.to_string(), pr, key };
    let request = CollectRequest { repo: repo.clone(), pr, signoff: url, review_date };
    let upstream = UpstreamClient::new(cfg.upstream.clone())
        .map_err(|e| HandlerError::GitHub(crate::github::GitHubError::Setup(e.to_string())))?;
    let known = Known { pull: Some(pull), comments: listed_comments, permissions: known_permissions };
    let evidence = match collect(gh, &upstream, &request, &cfg.limits, known).await {
        Ok(evidence) => evidence,
        Err(err) => {
            let description = format!("sign-off {key} could not be verified: evidence unavailable");
            set_status(gh, cfg, (repo, pr), &head, StatusState::Failure, description, true, out).await?;
            return Err(err.into());
        }
    };
    // Evidence pins the head it read; the status goes on that commit, not on a later one.
    let pinned = evidence.pull_request.head_sha.clone();
    let verdict = verify(&evidence);
    out.charts = FrontierChart::of_verdict(&verdict);
    let options = ReportOptions { reviewers: cfg.reviewers.clone(), lang: None };
    let body = render_markdown(&evidence, &verdict, &options)?;
    let comments = gh.list_issue_comments(repo, pr).await?;
    let find = Marker::new("verdict").with("signoff", key);
    match find_own(&comments, bot_login, &find) {
        Some((c, _)) if c.body == body => out.note(format!("verdict comment {} unchanged", c.id)),
        Some((c, _)) => {
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
    let performance = crate::checks::performance::compare(&evidence);
    cfg.details.iter().for_each(|d| d.record_performance(repo, pr, &key.to_string(), &performance));
    out.performance = performance;
    let short = pinned.get(..7).unwrap_or(&pinned);
    let description = if evidence.head_moved() {
        format!("{word} for {short} only; the head moved: a fresh sign-off is needed")
    } else {
        format!("sign-off {key}: {word} at {short}")
    };
    set_status(gh, cfg, (repo, pr), &pinned, state, description, pinned == head, out).await
}

/// The reconcile pass's repair of a lost or interrupted verification: on an open, ready PR whose
/// required status on the head is `pending` (a verification that never finished), or missing
/// while the newest eligible sign-off has no verdict comment (a delivery that never arrived),
/// that sign-off is verified again. Every shape the intake accepts counts: conversation
/// comments (listed already), review summaries and inline review comments (one list each, read
/// only when the status needs a repair). Pushes alone never trigger one (spec 30 §1.2).
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
        if !eligibility_of(gh, repo, pull, &author.login).await?.0.is_eligible() {
            continue;
        }
        let has_verdict = find_own(comments, &cfg.bot_login, &Marker::new("verdict").with("signoff", key)).is_some();
        if current.is_none() && has_verdict {
            return Ok(()); // verified at an earlier head: a push needs a fresh sign-off, not a repair
        }
        out.note(format!("reconcile: re-verifying sign-off {key} (status {current:?})"));
        let trigger = Trigger::Event { author, posted_at: Some(*at) };
        let target = SignoffTarget { repo, pr: pull.number, key: *key, trigger };
        return verify_signoff(gh, &cfg.bot_login, &cfg.verify, target, chrono::Utc::now().date_naive(), out).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn bots_and_missing_accounts_never_sign_off() {
        let user = |login: &str, kind: &str| User { login: login.into(), kind: kind.into() };
        assert!(User::is_person(Some(&user("nv-owner", "User"))));
        assert!(!User::is_person(Some(&user("sweepgate[bot]", "Bot"))));
        assert!(!User::is_person(Some(&user("renamed-bot", "Bot"))));
        assert!(!User::is_person(Some(&user("github-actions[bot]", ""))));
        assert!(!User::is_person(None));
    }
}
