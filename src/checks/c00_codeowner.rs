//! Check 0 — CODEOWNER (spec 30 Check 0): the signer owns what the PR changes.

use std::collections::BTreeSet;

use serde_json::json;

use super::{Context, Outcome};
use crate::domain::codeowners::{Codeowners, Rule};
use crate::evidence::{Evidence, Fact};

/// Whether `login` belongs to `org/slug`: Some(yes/no) when readable, None when not.
fn membership(evidence: &Evidence, org: &str, slug: &str, login: &str) -> Option<bool> {
    let team = format!("{org}/{slug}");
    let members = evidence.team_members.iter().find(|(t, _)| t.eq_ignore_ascii_case(&team))?.1;
    match members.iter().find(|(l, _)| l.eq_ignore_ascii_case(login))?.1 {
        Fact::Ok(member) => Some(*member),
        Fact::Unavailable(_) => None,
    }
}

enum Ownership {
    Owner,
    /// Only through teams whose membership could not be read.
    Unknown(Vec<String>),
    NotOwner,
}

fn owns(evidence: &Evidence, rule: &Rule, login: &str) -> Ownership {
    if rule.lists_user(login) {
        return Ownership::Owner;
    }
    let mut unreadable = Vec::new();
    for (org, slug) in rule.teams() {
        match membership(evidence, org, slug, login) {
            Some(true) => return Ownership::Owner,
            Some(false) => {}
            None => unreadable.push(format!("@{org}/{slug}")),
        }
    }
    if unreadable.is_empty() {
        Ownership::NotOwner
    } else {
        Ownership::Unknown(unreadable)
    }
}

/// Both paths of a rename count (spec 30 §1.4 rule 2).
fn changed_paths(evidence: &Evidence) -> BTreeSet<&str> {
    let mut paths = BTreeSet::new();
    for f in &evidence.files {
        paths.insert(f.filename.as_str());
        if let Some(prev) = &f.previous_filename {
            paths.insert(prev.as_str());
        }
    }
    paths
}

/// A recognised CODEOWNER (for catch-all paths): listed on any line, or a confirmed member of a
/// team listed on any line.
fn recognised(evidence: &Evidence, owners: &Codeowners, login: &str) -> bool {
    owners.lists_user_anywhere(login)
        || owners
            .rules
            .iter()
            .any(|r| r.teams().any(|(org, slug)| membership(evidence, org, slug, login) == Some(true)))
}

pub fn check(cx: &Context) -> Outcome {
    let ev = cx.evidence;
    let (file, owners) = match cx.codeowners() {
        Ok((file, owners)) => (file, owners),
        Err(reason) => return Outcome::unreadable("CODEOWNERS", reason.clone()),
    };
    let signer = ev.signoff.author.as_str();
    let mut specific = Vec::new();
    let mut catch_all = Vec::new();
    let mut not_owned = Vec::new();
    let mut unknown_teams = BTreeSet::new();
    let mut unknown_paths = Vec::new();
    for path in changed_paths(ev) {
        let Some((rule, line)) = owners.owners_of(path) else { continue };
        if rule.is_unowned() {
            continue;
        }
        if rule.is_catch_all() {
            catch_all.push(path);
            continue;
        }
        match owns(ev, rule, signer) {
            Ownership::Owner => specific.push(path),
            Ownership::Unknown(teams) => {
                unknown_teams.extend(teams);
                unknown_paths.push(path);
            }
            Ownership::NotOwner => not_owned.push(json!({
                "path": path,
                "line": line,
                "owners": rule.owners.iter().map(ToString::to_string).collect::<Vec<_>>(),
            })),
        }
    }
    // Unreadable membership never fails a signer who is listed explicitly on another line next
    // to that same team (docs/decisions.md D9); anyone else must be shown to own the path.
    let co_listed = unknown_teams.iter().all(|team| {
        owners
            .rules
            .iter()
            .any(|r| r.lists_user(signer) && r.owners.iter().any(|o| o.to_string().eq_ignore_ascii_case(team)))
    });
    if !unknown_paths.is_empty() && !co_listed {
        for path in &unknown_paths {
            if let Some((rule, line)) = owners.owners_of(path) {
                not_owned.push(json!({
                    "path": path,
                    "line": line,
                    "owners": rule.owners.iter().map(ToString::to_string).collect::<Vec<_>>(),
                }));
            }
        }
    }
    if !not_owned.is_empty() {
        let lines: Vec<String> =
            not_owned.iter().map(|p| format!("{file}:{}", p["line"].as_u64().unwrap_or_default())).collect();
        let mut outcome = Outcome::fail("not_owner").arg("signer", signer).arg("paths", not_owned);
        for l in lines {
            outcome = outcome.evidence(l);
        }
        return outcome.evidence(ev.signoff.url.clone());
    }
    if !catch_all.is_empty() && !recognised(ev, owners, signer) && specific.is_empty() && unknown_paths.is_empty() {
        return Outcome::fail("not_a_codeowner").arg("signer", signer).arg("paths", catch_all).evidence(file.clone());
    }
    if !unknown_paths.is_empty() {
        return Outcome::pass("owner_via_fallback")
            .arg("signer", signer)
            .arg("teams", unknown_teams.into_iter().collect::<Vec<_>>())
            .arg("paths", unknown_paths)
            .evidence(file.clone());
    }
    if specific.is_empty() && catch_all.is_empty() {
        return Outcome::pass("no_owned_paths").arg("signer", signer);
    }
    Outcome::pass("owner")
        .arg("signer", signer)
        .arg("specific", specific)
        .arg("catch_all", catch_all)
        .evidence(file.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, with_change};
    use crate::checks::Status;

    const CODEOWNERS: &str = "* @example/core\n/configs/amd-master.yaml @amd-a @amd-b\n/configs/nvidia-master.yaml @nv-a @example/nv-perf\nMODELS.md @models-owner @example/core\n/docs/ \n/benchmarks/nvidia/ @nv-b @example/nv-perf\n";

    fn pr(signer: &str, paths: &[&str]) -> Evidence {
        let mut e = evidence();
        e.base.insert(".github/CODEOWNERS", CODEOWNERS);
        e.signoff.author = signer.into();
        for p in paths {
            e = with_change(e, p, "@@ -1 +1 @@\n+x\n");
        }
        e
    }

    fn status(e: &Evidence) -> (Status, String) {
        let o = check(&Context::new(e));
        (o.status, o.message.key)
    }

    #[test]
    fn owner_of_the_specific_path_passes_and_the_catch_all_is_satisfied() {
        let e = pr("AMD-A", &["configs/amd-master.yaml", "perf-changelog.yaml"]);
        assert_eq!(status(&e), (Status::Pass, "owner".into()));
    }

    #[test]
    fn an_amd_owner_signing_an_nvidia_change_fails_naming_the_real_owners() {
        let e = pr("amd-a", &["configs/nvidia-master.yaml"]);
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.args["paths"][0]["owners"], json!(["@nv-a", "@example/nv-perf"]));
        assert_eq!(o.evidence[0], ".github/CODEOWNERS:3");
    }

    #[test]
    fn a_signer_who_owns_only_the_catch_all_cannot_sign_a_specific_path() {
        let mut e = pr("core-member", &["configs/amd-master.yaml"]);
        e.team_members.insert("example/core".into(), [("core-member".to_owned(), Fact::Ok(true))].into());
        assert_eq!(status(&e).0, Status::Fail);
    }

    #[test]
    fn catch_all_paths_need_a_recognised_codeowner() {
        let e = pr("models-owner", &["perf-changelog.yaml"]);
        assert_eq!(status(&e), (Status::Pass, "owner".into()));
        let e = pr("drive-by", &["perf-changelog.yaml"]);
        assert_eq!(status(&e), (Status::Fail, "not_a_codeowner".into()));
    }

    #[test]
    fn team_owners_pass_on_confirmed_membership_and_fail_on_denied_membership() {
        let mut e = pr("nv-b", &["configs/nvidia-master.yaml"]);
        e.team_members.insert("example/nv-perf".into(), [("nv-b".to_owned(), Fact::Ok(true))].into());
        assert_eq!(status(&e).0, Status::Pass);
        e.team_members.insert("example/nv-perf".into(), [("nv-b".to_owned(), Fact::Ok(false))].into());
        assert_eq!(status(&e).0, Status::Fail);
    }

    #[test]
    fn unreadable_membership_falls_back_to_an_explicit_listing_next_to_the_team() {
        // nv-b is listed with @example/nv-perf on another line; the membership is unreadable.
        let mut e = pr("nv-b", &["configs/nvidia-master.yaml"]);
        e.team_members
            .insert("example/nv-perf".into(), [("nv-b".to_owned(), Fact::Unavailable("HTTP 403".into()))].into());
        assert_eq!(status(&e), (Status::Pass, "owner_via_fallback".into()));
        // Listed elsewhere but never with that team, or not listed at all: not enough.
        assert_eq!(status(&pr("models-owner", &["configs/nvidia-master.yaml"])).0, Status::Fail);
        assert_eq!(status(&pr("stranger", &["configs/nvidia-master.yaml"])).0, Status::Fail);
    }

    #[test]
    fn both_paths_of_a_rename_count() {
        let mut e = pr("amd-a", &[]);
        e.files.push(crate::evidence::ChangedFile {
            filename: "configs/amd-master.yaml".into(),
            previous_filename: Some("configs/nvidia-master.yaml".into()),
            status: "renamed".into(),
            patch: None,
        });
        assert_eq!(status(&e).0, Status::Fail);
    }

    /// ARCHITECTURE decision 6: CODEOWNERS is read at the default branch's tip, not at the
    /// PR's recorded base (upstream #3163: a corrected CODEOWNERS on main applies at once).
    #[test]
    fn codeowners_is_read_at_the_target_branch_tip_when_it_is_not_the_base() {
        let mut e = pr("amd-a", &["configs/amd-master.yaml"]);
        assert_eq!(status(&e), (Status::Pass, "owner".into()), "at the base, amd-a owns it");
        e.pull_request.policy_sha = Some("1".repeat(40));
        e.trees.policy = Some(Fact::Ok(()));
        e.policy.insert(".github/CODEOWNERS", CODEOWNERS.replace("@amd-a ", ""));
        assert_eq!(status(&e), (Status::Fail, "not_owner".into()), "main dropped amd-a");
        // A tip that could not be resolved or read: FAIL naming it, never the stale base.
        e.trees.policy = Some(Fact::Unavailable("the tip of the target branch main: HTTP 502".into()));
        let verdict = crate::checks::verify(&e);
        let row = verdict.result(0).map(|r| (r.outcome.status, r.outcome.message.args["what"].clone()));
        assert_eq!(row, Some((Status::Fail, json!({"$reason": "what_tree", "tree": "policy"}))));
    }

    #[test]
    fn unowned_paths_need_no_owner_and_missing_codeowners_fails() {
        let e = pr("anyone", &["docs/notes.md"]);
        assert_eq!(status(&e), (Status::Pass, "no_owned_paths".into()));
        let mut e = pr("anyone", &["docs/notes.md"]);
        e.base = Default::default();
        assert_eq!(status(&e), (Status::Fail, "unreadable".into()));
    }
}
