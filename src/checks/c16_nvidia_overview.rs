//! Check 16 — NVIDIA overview (spec 30 Check 16; the upstream rule text is unpublished, see
//! docs/decisions.md V1): N/A unless an affected config runs on an NVIDIA SKU; PASS when the PR
//! description or the sign-off's additional detail section names every affected NVIDIA config
//! key; otherwise WARN with the keys a human must find an overview for (the rule text is
//! unpublished). Affected configs that cannot be determined FAIL: whether the check applies at
//! all is then unknown (fail closed, decision FC1).

use super::{Context, Outcome};
use crate::pr::affected::{affected_configs, is_nvidia_sku, sku};

pub fn check(cx: &Context) -> Outcome {
    let affected = match affected_configs(cx) {
        Ok(a) => a,
        Err(reason) => return Outcome::fail("unverifiable").arg("reason", reason),
    };
    let nvidia: Vec<(String, String)> =
        affected.iter().map(|c| (c.key.clone(), sku(&c.runner))).filter(|(_, s)| is_nvidia_sku(s)).collect();
    if nvidia.is_empty() {
        return Outcome::na("no_nvidia").arg("configs", affected.len());
    }
    let overview = format!("{}\n{}", cx.evidence.pull_request.body, cx.detail());
    let missing: Vec<&str> =
        nvidia.iter().filter(|(key, _)| !overview.contains(key.as_str())).map(|(k, _)| k.as_str()).collect();
    if missing.is_empty() {
        Outcome::pass("overview_present").arg("keys", nvidia.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>())
    } else {
        Outcome::warn("overview_missing").arg("missing", missing).arg("total", nvidia.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests_support::{evidence, with_change};
    use crate::checks::Status;

    const MASTER: &str = "dsr1-fp4-b200-sglang:\n  runner: b200\n  model-prefix: dsr1\ndsr1-fp4-mi355x-sglang:\n  runner: mi355x\n  model-prefix: dsr1\n";

    fn touching(line: u32) -> crate::evidence::Evidence {
        let mut e = with_change(
            evidence(),
            "configs/master-x-master.yaml",
            &format!("@@ -{line},1 +{line},1 @@\n+  model-prefix: dsr1\n"),
        );
        e.head.insert("configs/master-x-master.yaml", MASTER);
        e
    }

    #[test]
    fn amd_only_is_na() {
        assert_eq!(check(&Context::new(&touching(6))).status, Status::NotApplicable);
        assert_eq!(check(&Context::new(&evidence())).status, Status::NotApplicable);
    }

    #[test]
    fn nvidia_needs_each_key_in_the_overview() {
        let mut e = touching(3);
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.message.args["missing"][0].as_str()), (Status::Warn, Some("dsr1-fp4-b200-sglang")));
        e.pull_request.body = "Overview: dsr1-fp4-b200-sglang on B200, TP8.".into();
        assert_eq!(check(&Context::new(&e)).status, Status::Pass);
    }

    #[test]
    fn unreadable_master_fails_unverifiable() {
        let mut e = touching(3);
        e.head.insert("configs/master-x-master.yaml", "a: [");
        let o = check(&Context::new(&e));
        assert_eq!((o.status, o.message.key.as_str()), (Status::Fail, "unverifiable"));
    }
}
