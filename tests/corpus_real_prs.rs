//! Corpus: real merged upstream PRs, rebuilt from `../shared/acceptance/inferencex-history.bundle`
//! (upstream main up to 2026-08-19) and verified offline.
//!
//! Each PR in `fixtures/corpus/prs.toml` becomes an Evidence bundle the way `collect` records one:
//! base = the merge commit's parent, head = the merge commit, the real per-file patches, the
//! trees filtered to the paths a verdict reads; plus a clean synthetic sign-off (the checklist
//! template at base, every box checked, signed by a CODEOWNER of the changed files), green CI
//! check-runs and a digest for every image. The bundle is written, read back and verified.
//!
//! The checks that judge the PR's own files (6-13, 17, 18(a)-(f)) must not FAIL a merged PR,
//! unless `fixtures/corpus/exceptions.toml` writes down the rule it really broke (in force at its
//! date) with the offending lines. The table of FAIL counts per check is printed.
//!
//! The bundle must be present: a missing one fails the test (CI has `../shared/` beside the
//! clone). `SWEEPGATE_SKIP_CORPUS=1` skips it deliberately on a machine without it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;
use sweepgate::checks::affected::{affected_configs, is_nvidia_sku, sku};
use sweepgate::checks::{verify, Context, Status, Verdict};
use sweepgate::domain::codeowners::{Codeowners, Owner};
use sweepgate::evidence::{
    read_bundle, write_bundle, ChangedFile, CheckRun, Evidence, Fact, Permission, PullRequest, Signoff, SignoffKind,
    WorkflowRun,
};
use sweepgate::repo::{GitTree, Layout, Logical, MemTree, Tree};

/// Checks that judge the PR's own files; a FAIL of one of them on a merged PR is a false
/// rejection unless written down as an exception. Check 18 counts only for (a)-(f).
const JUDGED: [u8; 10] = [6, 7, 8, 9, 10, 11, 12, 13, 17, 18];
const CHECK_18_OWN_FILES: [&str; 6] = ["a", "b", "c", "d", "e", "f"];

#[derive(Deserialize)]
struct PrList {
    pr: Vec<PrEntry>,
}

#[derive(Deserialize)]
struct PrEntry {
    number: u64,
    merge: String,
}

#[derive(Deserialize)]
struct ExceptionList {
    #[serde(default)]
    exception: Vec<Exception>,
    /// False rejections sweepgate still makes: its own defects, not the PR's, each with the
    /// class it belongs to. The list only shrinks: an entry that no longer FAILs must go.
    #[serde(default)]
    open: Vec<OpenDefect>,
}

#[derive(Deserialize)]
struct OpenDefect {
    pr: u64,
    check: u8,
    class: String,
}

/// A rule the merged PR really broke, with the offending lines.
#[derive(Deserialize)]
struct Exception {
    pr: u64,
    check: u8,
    rule: String,
    lines: Vec<String>,
}

fn history_bundle() -> Option<PathBuf> {
    if std::env::var_os("SWEEPGATE_SKIP_CORPUS").is_some_and(|v| v == "1") {
        eprintln!("SWEEPGATE_SKIP_CORPUS=1: the real-PR corpus is skipped");
        return None;
    }
    let candidates = [
        std::env::var_os("SWEEPGATE_ACCEPTANCE_DIR").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/acceptance")),
        Some(PathBuf::from("/work/shared/acceptance")),
    ];
    let found = candidates.into_iter().flatten().map(|d| d.join("inferencex-history.bundle")).find(|p| p.is_file());
    assert!(
        found.is_some(),
        "../shared/acceptance/inferencex-history.bundle is missing: the real-PR corpus cannot run \
         (set SWEEPGATE_ACCEPTANCE_DIR, or SWEEPGATE_SKIP_CORPUS=1 to skip it on purpose)"
    );
    found
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The files the PR changed, with GitHub's status words and per-file patches (hunks only).
fn changed_files(repo: &Path, base: &str, head: &str) -> Vec<ChangedFile> {
    let mut files = Vec::new();
    for line in git(repo, &["diff", "--name-status", "-M", base, head]).lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        let (status, previous, filename) = match fields.as_slice() {
            [s, old, new] if s.starts_with('R') => ("renamed", Some((*old).to_owned()), *new),
            [s, path] => (
                match s.chars().next() {
                    Some('A') => "added",
                    Some('D') => "removed",
                    _ => "modified",
                },
                None,
                *path,
            ),
            _ => panic!("unexpected name-status line {line:?}"),
        };
        let mut paths = vec![filename];
        paths.extend(previous.as_deref());
        let mut args = vec!["diff", "-M", "--no-color", base, head, "--"];
        args.extend(paths.iter().copied());
        let diff = git(repo, &args);
        // GitHub's `patch` starts at the first hunk header; binary files have none.
        let patch = diff.find("\n@@").map(|at| diff[at + 1..].to_owned());
        files.push(ChangedFile {
            filename: filename.to_owned(),
            previous_filename: previous,
            status: status.into(),
            patch,
        });
    }
    files
}

/// A tree as `collect` keeps it (decision C1): every logical file in both layouts, the benchmark
/// scripts and recipes, the runners, and the changed files.
fn tree_at(repo: &Path, commit: &str, files: &[ChangedFile]) -> MemTree {
    let git_tree = GitTree::open(repo, commit).expect("commit opens");
    let layout = Layout::default();
    let mut prefixes: Vec<String> = Logical::ALL.iter().flat_map(|l| layout.candidates(*l)).collect();
    prefixes.extend(["benchmarks", "inferencex-e2e/benchmarks", "runners", "inferencex-e2e/runners"].map(String::from));
    let mut tree = MemTree::new();
    for prefix in &prefixes {
        if let Some(bytes) = git_tree.read(prefix).expect("file reads") {
            tree.insert(prefix.clone(), bytes);
        } else {
            tree.copy_from(&git_tree, prefix).expect("directory reads");
        }
    }
    for path in files.iter().flat_map(|f| std::iter::once(&f.filename).chain(f.previous_filename.as_ref())) {
        if let Some(bytes) = git_tree.read(path).expect("file reads") {
            tree.insert(path.clone(), bytes);
        }
    }
    tree
}

/// The signer: a user the last matching CODEOWNERS rule lists for the changed files (master
/// configs first), and the teams that own the rest, which the signer is recorded a member of.
fn signer_and_teams(base: &MemTree, files: &[ChangedFile]) -> (String, BTreeSet<String>) {
    let text = base.text(".github/CODEOWNERS").expect("CODEOWNERS at base");
    let (owners, _) = Codeowners::parse(text, ".github/CODEOWNERS");
    let mut paths: Vec<&str> = files.iter().map(|f| f.filename.as_str()).collect();
    paths.sort_by_key(|p| !p.contains("-master.yaml"));
    let mut signer = None;
    let mut teams = BTreeSet::new();
    for path in paths {
        let Some((rule, _)) = owners.owners_of(path) else { continue };
        for owner in &rule.owners {
            match owner {
                Owner::User { login } if signer.is_none() => signer = Some(login.clone()),
                Owner::Team { org, slug } => {
                    teams.insert(format!("{org}/{slug}"));
                }
                _ => {}
            }
        }
    }
    (signer.unwrap_or_else(|| "corpus-maintainer".into()), teams)
}

/// The checklist template block at base with every box checked, signed by `signer`; the detail
/// section links the waiver the PR files, as a clean sign-off does.
fn signoff_body(base: &MemTree, signer: &str, number: u64, files: &[ChangedFile]) -> String {
    let waiver = format!("docs/waiver/{number}.md");
    let detail = if files.iter().any(|f| f.filename == waiver) {
        format!("Waiver: https://github.com/SemiAnalysisAI/InferenceX/blob/main/{waiver}")
    } else {
        "Synthetic clean sign-off of the real-PR corpus.".to_owned()
    };
    let text = base.text("docs/PR_REVIEW_CHECKLIST.md").expect("checklist template at base");
    let block = text.split("```").nth(1).expect("the template is in a code block");
    let mut body = String::new();
    for line in block.lines().skip(1) {
        let line = line.replacen("- [ ]", "- [x]", 1).replace("FILL_IN_GITHUB_USERNAME", signer);
        let line = if line.trim() == "- insert any additional info here" { detail.clone() } else { line };
        body.push_str(&line);
        body.push('\n');
    }
    body
}

/// Every image of the head master configs, as resolved digests.
fn image_digests(head: &MemTree) -> BTreeMap<String, Fact<String>> {
    let mut digests = BTreeMap::new();
    for path in head.paths().filter(|p| p.starts_with("configs/") && p.ends_with("-master.yaml")) {
        for line in head.text(path).unwrap_or_default().lines() {
            if let Some(image) = line.trim().strip_prefix("image:") {
                let image = image.trim().trim_matches('"').trim_matches('\'');
                // A reference pinned by digest resolves to that digest; others get a fresh one.
                let digest = match image.split_once("@sha256:") {
                    Some((_, pinned)) => format!("sha256:{pinned}"),
                    None => format!("sha256:{:064x}", digests.len() + 1),
                };
                digests.entry(image.to_owned()).or_insert(Fact::Ok(digest));
            }
        }
    }
    digests
}

fn build_evidence(repo: &Path, entry: &PrEntry) -> Evidence {
    let head_sha = entry.merge.clone();
    let base_sha = git(repo, &["rev-parse", &format!("{head_sha}^")]).trim().to_owned();
    let files = changed_files(repo, &base_sha, &head_sha);
    let base = tree_at(repo, &base_sha, &files);
    let head = tree_at(repo, &head_sha, &files);
    let meta = git(repo, &["log", "-1", "--format=%cs%n%an%n%s", &head_sha]);
    let mut meta = meta.lines();
    let date = meta.next().unwrap_or_default();
    let author = meta.next().unwrap_or_default().replace(' ', "-");
    let title = meta.next().unwrap_or_default().to_owned();
    let review_date = chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").expect("commit date");
    let (signer, teams) = signer_and_teams(&base, &files);
    let number = entry.number;
    let run_id = 50_000_000_000 + number;
    let url = format!("https://github.com/SemiAnalysisAI/InferenceX/actions/runs/{run_id}/job/1");
    let check_runs = ["check-changelog", "run-sweep / validate", "collect-evals / collect-evals"]
        .map(|name| CheckRun {
            name: name.into(),
            status: "completed".into(),
            conclusion: Some("success".into()),
            details_url: url.clone(),
            run_id: Some(run_id),
        })
        .to_vec();
    let run = WorkflowRun {
        id: run_id,
        name: "Run Sweep".into(),
        path: ".github/workflows/run-sweep.yml".into(),
        head_sha: head_sha.clone(),
        event: "pull_request".into(),
        status: "completed".into(),
        conclusion: Some("success".into()),
        artifacts: BTreeMap::new(),
        archives: BTreeMap::new(),
        jobs: BTreeMap::new(),
        sweep_id: None,
        jobs_unavailable: None,
    };
    let member: BTreeMap<String, Fact<bool>> = BTreeMap::from([(signer.clone(), Fact::Ok(true))]);
    let signoff_id = 4_000_000_000 + number;
    let mut evidence = Evidence {
        repository: "SemiAnalysisAI/InferenceX".into(),
        review_date,
        pull_request: PullRequest {
            number,
            title,
            body: String::new(),
            author,
            state: "open".into(),
            draft: false,
            head_sha: head_sha.clone(),
            head_ref: format!("pr-{number}"),
            base_sha,
            base_ref: "main".into(),
            fork: false,
            labels: vec![],
        },
        live_head_sha: None,
        signoff: Signoff {
            kind: SignoffKind::Comment,
            id: signoff_id,
            author: signer.clone(),
            body: signoff_body(&base, &signer, number, &files),
            url: format!("https://github.com/SemiAnalysisAI/InferenceX/pull/{number}#issuecomment-{signoff_id}"),
            created_at: format!("{date}T12:00:00Z"),
            updated_at: String::new(),
        },
        commits: vec![head_sha.clone()],
        files,
        check_runs: BTreeMap::from([(head_sha, Fact::Ok(check_runs))]),
        runs: BTreeMap::from([(run_id, run)]),
        comments: vec![],
        permissions: BTreeMap::from([(
            signer,
            Fact::Ok(Permission { permission: "write".into(), role_name: "maintain".into() }),
        )]),
        team_members: teams.into_iter().map(|t| (t, member.clone())).collect(),
        upstream: Default::default(),
        trees: Default::default(),
        blobs: Default::default(),
        texts_at: Default::default(),
        format: sweepgate::evidence::BUNDLE_FORMAT,
        base,
        head,
        artifacts: MemTree::new(),
    };
    evidence.upstream.image_digests = image_digests(&evidence.head);
    evidence
}

/// The sub-items of Check 18 a result FAILs (`fails[].sub` of its message).
fn failed_subitems(verdict: &Verdict) -> Vec<String> {
    let Some(result) = verdict.result(18) else { return vec![] };
    let fails = result.outcome.message.args.get("fails").and_then(|f| f.as_array()).cloned().unwrap_or_default();
    fails.iter().filter_map(|f| f.get("sub").and_then(|s| s.as_str()).map(str::to_owned)).collect()
}

/// Whether check `id` FAILs the PR's own files.
fn judged_fail(verdict: &Verdict, id: u8) -> bool {
    let failed = verdict.result(id).is_some_and(|r| r.outcome.status == Status::Fail);
    if id == 18 {
        failed && failed_subitems(verdict).iter().any(|s| CHECK_18_OWN_FILES.contains(&s.as_str()))
    } else {
        failed
    }
}

#[test]
fn real_merged_prs_are_not_falsely_rejected() {
    let Some(history) = history_bundle() else { return };
    let started = std::time::Instant::now();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/corpus");
    let prs: PrList = toml::from_str(&std::fs::read_to_string(root.join("prs.toml")).unwrap()).unwrap();
    let exceptions: ExceptionList =
        toml::from_str(&std::fs::read_to_string(root.join("exceptions.toml")).unwrap()).unwrap();
    for e in &exceptions.exception {
        assert!(prs.pr.iter().any(|p| p.number == e.pr), "exception for #{} which is not in the corpus", e.pr);
        assert!(!e.lines.is_empty() && !e.rule.is_empty(), "exception #{} check {} names no lines", e.pr, e.check);
    }
    for o in &exceptions.open {
        assert!(
            prs.pr.iter().any(|p| p.number == o.pr) && !o.class.is_empty(),
            "open defect #{} check {}",
            o.pr,
            o.check
        );
    }
    assert!(prs.pr.len() >= 25, "the corpus needs at least 25 PRs");

    let work = tempfile::tempdir().unwrap();
    let clone = work.path().join("ix");
    let out = Command::new("git")
        .args(["clone", "-q", "--no-checkout", "-b", "upto-2026-08-19"])
        .arg(&history)
        .arg(&clone)
        .output()
        .unwrap();
    assert!(out.status.success(), "cloning {}: {}", history.display(), String::from_utf8_lossy(&out.stderr));

    let mut fails_per_check: BTreeMap<u8, Vec<u64>> = BTreeMap::new();
    let mut false_rejections = Vec::new();
    let mut still_open = BTreeSet::new();
    let (mut frameworks, mut vendors) = (BTreeSet::new(), BTreeSet::new());
    // `SWEEPGATE_CORPUS_PRS=2660,2672` verifies only those PRs (a debugging aid: the completeness
    // assertions below then only hold for the whole corpus), `SWEEPGATE_CORPUS_OUT=DIR` keeps the
    // bundles for `sweepgate verify --bundle`.
    let only: Option<BTreeSet<u64>> = std::env::var("SWEEPGATE_CORPUS_PRS")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().trim_start_matches('#').parse().ok()).collect());
    let keep = std::env::var_os("SWEEPGATE_CORPUS_OUT").map(PathBuf::from);
    let selected: Vec<&PrEntry> =
        prs.pr.iter().filter(|p| only.as_ref().is_none_or(|o| o.contains(&p.number))).collect();
    for entry in selected.iter().copied() {
        let built = build_evidence(&clone, entry);
        let dir = keep.as_deref().unwrap_or(work.path()).join(format!("pr-{}", entry.number));
        write_bundle(&dir, &built).unwrap();
        let evidence = read_bundle(&dir).unwrap();
        let cx = Context::new(&evidence);
        for config in affected_configs(&cx).unwrap_or_default() {
            frameworks.insert(config.framework.clone());
            vendors.insert(if is_nvidia_sku(&sku(&config.runner)) { "nvidia" } else { "amd" });
        }
        let verdict = verify(&evidence);
        for result in verdict.with_status(Status::Fail) {
            fails_per_check.entry(result.id).or_default().push(entry.number);
        }
        for id in JUDGED.into_iter().filter(|id| judged_fail(&verdict, *id)) {
            let outcome = &verdict.result(id).unwrap().outcome;
            if exceptions.open.iter().any(|o| o.pr == entry.number && o.check == id) {
                still_open.insert((entry.number, id));
                eprintln!("open #{} check {id}: {}", entry.number, serde_json::to_string(&outcome.message).unwrap());
                continue;
            }
            if !exceptions.exception.iter().any(|e| e.pr == entry.number && e.check == id) {
                false_rejections.push(format!(
                    "#{} check {id}: {} {}",
                    entry.number,
                    serde_json::to_string(&outcome.message).unwrap(),
                    outcome.evidence.join(" ")
                ));
            }
        }
    }

    eprintln!("real-PR corpus: {} merged PRs in {:.1?}", selected.len(), started.elapsed());
    eprintln!("check | judged | FAILs | PRs");
    for id in 0..19u8 {
        let prs = fails_per_check.get(&id).cloned().unwrap_or_default();
        let judged = if JUDGED.contains(&id) { "yes" } else { "no" };
        let list: Vec<String> = prs.iter().map(|n| format!("#{n}")).collect();
        eprintln!("{id:>5} | {judged:>6} | {:>5} | {}", prs.len(), list.join(" "));
    }
    eprintln!("frameworks: {frameworks:?}; vendors: {vendors:?}");
    if only.is_some() {
        assert!(false_rejections.is_empty(), "false rejections of merged PRs:\n{}", false_rejections.join("\n"));
        return;
    }
    for wanted in ["vllm", "sglang", "trt", "atom", "dynamo"] {
        assert!(frameworks.iter().any(|f| f.contains(wanted)), "the corpus has no {wanted} config: {frameworks:?}");
    }
    assert_eq!(vendors.len(), 2, "the corpus covers AMD and NVIDIA: {vendors:?}");
    let open_count = exceptions.open.len();
    eprintln!("open sweepgate defects (false rejections still made): {open_count}");
    for o in &exceptions.open {
        eprintln!("  #{} check {}: {}", o.pr, o.check, o.class);
    }
    let fixed: Vec<String> = exceptions
        .open
        .iter()
        .filter(|o| !still_open.contains(&(o.pr, o.check)))
        .map(|o| format!("#{} check {}", o.pr, o.check))
        .collect();
    assert!(fixed.is_empty(), "no longer FAIL; remove them from exceptions.toml [[open]]: {}", fixed.join(", "));
    assert!(false_rejections.is_empty(), "false rejections of merged PRs:\n{}", false_rejections.join("\n"));
}
