//! Preflight for authors (issue 25 item 3, docs/decisions.md HG5): on a push of a PR that
//! touches benchmark files, the check run `sweepgate/preflight` on the head lists what would
//! FAIL among the checks that judge the PR's own files, each with its fix, in English and 中文.
//! The verifier's collector and checks, with the PR body as the additional detail section; no
//! LLM, no human. Its conclusion is `neutral` when something would fail, `success` when
//! nothing would: it never blocks. One check run per head, edited in place.

use serde_json::json;

use crate::checks::preflight::Preflight;
use crate::checks::{verify, Catalog, Lang};
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Instant;

use crate::evidence::collect::head::{author_signoff, head_request};
use crate::evidence::collect::upstream::RequestBudget;
use crate::evidence::collect::{collect, for_signoff, CollectError, UpstreamClient};
use crate::github::types::{CheckRunInput, CheckRunOutput, PullRequest};
use crate::github::{sticky, GitHub, GitHubError, RepoRef};
use crate::report::verdict::message_text;
use crate::report::{render_bilingual, RenderError};

use super::unchanged::{Posted, PostedPreflight};
use super::{HandlerError, Outcome};
use crate::offload::{run_checks, Overrun};

/// The check run's name.
pub const PREFLIGHT_CHECK: &str = "sweepgate/preflight";
/// The `pull_request` actions that run preflight: a new head, or a new PR body.
pub const PREFLIGHT_ACTIONS: [&str; 4] = ["opened", "reopened", "synchronize", "edited"];
/// Its `external_id`: the bot edits only the preflight check run it made.
pub(super) const EXTERNAL_ID: &str = "sweepgate-preflight";

impl PostedPreflight {
    /// The completed preflight check run that shows this report on `head`.
    pub(super) fn check_run(&self, head: &str, details_url: Option<String>, title: String) -> CheckRunInput {
        CheckRunInput {
            name: PREFLIGHT_CHECK.into(),
            head_sha: head.to_owned(),
            status: "completed".into(),
            conclusion: Some(self.conclusion.clone()),
            details_url,
            external_id: Some(EXTERNAL_ID.into()),
            output: CheckRunOutput { title, summary: self.summary.clone(), text: String::new() },
        }
    }
}
/// GitHub refuses a check-run summary above 65535 characters.
const MAX_SUMMARY_CHARS: usize = 60_000;

/// Upstream requests one PR's preflights may send in an hour (issue 35 case 8, HT14). The
/// author controls the links in the PR body and how often they push: without a bound one PR
/// could spend the anonymous budget (60 requests an hour per address) that every verification's
/// Check 3 shares. Kept answers (`UpstreamCache`) cost nothing, so a push that links what the
/// last one linked costs little. Past it the links are unavailable facts naming the budget.
pub const PREFLIGHT_UPSTREAM_PER_HOUR: u64 = 24;
/// The window of [`PREFLIGHT_UPSTREAM_PER_HOUR`].
const BUDGET_WINDOW: std::time::Duration = std::time::Duration::from_secs(3600);
/// Most PRs whose budget window is kept (a window that ended is forgotten first).
const MAX_BUDGETS: usize = 10_000;

/// Each PR's preflight upstream budget in the current hour, in memory (a restart starts afresh).
#[derive(Default)]
pub struct PreflightBudgets {
    windows: std::sync::Mutex<HashMap<(String, u64), Window>>,
}

/// When a PR's budget window started, and what is left of it.
type Window = (Instant, Arc<AtomicU64>);

impl std::fmt::Debug for PreflightBudgets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let windows = self.windows.lock().map_or(0, |w| w.len());
        f.debug_struct("PreflightBudgets").field("windows", &windows).finish()
    }
}

impl PreflightBudgets {
    /// The budget of `repo`'s PR `pr` for this hour.
    fn of(&self, repo: &RepoRef, pr: u64) -> RequestBudget {
        let mut windows = self.windows.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = Instant::now();
        windows.retain(|_, (start, _)| now.duration_since(*start) < BUDGET_WINDOW);
        let key = (repo.to_string(), pr);
        if !windows.contains_key(&key) && windows.len() >= MAX_BUDGETS {
            let oldest = windows.iter().min_by_key(|(_, (start, _))| *start).map(|(k, _)| k.clone());
            oldest.map(|k| windows.remove(&k));
        }
        let (_, left) =
            windows.entry(key).or_insert_with(|| (now, Arc::new(AtomicU64::new(PREFLIGHT_UPSTREAM_PER_HOUR))));
        RequestBudget {
            left: left.clone(),
            spent: format!(
                "this PR's preflight may read upstream {PREFLIGHT_UPSTREAM_PER_HOUR} times an hour, and has; \
                 the sign-off's verification reads it"
            ),
        }
    }
}

/// The check run's body: each would-be FAIL with its fix, then what waits for the sign-off.
fn render(preflight: &Preflight, head: &str) -> Result<String, RenderError> {
    let catalog = Catalog::embedded();
    let rows: Vec<serde_json::Value> = preflight
        .fails
        .iter()
        .map(|row| {
            let spec = catalog.check(row.id);
            let text = |lang| message_text(row, lang).unwrap_or_else(|e| format!("({e})"));
            json!({"id": row.id, "name": spec.name.en, "name_zh": spec.name.zh,
                   "message": text(Lang::En), "message_zh": text(Lang::Zh),
                   "fix": spec.remediation.en, "fix_zh": spec.remediation.zh})
        })
        .collect();
    let names = |ids: &[u8]| -> Vec<serde_json::Value> {
        ids.iter()
            .map(|id| json!({"id": id, "name": catalog.check(*id).name.en, "name_zh": catalog.check(*id).name.zh}))
            .collect()
    };
    let context = json!({"head": head, "rows": rows, "clear": names(&preflight.clear),
                         "after": names(&preflight.after_signoff)});
    render_bilingual("preflight", &context)
}

/// A summary within GitHub's bound, cut at a line and saying so.
pub(super) fn bounded(summary: String) -> String {
    if summary.chars().count() <= MAX_SUMMARY_CHARS {
        return summary;
    }
    let cut: String = summary.chars().take(MAX_SUMMARY_CHARS).collect();
    let cut = cut.rsplit_once('\n').map_or(cut.as_str(), |(kept, _)| kept).to_owned();
    format!(
        "{cut}\n\n… (truncated: GitHub's limit on a check-run summary / 已截断：超出 GitHub 检查运行摘要的长度上限)\n"
    )
}

/// Runs preflight on the PR's head and writes its check run.
pub(super) async fn preflight<G: GitHub>(
    gh: &G,
    cfg: &super::BotConfig,
    repo: &RepoRef,
    pull: &PullRequest,
    action: &str,
    out: &mut Outcome,
) -> Result<(), HandlerError> {
    if !cfg.verify.preflight || pull.state != "open" || !PREFLIGHT_ACTIONS.contains(&action) {
        return Ok(());
    }
    let head = pull.head.sha.clone();
    // `None`: the token may not read or write check runs; the report still reaches the
    // Action's job summary (`out.preflight`).
    let existing = match sticky::own_check_run(gh, repo, &head, PREFLIGHT_CHECK, EXTERNAL_ID).await {
        Ok(run) => Some(run),
        Err(GitHubError::DryRun(_)) => return Ok(()),
        Err(err) if refused(&err) => {
            out.note(format!("preflight check run not readable ({err}): the report is only in the outcome"));
            None
        }
        Err(err) => return Err(err.into()),
    };
    // A redelivered push is done already; an edited PR body is judged again (Check 3's links).
    if action != "edited" && existing.as_ref().is_some_and(|r| r.as_ref().is_some_and(|r| r.status == "completed")) {
        out.note(format!("preflight on {head} is done already"));
        return Ok(());
    }
    let upstream = UpstreamClient::new(cfg.verify.upstream.clone())
        .map_err(|e| HandlerError::GitHub(GitHubError::Setup(e.to_string())))?
        .with_budget(cfg.verify.preflight_budgets.of(repo, pull.number));
    let limits = &cfg.verify.limits;
    // A verification of this event collected the same PR, head and base: its Evidence is
    // judged with the PR body as the sign-off, not collected again.
    let collected = match out.reads.evidence_of(pull) {
        Some(shared) => {
            out.note(format!("preflight on {head}: the evidence this event collected is reused"));
            for_signoff(gh, &upstream, repo, &shared, author_signoff(repo, pull), limits)
                .await
                .map_err(CollectError::from)
        }
        None => {
            let (request, mut known) = head_request(repo, pull);
            known.files = out.reads.files_of(pull);
            collect(gh, &upstream, &request, limits, known).await
        }
    };
    let (conclusion, title, summary) = match collected {
        Ok(evidence) => {
            let checked = run_checks(cfg.verify.limits.deadline, std::sync::Arc::new(evidence), |ev| {
                let verdict = verify(ev);
                Preflight::of(ev, &verdict)
            });
            match checked.await {
                Ok(preflight) => {
                    let title = match preflight.fails.len() {
                        0 => "Nothing would fail before sign-off / 签核前没有会失败的检查".to_owned(),
                        n => format!("{n} check(s) would fail / {n} 项检查将会失败"),
                    };
                    (preflight.conclusion(), title, render(&preflight, &head)?)
                }
                Err(overrun) => overran(&head, &overrun, out)?,
            }
        }
        Err(CollectError::Overrun(overrun)) => overran(&head, &overrun, out)?,
        Err(err) => {
            let context = json!({"head": head, "error": err.to_string()});
            (
                "neutral",
                "Preflight could not run / 预检无法运行".to_owned(),
                render_bilingual("preflight_error", &context)?,
            )
        }
    };
    let summary = bounded(summary);
    out.preflight = Some(summary.clone());
    let posted = PostedPreflight { conclusion: conclusion.to_owned(), title: title.clone(), summary };
    let input = posted.check_run(&head, cfg.verify.details.as_ref().map(|d| d.url(repo, pull.number)), title);
    cfg.verify.judged.posted(repo, pull.number, &head, Posted::Preflight(posted));
    let written = match existing {
        None => {
            out.note(format!("preflight on {head}: {conclusion} (no check run)"));
            return Ok(());
        }
        Some(run) => sticky::write_check_run(gh, repo, run.as_ref(), &input).await,
    };
    match written {
        Ok(()) => out.note(format!("preflight on {head}: {conclusion}")),
        // Advisory: a token without `checks: write` (an Action's) loses the check run only.
        Err(err) if refused(&err) => {
            out.note(format!("preflight on {head}: {conclusion}; check run not written ({err})"))
        }
        Err(err) => return Err(err.into()),
    }
    Ok(())
}

/// The PR's files made the PR model or the checks overrun: a conclusion that names it, not a
/// check run left in progress.
fn overran(head: &str, overrun: &Overrun, out: &mut Outcome) -> Result<(&'static str, String, String), RenderError> {
    out.note(format!("preflight on {head}: {overrun}"));
    let seconds = match overrun {
        Overrun::Deadline(d) => Some(d.as_secs()),
        Overrun::Panicked(_) => None,
    };
    let context = json!({"head": head, "seconds": seconds});
    Ok((
        "failure",
        "Preflight could not finish / 预检未能完成".to_owned(),
        render_bilingual("preflight_overrun", &context)?,
    ))
}

/// GitHub refused the token (no `checks` permission): not a failure worth retrying.
fn refused(err: &GitHubError) -> bool {
    matches!(err, GitHubError::Http { status: 403, .. })
}
