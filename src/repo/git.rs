//! A commit of a git repository as a [`Tree`], read through one `git cat-file --batch` process.
//!
//! Files are read by blob id, never by `commit:path`: the batch protocol is line based, and a path
//! holding a newline (a file name is any bytes but NUL) would split one request in two and put
//! every later answer out of step. The ids come from `git ls-tree -z`, whose records cannot split.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

use super::{check_path, link_target, under, RepoError, Tree, MAX_FILE_BYTES, MAX_LINK_HOPS};

pub struct GitTree {
    repo: PathBuf,
    commit: String,
    /// Every file of the commit, sorted by path, with its blob id and whether it is a symbolic
    /// link (mode 120000: its blob is the link's target).
    files: Vec<(String, String, bool)>,
    batch: Mutex<Option<Batch>>,
}

struct Batch {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Drop for Batch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs git in `repo` and returns stdout.
pub fn git(repo: &Path, args: &[&str]) -> Result<Vec<u8>, RepoError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| RepoError::Io { path: format!("git in {}", repo.display()), source })?;
    if !out.status.success() {
        return Err(RepoError::Git {
            repo: repo.display().to_string(),
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(out.stdout)
}

impl GitTree {
    /// Opens `rev` (any commit-ish) of the repository at `repo`.
    pub fn open(repo: impl Into<PathBuf>, rev: &str) -> Result<GitTree, RepoError> {
        let repo = repo.into();
        if rev.starts_with('-') {
            return Err(RepoError::UnknownRev { repo: repo.display().to_string(), rev: rev.to_owned() });
        }
        let spec = format!("{rev}^{{commit}}");
        let commit = git(&repo, &["rev-parse", "--verify", "--quiet", &spec])
            .map_err(|_| RepoError::UnknownRev { repo: repo.display().to_string(), rev: rev.to_owned() })?;
        let commit = String::from_utf8_lossy(&commit).trim().to_owned();
        let listing = git(&repo, &["ls-tree", "-r", "-z", "--full-tree", &commit])?;
        let mut files: Vec<(String, String, bool)> =
            listing.split(|b| *b == 0).filter(|s| !s.is_empty()).filter_map(blob_entry).collect();
        files.sort();
        Ok(GitTree { repo, commit, files, batch: Mutex::new(None) })
    }

    /// The full SHA of the commit.
    pub fn commit(&self) -> &str {
        &self.commit
    }

    pub fn repo(&self) -> &Path {
        &self.repo
    }

    fn start_batch(&self) -> Result<Batch, RepoError> {
        let mut child = Command::new("git")
            .arg("-C")
            .arg(&self.repo)
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| RepoError::Io { path: "git cat-file".into(), source })?;
        let stdin = child.stdin.take().ok_or_else(|| self.batch_error("no stdin"))?;
        let stdout = BufReader::new(child.stdout.take().ok_or_else(|| self.batch_error("no stdout"))?);
        Ok(Batch { child, stdin, stdout })
    }

    fn batch_error(&self, what: &str) -> RepoError {
        RepoError::Git { repo: self.repo.display().to_string(), args: "cat-file --batch".into(), stderr: what.into() }
    }

    fn read_blob(&self, batch: &mut Batch, path: &str, blob: &str) -> Result<Vec<u8>, RepoError> {
        let io = |source| RepoError::Io { path: path.to_owned(), source };
        writeln!(batch.stdin, "{blob}").map_err(io)?;
        batch.stdin.flush().map_err(io)?;
        let mut header = String::new();
        batch.stdout.read_line(&mut header).map_err(io)?;
        let mut parts = header.split_whitespace();
        let (sha, kind, size) = (parts.next(), parts.next(), parts.next());
        let size: u64 = match (sha, kind, size) {
            (Some(sha), Some("blob"), Some(size)) if sha == blob => {
                size.parse().map_err(|_| self.batch_error(&header))?
            }
            _ => return Err(self.batch_error(&format!("unexpected answer for {path}: {}", header.trim()))),
        };
        let mut body = vec![0u8; usize::try_from(size).map_err(|_| self.batch_error("size"))?];
        batch.stdout.read_exact(&mut body).map_err(io)?;
        let mut newline = [0u8; 1];
        batch.stdout.read_exact(&mut newline).map_err(io)?;
        if size > MAX_FILE_BYTES {
            return Err(RepoError::TooLarge { path: path.to_owned(), size, limit: MAX_FILE_BYTES });
        }
        Ok(body)
    }

    fn read_entry(&self, path: &str, blob: &str) -> Result<Vec<u8>, RepoError> {
        let mut guard = self.batch.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if guard.is_none() {
            *guard = Some(self.start_batch()?);
        }
        let Some(batch) = guard.as_mut() else { return Err(self.batch_error("not started")) };
        let read = self.read_blob(batch, path, blob);
        if read.is_err() {
            // A failed exchange leaves the stream out of step: start afresh next time.
            *guard = None;
        }
        read
    }
}

impl Tree for GitTree {
    /// A symbolic link reads as the file it names inside the commit (as `bash runners/x.sh`
    /// runs it); one that dangles, loops or leaves the tree is no file.
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, RepoError> {
        check_path(path)?;
        let mut path = path.to_owned();
        for _ in 0..=MAX_LINK_HOPS {
            let Ok(found) = self.files.binary_search_by(|(p, _, _)| p.as_str().cmp(&path)) else {
                return Ok(None);
            };
            let (_, blob, link) = &self.files[found];
            let bytes = self.read_entry(&path, blob)?;
            if !link {
                return Ok(Some(bytes));
            }
            match link_target(&path, &String::from_utf8_lossy(&bytes)) {
                Some(target) => path = target,
                None => return Ok(None),
            }
        }
        Ok(None)
    }

    fn list(&self, dir: &str) -> Result<Vec<String>, RepoError> {
        check_path(dir)?;
        Ok(self.files.iter().filter(|(p, _, _)| under(dir, p)).map(|(p, _, _)| p.clone()).collect())
    }
}

/// One `git ls-tree -z` record, `<mode> blob <id>\t<path>`, as (path, id, is a link); submodules
/// (commits) are not files of this repository. A path that is not UTF-8 is kept lossily, so it
/// still cannot name another file's blob: its id travels with it.
fn blob_entry(record: &[u8]) -> Option<(String, String, bool)> {
    let tab = record.iter().position(|b| *b == b'\t')?;
    let (meta, path) = (String::from_utf8_lossy(&record[..tab]), &record[tab + 1..]);
    let mut fields = meta.split(' ');
    let (mode, kind, id) = (fields.next()?, fields.next()?, fields.next()?);
    (kind == "blob" && id.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| (String::from_utf8_lossy(path).into_owned(), id.to_owned(), mode == "120000"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, args: &[&str]) {
        let ok = Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
        assert!(ok.status.success(), "{:?}", ok);
    }

    #[test]
    fn reads_files_at_a_commit() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(d, &["init", "-q", "-b", "main"]);
        std::fs::create_dir_all(d.join("configs")).unwrap();
        std::fs::write(d.join("configs/a.yaml"), "v1\n").unwrap();
        sh(d, &["add", "."]);
        sh(d, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
        std::fs::write(d.join("configs/a.yaml"), "v2\n").unwrap();
        std::fs::write(d.join("b.txt"), "b").unwrap();
        sh(d, &["add", "."]);
        sh(d, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "two"]);

        let old = GitTree::open(d, "HEAD~1").unwrap();
        assert_eq!(old.list("").unwrap(), ["configs/a.yaml"]);
        assert_eq!(old.read("configs/a.yaml").unwrap().unwrap(), b"v1\n");
        assert_eq!(old.read("b.txt").unwrap(), None);
        let new = GitTree::open(d, "main").unwrap();
        assert_eq!(new.read("configs/a.yaml").unwrap().unwrap(), b"v2\n");
        assert_eq!(new.read("b.txt").unwrap().unwrap(), b"b");
        assert_eq!(new.commit().len(), 40);

        assert!(matches!(GitTree::open(d, "no-such-branch"), Err(RepoError::UnknownRev { .. })));
        assert!(matches!(GitTree::open(d, "--help"), Err(RepoError::UnknownRev { .. })));
    }

    #[test]
    fn a_symbolic_link_reads_as_the_file_it_names_inside_the_commit() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(d, &["init", "-q", "-b", "main"]);
        std::fs::create_dir_all(d.join("runners")).unwrap();
        std::fs::write(d.join("runners/launch_b200-dgxc.sh"), "bash benchmarks/x.sh\n").unwrap();
        let link = |target: &str, at: &str| std::os::unix::fs::symlink(target, d.join(at)).unwrap();
        // As upstream's runners/launch_b200-dgxc-slurm.sh -> launch_b200-dgxc.sh.
        link("launch_b200-dgxc.sh", "runners/launch_b200-dgxc-slurm.sh");
        link("launch_b200-dgxc-slurm.sh", "runners/chain.sh");
        link("/etc/passwd", "runners/absolute.sh");
        link("../../outside", "runners/climbs.sh");
        link("loop-b.sh", "runners/loop-a.sh");
        link("loop-a.sh", "runners/loop-b.sh");
        link("nothing.sh", "runners/dangles.sh");
        sh(d, &["add", "."]);
        sh(d, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "links"]);
        let t = GitTree::open(d, "HEAD").unwrap();
        let text = Some(b"bash benchmarks/x.sh\n".to_vec());
        assert_eq!(t.read("runners/launch_b200-dgxc-slurm.sh").unwrap(), text);
        assert_eq!(t.read("runners/chain.sh").unwrap(), text);
        for gone in ["absolute", "climbs", "loop-a", "dangles"] {
            assert_eq!(t.read(&format!("runners/{gone}.sh")).unwrap(), None, "{gone}");
        }
    }

    #[test]
    fn a_newline_in_a_file_name_cannot_put_reads_out_of_step() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(d, &["init", "-q", "-b", "main"]);
        std::fs::write(d.join("a.yaml"), "old a\n").unwrap();
        sh(d, &["add", "."]);
        sh(d, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
        let old = GitTree::open(d, "HEAD").unwrap();
        // The name asks the batch for `a.yaml`, then for the old commit's `a.yaml`.
        let evil = format!("a.yaml\n{}:a.yaml", old.commit());
        std::fs::write(d.join("a.yaml"), "new a\n").unwrap();
        std::fs::write(d.join(&evil), "the evil file's own bytes\n").unwrap();
        std::fs::write(d.join("b.yaml"), "b\n").unwrap();
        sh(d, &["add", "."]);
        sh(d, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "two"]);

        let head = GitTree::open(d, "HEAD").unwrap();
        assert!(head.list("").unwrap().contains(&evil));
        assert_eq!(head.read(&evil).unwrap().unwrap(), b"the evil file's own bytes\n");
        assert_eq!(head.read("b.yaml").unwrap().unwrap(), b"b\n");
        assert_eq!(head.read("a.yaml").unwrap().unwrap(), b"new a\n");
    }
}
