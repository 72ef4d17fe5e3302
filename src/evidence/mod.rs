//! Evidence: the immutable snapshot of everything a verdict reads, gathered by the shell before
//! any check runs (ARCHITECTURE rule 1), and its on-disk form, the bundle (rule 2).
//!
//! Same Evidence → same verdict, byte for byte: every collection here is ordered.

mod bundle;
pub mod collect;
pub mod limits;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::repo::MemTree;

pub use bundle::{read_bundle, write_bundle, BundleError, BUNDLE_FORMAT, OLDEST_BUNDLE_FORMAT};

/// A fact that had to be fetched from outside and may not have been obtainable.
///
/// Two kinds of `Unavailable` (convention shared by the collectors and the checks): a reason
/// that starts with [`NOT_FOUND`] (`"not found: …"`) is a *definite* answer from the source
/// (HTTP 404 / `MANIFEST_UNKNOWN` for an image tag or digest, a PR that does not exist): the
/// thing is absent. Every other reason (timeout, HTTP 5xx, rate limit, a body that did not
/// parse, a bound hit) means the verifier could not tell. A check FAILs on a definite absence
/// and treats the other kind as unverifiable (see docs/decisions.md F4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Fact<T> {
    Ok(T),
    /// Why it could not be obtained (HTTP status, timeout, not found, …).
    Unavailable(String),
}

/// The prefix of an [`Fact::Unavailable`] reason that is a definite "does not exist".
pub const NOT_FOUND: &str = "not found:";

impl<T> Fact<T> {
    pub fn as_ok(&self) -> Option<&T> {
        match self {
            Fact::Ok(v) => Some(v),
            Fact::Unavailable(_) => None,
        }
    }

    /// Whether the source answered definitely that the thing does not exist ([`NOT_FOUND`]).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Fact::Unavailable(reason) if reason.starts_with(NOT_FOUND))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PullRequest {
    pub number: u64,
    pub title: String,
    #[serde(default)]
    pub body: String,
    pub author: String,
    pub state: String,
    pub draft: bool,
    /// The pinned head SHA every check is evaluated at.
    pub head_sha: String,
    pub head_ref: String,
    /// The PR's base commit (GitHub's `base.sha`): the diff side of the change (affected
    /// configs, appended entries).
    pub base_sha: String,
    pub base_ref: String,
    /// The default branch's tip the policy files were read at (ARCHITECTURE decision 6),
    /// resolved once per verification. Bundles without the field read it as `base_sha`;
    /// `None` when the branch could not be resolved (`trees.policy` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_sha: Option<String>,
    /// The default branch policy was read at, when the PR targets another branch (issue 35
    /// case 5); `None`: policy is the target branch's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_branch: Option<String>,
    #[serde(default)]
    pub fork: bool,
    #[serde(default)]
    pub labels: Vec<String>,
}

/// Where a sign-off was posted; the key is the verdict's identity (ARCHITECTURE decision 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignoffKind {
    /// A PR conversation comment (`issuecomment-N`).
    Comment,
    /// A review summary (`pullrequestreview-N`).
    Review,
    /// An inline review comment (`discussion_rN`).
    ReviewComment,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signoff {
    pub kind: SignoffKind,
    pub id: u64,
    pub author: String,
    pub body: String,
    pub url: String,
    #[serde(default)]
    pub created_at: String,
    #[serde(default)]
    pub updated_at: String,
}

impl Signoff {
    /// `issuecomment-N`, `pullrequestreview-N` or `discussion_rN`.
    pub fn key(&self) -> String {
        match self.kind {
            SignoffKind::Comment => format!("issuecomment-{}", self.id),
            SignoffKind::Review => format!("pullrequestreview-{}", self.id),
            SignoffKind::ReviewComment => format!("discussion_r{}", self.id),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangedFile {
    pub filename: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_filename: Option<String>,
    /// added, modified, removed, renamed, copied, changed, unchanged (GitHub's words).
    pub status: String,
    /// The unified diff hunk text GitHub returns (absent for binary or very large files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
}

/// A submodule pointer the PR moves (a gitlink, mode 160000): its path and the commits it
/// points at before and after (`None` when the PR adds or removes the submodule). No tarball
/// holds a submodule's content, so its path is in neither tree (decision RV2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Gitlink {
    pub path: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

impl ChangedFile {
    /// The gitlink change this file is, read from its patch: GitHub (and `git diff`) show a
    /// submodule as one hunk of `-Subproject commit <sha>` / `+Subproject commit <sha>` lines and
    /// nothing else. Any other line, or no patch, is not a gitlink.
    pub fn gitlink(&self) -> Option<Gitlink> {
        let patch = self.patch.as_deref()?;
        let (mut old, mut new) = (None, None);
        for line in patch.lines().filter(|l| !l.starts_with("@@") && !l.is_empty()) {
            let (slot, rest) = match (line.strip_prefix('-'), line.strip_prefix('+')) {
                (Some(rest), _) => (&mut old, rest),
                (_, Some(rest)) => (&mut new, rest),
                _ => return None,
            };
            let sha = rest.strip_prefix("Subproject commit ")?;
            if sha.len() != 40 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            if slot.replace(sha.to_ascii_lowercase()).is_some() {
                return None;
            }
        }
        (old.is_some() || new.is_some()).then(|| Gitlink { path: self.filename.clone(), old, new })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckRun {
    pub name: String,
    /// queued, in_progress, completed.
    pub status: String,
    /// success, failure, skipped, cancelled, timed_out, neutral, action_required, stale; null while running.
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub details_url: String,
    /// The Actions run id, parsed from `details_url` (`/actions/runs/<id>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkflowRun {
    pub id: u64,
    pub name: String,
    /// Workflow file path, e.g. `.github/workflows/run-sweep.yml`.
    pub path: String,
    pub head_sha: String,
    pub event: String,
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    /// Artifact names of the run, each with whether its content is in the bundle.
    #[serde(default)]
    pub artifacts: BTreeMap<String, Fact<()>>,
    /// Archives nested in an artifact (`<artifact>/<path>.tar.gz`), each with whether it was
    /// unpacked (under `<run id>/<artifact>/<path>.d/`). An artifact can be `Ok` while one of
    /// its archives is not.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub archives: BTreeMap<String, Fact<()>>,
    /// Jobs of the run whose logs a check reads, by job id. A log that is `Ok` is in
    /// `artifacts/` at `<run id>/job-logs/<job id>.log`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub jobs: BTreeMap<u64, Job>,
    /// Set when the run is a sweep sweepgate ran itself (decision L7): its sweep id. Such a run
    /// is keyed by its `sweepgate/sweep` check run's id, and its artifacts come from the results
    /// store in the layout of `run-sweep.yml` artifacts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep_id: Option<String>,
    /// Why the jobs of this run could not be listed (the collector lists the qualifying run's
    /// jobs to read their logs); `jobs` is then empty and says nothing. Absent: listed, or not
    /// asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs_unavailable: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    pub name: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    pub log: Fact<()>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Comment {
    pub id: u64,
    pub author: String,
    /// OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, FIRST_TIME_CONTRIBUTOR, FIRST_TIMER, NONE.
    pub author_association: String,
    pub body: String,
    pub created_at: String,
    #[serde(default)]
    pub updated_at: String,
    #[serde(default)]
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Permission {
    /// admin, write, read, none (GitHub's `permission`).
    pub permission: String,
    /// admin, maintain, write, triage, read (GitHub's `role_name`).
    pub role_name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamPull {
    /// open, closed.
    pub state: String,
    #[serde(default)]
    pub draft: bool,
    #[serde(default)]
    pub merged_at: Option<String>,
    /// Files the upstream PR touched.
    #[serde(default)]
    pub files: Vec<String>,
}

/// Facts from outside the repository, fetched by the collectors.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Upstream {
    /// Upstream recipe / cookbook pull requests, by their URL.
    #[serde(default)]
    pub pulls: BTreeMap<String, Fact<UpstreamPull>>,
    /// Image reference → manifest digest (`sha256:…`).
    #[serde(default)]
    pub image_digests: BTreeMap<String, Fact<String>>,
    /// Hugging Face repo id → its `config.json`.
    #[serde(default)]
    pub model_configs: BTreeMap<String, Fact<serde_json::Value>>,
    /// Format 1 only: one published run for every affected series. Read into
    /// [`Upstream::published_runs`] under the key [`ALL_SERIES`]; never written.
    #[serde(default, skip_serializing)]
    pub published_run: Option<u64>,
    /// Format 2: per affected config key, the last published run of its series (the base curve
    /// of Check 18(g)/(h), spec 10 §4 and 40 §3). `Ok(None)`: the collector looked and the series
    /// has none (a new config). `Unavailable`: it could not tell. The run is in
    /// [`Evidence::runs`] and its `bmk_*` artifacts under `<run id>/` in `artifacts/`.
    /// The key [`ALL_SERIES`] applies to every affected config without an entry of its own.
    #[serde(default)]
    pub published_runs: BTreeMap<String, Fact<Option<PublishedRun>>>,
    /// Upstream content linked from the sign-off (cookbook PR files, published recipe pages)
    /// for Check 3(c), keyed like `pulls` (`https://github.com/<owner>/<repo>/pull/<n>`, also for
    /// a short ref `owner/repo#N`) or by the page URL without its fragment.
    #[serde(default)]
    pub contents: BTreeMap<String, Fact<UpstreamContent>>,
    /// Files read from the external checkouts the affected configs' launchers clone (issue 33
    /// item 2, decision EX1): `owner/repo@ref` → checkout-relative path → text, or why it could
    /// not be read. A recipe a launcher reads from such a checkout is judged from here; one not
    /// listed was not fetched (offline, or collected before the field).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub checkouts: BTreeMap<String, BTreeMap<String, Fact<String>>>,
}

/// The key of [`Upstream::published_runs`] that applies to every affected config.
pub const ALL_SERIES: &str = "*";

/// The last published run of a config's series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedRun {
    /// The workflow run whose results were ingested.
    pub run_id: u64,
    /// The merged PR whose changelog entry listed the config (0 when unknown, format 1).
    #[serde(default)]
    pub pr: u64,
    /// How the run was found: `reuse` (the PR's `/reuse-sweep-run`), `main` (the run on the
    /// merge commit), or `format1`.
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_at: Option<String>,
}

/// Text of upstream content a check reads (bounded by the collector).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamContent {
    /// Where it was read from (the API or page URL).
    pub source: String,
    /// `path → text` for a PR's changed files at its merge commit; one entry `page` for a
    /// published page converted to text.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
}

/// Whether each file tree of the bundle could be read. A tree that is `Unavailable` is empty
/// and every check that reads it must say so (never "missing file" or N/A).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trees {
    pub base: Fact<()>,
    pub head: Fact<()>,
    /// The policy files at `policy_sha` (`policy/`). `None`: they are the base tree's (the tip
    /// was the base commit, or the bundle predates the field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<Fact<()>>,
}

impl Default for Trees {
    fn default() -> Self {
        Trees { base: Fact::Ok(()), head: Fact::Ok(()), policy: None }
    }
}

/// Everything a verdict reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    /// `owner/name`.
    pub repository: String,
    /// The UTC date the verification ran on (deprecation dates are compared with it).
    pub review_date: chrono::NaiveDate,
    pub pull_request: PullRequest,
    /// The head SHA read again after collection; differs from the pinned head when the PR
    /// moved during verification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_head_sha: Option<String>,
    pub signoff: Signoff,
    /// SHAs of the commits currently in the PR, oldest first.
    pub commits: Vec<String>,
    pub files: Vec<ChangedFile>,
    /// Check-runs per in-PR commit SHA.
    #[serde(default)]
    pub check_runs: BTreeMap<String, Fact<Vec<CheckRun>>>,
    /// Workflow runs referenced by check-runs or reuse commands, by id.
    #[serde(default)]
    pub runs: BTreeMap<u64, WorkflowRun>,
    /// PR conversation comments, oldest first.
    #[serde(default)]
    pub comments: Vec<Comment>,
    /// Repository permission of the people the checks ask about (signer, commenters).
    #[serde(default)]
    pub permissions: BTreeMap<String, Fact<Permission>>,
    /// `org/team` → login → member?; a missing entry or `Unavailable` means unreadable.
    #[serde(default)]
    pub team_members: BTreeMap<String, BTreeMap<String, Fact<bool>>>,
    #[serde(default)]
    pub upstream: Upstream,
    /// Whether `base/` and `head/` could be read (format 2; format 1 reads a missing directory
    /// as unavailable).
    #[serde(default)]
    pub trees: Trees,
    /// Git blob SHA of each file at a commit (`commit → path → blob`), for the commits Check 1
    /// compares: the qualifying sweep commit and the head. Format 1 has none (unavailable).
    #[serde(default)]
    pub blobs: BTreeMap<String, Fact<BTreeMap<String, String>>>,
    /// Text of files at a commit other than the head (`commit → path → text`): the master
    /// configs whose blob differs between the qualifying sweep commit and the head, so Check 1
    /// can compare the affected entries (decision F8). A path absent from an `Ok` map did not
    /// exist at that commit. Format 1 and older format-2 bundles have none (unavailable).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub texts_at: BTreeMap<String, Fact<BTreeMap<String, String>>>,
    /// The bundle format this Evidence was read from (not serialized; set by `read_bundle`).
    #[serde(skip, default = "current_format")]
    pub format: u32,
    /// Policy and content files at `base_sha` (not serialized in evidence.json: `base/`).
    #[serde(skip)]
    pub base: MemTree,
    /// Content files at the pinned head (not serialized in evidence.json: `head/`).
    #[serde(skip)]
    pub head: MemTree,
    /// Policy files at `policy_sha` when it is not the base commit (bundle folder `policy/`);
    /// read through [`Evidence::policy_tree`].
    #[serde(skip)]
    pub policy: MemTree,
    /// Unpacked artifacts: `<run id>/<artifact name>/<path>` (bundle folder `artifacts/`).
    #[serde(skip)]
    pub artifacts: MemTree,
}

fn current_format() -> u32 {
    BUNDLE_FORMAT
}

impl Evidence {
    /// The short form of the pinned head SHA, as reports name it.
    pub fn short_sha(&self) -> &str {
        let sha = &self.pull_request.head_sha;
        sha.get(..7).unwrap_or(sha)
    }

    /// The tree policy files (CODEOWNERS, checklist template, MODELS.md, thresholds, golden AL,
    /// waivers) are read from: the default branch's tip, which is the base tree when the two
    /// are one commit (ARCHITECTURE decision 6).
    pub fn policy_tree(&self) -> &MemTree {
        match self.trees.policy {
            Some(_) => &self.policy,
            None => &self.base,
        }
    }

    /// Whether [`Evidence::policy_tree`] could be read.
    pub fn policy_fact(&self) -> &Fact<()> {
        self.trees.policy.as_ref().unwrap_or(&self.trees.base)
    }

    /// Whether the PR head moved while the evidence was being collected.
    pub fn head_moved(&self) -> bool {
        self.live_head_sha.as_deref().is_some_and(|live| live != self.pull_request.head_sha)
    }
}

#[cfg(test)]
mod tests {
    use super::{ChangedFile, Gitlink};

    fn file(patch: Option<&str>) -> ChangedFile {
        ChangedFile {
            filename: "utils/aiperf".into(),
            previous_filename: None,
            status: "modified".into(),
            patch: patch.map(String::from),
        }
    }

    #[test]
    fn a_submodule_bump_is_a_gitlink_with_both_commits() {
        // PR #2548 (history bundle b7e8b0e3): `git diff` of the bump, as GitHub shows it.
        let patch = "@@ -1 +1 @@\n-Subproject commit e9f2a5459ba8894becc5d6079e0092b2a0d0a669\n+Subproject commit B7E8B0E3FB8C7BF99404BA1D78D5242B01D04A9A\n";
        assert_eq!(
            file(Some(patch)).gitlink(),
            Some(Gitlink {
                path: "utils/aiperf".into(),
                old: Some("e9f2a5459ba8894becc5d6079e0092b2a0d0a669".into()),
                new: Some("b7e8b0e3fb8c7bf99404ba1d78d5242b01d04a9a".into()),
            })
        );
        let added = "@@ -0,0 +1 @@\n+Subproject commit b7e8b0e3fb8c7bf99404ba1d78d5242b01d04a9a\n";
        assert_eq!(file(Some(added)).gitlink().map(|g| (g.old, g.new.is_some())), Some((None, true)));
    }

    #[test]
    fn a_file_that_only_mentions_a_subproject_is_no_gitlink() {
        let sha = "b7e8b0e3fb8c7bf99404ba1d78d5242b01d04a9a";
        for patch in [
            format!("@@ -1 +1,2 @@\n+Subproject commit {sha}\n+echo hi\n"),
            format!("@@ -1 +1 @@\n Subproject commit {sha}\n"),
            "@@ -1 +1 @@\n+Subproject commit abc\n".to_owned(),
            format!("@@ -1 +1,2 @@\n+Subproject commit {sha}\n+Subproject commit {sha}\n"),
            "@@ -1 +1 @@\n".to_owned(),
        ] {
            assert_eq!(file(Some(&patch)).gitlink(), None, "{patch}");
        }
        assert_eq!(file(None).gitlink(), None);
    }
}
