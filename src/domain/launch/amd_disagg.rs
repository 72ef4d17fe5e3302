//! AMD's disaggregated launch chain (issue 33 item 2). A benchmark script `cd`s into
//! `benchmarks/multi_node/amd_utils` and runs `submit.sh`, which `sbatch`es `job.slurm`; its
//! container runs `server.sh`, which sources `server_<engine>.sh`. Those render the engine's
//! flags with Python from a per-model table that `job.slurm` picks by `ENGINE` (the config's
//! `framework`): `models.yaml` (SGLang), `models_atom.yaml` (ATOM), `models_vllm.yaml` (vLLM).
//!
//! The table is the truth and the renderers are plumbing (decision PM11): the settings of each
//! role are read from the table entry the job selects, as the schema comment at the top of each
//! table and the renderer that consumes it define them, for each search-space row's prefill and
//! decode parallelism and `DECODE_MTP_SIZE`.

use std::collections::BTreeMap;

use super::settings::{add, dead_lines, flag_pairs, scalar_text, words, RoleSettings, Setting, SettingKind};
use super::shell::{logical_lines, ScriptValues};
use crate::domain::master_config::{parallelism_label, FixedSpaces, MasterConfig, Worker};
use crate::repo::MemTree;
use crate::yaml::{self, Node, Value};

/// Most entries of a `cuda_graph_bs_range` expanded into a value (a wider range stays written).
const MAX_RANGE: i64 = 1024;

/// A script's submission of the disaggregated job: the folder it runs `submit.sh` from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    /// Repository path of the folder (`benchmarks/multi_node/amd_utils`).
    pub dir: String,
    /// `script:line` of the `submit.sh` call.
    pub at: String,
}

/// Why a submitted job's settings could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableGap {
    /// `job.slurm` names no table for this engine, or the table is not in the tree.
    NoTable {
        engine: String,
        dir: String,
    },
    Unparsable {
        path: String,
        error: String,
    },
    /// The table has no entry for the model (under any name the renderer tries).
    NoEntry {
        path: String,
        tried: Vec<String>,
    },
}

/// The `submit.sh` call of a script whose live lines `cd` into a repository folder first.
pub fn submission(text: &str, script: &str) -> Option<Submission> {
    let mut dir: Option<String> = None;
    for (line, logical) in logical_lines(text) {
        let w = words(&logical);
        if w.first().map(String::as_str) == Some("cd") {
            dir = w.get(1).and_then(|d| workspace_path(d));
            continue;
        }
        let submits = logical
            .split_whitespace()
            .map(|t| t.trim_matches(|c| matches!(c, '"' | '\'' | '(' | ')')))
            .any(|t| t == "./submit.sh" || t == "submit.sh");
        if let (true, Some(dir)) = (submits, &dir) {
            return Some(Submission { dir: dir.clone(), at: format!("{script}:{line}") });
        }
    }
    None
}

/// `$GITHUB_WORKSPACE/<path>` as a repository path.
fn workspace_path(written: &str) -> Option<String> {
    let rest = written.strip_prefix("$GITHUB_WORKSPACE/").or_else(|| written.strip_prefix("${GITHUB_WORKSPACE}/"))?;
    (!rest.is_empty() && !rest.contains('$') && !rest.split('/').any(|p| p == "..")).then(|| rest.to_owned())
}

/// The table `job.slurm` reads for `engine`: the `MODELS_YAML="$(pwd)/<file>"` assignment its
/// `if [[ "$ENGINE" == "<x>" ]]` chain leaves live for that engine (`dead_lines`, decision PM8).
fn table_path(job: &str, dir: &str, engine: &str) -> Option<String> {
    let lines = logical_lines(job);
    let dead = dead_lines(&lines, &[("ENGINE", engine)]);
    lines
        .iter()
        .filter(|(number, _)| !dead.contains(number))
        .find_map(|(_, line)| line.trim().strip_prefix("MODELS_YAML=\"$(pwd)/")?.strip_suffix('"').map(str::to_owned))
        .map(|file| format!("{dir}/{file}"))
}

/// One search-space row as the job sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisaggRow {
    pub prefill: (i64, i64, bool),
    pub decode: (i64, i64, bool),
    /// `DECODE_MTP_SIZE` (the decode worker's additional settings; 0 when unset).
    pub mtp: i64,
    pub agentic: bool,
}

impl DisaggRow {
    pub fn label(&self) -> String {
        let role = |(tp, ep, dpa): (i64, i64, bool)| {
            let mut l = parallelism_label(tp, ep);
            if dpa {
                l.push_str(" DPA");
            }
            l
        };
        let mut label = format!("P {} D {}", role(self.prefill), role(self.decode));
        if self.mtp > 0 {
            label.push_str(&format!(" MTP{}", self.mtp));
        }
        label
    }
}

fn mtp_size(w: &Worker) -> i64 {
    w.additional_settings
        .iter()
        .flatten()
        .filter_map(|s| s.strip_prefix("DECODE_MTP_SIZE="))
        .find_map(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// The distinct prefill/decode rows of a multinode config.
pub fn rows(master: &MasterConfig) -> Vec<DisaggRow> {
    let role = |w: &Worker| (w.tp, w.ep, w.dp_attn);
    let mut out: Vec<DisaggRow> = Vec::new();
    let mut push = |row: DisaggRow| {
        if !out.contains(&row) {
            out.push(row);
        }
    };
    for block in &master.fixed {
        if let FixedSpaces::Multi(spaces) = &block.search_space {
            for s in spaces {
                push(DisaggRow {
                    prefill: role(&s.prefill),
                    decode: role(&s.decode),
                    mtp: mtp_size(&s.decode),
                    agentic: false,
                });
            }
        }
    }
    for block in &master.agentic {
        for s in &block.search_space {
            if let (Some(p), Some(d)) = (&s.prefill, &s.decode) {
                push(DisaggRow { prefill: role(p), decode: role(d), mtp: mtp_size(d), agentic: true });
            }
        }
    }
    out
}

/// The table entry a job reads and the file it is in.
pub struct TableEntry {
    pub path: String,
    pub key: String,
    node: Node,
    /// The values the folder's `env.sh` assigns (a `chunked_prefill_size` formula reads them).
    env: ScriptValues,
}

/// The table entry `submission`'s job reads for a config of `engine` serving `model`.
pub fn table_entry(
    tree: &MemTree,
    submission: &Submission,
    engine: &str,
    model: &str,
    agentic: bool,
) -> Result<TableEntry, TableGap> {
    let dir = &submission.dir;
    let no_table = || TableGap::NoTable { engine: engine.to_owned(), dir: dir.clone() };
    let job = tree.text(&format!("{dir}/job.slurm")).ok_or_else(no_table)?;
    let path = table_path(job, dir, engine).ok_or_else(no_table)?;
    let text = tree.text(&path).ok_or_else(no_table)?;
    let root =
        yaml::parse(text, &path).map_err(|e| TableGap::Unparsable { path: path.clone(), error: e.to_string() })?;
    let name = model.rsplit('/').next().unwrap_or(model);
    // SGLang's renderer tries `<model>-AgentX` / `<model>-DI` first; the others read the bare name.
    let mut tried = Vec::new();
    if is_sglang_table(&root) {
        tried.push(format!("{name}-{}", if agentic { "AgentX" } else { "DI" }));
    }
    tried.push(name.to_owned());
    let Some((key, node)) = tried.iter().find_map(|k| root.get(k).map(|n| (k.clone(), n.clone()))) else {
        return Err(TableGap::NoEntry { path, tried });
    };
    let env = tree.text(&format!("{dir}/env.sh")).map(ScriptValues::of).unwrap_or_default();
    Ok(TableEntry { path, key, node, env })
}

fn is_sglang_table(root: &Node) -> bool {
    root.as_map().is_some_and(|m| m.iter().any(|(_, v)| v.get("base_flags").is_some()))
}

/// A table value as written (`None` when empty or null).
fn text(node: &Node) -> Option<String> {
    scalar_text(node).filter(|t| !t.is_empty())
}

fn truthy(node: Option<&Node>) -> Option<bool> {
    match node.map(|n| &n.value) {
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => node.and_then(text).map(|t| matches!(t.to_ascii_lowercase().as_str(), "true" | "1")),
        None => None,
    }
}

/// Settings of one role being read from the table.
struct RoleReader<'a> {
    path: &'a str,
    settings: BTreeMap<String, Setting>,
}

impl RoleReader<'_> {
    fn flag(&mut self, name: &str, value: String, node: &Node) {
        let at = format!("{}:{}", self.path, node.pos.line);
        add(&mut self.settings, name.to_owned(), SettingKind::Flag, value, at);
    }

    /// A flag string (`"--a 1 --b"`): each flag with the word after it, `true` when none.
    fn flags(&mut self, node: Option<&Node>) {
        if let Some((node, written)) = node.and_then(|n| Some((n, text(n)?))) {
            self.flag_string(&written, node);
        }
    }

    /// The flags of `written`, at `node`'s line.
    fn flag_string(&mut self, written: &str, node: &Node) {
        for (name, value) in flag_pairs(&words(written), |w| !w.starts_with("--")) {
            self.flag(&name, value, node);
        }
    }

    /// Space-separated `KEY=VALUE` pairs exported into the server's environment.
    fn envs(&mut self, node: Option<&Node>) {
        let Some(node) = node else { return };
        let Some(written) = text(node) else { return };
        for pair in words(&written) {
            if let Some((k, v)) = pair.split_once('=') {
                let at = format!("{}:{}", self.path, node.pos.line);
                add(&mut self.settings, k.to_owned(), SettingKind::Env, v.to_owned(), at);
            }
        }
    }

    /// `key` of `block` as flag `name`.
    fn value(&mut self, block: Option<&Node>, key: &str, name: &str) {
        if let Some(node) = block.and_then(|b| b.get(key)) {
            if let Some(v) = text(node) {
                self.flag(name, v, node);
            }
        }
    }

    /// `key` of `block`, a boolean, as the valueless flag `name` when true.
    fn switch(&mut self, block: Option<&Node>, key: &str, name: &str) {
        if let Some(node) = block.and_then(|b| b.get(key)) {
            if truthy(Some(node)) == Some(true) {
                self.flag(name, "true".to_owned(), node);
            }
        }
    }
}

/// Per role (`prefill`, `decode`), the engine settings `row` runs with.
pub fn role_settings(entry: &TableEntry, row: &DisaggRow) -> Vec<RoleSettings> {
    let roles = [("prefill", row.prefill), ("decode", row.decode)];
    roles
        .into_iter()
        .map(|(role, (tp, ep, dpa))| {
            let mut r = RoleReader { path: &entry.path, settings: BTreeMap::new() };
            let m = &entry.node;
            if m.get("base_flags").is_some() {
                sglang_role(&mut r, entry, role, (tp, ep != 1, dpa), row);
            } else if m.get("prefill_flags").is_some() || m.get("decode_flags").is_some() {
                r.envs(m.get("env"));
                r.flags(m.get(&format!("{role}_flags")));
            } else {
                atom_role(&mut r, m, role, (ep != 1, dpa), row.mtp);
            }
            RoleSettings {
                source: entry.path.clone(),
                role: if role == "prefill" { "prefill" } else { "decode" },
                variants: vec![entry.key.clone()],
                concurrencies: Default::default(),
                settings: r.settings,
            }
        })
        .collect()
}

/// `server_sglang.sh`'s `build_server_config`: parallelism, `base_flags`, `ep_flags` when EP
/// is on, `mtp_flags` and the step counts when `DECODE_MTP_SIZE > 0` (both roles), `dp_flags`
/// when DP attention is on, then the role's own block (`dp`, `ep_only` or `no_dp`).
fn sglang_role(r: &mut RoleReader, entry: &TableEntry, role: &str, (tp, ep, dpa): (i64, bool, bool), row: &DisaggRow) {
    let m = &entry.node;
    let at = m.get("base_flags").unwrap_or(m);
    r.flag("--tp-size", tp.to_string(), at);
    if ep {
        r.flag("--ep-size", tp.to_string(), at);
    }
    if dpa {
        r.flag("--dp-size", tp.to_string(), at);
    }
    r.flags(m.get("base_flags"));
    if ep {
        r.flags(m.get("ep_flags"));
    }
    if row.mtp > 0 {
        if let Some(node) = m.get("mtp_flags") {
            r.flags(Some(node));
            r.flag("--speculative-num-steps", row.mtp.to_string(), node);
            r.flag("--speculative-num-draft-tokens", (row.mtp + 1).to_string(), node);
        }
    }
    if dpa {
        r.flags(m.get("dp_flags"));
    }
    let block = m.get(role);
    let sub = match (role, dpa, ep) {
        (_, true, _) => "dp",
        ("decode", false, true) => "ep_only",
        _ => "no_dp",
    };
    let mode = block.and_then(|b| b.get(sub));
    r.value(block, "mem_fraction_static", "--mem-fraction-static");
    r.value(mode, "max_running_requests", "--max-running-requests");
    if role == "prefill" {
        if let Some(node) = mode.and_then(|b| b.get("chunked_prefill_size")) {
            r.flag("--chunked-prefill-size", formula(node, entry, tp), node);
        }
        if truthy(block.and_then(|b| b.get("disable_cuda_graph"))) == Some(true) {
            r.switch(block, "disable_cuda_graph", "--disable-cuda-graph");
        } else {
            graph_sizes(r, mode);
        }
        // Agentic runs keep the radix cache (the renderer strips the flag).
        if !row.agentic {
            r.switch(block, "disable_radix_cache", "--disable-radix-cache");
        }
        r.value(mode, "max_total_tokens", "--max-total-tokens");
        r.switch(mode, "enable_two_batch_overlap", "--enable-two-batch-overlap");
    } else {
        graph_sizes(r, mode);
        r.switch(block, "prefill_round_robin_balance", "--prefill-round-robin-balance");
        r.switch(block, "disagg_decode_enable_radix_cache", "--disaggregation-decode-enable-radix-cache");
    }
    r.value(mode, "context_length", "--context-length");
}

/// `--cuda-graph-bs`: `cuda_graph_bs` as written, or `cuda_graph_bs_range` (`"1-128"`) as
/// the `seq` the renderer expands it to.
fn graph_sizes(r: &mut RoleReader, mode: Option<&Node>) {
    if let Some(node) = mode.and_then(|b| b.get("cuda_graph_bs")) {
        if let Some(v) = text(node) {
            r.flag("--cuda-graph-bs", v, node);
        }
    } else if let Some(node) = mode.and_then(|b| b.get("cuda_graph_bs_range")) {
        let Some(written) = text(node) else { return };
        let range = written
            .split_once('-')
            .and_then(|(s, e)| Some((s.trim().parse::<i64>().ok()?, e.trim().parse::<i64>().ok()?)));
        let value = match range {
            Some((s, e)) if s <= e && e - s < MAX_RANGE => (s..=e).map(|i| i.to_string()).collect::<Vec<_>>().join(" "),
            _ => written,
        };
        r.flag("--cuda-graph-bs", value, node);
    }
}

/// A `chunked_prefill_size` (an integer, or a product of names the renderer resolves from the
/// environment): the role's TP size from the row, the rest from `env.sh` where every assignment
/// gives the name one integer; otherwise it stays an unresolved `$((…))`.
fn formula(node: &Node, entry: &TableEntry, tp: i64) -> String {
    let Some(written) = text(node) else { return String::new() };
    if written.parse::<i64>().is_ok() {
        return written;
    }
    let factor = |f: &str| -> Option<i64> {
        match f {
            "PREFILL_TP_SIZE" | "DECODE_TP_SIZE" => Some(tp),
            name => name.parse().ok().or_else(|| {
                let values = entry.env.expand(&format!("${name}"), &[], 2).ok()?;
                let [value] = values.as_slice() else { return None };
                value.parse().ok()
            }),
        }
    };
    written
        .split('*')
        .map(str::trim)
        .try_fold(1i64, |acc, f| acc.checked_mul(factor(f)?))
        .map_or_else(|| format!("$(({written}))"), |product| product.to_string())
}

/// `server_atom.sh`: the environment, the mode flags (EP+DPA or TP+DPA, the role's own key
/// before the shared one), the draft and KV-cache flags, the online quantization of the mode,
/// and the tuning keys the schema comment maps to flags.
fn atom_role(r: &mut RoleReader, m: &Node, role: &str, (ep, dpa): (bool, bool), mtp: i64) {
    r.envs(m.get("env"));
    if dpa {
        let mode = if ep { "ep_dp" } else { "tp_dp" };
        r.flags(m.get(&format!("{role}_{mode}_flags")).or_else(|| m.get(&format!("{mode}_flags"))));
        r.envs(m.get(&format!("{mode}_env")));
    }
    if mtp > 0 {
        // `SPEC_ARGS=(${MODEL_MTP_FLAGS} "$DECODE_MTP_SIZE")`: the size is the last flag's value.
        if let Some((node, written)) = m.get("mtp_flags").and_then(|n| Some((n, text(n)?))) {
            r.flag_string(&format!("{written} {mtp}"), node);
        }
    }
    r.flags(m.get("kv_cache_flags"));
    let quant = if dpa {
        m.get("online_quant_dpa_config").or_else(|| m.get("online_quant_config"))
    } else {
        m.get("online_quant_config")
    };
    if let Some(node) = quant {
        if let Some(v) = text(node) {
            r.flag("--online-quant-config", v, node);
        }
    }
    for (key, flag) in [
        ("block_size", "--block-size"),
        ("mem_frac_static", "--gpu-memory-utilization"),
        ("max_model_len", "--max-model-len"),
        ("max_num_seqs", "--max-num-seqs"),
        ("max_num_batched_tokens", "--max-num-batched-tokens"),
        ("scheduler_delay_factor", "--scheduler-delay-factor"),
    ] {
        r.value(Some(m), key, flag);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIR: &str = "benchmarks/multi_node/amd_utils";
    /// Written like upstream's `dsr1_fp8_mi355x_sglang-disagg.sh` and `amd_utils/job.slurm`.
    const SCRIPT: &str = "source \"$(dirname \"$0\")/../benchmark_lib.sh\"\n\
        cd \"$GITHUB_WORKSPACE/benchmarks/multi_node/amd_utils\" || exit 1\n\
        export MODEL_NAME=$MODEL_NAME\n\
        JOB_ID=$(bash ./submit.sh $PREFILL_NODES \\\n    $DECODE_NODES)\n";
    const JOB: &str = "if [[ \"$ENGINE\" == \"vllm-disagg\" ]]; then\n    MODELS_YAML=\"$(pwd)/models_vllm.yaml\"\n\
        elif [[ \"$ENGINE\" == \"atom-disagg\" ]]; then\n    MODELS_YAML=\"$(pwd)/models_atom.yaml\"\n\
        else\n    MODELS_YAML=\"$(pwd)/models.yaml\"\nfi\n";
    const SGLANG: &str = "\
DeepSeek-R1-0528-DI:
  base_flags: \"--kv-cache-dtype fp8_e4m3 --attention-backend aiter\"
  mtp_flags: \"--speculative-algorithm NEXTN --speculative-eagle-topk 1\"
  dp_flags: \"--enable-dp-attention --enable-dp-lm-head\"
  ep_flags: \"--moe-a2a-backend mori\"
  prefill:
    mem_fraction_static: 0.8
    disable_radix_cache: true
    dp:
      max_running_requests: 24
      chunked_prefill_size: \"MORI_MAX_DISPATCH_TOKENS_PREFILL * PREFILL_TP_SIZE\"
      cuda_graph_bs: \"1 2 3\"
    no_dp:
      max_running_requests: 128
      chunked_prefill_size: 262144
      cuda_graph_bs_range: \"1-4\"
  decode:
    mem_fraction_static: 0.85
    prefill_round_robin_balance: true
    ep_only:
      max_running_requests: 256
      cuda_graph_bs_range: \"1-2\"
    no_dp:
      max_running_requests: 128
DeepSeek-R1-0528-AgentX:
  base_flags: \"--kv-cache-dtype fp8_e4m3\"
  prefill:
    disable_radix_cache: true
";
    const ATOM: &str = "\
DeepSeek-V4-Pro:
  env: \"ATOM_MOE_GU_ITLV=1\"
  kv_cache_flags: \"--kv_cache_dtype fp8\"
  tp_dp_flags: \"--enable-dp-attention\"
  decode_tp_dp_flags: \"--enable-dp-attention --enable-tbo\"
  tp_dp_env: \"GPU_MAX_HW_QUEUES=5\"
  mtp_flags: \"--method mtp --num-speculative-tokens\"
  online_quant_config: '{\"quant_type\": \"ptpc_fp8\"}'
  mem_frac_static: \"0.9\"
";

    fn tree() -> MemTree {
        MemTree::new()
            .with("benchmarks/multi_node/dsr1_fp8_mi355x_sglang-disagg.sh", SCRIPT)
            .with(format!("{DIR}/job.slurm"), JOB)
            .with(format!("{DIR}/models.yaml"), SGLANG)
            .with(format!("{DIR}/models_atom.yaml"), ATOM)
            .with(format!("{DIR}/env.sh"), "export MORI_MAX_DISPATCH_TOKENS_PREFILL=8192\nif x; then\n  export MORI_MAX_DISPATCH_TOKENS_PREFILL=8192\nfi\n")
    }

    fn submission() -> Submission {
        super::submission(SCRIPT, "s.sh").expect("the script submits the job")
    }

    /// Each role's settings as `name=value` (values joined), for compact assertions.
    fn read(engine: &str, model: &str, row: &DisaggRow) -> Vec<(String, Vec<String>)> {
        let entry = table_entry(&tree(), &submission(), engine, model, row.agentic).expect("an entry");
        role_settings(&entry, row)
            .into_iter()
            .map(|r| {
                let pairs = r
                    .settings
                    .values()
                    .map(|s| format!("{}={}", s.name, s.values.iter().cloned().collect::<Vec<_>>().join("|")));
                (r.role.to_owned(), pairs.collect())
            })
            .collect()
    }

    fn row(prefill: (i64, i64, bool), decode: (i64, i64, bool), mtp: i64) -> DisaggRow {
        DisaggRow { prefill, decode, mtp, agentic: false }
    }

    #[test]
    fn a_script_submits_the_job_from_the_folder_it_changes_into() {
        assert_eq!(submission(), Submission { dir: DIR.to_owned(), at: "s.sh:4".to_owned() });
        assert_eq!(super::submission("bash ./submit.sh 1 2\n", "s.sh"), None, "no folder, no job");
        assert_eq!(super::submission("cd \"$GITHUB_WORKSPACE/../x\"\nbash ./submit.sh\n", "s.sh"), None);
    }

    #[test]
    fn sglang_roles_follow_the_rows_parallelism_and_draft() {
        let dp = read("sglang-disagg", "deepseek-ai/DeepSeek-R1-0528", &row((8, 8, true), (8, 8, true), 1));
        let prefill = &dp[0].1;
        for want in [
            "--tp-size=8",
            "--ep-size=8",
            "--dp-size=8",
            "--kv-cache-dtype=fp8_e4m3",
            "--moe-a2a-backend=mori",
            "--speculative-algorithm=NEXTN",
            "--speculative-num-steps=1",
            "--speculative-num-draft-tokens=2",
            "--enable-dp-attention=true",
            "--mem-fraction-static=0.8",
            "--max-running-requests=24",
            // MORI_MAX_DISPATCH_TOKENS_PREFILL (env.sh, one value) * PREFILL_TP_SIZE (the row).
            "--chunked-prefill-size=65536",
            "--cuda-graph-bs=1 2 3",
            "--disable-radix-cache=true",
        ] {
            assert!(prefill.contains(&want.to_owned()), "prefill lacks {want}: {prefill:?}");
        }
        let tp = read("sglang-disagg", "deepseek-ai/DeepSeek-R1-0528", &row((4, 1, false), (8, 8, false), 0));
        let (prefill, decode) = (&tp[0].1, &tp[1].1);
        assert!(
            prefill.contains(&"--cuda-graph-bs=1 2 3 4".to_owned())
                && prefill.contains(&"--max-running-requests=128".to_owned())
        );
        for absent in
            ["--ep-size", "--dp-size", "--moe-a2a-backend", "--speculative-algorithm", "--enable-dp-attention"]
        {
            assert!(!prefill.iter().any(|s| s.starts_with(absent)), "TP prefill has {absent}: {prefill:?}");
        }
        // Decode with EP and no DP attention reads the `ep_only` block.
        assert!(
            decode.contains(&"--max-running-requests=256".to_owned())
                && decode.contains(&"--cuda-graph-bs=1 2".to_owned())
        );
        assert!(decode.contains(&"--prefill-round-robin-balance=true".to_owned()));
        assert!(!decode.iter().any(|s| s.starts_with("--chunked-prefill-size")), "{decode:?}");
    }

    #[test]
    fn agentic_runs_read_the_agentx_entry_and_keep_the_radix_cache() {
        let agentic = DisaggRow { agentic: true, ..row((8, 1, false), (8, 1, false), 0) };
        let read = read("sglang-disagg", "deepseek-ai/DeepSeek-R1-0528", &agentic);
        assert_eq!(read[0].1, vec!["--kv-cache-dtype=fp8_e4m3".to_owned(), "--tp-size=8".to_owned()]);
    }

    #[test]
    fn atom_reads_its_own_table_with_the_roles_mode_flags() {
        let read = read("atom-disagg", "deepseek-ai/DeepSeek-V4-Pro", &row((8, 1, true), (8, 1, true), 1));
        let (prefill, decode) = (&read[0].1, &read[1].1);
        assert!(decode.contains(&"--enable-tbo=true".to_owned()), "the decode key wins: {decode:?}");
        assert!(!prefill.contains(&"--enable-tbo=true".to_owned()), "prefill falls back to tp_dp_flags: {prefill:?}");
        for want in [
            "ATOM_MOE_GU_ITLV=1",
            "GPU_MAX_HW_QUEUES=5",
            "--kv-cache-dtype=fp8",
            "--method=mtp",
            "--num-speculative-tokens=1",
            "--online-quant-config={\"quant_type\": \"ptpc_fp8\"}",
            "--gpu-memory-utilization=0.9",
        ] {
            assert!(prefill.contains(&want.to_owned()), "prefill lacks {want}: {prefill:?}");
        }
    }

    #[test]
    fn a_table_or_entry_the_job_cannot_find_is_named() {
        let tree = tree();
        let gap = |engine: &str, model: &str| table_entry(&tree, &submission(), engine, model, false).err();
        assert_eq!(
            gap("sglang-disagg", "org/Unknown-Model"),
            Some(TableGap::NoEntry {
                path: format!("{DIR}/models.yaml"),
                tried: vec!["Unknown-Model-DI".to_owned(), "Unknown-Model".to_owned()]
            })
        );
        assert_eq!(
            gap("vllm-disagg", "org/M"),
            Some(TableGap::NoTable { engine: "vllm-disagg".to_owned(), dir: DIR.to_owned() }),
            "job.slurm names models_vllm.yaml, which the tree lacks"
        );
        let broken = tree.with(format!("{DIR}/models.yaml"), "a: [\n");
        assert!(matches!(
            table_entry(&broken, &submission(), "sglang-disagg", "m", false),
            Err(TableGap::Unparsable { .. })
        ));
    }
}
