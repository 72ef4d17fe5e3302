//! [`Scheduler`] over slurmrestd's REST API `v0.0.39` (Slurm 23.02+): `POST job/submit` (held),
//! `POST job/{id}` with `hold: false` (release), `GET jobs`, `DELETE job/{id}`; the JWT is sent
//! as `X-SLURM-USER-TOKEN`. slurmrestd does not read `#SBATCH` lines, so the script's directives
//! are translated into the job description; a directive it cannot express refuses the submit.
//! Without slurmdbd endpoints, jobs that aged out of slurmctld are found by the dispatcher's
//! log-marker fallback (spec 50 §7), as with a CLI pool without accounting.

use std::time::Duration;

use serde_json::{json, Map, Value as Json};

use super::scheduler::{ExitStatus, JobId, JobInfo, JobRequest, Scheduler, SchedulerError, SlurmState, StateSource};

/// The API version this client speaks.
pub const API_VERSION: &str = "v0.0.39";
/// Bounds one response body.
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum RestSetupError {
    #[error("transport.url '{0}': only http:// and https:// are implemented (not unix sockets)")]
    Url(String),
    #[error("transport.api_version '{0}': sweepgate speaks slurmrestd {API_VERSION}")]
    Version(String),
    #[error("slurmrestd client: {0}")]
    Client(String),
}

/// A slurmrestd endpoint.
pub struct SlurmRest {
    base: String,
    token: Option<String>,
    client: reqwest::Client,
    /// Private: each call blocks on it from a fresh thread, so callers may be inside another
    /// runtime (the server's handlers) or not (the engine thread).
    runtime: tokio::runtime::Runtime,
    timeout: Duration,
}

impl std::fmt::Debug for SlurmRest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("SlurmRest").field("base", &self.base).finish_non_exhaustive()
    }
}

impl SlurmRest {
    pub fn new(
        url: &str,
        api_version: &str,
        token: Option<String>,
        timeout: Duration,
    ) -> Result<SlurmRest, RestSetupError> {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(RestSetupError::Url(url.to_owned()));
        }
        if api_version != API_VERSION {
            return Err(RestSetupError::Version(api_version.to_owned()));
        }
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| RestSetupError::Client(e.to_string()))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| RestSetupError::Client(e.to_string()))?;
        let base = format!("{}/slurm/{API_VERSION}", url.trim_end_matches('/'));
        Ok(SlurmRest { base, token: token.map(|t| t.trim().to_owned()), client, runtime, timeout })
    }

    /// Whether slurmrestd and its controller answer (`GET ping`, `sweepgate doctor`).
    pub fn ping(&self) -> Result<(), SchedulerError> {
        self.call(reqwest::Method::GET, "ping", None).map(|_| ())
    }

    /// One request; the answer's JSON, or the failure as the dispatcher classifies it.
    fn call(&self, method: reqwest::Method, path: &str, body: Option<&Json>) -> Result<Json, SchedulerError> {
        let url = format!("{}/{path}", self.base);
        let command = format!("{method} {url}");
        let unreachable = |detail: String| SchedulerError::Unreachable {
            command: command.clone(),
            host: "slurmrestd".into(),
            stderr: detail.chars().take(2000).collect(),
        };
        let mut request = self.client.request(method.clone(), &url).timeout(self.timeout);
        if let Some(token) = &self.token {
            request = request.header("X-SLURM-USER-TOKEN", token);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let exchange = async {
            let mut response = request.send().await?;
            let status = response.status();
            let mut bytes = Vec::new();
            while let Some(chunk) = response.chunk().await? {
                if bytes.len() + chunk.len() > MAX_BODY_BYTES {
                    break;
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok::<_, reqwest::Error>((status, bytes))
        };
        let outcome = std::thread::scope(|s| s.spawn(|| self.runtime.block_on(exchange)).join());
        let (status, bytes) = match outcome {
            Ok(Ok(answer)) => answer,
            Ok(Err(e)) if e.is_timeout() => {
                return Err(SchedulerError::Timeout { command, seconds: self.timeout.as_secs() });
            }
            Ok(Err(e)) => return Err(unreachable(e.to_string())),
            Err(_) => return Err(unreachable("the request thread panicked".into())),
        };
        let text = String::from_utf8_lossy(&bytes);
        if status.is_server_error() {
            return Err(unreachable(format!("HTTP {status}: {}", excerpt(&text))));
        }
        let parsed: Result<Json, _> = serde_json::from_slice(&bytes);
        let errors = parsed.as_ref().ok().map(api_errors).unwrap_or_default();
        if !status.is_success() || !errors.is_empty() {
            let detail = if errors.is_empty() { excerpt(&text) } else { errors.join("; ") };
            return Err(SchedulerError::Failed { command, code: i32::from(status.as_u16()), stderr: detail });
        }
        parsed.map_err(|e| SchedulerError::Unparsable { command, detail: e.to_string() })
    }

    fn all_jobs(&self) -> Result<Vec<JobInfo>, SchedulerError> {
        let answer = self.call(reqwest::Method::GET, "jobs", None)?;
        let command = || format!("GET {}/jobs", self.base);
        let jobs = answer
            .get("jobs")
            .and_then(Json::as_array)
            .ok_or_else(|| SchedulerError::Unparsable { command: command(), detail: "no `jobs` array".into() })?;
        jobs.iter()
            .map(|j| job_info(j).map_err(|detail| SchedulerError::Unparsable { command: command(), detail }))
            .collect()
    }
}

fn excerpt(text: &str) -> String {
    text.trim().chars().take(500).collect()
}

/// The `errors` slurmrestd puts in every answer (`[{"error": …, "description": …}]`).
fn api_errors(answer: &Json) -> Vec<String> {
    let list = answer.get("errors").and_then(Json::as_array).map(Vec::as_slice).unwrap_or_default();
    list.iter()
        .map(|e| {
            let field = |k: &str| e.get(k).and_then(Json::as_str).unwrap_or_default().to_owned();
            [field("error"), field("description")].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join(": ")
        })
        .filter(|s| !s.is_empty())
        .collect()
}

/// v0.0.39 numbers are `{"set": bool, "infinite": bool, "number": n}`; older ones are plain.
fn number(value: Option<&Json>) -> Option<i64> {
    match value? {
        Json::Number(n) => n.as_i64(),
        Json::Object(o) if o.get("set") != Some(&Json::Bool(false)) && o.get("infinite") != Some(&Json::Bool(true)) => {
            o.get("number").and_then(Json::as_i64)
        }
        _ => None,
    }
}

fn no_val(n: u32) -> Json {
    json!({"set": true, "infinite": false, "number": n})
}

/// An epoch time as the CLI prints it (UTC); 0 means "not yet".
fn time(value: Option<&Json>) -> Option<String> {
    let secs = number(value).filter(|&s| s > 0)?;
    chrono::DateTime::from_timestamp(secs, 0).map(|t| t.format("%Y-%m-%dT%H:%M:%S").to_string())
}

fn job_info(job: &Json) -> Result<JobInfo, String> {
    let id = number(job.get("job_id")).filter(|&i| i > 0).ok_or_else(|| format!("job without a job_id: {job}"))?;
    // v0.0.39 `job_state` is a string; later versions a list of flags with the state first.
    let state = match job.get("job_state") {
        Some(Json::String(s)) => s.clone(),
        Some(Json::Array(a)) => a.first().and_then(Json::as_str).unwrap_or_default().to_owned(),
        _ => return Err(format!("job {id} without a job_state")),
    };
    let text = |k: &str| job.get(k).and_then(Json::as_str).map(str::trim).filter(|s| !s.is_empty() && *s != "None");
    let exit = match job.get("exit_code") {
        Some(Json::Object(o)) => number(o.get("return_code")).map(|code| ExitStatus {
            code: i32::try_from(code).unwrap_or(-1),
            signal: o
                .get("signal")
                .and_then(|s| number(s.get("id")).or_else(|| number(s.get("signal_id"))))
                .and_then(|s| i32::try_from(s).ok())
                .unwrap_or(0),
        }),
        other => number(other).map(|code| ExitStatus { code: i32::try_from(code).unwrap_or(-1), signal: 0 }),
    };
    Ok(JobInfo {
        id: JobId(id.to_string()),
        name: text("name").map(str::to_owned),
        state: SlurmState::parse(&state),
        reason: text("state_reason").map(str::to_owned),
        exit,
        nodes: text("nodes").map(str::to_owned),
        submitted_at: time(job.get("submit_time")),
        started_at: time(job.get("start_time")),
        ended_at: time(job.get("end_time")),
        source: StateSource::Squeue,
    })
}

/// The job description of a held submit: the script's `#SBATCH` directives as v0.0.39 fields.
pub fn job_description(job: &JobRequest) -> Result<Map<String, Json>, String> {
    let mut desc = Map::new();
    desc.insert("name".into(), json!(job.name));
    desc.insert("hold".into(), json!(true));
    desc.insert("current_working_directory".into(), json!("/tmp"));
    // Required by slurmrestd; the script exports what the job needs.
    desc.insert("environment".into(), json!(["PATH=/usr/local/bin:/usr/bin:/bin"]));
    let directives =
        job.script.lines().skip(1).take_while(|l| l.starts_with('#')).filter_map(|l| l.strip_prefix("#SBATCH "));
    for directive in directives {
        let (key, value) = directive.trim().split_once('=').unwrap_or((directive.trim(), ""));
        let int = || value.parse::<u32>().map_err(|_| format!("#SBATCH {key}={value}: expected a number"));
        let (field, v) = match key {
            "--job-name" => continue,
            "--output" => ("standard_output", json!(value)),
            "--error" => ("standard_error", json!(value)),
            "--nodes" => {
                desc.insert("maximum_nodes".into(), json!(int()?));
                ("minimum_nodes", json!(int()?))
            }
            "--ntasks" => ("tasks", json!(int()?)),
            "--ntasks-per-node" => ("tasks_per_node", json!(int()?)),
            "--gpus-per-node" => ("tres_per_node", json!(format!("gres/gpu:{}", int()?))),
            "--no-requeue" => ("requeue", json!(false)),
            "--exclusive" => ("exclusive", json!("true")),
            "--time" => ("time_limit", no_val(int()?)),
            "--partition" | "--account" | "--qos" | "--reservation" => (key.trim_start_matches('-'), json!(value)),
            "--constraint" => ("constraints", json!(value)),
            other => return Err(format!("#SBATCH {other} has no slurmrestd {API_VERSION} field in sweepgate")),
        };
        desc.insert(field.into(), v);
    }
    Ok(desc)
}

impl Scheduler for SlurmRest {
    fn submit_held(&self, job: &JobRequest) -> Result<JobId, SchedulerError> {
        let command = || format!("POST {}/job/submit (job {})", self.base, job.name);
        let desc =
            job_description(job).map_err(|stderr| SchedulerError::Failed { command: command(), code: 0, stderr })?;
        let answer =
            self.call(reqwest::Method::POST, "job/submit", Some(&json!({"script": job.script, "job": desc})))?;
        number(answer.get("job_id")).filter(|&i| i > 0).map(|i| JobId(i.to_string())).ok_or_else(|| {
            SchedulerError::Unparsable {
                command: command(),
                detail: format!("no job_id in {}", excerpt(&answer.to_string())),
            }
        })
    }

    fn release(&self, id: &JobId) -> Result<(), SchedulerError> {
        match self.call(reqwest::Method::POST, &format!("job/{id}"), Some(&json!({"hold": false}))) {
            Err(SchedulerError::Failed { stderr, .. })
                if stderr.contains("already finished") || stderr.contains("no longer pending") =>
            {
                Ok(())
            }
            other => other.map(|_| ()),
        }
    }

    fn jobs(&self, ids: &[JobId]) -> Result<Vec<JobInfo>, SchedulerError> {
        let mut jobs = self.all_jobs()?;
        jobs.retain(|j| ids.contains(&j.id));
        Ok(jobs)
    }

    fn jobs_named(&self, prefix: &str) -> Result<Vec<JobInfo>, SchedulerError> {
        let mut jobs = self.all_jobs()?;
        jobs.retain(|j| j.name.as_deref().is_some_and(|n| n.starts_with(prefix)));
        Ok(jobs)
    }

    fn cancel(&self, ids: &[JobId]) -> Result<(), SchedulerError> {
        for id in ids {
            match self.call(reqwest::Method::DELETE, &format!("job/{id}"), None) {
                Ok(_) => {}
                Err(SchedulerError::Failed { code, stderr, .. })
                    if code == 404 || stderr.contains("Invalid job id") || stderr.contains("already completing") => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_become_job_fields_and_unknown_ones_refuse_the_submit() {
        let script =
            "#!/bin/bash\n#SBATCH --job-name=sg-x\n#SBATCH --output=/o/%j/logs/sweep_%j.log\n#SBATCH --nodes=2\n\
                      #SBATCH --gpus-per-node=4\n#SBATCH --no-requeue\n#SBATCH --time=7\n#SBATCH --partition=gpu\n\
                      set -u\n#SBATCH --ignored-after-the-header\n";
        let desc = job_description(&JobRequest { name: "sg-x".into(), script: script.into() }).unwrap();
        let get = |k: &str| desc.get(k).cloned().unwrap_or(Json::Null);
        assert_eq!(get("name"), json!("sg-x"));
        assert_eq!(get("hold"), json!(true));
        assert_eq!(get("standard_output"), json!("/o/%j/logs/sweep_%j.log"));
        assert_eq!((get("minimum_nodes"), get("maximum_nodes")), (json!(2), json!(2)));
        assert_eq!(get("tres_per_node"), json!("gres/gpu:4"));
        assert_eq!(get("requeue"), json!(false));
        assert_eq!(get("time_limit"), json!({"set": true, "infinite": false, "number": 7}));
        assert_eq!(get("partition"), json!("gpu"));
        let odd = JobRequest { name: "n".into(), script: "#!/bin/bash\n#SBATCH --mail-user=x\n".into() };
        assert!(job_description(&odd).unwrap_err().contains("--mail-user"));
        let bad = JobRequest { name: "n".into(), script: "#!/bin/bash\n#SBATCH --nodes=two\n".into() };
        assert!(job_description(&bad).unwrap_err().contains("expected a number"));
    }

    #[test]
    fn job_records_of_both_number_shapes_are_read() {
        let v39 = json!({"job_id": 12, "name": "sg-a", "job_state": "FAILED", "state_reason": "NonZeroExitCode",
            "nodes": "n1", "submit_time": {"set": true, "infinite": false, "number": 1_764_600_000},
            "start_time": {"set": false, "infinite": false, "number": 0},
            "exit_code": {"status": "ERROR", "return_code": {"set": true, "infinite": false, "number": 3}}});
        let info = job_info(&v39).unwrap();
        assert_eq!((info.id.0.as_str(), info.state.clone()), ("12", SlurmState::Failed));
        assert_eq!(info.exit, Some(ExitStatus { code: 3, signal: 0 }));
        assert_eq!(info.submitted_at.as_deref(), Some("2025-12-01T14:40:00"));
        assert_eq!(info.started_at, None);
        let later = json!({"job_id": 13, "job_state": ["RUNNING"], "exit_code": 0});
        assert_eq!(job_info(&later).unwrap().state, SlurmState::Running);
        assert!(job_info(&json!({"job_state": "RUNNING"})).is_err());
        assert!(job_info(&json!({"job_id": 1})).is_err());
    }

    #[test]
    fn only_http_urls_and_the_spoken_version_are_accepted() {
        let t = Duration::from_secs(1);
        assert!(matches!(
            SlurmRest::new("unix:/run/slurmrestd.sock", API_VERSION, None, t),
            Err(RestSetupError::Url(_))
        ));
        assert!(matches!(SlurmRest::new("http://h:6820", "v0.0.38", None, t), Err(RestSetupError::Version(_))));
        let rest = SlurmRest::new("http://h:6820/", API_VERSION, Some("secret-token\n".into()), t).unwrap();
        assert!(!format!("{rest:?}").contains("secret-token"));
    }
}
