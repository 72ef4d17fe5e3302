//! The launcher reach of the affected configs (issue 17 item 4; decision J1): a thin view of
//! the launch model (`domain::launch`, decision LM1), which computes each config's benchmark
//! scripts as its runner launchers compute them, its recipes in every layout, and the files
//! they reach (bounded), once per Context.

use super::affected::affected_configs;
use super::configs::ConfigReach;
use super::context::Side;
use super::scan::{self, Role};
use super::{reason, Context, Reason};
use crate::domain::launch::LaunchTree;
pub use crate::domain::launch::{LaunchPath, ReachKind, Reached, Unreachable, Why};
use crate::evidence::Fact;

fn compute(cx: &Context) -> Result<Vec<ConfigReach>, Reason> {
    let configs = affected_configs(cx)?;
    let head = &cx.evidence.head;
    // The recipes of the checkouts the launchers clone, as the collector fetched them (EX3).
    let external = cx.evidence.upstream.checkouts.iter().flat_map(|(checkout, files)| {
        files.iter().map(move |(path, fact)| {
            let text = match fact {
                Fact::Ok(text) => Ok(text.as_str()),
                Fact::Unavailable(why) => Err(why.as_str()),
            };
            (checkout.as_str(), path.as_str(), text)
        })
    });
    let model = LaunchTree::new(head).with_external(external);
    let mut out = Vec::new();
    for config in configs {
        let (root, _) = cx
            .master_root(Side::Head, &config.file)
            .ok_or_else(|| reason("missing_at_head").arg("path", config.file.as_str()))?;
        let root = root.as_ref().as_ref().map_err(|e| e.to_string())?;
        let entry = root
            .as_map()
            .and_then(|items| items.iter().find(|(k, _)| k.key_text().is_some_and(|t| t == config.key.as_str())));
        let Some((key, node)) = entry else { return Err(format!("{}: no entry {}", config.file, config.key).into()) };
        let mut launch = model.config(&config.file, key, node);
        let path = std::mem::take(&mut launch.reach);
        cx.charge_scan(reason("launch_path_of").arg("key", config.key.as_str()), reached_bytes(cx, &path))?;
        out.push(ConfigReach { config, path, launch });
    }
    Ok(out)
}

/// The reach of every affected config (computed once per Context, lent to every check).
/// `Err` when the affected configs cannot be read.
pub fn affected_reach<'c>(cx: &'c Context) -> Result<&'c [ConfigReach], Reason> {
    cx.reach.get_or_init(|| compute(cx)).as_deref().map_err(Clone::clone)
}

/// Bytes of the files a launch path reads at the head.
fn reached_bytes(cx: &Context, path: &LaunchPath) -> usize {
    path.files.iter().map(|f| cx.evidence.head.get(&f.path).map_or(0, <[u8]>::len)).sum()
}

/// What one script reaches at the head (a changed launcher that no affected config names).
/// Once the verification's scan budget is spent, the script itself is unreachable
/// ([`Why::TooDeep`]: beyond the bounds the launch path is followed within).
pub fn script_reach(cx: &Context, path: &str) -> LaunchPath {
    let beyond = || LaunchPath {
        files: Vec::new(),
        unavailable: vec![Unreachable { reference: path.to_owned(), via: path.to_owned(), why: Why::TooDeep }],
    };
    if cx.scan_spent() {
        return beyond();
    }
    let root = Reached { path: path.to_owned(), kind: ReachKind::Launcher, via: path.to_owned(), depth: 0 };
    let reach = crate::domain::launch::follow::reach_from(&cx.evidence.head, vec![root], vec![]);
    match cx.charge_scan(path, reached_bytes(cx, &reach)) {
        Ok(()) => reach,
        Err(_) => beyond(),
    }
}

/// The files a content check (9, 11) judges: the scripts and recipes the PR adds or changes,
/// and the launchers and recipes every affected config runs (an image bump or a master-only
/// change reaches them unchanged), each with the affected config whose reach holds it.
pub fn judged_files<'r>(cx: &Context, reaches: &'r [ConfigReach]) -> Vec<(String, Role, Option<&'r ConfigReach>)> {
    let owner_of =
        |path: &str| reaches.iter().find(|r| r.path.files.iter().any(|f| f.path == path && f.kind != ReachKind::Patch));
    let mut out: Vec<(String, Role, Option<&ConfigReach>)> = scan::changed(cx.evidence)
        .filter(|(_, role)| matches!(role, Role::Script | Role::Recipe))
        .map(|(file, role)| (file.filename.clone(), role, owner_of(&file.filename)))
        .collect();
    for r in reaches {
        for f in r.path.files.iter().filter(|f| matches!(f.kind, ReachKind::Launcher | ReachKind::Recipe)) {
            if !out.iter().any(|(p, _, _)| *p == f.path) {
                out.push((f.path.clone(), scan::role(&f.path), Some(r)));
            }
        }
    }
    out
}

/// Whether the config's launcher `path` runs a draft: the config's search spaces draft, and
/// either all of them do or the script is the `_<spec-decoding>.sh` one the runners pick for them.
pub fn launcher_drafts(reach: &ConfigReach, path: &str) -> bool {
    let spec = &reach.config.spec_decoding;
    let name = path.rsplit('/').next().unwrap_or(path);
    is_root_of(reach, path)
        && reach.config.speculative()
        && (!spec.contains("none") || spec.iter().any(|s| s != "none" && name.ends_with(&format!("_{s}.sh"))))
}

/// Whether `path` is a root (launcher or recipe) of the config's reach.
pub fn is_root_of(reach: &ConfigReach, path: &str) -> bool {
    reach.path.files.iter().any(|f| f.path == path && matches!(f.kind, ReachKind::Launcher | ReachKind::Recipe))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, with_change};
    use crate::repo::MemTree;

    /// Shaped like #2309's AMD disagg path (see `domain::launch::follow`'s tests).
    fn amd_tree() -> MemTree {
        MemTree::new()
            .with(
                "benchmarks/multi_node/agentic/dsv4_fp4_mi355x_sglang-disagg.sh",
                "cd \"$GITHUB_WORKSPACE/benchmarks/multi_node/amd_utils\" || exit 1\nJOB_ID=$(bash ./submit.sh $PREFILL_NODES)\n",
            )
            .with("benchmarks/multi_node/amd_utils/submit.sh", "source ./server_sglang.sh\n")
            .with("benchmarks/multi_node/amd_utils/server_sglang.sh", "export X=1\n")
    }

    const MASTER: &str = "dsv4-fp4-mi355x-sglang-disagg-agentic-mtp:\n  image: img\n  model: deepseek-ai/DeepSeek-V4-Pro\n  model-prefix: dsv4\n  runner: cluster:mi355x-amds\n  precision: fp4\n  framework: sglang-disagg\n  multinode: true\n  scenarios:\n    agentic-coding:\n    - search-space:\n      - spec-decoding: \"mtp\"\n        decode:\n          additional-settings:\n          - \"DECODE_MTP_SIZE=3\"\ndsr1-fp4-gb200-dynamo-trt:\n  image: img\n  model-prefix: dsr1\n  runner: gb200\n  precision: fp4\n  framework: dynamo-trt\n  multinode: true\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - prefill:\n          additional-settings:\n          - \"CONFIG_FILE=recipes/trtllm/dsr1/a.yaml:override_x\"\n          - \"CONFIG_FILE=recipes/trtllm/dsr1/gone.yaml\"\n";

    #[test]
    fn an_image_bump_reaches_the_configs_launcher_recipes_and_names_what_is_missing() {
        let changelog = "@@ -1,1 +1,4 @@\n x\n+- config-keys:\n+  - dsv4-fp4-mi355x-sglang-disagg-agentic-mtp\n+  - dsr1-fp4-gb200-dynamo-trt\n";
        let mut e = with_change(evidence(), "perf-changelog.yaml", changelog);
        for (path, text) in
            amd_tree().paths().map(|p| (p.to_owned(), amd_tree().text(p).unwrap_or_default().to_owned()))
        {
            e.head.insert(&path, text.as_str());
        }
        e.head.insert("benchmarks/multi_node/dsv4_fp4_mi355x_sglang-disagg.sh", "echo fixed-seq-len sibling\n");
        e.head.insert("configs/amd-master.yaml", MASTER);
        e.head.insert("benchmarks/multi_node/srt-slurm-recipes/trtllm/dsr1/a.yaml", "name: a\n");
        let cx = Context::new(&e);
        let reach = affected_reach(&cx).unwrap();
        assert_eq!(reach.len(), 2);
        let amd = reach.iter().find(|r| r.config.framework == "sglang-disagg").unwrap();
        assert_eq!(amd.path.files[0].path, "benchmarks/multi_node/agentic/dsv4_fp4_mi355x_sglang-disagg.sh");
        assert!(!amd.path.contains("benchmarks/multi_node/dsv4_fp4_mi355x_sglang-disagg.sh"), "not its scenario");
        assert!(amd.path.contains("benchmarks/multi_node/amd_utils/server_sglang.sh"));
        let trt = reach.iter().find(|r| r.config.framework == "dynamo-trt").unwrap();
        let recipes: Vec<&str> = trt.path.recipes().map(|r| r.path.as_str()).collect();
        assert_eq!(recipes, ["benchmarks/multi_node/srt-slurm-recipes/trtllm/dsr1/a.yaml"]);
        assert_eq!(trt.path.unavailable.len(), 1);
        assert_eq!(trt.path.unavailable[0].reference, "CONFIG_FILE=recipes/trtllm/dsr1/gone.yaml");
        assert_eq!(trt.path.unavailable[0].via, "configs/amd-master.yaml:31");
    }

    /// Issue 24: the launch reach shares one scan budget per verification. Within it a changed
    /// launcher is followed and Check 10 passes; once it is spent the launcher is unreachable
    /// (`too_deep`) and Check 10 fails naming it; an affected config's reach names the budget.
    #[test]
    fn the_scan_budget_makes_launch_paths_unreachable_once_spent() {
        use crate::checks::{c10_engine_patches, Status};
        use crate::evidence::limits::MAX_SCAN_BYTES;
        let launcher = "benchmarks/single_node/fixed_seq_len/x_fp8_b200_sglang.sh";
        let text = "source \"$(dirname \"$0\")/../../benchmark_lib.sh\"\npython3 -m sglang.launch_server --tp 8\n";
        let mut e = with_change(evidence(), launcher, "@@ -0,0 +1,1 @@\n+python3 -m sglang.launch_server --tp 8\n");
        e.head.insert(launcher, text);
        e.head.insert("benchmarks/benchmark_lib.sh", "export A=1\n");
        let reached = text.len() + "export A=1\n".len();

        let cx = Context::new(&e);
        cx.charge_scan("earlier checks", MAX_SCAN_BYTES - reached).unwrap();
        assert_eq!(script_reach(&cx, launcher).files.len(), 2, "exactly within the budget");
        assert_eq!(c10_engine_patches::check(&Context::new(&e)).status, Status::Pass);

        let cx = Context::new(&e);
        cx.charge_scan("earlier checks", MAX_SCAN_BYTES - reached + 1).unwrap();
        let path = script_reach(&cx, launcher);
        assert!(path.files.is_empty());
        assert_eq!(
            path.unavailable,
            [Unreachable { reference: launcher.into(), via: launcher.into(), why: Why::TooDeep }]
        );
        assert!(cx.scan_spent());
        // Check 10 charges the changed launcher's own lines first: with the budget spent, the
        // launcher itself is what it could not read.
        let o = c10_engine_patches::check(&cx);
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "unreadable"), "{o:?}");
        assert_eq!(o.message.args["what"], launcher);

        let changelog = "@@ -1,1 +1,3 @@\n x\n+- config-keys:\n+  - dsv4-fp4-mi355x-sglang-disagg-agentic-mtp\n";
        let mut e = with_change(evidence(), "perf-changelog.yaml", changelog);
        e.head.insert("configs/amd-master.yaml", MASTER);
        for (path, text) in
            amd_tree().paths().map(|p| (p.to_owned(), amd_tree().text(p).unwrap_or_default().to_owned()))
        {
            e.head.insert(&path, text.as_str());
        }
        let cx = Context::new(&e);
        cx.charge_scan("earlier checks", MAX_SCAN_BYTES).unwrap();
        let reason = affected_reach(&cx).unwrap_err();
        assert_eq!(
            reason.to_string(),
            "the launch path of `dsv4-fp4-mi355x-sglang-disagg-agentic-mtp`: the scripts scanned in this verification exceed its 33554432-byte budget"
        );
    }

    #[test]
    fn a_config_with_no_launcher_and_no_recipe_is_a_named_fact() {
        let changelog = "@@ -1,1 +1,3 @@\n x\n+- config-keys:\n+  - dsv4-fp4-mi355x-sglang-disagg-agentic-mtp\n";
        let mut e = with_change(evidence(), "perf-changelog.yaml", changelog);
        e.head.insert("configs/amd-master.yaml", MASTER);
        let cx = Context::new(&e);
        let reach = affected_reach(&cx).unwrap();
        assert!(reach[0].path.files.is_empty());
        assert_eq!(reach[0].path.unavailable[0].why, Why::NoLauncher, "{:?}", reach[0].path);
    }
}
