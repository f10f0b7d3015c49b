//! Validation throughput and memory.
//!
//! `cargo bench -p asr-suite --bench validate` generates two realistic streams of 200 MB,
//! one of the usual mix (about 2.4 KB a line) and one of many small records (about 800
//! bytes a line), and reports for each, in one run: the median throughput of validating it
//! (on every core, and on one thread), the median throughput of parsing the same lines with
//! serde_json into `serde_json::Value` and nothing else, the median over runs of the ratio
//! of the two (each run times both back to back, so a run's ratio is the least disturbed by
//! the rest of the machine), the median time of reading it with the reference reader, and
//! the peak memory of validating streams with the same records and 4 times the text, and
//! with 4 times the records. Options after `--`: `--mb N` (stream size, default
//! 200), `--runs N` (default 5), `--only mix|small|converted|memory` (one part alone, as
//! for a profiler).
//!
//! A third shape the generator did not make: the source fixtures' expected streams (what the
//! converters make of real native sessions: `cases/sources/*/*/expected/`), each checked as
//! a stream of its own with `check_bytes` on one thread, over and over to about a tenth of
//! `--mb`, beside parsing the same lines into `serde_json::Value`, in three times `--runs`
//! rounds (each is short).

#![expect(
    clippy::cast_precision_loss,
    reason = "byte counts are shown as MB and MiB"
)]

use asr_suite::check::{CheckOptions, check_reader};
use asr_suite::generate::{Generated, Shape, realistic_stream};
use asr_suite::lines::{Line, LineReader};
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--child-validate") {
        child_validate(Path::new(&args[at + 1]));
        return;
    }
    let number = |flag: &str, default: u64| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|at| args.get(at + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let mb = number("--mb", 200);
    let runs = number("--runs", 5);
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|at| args.get(at + 1));
    let wanted = |part: &str| only.is_none_or(|only| only == part);
    let guard = tempfile::tempdir().expect("a scratch directory");
    let dir = guard.path().to_owned();

    for (part, shape_name, shape) in [
        ("mix", "the usual mix", Shape::bytes(1, mb << 20)),
        (
            "small",
            "many small records",
            Shape::small_records(1, mb << 20),
        ),
    ] {
        if wanted(part) {
            throughput(&dir, shape_name, shape, runs);
        }
    }
    if wanted("converted") {
        converted(mb, runs);
    }
    if !wanted("memory") {
        return;
    }

    let turns = 2_000;
    let base = dir.join("base.jsonl");
    let text4 = dir.join("text4.jsonl");
    let records4 = dir.join("records4.jsonl");
    let sizes = [
        generate(&base, Shape::turns(2, turns, 1)).bytes,
        generate(&text4, Shape::turns(2, turns, 4)).bytes,
        generate(&records4, Shape::turns(2, turns * 4, 1)).bytes,
    ];
    for (label, path, bytes) in [
        ("base", &base, sizes[0]),
        ("same records, 4x text", &text4, sizes[1]),
        ("4x records, same text", &records4, sizes[2]),
    ] {
        let peak = child_peak_kib(path);
        println!(
            "peak memory validating {label:<22} ({:>6.1} MB): {:>7.1} MiB",
            bytes as f64 / 1e6,
            peak as f64 / 1024.0
        );
    }
}

/// The throughput of validating and of reading a stream of `shape`, beside a bare parse.
fn throughput(dir: &Path, name: &str, shape: Shape, runs: u64) {
    let big = dir.join("stream.jsonl");
    let generated = generate(&big, shape);
    let size = generated.bytes as f64 / 1e6;
    println!(
        "\n== {name}: {size:.1} MB, {} lines, {} bytes a line on average",
        generated.records,
        generated.bytes / generated.records.max(1)
    );

    let mut parse = Vec::new();
    let mut validate = Vec::new();
    let mut validate_one = Vec::new();
    let mut read = Vec::new();
    for _ in 0..runs {
        read.push(time(|| read_file(&big)));
        parse.push(time(|| parse_only(&big)));
        validate.push(time(|| validate_file(&big)));
        validate_one.push(time(|| validate_file_with(&big, 1)));
    }
    // Each run times both back to back: the ratio of one run is the least disturbed by
    // whatever else the machine does, so the ratios quoted are medians over runs.
    let mut ratio: Vec<f64> = parse.iter().zip(&validate).map(|(p, v)| p / v).collect();
    let mut ratio_one: Vec<f64> = parse
        .iter()
        .zip(&validate_one)
        .map(|(p, v)| p / v)
        .collect();
    let parse = median(&mut parse);
    let validate = median(&mut validate);
    println!(
        "parse only (serde_json::Value): median {parse:.3} s, {:.1} MB/s",
        size / parse
    );
    println!(
        "validate:                       median {validate:.3} s, {:.1} MB/s",
        size / validate
    );
    println!(
        "validate / parse-only throughput: {:.0}% ({} threads check lines; the machine has {})",
        100.0 * median(&mut ratio),
        std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
    );
    let validate_one = median(&mut validate_one);
    let ratio_one = median(&mut ratio_one);
    println!(
        "validate on one thread:         median {validate_one:.3} s, {:.1} MB/s, {:.0}% of parse-only (time per byte {:.2}x the parse's)",
        size / validate_one,
        100.0 * ratio_one,
        1.0 / ratio_one
    );
    let read = median(&mut read);
    println!(
        "read (the reference reader's reading): median {read:.3} s, {:.1} MB/s",
        size / read
    );
    println!("read / validate time: {:.2}", read / validate);
}

/// The third shape: the converted sessions of the source fixtures, on one thread.
fn converted(mb: u64, runs: u64) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/sources");
    let mut streams: Vec<Vec<u8>> = Vec::new();
    let mut formats: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("the source fixtures")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    formats.sort();
    for format in formats {
        let mut fixtures: Vec<PathBuf> = std::fs::read_dir(&format)
            .expect("a format's fixtures")
            .flatten()
            .map(|e| e.path().join("expected"))
            .collect();
        fixtures.sort();
        for expected in fixtures.iter().filter(|p| p.is_dir()) {
            let mut files: Vec<PathBuf> = std::fs::read_dir(expected)
                .expect("expected/")
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
                .collect();
            files.sort();
            streams.extend(files.iter().map(|f| std::fs::read(f).expect("a stream")));
        }
    }
    let bytes: usize = streams.iter().map(Vec::len).sum();
    let lines: usize = streams
        .iter()
        .map(|s| asr_suite::lines::split(s).bytes().count())
        .sum();
    let repeat = (usize::try_from(mb << 20).unwrap_or(usize::MAX) / 10 / bytes.max(1)).max(1);
    let size = (bytes * repeat) as f64 / 1e6;
    println!(
        "\n== converted sessions (the source fixtures' expected streams): {} streams, {lines} lines, {} bytes a line on average, checked {repeat} times over: {size:.1} MB",
        streams.len(),
        bytes / lines.max(1)
    );
    let options = CheckOptions::default();
    let mut parse = Vec::new();
    let mut validate = Vec::new();
    // A round of this shape takes a fifth of a second: three times the rounds of the others,
    // so the median is as little a moment of the machine as theirs.
    for _ in 0..runs * 3 {
        parse.push(time(|| {
            let mut count = 0;
            for _ in 0..repeat {
                for stream in &streams {
                    for line in asr_suite::lines::split(stream).bytes() {
                        if let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) {
                            count += usize::from(value.is_object());
                        }
                    }
                }
            }
            count
        }));
        validate.push(time(|| {
            let mut count = 0;
            for _ in 0..repeat {
                for stream in &streams {
                    count += asr_suite::check::check_bytes(stream, &options).records;
                }
            }
            count
        }));
    }
    let mut ratio: Vec<f64> = parse.iter().zip(&validate).map(|(p, v)| p / v).collect();
    let ratio = median(&mut ratio);
    let parse = median(&mut parse);
    let validate = median(&mut validate);
    println!(
        "parse only (serde_json::Value): median {parse:.3} s, {:.1} MB/s",
        size / parse
    );
    println!(
        "validate on one thread:         median {validate:.3} s, {:.1} MB/s, {:.0}% of parse-only (time per byte {:.2}x the parse's)",
        size / validate,
        100.0 * ratio,
        1.0 / ratio
    );
}

fn generate(path: &PathBuf, shape: Shape) -> Generated {
    let mut out = BufWriter::new(File::create(path).expect("create stream"));
    realistic_stream(&mut out, shape).expect("write stream")
}

fn time(f: impl FnOnce() -> usize) -> f64 {
    let start = Instant::now();
    let count = f();
    let elapsed = start.elapsed().as_secs_f64();
    assert!(count > 0);
    elapsed
}

fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Reads the lines as the checker does and parses each into a Value, nothing else.
fn parse_only(path: &Path) -> usize {
    let file = BufReader::with_capacity(256 << 10, File::open(path).expect("open"));
    let mut lines = LineReader::new(file, usize::MAX);
    let mut count = 0;
    while let Some(line) = lines.next_line().expect("read") {
        if let Line::Text { bytes, .. } = line {
            let value: serde_json::Value = serde_json::from_slice(bytes).expect("valid JSON");
            count += usize::from(value.is_object());
        }
    }
    count
}

/// The first stages of validation alone: the kit's parse, and optionally the schemas.
fn read_file(path: &Path) -> usize {
    let outcome =
        asr_suite::reading::read_stream(File::open(path).expect("open"), usize::MAX).expect("read");
    assert!(outcome.accepted);
    outcome.reading.records.len()
}

fn validate_file(path: &Path) -> usize {
    validate_file_with(path, 0)
}

fn validate_file_with(path: &Path, threads: usize) -> usize {
    let mut options = CheckOptions::default();
    options.threads = threads;
    let report = check_reader(File::open(path).expect("open"), &options).expect("read");
    assert!(report.valid(), "the generated stream is valid");
    report.records
}

fn child_validate(path: &Path) {
    let records = validate_file(path);
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let peak = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .unwrap_or("VmHWM: 0 kB");
    println!(
        "{records} {}",
        peak.split_whitespace().nth(1).unwrap_or("0")
    );
}

/// Peak resident memory, in KiB, of a fresh process that validates `path`.
fn child_peak_kib(path: &Path) -> u64 {
    let exe = std::env::current_exe().expect("own path");
    let output = Command::new(exe)
        .arg("--child-validate")
        .arg(path)
        .output()
        .expect("run child");
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}
