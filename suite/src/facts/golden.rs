//! Test support: a reader's facts held against the golden streams of every fixture of its
//! format, so that a reader and the kit's hand-written goldens are known to agree (or where
//! they do not, which fixture and why).

use super::{Facts, ItemKind, Relation, Session, Writer, each_string, read};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

/// For each fixture of `format` (by name) on which the facts and the golden disagree, what
/// disagrees, in words; fixtures that agree are absent. Panics when there is no fixture of
/// the format or one cannot be read: a test of the corpus, not of untrusted input.
pub(super) fn disagreements(format: &str) -> BTreeMap<String, Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/sources");
    let fixtures = crate::source::load_fixtures(&root).expect("the fixtures load");
    let mut found = BTreeMap::new();
    let mut seen = 0;
    for fixture in fixtures.iter().filter(|f| f.sidecar.format == format) {
        seen += 1;
        let source = fixture.source().expect("the source loads");
        let facts = read(format, source.files());
        assert!(
            !facts.items.is_empty() && !facts.sessions.is_empty(),
            "{}: no facts",
            fixture.name
        );
        let streams = fixture.expected().expect("the golden loads");
        let problems = compare(&facts, &streams);
        if !problems.is_empty() {
            found.insert(fixture.name.clone(), problems);
        }
    }
    assert!(seen > 0, "no fixture of {format}");
    found
}

/// What of `facts` the golden `streams` (name, bytes) do not bear out.
pub(super) fn compare(facts: &Facts, streams: &[(String, Vec<u8>)]) -> Vec<String> {
    let golden = Golden::new(streams);
    let mut problems = Vec::new();
    for item in &facts.items {
        for text in &item.texts {
            if !golden.strings.contains(&text.text) {
                problems.push(format!(
                    "text not in the golden: {:?} [{}]",
                    text.text, text.at
                ));
            }
        }
        let checked = matches!(
            item.kind,
            ItemKind::Message | ItemKind::Reasoning | ItemKind::ToolCall
        );
        if let Some(id) = item
            .ids
            .first()
            .filter(|id| checked && !golden.ids.contains(*id))
        {
            problems.push(format!("id not in the golden: {id} [{}]", item.at));
        }
        if let (ItemKind::ToolResult, Some(call)) = (&item.kind, &item.answers) {
            for text in &item.texts {
                let holders: Vec<&String> = golden
                    .results
                    .iter()
                    .filter(|(_, strings)| strings.contains(&text.text))
                    .map(|(id, _)| id)
                    .collect();
                if !holders.contains(&call) {
                    problems.push(format!(
                        "the result answering {call} is in tool_result {holders:?} [{}]",
                        text.at
                    ));
                }
            }
        }
    }
    let person: HashSet<&str> = facts
        .items
        .iter()
        .flat_map(|i| &i.texts)
        .filter(|t| t.writer == Writer::Person)
        .map(|t| t.text.as_str())
        .collect();
    for (text, author) in &golden.parts {
        match author.as_deref() {
            Some("human") if !person.contains(text.as_str()) => {
                problems.push(format!("human in the golden, no person text: {text:?}"));
            }
            Some("harness" | "hook" | "tool") if person.contains(text.as_str()) => {
                problems.push(format!("a person text under {author:?}: {text:?}"));
            }
            _ => {}
        }
    }
    for header in &golden.headers {
        problems.extend(compare_header(header, &facts.sessions));
    }
    problems
}

/// The golden streams, as the comparisons read them.
struct Golden {
    /// Every string value, and every concatenation of consecutive `text` members of one
    /// array.
    strings: HashSet<String>,
    /// Every `messageId` and `callId`.
    ids: HashSet<String>,
    /// Each tool_result's callId and the strings it holds.
    results: Vec<(String, HashSet<String>)>,
    /// Each message part's text (its `text`, each `summary` segment) and effective author.
    parts: Vec<(String, Option<String>)>,
    /// The session headers.
    headers: Vec<Value>,
}

impl Golden {
    fn new(streams: &[(String, Vec<u8>)]) -> Self {
        let mut golden = Golden {
            strings: HashSet::new(),
            ids: HashSet::new(),
            results: Vec::new(),
            parts: Vec::new(),
            headers: Vec::new(),
        };
        for (_, bytes) in streams {
            for line in bytes.split(|b| *b == b'\n') {
                let Ok(record) = serde_json::from_slice::<Value>(line) else {
                    continue;
                };
                golden.record(&record);
            }
        }
        golden
    }

    fn record(&mut self, record: &Value) {
        let strings = strings_of(record);
        for key in ["messageId", "callId"] {
            if let Some(id) = record.get(key).and_then(Value::as_str) {
                self.ids.insert(id.to_owned());
            }
        }
        match record.get("type").and_then(Value::as_str) {
            Some("tool_result") => {
                let call = record.get("callId").and_then(Value::as_str).unwrap_or("");
                self.results.push((call.to_owned(), strings.clone()));
            }
            Some("message") => {
                let author = record.get("author").and_then(Value::as_str);
                for key in ["content", "displayContent"] {
                    let parts = record.get(key).and_then(Value::as_array);
                    for part in parts.into_iter().flatten() {
                        let own = part.get("author").and_then(Value::as_str).or(author);
                        let mut texts: Vec<&str> = part
                            .get("text")
                            .and_then(Value::as_str)
                            .into_iter()
                            .collect();
                        let summary = part.get("summary").and_then(Value::as_array);
                        texts.extend(summary.into_iter().flatten().filter_map(Value::as_str));
                        for text in texts {
                            self.parts.push((text.to_owned(), own.map(str::to_owned)));
                        }
                    }
                }
            }
            Some("session") => self.headers.push(record.clone()),
            _ => {}
        }
        self.strings.extend(strings);
    }
}

/// Every string in `value`, and every concatenation of consecutive `text` members of the
/// elements of one array.
fn strings_of(value: &Value) -> HashSet<String> {
    let mut strings = HashSet::new();
    each_string(value, "", &mut |_, s| {
        strings.insert(s.to_owned());
    });
    let mut arrays = vec![value];
    while let Some(v) = arrays.pop() {
        match v {
            Value::Array(items) => {
                for start in 0..items.len() {
                    let mut joined = String::new();
                    for item in &items[start..] {
                        let Some(text) = item.get("text").and_then(Value::as_str) else {
                            break;
                        };
                        joined.push_str(text);
                        strings.insert(joined.clone());
                    }
                }
                arrays.extend(items);
            }
            Value::Object(members) => arrays.extend(members.values()),
            _ => {}
        }
    }
    strings
}

/// What of a golden header its session's facts do not bear out.
fn compare_header(header: &Value, sessions: &[Session]) -> Vec<String> {
    let id = header
        .get("sessionId")
        .and_then(Value::as_str)
        .unwrap_or("");
    let Some(session) = sessions
        .iter()
        .find(|s| s.id == id || s.aliases.iter().any(|a| a == id))
    else {
        return vec![format!("no session {id:?}")];
    };
    let mut problems = Vec::new();
    let scope = header.get("scope").and_then(Value::as_str);
    // A header without scope, or without a facet, claims nothing (ASR-401): only what it
    // claims must have its fact.
    if scope.is_some() && scope != session.scope.as_deref() {
        problems.push(format!("{id}: scope {scope:?}, facts {:?}", session.scope));
    }
    let lineage = header.get("lineage");
    let root = lineage.and_then(|l| l.get("root")) == Some(&Value::Bool(true));
    if root != session.root {
        problems.push(format!("{id}: root {root}, facts {}", session.root));
    }
    let mut facets: Vec<(&str, &Value)> = Vec::new();
    for (name, value) in lineage.and_then(Value::as_object).into_iter().flatten() {
        match (name.as_str(), value) {
            ("executedBy", Value::Array(entries)) => {
                facets.extend(entries.iter().map(|e| ("executedBy", e)));
            }
            ("spawnedBy" | "forkedFrom" | "continues" | "relatedUnknown", _) => {
                facets.push((name.as_str(), value));
            }
            _ => {}
        }
    }
    for (facet, value) in &facets {
        let to = value.get("session").and_then(Value::as_str).unwrap_or("");
        let evidence = value.get("evidence").and_then(Value::as_str);
        let found = session.pointers.iter().any(|p| {
            (p.to == to || to.ends_with(&format!(":{}", p.to)))
                && Some(p.evidence.as_str()) == evidence
                && (*facet == "relatedUnknown" || p.meaning.map(Relation::facet) == Some(facet))
        });
        if !found {
            problems.push(format!("{id}: {facet} to {to:?} has no pointer"));
        }
    }
    problems
}

/// Asserts that the disagreements of `format`'s fixtures are exactly `known`: each a
/// fixture's name and the opening of one disagreement's words, each matching one.
pub(super) fn assert_known(format: &str, known: &[(&str, &str)]) {
    let found = disagreements(format);
    let mut unmatched: Vec<(&str, &str)> = known.to_vec();
    let mut unexpected = Vec::new();
    for (name, problems) in &found {
        for problem in problems {
            match unmatched
                .iter()
                .position(|(n, opening)| n == name && problem.starts_with(opening))
            {
                Some(n) => {
                    unmatched.remove(n);
                }
                None => unexpected.push(format!("{name}: {problem}")),
            }
        }
    }
    assert!(
        unexpected.is_empty(),
        "disagreements not known: {unexpected:#?}"
    );
    assert!(
        unmatched.is_empty(),
        "known disagreements not found: {unmatched:#?}"
    );
}
