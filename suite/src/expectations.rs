//! An implementation's known results (`asr-ctk run --expect`), and how a run compares with
//! them: which failures are known, which are regressions, which known failures now pass.

use crate::conformance::{
    CaseExpectation, CaseResult, ExpectationMark, ExpectationsResult, Outcome, RunReport,
};
use crate::protocol::ProtocolRole;
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// The expectations file (`schemas/expectations.schema.json`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// The implementation they are for.
    pub implementation: String,
    /// Known results other than pass.
    pub known: Vec<Known>,
    /// `sha256:` and the digest of the file's bytes ([`digest`]): reports of shards run
    /// against other files cannot be merged into one.
    #[serde(skip)]
    pub digest: String,
}

/// One known result.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Known {
    /// A case name or glob.
    #[serde(default)]
    pub case: Option<String>,
    /// A rule: every case naming it.
    #[serde(default)]
    pub rule: Option<String>,
    /// Only the cases run in this role (every role when absent): a tool that validates and
    /// produces may fail a rule as one and not the other.
    #[serde(default)]
    pub role: Option<ProtocolRole>,
    /// The outcome it has.
    pub outcome: Outcome,
    /// Why.
    pub reason: String,
    /// Where it is tracked.
    #[serde(default)]
    pub link: Option<String>,
}

/// How a run compares with the expectations.
#[derive(Debug, Default)]
pub struct Comparison {
    /// Cases that fail (in any way) with no entry, or with another outcome than their entry's.
    pub regressions: Vec<String>,
    /// Cases whose entry expects a failure but that passed: the entry can go.
    pub unexpected_passes: Vec<String>,
    /// Known results (failures, and skips an entry records) that came as expected.
    pub matched: usize,
    /// The implementation named by the file, when it is not the one run.
    pub other_implementation: Option<String>,
    /// Each case's mark, in the order of the cases compared (`None`: nothing to say).
    pub marks: Vec<Option<CaseExpectation>>,
}

/// `sha256:` and the digest of an expectations file's bytes.
pub fn digest(bytes: &[u8]) -> String {
    crate::spec::prefixed_hex(&Sha256::digest(bytes))
}

/// Compares the cases of a run of the implementation `name` with the expectations. A skip
/// and a case not run are never a regression (PROTOCOL.md: a skip is never a failure),
/// whatever entry they match; a non-strict case is no failure, as a pass is not.
pub fn compare_cases(
    expectations: &Expectations,
    name: Option<&str>,
    cases: &[CaseResult],
) -> Comparison {
    let mut comparison = Comparison::default();
    if name.is_some_and(|name| name != expectations.implementation) {
        comparison.other_implementation = Some(expectations.implementation.clone());
    }
    for case in cases {
        let entry = expectations.known.iter().find(|k| {
            k.role.is_none_or(|role| role == case.role)
                && (k
                    .case
                    .as_deref()
                    .is_some_and(|p| glob::Pattern::new(p).is_ok_and(|p| p.matches(&case.name)))
                    || k.rule
                        .as_deref()
                        .is_some_and(|r| case.rules.iter().any(|x| x == r)))
        });
        let mark = |mark, known: Option<&Known>| {
            Some(CaseExpectation {
                mark,
                known_as: known.map(|k| k.outcome),
                reason: known.map(|k| k.reason.clone()),
                link: known.and_then(|k| k.link.clone()),
            })
        };
        let marked = match (entry, case.outcome) {
            (Some(known), outcome) if known.outcome == outcome => {
                comparison.matched += 1;
                mark(ExpectationMark::Known, Some(known))
            }
            (_, Outcome::Skipped | Outcome::NotRun) => None,
            (Some(known), Outcome::Pass | Outcome::NonStrict) => {
                comparison.unexpected_passes.push(format!(
                    "{} ({}, known as {}: {}{})",
                    case.name,
                    case.outcome.as_str(),
                    known.outcome.as_str(),
                    known.reason,
                    known
                        .link
                        .as_deref()
                        .map(|l| format!(", {l}"))
                        .unwrap_or_default()
                ));
                mark(ExpectationMark::UnexpectedPass, Some(known))
            }
            (Some(known), outcome) if outcome.is_failure() => {
                comparison.regressions.push(format!(
                    "{} ({}; known as {}: {})",
                    case.name,
                    outcome.as_str(),
                    known.outcome.as_str(),
                    known.reason
                ));
                mark(ExpectationMark::Regression, Some(known))
            }
            (None, outcome) if outcome.is_failure() => {
                comparison
                    .regressions
                    .push(format!("{} ({})", case.name, outcome.as_str()));
                mark(ExpectationMark::Regression, None)
            }
            _ => None,
        };
        comparison.marks.push(marked);
    }
    comparison
}

impl RunReport {
    /// Compares the cases with `expectations`, marks each case and states the outcome in
    /// [`RunReport::expectations`].
    pub fn compare_with(&mut self, expectations: &Expectations) -> Comparison {
        let name = self
            .adapter
            .implementation
            .as_ref()
            .map(|i| i.name.as_str());
        let mut comparison = compare_cases(expectations, name, &self.cases);
        for (case, mark) in self.cases.iter_mut().zip(comparison.marks.drain(..)) {
            case.expectation = mark;
        }
        self.expectations = Some(ExpectationsResult {
            implementation: expectations.implementation.clone(),
            digest: expectations.digest.clone(),
            known_failures: 0,
            regressions: 0,
            unexpected_passes: 0,
        });
        self.count_marks();
        comparison
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(rule: &str, outcome: Outcome) -> Expectations {
        Expectations {
            implementation: "x".into(),
            known: vec![Known {
                case: None,
                rule: Some(rule.into()),
                role: None,
                outcome,
                reason: "not yet".into(),
                link: None,
            }],
            digest: String::new(),
        }
    }

    fn case(name: &str, rule: &str, outcome: Outcome) -> CaseResult {
        CaseResult::new(name, "c0", vec![rule.into()], outcome)
    }

    #[test]
    fn a_skip_is_never_a_regression_whatever_its_entry() {
        let cases = [
            case("a", "ASR-234", Outcome::Skipped),
            case("b", "ASR-234", Outcome::NotRun),
            case("c", "ASR-200", Outcome::Skipped),
        ];
        for entry in [Outcome::Fail, Outcome::Error, Outcome::Timeout] {
            let c = compare_cases(&known("ASR-234", entry), Some("x"), &cases);
            assert!(c.regressions.is_empty(), "{entry:?}: {:?}", c.regressions);
            assert!(c.unexpected_passes.is_empty());
            assert_eq!(c.marks, [None, None, None]);
        }
    }

    #[test]
    fn failures_are_matched_regressed_or_passed_unexpectedly() {
        let cases = [
            case("known", "ASR-234", Outcome::Fail),
            case("other-failure", "ASR-234", Outcome::Crash),
            case("now-passes", "ASR-234", Outcome::Pass),
            case("now-non-strict", "ASR-234", Outcome::NonStrict),
            case("new", "ASR-200", Outcome::Fail),
            case("fine", "ASR-200", Outcome::Pass),
        ];
        let c = compare_cases(&known("ASR-234", Outcome::Fail), Some("y"), &cases);
        assert_eq!(c.matched, 1);
        assert_eq!(c.regressions.len(), 2, "{:?}", c.regressions);
        assert!(c.regressions[0].starts_with("other-failure (crash"));
        assert!(c.regressions[1].starts_with("new (fail)"));
        assert_eq!(c.unexpected_passes.len(), 2, "{:?}", c.unexpected_passes);
        assert_eq!(c.other_implementation.as_deref(), Some("x"));
        let marks: Vec<Option<ExpectationMark>> =
            c.marks.iter().map(|m| m.as_ref().map(|m| m.mark)).collect();
        assert_eq!(
            marks,
            [
                Some(ExpectationMark::Known),
                Some(ExpectationMark::Regression),
                Some(ExpectationMark::UnexpectedPass),
                Some(ExpectationMark::UnexpectedPass),
                Some(ExpectationMark::Regression),
                None
            ]
        );
        let first = c.marks[0].as_ref().expect("marked");
        assert_eq!(
            (first.known_as, first.reason.as_deref()),
            (Some(Outcome::Fail), Some("not yet"))
        );
        let new = c.marks[4].as_ref().expect("marked");
        assert_eq!((new.known_as, new.reason.as_deref()), (None, None));
    }
}
