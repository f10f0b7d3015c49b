//! `asr-ctk validate` shows its progress on a terminal, and only there.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const HEADER: &str = r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"codex"},"sessionId":"019a3c2e"}"#;
const MESSAGE: &str = r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[{"type":"text","text":"Fix the failing parser test."}]}"#;

/// util-linux `script`, which runs a command on a pseudo-terminal of its own.
const SCRIPT: &str = "/usr/bin/script";

/// A directory of its own for one test, removed at the end.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let path =
            std::env::temp_dir().join(format!("asr-ctk-progress-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temp dir");
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs a shell command line on a pseudo-terminal: what it prints there is the output.
fn on_a_terminal(command: &str) -> Output {
    Command::new(SCRIPT)
        .args(["-qfec", command, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("script runs")
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
    let d = TempDir::new("bar");
    let stream = d.0.join("stream.jsonl");
    let text = format!("{HEADER}\n{MESSAGE}\n");
    std::fs::write(&stream, &text).expect("write stream");
    let bin = quoted(Path::new(env!("CARGO_BIN_EXE_asr-ctk")));
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
    let piped = Command::new(env!("CARGO_BIN_EXE_asr-ctk"))
        .arg("validate")
        .arg(&stream)
        .stdin(Stdio::null())
        .output()
        .expect("asr-ctk runs");
    assert_eq!(piped.status.code(), Some(0), "{piped:?}");
    assert!(piped.stderr.is_empty(), "{piped:?}");
    assert!(String::from_utf8_lossy(&piped.stdout).contains("valid, 2 records"));
}
