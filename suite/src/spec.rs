//! Finding rule statements in the spec text and fingerprinting them.
//!
//! The spec text states each rule inline: `ASR-212 image and audio parts MUST ...`. A
//! statement starts at the first occurrence of its id that opens a line or follows the
//! end of a sentence (`. `) outside parentheses, and runs to the start of the next
//! statement or the end of its paragraph (a paragraph is one line of the text). Later
//! occurrences of an id (`ASR-202 and ASR-203 apply to ...`, `(ASR-415)`) are citations.

use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

/// One rule statement found in a spec file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Statement {
    /// The rule id, for example `ASR-212`.
    pub id: String,
    /// The statement text exactly as it stands in the file, from the id on, with trailing
    /// white space removed.
    pub text: String,
    /// The nearest heading above the statement.
    pub section: String,
    /// 1-based line of the statement in its file.
    pub line: usize,
}

impl Statement {
    /// The statement's fingerprint: `sha256:` and the hex digest of its text.
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.text)
    }
}

/// What one spec text states and cites.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct SpecText {
    /// The statements, in the order they stand.
    pub statements: Vec<Statement>,
    /// Ids that the text cites but does not state, with the ids of the statements that cite them.
    pub cited: BTreeMap<String, BTreeSet<String>>,
}

/// One JSON example of the spec text.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Example {
    /// 1-based line where it starts.
    pub line: usize,
    /// The heading it stands under.
    pub section: String,
    /// The example.
    pub value: serde_json::Value,
}

/// The JSON examples of a spec text: blocks that open with `{` or `[` at the start of a
/// line and parse as JSON once their closing line is reached.
pub fn examples(text: &str) -> Vec<Example> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut section = String::new();
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        if let Some(heading) = heading_at(&lines, index) {
            section = heading;
        }
        if line.starts_with(['{', '[']) {
            let mut block = String::new();
            for (end, next) in lines.iter().enumerate().skip(index).take(400) {
                block.push_str(next);
                block.push('\n');
                if let Ok(value) = serde_json::from_str(&block) {
                    found.push(Example {
                        line: index + 1,
                        section: section.clone(),
                        value,
                    });
                    index = end;
                    break;
                }
            }
        }
        index += 1;
    }
    found
}

/// `sha256:` followed by the lowercase hex sha256 of `text`.
pub fn fingerprint(text: &str) -> String {
    prefixed_hex(&Sha256::digest(text.as_bytes()))
}

/// `sha256:` followed by a digest in lowercase hex.
pub fn prefixed_hex(digest: &[u8]) -> String {
    let mut out = String::with_capacity(7 + 2 * digest.len());
    out.push_str("sha256:");
    for byte in digest {
        out.push(char::from(b"0123456789abcdef"[usize::from(byte >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(byte & 15)]));
    }
    out
}

/// Finds the statements of one or more spec files, read together: a rule stated in one
/// file and cited in another counts as stated.
pub fn parse<'a>(texts: impl IntoIterator<Item = &'a str>) -> SpecText {
    let mut spec = SpecText::default();
    let mut stated = BTreeSet::new();
    let mut citations: Vec<(String, String)> = Vec::new();
    for text in texts {
        parse_one(text, &mut stated, &mut spec.statements, &mut citations);
    }
    for (cited, by) in citations {
        if !stated.contains(&cited) {
            spec.cited.entry(cited).or_default().insert(by);
        }
    }
    spec
}

fn parse_one(
    text: &str,
    stated: &mut BTreeSet<String>,
    statements: &mut Vec<Statement>,
    citations: &mut Vec<(String, String)>,
) {
    let mut section = String::new();
    let lines: Vec<&str> = text.lines().collect();
    for (index, line) in lines.iter().enumerate() {
        if let Some(heading) = heading_at(&lines, index) {
            section = heading;
            continue;
        }
        let starts = statement_starts(line, stated);
        let mut current: Option<String> = None;
        for occurrence in find_ids(line) {
            if let Some(start) = starts.iter().find(|s| s.0 == occurrence.0) {
                current = Some(start.1.clone());
                continue;
            }
            let by = current.clone().unwrap_or_default();
            citations.push((occurrence.1, by));
        }
        for (n, (start, id)) in starts.iter().enumerate() {
            let end = starts.get(n + 1).map_or(line.len(), |next| next.0);
            statements.push(Statement {
                id: id.clone(),
                text: line[*start..end].trim_end().to_owned(),
                section: section.clone(),
                line: index + 1,
            });
        }
    }
}

/// Byte offsets and ids of the statements that start on `line`, in order; marks them stated.
fn statement_starts(line: &str, stated: &mut BTreeSet<String>) -> Vec<(usize, String)> {
    let mut starts = Vec::new();
    for (offset, id) in find_ids(line) {
        let before = &line[..offset];
        let opens = before.trim().is_empty() || before.ends_with(". ");
        let depth = before
            .matches('(')
            .count()
            .saturating_sub(before.matches(')').count());
        if opens && depth == 0 && !stated.contains(&id) {
            stated.insert(id.clone());
            starts.push((offset, id));
        }
    }
    starts
}

/// Every `ASR-NNN` token on a line, with its byte offset.
fn find_ids(line: &str) -> Vec<(usize, String)> {
    let bytes = line.as_bytes();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(pos) = line[from..].find("ASR-") {
        let at = from + pos;
        let digits = &bytes[at + 4..];
        let count = digits.iter().take_while(|b| b.is_ascii_digit()).count();
        let word_before =
            at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'-');
        if count == 3 && !word_before && digits.get(3).is_none_or(|b| !b.is_ascii_alphanumeric()) {
            found.push((at, line[at..at + 7].to_owned()));
        }
        from = at + 4;
    }
    found
}

/// The heading that line `index` is, if it is one: a short line between blank lines.
fn heading_at(lines: &[&str], index: usize) -> Option<String> {
    let blank_before = index == 0 || lines[index - 1].trim().is_empty();
    let blank_after = lines
        .get(index + 1)
        .is_none_or(|next| next.trim().is_empty());
    (blank_before && blank_after && is_heading(lines[index]))
        .then(|| lines[index].trim().replace('`', ""))
}

/// A heading is a short line on its own, without sentence punctuation, tabs or JSON.
fn is_heading(line: &str) -> bool {
    let trimmed = line.trim();
    !trimmed.is_empty()
        && trimmed.len() <= 60
        && !line.starts_with(char::is_whitespace)
        && !trimmed.contains('\t')
        && !trimmed.contains("ASR-")
        && !trimmed.starts_with(['{', '}', '[', ']', '"'])
        && !trimmed.ends_with(['.', ':', ',', ';', '{', '[', '"'])
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "Heading\n\nIntro text. ASR-300 A thing MUST be. More of it. ASR-301 Another \
        MUST NOT (ASR-300). ASR-300 and ASR-301 apply here.\n\nOther\n\nSee (ASR-999) and \
        ASR-302 x under ASR-998.\n";

    #[test]
    fn statements_start_at_first_stated_occurrence_and_run_to_the_next() {
        let spec = parse([TEXT]);
        let ids: Vec<_> = spec.statements.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["ASR-300", "ASR-301"]);
        assert_eq!(
            spec.statements[0].text,
            "ASR-300 A thing MUST be. More of it."
        );
        assert_eq!(
            spec.statements[1].text,
            "ASR-301 Another MUST NOT (ASR-300). ASR-300 and ASR-301 apply here."
        );
        assert_eq!(spec.statements[0].section, "Heading");
        assert_eq!(spec.statements[0].line, 3);
    }

    #[test]
    fn citations_of_rules_not_stated_are_collected_with_their_citer() {
        let spec = parse([TEXT]);
        let cited: Vec<_> = spec.cited.keys().map(String::as_str).collect();
        // ASR-302 is neither at a line start nor after a sentence end: a citation.
        assert_eq!(cited, ["ASR-302", "ASR-998", "ASR-999"]);
        assert!(spec.cited["ASR-999"].contains(""));
    }

    #[test]
    fn fingerprint_changes_with_one_character() {
        let a = fingerprint("ASR-300 A thing MUST be.");
        let b = fingerprint("ASR-300 A thing MUST  be.");
        assert_ne!(a, b);
        assert_eq!(a.len(), 7 + 64);
        assert_eq!(
            fingerprint(""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn examples_are_found_whole() {
        let text = "H\n\n{\n  \"a\": [1,\n 2]\n}\n\ntext {not json}\n[{\"type\": \"text\"}]\n";
        let found = examples(text);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].line, 3);
        assert_eq!(found[0].value["a"][1], 2);
        assert_eq!(found[1].value[0]["type"], "text");
        assert_eq!(found[0].section, "H");
    }

    #[test]
    fn ids_inside_longer_tokens_are_not_ids() {
        assert!(find_ids("XASR-200 ASR-2001 ASR-20").is_empty());
        assert_eq!(find_ids("(ASR-200)").len(), 1);
    }
}
