//! Texts cut to a bound: what an implementation sends the kit is kept within a size.

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
