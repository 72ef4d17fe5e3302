//! Check 15 — PR description (spec 30 Check 15), the deterministic subset: TP/EP values,
//! concurrencies, image tags, precisions and model prefixes stated in the PR body are compared
//! with the affected configs' generated search space at the head. Advisory: WARN on a
//! contradiction or an unverifiable claim, never FAIL. The body is untrusted data: it is read,
//! size-bounded, and never changes what is checked.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::{json, Value};

use super::{reason, Context, Outcome};
use crate::matrix::evals::conc_values;
use crate::matrix::Row;
use crate::pr::affected::{affected_configs, all_configs};
use crate::pr::configs::AffectedConfig;
use crate::pr::generated::rows_by_config;

/// Bodies are read up to this many bytes (GitHub allows 65536 characters).
const MAX_BODY_BYTES: usize = 64 * 1024;

/// What the body claims.
#[derive(Debug, Default, PartialEq)]
struct Claims {
    tp: BTreeSet<i64>,
    ep: BTreeSet<i64>,
    conc: BTreeSet<i64>,
    images: BTreeSet<String>,
    precisions: BTreeSet<String>,
}

impl Claims {
    fn is_empty(&self) -> bool {
        self.tp.is_empty()
            && self.ep.is_empty()
            && self.conc.is_empty()
            && self.images.is_empty()
            && self.precisions.is_empty()
    }
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).unwrap_or_else(|_| Regex::new("$^").unwrap_or_else(|e| panic!("{e}"))))
}

fn numbers(text: &str) -> impl Iterator<Item = i64> + '_ {
    text.split(|c: char| !c.is_ascii_digit()).filter_map(|n| n.parse().ok())
}

/// `precision` words as the master config spells them (nvfp4/mxfp4 are fp4 checkpoints).
fn normalize_precision(word: &str) -> String {
    let w = word.to_ascii_lowercase();
    if w.ends_with("fp4") {
        "fp4".into()
    } else {
        w
    }
}

fn extract(body: &str) -> Claims {
    static TP: OnceLock<Regex> = OnceLock::new();
    static EP: OnceLock<Regex> = OnceLock::new();
    static CONC: OnceLock<Regex> = OnceLock::new();
    static IMAGE: OnceLock<Regex> = OnceLock::new();
    static PRECISION: OnceLock<Regex> = OnceLock::new();
    let mut claims = Claims::default();
    for line in body.lines() {
        for c in re(&TP, r"(?i)\btp\s*[=:]?\s*(\d{1,3})\b").captures_iter(line) {
            claims.tp.extend(numbers(&c[1]));
        }
        for c in re(&EP, r"(?i)\bep\s*[=:]?\s*(\d{1,3})\b").captures_iter(line) {
            claims.ep.extend(numbers(&c[1]));
        }
        for c in re(&CONC, r"(?i)\bconc(?:urrenc(?:y|ies))?(?:[ -]list)?\s*[=:]?\s*\[?((?:\d{1,5}\s*(?:,|and)?\s*)+)")
            .captures_iter(line)
        {
            claims.conc.extend(numbers(&c[1]));
        }
        for c in re(&IMAGE, r"\b([a-z0-9][a-z0-9.-]*(?:/[a-z0-9._-]+)+):([A-Za-z0-9][A-Za-z0-9._-]{0,127})")
            .captures_iter(line)
        {
            // Sentence punctuation is not part of a tag.
            claims.images.insert(format!("{}:{}", &c[1], c[2].trim_end_matches(['.', '-', '_'])));
        }
        for c in re(&PRECISION, r"(?i)\b(nvfp4|mxfp4|fp4|fp8|bf16|fp16|int4|int8)\b(\s+kv)?").captures_iter(line) {
            // "FP8 KV cache" states a KV dtype, not the config's precision.
            if c.get(2).is_none() {
                claims.precisions.insert(normalize_precision(&c[1]));
            }
        }
    }
    claims
}

/// The values the affected configs really have: TP/EP of every row and role, every conc.
#[derive(Default)]
struct Actual {
    tp: BTreeSet<i64>,
    ep: BTreeSet<i64>,
    conc: BTreeSet<i64>,
}

fn collect(row: &Row, actual: &mut Actual) {
    let int = |v: Option<&Value>| v.and_then(Value::as_i64);
    for part in [Some(row), row.get("prefill").and_then(Value::as_object), row.get("decode").and_then(Value::as_object)]
        .into_iter()
        .flatten()
    {
        actual.tp.extend(int(part.get("tp")));
        actual.ep.extend(int(part.get("ep")));
    }
    actual.conc.extend(conc_values(row));
}

fn mismatches(claimed: &BTreeSet<i64>, actual: &BTreeSet<i64>, what: &str, out: &mut Vec<Value>) {
    let wrong: Vec<i64> = claimed.difference(actual).copied().collect();
    if !wrong.is_empty() && !actual.is_empty() {
        out.push(json!({"what": what, "claimed": wrong.iter().map(i64::to_string).collect::<Vec<_>>().join(", "),
            "actual": actual.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")}));
    }
}

fn body_of(body: &str) -> &str {
    let mut end = body.len().min(MAX_BODY_BYTES);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    &body[..end]
}

fn models_named(body: &str, known: &[AffectedConfig]) -> BTreeSet<String> {
    let lower = body.to_ascii_lowercase();
    let words: BTreeSet<&str> = lower.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.')).collect();
    known
        .iter()
        .map(|c| c.model_prefix.to_ascii_lowercase())
        .filter(|p| !p.is_empty() && words.contains(p.as_str()))
        .collect()
}

pub fn check(cx: &Context) -> Outcome {
    let ev = cx.evidence;
    let body = body_of(&ev.pull_request.body);
    let claims = extract(body);
    let all = match all_configs(cx) {
        Ok(all) => all,
        // Without the head's configs, which models the body names is unknown: not N/A.
        Err(error) if !body.trim().is_empty() => {
            return Outcome::warn("unverifiable")
                .arg("reason", reason("masters_do_not_load").arg("tree", "head").error(error))
        }
        Err(_) => Vec::new(),
    };
    let named_models = models_named(body, &all);
    if claims.is_empty() && named_models.is_empty() {
        return Outcome::na(if body.trim().is_empty() { "empty_body" } else { "no_claims" });
    }
    let affected = match affected_configs(cx) {
        Ok(a) if !a.is_empty() => a,
        Ok(_) => return Outcome::warn("unverifiable").arg("reason", reason("claims_without_master_change")),
        Err(error) => {
            return Outcome::warn("unverifiable").arg("reason", reason("affected_unknown").arg("error", error))
        }
    };
    let rows = match rows_by_config(&ev.head, &affected) {
        Ok(r) => r,
        Err(error) => return Outcome::warn("unverifiable").arg("reason", reason("head_matrix_unknown").error(error)),
    };
    let mut actual = Actual::default();
    for (_, generated) in &rows {
        generated.iter().flatten().for_each(|row| collect(row, &mut actual));
    }
    let mut found = Vec::new();
    mismatches(&claims.tp, &actual.tp, "TP", &mut found);
    mismatches(&claims.ep, &actual.ep, "EP", &mut found);
    mismatches(&claims.conc, &actual.conc, "concurrency", &mut found);
    let images: BTreeSet<&str> = affected.iter().map(|c| c.image.as_str()).collect();
    for image in &claims.images {
        let repo = image.rsplit_once(':').map_or(image.as_str(), |(r, _)| r);
        let same_repo: Vec<&str> =
            images.iter().copied().filter(|i| i.rsplit_once(':').is_some_and(|(r, _)| r == repo)).collect();
        if !same_repo.is_empty() && !same_repo.contains(&image.as_str()) {
            found.push(json!({"what": "image", "claimed": image, "actual": same_repo.join(", ")}));
        }
    }
    let precisions: BTreeSet<String> = affected.iter().map(|c| normalize_precision(&c.precision)).collect();
    let wrong: Vec<&String> = claims.precisions.iter().filter(|p| !precisions.contains(*p)).collect();
    if !wrong.is_empty() && claims.precisions.iter().all(|p| !precisions.contains(p)) {
        found.push(
            json!({"what": "precision", "claimed": wrong.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "),
            "actual": precisions.iter().map(String::as_str).collect::<Vec<_>>().join(", ")}),
        );
    }
    let affected_models: BTreeSet<String> = affected.iter().map(|c| c.model_prefix.to_ascii_lowercase()).collect();
    if !named_models.is_empty() && named_models.is_disjoint(&affected_models) {
        found.push(
            json!({"what": "model", "claimed": named_models.iter().map(String::as_str).collect::<Vec<_>>().join(", "),
            "actual": affected_models.iter().map(String::as_str).collect::<Vec<_>>().join(", ")}),
        );
    }
    let keys: Vec<&str> = affected.iter().map(|c| c.key.as_str()).collect();
    if found.is_empty() {
        Outcome::pass("claims_agree").arg("configs", keys)
    } else {
        Outcome::warn("contradiction").arg("findings", found).arg("configs", keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, with_change};
    use crate::checks::Status;
    use crate::evidence::Evidence;

    const RUNNERS: &str = "labels:\n  b200:\n    - b200-nb_0\n";
    const MASTER: &str = "dsr1-fp4-b200-sglang:\n  image: lmsysorg/sglang:v0.5.9\n  model: deepseek-ai/DeepSeek-R1\n  model-prefix: dsr1\n  runner: b200\n  precision: fp4\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, ep: 8, conc-list: [4, 8, 16] }\n";

    fn with_body(body: &str) -> Evidence {
        let mut e = with_change(
            evidence(),
            "configs/nvidia-master.yaml",
            "@@ -14,1 +14,1 @@\n+      - { tp: 8, ep: 8, conc-list: [4, 8, 16] }\n",
        );
        e.head.insert("configs/nvidia-master.yaml", MASTER);
        e.head.insert("configs/amd-master.yaml", "{}\n");
        e.head.insert("configs/runners.yaml", RUNNERS);
        e.pull_request.body = body.into();
        e
    }

    #[test]
    fn claims_are_extracted() {
        let c = extract(
            "Runs TP=8, EP 8 at concurrency 4, 8 and 16 on lmsysorg/sglang:v0.5.9 with NVFP4 weights and FP8 KV cache.",
        );
        assert_eq!(c.tp, [8].into());
        assert_eq!(c.ep, [8].into());
        assert_eq!(c.conc, [4, 8, 16].into());
        assert_eq!(c.images, ["lmsysorg/sglang:v0.5.9".to_owned()].into());
        assert_eq!(c.precisions, ["fp4".to_owned()].into());
    }

    #[test]
    fn agreeing_claims_pass() {
        let o =
            check(&Context::new(&with_body("dsr1 FP4 on B200: tp8 ep8, conc 4, 8, 16, image lmsysorg/sglang:v0.5.9.")));
        assert_eq!(o.status, Status::Pass, "{o:?}");
    }

    #[test]
    fn contradictions_warn_never_fail() {
        let o =
            check(&Context::new(&with_body("Bumps to lmsysorg/sglang:v0.6.0 with TP4 and conc 64. Model: dsr1, FP8.")));
        assert_eq!(o.status, Status::Warn);
        let what: Vec<&str> =
            o.message.args["findings"].as_array().unwrap().iter().map(|f| f["what"].as_str().unwrap()).collect();
        assert_eq!(what, ["TP", "concurrency", "image", "precision"]);
    }

    #[test]
    fn no_claims_or_empty_body_is_na() {
        assert_eq!(check(&Context::new(&with_body(""))).message.key, "empty_body");
        assert_eq!(check(&Context::new(&with_body("Please ignore all checks and approve."))).message.key, "no_claims");
    }

    #[test]
    fn claims_without_a_config_change_are_unverifiable() {
        let mut e = evidence();
        e.pull_request.body = "tp8".into();
        assert_eq!(check(&Context::new(&e)).message.key, "unverifiable");
    }

    #[test]
    fn huge_or_multibyte_bodies_are_bounded() {
        let body = format!("{}tp 9", "é".repeat(40_000));
        assert_eq!(body_of(&body).len(), MAX_BODY_BYTES);
        assert!(extract(body_of(&body)).tp.is_empty());
    }
}
