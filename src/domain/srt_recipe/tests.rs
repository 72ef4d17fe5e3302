use serde_json::json;

use super::*;

fn recipe(text: &str) -> Recipe {
    Recipe::parse(text, "r.yaml").unwrap_or_else(|e| panic!("{e}"))
}

fn all(text: &str, selector: Option<&str>) -> Result<Vec<serde_json::Value>, RecipeError> {
    let selector = selector.map(Selector::parse).transpose()?;
    Ok(recipe(text).resolve(selector.as_ref())?.variants.iter().map(Variant::to_json).collect())
}

fn selectors(text: &str, selector: Option<&str>) -> Vec<String> {
    all(text, selector)
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .map(|v| v["selector"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn message(err: RecipeError) -> String {
    err.to_string()
}

const MULTI: &str = "\
base:
  name: demo
  resources: {gpu_type: gb200, prefill_nodes: 1, decode_nodes: 1}
  frontend: {type: dynamo, enable_multiple_frontends: true}
  backend:
    sglang_config:
      decode: {tp-size: 4, enable-dp-attention: true, mem: 0.8}
  benchmark: {type: sa-bench, concurrencies: \"4x8\"}
override_zeta: {benchmark: {isl: 1024}}
override_alpha:
  name: custom-alpha
  frontend: null
  backend: {sglang_config: {decode: {enable-dp-attention: null, new-flag: 1}}}
  extra_mount: [\"/a:/a\"]
zip_override_lowlat:
  resources: {decode_nodes: [1, 5, 5], decode_workers: [1, 5, 5]}
  benchmark: {concurrencies: [\"64x128\", \"8\", \"4x128\"]}
zip_override_b:
  name: [b-one, b-two]
  benchmark: {concurrencies: [[4, 8], [16]]}
unrelated_key: ignored
";

#[test]
fn enumeration_is_sorted_overrides_then_sorted_zip_groups_without_base() {
    assert_eq!(
        selectors(MULTI, None),
        [
            "override_alpha",
            "override_zeta",
            "zip_override_b[0]",
            "zip_override_b[1]",
            "zip_override_lowlat[0]",
            "zip_override_lowlat[1]",
            "zip_override_lowlat[2]"
        ]
    );
}

#[test]
fn deep_merge_replaces_deletes_and_appends_new_keys_last() {
    let v = all(MULTI, Some("override_alpha")).unwrap_or_default();
    let config = &v[0]["config"];
    assert_eq!(v[0]["name"], "custom-alpha");
    assert!(config.get("frontend").is_none(), "frontend: null deletes the block");
    assert_eq!(config["backend"]["sglang_config"]["decode"], json!({"tp-size": 4, "mem": 0.8, "new-flag": 1}));
    let keys: Vec<&String> = config.as_object().map(|m| m.keys().collect()).unwrap_or_default();
    assert_eq!(keys, ["name", "resources", "backend", "benchmark", "extra_mount"]);
}

#[test]
fn override_without_name_is_named_base_underscore_suffix() {
    let v = all(MULTI, Some("override_zeta")).unwrap_or_default();
    assert_eq!(v[0]["name"], "demo_zeta");
    assert_eq!(v[0]["config"]["benchmark"], json!({"type": "sa-bench", "concurrencies": "4x8", "isl": 1024}));
}

#[test]
fn zip_pairs_by_index_never_cartesian() {
    let v = all(MULTI, Some("zip_override_lowlat")).unwrap_or_default();
    assert_eq!(v.len(), 3);
    assert_eq!(
        v[1]["config"]["resources"],
        json!({"gpu_type": "gb200", "prefill_nodes": 1, "decode_nodes": 5, "decode_workers": 5})
    );
    assert_eq!(v[1]["config"]["benchmark"]["concurrencies"], "8");
    assert_eq!(v[2]["name"], "demo_lowlat_2");
}

#[test]
fn zip_name_list_is_used_verbatim_and_nested_lists_become_literal_lists() {
    let v = all(MULTI, Some("zip_override_b")).unwrap_or_default();
    assert_eq!(v[0]["name"], "b-one");
    assert_eq!(v[0]["config"]["benchmark"]["concurrencies"], json!([4, 8]));
    assert_eq!(v[1]["name"], "b-two");
    assert_eq!(v[1]["config"]["benchmark"]["concurrencies"], json!([16]));
}

#[test]
fn one_element_lists_broadcast_to_scalars() {
    let text = "base: {name: x}\nzip_override_g:\n  a: [1]\n  b: [10, 20]\n  c: 7\n";
    let v = all(text, None).unwrap_or_default();
    assert_eq!(v.len(), 2);
    assert_eq!(v[1]["config"], json!({"name": "x_g_1", "a": 1, "b": 20, "c": 7}));
}

#[test]
fn scalar_name_in_a_zip_group_is_replaced_by_the_generated_name() {
    let text = "base: {name: x}\nzip_override_g:\n  name: same\n  b: [1, 2]\n";
    let v = all(text, None).unwrap_or_default();
    assert_eq!((v[0]["name"].clone(), v[1]["name"].clone()), (json!("x_g_0"), json!("x_g_1")));
}

#[test]
fn null_list_element_deletes_the_key_in_that_variant_only() {
    let text = "base: {name: x, k: 1, m: 2}\nzip_override_g:\n  k: [null, 5]\n  m: [3, 4]\n";
    let v = all(text, None).unwrap_or_default();
    assert_eq!(v[0]["config"], json!({"name": "x_g_0", "m": 3}));
    assert_eq!(v[1]["config"], json!({"name": "x_g_1", "k": 5, "m": 4}));
}

#[test]
fn base_without_name_gives_unnamed() {
    let v = all("base: {a: 1}\noverride_x: {a: 2}\n", None).unwrap_or_default();
    assert_eq!(v[0]["name"], "unnamed_x");
}

#[test]
fn mismatched_zip_lengths_are_an_error_listing_the_lengths() {
    let err = all("base: {name: x}\nzip_override_g:\n  a: [1, 2]\n  b: {c: [1, 2, 3]}\n", None).err();
    let text = err.map(message).unwrap_or_default();
    assert!(text.contains("incompatible zip lengths [2, 3]"), "{text}");
    assert!(text.contains("b.c has 3 (line 4)"), "{text}");
    assert!(text.starts_with("r.yaml:2:1:"), "{text}");
}

#[test]
fn empty_or_listless_zip_groups_are_errors() {
    let empty = all("base: {name: x}\nzip_override_g:\n  a: []\n", None).err().map(message).unwrap_or_default();
    assert!(empty.contains("zip_override_g.a: an empty list cannot be zipped"), "{empty}");
    let none = all("base: {name: x}\nzip_override_g:\n  a: 1\n", None).err().map(message).unwrap_or_default();
    assert!(none.contains("contains no list values"), "{none}");
}

#[test]
fn structural_errors_are_located() {
    let base = all("base: [1]\noverride_x: {}\n", None).err().map(message).unwrap_or_default();
    assert_eq!(base, "r.yaml:1:7: 'base' must be a mapping, found a sequence");
    let section = all("base: {name: x}\noverride_x: 3\n", None).err().map(message).unwrap_or_default();
    assert!(section.starts_with("r.yaml:2:13: 'override_x' must be a mapping"), "{section}");
    let name = all("base: {name: [a]}\noverride_x: {}\n", None).err().map(message).unwrap_or_default();
    assert!(name.contains("base.name must be a string"), "{name}");
    assert!(Recipe::parse("", "e.yaml").is_err());
    assert!(Recipe::parse("- 1\n", "e.yaml").err().map(message).unwrap_or_default().contains("must be a mapping"));
}

#[test]
fn selectors_parse_like_srtctl() {
    assert_eq!(Selector::parse("base").ok(), Some(Selector::Base));
    assert_eq!(Selector::parse("override_tp64").ok(), Some(Selector::Override("override_tp64".into())));
    assert_eq!(Selector::parse("zip_override_g-1").ok(), Some(Selector::ZipGroup("zip_override_g-1".into())));
    assert_eq!(Selector::parse("zip_override_g[12]").ok(), Some(Selector::ZipIndex("zip_override_g".into(), 12)));
    assert_eq!(Selector::parse("*mtp?").ok(), Some(Selector::Glob("*mtp?".into())));
    assert_eq!(Selector::parse("override_x[0]").ok(), Some(Selector::Override("override_x[0]".into())));
    for bad in ["", "bases", "override_", "override_a b", "zip_override_g.x", "zip_override_g[x]", "other"] {
        assert!(matches!(Selector::parse(bad), Err(RecipeError::BadSelector(_))), "{bad:?} must be rejected");
    }
}

#[test]
fn recipe_ref_splits_on_the_last_colon() {
    let r = RecipeRef::parse("recipes/a:b.yaml:zip_override_g[1]").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.path, "recipes/a:b.yaml");
    assert_eq!(r.selector, Some(Selector::ZipIndex("zip_override_g".into(), 1)));
    assert_eq!(r.to_string(), "recipes/a:b.yaml:zip_override_g[1]");
    assert_eq!(RecipeRef::parse("x.yaml").map(|r| r.selector).ok(), Some(None));
    assert!(RecipeRef::parse(" :base").is_err());
    assert!(RecipeRef::parse("x.yaml:nonsense").is_err());
}

#[test]
fn selector_lookup_errors_name_the_available_keys() {
    let missing = all(MULTI, Some("override_nope")).err().map(message).unwrap_or_default();
    assert!(
        missing.ends_with("available: override_alpha, override_zeta, zip_override_b[i], zip_override_lowlat[i]"),
        "{missing}"
    );
    let range = all(MULTI, Some("zip_override_b[2]")).err().map(message).unwrap_or_default();
    assert!(range.contains("index [2] out of range for 'zip_override_b' (it has 2 variants, valid: 0-1)"), "{range}");
    let group = all(MULTI, Some("zip_override_c[0]")).err().map(message).unwrap_or_default();
    assert!(group.contains("available zip groups: zip_override_b[i], zip_override_lowlat[i]"), "{group}");
    let glob = all(MULTI, Some("*nothing*")).err().map(message).unwrap_or_default();
    assert!(glob.contains("no variants match '*nothing*'"), "{glob}");
}

#[test]
fn glob_matches_sorted_keys_and_expands_zip_groups_never_base() {
    assert_eq!(
        selectors(MULTI, Some("*a*")),
        [
            "override_alpha",
            "override_zeta",
            "zip_override_lowlat[0]",
            "zip_override_lowlat[1]",
            "zip_override_lowlat[2]"
        ]
    );
    assert_eq!(selectors(MULTI, Some("zip_override_[!l]*")), ["zip_override_b[0]", "zip_override_b[1]"]);
    assert_eq!(selectors(MULTI, Some("override_?eta")), ["override_zeta"]);
    assert!(all(MULTI, Some("*base*")).is_err());
}

#[test]
fn base_selector_and_plain_files() {
    let v = all(MULTI, Some("base")).unwrap_or_default();
    assert_eq!((v.len(), v[0]["selector"].clone(), v[0]["name"].clone()), (1, json!("base"), json!("demo")));
    let plain = recipe("name: p\nresources: {gpu_type: h100}\n");
    let resolved = plain.resolve(Some(&Selector::Base)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(resolved.variants.len(), 1);
    assert_eq!(resolved.variants[0].selector, "");
    assert_eq!(resolved.warnings, ["r.yaml: selector 'base' ignored: the recipe has no 'base' section"]);
}

#[test]
fn sweep_sections_are_recognised() {
    let r = recipe("base: {name: x}\noverride_s: {sweep: {conc: [1, 2]}}\noverride_t: {a: 1}\n");
    let flags: Vec<bool> =
        r.resolve(None).map(|res| res.variants.iter().map(Variant::has_sweep).collect()).unwrap_or_default();
    assert_eq!(flags, [true, false]);
}

#[test]
fn merged_values_keep_the_position_they_came_from() {
    let r = recipe("base:\n  name: x\n  a: 1\noverride_y:\n  a: 2\n");
    let v = r.resolve(None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(v.variants[0].config.get("a").map(|n| n.pos.line), Some(5));
    assert_eq!(
        v.variants[0].config.get("name").map(|n| n.pos.line),
        Some(4),
        "a synthesized name points at its section"
    );
}

#[test]
fn duplicate_keys_are_warnings_with_the_last_value() {
    let r = recipe("name: a\nname: b\n");
    assert_eq!(r.warnings.len(), 1);
    assert_eq!(r.root.get("name").and_then(Node::as_str), Some("b"));
}

#[test]
fn fnmatch_translation() {
    let m = |p: &str, s: &str| fnmatch_regex(p).is_match(s);
    assert!(m("a*", "abc") && m("a?c", "abc") && m("[ab]x", "bx") && m("[!ab]x", "cx"));
    assert!(!m("[!ab]x", "ax") && !m("A*", "abc") && !m("a", "ab"));
    assert!(m("a[", "a[") && m("a.b", "a.b") && !m("a.b", "axb"));
}

const FACTS: &str = "\
name: f
model: {path: dsr1, container: img, precision: nvfp4}
resources: {gpu_type: gb200, gpus_per_node: 4, prefill_nodes: 2, prefill_workers: 1, decode_nodes: 0, decode_workers: 2}
backend:
  type: sglang
  sglang_config:
    prefill: {tp_size: 8, ep-size: 8, enable-dp-attention: true}
    decode: {tensor-parallel-size: 8, speculative-algo: EAGLE}
benchmark: {type: sa-bench, isl: 8192, osl: 1024, concurrencies: 4x8x16}
";

#[test]
fn facts_follow_srtctl_derivations() {
    let facts = RecipeFacts::read(&recipe(FACTS).root, "r.yaml").unwrap_or_else(|e| panic!("{e}"));
    assert!(facts.is_disaggregated());
    assert_eq!(facts.gpus_per_worker(Role::Prefill), 8);
    assert_eq!(facts.gpus_per_worker(Role::Decode), 8, "decode_nodes: 0 inherits prefill's GPUs per worker");
    assert_eq!(facts.concurrencies, Some(vec![4, 8, 16]));
    let prefill = facts.engine(Role::Prefill).copied();
    assert_eq!(prefill.map(|e| (e.tp, e.ep, e.dp_attention, e.spec_decoding)), Some((8, 8, true, false)));
    assert_eq!(facts.engine(Role::Decode).map(|e| e.spec_decoding), Some(true), "argparse prefixes count");
    assert_eq!(facts.frontend, "dynamo");
    assert!(facts.topology_issues().is_empty());
}

#[test]
fn facts_type_errors_are_located() {
    let bad = FACTS.replace("isl: 8192", "isl: [8192]");
    let err = RecipeFacts::read(&recipe(&bad).root, "r.yaml").err().map(message).unwrap_or_default();
    assert_eq!(err, "r.yaml:9:34: benchmark.isl: expected an integer, found a sequence");
    let conc = FACTS.replace("concurrencies: 4x8x16", "concurrencies: 8");
    let err = RecipeFacts::read(&recipe(&conc).root, "r.yaml").err().map(message).unwrap_or_default();
    assert!(err.contains("Not a valid list"), "{err}");
    let conc = FACTS.replace("concurrencies: 4x8x16", "concurrencies: 4xx");
    assert!(RecipeFacts::read(&recipe(&conc).root, "r.yaml").is_err());
    let backend = FACTS.replace("type: sglang", "type: tgi");
    let err = RecipeFacts::read(&recipe(&backend).root, "r.yaml").err().map(message).unwrap_or_default();
    assert!(err.contains("backend.type 'tgi' is not one of"), "{err}");
    let tp = FACTS.replace("tp_size: 8", "tp_size: 0");
    assert!(RecipeFacts::read(&recipe(&tp).root, "r.yaml").is_err());
}

#[test]
fn trtllm_and_vllm_parallelism() {
    let trt = "backend:\n  type: trtllm\n  trtllm_config:\n    decode: {tensor_parallel_size: 4, pipeline_parallel_size: 2, moe_expert_parallel_size: 8, enable_attention_dp: true, speculative_config: {decoding_type: MTP}}\n";
    let facts = RecipeFacts::read(&recipe(trt).root, "r.yaml").unwrap_or_else(|e| panic!("{e}"));
    let e = facts.engine(Role::Decode).copied();
    assert_eq!(e.map(|e| (e.gpus(), e.ep, e.dp_attention, e.spec_decoding)), Some((8, 8, true, true)));
    let vllm = "backend:\n  type: vllm\n  vllm_config:\n    prefill: {tensor-parallel-size: 1, data-parallel-size: 8, enable-expert-parallel: true}\n";
    let facts = RecipeFacts::read(&recipe(vllm).root, "r.yaml").unwrap_or_else(|e| panic!("{e}"));
    let e = facts.engine(Role::Prefill).copied();
    assert_eq!(e.map(|e| (e.tp, e.gpus(), e.ep, e.dp_attention)), Some((1, 8, 8, true)));
}

#[test]
fn topology_preflight_matches_srtctl() {
    let issues = |resources: &str| {
        let text = format!("resources: {resources}\n");
        RecipeFacts::read(&recipe(&text).root, "r.yaml").map(|f| f.topology_issues()).unwrap_or_default()
    };
    assert!(issues("{agg_nodes: 1, prefill_nodes: 1}")[0]
        .contains("mixes disaggregated fields (prefill_nodes) with aggregated fields (agg_nodes)"));
    assert!(issues("{prefill_nodes: 1, decode_nodes: 1}")[0].contains("both 0/null"));
    assert!(issues("{prefill_nodes: 1, prefill_workers: 1, decode_nodes: 1}")[0].contains("decode_workers is 0"));
    assert_eq!(issues("{agg_nodes: 0, agg_workers: 0}").len(), 2);
    assert!(issues("{gpu_type: h100}")[0].contains("no topology"));
    assert!(issues("{agg_nodes: 1, agg_workers: 1}").is_empty());
}

fn lint_lines(text: &str) -> Vec<String> {
    lint(text, "r.yaml").iter().map(ToString::to_string).collect()
}

#[test]
fn lint_reports_structure_types_sweeps_and_ignored_keys() {
    assert!(
        lint_lines(MULTI).iter().all(|l| l.contains("warning: top-level key 'unrelated_key'")),
        "{:?}",
        lint_lines(MULTI)
    );
    assert_eq!(lint_lines(MULTI).len(), 1);
    assert_eq!(
        lint_lines("a: [\n"),
        ["r.yaml:2:1: invalid YAML: while parsing a node, did not find expected node content \
          (inside the `[` opened at line 1, column 4, which is not closed before line 2)"]
    );
    assert_eq!(
        lint_lines("name: x\noverride_a: {}\n"),
        ["r.yaml:2:1: 'override_a' needs a 'base' section; without one srtctl reads it as an unknown config field"]
    );
    let zip = lint_lines("base: {name: x}\nzip_override_g: {a: [1, 2], b: [1, 2, 3]}\n");
    assert!(zip.len() == 1 && zip[0].contains("incompatible zip lengths [2, 3]"), "{zip:?}");
    let sweep = lint_lines("base: {name: x}\noverride_s: {sweep: {c: [1]}}\n");
    assert!(sweep.len() == 1 && sweep[0].contains("warning: [override_s] has a 'sweep' section"), "{sweep:?}");
    let typed = lint_lines("base: {name: x}\nzip_override_g: {benchmark: {concurrencies: [8]}}\n");
    assert!(
        typed.len() == 1 && typed[0].starts_with("r.yaml:2:46: [zip_override_g[0]] benchmark.concurrencies"),
        "{typed:?}"
    );
    assert!(lint_lines("name: a\nname: b\n")[0].contains("warning: duplicate key 'name'"));
}

#[test]
fn variants_copying_an_alias_expanded_base_are_refused_before_copying() {
    // Found while fuzzing (docs/fuzzing.md): 2.5 KB, 1,000 zip variants × a 778,789-node base.
    let text = include_str!("../../../fixtures/fuzz-regressions/srt-zip-copies-aliased-base.yaml");
    let err = message(recipe(text).resolve(None).unwrap_err());
    assert!(err.starts_with("r.yaml:11:1: 'zip_override_y': its 1000 variant(s) of 778789 nodes each"), "{err}");
    assert!(lint_lines(text).iter().any(|l| l.contains("would take the recipe's variants past 1000000 nodes")));
    // The budget spans the whole resolution: four overrides of a 300,000-node base.
    let overrides = format!(
        "l: &l [{}]\nm: &m [{}]\nn: &n [{}]\nbase: {{name: n, big: [{}]}}\n\
         override_a: {{}}\noverride_b: {{}}\noverride_c: {{}}\noverride_d: {{}}\n",
        ["0"; 29].join(", "),
        ["*l"; 20].join(", "),
        ["*m"; 20].join(", "),
        ["*n"; 25].join(", ")
    );
    let err = message(recipe(&overrides).resolve(None).unwrap_err());
    assert!(err.starts_with("r.yaml:8:1: 'override_d': its 1 variant(s)"), "{err}");
    assert_eq!(selectors(&overrides, Some("override_c")), ["override_c"]);
}

#[test]
fn deep_merge_of_large_mappings_takes_linear_time() {
    // Found while fuzzing (docs/fuzzing.md): a scan per key made a 400 KB recipe (base and an
    // override of 20,000 keys each) take 7 s to lint.
    let keys: Vec<String> = (0..20_000).map(|i| format!("k{i}: {i}")).collect();
    let text = format!("base: {{{}}}\noverride_a: {{k1: null, {}, extra: x}}\n", keys.join(", "), keys[2..].join(", "));
    let started = std::time::Instant::now();
    let variants = all(&text, None).unwrap_or_else(|e| panic!("{e}"));
    let config = variants[0]["config"].as_object().cloned().unwrap_or_default();
    let names: Vec<&str> = config.keys().map(String::as_str).collect();
    assert_eq!(names.len(), 20_001);
    assert_eq!(
        (names[0], names[1], names[19_998], names[19_999], names[20_000]),
        ("k0", "k2", "k19999", "extra", "name")
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
}

fn facts_of(text: &str) -> Result<Vec<RecipeFacts>, RecipeError> {
    let r = recipe(text);
    r.resolve(None)?.variants.iter().map(|v| RecipeFacts::read(&v.config, "r.yaml")).collect()
}

/// Decision TD4, shaped like the Oct 2026 `dsr1/trtllm/b200-fp4/8k1k.yaml`: `engine` as a
/// mapping with `type`, the role's `args` read with that engine.
#[test]
fn schema2_engine_mapping_and_atom_string() {
    let trt = "base:\n  schema: 2\n  resources: {gpu_type: b200, gpus_per_node: 8}\n  engine:\n    type: trtllm\n    served_model_name: m\n  roles:\n    agg:\n      nodes: 1\n      workers: 1\n      gpus: 4\n      args: {backend: pytorch}\nzip_override_tp4:\n  roles:\n    agg:\n      args:\n        cuda_graph_config: {max_batch_size: [4, 8]}\n        tensor_parallel_size: 4\n        moe_expert_parallel_size: 1\n  benchmark:\n    env:\n      CONC: ['4', '8']\n";
    let facts = facts_of(trt).unwrap();
    assert_eq!(facts.len(), 2);
    assert_eq!(facts[0].backend, Backend::Trtllm);
    assert_eq!(facts[0].agg.map(|e| (e.tp, e.ep)), Some((4, 1)));
    assert!(lint_lines(trt).is_empty(), "{:?}", lint_lines(trt));
    // ATOM: tensor parallelism is the role's GPUs.
    let atom = "base:\n  schema: 2\n  engine: atom\n  roles:\n    agg: {nodes: 1, workers: 1, gpus: 4, args: {block-size: 16}}\nzip_override_tp8:\n  roles:\n    agg:\n      gpus: [4, 8]\n";
    let facts = facts_of(atom).unwrap();
    assert_eq!(
        facts.iter().map(|f| (f.backend, f.agg.map(|e| e.tp))).collect::<Vec<_>>(),
        [(Backend::Atom, Some(4)), (Backend::Atom, Some(8))]
    );
    let bad = trt.replace("    type: trtllm\n", "    type: [trtllm]\n");
    let lines = lint_lines(&bad);
    assert!(lines.iter().any(|l| l.contains("engine.type: expected a string naming the engine")), "{lines:?}");
}

/// A role may name its own engine (`glm5.3/tilert/…`); an engine sweepgate does not know is
/// read by name and warned about; the file's top-level `schema` applies to every variant.
#[test]
fn per_role_engines_unknown_engines_and_the_file_schema() {
    let text = "schema: 2\nbase:\n  name: t\n  roles:\n    prefill:\n      engine: {type: vllm}\n      args: {tensor-parallel-size: 8}\n    decode:\n      engine: tilert\n      args: {tp: 8}\noverride_a:\n  benchmark: {env: {CONC: '4'}}\n";
    let facts = facts_of(text).unwrap();
    assert!(facts[0].schema2, "the file's schema reaches the variant");
    assert_eq!(facts[0].backend, Backend::Vllm);
    assert_eq!(facts[0].prefill.map(|e| e.tp), Some(8));
    assert_eq!(facts[0].unknown_engines.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["tilert"]);
    let lines = lint_lines(text);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("r.yaml:9:15: warning: [override_a] engine 'tilert' is not one sweepgate knows"),
        "{lines:?}"
    );
    let colocated = "schema: 2\nengine: vllm\nroles:\n  prefill: {nodes: 1, workers: 1, gpus: 4}\n  decode: {nodes: colocate, workers: 1, gpus: 4}\n";
    let facts = facts_of(colocated).unwrap();
    assert_eq!(facts[0].decode_nodes, Some(0), "colocate is srtctl's decode_nodes: 0");
    let three = "schema: 3\nname: x\n";
    let lines = lint_lines(three);
    assert!(lines.iter().any(|l| l.contains("schema 3 is not one sweepgate reads (1 or 2)")), "{lines:?}");
}
