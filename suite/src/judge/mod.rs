//! Judging an implementation's answer to a case against the case's sidecar, as PROTOCOL.md
//! ("How answers are judged") says: whether it passes, and each failure charged to the rule
//! that failed (a missing finding to its rule, an error the stream does not call for to the
//! rule cited, a wrong member of a reading to the rule that member comes from).

pub mod members;
mod outcome;
mod producer;
pub mod sides;

pub use outcome::{
    Attribution, Failure, MAX_PLACES, MAX_RULE_ID_CHARS, MAX_UNKNOWN_RULES, Outcome, Place,
};
pub use producer::{
    OutputFailure, judge_conversion, judge_output, judge_producer, misjudged, property_failures,
    stream_failures,
};

use crate::case::{Case, ReaderExpect, Verdict, Violation};
use crate::catalog::Catalog;
use crate::diagnostic::{MAX_PER_STREAM, Severity, push_token};
use crate::json::same;
use crate::protocol::{AnswerDiagnostic, ReadingAnswer, StreamAnswer};
use crate::rule;
use members::Kinds;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

/// The judgement of one answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Judgement {
    /// The answer is what the sidecar expects.
    pub pass: bool,
    /// Why not, in one sentence each.
    pub reasons: Vec<String>,
    /// Each failure, charged to the rule that failed.
    pub attributions: Vec<Attribution>,
    /// What was noticed that is no failure.
    pub notes: Vec<String>,
    /// Expected findings the answer lacks.
    pub missing: Vec<Violation>,
    /// Findings of the answer beyond the expected ones (never a failure by themselves:
    /// only the errors among them, which are over-strict, are).
    pub extra: Vec<Violation>,
    /// Where the failures are: the line of each finding missed or not called for.
    pub places: Vec<Place>,
    /// The expectation and the answer as lines, for a diff.
    pub expected_text: String,
    /// The answer as lines.
    pub actual_text: String,
}

impl Judgement {
    fn passing() -> Self {
        Judgement {
            pass: true,
            reasons: Vec::new(),
            attributions: Vec::new(),
            notes: Vec::new(),
            missing: Vec::new(),
            extra: Vec::new(),
            places: Vec::new(),
            expected_text: String::new(),
            actual_text: String::new(),
        }
    }

    /// The case's outcome: pass; non-strict when every failure is on a decision of the kit
    /// or a missed warning or notice (neither makes a stream invalid); else fail.
    pub fn outcome(&self) -> Outcome {
        if self.pass {
            Outcome::Pass
        } else if !self.attributions.is_empty() && self.attributions.iter().all(|a| !a.is_hard()) {
            Outcome::NonStrict
        } else {
            Outcome::Fail
        }
    }

    /// Notes where a finding missed or not called for is, within [`MAX_PLACES`].
    fn place(&mut self, finding: &Violation, kind: Failure) {
        if self.places.len() < MAX_PLACES {
            self.places.push(Place {
                rule: finding.rule.clone(),
                kind,
                line: finding.line,
                part: finding.file.clone(),
            });
        }
    }

    fn fail(&mut self, reason: String, rule: Option<&str>, kind: Failure, decision: Option<&str>) {
        self.charge(reason, rule, kind, decision, false);
    }

    fn charge(
        &mut self,
        reason: String,
        rule: Option<&str>,
        kind: Failure,
        decision: Option<&str>,
        warning: bool,
    ) {
        self.reasons.push(reason);
        let attribution = Attribution {
            rule: rule.map(str::to_owned),
            kind,
            decision: decision.map(str::to_owned),
            warning,
        };
        if !self.attributions.contains(&attribution) {
            self.attributions.push(attribution);
        }
        self.pass = false;
    }
}

/// How strictly findings are matched, and what the implementation said of its own ids.
#[derive(Debug, Clone, Default)]
pub struct Strictness {
    /// Compare JSON Pointers too.
    pub pointers: bool,
    /// The implementation's own ids for the catalog's rules and checks, as its `started`
    /// message declared them (`ruleAliases`): a finding under one counts as one under the
    /// catalog id it stands for.
    pub aliases: BTreeMap<String, String>,
}

impl Strictness {
    /// The catalog id a cited id stands for.
    fn canonical<'a>(&'a self, cited: &'a str) -> &'a str {
        self.aliases.get(cited).map_or(cited, String::as_str)
    }
}

/// Which findings of an answer the kit keeps, so that one reply of millions of findings (a
/// legal one: a notice on every line of a long stream) costs memory for a bounded number of
/// them, while the judgement stays what it would be with every finding kept.
///
/// Of each stream answer, the first [`MAX_PER_STREAM`] findings are kept, whatever they are:
/// the most the kit's own checker lists for a stream, so an answer like the kit's is kept
/// whole. Beyond them, a finding is kept only when the judge could decide differently
/// without it ([`judge_validator`] matches findings by place and reads nothing else of
/// them):
///
/// - it is at the place (stream, line, rule) of an expected finding: the first such of each
///   expected finding, severity (error or not) and pointer (equal to the expected one or
///   not), which is every combination the matching tells apart;
/// - it is an error under a rule of the catalog (or an id aliased to one): the first under
///   each rule, which is where an error the stream does not call for is charged (one
///   failure of its rule, however many such errors there are);
/// - its id is one the catalog does not know: the first error under any such id (an error
///   under one is charged to the case's rules, whatever the id), and the first finding under
///   each of at most [`MAX_UNKNOWN_RULES`] ids, which the report lists;
/// - it is on line 0, which breaks the protocol: the first one.
///
/// Every other finding is counted ([`Retention::not_kept`]) and freed as soon as it is read.
/// A finding kept costs its members' bytes and about 200 bytes more; at most
/// [`MAX_PER_STREAM`] + (expected findings x 4) + (the catalog's rules and inferred checks) +
/// [`MAX_UNKNOWN_RULES`] + 2 are kept of a stream, a few MiB whatever the reply's size.
/// Findings of a stream entry the case does not have (the answer is then a protocol error)
/// are only counted.
#[derive(Debug)]
pub struct Retention {
    /// The case's streams' part names, by index (`None` for the one stream of most cases).
    parts: Vec<Option<String>>,
    /// The expected findings of the validator role, if the case has them.
    expected: Vec<Violation>,
    aliases: BTreeMap<String, String>,
    not_kept: AtomicU64,
}

impl Retention {
    /// What to keep of an answer to `case`, the implementation's own ids read through
    /// `strictness`.
    pub fn new(case: &Case, strictness: &Strictness) -> Self {
        Retention {
            parts: case
                .streams
                .iter()
                .map(|(part, _)| (!part.is_empty()).then(|| part.clone()))
                .collect(),
            expected: case
                .sidecar
                .expect
                .validator
                .as_ref()
                .map(|v| v.violations.clone())
                .unwrap_or_default(),
            aliases: strictness.aliases.clone(),
            not_kept: AtomicU64::new(0),
        }
    }

    /// A filter for one reply: true for each finding to keep, called on the findings of each
    /// stream in their order (with the stream's index).
    pub fn keeper(&self) -> Keeper<'_> {
        Keeper {
            of: self,
            listed: vec![0; self.parts.len()],
            places: BTreeSet::new(),
            errors: BTreeSet::new(),
            unknown: BTreeSet::new(),
            unknown_error: false,
            line_zero: false,
        }
    }

    /// How many findings the last reply parsed with [`Retention::keeper`] had that were not
    /// kept (set with [`Retention::set_not_kept`]).
    pub fn not_kept(&self) -> u64 {
        self.not_kept.load(Ordering::Relaxed)
    }

    /// Records how many findings of the reply just parsed were not kept.
    pub fn set_not_kept(&self, count: u64) {
        self.not_kept.store(count, Ordering::Relaxed);
    }
}

/// The state of [`Retention`] over one reply.
#[derive(Debug)]
pub struct Keeper<'a> {
    of: &'a Retention,
    /// Findings seen so far, by stream.
    listed: Vec<usize>,
    /// (expected finding, is an error, its pointer is the expected one) already kept.
    places: BTreeSet<(usize, bool, bool)>,
    /// Catalog rules under which an error is already kept.
    errors: BTreeSet<String>,
    /// Unknown ids (cut as the report cuts them) under which a finding is already kept.
    unknown: BTreeSet<String>,
    /// An error under an unknown id is already kept.
    unknown_error: bool,
    line_zero: bool,
}

impl Keeper<'_> {
    /// Whether to keep `finding` of stream `stream`.
    pub fn keeps(&mut self, stream: usize, finding: &AnswerDiagnostic) -> bool {
        let Some(listed) = self.listed.get_mut(stream) else {
            return false;
        };
        *listed += 1;
        if *listed <= MAX_PER_STREAM {
            return true;
        }
        if finding.line == 0 {
            return !std::mem::replace(&mut self.line_zero, true);
        }
        let rule = self.of.aliases.get(&finding.rule).unwrap_or(&finding.rule);
        let error = finding.severity == Severity::Error;
        let part = &self.of.parts[stream];
        let pointer = finding.pointer.as_deref().unwrap_or_default();
        let place =
            self.of.expected.iter().position(|want| {
                want.file == *part && want.line == finding.line && want.rule == *rule
            });
        if let Some(index) = place {
            let same_pointer = self.of.expected[index].pointer == pointer;
            return self.places.insert((index, error, same_pointer));
        }
        if Catalog::embedded().knows(rule) {
            return error && self.errors.insert(rule.clone());
        }
        let cut: String = rule.chars().take(MAX_RULE_ID_CHARS).collect();
        if error && !self.unknown_error {
            // Any error under an unknown id is charged to the case's rules: one stands for all.
            self.unknown_error = true;
            self.unknown.insert(cut);
            return true;
        }
        self.unknown.len() < MAX_UNKNOWN_RULES && self.unknown.insert(cut)
    }
}

/// Judges a validator's answer (one entry per stream of the case).
///
/// A finding matches an expected one on the same stream, line and rule (an implementation's
/// own id counts only through [`Strictness::aliases`]); an expected error is matched only by
/// an error. Each expected finding not matched is a lenient failure of its rule; each error
/// of the answer that matches no expected error is an over-strict failure of the rule it
/// cites (of the case's rules when the catalog does not know the id).
pub fn judge_validator(case: &Case, answer: &[StreamAnswer], strictness: &Strictness) -> Judgement {
    let Some(expect) = &case.sidecar.expect.validator else {
        return Judgement::passing();
    };
    let catalog = Catalog::embedded();
    // A decision about readings (one with `members`) is no decision about findings.
    let decision = case.sidecar.decision.as_deref().filter(|id| {
        Catalog::embedded()
            .decision(id)
            .is_none_or(|d| d.members.is_empty() && !d.settled)
    });
    let parts: Vec<Option<String>> = case
        .streams
        .iter()
        .map(|(part, _)| (!part.is_empty()).then(|| part.clone()))
        .collect();
    let actual: Vec<Violation> = answer
        .iter()
        .zip(&parts)
        .flat_map(|(stream, part)| {
            stream.diagnostics.iter().map(move |d| Violation {
                rule: strictness.canonical(&d.rule).to_owned(),
                severity: d.severity,
                line: d.line,
                pointer: d.pointer.clone().unwrap_or_default(),
                file: part.clone(),
            })
        })
        .collect();
    let accepted = answer.iter().all(|s| s.valid);
    let mut judgement = Judgement::passing();
    let same_place = |want: &Violation, got: &Violation| {
        want.file == got.file
            && want.line == got.line
            && want.rule == got.rule
            && (!strictness.pointers || want.pointer == got.pointer)
    };
    let found = |want: &Violation| {
        actual.iter().any(|got| {
            same_place(want, got)
                && (want.severity != Severity::Error || got.severity == Severity::Error)
        })
    };
    let called_for = |got: &Violation| {
        got.severity != Severity::Error
            || expect
                .violations
                .iter()
                .any(|want| want.severity == Severity::Error && same_place(want, got))
    };
    let verdict = case.verdict().unwrap_or(Verdict::Accept);
    let permitted =
        |got: &Violation| verdict == Verdict::Either && expect.if_rejected.contains(&got.rule);
    // Errors the stream does not call for, each charged to the rule it cites.
    let mut over_strict = 0;
    for got in actual.iter().filter(|g| !called_for(g) && !permitted(g)) {
        over_strict += 1;
        judgement.place(got, Failure::OverStrict);
        let reason = format!("the answer reports an error the stream does not call for: {got}");
        if catalog.knows(&got.rule) {
            judgement.fail(reason, Some(&got.rule), Failure::OverStrict, decision);
        } else {
            for rule in &case.sidecar.rules {
                judgement.fail(reason.clone(), Some(rule), Failure::OverStrict, decision);
            }
        }
    }
    match verdict {
        Verdict::Accept => {
            if !accepted && over_strict == 0 {
                judgement.fail(
                    "the stream must be accepted, but the answer says it is not valid".to_owned(),
                    case.sidecar.rules.first().map(String::as_str),
                    Failure::OverStrict,
                    decision,
                );
            }
        }
        Verdict::Reject => {
            for want in &expect.violations {
                if !found(want) {
                    judgement.place(want, Failure::Lenient);
                    judgement.missing.push(want.clone());
                    judgement.charge(
                        format!("the answer lacks a finding the stream calls for: {want}"),
                        Some(&want.rule),
                        Failure::Lenient,
                        decision,
                        want.severity != Severity::Error,
                    );
                }
            }
            if expect.valid && !accepted && over_strict == 0 {
                judgement.fail(
                    "the stream is valid (its findings are warnings or notices), but the answer rejects it".to_owned(),
                    case.sidecar.rules.first().map(String::as_str),
                    Failure::OverStrict,
                    decision,
                );
            } else if !expect.valid && accepted && judgement.missing.is_empty() {
                // The findings are there but the verdict says valid.
                let errors = expect
                    .violations
                    .iter()
                    .filter(|v| v.severity == Severity::Error);
                for want in errors {
                    judgement.fail(
                        "the stream must be rejected, but the answer says it is valid".to_owned(),
                        Some(&want.rule),
                        Failure::Lenient,
                        decision,
                    );
                }
            }
        }
        Verdict::Either => {
            if !accepted
                && !actual.iter().any(|got| {
                    got.severity == Severity::Error && expect.if_rejected.contains(&got.rule)
                })
            {
                judgement.fail(
                    format!(
                        "the answer rejects the stream without citing one of the rules a rejection must cite: {}",
                        expect.if_rejected.join(", ")
                    ),
                    expect.if_rejected.first().map(String::as_str),
                    Failure::OverStrict,
                    decision,
                );
            }
        }
    }
    judgement.reasons.dedup();
    judgement.extra = actual
        .iter()
        .filter(|got| !expect.violations.iter().any(|want| same_place(want, got)))
        .cloned()
        .collect();
    judgement.expected_text = render(expect.valid, &expect.violations);
    judgement.actual_text = render(accepted, &actual);
    judgement
}

/// One member where a reading differs from the expected one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadingMismatch {
    /// JSON Pointer into the reading.
    pub pointer: String,
    /// The rule the member comes from ([`UNATTRIBUTED`] when none does).
    pub rule: String,
    /// The expected value.
    pub expected: Value,
    /// The value read, if any.
    pub actual: Option<Value>,
    /// The kit's decision the two differ on, when they agree but for it.
    pub decision: Option<String>,
    /// The record a mismatch of `totals.ownRecords` is about: `expected` and `actual` then
    /// say whether it is credited.
    pub subject: Option<String>,
}

impl ReadingMismatch {
    /// The pointer a decision's `members` are matched against: the pointer, and for a
    /// record's crediting the record's id after it.
    pub fn member(&self) -> String {
        match &self.subject {
            Some(id) => crate::diagnostic::pointer_join(&self.pointer, id),
            None => self.pointer.clone(),
        }
    }
}

impl std::fmt::Display for ReadingMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(id) = &self.subject {
            let credit = |v: &Value| {
                if v == &Value::Bool(true) {
                    "credited"
                } else {
                    "not credited"
                }
            };
            let read = self.actual.as_ref().map_or("not credited", credit);
            write!(
                f,
                "{} ({}): {} expected {}, read {read}",
                self.pointer,
                self.rule,
                Value::from(id.as_str()),
                credit(&self.expected)
            )?;
        } else {
            let actual = self
                .actual
                .as_ref()
                .map_or_else(|| "nothing".to_owned(), Value::to_string);
            write!(
                f,
                "{} ({}): expected {}, read {actual}",
                self.pointer, self.rule, self.expected
            )?;
        }
        if let Some(decision) = &self.decision {
            write!(f, " (differs only on the kit's decision {decision})")?;
        }
        Ok(())
    }
}

/// Compares a reading with an expected one, member by member: objects for the members the
/// expectation gives, arrays element by element and in full, JSON types kept apart. Each
/// mismatch names the rule its member comes from, by the member and the kind of record or
/// part it belongs to (`kinds`, from the stream read), and the catalog's decision it differs
/// on when the values agree but for one.
pub fn compare_readings(expected: &Value, actual: &Value, kinds: &Kinds) -> Vec<ReadingMismatch> {
    let mut mismatches = Vec::new();
    compare_at(
        expected,
        Some(actual),
        &mut String::new(),
        kinds,
        &mut mismatches,
    );
    by_record(mismatches, kinds)
}

/// The pointer of the records a session may credit, judged record by record.
const OWN_RECORDS: &str = "/totals/ownRecords";

/// A mismatch of `totals.ownRecords` that no decision accounts for, split into one mismatch a
/// record credited or left out, each under the rule that decides it
/// ([`Kinds::credit_rule`]); a list that differs only in order is the decision's.
fn by_record(mismatches: Vec<ReadingMismatch>, kinds: &Kinds) -> Vec<ReadingMismatch> {
    let mut out = Vec::with_capacity(mismatches.len());
    for m in mismatches {
        let ids = |v: Option<&Value>| -> Option<Vec<String>> {
            v?.as_array()?
                .iter()
                .map(|id| id.as_str().map(str::to_owned))
                .collect()
        };
        let (Some(want), Some(got)) = (ids(Some(&m.expected)), ids(m.actual.as_ref())) else {
            out.push(m);
            continue;
        };
        if m.pointer != OWN_RECORDS || m.decision.is_some() {
            out.push(m);
            continue;
        }
        let mut split = Vec::new();
        for id in &got {
            if !want.contains(id) {
                split.push((id.clone(), false, true));
            }
        }
        for id in &want {
            if !got.contains(id) {
                split.push((id.clone(), true, false));
            }
        }
        if split.is_empty() {
            // The same records, each once or not: a record credited twice is credited once
            // too many, as a copy is.
            out.push(m);
            continue;
        }
        for (id, should, did) in split {
            out.push(ReadingMismatch {
                pointer: OWN_RECORDS.to_owned(),
                rule: kinds.credit_rule(&id, did),
                expected: should.into(),
                actual: Some(did.into()),
                decision: None,
                subject: Some(id),
            });
        }
    }
    out
}

fn mismatch(
    pointer: &str,
    expected: Option<&Value>,
    actual: Option<&Value>,
    kinds: &Kinds,
) -> ReadingMismatch {
    let decision = Catalog::embedded()
        .decisions
        .iter()
        .find(|d| {
            d.shapes(pointer)
                && match (expected, actual) {
                    (Some(want), Some(got)) => {
                        let normal =
                            |v: &Value| d.equivalence.iter().fold(v.clone(), |v, e| e.normal(&v));
                        normal(want) == normal(got)
                    }
                    _ => false,
                }
        })
        .map(|d| d.id.clone());
    ReadingMismatch {
        pointer: pointer.to_owned(),
        rule: kinds
            .rule_of(pointer, actual)
            .unwrap_or_else(|| UNATTRIBUTED.to_owned()),
        expected: expected.cloned().unwrap_or(Value::Null),
        actual: actual.cloned(),
        decision,
        subject: None,
    }
}

/// Whether the member at `pointer` is one a decision of the catalog shapes: it is then
/// compared whole, so that an answer deciding otherwise is one mismatch, named.
fn shaped(pointer: &str) -> bool {
    Catalog::embedded()
        .decisions
        .iter()
        .any(|d| d.shapes(pointer))
}

fn compare_at(
    expected: &Value,
    actual: Option<&Value>,
    pointer: &mut String,
    kinds: &Kinds,
    out: &mut Vec<ReadingMismatch>,
) {
    match (expected, actual) {
        (want, Some(got)) if same(want, got) => {}
        (want, got) if shaped(pointer) => out.push(mismatch(pointer, Some(want), got, kinds)),
        (Value::Object(want), Some(Value::Object(got))) => {
            for (key, value) in want {
                let mark = pointer.len();
                push_token(pointer, key);
                compare_at(value, got.get(key), pointer, kinds, out);
                pointer.truncate(mark);
            }
        }
        (Value::Array(want), Some(Value::Array(got))) if want.len() == got.len() => {
            for (index, (w, g)) in want.iter().zip(got).enumerate() {
                let mark = pointer.len();
                push_token(pointer, &index.to_string());
                compare_at(w, Some(g), pointer, kinds, out);
                pointer.truncate(mark);
            }
        }
        _ => out.push(mismatch(pointer, Some(expected), actual, kinds)),
    }
}

/// Every member where two readings differ, both ways: what one has and the other lacks,
/// and what both have with different values. `actual` is the second reading's value.
pub fn diff_readings(first: &Value, second: &Value, kinds: &Kinds) -> Vec<ReadingMismatch> {
    let mut out = Vec::new();
    diff_at(
        Some(first),
        Some(second),
        &mut String::new(),
        kinds,
        &mut out,
    );
    by_record(out, kinds)
}

fn diff_at(
    a: Option<&Value>,
    b: Option<&Value>,
    pointer: &mut String,
    kinds: &Kinds,
    out: &mut Vec<ReadingMismatch>,
) {
    match (a, b) {
        (Some(v), Some(w)) if same(v, w) => {}
        _ if shaped(pointer) => out.push(mismatch(pointer, a, b, kinds)),
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for key in keys {
                let mark = pointer.len();
                push_token(pointer, key);
                diff_at(x.get(key), y.get(key), pointer, kinds, out);
                pointer.truncate(mark);
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) if x.len() == y.len() => {
            for (index, (v, w)) in x.iter().zip(y).enumerate() {
                let mark = pointer.len();
                push_token(pointer, &index.to_string());
                diff_at(Some(v), Some(w), pointer, kinds, out);
                pointer.truncate(mark);
            }
        }
        _ => out.push(mismatch(pointer, a, b, kinds)),
    }
}

/// The group of a mismatch that no rule accounts for (a whole record one side lacks, a
/// member no rule defines).
pub const UNATTRIBUTED: &str = "(no rule)";

/// The parts of `actual` that `expected` gives, so that a diff shows only what was compared
/// (and a partial expectation can be rewritten in its own shape).
pub fn project(expected: &Value, actual: &Value) -> Value {
    match (expected, actual) {
        (Value::Object(want), Value::Object(got)) => Value::Object(
            want.keys()
                .filter_map(|k| got.get(k).map(|g| (k.clone(), project(&want[k], g))))
                .collect(),
        ),
        (Value::Array(want), Value::Array(got)) => Value::Array(
            got.iter()
                .enumerate()
                .map(|(i, g)| want.get(i).map_or_else(|| g.clone(), |w| project(w, g)))
                .collect(),
        ),
        _ => actual.clone(),
    }
}

/// Judges a reader's answer: the verdict and the reading, against the case's sidecar.
///
/// Each stream of the case is judged against its expectation (a case of several streams
/// holds one by part, the streams read as one set). A reader that refuses a stream it must
/// read (or reads one it must refuse) fails under the case's rules that bind readers, its
/// reading not compared; otherwise every member the sidecar gives is compared, each
/// mismatch charged to the rule its member comes from, and a record the stream does not
/// have is a failure under ASR-X-009. The case's decision softens the members it names and
/// nothing else. Members the reading does not define are noted.
pub fn judge_reader(case: &Case, answer: &[StreamAnswer]) -> Judgement {
    let mut judgement = Judgement::passing();
    let single = case.sidecar.expect.reader.as_ref();
    let expectations: Vec<(&str, &std::path::Path, &ReaderExpect)> = case
        .streams
        .iter()
        .filter_map(|(part, path)| {
            let expect = match single {
                Some(expect) if case.streams.len() == 1 => Some(expect),
                Some(_) => None,
                None => case.sidecar.expect.reader_streams.get(part),
            }?;
            Some((part.as_str(), path.as_path(), expect))
        })
        .collect();
    if expectations.is_empty() {
        return judgement;
    }
    // A failure of the reading as a whole goes to the case's rules that bind readers.
    let whole: Vec<&str> = reader_rules(case);
    if answer.len() != case.streams.len() {
        for rule in &whole {
            judgement.fail(
                format!(
                    "the answer has {} streams, the case {}",
                    answer.len(),
                    case.streams.len()
                ),
                Some(rule),
                Failure::Refusal,
                None,
            );
        }
        return judgement;
    }
    let several = case.streams.len() > 1;
    for ((part, path, expect), stream) in expectations.into_iter().zip(answer) {
        let label = if several {
            format!("{part}: ")
        } else {
            String::new()
        };
        judge_stream(&mut judgement, case, &label, path, expect, stream, &whole);
    }
    judgement
}

/// Judges one stream's answer against its expectation, into `judgement`: each reason starts
/// with `label` (the stream's part, in a case of several).
fn judge_stream(
    judgement: &mut Judgement,
    case: &Case,
    label: &str,
    path: &std::path::Path,
    expect: &ReaderExpect,
    stream: &StreamAnswer,
    whole: &[&str],
) {
    let decision = case
        .sidecar
        .decision
        .as_deref()
        .and_then(|id| Catalog::embedded().decisions.iter().find(|d| d.id == id));
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default() + "\n";
    let null = Value::Null;
    let actual = stream.reading.as_ref().map_or(&null, ReadingAnswer::json);
    let _ = write!(
        judgement.expected_text,
        "{label}valid: {}\n{}",
        expect.valid,
        pretty(&expect.reading)
    );
    let _ = write!(
        judgement.actual_text,
        "{label}valid: {}\n{}",
        stream.valid,
        pretty(&project(&expect.reading, actual))
    );
    if stream.valid != expect.valid {
        // The case's decision lets a reader refuse what it cannot represent; what it read
        // before is not compared, as with any refusal.
        if !stream.valid && expect.may_refuse {
            return;
        }
        let reason = if stream.valid {
            "the reader read a stream it must refuse"
        } else {
            "the reader refused a stream it must read"
        };
        for rule in whole {
            judgement.fail(
                format!("{label}{reason}"),
                Some(rule),
                Failure::Refusal,
                None,
            );
        }
        return;
    }
    if !expect.valid {
        return;
    }
    if stream.reading.is_none() {
        for rule in whole {
            judgement.fail(
                format!("{label}the answer has no reading"),
                Some(rule),
                Failure::Reading,
                None,
            );
        }
        return;
    }
    let bytes: Vec<u8> = std::fs::read(path).unwrap_or_default();
    let kinds = Kinds::of_stream(&bytes);
    let tags = |id: &str| kinds.tags_of(id);
    let softened = |m: &ReadingMismatch| {
        m.decision.clone().or_else(|| {
            decision
                .filter(|d| d.covers(&m.member(), &tags))
                .map(|d| d.id.clone())
        })
    };
    let mut mismatches = compare_readings(&expect.reading, actual, &kinds);
    if let Some(Value::Object(records)) = actual.get("records")
        && !kinds.unread
    {
        for id in records.keys().filter(|id| !kinds.records.contains(*id)) {
            let pointer = crate::diagnostic::pointer_join("/records", id);
            mismatches.push(ReadingMismatch {
                rule: kinds
                    .rule(&pointer)
                    .unwrap_or_else(|| rule::ASR_X_009.into()),
                pointer,
                expected: Value::from("no such record"),
                actual: Some(Value::from("a record")),
                decision: None,
                subject: None,
            });
        }
    }
    for mismatch in mismatches {
        let on = softened(&mismatch);
        let reason = format!("{label}{mismatch}");
        if mismatch.rule == UNATTRIBUTED {
            for rule in whole {
                judgement.fail(reason.clone(), Some(rule), Failure::Reading, on.as_deref());
            }
        } else {
            judgement.fail(
                reason,
                Some(&mismatch.rule),
                Failure::Reading,
                on.as_deref(),
            );
        }
    }
    judgement
        .notes
        .extend(members::undefined_members(actual).into_iter().map(|p| {
            format!("{label}{p} is not a member of the reading (schemas/reading.schema.json)")
        }));
}

/// The rules of a reader case that bind readers: those a failure of the reading as a whole
/// (a refusal, no reading) is charged to. Every reader case names one (a lint); were one to
/// name none, such a failure would go to ASR-X-003, which says what a reader may refuse,
/// never to no rule.
pub fn reader_rules(case: &Case) -> Vec<&str> {
    let catalog = Catalog::embedded();
    let rules: Vec<&str> = case
        .sidecar
        .rules
        .iter()
        .map(String::as_str)
        .filter(|r| catalog.binds(r, crate::protocol::ProtocolRole::Reader))
        .collect();
    if rules.is_empty() {
        vec![rule::ASR_X_003.as_str()]
    } else {
        rules
    }
}

fn render(valid: bool, findings: &[Violation]) -> String {
    let mut sorted = findings.to_vec();
    sorted.sort();
    let mut text = format!("valid: {valid}\n");
    for v in &sorted {
        text.push_str(&v.to_string());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::load_corpus;
    use crate::protocol::AnswerDiagnostic;
    use std::path::Path;

    fn corpus() -> Vec<Case> {
        load_corpus(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases")).expect("corpus")
    }

    fn find<'a>(cases: &'a [Case], name: &str) -> &'a Case {
        cases
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no case {name}"))
    }

    fn answer(valid: bool, findings: &[(&str, Severity, usize)]) -> Vec<StreamAnswer> {
        vec![StreamAnswer {
            valid,
            diagnostics: findings
                .iter()
                .map(|(rule, severity, line)| AnswerDiagnostic {
                    rule: (*rule).into(),
                    severity: *severity,
                    line: *line,
                    pointer: None,
                    seq: None,
                    id: None,
                    message: None,
                })
                .collect(),
            reading: None,
        }]
    }

    fn charged(j: &Judgement) -> Vec<(Option<&str>, Failure)> {
        j.attributions
            .iter()
            .map(|a| (a.rule.as_deref(), a.kind))
            .collect()
    }

    /// The judgement of a validator's answer of one stream, matched plainly.
    fn judged(case: &Case, valid: bool, findings: &[(&str, Severity, usize)]) -> Judgement {
        judge_validator(case, &answer(valid, findings), &Strictness::default())
    }

    /// A reply line of one stream answer holding `findings` (rule, severity, line).
    fn reply_line(valid: bool, findings: &[(&str, &str, usize)]) -> Vec<u8> {
        let diagnostics: Vec<Value> = findings
            .iter()
            .map(|(rule, severity, line)| {
                serde_json::json!({"rule": rule, "severity": severity, "line": line})
            })
            .collect();
        serde_json::to_vec(&serde_json::json!({"type": "answered", "seq": 1,
            "streams": [{"valid": valid, "diagnostics": diagnostics}]}))
        .expect("JSON")
    }

    /// The stream answers of a reply, parsed whole, and parsed keeping what `retention`
    /// keeps, with the count not kept.
    fn whole_and_kept(
        line: &[u8],
        retention: &Retention,
    ) -> (Vec<StreamAnswer>, Vec<StreamAnswer>, u64) {
        let streams = |reply: crate::protocol::Reply| match reply {
            crate::protocol::Reply::Answered { streams, .. } => streams,
            other => panic!("{other:?}"),
        };
        let whole = streams(serde_json::from_slice(line).expect("a reply"));
        let mut keeper = retention.keeper();
        let kept =
            crate::protocol::reply_keeping(line, &mut |i, d| keeper.keeps(i, d)).expect("a reply");
        (whole, streams(kept.reply), kept.not_kept)
    }

    #[test]
    fn findings_beyond_the_bound_are_counted_and_the_judgement_stands() {
        let cases = corpus();
        let negative = find(&cases, "messages/ASR-212/n_image_data_and_blob");
        let positive = find(&cases, "messages/ASR-212/y_image_blob_only");
        let plain = Strictness::default();
        let notices = MAX_PER_STREAM + 5_000;
        let mut findings: Vec<(&str, &str, usize)> = (0..notices)
            .map(|i| ("ASR-406", "notice", 1 + i % 7))
            .collect();
        // Beyond the bound: what the stream calls for (three times), an error it does not
        // call for under two rules (each twice), and ids the catalog does not know.
        findings.extend([
            ("ASR-212", "error", 2),
            ("ASR-212", "error", 2),
            ("ASR-212", "warning", 2),
            ("ASR-231", "error", 3),
            ("ASR-231", "error", 4),
            ("ASR-210", "error", 3),
            ("ASR-210", "error", 9),
            ("MY-1", "warning", 3),
            ("MY-1", "error", 4),
            ("MY-2", "notice", 3),
        ]);
        let line = reply_line(false, &findings);
        for case in [negative, positive] {
            let retention = Retention::new(case, &plain);
            let (whole, kept, not_kept) = whole_and_kept(&line, &retention);
            assert_eq!(whole[0].diagnostics.len(), findings.len());
            // Kept: the first MAX_PER_STREAM, then per kind one.
            let kept_beyond = kept[0].diagnostics.len() - MAX_PER_STREAM;
            assert_eq!(
                usize::try_from(not_kept).expect("a count") + kept[0].diagnostics.len(),
                findings.len()
            );
            assert!(kept_beyond <= 8, "{kept_beyond} kept beyond the bound");
            let all = judge_validator(case, &whole, &plain);
            let some = judge_validator(case, &kept, &plain);
            assert_eq!(
                (all.pass, all.outcome(), &all.attributions),
                (some.pass, some.outcome(), &some.attributions),
                "{}",
                case.name
            );
        }
        // Judged with every finding but those beyond the bound, the expected error would be
        // missed: what is kept there decides.
        let mut called_for = findings[..notices].to_vec();
        called_for.push(("ASR-212", "error", 2));
        let first: Vec<(&str, &str, usize)> = called_for[..MAX_PER_STREAM].to_vec();
        assert!(!judge_validator(negative, &answer_of(&first), &plain).pass);
        let retention = Retention::new(negative, &plain);
        let (_, kept, not_kept) = whole_and_kept(&reply_line(false, &called_for), &retention);
        assert_eq!(usize::try_from(not_kept), Ok(notices - MAX_PER_STREAM));
        assert!(judge_validator(negative, &kept, &plain).pass);
    }

    fn answer_of(findings: &[(&str, &str, usize)]) -> Vec<StreamAnswer> {
        let line = reply_line(false, findings);
        match serde_json::from_slice(&line).expect("a reply") {
            crate::protocol::Reply::Answered { streams, .. } => streams,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_bounded_parse_reads_replies_as_the_derived_one_does() {
        let everything = |_: usize, _: &AnswerDiagnostic| true;
        for line in [
            r#"{"type":"answered","seq":3,"streams":[{"valid":false,"diagnostics":[{"rule":"ASR-212","severity":"error","line":2,"pointer":"/a","message":"m"}],"reading":null},{"diagnostics":[],"valid":true}]}"#,
            r#"{"seq":4,"type":"answered","outputs":[{"name":"","lines":["{}"]}]}"#,
            r#"{"type":"skipped","seq":3,"reason":"no"}"#,
            r#"{"type":"started","protocol":1,"implementation":{"name":"x","version":"1","language":"rust"},"roles":["validator"],"formatVersions":["0.1"]}"#,
        ] {
            let derived: crate::protocol::Reply = serde_json::from_str(line).expect(line);
            let mut keep = everything;
            let bounded = crate::protocol::reply_keeping(line.as_bytes(), &mut keep).expect(line);
            assert_eq!((bounded.reply, bounded.not_kept), (derived, 0), "{line}");
        }
        for (line, says) in [
            (
                r#"{"type":"answered","seq":1,"streams":[{"valid":true,"extra":1}]}"#,
                "unknown field `extra`",
            ),
            (
                r#"{"type":"answered","seq":1,"streams":[{"diagnostics":[]}]}"#,
                "missing field `valid`",
            ),
            (
                r#"{"type":"answered","seq":1,"streams":[],"streams":[]}"#,
                "duplicate field `streams`",
            ),
            (
                r#"{"type":"answered","seq":1,"seq":2}"#,
                "duplicate field `seq`",
            ),
            (
                r#"{"type":"skipped","seq":1,"reason":"r","streams":[]}"#,
                "unknown field `streams`",
            ),
            (
                r#"{"type":"answered","seq":1,"streams":[{"valid":true,"diagnostics":[{"rule":"R"}]}]}"#,
                "missing field",
            ),
            (r#"{"type":"answered","seq":1} x"#, "trailing characters"),
        ] {
            let mut keep = everything;
            let error = crate::protocol::reply_keeping(line.as_bytes(), &mut keep)
                .expect_err(line)
                .to_string();
            assert!(error.contains(says), "{line}: {error}");
        }
    }

    #[test]
    fn a_missed_warning_or_notice_alone_is_non_strict_never_a_fail() {
        let mut j = Judgement::passing();
        j.charge(
            "the answer lacks a notice".into(),
            Some("ASR-X-020"),
            Failure::Lenient,
            None,
            true,
        );
        assert_eq!(j.outcome(), Outcome::NonStrict);
        j.charge(
            "a decision".into(),
            Some("ASR-415"),
            Failure::Reading,
            Some("d1"),
            false,
        );
        assert_eq!(j.outcome(), Outcome::NonStrict);
        j.fail(
            "the answer lacks an error".into(),
            Some("ASR-212"),
            Failure::Lenient,
            None,
        );
        assert_eq!(j.outcome(), Outcome::Fail);
    }

    #[test]
    fn a_negative_needs_the_verdict_and_the_rule_at_its_line() {
        let cases = corpus();
        let case = find(&cases, "messages/ASR-212/n_image_data_and_blob");
        let right = judged(case, false, &[("ASR-212", Severity::Error, 2)]);
        assert!(right.pass, "{:?}", right.reasons);
        assert_eq!(right.outcome(), Outcome::Pass);
        let wrong_rule = judged(case, false, &[("ASR-231", Severity::Error, 2)]);
        assert!(!wrong_rule.pass, "a rejection for the wrong reason fails");
        assert_eq!(wrong_rule.missing.len(), 1);
        assert_eq!(wrong_rule.extra.len(), 1);
        assert_eq!(
            charged(&wrong_rule),
            [
                (Some("ASR-231"), Failure::OverStrict),
                (Some("ASR-212"), Failure::Lenient)
            ]
        );
        let place = |rule: &str, kind, line| Place {
            rule: rule.to_owned(),
            kind,
            line,
            part: None,
        };
        assert_eq!(
            wrong_rule.places,
            [
                place("ASR-231", Failure::OverStrict, 2),
                place("ASR-212", Failure::Lenient, 2)
            ],
            "where each failure is"
        );
        let wrong_line = judged(case, false, &[("ASR-212", Severity::Error, 1)]);
        assert!(!wrong_line.pass);
        assert_eq!(
            wrong_line.places,
            [
                place("ASR-212", Failure::OverStrict, 1),
                place("ASR-212", Failure::Lenient, 2)
            ]
        );
        assert!(right.places.is_empty());
        let accepted = judged(case, true, &[]);
        assert_eq!(charged(&accepted), [(Some("ASR-212"), Failure::Lenient)]);
        let as_warning = judged(case, true, &[("ASR-212", Severity::Warning, 2)]);
        assert_eq!(
            charged(&as_warning),
            [(Some("ASR-212"), Failure::Lenient)],
            "an error reported as a warning is missed"
        );
        let strict = judge_validator(
            case,
            &answer(false, &[("ASR-212", Severity::Error, 2)]),
            &Strictness {
                pointers: true,
                ..Strictness::default()
            },
        );
        assert!(!strict.pass, "no pointer given, and pointers are compared");
    }

    #[test]
    fn an_error_the_stream_does_not_call_for_is_charged_to_the_rule_cited_not_the_cases() {
        let cases = corpus();
        // The AUN case tests ASR-210 (and more); an implementation wrongly rejecting the
        // `from` address under ASR-228 fails the case, under ASR-228 alone.
        let case = find(&cases, "messages/ASR-210/y_aun_custom_payload_unknown_part");
        let wrong = judged(case, false, &[("ASR-228", Severity::Error, 2)]);
        assert_eq!(wrong.outcome(), Outcome::Fail);
        assert_eq!(charged(&wrong), [(Some("ASR-228"), Failure::OverStrict)]);
        // An id the catalog does not know is charged to the case's rules.
        let unknown = judged(case, false, &[("MY-7", Severity::Error, 2)]);
        let rules: Vec<Option<&str>> = charged(&unknown).iter().map(|(r, _)| *r).collect();
        assert_eq!(
            rules,
            case.sidecar
                .rules
                .iter()
                .map(|r| Some(r.as_str()))
                .collect::<Vec<_>>()
        );
        // Rejected with no error at all: the case's own rule.
        let bare = judged(case, false, &[]);
        assert_eq!(charged(&bare), [(Some("ASR-210"), Failure::OverStrict)]);
        // Warnings never fail.
        let warned = judged(case, true, &[("ASR-228", Severity::Warning, 2)]);
        assert!(warned.pass);
        // An extra error on a negative case is over-strict too.
        let negative = find(&cases, "messages/ASR-212/n_image_data_and_blob");
        let both = judge_validator(
            negative,
            &answer(
                false,
                &[
                    ("ASR-212", Severity::Error, 2),
                    ("ASR-210", Severity::Error, 2),
                ],
            ),
            &Strictness::default(),
        );
        assert_eq!(charged(&both), [(Some("ASR-210"), Failure::OverStrict)]);
    }

    #[test]
    fn a_missing_warning_is_lenient_on_a_should_only() {
        let cases = corpus();
        let case = cases
            .iter()
            .find(|c| {
                c.verdict() == Some(Verdict::Reject)
                    && c.sidecar.expect.validator.as_ref().is_some_and(|v| {
                        v.valid && v.violations.iter().all(|x| x.severity == Severity::Warning)
                    })
            })
            .expect("a case of warnings only");
        let silent = judged(case, true, &[]);
        assert!(!silent.pass);
        assert!(
            silent
                .attributions
                .iter()
                .all(|a| a.kind == Failure::Lenient && a.warning && !a.is_hard())
        );
        let rejected = judged(case, false, &[]);
        assert!(
            rejected
                .attributions
                .iter()
                .any(|a| a.kind == Failure::OverStrict && a.is_hard())
        );
    }

    #[test]
    fn inferred_checks_match_by_rule_or_by_an_alias_the_implementation_declared() {
        let cases = corpus();
        let case = cases
            .iter()
            .find(|c| c.name.starts_with("inferred/ASR-X-004/n_"))
            .expect("a duplicate-key case");
        let line = case
            .sidecar
            .expect
            .validator
            .as_ref()
            .expect("validator")
            .violations[0]
            .line;
        assert!(judged(case, false, &[("ASR-X-004", Severity::Error, line)]).pass);
        // Another finding on that line, of the same severity, no longer hides the miss.
        let other = judged(case, false, &[("ASR-X-003", Severity::Error, line)]);
        assert!(!other.pass);
        let own = answer(false, &[("DUPLICATE_KEY", Severity::Error, line)]);
        assert!(
            !judge_validator(case, &own, &Strictness::default()).pass,
            "an undeclared own id"
        );
        let declared = Strictness {
            aliases: [("DUPLICATE_KEY".to_owned(), "ASR-X-004".to_owned())].into(),
            ..Strictness::default()
        };
        assert!(
            judge_validator(case, &own, &declared).pass,
            "a declared own id"
        );
    }

    #[test]
    fn an_implementation_defined_case_accepts_either_branch_within_bounds() {
        let cases = corpus();
        let case = cases
            .iter()
            .find(|c| c.verdict() == Some(Verdict::Either))
            .expect("an i_ case");
        let cite = case
            .sidecar
            .expect
            .validator
            .as_ref()
            .expect("validator")
            .if_rejected[0]
            .clone();
        assert!(judged(case, true, &[]).pass);
        assert!(judged(case, false, &[(&cite, Severity::Error, 1)]).pass);
        let other = judged(case, false, &[("ASR-200", Severity::Error, 1)]);
        assert!(!other.pass);
        assert!(charged(&other).contains(&(Some("ASR-200"), Failure::OverStrict)));
    }

    #[test]
    fn a_case_resting_on_a_decision_is_non_strict_when_it_differs() {
        let cases = corpus();
        let mut case = find(&cases, "messages/ASR-212/n_image_data_and_blob").clone();
        case.sidecar.decision = Some("unresolved-order".into());
        let accepted = judged(&case, true, &[]);
        assert_eq!(accepted.outcome(), Outcome::NonStrict);
        assert_eq!(
            accepted.attributions[0].decision.as_deref(),
            Some("unresolved-order")
        );
    }

    const STREAM: &str = concat!(
        r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"codex"},"sessionId":"s1","lineage":{"spawnedBy":{"session":"codex:p1"},"executedBy":[{"session":"codex:a%3a1"}]}}"#,
        "\n",
        r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"assistant","author":"model","content":[{"type":"reasoning","text":"x","signature":"SIG"},{"type":"text","text":"t"}]}"#,
        "\n",
    );

    /// Each mismatch's pointer with the rule it is charged to.
    fn charged_members(expected: &Value, read: &Value, kinds: &Kinds) -> Vec<String> {
        compare_readings(expected, read, kinds)
            .into_iter()
            .map(|m| format!("{} {}", m.pointer, m.rule))
            .collect()
    }

    #[test]
    fn readings_compare_member_by_member_under_the_members_rule_with_types_kept_apart() {
        let kinds = Kinds::of_stream(STREAM.as_bytes());
        let expected = serde_json::json!({"session": {"root": "no"}, "records": {"r1": {"originality": "unknown", "delivered": true}}});
        let same = serde_json::json!({"session": {"root": "no", "unresolved": []}, "records": {"r1": {"originality": "unknown", "delivered": true, "type": "message"}}});
        assert!(
            compare_readings(&expected, &same, &kinds).is_empty(),
            "members left out are not compared"
        );
        let wrong = serde_json::json!({"session": {"root": "yes"}, "records": {"r1": {"originality": "original", "delivered": 1}}});
        assert_eq!(
            charged_members(&expected, &wrong, &kinds),
            [
                "/records/r1/delivered ASR-237",
                "/records/r1/originality ASR-416",
                "/session/root ASR-401"
            ]
        );
        let parts =
            serde_json::json!({"records": {"r1": {"parts": [{"index": ["x"]}, {"index": ["t"]}]}}});
        let longer = serde_json::json!({"records": {"r1": {"parts": [{"index": ["x", "SIG"]}, {"index": []}]}}});
        assert_eq!(
            charged_members(&parts, &longer, &kinds),
            [
                "/records/r1/parts/0/index ASR-215",
                "/records/r1/parts/1/index ASR-215"
            ]
        );
    }

    #[test]
    fn a_reading_that_differs_only_on_a_decision_names_it() {
        let kinds = Kinds::of_stream(STREAM.as_bytes());
        let expected = serde_json::json!({"session": {"unresolved": ["codex:a%3A1", "codex:p1"]}, "totals": {"ownRecords": ["r1", "r2"]}});
        let other_order = serde_json::json!({"session": {"unresolved": ["codex:p1", "codex:a%3a1"]}, "totals": {"ownRecords": ["r2", "r1"]}});
        let found = compare_readings(&expected, &other_order, &kinds);
        let decisions: Vec<(&str, Option<&str>)> = found
            .iter()
            .map(|m| (m.pointer.as_str(), m.decision.as_deref()))
            .collect();
        assert_eq!(
            decisions,
            [
                ("/session/unresolved", Some("unresolved-form")),
                ("/totals/ownRecords", Some("own-records-order"))
            ]
        );
        let missing_one = serde_json::json!({"session": {"unresolved": ["codex:p1"]}, "totals": {"ownRecords": ["r1", "r2"]}});
        let found = compare_readings(&expected, &missing_one, &kinds);
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].rule.as_str(), found[0].decision.as_deref()),
            ("ASR-406", None)
        );
    }

    #[test]
    fn two_readings_differ_both_ways() {
        let kinds = Kinds::of_stream(STREAM.as_bytes());
        let a =
            serde_json::json!({"session": {"root": "no"}, "records": {"r1": {"delivered": true}}});
        let b = serde_json::json!({"session": {"root": "no", "unresolved": []}, "records": {"r1": {"delivered": false}}});
        let found = diff_readings(&a, &b, &kinds);
        let pointers: Vec<&str> = found.iter().map(|m| m.pointer.as_str()).collect();
        assert_eq!(pointers, ["/records/r1/delivered", "/session/unresolved"]);
        assert_eq!(found[0].rule, "ASR-237");
        assert!(diff_readings(&a, &a, &kinds).is_empty());
    }

    fn reading_answer(valid: bool, reading: Option<Value>) -> Vec<StreamAnswer> {
        vec![StreamAnswer {
            valid,
            diagnostics: Vec::new(),
            reading: reading.and_then(|r| serde_json::from_value(r).ok()),
        }]
    }

    /// The case's reference reading, changed by `change`, judged.
    fn judged_reading(case: &Case, change: impl Fn(&mut Value)) -> Judgement {
        let bytes = std::fs::read(&case.streams[0].1).expect("stream");
        let mut reading =
            serde_json::to_value(crate::reading::read_bytes(&bytes).reading).expect("json");
        change(&mut reading);
        judge_reader(case, &reading_answer(true, Some(reading)))
    }

    fn attributions(j: &Judgement) -> Vec<(Option<&str>, Option<&str>)> {
        j.attributions
            .iter()
            .map(|a| (a.rule.as_deref(), a.decision.as_deref()))
            .collect()
    }

    #[test]
    fn the_streams_of_a_case_are_read_as_one_set() {
        let cases = corpus();
        let case = find(
            &cases,
            "lineage/ASR-406/y_reader_a_set_resolves_only_the_sessions_it_holds",
        );
        let bytes: Vec<Vec<u8>> = case
            .streams
            .iter()
            .map(|(_, p)| std::fs::read(p).expect("stream"))
            .collect();
        let answer = |outcomes: Vec<crate::reading::ReadOutcome>| -> Vec<StreamAnswer> {
            outcomes
                .iter()
                .map(|o| StreamAnswer::read(o.accepted, Some((&o.reading).into())))
                .collect()
        };
        let set = crate::reading::read_set(&bytes.iter().map(Vec::as_slice).collect::<Vec<_>>());
        let judged = judge_reader(case, &answer(set));
        assert!(judged.pass, "{:?}", judged.reasons);
        // Each stream read alone lists the other's session: ASR-406, in both streams.
        let alone = bytes
            .iter()
            .map(|b| crate::reading::read_bytes(b))
            .collect();
        let judged = judge_reader(case, &answer(alone));
        assert_eq!(attributions(&judged), [(Some("ASR-406"), None)]);
        assert_eq!(judged.reasons.len(), 2, "{:?}", judged.reasons);
        assert!(judged.reasons[0].starts_with("child: /session/unresolved"));
        // An answer for one stream of two.
        let set = crate::reading::read_set(&bytes.iter().map(Vec::as_slice).collect::<Vec<_>>());
        let judged = judge_reader(case, &answer(set)[..1]);
        assert!(!judged.pass);
        assert_eq!(attributions(&judged), [(Some("ASR-406"), None)]);
    }

    #[test]
    fn a_case_decision_softens_the_members_it_names_and_nothing_else() {
        let cases = corpus();
        let case = find(&cases, "lineage/ASR-415/y_reader_declaration_in_prefix");
        assert_eq!(
            case.sidecar.decision.as_deref(),
            Some("declarations-outside-the-prefix")
        );
        // The declaration read as a copy: what the decision is about.
        let declaration = judged_reading(case, |r| {
            r["records"]["d1"]["originality"] = "copy".into();
            r["totals"]["ownRecords"] = serde_json::json!(["r5", "r6"]);
        });
        assert_eq!(
            declaration.outcome(),
            Outcome::NonStrict,
            "{:?}",
            declaration.reasons
        );
        assert!(
            attributions(&declaration)
                .iter()
                .all(|(_, d)| *d == Some("declarations-outside-the-prefix"))
        );
        // The prefix ending one record late: nothing the decision is about.
        let off_by_one = judged_reading(case, |r| {
            r["records"]["r5"]["originality"] = "copy".into();
            r["totals"]["ownRecords"] = serde_json::json!(["d1", "r6"]);
        });
        assert_eq!(
            off_by_one.outcome(),
            Outcome::Fail,
            "{:?}",
            off_by_one.reasons
        );
        assert_eq!(attributions(&off_by_one), [(Some("ASR-415"), None)]);
        assert_eq!(off_by_one.reasons.len(), 2, "{:?}", off_by_one.reasons);
    }

    #[test]
    fn credits_are_judged_record_by_record_under_the_rule_that_decides_each() {
        let cases = corpus();
        let case = find(&cases, "lineage/ASR-415/y_reader_declaration_in_prefix");
        let credit = |extra: &[&str]| {
            judged_reading(case, |r| {
                let own = r["totals"]["ownRecords"].as_array_mut().expect("array");
                own.extend(extra.iter().map(|id| Value::from(*id)));
            })
        };
        // A copy credited is ASR-417's; the header credited is no record (ASR-X-007); an id
        // the stream does not have, ASR-X-009.
        assert_eq!(attributions(&credit(&["r1"])), [(Some("ASR-417"), None)]);
        assert_eq!(attributions(&credit(&["h"])), [(Some("ASR-X-007"), None)]);
        assert_eq!(attributions(&credit(&["zz"])), [(Some("ASR-X-009"), None)]);
        // Credited in another order: the decision own-records-order, softened.
        let reordered = judged_reading(case, |r| {
            r["totals"]["ownRecords"] = serde_json::json!(["r6", "r5", "d1"]);
        });
        assert_eq!(
            attributions(&reordered),
            [(Some("ASR-417"), Some("own-records-order"))]
        );
        // A record of unknown originality credited is ASR-416's.
        let unknown = find(&cases, "lineage/ASR-416/y_reader_inherits_unknown");
        let credited = judged_reading(unknown, |r| {
            let ids: Vec<Value> = r["records"]
                .as_object()
                .map(|m| m.keys().map(|k| Value::from(k.as_str())).collect())
                .unwrap_or_default();
            r["totals"]["ownRecords"] = Value::Array(ids);
        });
        assert!(
            credited
                .reasons
                .iter()
                .any(|r| r.starts_with("/totals/ownRecords (ASR-416): \"r2\"")),
            "{:?}",
            credited.reasons
        );
        // Its r1 is a copy (copiedFrom): crediting it is ASR-417's.
        assert_eq!(
            attributions(&credited),
            [(Some("ASR-417"), None), (Some("ASR-416"), None)]
        );
    }

    #[test]
    fn a_reader_is_judged_on_every_record_it_lists_and_on_refusing() {
        let cases = corpus();
        let case = find(&cases, "messages/ASR-224/y_reader_part_values_override");
        let bytes = std::fs::read(&case.streams[0].1).expect("stream");
        let right = serde_json::to_value(crate::reading::read_bytes(&bytes).reading).expect("json");
        let pass = judge_reader(case, &reading_answer(true, Some(right.clone())));
        assert!(pass.pass, "{:?}", pass.reasons);
        assert!(pass.notes.is_empty());
        let mut extra = right.clone();
        extra["records"]["ghost"] =
            serde_json::json!({"type": "message", "superseded": false, "originality": "original"});
        extra["records"]["ghost"]["mood"] = "calm".into();
        let judged = judge_reader(case, &reading_answer(true, Some(extra)));
        assert_eq!(
            charged(&judged),
            [(Some("ASR-X-009"), Failure::Reading)],
            "a record the stream does not have: {:?}",
            judged.reasons
        );
        assert_eq!(
            judged.notes.len(),
            1,
            "an undefined member is noted: {:?}",
            judged.notes
        );
        let refused = judge_reader(case, &reading_answer(false, Some(right)));
        assert!(
            refused
                .attributions
                .iter()
                .all(|a| a.kind == Failure::Refusal)
        );
        assert_eq!(refused.attributions.len(), case.sidecar.rules.len());
        let no_reading = judge_reader(case, &reading_answer(true, None));
        assert!(!no_reading.pass);
        // A stream without its header must be refused; reading it anyway fails, refusing
        // passes whatever was read before.
        let headless = find(&cases, "inferred/ASR-X-007/n_no_header");
        let read_anyway = judge_reader(headless, &reading_answer(true, None));
        assert_eq!(
            charged(&read_anyway),
            [(Some("ASR-X-007"), Failure::Refusal)]
        );
        assert!(judge_reader(headless, &reading_answer(false, None)).pass);
    }

    #[test]
    fn a_reader_may_refuse_only_where_the_case_lets_it() {
        let cases = corpus();
        let must_read = find(&cases, "messages/ASR-224/y_reader_part_values_override");
        let bytes = std::fs::read(&must_read.streams[0].1).expect("stream");
        let right = serde_json::to_value(crate::reading::read_bytes(&bytes).reading).expect("json");
        let mut wrong = right.clone();
        wrong["records"]["r1"]["parts"][0]["author"] = "model".into();
        let mut lets = must_read.clone();
        lets.sidecar.decision = Some("empty-lines".into());
        if let Some(reader) = lets.sidecar.expect.reader.as_mut() {
            reader.may_refuse = true;
        }
        let refused = judge_reader(&lets, &reading_answer(false, Some(wrong.clone())));
        assert!(refused.pass, "{:?}", refused.reasons);
        let read_wrongly = judge_reader(&lets, &reading_answer(true, Some(wrong.clone())));
        assert!(!read_wrongly.pass);
        assert!(
            read_wrongly
                .attributions
                .iter()
                .all(|a| a.kind == Failure::Reading),
            "{:?}",
            read_wrongly.reasons
        );
        let read_rightly = judge_reader(&lets, &reading_answer(true, Some(right.clone())));
        assert!(read_rightly.pass, "{:?}", read_rightly.reasons);
        let refused_without = judge_reader(must_read, &reading_answer(false, Some(right)));
        assert!(!refused_without.pass);
        assert!(
            refused_without
                .attributions
                .iter()
                .all(|a| a.kind == Failure::Refusal)
        );
    }
}
