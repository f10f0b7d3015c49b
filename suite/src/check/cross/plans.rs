//! Plans and delegations: a later state of a plan supersedes its latest state (ASR-222),
//! and a change of a child's state is a revision of its subagent record (ASR-424).

use super::{Out, State};
use crate::check::{Finding, Place};
use crate::model::{Record, canonical_session};
use crate::rule;
use std::collections::HashMap;

/// The delegations announced so far, found by child session and by callId.
#[derive(Debug, Default)]
pub(super) struct Delegations {
    list: Vec<Delegation>,
    by_child: HashMap<String, Vec<usize>>,
    by_call: HashMap<String, Vec<usize>>,
}

#[derive(Debug)]
struct Delegation {
    child: Option<String>,
    call: Option<String>,
    latest: String,
    first_line: usize,
}

impl Delegations {
    /// The delegation a subagent record continues. A delegation is its child session: "A
    /// parent stream announces a child session with a subagent record", and every change the
    /// source records of that child, a resumption included (by another call or none), "is a
    /// revision of the subagent record". So the latest delegation of the same child (session
    /// references compared canonically), whatever its callId; for a record that names no
    /// child, the latest of the same callId that names no other child.
    fn find(&self, child: Option<&str>, call: Option<&str>) -> Option<usize> {
        if let Some(child) = child {
            if let Some(&found) = self.by_child.get(child).and_then(|list| list.last()) {
                return Some(found);
            }
        }
        let call = call?;
        self.by_call
            .get(call)
            .into_iter()
            .flatten()
            .rev()
            .find(|&&i| child.is_none() || self.list[i].child.is_none())
            .copied()
    }

    fn index(&mut self, index: usize, child: Option<&str>, call: Option<&str>) {
        for (map, key) in [(&mut self.by_child, child), (&mut self.by_call, call)] {
            if let Some(key) = key {
                let list = map.entry(key.to_owned()).or_default();
                if !list.contains(&index) {
                    list.push(index);
                }
            }
        }
    }
}

impl Delegation {
    fn describe(&self) -> String {
        match (&self.child, &self.call) {
            (Some(child), Some(call)) => format!("to {child} (callId {call})"),
            (Some(child), None) => format!("to {child}"),
            (None, Some(call)) => format!("of callId {call}"),
            (None, None) => "(unnamed)".to_owned(),
        }
    }
}

/// The group a plan or subagent record belongs to, and whether its check judged the
/// record's `supersedes`: a finding about it was made under ASR-222 or ASR-424, which the
/// check of revisions in general does not repeat.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Revision {
    pub group: Option<usize>,
    pub judged: bool,
}

impl State {
    /// ASR-222: a later state of a plan supersedes its previous state (the latest earlier
    /// plan record with its planId), and a plan record supersedes only a state of its plan.
    pub(super) fn plan(&mut self, place: &Place, record: &Record<'_>, out: &mut Out) -> Revision {
        let Some(plan_id) = record.native("planId") else {
            return Revision::default();
        };
        let supersedes = record.supersedes;
        let target = supersedes.and_then(|s| self.index.resolve_before(s, None));
        let judged;
        let group = if let Some((group, latest)) = self.plans.get(plan_id) {
            let group = *group;
            judged = match (supersedes, target) {
                (None, _) => {
                    out.push((
                        Finding::error(
                            rule::ASR_222,
                            "/supersedes",
                            format!("plan {plan_id:?} already has a state ({latest}); a later state must supersede it"),
                        ),
                        None,
                    ));
                    None
                }
                (Some(written), None) => Some(format!(
                    "supersedes {written:?}, which names no earlier record; a later state of plan {plan_id:?} \
                     supersedes its previous state, {latest}"
                )),
                (Some(_), Some(t)) if self.index.id(t) == latest => None,
                (Some(_), Some(t)) => {
                    let theirs = self.index.id(t);
                    Some(match self.index.kind(t) {
                        Some("plan") if self.groups.get(&t) == Some(&group) => format!(
                            "supersedes {theirs}, an older state of plan {plan_id:?}; a later state supersedes the \
                             previous one, {latest}"
                        ),
                        Some("plan") => format!(
                            "supersedes {theirs}, a state of another plan; a new state of {plan_id:?} supersedes {latest}"
                        ),
                        kind => format!(
                            "supersedes {theirs}, a {} record; a new state of plan {plan_id:?} supersedes its previous \
                             state, {latest}",
                            kind.unwrap_or("untyped")
                        ),
                    })
                }
            };
            group
        } else {
            judged = target.map(|t| {
                let theirs = self.index.id(t);
                match self.index.kind(t) {
                    Some("plan") => format!(
                        "supersedes {theirs}, a plan with another planId; revisions of a plan keep its planId"
                    ),
                    kind => format!(
                        "supersedes {theirs}, a {} record; a plan record supersedes only a state of its own plan",
                        kind.unwrap_or("untyped")
                    ),
                }
            });
            self.plan_count += 1;
            self.plan_count - 1
        };
        if let Some(message) = &judged {
            out.push((
                Finding::error(rule::ASR_222, "/supersedes", message.clone()),
                None,
            ));
        }
        if let Some(id) = &place.id {
            self.plans.insert(plan_id.to_owned(), (group, id.clone()));
        }
        Revision {
            group: Some(group),
            judged: judged.is_some(),
        }
    }

    /// ASR-424: a change of a child's state is a revision of the delegation's subagent
    /// record (its latest), and a subagent record supersedes only a record of its own
    /// delegation.
    pub(super) fn subagent(
        &mut self,
        place: &Place,
        record: &Record<'_>,
        out: &mut Out,
    ) -> Revision {
        let child = record.child_session.and_then(canonical_session);
        let call = record.native("callId").map(str::to_owned);
        if let Some(child) = &child {
            self.announcements
                .push((child.clone(), call.clone(), place.line));
        }
        let existing = self.delegations.find(child.as_deref(), call.as_deref());
        let supersedes = record.supersedes;
        let target = supersedes.and_then(|s| self.index.resolve_before(s, None));
        let Some(id) = place.id.clone() else {
            return Revision::default();
        };
        let (index, judged) = if let Some(index) = existing {
            let delegation = &self.delegations.list[index];
            let name = delegation.describe();
            let latest = &delegation.latest;
            let judged = match (supersedes, target) {
                (None, _) => {
                    out.push((
                        Finding::error(
                            rule::ASR_424,
                            "/supersedes",
                            format!(
                                "a second announcement of the delegation {name} (first at line {}); a change of the \
                                 child's state must supersede {latest}",
                                delegation.first_line
                            ),
                        ),
                        None,
                    ));
                    None
                }
                (Some(written), None) => Some(format!(
                    "supersedes {written:?}, which names no earlier record; a change of the state of the delegation \
                     {name} supersedes its latest record, {latest}"
                )),
                (Some(_), Some(t)) if self.index.id(t) == latest => None,
                (Some(_), Some(t)) => {
                    let theirs = self.index.id(t);
                    // Plans are grouped too, numbered apart: the type tells them from delegations.
                    let same = self.index.kind(t) == Some("subagent")
                        && self.groups.get(&t) == Some(&index);
                    Some(if same {
                        format!(
                            "supersedes {theirs}, an older record of the delegation {name}; a revision supersedes \
                             its latest record, {latest}"
                        )
                    } else {
                        format!(
                            "supersedes {theirs}, which is not a record of the delegation {name}; it must supersede \
                             {latest}"
                        )
                    })
                }
            };
            let delegation = &mut self.delegations.list[index];
            delegation.latest = id;
            if delegation.child.is_none() {
                delegation.child.clone_from(&child);
            }
            if delegation.call.is_none() {
                delegation.call.clone_from(&call);
            }
            (index, judged)
        } else {
            let judged = target.map(|t| {
                let theirs = self.index.id(t);
                match self.index.kind(t) {
                    Some("subagent") => format!(
                        "supersedes {theirs}, the record of another delegation (another childSession or callId)"
                    ),
                    kind => format!(
                        "supersedes {theirs}, a {} record; a subagent record supersedes only a record of its own \
                         delegation",
                        kind.unwrap_or("untyped")
                    ),
                }
            });
            let index = self.delegations.list.len();
            self.delegations.list.push(Delegation {
                child: child.clone(),
                call: call.clone(),
                latest: id,
                first_line: place.line,
            });
            (index, judged)
        };
        self.delegations
            .index(index, child.as_deref(), call.as_deref());
        if let Some(message) = &judged {
            out.push((
                Finding::error(rule::ASR_424, "/supersedes", message.clone()),
                None,
            ));
        }
        Revision {
            group: Some(index),
            judged: judged.is_some(),
        }
    }
}
