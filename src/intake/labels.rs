//! Sweep-label policy (spec 10 §2, §7, §8, §13; ARCHITECTURE decision 4): which labels a PR
//! carries → sweep or not, the plan flags, and a bilingual reason for every "no" and for every
//! label that is ignored or retired. Pure: the caller gathers the facts.

use serde::Serialize;

/// The primary (sweep mode) labels. Exactly one must be present for a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Primary {
    #[serde(rename = "full-sweep-fail-fast")]
    FullSweepFailFast,
    #[serde(rename = "full-sweep-enabled")]
    FullSweepEnabled,
    #[serde(rename = "non-canary-full-sweep-enabled")]
    NonCanaryFullSweepEnabled,
}

impl Primary {
    pub const ALL: [Primary; 3] =
        [Primary::FullSweepFailFast, Primary::FullSweepEnabled, Primary::NonCanaryFullSweepEnabled];

    pub fn name(self) -> &'static str {
        match self {
            Primary::FullSweepFailFast => "full-sweep-fail-fast",
            Primary::FullSweepEnabled => "full-sweep-enabled",
            Primary::NonCanaryFullSweepEnabled => "non-canary-full-sweep-enabled",
        }
    }

    fn canary(self) -> bool {
        !matches!(self, Primary::NonCanaryFullSweepEnabled)
    }

    fn fail_fast(self) -> bool {
        matches!(self, Primary::FullSweepFailFast)
    }
}

/// Modifier labels: effective only alongside a primary label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Modifier {
    #[serde(rename = "all-evals")]
    AllEvals,
    #[serde(rename = "evals-only")]
    EvalsOnly,
    #[serde(rename = "agentx-fast")]
    AgentxFast,
}

impl Modifier {
    pub const ALL: [Modifier; 3] = [Modifier::AllEvals, Modifier::EvalsOnly, Modifier::AgentxFast];

    pub fn name(self) -> &'static str {
        match self {
            Modifier::AllEvals => "all-evals",
            Modifier::EvalsOnly => "evals-only",
            Modifier::AgentxFast => "agentx-fast",
        }
    }

    /// `evals-only` and `agentx-fast` block artifact reuse while applied (spec 10 §2.1, §13).
    pub fn blocks_reuse(self) -> bool {
        matches!(self, Modifier::EvalsOnly | Modifier::AgentxFast)
    }
}

/// Aug-2026 primary labels that sweepgate recognises only to explain their retirement.
const RETIRED: [(&str, &str, &str); 2] = [
    (
        "sweep-enabled",
        "`sweep-enabled` is retired: no label trims concurrency any more. Use `full-sweep-fail-fast` (recommended), `full-sweep-enabled` or `non-canary-full-sweep-enabled`.",
        "`sweep-enabled` 已停用：不再有标签裁剪并发。请改用 `full-sweep-fail-fast`（推荐）、`full-sweep-enabled` 或 `non-canary-full-sweep-enabled`。",
    ),
    (
        "full-sweep-fail-fast-no-canary",
        "`full-sweep-fail-fast-no-canary` is retired: fail-fast now always comes with the canary. Use `full-sweep-fail-fast`, or `non-canary-full-sweep-enabled` to skip the canary.",
        "`full-sweep-fail-fast-no-canary` 已停用：失败即停现在总是带金丝雀运行。请改用 `full-sweep-fail-fast`；如需跳过金丝雀运行，请用 `non-canary-full-sweep-enabled`。",
    ),
];

/// Repository permission of a user (`GET /collaborators/{u}/permission`, `role_name` preferred).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Permission {
    None,
    Read,
    Triage,
    Write,
    Maintain,
    Admin,
}

impl Permission {
    /// Parses GitHub's `permission` / `role_name` strings; unknown (custom) roles count as none.
    pub fn parse(text: &str) -> Permission {
        match text {
            "admin" => Permission::Admin,
            "maintain" => Permission::Maintain,
            "write" | "push" => Permission::Write,
            "triage" => Permission::Triage,
            "read" | "pull" => Permission::Read,
            _ => Permission::None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Permission::None => "none",
            Permission::Read => "read",
            Permission::Triage => "triage",
            Permission::Write => "write",
            Permission::Maintain => "maintain",
            Permission::Admin => "admin",
        }
    }

    /// write, maintain or admin: may approve external code and apply fork sweep labels.
    pub fn can_write(self) -> bool {
        self >= Permission::Write
    }
}

/// Facts about the PR, gathered by the caller at the time of the decision.
#[derive(Debug, Clone, Default)]
pub struct PrFacts {
    pub draft: bool,
    /// The head repository differs from the base repository.
    pub fork: bool,
    /// The PR's diff appends at least one entry to the changelog file.
    pub changelog_appended: bool,
    /// Full message of the PR head commit (`None` when unknown).
    pub head_message: Option<String>,
    /// Fork PRs: permission of the user who applied the primary label (`None` when unknown).
    pub labeler_permission: Option<Permission>,
    /// Fork PRs: the head SHA at the moment the primary label was applied, and the current one.
    pub approved_sha: Option<String>,
    pub head_sha: Option<String>,
}

/// One explanation, in English and Chinese, with a stable machine-readable code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reason {
    pub code: &'static str,
    pub en: String,
    pub zh: String,
    /// True when this reason prevents the sweep; false for notes (ignored or retired labels).
    pub blocking: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LabelDecision {
    pub sweep: bool,
    pub primary: Option<Primary>,
    /// Modifier labels present (effective only when `sweep`).
    pub modifiers: Vec<Modifier>,
    pub canary: bool,
    pub fail_fast: bool,
    pub evals_only: bool,
    pub all_evals: bool,
    pub agentx_fast: bool,
    pub reasons: Vec<Reason>,
}

impl LabelDecision {
    /// Adds a blocking reason found outside the pure policy (e.g. facts that could not be
    /// read): the sweep and every plan flag are switched off.
    pub fn block(&mut self, reason: Reason) {
        self.reasons.push(reason);
        self.sweep = false;
        self.canary = false;
        self.fail_fast = false;
        self.evals_only = false;
        self.all_evals = false;
        self.agentx_fast = false;
    }
}

const SKIP_SWEEP_MARKER: &str = "[skip-sweep]";

fn code_list(names: &[&str]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

fn reason(code: &'static str, blocking: bool, en: String, zh: String) -> Reason {
    Reason { code, en, zh, blocking }
}

/// Decides the sweep from the PR's labels (exact, case-sensitive names) and facts.
pub fn decide<S: AsRef<str>>(labels: &[S], facts: &PrFacts) -> LabelDecision {
    let mut reasons = Vec::new();
    let mut primaries: Vec<Primary> = Vec::new();
    let mut modifiers: Vec<Modifier> = Vec::new();
    for label in labels.iter().map(AsRef::as_ref) {
        if let Some(p) = Primary::ALL.into_iter().find(|p| p.name() == label) {
            if !primaries.contains(&p) {
                primaries.push(p);
            }
        } else if let Some(m) = Modifier::ALL.into_iter().find(|m| m.name() == label) {
            if !modifiers.contains(&m) {
                modifiers.push(m);
            }
        } else if let Some((_, en, zh)) = RETIRED.iter().find(|(name, _, _)| *name == label) {
            if !reasons.iter().any(|r: &Reason| r.code == "retired-label" && r.en == *en) {
                reasons.push(reason("retired-label", false, en.to_string(), zh.to_string()));
            }
        } else if let Some(known) = near_miss(label) {
            let shown = crate::escape::code(label);
            reasons.push(reason(
                "label-name-mismatch",
                false,
                format!("Label {shown} is ignored: sweep labels match exactly and case-sensitively. Did you mean `{known}`?"),
                format!("标签 {shown} 被忽略：扫描标签须完全一致（区分大小写）。是否想用 `{known}`？"),
            ));
        }
    }
    modifiers.sort();

    let primary = match primaries.as_slice() {
        [] => {
            reasons.push(reason(
                "no-primary-label",
                true,
                "No primary sweep label: add exactly one of `full-sweep-fail-fast` (recommended), `full-sweep-enabled`, `non-canary-full-sweep-enabled`.".into(),
                "没有主扫描标签：请添加且仅添加一个 `full-sweep-fail-fast`（推荐）、`full-sweep-enabled` 或 `non-canary-full-sweep-enabled`。".into(),
            ));
            if !modifiers.is_empty() {
                let names: Vec<&str> = modifiers.iter().map(|m| m.name()).collect();
                reasons.push(reason(
                    "modifier-without-primary",
                    false,
                    format!("Modifier label(s) {} do nothing without a primary sweep label.", code_list(&names)),
                    format!("修饰标签 {} 需要配合主扫描标签才会生效。", code_list(&names)),
                ));
            }
            None
        }
        [one] => Some(*one),
        many => {
            let names: Vec<&str> = many.iter().map(|p| p.name()).collect();
            reasons.push(reason(
                "multiple-primary-labels",
                true,
                format!("PR has multiple conflicting sweep labels ({}). Pick exactly one.", code_list(&names)),
                format!("PR 同时带有多个互相冲突的扫描标签（{}）。请只保留一个。", code_list(&names)),
            ));
            None
        }
    };

    if !facts.changelog_appended {
        reasons.push(reason(
            "no-changelog-append",
            true,
            "The PR does not append an entry to `perf-changelog.yaml`; only appended entries are swept.".into(),
            "此 PR 没有向 `perf-changelog.yaml` 追加条目；只有追加的条目才会被扫描。".into(),
        ));
    }
    if facts.draft {
        reasons.push(reason(
            "draft",
            true,
            "The PR is a draft; drafts never sweep. Mark it ready for review to start the sweep.".into(),
            "此 PR 是草稿；草稿不会触发扫描。请将其标记为可供审阅（GitHub 的 `Ready for review`）以开始扫描。".into(),
        ));
    }
    if facts.head_message.as_deref().is_some_and(|m| m.contains(SKIP_SWEEP_MARKER)) {
        reasons.push(reason(
            "skip-sweep",
            true,
            "The head commit message contains `[skip-sweep]`; push a new commit without it to sweep.".into(),
            "头提交信息包含 `[skip-sweep]`；请推送一个不含该标记的新提交以进行扫描。".into(),
        ));
    }
    if facts.fork {
        fork_reasons(facts, &mut reasons);
    }
    if !modifiers.is_empty() && primary.is_some() {
        let blockers: Vec<&str> = modifiers.iter().filter(|m| m.blocks_reuse()).map(|m| m.name()).collect();
        if !blockers.is_empty() {
            reasons.push(reason(
                "modifier-blocks-reuse",
                false,
                format!(
                    "{} {} artifact reuse (`/use`) while applied.",
                    code_list(&blockers),
                    if blockers.len() == 1 { "blocks" } else { "block" }
                ),
                format!("{} 在标签存在期间会阻止产物复用（`/use`）。", code_list(&blockers)),
            ));
        }
    }

    let sweep = primary.is_some() && !reasons.iter().any(|r| r.blocking);
    let has = |m: Modifier| sweep && modifiers.contains(&m);
    LabelDecision {
        sweep,
        primary,
        canary: sweep && !facts.fork && primary.is_some_and(Primary::canary),
        fail_fast: sweep && primary.is_some_and(Primary::fail_fast),
        evals_only: has(Modifier::EvalsOnly),
        all_evals: has(Modifier::AllEvals),
        agentx_fast: has(Modifier::AgentxFast),
        modifiers,
        reasons,
    }
}

fn fork_reasons(facts: &PrFacts, reasons: &mut Vec<Reason>) {
    match facts.labeler_permission {
        Some(p) if p.can_write() => {}
        other => {
            let perm = other.map_or("unknown", Permission::name);
            reasons.push(reason(
                "fork-labeler-not-authorized",
                true,
                format!("This PR comes from a fork: the sweep label must be applied by a user with write, maintain or admin permission (the labeler has {perm})."),
                format!("此 PR 来自派生仓库：扫描标签必须由拥有 `write`、`maintain` 或 `admin` 权限的用户添加（添加者权限为 {perm}）。"),
            ));
        }
    }
    if let (Some(approved), Some(head)) = (&facts.approved_sha, &facts.head_sha) {
        if approved != head {
            let (a, h) = (short_sha(approved), short_sha(head));
            reasons.push(reason(
                "fork-approval-stale",
                true,
                format!("Stale: the sweep label approved `{a}`, but the PR head is now `{h}`; re-label after reviewing `{h}` (remove and re-add the sweep label)."),
                format!("已过期：扫描标签批准的是 `{a}`，但 PR 头已变为 `{h}`；请在审阅 `{h}` 后重新添加标签（移除并重新添加扫描标签）。"),
            ));
        }
    }
}

fn short_sha(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// A label that differs from a sweep label only by case or surrounding whitespace.
fn near_miss(label: &str) -> Option<&'static str> {
    let folded = label.trim().to_ascii_lowercase();
    let known = Primary::ALL.iter().map(|p| p.name()).chain(Modifier::ALL.iter().map(|m| m.name()));
    known.chain(RETIRED.iter().map(|r| r.0)).find(|k| *k == folded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok_facts() -> PrFacts {
        PrFacts { changelog_appended: true, head_message: Some("add config".into()), ..PrFacts::default() }
    }

    fn codes(d: &LabelDecision) -> Vec<&'static str> {
        d.reasons.iter().map(|r| r.code).collect()
    }

    #[test]
    fn full_sweep_fail_fast_has_canary_and_fail_fast() {
        let d = decide(&["full-sweep-fail-fast"], &ok_facts());
        assert!(d.sweep && d.canary && d.fail_fast);
        assert_eq!(d.primary, Some(Primary::FullSweepFailFast));
        assert!(d.reasons.is_empty());
    }

    #[test]
    fn full_sweep_enabled_has_canary_without_fail_fast() {
        let d = decide(&["full-sweep-enabled"], &ok_facts());
        assert!(d.sweep && d.canary && !d.fail_fast);
    }

    #[test]
    fn non_canary_full_sweep_has_neither() {
        let d = decide(&["non-canary-full-sweep-enabled"], &ok_facts());
        assert!(d.sweep && !d.canary && !d.fail_fast);
    }

    #[test]
    fn retired_sweep_enabled_is_explained_and_does_not_count() {
        let d = decide(&["sweep-enabled"], &ok_facts());
        assert!(!d.sweep);
        assert_eq!(codes(&d), ["retired-label", "no-primary-label"]);
        assert!(d.reasons[0].en.contains("no label trims concurrency"));
    }

    #[test]
    fn retired_no_canary_label_does_not_conflict_with_a_primary() {
        let d = decide(&["full-sweep-fail-fast-no-canary", "full-sweep-fail-fast"], &ok_facts());
        assert!(d.sweep, "a retired label is not a second primary");
        assert_eq!(codes(&d), ["retired-label"]);
        assert!(!d.reasons[0].blocking);
    }

    #[test]
    fn two_primaries_conflict() {
        let d = decide(&["full-sweep-enabled", "full-sweep-fail-fast"], &ok_facts());
        assert!(!d.sweep && d.primary.is_none());
        assert_eq!(codes(&d), ["multiple-primary-labels"]);
        assert!(d.reasons[0].en.contains("Pick exactly one"));
    }

    #[test]
    fn modifiers_without_primary_are_inert_and_explained() {
        let d = decide(&["evals-only", "all-evals"], &ok_facts());
        assert!(!d.sweep && !d.evals_only && !d.all_evals);
        assert_eq!(d.modifiers, [Modifier::AllEvals, Modifier::EvalsOnly]);
        assert_eq!(codes(&d), ["no-primary-label", "modifier-without-primary"]);
    }

    #[test]
    fn all_evals_modifier_is_reuse_compatible() {
        let d = decide(&["full-sweep-enabled", "all-evals"], &ok_facts());
        assert!(d.sweep && d.all_evals && !d.evals_only);
        assert!(d.reasons.is_empty());
    }

    #[test]
    fn evals_only_and_agentx_fast_set_flags_and_note_reuse() {
        let d = decide(&["agentx-fast", "full-sweep-fail-fast", "evals-only"], &ok_facts());
        assert!(d.sweep && d.evals_only && d.agentx_fast && !d.all_evals);
        assert_eq!(codes(&d), ["modifier-blocks-reuse"]);
        assert!(d.reasons[0].en.contains("`evals-only`, `agentx-fast`"));
    }

    #[test]
    fn labels_match_case_sensitively() {
        let d = decide(&["Full-Sweep-Enabled"], &ok_facts());
        assert!(!d.sweep);
        assert_eq!(codes(&d), ["label-name-mismatch", "no-primary-label"]);
        assert!(d.reasons[0].en.contains("`full-sweep-enabled`"));
    }

    #[test]
    fn unrelated_and_priority_labels_are_silent() {
        let d = decide(&["bug", "skip_queue", "full-sweep-enabled"], &ok_facts());
        assert!(d.sweep && d.reasons.is_empty());
    }

    #[test]
    fn missing_changelog_append_blocks() {
        let facts = PrFacts { changelog_appended: false, ..ok_facts() };
        let d = decide(&["full-sweep-enabled"], &facts);
        assert!(!d.sweep && !d.canary);
        assert_eq!(codes(&d), ["no-changelog-append"]);
    }

    #[test]
    fn drafts_never_sweep() {
        let d = decide(&["full-sweep-enabled"], &PrFacts { draft: true, ..ok_facts() });
        assert!(!d.sweep);
        assert_eq!(codes(&d), ["draft"]);
    }

    #[test]
    fn skip_sweep_marker_is_case_sensitive_substring() {
        let marked = PrFacts { head_message: Some("fix\n\nrefresh [skip-sweep]".into()), ..ok_facts() };
        assert_eq!(codes(&decide(&["full-sweep-enabled"], &marked)), ["skip-sweep"]);
        let other_case = PrFacts { head_message: Some("[Skip-Sweep]".into()), ..ok_facts() };
        assert!(decide(&["full-sweep-enabled"], &other_case).sweep);
    }

    #[test]
    fn every_blocker_is_reported_at_once() {
        let facts = PrFacts { draft: true, changelog_appended: false, ..ok_facts() };
        let d = decide::<&str>(&[], &facts);
        assert_eq!(codes(&d), ["no-primary-label", "no-changelog-append", "draft"]);
        assert!(d.reasons.iter().all(|r| !r.zh.is_empty()));
    }

    #[test]
    fn fork_needs_a_writer_and_has_no_canary() {
        let writer = PrFacts { fork: true, labeler_permission: Some(Permission::Maintain), ..ok_facts() };
        let d = decide(&["full-sweep-fail-fast"], &writer);
        assert!(d.sweep && !d.canary && d.fail_fast);
        for perm in [Some(Permission::Triage), Some(Permission::Read), Some(Permission::None), None] {
            let facts = PrFacts { fork: true, labeler_permission: perm, ..ok_facts() };
            let d = decide(&["full-sweep-enabled"], &facts);
            assert!(!d.sweep, "{perm:?}");
            assert_eq!(codes(&d), ["fork-labeler-not-authorized"]);
        }
    }

    #[test]
    fn fork_approval_covers_one_head_sha() {
        let facts = PrFacts {
            fork: true,
            labeler_permission: Some(Permission::Admin),
            approved_sha: Some("a".repeat(40)),
            head_sha: Some("b".repeat(40)),
            ..ok_facts()
        };
        let d = decide(&["full-sweep-enabled"], &facts);
        assert!(!d.sweep);
        assert_eq!(codes(&d), ["fork-approval-stale"]);
        assert!(d.reasons[0].en.contains("`aaaaaaaaaaaa`"));
        let same = PrFacts { head_sha: Some("a".repeat(40)), ..facts };
        assert!(decide(&["full-sweep-enabled"], &same).sweep);
    }

    #[test]
    fn duplicate_labels_count_once() {
        let d = decide(&["full-sweep-enabled", "full-sweep-enabled", "all-evals", "all-evals"], &ok_facts());
        assert!(d.sweep);
        assert_eq!(d.modifiers, [Modifier::AllEvals]);
    }

    #[test]
    fn an_external_blocker_clears_the_plan() {
        let mut d = decide(&["full-sweep-fail-fast", "all-evals"], &ok_facts());
        d.block(reason("facts-unavailable", true, "x".into(), "y".into()));
        assert!(!d.sweep && !d.canary && !d.fail_fast && !d.all_evals);
    }

    #[test]
    fn permission_parses_legacy_names() {
        assert_eq!(Permission::parse("push"), Permission::Write);
        assert_eq!(Permission::parse("maintain"), Permission::Maintain);
        assert_eq!(Permission::parse("custom-role"), Permission::None);
        assert!(Permission::Write.can_write() && !Permission::Triage.can_write());
    }
}
