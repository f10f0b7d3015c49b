//! `asr-ctk fuzz --role producer` on the Python example's Gemini converter and on its broken
//! twin (`adapter.py --broken`, three planted bugs), with fixed seeds and bounds on the
//! sessions (never on the clock): the example fails nothing hard, the broken one is found,
//! each failure shrunk to a fixture of a few turns that `--promote` adds to a corpus whose
//! lints accept it, and that `run` then fails the broken converter on.

use crate::helpers::{
    asr_ctk, assert_report_meets_its_schema, copy_dir, corpus, report_json_in, root, scratch,
};
use asr_suite::source::{FixtureProvenance, FixtureSidecar, SourceFixture, load_fixtures};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn adapter(broken: bool) -> String {
    format!(
        "python3 {}{}",
        root().join("examples/python-adapter/adapter.py").display(),
        if broken { " --broken" } else { "" }
    )
}

/// Runs `asr-ctk fuzz --role producer` with `args` after the common ones; exit code and stdout.
fn fuzz(adapter: &str, out: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = out.to_string_lossy();
    let mut all = vec![
        "fuzz",
        "--role",
        "producer",
        "--adapter",
        adapter,
        "--out",
        &out,
    ];
    all.extend_from_slice(args);
    let output = asr_ctk(&all);
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// The summary's section under `heading` (up to the next unindented line).
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| !l.starts_with(heading))
        .skip(1)
        .take_while(|l| l.starts_with(' '))
        .collect()
}

/// The fixture directories written under `OUT/found/sources/<format>/`.
fn found(out: &Path, format: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(out.join("found/sources").join(format))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn the_example_converter_fails_nothing_hard_and_declines_the_formats_it_does_not_convert() {
    let out = scratch("pfuzz-example");
    // Every format in turn: two of the sixteen sessions are Gemini CLI's.
    let (code, text) = fuzz(
        &adapter(false),
        &out,
        &["--iterations", "16", "--seed", "8"],
    );
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("fuzz: 16 sessions"), "{text}");
    assert!(text.contains("hard failures: none"), "{text}");
    assert!(text.contains("faults: none"), "{text}");
    let skipped: u64 = text
        .lines()
        .find(|l| l.starts_with("fuzz: "))
        .and_then(|l| l.split_once("; "))
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("the count of sessions skipped");
    assert!(skipped >= 14, "{text}");
    assert!(
        text.contains("the example converts gemini-cli-json"),
        "{text}"
    );
    // Its own format, fuzzed: nothing at all, hard or non-strict (what fuzzing found in it
    // is fixed: an empty reply is kept as an empty text).
    let (code, text) = fuzz(
        &adapter(false),
        &out,
        &[
            "--format",
            "gemini-cli-json",
            "--iterations",
            "40",
            "--seed",
            "3",
        ],
    );
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("hard failures: none"), "{text}");
    assert!(
        text.contains("non-strict failures (warnings, decisions of the kit): none"),
        "{text}"
    );
}

#[test]
fn an_unknown_format_and_the_reference_as_a_producer_are_usage_errors() {
    let out = scratch("pfuzz-usage");
    let (code, _) = fuzz(&adapter(false), &out, &["--format", "no-such-format"]);
    assert_eq!(code, Some(2));
    let (code, _) = fuzz("reference", &out, &["--iterations", "1"]);
    assert_eq!(code, Some(2));
}

#[test]
fn one_shot_mode_converts_a_session_a_process() {
    let out = scratch("pfuzz-oneshot");
    let (code, text) = fuzz(
        &adapter(true),
        &out,
        &[
            "--format",
            "gemini-cli-json",
            "--iterations",
            "2",
            "--seed",
            "30",
            "--oneshot",
            "--keep",
            "0",
        ],
    );
    // Seed 30 finds the null text within two sessions; --keep 0 writes nothing.
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("fuzz: 2 sessions"), "{text}");
    assert!(
        section(&text, "hard failures:")
            .iter()
            .any(|l| l.contains("ASR-X-016")),
        "{text}"
    );
    assert!(found(&out, "gemini-cli-json").is_empty());
}

#[test]
fn the_broken_converter_is_found_shrunk_and_promoted_into_a_corpus_whose_lints_accept_it() {
    let scratch = scratch("pfuzz-broken");
    let corpus_copy = scratch.join("cases");
    copy_dir(&corpus(), &corpus_copy);
    let lock_before = std::fs::read_to_string(corpus_copy.join("ids.lock")).expect("ids.lock");
    let out = scratch.join("out");
    // The planted bugs the conservation properties judge: trimmed texts (ASR-211), dropped
    // thoughts (ASR-211, a text lost), a human author on every prompt (ASR-202). Enough
    // sessions that a text with white space at an end comes up.
    let judged = ["ASR-211", "ASR-202"];
    let iterations = "60";
    let (code, text) = fuzz(
        &adapter(true),
        &out,
        &[
            "--format",
            "gemini-cli-json",
            "--iterations",
            iterations,
            "--seed",
            "8",
            "--promote",
            "--cases",
            &corpus_copy.to_string_lossy(),
        ],
    );
    assert_eq!(code, Some(1), "{text}");
    // Bug (a) trims texts (ASR-211, hard) and writes one trimmed to nothing as null (an
    // invalid stream, hard). Bug (b) drops the thoughts: summary texts lost, non-strict on the
    // kit's decision. Bug (c) writes a person's authorship on every prompt (ASR-202).
    let hard = section(&text, "hard failures:");
    let non_strict = section(&text, "non-strict failures");
    assert!(hard.iter().any(|l| l.starts_with("  ASR-X-016 ")), "{text}");
    assert!(
        non_strict
            .iter()
            .any(|l| l.starts_with("  ASR-211 ") && l.contains("summary text")),
        "{text}"
    );
    // Each planted bug is found under its rule too.
    for rule in judged {
        assert!(text.contains(&format!("  {rule} ")), "{rule}: {text}");
    }
    let dirs = found(&out, "gemini-cli-json");
    assert!(dirs.len() >= 2, "{text}");
    campaign_reported(&out, 60, &dirs, &judged);
    for dir in &dirs {
        let sidecar: FixtureSidecar = serde_json::from_str(
            &std::fs::read_to_string(dir.join("fixture.json")).expect("fixture.json"),
        )
        .expect("a fixture sidecar");
        assert!(matches!(
            sidecar.provenance,
            FixtureProvenance::Fuzzed { seed: 8, ref format, .. } if format == "gemini-cli-json"
        ));
        assert!(!dir.join("expected").exists());
        // Shrunk: the one session file of the seed, with at most two messages and no text
        // longer than the seeds' longest.
        let names: Vec<String> = std::fs::read_dir(dir.join("source"))
            .expect("source/")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        let session: Value = serde_json::from_slice(
            &std::fs::read(dir.join("source").join(&names[0])).expect("the session"),
        )
        .expect("one JSON document");
        let messages = session["messages"].as_array().expect("messages[]");
        assert!(
            !messages.is_empty() && messages.len() <= 2,
            "{}: {session:#}",
            dir.display()
        );
        assert!(session.to_string().len() < 2000, "{session:#}");
    }
    // Promoted: each under its rule, with the next ids of the lock, accepted by the lints.
    let promoted: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("promoted: "))
        .collect();
    assert_eq!(promoted.len(), dirs.len(), "{text}");
    assert!(
        promoted
            .iter()
            .any(|p| p.starts_with("sources/gemini-cli-json/fuzz_asr_x_016_01 (s")),
        "{text}"
    );
    let lock = std::fs::read_to_string(corpus_copy.join("ids.lock")).expect("ids.lock");
    assert!(lock.starts_with(&lock_before));
    assert_eq!(
        lock.lines().count(),
        lock_before.lines().count() + promoted.len()
    );
    let cases = asr_suite::case::load_corpus(&corpus_copy).expect("the corpus loads");
    assert!(
        asr_suite::lint::ids(&cases, &lock).is_empty(),
        "{:?}",
        asr_suite::lint::ids(&cases, &lock)
    );
    let fixtures = load_fixtures(&corpus_copy.join("sources")).expect("the fixtures load");
    let mut ids: Vec<&str> = fixtures.iter().map(|f| f.sidecar.id.as_str()).collect();
    ids.sort_unstable();
    let before = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), before, "fixture ids are unique");
    let fuzzed: Vec<&SourceFixture> = fixtures
        .iter()
        .filter(|f| f.name.starts_with("gemini-cli-json/fuzz_"))
        .collect();
    assert_eq!(fuzzed.len(), promoted.len());
    for fixture in fuzzed {
        let sidecar: Value = serde_json::from_str(
            &std::fs::read_to_string(fixture.dir.join("fixture.json")).expect("fixture.json"),
        )
        .expect("JSON");
        let problems = asr_suite::lint::source_fixture(fixture, &sidecar);
        assert!(problems.is_empty(), "{problems:?}");
        assert!(lock.contains(&format!(
            "{}\tsources/{}\n",
            fixture.sidecar.id, fixture.name
        )));
    }
    // `run` fails the broken converter on the fixture of the invalid stream, and passes
    // the example on it.
    for (broken, expected) in [(true, 1), (false, 0)] {
        let report = scratch.join(format!("report-{broken}"));
        let output = asr_ctk(&[
            "run",
            "--quiet",
            "--cases",
            &corpus_copy.to_string_lossy(),
            "--role",
            "producer",
            "--case",
            "sources/gemini-cli-json/fuzz_asr_x_016_*",
            "--adapter",
            &adapter(broken),
            "--out",
            &report.to_string_lossy(),
        ]);
        assert_eq!(
            output.status.code(),
            Some(expected),
            "{}",
            String::from_utf8_lossy(&output.stdout)
        );
    }
}

#[test]
fn a_hand_written_fixture_without_a_golden_is_refused_and_a_fuzzed_one_is_not() {
    let scratch = scratch("pfuzz-lint");
    let from = corpus().join("sources/gemini-cli-json/real_session_01");
    let dir = scratch.join("gemini-cli-json/real_session_01");
    copy_dir(&from, &dir);
    std::fs::remove_dir_all(dir.join("expected")).expect("expected/ removed");
    let lint = |sidecar: &Value| {
        let fixture = SourceFixture {
            name: "gemini-cli-json/real_session_01".into(),
            dir: dir.clone(),
            sidecar: serde_json::from_value(sidecar.clone()).expect("a sidecar"),
        };
        asr_suite::lint::source_fixture(&fixture, sidecar)
    };
    let mut sidecar: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("fixture.json")).expect("fixture.json"),
    )
    .expect("JSON");
    let refused = lint(&sidecar);
    assert!(
        refused
            .iter()
            .any(|p| p.contains("expected/ holds no golden output")),
        "{refused:?}"
    );
    sidecar["provenance"] = serde_json::json!({"kind": "fuzzed", "seed": 1, "iteration": 2, "format": "gemini-cli-json"});
    sidecar["mistakes"] = serde_json::json!([]);
    let accepted = lint(&sidecar);
    assert!(accepted.is_empty(), "{accepted:?}");
    // No mistakes is for a fuzzed fixture alone.
    sidecar["provenance"] = serde_json::json!({"kind": "hand-written", "note": "a note"});
    let refused = lint(&sidecar);
    assert!(
        refused.iter().any(|p| p.contains("mistakes")),
        "{refused:?}"
    );
}

#[test]
fn an_error_answer_is_a_fault_filed_under_no_rule_and_shrunk_to_no_turn_at_all() {
    let out = scratch("pfuzz-fault");
    // The wrong producers answer each fixture with its golden: a generated session has
    // none, and they answer `error`.
    let producer = format!(
        "python3 {}",
        root()
            .join("runner/tests/producers/trims_text.py")
            .display()
    );
    let (code, text) = fuzz(
        &producer,
        &out,
        &["--format", "gemini-cli-json", "--iterations", "1"],
    );
    assert_eq!(code, Some(1), "{text}");
    let faults = section(&text, "faults:");
    assert!(
        faults
            .iter()
            .any(|l| l.starts_with("  (no rule) (gemini-cli-json), 1 session(s): error: ")),
        "{text}"
    );
    assert!(text.contains("hard failures: none"), "{text}");
    let dirs = found(&out, "gemini-cli-json");
    assert_eq!(dirs.len(), 1, "{text}");
    assert!(dirs[0].ends_with("fuzz_unattributed_1_0"), "{dirs:?}");
    let session: Value = serde_json::from_slice(
        &std::fs::read(
            std::fs::read_dir(dirs[0].join("source"))
                .expect("source/")
                .flatten()
                .next()
                .expect("a file")
                .path(),
        )
        .expect("the session"),
    )
    .expect("JSON");
    assert!(
        session["messages"].as_array().is_some_and(Vec::is_empty),
        "every turn goes when the fault stays: {session:#}"
    );
}

/// The campaign's report in `out` meets its schema and adds up: every one of `iterations`
/// sessions counted once, each as valid (a producer's sessions break no clause), each rule's
/// exercised count at most the answered sessions, each found case in `dirs` listed under
/// the rule it is charged to, and each of `rules` non-conformant.
fn campaign_reported(out: &Path, iterations: u64, dirs: &[PathBuf], rules: &[&str]) {
    assert_report_meets_its_schema(out);
    let report = report_json_in(out);
    let campaign = &report["campaign"];
    assert_eq!(campaign["role"], "producer");
    assert_eq!(campaign["iterations"], iterations);
    assert_eq!(campaign["valid"], iterations);
    let answered = iterations - campaign["skipped"].as_u64().unwrap_or(0);
    let rows = report["rules"].as_array().expect("rules");
    let row = |rule: &str| {
        rows.iter()
            .find(|r| r["rule"] == rule)
            .unwrap_or_else(|| panic!("no row of {rule}"))
    };
    for r in rows {
        let exercised = r["fuzz"]["exercised"].as_u64().unwrap_or(0);
        assert!(exercised <= answered, "{r}");
        assert_eq!(r["fuzz"]["broken"].as_u64().unwrap_or(0), 0, "{r}");
    }
    for dir in dirs {
        let name = dir
            .strip_prefix(out.join("found"))
            .expect("below found/")
            .to_string_lossy()
            .replace('\\', "/");
        let rule = name
            .split('/')
            .nth(2)
            .and_then(|n| n.strip_prefix("fuzz_"))
            .map(|n| {
                n.split('_')
                    .take(2)
                    .collect::<Vec<_>>()
                    .join("-")
                    .to_ascii_uppercase()
            })
            .expect("fuzz_<rule>_...");
        let rule = if rule.starts_with("ASR-X") {
            format!("ASR-X-{}", &name.split('_').nth(3).unwrap_or_default())
        } else {
            rule
        };
        let listed = row(&rule)["fuzz"]["found"]
            .as_array()
            .is_some_and(|f| f.iter().any(|c| c.as_str() == Some(name.as_str())));
        assert!(listed, "{name} is not listed under {rule}: {}", row(&rule));
    }
    for rule in rules {
        assert_eq!(row(rule)["verdict"], "non-conformant", "{}", row(rule));
    }
}
