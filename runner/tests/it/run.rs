//! `asr-ctk run` end to end: the reference implementation, the Python example adapter and
//! its broken variant, one-shot mode, shards and their merge, expectations, reports.

use crate::helpers::{Scratch, asr_ctk, scratch};
use asr_suite::conformance::{Outcome, RuleVerdict, RunReport};
use asr_suite::protocol::ProtocolRole;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

fn out_dir(name: &str) -> Scratch {
    scratch(&format!("run-{name}"))
}

fn run(name: &str, args: &[&str]) -> (Output, RunReport, Scratch) {
    let out = out_dir(name);
    let out_text = out.to_string_lossy().into_owned();
    let mut all = vec!["run", "--out", out_text.as_str()];
    all.extend_from_slice(args);
    let output = asr_ctk(&all);
    let text = std::fs::read_to_string(out.join("report.json"))
        .unwrap_or_else(|e| panic!("no report ({e}): {output:?}"));
    (output, serde_json::from_str(&text).expect("report"), out)
}

/// The SARIF log of a run, checked against the SARIF 2.1.0 schema.
fn sarif(out: &Path) -> serde_json::Value {
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sarif.json")).expect("sarif.json"))
            .expect("JSON");
    let schema: serde_json::Value = serde_json::from_str(include_str!(
        "../../../schemas/external/sarif-2.1.0.schema.json"
    ))
    .expect("schema");
    let validator = jsonschema::validator_for(&schema).expect("compiles");
    let errors: Vec<String> = validator.iter_errors(&log).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    log
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn verdicts(report: &RunReport, verdict: RuleVerdict) -> BTreeSet<String> {
    report
        .rules
        .iter()
        .filter(|r| r.verdict == verdict)
        .map(|r| r.rule.clone())
        .collect()
}

#[test]
fn the_reference_implementation_is_conformant_on_every_rule_it_claims() {
    let (output, report, out) = run("reference", &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert!(stdout(&output).contains("rules:") && stdout(&output).contains("conformant"));
    // The whole corpus shows every rule that binds a role played, untested ones too.
    let shown = stdout(&output)
        .lines()
        .filter(|l| l.starts_with("ASR-"))
        .count();
    let applicable = report
        .rules
        .iter()
        .filter(|r| r.verdict != RuleVerdict::NotApplicable)
        .count();
    assert_eq!(shown, applicable, "{}", stdout(&output));
    let validator = report
        .cases
        .iter()
        .filter(|c| c.role == ProtocolRole::Validator)
        .count();
    let reader = report
        .cases
        .iter()
        .filter(|c| c.role == ProtocolRole::Reader)
        .count();
    let producer = report
        .cases
        .iter()
        .filter(|c| c.role == ProtocolRole::Producer)
        .count();
    assert!(
        report
            .cases
            .iter()
            .all(|c| (c.role == ProtocolRole::Producer) == c.name.starts_with("sources/")),
        "producer cases are the source fixtures, and only they"
    );
    assert!(
        producer >= 9,
        "every source fixture runs as a producer case: {producer}"
    );
    assert_eq!(
        validator + producer,
        report.corpus_cases,
        "every other case runs as a validator case"
    );
    assert!(
        reader >= 20,
        "and the reader cases as reader cases: {reader}"
    );
    let rules: Vec<_> = report
        .rules
        .iter()
        .filter(|r| r.verdict == RuleVerdict::Untested)
        .map(|r| r.rule.clone())
        .collect();
    assert!(
        rules
            .iter()
            .all(|r| ["ASR-216", "ASR-418", "ASR-419", "ASR-425"].contains(&r.as_str())),
        "untested: {rules:?}"
    );
    assert!(
        report.cases.iter().all(|c| c.outcome == Outcome::Pass),
        "{:?}",
        report.cases.iter().find(|c| c.outcome != Outcome::Pass)
    );
    assert!(verdicts(&report, RuleVerdict::NonConformant).is_empty());
    assert!(verdicts(&report, RuleVerdict::NonStrict).is_empty());
    assert!(
        report
            .rules
            .iter()
            .filter(|r| r.verdict == RuleVerdict::Conformant)
            .count()
            >= 50
    );
    assert_eq!(
        report
            .adapter
            .implementation
            .as_ref()
            .map(|i| i.name.as_str()),
        Some("asr-ctk-reference")
    );
    assert!(report.case_set.starts_with("sha256:") && report.case_set.len() == 71);
    assert!(report.command_line.iter().any(|a| a == "run"));
    for file in [
        "report.json",
        "report.md",
        "report.html",
        "junit.xml",
        "sarif.json",
        "badge.json",
    ] {
        assert!(out.join(file).is_file(), "{file} written");
    }
    crate::helpers::assert_report_meets_its_schema(&out);
    let junit = std::fs::read_to_string(out.join("junit.xml")).expect("junit");
    assert_eq!(junit.matches("<testcase ").count(), report.cases.len());
    let sarif = sarif(&out);
    assert_eq!(
        sarif["runs"][0]["results"],
        serde_json::json!([]),
        "nothing failed"
    );
    let badge: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("badge.json")).expect("badge"))
            .expect("JSON");
    let count = |v: RuleVerdict| report.rules.iter().filter(|r| r.verdict == v).count();
    let (conformant, untested) = (count(RuleVerdict::Conformant), count(RuleVerdict::Untested));
    assert_eq!(
        badge["message"],
        format!("{conformant}/{} rules", conformant + untested),
        "untested rules are counted"
    );
    assert_eq!(
        badge["color"],
        if untested == 0 {
            "brightgreen"
        } else {
            "yellow"
        }
    );
}

#[test]
fn the_python_example_passes_what_it_answers_and_its_broken_variant_fails_exactly_its_bugs() {
    let (output, report, _) = run(
        "python",
        &[
            "--adapter",
            "python3 examples/python-adapter/adapter.py",
            "--expect",
            "examples/python-adapter/expect.json",
            "--validate-protocol",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert!(
        report
            .cases
            .iter()
            .all(|c| matches!(c.outcome, Outcome::Pass | Outcome::Skipped))
    );
    assert!(
        report
            .cases
            .iter()
            .filter(|c| c.outcome == Outcome::Pass)
            .count()
            >= 40
    );
    assert_eq!(
        report
            .adapter
            .implementation
            .as_ref()
            .map(|i| i.language.as_str()),
        Some("python")
    );

    let (output, report, out) = run(
        "broken",
        &[
            "--adapter",
            "python3 examples/python-adapter/adapter_broken.py",
        ],
    );
    assert_eq!(
        output.status.code(),
        Some(1),
        "the broken variant fails the run"
    );
    let broken: BTreeSet<String> = ["ASR-212", "ASR-234"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    assert_eq!(verdicts(&report, RuleVerdict::NonConformant), broken);
    let sarif = sarif(&out);
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    let failed = report
        .cases
        .iter()
        .filter(|c| c.outcome.is_failure())
        .count();
    assert_eq!(results.len(), failed, "one result per failing case");
    let rules: BTreeSet<String> = results
        .iter()
        .filter_map(|r| r["ruleId"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(rules, broken);
    let case = results
        .iter()
        .find(|r| r["properties"]["case"] == "messages/ASR-212/n_image_data_and_blob")
        .expect("the case the broken variant fails");
    assert_eq!(
        case["locations"][0]["physicalLocation"]["artifactLocation"],
        serde_json::json!({
            "uri": "messages/ASR-212/n_image_data_and_blob.jsonl",
            "uriBaseId": "CORPUS"
        })
    );
    assert_eq!(
        case["locations"][0]["physicalLocation"]["region"],
        serde_json::json!({ "startLine": 2 }),
        "the line of the finding missed"
    );
    let base = sarif["runs"][0]["originalUriBaseIds"]["CORPUS"]["uri"]
        .as_str()
        .expect("the corpus as a file URI");
    let corpus = crate::helpers::corpus();
    assert_eq!(base, format!("file://{}/", corpus.display()), "{base}");

    let (output, report, out) = run(
        "broken-expected",
        &[
            "--adapter",
            "python3 examples/python-adapter/adapter_broken.py",
            "--expect",
            "examples/python-adapter/expect-broken.json",
        ],
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "known failures match: {}",
        stdout(&output)
    );
    // Every report agrees with the gate: the run matches its expectations.
    crate::helpers::assert_report_meets_its_schema(&out);
    let expectations = report.expectations.as_ref().expect("recorded");
    assert_eq!(
        (
            expectations.implementation.as_str(),
            expectations.known_failures,
            expectations.regressions,
            expectations.unexpected_passes
        ),
        ("asr-ctk-python-example-broken", 3, 0, 0)
    );
    let said = "matches the expectations: 3 known failures, 0 regressions, 0 unexpected passes";
    for file in ["report.md", "report.html"] {
        let text = std::fs::read_to_string(out.join(file)).expect("written");
        assert!(text.contains(said), "{file}: {text}");
        assert!(
            text.contains("known failure: <code>messages/ASR-212/n_image_data_and_blob</code>")
                || text.contains("known failure: `messages/ASR-212/n_image_data_and_blob`"),
            "{file}: {text}"
        );
    }
    let junit = std::fs::read_to_string(out.join("junit.xml")).expect("junit");
    assert!(junit.contains(" failures=\"0\""), "{junit}");
    assert_eq!(
        junit
            .matches("<skipped message=\"known failure: deliberate bug")
            .count(),
        3,
        "{junit}"
    );
    let badge: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("badge.json")).expect("badge"))
            .expect("JSON");
    assert_eq!(badge["message"], "conformant with 3 known failures");
    assert_ne!(badge["color"], "red");
    let levels: BTreeSet<String> = self::sarif(&out)["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["level"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(levels, BTreeSet::from(["note".to_owned()]));
    let (output, report, out) = run(
        "broken-regressed",
        &[
            "--adapter",
            "python3 examples/python-adapter/adapter_broken.py",
            "--expect",
            "examples/python-adapter/expect.json",
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).contains("regression: messages/ASR-212/n_image_data_and_blob (fail)"),
        "{}",
        stdout(&output)
    );
    assert_eq!(report.expectations.map(|e| e.regressions), Some(3));
    let junit = std::fs::read_to_string(out.join("junit.xml")).expect("junit");
    assert!(
        junit.contains(" failures=\"3\""),
        "regressions stay failures: {junit}"
    );
}

#[test]
fn a_known_failure_that_passes_is_reported_so_its_entry_can_go() {
    let scratch = out_dir("stale-expect");
    let expect = scratch.join("expect.json");
    std::fs::write(
        &expect,
        r#"{"implementation": "asr-ctk-reference", "known": [{"case": "messages/ASR-212/n_*", "outcome": "fail", "reason": "was broken once", "link": "https://example.org/1"}]}"#,
    )
    .expect("write");
    let (output, _, _) = run(
        "stale",
        &[
            "--case",
            "messages/ASR-212/*",
            "--expect",
            &expect.to_string_lossy(),
        ],
    );
    assert_eq!(output.status.code(), Some(0));
    assert!(
        stdout(&output).contains("unexpected pass: messages/ASR-212/n_"),
        "{}",
        stdout(&output)
    );
    std::fs::write(
        &expect,
        r#"{"implementation": "x", "known": [{"case": "a", "outcome": "flaky", "reason": "r"}]}"#,
    )
    .expect("write");
    let bad = asr_ctk(&["run", "--quiet", "--expect", &expect.to_string_lossy()]);
    assert_eq!(
        bad.status.code(),
        Some(2),
        "a malformed expectations file is a usage error"
    );
}

#[test]
fn oneshot_mode_runs_every_single_stream_case_and_skips_the_rest() {
    let (output, report, _) = run("oneshot", &["--oneshot", "--rule", "ASR-4*"]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let corpus = asr_suite::case::load_corpus(&crate::helpers::corpus()).expect("the corpus");
    for case in &report.cases {
        let several = corpus
            .iter()
            .any(|c| c.name == case.name && c.streams.len() > 1);
        let want = if several {
            Outcome::Skipped
        } else {
            Outcome::Pass
        };
        assert_eq!(case.outcome, want, "{}: {:?}", case.name, case.detail);
    }
    assert_eq!(report.adapter.mode, "oneshot");
}

#[test]
fn shards_merge_into_the_whole_run_and_jobs_change_nothing() {
    let (_, whole, _) = run("whole", &["--rule", "ASR-2*", "--jobs", "2"]);
    let mut shard_reports = Vec::new();
    let mut shard_dirs = Vec::new();
    for i in 1..=3 {
        let (_, report, out) = run(
            &format!("shard{i}"),
            &["--rule", "ASR-2*", "--shard", &format!("{i}/3")],
        );
        assert!(!report.cases.is_empty() && report.cases.len() < whole.cases.len());
        shard_reports.push(out.join("report.json").to_string_lossy().into_owned());
        shard_dirs.push(out);
    }
    let merged_dir = out_dir("merged");
    let mut args = vec!["report", "merge", "--out"];
    let merged_text = merged_dir.to_string_lossy().into_owned();
    args.push(&merged_text);
    args.extend(shard_reports.iter().map(String::as_str));
    let output = asr_ctk(&args);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let merged: RunReport = crate::helpers::report_in(&merged_dir);
    let names = |r: &RunReport| {
        r.cases
            .iter()
            .map(|c| (c.name.clone(), c.outcome))
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&merged), names(&whole));
    assert_eq!(merged.shards, ["1/3", "2/3", "3/3"]);
    assert_eq!(merged.rules, whole.rules);
    let twice = asr_ctk(&[
        "report",
        "merge",
        "--out",
        &merged_text,
        &shard_reports[0],
        &shard_reports[0],
    ]);
    assert_eq!(
        twice.status.code(),
        Some(2),
        "the same shard twice is refused"
    );
    // Two shards of three: the merged report says it is incomplete, never green.
    let partial = asr_ctk(&[
        "report",
        "merge",
        "--out",
        &merged_text,
        &shard_reports[0],
        &shard_reports[2],
    ]);
    assert_eq!(partial.status.code(), Some(1), "{partial:?}");
    let merged: RunReport = crate::helpers::report_in(&merged_dir);
    assert!(
        merged
            .incomplete
            .as_deref()
            .is_some_and(|d| d.contains("2/3")),
        "{:?}",
        merged.incomplete
    );
    let badge = std::fs::read_to_string(merged_dir.join("badge.json")).expect("badge");
    assert!(badge.contains("lightgrey"), "{badge}");
}

#[test]
fn bad_selections_and_arguments_are_usage_errors() {
    // A well-formed selection that matches no case leaves nothing to run: the harness
    // status, not a usage error.
    assert_eq!(
        asr_ctk(&["run", "--quiet", "--case", "no/such/*"])
            .status
            .code(),
        Some(3)
    );
    assert_eq!(
        asr_ctk(&["run", "--quiet", "--shard", "4/3"]).status.code(),
        Some(2)
    );
    assert_eq!(
        asr_ctk(&["run", "--quiet", "--shard", "x"]).status.code(),
        Some(2)
    );
    assert_eq!(
        asr_ctk(&["run", "--quiet", "--adapter", "python3 'unclosed"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        asr_ctk(&["run", "--quiet", "--timeout", "0"]).status.code(),
        Some(2)
    );
}

#[test]
fn an_adapter_that_cannot_start_is_a_harness_failure_not_a_usage_error() {
    let (output, report, _) = run(
        "missing",
        &[
            "--adapter",
            "/nonexistent/adapter",
            "--case",
            "messages/ASR-212/*",
        ],
    );
    assert_eq!(output.status.code(), Some(3));
    assert!(
        report.cases.iter().all(|c| c.outcome == Outcome::NotRun),
        "{:?}",
        report.cases
    );
    assert!(
        report.cases[0]
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("failed to start"))
    );
}

#[test]
fn the_summary_counts_cases_and_pairs_and_lists_the_rules_of_the_selection() {
    let (output, report, _out) = run("summary", &["--case", "messages/ASR-2[01]*/**"]);
    let text = stdout(&output);
    let names: BTreeSet<&str> = report.cases.iter().map(|c| c.name.as_str()).collect();
    assert!(
        names.len() < report.cases.len(),
        "some cases run in both roles"
    );
    assert!(
        text.contains(&format!(
            "{} cases, {} case-role pairs",
            names.len(),
            report.cases.len()
        )),
        "{text}"
    );
    // A selection lists the rules its cases name (untested ones among them said so), and
    // counts the rest.
    for rule in &report.rules {
        let listed = text
            .lines()
            .any(|l| l.split_whitespace().next() == Some(rule.rule.as_str()));
        assert_eq!(
            listed,
            rule.cases + rule.charged_from_others > 0,
            "{}: {text}",
            rule.rule
        );
        if listed && rule.verdict == RuleVerdict::Untested {
            assert!(
                text.contains(&format!("{:<10} untested", rule.rule)),
                "{text}"
            );
        }
    }
    let untested = report
        .rules
        .iter()
        .filter(|r| r.verdict == RuleVerdict::Untested)
        .count();
    assert!(text.contains(&format!("{untested} untested")), "{text}");
}

/// A selection shows the rules its cases name, not the whole catalog; `--quiet` shows the
/// totals and where the reports are, nothing per rule.
#[test]
fn the_summary_shows_the_rules_selected_and_quiet_shows_only_totals() {
    let out = scratch("run-selected");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--rule", "ASR-212", "--out"];
        let out = out.to_string_lossy().into_owned();
        args.push(&out);
        args.extend_from_slice(extra);
        let output = asr_ctk(&args);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let full = run(&[]);
    let report: RunReport = crate::helpers::report_in(&out);
    let named: Vec<&str> = report
        .rules
        .iter()
        .filter(|r| r.cases > 0)
        .map(|r| r.rule.as_str())
        .collect();
    assert!(named.contains(&"ASR-212"), "{named:?}");
    let rows: Vec<&str> = full
        .lines()
        .filter(|l| l.starts_with("ASR-"))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(rows, named, "{full}");
    let quiet = run(&["--quiet"]);
    assert!(quiet.lines().count() <= 5, "{quiet}");
    assert!(!quiet.lines().any(|l| l.starts_with("ASR-")), "{quiet}");
    assert!(quiet.contains("reports: "), "{quiet}");
}
