use std::path::Path;

use crate::facts::{Facts, ItemKind, Relation, TextKind, Writer, golden, read};

const FORMAT: &str = "claude-code-jsonl";

fn facts_of(files: &[(&str, &str)]) -> Facts {
    golden::read_texts(FORMAT, files)
}

#[test]
fn every_fixture_agrees_with_its_goldens() {
    // A golden header without scope claims none (ASR-401: an absent member means
    // unknown); the facts know each main file's stream is the primary one.
    const SCOPE: &str = "scope golden None, facts Some(\"primary\")";
    // A subagent file's dangling parentUuids point into the session its lines name, and
    // the lines record a delegation by it: the facts hold both pointers, a golden states
    // one of them or none (the fixtures' decision: spawnedBy without record, relatedUnknown
    // or no lineage).
    const UNKNOWN: &str = "a pointer no golden facet states: relatedUnknown";
    const SPAWNED: &str = "a pointer no golden facet states: spawnedBy";
    let known = [
        ("background_agent_01", SCOPE),
        ("compact_request_01", UNKNOWN),
        ("compact_request_01", SPAWNED),
        ("compact_summary_01", SCOPE),
        ("dangling_parents_01", SPAWNED),
        ("ide_selection_attachment_01", SCOPE),
        ("local_command_01", SCOPE),
        ("meta_caveat_audience_01", SCOPE),
        ("same_cwd_after_clear_01", SCOPE),
        ("same_cwd_after_clear_01", SCOPE),
        ("split_assistant_01", SCOPE),
        ("subagent_hook_context_01", UNKNOWN),
        ("task_delegation_01", SCOPE),
        ("todowrite_01", SCOPE),
    ]
    .map(|(name, opening)| (format!("{FORMAT}/{name}"), opening));
    let known: Vec<(&str, &str)> = known.iter().map(|(n, o)| (n.as_str(), *o)).collect();
    let count = golden::assert_known(FORMAT, &known);
    assert_eq!(count, 14, "the claude-code-jsonl fixtures");
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
    let texts = golden::described(&message.texts);
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
    let texts = golden::described(&item.texts);
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
