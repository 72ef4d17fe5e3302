//! Who may start a verification (issue 34 item 7, decision RV7): a human whose permission on the
//! repository is `write`, `maintain` or `admin` (spec 30 §1.3 step 5, upstream's Resolver: the
//! permission is `admin` or `write` **and** the role name is `admin`, `maintain` or `write`;
//! CONTRIBUTING: "Starting Claude requires an eligible human actor with repository write
//! access"). Decided cheaply, from one permission call, before any collection. Bots never get
//! here (the handlers take sign-offs from people only). Whether the signer owns the changed
//! paths is Check 0's question, answered in the verdict.

use crate::github::types::CollaboratorPermission;
use crate::intake::labels::Permission;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Eligibility {
    /// `write`, `maintain` or `admin`.
    Writer(Permission),
    /// Anything less (`read`, `triage`, a custom role, no access): the sign-off gets a short
    /// reply and changes nothing. `permission` is what GitHub answered (role name first).
    NotWriter { permission: String },
    /// The permission could not be read: never eligible (fail closed); the sign-off is left for
    /// the next reconcile pass.
    Unreadable { why: String },
}

impl Eligibility {
    pub fn is_eligible(&self) -> bool {
        matches!(self, Eligibility::Writer(_))
    }
}

/// The decision from `GET /collaborators/{login}/permission`: both the legacy permission and the
/// role name (when GitHub gives one) must be at least `write`, so a custom role is not.
pub fn decide(detail: &CollaboratorPermission) -> Eligibility {
    let legacy = Permission::parse(&detail.permission);
    let role = if detail.role_name.is_empty() { legacy } else { Permission::parse(&detail.role_name) };
    if legacy.can_write() && role.can_write() {
        return Eligibility::Writer(role);
    }
    let shown = if detail.role_name.is_empty() { &detail.permission } else { &detail.role_name };
    Eligibility::NotWriter { permission: if shown.is_empty() { "none".into() } else { shown.clone() } }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(permission: &str, role_name: &str) -> CollaboratorPermission {
        CollaboratorPermission { permission: permission.into(), role_name: role_name.into() }
    }

    #[test]
    fn write_maintain_and_admin_are_eligible() {
        assert_eq!(decide(&detail("admin", "admin")), Eligibility::Writer(Permission::Admin));
        assert_eq!(decide(&detail("write", "maintain")), Eligibility::Writer(Permission::Maintain));
        assert_eq!(decide(&detail("write", "write")), Eligibility::Writer(Permission::Write));
        assert_eq!(decide(&detail("write", "")), Eligibility::Writer(Permission::Write), "no role name: legacy");
    }

    #[test]
    fn readers_triagers_custom_roles_and_strangers_are_not() {
        for (permission, role, shown) in [
            ("read", "read", "read"),
            ("read", "triage", "triage"),
            ("write", "release-manager", "release-manager"),
            ("none", "none", "none"),
            ("", "", "none"),
        ] {
            let got = decide(&detail(permission, role));
            assert_eq!(got, Eligibility::NotWriter { permission: shown.into() }, "{permission}/{role}");
            assert!(!got.is_eligible());
        }
    }
}
