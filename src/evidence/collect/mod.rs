//! Collectors (shell side, ARCHITECTURE rules 1 and 6): everything a verdict reads, fetched
//! through the [`GitHub`] trait and the [`UpstreamClient`], into one [`Evidence`]. Only the
//! identity of the verification (the PR and the sign-off) is fatal when unreadable; every other
//! fact that cannot be fetched is recorded as [`Fact::Unavailable`] with the reason.
//!
//! Requests for a typical PR (3 commits, 2 referenced runs, 3 result artifacts, one signer with
//! one team): PR, sign-off, commits, files, comments, base and head tarballs, 3 × check-runs,
//! 2 × run, 2 × artifact list, 3 × artifact zip, permission, team, PR again = 21.

pub mod archive;
pub mod upstream;

use std::collections::{BTreeMap, BTreeSet};

use crate::checks::{affected, Context};
use crate::domain::codeowners::Codeowners;
use crate::evidence::{
    ChangedFile, CheckRun, Comment, Evidence, Fact, Permission, PullRequest, Signoff, SignoffKind, WorkflowRun,
};
use crate::github::{GitHub, GitHubError, RepoRef};
use crate::intake::command::{self, Scan};
use crate::intake::signoff::{self, SignoffUrl};
use crate::repo::{Layout, Logical, MemTree};
use archive::{unpack_artifact, unpack_tarball, ArchiveLimits};
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
    pub max_artifact_bytes: u64,
    pub archive: ArchiveLimits,
    /// Most workflow runs read (the newest ids first).
    pub max_runs: usize,
    /// Most artifacts downloaded in total.
    pub max_artifacts: usize,
    /// Artifact name prefixes whose content a verdict reads.
    pub artifact_prefixes: Vec<String>,
    /// Most upstream facts of each kind (PRs, images, model configs).
    pub max_upstream: usize,
}

impl Default for CollectLimits {
    fn default() -> Self {
        CollectLimits {
            max_tarball_bytes: 256 << 20,
            max_artifact_bytes: 256 << 20,
            archive: ArchiveLimits::default(),
            max_runs: 12,
            max_artifacts: 24,
            artifact_prefixes: ["eval_", "bmk_", "results", "agentic_", "power_"].map(String::from).to_vec(),
            max_upstream: 16,
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
    prefixes.extend(["benchmarks", "inferencex-e2e/benchmarks"].map(String::from));
    let changed: BTreeSet<String> =
        files.iter().flat_map(|f| std::iter::once(f.filename.clone()).chain(f.previous_filename.clone())).collect();
    move |path: &str| {
        changed.contains(path)
            || prefixes.iter().any(|p| path == p || path.strip_prefix(p.as_str()).is_some_and(|r| r.starts_with('/')))
    }
}

/// Collects the Evidence of one sign-off.
pub async fn collect<G: GitHub>(
    gh: &G,
    upstream: &UpstreamClient,
    request: &CollectRequest,
    limits: &CollectLimits,
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
    let pull = gh.get_pull(repo, pr).await.map_err(|source| CollectError::Pull { repo: repo.clone(), pr, source })?;
    let signoff = read_signoff(gh, repo, pr, &request.signoff).await?;
    let head_sha = pull.head.sha.clone();
    let base_sha = pull.base.sha.clone();

    let commits = gh.list_pull_commits(repo, pr).await.map(|c| c.into_iter().map(|c| c.sha).collect());
    let files: Vec<ChangedFile> = match gh.list_pull_files(repo, pr).await {
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
    // Without the commit list, the pinned head is the only commit known to be in the PR.
    let commits: Vec<String> = commits.unwrap_or_else(|_| vec![head_sha.clone()]);
    let comments: Vec<Comment> = match gh.list_issue_comments(repo, pr).await {
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

    let wanted = wanted_paths(&files);
    let (base, base_fact) = read_tree(gh, repo, &base_sha, limits, &wanted).await;
    let (head, head_fact) = read_tree(gh, repo, &head_sha, limits, &wanted).await;

    let mut check_runs = BTreeMap::new();
    let mut run_ids = BTreeSet::new();
    for sha in &commits {
        let fact = match gh.list_check_runs(repo, sha).await {
            Ok(list) => Fact::Ok(
                list.into_iter()
                    .map(|c| {
                        let details_url = c.details_url.unwrap_or_default();
                        let run_id = run_id_of(&details_url);
                        run_ids.extend(run_id);
                        CheckRun { name: c.name, status: c.status, conclusion: c.conclusion, details_url, run_id }
                    })
                    .collect(),
            ),
            Err(err) => unavailable("check-runs", err),
        };
        check_runs.insert(sha.clone(), fact);
    }
    // Runs named by reuse commands are evidence too (Check 4).
    for c in &comments {
        if let Scan::Command(command) = command::scan(&c.body) {
            run_ids.extend(command.run_id);
        }
    }
    let (runs, artifacts) = read_runs(gh, repo, run_ids, limits).await;

    let mut people: BTreeSet<String> = BTreeSet::from([signoff.author.clone()]);
    people.extend(
        comments.iter().filter(|c| matches!(command::scan(&c.body), Scan::Command(_))).map(|c| c.author.clone()),
    );
    let mut permissions = BTreeMap::new();
    for login in &people {
        let fact = match gh.collaborator_permission_detail(repo, login).await {
            Ok(p) => Fact::Ok(Permission { permission: p.permission, role_name: p.role_name }),
            Err(err) => unavailable("collaborator permission", err),
        };
        permissions.insert(login.clone(), fact);
    }

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
            fork: pull.is_fork(),
            labels: pull.label_names().into_iter().map(str::to_string).collect(),
        },
        live_head_sha: None,
        signoff,
        commits,
        files,
        check_runs,
        runs,
        comments,
        permissions,
        team_members: BTreeMap::new(),
        upstream: Default::default(),
        trees: crate::evidence::Trees { base: base_fact, head: head_fact },
        blobs: BTreeMap::new(),
        format: crate::evidence::BUNDLE_FORMAT,
        base,
        head,
        artifacts,
    };
    evidence.team_members = read_teams(gh, &evidence).await;
    evidence.upstream = read_upstream(upstream, &evidence, limits).await;
    // Head anchoring (spec 30 §1.6): the verdict says so when the PR moved meanwhile.
    evidence.live_head_sha = match gh.get_pull(repo, pr).await {
        Ok(live) => Some(live.head.sha),
        Err(err) => {
            tracing::warn!("re-reading the PR head: {err}");
            None
        }
    };
    Ok(evidence)
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

/// The files a verdict reads at `sha`, from one tarball download. An unreadable tarball is an
/// empty tree whose fact is unavailable, so no check mistakes it for a tree without the file.
async fn read_tree<G: GitHub>(
    gh: &G,
    repo: &RepoRef,
    sha: &str,
    limits: &CollectLimits,
    wanted: &impl Fn(&str) -> bool,
) -> (MemTree, Fact<()>) {
    let result = match gh.download_tarball(repo, sha, limits.max_tarball_bytes).await {
        Ok(bytes) => unpack_tarball(&bytes, limits.archive, wanted).map_err(|e| e.to_string()),
        Err(err) => Err(err.to_string()),
    };
    match result {
        Ok(tree) => (tree, Fact::Ok(())),
        Err(reason) => {
            tracing::warn!("repository contents at {sha}: {reason}");
            (MemTree::new(), Fact::Unavailable(format!("repository contents at {sha}: {reason}")))
        }
    }
}

fn wants_artifact(name: &str, limits: &CollectLimits) -> bool {
    limits.artifact_prefixes.iter().any(|p| name.starts_with(p.as_str()))
}

/// Runs (newest ids first, bounded), their artifact lists, and the content of result artifacts.
async fn read_runs<G: GitHub>(
    gh: &G,
    repo: &RepoRef,
    run_ids: BTreeSet<u64>,
    limits: &CollectLimits,
) -> (BTreeMap<u64, WorkflowRun>, MemTree) {
    let mut runs = BTreeMap::new();
    let mut tree = MemTree::new();
    let mut downloads = 0;
    for id in run_ids.into_iter().rev().take(limits.max_runs) {
        let run = match gh.get_workflow_run(repo, id).await {
            Ok(Some(run)) => run,
            Ok(None) => continue,
            Err(err) => {
                tracing::warn!("run {id}: {err}");
                continue;
            }
        };
        let mut artifacts = BTreeMap::new();
        match gh.list_run_artifacts(repo, id).await {
            Ok(list) => {
                for a in list {
                    let fact = if !wants_artifact(&a.name, limits) {
                        Fact::Unavailable("not a result artifact; content not collected".into())
                    } else if a.expired {
                        Fact::Unavailable("expired".into())
                    } else if downloads >= limits.max_artifacts {
                        Fact::Unavailable(format!("more than {} artifacts; not downloaded", limits.max_artifacts))
                    } else {
                        downloads += 1;
                        read_artifact(gh, repo, id, &a, limits, &mut tree, &mut artifacts).await
                    };
                    artifacts.insert(a.name, fact);
                }
            }
            Err(err) => {
                artifacts.insert("*".into(), unavailable("artifact list", err));
            }
        }
        runs.insert(
            id,
            WorkflowRun {
                id,
                name: run.name.unwrap_or_default(),
                path: run.path,
                head_sha: run.head_sha,
                event: run.event,
                status: run.status.unwrap_or_default(),
                conclusion: run.conclusion,
                artifacts,
                archives: BTreeMap::new(),
                jobs: BTreeMap::new(),
            },
        );
    }
    (runs, tree)
}

async fn read_artifact<G: GitHub>(
    gh: &G,
    repo: &RepoRef,
    run_id: u64,
    artifact: &crate::github::types::Artifact,
    limits: &CollectLimits,
    tree: &mut MemTree,
    notes: &mut BTreeMap<String, Fact<()>>,
) -> Fact<()> {
    let bytes = match gh.download_artifact(repo, artifact.id, limits.max_artifact_bytes).await {
        Ok(bytes) => bytes,
        Err(err) => return unavailable("download", err),
    };
    match unpack_artifact(&bytes, &format!("{run_id}/{}", artifact.name), limits.archive) {
        Ok(unpacked) => {
            for (path, reason) in unpacked.failures {
                notes.insert(format!("{}:{path}", artifact.name), Fact::Unavailable(reason));
            }
            match tree.copy_from(&unpacked.tree, "") {
                Ok(()) => Fact::Ok(()),
                Err(err) => unavailable("unpacking", err),
            }
        }
        Err(err) => unavailable("unpacking", err),
    }
}

/// Membership of the signer in each team that CODEOWNERS (at base) names for a changed file.
async fn read_teams<G: GitHub>(gh: &G, evidence: &Evidence) -> BTreeMap<String, BTreeMap<String, Fact<bool>>> {
    let mut teams = BTreeMap::new();
    let Ok(Some(path)) = Layout::default().resolve(&evidence.base, Logical::Codeowners) else { return teams };
    let Some(text) = evidence.base.text(&path) else { return teams };
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

/// Upstream PR links of the sign-off's additional detail section, the images of the affected
/// master-config entries, and the Hugging Face repositories the detail section links.
async fn read_upstream(
    client: &UpstreamClient,
    evidence: &Evidence,
    limits: &CollectLimits,
) -> crate::evidence::Upstream {
    let mut out = crate::evidence::Upstream::default();
    let cx = Context::new(evidence);
    let links: Vec<String> = match cx.signoff() {
        Ok(parsed) => parsed.detail_links().map(|l| l.url.clone()).collect(),
        Err(_) => Vec::new(),
    };
    let mut pulls = BTreeSet::new();
    let mut models = BTreeSet::new();
    for url in &links {
        if let Some(found) = upstream_pull_of(url) {
            pulls.insert(found);
        } else if let Some(model) = hf_repo_of(url) {
            models.insert(model);
        }
    }
    for (url, repo, number) in pulls.into_iter().take(limits.max_upstream) {
        out.pulls.insert(url, client.pull(&repo, number).await);
    }
    let images: BTreeSet<String> = match affected::affected_configs(&cx) {
        Ok(configs) => configs.into_iter().map(|c| c.image).filter(|i| !i.is_empty()).collect(),
        Err(_) => BTreeSet::new(),
    };
    for image in images.into_iter().take(limits.max_upstream) {
        let digest = client.image_digest(&image).await;
        out.image_digests.insert(image, digest);
    }
    for model in models.into_iter().take(limits.max_upstream) {
        let config = client.model_config(&model).await;
        out.model_configs.insert(model, config);
    }
    out
}

/// `https://github.com/(sgl-project/sglang|vllm-project/recipes)/pull/<n>…` → (canonical URL, repo, n).
fn upstream_pull_of(url: &str) -> Option<(String, String, u64)> {
    let rest = url.trim().strip_prefix("https://github.com/")?;
    let mut parts = rest.split(['/', '#', '?']);
    let (owner, name, kind, number) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let repo = format!("{owner}/{name}").to_ascii_lowercase();
    let known = ["sgl-project/sglang", "vllm-project/recipes"].contains(&repo.as_str());
    let number: u64 = number.parse().ok()?;
    (known && kind == "pull" && number > 0).then(|| (format!("https://github.com/{repo}/pull/{number}"), repo, number))
}

/// `https://huggingface.co/<org>/<name>[/…]` → `org/name`.
fn hf_repo_of(url: &str) -> Option<String> {
    let rest = url.trim().strip_prefix("https://huggingface.co/")?;
    let mut parts = rest.split(['/', '#', '?']);
    let (org, name) = (parts.next()?, parts.next()?);
    let ok = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    (ok(org) && ok(name) && !["datasets", "spaces", "docs"].contains(&org)).then(|| format!("{org}/{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_from_details_urls() {
        assert_eq!(run_id_of("https://github.com/o/r/actions/runs/123/job/456"), Some(123));
        assert_eq!(run_id_of("https://github.com/o/r/actions/runs/9"), Some(9));
        assert_eq!(run_id_of("https://ci.example.com/build/9"), None);
        assert_eq!(run_id_of("https://github.com/o/r/actions/runs/x"), None);
    }

    #[test]
    fn upstream_links() {
        assert_eq!(
            upstream_pull_of("https://github.com/vllm-project/recipes/pull/88/files"),
            Some(("https://github.com/vllm-project/recipes/pull/88".into(), "vllm-project/recipes".into(), 88))
        );
        assert_eq!(upstream_pull_of("https://github.com/sgl-project/sglang/pull/1#x").map(|p| p.2), Some(1));
        assert_eq!(upstream_pull_of("https://github.com/evil/repo/pull/1"), None);
        assert_eq!(upstream_pull_of("https://github.com/sgl-project/sglang/issues/1"), None);
        assert_eq!(
            hf_repo_of("https://huggingface.co/nvidia/DSR1-Eagle3/blob/main/config.json").as_deref(),
            Some("nvidia/DSR1-Eagle3")
        );
        assert_eq!(hf_repo_of("https://huggingface.co/datasets/x/y"), None);
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
