//! Checks within one record that a schema cannot express: indices between parts, ids
//! between plan entries, empty content without a reason, the format version.

use super::{FORMAT_VERSION, Finding};
use crate::diagnostic::pointer_join;
use crate::model;
use crate::rule;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Findings about one record on its own.
pub(crate) fn check(record: &Map<String, Value>) -> Vec<Finding> {
    let mut findings = Vec::new();
    let kind = record.get("type").and_then(Value::as_str).unwrap_or("");
    let content_explained = content_state(record);
    for member in ["content", "displayContent"] {
        if let Some(Value::Array(parts)) = record.get(member) {
            derivations(parts, &format!("/{member}"), &mut findings);
            if !content_explained {
                summaries_labelled_full(parts, &format!("/{member}"), &mut findings);
            }
        }
    }
    match kind {
        "session" => format_version(record, &mut findings),
        "message" => {
            empty_content(record, &mut findings);
            harness_notices(record, &mut findings);
        }
        "plan" => {
            if matches!(
                record.get("planType").and_then(Value::as_str),
                Some("document" | "goal")
            ) {
                empty_content(record, &mut findings);
            }
            if let Some(Value::Array(entries)) = record.get("entries") {
                plan_entries(entries, &mut findings);
            }
        }
        _ => {}
    }
    findings
}

/// What the checker takes a message's author, origin and phase to be, in each unit it
/// judges them in (each part that is an object, else the message): the model's effective
/// values, of any JSON type, with where each is written. A test holds it to the reading and
/// to what fidelity assertions see (`check/record/agreement.rs`).
pub(crate) fn judged_units(record: &Map<String, Value>) -> Vec<JudgedUnit<'_>> {
    model::units(record)
        .into_iter()
        .map(|unit| JudgedUnit {
            index: match unit {
                model::Unit::Part(part) => Some(part.index),
                model::Unit::Message(_) => None,
            },
            author: unit.effective("author"),
            origin: unit.effective("origin"),
            phase: unit.effective("phase"),
        })
        .collect()
}

/// One unit's author, origin and phase, as the checker judges them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct JudgedUnit<'a> {
    /// The part's index in `content`; `None` for the message without parts.
    pub(crate) index: Option<usize>,
    /// The effective author.
    pub(crate) author: model::Effective<'a>,
    /// The effective origin.
    pub(crate) origin: model::Effective<'a>,
    /// The effective phase.
    pub(crate) phase: model::Effective<'a>,
}

/// ASR-233: `derivation.from` names another part of the same array.
fn derivations(parts: &[Value], base: &str, findings: &mut Vec<Finding>) {
    for (index, part) in parts.iter().enumerate() {
        let Some(from) = part
            .get("derivation")
            .and_then(|d| d.get("from"))
            .and_then(Value::as_u64)
        else {
            continue;
        };
        let pointer = format!("{base}/{index}/derivation/from");
        if usize::try_from(from).is_ok_and(|from| from == index) {
            findings.push(Finding::error(
                rule::ASR_233,
                pointer,
                format!("derivation.from is {from}, the part's own index"),
            ));
        } else if usize::try_from(from).map_or(true, |from| from >= parts.len()) {
            findings.push(Finding::error(
                rule::ASR_233,
                pointer,
                format!(
                    "derivation.from is {from}, but the array has {} parts",
                    parts.len()
                ),
            ));
        }
    }
}

/// ASR-214 (clause b): a reasoning part that holds only a summary (summary segments, no
/// text) is not labelled `visibility: full`, unless the record's capture state explains
/// the missing text.
fn summaries_labelled_full(parts: &[Value], base: &str, findings: &mut Vec<Finding>) {
    for (index, part) in parts.iter().enumerate() {
        let full = part.get("type").and_then(Value::as_str) == Some("reasoning")
            && part.get("visibility").and_then(Value::as_str) == Some("full");
        let summary = part
            .get("summary")
            .and_then(Value::as_array)
            .is_some_and(|s| !s.is_empty());
        let text = part
            .get("text")
            .and_then(Value::as_str)
            .is_some_and(|t| !t.is_empty());
        if full && summary && !text {
            findings.push(Finding::error(
                rule::ASR_214,
                format!("{base}/{index}/visibility"),
                "visibility is full, but the part holds only summary segments and no text: summary text is not labelled full",
            ));
        }
    }
}

/// ASR-236: entry ids unique, and `blockedBy` names other entries of the same record.
fn plan_entries(entries: &[Value], findings: &mut Vec<Finding>) {
    let mut ids: HashMap<&str, usize> = HashMap::new();
    for (index, entry) in entries.iter().enumerate() {
        if let Some(id) = entry.get("entryId").and_then(Value::as_str) {
            if let Some(first) = ids.insert(id, index) {
                ids.insert(id, first);
                findings.push(Finding::error(
                    rule::ASR_236,
                    format!("/entries/{index}/entryId"),
                    format!("entryId `{id}` is already the id of entry {first}"),
                ));
            }
        }
    }
    for (index, entry) in entries.iter().enumerate() {
        let Some(Value::Array(blockers)) = entry.get("blockedBy") else {
            continue;
        };
        let own = entry.get("entryId").and_then(Value::as_str);
        for (n, blocker) in blockers.iter().enumerate() {
            let Some(blocker) = blocker.as_str() else {
                continue;
            };
            let pointer = format!("/entries/{index}/blockedBy/{n}");
            if Some(blocker) == own {
                findings.push(Finding::error(
                    rule::ASR_236,
                    pointer,
                    format!("entry `{blocker}` is blocked by itself"),
                ));
            } else if !ids.contains_key(blocker) {
                findings.push(Finding::error(
                    rule::ASR_236,
                    pointer,
                    format!("blockedBy names `{blocker}`, which is no entryId of this plan record"),
                ));
            }
        }
    }
}

/// ASR-205, with the part-level values of ASR-224: content whose effective origin is
/// `notice` is a stored harness notice, so its effective author is `harness` and the
/// message's audience (a member only messages have) is `user`. A part's own author or origin
/// applies to it whatever its JSON type, so a malformed one is reported once, for its type,
/// and never stands in for a notice or for harness. Without parts, the message's own values.
fn harness_notices(record: &Map<String, Value>, findings: &mut Vec<Finding>) {
    // Each notice's author: the value and where it is written (the message's, when the part
    // carries none).
    let mut authors: Vec<(Option<&Value>, String)> = Vec::new();
    for unit in judged_units(record) {
        if unit.origin.as_str() != Some("notice") {
            continue;
        }
        let author = (unit.author.value, unit.author.pointer("author"));
        if !authors.iter().any(|(_, at)| *at == author.1) {
            authors.push(author);
        }
    }
    if authors.is_empty() {
        return;
    }
    for (author, pointer) in authors {
        match author {
            None => findings.push(Finding::error(
                rule::ASR_205,
                pointer,
                "a stored harness notice (origin notice) has no author; its author is harness",
            )),
            Some(Value::String(author)) if author != "harness" => findings.push(Finding::error(
                rule::ASR_205,
                pointer,
                format!("a stored harness notice (origin notice) has author {author:?}; its author is harness"),
            )),
            // harness, or a value of another type: reported once, for its type.
            Some(_) => {}
        }
    }
    match record.get("audience") {
        None => findings.push(Finding::error(
            rule::ASR_205,
            "/audience",
            "the message holds a stored harness notice (origin notice) but has no audience; a notice's audience is user",
        )),
        Some(Value::String(audience)) if audience != "user" => findings.push(Finding::error(
            rule::ASR_205,
            "/audience",
            format!("the message holds a stored harness notice (origin notice) for audience {audience:?}; a notice's audience is user"),
        )),
        Some(_) => {}
    }
}

/// The record has a capture state for its content: `capture.content` is an object (one of
/// another JSON type is no capture state, and explains nothing; ASR-X-013 reports it).
fn content_state(record: &Map<String, Value>) -> bool {
    record
        .get("capture")
        .and_then(|c| c.get("content"))
        .is_some_and(Value::is_object)
}

/// ASR-X-017: an empty content array says why through `capture.content`.
fn empty_content(record: &Map<String, Value>, findings: &mut Vec<Finding>) {
    let empty = matches!(record.get("content"), Some(Value::Array(parts)) if parts.is_empty());
    if empty && !content_state(record) {
        findings.push(Finding::warning(
            rule::ASR_X_017,
            "/content",
            "content is empty and no capture.content state says why",
        ));
    }
}

/// ASR-X-020: the header's format version is one the kit knows.
fn format_version(record: &Map<String, Value>, findings: &mut Vec<Finding>) {
    if let Some(version) = record.get("formatVersion").and_then(Value::as_str) {
        if version != FORMAT_VERSION {
            findings.push(Finding::notice(
                rule::ASR_X_020,
                pointer_join("", "formatVersion"),
                format!("formatVersion is {version:?}; the kit knows {FORMAT_VERSION:?} and checked the stream against it"),
            ));
        }
    }
}

// The agreement of the checker, the reader and fidelity assertions with the model: here,
// because what the checker judged is private to it.
#[cfg(test)]
pub(super) mod agreement;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn notice_findings(message: &Value) -> Vec<String> {
        let mut findings = Vec::new();
        harness_notices(message.as_object().expect("an object"), &mut findings);
        findings.into_iter().map(|f| f.pointer).collect()
    }

    #[test]
    fn notices_are_judged_by_each_parts_effective_values() {
        let part = |extra: Value| {
            let mut part = json!({"type": "text", "text": "x"});
            for (k, v) in extra.as_object().expect("an object") {
                part[k] = v.clone();
            }
            part
        };
        let harness = part(json!({"author": "harness"}));
        let every_part =
            json!({"origin": "notice", "audience": "user", "content": [harness, harness]});
        assert!(notice_findings(&every_part).is_empty());
        // Parts that fall back on a missing message author are one finding, at the message.
        let bare = json!({"origin": "notice", "audience": "user", "content": [part(json!({})), part(json!({}))]});
        assert_eq!(notice_findings(&bare), ["/author"]);
        // A part that is no notice asks nothing; one that is, asks for audience user.
        let overridden = json!({"origin": "notice", "author": "hook", "audience": "both",
            "content": [part(json!({"origin": "injected"}))]});
        assert!(notice_findings(&overridden).is_empty());
        let one_part = json!({"audience": "both", "author": "harness", "content": [part(json!({"origin": "notice"}))]});
        assert_eq!(notice_findings(&one_part), ["/audience"]);
        // A malformed author or audience is reported once, for its type, not again here.
        let malformed =
            json!({"origin": "notice", "audience": 5, "content": [part(json!({"author": 5}))]});
        assert!(notice_findings(&malformed).is_empty());
        // Without parts, the message's own values.
        let empty = json!({"origin": "notice", "author": "model", "content": []});
        assert_eq!(notice_findings(&empty), ["/author", "/audience"]);
    }
}
