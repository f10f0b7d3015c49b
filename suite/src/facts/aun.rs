//! The reader of AUN messages (`aun-message-json`): message envelopes (`message_id`,
//! `seq`, `from`/`sender_aid`, `to` or `group_id`, `timestamp`) around a business payload,
//! as aun-message-payloads.zh.txt defines the payloads. A file is one envelope, an array
//! of them, or one envelope a line.
//!
//! A group's messages are one session, named by `group_id`; a direct conversation's are
//! one session named `<from>:<to>` of its first message (the reverse pair is an alias).
//! An AID names an agent or a person alike, and AUN records no kind of sender: no text is
//! a person's (ASR-202, ASR-226).

use super::{Facts, Item, ItemKind, Location, TextKind, Writer, each_string, json_lines};
use serde_json::{Map, Value};

/// Reads `files` into `facts`.
pub(super) fn read(files: &[&(String, Vec<u8>)], facts: &mut Facts) {
    for (name, bytes) in files {
        let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        if body.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(envelope)) => {
                message(&envelope, &Location::file(name, ""), facts);
            }
            Ok(Value::Array(envelopes)) => {
                for (n, envelope) in envelopes.iter().enumerate() {
                    let at = Location::file(name, format!("/{n}"));
                    match envelope {
                        Value::Object(envelope) => message(envelope, &at, facts),
                        _ => facts.unknown.push(at),
                    }
                }
            }
            Ok(_) => facts.unknown.push(Location::file(name, "")),
            Err(_) => {
                let lines = json_lines(name, bytes, &mut facts.unknown);
                for (n, envelope) in lines {
                    message(&envelope, &Location::line(name, n, ""), facts);
                }
            }
        }
    }
}

/// One envelope and its payload.
fn message(envelope: &Map<String, Value>, at: &Location, facts: &mut Facts) {
    let Some(Value::Object(payload)) = envelope.get("payload") else {
        facts.unknown.push(at.clone());
        return;
    };
    let sender = ["from", "sender_aid"]
        .iter()
        .find_map(|k| envelope.get(*k).and_then(Value::as_str));
    let group = envelope.get("group_id").and_then(Value::as_str);
    let to = envelope.get("to").and_then(Value::as_str);
    let s = match (group, sender, to) {
        (Some(group), _, _) => facts.session(group, at.clone()),
        (None, Some(from), Some(to)) => {
            let s = facts.session(&format!("{from}:{to}"), at.clone());
            let reverse = format!("{to}:{from}");
            let session = &mut facts.sessions[s];
            if session.id != reverse && !session.aliases.contains(&reverse) {
                session.aliases.push(reverse);
            }
            s
        }
        // An envelope that names neither a group nor both parties: its file is all that
        // places it.
        _ => facts.session(&file_stem(&at.file), at.clone()),
    };
    let id = envelope
        .get("message_id")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = payload.get("type").and_then(Value::as_str).unwrap_or("");
    let payload_at = at.at("/payload");
    let mut item = match kind {
        "tool_call" => {
            let call = payload.get("call_id").and_then(Value::as_str).unwrap_or("");
            let mut item = Item::new(s, ItemKind::ToolCall, at.clone()).id(call).id(id);
            if let Some(arguments) = payload.get("arguments") {
                item.push_input(arguments, &payload_at.at("/arguments"));
            }
            item
        }
        "tool_result" => {
            let call = payload.get("call_id").and_then(Value::as_str).unwrap_or("");
            let mut item = Item::new(s, ItemKind::ToolResult, at.clone())
                .id(call)
                .id(id);
            if !call.is_empty() {
                item.answers = Some(call.to_owned());
            }
            for member in ["result", "error"] {
                if let Some(value) = payload.get(member) {
                    let member_at = payload_at.at(format!("/{member}"));
                    each_string(value, "", &mut |pointer, text| {
                        item.push_text(
                            text,
                            TextKind::ToolOutput,
                            Writer::Tool,
                            member_at.at(pointer),
                        );
                    });
                }
            }
            item
        }
        _ => {
            let mut item = Item::new(s, ItemKind::Message, at.clone()).id(id);
            payload_texts(kind, payload, &payload_at, &mut item);
            // An action card is what the recipient's App rendered: the source holds no other
            // representation of it (ASR-207).
            if kind == "action_card" {
                for text in &mut item.texts {
                    text.kind = TextKind::Display;
                }
            }
            item
        }
    };
    item.recorded = recorded(envelope, payload);
    facts.item(item);
}

/// The texts a payload of type `kind` stores, in the document's field order.
fn payload_texts(kind: &str, payload: &Map<String, Value>, at: &Location, item: &mut Item) {
    let mut add = |pointer: &str, kind: TextKind| {
        if let Some(text) = member(payload, pointer) {
            item.push_text(text, kind, Writer::Unknown, at.at(pointer));
        }
    };
    match kind {
        "text" | "file" | "video" => add("/text", TextKind::Prompt),
        "quote" => {
            add("/text", TextKind::Prompt);
            // The quoted message's summary, as the sender's App shows it.
            add("/quote/text", TextKind::Other);
        }
        "voice" => {
            add("/text", TextKind::Prompt);
            // The speech-to-text result: a stored text, whose derivation is the source's.
            add("/transcript", TextKind::Attachment);
        }
        "image" => {
            add("/text", TextKind::Prompt);
            add("/alt", TextKind::Attachment);
        }
        "location" => {
            add("/name", TextKind::Other);
            add("/address", TextKind::Other);
        }
        "link" => {
            add("/title", TextKind::Other);
            add("/description", TextKind::Other);
        }
        "action_card_reply" => {
            add("/text", TextKind::Prompt);
            add("/action_label", TextKind::Other);
            add("/action_value", TextKind::Other);
            add("/card_title", TextKind::Other);
            add("/card_text", TextKind::Other);
        }
        "personal_card" => add("/display_name", TextKind::Other),
        "status" | "event" => add("/text", TextKind::Notice),
        _ => {
            add("/title", TextKind::Other);
            add("/summary", TextKind::Other);
            add("/text", TextKind::Other);
            add("/fallback_text", TextKind::Other);
        }
    }
    // The card's buttons, the merge's inline messages, the poll's options: each item's
    // own texts.
    let lists: &[(&str, &[&str])] = match kind {
        "action_card" => &[("actions", &["label", "value"])],
        "merge" => &[("items", &["text"])],
        "json" => &[("options", &["text"])],
        _ => &[],
    };
    for (list, members) in lists {
        for (n, entry) in payload
            .get(*list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            for member in *members {
                if let Some(text) = entry.get(*member).and_then(Value::as_str) {
                    item.push_text(
                        text,
                        TextKind::Other,
                        Writer::Unknown,
                        at.at(format!("/{list}/{n}/{member}")),
                    );
                }
            }
        }
    }
}

/// The ASR-226 members an envelope and its payload record: the sender (`from`), the
/// direct recipient (`recipients`, from `to`: mentions are display only and name no
/// recipient), the group (`conversation`), the message's own and replied-to ids
/// (`platform`), mentions (`addressed`). Nothing records turns or a client surface.
fn recorded(envelope: &Map<String, Value>, payload: &Map<String, Value>) -> Vec<String> {
    let mut members = Vec::new();
    if envelope.contains_key("from") || envelope.contains_key("sender_aid") {
        members.push("from");
    }
    if envelope.contains_key("to") && !envelope.contains_key("group_id") {
        members.push("recipients");
    }
    if envelope.contains_key("group_id") {
        members.push("conversation");
    }
    let replies = payload.contains_key("reply_to")
        || payload
            .get("quote")
            .is_some_and(|q| q.get("message_id").is_some());
    if envelope.contains_key("message_id") || replies {
        members.push("platform");
    }
    if payload
        .get("mentions")
        .and_then(Value::as_array)
        .is_some_and(|m| !m.is_empty())
    {
        members.push("addressed");
    }
    members.into_iter().map(str::to_owned).collect()
}

/// The string at `pointer` (object members only) in `payload`.
fn member<'a>(payload: &'a Map<String, Value>, pointer: &str) -> Option<&'a str> {
    let mut keys = pointer.split('/').skip(1);
    let mut value = payload.get(keys.next()?)?;
    for key in keys {
        value = value.get(key)?;
    }
    value.as_str()
}

/// A file's name without its directory and its extension.
fn file_stem(file: &str) -> String {
    let name = file.rsplit(['/', '\\']).next().unwrap_or(file);
    name.rsplit_once('.')
        .map_or(name, |(stem, _)| stem)
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::super::golden;
    use crate::facts::{Facts, ItemKind, Location, TextKind, Writer};

    fn read(files: &[(&str, &str)]) -> Facts {
        golden::read_texts("aun-message-json", files)
    }

    fn texts(facts: &Facts) -> Vec<Vec<&str>> {
        facts
            .items
            .iter()
            .map(|i| i.texts.iter().map(|t| t.text.as_str()).collect())
            .collect()
    }

    #[test]
    fn every_fixture_agrees_with_its_golden() {
        let count = golden::assert_known("aun-message-json", &[]);
        assert!(count >= 3, "{count} fixtures");
    }

    #[test]
    fn group_messages_record_sender_group_ids_and_mentions() {
        let lines = concat!(
            r#"{"group_id":"g1","message_id":"m1","seq":1,"sender_aid":"alice.agentid.pub","timestamp":1,"payload":{"type":"voice","transcript":"改到下午三点","attachments":[{"url":"aun://v.opus","filename":"v.opus"}]}}"#,
            "\n",
            r#"{"group_id":"g1","message_id":"m2","seq":2,"sender_aid":"alice.agentid.pub","timestamp":2,"payload":{"type":"text","text":"@Molty 好","mentions":[{"aid":"molty.agentid.pub","display":"@Molty"}]}}"#,
            "\n"
        );
        let facts = read(&[("messages.jsonl", lines)]);
        assert_eq!(facts.sessions.len(), 1);
        assert_eq!(facts.sessions[0].id, "g1");
        assert_eq!(texts(&facts), [vec!["改到下午三点"], vec!["@Molty 好"]]);
        assert_eq!(facts.items[0].texts[0].kind, TextKind::Attachment);
        let recorded: Vec<&Vec<String>> = facts.items.iter().map(|i| &i.recorded).collect();
        assert_eq!(recorded[0], &["from", "conversation", "platform"]);
        assert_eq!(
            recorded[1],
            &["from", "conversation", "platform", "addressed"]
        );
        // An AID is no person: nothing is a person's words.
        assert!(
            facts
                .items
                .iter()
                .flat_map(|i| &i.texts)
                .all(|t| t.writer == Writer::Unknown)
        );
    }

    #[test]
    fn a_merge_forward_keeps_its_items_texts() {
        let line = r#"{"group_id":"g1","message_id":"m3","sender_aid":"carol","payload":{"type":"merge","title":"记录","summary":"包含 2 条","items":[{"sender_display":"Alice","text":"先确认接口"},{"sender_display":"Bob","text":"我来补测试"}]}}"#;
        let facts = read(&[("messages.jsonl", line)]);
        assert_eq!(
            texts(&facts),
            [vec!["记录", "包含 2 条", "先确认接口", "我来补测试"]]
        );
        assert!(facts.items[0].copied.is_none());
    }

    #[test]
    fn a_direct_conversation_is_one_session_both_ways() {
        let card = r#"{"message_id":"c1","from":"bot","to":"alice","payload":{"type":"action_card","title":"环境","text":"请选择","actions":[{"label":"生产环境","value":"prod"},{"label":"自定义","behavior":"compose"}]}}"#;
        let reply = r#"{"message_id":"c2","from":"alice","to":"bot","payload":{"type":"action_card_reply","card_message_id":"c1","behavior":"reply","action_label":"生产环境","action_value":"prod","text":"prod","card_title":"环境"}}"#;
        let facts = read(&[("card.json", card), ("reply.json", reply)]);
        assert_eq!(facts.sessions.len(), 1);
        assert_eq!(facts.sessions[0].id, "bot:alice");
        assert_eq!(facts.sessions[0].aliases, ["alice:bot"]);
        assert_eq!(
            texts(&facts),
            [
                vec!["环境", "请选择", "生产环境", "prod", "自定义"],
                vec!["prod", "生产环境", "prod", "环境"],
            ]
        );
        assert_eq!(facts.items[0].recorded, ["from", "recipients", "platform"]);
        assert_eq!(facts.items[0].at, Location::file("card.json", ""));
    }

    #[test]
    fn tool_calls_and_results_answer_by_call_id() {
        let lines = concat!(
            r#"{"message_id":"t1","from":"a","to":"b","payload":{"type":"tool_call","call_id":"call-001","name":"weather.query","arguments":{"city":"Shanghai"}}}"#,
            "\n",
            r#"{"message_id":"t2","from":"b","to":"a","payload":{"type":"tool_result","call_id":"call-001","ok":true,"result":{"weather":"cloudy"}}}"#,
        );
        let facts = read(&[("m.jsonl", lines)]);
        let call = &facts.items[0];
        assert_eq!(
            (&call.kind, call.ids.as_slice()),
            (
                &ItemKind::ToolCall,
                &["call-001".to_owned(), "t1".to_owned()][..]
            )
        );
        assert_eq!(call.texts[0].text, "Shanghai");
        let result = &facts.items[1];
        assert_eq!(result.kind, ItemKind::ToolResult);
        assert_eq!(result.answers.as_deref(), Some("call-001"));
        assert_eq!(
            (result.texts[0].text.as_str(), result.texts[0].writer),
            ("cloudy", Writer::Tool)
        );
    }

    #[test]
    fn malformed_input_is_unknown_and_an_empty_file_no_facts() {
        let lines = "{\"group_id\":\"g\",\"message_id\":\"m1\",\"payload\":{\"type\":\"text\",\"text\":\"hi\"}}\n{not json\n{\"group_id\":\"g\",\"message_id\":\"m2\"}\n";
        let facts = read(&[("m.jsonl", lines), ("e.json", ""), ("n.json", "42")]);
        assert_eq!(facts.items.len(), 1);
        assert_eq!(
            facts.unknown,
            [
                Location::line("m.jsonl", 2, ""),
                Location::line("m.jsonl", 3, ""),
                Location::file("n.json", ""),
            ]
        );
        let empty = read(&[("e.json", " \n")]);
        assert!(empty.sessions.is_empty() && empty.items.is_empty() && empty.unknown.is_empty());
    }

    #[test]
    fn a_quote_records_the_reply_and_an_unknown_type_its_fallback() {
        let lines = concat!(
            r#"{"group_id":"g","message_id":"q1","sender_aid":"bob","payload":{"type":"quote","text":"我同意","quote":{"message_id":"msg-prev","text":"是否采用方案 A？","sender_display":"Bob"}}}"#,
            "\n",
            r#"{"group_id":"g","message_id":"q2","sender_aid":"bob","payload":{"type":"custom","kind":"com.example.ticket","fallback_text":"收到一个工单卡片","data":{"ticket_id":"T-1"}}}"#,
            "\n",
            r#"{"group_id":"g","message_id":"q3","sender_aid":"bob","type":"e2ee.group_encrypted","payload":"b64..."}"#,
        );
        let facts = read(&[("m.jsonl", lines)]);
        assert_eq!(
            texts(&facts),
            [vec!["我同意", "是否采用方案 A？"], vec!["收到一个工单卡片"]]
        );
        assert!(facts.items[0].recorded.contains(&"platform".to_owned()));
        assert!(!facts.items[0].recorded.contains(&"addressed".to_owned()));
        // An encrypted payload is nothing the reader can make out.
        assert_eq!(facts.unknown, [Location::line("m.jsonl", 3, "")]);
    }
}
