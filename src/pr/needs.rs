//! What the collector must fetch from outside the repository for a verdict on this PR, read
//! from the PR model once its trees are in (issue 33 item 1): the collector asks here, never a
//! check module. The run fetched first is [`super::sweep_runs::qualifying_run`].

use std::collections::BTreeSet;

use super::affected::affected_configs;
use super::drafts::draft_models;
use super::overrides::override_models;
use super::reach::affected_reach;
use super::Context;
use crate::domain::upstream_links::{hf_repo_of, upstream_links, UpstreamLink};

/// The upstream facts and runs a verdict reads, for the collector to fetch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Needs {
    /// Check 3's recipe links of the detail section: PR state and content, page text.
    pub recipe_links: Vec<UpstreamLink>,
    /// The images of the affected entries (Check 6's digests).
    pub images: BTreeSet<String>,
    /// Hugging Face repos whose `config.json` a check reads: those the detail section links,
    /// the draft checkpoints (Check 13) and the models a change overrides (Check 8).
    pub models: BTreeSet<String>,
    /// Every `(owner/repo@ref, path)` an affected config's launch reads from the srt-slurm
    /// checkout its launcher clones (decision EX1), in order.
    pub checkout_files: BTreeSet<(String, String)>,
}

/// What `cx`'s verdict reads from outside the repository and the PR's trees.
pub fn needs(cx: &Context) -> Needs {
    let links: Vec<String> = match cx.signoff() {
        Ok(parsed) => parsed.detail_links().map(|l| l.url.clone()).collect(),
        Err(_) => Vec::new(),
    };
    let recipe_links = upstream_links(cx.detail(), links.iter().map(String::as_str));
    let mut models: BTreeSet<String> = links.iter().filter_map(|url| hf_repo_of(url)).collect();
    models.extend(draft_models(cx.evidence));
    models.extend(override_models(cx));
    let images = match affected_configs(cx) {
        Ok(configs) => configs.into_iter().map(|c| c.image).filter(|i| !i.is_empty()).collect(),
        Err(_) => BTreeSet::new(),
    };
    Needs { recipe_links, images, models, checkout_files: checkout_files(cx) }
}

fn checkout_files(cx: &Context) -> BTreeSet<(String, String)> {
    let Ok(reaches) = affected_reach(cx) else { return BTreeSet::new() };
    reaches
        .iter()
        .flat_map(|r| &r.launch.recipes)
        .filter_map(|u| u.external.clone().filter(|_| !u.path.is_empty()).map(|c| (c, u.path.clone())))
        .collect()
}
