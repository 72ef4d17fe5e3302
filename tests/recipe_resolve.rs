//! `sweepgate recipe resolve`: output identical to srtctl's resolver for the fixture recipes
//! (expected files produced by srtctl 0.3.0 at c88ef731), and its errors.

use std::path::PathBuf;
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn resolve(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .current_dir(root())
        .args(["recipe", "resolve"])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run sweepgate: {e}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const DEMO: &str = "fixtures/repo/benchmarks/multi_node/srt-slurm-recipes";

#[test]
fn json_output_is_byte_identical_to_srtctl() {
    let cases = [
        ("fixtures/recipes/merge-rules.yaml".to_owned(), "merge-rules.json"),
        ("fixtures/recipes/merge-rules.yaml:*a*".to_owned(), "merge-rules.glob.json"),
        ("fixtures/recipes/merge-rules.yaml:base".to_owned(), "merge-rules.base.json"),
        ("fixtures/recipes/merge-rules.yaml:zip_override_auto[1]".to_owned(), "merge-rules.auto-1.json"),
        ("fixtures/recipes/two-matching.yaml".to_owned(), "two-matching.json"),
        ("fixtures/recipes/sweep.yaml".to_owned(), "sweep.json"),
        ("fixtures/recipes/duplicate-keys.yaml".to_owned(), "duplicate-keys.json"),
        (format!("{DEMO}/sglang/demo/disagg-1p1d.yaml"), "disagg-1p1d.json"),
        (format!("{DEMO}/trtllm/demo/zip-ctx-gen.yaml"), "zip-ctx-gen.json"),
        (format!("{DEMO}/trtllm/demo/zip-ctx-gen.yaml:zip_override_gen_sweep[2]"), "zip-ctx-gen.2.json"),
    ];
    for (arg, expected) in cases {
        let out = resolve(&[&arg, "--format", "json"]);
        assert!(out.status.success(), "{arg}: {}", text(&out.stderr));
        let want = std::fs::read_to_string(root().join("fixtures/recipes/expected").join(expected))
            .unwrap_or_else(|e| panic!("{expected}: {e}"));
        assert_eq!(text(&out.stdout), want, "{arg} differs from srtctl's {expected}");
    }
}

#[test]
fn text_output_lists_selectors_and_names() {
    let out = resolve(&[&format!("{DEMO}/sglang/demo/disagg-1p1d.yaml")]);
    assert!(out.status.success());
    insta::assert_snapshot!("resolve_text_disagg_1p1d", text(&out.stdout));
    let sweep = resolve(&["fixtures/recipes/sweep.yaml"]);
    insta::assert_snapshot!("resolve_text_sweep", text(&sweep.stdout));
}

#[test]
fn duplicate_keys_warn_on_stderr() {
    let out = resolve(&["fixtures/recipes/duplicate-keys.yaml"]);
    assert!(out.status.success());
    assert!(text(&out.stderr).contains(
        "warning: fixtures/recipes/duplicate-keys.yaml:10:3: duplicate key 'concurrencies' (first defined at line 9); the last value is used"
    ));
}

#[test]
fn resolution_errors_exit_1_with_a_located_message() {
    let cases = [
        (
            "fixtures/recipes/bad-zip-lengths.yaml",
            "bad-zip-lengths.yaml:5:1: 'zip_override_g': incompatible zip lengths [2, 3]",
        ),
        (
            "fixtures/recipes/empty-zip-list.yaml",
            "empty-zip-list.yaml:6:20: zip_override_g.benchmark.concurrencies: an empty list cannot be zipped",
        ),
        (
            "fixtures/recipes/merge-rules.yaml:zip_override_conc[2]",
            "index [2] out of range for 'zip_override_conc' (it has 2 variants, valid: 0-1)",
        ),
        (
            "fixtures/recipes/merge-rules.yaml:override_missing",
            "available: override_drop, override_named, zip_override_auto[i], zip_override_conc[i]",
        ),
        ("fixtures/recipes/merge-rules.yaml:not-a-selector", "invalid selector 'not-a-selector'"),
        ("fixtures/recipes/absent.yaml", "cannot read fixtures/recipes/absent.yaml"),
    ];
    for (arg, needle) in cases {
        let out = resolve(&[arg]);
        assert_eq!(out.status.code(), Some(1), "{arg}");
        assert!(text(&out.stderr).contains(needle), "{arg}: {}", text(&out.stderr));
        assert!(out.stdout.is_empty(), "{arg}: nothing on stdout");
    }
}

#[test]
fn a_non_utf8_recipe_is_refused() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let file = dir.path().join("bad.yaml");
    std::fs::write(&file, b"name: \xff\n").unwrap_or_else(|e| panic!("{e}"));
    let out = resolve(&[&file.display().to_string()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("not valid UTF-8"), "{}", text(&out.stderr));
}
