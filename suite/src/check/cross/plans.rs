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
    /// The delegation a subagent record continues: the latest one of the same child whose
    /// callId does not differ, else the latest of the same callId that names no other child.
    fn find(&self, child: Option<&str>, call: Option<&str>) -> Option<usize> {
        let compatible = |d: &Delegation| match (d.call.as_deref(), call) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        if let Some(child) = child {
            if let Some(found) = self
                .by_child
                .get(child)
                .into_iter()
                .flatten()
                .rev()
                .find(|&&i| compatible(&self.list[i]))
            {
                return Some(*found);
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

impl State {
    /// ASR-222: a later state of a plan supersedes its latest state. Returns the plan's
    /// number, the group the record belongs to.
    pub(super) fn plan(
        &mut self,
        place: &Place,
        record: &Record<'_>,
        out: &mut Out,
    ) -> Option<usize> {
        let plan_id = record.native("planId")?;
        let supersedes = record.supersedes;
        let target = supersedes.and_then(|s| self.index.resolve_before(s, None));
        let group = if let Some((group, latest)) = self.plans.get(plan_id) {
            let group = *group;
            match target {
                None if supersedes.is_none() => out.push((
                    Finding::error(
                        rule::ASR_222,
                        "/supersedes",
                        format!("plan {plan_id:?} already has a state ({latest}); a later state must supersede it"),
                    ),
                    None,
                )),
                Some(t)
                    if self.index.kind(t) == Some("plan") && self.groups.get(&t) != Some(&group) =>
                {
                    out.push((
                        Finding::error(
                            rule::ASR_222,
                            "/supersedes",
                            format!(
                                "supersedes {}, a state of another plan; a new state of {plan_id:?} supersedes {latest}",
                                self.index.id(t)
                            ),
                        ),
                        None,
                    ));
                }
                _ => {}
            }
            group
        } else {
            if let Some(t) = target.filter(|&t| self.index.kind(t) == Some("plan")) {
                out.push((
                    Finding::error(
                        rule::ASR_222,
                        "/supersedes",
                        format!(
                            "supersedes {}, a plan with another planId; revisions of a plan keep its planId",
                            self.index.id(t)
                        ),
                    ),
                    None,
                ));
            }
            self.plan_count += 1;
            self.plan_count - 1
        };
        if let Some(id) = &place.id {
            self.plans.insert(plan_id.to_owned(), (group, id.clone()));
        }
        Some(group)
    }

    /// ASR-424: a change of a child's state is a revision of its subagent record. Returns
    /// the delegation's number, the group the record belongs to.
    pub(super) fn subagent(
        &mut self,
        place: &Place,
        record: &Record<'_>,
        out: &mut Out,
    ) -> Option<usize> {
        let child = record.child_session.and_then(canonical_session);
        let call = record.native("callId").map(str::to_owned);
        if let Some(child) = &child {
            self.announcements
                .push((child.clone(), call.clone(), place.line));
        }
        let existing = self.delegations.find(child.as_deref(), call.as_deref());
        let supersedes = record.supersedes;
        let target = supersedes.and_then(|s| self.index.resolve_before(s, None));
        let id = place.id.clone()?;
        if let Some(index) = existing {
            let delegation = &self.delegations.list[index];
            let name = delegation.describe();
            match target {
                None if supersedes.is_none() => out.push((
                    Finding::error(
                        rule::ASR_424,
                        "/supersedes",
                        format!(
                            "a second announcement of the delegation {name} (first at line {}); a change of the \
                             child's state must supersede {}",
                            delegation.first_line, delegation.latest
                        ),
                    ),
                    None,
                )),
                Some(t) if self.groups.get(&t) != Some(&index) => out.push((
                    Finding::error(
                        rule::ASR_424,
                        "/supersedes",
                        format!(
                            "supersedes {}, which is not a record of the delegation {name}; it must supersede {}",
                            self.index.id(t),
                            delegation.latest
                        ),
                    ),
                    None,
                )),
                _ => {}
            }
            let delegation = &mut self.delegations.list[index];
            delegation.latest = id;
            if delegation.child.is_none() {
                delegation.child.clone_from(&child);
            }
            if delegation.call.is_none() {
                delegation.call.clone_from(&call);
            }
            self.delegations
                .index(index, child.as_deref(), call.as_deref());
            Some(index)
        } else {
            if let Some(t) = target.filter(|&t| self.index.kind(t) == Some("subagent")) {
                out.push((
                    Finding::error(
                        rule::ASR_424,
                        "/supersedes",
                        format!(
                            "supersedes {}, the record of another delegation (another childSession or callId)",
                            self.index.id(t)
                        ),
                    ),
                    None,
                ));
            }
            let index = self.delegations.list.len();
            self.delegations.list.push(Delegation {
                child: child.clone(),
                call: call.clone(),
                latest: id,
                first_line: place.line,
            });
            self.delegations
                .index(index, child.as_deref(), call.as_deref());
            Some(index)
        }
    }
}
