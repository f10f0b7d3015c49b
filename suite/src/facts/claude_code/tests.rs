use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::facts::{Facts, ItemKind, Relation, Session, TextKind, Writer, read};

const FORMAT: &str = "claude-code-jsonl";

fn facts_of(files: &[(&str, &str)]) -> Facts {
    let files: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|(name, text)| ((*name).to_owned(), text.as_bytes().to_vec()))
        .collect();
    read(FORMAT, &files)
}

/// The golden streams of a fixture, each a list of records.
struct Golden {
    streams: Vec<(String, Vec<Value>)>,
}

impl Golden {
    fn records(&self) -> impl Iterator<Item = &Value> {
        self.streams.iter().flat_map(|(_, records)| records.iter())
    }

    /// Every string value of the streams, and every concatenation of consecutive `text`
    /// members of one content array.
    fn strings(&self) -> BTreeSet<String> {
        let mut strings = BTreeSet::new();
        for record in self.records() {
            collect_strings(record, &mut strings);
        }
        strings
    }

    /// Every `messageId` and `callId` of the streams.
    fn ids(&self) -> BTreeSet<String> {
        let mut ids = BTreeSet::new();
        for record in self.records() {
            for key in ["messageId", "callId"] {
                if let Some(id) = record.get(key).and_then(Value::as_str) {
                    ids.insert(id.to_owned());
                }
            }
        }
        ids
    }

    /// Each message part's strings with the part's effective author.
    fn parts(&self) -> Vec<(Option<String>, BTreeSet<String>)> {
        let mut parts = Vec::new();
        for record in self.records() {
            if record.get("type").and_then(Value::as_str) != Some("message") {
                continue;
            }
            let author = record.get("author").and_then(Value::as_str);
            for part in record
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let own = part.get("author").and_then(Value::as_str);
                let mut strings = BTreeSet::new();
                collect_strings(part, &mut strings);
                parts.push((own.or(author).map(str::to_owned), strings));
            }
        }
        parts
    }
}

fn collect_strings(value: &Value, strings: &mut BTreeSet<String>) {
    match value {
        Value::String(s) => {
            strings.insert(s.clone());
        }
        Value::Array(items) => {
            for start in 0..items.len() {
                let mut joined = String::new();
                for item in &items[start..] {
                    match item.get("text").and_then(Value::as_str) {
                        Some(text) => {
                            joined.push_str(text);
                            strings.insert(joined.clone());
                        }
                        None => break,
                    }
                }
            }
            for item in items {
                collect_strings(item, strings);
            }
        }
        Value::Object(members) => {
            for v in members.values() {
                collect_strings(v, strings);
            }
        }
        _ => {}
    }
}

fn golden(expected: Vec<(String, Vec<u8>)>) -> Golden {
    let mut streams = Vec::new();
    for (name, bytes) in expected {
        let text = String::from_utf8(bytes).unwrap_or_default();
        let records = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or(Value::Null))
            .collect();
        streams.push((name, records));
    }
    Golden { streams }
}

fn session_named<'a>(facts: &'a Facts, id: &str) -> Option<&'a Session> {
    facts
        .sessions
        .iter()
        .find(|s| s.id == id || s.aliases.iter().any(|a| a == id))
}

/// What one fixture's facts break of its goldens, one line each.
fn fixture_problems(facts: &Facts, golden: &Golden) -> Vec<String> {
    let mut problems = Vec::new();
    let strings = golden.strings();
    let ids = golden.ids();
    for item in &facts.items {
        for text in &item.texts {
            if !strings.contains(&text.text) {
                problems.push(format!(
                    "text at {} is in no golden: {:?}",
                    text.at, text.text
                ));
            }
        }
        match item.kind {
            ItemKind::Message | ItemKind::Reasoning | ItemKind::ToolCall => {
                match item.ids.first() {
                    Some(id) if ids.contains(id) => {}
                    id => problems.push(format!("item at {} has id {id:?}, in no golden", item.at)),
                }
            }
            ItemKind::ToolResult => {
                let answers = item.answers.as_deref();
                for text in &item.texts {
                    let holders: Vec<&Value> = golden
                        .records()
                        .filter(|r| r.get("type").and_then(Value::as_str) == Some("tool_result"))
                        .filter(|r| {
                            let mut s = BTreeSet::new();
                            collect_strings(r, &mut s);
                            s.contains(&text.text)
                        })
                        .collect();
                    if !holders
                        .iter()
                        .any(|r| r.get("callId").and_then(Value::as_str) == answers)
                    {
                        problems.push(format!(
                            "tool result at {} answers {answers:?}, no golden result of it holds its text",
                            item.at
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    let person: Vec<&str> = facts
        .items
        .iter()
        .flat_map(|i| i.texts.iter())
        .filter(|t| t.writer == Writer::Person)
        .map(|t| t.text.as_str())
        .collect();
    for (author, part) in golden.parts() {
        match author.as_deref() {
            Some("human") => {
                for s in &part {
                    let is_text = facts
                        .items
                        .iter()
                        .flat_map(|i| i.texts.iter())
                        .any(|t| &t.text == s);
                    if is_text && !person.contains(&s.as_str()) {
                        problems.push(format!("golden human text is no Person fact: {s:?}"));
                    }
                }
                if !part.iter().any(|s| person.contains(&s.as_str())) {
                    problems.push(format!("golden human part holds no Person fact: {part:?}"));
                }
            }
            Some("harness" | "hook" | "tool") => {
                for s in &part {
                    if person.contains(&s.as_str()) {
                        problems.push(format!("Person text in an inserted part: {s:?}"));
                    }
                }
            }
            _ => {}
        }
    }
    let mut headers = BTreeSet::new();
    for (name, records) in &golden.streams {
        let Some(header) = records.first() else {
            continue;
        };
        let id = header
            .get("sessionId")
            .and_then(Value::as_str)
            .unwrap_or("");
        headers.insert(id.to_owned());
        let Some(session) = session_named(facts, id) else {
            problems.push(format!(
                "stream {name:?}: session {id:?} is no session of the facts"
            ));
            continue;
        };
        if let Some(scope) = header.get("scope").and_then(Value::as_str) {
            if session.scope.as_deref() != Some(scope) {
                problems.push(format!(
                    "stream {name:?}: scope {scope} but {:?}",
                    session.scope
                ));
            }
        }
        let lineage = header.get("lineage");
        if lineage.and_then(|l| l.get("root")) == Some(&Value::Bool(true)) && !session.root {
            problems.push(format!("stream {name:?}: root, the session is no root"));
        }
        for (facet, meaning) in [
            ("spawnedBy", Some(Relation::SpawnedBy)),
            ("forkedFrom", Some(Relation::ForkedFrom)),
            ("continues", Some(Relation::Continues)),
            ("relatedUnknown", None),
        ] {
            let Some(facet_value) = lineage.and_then(|l| l.get(facet)) else {
                continue;
            };
            let to = facet_value
                .get("session")
                .and_then(Value::as_str)
                .and_then(|s| s.strip_prefix("claude-code:"))
                .unwrap_or("");
            let evidence = facet_value.get("evidence").and_then(Value::as_str);
            let record = facet_value.get("record").and_then(Value::as_str);
            let found = session.pointers.iter().any(|p| {
                p.to == to
                    && p.meaning == meaning
                    && Some(p.evidence.as_str()) == evidence
                    && (record.is_none() || p.record.as_deref() == record)
            });
            if !found {
                problems.push(format!("stream {name:?}: {facet} to {to} is no pointer"));
            }
        }
    }
    for session in &facts.sessions {
        if !headers.contains(&session.id) && !session.aliases.iter().any(|a| headers.contains(a)) {
            problems.push(format!("session {} has no golden stream", session.id));
        }
    }
    problems
}

#[test]
fn every_fixture_agrees_with_its_goldens() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/sources");
    let fixtures = crate::source::load_fixtures(&root).unwrap_or_default();
    let mut seen = 0;
    let mut problems = Vec::new();
    for fixture in fixtures.iter().filter(|f| f.sidecar.format == FORMAT) {
        seen += 1;
        let (Ok(source), Ok(expected)) = (fixture.source(), fixture.expected()) else {
            problems.push(format!("{}: not loaded", fixture.name));
            continue;
        };
        let facts = read(FORMAT, source.files());
        assert!(facts.known);
        if !facts.unknown.is_empty() {
            problems.push(format!("{}: unknown {:?}", fixture.name, facts.unknown));
        }
        if facts.items.is_empty() || facts.sessions.is_empty() {
            problems.push(format!("{}: no facts", fixture.name));
        }
        for problem in fixture_problems(&facts, &golden(expected)) {
            problems.push(format!("{}: {problem}", fixture.name));
        }
    }
    assert_eq!(seen, 14, "the claude-code-jsonl fixtures");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_real_sessions_are_read_whole() {
    let dir = Path::new("/work/shared/real-sessions");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("claude-code__") {
            continue;
        }
        let bytes = std::fs::read(entry.path()).unwrap_or_default();
        // The subagent file keeps the name Claude Code gave it after the last `-`-joined
        // directory parts.
        let native = name.rsplit("subagents-").next().unwrap_or(&name).to_owned();
        let facts = read(FORMAT, &[(native, bytes)]);
        assert!(facts.unknown.is_empty(), "{name}: {:?}", facts.unknown);
        assert!(!facts.sessions.is_empty(), "{name}");
        assert!(
            facts.items.iter().any(|i| !i.texts.is_empty()),
            "{name}: no texts"
        );
    }
}

#[test]
fn one_response_split_over_lines_is_one_message() {
    let facts = facts_of(&[(
        "s1.jsonl",
        concat!(
            r#"{"type":"assistant","uuid":"a1","sessionId":"s1","isSidechain":false,"message":{"id":"msg_1","role":"assistant","model":"m","content":[{"type":"thinking","thinking":"Think.\n","signature":"sig"}]}}"#,
            "\n",
            r#"{"type":"assistant","uuid":"a2","sessionId":"s1","isSidechain":false,"message":{"id":"msg_1","role":"assistant","model":"m","content":[{"type":"text","text":"Answer."}]}}"#,
            "\n",
            r#"{"type":"assistant","uuid":"a3","sessionId":"s1","isSidechain":false,"message":{"id":"msg_1","role":"assistant","model":"m","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls -la","timeout":5}}]}}"#,
            "\n",
        ),
    )]);
    assert_eq!(facts.items.len(), 2);
    let message = &facts.items[0];
    assert_eq!(message.kind, ItemKind::Message);
    // The tool call's line is a line of the response too: its uuid is the message's.
    assert_eq!(message.ids, ["msg_1", "a1", "a2", "a3"]);
    let texts: Vec<(&str, TextKind, Writer)> = message
        .texts
        .iter()
        .map(|t| (t.text.as_str(), t.kind, t.writer))
        .collect();
    assert_eq!(
        texts,
        [
            ("Think.\n", TextKind::Reasoning, Writer::Model),
            ("Answer.", TextKind::Answer, Writer::Model)
        ]
    );
    assert!(!facts.items.iter().any(|i| i.kind == ItemKind::Reasoning));
    let call = &facts.items[1];
    assert_eq!(call.kind, ItemKind::ToolCall);
    assert_eq!(call.ids, ["toolu_1"]);
    assert_eq!(call.texts.len(), 1);
    assert_eq!(call.texts[0].text, "ls -la");
    assert_eq!(call.texts[0].kind, TextKind::ToolInput);
    assert_eq!(facts.sessions.len(), 1);
    assert_eq!(facts.sessions[0].scope.as_deref(), Some("primary"));
    assert!(!facts.sessions[0].root);
}

#[test]
fn a_response_of_only_a_tool_call_is_no_message() {
    let facts = facts_of(&[(
        "s1.jsonl",
        r#"{"type":"assistant","uuid":"a3","sessionId":"s1","message":{"id":"msg_1","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}]}}"#,
    )]);
    let kinds: Vec<&ItemKind> = facts.items.iter().map(|i| &i.kind).collect();
    assert_eq!(kinds, [&ItemKind::ToolCall]);
    // No isSidechain marker: no scope.
    assert_eq!(facts.sessions[0].scope, None);
    // A text on a later line of the response makes the message, after the call.
    let facts = facts_of(&[(
        "s1.jsonl",
        concat!(
            r#"{"type":"assistant","uuid":"a1","sessionId":"s1","message":{"id":"msg_1","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}]}}"#,
            "\n",
            r#"{"type":"assistant","uuid":"a2","sessionId":"s1","message":{"id":"msg_1","content":[{"type":"text","text":"Read it."}]}}"#,
        ),
    )]);
    let kinds: Vec<&ItemKind> = facts.items.iter().map(|i| &i.kind).collect();
    assert_eq!(kinds, [&ItemKind::ToolCall, &ItemKind::Message]);
    assert_eq!(facts.items[1].ids, ["msg_1", "a1", "a2"]);
}

#[test]
fn tool_results_answer_their_call_with_the_tools_text() {
    let facts = facts_of(&[(
        "s1.jsonl",
        concat!(
            r#"{"type":"user","uuid":"u1","sessionId":"s1","userType":"external","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"out\n"},{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","data":"AAAA"}},{"type":"text","text":"b"}]},{"type":"text","text":"[Request interrupted by user for tool use]"}]},"toolUseResult":{"stdout":"out\n","stderr":""}}"#,
            "\n"
        ),
    )]);
    let results: Vec<(Option<&str>, Vec<&str>)> = facts
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::ToolResult)
        .map(|i| {
            assert!(i.texts.iter().all(|t| t.writer == Writer::Tool));
            (
                i.answers.as_deref(),
                i.texts.iter().map(|t| t.text.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            (Some("toolu_1"), vec!["out\n"]),
            (Some("toolu_2"), vec!["a", "b"])
        ]
    );
    // The interruption notice follows the results, in its block's place.
    let last = &facts.items[2];
    assert_eq!(last.kind, ItemKind::Message);
    assert_eq!(last.ids, ["u1"]);
    assert_eq!(last.texts[0].writer, Writer::Harness);
}

/// The writer of the one text of a user line with `content` and `extra` members.
fn user_text_writer(file: &str, extra: &str, content: &str) -> Writer {
    let line = format!(
        r#"{{"type":"user","uuid":"u1","sessionId":"s1","userType":"external"{extra},"message":{{"role":"user","content":{content}}}}}"#
    );
    let facts = facts_of(&[(file, &line)]);
    assert_eq!(facts.items.len(), 1, "{line}");
    assert_eq!(facts.items[0].texts.len(), 1, "{line}");
    facts.items[0].texts[0].writer
}

#[test]
fn the_markers_decide_who_wrote_a_user_text() {
    let main = "s1.jsonl";
    let side = "agent-a1.jsonl";
    let cases = [
        (
            main,
            r#","isSidechain":false"#,
            r#""Fix it.""#,
            Writer::Person,
        ),
        (
            main,
            "",
            r#"[{"type":"text","text":"Fix it."}]"#,
            Writer::Person,
        ),
        (
            main,
            r#","isMeta":true"#,
            r#""Caveat: ignore""#,
            Writer::Harness,
        ),
        (
            main,
            r#","isCompactSummary":true"#,
            r#""This session is being continued""#,
            Writer::Harness,
        ),
        (
            main,
            r#","isMeta":true"#,
            r#""<system-reminder>\nPostToolUse:Edit hook additional context: x\n</system-reminder>""#,
            Writer::Hook,
        ),
        (
            main,
            r#","isMeta":true"#,
            r#""<system-reminder>\nThe todo list is empty.\n</system-reminder>""#,
            Writer::Harness,
        ),
        (
            main,
            "",
            r#""<command-name>/clear</command-name>\n  <command-args></command-args>""#,
            Writer::Unknown,
        ),
        (
            main,
            "",
            r#""<local-command-stdout>\u001b[2mdone\u001b[22m</local-command-stdout>""#,
            Writer::Harness,
        ),
        (main, "", r#""<bash-stdout>x</bash-stdout>""#, Writer::Tool),
        (
            main,
            "",
            r#""<user-prompt-submit-hook>ctx</user-prompt-submit-hook>""#,
            Writer::Hook,
        ),
        (
            main,
            "",
            r#""<task-notification>\n<status>completed</status>\n</task-notification>""#,
            Writer::Harness,
        ),
        (
            main,
            "",
            r#""Fix it.\n<system-reminder>x</system-reminder>""#,
            Writer::Unknown,
        ),
        (
            main,
            r#","userType":"internal""#,
            r#""Fix it.""#,
            Writer::Unknown,
        ),
        (
            main,
            r#","isSidechain":true"#,
            r#""Check the parser.""#,
            Writer::Agent,
        ),
        (
            side,
            r#","isSidechain":true,"agentId":"a1""#,
            r#""Check the parser.""#,
            Writer::Agent,
        ),
        (
            "agent-acompact-1.jsonl",
            r#","isSidechain":true,"agentId":"acompact-1""#,
            r#""Your task is to create a detailed summary""#,
            Writer::Harness,
        ),
    ];
    for (file, extra, content, writer) in cases {
        // A later userType member overrides the first one the helper writes.
        assert_eq!(
            user_text_writer(file, extra, content),
            writer,
            "{extra} {content}"
        );
    }
}

#[test]
fn a_synthetic_answer_is_the_harnesss() {
    let facts = facts_of(&[(
        "s1.jsonl",
        r#"{"type":"assistant","uuid":"a1","sessionId":"s1","isApiErrorMessage":true,"message":{"id":"x","model":"<synthetic>","content":[{"type":"text","text":"API Error"}]}}"#,
    )]);
    assert_eq!(facts.items[0].texts[0].writer, Writer::Harness);
}

#[test]
fn a_subagent_file_is_the_agents_session_spawned_by_its_parent() {
    let facts = facts_of(&[(
        "agent-a7c4.jsonl",
        concat!(
            r#"{"type":"user","uuid":"u1","parentUuid":"elsewhere","isSidechain":true,"agentId":"a7c4","sessionId":"p1","userType":"external","isMeta":true,"message":{"role":"user","content":"<system-reminder>\nctx\n</system-reminder>"}}"#,
            "\n",
            r#"{"type":"user","uuid":"u2","parentUuid":"u1","isSidechain":true,"agentId":"a7c4","sessionId":"p1","userType":"external","message":{"role":"user","content":"Explore."}}"#,
            "\n",
            r#"{"type":"user","uuid":"u3","parentUuid":"elsewhere-2","isSidechain":true,"agentId":"a7c4","sessionId":"p1","userType":"external","isMeta":true,"message":{"role":"user","content":"<system-reminder>\nmore\n</system-reminder>"}}"#,
            "\n",
        ),
    )]);
    assert_eq!(facts.sessions.len(), 1, "{:?}", facts.sessions);
    let session = &facts.sessions[0];
    assert_eq!(session.id, "a7c4");
    assert!(session.aliases.is_empty());
    assert_eq!(session.scope.as_deref(), Some("subagent"));
    assert!(!session.root);
    let pointers: Vec<(&str, Option<Relation>, Option<&str>, &str)> = session
        .pointers
        .iter()
        .map(|p| {
            (
                p.to.as_str(),
                p.meaning,
                p.record.as_deref(),
                p.evidence.as_str(),
            )
        })
        .collect();
    // The dangling parents are one pointer of unknown meaning, however many lines have one.
    assert_eq!(
        pointers,
        [
            ("p1", None, None, "native_field"),
            ("p1", Some(Relation::SpawnedBy), None, "native_field")
        ]
    );
    assert_eq!(facts.items[1].texts[0].writer, Writer::Agent);
}

#[test]
fn inline_sidechains_are_sessions_of_their_own() {
    let facts = facts_of(&[(
        "p1.jsonl",
        concat!(
            r#"{"type":"summary","summary":"Old title","leafUuid":"zz"}"#,
            "\n",
            r#"{"type":"user","uuid":"u1","parentUuid":null,"isSidechain":false,"sessionId":"p1","userType":"external","message":{"role":"user","content":"Ask two agents."}}"#,
            "\n",
            r#"{"type":"user","uuid":"c1","parentUuid":null,"isSidechain":true,"sessionId":"p1","userType":"external","message":{"role":"user","content":"First task."}}"#,
            "\n",
            r#"{"type":"user","uuid":"d1","parentUuid":null,"isSidechain":true,"sessionId":"p1","userType":"external","message":{"role":"user","content":"Second task."}}"#,
            "\n",
            r#"{"type":"assistant","uuid":"c2","parentUuid":"c1","isSidechain":true,"sessionId":"p1","message":{"id":"m1","content":[{"type":"text","text":"Done one."}]}}"#,
            "\n",
        ),
    )]);
    let ids: Vec<&str> = facts.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["p1", "c1", "d1"]);
    assert_eq!(facts.sessions[0].scope.as_deref(), Some("primary"));
    assert!(facts.sessions[0].pointers.is_empty());
    for sidechain in &facts.sessions[1..] {
        assert_eq!(sidechain.scope.as_deref(), Some("subagent"));
        assert_eq!(sidechain.pointers.len(), 1);
        let pointer = &sidechain.pointers[0];
        assert_eq!(
            (
                pointer.to.as_str(),
                pointer.meaning,
                pointer.record.as_deref()
            ),
            ("p1", Some(Relation::SpawnedBy), None)
        );
        assert_eq!(pointer.evidence, "native_structure");
    }
    let sessions: Vec<usize> = facts.items.iter().map(|i| i.session).collect();
    assert_eq!(sessions, [0, 0, 1, 2, 1]);
    assert_eq!(facts.items[0].kind, ItemKind::Other("summary".to_owned()));
    assert!(facts.items[0].texts.is_empty());
    assert_eq!(facts.items[2].texts[0].writer, Writer::Agent);
}

#[test]
fn two_main_files_are_two_unrelated_sessions() {
    let line = |s: &str| {
        format!(
            r#"{{"type":"user","uuid":"u-{s}","parentUuid":null,"isSidechain":false,"sessionId":"{s}","cwd":"/same","userType":"external","message":{{"role":"user","content":"hi"}}}}"#
        )
    };
    let facts = facts_of(&[("a.jsonl", &line("a")), ("b.jsonl", &line("b"))]);
    assert_eq!(facts.sessions.len(), 2);
    assert!(
        facts
            .sessions
            .iter()
            .all(|s| s.pointers.is_empty() && !s.root)
    );
}

#[test]
fn records_a_producer_need_not_write_have_no_texts() {
    let facts = facts_of(&[(
        "s1.jsonl",
        concat!(
            r#"{"type":"file-history-snapshot","messageId":"u1","snapshot":{"trackedFileBackups":{}}}"#,
            "\n",
            r#"{"type":"queue-operation","operation":"enqueue","sessionId":"s1","content":"later"}"#,
            "\n",
            r#"{"type":"system","subtype":"compact_boundary","uuid":"b1","sessionId":"s1","content":"Conversation compacted"}"#,
            "\n",
            r#"{"type":"system","subtype":"informational","uuid":"n1","sessionId":"s1","content":"Model switched"}"#,
            "\n",
            r#"{"type":"system","subtype":"turn_duration","uuid":"n2","sessionId":"s1","durationMs":5}"#,
            "\n",
            r#"{"type":"system","subtype":"local_command","uuid":"n3","sessionId":"s1","content":"<command-name>/model</command-name>"}"#,
            "\n",
            r#"{"type":"system","subtype":"local_command","uuid":"n4","sessionId":"s1","content":"<local-command-stdout>Set model</local-command-stdout>"}"#,
            "\n",
        ),
    )]);
    let kinds: Vec<&ItemKind> = facts.items.iter().map(|i| &i.kind).collect();
    assert_eq!(
        kinds,
        [
            &ItemKind::Other("file-history-snapshot".to_owned()),
            &ItemKind::Other("queue-operation".to_owned()),
            &ItemKind::Other("compact_boundary".to_owned()),
            &ItemKind::Notice,
            &ItemKind::Other("turn_duration".to_owned()),
            &ItemKind::Message,
            &ItemKind::Message,
        ]
    );
    let texts: Vec<usize> = facts.items.iter().map(|i| i.texts.len()).collect();
    assert_eq!(texts, [0, 0, 0, 1, 0, 1, 1]);
    let writers: Vec<Writer> = facts
        .items
        .iter()
        .flat_map(|i| i.texts.iter().map(|t| t.writer))
        .collect();
    assert_eq!(writers, [Writer::Harness, Writer::Unknown, Writer::Harness]);
    assert_eq!(facts.items[5].ids, ["n3"]);
    assert_eq!(facts.sessions.len(), 1);
}

#[test]
fn an_ide_selection_is_the_harnesss_attachment() {
    let facts = facts_of(&[(
        "s1.jsonl",
        r#"{"type":"attachment","uuid":"t1","sessionId":"s1","attachment":{"type":"selected_lines_in_ide","filename":"/a/b.rs","lineStart":1,"content":"fn a() {}\n"}}"#,
    )]);
    let item = &facts.items[0];
    assert_eq!(
        (item.kind.clone(), item.ids.clone()),
        (ItemKind::Message, vec!["t1".to_owned()])
    );
    let texts: Vec<(&str, TextKind, Writer)> = item
        .texts
        .iter()
        .map(|t| (t.text.as_str(), t.kind, t.writer))
        .collect();
    assert_eq!(
        texts,
        [("fn a() {}\n", TextKind::Attachment, Writer::Harness)]
    );
}

#[test]
fn what_is_unknown_is_recorded_never_failed() {
    let facts = facts_of(&[
        (
            "s1.jsonl",
            "{not json\n[1,2]\n{\"type\":\"mystery\"}\n{\"type\":\"user\",\"uuid\":\"u1\"}\n",
        ),
        ("notes.txt", "hello"),
    ]);
    let unknown: Vec<String> = facts.unknown.iter().map(ToString::to_string).collect();
    assert_eq!(
        unknown,
        [
            "notes.txt",
            "s1.jsonl line 1",
            "s1.jsonl line 2",
            "s1.jsonl line 3",
            "s1.jsonl line 4 /message",
        ]
    );
    assert!(facts.items.is_empty());
}

#[test]
fn an_empty_file_gives_no_facts() {
    let facts = facts_of(&[("s1.jsonl", "")]);
    assert!(facts.known);
    assert!(facts.sessions.is_empty() && facts.items.is_empty() && facts.unknown.is_empty());
}

#[test]
fn a_commands_output_the_result_does_not_hold_is_a_text() {
    let line = |content: &str| {
        format!(
            r#"{{"type":"user","uuid":"u1","sessionId":"s1","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":{content}}}]}},"toolUseResult":{{"stdout":"compiled\n","stderr":"warning: x","interrupted":false}}}}"#
        )
    };
    let texts = |content: &str| -> Vec<String> {
        let facts = facts_of(&[("s1.jsonl", &line(content))]);
        assert_eq!(facts.items.len(), 1);
        assert!(
            facts.items[0]
                .texts
                .iter()
                .all(|t| t.writer == Writer::Tool)
        );
        facts.items[0]
            .texts
            .iter()
            .map(|t| t.text.clone())
            .collect()
    };
    // The result holds both: they are no texts of their own.
    assert_eq!(texts(r#""compiled\nwarning: x""#), ["compiled\nwarning: x"]);
    assert_eq!(texts(r#""compiled warning: x""#), ["compiled warning: x"]);
    // The result holds only the first lines of the output.
    assert_eq!(texts(r#""compi""#), ["compi", "compiled\n", "warning: x"]);
}

#[test]
fn a_subagents_prompt_records_its_sender() {
    let facts = facts_of(&[(
        "agent-a1.jsonl",
        r#"{"type":"user","uuid":"u1","isSidechain":true,"agentId":"a1","sessionId":"p1","userType":"external","message":{"role":"user","content":"Explore."}}"#,
    )]);
    assert_eq!(facts.items[0].recorded, ["from"]);
    let facts = facts_of(&[(
        "p1.jsonl",
        r#"{"type":"user","uuid":"u1","isSidechain":false,"sessionId":"p1","userType":"external","message":{"role":"user","content":"Explore."}}"#,
    )]);
    assert!(facts.items[0].recorded.is_empty());
}

#[test]
fn an_unmarked_line_of_a_subagent_file_is_the_subagents() {
    let facts = facts_of(&[(
        "agent-a1.jsonl",
        r#"{"type":"assistant","uuid":"x1","sessionId":"p1","message":{"id":"m1","content":[{"type":"text","text":"Done."}]}}"#,
    )]);
    assert_eq!(facts.sessions.len(), 1);
    assert_eq!(facts.sessions[0].id, "a1");
    assert_eq!(facts.sessions[0].scope, None);
    assert!(facts.sessions[0].pointers.is_empty());
}
