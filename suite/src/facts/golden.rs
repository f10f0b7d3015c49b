//! Test support: a reader's facts held against the golden streams of every fixture of its
//! format, so that a reader and the kit's hand-written goldens are known to agree (or where
//! they do not, which fixture and why).
//!
//! What is held, for each fixture: the reader knows the format, makes out every line and
//! finds items and sessions; every text fact stands in the goldens byte for byte (a string
//! value, or consecutive `text` members of one array joined); the first id of each message,
//! reasoning item and tool call is a golden `messageId` or `callId`; each tool result
//! answers a call and its texts stand in a golden tool_result of that call; a golden part a
//! human wrote holds Person facts and only Person facts, and no Person fact stands in a
//! part of the harness, a hook or a tool; each stream opens with a session header whose
//! session is one of the facts', with its scope, its root and its lineage (each facet one
//! pointer of the facts, each pointer one facet); and every session of the facts has a
//! stream.

use super::{Facts, ItemKind, Relation, Session, Text, TextKind, Writer, read};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

/// Asserts that the disagreements of `format`'s fixtures are exactly `known`: each a
/// fixture's name and the opening of one disagreement's words, each matching one. Returns
/// how many fixtures there are.
pub(super) fn assert_known(format: &str, known: &[(&str, &str)]) -> usize {
    assert_known_read_as(format, format, known)
}

/// [`assert_known`] for the fixtures of `format` read by the reader of `reader`, a format
/// whose files are `format`'s.
pub(super) fn assert_known_read_as(format: &str, reader: &str, known: &[(&str, &str)]) -> usize {
    let (count, found) = disagreements(format, reader);
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
    count
}

/// The facts `format`'s reader reads of `files`, each a name and its text: the input of a
/// reader's unit tests.
pub(super) fn read_texts(format: &str, files: &[(&str, &str)]) -> Facts {
    let files: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|(name, text)| ((*name).to_owned(), text.as_bytes().to_vec()))
        .collect();
    read(format, &files)
}

/// Each of `texts` as its words, its kind and its writer, as a reader's unit tests compare
/// them.
pub(super) fn described<'a>(
    texts: impl IntoIterator<Item = &'a Text>,
) -> Vec<(&'a str, TextKind, Writer)> {
    texts
        .into_iter()
        .map(|t| (t.text.as_str(), t.kind, t.writer))
        .collect()
}

/// How many fixtures of `format` there are, and for each (by name) on which the facts
/// `reader` reads and the golden disagree, what disagrees, in words; fixtures that agree
/// are absent. Panics when there is no fixture of the format or one cannot be read: a test
/// of the corpus, not of untrusted input.
fn disagreements(format: &str, reader: &str) -> (usize, BTreeMap<String, Vec<String>>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/sources");
    let fixtures = crate::source::load_fixtures(&root).expect("the fixtures load");
    let mut found = BTreeMap::new();
    let mut seen = 0;
    for fixture in fixtures.iter().filter(|f| f.sidecar.format == format) {
        seen += 1;
        let source = fixture.source().expect("the source loads");
        let facts = read(reader, source.files());
        let streams = fixture.expected().expect("the golden loads");
        let problems = compare(&facts, &streams);
        if !problems.is_empty() {
            found.insert(fixture.name.clone(), problems);
        }
    }
    assert!(seen > 0, "no fixture of {format}");
    (seen, found)
}

/// What of `facts` the golden `streams` (name, bytes) do not bear out.
fn compare(facts: &Facts, streams: &[(String, Vec<u8>)]) -> Vec<String> {
    let mut problems = Vec::new();
    if !facts.known {
        problems.push(format!("no reader of {}", facts.format));
    }
    for at in &facts.unknown {
        problems.push(format!("unknown: {at}"));
    }
    if facts.items.is_empty() || facts.sessions.is_empty() {
        problems.push("no facts".to_owned());
    }
    let golden = Golden::new(streams, &mut problems);
    problems.extend(compare_items(facts, &golden));
    problems.extend(compare_authors(facts, &golden));
    let mut streamed = HashSet::new();
    for (name, records) in &golden.streams {
        if records
            .first()
            .and_then(|r| r.get("type"))
            .and_then(Value::as_str)
            != Some("session")
        {
            problems.push(format!("stream {name:?} opens with no session header"));
        }
        for header in records
            .iter()
            .filter(|r| r.get("type").and_then(Value::as_str) == Some("session"))
        {
            match compare_header(header, &facts.sessions) {
                Ok((n, header_problems)) => {
                    streamed.insert(n);
                    problems.extend(header_problems);
                }
                Err(problem) => problems.push(problem),
            }
        }
    }
    for (n, session) in facts.sessions.iter().enumerate() {
        if !streamed.contains(&n) {
            problems.push(format!("session {} has no golden stream", session.id));
        }
    }
    problems
}

/// The golden streams, as the comparisons read them.
struct Golden {
    /// Each stream's name and records.
    streams: Vec<(String, Vec<Value>)>,
    /// Every string value, and every concatenation of consecutive `text` members of one
    /// array.
    strings: HashSet<String>,
    /// Every `messageId` and `callId`.
    ids: HashSet<String>,
    /// Each tool_result's callId and the strings it holds.
    results: Vec<(Option<String>, HashSet<String>)>,
}

impl Golden {
    /// The golden of `streams`; a line that is no JSON is a problem.
    fn new(streams: &[(String, Vec<u8>)], problems: &mut Vec<String>) -> Self {
        let mut golden = Golden {
            streams: Vec::new(),
            strings: HashSet::new(),
            ids: HashSet::new(),
            results: Vec::new(),
        };
        for (name, bytes) in streams {
            let mut records = Vec::new();
            for line in crate::lines::split(bytes).bytes() {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match serde_json::from_slice::<Value>(line) {
                    Ok(record) => records.push(record),
                    Err(e) => problems.push(format!("stream {name:?}: {e}")),
                }
            }
            for record in &records {
                golden.record(record);
            }
            golden.streams.push((name.clone(), records));
        }
        golden
    }

    fn record(&mut self, record: &Value) {
        let mut strings = HashSet::new();
        strings_of(record, &mut strings);
        for key in ["messageId", "callId"] {
            if let Some(id) = record.get(key).and_then(Value::as_str) {
                self.ids.insert(id.to_owned());
            }
        }
        if record.get("type").and_then(Value::as_str) == Some("tool_result") {
            let call = record.get("callId").and_then(Value::as_str);
            self.results
                .push((call.map(str::to_owned), strings.clone()));
        }
        self.strings.extend(strings);
    }

    fn records(&self) -> impl Iterator<Item = &Value> {
        self.streams.iter().flat_map(|(_, records)| records)
    }
}

/// What of the items' texts, ids and tool results the golden does not bear out.
fn compare_items(facts: &Facts, golden: &Golden) -> Vec<String> {
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
        match &item.kind {
            ItemKind::Message | ItemKind::Reasoning | ItemKind::ToolCall => {
                match item.ids.first() {
                    Some(id) if golden.ids.contains(id) => {}
                    Some(id) => problems.push(format!("id not in the golden: {id} [{}]", item.at)),
                    None => problems.push(format!("no id [{}]", item.at)),
                }
            }
            ItemKind::ToolResult => {
                let Some(call) = &item.answers else {
                    problems.push(format!("a tool result answers no call [{}]", item.at));
                    continue;
                };
                let answering = |(id, _): &&(Option<String>, HashSet<String>)| {
                    id.as_deref() == Some(call.as_str())
                };
                if !golden.results.iter().any(|r| answering(&r)) {
                    problems.push(format!("no tool_result answers {call} [{}]", item.at));
                    continue;
                }
                for text in &item.texts {
                    let holders: Vec<&(Option<String>, HashSet<String>)> = golden
                        .results
                        .iter()
                        .filter(|(_, strings)| strings.contains(&text.text))
                        .collect();
                    if !holders.iter().any(answering) {
                        let ids: Vec<&Option<String>> = holders.iter().map(|(id, _)| id).collect();
                        problems.push(format!(
                            "the result answering {call} is in tool_result {ids:?} [{}]",
                            text.at
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    problems
}

/// What of the golden parts' authors the facts' writers do not bear out: a human's part
/// holds Person facts and only those, an inserted part (harness, hook, tool) none.
fn compare_authors(facts: &Facts, golden: &Golden) -> Vec<String> {
    let texts = facts.items.iter().flat_map(|i| &i.texts);
    let person: HashSet<&str> = texts
        .clone()
        .filter(|t| t.writer == Writer::Person)
        .map(|t| t.text.as_str())
        .collect();
    let other: HashSet<&str> = texts
        .filter(|t| t.writer != Writer::Person)
        .map(|t| t.text.as_str())
        .collect();
    let mut problems = Vec::new();
    for record in golden.records() {
        let Some(message) = record.as_object() else {
            continue;
        };
        for key in ["content", "displayContent"] {
            let parts = record.get(key).and_then(Value::as_array);
            for (n, part) in parts.into_iter().flatten().enumerate() {
                let own = crate::model::Part::new(message, n, part).text("author");
                // The part's own words: its text and each segment of its summary.
                let mut words: Vec<&str> = part
                    .get("text")
                    .and_then(Value::as_str)
                    .into_iter()
                    .collect();
                let summary = part.get("summary").and_then(Value::as_array);
                words.extend(summary.into_iter().flatten().filter_map(Value::as_str));
                let mut strings = HashSet::new();
                strings_of(part, &mut strings);
                match own {
                    Some("human") => {
                        for text in &words {
                            if !person.contains(text) {
                                problems
                                    .push(format!("human in the golden, no person text: {text:?}"));
                            }
                        }
                        for s in &strings {
                            let s = s.as_str();
                            if !words.contains(&s) && other.contains(s) && !person.contains(s) {
                                problems.push(format!(
                                    "a human golden string is no person text: {s:?}"
                                ));
                            }
                        }
                        if words.is_empty() && !strings.iter().any(|s| person.contains(s.as_str()))
                        {
                            problems
                                .push(format!("a human golden part holds no person text: {part}"));
                        }
                    }
                    Some("harness" | "hook" | "tool") => {
                        for s in &strings {
                            if person.contains(s.as_str()) {
                                problems.push(format!("a person text under {own:?}: {s:?}"));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    problems
}

/// Every string in `value`, and every concatenation of consecutive `text` members of the
/// elements of one array.
fn strings_of(value: &Value, out: &mut HashSet<String>) {
    match value {
        Value::String(s) => {
            out.insert(s.clone());
        }
        Value::Array(items) => {
            for start in 0..items.len() {
                let mut joined = String::new();
                for item in &items[start..] {
                    let Some(text) = item.get("text").and_then(Value::as_str) else {
                        break;
                    };
                    joined.push_str(text);
                    out.insert(joined.clone());
                }
            }
            for item in items {
                strings_of(item, out);
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

/// One facet of a golden header's lineage, or one pointer of the facts, as they are held
/// against each other.
struct Link<'a> {
    facet: &'a str,
    to: &'a str,
    evidence: &'a str,
    record: Option<&'a str>,
}

impl std::fmt::Display for Link<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} to {:?} ({})", self.facet, self.to, self.evidence)?;
        if let Some(record) = self.record {
            write!(f, " record {record}")?;
        }
        Ok(())
    }
}

impl Link<'_> {
    /// Whether the golden facet `self` states the pointer `pointer`: a golden session
    /// reference (`format:id`) names the native id it ends in; a record the golden names
    /// the pointer names too.
    fn states(&self, pointer: &Link<'_>) -> bool {
        let to =
            self.to == pointer.to || self.to.split_once(':').map(|(_, id)| id) == Some(pointer.to);
        to && self.facet == pointer.facet
            && self.evidence == pointer.evidence
            && (self.record.is_none() || self.record == pointer.record)
    }
}

/// The index of the session a golden header names, and what of the header its facts do not
/// bear out; or, when it names none of them, that.
fn compare_header(header: &Value, sessions: &[Session]) -> Result<(usize, Vec<String>), String> {
    let id = header
        .get("sessionId")
        .and_then(Value::as_str)
        .unwrap_or("");
    let Some(n) = sessions
        .iter()
        .position(|s| s.id == id || s.aliases.iter().any(|a| a == id))
    else {
        return Err(format!("no session {id:?}"));
    };
    let session = &sessions[n];
    let mut problems = Vec::new();
    let scope = header.get("scope").and_then(Value::as_str);
    if scope != session.scope.as_deref() {
        problems.push(format!(
            "scope golden {scope:?}, facts {:?}: {id}",
            session.scope
        ));
    }
    let lineage = header.get("lineage");
    let root = lineage.and_then(|l| l.get("root")) == Some(&Value::Bool(true));
    if root != session.root {
        problems.push(format!("root golden {root}, facts {}: {id}", session.root));
    }
    let mut facets: Vec<Link<'_>> = Vec::new();
    for (name, value) in lineage.and_then(Value::as_object).into_iter().flatten() {
        let entries: Vec<&Value> = match value {
            Value::Bool(_) if name == "root" => continue,
            Value::Array(entries) => entries.iter().collect(),
            other => vec![other],
        };
        for entry in entries {
            let get = |k: &str| entry.get(k).and_then(Value::as_str);
            facets.push(Link {
                facet: name,
                to: get("session").unwrap_or(""),
                evidence: get("evidence").unwrap_or(""),
                record: get("record"),
            });
        }
    }
    let mut pointers: Vec<Option<Link<'_>>> = session
        .pointers
        .iter()
        .map(|p| {
            Some(Link {
                facet: p.meaning.map_or("relatedUnknown", Relation::facet),
                to: &p.to,
                evidence: &p.evidence,
                record: p.record.as_deref(),
            })
        })
        .collect();
    for facet in &facets {
        let stated = pointers
            .iter_mut()
            .find(|p| p.as_ref().is_some_and(|p| facet.states(p)));
        match stated {
            Some(pointer) => *pointer = None,
            None => problems.push(format!("a golden facet no pointer states: {facet} of {id}")),
        }
    }
    for pointer in pointers.into_iter().flatten() {
        problems.push(format!(
            "a pointer no golden facet states: {pointer} of {id}"
        ));
    }
    Ok((n, problems))
}

mod tests {
    use super::{compare, read_texts};

    const USER: &str = r#"{"type":"user","uuid":"u1","sessionId":"s1","isSidechain":false,"userType":"external","message":{"role":"user","content":"Fix it."}}"#;
    const HEADER: &str = r#"{"type":"session","sessionId":"s1","scope":"primary"}"#;

    /// The problems of the facts of `line` (one Claude Code line) against one golden stream
    /// of `records`.
    fn problems(line: &str, records: &[&str]) -> Vec<String> {
        let facts = read_texts("claude-code-jsonl", &[("s1.jsonl", line)]);
        let stream = ("s1.jsonl".to_owned(), records.join("\n").into_bytes());
        compare(&facts, &[stream])
    }

    fn message(author: &str, text: &str) -> String {
        format!(
            r#"{{"type":"message","messageId":"u1","author":"{author}","content":[{{"type":"text","text":"{text}"}}]}}"#
        )
    }

    #[test]
    fn a_golden_that_bears_the_facts_out_has_no_problem() {
        assert_eq!(
            problems(USER, &[HEADER, &message("human", "Fix it.")]),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_persons_text_under_the_harness_is_one() {
        assert_eq!(
            problems(USER, &[HEADER, &message("harness", "Fix it.")]),
            [r#"a person text under Some("harness"): "Fix it.""#]
        );
    }

    #[test]
    fn a_human_text_no_person_fact_holds_is_one() {
        let line = USER.replace(r#""userType":"external""#, r#""userType":"internal""#);
        assert_eq!(
            problems(&line, &[HEADER, &message("human", "Fix it.")]),
            [r#"human in the golden, no person text: "Fix it.""#]
        );
    }

    #[test]
    fn a_text_or_an_id_the_golden_lacks_is_one() {
        let found = problems(USER, &[HEADER, &message("human", "Fix it!")]);
        assert!(
            found[0].starts_with(r#"text not in the golden: "Fix it.""#),
            "{found:?}"
        );
        assert_eq!(found.len(), 2, "{found:?}");
        let other = r#"{"type":"message","messageId":"u2","author":"human","content":[{"type":"text","text":"Fix it."}]}"#;
        let found = problems(USER, &[HEADER, other]);
        assert_eq!(found, ["id not in the golden: u1 [s1.jsonl line 1]"]);
    }

    #[test]
    fn a_result_in_another_calls_tool_result_is_one() {
        let line = r#"{"type":"user","uuid":"u1","sessionId":"s1","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"out"}]}}"#;
        let result = |call: &str| {
            format!(
                r#"{{"type":"tool_result","callId":"{call}","content":[{{"type":"text","text":"out"}}]}}"#
            )
        };
        assert_eq!(
            problems(line, &[HEADER, &result("toolu_1")]),
            Vec::<String>::new()
        );
        let found = problems(line, &[HEADER, &result("toolu_2")]);
        assert_eq!(
            found,
            ["no tool_result answers toolu_1 [s1.jsonl line 1 /message/content/0]"]
        );
        let found = problems(
            line,
            &[
                HEADER,
                &result("toolu_1").replace("out", "in"),
                &result("toolu_2"),
            ],
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0]
                .starts_with(r#"the result answering toolu_1 is in tool_result [Some("toolu_2")]"#),
            "{found:?}"
        );
    }

    #[test]
    fn a_header_its_session_does_not_bear_out_is_one() {
        let human = message("human", "Fix it.");
        let found = problems(USER, &[r#"{"type":"session","sessionId":"s1"}"#, &human]);
        assert_eq!(found, [r#"scope golden None, facts Some("primary"): s1"#]);
        let lineage = r#"{"type":"session","sessionId":"s1","scope":"primary","lineage":{"root":true,"spawnedBy":{"session":"claude-code:p1","evidence":"native_field"}}}"#;
        let found = problems(USER, &[lineage, &human]);
        assert_eq!(
            found,
            [
                "root golden true, facts false: s1",
                r#"a golden facet no pointer states: spawnedBy to "claude-code:p1" (native_field) of s1"#
            ]
        );
        let other = r#"{"type":"session","sessionId":"s2","scope":"primary"}"#;
        let found = problems(USER, &[other, &human]);
        assert_eq!(
            found,
            [r#"no session "s2""#, "session s1 has no golden stream"]
        );
        let found = problems(USER, &[&human]);
        assert_eq!(
            found,
            [
                r#"stream "s1.jsonl" opens with no session header"#,
                "session s1 has no golden stream"
            ]
        );
    }

    #[test]
    fn a_pointer_no_golden_facet_states_is_one() {
        let line = r#"{"type":"user","uuid":"u1","isSidechain":true,"agentId":"a1","sessionId":"p1","userType":"external","message":{"role":"user","content":"Explore."}}"#;
        let facts = read_texts("claude-code-jsonl", &[("agent-a1.jsonl", line)]);
        let header = r#"{"type":"session","sessionId":"a1","scope":"subagent"}"#;
        let human = r#"{"type":"message","messageId":"u1","author":"agent","content":[{"type":"text","text":"Explore."}]}"#;
        let stream = |header: &str| {
            (
                "a1.jsonl".to_owned(),
                format!("{header}\n{human}").into_bytes(),
            )
        };
        assert_eq!(
            compare(&facts, &[stream(header)]),
            [r#"a pointer no golden facet states: spawnedBy to "p1" (native_field) of a1"#]
        );
        let spawned = r#"{"type":"session","sessionId":"a1","scope":"subagent","lineage":{"spawnedBy":{"session":"claude-code:p1","evidence":"native_field"}}}"#;
        assert_eq!(compare(&facts, &[stream(spawned)]), Vec::<String>::new());
    }
}
