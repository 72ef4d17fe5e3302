//! Webhook payloads → our own event enum. Only the fields the handlers use are read; anything
//! else in the payload is ignored, and a payload missing a needed field is a typed error.

use serde::Deserialize;

use crate::github::types::{Comment, PullRequest, User};
use crate::github::RepoRef;

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    PullRequest(PullRequestEvent),
    IssueComment(CommentEvent),
    /// GitHub's `ping` after a webhook is configured.
    Ping,
    /// A well-formed event the bot does not act on.
    Ignored {
        name: String,
        reason: &'static str,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct PullRequestEvent {
    pub action: String,
    pub repo: RepoRef,
    pub installation_id: Option<u64>,
    pub pull: PullRequest,
    /// The label of a `labeled` / `unlabeled` action.
    pub label: Option<String>,
    pub sender: User,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CommentEvent {
    /// `created` or `edited` (deleted comments are ignored: deleting revokes by absence).
    pub action: String,
    pub repo: RepoRef,
    pub installation_id: Option<u64>,
    pub issue_number: u64,
    pub comment: Comment,
    /// `changes.body.from` of an `edited` action.
    pub previous_body: Option<String>,
    pub sender: User,
}

impl Event {
    /// The pull request this event concerns: events of one PR are processed in order.
    pub fn pr_key(&self) -> Option<(&RepoRef, u64)> {
        match self {
            Event::PullRequest(e) => Some((&e.repo, e.pull.number)),
            Event::IssueComment(e) => Some((&e.repo, e.issue_number)),
            Event::Ping | Event::Ignored { .. } => None,
        }
    }

    pub fn installation_id(&self) -> Option<u64> {
        match self {
            Event::PullRequest(e) => e.installation_id,
            Event::IssueComment(e) => e.installation_id,
            Event::Ping | Event::Ignored { .. } => None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EventError {
    #[error("{event} payload is not valid: {message}")]
    Invalid { event: String, message: String },
}

#[derive(Deserialize)]
struct RepoField {
    full_name: String,
}

#[derive(Deserialize)]
struct InstallationField {
    id: u64,
}

#[derive(Deserialize)]
struct LabelField {
    name: String,
}

#[derive(Deserialize)]
struct PullRequestPayload {
    action: String,
    repository: RepoField,
    #[serde(default)]
    installation: Option<InstallationField>,
    pull_request: PullRequest,
    #[serde(default)]
    label: Option<LabelField>,
    sender: User,
}

#[derive(Deserialize)]
struct IssueField {
    number: u64,
    #[serde(default)]
    pull_request: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct BodyChange {
    from: String,
}

#[derive(Deserialize)]
struct Changes {
    #[serde(default)]
    body: Option<BodyChange>,
}

#[derive(Deserialize)]
struct CommentPayload {
    action: String,
    repository: RepoField,
    #[serde(default)]
    installation: Option<InstallationField>,
    issue: IssueField,
    comment: Comment,
    #[serde(default)]
    changes: Option<Changes>,
    sender: User,
}

/// Parses the body of a delivery whose `X-GitHub-Event` is `name`.
pub fn parse(name: &str, body: &[u8]) -> Result<Event, EventError> {
    let invalid = |message: String| EventError::Invalid { event: name.chars().take(64).collect(), message };
    let repo = |full_name: &str| RepoRef::parse(full_name).map_err(|e| invalid(e.to_string()));
    match name {
        "ping" => Ok(Event::Ping),
        "pull_request" => {
            let p: PullRequestPayload = serde_json::from_slice(body).map_err(|e| invalid(e.to_string()))?;
            Ok(Event::PullRequest(PullRequestEvent {
                repo: repo(&p.repository.full_name)?,
                action: p.action,
                installation_id: p.installation.map(|i| i.id),
                pull: p.pull_request,
                label: p.label.map(|l| l.name),
                sender: p.sender,
            }))
        }
        "issue_comment" => {
            let p: CommentPayload = serde_json::from_slice(body).map_err(|e| invalid(e.to_string()))?;
            if p.issue.pull_request.is_none() {
                return Ok(Event::Ignored { name: name.into(), reason: "comment on an issue, not a pull request" });
            }
            if !matches!(p.action.as_str(), "created" | "edited") {
                return Ok(Event::Ignored { name: name.into(), reason: "only created and edited comments are read" });
            }
            Ok(Event::IssueComment(CommentEvent {
                repo: repo(&p.repository.full_name)?,
                action: p.action,
                installation_id: p.installation.map(|i| i.id),
                issue_number: p.issue.number,
                comment: p.comment,
                previous_body: p.changes.and_then(|c| c.body).map(|b| b.from),
                sender: p.sender,
            }))
        }
        _ => {
            // Still must be JSON: a signed garbage body is reported, not silently accepted.
            serde_json::from_slice::<serde::de::IgnoredAny>(body).map_err(|e| invalid(e.to_string()))?;
            Ok(Event::Ignored { name: name.chars().take(64).collect(), reason: "event type not handled" })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pr_payload(action: &str) -> serde_json::Value {
        json!({
            "action": action,
            "repository": {"full_name": "o/r"},
            "installation": {"id": 7},
            "label": {"name": "full-sweep-enabled"},
            "sender": {"login": "alice", "type": "User"},
            "pull_request": {
                "number": 12, "state": "open", "draft": false, "title": "t",
                "head": {"sha": "a".repeat(40), "ref": "feat", "repo": {"full_name": "o/r"}},
                "base": {"sha": "b".repeat(40), "ref": "main", "repo": {"full_name": "o/r"}},
                "labels": [{"name": "full-sweep-enabled"}],
                "user": {"login": "alice", "type": "User"},
                "unknown_field": {"ignored": true}
            }
        })
    }

    fn comment_payload(action: &str, on_pr: bool) -> serde_json::Value {
        let mut issue = json!({"number": 12});
        if on_pr {
            issue["pull_request"] = json!({"url": "x"});
        }
        json!({
            "action": action,
            "repository": {"full_name": "o/r"},
            "issue": issue,
            "sender": {"login": "bob", "type": "User"},
            "changes": {"body": {"from": "/use 1"}},
            "comment": {
                "id": 99, "body": "/use 2", "user": {"login": "bob", "type": "User"},
                "author_association": "MEMBER",
                "created_at": "2026-09-01T10:00:00Z", "updated_at": "2026-09-01T10:05:00Z"
            }
        })
    }

    #[test]
    fn pull_request_events() {
        let body = serde_json::to_vec(&pr_payload("labeled")).unwrap();
        let Event::PullRequest(e) = parse("pull_request", &body).unwrap() else { panic!("not a PR event") };
        assert_eq!((e.action.as_str(), e.pull.number, e.installation_id), ("labeled", 12, Some(7)));
        assert_eq!(e.label.as_deref(), Some("full-sweep-enabled"));
        assert!(!e.pull.is_fork());
    }

    #[test]
    fn comment_events_keep_the_previous_body() {
        let body = serde_json::to_vec(&comment_payload("edited", true)).unwrap();
        let Event::IssueComment(e) = parse("issue_comment", &body).unwrap() else { panic!("not a comment event") };
        assert_eq!(e.previous_body.as_deref(), Some("/use 1"));
        assert_eq!(e.comment.author_association, "MEMBER");
    }

    #[test]
    fn issue_comments_and_deletions_are_ignored() {
        let body = serde_json::to_vec(&comment_payload("created", false)).unwrap();
        assert!(matches!(parse("issue_comment", &body).unwrap(), Event::Ignored { .. }));
        let body = serde_json::to_vec(&comment_payload("deleted", true)).unwrap();
        assert!(matches!(parse("issue_comment", &body).unwrap(), Event::Ignored { .. }));
    }

    #[test]
    fn malformed_payloads_are_typed_errors() {
        assert!(parse("pull_request", b"not json").is_err());
        assert!(parse("pull_request", b"{}").unwrap_err().to_string().contains("missing field"));
        let mut bad_repo = pr_payload("opened");
        bad_repo["repository"]["full_name"] = json!("../../x");
        assert!(parse("pull_request", &serde_json::to_vec(&bad_repo).unwrap()).is_err());
        assert!(parse("push", b"\xff").is_err());
        assert!(matches!(parse("push", b"{}").unwrap(), Event::Ignored { .. }));
        assert_eq!(parse("ping", b"{}").unwrap(), Event::Ping);
    }
}
