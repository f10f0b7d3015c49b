//! `asr-ctk validate` on hostile directory trees: symlink loops, the same file under several
//! names, FIFOs. Every run has a deadline, since the failures these guard against hang.

use crate::helpers::{Kit, Scratch, scratch};
use asr_suite::report::FileReport;
use nix::sys::stat::Mode;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, symlink};
use std::path::PathBuf;
use std::thread;
use std::time::Duration;

const HEADER: &str = r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"codex"},"sessionId":"019a3c2e"}"#;
const MESSAGE: &str = r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[{"type":"text","text":"Fix the failing parser test."}]}"#;

/// A directory tree of one test, removed at the end.
struct Tree(Scratch);

impl Tree {
    fn new(name: &str) -> Self {
        Tree(scratch(&format!("walk-{name}")))
    }

    fn stream(&self, name: &str) -> PathBuf {
        let path = self.0.join(name);
        fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        fs::write(&path, format!("{HEADER}\n{MESSAGE}\n")).expect("write stream");
        path
    }

    fn link(&self, name: &str, target: &str) {
        symlink(target, self.0.join(name)).expect("symlink");
    }

    fn fifo(&self, name: &str) -> PathBuf {
        let path = self.0.join(name);
        nix::unistd::mkfifo(&path, Mode::from_bits_truncate(0o600)).expect("mkfifo");
        path
    }

    /// `path` below the directory, as the command prints it.
    fn show(&self, path: &str) -> String {
        if path.is_empty() {
            return self.0.display().to_string();
        }
        self.0.join(path).display().to_string()
    }
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn reports(&self) -> Vec<FileReport> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).expect("a report"))
            .collect()
    }

    fn files(&self) -> Vec<String> {
        self.reports().into_iter().map(|r| r.file).collect()
    }
}

/// Runs `asr-ctk` and fails the test when it has not ended within 20 seconds.
fn asr_ctk(args: &[&str]) -> Run {
    let output = Kit::new(args).limit(Duration::from_secs(20)).output();
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The line that says `path` was skipped, being `first` already.
fn already(path: &str, first: &str) -> String {
    format!("asr-ctk: skipped {path}: already checked as {first}")
}

fn lines(lines: &[String]) -> String {
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

#[test]
fn a_symlink_to_a_parent_is_a_loop_and_each_file_is_checked_once() {
    let d = Tree::new("parent-loop");
    d.stream("a.jsonl");
    d.stream("sub/b.jsonl");
    d.link("sub/up", "..");
    let run = asr_ctk(&["validate", "--format", "json", &d.show("")]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.files(), [d.show("a.jsonl"), d.show("sub/b.jsonl")]);
    assert_eq!(
        run.stderr,
        lines(&[format!(
            "asr-ctk: skipped {}: a symlink loop back to {}",
            d.show("sub/up"),
            d.show("")
        )])
    );
}

#[test]
fn two_parent_links_end_quickly_and_each_file_is_checked_once() {
    let d = Tree::new("two-loops");
    d.stream("c.jsonl");
    d.stream("x/a.jsonl");
    d.stream("y/b.jsonl");
    d.link("x/up", "..");
    d.link("y/up", "..");
    d.link("x/to-y", "../y");
    d.link("y/to-x", "../x");
    let run = asr_ctk(&["validate", "--format", "json", &d.show("")]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // y is first reached through x/to-y, in sorted order, and walked there once.
    assert_eq!(
        run.files(),
        [
            d.show("c.jsonl"),
            d.show("x/a.jsonl"),
            d.show("x/to-y/b.jsonl")
        ]
    );
    assert_eq!(
        run.stderr,
        lines(&[
            format!(
                "asr-ctk: skipped {}: a symlink loop back to {}",
                d.show("x/to-y/to-x"),
                d.show("x")
            ),
            format!(
                "asr-ctk: skipped {}: a symlink loop back to {}",
                d.show("x/to-y/up"),
                d.show("")
            ),
            format!(
                "asr-ctk: skipped {}: a symlink loop back to {}",
                d.show("x/up"),
                d.show("")
            ),
            already(&d.show("y"), &d.show("x/to-y")),
        ])
    );
}

#[test]
fn a_file_that_cannot_be_opened_is_named_once_and_the_rest_is_checked() {
    let d = Tree::new("broken");
    d.stream("a.jsonl");
    d.link("gone.jsonl", "nowhere.jsonl");
    d.link("up", ".");
    let run = asr_ctk(&["validate", "--format", "json", &d.show("")]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert_eq!(run.files(), [d.show("a.jsonl")]);
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("asr-ctk: failed"))
        .collect();
    assert_eq!(
        errors,
        [format!(
            "asr-ctk: failed to open {}: No such file or directory (os error 2)",
            d.show("gone.jsonl")
        )]
    );
}

#[test]
fn a_fifo_found_while_walking_is_skipped() {
    let d = Tree::new("fifo-walked");
    d.stream("a.jsonl");
    d.fifo("pipe.jsonl");
    let run = asr_ctk(&["validate", "--format", "json", &d.show("")]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.files(), [d.show("a.jsonl")]);
    assert_eq!(
        run.stderr,
        lines(&[format!(
            "asr-ctk: skipped {}: not a regular file (fifo)",
            d.show("pipe.jsonl")
        )])
    );
}

#[test]
fn a_fifo_named_on_the_command_line_is_read() {
    let d = Tree::new("fifo-named");
    d.stream("a.jsonl");
    let fifo = d.fifo("pipe.jsonl");
    let writer = {
        let fifo = fifo.clone();
        thread::spawn(move || {
            // Opening for writing waits for a reader; writing fails only when the test
            // let the writer go without one.
            let mut pipe = OpenOptions::new()
                .write(true)
                .open(&fifo)
                .expect("open fifo");
            let _ = pipe.write_all(format!("{HEADER}\n{MESSAGE}\n").as_bytes());
        })
    };
    // The directory is walked (the FIFO left out there), then the FIFO is read by name.
    let run = asr_ctk(&[
        "validate",
        "--format",
        "json",
        &d.show(""),
        &d.show("pipe.jsonl"),
    ]);
    {
        // Lets a writer still waiting for a reader go, whatever the run did.
        let _release = OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open(&fifo)
            .expect("open fifo");
        writer.join().expect("writer");
    }
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let reports = run.reports();
    let read: Vec<(&str, usize)> = reports
        .iter()
        .map(|r| (r.file.as_str(), r.records))
        .collect();
    assert_eq!(
        read,
        [
            (d.show("a.jsonl").as_str(), 2),
            (d.show("pipe.jsonl").as_str(), 2)
        ]
    );
    assert_eq!(
        run.stderr,
        lines(&[format!(
            "asr-ctk: skipped {}: not a regular file (fifo)",
            d.show("pipe.jsonl")
        )])
    );
}

#[test]
fn the_same_file_named_twice_or_through_a_symlink_is_checked_once() {
    let d = Tree::new("same-file");
    d.stream("a.jsonl");
    d.link("link.jsonl", "a.jsonl");
    // Each way of naming the file twice checks it once and says what it skipped.
    let checked_once = |paths: &[String]| {
        let mut args = vec!["validate", "--format", "json"];
        args.extend(paths.iter().map(String::as_str));
        let run = asr_ctk(&args);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        assert_eq!(run.files(), [d.show("a.jsonl")]);
        assert_eq!(
            run.stderr,
            lines(&[
                already(&d.show("link.jsonl"), &d.show("a.jsonl")),
                already(&d.show("a.jsonl"), &d.show("a.jsonl")),
            ])
        );
    };
    checked_once(&[d.show("a.jsonl"), d.show("link.jsonl"), d.show("a.jsonl")]);
    // A directory and a file in it, given together: the file once.
    checked_once(&[d.show(""), d.show("a.jsonl")]);
}

/// A file with two names (a hard link) is one file, whether both names are met while
/// walking, in two directories, or one is named on the command line.
#[test]
fn a_file_hard_linked_twice_is_checked_once() {
    let d = Tree::new("hard-link");
    d.stream("a/one.jsonl");
    d.stream("b/other.jsonl");
    fs::hard_link(d.0.join("a/one.jsonl"), d.0.join("b/two.jsonl")).expect("hard link");
    let run = asr_ctk(&["validate", "--format", "json", &d.show("")]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        run.files(),
        [d.show("a/one.jsonl"), d.show("b/other.jsonl")]
    );
    assert_eq!(
        run.stderr,
        lines(&[already(&d.show("b/two.jsonl"), &d.show("a/one.jsonl"))])
    );
    let run = asr_ctk(&[
        "validate",
        "--format",
        "json",
        &d.show("b/two.jsonl"),
        &d.show(""),
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        run.files(),
        [d.show("b/two.jsonl"), d.show("b/other.jsonl")]
    );
    assert_eq!(
        run.stderr,
        lines(&[
            already(&d.show("a/one.jsonl"), &d.show("b/two.jsonl")),
            already(&d.show("b/two.jsonl"), &d.show("b/two.jsonl")),
        ])
    );
}

/// A directory with no `.jsonl` file below it is nothing to check: an error (exit 2) that
/// names the files that were there, never a silent success.
#[test]
fn a_directory_with_no_stream_is_an_error_naming_what_it_holds() {
    let d = Tree::new("no-stream");
    fs::create_dir_all(d.0.join("empty")).expect("mkdir");
    let run = asr_ctk(&["validate", &d.show("empty")]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("no .jsonl file under {}", d.show("empty"))),
        "{}",
        run.stderr
    );
    fs::create_dir_all(d.0.join("other")).expect("mkdir");
    for name in [
        "other/broken.ndjson",
        "other/BROKEN.JSONL",
        "other/notes.txt",
    ] {
        fs::write(d.0.join(name), format!("{HEADER}\n")).expect("write");
    }
    let run = asr_ctk(&["validate", "--format", "json", &d.show("other")]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    for name in [
        "other/broken.ndjson",
        "other/BROKEN.JSONL",
        "other/notes.txt",
    ] {
        assert!(run.stderr.contains(&d.show(name)), "{name}: {}", run.stderr);
    }
    assert!(run.stderr.contains(".ndjson"), "{}", run.stderr);
    // Beside a directory that has streams, an empty one is still said, and still fails.
    d.stream("full/a.jsonl");
    let run = asr_ctk(&[
        "validate",
        "--format",
        "json",
        &d.show("full"),
        &d.show("empty"),
    ]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert_eq!(run.files(), [d.show("full/a.jsonl")]);
    // The same directory given twice is no empty directory.
    let run = asr_ctk(&[
        "validate",
        "--format",
        "json",
        &d.show("full"),
        &d.show("full"),
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

/// A reader that stops early (`| head`) does not turn the verdict into a success: the exit
/// status is the verdict's, and nothing is said of the closed pipe.
#[test]
fn a_closed_pipe_keeps_the_verdict() {
    let d = Tree::new("pipe");
    for n in 0..200 {
        fs::write(
            d.0.join(format!("s{n:03}.jsonl")),
            format!("{HEADER}\n{{\"type\":\"message\"}}\n"),
        )
        .expect("write");
    }
    for format in ["human", "json", "sarif"] {
        let mut child = std::process::Command::new(crate::helpers::BIN)
            .args(["validate", "--format", format, &d.show("")])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("starts");
        // Read one line, then close the pipe, as `head -1` does.
        let mut stdout = std::io::BufReader::new(child.stdout.take().expect("piped"));
        let mut first = String::new();
        std::io::BufRead::read_line(&mut stdout, &mut first).expect("a line");
        drop(stdout);
        let output = child.wait_with_output().expect("ends");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{format}: {stderr}");
        assert!(
            !stderr.to_lowercase().contains("pipe"),
            "{format}: {stderr}"
        );
    }
}
