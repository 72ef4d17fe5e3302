//! `MODELS.md` (spec 30 §7.2): which models and scenarios are active, what is deprecated and
//! from when, and each model's primary engines. Read from the default branch; Check 7 compares
//! the dates exposed here with the review date, Check 6 reads the engine mapping, Check 8 the
//! policy-baseline list.
//!
//! The file mixes prose and tables, so parsing is tolerant: pulldown-cmark finds headings,
//! paragraphs and tables with their lines, and sections are recognised by keywords in English
//! and Chinese (`MODELS_zh.md` has the same structure). Dates are read as ISO (`2026-08-04`),
//! English (`Monday, August 3, 2026`) or Chinese (`2026 年 8 月 3 日`).

use chrono::NaiveDate;
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::diag::Diagnostic;
use crate::yaml::Pos;

/// Largest MODELS.md read.
pub const MAX_MODELS_MD_BYTES: usize = 2 * 1024 * 1024;

/// Precision names recognised in deprecation rows.
const PRECISIONS: [&str; 7] = ["bf16", "fp16", "fp8", "fp4", "nvfp4", "mxfp4", "int4"];

/// Text of a table cell or paragraph: Markdown reduced to plain text, plus its code spans and
/// link targets.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Inline {
    pub text: String,
    pub code: Vec<String>,
    pub links: Vec<String>,
}

impl Inline {
    /// PR numbers of `…/pull/<n>` links.
    pub fn linked_prs(&self) -> Vec<u64> {
        self.links.iter().filter_map(|l| pr_number_in_url(l)).collect()
    }

    /// PR numbers linked as `[#123](…/pull/123)` or written `#123`.
    pub fn prs(&self) -> Vec<u64> {
        let mut out = self.linked_prs();
        for part in self.text.split('#').skip(1) {
            let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(n) = digits.parse() {
                if !out.contains(&n) {
                    out.push(n);
                }
            }
        }
        out
    }

    /// Code spans that look like model prefixes.
    fn prefixes(&self) -> Vec<String> {
        self.code.iter().filter(|c| !c.is_empty() && !c.contains(['/', ' '])).cloned().collect()
    }
}

fn pr_number_in_url(url: &str) -> Option<u64> {
    url.split_once("/pull/").and_then(|(_, n)| n.split(['/', '#', '?']).next()).and_then(|n| n.parse().ok())
}

/// One dated subsection of `## Deprecation Notice`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DeprecationNotice {
    pub heading: String,
    pub line: u32,
    /// The last day submissions are allowed; deprecated **after** this date.
    pub last_day: Option<NaiveDate>,
    /// When and where the notice was carried out, if it says so.
    pub enacted: Option<Enactment>,
    pub tables: Vec<NoticeTable>,
    /// The dated sentences of the notice's prose ("<date> is the last day for the <scenario>
    /// scenario on <models> … fully retired after <date>"; decision RV4).
    pub sentences: Vec<LastDaySentence>,
    /// Sentences that name a last day in a shape this parser cannot read: named facts, never
    /// ignored (lint warns; Check 7 FAILs a config they may govern).
    pub unread: Vec<UnreadSentence>,
}

/// "<date> is the last day for the <scenario> scenario on <models> (`prefix`)": the scenario is
/// retired for those models from the next day; "fully retired after <date>" retires the models.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LastDaySentence {
    pub line: u32,
    pub last_day: NaiveDate,
    pub scenarios: Vec<String>,
    pub prefixes: Vec<String>,
    pub fully_retired_after: Option<NaiveDate>,
}

/// A paragraph of a deprecation notice that names a last day but not in a readable shape.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct UnreadSentence {
    pub line: u32,
    pub text: String,
    /// The model prefixes it names in code spans; empty: it may govern any model.
    pub prefixes: Vec<String>,
}

impl UnreadSentence {
    /// Whether the sentence may govern a config of model `prefix`.
    pub fn may_govern(&self, prefix: &str) -> bool {
        self.prefixes.is_empty() || self.prefixes.iter().any(|p| p == prefix)
    }
}

/// The arm of a spec-decoding A/B pair a deprecation row names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arm {
    /// With speculative decoding (MTP, EAGLE/EAGLE3, DSpark, …).
    Spec,
    /// Without it (`non-MTP`, `non-DSpark`, `STP`, a non-spec-decode baseline).
    NonSpec,
}

/// Draft methods as deprecation cells name them (lower case).
const DRAFT_METHODS: [&str; 5] = ["dspark", "mtp", "eagle3", "eagle", "spec-decode"];

impl Arm {
    /// The arm a deprecation cell names (`Agentic coding, non-DSpark`), if any.
    fn of_cell(text: &str) -> Option<Arm> {
        let lower = text.to_lowercase();
        let non =
            DRAFT_METHODS.iter().any(|m| lower.contains(&format!("non-{m}")) || lower.contains(&format!("non {m}")))
                || lower.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w == "stp");
        if non {
            Some(Arm::NonSpec)
        } else if DRAFT_METHODS.iter().any(|m| lower.contains(m)) {
            Some(Arm::Spec)
        } else {
            None
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Enactment {
    pub date: Option<NaiveDate>,
    pub prs: Vec<u64>,
    pub partial: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoticeKind {
    /// `| Model | Deprecated | Remains |`: scenario and precision retirements.
    Retirement,
    /// `| Model | Deprecated arm | Published arm |` (or a standalone-baseline table).
    SpecDecodeArm,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NoticeTable {
    pub line: u32,
    pub kind: NoticeKind,
    /// Followed by "**Status: not yet enacted.**": not yet binding.
    pub not_yet_enacted: bool,
    pub rows: Vec<NoticeRow>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NoticeRow {
    pub line: u32,
    pub model: String,
    pub prefixes: Vec<String>,
    /// What is deprecated, as written (a scenario, precision or arm).
    pub deprecated: String,
    pub remains: String,
    /// Scenarios the deprecated cell names.
    pub scenarios: Vec<String>,
    /// Precisions the deprecated cell names (e.g. `bf16`).
    pub precisions: Vec<String>,
    /// The spec-decoding arm the deprecated cell names (`non-DSpark`), if any.
    pub arm: Option<Arm>,
    /// "deprecated from day 0": binding whatever the notice's date or enactment status.
    pub from_day_zero: bool,
}

impl DeprecationNotice {
    /// In force on `date`: the last day has passed. A notice without a date is in force.
    pub fn in_force_on(&self, date: NaiveDate) -> bool {
        self.last_day.is_none_or(|last| date > last)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "status")]
pub enum ScenarioStatus {
    Active,
    Deprecated { since: Option<NaiveDate> },
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ScenarioRow {
    pub line: u32,
    /// The scenario name (`Single-turn 8k1k`), without a parenthesised gloss.
    pub name: String,
    pub isl_osl: Option<(u32, u32)>,
    pub status: ScenarioStatus,
    pub prs: Vec<u64>,
}

impl ScenarioRow {
    /// Deprecated on `date` (a deprecation without a date is always in force).
    pub fn deprecated_on(&self, date: NaiveDate) -> bool {
        match self.status {
            ScenarioStatus::Active => false,
            ScenarioStatus::Deprecated { since } => since.is_none_or(|s| s <= date),
        }
    }
}

/// A scenario named in a support-matrix cell, with the words that qualify it there.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ScenarioMention {
    pub scenario: String,
    /// E.g. "(DSpark only)", "non-DSpark arm (deprecated from day 0)"; empty when unqualified.
    pub qualifier: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Retirement {
    pub date: Option<NaiveDate>,
    pub prs: Vec<u64>,
}

/// One row of `## Model support matrix`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ModelRow {
    pub line: u32,
    pub name: String,
    pub prefixes: Vec<String>,
    /// `None` for `TBD`.
    pub added: Option<NaiveDate>,
    pub added_prs: Vec<u64>,
    pub active: Vec<ScenarioMention>,
    pub active_text: String,
    pub deprecated: Vec<ScenarioMention>,
    pub deprecated_text: String,
    /// "None (retired YYYY-MM-DD, #PR)".
    pub retired: Option<Retirement>,
}

impl ModelRow {
    /// Retired on `date`: the retirement date has been reached (an undated retirement counts).
    pub fn retired_on(&self, date: NaiveDate) -> bool {
        self.retired.as_ref().is_some_and(|r| r.date.is_none_or(|d| d <= date))
    }

    /// Whether the row lists `scenario` as active (case-insensitive).
    pub fn lists_active(&self, scenario: &str) -> bool {
        self.active.iter().any(|m| m.scenario.eq_ignore_ascii_case(scenario))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    Vllm,
    Sglang,
}

impl Engine {
    /// The engine's name as MODELS.md and the verdict write it.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Vllm => "vLLM",
            Engine::Sglang => "SGLang",
        }
    }
}

/// One row of the engine submission policy table.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EngineRow {
    pub line: u32,
    pub model: String,
    pub prefixes: Vec<String>,
    pub primary: Vec<Engine>,
    /// The agreed plan-of-record draft models, as written.
    pub agreed_drafts: String,
    pub pending_drafts: String,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ModelsMd {
    pub file: String,
    pub notices: Vec<DeprecationNotice>,
    pub scenarios: Vec<ScenarioRow>,
    pub engines: Vec<EngineRow>,
    pub models: Vec<ModelRow>,
    /// Model prefixes of the policy-baseline matrix (grandfathered for integer all-reduce);
    /// empty when the file has no such section (decision P6).
    pub policy_baseline: Vec<String>,
}

impl ModelsMd {
    /// The support-matrix row of a model prefix.
    pub fn model(&self, prefix: &str) -> Option<&ModelRow> {
        self.models.iter().find(|m| m.prefixes.iter().any(|p| p == prefix))
    }

    /// The scenario row by name (case-insensitive).
    pub fn scenario(&self, name: &str) -> Option<&ScenarioRow> {
        self.scenarios.iter().find(|s| s.name.eq_ignore_ascii_case(name))
    }

    /// The engine submission policy row of a model prefix.
    pub fn engine_row(&self, prefix: &str) -> Option<&EngineRow> {
        self.engines.iter().find(|e| e.prefixes.iter().any(|p| p == prefix))
    }

    /// The primary engines of a model prefix (empty when the table does not list it).
    pub fn primary_engines(&self, prefix: &str) -> &[Engine] {
        self.engine_row(prefix).map_or(&[], |e| &e.primary)
    }

    /// Notice rows naming `prefix`, with their table and notice.
    pub fn notice_rows<'a>(
        &'a self,
        prefix: &'a str,
    ) -> impl Iterator<Item = (&'a DeprecationNotice, &'a NoticeTable, &'a NoticeRow)> + 'a {
        self.notices.iter().flat_map(move |n| {
            n.tables.iter().flat_map(move |t| {
                t.rows.iter().filter(move |r| r.prefixes.iter().any(|p| p == prefix)).map(move |r| (n, t, r))
            })
        })
    }

    /// The deprecation facts as `sweepgate lint` prints them (`path:line: fact: …`), so a
    /// maintainer sees how the notices were understood: each row with its arm and status, and
    /// each dated sentence of the prose.
    pub fn facts(&self) -> Vec<String> {
        let mut out = Vec::new();
        for notice in &self.notices {
            let after = notice.last_day.map_or_else(|| "undated".to_owned(), |d| format!("after {d}"));
            for table in &notice.tables {
                for row in &table.rows {
                    let arm = match row.arm {
                        Some(Arm::Spec) => ", spec-decoding arm",
                        Some(Arm::NonSpec) => ", non-spec-decoding arm",
                        None => "",
                    };
                    let status = if row.from_day_zero {
                        "deprecated from day 0".to_owned()
                    } else if table.not_yet_enacted {
                        format!("deprecated {after}, not yet enacted")
                    } else {
                        format!("deprecated {after}")
                    };
                    out.push(format!(
                        "{}:{}: fact: {} {}{arm}: {status}",
                        self.file,
                        row.line,
                        row.prefixes.join(", "),
                        row.deprecated
                    ));
                }
            }
            for s in &notice.sentences {
                let retired =
                    s.fully_retired_after.map(|d| format!("; model fully retired after {d}")).unwrap_or_default();
                out.push(format!(
                    "{}:{}: fact: {} {}: last day {}, retired from the next day{retired}",
                    self.file,
                    s.line,
                    s.prefixes.join(", "),
                    s.scenarios.join(", "),
                    s.last_day
                ));
            }
        }
        out
    }

    /// A warning for each sentence that names a last day in a shape this parser cannot read.
    pub fn unread_warnings(&self) -> Vec<Diagnostic> {
        self.notices
            .iter()
            .flat_map(|n| &n.unread)
            .map(|u| {
                let text: String = u.text.chars().take(120).collect();
                Diagnostic::new(
                    &self.file,
                    Some(Pos { line: u.line, col: 1 }),
                    format!("a sentence names a last day this parser cannot read (Check 7 fails the configs it may govern): {text}"),
                )
                .warning()
            })
            .collect()
    }

    pub fn parse(text: &str, file: &str) -> Result<ModelsMd, Vec<Diagnostic>> {
        if text.len() > MAX_MODELS_MD_BYTES {
            return Err(vec![Diagnostic::new(file, None, format!("file exceeds {MAX_MODELS_MD_BYTES} bytes"))]);
        }
        let blocks = blocks(text);
        let mut parser =
            Interpreter { file, diags: Vec::new(), out: ModelsMd { file: file.to_owned(), ..ModelsMd::default() } };
        parser.run(&blocks);
        parser.keep_matrix_baseline();
        let Interpreter { mut diags, out, .. } = parser;
        for (section, present) in
            [("## Scenarios", !out.scenarios.is_empty()), ("## Model support matrix", !out.models.is_empty())]
        {
            if !present {
                diags.push(Diagnostic::new(file, None, format!("no `{section}` table found")));
            }
        }
        if diags.iter().any(|d| d.severity == crate::diag::Severity::Error) {
            Err(diags)
        } else {
            Ok(out)
        }
    }
}

/// Warnings where a translation (`MODELS_zh.md`) disagrees with `MODELS.md` on the facts the
/// checks read: model prefixes, notice dates, scenario statuses.
pub fn translation_drift(english: &ModelsMd, translation: &ModelsMd) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let file = translation.file.as_str();
    let prefixes = |m: &ModelsMd| m.models.iter().flat_map(|r| r.prefixes.iter().cloned()).collect::<Vec<_>>();
    let (en, tr) = (prefixes(english), prefixes(translation));
    for p in en.iter().filter(|p| !tr.contains(p)) {
        out.push(
            Diagnostic::new(file, None, format!("model `{p}` is in {} but not in this translation", english.file))
                .warning(),
        );
    }
    for row in translation.models.iter().filter(|r| r.prefixes.iter().any(|p| !en.contains(p))) {
        out.push(
            Diagnostic::new(
                file,
                Some(Pos { line: row.line, col: 1 }),
                format!("model `{}` is not in {}", row.name, english.file),
            )
            .warning(),
        );
    }
    for (e, t) in english.models.iter().zip(&translation.models) {
        if e.prefixes == t.prefixes
            && (e.added != t.added || e.retired.as_ref().map(|r| r.date) != t.retired.as_ref().map(|r| r.date))
        {
            out.push(
                Diagnostic::new(
                    file,
                    Some(Pos { line: t.line, col: 1 }),
                    format!("dates of `{}` differ from {} line {}", t.name, english.file, e.line),
                )
                .warning(),
            );
        }
    }
    let days = |m: &ModelsMd| m.notices.iter().map(|n| n.last_day).collect::<Vec<_>>();
    if days(english) != days(translation) {
        out.push(
            Diagnostic::new(file, None, format!("deprecation notice dates differ from {}", english.file)).warning(),
        );
    }
    let statuses = |m: &ModelsMd| m.scenarios.iter().map(|s| s.status).collect::<Vec<_>>();
    if statuses(english) != statuses(translation) {
        out.push(Diagnostic::new(file, None, format!("scenario statuses differ from {}", english.file)).warning());
    }
    out
}

/// Which `##` section the interpreter is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SectionKind {
    Deprecation,
    Scenarios,
    Guidelines,
    Matrix,
    PolicyBaseline,
    Other,
}

fn section_kind(title: &str) -> SectionKind {
    let t = title.to_lowercase();
    if t.contains("policy-baseline") || t.contains("policy baseline") || t.contains("策略基线") {
        SectionKind::PolicyBaseline
    } else if t.contains("deprecation") || t.contains("弃用") {
        SectionKind::Deprecation
    } else if t.contains("support matrix") || t.contains("支持矩阵") {
        SectionKind::Matrix
    } else if t.starts_with("scenario") || t == "场景" {
        SectionKind::Scenarios
    } else if t.contains("agentx") {
        SectionKind::Guidelines
    } else {
        SectionKind::Other
    }
}

struct Interpreter<'a> {
    file: &'a str,
    diags: Vec<Diagnostic>,
    out: ModelsMd,
}

impl Interpreter<'_> {
    fn error(&mut self, line: u32, message: String) {
        self.diags.push(Diagnostic::new(self.file, Some(Pos { line, col: 1 }), message));
    }

    fn run(&mut self, blocks: &[Block]) {
        // Scenario names first: deprecation notices, which come earlier, refer to them.
        let mut section = SectionKind::Other;
        for block in blocks {
            match block {
                Block::Heading { level, text, .. } if *level <= 2 => section = section_kind(&text.text),
                Block::Table { line, head, rows } if section == SectionKind::Scenarios => {
                    self.scenario_table(*line, head, rows)
                }
                _ => {}
            }
        }
        let mut section = SectionKind::Other;
        for block in blocks {
            match block {
                Block::Heading { level, text, line } => {
                    if *level <= 2 {
                        section = section_kind(&text.text);
                    } else if section_kind(&text.text) == SectionKind::PolicyBaseline {
                        section = SectionKind::PolicyBaseline;
                    }
                    if section == SectionKind::Deprecation && *level == 3 {
                        let last_day = parse_date(&text.text);
                        if last_day.is_none() {
                            self.error(
                                *line,
                                format!("deprecation notice `{}` has no date this parser can read", text.text),
                            );
                        }
                        self.out.notices.push(DeprecationNotice {
                            heading: text.text.clone(),
                            line: *line,
                            last_day,
                            enacted: None,
                            tables: Vec::new(),
                            sentences: Vec::new(),
                            unread: Vec::new(),
                        });
                    }
                }
                Block::Para { text, line } => match section {
                    SectionKind::Deprecation => self.notice_paragraph(text, *line),
                    SectionKind::PolicyBaseline => self.baseline(text),
                    _ => {}
                },
                Block::Table { line, head, rows } => match section {
                    SectionKind::Deprecation => self.notice_table(*line, head, rows),
                    SectionKind::Guidelines => self.engine_table(head, rows),
                    SectionKind::Matrix => self.matrix_table(*line, head, rows),
                    SectionKind::PolicyBaseline => {
                        for cell in rows.iter().flat_map(|(_, cells)| cells) {
                            self.baseline(cell);
                        }
                    }
                    SectionKind::Scenarios | SectionKind::Other => {}
                },
            }
        }
    }

    /// Candidate baseline prefixes: every code span of the section, in its prose and in every
    /// cell of its tables. Only those the support matrix lists are kept (`keep_matrix_baseline`):
    /// a commit hash or an `ENV=VALUE` in the prose is no model.
    fn baseline(&mut self, text: &Inline) {
        for p in text.prefixes() {
            if !self.out.policy_baseline.contains(&p) {
                self.out.policy_baseline.push(p);
            }
        }
    }

    /// Keeps the baseline entries that are model prefixes of the support matrix (decision CO1).
    fn keep_matrix_baseline(&mut self) {
        let models = &self.out.models;
        self.out.policy_baseline.retain(|p| models.iter().any(|m| m.prefixes.contains(p)));
    }

    fn notice_paragraph(&mut self, text: &Inline, line: u32) {
        let lower = text.text.to_lowercase();
        let scenario_names: Vec<String> = self.out.scenarios.iter().map(|s| s.name.clone()).collect();
        let Some(notice) = self.out.notices.last_mut() else { return };
        if lower.contains("is the last day for") {
            match last_day_sentence(text, line, &scenario_names) {
                Some(Some(sentence)) => notice.sentences.push(sentence),
                Some(None) => {}
                None => notice.unread.push(UnreadSentence { line, text: text.text.clone(), prefixes: text.prefixes() }),
            }
        }
        let status_line = lower.starts_with("status") || lower.starts_with("状态");
        if status_line && (lower.contains("not yet enacted") || lower.contains("尚未执行")) {
            if let Some(table) = notice.tables.last_mut() {
                table.not_yet_enacted = true;
            }
            return;
        }
        let enacted = lower.starts_with("enacted on")
            || lower.starts_with("partially enacted on")
            || (lower.starts_with("已于") && lower.contains("执行"));
        if enacted {
            let partial = lower.starts_with("partially") || lower.contains("部分");
            notice.enacted = Some(Enactment { date: parse_date(&text.text), prs: text.linked_prs(), partial });
        }
        if notice.last_day.is_none() && (lower.contains("last day") || lower.contains("最后运行日")) {
            notice.last_day = parse_date(&text.text);
        }
    }

    fn notice_table(&mut self, line: u32, head: &[Inline], rows: &[(u32, Vec<Inline>)]) {
        if head.len() < 3 {
            self.error(
                line,
                format!("deprecation table has {} columns; expected | Model | Deprecated | Remains |", head.len()),
            );
            return;
        }
        let second = head.get(1).map(|c| c.text.to_lowercase()).unwrap_or_default();
        let kind = if second.contains("arm")
            || second.contains("baseline")
            || second.contains("分支")
            || second.contains("基线")
        {
            NoticeKind::SpecDecodeArm
        } else {
            NoticeKind::Retirement
        };
        let scenario_names: Vec<String> = self.out.scenarios.iter().map(|s| s.name.clone()).collect();
        let mut parsed = Vec::new();
        for (row_line, cells) in rows {
            let [model, deprecated, remains, ..] = cells.as_slice() else {
                self.error(*row_line, "deprecation row has fewer than 3 cells".into());
                continue;
            };
            let prefixes = model.prefixes();
            if prefixes.is_empty() {
                self.error(*row_line, format!("model `{}` names no prefix; write `Name (\\`prefix\\`)`", model.text));
            }
            let deprecated_lower = deprecated.text.to_lowercase();
            let precisions = PRECISIONS
                .iter()
                .filter(|p| deprecated_lower.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w == **p))
                .map(|p| p.to_string())
                .collect();
            parsed.push(NoticeRow {
                arm: Arm::of_cell(&deprecated.text),
                from_day_zero: deprecated_lower.contains("deprecated from day 0"),
                line: *row_line,
                model: model.text.clone(),
                prefixes,
                deprecated: deprecated.text.clone(),
                remains: remains.text.clone(),
                scenarios: mentions(&deprecated.text, &scenario_names).into_iter().map(|m| m.scenario).collect(),
                precisions,
            });
        }
        let Some(notice) = self.out.notices.last_mut() else {
            self.error(line, "deprecation table outside a dated `###` notice".into());
            return;
        };
        notice.tables.push(NoticeTable { line, kind, not_yet_enacted: false, rows: parsed });
    }

    fn scenario_table(&mut self, line: u32, head: &[Inline], rows: &[(u32, Vec<Inline>)]) {
        if head.len() < 3 {
            self.error(
                line,
                format!("scenario table has {} columns; expected | Scenario | ISL/OSL | Status |", head.len()),
            );
            return;
        }
        for (row_line, cells) in rows {
            let [name, seq, status, ..] = cells.as_slice() else {
                self.error(*row_line, "scenario row has fewer than 3 cells".into());
                continue;
            };
            let lower = status.text.to_lowercase();
            // "Active" first: an active row may still link to the deprecation notice.
            let status = if lower.starts_with("active") || lower.starts_with("启用") {
                ScenarioStatus::Active
            } else if lower.contains("deprecated") || lower.contains("弃用") {
                ScenarioStatus::Deprecated { since: parse_date(&status.text) }
            } else {
                self.error(
                    *row_line,
                    format!("scenario `{}`: status must start with Active or say Deprecated", name.text),
                );
                continue;
            };
            let prs = cells.get(2).map(Inline::prs).unwrap_or_default();
            self.out.scenarios.push(ScenarioRow {
                line: *row_line,
                name: strip_gloss(&name.text),
                isl_osl: parse_isl_osl(&seq.text),
                status,
                prs,
            });
        }
    }

    fn engine_table(&mut self, head: &[Inline], rows: &[(u32, Vec<Inline>)]) {
        let is_engine_table = head.get(1).is_some_and(|c| {
            let t = c.text.to_lowercase();
            t.contains("primary") || t.contains("首选")
        });
        if !is_engine_table {
            return;
        }
        for (row_line, cells) in rows {
            let Some(model) = cells.first() else { continue };
            let engines = cells.get(1).map(|c| c.text.to_lowercase()).unwrap_or_default();
            let mut primary = Vec::new();
            if engines.contains("vllm") {
                primary.push(Engine::Vllm);
            }
            if engines.contains("sglang") {
                primary.push(Engine::Sglang);
            }
            if primary.is_empty() {
                self.error(*row_line, format!("model `{}` names no primary engine (vLLM or SGLang)", model.text));
            }
            self.out.engines.push(EngineRow {
                line: *row_line,
                model: model.text.clone(),
                prefixes: model.prefixes(),
                primary,
                agreed_drafts: cells.get(2).map(|c| c.text.clone()).unwrap_or_default(),
                pending_drafts: cells.get(3).map(|c| c.text.clone()).unwrap_or_default(),
            });
        }
    }

    fn matrix_table(&mut self, line: u32, head: &[Inline], rows: &[(u32, Vec<Inline>)]) {
        if head.len() < 5 {
            self.error(
                line,
                format!(
                    "support matrix has {} columns; expected | Model architecture class | Prefix | Date added | \
                     Active scenarios | Deprecated scenarios |",
                    head.len()
                ),
            );
            return;
        }
        let scenario_names: Vec<String> = self.out.scenarios.iter().map(|s| s.name.clone()).collect();
        for (row_line, cells) in rows {
            let [name, prefix, added, active, deprecated, ..] = cells.as_slice() else {
                self.error(*row_line, "support-matrix row has fewer than 5 cells".into());
                continue;
            };
            let prefixes = prefix.prefixes();
            if prefixes.is_empty() {
                self.error(*row_line, format!("model `{}`: the Prefix cell has no `prefix`", name.text));
                continue;
            }
            let added_text = added.text.trim();
            let tbd = added_text.eq_ignore_ascii_case("tbd") || added_text == "待定";
            let added_date = parse_date(added_text);
            if added_date.is_none() && !tbd {
                self.error(
                    *row_line,
                    format!("model `{}`: Date added `{added_text}` is neither YYYY-MM-DD nor TBD", name.text),
                );
            }
            let active_lower = active.text.to_lowercase();
            let retired = (active_lower.starts_with("none") || active.text.starts_with('无'))
                .then(|| Retirement { date: parse_date(&active.text), prs: active.prs() });
            self.out.models.push(ModelRow {
                line: *row_line,
                name: name.text.clone(),
                prefixes,
                added: added_date,
                added_prs: added.prs(),
                active: if retired.is_some() { Vec::new() } else { mentions(&active.text, &scenario_names) },
                active_text: active.text.clone(),
                deprecated: mentions(&deprecated.text, &scenario_names),
                deprecated_text: deprecated.text.clone(),
                retired,
            });
        }
    }
}

/// Scenario names found in `text`, in order, each with the text up to the next mention.
fn mentions(text: &str, names: &[String]) -> Vec<ScenarioMention> {
    let lower = text.to_lowercase();
    let mut found: Vec<(usize, usize, &String)> = names
        .iter()
        .filter(|n| !n.is_empty())
        .flat_map(|n| {
            let needle = n.to_lowercase();
            lower.match_indices(&needle).map(move |(i, m)| (i, i + m.len(), n)).collect::<Vec<_>>()
        })
        .collect();
    found.sort();
    let mut out = Vec::new();
    for (k, (_, end, name)) in found.iter().enumerate() {
        let next = found.get(k + 1).map_or(lower.len(), |(s, _, _)| *s);
        let qualifier = lower
            .get(*end..next)
            .and_then(|_| text.get(*end..next))
            .unwrap_or_default()
            .trim()
            .trim_start_matches([',', '、', '，'])
            .trim()
            .trim_end_matches([',', '、', '，'])
            .trim();
        // A conjunction before the next mention belongs to neither.
        let qualifier = ["and", "与", "和"]
            .iter()
            .find_map(|c| if qualifier == *c { Some("") } else { qualifier.strip_suffix(&format!(" {c}")) })
            .unwrap_or(qualifier)
            .trim();
        out.push(ScenarioMention { scenario: (*name).clone(), qualifier: qualifier.to_owned() });
    }
    out
}

/// "Agentic coding" from "智能体编码（agentic coding）" style cells: text before a parenthesis.
/// A notice paragraph that says "… is the last day for …": `Some(None)` when it introduces the
/// notice's tables ("the scenarios … listed below", "the following submissions"), `Some(sentence)`
/// for "<date> is the last day for the <scenario> scenario on <models> (`prefix`)", `None` when
/// its date, scenario or models cannot be read.
fn last_day_sentence(text: &Inline, line: u32, scenario_names: &[String]) -> Option<Option<LastDaySentence>> {
    let lower = text.text.to_lowercase();
    let (before, after) = lower.split_once("is the last day for")?;
    let subject = after.split(['.', '。']).next().unwrap_or_default();
    if ["listed below", "following", "table below", "first table"].iter().any(|w| subject.contains(w)) {
        return Some(None);
    }
    // Offsets of the lower-cased text, used in the original only where they still fall on a
    // character boundary (lower-casing may change a non-ASCII character's length).
    let last_day = parse_date(text.text.get(..before.len())?)?;
    let (scenario_text, _) = subject.split_once(" scenario on ").or_else(|| subject.split_once(" scenarios on "))?;
    let scenarios: Vec<String> = mentions(scenario_text, scenario_names).into_iter().map(|m| m.scenario).collect();
    let mut prefixes = text.prefixes();
    prefixes.dedup();
    if scenarios.is_empty() || prefixes.is_empty() {
        return None;
    }
    let fully_retired_after = lower
        .find("fully retired after")
        .and_then(|at| text.text.get(at + "fully retired after".len()..))
        .and_then(parse_date);
    Some(Some(LastDaySentence { line, last_day, scenarios, prefixes, fully_retired_after }))
}

fn strip_gloss(name: &str) -> String {
    name.split(['(', '（']).next().unwrap_or(name).trim().to_owned()
}

fn parse_isl_osl(text: &str) -> Option<(u32, u32)> {
    let (a, b) = text.split_once('/')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

/// The first date in `text`: ISO `YYYY-MM-DD`, `Month D, YYYY` or `YYYY 年 M 月 D 日`.
pub fn parse_date(text: &str) -> Option<NaiveDate> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut best: Option<(usize, NaiveDate)> = None;
    let mut consider = |at: usize, date: Option<NaiveDate>| {
        if let Some(d) = date {
            if best.is_none_or(|(b, _)| at < b) {
                best = Some((at, d));
            }
        }
    };
    // ISO.
    for (k, &(i, c)) in chars.iter().enumerate() {
        if c.is_ascii_digit() && (k == 0 || !chars.get(k - 1).is_some_and(|(_, p)| p.is_ascii_digit())) {
            if let Some(s) = text.get(i..i + 10) {
                consider(i, NaiveDate::parse_from_str(s, "%Y-%m-%d").ok());
            }
        }
    }
    // Chinese: 2026 年 8 月 3 日.
    let zh: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if let Some(y_at) = zh.find('年') {
        let year: String = zh.get(..y_at).unwrap_or_default().chars().rev().take_while(char::is_ascii_digit).collect();
        let year: String = year.chars().rev().collect();
        let rest = zh.get(y_at + '年'.len_utf8()..).unwrap_or_default();
        let month: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let after_month = rest.get(month.len()..).unwrap_or_default().strip_prefix('月').unwrap_or_default();
        let day: String = after_month.chars().take_while(char::is_ascii_digit).collect();
        if after_month.get(day.len()..).is_some_and(|r| r.starts_with('日')) {
            let date = (|| NaiveDate::from_ymd_opt(year.parse().ok()?, month.parse().ok()?, day.parse().ok()?))();
            consider(text.find('年').map_or(0, |i| i.saturating_sub(5)), date);
        }
    }
    // English: Month D, YYYY.
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let lower = text.to_lowercase();
    for (m, month) in MONTHS.iter().enumerate() {
        for (i, _) in lower.match_indices(month) {
            let rest = lower.get(i + month.len()..).unwrap_or_default();
            let mut words = rest.split(|c: char| c.is_whitespace() || c == ',').filter(|w| !w.is_empty());
            let day = words.next().and_then(|d| d.parse::<u32>().ok());
            let year = words.next().and_then(|y| y.get(..4)).and_then(|y| y.parse::<i32>().ok());
            if let (Some(day), Some(year)) = (day, year) {
                consider(i, NaiveDate::from_ymd_opt(year, u32::try_from(m + 1).unwrap_or(1), day));
            }
        }
    }
    best.map(|(_, d)| d)
}

/// A Markdown block with its 1-based start line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Block {
    Heading { level: u8, text: Inline, line: u32 },
    Para { text: Inline, line: u32 },
    Table { line: u32, head: Vec<Inline>, rows: Vec<(u32, Vec<Inline>)> },
}

/// A table being read: its line, header cells and body rows with their lines.
struct TableRows {
    line: u32,
    head: Vec<Inline>,
    rows: Vec<(u32, Vec<Inline>)>,
}

/// Headings, paragraphs (including list-item text) and tables, in document order.
fn blocks(text: &str) -> Vec<Block> {
    let line_starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let line_of = |offset: usize| -> u32 {
        let idx = line_starts.partition_point(|&s| s <= offset);
        u32::try_from(idx).unwrap_or(u32::MAX)
    };
    let mut out = Vec::new();
    let mut inline: Option<(Inline, u32)> = None;
    let mut table: Option<TableRows> = None;
    let mut row: Vec<Inline> = Vec::new();
    let mut row_line = 0;
    let mut heading_level = 0u8;
    for (event, range) in Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_FOOTNOTES).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                heading_level = match level {
                    HeadingLevel::H1 => 1,
                    HeadingLevel::H2 => 2,
                    HeadingLevel::H3 => 3,
                    HeadingLevel::H4 => 4,
                    HeadingLevel::H5 => 5,
                    HeadingLevel::H6 => 6,
                };
                inline = Some((Inline::default(), line_of(range.start)));
            }
            Event::Start(Tag::Paragraph) | Event::Start(Tag::TableCell) => {
                inline = Some((Inline::default(), line_of(range.start)));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((text, line)) = inline.take() {
                    out.push(Block::Heading { level: heading_level, text: trimmed(text), line });
                }
            }
            Event::End(TagEnd::Paragraph) => {
                if let Some((text, line)) = inline.take() {
                    out.push(Block::Para { text: trimmed(text), line });
                }
            }
            Event::Start(Tag::Table(_)) => {
                table = Some(TableRows { line: line_of(range.start), head: Vec::new(), rows: Vec::new() })
            }
            Event::Start(Tag::TableHead) | Event::Start(Tag::TableRow) => {
                row = Vec::new();
                row_line = line_of(range.start);
            }
            Event::End(TagEnd::TableCell) => {
                if let Some((text, _)) = inline.take() {
                    row.push(trimmed(text));
                }
            }
            Event::End(TagEnd::TableHead) => {
                if let Some(t) = table.as_mut() {
                    t.head = std::mem::take(&mut row);
                }
            }
            Event::End(TagEnd::TableRow) => {
                if let Some(t) = table.as_mut() {
                    t.rows.push((row_line, std::mem::take(&mut row)));
                }
            }
            Event::End(TagEnd::Table) => {
                if let Some(TableRows { line, head, rows }) = table.take() {
                    out.push(Block::Table { line, head, rows });
                }
            }
            Event::Text(t) => {
                if let Some((i, _)) = inline.as_mut() {
                    i.text.push_str(&t);
                }
            }
            Event::Code(c) => {
                if let Some((i, _)) = inline.as_mut() {
                    i.text.push_str(&c);
                    i.code.push(c.to_string());
                }
            }
            Event::Start(Tag::Link { dest_url, .. }) => {
                if let Some((i, _)) = inline.as_mut() {
                    i.links.push(dest_url.to_string());
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some((i, _)) = inline.as_mut() {
                    i.text.push(' ');
                }
            }
            _ => {}
        }
    }
    out
}

fn trimmed(mut inline: Inline) -> Inline {
    inline.text = inline.text.split_whitespace().collect::<Vec<_>>().join(" ");
    inline
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    const DOC: &str = "\
# Models

## Deprecation Notice

### Friday, September 4, 2026

**Friday, September 4, 2026** is the last day for the scenarios listed below.

**Enacted on 2026-09-05** in [#4100](https://github.com/o/r/pull/4100).

| Model | Deprecated | Remains |
|---|---|---|
| Toy-1 (`toy1`) | All **bf16** recipes, Single-turn 8k1k | Agentic coding |

| Model | Deprecated arm | Published arm |
|---|---|---|
| Toy-2 (`toy2`) | Agentic coding, non-MTP | Agentic coding, MTP |

**Status: not yet enacted.** The MTP arm has not landed.

### Monday, December 14, 2026

**Monday, December 14, 2026** is the last day for **Single-turn 8k1k** on Toy-2 (`toy2`).

| Model | Deprecated | Remains |
|---|---|---|
| Toy-2 (`toy2`) | Single-turn 8k1k | Agentic coding |

## Scenarios

| Scenario | ISL/OSL | Status |
|---|---|---|
| Agentic coding | Trace replay | Active. Spec decode only. |
| Single-turn 8k1k | 8192 / 1024 | Active. |
| Single-turn 1k1k | 1024 / 1024 | **Deprecated for all models** since 2026-07-17 ([#2263](https://github.com/o/r/pull/2263)). |

## AgentX Guidelines

### Engine submission policy

| Model | Primary native/upstream engines | Agreed draft model(s) (PoR) | Proposed | Additional engines |
|---|---|---|---|---|
| Toy-2 (`toy2`) | native/upstream vLLM engine and native/upstream SGLang engine | native MTP | None | more |
| Toy-3 (`toy3`) | native/upstream SGLang engine | native MTP | None | more |

### Policy-baseline matrix

| Model | Notes |
|---|---|
| Toy-2 (`toy2`) | grandfathered |

## Model support matrix

| Model architecture class | Prefix | Date added | Active scenarios | Deprecated scenarios |
|---|---|---|---|---|
| Toy-4 | `toy4` | TBD | Agentic coding | |
| Toy-2 | `toy2` | 2026-07-18 ([#2268](https://github.com/o/r/pull/2268)) | Single-turn 8k1k and Agentic coding (DSpark only) | Single-turn 1k1k |
| Toy-1 / Toy-1.1 | `toy1`, `toy1.1` | 2026-03-06 | None (retired 2026-07-18, [#2276](https://github.com/o/r/pull/2276)) | Single-turn 1k1k, Single-turn 8k1k |
";

    #[test]
    fn parses_every_section() {
        let m = ModelsMd::parse(DOC, "MODELS.md").unwrap();
        assert_eq!(m.notices.len(), 2);
        let n = &m.notices[0];
        assert_eq!(n.last_day, Some(date("2026-09-04")));
        assert_eq!(n.enacted, Some(Enactment { date: Some(date("2026-09-05")), prs: vec![4100], partial: false }));
        assert_eq!(n.tables.len(), 2);
        assert_eq!(n.tables[0].kind, NoticeKind::Retirement);
        assert!(!n.tables[0].not_yet_enacted);
        assert_eq!(n.tables[0].rows[0].prefixes, ["toy1"]);
        assert_eq!(n.tables[0].rows[0].precisions, ["bf16"]);
        assert_eq!(n.tables[1].kind, NoticeKind::SpecDecodeArm);
        assert!(n.tables[1].not_yet_enacted);
        assert_eq!(n.tables[1].rows[0].line, 17);

        assert_eq!(m.scenarios.len(), 3);
        assert_eq!(m.scenario("single-turn 8k1k").unwrap().isl_osl, Some((8192, 1024)));
        let s11 = m.scenario("Single-turn 1k1k").unwrap();
        assert_eq!(s11.status, ScenarioStatus::Deprecated { since: Some(date("2026-07-17")) });
        assert_eq!(s11.prs, [2263]);
        assert!(s11.deprecated_on(date("2026-07-17")));
        assert!(!s11.deprecated_on(date("2026-07-16")));

        assert_eq!(m.primary_engines("toy2"), [Engine::Vllm, Engine::Sglang]);
        assert_eq!(m.primary_engines("toy3"), [Engine::Sglang]);
        assert!(m.primary_engines("nope").is_empty());
        assert_eq!(m.policy_baseline, ["toy2"]);

        assert_eq!(m.models.len(), 3);
        let toy4 = m.model("toy4").unwrap();
        assert_eq!(toy4.added, None);
        let toy2 = m.model("toy2").unwrap();
        assert_eq!((toy2.added, toy2.added_prs.as_slice()), (Some(date("2026-07-18")), &[2268][..]));
        assert_eq!(
            toy2.active,
            [
                ScenarioMention { scenario: "Single-turn 8k1k".into(), qualifier: String::new() },
                ScenarioMention { scenario: "Agentic coding".into(), qualifier: "(DSpark only)".into() },
            ]
        );
        assert!(toy2.lists_active("agentic coding"));
        let toy1 = m.model("toy1.1").unwrap();
        assert_eq!(toy1.prefixes, ["toy1", "toy1.1"]);
        assert!(toy1.active.is_empty());
        assert!(toy1.retired_on(date("2026-07-18")));
        assert!(!toy1.retired_on(date("2026-07-17")));
        assert!(!toy2.retired_on(date("2030-01-01")));
    }

    #[test]
    fn the_policy_baseline_is_the_matrix_models_the_section_names() {
        // Prose code spans that are no model (a commit, an ENV=VALUE) and a table whose first
        // cell is a plain name with the prefix in a later cell.
        let doc = DOC.replace(
            "| Model | Notes |\n|---|---|\n| Toy-2 (`toy2`) | grandfathered |",
            "Frozen at `2a45791`; listed models may keep `VLLM_ALLREDUCE_USE_SYMM_MEM=1`.\n\n\
             | Model | Prefix | Notes |\n|---|---|---|\n| Toy-2 | `toy2` | grandfathered |\n\
             | Toy-1.1 | `toy1.1` | grandfathered |",
        );
        let m = ModelsMd::parse(&doc, "MODELS.md").unwrap();
        assert_eq!(m.policy_baseline, ["toy2", "toy1.1"]);
        // Without the table only the prose is left, and it names no model.
        let prose_only =
            DOC.replace("| Model | Notes |\n|---|---|\n| Toy-2 (`toy2`) | grandfathered |", "Frozen at `2a45791`.");
        assert!(ModelsMd::parse(&prose_only, "MODELS.md").unwrap().policy_baseline.is_empty());
    }

    #[test]
    fn a_future_deprecation_is_not_yet_in_force() {
        let m = ModelsMd::parse(DOC, "MODELS.md").unwrap();
        let (notice, table, row) = m.notice_rows("toy2").find(|(_, t, _)| t.kind == NoticeKind::Retirement).unwrap();
        assert_eq!(row.scenarios, ["Single-turn 8k1k"]);
        assert!(!table.not_yet_enacted);
        assert_eq!(notice.last_day, Some(date("2026-12-14")));
        assert!(!notice.in_force_on(date("2026-12-14")), "the last day itself is still allowed");
        assert!(notice.in_force_on(date("2026-12-15")));
    }

    #[test]
    fn dates_in_three_spellings() {
        assert_eq!(parse_date("Monday, August 3, 2026"), Some(date("2026-08-03")));
        assert_eq!(parse_date("2026 年 8 月 3 日（星期一）"), Some(date("2026-08-03")));
        assert_eq!(parse_date("retired 2026-07-18, #2276"), Some(date("2026-07-18")));
        assert_eq!(parse_date("**已于 2026-08-07 执行**"), Some(date("2026-08-07")));
        assert_eq!(parse_date("since 2026-02-30"), None);
        assert_eq!(parse_date("TBD"), None);
        assert_eq!(parse_date("ran until August 6, 2026 and was retired on 2026-08-07"), Some(date("2026-08-06")));
    }

    #[test]
    fn malformed_files_are_positioned_errors() {
        let cases: [(String, &str); 6] = [
            ("# Models\n".into(), "no `## Scenarios` table found"),
            (
                DOC.replace("| Toy-4 | `toy4` | TBD |", "| Toy-4 | toy4 | TBD |"),
                "56:1: model `Toy-4`: the Prefix cell has no `prefix`",
            ),
            (DOC.replace("| `toy4` | TBD |", "| `toy4` | soon |"), "Date added `soon` is neither"),
            (
                DOC.replace("Active. Spec decode only.", "Maybe"),
                "scenario `Agentic coding`: status must start with Active",
            ),
            (DOC.replace("### Monday, December 14, 2026", "### Someday"), "notice `Someday` has no date"),
            (
                DOC.replace("| native/upstream SGLang engine | native MTP |", "| TensorRT | native MTP |"),
                "names no primary engine",
            ),
        ];
        for (text, expected) in cases {
            let errs = ModelsMd::parse(&text, "MODELS.md").unwrap_err();
            let shown: Vec<String> = errs.iter().map(ToString::to_string).collect();
            assert!(shown.iter().any(|s| s.contains(expected)), "{expected}: {shown:?}");
        }
    }

    #[test]
    fn translation_drift_is_warned() {
        let en = ModelsMd::parse(DOC, "MODELS.md").unwrap();
        let same = ModelsMd::parse(DOC, "MODELS_zh.md").unwrap();
        assert!(translation_drift(&en, &same).is_empty());
        let drifted = DOC.replace("| `toy4` | TBD |", "| `toy5` | TBD |").replace("| 2026-03-06 |", "| 2026-03-07 |");
        let tr = ModelsMd::parse(&drifted, "MODELS_zh.md").unwrap();
        let shown: Vec<String> = translation_drift(&en, &tr).iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "MODELS_zh.md: warning: model `toy4` is in MODELS.md but not in this translation",
                "MODELS_zh.md:56:1: warning: model `Toy-4` is not in MODELS.md",
                "MODELS_zh.md:58:1: warning: dates of `Toy-1 / Toy-1.1` differ from MODELS.md line 58",
            ]
        );
    }

    #[test]
    fn garbage_never_panics() {
        for text in [
            "|",
            "| a |\n|---|\n| b | c | d |",
            "## Deprecation Notice\n| a | b | c |\n|-|-|-|\n| x | y | z |",
            "年月日 2026 年 13 月 40 日",
            "\u{0}",
        ] {
            let _ = ModelsMd::parse(text, "m.md");
            let _ = parse_date(text);
        }
    }

    /// MODELS.md at upstream #2406-#2527 (history bundle, 2026-08-07), its rows and sentences as
    /// written, trimmed to the notices.
    const AUGUST: &str = "# Models\n\n## Deprecation Notice\n\n### Monday, August 3, 2026\n\n**Monday, August 3, 2026** is the last day for the scenarios, precisions, and recipe variants listed below. They are deprecated after that date.\n\n| Model | Deprecated | Remains |\n|---|---|---|\n| MiniMax-M3 (`minimaxm3`) | Single-turn 8k1k | Agentic coding |\n\nSpeculative-decoding A/B retirements apply to each pair below.\n\n| Model | Deprecated arm | Published arm |\n|---|---|---|\n| DeepSeek-V4-Pro 1.6T (`dsv4`) | Agentic coding, non-MTP | Agentic coding, MTP |\n| Kimi-K3 (`kimik3`) | Agentic coding, non-DSpark (deprecated from day 0) | Agentic coding, DSpark |\n\n**Status: not yet enacted.** Every non-spec-decode agentic arm above still runs.\n\n### Thursday, August 6, 2026\n\n**Thursday, August 6, 2026** is the last day for the **Single-turn 8k1k** scenario on **Kimi-K2.5/2.6/2.7-Code** (`kimik2.5`). The scenario is deprecated for these models after that date. The model is **fully retired after August 6, 2026**.\n\n**Friday, August 7, 2026** is the last day for the long-context runs on Qwen (`qwen3.5`).\n\n## Scenarios\n\n| Scenario | ISL/OSL | Status |\n|---|---|---|\n| Agentic coding | — | Active |\n| Single-turn 8k1k | 8192/1024 | Active |\n\n## Model support matrix\n\n| Model architecture class | Prefix | Date added | Active scenarios | Deprecated scenarios |\n|---|---|---|---|---|\n| Kimi-K3 | `kimik3` | 2026-07-27 | Agentic coding (DSpark only) | Agentic coding non-DSpark arm (deprecated from day 0) |\n";

    #[test]
    fn arms_day_zero_rows_and_dated_sentences_are_facts() {
        let m = ModelsMd::parse(AUGUST, "MODELS.md").unwrap();
        let arms: Vec<(Option<Arm>, bool)> =
            m.notices[0].tables[1].rows.iter().map(|r| (r.arm, r.from_day_zero)).collect();
        assert_eq!(arms, [(Some(Arm::NonSpec), false), (Some(Arm::NonSpec), true)]);
        assert_eq!(m.notices[0].tables[0].rows[0].arm, None);
        assert!(m.notices[0].sentences.is_empty() && m.notices[0].unread.is_empty(), "the table notice's lead-in");
        let sentence = &m.notices[1].sentences[0];
        assert_eq!(
            (sentence.last_day, &sentence.scenarios, &sentence.prefixes, sentence.fully_retired_after),
            (
                date("2026-08-06"),
                &vec!["Single-turn 8k1k".to_owned()],
                &vec!["kimik2.5".to_owned()],
                Some(date("2026-08-06"))
            )
        );
        // A last day whose scenario this parser cannot name is a fact of its own.
        let unread = &m.notices[1].unread[0];
        assert!(unread.may_govern("qwen3.5") && !unread.may_govern("dsr1"), "{unread:?}");
        assert_eq!(m.unread_warnings().len(), 1);
        let facts = m.facts();
        assert!(facts.contains(&format!("MODELS.md:{}: fact: kimik3 Agentic coding, non-DSpark (deprecated from day 0), non-spec-decoding arm: deprecated from day 0", m.notices[0].tables[1].rows[1].line)), "{facts:#?}");
        assert!(
            facts.iter().any(|f| f.ends_with(
                "dsv4 Agentic coding, non-MTP, non-spec-decoding arm: deprecated after 2026-08-03, not yet enacted"
            )),
            "{facts:#?}"
        );
        assert!(facts.iter().any(|f| f.ends_with("kimik2.5 Single-turn 8k1k: last day 2026-08-06, retired from the next day; model fully retired after 2026-08-06")), "{facts:#?}");
    }
}
