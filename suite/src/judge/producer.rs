//! Judging a producer's answer: the streams it wrote of a source fixture, against the
//! fixture (a valid stream, with no warning it does not allow, meeting every fidelity
//! assertion), each failure charged to its rule.

use super::{Failure, Judgement};
use crate::case::{Case, Status};
use crate::check::{CheckOptions, check_bytes};
use crate::diagnostic::Severity;
use crate::fidelity::{Source, evaluate};
use crate::source::{FixtureError, SourceFixture};
use std::fmt::Write as _;

/// Judges a producer's output streams (name and bytes) for a producer case. A case with no
/// fixture, or whose fixture's files cannot be read, fails under no rule, saying why.
pub fn judge_producer(case: &Case, outputs: &[(String, Vec<u8>)]) -> Judgement {
    let mut judgement = Judgement::passing();
    let Some(fixture) = &case.fixture else {
        judgement.fail(
            "the case is no producer case: it has no source fixture".into(),
            None,
            Failure::Fidelity,
            None,
        );
        return judgement;
    };
    let (source, golden) = match (fixture.source(), fixture.expected()) {
        (Ok(source), Ok(golden)) => (source, golden),
        (Err(e), _) | (_, Err(e)) => {
            judgement.fail(e.to_string(), None, Failure::Fidelity, None);
            return judgement;
        }
    };
    judgement.expected_text = streams_text(&golden);
    judgement.actual_text = streams_text(outputs);
    let output: Vec<(&str, &[u8])> = outputs
        .iter()
        .map(|(name, bytes)| (name.as_str(), bytes.as_slice()))
        .collect();
    // A tentative fixture's assertions rest on a reading of the spec (or of the source's
    // shape) the kit has not settled: failing one is non-strict, never non-conformant. Its
    // output must still be a valid stream and keep what every conversion keeps.
    let tentative = (fixture.sidecar.status == Status::Tentative)
        .then(|| format!("tentative fixture {}", fixture.sidecar.id));
    for failure in judge_output(fixture, &source, &output) {
        // The conservation properties hold of every conversion: a tentative fixture softens
        // only what it asserts itself.
        let decision = tentative
            .as_deref()
            .filter(|_| failure.kind == Failure::Fidelity && !failure.property);
        judgement.charge(
            failure.message,
            Some(&failure.rule),
            failure.kind,
            decision.or(failure.decision.as_deref()),
            failure.warning,
        );
    }
    judgement
}

/// Judges a producer's output of a native session that is no fixture (a generated one):
/// the output must be valid streams with no warning, and break no conservation property of
/// the facts read from `files` (name and bytes) of `format`.
pub fn judge_conversion(
    format: &str,
    files: &[(String, Vec<u8>)],
    outputs: &[(String, Vec<u8>)],
) -> Judgement {
    let mut judgement = Judgement::passing();
    judgement.actual_text = streams_text(outputs);
    let output: Vec<(&str, &[u8])> = outputs
        .iter()
        .map(|(name, bytes)| (name.as_str(), bytes.as_slice()))
        .collect();
    let facts = crate::facts::read(format, files);
    let failures = stream_failures(&output, &[])
        .into_iter()
        .chain(property_failures(&facts, &output));
    for failure in failures {
        judgement.charge(
            failure.message,
            Some(&failure.rule),
            failure.kind,
            failure.decision.as_deref(),
            failure.warning,
        );
    }
    judgement
}

/// One way a producer's output fails its fixture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFailure {
    /// The rule it breaks.
    pub rule: String,
    /// What is wrong, in one sentence.
    pub message: String,
    /// How: the output is no valid stream ([`Failure::Invalid`]) or says something of the
    /// source it must not ([`Failure::Fidelity`]).
    pub kind: Failure,
    /// Only a warning of the stream checker, or a SHOULD property broken: non-strict.
    pub warning: bool,
    /// The kit's decision the failure rests on, where the spec in hand does not settle
    /// it: non-strict.
    pub decision: Option<String>,
    /// A conservation property of every conversion is broken, not something the fixture
    /// itself asserts.
    pub property: bool,
}

/// How `output` (stream name, bytes) fails `fixture`: an error of the stream checker
/// under its rule, a warning under a rule the fixture does not allow, a conservation
/// property the output breaks of the source's facts ([`crate::conserve`]), an assertion
/// that does not hold under its rule. Empty when it meets the fixture.
pub fn judge_output(
    fixture: &SourceFixture,
    source: &Source,
    output: &[(&str, &[u8])],
) -> Vec<OutputFailure> {
    let expect = &fixture.sidecar.expect.producer;
    let mut failures = stream_failures(output, &expect.warnings);
    failures.extend(property_failures(
        &crate::facts::read(&fixture.sidecar.format, source.files()),
        output,
    ));
    failures.extend(
        evaluate(&expect.assertions, output, source)
            .into_iter()
            .map(|f| OutputFailure {
                rule: f.rule.clone(),
                message: f.to_string(),
                kind: Failure::Fidelity,
                warning: false,
                decision: None,
                property: false,
            }),
    );
    failures
}

/// How `output` fails as streams: each error of the stream checker, and each warning under
/// a rule not in `allowed`, under its rule.
pub fn stream_failures(output: &[(&str, &[u8])], allowed: &[String]) -> Vec<OutputFailure> {
    let mut failures = Vec::new();
    for (stream, bytes) in output {
        let report = check_bytes(bytes, &CheckOptions::default());
        for d in &report.diagnostics {
            let allowed =
                d.severity != Severity::Error && allowed.iter().any(|a| d.rule == a.as_str());
            if d.severity != Severity::Notice && !allowed {
                failures.push(OutputFailure {
                    rule: d.rule.to_string(),
                    kind: Failure::Invalid,
                    warning: d.severity == Severity::Warning,
                    decision: None,
                    property: false,
                    message: format!(
                        "the output{} is not a valid stream: line {}: {} {}",
                        if stream.is_empty() {
                            String::new()
                        } else {
                            format!(" {stream:?}")
                        },
                        d.line,
                        d.severity,
                        d.message
                    ),
                });
            }
        }
    }
    failures
}

/// The conservation properties `output` breaks of the source `facts` describe, as failures.
pub fn property_failures(
    facts: &crate::facts::Facts,
    output: &[(&str, &[u8])],
) -> Vec<OutputFailure> {
    crate::conserve::check(facts, output)
        .into_iter()
        .map(|broken| OutputFailure {
            rule: broken.rule.to_string(),
            message: format!("{} (what every conversion keeps): {broken}", broken.rule),
            kind: Failure::Fidelity,
            warning: broken.warning,
            decision: broken.decision.map(str::to_owned),
            property: true,
        })
        .collect()
}

/// Each of `fixture`'s mistakes that it does not fail under its rule, or that its own
/// assertions and the stream check fail under another rule too, in words.
pub fn misjudged(fixture: &SourceFixture) -> Result<Vec<String>, FixtureError> {
    let source = fixture.source()?;
    let golden = fixture.expected()?.into_iter().next().unwrap_or_default();
    let mut found = Vec::new();
    for mistake in &fixture.sidecar.mistakes {
        let text = String::from_utf8_lossy(&golden.1);
        if !text.contains(&mistake.replace) {
            found.push(format!(
                "{}: the golden has no {:?}",
                mistake.what, mistake.replace
            ));
            continue;
        }
        let wrong = text.replacen(&mistake.replace, &mistake.with, 1);
        let failures = judge_output(fixture, &source, &[(golden.0.as_str(), wrong.as_bytes())]);
        let rules: std::collections::BTreeSet<&str> =
            failures.iter().map(|f| f.rule.as_str()).collect();
        // The conservation properties may catch the mistake too, under their own rules:
        // what the fixture itself asserts must catch it under its rule alone.
        let own: std::collections::BTreeSet<&str> = failures
            .iter()
            .filter(|f| !f.property)
            .map(|f| f.rule.as_str())
            .collect();
        let alone = own.is_empty() || (own.len() == 1 && own.contains(mistake.rule.as_str()));
        if !rules.contains(mistake.rule.as_str()) || !alone {
            let messages: Vec<&str> = failures.iter().map(|f| f.message.as_str()).collect();
            found.push(format!(
                "{}: failed under {rules:?} (by its assertions and the stream check: {own:?}), not {}: {messages:?}",
                mistake.what, mistake.rule
            ));
        }
    }
    Ok(found)
}

/// Streams as one text for a diff: each under a `# stream <name>` line when there are
/// several or the one has a name.
fn streams_text(streams: &[(String, Vec<u8>)]) -> String {
    let mut text = String::new();
    let named = streams.len() > 1 || streams.iter().any(|(name, _)| !name.is_empty());
    for (name, bytes) in streams {
        if named {
            let _ = writeln!(text, "# stream {name:?}");
        }
        let body = String::from_utf8_lossy(bytes);
        text.push_str(&body);
        if !body.is_empty() && !body.ends_with('\n') {
            text.push('\n');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_assertion_says_why_and_in_which_stream_of_several() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/sources");
        let fixture = load_fixtures(&root)
            .expect("the fixtures load")
            .into_iter()
            .find(|f| f.name == "claude-code-jsonl/subagent_hook_context_01")
            .expect("the fixture");
        let source = fixture.source().expect("the source");
        let golden = fixture.expected().expect("the golden");
        let text = String::from_utf8_lossy(&golden[0].1).into_owned();
        let wrong = text.replacen("\"author\":\"hook\"", "\"author\":\"human\"", 1);
        let header = text.lines().next().unwrap_or_default().to_owned() + "\n";
        let failures = judge_output(
            &fixture,
            &source,
            &[("main", wrong.as_bytes()), ("other", header.as_bytes())],
        );
        let failure = failures
            .iter()
            .find(|f| f.rule == "ASR-203" && !f.property)
            .expect("a failure of an assertion under ASR-203");
        assert_eq!(failure.kind, Failure::Fidelity);
        for part in [
            "record r1/content/0 in stream \"main\" at \"/author\": must not be \"human\"",
            "; why: isMeta:true and a <system-reminder> naming a 'PostToolUse:... hook additional context': a hook produced it",
        ] {
            assert!(
                failure.message.contains(part),
                "{part:?} not in {}",
                failure.message
            );
        }
    }

    use crate::source::load_fixtures;
    use std::path::Path;

    fn case(name: &str) -> Case {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/sources");
        let fixtures = load_fixtures(&root).expect("the fixtures load");
        fixtures
            .iter()
            .find(|f| f.name == name)
            .expect("the fixture")
            .as_case()
            .expect("a case")
    }

    fn golden(case: &Case) -> Vec<(String, Vec<u8>)> {
        case.fixture
            .as_ref()
            .expect("a fixture")
            .expected()
            .expect("the golden")
    }

    /// The golden with a mistake made on its first stream.
    fn mistaken(case: &Case, mistake: &crate::source::Mistake) -> Vec<(String, Vec<u8>)> {
        let mut wrong = golden(case);
        let text = String::from_utf8(wrong[0].1.clone()).expect("UTF-8");
        wrong[0].1 = text
            .replacen(&mistake.replace, &mistake.with, 1)
            .into_bytes();
        wrong
    }

    #[test]
    fn the_golden_passes_and_each_mistake_is_charged_to_its_rule() {
        let case = case("codex-rollout/crud_reasoning_01");
        let right = judge_producer(&case, &golden(&case));
        assert!(right.pass, "{:?}", right.reasons);
        let fixture = case.fixture.as_ref().expect("a fixture");
        for mistake in &fixture.sidecar.mistakes {
            let judged = judge_producer(&case, &mistaken(&case, mistake));
            assert!(!judged.pass, "{}", mistake.what);
            assert!(
                judged
                    .attributions
                    .iter()
                    .all(|a| a.rule.as_deref() == Some(mistake.rule.as_str())
                        && a.kind == Failure::Fidelity),
                "{}: {:?}",
                mistake.what,
                judged.attributions
            );
            assert!(judged.actual_text.contains(&mistake.with));
        }
    }

    #[test]
    fn failing_a_tentative_fixtures_assertion_is_non_strict_but_an_invalid_stream_is_not() {
        let mut case = case("codex-rollout/crud_reasoning_01");
        let fixture = case.fixture.as_mut().expect("a fixture");
        fixture.sidecar.status = Status::Tentative;
        let mistake = fixture.sidecar.mistakes[0].clone();
        let judged = judge_producer(&case, &mistaken(&case, &mistake));
        assert_eq!(judged.outcome(), crate::conformance::Outcome::NonStrict);
        assert!(
            judged
                .attributions
                .iter()
                .all(|a| a.decision.as_deref() == Some("tentative fixture s0031"))
        );
        let invalid = judge_producer(&case, &[(String::new(), b"{}\n".to_vec())]);
        assert_eq!(invalid.outcome(), crate::conformance::Outcome::Fail);
    }

    #[test]
    fn an_invalid_output_fails_under_the_checkers_rule_and_a_warning_is_non_strict() {
        let case = case("codex-rollout/crud_reasoning_01");
        let nothing = judge_producer(&case, &[(String::new(), Vec::new())]);
        assert!(!nothing.pass);
        assert!(
            nothing
                .attributions
                .iter()
                .any(|a| a.kind == Failure::Invalid && a.is_hard()),
            "{:?}",
            nothing.attributions
        );
        // The golden and a message with empty content that says not why: a warning only
        // (ASR-X-017), the fixture allows none: the case fails, and the rule's verdict is
        // non-strict (the failure is not hard).
        let mut warned = golden(&case);
        let lines = String::from_utf8_lossy(&warned[0].1).lines().count();
        warned[0].1.extend_from_slice(
            format!(
                "{{\"type\":\"message\",\"seq\":{lines},\"id\":\"extra\",\"messageId\":\"extra\",\"role\":\"assistant\",\"content\":[]}}\n"
            )
            .as_bytes(),
        );
        let judged = judge_producer(&case, &warned);
        assert!(!judged.pass);
        assert!(
            judged
                .attributions
                .iter()
                .all(|a| a.kind == Failure::Invalid && a.warning && !a.is_hard()),
            "{:?}",
            judged.attributions
        );
    }
}
