//! One bot comment per marker, edited in place: the pattern of every sticky comment the bot
//! keeps (label decision, dispatch status). Comments by anyone but the bot are never touched,
//! so a user quoting a marker cannot capture the comment.

use super::types::{CheckRun, CheckRunInput, Comment};
use super::{GitHub, GitHubError, RepoRef};
use crate::report::marker::{with_marker, Marker};

/// What an upsert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upserted {
    Created(u64),
    Edited(u64),
    Unchanged(u64),
}

/// The bot's first comment whose marker has `wanted`'s kind and fields.
pub fn find_own<'a>(comments: &'a [Comment], bot_login: &str, wanted: &Marker) -> Option<(&'a Comment, Marker)> {
    comments.iter().filter(|c| c.user.as_ref().is_some_and(|u| u.login.eq_ignore_ascii_case(bot_login))).find_map(|c| {
        let marker = Marker::parse(&c.body)?;
        marker.matches(wanted).then_some((c, marker))
    })
}

/// The bot's check run `name` on `sha`, told apart by its `external_id` (the check-run form of
/// a sticky comment: found, then edited in place by [`write_check_run`]).
pub async fn own_check_run<G: GitHub>(
    gh: &G,
    repo: &RepoRef,
    sha: &str,
    name: &str,
    external_id: &str,
) -> Result<Option<CheckRun>, GitHubError> {
    let runs = gh.list_check_runs(repo, sha).await?;
    Ok(runs.into_iter().find(|r| r.name == name && r.external_id.as_deref() == Some(external_id)))
}

/// Writes `input` over the bot's `existing` check run, or creates it.
pub async fn write_check_run<G: GitHub>(
    gh: &G,
    repo: &RepoRef,
    existing: Option<&CheckRun>,
    input: &CheckRunInput,
) -> Result<(), GitHubError> {
    match existing {
        Some(run) => gh.update_check_run(repo, run.id, input).await,
        None => gh.create_check_run(repo, input).await.map(drop),
    }
}

/// The issue or pull request a sticky comment lives on, and whose comments count as the bot's.
#[derive(Debug, Clone, Copy)]
pub struct Thread<'a> {
    pub repo: &'a RepoRef,
    pub issue: u64,
    pub bot_login: &'a str,
}

/// Creates `marker` + `body` on the thread, or edits the bot's comment found by `find` when its
/// text differs. `comments` are the thread's comments as just listed.
pub async fn upsert<G: GitHub>(
    gh: &G,
    thread: Thread<'_>,
    comments: &[Comment],
    find: &Marker,
    marker: &Marker,
    body: &str,
) -> Result<Upserted, GitHubError> {
    let Thread { repo, issue, bot_login } = thread;
    let full = with_marker(marker, body);
    match find_own(comments, bot_login, find) {
        Some((c, _)) if c.body == full => Ok(Upserted::Unchanged(c.id)),
        Some((c, _)) => Ok(Upserted::Edited(gh.update_issue_comment(repo, c.id, &full).await?.id)),
        None => Ok(Upserted::Created(gh.create_issue_comment(repo, issue, &full).await?.id)),
    }
}
