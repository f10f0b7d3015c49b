//! How an implementation placed a stream: the header, the records, what each reference
//! resolved to, the sessions named. The checker and the reference reader each give theirs
//! ([`crate::check::outline`], [`crate::reading::outline`]), so that a test can demand they
//! agree on every stream.

use std::collections::BTreeSet;

/// How a stream was placed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Outline {
    /// The header's line.
    pub header: Option<usize>,
    /// Every record with an id, the first of each id (the header included): line, id, seq.
    pub records: Vec<(usize, String, Option<u64>)>,
    /// The references of records, sorted: the record's line, the member's pointer, and
    /// the lines of the records it names (`supersedes`: the latest earlier record it names;
    /// a delivery's `message`: every record it names; `inherits.localThroughId`: the record
    /// with that id).
    pub references: Vec<(usize, String, Vec<usize>)>,
    /// The sessions the stream names, canonical, other than its own.
    pub sessions: BTreeSet<String>,
}

impl Outline {
    /// The references made by a record of the outline (a line that holds the first record
    /// of its id), the only ones two implementations must agree on: what a line that is no
    /// record references is nobody's business.
    pub fn record_references(&self) -> Vec<&(usize, String, Vec<usize>)> {
        let lines: BTreeSet<usize> = self.records.iter().map(|(line, ..)| *line).collect();
        self.references
            .iter()
            .filter(|(line, ..)| lines.contains(line))
            .collect()
    }
}
