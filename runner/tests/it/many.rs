//! `asr-ctk validate` over many files: the same output whatever `--jobs` is; with
//! `--independent`, each file's findings written before the last file is checked; and the
//! shards of a run (`--shard i/n`) merged (`--merge`) into the output of the whole run,
//! the findings across streams included.

use crate::helpers::{BIN, asr_ctk, root, scratch};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The lineage cases of the corpus: parents and children whose findings depend on each
/// other (ASR-406, ASR-412), and streams with findings of their own.
fn lineage() -> PathBuf {
    root().join("cases/lineage")
}

fn validate(args: &[&str]) -> Output {
    let mut all = vec!["validate"];
    all.extend(args);
    asr_ctk(&all)
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_output_is_the_same_whatever_the_jobs() {
    let dir = lineage();
    let dir = dir.to_string_lossy();
    for format in ["human", "json", "sarif"] {
        for independent in [false, true] {
            let run = |jobs: &str| {
                let mut args = vec![dir.as_ref(), "--format", format, "--jobs", jobs];
                if independent {
                    args.push("--independent");
                }
                validate(&args)
            };
            let one = run("1");
            assert_eq!(
                one.status.code(),
                Some(1),
                "{}",
                String::from_utf8_lossy(&one.stderr)
            );
            assert!(one.stdout.len() > 10_000, "{}", one.stdout.len());
            for jobs in ["2", "5"] {
                let many = run(jobs);
                assert_eq!(
                    many.status, one.status,
                    "{format} {independent} --jobs {jobs}"
                );
                assert!(
                    many.stdout == one.stdout,
                    "{format}, independent {independent}, --jobs {jobs}: another output"
                );
            }
        }
    }
    // The checks across streams ran: the output differs from each stream's on its own.
    let related = validate(&[&dir, "--format", "json", "--jobs", "2"]);
    let alone = validate(&[&dir, "--format", "json", "--jobs", "2", "--independent"]);
    assert_ne!(text(&related), text(&alone));
    assert!(text(&related).contains("\"rule\":\"ASR-412\""));
    assert!(!text(&alone).contains("\"rule\":\"ASR-412\""));
}

/// The lineage cases among many streams the checks across streams leave alone: the output
/// of the checks across streams is then written from the thread that reads it back, not
/// handed between threads, and is still the same whatever `--jobs` is.
#[test]
fn the_output_is_the_same_whatever_the_jobs_when_few_streams_change() {
    let lineage = lineage();
    let fillers = scratch("many-fillers");
    for n in 0..600 {
        let header = format!(
            r#"{{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{{"name":"codex"}},"sessionId":"filler-{n}"}}"#
        );
        std::fs::write(
            fillers.join(format!("f{n:03}.jsonl")),
            format!("{header}\n"),
        )
        .expect("write");
    }
    let (lineage, fillers) = (lineage.to_string_lossy(), fillers.to_string_lossy());
    let run = |jobs: &str, independent: bool| {
        let mut args = vec![
            lineage.as_ref(),
            fillers.as_ref(),
            "--format",
            "json",
            "--jobs",
            jobs,
        ];
        if independent {
            args.push("--independent");
        }
        validate(&args)
    };
    let one = run("1", false);
    assert_eq!(
        one.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
    for jobs in ["2", "5"] {
        let many = run(jobs, false);
        assert_eq!(many.status, one.status, "--jobs {jobs}");
        assert!(many.stdout == one.stdout, "--jobs {jobs}: another output");
    }
    // Some streams are changed by the checks across streams, fewer than a quarter of them.
    let alone = text(&run("2", true));
    let related = text(&one);
    let changed = related
        .lines()
        .zip(alone.lines())
        .filter(|(r, a)| r != a)
        .count();
    let all = related.lines().count();
    assert_eq!(all, 755);
    assert!(
        changed > 0 && changed * 4 < all,
        "{changed} of {all} changed"
    );
}

#[test]
fn independent_output_starts_before_the_last_file_is_checked() {
    let dir = scratch("many-fifo");
    let header = r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"codex"},"sessionId":"s1"}"#;
    for name in ["a.jsonl", "b.jsonl"] {
        std::fs::write(dir.join(name), format!("{header}\n")).expect("write");
    }
    let fifo = dir.join("last.jsonl");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("mkfifo");
    for jobs in ["1", "2"] {
        let mut child = Command::new(BIN)
            .args([
                "validate",
                "--independent",
                "--format",
                "json",
                "--jobs",
                jobs,
            ])
            .args([dir.join("a.jsonl"), dir.join("b.jsonl"), fifo.clone()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starts");
        // The two files' lines come while the last one cannot be read: nothing writes to
        // the FIFO yet.
        let (lines, got) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().expect("piped");
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut first = Vec::new();
        while first.len() < 2 && Instant::now() < deadline {
            if let Ok(line) = got.recv_timeout(Duration::from_millis(100)) {
                first.push(line);
            }
        }
        let blocked = child.try_wait().expect("wait").is_none();
        // Let the last one be read, whatever happened, so the run ends.
        let mut writer = std::fs::OpenOptions::new()
            .write(true)
            .open(&fifo)
            .expect("open the FIFO");
        writer
            .write_all(format!("{header}\n").as_bytes())
            .expect("write");
        drop(writer);
        let status = child.wait().expect("wait");
        reader.join().expect("reader");
        let rest: Vec<String> = got.try_iter().collect();
        assert!(
            blocked,
            "--jobs {jobs}: the run ended before the FIFO was written"
        );
        assert_eq!(first.len(), 2, "--jobs {jobs}: {first:?}");
        assert!(
            first[0].contains("a.jsonl") && first[1].contains("b.jsonl"),
            "{first:?}"
        );
        assert_eq!(rest.len(), 1, "{rest:?}");
        assert!(rest[0].contains("last.jsonl"));
        assert_eq!(status.code(), Some(0));
    }
}

/// The shard files of `n` shards of `validate` over `dir`, written in `out`.
fn shards(dir: &str, n: usize, out: &Path, extra: &[&str]) -> Vec<PathBuf> {
    (1..=n)
        .map(|i| {
            let shard = format!("{i}/{n}");
            let mut args = vec![dir, "--shard", &shard, "--jobs", "2"];
            args.extend(extra);
            let output = validate(&args);
            assert_eq!(output.status.code(), Some(0), "{output:?}");
            let file = out.join(format!("shard-{i}.jsonl"));
            std::fs::write(&file, &output.stdout).expect("write");
            file
        })
        .collect()
}

/// `schemas/validation-shard.schema.json`, the report schema it names beside it.
fn shard_schema() -> jsonschema::Validator {
    let schema = |name: &str| -> serde_json::Value {
        serde_json::from_str(
            &std::fs::read_to_string(root().join("schemas").join(name)).expect("read"),
        )
        .expect("JSON")
    };
    let registry = jsonschema::Registry::new()
        .add(
            "https://asr-ctk.invalid/schemas/validation.schema.json",
            schema("validation.schema.json"),
        )
        .expect("a resource")
        .prepare()
        .expect("a registry");
    jsonschema::options()
        .with_registry(&registry)
        .build(&schema("validation-shard.schema.json"))
        .expect("compiles")
}

fn merge(files: &[PathBuf], extra: &[&str]) -> Output {
    let mut args: Vec<String> = vec!["validate".into(), "--merge".into()];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args.extend(files.iter().map(|f| f.to_string_lossy().into_owned()));
    asr_ctk(&args)
}

#[test]
fn three_shards_merged_are_the_whole_run_across_streams_included() {
    let out = scratch("many-shards");
    let dir = lineage();
    let dir = dir.to_string_lossy();
    let files = shards(&dir, 3, &out, &[]);
    // Every shard holds some of the streams, and none all.
    let walked = validate(&[&dir, "--format", "json", "--independent"]);
    let streams = text(&walked).lines().count();
    let schema = shard_schema();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read");
        for line in text.lines() {
            let value: serde_json::Value = serde_json::from_str(line).expect("JSON");
            let errors: Vec<String> = schema.iter_errors(&value).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{errors:?}");
        }
        let entries = text
            .lines()
            .filter(|l| l.starts_with("{\"type\":\"stream\""))
            .count();
        assert!(entries > 0 && entries < streams, "{entries} of {streams}");
    }
    // The schema tells a wrong line.
    let wrong = serde_json::json!({"type": "end", "entries": -1});
    assert!(!schema.is_valid(&wrong));
    for format in ["human", "json", "sarif"] {
        for independent in [&[][..], &["--independent"][..]] {
            let mut args = vec![dir.as_ref(), "--format", format];
            args.extend(independent);
            let whole = validate(&args);
            let mut extra = vec!["--format", format];
            extra.extend(independent);
            let merged = merge(&files, &extra);
            assert_eq!(
                merged.status,
                whole.status,
                "{format} {independent:?}: {}",
                String::from_utf8_lossy(&merged.stderr)
            );
            assert!(
                merged.stdout == whole.stdout,
                "{format} {independent:?}: the merge differs from the whole run"
            );
        }
    }
    // In any order of the files.
    let reversed: Vec<PathBuf> = files.iter().rev().cloned().collect();
    let whole = validate(&[&dir, "--format", "json"]);
    assert_eq!(merge(&reversed, &["--format", "json"]).stdout, whole.stdout);
    // Options of the shards are the merge's: a shard run without the inferred checks
    // merges into a run without them.
    let quiet = shards(&dir, 2, &out, &["--no-inferred"]);
    let whole = validate(&[&dir, "--format", "json", "--no-inferred"]);
    assert_eq!(merge(&quiet, &["--format", "json"]).stdout, whole.stdout);
}

#[test]
fn shards_that_are_not_one_whole_run_are_refused() {
    let out = scratch("many-shards-refused");
    let dir = lineage();
    let dir = dir.to_string_lossy();
    let files = shards(&dir, 3, &out, &[]);
    let refused = |files: &[PathBuf], says: &str| {
        let output = merge(files, &[]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{says}: {stderr}");
        assert!(stderr.contains(says), "{stderr} (expected: {says})");
        assert!(
            output.stdout.is_empty(),
            "nothing is written of a merge refused"
        );
    };
    refused(&files[..2], "1 of 3 parts missing: 3/3");
    refused(
        &[files[0].clone(), files[0].clone(), files[1].clone()],
        "also in",
    );
    // A shard file cut short.
    let text = std::fs::read_to_string(&files[2]).expect("read");
    let cut = out.join("cut.jsonl");
    let keep: Vec<&str> = text.lines().collect();
    std::fs::write(&cut, keep[..keep.len() - 1].join("\n") + "\n").expect("write");
    refused(&[files[0].clone(), files[1].clone(), cut], "cut short");
    // A shard of another run (other options).
    let elsewhere = out.join("other");
    std::fs::create_dir(&elsewhere).expect("mkdir");
    let other = shards(&dir, 3, &elsewhere, &["--disable", "ASR-412"]);
    refused(
        &[files[0].clone(), files[1].clone(), other[2].clone()],
        "not shards of one run",
    );
    // Not a shard file at all.
    let bogus = out.join("bogus.jsonl");
    std::fs::write(&bogus, "{}\n").expect("write");
    refused(&[bogus], "failed to read a shard file's line");
    // A FIFO cannot be read twice.
    let fifo = out.join("fifo.jsonl");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("mkfifo");
    refused(&[fifo], "not a regular file");
    // A stream that could not be read in a shard fails the merge as it fails the run.
    let unreadable = scratch("many-shards-unreadable");
    std::fs::write(unreadable.join("a.jsonl"), "{}\n").expect("write");
    std::os::unix::fs::symlink("/nonexistent/x.jsonl", unreadable.join("b.jsonl")).expect("link");
    let given = unreadable.join("b.jsonl");
    let a = unreadable.join("a.jsonl");
    let whole = validate(&[&a.to_string_lossy(), &given.to_string_lossy()]);
    let one = {
        let output = validate(&[
            &a.to_string_lossy(),
            &given.to_string_lossy(),
            "--shard",
            "1/1",
        ]);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let file = unreadable.join("shard.jsonl");
        std::fs::write(&file, &output.stdout).expect("write");
        file
    };
    let merged = merge(&[one], &[]);
    assert_eq!(whole.status.code(), Some(2));
    assert_eq!(merged.status, whole.status);
    assert_eq!(merged.stdout, whole.stdout);
}
