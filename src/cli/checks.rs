//! `sweepgate checks`: the sub-rules of checks 0-18 from the embedded catalog, one a line.

use std::process::ExitCode;

use serde_json::json;
use sweepgate::checks::catalog::{How, SubRule};
use sweepgate::checks::{Catalog, Lang};

use super::OutputFormat;

#[derive(Debug, clap::Args)]
pub struct ChecksArgs {
    /// `text`: one sub-rule a line, tab-separated, in English; `json`: both languages.
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutputFormat,
}

/// `<id> <enforced|human> <text> [fixture: … (pass: …) | reason: …] (source: …)`, tab-separated.
fn text_line(rule: &SubRule, lang: Lang) -> String {
    let how = match rule.how {
        How::Enforced => {
            let pass = rule.pass_fixture.as_deref().map(|p| format!(" (pass: {p})")).unwrap_or_default();
            format!("enforced\t{}\tfixture: {}{pass}", rule.text.get(lang), rule.fixture.as_deref().unwrap_or(""))
        }
        How::Human => {
            format!("human\t{}\treason: {}", rule.text.get(lang), rule.reason.as_ref().map_or("", |r| r.get(lang)))
        }
    };
    format!("{}\t{how}\tsource: {}", rule.id, rule.source)
}

pub fn run(args: &ChecksArgs) -> anyhow::Result<ExitCode> {
    let catalog = Catalog::embedded();
    match args.format {
        OutputFormat::Text => {
            for spec in catalog.checks() {
                for rule in &spec.subrules {
                    println!("{}", text_line(rule, Lang::En));
                }
            }
        }
        OutputFormat::Json => {
            let rows: Vec<serde_json::Value> = catalog
                .checks()
                .iter()
                .flat_map(|spec| {
                    spec.subrules.iter().map(move |rule| {
                        let mut row = serde_json::to_value(rule).unwrap_or_default();
                        if let Some(fields) = row.as_object_mut() {
                            fields.insert("check".into(), json!(spec.id));
                            fields.insert("check_name".into(), json!(spec.name.en));
                        }
                        row
                    })
                })
                .collect();
            println!("{}", serde_json::to_string_pretty(&rows)?);
        }
    }
    Ok(ExitCode::SUCCESS)
}
