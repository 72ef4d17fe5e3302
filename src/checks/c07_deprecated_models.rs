//! Check 7 — Deprecated models (spec 30 Check 7, §7.2): nothing the PR adds, changes or
//! re-enables uses a retired model, a deprecated scenario, or a deprecated model–scenario or
//! precision combination on the review date (deprecations bind only after their last day).

use serde_json::json;

use super::{not_in_force, reason, with_fields, Context, Outcome};
use crate::domain::checklist_template::Topic;
use crate::domain::models_md::{Arm, ModelsMd};
use crate::pr::affected::affected_configs;
use crate::pr::configs::AffectedConfig;

/// Whether `config` runs in `arm`: with speculative decoding (any search-space entry), or
/// without it at all (a config that also runs a draft method is that method's arm: upstream's
/// DSpark configs keep non-spec points on their frontier, #2672).
fn runs_arm(config: &AffectedConfig, arm: Arm) -> bool {
    match arm {
        Arm::Spec => config.speculative(),
        Arm::NonSpec => !config.speculative(),
    }
}

/// MODELS.md's scenario names for a config's scenarios.
fn scenarios(config: &AffectedConfig) -> Vec<String> {
    let mut out: Vec<String> = config
        .fixed_seq
        .iter()
        .map(|(isl, osl)| match (isl, osl) {
            (1024, 1024) => "Single-turn 1k1k".to_owned(),
            (8192, 1024) => "Single-turn 8k1k".to_owned(),
            (1024, 8192) => "Single-turn 1k8k".to_owned(),
            (i, o) => format!("Single-turn {i}/{o}"),
        })
        .collect();
    if config.agentic {
        out.push("Agentic coding".to_owned());
    }
    out
}

fn findings_for(config: &AffectedConfig, models: &ModelsMd, date: chrono::NaiveDate) -> Vec<serde_json::Value> {
    let prefix = config.model_prefix.as_str();
    let mut out = Vec::new();
    let finding = |kind: &str, extra: serde_json::Value| {
        with_fields(json!({"key": config.key, "prefix": prefix, "kind": kind}), extra)
    };
    match models.model(prefix) {
        None => out.push(finding("unlisted", json!({"where": models.file}))),
        Some(row) if row.retired_on(date) => {
            out.push(finding("retired", json!({"where": format!("{}:{}", models.file, row.line)})))
        }
        Some(row) => {
            // The support matrix's "Deprecated scenarios" column, where it names the scenario
            // without a qualifier; a qualified mention ("non-DSpark arm") is an arm rule for
            // the reviewer (catalog 7.e).
            // A scenario the scenario table already deprecates is reported once, from there.
            for scenario in scenarios(config) {
                let table = models.scenario(&scenario).is_some_and(|s| s.deprecated_on(date));
                let listed =
                    row.deprecated.iter().any(|m| m.qualifier.is_empty() && m.scenario.eq_ignore_ascii_case(&scenario));
                if listed && !table {
                    out.push(finding(
                        "matrix",
                        json!({"scenario": scenario, "where": format!("{}:{}", models.file, row.line)}),
                    ));
                }
            }
        }
    }
    for scenario in scenarios(config) {
        if let Some(row) = models.scenario(&scenario).filter(|s| s.deprecated_on(date)) {
            out.push(finding(
                "scenario",
                json!({"scenario": scenario, "where": format!("{}:{}", models.file, row.line)}),
            ));
        }
        for (notice, table, row) in models.notice_rows(prefix) {
            // "Deprecated from day 0" binds whatever the notice's date or enactment (decision RV4).
            if !row.from_day_zero && (table.not_yet_enacted || !notice.in_force_on(date)) {
                continue;
            }
            // A row naming an arm deprecates that arm only, never the other arm of the scenario.
            if row.arm.is_some_and(|arm| !runs_arm(config, arm)) {
                continue;
            }
            let scenario_hit = row.scenarios.iter().any(|s| s.eq_ignore_ascii_case(&scenario));
            let precision_hit = row.precisions.iter().any(|p| p.eq_ignore_ascii_case(&config.precision));
            if scenario_hit && (row.precisions.is_empty() || precision_hit) || precision_hit && row.scenarios.is_empty()
            {
                let kind = if row.from_day_zero { "day_zero" } else { "notice" };
                out.push(finding(
                    kind,
                    json!({
                        "what": row.deprecated,
                        "last_day": notice.last_day.map(|d| d.to_string()).unwrap_or_default(),
                        "where": format!("{}:{}", models.file, row.line),
                    }),
                ));
            }
        }
        // The prose's dated sentences retire the scenario from the day after the last day.
        for sentence in models.notices.iter().flat_map(|n| &n.sentences) {
            let governs = sentence.prefixes.iter().any(|p| p == prefix);
            if governs
                && date > sentence.last_day
                && sentence.scenarios.iter().any(|s| s.eq_ignore_ascii_case(&scenario))
            {
                out.push(finding(
                    "last_day",
                    json!({
                        "scenario": scenario,
                        "last_day": sentence.last_day.to_string(),
                        "where": format!("{}:{}", models.file, sentence.line),
                    }),
                ));
            }
        }
    }
    for sentence in models.notices.iter().flat_map(|n| &n.sentences) {
        if let Some(after) = sentence.fully_retired_after.filter(|d| date > *d) {
            if sentence.prefixes.iter().any(|p| p == prefix) {
                out.push(finding(
                    "fully_retired",
                    json!({"last_day": after.to_string(), "where": format!("{}:{}", models.file, sentence.line)}),
                ));
            }
        }
    }
    // A sentence naming a last day that cannot be read may govern this config: fail closed.
    for unread in models.notices.iter().flat_map(|n| &n.unread).filter(|u| u.may_govern(prefix)) {
        out.push(finding("unread", json!({"where": format!("{}:{}", models.file, unread.line)})));
    }
    out
}

pub fn check(cx: &Context) -> Outcome {
    if let Some(outcome) = not_in_force(cx, Topic::T8) {
        return outcome;
    }
    let configs = match affected_configs(cx) {
        Ok(c) => c,
        Err(error) => return Outcome::unreadable(reason("what_master_configs"), error),
    };
    if configs.is_empty() {
        return Outcome::na("untouched");
    }
    let (file, models) = match cx.models_md() {
        Ok(m) => m,
        Err(reason) => return Outcome::unreadable("MODELS.md", reason.clone()),
    };
    let date = cx.evidence.review_date;
    let findings: Vec<serde_json::Value> = configs.iter().flat_map(|c| findings_for(c, models, date)).collect();
    if !findings.is_empty() {
        let refs: Vec<String> = findings.iter().filter_map(|f| f["where"].as_str().map(str::to_owned)).collect();
        let mut o = Outcome::fail("deprecated").arg("findings", findings).arg("date", date.to_string());
        for r in refs {
            o = o.evidence(r);
        }
        return o;
    }
    let listed: Vec<serde_json::Value> = configs
        .iter()
        .map(|c| json!({"key": c.key, "prefix": c.model_prefix, "scenario": scenarios(c).join(" + ")}))
        .collect();
    Outcome::pass("active").arg("configs", listed).arg("file", file.clone()).arg("date", date.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, with_change};
    use crate::checks::Status;
    use crate::evidence::Evidence;

    const MODELS: &str = "# Models\n\n## Deprecation Notice\n\n### Friday, July 17, 2026\n\n**2026-07-17** is the last day for the following submissions.\n\n| Model | Deprecated | Remains |\n|---|---|---|\n| Qwen 3.5 (`qwen3.5`) | BF16 precision | FP8, FP4 |\n\n### Monday, December 14, 2026\n\n**2026-12-14** is the last day for the following submissions.\n\n| Model | Deprecated | Remains |\n|---|---|---|\n| DeepSeek R1 (`dsr1`) | Single-turn 8k1k | Agentic coding |\n\n## Scenarios\n\n| Scenario | ISL/OSL | Status |\n|---|---|---|\n| Agentic coding | — | Active |\n| Single-turn 8k1k | 8192/1024 | Active |\n| Single-turn 1k1k | 1024/1024 | Deprecated since 2026-07-17 (#2263) |\n\n## Model support matrix\n\n| Model architecture class | Prefix | Date added | Active scenarios | Deprecated scenarios |\n|---|---|---|---|---|\n| DeepSeek R1 | `dsr1` | 2026-01-10 ([#100](https://github.com/example/bench/pull/100)) | Single-turn 8k1k, Agentic coding | Single-turn 1k1k |\n| Qwen 3.5 | `qwen3.5` | 2026-03-01 ([#200](https://github.com/example/bench/pull/200)) | Single-turn 8k1k | — |\n| GPT-OSS | `gptoss` | 2025-08-01 ([#5](https://github.com/example/bench/pull/5)) | None (retired 2026-06-30, [#1900](https://github.com/example/bench/pull/1900)) | Single-turn 8k1k |\n";

    fn config(key: &str, prefix: &str, precision: &str, isl: u32) -> String {
        format!("{key}:\n  image: lmsysorg/sglang:v1\n  model: m\n  model-prefix: {prefix}\n  runner: b200\n  precision: {precision}\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: {isl}\n      osl: 1024\n      search-space:\n      - {{ tp: 8, conc-list: [4] }}\n")
    }

    fn pr(master: &str, date: (i32, u32, u32)) -> Evidence {
        let mut e = with_change(evidence(), "configs/nvidia-master.yaml", "@@ -1,1 +1,2 @@\n+x\n");
        e.head.insert("configs/nvidia-master.yaml", master);
        e.base.insert("MODELS.md", MODELS);
        e.review_date = chrono::NaiveDate::from_ymd_opt(date.0, date.1, date.2).unwrap();
        e
    }

    fn kinds(e: &Evidence) -> (Status, Vec<String>) {
        let o = check(&Context::new(e));
        let kinds = o
            .message
            .args
            .get("findings")
            .and_then(|f| f.as_array())
            .map_or(vec![], |a| a.iter().map(|f| f["kind"].as_str().unwrap_or_default().to_owned()).collect());
        (o.status, kinds)
    }

    /// Every finding kind of `deprecated` renders in both languages (issue 28, done when).
    #[test]
    fn every_finding_kind_renders_in_both_languages() {
        let f = |kind: &str| {
            let finding = json!({"key": "c", "prefix": "dsr1", "kind": kind, "scenario": "8k1k", "what": "fp8",
                "last_day": "2026-09-01", "where": "MODELS.md:4"});
            Outcome::fail("deprecated").arg("findings", vec![finding]).arg("date", "2026-10-01")
        };
        let examples: Vec<Outcome> =
            ["retired", "scenario", "matrix", "notice", "unlisted", "day_zero", "last_day", "fully_retired", "unread"]
                .map(f)
                .into();
        crate::checks::tests_support::assert_every_kind_renders(7, "deprecated", &examples);
    }

    /// MODELS.md's rows and sentences in upstream's shapes (#2406, #2527), over [`MODELS`].
    fn august_models() -> String {
        let arm = "\n| Model | Deprecated arm | Published arm |\n|---|---|---|\n| DeepSeek R1 (`dsr1`) | Single-turn 8k1k, non-MTP (deprecated from day 0) | Single-turn 8k1k, MTP |\n\n**Status: not yet enacted.** The arm still runs.\n\n### Thursday, August 6, 2026\n\n**Thursday, August 6, 2026** is the last day for the **Single-turn 8k1k** scenario on **Qwen 3.5** (`qwen3.5`). The model is **fully retired after August 6, 2026**.\n\n**Friday, August 7, 2026** is the last day for the long-context runs on GPT-OSS (`gptoss`).\n";
        MODELS.replacen(
            "| Qwen 3.5 (`qwen3.5`) | BF16 precision | FP8, FP4 |\n",
            &format!("| Qwen 3.5 (`qwen3.5`) | BF16 precision | FP8, FP4 |\n{arm}"),
            1,
        )
    }

    #[test]
    fn an_arm_deprecated_from_day_zero_fails_that_arm_only() {
        let plain = config("dsr1-fp4-b200-sglang", "dsr1", "fp4", 8192);
        let mut e = pr(&plain, (2026, 11, 29));
        e.base.insert("MODELS.md", august_models().as_str());
        let o = check(&Context::new(&e));
        assert_eq!(kinds(&e), (Status::Fail, vec!["day_zero".into()]), "the table is not yet enacted; day 0 binds");
        assert!(o.message.args["findings"][0]["where"].as_str().unwrap().starts_with("MODELS.md:"), "{o:?}");
        let mtp = plain.replace("{ tp: 8, conc-list: [4] }", "{ tp: 8, conc-list: [4], spec-decoding: mtp }");
        let mut e = pr(&mtp, (2026, 11, 29));
        e.base.insert("MODELS.md", august_models().as_str());
        assert_eq!(kinds(&e).0, Status::Pass, "the MTP arm is the published one");
    }

    #[test]
    fn a_last_day_sentence_retires_the_scenario_from_the_next_day() {
        let master = config("qwen3.5-fp8-b200-sglang", "qwen3.5", "fp8", 8192);
        let mut e = pr(&master, (2026, 8, 6));
        e.base.insert("MODELS.md", august_models().as_str());
        assert_eq!(kinds(&e).0, Status::Pass, "the last day is still allowed");
        e.review_date = chrono::NaiveDate::from_ymd_opt(2026, 8, 7).unwrap();
        assert_eq!(kinds(&e), (Status::Fail, vec!["last_day".into(), "fully_retired".into()]));
        // The unreadable sentence names gptoss only: it may govern a gptoss config, not dsr1.
        let mut e = pr(&config("gptoss-fp4-b200-sglang", "gptoss", "fp4", 1024), (2026, 5, 1));
        e.base.insert("MODELS.md", august_models().as_str());
        assert_eq!(kinds(&e), (Status::Fail, vec!["unread".into()]));
    }

    #[test]
    fn an_active_model_and_scenario_passes() {
        assert_eq!(kinds(&pr(&config("dsr1-fp4-b200-sglang", "dsr1", "fp4", 8192), (2026, 11, 29))).0, Status::Pass);
    }

    #[test]
    fn a_retired_model_fails() {
        assert_eq!(
            kinds(&pr(&config("gptoss-fp4-b200-sglang", "gptoss", "fp4", 8192), (2026, 11, 29))),
            (Status::Fail, vec!["retired".into()])
        );
    }

    #[test]
    fn a_deprecated_scenario_and_precision_fail() {
        let (s, k) = kinds(&pr(&config("dsr1-fp4-b200-sglang", "dsr1", "fp4", 1024), (2026, 11, 29)));
        assert_eq!((s, k), (Status::Fail, vec!["scenario".into()]));
        let (s, k) = kinds(&pr(&config("qwen3.5-bf16-b200-sglang", "qwen3.5", "bf16", 8192), (2026, 11, 29)));
        assert_eq!((s, k), (Status::Fail, vec!["notice".into()]));
    }

    #[test]
    fn a_future_dated_deprecation_still_allows_submissions_up_to_its_last_day() {
        let master = config("dsr1-fp4-b200-sglang", "dsr1", "fp4", 8192);
        assert_eq!(kinds(&pr(&master, (2026, 12, 14))).0, Status::Pass, "the last day is still allowed");
        assert_eq!(kinds(&pr(&master, (2026, 12, 15))), (Status::Fail, vec!["notice".into()]));
    }

    #[test]
    fn an_unlisted_model_fails_and_no_config_change_is_na() {
        assert_eq!(kinds(&pr(&config("newm-fp4-b200-sglang", "newm", "fp4", 8192), (2026, 11, 29))).1, ["unlisted"]);
        assert_eq!(check(&Context::new(&evidence())).status, Status::NotApplicable);
    }

    /// Check 7 came into force with the MODELS.md item (T8): at a base whose template lacks it
    /// (the corpus' #2249, before MODELS.md existed) it does not apply; with the item it does.
    #[test]
    fn the_rule_applies_from_the_template_that_asks_for_it() {
        let template = include_str!("../../fixtures/bundles/green-sweep/base/docs/PR_REVIEW_CHECKLIST.md");
        let older: String = template.lines().filter(|l| !l.contains("MODELS.md")).map(|l| format!("{l}\n")).collect();
        for (text, status) in [(template.to_owned(), Status::Fail), (older, Status::NotApplicable)] {
            let mut e = pr(&config("gptoss-fp4-b200-sglang", "gptoss", "fp4", 8192), (2026, 11, 29));
            e.base.insert("docs/PR_REVIEW_CHECKLIST.md", text);
            assert_eq!(kinds(&e).0, status);
        }
    }

    /// Issue 17 item 4 (Check 7): a scenario the support matrix lists under "Deprecated
    /// scenarios" for the model FAILs even where the scenario table keeps it active for others;
    /// the same config of a model whose row lists it as active passes.
    #[test]
    fn the_support_matrix_deprecated_column_applies() {
        let models = MODELS.replace(
            "| Qwen 3.5 | `qwen3.5` | 2026-03-01 ([#200](https://github.com/example/bench/pull/200)) | Single-turn 8k1k | — |",
            "| Qwen 3.5 | `qwen3.5` | 2026-03-01 ([#200](https://github.com/example/bench/pull/200)) | Agentic coding | Single-turn 8k1k |",
        );
        let mut e = pr(&config("qwen3.5-fp8-b200-sglang", "qwen3.5", "fp8", 8192), (2026, 11, 29));
        e.base.insert("MODELS.md", models.as_str());
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert_eq!(o.message.args["findings"][0]["kind"], "matrix");
        e.base.insert("MODELS.md", MODELS);
        assert_eq!(check(&Context::new(&e)).status, Status::Pass);
    }
}
