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

/// An implementation that hangs on every stream is a fault, not a hung run: each answer is
/// waited for once, the fault is shrunk with few candidates, and the run ends.
#[test]
fn an_adapter_that_hangs_is_a_fault_and_the_run_ends() {
    let out = scratch("fuzz-hangs");
    let adapter = format!(
        "python3 {}",
        crate::helpers::adapters()
            .join("hangs_on_one_case.py")
            .display()
    );
    let started = std::time::Instant::now();
    let output = crate::helpers::Kit::new(&[
        "fuzz",
        "--adapter",
        &adapter,
        "--iterations",
        "3",
        "--timeout",
        "0.3",
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
    // Three waits, and at most 20 shrinking candidates for each fault written.
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
}
