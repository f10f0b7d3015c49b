//! The header's facts, declarations and the effective lineage: root and parents never both
//! (ASR-402), a mirror names one executing session (ASR-422), `inherits.localThroughId`
//! names a record (ASR-409, settled at the end), and the sessions the stream names
//! (ASR-406, reported once the stream is read).

use super::deferred::Wait;
use super::{Out, State};
use crate::check::{Finding, Place, SpawnClaim};
use crate::model::{Lineage, Record, Slot, canonical_session};
use crate::rule;

impl State {
    pub(super) fn header(&mut self, place: &Place, record: &Record<'_>) {
        let header = record.header();
        self.own_session = header.own_session;
        self.mirror = header.mirror;
        self.lineage_lossy = header.lineage_lossy;
        self.conversations(record);
        if let Some(lineage) = record.declared_lineage(true) {
            self.root = lineage.root;
            self.parents = lineage.names_parent;
            if let Some((Some(session), claimed)) = lineage.facet("spawnedBy") {
                if let Some(session) = canonical_session(session) {
                    self.spawned_by = Some(SpawnClaim {
                        session,
                        record: claimed.map(str::to_owned),
                        line: place.line,
                    });
                }
            }
            self.lineage(place, &lineage);
        }
    }

    pub(super) fn declaration(&mut self, place: &Place, record: &Record<'_>, out: &mut Out) {
        self.conversations(record);
        let Some(lineage) = record.declared_lineage(false) else {
            return;
        };
        let adds_root = lineage.root;
        let adds_parent = lineage.names_parent;
        if (self.root || adds_root) && (self.parents || adds_parent) && (adds_root || adds_parent) {
            out.push((
                Finding::error(
                    rule::ASR_402,
                    "/lineage",
                    "with this declaration the effective lineage claims root: true and names a parent",
                ),
                None,
            ));
        }
        self.root |= adds_root;
        self.parents |= adds_parent;
        self.lineage(place, &lineage);
    }

    /// Facets shared by the header and declarations: inherits and executedBy.
    fn lineage(&mut self, place: &Place, lineage: &Lineage<'_>) {
        if let Some(target) = lineage.inherits.and_then(|i| i.local_through_id) {
            self.wait(
                place,
                "/lineage/inherits/localThroughId",
                target,
                Wait::LocalThroughId,
            );
        }
        for (_, session) in lineage.executed_by() {
            if let Some(session) = canonical_session(session) {
                self.executed_by.insert(session);
                if self.executed_by.len() > 1 && self.executed_by_overflow.is_none() {
                    self.executed_by_overflow = Some(place.clone());
                }
            }
        }
    }

    fn conversations(&mut self, record: &Record<'_>) {
        self.conversations
            .extend(record.conversations().map(str::to_owned));
    }

    /// Records a session the stream names, for ASR-406.
    pub(super) fn name_session(&mut self, place: &Place, session: &str, slot: Slot) {
        let Some(session) = canonical_session(session) else {
            return;
        };
        if self.own_session.as_deref() != Some(session.as_str()) {
            self.named
                .entry(session)
                .or_insert_with(|| (place.clone(), slot));
        }
    }

    /// ASR-422: a mirror's effective executedBy names exactly one session.
    pub(super) fn mirror_executed_by(&self, out: &mut Out) {
        if !self.mirror {
            return;
        }
        let header = Place {
            line: self.layout.header_line().unwrap_or(1),
            seq: Some(0),
            id: None,
        };
        if self.executed_by.is_empty() {
            out.push((
                Finding::error(
                    rule::ASR_422,
                    "/authority",
                    "the stream is a mirror but its lineage names no executedBy session",
                ),
                Some(header),
            ));
        } else if self.executed_by.len() > 1 {
            let sessions: Vec<_> = self.executed_by.iter().map(String::as_str).collect();
            out.push((
                Finding::error(
                    rule::ASR_422,
                    "/lineage/executedBy",
                    format!(
                        "the stream is a mirror but its effective executedBy names {} sessions: {}",
                        sessions.len(),
                        sessions.join(", ")
                    ),
                ),
                self.executed_by_overflow.clone().or(Some(header)),
            ));
        }
    }
}
