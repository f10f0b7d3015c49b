//! The conformance report of one run of the corpus against one implementation: every case's
//! outcome, and for every rule of the catalog a verdict. Its JSON form is
//! `schemas/report.schema.json`; every report records the kit's version, a digest of the
//! case set, the implementation's identity and the command line, so a claim can be checked.

use crate::case::{Case, Verdict};
use crate::catalog::{Catalog, Level, Role};
use crate::diagnostic::Severity;
use crate::protocol::{Implementation, ProtocolRole};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::SystemTime;

/// The outcome of one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The answer is what the sidecar expects.
    Pass,
    /// The answer differs.
    Fail,
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
    pub const ALL: [Outcome; 8] = [
        Outcome::Pass,
        Outcome::Fail,
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
            Outcome::Skipped => "skipped",
            Outcome::Error => "error",
            Outcome::Timeout => "timeout",
            Outcome::Crash => "crash",
            Outcome::ProtocolError => "protocol-error",
            Outcome::NotRun => "not-run",
        }
    }

    /// Counts against the implementation (everything but pass, skipped and not run).
    pub fn is_failure(self) -> bool {
        !matches!(self, Outcome::Pass | Outcome::Skipped | Outcome::NotRun)
    }
}

/// The result of one case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CaseResult {
    /// The case's name.
    pub name: String,
    /// The role the implementation played for it (a case can be run as each of its roles).
    pub role: ProtocolRole,
    /// Its stable id.
    pub id: String,
    /// The rules it tests.
    pub rules: Vec<String>,
    /// Its outcome.
    pub outcome: Outcome,
    /// What happened, in words (why it failed, the skip reason, the fault).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The adapter's issue link for a skip.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue: Option<String>,
    /// The expectation, one finding a line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// The answer, one finding a line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    /// A unified diff of the two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// What the adapter wrote to stderr while on this case (cut to its last 16 KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// Rule ids the answer cites that the catalog does not know (at most
    /// [`MAX_UNKNOWN_RULES`], each cut to [`MAX_RULE_ID_CHARS`] characters).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_rules: Vec<String>,
    /// Milliseconds from request to answer.
    pub millis: u64,
}

/// The most bytes of each text of a case result (detail, expected, actual, diff, stderr) that
/// the reports keep: an adapter's answer cannot make a report of gigabytes.
pub const KEPT_BYTES: usize = 64 << 10;

/// The most unknown rule ids kept for one case.
pub const MAX_UNKNOWN_RULES: usize = 20;

/// The most characters of one unknown rule id kept.
pub const MAX_RULE_ID_CHARS: usize = 64;

impl CaseResult {
    /// The result of a case with an outcome and nothing more said yet.
    pub fn new(
        name: impl Into<String>,
        id: impl Into<String>,
        rules: Vec<String>,
        outcome: Outcome,
    ) -> Self {
        CaseResult {
            name: name.into(),
            role: ProtocolRole::Validator,
            id: id.into(),
            rules,
            outcome,
            detail: None,
            issue: None,
            expected: None,
            actual: None,
            diff: None,
            stderr: None,
            unknown_rules: Vec::new(),
            millis: 0,
        }
    }

    /// Cuts every text to at most `kept` bytes, saying how much was cut: the start of a
    /// detail, an expectation, an answer or a diff, the end of stderr (where a crash shows).
    #[must_use]
    pub fn capped(mut self, kept: usize) -> Self {
        self.cap(kept);
        self
    }

    /// [`CaseResult::capped`], in place.
    pub fn cap(&mut self, kept: usize) {
        for text in [
            &mut self.detail,
            &mut self.issue,
            &mut self.expected,
            &mut self.actual,
            &mut self.diff,
        ]
        .into_iter()
        .flatten()
        {
            cap_start(text, kept);
        }
        if let Some(stderr) = &mut self.stderr {
            cap_end(stderr, kept);
        }
    }

    /// Notes the rule ids `cited` that `knows` does not, within the bounds.
    pub fn note_unknown_rules<'a>(
        &mut self,
        cited: impl IntoIterator<Item = &'a str>,
        knows: impl Fn(&str) -> bool,
    ) {
        for rule in cited {
            if self.unknown_rules.len() >= MAX_UNKNOWN_RULES {
                return;
            }
            if knows(rule) {
                continue;
            }
            let kept: String = rule.chars().take(MAX_RULE_ID_CHARS).collect();
            if !self.unknown_rules.contains(&kept) {
                self.unknown_rules.push(kept);
            }
        }
    }
}

/// Keeps the first `kept` bytes of `text` (on a character boundary) and says what was cut.
fn cap_start(text: &mut String, kept: usize) {
    if text.len() <= kept {
        return;
    }
    let mut end = kept;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text.len() - end;
    text.truncate(end);
    let _ = write!(text, "\n[{cut} more bytes not kept]");
}

/// Keeps the last `kept` bytes of `text` (on a character boundary) and says what was cut.
fn cap_end(text: &mut String, kept: usize) {
    if text.len() <= kept {
        return;
    }
    let mut start = text.len() - kept;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    *text = format!("[{start} earlier bytes not kept]\n{}", &text[start..]);
}

/// The verdict on one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleVerdict {
    /// Every case of the rule run passed.
    Conformant,
    /// A case whose expectation is a MUST-level error failed.
    NonConformant,
    /// Only cases whose expectations are SHOULD-level (warnings, notices) failed, or the rule
    /// itself is only a SHOULD or MAY.
    NonStrict,
    /// No case of the rule was run (none exists, or all were skipped).
    Untested,
    /// The rule binds no role the implementation plays.
    NotApplicable,
}

impl RuleVerdict {
    /// The kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleVerdict::Conformant => "conformant",
            RuleVerdict::NonConformant => "non-conformant",
            RuleVerdict::NonStrict => "non-strict",
            RuleVerdict::Untested => "untested",
            RuleVerdict::NotApplicable => "not-applicable",
        }
    }
}

/// One rule's line in the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuleResult {
    /// The rule (or inferred check) id.
    pub rule: String,
    /// Its requirement keywords (`inferred` for the kit's inferred checks).
    pub levels: Vec<String>,
    /// Whom it binds.
    pub roles: Vec<String>,
    /// Cases naming it that were run or skipped (cases not run are not counted).
    pub cases: usize,
    /// Of those: passed.
    pub passed: usize,
    /// Failed (the answer differed).
    pub failed: usize,
    /// Skipped.
    pub skipped: usize,
    /// Errored, timed out, crashed or broke the protocol.
    pub errored: usize,
    /// The verdict.
    pub verdict: RuleVerdict,
}

/// Who was tested, and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AdapterInfo {
    /// The adapter command, as split into argv.
    pub command: Vec<String>,
    /// `persistent` or `oneshot`.
    pub mode: String,
    /// The implementation's identity, as its `started` message gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<Implementation>,
    /// The roles it plays.
    pub roles: Vec<ProtocolRole>,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[non_exhaustive]
pub struct RunReport {
    /// `asr-ctk` and its version.
    pub kit: String,
    /// The kit's version.
    pub kit_version: String,
    /// sha256 over every case of the corpus (names, sidecars, streams), `sha256:` prefixed.
    pub case_set: String,
    /// Cases in the corpus.
    pub corpus_cases: usize,
    /// The implementation and how it was driven.
    pub adapter: AdapterInfo,
    /// The `asr-ctk` command line of the run.
    pub command_line: Vec<String>,
    /// When the run started, UTC, RFC 3339.
    pub started_at: String,
    /// The slice of the corpus run (`i/n`), when sharded; merged reports list every shard.
    pub shards: Vec<String>,
    /// Cases by outcome.
    pub totals: BTreeMap<Outcome, usize>,
    /// Every rule of the catalog and every inferred check.
    pub rules: Vec<RuleResult>,
    /// Every case run, by name.
    pub cases: Vec<CaseResult>,
    /// The run was stopped by a signal: cases not run are `not-run`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Why not every selected case was run, when some were not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

impl RunReport {
    /// The report of a run of `cases` (results) over `corpus`, summarized: the kit's identity,
    /// the corpus digest, the command line and the time now are filled in.
    pub fn new(
        corpus: &[Case],
        adapter: AdapterInfo,
        cases: Vec<CaseResult>,
        shards: Vec<String>,
    ) -> std::io::Result<Self> {
        let mut report = RunReport {
            kit: "asr-ctk".into(),
            kit_version: env!("CARGO_PKG_VERSION").into(),
            case_set: case_set_digest(corpus)?,
            corpus_cases: corpus.len(),
            adapter,
            command_line: std::env::args().collect(),
            started_at: now_rfc3339(),
            shards,
            totals: BTreeMap::new(),
            rules: Vec::new(),
            cases,
            interrupted: false,
            incomplete: None,
        };
        report.summarize(Catalog::embedded(), corpus);
        Ok(report)
    }

    /// Recomputes totals and rule verdicts from the cases.
    pub fn summarize(&mut self, catalog: &Catalog, corpus: &[Case]) {
        self.cases
            .sort_by(|a, b| (&a.name, a.role).cmp(&(&b.name, b.role)));
        self.totals = Outcome::ALL.iter().map(|o| (*o, 0)).collect();
        for case in &self.cases {
            *self.totals.entry(case.outcome).or_default() += 1;
        }
        self.rules = rule_results(catalog, corpus, &self.cases, &self.adapter.roles);
    }

    /// Whether any case failed in any way.
    pub fn has_failures(&self) -> bool {
        self.cases.iter().any(|c| c.outcome.is_failure())
    }
}

fn rule_results(
    catalog: &Catalog,
    corpus: &[Case],
    cases: &[CaseResult],
    roles: &[ProtocolRole],
) -> Vec<RuleResult> {
    let by_name: BTreeMap<&str, &Case> = corpus.iter().map(|c| (c.name.as_str(), c)).collect();
    let plays = |binds: &[Role]| {
        roles.iter().any(|r| match r {
            ProtocolRole::Validator => binds.contains(&Role::Validator),
            ProtocolRole::Reader => {
                binds.contains(&Role::Reader) || binds.contains(&Role::Consumer)
            }
            ProtocolRole::Producer => binds.contains(&Role::Producer),
        })
    };
    let stated = catalog.rules.iter().map(|r| {
        let levels: Vec<String> = r.levels.iter().map(|l| l.as_str().to_owned()).collect();
        let roles: Vec<String> = r.roles.iter().map(|x| x.as_str().to_owned()).collect();
        // A descriptive rule (no keyword) defines what MUST rules rely on: it binds like a MUST.
        let must = r.levels.is_empty()
            || r.levels
                .iter()
                .any(|l| matches!(l, Level::Must | Level::MustNot));
        (r.id.clone(), levels, roles, plays(&r.roles), must)
    });
    let inferred = catalog.inferred.iter().map(|x| {
        (
            x.id.clone(),
            vec!["inferred".to_owned()],
            vec!["validator".to_owned()],
            plays(&[Role::Validator]),
            true,
        )
    });
    stated
        .chain(inferred)
        .map(|(rule, levels, rule_roles, applicable, must)| {
            let mine: Vec<&CaseResult> = cases.iter().filter(|c| c.rules.contains(&rule)).collect();
            let count = |f: &dyn Fn(Outcome) -> bool| mine.iter().filter(|c| f(c.outcome)).count();
            let passed = count(&|o| o == Outcome::Pass);
            let failed = count(&|o| o == Outcome::Fail);
            let skipped = count(&|o| o == Outcome::Skipped);
            let errored = count(&|o| o.is_failure() && o != Outcome::Fail);
            let not_run = count(&|o| o == Outcome::NotRun);
            let verdict = if !applicable {
                RuleVerdict::NotApplicable
            } else if failed + errored > 0 {
                let should_only = mine.iter().filter(|c| c.outcome.is_failure()).all(|c| {
                    c.outcome == Outcome::Fail && !must_level(by_name.get(c.name.as_str()).copied())
                });
                if should_only || !must {
                    RuleVerdict::NonStrict
                } else {
                    RuleVerdict::NonConformant
                }
            } else if passed == 0 {
                RuleVerdict::Untested
            } else {
                RuleVerdict::Conformant
            };
            RuleResult {
                rule,
                levels,
                roles: rule_roles,
                cases: mine.len() - not_run,
                passed,
                failed,
                skipped,
                errored,
                verdict,
            }
        })
        .collect()
}

/// Whether a case's expectation holds an error (a MUST broken), or is a positive case.
fn must_level(case: Option<&Case>) -> bool {
    let Some(case) = case else { return true };
    if case.verdict() != Some(Verdict::Reject) {
        return true;
    }
    case.sidecar
        .expect
        .validator
        .as_ref()
        .is_none_or(|v| v.violations.iter().any(|x| x.severity == Severity::Error))
}

/// `sha256:` and the digest of the corpus: every case's name, sidecar and streams, in order.
pub fn case_set_digest(corpus: &[Case]) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    let mut sorted: Vec<&Case> = corpus.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    for case in sorted {
        hasher.update(case.name.as_bytes());
        hasher.update([0]);
        hasher.update(std::fs::read(&case.sidecar_path)?);
        for (part, path) in &case.streams {
            hasher.update(part.as_bytes());
            hasher.update([0]);
            hasher.update(std::fs::read(path)?);
        }
        hasher.update([0xFF]);
    }
    Ok(crate::spec::prefixed_hex(&hasher.finalize()))
}

/// The time now, UTC, as RFC 3339 (`2026-11-29T13:04:05Z`).
pub fn now_rfc3339() -> String {
    DateTime::<Utc>::from(SystemTime::now()).to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Seconds since the epoch as RFC 3339, UTC; a time past what the format can write is the epoch.
pub fn rfc3339(secs: u64) -> String {
    i64::try_from(secs)
        .ok()
        .and_then(|secs| DateTime::from_timestamp(secs, 0))
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_dates_are_right() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_000_645), "2026-11-30T01:04:05Z");
        assert_eq!(rfc3339(u64::MAX), "1970-01-01T00:00:00Z");
        let now = now_rfc3339();
        assert!(
            now.len() == 20 && DateTime::parse_from_rfc3339(&now).is_ok(),
            "{now}"
        );
    }

    fn result(name: &str, rules: &[&str], outcome: Outcome) -> CaseResult {
        CaseResult::new(
            name,
            "c0",
            rules.iter().map(|r| (*r).to_owned()).collect(),
            outcome,
        )
    }

    fn verdicts(cases: &[CaseResult], roles: &[ProtocolRole]) -> BTreeMap<String, RuleVerdict> {
        let corpus = crate::case::load_corpus(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases"),
        )
        .expect("corpus");
        rule_results(Catalog::embedded(), &corpus, cases, roles)
            .into_iter()
            .map(|r| (r.rule, r.verdict))
            .collect()
    }

    #[test]
    fn texts_are_capped_saying_what_was_cut() {
        let mut r = result("a/b", &["ASR-212"], Outcome::Fail);
        r.actual = Some("é".repeat(100));
        r.stderr = Some(format!("{}END", "x".repeat(500)));
        r.detail = Some("short".into());
        let r = r.capped(51);
        let actual = r.actual.expect("kept");
        assert!(
            actual.starts_with(&"é".repeat(25)),
            "cut on a character boundary"
        );
        assert!(actual.ends_with("[150 more bytes not kept]"), "{actual}");
        let stderr = r.stderr.expect("kept");
        assert!(
            stderr.starts_with("[452 earlier bytes not kept]\n"),
            "{stderr}"
        );
        assert!(stderr.ends_with("END"), "the end of stderr is kept");
        assert_eq!(r.detail.as_deref(), Some("short"));
    }

    #[test]
    fn unknown_rule_ids_are_noted_within_bounds() {
        let mut r = result("a/b", &["ASR-212"], Outcome::Fail);
        let long = "R".repeat(1000);
        let mut cited = vec!["ASR-212", "ASR-999", "ASR-999", long.as_str()];
        let many: Vec<String> = (0..50).map(|i| format!("X-{i}")).collect();
        cited.extend(many.iter().map(String::as_str));
        r.note_unknown_rules(cited, |rule| Catalog::embedded().knows(rule));
        assert_eq!(r.unknown_rules.len(), MAX_UNKNOWN_RULES);
        assert_eq!(r.unknown_rules[0], "ASR-999");
        assert_eq!(r.unknown_rules[1].len(), MAX_RULE_ID_CHARS);
        assert!(!r.unknown_rules.contains(&"ASR-212".to_owned()));
    }

    #[test]
    fn cases_not_run_count_for_no_rule() {
        let v = ProtocolRole::Validator;
        let cases = [
            result("messages/ASR-231/n_x", &["ASR-231"], Outcome::NotRun),
            result("messages/ASR-217/n_x", &["ASR-217"], Outcome::Pass),
            result("messages/ASR-217/n_y", &["ASR-217"], Outcome::NotRun),
        ];
        let got = verdicts(&cases, &[v]);
        assert_eq!(got["ASR-231"], RuleVerdict::Untested);
        assert_eq!(got["ASR-217"], RuleVerdict::Conformant);
        assert!(!Outcome::NotRun.is_failure());
    }

    #[test]
    fn verdicts_follow_outcomes_and_levels() {
        let v = ProtocolRole::Validator;
        let cases = [
            result(
                "messages/ASR-212/n_image_data_and_blob",
                &["ASR-212"],
                Outcome::Pass,
            ),
            result(
                "messages/ASR-212/y_image_blob_only",
                &["ASR-212"],
                Outcome::Pass,
            ),
            result("messages/ASR-231/n_x", &["ASR-231"], Outcome::Fail),
            result("messages/ASR-234/n_x", &["ASR-234"], Outcome::Skipped),
            result("messages/ASR-217/n_x", &["ASR-217"], Outcome::Timeout),
            result(
                "lineage/ASR-412/n_call_id_mismatch",
                &["ASR-412"],
                Outcome::Fail,
            ),
        ];
        let got = verdicts(&cases, &[v]);
        assert_eq!(got["ASR-212"], RuleVerdict::Conformant);
        assert_eq!(got["ASR-231"], RuleVerdict::NonConformant);
        assert_eq!(got["ASR-234"], RuleVerdict::Untested);
        assert_eq!(
            got["ASR-217"],
            RuleVerdict::NonConformant,
            "a timeout counts against the rule"
        );
        assert_eq!(
            got["ASR-412"],
            RuleVerdict::NonStrict,
            "its failed case expects only a warning"
        );
        assert_eq!(
            got["ASR-215"],
            RuleVerdict::NotApplicable,
            "reader rules do not bind validators"
        );
        assert_eq!(got["ASR-X-003"], RuleVerdict::Untested);
        assert_eq!(verdicts(&cases, &[])["ASR-212"], RuleVerdict::NotApplicable);
    }
}
