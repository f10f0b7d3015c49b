//! Untrusted input: every kind of broken stream gets a clear finding with its line and rule,
//! the check goes on with the next line where that makes sense, and nothing panics or hangs.

use asr_suite::check::{CheckOptions, StreamReport, check_bytes, check_reader};
use asr_suite::diagnostic::Severity;

const HEADER: &str = r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"codex"},"sessionId":"019a3c2e"}"#;

fn message(seq: u64) -> String {
    format!(
        r#"{{"type":"message","seq":{seq},"id":"r{seq}","messageId":"m{seq}","role":"user","content":[{{"type":"text","text":"hi"}}]}}"#
    )
}

fn check(bytes: &[u8]) -> StreamReport {
    check_bytes(bytes, &CheckOptions::default())
}

/// (rule, line, severity) of every finding.
fn found(report: &StreamReport) -> Vec<(String, usize, Severity)> {
    report
        .diagnostics
        .iter()
        .map(|d| (d.rule.to_string(), d.line, d.severity))
        .collect()
}

fn errors(report: &StreamReport) -> Vec<(String, usize)> {
    report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| (d.rule.to_string(), d.line))
        .collect()
}

fn stream(lines: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in lines {
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    out
}

#[test]
fn a_valid_stream_has_no_finding() {
    let report = check(&stream(&[HEADER, &message(1), &message(2)]));
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    assert_eq!(report.records, 3);
    assert!(report.valid());
}

#[test]
fn an_empty_file_is_reported_at_line_1() {
    let report = check(b"");
    assert_eq!(errors(&report), [("ASR-X-007".into(), 1)]);
    assert!(report.diagnostics[0].message.contains("empty"));
    assert_eq!(report.records, 0);
}

#[test]
fn a_stream_without_a_header_is_reported_once() {
    let report = check(&stream(&[&message(1), &message(2)]));
    assert_eq!(errors(&report), [("ASR-X-007".into(), 1)]);
}

#[test]
fn a_header_that_is_not_first_is_reported_once_at_the_first_record() {
    let report = check(&stream(&[&message(1), HEADER, &message(2)]));
    // seq 0 after seq 1 is also out of order; the late header is read as the header.
    assert_eq!(
        errors(&report),
        [("ASR-X-007".into(), 1), ("ASR-X-008".into(), 2)]
    );
}

#[test]
fn a_second_header_is_reported() {
    let second = HEADER.replace(r#""seq":0,"id":"h""#, r#""seq":2,"id":"h2""#);
    let report = check(&stream(&[HEADER, &message(1), &second]));
    let errs = errors(&report);
    assert!(errs.contains(&("ASR-X-007".into(), 3)), "{errs:?}");
}

#[test]
fn invalid_json_is_reported_and_the_next_line_is_still_checked() {
    let bad_next = message(3).replace(r#""role":"user","#, "");
    let report = check(&stream(&[
        HEADER,
        r#"{"type":"message","seq":1,"#,
        &message(2),
        &bad_next,
    ]));
    let errs = errors(&report);
    assert_eq!(errs, [("ASR-X-003".into(), 2), ("ASR-200".into(), 4)]);
    assert!(
        report.diagnostics[0].message.contains("not valid JSON"),
        "{}",
        report.diagnostics[0].message
    );
    assert!(report.diagnostics[0].message.contains("column"));
    assert_eq!(report.records, 3);
}

#[test]
fn values_that_are_not_objects_and_empty_lines_are_reported() {
    let report = check(&stream(&[
        HEADER,
        "[1,2]",
        "",
        "  ",
        "\"text\"",
        &message(1),
    ]));
    assert_eq!(
        errors(&report),
        [
            ("ASR-X-003".into(), 2),
            ("ASR-X-003".into(), 3),
            ("ASR-X-003".into(), 4),
            ("ASR-X-003".into(), 5)
        ]
    );
}

#[test]
fn invalid_utf8_is_reported_with_its_offset_and_the_next_line_is_checked() {
    let mut bytes = stream(&[HEADER]);
    bytes.extend_from_slice(b"{\"type\":\"message\",\"text\":\"caf\xE9\"}\n");
    bytes.extend_from_slice(message(2).as_bytes());
    bytes.push(b'\n');
    let report = check(&bytes);
    assert_eq!(errors(&report), [("ASR-X-001".into(), 2)]);
    assert!(
        report.diagnostics[0].message.contains("byte 30"),
        "{}",
        report.diagnostics[0].message
    );
    assert_eq!(report.records, 2);
}

#[test]
fn a_byte_order_mark_is_reported_and_line_1_is_checked_without_it() {
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend_from_slice(&stream(&[HEADER, &message(1)]));
    let report = check(&bytes);
    assert_eq!(errors(&report), [("ASR-X-002".into(), 1)]);
    assert_eq!(report.records, 2);
}

#[test]
fn crlf_line_endings_are_accepted_noted_once_and_leave_text_alone() {
    let text = message(1).replace("\"hi\"", "\"line one\\r\\nline two\"");
    let bytes = format!("{HEADER}\r\n{text}\r\n{}\r\n", message(2));
    let report = check(bytes.as_bytes());
    assert_eq!(found(&report), [("ASR-X-019".into(), 1, Severity::Notice)]);
    assert!(report.valid());
}

#[test]
fn a_truncated_last_line_is_named_as_such() {
    let full = message(2);
    let bytes = format!("{HEADER}\n{}\n{}", message(1), &full[..full.len() - 10]);
    let report = check(bytes.as_bytes());
    assert_eq!(errors(&report), [("ASR-X-003".into(), 3)]);
    assert!(
        report.diagnostics[0].message.contains("truncated"),
        "{}",
        report.diagnostics[0].message
    );
}

#[test]
fn a_complete_last_line_without_newline_is_fine() {
    let bytes = format!("{HEADER}\n{}", message(1));
    assert!(check(bytes.as_bytes()).diagnostics.is_empty());
}

#[test]
fn a_100_mb_line_over_the_limit_is_skipped_without_being_kept() {
    let huge = format!(
        r#"{{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"tool","content":[{{"type":"text","text":"{}"}}]}}"#,
        "x".repeat(100 << 20)
    );
    let bytes = format!("{HEADER}\n{huge}\n{}\n", message(2));
    let report = check_reader(bytes.as_bytes(), &CheckOptions::default()).expect("in-memory read");
    assert_eq!(errors(&report), [("ASR-X-006".into(), 2)]);
    assert!(report.diagnostics[0].message.contains("--max-line-bytes"));
    assert_eq!(report.records, 2);
    // With the limit raised, the same line is checked like any other.
    let mut options = CheckOptions::default();
    options.max_line_bytes = 128 << 20;
    let report = check_reader(bytes.as_bytes(), &options).expect("in-memory read");
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    assert_eq!(report.records, 3);
}

#[test]
fn nesting_10000_deep_is_reported_not_overflowed() {
    let deep = format!(
        r#"{{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[{{"type":"data","data":{}{}}}]}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let report = check(&stream(&[HEADER, &deep, &message(2)]));
    assert_eq!(errors(&report), [("ASR-X-006".into(), 2)]);
    assert!(report.diagnostics[0].message.contains("128"));
}

#[test]
fn duplicate_keys_are_reported_with_their_pointer() {
    let dup = message(1).replace(r#""role":"user""#, r#""role":"user","role":"assistant""#);
    let report = check(&stream(&[HEADER, &dup]));
    assert_eq!(errors(&report), [("ASR-X-004".into(), 2)]);
    assert_eq!(report.diagnostics[0].pointer, "/role");
}

#[test]
fn numbers_beyond_a_double_are_reported_and_beyond_i64_do_not_pass_as_seq() {
    let overflow = message(1).replace(r#""text":"hi""#, r#""text":"hi","size":1e400"#);
    let report = check(&stream(&[HEADER, &overflow]));
    assert_eq!(errors(&report), [("ASR-X-005".into(), 2)]);
    let big_seq = message(1).replace(r#""seq":1"#, r#""seq":99999999999999999999999"#);
    let report = check(&stream(&[HEADER, &big_seq]));
    assert_eq!(errors(&report), [("ASR-X-008".into(), 2)]);
    assert_eq!(report.diagnostics[0].pointer, "/seq");
}

#[test]
fn seq_that_is_not_an_integer_or_does_not_increase_is_reported() {
    let text_seq = message(1).replace(r#""seq":1"#, r#""seq":"1""#);
    let float_seq = message(2).replace(r#""seq":2"#, r#""seq":2.5"#);
    let negative = message(3).replace(r#""seq":3"#, r#""seq":-3"#);
    let report = check(&stream(&[
        HEADER,
        &text_seq,
        &float_seq,
        &negative,
        &message(5),
        &message(4),
        &message(5).replace("r5", "r5b"),
    ]));
    assert_eq!(
        errors(&report),
        [
            ("ASR-X-008".into(), 2),
            ("ASR-X-008".into(), 3),
            ("ASR-X-008".into(), 4),
            ("ASR-X-008".into(), 6),
            ("ASR-X-008".into(), 7)
        ]
    );
    assert!(
        report.diagnostics[3]
            .message
            .contains("not higher than seq 5 at line 5"),
        "{}",
        report.diagnostics[3].message
    );
}

#[test]
fn duplicate_ids_are_reported_with_the_first_line() {
    let again = message(2).replace(r#""id":"r2""#, r#""id":"r1""#);
    let report = check(&stream(&[HEADER, &message(1), &again]));
    assert_eq!(errors(&report), [("ASR-X-009".into(), 3)]);
    assert!(report.diagnostics[0].message.contains("line 2"));
}

#[test]
fn binary_garbage_does_not_panic() {
    let mut bytes: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
    bytes.extend_from_slice(b"\n\0\0\0\n\r\r\r\n\xFF\n");
    let report = check(&bytes);
    assert!(!report.valid());
    assert!(report.diagnostics.iter().all(|d| d.line >= 1));
}

#[test]
fn switching_inferred_checks_off_keeps_only_asr_rules() {
    let bad_next = message(2).replace(r#""role":"user","#, "");
    let bytes = stream(&[r#"{"type":"message""#, &bad_next]);
    let mut options = CheckOptions::default();
    options.inferred = false;
    let report = check_bytes(&bytes, &options);
    assert_eq!(errors(&report), [("ASR-200".into(), 2)]);
    let mut options = CheckOptions::default();
    options.disabled.insert("ASR-200".into());
    let report = check_bytes(&bytes, &options);
    assert!(errors(&report).iter().all(|(rule, _)| rule != "ASR-200"));
    assert!(!errors(&report).is_empty());
}

#[test]
fn a_flood_of_findings_is_capped_but_still_counts() {
    use asr_suite::check::{MAX_PER_LINE, MAX_PER_STREAM};
    // One line with 5,000 broken parts (each an image without mimeType).
    let parts = vec![r#"{"type":"image"}"#; 5_000].join(",");
    let flood = format!(
        r#"{{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[{parts}]}}"#
    );
    let report = check(&stream(&[HEADER, &flood, &message(2)]));
    let on_line: Vec<_> = report.diagnostics.iter().filter(|d| d.line == 2).collect();
    assert_eq!(on_line.len(), MAX_PER_LINE + 1);
    let last = on_line.last().expect("a summary");
    assert_eq!(last.rule, "ASR-212");
    assert!(
        last.message
            .contains("more findings on this line are not listed"),
        "{}",
        last.message
    );
    assert!(!report.valid());
    // A stream of 30,000 broken lines lists at most MAX_PER_STREAM findings plus one summary.
    let bad = message(1).replace(r#""role":"user","#, "");
    let mut lines = vec![HEADER.to_owned()];
    for seq in 1..=30_000u64 {
        lines.push(bad.replace(
            r#""seq":1,"id":"r1""#,
            &format!(r#""seq":{seq},"id":"r{seq}""#),
        ));
    }
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let report = check(&stream(&refs));
    assert_eq!(report.diagnostics.len(), MAX_PER_STREAM + 1);
    assert!(
        report
            .diagnostics
            .last()
            .expect("summary")
            .message
            .contains("20000 more findings in this stream")
    );
    // Duplicate names in their thousands are capped too.
    let members: Vec<String> = (0..5_000).map(|_| r#""k":1"#.to_owned()).collect();
    let dups = format!(r#"{{"type":"x","seq":1,"id":"r1",{}}}"#, members.join(","));
    let report = check(&stream(&[HEADER, &dups]));
    assert_eq!(
        report
            .diagnostics
            .iter()
            .filter(|d| d.rule == "ASR-X-004")
            .count(),
        MAX_PER_LINE + 1
    );
}

#[test]
fn a_header_after_a_record_is_reported_once_and_still_read() {
    let header_with_conversation =
        HEADER.replace(r#""sessionId""#, r#""conversations":["c1"],"sessionId""#);
    let in_conversation =
        message(2).replace(r#""role":"user""#, r#""role":"user","conversation":"c1""#);
    let report = check(&stream(&[
        "not json",
        &header_with_conversation,
        &in_conversation,
    ]));
    // Line 1 is broken; the header that follows counts as the header, and declares c1.
    assert_eq!(errors(&report), [("ASR-X-003".into(), 1)]);
}

/// Six hundred random corruptions of a realistic stream, through the fuzz targets that take a
/// stream: the checker never panics, every finding is on a line of the stream and under a
/// known rule, checking twice (and from a reader) gives the same findings, and the reader
/// accepts what the checker finds whole at envelope level.
#[test]
fn random_corruptions_hold_the_stream_targets() {
    use asr_suite::fuzz::targets;
    use asr_suite::generate::{Shape, realistic_stream};
    let mut base = Vec::new();
    realistic_stream(&mut base, Shape::turns(3, 12, 1)).expect("in-memory write");
    let mut state: u64 = 0x5EED;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let pieces: &[&[u8]] = &[
        b"\"",
        b"{",
        b"}",
        b"[",
        b"]",
        b",",
        b":",
        b"\n",
        b"\r\n",
        b"\\",
        b"\xEF\xBB\xBF",
        b"\xFF",
        b"null",
        b"\"supersedes\":\"r1\",",
        b"\"seq\":0,",
        b"\"type\":\"session\",",
        b"1e999",
        b"\"id\":\"r2\",",
    ];
    for _ in 0..600 {
        let mut bytes = base.clone();
        for _ in 0..=next() % 4 {
            let at = usize::try_from(next() % bytes.len() as u64).unwrap_or(0);
            match next() % 4 {
                0 => bytes[at] = u8::try_from(next() % 256).unwrap_or(0),
                1 => {
                    let piece = pieces[usize::try_from(next() % pieces.len() as u64).unwrap_or(0)];
                    bytes.splice(at..at, piece.iter().copied());
                }
                2 => bytes.truncate(at.max(1)),
                _ => {
                    let end = (at + usize::try_from(next() % 64).unwrap_or(0)).min(bytes.len());
                    bytes.drain(at..end);
                }
            }
        }
        targets::check_bytes(&bytes);
        targets::read_vs_check(&bytes);
    }
}
