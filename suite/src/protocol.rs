//! The adapter protocol, version 1 (revision 1.1, which adds the producer role): how the kit
//! drives any implementation, in any language, through a small adapter program. `PROTOCOL.md` is the prose; `schemas/protocol/` holds
//! the JSON Schemas; these types are its Rust form. A whole persistent session:
//!
//! ```text
//! kit → {"type":"start","protocol":1,"kit":{"name":"asr-ctk","version":"0.1.0"}}
//! ← {"type":"started","protocol":1,"implementation":{"name":"my-validator","version":"2.3.0",
//!      "language":"python","homepage":"https://example.org","issues":"https://example.org/issues"},
//!      "roles":["validator"],"formatVersions":["0.1"]}
//! kit → {"type":"case","seq":1,"role":"validator","case":"messages/ASR-212/n_image_data_and_blob",
//!      "id":"c0025","rules":["ASR-212"],
//!      "streams":[{"part":"","path":"/abs/cases/messages/ASR-212/n_image_data_and_blob.jsonl","data":"eyJ0eXBlIjoi..."}]}
//! ← {"type":"answered","seq":1,"streams":[{"valid":false,"diagnostics":[
//!      {"rule":"ASR-212","severity":"error","line":2,"pointer":"/content/1","message":"data and blob"}]}]}
//! kit → {"type":"case","seq":2,...}
//! ← {"type":"skipped","seq":2,"reason":"plans are not supported","issue":"https://example.org/issues/7"}
//! kit → {"type":"case","seq":3,"role":"producer","case":"sources/codex-rollout/crud_reasoning_01",
//!      "id":"s0031","rules":["ASR-211","ASR-214"],"format":"codex-rollout",
//!      "streams":[{"part":"rollout.jsonl","path":"/abs/cases/sources/.../source/rollout.jsonl","data":"eyJ0aW1l..."}]}
//! ← {"type":"answered","seq":3,"outputs":[{"name":"","lines":["{\"type\":\"session\",...}","{\"type\":\"message\",...}"]}]}
//! kit → {"type":"stop"}
//! ```

pub use crate::catalog::ProtocolRole;
use crate::diagnostic::Severity;
use crate::reading::Reading;
use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The protocol version this kit speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// The most bytes the kit keeps of an implementation's name, version and language: every
/// report and the console show them, so a name of megabytes would fill them all.
pub const MAX_IDENTITY_BYTES: usize = 256;

/// The most bytes the kit keeps of a link an adapter gives: `homepage`, `issues`, and the
/// `issue` of a skipped case.
pub const MAX_LINK_BYTES: usize = 2 << 10;

/// A message from the kit to an adapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum Request {
    /// The first message: the adapter answers `started`.
    Start {
        /// The protocol version the kit speaks.
        protocol: u32,
        /// The kit.
        kit: Kit,
    },
    /// One case to answer.
    Case(CaseRequest),
    /// The last message: the adapter exits (it may answer `stopped` first).
    Stop,
}

/// The kit's identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kit {
    /// `asr-ctk`.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// One case, for one role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseRequest {
    /// Opaque number the answer must echo.
    pub seq: u64,
    /// The role the adapter plays for this case.
    pub role: ProtocolRole,
    /// The case's name (its path in the corpus, without extension).
    pub case: String,
    /// The case's stable id.
    pub id: String,
    /// The rules the case tests (an adapter may skip rules it does not implement).
    pub rules: Vec<String>,
    /// Producer cases: the source format, as the registry names it (`codex-rollout`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The streams, in order; most cases have one, whose part is `""`. A producer case's
    /// are the source's files instead, each `part` the file's name.
    pub streams: Vec<StreamInput>,
}

/// One stream of a case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamInput {
    /// The part name (`""`, or `parent` / `child` in a case of several streams).
    pub part: String,
    /// The stream file's absolute path.
    pub path: String,
    /// The stream's bytes, base64 (standard alphabet, padded): the same bytes as the file.
    /// Left out for an adapter that declared [`STREAMS_BY_PATH`]: it reads `path` itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
}

/// The capability of an adapter that reads each stream from its `path`: the kit then sends no
/// `data`, so a stream of gigabytes is never copied into a request.
pub const STREAMS_BY_PATH: &str = "streams-by-path";

/// The capability of an adapter that reads its requests as they come and answers them in
/// their order, whatever follows them on its stdin: `asr-ctk fuzz` may then send the next
/// requests before the answer to the first has come, so that the adapter never waits for the
/// kit. Without it, one request is sent at a time (a shell loop whose commands read stdin
/// would take requests that were not theirs).
pub const PIPELINED: &str = "pipelined";

/// A message from an adapter to the kit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum Reply {
    /// The answer to `start`.
    #[serde(rename_all = "camelCase")]
    Started {
        /// The protocol version the adapter speaks; must be the kit's.
        protocol: u32,
        /// Who the implementation is.
        implementation: Implementation,
        /// The roles it plays.
        roles: Vec<ProtocolRole>,
        /// The format versions it reads.
        format_versions: Vec<String>,
        /// Optional protocol features it supports ([`STREAMS_BY_PATH`], [`PIPELINED`]); names
        /// the kit does not know are ignored.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        capabilities: Vec<String>,
        /// The implementation's own ids for rules and checks of the catalog that it cites in
        /// place of the catalog's: each own id with the catalog id it stands for
        /// (`{"DUP-KEY": "ASR-X-004"}`). A finding under another id matches no expected one.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        rule_aliases: BTreeMap<String, String>,
    },
    /// The implementation's answer to a case.
    Answered {
        /// The case's seq, echoed.
        #[serde(default)]
        seq: u64,
        /// Validator and reader: one answer per stream, in the order of the request.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        streams: Vec<StreamAnswer>,
        /// Producer: the ASR streams it wrote of the source.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        outputs: Vec<OutputStream>,
    },
    /// The implementation declines the case, with a reason.
    Skipped {
        /// The case's seq, echoed.
        #[serde(default)]
        seq: u64,
        /// Why.
        reason: String,
        /// Where the gap is tracked.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        issue: Option<String>,
    },
    /// The implementation failed on the case (its own error, not a verdict on the stream).
    Error {
        /// The case's seq, echoed.
        #[serde(default)]
        seq: u64,
        /// What failed.
        message: String,
    },
    /// The answer to `stop` (optional).
    Stopped,
}

/// Who an implementation is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Implementation {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The language it is written in.
    pub language: String,
    /// Where it lives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homepage: Option<String>,
    /// Where its issues are tracked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issues: Option<String>,
}

/// What an implementation made of one stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct StreamAnswer {
    /// Validator: no error found. Reader: the stream was accepted.
    pub valid: bool,
    /// The findings, by rule.
    #[serde(default)]
    pub diagnostics: Vec<AnswerDiagnostic>,
    /// Reader: how the stream was understood (defined with the reader semantics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reading: Option<ReadingAnswer>,
}

impl Reply {
    /// What a `started` message breaks of its schema that its type does not hold: an empty
    /// implementation name, or an alias for an id the catalog does not have. `None` for a
    /// right one (and for any other message).
    pub fn started_problem(&self) -> Option<String> {
        let Reply::Started {
            implementation,
            rule_aliases,
            ..
        } = self
        else {
            return None;
        };
        if implementation.name.is_empty() {
            return Some("the started message names no implementation (an empty name)".into());
        }
        let catalog = crate::catalog::Catalog::embedded();
        rule_aliases.iter().find_map(|(own, rule)| {
            if catalog.knows(own) {
                // An alias may not redirect the catalog's own ids to others.
                Some(format!(
                    "ruleAliases maps {own:?}, an id of the catalog itself"
                ))
            } else if catalog.knows(rule) {
                None
            } else {
                Some(format!(
                    "ruleAliases maps {own:?} to {rule:?}, which is no id of the catalog"
                ))
            }
        })
    }
}

impl Reply {
    /// The reply with each text that names the implementation or links to it cut to its
    /// bound ([`MAX_IDENTITY_BYTES`], [`MAX_LINK_BYTES`]), ending in `…[N more bytes not
    /// kept]`. The kit cuts every reply it reads, so every report and the console get the
    /// same, bounded, text.
    #[must_use]
    pub fn bounded(mut self) -> Self {
        let cut = |text: &mut String, kept| crate::text::cut_text(text, kept, "…");
        match &mut self {
            Reply::Started { implementation, .. } => {
                cut(&mut implementation.name, MAX_IDENTITY_BYTES);
                cut(&mut implementation.version, MAX_IDENTITY_BYTES);
                cut(&mut implementation.language, MAX_IDENTITY_BYTES);
                for link in [&mut implementation.homepage, &mut implementation.issues]
                    .into_iter()
                    .flatten()
                {
                    cut(link, MAX_LINK_BYTES);
                }
            }
            Reply::Skipped {
                issue: Some(issue), ..
            } => cut(issue, MAX_LINK_BYTES),
            _ => {}
        }
        self
    }
}

impl StreamAnswer {
    /// A reader's answer: whether it read the stream, and its reading.
    pub fn read(valid: bool, reading: Option<ReadingAnswer>) -> Self {
        StreamAnswer {
            valid,
            diagnostics: Vec::new(),
            reading,
        }
    }
}

/// The most output streams one producer's answer may hold: a session and its subagents'
/// are a handful; thousands are a producer gone wrong, not a conversion to judge.
pub const MAX_OUTPUTS: usize = 256;

/// One ASR stream a producer wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputStream {
    /// Its name, unique in the answer (`""` for a producer that writes one stream): a label
    /// for the report; assertions select records by what they hold, not by stream name.
    pub name: String,
    /// Its lines, each without its `\n`.
    pub lines: Vec<String>,
}

impl OutputStream {
    /// The stream's bytes: each line ended by `\n`.
    pub fn bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.lines.iter().map(|l| l.len() + 1).sum());
        for line in &self.lines {
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(b'\n');
        }
        bytes
    }

    /// The stream of this text: its lines, split at each `\n` only (a `\r` stays in its
    /// line), a last line without `\n` kept.
    pub fn from_text(name: &str, text: &str) -> Self {
        let body = text.strip_suffix('\n').unwrap_or(text);
        OutputStream {
            name: name.to_owned(),
            lines: if text.is_empty() {
                Vec::new()
            } else {
                body.split('\n').map(str::to_owned).collect()
            },
        }
    }
}

/// A reading as a reader answered it: a [`Reading`] when it is one, kept as the JSON the
/// reader sent, so that a reading with a wrong value (`"root": "maybe"`) is judged member by
/// member under the rule the member comes from, not refused whole as a broken answer.
///
/// ```
/// use asr_suite::protocol::ReadingAnswer;
///
/// let sent: ReadingAnswer = serde_json::from_str(
///     r#"{"session":{"root":"no","unresolved":[]},"records":{},"totals":{"ownRecords":[],"mayIncludeCopies":false}}"#,
/// ).expect("JSON");
/// assert_eq!(sent.reading().expect("a reading").session.unresolved.len(), 0);
/// let odd: ReadingAnswer = serde_json::from_str(r#"{"session":{"root":"maybe"}}"#).expect("JSON");
/// assert!(odd.reading().is_err());
/// assert_eq!(odd.json()["session"]["root"], "maybe");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ReadingAnswer(Value);

impl ReadingAnswer {
    /// The reading, typed, when the JSON is one.
    pub fn reading(&self) -> Result<Reading, serde_json::Error> {
        Reading::deserialize(&self.0)
    }

    /// The JSON as sent.
    pub fn json(&self) -> &Value {
        &self.0
    }
}

impl From<&Reading> for ReadingAnswer {
    fn from(reading: &Reading) -> Self {
        // A reading is plain data: it always serializes.
        ReadingAnswer(serde_json::to_value(reading).unwrap_or(Value::Null))
    }
}

/// One finding in an answer: the members of a validation report's diagnostic, of which
/// `rule`, `severity` and `line` are required.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerDiagnostic {
    /// The rule id the implementation cites.
    pub rule: String,
    /// Its severity.
    pub severity: Severity,
    /// 1-based line.
    pub line: usize,
    /// JSON Pointer within the line's object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// The record's seq.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// The record's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// What is wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A reply parsed with only the findings a caller keeps, and how many it did not.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct KeptReply {
    /// The reply, each stream's `diagnostics` holding the findings kept, in their order.
    pub reply: Reply,
    /// The findings read and not kept, over every stream.
    pub not_kept: u64,
}

/// Parses one reply line as [`Reply`] does, but hands each finding of each stream answer
/// (with the stream's index) to `keep` as it is read, and keeps it only when `keep` says so:
/// the others are counted and freed at once. So a reply of millions of findings costs the
/// findings kept and the line, not a tree of every one: the memory of a finding is spent
/// only on one that is kept.
///
/// The members other than `streams`, and every reply without it, are parsed as
/// [`Reply`]'s derived form parses them, with its messages.
///
/// ```
/// use asr_suite::protocol::{Reply, reply_keeping};
///
/// let line = br#"{"type":"answered","seq":1,"streams":[{"valid":false,"diagnostics":[
///   {"rule":"ASR-406","severity":"notice","line":1},{"rule":"ASR-212","severity":"error","line":2}]}]}"#;
/// let kept = reply_keeping(line, &mut |_, d| d.rule == "ASR-212").expect("a reply");
/// assert_eq!(kept.not_kept, 1);
/// let Reply::Answered { streams, .. } = kept.reply else { panic!("answered") };
/// assert_eq!(streams[0].diagnostics.len(), 1);
/// ```
pub fn reply_keeping(bytes: &[u8], keep: Keep<'_>) -> Result<KeptReply, serde_json::Error> {
    use serde::de::DeserializeSeed as _;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let mut not_kept = 0;
    let reply = bounded::ReplySeed {
        keep,
        not_kept: &mut not_kept,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(KeptReply { reply, not_kept })
}

/// What decides whether a finding is kept: the index of its stream in the reply, and the
/// finding.
pub type Keep<'a> = &'a mut dyn FnMut(usize, &AnswerDiagnostic) -> bool;

impl Reply {
    /// The seq a case answer echoes.
    pub fn seq(&self) -> Option<u64> {
        match self {
            Reply::Answered { seq, .. } | Reply::Skipped { seq, .. } | Reply::Error { seq, .. } => {
                Some(*seq)
            }
            Reply::Started { .. } | Reply::Stopped => None,
        }
    }
}

/// Standard base64 with padding, for the `data` member of a stream.
pub fn base64_encode(bytes: &[u8]) -> String {
    BASE64.encode(bytes)
}

/// Decodes standard base64, padding optional (an adapter may leave it out); `None` for
/// anything else.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    BASE64.decode(text).ok()
}

/// The standard alphabet, padded when encoding, padding optional when decoding.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The visitors of [`reply_keeping`]: one pass over the reply, the findings of each stream
/// answer judged kept or not as they come.
mod bounded {
    use super::{AnswerDiagnostic, Keep, ReadingAnswer, Reply, StreamAnswer};
    use serde::Deserialize as _;
    use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
    use serde_json::{Map, Value};
    use std::fmt;

    pub(super) struct ReplySeed<'k, 'c> {
        pub keep: Keep<'k>,
        pub not_kept: &'c mut u64,
    }

    impl<'de> DeserializeSeed<'de> for ReplySeed<'_, '_> {
        type Value = Reply;

        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Reply, D::Error> {
            d.deserialize_map(self)
        }
    }

    impl<'de> Visitor<'de> for ReplySeed<'_, '_> {
        type Value = Reply;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a reply object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Reply, A::Error> {
            let ReplySeed { keep, not_kept } = self;
            let mut streams = None;
            let mut rest = Map::new();
            while let Some(key) = map.next_key::<String>()? {
                if key == "streams" {
                    if streams.is_some() {
                        return Err(de::Error::duplicate_field("streams"));
                    }
                    streams = Some(map.next_value_seed(StreamsSeed {
                        keep: &mut *keep,
                        not_kept: &mut *not_kept,
                    })?);
                } else {
                    let value: Value = map.next_value()?;
                    if rest.contains_key(&key) {
                        return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
                    }
                    rest.insert(key, value);
                }
            }
            // Everything but the findings is parsed by the derived form: the same checks, the
            // same messages. An empty `streams` stands in for the one read here.
            if streams.is_some() {
                rest.insert("streams".into(), Value::Array(Vec::new()));
            }
            let mut reply = Reply::deserialize(Value::Object(rest)).map_err(de::Error::custom)?;
            if let (Reply::Answered { streams: slot, .. }, Some(read)) = (&mut reply, streams) {
                *slot = read;
            }
            Ok(reply)
        }
    }

    struct StreamsSeed<'k, 'c> {
        keep: Keep<'k>,
        not_kept: &'c mut u64,
    }

    impl<'de> DeserializeSeed<'de> for StreamsSeed<'_, '_> {
        type Value = Vec<StreamAnswer>;

        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_seq(self)
        }
    }

    impl<'de> Visitor<'de> for StreamsSeed<'_, '_> {
        type Value = Vec<StreamAnswer>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an array of stream answers")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut streams = Vec::new();
            loop {
                let seed = StreamSeed {
                    index: streams.len(),
                    keep: &mut *self.keep,
                    not_kept: &mut *self.not_kept,
                };
                match seq.next_element_seed(seed)? {
                    Some(stream) => streams.push(stream),
                    None => return Ok(streams),
                }
            }
        }
    }

    const STREAM_FIELDS: &[&str] = &["valid", "diagnostics", "reading"];

    struct StreamSeed<'k, 'c> {
        index: usize,
        keep: Keep<'k>,
        not_kept: &'c mut u64,
    }

    impl<'de> DeserializeSeed<'de> for StreamSeed<'_, '_> {
        type Value = StreamAnswer;

        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(self)
        }
    }

    impl<'de> Visitor<'de> for StreamSeed<'_, '_> {
        type Value = StreamAnswer;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a stream answer")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let StreamSeed {
                index,
                keep,
                not_kept,
            } = self;
            let mut valid = None;
            let mut diagnostics = None;
            let mut reading: Option<Option<ReadingAnswer>> = None;
            while let Some(key) = map.next_key::<String>()? {
                match key.as_str() {
                    "valid" if valid.is_none() => valid = Some(map.next_value::<bool>()?),
                    "diagnostics" if diagnostics.is_none() => {
                        diagnostics = Some(map.next_value_seed(FindingsSeed {
                            index,
                            keep: &mut *keep,
                            not_kept: &mut *not_kept,
                        })?);
                    }
                    "reading" if reading.is_none() => reading = Some(map.next_value()?),
                    "valid" => return Err(de::Error::duplicate_field("valid")),
                    "diagnostics" => return Err(de::Error::duplicate_field("diagnostics")),
                    "reading" => return Err(de::Error::duplicate_field("reading")),
                    other => return Err(de::Error::unknown_field(other, STREAM_FIELDS)),
                }
            }
            Ok(StreamAnswer {
                valid: valid.ok_or_else(|| de::Error::missing_field("valid"))?,
                diagnostics: diagnostics.unwrap_or_default(),
                reading: reading.flatten(),
            })
        }
    }

    struct FindingsSeed<'k, 'c> {
        index: usize,
        keep: Keep<'k>,
        not_kept: &'c mut u64,
    }

    impl<'de> DeserializeSeed<'de> for FindingsSeed<'_, '_> {
        type Value = Vec<AnswerDiagnostic>;

        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_seq(self)
        }
    }

    impl<'de> Visitor<'de> for FindingsSeed<'_, '_> {
        type Value = Vec<AnswerDiagnostic>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an array of findings")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut kept = Vec::new();
            while let Some(finding) = seq.next_element::<AnswerDiagnostic>()? {
                if (self.keep)(self.index, &finding) {
                    kept.push(finding);
                } else {
                    *self.not_kept += 1;
                }
            }
            Ok(kept)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_every_length() {
        for len in 0..40u8 {
            let bytes: Vec<u8> = (0..len)
                .map(|i| i.wrapping_mul(37).wrapping_add(11))
                .collect();
            let text = base64_encode(&bytes);
            assert_eq!(base64_decode(&text), Some(bytes), "{len}");
        }
        assert_eq!(base64_encode(b"Man"), "TWFu");
        assert_eq!(base64_encode(b"Ma"), "TWE=");
        assert_eq!(base64_decode("TWE"), Some(b"Ma".to_vec()));
        assert_eq!(base64_decode("TWE="), Some(b"Ma".to_vec()));
        assert_eq!(base64_decode("T"), None);
        assert_eq!(base64_decode("TW*u"), None);
        assert_eq!(base64_decode("TWE=TWFu"), None, "padding only at the end");
        assert_eq!(base64_decode("TWF=="), None, "padding that does not fit");
    }

    #[test]
    fn replies_are_tagged_and_refuse_unknown_members() {
        let answered: Reply = serde_json::from_str(
            r#"{"type":"answered","seq":3,"streams":[{"valid":false,"diagnostics":[{"rule":"ASR-212","severity":"error","line":2}]}]}"#,
        )
        .expect("valid answer");
        assert_eq!(answered.seq(), Some(3));
        assert!(
            serde_json::from_str::<Reply>(r#"{"type":"answered","seq":3,"streams":[],"extra":1}"#)
                .is_err()
        );
        assert!(
            serde_json::from_str::<Reply>(r#"{"type":"answerd","seq":3,"streams":[]}"#).is_err()
        );
        assert!(
            serde_json::from_str::<Reply>(r#"{"type":"skipped","seq":3}"#).is_err(),
            "reason is required"
        );
        let started: Reply = serde_json::from_str(
            r#"{"type":"started","protocol":1,"implementation":{"name":"x","version":"1","language":"rust"},"roles":["validator"],"formatVersions":["0.1"]}"#,
        )
        .expect("valid start");
        assert!(matches!(started, Reply::Started { protocol: 1, .. }));
    }

    #[test]
    fn a_started_message_needs_a_name_and_aliases_of_catalog_ids() {
        let started = |extra: &str| -> Reply {
            serde_json::from_str(&format!(
                r#"{{"type":"started","protocol":1,"implementation":{{"name":"v","version":"1","language":"go"}},"roles":["validator"],"formatVersions":["0.1"]{extra}}}"#
            ))
            .expect("a started message")
        };
        assert_eq!(started("").started_problem(), None);
        assert_eq!(
            started(r#","ruleAliases":{"DUP":"ASR-X-004"}"#).started_problem(),
            None
        );
        let bad = started(r#","ruleAliases":{"DUP":"ASR-X-999"}"#).started_problem();
        assert!(bad.is_some_and(|p| p.contains("ASR-X-999")));
        let redirect = started(r#","ruleAliases":{"ASR-212":"ASR-231"}"#).started_problem();
        assert!(redirect.is_some_and(|p| p.contains("an id of the catalog itself")));
        let nameless: Reply = serde_json::from_str(
            r#"{"type":"started","protocol":1,"implementation":{"name":"","version":"1","language":"go"},"roles":[],"formatVersions":[]}"#,
        )
        .expect("a started message");
        assert!(nameless.started_problem().is_some());
    }

    #[test]
    fn identity_texts_and_links_are_cut_on_a_character_boundary_saying_how_much() {
        let long = "é".repeat(1000);
        let started: Reply = serde_json::from_value(serde_json::json!({
            "type": "started", "protocol": 1,
            "implementation": {"name": long, "version": "1", "language": long,
                               "homepage": "x".repeat(5000)},
            "roles": ["validator"], "formatVersions": ["0.1"]
        }))
        .expect("a started message");
        let Reply::Started { implementation, .. } = started.bounded() else {
            panic!("still started");
        };
        assert_eq!(
            implementation.name,
            format!("{}…[1744 more bytes not kept]", "é".repeat(128))
        );
        assert_eq!(implementation.language, implementation.name);
        assert_eq!(implementation.version, "1");
        let homepage = implementation.homepage.expect("kept");
        assert!(homepage.starts_with(&"x".repeat(MAX_LINK_BYTES)));
        assert!(
            homepage.ends_with("…[2952 more bytes not kept]"),
            "{homepage}"
        );
        let skipped = Reply::Skipped {
            seq: 1,
            reason: "r".into(),
            issue: Some("y".repeat(MAX_LINK_BYTES + 1)),
        };
        assert!(
            matches!(skipped.bounded(), Reply::Skipped { issue: Some(i), .. }
            if i.ends_with("…[1 more bytes not kept]"))
        );
    }

    #[test]
    fn requests_serialize_as_documented() {
        let stop = serde_json::to_string(&Request::Stop).expect("serializes");
        assert_eq!(stop, r#"{"type":"stop"}"#);
        let start = serde_json::to_value(Request::Start {
            protocol: 1,
            kit: Kit {
                name: "asr-ctk".into(),
                version: "0.1.0".into(),
            },
        })
        .expect("serializes");
        assert_eq!(start["type"], "start");
        assert_eq!(start["kit"]["name"], "asr-ctk");
    }
}

/// What a reply to a `case` request says, once [`check_case_reply`] has checked its shape.
#[derive(Debug, Clone, PartialEq)]
pub enum CaseReply {
    /// A validator's or reader's answer: one entry a stream of the request, in order.
    Streams(Vec<StreamAnswer>),
    /// A producer's answer: the streams it wrote.
    Outputs(Vec<OutputStream>),
    /// The adapter declined the case.
    Skipped {
        /// Why.
        reason: String,
        /// Where the gap is tracked.
        issue: Option<String>,
    },
    /// The adapter failed on the case (its own fault, no verdict on the stream).
    Error(String),
}

/// Checks the shape of a reply to the `case` request of `seq` (0 in one-shot mode, where the
/// reply may leave it out), for a case of `role` with `streams` streams: the one check every
/// command that talks to adapters (`run`, `diff`, `fuzz`) applies (PROTOCOL.md, "Outcomes",
/// protocol-error). An `Err` says, in words, how the reply breaks the protocol.
///
/// ```
/// use asr_suite::protocol::{CaseReply, ProtocolRole, Reply, check_case_reply};
///
/// let reply: Reply = serde_json::from_str(r#"{"type":"error","seq":8,"message":"boom"}"#).unwrap();
/// let wrong = check_case_reply(reply.clone(), 7, ProtocolRole::Validator, 1);
/// assert_eq!(wrong.unwrap_err(), "the answer echoes seq 8; the request's seq was 7");
/// assert_eq!(
///     check_case_reply(reply, 8, ProtocolRole::Validator, 1),
///     Ok(CaseReply::Error("boom".into()))
/// );
/// ```
pub fn check_case_reply(
    reply: Reply,
    seq: u64,
    role: ProtocolRole,
    streams: usize,
) -> Result<CaseReply, String> {
    match reply {
        Reply::Answered { seq: echoed, .. }
        | Reply::Skipped { seq: echoed, .. }
        | Reply::Error { seq: echoed, .. }
            if echoed != seq =>
        {
            Err(format!(
                "the answer echoes seq {echoed}; the request's seq was {seq}"
            ))
        }
        Reply::Answered {
            streams: answers,
            outputs,
            ..
        } if role == ProtocolRole::Producer => {
            if !answers.is_empty() {
                return Err(
                    "a producer's answer has `streams`: it holds `outputs`, the streams it wrote"
                        .into(),
                );
            }
            if let Some((output, line)) = outputs.iter().find_map(|o| {
                o.lines
                    .iter()
                    .position(|l| l.contains('\n'))
                    .map(|i| (o.name.as_str(), i + 1))
            }) {
                return Err(format!(
                    "line {line} of the output stream {:?} holds a newline: each entry of `lines` is one line",
                    crate::text::escape_controls(output)
                ));
            }
            Ok(CaseReply::Outputs(outputs))
        }
        Reply::Answered { outputs, .. } if !outputs.is_empty() => Err(format!(
            "the answer to a {} case has `outputs`, which only a producer's has",
            role.as_str()
        )),
        Reply::Answered {
            streams: answers, ..
        } => {
            if let Some(d) = answers
                .iter()
                .flat_map(|s| &s.diagnostics)
                .find(|d| d.line == 0)
            {
                return Err(format!(
                    "a finding under {} is on line 0: lines are 1-based (a finding about the whole stream goes on line 1)",
                    crate::text::escape_controls(&d.rule)
                ));
            }
            if answers.len() != streams {
                return Err(format!(
                    "the answer has {} stream entries; the case has {streams} streams",
                    answers.len()
                ));
            }
            Ok(CaseReply::Streams(answers))
        }
        Reply::Skipped { reason, issue, .. } => Ok(CaseReply::Skipped { reason, issue }),
        Reply::Error { message, .. } => Ok(CaseReply::Error(message)),
        Reply::Started { .. } | Reply::Stopped => Err(format!(
            "the adapter answered a case with {}",
            match reply {
                Reply::Started { .. } => "`started`",
                _ => "`stopped`",
            }
        )),
    }
}

/// Checks a producer's output streams (name and bytes) as the protocol bounds them: at
/// least one, at most [`MAX_OUTPUTS`], no two of one name. For replies and for one-shot
/// output files alike; an `Err` says how they break the protocol.
pub fn check_outputs(outputs: &[(String, Vec<u8>)]) -> Result<(), String> {
    if outputs.is_empty() {
        return Err(
            "a producer's answer has no output stream (a producer that cannot convert the source says skipped or error)"
                .into(),
        );
    }
    if outputs.len() > MAX_OUTPUTS {
        return Err(format!(
            "a producer's answer has {} output streams; at most {MAX_OUTPUTS} are judged",
            outputs.len()
        ));
    }
    let mut names: Vec<&str> = outputs.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    match names.windows(2).find(|w| w[0] == w[1]) {
        Some(twice) => Err(format!(
            "two output streams are named {:?}",
            crate::text::escape_controls(twice[0])
        )),
        None => Ok(()),
    }
}
