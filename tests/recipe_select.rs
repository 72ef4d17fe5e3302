//! `sweepgate recipe select` / `resolve --point`: one matrix point → exactly one variant, checked
//! against the point and the pool profile.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{json, Value};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sweepgate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run sweepgate: {e}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn worker(n: i64, tp: i64, ep: i64, dpa: bool, recipe: Option<&str>) -> Value {
    let mut w = json!({"num-worker": n, "tp": tp, "ep": ep, "dp-attn": dpa});
    if let (Some(recipe), Some(map)) = (recipe, w.as_object_mut()) {
        map.insert("additional-settings".into(), json!([format!("CONFIG_FILE={recipe}")]));
    }
    if let Some(map) = w.as_object_mut() {
        for key in ["pp", "dcp-size", "pcp-size"] {
            map.insert(key.into(), json!(1));
        }
    }
    w
}

/// A multinode fixed-seq-len row as the generator emits it for fixtures/repo's master config.
fn row(framework: &str, isl: i64, spec: &str, prefill: Value, decode: Value, conc: Value) -> String {
    json!({
        "image": "lmsysorg/sglang:v0.5.9-cu130", "model": "nvidia/DeepSeek-R1-0528-FP4-v2", "model-prefix": "dsr1",
        "precision": "fp4", "framework": framework, "runner": "gb200", "isl": isl, "osl": 1024,
        "spec-decoding": spec, "prefill": prefill, "decode": decode, "conc": conc,
        "max-model-len": isl + 1024 + 256, "exp-name": "dsr1_8k1k", "disagg": true, "run-eval": false,
        "kv-p2p-transfer": "nixl"
    })
    .to_string()
}

const SGLANG: &str = "recipes/sglang/demo/disagg-1p1d.yaml";
const TRT: &str = "recipes/trtllm/demo/zip-ctx-gen.yaml";

fn select(point: &str) -> Output {
    select_in("fixtures/repo", point)
}

fn select_in(repo: &str, point: &str) -> Output {
    sweepgate(&[
        "recipe",
        "select",
        "--repo",
        repo,
        "--pool",
        "pools/gb200-nv.toml",
        "--point",
        point,
        "--format",
        "json",
    ])
}

fn selected(out: &Output) -> (String, String) {
    assert!(out.status.success(), "{}", text(&out.stderr));
    let all: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"));
    let one = &all[0];
    assert_eq!(all.as_array().map(Vec::len), Some(1));
    (one["selector"].as_str().unwrap_or_default().to_owned(), one["name"].as_str().unwrap_or_default().to_owned())
}

/// The fixture's dep8 8k1k point (SGLang disaggregated, 1 prefill + 1 decode worker).
fn dep8_8k1k_point() -> String {
    row(
        "dynamo-sglang",
        8192,
        "none",
        worker(1, 4, 4, true, Some(SGLANG)),
        worker(1, 8, 8, true, None),
        json!([64, 128, 256]),
    )
}

#[test]
fn every_fixture_master_point_selects_one_variant() {
    let cases = [
        (dep8_8k1k_point(), "override_dep8_8k1k"),
        (
            row(
                "dynamo-sglang",
                8192,
                "none",
                worker(1, 4, 4, false, Some(SGLANG)),
                worker(1, 4, 1, false, None),
                json!([8, 16]),
            ),
            "override_tep4_8k1k",
        ),
        (
            row(
                "dynamo-sglang",
                1024,
                "none",
                worker(1, 4, 4, true, Some(SGLANG)),
                worker(1, 8, 8, true, None),
                json!([4, 8, 16, 32]),
            ),
            "override_dep8_1k1k",
        ),
        (
            row(
                "dynamo-trt",
                8192,
                "mtp",
                worker(1, 4, 4, true, Some(TRT)),
                worker(2, 8, 8, false, None),
                json!([8, 32]),
            ),
            "zip_override_gen_sweep[1]",
        ),
    ];
    for (point, want) in cases {
        assert_eq!(selected(&select(&point)).0, want, "{point}");
    }
}

#[test]
fn a_point_matching_no_variant_lists_every_candidate() {
    let point = row(
        "dynamo-sglang",
        8192,
        "none",
        worker(1, 4, 4, true, Some(SGLANG)),
        worker(1, 8, 8, true, None),
        json!([64, 128]),
    );
    let out = select(&point);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("select_no_match", text(&out.stderr));
}

#[test]
fn an_explicit_selector_is_checked_against_the_point() {
    let recipe = format!("{TRT}:zip_override_gen_sweep[0]");
    let point = row(
        "dynamo-trt",
        8192,
        "mtp",
        worker(1, 4, 4, true, Some(&recipe)),
        worker(2, 8, 8, false, None),
        json!([8, 32]),
    );
    let out = select(&point);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("select_selector_mismatch", text(&out.stderr));
    let group = format!("{TRT}:zip_override_gen_sweep");
    let point = row(
        "dynamo-trt",
        8192,
        "mtp",
        worker(1, 4, 4, true, Some(&group)),
        worker(2, 8, 8, false, None),
        json!([8, 32]),
    );
    let err = text(&select(&point).stderr);
    assert!(err.contains("selector 'zip_override_gen_sweep' is ambiguous: it yields 3 variants"), "{err}");
}

#[test]
fn the_pool_profile_must_fit_the_recipe() {
    let recipe = format!("{SGLANG}:override_dep8_8k1k");
    let point = row(
        "dynamo-sglang",
        8192,
        "none",
        worker(1, 4, 4, true, Some(&recipe)),
        worker(1, 8, 8, true, None),
        json!([64, 128, 256]),
    );
    let out =
        sweepgate(&["recipe", "select", "--repo", "fixtures/repo", "--pool", "pools/local.toml", "--point", &point]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("pool.sku: the pool has h100, the recipe has gb200"), "{err}");
    assert!(err.contains("pool.gpus_per_node: the pool has 8, the recipe has 4"), "{err}");
}

#[test]
fn point_and_repository_errors_are_explained() {
    let no_recipe =
        row("dynamo-sglang", 8192, "none", worker(1, 4, 4, true, None), worker(1, 8, 8, true, None), json!([8]));
    assert!(text(&select(&no_recipe).stderr).contains("the row has no CONFIG_FILE=… in additional-settings"));
    let elsewhere = row(
        "dynamo-sglang",
        8192,
        "none",
        worker(1, 4, 4, true, Some("recipes/h200/8k1k.yaml")),
        worker(1, 8, 8, true, None),
        json!([8]),
    );
    // The recipe a row runs is where its entry's launcher reads it: a row no entry runs has none.
    assert!(text(&select(&elsewhere).stderr)
        .contains("CONFIG_FILE=recipes/h200/8k1k.yaml: no multi-node master-config entry runs this recipe"));
    let single =
        json!({"framework": "sglang", "precision": "fp8", "spec-decoding": "none", "conc": 4, "tp": 8}).to_string();
    assert!(text(&select(&single).stderr).contains("not a multinode matrix row"));
    assert!(text(&select("{not json").stderr).contains("--point is not valid JSON"));
    let missing = sweepgate(&["recipe", "select", "--repo", "fixtures/repo"]);
    assert!(text(&missing.stderr).contains("select needs --point"));
}

#[test]
fn resolve_with_a_point_refuses_twins_and_sweeps() {
    let agg = |conc: Value| {
        json!({
            "precision": "fp8", "framework": "dynamo-sglang", "isl": 1024, "osl": 1024, "spec-decoding": "none",
            "conc": conc, "disagg": false,
            "prefill": {"num-worker": 1, "tp": 8, "ep": 1, "dp-attn": false},
            "decode": {"num-worker": 0, "tp": 8, "ep": 1, "dp-attn": false}
        })
        .to_string()
    };
    let twins = sweepgate(&["recipe", "resolve", "fixtures/recipes/two-matching.yaml", "--point", &agg(json!([4, 8]))]);
    assert_eq!(twins.status.code(), Some(1));
    assert!(
        text(&twins.stderr).contains("2 variants match the point (override_a, override_b)"),
        "{}",
        text(&twins.stderr)
    );
    let other = sweepgate(&["recipe", "resolve", "fixtures/recipes/two-matching.yaml", "--point", &agg(json!([64]))]);
    assert_eq!(text(&other.stdout).trim(), "override_other\ttwins_other");
    let subset = sweepgate(&[
        "recipe",
        "resolve",
        "fixtures/recipes/two-matching.yaml:override_a",
        "--point",
        &agg(json!([4])),
        "--conc-rule",
        "subset",
    ]);
    assert!(subset.status.success(), "{}", text(&subset.stderr));
    let sweep =
        sweepgate(&["recipe", "resolve", "fixtures/recipes/sweep.yaml:override_grid", "--point", &agg(json!([4]))]);
    assert!(
        text(&sweep.stderr).contains("override_grid: the variant has a 'sweep' section"),
        "{}",
        text(&sweep.stderr)
    );
    let fixed = sweepgate(&["recipe", "resolve", "fixtures/recipes/sweep.yaml", "--point", &agg(json!([4]))]);
    assert_eq!(text(&fixed.stdout).trim(), "override_fixed\tswept_fixed", "{}", text(&fixed.stderr));
}

#[test]
fn select_reports_the_recipes_reading_warnings() {
    let repo = tempfile::tempdir().unwrap();
    let copied = Command::new("cp").arg("-r").arg(root().join("fixtures/repo/.")).arg(repo.path()).status().unwrap();
    assert!(copied.success());
    let recipe = repo.path().join("benchmarks/multi_node/srt-slurm-recipes/sglang/demo/disagg-1p1d.yaml");
    let name = "  name: dsr1-fp4-gb200-1p1d-tp4-tp4-8k1k\n";
    let original = std::fs::read_to_string(&recipe).unwrap();
    std::fs::write(&recipe, original.replacen(name, &format!("{name}{name}"), 1)).unwrap();
    let out = select_in(repo.path().to_str().unwrap(), &dep8_8k1k_point());
    assert_eq!(selected(&out).0, "override_dep8_8k1k");
    let stderr = text(&out.stderr);
    assert!(stderr.starts_with("warning: ") && stderr.contains("disagg-1p1d.yaml"), "{stderr}");
}
