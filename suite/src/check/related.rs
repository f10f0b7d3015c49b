//! Checks across streams validated together: lineage references between them resolve
//! (ASR-406) and a parent and its child agree on the delegation (ASR-412).

use super::{CheckOptions, StreamReport, StreamSummary};
use crate::diagnostic::{Diagnostic, Severity};
use crate::refs::{Ref, parse_ref};
use foldhash::quality::RandomState;
use std::collections::HashMap;

/// Drops the ASR-406 notices about sessions that are among `reports`, and adds the
/// ASR-412 findings of each child whose parent is among them.
pub fn check_related(reports: &mut [StreamReport], options: &CheckOptions) {
    let summaries: Vec<&StreamSummary> = reports.iter().map(|r| &r.summary).collect();
    let changes = related(&summaries, options);
    for (report, change) in reports.iter_mut().zip(changes) {
        change.apply(report);
    }
}

/// What the checks across streams change in one stream's report: the findings it loses
/// (ASR-406 notices of sessions that are among the streams) and those it gains (ASR-412).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Related {
    /// The indices, in the stream's own findings, of those dropped, ascending.
    pub dropped: Vec<usize>,
    /// The indices, in the summary's `named_sessions`, of the sessions found among the
    /// streams.
    pub resolved: Vec<usize>,
    /// The findings added.
    pub added: Vec<Diagnostic>,
}

impl Related {
    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.dropped.is_empty() && self.resolved.is_empty() && self.added.is_empty()
    }

    /// Changes `report` so: it is then as [`check_related`] leaves it.
    pub fn apply(&self, report: &mut StreamReport) {
        if self.is_empty() {
            return;
        }
        self.apply_to_findings(&mut report.diagnostics);
        let mut index = 0;
        report.summary.named_sessions.retain(|_| {
            index += 1;
            !self.resolved.contains(&(index - 1))
        });
        for (_, slot) in &mut report.summary.named_sessions {
            if let Some(i) = slot {
                *i -= self.dropped.iter().filter(|r| **r < *i).count();
            }
        }
    }

    /// Changes a stream's findings (as its report holds them, by line) so: for a caller
    /// that kept the findings apart from the summary.
    pub fn apply_to_findings(&self, findings: &mut Vec<Diagnostic>) {
        let mut index = 0;
        findings.retain(|_| {
            index += 1;
            !self.dropped.contains(&(index - 1))
        });
        for d in &self.added {
            findings.push(d.clone());
            findings.sort_by_key(|d| d.line);
        }
    }
}

/// What the checks across streams change in each of the streams whose summaries are given,
/// in their order: they need nothing of a stream but its summary, so a caller may keep
/// summaries alone while the findings wait elsewhere.
pub fn related(summaries: &[&StreamSummary], options: &CheckOptions) -> Vec<Related> {
    let mut changes = vec![Related::default(); summaries.len()];
    // Seeded per run, as SipHash is, at a fraction of its cost on ids a few bytes long.
    let by_session: HashMap<&str, usize, RandomState> = summaries
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.own_session.as_deref().map(|own| (own, i)))
        .collect();
    if by_session.is_empty() {
        return changes;
    }
    for (summary, change) in summaries.iter().zip(&mut changes) {
        for (k, (session, slot)) in summary.named_sessions.iter().enumerate() {
            if by_session.contains_key(session.as_str()) {
                change.resolved.push(k);
                change.dropped.extend(*slot);
            }
        }
        change.dropped.sort_unstable();
    }
    for (child_index, child) in summaries.iter().enumerate() {
        let (Some(own), Some(claim)) = (&child.own_session, &child.spawned_by) else {
            continue;
        };
        let Some(&parent_index) = by_session.get(claim.session.as_str()) else {
            continue;
        };
        let parent = summaries[parent_index];
        let announcements: Vec<_> = parent
            .announcements
            .iter()
            .filter(|(c, _, _)| c == own)
            .collect();
        let finding = if announcements.is_empty() {
            if parent.lineage_lossy {
                continue;
            }
            diagnostic(
                Severity::Notice,
                claim.line,
                "/lineage/spawnedBy",
                format!(
                    "the parent stream {} is here but has no subagent record announcing {own}, and declares no lineage loss",
                    claim.session
                ),
            )
        } else {
            let Some(Ref::Native {
                key: "callId",
                value: child_call,
            }) = claim.record.as_deref().and_then(parse_ref)
            else {
                continue;
            };
            let parent_calls: Vec<&str> = announcements
                .iter()
                .filter_map(|(_, call, _)| call.as_deref())
                .collect();
            if parent_calls.is_empty() || parent_calls.contains(&child_call) {
                continue;
            }
            let (_, _, line) = announcements[0];
            diagnostic(
                Severity::Warning,
                claim.line,
                "/lineage/spawnedBy/record",
                format!(
                    "the child names the delegating call {child_call:?}, but the parent's subagent record at line {line} \
                     names {}",
                    parent_calls.join(", ")
                ),
            )
        };
        if options.reports(finding.rule.as_str()) {
            changes[child_index].added.push(finding);
        }
    }
    changes
}

fn diagnostic(severity: Severity, line: usize, pointer: &str, message: String) -> Diagnostic {
    Diagnostic {
        rule: crate::rule::ASR_412,
        severity,
        line,
        seq: Some(0),
        id: None,
        pointer: pointer.into(),
        message,
    }
}
