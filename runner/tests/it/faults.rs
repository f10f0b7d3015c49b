//! Misbehaving adapters: each fault is recorded as its own outcome, the run finishes with a
//! complete report, memory stays bounded and no adapter process is left running.

use crate::helpers::{BIN, Kit, Scratch, adapters, alone, asr_ctk, corpus, root, scratch};
use asr_suite::conformance::{Outcome, RuleVerdict, RunReport};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// The cases every fault run uses: those of ASR-212.
const CASES: &str = "messages/ASR-212/*";

/// Runs `asr-ctk run --quiet` with a fault adapter over [`CASES`].
fn run(adapter: &str, extra: &[&str], env: &[(&str, &str)]) -> (Output, RunReport) {
    let mut args = vec!["--quiet"];
    args.extend_from_slice(extra);
    let (output, report, _out) = run_over(adapter, CASES, &args, env);
    (output, report)
}

fn temp_dir(name: &str) -> Scratch {
    scratch(&format!("faults-{name}"))
}

/// The command line of a fault adapter, tagged with an argument of its own so that its
/// processes (and the ones it leaves behind, which carry the tag too) are told apart from
/// those of tests running at the same time; and the tag, to look for.
fn adapter_command(adapter: &str) -> (String, String) {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let script = adapters().join(format!("{adapter}.py"));
    // Delimited on both sides, so that no tag is the start of another.
    let tag = format!(
        "tag{}x{}x",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    );
    (format!("python3 {} {tag}", script.display()), tag)
}

/// No process whose command line holds `tag` is alive (a process killed a moment ago may
/// take that moment to go).
fn assert_no_process_left(tag: &str) {
    let alive = || {
        let mut alive = Vec::new();
        for entry in std::fs::read_dir("/proc").expect("procfs").flatten() {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(tag) {
                alive.push(cmdline);
            }
        }
        alive
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    let mut left = alive();
    while !left.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left = alive();
    }
    assert!(left.is_empty(), "adapter processes left running: {left:?}");
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
    std::fs::read_dir(corpus().join("messages/ASR-212"))
        .expect("case dir")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .count()
}

#[test]
fn an_adapter_that_never_answers_start_is_a_harness_failure_said_once() {
    let started = std::time::Instant::now();
    let (output, report) = run("never_starts", &["--start-timeout", "1"], &[]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    assert_eq!(
        report.cases.len(),
        expected_cases(),
        "the report is complete"
    );
    assert_eq!(
        count(&report, Outcome::NotRun),
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
    assert!(report.incomplete.is_some());
    assert!(report.adapter.implementation.is_none());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("did not start").count(), 1, "{stderr}");
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
        &["--timeout", "3"],
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
    assert_eq!(
        count(&report, Outcome::NotRun),
        expected_cases() - 4,
        "{:?}",
        outcomes(&report)
    );
    assert!(
        report
            .cases
            .iter()
            .filter(|c| c.outcome == Outcome::NotRun)
            .all(|c| c
                .detail
                .as_deref()
                .is_some_and(|d| d.contains("--max-restarts")))
    );
    assert!(
        report
            .incomplete
            .as_deref()
            .is_some_and(|d| d.contains("--max-restarts"))
    );
}

#[test]
fn cases_not_run_after_the_restart_limit_count_for_no_rule() {
    let (output, report, out) = run_over(
        "wrong_seq",
        "messages/**",
        &["--role", "validator", "--max-restarts", "1", "--quiet"],
        &[],
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(count(&report, Outcome::ProtocolError), 2);
    let ran: BTreeSet<&str> = report
        .cases
        .iter()
        .filter(|c| c.outcome != Outcome::NotRun)
        .flat_map(|c| c.rules.iter().map(String::as_str))
        .collect();
    let mut untested = 0;
    for rule in &report.rules {
        if rule.roles.iter().any(|r| r == "validator") && !ran.contains(rule.rule.as_str()) {
            assert_ne!(
                rule.verdict,
                RuleVerdict::NonConformant,
                "{} has no case that ran",
                rule.rule
            );
            untested += 1;
        }
    }
    assert!(untested > 20, "most rules had no case run: {untested}");
    let badge = std::fs::read_to_string(out.join("badge.json")).expect("badge");
    assert!(badge.contains("incomplete"), "{badge}");
}

#[test]
fn a_gigabyte_line_is_a_protocol_error_read_no_further_than_the_bound() {
    // Alone in its process: the peak it reads (RUSAGE_CHILDREN) is then the kit's it runs.
    if !alone("faults::a_gigabyte_line_is_a_protocol_error_read_no_further_than_the_bound") {
        return;
    }
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
fn a_slow_start_within_the_start_timeout_is_fine_though_longer_than_an_answers() {
    // The adapter takes 2 s to start; each answer may take 1.9 s.
    let (output, report) = run(
        "slow_start",
        &["--timeout", "1.9", "--start-timeout", "20"],
        &[],
    );
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
fn a_finding_on_line_0_breaks_the_protocol_with_or_without_validate_protocol() {
    for extra in [&[][..], &["--validate-protocol"][..]] {
        let mut args = vec!["--max-restarts", "0"];
        args.extend(extra);
        let (_, report) = run("line_zero", &args, &[]);
        let first = &report.cases[0];
        assert_eq!(first.outcome, Outcome::ProtocolError, "{extra:?}");
        assert!(
            first
                .detail
                .as_deref()
                .is_some_and(|d| d.contains("line 0") || d.contains("reply schema")),
            "{first:?}"
        );
    }
}

/// Runs `asr-ctk run` with a fault adapter over `cases`, its report in a temporary directory.
fn run_over(
    adapter: &str,
    cases: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Output, RunReport, Scratch) {
    let out = temp_dir(adapter);
    let (command, script) = adapter_command(adapter);
    let out_str = out.to_string_lossy().into_owned();
    let mut args = vec![
        "run",
        "--adapter",
        &command,
        "--case",
        cases,
        "--out",
        &out_str,
    ];
    args.extend_from_slice(extra);
    let output = Kit::new(&args).envs(env).output();
    let text = std::fs::read_to_string(out.join("report.json"))
        .unwrap_or_else(|e| panic!("no report ({e}): {output:?}"));
    let report: RunReport = serde_json::from_str(&text).expect("the report parses");
    assert_no_process_left(&script);
    (output, report, out)
}

#[test]
fn an_adapter_that_does_not_read_its_input_cannot_hang_the_run() {
    // Its stdin pipe fills up after some tens of requests; no wait may then be endless.
    let (output, report, _dir) = run_over(
        "never_reads",
        "**",
        &[
            "--role",
            "validator",
            "--timeout",
            "2",
            "--max-restarts",
            "2",
            "--quiet",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let selected = report.cases.len();
    assert!(selected > 100, "{selected} cases");
    let refused: Vec<&str> = report
        .cases
        .iter()
        .filter_map(|c| c.detail.as_deref())
        .filter(|d| {
            d.contains("before it was sent the request") || d.contains("not reading its input")
        })
        .collect();
    assert!(!refused.is_empty(), "{:?}", outcomes(&report));
    assert!(count(&report, Outcome::NotRun) > 0);
}

#[test]
fn diff_with_an_adapter_that_does_not_read_its_input_finishes() {
    let (command, script) = adapter_command("never_reads");
    let out = temp_dir("diff-never-reads");
    let output = asr_ctk(&[
        "diff",
        "--role",
        "validator",
        "--adapter",
        "reference",
        "--adapter",
        &command,
        "--timeout",
        "2",
        "--out",
        &out.to_string_lossy(),
    ]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(out.join("report.json").is_file());
    assert_no_process_left(&script);
}

#[test]
fn an_adapter_is_started_once_for_every_role() {
    let dir = temp_dir("counts-starts");
    let count_file = dir.join("starts");
    let (output, report, _out) = run_over(
        "counts_starts",
        "**",
        &["--quiet"],
        &[("COUNT_FILE", &count_file.to_string_lossy())],
    );
    assert!(output.status.code().is_some(), "{output:?}");
    let starts = std::fs::read_to_string(&count_file).expect("count file");
    assert_eq!(
        starts.lines().count(),
        1,
        "started {} times",
        starts.lines().count()
    );
    assert!(
        report
            .cases
            .iter()
            .filter(|c| c.role == asr_suite::protocol::ProtocolRole::Reader)
            .all(|c| c.outcome == Outcome::Skipped),
        "a validator is not asked reader cases"
    );
}

#[test]
fn daemons_an_adapter_starts_end_with_it() {
    let (_, report, _dir) = run_over("detaches", CASES, &["--quiet", "--timeout", "20"], &[]);
    assert_eq!(report.cases.len(), expected_cases());
    assert_eq!(
        count(&report, Outcome::Pass) + count(&report, Outcome::Fail),
        expected_cases()
    );
}

#[test]
fn daemons_of_parallel_adapters_end_with_them() {
    let (_, report, _dir) = run_over(
        "detaches",
        "messages/**",
        &["--quiet", "--jobs", "3", "--timeout", "20"],
        &[],
    );
    assert!(
        report
            .cases
            .iter()
            .all(|c| matches!(c.outcome, Outcome::Pass | Outcome::Fail | Outcome::Skipped)),
        "{:?}",
        outcomes(&report)
    );
}

/// A one-shot adapter that answers every case and leaves a process behind (`linger`:
/// `detach` or `stdout`): every answer is judged, and nothing is left.
fn oneshot_lingering(linger: &str) {
    let (_, report, _dir) = run_over(
        "oneshot_lingers",
        CASES,
        &["--oneshot", "--quiet", "--timeout", "20"],
        &[("LINGER", linger)],
    );
    assert_eq!(
        count(&report, Outcome::Pass) + count(&report, Outcome::Fail),
        expected_cases(),
        "{:?}",
        outcomes(&report)
    );
}

#[test]
fn daemons_a_one_shot_adapter_starts_end_with_it() {
    oneshot_lingering("detach");
}

#[test]
fn a_one_shot_answer_is_kept_when_something_it_started_holds_its_stdout() {
    let started = std::time::Instant::now();
    oneshot_lingering("stdout");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the lingering processes are not waited for"
    );
}

#[test]
fn an_adapter_that_exits_while_its_child_holds_stdout_has_crashed() {
    let fault = "messages/ASR-212/n_image_data_and_blob";
    let (_, report, _dir) = run_over(
        "exits_holding_stdout",
        CASES,
        &["--quiet", "--timeout", "30"],
        &[("FAULT_CASE", fault)],
    );
    let first = report
        .cases
        .iter()
        .find(|c| c.name == fault)
        .expect("the case");
    assert_eq!(first.outcome, Outcome::Crash, "{first:?}");
    assert!(
        first
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("exited")),
        "{first:?}"
    );
    assert!(first.millis < 10_000, "not waited out: {} ms", first.millis);
    assert!(
        count(&report, Outcome::Pass) > 0,
        "the restarted adapter answers"
    );
}

#[test]
fn a_case_answered_twice_is_blamed_and_the_next_case_is_not() {
    let (_, report, _dir) = run_over("answers_twice", CASES, &["--quiet"], &[]);
    let outcomes = outcomes(&report);
    let twice: Vec<_> = report
        .cases
        .iter()
        .filter(|c| c.outcome == Outcome::ProtocolError)
        .collect();
    assert_eq!(twice.len(), 1, "{outcomes:?}");
    assert!(
        twice[0]
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("answered twice")),
        "{twice:?}"
    );
    assert_eq!(
        count(&report, Outcome::Pass) + count(&report, Outcome::Fail),
        expected_cases() - 1,
        "{outcomes:?}"
    );
}

#[test]
fn a_last_case_answered_twice_is_blamed_at_stop() {
    let (_, report, _dir) = run_over(
        "answers_twice",
        "messages/ASR-212/y_image_blob_only",
        &["--quiet", "--role", "validator"],
        &[("TWICE_ALL", "1")],
    );
    assert_eq!(report.cases.len(), 1);
    assert_eq!(
        report.cases[0].outcome,
        Outcome::ProtocolError,
        "{report:?}"
    );
}

#[test]
fn answers_written_before_their_request_are_refused() {
    let (_, report, _dir) = run_over("answers_ahead", CASES, &["--quiet"], &[]);
    let early: Vec<_> = report
        .cases
        .iter()
        .filter(|c| {
            c.detail
                .as_deref()
                .is_some_and(|d| d.contains("before it was sent the request"))
        })
        .collect();
    assert!(!early.is_empty(), "{:?}", outcomes(&report));
    assert!(early.iter().all(|c| c.outcome == Outcome::ProtocolError));
}

/// Runs an adapter command that cannot start: the kit must say so once, run nothing and
/// exit with the harness-failure code. Returns its stderr and report.
fn start_failure(name: &str, command: &str) -> (String, RunReport) {
    let out = temp_dir(name);
    let output = asr_ctk(&["run", "--adapter", command, "--out", &out.to_string_lossy()]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(stderr.matches("did not start").count(), 1, "{stderr}");
    let report: RunReport = crate::helpers::report_in(&out);
    assert!(report.cases.iter().all(|c| c.outcome == Outcome::NotRun));
    (stderr, report)
}

#[test]
fn a_mistyped_adapter_command_is_said_once_with_the_harness_code() {
    let (stderr, _) = start_failure("mistyped", "no-such-adapter-command-x7");
    assert!(stderr.contains("no-such-adapter-command-x7"), "{stderr}");
    assert!(stderr.lines().count() < 5, "{stderr}");
}

#[test]
fn an_adapter_that_fails_to_start_shows_its_stderr_once() {
    let (stderr, report) = start_failure("missing-script", "python3 /nonexistent-adapter-x7.py");
    assert_eq!(
        stderr.matches("No such file or directory").count(),
        1,
        "Python's own error, once: {stderr}"
    );
    assert!(report.incomplete.is_some());
}

#[test]
fn huge_replies_make_small_reports_and_unknown_rule_ids_are_reported() {
    let (output, report, dir) = run_over("huge_replies", CASES, &["--quiet"], &[]);
    for name in ["report.json", "report.html", "report.md", "junit.xml"] {
        let size = std::fs::metadata(dir.join(name)).expect("report").len();
        assert!(size < 4 << 20, "{name} is {size} bytes");
    }
    let case = report
        .cases
        .iter()
        .find(|c| c.name.contains("/y_"))
        .expect("a positive case");
    assert_eq!(case.outcome, Outcome::Fail);
    let kept = |t: &Option<String>| t.as_deref().map_or(0, str::len);
    assert!(kept(&case.actual) <= 70 << 10, "{}", kept(&case.actual));
    assert!(kept(&case.stderr) <= 70 << 10, "{}", kept(&case.stderr));
    assert!(
        case.stderr
            .as_deref()
            .is_some_and(|s| s.contains("not kept")),
        "what was cut is said"
    );
    assert!(
        case.unknown_rules.contains(&"ASR-999".to_owned()),
        "{:?}",
        case.unknown_rules
    );
    assert!(!case.unknown_rules.contains(&"ASR-212".to_owned()));
    assert_eq!(
        case.unknown_rules.len(),
        20,
        "bounded: {:?}",
        case.unknown_rules
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("ASR-999"), "{stdout}");
}

#[test]
fn escape_codes_of_an_adapter_are_shown_escaped() {
    let (output, report, dir) = run_over("escape_codes", CASES, &[], &[]);
    assert_eq!(count(&report, Outcome::Error), expected_cases());
    let stderr = &output.stderr;
    assert!(
        !stderr.contains(&0x1b),
        "{}",
        String::from_utf8_lossy(stderr)
    );
    assert!(
        String::from_utf8_lossy(stderr).contains("\\u{1b}[2J"),
        "{}",
        String::from_utf8_lossy(stderr)
    );
    // The error message is in every report (Markdown escapes its `[` too); the adapter's
    // stderr may come after its answer on a busy machine, so it is not counted on here.
    for name in ["report.md", "report.html", "junit.xml"] {
        let text = std::fs::read(dir.join(name)).expect(name);
        assert!(!text.contains(&0x1b) && !text.contains(&0x07), "{name}");
        assert!(String::from_utf8_lossy(&text).contains("\\u{1b}"), "{name}");
    }
    let json = std::fs::read_to_string(dir.join("report.json")).expect("report.json");
    assert!(
        json.contains("\\u001b[2J"),
        "the JSON report keeps the text, escaped by JSON"
    );
}

#[test]
fn a_name_of_megabytes_is_cut_in_the_console_and_in_every_report() {
    let (output, report, dir) = run_over("huge_identity", CASES, &[], &[]);
    assert_eq!(count(&report, Outcome::Skipped), expected_cases());
    let console = [output.stdout.as_slice(), output.stderr.as_slice()].concat();
    assert!(
        console.len() < 1 << 20,
        "{} bytes on the console",
        console.len()
    );
    let console = String::from_utf8_lossy(&console);
    assert!(console.contains("more bytes not kept]"), "{console}");
    let implementation = report.adapter.implementation.expect("an identity");
    for (text, kept) in [
        (&implementation.name, 256),
        (&implementation.version, 256),
        (&implementation.language, 256),
        (implementation.homepage.as_ref().expect("a homepage"), 2048),
        (
            implementation.issues.as_ref().expect("an issues link"),
            2048,
        ),
    ] {
        assert!(text.len() <= kept + 40, "{} bytes kept", text.len());
        assert!(text.ends_with(" more bytes not kept]"), "{text}");
    }
    assert!(
        implementation
            .name
            .ends_with("…[10485504 more bytes not kept]")
    );
    for case in &report.cases {
        let issue = case.issue.as_deref().unwrap_or_default();
        assert!(
            issue.len() <= 2048 + 40,
            "{} bytes of issue link",
            issue.len()
        );
    }
    for entry in std::fs::read_dir(&dir).expect("the reports").flatten() {
        let size = entry.metadata().expect("a report").len();
        assert!(size < 1 << 20, "{:?} is {size} bytes", entry.file_name());
    }
    let json = std::fs::read_to_string(dir.join("report.json")).expect("report.json");
    assert!(json.contains("more bytes not kept]"));
}

#[test]
fn streams_go_by_path_to_adapters_that_read_them_so() {
    let dir = temp_dir("by-path");
    for by_path in [false, true] {
        let file = dir.join(format!("requests-{by_path}"));
        let mut env = vec![("REQUESTS_FILE", file.to_string_lossy().into_owned())];
        if by_path {
            env.push(("BY_PATH", "1".to_owned()));
        }
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (_, report, _out) = run_over("records_requests", CASES, &["--quiet"], &env);
        assert_eq!(
            count(&report, Outcome::Pass) + count(&report, Outcome::Fail),
            expected_cases()
        );
        let requests = std::fs::read_to_string(&file).expect("requests");
        for line in requests.lines() {
            let request: serde_json::Value = serde_json::from_str(line).expect("json");
            for stream in request["streams"].as_array().expect("streams") {
                assert!(Path::new(stream["path"].as_str().expect("path")).is_file());
                assert_eq!(stream.get("data").is_some(), !by_path, "{stream}");
            }
        }
    }
}

/// Starts `asr-ctk run` with the `ignores_term` adapter over ASR-212's cases and waits until
/// the adapter is on its first case; returns the kit, the adapter's tagged name and the
/// directory of the report.
fn run_until_busy(name: &str) -> (std::process::Child, String, Scratch) {
    let dir = temp_dir(name);
    let pid_file = dir.join("pid");
    let (command, tagged) = adapter_command("ignores_term");
    let child = Command::new(BIN)
        .args([
            "run",
            "--adapter",
            &command,
            "--case",
            CASES,
            "--quiet",
            "--out",
        ])
        .arg(dir.join("out"))
        .env("PID_FILE", &pid_file)
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("asr-ctk starts");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !pid_file.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the adapter never got a case"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, tagged, dir)
}

fn signal(child: &std::process::Child, signal: nix::sys::signal::Signal) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    nix::sys::signal::kill(pid, signal).expect("signal sent");
}

/// Waits for the kit to exit, at most `limit`; kills it and fails beyond that.
fn exit_within(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("asr-ctk did not exit within {limit:?} of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_signal_ends_the_adapters_and_the_report_of_what_ran_is_written() {
    let (mut child, tagged, dir) = run_until_busy("interrupted-once");
    signal(&child, nix::sys::signal::Signal::SIGTERM);
    // The adapter ignores SIGTERM: it is killed after the grace period.
    let status = exit_within(&mut child, Duration::from_secs(20));
    assert_eq!(status.code(), Some(130));
    assert_no_process_left(&tagged);
    let report: RunReport = crate::helpers::report_in(&dir.join("out"));
    assert!(report.interrupted);
    assert_eq!(
        report.cases.len(),
        expected_cases(),
        "every case is in the report"
    );
    assert!(
        report.cases.iter().all(|c| c.outcome == Outcome::NotRun),
        "{:?}",
        outcomes(&report)
    );
    assert!(
        report
            .incomplete
            .as_deref()
            .is_some_and(|d| d.contains("interrupted"))
    );
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr)
        .expect("stderr");
    assert!(stderr.contains("SIGTERM"), "{stderr}");
}

#[test]
fn a_second_signal_ends_everything_at_once() {
    let (mut child, tagged, _dir) = run_until_busy("interrupted-twice");
    signal(&child, nix::sys::signal::Signal::SIGINT);
    std::thread::sleep(Duration::from_millis(200));
    let second = std::time::Instant::now();
    signal(&child, nix::sys::signal::Signal::SIGINT);
    let status = exit_within(&mut child, Duration::from_secs(20));
    assert_eq!(status.code(), Some(130));
    assert!(
        second.elapsed() < Duration::from_millis(1500),
        "the grace period is not waited out: {:?}",
        second.elapsed()
    );
    assert_no_process_left(&tagged);
}

/// A valid stream whose one message holds a text of `bytes` bytes.
fn stream_with_text(dir: &Path, bytes: usize) -> PathBuf {
    let path = dir.join("big-text.jsonl");
    let header = r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"claude-code","version":"2.1.305"},"sessionId":"0f3c2a7e-91b4-4d6a-8c2e-5a7b3d1e9f04"}"#;
    let message = format!(
        r#"{{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[{{"type":"text","text":"{}"}}]}}"#,
        "a".repeat(bytes)
    );
    std::fs::write(&path, format!("{header}\n{message}\n")).expect("stream written");
    path
}

#[test]
fn the_kit_diffs_its_own_reference_on_a_stream_with_a_twenty_megabyte_text() {
    let dir = temp_dir("twenty-mb");
    let stream = stream_with_text(&dir, 20 << 20);
    let out = dir.join("out");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = ["diff", "--adapter", "reference", "--adapter", "reference"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        args.push("--out".into());
        args.push(out.to_string_lossy().into_owned());
        args.push(stream.to_string_lossy().into_owned());
        args
    };
    let agree = args(&["--timeout", "60"]);
    let output = Kit::new(&agree).output();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout} {output:?}");
    assert!(stdout.contains("agree"), "{stdout}");
    // A bound below the reading's size is a protocol error that names its option.
    let bounded = args(&["--timeout", "60", "--max-reply-bytes", "1000000"]);
    let output = Kit::new(&bounded).output();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("--max-reply-bytes"), "{stdout}");
}

#[test]
fn a_reply_of_many_findings_is_judged_in_bounded_memory_saying_what_was_not_kept() {
    // 600,000 notices and one error last: a legal reply of 33 MB. Judged with every finding
    // kept it takes the kit (a debug build) 800 MiB to 1 GiB of address space; bounded, under
    // 100 MiB. The cap sits well apart from both. One malloc arena, so that the address space
    // measures what is allocated, not what each thread's arena reserves.
    const NOTICES: u64 = 600_000;
    const CAP: u64 = 300 << 20;
    let out = temp_dir("many_notices");
    let (command, tag) = adapter_command("many_notices");
    let output = crate::helpers::run(
        Command::new("prlimit")
            // The adapter lifts its own soft limit to the hard one: only the kit is capped.
            .arg(format!("--as={CAP}:unlimited"))
            .arg("--")
            .arg(BIN)
            .args(["run", "--quiet", "--adapter", &command, "--case"])
            .arg("messages/ASR-212/[ny]_image*")
            .arg("--out")
            .arg(&*out)
            .env("ASR_CTK_TEST_NOTICES", NOTICES.to_string())
            .env("MALLOC_ARENA_MAX", "1")
            .current_dir(root()),
        None,
        Duration::from_secs(120),
    );
    assert_no_process_left(&tag);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report: RunReport = crate::helpers::report_in(&out);
    let kept_of_a_stream = asr_suite::diagnostic::MAX_PER_STREAM as u64;
    let case = |name: &str| {
        report
            .cases
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no result of {name}: {:?}", outcomes(&report)))
    };
    // The error the case calls for comes after every notice: kept, the case passes.
    let negative = case("messages/ASR-212/n_image_data_and_blob");
    assert_eq!(negative.outcome, Outcome::Pass, "{:?}", negative.detail);
    assert_eq!(negative.findings_not_kept, NOTICES - kept_of_a_stream);
    // On a stream that must be accepted the same error is over-strict, kept and charged.
    let positive = case("messages/ASR-212/y_image_blob_only");
    assert_eq!(positive.outcome, Outcome::Fail);
    assert!(
        positive
            .attributions
            .iter()
            .any(|a| a.rule.as_deref() == Some("ASR-212")),
        "{:?}",
        positive.attributions
    );
    assert_eq!(positive.findings_not_kept, NOTICES - kept_of_a_stream);
    crate::helpers::assert_report_meets_its_schema(&out);
    let markdown = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(
        markdown.contains(&format!(
            "Findings not kept: {}",
            NOTICES - kept_of_a_stream
        )),
        "{markdown}"
    );
}
