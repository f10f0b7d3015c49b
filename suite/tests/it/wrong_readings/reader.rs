//! A second reader, written from PROTOCOL.md's definition of the reading, that can misread
//! one sentence of it at a time ([`Knob`]). Without a knob it must read every stream of the
//! corpus exactly as the reference reader does (a test holds it), so that a wrong reading
//! differs from the right one by its misreading alone.

use asr_suite::model::{INHERITING_MODES, NATIVE_KEYS, PARENT_FACETS};
use asr_suite::refs::{Ref, own_session_ref, parse_ref, parse_session_ref};
use serde_json::{Map, Value, json};
use std::collections::{BTreeSet, HashMap, HashSet};

/// One misreading of the definition of the reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Knob {
    // session.root
    RootFromAbsence,
    RootTrueIgnored,
    RootDeclarationsIgnored,
    InheritsModeNotAParent,
    ExecutedByIsAParent,
    AnyInheritsIsAParent,
    RelatedUnknownNotAParent,
    // session.unresolved
    UnresolvedNotDeduplicated,
    UnresolvedKeepsFragment,
    UnresolvedNotSorted,
    UnresolvedIncludesOwnSession,
    OwnSessionUnescaped,
    UnresolvedMissesChildSession,
    UnresolvedMissesCopiedFrom,
    UnresolvedMissesDerivedFrom,
    UnresolvedMissesInheritsFrom,
    UnresolvedMissesExecutedBy,
    UnresolvedMissesDeclarations,
    UnresolvedEscapesAsWritten,
    // records and their type
    HeaderIsARecord,
    DeclarationsAreNotRecords,
    UnknownRecordTypesSkipped,
    RevisionsCollapsed,
    // superseded
    SupersedesFirstMatch,
    SupersedesIdsOnly,
    SupersededChainHeadOnly,
    SupersededByAnyReference,
    SupersededDirectionSwapped,
    // originality
    CopiedFromIgnored,
    MirrorIgnored,
    MirrorOverridesCopies,
    PrefixBelowNotAt,
    PrefixIncludesDeclarations,
    PrefixIgnored,
    DeclarationsInheritsIgnored,
    CopiedWithoutLocalThroughOriginal,
    NoInheritsOriginal,
    InheritsUnknownOriginal,
    ReferencedOrRenderedUnknown,
    DerivedFromIsACopy,
    ExecutedByMakesCopies,
    // contextView
    WithdrawnInContextView,
    UserAudienceInContextView,
    UnknownAudienceOutOfContextView,
    FailedStatusOutOfContextView,
    ContextViewFromLatestRevision,
    // delivered
    DeliveredFromFirstRevision,
    DeliveredByAnyRevision,
    QueuedConfirms,
    AnyDeliveryConfirms,
    OnlyDeliveredConfirms,
    AttemptsMerged,
    DeliveryNativeRefUnresolved,
    DeliveryMessageFromLatestRevisionOnly,
    // parts: effective values
    PartAuthorIgnored,
    PartOriginIgnored,
    PartPhaseIgnored,
    MessageValuesNotInherited,
    PhaseOnlyOnText,
    // parts: which
    PartsFromDisplayContent,
    UnknownPartsDropped,
    // parts: render
    VisibilityAbsentFull,
    ReasoningOpaqueStateAsOpaque,
    UnknownPartAsText,
    ResourceLinkSkipped,
    ReasoningOnlyMessageAsText,
    RefusalAsText,
    DataAsText,
    OpaquePartSkipped,
    // parts: index
    SignatureIndexed,
    OpaqueStateIndexed,
    OpaquePartIndexed,
    AnnotationsAndMetaIndexed,
    SummaryIndexedUnderFull,
    TextIndexedUnderSummary,
    HiddenTextIndexed,
    AbsentVisibilityTextNotIndexed,
    ResourceLinkMetadataIndexed,
    ResourceTextNotIndexed,
    DataIndexed,
    RefusalNotIndexed,
    UnknownPartTextIndexed,
    // totals
    CopiesCredited,
    UnknownCredited,
    OwnRecordsById,
    MayIncludeCopiesFromCopies,
    MayIncludeCopiesNever,
    SupersededNotCredited,
    // records: which lines are records
    NumericIdIsARecord,
    LaterHeaderIdIsARecord,
    RepeatedIdLastWins,
    LaterSessionLineNotARecord,
    LaterSessionLineLineage,
    IdlessDeliveryConfirms,
    IdlessRevisionSupersedes,
    // supersedes of another form
    SupersedesArrayNamesEach,
    AnyNativeKeyResolves,
    // delivered: chains and targets
    ForkOnlyLastEndConfirms,
    OriginalDeliveryMessage,
    DeliveryResolvedBeforeOnly,
    // members of another JSON type
    NullFacetNotAParent,
    CopiedFromMustBeObject,
    PartNullOverrides,
    NullVisibilityIsOther,
    NullInheritsReplaces,
    ContentStringAsTextPart,
    NonObjectPartDropped,
    // the effective inherits
    DeclarationFromItsPosition,
    InheritsMerged,
    // the own session
    OwnSessionWithoutNamespace,
    OwnSessionAsWritten,
    // the canonical form
    CanonicalControlsRaw,
    CanonicalLowerHex,
    NonUtf8Lossy,
    SortByUtf16,
    DecodeEscapedDelimiters,
    UnresolvedIncludesMalformed,
    DerivedNativeRefAsSession,
    // index of text parts
    EmptyTextNotIndexed,
    MissingTextIndexedEmpty,
    // the copied prefix
    DerivedInPrefixOriginal,
    LocalThroughHeaderNoPrefix,
    // members read in other ways
    AudienceBothOutOfContextView,
    EncryptedReasoningAsOpaque,
    ResourceBlobIndexed,
    UntypedPartAsText,
}

/// Whether the spec text in hand names a record type (the catalog's value set of `*.type`).
fn named_type(kind: &str) -> bool {
    asr_suite::catalog::Catalog::embedded()
        .value_sets
        .iter()
        .find(|set| set.member == "*.type")
        .is_some_and(|set| set.values.iter().any(|v| v == kind))
}

/// A record: a line with an id, the first with that id.
struct Rec<'a> {
    id: String,
    object: &'a Map<String, Value>,
    header: bool,
    /// The record's line, by number among the stream's objects.
    at: usize,
}

impl Rec<'_> {
    fn kind(&self) -> Option<&str> {
        self.object.get("type").and_then(Value::as_str)
    }

    fn str(&self, key: &str) -> Option<&str> {
        self.object.get(key).and_then(Value::as_str)
    }

    fn seq(&self) -> Option<u64> {
        self.object.get("seq").and_then(Value::as_u64)
    }

    fn reference(&self, key: &str) -> Option<&str> {
        self.str(key).filter(|r| !r.is_empty())
    }
}

struct Stream<'a> {
    knob: Option<Knob>,
    lines: Vec<&'a Map<String, Value>>,
    header: Option<&'a Map<String, Value>>,
    /// Every record, the header included, by number.
    records: Vec<Rec<'a>>,
    by_id: HashMap<String, usize>,
}

/// Reads a stream given as its lines, misreading what `knob` says.
pub(crate) fn read(lines: &[Value], knob: Option<Knob>) -> Value {
    let stream = Stream::new(lines, knob);
    stream.reading()
}

impl<'a> Stream<'a> {
    fn new(lines: &'a [Value], knob: Option<Knob>) -> Self {
        let objects: Vec<&Map<String, Value>> = lines.iter().filter_map(Value::as_object).collect();
        let header = lines
            .first()
            .and_then(Value::as_object)
            .filter(|o| o.get("type").and_then(Value::as_str) == Some("session"));
        let mut records = Vec::new();
        let mut by_id = HashMap::new();
        let id_of = |object: &Map<String, Value>| -> Option<String> {
            match object.get("id") {
                Some(Value::String(id)) => Some(id.clone()),
                Some(Value::Number(n)) if knob == Some(Knob::NumericIdIsARecord) => {
                    Some(n.to_string())
                }
                _ => None,
            }
        };
        let header_id = header.and_then(&id_of);
        // The line each id's record is read from: its first, or its last under
        // RepeatedIdLastWins (the header keeping its own).
        let mut last: HashMap<String, usize> = HashMap::new();
        for (at, object) in objects.iter().enumerate() {
            if let Some(id) = id_of(object) {
                last.insert(id, at);
            }
        }
        for (at, object) in objects.iter().enumerate() {
            let Some(id) = id_of(object) else {
                continue;
            };
            let is_header = at == 0 && header.is_some();
            let later_header_id = !is_header
                && header_id.as_deref() == Some(id.as_str())
                && knob == Some(Knob::LaterHeaderIdIsARecord);
            if knob == Some(Knob::RepeatedIdLastWins)
                && !is_header
                && header_id.as_deref() != Some(id.as_str())
                && last.get(&id) != Some(&at)
            {
                continue;
            }
            if later_header_id {
                if records.iter().any(|r: &Rec| !r.header && r.id == id) {
                    continue;
                }
            } else if by_id.contains_key(&id) {
                continue;
            } else {
                by_id.insert(id.clone(), records.len());
            }
            records.push(Rec {
                id,
                object,
                header: is_header,
                at,
            });
        }
        Stream {
            knob,
            lines: objects,
            header,
            records,
            by_id,
        }
    }

    fn on(&self, knob: Knob) -> bool {
        self.knob == Some(knob)
    }

    /// Whether the lineage of line `at` counts: the header's, and (unless left out) each
    /// declaration's.
    fn declares(&self, at: usize, declarations: bool) -> bool {
        let kind = self.lines[at].get("type").and_then(Value::as_str);
        (at == 0 && self.header.is_some())
            || (declarations && kind == Some("declaration"))
            || (at > 0 && kind == Some("session") && self.on(Knob::LaterSessionLineLineage))
    }

    /// The lineage objects that count, in stream order.
    fn lineages(&self, declarations: bool) -> Vec<&'a Map<String, Value>> {
        (0..self.lines.len())
            .filter(|&at| self.declares(at, declarations))
            .filter_map(|at| self.lines[at].get("lineage").and_then(Value::as_object))
            .collect()
    }

    fn reading(&self) -> Value {
        let listed = self.listed();
        let superseded = self.superseded();
        let originality = self.originality();
        let delivered = self.delivered(&superseded.0, &superseded.1);
        let mut records = Map::new();
        for &n in &listed {
            let record = &self.records[n];
            let mut entry = Map::new();
            entry.insert("type".into(), json!(record.kind()));
            entry.insert("superseded".into(), json!(superseded.0[n]));
            entry.insert("originality".into(), json!(originality[n]));
            if record.kind() == Some("message") && !record.header {
                entry.insert("contextView".into(), json!(self.context_view(n)));
                entry.insert("delivered".into(), json!(delivered[n]));
                entry.insert("parts".into(), Value::Array(self.parts(record.object)));
            }
            records.insert(record.id.clone(), Value::Object(entry));
        }
        let mut own: Vec<usize> = listed
            .iter()
            .copied()
            .filter(|&n| match originality[n] {
                "original" => !(self.on(Knob::SupersededNotCredited) && superseded.0[n]),
                "copy" => self.on(Knob::CopiesCredited),
                _ => self.on(Knob::UnknownCredited),
            })
            .collect();
        if self.on(Knob::OwnRecordsById) {
            own.sort_by_key(|&n| self.records[n].id.clone());
        }
        let own: Vec<&str> = own.iter().map(|&n| self.records[n].id.as_str()).collect();
        let may_include_copies = if self.on(Knob::MayIncludeCopiesNever) {
            false
        } else if self.on(Knob::MayIncludeCopiesFromCopies) {
            listed.iter().any(|&n| originality[n] == "copy")
        } else {
            listed.iter().any(|&n| originality[n] == "unknown")
        };
        json!({
            "session": {"root": self.root(), "unresolved": self.unresolved()},
            "records": records,
            "totals": {"ownRecords": own, "mayIncludeCopies": may_include_copies},
        })
    }

    /// The records of the reading, by number, in stream order.
    fn listed(&self) -> Vec<usize> {
        let superseded = self.superseded().0;
        (0..self.records.len())
            .filter(|&n| {
                let record = &self.records[n];
                if record.header {
                    return self.on(Knob::HeaderIsARecord);
                }
                let kind = record.kind();
                !(self.on(Knob::DeclarationsAreNotRecords) && kind == Some("declaration")
                    || self.on(Knob::LaterSessionLineNotARecord) && kind == Some("session")
                    || self.on(Knob::UnknownRecordTypesSkipped) && !kind.is_some_and(named_type)
                    || self.on(Knob::RevisionsCollapsed) && superseded[n])
            })
            .collect()
    }

    // ---- session ----

    fn root(&self) -> &'static str {
        let mut root = false;
        let mut parents = false;
        for lineage in self.lineages(!self.on(Knob::RootDeclarationsIgnored)) {
            root |= lineage.get("root") == Some(&Value::Bool(true));
            let facets = PARENT_FACETS
                .iter()
                .filter(|f| !(self.on(Knob::RelatedUnknownNotAParent) && **f == "relatedUnknown"))
                .any(|f| {
                    lineage
                        .get(*f)
                        .is_some_and(|v| !(v.is_null() && self.on(Knob::NullFacetNotAParent)))
                });
            let mode = lineage
                .get("inherits")
                .and_then(Value::as_object)
                .map(|i| i.get("mode").and_then(Value::as_str));
            let inherits = match mode {
                _ if self.on(Knob::InheritsModeNotAParent) => false,
                Some(_) if self.on(Knob::AnyInheritsIsAParent) => true,
                Some(Some(mode)) => INHERITING_MODES.contains(&mode),
                _ => false,
            };
            let executed = self.on(Knob::ExecutedByIsAParent) && lineage.contains_key("executedBy");
            parents |= facets || inherits || executed;
        }
        let root = root && !self.on(Knob::RootTrueIgnored);
        if parents {
            "no"
        } else if root || self.on(Knob::RootFromAbsence) {
            "yes"
        } else {
            "unknown"
        }
    }

    fn own_session(&self) -> Option<String> {
        let header = self.header?;
        let agent = header.get("agent")?.get("name")?.as_str()?;
        let id = header.get("sessionId")?.as_str()?;
        let namespace = header
            .get("namespace")
            .and_then(Value::as_str)
            .filter(|_| !self.on(Knob::OwnSessionWithoutNamespace));
        if self.on(Knob::OwnSessionUnescaped) {
            return Some(match namespace {
                Some(ns) => format!("{agent}:{ns}:{id}"),
                None => format!("{agent}:{id}"),
            });
        }
        let written = own_session_ref(agent, namespace, id);
        parse_session_ref(&written).ok().map(|r| r.canonical())
    }

    /// Every session named, as written, in stream order.
    fn named(&self) -> Vec<&'a str> {
        let mut named = Vec::new();
        let declarations = !self.on(Knob::UnresolvedMissesDeclarations);
        for (at, object) in self.lines.iter().enumerate() {
            let kind = object.get("type").and_then(Value::as_str);
            let lineage = self
                .declares(at, declarations)
                .then(|| object.get("lineage").and_then(Value::as_object))
                .flatten();
            if let Some(lineage) = lineage {
                for facet in PARENT_FACETS {
                    if let Some(s) = lineage
                        .get(facet)
                        .and_then(|f| f.get("session"))
                        .and_then(Value::as_str)
                    {
                        named.push(s);
                    }
                }
                if !self.on(Knob::UnresolvedMissesInheritsFrom) {
                    if let Some(s) = lineage
                        .get("inherits")
                        .filter(|i| i.is_object())
                        .and_then(|i| i.get("from"))
                        .and_then(Value::as_str)
                    {
                        named.push(s);
                    }
                }
                if !self.on(Knob::UnresolvedMissesExecutedBy) {
                    for entry in lineage
                        .get("executedBy")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        if let Some(s) = entry.get("session").and_then(Value::as_str) {
                            named.push(s);
                        }
                    }
                }
            }
            if kind == Some("subagent") && !self.on(Knob::UnresolvedMissesChildSession) {
                if let Some(s) = object.get("childSession").and_then(Value::as_str) {
                    named.push(s);
                }
            }
            if !self.on(Knob::UnresolvedMissesCopiedFrom) {
                if let Some(s) = object
                    .get("copiedFrom")
                    .and_then(|c| c.get("session"))
                    .and_then(Value::as_str)
                {
                    named.push(s);
                }
            }
            if kind == Some("message") && !self.on(Knob::UnresolvedMissesDerivedFrom) {
                for entry in object
                    .get("derivedFrom")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    // By the grammar of refs and session references: a ref in key=value
                    // form names a record of this stream whatever its native id holds.
                    if matches!(
                        asr_suite::refs::derived_entry(entry),
                        Some(asr_suite::refs::DerivedEntry::Session(_))
                    ) || self.on(Knob::DerivedNativeRefAsSession) && entry.contains('#')
                    {
                        named.push(entry);
                    }
                }
            }
        }
        if !self.on(Knob::UnresolvedIncludesMalformed) {
            named.retain(|s| parse_session_ref(s).is_ok());
        }
        named
    }

    fn unresolved(&self) -> Vec<String> {
        let own = self.own_session();
        let spelled = |text: &str| -> String {
            let Ok(reference) = parse_session_ref(text) else {
                return text.to_owned();
            };
            if self.on(Knob::UnresolvedEscapesAsWritten) {
                return text.split('#').next().unwrap_or(text).to_owned();
            }
            let canonical = misspell(reference.canonical(), self.knob);
            match reference.fragment {
                Some(fragment) if self.on(Knob::UnresolvedKeepsFragment) => {
                    format!("{canonical}#{fragment}")
                }
                _ => canonical,
            }
        };
        let own = own.map(|o| misspell(o, self.knob));
        let mut referenced = self.named();
        if self.on(Knob::OwnSessionAsWritten) {
            // The own session recognised only as the header spells it.
            let written = self.header.and_then(|h| {
                let agent = h.get("agent")?.get("name")?.as_str()?;
                let id = h.get("sessionId")?.as_str()?;
                let namespace = h.get("namespace").and_then(Value::as_str);
                Some(own_session_ref(agent, namespace, id))
            });
            referenced.retain(|s| Some(s.split('#').next().unwrap_or(s)) != written.as_deref());
            let mut names: Vec<String> = referenced.into_iter().map(spelled).collect();
            names.sort();
            names.dedup();
            return names;
        }
        let mut names: Vec<String> = referenced.into_iter().map(spelled).collect();
        if !self.on(Knob::UnresolvedIncludesOwnSession) {
            names.retain(|s| Some(s) != own.as_ref());
        }
        if self.on(Knob::SortByUtf16) {
            names.sort_by_key(|s| s.encode_utf16().collect::<Vec<u16>>());
            names.dedup();
            return names;
        }
        if self.on(Knob::UnresolvedNotDeduplicated) {
            names.sort();
            return names;
        }
        if self.on(Knob::UnresolvedNotSorted) {
            let mut seen = HashSet::new();
            names.retain(|s| seen.insert(s.clone()));
            return names;
        }
        names
            .into_iter()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    // ---- references ----

    /// The records a reference names, in stream order.
    fn resolve(&self, reference: &str) -> Vec<usize> {
        if let Some(Ref::Native { key, value }) = parse_ref(reference) {
            if NATIVE_KEYS.contains(&key) || self.on(Knob::AnyNativeKeyResolves) {
                return (0..self.records.len())
                    .filter(|&n| self.records[n].str(key) == Some(value))
                    .collect();
            }
        }
        self.by_id.get(reference).copied().into_iter().collect()
    }

    /// What a revision's `supersedes` names: the latest record before it.
    fn resolve_before(&self, reference: &str, before: usize) -> Option<usize> {
        if self.on(Knob::SupersedesIdsOnly) {
            return self.by_id.get(reference).copied().filter(|&n| n < before);
        }
        let mut found = self.resolve(reference).into_iter().filter(|&n| n < before);
        if self.on(Knob::SupersedesFirstMatch) {
            found.next()
        } else {
            found.next_back()
        }
    }

    /// Each record's superseded flag, and what each record supersedes.
    fn superseded(&self) -> (Vec<bool>, Vec<Option<usize>>) {
        let count = self.records.len();
        let mut superseded = vec![false; count];
        let previous: Vec<Option<usize>> = (0..count)
            .map(|n| {
                self.records[n]
                    .reference("supersedes")
                    .and_then(|t| self.resolve_before(t, n))
            })
            .collect();
        for n in 0..count {
            let Some(target) = previous[n] else { continue };
            if self.on(Knob::SupersededDirectionSwapped) {
                superseded[n] = true;
            } else if !(self.on(Knob::SupersededChainHeadOnly) && previous[target].is_some()) {
                superseded[target] = true;
            }
        }
        if self.on(Knob::SupersedesArrayNamesEach) {
            for n in 0..count {
                for name in self.records[n]
                    .object
                    .get("supersedes")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    if let Some(target) = self.resolve_before(name, n) {
                        superseded[target] = true;
                    }
                }
            }
        }
        if self.on(Knob::IdlessRevisionSupersedes) {
            for (at, object) in self.idless() {
                let before = self.records.iter().filter(|r| r.at < at).count();
                if let Some(target) = object
                    .get("supersedes")
                    .and_then(Value::as_str)
                    .and_then(|t| self.resolve_before(t, before))
                {
                    superseded[target] = true;
                }
            }
        }
        if self.on(Knob::SupersededByAnyReference) {
            for n in 0..count {
                let record = &self.records[n];
                let mut names: Vec<&str> = Vec::new();
                names.extend(record.reference("message"));
                names.extend(
                    record
                        .object
                        .get("copiedFrom")
                        .and_then(|c| c.get("record"))
                        .and_then(Value::as_str),
                );
                names.extend(
                    record
                        .object
                        .get("derivedFrom")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str),
                );
                for name in names {
                    for target in self.resolve(name) {
                        if target < n {
                            superseded[target] = true;
                        }
                    }
                }
            }
        }
        (superseded, previous)
    }

    /// The lines that are no record (no string id, or a later line with the header's id),
    /// with their numbers.
    fn idless(&self) -> Vec<(usize, &'a Map<String, Value>)> {
        let header_id = self
            .header
            .and_then(|h| h.get("id"))
            .and_then(Value::as_str);
        self.lines
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(_, o)| {
                let id = o.get("id").and_then(Value::as_str);
                id.is_none() || id == header_id
            })
            .map(|(at, o)| (at, *o))
            .collect()
    }

    // ---- originality ----

    fn originality(&self) -> Vec<&'static str> {
        let mirror = self
            .header
            .and_then(|h| h.get("authority"))
            .and_then(Value::as_str)
            == Some("mirror")
            && !self.on(Knob::MirrorIgnored);
        let executed_by = self
            .lineages(true)
            .iter()
            .any(|l| l.contains_key("executedBy"));
        // The prefix's end and the default originality under the inherits in effect at line
        // `through`.
        let effective = |through: usize| -> (Option<Option<u64>>, &'static str) {
            let (mode, local_through) = self.effective_inherits(through);
            let prefix_end: Option<Option<u64>> = local_through
                .filter(|_| mode == Some("copied"))
                .and_then(|id| self.by_id.get(id))
                .filter(|&&n| {
                    !(self.records[n].header && self.on(Knob::LocalThroughHeaderNoPrefix))
                })
                .map(|&n| self.records[n].seq());
            let default = match (mode, prefix_end) {
                (Some("referenced" | "rendered"), _)
                    if self.on(Knob::ReferencedOrRenderedUnknown) =>
                {
                    "unknown"
                }
                (Some("none" | "referenced" | "rendered"), _) | (Some("copied"), Some(_)) => {
                    "original"
                }
                (Some("copied"), None) if self.on(Knob::CopiedWithoutLocalThroughOriginal) => {
                    "original"
                }
                (None, _) if self.on(Knob::NoInheritsOriginal) => "original",
                (Some("unknown"), _) if self.on(Knob::InheritsUnknownOriginal) => "original",
                _ => "unknown",
            };
            (prefix_end, default)
        };
        self.records
            .iter()
            .map(|record| {
                let (prefix_end, default) =
                    effective(if self.on(Knob::DeclarationFromItsPosition) {
                        record.at
                    } else {
                        usize::MAX
                    });
                let copied = record
                    .object
                    .get("copiedFrom")
                    .is_some_and(|c| c.is_object() || !self.on(Knob::CopiedFromMustBeObject))
                    && !self.on(Knob::CopiedFromIgnored);
                let derived =
                    record.kind() == Some("message") && record.object.contains_key("derivedFrom");
                let declaration = record.kind() == Some("declaration");
                let in_prefix = !self.on(Knob::PrefixIgnored)
                    && (!declaration || self.on(Knob::PrefixIncludesDeclarations))
                    && !record.header
                    && match (record.seq(), prefix_end) {
                        (Some(seq), Some(Some(end))) => {
                            if self.on(Knob::PrefixBelowNotAt) {
                                seq < end
                            } else {
                                seq <= end
                            }
                        }
                        _ => false,
                    };
                if mirror && self.on(Knob::MirrorOverridesCopies) {
                    "unknown"
                } else if copied {
                    "copy"
                } else if mirror {
                    "unknown"
                } else if in_prefix && derived && self.on(Knob::DerivedInPrefixOriginal) {
                    default
                } else if in_prefix
                    || self.on(Knob::DerivedFromIsACopy)
                        && record.kind() == Some("message")
                        && record.object.contains_key("derivedFrom")
                    || self.on(Knob::ExecutedByMakesCopies) && executed_by
                {
                    "copy"
                } else {
                    default
                }
            })
            .collect()
    }

    /// The effective inherits at line `through`: its mode and `localThroughId`.
    fn effective_inherits(&self, through: usize) -> (Option<&'a str>, Option<&'a str>) {
        let declarations = !self.on(Knob::DeclarationsInheritsIgnored);
        let mut mode = None;
        let mut local = None;
        for at in
            (0..self.lines.len()).filter(|&at| at <= through && self.declares(at, declarations))
        {
            let Some(lineage) = self.lines[at].get("lineage").and_then(Value::as_object) else {
                continue;
            };
            match lineage.get("inherits") {
                Some(Value::Object(inherits)) => {
                    let m = inherits.get("mode").and_then(Value::as_str);
                    let l = inherits.get("localThroughId").and_then(Value::as_str);
                    if self.on(Knob::InheritsMerged) {
                        mode = m.or(mode);
                        local = l.or(local);
                    } else {
                        mode = m;
                        local = l;
                    }
                }
                Some(Value::Null) if self.on(Knob::NullInheritsReplaces) => {
                    mode = None;
                    local = None;
                }
                _ => {}
            }
        }
        (mode, local.filter(|t| !t.is_empty()))
    }

    // ---- messages ----

    fn context_view(&self, n: usize) -> bool {
        let mut at = n;
        if self.on(Knob::ContextViewFromLatestRevision) {
            let previous = self.superseded().1;
            let mut steps = 0;
            while let Some(next) = (0..self.records.len())
                .rev()
                .find(|&m| previous[m] == Some(at))
            {
                at = next;
                steps += 1;
                if steps > self.records.len() {
                    break;
                }
            }
        }
        let record = &self.records[at];
        let audience = record.str("audience");
        let status = record.str("status");
        let user = (audience == Some("user")
            || audience == Some("both") && self.on(Knob::AudienceBothOutOfContextView))
            && !self.on(Knob::UserAudienceInContextView);
        let withdrawn = status == Some("withdrawn") && !self.on(Knob::WithdrawnInContextView);
        let unknown = self.on(Knob::UnknownAudienceOutOfContextView)
            && matches!(audience, None | Some("unknown"));
        let failed = self.on(Knob::FailedStatusOutOfContextView)
            && matches!(status, Some("error" | "interrupted" | "partial"));
        !(user || withdrawn || unknown || failed)
    }

    fn confirms(&self, status: Option<&str>) -> bool {
        if self.on(Knob::AnyDeliveryConfirms) {
            return true;
        }
        match status {
            Some("delivered") => true,
            Some("sent") => !self.on(Knob::OnlyDeliveredConfirms),
            Some("queued") => self.on(Knob::QueuedConfirms),
            _ => false,
        }
    }

    fn delivered(&self, superseded: &[bool], previous: &[Option<usize>]) -> Vec<bool> {
        let count = self.records.len();
        let mut delivered = vec![false; count];
        let is_delivery = |n: usize| self.records[n].kind() == Some("delivery");
        // The chain of revisions of a delivery, latest first.
        let chain = |latest: usize| {
            let mut chain = vec![latest];
            let mut at = latest;
            while let Some(p) = previous[at] {
                if chain.len() > count {
                    break;
                }
                chain.push(p);
                at = p;
            }
            chain
        };
        let target_of = |chain: &[usize]| -> Option<&str> {
            if self.on(Knob::DeliveryMessageFromLatestRevisionOnly) {
                return chain
                    .first()
                    .filter(|&&n| is_delivery(n))
                    .and_then(|&n| self.records[n].reference("message"));
            }
            if self.on(Knob::OriginalDeliveryMessage) {
                return chain
                    .iter()
                    .rev()
                    .filter(|&&n| is_delivery(n))
                    .find_map(|&n| self.records[n].reference("message"));
            }
            chain
                .iter()
                .filter(|&&n| is_delivery(n))
                .find_map(|&n| self.records[n].reference("message"))
        };
        let messages_of = |target: &str, before: usize| -> Vec<usize> {
            let found = if self.on(Knob::DeliveryNativeRefUnresolved) {
                self.by_id.get(target).copied().into_iter().collect()
            } else {
                self.resolve(target)
            };
            found
                .into_iter()
                .filter(|&m| self.records[m].kind() == Some("message") && !self.records[m].header)
                .filter(|&m| !self.on(Knob::DeliveryResolvedBeforeOnly) || m < before)
                .collect()
        };
        if self.on(Knob::IdlessDeliveryConfirms) {
            for (at, object) in self.idless() {
                let before = self.records.iter().filter(|r| r.at < at).count();
                let target = object.get("message").and_then(Value::as_str);
                if object.get("type").and_then(Value::as_str) == Some("delivery")
                    && self.confirms(object.get("status").and_then(Value::as_str))
                    && let Some(target) = target
                {
                    for m in messages_of(target, before) {
                        delivered[m] = true;
                    }
                }
            }
        }
        // Under ForkOnlyLastEndConfirms, the one end of each chain that counts: the last in
        // the stream.
        let mut last_end: HashMap<usize, usize> = HashMap::new();
        for n in (0..count).filter(|&n| is_delivery(n) && !superseded[n]) {
            if let Some(&root) = chain(n).last() {
                last_end.insert(root, n);
            }
        }
        if self.on(Knob::AttemptsMerged) {
            // Every delivery for one message is one attempt: the last in the stream decides.
            let mut last: HashMap<usize, bool> = HashMap::new();
            for n in (0..count).filter(|&n| is_delivery(n)) {
                if let Some(target) = target_of(&chain(n)) {
                    for m in messages_of(target, n) {
                        last.insert(m, self.confirms(self.records[n].str("status")));
                    }
                }
            }
            for (m, confirmed) in last {
                delivered[m] = confirmed;
            }
            return delivered;
        }
        for n in (0..count).filter(|&n| is_delivery(n)) {
            let chain = chain(n);
            if self.on(Knob::ForkOnlyLastEndConfirms)
                && chain.last().and_then(|root| last_end.get(root)) != Some(&n)
            {
                continue;
            }
            let confirmed = if self.on(Knob::DeliveredByAnyRevision) {
                !superseded[n]
                    && chain
                        .iter()
                        .any(|&c| is_delivery(c) && self.confirms(self.records[c].str("status")))
            } else if self.on(Knob::DeliveredFromFirstRevision) {
                !superseded[n]
                    && chain
                        .last()
                        .is_some_and(|&c| self.confirms(self.records[c].str("status")))
            } else {
                !superseded[n] && self.confirms(self.records[n].str("status"))
            };
            if !confirmed {
                continue;
            }
            if let Some(target) = target_of(&chain) {
                for m in messages_of(target, n) {
                    delivered[m] = true;
                }
            }
        }
        delivered
    }

    fn parts(&self, message: &Map<String, Value>) -> Vec<Value> {
        let display = message
            .get("displayContent")
            .and_then(Value::as_array)
            .filter(|d| !d.is_empty() && self.on(Knob::PartsFromDisplayContent));
        let string_content: Option<Vec<Value>> = message
            .get("content")
            .and_then(Value::as_str)
            .filter(|_| self.on(Knob::ContentStringAsTextPart))
            .map(|text| vec![json!({"type": "text", "text": text})]);
        let Some(parts) = display
            .or_else(|| message.get("content").and_then(Value::as_array))
            .or(string_content.as_ref())
        else {
            return Vec::new();
        };
        let reasoning_only =
            parts.len() == 1 && parts[0].get("type").and_then(Value::as_str) == Some("reasoning");
        parts
            .iter()
            .filter(|part| part.is_object() || !self.on(Knob::NonObjectPartDropped))
            .map(|part| self.part(part, message, reasoning_only))
            .filter(|p| !(self.on(Knob::UnknownPartsDropped) && p["render"] == "skipped"))
            .collect()
    }

    fn part(&self, part: &Value, message: &Map<String, Value>, reasoning_only: bool) -> Value {
        let kind = part.get("type").and_then(Value::as_str);
        let own = |key: &str| part.get(key).and_then(Value::as_str);
        let of_message = |key: &str| message.get(key).and_then(Value::as_str);
        let effective = |key: &str, ignored: Knob| {
            if self.on(ignored) {
                of_message(key).or_else(|| own(key))
            } else if self.on(Knob::MessageValuesNotInherited)
                || self.on(Knob::PartNullOverrides) && part.get(key) == Some(&Value::Null)
            {
                own(key)
            } else {
                own(key).or_else(|| of_message(key))
            }
        };
        let mut phase = effective("phase", Knob::PartPhaseIgnored);
        if self.on(Knob::PhaseOnlyOnText) && kind != Some("text") {
            phase = None;
        }
        let text = || {
            own("text")
                .map(str::to_owned)
                .into_iter()
                .collect::<Vec<_>>()
        };
        let strings = |value: Option<&Value>| -> Vec<String> {
            value
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        };
        let summary = || strings(part.get("summary"));
        let (render, mut index): (&str, Vec<String>) = match kind {
            Some("reasoning") if reasoning_only && self.on(Knob::ReasoningOnlyMessageAsText) => {
                ("text", text())
            }
            Some("text") if self.on(Knob::EmptyTextNotIndexed) && own("text") == Some("") => {
                ("text", Vec::new())
            }
            Some("text") if self.on(Knob::MissingTextIndexedEmpty) && own("text").is_none() => {
                ("text", vec![String::new()])
            }
            Some("text") => ("text", text()),
            None if self.on(Knob::UntypedPartAsText) && own("text").is_some() => ("text", text()),
            Some("reasoning")
                if self.on(Knob::EncryptedReasoningAsOpaque)
                    && own("visibility") == Some("encrypted") =>
            {
                ("opaque", Vec::new())
            }
            Some("reasoning")
                if self.on(Knob::NullVisibilityIsOther)
                    && part.get("visibility") == Some(&Value::Null) =>
            {
                ("reasoning-hidden", Vec::new())
            }
            Some("reasoning")
                if self.on(Knob::ReasoningOpaqueStateAsOpaque) && part.get("opaque").is_some() =>
            {
                ("opaque", Vec::new())
            }
            Some("reasoning") => match own("visibility") {
                Some("full") => {
                    let mut index = text();
                    if self.on(Knob::SummaryIndexedUnderFull) {
                        index.extend(summary());
                    }
                    ("reasoning-full", index)
                }
                None if self.on(Knob::VisibilityAbsentFull) => ("reasoning-full", text()),
                None if self.on(Knob::AbsentVisibilityTextNotIndexed) => {
                    ("reasoning-hidden", Vec::new())
                }
                None => ("reasoning-hidden", text()),
                Some("summary") => {
                    let mut index = summary();
                    if self.on(Knob::TextIndexedUnderSummary) {
                        index.extend(text());
                    }
                    ("reasoning-summary", index)
                }
                Some(_) if self.on(Knob::HiddenTextIndexed) => ("reasoning-hidden", text()),
                Some(_) => ("reasoning-hidden", Vec::new()),
            },
            Some("refusal") if self.on(Knob::RefusalAsText) => ("text", text()),
            Some("refusal") if self.on(Knob::RefusalNotIndexed) => ("refusal", Vec::new()),
            Some("refusal") => ("refusal", text()),
            Some("image" | "audio") => ("media", Vec::new()),
            Some("resource_link") if self.on(Knob::ResourceLinkSkipped) => ("skipped", Vec::new()),
            Some("resource_link") if self.on(Knob::ResourceLinkMetadataIndexed) => (
                "resource",
                ["uri", "name", "title", "description"]
                    .iter()
                    .filter_map(|k| own(k).map(str::to_owned))
                    .collect(),
            ),
            Some("resource_link") => ("resource", Vec::new()),
            Some("resource") if self.on(Knob::ResourceTextNotIndexed) => ("resource", Vec::new()),
            Some("resource") => (
                "resource",
                part.get("resource")
                    .and_then(|r| r.get("text"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .into_iter()
                    .chain(
                        part.get("resource")
                            .and_then(|r| r.get("blob"))
                            .and_then(Value::as_str)
                            .filter(|_| self.on(Knob::ResourceBlobIndexed))
                            .map(str::to_owned),
                    )
                    .collect(),
            ),
            Some("data") if self.on(Knob::DataAsText) => ("text", data_text(part)),
            Some("data") if self.on(Knob::DataIndexed) => ("data", data_text(part)),
            Some("data") => ("data", Vec::new()),
            Some("opaque") if self.on(Knob::OpaquePartSkipped) => ("skipped", Vec::new()),
            Some("opaque") if self.on(Knob::OpaquePartIndexed) => ("opaque", text_of(part, "data")),
            Some("opaque") => ("opaque", Vec::new()),
            _ if self.on(Knob::UnknownPartAsText) && own("text").is_some() => ("text", text()),
            _ if self.on(Knob::UnknownPartTextIndexed) => ("skipped", text()),
            _ => ("skipped", Vec::new()),
        };
        if kind == Some("reasoning") {
            if self.on(Knob::SignatureIndexed) {
                index.extend(own("signature").map(str::to_owned));
            }
            if self.on(Knob::OpaqueStateIndexed) {
                index.extend(
                    part.get("opaque")
                        .map(|o| text_of(o, "data"))
                        .unwrap_or_default(),
                );
            }
        }
        if self.on(Knob::AnnotationsAndMetaIndexed) {
            for key in ["annotations", "_meta"] {
                if let Some(value) = part.get(key) {
                    collect_strings(value, &mut index);
                }
            }
        }
        json!({
            "type": kind,
            "author": effective("author", Knob::PartAuthorIgnored),
            "origin": effective("origin", Knob::PartOriginIgnored),
            "phase": phase,
            "render": render,
            "index": index,
        })
    }
}

/// A canonical session reference spelled as a misreading of the canonical form would.
fn misspell(canonical: String, knob: Option<Knob>) -> String {
    let Some(knob) = knob else {
        return canonical;
    };
    let bytes = canonical.as_bytes();
    let hex = |at: usize| -> Option<u8> {
        let digits = bytes.get(at + 1..at + 3)?;
        (bytes[at] == b'%')
            .then(|| u8::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok())
            .flatten()
    };
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let Some(octet) = hex(at) else {
            out.push(bytes[at]);
            at += 1;
            continue;
        };
        let c1 = octet == 0xC2 && hex(at + 3).is_some_and(|o| (0x80..=0x9F).contains(&o));
        match knob {
            Knob::CanonicalLowerHex => out.extend(format!("%{octet:02x}").bytes()),
            Knob::CanonicalControlsRaw if octet == 0x7F => out.push(octet),
            Knob::CanonicalControlsRaw if c1 => {
                out.push(octet);
                out.push(hex(at + 3).unwrap_or(0x80));
                at += 6;
                continue;
            }
            Knob::NonUtf8Lossy if c1 => {
                out.extend(&bytes[at..at + 6]);
                at += 6;
                continue;
            }
            Knob::NonUtf8Lossy if octet >= 0x80 => out.extend("\u{FFFD}".bytes()),
            Knob::DecodeEscapedDelimiters if matches!(octet, b':' | b'#' | b'%') => out.push(octet),
            _ => out.extend(&bytes[at..at + 3]),
        }
        at += 3;
    }
    String::from_utf8(out).unwrap_or(canonical)
}

fn text_of(value: &Value, key: &str) -> Vec<String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .into_iter()
        .collect()
}

/// A data part as a search index would hold it: a string as it is, anything else as JSON.
fn data_text(part: &Value) -> Vec<String> {
    match part.get("data") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(other) => vec![other.to_string()],
        None => Vec::new(),
    }
}

fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}
