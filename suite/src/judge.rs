//! Judging an implementation's answer to a case against the case's sidecar, as PROTOCOL.md
//! ("How answers are judged") says.

use crate::case::{Case, Verdict, Violation};
use crate::diagnostic::{Severity, is_inferred_rule, push_token};
use crate::protocol::{ReadingAnswer, StreamAnswer};
use serde_json::Value;

/// The judgement of one answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Judgement {
    /// The answer is what the sidecar expects.
    pub pass: bool,
    /// Why not, in one sentence each.
    pub reasons: Vec<String>,
    /// Expected findings the answer lacks.
    pub missing: Vec<Violation>,
    /// Findings of the answer beyond the expected ones (never a failure by themselves).
    pub extra: Vec<Violation>,
    /// The expectation and the answer as lines, for a diff.
    pub expected_text: String,
    /// The answer as lines.
    pub actual_text: String,
}

/// How strictly findings are matched.
#[derive(Debug, Clone, Copy, Default)]
pub struct Strictness {
    /// Compare JSON Pointers too.
    pub pointers: bool,
}

/// Judges a validator's answer (one entry per stream of the case).
pub fn judge_validator(case: &Case, answer: &[StreamAnswer], strictness: Strictness) -> Judgement {
    let Some(expect) = &case.sidecar.expect.validator else {
        return Judgement {
            pass: true,
            reasons: Vec::new(),
            missing: Vec::new(),
            extra: Vec::new(),
            expected_text: String::new(),
            actual_text: String::new(),
        };
    };
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
                rule: d.rule.clone(),
                severity: d.severity,
                line: d.line,
                pointer: d.pointer.clone().unwrap_or_default(),
                file: part.clone(),
            })
        })
        .collect();
    let accepted = answer.iter().all(|s| s.valid);
    let mut reasons = Vec::new();
    let mut missing = Vec::new();
    let matches = |want: &Violation, got: &Violation| {
        want.file == got.file
            && want.line == got.line
            && if is_inferred_rule(&want.rule) {
                want.severity == got.severity
            } else {
                want.rule == got.rule
            }
            && (!strictness.pointers || want.pointer == got.pointer)
    };
    match case.verdict() {
        Some(Verdict::Accept) | None => {
            if !accepted {
                reasons.push(
                    "the stream must be accepted, but the answer says it is not valid".to_owned(),
                );
            }
        }
        Some(Verdict::Reject) => {
            if accepted == expect.valid {
                // the verdict matches; findings decide
            } else if expect.valid {
                reasons.push("the stream is valid (its findings are warnings or notices), but the answer rejects it".to_owned());
            } else {
                reasons.push(
                    "the stream must be rejected, but the answer says it is valid".to_owned(),
                );
            }
            for want in &expect.violations {
                if !actual.iter().any(|got| matches(want, got)) {
                    missing.push(want.clone());
                }
            }
            if !missing.is_empty() {
                reasons.push(format!("{} expected finding(s) missing", missing.len()));
            }
        }
        Some(Verdict::Either) => {
            if !accepted
                && !actual.iter().any(|got| {
                    got.severity == Severity::Error && expect.if_rejected.contains(&got.rule)
                })
            {
                reasons.push(format!(
                    "the answer rejects the stream without citing one of the rules a rejection must cite: {}",
                    expect.if_rejected.join(", ")
                ));
            }
        }
    }
    let extra: Vec<Violation> = actual
        .iter()
        .filter(|got| !expect.violations.iter().any(|want| matches(want, got)))
        .cloned()
        .collect();
    Judgement {
        pass: reasons.is_empty(),
        reasons,
        missing,
        extra,
        expected_text: render(expect.valid, &expect.violations),
        actual_text: render(accepted, &actual),
    }
}

/// One member where a reading differs from the expected one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadingMismatch {
    /// JSON Pointer into the reading.
    pub pointer: String,
    /// The rule the member comes from.
    pub rule: String,
    /// The expected value.
    pub expected: Value,
    /// The value read, if any.
    pub actual: Option<Value>,
}

impl std::fmt::Display for ReadingMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let actual = self
            .actual
            .as_ref()
            .map_or_else(|| "nothing".to_owned(), Value::to_string);
        write!(
            f,
            "{} ({}): expected {}, read {actual}",
            self.pointer, self.rule, self.expected
        )
    }
}

/// Compares a reading with an expected one, member by member: objects for the members the
/// expectation gives, arrays element by element and in full, JSON types kept apart. Each
/// mismatch names the rule its member comes from, preferring the rules the case names.
pub fn compare_readings(
    expected: &Value,
    actual: &Value,
    rules: &[String],
) -> Vec<ReadingMismatch> {
    let mut mismatches = Vec::new();
    compare_at(
        expected,
        Some(actual),
        &mut String::new(),
        rules,
        &mut mismatches,
    );
    mismatches
}

fn compare_at(
    expected: &Value,
    actual: Option<&Value>,
    pointer: &mut String,
    rules: &[String],
    out: &mut Vec<ReadingMismatch>,
) {
    let mismatch = |pointer: &str, out: &mut Vec<ReadingMismatch>| {
        out.push(ReadingMismatch {
            pointer: pointer.to_owned(),
            rule: rule_for_member(pointer, rules),
            expected: expected.clone(),
            actual: actual.cloned(),
        });
    };
    match (expected, actual) {
        (Value::Object(want), Some(Value::Object(got))) => {
            for (key, value) in want {
                let mark = pointer.len();
                push_token(pointer, key);
                compare_at(value, got.get(key), pointer, rules, out);
                pointer.truncate(mark);
            }
        }
        (Value::Array(want), Some(Value::Array(got))) if want.len() == got.len() => {
            for (index, (w, g)) in want.iter().zip(got).enumerate() {
                let mark = pointer.len();
                push_token(pointer, &index.to_string());
                compare_at(w, Some(g), pointer, rules, out);
                pointer.truncate(mark);
            }
        }
        (want, Some(got))
            if want == got && std::mem::discriminant(want) == std::mem::discriminant(got) => {}
        _ => mismatch(pointer, out),
    }
}

/// Every member where two readings differ, both ways: what one has and the other lacks,
/// and what both have with different values. `actual` is the second reading's value.
pub fn diff_readings(first: &Value, second: &Value, rules: &[String]) -> Vec<ReadingMismatch> {
    let mut out = Vec::new();
    diff_at(
        Some(first),
        Some(second),
        &mut String::new(),
        rules,
        &mut out,
    );
    out
}

fn diff_at(
    a: Option<&Value>,
    b: Option<&Value>,
    pointer: &mut String,
    rules: &[String],
    out: &mut Vec<ReadingMismatch>,
) {
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for key in keys {
                let mark = pointer.len();
                push_token(pointer, key);
                diff_at(x.get(key), y.get(key), pointer, rules, out);
                pointer.truncate(mark);
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) if x.len() == y.len() => {
            for (index, (v, w)) in x.iter().zip(y).enumerate() {
                let mark = pointer.len();
                push_token(pointer, &index.to_string());
                diff_at(Some(v), Some(w), pointer, rules, out);
                pointer.truncate(mark);
            }
        }
        (Some(v), Some(w)) if v == w => {}
        _ => out.push(ReadingMismatch {
            pointer: pointer.clone(),
            rule: rule_for_member(pointer, rules),
            expected: a.cloned().unwrap_or(Value::Null),
            actual: b.cloned(),
        }),
    }
}

/// The rule a member of the reading comes from: the first rule the case names (its main
/// rule first) that the member can come from, as `x-asr-rules` in
/// `schemas/reading.schema.json` says, else the member's first rule there; for a member
/// that comes from no rule, the case's first rule, else [`UNATTRIBUTED`].
fn rule_for_member(pointer: &str, rules: &[String]) -> String {
    let candidates = member_rules(pointer);
    rules
        .iter()
        .find(|r| candidates.contains(r))
        .or_else(|| candidates.first())
        .or_else(|| rules.first())
        .cloned()
        .unwrap_or_else(|| UNATTRIBUTED.to_owned())
}

/// The group of a mismatch that no rule accounts for (a whole record one side lacks, a
/// member no rule defines, on a stream that is not a case).
pub const UNATTRIBUTED: &str = "(no rule)";

/// The rules a member of the reading comes from (`x-asr-rules` of the innermost schema
/// that has them along the pointer), from the embedded reading schema.
pub fn member_rules(pointer: &str) -> Vec<String> {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    let schema = SCHEMA.get_or_init(|| {
        crate::embedded::schema("reading.schema.json")
            .and_then(|text| serde_json::from_str(text).ok())
            .unwrap_or(Value::Null)
    });
    let mut node = schema;
    let mut found = rules_of(node);
    for token in pointer.split('/').skip(1) {
        let next = node
            .get("properties")
            .and_then(|p| p.get(token))
            .or_else(|| node.get("additionalProperties").filter(|a| a.is_object()))
            .or_else(|| node.get("items"));
        let Some(mut next) = next else { break };
        // Follow local references: `#/$defs/record`.
        while let Some(target) = next.get("$ref").and_then(Value::as_str) {
            match target.strip_prefix('#').and_then(|p| schema.pointer(p)) {
                Some(resolved) => next = resolved,
                None => break,
            }
        }
        node = next;
        let here = rules_of(node);
        if !here.is_empty() {
            found = here;
        }
    }
    found
}

fn rules_of(node: &Value) -> Vec<String> {
    node.get("x-asr-rules")
        .and_then(Value::as_array)
        .map(|rules| {
            rules
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

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
pub fn judge_reader(case: &Case, answer: &[StreamAnswer]) -> Judgement {
    let mut judgement = Judgement {
        pass: true,
        reasons: Vec::new(),
        missing: Vec::new(),
        extra: Vec::new(),
        expected_text: String::new(),
        actual_text: String::new(),
    };
    let Some(expect) = &case.sidecar.expect.reader else {
        return judgement;
    };
    let Some(stream) = answer.first() else {
        judgement.pass = false;
        judgement.reasons.push("the answer has no stream".into());
        return judgement;
    };
    if stream.valid != expect.accepted {
        judgement.reasons.push(format!(
            "the reader {} the stream",
            if stream.valid { "accepted" } else { "rejected" }
        ));
    }
    let null = Value::Null;
    let actual = stream.reading.as_ref().map_or(&null, ReadingAnswer::json);
    if stream.reading.is_none() {
        judgement.reasons.push("the answer has no reading".into());
    } else {
        for mismatch in compare_readings(&expect.reading, actual, &case.sidecar.rules) {
            judgement.reasons.push(mismatch.to_string());
        }
    }
    judgement.pass = judgement.reasons.is_empty();
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default() + "\n";
    judgement.expected_text = format!("accepted: {}\n{}", expect.accepted, pretty(&expect.reading));
    judgement.actual_text = format!(
        "accepted: {}\n{}",
        stream.valid,
        pretty(&project(&expect.reading, actual))
    );
    judgement
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

    #[test]
    fn the_rules_of_a_member_come_from_the_reading_schema() {
        let rules = |pointer: &str| member_rules(pointer);
        assert_eq!(rules("/session/root"), ["ASR-401", "ASR-402"]);
        assert_eq!(rules("/session/unresolved/3"), ["ASR-406"]);
        assert_eq!(rules("/totals/ownRecords/0"), ["ASR-417", "ASR-416"]);
        assert_eq!(rules("/records/r1/originality")[0], "ASR-416");
        assert_eq!(rules("/records/r1/parts/2/render")[0], "ASR-218");
        assert_eq!(rules("/records/r1/parts/2/index/0")[0], "ASR-215");
        assert_eq!(rules("/records/r1/parts/2/origin"), ["ASR-224"]);
        assert!(rules("/records/r1/superseded").is_empty());
        assert!(rules("/records/r1").is_empty());
        assert!(rules("/nonsense/x").is_empty());
    }

    #[test]
    fn a_mismatch_goes_under_the_cases_rule_the_member_comes_from_or_is_said_unattributed() {
        let case = |rules: &[&str]| rules.iter().map(|r| (*r).to_owned()).collect::<Vec<_>>();
        let render = "/records/r1/parts/0/render";
        assert_eq!(
            rule_for_member(render, &case(&["ASR-406", "ASR-214"])),
            "ASR-214"
        );
        assert_eq!(rule_for_member(render, &case(&["ASR-406"])), "ASR-218");
        assert_eq!(
            rule_for_member("/records/r1/superseded", &case(&["ASR-222"])),
            "ASR-222"
        );
        assert_eq!(rule_for_member("/records/r1", &[]), UNATTRIBUTED);
    }

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

    #[test]
    fn a_negative_needs_the_verdict_and_the_rule_at_its_line() {
        let cases = corpus();
        let case = find(&cases, "messages/ASR-212/n_image_data_and_blob");
        let right = judge_validator(
            case,
            &answer(false, &[("ASR-212", Severity::Error, 2)]),
            Strictness::default(),
        );
        assert!(right.pass, "{:?}", right.reasons);
        let wrong_rule = judge_validator(
            case,
            &answer(false, &[("ASR-231", Severity::Error, 2)]),
            Strictness::default(),
        );
        assert!(!wrong_rule.pass, "a rejection for the wrong reason fails");
        assert_eq!(wrong_rule.missing.len(), 1);
        assert_eq!(wrong_rule.extra.len(), 1);
        let wrong_line = judge_validator(
            case,
            &answer(false, &[("ASR-212", Severity::Error, 1)]),
            Strictness::default(),
        );
        assert!(!wrong_line.pass);
        let accepted = judge_validator(case, &answer(true, &[]), Strictness::default());
        assert!(!accepted.pass);
        let strict = judge_validator(
            case,
            &answer(false, &[("ASR-212", Severity::Error, 2)]),
            Strictness { pointers: true },
        );
        assert!(!strict.pass, "no pointer given, and pointers are compared");
    }

    #[test]
    fn a_positive_passes_only_when_accepted_and_extra_findings_never_fail() {
        let cases = corpus();
        let case = find(&cases, "messages/ASR-212/y_image_blob_only");
        assert!(
            judge_validator(
                case,
                &answer(true, &[("ASR-X-999", Severity::Warning, 2)]),
                Strictness::default()
            )
            .pass
        );
        assert!(
            !judge_validator(
                case,
                &answer(false, &[("ASR-212", Severity::Error, 2)]),
                Strictness::default()
            )
            .pass
        );
    }

    #[test]
    fn inferred_checks_match_on_line_and_severity_under_any_id() {
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
        assert!(
            judge_validator(
                case,
                &answer(false, &[("DUPLICATE_KEY", Severity::Error, line)]),
                Strictness::default()
            )
            .pass
        );
        assert!(
            !judge_validator(
                case,
                &answer(false, &[("DUPLICATE_KEY", Severity::Warning, line)]),
                Strictness::default()
            )
            .pass
        );
    }

    #[test]
    fn readings_compare_member_by_member_with_types_kept_apart() {
        let rules = vec!["ASR-423".to_owned()];
        let expected = serde_json::json!({"session": {"root": "no"}, "records": {"r1": {"originality": "unknown", "delivered": true}}});
        let same = serde_json::json!({"session": {"root": "no", "unresolved": []}, "records": {"r1": {"originality": "unknown", "delivered": true, "type": "message"}}});
        assert!(
            compare_readings(&expected, &same, &rules).is_empty(),
            "members left out are not compared"
        );
        let wrong = serde_json::json!({"session": {"root": "yes"}, "records": {"r1": {"originality": "original", "delivered": 1}}});
        let found = compare_readings(&expected, &wrong, &rules);
        let pointers: Vec<(&str, &str)> = found
            .iter()
            .map(|m| (m.pointer.as_str(), m.rule.as_str()))
            .collect();
        assert_eq!(
            pointers,
            [
                ("/records/r1/delivered", "ASR-237"),
                ("/records/r1/originality", "ASR-423"),
                ("/session/root", "ASR-401")
            ]
        );
        let missing = serde_json::json!({"session": {"root": "no"}, "records": {}});
        assert_eq!(
            compare_readings(&expected, &missing, &rules)[0].pointer,
            "/records/r1"
        );
        let parts = serde_json::json!({"records": {"r1": {"parts": [{"index": ["a"]}]}}});
        let longer = serde_json::json!({"records": {"r1": {"parts": [{"index": ["a", "SIG"]}]}}});
        let found = compare_readings(&parts, &longer, &[]);
        assert_eq!(
            (found[0].pointer.as_str(), found[0].rule.as_str()),
            ("/records/r1/parts/0/index", "ASR-215")
        );
    }

    #[test]
    fn two_readings_differ_both_ways() {
        let a =
            serde_json::json!({"session": {"root": "no"}, "records": {"r1": {"delivered": true}}});
        let b = serde_json::json!({"session": {"root": "no", "unresolved": []}, "records": {"r1": {"delivered": false}}});
        let found = diff_readings(&a, &b, &[]);
        let pointers: Vec<&str> = found.iter().map(|m| m.pointer.as_str()).collect();
        assert_eq!(pointers, ["/records/r1/delivered", "/session/unresolved"]);
        assert_eq!(found[0].rule, "ASR-237");
        assert!(diff_readings(&a, &a, &[]).is_empty());
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
        assert!(judge_validator(case, &answer(true, &[]), Strictness::default()).pass);
        assert!(
            judge_validator(
                case,
                &answer(false, &[(&cite, Severity::Error, 1)]),
                Strictness::default()
            )
            .pass
        );
        assert!(
            !judge_validator(
                case,
                &answer(false, &[("ASR-200", Severity::Error, 1)]),
                Strictness::default()
            )
            .pass
        );
    }
}
