//! The reader of Codex CLI rollouts (`rollout-*.jsonl`): one session a file, whose lines are
//! `{timestamp, type, payload}`.
//!
//! Codex keeps two streams in one file: `response_item` lines are what went to the model
//! (messages, reasoning items, tool calls and their outputs), `event_msg` lines are what the
//! interface showed (the `user_message` a person typed, the `agent_message` and
//! `agent_reasoning` that repeat an answer and a summary, errors and warnings). Newer
//! rollouts also record each turn item with its own id as an `item_completed` event.
//!
//! What the reader decides, and why:
//!
//! - A user-role text is a person's (`Writer::Person`) only when a `user_message` event of
//!   the same file holds the same text: that event is Codex's record of input typed in its
//!   interface, and the items it injects (AGENTS.md, `<environment_context>`) have none. A
//!   part that opens with one of the markers Codex puts on the context it injects is the
//!   harness's (ASR-203), each part on its own (ASR-224). In a session the source marks as
//!   a spawned subagent, typed input comes from the parent agent (`Writer::Agent`).
//! - A response item without an `id` (Codex 0.89 skips them when it writes a rollout) gets
//!   the id the kit's goldens use for it, `<session id>:<line>`; a reasoning item without
//!   one is no reasoning item with its own native id (ASR-219), so it is an
//!   `ItemKind::Other("reasoning")` with no id: a producer may fold it into a message.
//! - A response item that an `item_completed` event of the same file records again, with
//!   its own id, is one item: the event's.
//! - Lineage only from fields that state it: `forked_from_id` (forkedFrom),
//!   `source.subagent.thread_spawn.parent_thread_id` (spawnedBy); a `parent_thread_id` of
//!   `session_meta` means spawnedBy when the session is marked a subagent, else its meaning
//!   is not recorded. `scope` is `subagent` where `source.subagent` or
//!   `thread_source: "subagent"` says so, and never `primary`: a top-level `source` says how
//!   Codex was started, not that no session spawned it.
//! - `exec_command_end`, `turn_context` and other bookkeeping lines are items of their own
//!   kind without texts: what they hold restates a tool result or the settings of a turn.

use super::{
    Facts, Item, ItemKind, Location, Pointer, Relation, Session, TextKind, Writer, json_lines,
};
use serde_json::{Map, Value};

/// Reads `files` into `facts`.
pub(super) fn read(files: &[&(String, Vec<u8>)], facts: &mut Facts) {
    for (name, bytes) in files {
        read_file(name, bytes, facts);
    }
}

/// Opening markers of the context Codex injects under role user (codex-rs's contextual
/// user messages): text that opens with one is the harness's, not a person's.
const INJECTED: [&str; 7] = [
    "# AGENTS.md instructions for ",
    "<user_instructions>",
    "<environment_context>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<skill>",
    "<subagent_notification>",
];

/// What one file's lines say about the whole file, known before its lines are read in
/// order.
struct File {
    session: usize,
    /// The texts of its `user_message` events: what a person typed.
    typed: Vec<String>,
    /// Who wrote typed input: a person, or the parent agent of a spawned subagent.
    typist: Writer,
    /// Each `item_completed` item's role and texts, for the response items that repeat
    /// them; taken when matched.
    completed: Vec<(&'static str, Vec<String>)>,
}

fn read_file(name: &str, bytes: &[u8], facts: &mut Facts) {
    let lines = json_lines(name, bytes, &mut facts.unknown);
    if lines.is_empty() {
        return;
    }
    let mut file = open(name, &lines, facts);
    for (n, line) in &lines {
        let at = Location::line(name, *n, "");
        let payload = line.get("payload").filter(|p| p.is_object());
        match (line.get("type").and_then(Value::as_str), payload) {
            (Some("session_meta"), Some(p)) => session_meta(p, at, &file, facts),
            (Some("response_item"), Some(p)) => response_item(p, at, &mut file, facts),
            (Some("event_msg"), Some(p)) => event(p, at, &file, facts),
            (Some("turn_context"), Some(_)) => {
                let item = Item::new(file.session, ItemKind::Other("turn_context".into()), at);
                facts.item(item);
            }
            (Some("compacted"), Some(p)) => compacted(p, at, &file, facts),
            _ => facts.unknown.push(at),
        }
    }
}

/// The file's session (from its first `session_meta`), and what its events say.
fn open(name: &str, lines: &[(usize, Map<String, Value>)], facts: &mut Facts) -> File {
    let meta = lines.iter().find_map(|(n, line)| {
        (line.get("type").and_then(Value::as_str) == Some("session_meta"))
            .then(|| line.get("payload"))
            .flatten()
            .filter(|p| p.is_object())
            .map(|p| (*n, p))
    });
    let events = lines.iter().filter_map(|(_, line)| {
        (line.get("type").and_then(Value::as_str) == Some("event_msg"))
            .then(|| line.get("payload"))
            .flatten()
    });
    let mut typed = Vec::new();
    let mut completed = Vec::new();
    let mut thread = None;
    for event in events {
        match str_of(event, "type") {
            Some("user_message") => typed.extend(str_of(event, "message").map(str::to_owned)),
            Some("item_completed") => {
                thread = thread.or_else(|| str_of(event, "thread_id").map(str::to_owned));
                if let Some(item) = event.get("item") {
                    completed.extend(completed_key(item));
                }
            }
            _ => {}
        }
    }
    let id = meta
        .and_then(|(_, p)| str_of(p, "id"))
        .map(str::to_owned)
        .or(thread)
        .unwrap_or_else(|| id_of_file(name));
    let at = meta.map_or_else(
        || Location::file(name, ""),
        |(n, _)| Location::line(name, n, "/payload"),
    );
    let session = facts.session(&id, at);
    let mut typist = Writer::Person;
    if let Some((n, p)) = meta {
        typist = describe(
            &mut facts.sessions[session],
            p,
            &Location::line(name, n, ""),
        );
    }
    File {
        session,
        typed,
        typist,
        completed,
    }
}

/// Puts what `session_meta` says of the session on it; returns who wrote its typed input.
fn describe(session: &mut Session, meta: &Value, at: &Location) -> Writer {
    if let Some(alias) = str_of(meta, "session_id").filter(|a| *a != session.id) {
        session.aliases.push(alias.to_owned());
    }
    let subagent = meta.pointer("/source/subagent");
    let marked = subagent.is_some() || str_of(meta, "thread_source") == Some("subagent");
    if marked {
        session.scope = Some("subagent".to_owned());
    }
    let mut pointers: Vec<(String, Option<Relation>, String)> = Vec::new();
    if let Some(to) = str_of(meta, "forked_from_id") {
        pointers.push((
            to.into(),
            Some(Relation::ForkedFrom),
            "/forked_from_id".into(),
        ));
    }
    let spawn = "/source/subagent/thread_spawn/parent_thread_id";
    if let Some(to) = meta.pointer(spawn).and_then(Value::as_str) {
        pointers.push((to.into(), Some(Relation::SpawnedBy), spawn.into()));
    }
    if let Some(to) = str_of(meta, "parent_thread_id") {
        let meaning = marked.then_some(Relation::SpawnedBy);
        if !pointers.iter().any(|(t, m, _)| t == to && *m == meaning) {
            pointers.push((to.into(), meaning, "/parent_thread_id".into()));
        }
    }
    for (to, meaning, pointer) in pointers.into_iter().filter(|(to, ..)| !to.is_empty()) {
        session.pointers.push(Pointer {
            to,
            meaning,
            record: None,
            evidence: "native_field".to_owned(),
            at: at.at(format!("/payload{pointer}")),
        });
    }
    match subagent {
        Some(s) if s.get("thread_spawn").is_some() => Writer::Agent,
        Some(_) => Writer::Unknown,
        None if marked => Writer::Unknown,
        None => Writer::Person,
    }
}

/// The session id in a rollout's file name (`rollout-<time>-<uuid>.jsonl`), else its stem.
fn id_of_file(name: &str) -> String {
    let stem = name.rsplit('/').next().unwrap_or(name);
    let stem = stem.strip_suffix(".jsonl").unwrap_or(stem);
    let uuid = stem
        .len()
        .checked_sub(36)
        .and_then(|start| stem.get(start..))
        .filter(|u| u.chars().all(|c| c.is_ascii_hexdigit() || c == '-') && u.contains('-'));
    uuid.unwrap_or(stem).to_owned()
}

fn session_meta(meta: &Value, at: Location, file: &File, facts: &mut Facts) {
    let mut item = Item::new(file.session, ItemKind::Other("session_meta".into()), at);
    for pointer in ["/base_instructions/text", "/instructions"] {
        if let Some(text) = meta.pointer(pointer).and_then(Value::as_str) {
            let at = item.at.at(format!("/payload{pointer}"));
            item.push_text(text, TextKind::Instructions, Writer::Harness, at);
        }
    }
    facts.item(item);
}

fn response_item(p: &Value, at: Location, file: &mut File, facts: &mut Facts) {
    let Some(kind) = str_of(p, "type") else {
        facts.unknown.push(at);
        return;
    };
    let own_id = str_of(p, "id").filter(|id| !id.is_empty());
    // An item without an id of its own has no native id to keep: a producer derives one
    // (ASR-067), which is no fact of the source.
    let item = match kind {
        "message" => {
            let mut item = Item::new(file.session, ItemKind::Message, at);
            if let Some(id) = own_id {
                item = item.id(id);
            }
            let role = str_of(p, "role").unwrap_or("");
            let parts = p.get("content").and_then(Value::as_array);
            for (k, part) in parts.into_iter().flatten().enumerate() {
                let text = str_of(part, "text").or_else(|| str_of(part, "refusal"));
                let Some(text) = text else { continue };
                let (kind, writer) = match role {
                    "assistant" => (TextKind::Answer, Writer::Model),
                    "user" => user_text(text, file),
                    "developer" | "system" => (TextKind::Attachment, Writer::Harness),
                    _ => (TextKind::Other, Writer::Unknown),
                };
                let at = item.at.at(format!("/payload/content/{k}/text"));
                item.push_text(text, kind, writer, at);
            }
            let role = if role == "assistant" {
                "assistant"
            } else {
                "user"
            };
            if own_id.is_none() && file.repeated(role, &item) {
                return;
            }
            item
        }
        "reasoning" => {
            let mut item = match own_id {
                Some(id) => Item::new(file.session, ItemKind::Reasoning, at).id(id),
                None => Item::new(file.session, ItemKind::Other("reasoning".into()), at),
            };
            for (member, kind) in [
                ("summary", TextKind::Summary),
                ("content", TextKind::Reasoning),
            ] {
                let segments = p.get(member).and_then(Value::as_array);
                for (k, segment) in segments.into_iter().flatten().enumerate() {
                    if let Some(text) = str_of(segment, "text") {
                        let at = item.at.at(format!("/payload/{member}/{k}/text"));
                        item.push_text(text, kind, Writer::Model, at);
                    }
                }
            }
            if own_id.is_none() && file.repeated("reasoning", &item) {
                return;
            }
            item
        }
        "function_call" | "custom_tool_call" | "local_shell_call" | "tool_search_call" => {
            let call = str_of(p, "call_id").or(own_id);
            let mut item = Item::new(file.session, ItemKind::ToolCall, at);
            item = item.id(call.unwrap_or("")).id(own_id.unwrap_or(""));
            for member in ["arguments", "input", "action"] {
                if let Some(input) = p.get(member) {
                    let at = item.at.at(format!("/payload/{member}"));
                    push_call_input(&mut item, input, &at);
                }
            }
            item
        }
        "web_search_call" => {
            let mut item = Item::new(file.session, ItemKind::ToolCall, at);
            item = item.id(own_id.unwrap_or(""));
            if let Some(action) = p.get("action") {
                let at = item.at.at("/payload/action");
                item.push_input(action, &at);
            }
            item
        }
        "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => {
            let call = str_of(p, "call_id").unwrap_or("");
            let mut item = Item::new(file.session, ItemKind::ToolResult, at).id(call);
            item.answers = Some(call.to_owned()).filter(|c| !c.is_empty());
            if let Some(output) = p.get("output") {
                let at = item.at.at("/payload/output");
                push_output(&mut item, output, &at);
            }
            item
        }
        other => Item::new(file.session, ItemKind::Other(other.to_owned()), at),
    };
    facts.item(item);
}

/// The kind and writer of a user-role text.
fn user_text(text: &str, file: &File) -> (TextKind, Writer) {
    let opening = text.trim_start();
    if INJECTED.iter().any(|marker| opening.starts_with(marker)) {
        (TextKind::Attachment, Writer::Harness)
    } else if file.typed.iter().any(|t| t == text) {
        (TextKind::Prompt, file.typist)
    } else {
        (TextKind::Prompt, Writer::Unknown)
    }
}

/// A call's input: `arguments` and a custom tool's `input` are strings, holding JSON for a
/// function call (its strings are the texts) and free text for a custom tool.
fn push_call_input(item: &mut Item, input: &Value, at: &Location) {
    match input {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(parsed @ (Value::Object(_) | Value::Array(_))) => item.push_input(&parsed, at),
            _ => item.push_text(s.as_str(), TextKind::ToolInput, Writer::Model, at.clone()),
        },
        other => item.push_input(other, at),
    }
}

/// A tool's output: a string, or (newer Codex) content items or `{content, success}`.
fn push_output(item: &mut Item, output: &Value, at: &Location) {
    match output {
        Value::String(s) => {
            item.push_text(s.as_str(), TextKind::ToolOutput, Writer::Tool, at.clone());
        }
        Value::Array(parts) => {
            for (k, part) in parts.iter().enumerate() {
                if let Some(text) = str_of(part, "text") {
                    let at = at.at(format!("/{k}/text"));
                    item.push_text(text, TextKind::ToolOutput, Writer::Tool, at);
                }
            }
        }
        Value::Object(members) => {
            if let Some(content) = members.get("content") {
                push_output(item, content, &at.at("/content"));
            }
        }
        _ => {}
    }
}

fn event(p: &Value, at: Location, file: &File, facts: &mut Facts) {
    let Some(kind) = str_of(p, "type") else {
        facts.unknown.push(at);
        return;
    };
    let echo = |member: &str, text_kind: TextKind, writer: Writer| {
        let mut item = Item::new(file.session, ItemKind::Other(kind.to_owned()), at.clone());
        if let Some(text) = str_of(p, member) {
            let at = item.at.at(format!("/payload/{member}"));
            item.push_text(text, text_kind, writer, at);
        }
        item
    };
    let item = match kind {
        "user_message" => echo("message", TextKind::Prompt, file.typist),
        "agent_message" => echo("message", TextKind::Answer, Writer::Model),
        "agent_reasoning" => echo("text", TextKind::Summary, Writer::Model),
        "agent_reasoning_raw_content" => echo("text", TextKind::Reasoning, Writer::Model),
        "task_complete" => echo("last_agent_message", TextKind::Answer, Writer::Model),
        "error" | "warning" | "stream_error" | "background_event" => {
            let mut item = echo("message", TextKind::Notice, Writer::Harness);
            item.kind = ItemKind::Notice;
            item
        }
        "item_completed" => match p.get("item") {
            Some(thread_item) => completed(thread_item, at, file),
            None => Item::new(file.session, ItemKind::Other(kind.to_owned()), at),
        },
        _ => Item::new(file.session, ItemKind::Other(kind.to_owned()), at),
    };
    facts.item(item);
}

/// A thread item of an `item_completed` event (codex-rs `TurnItem`).
fn completed(thread_item: &Value, at: Location, file: &File) -> Item {
    let id = str_of(thread_item, "id").unwrap_or("");
    let base = at.at("/payload/item");
    let mut item = match str_of(thread_item, "type") {
        Some("UserMessage" | "AgentMessage") => Item::new(file.session, ItemKind::Message, at),
        Some("Reasoning") => Item::new(file.session, ItemKind::Reasoning, at),
        Some(other) => Item::new(file.session, ItemKind::Other(other.to_owned()), at),
        None => Item::new(file.session, ItemKind::Other("item_completed".into()), at),
    };
    item = item.id(id);
    match str_of(thread_item, "type") {
        Some(kind @ ("UserMessage" | "AgentMessage")) => {
            let parts = thread_item.get("content").and_then(Value::as_array);
            for (k, part) in parts.into_iter().flatten().enumerate() {
                let Some(text) = str_of(part, "text") else {
                    continue;
                };
                let (text_kind, writer) = if kind == "UserMessage" {
                    user_text(text, file)
                } else {
                    (TextKind::Answer, Writer::Model)
                };
                item.push_text(
                    text,
                    text_kind,
                    writer,
                    base.at(format!("/content/{k}/text")),
                );
            }
        }
        Some("Reasoning") => {
            for (member, kind) in [
                ("summary_text", TextKind::Summary),
                ("raw_content", TextKind::Reasoning),
            ] {
                let segments = thread_item.get(member).and_then(Value::as_array);
                for (k, segment) in segments.into_iter().flatten().enumerate() {
                    if let Some(text) = segment.as_str() {
                        let at = base.at(format!("/{member}/{k}"));
                        item.push_text(text, kind, Writer::Model, at);
                    }
                }
            }
        }
        Some("Plan") => {
            if let Some(text) = str_of(thread_item, "text") {
                item.push_text(text, TextKind::Other, Writer::Model, base.at("/text"));
            }
        }
        Some("WebSearch") => {
            if let Some(query) = thread_item.get("query") {
                item.push_input(query, &base.at("/query"));
            }
        }
        _ => {}
    }
    item
}

/// The role and texts of a thread item that a response item may repeat.
fn completed_key(item: &Value) -> Option<(&'static str, Vec<String>)> {
    let (role, members): (&'static str, &[&str]) = match str_of(item, "type")? {
        "UserMessage" => ("user", &["content"]),
        "AgentMessage" => ("assistant", &["content"]),
        "Reasoning" => ("reasoning", &["summary_text", "raw_content"]),
        _ => return None,
    };
    let mut texts = Vec::new();
    for member in members {
        for value in item
            .get(*member)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let text = value.as_str().or_else(|| str_of(value, "text"));
            texts.extend(text.filter(|t| !t.is_empty()).map(str::to_owned));
        }
    }
    Some((role, texts))
}

impl File {
    /// Whether a thread item recorded `item` again (the same role and texts), taking it.
    fn repeated(&mut self, role: &str, item: &Item) -> bool {
        let texts: Vec<&str> = item.texts.iter().map(|t| t.text.as_str()).collect();
        let found = self.completed.iter().position(|(r, t)| {
            *r == role && t.iter().map(String::as_str).eq(texts.iter().copied())
        });
        found.map(|n| self.completed.remove(n)).is_some()
    }
}

fn compacted(p: &Value, at: Location, file: &File, facts: &mut Facts) {
    let mut item = Item::new(file.session, ItemKind::Other("compacted".into()), at);
    if let Some(text) = str_of(p, "message") {
        let at = item.at.at("/payload/message");
        item.push_text(text, TextKind::Summary, Writer::Model, at);
    }
    let history = p.get("replacement_history").and_then(Value::as_array);
    for (k, kept) in history.into_iter().flatten().enumerate() {
        let parts = kept.get("content").and_then(Value::as_array);
        for (j, part) in parts.into_iter().flatten().enumerate() {
            if let Some(text) = str_of(part, "text") {
                let at = item
                    .at
                    .at(format!("/payload/replacement_history/{k}/content/{j}/text"));
                item.push_text(text, TextKind::Other, Writer::Unknown, at);
            }
        }
    }
    facts.item(item);
}

fn str_of<'a>(value: &'a Value, member: &str) -> Option<&'a str> {
    value.get(member).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::super::{Facts, ItemKind, Relation, TextKind, Writer, golden, read as read_format};

    fn read(lines: &[&str]) -> Facts {
        let bytes = lines.join("\n").into_bytes();
        read_format("codex-rollout", &[("rollout.jsonl".to_owned(), bytes)])
    }

    const META: &str = r#"{"timestamp":"t","type":"session_meta","payload":{"id":"s1","cwd":"/w","originator":"codex_exec","source":"exec","base_instructions":{"text":"You are Codex."}}}"#;

    #[test]
    fn fixtures_agree_with_their_goldens() {
        const INSTRUCTIONS: &str = "text not in the golden: \"You are Codex, based on GPT-5.";
        const NO_ID: &str = "no id [";
        let count = golden::assert_known(
            "codex-rollout",
            &[
                // The goldens keep no session_meta.base_instructions.text: they declare
                // instructions lost (producer.lossy).
                ("codex-rollout/crud_instructions_01", INSTRUCTIONS),
                ("codex-rollout/crud_reasoning_01", INSTRUCTIONS),
                ("codex-rollout/injected_context_audience_01", INSTRUCTIONS),
                ("codex-rollout/ui_events_only_01", INSTRUCTIONS),
                // A user or developer message item has no id of its own: a producer derives
                // one (ASR-067), so the facts hold none to find in the golden.
                ("codex-rollout/crud_instructions_01", NO_ID),
                ("codex-rollout/crud_instructions_01", NO_ID),
                ("codex-rollout/crud_instructions_01", NO_ID),
                ("codex-rollout/crud_instructions_01", NO_ID),
                ("codex-rollout/crud_reasoning_01", NO_ID),
                ("codex-rollout/crud_reasoning_01", NO_ID),
                ("codex-rollout/injected_context_audience_01", NO_ID),
                ("codex-rollout/injected_context_audience_01", NO_ID),
                ("codex-rollout/injected_context_audience_01", NO_ID),
                ("codex-rollout/injected_context_audience_01", NO_ID),
                ("codex-rollout/update_plan_01", NO_ID),
                ("codex-rollout/update_plan_01", NO_ID),
            ],
        );
        assert!(count >= 6, "{count} fixtures");
    }

    #[test]
    fn each_part_of_a_user_item_has_its_own_writer() {
        let facts = read(&[
            META,
            r##"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"# AGENTS.md instructions for /w\n\nUse cargo."},{"type":"input_text","text":"<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"},{"type":"input_text","text":"Fix the parser."}]}}"##,
            r#"{"type":"event_msg","payload":{"type":"user_message","message":"Fix the parser.","images":[]}}"#,
            r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"No event typed this."}]}}"#,
            r#"{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>x</permissions instructions>"}]}}"#,
        ]);
        let user = &facts.items[1];
        assert_eq!(user.kind, ItemKind::Message);
        // No id of its own: a producer derives one (ASR-067), no fact of the source.
        assert!(user.ids.is_empty());
        let writers: Vec<(Writer, TextKind)> =
            user.texts.iter().map(|t| (t.writer, t.kind)).collect();
        assert_eq!(
            writers,
            [
                (Writer::Harness, TextKind::Attachment),
                (Writer::Harness, TextKind::Attachment),
                (Writer::Person, TextKind::Prompt)
            ]
        );
        assert_eq!(user.texts[2].at.pointer, "/payload/content/2/text");
        // The event is an item of its own kind that repeats the typed text.
        assert_eq!(facts.items[2].kind, ItemKind::Other("user_message".into()));
        assert_eq!(facts.items[2].texts[0].writer, Writer::Person);
        assert_eq!(facts.items[3].texts[0].writer, Writer::Unknown);
        assert_eq!(facts.items[4].texts[0].writer, Writer::Harness);
        assert!(facts.items[4].ids.is_empty());
    }

    #[test]
    fn the_session_and_its_instructions() {
        let facts = read(&[META]);
        assert_eq!(facts.sessions.len(), 1);
        let session = &facts.sessions[0];
        assert_eq!(
            (session.id.as_str(), session.scope.as_deref(), session.root),
            ("s1", None, false)
        );
        assert!(session.pointers.is_empty());
        let meta = &facts.items[0];
        assert_eq!(meta.kind, ItemKind::Other("session_meta".into()));
        assert_eq!(meta.texts[0].text, "You are Codex.");
        assert_eq!(meta.texts[0].writer, Writer::Harness);
    }

    #[test]
    fn a_reasoning_item_is_one_only_with_its_own_id() {
        let facts = read(&[
            META,
            r#"{"type":"response_item","payload":{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"**Plan**"},{"type":"summary_text","text":"**Then**"}],"content":[{"type":"reasoning_text","text":"step"}],"encrypted_content":"gAAA"}}"#,
            r#"{"type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"**Bare**"}],"content":null,"encrypted_content":"gAAB"}}"#,
        ]);
        let own = &facts.items[1];
        assert_eq!(
            (own.kind.clone(), own.ids.clone()),
            (ItemKind::Reasoning, vec!["rs_1".to_owned()])
        );
        let texts = golden::described(&own.texts);
        assert_eq!(
            texts,
            [
                ("**Plan**", TextKind::Summary, Writer::Model),
                ("**Then**", TextKind::Summary, Writer::Model),
                ("step", TextKind::Reasoning, Writer::Model)
            ]
        );
        let bare = &facts.items[2];
        assert_eq!(bare.kind, ItemKind::Other("reasoning".into()));
        assert!(bare.ids.is_empty());
        assert_eq!(bare.texts.len(), 1, "no encrypted content as text");
    }

    #[test]
    fn tool_calls_and_outputs() {
        let facts = read(&[
            META,
            r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls\\n-la\",\"n\":2}","call_id":"call_1"}}"#,
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"a\r\nb"}}"#,
            r#"{"type":"response_item","payload":{"type":"custom_tool_call","status":"completed","call_id":"call_2","name":"apply_patch","input":"*** Begin Patch\n"}}"#,
            r#"{"type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"call_2","output":"{\"output\":\"Done\"}"}}"#,
            r#"{"type":"response_item","payload":{"type":"function_call","name":"f","arguments":"not json","call_id":"call_3"}}"#,
        ]);
        let call = &facts.items[1];
        assert_eq!(
            (call.kind.clone(), call.ids.clone()),
            (ItemKind::ToolCall, vec!["call_1".to_owned()])
        );
        assert_eq!(call.texts.len(), 1);
        assert_eq!(call.texts[0].text, "ls\n-la");
        assert_eq!(call.texts[0].at.pointer, "/payload/arguments/cmd");
        let result = &facts.items[2];
        assert_eq!(result.kind, ItemKind::ToolResult);
        assert_eq!(result.answers.as_deref(), Some("call_1"));
        assert_eq!(
            (result.texts[0].text.as_str(), result.texts[0].writer),
            ("a\r\nb", Writer::Tool)
        );
        assert_eq!(facts.items[3].texts[0].text, "*** Begin Patch\n");
        // The output is stored as a string: that string is the text, JSON or not.
        assert_eq!(facts.items[4].texts[0].text, "{\"output\":\"Done\"}");
        assert_eq!(facts.items[5].texts[0].text, "not json");
    }

    #[test]
    fn lineage_only_from_fields_that_state_it() {
        let facts = read(&[
            r#"{"type":"session_meta","payload":{"id":"child","forked_from_id":"base","source":{"subagent":{"thread_spawn":{"parent_thread_id":"parent","depth":1}}}}}"#,
            r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Check the tests."}]}}"#,
            r#"{"type":"event_msg","payload":{"type":"user_message","message":"Check the tests."}}"#,
        ]);
        let session = &facts.sessions[0];
        assert_eq!(session.scope.as_deref(), Some("subagent"));
        assert!(!session.root);
        let pointers: Vec<(&str, Option<Relation>, &str, &str)> = session
            .pointers
            .iter()
            .map(|p| {
                (
                    p.to.as_str(),
                    p.meaning,
                    p.evidence.as_str(),
                    p.at.pointer.as_str(),
                )
            })
            .collect();
        assert_eq!(
            pointers,
            [
                (
                    "base",
                    Some(Relation::ForkedFrom),
                    "native_field",
                    "/payload/forked_from_id"
                ),
                (
                    "parent",
                    Some(Relation::SpawnedBy),
                    "native_field",
                    "/payload/source/subagent/thread_spawn/parent_thread_id"
                ),
            ]
        );
        // A spawned subagent's input comes from its parent agent.
        assert_eq!(facts.items[1].texts[0].writer, Writer::Agent);

        let unsaid =
            read(&[r#"{"type":"session_meta","payload":{"id":"s2","parent_thread_id":"p"}}"#]);
        let pointer = &unsaid.sessions[0].pointers[0];
        assert_eq!((pointer.to.as_str(), pointer.meaning), ("p", None));
        assert_eq!(unsaid.sessions[0].scope, None);
    }

    #[test]
    fn thread_items_keep_their_ids_and_are_not_read_twice() {
        let facts = read(&[
            r#"{"type":"session_meta","payload":{"id":"s3","session_id":"s3-alias"}}"#,
            r#"{"type":"event_msg","payload":{"type":"item_completed","thread_id":"s3","item":{"type":"Reasoning","id":"rs_9","summary_text":["**Think**"],"raw_content":[]}}}"#,
            r#"{"type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"**Think**"}],"encrypted_content":"x"}}"#,
            r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","id":"msg_9","content":[{"type":"Text","text":"Done."}],"phase":"final_answer"}}}"#,
            r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}}"#,
            r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}}"#,
        ]);
        assert_eq!(facts.sessions[0].aliases, ["s3-alias"]);
        let kinds: Vec<(ItemKind, Vec<String>)> = facts
            .items
            .iter()
            .map(|i| (i.kind.clone(), i.ids.clone()))
            .collect();
        assert_eq!(
            kinds,
            [
                (ItemKind::Other("session_meta".into()), vec![]),
                (ItemKind::Reasoning, vec!["rs_9".to_owned()]),
                (ItemKind::Message, vec!["msg_9".to_owned()]),
                // Only one of the two repeats is the thread item's.
                (ItemKind::Message, vec![]),
            ]
        );
        assert_eq!(facts.items[1].texts[0].kind, TextKind::Summary);
    }

    #[test]
    fn notices_and_compaction() {
        let facts = read(&[
            META,
            r#"{"type":"event_msg","payload":{"type":"error","message":"stream disconnected"}}"#,
            r#"{"type":"compacted","payload":{"message":"Summary of the work."}}"#,
            r#"{"type":"event_msg","payload":{"type":"token_count","info":null}}"#,
        ]);
        let notice = &facts.items[1];
        assert_eq!(notice.kind, ItemKind::Notice);
        assert_eq!(
            (notice.texts[0].kind, notice.texts[0].writer),
            (TextKind::Notice, Writer::Harness)
        );
        assert_eq!(facts.items[2].texts[0].text, "Summary of the work.");
        assert_eq!(facts.items[3].kind, ItemKind::Other("token_count".into()));
        assert!(facts.items[3].texts.is_empty());
    }

    #[test]
    fn malformed_lines_are_unknown_and_an_empty_file_has_no_facts() {
        let facts = read(&[
            META,
            "{not json",
            r#"["an array"]"#,
            r#"{"type":"mystery","payload":{}}"#,
            r#"{"type":"response_item","payload":"not an object"}"#,
            r#"{"type":"response_item","payload":{"type":"message","role":"user","content":"not an array"}}"#,
        ]);
        let lines: Vec<Option<usize>> = facts.unknown.iter().map(|u| u.line).collect();
        assert_eq!(lines, [Some(2), Some(3), Some(4), Some(5)]);
        assert_eq!(facts.items.len(), 2);
        assert!(facts.items[1].texts.is_empty());

        let empty = read(&[""]);
        assert!(empty.sessions.is_empty() && empty.items.is_empty() && empty.unknown.is_empty());
        // Without session_meta the session is named by the rollout file's UUID.
        let bytes = br#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi"}]}}"#;
        let name = "rollout-2026-01-25T10-32-00-019bf4b5-e7b0-75a0-8bf2-05fbf1b13c9b.jsonl";
        let facts = read_format("codex-rollout", &[(name.to_owned(), bytes.to_vec())]);
        assert_eq!(facts.sessions[0].id, "019bf4b5-e7b0-75a0-8bf2-05fbf1b13c9b");
        assert!(facts.items[0].ids.is_empty());
    }
}
