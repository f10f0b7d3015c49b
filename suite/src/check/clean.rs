//! The fast path of a line: most lines of most streams have nothing to report on their own,
//! and such a line is read as a tape ([`crate::tape`]), held to its type's schema there, and
//! looked at for what the checks within one record could report, with no `serde_json::Value`
//! built but, at times, the few members the checks across records read ([`Kept`]).
//!
//! It is an answer of one bit: the line is clean, or it is checked again on the full path,
//! which words every finding. So no finding is ever worded twice, and a line the fast path
//! misjudges as unclean costs time, never a finding; a line it misjudged as clean would lose
//! findings, which the tests look for (`tests` here, over the corpus and fuzzed streams).

use super::FORMAT_VERSION;
use super::kept::Kept;
use crate::schema::Schemas;
use crate::tape::{Doc, Elements, Members, Node};

/// Whether the fast path is taken: always, but in the tests that compare it with the full
/// path alone.
pub(crate) fn enabled() -> bool {
    #[cfg(test)]
    return !tests::OFF.get();
    #[cfg(not(test))]
    true
}

/// What the checks across records read of a clean line ([`Kept::of`]), and whether it is a
/// `session` line; `None` when the line may have something to report on its own.
pub(crate) fn clean(bytes: &[u8], schemas: &Schemas) -> Option<(Kept, bool)> {
    let doc = Doc::parse(bytes)?;
    let record = doc.root();
    let members = record.object()?;
    let kind = record.get("type")?.str()?;
    if !schemas.tape_conforms(kind, record) {
        return None;
    }
    let session = kind == "session";
    // A session line that is not the header is held to what every record meets.
    if session && !schemas.tape_conforms_untyped(record) {
        return None;
    }
    if !quiet(record, kind) {
        return None;
    }
    Some((Kept::of(members), session))
}

/// Whether the checks within one record ([`super::record::check`]) surely find nothing: each
/// condition here holds whenever one of them would report (some hold more often).
fn quiet(record: Node<'_>, kind: &str) -> bool {
    let [
        capture,
        content,
        display,
        format_version,
        origin,
        plan_type,
        entries,
    ] = named(
        record,
        [
            "capture",
            "content",
            "displayContent",
            "formatVersion",
            "origin",
            "planType",
            "entries",
        ],
    );
    let content_explained = capture
        .and_then(|c| c.get("content"))
        .is_some_and(|c| c.object().is_some());
    // ASR-205 reads the message's parts, not what was displayed.
    let mut part_says_notice = false;
    for (is_content, parts) in [(true, content), (false, display)] {
        let Some(parts) = parts.and_then(Node::array) else {
            continue;
        };
        for (index, part) in parts.iter().enumerate() {
            let [kind, derivation, visibility, summary, text, origin] = named(
                part,
                [
                    "type",
                    "derivation",
                    "visibility",
                    "summary",
                    "text",
                    "origin",
                ],
            );
            if misderived(derivation, index, parts.len())
                || (!content_explained && summary_labelled_full(kind, visibility, summary, text))
            {
                return false;
            }
            part_says_notice |= is_content && says_notice(origin);
        }
    }
    let empty_unexplained = || {
        !content_explained
            && content
                .and_then(Node::array)
                .is_some_and(|parts| parts.len() == 0)
    };
    match kind {
        "session" => format_version
            .and_then(Node::str)
            .is_none_or(|version| version == FORMAT_VERSION),
        // ASR-205: a notice's author and audience are the full path's to judge.
        "message" => !empty_unexplained() && !says_notice(origin) && !part_says_notice,
        "plan" => {
            let document = matches!(plan_type.and_then(Node::str), Some("document" | "goal"));
            !(document && empty_unexplained())
                && entries.and_then(Node::array).is_none_or(entries_agree)
        }
        _ => true,
    }
}

/// The members of an object of these names, found in one pass over its members (a clean
/// line's object has no name twice); none of a value that is no object.
fn named<'d, const N: usize>(object: Node<'d>, names: [&str; N]) -> [Option<Node<'d>>; N] {
    let mut found = [None; N];
    for (name, value) in object.object().into_iter().flat_map(Members::iter) {
        if let Some(at) = names.iter().position(|n| *n == name) {
            found[at] = Some(value);
        }
    }
    found
}

/// ASR-233: a part's `derivation.from` is the part's own index, or past the array.
fn misderived(derivation: Option<Node<'_>>, index: usize, len: usize) -> bool {
    derivation
        .and_then(|d| d.get("from"))
        .and_then(Node::u64)
        .is_some_and(|from| usize::try_from(from).map_or(true, |from| from == index || from >= len))
}

/// ASR-214 (clause b): a reasoning part labelled full that holds a summary and no text
/// (of a part: its `type`, `visibility`, `summary` and `text`).
fn summary_labelled_full(
    kind: Option<Node<'_>>,
    visibility: Option<Node<'_>>,
    summary: Option<Node<'_>>,
    text: Option<Node<'_>>,
) -> bool {
    kind.and_then(Node::str) == Some("reasoning")
        && visibility.and_then(Node::str) == Some("full")
        && summary.and_then(Node::array).is_some_and(|s| s.len() > 0)
        && text.and_then(Node::str).is_none_or(str::is_empty)
}

/// ASR-205: an `origin` of `notice`.
fn says_notice(origin: Option<Node<'_>>) -> bool {
    origin.and_then(Node::str) == Some("notice")
}

/// ASR-236: entry ids unique, and every `blockedBy` names another entry of the record.
fn entries_agree(entries: Elements<'_>) -> bool {
    let mut ids: Vec<&str> = entries
        .iter()
        .filter_map(|entry| entry.get("entryId").and_then(Node::str))
        .collect();
    ids.sort_unstable();
    if ids.windows(2).any(|pair| pair[0] == pair[1]) {
        return false;
    }
    entries.iter().all(|entry| {
        let own = entry.get("entryId").and_then(Node::str);
        entry
            .get("blockedBy")
            .and_then(Node::array)
            .into_iter()
            .flat_map(Elements::iter)
            .filter_map(Node::str)
            .all(|blocker| Some(blocker) != own && ids.binary_search(&blocker).is_ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{CheckOptions, check_bytes};
    use crate::fuzz::generator::{Config, stream};
    use crate::fuzz::mutate::mutators;
    use crate::fuzz::seeded_bytes;
    use arbitrary::Unstructured;
    use std::cell::Cell;

    thread_local! {
        /// Set, the fast path is not taken on this thread.
        pub(super) static OFF: Cell<bool> = const { Cell::new(false) };
    }

    /// The report of a stream with the fast path and on the full path alone.
    fn both(bytes: &[u8]) -> (String, String) {
        let options = CheckOptions::default();
        let fast = format!("{:?}", check_bytes(bytes, &options));
        OFF.set(true);
        let full = format!("{:?}", check_bytes(bytes, &options));
        OFF.set(false);
        (fast, full)
    }

    /// Streams checked on both paths: where the reports differ, and how many lines the
    /// fast path took, of how many.
    #[derive(Default)]
    struct Compared {
        differ: Vec<String>,
        clean: usize,
        lines: usize,
    }

    impl Compared {
        fn stream(&mut self, name: &str, bytes: &[u8]) {
            let (fast, full) = both(bytes);
            if fast != full {
                self.differ
                    .push(format!("{name}:\n  fast {fast}\n  full {full}"));
            }
            let schemas = Schemas::embedded();
            for line in crate::lines::split(bytes).bytes() {
                self.lines += 1;
                self.clean += usize::from(clean(line, schemas).is_some());
            }
        }

        /// No report differs, and the fast path took most lines: one that took none would
        /// compare nothing.
        fn assert_same(&self) {
            assert!(self.differ.is_empty(), "{}", self.differ.join("\n"));
            assert!(
                self.clean * 2 > self.lines,
                "{} of {} lines clean",
                self.clean,
                self.lines
            );
        }
    }

    #[test]
    fn every_corpus_stream_reports_the_same_with_the_fast_path() {
        let mut compared = Compared::default();
        for path in crate::check::record::agreement::corpus_streams() {
            let bytes = std::fs::read(&path).expect("a stream");
            compared.stream(&path.display().to_string(), &bytes);
        }
        // The corpus is mostly negative cases, each line of them mostly clean.
        compared.assert_same();
    }

    #[test]
    fn generated_and_broken_streams_report_the_same_with_the_fast_path() {
        let mut compared = Compared::default();
        for seed in 0..300u64 {
            let data = seeded_bytes(seed, 8000);
            let mut u = Unstructured::new(&data);
            let Ok(valid) = stream(&mut u, &Config::default()) else {
                continue;
            };
            compared.stream(&format!("seed {seed}"), &valid.to_bytes());
            let mutator = &mutators()[usize::try_from(seed).unwrap_or(0) % mutators().len()];
            if let Ok(mutation) = mutator.apply(&valid, &mut u) {
                compared.stream(&format!("seed {seed}, broken"), &mutation.stream.to_bytes());
            }
        }
        compared.assert_same();
    }

    /// Each condition under which the checks within a record report holds the line off the
    /// fast path, and the same record without it is taken.
    #[test]
    fn a_line_with_something_to_report_is_not_clean() {
        let schemas = Schemas::embedded();
        let message = |content: &str, extra: &str| {
            format!(
                r#"{{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"assistant","content":{content}{extra}}}"#
            )
        };
        let text = r#"[{"type":"text","text":"a"},{"type":"text","text":"b"}]"#;
        assert!(clean(message(text, "").as_bytes(), schemas).is_some());
        // A type the schemas do not dispatch on is held to what every record meets.
        assert!(clean(br#"{"type":"mystery","seq":1,"id":"m"}"#, schemas).is_some());
        for unclean in [
            message(r#"[{"type":"text","text":"a","derivation":{"method":"caption","from":0}}]"#, ""),
            message(r#"[{"type":"text","text":"a","derivation":{"method":"caption","from":3}}]"#, ""),
            message(r#"[{"type":"reasoning","visibility":"full","summary":[{"text":"s"}]}]"#, ""),
            message("[]", ""),
            message(text, r#","origin":"notice""#),
            message(r#"[{"type":"text","text":"a","origin":"notice"}]"#, ""),
            message(text, r#","role":"assistant""#),
            message(r#"[{"type":"text"}]"#, ""),
            message(text, r#","seq":"one""#),
            format!("{} ", message(text, "")).replace("\"r1\"", "\"r1\",\"id\":\"r2\""),
            r#"{"type":"plan","seq":1,"id":"p","planId":"p","planType":"items","entries":[{"entryId":"1","content":"a","status":"pending","blockedBy":["1"]}]}"#.to_owned(),
            r#"{"type":"plan","seq":1,"id":"p","planId":"p","planType":"items","entries":[{"entryId":"1","content":"a","status":"pending"},{"entryId":"1","content":"b","status":"pending"}]}"#.to_owned(),
            r#"{"type":"session","seq":0,"id":"h","formatVersion":"9.9","agent":{"name":"codex"},"sessionId":"s1"}"#.to_owned(),
            r#"{"type":"mystery","seq":"one","id":"m"}"#.to_owned(),
            "[1]".to_owned(),
        ] {
            assert!(clean(unclean.as_bytes(), schemas).is_none(), "{unclean}");
        }
    }
}
