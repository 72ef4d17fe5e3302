//! The GitHub REST resources the bot reads, as our own small DTOs (octocrab's models are
//! `#[non_exhaustive]`, so tests could not build them). Unknown fields are ignored; fields
//! GitHub may omit or null have defaults.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    pub login: String,
    #[serde(rename = "type", default)]
    pub kind: String,
}

impl User {
    /// A person: an account that is neither a bot nor missing (`None` is a deleted account or
    /// a payload without a sender). Bots never sign off or approve, so a verdict that quotes
    /// the phrase cannot loop.
    pub fn is_person(user: Option<&User>) -> bool {
        user.is_some_and(|u| !(u.kind.eq_ignore_ascii_case("bot") || u.login.ends_with("[bot]")))
    }

    /// The login of a possibly deleted account (`""` when it is gone).
    pub fn login_of(user: Option<&User>) -> &str {
        user.map_or("", |u| u.login.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comment {
    pub id: u64,
    #[serde(default)]
    pub body: String,
    /// Null when the account was deleted.
    #[serde(default)]
    pub user: Option<User>,
    #[serde(default)]
    pub author_association: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    #[serde(default)]
    pub html_url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Label {
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoSummary {
    pub full_name: String,
    /// GitHub's time of the latest push to any branch of the repository (server time).
    #[serde(default)]
    pub pushed_at: Option<DateTime<Utc>>,
    /// The repository's default branch (in every PR object GitHub sends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_branch: Option<String>,
}

/// One change of a branch from the repository activity API (`GET /repos/{repo}/activity`): the
/// commit it pointed at afterwards, at GitHub's time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BranchActivity {
    pub after: String,
    pub timestamp: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitRef {
    pub sha: String,
    #[serde(rename = "ref", default)]
    pub ref_name: String,
    /// Null when the head repository was deleted.
    #[serde(default)]
    pub repo: Option<RepoSummary>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PullRequest {
    pub number: u64,
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub draft: bool,
    #[serde(default)]
    pub title: String,
    pub head: GitRef,
    pub base: GitRef,
    #[serde(default)]
    pub labels: Vec<Label>,
    #[serde(default)]
    pub merged_at: Option<DateTime<Utc>>,
    /// Null when the account was deleted.
    #[serde(default)]
    pub user: Option<User>,
    /// The PR description (null when empty).
    #[serde(default)]
    pub body: Option<String>,
    /// The commit a merged PR landed as on its base branch.
    #[serde(default)]
    pub merge_commit_sha: Option<String>,
}

impl PullRequest {
    /// The head lives in another repository (or one that was deleted).
    pub fn is_fork(&self) -> bool {
        match (&self.head.repo, &self.base.repo) {
            (Some(head), Some(base)) => head.full_name != base.full_name,
            _ => true,
        }
    }

    pub fn label_names(&self) -> Vec<&str> {
        self.labels.iter().map(|l| l.name.as_str()).collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitDetail {
    #[serde(default)]
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullCommit {
    pub sha: String,
    pub commit: CommitDetail,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullFile {
    pub filename: String,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub additions: u64,
    #[serde(default)]
    pub deletions: u64,
    #[serde(default)]
    pub previous_filename: Option<String>,
    /// The unified diff hunks (absent for binary or very large files).
    #[serde(default)]
    pub patch: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StatusState {
    Pending,
    Success,
    Failure,
    Error,
}

/// A commit status to create (`POST /repos/{o}/{r}/statuses/{sha}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusInput {
    pub state: StatusState,
    pub context: String,
    /// GitHub truncates at 140 characters; the client cuts before sending.
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub target_url: Option<String>,
}

/// A commit status as listed (`GET /repos/{o}/{r}/commits/{sha}/statuses`, newest first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitStatus {
    pub state: StatusState,
    pub context: String,
    #[serde(default)]
    pub description: Option<String>,
    /// The account that posted it (absent for a deleted account).
    #[serde(default)]
    pub creator: Option<User>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRun {
    pub id: u64,
    pub name: String,
    #[serde(default)]
    pub head_sha: String,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    /// Links to the Actions job (`…/actions/runs/<run id>/job/<job id>`) for Actions check-runs.
    #[serde(default)]
    pub details_url: Option<String>,
    /// The creator's own reference; sweepgate's sweep check run carries its sweep id here.
    #[serde(default)]
    pub external_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkflowRun {
    pub id: u64,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub event: String,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub head_sha: String,
    #[serde(default)]
    pub head_branch: Option<String>,
    #[serde(default)]
    pub html_url: String,
    #[serde(default)]
    pub run_attempt: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Artifact {
    pub id: u64,
    pub name: String,
    #[serde(default)]
    pub expired: bool,
    /// The zip's size as GitHub declares it (0 when absent).
    #[serde(default)]
    pub size_in_bytes: u64,
}

/// Reactions the bot adds to a command comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reaction {
    #[serde(rename = "+1")]
    ThumbsUp,
    #[serde(rename = "-1")]
    ThumbsDown,
    #[serde(rename = "eyes")]
    Eyes,
}

/// A reaction on a comment, as listed by GitHub.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReactionRecord {
    pub id: u64,
    pub content: String,
    pub user: User,
}

/// Filters of `GET /actions/workflows/{file}/runs`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RunQuery {
    pub event: Option<String>,
    pub branch: Option<String>,
    pub status: Option<String>,
}

/// A sign-off resource as the kind-specific endpoint returns it (issue comment, review, or
/// review comment); the fields the three share, plus the URLs that tie it to its PR.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignoffResource {
    pub id: u64,
    /// Null for a review submitted without a summary.
    #[serde(default)]
    pub body: Option<String>,
    /// Null when the account was deleted.
    #[serde(default)]
    pub user: Option<User>,
    #[serde(default)]
    pub html_url: String,
    /// Issue comments: `…/repos/{o}/{r}/issues/{n}`.
    #[serde(default)]
    pub issue_url: Option<String>,
    /// Reviews and review comments: `…/repos/{o}/{r}/pulls/{n}`.
    #[serde(default)]
    pub pull_request_url: Option<String>,
    /// Comments carry created/updated times, reviews `submitted_at`.
    #[serde(default)]
    pub created_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub updated_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub submitted_at: Option<DateTime<Utc>>,
    /// Reviews: APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING.
    #[serde(default)]
    pub state: Option<String>,
}

/// `GET /repos/{o}/{r}/collaborators/{u}/permission`, both fields as GitHub reports them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollaboratorPermission {
    #[serde(default)]
    pub permission: String,
    #[serde(default)]
    pub role_name: String,
}

/// One entry of `GET /git/trees/{sha}?recursive=1`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeEntry {
    pub path: String,
    /// `blob`, `tree` or `commit` (a submodule).
    #[serde(rename = "type")]
    pub kind: String,
    pub sha: String,
}

/// A recursive git tree listing; GitHub sets `truncated` past its own size limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitTreeListing {
    #[serde(default)]
    pub tree: Vec<TreeEntry>,
    #[serde(default)]
    pub truncated: bool,
}

/// `head` compared with `base` (`GET /repos/{repo}/compare/{base}...{head}`): where `head`
/// stands from `base`, the commits between them (oldest first) and the files that differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comparison {
    /// `identical`, `ahead`, `behind` or `diverged`.
    pub status: String,
    #[serde(default)]
    pub behind_by: u64,
    #[serde(default)]
    pub total_commits: u64,
    #[serde(default)]
    pub commits: Vec<ComparedCommit>,
    #[serde(default)]
    pub files: Vec<ComparedFile>,
}

/// A commit of a [`Comparison`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComparedCommit {
    pub sha: String,
    pub commit: CommitDetail,
    #[serde(default)]
    pub parents: Vec<ParentRef>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParentRef {
    pub sha: String,
}

/// A file that differs between the two commits of a [`Comparison`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComparedFile {
    pub filename: String,
}

/// A job of an Actions run (`GET /actions/runs/{id}/jobs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunJob {
    pub id: u64,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub conclusion: Option<String>,
}

/// A check run to create or edit (`POST /repos/{o}/{r}/check-runs`, `PATCH …/check-runs/{id}`);
/// needs the App's `checks: write` permission.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRunInput {
    pub name: String,
    pub head_sha: String,
    /// `queued`, `in_progress` or `completed`.
    pub status: String,
    /// With `completed`: `success`, `failure`, `cancelled`, …
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub conclusion: Option<String>,
    /// The sweep's details page (`serve --public-url`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub details_url: Option<String>,
    /// The sweep id, so a verifier finds the sweep's stored results from the check run.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub external_id: Option<String>,
    pub output: CheckRunOutput,
}

/// A check run's output; GitHub refuses a `summary` or `text` above 65535 characters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRunOutput {
    pub title: String,
    pub summary: String,
    pub text: String,
}
