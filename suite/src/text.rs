//! Texts from outside the kit, made safe to keep and to show: cut to a bound, and their
//! control characters escaped.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Keeps the first `kept` bytes of `text` (on a character boundary) and, after `before`,
/// says how many were cut: `[N more bytes not kept]`. A text of many lines takes the mark on
/// a line of its own (`"\n"`); a name or a link, on its one line after an ellipsis (`"…"`).
pub(crate) fn cut_text(text: &mut String, kept: usize, before: &str) {
    if text.len() <= kept {
        return;
    }
    let mut end = kept;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text.len() - end;
    text.truncate(end);
    let _ = write!(text, "{before}[{cut} more bytes not kept]");
}

/// Text with its control characters other than line feed and tab (C0, DEL, C1: the escape
/// codes that clear a screen or move a cursor) written as visible `\u{1b}` escapes, so that
/// text an adapter wrote cannot drive the terminal or the page it is shown on.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    let hidden = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}
