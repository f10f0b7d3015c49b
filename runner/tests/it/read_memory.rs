//! `asr-ctk read` holds no stream whole: its peak memory stays far below the size of what it
//! reads. The test runs in a process of its own, so that the peak it reads
//! (RUSAGE_CHILDREN) is of the child it starts and of no other test's.

use crate::helpers::{BIN, alone, scratch};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

#[test]
fn read_memory_does_not_grow_with_the_text_of_the_stream() {
    if !alone("read_memory::read_memory_does_not_grow_with_the_text_of_the_stream") {
        return;
    }
    let dir = scratch("read-memory");
    let path = dir.join("big.jsonl");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("stream"));
    writeln!(
        file,
        r#"{{"type":"session","seq":0,"id":"h","agent":{{"name":"codex"}},"sessionId":"s1","lineage":{{"inherits":{{"mode":"none","evidence":"native_field"}}}}}}"#
    )
    .expect("write");
    let text = "word ".repeat(40_000);
    let records = 600;
    for seq in 1..=records {
        writeln!(
            file,
            r#"{{"type":"message","seq":{seq},"id":"r{seq}","messageId":"m{seq}","role":"assistant","content":[{{"type":"text","text":"{text}"}},{{"type":"reasoning","visibility":"summary","summary":["{text}"]}}]}}"#
        )
        .expect("write");
    }
    drop(file);
    let size = std::fs::metadata(&path).expect("stream").len();
    assert!(size > 200 << 20, "{size} bytes");
    let status = Command::new(BIN)
        .args(["read", "--compact"])
        .arg(&path)
        .stdout(Stdio::null())
        .status()
        .expect("asr-ctk runs");
    assert_eq!(status.code(), Some(0));
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("rusage");
    // ru_maxrss is in KiB on Linux.
    let peak = u64::try_from(usage.max_rss()).unwrap_or(0) * 1024;
    assert!(
        peak < size / 4,
        "peak memory {peak} bytes reading a stream of {size} bytes"
    );
}

/// `asr-ctk read ARGS` under a deadline and a limit on the size of the files it writes
/// (`prlimit --fsize`: a write past it fails), `stdin` its input, its temporary files in
/// `tmp`.
fn read_with_file_limit(fsize: u64, args: &[&str], stdin: Stdio, tmp: &Path) -> Output {
    Command::new("timeout")
        .arg("60")
        .arg("prlimit")
        .arg(format!("--fsize={fsize}"))
        .arg("--")
        .arg(BIN)
        .arg("read")
        .args(args)
        .env("TMPDIR", tmp)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("timeout, prlimit and asr-ctk run")
}

#[test]
fn reading_dev_zero_ends_at_the_spool_bound_with_an_error_and_writes_under_a_megabyte() {
    let dir = scratch("read-dev-zero");
    let output = read_with_file_limit(1 << 20, &["/dev/zero"], Stdio::null(), &dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    for said in ["/dev/zero", "line 1", "17179869184", "--max-spool-bytes"] {
        assert!(stderr.contains(said), "{said}: {stderr}");
    }
    assert!(output.stdout.is_empty());
}

#[test]
fn a_piped_stream_is_read_without_copying_its_line_over_the_limit() {
    let dir = scratch("read-pipe-long-line");
    let path = dir.join("stream.jsonl");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("stream"));
    writeln!(
        file,
        r#"{{"type":"session","seq":0,"id":"h","agent":{{"name":"codex"}},"sessionId":"s1"}}"#
    )
    .expect("write");
    writeln!(
        file,
        r#"{{"type":"message","seq":1,"id":"r1","messageId":"m","role":"user","content":[{{"type":"text","text":"hi"}}]}}"#
    )
    .expect("write");
    let chunk = "x".repeat(1 << 20);
    for _ in 0..10 {
        file.write_all(chunk.as_bytes()).expect("write");
    }
    writeln!(file).expect("write");
    drop(file);
    let output = read_with_file_limit(
        1 << 20,
        &["--compact", "--max-line-bytes", "100000", "-"],
        std::fs::File::open(&path).expect("stream").into(),
        &dir,
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).expect("a reading");
    assert_eq!(answer["accepted"], false);
    assert_eq!(
        answer["reading"]["records"]["r1"]["parts"][0]["index"][0],
        "hi"
    );
    let reasons = answer["reasons"].to_string();
    assert!(
        reasons.contains("line 3") && reasons.contains("--max-line-bytes"),
        "{reasons}"
    );
}
