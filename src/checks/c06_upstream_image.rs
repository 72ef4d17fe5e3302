//! Check 6 — Upstream image and engine-first ordering (spec 30 Check 6 (a), (b)).
//!
//! (a) On established SKUs, `vllm` entries use Docker Hub `vllm/…` and `sglang` entries
//! `lmsysorg/…` images. (b) A vendor-specific framework needs an open-source entry with the same
//! model prefix and SKU. Either may be excused only by an exception the additional detail section
//! documents for that config key (new hardware or new architecture). The main-branch build policy
//! (c) needs image provenance and is left to the reviewer (docs/decisions.md D12).

use serde_json::json;

use super::affected::{affected_configs, all_configs, sku, AffectedConfig};
use super::{with_fields, Context, Outcome};

const ESTABLISHED_SKUS: [&str; 9] = ["h100", "h200", "b200", "b300", "gb200", "gb300", "mi300x", "mi325x", "mi355x"];
const OPEN_SOURCE: [&str; 5] = ["vllm", "sglang", "dynamo-vllm", "dynamo-sglang", "sglang-disagg"];

/// An image reference as a registry client reads it: the `registry#path` form of the master
/// configs (`nvcr.io#nvidia/tensorrt-llm/release:1.2`, enroot's notation) read as
/// `registry/path`, and Docker Hub's `docker.io/` dropped.
pub fn canonical_image(image: &str) -> String {
    let image = image.trim().replacen('#', "/", 1);
    image.strip_prefix("docker.io/").map_or_else(|| image.clone(), str::to_owned)
}

/// The repository part of an image reference (see [`canonical_image`]).
fn repository(image: &str) -> String {
    let image = canonical_image(image);
    let without_digest = image.split('@').next().unwrap_or(&image);
    match without_digest.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => repo.to_owned(),
        _ => without_digest.to_owned(),
    }
}

/// The upstream image organisation a framework must use, if it has one.
fn required_org(framework: &str) -> Option<&'static str> {
    match framework {
        "vllm" => Some("vllm/"),
        "sglang" => Some("lmsysorg/"),
        _ => None,
    }
}

/// Whether the additional detail section documents an exception for this config.
fn exception_documented(detail: &str, key: &str) -> bool {
    let lower = detail.to_ascii_lowercase();
    lower.contains(&key.to_ascii_lowercase())
        && (lower.contains("new hardware")
            || lower.contains("new architecture")
            || lower.contains("new model architecture"))
}

pub fn check(cx: &Context) -> Outcome {
    let changed_master =
        cx.evidence.files.iter().any(|f| super::scan::role(&f.filename) == super::scan::Role::MasterConfig);
    if !changed_master {
        return Outcome::na("untouched");
    }
    let (affected, all) = match (affected_configs(cx), all_configs(cx)) {
        (Ok(a), Ok(all)) => (a, all),
        (Err(reason), _) | (_, Err(reason)) => return Outcome::unreadable("the master configs", reason),
    };
    let detail = cx.detail();
    let mut ok = Vec::new();
    let mut findings = Vec::new();
    for c in &affected {
        let s = sku(&c.runner);
        if !ESTABLISHED_SKUS.contains(&s.as_str()) {
            ok.push(json!({"key": c.key, "kind": "new_hardware", "sku": s}));
            continue;
        }
        let excused = exception_documented(detail, &c.key);
        if let Some(org) = required_org(&c.framework) {
            let repo = repository(&c.image);
            if repo.starts_with(org) {
                ok.push(json!({"key": c.key, "kind": "image", "image": c.image}));
            } else if excused {
                ok.push(json!({"key": c.key, "kind": "exception", "image": c.image}));
            } else {
                findings.push(finding(c, &s, "vendor_image", json!({"expected": org})));
            }
        } else if !OPEN_SOURCE.contains(&c.framework.as_str()) {
            let sibling = all.iter().find(|o| {
                o.model_prefix == c.model_prefix && sku(&o.runner) == s && OPEN_SOURCE.contains(&o.framework.as_str())
            });
            match (sibling, excused) {
                (Some(o), _) => {
                    ok.push(json!({"key": c.key, "kind": "ordering", "framework": c.framework, "sibling": o.key}))
                }
                (None, true) => ok.push(json!({"key": c.key, "kind": "exception", "image": c.image})),
                (None, false) => findings.push(finding(c, &s, "ordering", json!({}))),
            }
        } else {
            ok.push(json!({"key": c.key, "kind": "image", "image": c.image}));
        }
    }
    if !findings.is_empty() {
        let refs: Vec<String> =
            findings.iter().map(|f| format!("{}:{}", f["file"].as_str().unwrap_or_default(), f["line"])).collect();
        let mut o = Outcome::fail("not_upstream").arg("findings", findings);
        for r in refs {
            o = o.evidence(r);
        }
        return o;
    }
    if ok.is_empty() {
        return Outcome::na("untouched");
    }
    Outcome::pass("upstream").arg("configs", ok)
}

fn finding(c: &AffectedConfig, sku: &str, kind: &str, extra: serde_json::Value) -> serde_json::Value {
    let base = json!({
        "key": c.key, "file": c.file, "line": c.line, "kind": kind, "image": c.image,
        "framework": c.framework, "sku": sku, "prefix": c.model_prefix,
    });
    with_fields(base, extra)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, with_change};
    use crate::checks::Status;
    use crate::evidence::Evidence;

    fn entry(key: &str, image: &str, runner: &str, framework: &str) -> String {
        format!("{key}:\n  image: {image}\n  model: m\n  model-prefix: qwen3.5\n  runner: {runner}\n  precision: fp8\n  framework: {framework}\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - {{ tp: 8, conc-list: [4] }}\n")
    }

    /// The PR edits the last entry of the file.
    fn pr(master: &str) -> Evidence {
        let last_line = master.lines().count() as u32;
        let mut e =
            with_change(evidence(), "configs/amd-master.yaml", &format!("@@ -{last_line},1 +{last_line},1 @@\n+x\n"));
        e.head.insert("configs/amd-master.yaml", master);
        e
    }

    fn status(e: &Evidence) -> Status {
        check(&Context::new(e)).status
    }

    #[test]
    fn upstream_images_pass_and_vendor_forks_fail_on_established_skus() {
        assert_eq!(
            status(&pr(&entry("q-mi355x-sglang", "lmsysorg/sglang:v0.5.9-rocm700-mi35x", "mi355x", "sglang"))),
            Status::Pass
        );
        assert_eq!(
            status(&pr(&entry("q-mi355x-vllm", "vllm/vllm-openai-rocm:v0.11", "cluster:mi355x-amds", "vllm"))),
            Status::Pass
        );
        let o = check(&Context::new(&pr(&entry("q-mi355x-sglang", "rocm/sgl-dev:v0.5.9-mi35x", "mi355x", "sglang"))));
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.args["findings"][0]["kind"], "vendor_image");
    }

    #[test]
    fn new_hardware_and_documented_exceptions_are_exempt() {
        assert_eq!(status(&pr(&entry("q-mi455x-sglang", "rocm/sgl-dev:x", "mi455x", "sglang"))), Status::Pass);
        let mut e = pr(&entry("q-mi355x-sglang", "rocm/sgl-dev:x", "mi355x", "sglang"));
        e.signoff.body = "As a PR reviewer and CODEOWNER, I have reviewed this and have:\n- [x] x\n\n### Additional detail section:\nq-mi355x-sglang: new model architecture not yet supported upstream, confirmed by SGLang maintainers.\n\nSigned: `alice`\n".into();
        assert_eq!(status(&e), Status::Pass);
    }

    #[test]
    fn vendor_frameworks_need_an_open_source_entry_first() {
        let atom_only = entry("q-mi355x-atom", "rocm/atom:1", "mi355x", "atom");
        assert_eq!(check(&Context::new(&pr(&atom_only))).message.args["findings"][0]["kind"], "ordering");
        let both = entry("q-mi355x-vllm", "vllm/vllm-openai-rocm:v1", "mi355x-amds", "vllm") + &atom_only;
        assert_eq!(status(&pr(&both)), Status::Pass);
    }

    #[test]
    fn image_repository_parsing() {
        assert_eq!(repository("docker.io/lmsysorg/sglang:v1"), "lmsysorg/sglang");
        assert_eq!(repository("ghcr.io#org/vllm:x"), "ghcr.io/org/vllm");
        assert_eq!(
            canonical_image("nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc5"),
            "nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc5"
        );
        assert_eq!(canonical_image(" ghcr.io#org/vllm@sha256:ab "), "ghcr.io/org/vllm@sha256:ab");
        assert_eq!(canonical_image("docker.io/lmsysorg/sglang:v0.5.9"), "lmsysorg/sglang:v0.5.9");
        assert_eq!(
            canonical_image("lmsysorg/sglang:v0.5.9"),
            "lmsysorg/sglang:v0.5.9",
            "plain references are unchanged"
        );
        assert_eq!(repository("vllm/vllm-openai@sha256:abc"), "vllm/vllm-openai");
        assert_eq!(repository("localhost:5000/vllm"), "localhost:5000/vllm");
    }

    #[test]
    fn no_master_change_is_not_applicable() {
        assert_eq!(status(&evidence()), Status::NotApplicable);
    }
}
