//! Check 5 — Checklist template (spec 30 Check 5, §4.3-4.4; ARCHITECTURE decision 8).

use super::{reason, Context, Outcome};
use crate::intake::signoff::{match_template, ItemState};

pub fn check(cx: &Context) -> Outcome {
    let (template_path, template) = match cx.template() {
        Ok(t) => t,
        Err(error) => return Outcome::unreadable(reason("what_checklist_template"), error.clone()),
    };
    let signoff = match cx.signoff() {
        Ok(s) => s,
        Err(error) => return Outcome::unreadable(reason("what_signoff"), error.clone()),
    };
    let matched = match_template(signoff, template);
    let label = |index: usize| template.items.get(index).map(|t| t.label()).unwrap_or_default();
    let (mut missing, mut stale, mut unchecked, mut explained) = (vec![], vec![], vec![], vec![]);
    for m in &matched.items {
        match m.state {
            ItemState::Checked => {}
            ItemState::Missing => missing.push(label(m.template_item)),
            ItemState::Stale { .. } => stale.push(label(m.template_item)),
            ItemState::Unchecked { explained: false } => unchecked.push(label(m.template_item)),
            ItemState::Unchecked { explained: true } => explained.push(label(m.template_item)),
        }
    }
    let has_detail = signoff.detail_line.is_some();
    let signed = signoff.signed.as_ref().filter(|s| !s.placeholder);
    let evidence_ref = cx.evidence.signoff.url.clone();
    if !missing.is_empty() || !stale.is_empty() || !unchecked.is_empty() || !has_detail || signed.is_none() {
        return Outcome::fail("incomplete")
            .arg("missing", missing)
            .arg("stale", stale)
            .arg("unchecked", unchecked)
            .arg("detail", has_detail)
            .arg("signed", signed.is_some())
            .arg("template", template_path.clone())
            .evidence(evidence_ref)
            .evidence(template_path.clone());
    }
    if !explained.is_empty() {
        return Outcome::warn("explained_unchecked").arg("items", explained).evidence(evidence_ref);
    }
    if let Some(s) = signed {
        if !s.login.eq_ignore_ascii_case(&cx.evidence.signoff.author) {
            return Outcome::warn("signed_by_other")
                .arg("signed", s.login.clone())
                .arg("author", cx.evidence.signoff.author.clone())
                .evidence(evidence_ref);
        }
    }
    Outcome::pass("all_checked").arg("count", template.items.len()).evidence(evidence_ref)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::evidence;
    use crate::checks::{Context, Status};
    use crate::evidence::Evidence;

    const TEMPLATE: &str = "# PR review checklist\n\n## Template\n\n```\nAs a PR reviewer and CODEOWNER, I have reviewed this and have:\n- [ ] Verified that the PR passed PR validation. Link:\n- [ ] Verified that the PR passes evals. Link:\n- [ ] Checked against the current MODELS.md that the PR submits no deprecated model, scenario or combination\n- [ ] If the PR uses `append-only: true`, it only adds points inside an existing curve\n\n### Additional detail section:\ninsert any additional info here\n\nSigned: `FILL_IN_GITHUB_USERNAME`\n```\n";

    fn signoff_body(items: &[(&str, bool)], detail: &str, signed: &str) -> String {
        let mut body = String::from("As a PR reviewer and CODEOWNER, I have reviewed this and have:\n");
        for (text, checked) in items {
            body.push_str(&format!("- [{}] {text}\n", if *checked { "x" } else { " " }));
        }
        body.push_str(&format!("\n### Additional detail section:\n{detail}\n\nSigned: `{signed}`\n"));
        body
    }

    const ITEMS: [&str; 4] = [
        "Verified that the PR passed PR validation. Link: https://github.com/example/bench/actions/runs/1",
        "Verified that the PR passes evals. Link: https://github.com/example/bench/actions/runs/1",
        "Checked against the current MODELS.md that the PR submits no deprecated model, scenario or combination",
        "If the PR uses `append-only: true`, it only adds points inside an existing curve",
    ];

    fn with_body(body: String) -> Evidence {
        let mut e = evidence();
        e.base.insert("docs/PR_REVIEW_CHECKLIST.md", TEMPLATE);
        e.signoff.body = body;
        e
    }

    fn outcome(e: &Evidence) -> Outcome {
        check(&Context::new(e))
    }

    #[test]
    fn complete_checked_signoff_passes() {
        let e = with_body(signoff_body(&ITEMS.map(|t| (t, true)), "Recipe: none.", "alice"));
        let o = outcome(&e);
        assert_eq!((o.status, o.message.key.as_str()), (Status::Pass, "all_checked"), "{o:?}");
    }

    #[test]
    fn a_stale_copy_missing_the_append_only_item_fails() {
        let e = with_body(signoff_body(&ITEMS[..3].iter().map(|t| (*t, true)).collect::<Vec<_>>(), "x", "alice"));
        let o = outcome(&e);
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.args["missing"].as_array().map(Vec::len), Some(1), "{o:?}");
    }

    #[test]
    fn unchecked_items_fail_unless_explained() {
        let mut items = ITEMS.map(|t| (t, true));
        items[3].1 = false;
        let o = outcome(&with_body(signoff_body(&items, "Nothing to add.", "alice")));
        assert_eq!(o.status, Status::Fail);
        let o = outcome(&with_body(signoff_body(
            &items,
            "The append-only item does not apply: this PR does not use append-only: true.",
            "alice",
        )));
        assert_eq!(o.status, Status::Warn, "{o:?}");
    }

    #[test]
    fn missing_signed_line_or_other_signer() {
        let body = signoff_body(&ITEMS.map(|t| (t, true)), "x", "FILL_IN_GITHUB_USERNAME");
        assert_eq!(outcome(&with_body(body)).status, Status::Fail);
        let body = signoff_body(&ITEMS.map(|t| (t, true)), "x", "bob");
        assert_eq!(outcome(&with_body(body)).message.key, "signed_by_other");
    }

    #[test]
    fn a_missing_template_is_unreadable_not_a_pass() {
        let mut e = with_body(signoff_body(&ITEMS.map(|t| (t, true)), "x", "alice"));
        e.base = Default::default();
        assert_eq!(outcome(&e).message.key, "unreadable");
    }
}
