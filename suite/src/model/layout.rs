//! Which line of a stream is its header, and which are records.

use serde_json::{Map, Value};

/// Where a record stands in the stream's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Standing {
    /// The header: the first `session` record (the first line, when the stream is right).
    Header,
    /// A `session` record after the header: a record like any other (ASR-X-007).
    SecondHeader {
        /// The header's line.
        header_line: usize,
    },
    /// Any other record.
    Record {
        /// It is the stream's first record, and not its header (ASR-X-007).
        first_is_not_header: bool,
    },
}

/// Follows the records of a stream to tell the header from the records. The header is the
/// first record of type `session`; a stream whose first record is another is wrong, and a
/// `session` record after it still serves as the header, so that what it declares counts.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Layout {
    records: usize,
    header_line: Option<usize>,
}

impl Layout {
    /// The standing of the next record (every line that is a JSON object is one), at `line`.
    pub fn stand(&mut self, line: usize, kind: Option<&str>) -> Standing {
        self.records += 1;
        let first = self.records == 1;
        if kind == Some("session") {
            if let Some(header_line) = self.header_line {
                return Standing::SecondHeader { header_line };
            }
            self.header_line = Some(line);
            return Standing::Header;
        }
        Standing::Record {
            first_is_not_header: first,
        }
    }

    /// The header's line, once there is one.
    pub fn header_line(&self) -> Option<usize> {
        self.header_line
    }

    /// How many records were placed, the header included.
    pub fn records(&self) -> usize {
        self.records
    }
}

/// The lines of a stream held in memory that are JSON objects to `serde_json`, each with its
/// line number and its standing in the stream's [`Layout`] (a line of white space, or one
/// that is JSON but no object, is no record; a line that is not JSON is [`Placed::unread`]).
pub fn placed(bytes: &[u8]) -> Placed<'_> {
    Placed {
        lines: crate::lines::split(bytes),
        layout: Layout::default(),
        unread: false,
    }
}

/// The records of a stream in memory, placed: see [`placed`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Placed<'a> {
    lines: crate::lines::Split<'a>,
    layout: Layout,
    unread: bool,
}

impl Placed<'_> {
    /// Some line so far is not JSON to `serde_json` (deeper than it reads, a number beyond
    /// a double, a lone surrogate, or no JSON at all).
    pub fn unread(&self) -> bool {
        self.unread
    }
}

impl Iterator for Placed<'_> {
    type Item = (usize, Map<String, Value>, Standing);

    fn next(&mut self) -> Option<Self::Item> {
        for (number, line) in self.lines.by_ref() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Value>(line) {
                Ok(Value::Object(object)) => {
                    let kind = object.get("type").and_then(Value::as_str);
                    let standing = self.layout.stand(number, kind);
                    return Some((number, object, standing));
                }
                Ok(_) => {}
                Err(_) => self.unread = true,
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_session_record_is_the_header_and_any_later_one_a_record() {
        let mut layout = Layout::default();
        assert_eq!(layout.stand(1, Some("session")), Standing::Header);
        assert_eq!(
            layout.stand(2, Some("message")),
            Standing::Record {
                first_is_not_header: false
            }
        );
        assert_eq!(
            layout.stand(5, Some("session")),
            Standing::SecondHeader { header_line: 1 }
        );
        assert_eq!(layout.header_line(), Some(1));
    }

    #[test]
    fn a_stream_that_does_not_start_with_its_header_is_told_so_once() {
        let mut layout = Layout::default();
        assert_eq!(
            layout.stand(1, None),
            Standing::Record {
                first_is_not_header: true
            }
        );
        assert_eq!(
            layout.stand(2, Some("message")),
            Standing::Record {
                first_is_not_header: false
            }
        );
        assert_eq!(layout.stand(3, Some("session")), Standing::Header);
        assert_eq!(layout.header_line(), Some(3));
        assert_eq!(layout.records(), 3);
    }

    #[test]
    fn the_records_of_a_stream_in_memory_are_placed_by_their_lines() {
        let stream =
            b"{\"type\":\"message\"}\n  \n7\n{\"type\":\"session\"}\n{bad\n{\"type\":\"session\"}";
        let mut records = placed(stream);
        let standings: Vec<(usize, Standing)> = records
            .by_ref()
            .map(|(n, _, standing)| (n, standing))
            .collect();
        assert_eq!(
            standings,
            [
                (
                    1,
                    Standing::Record {
                        first_is_not_header: true
                    }
                ),
                (4, Standing::Header),
                (6, Standing::SecondHeader { header_line: 4 }),
            ]
        );
        assert!(records.unread());
        assert!(!placed(b"{}\n\n").unread());
    }
}
