//! Valid streams from arbitrary bytes: every record type, every part type, part-level
//! author, origin and phase, plans and their revisions, deliveries and their revision
//! chains, subagents and their revisions, conversations declared before use, lineage
//! facets in legal combinations, copies and inherited prefixes, mirrors, unknown record and
//! part types, optional members present and absent, and vendor values in the open value
//! sets. Whatever the bytes, the stream is valid: the reference reports no error on it.
//!
//! ```
//! use arbitrary::Unstructured;
//! use asr_suite::check::{CheckOptions, check_bytes};
//! use asr_suite::fuzz::generator::{Config, stream};
//!
//! let bytes: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
//! let generated = stream(&mut Unstructured::new(&bytes), &Config::default()).expect("a stream");
//! let report = check_bytes(&generated.to_bytes(), &CheckOptions::default());
//! assert!(report.valid(), "{:?}", report.diagnostics);
//! ```

use arbitrary::{Arbitrary, Result, Unstructured};
use serde_json::{Map, Value, json};

/// What to generate: sizes, and which features a stream may use.
#[derive(Debug, Clone, Arbitrary)]
#[non_exhaustive]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent switches, each an Arbitrary choice"
)]
pub struct Config {
    /// Records after the header, at most (bounded to 200).
    pub max_records: u8,
    /// Parts of one content array, at most (bounded to 12).
    pub max_parts: u8,
    /// Characters of one text, at most (bounded to 4000).
    pub max_text: u16,
    /// Use values beyond the ones the spec lists, where the set is open.
    pub vendor_values: bool,
    /// Use record and part types the spec does not define.
    pub unknown_types: bool,
    /// Give the header a lineage.
    pub lineage: bool,
    /// Copies, inherited prefixes and mirrors.
    pub copies: bool,
    /// Leave out optional members now and then.
    pub sparse: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_records: 40,
            max_parts: 5,
            max_text: 300,
            vendor_values: true,
            unknown_types: true,
            lineage: true,
            copies: true,
            sparse: true,
        }
    }
}

/// A generated stream: its records, the header first.
#[derive(Debug, Clone, PartialEq)]
pub struct Stream {
    /// The records, as JSON objects.
    pub records: Vec<Map<String, Value>>,
}

impl Stream {
    /// The stream as JSON lines, each ended by `\n`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for record in &self.records {
            // A map of JSON values always serializes.
            serde_json::to_writer(&mut out, record).unwrap_or_default();
            out.push(b'\n');
        }
        out
    }
}

/// Agent names: the ones the spec names, and vendors'.
const AGENTS: &[&str] = &[
    "claude-code",
    "codex",
    "openclaw",
    "t3-code",
    "gemini-cli",
    "cline",
];
const VENDOR_AGENTS: &[&str] = &["x-acme-agent", "acme.ai/coder", "ñandú"];
const ROLES: &[&str] = &["user", "assistant", "system", "tool"];
const AUTHORS: &[&str] = &["human", "model", "harness", "tool"];
const ORIGINS: &[&str] = &["prompt", "response", "tool_output", "injected"];
const PHASES: &[&str] = &["commentary", "final", "analysis"];
const AUDIENCES: &[&str] = &["model", "user", "both", "unknown"];
const STATUSES: &[&str] = &["complete", "interrupted", "error", "partial", "withdrawn"];
const VISIBILITIES: &[&str] = &["full", "summary", "encrypted", "redacted", "omitted"];
const PLAN_TYPES: &[&str] = &["items", "document", "goal"];
const ENTRY_STATUSES: &[&str] = &["pending", "in_progress", "completed"];
const DELIVERY_STATUSES: &[&str] = &[
    "queued",
    "sent",
    "delivered",
    "failed",
    "suppressed",
    "unknown",
];
const SUBAGENT_STATUSES: &[&str] = &["running", "completed", "failed", "cancelled"];
const EVIDENCE: &[&str] = &["native_field", "native_structure", "converter_inference"];
const REASONS: &[&str] = &[
    "compaction",
    "reset",
    "resume",
    "daily",
    "idle",
    "rollover",
    "rewind",
    "switch",
    "recovery",
    "other",
];
const PROOFS: &[&str] = &["native_id", "native_field", "prefix_contract"];
const MEDIA_TYPES: &[&str] = &["image/png", "image/jpeg", "audio/wav", "audio/mpeg"];

/// Generates one valid stream.
pub fn stream(u: &mut Unstructured<'_>, config: &Config) -> Result<Stream> {
    let mut builder = Builder::new(u, config)?;
    builder.header()?;
    let count = builder.bounded(usize::from(config.max_records.min(200)))?;
    for _ in 0..count {
        if builder.u.is_empty() {
            break;
        }
        builder.record()?;
    }
    builder.finish()
}

/// What the stream has so far, so that every reference names something that is there.
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent facts of the stream so far"
)]
struct Builder<'u, 'a> {
    u: &'u mut Unstructured<'a>,
    config: &'u Config,
    records: Vec<Map<String, Value>>,
    seq: u64,
    agent: String,
    own_session: String,
    conversations: Vec<String>,
    /// Message records: id and messageId.
    messages: Vec<(String, String)>,
    /// Plans: planId and the id of its latest state.
    plans: Vec<(String, String)>,
    /// Delivery chains: the id of each chain's latest revision and the status kind.
    deliveries: Vec<String>,
    /// Delegations: child session, callId and the id of the latest record.
    delegations: Vec<(String, String, String)>,
    /// The effective lineage claims root, or names a parent.
    root: bool,
    parents: bool,
    mirror: bool,
    /// `localThroughId`, to be set once the records are there.
    local_through: bool,
}

impl<'u, 'a> Builder<'u, 'a> {
    fn new(u: &'u mut Unstructured<'a>, config: &'u Config) -> Result<Self> {
        let agent = if config.vendor_values && u.ratio(1, 4)? {
            (*u.choose(VENDOR_AGENTS)?).to_owned()
        } else {
            (*u.choose(AGENTS)?).to_owned()
        };
        Ok(Builder {
            u,
            config,
            records: Vec::new(),
            seq: 0,
            agent,
            own_session: String::new(),
            conversations: Vec::new(),
            messages: Vec::new(),
            plans: Vec::new(),
            deliveries: Vec::new(),
            delegations: Vec::new(),
            root: false,
            parents: false,
            mirror: false,
            local_through: false,
        })
    }

    fn bounded(&mut self, max: usize) -> Result<usize> {
        if max == 0 {
            return Ok(0);
        }
        self.u.int_in_range(0..=max)
    }

    /// Whether to write an optional member.
    fn maybe(&mut self) -> Result<bool> {
        if self.config.sparse {
            self.u.ratio(2, 3)
        } else {
            Ok(true)
        }
    }

    /// A value of a set the spec lists, or, when the set is open, a vendor's.
    fn open_value(&mut self, listed: &[&str]) -> Result<String> {
        if self.config.vendor_values && self.u.ratio(1, 5)? {
            return self.vendor_value();
        }
        Ok((*self.u.choose(listed)?).to_owned())
    }

    fn vendor_value(&mut self) -> Result<String> {
        let stems = ["x-acme-", "vendor_", "acme.", ""];
        let stem = *self.u.choose(&stems)?;
        let word = *self
            .u
            .choose(&["paused", "held", "escalated", "draft", "Ω", "archived"])?;
        Ok(format!("{stem}{word}"))
    }

    /// Text: plain words, escapes, CRLF, emoji, combining marks, code, now and then long.
    fn text(&mut self) -> Result<String> {
        let max = usize::from(self.config.max_text.min(4000));
        let len = self.bounded(max)?;
        let pieces = [
            "fix the parser",
            " ",
            "\r\n",
            "\n",
            "\t",
            "\"quoted\"",
            "\\",
            "é",
            "e\u{301}",
            "日本語",
            "🦀",
            "👩‍💻",
            "\u{7f}",
            "\u{1b}[31m",
            "fn main() {}",
            "</script>",
            "%3A",
            "#",
            "\u{2028}",
            "\u{0}",
        ];
        let mut text = String::new();
        while text.len() < len && !self.u.is_empty() {
            text.push_str(self.u.choose(&pieces)?);
        }
        Ok(text)
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    fn other_session(&mut self) -> Result<String> {
        let agent = *self.u.choose(AGENTS)?;
        let id = *self
            .u
            .choose(&["0f3c2a7e", "thread%3Aside", "019a-77", "parent", "p"])?;
        Ok(format!("{agent}:{id}"))
    }

    fn header(&mut self) -> Result<()> {
        let mut h = Map::new();
        h.insert("type".into(), "session".into());
        h.insert("seq".into(), 0.into());
        h.insert("id".into(), "h".into());
        h.insert("formatVersion".into(), "0.1".into());
        let mut agent = Map::new();
        agent.insert("name".into(), self.agent.clone().into());
        if self.maybe()? {
            agent.insert("version".into(), "2.1.0".into());
        }
        h.insert("agent".into(), agent.into());
        let session_id =
            (*self
                .u
                .choose(&["s1", "019a3f2e-7c1d", "thread:main", "a%b#c", "ünï"])?)
            .to_owned();
        h.insert("sessionId".into(), session_id.clone().into());
        let namespace = if self.u.ratio(1, 4)? {
            let namespace = "6f1d2c3a".to_owned();
            h.insert("namespace".into(), namespace.clone().into());
            Some(namespace)
        } else {
            None
        };
        self.own_session =
            crate::refs::own_session_ref(&self.agent, namespace.as_deref(), &session_id);
        if self.maybe()? {
            h.insert(
                "producer".into(),
                json!({"name": "asr-ctk-fuzz", "version": "0.1.0", "lossy": []}),
            );
        }
        let count = self.bounded(3)?;
        let ids: Vec<String> = (1..=count).map(|n| format!("c{n}")).collect();
        if !ids.is_empty() {
            h.insert("conversations".into(), self.conversations_value(&ids)?);
            self.conversations.extend(ids);
        }
        if self.config.copies && self.u.ratio(1, 8)? {
            self.mirror = true;
            h.insert("authority".into(), "mirror".into());
        }
        let lineage = self.lineage(true)?;
        if !lineage.is_empty() {
            h.insert("lineage".into(), lineage.into());
        }
        self.records.push(h);
        Ok(())
    }

    /// Conversations in one of the three shapes the kit accepts.
    fn conversations_value(&mut self, ids: &[String]) -> Result<Value> {
        Ok(match self.u.int_in_range(0..=2)? {
            0 => json!(ids),
            1 => Value::Array(ids.iter().map(|id| json!({"id": id})).collect()),
            _ => Value::Object(ids.iter().map(|id| (id.clone(), json!({}))).collect()),
        })
    }

    /// A lineage that keeps the effective lineage legal (never root and a parent).
    fn lineage(&mut self, header: bool) -> Result<Map<String, Value>> {
        let mut lineage = Map::new();
        if self.mirror && header {
            let session = self.other_session()?;
            let evidence = *self.u.choose(EVIDENCE)?;
            lineage.insert(
                "executedBy".into(),
                json!([{"session": session, "evidence": evidence}]),
            );
        }
        if !self.config.lineage || !self.u.ratio(2, 3)? {
            return Ok(lineage);
        }
        let can_root = !self.parents;
        let can_parent = !self.root;
        if can_root && self.u.ratio(1, 3)? {
            lineage.insert("root".into(), true.into());
            self.root = true;
            if self.u.ratio(1, 2)? {
                let mode = *self.u.choose(&["none", "unknown"])?;
                let evidence = *self.u.choose(EVIDENCE)?;
                lineage.insert(
                    "inherits".into(),
                    json!({"mode": mode, "evidence": evidence}),
                );
            }
            return Ok(lineage);
        }
        if !can_parent {
            return Ok(lineage);
        }
        let parent = self.other_session()?;
        let evidence = (*self.u.choose(EVIDENCE)?).to_owned();
        let mut names_parent = true;
        match self.u.int_in_range(0..=4)? {
            0 => {
                let mut facet = json!({"session": parent, "evidence": evidence});
                if self.u.ratio(1, 2)? {
                    facet["record"] = "r4".into();
                }
                lineage.insert("spawnedBy".into(), facet);
            }
            1 => {
                let mut facet = json!({"session": parent, "evidence": evidence});
                match self.u.int_in_range(0..=2)? {
                    0 => facet["record"] = "r9".into(),
                    1 => facet["ordinal"] = 12.into(),
                    _ => {}
                }
                lineage.insert("forkedFrom".into(), facet);
            }
            2 => {
                let reason = self.open_value(REASONS)?;
                lineage.insert(
                    "continues".into(),
                    json!({"session": parent, "evidence": evidence, "reason": reason}),
                );
            }
            3 => {
                lineage.insert(
                    "relatedUnknown".into(),
                    json!({"session": parent, "evidence": evidence}),
                );
            }
            _ => names_parent = false,
        }
        if self.u.ratio(1, 2)? {
            let mode = *self
                .u
                .choose(&["copied", "referenced", "rendered", "none"])?;
            let mut inherits = json!({"mode": mode, "evidence": evidence});
            if mode != "none" {
                names_parent = true;
                inherits["from"] = parent.clone().into();
                match self.u.int_in_range(0..=2)? {
                    0 => inherits["throughId"] = "r7".into(),
                    1 => inherits["throughOrdinal"] = 7.into(),
                    _ => {}
                }
            }
            if mode == "copied" && header && self.config.copies && self.u.ratio(1, 2)? {
                // Named once the stream's records are there.
                self.local_through = true;
            }
            lineage.insert("inherits".into(), inherits);
        }
        self.parents |= names_parent;
        Ok(lineage)
    }

    fn record(&mut self) -> Result<()> {
        let choice = self.u.int_in_range(0..=11)?;
        match choice {
            4 => self.plan(),
            5 => self.delivery(),
            6 => self.subagent(),
            7 => self.declaration(),
            8 | 9 => self.tool_traffic(),
            10 if self.config.unknown_types => self.unknown_record(),
            _ => self.message(),
        }
    }

    fn base(&mut self, kind: &str) -> Map<String, Value> {
        let seq = self.next_seq();
        let mut record = Map::new();
        record.insert("type".into(), kind.into());
        record.insert("seq".into(), seq.into());
        record.insert("id".into(), format!("r{seq}").into());
        record
    }

    fn push(&mut self, record: Map<String, Value>) {
        self.records.push(record);
    }

    fn message(&mut self) -> Result<()> {
        let mut m = self.base("message");
        let seq = self.seq;
        let id = format!("r{seq}");
        let message_id = format!("msg_{seq}");
        m.insert("messageId".into(), message_id.clone().into());
        let notice = self.u.ratio(1, 10)?;
        if notice {
            m.insert("role".into(), "user".into());
            m.insert("author".into(), "harness".into());
            m.insert("origin".into(), "notice".into());
            m.insert("audience".into(), "user".into());
        } else {
            let role = self.open_value(ROLES)?;
            m.insert("role".into(), role.into());
            if self.maybe()? {
                let author = self.open_value(AUTHORS)?;
                m.insert("author".into(), author.into());
            }
            if self.maybe()? {
                let origin = self.open_value(ORIGINS)?;
                m.insert("origin".into(), origin.into());
            }
            if self.maybe()? {
                let audience = *self.u.choose(AUDIENCES)?;
                m.insert("audience".into(), audience.into());
            }
        }
        if self.maybe()? {
            let phase = self.open_value(PHASES)?;
            m.insert("phase".into(), phase.into());
        }
        if self.maybe()? {
            let status = self.open_value(STATUSES)?;
            m.insert("status".into(), status.into());
        }
        if !self.conversations.is_empty() && self.maybe()? {
            let conversation = self.u.choose(&self.conversations)?.clone();
            m.insert("conversation".into(), conversation.into());
        }
        if self.u.ratio(1, 6)? {
            let entries = self.derived_from()?;
            if !entries.is_empty() {
                m.insert("derivedFrom".into(), entries.into());
            }
        }
        let content = self.parts()?;
        if content.is_empty() {
            m.insert(
                "capture".into(),
                json!({"content": {"state": "not_captured"}}),
            );
        }
        if self.u.ratio(1, 8)? {
            let display = self.parts()?;
            if !display.is_empty() {
                m.insert("displayContent".into(), display.into());
                if self.u.ratio(1, 2)? {
                    let correspondence = *self.u.choose(&["same", "summary", "rendered"])?;
                    m.insert("displayCorrespondence".into(), correspondence.into());
                }
            }
        }
        m.insert("content".into(), content.into());
        self.copied_from(&mut m)?;
        if self.u.ratio(1, 10)? {
            m.insert(
                "x-vendor-extension".into(),
                json!({"kept": [1, "two", null]}),
            );
        }
        self.push(m);
        self.messages.push((id, message_id));
        Ok(())
    }

    fn derived_from(&mut self) -> Result<Vec<Value>> {
        let mut entries = Vec::new();
        for _ in 0..self.bounded(2)? {
            if !self.messages.is_empty() && self.u.ratio(1, 2)? {
                let (id, message_id) = self.u.choose(&self.messages)?.clone();
                entries.push(if self.u.ratio(1, 2)? {
                    id.into()
                } else {
                    format!("messageId={message_id}").into()
                });
            } else {
                let session = self.other_session()?;
                entries.push(format!("{session}#r3").into());
            }
        }
        Ok(entries)
    }

    /// A copy now and then: of a record of another session, or of an earlier local record.
    fn copied_from(&mut self, record: &mut Map<String, Value>) -> Result<()> {
        if !self.config.copies || !self.u.ratio(1, 8)? {
            return Ok(());
        }
        let proof = *self.u.choose(PROOFS)?;
        let earlier = self.messages.last().map(|(id, _)| id.clone());
        let copied = match earlier {
            // A local original, named with or without the stream's own session.
            Some(id) if self.u.ratio(1, 2)? => {
                if self.u.ratio(1, 2)? {
                    json!({"session": self.own_session, "record": id, "proof": proof})
                } else {
                    json!({"record": id, "proof": proof})
                }
            }
            _ => {
                let session = self.other_session()?;
                if self.u.ratio(1, 2)? {
                    json!({"session": session, "record": "r2", "proof": proof})
                } else {
                    json!({"session": session, "proof": proof})
                }
            }
        };
        record.insert("copiedFrom".into(), copied);
        Ok(())
    }

    fn parts(&mut self) -> Result<Vec<Value>> {
        let count = self.bounded(usize::from(self.config.max_parts.min(12)))?;
        let mut parts = Vec::with_capacity(count);
        for index in 0..count {
            let mut part = self.part()?;
            if self.u.ratio(1, 6)? {
                let author = self.open_value(AUTHORS)?;
                part.insert("author".into(), author.into());
            }
            if self.u.ratio(1, 8)? {
                let origin = self.open_value(ORIGINS)?;
                part.insert("origin".into(), origin.into());
            }
            if self.u.ratio(1, 8)? {
                let phase = self.open_value(PHASES)?;
                part.insert("phase".into(), phase.into());
            }
            if index > 0 && self.u.ratio(1, 8)? {
                let from = self.u.int_in_range(0..=index - 1)?;
                part.insert(
                    "derivation".into(),
                    json!({"method": "transcription", "from": from}),
                );
            }
            parts.push(Value::Object(part));
        }
        Ok(parts)
    }

    fn part(&mut self) -> Result<Map<String, Value>> {
        let text = self.text()?;
        let part = match self.u.int_in_range(0..=9)? {
            0 | 1 => json!({"type": "text", "text": text}),
            2 => {
                let visibility = self.open_value(VISIBILITIES)?;
                match visibility.as_str() {
                    "summary" => {
                        json!({"type": "reasoning", "visibility": "summary", "summary": [text], "signature": "SIG"})
                    }
                    "full" => json!({"type": "reasoning", "visibility": "full", "text": text}),
                    "encrypted" => {
                        json!({"type": "reasoning", "visibility": "encrypted", "opaque": {"format": "x-enc", "data": "AAAA"}})
                    }
                    other if self.u.ratio(1, 2)? => {
                        json!({"type": "reasoning", "visibility": other})
                    }
                    _ => json!({"type": "reasoning", "text": text}),
                }
            }
            3 => {
                let mime = *self.u.choose(MEDIA_TYPES)?;
                let kind = if mime.starts_with("image") {
                    "image"
                } else {
                    "audio"
                };
                if self.u.ratio(1, 2)? {
                    json!({"type": kind, "mimeType": mime, "data": "iVBORw0KGgo="})
                } else {
                    json!({"type": kind, "mimeType": mime, "blob": {"blob": "sha256:0f3c", "size": 12}})
                }
            }
            4 => {
                json!({"type": "resource_link", "uri": "file:///repo/src/lib.rs", "name": "lib.rs"})
            }
            5 => match self.u.int_in_range(0..=3)? {
                0 => json!({"type": "resource", "resource": {"uri": "file:///a", "text": text}}),
                1 => {
                    json!({"type": "resource", "resource": {"uri": "https://example.invalid/x", "blob": "AAAA"}})
                }
                2 => {
                    json!({"type": "resource", "resource": {"uri": "file:///b", "blobRef": {"blob": "sha256:1"}}})
                }
                _ => json!({"type": "resource", "resource": {"uri": "file:///c"}}),
            },
            6 => json!({"type": "refusal", "text": text}),
            7 => json!({"type": "data", "data": {"rows": [1, 2], "note": text}}),
            8 => {
                if self.u.ratio(1, 2)? {
                    json!({"type": "opaque", "format": "x-vendor-blob", "data": "AAAA"})
                } else {
                    json!({"type": "opaque", "format": "x-vendor-blob"})
                }
            }
            _ if self.config.unknown_types => {
                json!({"type": "x-vendor-card", "text": text, "_meta": {"k": 1}})
            }
            _ => json!({"type": "text", "text": text}),
        };
        Ok(match part {
            Value::Object(map) => map,
            _ => Map::new(),
        })
    }

    fn plan(&mut self) -> Result<()> {
        let revise = !self.plans.is_empty() && self.u.ratio(1, 2)?;
        let mut p = self.base("plan");
        let id = format!("r{}", self.seq);
        let plan_id = if revise {
            let at = self.u.choose_index(self.plans.len())?;
            let (plan_id, latest) = self.plans[at].clone();
            p.insert("supersedes".into(), latest.into());
            self.plans[at].1.clone_from(&id);
            plan_id
        } else {
            let plan_id = format!("plan_{}", self.seq);
            self.plans.push((plan_id.clone(), id));
            plan_id
        };
        p.insert("planId".into(), plan_id.into());
        let plan_type = *self.u.choose(PLAN_TYPES)?;
        p.insert("planType".into(), plan_type.into());
        if plan_type == "items" {
            let count = self.bounded(4)?;
            let mut entries = Vec::new();
            for n in 0..count {
                let status = self.open_value(ENTRY_STATUSES)?;
                let content = self.text()?;
                let mut entry = json!({"content": content, "status": status});
                if self.maybe()? {
                    entry["entryId"] = format!("e{n}").into();
                    if n > 0 && self.u.ratio(1, 3)? {
                        entry["blockedBy"] = json!([format!("e{}", n - 1)]);
                    }
                }
                entries.push(entry);
            }
            // An entry names only entries that have ids.
            let ids: Vec<String> = entries
                .iter()
                .filter_map(|e| e.get("entryId").and_then(Value::as_str).map(str::to_owned))
                .collect();
            for entry in &mut entries {
                let keep = entry
                    .get("blockedBy")
                    .and_then(|b| b.get(0))
                    .and_then(Value::as_str)
                    .is_none_or(|b| ids.iter().any(|id| id == b));
                if !keep {
                    entry.as_object_mut().map(|e| e.remove("blockedBy"));
                }
            }
            p.insert("entries".into(), entries.into());
        } else {
            let content = self.parts()?;
            if content.is_empty() {
                p.insert(
                    "capture".into(),
                    json!({"content": {"state": "not_captured"}}),
                );
            } else {
                p.insert("content".into(), content.into());
            }
        }
        if self.maybe()? {
            let status = self.open_value(&["active", "completed", "abandoned"])?;
            p.insert("status".into(), status.into());
        }
        self.push(p);
        Ok(())
    }

    fn delivery(&mut self) -> Result<()> {
        let revise = !self.deliveries.is_empty() && self.u.ratio(1, 3)?;
        let mut d = self.base("delivery");
        let id = format!("r{}", self.seq);
        if revise {
            let at = self.u.choose_index(self.deliveries.len())?;
            d.insert("supersedes".into(), self.deliveries[at].clone().into());
            self.deliveries[at].clone_from(&id);
        } else {
            self.deliveries.push(id);
        }
        if !self.messages.is_empty() && (revise || self.maybe()?) {
            let (record, message_id) = self.u.choose(&self.messages)?.clone();
            let target = if self.u.ratio(1, 2)? {
                record
            } else {
                format!("messageId={message_id}")
            };
            d.insert("message".into(), target.into());
        }
        let status = self.open_value(DELIVERY_STATUSES)?;
        d.insert("status".into(), status.into());
        if !self.conversations.is_empty() && self.maybe()? {
            let conversation = self.u.choose(&self.conversations)?.clone();
            d.insert("conversation".into(), conversation.into());
        }
        if self.u.ratio(1, 3)? {
            d.insert("platformMessageIds".into(), json!(["3EB0D7F2"]));
        }
        self.push(d);
        Ok(())
    }

    fn subagent(&mut self) -> Result<()> {
        let revise = !self.delegations.is_empty() && self.u.ratio(1, 2)?;
        let mut s = self.base("subagent");
        let id = format!("r{}", self.seq);
        let (child, call) = if revise {
            let at = self.u.choose_index(self.delegations.len())?;
            let (child, call, latest) = self.delegations[at].clone();
            s.insert("supersedes".into(), latest.into());
            self.delegations[at].2.clone_from(&id);
            (child, call)
        } else {
            let n = self.delegations.len();
            let child = format!("{}:child-{n}-{}", self.agent_of_children(), self.seq);
            let call = format!("call_{}", self.seq);
            self.delegations.push((child.clone(), call.clone(), id));
            (child, call)
        };
        s.insert("childSession".into(), child.into());
        s.insert("callId".into(), call.into());
        let status = self.open_value(SUBAGENT_STATUSES)?;
        s.insert("status".into(), status.into());
        if self.maybe()? {
            s.insert("async".into(), self.u.arbitrary::<bool>()?.into());
        }
        self.push(s);
        Ok(())
    }

    /// Children of a vendor agent are sessions of an agent with a plain name.
    fn agent_of_children(&self) -> &'static str {
        AGENTS
            .iter()
            .find(|a| **a == self.agent)
            .copied()
            .unwrap_or("codex")
    }

    fn declaration(&mut self) -> Result<()> {
        let mut d = self.base("declaration");
        if self.u.ratio(1, 2)? {
            let next = self.conversations.len() + 1;
            let ids = vec![format!("c{next}")];
            d.insert("conversations".into(), self.conversations_value(&ids)?);
            self.conversations.extend(ids);
        }
        if !self.mirror {
            let lineage = self.lineage(false)?;
            if !lineage.is_empty() {
                d.insert("lineage".into(), lineage.into());
            }
        }
        self.push(d);
        Ok(())
    }

    fn tool_traffic(&mut self) -> Result<()> {
        let mut call = self.base("tool_call");
        let call_id = format!("toolu_{}", self.seq);
        call.insert("callId".into(), call_id.clone().into());
        call.insert("name".into(), "Bash".into());
        let command = self.text()?;
        call.insert("input".into(), json!({"command": command}));
        self.push(call);
        let mut result = self.base("tool_result");
        result.insert("callId".into(), call_id.into());
        let content = self.parts()?;
        result.insert("content".into(), content.into());
        self.push(result);
        Ok(())
    }

    fn unknown_record(&mut self) -> Result<()> {
        let kind = *self
            .u
            .choose(&["x-acme-event", "checkpoint", "vendor.note"])?;
        let mut r = self.base(kind);
        let text = self.text()?;
        r.insert("payload".into(), json!({"text": text, "n": self.seq}));
        self.push(r);
        Ok(())
    }

    fn finish(mut self) -> Result<Stream> {
        if self.local_through {
            // The last copied record: a record of the stream (the header when there is none).
            let ids: Vec<String> = self
                .records
                .iter()
                .filter_map(|r| r.get("id").and_then(Value::as_str).map(str::to_owned))
                .collect();
            let through = self.u.choose(&ids)?.clone();
            if let Some(inherits) = self.records[0]
                .get_mut("lineage")
                .and_then(|l| l.get_mut("inherits"))
                .and_then(Value::as_object_mut)
            {
                inherits.insert("localThroughId".into(), through.into());
            }
        }
        Ok(Stream {
            records: self.records,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{CheckOptions, check_bytes};
    use crate::diagnostic::Severity;

    pub(crate) fn bytes(n: u64, len: usize) -> Vec<u8> {
        crate::fuzz::seeded_bytes(n, len)
    }

    #[test]
    fn every_generated_stream_is_valid() {
        let mut failures = Vec::new();
        for n in 0..400 {
            let data = bytes(n, 8192);
            let mut u = Unstructured::new(&data);
            let config = if n % 3 == 0 {
                Config::arbitrary(&mut u).expect("config")
            } else {
                Config::default()
            };
            let generated = stream(&mut u, &config).expect("a stream");
            let report = check_bytes(&generated.to_bytes(), &CheckOptions::default());
            for d in report
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error)
            {
                failures.push(format!(
                    "seed {n}: {} line {} {}: {}",
                    d.rule, d.line, d.pointer, d.message
                ));
            }
        }
        assert!(
            failures.is_empty(),
            "{} errors:\n{}",
            failures.len(),
            failures
                .iter()
                .take(30)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[cfg(test)]
mod reach {
    use super::tests::bytes;
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn generated_streams_reach_every_record_and_part_type() {
        let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
        let mut records = 0;
        for n in 0..200 {
            let data = bytes(n, 8192);
            let generated =
                stream(&mut Unstructured::new(&data), &Config::default()).expect("a stream");
            records += generated.records.len();
            for record in &generated.records {
                let kind = record
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                *kinds.entry(kind).or_default() += 1;
                for part in record
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let kind = part.get("type").and_then(Value::as_str).unwrap_or("");
                    *kinds.entry(format!("part:{kind}")).or_default() += 1;
                }
            }
        }
        eprintln!("{records} records: {kinds:?}");
        for kind in [
            "session",
            "message",
            "plan",
            "delivery",
            "subagent",
            "declaration",
            "tool_call",
            "x-acme-event",
            "part:text",
            "part:image",
            "part:audio",
            "part:resource_link",
            "part:resource",
            "part:reasoning",
            "part:refusal",
            "part:data",
            "part:opaque",
            "part:x-vendor-card",
        ] {
            assert!(
                kinds.get(kind).copied().unwrap_or(0) > 0,
                "{kind} never generated: {kinds:?}"
            );
        }
    }
}
