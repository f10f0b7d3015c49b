//! Where two texts part, for people: the first differing character with some context on
//! each side (one line, for a console or a summary), and the changed lines of a diff with the
//! changed characters inside them marked (for the HTML report).
//!
//! A producer's record can be one line of 20 KB: a diff by lines shows it as all deleted and
//! all added, and a line holding both texts is unreadable. Both forms here are bounded: the
//! context by [`CONTEXT_CHARS`], the diff's work by a deadline.

use crate::conformance::CaseResult;
use similar::{ChangeTag, DiffOp, TextDiff};
use std::fmt;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// Characters of context shown on each side of the first difference.
pub const CONTEXT_CHARS: usize = 32;

/// The most characters of a case's detail a one-line summary keeps.
pub const DETAIL_CHARS: usize = 120;

/// The first place two texts differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstDifference {
    /// Characters before it (0-based).
    pub offset: usize,
    /// Its line, 1-based.
    pub line: usize,
    /// Its column on that line, 1-based, in characters.
    pub column: usize,
    /// The expected text around it: up to [`CONTEXT_CHARS`] characters before and after.
    pub expected: Excerpt,
    /// The actual text around it.
    pub actual: Excerpt,
    /// The expected text's length in characters.
    pub expected_chars: usize,
    /// The actual text's length in characters.
    pub actual_chars: usize,
}

/// A piece of a text around a place, and whether text was left out before or after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    /// The text shown.
    pub text: String,
    /// Text before it was left out.
    pub cut_before: bool,
    /// Text after it was left out.
    pub cut_after: bool,
}

/// Where `expected` and `actual` first differ, or `None` when they are the same.
pub fn first_difference(expected: &str, actual: &str) -> Option<FirstDifference> {
    let mut offset = 0;
    let mut byte_e = expected.len();
    let mut byte_a = actual.len();
    let (mut line, mut column) = (1, 1);
    let mut a_chars = actual.char_indices();
    let mut found = false;
    for (i, c) in expected.char_indices() {
        match a_chars.next() {
            Some((_, d)) if d == c => {
                offset += 1;
                if c == '\n' {
                    line += 1;
                    column = 1;
                } else {
                    column += 1;
                }
            }
            Some((j, _)) => {
                (byte_e, byte_a) = (i, j);
                found = true;
                break;
            }
            None => {
                (byte_e, byte_a) = (i, actual.len());
                found = true;
                break;
            }
        }
    }
    if !found {
        if expected.len() == actual.len() {
            return None;
        }
        byte_e = expected.len();
        byte_a = expected.len();
    }
    Some(FirstDifference {
        offset,
        line,
        column,
        expected: excerpt(expected, byte_e),
        actual: excerpt(actual, byte_a),
        expected_chars: expected.chars().count(),
        actual_chars: actual.chars().count(),
    })
}

/// Up to [`CONTEXT_CHARS`] characters of `text` on each side of byte `at`.
fn excerpt(text: &str, at: usize) -> Excerpt {
    let before = &text[..at];
    let after = &text[at..];
    let start = before
        .char_indices()
        .rev()
        .nth(CONTEXT_CHARS - 1)
        .map_or(0, |(i, _)| i);
    let end = after
        .char_indices()
        .nth(CONTEXT_CHARS)
        .map_or(text.len(), |(i, _)| at + i);
    Excerpt {
        text: text[start..end].to_owned(),
        cut_before: start > 0,
        cut_after: end < text.len(),
    }
}

impl fmt::Display for Excerpt {
    /// Quoted, with every control character, quote and backslash escaped (so that it stays
    /// on one line and cannot drive a terminal), `…` where text was left out.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ellipsis = |cut| if cut { "…" } else { "" };
        write!(
            f,
            "{}\"{}\"{}",
            ellipsis(self.cut_before),
            self.text.escape_debug(),
            ellipsis(self.cut_after)
        )
    }
}

impl fmt::Display for FirstDifference {
    /// `first difference at character 1234 (line 5, column 12): expected …"abc", actual …"abd";
    /// 20480 and 20479 characters`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "first difference at character {} (line {}, column {}): expected {}, actual {}; \
             expected {} characters, actual {}",
            self.offset,
            self.line,
            self.column,
            self.expected,
            self.actual,
            self.expected_chars,
            self.actual_chars
        )
    }
}

/// A failing case in one line of at most a few hundred characters: its name, the rules it
/// was charged to (or its own), its detail cut to [`DETAIL_CHARS`] characters, and where its
/// answer first differs from the expectation. Every control character is escaped.
pub fn failure_line(case: &CaseResult) -> String {
    let rules: Vec<String> = if case.attributions.is_empty() {
        case.rules.clone()
    } else {
        case.attributions.iter().map(super::charge_text).collect()
    };
    let mut line = format!(
        "{} {} ({})",
        case.outcome.as_str(),
        one_line(&case.name, DETAIL_CHARS),
        one_line(&rules.join("; "), DETAIL_CHARS)
    );
    if let Some(detail) = case.detail.as_deref().filter(|d| !d.is_empty()) {
        line.push_str(": ");
        line.push_str(&one_line(detail, DETAIL_CHARS));
    }
    if let (Some(expected), Some(actual)) = (&case.expected, &case.actual) {
        if let Some(difference) = first_difference(expected, actual) {
            line.push_str("; ");
            line.push_str(&difference.to_string());
        }
    }
    line
}

/// `text` on one line: control characters (line breaks too) escaped, cut after `most`
/// characters with the length said.
fn one_line(text: &str, most: usize) -> String {
    let count = text.chars().count();
    let kept: String = text.chars().take(most).collect();
    let mut out: String = kept
        .chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_debug().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    if count > most {
        let _ = write!(out, "… [{count} characters]");
    }
    out
}

/// One line of an inline diff, split into runs of text, each changed or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine<'a> {
    /// Whether the line is removed, added or the same.
    pub tag: ChangeTag,
    /// Its runs: `true` where the characters changed.
    pub runs: Vec<(bool, &'a str)>,
}

/// The changed lines of two texts in hunks with `context` lines around each, every changed
/// line that pairs with one on the other side split where the characters changed. The work
/// takes at most about `budget`: past it, the diffs are coarser, never wrong.
pub fn inline_hunks<'a>(
    expected: &'a str,
    actual: &'a str,
    context: usize,
    budget: Duration,
) -> Vec<Vec<DiffLine<'a>>> {
    let deadline = Instant::now() + budget;
    let lines = TextDiff::configure()
        .timeout(budget)
        .diff_lines(expected, actual);
    let old = lines.old_slices();
    let new = lines.new_slices();
    lines
        .grouped_ops(context)
        .iter()
        .map(|group| {
            let mut hunk = Vec::new();
            for op in group {
                match *op {
                    DiffOp::Equal { old_index, len, .. } => {
                        for line in &old[old_index..old_index + len] {
                            hunk.push(whole(ChangeTag::Equal, line));
                        }
                    }
                    DiffOp::Delete {
                        old_index, old_len, ..
                    } => {
                        for line in &old[old_index..old_index + old_len] {
                            hunk.push(whole(ChangeTag::Delete, line));
                        }
                    }
                    DiffOp::Insert {
                        new_index, new_len, ..
                    } => {
                        for line in &new[new_index..new_index + new_len] {
                            hunk.push(whole(ChangeTag::Insert, line));
                        }
                    }
                    DiffOp::Replace {
                        old_index,
                        old_len,
                        new_index,
                        new_len,
                    } => {
                        let removed = &old[old_index..old_index + old_len];
                        let added = &new[new_index..new_index + new_len];
                        let paired = removed.len().min(added.len());
                        let mut del = Vec::new();
                        let mut ins = Vec::new();
                        for (a, b) in removed.iter().zip(added) {
                            let (d, i) = by_characters(a, b, deadline);
                            del.push(d);
                            ins.push(i);
                        }
                        del.extend(
                            removed[paired..]
                                .iter()
                                .map(|l| whole(ChangeTag::Delete, l)),
                        );
                        ins.extend(added[paired..].iter().map(|l| whole(ChangeTag::Insert, l)));
                        hunk.extend(del);
                        hunk.extend(ins);
                    }
                }
            }
            hunk
        })
        .collect()
}

fn whole(tag: ChangeTag, line: &str) -> DiffLine<'_> {
    DiffLine {
        tag,
        runs: vec![(tag != ChangeTag::Equal, line)],
    }
}

/// A removed line and the added line it pairs with, split where their characters differ;
/// past the deadline, or when they have less than half their characters in common, each as
/// changed as a whole.
fn by_characters<'a>(
    old: &'a str,
    new: &'a str,
    deadline: Instant,
) -> (DiffLine<'a>, DiffLine<'a>) {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return (whole(ChangeTag::Delete, old), whole(ChangeTag::Insert, new));
    }
    let chars = TextDiff::configure().timeout(left).diff_chars(old, new);
    // Two lines with little in common are two different lines: marking the odd letters they
    // share is noise.
    if chars.ratio() < 0.5 {
        return (whole(ChangeTag::Delete, old), whole(ChangeTag::Insert, new));
    }
    let mut del = DiffLine {
        tag: ChangeTag::Delete,
        runs: Vec::new(),
    };
    let mut ins = DiffLine {
        tag: ChangeTag::Insert,
        runs: Vec::new(),
    };
    // The ops cover both lines in order: each run starts where the last one ended.
    let (mut at_old, mut at_new) = (0, 0);
    for op in chars.ops() {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        let old_len: usize = chars.old_slices()[old_range].iter().map(|s| s.len()).sum();
        let new_len: usize = chars.new_slices()[new_range].iter().map(|s| s.len()).sum();
        let changed = tag != similar::DiffTag::Equal;
        push_run(&mut del, changed, &old[at_old..at_old + old_len]);
        push_run(&mut ins, changed, &new[at_new..at_new + new_len]);
        at_old += old_len;
        at_new += new_len;
    }
    (del, ins)
}

/// Adds a run to a line, unless it is empty (a deletion has no text on the added side).
fn push_run<'a>(line: &mut DiffLine<'a>, changed: bool, text: &'a str) {
    if !text.is_empty() {
        line.runs.push((changed, text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::Outcome;

    #[test]
    fn the_first_difference_has_its_place_context_and_both_lengths() {
        assert_eq!(first_difference("same", "same"), None);
        let d = first_difference("ab\ncdef", "ab\ncdXf").expect("differ");
        assert_eq!((d.offset, d.line, d.column), (5, 2, 3));
        assert_eq!(d.expected.text, "ab\ncdef");
        assert_eq!(d.actual.text, "ab\ncdXf");
        assert!(!d.expected.cut_before && !d.expected.cut_after);
        assert_eq!((d.expected_chars, d.actual_chars), (7, 7));
        let shorter = first_difference("abc", "ab").expect("differ");
        assert_eq!(shorter.offset, 2);
        assert_eq!(
            (shorter.expected.text.as_str(), shorter.actual.text.as_str()),
            ("abc", "ab")
        );
        let longer = first_difference("ab", "abc").expect("differ");
        assert_eq!((longer.offset, longer.actual.text.as_str()), (2, "abc"));
    }

    #[test]
    fn the_context_is_bounded_and_escaped() {
        let record = |middle: &str| format!("{}{middle}{}", "é".repeat(10_000), "x".repeat(10_000));
        let (expected, actual) = (record("\"old\"\u{1b}"), record("\"new\"\n"));
        let d = first_difference(&expected, &actual).expect("differ");
        assert_eq!(d.offset, 10_001);
        assert!(d.expected.cut_before && d.expected.cut_after);
        assert_eq!(d.expected.text.chars().count(), 2 * CONTEXT_CHARS);
        let shown = d.to_string();
        assert!(shown.len() < 600, "{} bytes: {shown}", shown.len());
        assert!(
            !shown.contains('\n') && !shown.contains('\u{1b}'),
            "{shown}"
        );
        assert!(shown.contains(r#"\"old\"\u{1b}"#), "{shown}");
        assert!(
            shown.contains("expected 20006 characters, actual 20006"),
            "{shown}"
        );
    }

    #[test]
    fn a_failure_line_is_short_whatever_the_texts() {
        let golden = format!("{{\"text\":\"{}\"}}\n", "a".repeat(20_000));
        let output = golden.replacen("aaa", "aXa", 1);
        let mut case = CaseResult::new(
            "sources/x/y",
            "s0001",
            vec!["ASR-300".into()],
            Outcome::Fail,
        );
        case.detail = Some(format!("expected exactly {golden}; found {output}"));
        case.expected = Some(golden);
        case.actual = Some(output);
        let line = failure_line(&case);
        assert!(
            line.chars().count() < 500,
            "{} characters: {line}",
            line.len()
        );
        assert!(
            line.starts_with("fail sources/x/y (ASR-300): expected exactly"),
            "{line}"
        );
        assert!(line.contains("[40049 characters]"), "{line}");
        assert!(
            line.contains("first difference at character 10 (line 1, column 11)"),
            "{line}"
        );
        assert!(
            line.contains("expected 20012 characters, actual 20012"),
            "{line}"
        );
        assert!(!line.contains('\n'), "{line}");
    }

    fn changed<'a>(line: &DiffLine<'a>) -> Vec<&'a str> {
        line.runs
            .iter()
            .filter(|(c, _)| *c)
            .map(|(_, t)| *t)
            .collect()
    }

    #[test]
    fn a_changed_record_is_marked_inside_its_line() {
        let expected = format!("header\n{{\"text\":\"{}\"}}\ntrailer\n", "a".repeat(20_000));
        let actual = expected.replacen("aaa", "aXa", 1);
        let hunks = inline_hunks(&expected, &actual, 1, Duration::from_secs(1));
        assert_eq!(hunks.len(), 1);
        let tags: Vec<ChangeTag> = hunks[0].iter().map(|l| l.tag).collect();
        assert_eq!(
            tags,
            [
                ChangeTag::Equal,
                ChangeTag::Delete,
                ChangeTag::Insert,
                ChangeTag::Equal
            ]
        );
        assert_eq!(changed(&hunks[0][1]), ["a"]);
        assert_eq!(changed(&hunks[0][2]), ["X"]);
        let joined: String = hunks[0][2].runs.iter().map(|(_, t)| *t).collect();
        assert_eq!(
            joined,
            actual
                .lines()
                .nth(1)
                .map(|l| format!("{l}\n"))
                .unwrap_or_default()
        );
    }

    #[test]
    fn past_the_deadline_a_changed_line_is_changed_as_a_whole() {
        let hunks = inline_hunks("one\ntwo\n", "one\ntwO\n", 0, Duration::ZERO);
        let changed: Vec<&DiffLine<'_>> = hunks
            .iter()
            .flatten()
            .filter(|l| l.tag != ChangeTag::Equal)
            .collect();
        assert!(!changed.is_empty());
        assert!(
            changed.iter().all(|l| l.runs.iter().all(|(c, _)| *c)),
            "{changed:?}"
        );
    }
}
