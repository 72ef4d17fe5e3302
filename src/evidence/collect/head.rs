//! What the collector gathers for a PR's head before any sign-off: the PR (already read) and
//! its body as the author's sign-off. Preflight and the sweep check run's comparison with the
//! published curve (decision PF6) collect through it.

use super::{CollectRequest, Known};
use crate::evidence::{Signoff, SignoffKind};
use crate::github::types::PullRequest;
use crate::github::RepoRef;
use crate::intake::signoff::{SignoffKey, SignoffUrl};

/// Most bytes of the PR body judged (a sign-off body is bounded the same way).
const MAX_BODY_BYTES: usize = 64 * 1024;

/// The PR body as the additional detail section of a sign-off by the PR's author.
pub fn author_signoff(repo: &RepoRef, pull: &PullRequest) -> Signoff {
    let body = pull.body.as_deref().unwrap_or_default();
    let end = (0..=body.len().min(MAX_BODY_BYTES)).rev().find(|i| body.is_char_boundary(*i)).unwrap_or(0);
    Signoff {
        kind: SignoffKind::Comment,
        id: 0,
        author: crate::github::types::User::login_of(pull.user.as_ref()).to_string(),
        body: format!("### Additional detail section:\n{}\n", &body[..end]),
        url: format!("https://github.com/{repo}/pull/{}", pull.number),
        created_at: String::new(),
        updated_at: String::new(),
    }
}

/// What the collector needs to gather the Evidence of the PR's head before any sign-off: the PR
/// (already read) and its body as the author's sign-off. Preflight and the sweep check run's
/// comparison with the published curve (decision PF6) collect through it.
pub fn head_request(repo: &RepoRef, pull: &PullRequest) -> (CollectRequest, Known) {
    let key = SignoffKey { kind: crate::intake::signoff::SignoffKind::ConversationComment, id: 0 };
    let request = CollectRequest {
        repo: repo.clone(),
        pr: pull.number,
        signoff: SignoffUrl { repo: repo.to_string(), pr: pull.number, key },
        review_date: chrono::Utc::now().date_naive(),
    };
    let known = Known { pull: Some(pull.clone()), signoff: Some(author_signoff(repo, pull)), ..Known::default() };
    (request, known)
}
