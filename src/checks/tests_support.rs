//! Small Evidence builders for the checks' unit tests.

use crate::evidence::{CheckRun, Evidence, PullRequest, Signoff, SignoffKind};

/// A PR with two commits (`a…a`, `b…b`; head = `b…b`) and a sign-off by `alice`, nothing else.
pub fn evidence() -> Evidence {
    Evidence {
        repository: "example/bench".into(),
        review_date: chrono::NaiveDate::from_ymd_opt(2026, 11, 29).unwrap_or_default(),
        pull_request: PullRequest {
            number: 42,
            title: "Add dsr1 fp4 b200 sglang".into(),
            body: String::new(),
            author: "vendor-dev".into(),
            state: "open".into(),
            draft: false,
            head_sha: "b".repeat(40),
            head_ref: "feature".into(),
            base_sha: "0".repeat(40),
            base_ref: "main".into(),
            policy_sha: None,
            policy_branch: None,
            fork: false,
            labels: vec![],
        },
        live_head_sha: None,
        signoff: Signoff {
            kind: SignoffKind::Comment,
            id: 1001,
            author: "alice".into(),
            body: String::new(),
            url: "https://github.com/example/bench/pull/42#issuecomment-1001".into(),
            created_at: String::new(),
            updated_at: String::new(),
        },
        commits: vec!["a".repeat(40), "b".repeat(40)],
        files: vec![],
        check_runs: Default::default(),
        runs: Default::default(),
        comments: vec![],
        permissions: Default::default(),
        team_members: Default::default(),
        trees: Default::default(),
        blobs: Default::default(),
        texts_at: Default::default(),
        format: crate::evidence::BUNDLE_FORMAT,
        upstream: Default::default(),
        base: Default::default(),
        head: Default::default(),
        policy: Default::default(),
        artifacts: Default::default(),
    }
}

/// A completed check-run of workflow run `run_id`.
pub fn run(name: &str, conclusion: &str, run_id: u64) -> CheckRun {
    CheckRun {
        name: name.into(),
        status: "completed".into(),
        conclusion: Some(conclusion.into()),
        details_url: format!("https://github.com/example/bench/actions/runs/{run_id}/job/1"),
        run_id: Some(run_id),
    }
}

/// Adds a modified file with its patch (and no head content).
pub fn with_change(mut e: Evidence, path: &str, patch: &str) -> Evidence {
    e.files.push(crate::evidence::ChangedFile {
        filename: path.into(),
        previous_filename: None,
        status: "modified".into(),
        patch: Some(patch.into()),
    });
    e
}

/// Adds a file at the head, listed as added by the PR (no patch: the whole file is new).
pub fn with_added_file(mut e: Evidence, path: &str, content: &str) -> Evidence {
    e.head.insert(path, content);
    e.files.push(crate::evidence::ChangedFile {
        filename: path.into(),
        previous_filename: None,
        status: "added".into(),
        patch: None,
    });
    e
}

/// The fixture bundles' checklist template, and the same without the item naming `needle` (the
/// template from before that item, for rules that apply from the template that asks for them).
pub fn checklist_with_and_without(needle: &str) -> (String, String) {
    let template = include_str!("../../fixtures/bundles/green-sweep/base/docs/PR_REVIEW_CHECKLIST.md");
    let older = template.lines().filter(|l| !l.contains(needle)).map(|l| format!("{l}\n")).collect();
    (template.to_owned(), older)
}

/// Renders check `id`'s outcome in both languages through the report's renderer (strict: an
/// argument the template needs and the outcome lacks is an error), panicking with the error.
pub fn assert_renders(id: u8, outcome: &super::Outcome) -> [String; 2] {
    use super::catalog::Lang;
    let result = super::CheckResult { id, outcome: outcome.clone() };
    [Lang::En, Lang::Zh].map(|lang| {
        crate::checks::text::message_text(&result, lang)
            .unwrap_or_else(|e| panic!("check {id} {lang:?}: {e}: {outcome:?}"))
    })
}

/// Every `kind` value anywhere in `value` (findings, their links and settings).
fn kinds_in(value: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
    match value {
        serde_json::Value::Object(map) => {
            if let Some(kind) = map.get("kind").and_then(serde_json::Value::as_str) {
                out.insert(kind.to_owned());
            }
            map.values().for_each(|v| kinds_in(v, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| kinds_in(v, out)),
        _ => {}
    }
}

/// Every problem kind of check `id`'s message `key` renders in both languages (issue 28, done
/// when): each `<x>.kind == '<k>'` branch the catalog's template names in either language must
/// have an example among `examples` (outcomes of that message, as the check builds them), so a
/// new branch without one fails; each example is rendered strictly through the report.
pub fn assert_every_kind_renders(id: u8, key: &str, examples: &[super::Outcome]) {
    let template =
        super::Catalog::embedded().message(id, key).unwrap_or_else(|| panic!("check {id}: no message {key}"));
    let branch = regex::Regex::new(r"[a-z]\.kind == '([a-z_]+)'").expect("valid pattern");
    let mut covered = std::collections::BTreeSet::new();
    for o in examples {
        assert_eq!(o.message.key, key, "check {id}: an example of another message");
        o.message.args.values().for_each(|v| kinds_in(v, &mut covered));
        assert_renders(id, o);
    }
    for text in [&template.en, &template.zh] {
        for k in branch.captures_iter(text) {
            assert!(covered.contains(&k[1]), "check {id} message {key}: kind {} has no example", &k[1]);
        }
    }
}

/// The English text of a message argument: a reason of the catalog rendered (decision ZH1), a
/// string as it is.
pub fn english(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Object(fields) => crate::checks::text::reason_text(fields, super::Lang::En),
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
