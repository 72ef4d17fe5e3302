//! The server's pool transports driven through the sweep engine (decision L22):
//! - `cli` with `ssh_host`: a fake `ssh` that checks the argv contract and, like sshd, hands the
//!   remote words to a shell, in front of the real local Slurm (skips when `SWEEPGATE_SLURM` is
//!   unset);
//! - `slurmrestd`: a local axum fake of the v0.0.39 API that records every request and runs each
//!   released job's script itself (a tiny Slurm), so the whole point cycle runs;
//! - both transports' outages (ssh exit 255, slurmrestd 503) end the sweep with every point in a
//!   recorded state naming the pool, never a sweep that waits forever.

mod support;

use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use support::slurm_sweep::{point, slurm_enabled, Sweep, BOUND};
use sweepgate::sweep::dispatch_pool::DispatchPool;
use sweepgate::sweep::engine::{Engine, EnginePool, EngineSweep, SweepProgress};
use sweepgate::sweep::ledger::{Ledger, PointRecord, PointState};
use sweepgate::sweep::plan_input::Plan;
use sweepgate::sweep::scheduler::Scheduler;
use sweepgate::sweep::slurm::{SlurmCli, Ssh};
use sweepgate::sweep::slurmrestd::{SlurmRest, API_VERSION};

const TOKEN: &str = "jwt-for-tests";

/// Two quick points in one family, written as the sweep's plan and pool.
fn two_point_sweep(tag: &str) -> Sweep {
    let s = Sweep::new(tag, 5);
    let points =
        json!([point("a", 1, 2, json!({"BENCH_SECONDS": "0"})), point("b", 1, 2, json!({"BENCH_SECONDS": "0"}))]);
    s.write_plan(None, json!([{"name": "f", "fail_fast": false, "points": points}]));
    s.write_pool("");
    s
}

/// Runs the sweep through the engine until every point is final (or the bound passes).
fn run_engine(s: &Sweep, scheduler: Box<dyn Scheduler + Send>, unreachable_limit: Duration) -> Vec<PointRecord> {
    let plan = Plan::parse(&std::fs::read(s.path("plan.json")).unwrap(), "plan.json").unwrap();
    let pool_file = s.path("pool.toml");
    let pool = DispatchPool::parse(&std::fs::read(&pool_file).unwrap(), &pool_file).unwrap();
    std::fs::create_dir_all(s.path("outputs")).unwrap();
    let pools = BTreeMap::from([("e2e".to_owned(), EnginePool { pool, scheduler, output_root: s.path("outputs") })]);
    let ledger = Ledger::open(&s.path("ledger.db")).unwrap();
    let mut engine = Engine::new(pools, ledger, Duration::from_millis(200), unreachable_limit);
    engine.add(EngineSweep { plan, pool: "e2e".into(), priorities: HashMap::new() }).unwrap();
    let start = Instant::now();
    loop {
        for (id, progress) in engine.round(&mut |_, _| {}).unwrap() {
            if let (true, SweepProgress::Finished(records)) = (id == s.sweep_id, progress) {
                return records;
            }
        }
        assert!(start.elapsed() < BOUND, "the sweep did not finish: {:#?}", engine.ledger().points(&s.sweep_id));
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn states(records: &[PointRecord]) -> Vec<(String, PointState)> {
    records.iter().map(|r| (r.point_id.clone(), r.state)).collect()
}

fn executable(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/bash\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A fake `ssh` that refuses any other argv shape (exit 97), logs the remote words, and runs
/// them through `sh -c` as sshd does, so a word the client failed to quote would break.
fn fake_ssh(dir: &Path) -> PathBuf {
    let path = dir.join("ssh");
    let log = dir.join("ssh.log");
    executable(
        &path,
        &format!(
            "[ \"$1 $2 $3\" = '-o BatchMode=yes -o' ] && [[ \"$4\" == ConnectTimeout=* ]] && [ \"$5 $6 $7\" = '-T ops@login-1 --' ] \
             || {{ echo \"fake ssh: unexpected argv: $*\" >&2; exit 97; }}\n\
             shift 7\nprintf '%s\\n' \"$*\" >> '{}'\nexec sh -c \"$*\"",
            log.display()
        ),
    );
    path
}

#[test]
fn an_ssh_pool_runs_the_slurm_cli_on_its_host_with_the_script_on_stdin() {
    if !slurm_enabled("an_ssh_pool_runs_the_slurm_cli_on_its_host_with_the_script_on_stdin") {
        return;
    }
    let s = two_point_sweep("ssh");
    let ssh = Ssh { program: fake_ssh(s.dir.path()), ..Ssh::new("ops@login-1") };
    let scheduler = SlurmCli { ssh: Some(ssh), ..SlurmCli::default() };
    let records = run_engine(&s, Box::new(scheduler), Duration::from_secs(120));
    assert_eq!(states(&records), [("a".into(), PointState::Succeeded), ("b".into(), PointState::Succeeded)]);
    s.assert_one_job_per_point();
    let log = std::fs::read_to_string(s.path("ssh.log")).unwrap();
    let sbatch: Vec<&str> = log.lines().filter(|l| l.starts_with("'sbatch'")).collect();
    assert_eq!(sbatch.len(), 2, "{log}");
    for line in &sbatch {
        // The script is not on the command line: sbatch read it from stdin.
        assert!(line.starts_with("'sbatch' '--parsable' '--hold' '--job-name=") && !line.contains("#!/"), "{line}");
    }
    assert!(log.lines().any(|l| l.starts_with("'squeue' ") && l.contains("'JobID:|,State:|")), "{log}");
    assert!(log.lines().any(|l| l.starts_with("'scontrol' 'release' ")), "{log}");
}

#[test]
fn an_unreachable_ssh_host_ends_the_sweep_with_every_point_recorded() {
    let s = two_point_sweep("ssh-down");
    let program = s.path("ssh");
    executable(&program, "echo 'ssh: connect to host login-1 port 22: Connection refused' >&2; exit 255");
    let scheduler = SlurmCli { ssh: Some(Ssh { program, ..Ssh::new("login-1") }), ..SlurmCli::default() };
    let records = run_engine(&s, Box::new(scheduler), Duration::from_secs(2));
    for r in &records {
        assert!(r.state.is_terminal(), "{r:?}");
        let reason = r.reason.as_deref().unwrap_or_default();
        assert!(reason.contains("pool e2e has not answered") && reason.contains("Connection refused"), "{r:?}");
    }
}

/// What the fake slurmrestd saw and knows.
#[derive(Default)]
struct Rest {
    requests: Vec<(String, String, Option<String>, Value)>,
    jobs: BTreeMap<u64, Value>,
    scripts: HashMap<u64, String>,
    /// Answer everything with 503.
    down: bool,
}

type Shared = Arc<Mutex<Rest>>;

fn record(state: &Shared, method: &str, path: &str, headers: &HeaderMap, body: Value) -> bool {
    let token = headers.get("x-slurm-user-token").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let mut rest = state.lock().unwrap();
    rest.requests.push((method.into(), path.into(), token, body));
    rest.down
}

const UNAVAILABLE: (StatusCode, &str) = (StatusCode::SERVICE_UNAVAILABLE, "slurmctld is not responding");

async fn submit(State(state): State<Shared>, headers: HeaderMap, Json(body): Json<Value>) -> axum::response::Response {
    use axum::response::IntoResponse;
    if record(&state, "POST", "job/submit", &headers, body.clone()) {
        return UNAVAILABLE.into_response();
    }
    let mut rest = state.lock().unwrap();
    let id = 1000 + rest.jobs.len() as u64;
    let job = &body["job"];
    let output = job["standard_output"].as_str().unwrap_or_default().replace("%j", &id.to_string());
    rest.jobs.insert(
        id,
        json!({"job_id": id, "name": job["name"], "job_state": "PENDING", "state_reason": "JobHeldUser",
        "output": output, "submit_time": {"set": true, "infinite": false, "number": 1_764_600_000}}),
    );
    rest.scripts.insert(id, body["script"].as_str().unwrap_or_default().to_owned());
    Json(json!({"job_id": id, "step_id": "batch", "errors": [], "warnings": []})).into_response()
}

/// Release (`hold: false`) runs the script as Slurm would, then records how it ended.
async fn update(
    State(state): State<Shared>,
    UrlPath(id): UrlPath<u64>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if record(&state, "POST", &format!("job/{id}"), &headers, body.clone()) {
        return UNAVAILABLE.into_response();
    }
    let (script, output) = {
        let mut rest = state.lock().unwrap();
        let Some(job) = rest.jobs.get_mut(&id) else {
            return (StatusCode::NOT_FOUND, Json(json!({"errors": [{"error": "Invalid job id specified"}]})))
                .into_response();
        };
        job["job_state"] = json!("RUNNING");
        let output = job["output"].as_str().unwrap_or_default().to_owned();
        (rest.scripts[&id].clone(), output)
    };
    let shared = state.clone();
    std::thread::spawn(move || {
        std::fs::create_dir_all(Path::new(&output).parent().unwrap()).unwrap();
        let log = std::fs::File::create(&output).unwrap();
        let status = std::process::Command::new("bash")
            .arg("-c")
            .arg(&script)
            .env("SLURM_JOB_ID", id.to_string())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .status()
            .unwrap();
        let code = status.code().unwrap_or(-1);
        let mut rest = shared.lock().unwrap();
        if let Some(job) = rest.jobs.get_mut(&id) {
            if job["job_state"] == "RUNNING" {
                job["job_state"] = json!(if code == 0 { "COMPLETED" } else { "FAILED" });
                job["exit_code"] =
                    json!({"status": "EXITED", "return_code": {"set": true, "infinite": false, "number": code}});
            }
        }
    });
    Json(json!({"errors": []})).into_response()
}

async fn jobs(State(state): State<Shared>, headers: HeaderMap) -> axum::response::Response {
    use axum::response::IntoResponse;
    if record(&state, "GET", "jobs", &headers, Value::Null) {
        return UNAVAILABLE.into_response();
    }
    let rest = state.lock().unwrap();
    Json(json!({"jobs": rest.jobs.values().collect::<Vec<_>>(), "errors": []})).into_response()
}

async fn cancel(
    State(state): State<Shared>,
    UrlPath(id): UrlPath<u64>,
    headers: HeaderMap,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if record(&state, "DELETE", &format!("job/{id}"), &headers, Value::Null) {
        return UNAVAILABLE.into_response();
    }
    if let Some(job) = state.lock().unwrap().jobs.get_mut(&id) {
        job["job_state"] = json!("CANCELLED");
    }
    Json(json!({"errors": []})).into_response()
}

/// Starts the fake on 127.0.0.1 (its own runtime thread); returns its base URL.
fn fake_slurmrestd(state: Shared) -> String {
    let v = API_VERSION;
    let app = Router::new()
        .route(&format!("/slurm/{v}/job/submit"), post(submit))
        .route(&format!("/slurm/{v}/job/{{id}}"), post(update))
        .route(&format!("/slurm/{v}/job/{{id}}"), delete(cancel))
        .route(&format!("/slurm/{v}/jobs"), get(jobs))
        .with_state(state);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    url
}

fn rest_client(url: &str) -> SlurmRest {
    SlurmRest::new(url, API_VERSION, Some(format!("{TOKEN}\n")), Duration::from_secs(10)).unwrap()
}

#[test]
fn a_slurmrestd_pool_submits_held_releases_and_polls_with_the_token() {
    let state = Shared::default();
    let url = fake_slurmrestd(state.clone());
    let s = two_point_sweep("rest");
    let records = run_engine(&s, Box::new(rest_client(&url)), Duration::from_secs(60));
    assert_eq!(states(&records), [("a".into(), PointState::Succeeded), ("b".into(), PointState::Succeeded)]);
    let rest = state.lock().unwrap();
    assert!(
        rest.requests.iter().all(|(_, _, token, _)| token.as_deref() == Some(TOKEN)),
        "every request carries the JWT"
    );
    let submits: Vec<&Value> = rest.requests.iter().filter(|r| r.1 == "job/submit").map(|r| &r.3).collect();
    assert_eq!(submits.len(), 2, "one submit per point");
    for body in submits {
        let job = &body["job"];
        assert_eq!(job["hold"], json!(true), "{body}");
        assert!(job["name"].as_str().is_some_and(|n| n.starts_with("sg-")), "{body}");
        assert_eq!(job["partition"], json!("gpu"));
        assert_eq!(job["tres_per_node"], json!("gres/gpu:1"));
        assert!(body["script"].as_str().is_some_and(|t| t.starts_with("#!/bin/bash\n#SBATCH ")), "{body}");
    }
    let releases = rest.requests.iter().filter(|r| r.0 == "POST" && r.1 != "job/submit").count();
    assert_eq!(releases, 2, "each held job is released once");
    for r in &records {
        assert!(r.job_id.as_ref().is_some_and(|j| j.0.parse::<u64>().is_ok_and(|n| n >= 1000)), "{r:?}");
    }
}

#[test]
fn a_slurmrestd_answering_503_ends_the_sweep_with_every_point_recorded() {
    let state = Shared::default();
    state.lock().unwrap().down = true;
    let url = fake_slurmrestd(state.clone());
    let s = two_point_sweep("rest-down");
    let records = run_engine(&s, Box::new(rest_client(&url)), Duration::from_secs(2));
    assert_eq!(records.len(), 2);
    for r in &records {
        assert!(r.state.is_terminal(), "{r:?}");
        let reason = r.reason.as_deref().unwrap_or_default();
        assert!(reason.contains("pool e2e has not answered") && reason.contains("503"), "{r:?}");
        assert!(!reason.contains(TOKEN), "{r:?}");
    }
    assert!(!state.lock().unwrap().requests.is_empty());
}
