//! `asr-ctk read` holds no stream whole: its peak memory stays far below the size of what it
//! reads. The test runs in a process of its own, so that the peak it reads
//! (RUSAGE_CHILDREN) is of the child it starts and of no other test's.

use crate::helpers::{BIN, alone, scratch};
use std::io::Write;
use std::process::{Command, Stdio};

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
