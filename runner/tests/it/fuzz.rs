//! `asr-ctk fuzz` against implementations wrong in known ways: each is found under the rule
//! it breaks, with a fixed seed and a bound on the streams (never on the clock), and what
//! it writes is a shrunk case that fails the implementation and passes the reference.

use crate::helpers::{BIN, asr_ctk, readers, root, scratch};
use std::path::{Path, PathBuf};

fn example(name: &str) -> String {
    format!(
        "python3 {}",
        root().join("examples/python-adapter").join(name).display()
    )
}

/// The command of an adapter of `tests/adapters/`.
fn test_adapter(script: &str) -> String {
    format!(
        "python3 {}",
        crate::helpers::adapters().join(script).display()
    )
}

/// Runs `asr-ctk fuzz` and returns its exit code and stdout.
fn fuzz(adapter: &str, role: &str, iterations: u64, out: &Path) -> (Option<i32>, String) {
    let output = asr_ctk(&[
        "fuzz",
        "--adapter",
        adapter,
        "--role",
        role,
        "--iterations",
        &iterations.to_string(),
        "--seed",
        "1",
        "--out",
        &out.to_string_lossy(),
    ]);
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// The streams written under `OUT/found/`.
fn found(out: &Path) -> Vec<PathBuf> {
    let mut streams = Vec::new();
    for dir in std::fs::read_dir(out.join("found"))
        .into_iter()
        .flatten()
        .flatten()
    {
        for file in std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if file.path().extension().is_some_and(|e| e == "jsonl") {
                streams.push(file.path());
            }
        }
    }
    streams.sort();
    streams
}

#[test]
fn the_reference_agrees_with_itself() {
    let out = scratch("fuzz-reference");
    let (code, text) = fuzz("reference", "validator", 200, &out);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("no disagreement"), "{text}");
    assert!(found(&out).is_empty());
}

#[test]
fn a_broken_validator_is_found_under_its_two_rules_with_small_cases_that_re_run() {
    let out = scratch("fuzz-broken");
    let adapter = example("adapter_broken.py");
    let (code, text) = fuzz(&adapter, "validator", 1100, &out);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("ASR-212: lenient"), "{text}");
    assert!(text.contains("ASR-234: lenient"), "{text}");
    assert!(
        !text.lines().any(|l| l.starts_with("ASR-")
            && !l.starts_with("ASR-212")
            && !l.starts_with("ASR-234")),
        "only the two broken rules: {text}"
    );
    let streams = found(&out);
    assert_eq!(streams.len(), 2, "{streams:?}");
    for stream in &streams {
        let lines = std::fs::read_to_string(stream)
            .expect("a case")
            .lines()
            .count();
        assert!(
            (2..=20).contains(&lines),
            "{}: {lines} lines",
            stream.display()
        );
    }
    let cases = out.join("found");
    let against = |adapter: Option<&str>| {
        let report = out.join(format!("run-{}", adapter.is_some()));
        let mut args = vec![
            "run".to_owned(),
            "--quiet".into(),
            "--cases".into(),
            cases.to_string_lossy().into_owned(),
            "--out".into(),
            report.to_string_lossy().into_owned(),
        ];
        if let Some(adapter) = adapter {
            args.extend(["--adapter".to_owned(), adapter.to_owned()]);
        }
        asr_ctk(&args).status.code()
    };
    assert_eq!(
        against(Some(&adapter)),
        Some(1),
        "the cases fail the broken adapter"
    );
    assert_eq!(against(None), Some(0), "the cases pass the reference");
}

#[test]
fn an_over_strict_validator_is_found_under_the_rule_of_the_open_value_set() {
    let out = scratch("fuzz-strict");
    let (code, text) = fuzz(&example("adapter_strict.py"), "validator", 400, &out);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("ASR-234: over-strict"), "{text}");
    let streams = found(&out);
    assert_eq!(streams.len(), 1, "{streams:?}");
    assert!(
        streams[0]
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("y_")),
        "a valid stream: {streams:?}"
    );
}

#[test]
fn each_wrong_reader_is_found_under_the_rule_it_breaks() {
    for (reader, rule) in [
        ("copies_as_original", "ASR-416"),
        ("first_delivery_revision", "ASR-237"),
        ("ignores_mirror_rule", "ASR-416"),
        ("indexes_signatures", "ASR-215"),
        ("missing_lineage_as_root", "ASR-401"),
        ("renders_unknown_parts", "ASR-218"),
    ] {
        let out = scratch(&format!("fuzz-reader-{reader}"));
        let adapter = format!("python3 {}/{reader}.py {BIN}", readers().display());
        let (code, text) = fuzz(&adapter, "reader", 300, &out);
        assert_eq!(code, Some(1), "{reader}: {text}");
        assert!(
            text.contains(&format!("{rule}: reading")),
            "{reader}: {text}"
        );
    }
}

/// An implementation that hangs on every stream is a fault, not a hung run: the answer is
/// waited for once, the fault is shrunk with few candidates, and the run ends.
#[test]
fn an_adapter_that_hangs_is_a_fault_and_the_run_ends() {
    let out = scratch("fuzz-hangs");
    let adapter = test_adapter("hangs_on_one_case.py");
    let started = std::time::Instant::now();
    let output = crate::helpers::Kit::new(&[
        "fuzz",
        "--adapter",
        &adapter,
        "--iterations",
        "1",
        // Long enough for the adapter to start on a loaded machine (the start is timed too).
        "--timeout",
        "1",
        "--out",
        &out.to_string_lossy(),
    ])
    .envs(&[("FAULT_CASE", "fuzz")])
    .limit(std::time::Duration::from_secs(100))
    .output();
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}");
    // Each stream is a fault, filed under the rule it tests (a broken one) or under none.
    assert!(text.contains("(no rule): fault, "), "{text}");
    assert!(text.contains("timeout"), "{text}");
    // One wait, and at most 20 shrinking candidates, each a wait of its own.
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
}

/// `--promote` files each case found under its rule in a corpus checkout, with the next ids
/// of its ids.lock, and the corpus still passes its lints; two jobs find what one finds.
#[test]
fn promoted_cases_join_the_corpus_with_new_ids_and_keep_its_lints() {
    let scratch = scratch("fuzz-promote");
    let corpus = scratch.join("cases");
    crate::helpers::copy_dir(&crate::helpers::corpus(), &corpus);
    let lock_before = std::fs::read_to_string(corpus.join("ids.lock")).expect("ids.lock");
    let next = asr_suite::case::next_id(&lock_before);
    let out = scratch.join("out");
    let output = asr_ctk(&[
        "fuzz",
        "--adapter",
        &example("adapter_broken.py"),
        "--iterations",
        "1100",
        "--seed",
        "1",
        "--jobs",
        "2",
        "--out",
        &out.to_string_lossy(),
        "--promote",
        "--cases",
        &corpus.to_string_lossy(),
    ]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}");
    let promoted: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("promoted: "))
        .collect();
    assert_eq!(promoted.len(), 2, "{text}");
    assert!(
        promoted
            .iter()
            .any(|p| p.starts_with("messages/ASR-212/n_fuzz_"))
            && promoted
                .iter()
                .any(|p| p.starts_with("messages/ASR-234/n_fuzz_")),
        "{text}"
    );
    assert!(
        promoted.iter().any(|p| p.ends_with(&format!("({next})"))),
        "{text}"
    );
    let cases = asr_suite::case::load_corpus(&corpus).expect("the corpus loads");
    // Shrinking brought in no finding under another rule, a notice included: an
    // implementation that is right on the case's rule passes the case.
    for case in cases.iter().filter(|c| c.name.contains("/n_fuzz_")) {
        let expect = case
            .sidecar
            .expect
            .validator
            .as_ref()
            .expect("a validator case");
        for v in &expect.violations {
            assert_eq!(
                case.sidecar.rules,
                std::slice::from_ref(&v.rule),
                "{}: expects {v} beyond its rule",
                case.name
            );
        }
    }
    let lock = std::fs::read_to_string(corpus.join("ids.lock")).expect("ids.lock");
    assert!(lock.starts_with(&lock_before));
    assert_eq!(lock.lines().count(), lock_before.lines().count() + 2);
    let problems = [
        asr_suite::lint::ids(&cases, &lock),
        asr_suite::lint::prefixes(&cases),
    ]
    .concat();
    assert!(problems.is_empty(), "{problems:?}");
    let report = scratch.join("report");
    let code = asr_ctk(&[
        "run",
        "--quiet",
        "--cases",
        &corpus.to_string_lossy(),
        "--case",
        "*/n_fuzz_*",
        "--out",
        &report.to_string_lossy(),
    ])
    .status
    .code();
    assert_eq!(code, Some(0), "the promoted cases pass the reference");
}

#[test]
fn promote_refuses_a_directory_that_is_no_corpus_checkout() {
    let scratch = scratch("fuzz-promote-nowhere");
    let output = asr_ctk(&[
        "fuzz",
        "--adapter",
        "reference",
        "--iterations",
        "1",
        "--out",
        &scratch.join("out").to_string_lossy(),
        "--promote",
        "--cases",
        &scratch.to_string_lossy(),
    ]);
    let text = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains("--promote adds found cases to a corpus checkout"),
        "{text}"
    );
    assert!(!scratch.join("out").exists(), "nothing fuzzed");
}

/// `--oneshot` asks a process a stream: a one-shot validator that accepts everything is
/// lenient under every rule its broken streams break, and the reference agrees with itself.
#[test]
fn a_one_shot_adapter_is_fuzzed_a_process_a_stream() {
    let out = scratch("fuzz-oneshot");
    let adapter = format!(
        "sh {}",
        crate::helpers::adapters()
            .join("oneshot_accepts_all.sh")
            .display()
    );
    let output = asr_ctk(&[
        "fuzz",
        "--adapter",
        &adapter,
        "--oneshot",
        "--iterations",
        "20",
        "--keep",
        "0",
        "--out",
        &out.to_string_lossy(),
    ]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}");
    let lenient = text.lines().filter(|l| l.contains(": lenient, ")).count();
    assert!(lenient >= 5, "{text}");
    assert!(
        text.lines()
            .filter(|l| l.contains(": lenient, "))
            .all(|l| l.contains("accepted a stream that breaks")),
        "{text}"
    );
    assert!(found(&out).is_empty(), "--keep 0 writes nothing");
    // The cases kept re-run as the run says, in one-shot mode, and fail the adapter again.
    let kept = scratch("fuzz-oneshot-kept");
    let output = asr_ctk(&[
        "fuzz",
        "--adapter",
        &adapter,
        "--oneshot",
        "--iterations",
        "6",
        "--out",
        &kept.to_string_lossy(),
    ]);
    let text = String::from_utf8_lossy(&output.stdout);
    let hint = text
        .lines()
        .find_map(|l| l.strip_prefix("re-run them: asr-ctk "))
        .unwrap_or_else(|| panic!("no re-run line: {text}"));
    let words = shell_words::split(hint).expect("a command line");
    assert!(words.iter().any(|w| w == "--oneshot"), "{hint}");
    let mut again = words.clone();
    again.extend(["--quiet".to_owned(), "--out".to_owned()]);
    again.push(kept.join("again").to_string_lossy().into_owned());
    let rerun = asr_ctk(&again);
    assert_eq!(rerun.status.code(), Some(1), "{rerun:?}");
    assert_eq!(
        crate::helpers::report_in(&kept.join("again")).adapter.mode,
        "oneshot"
    );
    let (code, text) = {
        let output = asr_ctk(&[
            "fuzz",
            "--adapter",
            "reference",
            "--oneshot",
            "--iterations",
            "10",
            "--out",
            &out.to_string_lossy(),
        ]);
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("no disagreement"), "{text}");
}

/// A validator is asked now and then about a parent and its child together: two streams,
/// `parent` and `child`, valid together with no warning (ASR-412).
#[test]
fn a_validator_is_asked_about_a_parent_and_its_child_together() {
    let out = scratch("fuzz-family");
    let requests = out.join("requests.jsonl");
    let adapter = test_adapter("records_requests.py");
    let output = crate::helpers::Kit::new(&[
        "fuzz",
        "--adapter",
        &adapter,
        "--iterations",
        "48",
        "--keep",
        "0",
        "--out",
        &out.join("out").to_string_lossy(),
    ])
    .envs(&[("REQUESTS_FILE", &requests.to_string_lossy())])
    .output();
    assert!(output.status.code().is_some(), "{output:?}");
    let text = std::fs::read_to_string(&requests).expect("the requests");
    let mut families = 0;
    for line in text.lines() {
        let request: serde_json::Value = serde_json::from_str(line).expect("a request");
        let streams = request["streams"].as_array().expect("streams");
        if streams.len() == 1 {
            continue;
        }
        families += 1;
        let parts: Vec<&str> = streams.iter().filter_map(|s| s["part"].as_str()).collect();
        assert_eq!(parts, ["parent", "child"]);
        let bytes: Vec<Vec<u8>> = streams
            .iter()
            .map(|s| {
                asr_suite::protocol::base64_decode(s["data"].as_str().expect("data"))
                    .expect("base64")
            })
            .collect();
        let slices: Vec<&[u8]> = bytes.iter().map(Vec::as_slice).collect();
        assert!(
            asr_suite::fuzz::oracle::fits_a_case(
                &slices,
                None,
                &asr_suite::fuzz::oracle::notice_rules(&slices)
            ),
            "{line}"
        );
        assert!(
            String::from_utf8_lossy(&bytes[1]).contains("spawnedBy"),
            "the child names its parent"
        );
    }
    assert_eq!(families, 3, "one iteration in 16 asks about a family");
}

#[test]
fn jobs_out_of_range_are_refused_before_anything_starts() {
    let out = scratch("fuzz-jobs");
    for jobs in ["0", "65"] {
        let output = asr_ctk(&[
            "fuzz",
            "--adapter",
            "reference",
            "--jobs",
            jobs,
            "--iterations",
            "1",
            "--out",
            &out.join("out").to_string_lossy(),
        ]);
        let text = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{text}");
        assert!(text.contains("--jobs must be from 1 to 64"), "{text}");
        assert!(!out.join("out").exists(), "nothing fuzzed");
    }
}

/// Runs `asr-ctk fuzz` over 64 streams against the reference behind the pipelined proxy
/// (`tests/adapters/pipelined_proxy.py`), with its settings; returns the exit code, stdout
/// and the campaign of the report.
fn through_proxy(name: &str, env: &[(&str, &str)]) -> (Option<i32>, String, serde_json::Value) {
    let out = scratch(name);
    // Long enough for the adapter to start on a loaded machine (the start is timed too).
    let output = crate::helpers::Kit::new(&proxy_fuzz(2, &out))
        .envs(env)
        .output();
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).expect("the report"))
            .expect("JSON");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        report["campaign"].clone(),
    )
}

/// The arguments of `asr-ctk fuzz` over 64 streams against the reference behind the
/// pipelined proxy, with a timeout of `timeout` seconds, writing to `out`.
fn proxy_fuzz(timeout: u32, out: &Path) -> Vec<String> {
    let adapter = format!("{} {BIN}", test_adapter("pipelined_proxy.py"));
    [
        "fuzz",
        "--adapter",
        &adapter,
        "--iterations",
        "64",
        "--seed",
        "1",
    ]
    .into_iter()
    .map(str::to_owned)
    .chain([
        "--timeout".to_owned(),
        timeout.to_string(),
        "--out".to_owned(),
    ])
    .chain([out.to_string_lossy().into_owned()])
    .collect()
}

/// The most cases the proxy had read and not yet answered, over the run it logged.
fn most_unanswered(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .expect("the proxy's log")
        .lines()
        .map(|l| l.parse::<usize>().expect("a count"))
        .max()
        .expect("a case was logged")
}

/// An adapter that declares `pipelined` is sent cases before the earlier ones are answered
/// (and its answers are the reference's: nothing disagrees); one that does not is sent one
/// at a time.
#[test]
fn cases_are_sent_ahead_only_to_an_adapter_that_declares_pipelined() {
    for (pipelined, name) in [("1", "fuzz-pipelined"), ("0", "fuzz-one-at-a-time")] {
        let logs = scratch(&format!("{name}-log"));
        let log = logs.join("unanswered");
        let (code, text, campaign) = through_proxy(
            name,
            &[
                ("PROXY_PIPELINED", pipelined),
                ("PROXY_LOG", &log.to_string_lossy()),
            ],
        );
        assert_eq!(code, Some(0), "{text}");
        assert_eq!(campaign["iterations"], 64, "{campaign}");
        assert_eq!(campaign["disagreed"], 0, "{campaign}");
        let most = most_unanswered(&log);
        if pipelined == "1" {
            assert!(most > 1, "never more than one case in flight: {most}");
            assert!(
                most <= 16,
                "more cases in flight than the pipeline holds: {most}"
            );
        } else {
            assert_eq!(most, 1, "a case was sent before the last was answered");
        }
    }
}

/// A pipelined adapter that crashes or hangs with cases in flight: the fault is charged to
/// the case it was answering alone, and the cases sent after it to the process that ended
/// are asked again of the one started in its place, and agree.
#[test]
fn a_fault_with_cases_in_flight_is_charged_to_one_case() {
    for (setting, said) in [
        ("PROXY_EXIT_ONCE", "exit status: 3"),
        ("PROXY_HANG_ONCE", "timeout"),
    ] {
        let marks = scratch("fuzz-pipelined-fault-mark");
        let mark = marks.join("faulted");
        let (code, text, campaign) = through_proxy(
            "fuzz-pipelined-fault",
            &[("PROXY_PIPELINED", "1"), (setting, &mark.to_string_lossy())],
        );
        assert!(mark.exists(), "{setting}: the proxy never misbehaved");
        assert_eq!(code, Some(1), "{setting}: {text}");
        assert_eq!(campaign["iterations"], 64, "{setting}: {campaign}");
        assert_eq!(campaign["disagreed"], 1, "{setting}: {campaign}");
        assert_eq!(
            campaign["disagreements"],
            serde_json::json!({"fault": 1}),
            "{setting}: {campaign}"
        );
        assert!(text.contains(said), "{setting}: {text}");
    }
}

/// An interrupt while a pipelined adapter hangs with cases in flight: the run ends with the
/// report of the cases settled before it, and no case in flight is charged a fault.
#[test]
fn an_interrupt_with_cases_in_flight_charges_none_of_them() {
    let out = scratch("fuzz-pipelined-interrupt");
    let mark = out.join("hung");
    let mut child = std::process::Command::new(BIN)
        .args(proxy_fuzz(60, &out.join("out")))
        .env("PROXY_PIPELINED", "1")
        .env("PROXY_HANG_ONCE", &mark)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the kit starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !mark.exists() {
        if std::time::Instant::now() >= deadline {
            // The kit and its adapter are not left behind by a failing test.
            let _ = child.kill();
            let _ = child.wait();
            panic!("the proxy never hung");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // The four cases before are answered, the fifth waited for.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("signal sent");
    let output = child.wait_with_output().expect("the kit ends");
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(130), "{text}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("out/report.json")).expect("the report"))
            .expect("JSON");
    let campaign = &report["campaign"];
    assert_eq!(campaign["disagreed"], 0, "{campaign}");
    assert_eq!(campaign["iterations"], 4, "{campaign}");
}
