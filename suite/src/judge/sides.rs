//! Where several implementations' answers to one stream differ, and which of them side with
//! which answer: for each rule and JSON Pointer where not all that answered agree, the
//! distinct values, each with the implementations that hold it.

use super::members::Kinds;
use super::{UNATTRIBUTED, diff_readings};
use crate::catalog::Catalog;
use crate::json::same;
use crate::protocol::{ProtocolRole, ReadingAnswer, StreamAnswer};
use crate::rule;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// One answer at a pointer, and the implementations (by index) that give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Side {
    /// The value; `None` where the member is absent, which differs from every value.
    pub value: Option<Value>,
    /// The implementations that hold it, in order.
    pub holders: Vec<usize>,
}

/// A place where the implementations that answered do not all agree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The rule the place comes from ([`UNATTRIBUTED`] when none does).
    pub rule: String,
    /// JSON Pointer into the answer: `/valid`, a member of the reading, or a validator's
    /// `/findings/line N`.
    pub pointer: String,
    /// The distinct answers, ordered by their first holder.
    pub sides: Vec<Side>,
}

impl Difference {
    /// The difference in words: where, and each side with the implementations holding it,
    /// named by `labels` (by index).
    pub fn said(&self, labels: &[String]) -> String {
        let sides: Vec<String> = self
            .sides
            .iter()
            .map(|side| {
                let holders: Vec<&str> = side
                    .holders
                    .iter()
                    .filter_map(|n| labels.get(*n).map(String::as_str))
                    .collect();
                let value = side
                    .value
                    .as_ref()
                    .map_or_else(|| "absent".to_owned(), ToString::to_string);
                format!("[{}] {value}", holders.join(", "))
            })
            .collect();
        format!("{}: {}", self.pointer, sides.join("; "))
    }

    /// The same difference, whatever the values: the same rule, pointer and split of the
    /// implementations into sides. What shrinking keeps.
    pub fn same(&self, other: &Difference) -> bool {
        self.rule == other.rule
            && self.pointer == other.pointer
            && self.partition() == other.partition()
    }

    /// The holders of each side.
    pub fn partition(&self) -> Vec<&[usize]> {
        self.sides.iter().map(|s| s.holders.as_slice()).collect()
    }
}

/// The value a validator's finding has for an implementation that does not report it.
pub const NO_SUCH_FINDING: &str = "no such finding";

/// Every difference among `answers` (one for each implementation, `None` for one that gave
/// none) to one stream played in `role`. `kinds` are the stream's records (a member's rule
/// depends on its record's kind); `case_rules` are the rules of the case the stream belongs
/// to, which a verdict is charged to when no answer cites a rule that decides it.
pub fn differences(
    answers: &[Option<&StreamAnswer>],
    role: ProtocolRole,
    kinds: &Kinds,
    case_rules: &[&str],
) -> Vec<Difference> {
    let answered: Vec<(usize, &StreamAnswer)> = answers
        .iter()
        .enumerate()
        .filter_map(|(n, a)| a.map(|a| (n, a)))
        .collect();
    if answered.len() < 2 {
        return Vec::new();
    }
    if role == ProtocolRole::Reader {
        reader_differences(&answered, kinds, case_rules)
    } else {
        validator_differences(&answered, case_rules)
    }
}

fn reader_differences(
    answered: &[(usize, &StreamAnswer)],
    kinds: &Kinds,
    case_rules: &[&str],
) -> Vec<Difference> {
    if let Some(verdict) = verdict(answered, |refusing| {
        let catalog = Catalog::embedded();
        refusing
            .iter()
            .flat_map(|a| a.diagnostics.iter())
            .map(|d| d.rule.as_str())
            .find(|r| catalog.binds(r, ProtocolRole::Reader))
            .or_else(|| case_rules.first().copied())
            .map_or_else(|| rule::ASR_X_003.to_string(), str::to_owned)
    }) {
        // A reading sent beside a refusal is not compared (PROTOCOL.md): only the verdict is.
        return vec![verdict];
    }
    if !answered[0].1.valid {
        return Vec::new();
    }
    let null = Value::Null;
    let json = |a: &StreamAnswer| -> Value {
        a.reading
            .as_ref()
            .map_or(&null, ReadingAnswer::json)
            .clone()
    };
    let readings: Vec<(usize, Value)> = answered.iter().map(|(n, a)| (*n, json(a))).collect();
    // Every place two readings differ shows against the first: where it agrees with one of
    // them, it differs from the other.
    let mut places: BTreeMap<(String, Option<String>), String> = BTreeMap::new();
    for (_, other) in &readings[1..] {
        for m in diff_readings(&readings[0].1, other, kinds) {
            places
                .entry((m.pointer.clone(), m.subject.clone()))
                .or_insert(m.rule);
        }
    }
    places
        .into_iter()
        .map(|((pointer, subject), rule)| {
            let values: Vec<(usize, Option<Value>)> = readings
                .iter()
                .map(|(n, reading)| {
                    let at = reading.pointer(&pointer);
                    let value = match &subject {
                        // A record's crediting: whether the list names it.
                        Some(id) => Some(Value::Bool(at.and_then(Value::as_array).is_some_and(
                            |ids| ids.iter().any(|v| v.as_str() == Some(id.as_str())),
                        ))),
                        None => at.cloned(),
                    };
                    (*n, value)
                })
                .collect();
            let pointer = match &subject {
                Some(id) => crate::diagnostic::pointer_join(&pointer, id),
                None => pointer,
            };
            Difference {
                rule,
                pointer,
                sides: sides(values.into_iter()),
            }
        })
        .filter(|d| d.sides.len() > 1)
        .collect()
}

fn validator_differences(
    answered: &[(usize, &StreamAnswer)],
    case_rules: &[&str],
) -> Vec<Difference> {
    let mut out: Vec<Difference> = verdict(answered, |_| {
        case_rules
            .first()
            .map_or_else(|| UNATTRIBUTED.to_owned(), |r| (*r).to_owned())
    })
    .into_iter()
    .collect();
    let findings: Vec<BTreeSet<(usize, String, String)>> = answered
        .iter()
        .map(|(_, a)| {
            a.diagnostics
                .iter()
                .map(|d| (d.line, d.severity.to_string(), d.rule.clone()))
                .collect()
        })
        .collect();
    let every: BTreeSet<&(usize, String, String)> = findings.iter().flatten().collect();
    for finding in every {
        let (line, severity, rule) = finding;
        let values = answered.iter().zip(&findings).map(|((n, _), held)| {
            let value = if held.contains(finding) {
                format!("{severity} {rule}")
            } else {
                NO_SUCH_FINDING.to_owned()
            };
            (*n, Some(Value::from(value)))
        });
        let sides = sides(values);
        if sides.len() > 1 {
            out.push(Difference {
                rule: rule.clone(),
                pointer: format!("/findings/line {line}"),
                sides,
            });
        }
    }
    out
}

/// The difference in verdicts, if the answers differ on one, charged to `rule_of` the
/// refusing answers.
fn verdict(
    answered: &[(usize, &StreamAnswer)],
    rule_of: impl FnOnce(&[&StreamAnswer]) -> String,
) -> Option<Difference> {
    let sides = sides(
        answered
            .iter()
            .map(|(n, a)| (*n, Some(Value::Bool(a.valid)))),
    );
    if sides.len() < 2 {
        return None;
    }
    let refusing: Vec<&StreamAnswer> = answered
        .iter()
        .filter(|(_, a)| !a.valid)
        .map(|(_, a)| *a)
        .collect();
    Some(Difference {
        rule: rule_of(&refusing),
        pointer: "/valid".into(),
        sides,
    })
}

/// Values grouped into sides, in the order of their first holder.
fn sides(values: impl Iterator<Item = (usize, Option<Value>)>) -> Vec<Side> {
    let mut out: Vec<Side> = Vec::new();
    for (n, value) in values {
        let alike = |side: &&mut Side| match (&side.value, &value) {
            (Some(v), Some(w)) => same(v, w),
            (None, None) => true,
            _ => false,
        };
        match out.iter_mut().find(alike) {
            Some(side) => side.holders.push(n),
            None => out.push(Side {
                value,
                holders: vec![n],
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(text: &str) -> StreamAnswer {
        serde_json::from_str(text).expect("an answer")
    }

    fn reading(text: &str) -> StreamAnswer {
        answer(&format!(r#"{{"valid":true,"reading":{text}}}"#))
    }

    fn partition(d: &Difference) -> Vec<Vec<usize>> {
        d.sides.iter().map(|s| s.holders.clone()).collect()
    }

    #[test]
    fn readers_side_by_value() {
        let a = reading(r#"{"records":{"r1":{"text":"a","kind":"x"}}}"#);
        let b = reading(r#"{"records":{"r1":{"text":"a","kind":"x"}}}"#);
        let c = reading(r#"{"records":{"r1":{"text":"b","kind":"x"}}}"#);
        let found = differences(
            &[Some(&a), Some(&b), Some(&c)],
            ProtocolRole::Reader,
            &Kinds::default(),
            &[],
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].pointer, "/records/r1/text");
        assert_eq!(partition(&found[0]), vec![vec![0, 1], vec![2]]);
        assert_eq!(found[0].sides[1].value, Some(Value::from("b")));
        // The odd one out first: still found, and the split is the same one.
        let found = differences(
            &[Some(&c), Some(&a), Some(&b)],
            ProtocolRole::Reader,
            &Kinds::default(),
            &[],
        );
        assert_eq!(partition(&found[0]), vec![vec![0], vec![1, 2]]);
        assert!(
            differences(
                &[Some(&a), Some(&b), Some(&b)],
                ProtocolRole::Reader,
                &Kinds::default(),
                &[]
            )
            .is_empty()
        );
    }

    #[test]
    fn an_absent_member_is_a_value_of_its_own() {
        let a = reading(r#"{"records":{"r1":{"text":"a"}}}"#);
        let b = reading(r#"{"records":{"r1":{}}}"#);
        let c = reading(r#"{"records":{"r1":{"text":null}}}"#);
        let found = differences(
            &[Some(&a), Some(&b), Some(&c)],
            ProtocolRole::Reader,
            &Kinds::default(),
            &[],
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(partition(&found[0]), vec![vec![0], vec![1], vec![2]]);
        let labels = ["1 a".to_owned(), "2 b".to_owned(), "3 c".to_owned()];
        assert_eq!(
            found[0].said(&labels),
            r#"/records/r1/text: [1 a] "a"; [2 b] absent; [3 c] null"#
        );
        assert_eq!(found[0].sides[1].value, None);
        assert_eq!(found[0].sides[2].value, Some(Value::Null));
    }

    #[test]
    fn a_refusal_is_compared_by_its_verdict_only() {
        let a = reading(r#"{"records":{"r1":{"text":"a"}}}"#);
        let b = reading(r#"{"records":{"r1":{"text":"b"}}}"#);
        let refused = answer(
            r#"{"valid":false,"diagnostics":[{"rule":"ASR-200","severity":"error","line":1}],"reading":{"records":{}}}"#,
        );
        let found = differences(
            &[Some(&a), Some(&refused), Some(&b)],
            ProtocolRole::Reader,
            &Kinds::default(),
            &[],
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].pointer, "/valid");
        assert_eq!(partition(&found[0]), vec![vec![0, 2], vec![1]]);
        // One that gave no answer takes no side.
        let found = differences(
            &[Some(&a), None, Some(&b)],
            ProtocolRole::Reader,
            &Kinds::default(),
            &[],
        );
        assert_eq!(partition(&found[0]), vec![vec![0], vec![2]]);
        assert!(
            differences(
                &[Some(&a), None, None],
                ProtocolRole::Reader,
                &Kinds::default(),
                &[]
            )
            .is_empty()
        );
    }

    #[test]
    fn validators_differ_on_a_finding_under_its_rule() {
        let found_212 =
            r#"{"valid":false,"diagnostics":[{"rule":"ASR-212","severity":"error","line":2}]}"#;
        let extra = answer(
            r#"{"valid":false,"diagnostics":[{"rule":"ASR-212","severity":"error","line":2},{"rule":"ASR-210","severity":"warning","line":3}]}"#,
        );
        let (a, b) = (answer(found_212), answer(found_212));
        let found = differences(
            &[Some(&a), Some(&extra), Some(&b)],
            ProtocolRole::Validator,
            &Kinds::default(),
            &["ASR-212"],
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].rule.as_str(), found[0].pointer.as_str()),
            ("ASR-210", "/findings/line 3")
        );
        assert_eq!(partition(&found[0]), vec![vec![0, 2], vec![1]]);
        assert_eq!(found[0].sides[0].value, Some(Value::from(NO_SUCH_FINDING)));
        let accepted = answer(r#"{"valid":true,"diagnostics":[]}"#);
        let found = differences(
            &[Some(&a), Some(&accepted)],
            ProtocolRole::Validator,
            &Kinds::default(),
            &["ASR-212"],
        );
        let verdicts: Vec<_> = found.iter().map(|d| d.pointer.as_str()).collect();
        assert_eq!(verdicts, ["/valid", "/findings/line 2"]);
        assert_eq!(found[0].rule, "ASR-212");
    }

    #[test]
    fn the_same_difference_is_the_same_split() {
        let d = |rule: &str, holders: Vec<Vec<usize>>| Difference {
            rule: rule.into(),
            pointer: "/valid".into(),
            sides: holders
                .into_iter()
                .map(|holders| Side {
                    value: Some(Value::Bool(holders.len() > 1)),
                    holders,
                })
                .collect(),
        };
        let one = d("ASR-200", vec![vec![0, 1], vec![2]]);
        assert!(one.same(&d("ASR-200", vec![vec![0, 1], vec![2]])));
        assert!(!one.same(&d("ASR-200", vec![vec![0], vec![1, 2]])));
        assert!(!one.same(&d("ASR-201", vec![vec![0, 1], vec![2]])));
    }
}
