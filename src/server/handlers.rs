//! What the bot does for one event, shared by `serve` and `action`: the welcome comment, the
//! label-policy sticky comment and commit status, the reuse-command acknowledgement, sign-off
//! verification, and the statuses of merge-queue groups.
//! Every write is idempotent: comments are found again by their marker and edited only when the
//! text changed, reactions are set-like, so a redelivered or retried event changes nothing.

mod merge_group;
pub(crate) mod preflight;
mod shared_head;
mod signoff;
mod unchanged;

use serde_json::json;

use crate::checks::c14_pareto_coverage::FrontierChart;
use crate::github::sticky::{self, find_own, Thread, Upserted};
use crate::github::types::{
    CheckRunInput, CheckRunOutput, Comment, PullFile, PullRequest, Reaction, RunQuery, StatusInput, StatusState, User,
    WorkflowRun,
};
use crate::github::{GitHub, GitHubError, RepoRef};
use crate::intake::command::{self, CommentView, ReuseCommand, Scan};
use crate::intake::event::{CommentEvent, Event, PullRequestEvent, PULL_REQUEST_ACTIONS};
use crate::intake::labels::{self, Modifier, Permission, PrFacts, Primary, Reason};
use crate::intake::signoff::{has_signoff_phrase, SignoffKey, SignoffKind};
use crate::repo::Logical;
use crate::report::marker::{with_marker, Marker};
use crate::report::{render_bilingual, RenderError};
use crate::server::sweeps::SweepRequest;
use crate::sweep::cancel::cancel_pull_request;
use crate::sweep::slurm::SlurmCli;
pub use preflight::PreflightBudgets;
pub use signoff::{eligibility_of, verify_signoff, SignoffTarget, Trigger, VerifyConfig};
pub use unchanged::JudgedHeads;

/// Settings of the handlers (the same in both deployments).
#[derive(Debug, Clone)]
pub struct BotConfig {
    /// The bot's own login: its comments are the only ones whose markers are trusted.
    pub bot_login: String,
    /// Commit-status context of the label policy.
    pub status_context: String,
    /// Workflow file whose pull-request runs may be reused.
    pub sweep_workflow: String,
    /// The sign-off verifier's settings.
    pub verify: VerifyConfig,
    /// Cancel a PR's Slurm jobs when it stops qualifying for its sweep; None: never.
    pub slurm_cancel: Option<SlurmCancel>,
    /// Start (and cancel) the PR head's sweep on the configured pools; None: never.
    pub sweeps: Option<std::sync::Arc<crate::server::sweeps::SweepService>>,
}

/// Where the bot cancels: this host's Slurm, and the dispatcher's ledger when known.
#[derive(Debug, Clone, Default)]
pub struct SlurmCancel {
    pub ledger: Option<std::path::PathBuf>,
}

impl Default for BotConfig {
    fn default() -> Self {
        BotConfig {
            bot_login: "sweepgate[bot]".into(),
            status_context: "sweepgate/sweep-labels".into(),
            sweep_workflow: "run-sweep.yml".into(),
            verify: VerifyConfig::default(),
            slurm_cancel: None,
            sweeps: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HandlerError {
    #[error(transparent)]
    GitHub(#[from] GitHubError),
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error(transparent)]
    VerdictRender(#[from] crate::report::verdict::RenderError),
    #[error(transparent)]
    Collect(#[from] crate::evidence::collect::CollectError),
    #[error(transparent)]
    Checks(#[from] crate::offload::Overrun),
}

/// What a handler did, one line per side effect or decision (logged, and the job summary).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Outcome {
    pub lines: Vec<String>,
    /// Check 14's frontier charts of the verdict the handler posted (Action mode draws them).
    pub charts: Vec<FrontierChart>,
    /// The verdict's comparison with the published curve (issue 26; Action mode shows it).
    pub performance: crate::pr::performance::Performance,
    /// The label decision posted: "sweep" or "no-sweep" (the Action's `decision` output).
    pub decision: Option<&'static str>,
    /// The sign-off verdict posted: "APPROVED" or "REJECTED" (the Action's `verdict` output).
    pub verdict: Option<&'static str>,
    /// The preflight report written to the check run (the Action adds it to the job summary).
    pub preflight: Option<String>,
    /// The answer to a reuse command, as its check run says it (the Action adds it to the job
    /// summary; no comment carries it).
    pub reuse: Option<String>,
    /// What the event read already, for its later steps.
    pub reads: EventReads,
}

/// What one event read or collected already (issue 35 case 9): a later step of the same event
/// reuses it for the same PR, head and base instead of reading it again (a main merge's
/// carry-forward and preflight share one collection).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct EventReads {
    /// The PR's files, listed at (PR, head, base).
    files: Option<(ChangeKey, Vec<PullFile>)>,
    /// The Evidence a verification collected (it names its PR, head and base).
    evidence: Option<std::sync::Arc<crate::evidence::Evidence>>,
}

/// (PR, head, base).
type ChangeKey = (u64, String, String);

fn change_key(pull: &PullRequest) -> ChangeKey {
    (pull.number, pull.head.sha.clone(), pull.base.sha.clone())
}

impl EventReads {
    fn files_of(&self, pull: &PullRequest) -> Option<Vec<PullFile>> {
        self.files.as_ref().filter(|(key, _)| *key == change_key(pull)).map(|(_, files)| files.clone())
    }

    fn evidence_of(&self, pull: &PullRequest) -> Option<std::sync::Arc<crate::evidence::Evidence>> {
        self.evidence
            .as_ref()
            .filter(|ev| {
                let at = &ev.pull_request;
                (at.number, &at.head_sha, &at.base_sha) == (pull.number, &pull.head.sha, &pull.base.sha)
            })
            .cloned()
    }
}

impl Outcome {
    fn note(&mut self, line: impl Into<String>) {
        self.lines.push(line.into());
    }
}

pub async fn handle<G: GitHub>(gh: &G, cfg: &BotConfig, event: &Event) -> Result<Outcome, HandlerError> {
    let mut out = Outcome::default();
    match event {
        Event::PullRequest(e) => pull_request(gh, cfg, e, &mut out).await?,
        Event::IssueComment(e) => match e.comment.user.as_ref().filter(|a| User::is_person(Some(a))) {
            Some(author) if has_signoff_phrase(&e.comment.body) => {
                let key = SignoffKey { kind: SignoffKind::ConversationComment, id: e.comment.id };
                let edited = e.action == "edited";
                let trigger = Trigger::Event { author, posted_at: Some(e.comment.created_at), edited };
                let target = SignoffTarget { repo: &e.repo, pr: e.issue_number, key, trigger };
                verify_signoff(gh, &cfg.bot_login, &cfg.verify, target, chrono::Utc::now().date_naive(), &mut out)
                    .await?
            }
            _ => issue_comment(gh, cfg, e, &mut out).await?,
        },
        Event::Review(e) => match e.author.as_ref().filter(|a| User::is_person(Some(a))) {
            Some(author) if has_signoff_phrase(&e.body) => {
                let trigger = Trigger::Event { author, posted_at: e.posted_at, edited: e.action == "edited" };
                let target = SignoffTarget { repo: &e.repo, pr: e.pr, key: e.key, trigger };
                verify_signoff(gh, &cfg.bot_login, &cfg.verify, target, chrono::Utc::now().date_naive(), &mut out)
                    .await?
            }
            _ => out.note(format!("{} is not a sign-off by a person", e.key)),
        },
        // A dispatch is an explicit override: any PR state, no phrase required (spec 30 §1.2).
        Event::Dispatch(e) => {
            let target =
                SignoffTarget { repo: &e.repo, pr: e.signoff.pr, key: e.signoff.key, trigger: Trigger::Dispatch };
            verify_signoff(gh, &cfg.bot_login, &cfg.verify, target, chrono::Utc::now().date_naive(), &mut out).await?
        }
        Event::MergeGroup(e) => merge_group::merge_group(gh, cfg, e, &mut out).await?,
        Event::Ping => out.note("ping"),
        Event::Ignored { name, reason } => out.note(format!("ignored {name}: {reason}")),
    }
    Ok(out)
}

/// The action of the label-policy events the periodic reconcile queues (GitHub never sends it).
pub const RECONCILE_ACTION: &str = "sweepgate-reconcile";

const WELCOME_ACTIONS: [&str; 3] = ["opened", "reopened", "ready_for_review"];

async fn pull_request<G: GitHub>(
    gh: &G,
    cfg: &BotConfig,
    e: &PullRequestEvent,
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    if e.action == "closed" {
        out.note(format!("#{} was closed: no label decision or status for a closed PR", e.pull.number));
        cancel_jobs(cfg, &e.repo, e.pull.number, "the PR was closed", out).await;
        // A head it shared with an approved PR gets that PR's own decision back (HT15).
        signoff::release_shared_head(gh, cfg, &e.repo, &e.pull, out).await?;
        return Ok(());
    }
    // Every parsed action but `closed` (handled above) runs the label policy, and so does reconcile.
    let label_action = e.action == RECONCILE_ACTION || PULL_REQUEST_ACTIONS.contains(&e.action.as_str());
    if !label_action {
        out.note(format!("pull_request.{}: nothing to do", e.action));
        return Ok(());
    }
    // A retarget changes the change under review like a push does (issue 35 case 5).
    let retargeted = e.action == "edited" && e.previous_base.as_deref().is_some_and(|b| b != e.pull.base.ref_name);
    let new_change = e.action == "synchronize" || retargeted;
    // A push that changes no file is answered from what its last judged head got (HT12).
    if e.action == "synchronize" && unchanged::answer_unchanged(gh, cfg, e, out).await? {
        return Ok(());
    }
    if new_change {
        // The jobs measure the previous change; the new one needs its own sweep.
        let why = if retargeted { "the PR was retargeted" } else { "a new commit was pushed" };
        cancel_jobs(cfg, &e.repo, e.pull.number, why, out).await;
    }
    let number = e.pull.number;
    // Fresh state, as the trusted-external workflow reads it; the payload when unavailable.
    let live = match gh.get_pull(&e.repo, number).await {
        Ok(pull) => pull,
        Err(GitHubError::DryRun(_)) => e.pull.clone(),
        Err(err) => return Err(err.into()),
    };
    if live.state == "closed" {
        out.note(format!("#{number} is closed: nothing to do"));
        cancel_jobs(cfg, &e.repo, number, "the PR is closed", out).await;
        return Ok(());
    }
    if e.action == "edited" && !retargeted {
        // A title or description edit changes no file: only preflight reads the description.
        preflight::preflight(gh, cfg, &e.repo, &live, &e.action, out).await?;
        return Ok(());
    }
    // A head this PR now has may carry another PR's success (HT15).
    let claims_head = new_change || WELCOME_ACTIONS.contains(&e.action.as_str());
    let files = available(gh.list_pull_files(&e.repo, number).await)?;
    if let Some(files) = &files {
        out.reads.files = Some((change_key(&live), files.clone()));
    }
    let label_names = live.label_names();
    let mentions_sweep = label_names.iter().any(|l| is_sweep_label(l));
    if let Some(files) = &files {
        if !touches_benchmark_files(files) && !mentions_sweep {
            out.note(format!("#{number} does not touch benchmark files: no label decision"));
            if new_change || claims_head {
                // A sign-off verified at an earlier head or base still follows the new change.
                let comments = gh.list_issue_comments(&e.repo, number).await?;
                if new_change {
                    signoff::follow_head(gh, cfg, &e.repo, &live, &comments, retargeted, out).await?;
                }
                signoff::claim_shared_head(gh, cfg, &e.repo, &live, &comments, out).await?;
            }
            return Ok(());
        }
    }
    let comments = gh.list_issue_comments(&e.repo, number).await?;
    if WELCOME_ACTIONS.contains(&e.action.as_str()) {
        welcome(gh, cfg, &e.repo, &live, files.as_deref(), &comments, out).await?;
    }
    let decision = label_policy(gh, cfg, e, &live, files.as_deref(), &comments, out).await?;
    let sweep = decision.sweep;
    if e.action == RECONCILE_ACTION {
        signoff::repair(gh, cfg, &e.repo, &live, &comments, out).await?;
    }
    if new_change {
        // Every new head or base gets the sign-off status at once (ARCHITECTURE decision 3).
        signoff::follow_head(gh, cfg, &e.repo, &live, &comments, retargeted, out).await?;
    }
    if claims_head {
        signoff::claim_shared_head(gh, cfg, &e.repo, &live, &comments, out).await?;
    }
    // Authors see their would-be failures before a sign-off (issue 25 item 3).
    preflight::preflight(gh, cfg, &e.repo, &live, &e.action, out).await?;
    if sweep {
        start_sweep(cfg, e, &live, decision, out).await;
    }
    if !sweep && !new_change {
        cancel_jobs(cfg, &e.repo, number, "the PR no longer qualifies for a sweep", out).await;
    }
    cfg.verify.judged.judged(&e.repo, number, &live.head.sha, unchanged::JudgedChange::of(&live));
    Ok(())
}

/// Ends the PR's Slurm jobs when the bot is configured to; a failure is logged and noted, never
/// an error of the event (the label decision is already published).
async fn cancel_jobs(cfg: &BotConfig, repo: &RepoRef, pr: u64, why: &str, out: &mut Outcome) {
    cancel_sweeps(cfg, repo, pr, why, out).await;
    let Some(cancel) = cfg.slurm_cancel.clone() else { return };
    let full_name = repo.to_string();
    let job = tokio::task::spawn_blocking(move || {
        cancel_pull_request(&SlurmCli::default(), cancel.ledger.as_deref(), &full_name, pr)
    });
    match job.await {
        Ok(Ok(done)) if done.jobs.is_empty() && done.sweeps.is_empty() => {}
        Ok(Ok(done)) => out.note(format!(
            "{why}: cancelled {} Slurm job(s) and {} sweep(s) of #{pr} ({}*)",
            done.jobs.len(),
            done.sweeps.len(),
            done.prefix
        )),
        Ok(Err(e)) => {
            tracing::warn!(%repo, pr, error = %e, "cancelling the PR's Slurm jobs failed");
            out.note(format!("{why}: cancelling the Slurm jobs of #{pr} failed: {e}"));
        }
        Err(e) => out.note(format!("{why}: the Slurm cancel task failed: {e}")),
    }
}

/// `Ok(None)` for data that dry-run mode cannot read.
/// Starts the sweep of the PR's head on the server's pools (when configured).
async fn start_sweep(
    cfg: &BotConfig,
    e: &PullRequestEvent,
    pull: &PullRequest,
    decision: labels::LabelDecision,
    out: &mut Outcome,
) {
    let Some(service) = cfg.sweeps.clone() else { return };
    let (repo, installation, pr) = (e.repo.clone(), e.installation_id, pull.number);
    // Policy (the CI priority file) is read where the verifier reads it; unknown: at the base.
    let policy_branches = &cfg.verify.limits.policy_branches;
    let policy_branch = crate::evidence::collect::policy_branch(pull, policy_branches).unwrap_or_default().to_owned();
    let (base, head) = (pull.base.sha.clone(), pull.head.sha.clone());
    let labels: Vec<String> = pull.label_names().into_iter().map(str::to_owned).collect();
    let rerun_finished = e.action == "labeled";
    let job = tokio::task::spawn_blocking(move || {
        let (base_sha, policy_branch, head_sha, labels, decision) = (&base, &policy_branch, &head, &labels, &decision);
        service.start(&SweepRequest {
            repo: &repo,
            installation,
            pr,
            base_sha,
            policy_branch,
            head_sha,
            labels,
            decision,
            rerun_finished,
        })
    });
    match job.await {
        Ok(line) => out.note(line),
        Err(e) => out.note(format!("the sweep start task failed: {e}")),
    }
}

/// Cancels the PR's server-run sweeps (when configured), the same way as `cancel_jobs`.
async fn cancel_sweeps(cfg: &BotConfig, repo: &RepoRef, pr: u64, why: &str, out: &mut Outcome) {
    let Some(service) = cfg.sweeps.clone() else { return };
    let repo = repo.clone();
    match tokio::task::spawn_blocking(move || service.cancel(&repo, pr)).await {
        Ok(Ok(done)) if done.jobs.is_empty() && done.sweeps.is_empty() => {}
        Ok(Ok(done)) => {
            out.note(format!("{why}: cancelled {} sweep(s), {} Slurm job(s)", done.sweeps.len(), done.jobs.len()))
        }
        Ok(Err(e)) => out.note(format!("{why}: cancelling the sweeps of #{pr} failed: {e}")),
        Err(e) => out.note(format!("{why}: the sweep cancel task failed: {e}")),
    }
}

fn available<T>(result: Result<T, GitHubError>) -> Result<Option<T>, GitHubError> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(GitHubError::DryRun(_)) => Ok(None),
        Err(err) => Err(err),
    }
}

fn is_sweep_label(label: &str) -> bool {
    Primary::ALL.iter().any(|p| p.name() == label) || Modifier::ALL.iter().any(|m| m.name() == label)
}

fn is_changelog(path: &str) -> bool {
    Logical::Changelog.default_candidates().contains(&path)
}

/// Benchmark content in either layout: the changelog, configs, benchmarks, or anything under
/// `inferencex-e2e/`.
pub fn touches_benchmark_files(files: &[PullFile]) -> bool {
    let hit = |p: &str| {
        is_changelog(p)
            || Logical::ConfigsDir.default_candidates().iter().any(|d| p.starts_with(&format!("{d}/")))
            || p.starts_with("benchmarks/")
            || p.starts_with("inferencex-e2e/")
    };
    files.iter().any(|f| hit(&f.filename) || f.previous_filename.as_deref().is_some_and(hit))
}

/// The PR appends to the changelog: the file is in the diff with added lines. (Whether the
/// additions are a valid append is the changelog validator's job.)
fn appends_changelog(files: &[PullFile]) -> bool {
    files.iter().any(|f| is_changelog(&f.filename) && f.additions > 0 && f.status != "removed")
}

/// The pull request a handler writes to.
struct Target<'a> {
    repo: &'a RepoRef,
    number: u64,
}

/// Creates the marked comment, or edits the bot's existing one when its text changed.
async fn upsert<G: GitHub>(
    gh: &G,
    bot_login: &str,
    target: Target<'_>,
    comments: &[Comment],
    marker: &Marker,
    body: &str,
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let Target { repo, number: issue } = target;
    let find = Marker { kind: marker.kind.clone(), fields: vec![("pr".into(), issue.to_string())] };
    let thread = Thread { repo, issue, bot_login };
    match sticky::upsert(gh, thread, comments, &find, marker, body).await? {
        Upserted::Unchanged(id) => out.note(format!("{} comment {id} unchanged", marker.kind)),
        Upserted::Edited(id) => out.note(format!("edited {} comment {id}", marker.kind)),
        Upserted::Created(id) => out.note(format!("posted {} comment {id}", marker.kind)),
    }
    Ok(())
}

async fn welcome<G: GitHub>(
    gh: &G,
    cfg: &BotConfig,
    repo: &RepoRef,
    pull: &PullRequest,
    files: Option<&[PullFile]>,
    comments: &[Comment],
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let marker = Marker::new("welcome").with("pr", pull.number);
    if let Some((c, _)) = find_own(comments, &cfg.bot_login, &marker) {
        out.note(format!("welcome comment {} already posted", c.id));
        return Ok(());
    }
    let newer_layout = files.is_some_and(|f| f.iter().any(|f| f.filename.starts_with("inferencex-e2e/")));
    let [changelog_path, checklist_path] = if newer_layout {
        ["inferencex-e2e/perf-changelog.yaml", "inferencex-e2e/docs/PR_REVIEW_CHECKLIST.md"]
    } else {
        ["perf-changelog.yaml", "docs/PR_REVIEW_CHECKLIST.md"]
    };
    let body = render_bilingual(
        "welcome",
        &json!({"changelog_path": changelog_path, "checklist_path": checklist_path, "fork": pull.is_fork()}),
    )?;
    let c = gh.create_issue_comment(repo, pull.number, &with_marker(&marker, &body)).await?;
    out.note(format!("posted welcome comment {}", c.id));
    Ok(())
}

/// A fact dry-run mode could not read, named in both languages (`[en, zh]`).
fn unavailable_reason([en, zh]: [&str; 2]) -> Reason {
    Reason {
        code: "facts-unavailable",
        en: format!("Could not read {en}: dry-run mode has no GitHub credentials, so this is not decided."),
        zh: format!("无法读取{zh}：演练模式（`dry-run`）没有 GitHub 凭据，因此无法作出决定。"),
        blocking: true,
    }
}

/// Posts `status` on `sha` unless the newest status of its context there already says the
/// same (GitHub keeps at most 1000 statuses per commit and context). Returns whether it posted.
/// When the statuses cannot be read, it posts: a repeated status is harmless, a missing one
/// leaves the gate undecided.
pub(crate) async fn post_status<G: GitHub>(
    gh: &G,
    repo: &RepoRef,
    sha: &str,
    status: &StatusInput,
) -> Result<bool, GitHubError> {
    let current = match gh.list_commit_statuses(repo, sha).await {
        Ok(list) => list.into_iter().find(|s| s.context == status.context),
        Err(GitHubError::DryRun(_)) => None,
        Err(err) => {
            tracing::warn!(%repo, sha, "reading the commit's statuses failed; posting anyway: {err}");
            None
        }
    };
    // The client cuts descriptions at 140 characters; compare what GitHub stored.
    let description: String = status.description.chars().take(140).collect();
    if current.is_some_and(|c| c.state == status.state && c.description.as_deref().unwrap_or("") == description) {
        return Ok(false);
    }
    gh.create_status(repo, sha, status).await?;
    Ok(true)
}

async fn label_policy<G: GitHub>(
    gh: &G,
    cfg: &BotConfig,
    e: &PullRequestEvent,
    pull: &PullRequest,
    files: Option<&[PullFile]>,
    comments: &[Comment],
    out: &mut Outcome,
) -> Result<labels::LabelDecision, HandlerError> {
    let number = pull.number;
    let head_sha = pull.head.sha.clone();
    let commits = available(gh.list_pull_commits(&e.repo, number).await)?;
    let head_message =
        commits.as_ref().and_then(|cs| cs.iter().find(|c| c.sha == head_sha)).map(|c| c.commit.message.clone());

    let previous = find_own(comments, &cfg.bot_login, &Marker::new("labels").with("pr", number)).map(|(_, m)| m);
    let mut approved_sha = previous.as_ref().and_then(|m| m.get("approved")).map(str::to_string);
    let mut labeler_permission = approved_sha.as_ref().map(|_| Permission::Write);
    if pull.is_fork() {
        let primary_event = e.label.as_deref().is_some_and(|l| Primary::ALL.iter().any(|p| p.name() == l));
        if primary_event && e.action == "labeled" {
            let permission = match e.sender.as_ref().filter(|s| User::is_person(Some(s))) {
                Some(labeler) => available(gh.collaborator_permission(&e.repo, &labeler.login).await)?,
                None => Some(Permission::None),
            };
            // The labeler reviewed the head in the payload: that commit is what the label
            // approves, and only while it is still the live head (labels::decide says "stale"
            // otherwise). An older label event (a late delivery, a replayed body) never
            // revokes an approval that already covers the live head.
            let seen = &e.pull.head.sha;
            let covers_live = approved_sha.as_deref() == Some(head_sha.as_str());
            if *seen == head_sha || !covers_live {
                labeler_permission = permission;
                approved_sha = permission.filter(|p| p.can_write()).map(|_| seen.clone());
            } else {
                out.note(format!(
                    "label event for {} is older than the approved head {}: ignored",
                    short(seen),
                    short(&head_sha)
                ));
            }
        } else if primary_event && e.action == "unlabeled" {
            (approved_sha, labeler_permission) = (None, None);
        }
    }
    let facts = PrFacts {
        draft: pull.draft,
        fork: pull.is_fork(),
        changelog_appended: files.is_some_and(appends_changelog),
        head_message,
        labeler_permission,
        approved_sha: approved_sha.clone(),
        head_sha: Some(head_sha.clone()),
    };
    let mut decision = labels::decide(&pull.label_names(), &facts);
    if files.is_none() {
        decision.reasons.retain(|r| r.code != "no-changelog-append");
        decision.block(unavailable_reason(["the PR's files", "本 PR 的文件"]));
    }
    if commits.is_none() {
        decision.block(unavailable_reason(["the PR's commits", "本 PR 的提交"]));
    }
    let body = render_bilingual("labels", &json!({"decision": decision, "head_sha": head_sha}))?;
    let mut marker = Marker::new("labels").with("pr", number);
    if let Some(sha) = approved_sha.filter(|_| pull.is_fork()) {
        marker = marker.with("approved", sha);
    }
    upsert(gh, &cfg.bot_login, Target { repo: &e.repo, number }, comments, &marker, &body, out).await?;

    let description = match decision.reasons.iter().find(|r| r.blocking) {
        None => format!("sweep: {}", decision.primary.map_or("none", Primary::name)),
        Some(r) => format!("no sweep: {}", r.code),
    };
    let status = StatusInput {
        state: if decision.sweep { StatusState::Success } else { StatusState::Failure },
        context: cfg.status_context.clone(),
        description,
        target_url: cfg.verify.details.as_ref().map(|d| d.url(&e.repo, number)),
    };
    let posted = post_status(gh, &e.repo, &head_sha, &status).await?;
    let skip_sweep = decision.reasons.iter().any(|r| r.code == "skip-sweep");
    let labels = unchanged::PostedLabels {
        status: unchanged::PostedStatus { state: status.state, description: status.description.clone() },
        skip_sweep,
    };
    cfg.verify.judged.posted(&e.repo, number, &head_sha, unchanged::Posted::Labels(labels));
    cfg.verify.details.iter().for_each(|d| d.record_label(&e.repo, number, &head_sha, &decision));
    let unchanged = if posted { "" } else { " (unchanged)" };
    out.note(format!("status {} {:?}: {}{unchanged}", short(&head_sha), status.state, status.description));
    out.decision = Some(if decision.sweep { "sweep" } else { "no-sweep" });
    Ok(decision)
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

fn reject(code: &'static str, en: String, zh: String) -> Reason {
    Reason { code, en, zh, blocking: true }
}

/// Artifacts that make a run reusable (spec 10 §6.3).
fn is_results_artifact(name: &str) -> bool {
    name == "results_bmk" || name == "eval_results_all" || name.starts_with("bmk_agentic_")
}

/// A reuse grant covers the head the maintainer saw (issue 14 item 3): the refusal when the
/// PR's head repository was pushed at or after the command's time, or when GitHub does not say
/// when it was pushed (a deleted head repository). Both times are GitHub's own clock; a push to
/// another branch of the head repository also refuses (fail closed: the reply asks to re-post).
fn pushed_after_command(pull: &PullRequest, commanded_at: chrono::DateTime<chrono::Utc>) -> Option<Reason> {
    let sha = short(&pull.head.sha);
    let at = |t: chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%d %H:%M:%S UTC").to_string();
    match pull.head.repo.as_ref().and_then(|r| r.pushed_at) {
        Some(pushed) if pushed < commanded_at => None,
        Some(pushed) => Some(reject(
            "stale-command",
            format!(
                "The PR's head was pushed at {} (now `{sha}`), after this command ({}): it may cover a commit nobody reviewed. Re-post the command after reviewing `{sha}`.",
                at(pushed),
                at(commanded_at)
            ),
            format!(
                "本 PR 的头分支在 {}（现为 `{sha}`）有推送，晚于此命令（{}）：命令可能覆盖了未经审阅的提交。请审阅 `{sha}` 后重新发布命令。",
                at(pushed),
                at(commanded_at)
            ),
        )),
        None => Some(reject(
            "head-push-time-unknown",
            format!("GitHub does not say when the PR's head repository was last pushed (it may be deleted), so it cannot be shown that `{sha}` is the head this command was posted for."),
            format!("GitHub 未提供本 PR 头仓库的最近推送时间（该仓库可能已被删除），因此无法证明 `{sha}` 就是发布此命令时的头提交。"),
        )),
    }
}

/// Checks a pinned source run (spec 10 §3.6 step 6). Every failing rule is reported.
pub fn validate_pinned_run(
    run: &WorkflowRun,
    artifact_names: &[(String, bool)],
    pr_commits: &[String],
    sweep_workflow: &str,
) -> Vec<Reason> {
    let id = run.id;
    let mut reasons = Vec::new();
    let expected_path = format!(".github/workflows/{sweep_workflow}");
    if !(run.path.is_empty() || run.path == expected_path || run.path.starts_with(&format!("{expected_path}@"))) {
        reasons.push(reject(
            "run-wrong-workflow",
            format!("Run {id} is from {}, expected `{expected_path}`.", crate::escape::code(&run.path)),
            format!("运行 {id} 来自 {}，应为 `{expected_path}`。", crate::escape::code(&run.path)),
        ));
    }
    if run.event != "pull_request" {
        reasons.push(reject(
            "run-not-pull-request",
            format!("Run {id} is not a pull_request run."),
            format!("运行 {id} 不是 `pull_request` 事件的运行。"),
        ));
    }
    if run.status.as_deref() != Some("completed") {
        reasons.push(reject(
            "run-not-completed",
            format!("Run {id} is not completed."),
            format!("运行 {id} 尚未完成。"),
        ));
    } else if !matches!(run.conclusion.as_deref(), Some("success" | "failure" | "cancelled")) {
        let c = run.conclusion.as_deref().unwrap_or("none");
        reasons.push(reject(
            "run-conclusion",
            format!("Run {id} has conclusion `{c}`; expected success, failure, or cancelled."),
            format!("运行 {id} 的结论为 `{c}`；应为 `success`、`failure` 或 `cancelled`。"),
        ));
    }
    if run.head_sha.is_empty() || !pr_commits.contains(&run.head_sha) {
        let sha = short(&run.head_sha);
        reasons.push(reject(
            "run-head-not-in-pr",
            format!("Run {id} head `{sha}` is not in this PR's commit list; pin a run whose commit is still part of the PR."),
            format!("运行 {id} 的头提交 `{sha}` 不在本 PR 的提交列表中；请指定一个提交仍属于本 PR 的运行。"),
        ));
    }
    if !artifact_names.iter().any(|(name, expired)| !expired && is_results_artifact(name)) {
        reasons.push(reject(
            "no-results-artifact",
            format!("Run {id} has no unexpired benchmark, eval, or agentic result artifact (`results_bmk`, `eval_results_all`, `bmk_agentic_*`)."),
            format!("运行 {id} 没有未过期的基准、评测或智能体结果产物（`results_bmk`、`eval_results_all`、`bmk_agentic_*`）。"),
        ));
    }
    reasons
}

async fn issue_comment<G: GitHub>(
    gh: &G,
    cfg: &BotConfig,
    e: &CommentEvent,
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let is_bot = e.comment.user.as_ref().is_some_and(|u| u.login.eq_ignore_ascii_case(&cfg.bot_login));
    if is_bot || !User::is_person(e.comment.user.as_ref()) {
        out.note(format!("comment {} is not by a person (a bot or a deleted account): ignored", e.comment.id));
        return Ok(());
    }
    let now = command::scan(&e.comment.body);
    let before = e.previous_body.as_deref().map(command::scan);
    if before.as_ref() == Some(&now) {
        out.note(format!("comment {} edited without changing its command", e.comment.id));
        return Ok(());
    }
    let command = match now {
        // An edit that removed the command withdraws its answer (InferenceX #3192).
        Scan::Nothing if before.is_some() => {
            out.note(format!("comment {} no longer holds a command", e.comment.id));
            return clear_reactions(gh, cfg, e, &["+1", "-1"], out).await;
        }
        Scan::Nothing => {
            out.note(format!("comment {} has no command", e.comment.id));
            return Ok(());
        }
        Scan::Malformed(errors) => {
            let reasons: Vec<Reason> =
                errors.iter().map(|err| reject("malformed-command", err.en(), err.zh())).collect();
            let shown = first_command_line(&e.comment.body);
            return reply(gh, cfg, e, &shown, Verdict::Rejected(&reasons), out).await;
        }
        Scan::Command(command) => command,
    };
    let shown = command.to_string();
    if !command::association_may_command(&e.comment.author_association) {
        let assoc = crate::escape::inline(&e.comment.author_association);
        let reasons = [reject(
            "unauthorized",
            format!("Only repository owners, organization members and collaborators may authorize reuse; the author is {assoc}."),
            format!("只有仓库所有者、组织成员和协作者可以授权复用；作者的身份为 {assoc}。"),
        )];
        return reply(gh, cfg, e, &shown, Verdict::Rejected(&reasons), out).await;
    }
    // What the maintainer saw: the PR as it was when the comment was posted (or last edited).
    let commanded_at = if e.action == "edited" { e.comment.updated_at } else { e.comment.created_at };
    let checked = match validate_command(gh, cfg, (&e.repo, e.issue_number), command, commanded_at).await {
        Err(HandlerError::GitHub(GitHubError::DryRun(_))) => {
            Err(vec![unavailable_reason(["the PR and the named run", "本 PR 及所指定的运行"])])
        }
        other => other?,
    };
    match checked {
        Ok(run) => reply(gh, cfg, e, &shown, Verdict::Accepted(&run), out).await,
        Err(reasons) => reply(gh, cfg, e, &shown, Verdict::Rejected(&reasons), out).await,
    }
}

fn first_command_line(body: &str) -> String {
    body.lines()
        .map(str::trim)
        .find(|l| l.starts_with("/use") || l.starts_with("/reuse-sweep-run"))
        .unwrap_or("/use")
        .to_string()
}

/// The run a reuse command was accepted for: a workflow run or a sweepgate sweep.
struct AcceptedRun {
    /// The run id, or the sweep id.
    id: String,
    url: String,
    head_sha: String,
    /// The conclusion of a pinned run that did not succeed (`failure`, `cancelled`): its
    /// available artifacts are reused, a partial source, never a passing sweep (#2986).
    partial: Option<String>,
}

impl AcceptedRun {
    fn of(run: &WorkflowRun) -> AcceptedRun {
        let partial = run.conclusion.clone().filter(|c| c != "success");
        AcceptedRun { id: run.id.to_string(), url: run.html_url.clone(), head_sha: run.head_sha.clone(), partial }
    }
}

/// A pinned sweepgate sweep is reusable when this server's results store holds it, for this PR,
/// concluded `success`, on a commit of the PR (decision L8).
fn validate_sweep(
    cfg: &BotConfig,
    repo: &RepoRef,
    number: u64,
    sweep: command::SweepRef,
    commits: &[String],
) -> Result<AcceptedRun, Vec<Reason>> {
    let options = &cfg.verify.limits.sweeps;
    let found = options.results_dir.as_ref().map(|dir| {
        crate::sweep::results_store::ResultsStore::open(dir).and_then(|store| store.load(&sweep.to_string()))
    });
    let stored = match found {
        Some(Ok(stored)) => stored,
        None | Some(Err(_)) => {
            return Err(vec![reject(
                "run-not-found",
                format!("Sweep {sweep} was not found in this server's results store."),
                format!("在本服务器的结果库中找不到扫描 {sweep}。"),
            )])
        }
    };
    let mut reasons = Vec::new();
    if !stored.repo.eq_ignore_ascii_case(&repo.to_string()) || stored.pr != number {
        let other = format!("{}#{}", stored.repo, stored.pr);
        reasons.push(reject(
            "sweep-of-another-pr",
            format!("Sweep {sweep} ran for {other}, not this PR."),
            format!("扫描 {sweep} 属于 {other}，不是本 PR。"),
        ));
    }
    if stored.conclusion != "success" {
        let c = &stored.conclusion;
        reasons.push(reject(
            "not-successful",
            format!("Sweep {sweep} concluded {c}, not success."),
            format!("扫描 {sweep} 的结论为 {c}，不是 success。"),
        ));
    }
    if !commits.contains(&stored.head_sha) {
        reasons.push(reject(
            "not-in-pr",
            format!("Sweep {sweep} ran on {}, which is not in this PR's commit list.", short(&stored.head_sha)),
            format!("扫描 {sweep} 运行于 {}，该提交不在本 PR 的提交列表中。", short(&stored.head_sha)),
        ));
    }
    if !reasons.is_empty() {
        return Err(reasons);
    }
    let url = cfg.verify.details.as_ref().map(|d| d.url(repo, number)).unwrap_or_default();
    Ok(AcceptedRun { id: sweep.to_string(), url, head_sha: stored.head_sha, partial: None })
}

/// Resolves and validates the source run: `Ok(run)` or the reasons it cannot be reused.
async fn validate_command<G: GitHub>(
    gh: &G,
    cfg: &BotConfig,
    (repo, number): (&RepoRef, u64),
    command: ReuseCommand,
    commanded_at: chrono::DateTime<chrono::Utc>,
) -> Result<Result<AcceptedRun, Vec<Reason>>, HandlerError> {
    let pull = gh.get_pull(repo, number).await?;
    if let Some(stale) = pushed_after_command(&pull, commanded_at) {
        return Ok(Err(vec![stale]));
    }
    let blocking: Vec<&str> = pull
        .label_names()
        .into_iter()
        .filter(|l| Modifier::ALL.iter().any(|m| m.blocks_reuse() && m.name() == *l))
        .collect();
    if !blocking.is_empty() {
        let list = blocking.iter().map(|l| format!("`{l}`")).collect::<Vec<_>>().join(", ");
        return Ok(Err(vec![reject(
            "reuse-incompatible-label",
            match blocking.as_slice() {
                [_] => format!("This PR carries {list}, which blocks artifact reuse; remove it first."),
                _ => format!("This PR carries {list}, which block artifact reuse; remove them first."),
            },
            format!("本 PR 带有 {list}，会阻止产物复用；请先移除。"),
        )]));
    }
    let commits: Vec<String> = gh.list_pull_commits(repo, number).await?.into_iter().map(|c| c.sha).collect();
    match command.run_id {
        Some(id) => {
            let Some(run) = gh.get_workflow_run(repo, id).await? else {
                return Ok(Err(vec![reject(
                    "run-not-found",
                    format!("Run {id} was not found in this repository."),
                    format!("在本仓库中找不到运行 {id}。"),
                )]));
            };
            let artifacts = artifact_flags(gh, repo, id).await?;
            let reasons = validate_pinned_run(&run, &artifacts, &commits, &cfg.sweep_workflow);
            Ok(if reasons.is_empty() { Ok(AcceptedRun::of(&run)) } else { Err(reasons) })
        }
        None if command.sweep.is_some() => {
            Ok(command.sweep.map_or(Err(Vec::new()), |sweep| validate_sweep(cfg, repo, number, sweep, &commits)))
        }
        None => {
            let query = RunQuery {
                event: Some("pull_request".into()),
                branch: Some(pull.head.ref_name.clone()),
                status: Some("completed".into()),
            };
            let runs = gh.list_workflow_runs(repo, &cfg.sweep_workflow, &query).await?;
            let candidates = runs
                .into_iter()
                .filter(|r| r.conclusion.as_deref() == Some("success") && commits.contains(&r.head_sha))
                .take(20);
            for run in candidates {
                let artifacts = artifact_flags(gh, repo, run.id).await?;
                if artifacts.iter().any(|(name, expired)| !expired && is_results_artifact(name)) {
                    return Ok(Ok(AcceptedRun::of(&run)));
                }
            }
            let k = commits.len();
            Ok(Err(vec![reject(
                "no-eligible-run",
                format!("No successful `{}` pull_request run with a result artifact was found for any of this PR's {k} commit(s); pin a specific run with `/use <run_id>`.", cfg.sweep_workflow),
                format!("在本 PR 的 {k} 个提交中找不到成功且带结果产物的 `{}` 的 `pull_request` 事件运行；请用 `/use <run_id>` 指定运行。", cfg.sweep_workflow),
            )]))
        }
    }
}

async fn artifact_flags<G: GitHub>(gh: &G, repo: &RepoRef, run_id: u64) -> Result<Vec<(String, bool)>, GitHubError> {
    Ok(gh.list_run_artifacts(repo, run_id).await?.into_iter().map(|a| (a.name, a.expired)).collect())
}

/// The answer to one command.
enum Verdict<'a> {
    Accepted(&'a AcceptedRun),
    Rejected(&'a [Reason]),
}

/// Check run that carries the reasons of the last reuse answer on the PR's head.
const REUSE_CHECK: &str = "sweepgate/reuse";
const REUSE_EXTERNAL_ID: &str = "sweepgate-reuse";
/// Most characters of the command shown in the check run's title.
const MAX_TITLE_COMMAND_CHARS: usize = 80;

/// Answers a command as upstream does (InferenceX #2986): a 👍 or 👎 reaction on the command
/// comment, and the reasons in a check run on the PR's head and in the outcome (the Action's
/// job summary); no comment is posted. Which command is in force is read from the command
/// comments themselves ([`command::resolve`]), so no record of the bot's is needed.
async fn reply<G: GitHub>(
    gh: &G,
    cfg: &BotConfig,
    e: &CommentEvent,
    shown: &str,
    verdict: Verdict<'_>,
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    // The comment is read again before it is answered (#2986): a later edit, whose own event
    // answers it, or a deletion leaves this older event without an answer.
    let id = e.comment.id;
    match gh.get_signoff_resource(&e.repo, e.issue_number, SignoffKind::ConversationComment, id).await {
        Ok(current) if command::scan(current.body.as_deref().unwrap_or("")) != command::scan(&e.comment.body) => {
            out.note(format!("comment {id} changed since this event: its own event answers the new text"));
            return Ok(());
        }
        Ok(_) | Err(GitHubError::DryRun(_)) => {}
        Err(err) if err.is_not_found() => {
            out.note(format!("comment {id} was deleted: nothing to answer"));
            return Ok(());
        }
        Err(err) => return Err(err.into()),
    }
    let reaction = match verdict {
        Verdict::Accepted(..) => Reaction::ThumbsUp,
        Verdict::Rejected(_) => Reaction::ThumbsDown,
    };
    gh.add_reaction(&e.repo, e.comment.id, reaction).await?;
    out.note(format!("reacted {reaction:?} on comment {}", e.comment.id));
    if e.action == "edited" {
        // A re-validated command keeps only the current answer.
        let stale = match reaction {
            Reaction::ThumbsUp => "-1",
            _ => "+1",
        };
        clear_reactions(gh, cfg, e, &[stale], out).await?;
    }
    let author = User::login_of(e.comment.user.as_ref());
    let context = match verdict {
        Verdict::Accepted(run) => json!({
            "accepted": true, "command": shown, "author": author,
            "association": e.comment.author_association, "run_id": run.id,
            "run_url": run.url, "run_sha": short(&run.head_sha), "partial": run.partial,
        }),
        Verdict::Rejected(reasons) => {
            // What stays in force: the newest authorized command of another comment (a refused
            // unauthorized or malformed command neither erases nor replaces it).
            // Whether it was accepted is the bot's own 👍 on it (the reaction is the record).
            let comments = gh.list_issue_comments(&e.repo, e.issue_number).await?;
            let mut in_force = None;
            if let Some(auth) = newest_authorized(&comments, &cfg.bot_login).filter(|a| a.comment_id != e.comment.id) {
                let reactions = gh.list_reactions(&e.repo, auth.comment_id).await?;
                let accepted =
                    reactions.iter().any(|r| r.content == "+1" && r.user.login.eq_ignore_ascii_case(&cfg.bot_login));
                let run_id = auth.command.run_id;
                in_force = Some(json!({
                    "command": auth.command.to_string(),
                    "comment_id": auth.comment_id,
                    "accepted": accepted,
                    "run_id": run_id,
                    "run_url": run_id.map(|id| format!("https://github.com/{}/actions/runs/{id}", e.repo)),
                }));
            }
            // Never suggest a command to someone who cannot run it.
            let hint = !reasons.iter().any(|r| r.code == "unauthorized");
            json!({"accepted": false, "command": shown, "author": author, "reasons": reasons, "hint": hint, "in_force": in_force})
        }
    };
    // A malformed comment's reasons quote its lines: bounded like every check-run summary.
    let summary = preflight::bounded(render_bilingual("reuse", &context)?);
    out.reuse = Some(summary.clone());
    // The title is plain text; a malformed command line is the author's, so it is cut short.
    let shown = match shown.char_indices().nth(MAX_TITLE_COMMAND_CHARS) {
        Some((cut, _)) => format!("{}…", &shown[..cut]),
        None => shown.to_owned(),
    };
    let (conclusion, title) = match verdict {
        Verdict::Accepted(_) => ("success", format!("👍 {shown} accepted / 已接受")),
        // Advisory (Check 4 only WARNs without a command): a refusal never blocks a merge.
        Verdict::Rejected(_) => ("neutral", format!("👎 {shown} not accepted / 未接受")),
    };
    reuse_check_run(gh, e, conclusion, title, summary, out).await
}

/// Removes the bot's own `contents` reactions from the command comment (a human's stay).
async fn clear_reactions<G: GitHub>(
    gh: &G,
    cfg: &BotConfig,
    e: &CommentEvent,
    contents: &[&str],
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    for old in gh.list_reactions(&e.repo, e.comment.id).await? {
        if contents.contains(&old.content.as_str()) && old.user.login.eq_ignore_ascii_case(&cfg.bot_login) {
            gh.delete_reaction(&e.repo, e.comment.id, old.id).await?;
            out.note(format!("removed stale {} on comment {}", old.content, e.comment.id));
        }
    }
    Ok(())
}

/// Writes the answer's check run on the PR's head, edited in place for the next answer. A
/// token that may not write check runs (an Action's) leaves the answer in the job summary only.
async fn reuse_check_run<G: GitHub>(
    gh: &G,
    e: &CommentEvent,
    conclusion: &str,
    title: String,
    summary: String,
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    let head = match gh.get_pull(&e.repo, e.issue_number).await {
        Ok(pull) => pull.head.sha,
        Err(GitHubError::DryRun(_)) => return Ok(()),
        Err(err) => return Err(err.into()),
    };
    let existing = match sticky::own_check_run(gh, &e.repo, &head, REUSE_CHECK, REUSE_EXTERNAL_ID).await {
        Ok(run) => run,
        Err(err @ GitHubError::Http { status: 403, .. }) => {
            out.note(format!("reuse check run not readable ({err}): the answer is only in the outcome"));
            return Ok(());
        }
        Err(err) => return Err(err.into()),
    };
    let input = CheckRunInput {
        name: REUSE_CHECK.into(),
        head_sha: head.clone(),
        status: "completed".into(),
        conclusion: Some(conclusion.into()),
        details_url: None,
        external_id: Some(REUSE_EXTERNAL_ID.into()),
        output: CheckRunOutput { title, summary, text: String::new() },
    };
    match sticky::write_check_run(gh, &e.repo, existing.as_ref(), &input).await {
        Ok(()) => out.note(format!("reuse check run on {}: {conclusion}", short(&head))),
        Err(err @ GitHubError::Http { status: 403, .. }) => {
            out.note(format!("reuse check run not written ({err}): the answer is only in the outcome"))
        }
        Err(err) => return Err(err.into()),
    }
    Ok(())
}

/// The newest authorized reuse command among the PR's comments (decision I2; RV6).
fn newest_authorized(comments: &[Comment], bot_login: &str) -> Option<command::Authorization> {
    let views: Vec<CommentView<'_>> = comments
        .iter()
        .map(|c| CommentView {
            id: c.id,
            author: User::login_of(c.user.as_ref()),
            author_association: &c.author_association,
            body: &c.body,
            created_at: c.created_at,
        })
        .collect();
    command::resolve(&views, bot_login)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(path: &str, event: &str, status: &str, conclusion: Option<&str>, sha: &str) -> WorkflowRun {
        WorkflowRun {
            id: 5,
            name: None,
            path: path.into(),
            event: event.into(),
            status: Some(status.into()),
            conclusion: conclusion.map(Into::into),
            head_sha: sha.into(),
            head_branch: None,
            html_url: String::new(),
            run_attempt: None,
        }
    }

    fn codes(reasons: &[Reason]) -> Vec<&'static str> {
        reasons.iter().map(|r| r.code).collect()
    }

    #[test]
    fn a_pinned_sweep_must_be_stored_for_this_pr_successful_and_in_it() {
        use crate::sweep::results_store::{ResultsStore, StoredSweep};
        let dir = tempfile::tempdir().unwrap();
        let store = ResultsStore::open(dir.path()).unwrap();
        let stored = |id: &str, pr: u64, conclusion: &str| StoredSweep {
            sweep_id: id.into(),
            repo: "o/r".into(),
            pr,
            head_sha: "abcdef0123".repeat(4),
            conclusion: conclusion.into(),
            completed_at: String::new(),
            points: vec![],
        };
        store.store(stored("pr4-abcdef0123-a1", 4, "success"), &[]).unwrap();
        store.store(stored("pr4-abcdef0123-a2", 5, "failure"), &[]).unwrap();
        let mut cfg = BotConfig::default();
        let repo = RepoRef::parse("o/r").unwrap();
        let sweep = |id: &str| command::SweepRef::parse(id).unwrap();
        let commits = vec!["abcdef0123".repeat(4)];
        let check = |cfg: &BotConfig, id: &str, commits: &[String]| validate_sweep(cfg, &repo, 4, sweep(id), commits);
        assert_eq!(codes(&check(&cfg, "pr4-abcdef0123-a1", &commits).err().unwrap()), ["run-not-found"], "no store");
        cfg.verify.limits.sweeps.results_dir = Some(dir.path().to_path_buf());
        let accepted = check(&cfg, "pr4-abcdef0123-a1", &commits).ok().unwrap();
        assert_eq!((accepted.id.as_str(), accepted.head_sha.len()), ("pr4-abcdef0123-a1", 40));
        assert_eq!(codes(&check(&cfg, "pr4-abcdef0123-a9", &commits).err().unwrap()), ["run-not-found"]);
        assert_eq!(
            codes(&check(&cfg, "pr4-abcdef0123-a2", &[]).err().unwrap()),
            ["sweep-of-another-pr", "not-successful", "not-in-pr"]
        );
    }

    #[test]
    fn a_good_pinned_run_passes_with_failure_or_cancelled_conclusions() {
        let commits = vec!["abc".to_string()];
        let artifacts = vec![("results_bmk".to_string(), false)];
        for conclusion in ["success", "failure", "cancelled"] {
            let r = run(".github/workflows/run-sweep.yml", "pull_request", "completed", Some(conclusion), "abc");
            assert!(validate_pinned_run(&r, &artifacts, &commits, "run-sweep.yml").is_empty());
        }
    }

    #[test]
    fn every_broken_rule_is_reported() {
        let r = run(".github/workflows/e2e-tests.yml", "workflow_dispatch", "in_progress", None, "zzz");
        let reasons = validate_pinned_run(&r, &[("results_bmk".into(), true)], &["abc".into()], "run-sweep.yml");
        assert_eq!(
            codes(&reasons),
            [
                "run-wrong-workflow",
                "run-not-pull-request",
                "run-not-completed",
                "run-head-not-in-pr",
                "no-results-artifact"
            ]
        );
        let skipped = run("", "pull_request", "completed", Some("skipped"), "abc");
        let agentic = [("bmk_agentic_x".to_string(), false)];
        assert_eq!(
            codes(&validate_pinned_run(&skipped, &agentic, &["abc".into()], "run-sweep.yml")),
            ["run-conclusion"]
        );
    }

    #[test]
    fn a_reuse_grant_needs_the_head_pushed_before_the_command() {
        let pull = |pushed_at: Option<&str>| -> PullRequest {
            let repo = match pushed_at {
                Some(t) => json!({"full_name": "o/r", "pushed_at": t}),
                None => serde_json::Value::Null,
            };
            serde_json::from_value(json!({
                "number": 1, "head": {"sha": "a".repeat(40), "repo": repo},
                "base": {"sha": "b".repeat(40), "repo": {"full_name": "o/r"}}
            }))
            .unwrap()
        };
        let at = |t: &str| chrono::DateTime::parse_from_rfc3339(t).unwrap().to_utc();
        let command = at("2026-09-01T10:00:00Z");
        assert!(pushed_after_command(&pull(Some("2026-09-01T09:59:59Z")), command).is_none());
        for later in ["2026-09-01T10:00:00Z", "2026-09-01T10:00:01Z"] {
            let reason = pushed_after_command(&pull(Some(later)), command).unwrap();
            assert_eq!(reason.code, "stale-command", "{later}: a push in the same second is not before");
            assert!(reason.en.contains("`aaaaaaaaaaaa`") && reason.zh.contains("重新发布"), "{}", reason.en);
        }
        assert_eq!(pushed_after_command(&pull(None), command).unwrap().code, "head-push-time-unknown");
    }

    #[test]
    fn benchmark_files_in_both_layouts() {
        let file = |name: &str| PullFile {
            filename: name.into(),
            status: "modified".into(),
            additions: 1,
            deletions: 0,
            previous_filename: None,
            patch: None,
        };
        assert!(touches_benchmark_files(&[file("perf-changelog.yaml")]));
        assert!(touches_benchmark_files(&[file("inferencex-e2e/configs/amd-master.yaml")]));
        assert!(touches_benchmark_files(&[file("configs/nvidia-master.yaml")]));
        assert!(!touches_benchmark_files(&[file("README.md"), file("configsX/a")]));
        assert!(appends_changelog(&[file("inferencex-e2e/perf-changelog.yaml")]));
        assert!(!appends_changelog(&[PullFile { additions: 0, ..file("perf-changelog.yaml") }]));
    }
}
