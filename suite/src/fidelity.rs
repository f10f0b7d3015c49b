//! Fidelity assertions: what a producer's output must say of the source it converted, each
//! tagged with the rule that binds it (`schemas/fidelity.schema.json`). An assertion
//! selects records of the output (by type, and by members of given values), then checks one
//! member of each by JSON Pointer, or counts them.
//!
//! A message's parts are seen with their effective author, origin and phase (ASR-224: "A
//! part's own value applies to that part; the message's value applies only to the parts
//! that do not carry one."): a pointer into a part (`/content/0/author`), a `where` on one,
//! and the parts `parts` selects hold the part's own value, else the message's, as
//! [`crate::model::with_effective_parts`] fills them in. The record itself (`/author`) is
//! as written.
//!
//! ```
//! use asr_suite::fidelity::{Assertion, Source, evaluate};
//!
//! let assertions: Vec<Assertion> = serde_json::from_str(r#"[
//!   {"rule": "ASR-211",
//!    "select": {"type": ["message"], "where": {"/messageId": "u1"}},
//!    "pointer": "/content/0/text",
//!    "check": {"equalsSource": {"file": "session.jsonl", "line": 1, "pointer": "/message/content"}}},
//!   {"rule": "ASR-202",
//!    "select": {"type": ["message"], "where": {"/messageId": "h1"}},
//!    "pointer": "/author",
//!    "check": {"oneOfOrAbsent": ["harness", "hook"]}},
//!   {"rule": "ASR-219", "select": {"type": ["message"], "where": {"/messageId": "rs_1"}},
//!    "check": {"count": {"min": 1, "max": 1}}}
//! ]"#).expect("assertions");
//! let source = Source::from_files(vec![(
//!     "session.jsonl".to_owned(),
//!     br#"{"type":"user","message":{"content":"  Fix the parser.\r\n"}}"#.to_vec(),
//! )]);
//! let output = concat!(
//!     r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1"}"#, "\n",
//!     r#"{"type":"message","seq":1,"id":"r1","messageId":"u1","role":"user","content":[{"type":"text","text":"Fix the parser."}]}"#, "\n",
//!     r#"{"type":"message","seq":2,"id":"r2","messageId":"h1","role":"user","author":"human","content":[{"type":"text","text":"hook ran"}]}"#, "\n",
//! );
//! let failures = evaluate(&assertions, &[("", output.as_bytes())], &source);
//! let rules: Vec<&str> = failures.iter().map(|f| f.rule.as_str()).collect();
//! // Trimmed text, a human author on a hook's output, a reasoning item lost.
//! assert_eq!(rules, ["ASR-211", "ASR-202", "ASR-219"]);
//! ```

use crate::json::same;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// One assertion on a producer's output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Assertion {
    /// The rule (or inferred check) that binds what is asserted.
    pub rule: String,
    /// The records it is about; every record of every output stream when absent.
    #[serde(default)]
    pub select: Select,
    /// The member checked, a JSON Pointer into each selected record (`""` for the record);
    /// not used by `count`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// What must hold.
    pub check: Check,
    /// The check binds the selected records if there are any: selecting none is no failure
    /// (where the producer may leave the thing out, and binds how it keeps it if it does).
    #[serde(default, rename = "ifAny", skip_serializing_if = "std::ops::Not::not")]
    pub if_any: bool,
    /// Why, for people: the source fact the assertion rests on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Which records of the output an assertion is about.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Select {
    /// The output stream, by name (`""` for the one unnamed stream); every stream when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// Record types, any of them (`session` selects the header); every type when empty.
    #[serde(default, rename = "type", skip_serializing_if = "Vec::is_empty")]
    pub types: Vec<String>,
    /// Members the record must have, by JSON Pointer, with these exact values.
    #[serde(default, rename = "where", skip_serializing_if = "BTreeMap::is_empty")]
    pub members: BTreeMap<String, Value>,
    /// Select the parts of the records' `content` of these part types instead of the
    /// records (the pointer is then into each part): where a producer may order parts as
    /// it likes, an assertion names the part by its type, not its index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<Vec<String>>,
}

/// What must hold of the selected records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum Check {
    /// The member equals this value (JSON types kept apart).
    Equals(Value),
    /// The member equals a member of the source: exactly the value the source stored
    /// (ASR-211: no trimming, reflowing, normalization or line-ending conversion).
    EqualsSource(SourcePlace),
    /// The member differs from this value (or is absent).
    NotEquals(Value),
    /// The member is one of these values: where the spec leaves the producer a choice, every
    /// allowed answer is listed.
    OneOf(Vec<Value>),
    /// The member is one of these values, or absent.
    OneOfOrAbsent(Vec<Value>),
    /// The member is absent.
    Absent,
    /// The member is present.
    Present,
    /// The number of selected records is within bounds.
    Count(Bounds),
}

/// Bounds on a count, both inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bounds {
    /// At least this many.
    #[serde(default)]
    pub min: usize,
    /// At most this many (no bound when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<usize>,
}

/// A member of the source: a file of the fixture, a line of it (1-based; absent for a file
/// that is one JSON document), and a JSON Pointer into that line's value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourcePlace {
    /// The file's name within the fixture.
    pub file: String,
    /// The 1-based line of a JSON-lines file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The member, a JSON Pointer.
    pub pointer: String,
}

impl fmt::Display for SourcePlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}{}", self.file, self.pointer),
            None => write!(f, "{}{}", self.file, self.pointer),
        }
    }
}

/// The files of a source fixture, by name.
#[derive(Debug, Clone, Default)]
pub struct Source {
    /// Sorted by name, each name once.
    files: Vec<(String, Vec<u8>)>,
}

impl Source {
    /// A source of these files (name, bytes).
    pub fn from_files(files: Vec<(String, Vec<u8>)>) -> Self {
        let files: BTreeMap<String, Vec<u8>> = files.into_iter().collect();
        Source {
            files: files.into_iter().collect(),
        }
    }

    /// The files, by name.
    pub fn files(&self) -> &[(String, Vec<u8>)] {
        &self.files
    }

    /// The value at a place of the source, or why there is none.
    pub fn value_at(&self, place: &SourcePlace) -> Result<Value, String> {
        let bytes = self
            .files
            .iter()
            .find(|(name, _)| *name == place.file)
            .map(|(_, bytes)| bytes)
            .ok_or_else(|| format!("the source has no file {:?}", place.file))?;
        let text = match place.line {
            Some(line) => crate::lines::split(bytes)
                .with_final_empty()
                .bytes()
                .nth(line.checked_sub(1).ok_or("line 0 is no line")?)
                .ok_or_else(|| format!("{} has no line {line}", place.file))?,
            None => bytes.as_slice(),
        };
        let value: Value =
            serde_json::from_slice(text).map_err(|e| format!("{place} is not in JSON: {e}"))?;
        value
            .pointer(&place.pointer)
            .cloned()
            .ok_or_else(|| format!("the source has no member {place}"))
    }
}

/// An assertion that does not hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AssertionFailure {
    /// The rule the assertion is tagged with.
    pub rule: String,
    /// The assertion's index in its list.
    pub assertion: usize,
    /// The output stream of the record (`""` for the one unnamed stream), when one is at fault.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// The record at fault, by id (or line when it has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
    /// The member checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// What is wrong, in one sentence.
    pub message: String,
    /// The assertion's note: why the kit demands what failed, the source fact it rests on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl fmt::Display for AssertionFailure {
    /// The failure as a vendor reads it in a report: `ASR-203 (assertion 2), record r4 in
    /// stream "child" at "/author": must not be "human"; why: <the assertion's note>`. The
    /// stream is named when it has a name, that is, when the output has several: a failure
    /// that names none is in the one unnamed stream.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (assertion {})", self.rule, self.assertion + 1)?;
        if let Some(record) = &self.record {
            write!(f, ", record {record}")?;
        }
        if let Some(stream) = self.stream.as_deref().filter(|s| !s.is_empty()) {
            write!(f, " in stream {stream:?}")?;
        }
        if let Some(pointer) = &self.pointer {
            write!(f, " at {pointer:?}")?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(note) = &self.note {
            write!(f, "; why: {note}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Select {
    /// The selection in words: `messages where /messageId = "m1", their text parts`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.types.is_empty() {
            write!(f, "records")?;
        } else {
            write!(f, "{} records", self.types.join(" or "))?;
        }
        if let Some(stream) = &self.stream {
            write!(f, " of stream {stream:?}")?;
        }
        for (i, (pointer, value)) in self.members.iter().enumerate() {
            let value = value.to_string();
            let shown: String = value.chars().take(80).collect();
            let cut = if shown.len() < value.len() { "..." } else { "" };
            let joint = if i == 0 { " where" } else { " and" };
            write!(f, "{joint} {pointer} = {shown}{cut}")?;
        }
        if let Some(parts) = &self.parts {
            write!(f, ", their {} parts", parts.join(" or "))?;
        }
        Ok(())
    }
}

/// One record of the output, where it stands.
struct Found<'a> {
    stream: &'a str,
    name: String,
    value: Value,
}

/// Evaluates every assertion on the output streams (name, bytes), against the source.
/// A member check fails for each selected record it does not hold for, and when it selects
/// none; lines of the output that are not JSON objects are no records (the stream checker
/// reports them).
pub fn evaluate(
    assertions: &[Assertion],
    streams: &[(&str, &[u8])],
    source: &Source,
) -> Vec<AssertionFailure> {
    let records: Vec<Found<'_>> = streams
        .iter()
        .flat_map(|(stream, bytes)| {
            records(bytes).map(move |(number, value)| Found {
                stream,
                name: value
                    .get("id")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("on line {number}"), str::to_owned),
                value,
            })
        })
        .collect();
    let mut failures = Vec::new();
    for (index, assertion) in assertions.iter().enumerate() {
        let selected: Vec<Found<'_>> = records
            .iter()
            .filter(|r| selects(&assertion.select, r))
            .flat_map(|r| units(&assertion.select, r))
            .collect();
        let fail = |record: Option<&Found<'_>>, message: String| AssertionFailure {
            rule: assertion.rule.clone(),
            assertion: index,
            stream: record.map(|r| r.stream.to_owned()),
            record: record.map(|r| r.name.clone()),
            pointer: assertion.pointer.clone(),
            message,
            note: assertion.note.clone(),
        };
        if let Check::Count(bounds) = &assertion.check {
            let n = selected.len();
            if n < bounds.min || bounds.max.is_some_and(|max| n > max) {
                failures.push(fail(
                    None,
                    format!(
                        "selects {n} record(s) ({}); {}",
                        assertion.select,
                        bounds_text(*bounds)
                    ),
                ));
            }
            continue;
        }
        if selected.is_empty() {
            if !assertion.if_any {
                failures.push(fail(
                    None,
                    format!("selects no record of the output ({})", assertion.select),
                ));
            }
            continue;
        }
        let pointer = assertion.pointer.as_deref().unwrap_or("");
        for record in &selected {
            let member = record.value.pointer(pointer);
            if let Some(message) = check(&assertion.check, member, source) {
                failures.push(fail(Some(record), message));
            }
        }
    }
    failures
}

/// The records of an output stream as assertions see them, with their line numbers: each
/// line that is a JSON object, a message's parts holding the author, origin and phase that
/// apply to them ([`crate::model::with_effective_parts`]).
pub(crate) fn records(bytes: &[u8]) -> impl Iterator<Item = (usize, Value)> + '_ {
    crate::lines::split(bytes).filter_map(|(number, line)| {
        let value: Value = serde_json::from_slice(line).ok()?;
        value
            .is_object()
            .then(|| (number, crate::model::with_effective_parts(&value)))
    })
}

/// What an assertion checks of a selected record: the record, or its parts of the types
/// the selection names (each named `<record>/content/<index>`).
fn units<'a>(select: &Select, record: &Found<'a>) -> Vec<Found<'a>> {
    let Some(kinds) = &select.parts else {
        return vec![Found {
            stream: record.stream,
            name: record.name.clone(),
            value: record.value.clone(),
        }];
    };
    record
        .value
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, part)| {
            part.get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| kinds.iter().any(|k| k == t))
        })
        .map(|(n, part)| Found {
            stream: record.stream,
            name: format!("{}/content/{n}", record.name),
            value: part.clone(),
        })
        .collect()
}

fn selects(select: &Select, record: &Found<'_>) -> bool {
    select.stream.as_deref().is_none_or(|s| s == record.stream)
        && (select.types.is_empty()
            || record
                .value
                .get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| select.types.iter().any(|k| k == t)))
        && select.members.iter().all(|(pointer, want)| {
            record
                .value
                .pointer(pointer)
                .is_some_and(|got| same(got, want))
        })
}

/// Why `member` fails `check`, or `None` when it holds.
fn check(check: &Check, member: Option<&Value>, source: &Source) -> Option<String> {
    let shown = |v: Option<&Value>| v.map_or_else(|| "nothing".to_owned(), Value::to_string);
    match check {
        Check::Equals(want) => (!member.is_some_and(|got| same(got, want)))
            .then(|| format!("expected {want}, found {}", shown(member))),
        Check::EqualsSource(place) => match source.value_at(place) {
            Err(why) => Some(format!("the assertion's source member is wrong: {why}")),
            Ok(want) => (!member.is_some_and(|got| same(got, &want))).then(|| {
                format!(
                    "expected exactly what the source stores at {place}, {want}; found {}",
                    shown(member)
                )
            }),
        },
        Check::NotEquals(unwanted) => member
            .filter(|got| same(got, unwanted))
            .map(|_| format!("must not be {unwanted}")),
        Check::OneOf(values) | Check::OneOfOrAbsent(values) => {
            let absent_allowed = matches!(check, Check::OneOfOrAbsent(_));
            match member {
                None if absent_allowed => None,
                Some(got) if values.iter().any(|v| same(got, v)) => None,
                _ => Some(format!(
                    "expected one of {}{}, found {}",
                    Value::Array(values.clone()),
                    if absent_allowed { " or nothing" } else { "" },
                    shown(member)
                )),
            }
        }
        Check::Absent => member.map(|got| format!("must be absent, found {got}")),
        Check::Present => member.is_none().then(|| "must be present".to_owned()),
        Check::Count(_) => None,
    }
}

fn bounds_text(bounds: Bounds) -> String {
    match bounds.max {
        Some(max) if max == bounds.min => format!("expected exactly {max}"),
        Some(max) => format!("expected {} to {max}", bounds.min),
        None => format!("expected at least {}", bounds.min),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const OUTPUT: &str = concat!(
        r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","lineage":{"inherits":{"mode":"none","evidence":"native_field"}}}"#,
        "\n",
        r#"{"type":"message","seq":1,"id":"r1","messageId":"u1","role":"user","author":"human","content":[{"type":"text","text":"a\r\nb "}]}"#,
        "\n",
        r#"{"type":"message","seq":2,"id":"r2","messageId":"a1","role":"assistant","author":"model","content":[{"type":"text","text":"ok"}]}"#,
        "\n",
        "not json\n",
    );

    fn source() -> Source {
        Source::from_files(vec![(
            "s.jsonl".into(),
            b"{\"text\":\"a\\r\\nb \"}\n{\"text\":\"a\\nb\"}\n".to_vec(),
        )])
    }

    fn run(assertion: Value) -> Vec<AssertionFailure> {
        let assertion: Assertion = serde_json::from_value(assertion).expect("an assertion");
        evaluate(&[assertion], &[("", OUTPUT.as_bytes())], &source())
    }

    #[test]
    fn each_check_holds_on_a_right_output_and_fails_on_a_wrong_one() {
        let user = json!({"type": ["message"], "where": {"/messageId": "u1"}});
        let pairs = [
            (
                json!({"equalsSource": {"file": "s.jsonl", "line": 1, "pointer": "/text"}}),
                json!({"equalsSource": {"file": "s.jsonl", "line": 2, "pointer": "/text"}}),
            ),
            (json!({"equals": "a\r\nb "}), json!({"equals": "a\nb"})),
            (
                json!({"notEquals": "a\nb"}),
                json!({"notEquals": "a\r\nb "}),
            ),
            (json!({"oneOf": ["x", "a\r\nb "]}), json!({"oneOf": ["x"]})),
            (json!("present"), json!("absent")),
        ];
        for (right, wrong) in pairs {
            let at = |check: &Value| json!({"rule": "ASR-211", "select": user, "pointer": "/content/0/text", "check": check});
            assert_eq!(run(at(&right)), Vec::new(), "{right}");
            let failed = run(at(&wrong));
            assert_eq!(failed.len(), 1, "{wrong}");
            assert_eq!(failed[0].rule, "ASR-211");
            assert_eq!(failed[0].record.as_deref(), Some("r1"));
            assert_eq!(failed[0].pointer.as_deref(), Some("/content/0/text"));
        }
    }

    #[test]
    fn a_part_is_seen_with_the_author_it_takes_from_its_message() {
        // r1's part carries no author: the message's, human, applies to it (ASR-224).
        let at_part = |select: Value, pointer: &str, check: Value| {
            run(json!({"rule": "ASR-224", "select": select, "pointer": pointer, "check": check}))
        };
        let user = json!({"type": ["message"], "where": {"/messageId": "u1"}});
        assert!(
            at_part(
                user.clone(),
                "/content/0/author",
                json!({"equals": "human"})
            )
            .is_empty()
        );
        assert_eq!(
            at_part(user, "/content/0/author", json!("absent")).len(),
            1,
            "the part's effective author is there"
        );
        let parts = json!({"type": ["message"], "parts": ["text"]});
        let failed = at_part(parts, "/author", json!({"notEquals": "human"}));
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].record.as_deref(), Some("r1/content/0"));
        // A `where` on a part sees the effective value too; the record's own members as written.
        let by_part = json!({"type": ["message"], "where": {"/content/0/author": "model"}});
        let found = at_part(by_part, "/messageId", json!({"equals": "a1"}));
        assert!(found.is_empty(), "{found:?}");
        let plain = json!({"type": ["message"], "where": {"/messageId": "u1"}});
        assert!(at_part(plain, "/content/0/origin", json!("absent")).is_empty());
    }

    #[test]
    fn a_choice_the_spec_leaves_open_accepts_every_allowed_answer() {
        let hook = |check: Value| {
            json!({"rule": "ASR-202", "select": {"type": ["message"], "where": {"/messageId": "u1"}},
                   "pointer": "/origin", "check": check})
        };
        assert!(run(hook(json!({"oneOfOrAbsent": ["hook"]}))).is_empty());
        assert_eq!(run(hook(json!({"oneOf": ["hook"]}))).len(), 1);
    }

    #[test]
    fn member_checks_fail_for_each_record_and_for_an_empty_selection() {
        let every_author = json!({"rule": "ASR-202", "select": {"type": ["message"]},
                                  "pointer": "/author", "check": {"notEquals": "human"}});
        let failed = run(every_author);
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].record.as_deref(), Some("r1"));
        let nothing = run(
            json!({"rule": "ASR-219", "select": {"type": ["message"], "where": {"/messageId": "rs_9"}},
                                 "pointer": "/content", "check": "present"}),
        );
        assert!(
            nothing[0]
                .message
                .starts_with("selects no record of the output (message records where"),
            "{}",
            nothing[0].message
        );
    }

    #[test]
    fn counts_and_stream_level_assertions() {
        let deliveries = json!({"rule": "ASR-237", "select": {"type": ["delivery"]},
                                "check": {"count": {"max": 0}}});
        assert!(run(deliveries).is_empty());
        let messages = run(
            json!({"rule": "ASR-219", "select": {"type": ["message", "plan"]},
                                  "check": {"count": {"min": 3}}}),
        );
        assert_eq!(
            messages[0].message,
            "selects 2 record(s) (message or plan records); expected at least 3"
        );
        let no_parent = json!({"rule": "ASR-403", "select": {"type": ["session", "declaration"]},
                               "pointer": "/lineage/spawnedBy", "check": "absent"});
        assert!(run(no_parent).is_empty());
        let inherits = run(json!({"rule": "ASR-403", "select": {"type": ["session"]},
                                  "pointer": "/lineage/inherits", "check": "absent"}));
        assert_eq!(inherits[0].record.as_deref(), Some("h"));
    }

    #[test]
    fn parts_are_selected_by_type_not_by_index() {
        let text_parts = |check: Value| {
            json!({"rule": "ASR-211", "select": {"type": ["message"], "parts": ["text"]},
                   "pointer": "/text", "check": check})
        };
        assert!(run(text_parts(json!("present"))).is_empty());
        let failed = run(text_parts(json!({"equals": "ok"})));
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].record.as_deref(), Some("r1/content/0"));
        let none = run(
            json!({"rule": "ASR-214", "select": {"parts": ["reasoning"]},
                              "pointer": "/visibility", "check": "present"}),
        );
        assert!(
            none[0]
                .message
                .starts_with("selects no record of the output (")
        );
        let if_any = run(
            json!({"rule": "ASR-214", "select": {"parts": ["reasoning"]},
                                "pointer": "/visibility", "check": "present", "ifAny": true}),
        );
        assert!(if_any.is_empty(), "nothing selected binds nothing");
    }

    #[test]
    fn a_wrong_source_place_is_said_not_hidden() {
        let wrong = run(
            json!({"rule": "ASR-211", "select": {"type": ["message"]}, "pointer": "/content/0/text",
                               "check": {"equalsSource": {"file": "missing.jsonl", "line": 1, "pointer": "/text"}}}),
        );
        assert!(
            wrong
                .iter()
                .all(|f| f.message.contains("no file \"missing.jsonl\""))
        );
    }

    #[test]
    fn the_schema_and_the_types_accept_the_same_assertions() {
        let schema: Value = serde_json::from_str(
            crate::embedded::schema("fidelity.schema.json").expect("embedded"),
        )
        .expect("JSON");
        let validator = jsonschema::validator_for(&schema).expect("a schema");
        let samples = [
            json!({"rule": "ASR-211", "check": "absent"}),
            json!({"rule": "ASR-211", "select": {"stream": "", "type": ["message"], "where": {"/messageId": "m"}},
                   "pointer": "/content/0/text", "check": {"equalsSource": {"file": "a.jsonl", "line": 2, "pointer": "/text"}},
                   "note": "the source's text"}),
            json!({"rule": "ASR-X-017", "check": {"count": {"min": 1, "max": 2}}}),
            json!({"rule": "ASR-202", "pointer": "/author", "check": {"oneOfOrAbsent": ["hook"]}}),
            json!({"rule": "ASR-202", "pointer": "/author", "check": {"notEquals": "human"}}),
            json!({"rule": "ASR-211", "check": "maybe"}),
            json!({"rule": "ASR-211", "check": {"equals": 1, "notEquals": 2}}),
            json!({"rule": "ASR-211", "check": "absent", "colour": "red"}),
            json!({"rule": "ASR-211", "select": {"type": "message"}, "check": "absent"}),
            json!({"rule": "ASR-211", "check": {"equalsSource": {"file": "a", "pointer": "/x", "column": 3}}}),
            json!({"check": "absent"}),
        ];
        for sample in samples {
            let by_schema = validator.is_valid(&json!([sample]));
            let by_types = serde_json::from_value::<Assertion>(sample.clone()).is_ok();
            assert_eq!(by_schema, by_types, "{sample}");
        }
    }

    #[test]
    fn a_failure_says_why_and_in_which_stream() {
        let assertion: Assertion = serde_json::from_value(json!({
            "rule": "ASR-202", "select": {"type": ["message"], "where": {"/messageId": "u1"}},
            "pointer": "/author", "check": {"notEquals": "human"},
            "note": "the source marks the prompt as a hook's output"}))
        .expect("an assertion");
        let header = r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1"}"#;
        let child = format!("{header}\n{}\n", OUTPUT.lines().nth(1).expect("a line"));
        let failures = evaluate(
            std::slice::from_ref(&assertion),
            &[("parent", header.as_bytes()), ("child", child.as_bytes())],
            &source(),
        );
        assert_eq!(failures.len(), 1);
        let shown = failures[0].to_string();
        assert_eq!(
            shown,
            "ASR-202 (assertion 1), record r1 in stream \"child\" at \"/author\": must not be \"human\"; why: the source marks the prompt as a hook's output"
        );
        // One unnamed stream: no stream to name.
        let alone = evaluate(&[assertion], &[("", OUTPUT.as_bytes())], &source());
        let shown = alone[0].to_string();
        assert!(!shown.contains("stream"), "{shown}");
        assert!(shown.ends_with("; why: the source marks the prompt as a hook's output"));
        // An assertion without a note says only what is wrong.
        let bare = run(json!({"rule": "ASR-237", "select": {"type": ["message"]},
                              "check": {"count": {"max": 0}}}));
        assert_eq!(bare[0].note, None);
        assert!(!bare[0].to_string().contains("why:"), "{}", bare[0]);
    }

    #[test]
    fn the_wire_form_is_strict() {
        let unknown = serde_json::from_value::<Assertion>(
            json!({"rule": "ASR-211", "check": "absent", "colour": "red"}),
        );
        assert!(unknown.is_err());
        let bad_check =
            serde_json::from_value::<Assertion>(json!({"rule": "ASR-211", "check": "maybe"}));
        assert!(bad_check.is_err());
    }
}
