//! The reader of Claude Code's session files (`claude-code-jsonl`).
//!
//! A main session file `<sessionId>.jsonl` holds the session's lines (`isSidechain:
//! false`) and, in the older layout, the lines of its subagents inline (`isSidechain:
//! true`, the parent's `sessionId`, no `agentId`, the first with `parentUuid` null). A
//! subagent file `agent-<agentId>.jsonl` holds one subagent's lines, every one
//! `isSidechain: true` with its `agentId` and the parent's `sessionId`.
//!
//! One API response is stored one content block per line, the lines sharing
//! `message.id`: they are one message, whose texts are the `text` and `thinking` blocks;
//! each `tool_use` block is a tool call of its own. A user line's `tool_result` blocks are
//! tool results; its other texts are a message, whose writer the line's markers decide
//! (`isMeta`, `isCompactSummary`, the tags Claude Code wraps inserted text in,
//! `isSidechain`, `userType`).

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::{Facts, Item, ItemKind, Location, Pointer, Relation, TextKind, Writer, json_lines};

/// Reads `files` into `facts`.
pub(super) fn read(files: &[&(String, Vec<u8>)], facts: &mut Facts) {
    for (name, bytes) in files {
        let jsonl = std::path::Path::new(name.as_str())
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("jsonl"));
        if jsonl {
            read_file(name, bytes, facts);
        } else {
            facts.unknown.push(Location::file(name, ""));
        }
    }
}

/// Kinds of lines a producer need not write: known, holding no text to keep.
const OTHER_LINES: [&str; 6] = [
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "progress",
    "custom-title",
    "tag",
];

/// `system` subtypes that only mark where the harness compacted the conversation.
const BOUNDARIES: [&str; 2] = ["compact_boundary", "microcompact_boundary"];

type Line = Map<String, Value>;

/// What reading one file keeps between its lines.
struct FileReader<'a> {
    name: &'a str,
    /// The agentId the file's name gives (`agent-<agentId>.jsonl`).
    agent_file: Option<String>,
    /// The session a line with no session of its own (a summary, a snapshot) belongs to.
    main_session: String,
    /// Every `uuid` of the file.
    uuids: HashSet<String>,
    /// Inline sidechain lines, by `uuid`: the sidechain each belongs to.
    sidechains: HashMap<String, String>,
    /// Each API response, by session and `message.id`.
    responses: HashMap<(usize, String), Response>,
}

/// The lines of one API response read so far.
#[derive(Default)]
struct Response {
    /// Its message item, once a line of it has text.
    item: Option<usize>,
    /// The `uuid` of each of its lines.
    uuids: Vec<String>,
}

fn read_file(name: &str, bytes: &[u8], facts: &mut Facts) {
    let lines = json_lines(name, bytes, &mut facts.unknown);
    let stem = std::path::Path::new(name)
        .file_stem()
        .and_then(|stem| stem.to_str())
        .unwrap_or(name);
    let agent_file = stem
        .strip_prefix("agent-")
        .filter(|id| !id.is_empty())
        .map(str::to_owned);
    let main_session = agent_file
        .clone()
        .or_else(|| {
            lines
                .iter()
                .filter(|(_, l)| !sidechain(l))
                .find_map(|(_, l)| text_of(l, "sessionId"))
                .map(str::to_owned)
        })
        .unwrap_or_else(|| stem.to_owned());
    let uuids = lines
        .iter()
        .filter_map(|(_, l)| text_of(l, "uuid"))
        .map(str::to_owned)
        .collect();
    let mut reader = FileReader {
        name,
        agent_file,
        main_session,
        uuids,
        sidechains: HashMap::new(),
        responses: HashMap::new(),
    };
    for (n, line) in &lines {
        reader.line(*n, line, facts);
    }
}

impl FileReader<'_> {
    fn line(&mut self, n: usize, line: &Line, facts: &mut Facts) {
        let at = Location::line(self.name, n, "");
        let kind = text_of(line, "type").unwrap_or_default();
        match kind {
            "user" | "assistant" | "attachment" | "system" => {}
            _ if OTHER_LINES.contains(&kind) => {
                let session = if line.contains_key("sessionId") {
                    self.session_of(line, &at, facts)
                } else {
                    facts.session(&self.main_session, at.clone())
                };
                facts.item(Item::new(session, ItemKind::Other(kind.to_owned()), at));
                return;
            }
            _ => {
                facts.unknown.push(at);
                return;
            }
        }
        let session = self.session_of(line, &at, facts);
        match kind {
            "user" => self.user(session, line, &at, facts),
            "assistant" => self.assistant(session, line, &at, facts),
            "attachment" => attachment(session, line, &at, facts),
            _ => system(session, line, &at, facts),
        }
    }

    /// The session `line` belongs to, with the scope and pointers its markers give.
    fn session_of(&mut self, line: &Line, at: &Location, facts: &mut Facts) -> usize {
        let parent = text_of(line, "sessionId")
            .unwrap_or(&self.main_session)
            .to_owned();
        let agent = text_of(line, "agentId")
            .filter(|id| !id.is_empty())
            .map(str::to_owned)
            .or_else(|| self.agent_file.clone());
        if !sidechain(line) {
            // Every line of a subagent's file is the subagent's, marked or not.
            let id = agent
                .filter(|_| self.agent_file.is_some())
                .unwrap_or(parent);
            let n = facts.session(&id, at.clone());
            if line.get("isSidechain") == Some(&Value::Bool(false)) {
                facts.sessions[n]
                    .scope
                    .get_or_insert_with(|| "primary".to_owned());
            }
            return n;
        }
        let (n, evidence) = match agent {
            Some(agent) => {
                let n = facts.session(&agent, at.clone());
                // A parentUuid that names no line of the file points into the parent
                // session, which the source does not say this one is a fork, copy or
                // continuation of.
                if let Some(up) = text_of(line, "parentUuid") {
                    if !self.uuids.contains(up) && parent != agent {
                        add_pointer(facts, n, pointer(&parent, None, "native_field", at));
                    }
                }
                (n, "native_field")
            }
            None => (self.inline_sidechain(line, at, facts), "native_structure"),
        };
        facts.sessions[n]
            .scope
            .get_or_insert_with(|| "subagent".to_owned());
        if facts.sessions[n].id != parent {
            add_pointer(
                facts,
                n,
                pointer(&parent, Some(Relation::SpawnedBy), evidence, at),
            );
        }
        n
    }

    /// The inline sidechain `line` is part of: the one its `parentUuid` is in, else a new
    /// one named by the line's own `uuid`, as the goldens name it.
    fn inline_sidechain(&mut self, line: &Line, at: &Location, facts: &mut Facts) -> usize {
        let uuid = text_of(line, "uuid");
        let id = text_of(line, "parentUuid")
            .and_then(|up| self.sidechains.get(up).cloned())
            .or_else(|| uuid.map(str::to_owned))
            .unwrap_or_else(|| format!("{}#sidechain-{}", self.main_session, at.line.unwrap_or(0)));
        if let Some(uuid) = uuid {
            self.sidechains.insert(uuid.to_owned(), id.clone());
        }
        facts.session(&id, at.clone())
    }

    fn user(&mut self, session: usize, line: &Line, at: &Location, facts: &mut Facts) {
        let uuid = text_of(line, "uuid").unwrap_or_default();
        let mut message = Item::new(session, ItemKind::Message, at.clone()).id(uuid);
        let mut slot = None;
        match line.get("message").and_then(|m| m.get("content")) {
            Some(Value::String(text)) => {
                let (writer, kind) = user_writer(line, text, self.compaction(line));
                message.push_text(text, kind, writer, at.at("/message/content"));
            }
            Some(Value::Array(blocks)) => {
                let results = blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                    .count();
                for (k, block) in blocks.iter().enumerate() {
                    let here = at.at(format!("/message/content/{k}"));
                    match block.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                            let (writer, kind) = user_writer(line, text, self.compaction(line));
                            message.push_text(text, kind, writer, here.at("/text"));
                            slot.get_or_insert(facts.items.len());
                        }
                        Some("tool_result") => {
                            let mut result = tool_result(session, block, &here);
                            // The line's toolUseResult is of its one result only.
                            if results == 1 {
                                tool_use_result(&mut result, line, at);
                            }
                            facts.item(result);
                        }
                        Some("image" | "document") => {}
                        _ => facts.unknown.push(here),
                    }
                }
            }
            _ => {
                facts.unknown.push(at.at("/message"));
                return;
            }
        }
        // The parent session's prompt to its subagent: the line names the sender, the
        // session of its sessionId.
        if message.texts.iter().any(|t| t.writer == Writer::Agent) {
            message.recorded.push("from".to_owned());
        }
        if !message.texts.is_empty() {
            let slot = slot.unwrap_or(facts.items.len()).min(facts.items.len());
            facts.items.insert(slot, message);
        }
    }

    fn assistant(&mut self, session: usize, line: &Line, at: &Location, facts: &mut Facts) {
        let uuid = text_of(line, "uuid").unwrap_or_default();
        let Some(message) = line.get("message") else {
            facts.unknown.push(at.clone());
            return;
        };
        let response = message
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .unwrap_or(uuid)
            .to_owned();
        self.response_line(session, &response, uuid, facts);
        // Claude Code writes its own error and placeholder answers as assistant lines of
        // the model `<synthetic>`: no model generated them.
        let writer = if message.get("model").and_then(Value::as_str) == Some("<synthetic>")
            || line.get("isApiErrorMessage") == Some(&Value::Bool(true))
        {
            Writer::Harness
        } else {
            Writer::Model
        };
        let mut texts = Vec::new();
        match message.get("content") {
            Some(Value::String(text)) => {
                texts.push((text.as_str(), TextKind::Answer, at.at("/message/content")));
            }
            Some(Value::Array(blocks)) => {
                for (k, block) in blocks.iter().enumerate() {
                    let here = at.at(format!("/message/content/{k}"));
                    let block_type = block.get("type").and_then(Value::as_str).unwrap_or("");
                    match block_type {
                        "text" => {
                            let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                            texts.push((text, TextKind::Answer, here.at("/text")));
                        }
                        "thinking" => {
                            let text = block.get("thinking").and_then(Value::as_str).unwrap_or("");
                            texts.push((text, TextKind::Reasoning, here.at("/thinking")));
                        }
                        "redacted_thinking" => {}
                        "tool_use" | "server_tool_use" | "mcp_tool_use" => {
                            let id = block.get("id").and_then(Value::as_str).unwrap_or("");
                            let mut call =
                                Item::new(session, ItemKind::ToolCall, here.clone()).id(id);
                            if let Some(input) = block.get("input") {
                                call.push_input(input, &here.at("/input"));
                            }
                            self.flush(session, &response, writer, &mut texts, at, facts);
                            facts.item(call);
                        }
                        _ if block_type.ends_with("_tool_result") => {
                            self.flush(session, &response, writer, &mut texts, at, facts);
                            let mut result = Item::new(session, ItemKind::ToolResult, here);
                            if let Some(id) = block.get("tool_use_id").and_then(Value::as_str) {
                                result = result.id(id);
                                result.answers = Some(id.to_owned());
                            }
                            facts.item(result);
                        }
                        _ => facts.unknown.push(here),
                    }
                }
            }
            _ => facts.unknown.push(at.at("/message")),
        }
        self.flush(session, &response, writer, &mut texts, at, facts);
    }

    /// Adds `uuid` to the lines of `response`, and to the ids of its message if it has one:
    /// the uuid of any of its lines is the message's.
    fn response_line(&mut self, session: usize, response: &str, uuid: &str, facts: &mut Facts) {
        if uuid.is_empty() {
            return;
        }
        let entry = self
            .responses
            .entry((session, response.to_owned()))
            .or_default();
        if !entry.uuids.iter().any(|id| id == uuid) {
            entry.uuids.push(uuid.to_owned());
        }
        if let Some(item) = entry.item.and_then(|n| facts.items.get_mut(n)) {
            if !item.ids.iter().any(|id| id == uuid) {
                item.ids.push(uuid.to_owned());
            }
        }
    }

    /// Adds `texts` to the message of `response`, creating it at the first line that has
    /// text: a response of only tool calls is no message.
    fn flush(
        &mut self,
        session: usize,
        response: &str,
        writer: Writer,
        texts: &mut Vec<(&str, TextKind, Location)>,
        at: &Location,
        facts: &mut Facts,
    ) {
        if texts.iter().all(|(text, _, _)| text.is_empty()) {
            texts.clear();
            return;
        }
        let entry = self
            .responses
            .entry((session, response.to_owned()))
            .or_default();
        let n = if let Some(n) = entry.item {
            n
        } else {
            let mut item = Item::new(session, ItemKind::Message, at.clone()).id(response);
            for uuid in &entry.uuids {
                item = item.id(uuid.as_str());
            }
            let n = facts.item(item);
            entry.item = Some(n);
            n
        };
        let Some(item) = facts.items.get_mut(n) else {
            return;
        };
        for (text, kind, at) in texts.drain(..) {
            item.push_text(text, kind, writer, at);
        }
    }

    /// Whether `line` is of a compaction subagent, whose prompt the harness writes.
    fn compaction(&self, line: &Line) -> bool {
        let agent = text_of(line, "agentId").or(self.agent_file.as_deref());
        sidechain(line) && agent.is_some_and(|id| id.starts_with("acompact"))
    }
}

/// A `tool_result` block: its output texts, a string or text blocks, are the tool's.
fn tool_result(session: usize, block: &Value, at: &Location) -> Item {
    let mut item = Item::new(session, ItemKind::ToolResult, at.clone());
    if let Some(id) = block.get("tool_use_id").and_then(Value::as_str) {
        item = item.id(id);
        item.answers = Some(id.to_owned());
    }
    match block.get("content") {
        Some(Value::String(text)) => {
            item.push_text(text, TextKind::ToolOutput, Writer::Tool, at.at("/content"));
        }
        Some(Value::Array(parts)) => {
            for (k, part) in parts.iter().enumerate() {
                if part.get("type").and_then(Value::as_str) == Some("text") {
                    if let Some(text) = part.get("text").and_then(Value::as_str) {
                        let here = at.at(format!("/content/{k}/text"));
                        item.push_text(text, TextKind::ToolOutput, Writer::Tool, here);
                    }
                }
            }
        }
        _ => {}
    }
    item
}

/// What a line's `toolUseResult` stores of a command's output that its result does not:
/// the rest of it repeats the call's input, the result or a file, or is metadata.
fn tool_use_result(result: &mut Item, line: &Line, at: &Location) {
    let Some(Value::Object(stored)) = line.get("toolUseResult") else {
        return;
    };
    for key in ["stdout", "stderr"] {
        let Some(text) = stored.get(key).and_then(Value::as_str) else {
            continue;
        };
        // The result may hold the output with its ends trimmed: that is no other text.
        if !result.texts.iter().any(|t| t.text.contains(text.trim())) {
            let here = at.at(format!("/toolUseResult/{key}"));
            result.push_text(text, TextKind::ToolOutput, Writer::Tool, here);
        }
    }
}

/// An `attachment` line: context the harness adds to the next request (an IDE
/// selection, a file, a hook's output). Only its `content` is text; the rest (names,
/// line numbers, paths) is metadata.
fn attachment(session: usize, line: &Line, at: &Location, facts: &mut Facts) {
    let uuid = text_of(line, "uuid").unwrap_or_default();
    let mut item = Item::new(session, ItemKind::Message, at.clone()).id(uuid);
    let Some(attachment) = line.get("attachment") else {
        facts.unknown.push(at.clone());
        return;
    };
    let writer = match attachment.get("type").and_then(Value::as_str) {
        Some(kind) if kind.starts_with("hook") => Writer::Hook,
        _ => Writer::Harness,
    };
    let here = at.at("/attachment/content");
    match attachment.get("content") {
        Some(Value::String(text)) => item.push_text(text, TextKind::Attachment, writer, here),
        Some(Value::Array(parts)) => {
            for (k, part) in parts.iter().enumerate() {
                let text = part
                    .as_str()
                    .or_else(|| part.get("text").and_then(Value::as_str));
                if let Some(text) = text {
                    let here = here.at(format!("/{k}"));
                    item.push_text(text, TextKind::Attachment, writer, here);
                }
            }
        }
        _ => {}
    }
    facts.item(item);
}

/// A `system` line: a notice the harness wrote, a local command it ran (the command line
/// and its output, as newer versions store them), or a marker with no text to keep (a
/// compaction boundary, a turn's duration).
fn system(session: usize, line: &Line, at: &Location, facts: &mut Facts) {
    let subtype = text_of(line, "subtype").unwrap_or_default();
    let text = text_of(line, "content").filter(|text| !text.is_empty());
    let Some(text) = text.filter(|_| !BOUNDARIES.contains(&subtype)) else {
        let name = if subtype.is_empty() {
            "system"
        } else {
            subtype
        };
        facts.item(Item::new(
            session,
            ItemKind::Other(name.to_owned()),
            at.clone(),
        ));
        return;
    };
    let (kind, text_kind) = if subtype == "local_command" {
        (ItemKind::Message, TextKind::Prompt)
    } else {
        (ItemKind::Notice, TextKind::Notice)
    };
    let writer = match tagged(text.trim_start()) {
        Some(writer) => writer,
        None if subtype.contains("hook") => Writer::Hook,
        None => Writer::Harness,
    };
    let uuid = text_of(line, "uuid").unwrap_or_default();
    let item = Item::new(session, kind, at.clone()).id(uuid).text(
        text,
        text_kind,
        writer,
        at.at("/content"),
    );
    facts.item(item);
}

/// Who wrote a user-role text of `line`, and what kind of text it is.
fn user_writer(line: &Line, text: &str, compaction: bool) -> (Writer, TextKind) {
    if line.get("isCompactSummary") == Some(&Value::Bool(true)) {
        return (Writer::Harness, TextKind::Summary);
    }
    let start = text.trim_start();
    if let Some(reminder) = start.strip_prefix("<system-reminder>") {
        // A hook's context names its event: "PostToolUse:Edit hook additional context".
        let first = reminder.trim_start().lines().next().unwrap_or("");
        let writer = if first.contains(" hook ") || first.contains(" hook:") {
            Writer::Hook
        } else {
            Writer::Harness
        };
        return (writer, TextKind::Attachment);
    }
    if line.get("isMeta") == Some(&Value::Bool(true)) {
        return (Writer::Harness, TextKind::Attachment);
    }
    if let Some(writer) = tagged(start) {
        return (writer, TextKind::Prompt);
    }
    if start.starts_with("[Request interrupted by user") {
        return (Writer::Harness, TextKind::Prompt);
    }
    if sidechain(line) {
        // A subagent's prompt is its parent agent's, or the harness's for the worker
        // that writes a compaction summary.
        let writer = if compaction {
            Writer::Harness
        } else {
            Writer::Agent
        };
        return (writer, TextKind::Prompt);
    }
    // A prompt with inserted context inside it is no longer only the person's words.
    if text_of(line, "userType") == Some("external") && !text.contains("<system-reminder>") {
        (Writer::Person, TextKind::Prompt)
    } else {
        (Writer::Unknown, TextKind::Prompt)
    }
}

/// The writer the tag Claude Code wraps a text in says, if it is one of its tags.
fn tagged(start: &str) -> Option<Writer> {
    const TAGS: [(&str, Writer); 10] = [
        // A slash command line: what the person typed, in the harness's wrapping.
        ("<command-name>", Writer::Unknown),
        ("<command-message>", Writer::Unknown),
        ("<local-command-stdout>", Writer::Harness),
        ("<local-command-stderr>", Writer::Harness),
        ("<local-command-caveat>", Writer::Harness),
        ("<bash-input>", Writer::Unknown),
        ("<bash-stdout>", Writer::Tool),
        ("<bash-stderr>", Writer::Tool),
        ("<user-prompt-submit-hook>", Writer::Hook),
        ("<task-notification>", Writer::Harness),
    ];
    TAGS.iter()
        .find(|(tag, _)| start.starts_with(tag))
        .map(|(_, writer)| *writer)
}

fn sidechain(line: &Line) -> bool {
    line.get("isSidechain") == Some(&Value::Bool(true))
}

fn text_of<'a>(line: &'a Line, key: &str) -> Option<&'a str> {
    line.get(key).and_then(Value::as_str)
}

fn pointer(to: &str, meaning: Option<Relation>, evidence: &str, at: &Location) -> Pointer {
    Pointer {
        to: to.to_owned(),
        meaning,
        record: None,
        evidence: evidence.to_owned(),
        at: at.clone(),
    }
}

/// Adds `pointer` to session `n` unless it has the same one (from an earlier line).
fn add_pointer(facts: &mut Facts, n: usize, pointer: Pointer) {
    let Some(session) = facts.sessions.get_mut(n) else {
        return;
    };
    let same = |p: &Pointer| {
        p.to == pointer.to
            && p.meaning == pointer.meaning
            && p.record == pointer.record
            && p.evidence == pointer.evidence
    };
    if !session.pointers.iter().any(same) {
        session.pointers.push(pointer);
    }
}

#[cfg(test)]
mod tests;
