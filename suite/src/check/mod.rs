//! The stream checker: reads a stream line by line and reports, as [`Diagnostic`]s, every
//! line that breaks a `stream`-checkable rule of the catalog or an inferred check.
//!
//! Memory grows with the number of record ids and references kept for cross-record
//! checks, never with the size of text content: each line is dropped once checked, and a
//! line longer than [`CheckOptions::max_line_bytes`] is read through without being kept.

mod clean;
mod cross;
mod kept;
pub mod many;
#[cfg(test)]
mod member_types;
mod pipeline;
mod record;
mod related;
mod sink;

#[cfg(test)]
pub(crate) use record::agreement::corpus_streams;

use crate::diagnostic::{Diagnostic, Severity, is_inferred_rule};
use crate::json::{self, Failure};
use crate::lines::{Line, LineReader};
use crate::model::{Outline, Standing};
use crate::rule::{self, RuleId};
use crate::schema::Schemas;
use kept::Kept;
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{self, BufReader, Read};

pub use crate::diagnostic::{MAX_PER_LINE, MAX_PER_STREAM};
pub use related::{Related, check_related, related};

#[cfg(feature = "fuzz")]
pub(crate) use pipeline::BATCH_BYTES;

/// The default bound on one line: 64 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 << 20;

/// The format version the kit checks against.
pub const FORMAT_VERSION: &str = "0.1";

/// What to check.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CheckOptions {
    /// Run the inferred structural checks (`ASR-X-...`).
    pub inferred: bool,
    /// Rule ids whose findings are dropped.
    pub disabled: BTreeSet<String>,
    /// The longest line checked, in bytes; a longer one is reported and skipped.
    pub max_line_bytes: usize,
    /// Threads that check lines on their own, for a stream read from a reader (0: one a
    /// core; 1: none, the calling thread does all). The report is the same either way.
    pub threads: usize,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            inferred: true,
            disabled: BTreeSet::new(),
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            threads: 0,
        }
    }
}

impl CheckOptions {
    /// How many threads check lines on their own.
    fn workers(&self) -> usize {
        // Asked once: the answer reads the cgroup's quota from /proc, which costs more than
        // checking a small stream.
        static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        match self.threads {
            0 => *CORES.get_or_init(|| {
                std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
            }),
            n => n,
        }
    }

    /// Whether findings under `rule` are reported.
    pub fn reports(&self, rule: &str) -> bool {
        (self.inferred || !is_inferred_rule(rule)) && !self.disabled.contains(rule)
    }
}

/// What the checker found in one stream.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct StreamReport {
    /// Lines read as JSON objects, the header included.
    pub records: usize,
    /// The findings, by line.
    pub diagnostics: Vec<Diagnostic>,
    /// What other streams checked together with this one need to know of it.
    pub summary: StreamSummary,
}

impl StreamReport {
    /// No finding of severity error.
    pub fn valid(&self) -> bool {
        !self
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }

    /// How many findings of one severity, under ASR rules (`inferred` false) or inferred checks.
    pub fn count(&self, severity: Severity, inferred: bool) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == severity && d.is_inferred() == inferred)
            .count()
    }
}

/// Facts about a stream that checks across streams use (ASR-406, ASR-412): all they need of
/// it, so a run over many streams keeps these and nothing else of each until the end. In
/// JSON (a shard of `asr-ctk validate`, `schemas/validation-shard.schema.json`) its members
/// are camelCase, an announcement `[session, callId or null, line]`, a named session
/// `[session, index of its ASR-406 notice or null]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct StreamSummary {
    /// The stream's own session reference, canonical, when its header names it.
    pub own_session: Option<String>,
    /// The header's `spawnedBy` claim.
    pub spawned_by: Option<SpawnClaim>,
    /// The subagent announcements: canonical child session, callId, line.
    pub announcements: Vec<(String, Option<String>, usize)>,
    /// The producer declares lineage loss (`producer.lossy` names lineage).
    pub lineage_lossy: bool,
    /// Sessions the stream names, with the index of the ASR-406 notice about each.
    pub named_sessions: Vec<(String, Option<usize>)>,
}

/// A child's claim to have been spawned by another session.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct SpawnClaim {
    /// The parent, canonical.
    pub session: String,
    /// The delegating record in the parent, as written.
    pub record: Option<String>,
    /// The header's line.
    pub line: usize,
}

/// Failure to read a stream (not a finding about it).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    /// The reader failed.
    #[error("failed to read the stream: {0}")]
    Io(#[from] io::Error),
}

/// Checks a whole stream from a reader.
pub fn check_reader<R: Read>(
    reader: R,
    options: &CheckOptions,
) -> Result<StreamReport, CheckError> {
    check_sized(reader, None, options)
}

/// Checks a whole stream from a file, as [`check_sized`] does with the file's length.
pub fn check_file(file: std::fs::File, options: &CheckOptions) -> Result<StreamReport, CheckError> {
    let len = file
        .metadata()
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len());
    check_sized(file, len, options)
}

/// Checks a whole stream from a reader whose length is known (a file's), as
/// [`check_reader`] does: a small stream is read in one call.
pub fn check_sized<R: Read>(
    mut reader: R,
    len: Option<u64>,
    options: &CheckOptions,
) -> Result<StreamReport, CheckError> {
    // Most streams of an archive are small: one that ends within the first read is checked
    // from memory, with no buffer of its own and no batch. Reading into an empty vector
    // would start at 32 bytes and double, a system call each time.
    let limit = crate::lines::READ_BUFFER as u64;
    let room = len.unwrap_or(UNSIZED_FIRST_READ).min(limit);
    let mut head = Vec::with_capacity(usize::try_from(room).unwrap_or(0));
    (&mut reader).take(limit).read_to_end(&mut head)?;
    if (head.len() as u64) < limit {
        return Ok(check_bytes(&head, options));
    }
    let lines = LineReader::new(
        BufReader::with_capacity(
            crate::lines::READ_BUFFER,
            io::Cursor::new(head).chain(reader),
        ),
        options.max_line_bytes,
    );
    let mut checker = Checker::new(options.clone());
    pipeline::check(lines, &mut checker, options.workers())?;
    Ok(checker.finish())
}

/// The room given to the first read of a stream of unknown length.
const UNSIZED_FIRST_READ: u64 = 8 << 10;

/// Checks a stream held in memory.
pub fn check_bytes(bytes: &[u8], options: &CheckOptions) -> StreamReport {
    let mut checker = Checker::new(options.clone());
    for line in crate::lines::lines_in(bytes, options.max_line_bytes) {
        checker.line(&line);
    }
    checker.finish()
}

/// How the checker placed a stream held in memory: its header, its records, what their
/// references resolved to, the sessions it names. The reference reader gives its own
/// ([`crate::reading::outline`]); the two agree on every stream.
pub fn outline(bytes: &[u8]) -> Outline {
    let mut lines = LineReader::new(bytes, DEFAULT_MAX_LINE_BYTES);
    let mut checker = Checker::with_state(CheckOptions::default(), cross::State::outlining());
    while let Ok(Some(line)) = lines.next_line() {
        checker.line(&line);
    }
    checker.state.finish(checker.lines_seen, &mut Vec::new());
    checker.state.take_outline().unwrap_or_default()
}

/// A finding before it is placed on a line.
#[derive(Debug, Clone)]
pub(crate) struct Finding {
    pub rule: RuleId,
    pub severity: Severity,
    pub pointer: String,
    pub message: String,
}

impl Finding {
    fn new(
        rule: RuleId,
        severity: Severity,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            rule,
            severity,
            pointer: pointer.into(),
            message: message.into(),
        }
    }

    pub(crate) fn error(
        rule: RuleId,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Finding::new(rule, Severity::Error, pointer, message)
    }

    pub(crate) fn warning(
        rule: RuleId,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Finding::new(rule, Severity::Warning, pointer, message)
    }

    pub(crate) fn notice(
        rule: RuleId,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Finding::new(rule, Severity::Notice, pointer, message)
    }
}

/// Where a record stands: its line, seq and id.
#[derive(Debug, Clone, Default)]
pub(crate) struct Place {
    pub line: usize,
    pub seq: Option<u64>,
    pub id: Option<String>,
}

/// The streaming checker: feed it lines, then finish.
#[derive(Debug)]
#[non_exhaustive]
pub struct Checker {
    schemas: &'static Schemas,
    sink: sink::Sink,
    records: usize,
    state: cross::State,
    crlf_noted: bool,
    lines_seen: usize,
}

impl Checker {
    /// A checker for one stream.
    pub fn new(options: CheckOptions) -> Self {
        Checker::with_state(options, cross::State::default())
    }

    fn with_state(options: CheckOptions, state: cross::State) -> Self {
        Checker {
            schemas: Schemas::embedded(),
            sink: sink::Sink::new(options),
            records: 0,
            state,
            crlf_noted: false,
            lines_seen: 0,
        }
    }

    /// Checks one line.
    pub fn line(&mut self, line: &Line<'_>) {
        let prepared = match *line {
            Line::TooLong { number, len, .. } => {
                Prepared::too_long(number, len, self.sink.options().max_line_bytes)
            }
            Line::Text {
                number,
                bytes,
                newline,
            } => Prepared::text(number, bytes, newline, self.schemas),
        };
        self.apply(prepared);
    }

    /// Takes what was found of one line on its own, and checks it against the stream; gives
    /// back the record, for the thread that made it to free.
    fn apply(&mut self, prepared: Prepared) -> Option<Kept> {
        self.lines_seen += 1;
        let place = Place {
            line: prepared.number,
            ..Place::default()
        };
        for finding in prepared.before_crlf {
            self.emit(&place, finding);
        }
        if prepared.crlf && !self.crlf_noted {
            self.crlf_noted = true;
            let message = "lines end with CRLF (first here); accepted: the CR is JSON white space outside \
                           every value, and no text is altered";
            self.emit(&place, Finding::notice(rule::ASR_X_019, "", message));
        }
        for finding in prepared.early {
            self.emit(&place, finding);
        }
        if let Some((kept, findings)) = prepared.record {
            self.records += 1;
            let record = kept.record();
            let place = Place {
                line: prepared.number,
                seq: record.seq,
                id: record.id.map(str::to_owned),
            };
            let standing = self.state.stand(place.line, record.kind);
            // A `session` line other than the header is a record: what only the header must
            // be is not asked of it.
            let findings = match (standing, prepared.as_record) {
                (Standing::SecondHeader { .. }, Some(as_record)) => as_record,
                _ => findings,
            };
            for finding in findings {
                self.emit(&place, finding);
            }
            let mut findings = Vec::new();
            self.state.record(&place, standing, &record, &mut findings);
            for (finding, at) in findings {
                let place = at.unwrap_or_else(|| place.clone());
                self.emit(&place, finding);
            }
            self.sink.end_line();
            return Some(kept);
        }
        self.sink.end_line();
        None
    }

    /// Ends the stream: resolves what waited for later records and returns the report.
    pub fn finish(mut self) -> StreamReport {
        let mut findings = Vec::new();
        self.state.finish(self.lines_seen, &mut findings);
        for (finding, place) in findings {
            self.sink.push_late(&place.unwrap_or_default(), finding);
        }
        let mut named = Vec::new();
        for (session, (place, slot)) in self.state.named_sessions() {
            let finding = Finding::notice(
                rule::ASR_406,
                slot.pointer(),
                format!(
                    "names session {session}, which is not among the streams checked; a reference to a missing \
                     session never makes a stream invalid, and readers report it as unresolved"
                ),
            );
            let index = self.sink.push_late(place, finding);
            named.push((session.clone(), index));
        }
        let mut summary = self.state.summary();
        summary.named_sessions = named;
        let mut report = StreamReport {
            records: self.records,
            diagnostics: self.sink.finish(),
            summary,
        };
        sort_diagnostics(&mut report);
        report
    }

    fn emit(&mut self, place: &Place, finding: Finding) {
        self.sink.push(place, finding);
    }
}

/// Sorts findings by line, keeping the order they were found in on one line, and keeps
/// the indices of the ASR-406 notices pointing at the right entries.
fn sort_diagnostics(report: &mut StreamReport) {
    let mut order: Vec<usize> = (0..report.diagnostics.len()).collect();
    order.sort_by_key(|&i| report.diagnostics[i].line);
    let mut new_index = vec![0; order.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new;
    }
    let mut sorted: Vec<Option<Diagnostic>> = std::mem::take(&mut report.diagnostics)
        .into_iter()
        .map(Some)
        .collect();
    report.diagnostics = order.iter().filter_map(|&i| sorted[i].take()).collect();
    for (_, index) in &mut report.summary.named_sessions {
        if let Some(i) = index {
            *i = new_index[*i];
        }
    }
}

/// What one line yields on its own, before the stream's state is consulted: computed on any
/// thread, then taken in stream order by [`Checker::apply`].
#[derive(Debug)]
pub(crate) struct Prepared {
    number: usize,
    /// Findings before the CRLF notice (a byte order mark).
    before_crlf: Vec<Finding>,
    /// The line ends with CR.
    crlf: bool,
    /// Findings about the line as text and JSON.
    early: Vec<Finding>,
    /// The parsed object, and the findings of the schemas and of the checks within it.
    record: Option<(Kept, Vec<Finding>)>,
    /// For a `session` line, its findings should it not be the header: those of a record of
    /// a type the kit does not check (which line is the header is known only in order).
    as_record: Option<Vec<Finding>>,
}

impl Prepared {
    /// The same, its record cut down to what the checks across records read.
    fn essentials(mut self) -> Self {
        if let Some((kept, _)) = &mut self.record {
            kept.keep_essentials();
        }
        self
    }

    fn too_long(number: usize, len: u64, max_line_bytes: usize) -> Self {
        let message = format!(
            "the line is {len} bytes long, over the limit of {max_line_bytes} bytes; it was not checked \
             (raise the limit with --max-line-bytes)"
        );
        Prepared {
            number,
            before_crlf: Vec::new(),
            crlf: false,
            early: vec![Finding::error(rule::ASR_X_006, "", message)],
            record: None,
            as_record: None,
        }
    }

    fn text(number: usize, mut bytes: &[u8], newline: bool, schemas: &Schemas) -> Self {
        let mut prepared = Prepared {
            number,
            before_crlf: Vec::new(),
            crlf: false,
            early: Vec::new(),
            record: None,
            as_record: None,
        };
        if let Some(rest) = crate::lines::without_bom(number, bytes) {
            bytes = rest;
            let message = "the stream starts with a UTF-8 byte order mark; JSON text must not (RFC 8259); \
                           the rest of the line was checked without it";
            prepared
                .before_crlf
                .push(Finding::error(rule::ASR_X_002, "", message));
        }
        prepared.crlf = bytes.last() == Some(&b'\r');
        let early = &mut prepared.early;
        if bytes.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            early.push(Finding::error(
                rule::ASR_X_003,
                "",
                "the line is empty; every line is one JSON object",
            ));
            return prepared;
        }
        if clean::enabled() {
            if let Some((kept, session)) = clean::clean(bytes, schemas) {
                prepared.record = Some((kept, Vec::new()));
                prepared.as_record = session.then(Vec::new);
                return prepared;
            }
        }
        let parsed = match json::parse(bytes) {
            Ok(parsed) => parsed,
            Err(failure) => {
                early.push(unparsed(bytes, newline, failure));
                return prepared;
            }
        };
        for pointer in &parsed.duplicates {
            let message = format!(
                "the member name at {pointer} appears twice in its object; the last one was checked"
            );
            early.push(Finding::error(rule::ASR_X_004, pointer.clone(), message));
        }
        let Value::Object(ref object) = parsed.value else {
            let message = format!(
                "the line is a JSON {}, not an object",
                kind_of(&parsed.value)
            );
            early.push(Finding::error(rule::ASR_X_003, "", message));
            return prepared;
        };
        let finding = |finding: crate::schema::SchemaFinding| Finding {
            rule: finding.rule,
            severity: finding.severity,
            pointer: finding.pointer,
            message: finding.message,
        };
        let mut findings: Vec<Finding> = schemas
            .check(&parsed.value)
            .into_iter()
            .map(finding)
            .collect();
        let own = record::check(object);
        if object.get("type").and_then(Value::as_str) == Some("session") {
            let mut as_record: Vec<Finding> = schemas
                .check_untyped(&parsed.value)
                .into_iter()
                .map(finding)
                .collect();
            as_record.extend(own.iter().filter(|f| f.rule != rule::ASR_X_020).cloned());
            prepared.as_record = Some(as_record);
        }
        findings.extend(own);
        if let Value::Object(object) = parsed.value {
            prepared.record = Some((Kept::Object(object), findings));
        }
        prepared
    }
}

/// The finding about a line that is no JSON text.
fn unparsed(bytes: &[u8], newline: bool, failure: Failure) -> Finding {
    // Only a line that does not parse can be invalid UTF-8: ask which it is.
    if let Err(e) = std::str::from_utf8(bytes) {
        let message = format!(
            "the line is not UTF-8: invalid byte sequence at byte {} of the line; it was not checked",
            e.valid_up_to() + 1
        );
        return Finding::error(rule::ASR_X_001, "", message);
    }
    match failure {
        Failure::TooDeep { column } => Finding::error(
            rule::ASR_X_006,
            "",
            format!(
                "nesting deeper than {} levels at column {column}; the line was not checked",
                json::MAX_DEPTH
            ),
        ),
        Failure::NumberOutOfRange { column } => Finding::error(
            rule::ASR_X_005,
            "",
            format!(
                "a number at column {column} is beyond the range of a double; the line was not checked"
            ),
        ),
        Failure::Syntax { eof: true, .. } if !newline => Finding::error(
            rule::ASR_X_003,
            "",
            "the last line is truncated: it has no final newline and its JSON ends in the middle of a value",
        ),
        // A value still open where its line ends: the text is JSON spread over lines (pretty
        // printed, or an array of records), not JSON Lines. Said once per such line, with
        // what a stream is.
        Failure::Syntax {
            message,
            column,
            eof: true,
        } => Finding::error(
            rule::ASR_X_003,
            "",
            format!(
                "the line is not valid JSON: {message} at column {column}; the value goes on past the end of the line: an ASR stream is JSON Lines, one whole JSON object on each line (a pretty-printed JSON document or an array of records is not a stream)"
            ),
        ),
        Failure::Syntax {
            message, column, ..
        } => Finding::error(
            rule::ASR_X_003,
            "",
            format!("the line is not valid JSON: {message} at column {column}"),
        ),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
