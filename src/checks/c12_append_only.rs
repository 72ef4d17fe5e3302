//! Check 12 — Append-only (spec 30 Check 12, spec 20 §8): the matrix module's own
//! `append_only_delta` and scope rule decide the mechanics; behavioural isolation is proven only
//! for files that cannot reach an existing point (docs/decisions.md D13).

use super::{reason, Context, Outcome};
use crate::matrix::process::{parse_additions, process, ProcessOptions, Revision};
use crate::pr::generated::appended;
use crate::pr::scan::{self, Role};
use crate::repo::{Layout, Logical};

/// Where what a sweep runs lives: the benchmark scripts and recipes, the runners, the CI
/// workflows, the matrix and client utilities, the configs and the golden AL files the launchers
/// read. A change elsewhere (documentation, `experimental/`, other tooling) cannot reach a
/// benchmark point (decision CO8).
const SWEEP_ROOTS: [&str; 6] =
    ["benchmarks/", "runners/", ".github/workflows/", "utils/", "configs/", "golden_al_distribution/"];

/// Files an append-only PR may change without reaching existing points. Upstream: "Their path
/// alone is never a reason to fail"; a change the sweep can reach still fails here unless it is
/// a new recipe, because exclusivity cannot be proven from the diff (12.b is human).
fn isolated(path: &str, status: &str) -> bool {
    let p = scan::logical_path(path);
    match scan::role(path) {
        Role::MasterConfig => true, // the scope rule checks the entries themselves
        Role::Recipe => status == "added",
        _ => p == "perf-changelog.yaml" || p.ends_with(".md") || !SWEEP_ROOTS.iter().any(|r| p.starts_with(r)),
    }
}

pub fn check(cx: &Context) -> Outcome {
    let ev = cx.evidence;
    let layout = Layout::default();
    let Ok(Some(path)) = layout.resolve(&ev.head, Logical::Changelog) else {
        return Outcome::na("no_append_only");
    };
    if !ev.files.iter().any(|f| f.filename == path) {
        return Outcome::na("no_append_only");
    }
    let (Some(head_text), Some(base_text)) = (ev.head.text(&path), ev.base.text(&path)) else {
        return Outcome::unreadable(path.as_str(), reason("changelog_trees_needed"));
    };
    let options = ProcessOptions {
        trim_conc: false,
        all_evals: ev.pull_request.labels.iter().any(|l| l == "all-evals"),
        evals_only: ev.pull_request.labels.iter().any(|l| l == "evals-only"),
        max_rows: None,
    };
    let additions = match appended(ev, &path, base_text, head_text) {
        Ok(a) => a,
        Err(e) => return Outcome::fail("rejected").arg("reason", e.to_string()).evidence(path),
    };
    let entries =
        match parse_additions(&additions, &path, ProcessOptions { all_evals: false, evals_only: false, ..options }) {
            Ok(e) => e.entries,
            // Entries that never spell the key cannot set it: the check does not apply, whatever
            // else is wrong with them (that is the changelog validation's business).
            Err(_) if !additions.text.contains("append-only") => return Outcome::na("no_append_only"),
            Err(e) => return Outcome::fail("rejected").arg("reason", e.to_string()).evidence(path),
        };
    if !entries.iter().any(|e| e.append_only) {
        return Outcome::na("no_append_only");
    }
    let base = Revision { name: &ev.pull_request.base_sha, tree: &ev.base };
    let head = Revision { name: &ev.pull_request.head_sha, tree: &ev.head };
    let output = match process(&additions, &path, base, head, &layout, options) {
        Ok(o) => o,
        Err(e) => return Outcome::fail("rejected").arg("reason", e.to_string()).evidence(path),
    };
    let outside: Vec<&str> =
        ev.files.iter().filter(|f| !isolated(&f.filename, &f.status)).map(|f| f.filename.as_str()).collect();
    if !outside.is_empty() {
        return Outcome::fail("not_isolated").arg("files", outside);
    }
    let configs: Vec<String> = entries.iter().flat_map(|e| e.config_keys.clone()).collect();
    Outcome::pass("appended").arg("configs", configs).arg("points", output.all_rows().count()).evidence(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, with_change};
    use crate::checks::Status;
    use crate::evidence::Evidence;

    const RUNNERS: &str = "labels:\n  b200: [b200-nv_0, b200-nv_1]\n";

    fn master(concs: &str) -> String {
        format!("dsr1-fp4-b200-sglang:\n  image: lmsysorg/sglang:v0.5.9\n  model: deepseek-ai/DeepSeek-R1\n  model-prefix: dsr1\n  runner: b200\n  precision: fp4\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - {{ tp: 8, conc-list: [{concs}] }}\n")
    }

    const OLD_LOG: &str = "- config-keys:\n  - dsr1-fp4-b200-sglang\n  description:\n  - Initial sweep\n  pr-link: https://github.com/example/bench/pull/1\n";

    fn append_only_pr(base_concs: &str, head_concs: &str, append_only: bool) -> Evidence {
        let flag = if append_only { "  append-only: true\n" } else { "" };
        let new_log = format!("{OLD_LOG}\n- config-keys:\n  - dsr1-fp4-b200-sglang\n  description:\n  - Add conc 2\n  pr-link: https://github.com/example/bench/pull/42\n{flag}");
        let mut e = with_change(evidence(), "perf-changelog.yaml", &appending_patch(OLD_LOG, &new_log));
        e = with_change(e, "configs/nvidia-master.yaml", "@@ -1 +1 @@\n+x\n");
        for (tree, concs, log) in [(&mut e.base, base_concs, OLD_LOG.to_owned()), (&mut e.head, head_concs, new_log)] {
            tree.insert("configs/nvidia-master.yaml", master(concs));
            tree.insert("configs/amd-master.yaml", "{}\n");
            tree.insert("configs/runners.yaml", RUNNERS);
            tree.insert("perf-changelog.yaml", log);
        }
        e
    }

    /// The unified-diff patch (GitHub's form) of appending to `old` to make `new`.
    fn appending_patch(old: &str, new: &str) -> String {
        let added: Vec<&str> = new[old.len()..].lines().collect();
        let start = old.lines().count();
        let mut patch = format!("@@ -{start},0 +{},{} @@\n", start + 1, added.len());
        for line in added {
            patch.push_str(&format!("+{line}\n"));
        }
        patch
    }

    fn outcome(e: &Evidence) -> Outcome {
        check(&Context::new(e))
    }

    #[test]
    fn adding_a_point_to_an_existing_curve_passes() {
        let o = outcome(&append_only_pr("4, 8", "2, 4, 8", true));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["points"], 1);
    }

    #[test]
    fn removing_a_point_fails_with_upstreams_message() {
        let o = outcome(&append_only_pr("4, 8", "8, 16", true));
        assert_eq!(o.status, Status::Fail);
        assert!(o.message.args["reason"].as_str().unwrap_or_default().contains("may not remove"), "{o:?}");
    }

    #[test]
    fn nothing_new_fails() {
        let o = outcome(&append_only_pr("4, 8", "4, 8", true));
        assert_eq!(o.status, Status::Fail);
        assert!(o.message.args["reason"].as_str().unwrap_or_default().contains("did not add"), "{o:?}");
    }

    #[test]
    fn a_change_the_sweep_cannot_reach_is_isolated() {
        assert!(isolated("experimental/pareto/plot.py", "modified"));
        assert!(isolated("docs/notes.txt", "added"));
        assert!(!isolated("utils/bench_serving/client.py", "modified"));
        assert!(!isolated("golden_al_distribution/dsv4_mtp.yaml", "modified"));
        assert!(!isolated("benchmarks/benchmark_lib.sh", "modified"));
    }

    #[test]
    fn a_shared_script_change_is_not_isolated() {
        let e =
            with_change(append_only_pr("4, 8", "2, 4, 8", true), "benchmarks/benchmark_lib.sh", "@@ -1 +1 @@\n+x\n");
        assert_eq!(outcome(&e).message.key, "not_isolated");
    }

    #[test]
    fn eval_modifiers_are_refused_and_regular_entries_are_not_applicable() {
        let mut e = append_only_pr("4, 8", "2, 4, 8", true);
        e.pull_request.labels.push("all-evals".into());
        assert_eq!(outcome(&e).status, Status::Fail);
        assert_eq!(outcome(&append_only_pr("4, 8", "2, 4, 8", false)).status, Status::NotApplicable);
    }

    /// An entry inserted between two entries, read from the PR's own diff (the corpus' #2608):
    /// a line diff of the two texts may cut it across its `- config-keys:` neighbours.
    #[test]
    fn an_entry_inserted_between_entries_is_read_from_the_prs_diff() {
        let entry = |n: u32| {
            format!("- config-keys:\n    - k{n}\n  description:\n    - \"d{n}\"\n  pr-link: https://github.com/example/bench/pull/{n}\n\n")
        };
        let base = format!("{}{}", entry(1), entry(3));
        let head = format!("{}{}{}", entry(1), entry(2), entry(3));
        let mut e = with_change(evidence(), "perf-changelog.yaml", &format!("@@ -4,5 +4,11 @@\n     - \"d1\"\n   pr-link: https://github.com/example/bench/pull/1\n \n{} - config-keys:\n     - k3\n", entry(2).lines().map(|l| format!("+{l}\n")).collect::<String>()));
        e.base.insert("perf-changelog.yaml", base);
        e.head.insert("perf-changelog.yaml", head);
        let o = outcome(&e);
        assert_eq!((o.status, o.message.key.as_str()), (Status::NotApplicable, "no_append_only"), "{o:?}");
    }

    #[test]
    fn unparsable_additions_fail_only_when_they_spell_append_only() {
        for (added, status) in
            [("+- config-keys: [k\n", Status::NotApplicable), ("+- append-only: [true\n", Status::Fail)]
        {
            let mut e = with_change(evidence(), "perf-changelog.yaml", &format!("@@ -5,0 +6,1 @@\n{added}"));
            e.base.insert("perf-changelog.yaml", OLD_LOG);
            e.head.insert("perf-changelog.yaml", format!("{OLD_LOG}{}", &added[1..]));
            assert_eq!(outcome(&e).status, status, "{added}");
        }
    }
}
