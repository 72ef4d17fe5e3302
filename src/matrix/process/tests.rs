use super::*;
use crate::matrix::diff::additions_between;
use crate::repo::MemTree;

const AMD: &str = include_str!("../../../fixtures/repo/configs/amd-master.yaml");
const NVIDIA: &str = include_str!("../../../fixtures/repo/configs/nvidia-master.yaml");
const RUNNERS: &str = include_str!("../../../fixtures/repo/configs/runners.yaml");
const CHANGELOG: &str = include_str!("../../../fixtures/repo/perf-changelog.yaml");

fn tree(nvidia: &str, changelog: &str) -> MemTree {
    MemTree::new()
        .with("configs/amd-master.yaml", AMD)
        .with("configs/nvidia-master.yaml", nvidia)
        .with("configs/runners.yaml", RUNNERS)
        .with("perf-changelog.yaml", changelog)
}

fn entry(keys: &[&str], extra: &str) -> String {
    let keys: String = keys.iter().map(|k| format!("    - \"{k}\"\n")).collect();
    format!("\n- config-keys:\n{keys}{extra}  description:\n    - \"d\"\n  pr-link: XXX\n")
}

fn run_with(base: &MemTree, head: &MemTree, options: ProcessOptions) -> Result<MatrixOutput, MatrixError> {
    let b = String::from_utf8(base.read("perf-changelog.yaml").unwrap().unwrap()).unwrap();
    let h = String::from_utf8(head.read("perf-changelog.yaml").unwrap().unwrap()).unwrap();
    let additions = additions_between(&b, &h, "perf-changelog.yaml")?;
    process(
        &additions,
        "perf-changelog.yaml",
        Revision { name: "origin/main", tree: base },
        Revision { name: "abc123", tree: head },
        &Layout::default(),
        options,
    )
}

fn run(appended: &str, options: ProcessOptions) -> Result<MatrixOutput, MatrixError> {
    run_with(&tree(NVIDIA, CHANGELOG), &tree(NVIDIA, &format!("{CHANGELOG}{appended}")), options)
}

fn row(v: Value) -> Row {
    match v {
        Value::Object(m) => m,
        _ => unreachable!("test rows are objects"),
    }
}

#[test]
fn wildcards_use_processor_semantics() {
    let inputs = crate::matrix::inputs::load(&tree(NVIDIA, CHANGELOG), &Layout::default()).unwrap();
    let r = |p: &[&str]| resolve_config_keys(&p.iter().map(|s| s.to_string()).collect::<Vec<_>>(), &inputs.configs);
    assert_eq!(
        r(&["glm5-*", "glm5-fp8-b300-vllm-agentic"]).unwrap(),
        ["glm5-fp8-b300-vllm-agentic", "glm5-fp4-gb300-dynamo-vllm-agentic"]
    );
    assert_eq!(r(&["dsr1*mtp"]).unwrap(), ["dsr1-fp4-b200-trt-mtp", "dsr1-fp4-gb200-dynamo-trt-mtp"], "* spans '-'");
    assert_eq!(r(&["dsr1-fp4-b200-trt*"]).unwrap(), ["dsr1-fp4-b200-trt", "dsr1-fp4-b200-trt-mtp"], "* matches empty");
    assert_eq!(
        r(&["dsr1-fp4-b200-trt?mtp"]).unwrap_err().to_string(),
        "Config key 'dsr1-fp4-b200-trt?mtp' not found in master configs.",
        "? is literal"
    );
    assert_eq!(
        r(&["dsr1-fp?-*"]).unwrap_err().to_string(),
        "No config keys matched the wildcard pattern 'dsr1-fp?-*' in master configs."
    );
    assert!(wildcard_match(&["a", "b", "c"], "axbyc"));
    assert!(!wildcard_match(&["ab", "ba"], "aba"), "parts may not overlap");
    assert!(wildcard_match(&["", ""], ""));
}

#[test]
fn fingerprint_matches_python_canonical_sha256() {
    let r = row(json!({"image": "i", "model": "m", "tp": 8, "conc": 4, "exp-name": "x", "run-eval": false,
        "router": {"name": "r", "version": "1"}, "d": "≥"}));
    // Computed with hashlib.sha256(json.dumps(r, sort_keys=True, separators=(",", ":")).encode()).
    assert_eq!(recipe_fingerprint(&r), "4dba2c9e38f8075f9a0670862544a3da96ec0bae1dd3e3ca9739036b230b2b66");
    let mut other_conc = r.clone();
    other_conc.insert("conc".into(), json!(64));
    other_conc.insert("exp-name".into(), json!("y"));
    assert_eq!(recipe_fingerprint(&r), recipe_fingerprint(&other_conc));
    let mut other_image = r.clone();
    other_image.insert("image".into(), json!("j"));
    assert_ne!(recipe_fingerprint(&r), recipe_fingerprint(&other_image));
}

#[test]
fn trim_keeps_lowest_conc_per_recipe_in_place() {
    let sn = |tp: i64, conc: i64, name: &str| row(json!({"tp": tp, "conc": conc, "exp-name": name}));
    let mn = |conc: Value, agentic: bool| {
        let mut r = row(json!({"prefill": {"tp": 4}, "conc": conc}));
        if agentic {
            r.insert("scenario-type".into(), json!("agentic-coding"));
        }
        r
    };
    let rows = vec![
        sn(8, 16, "a"),
        sn(4, 8, "a"),
        sn(8, 4, "b"),
        mn(json!([64, 8, 32]), false),
        sn(8, 4, "c"),
        mn(json!([2]), true),
        mn(json!([1]), true),
    ];
    let out = trim_conc(rows);
    let got: Vec<Value> = out.iter().map(|r| json!([r["conc"], r.get("exp-name")])).collect();
    assert_eq!(
        got,
        [json!([8, "a"]), json!([4, "b"]), json!([[8], null]), json!([[2], null]), json!([[1], null])],
        "tp8 keeps its first lowest (conc 4 'b'); multinode lists shrink; one-conc agentic rows all stay"
    );
}

#[test]
fn addition_errors() {
    let opts = ProcessOptions::default();
    let e = |a: &str| {
        parse_additions(
            &Additions { text: a.into(), head_lines: (1..=a.lines().count() as u32 + 1).collect() },
            "perf-changelog.yaml",
            opts,
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default()
    };
    assert_eq!(e("\n  \n"), "No additions found in the changelog file.");
    assert_eq!(e("# only a comment"), "No valid YAML entries found in the changelog additions.");
    assert!(e("config-keys: [a]").contains("must form a YAML list of changelog entries, found a mapping"));
    assert!(e("- config-keys: [a]\n  pr-link: x\n").contains("missing field `description`"));
    let mixed = "- {config-keys: [a], description: [x], pr-link: x, append-only: true}\n- {config-keys: [b], description: [x], pr-link: x}";
    assert_eq!(e(mixed), "append-only entries cannot share a sweep with regular changelog entries");
    let ao = "- {config-keys: [a], description: [x], pr-link: x, append-only: true}";
    let err = parse_additions(
        &Additions { text: ao.into(), head_lines: vec![1] },
        "p",
        ProcessOptions { evals_only: true, ..opts },
    );
    assert_eq!(err.err().unwrap().to_string(), "append-only sweeps cannot use all-evals or evals-only modifiers");
}

#[test]
fn entry_errors_point_into_the_head_file() {
    let e = run(&entry(&["dsr1-fp4-b200-trt"], "  evals-only: \"yes\"\n"), ProcessOptions::default()).unwrap_err();
    let total = CHANGELOG.lines().count();
    assert_eq!(
        e.to_string(),
        format!("invalid changelog entry: perf-changelog.yaml:{}:15: evals-only: expected a boolean (true or false), found the string \"yes\"", total + 4)
    );
    let e = run(&entry(&["nope"], ""), ProcessOptions::default()).unwrap_err();
    assert_eq!(e.to_string(), "Config key 'nope' not found in master configs.");
}

#[test]
fn regular_entry_gives_throughput_and_default_evals() {
    let out = run(&entry(&["dsr1-fp4-b200-trt"], ""), ProcessOptions::default()).unwrap();
    assert_eq!(out.single_node.keys().collect::<Vec<_>>(), ["8k1k", "1024_8192"]);
    assert_eq!(out.single_node["8k1k"].len(), 12);
    assert!(out.single_node["8k1k"].iter().all(|r| r["recipe-fingerprint"].as_str().unwrap().len() == 64));
    assert_eq!(out.evals.len(), 4);
    assert!(out.evals.iter().all(|r| r["eval-only"] == json!(true) && !r.contains_key("recipe-fingerprint")));
    assert_eq!(out.changelog_metadata.entries.len(), 1);
    assert_eq!(out.changelog_metadata.head_ref, "abc123");
    let text = out.to_json_string();
    assert!(text.starts_with(r#"{"single_node":{"8k1k":[{"image":"#), "{text}");
    assert!(text.contains(r#""multi_node":{},"evals":[{"#));
    // Trimmed: one point per recipe.
    let trimmed =
        run(&entry(&["dsr1-fp4-b200-trt"], ""), ProcessOptions { trim_conc: true, ..Default::default() }).unwrap();
    assert_eq!(trimmed.single_node["8k1k"].iter().map(|r| r["conc"].clone()).collect::<Vec<_>>(), [json!(4), json!(4)]);
    assert_eq!(trimmed.evals.len(), 4, "evals are never trimmed");
}

#[test]
fn modifiers_and_entry_flags() {
    let eo =
        run(&entry(&["dsr1-fp4-b200-trt"], ""), ProcessOptions { evals_only: true, ..Default::default() }).unwrap();
    assert!(eo.single_node.is_empty() && eo.evals.len() == 4);
    let all =
        run(&entry(&["dsr1-fp4-b200-trt"], ""), ProcessOptions { all_evals: true, ..Default::default() }).unwrap();
    assert_eq!(all.single_node["8k1k"].len(), 12, "CLI --all-evals alone keeps throughput");
    assert_eq!(all.evals.len(), 12);
    let entry_all = run(&entry(&["dsr1-fp4-b200-trt"], "  all-evals: true\n"), ProcessOptions::default()).unwrap();
    assert!(entry_all.single_node.is_empty() && entry_all.evals.len() == 12, "the entry field suppresses throughput");
    let agentic =
        run(&entry(&["glm5-*"], "  scenario-type:\n    - agentic-coding\n"), ProcessOptions::default()).unwrap();
    assert_eq!(agentic.single_node["agentic"].len(), 5);
    assert_eq!(agentic.multi_node["agentic"].len(), 5);
    assert_eq!(agentic.agentic_evals.len(), 1, "one GSM8K eval per model/runner/framework/precision");
    assert_eq!(agentic.multinode_agentic_evals.len(), 1, "only the topology with an eligible conc (30)");
    assert_eq!(agentic.multinode_agentic_evals[0]["eval-conc"], json!(30));
    let fixed_only =
        run(&entry(&["glm5-*"], "  scenario-type:\n    - fixed-seq-len\n"), ProcessOptions::default()).unwrap();
    assert!(fixed_only.all_rows().next().is_none(), "no fixed-seq-len scenario: no rows");
    let min_ep = run(
        &entry(&["dsr1-fp4-gb200-dynamo-sglang"], "  evals-only: true\n  eval-min-prefill-ep: 4\n"),
        ProcessOptions::default(),
    )
    .unwrap();
    assert_eq!(min_ep.multinode_evals.len(), 2);
    let min_ep8 = run(
        &entry(&["dsr1-fp4-gb200-dynamo-sglang"], "  evals-only: true\n  eval-min-prefill-ep: 8\n"),
        ProcessOptions::default(),
    )
    .unwrap();
    assert!(min_ep8.multinode_evals.is_empty());
}

#[test]
fn coverage_is_deduplicated_across_entries_per_scenario() {
    let twice = format!("{}{}", entry(&["glm5-fp8-b300-vllm-agentic"], ""), entry(&["glm5-*"], ""));
    let out = run(&twice, ProcessOptions::default()).unwrap();
    assert_eq!(out.single_node["agentic"].len(), 5, "the B300 config is generated once");
    assert_eq!(out.multi_node["agentic"].len(), 5);
    // all-evals entries are processed first, so their broad eval set wins.
    let order =
        format!("{}{}", entry(&["dsr1-fp4-b200-trt"], ""), entry(&["dsr1-fp4-b200-trt"], "  all-evals: true\n"));
    let out = run(&order, ProcessOptions::default()).unwrap();
    assert_eq!(out.evals.len(), 12);
    assert_eq!(out.single_node["8k1k"].len(), 12);
    let meta: Vec<bool> = out.changelog_metadata.entries.iter().map(|e| e["all-evals"].as_bool().unwrap()).collect();
    assert_eq!(meta, [false, true], "metadata keeps file order");
}

#[test]
fn default_eval_selection_is_scoped_to_one_generator_call() {
    let twin = "\ndsr1-fp4-b200-trt-low:\n  image: nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc6\n  model: nvidia/DeepSeek-R1-0528-FP4-v2\n  model-prefix: dsr1\n  runner: b200\n  precision: fp4\n  framework: trt\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 2, conc-list: [16, 32] }\n";
    let nvidia = format!("{NVIDIA}{twin}");
    let (base, head_one, head_two) = (
        tree(&nvidia, CHANGELOG),
        tree(&nvidia, &format!("{CHANGELOG}{}", entry(&["dsr1-fp4-b200-trt", "dsr1-fp4-b200-trt-low"], ""))),
        tree(
            &nvidia,
            &format!("{CHANGELOG}{}{}", entry(&["dsr1-fp4-b200-trt"], ""), entry(&["dsr1-fp4-b200-trt-low"], "")),
        ),
    );
    let tp2 = |out: &MatrixOutput| -> Vec<Value> {
        out.evals.iter().filter(|r| r["tp"] == json!(2)).map(|r| r["conc"].clone()).collect()
    };
    // One entry → one call: the group spans both configs ({16,32,64,128}: 64 and 128), tp2 gets none.
    assert!(tp2(&run_with(&base, &head_one, ProcessOptions::default()).unwrap()).is_empty());
    // Two entries → two calls: tp2's own group {16, 32} marks 32.
    assert_eq!(tp2(&run_with(&base, &head_two, ProcessOptions::default()).unwrap()), [json!(32)]);
}

const APPEND_ONLY: &str = "  append-only: true\n";

#[test]
fn append_only_delta_through_the_processor() {
    let base = tree(NVIDIA, CHANGELOG);
    let grown = NVIDIA.replace("{ tp: 8, ep: 8, dp-attn: true, spec-decoding: mtp, conc-list: [1, 8, 32, 128] }", "{ tp: 8, ep: 8, dp-attn: true, spec-decoding: mtp, conc-list: [1, 2, 8, 32, 128] }\n      - { tp: 4, ep: 4, dp-attn: true, spec-decoding: mtp, conc-list: [4, 8] }");
    let head = tree(&grown, &format!("{CHANGELOG}{}", entry(&["dsr1-fp4-b200-trt-mtp"], APPEND_ONLY)));
    let out = run_with(&base, &head, ProcessOptions::default()).unwrap();
    let points: Vec<(i64, i64)> =
        out.single_node["8k1k"].iter().map(|r| (r["tp"].as_i64().unwrap(), r["conc"].as_i64().unwrap())).collect();
    assert_eq!(points, [(8, 2), (4, 4), (4, 8)]);
    assert!(out.evals.is_empty(), "append-only entries run no evals");
    // Nothing new.
    let same = tree(NVIDIA, &format!("{CHANGELOG}{}", entry(&["dsr1-fp4-b200-trt-mtp"], APPEND_ONLY)));
    assert_eq!(
        run_with(&base, &same, ProcessOptions::default()).unwrap_err().to_string(),
        "append-only did not add any generated points"
    );
    // Removing a point.
    let shrunk = NVIDIA.replace("conc-list: [1, 8, 32, 128]", "conc-list: [1, 32, 128]");
    let head = tree(&shrunk, &format!("{CHANGELOG}{}", entry(&["dsr1-fp4-b200-trt-mtp"], APPEND_ONLY)));
    assert_eq!(
        run_with(&base, &head, ProcessOptions::default()).unwrap_err().to_string(),
        "append-only may not remove existing concurrency points: [8]"
    );
}

#[test]
fn append_only_scope_rules() {
    let base = tree(NVIDIA, CHANGELOG);
    let appended = format!("{CHANGELOG}{}", entry(&["dsr1-fp4-b200-trt-mtp"], APPEND_ONLY));
    let unrelated =
        NVIDIA.replace("{ tp: 4, conc-start: 4, conc-end: 128 }", "{ tp: 4, conc-start: 2, conc-end: 128 }");
    let e = run_with(&base, &tree(&unrelated, &appended), ProcessOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "append-only PR changed configs not selected by its changelog entry: ['dsr1-fp4-b200-trt']"
    );
    let image = NVIDIA.replacen("release:1.2.0rc6\n  model: nvidia/DeepSeek-R1-0528-FP4-v2\n  model-prefix: dsr1\n  runner: b200\n  precision: fp4\n  framework: trt\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, ep: 8, dp", "release:1.2.0rc7\n  model: nvidia/DeepSeek-R1-0528-FP4-v2\n  model-prefix: dsr1\n  runner: b200\n  precision: fp4\n  framework: trt\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, ep: 8, dp", 1);
    assert_ne!(image, NVIDIA);
    let e = run_with(&base, &tree(&image, &appended), ProcessOptions::default()).unwrap_err();
    assert_eq!(e.to_string(), "append-only may not remove or modify existing generated recipes");
    let new_key = format!("{CHANGELOG}{}", entry(&["dsr1-fp4-b200-trt-new"], APPEND_ONLY));
    let with_new = format!("{NVIDIA}\ndsr1-fp4-b200-trt-new:\n  image: i\n  model: m\n  model-prefix: dsr1\n  runner: b200\n  precision: fp4\n  framework: trt\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - {{isl: 8192, osl: 1024, search-space: [{{tp: 8, conc-list: [4]}}]}}\n");
    let e = run_with(&base, &tree(&with_new, &new_key), ProcessOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "append-only requires every selected config to exist in the base revision; missing: ['dsr1-fp4-b200-trt-new']"
    );
    let scoped = format!(
        "{CHANGELOG}{}",
        entry(&["glm5-fp8-b300-vllm-agentic"], "  append-only: true\n  scenario-type:\n    - agentic-coding\n")
    );
    let moved = NVIDIA
        .replace("  runner: cluster:b300-nv\n", "  runner: cluster:b300-nv\n  router: { name: r, version: \"1\" }\n");
    let e = run_with(&base, &tree(&moved, &scoped), ProcessOptions::default()).unwrap_err();
    assert_eq!(e.to_string(), "append-only may not remove or modify existing generated recipes");
    let missing_base = MemTree::new().with("perf-changelog.yaml", CHANGELOG);
    let e = run_with(&missing_base, &tree(NVIDIA, &appended), ProcessOptions::default()).unwrap_err();
    assert!(
        e.to_string().starts_with("append-only base revision is missing generation inputs: ['configs/amd-master.yaml'"),
        "{e}"
    );
}

#[test]
fn disjoint_scenario_entries_for_one_config_each_generate() {
    let both = NVIDIA.replace(
        "  scenarios:\n    agentic-coding:\n    - dram-utilization: 0.1065\n",
        "  scenarios:\n    fixed-seq-len:\n    - {isl: 8192, osl: 1024, search-space: [{tp: 8, conc-list: [16, 32]}]}\n    agentic-coding:\n    - dram-utilization: 0.1065\n",
    );
    assert_ne!(both, NVIDIA);
    let agentic = entry(&["glm5-fp8-b300-vllm-agentic"], "  all-evals: true\n  scenario-type:\n    - agentic-coding\n");
    let fixed = entry(&["glm5-fp8-b300-vllm-agentic"], "  scenario-type:\n    - fixed-seq-len\n");
    let head = tree(&both, &format!("{CHANGELOG}{agentic}{fixed}"));
    let out = run_with(&tree(&both, CHANGELOG), &head, ProcessOptions::default()).unwrap();
    assert_eq!(out.single_node["8k1k"].len(), 2, "fixed throughput from the second entry");
    assert!(!out.single_node.contains_key("agentic"), "the all-evals entry suppresses agentic throughput");
    assert_eq!(out.agentic_evals.len(), 5, "all-evals: every agentic point");
    assert_eq!(out.evals.len(), 1, "fixed evals still run (default subset: conc 32)");
}
