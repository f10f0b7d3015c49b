//! Checks across the records of one stream, one concern a module: the header's place, seq
//! order and unique ids ([`order`]); revisions and copies ([`revisions`]); the header's
//! facts, declarations and the effective lineage ([`lineage`]); messages and deliveries
//! ([`deliveries`]); plans and delegations ([`plans`]); references that wait for the end
//! of the stream ([`deferred`]). Every concern reads records through the typed view of
//! [`crate::model`], which the reference reader shares.

mod deferred;
mod deliveries;
mod lineage;
mod order;
mod plans;
mod revisions;

#[cfg(test)]
mod tests;

use super::{Finding, Place, StreamSummary};
use crate::compact::Strings;
use crate::model::{Layout, Outline, Record, RecordIndex, Slot, Standing};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// Findings, each with the place it belongs to when that is not the current record.
pub(crate) type Out = Vec<(Finding, Option<Place>)>;

/// What the checker remembers of a stream while reading it.
#[derive(Debug, Default)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent facts read from the header and declarations"
)]
pub(crate) struct State {
    layout: Layout,
    first_not_header_reported: bool,
    highest_seq: Option<(u64, usize)>,
    index: RecordIndex,
    /// The stream has more records than are indexed, and that was reported.
    records_full: bool,
    /// The plan or delegation a record belongs to.
    groups: HashMap<u32, usize>,
    /// The line of the record that supersedes it.
    superseded_at: HashMap<u32, usize>,
    conversations: HashSet<String>,
    plans: HashMap<String, (usize, String)>,
    plan_count: usize,
    delegations: plans::Delegations,
    root: bool,
    parents: bool,
    mirror: bool,
    executed_by: BTreeSet<String>,
    executed_by_overflow: Option<Place>,
    own_session: Option<String>,
    spawned_by: Option<super::SpawnClaim>,
    announcements: Vec<(String, Option<String>, usize)>,
    lineage_lossy: bool,
    named: BTreeMap<String, (Place, Slot)>,
    deferred: Vec<deferred::Deferred>,
    waiting: Strings,
    /// How the stream was placed, when asked for.
    outline: Option<Outline>,
}

impl State {
    /// A state that also keeps the stream's [`Outline`].
    pub(crate) fn outlining() -> Self {
        State {
            outline: Some(Outline::default()),
            ..State::default()
        }
    }

    /// Where the next record stands: the header, or a record (a later `session` line is one).
    pub(crate) fn stand(&mut self, line: usize, kind: Option<&str>) -> Standing {
        self.layout.stand(line, kind)
    }

    pub(crate) fn record(
        &mut self,
        place: &Place,
        standing: Standing,
        record: &Record<'_>,
        out: &mut Out,
    ) {
        self.header_order(standing, record.kind, out);
        self.seq_order(place, record, out);
        let is_header = standing == Standing::Header;
        if let Some(outline) = &mut self.outline {
            if is_header {
                outline.header = Some(place.line);
            }
        }
        if is_header {
            self.header(place, record);
        }
        if record.kind == Some("declaration") {
            self.declaration(place, record, out);
        }
        for (slot, session) in record.sessions(is_header) {
            self.name_session(place, session, slot);
        }
        let revision = match record.kind {
            Some("plan") => self.plan(place, record, out),
            Some("subagent") => self.subagent(place, record, out),
            _ => plans::Revision::default(),
        };
        if let Some(target) = record.supersedes {
            self.supersedes(place, record.kind, target, revision.judged, out);
        }
        self.copied_from(place, record, out);
        match record.kind {
            Some("message") => self.message(place, record, out),
            Some("delivery") => self.delivery(place, record, out),
            _ => {}
        }
        self.index(place, record, revision.group, out);
    }

    pub(crate) fn finish(&mut self, lines: usize, out: &mut Out) {
        self.missing_header(lines, out);
        for deferred in std::mem::take(&mut self.deferred) {
            self.settle(deferred, out);
        }
        self.mirror_executed_by(out);
    }

    pub(crate) fn summary(&self) -> StreamSummary {
        StreamSummary {
            own_session: self.own_session.clone(),
            spawned_by: self.spawned_by.clone(),
            announcements: self.announcements.clone(),
            lineage_lossy: self.lineage_lossy,
            named_sessions: Vec::new(),
        }
    }

    /// The sessions the stream names other than itself, each with where it is first named.
    pub(crate) fn named_sessions(&self) -> impl Iterator<Item = (&String, &(Place, Slot))> {
        self.named.iter()
    }

    /// How the stream was placed, when [`State::outlining`] asked for it.
    pub(crate) fn take_outline(&mut self) -> Option<Outline> {
        let mut outline = self.outline.take()?;
        outline.sessions = self
            .named
            .keys()
            .filter(|s| Some(*s) != self.own_session.as_ref())
            .cloned()
            .collect();
        outline.records.sort();
        outline.references.sort();
        Some(outline)
    }

    /// Notes, for the outline, what a reference at `place` resolved to.
    fn outline_reference(&mut self, place: &Place, pointer: &str, targets: &[u32]) {
        if let Some(outline) = &mut self.outline {
            let lines = targets.iter().map(|&n| self.index.line(n)).collect();
            outline
                .references
                .push((place.line, pointer.to_owned(), lines));
        }
    }
}
