//! The recipes the affected configs' launchers read from an external checkout (issue 33 item 2;
//! decisions EX1-EX4): after the head tree is read, the launch model of the affected configs
//! names each recipe a launcher reads from the srt-slurm repository it clones
//! (`RecipeUse::external`, `owner/repo@ref`); each is fetched at that ref through the upstream
//! GitHub client, so the verdict reads it as it reads a recipe of the repository.
//!
//! Bounded: only repositories of [`CHECKOUT_REPOS`], at most `max_upstream` files, at most
//! [`MAX_CHECKOUT_FILE_BYTES`] per file and [`MAX_CHECKOUT_BYTES`] in all. What is not fetched
//! is a named [`Fact::Unavailable`]; nothing here stops collection.

use std::collections::{BTreeMap, BTreeSet};

use super::{bounded, CollectLimits, UpstreamClient};
use crate::checks::reach::affected_reach;
use crate::checks::Context;
use crate::evidence::{Evidence, Fact};

/// The repositories whose files are fetched for a launcher's checkout (decision EX2): those
/// upstream's multi-node launchers clone for `srtctl apply` (`runners/launch_*.sh` of the history
/// tip: `https://github.com/NVIDIA/srt-slurm.git`, and `cquil11/srt-slurm-nv.git` in
/// `launch_gb200-nv.sh`'s last branch). A PR's launcher can name any repository; reading another
/// one is a maintainer's call, so it is named, not fetched.
pub const CHECKOUT_REPOS: [&str; 2] = ["NVIDIA/srt-slurm", "cquil11/srt-slurm-nv"];

/// Largest recipe read from a checkout (upstream's largest srt-slurm recipe is a few KiB).
pub const MAX_CHECKOUT_FILE_BYTES: usize = 256 * 1024;
/// Most bytes read from checkouts per verification.
pub const MAX_CHECKOUT_BYTES: usize = 2 * 1024 * 1024;

/// The files of external checkouts the affected configs read: `owner/repo@ref` → path → text.
pub type Checkouts = BTreeMap<String, BTreeMap<String, Fact<String>>>;

/// Every `(checkout, path)` an affected config's launch model reads from an external checkout,
/// in order. The evidence's launch model is the one every check reads (no second reader).
pub fn wanted(evidence: &Evidence) -> BTreeSet<(String, String)> {
    let cx = Context::new(evidence);
    let Ok(reaches) = affected_reach(&cx) else { return BTreeSet::new() };
    reaches
        .iter()
        .flat_map(|r| &r.launch.recipes)
        .filter_map(|u| u.external.clone().filter(|_| !u.path.is_empty()).map(|c| (c, u.path.clone())))
        .collect()
}

/// `owner/repo@ref` → (`owner/repo`, the ref; `None` for `HEAD`, the default branch a clone
/// without `--branch` checks out). `None`: not a name the contents API may be asked with.
fn split_checkout(checkout: &str) -> Option<(&str, Option<&str>)> {
    let (repo, rev) = checkout.split_once('@')?;
    let name = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    let (owner, name_part) = repo.split_once('/')?;
    let rev_ok = !rev.is_empty()
        && !rev.contains("..")
        && rev.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-/".contains(&b));
    (name(owner) && name(name_part) && rev_ok).then_some((repo, (rev != "HEAD").then_some(rev)))
}

/// Whether `path` is a plain checkout-relative path (no `..`, no absolute path, no query).
fn plain_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && path.split('/').all(|part| !part.is_empty() && part != "." && part != "..")
        && path.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-/+".contains(&b))
}

/// The files of [`wanted`], fetched through `client` within the bounds.
pub async fn read_checkouts(client: &UpstreamClient, evidence: &Evidence, limits: &CollectLimits) -> Checkouts {
    let mut out = Checkouts::new();
    let mut fetch = Vec::new();
    for (checkout, path) in wanted(evidence) {
        let fact = match split_checkout(&checkout) {
            None => {
                Some(Fact::Unavailable(format!("{checkout}: not an owner/repo@ref the contents API is asked with")))
            }
            Some((repo, _)) if !CHECKOUT_REPOS.iter().any(|r| r.eq_ignore_ascii_case(repo)) => {
                Some(Fact::Unavailable(format!(
                    "{repo} is not a repository sweepgate reads recipes from ({}); not fetched",
                    CHECKOUT_REPOS.join(", ")
                )))
            }
            Some(_) if !plain_path(&path) => {
                Some(Fact::Unavailable(format!("{path:?} is not a plain path; not fetched")))
            }
            Some(_) if fetch.len() >= limits.max_upstream => Some(Fact::Unavailable(format!(
                "beyond the {} checkout files read per verification; not fetched",
                limits.max_upstream
            ))),
            Some(_) => None,
        };
        match fact {
            Some(fact) => {
                out.entry(checkout).or_default().insert(path, fact);
            }
            None => fetch.push((checkout, path)),
        }
    }
    let get = |(checkout, path): (String, String)| async move {
        let (repo, rev) = split_checkout(&checkout).unwrap_or((checkout.as_str(), None));
        let fact = client.repository_file(repo, rev, &path, MAX_CHECKOUT_FILE_BYTES).await;
        (checkout, path, fact)
    };
    let mut total = 0usize;
    for (checkout, path, fact) in bounded(limits.concurrency, fetch.into_iter().map(get)).await {
        let fact = match fact {
            Fact::Ok(text) if total + text.len() > MAX_CHECKOUT_BYTES => Fact::Unavailable(format!(
                "beyond the {MAX_CHECKOUT_BYTES} bytes read from checkouts per verification; not kept"
            )),
            other => other,
        };
        if let Fact::Ok(text) = &fact {
            total += text.len();
        }
        out.entry(checkout).or_default().insert(path, fact);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkouts_and_paths_are_checked_before_a_request() {
        assert_eq!(split_checkout("NVIDIA/srt-slurm@v1.0.50"), Some(("NVIDIA/srt-slurm", Some("v1.0.50"))));
        assert_eq!(split_checkout("NVIDIA/srt-slurm@HEAD"), Some(("NVIDIA/srt-slurm", None)));
        assert_eq!(split_checkout("NVIDIA/srt-slurm@a98738de"), Some(("NVIDIA/srt-slurm", Some("a98738de"))));
        for bad in ["NVIDIA/srt-slurm", "NVIDIA@x", "a/b@x?y", "a/b@../x", "a/b/c@x", "/b@x"] {
            assert_eq!(split_checkout(bad), None, "{bad}");
        }
        assert!(plain_path("recipes/trtllm/b200-fp4/1k1k.yaml"));
        for bad in ["../x.yaml", "/etc/passwd", "a//b", "a/./b", "a?ref=x", "a b"] {
            assert!(!plain_path(bad), "{bad}");
        }
    }
}
