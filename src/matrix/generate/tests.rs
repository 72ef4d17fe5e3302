use super::*;
use crate::domain::master_config::load_master_configs;

const AMD: &str = include_str!("../../../fixtures/repo/configs/amd-master.yaml");
const NVIDIA: &str = include_str!("../../../fixtures/repo/configs/nvidia-master.yaml");
const RUNNERS: &str = include_str!("../../../fixtures/repo/configs/runners.yaml");

fn fixture() -> (MasterConfigs, Runners) {
    let configs =
        load_master_configs(&[("configs/amd-master.yaml", AMD), ("configs/nvidia-master.yaml", NVIDIA)]).unwrap();
    (configs, Runners::parse(RUNNERS, "configs/runners.yaml").unwrap())
}

fn keys(rows: &[Row]) -> Vec<&str> {
    rows.first().map(|r| r.keys().map(String::as_str).collect()).unwrap_or_default()
}

fn tc(keys: &[&str], common: &CommonOptions) -> Result<Vec<Row>, MatrixError> {
    let (configs, runners) = fixture();
    let options = TestConfigOptions { config_keys: keys.iter().map(|k| k.to_string()).collect(), ..Default::default() };
    test_config(&configs, &runners, &options, common)
}

fn no_evals() -> CommonOptions {
    CommonOptions { evals: EvalFlags { no_evals: true, ..Default::default() }, ..Default::default() }
}

fn concs(rows: &[Row]) -> Vec<Value> {
    rows.iter().map(|r| r["conc"].clone()).collect()
}

#[test]
fn geometric_range_always_ends_at_end() {
    assert_eq!(conc_range(4, 100, 2), [4, 8, 16, 32, 64, 100]);
    assert_eq!(conc_range(3, 3, 2), [3]);
    assert_eq!(conc_range(1, 64, 3), [1, 3, 9, 27, 64]);
    assert!(conc_range(5, 4, 2).is_empty());
}

#[test]
fn single_node_fixed_rows_shape_and_order() {
    let rows = tc(&["dsr1-fp8-mi355x-sglang"], &no_evals()).unwrap();
    assert_eq!(
        keys(&rows),
        [
            "image",
            "model",
            "model-prefix",
            "precision",
            "framework",
            "runner",
            "isl",
            "osl",
            "tp",
            "pp",
            "dcp-size",
            "pcp-size",
            "conc",
            "max-model-len",
            "ep",
            "dp-attn",
            "spec-decoding",
            "exp-name",
            "disagg",
            "run-eval"
        ]
    );
    // 1k1k: 4..64 (5 points), 8k1k: 5 points + [16, 32].
    assert_eq!(rows.len(), 12);
    assert_eq!(rows[0]["exp-name"], json!("dsr1_1k1k"));
    assert_eq!(rows[0]["max-model-len"], json!(2304));
    assert_eq!(rows[11]["ep"], json!(4));
    assert_eq!(rows[11]["dp-attn"], json!(true));
    assert_eq!(rows[0]["ep"], json!(1));
    // Non-named pair keeps the raw numbers in exp-name.
    let rows = tc(&["dsr1-fp4-b200-trt"], &no_evals()).unwrap();
    assert_eq!(rows.last().unwrap()["exp-name"], json!("dsr1_1024_8192"));
}

#[test]
fn multinode_fixed_rows_carry_raw_workers_and_metadata() {
    let rows = tc(&["dsr1-fp4-gb200-dynamo-sglang"], &no_evals()).unwrap();
    assert_eq!(rows.len(), 3, "one row per search-space entry, conc is the whole list");
    assert_eq!(
        keys(&rows),
        [
            "image",
            "model",
            "model-prefix",
            "precision",
            "framework",
            "runner",
            "isl",
            "osl",
            "spec-decoding",
            "prefill",
            "decode",
            "conc",
            "max-model-len",
            "exp-name",
            "disagg",
            "run-eval",
            "router",
            "kv-p2p-transfer"
        ]
    );
    assert_eq!(rows[0]["conc"], json!([64, 128, 256]));
    assert_eq!(rows[2]["conc"], json!([4, 8, 16, 32]));
    let prefill: Vec<&str> = rows[0]["prefill"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(prefill, ["num-worker", "tp", "ep", "dp-attn", "additional-settings", "pp", "dcp-size", "pcp-size"]);
    assert_eq!(rows[0]["router"], json!({"name": "dynamo-router", "version": "0.8.1"}));
    assert_eq!(rows[0]["kv-p2p-transfer"], json!("nixl"));
    let mtp = tc(&["dsr1-fp4-gb200-dynamo-trt-mtp"], &no_evals()).unwrap();
    assert_eq!(mtp[0]["kv-p2p-transfer"], json!("nixl"), "search-space transfer");
    assert_eq!(mtp[0]["spec-decoding"], json!("mtp"));
}

#[test]
fn agentic_rows_exp_names_and_dram() {
    let rows = tc(&["glm5-fp8-b300-vllm-agentic"], &no_evals()).unwrap();
    assert_eq!(
        keys(&rows),
        [
            "image",
            "model",
            "model-prefix",
            "precision",
            "framework",
            "runner",
            "tp",
            "pp",
            "dcp-size",
            "pcp-size",
            "ep",
            "dp-attn",
            "spec-decoding",
            "conc",
            "kv-offloading",
            "total-cpu-dram-gb",
            "duration",
            "exp-name",
            "scenario-type",
            "kv-offload-backend"
        ]
    );
    assert_eq!(rows[0]["exp-name"], json!("glm5_tp8_conc16_kvdram-native_spec-mtp"));
    // 2_063_837 MiB × 1 MiB × 0.1065 × 8/8 / 1e9 → 230.
    assert_eq!(rows[0]["total-cpu-dram-gb"], json!(230));
    assert_eq!(rows[2]["exp-name"], json!("glm5_tp4_conc1_kvnone"));
    assert_eq!(rows[2]["total-cpu-dram-gb"], json!(0));
    assert_eq!(concs(&rows[2..]), [json!(1), json!(4), json!(4)], "duplicate list values are kept");
    let mn = tc(&["glm5-fp4-gb300-dynamo-vllm-agentic"], &no_evals()).unwrap();
    assert_eq!(concs(&mn), [json!([10]), json!([30]), json!([1]), json!([2]), json!([4])]);
    assert_eq!(mn[0]["exp-name"], json!("glm5_p1x4ep4dpa_d4x4ep4_conc10_kvdram-native"));
    assert_eq!(mn[2]["exp-name"], json!("glm5_p1x2_d1x4_conc1"));
    // 860_160 MiB, u = 0.887, prefill 4 of 4 GPUs → 800 (spec 20 §5.6 check value).
    assert_eq!(mn[0]["total-cpu-dram-gb"], json!(800));
    assert_eq!(mn[0]["kv-p2p-transfer"], json!("nixl"));
    assert_eq!(mn[2]["kv-offloading"], json!("none"));
}

#[test]
fn dram_check_values_of_the_spec() {
    let (configs, _) = fixture();
    let config = configs.get("gptoss-fp4-mi355x-vllm-agentic").unwrap();
    let runners = |avail: i64, gpus: i64| {
        Runners::parse(
            &format!(
                "labels:\n  x: [x_0]\nhardware:\n  x: {{available-cpu-dram-mib: {avail}, gpus-per-node: {gpus}}}\n"
            ),
            "r.yaml",
        )
        .unwrap()
    };
    let block = &config.agentic[0];
    let (tp8, tp2) = (&block.search_space[0], &block.search_space[1]);
    // Capped at 2_861_022 MiB: 0.8 × 8/8 → 2399, 0.8 × 2/8 → 599.
    assert_eq!(agentic_dram_gb(block, tp8, "x", &runners(3_071_500, 8)).unwrap(), 2399);
    assert_eq!(agentic_dram_gb(block, tp2, "x", &runners(3_071_500, 8)).unwrap(), 599);
    let mut b = block.clone();
    b.dram_utilization = Some(0.887);
    let mut one_gpu = tp2.clone();
    one_gpu.tp = Some(1);
    assert_eq!(agentic_dram_gb(&b, &one_gpu, "x", &runners(860_160, 4)).unwrap(), 200);
    let e = agentic_dram_gb(block, tp8, "x", &runners(860_160, 4)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "tp=8 with pp=1 and pcp-size=1 requires 8 GPUs and exceeds gpus-per-node=4 for runner 'x'"
    );
    let e = agentic_dram_gb(block, tp8, "y", &runners(1, 4)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Runner 'y' requires 'available-cpu-dram-mib' in runner hardware metadata. Available hardware keys: x"
    );
}

#[test]
fn multinode_dram_worker_rules() {
    let (configs, _) = fixture();
    let config = configs.get("glm5-fp4-gb300-dynamo-vllm-agentic").unwrap();
    let block = &config.agentic[0];
    let mut space = block.search_space[0].clone();
    let runners = Runners::parse(
        "labels:\n  x: [x_0]\nhardware:\n  x: {available-cpu-dram-mib: 860_160, gpus-per-node: 4}\n",
        "r.yaml",
    )
    .unwrap();
    space.prefill.as_mut().unwrap().tp = 8;
    assert_eq!(agentic_dram_gb(block, &space, "x", &runners).unwrap(), 800, "whole nodes count as gpus-per-node");
    space.prefill.as_mut().unwrap().tp = 6;
    let e = agentic_dram_gb(block, &space, "x", &runners).unwrap_err();
    assert_eq!(e.to_string(), "worker tp*pp*pcp-size=6 spans multiple nodes but is not a multiple of gpus-per-node=4");
    space.prefill.as_mut().unwrap().tp = 3;
    let e = agentic_dram_gb(block, &space, "x", &runners).unwrap_err();
    assert_eq!(e.to_string(), "worker tp*pp*pcp-size=3 does not divide gpus-per-node=4 evenly");
}

#[test]
fn test_config_filters() {
    let (configs, runners) = fixture();
    let options = TestConfigOptions {
        config_keys: vec!["dsr1-fp8-mi355x-sglang".into()],
        conc: Some(vec![16, 999]),
        seq_lens: Some(vec![SeqLen::EightKOneK]),
    };
    let rows = test_config(&configs, &runners, &options, &no_evals()).unwrap();
    assert_eq!(concs(&rows), [json!(16), json!(16)]);
    // Runner node filter: the label itself is prepended when it matches.
    let common = CommonOptions { runner_node_filter: Some("mi355x-amds".into()), ..no_evals() };
    let options = TestConfigOptions {
        config_keys: vec!["gptoss-fp4-mi355x-vllm-agentic".into()],
        conc: Some(vec![2]),
        ..Default::default()
    };
    let rows = test_config(&configs, &runners, &options, &common).unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["runner"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "cluster:mi355x-amds",
            "mi355x-amds_0",
            "mi355x-amds_1",
            "cluster:mi355x-amds",
            "mi355x-amds_0",
            "mi355x-amds_1"
        ]
    );
    let common = CommonOptions { runner_node_filter: Some("nomatch".into()), ..no_evals() };
    assert!(test_config(&configs, &runners, &options, &common).unwrap().is_empty());
    // Scenario filter.
    let common = CommonOptions { scenario_types: Some(vec![ScenarioType::FixedSeqLen]), ..no_evals() };
    let options = TestConfigOptions { config_keys: vec!["glm5-*".into()], ..Default::default() };
    assert!(test_config(&configs, &runners, &options, &common).unwrap().is_empty());
}

#[test]
fn empty_conc_list_with_a_range_differs_by_path() {
    let text = NVIDIA.replace("{ tp: 8, conc-list: [32] }", "{ tp: 8, conc-list: [], conc-start: 2, conc-end: 4 }");
    let configs = load_master_configs(&[("configs/nvidia-master.yaml", &text)]).unwrap();
    let runners = Runners::parse(RUNNERS, "r").unwrap();
    let options = TestConfigOptions { config_keys: vec!["dsr1-fp4-b200-trt".into()], ..Default::default() };
    let rows = test_config(&configs, &runners, &options, &no_evals()).unwrap();
    assert!(rows.iter().all(|r| r["isl"] == json!(8192)), "test-config: the empty list gives no rows");
    let full = FullSweepOptions { model_prefix: Some(vec!["dsr1-fp4-b200-trt".into()]), ..Default::default() };
    let rows = full_sweep(&configs, &runners, &full, &no_evals()).unwrap();
    let odd: Vec<Value> = rows.iter().filter(|r| r["isl"] == json!(1024)).map(|r| r["conc"].clone()).collect();
    assert!(odd.contains(&json!(2)) && odd.contains(&json!(4)), "full-sweep: the range is used");
}

#[test]
fn config_key_globs_and_errors() {
    let (configs, _) = fixture();
    let k = |p: &[&str]| expand_config_keys(&p.iter().map(|s| s.to_string()).collect::<Vec<_>>(), &configs);
    assert_eq!(k(&["dsr1-fp4-b200-trt?mtp"]).unwrap(), ["dsr1-fp4-b200-trt-mtp"]);
    assert_eq!(
        k(&["glm5-*", "glm5-fp8-b300-vllm-agentic"]).unwrap(),
        ["glm5-fp8-b300-vllm-agentic", "glm5-fp4-gb300-dynamo-vllm-agentic"]
    );
    assert_eq!(k(&["dsr1-fp[48]-mi355x-*"]).unwrap(), ["dsr1-fp8-mi355x-sglang"]);
    let e = k(&["zzz*"]).unwrap_err().to_string();
    assert!(e.starts_with("Pattern 'zzz*' matched no config keys.\nAvailable keys: dsr1-fp4-b200-trt, "), "{e}");
    let e = k(&["nope"]).unwrap_err().to_string();
    assert!(e.starts_with("Config key(s) not found: nope.\nAvailable keys: "), "{e}");
}

#[test]
fn eval_flag_combinations() {
    let both = CommonOptions {
        evals: EvalFlags { no_evals: true, all_evals: true, ..Default::default() },
        ..Default::default()
    };
    assert_eq!(
        tc(&["dsr1-fp4-b200-trt"], &both).unwrap_err().to_string(),
        "--all-evals cannot be combined with --no-evals"
    );
    let rows = tc(&["dsr1-fp4-b200-trt"], &CommonOptions::default()).unwrap();
    let evals: Vec<(i64, i64)> = rows
        .iter()
        .filter(|r| r["run-eval"] == json!(true))
        .map(|r| (r["tp"].as_i64().unwrap(), r["conc"].as_i64().unwrap()))
        .collect();
    // 8k1k concs 4..128 → eligible {16, 32, 64, 128}: median 64, max 128, for both TPs.
    assert_eq!(evals, [(4, 64), (4, 128), (8, 64), (8, 128)]);
    let only = CommonOptions { evals: EvalFlags { evals_only: true, ..Default::default() }, ..Default::default() };
    let rows = tc(&["dsr1-fp4-b200-trt"], &only).unwrap();
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r["eval-only"] == json!(true)));
    let all = CommonOptions { evals: EvalFlags { all_evals: true, ..Default::default() }, ..Default::default() };
    let rows = tc(&["dsr1-fp4-b200-trt"], &all).unwrap();
    assert_eq!(rows.len(), 12, "every 8k1k point; the 1024_8192 row is dropped");
}

#[test]
fn full_sweep_filters() {
    let (configs, runners) = fixture();
    let run = |o: FullSweepOptions| full_sweep(&configs, &runners, &o, &no_evals()).unwrap();
    let all = run(FullSweepOptions::default());
    assert_eq!(all.len(), 12 + 7 + 13 + 4 + 3 + 1 + 5 + 5);
    // --model-prefix matches the config key, not the model-prefix field.
    assert!(run(FullSweepOptions { model_prefix: Some(vec!["dsr1".into()]), ..Default::default() })
        .iter()
        .all(|r| r["model-prefix"] == json!("dsr1")));
    assert!(run(FullSweepOptions { model_prefix: Some(vec!["gptoss-fp4".into()]), ..Default::default() }).len() == 7);
    // Range start shifts to --min-conc; the geometric series restarts from it.
    let o = FullSweepOptions {
        model_prefix: Some(vec!["dsr1-fp8".into()]),
        seq_lens: Some(vec![SeqLen::OneKOneK]),
        min_conc: Some(5),
        ..Default::default()
    };
    assert_eq!(concs(&run(o)), [json!(5), json!(10), json!(20), json!(40), json!(64)]);
    // --max-conc below every list value uses max-conc itself; --max-ep clamps ep.
    let o = FullSweepOptions {
        model_prefix: Some(vec!["dsr1-fp8".into()]),
        seq_lens: Some(vec![SeqLen::EightKOneK]),
        max_conc: Some(2),
        max_ep: Some(2),
        ..Default::default()
    };
    let rows = run(o);
    assert_eq!(concs(&rows), [json!(2), json!(2)]);
    assert_eq!(rows[1]["ep"], json!(2));
    let o = FullSweepOptions { max_tp: Some(4), single_node: true, ..Default::default() };
    let rows = run(o);
    let fixed = rows.iter().filter(|r| !r.contains_key("scenario-type"));
    assert!(fixed.clone().count() > 0 && fixed.clone().all(|r| r["tp"].as_i64().unwrap() <= 4));
    assert!(rows.iter().any(|r| r["tp"] == json!(8) && r.contains_key("scenario-type")), "agentic ignores --max-tp");
    let o = FullSweepOptions { multi_node: true, ..Default::default() };
    assert!(run(o).iter().all(|r| r.contains_key("prefill")));
    let o = FullSweepOptions { runner_type: Some(vec!["b300".into()]), ..Default::default() };
    let e = full_sweep(&configs, &runners, &o, &no_evals()).unwrap_err().to_string();
    assert!(e.starts_with("Invalid runner type(s): {'b300'}. Valid runner types are: b200, cluster:b300-nv"), "{e}");
    // Node filter in full-sweep uses nodes only (never the label).
    let common = CommonOptions { runner_node_filter: Some("b200-nb".into()), ..no_evals() };
    let rows = full_sweep(&configs, &runners, &FullSweepOptions::default(), &common).unwrap();
    assert!(!rows.is_empty() && rows.iter().all(|r| r["runner"] == json!("b200-nb_0")));
    let bad = FullSweepOptions { step_size: 1, ..Default::default() };
    assert_eq!(
        full_sweep(&configs, &runners, &bad, &no_evals()).unwrap_err().to_string(),
        "--step-size must be greater than 1"
    );
    let bad = FullSweepOptions { min_conc: Some(8), max_conc: Some(4), ..Default::default() };
    assert!(full_sweep(&configs, &runners, &bad, &no_evals()).is_err());
}

#[test]
fn explicit_null_hides_top_level_metadata() {
    let text = NVIDIA.replace(
        "      - conc-list: [8, 16]\n",
        "      - conc-list: [8, 16]\n        router: null\n        kv-p2p-transfer: null\n",
    );
    let configs = load_master_configs(&[("configs/nvidia-master.yaml", &text)]);
    // disagg=true needs a transfer in every entry when the top level has one; the top level has one here.
    let configs = configs.unwrap();
    let runners = Runners::parse(RUNNERS, "r").unwrap();
    let options = TestConfigOptions { config_keys: vec!["dsr1-fp4-gb200-dynamo-sglang".into()], ..Default::default() };
    let rows = test_config(&configs, &runners, &options, &no_evals()).unwrap();
    assert!(rows[0].contains_key("router") && rows[0].contains_key("kv-p2p-transfer"));
    assert!(!rows[1].contains_key("router") && !rows[1].contains_key("kv-p2p-transfer"), "null hides the top level");
}

/// Issue 24: a 100k-value `conc-list` made a 200,017-point sweep (7.5 GB) before anything
/// counted it. With a bound the generator stops before building the row past it.
#[test]
fn the_row_bound_stops_the_generator_and_is_named() {
    let all = tc(&["dsr1-fp8-mi355x-sglang"], &no_evals()).unwrap();
    assert!(all.len() > 2);
    let exact = CommonOptions { max_rows: Some(all.len()), ..no_evals() };
    assert_eq!(tc(&["dsr1-fp8-mi355x-sglang"], &exact).unwrap().len(), all.len(), "the bound itself is allowed");
    let below = CommonOptions { max_rows: Some(all.len() - 1), ..no_evals() };
    let err = tc(&["dsr1-fp8-mi355x-sglang"], &below).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "the matrix has more than {} rows: a sweep runs at most {} points (MAX_POINTS); split the change",
            all.len() - 1,
            all.len() - 1
        )
    );
}

/// Decision TD3, shaped like the Oct 2026 `dsv41flash-fp4-mi300x-vllm-agentic-dspark` entry: an
/// aggregated multinode entry gives one row per runner and concurrency with its `worker` and
/// `num-nodes`; the DRAM budget comes from the runner's cluster (decision TD2).
#[test]
fn aggregated_multinode_rows_carry_worker_and_num_nodes() {
    let text = "\
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
    - dram-utilization: 0.5
      search-space:
      - spec-decoding: mtp
        kv-offloading: dram
        kv-offload-backend: {name: native}
        conc-list: [3, 8]
        num-nodes: 1
        worker: {num-worker: 2, tp: 4, ep: 1, dp-attn: false}
";
    let configs = load_master_configs(&[("configs/amd-master.yaml", text)]).unwrap();
    let runners = Runners::parse(
        "labels:\n  cluster:mi300x-amd: [mi300x-amd_00]\nclusters:\n  mi300x-amd: {gpus-per-node: 8, available-cpu-dram-mib: 1_547_820}\n",
        "r.yaml",
    )
    .unwrap();
    let options = TestConfigOptions { config_keys: vec!["e-fp4-mi300x-vllm-agentic".into()], ..Default::default() };
    let rows = test_config(&configs, &runners, &options, &no_evals()).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["exp-name"], json!("e_w2x4_n1_conc3_kvdram-native"));
    assert_eq!(rows[0]["num-nodes"], json!(1));
    assert_eq!(rows[0]["worker"]["tp"], json!(4));
    assert_eq!(rows[0]["worker"]["pp"], json!(1));
    assert_eq!(rows[1]["conc"], json!([8]));
    // 1,547,820 MiB × 0.5 × 4 of 8 GPUs.
    assert_eq!(rows[0]["total-cpu-dram-gb"], json!(405));
    let normalized = crate::matrix::output::normalize(&rows[0]);
    assert!(normalized.contains_key("worker") && normalized.contains_key("num-nodes"), "{normalized:?}");
}
