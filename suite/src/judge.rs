//! Judging an implementation's answer to a case against the case's sidecar, as PROTOCOL.md
//! ("How answers are judged") says.

use crate::case::{Case, Verdict, Violation};
use crate::diagnostic::{Severity, is_inferred_rule};
use crate::protocol::StreamAnswer;

/// The judgement of one answer.
#[derive(Debug, Clone, PartialEq, Eq)]
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
