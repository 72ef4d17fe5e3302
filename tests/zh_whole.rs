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
