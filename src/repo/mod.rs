//! The repository under verification as a read-only file tree, at a work tree, a git ref or
//! in memory (an Evidence bundle). Every parser reads through [`Tree`], so the pure core never
//! touches the file system or git itself.

mod git;
mod layout;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use git::{git, GitTree};
pub use layout::{Layout, Logical};

#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    #[error("cannot read {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("git {args} failed in {repo}: {stderr}")]
    Git { repo: String, args: String, stderr: String },
    #[error("'{rev}' is not a commit in {repo}; pass a branch, tag or SHA that `git rev-parse` knows")]
    UnknownRev { repo: String, rev: String },
    #[error("{path} is {size} bytes; sweepgate reads repository files of at most {limit} bytes")]
    TooLarge { path: String, size: u64, limit: u64 },
    #[error("invalid repository path '{0}' (absolute, or with '..')")]
    BadPath(String),
}

/// Largest file read from a repository under verification.
pub const MAX_FILE_BYTES: u64 = crate::yaml::MAX_FILE_BYTES as u64;

/// Read access to one snapshot of a repository. Paths are repository-relative with `/`.
pub trait Tree: Send + Sync {
    /// The file's bytes, or `None` when no such file exists.
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, RepoError>;
    /// Every file below `dir` (recursively; `""` for all), sorted.
    fn list(&self, dir: &str) -> Result<Vec<String>, RepoError>;
    /// Whether the file exists.
    fn exists(&self, path: &str) -> Result<bool, RepoError> {
        Ok(self.read(path)?.is_some())
    }
    /// Whether any file lies below `dir`.
    fn dir_exists(&self, dir: &str) -> Result<bool, RepoError> {
        Ok(!self.list(dir)?.is_empty())
    }
}

fn check_path(path: &str) -> Result<(), RepoError> {
    if path.starts_with('/') || path.split('/').any(|c| c == "..") {
        return Err(RepoError::BadPath(path.to_owned()));
    }
    Ok(())
}

/// Most symbolic links followed to reach one file.
const MAX_LINK_HOPS: usize = 8;

/// The repository path a symbolic link at `link` names with `target`: relative to the link's
/// folder; `None` for an absolute target or one that climbs above the root.
fn link_target(link: &str, target: &str) -> Option<String> {
    let target = target.trim_end_matches('\n');
    if target.is_empty() || target.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = link.split('/').collect();
    parts.pop();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

fn under(dir: &str, path: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    dir.is_empty() || path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'))
}

/// A plain directory (a checkout or an unpacked fixture).
#[derive(Debug, Clone)]
pub struct WorkTree {
    root: PathBuf,
    /// The root with symbolic links resolved, computed on first use (`None`: unreadable).
    canonical_root: std::sync::OnceLock<Option<PathBuf>>,
}

impl WorkTree {
    pub fn new(root: impl Into<PathBuf>) -> WorkTree {
        WorkTree { root: root.into(), canonical_root: std::sync::OnceLock::new() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether `full` is inside the root once symbolic links are resolved: a link is read as
    /// the file it names in the tree, never one outside it.
    fn inside(&self, full: &Path) -> bool {
        let root = self.canonical_root.get_or_init(|| std::fs::canonicalize(&self.root).ok());
        match (std::fs::canonicalize(full), root) {
            (Ok(file), Some(root)) => file.starts_with(root),
            // A missing file reads as absent below; an unreadable root errs there.
            _ => true,
        }
    }
}

impl Tree for WorkTree {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, RepoError> {
        check_path(path)?;
        let full = self.root.join(path);
        if !self.inside(&full) {
            return Ok(None);
        }
        let meta = match std::fs::metadata(&full) {
            Ok(m) if m.is_file() => m,
            Ok(_) => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(RepoError::Io { path: path.to_owned(), source }),
        };
        if meta.len() > MAX_FILE_BYTES {
            return Err(RepoError::TooLarge { path: path.to_owned(), size: meta.len(), limit: MAX_FILE_BYTES });
        }
        std::fs::read(&full).map(Some).map_err(|source| RepoError::Io { path: path.to_owned(), source })
    }

    fn list(&self, dir: &str) -> Result<Vec<String>, RepoError> {
        check_path(dir)?;
        let mut out = Vec::new();
        let start = self.root.join(dir);
        if !start.is_dir() {
            return Ok(out);
        }
        let mut stack = vec![start];
        while let Some(d) = stack.pop() {
            let entries =
                std::fs::read_dir(&d).map_err(|source| RepoError::Io { path: d.display().to_string(), source })?;
            for entry in entries {
                let entry = entry.map_err(|source| RepoError::Io { path: d.display().to_string(), source })?;
                let name = entry.file_name();
                if name == ".git" {
                    continue;
                }
                let p = entry.path();
                let file_type =
                    entry.file_type().map_err(|source| RepoError::Io { path: p.display().to_string(), source })?;
                if file_type.is_dir() {
                    stack.push(p);
                } else if file_type.is_file() || file_type.is_symlink() && p.is_file() && self.inside(&p) {
                    if let Ok(rel) = p.strip_prefix(&self.root) {
                        out.push(rel.to_string_lossy().replace('\\', "/"));
                    }
                }
            }
        }
        out.sort();
        Ok(out)
    }
}

/// Files held in memory: an Evidence bundle, or a test's hand-built tree.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MemTree {
    files: BTreeMap<String, Vec<u8>>,
}

impl MemTree {
    pub fn new() -> MemTree {
        MemTree::default()
    }

    pub fn insert(&mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) {
        self.files.insert(path.into(), bytes.into());
    }

    pub fn with(mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> MemTree {
        self.insert(path, bytes);
        self
    }

    /// Takes a file out of the tree.
    pub fn remove(&mut self, path: &str) -> Option<Vec<u8>> {
        self.files.remove(path)
    }

    /// The bytes of a file, borrowed.
    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(Vec::as_slice)
    }

    /// The file as UTF-8 text, if it exists and is text.
    pub fn text(&self, path: &str) -> Option<&str> {
        self.get(path).and_then(|b| std::str::from_utf8(b).ok())
    }

    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// Whether any file lies below `dir` (a path prefix ending in `/`).
    pub fn has_files_under(&self, dir: &str) -> bool {
        self.files
            .range::<str, _>((std::ops::Bound::Included(dir), std::ops::Bound::Unbounded))
            .next()
            .is_some_and(|(path, _)| path.starts_with(dir))
    }

    /// Copies every file below `dir` of another tree.
    pub fn copy_from(&mut self, tree: &dyn Tree, dir: &str) -> Result<(), RepoError> {
        for path in tree.list(dir)? {
            if let Some(bytes) = tree.read(&path)? {
                self.files.insert(path, bytes);
            }
        }
        Ok(())
    }
}

impl Tree for MemTree {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, RepoError> {
        check_path(path)?;
        Ok(self.files.get(path).cloned())
    }

    fn list(&self, dir: &str) -> Result<Vec<String>, RepoError> {
        check_path(dir)?;
        Ok(self.files.keys().filter(|p| under(dir, p)).cloned().collect())
    }
}

/// A repository path with `.` and `..` resolved: `a/./b/../c` → `a/c` (a `..` above the root
/// is dropped).
pub fn normalize_path(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_dot_segments_and_never_climb_above_the_root() {
        assert_eq!(normalize_path("benchmarks/./multi_node/../amd_utils/server.sh"), "benchmarks/amd_utils/server.sh");
        assert_eq!(normalize_path("../../a//b/"), "a/b");
    }

    #[test]
    fn mem_tree_lists_below_a_directory_only() {
        let t = MemTree::new()
            .with("configs/a.yaml", "a")
            .with("configs/deprecated/b.yaml", "b")
            .with("configs-old/c", "c");
        assert_eq!(t.list("configs").unwrap(), ["configs/a.yaml", "configs/deprecated/b.yaml"]);
        assert_eq!(t.list("").unwrap().len(), 3);
        assert_eq!(t.read("configs/a.yaml").unwrap().as_deref(), Some(&b"a"[..]));
        assert_eq!(t.read("nope").unwrap(), None);
        assert!(matches!(t.read("../etc/passwd"), Err(RepoError::BadPath(_))));
    }

    #[test]
    fn a_work_tree_link_reads_as_its_target_inside_the_root_only() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("runners")).unwrap();
        std::fs::write(d.join("runners/launch_a.sh"), "a").unwrap();
        std::os::unix::fs::symlink("launch_a.sh", d.join("runners/launch_b.sh")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), d.join("runners/out.sh")).unwrap();
        let t = WorkTree::new(d);
        assert_eq!(t.list("runners").unwrap(), ["runners/launch_a.sh", "runners/launch_b.sh"]);
        assert_eq!(t.read("runners/launch_b.sh").unwrap().unwrap(), b"a");
        assert_eq!(t.read("runners/out.sh").unwrap(), None);
        assert_eq!(link_target("a/b/c.sh", "../d.sh").as_deref(), Some("a/d.sh"));
        assert_eq!(link_target("a/c.sh", "../../d.sh"), None);
    }

    #[test]
    fn work_tree_reads_and_lists() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("x/y")).unwrap();
        std::fs::write(dir.path().join("x/y/z.txt"), "hi").unwrap();
        std::fs::write(dir.path().join("top.txt"), "t").unwrap();
        let t = WorkTree::new(dir.path());
        assert_eq!(t.list("").unwrap(), ["top.txt", "x/y/z.txt"]);
        assert_eq!(t.list("x").unwrap(), ["x/y/z.txt"]);
        assert_eq!(t.read("x/y/z.txt").unwrap().unwrap(), b"hi");
        assert!(t.read("x").unwrap().is_none(), "a directory is not a file");
        assert!(t.dir_exists("x/y").unwrap());
        assert!(!t.dir_exists("q").unwrap());
    }
}
