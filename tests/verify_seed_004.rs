//! Seed 004 (`../shared/reference/seeds/004_083d9f89cbc8b31f.txt`), the published REJECTED
//! verdict, reproduced row by row: `sweepgate verify` over `fixtures/bundles/seed-004` (the
//! seed's published facts as `collect` records them, its unreadable server-log tarball included)
//! gives the seed's 19 statuses, its header has the seed's three sentences, and the reasons of
//! Checks 2, 3, 13 and 18 name the seed's facts. `fixtures/bundles/seed-004-today` holds the same
//! facts in the layout of the Oct-Nov 2026 tree (issue 36, decision TD10) and must give the same.

use std::path::PathBuf;
use std::process::Command;

/// The seed's bundle, and the same story in the 2026-11 tree's layout.
const BUNDLES: [&str; 2] = ["seed-004", "seed-004-today"];

fn bundle(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/bundles").join(name)
}

fn verify(name: &str, extra: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(["verify", "--bundle"])
        .arg(bundle(name))
        .args(extra)
        .output()
        .expect("run sweepgate");
    assert!(!out.status.success(), "{name}: a REJECTED verdict exits 1");
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

fn verdict(name: &str) -> serde_json::Value {
    serde_json::from_str(&verify(name, &["--format", "json"])).expect("JSON verdict")
}

/// A check's English summary without Markdown escapes and code spans (the facts, not their markup).
fn summary(v: &serde_json::Value, id: u64) -> String {
    let check = v["checks"].as_array().and_then(|c| c.iter().find(|c| c["id"] == id)).expect("check row");
    check["summary"].as_str().unwrap_or_default().replace(['\\', '`', '\u{200b}'], "")
}

fn assert_names(name: &str, v: &serde_json::Value, id: u64, facts: &[&str]) {
    let text = summary(v, id);
    for fact in facts {
        assert!(text.contains(fact), "{name}: Check {id} does not name {fact:?}: {text}");
    }
}

/// The seed's rows, transcribed: "❌ Check 2 (Evals pass): FAIL", …, "➖ Check 17 …: N/A".
const SEED_STATUSES: [(u64, &str); 19] = [
    (0, "PASS"),
    (1, "PASS"),
    (2, "FAIL"),
    (3, "FAIL"),
    (4, "PASS"),
    (5, "PASS"),
    (6, "PASS"),
    (7, "PASS"),
    (8, "PASS"),
    (9, "PASS"),
    (10, "PASS"),
    (11, "PASS"),
    (12, "NA"),
    (13, "WARN"),
    (14, "PASS"),
    (15, "NA"),
    (16, "NA"),
    (17, "NA"),
    (18, "FAIL"),
];

#[test]
fn all_nineteen_statuses_equal_the_published_verdict() {
    for name in BUNDLES {
        let v = verdict(name);
        assert_eq!(v["verdict"], "REJECTED", "{name}");
        assert_eq!(v["head_sha"], "2803f36ac4e09aedaf5d18b84d436c9365acb4c3", "the seed's assessed commit");
        let got: Vec<(u64, String)> = v["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .map(|c| (c["id"].as_u64().unwrap_or(99), c["status"].as_str().unwrap_or_default().to_owned()))
            .collect();
        let want: Vec<(u64, String)> = SEED_STATUSES.iter().map(|(id, s)| (*id, (*s).to_owned())).collect();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn check_2_names_the_flag_job_artifact_scores_and_cohort() {
    for name in BUNDLES {
        let v = verdict(name);
        assert_names(
        name,
        &v,
        2,
        &[
            "Eval coverage of the AMD monokernel path could not be verified",
            "job 122910588567",
            "shows only the --monokernel-backend amd launch flag",
            "eval_server_logs_musespark_tp8_conc13_",
            "could not read",
            "A maintainer must confirm that line in the artifact",
            "Accuracy itself passes on the lmsysorg/sglang-rocm:muse-spark-open-1027 image",
            "gsm8k em_strict",
            "0.9773 (TP8 c13)",
            "0.9765 (TP4 c24)",
            "0.9780 (TP4 c40)",
            "within 2σ of their in-run siblings and of the exact ingested cohort (run 39179279826, run 39659301076)",
        ],
    );
    }
}

#[test]
fn check_18_names_the_removed_point_its_numbers_and_the_retune_deltas() {
    for name in BUNDLES {
        let v = verdict(name);
        assert_names(
            name,
            &v,
            18,
            &[
                "(g) removed point tp8 ep8",
                "c64 of run 39659301076",
                "32849.8 tok/s/GPU at interactivity 76.3",
                "extrapolation is not allowed",
                "(a)–(f) pass: the master conc lists, TP/EP and gpus overrides match the recipe",
                "TP8/EP8 c1–c13 with gpus: 8",
                "TP4/EP4 HiCache c10–c40 with gpus: 4",
                "c1 +19.9% tput / +49.0% interactivity",
                "c4 +12.0% tput / +43.1% interactivity",
                "c8 +2.7% tput / +52.1% interactivity",
            ],
        );
    }
}

#[test]
fn check_13_names_the_config_and_the_missing_provenance() {
    for name in BUNDLES {
        let v = verdict(name);
        assert_names(
            name,
            &v,
            13,
            &[
                "Draft precision could not be verified for musespark-fp4-mi355x-sglang-agentic-dflash (all points)",
                "NextN MoE",
                "provenance",
            ],
        );
    }
}

#[test]
fn the_blocking_header_has_three_sentences_in_both_languages() {
    for name in BUNDLES {
        let text = verify(name, &[]);
        let en = text.lines().find(|l| l.starts_with("@1am9trash: ")).expect("English blocking summary");
        assert!(en.starts_with("@1am9trash: three blocking issues on 2803f36. (1) "), "{en}");
        assert!(en.contains(" (2) ") && en.contains(" (3) ") && !en.contains("(4)"), "{en}");
        assert!(
            en.ends_with("(3) No log this verifier could read shows the AMD monokernel path running during the eval."),
            "{en}"
        );
        assert!(
            en.contains(
                "(2) A removed point of the published curve is still on the frontier, and no head point covers it."
            ),
            "{en}"
        );
        // Plain sentences, not check names.
        assert!(!en.contains("Check "), "{en}");
        let zh = text.lines().find(|l| l.starts_with("@1am9trash：")).expect("Chinese blocking summary");
        assert!(
            zh.contains("上有三个阻塞问题。（1）")
                && zh.contains("（2）")
                && zh.contains("（3）")
                && !zh.contains("（4）"),
            "{zh}"
        );
    }
}

/// Check 3(c) content coverage, per recipe variant: the seed's single-node rows name their
/// srt-slurm recipe, and the row names the uncovered settings of the TP4/EP4 HiCache variant
/// (c10–c40) with their values and the concurrencies that narrow them (decisions U3, U4).
#[test]
fn check_3_names_the_uncovered_hicache_settings() {
    for name in BUNDLES {
        let v = verdict(name);
        assert_names(
            name,
            &v,
            3,
            &[
                "TP4/EP4 HiCache",
                "47394",
                "MuseSparkOpen.mdx",
                "--chunked-prefill-size",
                "--mem-fraction-static",
                "SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION=1",
                "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True",
                "--cuda-graph-max-bs-decode",
                "--prefill-decode-interval",
                "--hicache-size 253 at c10–c24",
                "SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION=1 (c28–c40)",
                "the TP4/EP4 HiCache variant (c10–c40)",
                "--max-prefill-tokens 16384",
                "--cuda-graph-max-bs-decode 4–72",
                "--prefill-decode-interval 24–96",
                "--mem-fraction-static 0.86–0.96",
            ],
        );
        let header = verify(name, &[]);
        assert!(
            header.contains(
                "(1) The merged cookbook does not cover several production settings of the TP4/EP4 HiCache variant."
            ),
            "{header}"
        );
    }
}

/// Check 13 reads the draft checkpoint's own config.json (issue 17 item 4), the draft the
/// launcher serves (`--speculative-draft-model-path`); the bundle records it under its name.
#[test]
fn check_13_names_the_draft_checkpoint_precision() {
    for name in BUNDLES {
        let v = verdict(name);
        assert_names(name, &v, 13, &["RadixArk/Muse-Spark-Open-DFlash2", "bfloat16"]);
    }
}

/// Each row names the sub-rules that decided it (issue 23 item 3): the seed's three blocking
/// reasons are 2.e (the AMD monokernel path not proven served), 3.e-3.g (uncovered settings of
/// a recipe variant) and 18.g (a removed frontier point); PASS and N/A rows name none, and the
/// WARN of Check 13 names none because missing draft provenance is the human sub-rule 13.g.
#[test]
fn rows_name_the_subrules_that_decided_them() {
    for name in BUNDLES {
        let v = verdict(name);
        let rules: Vec<(u64, Vec<String>)> = v["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .map(|c| {
                let ids = c["rules"].as_array().expect("every row has rules");
                (c["id"].as_u64().unwrap_or(99), ids.iter().filter_map(|r| r.as_str().map(str::to_owned)).collect())
            })
            .filter(|(_, ids): &(u64, Vec<String>)| !ids.is_empty())
            .collect();
        let want = [(2, vec!["2.e"]), (3, vec!["3.e", "3.f", "3.g"]), (18, vec!["18.g"])];
        let want: Vec<(u64, Vec<String>)> =
            want.iter().map(|(id, ids)| (*id, ids.iter().map(|s| (*s).to_owned()).collect())).collect();
        assert_eq!(rules, want);
        let markdown = verify(name, &["--lang", "en"]);
        assert!(markdown.contains("Check 18 (Recipe/image/sweep consistency): FAIL (18.g) — "), "{markdown}");
    }
}

/// The seed-004 story in the 2026-11 layout (decision TD10) is read as that tree is: runners.yaml
/// has the `clusters` pool section and no `hardware`, the entry's `cluster:mi355x-amds` runner
/// resolves to its cluster, both rows run the native recipe at the tree's
/// `<model-prefix>/<engine>/<gpu>-<precision>-mtp/agentic.yaml` path, and the effective engine
/// settings come from that recipe's per-point variants.
#[test]
fn the_today_bundle_is_read_as_the_2026_11_tree() {
    let head = bundle("seed-004-today").join("head");
    let runners = std::fs::read_to_string(head.join("inferencex-e2e/configs/runners.yaml")).expect("runners.yaml");
    assert!(runners.contains("\nclusters:\n  b200-nb:") && !runners.contains("hardware:"), "{runners}");
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(["launch", "--format", "json", "--config", "musespark-fp4-mi355x-sglang-agentic-dflash", "--repo"])
        .arg(&head)
        .output()
        .expect("run sweepgate");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let model: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON launch model");
    let config = &model[0];
    assert_eq!(config["runners"], serde_json::json!(["mi355x-amds"]));
    assert_eq!(config["clusters"], serde_json::json!(["mi355x-amds"]));
    let recipe = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/musespark/sglang/mi355x-fp4-mtp/agentic.yaml";
    assert_eq!(config["recipes"], serde_json::json!([recipe, recipe]), "both rows run the native recipe");
    let settings = config["settings"].as_array().expect("settings");
    let engine = |name: &str, value: &str, variant: &str| {
        settings
            .iter()
            .any(|s| s["name"] == name && s["value"] == value && s["variant"] == variant && s["class"] == "engine")
    };
    assert!(engine("--monokernel-backend", "amd", "TP8/EP8"), "{settings:#?}");
    assert!(engine("--hicache-size", "253", "TP4/EP4 HiCache"), "{settings:#?}");
    assert!(engine("PYTORCH_HIP_ALLOC_CONF", "expandable_segments:True", "TP4/EP4 HiCache"), "{settings:#?}");
}
