//! The rule a member of a reading comes from: decided by the member and by what kind of
//! record or part it belongs to, as `schemas/reading.schema.json` says
//! (`x-asr-rule` and `x-asr-rule-by-kind`), never by the order of a case's rules.
//!
//! ```
//! use asr_suite::judge::members::Kinds;
//!
//! let stream = concat!(
//!     r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","sessionId":"s1"}"#, "\n",
//!     r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"assistant","content":[{"type":"reasoning","text":"t"},{"type":"x-card"}]}"#, "\n",
//! );
//! let kinds = Kinds::of_stream(stream.as_bytes());
//! assert_eq!(kinds.rule("/records/r1/parts/0/render").as_deref(), Some("ASR-214"));
//! assert_eq!(kinds.rule("/records/r1/parts/1/render").as_deref(), Some("ASR-218"));
//! assert_eq!(kinds.rule("/records/r1/parts/0/author").as_deref(), Some("ASR-224"));
//! assert_eq!(kinds.rule("/records/r1/type").as_deref(), Some("ASR-X-010"));
//! ```

use crate::model::{self, Declared, Record, Standing};
use crate::rule;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// What kind of record and part each member of a stream's reading belongs to: the tags
/// `x-asr-rule-by-kind` is keyed by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kinds {
    /// The ids of the stream's records, the header left out: what a reading may list.
    pub records: BTreeSet<String>,
    /// The header's id: the session, which no reading lists as a record.
    header: Option<String>,
    /// A later line has the header's id: a record listed under it may be that line.
    header_repeated: bool,
    /// How the reference reads the stream were the last line of each repeated id its record
    /// (`None` when no id repeats): a reader whose value is this one read the wrong line of
    /// the id, ASR-X-009's matter.
    last_wins: Option<Value>,
    /// Some line is not read here (not JSON to serde_json: deeper than it reads, a number
    /// beyond a double, a lone surrogate): a reader that may read it lists records these
    /// kinds do not know.
    pub unread: bool,
    /// The strings of the stream that are no session reference, without their `#` part: a
    /// reader that lists one as unresolved misreads ASR-X-012's grammar.
    malformed_refs: BTreeSet<String>,
    /// Each record's tags (its type; `copied`, `mirror`, `prefix`, `rendered`, `withdrawn`).
    record_tags: BTreeMap<String, Vec<String>>,
    /// Each message part's tags (its kind; `reasoning-only`, `summary`), by record and index.
    part_tags: BTreeMap<(String, usize), Vec<String>>,
    /// Each reasoning part's readable text (its `text` and `summary` segments), as digests so
    /// that a large stream's reasoning is not kept: an index holding anything else leaks what
    /// must stay out of it (`reasoning-leak`).
    readable: BTreeMap<(String, usize), Vec<u64>>,
}

impl Kinds {
    /// The kinds of the records and parts of a stream (lines that are not JSON objects, and
    /// the header, are left out; a repeated id keeps its first record).
    pub fn of_stream(bytes: &[u8]) -> Self {
        // A reader may read past a byte order mark before the header (decision
        // byte-order-mark): so do these kinds.
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        // The header and what it and the declarations say of every record, as the reader
        // places them (one layout, one account of the stream: `model::Declared`).
        let mut placed = model::placed(bytes);
        let mut declared = Declared::default();
        let (objects, standings): (Vec<Map<String, Value>>, Vec<Standing>) = placed
            .by_ref()
            .map(|(_, object, standing)| {
                declared.take(standing, &Record::new(&object));
                (object, standing)
            })
            .unzip();
        let unread = placed.unread();
        // What the reference reads of each record: its originality and whether a revision
        // supersedes it decide which rule a member that depends on them comes from.
        let reference = crate::reading::read_bytes(bytes).reading;
        let mut malformed_refs = BTreeSet::new();
        for value in objects.iter().flat_map(Map::values) {
            collect_malformed(value, &mut malformed_refs);
        }
        let mut kinds = Kinds {
            unread,
            malformed_refs,
            last_wins: last_wins(bytes),
            ..Kinds::default()
        };
        for (object, standing) in objects.iter().zip(standings) {
            let record = Record::new(object);
            let Some(id) = record.id else {
                continue;
            };
            if standing == Standing::Header {
                kinds.header = Some(id.to_owned());
                continue;
            }
            if kinds.header.as_deref() == Some(id) {
                // A later line with the header's id: listing it is ASR-X-009's matter (the
                // header keeps its id), not the header's.
                kinds.header_repeated = true;
                continue;
            }
            if kinds.records.contains(id) {
                // Which line of a repeated id is the record is ASR-X-009's: a member read as
                // the later line would give it comes from that choice.
                if let Some(tags) = kinds.record_tags.get_mut(id)
                    && !tags.iter().any(|t| t == "repeated")
                {
                    tags.push("repeated".into());
                }
                continue;
            }
            kinds.records.insert(id.to_owned());
            let kind = record.kind.unwrap_or("");
            let display = kind == "message" && object.contains_key("displayContent");
            let read = reference
                .records
                .get(id)
                .map(|read| (read.originality, read.superseded));
            let tags = declared.record_tags(&record, read);
            kinds.record_tags.insert(id.to_owned(), tags);
            if kind == "message" {
                let parts = object.get("content").and_then(Value::as_array);
                let only_reasoning = parts.is_some_and(|p| {
                    p.len() == 1 && p[0].get("type").and_then(Value::as_str) == Some("reasoning")
                });
                for (index, part) in parts.into_iter().flatten().enumerate() {
                    let key = (id.to_owned(), index);
                    if part.get("type").and_then(Value::as_str) == Some("reasoning") {
                        let summary = part.get("summary").and_then(Value::as_array);
                        let texts = part
                            .get("text")
                            .into_iter()
                            .chain(summary.into_iter().flatten())
                            .filter_map(Value::as_str)
                            .map(digest)
                            .collect();
                        kinds.readable.insert(key.clone(), texts);
                    }
                    let mut tags = part_tags(part, only_reasoning);
                    if display {
                        tags.push("display".into());
                    }
                    kinds.part_tags.insert(key, tags);
                }
            }
        }
        kinds
    }

    /// The rule the member at `pointer` (a JSON Pointer into a reading) comes from: every
    /// member of a reading has one that binds readers (a test holds the corpus to it);
    /// `None` only for a pointer that is no member, or a member of a record the stream's
    /// kinds do not know.
    pub fn rule(&self, pointer: &str) -> Option<String> {
        self.rule_of(pointer, None)
    }

    /// [`Kinds::rule`], knowing the value read (`read`): a reasoning part's index that holds
    /// text other than the part's own is a leak (`reasoning-leak`), whatever its visibility.
    pub fn rule_of(&self, pointer: &str, read: Option<&Value>) -> Option<String> {
        let tokens: Vec<String> = pointer
            .split('/')
            .skip(1)
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect();
        if let [records, id, _, ..] = tokens.as_slice()
            && records == "records"
            && self
                .record_tags
                .get(id)
                .is_some_and(|t| t.iter().any(|x| x == "repeated"))
            && read.is_some()
            && self.last_wins.as_ref().and_then(|r| r.pointer(pointer)) == read
        {
            return Some(rule::ASR_X_009.into());
        }
        // A string that is no session reference names no session (ASR-X-012): listing it as
        // an unresolved session misreads its grammar, not which sessions the stream has.
        if let [session, unresolved, ..] = tokens.as_slice()
            && session == "session"
            && unresolved == "unresolved"
        {
            let listed: Vec<&Value> = match read {
                Some(Value::Array(items)) => items.iter().collect(),
                Some(other) => vec![other],
                None => Vec::new(),
            };
            if listed.iter().any(|v| {
                v.as_str().is_some_and(|s| {
                    self.malformed_refs
                        .contains(s.split('#').next().unwrap_or(s))
                })
            }) {
                return Some(rule::ASR_X_012.into());
            }
        }
        let spec = member_spec(&tokens)?;
        if let Some(rule) = spec.rule {
            return Some(rule);
        }
        let tags: Vec<String> = match tokens.as_slice() {
            [records, id] if records == "records" => self.tags_of(id),
            [records, id, member] if records == "records" => {
                let mut tags = self.record_tags.get(id)?.clone();
                // ASR-423 says a wrapper's stream makes no record a copy: it is the rule of a
                // record of such a stream read as one, not of one read original or unknown.
                if member == "originality" && read.and_then(Value::as_str) != Some("copy") {
                    tags.retain(|t| t != "executed");
                }
                tags
            }
            [records, id, parts, index, member @ ..]
                if records == "records" && parts == "parts" =>
            {
                let key = (id.clone(), index.parse().ok()?);
                let mut tags = self.part_tags.get(&key).cloned().unwrap_or_default();
                // ASR-220 asks that a reasoning-only message read like a reasoning part: a
                // render of another reasoning kind (or opaque) reads it as a part, and what is
                // wrong with it is the visibility's (ASR-214), not the message's shape.
                if let ([member], Some(Value::String(render))) = (member, read)
                    && member == "render"
                    && render != "text"
                {
                    tags.retain(|t| t != "reasoning-only");
                }
                if let (Some(readable), Some(read)) = (self.readable.get(&key), read) {
                    let strings: Vec<&Value> = match read {
                        Value::Array(items) => items.iter().collect(),
                        other => vec![other],
                    };
                    if strings
                        .iter()
                        .any(|v| v.as_str().is_none_or(|t| !readable.contains(&digest(t))))
                    {
                        tags.push("reasoning-leak".into());
                    }
                }
                tags
            }
            _ => Vec::new(),
        };
        spec.by_kind
            .iter()
            .find(|(tag, _)| tag == "*" || tags.contains(tag))
            .map(|(_, rule)| rule.clone())
    }
}

impl Kinds {
    /// The tags of the record `id`: its own, `header` for the header, none for an id the
    /// stream does not have.
    pub fn tags_of(&self, id: &str) -> Vec<String> {
        if self.header.as_deref() == Some(id) {
            // Under an id a later line repeats, a record listed is that line read as one
            // (ASR-X-009), as likely as the header read as one (ASR-X-007).
            return if self.header_repeated {
                vec!["repeated".into()]
            } else {
                vec!["header".into()]
            };
        }
        self.record_tags.get(id).cloned().unwrap_or_default()
    }

    /// The rule a record's place in `totals.ownRecords` comes from, when a reading credits
    /// it and should not (`credited`) or does not and should: the header is no record
    /// (ASR-X-007), an id the stream does not have none (ASR-X-009), a copy is not the
    /// session's work (ASR-417), a record of unknown originality never credited (ASR-416);
    /// an original left out is a misreading of its originality, by the rule that decides it.
    pub fn credit_rule(&self, id: &str, credited: bool) -> String {
        let tags = self.tags_of(id);
        let has = |t: &str| tags.iter().any(|x| x == t);
        if self.header_repeated && self.header.as_deref() == Some(id) {
            return rule::ASR_X_009.into();
        }
        if has("header") {
            return rule::ASR_X_007.into();
        }
        if tags.is_empty() {
            return rule::ASR_X_009.into();
        }
        if credited && has("copy") {
            return rule::ASR_417.into();
        }
        if credited {
            return rule::ASR_416.into();
        }
        self.rule(&crate::diagnostic::pointer_join(
            &crate::diagnostic::pointer_join("/records", id),
            "originality",
        ))
        .unwrap_or_else(|| rule::ASR_416.into())
    }
}

/// The reference's reading of `bytes` with every line whose id a later line repeats left
/// out, so that the last line of each repeated id is its record; `None` when no id repeats.
fn last_wins(bytes: &[u8]) -> Option<Value> {
    let lines: Vec<&[u8]> = crate::lines::split(bytes)
        .with_final_empty()
        .bytes()
        .collect();
    // The header (the layout's) keeps its id: a later line with it is no record either way.
    let header = model::placed(bytes)
        .find(|(_, _, standing)| *standing == Standing::Header)
        .map(|(number, ..)| number - 1);
    let ids: Vec<Option<String>> = lines
        .iter()
        .enumerate()
        .map(|(n, line)| {
            let value: Value = serde_json::from_slice(line).ok()?;
            (Some(n) != header).then_some(())?;
            value.get("id")?.as_str().map(str::to_owned)
        })
        .collect();
    let mut last = BTreeMap::new();
    for (n, id) in ids.iter().enumerate() {
        if let Some(id) = id {
            last.insert(id.clone(), n);
        }
    }
    if last.len() == ids.iter().flatten().count() {
        return None;
    }
    let kept: Vec<&[u8]> = lines
        .iter()
        .zip(&ids)
        .enumerate()
        .filter(|(n, (_, id))| id.as_ref().is_none_or(|id| last.get(id) == Some(n)))
        .map(|(_, (line, _))| *line)
        .collect();
    serde_json::to_value(crate::reading::read_bytes(&kept.join(&b'\n')).reading).ok()
}

/// A digest of a text, to tell whether a value read is one of a part's texts.
fn digest(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// Every string under `value` with a `:` that is no session reference (its `#` part left
/// out): what a reader might list were it to skip the grammar.
fn collect_malformed(value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::String(s) if s.contains(':') && crate::refs::parse_session_ref(s).is_err() => {
            out.insert(s.split('#').next().unwrap_or(s).to_owned());
        }
        Value::Array(items) => items.iter().for_each(|v| collect_malformed(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_malformed(v, out)),
        _ => {}
    }
}

/// A part's tags: its kind, and what else decides which rule reads it.
fn part_tags(part: &Value, only_reasoning: bool) -> Vec<String> {
    let kind = match part.get("type").and_then(Value::as_str) {
        Some(
            k @ ("text" | "reasoning" | "refusal" | "resource_link" | "resource" | "data"
            | "opaque"),
        ) => k,
        Some("image" | "audio") => "media",
        _ => "unknown",
    };
    let mut tags = vec![kind.to_owned()];
    if only_reasoning {
        tags.push("reasoning-only".into());
    }
    if kind == "reasoning" && part.get("visibility").and_then(Value::as_str) == Some("summary") {
        tags.push("summary".into());
    }
    tags
}

/// What the reading schema says of one member: its rule, or its rules by kind.
#[derive(Debug, Default)]
struct MemberSpec {
    rule: Option<String>,
    by_kind: Vec<(String, String)>,
}

/// The schema's word on the member at `tokens`: the innermost schema along the path that
/// says anything.
fn member_spec(tokens: &[String]) -> Option<MemberSpec> {
    let schema = reading_schema();
    let mut node = schema;
    let mut found = spec_of(node);
    for token in tokens {
        let next = node
            .get("properties")
            .and_then(|p| p.get(token))
            .or_else(|| node.get("additionalProperties").filter(|a| a.is_object()))
            .or_else(|| node.get("items"));
        let Some(mut next) = next else { break };
        while let Some(target) = next.get("$ref").and_then(Value::as_str) {
            match target.strip_prefix('#').and_then(|p| schema.pointer(p)) {
                Some(resolved) => next = resolved,
                None => break,
            }
        }
        node = next;
        if let Some(here) = spec_of(node) {
            found = Some(here);
        }
    }
    found
}

fn spec_of(node: &Value) -> Option<MemberSpec> {
    let rule = node
        .get("x-asr-rule")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let by_kind: Vec<(String, String)> = node
        .get("x-asr-rule-by-kind")
        .and_then(Value::as_array)
        .map(|pairs| {
            pairs
                .iter()
                .filter_map(Value::as_str)
                .filter_map(|pair| pair.split_once('='))
                .map(|(tag, rule)| (tag.to_owned(), rule.to_owned()))
                .collect()
        })
        .unwrap_or_default();
    (rule.is_some() || !by_kind.is_empty()).then_some(MemberSpec { rule, by_kind })
}

/// The embedded reading schema.
pub(crate) fn reading_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        crate::embedded::schema("reading.schema.json")
            .and_then(|text| serde_json::from_str(text).ok())
            .unwrap_or(Value::Null)
    })
}

/// The members of `reading` that the reading schema does not define, as JSON Pointers.
pub fn undefined_members(reading: &Value) -> Vec<String> {
    let mut out = Vec::new();
    undefined_at(reading_schema(), reading, &mut String::new(), &mut out);
    out
}

fn undefined_at(schema_node: &Value, value: &Value, pointer: &mut String, out: &mut Vec<String>) {
    let root = reading_schema();
    let mut node = schema_node;
    while let Some(target) = node.get("$ref").and_then(Value::as_str) {
        match target.strip_prefix('#').and_then(|p| root.pointer(p)) {
            Some(resolved) => node = resolved,
            None => return,
        }
    }
    match value {
        Value::Object(members) => {
            let properties = node.get("properties").and_then(Value::as_object);
            let additional = node.get("additionalProperties").filter(|a| a.is_object());
            if properties.is_none() && additional.is_none() {
                return;
            }
            for (key, member) in members {
                let mark = pointer.len();
                crate::diagnostic::push_token(pointer, key);
                match properties.and_then(|p| p.get(key)).or(additional) {
                    Some(child) => undefined_at(child, member, pointer, out),
                    None => out.push(pointer.clone()),
                }
                pointer.truncate(mark);
            }
        }
        Value::Array(items) => {
            if let Some(child) = node.get("items") {
                for (index, item) in items.iter().enumerate() {
                    let mark = pointer.len();
                    crate::diagnostic::push_token(pointer, &index.to_string());
                    undefined_at(child, item, pointer, out);
                    pointer.truncate(mark);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str = concat!(
        r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","sessionId":"s1","lineage":{"inherits":{"mode":"copied","localThroughId":"r1"}}}"#,
        "\n",
        r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"assistant","status":"withdrawn","content":[{"type":"reasoning","visibility":"summary","summary":["s"]}]}"#,
        "\n",
        r#"{"type":"message","seq":2,"id":"r2","messageId":"m2","role":"assistant","copiedFrom":{"session":"codex:x"},"content":[{"type":"opaque"},{"type":"data","data":{}},{"type":"text","text":"t"},{"type":"reasoning","text":"r"}]}"#,
        "\n",
        r#"{"type":"plan","seq":3,"id":"p1","planId":"p","planType":"items","entries":[]}"#,
        "\n",
    );

    #[test]
    fn a_member_goes_under_the_rule_of_its_kind_whatever_the_case_names() {
        let kinds = Kinds::of_stream(STREAM.as_bytes());
        let rule = |p: &str| kinds.rule(p);
        assert_eq!(rule("/session/root").as_deref(), Some("ASR-401"));
        assert_eq!(rule("/session/unresolved/0").as_deref(), Some("ASR-406"));
        assert_eq!(rule("/totals/ownRecords/1").as_deref(), Some("ASR-417"));
        assert_eq!(rule("/totals/mayIncludeCopies").as_deref(), Some("ASR-416"));
        // Originality: a record with copiedFrom, one in a declared prefix.
        assert_eq!(rule("/records/r2/originality").as_deref(), Some("ASR-416"));
        assert_eq!(rule("/records/r1/originality").as_deref(), Some("ASR-415"));
        assert_eq!(rule("/records/r1/contextView").as_deref(), Some("ASR-225"));
        assert_eq!(rule("/records/r2/contextView").as_deref(), Some("ASR-205"));
        // Whatever the record's type, superseded is what supersedes says (ASR-X-014).
        assert_eq!(rule("/records/p1/superseded").as_deref(), Some("ASR-X-014"));
        assert_eq!(rule("/records/r2/superseded").as_deref(), Some("ASR-X-014"));
        // Parts: a reasoning-only message, opaque, data, text and reasoning parts.
        assert_eq!(
            rule("/records/r1/parts/0/render").as_deref(),
            Some("ASR-220")
        );
        assert_eq!(
            rule("/records/r2/parts/0/index").as_deref(),
            Some("ASR-232")
        );
        assert_eq!(
            rule("/records/r2/parts/1/render").as_deref(),
            Some("ASR-238")
        );
        assert_eq!(
            rule("/records/r2/parts/2/render").as_deref(),
            Some("ASR-218")
        );
        assert_eq!(
            rule("/records/r2/parts/2/index/0").as_deref(),
            Some("ASR-215")
        );
        assert_eq!(
            rule("/records/r2/parts/3/index/0").as_deref(),
            Some("ASR-214")
        );
        let leaked = serde_json::json!(["r", "SIG"]);
        assert_eq!(
            kinds
                .rule_of("/records/r2/parts/3/index", Some(&leaked))
                .as_deref(),
            Some("ASR-215")
        );
        assert_eq!(
            rule("/records/r2/parts/3/render").as_deref(),
            Some("ASR-214")
        );
        assert_eq!(
            rule("/records/r2/parts/3/phase").as_deref(),
            Some("ASR-224")
        );
        assert_eq!(rule("/records/r2/type").as_deref(), Some("ASR-X-010"));
        assert_eq!(
            rule("/records/r2/parts/0/type").as_deref(),
            Some("ASR-X-021")
        );
        assert_eq!(rule("/records/r2/parts").as_deref(), Some("ASR-X-021"));
        assert_eq!(rule("/records/r9/originality"), None, "not in the stream");
        // A whole record: one the stream does not have, and the header, which is none.
        assert_eq!(rule("/records/r9").as_deref(), Some("ASR-X-009"));
        assert_eq!(rule("/records/h").as_deref(), Some("ASR-X-007"));
        assert_eq!(rule("/nonsense"), None);
        assert!(kinds.records.contains("p1") && !kinds.records.contains("h"));
    }

    #[test]
    fn a_reasoning_index_is_a_visibility_matter_unless_it_leaks() {
        let kinds = Kinds::of_stream(STREAM.as_bytes());
        let pointer = "/records/r1/parts/0/index";
        let text = serde_json::json!(["the reasoning text"]);
        assert_eq!(
            kinds.rule_of(pointer, Some(&text)).as_deref(),
            Some("ASR-215")
        );
        let summary = serde_json::json!(["s"]);
        assert_eq!(
            kinds.rule_of(pointer, Some(&summary)).as_deref(),
            Some("ASR-214")
        );
        assert_eq!(kinds.rule_of(pointer, None).as_deref(), Some("ASR-214"));
        assert_eq!(
            kinds.rule_of("/records/r1/parts/0/render", None).as_deref(),
            Some("ASR-220"),
            "a reasoning-only message"
        );
    }

    #[test]
    fn the_header_is_the_layouts_first_session_line_as_the_reader_places_it() {
        // A prompt before the header (inferred/ASR-X-007/n_header_after_message): the session
        // line is still the header, with its mirror; a second session line is a record.
        let stream = concat!(
            r#"{"type":"message","seq":0,"id":"r0","role":"user","content":[]}"#,
            "\n",
            r#"{"type":"session","seq":1,"id":"h","authority":"mirror"}"#,
            "\n",
            r#"{"type":"session","seq":2,"id":"h2"}"#,
            "\n",
        );
        let kinds = Kinds::of_stream(stream.as_bytes());
        let listed: BTreeSet<String> = crate::reading::read_bytes(stream.as_bytes())
            .reading
            .records
            .into_keys()
            .collect();
        assert_eq!(kinds.records, listed);
        assert_eq!(kinds.tags_of("h"), ["header"]);
        assert_eq!(kinds.tags_of("r0"), ["message", "mirror", "unknown"]);
        assert_eq!(kinds.tags_of("h2"), ["session", "mirror", "unknown"]);
        // A byte order mark before the header is read past, as the reader reads past it.
        let marked = [&b"\xEF\xBB\xBF"[..], STREAM.as_bytes()].concat();
        assert_eq!(
            Kinds::of_stream(&marked),
            Kinds::of_stream(STREAM.as_bytes())
        );
    }

    #[test]
    fn a_stream_that_is_no_stream_gives_no_kinds_and_no_panic() {
        let deep = format!("{}{}\n", "[".repeat(10_000), "]".repeat(10_000));
        for bytes in [
            &b""[..],
            b"not json\n{\"type\":",
            b"\xff\xfe\n[1,2]\n",
            deep.as_bytes(),
        ] {
            let kinds = Kinds::of_stream(bytes);
            assert!(kinds.records.is_empty());
            assert_eq!(kinds.rule("/session/root").as_deref(), Some("ASR-401"));
            assert_eq!(kinds.rule("/records/r1/originality"), None);
        }
    }

    #[test]
    fn members_the_reading_does_not_define_are_found() {
        let reading = serde_json::json!({
            "session": {"root": "no", "unresolved": [], "parent": "x"},
            "records": {"r1": {"type": "message", "superseded": false, "originality": "copy",
                "parts": [{"type": "text", "colour": "red"}], "score": 1}},
            "totals": {"ownRecords": [], "mayIncludeCopies": false},
            "extra": true
        });
        assert_eq!(
            undefined_members(&reading),
            [
                "/extra",
                "/records/r1/parts/0/colour",
                "/records/r1/score",
                "/session/parent"
            ]
        );
    }
}
