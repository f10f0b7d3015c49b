//! Lineage only from the source: a facet only where the source holds a pointer (ASR-403)
//! with the evidence the pointer is (ASR-404), a pointer of unrecorded meaning only as
//! `relatedUnknown` (ASR-405), `root` only on a documented marker (ASR-402), `scope` only
//! from a marker (ASR-410), copies only on proof (ASR-414), `executedBy` only from a stored
//! id of the session that ran the turns (ASR-421).

use super::Broken;
use super::authors::items_of;
use super::output::{Output, Stream};
use crate::facts::{Facts, Pointer, Relation, Session};
use crate::refs::parse_session_ref;
use crate::rule::{self, RuleId};
use serde_json::{Map, Value};

/// Charges the lineage the source does not support.
pub(super) fn check(facts: &Facts, out: &Output<'_>, broken: &mut Vec<Broken>) {
    for stream in &out.streams {
        let Some(session) = stream.session.and_then(|n| facts.sessions.get(n)) else {
            continue;
        };
        let mut push = |rule: RuleId, message: String| {
            broken.push(Broken {
                rule,
                decision: None,
                warning: false,
                message,
                stream: Some(stream.name.to_owned()),
                fact: Some(session.at.clone()),
            });
        };
        if let Some(header) = stream.header {
            if let Some(scope) = header.get("scope").and_then(Value::as_str)
                && session.scope.as_deref() != Some(scope)
            {
                push(
                    rule::ASR_410,
                    match &session.scope {
                        Some(marked) => format!(
                            "the header's scope is {scope:?}, but the source marks session {:?} {marked:?}",
                            session.id
                        ),
                        None => format!(
                            "the header's scope is {scope:?}, but the source has no marker of session {:?}'s scope",
                            session.id
                        ),
                    },
                );
            }
        }
        for (line, lineage) in lineages(stream) {
            facets(session, line, lineage, &mut push);
        }
        for (line, record) in &stream.records {
            copies(facts, session, *line, record, &mut push);
            delegation(facts, *line, record, &mut push);
        }
    }
}

/// The lineage objects a stream declares (its header's and its declarations'), by line.
fn lineages<'a>(stream: &Stream<'a>) -> Vec<(usize, &'a Map<String, Value>)> {
    stream
        .records
        .iter()
        .filter(|(_, r)| {
            matches!(
                r.get("type").and_then(Value::as_str),
                Some("session" | "declaration")
            )
        })
        .filter_map(|(line, r)| Some((*line, r.get("lineage")?.as_object()?)))
        .collect()
}

fn facets(
    session: &Session,
    line: usize,
    lineage: &Map<String, Value>,
    push: &mut dyn FnMut(RuleId, String),
) {
    if lineage.get("root") == Some(&Value::Bool(true)) && !session.root {
        push(
            rule::ASR_402,
            format!(
                "line {line} claims root: true, but the source has no documented marker that session {:?} is a root",
                session.id
            ),
        );
    }
    for (facet, relation) in [
        ("spawnedBy", Some(Relation::SpawnedBy)),
        ("forkedFrom", Some(Relation::ForkedFrom)),
        ("continues", Some(Relation::Continues)),
        ("relatedUnknown", None),
    ] {
        let Some(value) = lineage.get(facet).and_then(Value::as_object) else {
            continue;
        };
        let Some(target) = value.get("session").and_then(Value::as_str) else {
            continue;
        };
        let to: Vec<&Pointer> = session
            .pointers
            .iter()
            .filter(|p| names(target, &p.to))
            .collect();
        if to.is_empty() {
            push(
                rule::ASR_403,
                format!(
                    "line {line} has lineage.{facet} to {target:?}, but the source holds no pointer from session {:?} to it",
                    session.id
                ),
            );
            continue;
        }
        let meant: Vec<&Pointer> = match relation {
            None => to.clone(),
            Some(relation) => to
                .iter()
                .copied()
                .filter(|p| p.meaning == Some(relation))
                .collect(),
        };
        if meant.is_empty() {
            let (rule, why) = if to.iter().any(|p| p.meaning.is_none()) {
                (
                    rule::ASR_405,
                    "the source does not record what its pointer means: relatedUnknown".to_owned(),
                )
            } else {
                let recorded: Vec<&str> = to
                    .iter()
                    .filter_map(|p| p.meaning)
                    .map(Relation::facet)
                    .collect();
                (
                    rule::ASR_403,
                    format!("the source records the relation as {}", recorded.join(", ")),
                )
            };
            push(
                rule,
                format!("line {line} has lineage.{facet} to {target:?}, but {why}"),
            );
            continue;
        }
        evidence_and_record(line, facet, value, &meant, push);
    }
    if let Some(entries) = lineage.get("executedBy").and_then(Value::as_array) {
        for (n, entry) in entries.iter().enumerate() {
            let Some(target) = entry.get("session").and_then(Value::as_str) else {
                continue;
            };
            let meant: Vec<&Pointer> = session
                .pointers
                .iter()
                .filter(|p| p.meaning == Some(Relation::ExecutedBy) && names(target, &p.to))
                .collect();
            if meant.is_empty() {
                push(
                    rule::ASR_421,
                    format!(
                        "line {line} has lineage.executedBy/{n} {target:?}, but the source stores no id of a session that ran session {:?}'s turns by that name",
                        session.id
                    ),
                );
            } else if let Some(object) = entry.as_object() {
                evidence_and_record(line, &format!("executedBy/{n}"), object, &meant, push);
            }
        }
    }
    if let Some(inherits) = lineage.get("inherits").and_then(Value::as_object)
        && inherits.get("mode").and_then(Value::as_str) == Some("copied")
        && session.copied_prefix.is_none()
    {
        push(
            rule::ASR_414,
            format!(
                "line {line} declares inherits.mode copied, but nothing in the source proves that session {:?} begins with copied history",
                session.id
            ),
        );
    }
}

/// A facet's evidence is one its pointers are (ASR-404), and the record it names is one the
/// source names (ASR-403).
fn evidence_and_record(
    line: usize,
    facet: &str,
    value: &Map<String, Value>,
    meant: &[&Pointer],
    push: &mut dyn FnMut(RuleId, String),
) {
    if let Some(evidence) = value.get("evidence").and_then(Value::as_str)
        && !meant.iter().any(|p| p.evidence == evidence)
    {
        let supported: Vec<&str> = meant.iter().map(|p| p.evidence.as_str()).collect();
        push(
            rule::ASR_404,
            format!(
                "line {line} gives lineage.{facet} evidence {evidence:?}, but the source's pointer is {}",
                supported.join(" or ")
            ),
        );
    }
    if let Some(record) = value.get("record").and_then(Value::as_str)
        && !meant.iter().any(|p| p.record.as_deref() == Some(record))
    {
        push(
            rule::ASR_403,
            format!(
                "line {line} names record {record:?} in lineage.{facet}, but the source names {}",
                meant
                    .iter()
                    .find_map(|p| p.record.as_deref())
                    .map_or_else(|| "no record".to_owned(), |r| format!("{r:?}"))
            ),
        );
    }
}

/// A record marked as copied is one the source proves a copy (ASR-414).
fn copies(
    facts: &Facts,
    session: &Session,
    line: usize,
    record: &Map<String, Value>,
    push: &mut dyn FnMut(RuleId, String),
) {
    if !record.contains_key("copiedFrom") {
        return;
    }
    let items = items_of(facts, record);
    if items.is_empty() || items.iter().any(|i| i.copied.is_some()) {
        return;
    }
    if session.copied_prefix.is_some() {
        return;
    }
    push(
        rule::ASR_414,
        format!(
            "line {line} has copiedFrom, but nothing in the source proves the item at {} a copy",
            items[0].at
        ),
    );
}

/// A subagent record that links a call to a child session the source holds does so only
/// where the source records that link (ASR-403: never by matching the prompt's text).
fn delegation(
    facts: &Facts,
    line: usize,
    record: &Map<String, Value>,
    push: &mut dyn FnMut(RuleId, String),
) {
    if record.get("type").and_then(Value::as_str) != Some("subagent") {
        return;
    }
    let (Some(child), Some(call)) = (
        record.get("childSession").and_then(Value::as_str),
        record.get("callId").and_then(Value::as_str),
    ) else {
        return;
    };
    let Some(session) = facts
        .sessions
        .iter()
        .find(|s| names(child, &s.id) || s.aliases.iter().any(|a| names(child, a)))
    else {
        return;
    };
    let named = format!("callId={call}");
    if session
        .pointers
        .iter()
        .any(|p| p.record.as_deref() == Some(named.as_str()))
    {
        return;
    }
    push(
        rule::ASR_403,
        format!(
            "line {line} links the call {call:?} to the child session {child:?}, but the source does not record that this call started it"
        ),
    );
}

/// Whether the session reference `reference` names the session `id`: a native session id
/// (its id part, after the agent name and a namespace, escapes decoded), or a session
/// reference of its own (compared in canonical form).
fn names(reference: &str, id: &str) -> bool {
    if reference == id {
        return true;
    }
    let Ok(parsed) = parse_session_ref(reference) else {
        return false;
    };
    if let Some(other) = crate::model::canonical_session(id) {
        return Some(other) == crate::model::canonical_session(reference);
    }
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    let whole = decode(parsed.path);
    let last = parsed.path.rsplit(':').next().map(decode);
    whole == id || last.as_deref() == Some(id)
}
