//! `scripts/action-download.sh` against a fake release on 127.0.0.1: a good asset is installed
//! and runs, a bad checksum or a missing checksum file fails with an `::error::` annotation and
//! installs nothing, and a ref or platform without an asset answers `found=false` (the action then
//! builds from source).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{StatusCode, Uri};
use sha2::{Digest, Sha256};

const TAG: &str = "v9.9.9";
const X64_ASSET: &str = "sweepgate-x86_64-unknown-linux-musl.tar.gz";

/// A tar.gz holding `sweepgate`, a script that answers `--version` like the binary.
fn release_tarball() -> Vec<u8> {
    let script = b"#!/bin/sh\necho 'sweepgate 9.9.9'\n";
    let mut header = tar::Header::new_gnu();
    header.set_size(script.len() as u64);
    header.set_mode(0o755);
    header.set_cksum();
    let mut archive = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
    archive.append_data(&mut header, "sweepgate", &script[..]).unwrap();
    archive.into_inner().unwrap().finish().unwrap()
}

fn sha256_line(bytes: &[u8], name: &str) -> Vec<u8> {
    format!("{}  {name}\n", hex::encode(Sha256::digest(bytes))).into_bytes()
}

/// Serves `files` by URL path; everything else is 404.
async fn serve(files: HashMap<String, Vec<u8>>) -> String {
    async fn file(State(files): State<Arc<HashMap<String, Vec<u8>>>>, uri: Uri) -> (StatusCode, Vec<u8>) {
        match files.get(uri.path()) {
            Some(body) => (StatusCode::OK, body.clone()),
            None => (StatusCode::NOT_FOUND, b"Not Found".to_vec()),
        }
    }
    let app = axum::Router::new().fallback(file).with_state(Arc::new(files));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/acme/sweepgate/releases/download", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

struct Run {
    output: Output,
    github_output: String,
    install_dir: PathBuf,
}

impl Run {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
}

async fn download(base: &str, tag: &str, arch: &str, dir: &Path) -> Run {
    download_with(base, tag, arch, dir, &[]).await
}

async fn download_with(base: &str, tag: &str, arch: &str, dir: &Path, env: &[(&str, &Path)]) -> Run {
    let github_output = dir.join("github_output");
    let install_dir = dir.join("bin");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/action-download.sh");
    let output = tokio::process::Command::new("bash")
        .arg(script)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("SWEEPGATE_RELEASE_REPO", "acme/sweepgate")
        .env("SWEEPGATE_RELEASE_TAG", tag)
        .env("SWEEPGATE_RELEASE_BASE_URL", base)
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", arch)
        .env("SWEEPGATE_INSTALL_DIR", &install_dir)
        .env("GITHUB_OUTPUT", &github_output)
        .envs(env.iter().copied())
        .output()
        .await
        .unwrap();
    let github_output = std::fs::read_to_string(&github_output).unwrap_or_default();
    Run { output, github_output, install_dir }
}

fn release(tarball: &[u8], checksum: Option<Vec<u8>>) -> HashMap<String, Vec<u8>> {
    let prefix = format!("/acme/sweepgate/releases/download/{TAG}");
    let mut files = HashMap::from([(format!("{prefix}/{X64_ASSET}"), tarball.to_vec())]);
    if let Some(sum) = checksum {
        files.insert(format!("{prefix}/{X64_ASSET}.sha256"), sum);
    }
    files
}

#[tokio::test]
async fn a_release_asset_with_a_good_checksum_is_installed_and_runs() {
    let tarball = release_tarball();
    let base = serve(release(&tarball, Some(sha256_line(&tarball, X64_ASSET)))).await;
    let tmp = tempfile::tempdir().unwrap();
    let run = download(&base, TAG, "X64", tmp.path()).await;
    assert!(run.output.status.success(), "{run:?}", run = run.output);
    let bin = run.install_dir.join("sweepgate");
    assert_eq!(run.github_output, format!("found=true\nbin={}\n", bin.display()));
    let version = std::process::Command::new(&bin).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&version.stdout), "sweepgate 9.9.9\n");
}

#[tokio::test]
async fn a_bad_checksum_fails_with_an_annotation_and_installs_nothing() {
    let tarball = release_tarball();
    let wrong = sha256_line(b"another build", X64_ASSET);
    let base = serve(release(&tarball, Some(wrong))).await;
    let tmp = tempfile::tempdir().unwrap();
    let run = download(&base, TAG, "X64", tmp.path()).await;
    assert_eq!(run.output.status.code(), Some(1));
    let expected = hex::encode(Sha256::digest(b"another build"));
    assert!(
        run.stdout().starts_with(&format!(
            "::error title=sweepgate download::checksum mismatch for {X64_ASSET} of release {TAG}: expected {expected}, downloaded "
        )),
        "{}",
        run.stdout()
    );
    assert_eq!(run.github_output, "", "no output names a binary");
    assert!(!run.install_dir.join("sweepgate").exists());
}

#[tokio::test]
async fn an_asset_without_its_checksum_file_is_not_trusted() {
    let tarball = release_tarball();
    let base = serve(release(&tarball, None)).await;
    let tmp = tempfile::tempdir().unwrap();
    let run = download(&base, TAG, "X64", tmp.path()).await;
    assert_eq!(run.output.status.code(), Some(1));
    assert!(run
        .stdout()
        .contains("its checksum file sweepgate-x86_64-unknown-linux-musl.tar.gz.sha256 answered HTTP 404"));
    assert!(!run.install_dir.join("sweepgate").exists());
}

#[tokio::test]
async fn a_missing_asset_or_release_makes_the_action_build() {
    let tarball = release_tarball();
    let base = serve(release(&tarball, Some(sha256_line(&tarball, X64_ASSET)))).await;
    let tmp = tempfile::tempdir().unwrap();
    // The release exists but has no aarch64 asset.
    let run = download(&base, TAG, "ARM64", tmp.path()).await;
    assert!(run.output.status.success());
    assert_eq!(run.github_output, "found=false\n");
    let stderr = String::from_utf8_lossy(&run.output.stderr);
    assert!(
        stderr.contains("release v9.9.9 of acme/sweepgate has no asset sweepgate-aarch64-unknown-linux-musl.tar.gz")
    );
    // A branch ref has no release at all; a commit ref is not looked up.
    for tag in ["main", "0123456789abcdef0123456789abcdef01234567"] {
        let tmp = tempfile::tempdir().unwrap();
        let run = download(&base, tag, "X64", tmp.path()).await;
        assert!(run.output.status.success(), "{tag}");
        assert_eq!(run.github_output, "found=false\n", "{tag}");
        assert!(!run.install_dir.join("sweepgate").exists());
    }
    // An unsupported platform builds too.
    let tmp = tempfile::tempdir().unwrap();
    let run = download(&base, TAG, "ARM", tmp.path()).await;
    assert_eq!(run.github_output, "found=false\n");
}

#[tokio::test]
async fn a_commit_pinned_action_uses_the_release_built_from_that_commit_only() {
    const COMMIT: &str = "89abcdef0123456789abcdef0123456789abcdef";
    let tarball = release_tarball();
    let mut files = release(&tarball, Some(sha256_line(&tarball, X64_ASSET)));
    files.insert(
        format!("/acme/sweepgate/releases/download/{TAG}/sweepgate-commit.txt"),
        format!("{COMMIT}\n").into_bytes(),
    );
    let base = serve(files).await;
    let action = tempfile::tempdir().unwrap();
    std::fs::write(action.path().join("Cargo.toml"), "[package]\nname = \"sweepgate\"\nversion = \"9.9.9\"\n").unwrap();
    let env = [("SWEEPGATE_ACTION_PATH", action.path())];

    let tmp = tempfile::tempdir().unwrap();
    let run = download_with(&base, COMMIT, "X64", tmp.path(), &env).await;
    assert!(run.output.status.success(), "{:?}", run.output);
    assert!(run.github_output.starts_with("found=true\n"), "{}", run.github_output);

    let tmp = tempfile::tempdir().unwrap();
    let other = "0000000000000000000000000000000000000001";
    let run = download_with(&base, other, "X64", tmp.path(), &env).await;
    assert_eq!(run.github_output, "found=false\n", "a commit after the release is built, not run as the release");
    assert!(String::from_utf8_lossy(&run.output.stderr).contains("is not the commit release v9.9.9 was built from"));
}
