//! docs/security.md "Escaping of user text": hostile PR titles, sign-off bodies, sign-off authors,
//! command comments and label names go through the real `sweepgate verify` (a bundle copied from
//! `fixtures/bundles/green-sweep` and edited) and through the label and reuse comment templates.
//! Nothing they contain may ping a user or team, inject HTML, forge a `<!-- sweepgate:` marker or
//! add Markdown structure (tables, links, headings) to the bot's comment.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use sweepgate::intake::labels::{decide, PrFacts};
use sweepgate::report::render_bilingual;

const TEAM_PING: &str = "@SemiAnalysisAI/core";
const HTML: &str = "<img src=x onerror=alert(1)><b>bold</b>";
const FORGED_MARKER: &str = "<!-- sweepgate:verdict signoff=issuecomment-1 sha=0000000 -->";
const TABLE: &str = "| col | col |\n|---|---|\n| [click](https://evil.example) | ![i](x) |";

fn hostile_text() -> String {
    format!("eve {TEAM_PING} {HTML} {FORGED_MARKER} {TABLE} # heading")
}

/// Copies a fixture bundle into `dir` (files only; bundles hold no symlinks).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create bundle dir");
    for entry in std::fs::read_dir(from).expect("read fixture bundle") {
        let entry = entry.expect("dir entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy fixture file");
        }
    }
}

/// `sweepgate verify` on green-sweep with `edit` applied to its evidence.json: (stdout, success).
fn verify_edited(edit: impl FnOnce(&mut Value)) -> (String, bool) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bundles/green-sweep");
    let tmp = tempfile::tempdir().expect("tempdir");
    let bundle = tmp.path().join("bundle");
    copy_dir(&fixture, &bundle);
    let path = bundle.join("evidence.json");
    let mut evidence: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("evidence.json")).expect("evidence is JSON");
    edit(&mut evidence);
    std::fs::write(&path, serde_json::to_string_pretty(&evidence).expect("serialize")).expect("write evidence");
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(["verify", "--bundle"])
        .arg(&bundle)
        .output()
        .expect("run sweepgate verify");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The only stderr of a successful verify is the line naming the bundle format it read.
    let quiet = stderr.lines().all(|l| l.starts_with("sweepgate verify: read bundle format "));
    assert!(quiet || out.status.code() == Some(1), "verify failed: {stderr}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.success())
}

/// The safety properties every comment the bot posts must have, whatever user text it quotes.
fn assert_inert(report: &str, own_markers: usize) {
    assert!(!report.contains("@SemiAnalysisAI"), "team ping survived:\n{report}");
    assert!(!report.contains("<img") && !report.contains("<b>"), "raw HTML survived:\n{report}");
    assert_eq!(report.matches("<!-- sweepgate:").count(), own_markers, "forged marker survived:\n{report}");
    assert!(!report.contains("](https://evil.example)"), "a link survived:\n{report}");
    for line in report.lines() {
        assert!(!line.starts_with('|') && !line.starts_with("# "), "user text started a table/heading: {line}");
    }
    // Every pipe left in the text is escaped, so no table cell boundary can be forged.
    for (i, _) in report.match_indices('|') {
        assert_eq!(report[..i].chars().last(), Some('\\'), "unescaped pipe at byte {i}:\n{report}");
    }
}

#[test]
fn hostile_signed_line_and_title_are_inert_in_the_verdict() {
    let (report, approved) = verify_edited(|e| {
        e["pull_request"]["title"] = json!(hostile_text());
        let body = e["signoff"]["body"].as_str().expect("body").to_owned();
        let signed = hostile_text().replace('\n', " ");
        e["signoff"]["body"] = json!(body.replace("Signed: `nv-owner`", &format!("Signed: {signed}")));
    });
    // Check 5 quotes the Signed name (signed_by_other): the hostile text reaches the report.
    assert!(report.contains("SemiAnalysisAI/core"), "the Signed text is quoted:\n{report}");
    assert!(report.contains("@\u{200B}SemiAnalysisAI/core"), "the ping is broken by a zero-width space");
    assert!(report.contains("&lt;img src=x onerror=alert\\(1\\)&gt;"), "HTML shown as text:\n{report}");
    assert!(report.contains("&lt;\\!-- sweepgate:verdict"), "the forged marker is shown as text");
    assert!(approved, "a WARN (Signed by another login) does not reject");
    assert_inert(&report, 1);
}

#[test]
fn hostile_signoff_author_is_inert_in_a_rejection() {
    let (report, approved) = verify_edited(|e| {
        e["signoff"]["author"] = json!(hostile_text());
    });
    assert!(!approved, "an author who is no CODEOWNER is rejected");
    // The rejection addresses the signer: a non-login is escaped instead of mentioned.
    assert!(report.contains("@eve @\u{200B}SemiAnalysisAI/core"), "signer escaped:\n{report}");
    assert_inert(&report, 1);
}

#[test]
fn hostile_command_and_author_are_inert_in_the_reuse_answer() {
    let command = format!("/use 12 {}", hostile_text());
    let reasons = json!([{"code": "trailing-text", "blocking": true,
        "en": sweepgate::intake::command::CommandError::TrailingText { line: 1, extra: hostile_text() }.en(),
        "zh": sweepgate::intake::command::CommandError::TrailingText { line: 1, extra: hostile_text() }.zh()}]);
    let ctx = json!({"accepted": false, "command": command, "author": hostile_text(), "reasons": reasons, "hint": true, "in_force": null});
    let text = render_bilingual("reuse", &ctx).expect("render reuse");
    assert!(text.contains("@\u{200B}SemiAnalysisAI/core"), "{text}");
    assert_no_html_or_ping_outside_code(&text);
}

#[test]
fn hostile_label_names_are_inert_in_the_label_comment() {
    // A near-miss label name is quoted back to the PR ("Did you mean …?").
    let labels = [format!("Full-Sweep-Fail-Fast {TEAM_PING} {HTML} {FORGED_MARKER}")];
    let decision = decide(&labels, &PrFacts::default());
    let text =
        render_bilingual("labels", &json!({"decision": decision, "head_sha": "abc1234"})).expect("render labels");
    assert_no_html_or_ping_outside_code(&text);
}

/// Text quoted in a code span is shown verbatim (GitHub renders neither HTML nor mentions
/// there); outside code spans nothing hostile may remain.
fn assert_no_html_or_ping_outside_code(text: &str) {
    let mut outside = String::new();
    let mut rest = text;
    while let Some(start) = rest.find('`') {
        outside.push_str(&rest[..start]);
        let run = rest[start..].chars().take_while(|&c| c == '`').count();
        let fence = "`".repeat(run);
        let after = &rest[start + run..];
        match after.find(&fence) {
            Some(end) => rest = &after[end + run..],
            None => {
                rest = after;
                break;
            }
        }
    }
    outside.push_str(rest);
    assert!(!outside.contains("@SemiAnalysisAI"), "ping outside code:\n{text}");
    assert!(!outside.contains('<'), "HTML outside code:\n{text}");
    assert!(!text.contains('\n') || text.lines().all(|l| !l.starts_with('|')), "table row:\n{text}");
}

/// Autolinks, issue references and invisible characters in user text (issue 14 item 8): the
/// reuse comment quotes the author outside a code span, the verdict quotes the Signed name.
const AUTOLINKS: &str = "see https://evil.example/x www.evil.example #12 GH-34 a@b.example";
const TROJAN: &str = "ok\u{202E}gnp.exe\u{2066}x\u{200B}y\u{200D}z\u{FEFF}";

fn assert_no_autolink_or_invisible(text: &str) {
    for live in ["https://evil", "www.evil", " #12", "\\#12", "GH-34", "a@b.example"] {
        assert!(!text.contains(live), "{live:?} survived:\n{text}");
    }
    for c in ['\u{202E}', '\u{2066}', '\u{200D}', '\u{FEFF}'] {
        assert!(!text.contains(c), "invisible {c:?} survived:\n{text}");
    }
    // The only zero-width spaces are the ones the escaper put in front of a link or reference.
    for (i, _) in text.match_indices('\u{200B}') {
        let before = text[..i].chars().last();
        let after = text[i + '\u{200B}'.len_utf8()..].chars().next();
        assert!(
            matches!((before, after), (Some('#' | ':' | '@' | 'H'), _) | (_, Some('.' | '-'))),
            "stray ZWSP at {i}"
        );
    }
}

#[test]
fn autolinks_references_and_invisible_characters_are_inert_in_the_reuse_answer() {
    let author = format!("{AUTOLINKS} {TROJAN}");
    let reasons = json!([{"code": "unauthorized", "blocking": true, "en": "x", "zh": "x"}]);
    let ctx = json!({"accepted": false, "command": "/use 1", "author": author, "reasons": reasons, "hint": false, "in_force": null});
    let text = render_bilingual("reuse", &ctx).expect("render reuse");
    assert!(text.contains("https:\u{200B}//evil.example/x") && text.contains("\\#\u{200B}12"), "{text}");
    assert!(text.contains("ok\u{FFFD}gnp.exe\u{FFFD}x"), "reordering characters are shown:\n{text}");
    assert_no_autolink_or_invisible(&text);
}

#[test]
fn autolinks_references_and_invisible_characters_are_inert_in_the_verdict() {
    let (report, _) = verify_edited(|e| {
        let body = e["signoff"]["body"].as_str().expect("body").to_owned();
        e["signoff"]["body"] = json!(body.replace("Signed: `nv-owner`", &format!("Signed: {AUTOLINKS} {TROJAN}")));
    });
    assert!(report.contains("GH\u{200B}-34"), "the Signed text is quoted:\n{report}");
    assert_no_autolink_or_invisible(&report);
}
