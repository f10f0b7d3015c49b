//! The readers of OpenClaw's formats: its transcripts (pi's v3 session entries), its
//! session store, its cron run logs, and the Codex app-server binding kept beside a
//! transcript.
//!
//! The three formats are files of one state directory, and a fixture of any of them may
//! hold several: each file is read by its shape, not by the format named.

mod cron;
mod session;
mod sessions;

use super::{Facts, Location, Pointer, Relation, json_lines};
use serde_json::{Map, Value};

/// Reads `files` of `format` into `facts`.
pub(super) fn read(format: &str, files: &[&(String, Vec<u8>)], facts: &mut Facts) {
    // Every format is the same directory's files; the shapes tell them apart.
    let _ = format;
    let mut shapes = Vec::new();
    for file in files {
        shapes.push((file, shape(&file.0, &file.1, &mut facts.unknown)));
    }
    // Transcripts first: the bindings and the store point from their sessions.
    let mut transcripts: Vec<(&str, usize)> = Vec::new();
    for (file, shape) in &shapes {
        if let Shape::Transcript(lines) = shape
            && let Some(s) = session::read(&file.0, lines, facts)
        {
            transcripts.push((file.0.as_str(), s));
        }
    }
    let mut threads = Vec::new();
    for (file, shape) in &shapes {
        match shape {
            Shape::Binding(value) => {
                if let Some(thread) = binding(&file.0, value, &transcripts, facts) {
                    threads.push(thread);
                }
            }
            Shape::Store(value) => sessions::read(&file.0, value, facts),
            Shape::RunLog(lines) => cron::read(&file.0, lines, &mut facts.unknown),
            _ => {}
        }
    }
    for (file, shape) in &shapes {
        if let Shape::Rollout(id) = shape {
            // A rollout is read only when a binding names its thread, as the session
            // that ran the transcript's turns. Any other rollout beside the transcript is
            // not this session's, whatever its text or time (ASR-403, ASR-421).
            if threads.iter().any(|t| t == id) {
                super::codex::read(&[*file], facts);
            } else {
                facts.unknown.push(Location::file(&file.0, ""));
            }
        }
    }
}

/// What a file is, by its content.
enum Shape {
    /// A transcript's lines.
    Transcript(Vec<(usize, Map<String, Value>)>),
    /// A cron run log's lines.
    RunLog(Vec<(usize, Map<String, Value>)>),
    /// A Codex rollout, by its session id.
    Rollout(String),
    /// A Codex app-server binding sidecar.
    Binding(Value),
    /// A session store.
    Store(Value),
    /// Nothing to read (empty), or recorded as unknown already.
    None,
}

/// The shape of `file`; a file of no known shape is recorded in `unknown`.
fn shape(file: &str, bytes: &[u8], unknown: &mut Vec<Location>) -> Shape {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if body.iter().all(u8::is_ascii_whitespace) {
        return Shape::None;
    }
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        if value.get("threadId").is_some_and(Value::is_string) {
            return Shape::Binding(value);
        }
        if sessions::is_store(&value) {
            return Shape::Store(value);
        }
    }
    let mut lost = Vec::new();
    let lines = json_lines(file, bytes, &mut lost);
    let typed = |names: &[&str]| {
        lines.iter().any(|(_, line)| {
            line.get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| names.contains(&t))
        })
    };
    let shape = if typed(&["session"])
        || lines.iter().any(|(_, line)| {
            line.get("type").and_then(Value::as_str) == Some("message")
                && line.get("message").is_some_and(Value::is_object)
        }) {
        Shape::Transcript(lines)
    } else if cron::is_run_log(&lines) {
        Shape::RunLog(lines)
    } else if typed(&["session_meta", "response_item", "turn_context", "event_msg"]) {
        let id = lines
            .iter()
            .find(|(_, line)| line.get("type").and_then(Value::as_str) == Some("session_meta"))
            .and_then(|(_, line)| line.get("payload")?.get("id")?.as_str())
            .unwrap_or("")
            .to_owned();
        // The rollout reader records its own malformed lines.
        return Shape::Rollout(id);
    } else {
        unknown.push(Location::file(file, ""));
        return Shape::None;
    };
    unknown.extend(lost);
    shape
}

/// A Codex app-server binding: the transcript's session was run by the Codex thread it
/// names (executedBy, from a stored native thread id: ASR-421). The binding is no evidence
/// that the transcript copies the thread (ASR-422), so it makes nothing a copy. Returns
/// the thread id.
fn binding(
    file: &str,
    value: &Value,
    transcripts: &[(&str, usize)],
    facts: &mut Facts,
) -> Option<String> {
    let thread = value.get("threadId").and_then(Value::as_str)?;
    // OpenClaw names the sidecar after its transcript (`<file>.codex-app-server.json`);
    // sessionFile names it too.
    let own = file.strip_suffix(".codex-app-server.json");
    let named = value.get("sessionFile").and_then(Value::as_str);
    let session = transcripts.iter().find_map(|(name, s)| {
        let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
        (Some(*name) == own
            || named.is_some_and(|n| n == *name || n.ends_with(&format!("/{base}")) || n == base))
        .then_some(*s)
    });
    let Some(s) = session else {
        facts.unknown.push(Location::file(file, ""));
        return None;
    };
    if thread.is_empty() {
        return None;
    }
    facts.sessions[s].pointers.push(Pointer {
        to: format!("codex:{thread}"),
        meaning: Some(Relation::ExecutedBy),
        record: None,
        evidence: "native_field".to_owned(),
        at: Location::file(file, "/threadId"),
    });
    Some(thread.to_owned())
}

#[cfg(test)]
mod tests {
    use crate::facts::golden;
    use crate::facts::{Facts, ItemKind, Location, Relation, TextKind, Writer};

    fn read(format: &str, files: &[(&str, &str)]) -> Facts {
        golden::read_texts(format, files)
    }

    /// A session's pointers (target, meaning) and scope.
    type Read<'a> = (Vec<(&'a str, Option<Relation>)>, Option<&'a str>);

    const SESSION: &str = "openclaw-session-jsonl";

    fn transcript(lines: &[&str]) -> String {
        let mut text = String::from(
            r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-10-29T02:19:44.201Z","cwd":"/w"}"#,
        );
        for line in lines {
            text.push('\n');
            text.push_str(line);
        }
        text.push('\n');
        text
    }

    fn assistant(id: &str, provider: &str, model: &str, text: &str) -> String {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":null,"message":{{"role":"assistant","content":[{{"type":"text","text":{}}}],"api":"x","provider":"{provider}","model":"{model}","stopReason":"stop"}}}}"#,
            serde_json::Value::String(text.to_owned())
        )
    }

    fn user(id: &str, text: &str) -> String {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":null,"message":{{"role":"user","content":[{{"type":"text","text":{}}}]}}}}"#,
            serde_json::Value::String(text.to_owned())
        )
    }

    #[test]
    fn every_fixture_agrees_with_its_golden() {
        for (format, least) in [
            ("openclaw-session-jsonl", 5),
            ("openclaw-sessions-json", 1),
            ("openclaw-cron-run-log-jsonl", 1),
        ] {
            // The Codex rollout bound to the transcript is Codex's format, read by the Codex
            // reader: the OpenClaw readers make nothing of it.
            let known: &[(&str, &str)] = match format {
                "openclaw-session-jsonl" => &[(
                    "openclaw-session-jsonl/harness_switch_codex_01",
                    "unknown: rollout-",
                )],
                // A run's facts are the job's background session's, which the files hold
                // no transcript of (cron.rs): each line of the log is left unassigned.
                "openclaw-cron-run-log-jsonl" => &[
                    (
                        "openclaw-cron-run-log-jsonl/automation_result_run_id_01",
                        "unknown: b5e07c1d-93a2-4f6e-8d41-2c7a0e9f3b58.jsonl line 1",
                    ),
                    (
                        "openclaw-cron-run-log-jsonl/automation_result_run_id_01",
                        "unknown: b5e07c1d-93a2-4f6e-8d41-2c7a0e9f3b58.jsonl line 2",
                    ),
                ],
                _ => &[],
            };
            let count = golden::assert_known(format, known);
            assert!(count >= least, "{format}: {count} fixtures");
        }
    }

    #[test]
    fn a_delivery_mirror_is_a_copy_an_automation_result_is_not() {
        let automation = r#"{"type":"message","id":"a2","parentId":"m1","message":{"role":"assistant","content":[{"type":"text","text":"Backup done."}],"provider":"openclaw","model":"automation-result","openclawAutomation":{"kind":"cron","jobId":"j","runId":"r"}}}"#;
        let text = transcript(&[
            &assistant("m1", "openclaw", "delivery-mirror", "Backup done."),
            automation,
            &assistant("a3", "anthropic", "claude", "Backup done."),
        ]);
        let facts = read(SESSION, &[("s1.jsonl", &text)]);
        let copied: Vec<Option<&str>> = facts.items.iter().map(|i| i.copied.as_deref()).collect();
        assert_eq!(copied, [Some("native_field"), None, None]);
        let writers: Vec<Writer> = facts.items.iter().map(|i| i.texts[0].writer).collect();
        assert_eq!(writers, [Writer::Harness, Writer::Harness, Writer::Model]);
        assert!(facts.sessions[0].pointers.is_empty());
    }

    #[test]
    fn no_reply_is_the_models_answer() {
        let text = transcript(&[&assistant("n1", "anthropic", "claude", "NO_REPLY")]);
        let facts = read(SESSION, &[("s1.jsonl", &text)]);
        let item = &facts.items[0];
        assert_eq!(
            (&item.kind, item.ids[0].as_str()),
            (&ItemKind::Message, "n1")
        );
        assert_eq!(item.texts[0].text, "NO_REPLY");
        assert_eq!(
            (item.texts[0].kind, item.texts[0].writer),
            (TextKind::Answer, Writer::Model)
        );
        assert!(item.copied.is_none() && item.recorded.is_empty());
    }

    #[test]
    fn a_queued_send_is_a_call_and_its_result() {
        let call = r#"{"type":"message","id":"c1","parentId":null,"message":{"role":"assistant","content":[{"type":"toolCall","id":"toolu_1","name":"conversations_send","arguments":{"conversationRef":"conv_1","message":"Late, sorry!"}}],"provider":"anthropic","model":"claude"}}"#;
        let result = r#"{"type":"message","id":"r1","parentId":"c1","message":{"role":"toolResult","toolCallId":"toolu_1","toolName":"conversations_send","content":[{"type":"text","text":"{\"status\":\"queued\"}"}],"details":{"status":"queued","messageId":"3EB0"},"isError":false}}"#;
        let facts = read(SESSION, &[("s1.jsonl", &transcript(&[call, result]))]);
        // A row of calls only: its id rides on its one call, after the call id.
        let call = &facts.items[0];
        assert_eq!(call.kind, ItemKind::ToolCall);
        assert_eq!(call.ids, ["toolu_1", "c1"]);
        let inputs: Vec<&str> = call.texts.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(inputs, ["conv_1", "Late, sorry!"]);
        let result = &facts.items[1];
        assert_eq!(result.kind, ItemKind::ToolResult);
        assert_eq!(result.answers.as_deref(), Some("toolu_1"));
        assert_eq!(result.ids, ["toolu_1", "r1"]);
        // The details repeat the output as data: the only text is the output.
        assert_eq!(result.texts.len(), 1);
        assert_eq!(
            (result.texts[0].text.as_str(), result.texts[0].writer),
            ("{\"status\":\"queued\"}", Writer::Tool)
        );
    }

    #[test]
    fn reasoning_in_a_row_is_a_text_of_its_message() {
        let row = r#"{"type":"message","id":"t1","parentId":null,"message":{"role":"assistant","content":[{"type":"thinking","thinking":"Check first.","thinkingSignature":"EoAC"},{"type":"text","text":"Done."},{"type":"toolCall","id":"toolu_2","name":"read","arguments":{"path":"a.txt"}}],"provider":"anthropic","model":"claude"}}"#;
        let facts = read(SESSION, &[("s1.jsonl", &transcript(&[row]))]);
        let kinds: Vec<&ItemKind> = facts.items.iter().map(|i| &i.kind).collect();
        assert_eq!(kinds, [&ItemKind::Message, &ItemKind::ToolCall]);
        let texts = golden::described(&facts.items[0].texts);
        assert_eq!(
            texts,
            [
                ("Check first.", TextKind::Reasoning, Writer::Model),
                ("Done.", TextKind::Answer, Writer::Model)
            ]
        );
        assert_eq!(facts.items[1].ids, ["toolu_2"]);
    }

    #[test]
    fn metadata_blocks_record_only_what_they_store() {
        let mentioned = "Conversation info (untrusted metadata):\n```json\n{\n  \"message_id\": \"4412\",\n  \"sender_id\": \"7319\",\n  \"conversation_label\": \"Family ops id:-100\",\n  \"is_group_chat\": true,\n  \"was_mentioned\": true\n}\n```\n\nSender (untrusted metadata):\n```json\n{\n  \"label\": \"Priya (7319)\",\n  \"id\": \"7319\"\n}\n```\n\n@bot when?";
        let unmentioned = "Conversation info (untrusted metadata):\n```json\n{\"message_id\": \"4415\", \"is_group_chat\": true}\n```\n\nthanks";
        let control_ui = "Sender (untrusted metadata):\n```json\n{\n  \"label\": \"openclaw-control-ui\",\n  \"id\": \"openclaw-control-ui\"\n}\n```\n\n[Fri] tell them";
        let quoted = "Please read this:\nConversation info (untrusted metadata):\n```json\n{\"message_id\": \"1\"}\n```";
        let broken =
            "Conversation info (untrusted metadata):\n```json\n{\"message_id\": \n```\n\nhi";
        let lines: Vec<String> = [mentioned, unmentioned, control_ui, quoted, broken, "plain"]
            .iter()
            .enumerate()
            .map(|(n, t)| user(&format!("u{n}"), t))
            .collect();
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let facts = read(SESSION, &[("s1.jsonl", &transcript(&lines))]);
        let recorded: Vec<Vec<&str>> = facts
            .items
            .iter()
            .map(|i| i.recorded.iter().map(String::as_str).collect())
            .collect();
        assert_eq!(
            recorded,
            [
                vec!["platform", "from", "conversation", "addressed"],
                vec!["platform"],
                vec!["via"],
                vec![],
                vec![],
                vec![],
            ]
        );
        // The prompt stays whole, and a sender named is no person's words.
        assert_eq!(facts.items[0].texts[0].text, mentioned);
        assert!(
            facts
                .items
                .iter()
                .all(|i| i.texts[0].writer == Writer::Unknown)
        );
    }

    #[test]
    fn a_binding_names_the_thread_that_ran_the_turns() {
        let text = transcript(&[&user("u1", "Fix it.")]);
        let binding =
            r#"{"schemaVersion":1,"threadId":"019a-thread","sessionFile":"s1.jsonl","cwd":"/w"}"#;
        let rollout =
            r#"{"timestamp":"t","type":"session_meta","payload":{"id":"019a-other","cwd":"/w"}}"#;
        let facts = read(
            SESSION,
            &[
                ("s1.jsonl", &text),
                ("s1.jsonl.codex-app-server.json", binding),
                ("rollout-2026-019a-other.jsonl", rollout),
            ],
        );
        assert_eq!(facts.sessions.len(), 1);
        let pointers = &facts.sessions[0].pointers;
        assert_eq!(pointers.len(), 1);
        assert_eq!(pointers[0].to, "codex:019a-thread");
        assert_eq!(pointers[0].meaning, Some(Relation::ExecutedBy));
        assert_eq!(pointers[0].evidence, "native_field");
        // The rollout no binding names is not the session's, however close its text.
        assert_eq!(
            facts.unknown,
            [Location::file("rollout-2026-019a-other.jsonl", "")]
        );
        assert!(facts.items.iter().all(|i| i.copied.is_none()));
    }

    #[test]
    fn a_binding_of_no_transcript_is_unknown() {
        let binding = r#"{"threadId":"019a","sessionFile":"gone.jsonl"}"#;
        let facts = read(SESSION, &[("gone.jsonl.codex-app-server.json", binding)]);
        assert!(facts.sessions.is_empty());
        assert_eq!(facts.unknown.len(), 1);
    }

    #[test]
    fn store_pointers_have_the_meaning_the_entry_records() {
        let store = r#"{
          "agent:main:channel:1": {"sessionId": "p1", "chatType": "channel"},
          "agent:main:channel:1:thread:2": {"sessionId": "s1", "parentSessionKey": "agent:main:channel:1"},
          "agent:main:fork": {"sessionId": "s2", "parentSessionKey": "agent:main:channel:1", "forkedFromParent": true},
          "agent:main:subagent:3": {"sessionId": "s3", "spawnedBy": "agent:main:channel:1", "parentSessionKey": "agent:main:channel:1"},
          "agent:main:lost": {"sessionId": "s4", "parentSessionKey": "agent:main:none"}
        }"#;
        let header = |id: &str| format!(r#"{{"type":"session","version":3,"id":"{id}"}}"#);
        let facts = read(
            "openclaw-sessions-json",
            &[
                ("s1.jsonl", &header("s1")),
                ("s2.jsonl", &header("s2")),
                ("s3.jsonl", &header("s3")),
                ("s4.jsonl", &header("s4")),
                ("sessions.json", store),
            ],
        );
        let ids: Vec<&str> = facts.sessions.iter().map(|s| s.id.as_str()).collect();
        // The parent's entry has no transcript here: it is a target, not a session.
        assert_eq!(ids, ["s1", "s2", "s3", "s4"]);
        let read: Vec<Read> = facts
            .sessions
            .iter()
            .map(|s| {
                (
                    s.pointers
                        .iter()
                        .map(|p| (p.to.as_str(), p.meaning))
                        .collect(),
                    s.scope.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            read,
            [
                (vec![("openclaw:p1", None)], None),
                (vec![("openclaw:p1", Some(Relation::ForkedFrom))], None),
                (
                    vec![("openclaw:p1", Some(Relation::SpawnedBy))],
                    Some("subagent")
                ),
                (vec![], None),
            ]
        );
    }

    #[test]
    fn a_run_log_is_no_sessions() {
        let log = r#"{"ts":1,"jobId":"j1","action":"finished","status":"ok","summary":"Budget.","runId":"r1","delivered":true,"sessionId":"e4b1"}"#;
        let chat = transcript(&[
            r#"{"type":"message","id":"m1","parentId":null,"message":{"role":"assistant","content":[{"type":"text","text":"Budget."}],"provider":"openclaw","model":"automation-result","openclawAutomation":{"kind":"cron","jobId":"j1","runId":"r1"}}}"#,
        ]);
        let facts = read(
            "openclaw-cron-run-log-jsonl",
            &[("j1.jsonl", log), ("s1.jsonl", &chat)],
        );
        // The run's facts stay unassigned: the chat copies only its run id (ASR-427).
        assert_eq!(facts.sessions.len(), 1);
        assert!(facts.sessions[0].pointers.is_empty());
        assert_eq!(facts.items.len(), 1);
        assert!(facts.items[0].copied.is_none());
        assert_eq!(facts.unknown, [Location::line("j1.jsonl", 1, "")]);
    }

    #[test]
    fn a_malformed_line_is_unknown_and_an_empty_file_no_facts() {
        let text = transcript(&[
            "{\"type\":\"message\",\"id\":",
            &user("u1", "hi"),
            r#"{"type":"message","id":"x1","message":"not an object"}"#,
            r#"{"type":"mystery","id":"y1"}"#,
        ]);
        let facts = read(SESSION, &[("s1.jsonl", &text)]);
        assert_eq!(facts.items.len(), 1);
        let lines: Vec<Option<usize>> = facts.unknown.iter().map(|u| u.line).collect();
        assert_eq!(lines, [Some(2), Some(4), Some(5)]);
        let empty = read(SESSION, &[("s1.jsonl", "")]);
        assert!(empty.known && empty.sessions.is_empty() && empty.items.is_empty());
        assert!(empty.unknown.is_empty());
        let garbage = read(SESSION, &[("notes.txt", "not json at all")]);
        assert!(garbage.sessions.is_empty());
        assert_eq!(garbage.unknown, [Location::file("notes.txt", "")]);
    }

    #[test]
    fn entries_before_a_header_belong_to_the_files_session() {
        let facts = read(SESSION, &[("abc.jsonl", &user("u1", "hi"))]);
        assert_eq!(facts.sessions[0].id, "abc");
        assert_eq!(facts.items[0].session, 0);
    }

    #[test]
    fn pi_sessions_read_as_transcripts_agree_with_their_goldens() {
        // OpenClaw's transcript is pi's format: pi's fixtures (one of them the real
        // session pi-openclaw-family__agentlogs__branched-v3.jsonl) are read the same way.
        let count = golden::assert_known_read_as("pi-session-jsonl", SESSION, &[]);
        assert!(count > 0);
    }

    #[test]
    fn pi_entries_have_their_writers_and_a_parent_file_an_unknown_meaning() {
        let header = r#"{"type":"session","version":3,"id":"s2","parentSession":"/home/u/.pi/agent/sessions/--w--/2026-01-24T16-22-26-831Z_e99116ac.jsonl"}"#;
        let lines = [
            header,
            r#"{"type":"compaction","id":"k1","parentId":null,"summary":"Discussed X.","firstKeptEntryId":"a","tokensBefore":5}"#,
            r#"{"type":"branch_summary","id":"k2","parentId":"k1","fromId":"a","summary":"Tried A.","fromHook":true}"#,
            r#"{"type":"custom_message","id":"k3","parentId":"k2","customType":"ext","content":"Injected.","display":true}"#,
            r#"{"type":"message","id":"k4","parentId":"k3","message":{"role":"bashExecution","command":"ls","output":"a.txt\n","exitCode":0}}"#,
            r#"{"type":"label","id":"k5","parentId":"k4","targetId":"k1","label":"checkpoint"}"#,
        ]
        .join("\n");
        let facts = read(SESSION, &[("s2.jsonl", &lines)]);
        let pointers = &facts.sessions[0].pointers;
        assert_eq!(pointers.len(), 1);
        assert_eq!(
            (pointers[0].to.as_str(), pointers[0].meaning),
            ("openclaw:e99116ac", None)
        );
        let texts = golden::described(facts.items.iter().flat_map(|i| &i.texts));
        assert_eq!(
            texts,
            [
                ("Discussed X.", TextKind::Summary, Writer::Model),
                ("Tried A.", TextKind::Summary, Writer::Hook),
                ("Injected.", TextKind::Attachment, Writer::Harness),
                ("ls", TextKind::ToolInput, Writer::Unknown),
                ("a.txt\n", TextKind::ToolOutput, Writer::Tool),
                ("checkpoint", TextKind::Other, Writer::Unknown),
            ]
        );
        assert!(facts.unknown.is_empty());
    }
}
