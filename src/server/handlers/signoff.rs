//! The sign-off verifier wired to events (spec 30 §1, ARCHITECTURE decisions 2-3): collect the
//! Evidence at a pinned head, decide, upsert the ONE verdict comment of that sign-off resource
//! (found again by its marker among the bot's own comments), and set the commit status
//! `codeowner-signoff-verify` on the pinned head: pending while verifying, then success on
//! APPROVED or failure on REJECTED (or when evidence could not be collected).
//! Before any of that, an event's sign-off must be *eligible* (`intake::eligibility`): an
//! ineligible one gets one short bilingual reply, edited in place per PR, and never touches
//! the status, so a stranger's pasted checklist costs a handful of API calls, not a collection.

use std::collections::BTreeMap;

use serde_json::json;

use crate::checks::c14_pareto_coverage::FrontierChart;
use crate::checks::{verify, VerdictWord};
use crate::domain::codeowners::Codeowners;
use crate::evidence::collect::{collect, CollectLimits, CollectRequest, UpstreamClient, UpstreamConfig};
use crate::github::types::{PullRequest, StatusInput, StatusState, User};
use crate::github::{GitHub, GitHubError, RepoRef};
use crate::intake::eligibility::{self, Eligibility};
use crate::intake::signoff::{SignoffKey, SignoffUrl};
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
    /// A new or edited sign-off by `author`: the PR must be open and ready, and the author
    /// eligible.
    Event { author: &'a User },
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

async fn set_status<G: GitHub>(
    gh: &G,
    cfg: &VerifyConfig,
    target: (&RepoRef, u64),
    sha: &str,
    state: StatusState,
    description: String,
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let Some(context) = &cfg.status_context else { return Ok(()) };
    let (repo, pr) = target;
    let target_url = cfg.details.as_ref().map(|d| d.url(repo, pr));
    let status = StatusInput { state, context: context.clone(), description, target_url };
    if post_status(gh, repo, sha, &status).await? {
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
pub async fn eligibility_of<G: GitHub>(
    gh: &G,
    repo: &RepoRef,
    pull: &PullRequest,
    author: &str,
) -> Result<Eligibility, GitHubError> {
    let permission = gh.collaborator_permission(repo, author).await?;
    if permission.can_write() {
        return Ok(Eligibility::Writer(permission));
    }
    let Some(owners) = codeowners_at(gh, repo, &pull.base.sha).await? else {
        return Ok(Eligibility::NotEligible);
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
    Ok(eligibility::decide(author, permission, Some(&owners), &changed, &memberships))
}

/// The one reply per PR for sign-offs that do not count (edited in place for the next one).
async fn refuse<G: GitHub>(
    gh: &G,
    bot_login: &str,
    target: (&RepoRef, u64, SignoffKey),
    pull: &PullRequest,
    author: &str,
    why: &Eligibility,
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let (repo, pr, key) = target;
    let teams = match why {
        Eligibility::Unknown { teams } => teams.clone(),
        _ => Vec::new(),
    };
    let context = json!({"key": key.to_string(), "signer": author, "base_sha": pull.base.sha, "teams": teams});
    let body = render_bilingual("signoff_refused", &context)?;
    let comments = gh.list_issue_comments(repo, pr).await?;
    let marker = Marker::new("signoff-refused").with("pr", pr);
    upsert(gh, bot_login, Target { repo, number: pr }, &comments, &marker, &body, out).await?;
    out.note(format!("sign-off {key} by {author} not counted ({why:?}): the status is unchanged"));
    Ok(())
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
    if let Trigger::Event { author } = trigger {
        if pull.state != "open" || pull.draft {
            out.note(format!(
                "sign-off {key} skipped: PR #{pr} is {}",
                if pull.draft { "a draft" } else { "not open" }
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
        if !eligibility.is_eligible() {
            return refuse(gh, bot_login, (repo, pr, key), &pull, &author.login, &eligibility, out).await;
        }
        out.note(format!("sign-off {key} by {} is eligible ({eligibility:?})", author.login));
    }
    let head = pull.head.sha.clone();
    set_status(gh, cfg, (repo, pr), &head, StatusState::Pending, format!("verifying sign-off {key}"), out).await?;
    let url = SignoffUrl { repo: repo.to_string(), pr, key };
    let request = CollectRequest { repo: repo.clone(), pr, signoff: url, review_date };
    let upstream = UpstreamClient::new(cfg.upstream.clone())
        .map_err(|e| HandlerError::GitHub(crate::github::GitHubError::Setup(e.to_string())))?;
    let evidence = match collect(gh, &upstream, &request, &cfg.limits).await {
        Ok(evidence) => evidence,
        Err(err) => {
            let description = format!("sign-off {key} could not be verified: evidence unavailable");
            set_status(gh, cfg, (repo, pr), &head, StatusState::Failure, description, out).await?;
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
    let short = pinned.get(..7).unwrap_or(&pinned);
    let description = if evidence.head_moved() {
        format!("{word} for {short} only; the head moved: a fresh sign-off is needed")
    } else {
        format!("sign-off {key}: {word} at {short}")
    };
    set_status(gh, cfg, (repo, pr), &pinned, state, description, out).await
}

/// The reconcile pass's repair of a lost or interrupted verification: on an open, ready PR whose
/// required status on the head is `pending` (a verification that never finished), or missing
/// while the newest eligible sign-off has no verdict comment (a delivery that never arrived),
/// that sign-off is verified again. Conversation comments only: they are what the PR's comment
/// list shows (reviews are not listed here). Pushes alone never trigger one (spec 30 §1.2).
pub(super) async fn repair<G: GitHub>(
    gh: &G,
    cfg: &super::BotConfig,
    repo: &RepoRef,
    pull: &PullRequest,
    comments: &[crate::github::types::Comment],
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
    let signoffs = comments
        .iter()
        .rev()
        .filter(|c| crate::intake::signoff::has_signoff_phrase(&c.body) && User::is_person(c.user.as_ref()));
    for c in signoffs {
        let Some(author) = c.user.as_ref() else { continue };
        if !eligibility_of(gh, repo, pull, &author.login).await?.is_eligible() {
            continue;
        }
        let key = SignoffKey { kind: crate::intake::signoff::SignoffKind::ConversationComment, id: c.id };
        let has_verdict = find_own(comments, &cfg.bot_login, &Marker::new("verdict").with("signoff", key)).is_some();
        if current.is_none() && has_verdict {
            return Ok(()); // verified at an earlier head: a push needs a fresh sign-off, not a repair
        }
        out.note(format!("reconcile: re-verifying sign-off {key} (status {current:?})"));
        let target = SignoffTarget { repo, pr: pull.number, key, trigger: Trigger::Event { author } };
        return verify_signoff(gh, &cfg.bot_login, &cfg.verify, target, chrono::Utc::now().date_naive(), out).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::github::types::User;

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
