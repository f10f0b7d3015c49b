//! Unified diffs of an expectation and an answer, for reports and the console.

use asr_suite::conformance::KEPT_BYTES;
use std::time::Duration;

/// A unified diff of two texts, over at most [`KEPT_BYTES`] of each and within a second:
/// an answer of a million findings must not take the diff quadratic time.
pub fn unified_diff(old: &str, new: &str, (from, to): (&str, &str)) -> String {
    let head = |text: &str| -> String {
        if text.len() <= KEPT_BYTES {
            return text.to_owned();
        }
        let mut end = KEPT_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!(
            "{}\n[{} more bytes not compared]\n",
            &text[..end],
            text.len() - end
        )
    };
    let (old, new) = (head(old), head(new));
    similar::TextDiff::configure()
        .timeout(Duration::from_secs(1))
        .diff_lines(&old, &new)
        .unified_diff()
        .header(from, to)
        .to_string()
}
