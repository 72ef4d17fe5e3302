//! Report rendering from `templates/` (minijinja, strict undefined: a missing value is an error,
//! never a blank), escaping of user text (`escape`), and hidden markers (`marker`).
//!
//! Templates receive untrusted strings only through the `inline` and `code` filters, which
//! call [`escape::inline`] and [`escape::code`]. The verdict (`verdict`) renders with its own
//! environment that escapes every printed value by default.

use crate::escape;
pub mod marker;
pub mod performance;
pub mod verdict;

use std::sync::OnceLock;

use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

/// Every template, embedded at build time: `<name>.<lang>.md.j2`.
const TEMPLATES: &[(&str, &str)] = &[
    ("welcome.en.md.j2", include_str!("../../templates/welcome.en.md.j2")),
    ("welcome.zh.md.j2", include_str!("../../templates/welcome.zh.md.j2")),
    ("labels.en.md.j2", include_str!("../../templates/labels.en.md.j2")),
    ("labels.zh.md.j2", include_str!("../../templates/labels.zh.md.j2")),
    ("reuse.en.md.j2", include_str!("../../templates/reuse.en.md.j2")),
    ("reuse.zh.md.j2", include_str!("../../templates/reuse.zh.md.j2")),
    ("dispatch_status.en.md.j2", include_str!("../../templates/dispatch_status.en.md.j2")),
    ("dispatch_status.zh.md.j2", include_str!("../../templates/dispatch_status.zh.md.j2")),
    ("sweep_check_title.en.md.j2", include_str!("../../templates/sweep_check_title.en.md.j2")),
    ("sweep_check_title.zh.md.j2", include_str!("../../templates/sweep_check_title.zh.md.j2")),
    ("sweep_check.en.md.j2", include_str!("../../templates/sweep_check.en.md.j2")),
    ("sweep_check.zh.md.j2", include_str!("../../templates/sweep_check.zh.md.j2")),
    ("sweep_check_points.en.md.j2", include_str!("../../templates/sweep_check_points.en.md.j2")),
    ("sweep_check_points.zh.md.j2", include_str!("../../templates/sweep_check_points.zh.md.j2")),
    ("performance.en.md.j2", include_str!("../../templates/performance.en.md.j2")),
    ("performance.zh.md.j2", include_str!("../../templates/performance.zh.md.j2")),
    ("signoff_refused.en.md.j2", include_str!("../../templates/signoff_refused.en.md.j2")),
    ("signoff_refused.zh.md.j2", include_str!("../../templates/signoff_refused.zh.md.j2")),
    ("signoff_stale.en.md.j2", include_str!("../../templates/signoff_stale.en.md.j2")),
    ("signoff_stale.zh.md.j2", include_str!("../../templates/signoff_stale.zh.md.j2")),
    ("head_note.en.md.j2", include_str!("../../templates/head_note.en.md.j2")),
    ("head_note.zh.md.j2", include_str!("../../templates/head_note.zh.md.j2")),
    ("recipe_note.en.md.j2", include_str!("../../templates/recipe_note.en.md.j2")),
    ("recipe_note.zh.md.j2", include_str!("../../templates/recipe_note.zh.md.j2")),
    ("preflight.en.md.j2", include_str!("../../templates/preflight.en.md.j2")),
    ("preflight.zh.md.j2", include_str!("../../templates/preflight.zh.md.j2")),
    ("preflight_error.en.md.j2", include_str!("../../templates/preflight_error.en.md.j2")),
    ("preflight_error.zh.md.j2", include_str!("../../templates/preflight_error.zh.md.j2")),
    ("preflight_overrun.en.md.j2", include_str!("../../templates/preflight_overrun.en.md.j2")),
    ("preflight_overrun.zh.md.j2", include_str!("../../templates/preflight_overrun.zh.md.j2")),
];

#[derive(Debug, thiserror::Error)]
#[error("rendering template {template}: {source:#}")]
pub struct RenderError {
    pub template: String,
    #[source]
    pub source: minijinja::Error,
}

fn environment() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
        env.add_filter("inline", |s: String| escape::inline(&s));
        env.add_filter("code", |s: String| escape::code(&s));
        for (name, source) in TEMPLATES {
            // The templates are part of the binary; a syntax error is caught by the tests below.
            if let Err(err) = env.add_template(name, source) {
                tracing::error!("template {name} does not compile: {err:#}");
            }
        }
        env
    })
}

/// Renders one template with `context`.
pub fn render(template: &str, context: &impl Serialize) -> Result<String, RenderError> {
    let err = |source| RenderError { template: template.to_string(), source };
    let tmpl = environment().get_template(template).map_err(err)?;
    tmpl.render(minijinja::value::Serde(context)).map_err(err)
}

/// Renders `<name>.en.md.j2` then `<name>.zh.md.j2`, separated by a rule: English, then 中文.
pub fn render_bilingual(name: &str, context: &impl Serialize) -> Result<String, RenderError> {
    let en = render(&format!("{name}.en.md.j2"), context)?;
    let zh = render(&format!("{name}.zh.md.j2"), context)?;
    Ok(format!("{}\n\n---\n\n{}\n", en.trim_end(), zh.trim_end()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_compiles() {
        for (name, _) in TEMPLATES {
            assert!(environment().get_template(name).is_ok(), "{name}");
        }
    }

    /// See `checks::catalog`'s test of the same name: values go in code spans through `code`.
    #[test]
    fn no_template_writes_a_value_inside_hand_written_backticks() {
        let verdict = ("verdict.md.j2", include_str!("../../templates/verdict.md.j2"));
        for (name, text) in TEMPLATES.iter().chain([&verdict]) {
            assert!(!text.contains("`{{"), "{name}: use `{{{{ value | code }}}}`");
        }
    }

    #[test]
    fn missing_values_are_errors() {
        let err = render_bilingual("welcome", &serde_json::json!({"fork": false})).unwrap_err();
        assert!(err.to_string().contains("welcome.en.md.j2"), "{err}");
    }

    #[test]
    fn welcome_is_english_then_chinese_and_pings_nobody() {
        let ctx = serde_json::json!({"changelog_path": "perf-changelog.yaml", "checklist_path": "docs/PR_REVIEW_CHECKLIST.md", "fork": true});
        let text = render_bilingual("welcome", &ctx).unwrap();
        let (en, zh) = text.split_once("\n---\n").unwrap();
        assert!(en.contains("Welcome") && en.contains("Fork PR"));
        assert!(zh.contains("欢迎") && zh.contains("来自派生仓库的 PR"));
        assert!(!text.contains(" @SemiAnalysisAI"), "the team appears only inside a code span");
    }

    #[test]
    fn user_text_goes_through_escaping_filters() {
        let ctx = serde_json::json!({"accepted": false, "command": "/use `x`", "author": "@eve <b>", "reasons": [], "hint": true, "in_force": null});
        let text = render("reuse.en.md.j2", &ctx).unwrap();
        assert!(text.contains("`` /use `x` ``") && text.contains("@\u{200B}eve &lt;b&gt;"), "{text}");
    }
}
