//! Comparing many implementations: `asr-ctk report compare` on 50 reports of the whole
//! corpus.
//!
//! `cargo bench -p asr-ctk --bench compare` runs the reference over the whole corpus (every
//! role) once, and makes 50 reports of it, each another implementation that fails its own
//! share of the cases (one in 7 to one in 56, chosen by a seeded hash, so that the matrix has
//! splits, the disagreements are many and no two reports are alike). Then, several times
//! each, `asr-ctk report compare` of the 50 as JSON, Markdown and HTML, end to end (the
//! reports read and checked against their schema, compared, rendered, written), and the
//! comparison alone in this process; the medians, and the HTML page's size in all, per report
//! and per report and case. Options after `--`: `--runs N` (default 5), `--reports N`
//! (default 50).

#![expect(clippy::cast_precision_loss, reason = "sizes and times shown as rates")]

use asr_suite::catalog::Catalog;
use asr_suite::compare::{Order, compare};
use asr_suite::conformance::{Outcome, RunReport};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let option = |name: &str, default: usize| {
        args.iter()
            .position(|a| a == name)
            .and_then(|at| args.get(at + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (runs, count) = (option("--runs", 5), option("--reports", 50));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::temp_dir().join(format!("asr-ctk-bench-compare-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");

    let base = dir.join("reference");
    let output = Command::new(env!("CARGO_BIN_EXE_asr-ctk"))
        .args(["run", "--quiet", "--out"])
        .arg(&base)
        .current_dir(&root)
        .output()
        .expect("asr-ctk runs");
    assert!(output.status.success(), "{output:?}");
    let reference: RunReport =
        serde_json::from_slice(&std::fs::read(base.join("report.json")).expect("the report"))
            .expect("a report");
    let cases = reference.cases.len();
    let files: Vec<PathBuf> = (0..count)
        .map(|i| {
            let file = dir.join(format!("report-{i:02}.json"));
            let report = variant(&reference, i);
            std::fs::write(&file, serde_json::to_vec(&report).expect("JSON")).expect("written");
            file
        })
        .collect();
    let report_bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum();
    println!(
        "{count} reports of {cases} cases each ({:.1} MB of report.json in all)",
        report_bytes as f64 / 1e6
    );

    for format in ["json", "markdown", "html"] {
        let out = dir.join(format!("comparison.{format}"));
        let mut times = Vec::new();
        for _ in 0..runs {
            let started = Instant::now();
            let output = Command::new(env!("CARGO_BIN_EXE_asr-ctk"))
                .args(["report", "compare", "--format", format, "--out"])
                .arg(&out)
                .args(&files)
                .output()
                .expect("asr-ctk runs");
            times.push(started.elapsed().as_secs_f64());
            assert!(
                matches!(output.status.code(), Some(0 | 1)),
                "{format}: {output:?}"
            );
        }
        let size = std::fs::metadata(&out).map_or(0, |m| m.len());
        println!(
            "report compare --format {format:<8}: median {:.3} s over {runs} runs; {:.2} MB written",
            median(&mut times),
            size as f64 / 1e6
        );
        if format == "html" {
            println!(
                "the HTML page: {:.2} MB, {:.1} kB per report, {:.1} bytes per report and case",
                size as f64 / 1e6,
                size as f64 / 1e3 / count as f64,
                size as f64 / (count * cases) as f64
            );
        }
    }

    let loaded: Vec<(String, RunReport)> = files
        .iter()
        .map(|f| {
            let bytes = std::fs::read(f).expect("a report");
            let name = f.display().to_string();
            let report = asr_suite::compare::parse_report(&name, &bytes).expect("a report");
            (name, report)
        })
        .collect();
    let (mut comparing, mut rendering) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let started = Instant::now();
        let comparison = compare(&loaded, Order::Given);
        comparing.push(started.elapsed().as_secs_f64());
        let started = Instant::now();
        let html = asr_suite::render::comparison_html(&comparison);
        rendering.push(started.elapsed().as_secs_f64());
        assert!(html.len() > cases, "a page");
    }
    println!(
        "in process: the comparison {:.3} s, its HTML page {:.3} s (medians over {runs} runs)",
        median(&mut comparing),
        median(&mut rendering)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `i`th implementation: the reference's report under another name, failing each case
/// whose seeded hash falls in its share.
fn variant(reference: &RunReport, i: usize) -> RunReport {
    let mut report = reference.clone();
    if let Some(implementation) = report.adapter.implementation.as_mut() {
        implementation.name = format!("implementation-{i:02}");
        implementation.version = format!("1.{i}");
    }
    let share = 7 * (1 + i % 8) as u64;
    for case in &mut report.cases {
        if hash(&case.name, i) % share == 0 && case.outcome == Outcome::Pass {
            case.outcome = Outcome::Fail;
            case.detail = Some(format!("implementation {i} read it otherwise"));
        }
    }
    report.summarize(Catalog::embedded());
    report
}

/// FNV-1a of the case's name and the implementation's number.
fn hash(name: &str, i: usize) -> u64 {
    name.bytes()
        .chain(i.to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

fn median(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}
