//! What the checks share: the Evidence, and values derived from it once (parsed policy files,
//! parsed sign-off, …). Derivations are pure and lazy: a check that needs nothing pays nothing.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use super::configs::{AffectedConfig, ConfigReach};
use super::{reason, Reason};
use crate::domain::checklist_template::{ChecklistTemplate, Topic};
use crate::domain::codeowners::Codeowners;
use crate::domain::models_md::ModelsMd;
use crate::domain::srt_recipe::{Recipe, RecipeError};
use crate::evidence::limits::MAX_SCAN_BYTES;
use crate::evidence::{Evidence, Fact};
use crate::intake::signoff::Signoff;
use crate::repo::{Layout, Logical, MemTree};
use crate::yaml::{Node, YamlError};

/// One of the PR's two trees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Side {
    Base,
    Head,
}

/// A master-config file parsed once per verification.
pub type MasterRoot = Arc<Result<Node, YamlError>>;

/// A policy file read from the policy tree (the default branch's tip): its path and parsed value, or why it is unusable.
pub type Parsed<T> = Result<(String, T), Reason>;

pub struct Context<'e> {
    pub evidence: &'e Evidence,
    layout: Layout,
    codeowners: OnceLock<Parsed<Codeowners>>,
    template: OnceLock<Parsed<ChecklistTemplate>>,
    signoff: OnceLock<Result<Signoff, String>>,
    models_md: OnceLock<Parsed<ModelsMd>>,
    /// Every master-config entry at the head (computed by `affected`).
    pub(super) all_configs: OnceLock<Result<Vec<AffectedConfig>, String>>,
    /// The launcher reach of every affected config (computed by `reach`).
    pub(super) reach: OnceLock<Result<Vec<ConfigReach>, Reason>>,
    /// Bytes of scripts the launch reach and Check 3 may still scan ([`MAX_SCAN_BYTES`]).
    scan_left: AtomicUsize,
    /// Head recipes the checks read, each parsed once per verification ([`Context::head_recipe`]).
    head_recipes: Mutex<BTreeMap<String, Arc<Result<Recipe, RecipeError>>>>,
    /// Master-config files of either tree, each parsed once per verification ([`Context::master_root`]).
    master_roots: Mutex<BTreeMap<(Side, String), MasterRoot>>,
}

impl<'e> Context<'e> {
    pub fn new(evidence: &'e Evidence) -> Context<'e> {
        Context {
            evidence,
            layout: Layout::default(),
            codeowners: OnceLock::new(),
            template: OnceLock::new(),
            signoff: OnceLock::new(),
            models_md: OnceLock::new(),
            all_configs: OnceLock::new(),
            reach: OnceLock::new(),
            scan_left: AtomicUsize::new(MAX_SCAN_BYTES),
            head_recipes: Mutex::new(BTreeMap::new()),
            master_roots: Mutex::new(BTreeMap::new()),
        }
    }

    /// The tree of `side`.
    pub fn tree(&self, side: Side) -> &'e MemTree {
        match side {
            Side::Base => &self.evidence.base,
            Side::Head => &self.evidence.head,
        }
    }

    /// The master-config file at `path` of `side`, with its text (`None`: not a text file of that
    /// tree). Parsed once per verification, whichever reader asks first.
    pub fn master_root(&self, side: Side, path: &str) -> Option<(MasterRoot, &'e str)> {
        let text = self.tree(side).text(path)?;
        let mut parsed = self.master_roots.lock().unwrap_or_else(PoisonError::into_inner);
        let root = parsed.entry((side, path.to_owned())).or_insert_with(|| Arc::new(crate::yaml::parse(text, path)));
        Some((Arc::clone(root), text))
    }

    /// The srt-slurm recipe at `path` of the head, as srtctl reads it (`None`: not a text file
    /// of the head). Parsed once per verification, whichever check asks first.
    pub fn head_recipe(&self, path: &str) -> Option<Arc<Result<Recipe, RecipeError>>> {
        let text = self.evidence.head.text(path)?;
        let mut parsed = self.head_recipes.lock().unwrap_or_else(PoisonError::into_inner);
        Some(Arc::clone(parsed.entry(path.to_owned()).or_insert_with(|| Arc::new(Recipe::parse(text, path)))))
    }

    /// Whether the scan budget of this verification is spent.
    pub fn scan_spent(&self) -> bool {
        self.scan_left.load(Ordering::Relaxed) == 0
    }

    /// Charges `bytes` of `what` (a script or a config's launch path) to the verification's scan
    /// budget; `Err` names the bound once it is spent, so the fact that needed the scan is
    /// unavailable (decision HE9). Checks run in a fixed order, so the same evidence spends the
    /// budget on the same files.
    pub fn charge_scan(&self, what: impl Into<serde_json::Value>, bytes: usize) -> Result<(), Reason> {
        let left = self.scan_left.load(Ordering::Relaxed);
        self.scan_left.store(left.saturating_sub(bytes), Ordering::Relaxed);
        match bytes > left {
            true => Err(reason("scan_budget_exceeded").arg("what", what).arg("budget", MAX_SCAN_BYTES)),
            false => Ok(()),
        }
    }

    /// Where the logical files are looked up.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// `Err(reason)` when the base tree could not be read, or lacks a file the PR modified,
    /// removed or renamed away (the collector keeps every changed file's base path, so an absent
    /// one was lost; decision FC2). A submodule pointer is no file of either tree.
    pub fn base_available(&self) -> Result<(), Reason> {
        let ev = self.evidence;
        if let Fact::Unavailable(reason) = &ev.trees.base {
            return Err(reason.as_str().into());
        }
        let lost = ev.files.iter().find_map(|f| {
            let at_base = match f.status.as_str() {
                "modified" | "changed" | "removed" => Some(&f.filename),
                "renamed" => f.previous_filename.as_ref(),
                _ => None,
            }?;
            // A submodule is in no tarball: its pointer is a fact of the file list (decision RV2).
            (ev.base.get(at_base).is_none() && f.gitlink().is_none()).then_some((at_base, f.status.as_str()))
        });
        match lost {
            Some((path, status)) => Err(lost_file(path, status, "base")),
            None => Ok(()),
        }
    }

    /// `Err(reason)` when the policy files could not be read at the default branch's tip (or the
    /// tip could not be resolved).
    pub fn policy_available(&self) -> Result<(), Reason> {
        match self.evidence.policy_fact() {
            Fact::Ok(()) => Ok(()),
            Fact::Unavailable(reason) => Err(reason.as_str().into()),
        }
    }

    /// `Err(reason)` when the head tree could not be read, or lacks a file the PR added or
    /// modified (the collector keeps every changed file, so an absent one was lost).
    pub fn head_available(&self) -> Result<(), Reason> {
        let ev = self.evidence;
        if let Fact::Unavailable(reason) = &ev.trees.head {
            return Err(reason.as_str().into());
        }
        let lost = ev.files.iter().find(|f| {
            matches!(f.status.as_str(), "added" | "modified" | "renamed" | "copied" | "changed")
                && ev.head.get(&f.filename).is_none()
                && f.gitlink().is_none()
        });
        match lost {
            Some(file) => Err(lost_file(&file.filename, &file.status, "head")),
            None => Ok(()),
        }
    }

    /// Where a logical file is in `tree`, and its text.
    pub fn text_of<'t>(&self, tree: &'t MemTree, logical: Logical) -> Result<(String, &'t str), Reason> {
        let path = self
            .layout
            .resolve(tree, logical)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| reason("logical_file_missing").arg("paths", logical.default_candidates()))?;
        let text = tree.text(&path).ok_or_else(|| reason("path_not_text").arg("path", path.as_str()))?;
        Ok((path, text))
    }

    /// CODEOWNERS at the policy tip (policy never comes from the PR head; ARCHITECTURE decision 6).
    pub fn codeowners(&self) -> &Parsed<Codeowners> {
        self.codeowners.get_or_init(|| {
            let (path, text) = self.text_of(self.evidence.policy_tree(), Logical::Codeowners)?;
            let (parsed, _diagnostics) = Codeowners::parse(text, &path);
            Ok((path, parsed))
        })
    }

    /// The review checklist template at the policy tip.
    pub fn template(&self) -> &Parsed<ChecklistTemplate> {
        self.template.get_or_init(|| {
            let (path, text) = self.text_of(self.evidence.policy_tree(), Logical::ReviewChecklist)?;
            match ChecklistTemplate::parse(text, &path) {
                (Some(t), _) => Ok((path, t)),
                (None, diags) => Err(diags
                    .first()
                    .map_or_else(|| reason("no_template_block").arg("path", path.as_str()), |d| d.to_string().into())),
            }
        })
    }

    /// MODELS.md at the policy tip.
    pub fn models_md(&self) -> &Parsed<ModelsMd> {
        self.models_md.get_or_init(|| {
            let (path, text) = self.text_of(self.evidence.policy_tree(), Logical::ModelsMd)?;
            match ModelsMd::parse(text, &path) {
                Ok(m) => Ok((path, m)),
                Err(diags) => {
                    Err(diags.first().map_or_else(|| format!("{path}: unreadable"), |d| d.to_string()).into())
                }
            }
        })
    }

    /// The additional detail section of the sign-off (empty when it has none or is unparsable).
    pub fn detail(&self) -> &str {
        self.signoff().as_ref().map_or("", |s| s.detail.as_str())
    }

    /// The sign-off body, parsed.
    pub fn signoff(&self) -> &Result<Signoff, String> {
        self.signoff.get_or_init(|| Signoff::parse(&self.evidence.signoff.body).map_err(|e| e.to_string()))
    }

    /// Whether the rule behind a checklist item was in force when the PR was reviewed: the item
    /// is in the template at base. `Some(false)` only when that template is readable and lacks
    /// the item; an unreadable template says nothing (`None`), so the rule still applies.
    pub fn in_force(&self, topic: Topic) -> Option<bool> {
        let (_, template) = self.template().as_ref().ok()?;
        Some(template.items.iter().any(|item| item.topic == Some(topic)))
    }
}

/// A changed file the collector lost from `tree` (it keeps every one): `status` is the PR's
/// (`renamed` at base: renamed away).
fn lost_file(path: &str, status: &str, tree: &str) -> Reason {
    reason("changed_file_lost").arg("path", path).arg("status", status).arg("tree", tree)
}
