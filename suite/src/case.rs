//! The case corpus: a case is one stream file (or a set of related stream files) kept byte
//! for byte, and a JSON sidecar that says what it tests and what each role must make of it.
//!
//! A sidecar, as `schemas/case.schema.json` defines it:
//!
//! ```json
//! {
//!   "id": "c0025",
//!   "description": "A screenshot part carries both inline data and a blob reference.",
//!   "rules": ["ASR-212"],
//!   "clauses": ["ASR-212.b"],
//!   "roles": ["validator"],
//!   "expect": {
//!     "validator": {
//!       "valid": false,
//!       "violations": [
//!         {"rule": "ASR-212", "severity": "error", "line": 2, "pointer": "/content/1"}
//!       ]
//!     }
//!   },
//!   "provenance": {"kind": "hand-written", "note": "modelled on a Claude Code session"},
//!   "status": "stable"
//! }
//! ```
//!
//! The stream is the file with the sidecar's name and `.jsonl` (`n_x.json` → `n_x.jsonl`);
//! a case of several streams has `n_x.<part>.jsonl` files instead, and each violation names
//! its `file` part. `violations` lists every finding the reference validator reports, ASR-406
//! notices about absent sessions excepted (every stream that names another session has them).
//! `clauses` (optional) names the clauses of those rules (see the catalog) a negative case
//! breaks, so that the clauses no case breaks can be found.

use crate::catalog::Role;
use crate::diagnostic::Severity;
use crate::fidelity::Assertion;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// A case's sidecar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sidecar {
    /// Stable id, `c` and four digits; never reused (see `cases/ids.lock`).
    pub id: String,
    /// What the stream does and why it must be accepted or rejected.
    pub description: String,
    /// The ASR rules (or inferred checks) the case tests.
    pub rules: Vec<String>,
    /// The clauses of those rules that the case breaks (`ASR-212.b`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clauses: Vec<String>,
    /// The roles it applies to.
    pub roles: Vec<Role>,
    /// What each role must make of it.
    pub expect: Expect,
    /// Where it comes from.
    pub provenance: Provenance,
    /// Whether its expectations are settled.
    pub status: Status,
    /// The kit's decision (an id of the catalog's `[[decision]]`) that the expectations rest
    /// on, where the spec text in hand does not decide: an answer that differs from them is
    /// reported as non-strict on that decision, never as non-conformant. A `tentative` case
    /// names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
}

/// Expectations per role.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Expect {
    /// What a validator reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validator: Option<ValidatorExpect>,
    /// How a reader understands the stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader: Option<ReaderExpect>,
    /// For a case of several streams: how a reader understands each, by the stream's part,
    /// every stream of the case read as one set.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub reader_streams: std::collections::BTreeMap<String, ReaderExpect>,
}

impl Expect {
    /// Whether the case says what a reader makes of its streams.
    pub fn reads(&self) -> bool {
        self.reader.is_some() || !self.reader_streams.is_empty()
    }

    /// Every expectation of a reader the case holds: its one stream's, or each stream's.
    pub fn readers(&self) -> impl Iterator<Item = &ReaderExpect> {
        self.reader.iter().chain(self.reader_streams.values())
    }
}

/// What a reader must make of a stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReaderExpect {
    /// Whether the reader must read the stream (`true`) or refuse it (`false`): the `valid`
    /// of its answer (PROTOCOL.md, "What a reader may refuse").
    pub valid: bool,
    /// The reading, or the members of it the case decides (PROTOCOL.md, "Readers").
    pub reading: serde_json::Value,
    /// With `valid: true`: the kit's decision (the sidecar's `decision`) lets a reader refuse
    /// the stream as well as read it (a line it cannot represent, a blank line). A reader
    /// that refuses passes; one that reads must give `reading`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub may_refuse: bool,
}

/// What a validator must report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ValidatorExpect {
    /// The verdict of the reference validator (and, for `y_` and `n_` cases, of every validator).
    pub valid: bool,
    /// Every finding of the reference validator, ASR-406 notices excepted.
    pub violations: Vec<Violation>,
    /// For `i_` cases: a validator that rejects the stream must cite one of these rules.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub if_rejected: Vec<String>,
}

/// One expected finding.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Violation {
    /// Rule id.
    pub rule: String,
    /// Severity.
    pub severity: Severity,
    /// 1-based line.
    pub line: usize,
    /// JSON Pointer within the line's object.
    pub pointer: String,
    /// For a case of several streams: the stream's part name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}:")?;
        }
        write!(
            f,
            "{}: {}[{}] {:?}",
            self.line, self.severity, self.rule, self.pointer
        )
    }
}

/// Where a case comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Provenance {
    /// Written by hand.
    HandWritten {
        /// What it is modelled on.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// A JSON example of the spec text.
    SpecExample {
        /// The spec file.
        file: String,
        /// The line where the example starts.
        line: usize,
        /// The heading it stands under.
        section: String,
        /// How a lone record or fragment was made a stream, when it was.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wrapped: Option<String>,
    },
    /// Found by fuzzing.
    FuzzFound {
        /// The target that found it.
        target: String,
        /// The seed (or input digest) that reproduces it.
        seed: String,
        /// What it showed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
}

/// Whether a case's expectations are settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Settled.
    Stable,
    /// Written, but the reading of the spec behind it is not settled.
    Tentative,
}

/// The verdict a file name shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// `y_`: must be accepted.
    Accept,
    /// `n_`: must be rejected (the violations reported).
    Reject,
    /// `i_`: implementation-defined, within the sidecar's branches.
    Either,
}

/// One case on disk.
#[derive(Debug, Clone)]
pub struct Case {
    /// Path of the sidecar relative to the corpus root, without `.json`
    /// (`messages/ASR-212/n_image_data_and_blob`).
    pub name: String,
    /// The sidecar's path.
    pub sidecar_path: PathBuf,
    /// The streams: part name (empty for a single stream) and path.
    pub streams: Vec<(String, PathBuf)>,
    /// The sidecar.
    pub sidecar: Sidecar,
    /// A producer case's source fixture (`cases/sources/`): its `streams` are the source's
    /// files, and it is judged by the fixture's assertions.
    pub fixture: Option<Box<SourceFixture>>,
}

/// Failure to load a case.
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    /// A file could not be read.
    #[error("failed to read {path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why (said in the message, so that it is not also the error's source).
        error: std::io::Error,
    },
    /// A sidecar does not parse as one.
    #[error("failed to parse sidecar {path}: {error}")]
    Sidecar {
        /// The file.
        path: PathBuf,
        /// Why (said in the message, so that it is not also the error's source).
        error: serde_json::Error,
    },
    /// A sidecar has no stream beside it.
    #[error("failed to find the stream of {0}: no .jsonl file of the same name")]
    NoStream(PathBuf),
    /// A file of the corpus is a link out of it, or not a regular file: it is not read, so
    /// that a planted link cannot put another file's text into a report or a request.
    #[error("failed to load {path}: {why}")]
    NotInCorpus {
        /// The path in the corpus.
        path: PathBuf,
        /// What it is instead.
        why: String,
    },
}

impl Case {
    /// The verdict the file name shows, if the name has a known prefix.
    pub fn verdict(&self) -> Option<Verdict> {
        let file = self.name.rsplit('/').next().unwrap_or("");
        match file.get(..2) {
            Some("y_") => Some(Verdict::Accept),
            Some("n_") => Some(Verdict::Reject),
            Some("i_") => Some(Verdict::Either),
            _ => None,
        }
    }
}

/// The entries of an `ids.lock` text: each id with the case it names (`retired` for a case
/// removed), comments and blank lines skipped.
pub fn locked_ids(lock: &str) -> impl Iterator<Item = (&str, &str)> {
    lock.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| line.split_once('\t').unwrap_or((line, "")))
}

/// The id a new case takes: one past the highest id `lock` has ever given (ids are never
/// reused, a retired one included).
///
/// ```
/// let lock = "# ids\nc0001\tmessages/ASR-200/n_a\nc0007\tretired\nc0003\tlineage/ASR-400/y_b\n";
/// assert_eq!(asr_suite::case::next_id(lock), "c0008");
/// ```
pub fn next_id(lock: &str) -> String {
    let highest = locked_ids(lock)
        .filter_map(|(id, _)| id.strip_prefix('c')?.parse::<u32>().ok())
        .max()
        .unwrap_or(0);
    format!("c{:04}", highest + 1)
}

/// Loads every case below `root` (sidecars are the `.json` files), sorted by name. The walk
/// is [`crate::walk::Walk::confined`]: a directory met twice (a link loop) is walked once,
/// and a link out of the corpus or a file that is not a regular one fails the load.
pub fn load_corpus(root: &Path) -> Result<Vec<Case>, CaseError> {
    let walk = crate::walk::Walk::confined(root, "json", NOT_CASES);
    for note in walk.notes {
        match note {
            crate::walk::Note::Failed(e) => {
                return Err(CaseError::Io {
                    path: e.path,
                    error: e.error,
                });
            }
            // Only a walk of the paths given says a directory is empty.
            crate::walk::Note::Empty { .. } => {}
            crate::walk::Note::Skipped { path, reason } => {
                if !matches!(reason, crate::walk::Reason::Already(_))
                    && !matches!(reason, crate::walk::Reason::Loop { .. })
                {
                    return Err(CaseError::NotInCorpus {
                        path,
                        why: reason.to_string(),
                    });
                }
            }
        }
    }
    let mut sidecars = walk.files;
    sidecars.sort();
    sidecars.iter().map(|path| load_case(root, path)).collect()
}

/// Fails unless `path` is a regular file inside `root`, links followed.
pub fn inside_corpus(root: &Path, path: &Path) -> Result<(), CaseError> {
    let io = |error| CaseError::Io {
        path: path.to_owned(),
        error,
    };
    let canonical_root = std::fs::canonicalize(root).map_err(io)?;
    match crate::walk::refusal(&canonical_root, path).map_err(io)? {
        None => Ok(()),
        Some(why) => Err(CaseError::NotInCorpus {
            path: path.to_owned(),
            why: format!("it is {why}: not read"),
        }),
    }
}

/// Loads one case from its sidecar's path.
pub fn load_case(root: &Path, sidecar_path: &Path) -> Result<Case, CaseError> {
    inside_corpus(root, sidecar_path)?;
    let text = std::fs::read_to_string(sidecar_path).map_err(|source| CaseError::Io {
        path: sidecar_path.to_owned(),
        error: source,
    })?;
    let sidecar: Sidecar = serde_json::from_str(&text).map_err(|source| CaseError::Sidecar {
        path: sidecar_path.to_owned(),
        error: source,
    })?;
    let stem = sidecar_path.with_extension("");
    let name = stem
        .strip_prefix(root)
        .unwrap_or(&stem)
        .to_string_lossy()
        .replace('\\', "/");
    let single = stem.with_extension("jsonl");
    let streams = if single.is_file() {
        vec![(String::new(), single)]
    } else {
        let base = stem
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = stem.parent().unwrap_or(root);
        let mut parts = Vec::new();
        let entries = std::fs::read_dir(dir).map_err(|source| CaseError::Io {
            path: dir.to_owned(),
            error: source,
        })?;
        for entry in entries {
            let path = entry
                .map_err(|source| CaseError::Io {
                    path: dir.to_owned(),
                    error: source,
                })?
                .path();
            let file = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if let Some(part) = file
                .strip_prefix(&format!("{base}."))
                .and_then(|rest| rest.strip_suffix(".jsonl"))
            {
                parts.push((part.to_owned(), path));
            }
        }
        parts.sort();
        parts
    };
    if streams.is_empty() {
        return Err(CaseError::NoStream(sidecar_path.to_owned()));
    }
    for (_, stream) in &streams {
        inside_corpus(root, stream)?;
    }
    Ok(Case {
        name,
        sidecar_path: sidecar_path.to_owned(),
        streams,
        sidecar,
        fixture: None,
    })
}

/// Directories below the corpus root that hold no cases.
const NOT_CASES: &[&str] = &["spec", "sources"];

/// A fixture's sidecar, `fixture.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureSidecar {
    /// Stable id, `s` and four digits.
    pub id: String,
    /// What the source holds and what a producer must make of it.
    pub description: String,
    /// The source format, as the registry names it (`claude-code-jsonl`, `codex-rollout`,
    /// `gemini-cli-json`, `pi-session-jsonl`).
    pub format: String,
    /// The rules its assertions test.
    pub rules: Vec<String>,
    /// Where the source comes from.
    pub provenance: FixtureProvenance,
    /// What a producer's output must be.
    pub expect: FixtureExpect,
    /// Realistic mistakes a producer could make on this source, each of which the fixture
    /// fails under its rule alone: the negatives its assertions guard against.
    pub mistakes: Vec<Mistake>,
    /// Whether its assertions are settled.
    pub status: Status,
}

/// Where a fixture's source comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum FixtureProvenance {
    /// Cut from a real session of `../shared/real-sessions/` (its PROVENANCE.md is kept as
    /// `cases/sources/PROVENANCE.md`): never invented.
    RealSession {
        /// The real session's file name.
        file: String,
        /// What was kept of it (`the whole file`, `lines 1-12`).
        cut: String,
    },
    /// Written for the kit, modelled on the documents named.
    HandWritten {
        /// What it is modelled on.
        note: String,
    },
    /// Generated by `asr-ctk fuzz --role producer` and shrunk: a session on which a producer
    /// failed. It has no golden (`expected/` is optional for it alone): an output is judged
    /// by the stream checker and the conservation properties only.
    Fuzzed {
        /// The run's `--seed`.
        seed: u64,
        /// The iteration that generated it.
        iteration: u64,
        /// The format generated (the fixture's `format`).
        format: String,
    },
}

impl FixtureProvenance {
    /// Whether the fixture was generated by the fuzzer: it may have no golden.
    pub fn is_fuzzed(&self) -> bool {
        matches!(self, FixtureProvenance::Fuzzed { .. })
    }
}

/// A wrong output: the golden with one text replaced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mistake {
    /// The one rule the wrong output breaks.
    pub rule: String,
    /// The mistake, in words.
    pub what: String,
    /// A text of the golden (its first stream); its first occurrence is replaced.
    pub replace: String,
    /// What replaces it.
    pub with: String,
}

/// Expectations of a fixture, per role.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureExpect {
    /// What a producer's output must be.
    pub producer: ProducerExpect,
}

/// What a producer's output must be: valid, with no warning but those listed, and meeting
/// every assertion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProducerExpect {
    /// Rules whose warnings the output may have (the source leaves nothing better to write).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// The fidelity assertions.
    pub assertions: Vec<Assertion>,
}

/// A source fixture, loaded (its files are read by [`crate::source`]).
#[derive(Debug, Clone)]
pub struct SourceFixture {
    /// `<format>/<name>`.
    pub name: String,
    /// Its directory.
    pub dir: PathBuf,
    /// Its sidecar.
    pub sidecar: FixtureSidecar,
}
