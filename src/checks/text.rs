//! The catalog's text (`checks/NN-*.toml`, `checks/reasons.toml`) rendered in one language:
//! a row's message, its header sentence, a reason. The checks render their own rows with it
//! (a message that cannot render is a FAIL row), and the reports print what it renders.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use minijinja::{Environment, UndefinedBehavior};

use super::{Catalog, CheckResult, Lang, REASON_KEY};
use crate::escape;

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("check {id}: message '{key}' is not in checks/{id:02}-*.toml or checks/common.toml")]
    UnknownMessage { id: u8, key: String },
    #[error("check {id}: message '{key}' ({lang:?}): {source}")]
    Message { id: u8, key: String, lang: Lang, source: minijinja::Error },
    #[error("template {name}: {source}")]
    Template { name: &'static str, source: minijinja::Error },
}

/// How the catalog's text is written: Markdown for comments and pages, plain text for
/// machine-readable output (`verify --format json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Markdown,
    Plain,
}

/// The verdict's template environment: strict (a missing value is an error) and escaping every
/// value it prints as Markdown text unless a filter (`code`) already made it safe: catalog
/// messages interpolate untrusted values (paths, logins, quoted config values) directly.
pub(crate) fn environment() -> &'static Environment<'static> {
    flavored(Flavor::Markdown)
}

fn flavored(flavor: Flavor) -> &'static Environment<'static> {
    static MARKDOWN: OnceLock<Environment<'static>> = OnceLock::new();
    static PLAIN: OnceLock<Environment<'static>> = OnceLock::new();
    let cell = match flavor {
        Flavor::Markdown => &MARKDOWN,
        Flavor::Plain => &PLAIN,
    };
    cell.get_or_init(|| {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
        if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder().keep_trailing_newline(true).build() {
            env.set_syntax(syntax);
        }
        match flavor {
            Flavor::Markdown => {
                env.set_formatter(|out, state, value| match value.as_str() {
                    Some(text) if !value.is_safe() => {
                        out.write_str(&escape::inline(text)).map_err(minijinja::Error::from)
                    }
                    _ => minijinja::escape_formatter(out, state, value),
                });
                // A reason of the catalog (already rendered, safe) quoted as an error is a
                // sentence of sweepgate's own, printed as it reads; other text is quoted as code.
                env.add_filter("code", |value: minijinja::Value| match value.as_str() {
                    Some(_) if value.is_safe() => value,
                    _ => minijinja::Value::from_safe_string(escape::code(&value.to_string())),
                });
            }
            // Values as they are (one line, bounded, no invisible characters), with no
            // Markdown escape, entity or zero-width space.
            Flavor::Plain => {
                env.set_formatter(|out, _, value| match value.as_str() {
                    Some(text) if !value.is_safe() => {
                        out.write_str(&escape::plain(text)).map_err(minijinja::Error::from)
                    }
                    Some(text) => out.write_str(text).map_err(minijinja::Error::from),
                    None => write!(out, "{value}").map_err(minijinja::Error::from),
                });
                env.add_filter("code", |value: minijinja::Value| match value.as_str() {
                    Some(_) if value.is_safe() => value,
                    _ => minijinja::Value::from_safe_string(escape::plain(&value.to_string())),
                });
            }
        }
        env
    })
}

/// A message argument as the templates see it: every reason object in it (`checks::REASON_KEY`,
/// decision ZH1) is rendered from `checks/reasons.toml` in `lang` into already-escaped text, so a
/// template prints a reason like any other value.
fn template_value(value: &serde_json::Value, lang: Lang, flavor: Flavor) -> Result<minijinja::Value, minijinja::Error> {
    use serde_json::Value as Json;
    Ok(match value {
        Json::Array(items) => {
            items.iter().map(|item| template_value(item, lang, flavor)).collect::<Result<Vec<_>, _>>()?.into()
        }
        Json::Object(fields) => {
            let args: BTreeMap<&str, minijinja::Value> = fields
                .iter()
                .filter(|(name, _)| name.as_str() != REASON_KEY)
                .map(|(name, v)| template_value(v, lang, flavor).map(|v| (name.as_str(), v)))
                .collect::<Result<_, _>>()?;
            match fields.get(REASON_KEY) {
                None => minijinja::Value::from_pairs(args),
                Some(kind) => {
                    let kind = kind.as_str().unwrap_or_default();
                    let template = Catalog::embedded().reason(kind).ok_or_else(|| {
                        minijinja::Error::new(
                            minijinja::ErrorKind::UndefinedError,
                            format!("reason '{kind}' is not in checks/reasons.toml"),
                        )
                    })?;
                    let text = flavored(flavor).render_str(template.get(lang), minijinja::Value::from_pairs(args))?;
                    minijinja::Value::from_safe_string(text.split_whitespace().collect::<Vec<_>>().join(" "))
                }
            }
        }
        other => minijinja::Value::from(minijinja::value::Serde(other)),
    })
}

/// The text of one reason (`checks::Reason`'s fields) in `lang`; a reason the catalog cannot
/// render reads as its kind and the error, so a log note never loses it.
pub fn reason_text(fields: &serde_json::Map<String, serde_json::Value>, lang: Lang) -> String {
    match template_value(&serde_json::Value::Object(fields.clone()), lang, Flavor::Markdown) {
        Ok(value) => value.to_string(),
        Err(e) => format!("{}: {e}", fields.get(REASON_KEY).and_then(|k| k.as_str()).unwrap_or_default()),
    }
}

/// A message's arguments as the templates see them (`template_value`), plus `extra`.
fn template_args(
    args: &BTreeMap<String, serde_json::Value>,
    extra: &[(&'static str, serde_json::Value)],
    lang: Lang,
    flavor: Flavor,
) -> Result<minijinja::Value, minijinja::Error> {
    let mut values: BTreeMap<&str, minijinja::Value> = BTreeMap::new();
    for (name, value) in args.iter().map(|(k, v)| (k.as_str(), v)).chain(extra.iter().map(|(k, v)| (*k, v))) {
        values.insert(name, template_value(value, lang, flavor)?);
    }
    Ok(minijinja::Value::from_pairs(values))
}

/// The one-line text of a check's message in one language, as Markdown.
pub fn message_text(result: &CheckResult, lang: Lang) -> Result<String, RenderError> {
    flavored_message(result, lang, Flavor::Markdown)
}

/// The one-line text of a check's message in one language, in `flavor`.
pub fn flavored_message(result: &CheckResult, lang: Lang, flavor: Flavor) -> Result<String, RenderError> {
    let catalog = Catalog::embedded();
    let key = &result.outcome.message.key;
    let template = catalog
        .message(result.id, key)
        .ok_or_else(|| RenderError::UnknownMessage { id: result.id, key: key.clone() })?;
    let text = template_args(&result.outcome.message.args, &[], lang, flavor)
        .and_then(|args| flavored(flavor).render_str(template.get(lang), args))
        .map_err(|source| RenderError::Message { id: result.id, key: key.clone(), lang, source })?;
    Ok(text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The verdict header's plain sentence for a blocking row (`checks/NN-*.toml`
/// `[headlines.<key>]`, else common.toml's), rendered with the row's arguments plus
/// `check_id`, `check_name` and `check_name_zh`. A sentence that cannot be rendered falls back to
/// `headlines.default`, so the header never withholds the verdict.
pub fn headline_text(result: &CheckResult, lang: Lang) -> String {
    let catalog = Catalog::embedded();
    let spec = catalog.check(result.id);
    let extra = [
        ("check_id", result.id.into()),
        ("check_name", spec.name.en.clone().into()),
        ("check_name_zh", spec.name.zh.clone().into()),
    ];
    let render = |template: &crate::checks::Bilingual| {
        template_args(&result.outcome.message.args, &extra, lang, Flavor::Markdown)
            .and_then(|args| environment().render_str(template.get(lang), args))
            .map(|text| text.split_whitespace().collect::<Vec<_>>().join(" "))
    };
    render(catalog.headline(result.id, &result.outcome.message.key))
        .or_else(|_| render(catalog.headline(result.id, "default")))
        .unwrap_or_else(|error| {
            format!("sweepgate could not render this sentence: {}", escape::inline(&error.to_string()))
        })
}
