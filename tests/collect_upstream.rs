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
