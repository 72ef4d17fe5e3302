//! Precision facts of a speculative-decoding config (Check 13; issue 34 item 5; decision RV5):
//! what a checkpoint ships at (its Hugging Face `config.json`), and what an engine setting of the
//! effective recipe does to the precision of the draft model or head it serves.
//!
//! Upstream forbids every submission-side precision conversion of the draft, not only online
//! quantization (InferenceX #3283, refined by #3348 as "serve the draft as it ships"): a setting
//! that restates what the draft ships at is not a conversion; any other value is.

use serde_json::Value;

/// The precision a checkpoint ships at, from its `config.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shipped {
    /// `quantization_config.quant_method` (`fp8`, `modelopt`, `compressed-tensors`, …).
    pub quantization: Option<String>,
    /// `torch_dtype`, else `dtype` (`bfloat16`, …).
    pub dtype: Option<String>,
}

/// Lower case, `_` and `-` alike.
fn normal(text: &str) -> String {
    text.trim().to_ascii_lowercase().replace('_', "-")
}

/// A torch dtype by its canonical name (`bf16` and `bfloat16` are one dtype).
fn canonical_dtype(text: &str) -> String {
    match normal(text).trim_start_matches("torch.") {
        "bf16" | "bfloat16" => "bfloat16".into(),
        "fp16" | "half" | "float16" => "float16".into(),
        "fp32" | "float" | "float32" => "float32".into(),
        other => other.to_owned(),
    }
}

/// Values that ask the engine for the checkpoint's own precision.
const DEFAULTS: [&str; 2] = ["auto", "none"];
/// Draft-quantization values that serve the draft unquantized (SGLang's `unquant`).
const UNQUANTIZED: [&str; 2] = ["unquant", "none"];

impl Shipped {
    pub fn of(config: &Value) -> Shipped {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        Shipped {
            quantization: text(config.get("quantization_config").and_then(|q| q.get("quant_method"))),
            dtype: text(config.get("torch_dtype").or_else(|| config.get("dtype"))),
        }
    }

    /// The one word a report names: the quantization method, else the dtype.
    pub fn label(&self) -> Option<&str> {
        self.quantization.as_deref().or(self.dtype.as_deref())
    }

    /// Whether a quantization setting keeps the checkpoint as it ships: the method it ships
    /// quantized with (`modelopt_fp4` names `modelopt`'s FP4 checkpoints), or an unquantized
    /// load of a checkpoint that ships unquantized.
    pub fn restates_quantization(&self, value: &str) -> bool {
        let value = normal(value);
        match &self.quantization {
            Some(method) => {
                let method = normal(method);
                value == method || value.starts_with(&format!("{method}-"))
            }
            None => self.dtype.is_some() && UNQUANTIZED.contains(&value.as_str()),
        }
    }

    /// Whether a dtype setting keeps the checkpoint as it ships: `auto`, or the dtype it ships.
    pub fn restates_dtype(&self, value: &str) -> bool {
        DEFAULTS.contains(&normal(value).as_str())
            || self.dtype.as_deref().is_some_and(|d| canonical_dtype(d) == canonical_dtype(value))
    }
}

/// What an engine setting can do to the draft's precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// `SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE`: the named prohibition; enabled, it is a violation.
    NamedFlag,
    /// `SGLANG_GLM_NEXTN_MOE_PTPC`: enabled, it quantizes the NextN head's computation.
    DraftEnvFlag,
    /// A quantization of the draft itself (`--speculative-draft-model-quantization`).
    DraftQuantization,
    /// A dtype or KV-cache dtype of the draft itself (`--speculative-draft-model-dtype`, …).
    DraftDtype,
    /// A speculative config (vLLM `--speculative-config`) whose fields may set the draft's
    /// quantization or dtype.
    SpeculativeConfig,
    /// ATOM's `--online_quant_config`: a quantization of the whole checkpoint whose
    /// `exclude_layer` patterns must cover every draft layer (13.h).
    OnlineQuantConfig,
    /// A quantization of the whole checkpoint: it reaches an embedded head unless excluded.
    CheckpointQuantization,
    /// A dtype of the whole checkpoint: it reaches an embedded head.
    CheckpointDtype,
}

/// The effect of a setting by its name (`--flag`, a recipe key, or an environment variable).
/// A KV-cache dtype of the whole deployment has none: upstream allows a KV dtype applied to
/// target and draft alike (CONTRIBUTING "Draft-model precision").
pub fn effect_of(name: &str) -> Option<Effect> {
    if name == "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE" {
        return Some(Effect::NamedFlag);
    }
    if name == "SGLANG_GLM_NEXTN_MOE_PTPC" {
        return Some(Effect::DraftEnvFlag);
    }
    let flag = normal(name.trim_start_matches('-'));
    match flag.as_str() {
        "speculative-draft-model-quantization" => Some(Effect::DraftQuantization),
        "speculative-draft-model-dtype"
        | "speculative-draft-dtype"
        | "speculative-draft-torch-dtype"
        | "speculative-draft-model-torch-dtype"
        | "speculative-draft-kv-cache-dtype"
        | "speculative-draft-model-kv-cache-dtype" => Some(Effect::DraftDtype),
        "speculative-config" => Some(Effect::SpeculativeConfig),
        "online-quant-config" => Some(Effect::OnlineQuantConfig),
        "quantization" => Some(Effect::CheckpointQuantization),
        "dtype" | "torch-dtype" => Some(Effect::CheckpointDtype),
        _ => None,
    }
}

/// The precision fields a speculative config sets, `(field, value)`: `quantization`, `dtype`,
/// `torch_dtype`, `kv_cache_dtype` with a value other than null or `auto`. The config is JSON (a
/// flag's value, or a recipe mapping the launch model renders as JSON).
pub fn speculative_config_fields(config: &str) -> Vec<(String, String)> {
    let Some(Value::Object(fields)) = speculative_config(config) else {
        return Vec::new();
    };
    fields
        .iter()
        .filter(|(k, _)| matches!(normal(k).as_str(), "quantization" | "dtype" | "torch-dtype" | "kv-cache-dtype"))
        .filter_map(|(k, v)| {
            let value = match v {
                Value::Null => return None,
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (!DEFAULTS.contains(&normal(&value).as_str())).then(|| (k.clone(), value))
        })
        .collect()
}

/// A speculative config's JSON, as a flag's value (quoted or not) or a rendered recipe mapping.
fn speculative_config(config: &str) -> Option<Value> {
    serde_json::from_str::<Value>(config.trim().trim_matches('\'')).ok()
}

/// The separate draft checkpoint a speculative config names (`model`).
pub fn speculative_config_model(config: &str) -> Option<String> {
    speculative_config(config)?.get("model").and_then(Value::as_str).map(str::to_owned)
}

/// An ATOM online quantization config: the scheme applied to the whole checkpoint and the module
/// patterns (fnmatch globs) it leaves out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnlineQuant {
    /// `global_quant_config`; `None` when it quantizes nothing (absent, empty, `none`).
    pub scheme: Option<String>,
    pub exclude: Vec<String>,
}

/// Module names of one layer a pattern must match to leave the whole layer out: attention, a
/// routed expert, the router gate, and the MTP block's own projections and head. A pattern that
/// excludes only some of them (experts, a gate) leaves the rest quantized.
const LAYER_MODULES: [&str; 6] = [
    "self_attn.q_proj",
    "mlp.experts.0.gate_proj",
    "mlp.gate",
    "mlp.shared_experts.down_proj",
    "eh_proj",
    "shared_head.head",
];

impl OnlineQuant {
    /// The config's JSON (`global_quant_config`, `exclude_layer`); `None` when the text is not a
    /// JSON object (a file name, say: what it holds is not in the evidence).
    pub fn parse(text: &str) -> Option<OnlineQuant> {
        let config = serde_json::from_str::<Value>(text.trim().trim_matches('\'')).ok().filter(Value::is_object)?;
        let scheme = config
            .get("global_quant_config")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty() && !DEFAULTS.contains(&normal(s).as_str()))
            .map(str::to_owned);
        let exclude = match config.get("exclude_layer") {
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
            Some(Value::String(one)) => vec![one.clone()],
            _ => Vec::new(),
        };
        Some(OnlineQuant { scheme, exclude })
    }

    /// The draft layers some module of which no `exclude_layer` pattern matches (fnmatch, as
    /// ATOM matches them): the scheme reaches them.
    pub fn uncovered(&self, layers: &[u64]) -> Vec<u64> {
        if self.scheme.is_none() {
            return Vec::new();
        }
        let matchers: Vec<globset::GlobMatcher> =
            self.exclude.iter().filter_map(|p| globset::Glob::new(p).ok()).map(|g| g.compile_matcher()).collect();
        layers
            .iter()
            .copied()
            .filter(|layer| {
                LAYER_MODULES.iter().any(|m| !matchers.iter().any(|g| g.is_match(format!("model.layers.{layer}.{m}"))))
            })
            .collect()
    }
}

/// The indices of a checkpoint's embedded draft (MTP/NextN) layers: they follow its
/// `num_hidden_layers` target layers, `num_nextn_predict_layers` of them (DeepSeek, GLM).
/// `None` when the config does not say.
pub fn draft_layers(config: &Value) -> Option<Vec<u64>> {
    let target = config.get("num_hidden_layers").and_then(Value::as_u64)?;
    let draft = config.get("num_nextn_predict_layers").and_then(Value::as_u64).filter(|n| *n > 0 && *n <= 16)?;
    Some((target..target + draft).collect())
}

/// Whether a draft-quantization value serves the draft unquantized (SGLang's `unquant`).
pub fn unquantizes(value: &str) -> bool {
    UNQUANTIZED.contains(&normal(value).as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_checkpoint_ships_its_quantization_method_else_its_dtype() {
        let fp4 = Shipped::of(&json!({"torch_dtype": "bfloat16", "quantization_config": {"quant_method": "modelopt"}}));
        assert_eq!(fp4.label(), Some("modelopt"));
        let bf16 = Shipped::of(&json!({"dtype": "bfloat16"}));
        assert_eq!(bf16.label(), Some("bfloat16"));
        assert_eq!(Shipped::of(&json!({})).label(), None);
    }

    /// A setting that restates the shipped precision converts nothing; any other value does, in
    /// either direction (an unquantized load of a quantized checkpoint too).
    #[test]
    fn only_a_restating_setting_keeps_the_checkpoint_as_it_ships() {
        let fp8 = Shipped::of(&json!({"torch_dtype": "bfloat16", "quantization_config": {"quant_method": "fp8"}}));
        assert!(fp8.restates_quantization("fp8") && fp8.restates_quantization("FP8"));
        assert!(!fp8.restates_quantization("unquant"), "an upcast is a conversion");
        assert!(!fp8.restates_quantization("quark_mxfp4"));
        let modelopt = Shipped::of(&json!({"quantization_config": {"quant_method": "modelopt"}}));
        assert!(modelopt.restates_quantization("modelopt_fp4"));
        assert!(!modelopt.restates_quantization("fp8"));
        let bf16 = Shipped::of(&json!({"torch_dtype": "bfloat16"}));
        assert!(bf16.restates_quantization("unquant"));
        assert!(!bf16.restates_quantization("fp8"));
        assert!(!Shipped::default().restates_quantization("unquant"), "unknown is never restated");
        assert!(bf16.restates_dtype("bf16") && bf16.restates_dtype("auto") && bf16.restates_dtype("torch.bfloat16"));
        assert!(!bf16.restates_dtype("float16") && !bf16.restates_dtype("float32"));
        assert!(Shipped::default().restates_dtype("auto") && !Shipped::default().restates_dtype("bfloat16"));
    }

    #[test]
    fn settings_are_classed_by_name_in_every_spelling() {
        assert_eq!(effect_of("--speculative-draft-model-quantization"), Some(Effect::DraftQuantization));
        assert_eq!(effect_of("speculative_draft_model_quantization"), Some(Effect::DraftQuantization));
        assert_eq!(effect_of("--speculative-draft-kv-cache-dtype"), Some(Effect::DraftDtype));
        assert_eq!(effect_of("--speculative-config"), Some(Effect::SpeculativeConfig));
        assert_eq!(effect_of("--online_quant_config"), Some(Effect::OnlineQuantConfig));
        assert_eq!(effect_of("--quantization"), Some(Effect::CheckpointQuantization));
        assert_eq!(effect_of("--dtype"), Some(Effect::CheckpointDtype));
        assert_eq!(effect_of("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"), Some(Effect::NamedFlag));
        assert_eq!(effect_of("SGLANG_GLM_NEXTN_MOE_PTPC"), Some(Effect::DraftEnvFlag));
        assert_eq!(effect_of("--kv-cache-dtype"), None, "a KV dtype of target and draft alike is allowed");
        assert_eq!(effect_of("--tp"), None);
    }

    /// Upstream's example (InferenceX #3205, `glm5.2_fp4_mi355x_atom_mtp.sh` at e35574e, quoted in
    /// the prompt's Check 13): `model.layers.78.*` is the MTP exclusion of a 78-layer checkpoint;
    /// without it `ptpc_fp8` reaches the head, and excluding only its experts does not cover it.
    #[test]
    fn an_online_quant_config_must_exclude_every_draft_layer() {
        let glm = json!({"num_hidden_layers": 78, "num_nextn_predict_layers": 1});
        let layers = draft_layers(&glm).unwrap();
        assert_eq!(layers, [78]);
        let upstream = r#"'{"global_quant_config":"ptpc_fp8","exclude_layer":["lm_head","model.embed_tokens","*.mlp.gate","model.layers.[0-9].mlp.*expert*","model.layers.[1-6][0-9].mlp.*expert*","model.layers.7[0-7].mlp.*expert*","model.layers.78.*"]}'"#;
        let config = OnlineQuant::parse(upstream).unwrap();
        assert_eq!(config.scheme.as_deref(), Some("ptpc_fp8"));
        assert!(config.uncovered(&layers).is_empty());
        let removed = upstream.replace(r#","model.layers.78.*""#, "");
        assert_eq!(OnlineQuant::parse(&removed).unwrap().uncovered(&layers), [78]);
        let experts_only = upstream.replace("model.layers.78.*", "model.layers.78.mlp.*expert*");
        assert_eq!(OnlineQuant::parse(&experts_only).unwrap().uncovered(&layers), [78]);
        let broad = r#"{"global_quant_config":"ptpc_fp8","exclude_layer":["model.layers.7[0-9].*"]}"#;
        assert!(OnlineQuant::parse(broad).unwrap().uncovered(&layers).is_empty());
        assert!(OnlineQuant::parse(r#"{"global_quant_config":"none"}"#).unwrap().uncovered(&layers).is_empty());
        assert_eq!(OnlineQuant::parse("/configs/ptpc.json"), None, "a file name is not the config");
        assert_eq!(draft_layers(&json!({"num_hidden_layers": 78})), None, "no MTP layer count, no mapping");
    }

    #[test]
    fn a_speculative_config_names_its_precision_fields() {
        let fields = speculative_config_fields(r#"{"method": "mtp", "quantization": "fp8", "kv_cache_dtype": "auto"}"#);
        assert_eq!(fields, [("quantization".to_owned(), "fp8".to_owned())]);
        assert!(speculative_config_fields(
            r#"{"method":"dspark","num_speculative_tokens":5,"draft_sample_method":"probabilistic"}"#
        )
        .is_empty());
        assert!(speculative_config_fields("not json").is_empty());
        let eagle = r#"'{"method":"eagle3","model":"Inferact/MiniMax-M3-EAGLE3-GQA","num_speculative_tokens":3}'"#;
        assert_eq!(speculative_config_model(eagle).as_deref(), Some("Inferact/MiniMax-M3-EAGLE3-GQA"));
        assert!(unquantizes("unquant") && !unquantizes("fp8"));
    }
}
