//! Check 9 — Chat template (spec 30 Check 9): speculative-decoding benchmarks use the model's
//! chat template, so the acceptance-length distribution matches real use.
//!
//! Scripts: the benchmark client must go through the chat template: `--use-chat-template` (or
//! `--dsv4`, which implies it), a chat-completions backend or endpoint, or a template the client
//! renders itself (decision CO2). SRT recipes: every `use_chat_template` in the recipe is `true`, and there
//! is one. AgentX (agentic) scripts and recipes replay chat-format traces: PASS by construction.

use serde_json::json;

use super::{reason, Context, Outcome};
use crate::pr::affected::recipe_rows;
use crate::pr::configs::ConfigReach;
use crate::pr::reach::{self, ReachKind};
use crate::pr::scan::{self, Role};
use crate::yaml::{Node, Value};

const SPEC_NAME_MARKERS: [&str; 4] = ["mtp", "eagle", "dspark", "dflash"];

/// Benchmark clients a launcher script invokes; a script that invokes none (a server start
/// script such as `amd_utils/server_sglang.sh`, a sourced helper) sends no benchmark prompts.
const BENCHMARK_CLIENTS: [&str; 5] =
    ["run_benchmark_serving", "benchmark_serving", "bench_serving", "vllm bench serve", "sa-bench"];

/// Agentic: the master-config rows that run a recipe are `agentic-coding` (AgentX recipes live
/// under `…/agentx/` too), else the path says so.
fn is_agentic(cx: &Context, path: &str) -> bool {
    let rows = if scan::role(path) == Role::Recipe { recipe_rows(cx, path) } else { vec![] };
    if rows.is_empty() {
        scan::logical_path(path).contains("agentic")
    } else {
        rows.iter().any(|r| r.owner.agentic)
    }
}

fn code_lines(text: &str) -> impl Iterator<Item = (u32, &str)> {
    text.lines().enumerate().map(|(i, l)| (i as u32 + 1, scan::code_part(l)))
}

/// A recipe is the whole engine config, so its settings decide (`…_mtp0_…` names a recipe with
/// zero MTP layers); a script's name may also say so.
fn is_spec_decode(path: &str, text: &str, role: Role) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    (role != Role::Recipe && SPEC_NAME_MARKERS.iter().any(|m| name.contains(m)))
        || code_lines(text)
            .any(|(_, c)| c.contains("speculative") || c.contains("nextn") || c.contains("decoding_type"))
}

#[derive(Debug)]
enum Verdict {
    ChatTemplate,
    Agentic,
    Missing { line: u32, kind: &'static str },
}

fn invokes_benchmark_client(text: &str) -> bool {
    code_lines(text).any(|(_, c)| BENCHMARK_CLIENTS.iter().any(|client| c.contains(client)))
}

/// A line that calls a benchmark client, not one that only defines the shell function
/// (`benchmark_lib.sh`'s `run_benchmark_serving() { … }`), which every launcher sources.
fn calls_benchmark_client(text: &str) -> bool {
    code_lines(text).any(|(_, c)| {
        BENCHMARK_CLIENTS
            .iter()
            .any(|client| c.match_indices(client).any(|(at, _)| !c[at + client.len()..].trim_start().starts_with("()")))
    })
}

/// What on a client line drives the model through its chat template (spec 30 Check 9 rule 1,
/// upstream prompt Check 9: "chat-completions style endpoint/backend rather than raw
/// completions"): the client flag, a chat-completions backend or endpoint, or a template the
/// client renders before sending.
const CHAT_TEMPLATE_MARKERS: [&str; 6] = [
    "--use-chat-template",
    "--dsv4",
    "openai-chat",
    "/v1/chat/completions",
    "--apply-chat-template",
    "--endpoint-type chat",
];

fn judge_script(text: &str) -> Verdict {
    if code_lines(text).any(|(_, c)| CHAT_TEMPLATE_MARKERS.iter().any(|m| c.contains(m))) {
        return Verdict::ChatTemplate;
    }
    let line = code_lines(text).find(|(_, c)| c.contains("run_benchmark_serving")).map_or(1, |(n, _)| n);
    Verdict::Missing { line, kind: "script" }
}

/// Every `use_chat_template` value in the recipe, with its line.
fn chat_template_flags(node: &Node, out: &mut Vec<(u32, bool)>) {
    match &node.value {
        Value::Map(entries) => {
            for (k, v) in entries {
                if k.as_str() == Some("use_chat_template") {
                    out.push((v.pos.line, matches!(v.value, Value::Bool(true))));
                }
                chat_template_flags(v, out);
            }
        }
        Value::Seq(items) => items.iter().for_each(|i| chat_template_flags(i, out)),
        _ => {}
    }
}

fn judge_recipe(cx: &Context, path: &str) -> Verdict {
    let recipe = cx.head_recipe(path);
    let Some(Ok(recipe)) = recipe.as_deref() else {
        return Verdict::Missing { line: 1, kind: "recipe_missing" };
    };
    let mut flags = Vec::new();
    chat_template_flags(&recipe.root, &mut flags);
    match flags.iter().find(|(_, on)| !on) {
        Some((line, _)) => Verdict::Missing { line: *line, kind: "recipe_false" },
        None if flags.is_empty() => Verdict::Missing { line: 1, kind: "recipe_missing" },
        None => Verdict::ChatTemplate,
    }
}

/// A judged file's verdict, and the file the benchmark client runs in (the launcher itself, or
/// the script its launch path hands the client to, e.g. `amd_utils/bench.sh`).
fn judge(cx: &Context, path: &str, role: Role, owner: Option<&ConfigReach>) -> Option<(String, Verdict)> {
    let text = cx.evidence.head.text(path)?;
    // A config's search space says its launcher drafts, whatever the script spells; a recipe
    // is the whole engine config, so only its settings say so (decision K7).
    let drafts = role == Role::Script && owner.is_some_and(|o| reach::launcher_drafts(o, path));
    if !drafts && !is_spec_decode(path, text, role) {
        return None;
    }
    if is_agentic(cx, path) {
        return Some((path.to_owned(), Verdict::Agentic));
    }
    match role {
        Role::Script if path.ends_with(".sh") && invokes_benchmark_client(text) => {
            Some((path.to_owned(), judge_script(text)))
        }
        // A config's launcher that delegates the client run: the script on its launch path that
        // runs the client decides; none readable while part of the path is not is unverifiable.
        Role::Script if owner.is_some_and(|o| reach::is_root_of(o, path)) => {
            let launch = &owner?.path;
            let client = launch.files.iter().filter(|f| f.kind == ReachKind::Script).find_map(|f| {
                let t = cx.evidence.head.text(&f.path)?;
                calls_benchmark_client(t).then(|| (f.path.clone(), judge_script(t)))
            });
            match (client, launch.unavailable.first()) {
                (Some(found), _) => Some(found),
                (None, Some(u)) => Some((u.reference.clone(), Verdict::Missing { line: 0, kind: "unreachable" })),
                (None, None) => None,
            }
        }
        Role::Recipe => Some((path.to_owned(), judge_recipe(cx, path))),
        _ => None,
    }
}

pub fn check(cx: &Context) -> Outcome {
    let (mut count, mut agentic) = (0usize, 0usize);
    let mut findings = Vec::new();
    let reaches = match reach::affected_reach(cx) {
        Ok(r) => r,
        Err(error) => return Outcome::unreadable(reason("what_affected_entries"), error),
    };
    let mut judged = std::collections::BTreeSet::new();
    for (path, role, owner) in reach::judged_files(cx, reaches) {
        // Past the verification's scan budget the file is unread, and the check cannot pass.
        let bytes = cx.evidence.head.get(&path).map_or(0, <[u8]>::len);
        if let Err(spent) = cx.charge_scan(path.as_str(), bytes) {
            return Outcome::unreadable(path, spent);
        }
        let Some((file, verdict)) = judge(cx, &path, role, owner) else { continue };
        // Two launchers handing the client to one script are one benchmark client run.
        if !judged.insert(file.clone()) {
            continue;
        }
        match verdict {
            Verdict::ChatTemplate => count += 1,
            Verdict::Agentic => {
                count += 1;
                agentic += 1;
            }
            Verdict::Missing { line, kind } => findings.push((file, line, kind)),
        }
    }
    if !findings.is_empty() {
        // Whether the PR changed the file or the launch path of an affected config reached it
        // unchanged (9.b): the discriminator that names the sub-rule (decision FC8).
        let changed = |file: &str| cx.evidence.files.iter().any(|f| f.filename == file);
        let mut outcome = Outcome::fail("raw_completions").arg(
            "findings",
            findings
                .iter()
                .map(|(file, line, kind)| {
                    let origin = if changed(file) { "changed" } else { "reached" };
                    json!({"file": file, "line": line, "kind": kind, "origin": origin})
                })
                .collect::<Vec<_>>(),
        );
        for (file, line, _) in &findings {
            outcome = outcome.evidence(if *line == 0 { file.clone() } else { format!("{file}:{line}") });
        }
        return outcome;
    }
    if count == 0 {
        return Outcome::na("no_spec_decode");
    }
    Outcome::pass("chat_template_used").arg("count", count).arg("agentic", agentic)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, with_added_file};
    use crate::checks::Status;

    const MTP_SCRIPT: &str = "#!/usr/bin/env bash\npython3 -m sglang.launch_server --speculative-algorithm EAGLE &\n\nrun_benchmark_serving \\\n    --model \"$MODEL\" \\\n    --backend vllm\n";

    /// Every finding kind of `raw_completions` renders in both languages (issue 28, done when).
    #[test]
    fn every_finding_kind_renders_in_both_languages() {
        let examples: Vec<Outcome> = ["unreachable", "script", "recipe_false", "recipe_missing"]
            .map(|kind| {
                Outcome::fail("raw_completions").arg("findings", vec![json!({"file": "x.sh", "line": 3, "kind": kind})])
            })
            .into();
        crate::checks::tests_support::assert_every_kind_renders(9, "raw_completions", &examples);
    }

    #[test]
    fn mtp_script_without_chat_template_fails_at_the_client_line() {
        let e = with_added_file(evidence(), "benchmarks/single_node/fixed_seq_len/glm5_fp8_b200_mtp.sh", MTP_SCRIPT);
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.evidence, ["benchmarks/single_node/fixed_seq_len/glm5_fp8_b200_mtp.sh:4"]);
        // The PR changed the script: 9.b (an unchanged file reached by the launch path) did not decide.
        assert_eq!(o.message.args["findings"][0]["origin"], "changed");
        let rules = crate::checks::catalog::Catalog::embedded().check(9).rules_of(&o);
        assert_eq!(rules, ["9.a", "9.c", "9.d"]);
    }

    /// Issue 24: the per-file scan is bounded by the verification's scan budget; past it the
    /// judged file is unread and the check FAILs naming it (it passes with the budget left).
    #[test]
    fn a_file_past_the_scan_budget_is_unreadable() {
        let path = "benchmarks/single_node/fixed_seq_len/glm5_fp8_b200_mtp.sh";
        let script = MTP_SCRIPT.replace("--backend vllm", "--backend vllm \\\n    --use-chat-template");
        let e = with_added_file(evidence(), path, &script);
        let cx = Context::new(&e);
        cx.charge_scan("earlier checks", crate::evidence::limits::MAX_SCAN_BYTES - script.len() + 1).unwrap();
        let o = check(&cx);
        assert_eq!(
            (o.status, o.message.key.as_str(), &o.message.args["what"]),
            (Status::Fail, "unreadable", &json!(path))
        );
        let cx = Context::new(&e);
        cx.charge_scan("earlier checks", crate::evidence::limits::MAX_SCAN_BYTES - script.len()).unwrap();
        assert_eq!(check(&cx).status, Status::Pass, "exactly the budget is enough");
    }

    #[test]
    fn mtp_script_with_chat_template_passes() {
        let script = MTP_SCRIPT.replace("--backend vllm", "--backend vllm \\\n    --use-chat-template");
        let e = with_added_file(evidence(), "benchmarks/single_node/fixed_seq_len/glm5_fp8_b200_mtp.sh", &script);
        assert_eq!(check(&Context::new(&e)).status, Status::Pass);
    }

    #[test]
    fn a_chat_completions_backend_endpoint_or_client_side_template_passes() {
        for client in [
            "--backend openai-chat",
            "--backend openai --endpoint /v1/chat/completions",
            "--backend sglang --apply-chat-template",
        ] {
            let script = MTP_SCRIPT.replace("--backend vllm", client);
            assert!(matches!(judge_script(&script), Verdict::ChatTemplate), "{client}");
        }
        let completions = MTP_SCRIPT.replace("--backend vllm", "--backend openai --endpoint /v1/completions");
        assert!(matches!(judge_script(&completions), Verdict::Missing { .. }));
    }

    #[test]
    fn a_commented_out_flag_does_not_count() {
        let script = MTP_SCRIPT.replace("--backend vllm", "--backend vllm # --use-chat-template");
        let e = with_added_file(evidence(), "benchmarks/single_node/fixed_seq_len/glm5_fp8_b200_mtp.sh", &script);
        assert_eq!(check(&Context::new(&e)).status, Status::Fail);
    }

    #[test]
    fn recipes_need_use_chat_template_true() {
        let recipe = "name: x-mtp\nbackend:\n  sglang_config:\n    decode:\n      speculative-algorithm: EAGLE\nbenchmark:\n  type: sa-bench\n  use_chat_template: false\n";
        let e = with_added_file(evidence(), "benchmarks/multi_node/srt-slurm-recipes/sglang/x/8k1k_mtp.yaml", recipe);
        let o = check(&Context::new(&e));
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.message.args["findings"][0]["kind"], "recipe_false");
        assert_eq!(o.message.args["findings"][0]["line"], 8);

        let fixed = recipe.replace("use_chat_template: false", "use_chat_template: true");
        let e = with_added_file(evidence(), "benchmarks/multi_node/srt-slurm-recipes/sglang/x/8k1k_mtp.yaml", &fixed);
        assert_eq!(check(&Context::new(&e)).status, Status::Pass);

        let missing = recipe.replace("  use_chat_template: false\n", "");
        let e = with_added_file(evidence(), "benchmarks/multi_node/srt-slurm-recipes/sglang/x/8k1k_mtp.yaml", &missing);
        assert_eq!(check(&Context::new(&e)).message.args["findings"][0]["kind"], "recipe_missing");
    }

    #[test]
    fn agentic_replays_pass_by_construction_and_non_spec_changes_are_na() {
        let e = with_added_file(evidence(), "benchmarks/single_node/agentic/dsv4_fp4_b200_sglang_mtp.sh", MTP_SCRIPT);
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.message.args["agentic"].as_u64()), (Status::Pass, Some(1)));

        let e = with_added_file(
            evidence(),
            "benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200.sh",
            "run_benchmark_serving --model x\n",
        );
        assert_eq!(check(&Context::new(&e)).status, Status::NotApplicable);
    }

    /// The corpus' #2309/#2305: the shared AMD server script starts the server and sends no
    /// benchmark prompts, so it is no launcher; the same settings with the client FAIL.
    #[test]
    fn a_server_script_that_invokes_no_benchmark_client_is_not_judged() {
        let server = "#!/bin/bash\nBENCH_INPUT_LEN=\"${BENCH_INPUT_LEN:-1024}\"\npython3 -m sglang.launch_server --speculative-algorithm EAGLE --speculative-num-steps 3 &\n";
        let path = "benchmarks/multi_node/amd_utils/server_sglang.sh";
        assert_eq!(check(&Context::new(&with_added_file(evidence(), path, server))).status, Status::NotApplicable);
        let launcher = format!("{server}run_benchmark_serving --model \"$MODEL\"\n");
        assert_eq!(check(&Context::new(&with_added_file(evidence(), path, &launcher))).status, Status::Fail);
    }

    /// The corpus' #2206 and #2612: a TRT-LLM `…_mtp0_…` recipe drafts nothing (no speculative
    /// settings); an AgentX recipe under `…/agentx/` is agentic by the master-config row that
    /// runs it. The same recipe run by a fixed-seq-len row, with MTP, needs the chat template.
    #[test]
    fn trtllm_recipes_are_judged_by_their_settings_and_the_rows_that_run_them() {
        let stp = "name: ctx1dep2_gen13tp4_mtp0_c78\nbackend:\n  type: trtllm\nbenchmark:\n  type: \"sa-bench\"\n  isl: 8192\n";
        let path = "benchmarks/multi_node/srt-slurm-recipes/trtllm/qwen3.5/gb300-fp4/disagg/8k1k/stp/ctx1dep2_gen13tp4_mtp0_c78.yaml";
        assert_eq!(check(&Context::new(&with_added_file(evidence(), path, stp))).status, Status::NotApplicable);

        let agentx = "name: disagg-mtp\nbackend:\n  type: trtllm\n  trtllm_config:\n    decode:\n      speculative_config:\n        decoding_type: MTP\n        num_nextn_predict_layers: 3\nbenchmark:\n  type: custom\n  command: bash /infmax-workspace/benchmarks/multi_node/agentic_srt.sh\n";
        let path = "benchmarks/multi_node/srt-slurm-recipes/trtllm/qwen3.5/gb300-fp4/disagg/agentx/disagg-mtp.yaml";
        let master = "qwen3.5-fp4-gb300-dynamo-trt:\n  model-prefix: qwen3.5\n  framework: dynamo-trt\n  scenarios:\n    agentic-coding:\n    - search-space:\n      - prefill:\n          additional-settings:\n          - \"CONFIG_FILE=recipes/trtllm/qwen3.5/gb300-fp4/disagg/agentx/disagg-mtp.yaml\"\n";
        let mut e = with_added_file(evidence(), path, agentx);
        e.head.insert("configs/nvidia-master.yaml", master);
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.message.args["agentic"].as_u64()), (Status::Pass, Some(1)), "{o:?}");
        e.head.insert(
            "configs/nvidia-master.yaml",
            "qwen3.5-fp4-gb300-dynamo-trt:\n  model-prefix: qwen3.5\n  framework: dynamo-trt\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - prefill:\n          additional-settings:\n          - \"CONFIG_FILE=recipes/trtllm/qwen3.5/gb300-fp4/disagg/agentx/disagg-mtp.yaml\"\n",
        );
        assert_eq!(check(&Context::new(&e)).message.args["findings"][0]["kind"], "recipe_missing");
    }

    /// Issue 17 item 4 (9.b): an image bump (changelog only) of a fixed-seq-len MTP config reaches
    /// its unchanged launcher, which hands the benchmark client to `amd_utils/bench.sh`; that
    /// script decides. A launch path that cannot be read is unverifiable.
    #[test]
    fn an_image_bump_judges_the_client_script_the_configs_launcher_reaches() {
        let master = "dsv4-fp4-mi355x-sglang-disagg-mtp:\n  image: img\n  model-prefix: dsv4\n  runner: cluster:mi355x-amds\n  precision: fp4\n  framework: sglang-disagg\n  multinode: true\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { spec-decoding: mtp }\n";
        let changelog = "@@ -1,1 +1,3 @@\n x\n+- config-keys:\n+  - dsv4-fp4-mi355x-sglang-disagg-mtp\n";
        let build = |bench: &str| {
            let mut e = crate::checks::tests_support::with_change(evidence(), "perf-changelog.yaml", changelog);
            e.head.insert("configs/amd-master.yaml", master);
            e.head.insert(
                "benchmarks/multi_node/dsv4_fp4_mi355x_sglang-disagg.sh",
                "source \"$(dirname \"$0\")/../benchmark_lib.sh\"\nexport DECODE_MTP_SIZE=3 # speculative\ncd \"$GITHUB_WORKSPACE/benchmarks/multi_node/amd_utils\"\nbash ./bench.sh\n",
            );
            e.head.insert("benchmarks/multi_node/amd_utils/bench.sh", bench);
            // The shared library defines the client; defining it is no client run.
            e.head.insert("benchmarks/benchmark_lib.sh", "run_benchmark_serving() { python3 -m bench \"$@\"; }\n");
            e
        };
        let o = check(&Context::new(&build("run_benchmark_serving --model x\n")));
        assert_eq!(
            (o.status, o.evidence.as_slice()),
            (Status::Fail, ["benchmarks/multi_node/amd_utils/bench.sh:1".to_owned()].as_slice())
        );
        assert_eq!(o.message.args["findings"][0]["origin"], "reached");
        let rules = crate::checks::catalog::Catalog::embedded().check(9).rules_of(&o);
        assert_eq!(rules, ["9.a", "9.b", "9.c", "9.d"]);
        let o = check(&Context::new(&build("run_benchmark_serving --model x --use-chat-template\n")));
        assert_eq!((o.status, o.message.args["count"].as_u64()), (Status::Pass, Some(1)), "{o:?}");
        let mut e = build("");
        e.head
            .insert("benchmarks/multi_node/dsv4_fp4_mi355x_sglang-disagg.sh", "# speculative\nbash ./bench_gone.sh\n");
        let o = check(&Context::new(&e));
        assert_eq!(o.message.args["findings"][0]["kind"], "unreachable", "{o:?}");
        assert_eq!(o.evidence, ["benchmarks/multi_node/bench_gone.sh"]);
        let rules = crate::checks::catalog::Catalog::embedded().check(9).rules_of(&o);
        assert_eq!(rules, ["9.a", "9.b", "9.c"], "an unreadable launch path is 9.b's missing evidence");
    }
}
