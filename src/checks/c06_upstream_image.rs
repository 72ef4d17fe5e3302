//! Check 6 — Upstream image, engine-first ordering and the main-branch build policy (spec 30
//! Check 6 (a)–(c); decisions D12, B1–B4).
//!
//! (a) On established SKUs, open-source entries use their engine's upstream images: `vllm`,
//! `vllm-disagg` and `dynamo-vllm` Docker Hub `vllm/…`, `sglang`, `sglang-disagg` and `dynamo-sglang` `lmsysorg/…`.
//! (b) A vendor-specific framework needs an open-source entry with the same model prefix and SKU
//! that exists at the PR's base (one the same PR adds does not count); where MODELS.md's engine
//! submission policy maps the model to primary engines, each mapped engine's entry. (c) Once the
//! base checklist has the main-branch item, an image whose tag is not a release or nightly build
//! is a model-enablement build, allowed for a model of MODELS.md's support matrix (whether its
//! transition is "within a reasonable time" is the maintainer's call, decision CO5). Either may
//! be excused only by an exception the additional detail section documents for that config key
//! or image (new hardware, a new architecture, missing upstream support).

use serde_json::json;

use super::{reason, with_fields, Context, Outcome, Reason};
use crate::domain::checklist_template::Topic;
use crate::domain::models_md::{Engine, ModelsMd};
use crate::pr::affected::{affected_configs, all_configs, configs_in, sku};
use crate::pr::configs::AffectedConfig;
use crate::pr::Side;
use crate::repo::Logical;

const ESTABLISHED_SKUS: [&str; 9] = ["h100", "h200", "b200", "b300", "gb200", "gb300", "mi300x", "mi325x", "mi355x"];

/// Words of an exception the additional detail section documents (upstream prompt Check 6(a):
/// "truly new hardware … or a new model architecture that upstream vLLM/SGLang does not
/// fundamentally support yet"), lower-case; decision CO5.
const EXCEPTION_WORDS: [&str; 9] = [
    "new hardware",
    "new sku",
    "new architecture",
    "new model architecture",
    "not yet supported",
    "not supported upstream",
    "unsupported upstream",
    "no upstream support",
    "does not support",
];

/// The open-source engine a framework serves through (V15: Dynamo and disaggregated SGLang
/// deployments of the upstream engines count as open-source; `vllm-disagg`, absent from the
/// prompt's list, is the disaggregated upstream vLLM engine on `vllm/` images, decision B2);
/// `None` for a vendor framework.
fn engine_of(framework: &str) -> Option<Engine> {
    match framework {
        "vllm" | "dynamo-vllm" | "vllm-disagg" => Some(Engine::Vllm),
        "sglang" | "sglang-disagg" | "dynamo-sglang" => Some(Engine::Sglang),
        _ => None,
    }
}

/// The Docker Hub organisation of an engine's upstream images.
fn required_org(engine: Engine) -> &'static str {
    match engine {
        Engine::Vllm => "vllm/",
        Engine::Sglang => "lmsysorg/",
    }
}

/// An image reference as a registry client reads it: the `registry#path` form of the master
/// configs (`nvcr.io#nvidia/tensorrt-llm/release:1.2`, enroot's notation) read as
/// `registry/path`, and Docker Hub's `docker.io/` dropped.
pub fn canonical_image(image: &str) -> String {
    let image = image.trim().replacen('#', "/", 1);
    image.strip_prefix("docker.io/").map_or_else(|| image.clone(), str::to_owned)
}

/// The repository and tag of an image reference (see [`canonical_image`]); the digest dropped.
fn repository_and_tag(image: &str) -> (String, Option<String>) {
    let image = canonical_image(image);
    let without_digest = image.split('@').next().unwrap_or(&image);
    match without_digest.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => (repo.to_owned(), Some(tag.to_owned())),
        _ => (without_digest.to_owned(), None),
    }
}

fn repository(image: &str) -> String {
    repository_and_tag(image).0
}

/// `0.5.9`, `v0.5.8.post1`, `1.3.0rc5`, `0.11.0.dev3`: a release (or release-candidate) version.
fn is_version(word: &str) -> bool {
    let parts: Vec<&str> = word.strip_prefix('v').unwrap_or(word).split('.').collect();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let suffix = |s: &str| {
        ["post", "rc", "dev"].iter().any(|p| s.strip_prefix(p).is_some_and(digits))
            || s.find("rc").is_some_and(|at| digits(&s[..at]) && digits(&s[at + 2..]))
    };
    parts.len() >= 2 && digits(parts[0]) && parts[1..].iter().all(|p| digits(p) || suffix(p))
}

/// Words of a tag that say how or where an image runs, not what was built: CUDA/ROCm versions,
/// GPU families, architectures, base images, build dates and commit hashes.
fn is_platform(word: &str) -> bool {
    let numbered = |prefix: &str| {
        word.strip_prefix(prefix).is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
    };
    let hex = word.len() >= 7 && word.len() <= 40 && word.bytes().all(|b| b.is_ascii_hexdigit());
    let date = matches!(word.len(), 4 | 6 | 8) && word.bytes().all(|b| b.is_ascii_digit());
    ["cu", "cuda", "rocm", "ubuntu", "py", "post", "rc"].iter().any(|p| numbered(p))
        || (word.starts_with("mi")
            && word[2..].trim_end_matches('x').bytes().all(|b| b.is_ascii_digit())
            && word.len() > 3)
        || ["amd64", "arm64", "aarch64", "x86_64", "runtime", "vllm", "sglang"].contains(&word)
        || hex
        || date
}

/// Words that name a build of the default branch.
fn is_nightly(word: &str) -> bool {
    ["nightly", "dev", "latest", "main", "master"].contains(&word)
}

/// Why an image is not recognisably built from the default branch (a release or a nightly of
/// the upstream repository, spec 30 Check 6(c)), or `None` when it is: the tag's words that are
/// neither a version, a nightly marker nor a platform word (`muse, spark, open` of
/// `muse-spark-open-1027`), or "no tag" for a digest-only reference.
fn not_main_branch(image: &str) -> Option<String> {
    let Some(tag) = repository_and_tag(image).1 else { return Some("no tag".to_owned()) };
    let tag = tag.to_ascii_lowercase();
    let words: Vec<&str> = tag
        .split('-')
        .flat_map(|w| if w == "x86_64" { vec![w] } else { w.split('_').collect() })
        .filter(|w| !w.is_empty())
        .collect();
    let other: Vec<&str> =
        words.iter().copied().filter(|w| !is_version(w) && !is_nightly(w) && !is_platform(w)).collect();
    let built = words.iter().any(|w| is_version(w) || is_nightly(w));
    match (other.is_empty(), built) {
        (true, true) => None,
        (true, false) => Some(tag.clone()),
        (false, _) => Some(other.join(", ")),
    }
}

/// Whether the additional detail section documents an exception for this config: it names the
/// config key or its image and gives an exception reason (its genuineness is 6.h, human).
fn exception_documented(detail: &str, key: &str, image: &str) -> bool {
    let lower = detail.to_ascii_lowercase();
    let names =
        lower.contains(&key.to_ascii_lowercase()) || (!image.is_empty() && lower.contains(&image.to_ascii_lowercase()));
    names && EXCEPTION_WORDS.iter().any(|w| lower.contains(w))
}

/// What Check 6 reads besides the affected entries, each read once and only when a rule needs it.
struct Judge<'c, 'e> {
    cx: &'c Context<'e>,
    head: Vec<AffectedConfig>,
    base: Option<Vec<AffectedConfig>>,
}

impl Judge<'_, '_> {
    /// The master-config entries at the PR's base (engine-first ordering is read there).
    fn base(&mut self) -> Result<&[AffectedConfig], Outcome> {
        if self.base.is_none() {
            let unreadable = |error: Reason| Outcome::unreadable(reason("what_base_master_configs"), error);
            self.cx.base_available().map_err(unreadable)?;
            self.base = Some(configs_in(self.cx, Side::Base).map_err(|e| unreadable(e.into()))?);
        }
        Ok(self.base.as_deref().unwrap_or_default())
    }

    /// MODELS.md at the policy tip, `None` when it has none (before the file existed no
    /// engine mapping applies); a file that exists but cannot be parsed is unreadable.
    fn models(&self) -> Result<Option<(&str, &ModelsMd)>, Outcome> {
        let unreadable = |reason: Reason| Outcome::unreadable("MODELS.md", reason);
        let cx = self.cx;
        cx.policy_available().map_err(unreadable)?;
        match cx.layout().resolve(cx.evidence.policy_tree(), Logical::ModelsMd) {
            Ok(None) => Ok(None),
            Ok(Some(_)) => {
                cx.models_md().as_ref().map(|(f, m)| Some((f.as_str(), m))).map_err(|r| unreadable(r.clone()))
            }
            Err(e) => Err(unreadable(e.to_string().into())),
        }
    }

    /// An open-source entry on an established SKU: its upstream image, then the main-branch
    /// build policy.
    fn open_source(&self, c: &AffectedConfig, engine: Engine, s: &str, excused: bool) -> Result<Judged, Outcome> {
        let org = required_org(engine);
        if !repository(&c.image).starts_with(org) {
            return Ok(if excused {
                Judged::Ok(json!({"key": c.key, "kind": "exception", "image": c.image}))
            } else {
                Judged::Finding(finding(c, s, "vendor_image", json!({"expected": org})))
            });
        }
        let upstream = Judged::Ok(json!({"key": c.key, "kind": "image", "image": c.image}));
        if self.cx.in_force(Topic::T13) == Some(false) {
            return Ok(upstream);
        }
        let Some(words) = not_main_branch(&c.image) else { return Ok(upstream) };
        let Some((file, models)) = self.models()? else {
            return Err(Outcome::unreadable("MODELS.md", reason("no_models_md_at_base")));
        };
        let row = models.model(&c.model_prefix);
        let added = row.and_then(|r| r.added);
        let dates = json!({
            "prefix": c.model_prefix,
            "added": added.map_or_else(|| "TBD".to_owned(), |d| d.to_string()),
            "where": row.map_or_else(|| file.to_owned(), |r| format!("{file}:{}", r.line)),
        });
        // Any model of the support matrix may still be transitioning: upstream defines no period
        // (decision CO5); the row names its date added for the maintainer (6.g).
        Ok(if row.is_some() {
            Judged::Ok(with_fields(json!({"key": c.key, "kind": "enablement", "image": c.image}), dates))
        } else if excused {
            Judged::Ok(json!({"key": c.key, "kind": "exception", "image": c.image}))
        } else {
            let listed = json!({"words": words, "listed": row.is_some()});
            Judged::Finding(finding(c, s, "not_main_branch", with_fields(dates, listed)))
        })
    }

    /// A vendor-framework entry on an established SKU: the open-source entries it needs exist at
    /// base (each MODELS.md primary engine of the model, or any open-source engine).
    fn vendor(&mut self, c: &AffectedConfig, s: &str, excused: bool) -> Result<Judged, Outcome> {
        let sibling = |o: &&AffectedConfig| o.model_prefix == c.model_prefix && sku(&o.runner) == s;
        let base: Vec<AffectedConfig> = self.base()?.iter().filter(sibling).cloned().collect();
        let models = self.models()?;
        let row = models.and_then(|(file, m)| m.engine_row(&c.model_prefix).map(|r| (file.to_owned(), r.clone())));
        let required: Vec<Engine> = row.as_ref().map(|(_, r)| r.primary.clone()).unwrap_or_default();
        let serves =
            |o: &AffectedConfig, e: Option<Engine>| engine_of(&o.framework).is_some_and(|f| e.is_none_or(|e| e == f));
        let wanted: Vec<Option<Engine>> =
            if required.is_empty() { vec![None] } else { required.iter().copied().map(Some).collect() };
        let missing: Vec<Option<Engine>> =
            wanted.iter().copied().filter(|e| !base.iter().any(|o| serves(o, *e))).collect();
        if missing.is_empty() {
            let found = wanted.iter().filter_map(|e| base.iter().find(|o| serves(o, *e)));
            let siblings: Vec<&str> = found.map(|o| o.key.as_str()).collect();
            return Ok(Judged::Ok(
                json!({"key": c.key, "kind": "ordering", "framework": c.framework, "sibling": siblings.join(", ")}),
            ));
        }
        if excused {
            return Ok(Judged::Ok(json!({"key": c.key, "kind": "exception", "image": c.image})));
        }
        let engines: Vec<&str> = missing.iter().flatten().map(|e| e.name()).collect();
        let policy = row.as_ref().map(|(file, r)| format!("{file}:{}", r.line)).unwrap_or_default();
        let at_base = |key: &str| base.iter().any(|o| o.key == key);
        let added_here =
            self.head.iter().filter(sibling).find(|o| missing.iter().any(|e| serves(o, *e)) && !at_base(&o.key));
        let extra = json!({"engines": engines.join(" and "), "policy": policy});
        Ok(Judged::Finding(match added_here {
            Some(o) => finding(c, s, "same_pr", with_fields(extra, json!({"sibling": o.key}))),
            None if !required.is_empty() && base.iter().any(|o| serves(o, None)) => {
                finding(c, s, "primary_engine", extra)
            }
            None => finding(c, s, "ordering", extra),
        }))
    }
}

enum Judged {
    Ok(serde_json::Value),
    Finding(serde_json::Value),
}

pub fn check(cx: &Context) -> Outcome {
    let changed_master =
        cx.evidence.files.iter().any(|f| crate::pr::scan::role(&f.filename) == crate::pr::scan::Role::MasterConfig);
    if !changed_master {
        return Outcome::na("untouched");
    }
    let (affected, head) = match (affected_configs(cx), all_configs(cx).map_err(Reason::from)) {
        (Ok(a), Ok(all)) => (a, all),
        (Err(error), _) | (_, Err(error)) => return Outcome::unreadable(reason("what_master_configs"), error),
    };
    let detail = cx.detail();
    let mut judge = Judge { cx, head, base: None };
    let mut ok = Vec::new();
    let mut findings = Vec::new();
    for c in &affected {
        let s = sku(&c.runner);
        if !ESTABLISHED_SKUS.contains(&s.as_str()) {
            ok.push(json!({"key": c.key, "kind": "new_hardware", "sku": s}));
            continue;
        }
        let excused = exception_documented(detail, &c.key, &c.image);
        let judged = match engine_of(&c.framework) {
            Some(engine) => judge.open_source(c, engine, &s, excused),
            None => judge.vendor(c, &s, excused),
        };
        match judged {
            Ok(Judged::Ok(row)) => ok.push(row),
            Ok(Judged::Finding(f)) => findings.push(f),
            Err(unreadable) => return unreadable,
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
    use crate::evidence::{Evidence, Fact};

    fn entry(key: &str, image: &str, runner: &str, framework: &str) -> String {
        format!("{key}:\n  image: {image}\n  model: m\n  model-prefix: qwen3.5\n  runner: {runner}\n  precision: fp8\n  framework: {framework}\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - {{ tp: 8, conc-list: [4] }}\n")
    }

    /// The PR edits the last entry of the file; `base` is the file before it.
    fn pr_on(base: &str, master: &str) -> Evidence {
        let last_line = master.lines().count() as u32;
        let mut e =
            with_change(evidence(), "configs/amd-master.yaml", &format!("@@ -{last_line},1 +{last_line},1 @@\n+x\n"));
        e.head.insert("configs/amd-master.yaml", master);
        e.base.insert("configs/amd-master.yaml", base);
        e
    }

    fn pr(master: &str) -> Evidence {
        pr_on("", master)
    }

    fn status(e: &Evidence) -> Status {
        check(&Context::new(e)).status
    }

    fn first_kind(e: &Evidence) -> String {
        let o = check(&Context::new(e));
        o.message.args["findings"][0]["kind"].as_str().unwrap_or_default().to_owned()
    }

    const MODELS: &str = "# Models\n\n## AgentX Guidelines\n\n### Engine submission policy\n\n| Model | Primary native/upstream engines | Agreed draft model(s) (PoR) | Proposed draft model(s) pending partner alignment | Additional engines |\n|---|---|---|---|---|\n| Qwen3.5 (`qwen3.5`) | native/upstream vLLM engine | native MTP | None | others |\n| DeepSeek-V4 (`dsv4`) | native/upstream vLLM engine and native/upstream SGLang engine | native MTP | None | others |\n\n## Scenarios\n\n| Scenario | ISL/OSL | Status |\n|---|---|---|\n| Single-turn 8k1k | 8192/1024 | Active |\n\n## Model support matrix\n\n| Model architecture class | Prefix | Date added | Active scenarios | Deprecated scenarios |\n|---|---|---|---|---|\n| Qwen 3.5 | `qwen3.5` | 2026-03-01 | Single-turn 8k1k | — |\n| Muse Spark | `musespark` | 2026-10-15 | Single-turn 8k1k | — |\n| Qwen 3.8 | `qwen3.8` | TBD | Single-turn 8k1k | — |\n";

    /// Every kind of `upstream` and `not_upstream` renders in both languages (issue 28, done
    /// when); `ordering` is a passing config and a finding (an open-source entry missing).
    #[test]
    fn every_kind_renders_in_both_languages() {
        let all = json!({"key": "c", "file": "configs/nvidia-master.yaml", "line": 3, "image": "i:1", "prefix": "dsr1",
            "added": "2026-08-01", "framework": "trt", "sibling": "dsr1-fp4-b200-sglang", "sku": "b200", "expected": "lmsysorg",
            "engines": "SGLang", "policy": "MODELS.md:9", "words": "rc", "where": "MODELS.md:4"});
        let with_kind = |kind: &str| with_fields(all.clone(), json!({"kind": kind}));
        let passing: Vec<Outcome> = ["image", "enablement", "ordering", "exception", "new_hardware"]
            .map(|k| Outcome::pass("upstream").arg("configs", vec![with_kind(k)]))
            .into();
        crate::checks::tests_support::assert_every_kind_renders(6, "upstream", &passing);
        let mut failing: Vec<Outcome> = ["vendor_image", "same_pr", "primary_engine", "not_main_branch", "ordering"]
            .map(|k| Outcome::fail("not_upstream").arg("findings", vec![with_kind(k)]))
            .into();
        let no_engines = with_fields(with_kind("ordering"), json!({"engines": ""}));
        failing.push(Outcome::fail("not_upstream").arg("findings", vec![no_engines]));
        crate::checks::tests_support::assert_every_kind_renders(6, "not_upstream", &failing);
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
        let e = pr(&entry("q-mi355x-sglang", "rocm/sgl-dev:v0.5.9-mi35x", "mi355x", "sglang"));
        assert_eq!((status(&e), first_kind(&e)), (Status::Fail, "vendor_image".into()));
    }

    /// Issue 17 item 4 (6.c): Dynamo and disaggregated SGLang entries run the upstream engine
    /// images too (upstream master: every dynamo-vllm/dynamo-sglang entry does).
    #[test]
    fn dynamo_and_disagg_entries_use_their_engines_upstream_images() {
        for (framework, image) in [
            ("dynamo-sglang", "lmsysorg/sglang:nightly-dev-cu13-20260805-211ee642"),
            ("dynamo-vllm", "vllm/vllm-openai:v0.27.1"),
            ("vllm-disagg", "vllm/vllm-openai-rocm:nightly-2afa3f7e950264bb179d030c23a1ed1f46558fd9"),
            ("sglang-disagg", "lmsysorg/sglang-rocm:v0.5.17-rocm720-mi35x-20260817"),
        ] {
            assert_eq!(status(&pr(&entry("q-gb300-x", image, "gb300", framework))), Status::Pass, "{framework}");
        }
        for (framework, image, expected) in [
            ("dynamo-sglang", "nvcr.io#nvidia/ai-dynamo/sglang-runtime:0.8.1", "lmsysorg/"),
            ("dynamo-vllm", "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.1", "vllm/"),
            ("sglang-disagg", "rocm/sgl-dev:sglang-0.5.9-rocm720-mi35x-mori-0227-2", "lmsysorg/"),
        ] {
            let o = check(&Context::new(&pr(&entry("q-mi355x-x", image, "mi355x-disagg", framework))));
            assert_eq!(o.status, Status::Fail, "{framework}");
            assert_eq!(o.message.args["findings"][0]["expected"], expected, "{framework}");
        }
    }

    #[test]
    fn new_hardware_and_documented_exceptions_are_exempt() {
        assert_eq!(status(&pr(&entry("q-mi455x-sglang", "rocm/sgl-dev:x", "mi455x", "sglang"))), Status::Pass);
        let mut e = pr(&entry("q-mi355x-sglang", "rocm/sgl-dev:x", "mi355x", "sglang"));
        e.signoff.body = "As a PR reviewer and CODEOWNER, I have reviewed this and have:\n- [x] x\n\n### Additional detail section:\nq-mi355x-sglang: new model architecture not yet supported upstream, confirmed by SGLang maintainers.\n\nSigned: `alice`\n".into();
        assert_eq!(status(&e), Status::Pass);
        // Upstream's words, not a literal "new hardware": missing upstream support, naming the image.
        e.signoff.body = e.signoff.body.replace(
            "q-mi355x-sglang: new model architecture not yet supported upstream, confirmed by SGLang maintainers.",
            "rocm/sgl-dev:x is needed because upstream SGLang does not support this model on ROCm yet (SGLang maintainers agree).",
        );
        assert_eq!(status(&e), Status::Pass);
        e.signoff.body = e.signoff.body.replace("does not support", "is slower for");
        assert_eq!(status(&e), Status::Fail, "a reason that is no exception");
    }

    /// Issue 17 item 4 (6.b): the open-source sibling is read at the PR's base; one the same
    /// PR adds does not satisfy engine-first ordering.
    #[test]
    fn vendor_frameworks_need_an_open_source_entry_at_base() {
        let atom = entry("q-mi355x-atom", "rocm/atom:1", "mi355x", "atom");
        let sglang = entry("q-mi355x-sglang", "lmsysorg/sglang:v0.5.9-rocm700-mi35x", "cluster:mi355x-amds", "sglang");
        assert_eq!(first_kind(&pr(&atom)), "ordering");
        let both = sglang.clone() + &atom;
        let o = check(&Context::new(&pr(&both)));
        assert_eq!((o.status, o.message.args["findings"][0]["kind"].as_str()), (Status::Fail, Some("same_pr")));
        assert_eq!(o.message.args["findings"][0]["sibling"], "q-mi355x-sglang");
        let o = check(&Context::new(&pr_on(&sglang, &both)));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.message.args["configs"][0]["sibling"], "q-mi355x-sglang");
        let other_sku = entry("q-mi300x-sglang", "lmsysorg/sglang:v0.5.9-rocm700-mi30x", "mi300x", "sglang");
        assert_eq!(first_kind(&pr_on(&other_sku, &(other_sku.clone() + &atom))), "ordering", "same SKU only");
    }

    /// Issue 17 item 4 (6.c): MODELS.md's primary engines say which open-source entries a
    /// vendor framework needs first (qwen3.5 → vLLM; dsv4 → vLLM and SGLang).
    #[test]
    fn models_md_primary_engines_must_come_first() {
        let atom = entry("q-mi355x-atom", "rocm/atom:1", "mi355x", "atom");
        let sglang = entry("q-mi355x-sglang", "lmsysorg/sglang:v0.5.9-rocm700-mi35x", "mi355x", "sglang");
        let vllm = entry("q-mi355x-vllm", "vllm/vllm-openai-rocm:v0.27.1", "mi355x", "vllm");
        let with_models = |base: &str, head: &str| {
            let mut e = pr_on(base, head);
            e.base.insert("MODELS.md", MODELS);
            e
        };
        let e = with_models(&sglang, &(sglang.clone() + &atom));
        let o = check(&Context::new(&e));
        assert_eq!(o.message.args.get("findings").map(|f| &f[0]["kind"]), Some(&json!("primary_engine")), "{o:?}");
        assert_eq!(o.message.args["findings"][0]["engines"], "vLLM");
        assert_eq!(o.message.args["findings"][0]["policy"], "MODELS.md:9");
        assert_eq!(status(&with_models(&vllm, &(vllm.clone() + &atom))), Status::Pass);
        let dsv4 = |s: &str| s.replace("qwen3.5", "dsv4");
        let base = dsv4(&vllm);
        let e = with_models(&base, &(base.clone() + &dsv4(&sglang) + &dsv4(&atom)));
        let o = check(&Context::new(&e));
        assert_eq!(o.message.args["findings"][0]["kind"], "same_pr", "{o:?}");
        assert_eq!(o.message.args["findings"][0]["engines"], "SGLang");
        let base = dsv4(&(vllm.clone() + &sglang));
        assert_eq!(status(&with_models(&base, &(base.clone() + &dsv4(&atom)))), Status::Pass);
    }

    #[test]
    fn an_unreadable_base_is_a_named_fact_for_ordering() {
        let mut e = pr(&entry("q-mi355x-atom", "rocm/atom:1", "mi355x", "atom"));
        e.trees.base = Fact::Unavailable("tarball refused".into());
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "unreadable"));
        assert_eq!(o.message.args["what"][crate::checks::REASON_KEY], "what_base_master_configs", "{o:?}");
    }

    /// Issue 17 item 4 (6.c): real upstream tags (master configs as of 2026-08) classified.
    #[test]
    fn release_and_nightly_tags_are_main_branch_builds() {
        for image in [
            "lmsysorg/sglang:v0.5.16-cu130",
            "lmsysorg/sglang:v0.5.8.post1-cu130-runtime",
            "lmsysorg/sglang-rocm:v0.5.16-rocm720-mi35x-20260730",
            "lmsysorg/sglang:v0.5.14-cu130@sha256:5027e95bf6ec536856b1b52a91d1f35ff5c564ab83e8a94758a169ff09bb8df3",
            "lmsysorg/sglang:nightly-dev-cu13-20260815-a5ba081f",
            "lmsysorg/sglang:dev-nightly-0820",
            "lmsysorg/sglang:v0.5.12.post1-rocm720-mi35x-20260523",
            "vllm/vllm-openai:v0.20.1-ubuntu2404",
            "vllm/vllm-openai-rocm:nightly-09663abde0f50944a8d5ea30120666024b503faa",
            "vllm/vllm-openai:nightly-dev-x86_64-cu13.0.1-426e59f",
            "vllm/vllm-openai:v0.11.0rc2",
        ] {
            assert_eq!(not_main_branch(image), None, "{image}");
        }
        for (image, words) in [
            ("lmsysorg/sglang-rocm:muse-spark-open-1027", "muse, spark, open"),
            ("vllm/vllm-openai:kimi-k3", "kimi, k3"),
            ("lmsysorg/sglang:deepseek-v4-hopper@sha256:1bf5", "deepseek, v4, hopper"),
            ("vllm/vllm-openai:dsv4-megamoe-mxfp4-arm64-cu130-4ba0a72", "dsv4, megamoe, mxfp4"),
            ("vllm/vllm-openai@sha256:abc", "no tag"),
            ("lmsysorg/sglang:cu130", "cu130"),
        ] {
            assert_eq!(not_main_branch(image).as_deref(), Some(words), "{image}");
        }
    }

    /// 6.c main-branch build policy: a model-enablement build is allowed for a model of the
    /// support matrix, whatever its age (upstream defines no period, decision CO5), and FAILs for
    /// a model the matrix does not list; a base template without the item passes.
    #[test]
    fn established_models_use_main_branch_builds() {
        let image = "lmsysorg/sglang-rocm:qwen3.5-mi35x-1101";
        let with = |prefix: &str, date: (i32, u32, u32)| {
            let mut e = pr(&entry("q-mi355x-sglang", image, "mi355x", "sglang").replace("qwen3.5", prefix));
            e.base.insert("MODELS.md", MODELS);
            e.review_date = chrono::NaiveDate::from_ymd_opt(date.0, date.1, date.2).unwrap_or_default();
            check(&Context::new(&e))
        };
        let o = with("qwen3.5", (2026, 11, 29));
        assert_eq!((o.status, o.message.args["configs"][0]["kind"].as_str()), (Status::Pass, Some("enablement")));
        assert_eq!(o.message.args["configs"][0]["added"], "2026-03-01");
        let o = with("musespark", (2026, 10, 30));
        assert_eq!((o.status, o.message.args["configs"][0]["kind"].as_str()), (Status::Pass, Some("enablement")));
        assert_eq!(with("musespark", (2030, 1, 14)).status, Status::Pass, "no invented grace period");
        assert_eq!(with("qwen3.8", (2026, 11, 29)).status, Status::Pass, "TBD: not yet added, new");
        let o = with("unlisted", (2026, 11, 29));
        assert_eq!(o.message.args["findings"][0]["kind"], "not_main_branch", "{o:?}");
        assert_eq!(o.message.args["findings"][0]["words"], "unlisted");
        let mut e = pr(&entry("q-mi355x-sglang", image, "mi355x", "sglang"));
        assert_eq!(check(&Context::new(&e)).message.key, "unreadable", "no MODELS.md: new or established is unknown");
        let template = include_str!("../../fixtures/bundles/green-sweep/base/docs/PR_REVIEW_CHECKLIST.md");
        let older: String =
            template.lines().filter(|l| !l.contains("built from master")).map(|l| format!("{l}\n")).collect();
        e.base.insert("docs/PR_REVIEW_CHECKLIST.md", older);
        assert_eq!(status(&e), Status::Pass, "the rule applies from the template that has the item (T13)");
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
