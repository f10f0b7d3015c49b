//! Source fixtures: what a producer converts, and what its output must say of it.
//!
//! A fixture is a directory `cases/sources/<format>/<name>/` with `source/` (the native
//! files a producer reads, byte for byte), `fixture.json` (what it tests, and the fidelity
//! assertions its output must meet; `schemas/source-fixture.schema.json`) and `expected/`
//! (a golden ASR output written by hand from the spec, one `.jsonl` a stream). The golden
//! must meet its own fixture: that is the fixtures' self-test.
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

use crate::case::{Case, Expect, Provenance, Sidecar, Status};
use crate::catalog::Role;
use crate::check::{CheckOptions, check_bytes};
use crate::conformance::Failure;
use crate::diagnostic::Severity;
use crate::fidelity::{Assertion, Source, evaluate};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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

/// A fixture, loaded.
#[derive(Debug, Clone)]
pub struct SourceFixture {
    /// `<format>/<name>`.
    pub name: String,
    /// Its directory.
    pub dir: PathBuf,
    /// Its sidecar.
    pub sidecar: FixtureSidecar,
}

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

/// One way a producer's output fails its fixture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFailure {
    /// The rule it breaks.
    pub rule: String,
    /// What is wrong, in one sentence.
    pub message: String,
    /// How: the output is no valid stream ([`Failure::Invalid`]) or says something of the
    /// source it must not ([`Failure::Fidelity`]).
    pub kind: Failure,
    /// Only a warning of the stream checker, or a SHOULD property broken: non-strict.
    pub warning: bool,
    /// The kit's decision the failure rests on, where the spec in hand does not settle
    /// it: non-strict.
    pub decision: Option<String>,
    /// A conservation property of every conversion is broken, not something the fixture
    /// itself asserts.
    pub property: bool,
}

impl SourceFixture {
    /// The source files, by name.
    pub fn source(&self) -> Result<Source, FixtureError> {
        Ok(Source::from_files(read_dir_files(
            &self.dir.join("source"),
            |_| true,
        )?))
    }

    /// The golden output: each stream's name (the file stem; `""` for `stream.jsonl`) and bytes.
    pub fn expected(&self) -> Result<Vec<(String, Vec<u8>)>, FixtureError> {
        goldens(&self.dir)
    }

    /// How `output` (stream name, bytes) fails this fixture: an error of the stream checker
    /// under its rule, a warning under a rule the fixture does not allow, a conservation
    /// property the output breaks of the source's facts ([`crate::conserve`]), an assertion
    /// that does not hold under its rule. Empty when it meets the fixture.
    pub fn judge(&self, source: &Source, output: &[(&str, &[u8])]) -> Vec<OutputFailure> {
        let expect = &self.sidecar.expect.producer;
        let mut failures = stream_failures(output, &expect.warnings);
        failures.extend(property_failures(
            &crate::facts::read(&self.sidecar.format, source.files()),
            output,
        ));
        failures.extend(
            evaluate(&expect.assertions, output, source)
                .into_iter()
                .map(|f| OutputFailure {
                    rule: f.rule.clone(),
                    message: f.to_string(),
                    kind: Failure::Fidelity,
                    warning: false,
                    decision: None,
                    property: false,
                }),
        );
        failures
    }
}

/// How `output` fails as streams: each error of the stream checker, and each warning under
/// a rule not in `allowed`, under its rule.
pub fn stream_failures(output: &[(&str, &[u8])], allowed: &[String]) -> Vec<OutputFailure> {
    let mut failures = Vec::new();
    for (stream, bytes) in output {
        let report = check_bytes(bytes, &CheckOptions::default());
        for d in &report.diagnostics {
            let allowed = d.severity != Severity::Error && allowed.contains(&d.rule);
            if d.severity != Severity::Notice && !allowed {
                failures.push(OutputFailure {
                    rule: d.rule.clone(),
                    kind: Failure::Invalid,
                    warning: d.severity == Severity::Warning,
                    decision: None,
                    property: false,
                    message: format!(
                        "the output{} is not a valid stream: line {}: {} {}",
                        if stream.is_empty() {
                            String::new()
                        } else {
                            format!(" {stream:?}")
                        },
                        d.line,
                        d.severity,
                        d.message
                    ),
                });
            }
        }
    }
    failures
}

/// The conservation properties `output` breaks of the source `facts` describe, as failures.
pub fn property_failures(
    facts: &crate::facts::Facts,
    output: &[(&str, &[u8])],
) -> Vec<OutputFailure> {
    crate::conserve::check(facts, output)
        .into_iter()
        .map(|broken| OutputFailure {
            rule: broken.rule.to_owned(),
            message: broken.to_string(),
            kind: Failure::Fidelity,
            warning: broken.warning,
            decision: broken.decision.map(str::to_owned),
            property: true,
        })
        .collect()
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
                expect: Expect {
                    validator: None,
                    reader: None,
                },
                provenance: Provenance::HandWritten {
                    note: Some(provenance),
                },
                status: self.sidecar.status,
                decision: None,
            },
            fixture: Some(Box::new(self.clone())),
        })
    }

    /// Each of the fixture's mistakes that it does not fail under its rule, or that its own
    /// assertions and the stream check fail under another rule too, in words.
    pub fn misjudged(&self) -> Result<Vec<String>, FixtureError> {
        let source = self.source()?;
        let golden = self.expected()?.into_iter().next().unwrap_or_default();
        let mut found = Vec::new();
        for mistake in &self.sidecar.mistakes {
            let text = String::from_utf8_lossy(&golden.1);
            if !text.contains(&mistake.replace) {
                found.push(format!(
                    "{}: the golden has no {:?}",
                    mistake.what, mistake.replace
                ));
                continue;
            }
            let wrong = text.replacen(&mistake.replace, &mistake.with, 1);
            let failures = self.judge(&source, &[(golden.0.as_str(), wrong.as_bytes())]);
            let rules: std::collections::BTreeSet<&str> =
                failures.iter().map(|f| f.rule.as_str()).collect();
            // The conservation properties may catch the mistake too, under their own rules:
            // what the fixture itself asserts must catch it under its rule alone.
            let own: std::collections::BTreeSet<&str> = failures
                .iter()
                .filter(|f| !f.property)
                .map(|f| f.rule.as_str())
                .collect();
            let alone = own.is_empty() || (own.len() == 1 && own.contains(mistake.rule.as_str()));
            if !rules.contains(mistake.rule.as_str()) || !alone {
                let messages: Vec<&str> = failures.iter().map(|f| f.message.as_str()).collect();
                found.push(format!(
                    "{}: failed under {rules:?} (by its assertions and the stream check: {own:?}), not {}: {messages:?}",
                    mistake.what, mistake.rule
                ));
            }
        }
        Ok(found)
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
    fn a_failed_assertion_says_why_and_in_which_stream_of_several() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/sources");
        let fixture = load_fixtures(&root)
            .expect("the fixtures load")
            .into_iter()
            .find(|f| f.name == "claude-code-jsonl/subagent_hook_context_01")
            .expect("the fixture");
        let source = fixture.source().expect("the source");
        let golden = fixture.expected().expect("the golden");
        let text = String::from_utf8_lossy(&golden[0].1).into_owned();
        let wrong = text.replacen("\"author\":\"hook\"", "\"author\":\"human\"", 1);
        let header = text.lines().next().unwrap_or_default().to_owned() + "\n";
        let failures = fixture.judge(
            &source,
            &[("main", wrong.as_bytes()), ("other", header.as_bytes())],
        );
        let failure = failures
            .iter()
            .find(|f| f.rule == "ASR-203" && !f.property)
            .expect("a failure of an assertion under ASR-203");
        assert_eq!(failure.kind, Failure::Fidelity);
        for part in [
            "record r1 in stream \"main\" at \"/author\": must not be \"human\"",
            "; why: isMeta:true and a <system-reminder> naming a 'PostToolUse:... hook additional context': a hook produced it",
        ] {
            assert!(
                failure.message.contains(part),
                "{part:?} not in {}",
                failure.message
            );
        }
    }
}
