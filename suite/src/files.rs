//! Writing files where a planted link must not redirect the write: a new file is created
//! exclusively (`O_CREAT | O_EXCL`, which never follows a link), and a file replaced is
//! written beside and renamed over the old name, which replaces a link instead of writing
//! through it.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Creates `path` with `bytes`; fails with [`io::ErrorKind::AlreadyExists`] when anything,
/// a dangling link included, is there already.
pub fn create_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(path)?;
    file.write_all(bytes)
}

/// Writes `bytes` to `path` whatever is there: a file is replaced, and so is a link (never
/// the file it points to).
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let temporary = beside(path);
    if let Err(e) = create_new(&temporary, bytes) {
        let _ = std::fs::remove_file(&temporary);
        return Err(e);
    }
    std::fs::rename(&temporary, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}

/// A name beside `path` that no other writer uses now.
fn beside(path: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(
        ".{name}.{}-{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_written_through_a_planted_link() {
        let scratch = tempfile::Builder::new()
            .prefix("asr-ctk-files-")
            .tempdir()
            .expect("mkdir");
        let dir = scratch.path().to_path_buf();
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep").expect("write");
        let planted = dir.join("report.json");
        std::os::unix::fs::symlink(&victim, &planted).expect("link");
        let refused = create_new(&planted, b"new").expect_err("a link is there");
        assert_eq!(refused.kind(), io::ErrorKind::AlreadyExists);
        let dangling = dir.join("case.jsonl");
        std::os::unix::fs::symlink(dir.join("nowhere"), &dangling).expect("link");
        assert!(create_new(&dangling, b"new").is_err());
        assert!(
            !dir.join("nowhere").exists(),
            "written through a dangling link"
        );
        replace(&planted, b"report").expect("replaced");
        assert_eq!(std::fs::read_to_string(&victim).expect("read"), "keep");
        assert_eq!(std::fs::read_to_string(&planted).expect("read"), "report");
        assert!(
            !std::fs::symlink_metadata(&planted)
                .expect("meta")
                .is_symlink()
        );
        let names: Vec<_> = std::fs::read_dir(&dir).expect("list").flatten().collect();
        assert_eq!(names.len(), 3, "no temporary file is left");
    }
}
