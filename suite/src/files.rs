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

/// Makes the directories of `relative` (a path of plain names) below the directory `root`,
/// and gives the directory it names: one already there must be a directory, not a link to
/// one, so nothing written below it lands outside `root`.
pub fn create_dirs_within(root: &Path, relative: &Path) -> io::Result<PathBuf> {
    let mut dir = root.to_path_buf();
    for component in relative.components() {
        let std::path::Component::Normal(name) = component else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a path of plain names", relative.display()),
            ));
        };
        dir.push(name);
        match std::fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!(
                        "{} is there and is no directory (a link is not followed)",
                        dir.display()
                    ),
                ));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => std::fs::create_dir(&dir)?,
            Err(e) => return Err(e),
        }
    }
    Ok(dir)
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

    #[test]
    fn directories_are_made_below_the_root_and_never_through_a_link() {
        let scratch = tempfile::Builder::new()
            .prefix("asr-ctk-files-")
            .tempdir()
            .expect("mkdir");
        let root = scratch.path().join("site");
        std::fs::create_dir(&root).expect("mkdir");
        let made = create_dirs_within(&root, Path::new("a/b")).expect("made");
        assert_eq!(made, root.join("a/b"));
        assert!(made.is_dir());
        assert_eq!(
            create_dirs_within(&root, Path::new("a/b")).expect("again"),
            made
        );
        let elsewhere = scratch.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).expect("mkdir");
        std::os::unix::fs::symlink(&elsewhere, root.join("rules")).expect("link");
        let refused = create_dirs_within(&root, Path::new("rules/x")).expect_err("a link");
        assert_eq!(refused.kind(), io::ErrorKind::AlreadyExists);
        assert!(!elsewhere.join("x").exists(), "made through a link");
        for bad in ["../out", "/abs", "a/../b"] {
            assert!(create_dirs_within(&root, Path::new(bad)).is_err(), "{bad}");
        }
        assert!(!scratch.path().join("out").exists());
    }
}
