//! The details page behind every status: the real `sweepgate serve --public-url` against the
//! fake GitHub gets a label event and a sign-off; every status it posts links to
//! `/prs/{owner}/{repo}/{number}`, and that page, opened in a real headless Chromium, shows
//! the label decision, the verdict and the SVG frontier charts. A private repository's page is
//! not served.

mod support;

use std::path::PathBuf;
use std::process::Command;

use serde_json::{json, Value};
use support::fake_github::FakeGitHub;
use support::fake_upstream::FakeUpstream;
use support::serve_bundle::{fixture, serve, serve_upstream, start_verifier, REPO};
use support::{comment_event, pr_event, BOT, TOKEN};
use sweepgate::evidence::read_bundle;
use sweepgate::github::RepoRef;
use sweepgate::server::details::DetailsStore;

const PUBLIC_URL: &str = "https://sweepgate.example/";

fn with_repo(mut payload: Value, private: bool) -> Value {
    payload["repository"] = json!({"full_name": REPO, "private": private});
    payload
}

fn chromium(args: &[&str]) -> std::process::Output {
    Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"])
        .args(args)
        .output()
        .expect("run chromium (installed by scripts/install-deps.sh)")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_status_links_to_a_page_chromium_renders_with_verdict_and_charts() {
    let original = read_bundle(&fixture("pareto-covered")).unwrap();
    let pr = original.pull_request.number;
    let fake = FakeGitHub::start(TOKEN, BOT).await;
    let upstream = FakeUpstream::start().await;
    serve_upstream(&upstream, &original);
    let signoff_url = serve(&fake, &original);
    let id: u64 = signoff_url.rsplit('-').next().unwrap().parse().unwrap();
    let server = start_verifier(&fake, &upstream, &["--public-url", PUBLIC_URL]).await;

    let label = with_repo(pr_event("labeled", pr, &["full-sweep"], Some("full-sweep"), "nv-owner"), false);
    assert_eq!(server.deliver("pull_request", "d-1", &label).await.0, 202);
    let signoff = comment_event(pr, id, &original.signoff.author, "MEMBER", &original.signoff.body, None);
    assert_eq!(server.deliver("issue_comment", "d-2", &with_repo(signoff, false)).await.0, 202);
    server.wait_handled(2).await;

    let page_path = format!("/prs/{REPO}/{pr}");
    let expected = format!("https://sweepgate.example{page_path}");
    let statuses = fake.world().statuses.clone();
    assert!(statuses.len() >= 3, "label status, pending and verdict statuses: {statuses:#?}");
    for (_, _, body) in &statuses {
        assert_eq!(body["target_url"], json!(expected), "{body}");
    }

    let page = format!("{}{page_path}", server.url);
    let html = reqwest::get(&page).await.unwrap();
    assert_eq!(html.status(), 200);
    let dom = chromium(&["--dump-dom", &page]);
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.contains(">APPROVED<"), "{dom}");
    assert!(dom.contains("<svg"), "Check 14's frontier chart: {dom}");
    assert!(dom.contains("Label decision") && dom.contains("签核裁定"), "{dom}");
    assert!(dom.contains(&original.pull_request.head_sha), "the assessed commit: {dom}");

    let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("../test-output/details");
    std::fs::create_dir_all(&out_dir).unwrap();
    let png = out_dir.join("details-page.png");
    let _ = std::fs::remove_file(&png);
    let shot = format!("--screenshot={}", png.display());
    let run = chromium(&[&shot, "--window-size=1200,1600", &page]);
    assert!(png.metadata().is_ok_and(|m| m.len() > 10_000), "{}", String::from_utf8_lossy(&run.stderr));

    // The repository turns private (the next payload says so): its page is no longer served.
    let relabel = with_repo(pr_event("labeled", pr, &["full-sweep"], Some("full-sweep"), "nv-owner"), true);
    server.deliver("pull_request", "d-3", &relabel).await;
    server.wait_handled(3).await;
    assert_eq!(reqwest::get(&page).await.unwrap().status(), 404);
}

fn chromium_present() -> bool {
    Command::new("chromium").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Issue 26: a sign-off's comparison with the published curve on the details page (seed-004:
/// a published run and a head run of one agentic series). The overlay SVG holds both frontiers
/// and the full table; Chromium renders the page with both curves in its DOM.
#[test]
fn the_performance_overlay_shows_both_frontiers_in_chromium() {
    let evidence = read_bundle(&fixture("seed-004")).unwrap();
    let verdict = sweepgate::checks::verify(&evidence);
    let performance = sweepgate::pr::performance::compare(&evidence);
    let dir = tempfile::tempdir().unwrap();
    let store = DetailsStore::open(&dir.path().join("d.sqlite"), PUBLIC_URL, true).unwrap();
    let repo = RepoRef::parse(REPO).unwrap();
    let pr = evidence.pull_request.number;
    store.record_verdict(&repo, pr, "sig-1", &evidence.pull_request.head_sha, &verdict);
    store.record_performance(&repo, pr, "sig-1", &performance);
    let html = store.render(&repo, pr).unwrap().unwrap();
    for curve in [r#"<polyline class="published-frontier""#, r#"<polyline class="head-frontier""#] {
        assert_eq!(html.matches(curve).count(), 1, "{curve}: {html}");
    }
    let section = html.split("<h4>Performance").nth(1).expect("the performance section");
    let table = &section[section.rfind("</figure>").expect("an overlay figure")..];
    insta::assert_snapshot!("details_performance_seed_004", table);

    if !chromium_present() {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "under CI chromium must be installed (scripts/install-deps.sh)"
        );
        eprintln!(
            "SKIPPED: chromium is not installed (scripts/install-deps.sh installs it); the DOM check did not run"
        );
        return;
    }
    let page = dir.path().join("page.html");
    std::fs::write(&page, &html).unwrap();
    let dom = chromium(&["--dump-dom", &format!("file://{}", page.display())]);
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.contains(r#"class="published-frontier""#) && dom.contains(r#"class="head-frontier""#), "{dom}");
    assert!(dom.contains("与已发布曲线的性能对比"), "{dom}");
}
