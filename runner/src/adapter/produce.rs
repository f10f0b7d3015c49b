//! A producer case in one-shot mode (PROTOCOL.md, "One-shot mode"): the source's files in a
//! temporary directory of their own, the command run with their paths as arguments, and the
//! streams it wrote read back from its output directory or its stdout.

use super::{self as adapter, Fault, Input, Talk};
use asr_suite::case::Case;
use asr_suite::protocol::{MAX_OUTPUTS, Reply};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What a one-shot producer answered.
pub enum Produced {
    /// The streams it wrote: name (a file's stem; `""` for stdout and `stream.jsonl`) and bytes.
    Outputs(Vec<(String, Vec<u8>)>),
    /// A reply it printed instead: `skipped`, `error`, or `answered` with `outputs`.
    Reply(Reply),
}

/// Runs the producer command on a case's source files.
pub fn oneshot(
    argv: &[String],
    case: &Case,
    format: &str,
    talk: Talk<'_>,
) -> (Result<Produced, Fault>, String) {
    let work = match WorkDir::new() {
        Ok(work) => work,
        Err(e) => {
            let fault = Fault::Crash(format!(
                "the kit failed to make a directory for the source: {e}"
            ));
            return (Err(fault), String::new());
        }
    };
    let (source, output) = (work.0.join("source"), work.0.join("output"));
    let mut command = argv.to_vec();
    for (name, path) in &case.streams {
        let copy = source.join(name);
        if let Err(e) = std::fs::copy(path, &copy) {
            let fault = Fault::Crash(format!(
                "the kit failed to copy {} for the producer: {e}",
                path.display()
            ));
            return (Err(fault), String::new());
        }
        command.push(copy.to_string_lossy().into_owned());
    }
    let env = [
        ("ASR_CTK_ROLE", "producer".to_owned()),
        ("ASR_CTK_CASE", case.name.clone()),
        ("ASR_CTK_CASE_ID", case.sidecar.id.clone()),
        ("ASR_CTK_RULES", case.sidecar.rules.join(",")),
        ("ASR_CTK_FORMAT", format.to_owned()),
        ("ASR_CTK_SOURCE_DIR", source.to_string_lossy().into_owned()),
        ("ASR_CTK_OUTPUT_DIR", output.to_string_lossy().into_owned()),
    ];
    let (ran, mut stderr) = adapter::oneshot_output(&command, &env, &Input::Bytes(b""), talk);
    let answer = ran.and_then(|ran| {
        let written = streams_in(&output, talk.max_reply_bytes)?;
        if !written.is_empty() {
            return Ok(Produced::Outputs(written));
        }
        if ran.bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(Fault::Crash(format!(
                "{} without answering: no stream on stdout or in ASR_CTK_OUTPUT_DIR",
                ran.exit
            )));
        }
        let line = ran.bytes.strip_suffix(b"\n").unwrap_or(&ran.bytes);
        if is_reply(line) {
            adapter::reply_line(line, talk).map(Produced::Reply)
        } else {
            Ok(Produced::Outputs(vec![(String::new(), ran.bytes)]))
        }
    });
    if let Err(left) = work.remove() {
        // Said on the console and kept with the case's stderr, so that the report says it too.
        eprintln!("asr-ctk: {left}");
        if !stderr.is_empty() && !stderr.ends_with('\n') {
            stderr.push('\n');
        }
        for piece in ["[asr-ctk: ", left.as_str(), "]\n"] {
            stderr.push_str(piece);
        }
    }
    (answer, stderr)
}

/// Whether stdout is one reply line (`answered`, `skipped`, `error`) rather than a stream:
/// a stream's first record is a header, never of those types.
fn is_reply(line: &[u8]) -> bool {
    !line.contains(&b'\n')
        && serde_json::from_slice::<serde_json::Value>(line).is_ok_and(|v| {
            matches!(
                v.get("type").and_then(serde_json::Value::as_str),
                Some("answered" | "skipped" | "error")
            )
        })
}

/// The `.jsonl` files the producer wrote into `dir` (regular files only; other names and
/// kinds are ignored), at most `max` bytes in all.
fn streams_in(dir: &Path, max: usize) -> Result<Vec<(String, Vec<u8>)>, Fault> {
    let mut streams = Vec::new();
    let mut total = 0usize;
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Fault::Crash(format!("its output directory could not be read: {e}")))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let regular = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".jsonl") else {
            continue;
        };
        if !regular {
            continue;
        }
        let size = entry.metadata().map_or(0, |m| m.len());
        total = total.saturating_add(usize::try_from(size).unwrap_or(usize::MAX));
        if total > max {
            return Err(Fault::Protocol(format!(
                "the streams it wrote are longer than {max} bytes in all (--max-reply-bytes)"
            )));
        }
        let bytes = std::fs::read(&path)
            .map_err(|e| Fault::Crash(format!("the stream {name:?} could not be read: {e}")))?;
        let stem = if stem == "stream" { "" } else { stem };
        streams.push((stem.to_owned(), bytes));
        if streams.len() > MAX_OUTPUTS {
            return Err(Fault::Protocol(format!(
                "it wrote more than {MAX_OUTPUTS} streams into its output directory"
            )));
        }
    }
    streams.sort();
    Ok(streams)
}

/// A directory of the kit's for one producer case, removed however the case ends.
struct WorkDir(PathBuf, bool);

impl WorkDir {
    fn new() -> std::io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "asr-ctk-produce-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir)?;
        let work = WorkDir(dir, false);
        std::fs::create_dir(work.0.join("source"))?;
        std::fs::create_dir(work.0.join("output"))?;
        Ok(work)
    }
}

impl WorkDir {
    /// Removes the directory, or says what is left and why (a file the producer made that
    /// cannot be deleted, say one it made immutable).
    fn remove(mut self) -> Result<(), String> {
        self.1 = true;
        std::fs::remove_dir_all(&self.0).map_err(|e| {
            format!(
                "failed to remove the producer's directory {}: {e}; it is left behind",
                self.0.display()
            )
        })
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if !self.1 {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_line_is_told_from_a_stream() {
        assert!(is_reply(br#"{"type":"skipped","reason":"no"}"#));
        assert!(is_reply(br#"{"type":"answered","outputs":[]}"#));
        assert!(!is_reply(br#"{"type":"session","seq":0,"id":"h"}"#));
        assert!(!is_reply(b"{\"type\":\"skipped\"}\n{\"type\":\"session\"}"));
        assert!(!is_reply(b"not json"));
    }

    #[test]
    fn only_regular_jsonl_files_are_streams_and_their_size_is_bounded() {
        let work = WorkDir::new().expect("a work directory");
        let out = work.0.join("output");
        std::fs::write(out.join("stream.jsonl"), b"{}\n").expect("write");
        std::fs::write(out.join("child.jsonl"), b"{}\n{}\n").expect("write");
        std::fs::write(out.join("notes.txt"), b"ignored").expect("write");
        std::os::unix::fs::symlink("/etc/hostname", out.join("linked.jsonl")).expect("link");
        let streams = streams_in(&out, 1000).expect("read");
        let names: Vec<&str> = streams.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["", "child"]);
        assert!(matches!(streams_in(&out, 5), Err(Fault::Protocol(_))));
        for n in 0..=MAX_OUTPUTS {
            std::fs::write(out.join(format!("s{n}.jsonl")), b"").expect("write");
        }
        assert!(
            matches!(streams_in(&out, 1000), Err(Fault::Protocol(m)) if m.contains("more than"))
        );
        let dir = work.0.clone();
        drop(work);
        assert!(!dir.exists(), "the work directory is removed");
    }
}
