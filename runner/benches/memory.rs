//! Peak memory of `asr-ctk validate`, `asr-ctk read` and the reference adapter on large
//! streams.
//!
//! `cargo bench -p asr-ctk --bench memory` generates realistic streams of about 1 GiB and
//! 2 GiB (prompts, reasoning, answers, tool traffic, plans, subagents, deliveries, and a tool
//! output of about 4 MB every 200 turns) in a temporary directory, runs the built `asr-ctk
//! validate` and `asr-ctk read` (output to /dev/null) on each as child processes, and prints
//! their peak resident memory, the records, and the cost per record: the peak less the peak
//! on a tiny stream, divided by the records (which also counts the longest line, held whole
//! by `validate`); and, from one size to the next, the growth of the peak divided by the
//! growth of the records. Each stream is deleted once measured.
//!
//! Beside them, the reference adapter (`asr-ctk adapter reference`, persistent mode) answering
//! one validator case and one reader case on the same stream, by path, and the ratio of its
//! peak to `validate`'s; then the same four on a sparse stream of 4 GiB (one line of NULs,
//! no disk taken).
//!
//! Other sizes: `-- --mb 64,256` or `ASR_CTK_MEMORY_MB=64,256`; the sparse stream's:
//! `-- --sparse-mb 64` or `ASR_CTK_MEMORY_SPARSE_MB=64` (0 leaves it out).
//!
//! `-- --reply-mb 230` (or `ASR_CTK_MEMORY_REPLY_MB=230`) measures instead what one large
//! reply costs `asr-ctk run`: the fault adapter `runner/tests/adapters/many_notices.py`
//! answers one case with a reply line of about that many MB of notices (a legal reply, under
//! the default `--max-reply-bytes`), and the bench prints the kit's peak resident memory,
//! the reply's size and their ratio, and the findings the report says were not kept.

#![expect(
    clippy::cast_precision_loss,
    reason = "byte counts are shown as MB, MiB and bytes a record"
)]

use asr_suite::generate::{Shape, realistic_stream};
use nix::sys::resource::{UsageWho, getrusage};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--measure") {
        measure(&args[at + 1..]);
        return;
    }
    if let Some(at) = args.iter().position(|a| a == "--measure-reference") {
        measure_reference(&args[at + 1], Path::new(&args[at + 2]));
        return;
    }
    let reply_mb = args
        .iter()
        .position(|a| a == "--reply-mb")
        .and_then(|at| args.get(at + 1).cloned())
        .or_else(|| std::env::var("ASR_CTK_MEMORY_REPLY_MB").ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(mb) = reply_mb {
        one_large_reply(mb);
        return;
    }
    let option = |name: &str, var: &str, default: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|at| args.get(at + 1).cloned())
            .or_else(|| std::env::var(var).ok())
            .unwrap_or_else(|| default.to_owned())
    };
    let sizes: Vec<u64> = option("--mb", "ASR_CTK_MEMORY_MB", "1024,2048")
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    let sparse_mb: u64 = option("--sparse-mb", "ASR_CTK_MEMORY_SPARSE_MB", "4096")
        .trim()
        .parse()
        .unwrap_or(4096);
    let dir =
        TempDir(std::env::temp_dir().join(format!("asr-ctk-bench-memory-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).expect("temp dir");

    let tiny = dir.0.join("tiny.jsonl");
    generate(
        &tiny,
        Shape {
            max_turns: 20,
            ..shape(1, u64::MAX)
        },
    );
    let base_validate = peak_kib(&["validate"], &tiny);
    let base_read = peak_kib(&["read"], &tiny);
    std::fs::remove_file(&tiny).ok();
    println!(
        "tiny stream: validate {:.1} MiB, read {:.1} MiB",
        mib(base_validate),
        mib(base_read)
    );

    let mut previous: Option<(u64, u64, u64)> = None;
    for (n, mb) in sizes.into_iter().enumerate() {
        let path = dir.0.join(format!("stream-{mb}.jsonl"));
        let generated = generate(&path, shape(n as u64 + 2, mb << 20));
        let validate = peak_kib(&["validate"], &path);
        let read = peak_kib(&["read"], &path);
        let per_record = |peak: u64, base: u64| {
            (peak.saturating_sub(base) * 1024) as f64 / generated.records as f64
        };
        println!(
            "{:.0} MB, {} records: validate {:.1} MiB ({:.0} bytes a record), read {:.1} MiB ({:.0} bytes a record)",
            generated.bytes as f64 / 1e6,
            generated.records,
            mib(validate),
            per_record(validate, base_validate),
            mib(read),
            per_record(read, base_read),
        );
        reference_peaks(&path, validate);
        std::fs::remove_file(&path).ok();
        if let Some((records, validate_before, read_before)) = previous {
            let more = generated.records.saturating_sub(records).max(1) as f64;
            let growth =
                |peak: u64, before: u64| (peak.saturating_sub(before) * 1024) as f64 / more;
            println!(
                "  from the previous size: validate {:.0} bytes a record more, read {:.0}",
                growth(validate, validate_before),
                growth(read, read_before)
            );
        }
        previous = Some((generated.records, validate, read));
    }

    if sparse_mb > 0 {
        let path = dir.0.join("sparse.jsonl");
        File::create(&path)
            .and_then(|f| f.set_len(sparse_mb << 20))
            .expect("a sparse stream");
        let validate = peak_kib(&["validate"], &path);
        let read = peak_kib(&["read"], &path);
        println!(
            "{:.0} MB sparse (one line of NULs): validate {:.1} MiB, read {:.1} MiB",
            (sparse_mb << 20) as f64 / 1e6,
            mib(validate),
            mib(read)
        );
        reference_peaks(&path, validate);
        std::fs::remove_file(&path).ok();
    }
}

/// Measures the reference adapter answering a validator and a reader case on `path`, and
/// prints its peaks beside `validate`'s.
fn reference_peaks(path: &Path, validate: u64) {
    for role in ["validator", "reader"] {
        let peak = reference_peak_kib(role, path);
        println!(
            "  reference adapter, {role} case: {:.1} MiB, {:.2} x validate",
            mib(peak),
            peak as f64 / validate.max(1) as f64
        );
    }
}

/// The realistic mix with a tool output of about 4 MB every 200 turns.
fn shape(seed: u64, bytes: u64) -> Shape {
    Shape::bytes(seed, bytes).with_large_texts(200, 4 << 20)
}

struct Generated {
    records: u64,
    bytes: u64,
}

fn generate(path: &PathBuf, shape: Shape) -> Generated {
    let mut out = BufWriter::new(File::create(path).expect("create stream"));
    let generated = realistic_stream(&mut out, shape).expect("write stream");
    Generated {
        records: generated.records,
        bytes: generated.bytes,
    }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// The peak resident memory, in KiB, of `asr-ctk ARGS PATH`, measured by a fresh process
/// of this bench that runs it as its only child.
fn peak_kib(args: &[&str], path: &Path) -> u64 {
    measured(
        Command::new(std::env::current_exe().expect("own path"))
            .arg("--measure")
            .args(args)
            .arg(path),
    )
}

/// What a fresh process of this bench measured and printed: a peak in KiB.
fn measured(command: &mut Command) -> u64 {
    let output = command.output().expect("measure");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    text.trim().parse().expect("a peak in KiB")
}

/// The peak resident memory, in KiB, of the reference adapter answering one case of `role`
/// on the stream at `path`, measured by a fresh process of this bench.
fn reference_peak_kib(role: &str, path: &Path) -> u64 {
    measured(
        Command::new(std::env::current_exe().expect("own path"))
            .arg("--measure-reference")
            .arg(role)
            .arg(path),
    )
}

/// Runs `asr-ctk adapter reference` on one case of `role` on `path` (by path, as the kit
/// asks it), its answer to /dev/null, and prints its peak resident memory in KiB.
fn measure_reference(role: &str, path: &Path) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_asr-ctk"))
        .args(["adapter", "reference"])
        .env_remove("ASR_CTK_ROLE")
        .env_remove("ASR_CTK_HANDSHAKE")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("asr-ctk runs");
    let request = format!(
        "{{\"type\":\"case\",\"seq\":1,\"role\":\"{role}\",\"case\":\"bench\",\"id\":\"bench\",\"rules\":[],\"streams\":[{{\"part\":\"\",\"path\":{}}}]}}\n{{\"type\":\"stop\"}}\n",
        serde_json::to_string(&path.to_string_lossy()).expect("a path")
    );
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(request.as_bytes())
        .expect("the request");
    let status = child.wait().expect("asr-ctk ends");
    assert!(status.success(), "asr-ctk adapter reference: {status}");
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage");
    println!("{}", usage.max_rss());
}

/// The bytes of one notice in the reply of `many_notices.py`, near enough to size it.
const NOTICE_BYTES: u64 = 55;

/// `asr-ctk run` on one case, answered with one reply of about `mb` MB of notices.
fn one_large_reply(mb: u64) {
    let notices = mb * 1_000_000 / NOTICE_BYTES;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir =
        TempDir(std::env::temp_dir().join(format!("asr-ctk-bench-reply-{}", std::process::id())));
    let adapter = format!(
        "python3 {}",
        root.join("tests/adapters/many_notices.py").display()
    );
    let out = dir.0.to_string_lossy().into_owned();
    let peak = measured(
        Command::new(std::env::current_exe().expect("own path"))
            .arg("--measure")
            .args(["run", "--quiet", "--adapter", &adapter, "--out", &out])
            .args(["--case", "messages/ASR-212/n_image_data_and_blob"])
            .env("ASR_CTK_TEST_NOTICES", notices.to_string())
            .current_dir(root.parent().expect("the workspace")),
    );
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.0.join("report.json")).expect("a report"),
    )
    .expect("JSON");
    let case = &report["cases"][0];
    // The adapter says the size of its reply on stderr, which the report keeps.
    let reply: u64 = case["stderr"]
        .as_str()
        .and_then(|s| s.split("reply of ").nth(1))
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("the reply's size on the adapter's stderr");
    println!(
        "one reply of {:.1} MB ({notices} notices): the kit's peak {:.1} MiB, {:.2} times the reply; {} findings not kept; outcome {}",
        reply as f64 / 1e6,
        mib(peak),
        (peak * 1024) as f64 / reply as f64,
        case["findingsNotKept"].as_u64().unwrap_or(0),
        case["outcome"].as_str().unwrap_or("?"),
    );
}

/// Runs `asr-ctk ARGS`, output to /dev/null, and prints its peak resident memory in KiB.
/// A run whose cases fail (exit status 1) is measured too.
fn measure(args: &[String]) {
    let status = Command::new(env!("CARGO_BIN_EXE_asr-ctk"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("asr-ctk runs");
    // 1: the stream is invalid or not accepted (the sparse one is neither), or a run's cases
    // failed.
    assert!(
        matches!(status.code(), Some(0 | 1)),
        "asr-ctk {args:?}: {status}"
    );
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage");
    // Linux gives it in KiB.
    println!("{}", usage.max_rss());
}

/// A directory of its own, removed at the end, whatever happens.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}
