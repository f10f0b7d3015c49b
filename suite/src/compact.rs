//! Compact storage for facts kept about every record of a stream, so that memory grows by a
//! few bytes a record: ids in one arena, numbers that only grow in 32 bits each, and a hash
//! index of record numbers that holds no key of its own.

use foldhash::quality::RandomState;
use std::hash::{BuildHasher, Hasher};

/// The most records a stream may have in these structures: record numbers are `u32`, and
/// `u32::MAX` marks an empty slot.
pub(crate) const MAX_RECORDS: usize = u32::MAX as usize - 1;

/// A number that never decreases, pushed in order and kept in 4 bytes: the high half is
/// stored once each time it changes. Line numbers and byte offsets of successive records
/// are such numbers.
#[derive(Debug, Default)]
pub(crate) struct Rising {
    low: Vec<u32>,
    /// `(first index, high half)`, each time the high half changes.
    high: Vec<(u32, u32)>,
}

impl Rising {
    /// Appends `value`, which must not be lower than the last one pushed.
    pub(crate) fn push(&mut self, value: u64) {
        let high = u32::try_from(value >> 32).unwrap_or(u32::MAX);
        let current = self.high.last().map_or(0, |&(_, h)| h);
        if high != current {
            self.high
                .push((u32::try_from(self.low.len()).unwrap_or(u32::MAX), high));
        }
        self.low.push(low_half(value));
    }

    /// Room for `more` values.
    pub(crate) fn reserve(&mut self, more: usize) {
        self.low.reserve(more);
    }

    /// The value at `index`.
    pub(crate) fn get(&self, index: usize) -> u64 {
        let Some(&low) = self.low.get(index) else {
            return 0;
        };
        let at = self
            .high
            .partition_point(|&(first, _)| first as usize <= index);
        let high = at.checked_sub(1).map_or(0, |i| self.high[i].1);
        (u64::from(high) << 32) | u64::from(low)
    }

    /// How many values.
    pub(crate) fn len(&self) -> usize {
        self.low.len()
    }
}

/// Strings one after the other in one buffer; the `n`th is found through its start.
#[derive(Debug, Default)]
pub(crate) struct Strings {
    bytes: Vec<u8>,
    starts: Rising,
}

impl Strings {
    /// Appends a string and returns its number.
    pub(crate) fn push(&mut self, text: &[u8]) -> usize {
        self.starts.push(self.bytes.len() as u64);
        self.bytes.extend_from_slice(text);
        self.starts.len() - 1
    }

    /// Room for `more` strings of `bytes` bytes in all.
    pub(crate) fn reserve(&mut self, more: usize, bytes: usize) {
        self.starts.reserve(more);
        self.bytes.reserve(bytes);
    }

    /// The `n`th string (empty when there is none).
    pub(crate) fn get(&self, n: usize) -> &[u8] {
        if n >= self.starts.len() {
            return &[];
        }
        let start = usize::try_from(self.starts.get(n)).unwrap_or(usize::MAX);
        let end = if n + 1 < self.starts.len() {
            usize::try_from(self.starts.get(n + 1)).unwrap_or(usize::MAX)
        } else {
            self.bytes.len()
        };
        self.bytes.get(start..end).unwrap_or(&[])
    }

    /// The `n`th string as text; strings are pushed as UTF-8, so this is empty only for a
    /// string that is not there.
    pub(crate) fn text(&self, n: usize) -> &str {
        std::str::from_utf8(self.get(n)).unwrap_or("")
    }

    /// How many strings.
    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }
}

/// An open-addressing hash index of record numbers. It holds no keys: the caller says how
/// to hash a number it holds and whether a number is the one looked for, so each entry
/// costs 5 bytes a slot (between 6 and 14 bytes an entry with the load kept under 3/4): the
/// number, and 8 bits of its hash, so that a probe past another key rarely asks the caller
/// to compare keys.
#[derive(Debug, Default)]
pub(crate) struct Index {
    slots: Vec<u32>,
    tags: Vec<u8>,
    len: usize,
    state: RandomState,
}

const EMPTY: u32 = u32::MAX;

impl Index {
    /// The hash of a key, keyed randomly per index so that a stream cannot aim for
    /// collisions: it is written before the key exists, and foldhash has no inputs that
    /// collide under every key (it does not hold against one who watches the hashes, which
    /// a stream cannot). The keys are compared whole: a collision costs a probe, never a
    /// wrong answer.
    pub(crate) fn hash(&self, key: &[u8]) -> u64 {
        let mut hasher = self.state.build_hasher();
        hasher.write(key);
        hasher.finish()
    }

    /// The number whose key hashes to `hash` and for which `is` holds.
    pub(crate) fn find(&self, hash: u64, mut is: impl FnMut(u32) -> bool) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut at = slot_of(hash, mask);
        let tag = tag_of(hash);
        loop {
            let value = self.slots[at];
            if value == EMPTY {
                return None;
            }
            if self.tags[at] == tag && is(value) {
                return Some(value);
            }
            at = (at + 1) & mask;
        }
    }

    /// Adds `value` under `hash`; `rehash` gives the hash of a number already held, for
    /// when the index grows.
    pub(crate) fn insert(&mut self, hash: u64, value: u32, rehash: impl Fn(u32) -> u64) {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow(&rehash);
        }
        let mask = self.slots.len() - 1;
        let mut at = slot_of(hash, mask);
        while self.slots[at] != EMPTY {
            at = (at + 1) & mask;
        }
        self.slots[at] = value;
        self.tags[at] = tag_of(hash);
        self.len += 1;
    }

    fn grow(&mut self, rehash: &impl Fn(u32) -> u64) {
        let size = (self.slots.len() * 2).max(16);
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; size]);
        self.tags = vec![0; size];
        let mask = size - 1;
        for value in old.into_iter().filter(|&v| v != EMPTY) {
            let hash = rehash(value);
            let mut at = slot_of(hash, mask);
            while self.slots[at] != EMPTY {
                at = (at + 1) & mask;
            }
            self.slots[at] = value;
            self.tags[at] = tag_of(hash);
        }
    }
}

/// Record ids: each id once, numbered in the order first seen, found by its text.
#[derive(Debug, Default)]
pub(crate) struct Ids {
    strings: Strings,
    index: Index,
}

impl Ids {
    /// The number of an id, when it is known.
    pub(crate) fn find(&self, id: &[u8]) -> Option<u32> {
        let hash = self.index.hash(id);
        self.index
            .find(hash, |n| self.strings.get(n as usize) == id)
    }

    /// Room for `more` ids of `bytes` bytes in all.
    pub(crate) fn reserve(&mut self, more: usize, bytes: usize) {
        self.strings.reserve(more, bytes);
    }

    /// Adds an id not yet known and returns its number; `None` when there are
    /// [`MAX_RECORDS`] already.
    pub(crate) fn add(&mut self, id: &[u8]) -> Option<u32> {
        if self.strings.len() >= MAX_RECORDS {
            return None;
        }
        let hash = self.index.hash(id);
        let n = u32::try_from(self.strings.push(id)).ok()?;
        let Ids { strings, index } = self;
        let state = &index.state.clone();
        index.insert(hash, n, |held| {
            let mut hasher = state.build_hasher();
            hasher.write(strings.get(held as usize));
            hasher.finish()
        });
        Some(n)
    }

    /// The text of id number `n`.
    pub(crate) fn text(&self, n: u32) -> &str {
        self.strings.text(n as usize)
    }
}

fn slot_of(hash: u64, mask: usize) -> usize {
    // The mask keeps the value below the slot count, which fits a usize.
    usize::try_from(hash & mask as u64).unwrap_or(0)
}

/// The top 8 bits of a hash: the slot comes from the low bits.
fn tag_of(hash: u64) -> u8 {
    hash.to_be_bytes()[0]
}

fn low_half(value: u64) -> u32 {
    u32::try_from(value & u64::from(u32::MAX)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rising_numbers_keep_their_high_half() {
        let mut r = Rising::default();
        let values = [
            0,
            5,
            u64::from(u32::MAX),
            1 << 32,
            (1 << 32) + 7,
            9 << 33,
            9 << 33,
        ];
        for v in values {
            r.push(v);
        }
        let back: Vec<u64> = (0..values.len()).map(|i| r.get(i)).collect();
        assert_eq!(back, values);
        assert_eq!(r.get(99), 0);
    }

    #[test]
    fn strings_come_back_by_number() {
        let mut s = Strings::default();
        assert_eq!(s.push(b"r1"), 0);
        assert_eq!(s.push(b""), 1);
        assert_eq!(s.push("é".as_bytes()), 2);
        assert_eq!(
            (s.get(0), s.get(1), s.text(2), s.get(3)),
            (&b"r1"[..], &b""[..], "é", &b""[..])
        );
    }

    #[test]
    fn ids_are_found_by_their_text_through_growth() {
        let mut ids = Ids::default();
        for n in 0..10_000u32 {
            assert_eq!(ids.add(format!("r{n}").as_bytes()), Some(n));
        }
        for n in (0..10_000u32).step_by(7) {
            assert_eq!(ids.find(format!("r{n}").as_bytes()), Some(n));
        }
        assert_eq!(ids.find(b"r10000"), None);
        assert_eq!(ids.find(b""), None);
        assert_eq!(ids.text(42), "r42");
    }
}
