//! Wrong readings: for every member of the reading (PROTOCOL.md, "Readers and the
//! reading"), the answers a reader implementer could plausibly give by misreading one
//! sentence of the definition or of the spec. Each wrong reading is run over every reader
//! case of the corpus; the corpus separates it from the right reading when at least two
//! reader cases tell them apart (`compare_readings` reports a mismatch). A wrong reading
//! fewer cases catch is a misreading an adapter could get away with.
//!
//! The wrong readings come from a second reader ([`reader`]) with one misreading switched
//! on; with none it reads every stream of the corpus as the reference reader does, so that
//! a wrong reading differs from the right one by its misreading alone.

mod reader;

use crate::helpers;
use asr_suite::case::Case;
use asr_suite::judge::members::Kinds;
use asr_suite::judge::{compare_readings, judge_reader};
use asr_suite::protocol::StreamAnswer;
use asr_suite::reading::read_bytes;
use reader::Knob;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A wrong answer: the reading from the stream's records and the right reading.
type Misread = fn(&[Value], &Value) -> Value;

/// One plausible wrong reading.
struct Wrong {
    name: &'static str,
    /// The sentence misread, and how.
    misreads: &'static str,
    /// The rules it breaks: the first is the one it must be charged to in some case, and
    /// every failure it causes is charged to one of them.
    breaks: &'static [&'static str],
    read: Misread,
}

/// How many reader cases must catch each wrong reading.
const CATCHERS: usize = 2;

macro_rules! wrong_readings {
    ($($knob:ident => [$($rule:literal),*] $misreads:literal,)*) => {
        /// Every wrong reading, one misreading each.
        fn wrong_readings() -> Vec<Wrong> {
            vec![$(Wrong {
                name: stringify!($knob),
                misreads: $misreads,
                breaks: &[$($rule),*],
                read: |lines, _right| reader::read(lines, Some(Knob::$knob)),
            }),*]
        }
    };
}

wrong_readings! {
    // session.root: "`no` when any parent facet is present in the header or a declaration
    // (...); else `yes` when `root: true`; else `unknown`. Absence never means root."
    RootFromAbsence => ["ASR-401"] "ASR-401 \"An absent lineage, or an absent facet, means unknown\": a session without parent facets read as a root",
    RootTrueIgnored => ["ASR-401"] "ASR-402 root: true read as one more unknown: a session that claims root read as unknown",
    RootDeclarationsIgnored => ["ASR-401"] "\"present in the header or a declaration\": only the header's lineage decides root",
    InheritsModeNotAParent => ["ASR-401"] "\"or `inherits` with mode copied, referenced or rendered\": only spawnedBy, forkedFrom, continues and relatedUnknown name a parent",
    ExecutedByIsAParent => ["ASR-401"] "ASR-402 \"executedBy does not name a parent and may appear with root\": executedBy read as a parent",
    AnyInheritsIsAParent => ["ASR-401"] "\"inherits with mode copied, referenced or rendered\": inherits of any mode (none, unknown) read as naming a parent",
    RelatedUnknownNotAParent => ["ASR-401"] "ASR-405 relatedUnknown (\"does not say what the relation is\") read as no parent",
    // session.unresolved: "every session named by a lineage facet (...), a
    // subagent.childSession, a copiedFrom.session or a derivedFrom session reference, other
    // than the stream's own session; each once, without its # part, percent-escapes in upper
    // case, sorted."
    UnresolvedNotDeduplicated => ["ASR-406"] "\"each once\": a session named twice listed twice",
    UnresolvedKeepsFragment => ["ASR-406"] "\"without its # part\": a derivedFrom session reference listed with its record part",
    UnresolvedNotSorted => ["ASR-406"] "\"sorted\": sessions listed in the order the stream names them",
    UnresolvedIncludesOwnSession => ["ASR-406"] "\"other than the stream's own session\": the own session listed when a record names it",
    OwnSessionUnescaped => ["ASR-406"] "the own session reference built from agent, namespace and sessionId without percent-encoding its `:` and `%`, so a reference to it is not recognised",
    UnresolvedMissesChildSession => ["ASR-406"] "\"a subagent.childSession\": children not listed",
    UnresolvedMissesCopiedFrom => ["ASR-406"] "\"a copiedFrom.session\": sessions of copies not listed",
    UnresolvedMissesDerivedFrom => ["ASR-406"] "\"a derivedFrom session reference\": derivedFrom entries with a # part not listed",
    UnresolvedMissesInheritsFrom => ["ASR-406"] "\"inherits.from ... included\": inherits.from not listed",
    UnresolvedMissesExecutedBy => ["ASR-406"] "\"executedBy[].session included\": backing sessions not listed",
    UnresolvedMissesDeclarations => ["ASR-406"] "lineage facets of declarations not read (only the header's)",
    UnresolvedEscapesAsWritten => ["ASR-406"] "\"percent-escapes in upper case\": references kept as written, so one session spelled %3a and %3A is listed twice and in lower case",
    // records: "The header is the session, not a record. ... Every other line with an id is
    // a record, declarations and any later session line included"
    HeaderIsARecord => ["ASR-X-007", "ASR-416", "ASR-X-009"] "\"The header is the session, not a record\": the header listed and credited as a record",
    DeclarationsAreNotRecords => ["ASR-X-009", "ASR-415", "ASR-416"] "\"declarations ... included\": declarations left out of the records and of the totals",
    UnknownRecordTypesSkipped => ["ASR-X-009"] "ASR-218's skipping of unknown parts applied to records: records of a type the spec text does not name are left out",
    RevisionsCollapsed => ["ASR-X-009", "ASR-416"] "\"A changed plan is a revision\": only the latest revision of a record is listed",
    // superseded: "a later record names it in supersedes"
    SupersedesFirstMatch => ["ASR-X-014"] "a native-id supersedes (planId=p) resolved to the first record with that id, not the latest before the revision",
    SupersedesIdsOnly => ["ASR-X-014"] "supersedes resolved by record id only, never through a native id (messageId=..., planId=...)",
    SupersededChainHeadOnly => ["ASR-X-014", "ASR-237"] "\"supersedes naming the previous one\" read as naming the original: in a chain of revisions only the first is superseded",
    SupersededByAnyReference => ["ASR-X-014"] "\"a later record names it\": any later reference (a delivery's message, copiedFrom.record, derivedFrom) read as superseding",
    SupersededDirectionSwapped => ["ASR-X-014", "ASR-237"] "the record that carries supersedes read as the superseded one",
    // originality
    CopiedFromIgnored => ["ASR-416", "ASR-417"] "\"a record with copiedFrom is a copy\" ignored: copies take the stream's default originality",
    MirrorIgnored => ["ASR-423", "ASR-416"] "ASR-423 \"In a mirror stream, a record without copiedFrom has unknown originality\": authority mirror ignored",
    MirrorOverridesCopies => ["ASR-416"] "\"in this order: a record with copiedFrom is a copy; else, in a stream with authority mirror, unknown\": in a mirror every record unknown, copies included",
    PrefixBelowNotAt => ["ASR-415", "ASR-417"] "ASR-415 \"with a seq at or below that record's seq\": the record named by localThroughId left out of the prefix",
    PrefixIncludesDeclarations => ["ASR-415"] "ASR-415 \"other than the header and declaration records\": declarations inside the prefix read as copies",
    PrefixIgnored => ["ASR-415", "ASR-417"] "ASR-415 \"whether or not it carries copiedFrom\": only records with copiedFrom inside the prefix read as copies",
    DeclarationsInheritsIgnored => ["ASR-416", "ASR-415"] "\"The effective inherits is the header's, replaced by each declaration that has one\": a declaration's inherits ignored",
    CopiedWithoutLocalThroughOriginal => ["ASR-416"] "\"copied with localThroughId declared\": mode copied without localThroughId read as original",
    NoInheritsOriginal => ["ASR-416"] "\"The absence of copiedFrom does not establish that the record is original\": a stream without inherits read as original",
    InheritsUnknownOriginal => ["ASR-416"] "\"mode unknown ... the record's originality is unknown\": inherits mode unknown read as original",
    ReferencedOrRenderedUnknown => ["ASR-416", "ASR-426"] "\"effective inherits.mode is none, referenced or rendered\": only none read as original",
    DerivedFromIsACopy => ["ASR-426", "ASR-415"] "ASR-426 \"A message that renders inherited context ... is new content of its own session, not a copy\": messages with derivedFrom read as copies",
    ExecutedByMakesCopies => ["ASR-423", "ASR-415", "ASR-416", "ASR-426"] "ASR-423 \"being in a wrapper's stream does not make a record a copy\": every record of a stream with executedBy read as a copy",
    // contextView: "false for audience user and for status withdrawn, from each message's own
    // values, else true"
    WithdrawnInContextView => ["ASR-225"] "ASR-225 \"A withdrawn message ... is not an entry in the context view\": withdrawn messages read as entries",
    UserAudienceInContextView => ["ASR-205"] "ASR-205 \"Messages with audience user ... are not entries in the context view\": audience ignored",
    UnknownAudienceOutOfContextView => ["ASR-205"] "ASR-204 \"absent means unknown\" read as not shown to the model: messages without a known audience left out of the context view",
    FailedStatusOutOfContextView => ["ASR-205"] "ASR-206 status error, interrupted or partial read as not received: such messages left out of the context view",
    ContextViewFromLatestRevision => ["ASR-205"] "\"from each message's own values\": a message read with the values of its latest revision",
    // delivered: "true when some delivery for the message, taken at its latest revision (the
    // end of its supersedes chain), has status sent or delivered; separate delivery records
    // are separate attempts; queued, suppressed, failed and unknown never confirm"
    DeliveredFromFirstRevision => ["ASR-237"] "\"taken at its latest revision\": a delivery's first revision decides",
    DeliveredByAnyRevision => ["ASR-237"] "\"taken at its latest revision\": any revision that said sent confirms, though a later one failed",
    QueuedConfirms => ["ASR-237"] "\"queued ... never confirm\": a queued delivery read as delivered",
    AnyDeliveryConfirms => ["ASR-237"] "ASR-237 \"never from the existence of a message\" read the other way: any delivery record confirms, failed and suppressed included",
    OnlyDeliveredConfirms => ["ASR-237"] "ASR-237 \"status sent or delivered\": only delivered (platform confirmation) counts, sent does not",
    AttemptsMerged => ["ASR-237"] "\"separate delivery records are separate attempts\": every delivery for a message read as one, the last in the stream deciding",
    DeliveryNativeRefUnresolved => ["ASR-237"] "a delivery's message resolved by record id only, never through messageId=...",
    DeliveryMessageFromLatestRevisionOnly => ["ASR-237"] "\"the message it is for may be named earlier in the chain\": a revision without message confirms nothing",
    // parts: "the part's own value, else the message's, else null"
    PartAuthorIgnored => ["ASR-224"] "ASR-224 \"A part's own value applies to that part\": the message's author wins over the part's",
    PartOriginIgnored => ["ASR-224"] "ASR-224: the message's origin wins over the part's",
    PartPhaseIgnored => ["ASR-224"] "ASR-224 \"a part can carry its own (phase)\": the message's phase wins over the part's",
    MessageValuesNotInherited => ["ASR-224"] "ASR-224 \"the message's value applies ... to the parts that do not carry one\": parts without values read as null",
    PhaseOnlyOnText => ["ASR-224"] "\"phase: For assistant text\": the message's phase not applied to parts that are not text",
    PartsFromDisplayContent => ["ASR-238"] "\"parts ... from content only\": parts read from displayContent when a message has one",
    UnknownPartsDropped => ["ASR-X-021"] "ASR-218 \"Readers MUST skip content parts whose type they do not recognize\": unknown parts left out of parts instead of read as skipped",
    // render
    VisibilityAbsentFull => ["ASR-214", "ASR-220"] "ASR-214 \"Readers MUST NOT present text as full reasoning unless visibility is full\": reasoning without visibility rendered as full",
    ReasoningOpaqueStateAsOpaque => ["ASR-214", "ASR-220"] "\"Encrypted reasoning stays a reasoning part with opaque state\": reasoning with opaque state rendered as an opaque part",
    UnknownPartAsText => ["ASR-218"] "ASR-218: an unknown part with a text member rendered and indexed as text",
    ResourceLinkSkipped => ["ASR-218"] "\"resource (resource_link, resource)\": resource_link not known, skipped",
    ReasoningOnlyMessageAsText => ["ASR-220", "ASR-214"] "ASR-220 \"Readers MUST treat a reasoning-only message the same way as a reasoning part\": a reasoning-only message rendered as the message's text",
    RefusalAsText => ["ASR-218"] "ASR-217 \"Refusals expressed in ordinary text stay text parts\" read the other way: refusal parts rendered as text",
    DataAsText => ["ASR-238"] "ASR-238 \"Readers MUST NOT present a data part as the exact text the model saw\": data rendered as text",
    OpaquePartSkipped => ["ASR-232"] "ASR-232 opaque is an ASR part type: rendered as skipped (unknown)",
    // index
    SignatureIndexed => ["ASR-215"] "ASR-215 \"opaque and signature MUST be excluded from text indexing\": signatures indexed",
    OpaqueStateIndexed => ["ASR-215"] "ASR-215: a reasoning part's opaque data indexed",
    OpaquePartIndexed => ["ASR-232"] "ASR-232 \"Opaque parts MUST be excluded from text indexing\": an opaque part's data indexed",
    AnnotationsAndMetaIndexed => ["ASR-215", "ASR-218"] "\"Never ... annotations, _meta\": the strings of annotations and _meta indexed",
    SummaryIndexedUnderFull => ["ASR-214"] "\"summary segments only when visibility is summary\": summary segments indexed beside full text",
    TextIndexedUnderSummary => ["ASR-214"] "\"text ... when visibility is full or absent\": a summary part's text member indexed too",
    HiddenTextIndexed => ["ASR-214"] "\"reasoning text when visibility is full or absent\": text of omitted, encrypted or redacted reasoning indexed",
    AbsentVisibilityTextNotIndexed => ["ASR-214"] "\"reasoning text when visibility is full or absent\": text without visibility not indexed",
    ResourceLinkMetadataIndexed => ["ASR-215"] "\"Never ... resource_link metadata\": a link's uri, name, title and description indexed",
    ResourceTextNotIndexed => ["ASR-215"] "\"an embedded resource's text\": the text of an embedded resource not indexed",
    DataIndexed => ["ASR-238"] "ASR-238, \"Never ... data parts\": a data part's data indexed",
    RefusalNotIndexed => ["ASR-215"] "\"refusal text\": a refusal's text not indexed",
    UnknownPartTextIndexed => ["ASR-218"] "ASR-218 skip read as not rendering only: an unknown part's text indexed",
    // totals: "ownRecords, the ids of the records whose originality is original, in stream
    // order ... mayIncludeCopies, true when some record's originality is unknown"
    CopiesCredited => ["ASR-417"] "ASR-417 \"MUST NOT count ... copied records as the work of the session\": copies credited",
    UnknownCredited => ["ASR-416"] "ASR-416 \"MUST NOT credit a session with records whose originality is unknown\": unknown records credited",
    OwnRecordsById => ["ASR-417"] "\"in stream order\": ownRecords sorted by id",
    MayIncludeCopiesFromCopies => ["ASR-416"] "ASR-416 \"totals including such records\" read as totals including copies: mayIncludeCopies true when some record is a copy, false when only unknown ones",
    MayIncludeCopiesNever => ["ASR-416"] "ASR-416 \"MUST say that the totals may include copies\" ignored: mayIncludeCopies always false",
    SupersededNotCredited => ["ASR-416"] "superseded revisions read as no work of the session: left out of ownRecords",
    // (RepeatedIdLastWins: a copy's line read for an id whose first line is unknown leaves no
    // unknown record, so totals.mayIncludeCopies reads false: ASR-416's "MUST say that the
    // totals may include copies", a total no tag can tie to the line misread.)
    // records: "Every other line with a string `id` that no earlier line has (the header's
    // included) is a record, declarations and any later `session` line included ... A line
    // without one (no `id`, `"id": 7`, the header's id again) is no record ... what it says
    // of records (`supersedes`, a delivery's `message`) counts for nothing"
    NumericIdIsARecord => ["ASR-X-009", "ASR-237"] "\"a string `id`\": a numeric id read as the record's id, its digits as the key",
    LaterHeaderIdIsARecord => ["ASR-X-009", "ASR-X-014"] "\"that no earlier line has (the header's included)\": a later line with the header's id listed as a record",
    RepeatedIdLastWins => ["ASR-X-009", "ASR-416"] "ASR-X-009 \"a repeated id keeps its first record\": the last line of a repeated id read as its record, as a JavaScript object built line by line keeps it",
    LaterSessionLineNotARecord => ["ASR-X-009", "ASR-416", "ASR-415"] "\"any later `session` line included\": a later session line read as a second header, not a record",
    LaterSessionLineLineage => ["ASR-401", "ASR-406", "ASR-415", "ASR-416"] "\"A later `session` line is a record like any other: its lineage is no lineage of the session\": its lineage read like a declaration's",
    IdlessDeliveryConfirms => ["ASR-237"] "\"what it says of records (a delivery's `message`) counts for nothing\": a delivery line without a string id confirms its message",
    IdlessRevisionSupersedes => ["ASR-X-014"] "\"what it says of records (`supersedes`) counts for nothing\": a revision line without a string id supersedes what it names",
    // superseded: "A `supersedes` of another JSON type (an array) names nothing"; "the keys
    // messageId, callId, planId, turnId and inferenceId, any other key names no record"
    SupersedesArrayNamesEach => ["ASR-X-014"] "\"A supersedes of another JSON type (an array) names nothing\": each string of an array supersedes what it names",
    AnyNativeKeyResolves => ["ASR-X-014", "ASR-237"] "decision native-id-refs \"any other key names no record\": key=value resolved through any member of that name (uuid=..., toolUseId=...)",
    // delivered: "the message a revision is for is the one it names, else the one the
    // nearest earlier revision names ... the two ends of a forked chain are two latest
    // revisions, either of which confirms"
    ForkOnlyLastEndConfirms => ["ASR-237"] "decision supersedes-fork \"either of which confirms\": only the end of a forked chain last in the stream decides",
    OriginalDeliveryMessage => ["ASR-237"] "decision revised-delivery-message \"the one it names\": a revision's message is the one the chain's first delivery names",
    DeliveryResolvedBeforeOnly => ["ASR-237"] "a delivery's message resolved like supersedes, to records before it: a delivery naming a later message (messageId=...) confirms nothing",
    // members of another JSON type: "read as absent ... but for the members that count by
    // their presence: a parent facet of any value names a parent, and copiedFrom of any value
    // makes a copy"
    NullFacetNotAParent => ["ASR-401"] "\"a parent facet of any value names a parent (spawnedBy: null: root is no)\": a null facet read as absent",
    CopiedFromMustBeObject => ["ASR-416", "ASR-417"] "\"copiedFrom of any value makes a copy\": copiedFrom null (or of another type) read as absent",
    PartNullOverrides => ["ASR-224"] "\"a part's author: null leaves the message's author\": a part's null author, origin or phase read as the part's own value, null",
    NullVisibilityIsOther => ["ASR-214"] "\"a reasoning part's visibility: null reads as no visibility\": null read as some other visibility, its text kept out of the index",
    NullInheritsReplaces => ["ASR-416", "ASR-415"] "\"a declaration's inherits: null replaces nothing\": inherits null read as replacing the header's with none",
    ContentStringAsTextPart => ["ASR-X-021"] "\"a content that is no array has no parts\": a string content (a chat API's shorthand) read as one text part",
    NonObjectPartDropped => ["ASR-X-021"] "\"A part that is no object has type null and renders skipped\": such parts left out of parts",
    // effective inherits: "the header's, replaced by each declaration that has one, in
    // stream order: the last one applies to the whole stream, records before it included"
    DeclarationFromItsPosition => ["ASR-415", "ASR-416", "ASR-417"] "decision effective-inherits \"records before it included\": each declaration applies from its own line on",
    InheritsMerged => ["ASR-416", "ASR-415"] "\"replaced by each declaration that has one\": a declaration's inherits merged member by member into the header's (a mode without localThroughId keeps the header's localThroughId)",
    // the own session: "agent.name, :, then namespace and : when the header has one, then
    // sessionId, each part escaped ...; a record naming it in any spelling is no unresolved
    // session"
    OwnSessionWithoutNamespace => ["ASR-406"] "\"then namespace and : when the header has one\": the own session built as agent:sessionId, so the stream lists itself",
    OwnSessionAsWritten => ["ASR-406"] "\"a record naming it in any spelling\": the own session recognised only as the header spells it",
    // the canonical form: "escapes again only %, :, # and control characters, in upper case
    // ... keeps escaped an octet that is no part of a UTF-8 character ... escapes DEL and C1
    // controls, and the list is sorted by UTF-8 bytes"
    CanonicalControlsRaw => ["ASR-406"] "\"escapes DEL and C1 controls\": only C0 controls escaped, DEL and C1 decoded raw",
    CanonicalLowerHex => ["ASR-406"] "\"in upper case\": escapes written in lower case hex",
    NonUtf8Lossy => ["ASR-406"] "\"keeps escaped an octet that is no part of a UTF-8 character\": such octets decoded as U+FFFD, as a lossy decoder does",
    SortByUtf16 => ["ASR-406"] "\"sorted by UTF-8 bytes (code point order: U+E000 before U+1F600)\": sorted by UTF-16 code units, a JavaScript sort",
    DecodeEscapedDelimiters => ["ASR-406"] "\"escapes again only %, : and #\": every escape decoded, %3A read as a raw :",
    UnresolvedIncludesMalformed => ["ASR-X-012", "ASR-406"] "ASR-X-012 \"A string that is not a session reference names no session\": malformed references (raw DEL, C1, bad escape) listed as written",
    DerivedNativeRefAsSession => ["ASR-406"] "\"messageId=chat:c1#m7 names a native id, whatever it holds, and no session\": any derivedFrom entry with a # read as a session reference",
    // index: "a text part's text, an empty one included ([\"\"]; decision
    // index-holds-every-text)"
    EmptyTextNotIndexed => ["ASR-215"] "decision index-holds-every-text \"an empty one included\": an empty text left out of the index",
    MissingTextIndexedEmpty => ["ASR-215"] "\"a text part without text: []\": a text part without text indexed as an empty text",
    // the copied prefix
    DerivedInPrefixOriginal => ["ASR-415", "ASR-426", "ASR-417"] "decision derived-in-prefix: ASR-426 \"new content of its own session\" read over ASR-415: a derivedFrom message inside the copied prefix read as original",
    LocalThroughHeaderNoPrefix => ["ASR-415", "ASR-416"] "\"a localThroughId naming a record of the stream (the header included)\": a localThroughId naming the header read as naming no record, the stream unknown",
    // members read in other ways
    AudienceBothOutOfContextView => ["ASR-205"] "ASR-205 \"Messages with audience user ... are not entries\": audience both read as including user, out of the context view",
    EncryptedReasoningAsOpaque => ["ASR-214"] "\"reasoning-hidden (any other visibility, or none)\": reasoning with visibility encrypted rendered as an opaque part",
    ResourceBlobIndexed => ["ASR-215"] "\"an embedded resource's text\": an embedded resource's blob indexed beside its text",
    UntypedPartAsText => ["ASR-218"] "\"skipped for a type the reader does not know\": a part without type but with text read as a text part",
}

/// A reader case with its stream read: what the sidecar expects, and the right reading.
struct ReaderCase {
    name: String,
    kinds: Kinds,
    lines: Vec<Value>,
    expected: Value,
    right: Value,
}

/// The lines of a stream that are JSON, as values (a byte order mark and CR read past).
fn lines_of(bytes: &[u8]) -> Vec<Value> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    bytes
        .split(|b| *b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .filter(|line| !line.is_empty())
        .filter_map(|line| asr_suite::json::parse(line).ok().map(|parsed| parsed.value))
        .collect()
}

fn stream_of(case: &Case) -> Option<Vec<u8>> {
    match case.streams.as_slice() {
        [(_, path)] => Some(std::fs::read(path).expect("the stream reads")),
        _ => None,
    }
}

/// The reader cases of the corpus the reference reader reads as their sidecars say, and
/// the names of those it does not.
fn reader_cases(cases: &[Case]) -> (Vec<ReaderCase>, Vec<String>) {
    let mut agreed = Vec::new();
    let mut disagreed = Vec::new();
    for case in cases {
        let Some(expect) = &case.sidecar.expect.reader else {
            continue;
        };
        let bytes = stream_of(case).expect("a reader case has one stream");
        let outcome = read_bytes(&bytes);
        let right = serde_json::to_value(&outcome.reading).expect("a reading is JSON");
        let kinds = Kinds::of_stream(&bytes);
        // A refusal the case allows leaves no reading of the whole stream to misread.
        if expect.may_refuse && !outcome.accepted {
            continue;
        }
        if outcome.accepted != expect.valid
            || !compare_readings(&expect.reading, &right, &kinds).is_empty()
        {
            disagreed.push(case.name.clone());
            continue;
        }
        let lines = lines_of(&bytes);
        // A stream the second reader reads otherwise with no misreading switched on (one it
        // cannot read from parsed values: a seq beyond what a double holds) would catch every
        // misreading, and so tells none apart.
        if !compare_readings(&expect.reading, &reader::read(&lines, None), &kinds).is_empty() {
            continue;
        }
        agreed.push(ReaderCase {
            name: case.name.clone(),
            kinds,
            lines,
            expected: expect.reading.clone(),
            right,
        });
    }
    (agreed, disagreed)
}

/// Whether a case tells a wrong reading from the right one.
fn catches(case: &ReaderCase, read: Misread) -> bool {
    let wrong = read(&case.lines, &case.right);
    !compare_readings(&case.expected, &wrong, &case.kinds).is_empty()
}

/// Each wrong reading with the cases that catch it.
fn matrix<'a>(cases: &'a [ReaderCase], wrongs: &'a [Wrong]) -> Vec<(&'a Wrong, Vec<&'a str>)> {
    wrongs
        .iter()
        .map(|wrong| {
            let by = cases
                .iter()
                .filter(|case| catches(case, wrong.read))
                .map(|case| case.name.as_str())
                .collect();
            (wrong, by)
        })
        .collect()
}

/// The wrong readings fewer than `CATCHERS` cases catch, with how many do.
fn weak<'a>(matrix: &[(&'a Wrong, Vec<&str>)]) -> Vec<(&'a str, usize)> {
    matrix
        .iter()
        .filter(|(_, by)| by.len() < CATCHERS)
        .map(|(wrong, by)| (wrong.name, by.len()))
        .collect()
}

fn table(matrix: &[(&Wrong, Vec<&str>)]) -> String {
    let mut text = String::new();
    for (wrong, by) in matrix {
        let _ = writeln!(text, "{:>3}  {}: {}", by.len(), wrong.name, wrong.misreads);
        // WRONG_READINGS_CASES=1 names the cases that catch each, to find which a new case
        // must add to.
        if std::env::var_os("WRONG_READINGS_CASES").is_some() {
            let _ = writeln!(text, "       {by:?}");
        }
    }
    text
}

/// Every single-stream case the reference reader accepts: the streams a second reader must
/// read as it does.
fn accepted_streams(cases: &[Case]) -> Vec<(String, Vec<Value>, Value)> {
    cases
        .iter()
        .filter_map(|case| {
            let bytes = stream_of(case)?;
            let outcome = read_bytes(&bytes);
            let valid = case
                .sidecar
                .expect
                .validator
                .as_ref()
                .is_none_or(|v| v.valid && v.violations.is_empty());
            (outcome.accepted && valid).then(|| {
                let right = serde_json::to_value(&outcome.reading).expect("a reading is JSON");
                (case.name.clone(), lines_of(&bytes), right)
            })
        })
        .collect()
}

#[test]
fn every_reader_case_is_read_as_its_sidecar_says() {
    let (cases, disagreed) = reader_cases(&helpers::cases());
    assert!(cases.len() >= 30, "{} reader cases", cases.len());
    assert!(
        disagreed.is_empty(),
        "the reference reader disagrees with: {disagreed:?}"
    );
}

#[test]
fn the_second_reader_reads_every_valid_stream_as_the_reference_does() {
    let streams = accepted_streams(&helpers::cases());
    assert!(streams.len() > 100, "{} streams", streams.len());
    let mut differ = Vec::new();
    for (name, lines, right) in &streams {
        let read = reader::read(lines, None);
        let diff = asr_suite::judge::diff_readings(right, &read, &Kinds::default());
        if !diff.is_empty() {
            let list: Vec<String> = diff.iter().map(ToString::to_string).collect();
            differ.push(format!("{name}:\n  {}", list.join("\n  ")));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// The wrong readings that read every stream as the reference does: no-op misreadings.
fn unchanged<'a>(streams: &[(String, Vec<Value>, Value)], wrongs: &'a [Wrong]) -> Vec<&'a str> {
    wrongs
        .iter()
        .filter(|wrong| {
            !streams
                .iter()
                .any(|(_, lines, right)| (wrong.read)(lines, right) != *right)
        })
        .map(|wrong| wrong.name)
        .collect()
}

#[test]
fn every_wrong_reading_changes_the_reading_of_some_stream() {
    let corpus = helpers::cases();
    let mut streams = accepted_streams(&corpus);
    // A stream every reader must read, invalid or not: a misreading of what only a broken
    // stream holds (a numeric id, a null facet) changes no valid stream.
    let (cases, _) = reader_cases(&corpus);
    streams.extend(cases.into_iter().map(|c| (c.name, c.lines, c.right)));
    let wrongs = wrong_readings();
    let unchanged = unchanged(&streams, &wrongs);
    assert!(
        unchanged.is_empty(),
        "wrong readings that change no stream of the corpus: {unchanged:?}"
    );
}

#[test]
fn every_wrong_reading_is_caught_by_two_reader_cases() {
    let (cases, _) = reader_cases(&helpers::cases());
    let wrongs = wrong_readings();
    assert!(wrongs.len() >= 40, "{} wrong readings", wrongs.len());
    let matrix = matrix(&cases, &wrongs);
    let weak = weak(&matrix);
    println!(
        "{} wrong readings over {} reader cases (cases catching each):\n{}",
        wrongs.len(),
        cases.len(),
        table(&matrix)
    );
    assert!(
        weak.is_empty(),
        "{} wrong readings are caught by fewer than {CATCHERS} reader cases: {weak:?}\n{}",
        weak.len(),
        table(&matrix)
    );
}

/// A control: a wrong reading that lists a record no case expects changes every reading,
/// yet no case catches it (a case decides only the members it gives), and the matrix says
/// so; a wrong reading that is the right one changes nothing, and the no-op check says so.
#[test]
fn the_matrix_reports_a_wrong_reading_no_case_catches() {
    fn lists_an_extra_record(_lines: &[Value], right: &Value) -> Value {
        let mut wrong = right.clone();
        wrong["records"]["x-not-in-the-stream"] =
            json!({"type": "message", "superseded": false, "originality": "original"});
        wrong
    }
    fn the_right_reading(_lines: &[Value], right: &Value) -> Value {
        right.clone()
    }
    let (cases, _) = reader_cases(&helpers::cases());
    let controls = [
        Wrong {
            name: "lists_an_extra_record",
            misreads: "control",
            breaks: &["ASR-X-009"],
            read: lists_an_extra_record,
        },
        Wrong {
            name: "the_right_reading",
            misreads: "control",
            breaks: &[],
            read: the_right_reading,
        },
        Wrong {
            name: "CopiesCredited",
            misreads: "control: one that cases catch",
            breaks: &["ASR-417"],
            read: |lines, _| reader::read(lines, Some(Knob::CopiesCredited)),
        },
    ];
    let matrix = matrix(&cases, &controls);
    assert_eq!(
        weak(&matrix),
        [("lists_an_extra_record", 0), ("the_right_reading", 0)]
    );
    let streams = accepted_streams(&helpers::cases());
    assert_eq!(unchanged(&streams, &controls), ["the_right_reading"]);
}

/// The rules each failure of a wrong reading is charged to, judged as `run --role reader`
/// judges an answer, over every case that catches it.
fn charges(cases: &[Case], wrong: &Wrong) -> BTreeMap<String, usize> {
    let mut rules = BTreeMap::new();
    for case in cases.iter().filter(|c| c.sidecar.expect.reader.is_some()) {
        let Some(bytes) = stream_of(case) else {
            continue;
        };
        let outcome = read_bytes(&bytes);
        if !outcome.accepted {
            continue;
        }
        let right = serde_json::to_value(&outcome.reading).expect("a reading is JSON");
        let lines = lines_of(&bytes);
        let judge = |reading: Value| {
            judge_reader(
                case,
                &[StreamAnswer::read(
                    true,
                    serde_json::from_value(reading).ok(),
                )],
            )
        };
        // A stream the second reader reads otherwise than the reference with no misreading
        // switched on (one it is not built for) says nothing of a misreading.
        if !judge(reader::read(&lines, None)).attributions.is_empty() {
            continue;
        }
        let judged = judge((wrong.read)(&lines, &right));
        for attribution in judged.attributions {
            let rule = attribution.rule.unwrap_or_else(|| "(no rule)".into());
            *rules.entry(rule).or_default() += 1;
        }
    }
    rules
}

#[test]
fn every_wrong_reading_is_charged_to_the_rule_it_breaks() {
    let corpus = helpers::cases();
    let catalog = asr_suite::catalog::Catalog::embedded();
    let mut wrong_rule = Vec::new();
    let mut table = String::new();
    for wrong in wrong_readings() {
        let charged = charges(&corpus, &wrong);
        let _ = writeln!(
            table,
            "{}: {charged:?} (breaks {:?})",
            wrong.name, wrong.breaks
        );
        for rule in charged.keys() {
            if !catalog.binds(rule, asr_suite::protocol::ProtocolRole::Reader) {
                wrong_rule.push(format!(
                    "{}: charged to {rule}, which binds no reader",
                    wrong.name
                ));
            } else if !wrong.breaks.contains(&rule.as_str()) {
                wrong_rule.push(format!(
                    "{}: charged to {rule}, not to {:?}",
                    wrong.name, wrong.breaks
                ));
            }
        }
        if let Some(first) = wrong.breaks.first()
            && !charged.contains_key(*first)
        {
            wrong_rule.push(format!("{}: never charged to {first}", wrong.name));
        }
    }
    println!("{table}");
    assert!(wrong_rule.is_empty(), "{}\n{table}", wrong_rule.join("\n"));
}

/// Every JSON Pointer into `value`, containers included.
fn pointers(value: &Value, at: &mut String, out: &mut Vec<(String, Value)>) {
    out.push((at.clone(), value.clone()));
    let mut push = |token: &str, child: &Value, at: &mut String| {
        let mark = at.len();
        at.push('/');
        at.push_str(&token.replace('~', "~0").replace('/', "~1"));
        pointers(child, at, out);
        at.truncate(mark);
    };
    match value {
        Value::Object(members) => {
            for (key, child) in members {
                push(key, child, at);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                push(&index.to_string(), child, at);
            }
        }
        _ => {}
    }
}

/// No member of any reading of the corpus, read wrong, can be charged to no rule, nor to a
/// rule that binds no reader: every pointer of the reference's reading of every reader
/// case's stream (and a record the stream does not have, and every record's crediting)
/// goes to a rule that binds readers.
#[test]
fn every_member_of_every_reading_comes_from_a_rule_that_binds_readers() {
    let catalog = asr_suite::catalog::Catalog::embedded();
    let reader = asr_suite::protocol::ProtocolRole::Reader;
    let mut loose = Vec::new();
    let mut checked = 0;
    for case in helpers::cases().iter().filter(|c| c.sidecar.expect.reads()) {
        for (_, path) in &case.streams {
            let bytes = std::fs::read(path).expect("a stream");
            let kinds = Kinds::of_stream(&bytes);
            let reading = serde_json::to_value(read_bytes(&bytes).reading).expect("json");
            let mut all = Vec::new();
            pointers(&reading, &mut String::new(), &mut all);
            all.push(("/records/x-not-in-the-stream".into(), Value::Null));
            for (pointer, value) in all.iter().filter(|(p, _)| !p.is_empty()) {
                // The reading's three containers are no member of their own.
                if ["/session", "/records", "/totals"].contains(&pointer.as_str()) {
                    continue;
                }
                checked += 1;
                match kinds.rule_of(pointer, Some(value)) {
                    Some(rule) if catalog.binds(&rule, reader) => {}
                    other => loose.push(format!("{}: {pointer} -> {other:?}", case.name)),
                }
            }
            let ids = reading["records"]
                .as_object()
                .map(|r| r.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default();
            for id in ids
                .iter()
                .map(String::as_str)
                .chain(["h", "x-not-in-the-stream"])
            {
                for credited in [true, false] {
                    let rule = kinds.credit_rule(id, credited);
                    if !catalog.binds(&rule, reader) {
                        loose.push(format!("{}: crediting {id} -> {rule}", case.name));
                    }
                }
            }
        }
    }
    assert!(checked > 5_000, "{checked} members checked");
    assert!(loose.is_empty(), "{}", loose.join("\n"));
}
