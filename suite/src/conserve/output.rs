//! A producer's output as the properties read it: its streams parsed, each matched to the
//! source session it is of, and every string it holds indexed by value.

use crate::facts::{Facts, Item, ItemKind};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The output streams, parsed.
pub(super) struct Output<'a> {
    pub streams: Vec<Stream<'a>>,
    /// Every string value of every record, by value: where it is.
    strings: HashMap<&'a str, Vec<Place>>,
}

/// One output stream.
pub(super) struct Stream<'a> {
    pub name: &'a str,
    /// The header, when the first record is one.
    pub header: Option<&'a Map<String, Value>>,
    /// Every record that is a JSON object, header included, with its line.
    pub records: Vec<(usize, &'a Map<String, Value>)>,
    /// The source session it is of, an index into [`Facts::sessions`].
    pub session: Option<usize>,
}

/// Where a string is in the output.
#[derive(Debug, Clone)]
pub(super) struct Place {
    pub stream: usize,
    pub record: usize,
    /// The JSON Pointer of the string in its record.
    pub pointer: String,
}

/// The parsed lines of the output: kept apart so that [`Output`] can borrow them.
pub(super) fn parse(outputs: &[(&str, &[u8])]) -> Vec<Vec<(usize, Map<String, Value>)>> {
    outputs
        .iter()
        .map(|(_, bytes)| {
            let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
            crate::lines::split(bytes)
                .filter_map(|(n, line)| match serde_json::from_slice::<Value>(line) {
                    Ok(Value::Object(object)) => Some((n, object)),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

impl<'a> Output<'a> {
    pub fn new(
        facts: &Facts,
        outputs: &[(&'a str, &'a [u8])],
        parsed: &'a [Vec<(usize, Map<String, Value>)>],
    ) -> Self {
        let streams: Vec<Stream<'a>> = outputs
            .iter()
            .zip(parsed)
            .map(|((name, _), lines)| {
                let records: Vec<(usize, &Map<String, Value>)> =
                    lines.iter().map(|(n, object)| (*n, object)).collect();
                let header = records
                    .first()
                    .map(|(_, r)| *r)
                    .filter(|r| r.get("type").and_then(Value::as_str) == Some("session"));
                Stream {
                    name,
                    header,
                    records,
                    session: None,
                }
            })
            .collect();
        let mut strings: HashMap<&'a str, Vec<Place>> = HashMap::new();
        for (s, stream) in streams.iter().enumerate() {
            for (r, (_, record)) in stream.records.iter().enumerate() {
                for (key, value) in *record {
                    index(value, &format!("/{key}"), &mut |pointer, text| {
                        strings.entry(text).or_default().push(Place {
                            stream: s,
                            record: r,
                            pointer: pointer.to_owned(),
                        });
                    });
                }
            }
        }
        let mut output = Output { streams, strings };
        output.assign(facts);
        output
    }

    /// Where `text` is, as one string value.
    pub fn find(&self, text: &str) -> &[Place] {
        self.strings.get(text).map_or(&[], Vec::as_slice)
    }

    /// Where `text` is as consecutive texts of one array's parts (split parts, deltas):
    /// the places of the first part of each such run.
    pub fn find_joined(&self, text: &str) -> Vec<Place> {
        let mut found = Vec::new();
        for (s, stream) in self.streams.iter().enumerate() {
            for (r, (_, record)) in stream.records.iter().enumerate() {
                for key in ["content", "displayContent", "output"] {
                    let Some(Value::Array(parts)) = record.get(key) else {
                        continue;
                    };
                    let texts: Vec<Option<&str>> = parts
                        .iter()
                        .map(|p| p.get("text").and_then(Value::as_str))
                        .collect();
                    for start in 0..texts.len() {
                        let mut joined = String::new();
                        for t in &texts[start..] {
                            let Some(t) = t else { break };
                            joined.push_str(t);
                            if joined.len() >= text.len() || !text.starts_with(&joined) {
                                break;
                            }
                        }
                        if joined == text {
                            found.push(Place {
                                stream: s,
                                record: r,
                                pointer: format!("/{key}/{start}/text"),
                            });
                        }
                    }
                }
            }
        }
        found
    }

    /// Every string of the output, with its place.
    pub fn strings(&self) -> impl Iterator<Item = (&'a str, &Place)> {
        self.strings
            .iter()
            .flat_map(|(text, places)| places.iter().map(move |p| (*text, p)))
    }

    /// The record at `place`.
    pub fn record(&self, place: &Place) -> &'a Map<String, Value> {
        self.streams[place.stream].records[place.record].1
    }

    /// The `producer.lossy` entries of the streams of `session` (of every stream when no
    /// stream is of it).
    pub fn lossy(&self, session: usize) -> Vec<&'a str> {
        let of: Vec<&Stream<'a>> = self
            .streams
            .iter()
            .filter(|s| s.session == Some(session))
            .collect();
        let streams: Vec<&Stream<'a>> = if of.is_empty() {
            self.streams.iter().collect()
        } else {
            of
        };
        streams
            .iter()
            .filter_map(|s| s.header)
            .filter_map(|h| h.get("producer")?.get("lossy")?.as_array())
            .flatten()
            .filter_map(Value::as_str)
            .collect()
    }

    /// Matches each stream to the source session it is of: by its header's `sessionId`
    /// (the session's id or an alias), else, for a session no stream names, by which
    /// session's texts it holds most of.
    fn assign(&mut self, facts: &Facts) {
        for stream in &mut self.streams {
            let id = stream
                .header
                .and_then(|h| h.get("sessionId"))
                .and_then(Value::as_str);
            stream.session = id.and_then(|id| {
                facts
                    .sessions
                    .iter()
                    .position(|s| s.id == id || s.aliases.iter().any(|a| a == id))
            });
        }
        for n in 0..self.streams.len() {
            if self.streams[n].session.is_some() {
                continue;
            }
            let mut votes = vec![0usize; facts.sessions.len()];
            for item in &facts.items {
                if self.streams.iter().any(|s| s.session == Some(item.session)) {
                    continue;
                }
                let held = item
                    .texts
                    .iter()
                    .filter(|t| self.find(&t.text).iter().any(|p| p.stream == n))
                    .count();
                if let Some(v) = votes.get_mut(item.session) {
                    *v += held;
                }
            }
            let best = votes
                .iter()
                .enumerate()
                .filter(|(_, v)| **v > 0)
                .max_by_key(|(_, v)| **v)
                .map(|(s, _)| s);
            self.streams[n].session = best;
        }
    }
}

/// The effective value of `member` (`author`, `origin`, `phase`) of the part at `pointer`
/// (`/content/N/...`) of `record`, when it is a string: the part's own, else the record's
/// (ASR-224, as [`crate::model`] says).
pub(super) fn effective<'a>(
    record: &'a Map<String, Value>,
    pointer: &str,
    member: &str,
) -> Option<&'a str> {
    crate::model::effective_at(record, pointer, member).and_then(Value::as_str)
}

fn index<'a>(value: &'a Value, pointer: &str, f: &mut dyn FnMut(&str, &'a str)) {
    match value {
        Value::String(s) => f(pointer, s),
        Value::Array(items) => {
            for (n, v) in items.iter().enumerate() {
                index(v, &format!("{pointer}/{n}"), f);
            }
        }
        Value::Object(members) => {
            for (k, v) in members {
                index(v, &format!("{pointer}/{k}"), f);
            }
        }
        _ => {}
    }
}

/// The records of `stream` that are `item` by its native id: a message with one of its ids
/// as `messageId`, a tool call with one as `callId`, a tool result answering its call.
pub(super) fn records_of<'s>(
    item: &'s Item,
    stream: &'s Stream<'_>,
) -> impl Iterator<Item = usize> + 's {
    stream
        .records
        .iter()
        .enumerate()
        .filter(move |(_, (_, record))| is_record_of(item, record))
        .map(|(n, _)| n)
}

pub(super) fn is_record_of(item: &Item, record: &Map<String, Value>) -> bool {
    let kind = record.get("type").and_then(Value::as_str);
    let member = |key: &str| record.get(key).and_then(Value::as_str);
    match &item.kind {
        ItemKind::Message | ItemKind::Reasoning | ItemKind::Notice => {
            kind == Some("message")
                && member("messageId").is_some_and(|id| item.ids.iter().any(|i| i == id))
        }
        ItemKind::ToolCall => {
            matches!(
                kind,
                Some("tool_call" | "plan" | "subagent" | "input_request")
            ) && member("callId").is_some_and(|id| item.ids.iter().any(|i| i == id))
        }
        ItemKind::ToolResult => {
            kind == Some("tool_result") && member("callId") == item.answers.as_deref()
        }
        ItemKind::Other(_) => false,
    }
}
