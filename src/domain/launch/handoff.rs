//! A benchmark script that starts no server itself but hands the job to another script of the
//! tree (issue 33 item 2): `exec bash "$(dirname "$0")/x/submit.sh"`, or a Slurm step running
//! `bash /workspace/…/run_node.sh` in the job's container (TileRT's
//! `glm5.1_fp8_b200_tilert-disagg.sh` → `tilert_utils/submit.sh` → `run_node.sh`). The
//! script that runs is read with what it is handed: every variable the scripts before it export,
//! and the variables the running command binds (`srun --export=ALL,ROLE="$role"`, `$role` the
//! function's positional parameter of each call `run_role decode …`). A handed-over value that
//! names a role (`prefill`, `decode`) is the role of the settings read.
//!
//! Nothing is guessed: a target that is not a file of the tree is not read (the config keeps its
//! "no server started" gap), a bound value that is not a literal is not bound (the script reads
//! its own default or keeps the variable as written).

use super::settings::{
    exports, from_script_with, function_bodies, script_relative, words, Inherited, RoleSettings, SourceResolver,
};
use super::shell::logical_lines;
use crate::domain::master_config::{parallelism_label, FixedSpaces, MasterConfig, Worker};

/// Deepest chain of hand-overs followed (a script handing the job to itself stops here too).
const MAX_HANDOFFS: usize = 4;
/// Most hand-overs read from one script (each call of a function that runs one is one).
const MAX_PER_SCRIPT: usize = 8;

/// One run of another script of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handoff {
    /// The repository path and text of the script run.
    pub target: (String, String),
    /// `file:line` of the command that runs it (of the call, for a command in a function).
    pub at: String,
    /// Literal variables the command binds for it (`--export=ALL,K=V`), per call.
    pub binds: Vec<(String, String)>,
}

/// `--container-mounts=SRC:DST,…` whose source is the job's workspace: the container folder the
/// repository is mounted at (`/workspace`).
fn workspace_mounts(words: &[String]) -> Vec<String> {
    let mounts = words.iter().filter_map(|w| w.strip_prefix("--container-mounts="));
    mounts
        .flat_map(|m| m.split(','))
        .filter_map(|m| m.split_once(':'))
        .filter(|(src, _)| matches!(*src, "$GITHUB_WORKSPACE" | "${GITHUB_WORKSPACE}"))
        .map(|(_, dst)| dst.trim_end_matches('/').to_owned())
        .filter(|dst| !dst.is_empty())
        .collect()
}

/// The script `bash`/`sh` runs on this command (the first word after it that is not an option,
/// ending `.sh`), as written.
fn run_target(words: &[String]) -> Option<&String> {
    let k = words.iter().position(|w| w == "bash" || w == "sh")?;
    words[k + 1..].iter().find(|w| !w.starts_with('-')).filter(|w| w.ends_with(".sh"))
}

/// `local a="$1" b="$2"` in a function body: each name with its positional parameter's index.
fn positional_locals(lines: &[(u32, String)], body: &std::ops::RangeInclusive<u32>) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (_, logical) in lines.iter().filter(|(n, _)| body.contains(n)) {
        let w = words(logical);
        if w.first().map(String::as_str) != Some("local") {
            continue;
        }
        for word in &w[1..] {
            let Some((name, value)) = word.split_once('=') else { continue };
            let index = value.strip_prefix("${").and_then(|v| v.strip_suffix('}')).or_else(|| value.strip_prefix('$'));
            if let Some(i) = index.and_then(|i| i.parse::<usize>().ok()).filter(|i| *i > 0) {
                out.push((name.to_owned(), i));
            }
        }
    }
    out
}

/// The scripts of the tree `text` (at `path`) runs on its live lines (`dead`, for the row), each
/// with what the running command binds.
pub fn handoffs(
    text: &str,
    path: &str,
    resolve: &SourceResolver,
    dead: &std::collections::BTreeSet<u32>,
) -> Vec<Handoff> {
    let lines = logical_lines(text);
    let bodies = function_bodies(text);
    let in_body = |n: u32| bodies.iter().find(|(_, l)| l.contains(&n));
    let mut out = Vec::new();
    for (number, logical) in lines.iter().filter(|(n, _)| !dead.contains(n)) {
        let w = words(logical);
        let Some(written) = run_target(&w) else { continue };
        let written = script_relative(written);
        let in_repository = workspace_mounts(&w)
            .iter()
            .find_map(|dst| written.strip_prefix(&format!("{dst}/")).map(str::to_owned))
            .unwrap_or_else(|| written.clone());
        if in_repository.contains('$') {
            continue;
        }
        let Some(target) = resolve(path, &in_repository) else { continue };
        let exported: Vec<(&str, &str)> = w
            .iter()
            .filter_map(|x| x.strip_prefix("--export="))
            .flat_map(|e| e.split(','))
            .filter_map(|kv| kv.split_once('='))
            .collect();
        let at = format!("{path}:{number}");
        // Outside a function: one run, with the literal values it binds.
        let Some((function, body)) = in_body(*number) else {
            let binds =
                exported.iter().filter(|(_, v)| !v.contains('$')).map(|(k, v)| ((*k).to_owned(), (*v).to_owned()));
            out.push(Handoff { target, at, binds: binds.collect() });
            continue;
        };
        // In a function: one run per live call outside every function body, its arguments
        // bound to the function's positional parameters.
        let locals = positional_locals(&lines, body);
        for (call_line, call) in lines.iter().filter(|(n, _)| !dead.contains(n) && in_body(*n).is_none()) {
            let cw = words(call);
            if cw.first() != Some(function) || out.len() >= MAX_PER_SCRIPT {
                continue;
            }
            let argument = |value: &str| -> Option<String> {
                let name =
                    value.strip_prefix("${").and_then(|v| v.strip_suffix('}')).or_else(|| value.strip_prefix('$'))?;
                let index = locals.iter().find(|(l, _)| l == name).map(|(_, i)| *i).or_else(|| name.parse().ok())?;
                cw.get(index).filter(|a| !a.contains('$') && !matches!(a.as_str(), "&" | ";" | "||" | "&&")).cloned()
            };
            let binds = exported.iter().filter_map(|(k, v)| match v.contains('$') {
                false => Some(((*k).to_owned(), (*v).to_owned())),
                true => argument(v).map(|a| ((*k).to_owned(), a)),
            });
            out.push(Handoff { target: target.clone(), at: format!("{path}:{call_line}"), binds: binds.collect() });
        }
    }
    out.truncate(MAX_PER_SCRIPT);
    out
}

/// The role a hand-over's bound value names (`TILERT_ROLE=decode`).
fn role_of(binds: &[(String, String)]) -> Option<&'static str> {
    binds.iter().find_map(|(_, v)| match v.as_str() {
        "prefill" => Some("prefill"),
        "decode" => Some("decode"),
        _ => None,
    })
}

/// The settings of the servers a script starts, itself or through the scripts it hands the job
/// to, for one row's inputs (`row`); `inherited`: what the script is handed.
pub fn role_settings(
    text: &str,
    path: &str,
    resolve: &SourceResolver,
    row: &[(String, String)],
    inherited: &[Inherited],
    depth: usize,
) -> Vec<RoleSettings> {
    if let Some(found) = from_script_with(text, path, resolve, row, inherited) {
        return vec![found];
    }
    if depth >= MAX_HANDOFFS {
        return Vec::new();
    }
    let lines = logical_lines(text);
    let inputs: Vec<(&str, &str)> = row.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let dead = super::settings::dead_lines(&lines, &inputs);
    let handed = exports(text, path, resolve, row, inherited);
    let mut out: Vec<RoleSettings> = Vec::new();
    for h in handoffs(text, path, resolve, &dead) {
        let mut row = row.to_vec();
        let mut inherited = handed.clone();
        for (k, v) in &h.binds {
            row.retain(|(r, _)| r != k);
            row.push((k.clone(), v.clone()));
            inherited.retain(|(n, _, _)| n != k);
            inherited.push((k.clone(), v.clone(), h.at.clone()));
        }
        let (target_path, target_text) = &h.target;
        for mut settings in role_settings(target_text, target_path, resolve, &row, &inherited, depth + 1) {
            if let Some(role) = role_of(&h.binds) {
                settings.role = role;
            }
            if !out.contains(&settings) {
                out.push(settings);
            }
        }
    }
    out
}

/// The workflow inputs of one multi-node search-space row, as `benchmark-multinode-tmpl.yml`
/// binds them (`PREFILL_TP`, `DECODE_NUM_WORKERS`, `CONC_LIST`, …, and each worker's
/// `additional-settings`, which the job exports).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiRow {
    /// The launch variant (`fixed-seq-len/mtp`).
    pub variant: String,
    /// `1024/1024 P TP8 D TP8`.
    pub label: String,
    pub inputs: Vec<(String, String)>,
}

fn worker_inputs(role: &str, w: &Worker, out: &mut Vec<(String, String)>) {
    for (k, v) in [
        ("NUM_WORKERS", w.num_worker),
        ("TP", w.tp),
        ("EP", w.ep),
        ("PP_SIZE", w.pp),
        ("DCP_SIZE", w.dcp_size),
        ("PCP_SIZE", w.pcp_size),
    ] {
        out.push((format!("{role}_{k}"), v.to_string()));
    }
    out.push((format!("{role}_DP_ATTN"), w.dp_attn.to_string()));
}

fn worker_label(w: &Worker) -> String {
    let mut l = parallelism_label(w.tp, w.ep);
    if w.dp_attn {
        l.push_str(" DPA");
    }
    l
}

/// The distinct multi-node rows of a config, with their inputs.
pub fn multi_rows(master: &MasterConfig) -> Vec<MultiRow> {
    let mut out: Vec<MultiRow> = Vec::new();
    let mut push =
        |scenario: &str, seq: Option<(i64, i64)>, spec: &str, p: &Worker, d: &Worker, conc: Option<&[i64]>| {
            let mut inputs = vec![("SPEC_DECODING".to_owned(), spec.to_owned())];
            worker_inputs("PREFILL", p, &mut inputs);
            worker_inputs("DECODE", d, &mut inputs);
            if let Some((isl, osl)) = seq {
                inputs.extend([("ISL".to_owned(), isl.to_string()), ("OSL".to_owned(), osl.to_string())]);
            }
            if let Some(list) = conc {
                let list: Vec<String> = list.iter().map(i64::to_string).collect();
                inputs.push(("CONC_LIST".to_owned(), list.join(" ")));
            }
            for s in p.additional_settings.iter().chain(&d.additional_settings).flatten() {
                if let Some((k, v)) = s.split_once('=') {
                    inputs.push((k.trim().to_owned(), v.trim().to_owned()));
                }
            }
            let seq_label = seq.map_or_else(|| "agentic".to_owned(), |(i, o)| format!("{i}/{o}"));
            let label = format!("{seq_label} P {} D {}", worker_label(p), worker_label(d));
            let row = MultiRow { variant: format!("{scenario}/{spec}"), label, inputs };
            if !out.contains(&row) {
                out.push(row);
            }
        };
    for block in &master.fixed {
        let FixedSpaces::Multi(spaces) = &block.search_space else { continue };
        for s in spaces {
            let conc = s.conc_list.as_deref();
            push("fixed-seq-len", Some((block.isl, block.osl)), s.spec_decoding.as_str(), &s.prefill, &s.decode, conc);
        }
    }
    for block in &master.agentic {
        for s in &block.search_space {
            if let (Some(p), Some(d)) = (&s.prefill, &s.decode) {
                push("agentic-coding", None, s.spec_decoding.as_str(), p, d, None);
            }
        }
    }
    out
}

/// Per row of `variant` (one unbound reading without rows), the settings of the servers the
/// script starts through the scripts it hands the job to; rows that read alike are one scope
/// (labelled only when rows differ). Empty when it hands the job to no script that starts one.
pub fn scopes(
    text: &str,
    path: &str,
    resolve: &SourceResolver,
    master: Option<&MasterConfig>,
    variant: &str,
) -> Vec<(Option<String>, RoleSettings)> {
    let rows: Vec<MultiRow> =
        master.map(multi_rows).unwrap_or_default().into_iter().filter(|r| r.variant == variant).collect();
    let unbound = [MultiRow { variant: variant.to_owned(), label: String::new(), inputs: Vec::new() }];
    let rows = if rows.is_empty() { &unbound[..] } else { &rows[..] };
    let mut read: Vec<(Vec<RoleSettings>, Vec<&str>)> = Vec::new();
    for row in rows {
        let roles = role_settings(text, path, resolve, &row.inputs, &[], 0);
        if roles.is_empty() {
            return Vec::new();
        }
        match read.iter_mut().find(|(r, _)| *r == roles) {
            Some((_, labels)) => labels.push(&row.label),
            None => read.push((roles, vec![&row.label])),
        }
    }
    let named = read.len() > 1;
    let mut out = Vec::new();
    for (roles, labels) in read {
        let row = named.then(|| labels.join(", "));
        out.extend(roles.into_iter().map(|r| (row.clone(), r)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shaped like TileRT's chain at the history tip (`glm5.1_fp8_b200_tilert-disagg.sh` →
    /// `tilert_utils/submit.sh` → `run_node.sh`), written small: the benchmark script exports
    /// and `exec`s the submitter, whose function runs the node script per role in the container.
    const BENCH: &str = "#!/usr/bin/env bash\nexport KV_DTYPE=fp8\nexport MODEL_NAME=glm5\nexec bash \"$(dirname \"$0\")/utils/submit.sh\"\n";
    const SUBMIT: &str = "#!/usr/bin/env bash\nrun_role() {\n    local role=\"$1\" host=\"$2\"\n    srun --nodelist=\"$host\" \\\n        --container-mounts=\"$GITHUB_WORKSPACE:/workspace\" \\\n        --export=ALL,ROLE=\"$role\",HOST=\"$host\" \\\n        bash \"/workspace/bench/utils/run_node.sh\"\n}\nrun_role decode \"$DECODE_HOST\" &\nrun_role prefill \"$PREFILL_HOST\"\n";
    const NODE: &str = "#!/usr/bin/env bash\nKV_DTYPE=${KV_DTYPE:-bf16}\nCTRL_PORT=${CTRL_PORT:-5556}\nSPEC=(--speculative-config '{\"method\":\"mtp\"}')\nstart_decode() {\n    local cmd=(\"${PY:-python}\" -m tilert.pd_vllm.decode_server\n        --model \"$MODEL_NAME\" --kv-cache-dtype \"$KV_DTYPE\"\n        --ctrl-port \"$CTRL_PORT\" --host \"$(hostname)\")\n    run_bg \"${cmd[@]}\"\n}\nstart_prefill() {\n    local cmd=(vllm serve \"$MODEL_PATH\"\n        --tensor-parallel-size \"$PREFILL_TP\"\n        \"${SPEC[@]}\")\n    cmd+=(--gpu-memory-utilization 0.8)\n    run_bg \"${cmd[@]}\"\n}\ncase \"$ROLE\" in\n    decode)\n        start_decode\n        ;;\n    prefill)\n        start_prefill\n        ;;\nesac\n";

    fn resolve(from: &str, target: &str) -> Option<(String, String)> {
        let path = match target {
            "./utils/submit.sh" if from == "bench/b.sh" => "bench/utils/submit.sh",
            "bench/utils/run_node.sh" => "bench/utils/run_node.sh",
            _ => return None,
        };
        let text = if path.ends_with("submit.sh") { SUBMIT } else { NODE };
        Some((path.to_owned(), text.to_owned()))
    }

    fn roles() -> Vec<RoleSettings> {
        role_settings(BENCH, "bench/b.sh", &resolve, &[("PREFILL_TP".into(), "8".into())], &[], 0)
    }

    fn setting<'a>(roles: &'a [RoleSettings], role: &str, name: &str) -> Option<(Vec<&'a str>, &'a str)> {
        let r = roles.iter().find(|r| r.role == role)?;
        let s = r.settings.get(name)?;
        Some((s.values.iter().map(String::as_str).collect(), s.at.as_str()))
    }

    /// The server commands built in arrays (`local cmd=(…)`, `cmd+=(…)`, a spliced
    /// `"${SPEC[@]}"`) are read per role, each flag at the line it is written on, with what the
    /// benchmark script exported (`KV_DTYPE=fp8`, not the node script's own default).
    #[test]
    fn the_array_form_is_read_per_role_through_the_scripts_that_hand_the_job_over() {
        let roles = roles();
        assert_eq!(roles.iter().map(|r| r.role).collect::<Vec<_>>(), ["decode", "prefill"]);
        let node = "bench/utils/run_node.sh";
        let at = |line: u32| format!("{node}:{line}");
        assert_eq!(setting(&roles, "decode", "--kv-cache-dtype"), Some((vec!["fp8"], at(7).as_str())));
        assert_eq!(setting(&roles, "decode", "--model"), Some((vec!["glm5"], at(7).as_str())));
        assert_eq!(setting(&roles, "decode", "--ctrl-port"), Some((vec!["5556"], at(8).as_str())));
        assert_eq!(setting(&roles, "prefill", "--tensor-parallel-size"), Some((vec!["$PREFILL_TP"], at(13).as_str())));
        assert_eq!(
            setting(&roles, "prefill", "--speculative-config"),
            Some((vec!["{\"method\":\"mtp\"}"], at(4).as_str())),
            "an array spliced into the command array is read at its own line"
        );
        assert_eq!(setting(&roles, "prefill", "--gpu-memory-utilization"), Some((vec!["0.8"], at(15).as_str())));
        assert_eq!(setting(&roles, "prefill", "ROLE"), Some((vec!["prefill"], "bench/utils/submit.sh:10")));
        assert!(setting(&roles, "decode", "cmd").is_none(), "an array is no environment variable");
    }

    /// An element the reader cannot evaluate (`"$(hostname)"`) stays as written, so it is
    /// reported unresolved, never replaced by a guess.
    #[test]
    fn an_element_that_cannot_be_evaluated_stays_named() {
        let roles = roles();
        let (values, _) = setting(&roles, "decode", "--host").unwrap();
        assert_eq!(values, ["$(hostname)"]);
        assert!(!super::super::is_resolved(values[0]));
    }

    /// The role `case` arm the hand-over does not bind is not read: the decode server's flags
    /// are not the prefill role's and the other way round.
    #[test]
    fn a_branch_the_role_does_not_take_is_not_read() {
        let roles = roles();
        assert!(setting(&roles, "prefill", "--kv-cache-dtype").is_none());
        assert!(setting(&roles, "prefill", "--ctrl-port").is_none());
        assert!(setting(&roles, "decode", "--tensor-parallel-size").is_none());
        assert!(setting(&roles, "decode", "--gpu-memory-utilization").is_none());
        // Without a role bound (the submitter's call not read), both arms may run.
        let node = role_settings(NODE, "bench/utils/run_node.sh", &resolve, &[], &[], 0);
        assert_eq!(node.len(), 1);
        assert!(
            node[0].settings.contains_key("--kv-cache-dtype")
                && node[0].settings.contains_key("--tensor-parallel-size")
        );
    }

    /// A hand-over to a script the tree does not have, or one whose path names a variable,
    /// reads nothing (the config keeps its "no server started" gap).
    #[test]
    fn a_target_outside_the_tree_is_not_read() {
        let gone = "exec bash \"$(dirname \"$0\")/utils/gone.sh\"\nbash \"$SCRIPTS/run.sh\"\n";
        assert!(handoffs(gone, "bench/b.sh", &resolve, &Default::default()).is_empty());
        assert!(role_settings(gone, "bench/b.sh", &resolve, &[], &[], 0).is_empty());
    }
}
