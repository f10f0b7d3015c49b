//! One `asr-ctk validate` of an archive split over several machines: `--shard i/n` checks
//! the streams of part `i` and writes a shard file, and `--merge` joins the `n` shard files
//! into the output the whole run gives, cross-stream findings included.
//!
//! The split is by path ([`shard_of`]): a stream's part follows from the path it is walked
//! under, whatever machine walks it and in whatever order, so `n` machines with the same
//! archive in the same place take every stream once. A shard runs no check across streams
//! (they need every stream): it keeps each stream's findings as it alone gives them and
//! its [`StreamSummary`], and the merge runs the checks across streams over the summaries
//! of all the shards ([`crate::check::related`]).
//!
//! A shard file is JSON Lines, one [`ShardLine`] a line (`schemas/validation-shard.schema.json`):
//! a header, an entry for each stream of the part in the order of the whole walk (written
//! as the walk goes on), and an end line counting them and saying what the walk found, so
//! a file cut short is told from a part with fewer streams:
//!
//! ```json
//! {"type":"header","kitVersion":"0.1.0","shard":"2/3","arguments":["archive"],"options":{"inferred":true,"disabled":[],"maxLineBytes":16777216}}
//! {"type":"stream","index":1,"report":{"file":"archive/b.jsonl","valid":true,"records":2,"diagnostics":[],"counts":{"asr":{"error":0,"warning":0,"notice":0},"inferred":{"error":0,"warning":0,"notice":0}}},"summary":{"ownSession":"asr:session:b","spawnedBy":null,"announcements":[],"lineageLossy":false,"namedSessions":[]}}
//! {"type":"failed","index":4,"file":"archive/e.jsonl","error":"failed to open archive/e.jsonl: permission denied"}
//! {"type":"end","entries":2,"walked":5,"failures":[]}
//! ```

use crate::check::StreamSummary;
use crate::report::FileReport;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// One line of a shard file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum ShardLine {
    /// The first line: what was run.
    Header(Header),
    /// A stream checked.
    #[serde(rename_all = "camelCase")]
    Stream {
        /// Its place in the whole walk, from 0.
        index: usize,
        /// Its findings, as the stream alone gives them.
        report: FileReport,
        /// What the checks across streams need of it.
        summary: StreamSummary,
    },
    /// A stream that could not be read.
    #[serde(rename_all = "camelCase")]
    Failed {
        /// Its place in the whole walk, from 0.
        index: usize,
        /// Its path, as walked.
        file: String,
        /// Why.
        error: String,
    },
    /// The last line: how many entries (streams and failures) came before it, and what the
    /// whole walk found.
    #[serde(rename_all = "camelCase")]
    End {
        /// The entries of the part.
        entries: usize,
        /// How many streams the whole walk found.
        walked: usize,
        /// What went wrong while walking (a directory that could not be listed, one without
        /// streams): the whole run fails, so the merge does.
        failures: Vec<String>,
    },
}

/// What a shard was run as: every shard of one run has the same, but for `shard`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Header {
    /// The kit's version.
    pub kit_version: String,
    /// `i/n`.
    pub shard: String,
    /// The paths given to `validate`.
    pub arguments: Vec<String>,
    /// The options of the check.
    pub options: Options,
}

/// The options a check was run with, which must be the same in every shard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Options {
    /// The kit's inferred checks are reported.
    pub inferred: bool,
    /// The rules left out.
    pub disabled: Vec<String>,
    /// The longest line checked.
    pub max_line_bytes: usize,
}

/// `i/n` parsed: 1 <= i <= n.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// The part, from 1.
    pub i: usize,
    /// How many parts.
    pub n: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (i, n) = text
            .split_once('/')
            .and_then(|(i, n)| Some((i.parse::<usize>().ok()?, n.parse::<usize>().ok()?)))
            .ok_or_else(|| format!("{text:?} is not i/n"))?;
        if i < 1 || i > n {
            return Err(format!("shard {text}: i must be from 1 to n"));
        }
        Ok(Shard { i, n })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.i, self.n)
    }
}

/// The part (from 1) of `n` that the stream walked under `path` is in: the first eight bytes
/// of the SHA-256 of the path's bytes, modulo `n`, plus one.
pub fn shard_of(path: &Path, n: usize) -> usize {
    use std::os::unix::ffi::OsStrExt;
    let digest = Sha256::digest(path.as_os_str().as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    let n = u64::try_from(n.max(1)).unwrap_or(u64::MAX);
    usize::try_from(u64::from_be_bytes(first) % n).unwrap_or(0) + 1
}

/// Why shard files are not the shards of one run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// A line that is not a shard file's.
    #[error("{file}:{line}: failed to read a shard file's line: {message}")]
    Line {
        /// The shard file.
        file: String,
        /// The line, from 1.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Files that do not fit together.
    #[error("{file}: {message}")]
    Mismatch {
        /// The shard file.
        file: String,
        /// What does not fit.
        message: String,
    },
    /// Parts missing.
    #[error("the shards merged are not all of the run: {0}")]
    Missing(String),
}

/// The shard files of one run, read line by line and checked as they come: each a header
/// first, entries in ascending index, an end line counting them, and nothing after it;
/// every header the same but for its part, every part once, every index once.
#[derive(Debug, Default)]
pub struct Join {
    /// The header of the first shard file.
    pub header: Option<Header>,
    /// What the walk found, as the first end line says: the streams, and its failures.
    pub walk: Option<(usize, Vec<String>)>,
    /// The parts seen, with the file of each.
    parts: BTreeMap<usize, String>,
    /// Which file holds each index.
    owner: BTreeMap<usize, usize>,
}

/// One shard file being read.
#[derive(Debug)]
pub struct Part {
    file: String,
    /// Its position among the files given.
    position: usize,
    /// The lines read.
    lines: usize,
    /// The last index read.
    last: Option<usize>,
    /// The entries read.
    entries: usize,
    /// Whether the end line was read.
    ended: bool,
    header: bool,
}

impl Join {
    /// A part about to be read: `file` is its name, `position` its place among the files.
    pub fn part(file: &str, position: usize) -> Part {
        Part {
            file: file.to_owned(),
            position,
            lines: 0,
            last: None,
            entries: 0,
            ended: false,
            header: false,
        }
    }

    /// Reads one line of `part`, checks it against what came before, and gives it.
    pub fn line(&mut self, part: &mut Part, text: &[u8]) -> Result<ShardLine, MergeError> {
        part.lines += 1;
        let line_error = |message: String| MergeError::Line {
            file: part.file.clone(),
            line: part.lines,
            message,
        };
        if part.ended {
            return Err(line_error("a line after the end line".into()));
        }
        let parsed: ShardLine =
            serde_json::from_slice(text).map_err(|e| line_error(e.to_string()))?;
        let mismatch = |message: String| MergeError::Mismatch {
            file: part.file.clone(),
            message,
        };
        match &parsed {
            ShardLine::Header(header) => {
                if part.header {
                    return Err(line_error("a second header".into()));
                }
                part.header = true;
                let shard: Shard = header.shard.parse().map_err(|e: String| line_error(e))?;
                match &self.header {
                    None => self.header = Some(header.clone()),
                    Some(first) => {
                        let same = Header {
                            shard: first.shard.clone(),
                            ..header.clone()
                        };
                        if same != *first {
                            return Err(mismatch(format!(
                                "shard {} was not run as the first file's shard {} was (another kit version, other paths or options): not shards of one run",
                                header.shard, first.shard
                            )));
                        }
                        let n = first.shard.parse::<Shard>().map_or(0, |s| s.n);
                        if shard.n != n {
                            return Err(mismatch(format!(
                                "shard {} is of a run in {} parts, the first file's of one in {n}",
                                header.shard, shard.n
                            )));
                        }
                    }
                }
                if let Some(other) = self.parts.insert(shard.i, part.file.clone()) {
                    return Err(mismatch(format!(
                        "shard {} is also in {other}",
                        header.shard
                    )));
                }
            }
            ShardLine::Stream { index, .. } | ShardLine::Failed { index, .. } => {
                if !part.header {
                    return Err(line_error("an entry before the header".into()));
                }
                if part.last.is_some_and(|last| last >= *index) {
                    return Err(line_error(format!(
                        "index {index} after index {}: entries come in the walk's order",
                        part.last.unwrap_or(0)
                    )));
                }
                if let Some(&other) = self.owner.get(index) {
                    return Err(mismatch(format!(
                        "stream {index} of the walk is in two shard files (the other is file {})",
                        other + 1
                    )));
                }
                self.owner.insert(*index, part.position);
                part.last = Some(*index);
                part.entries += 1;
            }
            ShardLine::End {
                entries,
                walked,
                failures,
            } => {
                if !part.header {
                    return Err(line_error("an end line before the header".into()));
                }
                if *entries != part.entries {
                    return Err(line_error(format!(
                        "the end line counts {entries} entries, the file has {}",
                        part.entries
                    )));
                }
                if let Some(last) = part.last.filter(|last| last >= walked) {
                    return Err(line_error(format!(
                        "an entry of index {last}, but the walk found {walked} streams"
                    )));
                }
                let found = (*walked, failures.clone());
                match &self.walk {
                    None => self.walk = Some(found),
                    Some(first) if *first != found => {
                        return Err(mismatch(format!(
                            "its walk found {walked} streams and {} failures, the first file's {} and {}: not shards of one walk",
                            failures.len(),
                            first.0,
                            first.1.len()
                        )));
                    }
                    Some(_) => {}
                }
                part.ended = true;
            }
        }
        Ok(parsed)
    }

    /// Ends `part`: its end line must have been read.
    pub fn end(&self, part: &Part) -> Result<(), MergeError> {
        if part.ended {
            Ok(())
        } else {
            Err(MergeError::Mismatch {
                file: part.file.clone(),
                message: format!(
                    "ends after {} lines without its end line: cut short",
                    part.lines
                ),
            })
        }
    }

    /// Once every part is read: every part of the run is there, and every stream of the
    /// walk in one of them.
    pub fn finish(&self) -> Result<(), MergeError> {
        let (Some(header), Some((walked, _))) = (&self.header, &self.walk) else {
            return Err(MergeError::Missing("no shard file given".into()));
        };
        let walked = *walked;
        let n = header.shard.parse::<Shard>().map_or(0, |s| s.n);
        let missing: Vec<String> = (1..=n)
            .filter(|i| !self.parts.contains_key(i))
            .take(8)
            .map(|i| format!("{i}/{n}"))
            .collect();
        if !missing.is_empty() {
            return Err(MergeError::Missing(format!(
                "{} of {n} parts missing: {}",
                n - self.parts.len(),
                missing.join(", ")
            )));
        }
        if self.owner.len() != walked {
            let absent = (0..walked).find(|i| !self.owner.contains_key(i));
            return Err(MergeError::Missing(format!(
                "the walk found {walked} streams, the shards hold {} (stream {} is in none)",
                self.owner.len(),
                absent.unwrap_or(0)
            )));
        }
        Ok(())
    }

    /// Which part (by its position among the files) holds each index, in index order.
    pub fn owners(&self) -> impl Iterator<Item = usize> + '_ {
        self.owner.values().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{CheckOptions, check_bytes};

    fn header(shard: &str) -> ShardLine {
        ShardLine::Header(Header {
            kit_version: "0.1.0".into(),
            shard: shard.into(),
            arguments: vec!["archive".into()],
            options: Options {
                inferred: true,
                disabled: Vec::new(),
                max_line_bytes: 1 << 20,
            },
        })
    }

    fn end(entries: usize, walked: usize) -> ShardLine {
        ShardLine::End {
            entries,
            walked,
            failures: Vec::new(),
        }
    }

    fn stream(index: usize) -> ShardLine {
        let report = check_bytes(b"", &CheckOptions::default());
        ShardLine::Stream {
            index,
            summary: report.summary.clone(),
            report: FileReport::new(format!("archive/{index}.jsonl"), report),
        }
    }

    fn text(line: &ShardLine) -> Vec<u8> {
        serde_json::to_vec(line).expect("JSON")
    }

    /// Reads `files` (each a list of lines) and gives the first refusal.
    fn join(files: &[Vec<ShardLine>]) -> Result<Vec<usize>, MergeError> {
        let mut join = Join::default();
        for (position, lines) in files.iter().enumerate() {
            let mut part = Join::part(&format!("part-{}.jsonl", position + 1), position);
            for line in lines {
                let read = join.line(&mut part, &text(line))?;
                assert_eq!(read, *line, "a line reads back as written");
            }
            join.end(&part)?;
        }
        join.finish()?;
        Ok(join.owners().collect())
    }

    #[test]
    fn the_shards_of_one_run_join_and_say_which_holds_each_stream() {
        let one = vec![header("1/2"), stream(0), stream(2), end(2, 3)];
        let two = vec![header("2/2"), stream(1), end(1, 3)];
        assert_eq!(join(&[one.clone(), two.clone()]), Ok(vec![0, 1, 0]));
        assert_eq!(join(&[two, one]), Ok(vec![1, 0, 1]));
    }

    #[test]
    fn shards_that_are_not_of_one_run_are_refused_with_the_reason() {
        let cases: Vec<(Vec<Vec<ShardLine>>, &str)> = vec![
            (
                vec![vec![header("1/2"), stream(0), end(1, 2)]],
                "1 of 2 parts missing: 2/2",
            ),
            (
                vec![
                    vec![header("1/2"), stream(0), end(1, 2)],
                    vec![header("1/2"), stream(1), end(1, 2)],
                ],
                "shard 1/2 is also in part-1.jsonl",
            ),
            (
                vec![
                    vec![header("1/2"), stream(0), end(1, 2)],
                    vec![header("2/3"), stream(1), end(1, 2)],
                ],
                "of a run in 3 parts",
            ),
            (
                vec![
                    vec![header("1/2"), stream(0), end(1, 2)],
                    vec![header("2/2"), stream(1), end(1, 3)],
                ],
                "not shards of one walk",
            ),
            (
                vec![
                    vec![header("1/2"), stream(0), end(1, 2)],
                    vec![header("2/2"), stream(0), end(1, 2)],
                ],
                "in two shard files",
            ),
            (
                vec![
                    vec![header("1/2"), stream(0), end(1, 3)],
                    vec![header("2/2"), stream(1), end(1, 3)],
                ],
                "stream 2 is in none",
            ),
            (vec![vec![header("1/1"), stream(0), stream(1)]], "cut short"),
            (
                vec![vec![header("1/1"), stream(0), end(2, 1)]],
                "counts 2 entries",
            ),
            (
                vec![vec![header("1/1"), stream(1), stream(0), end(2, 2)]],
                "walk's order",
            ),
            (vec![vec![stream(0)]], "before the header"),
            (
                vec![vec![header("1/1"), stream(5), end(1, 1)]],
                "the walk found 1 streams",
            ),
            (
                vec![vec![header("1/1"), stream(0), end(1, 1), end(1, 1)]],
                "after the end line",
            ),
            (vec![vec![header("0/1")]], "from 1 to n"),
            (vec![], "no shard file given"),
        ];
        for (files, says) in cases {
            let refused = join(&files).expect_err(says).to_string();
            assert!(refused.contains(says), "{refused} (expected: {says})");
        }
        let mut join = Join::default();
        let mut part = Join::part("p.jsonl", 0);
        let refused = join
            .line(&mut part, br#"{"type":"header","extra":1}"#)
            .expect_err("not a header");
        assert!(
            refused.to_string().starts_with("p.jsonl:1: failed to read"),
            "{refused}"
        );
    }

    #[test]
    fn the_split_is_by_path_alone_and_spreads_the_streams() {
        let paths: Vec<std::path::PathBuf> = (0..3000)
            .map(|i| format!("archive/{i}/session.jsonl").into())
            .collect();
        let mut counts = [0usize; 3];
        for path in &paths {
            let part = shard_of(path, 3);
            assert!((1..=3).contains(&part));
            assert_eq!(part, shard_of(path, 3), "the same path, the same part");
            counts[part - 1] += 1;
        }
        for count in counts {
            assert!((800..1200).contains(&count), "{counts:?}");
        }
        assert_eq!(shard_of(Path::new("x"), 1), 1);
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { i: 2, n: 3 }));
        assert!("3/2".parse::<Shard>().is_err());
        assert!("x/2".parse::<Shard>().is_err());
    }
}
