//! Findings: what the checker reports about a stream, as data.

use crate::rule::RuleId;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The most findings listed for one line: the parser, the schemas and the checks stop
/// looking past it.
pub const MAX_PER_LINE: usize = 100;

/// The most findings listed for one stream.
pub const MAX_PER_STREAM: usize = 10_000;

/// How much a finding weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Severity {
    /// A MUST or MUST NOT is broken: the stream is invalid.
    Error,
    /// A SHOULD is not followed, or something is likely wrong: the stream stays valid.
    Warning,
    /// Information that never makes a stream invalid (an unresolved lineage reference, ASR-406).
    Notice,
}

impl Severity {
    /// The lowercase name used in every output format.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Notice => "notice",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding about one place in a stream.
///
/// Its JSON form is an interface other tools read; the member names stay as they are:
///
/// ```json
/// {"rule": "ASR-402", "severity": "error", "line": 1, "seq": 0, "id": "h",
///  "pointer": "/lineage", "message": "..."}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Diagnostic {
    /// The rule broken: an ASR rule (`ASR-212`) or an inferred check (`ASR-X-003`) of the
    /// catalog.
    pub rule: RuleId,
    /// How much it weighs.
    pub severity: Severity,
    /// 1-based line of the stream.
    pub line: usize,
    /// The record's seq, when the line has an integer one.
    pub seq: Option<u64>,
    /// The record's id, when the line has a string one.
    pub id: Option<String>,
    /// JSON Pointer to the member at fault within the line's object (`""` for the whole line).
    pub pointer: String,
    /// What is wrong, and what the rule requires.
    pub message: String,
}

impl Diagnostic {
    /// Whether the rule is one of the kit's inferred structural checks rather than an ASR rule.
    pub fn is_inferred(&self) -> bool {
        is_inferred_rule(self.rule.as_str())
    }
}

/// Whether a rule id names one of the kit's inferred structural checks (`ASR-X-...`).
pub fn is_inferred_rule(rule: &str) -> bool {
    rule.starts_with("ASR-X-")
}

/// Appends a JSON Pointer reference token to `pointer`, escaping `~` and `/`.
pub fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// `base` with one more reference token.
pub fn pointer_join(base: &str, token: &str) -> String {
    let mut out = base.to_owned();
    push_token(&mut out, token);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostic_json_has_exactly_the_interface_members() {
        let d = Diagnostic {
            rule: crate::rule::ASR_402,
            severity: Severity::Error,
            line: 1,
            seq: Some(0),
            id: Some("h".into()),
            pointer: "/lineage".into(),
            message: "m".into(),
        };
        let json = serde_json::to_value(&d).expect("serializes");
        let keys: Vec<_> = json.as_object().expect("object").keys().cloned().collect();
        assert_eq!(
            keys,
            [
                "id", "line", "message", "pointer", "rule", "seq", "severity"
            ]
        );
        assert_eq!(json["severity"], "error");
        let back: Diagnostic = serde_json::from_value(json).expect("round trip");
        assert_eq!(back, d);
    }

    #[test]
    fn unknown_members_are_refused_when_reading_a_diagnostic() {
        let text = r#"{"rule":"ASR-1","severity":"error","line":1,"seq":null,"id":null,"pointer":"","message":"m","extra":1}"#;
        assert!(serde_json::from_str::<Diagnostic>(text).is_err());
    }

    #[test]
    fn pointer_tokens_are_escaped() {
        assert_eq!(pointer_join("/a", "b/c~d"), "/a/b~1c~0d");
    }
}
