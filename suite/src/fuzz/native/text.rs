//! Rewrites of native texts: the characters a converter must carry through unchanged
//! (tabs, CRLF, decomposed and full-width forms, terminal escapes, zero-width and
//! bidirectional controls) and the lengths that break naive code (64 KiB, empty).
//!
//! ```
//! use asr_suite::fuzz::native::text::{Rewrite, rewrite};
//!
//! assert_eq!(rewrite(Rewrite::Crlf, "a\nb"), "a\r\nb\r\n");
//! assert_eq!(rewrite(Rewrite::FullWidth, "ab"), "\u{ff41}\u{ff42}");
//! assert_eq!(rewrite(Rewrite::Empty, "anything"), "");
//! assert!(rewrite(Rewrite::Long, "x").len() >= 64 << 10);
//! ```

/// The members whose strings are content: what a person, a model or a tool wrote. A string
/// under any other member (ids, types, times, names, paths) is left alone.
pub const CONTENT_KEYS: &[&str] = &[
    "text",
    "thinking",
    "content",
    "displayContent",
    "output",
    "result",
    "message",
    "summary",
    "subject",
    "description",
    "prompt",
    "command",
    "stdout",
    "stderr",
    "input",
    "arguments",
    "body",
    "reasoning",
    "title",
];

/// One way of rewriting a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rewrite {
    /// Spaces become tabs, and a tab is added.
    Tabs,
    /// Line ends become CRLF, and one ends the text.
    Crlf,
    /// Precomposed letters decomposed (NFD), and a decomposed letter added.
    Nfd,
    /// ASCII letters, digits and signs in their full-width forms.
    FullWidth,
    /// Wrapped in ANSI colour escapes.
    Ansi,
    /// Zero-width characters between words and at the ends.
    ZeroWidth,
    /// Bidirectional overrides and isolates around and inside it.
    Bidi,
    /// Repeated up to 64 KiB.
    Long,
    /// Emptied.
    Empty,
}

/// Every rewrite, in a fixed order (bytes choose among them by index).
pub const REWRITES: [Rewrite; 9] = [
    Rewrite::Tabs,
    Rewrite::Crlf,
    Rewrite::Nfd,
    Rewrite::FullWidth,
    Rewrite::Ansi,
    Rewrite::ZeroWidth,
    Rewrite::Bidi,
    Rewrite::Long,
    Rewrite::Empty,
];

/// The long text's length, at least.
pub const LONG: usize = 64 << 10;

/// `text` rewritten.
pub fn rewrite(how: Rewrite, text: &str) -> String {
    match how {
        Rewrite::Tabs => format!("{}\tend", text.replace(' ', "\t")),
        Rewrite::Crlf => {
            let mut out = text.replace("\r\n", "\n").replace('\n', "\r\n");
            out.push_str("\r\n");
            out
        }
        Rewrite::Nfd => {
            let mut out: String = text.chars().map(decomposed).collect();
            out.push_str(" cafe\u{301}");
            out
        }
        Rewrite::FullWidth => text
            .chars()
            .map(|c| match c {
                '!'..='~' => char::from_u32(u32::from(c) - 0x21 + 0xFF01).unwrap_or(c),
                ' ' => '\u{3000}',
                c => c,
            })
            .collect(),
        Rewrite::Ansi => format!("\u{1b}[1;31m{text}\u{1b}[0m\u{1b}[2K"),
        Rewrite::ZeroWidth => {
            let inner = text.replace(' ', " \u{200b}");
            format!("\u{feff}{inner}\u{200d}\u{200c}\u{2060}")
        }
        Rewrite::Bidi => format!("\u{202e}{text}\u{202c}\u{2067}\u{05d0}\u{2069}\u{200f}"),
        Rewrite::Long => {
            let unit = if text.is_empty() { "long text " } else { text };
            let mut out = String::with_capacity(LONG + unit.len());
            while out.len() < LONG {
                out.push_str(unit);
            }
            out
        }
        Rewrite::Empty => String::new(),
    }
}

/// A precomposed letter as its base and combining mark (NFD), for the common Latin ones.
fn decomposed(c: char) -> String {
    let (base, mark) = match c {
        'é' => ('e', '\u{301}'),
        'è' => ('e', '\u{300}'),
        'ê' => ('e', '\u{302}'),
        'á' => ('a', '\u{301}'),
        'à' => ('a', '\u{300}'),
        'ä' => ('a', '\u{308}'),
        'ö' => ('o', '\u{308}'),
        'ü' => ('u', '\u{308}'),
        'ñ' => ('n', '\u{303}'),
        'ç' => ('c', '\u{327}'),
        'É' => ('E', '\u{301}'),
        'Ü' => ('U', '\u{308}'),
        c => return c.to_string(),
    };
    [base, mark].iter().collect()
}
