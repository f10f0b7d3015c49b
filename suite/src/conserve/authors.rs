//! Who wrote what: `author: "human"` only on text the source records a person wrote
//! (ASR-202), never on what it marks as harness, hook or tool output (ASR-203), each part
//! by its effective author (ASR-224); senders, recipients and the other members of
//! ASR-226 only where the source records them.

use super::Broken;
use super::output::{Output, effective};
use super::texts::excerpt;
use crate::facts::{Facts, Item, Writer};
use crate::rule;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The members ASR-226 says must come from the source.
const FROM_THE_SOURCE: [&str; 7] = [
    "from",
    "recipients",
    "triggersTurn",
    "conversation",
    "platform",
    "addressed",
    "via",
];

/// Charges the authors and senders the source does not support.
pub(super) fn check(facts: &Facts, out: &Output<'_>, broken: &mut Vec<Broken>) {
    let mut writers: HashMap<&str, Vec<Writer>> = HashMap::new();
    for item in &facts.items {
        for text in &item.texts {
            writers
                .entry(text.text.as_str())
                .or_default()
                .push(text.writer);
        }
    }
    for stream in &out.streams {
        for (line, record) in &stream.records {
            if record.get("type").and_then(Value::as_str) != Some("message") {
                continue;
            }
            let items = items_of(facts, record);
            for array in ["content", "displayContent"] {
                let Some(parts) = record.get(array).and_then(Value::as_array) else {
                    continue;
                };
                for (n, part) in parts.iter().enumerate() {
                    let pointer = format!("/{array}/{n}");
                    if effective(record, &pointer, "author") != Some("human") {
                        continue;
                    }
                    let Some(text) = part.get("text").and_then(Value::as_str) else {
                        continue;
                    };
                    let by_text = writers.get(text).cloned().unwrap_or_default();
                    let known: Vec<Writer> = if by_text.is_empty() {
                        items
                            .iter()
                            .flat_map(|i| i.texts.iter().map(|t| t.writer))
                            .collect()
                    } else {
                        by_text
                    };
                    // A text the facts do not hold may sit on a line the reader could not
                    // make out: it is invented only when it is nowhere in the source.
                    let unread = known.is_empty()
                        && (facts.unread.contains(text)
                            || facts.unread.iter().any(|s| s.contains(text)));
                    if known.contains(&Writer::Person) || unread {
                        continue;
                    }
                    let inserted = known.iter().find(|w| w.is_inserted());
                    let fact = items
                        .first()
                        .map(|i| i.at.clone())
                        .or_else(|| find_fact(facts, text));
                    broken.push(Broken {
                        rule: if inserted.is_some() {
                            rule::ASR_203
                        } else {
                            rule::ASR_202
                        },
                        decision: None,
                        warning: false,
                        message: format!(
                            "line {line} {pointer} has author \"human\", but {}: {}",
                            match inserted.or(known.first()) {
                                Some(w) => format!(
                                    "the source marks the text as written by {}",
                                    writer_name(*w)
                                ),
                                None => "the source records no person writing it".to_owned(),
                            },
                            excerpt(text)
                        ),
                        stream: Some(stream.name.to_owned()),
                        fact,
                    });
                }
            }
            for member in FROM_THE_SOURCE {
                if !record.contains_key(member) || items.is_empty() {
                    continue;
                }
                if items.iter().any(|i| i.recorded.iter().any(|r| r == member)) {
                    continue;
                }
                broken.push(Broken {
                    rule: rule::ASR_226,
                    decision: None,
                    warning: false,
                    message: format!(
                        "line {line} has {member}, which the source does not record for the message {:?}",
                        record.get("messageId").and_then(Value::as_str).unwrap_or("")
                    ),
                    stream: Some(stream.name.to_owned()),
                    fact: Some(items[0].at.clone()),
                });
            }
        }
    }
}

/// The source items an output message is of: by its `messageId`, else by the texts it
/// holds.
pub(super) fn items_of<'f>(facts: &'f Facts, record: &Map<String, Value>) -> Vec<&'f Item> {
    let id = record.get("messageId").and_then(Value::as_str);
    let by_id: Vec<&Item> = facts
        .items
        .iter()
        .filter(|i| id.is_some_and(|id| i.ids.iter().any(|x| x == id)))
        .collect();
    if !by_id.is_empty() {
        return by_id;
    }
    let texts: Vec<&str> = ["content", "displayContent"]
        .iter()
        .filter_map(|a| record.get(*a).and_then(Value::as_array))
        .flatten()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    facts
        .items
        .iter()
        .filter(|i| i.texts.iter().any(|t| texts.contains(&t.text.as_str())))
        .collect()
}

fn find_fact(facts: &Facts, text: &str) -> Option<crate::facts::Location> {
    facts
        .items
        .iter()
        .flat_map(|i| &i.texts)
        .find(|t| t.text == text)
        .map(|t| t.at.clone())
}

fn writer_name(writer: Writer) -> &'static str {
    match writer {
        Writer::Person => "a person",
        Writer::Model => "the model",
        Writer::Harness => "the harness",
        Writer::Hook => "a hook",
        Writer::Tool => "a tool",
        Writer::Agent => "another agent",
        Writer::Unknown => "someone it does not name",
    }
}
