//! Source fixtures: what a producer converts, and what its output must say of it.
//!
//! A fixture is a directory `cases/sources/<format>/<name>/` with `source/` (the native
//! files a producer reads, byte for byte), `fixture.json` (what it tests, and the fidelity
//! assertions its output must meet; `schemas/source-fixture.schema.json`) and `expected/`
//! (a golden ASR output written by hand from the spec, one `.jsonl` a stream). The golden
//! must meet its own fixture: that is the fixtures' self-test. A fixture the producer fuzzer
//! found (provenance `fuzzed`) may have no golden and no mistakes: an output of it is judged
//! by the stream checker and the conservation properties alone.
//!
//! ```json
//! {
//!   "id": "s0001",
//!   "description": "A Gemini CLI session of one prompt and one answer with a thought.",
//!   "format": "gemini-cli-json",
//!   "rules": ["ASR-211", "ASR-214"],
//!   "provenance": {"kind": "real-session", "file": "gemini__agent-history__real-session-01-redacted.json",
//!                  "cut": "the whole file"},
//!   "expect": {"producer": {"warnings": [], "assertions": [
//!     {"rule": "ASR-211", "select": {"type": ["message"], "where": {"/messageId": "c6130ba5"}, "parts": ["text"]},
//!      "pointer": "/text", "check": {"equalsSource": {"file": "session.json", "pointer": "/messages/0/content/0/text"}}}
//!   ]}},
//!   "status": "stable"
//! }
//! ```

use crate::case::{Case, Expect, Provenance, Sidecar};
pub use crate::case::{
    FixtureExpect, FixtureProvenance, FixtureSidecar, Mistake, ProducerExpect, SourceFixture,
};
use crate::catalog::Role;
use crate::fidelity::Source;

use std::path::{Path, PathBuf};

/// Why a fixture could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    /// A file or directory could not be read.
    #[error("failed to read {path}: {error}")]
    Io {
        /// What.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// A sidecar is not one.
    #[error("failed to read the fixture sidecar {path}: {error}")]
    Sidecar {
        /// Where.
        path: PathBuf,
        /// Why.
        error: serde_json::Error,
    },
    /// A file or directory of a fixture is a link out of it, or not a regular file: it is not
    /// read, so that a planted link cannot put another file's text into a report.
    #[error("failed to read {path}: it is {why}: not read")]
    NotInCorpus {
        /// The path in the corpus.
        path: PathBuf,
        /// What it is instead.
        why: String,
    },
}

/// A fixture's files are read here, where the corpus is read: its data is
/// [`crate::case`]'s, beside the case it makes.
impl SourceFixture {
    /// The source files, by name.
    pub fn source(&self) -> Result<Source, FixtureError> {
        Ok(Source::from_files(read_dir_files(
            &self.dir.join("source"),
            |_| true,
        )?))
    }

    /// The golden output: each stream's name (the file stem; `""` for `stream.jsonl`) and bytes.
    /// None for a fuzzed fixture without `expected/`.
    pub fn expected(&self) -> Result<Vec<(String, Vec<u8>)>, FixtureError> {
        if self.sidecar.provenance.is_fuzzed()
            && std::fs::symlink_metadata(self.dir.join("expected")).is_err()
        {
            return Ok(Vec::new());
        }
        goldens(&self.dir)
    }
}

/// The corpus directory of source fixtures, and the prefix of their case names.
pub const SOURCES_DIR: &str = "sources";

impl SourceFixture {
    /// The fixture as a producer case: named `sources/<format>/<name>`, its streams the
    /// source's files (each part the file's name, in name order), judged by the fixture.
    pub fn as_case(&self) -> Result<Case, FixtureError> {
        let dir = self.dir.join("source");
        let files = read_dir_files(&dir, |_| true)?;
        let provenance = match &self.sidecar.provenance {
            FixtureProvenance::RealSession { file, cut } => {
                format!("cut from the real session {file}: {cut}")
            }
            FixtureProvenance::HandWritten { note } => note.clone(),
            FixtureProvenance::Fuzzed {
                seed,
                iteration,
                format,
            } => format!(
                "found by asr-ctk fuzz --role producer --format {format} --seed {seed}, iteration {iteration}"
            ),
        };
        Ok(Case {
            name: format!("{SOURCES_DIR}/{}", self.name),
            sidecar_path: self.dir.join("fixture.json"),
            streams: files
                .into_iter()
                .map(|(name, _)| (name.clone(), dir.join(name)))
                .collect(),
            sidecar: Sidecar {
                id: self.sidecar.id.clone(),
                description: self.sidecar.description.clone(),
                rules: self.sidecar.rules.clone(),
                clauses: Vec::new(),
                roles: vec![Role::Producer],
                expect: Expect::default(),
                provenance: Provenance::HandWritten {
                    note: Some(provenance),
                },
                status: self.sidecar.status,
                decision: None,
            },
            fixture: Some(Box::new(self.clone())),
        })
    }
}

/// The golden output of the fixture in `dir`: each stream's name (the file stem of
/// `expected/<name>.jsonl`; `""` for `stream.jsonl`) and bytes.
pub fn goldens(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, FixtureError> {
    let files = read_dir_files(&dir.join("expected"), |name| {
        Path::new(name).extension().is_some_and(|e| e == "jsonl")
    })?;
    Ok(files
        .into_iter()
        .map(|(name, bytes)| {
            let stem = name.trim_end_matches(".jsonl");
            ((if stem == "stream" { "" } else { stem }).to_owned(), bytes)
        })
        .collect())
}

/// Every fixture below `root` (`cases/sources`), by name; none when there is no such
/// directory.
pub fn load_fixtures(root: &Path) -> Result<Vec<SourceFixture>, FixtureError> {
    let mut fixtures = Vec::new();
    if !root.is_dir() {
        return Ok(fixtures);
    }
    let within = std::fs::canonicalize(root).map_err(|error| FixtureError::Io {
        path: root.to_owned(),
        error,
    })?;
    for format in sorted_dirs(root, &within)? {
        for dir in sorted_dirs(&format, &within)? {
            let path = dir.join("fixture.json");
            confined(&path, &within)?;
            // Refused now rather than when a case is judged: a run over a corpus with a
            // planted link does not start.
            for part in ["source", "expected"] {
                if std::fs::symlink_metadata(dir.join(part)).is_ok() {
                    read_dir_names(&dir.join(part))?;
                }
            }
            let text = std::fs::read_to_string(&path).map_err(|error| FixtureError::Io {
                path: path.clone(),
                error,
            })?;
            let sidecar: FixtureSidecar = serde_json::from_str(&text)
                .map_err(|error| FixtureError::Sidecar { path, error })?;
            let name = dir
                .strip_prefix(root)
                .unwrap_or(&dir)
                .to_string_lossy()
                .replace('\\', "/");
            fixtures.push(SourceFixture { name, dir, sidecar });
        }
    }
    Ok(fixtures)
}

/// The directories in `dir`, sorted; a link to a directory outside `within` fails.
fn sorted_dirs(dir: &Path, within: &Path) -> Result<Vec<PathBuf>, FixtureError> {
    let io = |error| FixtureError::Io {
        path: dir.to_owned(),
        error,
    };
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.is_dir() {
            let real = std::fs::canonicalize(&path).map_err(io)?;
            if !real.starts_with(within) {
                return Err(FixtureError::NotInCorpus {
                    why: format!("a link to {}, outside {}", real.display(), within.display()),
                    path,
                });
            }
            dirs.push(path);
        }
    }
    dirs.sort();
    Ok(dirs)
}

/// Fails unless `path` is, links followed, a regular file inside `within` (canonical).
fn confined(path: &Path, within: &Path) -> Result<(), FixtureError> {
    let io = |error| FixtureError::Io {
        path: path.to_owned(),
        error,
    };
    match crate::walk::refusal(within, path).map_err(io)? {
        None => Ok(()),
        Some(why) => Err(FixtureError::NotInCorpus {
            path: path.to_owned(),
            why,
        }),
    }
}

/// The files of a fixture's `dir` (`source/`, `expected/`): each, links followed, a regular
/// file inside the fixture's directory (the one above `dir`), or the listing fails.
fn read_dir_names(dir: &Path) -> Result<Vec<PathBuf>, FixtureError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |error| FixtureError::Io { path, error }
    };
    let fixture = dir.parent().unwrap_or(dir);
    let within = std::fs::canonicalize(fixture).map_err(io(fixture))?;
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let path = entry.map_err(io(dir))?.path();
        if std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_dir()) {
            confined(&path, &within)?;
            names.push(path);
        }
    }
    Ok(names)
}

/// The files of `dir` whose names `keep` accepts, by name, sorted; each checked as
/// [`read_dir_names`] checks it.
fn read_dir_files(
    dir: &Path,
    keep: impl Fn(&str) -> bool,
) -> Result<Vec<(String, Vec<u8>)>, FixtureError> {
    let mut files = Vec::new();
    for path in read_dir_names(dir)? {
        let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        if keep(&name) {
            let bytes = std::fs::read(&path).map_err(|error| FixtureError::Io {
                path: path.clone(),
                error,
            })?;
            files.push((name, bytes));
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fuzzed_fixture_may_lack_a_golden_and_says_where_it_comes_from() {
        let sidecar: FixtureSidecar = serde_json::from_value(serde_json::json!({
            "id": "s9000", "description": "A session the fuzzer found.",
            "format": "gemini-cli-json", "rules": ["ASR-X-016"],
            "provenance": {"kind": "fuzzed", "seed": 8, "iteration": 3, "format": "gemini-cli-json"},
            "expect": {"producer": {"assertions": []}}, "mistakes": [], "status": "stable"
        }))
        .expect("a fuzzed sidecar");
        assert!(sidecar.provenance.is_fuzzed());
        let scratch = tempfile::Builder::new()
            .prefix("asr-source-fuzzed-")
            .tempdir()
            .expect("a directory");
        let dir = scratch.path().to_path_buf();
        std::fs::create_dir_all(dir.join("source")).expect("a directory");
        std::fs::write(dir.join("source/session.json"), b"{}").expect("write");
        let mut fixture = SourceFixture {
            name: "gemini-cli-json/fuzz".into(),
            dir: dir.clone(),
            sidecar,
        };
        assert_eq!(fixture.expected().expect("no golden, no error"), Vec::new());
        let case = fixture.as_case().expect("a case");
        let said = match &case.sidecar.provenance {
            Provenance::HandWritten { note } => note.clone().unwrap_or_default(),
            _ => String::new(),
        };
        assert!(said.contains("--seed 8, iteration 3"), "{said}");
        // A fixture of another kind without expected/ fails to load its golden.
        fixture.sidecar.provenance = FixtureProvenance::HandWritten { note: "n".into() };
        assert!(fixture.expected().is_err());
    }
}
