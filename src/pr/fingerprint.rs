//! What a sign-off saw, as a comparable fingerprint (ARCHITECTURE decision 3, issue 25 item 1):
//! a sign-off carries forward to a new head only when the PR's own change there is identical
//! to the change the signer saw. Pure: it reads the PR's changed files and the blob SHAs at a
//! head (from the Evidence, or from the two GitHub lists the handler reads on a push), and the
//! affected master-config entries of a full Evidence.
//!
//! Inputs (decision HG1): every path of the PR's change against its head's merge base (both
//! paths of a rename) with GitHub's status and its blob at the head (`-` when absent there);
//! and each affected master-config entry with a SHA-256 of its text at the head and of the blob
//! of every file its launch reaches (so a change of the target branch that alters which configs
//! are affected, or what they run — a sourced `.env`, a config file passed by path — is a change
//! too, decision HT9). Anything that could not be read makes the fingerprint unknown, and an unknown
//! fingerprint never equals another one.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::affected::head_span;
use super::{reason, Context, Reason};
use crate::evidence::{Evidence, Fact};

/// Most changed paths (and most affected entries) a recorded fingerprint lists: the record
/// lives in the verdict comment, which GitHub bounds at 65536 characters. A larger PR gets no
/// record, so it never carries forward (fail closed).
pub const MAX_RECORDED: usize = 200;

/// One changed path of a PR at a head: GitHub's status and the blob there (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathState {
    pub status: String,
    pub blob: Option<String>,
}

/// The PR's own change at one head: changed path → its state there.
pub type FileStates = BTreeMap<String, PathState>;

/// The fingerprint recorded with a verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// The head the eligible signer saw (kept across carry-forwards).
    pub signed: String,
    /// The head it was computed at, the last commit it covers.
    pub head: String,
    pub files: FileStates,
    /// Affected master-config entry key → SHA-256 of its text and its reached files at the head.
    pub configs: BTreeMap<String, String>,
}

/// The file states of a change: `changed` is `(path, previous path, status)` per PR file,
/// `blobs` the head's `path → blob` (both as GitHub lists them).
pub fn file_states<'a>(
    changed: impl IntoIterator<Item = (&'a str, Option<&'a str>, &'a str)>,
    blobs: &BTreeMap<String, String>,
) -> FileStates {
    let mut states = FileStates::new();
    for (path, previous, status) in changed {
        for p in std::iter::once(path).chain(previous) {
            states.insert(p.to_owned(), PathState { status: status.to_owned(), blob: blobs.get(p).cloned() });
        }
    }
    states
}

fn sha256(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

impl Fingerprint {
    /// The fingerprint of a full Evidence; `Err` names what could not be read.
    pub fn of(evidence: &Evidence, signed: &str) -> Result<Fingerprint, Reason> {
        let head = &evidence.pull_request.head_sha;
        let blobs = match evidence.blobs.get(head) {
            Some(Fact::Unavailable(error)) => {
                return Err(reason("blobs_unreadable").arg("sha", head.as_str()).error(error))
            }
            Some(Fact::Ok(blobs)) => blobs,
            None => return Err(reason("blobs_absent").arg("sha", head.as_str())),
        };
        let changed =
            evidence.files.iter().map(|f| (f.filename.as_str(), f.previous_filename.as_deref(), f.status.as_str()));
        let files = file_states(changed, blobs);
        let cx = Context::new(evidence);
        let mut configs = BTreeMap::new();
        // One reach per affected config, in order: the configs and what each runs, read once.
        for super::configs::ConfigReach { config, path, .. } in super::reach::affected_reach(&cx)? {
            if evidence.head.text(&config.file).is_none() {
                return Err(reason("missing_at_head").arg("path", config.file.as_str()));
            }
            let span = head_span(&cx, config);
            let span = span.ok_or_else(|| {
                reason("entry_unreadable_at_head").arg("key", config.key.as_str()).arg("path", config.file.as_str())
            })?;
            // What the entry runs is part of it (issue 35 case 7): every file its launch reaches
            // (sourced files, files read by path, recipes) with its blob at the head.
            let reached: String = path
                .files
                .iter()
                .map(|f| format!("{} {}\n", f.path, blobs.get(&f.path).map_or("-", String::as_str)))
                .collect();
            configs.insert(config.key.clone(), sha256(&format!("{}\n{}\n{reached}", config.file, span.text)));
        }
        Ok(Fingerprint { signed: signed.to_owned(), head: head.clone(), files, configs })
    }

    /// A short digest of the inputs (the verdict marker's `fp=`).
    pub fn digest(&self) -> String {
        let inputs = serde_json::json!({"files": self.files, "configs": self.configs});
        sha256(&inputs.to_string())[..16].to_owned()
    }

    /// The record written into the verdict comment (`None` when too large to record): base64 of
    /// the JSON, an alphabet that cannot close the HTML comment it sits in.
    pub fn record(&self) -> Option<String> {
        if self.files.len() > MAX_RECORDED || self.configs.len() > MAX_RECORDED {
            return None;
        }
        let json = serde_json::to_vec(self).ok()?;
        Some(base64::engine::general_purpose::STANDARD.encode(json))
    }

    /// The fingerprint of a record; `None` for anything that is not one.
    pub fn from_record(record: &str) -> Option<Fingerprint> {
        let json = base64::engine::general_purpose::STANDARD.decode(record.trim()).ok()?;
        serde_json::from_slice(&json).ok()
    }
}

/// What differs between the change a signer saw and the change at a new head.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Changes {
    /// Paths added to, removed from, or changed in the PR's change.
    pub files: Vec<String>,
    /// Affected config entries that appeared, disappeared or changed.
    pub configs: Vec<String>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.configs.is_empty()
    }
}

fn differing<V: PartialEq>(a: &BTreeMap<String, V>, b: &BTreeMap<String, V>) -> Vec<String> {
    let keys: std::collections::BTreeSet<&String> =
        a.keys().chain(b.keys()).filter(|k| a.get(*k) != b.get(*k)).collect();
    keys.into_iter().cloned().collect()
}

/// The paths whose state differs between `signed` and `now`. A path whose blob is unknown on
/// both sides (`None` with a status that keeps the file) is a change: nothing says it is equal.
pub fn changed_files(signed: &FileStates, now: &FileStates) -> Vec<String> {
    let unknown = |s: &PathState| s.blob.is_none() && s.status != "removed" && s.status != "renamed";
    let mut out = differing(signed, now);
    out.extend(now.iter().filter(|&(p, s)| unknown(s) && signed.get(p).is_some_and(unknown)).map(|(p, _)| p.clone()));
    out.sort();
    out.dedup();
    out
}

/// Everything that differs between the fingerprint a signer saw and one at a new head.
pub fn changes(signed: &Fingerprint, now: &Fingerprint) -> Changes {
    Changes { files: changed_files(&signed.files, &now.files), configs: differing(&signed.configs, &now.configs) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pr::affected::affected_configs;

    /// The green-sweep fixture with the blob SHAs of its changed files at the head.
    fn bundle(name: &str) -> Evidence {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bundles").join(name);
        let mut ev = crate::evidence::read_bundle(&dir).unwrap();
        let at_head = ev.files.iter().map(|f| (f.filename.clone(), format!("blob-of-{}", f.filename))).collect();
        ev.blobs.insert(ev.pull_request.head_sha.clone(), crate::evidence::Fact::Ok(at_head));
        ev
    }

    fn blobs(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries.iter().map(|(p, b)| (p.to_string(), b.to_string())).collect()
    }

    fn states(files: &[(&str, Option<&str>, &str)], at: &[(&str, &str)]) -> FileStates {
        file_states(files.iter().copied(), &blobs(at))
    }

    const SIGNED: &[(&str, Option<&str>, &str)] =
        &[("perf-changelog.yaml", None, "modified"), ("configs/nvidia-master.yaml", None, "modified")];
    const AT_S: &[(&str, &str)] =
        &[("perf-changelog.yaml", "c1"), ("configs/nvidia-master.yaml", "n1"), ("README.md", "r1")];

    #[test]
    fn a_main_merge_that_leaves_the_prs_files_alone_is_identical() {
        let s = states(SIGNED, AT_S);
        // The target branch changed README.md and added a file the PR does not touch.
        let h = states(
            SIGNED,
            &[("perf-changelog.yaml", "c1"), ("configs/nvidia-master.yaml", "n1"), ("README.md", "r2"), ("x", "y")],
        );
        assert!(changed_files(&s, &h).is_empty());
    }

    #[test]
    fn one_byte_of_a_pr_file_is_a_change() {
        let s = states(SIGNED, AT_S);
        let h = states(SIGNED, &[("perf-changelog.yaml", "c1"), ("configs/nvidia-master.yaml", "n2")]);
        assert_eq!(changed_files(&s, &h), ["configs/nvidia-master.yaml"]);
    }

    #[test]
    fn a_file_added_or_removed_is_a_change() {
        let s = states(SIGNED, AT_S);
        let mut added = SIGNED.to_vec();
        added.push(("benchmarks/new.sh", None, "added"));
        let h = states(
            &added,
            &[("perf-changelog.yaml", "c1"), ("configs/nvidia-master.yaml", "n1"), ("benchmarks/new.sh", "b")],
        );
        assert_eq!(changed_files(&s, &h), ["benchmarks/new.sh"]);
        let h = states(&SIGNED[..1], AT_S);
        assert_eq!(changed_files(&s, &h), ["configs/nvidia-master.yaml"]);
        // The PR deleting a file it had modified: same path, now removed (no blob at the head).
        let mut removed = SIGNED.to_vec();
        removed[1].2 = "removed";
        let h = states(&removed, &[("perf-changelog.yaml", "c1")]);
        assert_eq!(changed_files(&s, &h), ["configs/nvidia-master.yaml"]);
    }

    #[test]
    fn a_rename_is_a_change() {
        let s = states(SIGNED, AT_S);
        let mut renamed = SIGNED.to_vec();
        renamed[1] = ("configs/nv-master.yaml", Some("configs/nvidia-master.yaml"), "renamed");
        // Same content under the new name: the blob is the same, the paths are not.
        let h = states(&renamed, &[("perf-changelog.yaml", "c1"), ("configs/nv-master.yaml", "n1")]);
        assert_eq!(changed_files(&s, &h), ["configs/nv-master.yaml", "configs/nvidia-master.yaml"]);
    }

    #[test]
    fn a_force_push_to_other_content_with_the_same_paths_is_a_change() {
        let s = states(SIGNED, AT_S);
        let h = states(SIGNED, &[("perf-changelog.yaml", "c9"), ("configs/nvidia-master.yaml", "n9")]);
        assert_eq!(changed_files(&s, &h), ["configs/nvidia-master.yaml", "perf-changelog.yaml"]);
    }

    #[test]
    fn a_target_merge_touching_a_pr_file_is_a_change() {
        let s = states(SIGNED, AT_S);
        // main edited nvidia-master.yaml too: the merged file is a new blob.
        let h = states(SIGNED, &[("perf-changelog.yaml", "c1"), ("configs/nvidia-master.yaml", "n1+main")]);
        assert_eq!(changed_files(&s, &h), ["configs/nvidia-master.yaml"]);
        // main took the PR's exact change: the file leaves the PR's diff against the new base.
        let h = states(&SIGNED[..1], &[("perf-changelog.yaml", "c1"), ("configs/nvidia-master.yaml", "n1")]);
        assert_eq!(changed_files(&s, &h), ["configs/nvidia-master.yaml"]);
    }

    #[test]
    fn unknown_blobs_never_compare_equal() {
        let s = states(SIGNED, &[]);
        assert_eq!(changed_files(&s, &s.clone()), ["configs/nvidia-master.yaml", "perf-changelog.yaml"]);
    }

    #[test]
    fn a_base_change_that_alters_the_affected_configs_is_a_change() {
        let mut ev = bundle("green-sweep");
        let head = ev.pull_request.head_sha.clone();
        let signed = Fingerprint::of(&ev, &head).unwrap();
        assert!(!signed.configs.is_empty(), "the fixture affects configs");
        assert!(changes(&signed, &Fingerprint::of(&ev, &head).unwrap()).is_empty());
        // An affected entry's text changes while every changed path keeps its blob, as when
        // the target branch edits an entry in a master file the PR does not touch: the same
        // files, other configs.
        let key = signed.configs.keys().next().unwrap().clone();
        let cx = Context::new(&ev);
        let config = affected_configs(&cx).unwrap().into_iter().find(|c| c.key == key).unwrap();
        let text = ev.head.text(&config.file).unwrap().to_owned();
        let changed = text.replacen(&format!("{key}:\n"), &format!("{key}:\n  # tuned on main\n"), 1);
        assert_ne!(changed, text);
        ev.head.insert(&config.file, changed);
        let now = Fingerprint::of(&ev, &head).unwrap();
        assert_eq!(changes(&signed, &now), Changes { files: vec![], configs: vec![key] });
    }

    /// Issue 35 case 7: main changes a file the launcher sources (any name) and the PR merges
    /// main. The PR's own files keep their blobs, but what the affected config runs changed.
    #[test]
    fn a_change_to_a_file_the_launch_reaches_is_a_change_of_its_config() {
        let mut ev = bundle("green-sweep");
        let head = ev.pull_request.head_sha.clone();
        let launcher = "benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200_sglang.sh";
        let text = format!("source \"$(dirname \"$0\")/b200.env\"\n{}", ev.head.text(launcher).unwrap());
        ev.head.insert(launcher, text);
        ev.head.insert("benchmarks/single_node/fixed_seq_len/b200.env", "export NCCL_ALGO=Ring\n");
        let with_env_blob = |ev: &mut Evidence, blob: &str| {
            let Some(crate::evidence::Fact::Ok(blobs)) = ev.blobs.get_mut(&head) else { unreachable!() };
            blobs.insert("benchmarks/single_node/fixed_seq_len/b200.env".into(), blob.into());
        };
        with_env_blob(&mut ev, "e1");
        let signed = Fingerprint::of(&ev, &head).unwrap();
        assert!(changes(&signed, &Fingerprint::of(&ev, &head).unwrap()).is_empty());
        with_env_blob(&mut ev, "e2");
        let now = Fingerprint::of(&ev, &head).unwrap();
        assert_eq!(changes(&signed, &now), Changes { files: vec![], configs: vec!["dsr1-fp4-b200-sglang".into()] });
    }

    #[test]
    fn the_record_round_trips_and_cannot_close_its_comment() {
        let ev = bundle("green-sweep");
        let fp = Fingerprint::of(&ev, "s").unwrap();
        let record = fp.record().unwrap();
        assert!(!record.contains("--") && !record.contains('>'), "{record}");
        assert_eq!(Fingerprint::from_record(&record), Some(fp.clone()));
        assert_eq!(Fingerprint::from_record("not base64 -->"), None);
        assert_eq!(fp.digest().len(), 16);
        let mut large = fp;
        large.files =
            (0..=MAX_RECORDED).map(|i| (format!("f{i}"), PathState { status: "added".into(), blob: None })).collect();
        assert_eq!(large.record(), None, "too large to record: never carried forward");
    }

    #[test]
    fn unreadable_blobs_make_the_fingerprint_unknown() {
        let mut ev = bundle("green-sweep");
        let head = ev.pull_request.head_sha.clone();
        ev.blobs.insert(head.clone(), crate::evidence::Fact::Unavailable("HTTP 502".into()));
        assert!(Fingerprint::of(&ev, &head).unwrap_err().to_string().contains("could not be read"));
        ev.blobs.clear();
        assert!(Fingerprint::of(&ev, &head).is_err());
    }
}
