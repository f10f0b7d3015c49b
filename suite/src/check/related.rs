//! Checks across streams validated together: lineage references between them resolve
//! (ASR-406) and a parent and its child agree on the delegation (ASR-412).

use super::{CheckOptions, StreamReport};
use crate::diagnostic::{Diagnostic, Severity};
use crate::refs::{Ref, parse_ref};
use std::collections::HashMap;

/// Drops the ASR-406 notices about sessions that are among `reports`, and adds the
/// ASR-412 findings of each child whose parent is among them.
pub fn check_related(reports: &mut [StreamReport], options: &CheckOptions) {
    let by_session: HashMap<String, usize> = reports
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.summary.own_session.clone().map(|s| (s, i)))
        .collect();
    if by_session.is_empty() {
        return;
    }
    for report in reports.iter_mut() {
        let resolved: Vec<usize> = report
            .summary
            .named_sessions
            .iter()
            .filter(|(session, _)| by_session.contains_key(session))
            .filter_map(|(_, index)| *index)
            .collect();
        let mut index = 0;
        report.diagnostics.retain(|_| {
            index += 1;
            !resolved.contains(&(index - 1))
        });
        report
            .summary
            .named_sessions
            .retain(|(session, _)| !by_session.contains_key(session));
        for (_, slot) in &mut report.summary.named_sessions {
            if let Some(i) = slot {
                *i -= resolved.iter().filter(|r| **r < *i).count();
            }
        }
    }
    let mut added: Vec<(usize, Diagnostic)> = Vec::new();
    for (child_index, child) in reports.iter().enumerate() {
        let (Some(own), Some(claim)) = (&child.summary.own_session, &child.summary.spawned_by)
        else {
            continue;
        };
        let Some(&parent_index) = by_session.get(&claim.session) else {
            continue;
        };
        let parent = &reports[parent_index].summary;
        let announcements: Vec<_> = parent
            .announcements
            .iter()
            .filter(|(c, _, _)| c == own)
            .collect();
        if announcements.is_empty() {
            if !parent.lineage_lossy {
                added.push((
                    child_index,
                    diagnostic(
                        Severity::Notice,
                        claim.line,
                        "/lineage/spawnedBy",
                        format!(
                            "the parent stream {} is here but has no subagent record announcing {own}, and declares no lineage loss",
                            claim.session
                        ),
                    ),
                ));
            }
            continue;
        }
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
        if !parent_calls.is_empty() && !parent_calls.contains(&child_call) {
            let (_, _, line) = announcements[0];
            added.push((
                child_index,
                diagnostic(
                    Severity::Warning,
                    claim.line,
                    "/lineage/spawnedBy/record",
                    format!(
                        "the child names the delegating call {child_call:?}, but the parent's subagent record at line {line} \
                         names {}",
                        parent_calls.join(", ")
                    ),
                ),
            ));
        }
    }
    for (index, d) in added {
        if options.reports(d.rule.as_str()) {
            reports[index].diagnostics.push(d);
            reports[index].diagnostics.sort_by_key(|d| d.line);
        }
    }
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
