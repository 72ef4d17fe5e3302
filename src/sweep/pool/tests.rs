use serde_json::json;

use super::*;

fn pools_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("pools")
}

fn local() -> PoolProfile {
    load_file(&pools_dir().join("local.toml")).unwrap_or_else(|e| panic!("{e}"))
}

const MINIMAL: &str =
    "cluster = \"c\"\nsku = \"gb200\"\ngpus_per_node = 4\npartition = \"p\"\ntime_limit = \"1-00:00\"\n\
segment_supported = true\noutput_root = \"/o\"\ncontainer_workdir = \"/w\"\n\
[srt_slurm]\nrepo = \"r\"\ncommit = \"0123456789abcdef0123456789abcdef01234567\"\nroot = \"/srt\"\n\
[transport]\nkind = \"cli\"\n[containers]\ncache_dir = \"/sqsh/\"\nnaming = \"plus\"\n";

fn parse(text: &str) -> Result<PoolProfile, PoolError> {
    PoolProfile::parse(text, "t", "t.toml")
}

#[test]
fn shipped_profiles_load() {
    let all = load_dir(&pools_dir()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(all.keys().collect::<Vec<_>>(), ["gb200-nv", "local"]);
    let local = local();
    assert_eq!((local.name.as_str(), local.gpus_per_node, local.segment_supported), ("local", 8, false));
    assert!(matches!(local.transport, Transport::Slurmrestd { .. }));
    assert_eq!(all["gb200-nv"].health_check, Some(HealthCheck { max_attempts: 720, interval_seconds: 10 }));
}

#[test]
fn defaults_apply_to_optional_fields() {
    let p = parse(MINIMAL).unwrap_or_else(|e| panic!("{e}"));
    assert!(p.gpus_per_node_directive && !p.exclusive && !p.het_jobs);
    assert!(p.mounts.is_empty() && p.models.is_empty() && p.account.is_none());
}

#[test]
fn unknown_keys_and_wrong_types_are_located_errors() {
    let unknown = parse(&format!("{MINIMAL}[extra]\nx = 1\n")).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(unknown.starts_with("t.toml:") && unknown.contains("unknown field `extra`"), "{unknown}");
    let typed = parse(&MINIMAL.replace("gpus_per_node = 4", "gpus_per_node = \"four\""));
    let typed = typed.err().unwrap_or_else(|| panic!("must fail"));
    assert_eq!(typed.pos.map(|p| p.line), Some(3));
    let transport = parse(&MINIMAL.replace("kind = \"cli\"", "kind = \"cli\"\nurl = \"x\""));
    assert!(transport.is_err(), "cli transport takes no url");
    let missing = parse(&MINIMAL.replace("segment_supported = true\n", "")).err().map(|e| e.to_string());
    assert!(missing.unwrap_or_default().contains("segment_supported"));
}

#[test]
fn shape_problems_are_all_reported() {
    let bad = MINIMAL
        .replace("time_limit = \"1-00:00\"", "time_limit = \"4h\"")
        .replace("output_root = \"/o\"", "output_root = \"o\"")
        .replace("gpus_per_node = 4", "gpus_per_node = 0")
        .replace("0123456789abcdef0123456789abcdef01234567", "abc")
        + "[environment]\n\"1BAD\" = \"x\"\n[models]\nm = \"relative\"\nh = \"hf:org/model\"\n";
    let text = parse(&bad).err().map(|e| e.to_string()).unwrap_or_default();
    for needle in [
        "output_root 'o'",
        "gpus_per_node must be at least 1",
        "time_limit '4h'",
        "srt_slurm.commit 'abc'",
        "'1BAD'",
        "models.m 'relative'",
    ] {
        assert!(text.contains(needle), "{needle} missing in {text}");
    }
    assert!(!text.contains("models.h"), "hf: model references are allowed");
    let rest = MINIMAL.replace("kind = \"cli\"", "kind = \"slurmrestd\"\nurl = \"ftp://x\"\napi_version = \"v0.0.38\"");
    assert!(parse(&rest).err().map(|e| e.to_string()).unwrap_or_default().contains("transport.url"));
    let token = rest.replace("ftp://x\"", "http://x\"\ntoken_file = \"jwt\"");
    assert!(parse(&token).err().map(|e| e.to_string()).unwrap_or_default().contains("transport.token_file 'jwt'"));
    for bad in ["-oProxyCommand=x", "a b", "h;x", ""] {
        let ssh = MINIMAL.replace("kind = \"cli\"", &format!("kind = \"cli\"\nssh_host = \"{bad}\""));
        let err = parse(&ssh).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("transport.ssh_host"), "{bad:?}: {err}");
    }
    let ssh = MINIMAL.replace("kind = \"cli\"", "kind = \"cli\"\nssh_host = \"ops@login-1.example\"");
    assert!(parse(&ssh).is_ok());
}

#[test]
fn slurm_time_formats() {
    for ok in ["30", "30:00", "04:00:00", "1-0", "1-04:00", "2-04:00:00"] {
        assert!(slurm_time_minutes(ok).is_some(), "{ok}");
    }
    for bad in ["", "4h", "1:2:3:4", "-1", "a-04:00", "1-", "04::00", "18446744073709551615:00"] {
        assert!(slurm_time_minutes(bad).is_none(), "{bad}");
    }
    let minutes = ["30", "30:01", "04:00:00", "1-0", "1-04:30", "0-00:00:59"].map(slurm_time_minutes);
    assert_eq!(minutes, [Some(30), Some(31), Some(240), Some(1440), Some(1710), Some(1)]);
}

#[test]
fn squash_file_names_follow_the_naming_rule() {
    let plus = parse(MINIMAL).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        plus.sqsh_path("nvcr.io/nvidia/ai-dynamo:0.4@sha256#x"),
        "/sqsh/nvcr.io+nvidia+ai-dynamo+0.4+sha256+x.sqsh"
    );
    assert_eq!(local().sqsh_path("lmsysorg/sglang:v0.5"), "/srv/slurm-scratch/sqsh/lmsysorg_sglang_v0.5.sqsh");
}

#[test]
fn applying_a_profile_fills_only_what_the_recipe_leaves_open() {
    let recipe = json!({
        "name": "r",
        "model": {"path": "tiny", "container": "dynamo-sglang", "precision": "fp8"},
        "resources": {"gpu_type": "h100", "het_jobs": null},
        "slurm": {"time_limit": "01:00:00"},
        "sbatch_directives": {"mem": "0"},
    });
    let mut pool = local();
    pool.qos = Some("low".into());
    let (resolved, aliases) = pool.apply(&recipe, None);
    assert_eq!(resolved["slurm"], json!({"time_limit": "01:00:00", "partition": "gpu"}));
    assert_eq!(resolved["sbatch_directives"], json!({"mem": "0", "qos": "low"}));
    assert_eq!(resolved["resources"]["het_jobs"], json!(false));
    assert_eq!(resolved["model"]["path"], "/srv/slurm-scratch/models/tiny");
    assert_eq!(resolved["model"]["container"], "/srv/slurm-scratch/sqsh/fake-dynamo-sglang.sqsh");
    assert_eq!(aliases.len(), 2);
    let (with_image, aliases) = pool.apply(&recipe, Some("lmsysorg/sglang:v0.5"));
    assert_eq!(
        with_image["model"]["container"], "/srv/slurm-scratch/sqsh/lmsysorg_sglang_v0.5.sqsh",
        "the point image wins"
    );
    assert_eq!(
        aliases[1],
        AliasResolution {
            field: "model.container",
            from: "dynamo-sglang".into(),
            to: "/srv/slurm-scratch/sqsh/lmsysorg_sglang_v0.5.sqsh".into()
        }
    );
    assert!(with_image.get("health_check").is_none(), "local.toml has no health_check default");
}

#[test]
fn knows_model_accepts_aliases_absolute_paths_and_hf() {
    let pool = local();
    assert!(pool.knows_model("tiny") && pool.knows_model("/abs/model") && pool.knows_model("hf:org/m"));
    assert!(!pool.knows_model("unknown-alias"));
}

#[test]
fn unreadable_directories_and_files_are_errors() {
    assert!(load_dir(std::path::Path::new("/nonexistent/pools")).is_err());
    assert!(load_file(std::path::Path::new("/nonexistent/p.toml")).is_err());
}

#[test]
fn a_pool_serves_its_sku_and_cluster_runner_unless_it_lists_runners() {
    let default = parse(MINIMAL).unwrap_or_else(|e| panic!("{e}"));
    assert!(default.serves("gb200") && default.serves("cluster:t"));
    assert!(!default.serves("b200") && !default.serves("cluster:c") && !default.serves("gb200-nv"));
    let listed = parse(&format!("runners = [\"gb200-nv\"]\nmax_concurrent_allocations = 1\n{MINIMAL}"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(listed.serves("gb200-nv") && !listed.serves("gb200"));
    assert_eq!(listed.max_concurrent_allocations, Some(1));
}
