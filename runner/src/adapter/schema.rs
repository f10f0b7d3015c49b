//! The protocol schemas, compiled once per command. Every reply an adapter sends is checked
//! against `reply.schema.json` by default, as it comes in (a reply it refuses is a protocol
//! error naming the member); with `--validate-protocol` every message both ways is, and a
//! reader's reading against `reading.schema.json` too.
//!
//! The schemas check a tree of the whole message, which takes several times the bytes of
//! the line: a reply over [`CHECKED_REPLY_BYTES`] (a reading of a long stream, an answer of
//! many thousands of findings) is checked by default only by the reply types, which refuse
//! unknown members and members of the wrong type just as well, and are read without a tree.

use anyhow::{Context, Result};
use serde_json::Value;
use std::collections::BTreeMap;

/// The longest reply checked against the schema by default; `--validate-protocol` checks
/// longer ones too.
pub const CHECKED_REPLY_BYTES: usize = 1 << 20;

/// What of the protocol's messages is checked against its schemas.
pub struct SchemaCheck {
    /// Every message, whatever its size, and readings against the reading schema.
    full: bool,
    request: jsonschema::Validator,
    reply: jsonschema::Validator,
    /// The reply schema's branch for each `type`, so that a reply of a known type is told
    /// what member of its own branch is wrong, not that it matches none of the branches.
    reply_of_type: BTreeMap<String, jsonschema::Validator>,
    reading: jsonschema::Validator,
}

impl SchemaCheck {
    /// The check of every command that talks to an adapter: replies against the reply
    /// schema; with `full` (`--validate-protocol`), every message of any size both ways,
    /// and readings against the reading schema.
    pub fn new(full: bool) -> Result<Self> {
        let reply = parsed("protocol/reply.schema.json")?;
        let mut reply_of_type = BTreeMap::new();
        for branch in reply
            .get("oneOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(kind) = branch
                .pointer("/properties/type/const")
                .and_then(Value::as_str)
            else {
                continue;
            };
            let mut schema = branch.clone();
            if let (Some(object), Some(root)) = (schema.as_object_mut(), reply.as_object()) {
                for key in ["$schema", "$defs"] {
                    if let Some(value) = root.get(key) {
                        object.insert(key.to_owned(), value.clone());
                    }
                }
            }
            reply_of_type.insert(kind.to_owned(), compile(&schema)?);
        }
        Ok(SchemaCheck {
            full,
            request: compile(&parsed("protocol/request.schema.json")?)?,
            reply: compile(&reply)?,
            reply_of_type,
            reading: compile(&parsed("reading.schema.json")?)?,
        })
    }

    /// Whether the kit's own requests are checked (with `--validate-protocol`).
    pub fn checks_requests(&self) -> bool {
        self.full
    }

    /// Whether a reply line of `len` bytes is checked against the schema.
    pub fn checks_reply(&self, len: usize) -> bool {
        self.full || len <= CHECKED_REPLY_BYTES
    }

    /// Problems of one message of the kit.
    pub fn request(&self, message: &Value) -> Vec<String> {
        self.request
            .iter_errors(message)
            .map(|e| problem(&e.to_string(), &e.instance_path().to_string()))
            .take(MAX_PROBLEMS)
            .collect()
    }

    /// Problems of one message of the adapter: at most a few, each naming where it is.
    pub fn reply(&self, message: &Value) -> Vec<String> {
        let schema = message
            .get("type")
            .and_then(Value::as_str)
            .and_then(|kind| self.reply_of_type.get(kind))
            .unwrap_or(&self.reply);
        let readings = message
            .get("streams")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .filter(|_| self.full)
            .filter_map(|(i, s)| s.get("reading").map(|r| (i, r)));
        // Most replies are valid: telling is paid for only by those that are not.
        if schema.is_valid(message) && readings.clone().all(|(_, r)| self.reading.is_valid(r)) {
            return Vec::new();
        }
        schema
            .iter_errors(message)
            .map(|e| problem(&e.to_string(), &e.instance_path().to_string()))
            .chain(readings.flat_map(|(i, reading)| {
                self.reading.iter_errors(reading).map(move |e| {
                    problem(
                        &e.to_string(),
                        &format!("/streams/{i}/reading{}", e.instance_path()),
                    )
                })
            }))
            .take(MAX_PROBLEMS)
            .fold(Vec::new(), |mut problems, problem| {
                // A reading that is no object breaks both schemas in the same words.
                if !problems.contains(&problem) {
                    problems.push(problem);
                }
                problems
            })
    }
}

/// The problems of one message told; the rest are of the same message.
const MAX_PROBLEMS: usize = 5;

/// The longest description of one problem: a validator quotes the value it refuses, and a
/// value can be a whole stream entry.
const MAX_PROBLEM_CHARS: usize = 300;

/// One problem and where it is, cut to [`MAX_PROBLEM_CHARS`].
fn problem(what: &str, at: &str) -> String {
    let what = match what.char_indices().nth(MAX_PROBLEM_CHARS) {
        Some((end, _)) => format!("{}...", &what[..end]),
        None => what.to_owned(),
    };
    if at.is_empty() {
        format!("{what} at the top level")
    } else {
        format!("{what} at {at}")
    }
}

fn parsed(name: &str) -> Result<Value> {
    serde_json::from_str(crate::corpus::embedded_schema(name)?)
        .with_context(|| format!("the kit's schema {name} is not JSON"))
}

fn compile(schema: &Value) -> Result<jsonschema::Validator> {
    jsonschema::validator_for(schema)
        .map_err(|e| anyhow::anyhow!("failed to compile a protocol schema: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check() -> SchemaCheck {
        SchemaCheck::new(false).expect("the kit's schemas compile")
    }

    #[test]
    fn a_member_a_diagnostic_does_not_have_is_named_with_its_place() {
        let reply = serde_json::json!({"type": "answered", "seq": 1, "streams": [
            {"valid": false, "diagnostics": [
                {"rule": "ASR-212", "severity": "error", "line": 2, "hint": "x"}]}]});
        let problems = check().reply(&reply);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("'hint'"), "{problems:?}");
        assert!(
            problems[0].ends_with("at /streams/0/diagnostics/0"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_reading_that_is_no_object_is_refused_and_its_members_only_in_full() {
        let reply = |reading: Value| {
            serde_json::json!({"type": "answered", "seq": 1,
                "streams": [{"valid": true, "reading": reading}]})
        };
        let problems = check().reply(&reply(serde_json::json!(5)));
        assert!(
            problems
                .iter()
                .any(|p| p.ends_with("at /streams/0/reading")),
            "{problems:?}"
        );
        let odd = reply(serde_json::json!({"zzz": 1}));
        assert!(check().reply(&odd).is_empty());
        let full = SchemaCheck::new(true).expect("the kit's schemas compile");
        assert!(
            full.reply(&odd)
                .iter()
                .any(|p| p.contains("/streams/0/reading")),
            "{:?}",
            full.reply(&odd)
        );
    }

    #[test]
    fn right_replies_pass_and_long_ones_are_left_to_the_types_by_default() {
        for reply in [
            serde_json::json!({"type": "answered", "seq": 3, "streams": [{"valid": true}]}),
            serde_json::json!({"type": "skipped", "reason": "no"}),
            serde_json::json!({"type": "stopped"}),
        ] {
            assert!(check().reply(&reply).is_empty(), "{reply}");
        }
        assert!(
            !check()
                .reply(&serde_json::json!({"type": "nonsense"}))
                .is_empty()
        );
        assert!(check().checks_reply(CHECKED_REPLY_BYTES));
        assert!(!check().checks_reply(CHECKED_REPLY_BYTES + 1));
        assert!(!check().checks_requests());
        let full = SchemaCheck::new(true).expect("the kit's schemas compile");
        assert!(full.checks_reply(usize::MAX) && full.checks_requests());
    }
}
