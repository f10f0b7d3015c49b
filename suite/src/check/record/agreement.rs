//! The checker, the reference reader and fidelity assertions mean the same by every record
//! of the corpus: its kind and tags, and each part's effective author, origin and phase
//! (ASR-224). Each of the three is asked what it concluded, not the model: the checker
//! through the units its harness notice check judges ([`super::judged_units`]), the reader
//! through its reading, fidelity through the records its assertions see
//! ([`crate::fidelity::records`]), and the judge's tags through [`Kinds`]. One that stops
//! taking its meaning from the model disagrees with the others on some stream, as the last
//! test shows for a hand-made one.
//!
//! Compiled as a child of `check::record`, whose trace is private to the checker.

use super::{JudgedUnit, judged_units};
use crate::judge::members::Kinds;
use crate::model::{At, Effective};
use crate::reading::{PartReading, Reading, read_bytes};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every ASR stream of the corpus: `cases/**/*.jsonl` but a source fixture's native files.
pub(crate) fn corpus_streams() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let mut stack = vec![root];
    let mut found = Vec::new();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                // A source fixture's `source/` holds the native transcript, no ASR stream.
                let native = path.file_name().is_some_and(|n| n == "source")
                    && path
                        .parent()
                        .is_some_and(|p| p.join("fixture.json").is_file());
                if !native {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Where the three disagree on one stream, in words (empty when they agree).
fn disagreements(bytes: &[u8]) -> Vec<String> {
    let reading = read_bytes(bytes).reading;
    let seen: BTreeMap<usize, Value> = crate::fidelity::records(bytes).collect();
    let mut out = record_disagreements(bytes, &reading, &seen);
    // The line of each record the reading lists: the first line of its id.
    let mut first_line: BTreeMap<&str, usize> = BTreeMap::new();
    let header = crate::check::outline(bytes).header;
    for (line, value) in &seen {
        if let Some(id) = value.get("id").and_then(Value::as_str)
            && Some(*line) != header
        {
            first_line.entry(id).or_insert(*line);
        }
    }
    for (number, line) in crate::lines::split(bytes) {
        let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if object.get("type").and_then(Value::as_str) != Some("message") {
            continue;
        }
        let read = object
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| first_line.get(id) == Some(&number))
            .and_then(|id| reading.records.get(id))
            .and_then(|r| r.parts.as_deref());
        let units = judged_units(&object);
        out.extend(
            part_disagreements(&object, &units, seen.get(&number), read)
                .into_iter()
                .map(|d| format!("line {number}: {d}")),
        );
    }
    out
}

/// The kind and tags of every record: the checker's header, the judge's tags, the reading,
/// and the type fidelity assertions select by.
fn record_disagreements(
    bytes: &[u8],
    reading: &Reading,
    seen: &BTreeMap<usize, Value>,
) -> Vec<String> {
    let mut out = Vec::new();
    let kinds = Kinds::of_stream(bytes);
    let checker = crate::check::outline(bytes);
    let reader = crate::reading::outline(bytes);
    if checker.header != reader.header {
        out.push(format!(
            "header: checker line {:?}, reader line {:?}",
            checker.header, reader.header
        ));
    }
    let listed: BTreeSet<String> = reading.records.keys().cloned().collect();
    if !kinds.unread && kinds.records != listed {
        out.push(format!(
            "records: judge {:?}, reader {:?}",
            kinds.records, listed
        ));
    }
    let header_id = checker
        .header
        .and_then(|line| seen.get(&line))
        .and_then(|h| h.get("id"))
        .and_then(Value::as_str);
    if let Some(id) = header_id {
        let tags = kinds.tags_of(id);
        if tags != ["header"] && tags != ["repeated"] {
            out.push(format!("header {id}: the judge tags it {tags:?}"));
        }
        if reading.records.contains_key(id) {
            out.push(format!("header {id}: the reading lists it"));
        }
    }
    for (line, id, _) in &checker.records {
        if Some(*line) == checker.header {
            continue;
        }
        // A line serde_json does not read (nested deeper than it goes) the reader reads with
        // its own parser: the judge and fidelity know nothing of it (the judge says so).
        let (Some(read), Some(record)) = (reading.records.get(id), seen.get(line)) else {
            continue;
        };
        let tags = kinds.tags_of(id);
        let has = |t: &str| tags.iter().any(|x| x == t);
        let kind = read.kind.as_deref().unwrap_or("");
        if tags.first().map(String::as_str) != Some(kind) {
            out.push(format!(
                "{id}: the judge's kind {:?}, the reading's {kind:?}",
                tags.first()
            ));
        }
        let selected = record.get("type").and_then(Value::as_str);
        if selected.unwrap_or("") != kind {
            out.push(format!(
                "{id}: fidelity selects it as {selected:?}, the reading reads {kind:?}"
            ));
        }
        if !has(read.originality.as_str()) || has("superseded") != read.superseded {
            out.push(format!(
                "{id}: the judge's tags {tags:?}, the reading {read:?}"
            ));
        }
        let expected = if has("copied") {
            Some(crate::model::Originality::Copy)
        } else if has("mirror") {
            Some(crate::model::Originality::Unknown)
        } else {
            None
        };
        if expected.is_some_and(|o| o != read.originality) {
            out.push(format!(
                "{id}: tagged {tags:?} but read {:?}",
                read.originality
            ));
        }
    }
    out
}

/// Each part's effective author, origin and phase: the checker's `units`, what fidelity
/// assertions see (`seen`, the record), and the reading's parts (`read`, when the reading
/// lists the record).
fn part_disagreements(
    message: &Map<String, Value>,
    units: &[JudgedUnit<'_>],
    seen: Option<&Value>,
    read: Option<&[PartReading]>,
) -> Vec<String> {
    let mut out = Vec::new();
    let content = message.get("content").and_then(Value::as_array);
    for unit in units {
        let fields = [
            ("author", unit.author),
            ("origin", unit.origin),
            ("phase", unit.phase),
        ];
        for (key, effective) in fields {
            // The checker's value is the one written where it points.
            let written = match (effective.at, unit.index) {
                (At::Part(n), Some(m)) if n == m => {
                    content.and_then(|c| c.get(n)).and_then(|p| p.get(key))
                }
                (At::Message, _) => message.get(key),
                _ => {
                    out.push(format!(
                        "the checker's {key} of a unit is at {:?}",
                        effective.at
                    ));
                    continue;
                }
            };
            if written != effective.value {
                out.push(format!(
                    "the checker's {key} {:?} is not the one written at {}",
                    effective.value,
                    effective.pointer(key)
                ));
            }
            let pointer = match unit.index {
                Some(n) => format!("/content/{n}/{key}"),
                None => format!("/{key}"),
            };
            let fidelity = seen.and_then(|r| r.pointer(&pointer));
            if fidelity != effective.value {
                out.push(format!(
                    "{pointer}: the checker judges {:?}, fidelity sees {fidelity:?}",
                    effective.value
                ));
            }
            if let (Some(parts), Some(n)) = (read, unit.index) {
                let got = parts.get(n).map(|p| match key {
                    "author" => p.author.as_deref(),
                    "origin" => p.origin.as_deref(),
                    _ => p.phase.as_deref(),
                });
                let want = as_read(effective, message, key);
                if got != Some(want) {
                    out.push(format!(
                        "{pointer}: the checker judges {:?}, the reading has {got:?}",
                        effective.value
                    ));
                }
            }
        }
    }
    if let (Some(parts), Some(content)) = (read, content)
        && parts.len() != content.len()
    {
        out.push(format!(
            "the reading has {} parts of {}",
            parts.len(),
            content.len()
        ));
    }
    out
}

/// What the reading makes of an effective value: a string as it is; a part's own value of
/// another JSON type reads as absent, so the message's string shows (decision
/// `member-types`).
fn as_read<'a>(
    effective: Effective<'a>,
    message: &'a Map<String, Value>,
    key: &str,
) -> Option<&'a str> {
    match (effective.value, effective.at) {
        (Some(Value::String(s)), _) => Some(s),
        (Some(_), At::Part(_)) => message.get(key).and_then(Value::as_str),
        _ => None,
    }
}

#[test]
fn the_checker_the_reader_and_fidelity_mean_the_same_by_every_record_of_the_corpus() {
    let streams = corpus_streams();
    assert!(streams.len() > 500, "{} streams", streams.len());
    let mut parts = 0;
    let mut failures = Vec::new();
    for path in &streams {
        let Ok(bytes) = std::fs::read(path) else {
            failures.push(format!("{}: unreadable", path.display()));
            continue;
        };
        parts += crate::lines::split(&bytes)
            .filter(|(_, l)| l.windows(9).any(|w| w == b"\"content\""))
            .count();
        for d in disagreements(&bytes) {
            failures.push(format!("{}: {d}", path.display()));
        }
    }
    assert!(parts > 1000, "{parts} lines with content");
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_part_value_taken_otherwise_than_the_model_takes_it_is_a_disagreement() {
    let stream = concat!(
        r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","lineage":{"inherits":{"mode":"none","evidence":"native_field"}}}"#,
        "\n",
        r#"{"type":"message","seq":1,"id":"r1","role":"user","author":"harness","origin":"notice","audience":"user","content":[{"type":"text","text":"x","author":7},{"type":"text","text":"y","phase":"final"}]}"#,
        "\n",
    );
    assert!(disagreements(stream.as_bytes()).is_empty());
    let line = stream.lines().nth(1).unwrap_or_default();
    let value: Value = serde_json::from_str(line).unwrap_or_default();
    let message = value.as_object().cloned().unwrap_or_default();
    let units = judged_units(&message);
    let reading = read_bytes(stream.as_bytes()).reading;
    let parts = reading.records.get("r1").and_then(|r| r.parts.as_deref());
    let seen = crate::model::with_effective_parts(&value);
    assert!(part_disagreements(&message, &units, Some(&seen), parts).is_empty());
    // Fidelity reading the raw record: the second part's author is not the message's.
    let raw = part_disagreements(&message, &units, Some(&value), parts);
    assert!(
        raw.iter()
            .any(|d| d.starts_with("/content/1/author: the checker judges")),
        "{raw:?}"
    );
    // A reader that took the part's wrong-typed author as no author at all, and left the
    // message's out.
    let mut wrong = parts.map(<[PartReading]>::to_vec).unwrap_or_default();
    if let Some(first) = wrong.first_mut() {
        first.author = None;
    }
    let misread = part_disagreements(&message, &units, Some(&seen), Some(&wrong));
    assert_eq!(misread.len(), 1, "{misread:?}");
    // A checker that judged the message's origin for a part that carries its own.
    let mut misjudged = units.clone();
    if let Some(unit) = misjudged.get_mut(1) {
        unit.phase = Effective {
            value: message.get("phase"),
            at: At::Message,
        };
    }
    let found = part_disagreements(&message, &misjudged, Some(&seen), parts);
    assert!(found.len() >= 2, "{found:?}");
}
