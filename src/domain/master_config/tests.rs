use super::*;

const SINGLE: &str = "\
a-fp8-h100-vllm:
  image: img:1
  model: org/a
  model-prefix: a
  runner: h100
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 8, conc-start: 4, conc-end: 64 }
";

const MULTI: &str = "\
b-fp4-gb200-dynamo-trt:
  image: img:2
  model: org/b
  model-prefix: b
  runner: gb200
  precision: fp4
  framework: dynamo-trt
  multinode: true
  disagg: true
  kv-p2p-transfer: nixl
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - conc-list: [8]
        prefill: { num-worker: 1, tp: 4, ep: 4, dp-attn: true }
        decode: { num-worker: 1, tp: 8, ep: 8, dp-attn: false }
";

fn load(files: &[(&str, &str)]) -> Result<MasterConfigs, MasterConfigError> {
    load_master_configs(files)
}

fn one(text: &str) -> Result<MasterConfig, MasterConfigError> {
    load(&[("configs/nvidia-master.yaml", text)]).map(|c| c.configs.into_values().next().unwrap())
}

/// The validation message of a config built by replacing `from` with `to` in `base`.
fn err_with(base: &str, from: &str, to: &str) -> String {
    assert!(base.contains(from), "fixture lacks {from:?}");
    match one(&base.replacen(from, to, 1)) {
        Ok(_) => panic!("expected an error after replacing {from:?} by {to:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn loads_both_topologies_in_file_order() {
    let configs = load(&[("configs/amd-master.yaml", MULTI), ("configs/nvidia-master.yaml", SINGLE)]).unwrap();
    assert_eq!(configs.keys().collect::<Vec<_>>(), ["b-fp4-gb200-dynamo-trt", "a-fp8-h100-vllm"]);
    let b = &configs.configs["b-fp4-gb200-dynamo-trt"];
    assert!(b.multinode && b.disagg);
    assert_eq!(b.file, "configs/amd-master.yaml");
    let FixedSpaces::Multi(spaces) = &b.fixed[0].search_space else { panic!("multinode spaces") };
    assert_eq!(spaces[0].prefill.pp, 1);
    assert_eq!(spaces[0].raw["prefill"]["tp"], 4);
    let a = &configs.configs["a-fp8-h100-vllm"];
    let FixedSpaces::Single(spaces) = &a.fixed[0].search_space else { panic!("single spaces") };
    assert_eq!(spaces[0].conc(), ConcFields { start: Some(4), end: Some(64), list: None });
    assert_eq!(a.pos.line, 1);
}

#[test]
fn file_level_errors() {
    let e = load(&[("configs/a.yaml", "- x\n")]).unwrap_err();
    assert!(e.to_string().contains("Config file 'configs/a.yaml' must contain a dictionary"), "{e}");
    let e = load(&[("configs/a.yaml", "")]).unwrap_err();
    assert!(e.to_string().contains("must contain a dictionary (found null)"), "{e}");
    let e = load(&[("configs/a.yaml", "dsr1-*: {}\n")]).unwrap_err();
    assert_eq!(e.to_string(), "configs/a.yaml:1:1:  Wildcard '*' is not allowed in master config keys: 'dsr1-*'");
    let e = load(&[("configs/amd-master.yaml", SINGLE), ("configs/nvidia-master.yaml", SINGLE)]).unwrap_err();
    assert_eq!(e.to_string(), "Duplicate configuration keys found in 'configs/nvidia-master.yaml': a-fp8-h100-vllm");
    let e = load(&[("configs/a.yaml", "k: {image: a}\nk: {image: b}\n")]).unwrap_err();
    assert!(e.to_string().contains("duplicate key 'k'"), "{e}");
    // Keys with '?' or '[' are allowed.
    assert!(one(&SINGLE.replace("a-fp8-h100-vllm:", "a?[x]:")).is_ok());
}

#[test]
fn errors_name_key_file_line_and_field() {
    let e = err_with(SINGLE, "{ tp: 8, conc-start: 4", "{ tp: 8, pp: 0, conc-start: 4");
    assert!(
        e.starts_with("Master config entry 'a-fp8-h100-vllm' failed validation:\nconfigs/nvidia-master.yaml:14:22: "),
        "{e}"
    );
    assert!(e.contains("scenarios.fixed-seq-len[0].search-space[0].pp"), "{e}");
    let e = err_with(SINGLE, "  framework: vllm\n", "  framework: vllm\n  trace-source: x\n");
    assert!(e.contains("unknown field `trace-source`"), "{e}");
    let e = err_with(SINGLE, "  runner: h100\n", "");
    assert!(e.contains("missing field `runner`"), "{e}");
    let e = err_with(SINGLE, "  multinode: false\n", "");
    assert!(e.contains("missing field `multinode`"), "{e}");
}

#[test]
fn lax_coercions_are_rejected() {
    for (from, to) in
        [("tp: 8", "tp: \"8\""), ("tp: 8", "tp: 8.0"), ("tp: 8", "tp: true"), ("conc-start: 4", "conc-start: \"4\"")]
    {
        let e = err_with(SINGLE, from, to);
        assert!(e.contains("expected an integer"), "{to}: {e}");
    }
    let e = err_with(MULTI, "dp-attn: true", "dp-attn: \"yes\"");
    assert!(e.contains("expected a boolean"), "{e}");
}

#[test]
fn conc_rule_messages() {
    let cases = [
        (
            "conc-start: 4, conc-end: 64",
            "conc-start: 4, conc-end: 64, conc-list: [4]",
            "Cannot specify both 'conc-list' list and 'conc-start'/'conc-end'. Use either a list or a range, not both.",
        ),
        (
            "conc-start: 4, conc-end: 64",
            "conc-start: 4",
            "Must specify either 'conc-list' list or both 'conc-start' and 'conc-end'.",
        ),
        (
            "conc-start: 4, conc-end: 64",
            "conc-list: []",
            "Must specify either 'conc-list' list or both 'conc-start' and 'conc-end'.",
        ),
        (
            "conc-start: 4, conc-end: 64",
            "conc-start: 0, conc-end: 64",
            "Input 'conc-start' and 'conc-end' must be greater than 0.",
        ),
        (
            "conc-start: 4, conc-end: 64",
            "conc-start: 65, conc-end: 64",
            "'conc-start' (65) must be <= 'conc-end' (64).",
        ),
        ("conc-start: 4, conc-end: 64", "conc-list: [4, 0]", "Input 'conc-list' entries must be greater than 0."),
    ];
    for (from, to, message) in cases {
        let e = err_with(SINGLE, from, to);
        assert!(e.ends_with(message), "{to}: {e}");
    }
    // Accepted oddities: a list with a lone start, and an empty list with a full range.
    assert!(one(&SINGLE.replace("conc-start: 4, conc-end: 64", "conc-list: [4], conc-start: 2")).is_ok());
    assert!(one(&SINGLE.replace("conc-start: 4, conc-end: 64", "conc-list: [], conc-start: 2, conc-end: 4")).is_ok());
}

#[test]
fn topology_rules() {
    assert!(err_with(SINGLE, "tp: 8,", "tp: 8, dcp-size: 3,").ends_with("'tp' (8) must be divisible by 'dcp-size' (3)"));
    let e = err_with(MULTI, "decode: { num-worker: 1, tp: 8", "decode: { num-worker: 1, tp: 8, dcp-size: 3");
    assert!(e.ends_with("'tp' (8) must be divisible by 'dcp-size' (3)"), "{e}");
    let e = err_with(MULTI, "prefill: { num-worker: 1,", "prefill: { hardware: gb200, num-worker: 1,");
    assert!(e.ends_with("'hardware' must be specified for both 'prefill' and 'decode', or neither"), "{e}");
    let e = err_with(MULTI, "decode: { num-worker: 1, tp: 8, ep: 8, ", "decode: { num-worker: 1, tp: 8, ");
    assert!(e.contains("missing field `ep`"), "{e}");
    // Single-node configs may not be disaggregated nor carry kv-p2p-transfer.
    assert!(err_with(SINGLE, "  multinode: false\n", "  multinode: false\n  disagg: true\n")
        .contains("Input should be False"));
    let e = err_with(SINGLE, "  multinode: false\n", "  multinode: false\n  kv-p2p-transfer: nixl\n");
    assert!(e.contains("Extra inputs are not permitted"), "{e}");
}

#[test]
fn component_metadata_scope() {
    let e = err_with(MULTI, "      - conc-list: [8]\n", "      - conc-list: [8]\n        kv-p2p-transfer: ucx\n");
    assert!(
        e.ends_with("kv-p2p-transfer must be declared either at the top level or in search-space entries, not both"),
        "{e}"
    );
    let e = err_with(MULTI, "  kv-p2p-transfer: nixl\n", "");
    assert!(e.ends_with("disagg=true requires kv-p2p-transfer at the top level or in every search-space entry"), "{e}");
    let with_router =
        SINGLE.replace("  multinode: false\n", "  multinode: false\n  router: { name: r, version: \"1\" }\n");
    let e = err_with(&with_router, "{ tp: 8,", "{ router: { name: r, version: \"2\" }, tp: 8,");
    assert!(e.ends_with("router must be declared either at the top level or in search-space entries, not both"), "{e}");
    let e = err_with(&with_router, "version: \"1\"", "version: \"image:foo\"");
    assert!(
        e.ends_with("component version must be a release, package version, or source commit, not an image reference"),
        "{e}"
    );
    let e = err_with(&with_router, "version: \"1\"", "version: \"1\", extra: 2");
    assert!(e.contains("unknown field `extra`"), "{e}");
    // Search-space-only transfer in every entry is fine.
    let per_entry = MULTI
        .replace("  kv-p2p-transfer: nixl\n", "")
        .replace("      - conc-list: [8]\n", "      - conc-list: [8]\n        kv-p2p-transfer: nixl\n");
    assert!(one(&per_entry).is_ok());
}

const AGENTIC: &str = "\
c-fp8-b300-vllm-agentic:
  image: img:3
  model: org/c
  model-prefix: c
  runner: cluster:b300-nv
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    agentic-coding:
    - dram-utilization: 0.8
      search-space:
      - { tp: 8, kv-offloading: dram, kv-offload-backend: { name: native }, conc-list: [4] }
";

#[test]
fn agentic_rules() {
    assert!(one(AGENTIC).is_ok());
    let e = err_with(AGENTIC, "cluster:b300-nv", "b300");
    assert!(e.ends_with("Agentic master configs must use a 'cluster:<name>' runner so every point runs on one exact hardware fleet."), "{e}");
    let e = err_with(AGENTIC, "    - dram-utilization: 0.8\n      search-space:", "    - search-space:");
    assert!(e.ends_with("kv-offloading='dram' requires dram-utilization with runner hardware metadata"), "{e}");
    let e = err_with(AGENTIC, "dram-utilization: 0.8", "dram-utilization: 1.5");
    assert!(e.contains("must be > 0 and <= 1"), "{e}");
    let e = err_with(AGENTIC, "kv-offloading: dram, kv-offload-backend: { name: native }", "kv-offloading: dram");
    assert!(e.ends_with("kv-offload-backend is required when kv-offloading is 'dram'"), "{e}");
    let e = err_with(AGENTIC, "kv-offloading: dram,", "kv-offloading: none,");
    assert!(e.ends_with("kv-offload-backend can only be set when kv-offloading is not 'none'"), "{e}");
    let e = err_with(AGENTIC, "kv-offloading: dram,", "");
    assert!(e.ends_with("kv-offload-backend requires kv-offloading"), "{e}");
    let e = err_with(AGENTIC, "{ tp: 8, kv-offloading: dram, kv-offload-backend: { name: native },", "{ tp: 8,");
    assert!(e.ends_with("Single-node agentic search-space entries must specify kv-offloading"), "{e}");
    let e = err_with(AGENTIC, "{ tp: 8,", "{ tp: 8, prefill: { num-worker: 1, tp: 4, ep: 1, dp-attn: false },");
    assert!(e.ends_with("Agentic search-space entries must specify either tp or both prefill and decode"), "{e}");
    let e = err_with(AGENTIC, "name: native }", "name: native, version: \"image:x\" }");
    assert!(e.contains("not an image reference"), "{e}");
    let e = err_with(AGENTIC, "name: native }", "name: native, trace-source: y }");
    assert!(e.contains("unknown field `trace-source`"), "{e}");
    let e =
        err_with(AGENTIC, "    - dram-utilization: 0.8\n", "    - dram-utilization: 0.8\n      trace-source: swe\n");
    assert!(e.contains("unknown field `trace-source`"), "doc drift: CONFIGS.md's trace-source is rejected: {e}");
    let e = err_with(AGENTIC, "{ tp: 8,", "{ tp: 8, kv-p2p-transfer: nixl,");
    assert!(e.ends_with("kv-p2p-transfer is only valid when multinode=true"), "{e}");
}

const MULTI_AGENTIC: &str = "\
d-fp4-gb300-dynamo-vllm-agentic:
  image: img:4
  model: org/d
  model-prefix: d
  runner: cluster:gb300-nv
  precision: fp4
  framework: dynamo-vllm
  multinode: true
  scenarios:
    agentic-coding:
    - search-space:
      - conc-list: [1]
        prefill: { num-worker: 1, tp: 8, ep: 1, dp-attn: false }
        decode: { num-worker: 0, tp: 8, ep: 1, dp-attn: false }
";

#[test]
fn multinode_agentic_strictness_and_shape() {
    assert!(one(MULTI_AGENTIC).is_ok());
    let e = err_with(MULTI_AGENTIC, "- conc-list: [1]\n", "- conc-list: [1]\n        pp: 1\n");
    assert!(e.ends_with("Multinode agentic search-space entries cannot specify 'pp', 'dcp-size', 'pcp-size'"), "{e}");
    // Top-level ep / dp-attn are accepted and ignored in this shape (parity, decision M11).
    assert!(one(
        &MULTI_AGENTIC.replace("- conc-list: [1]\n", "- conc-list: [1]\n        ep: 8\n        dp-attn: true\n")
    )
    .is_ok());
    // Decision M2: shape must match multinode (upstream crashes with KeyError in the generator).
    let e = err_with(AGENTIC, "  multinode: false\n", "  multinode: true\n");
    assert!(e.ends_with("multinode configs need agentic search-space entries with prefill and decode, not tp"), "{e}");
    let e = err_with(MULTI_AGENTIC, "  multinode: true\n", "  multinode: false\n");
    assert!(e.ends_with("single-node configs need agentic search-space entries with tp, not prefill/decode"), "{e}");
    let e = err_with(MULTI_AGENTIC, "- conc-list: [1]\n", "- conc-list: [1]\n        kv-offloading: null\n");
    assert!(e.contains("kv-offloading: null is not a mode"), "{e}");
}

#[test]
fn scenarios_need_one_non_empty_list() {
    // An empty list counts as missing, but another non-empty scenario is enough.
    assert!(one(&SINGLE.replace("    fixed-seq-len:\n", "    agentic-coding: []\n    fixed-seq-len:\n")).is_ok());
    let empty = "k:\n  image: i\n  model: m\n  model-prefix: p\n  runner: r\n  precision: p\n  framework: f\n  multinode: false\n  scenarios:\n    fixed-seq-len: []\n";
    let e = one(empty).unwrap_err().to_string();
    assert!(e.ends_with("At least one scenario type must be specified"), "{e}");
}

#[test]
fn diagnostics_carry_file_and_position() {
    let e = one(&SINGLE.replace("tp: 8,", "tp: 8, dcp-size: 3,")).unwrap_err();
    let d = e.diagnostic("configs/nvidia-master.yaml");
    assert_eq!(d.to_string(), "configs/nvidia-master.yaml:14:9: master config 'a-fp8-h100-vllm': scenarios.fixed-seq-len[0].search-space[0]: 'tp' (8) must be divisible by 'dcp-size' (3)");
}

#[test]
fn aug_2026_schema_rejects_newer_fields() {
    let e = err_with(SINGLE, "{ tp: 8,", "{ tp: 8, spec-decoding: eagle,");
    assert!(e.contains("unknown variant `eagle`"), "{e}");
    let e = err_with(SINGLE, "      osl: 1024\n", "      osl: 1024\n      dram-utilization: 0.5\n");
    assert!(e.contains("unknown field `dram-utilization`"), "{e}");
}

/// Newer master schema (upstream after Aug 2026): a single-node row names the srt-slurm recipe
/// it runs; multinode rows keep `CONFIG_FILE=` (decision U1).
#[test]
fn single_node_rows_name_their_srt_recipe() {
    let recipe = "benchmarks/single_node/srt-slurm-recipes/a/vllm/h100-fp8/8k1k.yaml";
    let c = one(&SINGLE.replace("{ tp: 8,", &format!("{{ tp: 8, srt-recipe: {recipe},"))).unwrap();
    let FixedSpaces::Single(spaces) = &c.fixed[0].search_space else { panic!("single-node") };
    assert_eq!(spaces[0].srt_recipe.as_deref(), Some(recipe));
    let agentic = one(&AGENTIC.replace("{ tp: 8,", &format!("{{ tp: 8, srt-recipe: {recipe},")));
    assert_eq!(agentic.unwrap().agentic[0].search_space[0].srt_recipe.as_deref(), Some(recipe));
    let e = err_with(SINGLE, "{ tp: 8,", "{ tp: 8, srt-recipe: '',");
    assert!(e.contains("search-space[0].srt-recipe") && e.ends_with("String should have at least 1 character"), "{e}");
    let e = err_with(MULTI_AGENTIC, "- conc-list: [1]\n", "- conc-list: [1]\n        srt-recipe: r.yaml\n");
    assert!(e.contains("srt-recipe is a single-node field"), "{e}");
}

#[test]
fn srt_recipe_rows_carry_parallelism_concurrency_and_kv_band() {
    let text = AGENTIC.replace("{ tp: 8,", "{ tp: 8, ep: 8, srt-recipe: r.yaml,");
    let rows = one(&text).unwrap().srt_recipe_rows();
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!((r.tp, r.ep, r.kv_offloading, r.kv_offload_backend.as_deref()), (8, 8, "dram", Some("native")));
    assert_eq!(
        (r.at.as_str(), r.recipe.as_str(), r.conc.list.clone()),
        ("scenarios.agentic-coding[0].search-space[0]", "r.yaml", Some(vec![4]))
    );
    assert!(one(AGENTIC).unwrap().srt_recipe_rows().is_empty(), "rows without a recipe are not listed");
}

/// Shaped like the Oct 2026 `dsv41flash-fp4-mi300x-vllm-agentic-dspark` entry: an aggregated
/// multinode agentic entry (decision TD3).
const AGGREGATED: &str = "\
e-fp4-mi300x-vllm-agentic:
  image: img:5
  model: org/e
  model-prefix: e
  runner: cluster:mi300x-amd
  precision: fp4
  framework: vllm
  multinode: true
  disagg: false
  scenarios:
    agentic-coding:
    - search-space:
      - spec-decoding: mtp
        kv-offloading: none
        conc-list: [3]
        num-nodes: 1
        worker:
          num-worker: 1
          tp: 8
          ep: 1
          dp-attn: false
          additional-settings:
          - CONFIG_FILE=recipes/e/vllm/mi300x-fp4/agentx/agg-variants.yaml:override_tp8_c3
";

#[test]
fn aggregated_multinode_entries_are_typed() {
    let c = one(AGGREGATED).unwrap();
    let space = &c.agentic[0].search_space[0];
    assert_eq!(space.num_nodes, Some(1));
    assert_eq!(space.worker.as_ref().map(|w| (w.num_worker, w.tp, w.pp)), Some((1, 8, 1)));
    let e = err_with(AGGREGATED, "        num-nodes: 1\n", "        num-nodes: 0\n");
    assert!(e.contains("num-nodes: Input should be greater than 0"), "{e}");
    let e = err_with(AGGREGATED, "        num-nodes: 1\n", "");
    assert!(e.ends_with("Aggregated agentic search-space entries must specify both worker and num-nodes"), "{e}");
    let e = err_with(
        AGGREGATED,
        "        num-nodes: 1\n",
        "        num-nodes: 1\n        prefill: { num-worker: 1, tp: 4, ep: 1, dp-attn: false }\n",
    );
    assert!(e.contains("cannot also specify tp, prefill or decode"), "{e}");
    let e = err_with(AGGREGATED, "          tp: 8\n", "          tp: eight\n");
    assert!(e.contains("worker.tp: expected an integer"), "{e}");
}

/// Decision TD1: read forward, an unknown field is carried with its position; a known field
/// with a bad value is still the entry's error.
#[test]
fn read_entry_carries_unknown_fields() {
    let text = AGGREGATED.replace("        num-nodes: 1\n", "        num-nodes: 1\n        trace-source: swe\n");
    let e = one(&text).unwrap_err().to_string();
    assert!(e.contains("unknown field `trace-source`"), "strict reading: {e}");
    let (configs, invalid) = read_master_configs(&[("configs/amd-master.yaml", &text)]).unwrap();
    assert!(invalid.is_empty(), "{invalid:?}");
    let c = &configs.configs["e-fp4-mi300x-vllm-agentic"];
    let unknown: Vec<String> = c.unknown.iter().map(|u| format!("{}:{}", u.pos, u.path)).collect();
    assert_eq!(unknown, ["17:9:scenarios.agentic-coding[0].search-space[0].trace-source"]);
    let bad =
        format!("{}{}", text.replace("e-fp4", "f-fp4").replace("  precision: fp4\n", "  precision: [fp4]\n"), text);
    let (configs, invalid) = read_master_configs(&[("configs/amd-master.yaml", &bad)]).unwrap();
    assert_eq!(configs.len(), 1);
    assert_eq!(invalid.len(), 1);
    assert!(invalid[0].to_string().contains("'f-fp4-mi300x-vllm-agentic'"), "{}", invalid[0]);
}
