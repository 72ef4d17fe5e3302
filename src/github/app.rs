//! What the GitHub App needs (issue 24 item 7): the events `serve` reads
//! (`intake::event::handled_events`) and a permission for every call of [`super::GitHub`].
//! `github-app-manifest.json` at the repository root is [`manifest`] of these, so "Create GitHub
//! App from manifest" gives exactly what `serve` needs; a test keeps the two equal.

use serde_json::{json, Map, Value};

/// One permission of the App: its manifest key, the level, the `GitHub` calls that need it and
/// the events that need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Permission {
    pub name: &'static str,
    pub level: &'static str,
    pub calls: &'static [&'static str],
    pub events: &'static [&'static str],
}

/// Every permission the App asks for (least privilege: nothing writes contents, workflows or
/// administration).
pub const PERMISSIONS: [Permission; 9] = [
    Permission {
        name: "metadata",
        level: "read",
        calls: &["collaborator_permission", "collaborator_permission_detail"],
        events: &[],
    },
    Permission {
        name: "issues",
        level: "write",
        calls: &[
            "list_issue_comments",
            "create_issue_comment",
            "update_issue_comment",
            "add_reaction",
            "list_reactions",
            "delete_reaction",
        ],
        events: &["issue_comment"],
    },
    Permission {
        name: "pull_requests",
        level: "read",
        calls: &[
            "get_pull",
            "list_open_pulls",
            "list_commit_pulls",
            "list_pull_commits",
            "list_pull_files",
            "get_signoff_resource",
            "list_signoff_resources",
        ],
        events: &["pull_request", "pull_request_review", "pull_request_review_comment"],
    },
    Permission { name: "statuses", level: "write", calls: &["create_status", "list_commit_statuses"], events: &[] },
    Permission {
        name: "checks",
        level: "write",
        calls: &["list_check_runs", "create_check_run", "update_check_run"],
        events: &[],
    },
    Permission {
        name: "actions",
        level: "read",
        calls: &[
            "get_workflow_run",
            "list_workflow_runs",
            "list_workflow_runs_at",
            "list_run_artifacts",
            "download_artifact",
            "list_run_jobs",
            "download_job_log",
        ],
        events: &[],
    },
    Permission {
        name: "contents",
        level: "read",
        calls: &[
            "download_tarball",
            "get_tree",
            "compare_commits",
            "get_file_text",
            "get_branch_sha",
            "list_branch_activity",
        ],
        events: &[],
    },
    // An organization permission: team CODEOWNERS (Check 0); without it the membership is an
    // unavailable fact and the check fails closed.
    Permission { name: "members", level: "read", calls: &["team_membership"], events: &[] },
    Permission { name: "merge_queues", level: "read", calls: &[], events: &["merge_group"] },
];

/// The webhook URL in the repository's manifest: replace it with the server's public URL.
pub const EXAMPLE_WEBHOOK_URL: &str = "https://sweepgate.example.com/webhook";

/// The GitHub App manifest for a server whose webhook is at `webhook_url`.
pub fn manifest(webhook_url: &str) -> Value {
    let permissions: Map<String, Value> =
        PERMISSIONS.iter().map(|p| (p.name.to_owned(), Value::from(p.level))).collect();
    let events: Vec<&str> = crate::intake::event::handled_events().collect();
    json!({
        "name": "sweepgate",
        "url": "https://github.com/SemiAnalysisAI/InferenceX",
        "hook_attributes": {"url": webhook_url, "active": true},
        "public": false,
        "default_permissions": permissions,
        "default_events": events,
    })
}

/// One installation of the App as GitHub reports it (`GET /app/installations`): where it is
/// installed, and the permissions and events its owner accepted.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct Installation {
    pub id: u64,
    pub account: Account,
    #[serde(default)]
    pub permissions: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    pub events: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct Account {
    pub login: String,
}

/// What an installation lacks of what `serve` needs: permissions (`name: level`, a `write` grant
/// covers `read`) and events, each in the table's order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Missing {
    pub permissions: Vec<String>,
    pub events: Vec<String>,
}

impl Missing {
    pub fn is_empty(&self) -> bool {
        self.permissions.is_empty() && self.events.is_empty()
    }
}

/// What `installation` lacks against [`PERMISSIONS`] and the events `serve` reads.
pub fn missing(installation: &Installation) -> Missing {
    let rank = |level: &str| match level {
        "read" => 1,
        "write" | "admin" => 2,
        _ => 0,
    };
    let permissions = PERMISSIONS
        .iter()
        .filter(|p| installation.permissions.get(p.name).map_or(0, |l| rank(l)) < rank(p.level))
        .map(|p| format!("{}: {}", p.name, p.level))
        .collect();
    let mut events: Vec<String> = Vec::new();
    for event in crate::intake::event::handled_events() {
        if !installation.events.iter().any(|e| e == event) && !events.iter().any(|e| e == event) {
            events.push(event.to_owned());
        }
    }
    Missing { permissions, events }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The manifest in the repository is the code's table, byte for byte (pretty JSON).
    #[test]
    fn the_repositorys_manifest_is_the_codes_table() {
        let file = include_str!("../../github-app-manifest.json");
        let expected = serde_json::to_string_pretty(&manifest(EXAMPLE_WEBHOOK_URL)).unwrap() + "\n";
        assert_eq!(file, expected, "regenerate github-app-manifest.json from github::app::manifest");
    }

    /// Every call of the `GitHub` trait has exactly one permission, and every event the bot
    /// reads has the permission GitHub requires for it.
    #[test]
    fn every_call_and_event_has_its_permission() {
        let source = include_str!("mod.rs");
        let trait_body = source.split("pub trait GitHub").nth(1).and_then(|t| t.split("\n}\n").next()).unwrap();
        let calls: Vec<&str> = trait_body
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("fn "))
            .filter_map(|l| l.split(['(', '<']).next())
            .collect();
        assert!(calls.len() > 20, "{calls:?}");
        for call in &calls {
            let owners: Vec<&str> = PERMISSIONS.iter().filter(|p| p.calls.contains(call)).map(|p| p.name).collect();
            assert_eq!(owners.len(), 1, "{call}: {owners:?}");
        }
        for p in &PERMISSIONS {
            for call in p.calls {
                assert!(calls.contains(call), "{} lists {call}, which the GitHub trait does not have", p.name);
            }
        }
        for event in crate::intake::event::handled_events() {
            assert!(PERMISSIONS.iter().any(|p| p.events.contains(&event)), "{event} has no permission");
        }
    }

    fn granted(permissions: &[(&str, &str)], events: &[&str]) -> Installation {
        Installation {
            id: 1,
            account: Account { login: "org".into() },
            permissions: permissions.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            events: events.iter().map(|e| (*e).to_owned()).collect(),
        }
    }

    #[test]
    fn an_installation_lacks_what_it_was_not_granted_and_write_covers_read() {
        let all: Vec<(&str, &str)> = PERMISSIONS.iter().map(|p| (p.name, p.level)).collect();
        let events: Vec<&str> = crate::intake::event::handled_events().collect();
        assert!(missing(&granted(&all, &events)).is_empty());
        let mut upgraded = all.clone();
        upgraded.retain(|(n, _)| *n != "contents");
        upgraded.push(("contents", "write"));
        assert!(missing(&granted(&upgraded, &events)).is_empty(), "write covers read");
        let mut lowered = all.clone();
        lowered.retain(|(n, _)| *n != "checks" && *n != "members");
        lowered.push(("checks", "read"));
        let gaps = missing(&granted(&lowered, &events[1..]));
        assert_eq!(gaps.permissions, ["checks: write", "members: read"]);
        assert_eq!(gaps.events, [events[0]]);
    }
}
