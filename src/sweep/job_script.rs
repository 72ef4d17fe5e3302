//! Renders the batch script of one point (pure): `#SBATCH` directives from the point's job spec
//! and the pool, then a wrapper that exports the point's environment, narrows the visible GPUs to
//! the serving count, and brackets the benchmark script with markers the dispatcher reads back
//! when Slurm no longer remembers the job (spec 50 §7 step 3).

use std::path::Path;

use super::dispatch_pool::DispatchPool;
use super::plan_input::Point;

/// Written by the wrapper at start: `sweepgate-job: begin job=<id> node=<node> gpus=<list>`.
pub const BEGIN_MARKER: &str = "sweepgate-job: begin";
/// `sweepgate-job: script-sha256=<hex>`: what actually ran.
pub const SCRIPT_HASH_MARKER: &str = "sweepgate-job: script-sha256=";
/// `sweepgate-job: end rc=<n>`: the script's exit status.
pub const END_MARKER: &str = "sweepgate-job: end rc=";

pub struct JobScriptInput<'a> {
    pub job_name: &'a str,
    pub sweep_id: &'a str,
    pub point: &'a Point,
    /// Absolute path of the benchmark script.
    pub script: &'a Path,
    pub pool: &'a DispatchPool,
    /// Absolute; job output goes to `<output_root>/<job id>/logs/`.
    pub output_root: &'a Path,
}

/// Single-quotes `text` for bash.
pub fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The batch log of a job, as `--output` below makes Slurm write it.
pub fn job_log_path(output_root: &Path, job_id: &str) -> std::path::PathBuf {
    output_root.join(job_id).join("logs").join(format!("sweep_{job_id}.log"))
}

pub fn render(input: &JobScriptInput<'_>) -> String {
    let job = &input.point.job;
    let root = input.output_root.display().to_string();
    let mut s = String::from("#!/bin/bash\n");
    let mut directive = |d: String| {
        s.push_str("#SBATCH ");
        s.push_str(&d);
        s.push('\n');
    };
    directive(format!("--job-name={}", input.job_name));
    directive(format!("--output={root}/%j/logs/sweep_%j.log"));
    directive(format!("--nodes={}", job.nodes));
    directive(format!("--ntasks={}", job.nodes));
    directive("--ntasks-per-node=1".into());
    directive(format!("--gpus-per-node={}", job.gpus));
    // A node failure ends the job (NODE_FAIL → `node_failed`) instead of Slurm re-running it
    // later under the same id and output directory (decision S16).
    directive("--no-requeue".into());
    if input.pool.exclusive {
        directive("--exclusive".into());
    }
    for (flag, value) in [
        ("account", &input.pool.account),
        ("qos", &input.pool.qos),
        ("reservation", &input.pool.reservation),
        ("constraint", &input.pool.constraint),
    ] {
        if let Some(v) = value {
            directive(format!("--{flag}={v}"));
        }
    }
    directive(format!("--time={}", job.time_limit_minutes));
    if let Some(p) = &input.pool.partition {
        directive(format!("--partition={p}"));
    }
    let script = sh_quote(&input.script.display().to_string());
    s.push_str("set -uo pipefail\n");
    s.push_str(&format!("export SWEEPGATE_SWEEP_ID={}\n", sh_quote(input.sweep_id)));
    s.push_str(&format!("export SWEEPGATE_POINT_ID={}\n", sh_quote(&input.point.id)));
    s.push_str(&format!("export SWEEPGATE_OUTPUT_DIR={}/\"$SLURM_JOB_ID\"\n", sh_quote(&root)));
    s.push_str(&format!("export SWEEPGATE_GPUS={}\n", job.gpus));
    s.push_str(&format!(
        "# --exclusive (or a generous node) exposes every GPU; serve on the requested {} only.\n\
         if [ -n \"${{CUDA_VISIBLE_DEVICES:-}}\" ]; then\n  \
         CUDA_VISIBLE_DEVICES=\"$(printf '%s' \"$CUDA_VISIBLE_DEVICES\" | cut -d, -f1-{})\"\n  \
         export CUDA_VISIBLE_DEVICES\nfi\n",
        job.gpus, job.gpus
    ));
    for (name, value) in &job.env {
        s.push_str(&format!("export {name}={}\n", sh_quote(value)));
    }
    s.push_str(&format!(
        "echo \"{BEGIN_MARKER} job=$SLURM_JOB_ID node=${{SLURMD_NODENAME:-}} nodes=${{SLURM_JOB_NODELIST:-}} \
         gpus=${{CUDA_VISIBLE_DEVICES:-}} at=$(date +%s)\"\n\
         echo \"{SCRIPT_HASH_MARKER}$(sha256sum < {script} | cut -d' ' -f1)\"\n\
         {script}\n\
         rc=$?\n\
         echo \"{END_MARKER}$rc at=$(date +%s)\"\n\
         exit $rc\n"
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::plan_input::JobSpec;

    fn pool(exclusive: bool) -> DispatchPool {
        DispatchPool {
            name: "p".into(),
            partition: Some("gpu".into()),
            account: Some("acct".into()),
            qos: None,
            reservation: None,
            constraint: None,
            gpus_per_node: 8,
            exclusive,
            max_concurrent_allocations: None,
            output_root: None,
            sha256: String::new(),
        }
    }

    fn point() -> Point {
        Point {
            id: "p1".into(),
            row: serde_json::Map::new(),
            job: JobSpec {
                script: "bench.sh".into(),
                env: [("CONC".to_string(), "4".to_string()), ("WEIRD".to_string(), "it's $HOME `x`".to_string())]
                    .into_iter()
                    .collect(),
                gpus: 2,
                nodes: 1,
                time_limit_minutes: 7,
                recipe: None,
            },
        }
    }

    #[test]
    fn renders_directives_env_and_markers() {
        let p = point();
        let pool = pool(true);
        let text = render(&JobScriptInput {
            job_name: "sg-abc-pr7-s-p1",
            sweep_id: "s",
            point: &p,
            script: Path::new("/w/bench dir/bench.sh"),
            pool: &pool,
            output_root: Path::new("/out"),
        });
        insta::assert_snapshot!(text);
    }

    #[test]
    fn quoting_survives_single_quotes() {
        assert_eq!(sh_quote("a'b"), r"'a'\''b'");
        assert_eq!(sh_quote(""), "''");
    }

    #[test]
    fn log_path_matches_the_output_directive() {
        assert_eq!(job_log_path(Path::new("/out"), "12"), Path::new("/out/12/logs/sweep_12.log"));
    }
}
