//! The reader of pi coding agent sessions (`<time>_<id>.jsonl`, version 3): one session a
//! file, a `session` header and then entries that form a tree by `id`/`parentId`.
//!
//! What the reader decides, and why:
//!
//! - Every entry of every branch is an item, in file order: a branch (two children of one
//!   entry, after a rewind) is inside the session, no pointer to another one.
//! - A `message` entry is one message with the entry's id: its `thinking` blocks are
//!   reasoning inside it, each `toolCall` block is a tool call after it (id = the call's
//!   id). An entry whose message, its tool calls aside, is one thinking block is a
//!   reasoning item with the entry's id (ASR-219: it stays a reasoning-only message with
//!   that id). A `toolResult` entry is a tool result answering its `toolCallId`.
//! - A user entry records no writer (pi delivers typed, piped and program input alike), so
//!   its texts have no known writer (ASR-202); a `custom_message` an extension inserts is
//!   the harness's (ASR-203).
//! - `parentSession` of the header points at the session file it came from; pi does not
//!   record in that field what the relation is, so its meaning is `None` (ASR-405). Its id
//!   is the one in the file's name (`<time>_<id>.jsonl`). pi marks no scope and no root.

use super::{Facts, Item, ItemKind, Location, Pointer, TextKind, Writer, json_lines};
use serde_json::{Map, Value};

/// Reads `files` into `facts`.
pub(super) fn read(files: &[&(String, Vec<u8>)], facts: &mut Facts) {
    for (name, bytes) in files {
        read_file(name, bytes, facts);
    }
}

fn read_file(name: &str, bytes: &[u8], facts: &mut Facts) {
    let lines = json_lines(name, bytes, &mut facts.unknown);
    if lines.is_empty() {
        return;
    }
    let header = lines
        .iter()
        .find(|(_, line)| line.get("type").and_then(Value::as_str) == Some("session"));
    let id = header
        .and_then(|(_, h)| h.get("id").and_then(Value::as_str))
        .filter(|id| !id.is_empty())
        .map_or_else(|| id_of_path(name), str::to_owned);
    let at = header.map_or_else(
        || Location::file(name, ""),
        |(n, _)| Location::line(name, *n, ""),
    );
    let session = facts.session(&id, at.clone());
    if let Some(parent) = header.and_then(|(_, h)| h.get("parentSession").and_then(Value::as_str)) {
        let to = id_of_path(parent);
        if !to.is_empty() {
            facts.sessions[session].pointers.push(Pointer {
                to,
                meaning: None,
                record: None,
                evidence: "native_field".to_owned(),
                at: at.at("/parentSession"),
            });
        }
    }
    for (n, line) in &lines {
        let at = Location::line(name, *n, "");
        entry(session, line, at, facts);
    }
}

fn entry(session: usize, line: &Map<String, Value>, at: Location, facts: &mut Facts) {
    let id = line.get("id").and_then(Value::as_str).unwrap_or("");
    let kind = line.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "session" => {}
        "message" => match line.get("message").filter(|m| m.is_object()) {
            Some(message) => read_message(session, id, message, &at, facts),
            None => facts.unknown.push(at),
        },
        "compaction" | "branch_summary" => {
            let mut item = Item::new(session, ItemKind::Other(kind.to_owned()), at).id(id);
            if let Some(summary) = line.get("summary").and_then(Value::as_str) {
                let at = item.at.at("/summary");
                item.push_text(summary, TextKind::Summary, Writer::Model, at);
            }
            facts.item(item);
        }
        "custom_message" => {
            let mut item = Item::new(session, ItemKind::Message, at).id(id);
            if let Some(content) = line.get("content") {
                let at = item.at.at("/content");
                push_blocks(
                    &mut item,
                    content,
                    TextKind::Attachment,
                    Writer::Harness,
                    &at,
                );
            }
            facts.item(item);
        }
        "model_change" | "thinking_level_change" | "custom" | "label" | "session_info" => {
            facts.item(Item::new(session, ItemKind::Other(kind.to_owned()), at).id(id));
        }
        _ => facts.unknown.push(at),
    }
}

fn read_message(session: usize, id: &str, message: &Value, at: &Location, facts: &mut Facts) {
    let base = at.at("/message");
    let content = message.get("content");
    match message.get("role").and_then(Value::as_str) {
        Some("user") => {
            let mut item = Item::new(session, ItemKind::Message, at.clone()).id(id);
            if let Some(content) = content {
                let at = base.at("/content");
                push_blocks(&mut item, content, TextKind::Prompt, Writer::Unknown, &at);
            }
            facts.item(item);
        }
        Some("assistant") => {
            let mut item = Item::new(session, ItemKind::Message, at.clone()).id(id);
            let mut calls = Vec::new();
            let blocks = content.and_then(Value::as_array);
            for (k, block) in blocks.into_iter().flatten().enumerate() {
                let at = base.at(format!("/content/{k}"));
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => push_member(&mut item, block, "text", TextKind::Answer, &at),
                    Some("thinking") => {
                        push_member(&mut item, block, "thinking", TextKind::Reasoning, &at);
                    }
                    Some("toolCall") => calls.push(tool_call(session, block, at)),
                    _ => {}
                }
            }
            if let Some(text) = content.and_then(Value::as_str) {
                item.push_text(text, TextKind::Answer, Writer::Model, base.at("/content"));
            }
            if let Some(error) = message.get("errorMessage").and_then(Value::as_str) {
                item.push_text(
                    error,
                    TextKind::Notice,
                    Writer::Harness,
                    base.at("/errorMessage"),
                );
            }
            // An entry whose message, its tool calls aside, is one thinking block is a
            // reasoning item with its own native id: it stays a reasoning-only message
            // with that id (ASR-219).
            let thinking = blocks
                .into_iter()
                .flatten()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("thinking"))
                .count();
            if thinking == 1
                && !item.ids.is_empty()
                && item.texts.iter().all(|t| t.kind == TextKind::Reasoning)
            {
                item.kind = ItemKind::Reasoning;
            }
            facts.item(item);
            for call in calls {
                facts.item(call);
            }
        }
        Some("toolResult") => {
            let call = message
                .get("toolCallId")
                .and_then(Value::as_str)
                .unwrap_or("");
            let mut item = Item::new(session, ItemKind::ToolResult, at.clone());
            item = item.id(call).id(id);
            item.answers = Some(call.to_owned()).filter(|c| !c.is_empty());
            if let Some(content) = content {
                let at = base.at("/content");
                push_blocks(&mut item, content, TextKind::ToolOutput, Writer::Tool, &at);
            }
            facts.item(item);
        }
        Some("bashExecution") => {
            // A shell command run from pi's editor (`!command`) and its output.
            let mut item = Item::new(session, ItemKind::Other("bashExecution".into()), at.clone());
            item = item.id(id);
            if let Some(command) = message.get("command").and_then(Value::as_str) {
                item.push_text(
                    command,
                    TextKind::Other,
                    Writer::Unknown,
                    base.at("/command"),
                );
            }
            if let Some(output) = message.get("output").and_then(Value::as_str) {
                item.push_text(
                    output,
                    TextKind::ToolOutput,
                    Writer::Tool,
                    base.at("/output"),
                );
            }
            facts.item(item);
        }
        Some(role) => {
            let mut item = Item::new(session, ItemKind::Other(role.to_owned()), at.clone());
            item = item.id(id);
            if let Some(content) = content {
                let at = base.at("/content");
                push_blocks(&mut item, content, TextKind::Other, Writer::Unknown, &at);
            }
            facts.item(item);
        }
        None => facts.unknown.push(at.clone()),
    }
}

fn tool_call(session: usize, block: &Value, at: Location) -> Item {
    let id = block.get("id").and_then(Value::as_str).unwrap_or("");
    let mut item = Item::new(session, ItemKind::ToolCall, at).id(id);
    if let Some(arguments) = block.get("arguments") {
        let at = item.at.at("/arguments");
        item.push_input(arguments, &at);
    }
    item
}

/// Content that is a string or an array of blocks, of which the `text` blocks are texts.
fn push_blocks(item: &mut Item, content: &Value, kind: TextKind, writer: Writer, at: &Location) {
    match content {
        Value::String(text) => item.push_text(text.as_str(), kind, writer, at.clone()),
        Value::Array(blocks) => {
            for (k, block) in blocks.iter().enumerate() {
                let text = block.get("text").and_then(Value::as_str);
                if let (Some("text"), Some(text)) =
                    (block.get("type").and_then(Value::as_str), text)
                {
                    item.push_text(text, kind, writer, at.at(format!("/{k}/text")));
                }
            }
        }
        _ => {}
    }
}

/// A block's string `member`, written by the model.
fn push_member(item: &mut Item, block: &Value, member: &str, kind: TextKind, at: &Location) {
    if let Some(text) = block.get(member).and_then(Value::as_str) {
        item.push_text(text, kind, Writer::Model, at.at(format!("/{member}")));
    }
}

/// The session id in a pi session file's path (`<time>_<id>.jsonl`), else its stem.
fn id_of_path(path: &str) -> String {
    let base = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let stem = base.strip_suffix(".jsonl").unwrap_or(base);
    stem.rsplit('_').next().unwrap_or(stem).to_owned()
}

#[cfg(test)]
mod tests {
    use super::super::{Facts, ItemKind, TextKind, Writer, golden, read as read_format};

    fn read(lines: &[&str]) -> Facts {
        let bytes = lines.join("\n").into_bytes();
        read_format("pi-session-jsonl", &[("session.jsonl".to_owned(), bytes)])
    }

    const HEADER: &str = r#"{"type":"session","version":3,"id":"p1","timestamp":"t","cwd":"/w"}"#;

    #[test]
    fn fixtures_agree_with_their_goldens() {
        let count = golden::assert_known("pi-session-jsonl", &[]);
        assert!(count >= 1, "{count} fixtures");
    }

    #[test]
    fn an_assistant_entry_is_one_message_and_its_calls() {
        let facts = read(&[
            HEADER,
            r#"{"type":"model_change","id":"m0","parentId":null,"provider":"anthropic","modelId":"x"}"#,
            r#"{"type":"message","id":"u1","parentId":"m0","message":{"role":"user","content":[{"type":"text","text":"write a haiku"},{"type":"image","data":"AAAA","mimeType":"image/png"}]}}"#,
            r#"{"type":"message","id":"a1","parentId":"u1","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Plan it.","thinkingSignature":"EoAC"},{"type":"toolCall","id":"toolu_1","name":"write","arguments":{"path":"h.txt","content":"Lines\n"}}]}}"#,
            r#"{"type":"message","id":"r1","parentId":"a1","message":{"role":"toolResult","toolCallId":"toolu_1","toolName":"write","content":[{"type":"text","text":"Wrote 6 bytes"}],"isError":false}}"#,
            r#"{"type":"message","id":"a2","parentId":"r1","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Only thinking."}]}}"#,
        ]);
        let session = &facts.sessions[0];
        assert_eq!(
            (session.id.as_str(), session.scope.clone(), session.root),
            ("p1", None, false)
        );
        assert!(session.pointers.is_empty());
        let items: Vec<(ItemKind, Vec<String>, Option<String>)> = facts
            .items
            .iter()
            .map(|i| (i.kind.clone(), i.ids.clone(), i.answers.clone()))
            .collect();
        let ids = |ids: &[&str]| ids.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            items,
            [
                (ItemKind::Other("model_change".into()), ids(&["m0"]), None),
                (ItemKind::Message, ids(&["u1"]), None),
                (ItemKind::Reasoning, ids(&["a1"]), None),
                (ItemKind::ToolCall, ids(&["toolu_1"]), None),
                (
                    ItemKind::ToolResult,
                    ids(&["toolu_1", "r1"]),
                    Some("toolu_1".to_owned())
                ),
                // A message of one thinking block is a reasoning item with the entry's id
                // (ASR-219).
                (ItemKind::Reasoning, ids(&["a2"]), None),
            ]
        );
        let prompt = &facts.items[1].texts;
        assert_eq!(prompt.len(), 1);
        assert_eq!(
            (prompt[0].kind, prompt[0].writer),
            (TextKind::Prompt, Writer::Unknown)
        );
        let thinking = &facts.items[2].texts;
        assert_eq!(thinking.len(), 1, "no signature as text");
        assert_eq!(
            (
                thinking[0].text.as_str(),
                thinking[0].kind,
                thinking[0].at.pointer.as_str()
            ),
            (
                "Plan it.",
                TextKind::Reasoning,
                "/message/content/0/thinking"
            )
        );
        let mut input: Vec<&str> = facts.items[3]
            .texts
            .iter()
            .map(|t| t.text.as_str())
            .collect();
        // serde_json keeps object members in name order.
        input.sort_unstable();
        assert_eq!(input, ["Lines\n", "h.txt"]);
        assert_eq!(facts.items[4].texts[0].writer, Writer::Tool);
    }

    #[test]
    fn every_branch_is_kept_and_a_parent_session_has_no_known_meaning() {
        let facts = read(&[
            r#"{"type":"session","version":3,"id":"p2","cwd":"/w","parentSession":"/home/u/.pi/agent/sessions/--w--/2026-02-03T22-03-00-318Z_a9642bdf-2c10-4503-abb2-081990e56318.jsonl"}"#,
            r#"{"type":"message","id":"u1","parentId":null,"message":{"role":"user","content":"first"}}"#,
            r#"{"type":"message","id":"u2","parentId":null,"message":{"role":"user","content":"second"}}"#,
            r#"{"type":"branch_summary","id":"b1","parentId":"u1","fromId":"u2","summary":"Tried a limerick."}"#,
            r#"{"type":"compaction","id":"c1","parentId":"b1","summary":"Earlier work.","firstKeptEntryId":"u1","tokensBefore":9}"#,
            r#"{"type":"custom_message","id":"x1","parentId":"c1","customType":"note","content":"Injected.","display":true}"#,
        ]);
        let pointer = &facts.sessions[0].pointers[0];
        assert_eq!(
            (
                pointer.to.as_str(),
                pointer.meaning,
                pointer.evidence.as_str()
            ),
            ("a9642bdf-2c10-4503-abb2-081990e56318", None, "native_field")
        );
        assert_eq!(facts.sessions[0].scope, None);
        let texts = golden::described(facts.items.iter().flat_map(|i| &i.texts));
        assert_eq!(
            texts,
            [
                ("first", TextKind::Prompt, Writer::Unknown),
                ("second", TextKind::Prompt, Writer::Unknown),
                ("Tried a limerick.", TextKind::Summary, Writer::Model),
                ("Earlier work.", TextKind::Summary, Writer::Model),
                ("Injected.", TextKind::Attachment, Writer::Harness),
            ]
        );
    }

    #[test]
    fn a_shell_run_and_an_error() {
        let facts = read(&[
            HEADER,
            r#"{"type":"message","id":"e1","parentId":null,"message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"overloaded"}}"#,
            r#"{"type":"message","id":"b1","parentId":"e1","message":{"role":"bashExecution","command":"rm -f a.txt","output":"","exitCode":0}}"#,
        ]);
        assert_eq!(facts.items[0].texts[0].text, "overloaded");
        assert_eq!(facts.items[0].texts[0].writer, Writer::Harness);
        let shell = &facts.items[1];
        assert_eq!(shell.kind, ItemKind::Other("bashExecution".into()));
        assert_eq!(shell.texts.len(), 1, "an empty output is no text");
        assert_eq!(shell.texts[0].text, "rm -f a.txt");
    }

    #[test]
    fn malformed_lines_are_unknown_and_an_empty_file_has_no_facts() {
        let facts = read(&[
            HEADER,
            "{not json",
            r#"{"type":"mystery","id":"z"}"#,
            r#"{"type":"message","id":"n1","message":"not an object"}"#,
            r#"{"type":"message","id":"n2","message":{"content":"no role"}}"#,
            r#"{"type":"message","id":"n3","message":{"role":"user","content":42}}"#,
        ]);
        let lines: Vec<Option<usize>> = facts.unknown.iter().map(|u| u.line).collect();
        assert_eq!(lines, [Some(2), Some(3), Some(4), Some(5)]);
        assert_eq!(facts.items.len(), 1);
        assert!(facts.items[0].texts.is_empty());

        let empty = read(&["", "  "]);
        assert!(empty.sessions.is_empty() && empty.items.is_empty() && empty.unknown.is_empty());
        // Without a header the session is named by the file's id.
        let bytes = br#"{"type":"message","id":"u1","message":{"role":"user","content":"hi"}}"#;
        let name = "2026-02-03T22-03-00-318Z_a9642bdf.jsonl";
        let facts = read_format("pi-session-jsonl", &[(name.to_owned(), bytes.to_vec())]);
        assert_eq!(facts.sessions[0].id, "a9642bdf");
    }
}
