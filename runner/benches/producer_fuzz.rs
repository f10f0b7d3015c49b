//! `asr-ctk fuzz --role producer`: native sessions a second, generated, converted by the
//! Python example's Gemini CLI converter through the persistent protocol and judged; and
//! the kit's own cost of a session, generated and judged with no adapter, per format.
//!
//! `cargo bench -p asr-ctk --bench producer_fuzz` runs the release `asr-ctk fuzz --role
//! producer --format gemini-cli-json --keep 0` (nothing shrunk: the rate is of sessions
//! judged) several times and prints the median rate, then times `native::generate` and
//! `judge_conversion` in process over each format's sessions (the output judged is the
//! seed fixture's golden where the seed is a fixture, else a header alone) and prints the
//! median time a session. Options after `--`: `--runs N` (default 3), `--sessions N`
//! (default 200, through the converter), `--jobs N` (default 1).

#![expect(clippy::cast_precision_loss, reason = "counts shown as rates")]

use asr_suite::fuzz::native;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let number = |flag: &str, default: usize| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|at| args.get(at + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let runs = number("--runs", 3);
    let sessions = number("--sessions", 200);
    let jobs = number("--jobs", 1).to_string();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let adapter = format!(
        "python3 {}",
        root.join("examples/python-adapter/adapter.py").display()
    );
    let out = std::env::temp_dir().join(format!("asr-ctk-bench-pfuzz-{}", std::process::id()));
    let mut rates = Vec::new();
    for run in 0..runs {
        let started = Instant::now();
        let output = Command::new(env!("CARGO_BIN_EXE_asr-ctk"))
            .args(["fuzz", "--role", "producer", "--format", "gemini-cli-json"])
            .args(["--adapter", &adapter, "--keep", "0", "--jobs", &jobs])
            .args(["--iterations", &sessions.to_string()])
            .args(["--seed", &(run + 1).to_string(), "--out"])
            .arg(&out)
            .output()
            .expect("asr-ctk runs");
        let seconds = started.elapsed().as_secs_f64();
        // 1 when it found something (non-strict findings exit 0): the rate counts either way.
        assert!(matches!(output.status.code(), Some(0 | 1)), "{output:?}");
        rates.push(sessions as f64 / seconds);
    }
    rates.sort_by(f64::total_cmp);
    println!(
        "through the Python converter (persistent, {jobs} job(s)): median {:.1} sessions/s over {runs} runs of {sessions}",
        rates[rates.len() / 2]
    );
    std::fs::remove_dir_all(&out).ok();

    let header = b"{\"type\":\"session\",\"seq\":0,\"id\":\"h\",\"formatVersion\":\"0.1\",\"sessionId\":\"s\"}\n";
    for format in native::formats() {
        let goldens: Vec<(String, Vec<u8>)> = native::seeds(format)
            .iter()
            .map(|seed| {
                let golden =
                    asr_suite::embedded::corpus_files(&format!("{}/expected", seed.origin))
                        .into_iter()
                        .next()
                        .map_or_else(|| header.to_vec(), |(_, bytes)| bytes.to_vec());
                (seed.origin.clone(), golden)
            })
            .collect();
        let mut times = Vec::new();
        for run in 0..runs {
            let count = 200u64;
            let started = Instant::now();
            for iteration in 0..count {
                let Some(generated) = native::generate(format, run as u64 + 1, iteration) else {
                    continue;
                };
                let output = goldens
                    .iter()
                    .find(|(origin, _)| *origin == generated.seed)
                    .map_or_else(|| header.to_vec(), |(_, g)| g.clone());
                let judged = asr_suite::judge::judge_conversion(
                    format,
                    &generated.native.files(),
                    &[(String::new(), output)],
                );
                std::hint::black_box(judged);
            }
            times.push(started.elapsed().as_secs_f64() * 1e6 / count as f64);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "kit alone, {format:<28}: median {:>8.0} us a session (generate + judge)",
            times[times.len() / 2]
        );
    }
}
