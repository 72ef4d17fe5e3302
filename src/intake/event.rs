//! Webhook payloads → our own event enum. Only the fields the handlers use are read; anything
//! else in the payload is ignored, and a payload missing a needed field is a typed error.
//! An action the bot does not handle is answered as ignored from the `action` field alone,
//! before the rest of the payload is parsed, so shapes we never read cannot refuse a delivery.
//! Accounts may be null (deleted) and `sender` may be absent: both read as "not a person".

use serde::Deserialize;

use crate::github::types::{Comment, PullRequest, User};
use crate::github::RepoRef;
use crate::intake::signoff::{SignoffKey, SignoffKind, SignoffUrl};

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Boxed: a pull request (head and base repositories) is the largest payload by far.
    PullRequest(Box<PullRequestEvent>),
    IssueComment(CommentEvent),
    /// A review summary or an inline review comment, created/submitted or edited.
    Review(ReviewEvent),
    /// A manual `workflow_dispatch` naming one sign-off by URL (spec 30 §1.2).
    Dispatch(DispatchEvent),
    /// The merge queue asks for the required statuses of a merge group's commit.
    MergeGroup(MergeGroupEvent),
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
    /// The target branch before an `edited` action that retargeted the PR (`changes.base.ref.from`).
    pub previous_base: Option<String>,
    /// `None`: no sender in the payload (never a person who could approve).
    pub sender: Option<User>,
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
    pub sender: Option<User>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReviewEvent {
    pub action: String,
    pub repo: RepoRef,
    pub installation_id: Option<u64>,
    pub pr: u64,
    /// `pullrequestreview-N` or `discussion_rN`.
    pub key: SignoffKey,
    /// Empty for a review submitted without a summary.
    pub body: String,
    /// The review's (or review comment's) author; `None` for a deleted account.
    pub author: Option<User>,
    /// When it was posted (a review's `submitted_at`, a comment's `created_at`); `None` when
    /// the payload does not say.
    pub posted_at: Option<chrono::DateTime<chrono::Utc>>,
    pub sender: Option<User>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DispatchEvent {
    pub repo: RepoRef,
    pub installation_id: Option<u64>,
    pub signoff: SignoffUrl,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MergeGroupEvent {
    pub repo: RepoRef,
    pub installation_id: Option<u64>,
    /// The merge group's commit: where the statuses go.
    pub head_sha: String,
    pub head_ref: String,
    pub base_sha: String,
    /// The queued pull request named by `head_ref`; `None` when the ref has another shape.
    pub pr: Option<u64>,
}

/// The pull request of a merge-queue branch, `[refs/heads/]gh-readonly-queue/<base>/pr-<N>-<sha>`
/// (the base branch may itself contain slashes).
pub fn queued_pr(head_ref: &str) -> Option<u64> {
    let branch = head_ref.strip_prefix("refs/heads/").unwrap_or(head_ref);
    let (base_and_rest, last) = branch.strip_prefix("gh-readonly-queue/")?.rsplit_once('/')?;
    let (number, sha) = last.strip_prefix("pr-")?.split_once('-')?;
    let valid = !base_and_rest.is_empty()
        && !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
        && !sha.is_empty()
        && sha.bytes().all(|b| b.is_ascii_hexdigit());
    valid.then(|| number.parse().ok()).flatten()
}

impl Event {
    /// The pull request this event concerns: events of one PR are processed in order.
    pub fn pr_key(&self) -> Option<(&RepoRef, u64)> {
        match self {
            Event::PullRequest(e) => Some((&e.repo, e.pull.number)),
            Event::IssueComment(e) => Some((&e.repo, e.issue_number)),
            Event::Review(e) => Some((&e.repo, e.pr)),
            Event::Dispatch(e) => Some((&e.repo, e.signoff.pr)),
            // A group naming no PR is still answered (with failures); such groups share key 0.
            Event::MergeGroup(e) => Some((&e.repo, e.pr.unwrap_or(0))),
            Event::Ping | Event::Ignored { .. } => None,
        }
    }

    /// Why the bot does not act on this event (`None` for events it handles).
    pub fn ignored_reason(&self) -> Option<&'static str> {
        match self {
            Event::Ignored { reason, .. } => Some(reason),
            _ => None,
        }
    }

    pub fn installation_id(&self) -> Option<u64> {
        match self {
            Event::PullRequest(e) => e.installation_id,
            Event::IssueComment(e) => e.installation_id,
            Event::Review(e) => e.installation_id,
            Event::Dispatch(e) => e.installation_id,
            Event::MergeGroup(e) => e.installation_id,
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
    #[serde(default)]
    changes: Option<PullChanges>,
    #[serde(default)]
    sender: Option<User>,
}

/// `changes` of a `pull_request.edited` action: a retarget names the previous base.
#[derive(Deserialize)]
struct PullChanges {
    #[serde(default)]
    base: Option<BaseChange>,
}

#[derive(Deserialize)]
struct BaseChange {
    #[serde(rename = "ref")]
    reference: ChangedFrom,
}

#[derive(Deserialize)]
struct IssueField {
    number: u64,
    #[serde(default)]
    pull_request: Option<serde::de::IgnoredAny>,
}

/// `changes.<field>.from` of an `edited` action: the value before the edit.
#[derive(Deserialize)]
struct ChangedFrom {
    from: String,
}

#[derive(Deserialize)]
struct Changes {
    #[serde(default)]
    body: Option<ChangedFrom>,
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
    #[serde(default)]
    sender: Option<User>,
}

#[derive(Deserialize)]
struct NumberField {
    number: u64,
}

#[derive(Deserialize)]
struct ReviewBody {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    user: Option<User>,
    #[serde(default)]
    submitted_at: Option<chrono::DateTime<chrono::Utc>>,
    #[serde(default)]
    created_at: Option<chrono::DateTime<chrono::Utc>>,
}

#[derive(Deserialize)]
struct ReviewPayload {
    action: String,
    repository: RepoField,
    #[serde(default)]
    installation: Option<InstallationField>,
    pull_request: NumberField,
    #[serde(default)]
    review: Option<ReviewBody>,
    #[serde(default)]
    comment: Option<ReviewBody>,
    #[serde(default)]
    sender: Option<User>,
}

/// Our workflow's inputs; another workflow's dispatch (or one without inputs) has neither.
#[derive(Deserialize, Default)]
struct DispatchInputs {
    #[serde(default)]
    comment_url: Option<String>,
    #[serde(default, rename = "pr-number")]
    pr_number: Option<String>,
}

#[derive(Deserialize)]
struct DispatchPayload {
    repository: RepoField,
    #[serde(default)]
    installation: Option<InstallationField>,
    #[serde(default)]
    inputs: Option<DispatchInputs>,
}

/// The `action` of a payload, read without building the rest of it.
#[derive(Deserialize)]
struct ActionField {
    #[serde(default)]
    action: Option<String>,
}

/// The `pull_request` actions the bot reads: the label policy's, and `closed` (cancels jobs).
pub const PULL_REQUEST_ACTIONS: [&str; 9] = [
    "opened",
    "reopened",
    "ready_for_review",
    "synchronize",
    "edited",
    "labeled",
    "unlabeled",
    "converted_to_draft",
    "closed",
];

/// The actions each event is read for; any other action is ignored before the payload is parsed.
const HANDLED_ACTIONS: [(&str, &[&str], &str); 5] = [
    ("pull_request", &PULL_REQUEST_ACTIONS, "pull_request action not handled"),
    ("issue_comment", &["created", "edited"], "only created and edited comments are read"),
    ("pull_request_review", &["submitted", "edited"], "only new and edited reviews are read"),
    ("pull_request_review_comment", &["created", "edited"], "only new and edited reviews are read"),
    ("merge_group", &["checks_requested"], "only checks_requested merge groups are read"),
];

/// The events the bot reads, in the order of its table (the GitHub App subscribes to exactly
/// these; `github::app`).
pub fn handled_events() -> impl Iterator<Item = &'static str> {
    HANDLED_ACTIONS.iter().map(|(event, _, _)| *event)
}

/// Longest form-encoded body decoded (GitHub caps payloads at 25 MB).
const MAX_FORM_BODY: usize = 32 * 1024 * 1024;

/// The JSON of a delivery: the body itself, or, for a webhook whose content type is
/// `application/x-www-form-urlencoded` (GitHub's default for repository webhooks), the
/// URL-decoded `payload` field. A JSON document never starts with `payload=`, so the body
/// tells the two apart; the signature was checked over the raw body before this.
pub fn json_of_delivery(body: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, String> {
    let Some(encoded) = body.strip_prefix(b"payload=") else { return Ok(std::borrow::Cow::Borrowed(body)) };
    if body.len() > MAX_FORM_BODY {
        return Err(format!("form-encoded body larger than {MAX_FORM_BODY} bytes"));
    }
    let encoded = encoded.split(|&b| b == b'&').next().unwrap_or_default();
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(encoded.len());
    let mut i = 0;
    while i < encoded.len() {
        match encoded[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let pair = encoded.get(i + 1..i + 3).and_then(|p| Some(hex(p[0])? << 4 | hex(p[1])?));
                out.push(pair.ok_or_else(|| format!("invalid percent-escape at byte {} of the form payload", i + 8))?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    Ok(std::borrow::Cow::Owned(out))
}

#[derive(Deserialize)]
struct MergeGroupField {
    head_sha: String,
    head_ref: String,
    base_sha: String,
}

#[derive(Deserialize)]
struct MergeGroupPayload {
    repository: RepoField,
    #[serde(default)]
    installation: Option<InstallationField>,
    merge_group: MergeGroupField,
}

/// Parses the body of a delivery whose `X-GitHub-Event` is `name` (JSON or form-encoded).
pub fn parse(name: &str, body: &[u8]) -> Result<Event, EventError> {
    let invalid = |message: String| EventError::Invalid { event: name.chars().take(64).collect(), message };
    let body = json_of_delivery(body).map_err(invalid)?;
    let body: &[u8] = &body;
    if let Some((_, actions, reason)) = HANDLED_ACTIONS.iter().find(|(event, _, _)| *event == name) {
        let head: ActionField = serde_json::from_slice(body).map_err(|e| invalid(e.to_string()))?;
        if !head.action.as_deref().is_some_and(|a| actions.contains(&a)) {
            return Ok(Event::Ignored { name: name.into(), reason });
        }
    }
    let repo = |full_name: &str| RepoRef::parse(full_name).map_err(|e| invalid(e.to_string()));
    match name {
        "ping" => Ok(Event::Ping),
        "pull_request" => {
            let p: PullRequestPayload = serde_json::from_slice(body).map_err(|e| invalid(e.to_string()))?;
            Ok(Event::PullRequest(Box::new(PullRequestEvent {
                repo: repo(&p.repository.full_name)?,
                action: p.action,
                installation_id: p.installation.map(|i| i.id),
                pull: p.pull_request,
                label: p.label.map(|l| l.name),
                previous_base: p.changes.and_then(|c| c.base).map(|b| b.reference.from),
                sender: p.sender,
            })))
        }
        "issue_comment" => {
            let p: CommentPayload = serde_json::from_slice(body).map_err(|e| invalid(e.to_string()))?;
            if p.issue.pull_request.is_none() {
                return Ok(Event::Ignored { name: name.into(), reason: "comment on an issue, not a pull request" });
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
        "pull_request_review" | "pull_request_review_comment" => {
            let p: ReviewPayload = serde_json::from_slice(body).map_err(|e| invalid(e.to_string()))?;
            let (kind, resource) = if name == "pull_request_review" {
                (SignoffKind::ReviewSummary, p.review)
            } else {
                (SignoffKind::InlineReviewComment, p.comment)
            };
            let resource = resource.ok_or_else(|| invalid("missing the review or comment object".into()))?;
            Ok(Event::Review(ReviewEvent {
                repo: repo(&p.repository.full_name)?,
                action: p.action,
                installation_id: p.installation.map(|i| i.id),
                pr: p.pull_request.number,
                key: SignoffKey { kind, id: resource.id },
                body: resource.body.unwrap_or_default(),
                author: resource.user,
                posted_at: resource.submitted_at.or(resource.created_at),
                sender: p.sender,
            }))
        }
        "workflow_dispatch" => {
            let p: DispatchPayload = serde_json::from_slice(body).map_err(|e| invalid(e.to_string()))?;
            let repo = repo(&p.repository.full_name)?;
            let inputs = p.inputs.unwrap_or_default();
            let Some(comment_url) = inputs.comment_url.as_deref().filter(|u| !u.trim().is_empty()) else {
                return Ok(Event::Ignored {
                    name: name.into(),
                    reason: "workflow_dispatch without a comment_url input",
                });
            };
            let signoff = SignoffUrl::parse(comment_url).map_err(|e| invalid(e.to_string()))?;
            if !signoff.repo.eq_ignore_ascii_case(&repo.to_string()) {
                return Err(invalid(format!("comment_url names {}, but the workflow runs in {repo}", signoff.repo)));
            }
            if let Some(number) = inputs.pr_number.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
                if number.parse::<u64>().ok() != Some(signoff.pr) {
                    return Err(invalid(format!(
                        "pr-number {number:?} does not match PR #{} of comment_url",
                        signoff.pr
                    )));
                }
            }
            Ok(Event::Dispatch(DispatchEvent { repo, installation_id: p.installation.map(|i| i.id), signoff }))
        }
        "merge_group" => {
            let p: MergeGroupPayload = serde_json::from_slice(body).map_err(|e| invalid(e.to_string()))?;
            let group = p.merge_group;
            Ok(Event::MergeGroup(MergeGroupEvent {
                repo: repo(&p.repository.full_name)?,
                installation_id: p.installation.map(|i| i.id),
                pr: queued_pr(&group.head_ref),
                head_sha: group.head_sha,
                head_ref: group.head_ref,
                base_sha: group.base_sha,
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
    fn review_and_dispatch_events() {
        let review = json!({
            "action": "edited", "repository": {"full_name": "o/r"}, "pull_request": {"number": 12},
            "review": {"id": 77, "body": null, "submitted_at": "2026-09-01T10:00:00Z"},
            "sender": {"login": "bob", "type": "User"}
        });
        let Event::Review(e) = parse("pull_request_review", &serde_json::to_vec(&review).unwrap()).unwrap() else {
            panic!("not a review event")
        };
        assert_eq!((e.key.to_string(), e.pr, e.body.as_str()), ("pullrequestreview-77".into(), 12, ""));
        assert_eq!(e.posted_at.map(|t| t.to_rfc3339()).as_deref(), Some("2026-09-01T10:00:00+00:00"));
        let inline = json!({
            "action": "created", "repository": {"full_name": "o/r"}, "pull_request": {"number": 12},
            "comment": {"id": 5, "body": "x"}, "sender": {"login": "bob", "type": "User"}
        });
        let Event::Review(e) = parse("pull_request_review_comment", &serde_json::to_vec(&inline).unwrap()).unwrap()
        else {
            panic!("not a review comment event")
        };
        assert_eq!((e.key.to_string(), e.posted_at), ("discussion_r5".into(), None), "the payload names no time");
        let mut dismissed = review.clone();
        dismissed["action"] = json!("dismissed");
        assert!(matches!(
            parse("pull_request_review", &serde_json::to_vec(&dismissed).unwrap()).unwrap(),
            Event::Ignored { .. }
        ));
        let dispatch = |url: &str, pr: &str| {
            let p = json!({"repository": {"full_name": "o/r"}, "inputs": {"comment_url": url, "pr-number": pr}});
            parse("workflow_dispatch", &serde_json::to_vec(&p).unwrap())
        };
        let Event::Dispatch(e) = dispatch("https://github.com/o/r/pull/12#issuecomment-9", "12").unwrap() else {
            panic!("not a dispatch")
        };
        assert_eq!((e.signoff.pr, e.signoff.key.to_string()), (12, "issuecomment-9".into()));
        assert!(dispatch("https://github.com/o/r/pull/12#issuecomment-9", "13")
            .unwrap_err()
            .to_string()
            .contains("pr-number"));
        assert!(dispatch("https://github.com/x/y/pull/12#issuecomment-9", "").unwrap_err().to_string().contains("x/y"));
        assert!(dispatch("https://github.com/o/r/pull/12", "12").is_err());
    }

    #[test]
    fn merge_group_events_name_their_pull_request() {
        let body = include_bytes!("../../fixtures/events/merge_group.checks_requested.json");
        let Event::MergeGroup(e) = parse("merge_group", body).unwrap() else { panic!("not a merge group") };
        assert_eq!(
            (e.pr, e.installation_id, e.repo.to_string()),
            (Some(42), Some(1001), "example-org/bench-repo".into())
        );
        assert_eq!(e.head_sha.len(), 40);
        let destroyed = json!({"action": "destroyed", "repository": {"full_name": "o/r"},
            "merge_group": {"head_sha": "a", "head_ref": "b", "base_sha": "c"}});
        assert!(matches!(
            parse("merge_group", &serde_json::to_vec(&destroyed).unwrap()).unwrap(),
            Event::Ignored { .. }
        ));
        assert_eq!(queued_pr("gh-readonly-queue/main/pr-7-0123abcd"), Some(7));
        assert_eq!(queued_pr("refs/heads/gh-readonly-queue/release/2.1/pr-12-ffee"), Some(12));
        for other in [
            "main",
            "gh-readonly-queue/pr-7-ab",
            "gh-readonly-queue/main/pr--ab",
            "gh-readonly-queue/main/pr-7-",
            "gh-readonly-queue/main/pr-7-xyz",
            "gh-readonly-queue/main/pr-99999999999999999999999-ab",
            "queue/main/pr-7-ab",
        ] {
            assert_eq!(queued_pr(other), None, "{other}");
        }
    }

    #[test]
    fn malformed_payloads_are_typed_errors() {
        assert!(parse("pull_request", b"not json").is_err());
        let opened = br#"{"action": "opened"}"#;
        assert!(parse("pull_request", opened).unwrap_err().to_string().contains("missing field"));
        let mut bad_repo = pr_payload("opened");
        bad_repo["repository"]["full_name"] = json!("../../x");
        assert!(parse("pull_request", &serde_json::to_vec(&bad_repo).unwrap()).is_err());
        assert!(parse("push", b"\xff").is_err());
        assert!(matches!(parse("push", b"{}").unwrap(), Event::Ignored { .. }));
        assert_eq!(parse("ping", b"{}").unwrap(), Event::Ping);
    }

    #[test]
    fn unhandled_actions_are_ignored_before_the_payload_is_parsed() {
        for (name, body) in [
            ("pull_request", json!({"action": "assigned", "pull_request": "not an object"})),
            ("pull_request", json!({})),
            ("issue_comment", json!({"action": "deleted"})),
            ("pull_request_review_comment", json!({"action": "deleted", "comment": null})),
            ("merge_group", json!({"action": "destroyed"})),
        ] {
            let got = parse(name, &serde_json::to_vec(&body).unwrap()).unwrap();
            assert!(got.ignored_reason().is_some(), "{name} {body}: {got:?}");
        }
    }

    #[test]
    fn null_accounts_and_missing_senders_are_not_people() {
        let mut p = comment_payload("created", true);
        p["comment"]["user"] = json!(null);
        p.as_object_mut().unwrap().remove("sender");
        let Event::IssueComment(e) = parse("issue_comment", &serde_json::to_vec(&p).unwrap()).unwrap() else {
            panic!("not a comment event")
        };
        assert_eq!((e.comment.user, e.sender), (None, None));
        let mut p = pr_payload("labeled");
        p["pull_request"]["user"] = json!(null);
        p.as_object_mut().unwrap().remove("sender");
        let Event::PullRequest(e) = parse("pull_request", &serde_json::to_vec(&p).unwrap()).unwrap() else {
            panic!("not a PR event")
        };
        assert!(e.pull.user.is_none() && !User::is_person(e.sender.as_ref()));
    }

    #[test]
    fn dispatches_without_our_input_are_ignored() {
        for inputs in [json!({}), json!(null), json!({"comment_url": " "})] {
            let p = json!({"repository": {"full_name": "o/r"}, "inputs": inputs});
            let got = parse("workflow_dispatch", &serde_json::to_vec(&p).unwrap()).unwrap();
            assert_eq!(got.ignored_reason(), Some("workflow_dispatch without a comment_url input"));
        }
    }

    #[test]
    fn form_encoded_deliveries_are_decoded() {
        let json = serde_json::to_string(&pr_payload("labeled")).unwrap();
        let mut form = String::from("payload=");
        for b in json.bytes() {
            match b {
                b' ' => form.push('+'),
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => form.push(b as char),
                _ => form.push_str(&format!("%{b:02X}")),
            }
        }
        assert_eq!(json_of_delivery(form.as_bytes()).unwrap().as_ref(), json.as_bytes());
        let Event::PullRequest(e) = parse("pull_request", form.as_bytes()).unwrap() else { panic!("not a PR event") };
        assert_eq!(e.label.as_deref(), Some("full-sweep-enabled"));
        assert!(parse("pull_request", b"payload=%7B%zz").unwrap_err().to_string().contains("percent-escape"));
        assert!(parse("pull_request", b"payload=%7").is_err());
        assert_eq!(json_of_delivery(b"{}").unwrap().as_ref(), b"{}");
    }
}
