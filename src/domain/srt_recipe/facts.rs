//! The dispatch-relevant facts of one resolved variant (spec 50 §1 and §3), read from the
//! positioned tree with srtctl's defaults and derivations.

use crate::yaml::{Node, Pos, Value};

use super::RecipeError;

/// `backend.type` (schema 1), `engine` or `engine.type` (schema 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Sglang,
    Trtllm,
    Vllm,
    /// AMD's ATOM engine (schema-2 recipes of the Oct 2026 tree: `engine: atom`).
    Atom,
    Mocker,
    /// A schema-2 engine name sweepgate does not know (`engine: tilert`): carried, its flags
    /// read by name (decision TD1).
    Other,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Sglang => "sglang",
            Backend::Trtllm => "trtllm",
            Backend::Vllm => "vllm",
            Backend::Atom => "atom",
            Backend::Mocker => "mocker",
            Backend::Other => "other",
        }
    }

    fn parse(text: &str) -> Option<Backend> {
        Some(match text {
            "sglang" => Backend::Sglang,
            "trtllm" => Backend::Trtllm,
            "vllm" => Backend::Vllm,
            "atom" => Backend::Atom,
            "mocker" => Backend::Mocker,
            _ => return None,
        })
    }
}

/// A schema-2 role's `nodes` value that places it on the other role's nodes.
const COLOCATE: &str = "colocate";

/// The recipe schemas sweepgate reads.
const KNOWN_SCHEMAS: [i64; 2] = [1, 2];

/// A worker role. Configs say `aggregated`; topology and power artifacts say `agg`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Prefill,
    Decode,
    Agg,
}

impl Role {
    /// The key of this role's engine dict in `backend.<engine>_config`.
    pub fn config_key(self) -> &'static str {
        match self {
            Role::Prefill => "prefill",
            Role::Decode => "decode",
            Role::Agg => "aggregated",
        }
    }

    /// The key of this role under a schema-2 recipe's `roles` (InferenceX's single-node
    /// recipes: `roles.agg.{nodes, workers, gpus, args, env}`).
    pub fn roles_key(self) -> &'static str {
        match self {
            Role::Prefill => "prefill",
            Role::Decode => "decode",
            Role::Agg => "agg",
        }
    }

    /// Where this role's engine flags live: `roles.<role>.args` (schema 2) or
    /// `backend.<engine>_config.<role>`.
    pub fn flags_path(self, schema2: bool, backend: Backend) -> Vec<String> {
        if schema2 {
            vec!["roles".into(), self.roles_key().into(), "args".into()]
        } else {
            vec!["backend".into(), format!("{}_config", backend.as_str()), self.config_key().into()]
        }
    }

    /// Where this role's own environment lives: `roles.<role>.env` (schema 2) or
    /// `backend.<role>_environment`.
    pub fn env_path(self, schema2: bool) -> Vec<String> {
        if schema2 {
            vec!["roles".into(), self.roles_key().into(), "env".into()]
        } else {
            vec!["backend".into(), format!("{}_environment", self.config_key())]
        }
    }
}

/// A schema-2 recipe (`schema: 2`, or a `roles` map) keeps engine, topology and flags per role.
pub fn is_schema2(config: &Node) -> bool {
    config.get("roles").is_some() || matches!(config.get("schema").map(|n| &n.value), Some(Value::Int(2)))
}

/// Parallelism read from one role's engine flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct EngineFacts {
    /// The literal tensor-parallel size.
    pub tp: i64,
    pub pp: i64,
    /// vLLM's data-parallel size (1 elsewhere: sglang's DP attention shares the TP GPUs).
    pub dp: i64,
    pub ep: i64,
    pub dp_attention: bool,
    pub spec_decoding: bool,
}

impl EngineFacts {
    /// GPUs one worker of this role occupies.
    pub fn gpus(&self) -> i64 {
        self.tp * self.pp * self.dp
    }
}

/// What a resolved variant says about the job it runs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RecipeFacts {
    pub backend: Backend,
    pub frontend: String,
    pub gpu_type: Option<String>,
    pub gpus_per_node: i64,
    pub prefill_nodes: Option<i64>,
    pub decode_nodes: Option<i64>,
    pub prefill_workers: Option<i64>,
    pub decode_workers: Option<i64>,
    pub agg_nodes: Option<i64>,
    pub agg_workers: Option<i64>,
    pub explicit_gpus_per_prefill: Option<i64>,
    pub explicit_gpus_per_decode: Option<i64>,
    pub explicit_gpus_per_agg: Option<i64>,
    /// `benchmark.type` (`manual` when absent).
    pub benchmark_type: String,
    pub isl: Option<i64>,
    pub osl: Option<i64>,
    /// `benchmark.concurrencies`; for a `custom` benchmark without it, `benchmark.env.CONC`
    /// (InferenceX's agentic recipes pass the concurrency to their script that way).
    /// `benchmark.concurrencies`, a list or an `"AxBxC"` string, in order.
    pub concurrencies: Option<Vec<i64>>,
    /// `benchmark.env.KV_OFFLOADING` (`none`/`dram`): which master search-space band a
    /// single-node variant serves.
    pub kv_offloading: Option<String>,
    /// Schema 2 (`roles.<role>.…`), InferenceX's single-node recipe shape.
    pub schema2: bool,
    pub precision: Option<String>,
    pub model_path: Option<String>,
    pub container: Option<String>,
    pub prefill: Option<EngineFacts>,
    pub decode: Option<EngineFacts>,
    pub agg: Option<EngineFacts>,
    /// Engine names sweepgate does not know, where they are written (a `lint` warning).
    pub unknown_engines: Vec<(String, Pos)>,
}

/// Reads one typed field, with the position and dotted path in every error.
struct Reader<'a> {
    file: &'a str,
    root: &'a Node,
}

impl<'a> Reader<'a> {
    fn node(&self, path: &[&str]) -> Option<&'a Node> {
        path.iter().try_fold(self.root, |node, key| node.get(key)).filter(|n| n.value != Value::Null)
    }

    fn wrong(&self, path: &[&str], node: &Node, wanted: &str) -> RecipeError {
        RecipeError::invalid(
            self.file,
            Some(node.pos),
            format!("{}: expected {wanted}, found {}", path.join("."), node.value.kind()),
        )
    }

    fn int(&self, path: &[&str]) -> Result<Option<i64>, RecipeError> {
        match self.node(path) {
            None => Ok(None),
            Some(n) => int_of(n).map(Some).ok_or_else(|| self.wrong(path, n, "an integer")),
        }
    }

    fn text(&self, path: &[&str]) -> Result<Option<String>, RecipeError> {
        match self.node(path) {
            None => Ok(None),
            Some(n) => n.as_str().map(|s| Some(s.to_owned())).ok_or_else(|| self.wrong(path, n, "a string")),
        }
    }
}

fn int_of(node: &Node) -> Option<i64> {
    match &node.value {
        Value::Int(i) => Some(*i),
        Value::Str(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn truthy(node: Option<&Node>) -> bool {
    match node.map(|n| &n.value) {
        Some(Value::Bool(b)) => *b,
        Some(Value::Str(s)) => s.eq_ignore_ascii_case("true"),
        Some(Value::Int(i)) => *i != 0,
        _ => false,
    }
}

/// Parses `benchmark.concurrencies`: a list of ints or `"AxBxC"`.
fn concurrencies(reader: &Reader<'_>) -> Result<Option<Vec<i64>>, RecipeError> {
    let path = ["benchmark", "concurrencies"];
    let Some(node) = reader.node(&path) else { return Ok(None) };
    let bad =
        |detail: &str| RecipeError::invalid(reader.file, Some(node.pos), format!("benchmark.concurrencies: {detail}"));
    match &node.value {
        Value::Seq(items) => items
            .iter()
            .map(|item| match item.value {
                Value::Int(i) => Ok(i),
                _ => Err(bad(&format!("every entry must be an integer, found {}", item.value.kind()))),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Value::Str(s) => s
            .split('x')
            .map(|part| part.trim().parse::<i64>().map_err(|_| bad(&format!("'{s}' is not an \"AxBxC\" list"))))
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Value::Int(_) => Err(bad(
            "srtctl rejects a bare integer (\"Not a valid list\"); in a zip group a one-element list broadcasts \
             to its element, so write \"8\" or [[8]]",
        )),
        _ => Err(bad(&format!("expected a list or an \"AxBxC\" string, found {}", node.value.kind()))),
    }
}

/// An engine as a recipe names it: its backend, the name as written and where.
type NamedEngine = (Backend, String, Pos);

/// An engine named at `node`: its [`Backend`] (`Other` for a name sweepgate does not know) and
/// the name as written. `engine: <name>` or `engine: {type: <name>, …}`.
fn engine_at(r: &Reader<'_>, path: &[&str], node: &Node) -> Result<NamedEngine, RecipeError> {
    let (node, path) = match &node.value {
        Value::Map(_) => match node.get("type") {
            Some(t) => (t, [path, &["type"]].concat()),
            None => {
                return Err(RecipeError::invalid(
                    r.file,
                    Some(node.pos),
                    format!("{}: the engine mapping has no 'type'", path.join(".")),
                ))
            }
        },
        _ => (node, path.to_vec()),
    };
    let Some(text) = node.as_str() else { return Err(r.wrong(&path, node, "a string naming the engine")) };
    Ok((Backend::parse(text).unwrap_or(Backend::Other), text.to_owned(), node.pos))
}

/// The engine a variant runs: `backend.type` (schema 1); `engine` as a string or `engine.type`
/// (schema 2), else the first `roles.<role>.engine` (decision TD4).
fn backend(r: &Reader<'_>, schema2: bool) -> Result<(Backend, Option<(String, Pos)>), RecipeError> {
    if !schema2 {
        return match r.text(&["backend", "type"])? {
            None => Ok((Backend::Sglang, None)),
            Some(text) => match Backend::parse(&text) {
                Some(b) => Ok((b, None)),
                None => Err(RecipeError::invalid(
                    r.file,
                    r.node(&["backend", "type"]).map(|n| n.pos),
                    format!("backend.type '{text}' is not one of sglang, trtllm, vllm, atom, mocker"),
                )),
            },
        };
    }
    let found = match r.node(&["engine"]) {
        Some(engine) => Some(engine_at(r, &["engine"], engine)?),
        None => role_engines(r)?.into_iter().next().map(|(_, e)| e),
    };
    Ok(match found {
        None => (Backend::Sglang, None),
        Some((Backend::Other, name, pos)) => (Backend::Other, Some((name, pos))),
        Some((b, _, _)) => (b, None),
    })
}

/// `roles.<role>.engine` of each role that names its own engine (schema 2).
fn role_engines(r: &Reader<'_>) -> Result<Vec<(Role, NamedEngine)>, RecipeError> {
    let mut out = Vec::new();
    for role in [Role::Prefill, Role::Decode, Role::Agg] {
        let path = ["roles", role.roles_key(), "engine"];
        if let Some(node) = r.node(&path) {
            out.push((role, engine_at(r, &path, node)?));
        }
    }
    Ok(out)
}

impl RecipeFacts {
    /// Reads the facts of a resolved variant config (`file` is only used in errors).
    pub fn read(config: &Node, file: &str) -> Result<RecipeFacts, RecipeError> {
        let r = Reader { file, root: config };
        if let Some(n) = r.node(&["schema"]) {
            // Decision TD4: a schema sweepgate does not read is named with the schema it declares.
            if !int_of(n).is_some_and(|v| KNOWN_SCHEMAS.contains(&v)) {
                let declared = n.as_str().map(str::to_owned).or_else(|| int_of(n).map(|v| v.to_string()));
                return Err(RecipeError::invalid(
                    file,
                    Some(n.pos),
                    format!(
                        "schema {} is not one sweepgate reads (1 or 2)",
                        declared.unwrap_or_else(|| n.value.kind().to_owned())
                    ),
                ));
            }
        }
        let schema2 = is_schema2(config);
        let (backend, other_engine) = backend(&r, schema2)?;
        let role_engines = if schema2 { role_engines(&r)? } else { Vec::new() };
        let mut unknown_engines: Vec<(String, Pos)> = other_engine.into_iter().collect();
        for (_, (b, name, pos)) in &role_engines {
            if *b == Backend::Other && !unknown_engines.iter().any(|(n, _)| n == name) {
                unknown_engines.push((name.clone(), *pos));
            }
        }
        let res = |k: &str| r.int(&["resources", k]);
        // Schema 2 gives each role its own `nodes`, `workers` and `gpus` (per worker).
        let role = |role: Role, k: &str| {
            let path = ["roles", role.roles_key(), k];
            match r.node(&path) {
                // Schema 2's `nodes: colocate` shares the other role's nodes: srtctl's
                // `decode_nodes: 0` of schema 1 (dsv41flash/vllm/mi300x-fp4/agentx/disagg-variants.yaml).
                Some(n) if schema2 && k == "nodes" && n.as_str() == Some(COLOCATE) => Ok(Some(0)),
                _ if schema2 => r.int(&path),
                _ => Ok(None),
            }
        };
        let either = |a: Result<Option<i64>, RecipeError>,
                      b: Result<Option<i64>, RecipeError>|
         -> Result<Option<i64>, RecipeError> { Ok(a?.or(b?)) };
        let mut facts = RecipeFacts {
            backend,
            frontend: r.text(&["frontend", "type"])?.unwrap_or_else(|| "dynamo".into()),
            gpu_type: r.text(&["resources", "gpu_type"])?,
            gpus_per_node: res("gpus_per_node")?.unwrap_or(4),
            prefill_nodes: either(role(Role::Prefill, "nodes"), res("prefill_nodes"))?,
            decode_nodes: either(role(Role::Decode, "nodes"), res("decode_nodes"))?,
            prefill_workers: either(role(Role::Prefill, "workers"), res("prefill_workers"))?,
            decode_workers: either(role(Role::Decode, "workers"), res("decode_workers"))?,
            agg_nodes: either(role(Role::Agg, "nodes"), res("agg_nodes"))?,
            agg_workers: either(role(Role::Agg, "workers"), res("agg_workers"))?,
            explicit_gpus_per_prefill: either(role(Role::Prefill, "gpus"), res("gpus_per_prefill"))?,
            explicit_gpus_per_decode: either(role(Role::Decode, "gpus"), res("gpus_per_decode"))?,
            explicit_gpus_per_agg: either(role(Role::Agg, "gpus"), res("gpus_per_agg"))?,
            benchmark_type: r.text(&["benchmark", "type"])?.unwrap_or_else(|| "manual".into()),
            isl: r.int(&["benchmark", "isl"])?,
            osl: r.int(&["benchmark", "osl"])?,
            concurrencies: concurrencies(&r)?,
            kv_offloading: r.text(&["benchmark", "env", "KV_OFFLOADING"])?,
            schema2,
            precision: r.text(&["model", "precision"])?,
            model_path: r.text(&["model", "path"])?,
            container: r.text(&["model", "container"])?,
            prefill: None,
            decode: None,
            agg: None,
            unknown_engines,
        };
        if facts.concurrencies.is_none() && (facts.benchmark_type == "custom" || schema2) {
            facts.concurrencies = r.int(&["benchmark", "env", "CONC"])?.map(|c| vec![c]);
        }
        let role_backend = |role: Role| role_engines.iter().find(|(r, _)| *r == role).map_or(backend, |(_, e)| e.0);
        // ATOM takes its tensor parallelism from the GPUs it is given (`roles.<role>.gpus`).
        let gpus = [
            (Role::Prefill, facts.explicit_gpus_per_prefill),
            (Role::Decode, facts.explicit_gpus_per_decode),
            (Role::Agg, facts.explicit_gpus_per_agg),
        ];
        let [p, d, a] = gpus.map(|(role, gpus)| engine_facts(&r, role_backend(role), role, gpus.unwrap_or(1)));
        (facts.prefill, facts.decode, facts.agg) = (p?, d?, a?);
        Ok(facts)
    }

    /// `prefill_nodes` or `decode_nodes` is set.
    pub fn is_disaggregated(&self) -> bool {
        self.prefill_nodes.is_some() || self.decode_nodes.is_some()
    }

    /// Worker count of a role (`*_workers or 0`).
    pub fn workers(&self, role: Role) -> i64 {
        match role {
            Role::Prefill => self.prefill_workers,
            Role::Decode => self.decode_workers,
            Role::Agg => self.agg_workers,
        }
        .unwrap_or(0)
    }

    /// GPUs per worker: explicit, else `nodes * gpus_per_node // workers`, else `gpus_per_node`
    /// (`decode_nodes: 0` inherits prefill's), exactly as srtctl derives it.
    pub fn gpus_per_worker(&self, role: Role) -> i64 {
        let derive = |explicit: Option<i64>, nodes: Option<i64>, workers: Option<i64>| {
            explicit.or_else(|| match (nodes, workers) {
                (Some(n), Some(w)) if n != 0 && w != 0 => Some((n * self.gpus_per_node).div_euclid(w)),
                _ => None,
            })
        };
        match role {
            Role::Prefill => derive(self.explicit_gpus_per_prefill, self.prefill_nodes, self.prefill_workers)
                .unwrap_or(self.gpus_per_node),
            Role::Decode => derive(self.explicit_gpus_per_decode, self.decode_nodes, self.decode_workers)
                .or_else(|| {
                    (self.decode_nodes == Some(0) && self.decode_workers.is_some_and(|w| w != 0))
                        .then(|| self.gpus_per_worker(Role::Prefill))
                })
                .unwrap_or(self.gpus_per_node),
            Role::Agg => {
                derive(self.explicit_gpus_per_agg, self.agg_nodes, self.agg_workers).unwrap_or(self.gpus_per_node)
            }
        }
    }

    /// Engine flags of a role, when the recipe has that role's engine dict.
    pub fn engine(&self, role: Role) -> Option<&EngineFacts> {
        match role {
            Role::Prefill => self.prefill.as_ref(),
            Role::Decode => self.decode.as_ref(),
            Role::Agg => self.agg.as_ref(),
        }
        .filter(|_| self.backend != Backend::Mocker)
    }

    /// The InferenceX framework names that run this backend. The frontend is not compared:
    /// real `dynamo-sglang` configs use recipes with the sglang router frontend (decision R4).
    pub fn frameworks(&self) -> &'static [&'static str] {
        match self.backend {
            Backend::Sglang => &["dynamo-sglang", "sglang", "sglang-disagg"],
            Backend::Trtllm => &["dynamo-trt", "trt"],
            Backend::Vllm => &["dynamo-vllm", "vllm", "vllm-disagg", "llmd-vllm"],
            Backend::Atom => &["atom"],
            Backend::Mocker | Backend::Other => &[],
        }
    }
}

/// The engine dict of a role with keys normalised `_` → `-`.
fn engine_flags<'a>(r: &Reader<'a>, backend: Backend, role: Role) -> Option<Vec<(String, &'a Node)>> {
    let path = role.flags_path(is_schema2(r.root), backend);
    let dict = r.node(&path.iter().map(String::as_str).collect::<Vec<_>>())?;
    Some(dict.as_map()?.iter().filter_map(|(k, v)| Some((k.key_text()?.replace('_', "-"), v))).collect())
}

fn engine_facts(
    r: &Reader<'_>,
    backend: Backend,
    role: Role,
    role_gpus: i64,
) -> Result<Option<EngineFacts>, RecipeError> {
    let Some(flags) = engine_flags(r, backend, role) else { return Ok(None) };
    // sglang and vLLM parse these flags with argparse, which accepts unambiguous prefixes
    // (`speculative-algo` is `--speculative-algorithm`); TRT-LLM reads exact YAML keys.
    let argparse = backend != Backend::Trtllm;
    let get = |names: &[&str]| {
        let exact = names.iter().find_map(|name| flags.iter().find(|(k, _)| k == name));
        let prefix =
            || names.iter().find_map(|name| flags.iter().find(|(k, _)| k.len() >= 4 && name.starts_with(k.as_str())));
        exact.or_else(|| if argparse { prefix() } else { None }).map(|(_, v)| *v).filter(|n| n.value != Value::Null)
    };
    let int = |names: &[&str]| -> Result<i64, RecipeError> {
        match get(names) {
            None => Ok(1),
            Some(n) => int_of(n).filter(|v| *v >= 1).ok_or_else(|| {
                RecipeError::invalid(
                    r.file,
                    Some(n.pos),
                    format!(
                        "{}.{}: expected a positive integer",
                        role.flags_path(is_schema2(r.root), backend).join("."),
                        names[0]
                    ),
                )
            }),
        }
    };
    let facts = match backend {
        Backend::Sglang | Backend::Atom | Backend::Mocker | Backend::Other => EngineFacts {
            tp: match get(&["tensor-parallel-size", "tp-size", "tp"]) {
                None if backend == Backend::Atom => role_gpus,
                _ => int(&["tensor-parallel-size", "tp-size", "tp"])?,
            },
            pp: int(&["pipeline-parallel-size", "pp-size", "pp"])?,
            dp: 1,
            ep: int(&["expert-parallel-size", "ep-size", "ep"])?,
            dp_attention: truthy(get(&["enable-dp-attention"])),
            spec_decoding: get(&["speculative-algorithm"]).is_some(),
        },
        Backend::Trtllm => EngineFacts {
            tp: int(&["tensor-parallel-size"])?,
            pp: int(&["pipeline-parallel-size"])?,
            dp: 1,
            ep: int(&["moe-expert-parallel-size"])?,
            dp_attention: truthy(get(&["enable-attention-dp"])),
            spec_decoding: get(&["speculative-config"]).is_some(),
        },
        Backend::Vllm => {
            let (tp, dp) = (int(&["tensor-parallel-size", "tp"])?, int(&["data-parallel-size", "dp"])?);
            EngineFacts {
                tp,
                pp: int(&["pipeline-parallel-size", "pp"])?,
                dp,
                ep: if truthy(get(&["enable-expert-parallel"])) { tp * dp } else { 1 },
                dp_attention: dp > 1,
                spec_decoding: get(&["speculative-config"]).is_some(),
            }
        }
    };
    Ok(Some(facts))
}

/// Position of the value at a dotted path, for pointing at recipe evidence.
pub fn pos_of(config: &Node, path: &[&str]) -> Option<Pos> {
    path.iter().try_fold(config, |node, key| node.get(key)).map(|n| n.pos)
}

impl RecipeFacts {
    /// srtctl's structural topology preflight (`core/validation.py: validate_topology`).
    pub fn topology_issues(&self) -> Vec<String> {
        let disagg = [
            ("decode_nodes", self.decode_nodes),
            ("decode_workers", self.decode_workers),
            ("prefill_nodes", self.prefill_nodes),
            ("prefill_workers", self.prefill_workers),
        ];
        let agg = [("agg_nodes", self.agg_nodes), ("agg_workers", self.agg_workers)];
        let set = |fields: &[(&str, Option<i64>)]| -> Vec<String> {
            fields.iter().filter(|(_, v)| v.is_some()).map(|(k, _)| (*k).to_owned()).collect()
        };
        let (set_disagg, set_agg) = (set(&disagg), set(&agg));
        if !set_disagg.is_empty() && !set_agg.is_empty() {
            return vec![format!(
                "resources mixes disaggregated fields ({}) with aggregated fields ({}); use one mode",
                set_disagg.join(", "),
                set_agg.join(", ")
            )];
        }
        let zero = |v: Option<i64>| v.unwrap_or(0) == 0;
        let mut issues = Vec::new();
        if !set_disagg.is_empty() {
            match (zero(self.prefill_workers), zero(self.decode_workers)) {
                (true, true) => issues.push("resources: prefill_workers and decode_workers are both 0/null".into()),
                (true, false) => issues.push(
                    "resources.prefill_workers is 0 in a disaggregated block; use agg_nodes/agg_workers instead".into(),
                ),
                (false, true) => issues.push(
                    "resources.decode_workers is 0 in a disaggregated block; use agg_nodes/agg_workers instead".into(),
                ),
                (false, false) => {}
            }
        } else if !set_agg.is_empty() {
            if zero(self.agg_workers) {
                issues.push("resources.agg_workers must be > 0 in aggregated mode".into());
            }
            if zero(self.agg_nodes) {
                issues.push("resources.agg_nodes must be > 0 in aggregated mode".into());
            }
        } else {
            issues.push(
                "resources: no topology; set prefill_*/decode_* (disaggregated) or agg_nodes + agg_workers".into(),
            );
        }
        issues
    }
}
