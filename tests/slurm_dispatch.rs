//! End-to-end dispatch tests on the real local Slurm of `scripts/slurm-up.sh`, driving the
//! `sweepgate` binary. They skip (with a message) only when `SWEEPGATE_SLURM` is unset;
//! `scripts/test.sh` starts the cluster and sets it. All tests live in this one file so cargo
//! runs them concurrently: the slowest (a 1-minute time limit) bounds the suite at ~1.5 min.
//! Tests that kill dispatchers at random or take nodes down are in `tests/slurm_faults.rs`, a
//! separate binary, so they never run beside these.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{json, Value};
use sweepgate::sweep::dispatch::{job_prefix, DispatchConfig, Dispatcher};
use sweepgate::sweep::dispatch_pool::DispatchPool;
use sweepgate::sweep::job_script::{self, JobScriptInput};
use sweepgate::sweep::ledger::{Ledger, PointState};
use sweepgate::sweep::plan_input::Plan;
use sweepgate::sweep::scheduler::{JobId, JobRequest, Scheduler};
use sweepgate::sweep::slurm::SlurmCli;

mod support;

use support::fixture_repo::fixture_git_repo;
use support::slurm_sweep::{point, slurm_enabled, wait_output, wait_until, Sweep, BENCH, BIN};
use support::today_tree::{commit_changelog_entry, git_copy, mi355x_pool, today_dir};

const SLURM_UP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/slurm-up.sh");

fn records(out: &Output) -> HashMap<String, Value> {
    let list: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    list.into_iter().map(|r| (r["point_id"].as_str().unwrap().to_string(), r)).collect()
}

fn state_of(r: &HashMap<String, Value>, id: &str) -> String {
    r[id]["state"].as_str().unwrap().to_string()
}

fn reason_of(r: &HashMap<String, Value>, id: &str) -> String {
    r[id]["reason"].as_str().unwrap_or("").to_string()
}

fn result_json(output_dir: &Path, job: &str) -> Value {
    let dir = output_dir.join(job).join("logs/sa-bench_isl_1024_osl_1024");
    let file = std::fs::read_dir(&dir).unwrap().flatten().next().unwrap().path();
    serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap()
}

#[test]
fn every_outcome_is_recorded_with_fail_fast_per_family() {
    if !slurm_enabled("every_outcome_is_recorded_with_fail_fast_per_family") {
        return;
    }
    let s = Sweep::new("outcomes", 101);
    s.write_pool("");
    s.write_plan(
        None,
        json!([
            {"name": "outcomes", "fail_fast": false, "points": [
                point("ok", 2, 5, json!({"BENCH_SECONDS": "1", "BENCH_CONTAINER_IMAGE": "nvcr.io/test/image:1"})),
                point("fail", 1, 5, json!({"BENCH_MODE": "fail"})),
                point("no-results", 1, 5, json!({"BENCH_MODE": "no-results"})),
                point("cancel-me", 1, 10, json!({"BENCH_SECONDS": "300"})),
                point("timeout", 1, 1, json!({"BENCH_SECONDS": "300"}))]},
            {"name": "ff", "fail_fast": true, "points": [
                point("ff-fail", 1, 5, json!({"BENCH_MODE": "fail", "BENCH_SECONDS": "2"})),
                point("ff-long", 1, 10, json!({"BENCH_SECONDS": "300"}))]}
        ]),
    );
    let mut child = s.dispatch("json").spawn().unwrap();
    wait_until(&mut child, "cancel-me to run", || {
        s.points().iter().any(|p| p.point_id == "cancel-me" && p.state == PointState::Running)
    });
    let job = s.point("cancel-me").job_id.unwrap();
    assert!(Command::new("scancel").arg(&job.0).status().unwrap().success());
    let out = wait_output(child);
    assert_eq!(out.status.code(), Some(1), "not every point succeeded");
    let r = records(&out);
    let outputs = s.path("outputs");

    assert_eq!(state_of(&r, "ok"), "succeeded", "{:?}", r["ok"]);
    assert_eq!(r["ok"]["state_source"], "squeue");
    let ok_job = r["ok"]["job_id"].as_str().unwrap();
    let files = r["ok"]["provenance"]["files"].as_array().unwrap();
    let kinds: Vec<&str> = files.iter().map(|f| f["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["aggregate", "eval", "eval", "power", "result"],
        "the aggregate, lm-eval output, a power CSV and a result JSON: {files:?}"
    );
    assert!(files
        .iter()
        .all(|f| f["problems"].as_array().unwrap().is_empty() && f["sha256"].as_str().unwrap().len() == 64));
    let visible = result_json(&outputs, ok_job)["visible_gpus"].as_str().unwrap().to_string();
    assert_eq!(visible.split(',').count(), 2, "CUDA_VISIBLE_DEVICES={visible}");
    let log = std::fs::read_to_string(outputs.join(ok_job).join(format!("logs/sweep_{ok_job}.log"))).unwrap();
    assert!(log.contains("bench: container image nvcr.io/test/image:1"), "{log}");
    let shim_log =
        std::env::var("SWEEPGATE_SLURM_SHIM_LOG").unwrap_or_else(|_| "/run/sweepgate-slurm/pyxis-shim.log".into());
    let shim = std::fs::read_to_string(shim_log).unwrap_or_default();
    assert!(
        shim.lines().any(|l| l.contains(&format!("job={ok_job} ")) && l.contains("no_mount_home=1")),
        "shim log lacks job {ok_job}"
    );
    let prov = &r["ok"]["provenance"];
    assert_eq!(prov["script"]["sha256_at_run"], prov["submission"]["script_sha256"]);
    let power = &prov["power"][0];
    assert_eq!((&power["power_valid"], &power["observed_gpu_count"]), (&json!(true), &json!(2)), "{power}");
    assert_eq!(prov["slurm"]["partition"], "gpu");

    assert_eq!(state_of(&r, "fail"), "failed");
    assert_eq!(r["fail"]["exit_code"], 3);
    assert!(reason_of(&r, "fail").contains("exit code 3"), "{}", reason_of(&r, "fail"));

    assert_eq!(state_of(&r, "no-results"), "failed");
    assert!(reason_of(&r, "no-results").contains("no results_concurrency"));

    assert_eq!(state_of(&r, "cancel-me"), "cancelled");
    assert!(reason_of(&r, "cancel-me").contains("outside sweepgate"));

    assert_eq!(state_of(&r, "timeout"), "timed_out");

    assert_eq!(state_of(&r, "ff-fail"), "failed");
    assert_eq!(state_of(&r, "ff-long"), "cancelled");
    assert!(reason_of(&r, "ff-long").starts_with("fail-fast: ff-fail"), "{}", reason_of(&r, "ff-long"));
    s.assert_one_job_per_point();
}

#[test]
fn failed_canary_skips_every_other_point() {
    if !slurm_enabled("failed_canary_skips_every_other_point") {
        return;
    }
    let s = Sweep::new("canary", 102);
    s.write_pool("");
    s.write_plan(
        Some(json!({"family": "single-node 1k1k", "point": point("canary", 1, 5, json!({"BENCH_MODE": "fail"}))})),
        json!([{"name": "single-node 1k1k", "fail_fast": false, "points": [point("a", 1, 5, json!({})), point("b", 1, 5, json!({}))]},
               {"name": "multi-node 1k1k", "fail_fast": false, "points": [point("c", 2, 5, json!({}))]}]),
    );
    let out = wait_output(s.dispatch("text").spawn().unwrap());
    assert_eq!(out.status.code(), Some(1));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("4 point(s): 0 succeeded, 1 failed, 0 cancelled, 3 skipped"), "{table}");
    for p in s.points().iter().filter(|p| !p.is_canary) {
        assert_eq!(p.state, PointState::Skipped);
        assert_eq!(p.reason.as_deref(), Some("canary canary ended failed"));
        assert_eq!(p.sbatch_calls, 0, "{} must never reach Slurm", p.point_id);
    }
    assert_eq!(s.slurm_jobs_by_name().len(), 1, "only the canary was submitted");
    let status = Command::new(BIN)
        .args(["dispatch", "--status", "--sweep", &s.sweep_id, "--ledger"])
        .arg(s.path("ledger.db"))
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(1), "not every point succeeded");
    assert_eq!(String::from_utf8(status.stdout).unwrap(), table, "--status prints the same table from the ledger");
}

#[test]
fn killed_dispatcher_resumes_without_duplicate_submissions() {
    if !slurm_enabled("killed_dispatcher_resumes_without_duplicate_submissions") {
        return;
    }
    let s = Sweep::new("resume", 103);
    s.write_pool("max_concurrent_allocations = 2");
    let points: Vec<Value> = (0..6).map(|i| point(&format!("p{i}"), 1, 5, json!({"BENCH_SECONDS": "2"}))).collect();
    s.write_plan(None, json!([{"name": "single-node 1k1k", "fail_fast": false, "points": points}]));
    let mut first = s.dispatch("json").spawn().unwrap();
    wait_until(&mut first, "two submissions", || s.points().iter().filter(|p| p.sbatch_calls > 0).count() >= 2);
    first.kill().unwrap(); // SIGKILL: no chance to clean up
    first.wait().unwrap();
    let before: Vec<_> = s.points().into_iter().filter(|p| p.job_id.is_some()).collect();
    assert!(before.len() >= 2 && before.len() < 6, "killed mid-sweep: {} submitted", before.len());
    let out = wait_output(s.dispatch("json").spawn().unwrap());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let after = s.points();
    assert!(after.iter().all(|p| p.state == PointState::Succeeded && p.sbatch_calls == 1), "{after:#?}");
    for b in &before {
        let a = after.iter().find(|a| a.point_id == b.point_id).unwrap();
        assert_eq!(a.job_id, b.job_id, "{} kept its job across the restart", b.point_id);
    }
    s.assert_one_job_per_point();
}

#[test]
fn interrupted_submissions_are_reconciled_by_job_name() {
    if !slurm_enabled("interrupted_submissions_are_reconciled_by_job_name") {
        return;
    }
    let s = Sweep::new("reconcile", 104);
    s.write_pool("");
    s.write_plan(
        None,
        json!([{"name": "f", "fail_fast": false, "points": [point("sbatched", 1, 5, json!({})), point("never-sbatched", 1, 5, json!({}))]}]),
    );
    let plan = Plan::parse(&std::fs::read(s.path("plan.json")).unwrap(), "plan.json").unwrap();
    let pool = DispatchPool::parse(&std::fs::read(s.path("pool.toml")).unwrap(), &s.path("pool.toml")).unwrap();
    let slurm = SlurmCli::default();
    let output_root = s.path("outputs");
    // A dispatcher that died (1) after sbatch but before recording the job id, leaving the job
    // held, and (2) after the intent record but before sbatch.
    let held = {
        let mut ledger = Ledger::open(&s.path("ledger.db")).unwrap();
        let config = DispatchConfig {
            output_root: output_root.clone(),
            plan_dir: s.path(""),
            poll_interval: Duration::from_millis(300),
            unreachable_limit: Duration::from_secs(60),
        };
        drop(Dispatcher::new(&plan, &pool, &slurm, &mut ledger, config).unwrap());
        ledger.mark_submitting(&s.sweep_id, "sbatched").unwrap();
        ledger.mark_submitting(&s.sweep_id, "never-sbatched").unwrap();
        let record = ledger.points(&s.sweep_id).unwrap().into_iter().find(|p| p.point_id == "sbatched").unwrap();
        let script = job_script::render(&JobScriptInput {
            job_name: &record.job_name,
            sweep_id: &s.sweep_id,
            point: &plan.families[0].points[0],
            script: Path::new(BENCH),
            pool: &pool,
            output_root: &output_root,
        });
        slurm.submit_held(&JobRequest { name: record.job_name, script }).unwrap()
    };
    let out = wait_output(s.dispatch("json").spawn().unwrap());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let adopted = s.point("sbatched");
    assert_eq!(adopted.job_id, Some(held.clone()), "the held job was adopted, not submitted again");
    assert_eq!(adopted.sbatch_calls, 0);
    assert_eq!(adopted.state, PointState::Succeeded, "the held job was released and ran");
    let fresh = s.point("never-sbatched");
    assert_eq!((fresh.state, fresh.sbatch_calls), (PointState::Succeeded, 1));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("found job {held} by name")));
    s.assert_one_job_per_point();
}

#[test]
fn sweep_survives_a_slurmctld_restart() {
    if !slurm_enabled("sweep_survives_a_slurmctld_restart") {
        return;
    }
    let s = Sweep::new("ctld", 105);
    s.write_pool("");
    let points: Vec<Value> = (0..3).map(|i| point(&format!("p{i}"), 1, 5, json!({"BENCH_SECONDS": "8"}))).collect();
    s.write_plan(None, json!([{"name": "f", "fail_fast": true, "points": points}]));
    let mut child = s.dispatch("json").spawn().unwrap();
    wait_until(&mut child, "a running point", || s.points().iter().any(|p| p.state == PointState::Running));
    let restart = Command::new("bash").arg(SLURM_UP).arg("restart-ctld").output().unwrap();
    assert!(restart.status.success(), "{}", String::from_utf8_lossy(&restart.stderr));
    let out = wait_output(child);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(s.points().iter().all(|p| p.state == PointState::Succeeded && p.sbatch_calls == 1));
    s.assert_one_job_per_point();
}

#[test]
fn cancel_by_pr_stops_the_sweep_and_spares_other_prs() {
    if !slurm_enabled("cancel_by_pr_stops_the_sweep_and_spares_other_prs") {
        return;
    }
    let s = Sweep::new("cancel", 106);
    s.write_pool("max_concurrent_allocations = 2");
    let points: Vec<Value> = (0..3).map(|i| point(&format!("p{i}"), 1, 10, json!({"BENCH_SECONDS": "300"}))).collect();
    s.write_plan(None, json!([{"name": "f", "fail_fast": false, "points": points}]));
    // Another PR of the same repository (and PR 1060, whose name shares the digits).
    let slurm = SlurmCli::default();
    let bystanders: Vec<JobId> = [107, 1060]
        .iter()
        .map(|pr| {
            let name = format!("{}bystander", job_prefix(&s.repo, *pr));
            let script = format!(
                "#!/bin/bash\n#SBATCH --output={}/bystander-%j.log\n#SBATCH --time=5\nsleep 300\n",
                s.path("").display()
            );
            let id = slurm.submit_held(&JobRequest { name, script }).unwrap();
            slurm.release(&id).unwrap();
            id
        })
        .collect();
    let mut child = s.dispatch("json").spawn().unwrap();
    wait_until(&mut child, "two running points", || {
        s.points().iter().filter(|p| p.state == PointState::Running).count() == 2
    });
    let second = s.dispatch("json").output().unwrap();
    assert_eq!(second.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&second.stderr).contains("another `sweepgate dispatch` is running"), "{second:?}");
    let cancel = Command::new(BIN)
        .args(["dispatch", "--cancel", "--pr", &s.pr.to_string(), "--repo", &s.repo, "--ledger"])
        .arg(s.path("ledger.db"))
        .output()
        .unwrap();
    assert!(cancel.status.success(), "{}", String::from_utf8_lossy(&cancel.stderr));
    assert!(
        String::from_utf8_lossy(&cancel.stdout).starts_with("cancelled 2 job(s)"),
        "{}",
        String::from_utf8_lossy(&cancel.stdout)
    );
    let out = wait_output(child);
    assert_eq!(out.status.code(), Some(1));
    let points = s.points();
    assert!(points.iter().all(|p| p.state == PointState::Cancelled), "{points:#?}");
    assert_eq!(points.iter().filter(|p| p.job_id.is_none()).count(), 1, "the third point was never submitted");
    let alive = slurm.jobs(&bystanders).unwrap();
    assert_eq!(alive.len(), 2);
    assert!(alive.iter().all(|j| !j.state.is_final()), "other PRs' jobs untouched: {alive:?}");
    slurm.cancel(&bystanders).unwrap();
}

#[test]
fn exclusive_node_serves_only_the_requested_gpus() {
    if !slurm_enabled("exclusive_node_serves_only_the_requested_gpus") {
        return;
    }
    let s = Sweep::new("exclusive", 108);
    s.write_pool("exclusive = true\nmax_concurrent_allocations = 1");
    s.write_plan(None, json!([{"name": "f", "fail_fast": false, "points": [point("tp2", 2, 5, json!({}))]}]));
    let out = wait_output(s.dispatch("json").spawn().unwrap());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let job = s.point("tp2").job_id.unwrap();
    let result = result_json(&s.path("outputs"), &job.0);
    let allocated = result["allocated_gpus"].as_str().unwrap();
    let visible = result["visible_gpus"].as_str().unwrap();
    assert_eq!(allocated.split(',').count(), 8, "--exclusive allocates the whole node: {allocated}");
    assert_eq!(visible, "0,1", "the benchmark sees only the 2 GPUs it serves on");
}

/// Refusals that happen before Slurm is contacted (these run without the cluster).
#[test]
fn bad_inputs_are_refused_before_anything_is_submitted() {
    let s = Sweep::new("inputs", 109);
    s.write_pool("");
    let run = |cmd: &mut Command| {
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    std::fs::write(s.path("plan.json"), "{\n  \"version\": 1,\n  oops\n}").unwrap();
    let err = run(&mut s.dispatch("text"));
    assert!(err.contains("plan.json:3:3"), "{err}");

    let not_executable = s.path("bench.txt");
    std::fs::write(&not_executable, "echo").unwrap();
    let mut p = point("p0", 1, 5, json!({}));
    p["job"]["script"] = json!("bench.txt");
    s.write_plan(None, json!([{"name": "f", "fail_fast": false, "points": [p]}]));
    let err = run(&mut s.dispatch("text"));
    assert!(err.contains("point p0: job.script") && err.contains("not an executable file"), "{err}");

    s.write_plan(None, json!([{"name": "f", "fail_fast": false, "points": [point("big", 9, 5, json!({}))]}]));
    let err = run(&mut s.dispatch("text"));
    assert!(err.contains("point big: job.gpus = 9 but pool e2e has 8 GPUs per node"), "{err}");

    let err =
        run(Command::new(BIN).args(["dispatch", "--status", "--sweep", "nope", "--ledger"]).arg(s.path("missing.db")));
    assert!(err.contains("missing.db: no such ledger"), "{err}");
    let err = run(Command::new(BIN).args(["dispatch", "--cancel", "--pr", "5"]));
    assert!(err.contains("--cancel needs --pr N and --repo"), "{err}");
}

#[test]
fn a_planned_sweep_runs_on_the_local_cluster() {
    if !slurm_enabled("a_planned_sweep_runs_on_the_local_cluster") {
        return;
    }
    let mut s = Sweep::new("planned", 110);
    let repo = s.path("repo");
    std::fs::create_dir(&repo).unwrap();
    fixture_git_repo(&repo);
    // The local cluster's profile, serving the fixture's b200 rows, writing into this sweep's directory.
    let profile = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("pools/local.toml")).unwrap();
    let profile = profile.replace(
        "output_root = \"/srv/slurm-scratch/outputs\"",
        &format!("output_root = \"{}\"", s.path("outputs").display()),
    );
    std::fs::write(s.path("pool.toml"), format!("runners = [\"b200\"]\n{profile}")).unwrap();
    let planned = Command::new(BIN)
        .args(["plan", "--repo", repo.to_str().unwrap(), "--base", "HEAD~1", "--head", "HEAD"])
        .args(["--labels", "full-sweep-fail-fast", "--format", "dispatch", "--launcher", BENCH])
        .args(["--github-repo", &s.repo, "--pr-number", &s.pr.to_string(), "--pool"])
        .arg(s.path("pool.toml"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&planned.stderr);
    assert!(planned.status.success(), "{stderr}");
    assert!(stderr.contains("skipped (runner gb200 is another pool's)"), "{stderr}");
    let mut plan: Value = serde_json::from_slice(&planned.stdout).unwrap();
    // The canary and the first two points of the first family keep the test short.
    let families = plan["families"].as_array_mut().unwrap();
    families.truncate(1);
    families[0]["points"].as_array_mut().unwrap().truncate(2);
    std::fs::write(s.path("plan.json"), serde_json::to_vec(&plan).unwrap()).unwrap();
    s.sweep_id = plan["sweep_id"].as_str().unwrap().to_owned();

    let out = wait_output(s.dispatch("json").spawn().unwrap());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r = records(&out);
    assert_eq!(r.len(), 3);
    let canary = plan["canary"]["point"].clone();
    for (id, record) in &r {
        assert_eq!(record["state"], "succeeded", "{id}: {record}");
        let point = if id == "canary" { canary.clone() } else { record["provenance"]["point"].clone() };
        let job = record["job_id"].as_str().unwrap();
        let logs = s.path("outputs").join(job).join("logs");
        let isl = point["row"]["isl"].as_i64().unwrap();
        let dir = logs.join(format!("sa-bench_isl_{isl}_osl_1024"));
        let file = std::fs::read_dir(&dir).unwrap().flatten().next().unwrap().path();
        let result: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        assert_eq!(result["max_concurrency"], point["row"]["conc"], "{id}: the row's conc reached the job");
        let gpus = result["visible_gpus"].as_str().unwrap().split(',').count();
        assert_eq!(gpus as i64, point["row"]["tp"].as_i64().unwrap(), "{id}: tp GPUs visible");
        assert_eq!(record["provenance"]["power"][0]["power_valid"], true, "{id}: {}", record["provenance"]["power"]);
    }
    s.assert_one_job_per_point();
}

/// The Oct 2026 tree (issue 36): `plan --format dispatch` on a changelog change of a git copy of
/// `../shared/acceptance/inferencex-2026-11` binds each row to one schema-2 variant; one native
/// single-node row (`SRT_RECIPE=<recipe>:<selector>`) and one two-node disaggregated agentic row
/// (`CONFIG_FILE=<recipe>:<selector>`) are dispatched on the local Slurm and succeed, each job
/// running with the variant it was bound to, the multinode one on two nodes.
#[test]
fn a_2026_11_native_row_and_multinode_row_run_on_the_local_cluster() {
    if !slurm_enabled("a_2026_11_native_row_and_multinode_row_run_on_the_local_cluster") {
        return;
    }
    let Some(today) = today_dir() else { return };
    let mut s = Sweep::new("today", 111);
    let repo = s.path("repo");
    std::fs::create_dir(&repo).unwrap();
    git_copy(&today, &repo);
    commit_changelog_entry(&repo, &["dsr1-fp4-mi355x-sglang", "dsv4-fp4-mi355x-atom-disagg-agentic-lmcache-dspark"]);
    // The local cluster serves both runners of the two configs (`mi355x`, `cluster:mi355x-amds`).
    let pool = format!("runners = [\"mi355x\", \"cluster:mi355x-amds\"]\n{}", mi355x_pool(Some(&s.path("outputs"))));
    std::fs::write(s.path("pool.toml"), pool).unwrap();
    let planned = Command::new(BIN)
        .args(["plan", "--repo", repo.to_str().unwrap(), "--base", "HEAD~1", "--head", "HEAD"])
        .args(["--labels", "full-sweep-enabled", "--format", "dispatch", "--launcher", BENCH])
        .args(["--github-repo", &s.repo, "--pr-number", &s.pr.to_string(), "--pool"])
        .arg(s.path("pool.toml"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&planned.stderr);
    assert!(planned.status.success() && stderr.is_empty(), "{stderr}");
    let mut plan: Value = serde_json::from_slice(&planned.stdout).unwrap();
    for point in plan["families"].as_array().unwrap().iter().flat_map(|f| f["points"].as_array().unwrap()) {
        let recipe = &point["job"]["recipe"];
        assert!(recipe["selector"].as_str().is_some_and(|s| !s.is_empty()), "{} binds no variant", point["id"]);
    }
    // One point of each kind: the first native single-node row and the first multinode row.
    let pick = |env: &str, nodes: u64| -> (String, Value) {
        plan["families"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|f| {
                let p =
                    f["points"].as_array().unwrap().iter().find(|p| {
                        p["job"]["env"].get(env).is_some() && p["job"]["nodes"].as_u64().unwrap_or(1) == nodes
                    })?;
                let mut family = f.clone();
                family["points"] = json!([p]);
                Some((p["id"].as_str().unwrap().to_owned(), family))
            })
            .unwrap_or_else(|| panic!("no {env} point on {nodes} node(s)"))
    };
    let (single, single_family) = pick("SRT_RECIPE", 1);
    let (multi, multi_family) = pick("CONFIG_FILE", 2);
    let bound: HashMap<String, Value> = [&single_family, &multi_family]
        .iter()
        .map(|f| (f["points"][0]["id"].as_str().unwrap().to_owned(), f["points"][0]["job"].clone()))
        .collect();
    plan.as_object_mut().unwrap().remove("canary");
    plan["families"] = json!([single_family, multi_family]);
    std::fs::write(s.path("plan.json"), serde_json::to_vec(&plan).unwrap()).unwrap();
    s.sweep_id = plan["sweep_id"].as_str().unwrap().to_owned();

    let out = wait_output(s.dispatch("json").spawn().unwrap());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r = records(&out);
    assert_eq!(r.len(), 2, "{r:?}");
    for (id, env, nodes) in [(&single, "SRT_RECIPE", 1), (&multi, "CONFIG_FILE", 2)] {
        let record = &r[id.as_str()];
        assert_eq!(record["state"], "succeeded", "{id}: {record}");
        let job = &bound[id.as_str()];
        let recipe = job["recipe"]["config_file"].as_str().unwrap();
        assert_eq!(job["env"][env], recipe, "{id}: the job runs the variant it was bound to");
        assert!(recipe.contains(".yaml:"), "{id}: {recipe} names its variant");
        let job_id = record["job_id"].as_str().unwrap();
        let shown = Command::new("scontrol").args(["show", "job", job_id]).output().unwrap();
        let shown = String::from_utf8_lossy(&shown.stdout);
        assert!(shown.contains(&format!("NumNodes={nodes} ")), "{id}: {shown}");
        let log = std::fs::read_to_string(s.path("outputs").join(job_id).join(format!("logs/sweep_{job_id}.log")))
            .unwrap_or_default();
        assert!(log.contains("bench: mode=ok"), "{id}: {log}");
    }
    s.assert_one_job_per_point();
}

#[test]
fn the_status_comment_is_one_bilingual_comment_edited_to_the_final_state() {
    if !slurm_enabled("the_status_comment_is_one_bilingual_comment_edited_to_the_final_state") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = runtime.block_on(support::fake_github::FakeGitHub::start(support::TOKEN, support::BOT));
    let s = Sweep::new("comment", 111);
    s.write_pool("");
    s.write_plan(
        None,
        json!([{"name": "comment", "fail_fast": false, "points": [
            point("ok", 1, 5, json!({"BENCH_SECONDS": "2"})),
            point("broken", 1, 5, json!({"BENCH_MODE": "fail", "BENCH_SECONDS": "1"}))]}]),
    );
    // A user's comment quoting the marker must not be taken for the bot's.
    let marker = format!("<!-- sweepgate:dispatch pr={} sweep={} -->", s.pr, s.sweep_id);
    fake.add_comment(&s.repo, s.pr, "mallory", "NONE", &format!("{marker}\nforged"));
    let out = wait_output(
        s.dispatch("text")
            .args(["--status-comment", "--comment-every-secs", "1", "--github-api-url", &fake.url])
            .args(["--github-token", support::TOKEN, "--bot-login", support::BOT])
            .spawn()
            .unwrap(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let world = fake.world();
    let comments = world.comments_on(&s.repo, s.pr);
    let ours: Vec<_> = comments.iter().filter(|c| c.login == support::BOT).collect();
    assert_eq!(ours.len(), 1, "one status comment");
    let body = &ours[0].body;
    assert!(body.starts_with(&marker), "{body}");
    assert!(body.contains("❌ finished with failures") && body.contains("❌ 已结束，存在失败"), "{body}");
    assert!(body.contains("- broken · comment (job ") && body.contains("**失败**：exit code 3"), "{body}");
    assert!(comments.iter().any(|c| c.login == "mallory" && c.body.ends_with("forged")), "the forged one is untouched");
    assert!(world.count("PATCH /repos/") >= 1, "posted while running, then edited: {:?}", world.log);
}

/// A `pull_request` webhook for this sweep's repository and PR.
fn pr_webhook(s: &Sweep, action: &str, labels: &[&str]) -> Value {
    let mut payload = support::pr_event(action, s.pr, labels, None, "vendor-dev");
    payload["repository"]["full_name"] = json!(s.repo);
    payload["pull_request"]["head"]["repo"]["full_name"] = json!(s.repo);
    payload["pull_request"]["base"]["repo"]["full_name"] = json!(s.repo);
    if action == "closed" {
        payload["pull_request"]["state"] = json!("closed");
    }
    payload
}

#[test]
fn the_bot_cancels_the_jobs_of_a_pr_that_loses_its_label_or_closes() {
    if !slurm_enabled("the_bot_cancels_the_jobs_of_a_pr_that_loses_its_label_or_closes") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = runtime.block_on(support::fake_github::FakeGitHub::start(support::TOKEN, support::BOT));
    let (unlabeled, closed) = (Sweep::new("unlabel", 112), Sweep::new("closed", 113));
    let ledger = unlabeled.path("ledger.db");
    let server = runtime.block_on(support::ServerProcess::start(&[
        "--github-token",
        support::TOKEN,
        "--github-api-url",
        &fake.url,
        "--bot-login",
        support::BOT,
        "--cancel-slurm-jobs",
        "--dispatch-ledger",
        ledger.to_str().unwrap(),
    ]));
    let mut dispatchers = Vec::new();
    for s in [&unlabeled, &closed] {
        s.write_pool("");
        s.write_plan(None, json!([{"name": "f", "fail_fast": false, "points": [point("long", 1, 10, json!({"BENCH_SECONDS": "300"}))]}]));
        // The bot knows the first sweep's ledger only: the second is cancelled through Slurm alone.
        let mut child = s.dispatch("json").spawn().unwrap();
        wait_until(&mut child, "the long point to run", || s.points().iter().any(|p| p.state == PointState::Running));
        dispatchers.push(child);
    }
    // The primary label is removed from one PR (it still appends to the changelog) …
    fake.add_pull(&unlabeled.repo, unlabeled.pr, &support::head_sha(), &[], &[("perf-changelog.yaml", 4)]);
    let unlabel = pr_webhook(&unlabeled, "unlabeled", &[]);
    // … and the other is closed.
    let close = pr_webhook(&closed, "closed", &["full-sweep-fail-fast"]);
    runtime.block_on(async {
        assert_eq!(server.deliver("pull_request", "d-unlabel", &unlabel).await.0, 202);
        assert_eq!(server.deliver("pull_request", "d-close", &close).await.0, 202);
        server.wait_handled(2).await;
    });
    let reasons = ["cancel requested", "cancelled outside sweepgate"];
    for ((s, child), reason) in [&unlabeled, &closed].into_iter().zip(dispatchers).zip(reasons) {
        let out = wait_output(child);
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
        let points = s.points();
        assert_eq!(points.len(), 1);
        assert_eq!(points[0].state, PointState::Cancelled, "{:?}", points[0]);
        assert!(points[0].reason.as_deref().unwrap_or("").contains(reason), "{:?}", points[0].reason);
    }
    let statuses = &fake.world().statuses;
    assert!(statuses.iter().any(|(repo, _, st)| repo == &unlabeled.repo && st["state"] == "failure"), "{statuses:?}");
}
