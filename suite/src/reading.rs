//! The reference reader: how the spec says a stream is to be understood, as a reading
//! (PROTOCOL.md, "Readers and the reading"; `schemas/reading.schema.json`).

use crate::compact::Strings;
use crate::json;
use crate::lines::{Line, LineReader};
pub use crate::model::Originality;
use crate::model::{
    self, Added, Declared, Layout, Lineage, Outline, RecordIndex, Standing, canonical_session,
};
use crate::rule::{self, RuleId};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{self, BufReader, Read, Seek, Write};

/// How a reader understood a stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Reading {
    /// The session: the header's facts.
    pub session: SessionReading,
    /// Every record, by id.
    pub records: BTreeMap<String, RecordReading>,
    /// What a consumer may credit to the session.
    pub totals: Totals,
}

/// The session as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct SessionReading {
    /// `yes`, `no` or `unknown` (ASR-401, -402).
    pub root: Tri,
    /// Sessions named but not this one (ASR-406), sorted.
    pub unresolved: Vec<String>,
}

/// Yes, no or unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Tri {
    /// Positively so.
    Yes,
    /// Positively not.
    No,
    /// Not known.
    Unknown,
}

/// One record as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[non_exhaustive]
pub struct RecordReading {
    /// The record's type (null when it has none).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// A later record supersedes it.
    pub superseded: bool,
    /// Its originality.
    pub originality: Originality,
    /// Messages: an entry of the context view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_view: Option<bool>,
    /// Messages: a delivery confirms it was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered: Option<bool>,
    /// Messages: the parts of `content`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<Vec<PartReading>>,
}

/// One content part as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PartReading {
    /// The part's type (null when it has none).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Effective author.
    pub author: Option<String>,
    /// Effective origin.
    pub origin: Option<String>,
    /// Effective phase.
    pub phase: Option<String>,
    /// How it is presented.
    pub render: Render,
    /// What a search index may hold of it.
    pub index: Vec<String>,
}

/// How a part is presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Render {
    /// As text.
    Text,
    /// As full reasoning.
    ReasoningFull,
    /// As a reasoning summary.
    ReasoningSummary,
    /// Reasoning, not shown.
    ReasoningHidden,
    /// Image or audio.
    Media,
    /// A resource or a link to one.
    Resource,
    /// Structured data.
    Data,
    /// A refusal.
    Refusal,
    /// Unreadable content.
    Opaque,
    /// An unknown part, skipped (and kept by storage).
    Skipped,
}

/// Totals a consumer may report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[non_exhaustive]
pub struct Totals {
    /// Records whose originality is original, in stream order.
    pub own_records: Vec<String>,
    /// Some record's originality is unknown.
    pub may_include_copies: bool,
}

/// A reading and whether the reader accepted the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadOutcome {
    /// The reader could read it: a header first, every line a JSON object.
    pub accepted: bool,
    /// How it was understood.
    pub reading: Reading,
}

/// Reads a stream from a reader; lines longer than `max_line` bytes are not read.
pub fn read_stream<R: Read>(input: R, max_line: usize) -> io::Result<ReadOutcome> {
    let mut lines = LineReader::new(
        BufReader::with_capacity(crate::lines::READ_BUFFER, input),
        max_line,
    );
    let mut state = State::new(true, max_line);
    while let Some(line) = lines.next_line()? {
        state.take(&line);
    }
    Ok(state.finish())
}

/// Reads a stream held in memory.
pub fn read_bytes(bytes: &[u8]) -> ReadOutcome {
    read_stream(bytes, usize::MAX).unwrap_or_else(|_| State::new(true, usize::MAX).finish())
}

/// Reads streams held in memory as one set: each stream's reading, the sessions of the
/// others present (PROTOCOL.md, "Several streams read as one set").
pub fn read_set(streams: &[&[u8]]) -> Vec<ReadOutcome> {
    let mut states: Vec<State> = streams
        .iter()
        .map(|bytes| {
            let mut state = State::new(true, usize::MAX);
            let mut lines = LineReader::new(*bytes, usize::MAX);
            while let Ok(Some(line)) = lines.next_line() {
                state.take(&line);
            }
            state
        })
        .collect();
    share_sessions(&mut states.iter_mut().collect::<Vec<_>>());
    states.into_iter().map(State::finish).collect()
}

/// Reads scanned streams as one set: each has the sessions the others are (PROTOCOL.md,
/// "Several streams read as one set").
pub fn read_together(scans: &mut [&mut Scan]) {
    share_sessions(&mut scans.iter_mut().map(|s| &mut s.state).collect::<Vec<_>>());
}

fn share_sessions(states: &mut [&mut State]) {
    let sessions: Vec<Option<String>> = states.iter().map(|s| s.own_session.clone()).collect();
    for (n, state) in states.iter_mut().enumerate() {
        state.present.extend(
            sessions
                .iter()
                .enumerate()
                .filter(|(m, _)| *m != n)
                .filter_map(|(_, s)| s.clone()),
        );
    }
}

/// How the reference reader placed a stream held in memory: its header, its records, what
/// their references resolved to, the sessions it names. The checker gives its own
/// ([`crate::check::outline`]); the two agree on every stream.
pub fn outline(bytes: &[u8]) -> Outline {
    let mut lines = LineReader::new(bytes, usize::MAX);
    let mut state = State::new(false, usize::MAX);
    while let Ok(Some(line)) = lines.next_line() {
        state.take(&line);
    }
    state.outline()
}

/// Why a reader did not accept a stream: the line and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Refusal {
    /// 1-based line (0 for the stream as a whole).
    pub line: usize,
    /// The kit's check the line breaks (PROTOCOL.md, "What a reader may refuse").
    pub rule: RuleId,
    /// Why, in words.
    pub reason: String,
}

/// The first of two passes over a stream in a file: what the reading needs of every record
/// (its place, its links, its facts), without its text. Memory grows with the number of
/// records, by a small constant, and with the longest line read, never with the text of the
/// stream; [`Scan::write_reading`] reads each record's line again for its parts.
#[non_exhaustive]
pub struct Scan {
    state: State,
}

/// Scans a stream in a seekable file (from its start); lines longer than `max_line` bytes
/// are not read, and refuse the stream.
pub fn scan<R: Read>(input: R, max_line: usize) -> io::Result<Scan> {
    let mut lines = LineReader::new(
        BufReader::with_capacity(crate::lines::READ_BUFFER, input),
        max_line,
    );
    let mut state = State::new(false, max_line);
    while let Some(line) = lines.next_line()? {
        state.take(&line);
    }
    Ok(Scan { state })
}

/// [`scan`] of a stream that cannot be read twice (standard input, a pipe, a device),
/// copying it into `copy` as it is read, so that [`Scan::write_reading`] can read it again
/// from there. Each line within `max_line` bytes is copied at its own offset; a longer line
/// is not copied: its place, its `\n` included, is left a hole (nothing written, so a file
/// system with sparse files gives it no disk; the second pass never reads it). At most `max_bytes` bytes of `input` are read: a longer stream
/// is an error naming the line it reached, so that no stream, /dev/zero included, is read
/// without end.
pub fn scan_copying<R: Read, C: Write + Seek>(
    input: R,
    max_line: usize,
    max_bytes: u64,
    copy: &mut C,
) -> Result<Scan, CopyError> {
    let mut input = input.take(max_bytes.saturating_add(1));
    let mut lines = LineReader::new(
        BufReader::with_capacity(crate::lines::READ_BUFFER, &mut input),
        max_line,
    );
    let mut state = State::new(false, max_line);
    let mut at: u64 = 0;
    let mut last = 0;
    while let Some(line) = lines.next_line()? {
        match &line {
            Line::Text {
                number,
                bytes,
                newline,
            } => {
                copy.write_all(bytes)?;
                if *newline {
                    copy.write_all(b"\n")?;
                }
                at += bytes.len() as u64 + u64::from(*newline);
                last = *number;
            }
            Line::TooLong {
                number,
                len,
                newline,
            } => {
                at += len + u64::from(*newline);
                copy.seek(io::SeekFrom::Start(at))?;
                last = *number;
            }
        }
        state.take(&line);
    }
    drop(lines);
    if input.limit() == 0 {
        return Err(CopyError::TooLong {
            line: last,
            max: max_bytes,
        });
    }
    copy.flush()?;
    Ok(Scan { state })
}

/// The most bytes [`scan_copying`] reads of a stream unless told otherwise: `asr-ctk read
/// --max-spool-bytes`'s default, and the reference adapter's bound.
pub const DEFAULT_MAX_COPY_BYTES: u64 = 16 << 30;

/// A new temporary file (in [`std::env::temp_dir`]) for [`scan_copying`], removed as soon as
/// it is open: the open file stays readable and writable, and nothing is left behind
/// however the process ends.
pub fn temporary_file() -> io::Result<std::fs::File> {
    let dir = std::env::temp_dir();
    let mut attempt = 0u32;
    loop {
        let path = dir.join(format!("asr-ctk-read-{}-{attempt}", std::process::id()));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => {
                let _ = std::fs::remove_file(&path);
                return Ok(file);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("failed to create {}: {e}", path.display()),
                ));
            }
        }
    }
}

/// Failure to copy a stream for a second pass ([`scan_copying`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CopyError {
    /// Reading the stream or writing the copy failed.
    #[error("failed to read the stream or to copy it to read it again: {0}")]
    Io(#[from] io::Error),
    /// The stream goes on past the bound.
    #[error(
        "failed to read line {line} past byte {max}, the most read of a stream that is not a regular file (--max-spool-bytes)"
    )]
    TooLong {
        /// The line it had reached (1-based).
        line: usize,
        /// The bound, in bytes.
        max: u64,
    },
}

impl Scan {
    /// Whether the reader accepts the stream.
    pub fn accepted(&self) -> bool {
        self.state.accepted && self.state.seen_any
    }

    /// The stream's own session, in canonical form, when its header names one.
    pub fn own_session(&self) -> Option<&str> {
        self.state.own_session.as_deref()
    }

    /// Why it does not, line by line (empty when it does).
    pub fn refusals(&self) -> Vec<Refusal> {
        let mut refusals = self.state.refusals.clone();
        if !self.state.seen_any && refusals.is_empty() {
            refusals.push(Refusal {
                line: 0,
                rule: rule::ASR_X_007,
                reason: "the stream is empty: it has no header".into(),
            });
        }
        refusals
    }

    /// Writes the reading, as `serde_json` writes a [`Reading`] (pretty, at `depth` levels of
    /// indentation, or compact), reading each record's line again from `file`, the file
    /// scanned: one record's text is held at a time.
    pub fn write_reading<F: Read + Seek, W: Write>(
        self,
        file: F,
        out: &mut W,
        pretty: bool,
        depth: usize,
    ) -> io::Result<()> {
        let state = self.state;
        let facts = state.facts();
        let mut file = BufReader::with_capacity(64 << 10, file);
        let pad = |level: usize| -> String {
            if pretty {
                format!("\n{}", "  ".repeat(depth + level))
            } else {
                String::new()
            }
        };
        let colon = if pretty { ": " } else { ":" };
        write!(
            out,
            "{{{}\"session\"{colon}{}",
            pad(1),
            nested(&facts.session, pretty, depth + 1)?
        )?;
        write!(out, ",{}\"records\"{colon}{{", pad(1))?;
        let mut order: Vec<u32> = state.listed().collect();
        order.sort_unstable_by(|a, b| state.index.id(*a).cmp(state.index.id(*b)));
        let mut line = Vec::new();
        for (n, number) in order.iter().enumerate() {
            let id = state.index.id(*number);
            let record = &state.records[*number as usize];
            let mut reading = facts.record(&state, *number);
            if record.message.is_some() {
                line.resize(usize::try_from(record.len).unwrap_or(usize::MAX), 0);
                file.seek(io::SeekFrom::Start(record.offset))?;
                file.read_exact(&mut line)?;
                let Ok(parsed) = json::parse(&line) else {
                    return Err(io::Error::other(format!(
                        "the line at byte {} changed while the stream was read: it is no longer JSON",
                        record.offset
                    )));
                };
                if let Value::Object(object) = parsed.value {
                    reading.parts = Some(message_facts(&object, true).parts);
                }
            }
            let key = serde_json::to_string(id).map_err(io::Error::other)?;
            let comma = if n == 0 { "" } else { "," };
            let entry = nested(&reading, pretty, depth + 2)?;
            write!(out, "{comma}{}{key}{colon}{entry}", pad(2))?;
        }
        if !order.is_empty() {
            write!(out, "{}", pad(1))?;
        }
        write!(
            out,
            "}},{}\"totals\"{colon}{}{}}}",
            pad(1),
            nested(&facts.totals(&state), pretty, depth + 1)?,
            pad(0)
        )?;
        Ok(())
    }
}

/// A value as `serde_json` writes it inside a document, `levels` deep: compact, or pretty
/// with every line after the first indented by the levels above it.
fn nested<T: Serialize>(value: &T, pretty: bool, levels: usize) -> io::Result<String> {
    if !pretty {
        return serde_json::to_string(value).map_err(io::Error::other);
    }
    let text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
    // JSON strings hold no raw line break: every one is serde_json's own.
    Ok(text.replace('\n', &format!("\n{}", "  ".repeat(levels))))
}

/// What the reading keeps of a record between the passes: a few bytes, no text but the
/// reference it supersedes (its id, seq and type are in [`State::index`], under its number).
#[derive(Debug)]
struct Record {
    copied: bool,
    declaration: bool,
    /// A message: whether it is an entry of the context view.
    message: Option<bool>,
    /// The reference it supersedes, a number in [`State::texts`].
    supersedes: Option<u32>,
    /// Where its line is: byte offset and length (for the second pass).
    offset: u64,
    len: u64,
}

#[derive(Debug)]
struct MessageFacts {
    context_view: bool,
    parts: Vec<PartReading>,
}

#[derive(Debug)]
struct DeliveryFacts {
    /// The message reference, a number in [`State::texts`].
    message: Option<u32>,
    /// Its status confirms a send (`sent`, `delivered`).
    confirms: bool,
}

/// The most refusals kept: one more line says how many were left out.
const MAX_REFUSALS: usize = 100;

#[derive(Debug)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent facts read from the stream"
)]
struct State {
    /// Keep each message's parts (one pass), or only what a second pass needs.
    keep_parts: bool,
    max_line: usize,
    accepted: bool,
    refusals: Vec<Refusal>,
    refused_more: usize,
    /// The byte offset of the next line.
    offset: u64,
    /// Some line was read.
    seen_any: bool,
    layout: Layout,
    /// The header's record number, when it has an id: it is the session, not a record.
    header: Option<u32>,
    own_session: Option<String>,
    /// What the header and the declarations say of every record.
    declared: Declared,
    root: bool,
    parents: bool,
    /// Every `inherits.localThroughId`: the declaring line and the reference.
    local_throughs: Vec<(usize, u32)>,
    named: BTreeSet<String>,
    /// The sessions of the other streams read with this one, as a set: not unresolved.
    present: BTreeSet<String>,
    /// Every record with an id, the header included, numbered as [`State::records`].
    index: RecordIndex,
    records: Vec<Record>,
    /// References kept for the end (supersedes, delivery targets).
    texts: Strings,
    /// Each message's parts, by record number (one pass only).
    parts: HashMap<u32, Vec<PartReading>>,
    deliveries: HashMap<u32, DeliveryFacts>,
}

/// What the reading says of every record, and of the session, once the stream is read.
struct Facts {
    session: SessionReading,
    superseded: Vec<bool>,
    /// What each record supersedes: the latest earlier record its `supersedes` names.
    previous: Vec<Option<u32>>,
    originality: Vec<Originality>,
    delivered: Vec<bool>,
}

impl Facts {
    /// A record's reading, its parts left out unless the scan kept them.
    fn record(&self, state: &State, n: u32) -> RecordReading {
        let index = n as usize;
        let context_view = state.records[index].message;
        RecordReading {
            kind: state.index.kind(n).map(str::to_owned),
            superseded: self.superseded[index],
            originality: self.originality[index],
            context_view,
            delivered: context_view.map(|_| self.delivered[index]),
            parts: state.parts.get(&n).cloned(),
        }
    }

    fn totals(&self, state: &State) -> Totals {
        Totals {
            own_records: state
                .listed()
                .filter(|&n| self.originality[n as usize] == Originality::Original)
                .map(|n| state.index.id(n).to_owned())
                .collect(),
            may_include_copies: state
                .listed()
                .any(|n| self.originality[n as usize] == Originality::Unknown),
        }
    }
}

impl State {
    fn new(keep_parts: bool, max_line: usize) -> Self {
        State {
            keep_parts,
            max_line,
            accepted: true,
            refusals: Vec::new(),
            refused_more: 0,
            offset: 0,
            seen_any: false,
            layout: Layout::default(),
            header: None,
            own_session: None,
            declared: Declared::default(),
            root: false,
            parents: false,
            local_throughs: Vec::new(),
            named: BTreeSet::new(),
            present: BTreeSet::new(),
            index: RecordIndex::default(),
            records: Vec::new(),
            texts: Strings::default(),
            parts: HashMap::new(),
            deliveries: HashMap::new(),
        }
    }

    /// Takes one line of the stream.
    fn take(&mut self, line: &Line<'_>) {
        self.seen_any = true;
        match line {
            Line::TooLong {
                number,
                len,
                newline,
            } => {
                self.refuse(
                    *number,
                    rule::ASR_X_006,
                    format!(
                        "the line is {len} bytes long, longer than {} (--max-line-bytes): it was not read",
                        self.max_line
                    ),
                );
                self.offset += len + u64::from(*newline);
            }
            Line::Text {
                number,
                bytes,
                newline,
            } => {
                let offset = self.offset;
                self.offset += bytes.len() as u64 + u64::from(*newline);
                self.line(bytes, *number, offset);
            }
        }
    }

    fn refuse(&mut self, line: usize, rule: RuleId, reason: String) {
        self.accepted = false;
        if self.refusals.len() < MAX_REFUSALS {
            self.refusals.push(Refusal { line, rule, reason });
            return;
        }
        self.refused_more += 1;
        let more = Refusal {
            line: 0,
            rule,
            reason: format!("and {} more lines refused", self.refused_more),
        };
        if self.refused_more == 1 {
            self.refusals.push(more);
        } else if let Some(last) = self.refusals.last_mut() {
            *last = more;
        }
    }

    fn line(&mut self, bytes: &[u8], number: usize, offset: u64) {
        let (bytes, offset) = match crate::lines::without_bom(number, bytes) {
            Some(rest) => (rest, offset + 3),
            None => (bytes, offset),
        };
        let parsed = match json::parse(bytes) {
            Ok(parsed) => parsed,
            Err(failure) => {
                let rule = match failure {
                    json::Failure::TooDeep { .. } => rule::ASR_X_006,
                    json::Failure::NumberOutOfRange { .. } => rule::ASR_X_005,
                    json::Failure::Syntax { .. } if std::str::from_utf8(bytes).is_err() => {
                        rule::ASR_X_001
                    }
                    json::Failure::Syntax { .. } if number == 1 => rule::ASR_X_007,
                    json::Failure::Syntax { .. } => rule::ASR_X_003,
                };
                self.refuse(number, rule, format!("the line is not JSON: {failure}"));
                return;
            }
        };
        let Value::Object(object) = &parsed.value else {
            let rule = if number == 1 {
                rule::ASR_X_007
            } else {
                rule::ASR_X_003
            };
            self.refuse(number, rule, "the line is not a JSON object".into());
            return;
        };
        let record = model::Record::new(object);
        let standing = self.layout.stand(number, record.kind);
        if standing
            == (Standing::Record {
                first_is_not_header: true,
            })
        {
            self.refuse(
                number,
                rule::ASR_X_007,
                "the first line is not the `session` header".into(),
            );
        }
        let is_header = standing == Standing::Header;
        if is_header {
            let header = record.header();
            self.own_session = header.own_session;
        }
        self.declared.take(standing, &record);
        if let Some(lineage) = record.declared_lineage(is_header) {
            self.lineage(&lineage, number);
        }
        for (_, session) in record.sessions(is_header) {
            self.named.extend(canonical_session(session));
        }
        self.record(&record, is_header, number, offset, bytes);
    }

    fn lineage(&mut self, lineage: &Lineage<'_>, line: usize) {
        self.root |= lineage.root;
        self.parents |= lineage.names_parent;
        if let Some(inherits) = lineage.inherits {
            if let Some(target) = inherits.local_through_id {
                let text = self.keep(target);
                self.local_throughs.push((line, text));
            }
        }
    }

    fn record(
        &mut self,
        record: &model::Record<'_>,
        is_header: bool,
        line: usize,
        offset: u64,
        bytes: &[u8],
    ) {
        let len = bytes.len() as u64;
        let number = match self.index.add(record, line) {
            Added::New(n) => n,
            Added::Full => {
                self.refuse(
                    0,
                    rule::ASR_X_006,
                    "more records than the reader can number".into(),
                );
                return;
            }
            Added::Repeated(_) | Added::NoId => return,
        };
        if is_header {
            self.header = Some(number);
        }
        if let Some(model::SeqNumber::Other(_)) = record.seq_number()
            && let Some(text) = seq_text(bytes)
        {
            self.index.set_exact_seq(number, &text);
        }
        let message = (record.kind == Some("message")).then(|| {
            let facts = message_facts(record.object, self.keep_parts);
            if self.keep_parts {
                self.parts.insert(number, facts.parts);
            }
            facts.context_view
        });
        if record.kind == Some("delivery") {
            let message = record.message.map(|m| self.keep(m));
            let confirms = matches!(record.str("status"), Some("sent" | "delivered"));
            self.deliveries
                .insert(number, DeliveryFacts { message, confirms });
        }
        let supersedes = record.supersedes.map(|t| self.keep(t));
        self.records.push(Record {
            copied: record.copied_from.is_some(),
            declaration: record.kind == Some("declaration"),
            message,
            supersedes,
            offset,
            len,
        });
    }

    /// The records of the reading: every record but the header, by number.
    fn listed(&self) -> impl Iterator<Item = u32> + '_ {
        (0..u32::try_from(self.records.len()).unwrap_or(u32::MAX))
            .filter(move |n| Some(*n) != self.header)
    }

    /// Keeps a reference for the end of the stream.
    fn keep(&mut self, text: &str) -> u32 {
        u32::try_from(self.texts.push(text.as_bytes())).unwrap_or(u32::MAX)
    }

    fn text(&self, n: u32) -> &str {
        self.texts.text(n as usize)
    }

    /// Every record's facts, and the session's.
    fn facts(&self) -> Facts {
        let mut superseded = vec![false; self.records.len()];
        let mut previous: Vec<Option<u32>> = vec![None; self.records.len()];
        for (n, record) in (0u32..).zip(&self.records) {
            if let Some(target) = record
                .supersedes
                .and_then(|t| self.index.resolve_before(self.text(t), Some(n)))
            {
                superseded[target as usize] = true;
                previous[n as usize] = Some(target);
            }
        }
        let originality = self.originality();
        let delivered = self.delivered(&superseded, &previous);
        let root = if self.parents {
            Tri::No
        } else if self.root {
            Tri::Yes
        } else {
            Tri::Unknown
        };
        let mut unresolved: Vec<String> = self.named.iter().cloned().collect();
        unresolved.retain(|s| Some(s) != self.own_session.as_ref() && !self.present.contains(s));
        Facts {
            session: SessionReading { root, unresolved },
            superseded,
            previous,
            originality,
            delivered,
        }
    }

    fn finish(self) -> ReadOutcome {
        let facts = self.facts();
        let records = self
            .listed()
            .map(|n| (self.index.id(n).to_owned(), facts.record(&self, n)))
            .collect();
        ReadOutcome {
            accepted: self.accepted && self.seen_any,
            reading: Reading {
                totals: facts.totals(&self),
                session: facts.session,
                records,
            },
        }
    }

    /// How the reader placed the stream.
    fn outline(&self) -> Outline {
        let facts = self.facts();
        let mut outline = Outline {
            header: self.layout.header_line(),
            ..Outline::default()
        };
        let count = u32::try_from(self.records.len()).unwrap_or(u32::MAX);
        outline.records = (0..count)
            .map(|n| {
                (
                    self.index.line(n),
                    self.index.id(n).to_owned(),
                    self.index.seq(n),
                )
            })
            .collect();
        let lines = |found: &[u32]| found.iter().map(|&n| self.index.line(n)).collect();
        for (n, record) in (0..count).zip(&self.records) {
            if record.supersedes.is_some() {
                let found: Vec<u32> = facts.previous[n as usize].into_iter().collect();
                outline
                    .references
                    .push((self.index.line(n), "/supersedes".into(), lines(&found)));
            }
            if let Some(message) = self.deliveries.get(&n).and_then(|d| d.message) {
                let found = self.index.resolve(self.text(message));
                outline
                    .references
                    .push((self.index.line(n), "/message".into(), lines(&found)));
            }
        }
        for &(line, target) in &self.local_throughs {
            let found: Vec<u32> = self.index.find(self.text(target)).into_iter().collect();
            outline.references.push((
                line,
                "/lineage/inherits/localThroughId".into(),
                lines(&found),
            ));
        }
        outline.sessions = facts.session.unresolved.into_iter().collect();
        outline.records.sort();
        outline.references.sort();
        outline
    }

    fn originality(&self) -> Vec<Originality> {
        // The seq of the last record of the declared prefix (`None` inside: it has none). A
        // seq is compared as the number it is, even out of the range a seq may have.
        let prefix_end = self
            .declared
            .prefix_end()
            .and_then(|id| self.index.find(id))
            .map(|n| self.index.seq_number(n));
        (0u32..)
            .zip(&self.records)
            .map(|(n, record)| {
                let in_prefix = !record.declaration
                    && Some(n) != self.header
                    && prefix_end.as_ref().is_some_and(|end| {
                        match (self.index.seq_number(n), end) {
                            (Some(seq), Some(end)) => seq.at_or_below(end),
                            _ => false,
                        }
                    });
                self.declared
                    .originality(record.copied, in_prefix, prefix_end.is_some())
            })
            .collect()
    }

    fn delivered(&self, superseded: &[bool], previous: &[Option<u32>]) -> Vec<bool> {
        let mut delivered = vec![false; self.records.len()];
        let mut confirming: Vec<u32> = self
            .deliveries
            .iter()
            .filter(|(n, d)| d.confirms && !superseded[**n as usize])
            .map(|(n, _)| *n)
            .collect();
        confirming.sort_unstable();
        for index in confirming {
            // The latest revision confirms; the message it is for may be named earlier in the chain.
            let mut at = Some(index);
            let mut target = None;
            let mut steps = 0;
            while let (Some(i), None) = (at, &target) {
                target = self.deliveries.get(&i).and_then(|d| d.message);
                at = previous[i as usize];
                steps += 1;
                if steps > self.records.len() {
                    break;
                }
            }
            if let Some(target) = target {
                for message in self.index.resolve(self.text(target)) {
                    if self.records[message as usize].message.is_some() {
                        delivered[message as usize] = true;
                    }
                }
            }
        }
        delivered
    }
}

/// The text of a line's `seq` number, as written: a seq beyond `u64` is compared as the
/// number it spells, which the double it parses to is not. `None` when the line has no one
/// `seq` member (a duplicated name keeps the value the parser kept).
fn seq_text(line: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Seq<'a> {
        #[serde(borrow)]
        seq: Option<&'a serde_json::value::RawValue>,
    }
    let found: Seq<'_> = serde_json::from_slice(line).ok()?;
    Some(found.seq?.get().to_owned())
}

fn message_facts(record: &Map<String, Value>, with_parts: bool) -> MessageFacts {
    let own = |key: &str| record.get(key).and_then(Value::as_str);
    let context_view = own("audience") != Some("user") && own("status") != Some("withdrawn");
    let parts = match record.get("content") {
        Some(Value::Array(_)) if with_parts => model::parts(record).map(part_reading).collect(),
        _ => Vec::new(),
    };
    MessageFacts {
        context_view,
        parts,
    }
}

/// A part as read: its effective author, origin and phase are the model's, read as strings
/// (decision `member-types`: a member of another type reads as absent).
fn part_reading(part: model::Part<'_>) -> PartReading {
    let effective = |key: &str| part.text(key).map(str::to_owned);
    let kind = part.kind();
    let object = part.object;
    let get = |key: &str| object.and_then(|o| o.get(key));
    let text = |key: &str| get(key).and_then(Value::as_str).map(str::to_owned);
    let (render, index): (Render, Vec<String>) = match kind {
        Some("text") => (Render::Text, text("text").into_iter().collect()),
        Some("reasoning") => match get("visibility").and_then(Value::as_str) {
            Some("full") => (Render::ReasoningFull, text("text").into_iter().collect()),
            None => (Render::ReasoningHidden, text("text").into_iter().collect()),
            Some("summary") => (
                Render::ReasoningSummary,
                get("summary")
                    .and_then(Value::as_array)
                    .map(|s| {
                        s.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            Some(_) => (Render::ReasoningHidden, Vec::new()),
        },
        Some("refusal") => (Render::Refusal, text("text").into_iter().collect()),
        Some("image" | "audio") => (Render::Media, Vec::new()),
        Some("resource_link") => (Render::Resource, Vec::new()),
        Some("resource") => (
            Render::Resource,
            get("resource")
                .and_then(|r| r.get("text"))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .into_iter()
                .collect(),
        ),
        Some("data") => (Render::Data, Vec::new()),
        Some("opaque") => (Render::Opaque, Vec::new()),
        _ => (Render::Skipped, Vec::new()),
    };
    PartReading {
        kind: kind.map(str::to_owned),
        author: effective("author"),
        origin: effective("origin"),
        phase: effective("phase"),
        render,
        index,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(lines: &[&str]) -> ReadOutcome {
        read_bytes(format!("{}\n", lines.join("\n")).as_bytes())
    }

    const HEADER: &str =
        r#"{"type":"session","seq":0,"id":"h","agent":{"name":"codex"},"sessionId":"s1"}"#;

    #[test]
    fn no_lineage_reads_unknown_and_credits_nothing() {
        let outcome = read(&[
            HEADER,
            r#"{"type":"message","seq":1,"id":"r1","messageId":"m","role":"user","content":[{"type":"text","text":"hi"}]}"#,
        ]);
        assert!(outcome.accepted);
        assert_eq!(outcome.reading.session.root, Tri::Unknown);
        assert_eq!(
            outcome.reading.records["r1"].originality,
            Originality::Unknown
        );
        assert!(outcome.reading.totals.own_records.is_empty());
        assert!(outcome.reading.totals.may_include_copies);
    }

    #[test]
    fn a_copied_prefix_and_copies_read_as_copies_and_the_rest_as_original() {
        let header = r#"{"type":"session","seq":0,"id":"h","agent":{"name":"codex"},"sessionId":"s1","lineage":{"forkedFrom":{"session":"codex:p","evidence":"native_field"},"inherits":{"mode":"copied","from":"codex:p","localThroughId":"r2","evidence":"native_field"}}}"#;
        let outcome = read(&[
            header,
            r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[]}"#,
            r#"{"type":"message","seq":2,"id":"r2","messageId":"m2","role":"assistant","content":[]}"#,
            r#"{"type":"message","seq":3,"id":"r3","messageId":"m3","role":"user","content":[]}"#,
            r#"{"type":"message","seq":4,"id":"r4","messageId":"m4","role":"user","content":[],"copiedFrom":{"record":"r3","proof":"native_field"}}"#,
        ]);
        let o = |id: &str| outcome.reading.records[id].originality;
        assert_eq!(
            [o("r1"), o("r2"), o("r3"), o("r4")],
            [
                Originality::Copy,
                Originality::Copy,
                Originality::Original,
                Originality::Copy
            ]
        );
        assert_eq!(outcome.reading.totals.own_records, ["r3"]);
        assert!(!outcome.reading.totals.may_include_copies);
        assert_eq!(outcome.reading.session.root, Tri::No);
        assert_eq!(outcome.reading.session.unresolved, ["codex:p"]);
    }

    #[test]
    fn only_the_latest_revision_of_a_delivery_confirms_it() {
        let lines = [
            r#"{"type":"session","seq":0,"id":"h","agent":{"name":"openclaw"},"sessionId":"s","conversations":["c1"]}"#,
            r#"{"type":"message","seq":1,"id":"r1","messageId":"a","role":"assistant","content":[{"type":"text","text":"one"}]}"#,
            r#"{"type":"message","seq":2,"id":"r2","messageId":"b","role":"assistant","content":[{"type":"text","text":"two"}]}"#,
            r#"{"type":"delivery","seq":3,"id":"d1","message":"r1","status":"sent"}"#,
            r#"{"type":"delivery","seq":4,"id":"d2","supersedes":"d1","status":"failed"}"#,
            r#"{"type":"delivery","seq":5,"id":"d3","message":"messageId=b","status":"queued"}"#,
            r#"{"type":"delivery","seq":6,"id":"d4","supersedes":"d3","status":"delivered"}"#,
        ];
        let outcome = read(&lines);
        assert_eq!(outcome.reading.records["r1"].delivered, Some(false));
        assert_eq!(outcome.reading.records["r2"].delivered, Some(true));
        assert!(outcome.reading.records["d1"].superseded);
        assert_eq!(outcome.reading.records["d1"].delivered, None);
    }

    #[test]
    fn parts_render_by_type_and_visibility_and_index_only_what_may_be_searched() {
        let message = r#"{"type":"message","seq":1,"id":"r1","messageId":"m","role":"assistant","author":"model","phase":"final","content":[
            {"type":"reasoning","visibility":"summary","summary":["s1","s2"],"text":"","signature":"SIG"},
            {"type":"reasoning","visibility":"encrypted","opaque":{"format":"x","data":"AAA"}},
            {"type":"reasoning","text":"raw thought","signature":"SIG2"},
            {"type":"text","text":"answer","author":"harness","phase":"commentary"},
            {"type":"x-card","text":"not indexed","_meta":{"k":1}},
            {"type":"resource","resource":{"uri":"file:///a","text":"embedded"}},
            {"type":"resource_link","uri":"file:///b","name":"b"},
            {"type":"data","data":{"x":1}},
            {"type":"opaque","format":"f","data":"zz"}]}"#
            .replace('\n', "");
        let outcome = read(&[HEADER, &message]);
        let parts = outcome.reading.records["r1"].parts.clone().expect("parts");
        let renders: Vec<Render> = parts.iter().map(|p| p.render).collect();
        assert_eq!(
            renders,
            [
                Render::ReasoningSummary,
                Render::ReasoningHidden,
                Render::ReasoningHidden,
                Render::Text,
                Render::Skipped,
                Render::Resource,
                Render::Resource,
                Render::Data,
                Render::Opaque
            ]
        );
        let index: Vec<Vec<String>> = parts.iter().map(|p| p.index.clone()).collect();
        assert_eq!(index[0], ["s1", "s2"]);
        assert!(index[1].is_empty());
        assert_eq!(index[2], ["raw thought"]);
        assert_eq!(index[3], ["answer"]);
        assert!(
            index[4].is_empty()
                && index[6].is_empty()
                && index[7].is_empty()
                && index[8].is_empty()
        );
        assert_eq!(index[5], ["embedded"]);
        assert!(!index.concat().iter().any(|s| s.contains("SIG")));
        assert_eq!(
            (parts[3].author.as_deref(), parts[3].phase.as_deref()),
            (Some("harness"), Some("commentary"))
        );
        assert_eq!(
            (parts[0].author.as_deref(), parts[0].origin.as_deref()),
            (Some("model"), None)
        );
    }

    #[test]
    fn a_mirror_reads_unknown_but_for_its_copies_and_notices_leave_the_context_view() {
        let header = r#"{"type":"session","seq":0,"id":"h","agent":{"name":"openclaw"},"sessionId":"s","authority":"mirror","lineage":{"executedBy":[{"session":"codex:b","evidence":"native_field"}],"inherits":{"mode":"none","evidence":"native_structure"}}}"#;
        let outcome = read(&[
            header,
            r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","audience":"user","content":[]}"#,
            r#"{"type":"message","seq":2,"id":"r2","messageId":"m2","role":"user","status":"withdrawn","content":[],"copiedFrom":{"session":"codex:b","record":"x","proof":"native_id"}}"#,
        ]);
        assert_eq!(
            outcome.reading.records["r1"].originality,
            Originality::Unknown
        );
        assert_eq!(outcome.reading.records["r2"].originality, Originality::Copy);
        assert_eq!(outcome.reading.records["r1"].context_view, Some(false));
        assert_eq!(outcome.reading.records["r2"].context_view, Some(false));
        assert_eq!(outcome.reading.session.root, Tri::Unknown);
    }

    #[test]
    fn a_copied_stream_reads_as_the_stream_and_its_long_lines_are_holes() {
        let long = format!("\"{}\"", "x".repeat(300));
        let stream = format!(
            "{HEADER}\n{long}\n{}\n",
            r#"{"type":"message","seq":1,"id":"r1","messageId":"m","role":"user","content":[{"type":"text","text":"hi"}]}"#
        );
        let write = |scanned: Scan, copy: &[u8]| {
            let mut out = Vec::new();
            scanned
                .write_reading(io::Cursor::new(copy), &mut out, false, 0)
                .expect("in memory");
            out
        };
        let mut copy = io::Cursor::new(Vec::new());
        let copied = scan_copying(stream.as_bytes(), 200, 1 << 20, &mut copy).expect("copied");
        let copy = copy.into_inner();
        // The long line's place holds nothing of it, and the rest is where it was.
        assert_eq!(copy.len(), stream.len());
        let at = HEADER.len() + 1;
        let after = at + long.len() + 1;
        assert!(copy[at..after].iter().all(|b| *b == 0));
        assert_eq!(copy[after..], stream.as_bytes()[after..]);
        assert_eq!(
            copied.refusals(),
            scan(stream.as_bytes(), 200).expect("scan").refusals()
        );
        let reading = write(copied, &copy);
        let direct = write(
            scan(stream.as_bytes(), 200).expect("scan"),
            stream.as_bytes(),
        );
        assert_eq!(reading, direct);
        let max = (at + long.len() + 10) as u64;
        let over = scan_copying(
            stream.as_bytes(),
            200,
            max,
            &mut io::Cursor::new(Vec::new()),
        )
        .err();
        assert!(
            matches!(over, Some(CopyError::TooLong { line: 3, .. })),
            "{over:?}"
        );
    }

    #[test]
    fn an_unreadable_stream_is_rejected_but_read_as_far_as_it_goes() {
        let outcome = read(&[r#"{"type":"message","seq":1,"id":"r1"}"#]);
        assert!(!outcome.accepted);
        let outcome = read(&[
            HEADER,
            "not json",
            r#"{"type":"message","seq":2,"id":"r2","content":[]}"#,
        ]);
        assert!(!outcome.accepted);
        assert!(outcome.reading.records.contains_key("r2"));
    }
}
