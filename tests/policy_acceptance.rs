//! The policy parsers against the real upstream files at InferenceX 843c625 (read in place,
//! never copied). Skipped with a note when the acceptance data is absent.

use std::path::PathBuf;

use sweepgate::domain::checklist_template::{ChecklistTemplate, TemplateVersion, Topic};
use sweepgate::domain::codeowners::Codeowners;
use sweepgate::intake::signoff::{match_template, ItemState, Signoff};

fn acceptance_dir() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("SWEEPGATE_ACCEPTANCE_DIR").map(PathBuf::from),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/acceptance")),
        Some(PathBuf::from("/work/shared/acceptance")),
    ];
    let found = candidates.into_iter().flatten().find(|p| p.join("inferencex/843c625").is_dir());
    if found.is_none() {
        eprintln!("acceptance data not found; skipping (set SWEEPGATE_ACCEPTANCE_DIR)");
    }
    found
}

fn read(rel: &str) -> Option<String> {
    let path = acceptance_dir()?.join("inferencex/843c625").join(rel);
    Some(std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

#[test]
fn real_codeowners_ownership() {
    let Some(text) = read(".github/CODEOWNERS") else { return };
    let (owners, diags) = Codeowners::parse(&text, ".github/CODEOWNERS");
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(owners.rules.len(), 6);
    let (rule, line) = owners.owners_of("configs/amd-master.yaml").unwrap();
    assert_eq!(line, 4);
    assert!(!rule.is_catch_all());
    assert_eq!(rule.owners.len(), 5);
    let (rule, _) = owners.owners_of("perf-changelog.yaml").unwrap();
    assert!(rule.is_catch_all());
    let (rule, _) = owners.owners_of("experimental/operatorx/kernels/a.py").unwrap();
    assert_eq!(rule.owners.len(), 1);
    let (rule, _) = owners.owners_of("MODELS_zh.md").unwrap();
    assert_eq!(rule.teams().collect::<Vec<_>>(), [("InferenceX", "core")]);
}

#[test]
fn real_checklist_is_the_14_item_aug_2026_template() {
    let Some(text) = read("docs/PR_REVIEW_CHECKLIST.md") else { return };
    let (template, diags) = ChecklistTemplate::parse(&text, "docs/PR_REVIEW_CHECKLIST.md");
    assert!(diags.is_empty(), "{diags:?}");
    let template = template.unwrap();
    // 14 top-level items plus the upstream-recipe sub-item (spec 30 §4.5).
    assert_eq!(template.items.len(), 15);
    assert_eq!(template.items.iter().filter(|i| i.parent.is_none()).count(), 14);
    let topics: Vec<Option<Topic>> = template.items.iter().map(|i| i.topic).collect();
    use Topic::*;
    let expected = [T1, T2, T3, T4, T5, T7, T8, T9, T12, T14, T15, T15a, T16, T17, T18];
    assert_eq!(topics, expected.map(Some));
    assert_eq!(template.version, TemplateVersion::Aug2026);

    // The template filled in and checked matches itself item for item.
    let filled =
        text.split("```").nth(1).unwrap().replace("- [ ]", "- [x]").replace("FILL_IN_GITHUB_USERNAME", "alice-amd");
    let signoff = Signoff::parse(&filled).unwrap();
    let m = match_template(&signoff, &template);
    assert!(m.all_checked(), "{m:?}");
    assert_eq!(signoff.signed_by("alice-amd"), Some(true));

    // The Chinese checklist's template block is an older copy (spec 30 §4.4 stale signals): the
    // "recipes are similar" wording, and no append-only item.
    let Some(zh) = read("docs/PR_REVIEW_CHECKLIST_zh.md") else { return };
    let zh_block = zh.split("```").nth(1).unwrap().replace("- [ ]", "- [x]");
    let m = match_template(&Signoff::parse(&zh_block).unwrap(), &template);
    let not_checked: Vec<(String, ItemState)> = m
        .items
        .iter()
        .filter(|i| i.state != ItemState::Checked)
        .map(|i| (template.items[i.template_item].label(), i.state))
        .collect();
    let stale = ItemState::Stale { wording_of: TemplateVersion::Aug2026 };
    assert_eq!(
        not_checked,
        [
            ("T15 (upstream recipe coverage)".to_owned(), stale),
            ("T15a (merged upstream PR link)".to_owned(), stale),
            ("T17 (append-only)".to_owned(), ItemState::Missing),
        ]
    );
}

#[test]
fn real_models_md_english_and_chinese() {
    use chrono::NaiveDate;
    use sweepgate::domain::models_md::{Engine, ModelsMd, NoticeKind, ScenarioStatus};
    let Some(en) = read("MODELS.md") else { return };
    let m = ModelsMd::parse(&en, "MODELS.md").unwrap_or_else(|e| panic!("{e:?}"));
    let day = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
    assert_eq!(m.notices.len(), 2);
    assert_eq!(m.notices[0].last_day, Some(day("2026-08-03")));
    assert!(m.notices[0].enacted.as_ref().unwrap().partial);
    assert_eq!(m.notices[0].tables[1].kind, NoticeKind::SpecDecodeArm);
    assert!(m.notices[0].tables[1].not_yet_enacted);
    assert!(!m.notices[0].tables[0].not_yet_enacted);
    assert_eq!(m.notices[1].last_day, Some(day("2026-08-06")));
    assert_eq!(m.notices[1].enacted.as_ref().unwrap().prs, [2527]);
    assert_eq!(m.scenarios.len(), 4);
    assert_eq!(
        m.scenario("Single-turn 1k8k").unwrap().status,
        ScenarioStatus::Deprecated { since: Some(day("2026-03-27")) }
    );
    assert_eq!(m.models.len(), 12);
    assert!(m.model("kimik2.5").unwrap().retired_on(day("2026-08-07")));
    assert!(!m.model("kimik2.5").unwrap().retired_on(day("2026-08-06")));
    assert!(m.model("glm5.1").unwrap().retired_on(day("2026-08-21")));
    assert_eq!(m.model("qwen3.8").unwrap().added, None);
    assert!(m.model("dsr1").unwrap().lists_active("Single-turn 8k1k"));
    assert_eq!(m.primary_engines("dsv4"), [Engine::Vllm, Engine::Sglang]);
    assert_eq!(m.primary_engines("glm5.2"), [Engine::Sglang]);
    assert!(m.policy_baseline.is_empty());
    let qwen_bf16 = m.notice_rows("qwen3.5").find(|(_, t, _)| t.kind == NoticeKind::Retirement).unwrap().2;
    assert_eq!(qwen_bf16.precisions, ["bf16"]);

    let Some(zh) = read("MODELS_zh.md") else { return };
    let z = ModelsMd::parse(&zh, "MODELS_zh.md").unwrap_or_else(|e| panic!("{e:?}"));
    let prefixes = |m: &ModelsMd| m.models.iter().flat_map(|r| r.prefixes.clone()).collect::<Vec<_>>();
    assert_eq!(prefixes(&z), prefixes(&m));
    assert_eq!(
        z.notices.iter().map(|n| n.last_day).collect::<Vec<_>>(),
        m.notices.iter().map(|n| n.last_day).collect::<Vec<_>>()
    );
    assert_eq!(z.scenarios.len(), 4);
    assert_eq!(z.engines.len(), m.engines.len());
    assert!(sweepgate::domain::models_md::translation_drift(&m, &z).is_empty());
}

/// The support matrix's Prefix column as a reader of the Markdown source sees it: the table
/// under `## Model support matrix` (or `## 模型支持矩阵`), the column headed `Prefix` / `前缀`,
/// the backticked words of each cell. Independent of `ModelsMd`.
fn matrix_prefix_column(text: &str) -> Vec<String> {
    let mut in_matrix = false;
    let mut column = None;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("## ") {
            in_matrix = line.contains("support matrix") || line.contains("支持矩阵");
            column = None;
            continue;
        }
        let line = line.trim();
        if !in_matrix || !line.starts_with('|') {
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        match column {
            None => column = cells.iter().position(|c| c.eq_ignore_ascii_case("prefix") || *c == "前缀"),
            Some(i) if !cells.iter().all(|c| c.chars().all(|ch| ch == '-' || ch == ':')) => {
                let cell = cells.get(i).copied().unwrap_or_default();
                out.extend(cell.split('`').skip(1).step_by(2).map(str::to_owned));
            }
            Some(_) => {}
        }
    }
    out
}

/// Every MODELS.md / MODELS_zh.md upstream ever had (the history bundle, read at test time) and
/// the 843c625 one: the models are the support matrix's Prefix column, every prefix another
/// section names is a matrix model, and no version has a policy-baseline section. The seed's
/// newer policy-baseline section, added to the real file, yields the models it lists and not
/// its commit or `ENV=VALUE` (decision CO1).
#[test]
fn real_models_md_prefixes_in_every_upstream_version() {
    use sweepgate::domain::models_md::ModelsMd;
    let Some(dir) = acceptance_dir() else { return };
    let work = tempfile::tempdir().unwrap();
    let git_dir = work.path().join("ix.git");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git").arg("--git-dir").arg(&git_dir).args(args).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let bundle = dir.join("inferencex-history.bundle");
    let cloned = std::process::Command::new("git")
        .args(["clone", "-q", "--bare", "-b", "upto-2026-08-19"])
        .arg(&bundle)
        .arg(&git_dir)
        .status()
        .unwrap();
    assert!(cloned.success(), "cloning {}", bundle.display());
    let mut versions: Vec<(String, String)> = Vec::new();
    for file in ["MODELS.md", "MODELS_zh.md"] {
        for commit in git(&["log", "--format=%h", "--", file]).lines() {
            versions.push((format!("{commit}:{file}"), git(&["show", &format!("{commit}:{file}")])));
        }
    }
    versions.push(("843c625:MODELS.md".into(), read("MODELS.md").unwrap()));
    versions.push(("843c625:MODELS_zh.md".into(), read("MODELS_zh.md").unwrap()));
    assert!(versions.len() >= 20, "the history has {} MODELS files", versions.len());
    for (at, text) in &versions {
        let m = ModelsMd::parse(text, at).unwrap_or_else(|e| panic!("{at}: {e:?}"));
        let parsed: Vec<String> = m.models.iter().flat_map(|r| r.prefixes.clone()).collect();
        assert_eq!(parsed, matrix_prefix_column(text), "{at}: the support matrix's Prefix column");
        let named = m
            .engines
            .iter()
            .flat_map(|e| &e.prefixes)
            .chain(m.notices.iter().flat_map(|n| &n.tables).flat_map(|t| &t.rows).flat_map(|r| &r.prefixes));
        for p in named {
            assert!(parsed.contains(p), "{at}: `{p}` is named as a model but is not in the support matrix");
        }
        assert!(m.policy_baseline.is_empty(), "{at}: no upstream version has a policy-baseline matrix");
    }
    // The newer section (spec 30 §7.2, seed 004: "musespark is in the policy-baseline matrix
    // (2a45791)"), in an unknown format: prose with a commit and an ENV=VALUE, a table whose
    // first cell is the model's name.
    let section = "\n## Policy-baseline matrix\n\nFrozen at `2a45791`. Listed models may keep \
                   `VLLM_ALLREDUCE_USE_SYMM_MEM=1`.\n\n| Model | Prefix | Since |\n|---|---|---|\n\
                   | DeepSeek-R1-0528 | `dsr1` | 2025-08-13 |\n| Qwen3.5-397B-A17B | `qwen3.5` | 2026-02-16 |\n";
    let text = format!("{}{section}", read("MODELS.md").unwrap());
    let m = ModelsMd::parse(&text, "MODELS.md").unwrap();
    assert_eq!(m.policy_baseline, ["dsr1", "qwen3.5"]);
}
