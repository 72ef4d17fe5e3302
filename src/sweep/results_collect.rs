//! Collects what a finished job left under `<output_root>/<job id>/logs/` (spec 50 §9): the
//! benchmark result JSONs (`results_concurrency_*.json`), power telemetry CSVs (`power/*.csv`,
//! `gpu_metrics*.csv`) and the wrapper's log markers. Each file gets a sha256 and basic checks
//! (full result and power validation belongs to `crate::results`).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

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
    Power,
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
    let in_power_dir = relative.parent().and_then(|p| p.file_name()).is_some_and(|d| d == "power");
    if name.ends_with(".csv") && (in_power_dir || name.starts_with("gpu_metrics")) {
        return Some(FileKind::Power);
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

/// Basic checks of a power CSV: a header naming a timestamp and a power column, at least two
/// data rows, every row as wide as the header, power values numeric and not negative.
pub fn check_power_csv(bytes: &[u8]) -> Vec<String> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return vec!["not UTF-8".into()];
    };
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let Some(header) = lines.next() else {
        return vec!["empty file".into()];
    };
    let columns: Vec<String> = header.split(',').map(|c| c.trim().to_ascii_lowercase()).collect();
    let time_col = columns.iter().position(|c| c.contains("time"));
    let power_col = columns
        .iter()
        .position(|c| c.contains("power") && !["limit", "cap", "max", "min"].iter().any(|x| c.contains(x)));
    let mut problems = Vec::new();
    if time_col.is_none() {
        problems.push("no timestamp column in the header".into());
    }
    let Some(power_col) = power_col else {
        problems.push("no power column in the header".into());
        return problems;
    };
    let mut rows = 0usize;
    for (i, line) in lines.enumerate() {
        rows += 1;
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() != columns.len() {
            problems.push(format!("row {}: {} fields, header has {}", i + 2, fields.len(), columns.len()));
            break;
        }
        let watts = fields.get(power_col).map(|f| f.trim().trim_end_matches(" W").trim());
        match watts.and_then(|w| w.parse::<f64>().ok()) {
            Some(w) if w.is_finite() && w >= 0.0 => {}
            _ => {
                problems.push(format!("row {}: power {:?} is not a non-negative number", i + 2, watts.unwrap_or("")));
                break;
            }
        }
    }
    if rows < 2 {
        problems.push(format!("{rows} sample row(s); at least 2 are needed"));
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
            file.problems = match kind {
                FileKind::Result => check_result(&content),
                FileKind::Power => check_power_csv(&content),
            };
        }
        Err(e) => file.problems.push(format!("unreadable: {e}")),
    }
    file
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

    #[test]
    fn power_checks() {
        assert!(check_power_csv(GOOD_POWER.as_bytes()).is_empty());
        let smi = "timestamp, index, power.draw [W], power.limit [W]\n2026/01/01 00:00:00.000, 0, 300.1 W, 700 W\n2026/01/01 00:00:01.000, 0, 310 W, 700 W\n";
        assert!(check_power_csv(smi.as_bytes()).is_empty(), "{:?}", check_power_csv(smi.as_bytes()));
        assert_eq!(check_power_csv(b""), ["empty file"]);
        assert!(check_power_csv(b"a,b\n1,2\n1,2\n").contains(&"no power column in the header".to_string()));
        let one_row = GOOD_POWER.lines().take(2).collect::<Vec<_>>().join("\n");
        assert_eq!(check_power_csv(one_row.as_bytes()), ["1 sample row(s); at least 2 are needed"]);
        let negative = GOOD_POWER.replace("301", "-1");
        assert_eq!(check_power_csv(negative.as_bytes()).len(), 1);
        let ragged = format!("{GOOD_POWER}1,2\n");
        assert!(check_power_csv(ragged.as_bytes())[0].contains("fields"));
        assert_eq!(check_power_csv(&[0xff, 0xfe]), ["not UTF-8"]);
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
        let log = job.join("logs/sweep_12.log");
        std::fs::write(&log, format!("{END_MARKER}0\n")).unwrap();
        let c = collect(&job, &log);
        assert!(c.problems.is_empty());
        assert_eq!(c.markers.exit_code, Some(0));
        let paths: Vec<_> = c.files.iter().map(|f| (f.path.as_str(), f.problems.is_empty())).collect();
        assert_eq!(
            paths,
            [
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
    fn missing_job_directory_is_a_problem() {
        let dir = tempfile::tempdir().unwrap();
        let c = collect(&dir.path().join("nope"), &dir.path().join("nope.log"));
        assert_eq!(c.problems.len(), 1);
        assert!(c.files.is_empty());
    }
}
