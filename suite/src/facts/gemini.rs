//! The reader of Gemini CLI sessions in their single-JSON format (`session-*.json` of
//! `~/.gemini/tmp/<project>/chats/`): one session a file, `{sessionId, messages[], kind}`.
//!
//! What the reader decides, and why:
//!
//! - A `user` message's texts have no known writer: Gemini CLI records the same message
//!   for what a person typed and what it sent itself (a piped stdin, an @file expansion),
//!   so the source does not distinguish (ASR-202). `content` (what the model got) and
//!   `displayContent` (what the user saw) are both stored texts of the one message.
//! - A `gemini` message's `thoughts` are summaries the provider wrote (a subject and a
//!   description), each its own stored text of kind summary, never reasoning text
//!   (ASR-214); its `toolCalls` are a tool call and, when it has a `result`, a tool result
//!   each, after the message, whose texts are the function responses' strings (a masked
//!   output is stored in its masked form, and that form is the text) and `resultDisplay`.
//! - `info`, `error` and `warning` messages are notices the harness showed.
//! - `kind` marks the session: `main` is scope primary, `subagent` scope subagent. The file
//!   names no other session, so there are no pointers.

use super::{Facts, Item, ItemKind, Location, TextKind, Writer, json_file};
use serde_json::Value;

/// Reads `files` into `facts`.
pub(super) fn read(files: &[&(String, Vec<u8>)], facts: &mut Facts) {
    for (name, bytes) in files {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match json_file(name, bytes, &mut facts.unknown) {
            Some(value @ Value::Object(_)) => read_session(name, &value, facts),
            Some(_) => facts.unknown.push(Location::file(name, "")),
            None => {}
        }
    }
}

fn read_session(name: &str, file: &Value, facts: &mut Facts) {
    let Some(messages) = file.get("messages").and_then(Value::as_array) else {
        facts.unknown.push(Location::file(name, ""));
        return;
    };
    let id = file
        .get("sessionId")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map_or_else(|| stem(name), str::to_owned);
    let session = facts.session(&id, Location::file(name, ""));
    match file.get("kind").and_then(Value::as_str) {
        Some("main") => facts.sessions[session].scope = Some("primary".to_owned()),
        Some("subagent") => facts.sessions[session].scope = Some("subagent".to_owned()),
        _ => {}
    }
    for (k, message) in messages.iter().enumerate() {
        let at = Location::file(name, format!("/messages/{k}"));
        if !message.is_object() {
            facts.unknown.push(at);
            continue;
        }
        read_message(session, message, &at, facts);
    }
}

fn read_message(session: usize, message: &Value, at: &Location, facts: &mut Facts) {
    let kind = message.get("type").and_then(Value::as_str).unwrap_or("");
    let (item_kind, text_kind, writer) = match kind {
        "user" => (ItemKind::Message, TextKind::Prompt, Writer::Unknown),
        "gemini" => (ItemKind::Message, TextKind::Answer, Writer::Model),
        "info" | "error" | "warning" => (ItemKind::Notice, TextKind::Notice, Writer::Harness),
        "" => (
            ItemKind::Other("message".into()),
            TextKind::Other,
            Writer::Unknown,
        ),
        other => (
            ItemKind::Other(other.to_owned()),
            TextKind::Other,
            Writer::Unknown,
        ),
    };
    let mut item = Item::new(session, item_kind, at.clone());
    item = item.id(message.get("id").and_then(Value::as_str).unwrap_or(""));
    let thoughts = message.get("thoughts").and_then(Value::as_array);
    for (j, thought) in thoughts.into_iter().flatten().enumerate() {
        for member in ["subject", "description"] {
            if let Some(text) = thought.get(member).and_then(Value::as_str) {
                let at = at.at(format!("/thoughts/{j}/{member}"));
                item.push_text(text, TextKind::Summary, Writer::Model, at);
            }
        }
    }
    for member in ["content", "displayContent"] {
        if let Some(content) = message.get(member) {
            push_parts(
                &mut item,
                content,
                if member == "displayContent" {
                    TextKind::Display
                } else {
                    text_kind
                },
                writer,
                &at.at(format!("/{member}")),
            );
        }
    }
    facts.item(item);
    let calls = message.get("toolCalls").and_then(Value::as_array);
    for (j, call) in calls.into_iter().flatten().enumerate() {
        tool_call(session, call, &at.at(format!("/toolCalls/{j}")), facts);
    }
}

/// A message's content: a string, a Part, or an array of Parts (`{text}`; a
/// functionResponse's strings are a tool's output).
fn push_parts(item: &mut Item, content: &Value, kind: TextKind, writer: Writer, at: &Location) {
    match content {
        Value::String(text) => item.push_text(text.as_str(), kind, writer, at.clone()),
        Value::Array(parts) => {
            for (k, part) in parts.iter().enumerate() {
                push_parts(item, part, kind, writer, &at.at(format!("/{k}")));
            }
        }
        Value::Object(part) => {
            if let Some(text) = part.get("text").and_then(Value::as_str) {
                item.push_text(text, kind, writer, at.at("/text"));
            }
            if let Some(response) = part.get("functionResponse").and_then(|r| r.get("response")) {
                let at = at.at("/functionResponse/response");
                super::each_string(response, "", &mut |pointer, text| {
                    item.push_text(text, TextKind::ToolOutput, Writer::Tool, at.at(pointer));
                });
            }
        }
        _ => {}
    }
}

fn tool_call(session: usize, call: &Value, at: &Location, facts: &mut Facts) {
    let id = call.get("id").and_then(Value::as_str).unwrap_or("");
    let mut item = Item::new(session, ItemKind::ToolCall, at.clone()).id(id);
    if let Some(args) = call.get("args") {
        item.push_input(args, &at.at("/args"));
    }
    facts.item(item);
    let result = call.get("result").filter(|r| !r.is_null());
    let display = call.get("resultDisplay").filter(|d| !d.is_null());
    if result.is_none() && display.is_none() {
        return;
    }
    let mut item = Item::new(session, ItemKind::ToolResult, at.clone()).id(id);
    item.answers = Some(id.to_owned()).filter(|id| !id.is_empty());
    if let Some(result) = result {
        push_parts(
            &mut item,
            result,
            TextKind::ToolOutput,
            Writer::Tool,
            &at.at("/result"),
        );
    }
    match display {
        Some(Value::String(text)) => {
            item.push_text(
                text.as_str(),
                TextKind::ToolOutput,
                Writer::Tool,
                at.at("/resultDisplay"),
            );
        }
        // A file diff's display: the diff is what the user saw; the file's contents
        // before and after are stored too.
        Some(Value::Object(diff)) => {
            for member in ["fileDiff", "originalContent", "newContent"] {
                if let Some(text) = diff.get(member).and_then(Value::as_str) {
                    let at = at.at(format!("/resultDisplay/{member}"));
                    item.push_text(text, TextKind::ToolOutput, Writer::Tool, at);
                }
            }
        }
        _ => {}
    }
    facts.item(item);
}

/// A file's name without its directory and extension.
fn stem(name: &str) -> String {
    let base = name.rsplit('/').next().unwrap_or(name);
    base.strip_suffix(".json").unwrap_or(base).to_owned()
}

#[cfg(test)]
mod tests {
    use super::super::{Facts, ItemKind, TextKind, Writer, golden, read as read_format};

    fn read(json: &str) -> Facts {
        let files = [("session.json".to_owned(), json.as_bytes().to_vec())];
        read_format("gemini-cli-json", &files)
    }

    #[test]
    fn fixtures_agree_with_their_goldens() {
        // A golden header without scope claims none (ASR-401: an absent member means
        // unknown); the facts know a session file's stream is the primary one.
        const SCOPE: &str = "scope golden None, facts Some(\"primary\")";
        let count = golden::assert_known(
            "gemini-cli-json",
            &[
                ("gemini-cli-json/at_file_display_01", SCOPE),
                ("gemini-cli-json/crlf_piped_prompt_01", SCOPE),
                ("gemini-cli-json/masked_tool_output_01", SCOPE),
                ("gemini-cli-json/real_session_01", SCOPE),
            ],
        );
        assert!(count >= 4, "{count} fixtures");
    }

    #[test]
    fn messages_thoughts_and_display_content() {
        let facts = read(
            r#"{"sessionId":"g1","kind":"main","messages":[
              {"id":"u1","type":"user","content":[{"text":"Read @a.md"},{"text":"\n--- Content from referenced files ---"}],"displayContent":[{"text":"Read @a.md"}]},
              {"id":"m1","type":"gemini","content":"Done.\r\n","thoughts":[{"subject":"Reading","description":"The file.","timestamp":"t"}]},
              {"id":"i1","type":"info","content":"Model switched."}
            ]}"#,
        );
        let session = &facts.sessions[0];
        assert_eq!(
            (session.id.as_str(), session.scope.as_deref()),
            ("g1", Some("primary"))
        );
        assert!(!session.root && session.pointers.is_empty());
        let user = &facts.items[0];
        assert_eq!(
            (user.kind.clone(), user.ids.clone()),
            (ItemKind::Message, vec!["u1".to_owned()])
        );
        let texts: Vec<(&str, &str, Writer)> = user
            .texts
            .iter()
            .map(|t| (t.text.as_str(), t.at.pointer.as_str(), t.writer))
            .collect();
        assert_eq!(
            texts,
            [
                ("Read @a.md", "/messages/0/content/0/text", Writer::Unknown),
                (
                    "\n--- Content from referenced files ---",
                    "/messages/0/content/1/text",
                    Writer::Unknown
                ),
                (
                    "Read @a.md",
                    "/messages/0/displayContent/0/text",
                    Writer::Unknown
                ),
            ]
        );
        let answer = &facts.items[1];
        let texts = golden::described(&answer.texts);
        assert_eq!(
            texts,
            [
                ("Reading", TextKind::Summary, Writer::Model),
                ("The file.", TextKind::Summary, Writer::Model),
                ("Done.\r\n", TextKind::Answer, Writer::Model),
            ]
        );
        let notice = &facts.items[2];
        assert_eq!(notice.kind, ItemKind::Notice);
        assert_eq!(
            (notice.texts[0].kind, notice.texts[0].writer),
            (TextKind::Notice, Writer::Harness)
        );
    }

    #[test]
    fn tool_calls_and_their_results() {
        let facts = read(
            r#"{"sessionId":"g2","kind":"subagent","messages":[
              {"id":"m1","type":"gemini","content":"","toolCalls":[
                {"id":"read_file-1","name":"read_file","args":{"file_path":"a.log"},
                 "result":[{"functionResponse":{"id":"read_file-1","name":"read_file","response":{"output":"<tool_output_masked>\nhead\n</tool_output_masked>"}}}],
                 "resultDisplay":"Read 3 lines","status":"success"},
                {"id":"shell-2","name":"run_shell_command","args":{"command":"ls"},"status":"cancelled"}
              ]}
            ]}"#,
        );
        assert_eq!(facts.sessions[0].scope.as_deref(), Some("subagent"));
        let kinds: Vec<(ItemKind, Vec<String>, Option<String>)> = facts
            .items
            .iter()
            .map(|i| (i.kind.clone(), i.ids.clone(), i.answers.clone()))
            .collect();
        let id = |s: &str| vec![s.to_owned()];
        assert_eq!(
            kinds,
            [
                (ItemKind::Message, id("m1"), None),
                (ItemKind::ToolCall, id("read_file-1"), None),
                (
                    ItemKind::ToolResult,
                    id("read_file-1"),
                    Some("read_file-1".to_owned())
                ),
                (ItemKind::ToolCall, id("shell-2"), None),
            ]
        );
        assert!(
            facts.items[0].texts.is_empty(),
            "an empty answer is no text"
        );
        assert_eq!(facts.items[1].texts[0].text, "a.log");
        assert_eq!(facts.items[1].texts[0].kind, TextKind::ToolInput);
        let result: Vec<(&str, Writer)> = facts.items[2]
            .texts
            .iter()
            .map(|t| (t.text.as_str(), t.writer))
            .collect();
        assert_eq!(
            result,
            [
                (
                    "<tool_output_masked>\nhead\n</tool_output_masked>",
                    Writer::Tool
                ),
                ("Read 3 lines", Writer::Tool),
            ]
        );
        assert_eq!(
            facts.items[2].texts[0].at.pointer,
            "/messages/0/toolCalls/0/result/0/functionResponse/response/output"
        );
    }

    #[test]
    fn malformed_files_are_unknown_and_an_empty_file_has_no_facts() {
        for bad in ["{not json", "[1, 2]", r#"{"sessionId":"g3"}"#] {
            let facts = read(bad);
            assert_eq!(facts.unknown.len(), 1, "{bad}");
            assert!(facts.items.is_empty() && facts.sessions.is_empty(), "{bad}");
        }
        let facts = read(
            r#"{"sessionId":"g4","messages":[7,{"id":"x","type":"compression","content":"c"}]}"#,
        );
        assert_eq!(facts.unknown[0].pointer, "/messages/0");
        assert_eq!(facts.items[0].kind, ItemKind::Other("compression".into()));
        assert_eq!(facts.sessions[0].scope, None);
        let empty = read("");
        assert!(empty.sessions.is_empty() && empty.items.is_empty() && empty.unknown.is_empty());
    }
}
