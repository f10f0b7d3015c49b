//! Several conformance reports side by side (`asr-ctk report compare`): who meets which rule,
//! where implementations disagree on a case, and, for the reports of one implementation, what
//! changed from one run to the next.
//!
//! A report is taken only if it meets `schemas/report.schema.json` ([`parse_report`]). The
//! [`Comparison`] (`schemas/comparison.schema.json`) holds:
//!
//! - the implementations, one for each report, in the order given;
//! - the matrix: for each rule (and inferred check) and role, each report's verdict and counts,
//!   as its own `rules` rows say, and the cases behind them;
//! - the interop figures: how many implementations are conformant on each rule and role, on
//!   how many rules each implementation is conformant, the rules no one meets and the rules
//!   they split on;
//! - the cases (name and role) on which the outcomes differ, each report's outcome with what
//!   its case row says (expected, actual, detail);
//! - when the case sets differ, the cases some report lacks though it holds cases of their
//!   role: they are left out of the disagreements and the history, which are over the cases
//!   every report of their role holds (a report of readers does not lack a validator's
//!   case);
//! - when every report is of one implementation (the same name, playing the same roles), its history: the reports in
//!   the order given (the first the oldest: the order of the command line is the one a
//!   release gate states, whatever the clocks of the machines that ran them said), or, with
//!   [`Order::StartedAt`], by `startedAt` as an instant (ties in the order given, a time that
//!   is no RFC 3339 first); between each two
//!   consecutive reports, the regressions (a case that passed or was non-strict and now
//!   fails) and the fixes (the reverse).
//!
//! The matrix's cells are the reports' verdicts as written, over each report's own cases: a
//! verdict is a report's claim, and is not recomputed over the shared cases.

use crate::conformance::{CaseExpectation, CaseResult, RuleResult, RuleVerdict, RunReport};
use crate::judge::Outcome;
use crate::protocol::ProtocolRole;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

mod text;

pub use text::row_name;

/// The comparison of several reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Comparison {
    /// The implementations, one for each report, in the order given; every other member
    /// names one by its index here.
    pub implementations: Vec<Entry>,
    /// Whether every report is of one case set (the same digest).
    pub same_case_set: bool,
    /// The cases (name and role) some report holds and another lacks, left out of the
    /// disagreements and the history.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
    /// For each rule and role, each report's verdict.
    pub matrix: Vec<MatrixRow>,
    /// Who meets what.
    pub interop: Interop,
    /// The shared cases on which the outcomes differ.
    pub disagreements: Vec<Disagreement>,
    /// Every case (name and role) of any report, with each report's outcome: what the
    /// matrix's cells stand on.
    pub cases: Vec<CaseRow>,
    /// When every report is of one implementation: what changed from each to the next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<History>,
}

/// One report's implementation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Entry {
    /// Its name (`adapter.implementation.name`), or, when the adapter gave none, its command.
    pub name: String,
    /// Its version, when the adapter gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Whether the adapter named the implementation (else `name` is its command line).
    pub named: bool,
    /// The report's file, as given.
    pub file: String,
    /// When its run started.
    pub started_at: String,
    /// The roles it was run as.
    pub roles: Vec<ProtocolRole>,
    /// The digest of the case set it was run on.
    pub case_set: String,
}

/// A case some report lacks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LeftOut {
    /// The case's name.
    pub case: String,
    /// The role it was run as.
    pub role: ProtocolRole,
    /// The reports (indices of `implementations`) that lack it.
    pub missing_from: Vec<usize>,
}

/// One case (name and role) of any report, with each report's outcome of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CaseRow {
    /// The case's name.
    pub case: String,
    /// The role it was run as.
    pub role: ProtocolRole,
    /// The case's id, as the first report that holds it says.
    pub id: String,
    /// The rules it tests, as the first report that holds it says.
    pub rules: Vec<String>,
    /// Each report's outcome, by the index of `implementations`: none where the report lacks
    /// the case.
    pub outcomes: Vec<Option<Outcome>>,
}

/// One rule and role of the matrix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MatrixRow {
    /// The rule (or inferred check) id.
    pub rule: String,
    /// The role; absent when no report has a result of the rule for any role (it was not
    /// tested, or binds no role played), and the cells are then the rule's as a whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<ProtocolRole>,
    /// One cell for each report, in the order of `implementations`.
    pub cells: Vec<Cell>,
}

/// One report's verdict on a rule and role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Cell {
    /// The verdict; absent when the report has no result of the rule for the role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<RuleVerdict>,
    /// The cases counted.
    pub cases: usize,
    /// Of those: passed.
    pub passed: usize,
    /// Of those: failed.
    pub failed: usize,
    /// Of those: non-strict.
    pub non_strict: usize,
    /// Of those: skipped.
    pub skipped: usize,
    /// Of those: errored, timed out, crashed or broke the protocol.
    pub errored: usize,
    /// Cases with a finding of the rule missing, over every role (a report counts them for
    /// the rule as a whole).
    pub lenient: usize,
    /// Cases with an error under the rule the stream does not call for, over every role.
    pub over_strict: usize,
    /// The report's cases of this role naming the rule.
    pub case_names: Vec<String>,
}

/// Who meets what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Interop {
    /// For each row of the matrix, in its order: how many are conformant, and how many not.
    pub rules: Vec<RuleInterop>,
    /// For each implementation, in order: on how many rules (as a whole) it is conformant.
    pub conformant_rules: Vec<usize>,
    /// The rows no implementation meets: none conformant, at least one non-conformant.
    pub none_meet: Vec<RuleRole>,
    /// The rows they split on: some conformant, some non-conformant.
    pub splits: Vec<RuleRole>,
}

/// The implementations' verdicts on one rule and role, counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuleInterop {
    /// The rule.
    pub rule: String,
    /// The role, as in the matrix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<ProtocolRole>,
    /// How many implementations are conformant on it.
    pub conformant: usize,
    /// How many are non-conformant.
    pub non_conformant: usize,
}

/// A rule and role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuleRole {
    /// The rule.
    pub rule: String,
    /// The role, as in the matrix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<ProtocolRole>,
}

/// A shared case the implementations answer differently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Disagreement {
    /// The case's name.
    pub case: String,
    /// The role.
    pub role: ProtocolRole,
    /// The case's id.
    pub id: String,
    /// The rules it names.
    pub rules: Vec<String>,
    /// Each report's outcome, in the order of `implementations`.
    pub outcomes: Vec<CaseOutcome>,
}

/// One report's outcome of a case, with what its row says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CaseOutcome {
    /// The report (an index of `implementations`).
    pub report: usize,
    /// The outcome.
    pub outcome: Outcome,
    /// What went wrong, as the report says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// What the case expects, as the report gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// What the implementation answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    /// The implementation's own expectation of the case (`--expect`), when it was run with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expectation: Option<CaseExpectation>,
}

/// The reports of one implementation, in order, and what changed between each two.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct History {
    /// How the reports were ordered.
    pub order: Order,
    /// The reports (indices of `implementations`), the oldest first.
    pub reports: Vec<usize>,
    /// For each two consecutive reports: the changes.
    pub steps: Vec<Step>,
}

/// How the reports of one implementation are ordered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// As given, the first the oldest.
    #[default]
    Given,
    /// By `startedAt`, ties as given.
    StartedAt,
}

/// What changed from one report to the next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Step {
    /// The earlier report (an index of `implementations`).
    pub from: usize,
    /// The later one.
    pub to: usize,
    /// Cases that passed or were non-strict and now fail.
    pub regressions: Vec<Change>,
    /// Cases that failed and now pass or are non-strict.
    pub fixes: Vec<Change>,
}

/// One case's change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Change {
    /// The case's name.
    pub case: String,
    /// The role.
    pub role: ProtocolRole,
    /// The outcome before.
    pub before: Outcome,
    /// The outcome after.
    pub after: Outcome,
    /// What the failing side's report says went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Why a report was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Not JSON.
    #[error("{file}: not JSON: {message}")]
    NotJson {
        /// The file.
        file: String,
        /// The parser's message.
        message: String,
    },
    /// JSON that does not meet the report schema.
    #[error("{file}: does not meet schemas/report.schema.json at {pointer:?}: {message}")]
    Schema {
        /// The file.
        file: String,
        /// The JSON Pointer of the first place that does not.
        pointer: String,
        /// What the schema says of it.
        message: String,
    },
    /// Meets the schema but is no report the kit reads.
    #[error("{file}: not a report: {message}")]
    NotAReport {
        /// The file.
        file: String,
        /// The parser's message.
        message: String,
    },
}

impl Comparison {
    /// A file name for each implementation, in order: its name and version in lowercase
    /// letters, digits, `.`, `_` and `-` (every other run of characters one `-`), never empty,
    /// never two alike (a later one gets `-2`, `-3`, ...).
    pub fn file_names(&self) -> Vec<String> {
        file_names(
            self.implementations
                .iter()
                .map(|entry| match &entry.version {
                    Some(version) => format!("{} {version}", entry.name),
                    None => entry.name.clone(),
                }),
        )
    }
}

impl Entry {
    /// The implementation of `report`, read from `file`.
    pub fn of(file: &str, report: &RunReport) -> Entry {
        let implementation = report.adapter.implementation.as_ref();
        Entry {
            name: implementation
                .map_or_else(|| report.adapter.command.join(" "), |i| i.name.clone()),
            version: implementation.map(|i| i.version.clone()),
            named: implementation.is_some(),
            file: file.to_owned(),
            started_at: report.started_at.clone(),
            roles: report.adapter.roles.clone(),
            case_set: report.case_set.clone(),
        }
    }

    /// Whether the two are reports of one implementation: the same name, given by the
    /// adapter, playing the same roles. The reference as a validator and the reference as a
    /// reader are two implementations; two adapters that gave no name are never known to be
    /// one (a command line names no implementation).
    pub fn same_implementation(&self, other: &Entry) -> bool {
        let played = |e: &Entry| e.roles.iter().copied().collect::<BTreeSet<_>>();
        self.named && other.named && self.name == other.name && played(self) == played(other)
    }
}

/// A file name for each of `names`, in order: in lowercase letters, digits, `.`, `_` and `-`
/// (every other run of characters one `-`), never empty, never hidden, at most 80
/// characters before a suffix, and never two alike (a later one gets `-2`, `-3`, ...).
pub fn file_names(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut taken = BTreeSet::new();
    names
        .into_iter()
        .map(|full| {
            let mut base = String::new();
            for c in full.chars() {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '_') {
                    base.push(c.to_ascii_lowercase());
                } else if !base.ends_with('-') {
                    base.push('-');
                }
            }
            // No hidden file, no `..`, and a bounded length, whatever the name said.
            let mut base: String = base.trim_matches(['-', '.']).chars().take(80).collect();
            if base.is_empty() {
                "implementation".clone_into(&mut base);
            }
            let mut name = base.clone();
            let mut n = 1;
            while !taken.insert(name.clone()) {
                n += 1;
                name = format!("{base}-{n}");
            }
            name
        })
        .collect()
}

/// The order of reports started at `started` (each a report's `startedAt`), the earliest
/// first: compared as instants, whatever offset a report was written with; one that is no
/// RFC 3339 time (the schema does not hold it to one) goes first. Stable: reports started
/// at the same instant stay in the order given.
pub fn by_start<'a>(started: impl IntoIterator<Item = &'a str>) -> Vec<usize> {
    let instants: Vec<_> = started
        .into_iter()
        .map(|at| chrono::DateTime::parse_from_rfc3339(at).ok())
        .collect();
    let mut sequence: Vec<usize> = (0..instants.len()).collect();
    sequence.sort_by_key(|&i| instants[i]);
    sequence
}

/// Parses `bytes`, the report in `file`, after checking it against the report schema.
pub fn parse_report(file: &str, bytes: &[u8]) -> Result<RunReport, Refusal> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| Refusal::NotJson {
        file: file.to_owned(),
        message: e.to_string(),
    })?;
    let schema_error = |pointer: &str, message: String| Refusal::Schema {
        file: file.to_owned(),
        pointer: pointer.to_owned(),
        message,
    };
    let schema: serde_json::Value = crate::embedded::schema("report.schema.json")
        .and_then(|text| serde_json::from_str(text).ok())
        .ok_or_else(|| schema_error("", "the kit carries no report schema".to_owned()))?;
    let validator =
        jsonschema::validator_for(&schema).map_err(|e| schema_error("", e.to_string()))?;
    if let Some(error) = validator.iter_errors(&value).next() {
        return Err(schema_error(
            &error.instance_path().to_string(),
            error.to_string(),
        ));
    }
    serde_json::from_value(value).map_err(|e| Refusal::NotAReport {
        file: file.to_owned(),
        message: e.to_string(),
    })
}

/// Compares `reports`, each with its file as given.
pub fn compare(reports: &[(String, RunReport)], order: Order) -> Comparison {
    let implementations: Vec<Entry> = reports
        .iter()
        .map(|(file, report)| Entry::of(file, report))
        .collect();
    let same_case_set = implementations
        .windows(2)
        .all(|pair| pair[0].case_set == pair[1].case_set);
    let by_case: Vec<BTreeMap<(&str, ProtocolRole), &CaseResult>> = reports
        .iter()
        .map(|(_, r)| {
            r.cases
                .iter()
                .map(|c| ((c.name.as_str(), c.role), c))
                .collect()
        })
        .collect();
    let every: BTreeSet<(&str, ProtocolRole)> =
        by_case.iter().flat_map(|m| m.keys().copied()).collect();
    let plays: Vec<BTreeSet<ProtocolRole>> = by_case
        .iter()
        .map(|m| m.keys().map(|(_, role)| *role).collect())
        .collect();
    let mut left_out = Vec::new();
    let mut shared = Vec::new();
    let mut cases = Vec::with_capacity(every.len());
    for key in every {
        let rows: Vec<Option<&CaseResult>> = by_case.iter().map(|m| m.get(&key).copied()).collect();
        if let Some(first) = rows.iter().flatten().next() {
            cases.push(CaseRow {
                case: first.name.clone(),
                role: first.role,
                id: first.id.clone(),
                rules: first.rules.clone(),
                outcomes: rows.iter().map(|r| r.map(|c| c.outcome)).collect(),
            });
        }
        // A report of no case of the role (one of a reader, beside a validator's) does not
        // lack the case: it was not asked it.
        let missing_from: Vec<usize> = (0..by_case.len())
            .filter(|&i| plays[i].contains(&key.1) && !by_case[i].contains_key(&key))
            .collect();
        if missing_from.is_empty() {
            shared.push(key);
        } else {
            left_out.push(LeftOut {
                case: key.0.to_owned(),
                role: key.1,
                missing_from,
            });
        }
    }
    let matrix = matrix(reports);
    let interop = interop(reports, &matrix);
    let disagreements = shared
        .iter()
        .filter_map(|key| {
            let rows: Vec<(usize, &CaseResult)> = by_case
                .iter()
                .enumerate()
                .filter_map(|(i, m)| Some((i, *m.get(key)?)))
                .collect();
            let (_, first) = rows.first()?;
            if rows.len() < 2 || rows.iter().all(|(_, r)| r.outcome == first.outcome) {
                return None;
            }
            Some(Disagreement {
                case: first.name.clone(),
                role: first.role,
                id: first.id.clone(),
                rules: first.rules.clone(),
                outcomes: rows
                    .iter()
                    .map(|(report, r)| CaseOutcome {
                        report: *report,
                        outcome: r.outcome,
                        detail: r.detail.clone(),
                        expected: r.expected.clone(),
                        actual: r.actual.clone(),
                        expectation: r.expectation.clone(),
                    })
                    .collect(),
            })
        })
        .collect();
    let one_implementation = implementations.len() > 1
        && implementations
            .iter()
            .all(|i| i.same_implementation(&implementations[0]));
    let history = one_implementation.then(|| history(reports, &by_case, &shared, order));
    Comparison {
        implementations,
        same_case_set,
        left_out,
        matrix,
        interop,
        disagreements,
        cases,
        history,
    }
}

/// The rows of the matrix: every rule of every report, in the order the reports give them
/// (the first report's first), and for each the roles any report has a result of.
fn matrix(reports: &[(String, RunReport)]) -> Vec<MatrixRow> {
    let mut order: Vec<&str> = Vec::new();
    let mut seen = BTreeSet::new();
    for (_, report) in reports {
        for row in &report.rules {
            if seen.insert(row.rule.as_str()) {
                order.push(row.rule.as_str());
            }
        }
    }
    let rows_of: Vec<BTreeMap<&str, &RuleResult>> = reports
        .iter()
        .map(|(_, r)| r.rules.iter().map(|row| (row.rule.as_str(), row)).collect())
        .collect();
    let mut matrix = Vec::new();
    for rule in order {
        let roles: BTreeSet<ProtocolRole> = rows_of
            .iter()
            .filter_map(|m| m.get(rule))
            .flat_map(|row| row.by_role.keys().copied())
            .collect();
        let roles: Vec<Option<ProtocolRole>> = if roles.is_empty() {
            vec![None]
        } else {
            roles.into_iter().map(Some).collect()
        };
        for role in roles {
            let cells = reports
                .iter()
                .zip(&rows_of)
                .map(|((_, report), rows)| cell(report, rows.get(rule).copied(), rule, role))
                .collect();
            matrix.push(MatrixRow {
                rule: rule.to_owned(),
                role,
                cells,
            });
        }
    }
    matrix
}

/// One report's cell for `rule` and `role` (`None`: the rule as a whole).
fn cell(
    report: &RunReport,
    row: Option<&RuleResult>,
    id: &str,
    role: Option<ProtocolRole>,
) -> Cell {
    let case_names = report
        .cases
        .iter()
        .filter(|c| role.is_none_or(|r| r == c.role) && c.rules.iter().any(|r| r == id))
        .map(|c| c.name.clone())
        .collect();
    let empty = Cell {
        verdict: None,
        cases: 0,
        passed: 0,
        failed: 0,
        non_strict: 0,
        skipped: 0,
        errored: 0,
        lenient: 0,
        over_strict: 0,
        case_names,
    };
    let Some(row) = row else { return empty };
    let (lenient, over_strict) = (row.lenient, row.over_strict);
    match role {
        None => Cell {
            verdict: Some(row.verdict),
            cases: row.cases,
            passed: row.passed,
            failed: row.failed,
            non_strict: row.non_strict,
            skipped: row.skipped,
            errored: row.errored,
            lenient,
            over_strict,
            ..empty
        },
        Some(role) => match row.by_role.get(&role) {
            Some(r) => Cell {
                verdict: Some(r.verdict),
                cases: r.cases,
                passed: r.passed,
                failed: r.failed,
                non_strict: r.non_strict,
                skipped: r.skipped,
                errored: r.errored,
                lenient,
                over_strict,
                ..empty
            },
            None => empty,
        },
    }
}

fn interop(reports: &[(String, RunReport)], matrix: &[MatrixRow]) -> Interop {
    let mut interop = Interop {
        rules: Vec::new(),
        conformant_rules: reports
            .iter()
            .map(|(_, r)| {
                r.rules
                    .iter()
                    .filter(|row| row.verdict == RuleVerdict::Conformant)
                    .count()
            })
            .collect(),
        none_meet: Vec::new(),
        splits: Vec::new(),
    };
    for row in matrix {
        let count = |verdict| {
            row.cells
                .iter()
                .filter(|c| c.verdict == Some(verdict))
                .count()
        };
        let conformant = count(RuleVerdict::Conformant);
        let non_conformant = count(RuleVerdict::NonConformant);
        let named = RuleRole {
            rule: row.rule.clone(),
            role: row.role,
        };
        if non_conformant > 0 && conformant == 0 {
            interop.none_meet.push(named.clone());
        } else if non_conformant > 0 {
            interop.splits.push(named.clone());
        }
        interop.rules.push(RuleInterop {
            rule: named.rule,
            role: named.role,
            conformant,
            non_conformant,
        });
    }
    interop
}

fn history(
    reports: &[(String, RunReport)],
    by_case: &[BTreeMap<(&str, ProtocolRole), &CaseResult>],
    shared: &[(&str, ProtocolRole)],
    order: Order,
) -> History {
    let sequence: Vec<usize> = match order {
        Order::Given => (0..reports.len()).collect(),
        Order::StartedAt => by_start(reports.iter().map(|(_, r)| r.started_at.as_str())),
    };
    let fine = |o: Outcome| matches!(o, Outcome::Pass | Outcome::NonStrict);
    let steps = sequence
        .windows(2)
        .map(|pair| {
            let (from, to) = (pair[0], pair[1]);
            let mut step = Step {
                from,
                to,
                regressions: Vec::new(),
                fixes: Vec::new(),
            };
            for key in shared {
                let (Some(before), Some(after)) = (by_case[from].get(key), by_case[to].get(key))
                else {
                    continue;
                };
                let change = |failing: &CaseResult| Change {
                    case: key.0.to_owned(),
                    role: key.1,
                    before: before.outcome,
                    after: after.outcome,
                    detail: failing.detail.clone(),
                };
                if fine(before.outcome) && after.outcome.is_failure() {
                    step.regressions.push(change(after));
                } else if before.outcome.is_failure() && fine(after.outcome) {
                    step.fixes.push(change(before));
                }
            }
            step
        })
        .collect();
    History {
        order,
        reports: sequence,
        steps,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::conformance::{AdapterInfo, CorpusInfo, CorpusOrigin};
    use crate::protocol::Implementation;

    /// A report of `name` started at `at`, with the cases (name, outcome) of ASR-212.
    fn report(name: &str, at: &str, cases: &[(&str, Outcome)]) -> RunReport {
        let mut report = RunReport {
            kit: "asr-ctk".into(),
            kit_version: "0.1.0".into(),
            case_set: format!("sha256:{}", "0".repeat(64)),
            corpus: CorpusInfo {
                origin: CorpusOrigin::Directory,
                path: "cases".into(),
                verified: false,
            },
            corpus_cases: cases.len(),
            adapter: AdapterInfo {
                command: vec!["impl".into()],
                mode: "persistent".into(),
                implementation: Some(Implementation {
                    name: name.into(),
                    version: "1".into(),
                    language: "rust".into(),
                    homepage: None,
                    issues: None,
                }),
                roles: vec![ProtocolRole::Validator],
                versus: None,
                others: Vec::new(),
            },
            command_line: Vec::new(),
            started_at: at.into(),
            shards: Vec::new(),
            totals: BTreeMap::new(),
            rules: Vec::new(),
            cases: cases
                .iter()
                .map(|(case, outcome)| {
                    CaseResult::new(*case, *case, vec!["ASR-212".into()], *outcome)
                })
                .collect(),
            interrupted: false,
            incomplete: None,
            expectations: None,
            campaign: None,
        };
        report.summarize(Catalog::embedded());
        report
    }

    fn changes(changes: &[Change]) -> Vec<(&str, Outcome, Outcome)> {
        changes
            .iter()
            .map(|c| (c.case.as_str(), c.before, c.after))
            .collect()
    }

    #[test]
    fn history_is_in_the_order_given_unless_asked_by_start() {
        use Outcome::{Fail, Pass};
        let older = report("x", "2026-01-02T00:00:00Z", &[("a", Pass), ("b", Fail)]);
        // Started earlier than `older`: only the order given makes it the later one.
        let newer = report("x", "2026-01-01T00:00:00Z", &[("a", Fail), ("b", Pass)]);
        let reports = [("old".to_owned(), older), ("new".to_owned(), newer)];
        let given = compare(&reports, Order::Given);
        let history = given.history.as_ref().expect("one implementation");
        assert_eq!(history.reports, [0, 1]);
        assert_eq!(changes(&history.steps[0].regressions), [("a", Pass, Fail)]);
        assert_eq!(changes(&history.steps[0].fixes), [("b", Fail, Pass)]);
        assert_eq!(given.regressions(), 1);
        let by_start = compare(&reports, Order::StartedAt);
        let history = by_start.history.as_ref().expect("one implementation");
        assert_eq!(history.reports, [1, 0]);
        assert_eq!(changes(&history.steps[0].regressions), [("b", Pass, Fail)]);
        assert_eq!(changes(&history.steps[0].fixes), [("a", Fail, Pass)]);
    }

    #[test]
    fn one_name_in_other_roles_is_two_implementations_with_no_history() {
        use Outcome::{Fail, Pass};
        let validator = report("x", "t", &[("a", Pass)]);
        let mut reader = report("x", "t", &[("a", Fail)]);
        reader.adapter.roles = vec![ProtocolRole::Reader];
        let both = [
            ("v".to_owned(), validator.clone()),
            ("r".to_owned(), reader),
        ];
        assert_eq!(compare(&both, Order::Given).history, None);
        // The same roles in another order are the same implementation.
        let mut first = validator.clone();
        first.adapter.roles = vec![ProtocolRole::Validator, ProtocolRole::Reader];
        let mut again = validator;
        again.adapter.roles = vec![ProtocolRole::Reader, ProtocolRole::Validator];
        let same = [("1".to_owned(), first), ("2".to_owned(), again)];
        assert!(compare(&same, Order::Given).history.is_some());
    }

    #[test]
    fn by_start_the_times_are_instants_whatever_their_offset() {
        let utc = report("x", "2026-01-01T00:00:00Z", &[]);
        // 23:00 UTC the day before: earlier, though its text sorts later.
        let east = report("x", "2026-01-01T01:00:00+02:00", &[]);
        let reports = [("utc".to_owned(), utc), ("east".to_owned(), east)];
        let history = compare(&reports, Order::StartedAt).history;
        assert_eq!(history.map(|h| h.reports), Some(vec![1, 0]));
    }

    #[test]
    fn two_implementations_have_no_history_and_disagree_case_by_case() {
        use Outcome::{Fail, NonStrict, Pass, Skipped};
        let one = report("x", "t", &[("a", Pass), ("b", Fail), ("c", NonStrict)]);
        let other = report("y", "t", &[("a", Pass), ("b", Skipped), ("c", NonStrict)]);
        let written = one
            .rules
            .iter()
            .find(|r| r.rule == "ASR-212")
            .expect("a row");
        let verdict = written
            .by_role
            .get(&ProtocolRole::Validator)
            .map(|r| r.verdict);
        let comparison = compare(
            &[("1".to_owned(), one.clone()), ("2".to_owned(), other)],
            Order::Given,
        );
        assert_eq!(comparison.history, None);
        assert_eq!(comparison.regressions(), 0);
        let disagreed: Vec<(&str, Vec<Outcome>)> = comparison
            .disagreements
            .iter()
            .map(|d| {
                (
                    d.case.as_str(),
                    d.outcomes.iter().map(|o| o.outcome).collect(),
                )
            })
            .collect();
        assert_eq!(disagreed, [("b", vec![Fail, Skipped])]);
        let row = comparison
            .matrix
            .iter()
            .find(|r| r.rule == "ASR-212")
            .expect("a row");
        assert_eq!(row.role, Some(ProtocolRole::Validator));
        assert_eq!(row.cells[0].verdict, verdict);
        assert!(verdict.is_some());
        assert_eq!(row.cells[0].case_names, ["a", "b", "c"]);
        assert_eq!((row.cells[0].passed, row.cells[0].failed), (1, 1));
    }

    #[test]
    fn cases_not_in_every_report_are_left_out_of_the_history() {
        use Outcome::{Fail, Pass};
        let mut older = report("x", "t", &[("a", Pass), ("b", Pass)]);
        older.case_set = format!("sha256:{}", "1".repeat(64));
        // `b` is gone from the newer: not a regression, though it no longer passes.
        let newer = report("x", "t", &[("a", Fail)]);
        let comparison = compare(
            &[("1".to_owned(), older), ("2".to_owned(), newer)],
            Order::Given,
        );
        assert!(!comparison.same_case_set);
        assert_eq!(
            comparison.left_out,
            [LeftOut {
                case: "b".into(),
                role: ProtocolRole::Validator,
                missing_from: vec![1],
            }]
        );
        let history = comparison.history.expect("one implementation");
        assert_eq!(changes(&history.steps[0].regressions), [("a", Pass, Fail)]);
        assert!(history.steps[0].fixes.is_empty());
    }

    #[test]
    fn a_report_not_meeting_its_schema_is_refused_with_the_place() {
        let good = report("x", "2026-01-01T00:00:00Z", &[("a", Outcome::Pass)]);
        let mut value = serde_json::to_value(&good).expect("JSON");
        let bytes = serde_json::to_vec(&value).expect("JSON");
        assert_eq!(parse_report("r", &bytes), Ok(good));
        value["corpusCases"] = serde_json::json!("one");
        let wrong = serde_json::to_vec(&value).expect("JSON");
        match parse_report("r.json", &wrong) {
            Err(Refusal::Schema { file, pointer, .. }) => {
                assert_eq!(
                    (file.as_str(), pointer.as_str()),
                    ("r.json", "/corpusCases")
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_report("r.json", b"{"),
            Err(Refusal::NotJson { .. })
        ));
    }

    #[test]
    fn file_names_are_safe_and_distinct_whatever_the_names() {
        let named = |name: &str| report(name, "t", &[]);
        let reports: Vec<(String, RunReport)> =
            ["Asr Go", "asr go", "../../etc/passwd", "..", "é/∆"]
                .iter()
                .map(|n| ((*n).to_owned(), named(n)))
                .collect();
        let files = compare(&reports, Order::Given).file_names();
        assert_eq!(
            files,
            ["asr-go-1", "asr-go-1-2", "etc-passwd-1", "1", "1-2"]
        );
    }

    #[test]
    fn a_report_of_another_role_lacks_no_case_and_outcomes_name_their_report() {
        use Outcome::{Fail, Pass};
        let validator = report("x", "t", &[("a", Pass)]);
        let mut reader = report("y", "t", &[("a", Pass)]);
        for case in &mut reader.cases {
            case.role = ProtocolRole::Reader;
        }
        let comparison = compare(
            &[
                ("v".to_owned(), validator.clone()),
                ("r".to_owned(), reader.clone()),
            ],
            Order::Given,
        );
        assert!(comparison.left_out.is_empty(), "{:?}", comparison.left_out);
        assert_eq!(comparison.cases.len(), 2);
        // A third report, a validator that fails `a`: it disagrees with the first only.
        let failing = report("z", "t", &[("a", Fail)]);
        let comparison = compare(
            &[
                ("v".to_owned(), validator),
                ("r".to_owned(), reader),
                ("f".to_owned(), failing),
            ],
            Order::Given,
        );
        let outcomes: Vec<(usize, Outcome)> = comparison.disagreements[0]
            .outcomes
            .iter()
            .map(|o| (o.report, o.outcome))
            .collect();
        assert_eq!(outcomes, [(0, Pass), (2, Fail)]);
        let row = comparison
            .cases
            .iter()
            .find(|c| c.role == ProtocolRole::Validator)
            .expect("the validator's case");
        assert_eq!(row.outcomes, [Some(Pass), None, Some(Fail)]);
    }
}
