//! Check 1 — In-PR sweep + evals (spec 30 Check 1, ARCHITECTURE decision 7).

use std::collections::BTreeMap;

use serde_json::json;

use std::collections::BTreeSet;

use super::{reason, Context, Outcome, Reason};
use crate::domain::master_config;
use crate::evidence::{Evidence, Fact};
use crate::pr::affected::head_span;
use crate::pr::configs::AffectedConfig;
use crate::pr::reach;
use crate::pr::sweep_runs::{examine, no_eval_expected, Examination, NoEvalReason, Problem};

/// Why a sweep on an older in-PR commit does not stand for the head.
#[derive(Debug, Clone, PartialEq)]
enum NotEquivalent {
    /// A file the sweep ran differs at the head (path, how).
    Changed(String, &'static str),
    /// The evidence cannot tell (what is missing).
    Unverifiable(Reason),
}

fn short(sha: &str) -> &str {
    sha.get(..7).unwrap_or(sha)
}

fn blobs_at<'e>(ev: &'e Evidence, sha: &str) -> Result<&'e BTreeMap<String, String>, NotEquivalent> {
    match ev.blobs.get(sha) {
        Some(Fact::Ok(blobs)) => Ok(blobs),
        Some(Fact::Unavailable(error)) => {
            Err(NotEquivalent::Unverifiable(reason("blobs_unreadable").arg("sha", short(sha)).error(error)))
        }
        None => Err(NotEquivalent::Unverifiable(reason("blobs_absent").arg("sha", short(sha)))),
    }
}

/// An affected entry's text at the head.
fn head_entry(cx: &Context, config: &AffectedConfig) -> Result<String, NotEquivalent> {
    let file = &config.file;
    if cx.evidence.head.text(file).is_none() {
        return Err(NotEquivalent::Unverifiable(reason("missing_at_head").arg("path", file.as_str())));
    }
    head_span(cx, config).map(|span| span.text).ok_or_else(|| {
        NotEquivalent::Unverifiable(
            reason("entry_unreadable_at_head").arg("key", config.key.as_str()).arg("path", file.as_str()),
        )
    })
}

/// An affected entry's text at the sweep commit, from `Evidence.texts_at`: `Ok(None)` when the
/// entry did not exist there.
fn sweep_entry(ev: &Evidence, sweep_sha: &str, config: &AffectedConfig) -> Result<Option<String>, NotEquivalent> {
    let file = &config.file;
    match ev.texts_at.get(sweep_sha) {
        Some(Fact::Ok(texts)) => {
            Ok(texts.get(file).and_then(|text| master_config::entry_text(text, file, &config.key)))
        }
        Some(Fact::Unavailable(error)) => {
            Err(NotEquivalent::Unverifiable(reason("master_text_unreadable").arg("sha", short(sweep_sha)).error(error)))
        }
        None => Err(NotEquivalent::Unverifiable(
            reason("master_text_absent")
                .arg("path", file.as_str())
                .arg("sha", short(sweep_sha))
                .arg("key", config.key.as_str()),
        )),
    }
}

/// Whether every file and master-config entry the sweep at `sweep_sha` ran is identical at the
/// head (ARCHITECTURE decision 7; the published "keeps the recipe blob 1ea4e7f and the master
/// entry unchanged" argument, decision F8). The files it ran are what the launch model says each
/// affected config runs at the head: its runner launchers, benchmark scripts and recipes and the
/// files they reach; they are compared by blob SHA. A master config whose blob differs (the PR
/// merged main) is compared entry by entry, its text at the sweep commit from
/// `Evidence.texts_at`. Returns how many files and entries were compared.
fn head_equivalent(cx: &Context, sweep_sha: &str) -> Result<usize, NotEquivalent> {
    let ev = cx.evidence;
    let (sweep, head) = (blobs_at(ev, sweep_sha)?, blobs_at(ev, &ev.pull_request.head_sha)?);
    let reaches = reach::affected_reach(cx)
        .map_err(|e| NotEquivalent::Unverifiable(reason("sweep_configs_unreadable").arg("error", e)))?;
    if reaches.is_empty() {
        return Err(NotEquivalent::Unverifiable(reason("no_entry_for_sweep")));
    }
    let mut ran: BTreeSet<&str> = BTreeSet::new();
    for r in reaches {
        let config = &r.config;
        let master_same = sweep.get(&config.file).is_some_and(|blob| head.get(&config.file) == Some(blob));
        let at_head = head_entry(cx, config)?;
        let at_sweep = if master_same { Some(at_head.clone()) } else { sweep_entry(ev, sweep_sha, config)? };
        if at_sweep.as_ref() != Some(&at_head) {
            let entry = format!("{}: {}", config.file, config.key);
            return Err(NotEquivalent::Changed(entry, if at_sweep.is_some() { "changed" } else { "added" }));
        }
        if !r.launch.resolves() {
            return Err(NotEquivalent::Unverifiable(
                reason("launch_unrecorded").arg("key", config.key.as_str()).arg("sha", short(sweep_sha)),
            ));
        }
        ran.extend(r.launch.jobs.iter().filter_map(|j| j.launcher.as_deref()));
        ran.extend(r.path.files.iter().map(|f| f.path.as_str()));
    }
    for path in &ran {
        let how = match (sweep.get(*path), head.get(*path)) {
            (Some(a), Some(b)) if a == b => continue,
            (Some(_), Some(_)) => "changed",
            (Some(_), None) => "removed",
            (None, Some(_)) => "added",
            (None, None) => {
                return Err(NotEquivalent::Unverifiable(
                    reason("sweep_file_unrecorded").arg("path", *path).arg("sha", short(sweep_sha)),
                ))
            }
        };
        return Err(NotEquivalent::Changed((*path).to_owned(), how));
    }
    Ok(ran.len() + reaches.len())
}

pub fn check(cx: &Context) -> Outcome {
    let ev = cx.evidence;
    let Examination { best, benchmarks_only, problems, unreadable } = examine(ev);
    // A run without evals stands when the matrix expects none (1.c); why that is unknown is named.
    let (mut best, mut no_eval, mut undecided) = (best, None, None);
    if let (None, Some(q)) = (&best, benchmarks_only) {
        match no_eval_expected(ev) {
            Ok(Some(reason)) => (best, no_eval) = (Some(q), Some(reason)),
            Ok(None) => {}
            Err(why) => undecided = Some(why),
        }
    }
    if let Some(q) = best {
        let short = |sha: &str| sha.get(..7).unwrap_or(sha).to_owned();
        let head = &ev.pull_request.head_sha;
        let pass_key = if no_eval.is_some() { "no_eval_expected" } else { "qualifying_run" };
        let base = |key| {
            Outcome::new(if key == pass_key { super::Status::Pass } else { super::Status::Fail }, key)
                .arg("sha", short(&q.sha))
                .arg("bench", q.benchmark_jobs)
                .arg("evals", q.eval_jobs)
                .arg("run", q.label())
                .arg("head", short(head))
                .arg("append_only", no_eval == Some(NoEvalReason::AppendOnly))
                .evidence(q.evidence_line())
        };
        if q.sha == *head {
            return base(pass_key).arg("files", 0);
        }
        return match head_equivalent(cx, &q.sha) {
            Ok(files) => base(pass_key).arg("files", files),
            Err(NotEquivalent::Changed(path, how)) => base("head_changed").arg("file", path).arg("how", how),
            Err(NotEquivalent::Unverifiable(why)) => base("head_unverifiable").arg("reason", why),
        };
    }
    let runs: Vec<serde_json::Value> = problems
        .iter()
        .map(|(sha, run, problem)| match problem {
            Problem::Failed { count, example } => {
                json!({"sha": sha, "run": run, "problem": "failed", "count": count, "example": example})
            }
            Problem::Running { count } => json!({"sha": sha, "run": run, "problem": "running", "count": count}),
            Problem::NoBenchmark => json!({"sha": sha, "run": run, "problem": "no_bench"}),
            Problem::NoEval { .. } => json!({"sha": sha, "run": run, "problem": "no_eval"}),
        })
        .collect();
    let mut outcome =
        Outcome::fail("no_qualifying_run").arg("runs", runs).arg("unreadable", unreadable).arg("undecided", undecided);
    for (_, run, _) in &problems {
        outcome = outcome.evidence(match run.as_str() {
            Some(sweep) => format!("sweepgate sweep {sweep}"),
            None => format!("run {run}"),
        });
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{english, evidence, run, with_added_file};
    use crate::checks::Status;
    use crate::evidence::WorkflowRun;
    use crate::pr::sweep_runs::qualifying_run;

    fn outcome(e: &Evidence) -> Outcome {
        check(&Context::new(e))
    }

    #[test]
    fn passes_with_successful_benchmark_and_eval_jobs_on_an_in_pr_commit() {
        let mut e = evidence();
        e.check_runs.insert(
            "b".repeat(40),
            Fact::Ok(vec![
                run("single-node 8k1k / p1 | dsr1 fp4 b200 sgl TP8 c4", "success", 7),
                run("single-node 8k1k / p1 | dsr1 fp4 b200 sgl TP8 c8", "success", 7),
                run("eval / p1 | dsr1 fp4 b200 sgl TP8 c64 | eval", "success", 7),
                run("collect-evals / collect-evals", "success", 7),
            ]),
        );
        let o = outcome(&e);
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["bench"], 2);
        assert_eq!(o.message.args["evals"], 1);
        assert_eq!(qualifying_run(&e).unwrap().run_id, 7);
    }

    #[test]
    fn a_benchmark_run_and_a_separate_eval_run_on_one_commit_qualify_together() {
        let mut e = evidence();
        let both = |eval: &str| {
            Fact::Ok(vec![
                run("single-node 8k1k / p1 | dsr1 fp4 b200 sgl TP8 c4", "success", 7),
                run("eval / p1 | dsr1 fp4 b200 sgl TP8 c64 | eval", eval, 8),
            ])
        };
        e.check_runs.insert("b".repeat(40), both("success"));
        let o = outcome(&e);
        assert_eq!(o.status, Status::Pass, "{o:?}");
        let q = qualifying_run(&e).unwrap();
        assert_eq!((q.run_id, q.benchmark_run_id), (8, 7), "Check 2 reads the eval run, 14/18 the benchmark run");
        e.check_runs.insert("b".repeat(40), both("failure"));
        assert_eq!(outcome(&e).status, Status::Fail, "every executed job of the commit must succeed");
    }

    #[test]
    fn a_green_sweep_on_a_commit_rebased_out_of_the_pr_does_not_count() {
        let mut e = evidence();
        e.check_runs.insert(
            "f".repeat(40), // not in e.commits
            Fact::Ok(vec![run("single-node 8k1k / x", "success", 9), run("eval / x", "success", 9)]),
        );
        let o = outcome(&e);
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.key, "no_qualifying_run");
    }

    /// A PR appending one changelog entry for a config whose 8k1k points run at `concs`, with a
    /// run of benchmark jobs only on the head.
    fn benchmarks_only_pr(concs: &str, append_only: bool) -> Evidence {
        let master = format!("dsr1-fp4-b200-sglang:\n  image: lmsysorg/sglang:v0.5.9\n  model: deepseek-ai/DeepSeek-R1\n  model-prefix: dsr1\n  runner: b200\n  precision: fp4\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - {{ tp: 8, conc-list: [{concs}] }}\n");
        let old_log = "- config-keys:\n  - dsr1-fp4-b200-sglang\n  description:\n  - Initial sweep\n  pr-link: https://github.com/example/bench/pull/1\n";
        let flag = if append_only { "  append-only: true\n" } else { "" };
        let new_log = format!("{old_log}\n- config-keys:\n  - dsr1-fp4-b200-sglang\n  description:\n  - Retune\n  pr-link: https://github.com/example/bench/pull/42\n{flag}");
        let mut e = evidence();
        e.files.push(crate::evidence::ChangedFile {
            filename: "perf-changelog.yaml".into(),
            previous_filename: None,
            status: "modified".into(),
            patch: None,
        });
        // An append-only PR appends points to an existing curve: the base has the first one.
        let first = concs.split(',').next().unwrap_or(concs);
        let base_master = if append_only { master.replace(concs, first) } else { master.clone() };
        for (tree, master, log) in [(&mut e.base, base_master, old_log.to_owned()), (&mut e.head, master, new_log)] {
            tree.insert("configs/nvidia-master.yaml", master);
            tree.insert("configs/amd-master.yaml", "{}\n");
            tree.insert("configs/runners.yaml", "labels:\n  b200: [b200-nv_0]\n");
            tree.insert("perf-changelog.yaml", log);
        }
        e.check_runs.insert("b".repeat(40), Fact::Ok(vec![run("single-node 8k1k / dsr1 c4", "success", 5)]));
        e
    }

    /// 1.c: a run without evals stands only when the PR's matrix expects no eval.
    #[test]
    fn a_pr_whose_matrix_expects_no_eval_is_judged_without_one() {
        // Every point is below MIN_EVAL_CONC (16): the generator emits no eval job.
        let e = benchmarks_only_pr("4, 8", false);
        let o = outcome(&e);
        assert_eq!((o.status, o.message.key.as_str()), (Status::Pass, "no_eval_expected"), "{o:?}");
        assert_eq!(o.message.args["append_only"], false);
        let q = qualifying_run(&e).expect("the benchmark-only run qualifies");
        assert_eq!((q.run_id, q.eval_jobs, q.evals_expected), (5, 0, false));
        // An append-only entry runs no evals, whatever its concurrencies.
        let o = outcome(&benchmarks_only_pr("4, 128", true));
        assert_eq!((o.status, o.message.args["append_only"].as_bool()), (Status::Pass, Some(true)), "{o:?}");
        // A point at conc 64 is eval-eligible: the missing eval job is a FAIL.
        let e = benchmarks_only_pr("4, 64", false);
        let o = outcome(&e);
        assert_eq!((o.status, o.message.args["runs"][0]["problem"].as_str()), (Status::Fail, Some("no_eval")));
        assert_eq!(qualifying_run(&e), None);
        // all-evals drops the concurrency floor.
        let mut e = benchmarks_only_pr("4, 8", false);
        e.pull_request.labels.push("all-evals".into());
        assert_eq!(outcome(&e).status, Status::Fail);
    }

    /// When the matrix cannot be generated, "no eval expected" is never assumed.
    #[test]
    fn an_undecidable_matrix_keeps_the_missing_eval_a_fail() {
        let mut e = benchmarks_only_pr("4, 8", false);
        e.base = Default::default();
        let o = outcome(&e);
        assert_eq!(o.status, Status::Fail);
        assert!(english(&o.message.args["undecided"]).contains("perf-changelog.yaml"), "{o:?}");
        for lang in [crate::checks::catalog::Lang::En, crate::checks::catalog::Lang::Zh] {
            let result = crate::checks::CheckResult { id: 1, outcome: o.clone() };
            let row = crate::checks::text::message_text(&result, lang).expect("renders");
            assert!(row.contains("perf-changelog.yaml"), "{row}");
        }
    }

    #[test]
    fn skipped_evals_and_aggregators_are_not_evidence() {
        let mut e = evidence();
        e.check_runs.insert(
            "b".repeat(40),
            Fact::Ok(vec![
                run("single-node 8k1k / x", "success", 3),
                run("eval / x", "skipped", 3),
                run("collect-evals / collect-evals", "success", 3),
            ]),
        );
        let o = outcome(&e);
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.args["runs"][0]["problem"], "no_eval");
    }

    #[test]
    fn one_failed_job_disqualifies_its_run() {
        let mut e = evidence();
        e.check_runs.insert(
            "b".repeat(40),
            Fact::Ok(vec![
                run("multi-node agentic / x", "success", 4),
                run("multi-node agentic / y", "failure", 4),
                run("multi-node agentic eval / x", "success", 4),
            ]),
        );
        let o = outcome(&e);
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.args["runs"][0]["problem"], "failed");
        assert_eq!(o.message.args["runs"][0]["example"], "multi-node agentic / y");
    }

    const MASTER: &str = "configs/nvidia-master.yaml";
    const SCRIPT: &str = "benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200_sglang.sh";
    const RECIPE: &str = "benchmarks/multi_node/srt-slurm-recipes/sglang/x/disagg.yaml";

    fn master(sglang_conc: u32, trt_conc: u32) -> String {
        format!(
            "dsr1-fp4-b200-sglang:\n  model-prefix: dsr1\n  runner: b200\n  precision: fp4\n  framework: sglang\n{}\
             dsr1-fp4-b200-trt:\n  model-prefix: dsr1\n  runner: b200\n  precision: fp4\n  framework: trt\n{}\
             dsr1-fp4-gb200-dynamo-sglang:\n  model-prefix: dsr1\n  runner: gb200\n  precision: fp4\n  framework: dynamo-sglang\n  multinode: true\n  \
             scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - conc-list: [4]\n        \
             additional-settings:\n        - \"CONFIG_FILE=recipes/sglang/x/disagg.yaml:zip_override_hi[1]\"\n",
            single_node(sglang_conc),
            single_node(trt_conc),
        )
    }

    fn single_node(conc_end: u32) -> String {
        format!(
            "  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      \
             - {{ tp: 8, conc-start: 4, conc-end: {conc_end} }}\n"
        )
    }

    /// The published shape: the sweep ran on `a…`; the head `b…` merged main, which changed the
    /// master file (an unrelated entry) and other models' scripts. The PR affects
    /// `dsr1-fp4-b200-sglang` only (its conc-end 32 → 64 at base).
    fn green_on_the_older_commit() -> Evidence {
        let mut e = with_added_file(evidence(), MASTER, &master(64, 128));
        e.base.insert(MASTER, master(32, 128));
        // What the launch model reads at the head: no runners.yaml, so the naming rule finds the
        // single-node script, which sources the library; the recipe is the repository's.
        e.head.insert(SCRIPT, "source \"$(dirname \"$0\")/../../benchmark_lib.sh\"\npython3 -m sglang.launch_server\n");
        e.head.insert("benchmarks/benchmark_lib.sh", "wait_for_server() { :; }\n");
        e.head.insert("benchmarks/single_node/new_helper.sh", "echo unused\n");
        e.head.insert(RECIPE, "name: x\n");
        e.check_runs.insert(
            "a".repeat(40),
            Fact::Ok(vec![run("single-node 8k1k / x", "success", 5), run("eval / x", "success", 5)]),
        );
        e.check_runs.insert("b".repeat(40), Fact::Ok(vec![]));
        let files = |master_blob: &str, other: &str| {
            Fact::Ok(BTreeMap::from(
                [
                    (RECIPE, "1ea4e7f"),
                    (SCRIPT, "2b7c"),
                    ("benchmarks/benchmark_lib.sh", "3c8d"),
                    ("benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200_trt.sh", other),
                    ("benchmarks/single_node/agentic/dsv4_fp4_b300_vllm.sh", other),
                    ("benchmarks/multi_node/srt_slurm_launch.sh", other),
                    ("runners/launch_mi355x-amds.sh", other),
                    (MASTER, master_blob),
                    ("README.md", other),
                ]
                .map(|(path, blob)| (path.to_owned(), blob.to_owned())),
            ))
        };
        e.blobs.insert("a".repeat(40), files("77aa", "old"));
        e.blobs.insert("b".repeat(40), files("88bb", "new"));
        e.texts_at.insert("a".repeat(40), Fact::Ok(BTreeMap::from([(MASTER.to_owned(), master(64, 64))])));
        e
    }

    fn with_blob(mut e: Evidence, sha: char, path: &str, blob: Option<&str>) -> Evidence {
        if let Some(Fact::Ok(blobs)) = e.blobs.get_mut(&sha.to_string().repeat(40)) {
            match blob {
                Some(blob) => blobs.insert(path.into(), blob.into()),
                None => blobs.remove(path),
            };
        }
        e
    }

    fn key_and_file(o: &Outcome) -> (Status, &str, &str, &str) {
        let arg = |name: &str| o.message.args.get(name).and_then(|v| v.as_str()).unwrap_or_default();
        (o.status, o.message.key.as_str(), arg("file"), arg("how"))
    }

    #[test]
    fn a_merge_of_main_after_the_sweep_keeps_it_when_the_files_and_entry_it_ran_are_unchanged() {
        let o = outcome(&green_on_the_older_commit());
        // The script, the library it sources and the entry; not the trt script, the multinode,
        // agentic and other-SKU files, nor the recipe of an entry the PR does not affect.
        assert_eq!((o.status, o.message.args["files"].clone()), (Status::Pass, json!(3)), "{o:?}");
        let o =
            outcome(&with_blob(green_on_the_older_commit(), 'b', "benchmarks/single_node/new_helper.sh", Some("9")));
        assert_eq!(o.status, Status::Pass, "a script nothing the config runs reaches: {o:?}");
        let o = outcome(&with_blob(green_on_the_older_commit(), 'a', "benchmarks/benchmark_lib.sh", None));
        assert_eq!(
            key_and_file(&o),
            (Status::Fail, "head_changed", "benchmarks/benchmark_lib.sh", "added"),
            "the library the script sources"
        );
    }

    #[test]
    fn a_changed_script_or_entry_the_sweep_ran_fails_naming_it() {
        let o = outcome(&with_blob(green_on_the_older_commit(), 'b', SCRIPT, Some("9f00d")));
        assert_eq!(key_and_file(&o), (Status::Fail, "head_changed", SCRIPT, "changed"));
        let o = outcome(&with_blob(green_on_the_older_commit(), 'b', SCRIPT, None));
        assert_eq!(key_and_file(&o), (Status::Fail, "head_changed", SCRIPT, "removed"));
        let mut e = green_on_the_older_commit();
        e.texts_at.insert("a".repeat(40), Fact::Ok(BTreeMap::from([(MASTER.to_owned(), master(32, 64))])));
        let o = outcome(&e);
        assert_eq!(
            key_and_file(&o),
            (Status::Fail, "head_changed", "configs/nvidia-master.yaml: dsr1-fp4-b200-sglang", "changed")
        );
        e.texts_at.insert("a".repeat(40), Fact::Ok(BTreeMap::new()));
        assert_eq!(key_and_file(&outcome(&e)).3, "added", "the entry did not exist at the sweep commit");
    }

    #[test]
    fn a_multinode_entry_runs_the_recipe_its_config_file_names() {
        let affected_multinode = |e: Evidence| {
            let mut e = e;
            e.base.insert(MASTER, master(64, 128).replace("dynamo-sglang:", "dynamo-sglang-old:"));
            e.texts_at.insert("a".repeat(40), Fact::Ok(BTreeMap::from([(MASTER.to_owned(), master(64, 128))])));
            e
        };
        let e = affected_multinode(green_on_the_older_commit());
        assert_eq!(outcome(&e).status, Status::Pass, "{:?}", outcome(&e));
        let e = with_blob(e, 'b', "benchmarks/multi_node/srt_slurm_launch.sh", Some("old"));
        assert_eq!(outcome(&e).status, Status::Pass, "a script the recipe does not reach: {:?}", outcome(&e));
        let e = with_blob(e, 'b', RECIPE, Some("5d1c"));
        assert_eq!(key_and_file(&outcome(&e)), (Status::Fail, "head_changed", RECIPE, "changed"));
        let e = with_blob(with_blob(e, 'b', RECIPE, None), 'a', RECIPE, None);
        let o = outcome(&e);
        assert_eq!(o.message.key, "head_unverifiable");
        assert!(
            Some(english(&o.message.args["reason"])).is_some_and(|r| r.contains("recipes/sglang/x/disagg.yaml")),
            "{o:?}"
        );
    }

    #[test]
    fn a_sweep_on_an_older_commit_without_blobs_or_texts_is_unverifiable() {
        let mut e = green_on_the_older_commit();
        e.blobs.insert("b".repeat(40), Fact::Unavailable("HTTP 502".into()));
        let o = outcome(&e);
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "head_unverifiable"));
        assert!(
            Some(english(&o.message.args["reason"])).is_some_and(|r| r.contains("bbbbbbb") && r.contains("HTTP 502"))
        );
        e.blobs.clear();
        assert_eq!(outcome(&e).message.key, "head_unverifiable", "format 1 has no blobs");

        let mut e = green_on_the_older_commit();
        e.texts_at.insert("a".repeat(40), Fact::Unavailable("HTTP 500".into()));
        let o = outcome(&e);
        assert!(Some(english(&o.message.args["reason"])).is_some_and(|r| r.contains("HTTP 500")), "{o:?}");
        e.texts_at.clear();
        let o = outcome(&e);
        assert_eq!(o.message.key, "head_unverifiable", "a differing master blob without its text proves nothing");

        let mut e = green_on_the_older_commit();
        for sha in ['a', 'b'] {
            e = with_blob(e, sha, SCRIPT, None);
        }
        let o = outcome(&e);
        assert!(Some(english(&o.message.args["reason"])).is_some_and(|r| r.contains(SCRIPT)), "{o:?}");
        let mut e = green_on_the_older_commit();
        e.head.remove(SCRIPT);
        let o = outcome(&e);
        assert!(Some(english(&o.message.args["reason"])).is_some_and(|r| r.contains("no launcher script")), "{o:?}");
        let mut e = green_on_the_older_commit();
        e.files.clear();
        assert_eq!(outcome(&e).message.key, "head_unverifiable", "no affected config: nothing the sweep ran is known");
    }

    /// A sweepgate sweep (check run 900) on `sha`, as the collector attaches it.
    fn with_sweep(sha: &str, conclusion: &str, artifacts: &[(&str, Fact<()>)]) -> Evidence {
        let mut e = evidence();
        let mut check = run("sweepgate/sweep", conclusion, 900);
        check.details_url = "https://sweepgate.example/prs/example/bench/42".into();
        e.check_runs.insert(sha.into(), Fact::Ok(vec![check]));
        e.runs.insert(
            900,
            WorkflowRun {
                id: 900,
                name: "sweepgate/sweep".into(),
                path: String::new(),
                head_sha: sha.into(),
                event: "sweepgate".into(),
                status: "completed".into(),
                conclusion: Some(conclusion.into()),
                artifacts: artifacts.iter().map(|(n, f)| ((*n).to_owned(), f.clone())).collect(),
                archives: BTreeMap::new(),
                jobs: BTreeMap::new(),
                sweep_id: Some("pr42-bbbbbbbbbb-a1".into()),
                jobs_unavailable: None,
            },
        );
        e
    }

    #[test]
    fn a_sweepgate_sweep_with_stored_results_is_the_in_pr_sweep_and_is_named() {
        let ok = [("bmk_p1", Fact::Ok(())), ("bmk_p2", Fact::Ok(())), ("eval_p1", Fact::Ok(()))];
        let e = with_sweep(&"b".repeat(40), "success", &ok);
        let o = outcome(&e);
        assert_eq!((o.status, o.message.key.as_str()), (Status::Pass, "qualifying_run"), "{o:?}");
        assert_eq!(o.message.args["run"], "pr42-bbbbbbbbbb-a1");
        assert_eq!((o.message.args["bench"].clone(), o.message.args["evals"].clone()), (json!(2), json!(1)));
        assert_eq!(o.evidence, ["sweepgate sweep pr42-bbbbbbbbbb-a1"]);
        let q = qualifying_run(&e).unwrap();
        assert_eq!((q.run_id, q.sweep_id.as_deref()), (900, Some("pr42-bbbbbbbbbb-a1")));
    }

    #[test]
    fn a_sweepgate_sweep_that_failed_or_cannot_be_read_does_not_count() {
        let ok = [("bmk_p1", Fact::Ok(())), ("eval_p1", Fact::Ok(()))];
        let o = outcome(&with_sweep(&"b".repeat(40), "failure", &ok));
        assert_eq!((o.status, o.message.args["runs"][0]["problem"].as_str()), (Status::Fail, Some("failed")));
        assert_eq!(o.message.args["runs"][0]["run"], "pr42-bbbbbbbbbb-a1");
        let unread = [("*", Fact::Unavailable("sweep pr42-bbbbbbbbbb-a1: not stored".into()))];
        let o = outcome(&with_sweep(&"b".repeat(40), "success", &unread));
        assert_eq!(o.status, Status::Fail);
        assert!(o.message.args["runs"][0]["example"].as_str().unwrap().contains("not stored"), "{o:?}");
        let no_eval = [("bmk_p1", Fact::Ok(()))];
        let o = outcome(&with_sweep(&"b".repeat(40), "success", &no_eval));
        assert_eq!(o.message.args["runs"][0]["problem"], "no_eval");
        let o = outcome(&with_sweep(&"f".repeat(40), "success", &ok));
        assert_eq!(o.message.key, "no_qualifying_run", "a sweep on a commit rebased out of the PR");
    }

    #[test]
    fn head_equivalence_applies_to_a_sweepgate_sweep_on_an_older_commit() {
        let ok = [("bmk_p1", Fact::Ok(())), ("eval_p1", Fact::Ok(()))];
        let sweep = with_sweep(&"a".repeat(40), "success", &ok);
        let mut e = green_on_the_older_commit();
        e.check_runs.insert("a".repeat(40), sweep.check_runs[&"a".repeat(40)].clone());
        e.runs = sweep.runs;
        let o = outcome(&e);
        assert_eq!((o.status, o.message.key.as_str()), (Status::Pass, "qualifying_run"), "{o:?}");
        assert_eq!(o.message.args["run"], "pr42-bbbbbbbbbb-a1");
        e.blobs.insert("a".repeat(40), Fact::Unavailable("HTTP 502".into()));
        let o = outcome(&e);
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "head_unverifiable"), "{o:?}");
        assert_eq!(o.message.args["run"], "pr42-bbbbbbbbbb-a1");
    }

    #[test]
    fn unreadable_check_runs_never_pass() {
        let mut e = evidence();
        e.check_runs.insert("b".repeat(40), Fact::Unavailable("HTTP 502".into()));
        let o = outcome(&e);
        assert_eq!(o.status, Status::Fail);
        assert_eq!(
            o.message.args["unreadable"],
            json!(["aaaaaaa", "bbbbbbb"]),
            "a commit without check-runs is unknown too"
        );
    }
}
