//! The checker and the reference reader understand every stream the same way: on each
//! stream of the corpus, and on generated streams and their mutations, they agree on which
//! line is the header, which lines are records (with their ids and seqs), what each
//! record's references name, and which other sessions the stream names.

use crate::helpers;
use asr_suite::generate::{Shape, realistic_stream};
use asr_suite::model::Outline;
use asr_suite::{check, reading};

/// Where the two outlines of one stream differ, in words (empty when they agree).
fn disagreements(bytes: &[u8]) -> Vec<String> {
    let checker = check::outline(bytes);
    let reader = reading::outline(bytes);
    let mut out = Vec::new();
    if checker.header != reader.header {
        out.push(format!(
            "header: checker {:?}, reader {:?}",
            checker.header, reader.header
        ));
    }
    if checker.records != reader.records {
        out.push(format!(
            "records: checker {:?}, reader {:?}",
            checker.records, reader.records
        ));
    }
    if checker.record_references() != reader.record_references() {
        out.push(format!(
            "references: checker {:?}, reader {:?}",
            checker.record_references(),
            reader.record_references()
        ));
    }
    if checker.sessions != reader.sessions {
        out.push(format!(
            "sessions: checker {:?}, reader {:?}",
            checker.sessions, reader.sessions
        ));
    }
    out
}

#[test]
fn the_checker_and_the_reader_agree_on_every_stream_of_the_corpus() {
    let cases = helpers::cases();
    let mut streams = 0;
    let mut with_references = 0;
    let mut failures = Vec::new();
    for case in &cases {
        for (part, path) in &case.streams {
            let bytes = std::fs::read(path).expect("a stream");
            streams += 1;
            if !check::outline(&bytes).references.is_empty() {
                with_references += 1;
            }
            for d in disagreements(&bytes) {
                failures.push(format!("{} {part}: {d}", case.name));
            }
        }
    }
    assert!(streams > 300, "{streams} streams");
    // The comparison is worth something only if the corpus resolves references.
    assert!(
        with_references > 20,
        "{with_references} streams with references"
    );
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_checker_and_the_reader_agree_on_generated_streams_and_their_mutations() {
    let mut checked = 0;
    for seed in 0..4 {
        let mut stream = Vec::new();
        realistic_stream(&mut stream, Shape::turns(seed, 40, 1)).expect("generated");
        let lines: Vec<&[u8]> = stream
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        assert!(
            disagreements(&stream).is_empty(),
            "seed {seed}: {:?}",
            disagreements(&stream)
        );
        // Moved, dropped and doubled lines: a header out of place, repeated ids, references
        // to records that come later or not at all.
        let n = lines.len();
        let variants: [Vec<&[u8]>; 4] = [
            lines.iter().rev().copied().collect(),
            lines.iter().skip(1).copied().collect(),
            lines.iter().chain(&lines[..n / 2]).copied().collect(),
            lines.iter().step_by(2).copied().collect(),
        ];
        for (v, variant) in variants.iter().enumerate() {
            let bytes = variant.join(&b'\n');
            let found = disagreements(&bytes);
            assert!(found.is_empty(), "seed {seed}, variant {v}: {found:?}");
            checked += 1;
        }
    }
    assert_eq!(checked, 16);
}

/// The comparison itself can fail: two outlines that differ are told apart.
#[test]
fn outlines_that_differ_are_told_apart() {
    let stream = concat!(
        r#"{"type":"session","seq":0,"id":"h","agent":{"name":"codex"},"sessionId":"s1"}"#,
        "\n",
        r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[]}"#,
        "\n",
        r#"{"type":"message","seq":2,"id":"r2","messageId":"m2","role":"user","content":[],"supersedes":"messageId=m1"}"#,
        "\n",
    );
    let outline = check::outline(stream.as_bytes());
    assert_eq!(outline.header, Some(1));
    assert_eq!(
        outline.records,
        [
            (1, "h".to_owned(), Some(0)),
            (2, "r1".to_owned(), Some(1)),
            (3, "r2".to_owned(), Some(2))
        ]
    );
    assert_eq!(outline.references, [(3, "/supersedes".to_owned(), vec![2])]);
    let mut other = outline.clone();
    other.references[0].2 = vec![];
    assert_ne!(other.record_references(), outline.record_references());
    let later: Outline = reading::outline(stream.as_bytes());
    assert_eq!(later, outline);
}

/// Streams on which the two once disagreed: each is agreed on now, and read as the
/// protocol says.
#[test]
fn streams_the_two_once_read_differently_are_agreed_on() {
    let header = |extra: &str| {
        format!(
            r#"{{"type":"session","seq":0,"id":"h","agent":{{"name":"codex"}},"sessionId":"s1"{extra}}}"#
        )
    };
    let m = |seq: u64, extra: &str| {
        format!(
            r#"{{"type":"message","seq":{seq},"id":"r{seq}","messageId":"m{seq}","role":"user","content":[]{extra}}}"#
        )
    };
    let through_header = header(
        r#","lineage":{"forkedFrom":{"session":"codex:p","evidence":"native_field"},"inherits":{"mode":"copied","from":"codex:p","localThroughId":"h","evidence":"native_field"}}"#,
    );
    let second_header = header("")
        .replace(r#""id":"h""#, r#""id":"h2""#)
        .replace(r#""seq":0"#, r#""seq":2"#);
    let anonymous_declaration = r#"{"type":"declaration","seq":3,"lineage":{"continues":{"session":"codex:earlier","evidence":"native_field"}}}"#;
    let bom = format!("\u{feff}{}", header(""));
    let streams = [
        vec![through_header.clone(), m(1, "")],
        vec![header(""), m(1, ""), second_header],
        vec![header(""), m(1, ""), anonymous_declaration.to_owned()],
        vec![m(1, ""), header(r#","lineage":{"root":true}"#), m(2, "")],
        vec![bom, m(1, "")],
        vec![
            header(r#","namespace":"n\u001f""#),
            m(
                1,
                r#","copiedFrom":{"session":"codex:n%1f:s1","record":"r9","proof":"native_id"}"#,
            ),
        ],
    ];
    for lines in &streams {
        let stream = format!("{}\n", lines.join("\n"));
        let found = disagreements(stream.as_bytes());
        assert!(found.is_empty(), "{stream}{found:#?}");
    }
    let read = |lines: &[String]| reading::read_bytes(format!("{}\n", lines.join("\n")).as_bytes());
    // The header is a record of the stream: a prefix through it is empty.
    let outcome = read(&streams[0]);
    assert_eq!(
        outcome.reading.records["r1"].originality,
        reading::Originality::Original
    );
    // A second session line is a record, not the header and not nothing.
    let outcome = read(&streams[1]);
    assert_eq!(
        outcome.reading.records["h2"].kind.as_deref(),
        Some("session")
    );
    assert!(!outcome.reading.records.contains_key("h"));
    // A declaration's lineage counts with or without its id.
    let outcome = read(&streams[2]);
    assert_eq!(outcome.reading.session.root, reading::Tri::No);
    assert_eq!(outcome.reading.session.unresolved, ["codex:earlier"]);
    // A namespace that holds a control character is named escaped, in either case of hex.
    let outcome = read(&streams[5]);
    assert!(outcome.reading.session.unresolved.is_empty());
}
