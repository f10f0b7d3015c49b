//! `asr-ctk fuzz` against the reference adapter: streams a second through the persistent
//! protocol (validator and reader roles) and in one-shot mode, and their ratio.
//!
//! `cargo bench -p asr-ctk --bench fuzz` runs the release `asr-ctk fuzz --adapter reference`
//! several times for each setting and prints the median rate: the validator role with one
//! job and with `--jobs N`, the reader role and one-shot mode with `--jobs N` (one job a core
//! of the 2-core machine the figures in docs/fuzzing.md come from). Options after `--`:
//! `--runs N` (default 3), `--jobs N` (default 2).

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
    let jobs = number("--jobs", 2).to_string();
    let one = "1".to_owned();
    let out = std::env::temp_dir().join(format!("asr-ctk-bench-fuzz-{}", std::process::id()));
    let mut rates = Vec::new();
    for (label, role, jobs, iterations, extra) in [
        ("persistent, validator", "validator", &jobs, 20_000, &[][..]),
        ("persistent, reader", "reader", &jobs, 20_000, &[][..]),
        (
            "one-shot, validator",
            "validator",
            &jobs,
            600,
            &["--oneshot"][..],
        ),
        ("persistent, validator", "validator", &one, 20_000, &[][..]),
    ] {
        let mut samples = Vec::new();
        for run in 0..runs {
            let started = Instant::now();
            let output = Command::new(env!("CARGO_BIN_EXE_asr-ctk"))
                .args([
                    "fuzz",
                    "--adapter",
                    "reference",
                    "--role",
                    role,
                    "--jobs",
                    jobs,
                ])
                .args(["--iterations", &iterations.to_string()])
                .args(["--seed", &(run + 1).to_string(), "--out"])
                .arg(&out)
                .args(extra)
                .output()
                .expect("asr-ctk runs");
            let seconds = started.elapsed().as_secs_f64();
            assert!(output.status.success(), "{output:?}");
            samples.push(f64::from(iterations) / seconds);
        }
        samples.sort_by(f64::total_cmp);
        let median = samples[samples.len() / 2];
        println!(
            "{label:<22}: median {median:>7.0} streams/s over {runs} runs of {iterations} streams ({jobs} jobs)"
        );
        rates.push(median);
    }
    println!(
        "persistent mode fuzzes {:.1} times as many streams a second as one-shot mode",
        rates[0] / rates[2]
    );
    std::fs::remove_dir_all(&out).ok();
}
