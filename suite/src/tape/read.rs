//! The tape's own reader of a line: it accepts a subset of what serde_json accepts, and
//! reads what it accepts into the values serde_json would (its numbers other than small
//! integers are serde_json's own reading of the number's text). Whatever it does not accept
//! (not UTF-8, not JSON, deeper than [`DEPTH`], a number serde_json would not read as
//! finite, a lone surrogate escape) is left to the full path, which words the finding.
//!
//! It is a reader of its own rather than serde_json's deserializer with a visitor because
//! that costs a UTF-8 check per string and a call per token through serde's layers; here the
//! line is checked as UTF-8 once and each string is found with a scan eight bytes at a time.

use super::{Item, Members, Node};
use serde_json::Number;
use std::borrow::Cow;

/// The deepest nesting read here (serde_json's own default limit).
const DEPTH: u32 = 128;

/// The line's nodes, when it is one JSON value this reader accepts.
pub(super) fn read(line: &[u8]) -> Option<Vec<Item<'_>>> {
    let text = std::str::from_utf8(line).ok()?;
    let mut reader = Reader {
        text,
        bytes: line,
        at: 0,
        depth: 0,
        nodes: super::spare_nodes(line.len() / 8),
    };
    reader.value()?;
    reader.blank();
    (reader.at == line.len()).then_some(reader.nodes)
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    depth: u32,
    nodes: Vec<Item<'a>>,
}

impl<'a> Reader<'a> {
    /// Skips JSON whitespace.
    fn blank(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn value(&mut self) -> Option<()> {
        self.blank();
        match *self.bytes.get(self.at)? {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => {
                let text = self.string()?;
                self.nodes.push(Item::String(text));
                Some(())
            }
            b't' => self.literal("true", Item::Bool(true)),
            b'f' => self.literal("false", Item::Bool(false)),
            b'n' => self.literal("null", Item::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &str, item: Item<'a>) -> Option<()> {
        if !self.bytes[self.at..].starts_with(word.as_bytes()) {
            return None;
        }
        self.at += word.len();
        self.nodes.push(item);
        Some(())
    }

    /// Opens a container: one level deeper, and its node, to be completed by [`Self::close`].
    fn open(&mut self, item: Item<'a>) -> Option<usize> {
        self.depth += 1;
        if self.depth > DEPTH {
            return None;
        }
        self.at += 1;
        self.nodes.push(item);
        Some(self.nodes.len() - 1)
    }

    fn close(&mut self, start: usize, len: u32, object: bool) -> Option<()> {
        self.depth -= 1;
        self.at += 1;
        let end = u32::try_from(self.nodes.len()).ok()?;
        if !object {
            self.nodes[start] = Item::Array { end, len };
            return Some(());
        }
        self.nodes[start] = Item::Object { end, len };
        let members = Members {
            node: Node {
                nodes: &self.nodes,
                at: u32::try_from(start).ok()?,
            },
            end,
            len,
        };
        // A Value keeps the last of a name; the full path reads it so, and says so.
        (!super::twice(members)).then_some(())
    }

    fn array(&mut self) -> Option<()> {
        let start = self.open(Item::Array { end: 0, len: 0 })?;
        let len = self.items(b']', Self::value)?;
        self.close(start, len, false)
    }

    fn object(&mut self) -> Option<()> {
        let start = self.open(Item::Object { end: 0, len: 0 })?;
        let len = self.items(b'}', Self::member)?;
        self.close(start, len, true)
    }

    /// The items of a container up to the byte that closes it, each read by `item`; how
    /// many there are. `at` is left on the closing byte.
    fn items(&mut self, closing: u8, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<u32> {
        self.blank();
        let mut len = 0u32;
        if self.bytes.get(self.at) == Some(&closing) {
            return Some(len);
        }
        loop {
            item(self)?;
            len += 1;
            self.blank();
            match *self.bytes.get(self.at)? {
                b',' => self.at += 1,
                byte if byte == closing => return Some(len),
                _ => return None,
            }
        }
    }

    /// An object's member: its name, a colon, its value.
    fn member(&mut self) -> Option<()> {
        self.blank();
        if self.bytes.get(self.at) != Some(&b'"') {
            return None;
        }
        let name = self.string()?;
        self.nodes.push(Item::String(name));
        self.blank();
        if self.bytes.get(self.at) != Some(&b':') {
            return None;
        }
        self.at += 1;
        self.value()
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`; an integer of at most 18 digits
    /// (but `-0`, which serde_json reads as a float) is read here, any other number by
    /// serde_json from its text, so that it is the same `Number`.
    fn number(&mut self) -> Option<()> {
        let bytes = self.bytes;
        let start = self.at;
        let digits = |mut at: usize| {
            while bytes.get(at).is_some_and(u8::is_ascii_digit) {
                at += 1;
            }
            at
        };
        let negative = bytes[start] == b'-';
        let first = start + usize::from(negative);
        let mut at = match bytes.get(first)? {
            b'0' => first + 1,
            b'1'..=b'9' => digits(first + 1),
            _ => return None,
        };
        let integer_end = at;
        if bytes.get(at) == Some(&b'.') {
            let end = digits(at + 1);
            if end == at + 1 {
                return None;
            }
            at = end;
        }
        if let Some(b'e' | b'E') = bytes.get(at) {
            at += 1;
            if let Some(b'+' | b'-') = bytes.get(at) {
                at += 1;
            }
            let end = digits(at);
            if end == at {
                return None;
            }
            at = end;
        }
        self.at = at;
        let integer = &bytes[first..integer_end];
        let number = if at == integer_end && integer.len() <= 18 && !(negative && integer == b"0") {
            let magnitude = integer
                .iter()
                .fold(0u64, |n, digit| n * 10 + u64::from(digit - b'0'));
            if negative {
                // 18 digits are below 2^63: the magnitude is an i64.
                Number::from(-i64::try_from(magnitude).ok()?)
            } else {
                Number::from(magnitude)
            }
        } else {
            serde_json::from_str::<Number>(&self.text[start..at]).ok()?
        };
        self.nodes.push(Item::Number(number));
        Some(())
    }

    /// The string that starts at the quote under `at`; `at` is left past its closing quote.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let start = self.at + 1;
        let at = special(self.bytes, start)?;
        match self.bytes[at] {
            b'"' => {
                self.at = at + 1;
                Some(Cow::Borrowed(&self.text[start..at]))
            }
            b'\\' => self.escaped(start, at).map(Cow::Owned),
            _ => None,
        }
    }

    /// A string with an escape at `at`, decoded.
    fn escaped(&mut self, start: usize, mut at: usize) -> Option<String> {
        let bytes = self.bytes;
        let mut out = String::with_capacity(at - start + 16);
        out.push_str(&self.text[start..at]);
        loop {
            match bytes[at] {
                b'"' => {
                    self.at = at + 1;
                    return Some(out);
                }
                b'\\' => {
                    let (decoded, next) = escape(bytes, at + 1)?;
                    out.push(decoded);
                    at = next;
                }
                _ => return None,
            }
            let next = special(bytes, at)?;
            out.push_str(&self.text[at..next]);
            at = next;
        }
    }
}

/// The character an escape stands for (`at` is just past its backslash), and where what
/// follows it starts. A surrogate that is not half of a pair is not read.
fn escape(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    let simple = match *bytes.get(at)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let unit = hex4(bytes, at + 1)?;
            return match unit {
                0xD800..=0xDBFF => {
                    if bytes.get(at + 5..at + 7)? != b"\\u" {
                        return None;
                    }
                    let low = hex4(bytes, at + 7)?;
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return None;
                    }
                    let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    Some((char::from_u32(code)?, at + 11))
                }
                0xDC00..=0xDFFF => None,
                _ => Some((char::from_u32(unit)?, at + 5)),
            };
        }
        _ => return None,
    };
    Some((simple, at + 1))
}

fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    bytes.get(at..at + 4)?.iter().try_fold(0u32, |n, &digit| {
        let value = char::from(digit).to_digit(16)?;
        Some(n * 16 + value)
    })
}

/// The first quote, backslash or control character at or after `at`; `None` if the line
/// ends first.
fn special(bytes: &[u8], at: usize) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // The high bit of each byte of the word below `n` (for n at most 0x80), the classic "has
    // less than" test: a borrow can flag bytes past a true one, never before, so the lowest
    // flag of the three tests together is the first special byte (the word is read little
    // endian: its lowest byte is the first).
    let below = |word: u64, n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word & HIGH;
    let has_byte = |word: u64, byte: u8| below(word ^ (ONES * u64::from(byte)), 1);
    // Names and most values end within a few words: they are read a word at a time.
    let mut word_at = at;
    while let Some(chunk) = bytes.get(word_at..word_at + 8) {
        if word_at >= at + SHORT {
            return long_special(bytes, word_at);
        }
        let word = u64::from_le_bytes(chunk.try_into().ok()?);
        let flags = below(word, 0x20) | has_byte(word, b'"') | has_byte(word, b'\\');
        if flags != 0 {
            return Some(word_at + (flags.trailing_zeros() / 8) as usize);
        }
        word_at += 8;
    }
    bytes[word_at..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|offset| word_at + offset)
}

/// How far [`special`] reads a word at a time before it takes a string as long.
const SHORT: usize = 128;

/// [`special`] for a long string (a message's text, a tool's output): its quote or backslash
/// is found by `memchr`, and the bytes before it are looked at for a control character in
/// blocks the compiler reads many bytes at a time.
fn long_special(bytes: &[u8], at: usize) -> Option<usize> {
    const BLOCK: usize = 64;
    let rest = &bytes[at..];
    let end = memchr::memchr2(b'"', b'\\', rest);
    let span = &rest[..end.unwrap_or(rest.len())];
    let mut base = 0;
    for block in span.chunks(BLOCK) {
        if block.iter().fold(0u8, |any, &b| any | u8::from(b < 0x20)) != 0 {
            let offset = block.iter().position(|&b| b < 0x20)?;
            return Some(at + base + offset);
        }
        base += BLOCK;
    }
    end.map(|end| at + end)
}

#[cfg(test)]
mod tests {
    use super::special;

    #[test]
    fn the_first_special_byte_is_found_wherever_it_is() {
        let naive = |bytes: &[u8], at: usize| {
            (at..bytes.len()).find(|&i| matches!(bytes[i], b'"' | b'\\') || bytes[i] < 0x20)
        };
        // Bytes just around the tests' thresholds, where a borrow could mislead a word test.
        let alphabet = [
            0x00, 0x01, 0x1f, 0x20, 0x21, b'"', 0x23, 0x5b, b'\\', 0x5d, 0x7f, 0x80, 0xa2, 0xdc,
            0xff, b'a',
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        // Short strings, searched a word at a time, and long ones with few special bytes,
        // searched past the first words by `memchr` and in blocks.
        for (strings, longest, sparse) in [(20_000, 40, 64), (1_500, 400, 1_024)] {
            for _ in 0..strings {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let len = usize::try_from(state % longest).expect("small");
                let bytes: Vec<u8> = (0..u32::try_from(len).expect("small"))
                    .map(|n| {
                        let pick =
                            state.rotate_left(n * 5).wrapping_add(u64::from(n) * 0x9e37) % sparse;
                        // Mostly plain letters, so runs of several words are searched.
                        alphabet
                            .get(usize::try_from(pick).expect("small"))
                            .copied()
                            .unwrap_or(b'a')
                    })
                    .collect();
                for at in 0..=len {
                    assert_eq!(
                        special(&bytes, at),
                        naive(&bytes, at),
                        "{bytes:?} from {at}"
                    );
                }
            }
        }
    }
}
