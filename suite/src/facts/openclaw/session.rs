//! OpenClaw's transcript (`<sessionId>.jsonl`): pi's v3 session entries, as OpenClaw writes
//! them, with its own rows (delivery mirrors, automation results) and the inbound metadata
//! blocks it writes into a channel prompt.

use super::super::{Facts, Item, ItemKind, Location, Pointer, TextKind, Writer};
use serde_json::{Map, Value};

/// Reads the parsed `lines` of the transcript `file` into `facts`; returns the index of its
/// session (`None` when the file has no entry of any session).
pub(super) fn read(
    file: &str,
    lines: &[(usize, Map<String, Value>)],
    facts: &mut Facts,
) -> Option<usize> {
    let mut session = None;
    for (n, line) in lines {
        let at = Location::line(file, *n, "");
        let kind = line.get("type").and_then(Value::as_str).unwrap_or("");
        if kind == "session" {
            session = Some(header(line, &at, facts));
            continue;
        }
        // Entries before a header (a header lost to truncation) still belong to the file's
        // session, which OpenClaw names after its id.
        let s = *session.get_or_insert_with(|| facts.session(&file_stem(file), at.clone()));
        let id = str_of(line, "id");
        match kind {
            "message" => match line.get("message") {
                Some(Value::Object(message)) => message_entry(s, id, message, &at, facts),
                _ => facts.unknown.push(at),
            },
            "compaction" | "branch_summary" => {
                // pi's summaries are a model's, or an extension's where fromHook says so.
                let writer = if line.get("fromHook").and_then(Value::as_bool) == Some(true) {
                    Writer::Hook
                } else {
                    Writer::Model
                };
                let mut item = Item::new(s, ItemKind::Other(kind.to_owned()), at.clone()).id(id);
                if let Some(text) = line.get("summary").and_then(Value::as_str) {
                    item.push_text(text, TextKind::Summary, writer, at.at("/summary"));
                }
                facts.item(item);
            }
            "custom_message" => {
                // An extension's message into the context: inserted, not typed.
                let mut item = Item::new(s, ItemKind::Message, at.clone()).id(id);
                content_texts(
                    line.get("content"),
                    &at.at("/content"),
                    TextKind::Attachment,
                    Writer::Harness,
                    &mut item,
                );
                facts.item(item);
            }
            "model_change" | "thinking_level_change" | "custom" | "label" | "session_info" => {
                let mut item = Item::new(s, ItemKind::Other(kind.to_owned()), at.clone()).id(id);
                for member in ["label", "name"] {
                    if let Some(text) = line.get(member).and_then(Value::as_str) {
                        item.push_text(
                            text,
                            TextKind::Other,
                            Writer::Unknown,
                            at.at(format!("/{member}")),
                        );
                    }
                }
                facts.item(item);
            }
            _ => facts.unknown.push(at),
        }
    }
    session
}

/// The session header: the session, and the parent a forked file names.
fn header(line: &Map<String, Value>, at: &Location, facts: &mut Facts) -> usize {
    let id = str_of(line, "id");
    let s = if id.is_empty() {
        facts.session(&file_stem(&at.file), at.clone())
    } else {
        facts.session(id, at.clone())
    };
    // pi writes parentSession (the parent's file) on a session made from another one; the
    // field does not say whether it is a fork, a handoff or a resume (ASR-405).
    if let Some(parent) = line.get("parentSession").and_then(Value::as_str) {
        let parent = file_stem(parent);
        let parent = parent.rsplit('_').next().unwrap_or(&parent);
        if !parent.is_empty() {
            facts.sessions[s].pointers.push(Pointer {
                to: format!("openclaw:{parent}"),
                meaning: None,
                record: None,
                evidence: "native_field".to_owned(),
                at: at.at("/parentSession"),
            });
        }
    }
    s
}

/// One `message` entry: a prompt, an answer with its tool calls, a tool result, a shell
/// command the user ran, an extension's message.
fn message_entry(
    s: usize,
    id: &str,
    message: &Map<String, Value>,
    at: &Location,
    facts: &mut Facts,
) {
    let content = message.get("content");
    let content_at = at.at("/message/content");
    match message.get("role").and_then(Value::as_str).unwrap_or("") {
        "user" => {
            let mut item = Item::new(s, ItemKind::Message, at.clone()).id(id);
            // OpenClaw records who sent a channel message, never who typed it: a sender
            // can be a bot, so no prompt is a person's words (ASR-202, ASR-226).
            content_texts(
                content,
                &content_at,
                TextKind::Prompt,
                Writer::Unknown,
                &mut item,
            );
            if let Some(first) = item.texts.first() {
                item.recorded = inbound_members(&first.text);
            }
            facts.item(item);
        }
        "assistant" => assistant(s, id, message, at, facts),
        "toolResult" => {
            let call = str_of(message, "toolCallId");
            let mut item = Item::new(s, ItemKind::ToolResult, at.clone())
                .id(call)
                .id(id);
            if !call.is_empty() {
                item.answers = Some(call.to_owned());
            }
            content_texts(
                content,
                &content_at,
                TextKind::ToolOutput,
                Writer::Tool,
                &mut item,
            );
            facts.item(item);
        }
        "bashExecution" => {
            // A command the user ran with `!`: pi does not record who typed it.
            let mut item =
                Item::new(s, ItemKind::Other("bash_execution".to_owned()), at.clone()).id(id);
            if let Some(command) = message.get("command").and_then(Value::as_str) {
                item.push_text(
                    command,
                    TextKind::ToolInput,
                    Writer::Unknown,
                    at.at("/message/command"),
                );
            }
            if let Some(output) = message.get("output").and_then(Value::as_str) {
                item.push_text(
                    output,
                    TextKind::ToolOutput,
                    Writer::Tool,
                    at.at("/message/output"),
                );
            }
            facts.item(item);
        }
        "custom" => {
            let mut item = Item::new(s, ItemKind::Message, at.clone()).id(id);
            content_texts(
                content,
                &content_at,
                TextKind::Attachment,
                Writer::Harness,
                &mut item,
            );
            facts.item(item);
        }
        role @ ("branchSummary" | "compactionSummary") => {
            let mut item = Item::new(s, ItemKind::Other(role.to_owned()), at.clone()).id(id);
            if let Some(text) = message.get("summary").and_then(Value::as_str) {
                item.push_text(
                    text,
                    TextKind::Summary,
                    Writer::Unknown,
                    at.at("/message/summary"),
                );
            }
            facts.item(item);
        }
        _ => facts.unknown.push(at.clone()),
    }
}

/// An assistant row: the message (answer and reasoning texts), then one tool call per
/// `toolCall` part, in the row's order.
fn assistant(s: usize, id: &str, message: &Map<String, Value>, at: &Location, facts: &mut Facts) {
    let provider = str_of(message, "provider");
    let model = str_of(message, "model");
    // Rows with provider openclaw are OpenClaw's own (a delivery mirror, a cron result, an
    // injected message): no model call of this session wrote them.
    let writer = if provider == "openclaw" {
        Writer::Harness
    } else {
        Writer::Model
    };
    let mut item = Item::new(s, ItemKind::Message, at.clone()).id(id);
    // A delivery mirror is a delivered reply written into the transcript again; its model
    // field says so (ASR-413's delivery mirror). An automation result is the first write of
    // a cron run's answer, whatever text it repeats (ASR-414), so it is no copy.
    if provider == "openclaw" && model == "delivery-mirror" {
        item.copied = Some("native_field".to_owned());
    }
    let mut calls = Vec::new();
    match message.get("content") {
        Some(Value::String(text)) => {
            item.push_text(
                text.as_str(),
                TextKind::Answer,
                writer,
                at.at("/message/content"),
            );
        }
        Some(Value::Array(parts)) => {
            for (n, part) in parts.iter().enumerate() {
                let part_at = at.at(format!("/message/content/{n}"));
                match part.get("type").and_then(Value::as_str).unwrap_or("") {
                    "text" => {
                        if let Some(text) = part.get("text").and_then(Value::as_str) {
                            item.push_text(text, TextKind::Answer, writer, part_at.at("/text"));
                        }
                    }
                    "thinking" => {
                        if let Some(text) = part.get("thinking").and_then(Value::as_str) {
                            item.push_text(
                                text,
                                TextKind::Reasoning,
                                Writer::Model,
                                part_at.at("/thinking"),
                            );
                        }
                    }
                    "toolCall" => {
                        let mut call = Item::new(s, ItemKind::ToolCall, part_at.clone())
                            .id(part.get("id").and_then(Value::as_str).unwrap_or(""));
                        if let Some(arguments) = part.get("arguments") {
                            call.push_input(arguments, &part_at.at("/arguments"));
                        }
                        calls.push(call);
                    }
                    // Images carry data, not text; an unknown part has nothing the reader
                    // can name.
                    "image" => {}
                    _ => facts.unknown.push(part_at),
                }
            }
        }
        _ => {}
    }
    if let Some(error) = message.get("errorMessage").and_then(Value::as_str) {
        item.push_text(
            error,
            TextKind::Other,
            Writer::Harness,
            at.at("/message/errorMessage"),
        );
    }
    // A row of tool calls only is written as its calls; its id then rides on the first.
    if item.texts.is_empty() && !calls.is_empty() {
        if let Some(first) = calls.first_mut() {
            first.ids.append(&mut item.ids);
        }
    } else {
        facts.item(item);
    }
    for call in calls {
        facts.item(call);
    }
}

/// Adds the texts of a pi `content` (a string, or parts of which `text` ones hold text).
fn content_texts(
    content: Option<&Value>,
    at: &Location,
    kind: TextKind,
    writer: Writer,
    item: &mut Item,
) {
    match content {
        Some(Value::String(text)) => item.push_text(text.as_str(), kind, writer, at.clone()),
        Some(Value::Array(parts)) => {
            for (n, part) in parts.iter().enumerate() {
                if part.get("type").and_then(Value::as_str) == Some("text")
                    && let Some(text) = part.get("text").and_then(Value::as_str)
                {
                    item.push_text(text, kind, writer, at.at(format!("/{n}/text")));
                }
            }
        }
        _ => {}
    }
}

/// The ASR-226 members the inbound metadata blocks at the start of a channel prompt record.
///
/// OpenClaw writes a channel message's metadata into the prompt's text as JSON blocks
/// (`Conversation info (untrusted metadata):`, `Sender (untrusted metadata):`, each a
/// fenced `json` block). Only what a block stores counts: a message id is `platform`, a
/// sender `from`, a conversation label or group `conversation`, `was_mentioned` (either
/// value) `addressed`, a channel or the Control UI as sender `via`.
fn inbound_members(text: &str) -> Vec<String> {
    let mut members: Vec<&str> = Vec::new();
    let mut rest = text;
    while let Some((title, block, after)) = metadata_block(rest) {
        rest = after.trim_start_matches(['\n', '\r']);
        let Value::Object(block) = block else {
            continue;
        };
        let has = |keys: &[&str]| keys.iter().any(|k| block.contains_key(*k));
        if title.starts_with("Sender") {
            let control_ui = ["id", "label"]
                .iter()
                .any(|k| block.get(*k).and_then(Value::as_str) == Some("openclaw-control-ui"));
            if control_ui {
                members.push("via");
            } else if has(&["id", "username", "e164", "name"]) {
                members.push("from");
            }
            continue;
        }
        if has(&["message_id", "message_ids", "reply_to_id"]) {
            members.push("platform");
        }
        if has(&["sender_id", "sender"]) {
            members.push("from");
        }
        if has(&[
            "conversation_label",
            "conversation_id",
            "group_subject",
            "group_id",
            "chat_id",
        ]) {
            members.push("conversation");
        }
        if has(&["was_mentioned"]) {
            members.push("addressed");
        }
        if has(&["channel", "provider", "surface"]) {
            members.push("via");
        }
    }
    let mut out: Vec<String> = Vec::new();
    for m in members {
        if !out.iter().any(|o| o == m) {
            out.push(m.to_owned());
        }
    }
    out
}

/// The metadata block `text` begins with: its title, its JSON value and the text after it.
fn metadata_block(text: &str) -> Option<(&str, Value, &str)> {
    let (title, body) = text.split_once('\n')?;
    let title = title.trim_end_matches('\r');
    if !title.ends_with("):") || !title.contains("untrusted") {
        return None;
    }
    let body = body.strip_prefix("```json")?.trim_start_matches('\r');
    let body = body.strip_prefix('\n')?;
    let end = body.find("\n```")?;
    let value = serde_json::from_str(&body[..end]).ok()?;
    Some((title, value, &body[end + 4..]))
}

/// The string member `key` of `object`, or `""`.
fn str_of<'a>(object: &'a Map<String, Value>, key: &str) -> &'a str {
    object.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A file's name without its directory and its last extension.
fn file_stem(file: &str) -> String {
    let name = file.rsplit(['/', '\\']).next().unwrap_or(file);
    name.strip_suffix(".jsonl").unwrap_or(name).to_owned()
}
