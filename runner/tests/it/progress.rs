//! `asr-ctk validate` shows its progress on a terminal, and only there.

use crate::helpers::{BIN, asr_ctk, run, scratch};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

const HEADER: &str = r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"codex"},"sessionId":"019a3c2e"}"#;
const MESSAGE: &str = r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[{"type":"text","text":"Fix the failing parser test."}]}"#;

/// util-linux `script`, which runs a command on a pseudo-terminal of its own.
const SCRIPT: &str = "/usr/bin/script";

/// Runs a shell command line on a pseudo-terminal: what it prints there is the output.
fn on_a_terminal(command: &str) -> Output {
    run(
        Command::new(SCRIPT).args(["-qfec", command, "/dev/null"]),
        None,
        Duration::from_secs(60),
    )
}

fn quoted(path: &Path) -> String {
    format!("'{}'", path.display())
}

#[test]
fn progress_is_shown_on_a_terminal_and_nothing_is_added_elsewhere() {
    if !Path::new(SCRIPT).exists() {
        eprintln!("{SCRIPT} (util-linux) is not installed: the terminal is not tested");
        return;
    }
    let d = scratch("progress-bar");
    let stream = d.join("stream.jsonl");
    let text = format!("{HEADER}\n{MESSAGE}\n");
    std::fs::write(&stream, &text).expect("write stream");
    let bin = quoted(Path::new(BIN));
    let size = text.len();
    // Only stderr reaches the terminal: the findings go to /dev/null.
    let named = on_a_terminal(&format!("{bin} validate {} >/dev/null", quoted(&stream)));
    assert_eq!(named.status.code(), Some(0), "{named:?}");
    let shown = String::from_utf8_lossy(&named.stdout);
    assert!(
        shown.contains(&format!("{size} B/{size} B, 2 lines")) && shown.contains("/stream.jsonl"),
        "{shown:?}"
    );
    // Standard input redirected from a file: its size is known too.
    let redirected = on_a_terminal(&format!("{bin} validate - <{} >/dev/null", quoted(&stream)));
    let shown = String::from_utf8_lossy(&redirected.stdout);
    assert!(
        shown.contains(&format!("{size} B/{size} B, 2 lines")),
        "{shown:?}"
    );
    // Off a terminal, stderr has nothing but what it had before.
    let piped = asr_ctk(&[Path::new("validate"), stream.as_path()]);
    assert_eq!(piped.status.code(), Some(0), "{piped:?}");
    assert!(piped.stderr.is_empty(), "{piped:?}");
    assert!(String::from_utf8_lossy(&piped.stdout).contains("valid, 2 records"));
}
