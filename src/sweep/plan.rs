//! The sweep plan (spec 10 §5-6): from the label decision and the matrix, the canary and the
//! ordered job families with their fail-fast and modifier effects. Pure.
//!
//! What it reproduces of `run-sweep.yml`:
//! - the canary is `matrix::canary::select_canary`'s pick, only when the primary label asks for
//!   one; when there is a canary, the single-node 1k1k/8k1k families run what remains and every
//!   family waits for the canary (a failed canary skips them all: the dispatcher's rule);
//! - families come in the caller-job order of spec 10 §6.1; empty families are left out;
//! - `fail_fast` is the label's, on every family (the canary never fails fast);
//! - `agentx-fast` reaches only the two agentic benchmark families;
//! - `evals-only` / `all-evals` act through the matrix the caller computed with them.
//!
//! Decision S11 (docs/decisions.md): single-node or multi-node buckets other than 1k1k, 8k1k and
//! agentic, which upstream's workflow has no job for and silently drops, become families of
//! their own after the known ones.

use serde::Serialize;

use crate::intake::labels::LabelDecision;
use crate::matrix::canary::select_canary;
use crate::matrix::{MatrixOutput, Row};

/// Which upstream job template a family's rows are shaped for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Template {
    SingleNode,
    MultiNode,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedFamily {
    /// The upstream job display-name prefix (`single-node 1k1k`, `multi-node agentic eval`).
    pub name: String,
    /// The upstream caller job id (`sweep-single-node-1k1k`).
    pub job: String,
    pub template: Template,
    /// The family runs evals only (the four eval families).
    pub eval_only: bool,
    pub fail_fast: bool,
    /// `AIPERF_EXPERIMENTAL_FAST=1` for this family's jobs.
    pub agentx_fast: bool,
    pub rows: Vec<Row>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepPlan {
    pub sweep: bool,
    /// The canary row exactly as in the matrix output; null without one.
    pub canary: Option<Row>,
    pub families: Vec<PlannedFamily>,
}

impl SweepPlan {
    /// No sweep: no canary, no families.
    pub fn none() -> SweepPlan {
        SweepPlan { sweep: false, canary: None, families: Vec::new() }
    }

    /// Points the plan runs, the canary included.
    pub fn point_count(&self) -> usize {
        usize::from(self.canary.is_some()) + self.families.iter().map(|f| f.rows.len()).sum::<usize>()
    }
}

const AGENTIC: &str = "agentic";
const CANARY_BUCKETS: [&str; 2] = ["1k1k", "8k1k"];

type Buckets = indexmap::IndexMap<String, Vec<Row>>;

/// The benchmark buckets in job order: 1k1k, 8k1k, then the others as the matrix lists them;
/// `agentic` has a family of its own.
fn ordered_buckets(buckets: &Buckets) -> impl Iterator<Item = (&str, &[Row])> {
    let known = CANARY_BUCKETS.iter().filter_map(|b| buckets.get(*b).map(|rows| (*b, rows)));
    let others = buckets
        .iter()
        .filter(|(k, _)| !CANARY_BUCKETS.contains(&k.as_str()) && k.as_str() != AGENTIC)
        .map(|(k, rows)| (k.as_str(), rows));
    known.chain(others).map(|(k, rows)| (k, rows.as_slice()))
}

fn agentic(buckets: &Buckets) -> &[Row] {
    buckets.get(AGENTIC).map_or(&[], Vec::as_slice)
}

/// Plans the sweep of `matrix` under `decision`; no sweep → no canary and no families.
pub fn plan(decision: &LabelDecision, matrix: &MatrixOutput) -> SweepPlan {
    if !decision.sweep {
        return SweepPlan::none();
    }
    let selected = if decision.canary { Some(select_canary(matrix)) } else { None };
    let (canary, single_node) = match &selected {
        Some((Some(canary), remaining)) => (Some(canary.clone()), &remaining.single_node),
        _ => (None, &matrix.single_node),
    };

    let mut families = Vec::new();
    let mut push = |name: String, template: Template, eval_only: bool, agentic: bool, rows: &[Row]| {
        if rows.is_empty() {
            return;
        }
        families.push(PlannedFamily {
            job: format!("sweep-{}", name.replace(' ', "-")),
            name,
            template,
            eval_only,
            fail_fast: decision.fail_fast,
            agentx_fast: decision.agentx_fast && agentic && !eval_only,
            rows: rows.to_vec(),
        });
    };
    for (bucket, rows) in ordered_buckets(single_node) {
        push(format!("single-node {bucket}"), Template::SingleNode, false, false, rows);
    }
    for (bucket, rows) in ordered_buckets(&matrix.multi_node) {
        push(format!("multi-node {bucket}"), Template::MultiNode, false, false, rows);
    }
    push(AGENTIC.to_owned(), Template::SingleNode, false, true, agentic(&matrix.single_node));
    push(format!("multi-node {AGENTIC}"), Template::MultiNode, false, true, agentic(&matrix.multi_node));
    push("eval".to_owned(), Template::SingleNode, true, false, &matrix.evals);
    push("agentic eval".to_owned(), Template::SingleNode, true, true, &matrix.agentic_evals);
    push("multi-node eval".to_owned(), Template::MultiNode, true, false, &matrix.multinode_evals);
    push("multi-node agentic eval".to_owned(), Template::MultiNode, true, true, &matrix.multinode_agentic_evals);
    SweepPlan { sweep: true, canary, families }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intake::labels::{decide, PrFacts};
    use crate::matrix::output::ChangelogMetadata;
    use indexmap::IndexMap;
    use serde_json::json;

    fn row(value: serde_json::Value) -> Row {
        serde_json::from_value(value).unwrap()
    }

    fn bench(conc: i64, tag: &str) -> Row {
        row(json!({"conc": conc, "tag": tag, "run-eval": false}))
    }

    fn matrix() -> MatrixOutput {
        let buckets = |pairs: Vec<(&str, Vec<Row>)>| -> IndexMap<String, Vec<Row>> {
            pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
        };
        MatrixOutput {
            single_node: buckets(vec![
                ("8k1k", vec![bench(2, "s8-2")]),
                ("1k1k", vec![bench(4, "s1-4"), bench(2, "s1-2")]),
                ("agentic", vec![bench(1, "ag-1")]),
                ("2048_128", vec![bench(8, "odd")]),
            ]),
            multi_node: buckets(vec![("1k1k", vec![bench(16, "m1")]), ("agentic", vec![bench(8, "mag")])]),
            evals: vec![row(json!({"conc": 1, "tag": "ev", "run-eval": true}))],
            agentic_evals: vec![],
            multinode_evals: vec![],
            multinode_agentic_evals: vec![bench(4, "mage")],
            changelog_metadata: ChangelogMetadata { base_ref: "b".into(), head_ref: "h".into(), entries: vec![] },
        }
    }

    fn decision(labels: &[&str]) -> LabelDecision {
        decide(labels, &PrFacts { changelog_appended: true, ..PrFacts::default() })
    }

    fn tags(f: &PlannedFamily) -> Vec<&str> {
        f.rows.iter().map(|r| r["tag"].as_str().unwrap()).collect()
    }

    #[test]
    fn fail_fast_label_plans_a_canary_and_fail_fast_families_in_upstream_job_order() {
        let p = plan(&decision(&["full-sweep-fail-fast"]), &matrix());
        assert!(p.sweep);
        assert_eq!(p.canary.as_ref().unwrap()["tag"], json!("s1-2"));
        let names: Vec<&str> = p.families.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "single-node 1k1k",
                "single-node 8k1k",
                "single-node 2048_128",
                "multi-node 1k1k",
                "agentic",
                "multi-node agentic",
                "eval",
                "multi-node agentic eval"
            ]
        );
        assert_eq!(tags(&p.families[0]), ["s1-4"], "the canary is measured once");
        assert_eq!(p.families[0].job, "sweep-single-node-1k1k");
        assert!(p.families.iter().all(|f| f.fail_fast));
        assert_eq!(p.point_count(), 9);
    }

    #[test]
    fn non_canary_label_runs_everything_without_canary_or_fail_fast() {
        let p = plan(&decision(&["non-canary-full-sweep-enabled"]), &matrix());
        assert!(p.canary.is_none());
        assert_eq!(tags(&p.families[0]), ["s1-4", "s1-2"]);
        assert!(p.families.iter().all(|f| !f.fail_fast));
        assert_eq!(p.point_count(), 9);
    }

    #[test]
    fn full_sweep_enabled_has_a_canary_but_no_fail_fast() {
        let p = plan(&decision(&["full-sweep-enabled"]), &matrix());
        assert!(p.canary.is_some());
        assert!(p.families.iter().all(|f| !f.fail_fast));
    }

    #[test]
    fn agentx_fast_reaches_only_the_two_agentic_benchmark_families() {
        let p = plan(&decision(&["full-sweep-enabled", "agentx-fast"]), &matrix());
        let fast: Vec<&str> = p.families.iter().filter(|f| f.agentx_fast).map(|f| f.name.as_str()).collect();
        assert_eq!(fast, ["agentic", "multi-node agentic"]);
    }

    #[test]
    fn no_sweep_plans_nothing() {
        let p = plan(&decision(&["all-evals"]), &matrix());
        assert_eq!(p, SweepPlan::none());
        assert_eq!(p.point_count(), 0);
    }

    #[test]
    fn a_canary_that_empties_its_bucket_leaves_the_family_out() {
        let mut m = matrix();
        m.single_node.shift_remove("1k1k");
        m.single_node.insert("8k1k".into(), vec![bench(1, "only")]);
        let p = plan(&decision(&["full-sweep-fail-fast"]), &m);
        assert_eq!(p.canary.as_ref().unwrap()["tag"], json!("only"));
        assert!(p.families.iter().all(|f| !f.name.starts_with("single-node 8k1k")));
    }

    #[test]
    fn eval_families_are_eval_only_and_templated_by_node_kind() {
        let p = plan(&decision(&["full-sweep-enabled"]), &matrix());
        let eval = p.families.iter().find(|f| f.name == "multi-node agentic eval").unwrap();
        assert!(eval.eval_only);
        assert_eq!(eval.template, Template::MultiNode);
        assert!(!p.families.iter().find(|f| f.name == "agentic").unwrap().eval_only);
    }
}
