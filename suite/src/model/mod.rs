//! The typed view of a record, shared by the checker and the reference reader so that both
//! understand a stream the same way: which line is the header and which lines are
//! records ([`Layout`]), what a record is, names and references ([`Record`], [`Lineage`]),
//! how references resolve ([`RecordIndex`]), what the header and the declarations say of
//! every record and the tags a record has by them ([`Declared`], [`Originality`]), and each
//! content part's effective author, origin and phase ([`Part`], [`parts`], ASR-224).
//!
//! A view is built once per line from the parsed object, in one pass over its members; it
//! borrows every text from the object and keeps the object itself for what it does not
//! type (unknown members stay there, untouched, for ASR-218).
//!
//! ```
//! use asr_suite::model::{Layout, Record, Standing};
//!
//! let line = r#"{"type":"subagent","seq":3,"id":"r3","callId":"c1","childSession":"codex:kid","supersedes":"r2","x-vendor":1}"#;
//! let value: serde_json::Value = serde_json::from_str(line).expect("JSON");
//! let record = Record::new(value.as_object().expect("an object"));
//! assert_eq!((record.kind, record.seq, record.id), (Some("subagent"), Some(3), Some("r3")));
//! assert_eq!((record.supersedes, record.native("callId")), (Some("r2"), Some("c1")));
//! let named: Vec<_> = record.sessions(false).map(|(slot, s)| (slot.pointer(), s)).collect();
//! assert_eq!(named, [("/childSession".to_owned(), "codex:kid")]);
//! assert!(record.object.contains_key("x-vendor"));
//!
//! let mut layout = Layout::default();
//! assert_eq!(layout.stand(1, Some("message")), Standing::Record { first_is_not_header: true });
//! assert_eq!(layout.stand(2, Some("session")), Standing::Header);
//! assert_eq!(layout.stand(3, Some("session")), Standing::SecondHeader { header_line: 2 });
//! ```

mod index;
mod layout;
mod outline;
mod part;
mod tags;

pub use index::{Added, RecordIndex};
pub use layout::{Layout, Placed, Standing, placed};
pub use outline::Outline;
pub use part::{
    At, Effective, PART_DEFAULTS, Part, Unit, effective_at, parts, parts_of, units,
    with_effective_parts,
};
pub use tags::{Declared, DeclaredInherits, Originality};

use crate::refs::{DerivedEntry, derived_entry, own_session_ref, parse_session_ref};
use serde_json::{Map, Value};

/// The members that hold native ids, which `key=value` references resolve through.
pub const NATIVE_KEYS: [&str; 5] = ["messageId", "callId", "planId", "turnId", "inferenceId"];

/// The lineage facets that name a parent session (ASR-402).
pub const PARENT_FACETS: [&str; 4] = ["spawnedBy", "forkedFrom", "continues", "relatedUnknown"];

/// The `inherits` modes that name an ancestor whose records are this session's context.
pub const INHERITING_MODES: [&str; 3] = ["copied", "referenced", "rendered"];

/// The members of a record the view reads (the native ids besides): all that the checks
/// across records need of a record, a small part of it when it holds text.
pub const VIEW_MEMBERS: [&str; 16] = [
    "type",
    "seq",
    "id",
    "supersedes",
    "copiedFrom",
    "lineage",
    "conversation",
    "message",
    "childSession",
    "derivedFrom",
    "agent",
    "sessionId",
    "namespace",
    "authority",
    "producer",
    "conversations",
];

/// Keeps in `object` the members that the view reads, and drops the rest: what a record's
/// checks across records see of it is the same, and its text is freed.
pub fn keep_essentials(object: &mut Map<String, Value>) {
    object.retain(|key, _| is_essential(key));
}

/// Whether the view reads the member `name` ([`VIEW_MEMBERS`] and [`NATIVE_KEYS`]).
pub(crate) fn is_essential(name: &str) -> bool {
    VIEW_MEMBERS.contains(&name) || NATIVE_KEYS.contains(&name)
}

/// One record, typed: the members every check and every reading share.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Record<'a> {
    /// The whole object, for what the view does not type.
    pub object: &'a Map<String, Value>,
    /// `type`, when it is a string.
    pub kind: Option<&'a str>,
    /// `seq`, when it is an integer from 0 to 2^64-1.
    pub seq: Option<u64>,
    /// `seq` as written, when present (a number out of range or of the wrong type included).
    pub seq_value: Option<&'a Value>,
    /// `id`, when it is a string.
    pub id: Option<&'a str>,
    /// `supersedes`, when it is a non-empty string (an empty one is malformed, not a reference).
    pub supersedes: Option<&'a str>,
    /// `copiedFrom`, when present.
    pub copied_from: Option<CopiedFrom<'a>>,
    /// `lineage`, when it is an object.
    pub lineage: Option<&'a Map<String, Value>>,
    /// The native ids, in the order of [`NATIVE_KEYS`].
    pub natives: [Option<&'a str>; 5],
    /// `conversation`, when it is a string.
    pub conversation: Option<&'a str>,
    /// `message` (of a delivery), when it is a non-empty string.
    pub message: Option<&'a str>,
    /// `childSession` (of a subagent), when it is a string.
    pub child_session: Option<&'a str>,
    /// `derivedFrom`, when it is an array.
    pub derived_from: Option<&'a [Value]>,
}

/// A record's `copiedFrom`.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct CopiedFrom<'a> {
    /// It is an object (anything else is malformed, and still says the record is a copy).
    pub object: bool,
    /// `session`, when it is a string.
    pub session: Option<&'a str>,
    /// `session` is there, whatever its JSON type: the original is then in that session, not
    /// in this stream, even when the reference is malformed.
    pub names_session: bool,
    /// `record`, when it is a non-empty string.
    pub record: Option<&'a str>,
}

impl<'a> Record<'a> {
    /// The view of one parsed record, in one pass over its members.
    pub fn new(object: &'a Map<String, Value>) -> Self {
        let mut record = Record {
            object,
            kind: None,
            seq: None,
            seq_value: None,
            id: None,
            supersedes: None,
            copied_from: None,
            lineage: None,
            natives: [None; 5],
            conversation: None,
            message: None,
            child_session: None,
            derived_from: None,
        };
        for (key, value) in object {
            match key.as_str() {
                "type" => record.kind = value.as_str(),
                "seq" => {
                    record.seq = value.as_u64();
                    record.seq_value = Some(value);
                }
                "id" => record.id = value.as_str(),
                "supersedes" => record.supersedes = reference(value),
                "copiedFrom" => {
                    record.copied_from = Some(CopiedFrom {
                        object: value.is_object(),
                        session: value.get("session").and_then(Value::as_str),
                        names_session: value.get("session").is_some(),
                        record: value.get("record").and_then(reference),
                    });
                }
                "lineage" => record.lineage = value.as_object(),
                "conversation" => record.conversation = value.as_str(),
                "message" => record.message = reference(value),
                "childSession" => record.child_session = value.as_str(),
                "derivedFrom" => record.derived_from = value.as_array().map(Vec::as_slice),
                other => {
                    if let Some(at) = NATIVE_KEYS.iter().position(|k| *k == other) {
                        record.natives[at] = value.as_str();
                    }
                }
            }
        }
        record
    }

    /// `seq` as a number, when it is one (of any range: see [`SeqNumber`]).
    pub fn seq_number(&self) -> Option<SeqNumber> {
        self.seq_value.and_then(SeqNumber::of)
    }

    /// The native id under `key` (one of [`NATIVE_KEYS`]).
    pub fn native(&self, key: &str) -> Option<&'a str> {
        NATIVE_KEYS
            .iter()
            .position(|k| *k == key)
            .and_then(|at| self.natives[at])
    }

    /// A string member the view does not type.
    pub fn str(&self, key: &str) -> Option<&'a str> {
        self.object.get(key).and_then(Value::as_str)
    }

    /// The lineage this record declares, when it is the header or a declaration (the only
    /// records whose lineage counts).
    pub fn declared_lineage(&self, is_header: bool) -> Option<Lineage<'a>> {
        if is_header || self.kind == Some("declaration") {
            self.lineage.map(Lineage::new)
        } else {
            None
        }
    }

    /// The header's facts; meaningful when this record is the header.
    pub fn header(&self) -> Header {
        let agent = self
            .object
            .get("agent")
            .and_then(|a| a.get("name"))
            .and_then(Value::as_str);
        let own_session = match (agent, self.str("sessionId")) {
            (Some(agent), Some(id)) => {
                let written = own_session_ref(agent, self.str("namespace"), id);
                parse_session_ref(&written).ok().map(|r| r.canonical())
            }
            _ => None,
        };
        Header {
            own_session,
            mirror: self.str("authority") == Some("mirror"),
            lineage_lossy: self
                .object
                .get("producer")
                .and_then(|p| p.get("lossy"))
                .and_then(Value::as_array)
                .is_some_and(|l| {
                    l.iter()
                        .filter_map(Value::as_str)
                        .any(|s| s.starts_with("lineage"))
                }),
        }
    }

    /// The conversations this record declares (`conversations`, as ids or objects with an
    /// id, or as an object keyed by id).
    pub fn conversations(&self) -> impl Iterator<Item = &'a str> {
        let (items, keys) = match self.object.get("conversations") {
            Some(Value::Array(items)) => (Some(items), None),
            Some(Value::Object(map)) => (None, Some(map)),
            _ => (None, None),
        };
        let items = items.into_iter().flatten().filter_map(|item| {
            item.as_str()
                .or_else(|| item.get("id").and_then(Value::as_str))
        });
        items.chain(keys.into_iter().flat_map(|m| m.keys().map(String::as_str)))
    }

    /// Every session this record names, as written, with where: lineage facets (when
    /// `is_header`, or for a declaration), a subagent's `childSession`, `copiedFrom.session`,
    /// and a message's `derivedFrom` entries that are session references with a `#` part.
    /// Texts that are no session reference are left out.
    pub fn sessions(&self, is_header: bool) -> impl Iterator<Item = (Slot, &'a str)> {
        let lineage = self
            .declared_lineage(is_header)
            .into_iter()
            .flat_map(Lineage::sessions);
        let child = self
            .child_session
            .filter(|_| self.kind == Some("subagent"))
            .map(|s| (Slot::ChildSession, s));
        let copied = self
            .copied_from
            .and_then(|c| c.session)
            .map(|s| (Slot::CopiedFrom, s));
        let derived = self
            .derived_from
            .filter(|_| self.kind == Some("message"))
            .into_iter()
            .flatten()
            .enumerate()
            .filter_map(|(n, entry)| {
                let entry = entry.as_str()?;
                matches!(derived_entry(entry), Some(DerivedEntry::Session(_)))
                    .then_some((Slot::DerivedFrom(n), entry))
            });
        lineage
            .chain(child)
            .chain(copied)
            .chain(derived)
            .filter(|(_, s)| parse_session_ref(s).is_ok())
    }
}

/// What the header says of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Header {
    /// The stream's own session reference, canonical, from `agent.name`, `namespace` and
    /// `sessionId`.
    pub own_session: Option<String>,
    /// `authority: "mirror"`.
    pub mirror: bool,
    /// `producer.lossy` names lineage.
    pub lineage_lossy: bool,
}

/// A `lineage` object, typed.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Lineage<'a> {
    /// The object.
    pub object: &'a Map<String, Value>,
    /// `root: true`.
    pub root: bool,
    /// A parent is named: a parent facet is present, or `inherits.mode` is one that names
    /// an ancestor.
    pub names_parent: bool,
    /// `inherits`, when it is an object.
    pub inherits: Option<Inherits<'a>>,
}

/// A lineage's `inherits`.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Inherits<'a> {
    /// `mode`, when it is a string.
    pub mode: Option<&'a str>,
    /// `from`, when it is a string.
    pub from: Option<&'a str>,
    /// `localThroughId`, when it is a non-empty string.
    pub local_through_id: Option<&'a str>,
    /// `localThroughId` is there, whatever its JSON type.
    pub names_local_through: bool,
}

impl<'a> Lineage<'a> {
    /// The view of a lineage object.
    pub fn new(object: &'a Map<String, Value>) -> Self {
        let inherits = object.get("inherits").and_then(Value::as_object).map(|i| {
            let text = |key: &str| i.get(key).and_then(Value::as_str);
            Inherits {
                mode: text("mode"),
                from: text("from"),
                local_through_id: text("localThroughId").filter(|t| !t.is_empty()),
                names_local_through: i.contains_key("localThroughId"),
            }
        });
        let names_parent = PARENT_FACETS.iter().any(|f| object.contains_key(*f))
            || inherits
                .and_then(|i| i.mode)
                .is_some_and(|m| INHERITING_MODES.contains(&m));
        Lineage {
            object,
            root: object.get("root") == Some(&Value::Bool(true)),
            names_parent,
            inherits,
        }
    }

    /// A parent facet's `session` and `record`, when the facet is present.
    pub fn facet(self, name: &str) -> Option<(Option<&'a str>, Option<&'a str>)> {
        let facet = self.object.get(name)?;
        let text = |key: &str| facet.get(key).and_then(Value::as_str);
        Some((text("session"), text("record")))
    }

    /// The sessions of `executedBy`, by entry.
    pub fn executed_by(self) -> impl Iterator<Item = (usize, &'a str)> {
        self.object
            .get("executedBy")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .filter_map(|(n, e)| Some((n, e.get("session")?.as_str()?)))
    }

    /// Every session the lineage names, as written: parent facets, `inherits.from`,
    /// `executedBy`.
    pub fn sessions(self) -> impl Iterator<Item = (Slot, &'a str)> {
        let facets = PARENT_FACETS
            .iter()
            .filter_map(move |f| Some((Slot::Facet(f), self.facet(f)?.0?)));
        let from = self
            .inherits
            .and_then(|i| i.from)
            .map(|s| (Slot::InheritsFrom, s));
        let executed = self.executed_by().map(|(n, s)| (Slot::ExecutedBy(n), s));
        facets.chain(from).chain(executed)
    }
}

/// Where a record names a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Slot {
    /// `lineage.<facet>.session`.
    Facet(&'static str),
    /// `lineage.inherits.from`.
    InheritsFrom,
    /// `lineage.executedBy[n].session`.
    ExecutedBy(usize),
    /// `childSession`.
    ChildSession,
    /// `copiedFrom.session`.
    CopiedFrom,
    /// `derivedFrom[n]`.
    DerivedFrom(usize),
}

impl Slot {
    /// The JSON Pointer of the slot in its record.
    pub fn pointer(self) -> String {
        match self {
            Slot::Facet(facet) => format!("/lineage/{facet}/session"),
            Slot::InheritsFrom => "/lineage/inherits/from".into(),
            Slot::ExecutedBy(n) => format!("/lineage/executedBy/{n}/session"),
            Slot::ChildSession => "/childSession".into(),
            Slot::CopiedFrom => "/copiedFrom/session".into(),
            Slot::DerivedFrom(n) => format!("/derivedFrom/{n}"),
        }
    }
}

/// A record's seq as the number it is: an integer a seq may be, or any other JSON number,
/// kept exactly (a seq at or beyond 2^64 is compared as the decimal it spells, never as the
/// nearest double: 18446744073709551617 is above 18446744073709551616).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SeqNumber {
    /// An integer a seq may be.
    Integer(u64),
    /// Any other number.
    Other(Exact),
}

impl SeqNumber {
    /// The seq `value` holds, when it is a JSON number; a number beyond `u64` is only as exact
    /// as the double it was read as (see [`SeqNumber::of_text`]).
    pub fn of(value: &Value) -> Option<SeqNumber> {
        match value.as_u64() {
            Some(n) => Some(SeqNumber::Integer(n)),
            None => value
                .as_f64()
                .and_then(|x| Exact::parse(&x.to_string()))
                .map(SeqNumber::Other),
        }
    }

    /// The seq a JSON number's text spells, exactly.
    pub fn of_text(text: &str) -> Option<SeqNumber> {
        match text.parse::<u64>() {
            Ok(n) if !text.starts_with('+') => Some(SeqNumber::Integer(n)),
            _ => Exact::parse(text).map(SeqNumber::Other),
        }
    }

    /// This seq is at or below `other`, compared exactly.
    pub fn at_or_below(&self, other: &SeqNumber) -> bool {
        match (self, other) {
            (SeqNumber::Integer(a), SeqNumber::Integer(b)) => a <= b,
            (a, b) => a.exact() <= b.exact(),
        }
    }

    fn exact(&self) -> Exact {
        match self {
            SeqNumber::Integer(n) => Exact::parse(&n.to_string()).unwrap_or_default(),
            SeqNumber::Other(x) => x.clone(),
        }
    }
}

/// A JSON number, exactly: `0.digits × 10^point`, negative or not (zero has no digits).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Exact {
    negative: bool,
    /// The significant digits, without leading or trailing zeros.
    digits: Box<str>,
    point: i64,
}

impl Exact {
    /// The number a JSON number's text spells (`-12.5e3`); `None` for text that is not one.
    pub fn parse(text: &str) -> Option<Exact> {
        let (negative, rest) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(at) => (&rest[..at], Some(&rest[at + 1..])),
            None => (rest, None),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if int.is_empty() || !all_digits(int) || !all_digits(frac) {
            return None;
        }
        let exponent: i64 = match exponent {
            None => 0,
            Some(e) => {
                let (sign, body) = match e.as_bytes().first() {
                    Some(b'-') => (-1, &e[1..]),
                    Some(b'+') => (1, &e[1..]),
                    _ => (1, e),
                };
                if body.is_empty() || !all_digits(body) {
                    return None;
                }
                // An exponent past i64 is as far beyond every seq as i64's bound.
                sign * body.parse::<i64>().unwrap_or(i64::MAX / 4)
            }
        };
        let joined = format!("{int}{frac}");
        let leading = joined.len() - joined.trim_start_matches('0').len();
        let digits = joined.trim_start_matches('0').trim_end_matches('0');
        if digits.is_empty() {
            return Some(Exact::default());
        }
        let int_len = i64::try_from(int.len()).unwrap_or(i64::MAX / 4);
        let leading = i64::try_from(leading).unwrap_or(i64::MAX / 4);
        Some(Exact {
            negative,
            digits: digits.into(),
            point: int_len.saturating_sub(leading).saturating_add(exponent),
        })
    }

    fn magnitude_cmp(&self, other: &Exact) -> std::cmp::Ordering {
        match (self.digits.is_empty(), other.digits.is_empty()) {
            (true, true) => return std::cmp::Ordering::Equal,
            (true, false) => return std::cmp::Ordering::Less,
            (false, true) => return std::cmp::Ordering::Greater,
            (false, false) => {}
        }
        // Without trailing zeros, comparing digit strings compares the fractions 0.digits.
        self.point
            .cmp(&other.point)
            .then_with(|| self.digits.cmp(&other.digits))
    }
}

impl PartialOrd for Exact {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Exact {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let zero = |x: &Exact| x.digits.is_empty();
        let negative = |x: &Exact| x.negative && !zero(x);
        match (negative(self), negative(other)) {
            (true, false) => std::cmp::Ordering::Less,
            (false, true) => std::cmp::Ordering::Greater,
            (false, false) => self.magnitude_cmp(other),
            (true, true) => other.magnitude_cmp(self),
        }
    }
}

/// A session reference in its canonical form, when it is one.
pub fn canonical_session(text: &str) -> Option<String> {
    parse_session_ref(text).ok().map(|r| r.canonical())
}

/// A reference member: a non-empty string (an empty one is malformed, reported by the
/// schema, and references nothing).
fn reference(value: &Value) -> Option<&str> {
    value.as_str().filter(|r| !r.is_empty())
}

#[cfg(test)]
mod seq_tests {
    use super::*;

    #[test]
    fn seqs_compare_as_the_numbers_they_spell() {
        let seq = |t: &str| SeqNumber::of_text(t).expect("a number");
        let below = |a: &str, b: &str| seq(a).at_or_below(&seq(b));
        assert!(!below("18446744073709551617", "18446744073709551616"));
        assert!(below("18446744073709551616", "18446744073709551617"));
        assert!(below("18446744073709551615", "18446744073709551616"));
        assert!(below("1.8446744073709551616e19", "18446744073709551616"));
        assert!(!below("18446744073709551616.5", "18446744073709551616"));
        assert!(below("-1", "0") && below("-2e400", "-1e400") && !below("1e400", "1e399"));
        assert!(below("0.0", "-0") && below("-0", "0e7"));
        assert!(below("100", "1e2") && below("1e2", "100") && !below("101", "1e2"));
        assert_eq!(SeqNumber::of_text("12"), Some(SeqNumber::Integer(12)));
        assert_eq!(SeqNumber::of_text("1x"), None);
        assert_eq!(SeqNumber::of_text("1e"), None);
        assert_eq!(SeqNumber::of_text(".5"), None);
        // A double's value, where no text is at hand, is as exact as the double.
        let double = SeqNumber::of(&serde_json::json!(1.5)).expect("a number");
        assert!(double.at_or_below(&seq("1.5")) && seq("1.5").at_or_below(&double));
    }
}
