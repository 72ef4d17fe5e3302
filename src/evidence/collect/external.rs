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
use crate::evidence::Fact;

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

/// What is not fetched, each with why (another repository, a name or path the contents API is
/// not asked with, beyond `max_files`), and what is, in order.
fn plan(wanted: BTreeSet<(String, String)>, max_files: usize) -> (Checkouts, Vec<(String, String)>) {
    let mut refused = Checkouts::new();
    let mut fetch = Vec::new();
    for (checkout, path) in wanted {
        let why = match split_checkout(&checkout) {
            None => Some(format!("{checkout}: not an owner/repo@ref the contents API is asked with")),
            Some((repo, _)) if !CHECKOUT_REPOS.iter().any(|r| r.eq_ignore_ascii_case(repo)) => Some(format!(
                "{repo} is not a repository sweepgate reads recipes from ({}); not fetched",
                CHECKOUT_REPOS.join(", ")
            )),
            Some(_) if !plain_path(&path) => Some(format!("{path:?} is not a plain path; not fetched")),
            Some(_) if fetch.len() >= max_files => {
                Some(format!("beyond the {max_files} checkout files read per verification; not fetched"))
            }
            Some(_) => None,
        };
        match why {
            Some(why) => {
                refused.entry(checkout).or_default().insert(path, Fact::Unavailable(why));
            }
            None => fetch.push((checkout, path)),
        }
    }
    (refused, fetch)
}

/// `fetched` added to `out` in order, each text kept while the texts kept stay within
/// `max_bytes` in all; past it a file is unavailable, naming the bound.
fn keep_within(out: &mut Checkouts, fetched: Vec<(String, String, Fact<String>)>, max_bytes: usize) {
    let mut total = 0usize;
    for (checkout, path, fact) in fetched {
        let fact = match fact {
            Fact::Ok(text) if total + text.len() > max_bytes => Fact::Unavailable(format!(
                "beyond the {max_bytes} bytes read from checkouts per verification; not kept"
            )),
            other => other,
        };
        if let Fact::Ok(text) = &fact {
            total += text.len();
        }
        out.entry(checkout).or_default().insert(path, fact);
    }
}

/// The checkout files the PR model needs ([`crate::pr::Needs::checkout_files`]), fetched through
/// `client` within the bounds.
pub async fn read_checkouts(
    client: &UpstreamClient,
    wanted: BTreeSet<(String, String)>,
    limits: &CollectLimits,
) -> Checkouts {
    let (mut out, fetch) = plan(wanted, limits.max_upstream);
    let get = |(checkout, path): (String, String)| async move {
        let (repo, rev) = split_checkout(&checkout).unwrap_or((checkout.as_str(), None));
        let fact = client.repository_file(repo, rev, &path, MAX_CHECKOUT_FILE_BYTES).await;
        (checkout, path, fact)
    };
    let fetched = bounded(limits.concurrency, fetch.into_iter().map(get)).await;
    keep_within(&mut out, fetched, MAX_CHECKOUT_BYTES);
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

    /// EX2: only the listed repositories are asked, at most `max_files` files; the rest is named.
    #[test]
    fn only_listed_repositories_are_fetched_within_the_count() {
        let pair = |c: &str, p: &str| (c.to_owned(), p.to_owned());
        let wanted = BTreeSet::from([
            pair("NVIDIA/srt-slurm@v1.0.50", "recipes/a.yaml"),
            pair("NVIDIA/srt-slurm@v1.0.50", "recipes/b.yaml"),
            pair("cquil11/srt-slurm-nv@cam/sa-submission-q2-2026", "recipes/c.yaml"),
            pair("someone/srt-slurm@main", "recipes/d.yaml"),
            pair("NVIDIA/srt-slurm@v1.0.50", "../secrets.yaml"),
        ]);
        let (refused, fetch) = plan(wanted.clone(), 16);
        assert_eq!(
            fetch,
            [
                pair("NVIDIA/srt-slurm@v1.0.50", "recipes/a.yaml"),
                pair("NVIDIA/srt-slurm@v1.0.50", "recipes/b.yaml"),
                pair("cquil11/srt-slurm-nv@cam/sa-submission-q2-2026", "recipes/c.yaml"),
            ]
        );
        let why = |c: &str, p: &str| match &refused[c][p] {
            Fact::Unavailable(why) => why.clone(),
            ok => panic!("{ok:?}"),
        };
        assert!(why("someone/srt-slurm@main", "recipes/d.yaml").starts_with("someone/srt-slurm is not a repository"));
        assert!(why("NVIDIA/srt-slurm@v1.0.50", "../secrets.yaml").contains("not a plain path"));

        let (refused, fetch) = plan(wanted, 2);
        assert_eq!(fetch.len(), 2);
        let beyond = &refused["cquil11/srt-slurm-nv@cam/sa-submission-q2-2026"]["recipes/c.yaml"];
        assert!(matches!(beyond, Fact::Unavailable(why) if why.contains("beyond the 2 checkout files")), "{beyond:?}");
    }

    /// EX2: texts are kept up to the total bound; a file past it is named, not cut.
    #[test]
    fn fetched_texts_are_kept_within_the_total() {
        let c = "NVIDIA/srt-slurm@v1".to_owned();
        let fetched = vec![
            (c.clone(), "a.yaml".to_owned(), Fact::Ok("x".repeat(6))),
            (c.clone(), "b.yaml".to_owned(), Fact::Ok("y".repeat(6))),
            (c.clone(), "c.yaml".to_owned(), Fact::Unavailable("not found: HTTP 404".into())),
            (c.clone(), "d.yaml".to_owned(), Fact::Ok("z".repeat(4))),
        ];
        let mut out = Checkouts::new();
        keep_within(&mut out, fetched, 10);
        let files = &out[&c];
        assert_eq!(files["a.yaml"], Fact::Ok("x".repeat(6)));
        assert!(matches!(&files["b.yaml"], Fact::Unavailable(why) if why.contains("beyond the 10 bytes")));
        assert!(files["c.yaml"].is_not_found());
        assert_eq!(files["d.yaml"], Fact::Ok("z".repeat(4)));
    }
}
