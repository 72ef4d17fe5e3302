use serde_json::json;

use super::*;

const RECIPE: &str = "\
base:
  name: demo
  model: {path: dsr1-fp4, container: dynamo-sglang, precision: fp4}
  resources: {gpu_type: gb200, gpus_per_node: 4, prefill_nodes: 1, prefill_workers: 1, decode_nodes: 2, decode_workers: 1}
  backend:
    type: sglang
    sglang_config:
      prefill: {tensor-parallel-size: 4, expert-parallel-size: 4, enable-dp-attention: true}
      decode: {tensor-parallel-size: 8, expert-parallel-size: 8, enable-dp-attention: true}
  benchmark: {type: sa-bench, isl: 8192, osl: 1024, concurrencies: \"256x512\"}
override_tep:
  backend:
    sglang_config:
      decode: {expert-parallel-size: 1, enable-dp-attention: null}
  benchmark: {concurrencies: \"4x8\"}
zip_override_lowlat:
  resources: {decode_nodes: [2, 4], decode_workers: [2, 4]}
  backend: {sglang_config: {decode: {tensor-parallel-size: 4, expert-parallel-size: 1, enable-dp-attention: false}}}
  benchmark: {concurrencies: [\"1x2\", \"16\"]}
";

fn point(changes: serde_json::Value) -> Point {
    let mut row = json!({
        "image": "lmsysorg/sglang:v0.5.9", "model": "deepseek-ai/DeepSeek-R1", "model-prefix": "dsr1",
        "precision": "fp4", "framework": "dynamo-sglang", "runner": "gb200-nv", "isl": 8192, "osl": 1024,
        "spec-decoding": "none",
        "prefill": {"num-worker": 1, "tp": 4, "ep": 4, "dp-attn": true, "additional-settings": ["CONFIG_FILE=recipes/demo.yaml"]},
        "decode": {"num-worker": 1, "tp": 8, "ep": 8, "dp-attn": true},
        "conc": [256, 512], "max-model-len": 9472, "exp-name": "dsr1_8k1k", "disagg": true, "run-eval": false
    });
    if let (Some(row), Some(changes)) = (row.as_object_mut(), changes.as_object()) {
        for (k, v) in changes {
            row.insert(k.clone(), v.clone());
        }
    }
    Point::from_json(&row).unwrap_or_else(|e| panic!("{e}"))
}

fn recipe(text: &str) -> Recipe {
    Recipe::parse(text, "demo.yaml").unwrap_or_else(|e| panic!("{e}"))
}

fn pick(selector: Option<&str>, p: &Point) -> Result<Selected, SelectError> {
    let selector = selector.map(|s| Selector::parse(s).unwrap_or_else(|e| panic!("{e}")));
    select(&recipe(RECIPE), selector.as_ref(), p, Checks::default())
}

fn lowlat(i: usize) -> Point {
    let (workers, conc) = [(2, json!([1, 2])), (4, json!([16]))][i].clone();
    point(json!({
        "decode": {"num-worker": workers, "tp": 4, "ep": 1, "dp-attn": false},
        "conc": conc,
    }))
}

#[test]
fn without_a_selector_the_single_matching_variant_is_chosen() {
    let chosen = pick(None, &lowlat(1)).map(|s| s.variant.selector).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(chosen, "zip_override_lowlat[1]");
    let base_like = pick(None, &point(json!({})));
    assert!(matches!(base_like, Err(SelectError::NoMatch { .. })), "base is never a candidate: {base_like:?}");
}

#[test]
fn selection_by_concurrency_alone_separates_variants_of_equal_topology() {
    let tep = point(json!({"decode": {"num-worker": 1, "tp": 8, "ep": 1, "dp-attn": false}, "conc": [4, 8]}));
    assert_eq!(pick(None, &tep).map(|s| s.variant.selector).ok().as_deref(), Some("override_tep"));
    let err = pick(None, &point(json!({"decode": {"num-worker": 1, "tp": 8, "ep": 1, "dp-attn": false}, "conc": [3]})));
    let text = err.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(text.contains("override_tep: conc: the point has [3], the recipe has [4, 8]"), "{text}");
    assert!(text.contains("zip_override_lowlat[0]: conc:"), "{text}");
}

#[test]
fn no_match_lists_every_candidate_with_its_first_mismatch() {
    let err = pick(None, &point(json!({"isl": 1024}))).err();
    let Some(SelectError::NoMatch { candidates, .. }) = err else { panic!("expected NoMatch, got {err:?}") };
    let names: Vec<&str> = candidates.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(names, ["override_tep", "zip_override_lowlat[0]", "zip_override_lowlat[1]"]);
    assert!(candidates
        .iter()
        .all(|(_, why)| why.to_string().starts_with("isl: the point has 1024, the recipe has 8192")));
}

#[test]
fn several_matches_are_an_error_naming_them() {
    let twin = format!("{RECIPE}override_twin: {{benchmark: {{concurrencies: \"4x8\"}}, backend: {{sglang_config: {{decode: {{expert-parallel-size: 1, enable-dp-attention: null}}}}}}}}\n");
    let tep = point(json!({"decode": {"num-worker": 1, "tp": 8, "ep": 1, "dp-attn": false}, "conc": [4, 8]}));
    let err = select(&recipe(&twin), None, &tep, Checks::default()).err();
    assert!(
        matches!(&err, Some(SelectError::SeveralMatch { candidates, .. }) if candidates == &["override_tep", "override_twin"]),
        "{err:?}"
    );
}

#[test]
fn an_explicit_selector_must_yield_one_variant_that_matches() {
    assert!(pick(Some("zip_override_lowlat[0]"), &lowlat(0)).is_ok());
    let ambiguous = pick(Some("zip_override_lowlat"), &lowlat(0)).err();
    assert!(
        matches!(&ambiguous, Some(SelectError::Ambiguous { candidates, .. }) if candidates.len() == 2),
        "{ambiguous:?}"
    );
    let glob = pick(Some("*"), &lowlat(0)).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(glob.contains("yields 3 variants"), "{glob}");
    let wrong = pick(Some("zip_override_lowlat[1]"), &lowlat(0)).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(wrong.starts_with("demo.yaml:zip_override_lowlat[1]: the variant does not match the point:"), "{wrong}");
    assert!(
        wrong.contains("decode.num-worker: the point has 2, the recipe has 4 (resources.decode_workers at line 17)"),
        "{wrong}"
    );
}

#[test]
fn sweep_variants_are_refused() {
    let text = format!("{RECIPE}override_sweep: {{sweep: {{conc: [1, 2]}}}}\n");
    let err =
        select(&recipe(&text), Selector::parse("override_sweep").ok().as_ref(), &point(json!({})), Checks::default());
    assert!(matches!(err, Err(SelectError::Sweep { .. })), "{err:?}");
    let plain = select(&recipe("name: a\nsweep: {x: [1]}\n"), None, &point(json!({})), Checks::default());
    assert!(plain.err().map(|e| e.to_string()).unwrap_or_default().contains("'sweep' section"));
}

fn mismatch_fields(p: &Point, checks: Checks<'_>) -> Vec<String> {
    let r = recipe(RECIPE);
    let variant = r.resolve(Selector::parse("base").ok().as_ref()).map(|res| res.variants[0].clone());
    let variant = variant.unwrap_or_else(|e| panic!("{e}"));
    let facts = RecipeFacts::read(&variant.config, "demo.yaml").unwrap_or_else(|e| panic!("{e}"));
    check(p, &facts, &variant, checks).into_iter().map(|m| m.field).collect()
}

#[test]
fn every_point_field_is_checked() {
    assert!(mismatch_fields(&point(json!({})), Checks::default()).is_empty());
    let cases = [
        (json!({"osl": 2048}), "osl"),
        (json!({"conc": [256]}), "conc"),
        (json!({"conc": [256, 512, 1024]}), "conc"),
        (json!({"spec-decoding": "mtp"}), "spec-decoding"),
        (json!({"framework": "dynamo-trt"}), "framework"),
        (json!({"precision": "fp8"}), "precision"),
        (json!({"disagg": false}), "disagg"),
        (json!({"prefill": {"num-worker": 2, "tp": 4, "ep": 4, "dp-attn": true}}), "prefill.num-worker"),
        (json!({"prefill": {"num-worker": 1, "tp": 2, "ep": 4, "dp-attn": true}}), "prefill.tp"),
        (json!({"prefill": {"num-worker": 1, "tp": 4, "ep": 1, "dp-attn": true}}), "prefill.ep"),
        (json!({"decode": {"num-worker": 1, "tp": 8, "ep": 8, "dp-attn": false}}), "decode.dp-attn"),
    ];
    for (change, field) in cases {
        assert_eq!(mismatch_fields(&point(change.clone()), Checks::default()), [field], "{change}");
    }
}

#[test]
fn subset_rule_accepts_part_of_the_recipe_list() {
    let checks = Checks { pool: None, concurrency: ConcurrencyRule::Subset };
    assert!(mismatch_fields(&point(json!({"conc": [512]})), checks).is_empty());
    assert_eq!(mismatch_fields(&point(json!({"conc": [64]})), checks), ["conc"]);
    assert_eq!("subset".parse::<ConcurrencyRule>(), Ok(ConcurrencyRule::Subset));
    assert!("most".parse::<ConcurrencyRule>().is_err());
}

#[test]
fn precision_aliases_and_pipeline_parallel_points() {
    assert!(mismatch_fields(&point(json!({"precision": "NVFP4"})), Checks::default()).is_empty());
    let pp = json!({"decode": {"num-worker": 1, "tp": 4, "pp": 2, "ep": 8, "dp-attn": true}});
    assert!(mismatch_fields(&point(pp), Checks::default()).is_empty(), "tp 4 x pp 2 = 8 GPUs");
}

/// A pool with one model alias, `dsr1-fp4`.
#[derive(Debug, Clone)]
struct Pool {
    sku: &'static str,
    gpus_per_node: u32,
    models: Vec<&'static str>,
}

impl TargetPool for Pool {
    fn name(&self) -> &str {
        "p"
    }
    fn sku(&self) -> &str {
        self.sku
    }
    fn gpus_per_node(&self) -> u32 {
        self.gpus_per_node
    }
    fn knows_model(&self, path: &str) -> bool {
        self.models.contains(&path)
    }
}

fn pool(sku: &'static str, gpus_per_node: u32) -> Pool {
    Pool { sku, gpus_per_node, models: vec!["dsr1-fp4"] }
}

#[test]
fn the_pool_checks_sku_gpus_per_node_and_model_alias() {
    let good = pool("GB200", 4);
    assert!(mismatch_fields(&point(json!({})), Checks { pool: Some(&good), ..Checks::default() }).is_empty());
    let wrong = pool("h100", 8);
    assert_eq!(
        mismatch_fields(&point(json!({})), Checks { pool: Some(&wrong), ..Checks::default() }),
        ["pool.sku", "pool.gpus_per_node"]
    );
    let mut unknown = good.clone();
    unknown.models.clear();
    assert_eq!(
        mismatch_fields(&point(json!({})), Checks { pool: Some(&unknown), ..Checks::default() }),
        ["pool.models"]
    );
}

#[test]
fn aggregated_recipes_compare_prefill_with_agg_workers() {
    let text = "name: a\nmodel: {precision: fp8}\nresources: {gpu_type: h200, gpus_per_node: 8, agg_nodes: 2, agg_workers: 1}\n\
                backend:\n  type: vllm\n  vllm_config:\n    aggregated: {tensor-parallel-size: 8, pipeline-parallel-size: 2}\n\
                benchmark: {type: custom, command: run.sh}\n";
    let agg = point(json!({
        "precision": "fp8", "framework": "dynamo-vllm", "disagg": false, "conc": [4], "isl": null, "osl": null,
        "prefill": {"num-worker": 1, "tp": 8, "pp": 2, "ep": 1, "dp-attn": false},
        "decode": {"num-worker": 0, "tp": 8, "ep": 1, "dp-attn": false},
    }));
    let r = recipe(text);
    assert!(select(&r, None, &agg, Checks::default()).is_ok(), "a custom benchmark without CONC runs the point's conc");
    let with_conc = text.replace("command: run.sh", "command: run.sh, env: {CONC: '8'}");
    let err =
        select(&recipe(&with_conc), None, &agg, Checks::default()).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("conc: the point has [4], the recipe has [8]"), "{err}");
    let mut decode_workers = agg.clone();
    decode_workers.decode.num_worker = 1;
    let err = select(&r, None, &decode_workers, Checks::default()).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("decode.num-worker: the point has 1, the recipe has an aggregated recipe (0)"), "{err}");
}

#[test]
fn a_recipe_contradicting_itself_is_reported() {
    let text = RECIPE.replace("prefill: {tensor-parallel-size: 4,", "prefill: {tensor-parallel-size: 2,");
    let r = recipe(&text);
    let err = select(&r, Selector::parse("base").ok().as_ref(), &point(json!({})), Checks::default());
    let text = err.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(text.contains("recipe: prefill workers get 4 GPUs from resources but the engine flags use 2"), "{text}");
}

#[test]
fn config_file_comes_from_additional_settings() {
    let p = point(json!({}));
    assert_eq!(p.config_file().map(|r| r.path).ok().as_deref(), Some("recipes/demo.yaml"));
    let mut none = p.clone();
    none.prefill.additional_settings.clear();
    assert!(matches!(none.config_file(), Err(SelectError::NoConfigFile)));
    let mut two = p.clone();
    two.decode.additional_settings.push("CONFIG_FILE=recipes/other.yaml".into());
    assert!(two.config_file().err().map(|e| e.to_string()).unwrap_or_default().contains("several recipes"));
    let single_node = json!({"framework": "sglang", "precision": "fp8", "spec-decoding": "none", "conc": 4, "tp": 8});
    assert!(matches!(Point::from_json(&single_node), Err(SelectError::BadPoint(_))));
}

#[test]
fn candidates_resolve_once_and_serve_many_points() {
    let r = recipe(RECIPE);
    let candidates = Candidates::new(&r, None).unwrap_or_else(|e| panic!("{e}"));
    let chosen: Vec<String> = [lowlat(0), lowlat(1)]
        .iter()
        .map(|p| candidates.select(p, Checks::default()).map(|s| s.variant.selector).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    assert_eq!(chosen, ["zip_override_lowlat[0]", "zip_override_lowlat[1]"]);
    let bad_facts = recipe("base: {name: x}\noverride_a: {benchmark: {isl: [1]}}\n");
    let err = Candidates::new(&bad_facts, None).and_then(|c| c.select(&point(json!({})), Checks::default()));
    let text = err.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(text.contains("override_a: demo.yaml:2:31: benchmark.isl: expected an integer"), "{text}");
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut out = Vec::new();
    for entry in entries {
        let path = entry.unwrap_or_else(|e| panic!("{}: {e}", dir.display())).path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
    out
}

/// Layering (issue 16 item 5): the checks and the domain they read never depend on the
/// dispatcher; variant selection lives here so that Check 18 needs no `sweep` import.
#[test]
fn checks_and_domain_never_import_the_dispatcher() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    // Built from parts so that this file does not match itself.
    let needles = [concat!("crate::", "sweep"), concat!("sweepgate::", "sweep")];
    let mut offenders = Vec::new();
    for layer in ["checks", "domain"] {
        let files = rust_files(&src.join(layer));
        assert!(files.len() > 5, "src/{layer} has too few files: {files:?}");
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            for (n, line) in text.lines().enumerate() {
                if needles.iter().any(|needle| line.contains(needle)) {
                    offenders.push(format!("{}:{}: {line}", file.display(), n + 1));
                }
            }
        }
    }
    assert!(offenders.is_empty(), "layering: checks/ and domain/ import sweep/:\n{}", offenders.join("\n"));
}
