//! Checking a stream on several threads reports exactly what one thread does: the same
//! findings in the same order, the same counts and summary, whatever the stream holds
//! (findings on every kind of line, references forward and back across batches, lines
//! over the limit, a reader that fails midway).

use asr_suite::check::{CheckOptions, StreamReport, check_reader};
use asr_suite::generate::{Shape, realistic_stream};
use std::io::{self, Read};

fn options(threads: usize, max_line_bytes: usize) -> CheckOptions {
    let mut options = CheckOptions::default();
    options.threads = threads;
    options.max_line_bytes = max_line_bytes;
    options
}

fn same(a: &StreamReport, b: &StreamReport) {
    assert_eq!(a.records, b.records);
    assert_eq!(a.diagnostics, b.diagnostics);
    assert_eq!(a.summary.own_session, b.summary.own_session);
    assert_eq!(a.summary.named_sessions, b.summary.named_sessions);
    assert_eq!(a.summary.announcements, b.summary.announcements);
}

/// A few MB of generated records with every tenth line broken in one of several ways.
fn troubled_stream() -> Vec<u8> {
    let mut clean = Vec::new();
    realistic_stream(&mut clean, Shape::bytes(7, 3 << 20)).expect("generated");
    let mut out = Vec::new();
    for (n, line) in clean
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        let text = String::from_utf8_lossy(line);
        let broken = match n % 50 {
            10 => text.replacen(r#""seq":"#, r#""seq":-"#, 1),
            20 => text.replacen(r#""supersedes":"r"#, r#""supersedes":"x"#, 1),
            30 => "not json at all".to_owned(),
            40 => format!("{text}\r"),
            45 => text.replacen(
                r#""type":"message""#,
                r#""type":"message","type":"plan""#,
                1,
            ),
            _ => text.into_owned(),
        };
        out.extend_from_slice(broken.as_bytes());
        out.push(b'\n');
        if n % 997 == 0 {
            // A line over the limit set below, and one with a byte that is no UTF-8.
            out.extend_from_slice(&vec![b'x'; 300 << 10]);
            out.extend_from_slice(b"\n\xff\n");
        }
    }
    out
}

#[test]
fn several_threads_report_what_one_does() {
    let stream = troubled_stream();
    let one = check_reader(stream.as_slice(), &options(1, 256 << 10)).expect("read");
    assert!(one.diagnostics.len() > 100, "{}", one.diagnostics.len());
    assert!(one.diagnostics.iter().any(|d| d.rule == "ASR-X-006"));
    for threads in [2, 3, 8] {
        let many = check_reader(stream.as_slice(), &options(threads, 256 << 10)).expect("read");
        same(&one, &many);
    }
}

/// Fails after `left` bytes.
struct Failing<'a> {
    bytes: &'a [u8],
    left: usize,
}

impl Read for Failing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Err(io::Error::other("the disk went away"));
        }
        let n = buf.len().min(self.left).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        self.left -= n;
        Ok(n)
    }
}

#[test]
fn a_reader_that_fails_midway_is_an_error_on_any_number_of_threads() {
    let stream = troubled_stream();
    for threads in [1, 2, 4] {
        let failing = Failing {
            bytes: &stream,
            left: stream.len() / 2,
        };
        let error = check_reader(failing, &options(threads, 1 << 20)).expect_err("fails");
        assert!(error.to_string().contains("the disk went away"), "{error}");
    }
}

/// Every stream of the corpus one after the other, several times over: records of every
/// kind the corpus has (lineage, mirrors, copies, plans, delegations), so that what the
/// threads pass on of a record is shown to be all the checks across records read.
#[test]
fn the_corpus_run_together_reports_the_same_on_any_number_of_threads() {
    let cases = crate::helpers::cases();
    let mut stream = Vec::new();
    for _ in 0..4 {
        for case in &cases {
            for (_, path) in &case.streams {
                stream.extend(std::fs::read(path).expect("a stream"));
                if stream.last() != Some(&b'\n') {
                    stream.push(b'\n');
                }
            }
        }
    }
    assert!(stream.len() > 4 * (256 << 10), "{} bytes", stream.len());
    let one = check_reader(stream.as_slice(), &options(1, 1 << 20)).expect("read");
    let two = check_reader(stream.as_slice(), &options(2, 1 << 20)).expect("read");
    assert!(one.diagnostics.len() > 1000, "{}", one.diagnostics.len());
    same(&one, &two);
}
