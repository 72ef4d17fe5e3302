//! The verdict comment (spec 30 §3.1 with ARCHITECTURE decisions 1-2) and the JSON verdict.

use serde::Serialize;

use super::performance::performance_view;
use crate::checks::c14_pareto_coverage::FrontierChart;
use crate::checks::text::{environment, flavored_message, Flavor};
pub use crate::checks::text::{headline_text, message_text, reason_text, RenderError};
use crate::checks::{Catalog, CheckResult, Lang, Status, Verdict, VerdictWord};
use crate::escape;
use crate::evidence::Evidence;

/// Report settings from the bot's configuration.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// Handles the Pareto escalation (Check 14 WARN) mentions (e.g. `@maint-a`); no other WARN
    /// mentions anyone (InferenceX #3368, decision RV1).
    pub reviewers: Vec<String>,
    /// Which languages to render; `None` renders both (the comment the bot posts).
    pub lang: Option<Lang>,
    /// The digest of the change the verdict covers (`checks::fingerprint`), written into the
    /// marker as `fp=` by the bot; offline verification has none.
    pub fingerprint: Option<String>,
    /// Where policy was read (`Evidence`'s `policy_sha`), written into the marker as `policy=`
    /// by the bot; offline verification renders the marker without it.
    pub policy_sha: Option<String>,
    /// Linked upstream recipe PRs the bot watches for this verdict (`owner/repo:N`), written
    /// into the marker as `watch=` (docs/decisions.md HG4).
    pub watch: Vec<String>,
}

/// The hidden marker that identifies the verdict of one sign-off (ARCHITECTURE decision 2).
pub fn verdict_marker(signoff_key: &str, head_sha: &str, options: &ReportOptions) -> String {
    let mut marker = format!("<!-- sweepgate:verdict signoff={signoff_key} sha={head_sha}");
    if let Some(fp) = &options.fingerprint {
        marker.push_str(&format!(" fp={fp}"));
    }
    // A SHA only (the marker's alphabet): anything else is left out.
    if let Some(policy) = options.policy_sha.as_deref().filter(|s| s.bytes().all(|b| b.is_ascii_hexdigit())) {
        marker.push_str(&format!(" policy={policy}"));
    }
    // A watch list outside the marker's alphabet or bound is left out: the marker must parse.
    let watched = format!("{marker} watch={} -->", options.watch.join("+"));
    if !options.watch.is_empty() && crate::report::marker::Marker::parse(&watched).is_some() {
        return watched;
    }
    marker.push_str(" -->");
    marker
}

/// A blocking row that says "could not be verified" rather than "is wrong": its header
/// sentence comes after the definite findings (the published verdict's order).
fn is_unverified(result: &CheckResult) -> bool {
    matches!(
        result.outcome.message.key.as_str(),
        "unreadable" | "unavailable" | "internal_error" | "status_not_allowed"
    ) || result.outcome.message.args.get("unverified").and_then(serde_json::Value::as_bool) == Some(true)
}

/// How many blocking issues, as the published header writes it ("three blocking issues").
fn count_words(count: usize, lang: Lang) -> String {
    const EN: [&str; 11] = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
    const ZH: [&str; 11] = ["零", "一", "两", "三", "四", "五", "六", "七", "八", "九", "十"];
    let words = match lang {
        Lang::En => EN,
        Lang::Zh => ZH,
    };
    words.get(count).map_or_else(|| count.to_string(), |w| (*w).to_owned())
}

/// `❌ Check 2 (Evals pass): FAIL — …` (English) or `❌ 检查 2（评测通过）：FAIL — …` (Chinese).
/// A message that cannot be rendered (which `verify` already turned into a FAIL row) gets a
/// fixed text naming the error, so one row never withholds the whole verdict.
pub fn row(result: &CheckResult, lang: Lang) -> String {
    let spec = Catalog::embedded().check(result.id);
    let status = result.outcome.status;
    let text = message_text(result, lang)
        .unwrap_or_else(|error| format!("sweepgate could not render this row: {}", escape::inline(&error.to_string())));
    // The sub-rules that decided the row, discreetly after its status (catalog ids, not prose).
    let rules = spec.rules_of(&result.outcome);
    let word = match (rules.is_empty(), lang) {
        (true, _) => status.word().to_owned(),
        (false, Lang::En) => format!("{} ({})", status.word(), rules.join(", ")),
        (false, Lang::Zh) => format!("{}（{}）", status.word(), rules.join("、")),
    };
    match lang {
        Lang::En => format!("{} Check {} ({}): {} — {}", status.emoji(), result.id, spec.name.en, word, text),
        Lang::Zh => format!("{} 检查 {}（{}）：{} — {}", status.emoji(), result.id, spec.name.zh, word, text),
    }
}

/// A pre-rendered row for the layout template: its text is already escaped Markdown.
fn row_view(result: &CheckResult) -> minijinja::Value {
    use minijinja::Value;
    let spec = Catalog::embedded().check(result.id);
    minijinja::context! {
        id => result.id,
        name_en => spec.name.en.clone(),
        name_zh => spec.name.zh.clone(),
        en => Value::from_safe_string(row(result, Lang::En)),
        zh => Value::from_safe_string(row(result, Lang::Zh)),
    }
}

/// Renders the whole verdict comment.
pub fn render_markdown(evidence: &Evidence, verdict: &Verdict, options: &ReportOptions) -> Result<String, RenderError> {
    let by_status = |s: Status| -> Vec<minijinja::Value> { verdict.with_status(s).map(row_view).collect() };
    let fail_rows = by_status(Status::Fail);
    let mut blocking: Vec<&CheckResult> = verdict.with_status(Status::Fail).collect();
    blocking.sort_by_key(|r| (is_unverified(r), r.id));
    let sentences = |lang| -> Vec<String> { blocking.iter().map(|r| headline_text(r, lang)).collect() };
    let mut open_rows = by_status(Status::Fail);
    open_rows.extend(by_status(Status::Warn));
    let closed_rows: Vec<minijinja::Value> = verdict
        .results
        .iter()
        .filter(|r| matches!(r.outcome.status, Status::Pass | Status::NotApplicable))
        .map(row_view)
        .collect();
    let head_sha = &evidence.pull_request.head_sha;
    let reviewers: Vec<String> = options.reviewers.iter().map(|h| escape::mention(h)).collect();
    let reviewers = reviewers.iter().map(|h| format!("@{h}")).collect::<Vec<_>>().join(" ");
    // Check 14's frontier charts (Mermaid text built from sanitized labels; backticks are
    // removed again so nothing can close the fence).
    let charts: String = FrontierChart::of_verdict(verdict)
        .iter()
        .map(|c| format!("```mermaid\n{}\n```\n", c.mermaid().replace('`', " ")))
        .collect();
    let performance = performance_view(&verdict.performance, true);
    let performance_md = |lang| {
        super::performance::markdown(&performance, lang)
            .map(minijinja::Value::from_safe_string)
            .map_err(|e| RenderError::Template { name: "performance.md.j2", source: e.source })
    };
    let context = minijinja::context! {
        performance_en => performance_md(Lang::En)?,
        performance_zh => performance_md(Lang::Zh)?,
        charts => minijinja::Value::from_safe_string(charts),
        marker => minijinja::Value::from_safe_string(verdict_marker(&evidence.signoff.key(), head_sha, options)),
        approved => verdict.word == VerdictWord::Approved,
        head_moved => evidence.head_moved(),
        policy_branch => evidence.pull_request.policy_branch.as_deref().unwrap_or_default(),
        base_ref => evidence.pull_request.base_ref.as_str(),
        live_sha => evidence.live_head_sha.as_deref().unwrap_or_default(),
        short_sha => evidence.short_sha(),
        head_sha => head_sha,
        pareto_warn => verdict.result(14).is_some_and(|r| r.outcome.status == Status::Warn),
        warn_count => verdict.with_status(Status::Warn).count(),
        reviewers => minijinja::Value::from_safe_string(reviewers),
        show_en => options.lang != Some(Lang::Zh),
        show_zh => options.lang != Some(Lang::En),
        signer => minijinja::Value::from_safe_string(escape::mention(&evidence.signoff.author)),
        fail_count => fail_rows.len(),
        fail_count_en => count_words(fail_rows.len(), Lang::En),
        fail_count_zh => count_words(fail_rows.len(), Lang::Zh),
        headlines_en => sentences(Lang::En).into_iter().map(minijinja::Value::from_safe_string).collect::<Vec<_>>(),
        headlines_zh => sentences(Lang::Zh).into_iter().map(minijinja::Value::from_safe_string).collect::<Vec<_>>(),
        fail_rows => fail_rows,
        open_rows => open_rows,
        closed_rows => closed_rows,
    };
    const NAME: &str = "verdict.md.j2";
    let source = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/templates/verdict.md.j2"));
    environment().render_str(source, context).map_err(|source| RenderError::Template { name: NAME, source })
}

#[derive(Serialize)]
struct JsonCheck {
    id: u8,
    name: String,
    name_zh: String,
    status: Status,
    /// Plain text: no Markdown escape, HTML entity or zero-width space.
    summary: String,
    summary_zh: String,
    /// The structured facts the row judged (its message's arguments: settings, files, points).
    details: std::collections::BTreeMap<String, serde_json::Value>,
    /// The enforced sub-rules whose violation or missing evidence made the row FAIL or WARN
    /// (`checks/NN-*.toml` `[[subrules]]` ids); empty for PASS and N/A.
    rules: Vec<String>,
    evidence: Vec<String>,
}

#[derive(Serialize)]
struct JsonVerdict {
    verdict: VerdictWord,
    head_sha: String,
    /// Where policy was read (ARCHITECTURE decision 6); absent when the target branch could
    /// not be resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    policy_sha: Option<String>,
    signoff: String,
    head_moved: bool,
    checks: Vec<JsonCheck>,
    /// Performance against the published curve (issue 26): one row per config, point and metric.
    performance: Vec<crate::results::compare::Row>,
    /// Comparisons left out beyond the bound on rows.
    performance_truncated: usize,
    /// The opted-in WARN row (decision PF4); absent when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    performance_warning: Option<crate::pr::performance::Warning>,
}

/// The machine-readable verdict (`sweepgate verify --format json`).
pub fn render_json(evidence: &Evidence, verdict: &Verdict) -> Result<String, RenderError> {
    let catalog = Catalog::embedded();
    let summary = |r: &CheckResult, lang| {
        flavored_message(r, lang, Flavor::Plain)
            .unwrap_or_else(|error| format!("sweepgate could not render this row: {error}"))
    };
    let checks = verdict
        .results
        .iter()
        .map(|r| {
            let spec = catalog.check(r.id);
            JsonCheck {
                id: r.id,
                name: spec.name.en.clone(),
                name_zh: spec.name.zh.clone(),
                status: r.outcome.status,
                summary: summary(r, Lang::En),
                summary_zh: summary(r, Lang::Zh),
                details: r.outcome.message.args.clone(),
                rules: spec.rules_of(&r.outcome).into_iter().map(str::to_owned).collect(),
                evidence: r.outcome.evidence.clone(),
            }
        })
        .collect();
    let performance = &verdict.performance;
    let out = JsonVerdict {
        verdict: verdict.word,
        head_sha: evidence.pull_request.head_sha.clone(),
        policy_sha: evidence.pull_request.policy_sha.clone(),
        signoff: evidence.signoff.key(),
        head_moved: evidence.head_moved(),
        checks,
        performance: performance.rows.clone(),
        performance_truncated: performance.truncated,
        performance_warning: performance.warning.clone(),
    };
    let mut text = serde_json::to_string_pretty(&out).unwrap_or_default();
    text.push('\n');
    Ok(text)
}
