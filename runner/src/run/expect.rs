//! `--expect`: an implementation's known results, and how a run compares with them.

use anyhow::{Context, Result};
use asr_suite::conformance::{CaseResult, Outcome, RunReport};
use serde::Deserialize;
use std::path::Path;

/// The expectations file (`schemas/expectations.schema.json`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// The implementation they are for.
    pub implementation: String,
    /// Known results other than pass.
    pub known: Vec<Known>,
}

/// One known result.
#[derive(Debug, Deserialize)]
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
    pub role: Option<asr_suite::protocol::ProtocolRole>,
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
    /// Known failures that failed as expected.
    pub matched: usize,
    /// The implementation named by the file, when it is not the one run.
    pub other_implementation: Option<String>,
}

/// Reads and checks an expectations file.
pub fn load(path: &Path) -> Result<Expectations> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("failed to read {}", path.display()))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("failed to parse {}", path.display()))?;
    let schema: serde_json::Value =
        serde_json::from_str(crate::corpus::embedded_schema("expectations.schema.json")?)?;
    let validator = jsonschema::validator_for(&schema)
        .map_err(|e| anyhow::anyhow!("failed to compile the expectations schema: {e}"))?;
    let problems: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    anyhow::ensure!(
        problems.is_empty(),
        "{} does not match schemas/expectations.schema.json: {}",
        path.display(),
        problems.join("; ")
    );
    let expectations: Expectations = serde_json::from_value(value)
        .with_context(|| format!("failed to read {}", path.display()))?;
    for known in &expectations.known {
        if let Some(case) = &known.case {
            glob::Pattern::new(case)
                .with_context(|| format!("{}: `{case}` is not a valid glob", path.display()))?;
        }
    }
    Ok(expectations)
}

/// Compares a run with the expectations.
pub fn compare(expectations: &Expectations, report: &RunReport) -> Comparison {
    let name = report
        .adapter
        .implementation
        .as_ref()
        .map(|i| i.name.as_str());
    compare_cases(expectations, name, &report.cases)
}

/// Compares the cases of a run of the implementation `name` with the expectations. A skip
/// and a case not run are never a regression (PROTOCOL.md: a skip is never a failure),
/// whatever entry they match; a non-strict case is no failure, as a pass is not.
fn compare_cases(
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
        match (entry, case.outcome) {
            (Some(known), outcome) if known.outcome == outcome => comparison.matched += 1,
            (_, Outcome::Skipped | Outcome::NotRun) => {}
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
            }
            (Some(known), outcome) if outcome.is_failure() => {
                comparison.regressions.push(format!(
                    "{} ({}; known as {}: {})",
                    case.name,
                    outcome.as_str(),
                    known.outcome.as_str(),
                    known.reason
                ));
            }
            (None, outcome) if outcome.is_failure() => {
                comparison
                    .regressions
                    .push(format!("{} ({})", case.name, outcome.as_str()));
            }
            _ => {}
        }
    }
    comparison
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
    }
}
