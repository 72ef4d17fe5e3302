//! Preflight for authors (issue 25 item 3, docs/decisions.md HG5): the rows of a verification
//! that judge the PR's own files, so an author sees the would-be failures before a CODEOWNER
//! spends a review. The verifier's Evidence and checks, unchanged: this only selects rows and
//! narrows two of them to the sub-rules that need neither a sign-off nor CI.

use serde_json::Value;

use super::{CheckResult, Status, Verdict, CHECK_COUNT};
use crate::evidence::Evidence;
use crate::intake::signoff::Signoff;

/// Checks that judge the PR's own files: 6-13, 17 and 18 (Check 12 is the changelog's
/// validation). Check 3 joins them when the PR body links an upstream recipe.
pub const OWN_FILES: [u8; 10] = [6, 7, 8, 9, 10, 11, 12, 13, 17, 18];
/// Check 18's sub-items that need no CI run: (g) and (h) read the sweep's curves.
const CHECK_18_OWN: [&str; 6] = ["a", "b", "c", "d", "e", "f"];
/// Check 3's problems of (a) a link and (b) its merge state; coverage (c) needs the signer's
/// detail section.
const CHECK_3_OWN: [&str; 3] = ["no_link", "not_merged", "unverifiable"];

/// What preflight shows for one head.
#[derive(Debug, Clone, PartialEq)]
pub struct Preflight {
    /// Rows that would FAIL, narrowed to the sub-rules preflight judges, in check order.
    pub fails: Vec<CheckResult>,
    /// Checks judged here that would not fail.
    pub clear: Vec<u8>,
    /// Checks that need a sign-off or CI: judged after sign-off.
    pub after_signoff: Vec<u8>,
}

impl Preflight {
    /// The preflight of `verdict`, the verification of `evidence` whose sign-off body is the
    /// PR body as the additional detail section (`handlers::preflight`).
    pub fn of(evidence: &Evidence, verdict: &Verdict) -> Preflight {
        let links_recipe = Signoff::parse(&evidence.signoff.body).is_ok_and(|s| !s.recipe_links().is_empty());
        let judged = |id: u8| OWN_FILES.contains(&id) || (id == 3 && links_recipe);
        let mut out = Preflight { fails: Vec::new(), clear: Vec::new(), after_signoff: Vec::new() };
        for id in (0..CHECK_COUNT).filter_map(|i| u8::try_from(i).ok()) {
            if !judged(id) {
                out.after_signoff.push(id);
                continue;
            }
            match verdict.result(id).and_then(narrowed) {
                Some(row) => out.fails.push(row),
                None => out.clear.push(id),
            }
        }
        out
    }

    /// The check run's conclusion: `neutral` when something would fail (it never blocks).
    pub fn conclusion(&self) -> &'static str {
        if self.fails.is_empty() {
            "success"
        } else {
            "neutral"
        }
    }
}

/// The row as preflight judges it, `None` when it would not FAIL there.
fn narrowed(row: &CheckResult) -> Option<CheckResult> {
    if row.outcome.status != Status::Fail {
        return None;
    }
    let mut row = row.clone();
    let args = &mut row.outcome.message.args;
    let keep = |list: Option<&mut Value>, field: &str, own: &[&str]| -> usize {
        match list.and_then(Value::as_array_mut) {
            Some(items) => {
                items.retain(|item| item[field].as_str().is_some_and(|v| own.contains(&v)));
                items.len()
            }
            None => 0,
        }
    };
    match (row.id, row.outcome.message.key.as_str()) {
        (18, "inconsistent" | "unverified") => {
            let fails = keep(args.get_mut("fails"), "sub", &CHECK_18_OWN);
            let missing = keep(args.get_mut("missing"), "sub", &CHECK_18_OWN);
            row.outcome.message.key = match (fails, missing) {
                (0, 0) => return None,
                (0, _) => "unverified".into(),
                _ => "inconsistent".into(),
            };
        }
        (3, "not_documented") if keep(args.get_mut("problems"), "kind", &CHECK_3_OWN) == 0 => return None,
        _ => {}
    }
    Some(row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{Outcome, VerdictWord};
    use serde_json::json;

    fn verdict(rows: Vec<CheckResult>) -> Verdict {
        let mut results: Vec<CheckResult> = (0..CHECK_COUNT)
            .filter_map(|i| u8::try_from(i).ok())
            .map(|id| CheckResult { id, outcome: Outcome::pass("x") })
            .collect();
        for row in rows {
            let id = usize::from(row.id);
            results[id] = row;
        }
        Verdict { word: VerdictWord::Rejected, results, performance: Default::default() }
    }

    fn fail(id: u8, key: &str, args: Value) -> CheckResult {
        let mut outcome = Outcome::fail(key);
        if let Value::Object(map) = args {
            for (k, v) in map {
                outcome = outcome.arg(&k, v);
            }
        }
        CheckResult { id, outcome }
    }

    fn with_body(body: &str) -> Evidence {
        let mut e = crate::checks::tests_support::evidence();
        e.signoff.body = format!("### Additional detail section:\n{body}\n");
        e
    }

    #[test]
    fn own_file_failures_are_listed_and_signoff_checks_wait() {
        let v = verdict(vec![fail(0, "not_owner", json!({})), fail(6, "vendor_image", json!({}))]);
        let p = Preflight::of(&with_body("no links"), &v);
        assert_eq!(p.fails.iter().map(|r| r.id).collect::<Vec<_>>(), [6]);
        assert_eq!(p.after_signoff, [0, 1, 2, 3, 4, 5, 14, 15, 16]);
        assert_eq!(p.clear, [7, 8, 9, 10, 11, 12, 13, 17, 18]);
        assert_eq!(p.conclusion(), "neutral");
        let clean = Preflight::of(&with_body(""), &verdict(vec![fail(0, "not_owner", json!({}))]));
        assert_eq!((clean.fails.len(), clean.conclusion()), (0, "success"), "Check 0 waits for the sign-off");
    }

    #[test]
    fn check_18_is_narrowed_to_a_to_f() {
        let g_only = fail(18, "inconsistent", json!({"fails": [{"sub": "g", "text": "x"}], "missing": []}));
        assert!(Preflight::of(&with_body(""), &verdict(vec![g_only])).fails.is_empty(), "(g) needs the sweep");
        let mixed = fail(
            18,
            "inconsistent",
            json!({"fails": [{"sub": "g", "text": "x"}], "missing": [{"sub": "e", "text": "no lookup"}]}),
        );
        let p = Preflight::of(&with_body(""), &verdict(vec![mixed]));
        let row = &p.fails[0];
        assert_eq!(row.outcome.message.key, "unverified");
        assert_eq!(row.outcome.message.args["fails"], json!([]));
        assert_eq!(row.outcome.message.args["missing"], json!([{"sub": "e", "text": "no lookup"}]));
    }

    #[test]
    fn check_3_is_judged_only_when_the_pr_body_links_a_recipe() {
        let open = fail(
            3,
            "not_documented",
            json!({"problems": [{"kind": "not_merged", "url": "https://github.com/sgl-project/sglang/pull/1", "state": "open"},
                                {"kind": "uncovered", "config": "c"}]}),
        );
        let p = Preflight::of(&with_body("no link"), &verdict(vec![open.clone()]));
        assert!(p.fails.is_empty() && p.after_signoff.contains(&3));
        let linked = with_body("Cookbook: https://github.com/sgl-project/sglang/pull/1");
        let p = Preflight::of(&linked, &verdict(vec![open]));
        assert_eq!(p.fails.len(), 1);
        assert_eq!(p.fails[0].outcome.message.args["problems"].as_array().map(Vec::len), Some(1), "(c) waits");
        let covered = fail(3, "not_documented", json!({"problems": [{"kind": "uncovered", "config": "c"}]}));
        assert!(Preflight::of(&linked, &verdict(vec![covered])).fails.is_empty());
    }
}
