//! Misbehaving adapters: each fault is recorded as its own outcome, the run finishes with a
//! complete report, memory stays bounded and no adapter process is left running.

use asr_suite::conformance::{Outcome, RunReport};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The cases every fault run uses: those of ASR-212.
const CASES: &str = "messages/ASR-212/*";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run(adapter: &str, extra: &[&str], env: &[(&str, &str)]) -> (Output, RunReport) {
    let out = std::env::temp_dir().join(format!("asr-ctk-faults-{}-{adapter}", std::process::id()));
    let script = root()
        .join("runner/tests/adapters")
        .join(format!("{adapter}.py"));
    let command = format!("python3 {}", script.display());
    let mut args = vec![
        "run",
        "--adapter",
        &command,
        "--case",
        CASES,
        "--quiet",
        "--out",
    ];
    let out_str = out.to_string_lossy().into_owned();
    args.push(&out_str);
    args.extend_from_slice(extra);
    let output = Command::new(env!("CARGO_BIN_EXE_asr-ctk"))
        .args(&args)
        .envs(env.iter().copied())
        .current_dir(root())
        .output()
        .expect("asr-ctk runs");
    let text = std::fs::read_to_string(out.join("report.json"))
        .unwrap_or_else(|e| panic!("no report ({e}): {output:?}"));
    let report: RunReport = serde_json::from_str(&text).expect("the report parses");
    assert_no_process_left(&script);
    (output, report)
}

fn assert_no_process_left(script: &Path) {
    let needle = script.to_string_lossy().into_owned();
    let mut alive = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("procfs").flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(&needle) {
            alive.push(cmdline);
        }
    }
    assert!(
        alive.is_empty(),
        "adapter processes left running: {alive:?}"
    );
}

fn outcomes(report: &RunReport) -> Vec<(String, Outcome)> {
    report
        .cases
        .iter()
        .map(|c| (c.name.clone(), c.outcome))
        .collect()
}

fn count(report: &RunReport, outcome: Outcome) -> usize {
    report.cases.iter().filter(|c| c.outcome == outcome).count()
}

fn expected_cases() -> usize {
    std::fs::read_dir(root().join("cases/messages/ASR-212"))
        .expect("case dir")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .count()
}

#[test]
fn an_adapter_that_never_answers_start_times_out_once_and_every_case_says_so() {
    let started = std::time::Instant::now();
    let (output, report) = run("never_starts", &["--timeout", "1"], &[]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        report.cases.len(),
        expected_cases(),
        "the report is complete"
    );
    assert_eq!(
        count(&report, Outcome::Timeout),
        expected_cases(),
        "{:?}",
        outcomes(&report)
    );
    assert!(
        report
            .cases
            .iter()
            .all(|c| c.detail.as_deref().is_some_and(|d| d.contains("start")))
    );
    assert!(report.adapter.implementation.is_none());
    assert!(
        started.elapsed().as_secs() < 10,
        "the timeout is waited out once, not once a case"
    );
}

#[test]
fn a_hang_on_one_case_is_a_timeout_and_the_rest_pass() {
    let hang = "messages/ASR-212/n_image_data_and_blob";
    let (_, report) = run(
        "hangs_on_one_case",
        &["--timeout", "1"],
        &[("FAULT_CASE", hang)],
    );
    assert_eq!(report.cases.len(), expected_cases());
    for case in &report.cases {
        let want = if case.name == hang {
            Outcome::Timeout
        } else if case.name.contains("/n_") {
            Outcome::Fail
        } else {
            Outcome::Pass
        };
        assert_eq!(case.outcome, want, "{}", case.name);
    }
}

#[test]
fn an_adapter_that_exits_midway_is_a_crash_and_is_restarted() {
    let (_, report) = run("exits_midway", &[], &[]);
    assert_eq!(report.cases.len(), expected_cases());
    let crashes: Vec<_> = report
        .cases
        .iter()
        .filter(|c| c.outcome == Outcome::Crash)
        .collect();
    assert!(!crashes.is_empty());
    assert!(
        crashes.iter().all(|c| c
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("exit status: 3"))),
        "{crashes:?}"
    );
    assert!(
        count(&report, Outcome::Pass) > 0,
        "cases after a restart are answered"
    );
}

#[test]
fn garbage_on_stdout_is_a_protocol_error_not_a_crash() {
    let (_, report) = run("prints_garbage", &[], &[]);
    let errors: Vec<_> = report
        .cases
        .iter()
        .filter(|c| c.outcome == Outcome::ProtocolError)
        .collect();
    assert!(!errors.is_empty());
    assert!(
        errors[0]
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("not JSON") && d.contains("this is not json"))
    );
    assert_eq!(count(&report, Outcome::Crash), 0);
}

#[test]
fn a_wrong_seq_is_a_protocol_error_and_restarts_are_capped() {
    let (_, report) = run("wrong_seq", &["--max-restarts", "3"], &[]);
    assert_eq!(report.cases.len(), expected_cases());
    let first = &report.cases[0];
    assert_eq!(first.outcome, Outcome::ProtocolError);
    assert!(
        first.detail.as_deref().is_some_and(|d| d.contains("seq")),
        "{first:?}"
    );
    // One start and three restarts answer four cases wrongly; the rest are not run.
    assert_eq!(
        count(&report, Outcome::ProtocolError),
        4,
        "{:?}",
        outcomes(&report)
    );
    assert!(
        report
            .cases
            .iter()
            .filter(|c| c.outcome == Outcome::Crash)
            .all(|c| c
                .detail
                .as_deref()
                .is_some_and(|d| d.contains("--max-restarts")))
    );
}

#[test]
fn a_gigabyte_line_is_a_protocol_error_read_no_further_than_the_bound() {
    let started = std::time::Instant::now();
    let (_, report) = run("floods_stdout", &["--max-restarts", "1"], &[]);
    assert_eq!(report.cases[0].outcome, Outcome::ProtocolError);
    assert!(
        report.cases[0]
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("longer than"))
    );
    assert!(started.elapsed().as_secs() < 30);
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("rusage");
    // ru_maxrss is in KiB on Linux: the kit stayed far below the gigabyte it was sent.
    assert!(
        usage.max_rss() < 300 * 1024,
        "peak memory of a child: {} KiB",
        usage.max_rss()
    );
}

#[test]
fn megabytes_on_stderr_are_kept_short_and_are_not_a_failure() {
    let (_, report) = run("floods_stderr", &[], &[]);
    assert_eq!(
        count(&report, Outcome::Crash)
            + count(&report, Outcome::ProtocolError)
            + count(&report, Outcome::Timeout),
        0
    );
    let stderr = report.cases[0].stderr.as_deref().expect("stderr kept");
    assert!(stderr.len() < 20_000, "{} bytes kept", stderr.len());
    assert!(stderr.contains("earlier bytes not kept"));
}

#[test]
fn exiting_zero_without_an_answer_is_a_crash() {
    let (_, report) = run("exits_zero_silently", &["--max-restarts", "2"], &[]);
    let first = &report.cases[0];
    assert_eq!(first.outcome, Outcome::Crash);
    assert!(
        first
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("without answering")),
        "{first:?}"
    );
    assert_eq!(report.cases.len(), expected_cases());
}

#[test]
fn a_wrong_number_of_stream_answers_is_a_protocol_error() {
    let (_, report) = run("wrong_stream_count", &["--max-restarts", "0"], &[]);
    assert_eq!(report.cases[0].outcome, Outcome::ProtocolError);
    assert!(
        report.cases[0]
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("stream entries"))
    );
}

#[test]
fn a_slow_start_within_the_timeout_is_fine() {
    let (output, report) = run("slow_start", &["--timeout", "4"], &[]);
    assert_eq!(
        count(&report, Outcome::Pass) + count(&report, Outcome::Fail),
        expected_cases(),
        "{output:?}"
    );
    assert_eq!(
        report
            .adapter
            .implementation
            .as_ref()
            .map(|i| i.name.as_str()),
        Some("fault-slow_start")
    );
}

#[test]
fn validate_protocol_catches_what_only_the_schema_forbids() {
    let (_, lenient) = run("line_zero", &["--max-restarts", "0"], &[]);
    assert!(
        lenient
            .cases
            .iter()
            .all(|c| matches!(c.outcome, Outcome::Pass | Outcome::Fail)),
        "{:?}",
        outcomes(&lenient)
    );
    let (_, strict) = run(
        "line_zero",
        &["--max-restarts", "20", "--validate-protocol"],
        &[],
    );
    let first = &strict.cases[0];
    assert_eq!(first.outcome, Outcome::ProtocolError);
    assert!(
        first
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("reply schema")),
        "{first:?}"
    );
}
