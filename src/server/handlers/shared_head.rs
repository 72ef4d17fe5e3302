//! A commit status belongs to a SHA, so on a head several open PRs share, `success` holds only
//! while each of them has its own APPROVED verdict there (issue 35 case 5, decision HT15).

use crate::github::types::Comment;
use crate::github::{GitHub, GitHubError, RepoRef};
use crate::intake::signoff::SignoffKey;
use crate::report::marker::Marker;

/// Most other open PRs at one head whose verdicts are read (one comment list each).
pub(super) const MAX_SHARERS: usize = 5;

/// The sign-off status of a head that open PR `sharer` shares without an approved sign-off of
/// its own, in English and 中文 (within GitHub's 140 characters).
pub(super) fn shared_head_description(sharer: u64) -> String {
    format!(
        "#{sharer} shares this commit without its own approved sign-off / #{sharer} 共用此提交，但没有自己通过的签核"
    )
}

/// The sign-off of the bot's newest verdict in `comments` when it is APPROVED at `sha`.
pub(super) fn approved_at(comments: &[Comment], bot_login: &str, sha: &str) -> Option<SignoffKey> {
    let (comment, marker) = newest_verdict(comments, bot_login)?;
    // The verdict's heading follows its marker line (`report::verdict`).
    let heading = comment.body.lines().nth(1).unwrap_or_default();
    let approved = marker.get("sha") == Some(sha) && heading.starts_with("## ") && heading.contains("**APPROVED**");
    approved.then(|| marker.get("signoff").and_then(|k| k.parse().ok())).flatten()
}

/// The first open PR other than `pr` whose head is `sha` and whose own newest verdict is not
/// APPROVED at `sha` (issue 35 case 5, HT15): a commit status shows on every PR at its
/// commit, so `success` there needs every one of them signed off. More sharers than
/// [`MAX_SHARERS`] are not known to be approved.
pub(super) async fn uncovered_sharer<G: GitHub>(
    gh: &G,
    bot_login: &str,
    repo: &RepoRef,
    pr: u64,
    sha: &str,
) -> Result<Option<u64>, GitHubError> {
    let pulls = match gh.list_commit_pulls(repo, sha).await {
        Ok(pulls) => pulls,
        Err(GitHubError::DryRun(_)) => return Ok(None),
        Err(err) => return Err(err),
    };
    let sharers: Vec<u64> =
        pulls.iter().filter(|p| p.number != pr && p.state == "open" && p.head.sha == sha).map(|p| p.number).collect();
    for sharer in sharers.iter().take(MAX_SHARERS) {
        let comments = gh.list_issue_comments(repo, *sharer).await?;
        if approved_at(&comments, bot_login, sha).is_none() {
            return Ok(Some(*sharer));
        }
    }
    Ok(sharers.get(MAX_SHARERS).copied())
}

/// The bot's newest verdict comment on the PR and its marker.
pub(super) fn newest_verdict<'c>(comments: &'c [Comment], bot_login: &str) -> Option<(&'c Comment, Marker)> {
    comments
        .iter()
        .rev()
        .filter(|c| c.user.as_ref().is_some_and(|u| u.login.eq_ignore_ascii_case(bot_login)))
        .find_map(|c| Some((c, Marker::parse(&c.body).filter(|m| m.kind == "verdict")?)))
}
