//! The records of a stream by id and by native id, and what a reference names.

use super::{NATIVE_KEYS, Record, SeqNumber};
use crate::compact::{Ids, Index, Rising};
use crate::refs::{Ref, parse_ref};
use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

/// What adding a record to the index did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Added {
    /// It is record number `n`, the `n`th id first seen.
    New(u32),
    /// Its id is already the id of record number `n`, which keeps it.
    Repeated(u32),
    /// It has no id.
    NoId,
    /// The index is full; the record is not indexed and references to it do not resolve.
    Full,
}

/// Every record with an id (the header included), numbered in the order first seen, with
/// where it stands (line, seq) and its type; found by id, or by native id (`messageId=m1`).
///
/// What is kept of a record is in columns, so that a record costs no allocation of its own:
/// its id's bytes and about 13 bytes to find them, its line (4 bytes), seq (9), type (1: an
/// index into the types seen; past the 254th, a map); for each native id, about 28 bytes.
/// Native ids are found through a 64-bit hash of `key=value`, randomly keyed per stream, so
/// that no stream can aim for collisions.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct RecordIndex {
    ids: Ids,
    lines: Rising,
    seqs: Vec<u64>,
    has_seq: Vec<bool>,
    /// Seqs that are numbers but no integer a seq may be: they are rare, and malformed.
    other_seqs: HashMap<u32, SeqNumber>,
    kinds: Vec<u8>,
    /// Types past the 254th: they are rare, and a byte stays a byte.
    more_kinds: HashMap<u32, u32>,
    kind_names: Vec<Box<str>>,
    kind_numbers: HashMap<Box<str>, u32>,
    natives: Natives,
    hasher: RandomState,
}

/// How many types are looked up by a scan of their names rather than by their hashes.
const FEW_KINDS: usize = 16;

/// How many records a stream's index has room for from its first.
const FIRST_RECORDS: usize = 32;

/// The code of "no type".
const NO_KIND: u8 = 0;
/// The code of a type number that does not fit a byte.
const MORE_KINDS: u8 = u8::MAX;

impl RecordIndex {
    /// Indexes a record at `line` (lines only grow): its id, place, type and native ids. A
    /// record whose id is already known is not indexed: the first keeps the id.
    pub fn add(&mut self, record: &Record<'_>, line: usize) -> Added {
        let Some(id) = record.id else {
            return Added::NoId;
        };
        if let Some(first) = self.find(id) {
            return Added::Repeated(first);
        }
        if self.seqs.capacity() == 0 {
            self.reserve_first();
        }
        let Some(n) = self.ids.add(id.as_bytes()) else {
            return Added::Full;
        };
        self.lines.push(line as u64);
        self.seqs.push(record.seq.unwrap_or(0));
        self.has_seq.push(record.seq.is_some());
        if let Some(other @ SeqNumber::Other(_)) = record.seq_number() {
            self.other_seqs.insert(n, other);
        }
        let code = match record.kind {
            None => NO_KIND,
            Some(kind) => {
                let k = self.kind_number(kind);
                match u8::try_from(k + 1) {
                    Ok(code) if code < MORE_KINDS => code,
                    _ => {
                        self.more_kinds.insert(n, k);
                        MORE_KINDS
                    }
                }
            }
        };
        self.kinds.push(code);
        for (key, value) in NATIVE_KEYS.iter().zip(record.natives) {
            if let Some(value) = value {
                let hash = self.native_hash(key, value);
                self.natives.add(hash, n);
            }
        }
        Added::New(n)
    }

    /// Room for the first [`FIRST_RECORDS`] records in every column at once: most streams
    /// are short, and columns grown from nothing a push at a time cost a stream about ten
    /// allocations more than they hold.
    fn reserve_first(&mut self) {
        self.ids.reserve(FIRST_RECORDS, FIRST_RECORDS * 32);
        self.lines.reserve(FIRST_RECORDS);
        self.seqs.reserve(FIRST_RECORDS);
        self.has_seq.reserve(FIRST_RECORDS);
        self.kinds.reserve(FIRST_RECORDS);
        self.natives.hashes.reserve(FIRST_RECORDS);
        self.natives.last.reserve(FIRST_RECORDS);
        self.natives.records.reserve(FIRST_RECORDS);
        self.natives.earlier.reserve(FIRST_RECORDS);
    }

    /// How many records are indexed.
    pub fn len(&self) -> usize {
        self.seqs.len()
    }

    /// No record is indexed.
    pub fn is_empty(&self) -> bool {
        self.seqs.is_empty()
    }

    /// The record with this id.
    pub fn find(&self, id: &str) -> Option<u32> {
        self.ids.find(id.as_bytes())
    }

    /// The records a reference names, in stream order: through a native id when it is one
    /// (`messageId=m1`, for a key of [`NATIVE_KEYS`]), else the record with that id.
    pub fn resolve(&self, reference: &str) -> Vec<u32> {
        if let Some(Ref::Native { key, value }) = parse_ref(reference) {
            if NATIVE_KEYS.contains(&key) {
                return self.natives.records(self.native_hash(key, value));
            }
        }
        self.find(reference).into_iter().collect()
    }

    /// The latest record a reference names among those before record `before` (all of
    /// them, for `None`): what a revision supersedes.
    pub fn resolve_before(&self, reference: &str, before: Option<u32>) -> Option<u32> {
        self.resolve(reference)
            .into_iter()
            .rfind(|&n| before.is_none_or(|b| n < b))
    }

    /// The id of record `n`.
    pub fn id(&self, n: u32) -> &str {
        self.ids.text(n)
    }

    /// The line of record `n`.
    pub fn line(&self, n: u32) -> usize {
        usize::try_from(self.lines.get(n as usize)).unwrap_or(usize::MAX)
    }

    /// The seq of record `n`, when it has one.
    pub fn seq(&self, n: u32) -> Option<u64> {
        let i = n as usize;
        self.has_seq
            .get(i)
            .copied()
            .unwrap_or(false)
            .then(|| self.seqs[i])
    }

    /// The seq of record `n` as a number, when it is one, malformed or not.
    pub fn seq_number(&self, n: u32) -> Option<SeqNumber> {
        self.seq(n)
            .map(SeqNumber::Integer)
            .or_else(|| self.other_seqs.get(&n).cloned())
    }

    /// Gives record `n` the seq its line spells, exactly (`text`, a JSON number's text): a
    /// seq no `u64` holds was read as a double, which is not the number written.
    pub fn set_exact_seq(&mut self, n: u32, text: &str) {
        if self.seq(n).is_none()
            && let Some(seq) = SeqNumber::of_text(text)
        {
            self.other_seqs.insert(n, seq);
        }
    }

    /// The type of record `n`, when it has one.
    pub fn kind(&self, n: u32) -> Option<&str> {
        let k = match self.kinds.get(n as usize) {
            Some(&NO_KIND) | None => return None,
            Some(&MORE_KINDS) => self.more_kinds.get(&n).copied()?,
            Some(&code) => u32::from(code) - 1,
        };
        self.kind_names.get(k as usize).map(|k| &**k)
    }

    fn kind_number(&mut self, kind: &str) -> u32 {
        // A stream has a handful of types: a scan of so few costs less than a hash, and the
        // map is filled only once there are more (many types, all made up, are rare).
        let known = if self.kind_names.len() <= FEW_KINDS {
            self.kind_names.iter().position(|name| **name == *kind)
        } else {
            self.kind_numbers.get(kind).map(|&k| k as usize)
        };
        if let Some(k) = known {
            return u32::try_from(k).unwrap_or(u32::MAX - 1);
        }
        let k = u32::try_from(self.kind_names.len()).unwrap_or(u32::MAX - 1);
        self.kind_names.push(kind.into());
        if self.kind_names.len() > FEW_KINDS {
            if self.kind_numbers.is_empty() {
                self.kind_numbers = (0..)
                    .zip(&self.kind_names)
                    .map(|(n, name)| (name.clone(), n))
                    .collect();
            } else {
                self.kind_numbers.insert(kind.into(), k);
            }
        }
        k
    }

    fn native_hash(&self, key: &str, value: &str) -> u64 {
        let mut hasher = self.hasher.build_hasher();
        hasher.write(key.as_bytes());
        hasher.write(b"=");
        hasher.write(value.as_bytes());
        hasher.finish()
    }
}

/// Records by the hash of a native id: for each native id, its hash (8 bytes), its last
/// occurrence (4) and a slot in the index (between 5 and 11); for each occurrence, the
/// record (4) and the occurrence before it (4).
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn add(index: &mut RecordIndex, value: &Value, line: usize) -> Added {
        index.add(&Record::new(value.as_object().expect("an object")), line)
    }

    #[test]
    fn records_are_found_by_id_and_native_id_in_stream_order() {
        let mut index = RecordIndex::default();
        let records = [
            json!({"type":"session","seq":0,"id":"h"}),
            json!({"type":"message","seq":1,"id":"r1","messageId":"m"}),
            json!({"type":"message","seq":2,"id":"r2","messageId":"m","callId":"c"}),
            json!({"type":"tool_call","id":"r3","callId":"c"}),
        ];
        for (n, record) in records.iter().enumerate() {
            assert_eq!(
                add(&mut index, record, n + 1),
                Added::New(u32::try_from(n).expect("small"))
            );
        }
        assert_eq!(index.resolve("messageId=m"), [1, 2]);
        assert_eq!(index.resolve("callId=c"), [2, 3]);
        assert_eq!(index.resolve("r3"), [3]);
        assert!(index.resolve("messageId=r1").is_empty());
        assert!(index.resolve("nativeKey=m").is_empty());
        assert_eq!(index.resolve_before("messageId=m", Some(2)), Some(1));
        assert_eq!(index.resolve_before("messageId=m", None), Some(2));
        assert_eq!(index.resolve_before("r3", Some(3)), None);
        assert_eq!(
            (index.line(3), index.seq(3), index.kind(3), index.seq(0)),
            (4, None, Some("tool_call"), Some(0))
        );
    }

    #[test]
    fn the_first_record_keeps_a_repeated_id_and_records_without_one_are_not_indexed() {
        let mut index = RecordIndex::default();
        assert_eq!(
            add(&mut index, &json!({"id":"a","messageId":"m"}), 1),
            Added::New(0)
        );
        assert_eq!(
            add(&mut index, &json!({"id":"a","messageId":"n"}), 2),
            Added::Repeated(0)
        );
        assert_eq!(add(&mut index, &json!({"messageId":"m"}), 3), Added::NoId);
        assert!(index.resolve("messageId=n").is_empty());
        assert_eq!(index.resolve("messageId=m"), [0]);
        assert_eq!((index.len(), index.kind(0)), (1, None));
    }

    #[test]
    fn types_past_a_byte_keep_their_names() {
        let mut index = RecordIndex::default();
        for n in 0..600 {
            add(
                &mut index,
                &json!({"id": format!("r{n}"), "type": format!("t{n}")}),
                n + 1,
            );
        }
        // Types seen before, found among few and among many.
        for (at, n) in (600u32..).zip([3u32, 15, 16, 17, 253, 254, 599]) {
            add(
                &mut index,
                &json!({"id": format!("again{n}"), "type": format!("t{n}")}),
                at as usize + 1,
            );
            assert_eq!(index.kind(at), Some(format!("t{n}").as_str()));
        }
        for n in [0u32, 253, 254, 255, 599] {
            assert_eq!(index.kind(n), Some(format!("t{n}").as_str()));
        }
        assert_eq!(index.kind_names.len(), 600);
        let mut few = RecordIndex::default();
        for n in 0..40 {
            let kind = format!("t{}", n % 4);
            add(
                &mut few,
                &json!({"id": format!("r{n}"), "type": kind}),
                n + 1,
            );
        }
        assert_eq!((few.kind_names.len(), few.kind(37)), (4, Some("t1")));
    }
}
