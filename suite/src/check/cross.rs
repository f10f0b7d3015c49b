//! Checks across the records of one stream: the header's place, seq order, unique ids,
//! references between records, revision chains, declared conversations, the effective
//! lineage.

use super::{Finding, Place, SpawnClaim, StreamSummary};
use crate::compact::{Ids, Index, MAX_RECORDS, Rising, Strings};
use crate::refs::{Ref, own_session_ref, parse_ref, parse_session_ref};
use serde_json::{Map, Value};
use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};

/// Native ids that `key=value` references resolve through.
const NATIVE_KEYS: &[&str] = &["messageId", "callId", "planId", "turnId", "inferenceId"];

/// Lineage facets that name a parent (ASR-402).
const PARENT_FACETS: &[&str] = &["spawnedBy", "forkedFrom", "continues", "relatedUnknown"];

/// Findings, each with the place it belongs to when that is not the current record.
pub(crate) type Out = Vec<(Finding, Option<Place>)>;

/// What is kept of each record with an id, record `n` being the `n`th id first seen, in
/// columns so that a record costs no allocation and no padding of its own. A record holds:
/// its id's bytes and 4 bytes to find them; 4 bytes a slot in the id index (between 5 and
/// 11 bytes a record with the load kept under 3/4); its line (4 bytes: the high half is kept
/// once each time it changes); seq (8) and whether it has one (1); its type (1, an index
/// into the types seen: the 255th and later types are kept in a map). Only records that
/// belong to a plan or delegation, or that are superseded, have an entry in a map for that.
#[derive(Debug, Default)]
struct Records {
    ids: Ids,
    lines: Rising,
    seqs: Vec<u64>,
    has_seq: Vec<bool>,
    kinds: Vec<u8>,
    /// Types past the 254th: they are rare, and a byte stays a byte.
    more_kinds: HashMap<u32, u32>,
    kind_names: Vec<Box<str>>,
    kind_numbers: HashMap<Box<str>, u32>,
    /// The plan or delegation a record belongs to.
    groups: HashMap<u32, usize>,
    /// The line of the record that supersedes it.
    superseded_at: HashMap<u32, usize>,
}

/// A type number that does not fit a byte.
const MORE_KINDS: u8 = u8::MAX;

impl Records {
    fn find(&self, id: &str) -> Option<u32> {
        self.ids.find(id.as_bytes())
    }

    /// Adds a record whose id is not yet known; `None` when there are too many.
    fn add(&mut self, id: &str, line: usize, seq: Option<u64>, kind: &str) -> Option<u32> {
        let n = self.ids.add(id.as_bytes())?;
        self.lines.push(line as u64);
        self.seqs.push(seq.unwrap_or(0));
        self.has_seq.push(seq.is_some());
        let kind = if let Some(&k) = self.kind_numbers.get(kind) {
            k
        } else {
            let k = u32::try_from(self.kind_names.len()).unwrap_or(u32::MAX);
            self.kind_names.push(kind.into());
            self.kind_numbers.insert(kind.into(), k);
            k
        };
        match u8::try_from(kind) {
            Ok(k) if k < MORE_KINDS => self.kinds.push(k),
            _ => {
                self.kinds.push(MORE_KINDS);
                self.more_kinds.insert(n, kind);
            }
        }
        Some(n)
    }

    fn id(&self, n: u32) -> &str {
        self.ids.text(n)
    }

    fn line(&self, n: u32) -> usize {
        usize::try_from(self.lines.get(n as usize)).unwrap_or(usize::MAX)
    }

    fn seq(&self, n: u32) -> Option<u64> {
        let i = n as usize;
        self.has_seq
            .get(i)
            .copied()
            .unwrap_or(false)
            .then(|| self.seqs[i])
    }

    fn kind(&self, n: u32) -> &str {
        let k = match self.kinds.get(n as usize) {
            Some(&MORE_KINDS) => self.more_kinds.get(&n).copied().unwrap_or(u32::MAX),
            Some(&k) => u32::from(k),
            None => u32::MAX,
        };
        self.kind_names.get(k as usize).map_or("", |k| k)
    }

    fn group(&self, n: u32) -> Option<usize> {
        self.groups.get(&n).copied()
    }
}

/// Records by native id (`messageId=m1`), keyed by a 64-bit hash of the reference text
/// (randomly keyed, so a stream cannot aim for collisions): for each native id, its hash (8
/// bytes), its last occurrence (4) and a slot in the index (between 5 and 11); for each
/// occurrence, the record (4) and the occurrence before it (4).
#[derive(Debug, Default)]
struct Natives {
    index: Index,
    hashes: Vec<u64>,
    last: Vec<u32>,
    records: Vec<u32>,
    earlier: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl Natives {
    fn key(&self, hash: u64) -> Option<u32> {
        self.index.find(hash, |k| self.hashes[k as usize] == hash)
    }

    fn add(&mut self, hash: u64, record: u32) {
        let Ok(occurrence) = u32::try_from(self.records.len()) else {
            return;
        };
        if occurrence == NONE {
            return;
        }
        if let Some(k) = self.key(hash) {
            let k = k as usize;
            self.earlier.push(self.last[k]);
            self.last[k] = occurrence;
        } else {
            let Ok(k) = u32::try_from(self.hashes.len()) else {
                return;
            };
            self.hashes.push(hash);
            self.last.push(occurrence);
            self.earlier.push(NONE);
            let hashes = &self.hashes;
            self.index.insert(hash, k, |k| hashes[k as usize]);
        }
        self.records.push(record);
    }

    /// The records with a native id, in stream order.
    fn records(&self, hash: u64) -> Vec<u32> {
        let mut found = Vec::new();
        let mut at = self.key(hash).map_or(NONE, |k| self.last[k as usize]);
        while at != NONE {
            found.push(self.records[at as usize]);
            at = self.earlier[at as usize];
        }
        found.reverse();
        found
    }
}

#[derive(Debug)]
struct Delegation {
    child: Option<String>,
    call: Option<String>,
    latest: String,
    first_line: usize,
}

#[derive(Debug)]
enum Wait {
    Supersedes,
    CopiedLocal,
    DeliveryMessage,
    DerivedFrom { session_like: bool },
    LocalThroughId,
}

/// A reference that waits for the end of the stream: where it is, and its texts (the
/// waiting record's id, the pointer, the reference) by number in [`State::waiting`], so that
/// it costs 40 bytes and the texts, not three allocations.
#[derive(Debug)]
struct Deferred {
    line: usize,
    seq: Option<u64>,
    id: u32,
    pointer: u32,
    target: u32,
    wait: Wait,
}

/// What the checker remembers of a stream while reading it.
#[derive(Debug, Default)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent facts read from the header and declarations"
)]
pub(crate) struct State {
    first_line_done: bool,
    header_line: Option<usize>,
    first_not_header_reported: bool,
    highest_seq: Option<(u64, usize)>,
    records: Records,
    natives: Natives,
    hasher: RandomState,
    /// The stream has more records than are indexed, and that was reported.
    records_full: bool,
    conversations: HashSet<String>,
    plans: HashMap<String, (usize, String)>,
    plan_count: usize,
    delegations: Vec<Delegation>,
    by_child: HashMap<String, Vec<usize>>,
    by_call: HashMap<String, Vec<usize>>,
    root: bool,
    parents: bool,
    mirror: bool,
    executed_by: BTreeSet<String>,
    executed_by_overflow: Option<Place>,
    own_session: Option<String>,
    spawned_by: Option<SpawnClaim>,
    announcements: Vec<(String, Option<String>, usize)>,
    lineage_lossy: bool,
    named: BTreeMap<String, (Place, String)>,
    deferred: Vec<Deferred>,
    waiting: Strings,
}

impl State {
    pub(crate) fn record(&mut self, place: &Place, record: &Map<String, Value>, out: &mut Out) {
        let kind = record.get("type").and_then(Value::as_str).unwrap_or("");
        self.header_order(place, kind, out);
        self.seq_order(place, record, out);
        if kind == "session" && self.header_line == Some(place.line) {
            self.header(place, record);
        }
        if kind == "declaration" {
            self.declaration(place, record, out);
        }
        let group = match kind {
            "plan" => self.plan(place, record, out),
            "subagent" => self.subagent(place, record, out),
            _ => None,
        };
        if let Some(target) = ref_member(record, "supersedes") {
            self.supersedes(place, kind, target, out);
        }
        self.copied_from(place, record, out);
        match kind {
            "message" => self.message(place, record, out),
            "delivery" => self.delivery(place, record, out),
            _ => {}
        }
        self.index(place, record, kind, group, out);
    }

    fn header_order(&mut self, place: &Place, kind: &str, out: &mut Out) {
        let first = !self.first_line_done;
        self.first_line_done = true;
        if kind == "session" {
            if first {
                self.header_line = Some(place.line);
            } else if let Some(line) = self.header_line {
                out.push((
                    Finding::error(
                        "ASR-X-007",
                        "/type",
                        format!("a second session header; the header is at line {line}"),
                    ),
                    None,
                ));
            } else {
                // Read it as the header all the same, so that what it declares still counts;
                // the record before it was reported as not being the header.
                self.header_line = Some(place.line);
            }
        } else if first {
            self.first_not_header_reported = true;
            out.push((
                Finding::error(
                    "ASR-X-007",
                    "/type",
                    format!("the first record is of type {kind:?}; the stream must start with its session header"),
                ),
                None,
            ));
        }
    }

    fn seq_order(&mut self, place: &Place, record: &Map<String, Value>, out: &mut Out) {
        let Some(value) = record.get("seq") else {
            return;
        };
        let Some(seq) = place.seq else {
            // The schema reports fractions and negatives; an integral value that is still no
            // u64 (1e23, 5.0) would pass it.
            if value.as_f64().is_some_and(|v| v.fract() == 0.0 && v >= 0.0) {
                out.push((
                    Finding::error(
                        "ASR-X-008",
                        "/seq",
                        format!("seq {value} is not an integer from 0 to 2^64-1 written as one"),
                    ),
                    None,
                ));
            }
            return;
        };
        if let Some((highest, line)) = self.highest_seq {
            if seq <= highest {
                out.push((
                    Finding::error(
                        "ASR-X-008",
                        "/seq",
                        format!("seq {seq} is not higher than seq {highest} at line {line}"),
                    ),
                    None,
                ));
                return;
            }
        }
        self.highest_seq = Some((seq, place.line));
    }

    fn header(&mut self, place: &Place, record: &Map<String, Value>) {
        let agent = record
            .get("agent")
            .and_then(|a| a.get("name"))
            .and_then(Value::as_str);
        let namespace = str_member(record, "namespace");
        if let (Some(agent), Some(id)) = (agent, str_member(record, "sessionId")) {
            self.own_session = Some(own_session_ref(agent, namespace, id));
        }
        self.mirror = str_member(record, "authority") == Some("mirror");
        self.lineage_lossy = record
            .get("producer")
            .and_then(|p| p.get("lossy"))
            .and_then(Value::as_array)
            .is_some_and(|l| {
                l.iter()
                    .filter_map(Value::as_str)
                    .any(|s| s.starts_with("lineage"))
            });
        self.conversations(record);
        if let Some(Value::Object(lineage)) = record.get("lineage") {
            self.root = lineage.get("root") == Some(&Value::Bool(true));
            self.parents = has_parent(lineage);
            if let Some(spawned) = lineage.get("spawnedBy") {
                if let Some(session) = spawned
                    .get("session")
                    .and_then(Value::as_str)
                    .and_then(canonical)
                {
                    self.spawned_by = Some(SpawnClaim {
                        session,
                        record: spawned
                            .get("record")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                        line: place.line,
                    });
                }
            }
            self.lineage(place, lineage);
        }
    }

    fn declaration(&mut self, place: &Place, record: &Map<String, Value>, out: &mut Out) {
        self.conversations(record);
        let Some(Value::Object(lineage)) = record.get("lineage") else {
            return;
        };
        let adds_root = lineage.get("root") == Some(&Value::Bool(true));
        let adds_parent = has_parent(lineage);
        if (self.root || adds_root) && (self.parents || adds_parent) && (adds_root || adds_parent) {
            out.push((
                Finding::error(
                    "ASR-402",
                    "/lineage",
                    "with this declaration the effective lineage claims root: true and names a parent",
                ),
                None,
            ));
        }
        self.root |= adds_root;
        self.parents |= adds_parent;
        self.lineage(place, lineage);
    }

    /// Facets shared by the header and declarations: executedBy, inherits, named sessions.
    fn lineage(&mut self, place: &Place, lineage: &Map<String, Value>) {
        for facet in PARENT_FACETS {
            if let Some(session) = lineage
                .get(*facet)
                .and_then(|f| f.get("session"))
                .and_then(Value::as_str)
            {
                self.name_session(place, session, format!("/lineage/{facet}/session"));
            }
        }
        if let Some(Value::Object(inherits)) = lineage.get("inherits") {
            if let Some(from) = inherits.get("from").and_then(Value::as_str) {
                self.name_session(place, from, "/lineage/inherits/from".into());
            }
            if let Some(target) = inherits
                .get("localThroughId")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                self.wait(
                    place,
                    "/lineage/inherits/localThroughId",
                    target,
                    Wait::LocalThroughId,
                );
            }
        }
        if let Some(Value::Array(entries)) = lineage.get("executedBy") {
            for (n, entry) in entries.iter().enumerate() {
                let Some(session) = entry.get("session").and_then(Value::as_str) else {
                    continue;
                };
                self.name_session(place, session, format!("/lineage/executedBy/{n}/session"));
                if let Some(session) = canonical(session) {
                    self.executed_by.insert(session);
                    if self.executed_by.len() > 1 && self.executed_by_overflow.is_none() {
                        self.executed_by_overflow = Some(place.clone());
                    }
                }
            }
        }
    }

    fn conversations(&mut self, record: &Map<String, Value>) {
        match record.get("conversations") {
            Some(Value::Array(items)) => {
                for item in items {
                    let id = item
                        .as_str()
                        .or_else(|| item.get("id").and_then(Value::as_str));
                    if let Some(id) = id {
                        self.conversations.insert(id.to_owned());
                    }
                }
            }
            Some(Value::Object(map)) => self.conversations.extend(map.keys().cloned()),
            _ => {}
        }
    }

    /// ASR-222: a later state of a plan supersedes its latest state.
    fn plan(&mut self, place: &Place, record: &Map<String, Value>, out: &mut Out) -> Option<usize> {
        let plan_id = str_member(record, "planId")?;
        let supersedes = ref_member(record, "supersedes");
        let target = supersedes.and_then(|s| self.resolve_one(s));
        let group = if let Some((group, latest)) = self.plans.get(plan_id) {
            let group = *group;
            match target {
                None if supersedes.is_none() => out.push((
                    Finding::error(
                        "ASR-222",
                        "/supersedes",
                        format!("plan {plan_id:?} already has a state ({latest}); a later state must supersede it"),
                    ),
                    None,
                )),
                Some(t) if self.records.kind(t) == "plan" && self.records.group(t) != Some(group) => {
                    out.push((
                        Finding::error(
                            "ASR-222",
                            "/supersedes",
                            format!("supersedes {}, a state of another plan; a new state of {plan_id:?} supersedes {latest}", self.records.id(t)),
                        ),
                        None,
                    ));
                }
                _ => {}
            }
            group
        } else {
            if let Some(t) = target {
                if self.records.kind(t) == "plan" {
                    out.push((
                        Finding::error(
                            "ASR-222",
                            "/supersedes",
                            format!("supersedes {}, a plan with another planId; revisions of a plan keep its planId", self.records.id(t)),
                        ),
                        None,
                    ));
                }
            }
            self.plan_count += 1;
            self.plan_count - 1
        };
        if let Some(id) = &place.id {
            self.plans.insert(plan_id.to_owned(), (group, id.clone()));
        }
        Some(group)
    }

    /// ASR-424: a change of a child's state is a revision of its subagent record.
    fn subagent(
        &mut self,
        place: &Place,
        record: &Map<String, Value>,
        out: &mut Out,
    ) -> Option<usize> {
        let child_text = str_member(record, "childSession");
        if let Some(child) = child_text {
            self.name_session(place, child, "/childSession".into());
        }
        let child = child_text.and_then(canonical);
        let call = str_member(record, "callId").map(str::to_owned);
        if let Some(child) = &child {
            self.announcements
                .push((child.clone(), call.clone(), place.line));
        }
        let existing = self.find_delegation(child.as_deref(), call.as_deref());
        let supersedes = ref_member(record, "supersedes");
        let target = supersedes.and_then(|s| self.resolve_one(s));
        let id = place.id.clone()?;
        if let Some(index) = existing {
            let delegation = &self.delegations[index];
            let name = describe_delegation(delegation);
            match &target {
                    None if supersedes.is_none() => out.push((
                        Finding::error(
                            "ASR-424",
                            "/supersedes",
                            format!(
                                "a second announcement of the delegation {name} (first at line {}); a change of the \
                                 child's state must supersede {}",
                                delegation.first_line, delegation.latest
                            ),
                        ),
                        None,
                    )),
                    Some(t) if self.records.group(*t) != Some(index) => out.push((
                        Finding::error(
                            "ASR-424",
                            "/supersedes",
                            format!("supersedes {}, which is not a record of the delegation {name}; it must supersede {}", self.records.id(*t), delegation.latest),
                        ),
                        None,
                    )),
                    _ => {}
                }
            let delegation = &mut self.delegations[index];
            delegation.latest = id;
            if delegation.child.is_none() {
                delegation.child.clone_from(&child);
            }
            if delegation.call.is_none() {
                delegation.call.clone_from(&call);
            }
            self.index_delegation(index, child.as_deref(), call.as_deref());
            Some(index)
        } else {
            if let Some(t) = target {
                if self.records.kind(t) == "subagent" {
                    out.push((
                            Finding::error(
                                "ASR-424",
                                "/supersedes",
                                format!("supersedes {}, the record of another delegation (another childSession or callId)", self.records.id(t)),
                            ),
                            None,
                        ));
                }
            }
            let index = self.delegations.len();
            self.delegations.push(Delegation {
                child: child.clone(),
                call: call.clone(),
                latest: id,
                first_line: place.line,
            });
            self.index_delegation(index, child.as_deref(), call.as_deref());
            Some(index)
        }
    }

    fn find_delegation(&self, child: Option<&str>, call: Option<&str>) -> Option<usize> {
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
                .find(|&&i| compatible(&self.delegations[i]))
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
            .find(|&&i| child.is_none() || self.delegations[i].child.is_none())
            .copied()
    }

    fn index_delegation(&mut self, index: usize, child: Option<&str>, call: Option<&str>) {
        if let Some(child) = child {
            let list = self.by_child.entry(child.to_owned()).or_default();
            if !list.contains(&index) {
                list.push(index);
            }
        }
        if let Some(call) = call {
            let list = self.by_call.entry(call.to_owned()).or_default();
            if !list.contains(&index) {
                list.push(index);
            }
        }
    }

    /// ASR-X-014: supersedes names an earlier record of the same type, once.
    fn supersedes(&mut self, place: &Place, kind: &str, target: &str, out: &mut Out) {
        let Some(found) = self.resolve_one(target) else {
            self.wait(place, "/supersedes", target, Wait::Supersedes);
            return;
        };
        let theirs = self.records.kind(found);
        let found_id = self.records.id(found);
        if theirs != kind {
            out.push((
                Finding::error(
                    "ASR-X-014",
                    "/supersedes",
                    format!("supersedes {found_id}, a {theirs} record; a revision supersedes a record of its own type ({kind})"),
                ),
                None,
            ));
        } else if let Some(line) = self.records.superseded_at.get(&found) {
            out.push((
                Finding::error(
                    "ASR-X-014",
                    "/supersedes",
                    format!("supersedes {found_id}, which the record at line {line} already supersedes; a revision names the latest state"),
                ),
                None,
            ));
        } else if self
            .records
            .seq(found)
            .zip(place.seq)
            .is_some_and(|(theirs, ours)| theirs >= ours)
        {
            out.push((
                Finding::error(
                    "ASR-X-014",
                    "/supersedes",
                    format!("supersedes {found_id}, whose seq is not lower"),
                ),
                None,
            ));
        } else {
            self.records.superseded_at.insert(found, place.line);
        }
    }

    /// ASR-413: a local original has a lower seq.
    fn copied_from(&mut self, place: &Place, record: &Map<String, Value>, out: &mut Out) {
        let Some(Value::Object(copied)) = record.get("copiedFrom") else {
            return;
        };
        let session = copied.get("session").and_then(Value::as_str);
        if let Some(session) = session {
            self.name_session(place, session, "/copiedFrom/session".into());
        }
        let local = match session.and_then(canonical) {
            None => session.is_none(),
            Some(session) => self.own_session.as_deref() == Some(session.as_str()),
        };
        let Some(target) = copied
            .get("record")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        else {
            return;
        };
        if !local {
            return;
        }
        match self
            .resolve(target)
            .into_iter()
            .find(|&n| self.records.id(n) != place.id.as_deref().unwrap_or(""))
        {
            Some(found) => {
                let theirs = self.records.seq(found);
                if theirs
                    .zip(place.seq)
                    .is_some_and(|(theirs, ours)| theirs >= ours)
                {
                    out.push((
                        Finding::error(
                            "ASR-413",
                            "/copiedFrom/record",
                            format!(
                                "the original {} has a seq not lower than the copy's",
                                self.records.id(found)
                            ),
                        ),
                        None,
                    ));
                }
            }
            None => self.wait(place, "/copiedFrom/record", target, Wait::CopiedLocal),
        }
    }

    fn message(&mut self, place: &Place, record: &Map<String, Value>, out: &mut Out) {
        if let Some(conversation) = str_member(record, "conversation") {
            if !self.conversations.contains(conversation) {
                out.push((
                    Finding::error(
                        "ASR-227",
                        "/conversation",
                        format!("conversation {conversation:?} is not declared in the header or an earlier declaration"),
                    ),
                    None,
                ));
            }
        }
        if let Some(Value::Array(entries)) = record.get("derivedFrom") {
            for (n, entry) in entries.iter().enumerate() {
                let Some(entry) = entry.as_str().filter(|e| !e.is_empty()) else {
                    continue;
                };
                let pointer = format!("/derivedFrom/{n}");
                if entry.contains('#') {
                    match parse_session_ref(entry) {
                        Ok(_) => {
                            self.name_session(place, entry, pointer);
                        }
                        Err(e) => out.push((
                            Finding::error(
                                "ASR-228",
                                pointer,
                                format!("derivedFrom entry {entry:?} has a # part but is no session reference: {}", e.describe()),
                            ),
                            None,
                        )),
                    }
                } else {
                    let session_like = parse_session_ref(entry).is_ok();
                    self.wait(place, &pointer, entry, Wait::DerivedFrom { session_like });
                }
            }
        }
    }

    fn delivery(&mut self, place: &Place, record: &Map<String, Value>, out: &mut Out) {
        if let Some(conversation) = str_member(record, "conversation") {
            if !self.conversations.contains(conversation) {
                out.push((
                    Finding::error(
                        "ASR-235",
                        "/conversation",
                        format!("conversation {conversation:?} is not declared in the header or an earlier declaration"),
                    ),
                    None,
                ));
            }
        }
        if let Some(message) = ref_member(record, "message") {
            self.wait(place, "/message", message, Wait::DeliveryMessage);
        }
    }

    fn index(
        &mut self,
        place: &Place,
        record: &Map<String, Value>,
        kind: &str,
        group: Option<usize>,
        out: &mut Out,
    ) {
        let Some(id) = &place.id else { return };
        if let Some(first) = self.records.find(id) {
            out.push((
                Finding::error(
                    "ASR-X-009",
                    "/id",
                    format!(
                        "id {id:?} is already the id of the record at line {}",
                        self.records.line(first)
                    ),
                ),
                None,
            ));
            return;
        }
        let Some(n) = self.records.add(id, place.line, place.seq, kind) else {
            if !self.records_full {
                self.records_full = true;
                out.push((
                    Finding::error(
                        "ASR-X-006",
                        "/id",
                        format!(
                            "the stream has more than {MAX_RECORDS} records with an id, the most the kit indexes; \
                             later ones are not indexed, and references to them do not resolve"
                        ),
                    ),
                    None,
                ));
            }
            return;
        };
        if let Some(group) = group {
            self.records.groups.insert(n, group);
        }
        for key in NATIVE_KEYS {
            if let Some(value) = str_member(record, key) {
                let hash = self.native_hash(key, value);
                self.natives.add(hash, n);
            }
        }
    }

    fn wait(&mut self, place: &Place, pointer: &str, target: &str, wait: Wait) {
        let mut text = |t: &str| u32::try_from(self.waiting.push(t.as_bytes())).unwrap_or(NONE);
        let id = place.id.as_deref().map_or(NONE, &mut text);
        let pointer = text(pointer);
        let target = text(target);
        self.deferred.push(Deferred {
            line: place.line,
            seq: place.seq,
            id,
            pointer,
            target,
            wait,
        });
    }

    /// Records a session the stream names, for ASR-406.
    fn name_session(&mut self, place: &Place, session: &str, pointer: String) {
        let Some(session) = canonical(session) else {
            return;
        };
        if self.own_session.as_deref() != Some(session.as_str()) {
            self.named
                .entry(session)
                .or_insert_with(|| (place.clone(), pointer));
        }
    }

    fn native_hash(&self, key: &str, value: &str) -> u64 {
        let mut hasher = self.hasher.build_hasher();
        hasher.write(key.as_bytes());
        hasher.write(b"=");
        hasher.write(value.as_bytes());
        hasher.finish()
    }

    /// The records a reference names, in stream order: a native id through its key, else a
    /// record id.
    fn resolve(&self, reference: &str) -> Vec<u32> {
        if let Some(Ref::Native { key, value }) = parse_ref(reference) {
            if NATIVE_KEYS.contains(&key) {
                return self.natives.records(self.native_hash(key, value));
            }
        }
        self.records.find(reference).into_iter().collect()
    }

    /// The latest record a reference names.
    fn resolve_one(&self, reference: &str) -> Option<u32> {
        self.resolve(reference).pop()
    }

    pub(crate) fn finish(&mut self, lines: usize, out: &mut Out) {
        if self.header_line.is_none() && !self.first_not_header_reported {
            let message = if lines == 0 {
                "the stream is empty; it must start with its session header"
            } else {
                "the stream has no session header"
            };
            out.push((
                Finding::error("ASR-X-007", "", message),
                Some(Place {
                    line: 1,
                    ..Place::default()
                }),
            ));
        }
        for deferred in std::mem::take(&mut self.deferred) {
            self.settle(deferred, out);
        }
        if self.mirror {
            let header = Place {
                line: self.header_line.unwrap_or(1),
                seq: Some(0),
                id: None,
            };
            if self.executed_by.is_empty() {
                out.push((
                    Finding::error(
                        "ASR-422",
                        "/authority",
                        "the stream is a mirror but its lineage names no executedBy session",
                    ),
                    Some(header),
                ));
            } else if self.executed_by.len() > 1 {
                let sessions: Vec<_> = self.executed_by.iter().map(String::as_str).collect();
                out.push((
                    Finding::error(
                        "ASR-422",
                        "/lineage/executedBy",
                        format!("the stream is a mirror but its effective executedBy names {} sessions: {}", sessions.len(), sessions.join(", ")),
                    ),
                    self.executed_by_overflow.clone().or(Some(header)),
                ));
            }
        }
    }

    fn settle(&self, deferred: Deferred, out: &mut Out) {
        let text = |n: u32| self.waiting.text(n as usize);
        let place = Place {
            line: deferred.line,
            seq: deferred.seq,
            id: (deferred.id != NONE).then(|| text(deferred.id).to_owned()),
        };
        let pointer = text(deferred.pointer).to_owned();
        let target = text(deferred.target);
        let wait = deferred.wait;
        let found = self.resolve(target);
        let unresolved = || {
            Finding::warning(
                "ASR-X-015",
                pointer.clone(),
                format!("{target:?} names no record of this stream"),
            )
        };
        let finding = match wait {
            Wait::Supersedes => match found.last() {
                Some(&n) => Finding::error(
                    "ASR-X-014",
                    pointer.clone(),
                    format!(
                        "supersedes {}, a record that comes later",
                        self.records.id(n)
                    ),
                ),
                None => unresolved(),
            },
            Wait::CopiedLocal => match found
                .iter()
                .find(|&&n| Some(self.records.id(n)) != place.id.as_deref())
                .or(found.last())
            {
                Some(&n) => Finding::error(
                    "ASR-413",
                    pointer.clone(),
                    format!(
                        "the original {} does not have a lower seq than the copy (it is the copy itself or comes later)",
                        self.records.id(n)
                    ),
                ),
                None => unresolved(),
            },
            Wait::DeliveryMessage => {
                if found.is_empty() {
                    unresolved()
                } else if found.iter().any(|&n| self.records.kind(n) == "message") {
                    return;
                } else {
                    let kinds: BTreeSet<_> = found.iter().map(|&n| self.records.kind(n)).collect();
                    Finding::error(
                        "ASR-235",
                        pointer.clone(),
                        format!(
                            "the delivery's message {target:?} names a {} record, not a message",
                            kinds.into_iter().collect::<Vec<_>>().join("/")
                        ),
                    )
                }
            }
            Wait::DerivedFrom { session_like } => {
                if !found.is_empty() {
                    return;
                }
                if session_like {
                    Finding::error(
                        "ASR-228",
                        pointer.clone(),
                        format!(
                            "derivedFrom entry {target:?} is a session reference without a # part naming a record"
                        ),
                    )
                } else {
                    unresolved()
                }
            }
            Wait::LocalThroughId => {
                if self.records.find(target).is_some() {
                    return;
                }
                Finding::error(
                    "ASR-409",
                    pointer.clone(),
                    format!(
                        "inherits.localThroughId {target:?} is not the id of a record of this stream"
                    ),
                )
            }
        };
        out.push((finding, Some(place)));
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
    pub(crate) fn named_sessions(&self) -> impl Iterator<Item = (&String, &(Place, String))> {
        self.named.iter()
    }
}

fn has_parent(lineage: &Map<String, Value>) -> bool {
    PARENT_FACETS.iter().any(|f| lineage.contains_key(*f))
        || matches!(
            lineage
                .get("inherits")
                .and_then(|i| i.get("mode"))
                .and_then(Value::as_str),
            Some("copied" | "referenced" | "rendered")
        )
}

fn describe_delegation(delegation: &Delegation) -> String {
    match (&delegation.child, &delegation.call) {
        (Some(child), Some(call)) => format!("to {child} (callId {call})"),
        (Some(child), None) => format!("to {child}"),
        (None, Some(call)) => format!("of callId {call}"),
        (None, None) => "(unnamed)".to_owned(),
    }
}

fn canonical(session: &str) -> Option<String> {
    parse_session_ref(session).ok().map(|r| r.canonical())
}

/// A reference member; an empty one is malformed (reported by the schema), not unresolved.
fn ref_member<'a>(record: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    str_member(record, key).filter(|r| !r.is_empty())
}

fn str_member<'a>(record: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    record.get(key).and_then(Value::as_str)
}
