//! The last published run of each affected series (issue 13 item 5, spec 10 §3.6–§4 and
//! spec 40 §3.5): the base curve of Check 18(g)/(h).
//!
//! For an affected config key: the last entry of the base `perf-changelog.yaml` that lists it
//! names the merged PR that published it (`pr-link`). That PR's results were ingested from its
//! reused run (the newest `/reuse-sweep-run` or `/use` of an OWNER/MEMBER/COLLABORATOR, spec 10
//! §3.3; a bare command means the newest successful `run-sweep.yml` PR run on one of its
//! commits) or else from its main run (the `run-sweep.yml` push run on the merge commit).
//! A key absent from every master config at base is new: `Ok(None)`. Anything that cannot be
//! followed is `Unavailable` with the step that failed.

use std::collections::{BTreeMap, BTreeSet};

use crate::domain::changelog::Changelog;
use crate::evidence::{Evidence, Fact, PublishedRun, ALL_SERIES};
use crate::github::types::{RunQuery, WorkflowRun};
use crate::github::{GitHub, RepoRef};
use crate::intake::command::{self, Scan};
use crate::pr::{affected, Context};
use crate::repo::{Layout, Logical, MemTree};
use crate::yaml;

const SWEEP_WORKFLOW: &str = "run-sweep.yml";
/// PRs looked up at once (each costs 2-3 requests).
const CONCURRENT_PRS: usize = 4;

/// `published_runs` of the evidence: per affected config key, its series' last published run;
/// and the runs a lookup found in a run listing already (not read again by id).
pub async fn published_runs<G: GitHub>(
    gh: &G,
    repo: &RepoRef,
    evidence: &Evidence,
) -> (BTreeMap<String, Fact<Option<PublishedRun>>>, Vec<WorkflowRun>) {
    let plan = plan(repo, evidence);
    let prs: BTreeSet<u64> = plan.values().filter_map(|step| step.as_ref().ok().copied().flatten()).collect();
    let resolve = |pr: u64| async move { (pr, resolve_pr(gh, repo, pr).await) };
    let mut listed = Vec::new();
    let resolved: BTreeMap<u64, Result<PublishedRun, String>> =
        super::bounded(CONCURRENT_PRS, prs.into_iter().map(resolve))
            .await
            .into_iter()
            .map(|(pr, answer)| {
                let answer = answer.map(|(published, run)| {
                    listed.extend(run);
                    published
                });
                (pr, answer)
            })
            .collect();
    let facts = plan
        .into_iter()
        .map(|(key, step)| {
            let fact = match step {
                Err(reason) => Fact::Unavailable(reason),
                Ok(None) => Fact::Ok(None),
                Ok(Some(pr)) => match &resolved[&pr] {
                    Ok(run) => Fact::Ok(Some(run.clone())),
                    Err(reason) => Fact::Unavailable(format!("published run of {key} (PR #{pr}): {reason}")),
                },
            };
            (key, fact)
        })
        .collect();
    (facts, listed)
}

/// Per affected key: the PR whose changelog entry published it last (`Ok(None)`: a new key).
fn plan(repo: &RepoRef, evidence: &Evidence) -> BTreeMap<String, Result<Option<u64>, String>> {
    let cx = Context::new(evidence);
    let keys: Vec<String> = match affected::affected_configs(&cx) {
        Ok(configs) => configs.into_iter().map(|c| c.key).collect(),
        Err(reason) => {
            let reason = format!("the affected configs are unknown, so their published runs are too: {reason}");
            return BTreeMap::from([(ALL_SERIES.to_string(), Err(reason))]);
        }
    };
    let known = match &evidence.trees.base {
        Fact::Unavailable(reason) => Err(format!("the base tree is unavailable ({reason})")),
        Fact::Ok(()) => base_master_keys(&evidence.base),
    };
    let changelog = known.as_ref().map_err(Clone::clone).and_then(|_| base_changelog(&evidence.base));
    keys.into_iter()
        .map(|key| {
            let step = match (&known, &changelog) {
                (Err(reason), _) => Err(reason.clone()),
                (Ok(known), _) if !known.contains(&key) => Ok(None),
                (_, Err(reason)) => Err(reason.clone()),
                (_, Ok(changelog)) => last_publishing_pr(repo, changelog, &key).map(Some),
            };
            (key, step)
        })
        .collect()
}

/// Every top-level key of every master config at base.
fn base_master_keys(base: &MemTree) -> Result<BTreeSet<String>, String> {
    let mut keys = BTreeSet::new();
    for path in base.paths().filter(|p| crate::pr::scan::role(p) == crate::pr::scan::Role::MasterConfig) {
        let text = base.text(path).ok_or_else(|| format!("base {path} is not UTF-8"))?;
        let root = yaml::parse(text, path).map_err(|e| format!("base {path}: {e}"))?;
        let map = root.as_map().ok_or_else(|| format!("base {path} is not a mapping"))?;
        keys.extend(map.iter().filter_map(|(k, _)| k.as_str().map(str::to_string)));
    }
    Ok(keys)
}

fn base_changelog(base: &MemTree) -> Result<Changelog, String> {
    let path = Layout::default()
        .resolve(base, Logical::Changelog)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "the base has no perf-changelog.yaml".to_string())?;
    let text = base.text(&path).ok_or_else(|| format!("base {path} is not UTF-8"))?;
    Changelog::parse(text, &path).map_err(|e| format!("base {path}: {e}"))
}

/// The PR of the last changelog entry listing `key` (entries are appended, so the last wins).
fn last_publishing_pr(repo: &RepoRef, changelog: &Changelog, key: &str) -> Result<u64, String> {
    let (pos, entry) = changelog
        .entries
        .iter()
        .rev()
        .find(|(_, e)| e.config_keys.iter().any(|k| k == key))
        .ok_or_else(|| format!("no changelog entry at base lists {key}"))?;
    pr_number(repo, &entry.pr_link).ok_or_else(|| {
        format!("the changelog entry for {key} at line {} links {:?}, not a PR of {repo}", pos.line, entry.pr_link)
    })
}

/// `https://github.com/<repo>/pull/<n>[/…]` → n (the repository compared case-insensitively).
fn pr_number(repo: &RepoRef, link: &str) -> Option<u64> {
    let rest = link.trim().strip_prefix("https://github.com/")?;
    let (name, tail) = rest.split_once("/pull/")?;
    let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
    (name.eq_ignore_ascii_case(&repo.to_string())).then(|| digits.parse().ok()).flatten().filter(|n| *n > 0)
}

/// The run a merged PR's results were ingested from, with the run itself when a listing
/// found it (a reuse command names only its id).
async fn resolve_pr<G: GitHub>(gh: &G, repo: &RepoRef, pr: u64) -> Result<(PublishedRun, Option<WorkflowRun>), String> {
    let (pull, comments) = tokio::join!(gh.get_pull(repo, pr), gh.list_issue_comments(repo, pr));
    let pull = pull.map_err(|e| e.to_string())?;
    let merged_at = pull.merged_at.ok_or_else(|| "the PR is not merged".to_string())?;
    let mut comments = comments.map_err(|e| e.to_string())?;
    comments.sort_by_key(|c| c.created_at);
    let authorized = ["OWNER", "MEMBER", "COLLABORATOR"];
    let decision =
        comments.iter().rev().filter(|c| authorized.contains(&c.author_association.as_str())).find_map(|c| {
            match command::scan(&c.body) {
                Scan::Command(command) => Some(command),
                _ => None,
            }
        });
    let merged_at = Some(super::github_time(merged_at));
    let found = |run_id, source: &str| PublishedRun { run_id, pr, source: source.into(), merged_at: merged_at.clone() };
    match decision.map(|command| (command.run_id, command.sweep)) {
        Some((Some(run_id), _)) => Ok((found(run_id, "reuse"), None)),
        // Published curves are read from workflow-run artifacts only; a sweep is never a guess.
        Some((None, Some(sweep))) => {
            Err(format!("its results come from sweepgate sweep {sweep}, which the published-run lookup cannot read"))
        }
        Some((None, None)) => {
            let query = RunQuery {
                event: Some("pull_request".into()),
                branch: Some(pull.head.ref_name.clone()),
                status: Some("completed".into()),
            };
            let (commits, runs) =
                tokio::join!(gh.list_pull_commits(repo, pr), gh.list_workflow_runs(repo, SWEEP_WORKFLOW, &query));
            let commits: BTreeSet<String> = commits.map_err(|e| e.to_string())?.into_iter().map(|c| c.sha).collect();
            runs.map_err(|e| e.to_string())?
                .into_iter()
                .find(|r| r.conclusion.as_deref() == Some("success") && commits.contains(&r.head_sha))
                .map(|r| (found(r.id, "reuse"), Some(r)))
                .ok_or_else(|| {
                    format!("a bare reuse command, but no successful {SWEEP_WORKFLOW} PR run on its commits")
                })
        }
        None => {
            let sha = pull.merge_commit_sha.ok_or_else(|| "GitHub names no merge commit".to_string())?;
            let runs = gh.list_workflow_runs_at(repo, SWEEP_WORKFLOW, &sha).await.map_err(|e| e.to_string())?;
            runs.into_iter()
                .find(|r| r.event == "push")
                .map(|r| (found(r.id, "main"), Some(r)))
                .ok_or_else(|| format!("no {SWEEP_WORKFLOW} push run on the merge commit {sha}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changelog_links_name_prs_of_this_repository_only() {
        let repo = RepoRef::parse("example/inferencex").unwrap();
        assert_eq!(pr_number(&repo, "https://github.com/example/inferencex/pull/3290"), Some(3290));
        assert_eq!(pr_number(&repo, "https://github.com/Example/InferenceX/pull/12/files"), Some(12));
        for bad in ["https://github.com/other/repo/pull/1", "https://github.com/example/inferencex/pull/XXX", "XXX"] {
            assert_eq!(pr_number(&repo, bad), None, "{bad}");
        }
    }

    #[test]
    fn new_keys_have_no_published_run_and_the_last_entry_wins() {
        let text = "- config-keys: [a]\n  description: [x]\n  pr-link: https://github.com/o/r/pull/1\n\
                    - config-keys: [a, b]\n  description: [y]\n  pr-link: https://github.com/o/r/pull/2\n";
        let changelog = Changelog::parse(text, "perf-changelog.yaml").unwrap();
        let repo = RepoRef::parse("o/r").unwrap();
        assert_eq!(last_publishing_pr(&repo, &changelog, "a"), Ok(2));
        assert!(last_publishing_pr(&repo, &changelog, "c").unwrap_err().contains("no changelog entry"));
        let base = MemTree::new().with("configs/nvidia-master.yaml", "a:\n  image: x\nb:\n  image: y\n");
        assert_eq!(base_master_keys(&base).unwrap(), BTreeSet::from(["a".to_string(), "b".to_string()]));
        let broken = MemTree::new().with("configs/nvidia-master.yaml", "a: [unclosed\n");
        assert!(base_master_keys(&broken).is_err(), "an unreadable base master config is not 'no keys'");
    }
}
