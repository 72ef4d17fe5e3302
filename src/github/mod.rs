//! GitHub: the narrow client trait the bot calls ([`GitHub`]), its octocrab implementation with
//! App auth and retries ([`octo`]), a dry-run outbox ([`outbox`]), and webhook signatures
//! ([`webhook`]). The verifier reuses the same trait.

pub mod app;
pub mod octo;
pub mod outbox;
pub mod sticky;
pub mod transfer;
pub mod types;
pub mod webhook;

use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::intake::labels::Permission;
use crate::intake::signoff::SignoffKind;
use types::*;

/// `owner/name`, validated to GitHub's alphabet so it can be put in a URL path as is.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RepoRef {
    pub owner: String,
    pub name: String,
}

impl RepoRef {
    pub fn parse(full_name: &str) -> Result<RepoRef, GitHubError> {
        let valid = |s: &str| {
            !s.is_empty()
                && s.len() <= 100
                && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        };
        match full_name.split_once('/') {
            Some((owner, name)) if valid(owner) && valid(name) && name != "." && name != ".." => {
                Ok(RepoRef { owner: owner.to_string(), name: name.to_string() })
            }
            _ => Err(GitHubError::InvalidRepo(full_name.chars().take(200).collect())),
        }
    }
}

impl fmt::Display for RepoRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum GitHubError {
    #[error("{method} {path}: HTTP {status}: {message}")]
    Http { method: String, path: String, status: u16, message: String },
    #[error("{method} {path}: rate limited; GitHub asks to wait {wait_secs}s, more than the {max_secs}s allowed")]
    RateLimited { method: String, path: String, wait_secs: u64, max_secs: u64 },
    #[error("{method} {path}: {message}")]
    Transport { method: String, path: String, message: String },
    #[error("{path}: unexpected response body: {message}")]
    Decode { path: String, message: String },
    #[error("{path}: more than {max_pages} pages; refusing to read further")]
    TooManyPages { path: String, max_pages: u32 },
    #[error("invalid repository name {0:?}: expected owner/name")]
    InvalidRepo(String),
    #[error("{0} is not available in dry-run mode (no GitHub App credentials or token configured)")]
    DryRun(&'static str),
    #[error("GitHub client setup: {0}")]
    Setup(String),
    #[error("{path}: the download exceeds {max_bytes} bytes; refusing to read further")]
    TooLarge { path: String, max_bytes: u64 },
    #[error("{path}: {cut}")]
    Cut { path: String, cut: transfer::TransferCut },
}

impl GitHubError {
    pub fn is_not_found(&self) -> bool {
        matches!(self, GitHubError::Http { status: 404, .. })
    }
}

/// Counters of API traffic, exported by the server's `/metrics`.
#[derive(Debug, Default)]
pub struct ApiMetrics {
    pub calls: AtomicU64,
    pub errors: AtomicU64,
    pub retries: AtomicU64,
}

impl ApiMetrics {
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// The requests one event sent, counted where each is sent (GitHub API calls and downloads,
/// upstream reads), so `/metrics` can say what an event costs whatever else runs meanwhile.
#[derive(Debug, Default)]
pub struct EventRequests {
    pub github: AtomicU64,
    pub upstream: AtomicU64,
}

tokio::task_local! {
    static EVENT_REQUESTS: std::sync::Arc<EventRequests>;
}

impl EventRequests {
    /// Runs `work` counting its requests into `counts` (the futures it joins included; a
    /// spawned task is not counted).
    pub async fn scope<F: Future>(counts: std::sync::Arc<EventRequests>, work: F) -> F::Output {
        EVENT_REQUESTS.scope(counts, work).await
    }

    /// One GitHub request sent by the current event, if any is being counted.
    pub fn count_github() {
        let _ = EVENT_REQUESTS.try_with(|c| ApiMetrics::bump(&c.github));
    }

    /// One upstream request sent by the current event, if any is being counted.
    pub fn count_upstream() {
        let _ = EVENT_REQUESTS.try_with(|c| ApiMetrics::bump(&c.upstream));
    }
}

/// Every GitHub call the bot makes. Lists return all pages (bounded).
pub trait GitHub: Send + Sync {
    fn list_issue_comments(
        &self,
        repo: &RepoRef,
        issue: u64,
    ) -> impl Future<Output = Result<Vec<Comment>, GitHubError>> + Send;
    fn create_issue_comment(
        &self,
        repo: &RepoRef,
        issue: u64,
        body: &str,
    ) -> impl Future<Output = Result<Comment, GitHubError>> + Send;
    fn update_issue_comment(
        &self,
        repo: &RepoRef,
        comment_id: u64,
        body: &str,
    ) -> impl Future<Output = Result<Comment, GitHubError>> + Send;
    fn add_reaction(
        &self,
        repo: &RepoRef,
        comment_id: u64,
        reaction: Reaction,
    ) -> impl Future<Output = Result<(), GitHubError>> + Send;
    fn list_reactions(
        &self,
        repo: &RepoRef,
        comment_id: u64,
    ) -> impl Future<Output = Result<Vec<ReactionRecord>, GitHubError>> + Send;
    fn delete_reaction(
        &self,
        repo: &RepoRef,
        comment_id: u64,
        reaction_id: u64,
    ) -> impl Future<Output = Result<(), GitHubError>> + Send;
    fn get_pull(&self, repo: &RepoRef, number: u64) -> impl Future<Output = Result<PullRequest, GitHubError>> + Send;
    /// Open pull requests, most recently updated first, at most `max`.
    fn list_open_pulls(
        &self,
        repo: &RepoRef,
        max: usize,
    ) -> impl Future<Output = Result<Vec<PullRequest>, GitHubError>> + Send;
    fn list_pull_commits(
        &self,
        repo: &RepoRef,
        number: u64,
    ) -> impl Future<Output = Result<Vec<PullCommit>, GitHubError>> + Send;
    fn list_pull_files(
        &self,
        repo: &RepoRef,
        number: u64,
    ) -> impl Future<Output = Result<Vec<PullFile>, GitHubError>> + Send;
    fn create_status(
        &self,
        repo: &RepoRef,
        sha: &str,
        status: &StatusInput,
    ) -> impl Future<Output = Result<(), GitHubError>> + Send;
    /// The pull requests whose history holds commit `sha` (open and closed, at most 100): the
    /// PRs a status on it is shown on.
    fn list_commit_pulls(
        &self,
        repo: &RepoRef,
        sha: &str,
    ) -> impl Future<Output = Result<Vec<PullRequest>, GitHubError>> + Send;
    /// Every status of a commit, newest first.
    fn list_commit_statuses(
        &self,
        repo: &RepoRef,
        sha: &str,
    ) -> impl Future<Output = Result<Vec<CommitStatus>, GitHubError>> + Send;
    fn list_check_runs(
        &self,
        repo: &RepoRef,
        sha: &str,
    ) -> impl Future<Output = Result<Vec<CheckRun>, GitHubError>> + Send;
    /// `None` when the run does not exist (HTTP 404).
    fn get_workflow_run(
        &self,
        repo: &RepoRef,
        run_id: u64,
    ) -> impl Future<Output = Result<Option<WorkflowRun>, GitHubError>> + Send;
    /// Runs of one workflow file, newest first.
    fn list_workflow_runs(
        &self,
        repo: &RepoRef,
        workflow_file: &str,
        query: &RunQuery,
    ) -> impl Future<Output = Result<Vec<WorkflowRun>, GitHubError>> + Send;
    fn list_run_artifacts(
        &self,
        repo: &RepoRef,
        run_id: u64,
    ) -> impl Future<Output = Result<Vec<Artifact>, GitHubError>> + Send;
    /// The user's repository role (`role_name`, falling back to the legacy `permission`).
    fn collaborator_permission(
        &self,
        repo: &RepoRef,
        user: &str,
    ) -> impl Future<Output = Result<Permission, GitHubError>> + Send;
    /// One sign-off resource through its kind-specific endpoint (spec 30 §1.2).
    fn get_signoff_resource(
        &self,
        repo: &RepoRef,
        pr: u64,
        kind: SignoffKind,
        id: u64,
    ) -> impl Future<Output = Result<SignoffResource, GitHubError>> + Send;
    /// Both `permission` and `role_name`; a non-collaborator (404) reads as `none`.
    fn collaborator_permission_detail(
        &self,
        repo: &RepoRef,
        user: &str,
    ) -> impl Future<Output = Result<CollaboratorPermission, GitHubError>> + Send;
    /// Whether `user` is an active member of `org/team`. GitHub answers 404 both for "not a
    /// member" and for "not visible to this token", so callers treat errors as unknown.
    fn team_membership(
        &self,
        org: &str,
        team: &str,
        user: &str,
    ) -> impl Future<Output = Result<bool, GitHubError>> + Send;
    /// The repository at `sha` as a gzipped tarball (one request for every file at a ref).
    fn download_tarball(
        &self,
        repo: &RepoRef,
        sha: &str,
        max_bytes: u64,
    ) -> impl Future<Output = Result<Vec<u8>, GitHubError>> + Send;
    /// An Actions artifact as its zip archive.
    fn download_artifact(
        &self,
        repo: &RepoRef,
        artifact_id: u64,
        max_bytes: u64,
    ) -> impl Future<Output = Result<Vec<u8>, GitHubError>> + Send;
    /// The commit SHA a branch points at now (`GET /repos/{repo}/branches/{branch}`): where policy
    /// is read (ARCHITECTURE decision 6).
    fn get_branch_sha(&self, repo: &RepoRef, branch: &str) -> impl Future<Output = Result<String, GitHubError>> + Send;
    /// The newest changes of `branch` (pushes, force pushes, creation), newest first, one page
    /// of at most 100: which commit the branch held at a given time (a sign-off covers the head
    /// its author saw, issue 35 case 6).
    fn list_branch_activity(
        &self,
        repo: &RepoRef,
        branch: &str,
    ) -> impl Future<Output = Result<Vec<BranchActivity>, GitHubError>> + Send;
    /// Every path of the commit's tree with its git object SHA (one request, `recursive=1`).
    fn get_tree(&self, repo: &RepoRef, sha: &str) -> impl Future<Output = Result<GitTreeListing, GitHubError>> + Send;
    /// `head` compared with `base`: the commits from `base` to `head` and the files whose
    /// content differs (one request; at most 100 commits listed, `total_commits` says how many).
    fn compare_commits(
        &self,
        repo: &RepoRef,
        base: &str,
        head: &str,
    ) -> impl Future<Output = Result<Comparison, GitHubError>> + Send;
    /// Runs of one workflow file at one commit (`head_sha` filter), newest first.
    fn list_workflow_runs_at(
        &self,
        repo: &RepoRef,
        workflow_file: &str,
        head_sha: &str,
    ) -> impl Future<Output = Result<Vec<WorkflowRun>, GitHubError>> + Send;
    /// Jobs of the latest attempt of a run.
    fn list_run_jobs(
        &self,
        repo: &RepoRef,
        run_id: u64,
    ) -> impl Future<Output = Result<Vec<RunJob>, GitHubError>> + Send;
    /// The plain-text log of one job (GitHub redirects to storage like artifacts).
    fn download_job_log(
        &self,
        repo: &RepoRef,
        job_id: u64,
        max_bytes: u64,
    ) -> impl Future<Output = Result<Vec<u8>, GitHubError>> + Send;
    /// Creates a check run on `input.head_sha`; returns its id (`checks: write`).
    fn create_check_run(
        &self,
        repo: &RepoRef,
        input: &CheckRunInput,
    ) -> impl Future<Output = Result<u64, GitHubError>> + Send;
    /// Edits a check run this App created (`checks: write`).
    fn update_check_run(
        &self,
        repo: &RepoRef,
        check_run_id: u64,
        input: &CheckRunInput,
    ) -> impl Future<Output = Result<(), GitHubError>> + Send;
    /// One text file at a commit through the contents API, for a cheap read of a single policy
    /// file (CODEOWNERS) without a tarball; `None` when the file does not exist there.
    fn get_file_text(
        &self,
        repo: &RepoRef,
        path: &str,
        sha: &str,
        max_bytes: u64,
    ) -> impl Future<Output = Result<Option<String>, GitHubError>> + Send;
    /// Every sign-off resource of one kind on a PR (conversation comments, reviews, or inline
    /// review comments), for the reconcile's repair of sign-offs whose delivery was lost.
    fn list_signoff_resources(
        &self,
        repo: &RepoRef,
        pr: u64,
        kind: SignoffKind,
    ) -> impl Future<Output = Result<Vec<SignoffResource>, GitHubError>> + Send;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_names_are_validated() {
        assert_eq!(RepoRef::parse("SemiAnalysisAI/InferenceX").unwrap().to_string(), "SemiAnalysisAI/InferenceX");
        for bad in ["", "a", "a/", "/b", "a/b/c", "a/..", "a b/c", "a/b?x=1", "a/%2e"] {
            assert!(RepoRef::parse(bad).is_err(), "{bad}");
        }
    }
}
