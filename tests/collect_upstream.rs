//! The Upstream collector against a local fake registry / Hugging Face / upstream GitHub.

mod support;

use std::time::Duration;

use serde_json::json;
use support::fake_upstream::FakeUpstream;
use sweepgate::evidence::collect::{UpstreamClient, UpstreamConfig};
use sweepgate::evidence::Fact;

const DIGEST: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";

fn client(fake: &FakeUpstream) -> UpstreamClient {
    let mut config = UpstreamConfig {
        github_api: fake.url.clone(),
        huggingface: fake.url.clone(),
        backoff: Duration::from_millis(1),
        allowed_hosts: [fake.host().to_string()].into(),
        allow_private_addresses: true,
        ..UpstreamConfig::default()
    };
    for registry in ["docker.io", "nvcr.io", "ghcr.io"] {
        config.registries.insert(registry.into(), fake.url.clone());
    }
    UpstreamClient::new(config).unwrap()
}

#[tokio::test]
async fn image_digests_through_the_anonymous_token_flow() {
    let fake = FakeUpstream::start().await;
    fake.state().manifests.insert("lmsysorg/sglang:v0.5.9-cu130".into(), DIGEST.into());
    fake.state().manifests.insert("nvidia/tensorrt-llm/release:1.3.0rc5".into(), DIGEST.into());
    let upstream = client(&fake);
    assert_eq!(upstream.image_digest("lmsysorg/sglang:v0.5.9-cu130").await, Fact::Ok(DIGEST.to_string()));
    assert_eq!(upstream.image_digest("nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc5").await, Fact::Ok(DIGEST.into()));
    let log = fake.state().log.clone();
    assert_eq!(
        log[..3],
        [
            "HEAD /v2/lmsysorg/sglang/manifests/v0.5.9-cu130".to_string(),
            "GET /token repository:lmsysorg/sglang:pull".to_string(),
            "HEAD /v2/lmsysorg/sglang/manifests/v0.5.9-cu130".to_string(),
        ]
    );
    match upstream.image_digest("lmsysorg/sglang:no-such-tag").await {
        Fact::Unavailable(reason) => assert!(reason.contains("HTTP 404"), "{reason}"),
        other => panic!("{other:?}"),
    }
    match upstream.image_digest("not an image").await {
        Fact::Unavailable(reason) => assert!(reason.contains("not an image reference"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn transient_failures_are_retried_then_reported() {
    let fake = FakeUpstream::start().await;
    fake.state().manifests.insert("library/ubuntu:24.04".into(), DIGEST.into());
    fake.state().fail_first = 2;
    let upstream = client(&fake);
    assert_eq!(upstream.image_digest("ubuntu:24.04").await, Fact::Ok(DIGEST.into()));
    fake.state().fail_first = 10;
    match upstream.model_config("org/model").await {
        Fact::Unavailable(reason) => assert!(reason.contains("502") && reason.contains("3 attempts"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn draft_model_configs_and_upstream_pulls() {
    let fake = FakeUpstream::start().await;
    let config = json!({"torch_dtype": "bfloat16", "architectures": ["DeepseekV3ForCausalLMNextN"]});
    fake.state().model_configs.insert("nvidia/DSR1-NextN".into(), config.clone());
    fake.state().pulls.insert(
        ("vllm-project/recipes".into(), 88),
        (
            json!({"state": "closed", "draft": false, "merged_at": "2026-09-01T00:00:00Z"}),
            vec!["DeepSeek/R1.md".into()],
        ),
    );
    let upstream = client(&fake);
    assert_eq!(upstream.model_config("nvidia/DSR1-NextN").await, Fact::Ok(config));
    assert!(matches!(upstream.model_config("nvidia/missing").await, Fact::Unavailable(r) if r.contains("404")));
    assert!(matches!(upstream.model_config("../etc").await, Fact::Unavailable(_)));
    let Fact::Ok(pull) = upstream.pull("vllm-project/recipes", 88).await else { panic!("pull unavailable") };
    assert_eq!((pull.state.as_str(), pull.merged_at.as_deref()), ("closed", Some("2026-09-01T00:00:00Z")));
    assert_eq!(pull.files, vec!["DeepSeek/R1.md".to_string()]);
    assert!(matches!(upstream.pull("sgl-project/sglang", 1).await, Fact::Unavailable(r) if r.contains("404")));
}

const MERGE_SHA: &str = "0123456789abcdef0123456789abcdef01234567";

/// Check 3(c)'s content: a cookbook PR's files at its merge commit, published pages as text
/// (HTML, not UTF-8, too large, unreachable), and the allowlist for page hosts.
#[tokio::test]
async fn cookbook_pr_files_and_published_pages_are_read_as_text() {
    let fake = FakeUpstream::start().await;
    let pull = json!({"state": "closed", "draft": false, "merged_at": "2026-10-30T05:24:00Z", "merge_commit_sha": MERGE_SHA, "head": {"sha": "f".repeat(40)}});
    let files = vec!["docs/cookbook/MuseSparkOpen.mdx".to_string(), "docs/cookbook/logo.png".to_string()];
    fake.state().pulls.insert(("sgl-project/sglang".into(), 47394), (pull, files));
    let mdx = "## HiCache (high concurrency)\n--hicache-size 310 --prefill-decode-interval 20\n";
    fake.state().contents.insert(("sgl-project/sglang".into(), "docs/cookbook/MuseSparkOpen.mdx".into()), mdx.into());
    let mut pages = std::collections::HashMap::new();
    pages.insert(
        "/cookbook/qwen3.5".to_string(),
        (200u16, b"<h1>Qwen3.5</h1><p><code>--tp 8</code>&amp;</p><script>x()</script>".to_vec()),
    );
    pages.insert("/cookbook/latin1".to_string(), (200u16, vec![b'<', b'p', b'>', 0xE9, 0xFF, b'<', b'/', b'p', b'>']));
    pages.insert("/cookbook/huge".to_string(), (200u16, vec![b'a'; 5 * 1024 * 1024]));
    pages.insert("/cookbook/down".to_string(), (503u16, Vec::new()));
    fake.state().pages = pages;
    let mut config = UpstreamConfig {
        github_api: fake.url.clone(),
        backoff: Duration::from_millis(1),
        attempts: 2,
        allowed_hosts: [fake.host().to_string()].into(),
        allow_private_addresses: true,
        ..UpstreamConfig::default()
    };
    config.page_mirrors.insert("https://docs.sglang.io".into(), fake.url.clone());
    let upstream = UpstreamClient::new(config).unwrap();

    let (pull, content) = upstream.pull_and_content("sgl-project/sglang", 47394).await;
    assert!(matches!(pull, Fact::Ok(ref p) if p.merged_at.is_some()), "{pull:?}");
    let Fact::Ok(content) = content else { panic!("{content:?}") };
    assert_eq!(content.files.keys().collect::<Vec<_>>(), ["docs/cookbook/MuseSparkOpen.mdx"], "images are not read");
    assert_eq!(content.files["docs/cookbook/MuseSparkOpen.mdx"], mdx);
    let log = fake.state().log.clone();
    assert!(
        log.contains(&format!(
            "GET /repos/sgl-project/sglang/contents/docs/cookbook/MuseSparkOpen.mdx?ref={MERGE_SHA}"
        )),
        "{log:?}"
    );

    let page = |path: &str| {
        let upstream = &upstream;
        let url = format!("https://docs.sglang.io/cookbook/{path}");
        async move { upstream.page_text(&url).await }
    };
    let Fact::Ok(text) = page("qwen3.5").await else { panic!("page unavailable") };
    assert_eq!(text.source, "https://docs.sglang.io/cookbook/qwen3.5");
    assert_eq!(text.files["page"], "\nQwen3.5\n\n--tp 8&\n");
    let Fact::Ok(latin) = page("latin1").await else { panic!("non-UTF-8 page unavailable") };
    assert!(latin.files["page"].contains('\u{FFFD}'), "{latin:?}");
    for (path, expected) in [("huge", "larger than"), ("down", "HTTP 503"), ("missing", "not found")] {
        match page(path).await {
            Fact::Unavailable(reason) => assert!(reason.contains(expected), "{path}: {reason}"),
            other => panic!("{path}: {other:?}"),
        }
    }
    // Without a mirror the real host is refused here: not on this client's allowlist.
    let direct = UpstreamClient::new(UpstreamConfig {
        attempts: 1,
        allowed_hosts: ["api.github.com".into()].into(),
        ..UpstreamConfig::default()
    })
    .unwrap();
    match direct.page_text("https://docs.sglang.io/cookbook/qwen3.5").await {
        Fact::Unavailable(reason) => assert!(reason.contains("not on the upstream allowlist"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

/// Answers every connection with `answer` (raw HTTP) after reading the request head; counts
/// connections.
async fn raw_server(answer: Option<String>) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let host = listener.local_addr().unwrap().to_string();
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let answer = answer.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = socket.read(&mut buf).await;
                match answer {
                    Some(text) => {
                        let _ = socket.write_all(text.as_bytes()).await;
                    }
                    // A registry that never answers.
                    None => tokio::time::sleep(Duration::from_secs(30)).await,
                }
            });
        }
    });
    (host, count)
}

#[tokio::test]
async fn only_a_404_is_a_definite_answer_and_a_timeout_is_not() {
    let fake = FakeUpstream::start().await;
    let missing = client(&fake).image_digest("lmsysorg/sglang:no-such-tag").await;
    assert!(matches!(&missing, Fact::Unavailable(r) if r.starts_with("not found: ")), "{missing:?}");
    let (stalled, _) = raw_server(None).await;
    let mut config = UpstreamConfig {
        timeout: Duration::from_millis(200),
        attempts: 1,
        allowed_hosts: [stalled.clone()].into(),
        allow_private_addresses: true,
        ..UpstreamConfig::default()
    };
    config.registries.insert("slow.example".into(), format!("http://{stalled}"));
    let upstream = UpstreamClient::new(config).unwrap();
    let started = std::time::Instant::now();
    let answer = upstream.image_digest("slow.example/o/i:v1").await;
    assert!(matches!(&answer, Fact::Unavailable(r) if !r.starts_with("not found")), "{answer:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "the timeout bounds the lookup");
}

#[tokio::test]
async fn redirects_and_hosts_off_the_allowlist_are_not_followed() {
    let (probe, probed) = raw_server(Some("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}".into())).await;
    let redirect = format!(
        "HTTP/1.1 302 Found\r\nlocation: http://{probe}/org/name/resolve/main/config.json\r\ncontent-length: 0\r\n\r\n"
    );
    let (redirector, _) = raw_server(Some(redirect)).await;
    let config = UpstreamConfig {
        huggingface: format!("http://{redirector}"),
        attempts: 1,
        allowed_hosts: [redirector.clone()].into(),
        allow_private_addresses: true,
        ..UpstreamConfig::default()
    };
    let upstream = UpstreamClient::new(config).unwrap();
    let answer = upstream.model_config("org/name").await;
    assert!(matches!(&answer, Fact::Unavailable(r) if r.contains("redirect refused")), "{answer:?}");
    // The default configuration refuses a loopback registry outright.
    let defaults = UpstreamClient::new(UpstreamConfig { attempts: 1, ..UpstreamConfig::default() }).unwrap();
    let answer = defaults.image_digest(&format!("{probe}/evil/probe:v1")).await;
    assert!(matches!(&answer, Fact::Unavailable(r) if r.contains("not contacted")), "{answer:?}");
    let answer = defaults.image_digest("localhost:5000/evil/probe:v1").await;
    assert!(matches!(&answer, Fact::Unavailable(r) if r.contains("not contacted")), "{answer:?}");
    assert_eq!(probed.load(std::sync::atomic::Ordering::SeqCst), 0, "the probe was contacted");
}

#[tokio::test]
async fn a_bearer_realm_off_the_allowlist_is_not_asked_for_a_token() {
    let (probe, probed) =
        raw_server(Some("HTTP/1.1 200 OK\r\ncontent-length: 15\r\n\r\n{\"token\": \"t\"}".into())).await;
    let challenge = format!(
        "HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer realm=\"http://{probe}/token\",service=\"s\"\r\ncontent-length: 0\r\n\r\n"
    );
    let (registry, _) = raw_server(Some(challenge)).await;
    let mut config = UpstreamConfig {
        attempts: 1,
        allowed_hosts: [registry.clone()].into(),
        allow_private_addresses: true,
        ..UpstreamConfig::default()
    };
    config.registries.insert("docker.io".into(), format!("http://{registry}"));
    let answer = UpstreamClient::new(config).unwrap().image_digest("o/i:v1").await;
    assert!(matches!(&answer, Fact::Unavailable(r) if r.contains("not on the upstream allowlist")), "{answer:?}");
    assert_eq!(probed.load(std::sync::atomic::Ordering::SeqCst), 0, "the realm host was contacted");
}

/// EX2: a file of a launcher's checkout is read raw at the checkout's ref (the default branch
/// for `HEAD`); one absent at that ref is a definite "not found"; one over the bound is
/// unavailable, never cut.
#[tokio::test]
async fn a_checkout_file_is_read_at_its_ref_bounded_and_named_when_it_cannot_be() {
    let fake = FakeUpstream::start().await;
    let path = "recipes/gb200-fp8/8k1k/low-latency.yaml";
    let key = |rev: &str| ("NVIDIA/srt-slurm".to_owned(), rev.to_owned(), path.to_owned());
    fake.state().contents_at.insert(key("sa-submission-q2-2026"), "name: at-the-branch\n".into());
    fake.state().contents_at.insert(key(""), "name: default-branch\n".into());
    fake.state().contents_at.insert(key("big"), "x".repeat(2048));
    let upstream = client(&fake);
    let read = |rev: Option<&'static str>| upstream.repository_file("NVIDIA/srt-slurm", rev, path, 1024);

    assert_eq!(read(Some("sa-submission-q2-2026")).await, Fact::Ok("name: at-the-branch\n".into()));
    assert_eq!(read(None).await, Fact::Ok("name: default-branch\n".into()));
    let log = fake.state().log.clone();
    assert_eq!(
        log,
        [
            format!("GET /repos/NVIDIA/srt-slurm/contents/{path}?ref=sa-submission-q2-2026"),
            format!("GET /repos/NVIDIA/srt-slurm/contents/{path}?ref="),
        ]
    );
    let gone = read(Some("v0.0.1")).await;
    assert!(gone.is_not_found(), "{gone:?}");
    let big = read(Some("big")).await;
    assert!(matches!(&big, Fact::Unavailable(r) if r.contains("2048 bytes") && !big.is_not_found()), "{big:?}");
}
