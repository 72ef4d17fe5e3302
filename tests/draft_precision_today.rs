//! Check 13 on the benchmark repository as its users have it today (issue 34 item 5; decision
//! RV5): the `inferencex-e2e/` tree of Oct 2026 (`../shared/acceptance/inferencex-2026-11/`,
//! never edited). Its `glm5.2-fp4-gb200-dynamo-sglang-agentic-agg` config (MTP) runs
//! `srt-slurm-recipes/glm5.2/sglang/gb200-fp4/agentx/agg.yaml`, whose environment enables
//! `SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE`. Upstream's prompt (Check 13, after #3283/#3348) applies the
//! named prohibition to "submissions under review, including image-only bumps and re-enabled
//! recipes": a PR that only bumps that config's image is judged on the unchanged recipe.

use std::path::Path;

use sweepgate::checks::{c13_draft_precision, Context, Status};
use sweepgate::evidence::{read_bundle, ChangedFile};
use sweepgate::repo::MemTree;

mod support;

use support::today_tree::today_dir;

const CONFIG: &str = "glm5.2-fp4-gb200-dynamo-sglang-agentic-agg";
const RECIPE: &str = "inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes/glm5.2/sglang/gb200-fp4/agentx/agg.yaml";

/// Every file under `dir/sub`, keyed by its path relative to `dir`.
fn read_into(tree: &mut MemTree, dir: &Path, sub: &str) {
    let mut stack = vec![dir.join(sub)];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                let rel = path.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                tree.insert(rel, bytes);
            }
        }
    }
}

/// The shared story's sign-off and policy, with today's tree as the head and a PR whose only
/// change is a changelog entry for `CONFIG` (an image bump names nothing else).
fn image_bump_of_today(dir: &Path) -> sweepgate::evidence::Evidence {
    let bundle = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bundles/green-sweep");
    let mut e = read_bundle(&bundle).unwrap();
    let mut head = MemTree::new();
    for sub in ["inferencex-e2e/configs", "inferencex-e2e/runners", "inferencex-e2e/benchmarks"] {
        read_into(&mut head, dir, sub);
    }
    e.head = head;
    e.files = vec![ChangedFile {
        filename: "inferencex-e2e/perf-changelog.yaml".into(),
        previous_filename: None,
        status: "modified".into(),
        patch: Some(format!(
            "@@ -1,1 +1,5 @@\n x\n+- config-keys:\n+  - {CONFIG}\n+  description:\n+  - Bump the image\n"
        )),
    }];
    e
}

#[test]
fn an_image_bump_of_a_config_whose_recipe_enables_the_named_flag_fails() {
    let Some(dir) = today_dir() else { return };
    let text = std::fs::read_to_string(dir.join(RECIPE)).unwrap();
    let line = text.lines().position(|l| l.trim() == "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: '1'").map(|i| i + 1);
    assert!(line.is_some(), "the recipe still enables the flag in this copy");
    let e = image_bump_of_today(&dir);
    let o = c13_draft_precision::check(&Context::new(&e));
    assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "lowered"), "{o:?}");
    let finding = o.message.args["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["setting"] == "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE")
        .cloned()
        .unwrap_or_default();
    assert_eq!(finding["file"], RECIPE, "{o:?}");
    assert_eq!(finding["origin"], "launch", "an unchanged file the config runs: {o:?}");
    assert!(finding["line"].as_u64().unwrap_or(0) > 0, "{o:?}");
}

/// 13.h on a real separate draft: `kimik3-fp4-mi355x-atom-agentic-mtp` serves the DSpark draft
/// `Inferact/Kimi-K3-DSpark` (ATOM's `draft-model:`) under a global `ptpc_fp8` online quantization
/// whose trailing patterns are the recipe's own exclusions of the draft's unprefixed modules.
/// Those module names are not in the evidence: the check names the config as missing evidence
/// (WARN) and never calls the draft's target layers quantized.
#[test]
fn an_online_quantization_beside_a_separate_draft_is_missing_evidence_not_a_violation() {
    let Some(dir) = today_dir() else { return };
    let mut e = image_bump_of_today(&dir);
    e.files[0].patch = Some(
        "@@ -1,1 +1,5 @@\n x\n+- config-keys:\n+  - kimik3-fp4-mi355x-atom-agentic-mtp\n+  description:\n+  - Bump the image\n"
            .into(),
    );
    assert!(
        sweepgate::pr::drafts::draft_models(&e).contains("Inferact/Kimi-K3-DSpark"),
        "ATOM's draft-model is the draft"
    );
    let o = c13_draft_precision::check(&Context::new(&e));
    assert_eq!(o.status, Status::Warn, "{o:?}");
    let missing = o.message.args["missing"].to_string();
    assert!(missing.contains("draft_online_quant_unmapped") && missing.contains("Inferact/Kimi-K3-DSpark"), "{o:?}");
}
