//! The reference reader: how the spec says a stream is to be understood, as a reading
//! (PROTOCOL.md, "Readers and the reading"; `schemas/reading.schema.json`).

use crate::json;
use crate::lines::{Line, LineReader};
use crate::refs::{Ref, own_session_ref, parse_ref, parse_session_ref};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{self, BufReader, Read, Seek, Write};

/// How a reader understood a stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
pub struct SessionReading {
    /// `yes`, `no` or `unknown` (ASR-401, -402).
    pub root: Tri,
    /// Sessions named but not this one (ASR-406), sorted.
    pub unresolved: Vec<String>,
}

/// Yes, no or unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tri {
    /// Positively so.
    Yes,
    /// Positively not.
    No,
    /// Not known.
    Unknown,
}

/// Whether a record is the session's own work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Originality {
    /// The session's own.
    Original,
    /// A copy of a record of this or another session.
    Copy,
    /// Not known: never credited to the session.
    Unknown,
}

/// One record as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
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
pub struct Totals {
    /// Records whose originality is original, in stream order.
    pub own_records: Vec<String>,
    /// Some record's originality is unknown.
    pub may_include_copies: bool,
}

/// A reading and whether the reader accepted the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOutcome {
    /// The reader could read it: a header first, every line a JSON object.
    pub accepted: bool,
    /// How it was understood.
    pub reading: Reading,
}

/// Reads a stream from a reader; lines longer than `max_line` bytes are not read.
pub fn read_stream<R: Read>(input: R, max_line: usize) -> io::Result<ReadOutcome> {
    let mut lines = LineReader::new(BufReader::with_capacity(256 << 10, input), max_line);
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

/// Why a reader did not accept a stream: the line and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// 1-based line (0 for the stream as a whole).
    pub line: usize,
    /// Why, in words.
    pub reason: String,
}

/// The first of two passes over a stream in a file: what the reading needs of every record
/// (its place, its links, its facts), without its text. Memory grows with the number of
/// records, by a small constant, and with the longest line read, never with the text of the
/// stream; [`Scan::write_reading`] reads each record's line again for its parts.
pub struct Scan {
    state: State,
}

/// Scans a stream in a seekable file (from its start); lines longer than `max_line` bytes
/// are not read, and refuse the stream.
pub fn scan<R: Read>(input: R, max_line: usize) -> io::Result<Scan> {
    let mut lines = LineReader::new(BufReader::with_capacity(256 << 10, input), max_line);
    let mut state = State::new(false, max_line);
    while let Some(line) = lines.next_line()? {
        state.take(&line);
    }
    Ok(Scan { state })
}

impl Scan {
    /// Whether the reader accepts the stream.
    pub fn accepted(&self) -> bool {
        self.state.accepted && self.state.header_seen
    }

    /// Why it does not, line by line (empty when it does).
    pub fn refusals(&self) -> Vec<Refusal> {
        let mut refusals = self.state.refusals.clone();
        if !self.state.header_seen && refusals.is_empty() {
            refusals.push(Refusal {
                line: 0,
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
        let facts = self.state.facts();
        let state = self.state;
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
        let mut order: Vec<(&str, usize)> = state
            .records
            .iter()
            .enumerate()
            .map(|(i, r)| (r.id.as_str(), i))
            .collect();
        order.sort_unstable();
        let mut line = Vec::new();
        for (n, (id, index)) in order.iter().enumerate() {
            let record = &state.records[*index];
            let mut reading = facts.record(&state, *index);
            if record.message.is_some() {
                line.resize(usize::try_from(record.len).unwrap_or(usize::MAX), 0);
                file.seek(io::SeekFrom::Start(record.offset))?;
                file.read_exact(&mut line)?;
                let Ok(parsed) = json::parse(&line) else {
                    return Err(io::Error::other(format!(
                        "line {} changed while the stream was read: it is no longer JSON",
                        record.line
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

const NATIVE_KEYS: &[&str] = &["messageId", "callId", "planId", "turnId", "inferenceId"];
const PARENT_FACETS: &[&str] = &["spawnedBy", "forkedFrom", "continues", "relatedUnknown"];

#[derive(Debug)]
struct Record {
    id: String,
    seq: Option<u64>,
    kind: Option<String>,
    copied: bool,
    declaration: bool,
    supersedes: Option<String>,
    message: Option<MessageFacts>,
    delivery: Option<DeliveryFacts>,
    /// Where its line is: 1-based number, byte offset and length (for a second pass).
    line: usize,
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
    message: Option<String>,
    status: Option<String>,
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
    header_seen: bool,
    own_session: Option<String>,
    mirror: bool,
    root: bool,
    parents: bool,
    inherits_mode: Option<String>,
    local_through: Option<String>,
    named: BTreeSet<String>,
    records: Vec<Record>,
    by_id: HashMap<String, usize>,
    native: HashMap<String, Vec<usize>>,
}

/// What the reading says of every record, and of the session, once the stream is read.
struct Facts {
    session: SessionReading,
    superseded: Vec<bool>,
    originality: Vec<Originality>,
    delivered: Vec<bool>,
}

impl Facts {
    /// A record's reading, its parts left out unless the scan kept them.
    fn record(&self, state: &State, index: usize) -> RecordReading {
        let record = &state.records[index];
        let context_view = record.message.as_ref().map(|m| m.context_view);
        RecordReading {
            kind: record.kind.clone(),
            superseded: self.superseded[index],
            originality: self.originality[index],
            context_view,
            delivered: context_view.map(|_| self.delivered[index]),
            parts: record
                .message
                .as_ref()
                .filter(|_| state.keep_parts)
                .map(|m| m.parts.clone()),
        }
    }

    fn totals(&self, state: &State) -> Totals {
        Totals {
            own_records: state
                .records
                .iter()
                .zip(&self.originality)
                .filter(|(_, o)| **o == Originality::Original)
                .map(|(r, _)| r.id.clone())
                .collect(),
            may_include_copies: self.originality.contains(&Originality::Unknown),
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
            header_seen: false,
            own_session: None,
            mirror: false,
            root: false,
            parents: false,
            inherits_mode: None,
            local_through: None,
            named: BTreeSet::new(),
            records: Vec::new(),
            by_id: HashMap::new(),
            native: HashMap::new(),
        }
    }

    /// Takes one line of the stream.
    fn take(&mut self, line: &Line<'_>) {
        match line {
            Line::TooLong {
                number,
                len,
                newline,
            } => {
                self.refuse(
                    *number,
                    format!(
                        "the line is {len} bytes long, longer than {} (--max-line-bytes): it was not read",
                        self.max_line
                    ),
                );
                self.header_seen = true;
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

    fn refuse(&mut self, line: usize, reason: String) {
        self.accepted = false;
        if self.refusals.len() < MAX_REFUSALS {
            self.refusals.push(Refusal { line, reason });
            return;
        }
        self.refused_more += 1;
        let more = Refusal {
            line: 0,
            reason: format!("and {} more lines refused", self.refused_more),
        };
        if self.refused_more == 1 {
            self.refusals.push(more);
        } else if let Some(last) = self.refusals.last_mut() {
            *last = more;
        }
    }

    fn line(&mut self, bytes: &[u8], number: usize, offset: u64) {
        let parsed = match json::parse(bytes) {
            Ok(parsed) => parsed,
            Err(failure) => {
                self.refuse(number, format!("the line is not JSON: {failure}"));
                self.header_seen = true;
                return;
            }
        };
        let Value::Object(record) = parsed.value else {
            self.refuse(number, "the line is not a JSON object".into());
            self.header_seen = true;
            return;
        };
        let kind = record.get("type").and_then(Value::as_str);
        if !self.header_seen {
            self.header_seen = true;
            if kind == Some("session") {
                self.header(&record);
                return;
            }
            self.refuse(number, "the first line is not the `session` header".into());
        }
        if kind == Some("session") {
            return;
        }
        self.record(&record, number, offset, bytes.len() as u64);
    }

    fn header(&mut self, header: &Map<String, Value>) {
        let agent = header
            .get("agent")
            .and_then(|a| a.get("name"))
            .and_then(Value::as_str);
        let namespace = header.get("namespace").and_then(Value::as_str);
        if let (Some(agent), Some(id)) = (agent, header.get("sessionId").and_then(Value::as_str)) {
            self.own_session = parse_session_ref(&own_session_ref(agent, namespace, id))
                .ok()
                .map(|r| r.canonical());
        }
        self.mirror = header.get("authority").and_then(Value::as_str) == Some("mirror");
        if let Some(Value::Object(lineage)) = header.get("lineage") {
            self.lineage(lineage);
        }
    }

    fn lineage(&mut self, lineage: &Map<String, Value>) {
        self.root |= lineage.get("root") == Some(&Value::Bool(true));
        for facet in PARENT_FACETS {
            if let Some(f) = lineage.get(*facet) {
                self.parents = true;
                self.name(f.get("session"));
            }
        }
        if let Some(Value::Object(inherits)) = lineage.get("inherits") {
            let mode = inherits.get("mode").and_then(Value::as_str);
            if matches!(mode, Some("copied" | "referenced" | "rendered")) {
                self.parents = true;
            }
            self.inherits_mode = mode.map(str::to_owned);
            self.local_through = inherits
                .get("localThroughId")
                .and_then(Value::as_str)
                .map(str::to_owned);
            self.name(inherits.get("from"));
        }
        if let Some(Value::Array(entries)) = lineage.get("executedBy") {
            for entry in entries {
                self.name(entry.get("session"));
            }
        }
    }

    fn name(&mut self, session: Option<&Value>) {
        if let Some(session) = session
            .and_then(Value::as_str)
            .and_then(|s| parse_session_ref(s).ok())
        {
            self.named.insert(session.canonical());
        }
    }

    fn record(&mut self, record: &Map<String, Value>, line: usize, offset: u64, len: u64) {
        let Some(id) = record.get("id").and_then(Value::as_str) else {
            return;
        };
        if self.by_id.contains_key(id) {
            return;
        }
        let kind = record.get("type").and_then(Value::as_str);
        let declaration = kind == Some("declaration");
        if declaration {
            if let Some(Value::Object(lineage)) = record.get("lineage") {
                self.lineage(lineage);
            }
        }
        if let Some(Value::Object(copied)) = record.get("copiedFrom") {
            self.name(copied.get("session"));
        }
        if kind == Some("subagent") {
            self.name(record.get("childSession"));
        }
        let message = (kind == Some("message")).then(|| {
            if let Some(Value::Array(entries)) = record.get("derivedFrom") {
                for entry in entries
                    .iter()
                    .filter(|e| e.as_str().is_some_and(|s| s.contains('#')))
                {
                    self.name(Some(entry));
                }
            }
            message_facts(record, self.keep_parts)
        });
        let delivery = (kind == Some("delivery")).then(|| DeliveryFacts {
            message: record
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned),
            status: record
                .get("status")
                .and_then(Value::as_str)
                .map(str::to_owned),
        });
        let index = self.records.len();
        for key in NATIVE_KEYS {
            if let Some(value) = record.get(*key).and_then(Value::as_str) {
                self.native
                    .entry(format!("{key}={value}"))
                    .or_default()
                    .push(index);
            }
        }
        self.by_id.insert(id.to_owned(), index);
        self.records.push(Record {
            id: id.to_owned(),
            seq: record.get("seq").and_then(Value::as_u64),
            kind: kind.map(str::to_owned),
            copied: record.get("copiedFrom").is_some_and(Value::is_object),
            declaration,
            supersedes: record
                .get("supersedes")
                .and_then(Value::as_str)
                .map(str::to_owned),
            message,
            delivery,
            line,
            offset,
            len,
        });
    }

    /// The records a reference names: a native id through its key, else a record id.
    fn resolve(&self, reference: &str) -> Vec<usize> {
        if let Some(Ref::Native { key, .. }) = parse_ref(reference) {
            if NATIVE_KEYS.contains(&key) {
                return self.native.get(reference).cloned().unwrap_or_default();
            }
        }
        self.by_id
            .get(reference)
            .map(|i| vec![*i])
            .unwrap_or_default()
    }

    /// Every record's facts, and the session's.
    fn facts(&self) -> Facts {
        let mut superseded = vec![false; self.records.len()];
        let mut previous: Vec<Option<usize>> = vec![None; self.records.len()];
        for (index, record) in self.records.iter().enumerate() {
            if let Some(target) = record
                .supersedes
                .as_deref()
                .and_then(|t| self.resolve(t).into_iter().rfind(|i| *i < index))
            {
                superseded[target] = true;
                previous[index] = Some(target);
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
        unresolved.retain(|s| Some(s) != self.own_session.as_ref());
        Facts {
            session: SessionReading { root, unresolved },
            superseded,
            originality,
            delivered,
        }
    }

    fn finish(self) -> ReadOutcome {
        let facts = self.facts();
        let records = (0..self.records.len())
            .map(|index| (self.records[index].id.clone(), facts.record(&self, index)))
            .collect();
        ReadOutcome {
            accepted: self.accepted && self.header_seen,
            reading: Reading {
                totals: facts.totals(&self),
                session: facts.session,
                records,
            },
        }
    }

    fn originality(&self) -> Vec<Originality> {
        let prefix_end = (self.inherits_mode.as_deref() == Some("copied"))
            .then(|| {
                self.local_through
                    .as_deref()
                    .and_then(|id| self.by_id.get(id))
            })
            .flatten()
            .map(|&i| self.records[i].seq);
        let default = match (self.inherits_mode.as_deref(), prefix_end) {
            (Some("none" | "referenced" | "rendered"), _) | (Some("copied"), Some(_)) => {
                Originality::Original
            }
            _ => Originality::Unknown,
        };
        self.records
            .iter()
            .map(|record| {
                if record.copied {
                    Originality::Copy
                } else if self.mirror {
                    Originality::Unknown
                } else if !record.declaration
                    && prefix_end.is_some_and(|end| match (record.seq, end) {
                        (Some(seq), Some(end)) => seq <= end,
                        _ => false,
                    })
                {
                    Originality::Copy
                } else {
                    default
                }
            })
            .collect()
    }

    fn delivered(&self, superseded: &[bool], previous: &[Option<usize>]) -> Vec<bool> {
        let mut delivered = vec![false; self.records.len()];
        for (index, record) in self.records.iter().enumerate() {
            let Some(delivery) = &record.delivery else {
                continue;
            };
            if superseded[index]
                || !matches!(delivery.status.as_deref(), Some("sent" | "delivered"))
            {
                continue;
            }
            // The latest revision confirms; the message it is for may be named earlier in the chain.
            let mut at = Some(index);
            let mut target = None;
            let mut steps = 0;
            while let (Some(i), None) = (at, &target) {
                target = self.records[i]
                    .delivery
                    .as_ref()
                    .and_then(|d| d.message.clone());
                at = previous[i];
                steps += 1;
                if steps > self.records.len() {
                    break;
                }
            }
            if let Some(target) = target {
                for message in self.resolve(&target) {
                    if self.records[message].message.is_some() {
                        delivered[message] = true;
                    }
                }
            }
        }
        delivered
    }
}

fn message_facts(record: &Map<String, Value>, with_parts: bool) -> MessageFacts {
    let own = |key: &str| record.get(key).and_then(Value::as_str);
    let context_view = own("audience") != Some("user") && own("status") != Some("withdrawn");
    let parts = match record.get("content") {
        Some(Value::Array(parts)) if with_parts => parts
            .iter()
            .map(|part| part_reading(part, record))
            .collect(),
        _ => Vec::new(),
    };
    MessageFacts {
        context_view,
        parts,
    }
}

fn part_reading(part: &Value, message: &Map<String, Value>) -> PartReading {
    let effective = |key: &str| {
        part.get(key)
            .and_then(Value::as_str)
            .or_else(|| message.get(key).and_then(Value::as_str))
            .map(str::to_owned)
    };
    let kind = part.get("type").and_then(Value::as_str);
    let text = |key: &str| part.get(key).and_then(Value::as_str).map(str::to_owned);
    let (render, index): (Render, Vec<String>) = match kind {
        Some("text") => (Render::Text, text("text").into_iter().collect()),
        Some("reasoning") => match part.get("visibility").and_then(Value::as_str) {
            Some("full") => (Render::ReasoningFull, text("text").into_iter().collect()),
            None => (Render::ReasoningHidden, text("text").into_iter().collect()),
            Some("summary") => (
                Render::ReasoningSummary,
                part.get("summary")
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
            part.get("resource")
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
