//! The two-pass reading (a scan that keeps no text, then each record's line read again)
//! writes exactly what the one-pass reader's [`Reading`] serializes to, on every stream of
//! the corpus, pretty and compact, and says why it refuses what it refuses.

use asr_suite::reading::{read_bytes, scan};
use std::io::Cursor;
use std::path::{Path, PathBuf};

fn streams(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("corpus").flatten() {
        let path = entry.path();
        if path.is_dir() {
            streams(&path, found);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            found.push(path);
        }
    }
}

fn written(bytes: &[u8], pretty: bool, depth: usize, max_line: usize) -> (bool, String) {
    let scanned = scan(bytes, max_line).expect("scans");
    let accepted = scanned.accepted();
    let mut out = Vec::new();
    scanned
        .write_reading(Cursor::new(bytes), &mut out, pretty, depth)
        .expect("writes");
    (accepted, String::from_utf8(out).expect("utf-8"))
}

#[test]
fn the_two_passes_write_what_one_pass_reads_on_every_stream_of_the_corpus() {
    let mut files = Vec::new();
    streams(&crate::helpers::corpus(), &mut files);
    assert!(files.len() > 300, "{} streams", files.len());
    for file in files {
        let bytes = std::fs::read(&file).expect("stream");
        let whole = read_bytes(&bytes);
        let (accepted, compact) = written(&bytes, false, 0, usize::MAX);
        assert_eq!(accepted, whole.accepted, "{}", file.display());
        assert_eq!(
            compact,
            serde_json::to_string(&whole.reading).expect("json"),
            "{}",
            file.display()
        );
        let (_, pretty) = written(&bytes, true, 1, usize::MAX);
        let expected = serde_json::to_string_pretty(&whole.reading)
            .expect("json")
            .replace('\n', "\n  ");
        assert_eq!(pretty, expected, "{}", file.display());
    }
}

#[test]
fn refusals_say_which_line_and_why() {
    let header = r#"{"type":"session","seq":0,"id":"h","agent":{"name":"codex"},"sessionId":"s1"}"#;
    let text = format!(
        "{header}\nnot json\n[1]\n{}\n",
        r#"{"type":"message","seq":3,"id":"r3","messageId":"m","role":"user","content":[{"type":"text","text":"a long text"}]}"#
    );
    let scanned = scan(text.as_bytes(), 40).expect("scans");
    assert!(!scanned.accepted());
    let refusals = scanned.refusals();
    let lines: Vec<usize> = refusals.iter().map(|r| r.line).collect();
    assert_eq!(lines, [1, 2, 3, 4], "{refusals:?}");
    assert!(
        refusals[0].reason.contains("--max-line-bytes"),
        "the header is too long at 40"
    );
    assert!(refusals[1].reason.contains("not JSON"));
    assert!(refusals[2].reason.contains("not a JSON object"));
    let first = scan(&b"{\"type\":\"message\",\"id\":\"r1\"}\n"[..], 1 << 20).expect("scans");
    assert!(first.refusals()[0].reason.contains("`session` header"));
    let empty = scan(&b""[..], 1 << 20).expect("scans");
    assert!(!empty.accepted());
    assert!(empty.refusals()[0].reason.contains("empty"));
    let many = format!("{header}\n{}", "x\n".repeat(500));
    let refusals = scan(many.as_bytes(), 1 << 20).expect("scans").refusals();
    assert_eq!(refusals.len(), 101, "bounded");
    assert!(
        refusals[100].reason.contains("400 more"),
        "{:?}",
        refusals[100]
    );
}
