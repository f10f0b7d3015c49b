//! `asr-ctk validate` over an archive of many small sessions: the time with one job and with
//! two, and the peak memory as the files grow.
//!
//! `cargo bench -p asr-ctk --bench archive` copies the corpus's streams (written by hand,
//! not generated: sessions of every agent, lineage parents and children, streams with
//! findings) into a temporary archive, one folder a hundred files, and runs the built
//! `asr-ctk validate --format json ARCHIVE > /dev/null`:
//!
//! - on 10,000 files, with `--jobs 1` and `--jobs 2`, `--independent` and with the checks
//!   across streams, each run in turn, 7 runs each: the median wall and CPU time, the time
//!   a file, and the speedup of two jobs over one (the median of each round's ratio);
//! - in the same rounds, two processes of `--jobs 1 --independent` side by side, each on
//!   half the folders: what two cores of the machine give at most, whatever the threads;
//! - on 10,000 and 100,000 files (two jobs, the checks across streams): the peak resident
//!   memory, and its growth per file from one size to the next;
//! - on 10,000 files: three shards (`--shard i/3`) one after another, and their merge.
//!
//! Each run is a child process of its own, so its peak memory is its own. Other sizes:
//! `-- --files 10000,100000` (or `ASR_CTK_ARCHIVE_FILES`); runs: `-- --runs 7`.

#![expect(
    clippy::cast_precision_loss,
    reason = "times and byte counts are shown as decimals"
)]

use nix::sys::resource::{UsageWho, getrusage};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--measure") {
        measure(&args[at + 1..]);
        return;
    }
    let option = |name: &str, var: &str, default: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|at| args.get(at + 1).cloned())
            .or_else(|| std::env::var(var).ok())
            .unwrap_or_else(|| default.to_owned())
    };
    let sizes: Vec<usize> = option("--files", "ASR_CTK_ARCHIVE_FILES", "10000,100000")
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    let runs: usize = option("--runs", "ASR_CTK_ARCHIVE_RUNS", "7")
        .parse()
        .unwrap_or(7);
    let streams = corpus_streams();
    let bytes: usize = streams.iter().map(Vec::len).sum();
    println!(
        "archive: the corpus's {} streams ({:.1} KiB on average), copied",
        streams.len(),
        bytes as f64 / streams.len() as f64 / 1024.0
    );
    let dir =
        TempDir(std::env::temp_dir().join(format!("asr-ctk-bench-archive-{}", std::process::id())));
    let Some(&first) = sizes.first() else { return };
    let archive = dir.0.join("archive");
    fill(&archive, &streams, first);
    let archive_text = archive.to_string_lossy().into_owned();
    // Each configuration in turn, run after run, so a noisy moment falls on all alike.
    let mut by: Vec<(String, Vec<String>, Vec<Measured>)> = Vec::new();
    for independent in [true, false] {
        for jobs in ["1", "2"] {
            let args = validate_args(jobs, independent, std::slice::from_ref(&archive_text));
            let label = format!(
                "{first} files, --jobs {jobs}{}",
                if independent { ", --independent" } else { "" }
            );
            by.push((label, args, Vec::new()));
        }
    }
    // The machine's own bound: two processes of one job each, side by side, each on half the
    // folders. Both cores busy at once cost more CPU time for the same work than one alone
    // (shared caches, the clock of a busy package): no number of threads in one process
    // does better than this.
    let folders: Vec<String> = (0..first.div_ceil(100))
        .map(|k| {
            archive
                .join(format!("{k:05}"))
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let (low, high) = folders.split_at(folders.len() / 2);
    let halves = [
        validate_args("1", true, low),
        validate_args("1", true, high),
    ];
    let mut paired = Vec::new();
    for _ in 0..runs {
        for (_, args, measured) in &mut by {
            measured.push(run(args));
        }
        paired.push(run_side_by_side(&halves));
    }
    // A round runs each configuration once, in turn: the ratio of one round's two times is
    // the least disturbed by the load of a shared machine, and the speedup is their median.
    let speedup = |one: usize, two: usize| median_ratio(&by[one].2, &by[two].2);
    for (label, _, measured) in &by {
        let wall = median(measured.iter().map(|m| m.wall_ms).collect());
        let cpu = median(measured.iter().map(|m| m.cpu_ms).collect());
        println!(
            "validate {label}: median wall {wall:.0} ms, CPU {cpu:.0} ms, {:.0} µs a file, peak {:.1} MiB",
            wall * 1000.0 / first as f64,
            measured.iter().map(|m| m.max_rss_kib).max().unwrap_or(0) as f64 / 1024.0
        );
    }
    println!(
        "speedup of --jobs 2 over --jobs 1 (the median of the rounds' ratios): {:.2}x with --independent, {:.2}x with the checks across streams",
        speedup(0, 1),
        speedup(2, 3)
    );
    let side_by_side = median_ratio(&by[0].2, &paired);
    println!(
        "the machine's bound: two processes of --jobs 1 --independent side by side, half the folders each: median wall {:.0} ms, CPU {:.0} ms (one process on all: {:.0} ms), {side_by_side:.2}x one process",
        median(paired.iter().map(|m| m.wall_ms).collect()),
        median(paired.iter().map(|m| m.cpu_ms).collect()),
        median(by[0].2.iter().map(|m| m.cpu_ms).collect()),
    );
    // Three shards one after another, and their merge.
    let mut shard_ms = 0.0;
    let mut parts = Vec::new();
    for i in 1..=3 {
        let part = dir.0.join(format!("shard-{i}.jsonl"));
        let shard = format!("{i}/3");
        let measured = run_to(
            &["validate", "--shard", &shard, "--jobs", "2", &archive_text].map(str::to_owned),
            &part,
        );
        shard_ms += measured.wall_ms;
        parts.push(part.to_string_lossy().into_owned());
    }
    let mut merge = vec![
        "validate".to_owned(),
        "--merge".into(),
        "--format".into(),
        "json".into(),
    ];
    merge.extend(parts);
    let merged = run(&merge);
    println!(
        "{first} files in 3 shards: {shard_ms:.0} ms for the three, one after another; the merge {:.0} ms, peak {:.1} MiB",
        merged.wall_ms,
        merged.max_rss_kib as f64 / 1024.0
    );
    // Peak memory as the files grow.
    let mut peaks = Vec::new();
    for &size in &sizes {
        fill(&archive, &streams, size);
        let measured = run(&[
            "validate".to_owned(),
            "--format".into(),
            "json".into(),
            "--jobs".into(),
            "2".into(),
            archive_text.clone(),
        ]);
        println!(
            "validate {size} files, --jobs 2: wall {:.0} ms, peak {:.1} MiB",
            measured.wall_ms,
            measured.max_rss_kib as f64 / 1024.0
        );
        peaks.push((size, measured.max_rss_kib));
    }
    for pair in peaks.windows(2) {
        let ((a, ka), (b, kb)) = (pair[0], pair[1]);
        println!(
            "peak memory from {a} to {b} files: {:+.0} bytes a file",
            (kb as f64 - ka as f64) * 1024.0 / (b - a) as f64
        );
    }
}

/// One run's figures.
#[derive(Debug, Default, Clone, Copy)]
struct Measured {
    wall_ms: f64,
    cpu_ms: f64,
    max_rss_kib: i64,
}

/// Runs `asr-ctk ARGS` in a child of a child (so the peak is the run's own), its output to
/// /dev/null.
fn run(args: &[String]) -> Measured {
    run_to(args, Path::new("/dev/null"))
}

fn run_to(args: &[String], out: &Path) -> Measured {
    let output = measuring(args, out).output().expect("the bench runs");
    measured(args, &output)
}

/// Runs each `asr-ctk ARGS` of `runs` at once, each in a child of its own: the longest wall
/// time (they start together), and their CPU time together.
fn run_side_by_side(runs: &[Vec<String>]) -> Measured {
    let children: Vec<_> = runs
        .iter()
        .map(|args| {
            measuring(args, Path::new("/dev/null"))
                .stdout(Stdio::piped())
                .spawn()
                .expect("the bench runs")
        })
        .collect();
    let mut together = Measured::default();
    for (args, child) in runs.iter().zip(children) {
        let one = measured(args, &child.wait_with_output().expect("the bench runs"));
        together.cpu_ms += one.cpu_ms;
        together.wall_ms = together.wall_ms.max(one.wall_ms);
        together.max_rss_kib = together.max_rss_kib.max(one.max_rss_kib);
    }
    together
}

fn measuring(args: &[String], out: &Path) -> Command {
    let mut command = Command::new(std::env::current_exe().expect("the bench"));
    command
        .arg("--measure")
        .arg(out)
        .args(args)
        .stderr(Stdio::inherit());
    command
}

/// The figures a `--measure` child printed.
fn measured(args: &[String], output: &std::process::Output) -> Measured {
    assert!(output.status.success(), "{args:?}: {}", output.status);
    let text = String::from_utf8_lossy(&output.stdout);
    let mut values = text.split_whitespace();
    let mut next = || {
        values
            .next()
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    Measured {
        wall_ms: next(),
        cpu_ms: next(),
        #[expect(clippy::cast_possible_truncation, reason = "KiB fit")]
        max_rss_kib: next() as i64,
    }
}

/// In the child: runs `asr-ctk` with the arguments after the output file, and prints its
/// wall time, CPU time (ms) and peak resident memory (KiB).
fn measure(args: &[String]) {
    let out = std::fs::File::create(&args[0]).expect("the output");
    let started = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_asr-ctk"))
        .args(&args[1..])
        .stdout(out)
        .stderr(Stdio::null())
        .status()
        .expect("asr-ctk runs");
    let wall = started.elapsed();
    // 1: a stream has an error, as the corpus's negative cases do.
    assert!(
        matches!(status.code(), Some(0 | 1)),
        "asr-ctk {args:?}: {status}"
    );
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage");
    let ms = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 * 1000.0 + t.tv_usec() as f64 / 1000.0;
    println!(
        "{:.3} {:.3} {}",
        wall.as_secs_f64() * 1000.0,
        ms(usage.user_time()) + ms(usage.system_time()),
        usage.max_rss()
    );
}

/// Every `.jsonl` of the corpus, in path order.
fn corpus_streams() -> Vec<Vec<u8>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("the corpus")
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                found.push(std::fs::read(&path).expect("a stream"));
            }
        }
    }
    found
}

/// Makes `dir` an archive of `count` files (a hundred a folder), the streams in turn;
/// files already there are kept.
fn fill(dir: &Path, streams: &[Vec<u8>], count: usize) {
    for k in 0..count {
        let folder = dir.join(format!("{:05}", k / 100));
        let file = folder.join(format!("{k:07}.jsonl"));
        if file.exists() {
            continue;
        }
        if k % 100 == 0 {
            std::fs::create_dir_all(&folder).expect("a folder");
        }
        std::fs::write(&file, &streams[k % streams.len()]).expect("a file");
    }
}

/// `asr-ctk validate --format json --jobs JOBS [--independent] PATHS...`.
fn validate_args(jobs: &str, independent: bool, paths: &[String]) -> Vec<String> {
    let mut args: Vec<String> = ["validate", "--format", "json", "--jobs", jobs]
        .map(str::to_owned)
        .to_vec();
    if independent {
        args.push("--independent".into());
    }
    args.extend(paths.iter().cloned());
    args
}

/// The median over rounds of the ratio of a round's wall time in `one` to its time in `two`.
fn median_ratio(one: &[Measured], two: &[Measured]) -> f64 {
    median(
        one.iter()
            .zip(two)
            .map(|(one, two)| one.wall_ms / two.wall_ms)
            .collect(),
    )
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// A directory of its own, removed at the end, whatever happens.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}
