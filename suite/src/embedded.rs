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

/// The corpus compiled into the kit, unpacked below `base` (once: a later call finds it
/// there). Returns the corpus directory.
pub fn unpack_corpus(base: &Path) -> io::Result<PathBuf> {
    let dir = base.join(format!("corpus-{}-{DIGEST}", env!("CARGO_PKG_VERSION")));
    if dir.join(UNPACKED).is_file() {
        return Ok(dir);
    }
    std::fs::create_dir_all(base)?;
    // Written beside, then renamed into place: a run that starts meanwhile never sees half
    // a corpus, and two runs unpacking at once both end with the same one.
    let staging = base.join(format!(
        ".corpus-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    let written = write_all(&staging);
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    if std::fs::rename(&staging, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&staging);
        if !dir.join(UNPACKED).is_file() {
            return Err(io::Error::other(format!(
                "{} exists and is not a corpus unpacked by the kit",
                dir.display()
            )));
        }
    }
    Ok(dir)
}

/// Where the corpus is unpacked by default: `$XDG_CACHE_HOME/asr-ctk`, else
/// `$HOME/.cache/asr-ctk`, else a directory of the user's in the temporary directory.
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
    std::env::temp_dir().join(format!("asr-ctk-{}", nix_free_user()))
}

/// The marker of a corpus unpacked whole.
const UNPACKED: &str = ".unpacked";

fn write_all(staging: &Path) -> io::Result<()> {
    for (name, bytes) in CORPUS {
        let path = staging.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, bytes)?;
    }
    std::fs::write(staging.join(UNPACKED), DIGEST)
}

/// A name for the user without a system call: `$USER`, else `user`.
fn nix_free_user() -> String {
    std::env::var("USER").unwrap_or_else(|_| "user".into())
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

    #[test]
    fn the_corpus_unpacks_once_and_loads() {
        let base = std::env::temp_dir().join(format!("asr-ctk-unpack-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let dir = unpack_corpus(&base).expect("unpacks");
        let cases = crate::case::load_corpus(&dir).expect("loads");
        let in_tree =
            crate::case::load_corpus(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases"))
                .expect("loads");
        assert_eq!(cases.len(), in_tree.len());
        // A second call finds it and writes nothing.
        let marker = std::fs::metadata(dir.join(UNPACKED))
            .and_then(|m| m.modified())
            .expect("marker");
        assert_eq!(unpack_corpus(&base).expect("found"), dir);
        let again = std::fs::metadata(dir.join(UNPACKED))
            .and_then(|m| m.modified())
            .expect("marker");
        assert_eq!(marker, again);
        let leftovers = std::fs::read_dir(&base).expect("base").count();
        assert_eq!(leftovers, 1, "no staging directory is left");
        std::fs::remove_dir_all(&base).expect("cleaned up");
    }
}
