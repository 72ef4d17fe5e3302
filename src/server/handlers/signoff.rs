//! The sign-off verifier wired to events (spec 30 §1, ARCHITECTURE decisions 2-3): collect the
//! Evidence at a pinned head, decide, upsert the ONE verdict comment of that sign-off resource
//! (found again by its marker among the bot's own comments), and set the commit status
//! `codeowner-signoff-verify` on the pinned head: pending while verifying, then success on
//! APPROVED or failure on REJECTED (or when evidence could not be collected).

use crate::checks::c14_pareto_coverage::FrontierChart;
use crate::checks::{verify, VerdictWord};
use crate::evidence::collect::{collect, CollectLimits, CollectRequest, UpstreamClient, UpstreamConfig};
use crate::github::types::{StatusInput, StatusState};
use crate::github::{GitHub, RepoRef};
use crate::intake::signoff::{SignoffKey, SignoffUrl};
use crate::report::marker::Marker;
use crate::report::verdict::{render_markdown, ReportOptions};

use super::{HandlerError, Outcome};
use crate::github::sticky::find_own;

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

/// Sign-offs are people's: a bot account (the verifier's own included) never triggers one, so
/// a verdict that quotes the phrase cannot loop.
pub fn is_human(user: &crate::github::types::User) -> bool {
    !(user.kind.eq_ignore_ascii_case("bot") || user.login.ends_with("[bot]"))
}

/// Which sign-off to verify, and whether the PR must be open and ready (events) or not (dispatch).
pub struct SignoffTarget<'a> {
    pub repo: &'a RepoRef,
    pub pr: u64,
    pub key: SignoffKey,
    pub require_open: bool,
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
    gh.create_status(repo, sha, &status).await?;
    out.note(format!("status {context} {state:?} on {sha}"));
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
    let SignoffTarget { repo, pr, key, require_open } = target;
    let pull = gh.get_pull(repo, pr).await?;
    if require_open && (pull.state != "open" || pull.draft) {
        out.note(format!("sign-off {key} skipped: PR #{pr} is {}", if pull.draft { "a draft" } else { "not open" }));
        return Ok(());
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::types::User;

    #[test]
    fn bots_never_sign_off() {
        let user = |login: &str, kind: &str| User { login: login.into(), kind: kind.into() };
        assert!(is_human(&user("nv-owner", "User")));
        assert!(!is_human(&user("sweepgate[bot]", "Bot")));
        assert!(!is_human(&user("renamed-bot", "Bot")));
        assert!(!is_human(&user("github-actions[bot]", "")));
    }
}
