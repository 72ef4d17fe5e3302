//! One size policy for evidence (issue 24 item 1; decision HE9): what `collect` writes is what
//! `verify` reads, and past a bound the fact is unavailable, never a bundle `verify` refuses.
//!
//! Both sides call the same functions: the collector on the trees it unpacked and the file list
//! GitHub gave, the bundle reader on what it loaded. The checks' scans of scripts share one
//! budget per verification ([`MAX_SCAN_BYTES`], charged through `checks::Context::charge_scan`).

use crate::repo::MemTree;

use super::ChangedFile;

/// Largest file of a tree: the bound every reader of the repository has (`repo::MAX_FILE_BYTES`).
pub const MAX_FILE_BYTES: u64 = crate::repo::MAX_FILE_BYTES;
/// Most files one tree (`base/`, `head/`) of a verification holds. The upstream tree at
/// upto-2026-08-19 holds 742 files under the paths a verdict reads (1,248 in all).
pub const MAX_TREE_FILES: usize = 20_000;
/// Most bytes one tree holds: 15 times the upstream tree's 4.2 MB under those paths (12 MB in all).
pub const MAX_TREE_BYTES: u64 = 64 << 20;
/// Most bytes of unpacked artifacts a bundle holds (the collector's global unpack bound).
pub const MAX_ARTIFACT_BYTES: u64 = 1 << 30;
/// Largest diff (`patch`) kept for one changed file; GitHub itself leaves out the diff of a large
/// file, and the checks then read the whole file at the head (`checks::scan::added_lines_of`).
pub const MAX_PATCH_BYTES: usize = 1 << 20;
/// Most diff bytes kept for the whole PR; later files (in GitHub's order) keep no diff.
pub const MAX_PATCHES_BYTES: usize = 16 << 20;
/// Largest evidence.json read. What the collector writes stays below it: the diffs are bounded
/// above and the trees are files of their own.
pub const MAX_EVIDENCE_JSON: u64 = 64 << 20;
/// Bytes of scripts the launch reach and Check 3 scan in one verification. The biggest upstream
/// changelog entry names 52 configs; their reaches (launcher, `benchmark_lib.sh`, server scripts)
/// read about 10 MB.
pub const MAX_SCAN_BYTES: usize = 32 << 20;

/// `Err(reason)` when a tree is beyond the policy: more than [`MAX_TREE_FILES`] files, more than
/// [`MAX_TREE_BYTES`] bytes (`max_bytes`, for artifacts [`MAX_ARTIFACT_BYTES`]) or a file above
/// [`MAX_FILE_BYTES`]. The caller makes the tree's fact unavailable with the reason.
pub fn check_tree(tree: &MemTree, max_bytes: u64) -> Result<(), String> {
    let (mut files, mut bytes) = (0usize, 0u64);
    for path in tree.paths() {
        let size = tree.get(path).map_or(0, <[u8]>::len) as u64;
        if size > MAX_FILE_BYTES {
            return Err(format!("{path} is {size} bytes, above the {MAX_FILE_BYTES}-byte bound of one file"));
        }
        files += 1;
        bytes += size;
        if files > MAX_TREE_FILES {
            return Err(format!("more than {MAX_TREE_FILES} files, the bound of one tree"));
        }
    }
    if bytes > max_bytes {
        return Err(format!("{bytes} bytes, above the {max_bytes}-byte bound of one tree"));
    }
    Ok(())
}

/// Drops the diff of a file above [`MAX_PATCH_BYTES`] and of every file after the first
/// [`MAX_PATCHES_BYTES`] of diffs, as GitHub leaves out a large file's diff: the checks then read
/// the whole file at the head (every line counts as added, so nothing is judged on less).
/// Returns how many diffs were dropped.
pub fn bound_patches(files: &mut [ChangedFile]) -> usize {
    let mut total = 0usize;
    let mut dropped = 0;
    for file in files {
        let Some(len) = file.patch.as_ref().map(String::len) else { continue };
        if len > MAX_PATCH_BYTES || total + len > MAX_PATCHES_BYTES {
            file.patch = None;
            dropped += 1;
        } else {
            total += len;
        }
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changed(name: &str, patch_bytes: usize) -> ChangedFile {
        ChangedFile {
            filename: name.into(),
            previous_filename: None,
            status: "modified".into(),
            patch: Some("+".repeat(patch_bytes)),
        }
    }

    #[test]
    fn a_tree_beyond_the_policy_is_named_and_one_within_passes() {
        let mut tree = MemTree::new().with("benchmarks/a.sh", "x");
        assert_eq!(check_tree(&tree, MAX_TREE_BYTES), Ok(()));
        tree.insert("benchmarks/big.sh", vec![b'x'; MAX_FILE_BYTES as usize + 1]);
        let reason = check_tree(&tree, MAX_TREE_BYTES).unwrap_err();
        assert!(reason.starts_with("benchmarks/big.sh is 8388609 bytes, above the 8388608-byte bound"), "{reason}");
        let mut tree = MemTree::new();
        for i in 0..9 {
            tree.insert(format!("benchmarks/{i}.sh"), vec![b'x'; 8 << 20]);
        }
        assert_eq!(
            check_tree(&tree, MAX_TREE_BYTES).unwrap_err(),
            "75497472 bytes, above the 67108864-byte bound of one tree"
        );
        let mut tree = MemTree::new();
        for i in 0..=MAX_TREE_FILES {
            tree.insert(format!("benchmarks/{i}.sh"), "");
        }
        assert_eq!(check_tree(&tree, MAX_TREE_BYTES).unwrap_err(), "more than 20000 files, the bound of one tree");
    }

    #[test]
    fn diffs_beyond_the_policy_are_dropped_in_order_and_the_rest_kept() {
        let mut files =
            vec![changed("a.sh", 10), changed("huge.sh", MAX_PATCH_BYTES + 1), changed("b.sh", MAX_PATCH_BYTES)];
        files.extend((0..16).map(|i| changed(&format!("c{i}.sh"), MAX_PATCH_BYTES)));
        assert_eq!(bound_patches(&mut files), 3, "huge.sh, and c14 and c15 past the total");
        assert!(files[1].patch.is_none(), "above the per-file bound");
        assert!(files[0].patch.is_some() && files[2].patch.is_some());
        let kept: usize = files.iter().filter_map(|f| f.patch.as_ref()).map(String::len).sum();
        assert!(kept <= MAX_PATCHES_BYTES, "{kept}");
        assert!(files.last().unwrap().patch.is_none(), "past the total bound");
        assert_eq!(bound_patches(&mut files), 0, "the policy is idempotent: verify drops nothing collect kept");
    }
}
