//! Reading a stream line by line with a bound on the bytes kept for one line.

use std::io::{self, BufRead};

/// The buffer a stream is read through. Small enough that a stream of a few lines costs no
/// large allocation (a large one is mapped and unmapped by most allocators, and the memory
/// given back to the system is faulted in again for the next stream); large enough that a
/// big stream costs one read in many lines.
pub const READ_BUFFER: usize = 64 << 10;

/// One line of a stream, without its `\n`.
#[derive(Debug)]
pub enum Line<'a> {
    /// A line within the limit.
    Text {
        /// 1-based line number.
        number: usize,
        /// The bytes, a `\r` before the `\n` included.
        bytes: &'a [u8],
        /// Whether a `\n` ended it (false only for the last line).
        newline: bool,
    },
    /// A line longer than the limit: read through and dropped, never kept whole.
    TooLong {
        /// 1-based line number.
        number: usize,
        /// Its length in bytes.
        len: u64,
        /// Whether a `\n` ended it.
        newline: bool,
    },
}

/// Yields the lines of a reader, keeping at most `max` bytes of one line in memory.
#[non_exhaustive]
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    number: usize,
    max: usize,
}

impl<R: BufRead> LineReader<R> {
    /// Reads from `inner`; a line longer than `max` bytes is reported, not kept.
    pub fn new(inner: R, max: usize) -> Self {
        LineReader {
            inner,
            buf: Vec::new(),
            number: 0,
            max,
        }
    }

    /// The next line, or `None` at the end of the stream.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        self.buf.clear();
        let mut len: u64 = 0;
        let mut too_long = false;
        loop {
            let available = match self.inner.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                if len == 0 {
                    return Ok(None);
                }
                return Ok(Some(self.finish(len, too_long, false)));
            }
            let (chunk, found) = match memchr::memchr(b'\n', available) {
                Some(at) => (&available[..at], true),
                None => (available, false),
            };
            let chunk_len = chunk.len();
            len += chunk_len as u64;
            if !too_long && self.buf.len() + chunk_len > self.max {
                too_long = true;
                self.buf = Vec::new();
            }
            if !too_long {
                self.buf.extend_from_slice(chunk);
            }
            self.inner.consume(chunk_len + usize::from(found));
            if found {
                return Ok(Some(self.finish(len + 1, too_long, true)));
            }
        }
    }

    fn finish(&mut self, len: u64, too_long: bool, newline: bool) -> Line<'_> {
        self.number += 1;
        if too_long {
            Line::TooLong {
                number: self.number,
                len: len - u64::from(newline),
                newline,
            }
        } else {
            Line::Text {
                number: self.number,
                bytes: &self.buf,
                newline,
            }
        }
    }
}

/// The lines of a stream held in memory, as [`LineReader`] reads them (a line longer than
/// `max` is [`Line::TooLong`]), each borrowed from the stream instead of copied.
pub fn lines_in(bytes: &[u8], max: usize) -> InMemory<'_> {
    InMemory {
        split: split(bytes),
        max,
    }
}

/// The lines of a stream held in memory: see [`lines_in`].
#[derive(Debug, Clone)]
pub struct InMemory<'a> {
    split: Split<'a>,
    max: usize,
}

impl<'a> Iterator for InMemory<'a> {
    type Item = Line<'a>;

    fn next(&mut self) -> Option<Line<'a>> {
        let (number, line) = self.split.next()?;
        // Only a last piece with no `\n` after it leaves nothing to split.
        let newline = self.split.rest.is_some();
        Some(if line.len() > self.max {
            Line::TooLong {
                number,
                len: line.len() as u64,
                newline,
            }
        } else {
            Line::Text {
                number,
                bytes: line,
                newline,
            }
        })
    }
}

/// The first line without its UTF-8 byte order mark, when it starts with one: JSON text must
/// not have one (RFC 8259), yet a parser may ignore it, and the kit reads past it (reporting
/// it, where it checks).
pub fn without_bom(number: usize, bytes: &[u8]) -> Option<&[u8]> {
    if number == 1 {
        bytes.strip_prefix(b"\xEF\xBB\xBF")
    } else {
        None
    }
}

/// The lines of a stream held in memory, each as its 1-based number and its bytes (without
/// the `\n`, a `\r` before it kept), borrowed from the stream: the lines [`LineReader`]
/// reads, without a bound. A final line without `\n` is a line; after a final `\n` there is
/// none, unless [`Split::with_final_empty`] asks for the empty piece there.
pub fn split(bytes: &[u8]) -> Split<'_> {
    Split {
        rest: Some(bytes),
        number: 0,
        final_empty: false,
    }
}

/// The lines of a stream in memory: see [`split`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Split<'a> {
    /// What is not yet split; `None` once the last piece is out.
    rest: Option<&'a [u8]>,
    number: usize,
    final_empty: bool,
}

impl<'a> Split<'a> {
    /// Also yields the empty piece after a final `\n` (and the one empty piece of an empty
    /// stream): every piece between `\n`s, for a caller that indexes lines the way a
    /// splitter at each `\n` numbers them, or joins them back byte for byte.
    #[must_use]
    pub fn with_final_empty(mut self) -> Self {
        self.final_empty = true;
        self
    }

    /// Only the bytes of each line, in order.
    pub fn bytes(self) -> impl Iterator<Item = &'a [u8]> {
        self.map(|(_, line)| line)
    }
}

impl<'a> Iterator for Split<'a> {
    type Item = (usize, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.rest?;
        let line = if let Some(at) = memchr::memchr(b'\n', rest) {
            self.rest = Some(&rest[at + 1..]);
            &rest[..at]
        } else {
            self.rest = None;
            if rest.is_empty() && !self.final_empty {
                return None;
            }
            rest
        };
        self.number += 1;
        Some((self.number, line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    /// Lines read in memory are the lines the reader reads, whatever the bound and the
    /// line ends.
    #[test]
    fn lines_in_memory_are_the_lines_read() {
        let inputs: [&[u8]; 9] = [
            b"",
            b"\n",
            b"\n\n",
            b"a",
            b"a\n",
            b"ab\r\ncd",
            b"abc\n\nde\r\n",
            b"12345\n123456\n1234\n\n1234567",
            b"\xef\xbb\xbf{}\n{\"a\":1}\r\n",
        ];
        let show = |line: Line<'_>| match line {
            Line::Text {
                number,
                bytes,
                newline,
            } => format!("{number}:{}:{newline}", String::from_utf8_lossy(bytes)),
            Line::TooLong {
                number,
                len,
                newline,
            } => format!("{number}:LONG {len}:{newline}"),
        };
        for input in inputs {
            for max in 0..9 {
                let read = collect(input, max, 3);
                let in_memory: Vec<String> = lines_in(input, max).map(show).collect();
                assert_eq!(in_memory, read, "{input:?} at most {max}");
            }
        }
    }

    fn collect(input: &[u8], max: usize, capacity: usize) -> Vec<String> {
        let mut reader = LineReader::new(BufReader::with_capacity(capacity, input), max);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().expect("in-memory read") {
            out.push(match line {
                Line::Text {
                    number,
                    bytes,
                    newline,
                } => {
                    format!("{number}:{}:{newline}", String::from_utf8_lossy(bytes))
                }
                Line::TooLong {
                    number,
                    len,
                    newline,
                } => format!("{number}:LONG {len}:{newline}"),
            });
        }
        out
    }

    #[test]
    fn splits_on_lf_and_keeps_cr_and_a_missing_final_newline() {
        assert_eq!(
            collect(b"a\r\nbb\n\nc", 100, 3),
            ["1:a\r:true", "2:bb:true", "3::true", "4:c:false"]
        );
        assert!(collect(b"", 100, 8).is_empty());
        assert_eq!(collect(b"\n", 100, 8), ["1::true"]);
    }

    fn pieces(split: Split<'_>) -> Vec<String> {
        split
            .map(|(n, line)| format!("{n}:{}", String::from_utf8_lossy(line)))
            .collect()
    }

    #[test]
    fn the_split_in_memory_gives_the_lines_the_reader_reads() {
        for input in [&b"a\r\nbb\n\nc"[..], b"a\n", b"", b"\n", b"\n\n", b"x\r"] {
            let read: Vec<String> = collect(input, 100, 3)
                .iter()
                .map(|l| l.rsplit_once(':').map_or(l.clone(), |(l, _)| l.to_owned()))
                .collect();
            assert_eq!(pieces(split(input)), read, "{input:?}");
        }
        // A final line without `\n` is a line; a `\r` stays.
        assert_eq!(pieces(split(b"a\r\nb")), ["1:a\r", "2:b"]);
    }

    #[test]
    fn the_empty_piece_after_a_final_newline_is_there_when_asked_for() {
        assert_eq!(pieces(split(b"a\n")), ["1:a"]);
        assert_eq!(pieces(split(b"a\n").with_final_empty()), ["1:a", "2:"]);
        assert_eq!(pieces(split(b"a").with_final_empty()), ["1:a"]);
        assert!(pieces(split(b"")).is_empty());
        assert_eq!(pieces(split(b"").with_final_empty()), ["1:"]);
        // Every piece between `\n`s, as a split at each one gives them.
        for input in [&b"a\n\nb\n"[..], b"", b"\n", b"x", b"\r\n\r"] {
            let at_each: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
            let ours: Vec<&[u8]> = split(input).with_final_empty().bytes().collect();
            assert_eq!(ours, at_each, "{input:?}");
        }
    }

    #[test]
    fn a_line_over_the_limit_is_counted_not_kept_and_reading_goes_on() {
        let mut input = vec![b'x'; 50];
        input.extend_from_slice(b"\nok\n");
        input.extend_from_slice(&[b'y'; 11]);
        assert_eq!(
            collect(&input, 10, 4),
            ["1:LONG 50:true", "2:ok:true", "3:LONG 11:false"]
        );
        assert_eq!(collect(b"0123456789\n", 10, 4), ["1:0123456789:true"]);
    }
}
