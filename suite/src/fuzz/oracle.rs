//! The reference as the oracle: what an implementation's answer on a generated or mutated
//! stream should have been, and how it differs.
//!
//! ```
//! use asr_suite::fuzz::oracle::{Expected, Kind, judge_validator};
//! use asr_suite::protocol::StreamAnswer;
//!
//! let rejected: StreamAnswer = serde_json::from_str(
//!     r#"{"valid":false,"diagnostics":[{"rule":"ASR-206","severity":"error","line":3}]}"#,
//! ).expect("an answer");
//! let found = judge_validator(&Expected::Valid, &rejected).expect("a disagreement");
//! assert_eq!((found.kind, found.rule.as_str()), (Kind::OverStrict, "ASR-206"));
//! ```

use crate::check::{CheckOptions, check_bytes};
use crate::diagnostic::Severity;
use crate::judge::members::Kinds;
use crate::judge::{UNATTRIBUTED, diff_readings};
use crate::protocol::{ReadingAnswer, StreamAnswer};
use crate::reading::{ReadOutcome, read_bytes};
use crate::rule::RuleId;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What the reference makes of a stream given to a validator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// Valid: every validator must accept it.
    Valid,
    /// Broken under `rule`: every validator must reject it, citing that rule.
    Broken {
        /// The rule broken.
        rule: RuleId,
    },
}

/// How an implementation disagrees with the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// It rejected what the spec allows.
    OverStrict,
    /// It accepted what a rule forbids, or rejected it under another rule.
    Lenient,
    /// Its reading differs from the reference's.
    Reading,
    /// It did not answer: it crashed, hung, or broke the protocol.
    Fault,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::OverStrict => "over-strict",
            Kind::Lenient => "lenient",
            Kind::Reading => "reading",
            Kind::Fault => "fault",
        })
    }
}

/// One disagreement: its kind, the rule it is filed under, and what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    /// Its kind.
    pub kind: Kind,
    /// The rule it is filed under ([`UNATTRIBUTED`] when none applies).
    pub rule: String,
    /// What happened, in words.
    pub detail: String,
}

impl Disagreement {
    /// The same disagreement (kind and rule), whatever the words: what shrinking keeps.
    pub fn same(&self, other: &Disagreement) -> bool {
        self.kind == other.kind && self.rule == other.rule
    }
}

/// The reference validator's expectation for a stream: valid, broken under the first rule it
/// reports at error level, or `None` when it is broken under none (warnings only count as valid).
pub fn expected_of(stream: &[u8]) -> Expected {
    let report = check_bytes(stream, &CheckOptions::default());
    match report
        .diagnostics
        .iter()
        .find(|d| d.severity == Severity::Error)
    {
        None => Expected::Valid,
        Some(d) => Expected::Broken { rule: d.rule },
    }
}

/// Whether the reference reports `rule` at error level on a stream.
pub fn reference_reports(stream: &[u8], rule: &str) -> bool {
    check_bytes(stream, &CheckOptions::default())
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error && d.rule == rule)
}

/// Whether the reference's findings on `streams`, checked together, fit a case of the
/// corpus: none under another rule than `rule`, of any severity, but notices under the rules
/// of `notices` (those the streams had before they were shrunk: shrinking must not bring in a
/// finding, a notice included, that the case would then expect of every implementation);
/// and, when a rule is given, that rule at error level. Shrunk streams that keep to this are
/// a `y_` or an `n_` case that the corpus's lints accept.
pub fn fits_a_case(
    streams: &[&[u8]],
    rule: Option<&str>,
    notices: &std::collections::BTreeSet<String>,
) -> bool {
    let reports = reports(streams);
    let findings = || reports.iter().flat_map(|r| r.diagnostics.iter());
    let allowed = |d: &&crate::diagnostic::Diagnostic| {
        Some(d.rule.as_str()) == rule
            || (d.severity == Severity::Notice
                && d.rule != crate::rule::ASR_412.as_str()
                && notices.contains(d.rule.as_str()))
    };
    let outside = findings().any(|d| !allowed(&d));
    let broken =
        rule.is_none_or(|rule| findings().any(|d| d.severity == Severity::Error && d.rule == rule));
    !outside && broken
}

/// The rules of the reference's notices on `streams`, checked together.
pub fn notice_rules(streams: &[&[u8]]) -> std::collections::BTreeSet<String> {
    reports(streams)
        .iter()
        .flat_map(|r| r.diagnostics.iter())
        .filter(|d| d.severity == Severity::Notice)
        .map(|d| d.rule.as_str().to_owned())
        .collect()
}

fn reports(streams: &[&[u8]]) -> Vec<crate::check::StreamReport> {
    let options = CheckOptions::default();
    let mut reports: Vec<_> = streams.iter().map(|s| check_bytes(s, &options)).collect();
    crate::check::check_related(&mut reports, &options);
    reports
}

/// How a validator's answer differs from what was expected, if it does.
pub fn judge_validator(expected: &Expected, answer: &StreamAnswer) -> Option<Disagreement> {
    let errors: Vec<_> = answer
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    match expected {
        Expected::Valid => {
            if answer.valid && errors.is_empty() {
                return None;
            }
            let (rule, detail) = match errors.first() {
                Some(d) => (
                    d.rule.clone(),
                    format!(
                        "rejected a valid stream: {} at line {}{}",
                        d.rule,
                        d.line,
                        d.message
                            .as_deref()
                            .map(|m| format!(": {m}"))
                            .unwrap_or_default()
                    ),
                ),
                None => (
                    UNATTRIBUTED.to_owned(),
                    "rejected a valid stream without a finding".to_owned(),
                ),
            };
            Some(Disagreement {
                kind: Kind::OverStrict,
                rule,
                detail,
            })
        }
        Expected::Broken { rule } => {
            if !answer.valid && errors.iter().any(|d| d.rule == rule.as_str()) {
                return None;
            }
            let detail = if answer.valid || errors.is_empty() {
                format!("accepted a stream that breaks {rule}")
            } else {
                let cited: Vec<&str> = errors.iter().map(|d| d.rule.as_str()).collect();
                format!(
                    "rejected a stream that breaks {rule} under {} only",
                    cited.join(", ")
                )
            };
            Some(Disagreement {
                kind: Kind::Lenient,
                rule: rule.to_string(),
                detail,
            })
        }
    }
}

/// The reference reader's outcome on a stream.
pub fn reference_reading(stream: &[u8]) -> ReadOutcome {
    read_bytes(stream)
}

/// How a reader's answer on `stream` differs from the reference's reading, member by member,
/// each under the rule its member comes from.
pub fn judge_reader(
    stream: &[u8],
    reference: &ReadOutcome,
    answer: &StreamAnswer,
) -> Vec<Disagreement> {
    let mut found = Vec::new();
    if answer.valid != reference.accepted {
        found.push(Disagreement {
            kind: Kind::Reading,
            rule: UNATTRIBUTED.to_owned(),
            detail: format!(
                "{} a stream the reference {}",
                if answer.valid { "accepted" } else { "refused" },
                if reference.accepted {
                    "accepts"
                } else {
                    "refuses"
                }
            ),
        });
    }
    let expected = serde_json::to_value(&reference.reading).unwrap_or_default();
    let null = serde_json::Value::Null;
    let actual = answer.reading.as_ref().map_or(&null, ReadingAnswer::json);
    // A reading that differs only on a decision of the kit is not wrong: no disagreement.
    for mismatch in diff_readings(&expected, actual, &Kinds::of_stream(stream))
        .into_iter()
        .filter(|m| m.decision.is_none())
    {
        found.push(Disagreement {
            kind: Kind::Reading,
            rule: mismatch.rule.clone(),
            detail: mismatch.to_string(),
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(text: &str) -> StreamAnswer {
        serde_json::from_str(text).expect("an answer")
    }

    #[test]
    fn a_case_fits_only_with_no_finding_beyond_its_rule() {
        let header = r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"codex"},"sessionId":"s1"}"#;
        let valid = format!("{header}\n");
        let none = std::collections::BTreeSet::new();
        assert!(fits_a_case(&[valid.as_bytes()], None, &none));
        // A header without sessionId: a warning, so no y_ case, and no n_ case of another rule.
        let warned = "{\"type\":\"session\",\"seq\":0,\"id\":\"h\",\"formatVersion\":\"0.1\",\"agent\":{\"name\":\"codex\"}}\n";
        assert!(!fits_a_case(&[warned.as_bytes()], None, &none));
        // A formatVersion shrunk from "0.1" to "0": a notice the stream did not have.
        let shrunk = valid.replace("\"0.1\"", "\"0\"");
        let notices = notice_rules(&[shrunk.as_bytes()]);
        assert!(notices.contains("ASR-X-020"), "{notices:?}");
        assert!(!fits_a_case(&[shrunk.as_bytes()], None, &none));
        assert!(fits_a_case(&[shrunk.as_bytes()], None, &notices));
        let broken = format!(
            "{header}\n{}\n",
            r#"{"type":"message","seq":1,"id":"r1","role":"user","content":[{"type":"text","text":"hi"}]}"#
        );
        assert!(fits_a_case(&[broken.as_bytes()], Some("ASR-200"), &none));
        assert!(!fits_a_case(&[broken.as_bytes()], Some("ASR-212"), &none));
        assert!(!fits_a_case(&[broken.as_bytes()], None, &none));
    }

    #[test]
    fn a_validator_is_judged_against_the_expectation() {
        let accepted = answer(r#"{"valid":true,"diagnostics":[]}"#);
        let warned = answer(
            r#"{"valid":true,"diagnostics":[{"rule":"ASR-X-015","severity":"warning","line":2}]}"#,
        );
        let rejected_212 = answer(
            r#"{"valid":false,"diagnostics":[{"rule":"ASR-212","severity":"error","line":2}]}"#,
        );
        let rejected_other = answer(
            r#"{"valid":false,"diagnostics":[{"rule":"ASR-210","severity":"error","line":2}]}"#,
        );
        let valid = Expected::Valid;
        let broken = Expected::Broken {
            rule: crate::rule::ASR_212,
        };
        assert_eq!(judge_validator(&valid, &accepted), None);
        assert_eq!(judge_validator(&valid, &warned), None);
        let over = judge_validator(&valid, &rejected_212).expect("over-strict");
        assert_eq!(
            (over.kind, over.rule.as_str()),
            (Kind::OverStrict, "ASR-212")
        );
        assert_eq!(judge_validator(&broken, &rejected_212), None);
        let lenient = judge_validator(&broken, &accepted).expect("lenient");
        assert_eq!(
            (lenient.kind, lenient.rule.as_str()),
            (Kind::Lenient, "ASR-212")
        );
        let wrong = judge_validator(&broken, &rejected_other).expect("wrong rule");
        assert_eq!(wrong.kind, Kind::Lenient);
        assert!(wrong.detail.contains("ASR-210"), "{}", wrong.detail);
    }

    #[test]
    fn a_reader_is_judged_member_by_member_under_the_members_rule() {
        let stream = concat!(
            r#"{"type":"session","seq":0,"id":"h","agent":{"name":"codex"},"sessionId":"s1","lineage":{"inherits":{"mode":"none","evidence":"native_field"}}}"#,
            "\n",
            r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[],"copiedFrom":{"session":"codex:p","record":"x","proof":"native_id"}}"#,
            "\n",
            r#"{"type":"message","seq":2,"id":"r2","messageId":"m2","role":"user","content":[{"type":"text","text":"a"}]}"#,
            "\n",
            r#"{"type":"message","seq":3,"id":"r3","messageId":"m3","role":"assistant","content":[{"type":"text","text":"b"}]}"#,
            "\n",
        );
        let reference = reference_reading(stream.as_bytes());
        let mut reading = serde_json::to_value(&reference.reading).expect("json");
        let same = StreamAnswer {
            valid: true,
            diagnostics: Vec::new(),
            reading: serde_json::from_value(reading.clone()).ok(),
        };
        assert!(judge_reader(stream.as_bytes(), &reference, &same).is_empty());
        reading["records"]["r1"]["originality"] = "original".into();
        let wrong = StreamAnswer {
            valid: true,
            diagnostics: Vec::new(),
            reading: serde_json::from_value(reading).ok(),
        };
        let found = judge_reader(stream.as_bytes(), &reference, &wrong);
        assert_eq!(found.len(), 1, "{found:?}");
        // Another order of ownRecords is the kit's decision, not a disagreement.
        let mut reordered = serde_json::to_value(&reference.reading).expect("json");
        assert_eq!(
            reordered["totals"]["ownRecords"],
            serde_json::json!(["r2", "r3"])
        );
        reordered["totals"]["ownRecords"] = serde_json::json!(["r3", "r2"]);
        let other_order = StreamAnswer {
            valid: true,
            diagnostics: Vec::new(),
            reading: serde_json::from_value(reordered).ok(),
        };
        assert!(judge_reader(stream.as_bytes(), &reference, &other_order).is_empty());
        assert_eq!(
            (found[0].kind, found[0].rule.as_str()),
            (Kind::Reading, "ASR-416")
        );
    }
}
