//! Archives from GitHub, unpacked into [`MemTree`]s with bounds: repository tarballs (only the
//! paths a verdict reads) and Actions artifact zips, whose nested `.tar` / `.tar.gz` / `.tgz`
//! log archives are unpacked too (a published verdict failed because a server-log tarball
//! could not be extracted).

use std::io::Read;

use crate::repo::MemTree;

#[derive(Debug, Clone, Copy)]
pub struct ArchiveLimits {
    /// Most entries read from one archive (nested archives count their own).
    pub max_entries: usize,
    /// Largest single file kept: [`crate::repo::MAX_FILE_BYTES`], the bound `verify` reads
    /// with, so the collector never keeps a file the verifier would refuse.
    pub max_file_bytes: u64,
    /// Most bytes kept from one archive, nested archives included.
    pub max_total_bytes: u64,
}

impl Default for ArchiveLimits {
    fn default() -> Self {
        ArchiveLimits { max_entries: 20_000, max_file_bytes: crate::repo::MAX_FILE_BYTES, max_total_bytes: 512 << 20 }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ArchiveError {
    #[error("not a readable {kind} archive: {message}")]
    Corrupt { kind: &'static str, message: String },
    #[error("more than {0} entries")]
    TooManyEntries(usize),
    #[error("more than {0} bytes unpacked")]
    TooLarge(u64),
    /// Two entries that cannot both be files on disk (`a` and `a/b`), or one name twice.
    #[error("entry names collide: {0}")]
    Collision(String),
}

/// What an artifact unpacked to, and the nested archives that could not be read (kept as is).
#[derive(Debug, Default)]
pub struct Unpacked {
    pub tree: MemTree,
    /// `(path of the nested archive, why it was not unpacked)`.
    pub failures: Vec<(String, String)>,
}

/// A relative path without `..`, absolute or empty components; `None` for anything else.
fn clean_path(raw: &str) -> Option<String> {
    let raw = raw.replace('\\', "/");
    let parts: Vec<&str> = raw.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let ok = !parts.is_empty() && !raw.starts_with('/') && parts.iter().all(|p| *p != ".." && !p.contains('\0'));
    ok.then(|| parts.join("/"))
}

struct Budget {
    limits: ArchiveLimits,
    entries: usize,
    bytes: u64,
}

impl Budget {
    fn entry(&mut self) -> Result<(), ArchiveError> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(ArchiveError::TooManyEntries(self.limits.max_entries));
        }
        Ok(())
    }

    fn take(&mut self, n: u64) -> Result<(), ArchiveError> {
        self.bytes += n;
        if self.bytes > self.limits.max_total_bytes {
            return Err(ArchiveError::TooLarge(self.limits.max_total_bytes));
        }
        Ok(())
    }
}

/// Reads at most `max + 1` bytes so an oversized entry is detected without reading it all.
fn read_bounded(reader: impl Read, max: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    reader.take(max + 1).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= max).then_some(bytes))
}

fn nested_kind(path: &str) -> Option<bool> {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".tar.gz") || lower.ends_with(".tgz") {
        Some(true)
    } else if lower.ends_with(".tar") {
        Some(false)
    } else {
        None
    }
}

/// Calls `visit(path, bytes)` for each regular file of a tar stream (gzipped when `gz`).
fn each_tar_file(
    bytes: &[u8],
    gz: bool,
    budget: &mut Budget,
    mut visit: impl FnMut(String, Vec<u8>, &mut Budget) -> Result<(), ArchiveError>,
) -> Result<(), ArchiveError> {
    let corrupt = |e: std::io::Error| ArchiveError::Corrupt { kind: "tar", message: e.to_string() };
    let reader: Box<dyn Read> = if gz { Box::new(flate2::read::GzDecoder::new(bytes)) } else { Box::new(bytes) };
    let mut archive = tar::Archive::new(reader);
    for entry in archive.entries().map_err(corrupt)? {
        let entry = entry.map_err(corrupt)?;
        budget.entry()?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let Some(path) = entry.path().ok().and_then(|p| clean_path(&p.to_string_lossy())) else { continue };
        let max = budget.limits.max_file_bytes;
        let Some(data) = read_bounded(entry, max).map_err(corrupt)? else { continue };
        budget.take(data.len() as u64)?;
        visit(path, data, budget)?;
    }
    Ok(())
}

/// A GitHub repository tarball (`<owner>-<repo>-<sha>/…`): the files `wanted` selects, with
/// the top folder stripped.
pub fn unpack_tarball(
    bytes: &[u8],
    limits: ArchiveLimits,
    wanted: impl Fn(&str) -> bool,
) -> Result<MemTree, ArchiveError> {
    let mut tree = MemTree::new();
    let mut budget = Budget { limits, entries: 0, bytes: 0 };
    each_tar_file(bytes, true, &mut budget, |path, data, _| {
        if let Some((_, inner)) = path.split_once('/') {
            if wanted(inner) {
                tree.insert(inner, data);
            }
        }
        Ok(())
    })?;
    Ok(tree)
}

/// An Actions artifact zip: every file under `prefix/`; each nested tar archive is also
/// unpacked under `<archive path>.d/`, or listed in `failures` when it cannot be read.
pub fn unpack_artifact(bytes: &[u8], prefix: &str, limits: ArchiveLimits) -> Result<Unpacked, ArchiveError> {
    let corrupt = |e: &dyn std::fmt::Display| ArchiveError::Corrupt { kind: "zip", message: e.to_string() };
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| corrupt(&e))?;
    let mut out = Unpacked::default();
    let mut budget = Budget { limits, entries: 0, bytes: 0 };
    for index in 0..zip.len() {
        budget.entry()?;
        let file = zip.by_index(index).map_err(|e| corrupt(&e))?;
        if !file.is_file() {
            continue;
        }
        let Some(path) = clean_path(file.name()) else { continue };
        if file.size() > limits.max_file_bytes {
            out.failures.push((path, format!("larger than {} bytes; not kept", limits.max_file_bytes)));
            continue;
        }
        let Some(data) = read_bounded(file, limits.max_file_bytes).map_err(|e| corrupt(&e))? else { continue };
        budget.take(data.len() as u64)?;
        if let Some(gz) = nested_kind(&path) {
            let mut nested = MemTree::new();
            let result = each_tar_file(&data, gz, &mut budget, |inner, content, _| {
                nested.insert(format!("{prefix}/{path}.d/{inner}"), content);
                Ok(())
            });
            match result {
                Ok(()) => out.tree.copy_from(&nested, "").map_err(|e| corrupt(&e))?,
                Err(err @ (ArchiveError::TooLarge(_) | ArchiveError::TooManyEntries(_))) => return Err(err),
                Err(err) => out.failures.push((path.clone(), err.to_string())),
            }
        }
        let key = format!("{prefix}/{path}");
        if out.tree.get(&key).is_some() {
            return Err(ArchiveError::Collision(format!("{path} appears twice")));
        }
        out.tree.insert(key, data);
    }
    if let Some(clash) = file_dir_clash(&out.tree) {
        return Err(ArchiveError::Collision(clash));
    }
    Ok(out)
}

/// A path that is a file and also the folder of another file (`a` and `a/b`), which no
/// file system can hold; `None` when every path can be written.
fn file_dir_clash(tree: &MemTree) -> Option<String> {
    tree.paths().find_map(|path| {
        let mut dirs = path.match_indices('/').map(|(i, _)| &path[..i]);
        dirs.find(|dir| tree.get(dir).is_some()).map(|dir| format!("{dir} is a file and the folder of {path}"))
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use std::io::Write;

    use super::*;
    use crate::repo::Tree;

    pub fn tar_gz(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
        for (path, data) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            builder.append_data(&mut header, path, *data).unwrap();
        }
        builder.into_inner().unwrap().finish().unwrap()
    }

    pub fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (path, data) in files {
            writer.start_file(*path, zip::write::SimpleFileOptions::default()).unwrap();
            writer.write_all(data).unwrap();
        }
        writer.finish().unwrap().into_inner()
    }

    #[test]
    fn tarballs_keep_wanted_paths_without_the_top_folder() {
        let bytes = tar_gz(&[("o-r-abc/.github/CODEOWNERS", b"* @o/core\n"), ("o-r-abc/src/big.bin", b"x")]);
        let tree = unpack_tarball(&bytes, ArchiveLimits::default(), |p| p.starts_with(".github/")).unwrap();
        assert_eq!(tree.paths().collect::<Vec<_>>(), vec![".github/CODEOWNERS"]);
    }

    #[test]
    fn nested_server_log_tarballs_are_unpacked() {
        let logs = tar_gz(&[("logs/server.log", b"Uvicorn running\n")]);
        let zip = zip_of(&[("results.json", b"{}"), ("eval_server_logs_x.tar.gz", &logs)]);
        let out = unpack_artifact(&zip, "7/eval_server_logs_x", ArchiveLimits::default()).unwrap();
        assert!(out.failures.is_empty());
        assert_eq!(
            out.tree.read("7/eval_server_logs_x/eval_server_logs_x.tar.gz.d/logs/server.log").unwrap().as_deref(),
            Some(&b"Uvicorn running\n"[..])
        );
        assert!(out.tree.exists("7/eval_server_logs_x/results.json").unwrap());
    }

    #[test]
    fn a_broken_nested_archive_is_kept_and_reported() {
        let zip = zip_of(&[("logs.tar.gz", b"not gzip at all"), ("a.txt", b"a")]);
        let out = unpack_artifact(&zip, "1/x", ArchiveLimits::default()).unwrap();
        assert_eq!(out.failures.len(), 1);
        assert_eq!(out.failures[0].0, "logs.tar.gz");
        assert!(out.tree.exists("1/x/logs.tar.gz").unwrap() && out.tree.exists("1/x/a.txt").unwrap());
    }

    #[test]
    fn bounds_and_hostile_paths() {
        assert!(matches!(
            unpack_artifact(b"PK garbage", "p", ArchiveLimits::default()),
            Err(ArchiveError::Corrupt { .. })
        ));
        let zip = zip_of(&[("../escape.txt", b"x"), ("/abs.txt", b"y"), ("ok/./f.txt", b"z")]);
        let out = unpack_artifact(&zip, "p", ArchiveLimits::default()).unwrap();
        assert_eq!(out.tree.paths().collect::<Vec<_>>(), vec!["p/ok/f.txt"]);
        let many = zip_of(&[("a", b"1"), ("b", b"2"), ("c", b"3")]);
        let tight = ArchiveLimits { max_entries: 2, ..ArchiveLimits::default() };
        assert_eq!(unpack_artifact(&many, "p", tight).unwrap_err(), ArchiveError::TooManyEntries(2));
        let small = ArchiveLimits { max_total_bytes: 2, ..ArchiveLimits::default() };
        assert_eq!(unpack_artifact(&many, "p", small).unwrap_err(), ArchiveError::TooLarge(2));
        assert_eq!(
            ArchiveLimits::default().max_file_bytes,
            crate::repo::MAX_FILE_BYTES,
            "one bound for collect and verify"
        );
        let big = zip_of(&[("big", &[0u8; 100][..])]);
        let per_file = ArchiveLimits { max_file_bytes: 10, ..ArchiveLimits::default() };
        assert_eq!(unpack_artifact(&big, "p", per_file).unwrap().failures.len(), 1);
    }

    #[test]
    fn colliding_entry_names_make_the_archive_unavailable() {
        let clash = zip_of(&[("a", b"file"), ("a/b", b"under a")]);
        let err = unpack_artifact(&clash, "1/x", ArchiveLimits::default()).unwrap_err();
        assert!(
            matches!(&err, ArchiveError::Collision(m) if m.contains("a is a file and the folder of 1/x/a/b")),
            "{err}"
        );
        let nested = tar_gz(&[("f", b"1")]);
        let clash = zip_of(&[("l.tar.gz", &nested), ("l.tar.gz.d", b"a file where the folder goes")]);
        assert!(matches!(unpack_artifact(&clash, "1/x", ArchiveLimits::default()), Err(ArchiveError::Collision(_))));
        let fine = zip_of(&[("a-b", b"1"), ("a/b", b"2")]);
        assert_eq!(unpack_artifact(&fine, "1/x", ArchiveLimits::default()).unwrap().tree.paths().count(), 2);
    }
}
