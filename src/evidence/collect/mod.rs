//! Collectors (shell side, ARCHITECTURE rules 1 and 6): everything a verdict reads, fetched
//! through the [`GitHub`] trait and the [`UpstreamClient`], into one [`Evidence`]. Only the
//! identity of the verification (the PR and the sign-off) is fatal when unreadable; every other
//! fact that cannot be fetched is recorded as [`Fact::Unavailable`] with the reason.
//!
//! Independent requests run concurrently, at most [`CollectLimits::concurrency`] in flight
//! (GitHub's secondary rate-limit guidance asks for few concurrent requests), in stages: the PR
//! and sign-off; commits, files and comments; the trees, check-runs and workflow runs; the
//! published runs and git trees; then every download. Results are kept in request order, so
//! the same answers give the same bundle byte for byte.
//!
//! Collection policy (issue 13 item 8): the qualifying run's `eval_*` and `bmk_*` artifacts
//! are fetched first, then those of runs named by reuse commands, the published runs' `bmk_*`
//! and eval results (Check 2's ingested cohort),
//! then the rest; no count cap, but global bounds on bytes downloaded and bytes unpacked. What a
//! bound leaves out is recorded per artifact.

pub mod archive;
pub mod external;
pub mod head;
pub mod published;
pub mod sweepgate;
pub mod upstream;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use futures_util::stream::{self, StreamExt};

use crate::domain::codeowners::Codeowners;
use crate::domain::upstream_links::{LinkKind, UpstreamLink};
use crate::evidence::limits::{bound_patches, check_tree, MAX_ARTIFACT_BYTES, MAX_TREE_BYTES};
use crate::evidence::{
    ChangedFile, CheckRun, Comment, Evidence, Fact, Job, Permission, PullRequest, Signoff, SignoffKind, Trees,
    WorkflowRun,
};
use crate::github::types::Artifact;
use crate::github::{GitHub, GitHubError, RepoRef};
use crate::intake::command::{self, Scan};
use crate::intake::signoff::{self, SignoffUrl};
use crate::offload::{run_checks, Overrun};
use crate::pr::scan::{role, Role};
use crate::pr::sweep_runs::qualifying_run;
use crate::pr::{needs, Context, Needs};
use crate::repo::{Layout, Logical, MemTree};
use crate::results::shapes::is_eval_results_artifact;
use archive::{unpack_artifact, unpack_tarball, ArchiveError, ArchiveLimits};
pub use upstream::{UpstreamClient, UpstreamConfig};

/// What to collect.
#[derive(Debug, Clone)]
pub struct CollectRequest {
    pub repo: RepoRef,
    pub pr: u64,
    pub signoff: SignoffUrl,
    /// The UTC date of the review (deprecation dates are compared with it).
    pub review_date: chrono::NaiveDate,
}

#[derive(Debug, Clone)]
pub struct CollectLimits {
    pub max_tarball_bytes: u64,
    /// Largest artifact zip downloaded.
    pub max_artifact_bytes: u64,
    /// Largest job log kept: the per-file bound `verify` reads with.
    pub max_log_bytes: u64,
    pub archive: ArchiveLimits,
    /// Most workflow runs read (the newest ids first).
    pub max_runs: usize,
    /// Global bound on bytes downloaded per verification (tarballs, artifacts, job logs).
    pub max_download_bytes: u64,
    /// Global bound on bytes unpacked from artifacts per verification.
    pub max_unpacked_bytes: u64,
    /// Artifact name prefixes whose content a verdict reads.
    pub artifact_prefixes: Vec<String>,
    /// Most upstream facts of each kind (PRs, images, model configs).
    pub max_upstream: usize,
    /// Most eval job logs of the qualifying run.
    pub max_job_logs: usize,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Which sweep sources count, and where sweepgate's own sweeps are stored.
    pub sweeps: sweepgate::SweepOptions,
    /// Protected target branches that hold their own policy (`--policy-branch`); a PR that
    /// targets any other branch is judged with the default branch's policy.
    pub policy_branches: Vec<String>,
    /// How long the pure work over the PR's files may take: the PR model that names what to
    /// read upstream here, the checks after (`serve --verify-deadline-secs`). A PR's launcher
    /// can make that work slow (issue 35 case 4); past the deadline it is a named overrun.
    pub deadline: std::time::Duration,
}

impl Default for CollectLimits {
    fn default() -> Self {
        CollectLimits {
            max_tarball_bytes: 256 << 20,
            max_artifact_bytes: 256 << 20,
            max_log_bytes: crate::repo::MAX_FILE_BYTES,
            archive: ArchiveLimits::default(),
            max_runs: 12,
            max_download_bytes: 1 << 30,
            max_unpacked_bytes: MAX_ARTIFACT_BYTES,
            artifact_prefixes: ["eval_", "bmk_"].map(String::from).to_vec(),
            max_upstream: 16,
            max_job_logs: 16,
            concurrency: 6,
            sweeps: sweepgate::SweepOptions::default(),
            policy_branches: Vec::new(),
            deadline: crate::offload::DEFAULT_DEADLINE,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    #[error("reading PR #{pr} of {repo}: {source}")]
    Pull { repo: RepoRef, pr: u64, source: GitHubError },
    #[error("the sign-off URL names {url_repo}#{url_pr}, but collection was asked for {repo}#{pr}")]
    Mismatch { url_repo: String, url_pr: u64, repo: RepoRef, pr: u64 },
    #[error("reading sign-off {key} of {repo}: {source}")]
    Signoff { repo: RepoRef, key: String, source: GitHubError },
    #[error("sign-off {key} belongs to {found}, not to {repo} PR #{pr}; check the URL")]
    ForeignSignoff { key: String, found: String, repo: RepoRef, pr: u64 },
    /// The PR model over the collected files ran past the deadline or stopped.
    #[error(transparent)]
    Overrun(#[from] Overrun),
}

fn unavailable<T>(what: &str, err: impl std::fmt::Display) -> Fact<T> {
    Fact::Unavailable(format!("{what}: {err}"))
}

/// Times as GitHub writes them (`2026-09-01T10:00:00Z`), so bundles read like the API.
fn github_time(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The run id in an Actions `details_url` (`…/actions/runs/<id>[/job/<job>]`).
pub fn run_id_of(details_url: &str) -> Option<u64> {
    let rest = details_url.split("/actions/runs/").nth(1)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|id| *id > 0)
}

/// Paths a verdict reads from a tree: every logical file in both layouts, benchmark scripts and
/// recipes, and the files the PR changed.
fn wanted_paths(files: &[ChangedFile]) -> impl Fn(&str) -> bool {
    let layout = Layout::default();
    let mut prefixes: Vec<String> = Logical::ALL.iter().flat_map(|l| layout.candidates(*l)).collect();
    // Runner launchers too: Check 1 compares the ones a sweep ran (decision F8).
    prefixes.extend(["benchmarks", "inferencex-e2e/benchmarks", "runners", "inferencex-e2e/runners"].map(String::from));
    let changed: BTreeSet<String> =
        files.iter().flat_map(|f| std::iter::once(f.filename.clone()).chain(f.previous_filename.clone())).collect();
    move |path: &str| {
        changed.contains(path)
            || prefixes.iter().any(|p| path == p || path.strip_prefix(p.as_str()).is_some_and(|r| r.starts_with('/')))
    }
}

/// Runs `jobs` with at most `limit` in flight, answers in input order. The futures are made
/// before the returned future starts, so it holds no closure (keeps it `Send` for the server).
fn bounded<F: std::future::Future>(
    limit: usize,
    jobs: impl IntoIterator<Item = F>,
) -> impl std::future::Future<Output = Vec<F::Output>> {
    let jobs: Vec<F> = jobs.into_iter().collect();
    stream::iter(jobs).buffered(limit.max(1)).collect::<Vec<_>>()
}

/// How far the artifact downloads are, reported after each one finishes (what `sweepgate
/// collect` shows on a terminal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DownloadProgress {
    /// Artifacts whose download finished (downloaded, refused or failed).
    pub done: usize,
    /// Artifacts planned for download.
    pub total: usize,
    /// Bytes downloaded so far.
    pub bytes: u64,
}

/// Receives [`DownloadProgress`]; `Sync` because downloads run concurrently.
pub type ProgressFn<'a> = &'a (dyn Fn(DownloadProgress) + Sync);

/// What the caller of a collection read already in the same verification (the sign-off
/// handler reads the PR and its comments to decide eligibility): used as read, not read again.
#[derive(Debug, Clone, Default)]
pub struct Known {
    pub pull: Option<crate::github::types::PullRequest>,
    pub comments: Option<Vec<crate::github::types::Comment>>,
    /// Collaborator permissions by login.
    pub permissions: BTreeMap<String, crate::github::types::CollaboratorPermission>,
    /// The default branch's tip as [`resolve_policy`] answered it (the sign-off handler resolves
    /// it before collecting): the policy of one verification is resolved once.
    pub policy: Option<Fact<String>>,
    /// The sign-off itself, when there is no resource to read (preflight judges the PR body as
    /// the additional detail section: `server::handlers::preflight`).
    pub signoff: Option<Signoff>,
    /// The PR's files, listed by the caller at the same head and base.
    pub files: Option<Vec<crate::github::types::PullFile>>,
}

/// The commit the PR's policy branch ([`policy_branch`]) points at now, where policy is read
/// (ARCHITECTURE decision 6); a lookup that fails is a named unavailable fact, never the stale
/// `base.sha`.
pub async fn resolve_policy<G: GitHub>(
    gh: &G,
    repo: &RepoRef,
    pull: &crate::github::types::PullRequest,
    policy_branches: &[String],
) -> Fact<String> {
    let branch = match policy_branch(pull, policy_branches) {
        Ok(branch) => branch,
        Err(why) => return Fact::Unavailable(why),
    };
    match gh.get_branch_sha(repo, branch).await {
        Ok(sha) if is_commit_sha(&sha) => Fact::Ok(sha),
        Ok(sha) => Fact::Unavailable(format!(
            "the default branch {branch} resolved to {:?}, not a commit SHA",
            sha.chars().take(64).collect::<String>()
        )),
        Err(err) => unavailable(&format!("the tip of the default branch {branch}"), err),
    }
}

/// The branch whose tip holds the PR's policy (issue 35 case 5): the PR's target branch when
/// it is one of the configured `policy_branches` (protected branches that keep their own
/// CODEOWNERS and policy files, decision HT16), otherwise the repository's default branch. A PR
/// that targets another branch (one its author may be able to push to, whose CODEOWNERS could
/// name the author) is judged with the default branch's policy, and the verdict says so. GitHub
/// names the default branch in every PR object; without it the policy is an unavailable fact.
pub fn policy_branch<'p>(
    pull: &'p crate::github::types::PullRequest,
    policy_branches: &[String],
) -> Result<&'p str, String> {
    let target = pull.base.ref_name.as_str();
    if !target.is_empty() && policy_branches.iter().any(|b| b == target) {
        return Ok(target);
    }
    match pull.base.repo.as_ref().and_then(|r| r.default_branch.as_deref()).filter(|b| !b.is_empty()) {
        Some(branch) => Ok(branch),
        None => Err("the repository's default branch, where policy is read (GitHub did not name it)".to_owned()),
    }
}

fn is_commit_sha(sha: &str) -> bool {
    sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The paths of the policy files (ARCHITECTURE decision 6) in either layout.
fn policy_paths() -> impl Fn(&str) -> bool {
    let layout = Layout::default();
    let policy = [
        Logical::Codeowners,
        Logical::ReviewChecklist,
        Logical::ModelsMd,
        Logical::ModelsZhMd,
        Logical::WaiverDir,
        Logical::GoldenAlDir,
        Logical::EvalThresholds,
        Logical::SweepgatePolicy,
    ];
    let prefixes: Vec<String> = policy.iter().flat_map(|l| layout.candidates(*l)).collect();
    move |path: &str| {
        prefixes.iter().any(|p| path == p || path.strip_prefix(p.as_str()).is_some_and(|r| r.starts_with('/')))
    }
}

/// Collects the Evidence of one sign-off, reusing what the caller already read.
pub async fn collect<G: GitHub>(
    gh: &G,
    upstream: &UpstreamClient,
    request: &CollectRequest,
    limits: &CollectLimits,
    known: Known,
) -> Result<Evidence, CollectError> {
    collect_from(gh, upstream, request, limits, known, &|_| {}).await
}

/// [`collect`] from nothing known, reporting each finished artifact download to `progress`.
pub async fn collect_with_progress<G: GitHub>(
    gh: &G,
    upstream: &UpstreamClient,
    request: &CollectRequest,
    limits: &CollectLimits,
    progress: ProgressFn<'_>,
) -> Result<Evidence, CollectError> {
    collect_from(gh, upstream, request, limits, Known::default(), progress).await
}

async fn collect_from<G: GitHub>(
    gh: &G,
    upstream: &UpstreamClient,
    request: &CollectRequest,
    limits: &CollectLimits,
    known: Known,
    progress: ProgressFn<'_>,
) -> Result<Evidence, CollectError> {
    let (repo, pr) = (&request.repo, request.pr);
    if !request.signoff.repo.eq_ignore_ascii_case(&repo.to_string()) || request.signoff.pr != pr {
        return Err(CollectError::Mismatch {
            url_repo: request.signoff.repo.clone(),
            url_pr: request.signoff.pr,
            repo: repo.clone(),
            pr,
        });
    }
    let conversation = request.signoff.key.kind == signoff::SignoffKind::ConversationComment;
    let Known {
        pull: known_pull,
        comments: known_comments,
        permissions: known_permissions,
        policy: known_policy,
        signoff: known_signoff,
        files: known_files,
    } = known;
    let (pull, listed_comments, signoff) = tokio::join!(
        async {
            match known_pull {
                Some(pull) => Ok(pull),
                None => gh.get_pull(repo, pr).await,
            }
        },
        async {
            match known_comments {
                Some(comments) => Ok(comments),
                None => gh.list_issue_comments(repo, pr).await,
            }
        },
        // A conversation comment is in the PR's comment list; other kinds have own endpoints.
        async {
            match (conversation, known_signoff) {
                (_, Some(known)) => Some(Ok(known)),
                (true, None) => None,
                (false, None) => Some(read_signoff(gh, repo, pr, &request.signoff).await),
            }
        },
    );
    let pull = pull.map_err(|source| CollectError::Pull { repo: repo.clone(), pr, source })?;
    let listed = listed_comments.as_ref().ok().and_then(|list| list.iter().find(|c| c.id == request.signoff.key.id));
    let signoff = match (signoff, listed) {
        (Some(read), _) => read?,
        (None, Some(comment)) => signoff_of_comment(repo, pr, &request.signoff, comment),
        // Not in this PR's list (another PR's comment, or the list failed): its endpoint decides.
        (None, None) => read_signoff(gh, repo, pr, &request.signoff).await?,
    };
    let head_sha = pull.head.sha.clone();
    let base_sha = pull.base.sha.clone();
    let policy_sha = match known_policy {
        Some(policy) => policy,
        None => resolve_policy(gh, repo, &pull, &limits.policy_branches).await,
    };

    let (commits, files) = tokio::join!(gh.list_pull_commits(repo, pr), async {
        match known_files {
            Some(files) => Ok(files),
            None => gh.list_pull_files(repo, pr).await,
        }
    });
    let mut files: Vec<ChangedFile> = match files {
        Ok(files) => files
            .into_iter()
            .map(|f| ChangedFile {
                filename: f.filename,
                previous_filename: f.previous_filename,
                status: f.status,
                patch: f.patch,
            })
            .collect(),
        Err(err) => return Err(CollectError::Pull { repo: repo.clone(), pr, source: err }),
    };
    let dropped = bound_patches(&mut files);
    if dropped > 0 {
        tracing::info!("{dropped} diff(s) above the size policy are left out; their files are read whole at the head");
    }
    // Without the commit list, the pinned head is the only commit known to be in the PR.
    let commits: Vec<String> = commits.map(|c| c.into_iter().map(|c| c.sha).collect()).unwrap_or_else(|err| {
        tracing::warn!("PR commits unavailable: {err}");
        vec![head_sha.clone()]
    });
    let comments: Vec<Comment> = match listed_comments {
        Ok(list) => list
            .into_iter()
            .map(|c| Comment {
                id: c.id,
                author: c.user.map(|u| u.login).unwrap_or_default(),
                author_association: c.author_association,
                body: c.body,
                created_at: github_time(c.created_at),
                updated_at: github_time(c.updated_at),
                url: c.html_url,
            })
            .collect(),
        Err(err) => {
            tracing::warn!("PR comments unavailable: {err}");
            Vec::new()
        }
    };

    let mut downloaded = Budget::new(limits.max_download_bytes);
    let wanted = &wanted_paths(&files);
    let check_runs_of = |sha: String| async move {
        let (fact, sweeps) = match gh.list_check_runs(repo, &sha).await {
            Ok(list) => {
                let (runs, sweeps) = sweepgate::split_check_runs(&sha, list, &limits.sweeps);
                (Fact::Ok(runs), sweeps)
            }
            Err(err) => (unavailable("check-runs", err), Vec::new()),
        };
        ((sha, fact), sweeps)
    };
    // Policy at the default branch's tip: a tree of its own only when that is not the base.
    let policy_at = policy_sha.as_ok().filter(|sha| **sha != base_sha);
    let (base_tree, head_tree, policy_tree, check_runs) = tokio::join!(
        read_tree(gh, repo, &base_sha, limits, wanted),
        read_tree(gh, repo, &head_sha, limits, wanted),
        async {
            match policy_at {
                Some(sha) => Some(read_tree(gh, repo, sha, limits, &policy_paths()).await),
                None => None,
            }
        },
        bounded(limits.concurrency, commits.iter().cloned().map(check_runs_of)),
    );
    let [(base, base_fact), (head, head_fact)] =
        [base_tree, head_tree].map(|(tree, fact, bytes)| (tree, downloaded.charge_tree(fact, bytes)));
    let (policy, policy_fact) = match (&policy_sha, policy_tree) {
        (Fact::Unavailable(reason), _) => (MemTree::new(), Some(Fact::Unavailable(reason.clone()))),
        (Fact::Ok(_), Some((tree, fact, bytes))) => (tree, Some(downloaded.charge_tree(fact, bytes))),
        (Fact::Ok(_), None) => (MemTree::new(), None),
    };
    let (check_runs, sweeps): (BTreeMap<String, Fact<Vec<CheckRun>>>, Vec<_>) = check_runs.into_iter().unzip();
    let sweeps: Vec<sweepgate::SweepCheck> = sweeps.into_iter().flatten().collect();

    let mut people: BTreeSet<String> = BTreeSet::from([signoff.author.clone()]);
    people.extend(
        comments.iter().filter(|c| matches!(command::scan(&c.body), Scan::Command(_))).map(|c| c.author.clone()),
    );
    let mut evidence = Evidence {
        repository: repo.to_string(),
        review_date: request.review_date,
        pull_request: PullRequest {
            number: pr,
            title: pull.title.clone(),
            body: pull.body.clone().unwrap_or_default(),
            author: crate::github::types::User::login_of(pull.user.as_ref()).to_string(),
            state: pull.state.clone(),
            draft: pull.draft,
            head_sha: head_sha.clone(),
            head_ref: pull.head.ref_name.clone(),
            base_sha,
            base_ref: pull.base.ref_name.clone(),
            policy_sha: policy_sha.as_ok().cloned(),
            policy_branch: policy_branch(&pull, &limits.policy_branches)
                .ok()
                .filter(|b| *b != pull.base.ref_name)
                .map(str::to_owned),
            fork: pull.is_fork(),
            labels: pull.label_names().into_iter().map(str::to_string).collect(),
        },
        live_head_sha: None,
        signoff,
        commits,
        files,
        check_runs,
        runs: BTreeMap::new(),
        comments,
        permissions: BTreeMap::new(),
        team_members: BTreeMap::new(),
        upstream: Default::default(),
        trees: Trees { base: base_fact, head: head_fact, policy: policy_fact },
        blobs: BTreeMap::new(),
        texts_at: BTreeMap::new(),
        format: crate::evidence::BUNDLE_FORMAT,
        base,
        head,
        policy,
        artifacts: MemTree::new(),
    };

    // The run Checks 1, 2, 14 and 18 build on decides what is fetched first.
    let qualifying = qualifying_run(&evidence);
    let mut reused = BTreeSet::new();
    for c in &evidence.comments {
        if let Scan::Command(command) = command::scan(&c.body) {
            reused.extend(command.run_id);
        }
    }
    let mut run_ids: BTreeSet<u64> =
        evidence.check_runs.values().filter_map(Fact::as_ok).flatten().filter_map(|c| c.run_id).collect();
    run_ids.extend(&reused);
    // A sweepgate sweep is keyed by its check run's id, which is no workflow run.
    for sweep in &sweeps {
        run_ids.remove(&sweep.check_run_id);
    }
    // Check 1 compares the files a sweep ran at the qualifying commit with the head.
    let mut blob_commits = vec![head_sha.clone()];
    blob_commits.extend(qualifying.as_ref().map(|q| q.sha.clone()).filter(|sha| *sha != head_sha));

    let tree_of = |sha: String| async move {
        let fact = match gh.get_tree(repo, &sha).await {
            Ok(listing) if listing.truncated => {
                Fact::Unavailable(format!("git tree of {sha}: GitHub truncated the listing"))
            }
            Ok(listing) => Fact::Ok(
                listing
                    .tree
                    .into_iter()
                    .filter(|e| e.kind == "blob" && wanted(&e.path))
                    .map(|e| (e.path, e.sha))
                    .collect(),
            ),
            Err(err) => unavailable(&format!("git tree of {sha}"), err),
        };
        (sha, fact)
    };
    let known_permissions = &known_permissions;
    let permission_of = |login: String| async move {
        let answer = match known_permissions.get(&login) {
            Some(known) => Ok(known.clone()),
            None => gh.collaborator_permission_detail(repo, &login).await,
        };
        let fact = match answer {
            Ok(p) => Fact::Ok(Permission { permission: p.permission, role_name: p.role_name }),
            Err(err) => unavailable("collaborator permission", err),
        };
        (login, fact)
    };
    let (listed, blobs, published, permissions, team_members, jobs) = tokio::join!(
        list_runs(gh, repo, run_ids.into_iter().rev().take(limits.max_runs).collect(), limits),
        bounded(limits.concurrency, blob_commits.into_iter().map(tree_of)),
        published::published_runs(gh, repo, &evidence),
        bounded(limits.concurrency, people.into_iter().map(permission_of)),
        read_teams(gh, &evidence),
        eval_jobs(gh, repo, qualifying.as_ref().map(|q| q.run_id), limits),
    );
    evidence.blobs = blobs.into_iter().collect();
    if let Some(sweep) = qualifying.as_ref().map(|q| &q.sha).filter(|sha| **sha != head_sha) {
        let texts = master_texts_at(gh, repo, sweep, &evidence, limits).await;
        evidence.texts_at.extend(texts.map(|fact| (sweep.clone(), fact)));
    }
    evidence.permissions = permissions.into_iter().collect();
    evidence.team_members = team_members;
    let mut listed = listed;
    let known: BTreeSet<u64> = listed.iter().map(|(run, _)| run.id).collect();
    let (published, found_runs) = published;
    let published_ids: BTreeSet<u64> = published
        .values()
        .filter_map(|f| f.as_ok().cloned().flatten())
        .map(|p| p.run_id)
        .filter(|id| !known.contains(id))
        .collect();
    // A run the published-run lookup found in a listing needs only its artifact list.
    // Two keys of one series can name the same run: one entry per id.
    let found: BTreeMap<u64, _> =
        found_runs.into_iter().filter(|r| published_ids.contains(&r.id)).map(|r| (r.id, r)).collect();
    let unlisted: Vec<u64> = published_ids.into_iter().filter(|id| !found.contains_key(id)).collect();
    let artifacts_of = |run: crate::github::types::WorkflowRun| async move {
        let artifacts = gh.list_run_artifacts(repo, run.id).await.map_err(|e| format!("artifact list: {e}"));
        (run, artifacts)
    };
    let (found, unlisted) = tokio::join!(
        bounded(limits.concurrency, found.into_values().map(artifacts_of)),
        list_runs(gh, repo, unlisted, limits)
    );
    listed.extend(found);
    listed.extend(unlisted);

    let published_ids = published.values().filter_map(|f| f.as_ok().cloned().flatten()).map(|p| p.run_id).collect();
    let order = Priority { qualifying: qualifying.map(|q| q.run_id), reused, published: published_ids };
    let (runs, artifacts) = download_runs(gh, repo, listed, jobs, &order, limits, &mut downloaded, progress).await;
    evidence.runs = runs;
    evidence.artifacts = artifacts;
    sweepgate::attach(&mut evidence, &sweeps, &limits.sweeps);
    sweepgate::drop_unlisted_workflows(&mut evidence, &limits.sweeps);
    let (mut evidence, needs) = needs_of(evidence, limits.deadline).await?;
    evidence.upstream = read_upstream(upstream, &needs, limits).await;
    evidence.upstream.published_runs = published;
    evidence.upstream.checkouts = external::read_checkouts(upstream, needs.checkout_files, limits).await;
    // Head anchoring (spec 30 §1.6): the verdict says so when the PR moved meanwhile.
    evidence.live_head_sha = match gh.get_pull(repo, pr).await {
        Ok(live) => {
            // A PR retargeted meanwhile has no one policy: what was read is not its target's.
            if live.base.ref_name != pull.base.ref_name {
                evidence.trees.policy = Some(Fact::Unavailable(format!(
                    "the PR was retargeted from {} to {} during the verification",
                    pull.base.ref_name, live.base.ref_name
                )));
                evidence.pull_request.policy_sha = None;
            }
            Some(live.head.sha)
        }
        Err(err) => {
            tracing::warn!("re-reading the PR head: {err}");
            None
        }
    };
    Ok(evidence)
}

/// The Evidence `evidence` would have been for another sign-off of the same PR, head and base
/// (preflight reads the PR body as one after a carry-forward collected the head, issue 35 case
/// 9): the GitHub facts as collected, the new signer's permission and team memberships, and the
/// upstream facts of its links (the published runs kept). No tarball, run or artifact is read
/// again.
pub async fn for_signoff<G: GitHub>(
    gh: &G,
    upstream: &UpstreamClient,
    repo: &RepoRef,
    evidence: &Evidence,
    signoff: Signoff,
    limits: &CollectLimits,
) -> Result<Evidence, Overrun> {
    let mut evidence = evidence.clone();
    evidence.signoff = signoff;
    let author = evidence.signoff.author.clone();
    if let std::collections::btree_map::Entry::Vacant(unread) = evidence.permissions.entry(author) {
        let fact = match gh.collaborator_permission_detail(repo, unread.key()).await {
            Ok(p) => Fact::Ok(Permission { permission: p.permission, role_name: p.role_name }),
            Err(err) => unavailable("collaborator permission", err),
        };
        unread.insert(fact);
    }
    evidence.team_members = read_teams(gh, &evidence).await;
    let published = std::mem::take(&mut evidence.upstream.published_runs);
    // The same head reads the same checkouts.
    let checkouts = std::mem::take(&mut evidence.upstream.checkouts);
    let (mut evidence, needs) = needs_of(evidence, limits.deadline).await?;
    evidence.upstream = read_upstream(upstream, &needs, limits).await;
    evidence.upstream.published_runs = published;
    evidence.upstream.checkouts = checkouts;
    Ok(evidence)
}

/// What the PR model over `evidence` needs read upstream. The model evaluates the PR's
/// launchers, which a PR can make slow: it runs off the async runtime, within `deadline`, like
/// the checks (a slow launcher here once held a worker past every deadline, issue 35 case 4).
async fn needs_of(evidence: Evidence, deadline: std::time::Duration) -> Result<(Evidence, Needs), Overrun> {
    let shared = std::sync::Arc::new(evidence);
    let needs = run_checks(deadline, shared.clone(), |ev| needs(&Context::new(ev))).await?;
    // The blocking thread dropped its handle when it returned.
    let evidence = std::sync::Arc::try_unwrap(shared).unwrap_or_else(|shared| (*shared).clone());
    Ok((evidence, needs))
}

/// The master configs whose blob differs between the qualifying commit `sweep` and the head, as
/// text at `sweep` (Check 1 compares the affected entries, decision F8). `None` when none
/// differs or the blobs are unknown (Check 1 then says so); a file that does not exist at
/// `sweep` is left out of the map; any read that fails makes the whole fact unavailable.
async fn master_texts_at<G: GitHub>(
    gh: &G,
    repo: &RepoRef,
    sweep: &str,
    evidence: &Evidence,
    limits: &CollectLimits,
) -> Option<Fact<BTreeMap<String, String>>> {
    let blobs = |sha: &str| evidence.blobs.get(sha).and_then(Fact::as_ok);
    let (at_sweep, at_head) = (blobs(sweep)?, blobs(&evidence.pull_request.head_sha)?);
    let differing: Vec<String> = at_sweep
        .keys()
        .chain(at_head.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|path| role(path) == Role::MasterConfig && at_sweep.get(*path) != at_head.get(*path))
        .cloned()
        .collect();
    if differing.is_empty() {
        return None;
    }
    let read = |path: String| async move {
        let answer = gh.get_file_text(repo, &path, sweep, limits.max_log_bytes).await;
        (path, answer)
    };
    let mut texts = BTreeMap::new();
    for (path, answer) in bounded(limits.concurrency, differing.into_iter().map(read)).await {
        match answer {
            Ok(Some(text)) => {
                texts.insert(path, text);
            }
            Ok(None) => {}
            Err(err) => return Some(unavailable(&format!("{path} at {sweep}"), err)),
        }
    }
    Some(Fact::Ok(texts))
}

/// What is left of a global byte bound, charged in a fixed order so the same answers give the
/// same bundle whatever order the downloads finished in.
struct Budget {
    limit: u64,
    used: u64,
}

impl Budget {
    fn new(limit: u64) -> Budget {
        Budget { limit, used: 0 }
    }

    fn remaining(&self) -> u64 {
        self.limit.saturating_sub(self.used)
    }

    /// Takes `bytes`, or says why they do not fit (`what` names the bound).
    fn charge(&mut self, bytes: u64, what: &str) -> Result<(), String> {
        if bytes > self.remaining() {
            return Err(format!("the global bound of {} bytes {what} per verification was reached", self.limit));
        }
        self.used += bytes;
        Ok(())
    }

    fn charge_tree(&mut self, fact: Fact<()>, bytes: u64) -> Fact<()> {
        match (fact, self.charge(bytes, "downloaded")) {
            (Fact::Ok(()), Err(reason)) => Fact::Unavailable(format!("repository contents: {reason}")),
            (fact, _) => fact,
        }
    }
}

async fn read_signoff<G: GitHub>(gh: &G, repo: &RepoRef, pr: u64, url: &SignoffUrl) -> Result<Signoff, CollectError> {
    let key = url.key.to_string();
    let resource = gh
        .get_signoff_resource(repo, pr, url.key.kind, url.key.id)
        .await
        .map_err(|source| CollectError::Signoff { repo: repo.clone(), key: key.clone(), source })?;
    // Comment ids are repository-wide: the resource must point back at this PR (spec 30 §1.2).
    let owner_url = resource.issue_url.clone().or_else(|| resource.pull_request_url.clone()).unwrap_or_default();
    let belongs = [format!("/repos/{repo}/issues/{pr}"), format!("/repos/{repo}/pulls/{pr}")]
        .iter()
        .any(|suffix| owner_url.to_ascii_lowercase().ends_with(&suffix.to_ascii_lowercase()));
    if !belongs {
        return Err(CollectError::ForeignSignoff { key, found: owner_url, repo: repo.clone(), pr });
    }
    let kind = match url.key.kind {
        signoff::SignoffKind::ConversationComment => SignoffKind::Comment,
        signoff::SignoffKind::ReviewSummary => SignoffKind::Review,
        signoff::SignoffKind::InlineReviewComment => SignoffKind::ReviewComment,
    };
    let time = |t: Option<chrono::DateTime<chrono::Utc>>| t.map(github_time).unwrap_or_default();
    Ok(Signoff {
        kind,
        id: url.key.id,
        author: resource.user.map(|u| u.login).unwrap_or_default(),
        body: resource.body.unwrap_or_default(),
        url: format!("https://github.com/{repo}/pull/{pr}#{key}"),
        created_at: time(resource.created_at.or(resource.submitted_at)),
        updated_at: time(resource.updated_at.or(resource.submitted_at)),
    })
}

/// The sign-off `url` names, from the PR's own comment list (so it belongs to the PR).
fn signoff_of_comment(repo: &RepoRef, pr: u64, url: &SignoffUrl, comment: &crate::github::types::Comment) -> Signoff {
    Signoff {
        kind: SignoffKind::Comment,
        id: url.key.id,
        author: comment.user.as_ref().map(|u| u.login.clone()).unwrap_or_default(),
        body: comment.body.clone(),
        url: format!("https://github.com/{repo}/pull/{pr}#{}", url.key),
        created_at: github_time(comment.created_at),
        updated_at: github_time(comment.updated_at),
    }
}

/// The files a verdict reads at `sha`, from one tarball download. An unreadable tarball is an
/// empty tree whose fact is unavailable, so no check mistakes it for a tree without the file.
async fn read_tree<G: GitHub>(
    gh: &G,
    repo: &RepoRef,
    sha: &str,
    limits: &CollectLimits,
    wanted: &impl Fn(&str) -> bool,
) -> (MemTree, Fact<()>, u64) {
    let (result, size) = match gh.download_tarball(repo, sha, limits.max_tarball_bytes).await {
        Ok(bytes) => (unpack_tarball(&bytes, limits.archive, wanted).map_err(|e| e.to_string()), bytes.len() as u64),
        Err(err) => (Err(err.to_string()), 0),
    };
    match result.and_then(|tree| check_tree(&tree, MAX_TREE_BYTES).map(|()| tree)) {
        Ok(tree) => (tree, Fact::Ok(()), size),
        Err(reason) => {
            tracing::warn!("repository contents at {sha}: {reason}");
            (MemTree::new(), Fact::Unavailable(format!("repository contents at {sha}: {reason}")), size)
        }
    }
}

/// A run and its artifact list (or why the list is unreadable).
type ListedRun = (crate::github::types::WorkflowRun, Result<Vec<Artifact>, String>);
/// The qualifying run's id and its eval jobs with their downloaded logs, or why its jobs could
/// not be listed.
type EvalLogs = (u64, Result<Vec<(crate::github::types::RunJob, Result<Vec<u8>, String>)>, String>);

/// The order downloads are charged to the global bounds in.
struct Priority {
    qualifying: Option<u64>,
    reused: BTreeSet<u64>,
    published: BTreeSet<u64>,
}

impl Priority {
    /// Lower first; `None`: the artifact's content is not collected.
    fn rank(&self, run: u64, name: &str, limits: &CollectLimits) -> Option<u8> {
        if !limits.artifact_prefixes.iter().any(|p| name.starts_with(p.as_str())) {
            return None;
        }
        Some(if Some(run) == self.qualifying {
            0
        } else if self.reused.contains(&run) {
            1
        } else if self.published.contains(&run) {
            // The published run gives 18(g) its base curve (the `bmk_*` aggregates) and Check 2
            // its ingested cohort (the eval results, not their server logs; decision W2).
            if !name.starts_with("bmk_") && !is_eval_results_artifact(name) {
                return None;
            }
            2
        } else {
            3
        })
    }
}

/// Runs that exist (a 404 or an error is logged and the run left out, so Checks 1 and 4 say
/// it is missing) with their artifact lists.
async fn list_runs<G: GitHub>(gh: &G, repo: &RepoRef, ids: Vec<u64>, limits: &CollectLimits) -> Vec<ListedRun> {
    let one = |id: u64| async move {
        let (run, artifacts) = tokio::join!(gh.get_workflow_run(repo, id), gh.list_run_artifacts(repo, id));
        match run {
            Ok(Some(run)) => Some((run, artifacts.map_err(|e| format!("artifact list: {e}")))),
            Ok(None) => None,
            Err(err) => {
                tracing::warn!("run {id}: {err}");
                None
            }
        }
    };
    bounded(limits.concurrency, ids.into_iter().map(one)).await.into_iter().flatten().collect()
}

/// An eval job of a sweep: its family (the part before ` / `) is `eval`, `agentic eval`,
/// `multi-node eval` or `multi-node agentic eval` (spec 10 §6.1).
fn is_eval_job(name: &str) -> bool {
    name.trim_start().split_once(" / ").is_some_and(|(family, _)| family == "eval" || family.ends_with(" eval"))
}

/// The eval jobs of the qualifying run, with their logs.
async fn eval_jobs<G: GitHub>(gh: &G, repo: &RepoRef, run: Option<u64>, limits: &CollectLimits) -> Option<EvalLogs> {
    let run = run?;
    let jobs = match gh.list_run_jobs(repo, run).await {
        Ok(jobs) => jobs,
        Err(err) => return Some((run, Err(format!("the job list of run {run} could not be read: {err}")))),
    };
    let evals = jobs.into_iter().filter(|j| is_eval_job(&j.name)).take(limits.max_job_logs);
    let log = |job: crate::github::types::RunJob| async move {
        let bytes = gh.download_job_log(repo, job.id, limits.max_log_bytes).await.map_err(|e| e.to_string());
        (job, bytes)
    };
    Some((run, Ok(bounded(limits.concurrency, evals.map(log)).await)))
}

/// Downloads, in [`Priority`] order under the global bounds, the collected artifacts and eval
/// job logs; unpacks the artifacts.
#[allow(clippy::too_many_arguments)] // one call site; the arguments are the stages' results
async fn download_runs<G: GitHub>(
    gh: &G,
    repo: &RepoRef,
    listed: Vec<ListedRun>,
    jobs: Option<EvalLogs>,
    order: &Priority,
    limits: &CollectLimits,
    downloaded: &mut Budget,
    progress: ProgressFn<'_>,
) -> (BTreeMap<u64, WorkflowRun>, MemTree) {
    let mut runs = BTreeMap::new();
    let mut planned: Vec<(u8, u64, Artifact)> = Vec::new();
    for (run, list) in listed {
        let mut artifacts = BTreeMap::new();
        match list {
            Ok(list) => {
                for a in list {
                    let fact = match order.rank(run.id, &a.name, limits) {
                        // Checked before anything is planned: the name becomes a folder of the bundle.
                        _ if !is_safe_artifact_name(&a.name) => Fact::Unavailable(
                            "the artifact name is not a single safe folder name; content not collected".into(),
                        ),
                        None => Fact::Unavailable("not read by any check; content not collected".into()),
                        Some(_) if a.expired => Fact::Unavailable("expired".into()),
                        Some(rank) => {
                            planned.push((rank, run.id, a.clone()));
                            Fact::Unavailable("not downloaded".into())
                        }
                    };
                    artifacts.insert(a.name, fact);
                }
            }
            Err(reason) => {
                artifacts.insert("*".into(), Fact::Unavailable(reason));
            }
        }
        let workflow = WorkflowRun {
            id: run.id,
            name: run.name.unwrap_or_default(),
            path: run.path,
            head_sha: run.head_sha,
            event: run.event,
            status: run.status.unwrap_or_default(),
            conclusion: run.conclusion,
            artifacts,
            archives: BTreeMap::new(),
            jobs: BTreeMap::new(),
            sweep_id: None,
            jobs_unavailable: None,
        };
        runs.insert(run.id, workflow);
    }
    planned.sort_by(|a, b| (a.0, std::cmp::Reverse(a.1), &a.2.name).cmp(&(b.0, std::cmp::Reverse(b.1), &b.2.name)));

    // Each download is bounded by what the bound leaves after the declared sizes of those
    // before it, so a bound that is reached is not downloaded past by much.
    let mut declared = 0u64;
    let mut caps = Vec::with_capacity(planned.len());
    for (_, _, a) in &planned {
        caps.push(limits.max_artifact_bytes.min(downloaded.remaining().saturating_sub(declared)));
        declared = declared.saturating_add(a.size_in_bytes);
    }
    let (total, done, bytes) = (planned.len(), &AtomicUsize::new(0), &AtomicU64::new(0));
    // `Err(None)`: the global bound, not the artifact's own bound, stopped the download.
    let fetch = |(id, cap): (u64, u64)| async move {
        let answer = if cap == 0 {
            Err(None)
        } else {
            match gh.download_artifact(repo, id, cap).await {
                Err(GitHubError::TooLarge { .. }) if cap < limits.max_artifact_bytes => Err(None),
                answer => answer.map_err(Some),
            }
        };
        let size = answer.as_ref().map_or(0, |b| b.len() as u64);
        let bytes = bytes.fetch_add(size, Ordering::Relaxed) + size;
        progress(DownloadProgress { done: done.fetch_add(1, Ordering::Relaxed) + 1, total, bytes });
        answer
    };
    let answers =
        bounded(limits.concurrency, planned.iter().map(|(_, _, a)| a.id).zip(caps.iter().copied()).map(fetch)).await;

    let mut tree = MemTree::new();
    let mut unpacked = Budget::new(limits.max_unpacked_bytes);
    let mut job_logs = jobs;
    for (index, ((rank, run_id, artifact), answer)) in planned.iter().zip(answers).enumerate() {
        // Eval job logs are charged right after the qualifying run's own artifacts.
        let next_rank = planned.get(index + 1).map_or(u8::MAX, |p| p.0);
        let run = runs.get_mut(run_id).expect("planned artifacts belong to listed runs");
        let fact = match answer {
            Err(None) => Fact::Unavailable(format!(
                "the global bound of {} bytes downloaded per verification was reached",
                downloaded.limit
            )),
            Err(Some(err)) => unavailable("download", err),
            Ok(bytes) => match downloaded.charge(bytes.len() as u64, "downloaded") {
                Err(reason) => Fact::Unavailable(reason),
                Ok(()) => unpack_into(&bytes, *run_id, artifact, limits, &mut unpacked, &mut tree, &mut run.archives),
            },
        };
        run.artifacts.insert(artifact.name.clone(), fact);
        if *rank == 0 && next_rank > 0 {
            store_job_logs(job_logs.take(), &mut runs, downloaded, &mut tree);
        }
    }
    store_job_logs(job_logs, &mut runs, downloaded, &mut tree);
    (runs, tree)
}

/// Whether an artifact name can be one folder of the bundle (`artifacts/<run id>/<name>/`):
/// not empty, not `.` or `..`, no path separator, no control character, at most 255 bytes.
/// GitHub refuses such names at upload, so one here is hostile or corrupt.
fn is_safe_artifact_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && name != "."
        && name != ".."
        && !name.chars().any(|c| c == '/' || c == '\\' || c.is_control())
}

fn store_job_logs(
    jobs: Option<EvalLogs>,
    runs: &mut BTreeMap<u64, WorkflowRun>,
    downloaded: &mut Budget,
    tree: &mut MemTree,
) {
    let Some((run_id, jobs)) = jobs else { return };
    let Some(run) = runs.get_mut(&run_id) else { return };
    let jobs = match jobs {
        Ok(jobs) => jobs,
        Err(reason) => {
            run.jobs_unavailable = Some(reason);
            return;
        }
    };
    for (job, log) in jobs {
        let log = match log {
            Err(reason) => Fact::Unavailable(format!("job log: {reason}")),
            Ok(bytes) => match downloaded.charge(bytes.len() as u64, "downloaded") {
                Err(reason) => Fact::Unavailable(reason),
                Ok(()) => {
                    tree.insert(format!("{run_id}/job-logs/{}.log", job.id), bytes);
                    Fact::Ok(())
                }
            },
        };
        run.jobs.insert(job.id, Job { name: job.name, conclusion: job.conclusion, log });
    }
}

/// Unpacks one artifact zip under `<run id>/<name>/`, within what the global unpacked-bytes
/// bound leaves; its nested archives that could not be read go to `archives`.
fn unpack_into(
    bytes: &[u8],
    run_id: u64,
    artifact: &Artifact,
    limits: &CollectLimits,
    unpacked: &mut Budget,
    tree: &mut MemTree,
    archives: &mut BTreeMap<String, Fact<()>>,
) -> Fact<()> {
    let left = unpacked.remaining();
    let archive_limits = ArchiveLimits { max_total_bytes: limits.archive.max_total_bytes.min(left), ..limits.archive };
    let out = match unpack_artifact(bytes, &format!("{run_id}/{}", artifact.name), archive_limits) {
        Ok(out) => out,
        Err(ArchiveError::TooLarge(_)) if left < limits.archive.max_total_bytes => {
            return Fact::Unavailable(format!(
                "unpacking: the global bound of {} bytes unpacked per verification was reached",
                unpacked.limit
            ))
        }
        Err(err) => return unavailable("unpacking", err),
    };
    let size: u64 = out.tree.paths().filter_map(|p| out.tree.get(p)).map(|b| b.len() as u64).sum();
    if let Err(reason) = unpacked.charge(size, "unpacked") {
        return Fact::Unavailable(format!("unpacking: {reason}"));
    }
    for (path, reason) in out.failures {
        archives.insert(format!("{}/{path}", artifact.name), Fact::Unavailable(reason));
    }
    for path in out.tree.paths().filter(|p| p.ends_with(".tar.gz") || p.ends_with(".tgz") || p.ends_with(".tar")) {
        let relative = path.strip_prefix(&format!("{run_id}/")).unwrap_or(path).to_string();
        archives.entry(relative).or_insert(Fact::Ok(()));
    }
    for path in out.tree.paths() {
        if let Some(data) = out.tree.get(path) {
            tree.insert(path, data.to_vec());
        }
    }
    Fact::Ok(())
}

/// Membership of the signer in each team that CODEOWNERS (at the policy tip) names for a changed file.
async fn read_teams<G: GitHub>(gh: &G, evidence: &Evidence) -> BTreeMap<String, BTreeMap<String, Fact<bool>>> {
    let mut teams = BTreeMap::new();
    let policy = evidence.policy_tree();
    let Ok(Some(path)) = Layout::default().resolve(policy, Logical::Codeowners) else { return teams };
    let Some(text) = policy.text(&path) else { return teams };
    let (codeowners, _) = Codeowners::parse(text, &path);
    let mut named = BTreeSet::new();
    for file in &evidence.files {
        for p in std::iter::once(&file.filename).chain(file.previous_filename.as_ref()) {
            if let Some((rule, _)) = codeowners.owners_of(p) {
                named.extend(rule.teams().map(|(org, team)| (org.to_string(), team.to_string())));
            }
        }
    }
    let signer = &evidence.signoff.author;
    for (org, team) in named {
        let fact = match gh.team_membership(&org, &team, signer).await {
            Ok(member) => Fact::Ok(member),
            Err(err) => unavailable("team membership", err),
        };
        teams.entry(format!("{org}/{team}")).or_insert_with(BTreeMap::new).insert(signer.clone(), fact);
    }
    teams
}

/// What the PR model needs from upstream ([`Needs`]): the recipe links of the sign-off's
/// detail section, the images of the affected entries, and the Hugging Face configs.
async fn read_upstream(client: &UpstreamClient, needs: &Needs, limits: &CollectLimits) -> crate::evidence::Upstream {
    let mut out = crate::evidence::Upstream::default();
    let Needs { recipe_links, images, models, .. } = needs.clone();
    let n = limits.concurrency;
    let recipe = |link: UpstreamLink| async move {
        match &link.kind {
            LinkKind::Pull { repo, number } => {
                let (pull, content) = client.pull_and_content(repo, *number).await;
                (link.key, Some(pull), content)
            }
            LinkKind::Page => {
                let content = client.page_text(&link.key).await;
                (link.key, None, content)
            }
        }
    };
    let digest = |image: String| async move {
        let fact = client.image_digest(&image).await;
        (image, fact)
    };
    let config = |model: String| async move {
        let fact = client.model_config(&model).await;
        (model, fact)
    };
    let (pulls, image_digests, model_configs) = tokio::join!(
        bounded(n, recipe_links.into_iter().take(limits.max_upstream).map(recipe)),
        bounded(n, images.into_iter().take(limits.max_upstream).map(digest)),
        bounded(n, models.into_iter().take(limits.max_upstream).map(config)),
    );
    for (key, pull, content) in pulls {
        if let Some(pull) = pull {
            out.pulls.insert(key.clone(), pull);
        }
        out.contents.insert(key, content);
    }
    out.image_digests = image_digests.into_iter().collect();
    out.model_configs = model_configs.into_iter().collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_is_the_default_branchs_unless_the_target_is_a_configured_policy_branch() {
        let pull = |target: &str, default: Option<&str>| -> crate::github::types::PullRequest {
            serde_json::from_value(serde_json::json!({
                "number": 1, "head": {"sha": "a".repeat(40)},
                "base": {"sha": "b".repeat(40), "ref": target,
                         "repo": {"full_name": "o/r", "default_branch": default}}
            }))
            .unwrap()
        };
        let configured = ["release".to_owned()];
        assert_eq!(policy_branch(&pull("release", Some("main")), &configured), Ok("release"));
        assert_eq!(policy_branch(&pull("vendor-staging", Some("main")), &configured), Ok("main"));
        assert_eq!(policy_branch(&pull("release", Some("main")), &[]), Ok("main"), "not configured");
        assert_eq!(policy_branch(&pull("release", None), &configured), Ok("release"));
        assert!(policy_branch(&pull("vendor-staging", None), &configured).is_err(), "no default branch named");
    }

    #[test]
    fn artifact_names_that_are_not_one_folder_are_unsafe() {
        for bad in ["", ".", "..", "../x", "bmk_a/../../x", "a\\b", "a\nb", "a\0b", &"a".repeat(256)] {
            assert!(!is_safe_artifact_name(bad), "{bad:?}");
        }
        for good in ["bmk_dsr1_8k1k", "eval_x.y-z", "..a", "a b"] {
            assert!(is_safe_artifact_name(good), "{good:?}");
        }
    }

    #[test]
    fn run_ids_from_details_urls() {
        assert_eq!(run_id_of("https://github.com/o/r/actions/runs/123/job/456"), Some(123));
        assert_eq!(run_id_of("https://github.com/o/r/actions/runs/9"), Some(9));
        assert_eq!(run_id_of("https://ci.example.com/build/9"), None);
        assert_eq!(run_id_of("https://github.com/o/r/actions/runs/x"), None);
    }

    #[test]
    fn wanted_paths_cover_both_layouts_and_changes() {
        let files = vec![ChangedFile {
            filename: "x/new.sh".into(),
            previous_filename: Some("x/old.sh".into()),
            status: "renamed".into(),
            patch: None,
        }];
        let wanted = wanted_paths(&files);
        for p in
            [".github/CODEOWNERS", "configs/amd-master.yaml", "inferencex-e2e/docs/MODELS.md", "x/new.sh", "x/old.sh"]
        {
            assert!(wanted(p), "{p}");
        }
        for p in ["configsX/a", "src/main.rs", "MODELS.md.bak"] {
            assert!(!wanted(p), "{p}");
        }
    }
}
