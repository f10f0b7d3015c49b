//! The README's example of the library, kept compiling and running (`cargo test` builds it,
//! `cargo run -p asr-suite --example library` runs it); `suite/tests/it/readme.rs` keeps the
//! README's copy the same.

use asr_suite::catalog::Catalog;
use asr_suite::check::{CheckOptions, check_bytes};
use asr_suite::reading::{Originality, read_bytes, scan};

fn main() {
    let stream = concat!(
        r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"codex"},"sessionId":"s1","lineage":{"inherits":{"mode":"none","evidence":"native_field"}}}"#,
        "\n",
        r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[{"type":"text","text":"Fix the parser."}]}"#,
        "\n",
    );

    // Validate: findings are data (rule, severity, line, seq, id, JSON Pointer, message).
    let report = check_bytes(stream.as_bytes(), &CheckOptions::default());
    assert!(report.valid());
    for finding in &report.diagnostics {
        let summary = Catalog::embedded().summary(finding.rule.as_str());
        println!(
            "{}:{} {}",
            finding.line,
            finding.rule,
            summary.unwrap_or("")
        );
    }

    // Read, as the spec says a reader must: originality, context view, delivery, parts.
    let outcome = read_bytes(stream.as_bytes());
    assert!(outcome.accepted);
    assert_eq!(
        outcome.reading.records["r1"].originality,
        Originality::Original
    );

    // The same reading for a stream of any size: a scan that keeps no text, then each record's
    // line read again (from a file, or any `Read + Seek`).
    let scanned = scan(stream.as_bytes(), 64 << 20).expect("read");
    let mut json = Vec::new();
    scanned
        .write_reading(std::io::Cursor::new(stream), &mut json, false, 0)
        .expect("written");
    assert_eq!(json, serde_json::to_vec(&outcome.reading).expect("json"));
}
