//! Reading a stream line by line with a bound on the bytes kept for one line.

use std::io::{self, BufRead};

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

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
