//! Persistent against one-shot mode, for the same adapter.
//!
//! `cargo bench -p asr-ctk --bench run` runs the whole corpus against the reference adapter
//! in persistent mode and in one-shot mode, several times each, and reports the median wall
//! time, cases per second and their ratio. Then the schema check of messages: persistent mode
//! as run by default and with `--validate-protocol`, the medians, their ratio, and the cost
//! per reply (the difference of the medians over the cases run, one reply each). Options
//! after `--`: `--runs N` (default 5).

#![expect(clippy::cast_precision_loss, reason = "case counts shown as rates")]

use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs: usize = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|at| args.get(at + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::env::temp_dir().join(format!("asr-ctk-bench-run-{}", std::process::id()));
    let mut timings = Vec::new();
    for (label, extra) in [
        ("persistent", &[][..]),
        ("one-shot", &["--oneshot"][..]),
        ("checked", &["--validate-protocol"][..]),
    ] {
        let mut times = Vec::new();
        let mut cases = 0;
        for _ in 0..runs {
            let started = Instant::now();
            let output = Command::new(env!("CARGO_BIN_EXE_asr-ctk"))
                .args(["run", "--quiet", "--out"])
                .arg(&out)
                .args(extra)
                .current_dir(&root)
                .output()
                .expect("asr-ctk runs");
            times.push(started.elapsed().as_secs_f64());
            assert!(output.status.success(), "{output:?}");
            let report: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(out.join("report.json")).expect("report"),
            )
            .expect("JSON");
            cases = report["cases"].as_array().map_or(0, Vec::len);
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        println!(
            "{label:<10}: {cases} cases, median {median:.3} s over {runs} runs, {:.0} cases/s",
            cases as f64 / median
        );
        timings.push(median);
    }
    println!(
        "persistent mode is {:.1} times faster than one-shot mode",
        timings[1] / timings[0]
    );
    let (plain, checked) = (timings[0], timings[2]);
    println!(
        "--validate-protocol: {:.3} of the run's time, {:.1} us more per reply",
        checked / plain,
        (checked - plain) / cases_run(&out) * 1e6
    );
    std::fs::remove_dir_all(&out).ok();
}

/// The cases of the last run's report, each answered with one reply.
fn cases_run(out: &Path) -> f64 {
    let report: serde_json::Value = std::fs::read_to_string(out.join("report.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    report["cases"].as_array().map_or(0, Vec::len) as f64
}
