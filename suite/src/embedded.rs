//! The corpus and the schemas compiled into the kit: an installed `asr-ctk` works anywhere,
//! without the repository beside it. The schemas are used from memory; the corpus is unpacked
//! once into a cache directory, since adapters are given each stream by its path.

use std::io;
use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// A schema compiled into the kit, by its path below `schemas/`
/// (`protocol/reply.schema.json`).
pub fn schema(name: &str) -> Option<&'static str> {
    SCHEMAS
        .iter()
        .find(|(path, _)| *path == name)
        .and_then(|(_, bytes)| std::str::from_utf8(bytes).ok())
}

/// The files of the corpus compiled into the kit below `dir` (a path below `cases/`, as
/// `sources/codex-rollout/crud_reasoning_01/expected`), by name, sorted; subdirectories not
/// included.
pub fn corpus_files(dir: &str) -> Vec<(&'static str, &'static [u8])> {
    let prefix = format!("{}/", dir.trim_end_matches('/'));
    let mut files: Vec<(&'static str, &'static [u8])> = CORPUS
        .iter()
        .filter_map(|(path, bytes)| {
            let name = path.strip_prefix(prefix.as_str())?;
            (!name.contains('/')).then_some((&path[path.len() - name.len()..], *bytes))
        })
        .collect();
    files.sort_unstable();
    files
}

/// The directories of the source fixtures compiled into the kit (`sources/<format>/<name>`),
/// sorted.
pub fn fixture_dirs() -> Vec<&'static str> {
    let mut dirs: Vec<&'static str> = CORPUS
        .iter()
        .filter_map(|(path, _)| {
            let dir = path.strip_suffix("/fixture.json")?;
            (dir.starts_with("sources/") && dir.matches('/').count() == 2).then_some(dir)
        })
        .collect();
    dirs.sort_unstable();
    dirs
}

/// A corpus directory unpacked from the kit, checked against the corpus compiled in.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unpacked {
    /// The corpus directory.
    pub dir: PathBuf,
    /// Why a directory found there was not used and the corpus was unpacked again, if it was.
    pub replaced: Option<String>,
}

/// The corpus compiled into the kit, below `base`: unpacked there once, and verified byte for
/// byte against the compiled-in corpus before every use, so that a corpus edited, trimmed or
/// added to in the cache is never taken for the kit's own (it is unpacked again). `base` must
/// be the user's own and writable by nobody else; otherwise it is not used at all.
pub fn unpack_corpus(base: &Path) -> Result<Unpacked, CacheError> {
    let dir = base.join(format!("corpus-{}-{DIGEST}", env!("CARGO_PKG_VERSION")));
    private_dir(base)?;
    let mut replaced = None;
    match std::fs::symlink_metadata(&dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(CacheError::io(&dir, e)),
        Ok(_) => match differences(&dir, true) {
            None => return Ok(Unpacked { dir, replaced }),
            Some(why) => {
                // Moved aside before it is removed: a run that starts meanwhile finds no
                // directory rather than a half-removed one.
                let aside = base.join(format!(".stale-{}", unique()));
                if std::fs::rename(&dir, &aside).is_ok() {
                    remove_any(&aside);
                }
                replaced = Some(why);
            }
        },
    }
    // Written beside, then renamed into place: a run that starts meanwhile never sees half
    // a corpus, and two runs unpacking at once both end with the same one.
    let staging = base.join(format!(".corpus-{}", unique()));
    if let Err(e) = write_all(&staging) {
        remove_any(&staging);
        return Err(CacheError::io(&staging, e));
    }
    if std::fs::rename(&staging, &dir).is_err() {
        remove_any(&staging);
    }
    match differences(&dir, true) {
        None => Ok(Unpacked { dir, replaced }),
        Some(why) => Err(CacheError::Unverified { dir, why }),
    }
}

/// Whether `dir` holds exactly the corpus compiled into the kit (every file, byte for byte,
/// nothing more, no link). Cheap: the corpus is a few megabytes.
pub fn is_kits_corpus(dir: &Path) -> bool {
    differences(dir, false).is_none()
}

/// Where the corpus is unpacked by default: `$XDG_CACHE_HOME/asr-ctk`, else
/// `$HOME/.cache/asr-ctk`, else `asr-ctk-UID` in the temporary directory (the user's id, not
/// a name another user can take).
pub fn cache_base() -> PathBuf {
    let from = |var: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(cache) = from("XDG_CACHE_HOME") {
        return cache.join("asr-ctk");
    }
    if let Some(home) = from("HOME") {
        return home.join(".cache").join("asr-ctk");
    }
    std::env::temp_dir().join(format!("asr-ctk-{}", nix::unistd::geteuid()))
}

/// Why the corpus the kit carries could not be used from its cache.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    /// A file system operation failed.
    #[error("failed to use {}: {error}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// What failed.
        error: io::Error,
    },
    /// The cache directory is not the user's own, or others can write to it.
    #[error("failed to use {}: {why}; the kit unpacks its corpus only into a directory of the user's own that nobody else can write (set XDG_CACHE_HOME, or give --cases DIR)", dir.display())]
    NotPrivate {
        /// The directory.
        dir: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The corpus unpacked just now does not match the kit's.
    #[error("failed to verify the corpus unpacked into {}: {why}", dir.display())]
    Unverified {
        /// The directory.
        dir: PathBuf,
        /// The first difference.
        why: String,
    },
}

impl CacheError {
    fn io(path: &Path, error: io::Error) -> Self {
        CacheError::Io {
            path: path.to_owned(),
            error,
        }
    }
}

/// The marker of a corpus unpacked whole.
const UNPACKED: &str = ".unpacked";

/// Creates `dir` (and its parents) when missing, and checks that it is a directory of this
/// user's that no one else can write to: another user could otherwise plant or change the
/// corpus between its verification and its use.
fn private_dir(dir: &Path) -> Result<(), CacheError> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(|e| CacheError::io(parent, e))?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(CacheError::io(dir, e)),
    }
    let meta = std::fs::metadata(dir).map_err(|e| CacheError::io(dir, e))?;
    let not_private = |why: String| CacheError::NotPrivate {
        dir: dir.to_owned(),
        why,
    };
    if !meta.is_dir() {
        return Err(not_private("it is not a directory".into()));
    }
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(not_private(format!(
            "it belongs to user {}, not to this user ({me})",
            meta.uid()
        )));
    }
    if meta.permissions().mode() & 0o022 != 0 {
        return Err(not_private(format!(
            "others can write to it (mode {:o})",
            meta.permissions().mode() & 0o777
        )));
    }
    Ok(())
}

/// The first way `dir` differs from the corpus compiled into the kit, if it does: a file
/// missing, changed or added, a link, anything that is not a regular file or directory.
/// `must_be_marked`: the directory must hold the kit's marker (a corpus it unpacked).
fn differences(dir: &Path, must_be_marked: bool) -> Option<String> {
    let expected: std::collections::HashMap<&str, &[u8]> = CORPUS.iter().copied().collect();
    let mut seen = 0usize;
    let mut marker = false;
    let mut pending = vec![(dir.to_owned(), String::new())];
    while let Some((at, prefix)) = pending.pop() {
        let entries = match std::fs::read_dir(&at) {
            Ok(entries) => entries,
            Err(e) => return Some(format!("{} cannot be listed: {e}", at.display())),
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => return Some(format!("{} cannot be listed: {e}", at.display())),
            };
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                return Some(format!(
                    "{} has a name that is not UTF-8",
                    entry.path().display()
                ));
            };
            let relative = format!("{prefix}{name}");
            let kind = match entry.file_type() {
                Ok(kind) => kind,
                Err(e) => return Some(format!("{relative}: {e}")),
            };
            if kind.is_dir() {
                pending.push((entry.path(), format!("{relative}/")));
                continue;
            }
            if !kind.is_file() {
                return Some(format!(
                    "{relative} is not a regular file (a link or a device)"
                ));
            }
            if relative == UNPACKED {
                marker = true;
                continue;
            }
            let Some(bytes) = expected.get(relative.as_str()) else {
                return Some(format!("{relative} is no file of the kit's corpus"));
            };
            match std::fs::read(entry.path()) {
                Ok(on_disk) if on_disk == *bytes => seen += 1,
                Ok(_) => return Some(format!("{relative} differs from the kit's")),
                Err(e) => return Some(format!("{relative} cannot be read: {e}")),
            }
        }
    }
    if seen != expected.len() {
        return Some(format!(
            "{} of the kit's {} corpus files are missing",
            expected.len() - seen,
            expected.len()
        ));
    }
    if must_be_marked && !marker {
        return Some("it was not unpacked whole (no marker)".into());
    }
    None
}

fn write_all(staging: &Path) -> io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let mut dirs = std::fs::DirBuilder::new();
    dirs.mode(0o755).recursive(true);
    let create = |path: &Path, bytes: &[u8]| {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(path)?
            .write_all(bytes)
    };
    for (name, bytes) in CORPUS {
        let path = staging.join(name);
        if let Some(parent) = path.parent() {
            dirs.create(parent)?;
        }
        create(&path, bytes)?;
    }
    create(&staging.join(UNPACKED), DIGEST.as_bytes())
}

/// Removes a file or a directory tree, never following a link out of it.
fn remove_any(path: &Path) {
    if std::fs::remove_dir_all(path).is_err() {
        let _ = std::fs::remove_file(path);
    }
}

/// A name no other run of the kit uses at the same time.
fn unique() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_files_are_the_repository_s() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for (tree, files) in [("cases", CORPUS), ("schemas", SCHEMAS)] {
            assert!(files.len() > 10, "{tree}: {} files", files.len());
            for (name, bytes) in files {
                let on_disk = std::fs::read(root.join(tree).join(name)).expect("in the tree");
                assert_eq!(&on_disk, bytes, "{tree}/{name}");
            }
        }
        assert!(CORPUS.iter().any(|(name, _)| *name == "rules.toml"));
        assert!(schema("protocol/reply.schema.json").is_some_and(|s| s.contains("started")));
        assert!(schema("no/such.json").is_none());
    }

    /// A fresh base directory of this user's for one test, not yet made, in a scratch
    /// directory that is removed when dropped, also when the test fails.
    fn base(test: &str) -> (tempfile::TempDir, PathBuf) {
        let scratch = tempfile::Builder::new()
            .prefix(&format!("asr-ctk-{test}-"))
            .tempdir()
            .expect("a scratch directory");
        let base = scratch.path().join("base");
        (scratch, base)
    }

    #[test]
    fn the_corpus_unpacks_once_and_loads() {
        let (_scratch, base) = base("unpack");
        let unpacked = unpack_corpus(&base).expect("unpacks");
        assert_eq!(unpacked.replaced, None);
        let dir = unpacked.dir;
        let cases = crate::case::load_corpus(&dir).expect("loads");
        let in_tree =
            crate::case::load_corpus(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases"))
                .expect("loads");
        assert_eq!(cases.len(), in_tree.len());
        // A second call finds it, verifies it and writes nothing.
        let marker = std::fs::metadata(dir.join(UNPACKED))
            .and_then(|m| m.modified())
            .expect("marker");
        assert_eq!(
            unpack_corpus(&base).expect("found"),
            Unpacked {
                dir: dir.clone(),
                replaced: None
            }
        );
        let again = std::fs::metadata(dir.join(UNPACKED))
            .and_then(|m| m.modified())
            .expect("marker");
        assert_eq!(marker, again);
        let leftovers = std::fs::read_dir(&base).expect("base").count();
        assert_eq!(leftovers, 1, "no staging directory is left");
        assert!(is_kits_corpus(&dir), "an unpacked corpus is the kit's");
        assert!(
            is_kits_corpus(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases")),
            "the checkout's corpus is the one compiled in"
        );
    }

    /// Each way of poisoning an unpacked corpus, with its marker kept: the next use unpacks
    /// it again, and says why.
    #[test]
    fn a_poisoned_cache_is_unpacked_again() {
        let (_scratch, base) = base("poison");
        let dir = unpack_corpus(&base).expect("unpacks").dir;
        let negative = CORPUS
            .iter()
            .map(|(name, _)| *name)
            .find(|name| {
                name.contains("/n_") && Path::new(name).extension().is_some_and(|e| e == "json")
            })
            .expect("a negative case");
        let poisons: [(&str, &dyn Fn()); 4] = [
            ("deleted", &|| {
                std::fs::remove_file(dir.join(negative)).expect("rm");
            }),
            ("changed", &|| {
                std::fs::write(dir.join("rules.toml"), "").expect("write");
            }),
            ("added", &|| {
                std::fs::write(dir.join("messages/y_planted.json"), "{}").expect("write");
            }),
            ("linked", &|| {
                let path = dir.join(negative);
                std::fs::remove_file(&path).expect("rm");
                std::os::unix::fs::symlink("/etc/hostname", &path).expect("link");
            }),
        ];
        for (how, poison) in poisons {
            poison();
            assert!(!is_kits_corpus(&dir), "{how}: taken for the kit's corpus");
            let again = unpack_corpus(&base).expect("unpacks again");
            assert_eq!(again.dir, dir);
            assert!(
                again.replaced.is_some(),
                "{how}: the poisoned cache was used"
            );
            assert!(is_kits_corpus(&dir), "{how}: not repaired");
            assert_eq!(unpack_corpus(&base).expect("verified").replaced, None);
        }
        let leftovers = std::fs::read_dir(&base).expect("base").count();
        assert_eq!(leftovers, 1, "no stale or staging directory is left");
    }

    #[test]
    fn a_cache_others_can_write_or_own_is_never_used() {
        use std::os::unix::fs::PermissionsExt;
        let (_scratch, base) = base("shared");
        std::fs::create_dir_all(&base).expect("mkdir");
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let refused = unpack_corpus(&base).expect_err("a world-writable cache");
        assert!(
            refused.to_string().contains("others can write"),
            "{refused}"
        );
        assert!(
            !base
                .join(format!("corpus-{}-{DIGEST}", env!("CARGO_PKG_VERSION")))
                .exists()
        );
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        // Another user's directory: only root can make one here.
        if nix::unistd::geteuid().is_root() {
            nix::unistd::chown(&base, Some(nix::unistd::Uid::from_raw(65534)), None)
                .expect("chown");
            let refused = unpack_corpus(&base).expect_err("another user's cache");
            assert!(
                refused.to_string().contains("belongs to user 65534"),
                "{refused}"
            );
        }
    }
}
