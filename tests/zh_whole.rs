//! The 中文 report is whole Chinese (issue 27): over every fixture bundle, the Chinese verdict
//! (`sweepgate verify --lang zh`) and the Chinese column of the details page carry no run of four
//! or more English words outside code spans, URLs, paths and flags. Every sentence a reader sees
//! comes from `checks/*.toml` or `templates/` in both languages; code passes values.

mod support;

use sweepgate::checks::{verify, Lang};
use sweepgate::evidence::read_bundle;
use sweepgate::github::RepoRef;
use sweepgate::report::verdict::{render_markdown, ReportOptions};
use sweepgate::server::details::DetailsStore;

/// Proper names (models, engines, hardware, upstream's own terms) that are not English prose.
/// Reviewed: each is a name a Chinese reader sees untranslated in upstream's own documents.
const PROPER_NAMES: &[&str] = &[
    "SGLang",
    "vLLM",
    "TensorRT-LLM",
    "TRT-LLM",
    "Dynamo",
    "DeepSeek",
    "NVIDIA",
    "AMD",
    "Pareto",
    "InferenceX",
    "HiCache",
    "MTP",
    "NextN",
    "EAGLE",
    "MoE",
    "ATOM",
];

/// The shortest run of English words that counts as an English sentence inside a Chinese row.
const RUN: usize = 4;

/// `text` without code spans (single or multiple backticks), URLs and HTML comments.
fn without_code(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let ticks = rest[start..].chars().take_while(|c| *c == '`').count();
        let fence = "`".repeat(ticks);
        let after = &rest[start + ticks..];
        match after.find(&fence) {
            Some(end) => {
                out.push(' ');
                rest = &after[end + ticks..];
            }
            None => {
                rest = after;
            }
        }
    }
    out.push_str(rest);
    let out = regex::Regex::new(r"<!--.*?-->|https?://\S+").expect("regex").replace_all(&out, " ").into_owned();
    out.replace('\\', "")
}

/// Is `token` an English word (not a path, flag, number, identifier or proper name)?
fn is_word(token: &str) -> bool {
    let word = token.trim_matches(|c: char| ".,;:()[]!?\"'*&".contains(c));
    !token.starts_with('-')
        && !word.is_empty()
        && word.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && word.chars().all(|c| c.is_ascii_alphabetic() || c == '\'' || c == '-')
        && !PROPER_NAMES.contains(&word)
}

/// The runs of at least [`RUN`] English words in one line of Chinese text.
fn english_runs(line: &str) -> Vec<String> {
    let text = without_code(line);
    let mut runs = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    // A Chinese character or punctuation mark ends a run as any non-word does.
    let spaced: String = text.chars().map(|c| if c.is_ascii() { c.to_string() } else { " — ".into() }).collect();
    for token in spaced.split_whitespace().chain(std::iter::once("—")) {
        if is_word(token) {
            run.push(token);
        } else {
            if run.len() >= RUN {
                runs.push(run.join(" "));
            }
            run.clear();
        }
    }
    runs
}

/// The offending lines of a Markdown text (fenced code blocks are code).
fn offending_lines(source: &str, text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let runs = if fenced { Vec::new() } else { english_runs(line) };
        if !runs.is_empty() {
            found.push(format!("{source}: {runs:?}\n    {line}"));
        }
    }
    found
}

/// The Chinese parts of the details page: every element of class `zh`.
fn details_chinese(html: &str) -> Vec<String> {
    let zh = regex::Regex::new(r#"(?s)class="zh">(.*?)</(?:td|span)>"#).expect("regex");
    zh.captures_iter(html).map(|c| c[1].replace('\n', " ")).collect()
}

#[test]
fn the_detector_finds_english_prose_and_spares_code_paths_flags_and_names() {
    let line = "⚠️ 检查 13（草稿模型精度）：WARN — 已验证：no draft quantization, dtype or KV override in 1 file(s)。";
    assert_eq!(english_runs(line), ["no draft quantization, dtype or KV override in"]);
    for clean in [
        "检查 3：`--max-running-requests is a sweep range` 与 ``a ` b c d e``。",
        "见 https://github.com/a/b/pull/1 与 benchmarks/single_node/x_y.sh 的 --speculative-draft-model-path",
        "SGLang vLLM TRT-LLM Dynamo 的引擎",
        "0.9532（TP8 c32）、0.9532（TP8 c64）",
        "无法读取：`not a readable gzip archive: unexpected end of file`。",
    ] {
        assert_eq!(english_runs(clean), Vec::<String>::new(), "{clean}");
    }
    let report = "中文\n```mermaid\n    y-axis \"Total tput per GPU\" 0 --> 10\n```\nthe row reads English here";
    assert_eq!(offending_lines("r", report).len(), 1, "only the line outside the fence");
    let html = r#"<td class="zh">已验证：the draft is served as it ships</td><span class="zh">检查</span>"#;
    assert_eq!(details_chinese(html), ["已验证：the draft is served as it ships", "检查"]);
}

#[test]
fn every_chinese_verdict_and_details_column_is_whole_chinese() {
    let bundles = support::fixture_bundles();
    assert!(bundles.len() > 100, "fixture bundles are missing");
    let dir = tempfile::tempdir().expect("tempdir");
    let store = DetailsStore::open(&dir.path().join("details.sqlite"), "https://sweepgate.example/", true)
        .expect("details store");
    let repo = RepoRef::parse("example-org/bench-repo").expect("repo");
    let mut found = Vec::new();
    let mut rows = 0;
    for (pr, bundle) in (1..).zip(&bundles) {
        let name = bundle.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let evidence = read_bundle(bundle).expect("fixture bundle reads");
        let verdict = verify(&evidence);
        let options = ReportOptions { lang: Some(Lang::Zh), ..ReportOptions::default() };
        let report = render_markdown(&evidence, &verdict, &options).expect("renders");
        rows += report.lines().filter(|l| l.contains("检查")).count();
        // Fixed labels are Chinese too: the footer names the assessed commit in Chinese.
        assert!(report.contains("评估的提交：") && !report.contains("Assessed commit"), "{name}: {report}");
        found.extend(offending_lines(&format!("{name} (verify --lang zh)"), &report));

        store.record_verdict(&repo, pr, "sig", &evidence.pull_request.head_sha, &verdict);
        store.record_performance(&repo, pr, "sig", &verdict.performance);
        let html = store.render(&repo, pr).expect("details page").expect("served");
        for text in details_chinese(&html) {
            found.extend(offending_lines(&format!("{name} (details page)"), &text));
        }
    }
    assert!(rows > 2000, "the Chinese reports have their rows ({rows})");
    assert!(found.is_empty(), "{} Chinese rows carry English prose:\n{}", found.len(), found.join("\n"));
}

/// Where an English string literal of `src/checks/` may stay: it is never report text.
const NOT_REPORT_TEXT: &[&str] = &["expect(", "panic!(", "#[error(", "tracing::", "unreachable!("];

/// Reviewed: text that is English by nature, not report prose.
const REVIEWED: &[(&str, &str, &str)] = &[
    ("c14_pareto_coverage.rs", "Total tput per GPU (tok/s)", "the Mermaid chart's axis label, inside a code block"),
    ("c14_pareto_coverage.rs", "E2EL (s), by concurrency", "the Mermaid chart's axis label, inside a code block"),
    ("catalog.rs", "", "the catalog's load errors: a broken embedded catalog is a build defect, never a row"),
    ("pr/sweep_runs.rs", "multi-node agentic eval /", "upstream's eval job-name prefix, matched, never shown"),
    ("c09_chat_template.rs", "vllm bench serve", "a benchmark command searched for in scripts, never shown"),
    ("c06_upstream_image.rs", "new model architecture", "words an exception is searched for (decision CO5)"),
    ("c06_upstream_image.rs", "not yet supported", "words an exception is searched for (decision CO5)"),
    ("c06_upstream_image.rs", "not supported upstream", "words an exception is searched for (decision CO5)"),
    ("c06_upstream_image.rs", "no upstream support", "words an exception is searched for (decision CO5)"),
    ("c06_upstream_image.rs", "does not support", "words an exception is searched for (decision CO5)"),
    (
        "pr/generated.rs",
        "{file} does not exist",
        "the matrix layer's missing-file error, quoted as code (decision ZH2)",
    ),
    (
        "text.rs",
        "",
        "the catalog renderer's last-resort texts for a catalog defect (a reason or sentence the embedded \
         catalog lacks or cannot render), which the every-kind-renders tests keep out of builds (CE12); \
         moved here from report/verdict.rs",
    ),
];

/// The shortest run of English words in a string literal of `src/checks/` that counts as a
/// sentence: shorter than in a row ([`RUN`]), as a literal is often a sentence's fragment.
const SOURCE_RUN: usize = 3;

/// The string literals of one line of Rust (raw strings are patterns and skipped; so is `'"'`).
fn literals(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let (mut found, mut i) = (Vec::new(), 0);
    while i < chars.len() {
        let raw = chars[i] == 'r' && matches!(chars.get(i + 1), Some('"' | '#'));
        if raw {
            let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            let start = (i + 2 + hashes).min(chars.len());
            let body: String = chars[start..].iter().collect();
            i = body.find(&close).map_or(chars.len(), |end| start + body[..end].chars().count() + close.len());
        } else if chars[i] == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
        } else if chars[i] == '"' {
            let mut literal = String::new();
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                literal.extend(chars.get(i));
                i += 1;
            }
            found.push(literal);
            i += 1;
        } else {
            i += 1;
        }
    }
    found
}

/// The longest run of English words in a literal (placeholders `{…}` are not words).
fn longest_english_run(literal: &str) -> usize {
    let text = regex::Regex::new(r"\{[^}]*\}").expect("regex").replace_all(literal, " 0 ").into_owned();
    let (mut run, mut best) = (0, 0);
    for token in text.split_whitespace() {
        let word = token.trim_matches(|c: char| ".,;:()!?'".contains(c));
        let english = !word.is_empty()
            && word.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && word.chars().all(|c| c.is_ascii_alphabetic() || c == '\'' || c == '-');
        run = if english { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// The English sentences (4+ words) among the string literals of `src/checks/*.rs` and of the
/// PR model, `src/pr/*.rs` (its reasons reach the rows), outside tests, comments, error/log/panic
/// texts: `(file, literal)`, a PR-model file named `pr/<file>`.
fn english_literals_in_src_checks() -> Vec<(String, String)> {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files: Vec<(String, std::path::PathBuf)> = Vec::new();
    for (dir, prefix) in [("checks", ""), ("pr", "pr/")] {
        let found = std::fs::read_dir(src.join(dir)).expect("src/checks and src/pr");
        for path in found.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "rs"))
        {
            let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
            files.push((format!("{prefix}{name}"), path));
        }
    }
    files.sort();
    let tests_start = regex::Regex::new(r"#\[cfg\(test\)\]\n(?:pub(?:\(crate\))? )?mod tests").expect("regex");
    let mut found = Vec::new();
    for (name, path) in files {
        if name == "tests_support.rs" {
            continue; // compiled only for tests
        }
        let text = std::fs::read_to_string(&path).expect("read source");
        let code = tests_start.find(&text).map_or(text.as_str(), |m| &text[..m.start()]);
        for line in code.lines() {
            if line.trim_start().starts_with("//") || NOT_REPORT_TEXT.iter().any(|k| line.contains(k)) {
                continue;
            }
            for literal in literals(line) {
                if longest_english_run(&literal) >= SOURCE_RUN {
                    found.push((name.clone(), literal));
                }
            }
        }
    }
    found
}

#[test]
fn no_english_sentence_for_a_report_is_built_in_src_checks() {
    assert_eq!(longest_english_run("{key}: the recipe cannot be read: {e}"), 5);
    assert!(longest_english_run("TP{} EP{ep} c{conc}") < SOURCE_RUN);
    assert_eq!(longest_english_run("{path}: no template block"), 3);
    assert_eq!(
        literals(r#"format!("a b", x); Regex::new(r"no match here at all"); "c d e f g""#),
        ["a b", "c d e f g"]
    );
    let found = english_literals_in_src_checks();
    let reviewed =
        |file: &str, literal: &str| REVIEWED.iter().any(|(f, start, _)| *f == file && literal.starts_with(start));
    let new: Vec<String> = found
        .iter()
        .filter(|(f, l)| !reviewed(f, l))
        .map(|(f, l)| format!("src/{}{f}: \"{l}\"", if f.starts_with("pr/") { "" } else { "checks/" }))
        .collect();
    assert!(
        new.is_empty(),
        "English sentences built in Rust for a report (give them a kind in checks/reasons.toml):\n{}",
        new.join("\n")
    );
}

/// The Chinese half of a bilingual text (`report::render_bilingual`: English, rule, 中文).
fn chinese_half(text: &str) -> &str {
    text.split_once("\n---\n").map_or("", |(_, zh)| zh)
}

#[test]
fn the_sweep_check_runs_chinese_text_is_whole_chinese() {
    use sweepgate::domain::ci_priority::PolicySource;
    use sweepgate::sweep::check_run::SweepView;
    use sweepgate::sweep::ledger::{PointRecord, PointState, StoredJson};
    use sweepgate::sweep::plan_jobs::SkippedRow;
    use sweepgate::sweep::scheduler::JobId;

    let record =
        |id: &str, state: PointState, reason: Option<&str>, provenance: Option<serde_json::Value>| PointRecord {
            point_id: id.into(),
            ord: 0,
            family: "single-node".into(),
            is_canary: id == "p0",
            state,
            job_name: format!("sg-{id}"),
            job_id: Some(JobId(format!("1{}", id.len()))),
            sbatch_calls: 1,
            submit_info: None,
            cancel_reason: None,
            reason: reason.map(str::to_owned),
            exit_code: None,
            state_source: None,
            provenance: provenance.map(|p| StoredJson::from_value(&p).expect("JSON")),
        };
    let power = |valid: bool| {
        serde_json::json!({"files": [{"kind": "result"}, {"kind": "result"}],
            "power": [{"power_valid": valid, "reasons": if valid { vec![] } else { vec!["sampling_gap_exceeded"] }}]})
    };
    let records = vec![
        record("p0", PointState::Succeeded, None, Some(power(true))),
        record("p1", PointState::Succeeded, None, Some(power(false))),
        record("p2", PointState::Failed, Some("the job exited with code 3 before it wrote any result"), None),
        record("p3", PointState::Failed, Some("sbatch refused the job: Invalid account"), None),
        record("p4", PointState::Running, None, None),
    ];
    let skipped = [SkippedRow { family: "multi-node".into(), exp_name: "dsr1 | x".into(), runner: "gb200".into() }];
    let notes = ["could not resume on pool local: the ledger is locked by another process".to_owned()];
    let policy =
        PolicySource::File { path: "configs/ci-priority.yaml".into(), at: "0123456789abcdef".into(), proposed: true };
    let not_compared = Err("the PR's evidence could not be collected: HTTP 502".to_owned());
    let view = SweepView {
        check_name: "sweepgate/sweep",
        sweep_id: "pr7-abc-a1",
        head_sha: &"a".repeat(40),
        pools: vec![("local", records)],
        skipped: &skipped,
        error: Some("the plan could not be built because the master configs do not load"),
        cancelled: false,
        notes: &notes,
        priority_policy: Some(&policy),
        performance: Some(&not_compared),
    };
    let out = view.render().expect("renders");
    let mut found = Vec::new();
    for (part, text) in [("summary", &out.output.summary), ("text", &out.output.text)] {
        let zh = chinese_half(text);
        assert!(zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)), "{part} has a Chinese half: {text}");
        found.extend(offending_lines(&format!("check run {part}"), zh));
    }
    let title = out.output.title.split_once(" · ").map_or("", |(_, zh)| zh);
    found.extend(offending_lines("check run title", title));
    assert!(found.is_empty(), "the check run's Chinese text carries English prose:\n{}", found.join("\n"));
    assert!(chinese_half(&out.output.text).contains("2 个结果文件 | 有效"), "{}", out.output.text);
    // Point states are Chinese words in the Chinese half (one English word escapes the run test).
    let zh = format!("{}{}", chinese_half(&out.output.summary), chinese_half(&out.output.text));
    assert!(zh.contains("| 成功 |") && zh.contains("| 运行中 |") && zh.contains("**成功**"), "{zh}");
    for state in ["succeeded", "failed", "running"] {
        assert!(!zh.contains(&format!("| {state} |")), "{state} in the Chinese table: {zh}");
    }
    assert!(out.output.text.contains("2 result files | invalid: sampling_gap_exceeded"), "{}", out.output.text);
}
