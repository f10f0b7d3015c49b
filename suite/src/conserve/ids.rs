//! Native ids kept: a reasoning item with its own id is a reasoning-only message with that
//! id (ASR-219); a native message keeps its id (ASR-203's SHOULD); a tool call keeps its
//! call id and a tool result answers the call it answers in the source (the kit's decision
//! on tool traffic).

use super::output::{Output, Stream, is_record_of};
use super::texts::{Found, declared_lost, excerpt};
use super::{Broken, DECISION_TOOLS};
use crate::facts::{Facts, ItemKind, TextKind};
use crate::rule;
use serde_json::{Map, Value};

/// Charges the ids not kept.
pub(super) fn check(facts: &Facts, out: &Output<'_>, found: &Found, broken: &mut Vec<Broken>) {
    for (item, places) in facts.items.iter().zip(found) {
        let records: Vec<(&Stream<'_>, &Map<String, Value>)> = out
            .streams
            .iter()
            .flat_map(|s| s.records.iter().map(move |(_, r)| (s, *r)))
            .filter(|(_, r)| is_record_of(item, r))
            .collect();
        let holders: Vec<&Map<String, Value>> =
            places.iter().flatten().map(|p| out.record(p)).collect();
        let lossy = out.lossy(item.session);
        match &item.kind {
            ItemKind::Reasoning if !item.ids.is_empty() => {
                let only_reasoning = |r: &Map<String, Value>| {
                    r.get("content").and_then(Value::as_array).is_some_and(|c| {
                        c.len() == 1
                            && c[0].get("type").and_then(Value::as_str) == Some("reasoning")
                    })
                };
                if records.iter().any(|(_, r)| only_reasoning(r)) {
                    continue;
                }
                let why = if let Some((_, r)) = records.first() {
                    format!(
                        "the message with its id holds {} parts, not exactly one reasoning part",
                        r.get("content")
                            .and_then(Value::as_array)
                            .map_or(0, Vec::len)
                    )
                } else if let Some(r) = holders
                    .iter()
                    .find(|r| r.get("type").and_then(Value::as_str) == Some("message"))
                {
                    format!(
                        "its reasoning is folded into the message {:?}",
                        r.get("messageId").and_then(Value::as_str).unwrap_or("")
                    )
                } else if declared_lost(&lossy, TextKind::Reasoning) {
                    continue;
                } else {
                    "no message has its id".to_owned()
                };
                broken.push(Broken {
                    rule: rule::ASR_219,
                    decision: None,
                    warning: false,
                    message: format!(
                        "the reasoning item {:?} is not kept as a reasoning-only message with that id: {why}",
                        item.ids[0]
                    ),
                    stream: None,
                    fact: Some(item.at.clone()),
                });
            }
            ItemKind::Message if !item.ids.is_empty() && records.is_empty() => {
                let Some(holder) = holders
                    .iter()
                    .find(|r| r.get("type").and_then(Value::as_str) == Some("message"))
                else {
                    continue;
                };
                broken.push(Broken {
                    rule: rule::ASR_203,
                    decision: None,
                    warning: true,
                    message: format!(
                        "the native message {:?} is kept as a message with messageId {:?}: its native id is lost",
                        item.ids[0],
                        holder.get("messageId").and_then(Value::as_str).unwrap_or("")
                    ),
                    stream: None,
                    fact: Some(item.at.clone()),
                });
            }
            ItemKind::ToolCall
                if !item.ids.is_empty()
                    && records.is_empty()
                    && !declared_lost(&lossy, TextKind::ToolInput) =>
            {
                let kept_as = holders
                    .iter()
                    .find(|r| r.get("type").and_then(Value::as_str) == Some("tool_call"))
                    .and_then(|r| r.get("callId").and_then(Value::as_str));
                broken.push(Broken {
                    rule: rule::ASR_203,
                    decision: Some(DECISION_TOOLS),
                    warning: false,
                    message: match kept_as {
                        Some(other) => format!(
                            "the tool call {:?} is written with callId {other:?}: its native call id is lost",
                            item.ids[0]
                        ),
                        None => format!("no tool_call record has the native call id {:?}", item.ids[0]),
                    },
                    stream: None,
                    fact: Some(item.at.clone()),
                });
            }
            ItemKind::ToolResult => {
                let Some(call) = item.answers.as_deref() else {
                    continue;
                };
                if declared_lost(&lossy, TextKind::ToolOutput) && records.is_empty() {
                    continue;
                }
                let results: Vec<&str> = holders
                    .iter()
                    .filter(|r| r.get("type").and_then(Value::as_str) == Some("tool_result"))
                    .filter_map(|r| r.get("callId").and_then(Value::as_str))
                    .collect();
                let message = if !results.is_empty() && !results.contains(&call) {
                    format!(
                        "the tool result of call {call:?} is written as answering {:?}: {}",
                        results[0],
                        item.texts
                            .first()
                            .map(|t| excerpt(&t.text))
                            .unwrap_or_default()
                    )
                } else if records.is_empty() {
                    format!("no tool_result record answers the call {call:?}")
                } else {
                    continue;
                };
                broken.push(Broken {
                    rule: rule::ASR_211,
                    decision: Some(DECISION_TOOLS),
                    warning: false,
                    message,
                    stream: None,
                    fact: Some(item.at.clone()),
                });
            }
            _ => {}
        }
    }
}
