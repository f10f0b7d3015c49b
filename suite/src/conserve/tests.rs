//! Each property on hand-made facts: it passes the right output and fails a wrong one
//! under its rule, with the decision or SHOULD it rests on.

use super::*;
use crate::facts::{Item, ItemKind, Pointer, Relation, Session, TextKind, Writer};
use serde_json::{Value, json};

fn at(line: usize) -> Location {
    Location::line("s.jsonl", line, "")
}

/// A source of one session `s1` (scope primary) with a person's prompt, a hook's
/// reminder, a model's answer with a reasoning item of its own, a tool call and its result.
fn facts() -> Facts {
    let mut facts = Facts {
        format: "test".into(),
        known: true,
        ..Facts::default()
    };
    facts.sessions.push(Session {
        id: "s1".into(),
        scope: Some("primary".into()),
        at: at(1),
        ..Session::default()
    });
    let items = [
        Item::new(0, ItemKind::Message, at(1)).id("u1").text(
            "Fix the parser.\r\n",
            TextKind::Prompt,
            Writer::Person,
            at(1),
        ),
        Item::new(0, ItemKind::Message, at(2)).id("h1").text(
            "<system-reminder>lint ok</system-reminder>",
            TextKind::Attachment,
            Writer::Hook,
            at(2),
        ),
        Item::new(0, ItemKind::Reasoning, at(3)).id("rs1").text(
            "Check the empty case.",
            TextKind::Summary,
            Writer::Model,
            at(3),
        ),
        Item::new(0, ItemKind::Message, at(4)).id("a1").text(
            "The parser rejects  empty input.",
            TextKind::Answer,
            Writer::Model,
            at(4),
        ),
        Item::new(0, ItemKind::ToolCall, at(5)).id("c1").text(
            "cargo test",
            TextKind::ToolInput,
            Writer::Model,
            at(5),
        ),
        {
            let mut result = Item::new(0, ItemKind::ToolResult, at(6)).text(
                "ok\n2 passed",
                TextKind::ToolOutput,
                Writer::Tool,
                at(6),
            );
            result.answers = Some("c1".into());
            result
        },
    ];
    for item in items {
        facts.item(item);
    }
    facts
}

fn records() -> Vec<Value> {
    vec![
        json!({"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"claude-code"},"sessionId":"s1","scope":"primary"}),
        json!({"type":"message","seq":1,"id":"r1","messageId":"u1","role":"user","author":"human","content":[{"type":"text","text":"Fix the parser.\r\n"}]}),
        json!({"type":"message","seq":2,"id":"r2","messageId":"h1","role":"user","author":"hook","content":[{"type":"text","text":"<system-reminder>lint ok</system-reminder>"}]}),
        json!({"type":"message","seq":3,"id":"r3","messageId":"rs1","role":"assistant","author":"model","content":[{"type":"reasoning","visibility":"summary","summary":["Check the empty case."]}]}),
        json!({"type":"message","seq":4,"id":"r4","messageId":"a1","role":"assistant","author":"model","content":[{"type":"text","text":"The parser rejects  empty input."}]}),
        json!({"type":"tool_call","seq":5,"id":"r5","callId":"c1","name":"Bash","input":{"command":"cargo test"}}),
        json!({"type":"tool_result","seq":6,"id":"r6","callId":"c1","output":[{"type":"text","text":"ok\n2 passed"}]}),
    ]
}

fn text(records: &[Value]) -> String {
    let mut out = String::new();
    for r in records {
        out.push_str(&r.to_string());
        out.push('\n');
    }
    out
}

fn broken(records: &[Value]) -> Vec<Broken> {
    broken_with(&facts(), records)
}

fn broken_with(facts: &Facts, records: &[Value]) -> Vec<Broken> {
    let bytes = text(records);
    check(facts, &[("", bytes.as_bytes())])
}

/// The one rule broken, with its decision and whether it is a SHOULD.
fn charged(broken: &[Broken]) -> Vec<(&str, Option<&str>, bool)> {
    broken
        .iter()
        .map(|b| (b.rule.as_str(), b.decision, b.warning))
        .collect()
}

fn edit(n: usize, f: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Vec<Value> {
    let mut records = records();
    if let Some(object) = records[n].as_object_mut() {
        f(object);
    }
    records
}

#[test]
fn the_right_output_breaks_nothing() {
    assert_eq!(broken(&records()), []);
}

#[test]
fn a_text_changed_is_asr_211_named_with_how_and_both_versions() {
    for (changed, how) in [
        ("Fix the parser.", "trimmed"),
        ("Fix the parser.\n", "line endings converted"),
        ("Fix the \u{FF50}arser.\r\n", "Unicode-normalised"),
        ("Fix the\u{200B} parser.\r\n", "zero-width"),
        ("Fix  the parser.\r\n", "re-flowed"),
    ] {
        let wrong = edit(1, |r| r["content"][0]["text"] = json!(changed));
        let found = broken(&wrong);
        assert_eq!(
            charged(&found)[0],
            ("ASR-211", None, false),
            "{changed:?}: {found:?}"
        );
        assert!(found[0].message.contains(how), "{how}: {}", found[0]);
        assert!(
            found[0].message.contains("Fix the parser.\\r\\n"),
            "{}",
            found[0]
        );
        assert_eq!(found[0].fact, Some(at(1)));
    }
    let escapes = Item::new(0, ItemKind::ToolResult, at(7)).text(
        "\u{1b}[32mok\u{1b}[0m",
        TextKind::ToolOutput,
        Writer::Tool,
        at(7),
    );
    let mut with = facts();
    with.item(escapes);
    let mut output = records();
    output.push(json!({"type":"tool_result","seq":7,"id":"r7","callId":"c1","output":[{"type":"text","text":"ok"}]}));
    let found = broken_with(&with, &output);
    assert!(
        found
            .iter()
            .any(|b| b.rule == "ASR-211" && b.message.contains("escape codes")),
        "{found:?}"
    );
}

#[test]
fn a_text_left_out_breaks_the_decision_unless_declared_lost() {
    let mut wrong = records();
    wrong.remove(6);
    let found = broken(&wrong);
    assert!(
        charged(&found).contains(&("ASR-211", Some(DECISION_CONTENT), false)),
        "{found:?}"
    );
    assert!(
        charged(&found).contains(&("ASR-211", Some(DECISION_TOOLS), false)),
        "{found:?}"
    );
    let mut declared = wrong.clone();
    declared[0]["producer"] = json!({"name":"p","lossy":["tool_results"]});
    assert_eq!(broken(&declared), []);
    // A lossy entry for something else declares nothing.
    declared[0]["producer"] = json!({"name":"p","lossy":["reasoning.signature"]});
    assert!(!broken(&declared).is_empty());
}

#[test]
fn texts_split_over_consecutive_parts_are_kept() {
    let split = edit(4, |r| {
        r["content"] = json!([{"type":"text","text":"The parser "},{"type":"text","text":"rejects  empty input."}]);
    });
    assert_eq!(broken(&split), []);
}

#[test]
fn an_item_written_before_one_the_source_has_earlier_breaks_the_order_decision() {
    let mut wrong = records();
    wrong.swap(5, 6);
    let found = broken(&wrong);
    assert_eq!(
        charged(&found),
        [("ASR-211", Some(DECISION_ORDER), false)],
        "{found:?}"
    );
}

#[test]
fn a_reasoning_item_folded_into_a_message_is_asr_219() {
    let mut wrong = records();
    wrong[4]["content"] = json!([{"type":"reasoning","visibility":"summary","summary":["Check the empty case."]},{"type":"text","text":"The parser rejects  empty input."}]);
    wrong.remove(3);
    let found = broken(&wrong);
    assert!(
        found
            .iter()
            .any(|b| b.rule == "ASR-219" && b.message.contains("folded into the message \"a1\"")),
        "{found:?}"
    );
    assert!(found.iter().all(|b| b.rule == "ASR-219"), "{found:?}");
}

#[test]
fn a_native_id_replaced_is_a_should_for_messages_and_the_decision_for_calls() {
    let wrong = edit(4, |r| r["messageId"] = json!("r4"));
    assert_eq!(charged(&broken(&wrong)), [("ASR-203", None, true)]);
    let mut calls = records();
    calls[5]["callId"] = json!("r5");
    calls[6]["callId"] = json!("r5");
    let found = broken(&calls);
    assert!(
        charged(&found).contains(&("ASR-203", Some(DECISION_TOOLS), false)),
        "{found:?}"
    );
    assert!(found[0].message.contains("\"r5\""), "{}", found[0]);
}

#[test]
fn a_result_answering_another_call_breaks_the_tool_decision() {
    let mut with = facts();
    with.item(Item::new(0, ItemKind::ToolCall, at(7)).id("c2").text(
        "ls",
        TextKind::ToolInput,
        Writer::Model,
        at(7),
    ));
    let mut second = Item::new(0, ItemKind::ToolResult, at(8)).text(
        "Cargo.toml",
        TextKind::ToolOutput,
        Writer::Tool,
        at(8),
    );
    second.answers = Some("c2".into());
    with.item(second);
    let mut right = records();
    right.push(json!({"type":"tool_call","seq":7,"id":"r7","callId":"c2","name":"Bash","input":{"command":"ls"}}));
    right.push(json!({"type":"tool_result","seq":8,"id":"r8","callId":"c2","output":[{"type":"text","text":"Cargo.toml"}]}));
    assert_eq!(broken_with(&with, &right), []);
    let mut wrong = right.clone();
    wrong[6]["callId"] = json!("c2");
    wrong[8]["callId"] = json!("c1");
    let found = broken_with(&with, &wrong);
    assert!(!found.is_empty());
    assert!(
        found
            .iter()
            .all(|b| (b.rule.as_str(), b.decision) == ("ASR-211", Some(DECISION_TOOLS))),
        "{found:?}"
    );
}

#[test]
fn a_human_author_on_what_no_person_wrote_is_asr_202_or_203() {
    let hook = edit(2, |r| r["author"] = json!("human"));
    assert_eq!(charged(&broken(&hook)), [("ASR-203", None, false)]);
    let model = edit(4, |r| r["author"] = json!("human"));
    assert_eq!(charged(&broken(&model)), [("ASR-202", None, false)]);
    // A part's own author counts (ASR-224), and overrides the message's.
    let part = edit(2, |r| {
        r.remove("author");
        r["content"][0]["author"] = json!("human");
    });
    assert_eq!(charged(&broken(&part)), [("ASR-203", None, false)]);
    let overridden = edit(2, |r| {
        r.insert("author".into(), json!("human"));
        r["content"][0]["author"] = json!("hook");
    });
    assert_eq!(broken(&overridden), []);
}

#[test]
fn a_sender_the_source_does_not_record_is_asr_226() {
    let wrong = edit(1, |r| {
        r.insert("from".into(), json!({"session": "claude-code:s1"}));
    });
    assert_eq!(charged(&broken(&wrong)), [("ASR-226", None, false)]);
    let mut recorded = facts();
    recorded.items[0].recorded.push("from".into());
    assert_eq!(broken_with(&recorded, &wrong), []);
}

/// The facts with session `s1` a subagent whose pointer to `p1` means `meaning`.
fn child(meaning: Option<Relation>, record: Option<&str>) -> Facts {
    let mut facts = facts();
    facts.sessions[0].scope = Some("subagent".into());
    facts.sessions[0].pointers.push(Pointer {
        to: "p1".into(),
        meaning,
        record: record.map(str::to_owned),
        evidence: "native_field".into(),
        at: at(1),
    });
    facts
}

fn with_lineage(lineage: Value) -> Vec<Value> {
    edit(0, |h| {
        h.insert("scope".into(), json!("subagent"));
        h.insert("lineage".into(), lineage);
    })
}

#[test]
fn facets_follow_the_sources_pointers() {
    let spawned = child(Some(Relation::SpawnedBy), None);
    let right =
        with_lineage(json!({"spawnedBy":{"session":"claude-code:p1","evidence":"native_field"}}));
    assert_eq!(broken_with(&spawned, &right), []);
    let unknown = with_lineage(
        json!({"relatedUnknown":{"session":"claude-code:p1","evidence":"native_field"}}),
    );
    assert_eq!(broken_with(&spawned, &unknown), []);
    for (lineage, rule, facts) in [
        (
            json!({"spawnedBy":{"session":"claude-code:other","evidence":"native_field"}}),
            "ASR-403",
            &spawned,
        ),
        (
            json!({"continues":{"session":"claude-code:p1","reason":"compaction","evidence":"native_field"}}),
            "ASR-403",
            &spawned,
        ),
        (
            json!({"spawnedBy":{"session":"claude-code:p1","evidence":"native_structure"}}),
            "ASR-404",
            &spawned,
        ),
        (
            json!({"spawnedBy":{"session":"claude-code:p1","record":"callId=c1","evidence":"native_field"}}),
            "ASR-403",
            &spawned,
        ),
        (json!({"root":true}), "ASR-402", &spawned),
        (
            json!({"executedBy":[{"session":"claude-code:p1","evidence":"native_field"}]}),
            "ASR-421",
            &spawned,
        ),
        (
            json!({"inherits":{"mode":"copied","from":"claude-code:p1","evidence":"native_field"}}),
            "ASR-414",
            &spawned,
        ),
        (
            json!({"forkedFrom":{"session":"claude-code:p1","evidence":"native_field"}}),
            "ASR-405",
            &child(None, None),
        ),
    ] {
        let found = broken_with(facts, &with_lineage(lineage.clone()));
        assert_eq!(
            charged(&found),
            [(rule, None, false)],
            "{lineage}: {found:?}"
        );
    }
    let recorded = child(Some(Relation::SpawnedBy), Some("callId=c1"));
    let named = with_lineage(
        json!({"spawnedBy":{"session":"claude-code:p1","record":"callId=c1","evidence":"native_field"}}),
    );
    assert_eq!(broken_with(&recorded, &named), []);
}

#[test]
fn a_scope_is_only_the_sources_marker() {
    let wrong = edit(0, |h| h["scope"] = json!("subagent"));
    assert_eq!(charged(&broken(&wrong)), [("ASR-410", None, false)]);
    let mut unmarked = facts();
    unmarked.sessions[0].scope = None;
    assert_eq!(
        charged(&broken_with(&unmarked, &records())),
        [("ASR-410", None, false)]
    );
    let absent = edit(0, |h| {
        h.remove("scope");
    });
    assert_eq!(broken_with(&unmarked, &absent), []);
}

#[test]
fn a_copy_without_proof_is_asr_414() {
    let wrong = edit(1, |r| {
        r.insert(
            "copiedFrom".into(),
            json!({"session":"claude-code:p1","proof":"native_field"}),
        );
    });
    assert_eq!(charged(&broken(&wrong)), [("ASR-414", None, false)]);
    let mut proven = facts();
    proven.items[0].copied = Some("native_field".into());
    assert_eq!(broken_with(&proven, &wrong), []);
}

#[test]
fn a_sidechain_folded_into_its_parent_or_left_out_breaks_the_sessions_decision() {
    let mut two = facts();
    two.sessions.push(Session {
        id: "k1".into(),
        scope: Some("subagent".into()),
        at: at(9),
        ..Session::default()
    });
    two.item(Item::new(1, ItemKind::Message, at(9)).id("k-u1").text(
        "How are you?",
        TextKind::Prompt,
        Writer::Agent,
        at(9),
    ));
    let child = [
        json!({"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"claude-code"},"sessionId":"k1","scope":"subagent"}),
        json!({"type":"message","seq":1,"id":"r1","messageId":"k-u1","role":"user","content":[{"type":"text","text":"How are you?"}]}),
    ];
    let (parent, child) = (text(&records()), text(&child));
    let right = check(&two, &[("", parent.as_bytes()), ("k1", child.as_bytes())]);
    assert_eq!(right, []);
    let mut folded = records();
    folded.push(json!({"type":"message","seq":7,"id":"r7","messageId":"k-u1","role":"user","content":[{"type":"text","text":"How are you?"}]}));
    let found = broken_with(&two, &folded);
    assert_eq!(
        charged(&found),
        [("ASR-410", Some(DECISION_SESSIONS), false)],
        "{found:?}"
    );
    assert!(
        found[0]
            .message
            .contains("written into the stream of session \"s1\""),
        "{}",
        found[0]
    );
    let dropped = broken_with(&two, &records());
    assert!(
        charged(&dropped).contains(&("ASR-410", Some(DECISION_SESSIONS), false)),
        "{dropped:?}"
    );
    // Its prompt written by the human: the parent agent wrote it.
    let human = child.replace(r#""role":"user""#, r#""role":"user","author":"human""#);
    let found = check(&two, &[("", parent.as_bytes()), ("k1", human.as_bytes())]);
    assert_eq!(charged(&found), [("ASR-202", None, false)], "{found:?}");
    assert_eq!(found[0].stream.as_deref(), Some("k1"));
}

#[test]
fn a_call_linked_to_a_child_the_source_does_not_link_is_asr_403() {
    let mut two = facts();
    two.sessions.push(Session {
        id: "k1".into(),
        at: at(9),
        ..Session::default()
    });
    let mut linked = records();
    linked.push(
        json!({"type":"subagent","seq":7,"id":"r7","childSession":"claude-code:k1","callId":"c1"}),
    );
    assert_eq!(
        charged(&broken_with(&two, &linked)),
        [("ASR-403", None, false)]
    );
    two.sessions[1].pointers.push(Pointer {
        to: "s1".into(),
        meaning: Some(Relation::SpawnedBy),
        record: Some("callId=c1".into()),
        evidence: "native_field".into(),
        at: at(9),
    });
    assert_eq!(broken_with(&two, &linked), []);
}

#[test]
fn facts_of_a_format_the_kit_cannot_read_break_nothing() {
    let mut unread = facts();
    unread.known = false;
    assert_eq!(broken_with(&unread, &[json!({"type":"session"})]), []);
}

#[test]
fn a_human_author_on_a_text_the_source_does_not_hold_is_asr_202_even_beside_unread_lines() {
    let mut with = facts();
    with.unknown.push(at(9));
    with.unread.insert("A line the reader did not know.".into());
    let mut invented = records();
    invented.push(json!({"type":"message","seq":7,"id":"r7","messageId":"x1","role":"user","author":"human","content":[{"type":"text","text":"Nobody wrote this."}]}));
    assert_eq!(
        charged(&broken_with(&with, &invented)),
        [("ASR-202", None, false)]
    );
    // A text on a line the reader did not know may be a person's: not charged.
    let mut unread = records();
    unread.push(json!({"type":"message","seq":7,"id":"r7","messageId":"x1","role":"user","author":"human","content":[{"type":"text","text":"A line the reader did not know."}]}));
    let found = broken_with(&with, &unread);
    assert!(!found.iter().any(|b| b.rule == "ASR-202"), "{found:?}");
}
