//! Test support: how a reader's facts of a fixture's source agree with the fixture's golden
//! streams (the checks the readers' brief lists).

use super::super::{Facts, ItemKind, Writer};
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;

/// The problems of every fixture of `format`: its facts against its golden.
pub(crate) fn fixtures(format: &str) -> (usize, Vec<String>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/sources");
    let fixtures = crate::source::load_fixtures(&root).expect("the fixtures load");
    let mut count = 0;
    let mut problems = Vec::new();
    for fixture in fixtures.iter().filter(|f| f.sidecar.format == format) {
        count += 1;
        let source = fixture.source().expect("the source loads");
        let facts = super::super::read(format, source.files());
        let expected = fixture.expected().expect("the golden loads");
        for problem in check(&facts, &expected) {
            problems.push(format!("{}: {problem}", fixture.name));
        }
    }
    (count, problems)
}

/// How `facts` disagree with the golden `streams` (name, bytes).
pub(crate) fn check(facts: &Facts, streams: &[(String, Vec<u8>)]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut records = Vec::new();
    for (name, bytes) in streams {
        let mut stream = Vec::new();
        for line in bytes.split(|b| *b == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Value>(line) {
                Ok(value) => stream.push(value),
                Err(e) => problems.push(format!("stream {name:?}: {e}")),
            }
        }
        records.push(stream);
    }
    let all: Vec<&Value> = records.iter().flatten().collect();
    let mut strings = HashSet::new();
    for record in &all {
        strings_of(record, &mut strings);
        concatenations(record, &mut strings);
    }
    let ids: HashSet<&str> = all
        .iter()
        .flat_map(|r| ["messageId", "callId"].map(|k| r.get(k).and_then(Value::as_str)))
        .flatten()
        .collect();
    for item in &facts.items {
        for text in &item.texts {
            if !strings.contains(&text.text) {
                problems.push(format!(
                    "text at {} is in no golden: {:?}",
                    text.at, text.text
                ));
            }
        }
        match &item.kind {
            ItemKind::Message | ItemKind::Reasoning | ItemKind::ToolCall => {
                if let Some(id) = item.ids.first()
                    && !ids.contains(id.as_str())
                {
                    problems.push(format!("id {id} of {} is in no golden", item.at));
                }
            }
            ItemKind::ToolResult => {
                let Some(call) = &item.answers else {
                    problems.push(format!("tool result at {} answers nothing", item.at));
                    continue;
                };
                let results: Vec<&&Value> = all
                    .iter()
                    .filter(|r| {
                        r.get("type").and_then(Value::as_str) == Some("tool_result")
                            && r.get("callId").and_then(Value::as_str) == Some(call.as_str())
                    })
                    .collect();
                let holds = |text: &str| {
                    results.iter().any(|r| {
                        let mut s = HashSet::new();
                        strings_of(r, &mut s);
                        concatenations(r, &mut s);
                        s.contains(text)
                    })
                };
                if results.is_empty() || !item.texts.iter().all(|t| holds(&t.text)) {
                    problems.push(format!(
                        "tool result at {} not in the golden's {call}",
                        item.at
                    ));
                }
            }
            _ => {}
        }
    }
    let person: HashSet<&str> = facts
        .items
        .iter()
        .flat_map(|i| &i.texts)
        .filter(|t| t.writer == Writer::Person)
        .map(|t| t.text.as_str())
        .collect();
    for record in &all {
        let own = record.get("author").and_then(Value::as_str);
        for key in ["content", "displayContent"] {
            for part in record
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let author = part.get("author").and_then(Value::as_str).or(own);
                let Some(text) = part.get("text").and_then(Value::as_str) else {
                    continue;
                };
                if author == Some("human") && !person.contains(text) {
                    problems.push(format!("human text is no person's fact: {text:?}"));
                }
                if matches!(author, Some("harness" | "hook" | "tool")) && person.contains(text) {
                    problems.push(format!("a person's text under author {author:?}: {text:?}"));
                }
            }
        }
    }
    let mut streamed = Vec::new();
    for stream in &records {
        let Some(header) = stream.first() else {
            continue;
        };
        let id = header
            .get("sessionId")
            .and_then(Value::as_str)
            .unwrap_or("");
        let Some(n) = facts
            .sessions
            .iter()
            .position(|s| s.id == id || s.aliases.iter().any(|a| a == id))
        else {
            problems.push(format!("stream of {id} is no session's"));
            continue;
        };
        streamed.push(n);
        let session = &facts.sessions[n];
        if header.get("scope").and_then(Value::as_str) != session.scope.as_deref() {
            problems.push(format!("scope of {id} differs"));
        }
        let mut lineage: Vec<(String, String, String)> = Vec::new();
        if let Some(Value::Object(facets)) = header.get("lineage") {
            for (facet, value) in facets {
                let entries = match value {
                    Value::Array(entries) => entries.iter().collect(),
                    other => vec![other],
                };
                for entry in entries {
                    let field = |k: &str| {
                        entry
                            .get(k)
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned()
                    };
                    lineage.push((facet.clone(), field("session"), field("evidence")));
                }
            }
        }
        let mut pointers: Vec<(String, String, String)> = session
            .pointers
            .iter()
            .map(|p| {
                let facet = p.meaning.map_or("relatedUnknown", |m| m.facet());
                (facet.to_owned(), p.to.clone(), p.evidence.clone())
            })
            .collect();
        lineage.sort();
        pointers.sort();
        if lineage != pointers {
            problems.push(format!(
                "lineage of {id}: golden {lineage:?}, facts {pointers:?}"
            ));
        }
    }
    for (n, session) in facts.sessions.iter().enumerate() {
        if !streamed.contains(&n) {
            problems.push(format!("session {} has no stream", session.id));
        }
    }
    problems
}

/// Every string value inside `value`.
fn strings_of(value: &Value, out: &mut HashSet<String>) {
    match value {
        Value::String(s) => {
            out.insert(s.clone());
        }
        Value::Array(items) => {
            for v in items {
                strings_of(v, out);
            }
        }
        Value::Object(members) => {
            for v in members.values() {
                strings_of(v, out);
            }
        }
        _ => {}
    }
}

/// The concatenations of consecutive `text` members of each array of parts in `value`.
fn concatenations(value: &Value, out: &mut HashSet<String>) {
    match value {
        Value::Array(items) => {
            let texts: Vec<Option<&str>> = items
                .iter()
                .map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            for start in 0..texts.len() {
                let mut joined = String::new();
                for text in &texts[start..] {
                    let Some(text) = text else { break };
                    joined.push_str(text);
                    out.insert(joined.clone());
                }
            }
            for v in items {
                concatenations(v, out);
            }
        }
        Value::Object(members) => {
            for v in members.values() {
                concatenations(v, out);
            }
        }
        _ => {}
    }
}
