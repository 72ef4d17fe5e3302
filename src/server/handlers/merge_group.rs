//! Merge queue (decision I11): a merge group's commit needs the required statuses too, or the
//! queue stalls. Both statuses the bot owns are facts about the pull request (its labels; the
//! sign-off of its head), so each is copied from the queued PR's head to the group's commit.
//! Only statuses the bot itself posted are copied; anything else fails the group at once, so
//! the queue drops it instead of waiting for its timeout.

use crate::github::types::{CommitStatus, StatusInput, StatusState};
use crate::github::GitHub;
use crate::intake::event::MergeGroupEvent;

use super::{available, short, BotConfig, HandlerError, Outcome};

/// What goes on the merge group's commit for one context, given the PR head's statuses.
fn copied_status(
    context: &str,
    bot_login: &str,
    pr: u64,
    head_sha: &str,
    head_statuses: Option<&[CommitStatus]>,
) -> StatusInput {
    let from = match head_sha {
        "" => format!("PR #{pr}"),
        sha => format!("PR #{pr} head {}", short(sha)),
    };
    let own = |s: &&CommitStatus| {
        s.context == context && s.creator.as_ref().is_some_and(|c| c.login.eq_ignore_ascii_case(bot_login))
    };
    let (state, description) = match head_statuses {
        None => (StatusState::Failure, format!("{from}: statuses not readable in dry-run mode")),
        // Listed newest first: the bot's latest word on the head.
        Some(list) => match list.iter().find(own) {
            None => (StatusState::Failure, format!("{from} has no {context} status")),
            Some(s) if s.state == StatusState::Pending => {
                (StatusState::Failure, format!("{from}: {context} still pending; re-queue when it completes"))
            }
            Some(s) => (s.state, format!("{from}: {}", s.description.as_deref().unwrap_or(""))),
        },
    };
    StatusInput { state, context: context.to_string(), description, target_url: None }
}

pub async fn merge_group<G: GitHub>(
    gh: &G,
    cfg: &BotConfig,
    e: &MergeGroupEvent,
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let contexts: Vec<&str> =
        std::iter::once(cfg.status_context.as_str()).chain(cfg.verify.status_context.as_deref()).collect();
    let statuses: Vec<StatusInput> = match e.pr {
        None => contexts
            .iter()
            .map(|context| StatusInput {
                state: StatusState::Failure,
                context: context.to_string(),
                description: format!("merge group ref {} names no pull request", e.head_ref),
                target_url: None,
            })
            .collect(),
        Some(pr) => {
            let head = available(gh.get_pull(&e.repo, pr).await)?.map(|pull| pull.head.sha);
            let listed = match &head {
                Some(sha) => available(gh.list_commit_statuses(&e.repo, sha).await)?,
                None => None,
            };
            let head = head.unwrap_or_default();
            contexts.iter().map(|c| copied_status(c, &cfg.bot_login, pr, &head, listed.as_deref())).collect()
        }
    };
    for mut status in statuses {
        status.target_url = e.pr.zip(cfg.verify.details.as_ref()).map(|(pr, d)| d.url(&e.repo, pr));
        gh.create_status(&e.repo, &e.head_sha, &status).await?;
        out.note(format!(
            "merge group {}: status {} {:?}: {}",
            short(&e.head_sha),
            status.context,
            status.state,
            status.description
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::types::User;

    fn status(state: StatusState, context: &str, creator: &str, description: &str) -> CommitStatus {
        CommitStatus {
            state,
            context: context.into(),
            description: Some(description.into()),
            creator: Some(User { login: creator.into(), kind: "Bot".into() }),
        }
    }

    #[test]
    fn only_the_bots_latest_status_is_copied() {
        let head = "3f1c2a9b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a";
        let list = [
            status(StatusState::Success, "ctx", "mallory", "forged"),
            status(StatusState::Failure, "ctx", "sweepgate[bot]", "no sweep: no-primary-label"),
            status(StatusState::Success, "ctx", "sweepgate[bot]", "sweep: full-sweep-enabled"),
        ];
        let copied = copied_status("ctx", "sweepgate[bot]", 42, head, Some(&list));
        assert_eq!(copied.state, StatusState::Failure);
        assert_eq!(copied.description, "PR #42 head 3f1c2a9b8d7e: no sweep: no-primary-label");
        let missing = copied_status("other", "sweepgate[bot]", 42, head, Some(&list));
        assert_eq!(
            (missing.state, missing.description.as_str()),
            (StatusState::Failure, "PR #42 head 3f1c2a9b8d7e has no other status")
        );
        let pending = [status(StatusState::Pending, "ctx", "sweepgate[bot]", "verifying")];
        assert_eq!(copied_status("ctx", "sweepgate[bot]", 42, head, Some(&pending)).state, StatusState::Failure);
        let dry_run = copied_status("ctx", "sweepgate[bot]", 42, "", None);
        assert_eq!(
            (dry_run.state, dry_run.description.as_str()),
            (StatusState::Failure, "PR #42: statuses not readable in dry-run mode")
        );
    }
}
