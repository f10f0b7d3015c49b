//! The header first and once (ASR-X-007), seq rising (ASR-X-008), ids unique (ASR-X-009).

use super::{Out, State};
use crate::check::{Finding, Place};
use crate::compact::MAX_RECORDS;
use crate::model::{Added, Record, Standing};
use crate::rule;

impl State {
    pub(super) fn header_order(&mut self, standing: Standing, kind: Option<&str>, out: &mut Out) {
        match standing {
            Standing::SecondHeader { header_line } => out.push((
                Finding::error(
                    rule::ASR_X_007,
                    "/type",
                    format!(
                        "a second session line; the header is at line {header_line}, and this line is a record \
                         like any other"
                    ),
                ),
                None,
            )),
            Standing::Record {
                first_is_not_header: true,
            } => {
                self.first_not_header_reported = true;
                out.push((
                    Finding::error(
                        rule::ASR_X_007,
                        "/type",
                        format!(
                            "the first record is of type {:?}; the stream must start with its session header",
                            kind.unwrap_or("")
                        ),
                    ),
                    None,
                ));
            }
            Standing::Header | Standing::Record { .. } => {}
        }
    }

    pub(super) fn seq_order(&mut self, place: &Place, record: &Record<'_>, out: &mut Out) {
        let Some(value) = record.seq_value else {
            return;
        };
        let Some(seq) = record.seq else {
            // The schema reports fractions and negatives; an integral value that is still no
            // u64 (1e23, 5.0) would pass it.
            if value.as_f64().is_some_and(|v| v.fract() == 0.0 && v >= 0.0) {
                out.push((
                    Finding::error(
                        rule::ASR_X_008,
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
                        rule::ASR_X_008,
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

    /// Indexes the record by id and native id, with the plan or delegation it belongs to.
    pub(super) fn index(
        &mut self,
        place: &Place,
        record: &Record<'_>,
        group: Option<usize>,
        out: &mut Out,
    ) {
        match self.index.add(record, place.line) {
            Added::NoId => {}
            Added::Repeated(first) => out.push((
                Finding::error(
                    rule::ASR_X_009,
                    "/id",
                    format!(
                        "id {:?} is already the id of the record at line {}",
                        record.id.unwrap_or(""),
                        self.index.line(first)
                    ),
                ),
                None,
            )),
            Added::Full => {
                if !self.records_full {
                    self.records_full = true;
                    out.push((
                        Finding::error(
                            rule::ASR_X_006,
                            "/id",
                            format!(
                                "the stream has more than {MAX_RECORDS} records with an id, the most the kit indexes; \
                                 later ones are not indexed, and references to them do not resolve"
                            ),
                        ),
                        None,
                    ));
                }
            }
            Added::New(n) => {
                if let Some(group) = group {
                    self.groups.insert(n, group);
                }
                if let Some(outline) = &mut self.outline {
                    outline.records.push((
                        place.line,
                        record.id.unwrap_or("").to_owned(),
                        record.seq,
                    ));
                }
            }
        }
    }

    /// ASR-X-007: a stream with no header at all.
    pub(super) fn missing_header(&self, lines: usize, out: &mut Out) {
        if self.layout.header_line().is_some() || self.first_not_header_reported {
            return;
        }
        let message = if lines == 0 {
            "the stream is empty; it must start with its session header"
        } else {
            "the stream has no session header"
        };
        out.push((
            Finding::error(rule::ASR_X_007, "", message),
            Some(Place {
                line: 1,
                ..Place::default()
            }),
        ));
    }
}
