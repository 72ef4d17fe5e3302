//! Sign-off fixtures (`fixtures/signoff/*.md`) matched against the fixture repository's
//! checklist template, as Check 5 will consume them.

use std::path::Path;

use sweepgate::domain::checklist_template::{ChecklistTemplate, TemplateVersion, Topic};
use sweepgate::domain::waiver::links_to_waiver;
use sweepgate::intake::signoff::{has_signoff_phrase, match_template, ItemState, Signoff, TemplateMatch};

fn fixture(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn template() -> ChecklistTemplate {
    let (t, diags) =
        ChecklistTemplate::parse(&fixture("repo/docs/PR_REVIEW_CHECKLIST.md"), "docs/PR_REVIEW_CHECKLIST.md");
    assert!(diags.is_empty(), "{diags:?}");
    t.unwrap()
}

fn matched(name: &str) -> (Signoff, TemplateMatch, ChecklistTemplate) {
    let body = fixture(&format!("signoff/{name}"));
    assert!(has_signoff_phrase(&body), "{name} should be a sign-off");
    let signoff = Signoff::parse(&body).unwrap();
    let t = template();
    let m = match_template(&signoff, &t);
    (signoff, m, t)
}

/// Template labels whose state is not `Checked`, with the state.
fn problems(m: &TemplateMatch, t: &ChecklistTemplate) -> Vec<(String, ItemState)> {
    m.items
        .iter()
        .filter(|i| i.state != ItemState::Checked)
        .map(|i| (t.items[i.template_item].label(), i.state))
        .collect()
}

#[test]
fn fixture_template_is_the_newest_shape() {
    let t = template();
    assert_eq!(t.version, TemplateVersion::Newest);
    assert_eq!(t.items.iter().filter_map(|i| i.topic).collect::<Vec<_>>(), Topic::ALL);
}

#[test]
fn complete_signoff() {
    let (s, m, t) = matched("complete.md");
    assert!(m.all_checked(), "{:?}", problems(&m, &t));
    assert!(m.unmatched_signoff_items.is_empty());
    assert_eq!(m.signoff_version, TemplateVersion::Newest);
    assert_eq!(s.signed_by("amd-perf-a"), Some(true));
    let detail: Vec<&str> = s.detail_links().map(|l| l.url.as_str()).collect();
    assert_eq!(detail.len(), 4);
    assert!(detail.iter().any(|u| links_to_waiver(u, 4100)));
    assert!(detail.contains(&"https://github.com/sgl-project/sglang/pull/91234"));
}

#[test]
fn unchecked_items_explained_or_not() {
    let (s, m, t) = matched("unchecked-items.md");
    assert_eq!(s.phrase_line, Some(3));
    assert_eq!(
        problems(&m, &t),
        [
            ("T11 (Dynamo TRT-LLM metrics)".to_owned(), ItemState::Unchecked { explained: true }),
            ("T17 (append-only)".to_owned(), ItemState::Unchecked { explained: false }),
        ]
    );
}

#[test]
fn stale_template_copy() {
    let (s, m, t) = matched("stale-template.md");
    let stale = ItemState::Stale { wording_of: TemplateVersion::Aug2026 };
    assert_eq!(
        problems(&m, &t),
        [
            ("T6 (draft model as shipped)".to_owned(), ItemState::Missing),
            ("T10 (integer all-reduce)".to_owned(), ItemState::Missing),
            ("T11 (Dynamo TRT-LLM metrics)".to_owned(), ItemState::Missing),
            ("T13 (main-branch images)".to_owned(), ItemState::Missing),
            ("T15 (upstream recipe coverage)".to_owned(), stale),
            ("T17 (append-only)".to_owned(), ItemState::Missing),
            ("T19 (Pareto counts)".to_owned(), ItemState::Missing),
        ]
    );
    assert_eq!(m.signoff_version, TemplateVersion::Aug2026);
    assert_eq!(s.signed_by("amd-perf-a"), Some(false), "signed by someone else");
}

#[test]
fn broken_markdown_is_still_read() {
    let (s, m, t) = matched("broken-markdown.md");
    assert_eq!(s.items.len(), 20);
    assert!(m.all_checked(), "{:?}", problems(&m, &t));
    assert_eq!(s.signed_by("amd-perf-a"), Some(true));
    assert_eq!(s.detail, "recipe https://github.com/sgl-project/sglang/pull/91234");
    assert_eq!(s.links.len(), 3);
}

#[test]
fn lower_case_phrase_is_not_a_signoff() {
    assert!(!has_signoff_phrase(&fixture("signoff/not-a-signoff.md")));
}
