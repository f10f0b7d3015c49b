//! `asr-ctk fuzz` against the reference adapter: streams a second through the persistent
//! protocol (validator and reader roles) and in one-shot mode, and their ratio.
//!
//! `cargo bench -p asr-ctk --bench fuzz` runs the release `asr-ctk fuzz --adapter reference`
//! several times for each setting and prints the median rate: the validator role with one
//! job and with `--jobs N`, the reader role and one-shot mode with `--jobs N` (one job a core
//! of the 2-core machine the figures in docs/fuzzing.md come from). Options after `--`:
//! `--runs N` (default 3), `--jobs N` (default 2).
//!
//! Each setting also shows the CPU time a stream costs, the kit's and the adapter's together
//! (both run on the machine's cores): the cores divided by it bound the streams a second
//! however many jobs run.

#![expect(
    clippy::cast_precision_loss,
    reason = "times and counts are shown as decimals"
)]

use nix::sys::resource::{UsageWho, getrusage};

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
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let mut rates = Vec::new();
    let mut costs = Vec::new();
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
        let mut cpu = Vec::new();
        for run in 0..runs {
            let before = children_cpu_seconds();
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
            cpu.push((children_cpu_seconds() - before) / f64::from(iterations) * 1e6);
        }
        samples.sort_by(f64::total_cmp);
        cpu.sort_by(f64::total_cmp);
        let median = samples[samples.len() / 2];
        let per_stream = cpu[cpu.len() / 2];
        println!(
            "{label:<22}: median {median:>7.0} streams/s over {runs} runs of {iterations} streams ({jobs} jobs), CPU {per_stream:.0} µs a stream"
        );
        rates.push(median);
        costs.push(per_stream);
    }
    println!(
        "the CPU a stream costs in the validator role ({:.0} µs, kit and adapter) bounds {cores} cores at {:.0} streams/s",
        costs[0],
        cores as f64 * 1e6 / costs[0]
    );
    println!(
        "persistent mode fuzzes {:.1} times as many streams a second as one-shot mode",
        rates[0] / rates[2]
    );
    std::fs::remove_dir_all(&out).ok();
}

/// The CPU time (user and system) of the children ended so far, with theirs.
fn children_cpu_seconds() -> f64 {
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage");
    let seconds = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    seconds(usage.user_time()) + seconds(usage.system_time())
}
