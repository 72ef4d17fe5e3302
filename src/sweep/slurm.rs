//! [`Scheduler`] over the Slurm command line tools (`sbatch`, `scontrol`, `squeue`, `sacct`,
//! `scancel`), the transport verified on Slurm 22.05 (spec 60 §1, spec 50 §7-8).
//!
//! State lookup falls through the sources in spec 50 §7 order: `squeue -t all` (jobs in slurmctld
//! memory, `MinJobAge` after the end), `sacct` (needs slurmdbd), `sacct -c` (the jobcomp/filetxt
//! log). The log-marker fallback needs the job's output path and lives in the dispatcher.
//!
//! With [`Ssh`] the same commands run on the pool's login host: `ssh -o BatchMode=yes -o
//! ConnectTimeout=… -T <host> -- <words>`, every word single-quoted for the remote shell and
//! the batch script sent on stdin, so no text from a PR is ever interpreted by a shell.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::job_script::sh_quote;
use super::scheduler::{ExitStatus, JobId, JobInfo, JobRequest, Scheduler, SchedulerError, SlurmState, StateSource};

/// `squeue -O` fields; the name goes last because it may contain the separator.
const SQUEUE_FORMAT: &str = "JobID:|,State:|,Reason:|,NodeList:|,SubmitTime:|,StartTime:|,EndTime:|,exit_code:|,Name:|";
const SQUEUE_FIELDS: usize = 9;
/// `sacct -o` fields, name last for the same reason.
const SACCT_FORMAT: &str = "JobID,State,ExitCode,Submit,Start,End,NodeList,JobName";
const SACCT_FIELDS: usize = 8;
/// Bounds what one command may print, so a confused tool cannot exhaust memory.
const MAX_OUTPUT_BYTES: u64 = 64 * 1024 * 1024;
/// At most this many ids per command line.
const IDS_PER_CALL: usize = 500;

/// ssh's own exit status when it could not connect or authenticate (the remote command's status
/// otherwise).
const SSH_FAILED: i32 = 255;

/// The Slurm CLI client. `bin_dir` selects the tools (default: `PATH`; on the remote host with
/// `ssh`).
#[derive(Debug, Clone)]
pub struct SlurmCli {
    pub bin_dir: Option<PathBuf>,
    pub timeout: Duration,
    /// Run the tools on this host over ssh instead of locally.
    pub ssh: Option<Ssh>,
}

/// How the tools are reached on a remote host.
#[derive(Debug, Clone)]
pub struct Ssh {
    /// `[user@]host`, checked by the pool profile (never starts with `-`).
    pub host: String,
    /// The ssh client (`ssh` on `PATH`).
    pub program: PathBuf,
    pub connect_timeout: Duration,
}

impl Ssh {
    pub fn new(host: &str) -> Ssh {
        Ssh { host: host.to_owned(), program: PathBuf::from("ssh"), connect_timeout: Duration::from_secs(10) }
    }

    /// ssh's argv for one remote command: non-interactive (BatchMode: no password prompt that
    /// would hang the dispatcher), bounded connect, no tty, and the words quoted once each.
    fn argv(&self, tool: &str, args: &[&str]) -> Vec<String> {
        let mut argv: Vec<String> = ["-o", "BatchMode=yes", "-o"].map(String::from).to_vec();
        argv.push(format!("ConnectTimeout={}", self.connect_timeout.as_secs().max(1)));
        argv.extend(["-T".to_owned(), self.host.clone(), "--".to_owned()]);
        argv.extend(std::iter::once(tool).chain(args.iter().copied()).map(sh_quote));
        argv
    }
}

impl Default for SlurmCli {
    fn default() -> Self {
        SlurmCli { bin_dir: None, timeout: Duration::from_secs(60), ssh: None }
    }
}

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

impl SlurmCli {
    fn run(&self, tool: &str, args: &[&str], stdin: Option<&str>) -> Result<Output, SchedulerError> {
        let tool_path = match &self.bin_dir {
            Some(dir) => dir.join(tool),
            None => PathBuf::from(tool),
        };
        let (program, argv, command) = match &self.ssh {
            None => (tool_path, args.iter().map(|a| (*a).to_owned()).collect(), format!("{tool} {}", args.join(" "))),
            Some(ssh) => (
                ssh.program.clone(),
                ssh.argv(&tool_path.to_string_lossy(), args),
                format!("ssh {} -- {tool} {}", ssh.host, args.join(" ")),
            ),
        };
        let mut child = Command::new(&program)
            .args(&argv)
            .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| SchedulerError::Spawn { command: command.clone(), source })?;
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            // A tool that exits early closes the pipe; its exit status tells the story.
            let _ = pipe.write_all(text.as_bytes());
        }
        let out_reader = child.stdout.take().map(read_bounded);
        let err_reader = child.stderr.take().map(read_bounded);
        let deadline = Instant::now() + self.timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                Ok(None) => {
                    // Our own child: end it by its handle, then report.
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(SchedulerError::Timeout { command, seconds: self.timeout.as_secs() });
                }
                Err(source) => return Err(SchedulerError::Spawn { command, source }),
            }
        };
        let stdout = out_reader.map(|h| h.join().unwrap_or_default()).unwrap_or_default();
        let stderr = err_reader.map(|h| h.join().unwrap_or_default()).unwrap_or_default();
        let code = status.code().unwrap_or(-1);
        if let (Some(ssh), SSH_FAILED) = (&self.ssh, code) {
            let stderr = stderr.trim().chars().take(2000).collect();
            return Err(SchedulerError::Unreachable { command, host: ssh.host.clone(), stderr });
        }
        Ok(Output { code, stdout, stderr })
    }

    /// Whether the controller answers: `sinfo` lists the partitions (`sweepgate doctor`).
    pub fn ping(&self) -> Result<(), SchedulerError> {
        self.run_ok("sinfo", &["--noheader", "--format=%P"], None).map(|_| ())
    }

    fn run_ok(&self, tool: &str, args: &[&str], stdin: Option<&str>) -> Result<String, SchedulerError> {
        let out = self.run(tool, args, stdin)?;
        if out.code == 0 {
            Ok(out.stdout)
        } else {
            Err(failed(tool, args, &out))
        }
    }

    fn squeue(&self, extra: &[&str]) -> Result<Vec<JobInfo>, SchedulerError> {
        let mut args = vec!["-h", "-t", "all", "-O", SQUEUE_FORMAT];
        args.extend_from_slice(extra);
        let out = self.run("squeue", &args, None)?;
        if out.code != 0 {
            // Every id unknown to slurmctld (aged out): not an error, just no records.
            if out.stderr.contains("Invalid job id") {
                return Ok(Vec::new());
            }
            return Err(failed("squeue", &args, &out));
        }
        parse_lines(&out.stdout, parse_squeue_line, "squeue")
    }

    fn sacct(&self, completion: bool, ids: &[JobId]) -> Result<Option<Vec<JobInfo>>, SchedulerError> {
        let joined = join_ids(ids);
        let mut args = vec!["-n", "-P", "-o", SACCT_FORMAT];
        if completion {
            args.push("-c");
        }
        if !ids.is_empty() {
            args.extend(["-j", joined.as_str()]);
        }
        let out = self.run("sacct", &args, None)?;
        if out.code != 0 {
            // No slurmdbd (plain sacct) or no jobcomp log (sacct -c): this source is absent.
            if out.stderr.contains("accounting storage is disabled") || out.stderr.contains("No such file") {
                return Ok(None);
            }
            return Err(failed("sacct", &args, &out));
        }
        let source = if completion { StateSource::SacctCompletion } else { StateSource::Sacct };
        let parse = |line: &str| parse_sacct_line(line, source);
        let infos = parse_lines(&out.stdout, parse, "sacct")?;
        // Without `-j`, `sacct -c` lists everything; with it, steps (`12.batch`) are skipped above.
        Ok(Some(infos))
    }
}

fn failed(tool: &str, args: &[&str], out: &Output) -> SchedulerError {
    SchedulerError::Failed {
        command: format!("{tool} {}", args.join(" ")),
        code: out.code,
        stderr: out.stderr.trim().chars().take(2000).collect(),
    }
}

fn read_bounded<R: Read + Send + 'static>(pipe: R) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.take(MAX_OUTPUT_BYTES).read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    })
}

fn join_ids(ids: &[JobId]) -> String {
    ids.iter().map(|i| i.0.as_str()).collect::<Vec<_>>().join(",")
}

fn parse_lines(
    text: &str,
    parse: impl Fn(&str) -> Result<Option<JobInfo>, String>,
    tool: &str,
) -> Result<Vec<JobInfo>, SchedulerError> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match parse(line) {
            Ok(Some(info)) => out.push(info),
            Ok(None) => {}
            Err(detail) => return Err(SchedulerError::Unparsable { command: tool.to_string(), detail }),
        }
    }
    Ok(out)
}

/// `sbatch --parsable` prints `<id>` or `<id>;<cluster>`.
pub fn parse_sbatch_parsable(stdout: &str) -> Result<JobId, String> {
    let first = stdout.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let id = first.split(';').next().unwrap_or("").trim();
    if !id.is_empty() && id.len() <= 20 && id.bytes().all(|b| b.is_ascii_digit()) {
        Ok(JobId(id.to_string()))
    } else {
        Err(format!("expected a job id, got {:?}", stdout.chars().take(200).collect::<String>()))
    }
}

fn opt_field(text: &str) -> Option<String> {
    let t = text.trim();
    match t {
        "" | "N/A" | "None" | "Unknown" | "(null)" | "(None)" => None,
        _ => Some(t.to_string()),
    }
}

fn check_id(text: &str) -> Result<JobId, String> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        Ok(JobId(t.to_string()))
    } else {
        Err(format!("bad job id {t:?}"))
    }
}

/// squeue's `exit_code` is the raw wait status (exit 3 → 768; a signal in the low bits).
fn decode_wait_status(text: &str) -> Option<ExitStatus> {
    let raw: i64 = text.trim().parse().ok()?;
    let signal = (raw & 0x7f) as i32;
    let code = ((raw >> 8) & 0xff) as i32;
    Some(ExitStatus { code, signal })
}

/// sacct's `ExitCode` is `code:signal`.
fn parse_exit_pair(text: &str) -> Option<ExitStatus> {
    let (code, signal) = text.trim().split_once(':')?;
    Some(ExitStatus { code: code.parse().ok()?, signal: signal.parse().ok()? })
}

/// One line of `squeue -h -O SQUEUE_FORMAT`.
pub fn parse_squeue_line(line: &str) -> Result<Option<JobInfo>, String> {
    let fields: Vec<&str> = line.splitn(SQUEUE_FIELDS, '|').collect();
    if fields.len() != SQUEUE_FIELDS {
        return Err(format!("squeue line has {} fields, expected {SQUEUE_FIELDS}: {line:?}", fields.len()));
    }
    let name = fields[8].strip_suffix('|').unwrap_or(fields[8]);
    Ok(Some(JobInfo {
        id: check_id(fields[0])?,
        name: Some(name.to_string()).filter(|n| !n.is_empty()),
        state: SlurmState::parse(fields[1]),
        reason: opt_field(fields[2]),
        exit: decode_wait_status(fields[7]),
        nodes: opt_field(fields[3]),
        submitted_at: opt_field(fields[4]),
        started_at: opt_field(fields[5]),
        ended_at: opt_field(fields[6]),
        source: StateSource::Squeue,
    }))
}

/// One line of `sacct [-c] -n -P -o SACCT_FORMAT`; job steps (`12.batch`) are skipped.
pub fn parse_sacct_line(line: &str, source: StateSource) -> Result<Option<JobInfo>, String> {
    let fields: Vec<&str> = line.splitn(SACCT_FIELDS, '|').collect();
    if fields.len() != SACCT_FIELDS {
        return Err(format!("sacct line has {} fields, expected {SACCT_FIELDS}: {line:?}", fields.len()));
    }
    if fields[0].contains('.') {
        return Ok(None);
    }
    Ok(Some(JobInfo {
        id: check_id(fields[0])?,
        name: Some(fields[7].to_string()).filter(|n| !n.is_empty()),
        state: SlurmState::parse(fields[1]),
        reason: None,
        exit: parse_exit_pair(fields[2]),
        nodes: opt_field(fields[6]),
        submitted_at: opt_field(fields[3]),
        started_at: opt_field(fields[4]),
        ended_at: opt_field(fields[5]),
        source,
    }))
}

/// Merges later sources into earlier ones: an id already known is not replaced.
fn merge_missing(known: &mut Vec<JobInfo>, more: Vec<JobInfo>) {
    for info in more {
        if !known.iter().any(|k| k.id == info.id) {
            known.push(info);
        }
    }
}

impl Scheduler for SlurmCli {
    fn submit_held(&self, job: &JobRequest) -> Result<JobId, SchedulerError> {
        let name_arg = format!("--job-name={}", job.name);
        let args = ["--parsable", "--hold", name_arg.as_str()];
        let stdout = self.run_ok("sbatch", &args, Some(&job.script))?;
        parse_sbatch_parsable(&stdout).map_err(|detail| SchedulerError::Unparsable {
            command: format!("sbatch --parsable --hold (job {})", job.name),
            detail,
        })
    }

    fn release(&self, id: &JobId) -> Result<(), SchedulerError> {
        let out = self.run("scontrol", &["release", &id.0], None)?;
        let benign = out.stderr.contains("already finished") || out.stderr.contains("Job is no longer pending");
        if out.code == 0 || benign {
            Ok(())
        } else {
            Err(failed("scontrol", &["release", &id.0], &out))
        }
    }

    fn jobs(&self, ids: &[JobId]) -> Result<Vec<JobInfo>, SchedulerError> {
        let mut found = Vec::new();
        for chunk in ids.chunks(IDS_PER_CALL) {
            let joined = join_ids(chunk);
            let mut infos = self.squeue(&["-j", &joined])?;
            infos.retain(|i| chunk.contains(&i.id));
            for completion in [false, true] {
                let missing: Vec<JobId> =
                    chunk.iter().filter(|id| !infos.iter().any(|i| &i.id == *id)).cloned().collect();
                if missing.is_empty() {
                    break;
                }
                if let Some(mut more) = self.sacct(completion, &missing)? {
                    more.retain(|i| missing.contains(&i.id));
                    merge_missing(&mut infos, more);
                }
            }
            found.extend(infos);
        }
        Ok(found)
    }

    fn jobs_named(&self, prefix: &str) -> Result<Vec<JobInfo>, SchedulerError> {
        let mut infos = self.squeue(&["--me"])?;
        infos.retain(|i| i.name.as_deref().is_some_and(|n| n.starts_with(prefix)));
        for completion in [false, true] {
            if let Some(mut more) = self.sacct(completion, &[])? {
                more.retain(|i| i.name.as_deref().is_some_and(|n| n.starts_with(prefix)));
                merge_missing(&mut infos, more);
            }
        }
        Ok(infos)
    }

    fn cancel(&self, ids: &[JobId]) -> Result<(), SchedulerError> {
        for chunk in ids.chunks(IDS_PER_CALL) {
            let mut args = vec!["--quiet"];
            args.extend(chunk.iter().map(|i| i.0.as_str()));
            let out = self.run("scancel", &args, None)?;
            let benign =
                out.stderr.contains("already completing or completed") || out.stderr.contains("Invalid job id");
            if out.code != 0 && !benign {
                return Err(failed("scancel", &args, &out));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sbatch_parsable_with_and_without_cluster() {
        assert_eq!(parse_sbatch_parsable("123\n").unwrap(), JobId("123".into()));
        assert_eq!(parse_sbatch_parsable("77;local\n").unwrap(), JobId("77".into()));
        assert!(parse_sbatch_parsable("").is_err());
        assert!(parse_sbatch_parsable("Submitted batch job 5").is_err());
        assert!(parse_sbatch_parsable("12a").is_err());
        assert!(parse_sbatch_parsable(&"9".repeat(21)).is_err());
    }

    #[test]
    fn squeue_line_with_exit_status_and_pipe_in_name() {
        let line =
            "4|FAILED|NonZeroExitCode|vm-n1|2026-11-29T22:44:11|2026-11-29T22:44:12|2026-11-29T22:44:12|768|odd|name|";
        let info = parse_squeue_line(line).unwrap().unwrap();
        assert_eq!(info.id, JobId("4".into()));
        assert_eq!(info.state, SlurmState::Failed);
        assert_eq!(info.reason.as_deref(), Some("NonZeroExitCode"));
        assert_eq!(info.exit, Some(ExitStatus { code: 3, signal: 0 }));
        assert_eq!(info.name.as_deref(), Some("odd|name"));
        assert_eq!(info.nodes.as_deref(), Some("vm-n1"));
        assert_eq!(info.source, StateSource::Squeue);
    }

    #[test]
    fn squeue_pending_held_job_has_no_times() {
        let line = "9|PENDING|JobHeldUser||2026-11-29T22:44:11|N/A|N/A|0|sg-x|";
        let info = parse_squeue_line(line).unwrap().unwrap();
        assert!(info.is_held());
        assert_eq!(info.nodes, None);
        assert_eq!(info.started_at, None);
        let killed = parse_squeue_line("9|CANCELLED|None|n|a|b|c|9|x|").unwrap().unwrap();
        assert_eq!(killed.exit, Some(ExitStatus { code: 0, signal: 9 }));
    }

    #[test]
    fn malformed_lines_are_errors_not_panics() {
        assert!(parse_squeue_line("").is_err());
        assert!(parse_squeue_line("x|RUNNING|a|b|c|d|e|0|n|").is_err());
        assert!(parse_squeue_line("1|RUNNING").is_err());
        assert!(parse_sacct_line("1|COMPLETED", StateSource::Sacct).is_err());
        assert!(parse_sacct_line("abc|COMPLETED|0:0|a|b|c|d|n", StateSource::Sacct).is_err());
    }

    #[test]
    fn sacct_lines_skip_steps_and_read_exit_pairs() {
        let job =
            parse_sacct_line("12|CANCELLED by 0|0:15|s|a|b|vm-n2|sg-1", StateSource::SacctCompletion).unwrap().unwrap();
        assert_eq!(job.state, SlurmState::Cancelled);
        assert_eq!(job.exit, Some(ExitStatus { code: 0, signal: 15 }));
        assert_eq!(job.source, StateSource::SacctCompletion);
        assert_eq!(parse_sacct_line("12.batch|COMPLETED|0:0|s|a|b|n|batch", StateSource::Sacct).unwrap(), None);
        let timeout = parse_sacct_line("13|TIMEOUT|0:0|Unknown|a|b|(null)|sg-2", StateSource::Sacct).unwrap().unwrap();
        assert_eq!(timeout.state, SlurmState::Timeout);
        assert_eq!(timeout.submitted_at, None);
        assert_eq!(timeout.nodes, None);
    }

    #[test]
    fn later_sources_do_not_replace_earlier_ones() {
        let a = parse_squeue_line("1|RUNNING|None|n|a|b|c|0|x|").unwrap().unwrap();
        let b = parse_sacct_line("1|COMPLETED|0:0|a|b|c|n|x", StateSource::SacctCompletion).unwrap().unwrap();
        let c = parse_sacct_line("2|COMPLETED|0:0|a|b|c|n|y", StateSource::SacctCompletion).unwrap().unwrap();
        let mut known = vec![a];
        merge_missing(&mut known, vec![b, c]);
        assert_eq!(known.len(), 2);
        assert_eq!(known[0].state, SlurmState::Running);
    }

    /// A directory of stand-in tools, to reach error paths the real cluster does not produce on demand.
    fn tools(scripts: &[(&str, &str)]) -> (tempfile::TempDir, SlurmCli) {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        for (name, body) in scripts {
            let path = dir.path().join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let cli = SlurmCli { bin_dir: Some(dir.path().to_path_buf()), timeout: Duration::from_millis(500), ssh: None };
        (dir, cli)
    }

    #[test]
    fn a_hanging_tool_times_out_with_an_unknown_outcome() {
        let (_dir, cli) = tools(&[("sbatch", "sleep 30")]);
        let err = cli.submit_held(&JobRequest { name: "sg-x".into(), script: "#!/bin/bash\n".into() }).unwrap_err();
        assert!(matches!(err, SchedulerError::Timeout { .. }), "{err:?}");
        assert!(err.outcome_unknown(), "the job may exist: look it up by name before retrying");
    }

    #[test]
    fn tool_failures_carry_stderr_and_benign_cases_pass() {
        let (_dir, cli) = tools(&[
            ("squeue", "echo 'slurm_load_jobs error: Unable to contact slurm controller (connect failure)' >&2; exit 1"),
            ("scontrol", "echo 'Job has already finished for job 5' >&2; exit 1"),
            ("scancel", "echo 'scancel: error: Kill job error on job id 5: Job/step already completing or completed' >&2; exit 1"),
            ("sbatch", "echo garbage"),
        ]);
        let err = cli.jobs(&[JobId("5".into())]).unwrap_err();
        assert!(err.to_string().contains("Unable to contact slurm controller"), "{err}");
        cli.release(&JobId("5".into())).unwrap();
        cli.cancel(&[JobId("5".into())]).unwrap();
        let err = cli.submit_held(&JobRequest { name: "sg-y".into(), script: String::new() }).unwrap_err();
        assert!(matches!(err, SchedulerError::Unparsable { .. }) && err.to_string().contains("sg-y"), "{err}");
    }

    #[test]
    fn aged_out_jobs_fall_through_to_sacct_completion() {
        let (_dir, cli) = tools(&[
            ("squeue", "echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1"),
            (
                "sacct",
                "case \"$*\" in *-c*) echo '5|TIMEOUT|0:0|a|b|c|vm-n1|sg-z'; echo '5.batch|CANCELLED|0:15|a|b|c|vm-n1|batch';; \
                 *) echo 'Slurm accounting storage is disabled' >&2; exit 1;; esac",
            ),
        ]);
        let jobs = cli.jobs(&[JobId("5".into())]).unwrap();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].state, SlurmState::Timeout);
        assert_eq!(jobs[0].source, StateSource::SacctCompletion);
    }

    #[test]
    fn ssh_words_are_quoted_once_each_and_the_host_follows_the_options() {
        let ssh = Ssh::new("ops@login-1");
        let argv = ssh.argv("squeue", &["-O", "JobID:|,Name:|", "--job-name=it's $x"]);
        assert_eq!(
            argv,
            [
                "-o",
                "BatchMode=yes",
                "-o",
                "ConnectTimeout=10",
                "-T",
                "ops@login-1",
                "--",
                "'squeue'",
                "'-O'",
                "'JobID:|,Name:|'",
                "'--job-name=it'\\''s $x'"
            ]
        );
    }

    #[test]
    fn ssh_exit_255_is_an_unreachable_host_with_an_unknown_outcome() {
        let (dir, _) = tools(&[("ssh", "echo 'ssh: connect to host h port 22: Connection refused' >&2; exit 255")]);
        let ssh = Ssh { program: dir.path().join("ssh"), ..Ssh::new("h") };
        let cli = SlurmCli { bin_dir: None, timeout: Duration::from_secs(5), ssh: Some(ssh) };
        let err = cli.submit_held(&JobRequest { name: "sg-q".into(), script: "#!/bin/bash\n".into() }).unwrap_err();
        assert!(matches!(err, SchedulerError::Unreachable { .. }), "{err:?}");
        assert!(err.to_string().contains("Connection refused") && err.to_string().contains("ssh h"), "{err}");
        assert!(err.outcome_unknown(), "the connection may have dropped after sbatch ran");
    }

    #[test]
    fn missing_tools_are_spawn_errors_naming_the_command() {
        let bin_dir = Some(PathBuf::from("/nonexistent-sweepgate-bin"));
        let cli = SlurmCli { bin_dir, timeout: Duration::from_secs(5), ssh: None };
        let err = cli.jobs(&[JobId("1".into())]).unwrap_err();
        assert!(matches!(err, SchedulerError::Spawn { .. }), "{err:?}");
        assert!(err.to_string().contains("squeue"), "{err}");
    }
}
