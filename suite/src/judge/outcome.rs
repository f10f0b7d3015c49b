//! What a judgement says: a case's outcome, and each failure charged to the rule that
//! failed, with the places a validator went wrong.

use serde::{Deserialize, Serialize};

/// The outcome of one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The answer is what the sidecar expects.
    Pass,
    /// The answer differs.
    Fail,
    /// The answer differs from the expectation only on decisions of the kit (where the spec
    /// text in hand does not decide): not a failure; the decisions are named.
    NonStrict,
    /// Declined by the adapter, or not run by the kit.
    Skipped,
    /// The adapter answered `error`.
    Error,
    /// No answer in time.
    Timeout,
    /// The adapter process died.
    Crash,
    /// The answer broke the protocol.
    ProtocolError,
    /// The kit did not run the case: the run was interrupted, or the adapter was restarted
    /// as often as allowed. It says nothing of the implementation.
    NotRun,
}

impl Outcome {
    /// Every outcome, in report order.
    pub const ALL: [Outcome; 9] = [
        Outcome::Pass,
        Outcome::Fail,
        Outcome::NonStrict,
        Outcome::Skipped,
        Outcome::Error,
        Outcome::Timeout,
        Outcome::Crash,
        Outcome::ProtocolError,
        Outcome::NotRun,
    ];

    /// The kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::NonStrict => "non-strict",
            Outcome::Skipped => "skipped",
            Outcome::Error => "error",
            Outcome::Timeout => "timeout",
            Outcome::Crash => "crash",
            Outcome::ProtocolError => "protocol-error",
            Outcome::NotRun => "not-run",
        }
    }

    /// Counts against the implementation (everything but pass, non-strict, skipped and not
    /// run).
    pub fn is_failure(self) -> bool {
        !matches!(
            self,
            Outcome::Pass | Outcome::NonStrict | Outcome::Skipped | Outcome::NotRun
        )
    }
}

/// What a failure says of the implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Failure {
    /// A validator missed a finding the stream calls for (or accepted a stream it must reject).
    Lenient,
    /// A validator reported an error the stream does not call for (or rejected a stream it
    /// must accept).
    OverStrict,
    /// A reader read a member wrong.
    Reading,
    /// A reader refused a stream it must read, or read one it must refuse.
    Refusal,
    /// A producer wrote a stream that is not valid (the stream checker's finding).
    Invalid,
    /// A producer's output says something of its source it must not (a fidelity assertion
    /// failed).
    Fidelity,
}

impl Failure {
    /// The kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Failure::Lenient => "lenient",
            Failure::OverStrict => "over-strict",
            Failure::Reading => "reading",
            Failure::Refusal => "refusal",
            Failure::Invalid => "invalid",
            Failure::Fidelity => "fidelity",
        }
    }
}

/// One failure of a case, charged to the rule that failed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Attribution {
    /// The rule (or inferred check) that failed; absent when no rule in hand decides what
    /// was wrong (a reading listing a record the stream does not have).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// How it failed.
    pub kind: Failure,
    /// The kit's decision the answer differs on, when that is all it differs on: non-strict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// A lenient failure on a finding that is only a warning (a SHOULD broken): non-strict.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warning: bool,
}

impl Attribution {
    /// Whether it makes its rule non-conformant (not only non-strict).
    pub fn is_hard(&self) -> bool {
        self.decision.is_none() && !self.warning
    }
}

/// Where in a case's streams a validator's answer went wrong: the line of a finding it
/// missed, or of an error it reported that the stream does not call for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Place {
    /// The rule of the finding.
    pub rule: String,
    /// Lenient (missed) or over-strict (not called for).
    pub kind: Failure,
    /// Its line, 1-based.
    pub line: usize,
    /// For a case of several streams: the stream's part name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
}

/// The most places kept for one case: an answer of a million wrong findings must not make a
/// report of a million places.
pub const MAX_PLACES: usize = 100;

/// The most unknown rule ids kept for one case.
pub const MAX_UNKNOWN_RULES: usize = 20;

/// The most characters of one unknown rule id kept.
pub const MAX_RULE_ID_CHARS: usize = 64;
