//! Check 4 — Reuse command (spec 30 Check 4, spec 10 §3): an authorized `/use <run_id>` or
//! `/reuse-sweep-run [run_id]` exists; advisory, so a missing one WARNs and never fails.

use chrono::{DateTime, Utc};
use serde_json::json;

use super::{Context, Outcome};
use crate::intake::command::{association_may_command, resolve, scan, CommentView, Scan};

fn timestamp(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).map(|t| t.with_timezone(&Utc)).unwrap_or_default()
}

pub fn check(cx: &Context) -> Outcome {
    let ev = cx.evidence;
    let views: Vec<CommentView> = ev
        .comments
        .iter()
        .map(|c| CommentView {
            id: c.id,
            author: &c.author,
            author_association: &c.author_association,
            body: &c.body,
            created_at: timestamp(&c.created_at),
        })
        .collect();
    if let Some(auth) = resolve(&views, "") {
        let url = ev.comments.iter().find(|c| c.id == auth.comment_id).map(|c| c.url.clone()).unwrap_or_default();
        // A pin names a workflow run or a sweepgate sweep; the qualifying run may be either.
        let other_run = match (auth.command.run_id, auth.command.sweep, crate::pr::sweep_runs::qualifying_run(ev)) {
            (Some(pinned), _, Some(q)) if q.sweep_id.is_some() || q.run_id != pinned => Some(q.label()),
            (None, Some(pinned), Some(q)) if q.sweep_id != Some(pinned.to_string()) => Some(q.label()),
            _ => None,
        };
        let mut o = Outcome::pass("authorized")
            .arg("command", auth.command.to_string())
            .arg("author", auth.author)
            .arg("association", auth.author_association)
            .arg("other_run", other_run);
        if !url.is_empty() {
            o = o.evidence(url);
        }
        return o;
    }
    let ignored: Vec<serde_json::Value> = ev
        .comments
        .iter()
        .filter(|c| !association_may_command(&c.author_association))
        .filter_map(|c| match scan(&c.body) {
            Scan::Command(command) => Some(json!({
                "command": command.to_string(), "author": c.author, "association": c.author_association,
            })),
            _ => None,
        })
        .collect();
    Outcome::warn("none_authorized").arg("ignored", ignored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::evidence;
    use crate::checks::Status;
    use crate::evidence::{Comment, Evidence};

    fn comment(id: u64, author: &str, association: &str, body: &str) -> Comment {
        Comment {
            id,
            author: author.into(),
            author_association: association.into(),
            body: body.into(),
            created_at: format!("2026-11-2{id}T10:00:00Z"),
            updated_at: String::new(),
            url: format!("https://github.com/example/bench/pull/42#issuecomment-{id}"),
        }
    }

    fn with(comments: Vec<Comment>) -> Evidence {
        let mut e = evidence();
        e.comments = comments;
        e
    }

    #[test]
    fn an_authorized_command_on_its_own_line_passes() {
        let e = with(vec![comment(1, "maint", "MEMBER", "Green sweep.\n/reuse-sweep-run 40714803265\n")]);
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Pass);
        assert_eq!(o.message.args["command"], "/reuse-sweep-run 40714803265");
    }

    #[test]
    fn a_command_from_a_contributor_warns_and_names_it() {
        let e = with(vec![comment(1, "vendor-dev", "CONTRIBUTOR", "/reuse-sweep-run 40714803265")]);
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Warn);
        assert_eq!(o.message.args["ignored"][0]["association"], "CONTRIBUTOR");
    }

    #[test]
    fn quoted_or_inline_commands_do_not_count() {
        let e = with(vec![
            comment(1, "maint", "OWNER", "> /use 12"),
            comment(2, "maint", "OWNER", "please `/use 12` later"),
        ]);
        assert_eq!(check(&Context::new(&e)).status, Status::Warn);
    }

    #[test]
    fn a_pinned_sweepgate_sweep_is_authorized_and_compared_with_the_qualifying_run() {
        let mut e = with(vec![comment(1, "maint", "MEMBER", "/reuse-sweep-run pr42-bbbbbbbbbb-a1")]);
        let o = check(&Context::new(&e));
        assert_eq!(
            (o.status, o.message.args["command"].as_str()),
            (Status::Pass, Some("/reuse-sweep-run pr42-bbbbbbbbbb-a1"))
        );
        assert_eq!(o.message.args["other_run"], serde_json::Value::Null);
        let runs = vec![
            crate::checks::tests_support::run("single-node 1k1k / x", "success", 7),
            crate::checks::tests_support::run("eval / x", "success", 7),
        ];
        e.check_runs.insert("b".repeat(40), crate::evidence::Fact::Ok(runs));
        let o = check(&Context::new(&e));
        assert_eq!(o.message.args["other_run"], 7, "the green run is not the pinned sweep");
    }

    #[test]
    fn the_newest_authorized_command_wins() {
        let e = with(vec![comment(1, "maint", "OWNER", "/use 11"), comment(2, "maint2", "COLLABORATOR", "/use 22")]);
        assert_eq!(check(&Context::new(&e)).message.args["command"], "/use 22");
    }
}
