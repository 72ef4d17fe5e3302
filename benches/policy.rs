//! Policy-parser timings (run manually: `cargo bench --bench policy`). Reads the real upstream
//! files when `SWEEPGATE_ACCEPTANCE_DIR` or /work/shared/acceptance is present, else fixtures.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use sweepgate::domain::checklist_template::ChecklistTemplate;
use sweepgate::domain::codeowners::Codeowners;
use sweepgate::domain::models_md::ModelsMd;
use sweepgate::intake::signoff::{match_template, Signoff};

/// `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without it, and
/// then every measurement runs once as a smoke test.
fn quick() -> bool {
    !std::env::args().any(|a| a == "--bench")
}

fn time<T>(label: &str, iterations: u32, mut f: impl FnMut() -> T) {
    let iterations = if quick() { 1 } else { iterations };
    let start = Instant::now();
    for _ in 0..iterations {
        black_box(f());
    }
    let per = start.elapsed() / iterations;
    println!("{label:<58} {per:>12.2?} per iteration ({iterations} iterations)");
}

fn main() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let upstream = std::env::var_os("SWEEPGATE_ACCEPTANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/work/shared/acceptance"))
        .join("inferencex/843c625");
    let root = if upstream.is_dir() { upstream } else { manifest.join("fixtures/repo") };
    let read = |rel: &str| std::fs::read_to_string(root.join(rel)).unwrap_or_default();
    println!("policy files from {}", root.display());

    let real_owners = read(".github/CODEOWNERS");
    let (owners, _) = Codeowners::parse(&real_owners, "CODEOWNERS");
    let real_paths: Vec<String> = (0..10_000)
        .map(|i| match i % 4 {
            0 => "configs/amd-master.yaml".to_owned(),
            1 => format!("benchmarks/single_node/agentic/model{i}_fp4_mi355x.sh"),
            2 => format!("experimental/operatorx/kernels/k{i}.py"),
            _ => "perf-changelog.yaml".to_owned(),
        })
        .collect();
    time(&format!("CODEOWNERS owners_of x10,000 paths ({} real rules)", owners.rules.len()), 5, || {
        real_paths.iter().filter(|p| owners.owners_of(p).is_some_and(|(r, _)| !r.is_catch_all())).count()
    });

    // A large synthetic CODEOWNERS: per-SKU recipe rules with `**` and globs (worst case).
    let mut big = String::from("* @org/core\n");
    let synthetic_rules = if quick() { 10 } else { 200 };
    for i in 0..synthetic_rules {
        big.push_str(&format!("benchmarks/multi_node/srt-slurm-recipes/**/sku{i}-*/ @owner-{i} @org/team-{}\n", i % 7));
    }
    time(&format!("CODEOWNERS parse, {} rules", synthetic_rules + 1), 20, || Codeowners::parse(&big, "CODEOWNERS"));
    let (owners, _) = Codeowners::parse(&big, "CODEOWNERS");
    let paths: Vec<String> = (0..10_000)
        .map(|i| format!("benchmarks/multi_node/srt-slurm-recipes/sglang/m{i}/sku{}-fp4/r.yaml", i % 250))
        .collect();
    time(&format!("CODEOWNERS owners_of x10,000 paths ({} synthetic ** rules)", synthetic_rules + 1), 1, || {
        paths.iter().filter(|p| owners.owners_of(p).is_some_and(|(r, _)| !r.is_catch_all())).count()
    });

    let models = read("MODELS.md");
    time("MODELS.md parse (real, ~19 KB)", 200, || ModelsMd::parse(&models, "MODELS.md"));

    let checklist = read("docs/PR_REVIEW_CHECKLIST.md");
    time("checklist template parse", 2000, || ChecklistTemplate::parse(&checklist, "c.md"));
    let template = ChecklistTemplate::parse(&checklist, "c.md").0.expect("template");
    let body = checklist.split("```").nth(1).unwrap_or_default().replace("- [ ]", "- [x]");
    time("sign-off parse + match against the template", 2000, || {
        let s = Signoff::parse(&body).expect("parse");
        match_template(&s, &template)
    });
    let huge = body.repeat(200_000 / body.len().max(1));
    time(&format!("sign-off parse + match, {} KiB body", huge.len() / 1024), 20, || {
        let s = Signoff::parse(&huge).expect("parse");
        match_template(&s, &template)
    });
}
