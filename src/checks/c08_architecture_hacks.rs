//! Check 8 — Architecture hacks (spec 30 Check 8): overrides that remove architecture FLOPs.
//!
//! Deterministic part: the override knobs themselves, anywhere in an added, non-comment line of
//! a script, recipe or master config. Whether an override is natively supported is left to the
//! reviewer: any use fails and names the line (upstream's rule 1 lists them as prohibited).

use serde_json::json;

use super::scan::{self, Role};
use super::{Context, Outcome};

/// Knobs that rewrite a model's architecture at load time.
const OVERRIDE_KNOBS: [&str; 6] = [
    "--hf-overrides",
    "hf_overrides",
    "hf-overrides",
    "--json-model-override-args",
    "json-model-override-args",
    "json_model_override_args",
];

#[derive(Debug, PartialEq, Eq)]
struct Finding {
    file: String,
    line: u32,
    flag: String,
    kind: &'static str,
}

fn scan_line(code: &str) -> Option<(String, &'static str)> {
    if let Some(knob) = OVERRIDE_KNOBS.iter().find(|k| code.contains(*k)) {
        return Some(((*knob).to_owned(), "override"));
    }
    // In-place edits of a checkpoint's config (sed -i / jq / redirect into config.json).
    let edits_model_config = code.contains("config.json")
        && (code.contains("sed -i") || code.contains("jq ") || code.contains("> ") && code.contains(".json"));
    edits_model_config.then(|| (code.trim().chars().take(80).collect(), "model_file_edit"))
}

pub fn check(cx: &Context) -> Outcome {
    let ev = cx.evidence;
    let mut serving_files = 0usize;
    let mut findings = Vec::new();
    for (file, role) in scan::changed(ev) {
        if role == Role::Other {
            continue;
        }
        serving_files += 1;
        let Some(lines) = scan::added_lines_of(ev, file) else {
            return Outcome::unreadable(&file.filename, "neither its diff nor its content is in the evidence");
        };
        for added in lines {
            if let Some((flag, kind)) = scan_line(scan::code_part(added.text)) {
                findings.push(Finding { file: file.filename.clone(), line: added.line, flag, kind });
            }
        }
    }
    if serving_files == 0 {
        return Outcome::na("untouched");
    }
    if findings.is_empty() {
        return Outcome::pass("clean").arg("count", serving_files);
    }
    let mut outcome = Outcome::fail("overrides").arg(
        "findings",
        findings
            .iter()
            .map(|f| json!({"file": f.file, "line": f.line, "flag": f.flag, "kind": f.kind}))
            .collect::<Vec<_>>(),
    );
    for f in &findings {
        outcome = outcome.evidence(format!("{}:{}", f.file, f.line));
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, with_change};
    use crate::checks::Status;

    #[test]
    fn hf_overrides_in_an_added_script_line_fails_with_file_and_line() {
        let e = with_change(
            evidence(),
            "benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200_sglang.sh",
            "@@ -10,2 +10,3 @@\n python3 -m sglang.launch_server \\\n+  --hf-overrides '{\"index_topk_freq\": 4}' \\\n   --tp 8\n",
        );
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.args["findings"][0]["line"], 11);
        assert_eq!(o.evidence, ["benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200_sglang.sh:11"]);
    }

    #[test]
    fn recipe_keys_and_model_config_edits_fail() {
        let e = with_change(
            evidence(),
            "benchmarks/multi_node/srt-slurm-recipes/sglang/x/a.yaml",
            "@@ -1,1 +1,3 @@\n backend:\n+  json-model-override-args: '{\"num_hidden_layers\": 40}'\n+  setup: sed -i 's/61/40/' /models/x/config.json\n",
        );
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Fail);
        let findings = o.message.args["findings"].as_array().unwrap();
        assert_eq!(findings.len(), 2);
        assert_eq!(findings[1]["kind"], "model_file_edit");
    }

    #[test]
    fn comments_and_removed_lines_do_not_count() {
        let e = with_change(
            evidence(),
            "benchmarks/single_node/fixed_seq_len/x.sh",
            "@@ -1,2 +1,2 @@\n-  --hf-overrides '{}'\n+  # no --hf-overrides any more\n+  --tp 8 # was --hf-overrides\n",
        );
        assert_eq!(check(&Context::new(&e)).status, Status::Pass);
    }

    #[test]
    fn a_serving_file_without_diff_or_content_is_never_clean() {
        let mut e = evidence();
        e.files.push(crate::evidence::ChangedFile {
            filename: "configs/nvidia-master.yaml".into(),
            previous_filename: None,
            status: "modified".into(),
            patch: None,
        });
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "unreadable"));
    }

    #[test]
    fn docs_only_changes_are_not_applicable() {
        let e = with_change(evidence(), "docs/notes.md", "@@ -1 +1 @@\n+--hf-overrides in prose\n");
        assert_eq!(check(&Context::new(&e)).status, Status::NotApplicable);
    }
}
