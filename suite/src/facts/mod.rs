//! Source facts: what a native session stores, read from its files, so that what a
//! producer must keep of it is known without a fixture restating it.
//!
//! One reader per native format turns the files a producer converts into [`Facts`]: the
//! sessions present and the pointers between them (with whether the source records what
//! they mean), the native items in source order (messages, reasoning items, tool calls and
//! results, notices) with their native ids, and every text stored in them with who the
//! source says wrote it. The conservation properties ([`crate::conserve`]) judge a
//! producer's output against them.
//!
//! A reader never fails: a file or a line it cannot make out becomes a fact of unknown
//! kind ([`Facts::unknown`]), which no property reads. A format the kit has no reader for
//! gives facts with [`Facts::known`] false.
//!
//! ```
//! use asr_suite::facts::{ItemKind, Writer, read};
//!
//! let line = br#"{"type":"user","uuid":"u1","sessionId":"s1","isSidechain":false,"userType":"external","message":{"role":"user","content":"Fix the parser.\r\n"}}"#;
//! let facts = read("claude-code-jsonl", &[("s1.jsonl".to_owned(), line.to_vec())]);
//! assert!(facts.known);
//! let item = &facts.items[0];
//! assert_eq!((item.kind.clone(), item.ids[0].as_str()), (ItemKind::Message, "u1"));
//! assert_eq!(item.texts[0].text, "Fix the parser.\r\n");
//! assert_eq!(item.texts[0].writer, Writer::Person);
//! assert_eq!(facts.sessions[item.session].id, "s1");
//! ```

mod aun;
mod claude_code;
mod codex;
mod gemini;
#[cfg(test)]
mod golden;
mod openclaw;
mod pi;

use serde::Serialize;
use serde_json::Value;

/// The formats the kit reads, as the registry names them.
pub const FORMATS: [&str; 8] = [
    "claude-code-jsonl",
    "codex-rollout",
    "gemini-cli-json",
    "pi-session-jsonl",
    "openclaw-session-jsonl",
    "openclaw-sessions-json",
    "openclaw-cron-run-log-jsonl",
    "aun-message-json",
];

/// Reads the native `files` (name and bytes, in name order) of a session of `format`.
pub fn read(format: &str, files: &[(String, Vec<u8>)]) -> Facts {
    let mut facts = Facts {
        format: format.to_owned(),
        known: FORMATS.contains(&format),
        ..Facts::default()
    };
    let mut files: Vec<&(String, Vec<u8>)> = files.iter().collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    match format {
        "claude-code-jsonl" => claude_code::read(&files, &mut facts),
        "codex-rollout" => codex::read(&files, &mut facts),
        "gemini-cli-json" => gemini::read(&files, &mut facts),
        "pi-session-jsonl" => pi::read(&files, &mut facts),
        "openclaw-session-jsonl" | "openclaw-sessions-json" | "openclaw-cron-run-log-jsonl" => {
            openclaw::read(format, &files, &mut facts);
        }
        "aun-message-json" => aun::read(&files, &mut facts),
        _ => {}
    }
    facts.unread = unread_strings(&files, &facts.unknown);
    facts
}

/// Every string of the lines (or files) `unknown` names, as JSON strings where they parse,
/// else the lines' text.
fn unread_strings(
    files: &[&(String, Vec<u8>)],
    unknown: &[Location],
) -> std::collections::BTreeSet<String> {
    let mut strings = std::collections::BTreeSet::new();
    for place in unknown {
        let Some((_, bytes)) = files.iter().find(|(name, _)| *name == place.file) else {
            continue;
        };
        let text: &[u8] = match place.line {
            Some(n) => crate::lines::split(bytes)
                .with_final_empty()
                .bytes()
                .nth(n.saturating_sub(1))
                .unwrap_or_default(),
            None => bytes,
        };
        match serde_json::from_slice::<Value>(text) {
            Ok(value) => each_string(&value, "", &mut |_, s| {
                strings.insert(s.to_owned());
            }),
            Err(_) => {
                strings.insert(String::from_utf8_lossy(text).into_owned());
            }
        }
    }
    strings
}

/// What a native session stores.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Facts {
    /// The format read.
    pub format: String,
    /// Whether the kit has a reader for it; when not, there are no facts.
    pub known: bool,
    /// The sessions (and sidechains) the files hold, each of which a producer writes as
    /// one stream.
    pub sessions: Vec<Session>,
    /// The native items, in the source's order (files in name order, then each file's own
    /// order).
    pub items: Vec<Item>,
    /// What the reader could not make out: never a failure, and no property rests on it.
    pub unknown: Vec<Location>,
    /// The strings of what the reader could not make out: a text an output holds that no
    /// fact holds may come from there, so it is not taken for an invented one.
    #[serde(skip)]
    pub unread: std::collections::BTreeSet<String>,
}

/// Where a fact sits in the source.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Location {
    /// The file's name.
    pub file: String,
    /// The 1-based line, for a line-oriented file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// A JSON Pointer into the line's (or the file's) JSON value; `""` for all of it.
    pub pointer: String,
}

impl Location {
    /// A place in a JSON-lines file.
    pub fn line(file: &str, line: usize, pointer: impl Into<String>) -> Self {
        Location {
            file: file.to_owned(),
            line: Some(line),
            pointer: pointer.into(),
        }
    }

    /// A place in a file that is one JSON value.
    pub fn file(file: &str, pointer: impl Into<String>) -> Self {
        Location {
            file: file.to_owned(),
            line: None,
            pointer: pointer.into(),
        }
    }

    /// The same place, further into its value.
    #[must_use]
    pub fn at(&self, pointer: impl AsRef<str>) -> Self {
        Location {
            file: self.file.clone(),
            line: self.line,
            pointer: format!("{}{}", self.pointer, pointer.as_ref()),
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, " line {line}")?;
        }
        if !self.pointer.is_empty() {
            write!(f, " {}", self.pointer)?;
        }
        Ok(())
    }
}

/// One session (a main session, a sidechain, a subagent's file) of the source.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Session {
    /// Its native id, as a producer writes it as the stream's `sessionId`.
    pub id: String,
    /// Other ids the source gives it, any of which a producer may write instead.
    pub aliases: Vec<String>,
    /// The scope the source marks it with (`primary` or `subagent`); `None` when the source
    /// has no marker (ASR-410).
    pub scope: Option<String>,
    /// The source positively marks it as a root, and the agent's registry documents that
    /// marker (ASR-402).
    pub root: bool,
    /// Its pointers to other sessions.
    pub pointers: Vec<Pointer>,
    /// The source's documented contract makes the session begin with copied history
    /// (`inherits.mode: "copied"` may be written): the proof, as ASR names it (ASR-414).
    pub copied_prefix: Option<String>,
    /// Where the source holds it (its first line, or its file).
    pub at: Location,
}

/// A pointer from one session to another.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pointer {
    /// The session pointed at: its native id, or a session reference (`codex:<id>`) where
    /// the source says which agent's session it is.
    pub to: String,
    /// What the source records the relation to be; `None` when it does not say (ASR-405).
    pub meaning: Option<Relation>,
    /// The record of the other session the source names (a delegating call, the last
    /// shared record), as an ASR reference (`callId=toolu_01`, `messageId=...`); `None`
    /// when the source names none.
    pub record: Option<String>,
    /// The evidence the pointer is: `native_field` or `native_structure` (ASR-404).
    pub evidence: String,
    /// Where it is.
    pub at: Location,
}

/// A relation the source records between two sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Relation {
    /// The other session delegated to this one.
    SpawnedBy,
    /// This one diverged from the other.
    ForkedFrom,
    /// This one continues the other.
    Continues,
    /// The other session ran this one's turns.
    ExecutedBy,
}

impl Relation {
    /// The lineage facet that states it.
    pub fn facet(self) -> &'static str {
        match self {
            Relation::SpawnedBy => "spawnedBy",
            Relation::ForkedFrom => "forkedFrom",
            Relation::Continues => "continues",
            Relation::ExecutedBy => "executedBy",
        }
    }
}

/// One native item: what a producer writes as one record (or one message).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    /// The session it belongs to, an index into [`Facts::sessions`].
    pub session: usize,
    /// What it is.
    pub kind: ItemKind,
    /// Its native ids, the preferred first; keeping any of them keeps it. Empty when it
    /// has none.
    pub ids: Vec<String>,
    /// For a tool result: the call it answers, by the call's native id.
    pub answers: Option<String>,
    /// The texts it stores, in its order.
    pub texts: Vec<Text>,
    /// The ASR members of ASR-226 the source records for it (`from`, `recipients`,
    /// `triggersTurn`, `conversation`, `platform`, `addressed`, `via`): a producer may set
    /// these and no others.
    pub recorded: Vec<String>,
    /// The source proves the item a copy: the proof, as ASR names it (ASR-414).
    pub copied: Option<String>,
    /// Where it is.
    pub at: Location,
}

/// Kinds of native items.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    /// A message (a prompt, an answer, inserted context), under any role.
    Message,
    /// A reasoning item with its own native id (ASR-219), not a part of a message.
    Reasoning,
    /// A tool call; its id is the call id.
    ToolCall,
    /// A tool result; [`Item::answers`] names its call.
    ToolResult,
    /// A notice the harness showed the user.
    Notice,
    /// Anything else the reader knows (a plan, a delivery, a compaction), by the source's
    /// own name for it.
    Other(String),
}

/// One text the source stores.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Text {
    /// The text, exactly as stored (JSON string escapes decoded).
    pub text: String,
    /// What it is.
    pub kind: TextKind,
    /// Who the source says wrote it.
    pub writer: Writer,
    /// Where it is.
    pub at: Location,
}

/// Kinds of stored texts: what a `producer.lossy` entry names when a producer drops them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TextKind {
    /// A prompt or other user-role text.
    Prompt,
    /// A model's answer text.
    Answer,
    /// Reasoning text.
    Reasoning,
    /// A summary of reasoning (or of a conversation).
    Summary,
    /// A string inside a tool call's input.
    ToolInput,
    /// A tool's output.
    ToolOutput,
    /// A notice's text.
    Notice,
    /// The text of an attachment or inserted context.
    Attachment,
    /// Instructions the harness keeps for the session (a base system prompt), apart from
    /// the conversation.
    Instructions,
    /// What the user saw, where the source keeps it apart from what the model received (or
    /// holds only that): a producer keeps it in `displayContent` (ASR-207).
    Display,
    /// Any other stored text.
    Other,
}

impl TextKind {
    /// The `producer.lossy` entries that declare this kind of text lost: an entry is one
    /// of these or starts with one of them and a `.`.
    pub fn lossy_names(self) -> &'static [&'static str] {
        match self {
            TextKind::Prompt | TextKind::Answer | TextKind::Other => &["content", "text"],
            TextKind::Reasoning => &["reasoning", "content"],
            TextKind::Summary => &["reasoning", "summary", "content"],
            TextKind::ToolInput => &["tool_call", "tool_calls", "tools", "tool_input"],
            TextKind::ToolOutput => &["tool_result", "tool_results", "tools", "tool_output"],
            TextKind::Notice => &["notice", "notices", "content"],
            TextKind::Attachment => &["attachment", "attachments", "content"],
            TextKind::Instructions => &["instructions", "content"],
            TextKind::Display => &["displayContent", "display"],
        }
    }
}

/// Who the source says wrote a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Writer {
    /// The source records that a person wrote it (ASR-202).
    Person,
    /// A model generated it.
    Model,
    /// The harness inserted it (ASR-203).
    Harness,
    /// A hook produced it (ASR-203).
    Hook,
    /// A tool produced it (ASR-203).
    Tool,
    /// Another agent wrote it (a parent's prompt to a subagent).
    Agent,
    /// The source does not distinguish (ASR-202: no author).
    Unknown,
}

impl Writer {
    /// Whether the source marks it as inserted by the harness, a hook or a tool (ASR-203).
    pub fn is_inserted(self) -> bool {
        matches!(self, Writer::Harness | Writer::Hook | Writer::Tool)
    }
}

impl Facts {
    /// The index of the session `id` (or one of its aliases), adding it when new.
    pub fn session(&mut self, id: &str, at: Location) -> usize {
        if let Some(n) = self
            .sessions
            .iter()
            .position(|s| s.id == id || s.aliases.iter().any(|a| a == id))
        {
            return n;
        }
        self.sessions.push(Session {
            id: id.to_owned(),
            at,
            ..Session::default()
        });
        self.sessions.len() - 1
    }

    /// Adds an item; returns its index.
    pub fn item(&mut self, item: Item) -> usize {
        self.items.push(item);
        self.items.len() - 1
    }
}

impl Item {
    /// An item of `kind` in session `session`, at `at`, with no ids or texts yet.
    pub fn new(session: usize, kind: ItemKind, at: Location) -> Self {
        Item {
            session,
            kind,
            ids: Vec::new(),
            answers: None,
            texts: Vec::new(),
            recorded: Vec::new(),
            copied: None,
            at,
        }
    }

    /// With a native id.
    #[must_use]
    pub fn id(mut self, id: impl Into<String>) -> Self {
        let id = id.into();
        if !id.is_empty() && !self.ids.contains(&id) {
            self.ids.push(id);
        }
        self
    }

    /// With a stored text.
    #[must_use]
    pub fn text(
        mut self,
        text: impl Into<String>,
        kind: TextKind,
        writer: Writer,
        at: Location,
    ) -> Self {
        self.push_text(text, kind, writer, at);
        self
    }

    /// Adds a stored text; an empty text is no fact (there is nothing to keep).
    pub fn push_text(
        &mut self,
        text: impl Into<String>,
        kind: TextKind,
        writer: Writer,
        at: Location,
    ) {
        let text = text.into();
        if !text.is_empty() {
            self.texts.push(Text {
                text,
                kind,
                writer,
                at,
            });
        }
    }

    /// Adds every string inside a tool call's `input` as a text of kind
    /// [`TextKind::ToolInput`], written by the model.
    pub fn push_input(&mut self, input: &Value, at: &Location) {
        each_string(input, "", &mut |pointer, text| {
            self.push_text(text, TextKind::ToolInput, Writer::Model, at.at(pointer));
        });
    }
}

/// Calls `f` with the JSON Pointer and text of every string inside `value` (object
/// members' names excluded).
pub fn each_string(value: &Value, pointer: &str, f: &mut dyn FnMut(&str, &str)) {
    match value {
        Value::String(s) => f(pointer, s),
        Value::Array(items) => {
            for (n, v) in items.iter().enumerate() {
                each_string(v, &format!("{pointer}/{n}"), f);
            }
        }
        Value::Object(members) => {
            for (k, v) in members {
                let k = k.replace('~', "~0").replace('/', "~1");
                each_string(v, &format!("{pointer}/{k}"), f);
            }
        }
        _ => {}
    }
}

/// The lines of a JSON-lines file, numbered from 1, each parsed; a line that is no JSON
/// object is recorded in `unknown` and skipped. A byte order mark before the first line
/// and a CR before each LF are not part of a line.
pub fn json_lines<'a>(
    file: &'a str,
    bytes: &'a [u8],
    unknown: &'a mut Vec<Location>,
) -> Vec<(usize, serde_json::Map<String, Value>)> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut lines = Vec::new();
    for (number, line) in crate::lines::split(bytes) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(Value::Object(object)) => lines.push((number, object)),
            _ => unknown.push(Location::line(file, number, "")),
        }
    }
    lines
}

/// A file that is one JSON value, or `None` (recorded in `unknown`).
pub fn json_file(file: &str, bytes: &[u8], unknown: &mut Vec<Location>) -> Option<Value> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if let Ok(value) = serde_json::from_slice(bytes) {
        Some(value)
    } else {
        unknown.push(Location::file(file, ""));
        None
    }
}

/// The string at `pointer` in `value`.
pub fn str_at<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value.pointer(pointer).and_then(Value::as_str)
}
