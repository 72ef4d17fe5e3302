//! Collects what a finished job left under `<output_root>/<job id>/logs/` (spec 50 §9): the
//! benchmark result JSONs (`results_concurrency_*.json`), the fixed-sequence aggregates upstream's
//! `process_result` writes (`agg_*.json`), power telemetry CSVs (`power/*.csv`,
//! `gpu_metrics*.csv`) and the wrapper's log markers. Each file gets a sha256 and basic checks
//! (full result and power validation belongs to `crate::results`).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::results::benchmark::FixedSeqAggregate;
use crate::results::power::{validate_single_node, PowerOptions, SourceNames, Telemetry};

use super::job_script::{BEGIN_MARKER, END_MARKER, SCRIPT_HASH_MARKER};

/// Files larger than this are listed as problems, not read.
const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;
/// A job directory with more entries than this is not walked further.
const MAX_ENTRIES: usize = 20_000;
const MAX_DEPTH: usize = 8;
/// Fields every sa-bench result carries, which must be positive (spec 50 §9, spec 40 §4.3).
const POSITIVE_RESULT_FIELDS: [&str; 4] = ["duration", "completed", "total_input_tokens", "total_output_tokens"];

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    Result,
    /// A fixed-sequence aggregate `agg_<RF>.json` (spec 40 §2.2): Checks 14 and 18's evidence.
    Aggregate,
    Power,
    /// lm-eval output under `logs/eval/` (`meta_env.json`, `results_*.json`): Check 2's evidence.
    Eval,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CollectedFile {
    /// Relative to the job directory.
    pub path: String,
    pub kind: FileKind,
    pub sha256: Option<String>,
    pub bytes: u64,
    /// Empty when the basic checks pass.
    pub problems: Vec<String>,
}

/// What the wrapper printed in the batch log.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct LogMarkers {
    pub began: bool,
    pub script_sha256: Option<String>,
    pub exit_code: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Collected {
    pub files: Vec<CollectedFile>,
    pub markers: LogMarkers,
    /// Problems with the directory itself (missing, too many entries).
    pub problems: Vec<String>,
}

impl Collected {
    pub fn results(&self) -> impl Iterator<Item = &CollectedFile> {
        self.files.iter().filter(|f| f.kind == FileKind::Result)
    }
    pub fn power(&self) -> impl Iterator<Item = &CollectedFile> {
        self.files.iter().filter(|f| f.kind == FileKind::Power)
    }
}

/// Reads the wrapper markers; the last occurrence of each wins (a requeued job logs twice).
pub fn read_markers(log: &str) -> LogMarkers {
    let mut m = LogMarkers::default();
    for line in log.lines() {
        if line.starts_with(BEGIN_MARKER) {
            m.began = true;
        } else if let Some(rest) = line.strip_prefix(SCRIPT_HASH_MARKER) {
            let hash = rest.trim();
            if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                m.script_sha256 = Some(hash.to_ascii_lowercase());
            }
        } else if let Some(rest) = line.strip_prefix(END_MARKER) {
            m.exit_code = rest.split_whitespace().next().and_then(|t| t.parse().ok());
        }
    }
    m
}

fn classify(relative: &Path) -> Option<FileKind> {
    let name = relative.file_name()?.to_str()?;
    if name.starts_with("results_concurrency_") && name.ends_with(".json") {
        return Some(FileKind::Result);
    }
    if name.starts_with("agg_") && name.ends_with(".json") {
        return Some(FileKind::Aggregate);
    }
    let in_dir = |dir: &str| relative.parent().and_then(|p| p.file_name()).is_some_and(|d| d == dir);
    if name.ends_with(".csv") && (in_dir("power") || name.starts_with("gpu_metrics")) {
        return Some(FileKind::Power);
    }
    let eval_output = name == "meta_env.json" || (name.starts_with("results_") && name.ends_with(".json"));
    if in_dir("eval") && eval_output {
        return Some(FileKind::Eval);
    }
    None
}

/// Basic checks of a result JSON: an object whose core counters are positive numbers, and whose
/// wall-clock window, when present, is ordered.
pub fn check_result(bytes: &[u8]) -> Vec<String> {
    let value: serde_json::Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => return vec![format!("not JSON: {e}")],
    };
    let Some(obj) = value.as_object() else {
        return vec!["not a JSON object".into()];
    };
    let mut problems = Vec::new();
    for field in POSITIVE_RESULT_FIELDS {
        match obj.get(field).and_then(|v| v.as_f64()) {
            Some(x) if x.is_finite() && x > 0.0 => {}
            Some(x) => problems.push(format!("{field} = {x}: must be positive")),
            None => problems.push(format!("{field}: missing or not a number")),
        }
    }
    let start = obj.get("benchmark_start_time_unix").and_then(|v| v.as_f64());
    let end = obj.get("benchmark_end_time_unix").and_then(|v| v.as_f64());
    if let (Some(s), Some(e)) = (start, end) {
        if e <= s {
            problems.push(format!("benchmark_end_time_unix {e} is not after benchmark_start_time_unix {s}"));
        }
    }
    problems
}

/// Walks `job_dir/logs` (bounded) and checks every result and power file; reads the batch log's
/// markers from `log_path`.
pub fn collect(job_dir: &Path, log_path: &Path) -> Collected {
    let mut collected = Collected::default();
    if let Ok(log) = std::fs::read(log_path) {
        collected.markers = read_markers(&String::from_utf8_lossy(&log));
    }
    let logs = job_dir.join("logs");
    if !logs.is_dir() {
        collected.problems.push(format!("{} does not exist", logs.display()));
        return collected;
    }
    let mut stack: Vec<(PathBuf, usize)> = vec![(logs, 0)];
    let mut seen = 0usize;
    let mut found: Vec<(PathBuf, FileKind)> = Vec::new();
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                collected.problems.push(format!("more than {MAX_ENTRIES} entries under logs/; stopped looking"));
                stack.clear();
                break;
            }
            // symlink_metadata: never follow links out of the job directory.
            let Ok(meta) = entry.path().symlink_metadata() else { continue };
            let path = entry.path();
            if meta.is_dir() && depth < MAX_DEPTH {
                stack.push((path, depth + 1));
            } else if meta.is_file() {
                let relative = path.strip_prefix(job_dir).unwrap_or(&path).to_path_buf();
                if let Some(kind) = classify(&relative) {
                    found.push((relative, kind));
                }
            }
        }
    }
    found.sort();
    for (relative, kind) in found {
        collected.files.push(check_file(job_dir, &relative, kind));
    }
    collected
}

fn check_file(job_dir: &Path, relative: &Path, kind: FileKind) -> CollectedFile {
    let path = job_dir.join(relative);
    let shown = relative.display().to_string();
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let mut file = CollectedFile { path: shown, kind: kind.clone(), sha256: None, bytes, problems: Vec::new() };
    if bytes > MAX_FILE_BYTES {
        file.problems.push(format!("{bytes} bytes, above the {MAX_FILE_BYTES}-byte limit; not read"));
        return file;
    }
    match std::fs::read(&path) {
        Ok(content) => {
            file.sha256 = Some(hex::encode(Sha256::digest(&content)));
            // Power files are judged against a result's window by `validate_power`.
            match kind {
                FileKind::Result => file.problems = check_result(&content),
                FileKind::Aggregate => {
                    if let Err(e) = FixedSeqAggregate::parse(&content, &file.path) {
                        file.problems.push(e.to_string());
                    }
                }
                // Scores are judged by the verifier (Check 2); here only the shape is checked.
                FileKind::Eval => {
                    if !serde_json::from_slice::<serde_json::Value>(&content).is_ok_and(|v| v.is_object()) {
                        file.problems.push("not a JSON object".into());
                    }
                }
                FileKind::Power => {}
            }
        }
        Err(e) => file.problems.push(format!("unreadable: {e}")),
    }
    file
}

/// One result's power telemetry, validated as upstream's single-node path does: serving-GPU
/// count, samples bracketing the benchmark window, max gap 3.0 s, duration match (spec 50 §10).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PowerCheck {
    /// The result file (relative to the job directory).
    pub result: String,
    /// The telemetry file it was validated against; None when the job wrote none.
    pub telemetry: Option<String>,
    pub power_valid: bool,
    /// Upstream's reason codes (`sampling_gap_exceeded`, …); empty when valid.
    pub reasons: Vec<String>,
    pub observed_gpu_count: usize,
    pub max_sample_gap_s: Option<f64>,
}

/// Validates the power telemetry of every result `collected` found against that result's
/// window, expecting `expected_gpus` serving GPUs. A job writes one telemetry file (the first,
/// in path order, is used when there are several).
pub fn validate_power(job_dir: &Path, collected: &Collected, expected_gpus: u32) -> Vec<PowerCheck> {
    let telemetry_file = collected.power().next();
    let telemetry_bytes = telemetry_file.map(|f| read_bounded(&job_dir.join(&f.path), f.bytes));
    let telemetry = match &telemetry_bytes {
        None => Telemetry::Missing,
        Some(Some(bytes)) => Telemetry::Bytes(bytes),
        Some(None) => Telemetry::Unreadable,
    };
    collected
        .results()
        .map(|result| {
            let raw = read_bounded(&job_dir.join(&result.path), result.bytes).unwrap_or_default();
            let names = SourceNames {
                telemetry: telemetry_file.map_or("", |f| f.path.as_str()),
                benchmark_result: &result.path,
            };
            let (validation, _) =
                validate_single_node(&raw, telemetry, i64::from(expected_gpus), &PowerOptions::default(), names);
            PowerCheck {
                result: result.path.clone(),
                telemetry: telemetry_file.map(|f| f.path.clone()),
                power_valid: validation.power_valid,
                reasons: validation.reasons.as_slice().iter().map(ToString::to_string).collect(),
                observed_gpu_count: validation.observed_gpu_count,
                max_sample_gap_s: validation.max_sample_gap_s(),
            }
        })
        .collect()
}

/// The file's bytes when it is within the collector's bound and readable.
fn read_bounded(path: &Path, size: u64) -> Option<Vec<u8>> {
    (size <= MAX_FILE_BYTES).then(|| std::fs::read(path).ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD_RESULT: &str = r#"{"duration": 10.5, "completed": 64, "total_input_tokens": 65536, "total_output_tokens": 65536,
        "output_throughput": 6241.5, "benchmark_start_time_unix": 100.0, "benchmark_end_time_unix": 110.5}"#;
    const GOOD_POWER: &str = "schema_version,timestamp_unix,scrape_seq,hostname,gpu_index,gpu_uuid,power_w\n\
        1,100.0,0,n1,0,GPU-a,300.5\n1,101.0,1,n1,0,GPU-a,301\n";

    #[test]
    fn markers_are_read_last_wins() {
        let log = format!(
            "{BEGIN_MARKER} job=1\n{SCRIPT_HASH_MARKER}{}\nnoise\n{END_MARKER}3 at=1\n{END_MARKER}0 at=2\n",
            "A".repeat(64)
        );
        let m = read_markers(&log);
        assert!(m.began);
        assert_eq!(m.script_sha256, Some("a".repeat(64)));
        assert_eq!(m.exit_code, Some(0));
        assert_eq!(read_markers("nothing"), LogMarkers::default());
        assert_eq!(read_markers(&format!("{SCRIPT_HASH_MARKER}short\n{END_MARKER}x")).script_sha256, None);
    }

    #[test]
    fn result_checks() {
        assert!(check_result(GOOD_RESULT.as_bytes()).is_empty());
        assert_eq!(check_result(b"[1]"), ["not a JSON object"]);
        assert!(check_result(b"{").first().unwrap().starts_with("not JSON"));
        let zero = GOOD_RESULT.replace("\"completed\": 64", "\"completed\": 0");
        assert_eq!(check_result(zero.as_bytes()), ["completed = 0: must be positive"]);
        let missing = GOOD_RESULT.replace("\"duration\": 10.5,", "");
        assert_eq!(check_result(missing.as_bytes()), ["duration: missing or not a number"]);
        let backwards = GOOD_RESULT.replace("110.5", "90");
        assert_eq!(check_result(backwards.as_bytes()).len(), 1);
    }

    /// A job directory with one result (window 100.0-110.5) and `power` as its telemetry.
    fn job_with_power(power: Option<&str>) -> (tempfile::TempDir, Collected) {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join("7");
        std::fs::create_dir_all(job.join("logs/power")).unwrap();
        std::fs::write(job.join("logs/results_concurrency_4_gpus_2.json"), GOOD_RESULT).unwrap();
        if let Some(csv) = power {
            std::fs::write(job.join("logs/power/samples.csv"), csv).unwrap();
        }
        let collected = collect(&job, &job.join("logs/sweep_7.log"));
        (dir, collected)
    }

    /// Two GPUs sampled every `step` seconds from 99.0 to 112.0, with `edit` applied to the rows.
    fn power_csv(step: f64, edit: &dyn Fn(usize, String) -> String) -> String {
        let mut out = String::from("schema_version,timestamp_unix,scrape_seq,hostname,gpu_index,gpu_uuid,power_w\n");
        let mut t = 99.0;
        let mut seq = 0;
        while t <= 112.0 + 1e-9 {
            for gpu in 0..2 {
                out += &edit(seq, format!("1,{t:.1},{seq},n1,{gpu},GPU-{gpu},{}.5\n", 300 + gpu));
            }
            t += step;
            seq += 1;
        }
        out
    }

    #[test]
    fn power_is_validated_against_each_results_window() {
        let (dir, c) = job_with_power(Some(&power_csv(1.0, &|_, row| row)));
        let checks = validate_power(&dir.path().join("7"), &c, 2);
        assert_eq!(checks.len(), 1);
        let check = &checks[0];
        assert!(check.power_valid, "{check:?}");
        assert_eq!((check.observed_gpu_count, check.telemetry.as_deref()), (2, Some("logs/power/samples.csv")));
        assert_eq!(check.max_sample_gap_s, Some(1.0));

        let wrong_count = validate_power(&dir.path().join("7"), &c, 4);
        assert_eq!(wrong_count[0].reasons, ["expected_gpu_count_mismatch"]);
    }

    #[test]
    fn gaps_bad_timestamps_and_missing_telemetry_are_invalid_with_reasons() {
        let sparse = power_csv(3.2, &|_, row| row);
        let (dir, c) = job_with_power(Some(&sparse));
        let checks = validate_power(&dir.path().join("7"), &c, 2);
        assert!(checks[0].reasons.contains(&"sampling_gap_exceeded".to_string()), "{:?}", checks[0]);

        let bad_time =
            power_csv(1.0, &|seq, row| if seq == 5 { row.replacen(",104.0,", ",not-a-time,", 1) } else { row });
        let (dir, c) = job_with_power(Some(&bad_time));
        let checks = validate_power(&dir.path().join("7"), &c, 2);
        assert_eq!(checks[0].reasons, ["invalid_timestamp_sample"]);

        let (dir, c) = job_with_power(None);
        let checks = validate_power(&dir.path().join("7"), &c, 2);
        assert_eq!(
            (checks[0].power_valid, checks[0].reasons.as_slice()),
            (false, &["telemetry_file_missing".to_string()][..])
        );
        assert_eq!(checks[0].telemetry, None);
    }

    #[test]
    fn collects_and_classifies_files_under_logs() {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join("12");
        let bench = job.join("logs/sa-bench_isl_1024_osl_1024");
        std::fs::create_dir_all(&bench).unwrap();
        std::fs::create_dir_all(job.join("logs/power")).unwrap();
        std::fs::write(bench.join("results_concurrency_4_gpus_2.json"), GOOD_RESULT).unwrap();
        std::fs::write(bench.join("results_concurrency_8_gpus_2.json"), "{}").unwrap();
        std::fs::write(job.join("logs/power/samples.csv"), GOOD_POWER).unwrap();
        std::fs::write(job.join("logs/other.csv"), "x").unwrap();
        std::fs::create_dir_all(job.join("logs/eval")).unwrap();
        std::fs::write(job.join("logs/eval/meta_env.json"), "{\"infmax_model_prefix\": \"dsr1\"}").unwrap();
        std::fs::write(job.join("logs/eval/results_2026-12-01T00-00-00.json"), "[1]").unwrap();
        std::fs::write(job.join("logs/eval/notes.txt"), "x").unwrap();
        let log = job.join("logs/sweep_12.log");
        std::fs::write(&log, format!("{END_MARKER}0\n")).unwrap();
        let c = collect(&job, &log);
        assert!(c.problems.is_empty());
        assert_eq!(c.markers.exit_code, Some(0));
        let paths: Vec<_> = c.files.iter().map(|f| (f.path.as_str(), f.problems.is_empty())).collect();
        assert_eq!(
            paths,
            [
                ("logs/eval/meta_env.json", true),
                ("logs/eval/results_2026-12-01T00-00-00.json", false),
                ("logs/power/samples.csv", true),
                ("logs/sa-bench_isl_1024_osl_1024/results_concurrency_4_gpus_2.json", true),
                ("logs/sa-bench_isl_1024_osl_1024/results_concurrency_8_gpus_2.json", false),
            ]
        );
        assert_eq!(c.results().count(), 2);
        assert_eq!(c.power().count(), 1);
        assert!(c.files.iter().all(|f| f.sha256.as_ref().is_some_and(|h| h.len() == 64)));
    }

    #[test]
    fn aggregates_are_collected_and_shape_checked() {
        const AGG: &str = include_str!(
            "../../fixtures/bundles/green-sweep/artifacts/40714803265/bmk_dsr1_fp4_b200_sglang_tp8_ep8_c4/agg_dsr1_fp4_b200_sglang_tp8_ep8_c4.json"
        );
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join("13");
        std::fs::create_dir_all(job.join("logs")).unwrap();
        std::fs::write(job.join("logs/agg_p1.json"), AGG).unwrap();
        std::fs::write(job.join("logs/agg_p2.json"), "{\"hw\": \"b200\"}").unwrap();
        let c = collect(&job, &job.join("logs/none.log"));
        let files: Vec<_> = c.files.iter().map(|f| (f.path.as_str(), &f.kind, f.problems.is_empty())).collect();
        assert_eq!(
            files,
            [("logs/agg_p1.json", &FileKind::Aggregate, true), ("logs/agg_p2.json", &FileKind::Aggregate, false)]
        );
        assert_eq!(c.results().count(), 0, "an aggregate is not a raw result");
    }

    #[test]
    fn missing_job_directory_is_a_problem() {
        let dir = tempfile::tempdir().unwrap();
        let c = collect(&dir.path().join("nope"), &dir.path().join("nope.log"));
        assert_eq!(c.problems.len(), 1);
        assert!(c.files.is_empty());
    }
}
