//! Who may sign off (issue 14 item 2): the author of a sign-off is *eligible* when they could
//! be a signer at all, a write+ collaborator or a CODEOWNER (at the PR's base) of some changed
//! path. Decided cheaply, before any collection, from one permission call, the CODEOWNERS file
//! at base, the changed paths and, for team owners, one membership call per team. Only an
//! eligible sign-off is verified and moves the required status; whether the signer owns
//! *every* path is Check 0's question, answered in the verdict.

use std::collections::BTreeMap;

use crate::domain::codeowners::Codeowners;
use crate::intake::labels::Permission;

/// Most team memberships asked per sign-off; owners through further teams read as unknown.
pub const MAX_TEAMS: usize = 10;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Eligibility {
    /// A write+ collaborator.
    Writer(Permission),
    /// Listed (directly or through `team`) as an owner of `path` in the policy's CODEOWNERS.
    Codeowner { path: String, team: Option<String> },
    /// Neither: the sign-off gets a short reply and changes nothing.
    NotEligible,
    /// Not a writer, and ownership hinges on teams whose membership could not be read: not
    /// eligible (fail closed), and the reply names the teams a maintainer must look at.
    Unknown { teams: Vec<String> },
    /// Not a writer, and the policy commit (where CODEOWNERS is read) could not be resolved:
    /// ownership cannot be shown, so not eligible (fail closed; never the stale base).
    PolicyUnavailable { why: String },
}

impl Eligibility {
    pub fn is_eligible(&self) -> bool {
        matches!(self, Eligibility::Writer(_) | Eligibility::Codeowner { .. })
    }
}

/// The teams (`org/slug`) owning some changed path, in first-seen order, at most [`MAX_TEAMS`]
/// (the rest are reported as unknown by [`decide`]).
pub fn teams_to_ask(owners: &Codeowners, changed: &[&str]) -> Vec<(String, String)> {
    let mut teams: Vec<(String, String)> = Vec::new();
    for path in changed {
        let Some((rule, _)) = owners.owners_of(path) else { continue };
        for (org, slug) in rule.teams() {
            let team = (org.to_owned(), slug.to_owned());
            if !teams.contains(&team) {
                teams.push(team);
            }
        }
    }
    teams
}

/// The decision from what was read. `owners` is `None` when the base has no CODEOWNERS file;
/// `memberships` maps `org/slug` to `Some(member?)`, or `None` when it could not be read.
pub fn decide(
    login: &str,
    permission: Permission,
    owners: Option<&Codeowners>,
    changed: &[&str],
    memberships: &BTreeMap<String, Option<bool>>,
) -> Eligibility {
    if permission.can_write() {
        return Eligibility::Writer(permission);
    }
    let Some(owners) = owners else { return Eligibility::NotEligible };
    let mut unknown = Vec::new();
    for path in changed {
        let Some((rule, _)) = owners.owners_of(path) else { continue };
        if rule.lists_user(login) {
            return Eligibility::Codeowner { path: (*path).to_owned(), team: None };
        }
        for (org, slug) in rule.teams() {
            let team = format!("{org}/{slug}");
            match memberships.get(&team) {
                Some(Some(true)) => return Eligibility::Codeowner { path: (*path).to_owned(), team: Some(team) },
                Some(Some(false)) => {}
                Some(None) | None => {
                    if !unknown.contains(&team) {
                        unknown.push(team);
                    }
                }
            }
        }
    }
    if unknown.is_empty() {
        Eligibility::NotEligible
    } else {
        Eligibility::Unknown { teams: unknown }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owners() -> Codeowners {
        Codeowners::parse("* @core-admin\nconfigs/amd-* @amd-owner @org/amd\nbenchmarks/ @org/bench\n", "CODEOWNERS").0
    }

    #[test]
    fn writers_are_eligible_without_codeowners() {
        let none = BTreeMap::new();
        assert_eq!(decide("w", Permission::Write, None, &["x"], &none), Eligibility::Writer(Permission::Write));
        assert_eq!(decide("r", Permission::Read, None, &["x"], &none), Eligibility::NotEligible);
        assert!(!decide("r", Permission::Triage, Some(&owners()), &["README.md"], &none).is_eligible());
    }

    #[test]
    fn owners_of_a_changed_path_are_eligible_directly_or_through_a_team() {
        let o = owners();
        let mut teams = BTreeMap::new();
        let direct = decide("amd-owner", Permission::Read, Some(&o), &["configs/amd-master.yaml"], &teams);
        assert_eq!(direct, Eligibility::Codeowner { path: "configs/amd-master.yaml".into(), team: None });
        // Owning an unchanged path does not count.
        assert!(!decide("amd-owner", Permission::None, Some(&o), &["benchmarks/x.sh"], &teams).is_eligible());
        assert_eq!(
            teams_to_ask(&o, &["benchmarks/x.sh", "configs/amd-a"]),
            [("org".into(), "bench".into()), ("org".into(), "amd".into())]
        );
        teams.insert("org/bench".to_string(), Some(true));
        assert!(decide("m", Permission::None, Some(&o), &["benchmarks/x.sh"], &teams).is_eligible());
        teams.insert("org/bench".to_string(), Some(false));
        assert_eq!(decide("m", Permission::None, Some(&o), &["benchmarks/x.sh"], &teams), Eligibility::NotEligible);
    }

    #[test]
    fn unreadable_membership_is_not_eligibility() {
        let mut teams = BTreeMap::new();
        teams.insert("org/bench".to_string(), None);
        let got = decide("m", Permission::None, Some(&owners()), &["benchmarks/x.sh"], &teams);
        assert_eq!(got, Eligibility::Unknown { teams: vec!["org/bench".into()] });
        assert!(!got.is_eligible());
    }
}
