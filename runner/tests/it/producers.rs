//! Deliberately wrong producers (`runner/tests/producers/`): a conformance run fails each under
//! the rule its mistake breaks, and only there; the reference producer passes every fixture in
//! both modes; a producer's answer that breaks the protocol is said so.

use crate::helpers::{BIN, producers, scratch};
use asr_suite::conformance::{Failure, Outcome, RuleVerdict, RunReport};
use std::collections::BTreeSet;
use std::process::Output;

/// Each wrong producer: the rule its mistake must be failed under, and every rule its failures
/// may be charged to (a mistake can break a neighbour rule on some source: a hook's output
/// called a person's words breaks ASR-203, and a chat message's, whose `from` names a person,
/// ASR-226, where ASR-202 is about the harness's).
const WRONG: &[(&str, &str, &[&str])] = &[
    ("reflows_text", "ASR-211", &["ASR-211"]),
    ("trims_text", "ASR-211", &["ASR-211"]),
    (
        "human_on_injections",
        "ASR-202",
        &["ASR-202", "ASR-203", "ASR-226"],
    ),
    ("normalises_crlf", "ASR-211", &["ASR-211"]),
    ("audience_both", "ASR-204", &["ASR-204"]),
    // Folding moves the reasoning after what the source has before it: the order decision.
    ("folds_reasoning", "ASR-219", &["ASR-219", "ASR-211"]),
    ("invents_delivery", "ASR-237", &["ASR-237", "ASR-427"]),
    ("guesses_spawned_by", "ASR-404", &["ASR-403", "ASR-404"]),
    ("infers_scope", "ASR-410", &["ASR-410"]),
    ("copied_from_similar", "ASR-414", &["ASR-414"]),
];

/// A producer run; `adapter` `None` is the kit's reference.
fn run(adapter: Option<&str>, extra: &[&str], tag: &str) -> (Output, RunReport) {
    let out = scratch(&format!("producers-{tag}"));
    run_into(&out, None, adapter, extra)
}

/// A one-shot producer run of `adapter` whose temporary directory is `tmp` (where the kit
/// makes its work directories), with `extra` options.
fn oneshot_in(tmp: &std::path::Path, adapter: &str, extra: &[&str]) -> (Output, RunReport) {
    let mut args = vec!["--oneshot"];
    args.extend_from_slice(extra);
    run_into(&tmp.join("out"), Some(tmp), Some(adapter), &args)
}

/// A producer run with its reports in `out`, and its temporary directory `tmp` if given.
fn run_into(
    out: &std::path::Path,
    tmp: Option<&std::path::Path>,
    adapter: Option<&str>,
    extra: &[&str],
) -> (Output, RunReport) {
    let out_text = out.to_string_lossy().into_owned();
    let mut args = vec![
        "run",
        "--role",
        "producer",
        "--quiet",
        "--out",
        out_text.as_str(),
    ];
    if let Some(adapter) = adapter {
        args.extend(["--adapter", adapter]);
    }
    args.extend(extra);
    let mut kit = crate::helpers::Kit::new(&args);
    if let Some(tmp) = tmp {
        kit = kit.envs(&[("TMPDIR", &tmp.to_string_lossy())]);
    }
    let output = kit.output();
    let report = crate::helpers::report_in(out);
    (output, report)
}

fn verdict(report: &RunReport, rule: &str) -> Option<RuleVerdict> {
    report
        .rules
        .iter()
        .find(|r| r.rule == rule)
        .map(|r| r.verdict)
}

fn wrong(name: &str) -> String {
    format!("python3 {}/{name}.py {BIN}", producers().display())
}

/// The rules failures were charged to, over every case.
fn charged(report: &RunReport) -> BTreeSet<String> {
    report
        .cases
        .iter()
        .flat_map(|c| c.attributions.iter())
        .filter_map(|a| a.rule.clone())
        .collect()
}

#[test]
fn every_wrong_producer_fails_under_the_rule_it_breaks_and_only_there() {
    for (name, rule, allowed) in WRONG {
        let (output, report) = run(Some(&wrong(name)), &[], name);
        assert_eq!(output.status.code(), Some(1), "{name} must fail the run");
        let rules = charged(&report);
        assert!(
            rules.contains(*rule),
            "{name}: charged {rules:?}, not {rule}"
        );
        let allowed: BTreeSet<String> = allowed.iter().map(|r| (*r).to_owned()).collect();
        assert!(
            rules.is_subset(&allowed),
            "{name}: charged {rules:?} beyond {allowed:?}"
        );
        assert!(
            report
                .cases
                .iter()
                .flat_map(|c| &c.attributions)
                .all(|a| a.kind == Failure::Fidelity),
            "{name}: a mistake of fidelity, the output still valid"
        );
        assert!(
            report.cases.iter().all(|c| matches!(
                c.outcome,
                Outcome::Pass | Outcome::Fail | Outcome::NonStrict
            )),
            "{name}: every case answered"
        );
        assert_eq!(
            verdict(&report, rule),
            Some(RuleVerdict::NonConformant),
            "{name}"
        );
        // The rules of the fixtures it passes stay conformant: the failure is not spread.
        let tested: BTreeSet<&str> = report
            .cases
            .iter()
            .filter(|c| c.outcome == Outcome::Pass)
            .flat_map(|c| c.rules.iter().map(String::as_str))
            .collect();
        for other in tested.iter().filter(|r| !allowed.contains(**r)) {
            assert_eq!(
                verdict(&report, other),
                Some(RuleVerdict::Conformant),
                "{name}: {other} stays conformant"
            );
        }
        let by_role = report
            .rules
            .iter()
            .find(|r| r.rule == *rule)
            .and_then(|r| r.by_role.get(&asr_suite::protocol::ProtocolRole::Producer))
            .map(|r| r.verdict);
        assert_eq!(by_role, Some(RuleVerdict::NonConformant), "{name}: by role");
    }
}

#[test]
fn the_reference_producer_passes_every_fixture_in_both_modes() {
    for (mode, extra) in [("persistent", &[][..]), ("oneshot", &["--oneshot"][..])] {
        let (output, report) = run(None, extra, &format!("reference-{mode}"));
        assert_eq!(output.status.code(), Some(0), "{mode}: {output:?}");
        assert!(report.cases.len() >= 9, "{mode}: {}", report.cases.len());
        assert!(
            report.cases.iter().all(|c| c.outcome == Outcome::Pass),
            "{mode}: {:?}",
            report.cases.iter().find(|c| c.outcome != Outcome::Pass)
        );
        assert_eq!(
            verdict(&report, "ASR-211"),
            Some(RuleVerdict::Conformant),
            "{mode}"
        );
    }
}

fn faulty(mode: &str) -> String {
    format!("python3 {}/faulty.py {mode}", producers().display())
}

#[test]
fn a_producers_answer_that_breaks_the_protocol_is_said_so() {
    for (mode, said) in [
        ("streams", "it holds `outputs`"),
        // The reply schema refuses an empty `outputs` before the kit's own check sees it.
        (
            "no-outputs",
            "the answer breaks the reply schema: [] has less than 1 item at /outputs",
        ),
        ("twice", "two output streams are named"),
        ("joined", "holds a newline"),
    ] {
        // Each protocol error restarts the adapter: enough restarts for every fixture.
        let (output, report) = run(
            Some(&faulty(mode)),
            &["--max-restarts", "1000"],
            &format!("faulty-{mode}"),
        );
        assert_eq!(output.status.code(), Some(1), "{mode}");
        assert!(
            report
                .cases
                .iter()
                .all(|c| c.outcome == Outcome::ProtocolError
                    && c.detail.as_deref().is_some_and(|d| d.contains(said))),
            "{mode}: {:?}",
            report.cases.first()
        );
    }
}

#[test]
fn a_stream_that_is_not_valid_fails_as_invalid_under_the_checkers_rule() {
    let (output, report) = run(Some(&faulty("headless")), &[], "faulty-headless");
    assert_eq!(output.status.code(), Some(1));
    assert!(report.cases.iter().all(|c| c.outcome == Outcome::Fail));
    assert!(
        report
            .cases
            .iter()
            .all(|c| c.attributions.iter().any(|a| a.kind == Failure::Invalid)),
        "{:?}",
        report.cases.first()
    );
    let case = &report.cases[0];
    assert!(
        case.diff
            .as_deref()
            .is_some_and(|d| d.contains("--- golden")),
        "the golden and the output are diffed: {case:?}"
    );
}

/// A producer's output the kit cannot delete (made immutable) leaves its directory behind,
/// and the kit says so on the console and in the report. Needs `chattr` and the right to use
/// it (root, on a file system with the flag); says so and checks nothing otherwise.
#[test]
fn a_work_directory_the_kit_cannot_remove_is_said() {
    let probe = scratch("producers-chattr");
    let file = probe.join("f");
    std::fs::write(&file, "x").expect("write");
    let works = std::process::Command::new("chattr")
        .arg("+i")
        .arg(&file)
        .status()
        .is_ok_and(|s| s.success());
    if !works {
        eprintln!("chattr +i does not work here: nothing checked");
        return;
    }
    let _ = std::process::Command::new("chattr")
        .arg("-i")
        .arg(&file)
        .status();
    // Its own temporary directory: what is left there is no other test's business.
    let tmp = probe.join("tmp");
    std::fs::create_dir_all(&tmp).expect("mkdir");
    let (output, report) = oneshot_in(
        &tmp,
        &faulty("immutable"),
        &["--case", "sources/claude-code-jsonl/background_agent_01"],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let said = "failed to remove the producer's directory";
    let left: Vec<_> = stderr
        .lines()
        .filter_map(|l| l.split(said).nth(1))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(|dir| dir.trim_end_matches(':').to_owned())
        .collect();
    for dir in &left {
        let _ = std::process::Command::new("chattr")
            .args(["-R", "-i", dir])
            .status();
        let _ = std::fs::remove_dir_all(dir);
    }
    assert_eq!(left.len(), 1, "{stderr}");
    assert_eq!(report.cases.len(), 1);
    assert_eq!(
        report.cases[0].outcome,
        Outcome::Pass,
        "{:?}",
        report.cases[0]
    );
    assert!(
        report.cases[0]
            .stderr
            .as_deref()
            .is_some_and(|s| s.contains(said)),
        "{:?}",
        report.cases[0]
    );
}

#[test]
fn a_oneshot_producer_writes_its_stream_on_stdout_or_into_its_output_directory() {
    for mode in ["stdout", "outdir"] {
        let (output, report) = run(
            Some(&faulty(mode)),
            &["--oneshot"],
            &format!("faulty-{mode}"),
        );
        assert_eq!(output.status.code(), Some(0), "{mode}: {output:?}");
        // On stdout a producer writes one stream: a fixture of several loses the others,
        // which every conversion keeps (a session of the source has no stream).
        let several = |c: &&asr_suite::conformance::CaseResult| {
            let expected = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../cases")
                .join(&c.name)
                .join("expected");
            std::fs::read_dir(expected).is_ok_and(|d| d.count() > 1)
        };
        assert!(
            report.cases.iter().all(|c| c.outcome
                == if mode == "stdout" && several(&c) {
                    Outcome::NonStrict
                } else {
                    Outcome::Pass
                }),
            "{mode}: {:?}",
            report.cases.iter().find(|c| c.outcome != Outcome::Pass)
        );
        assert!(report.cases.iter().filter(several).count() >= 2);
    }
    // A temporary directory of its own: other tests' one-shot runs make work directories in
    // the shared one while this runs.
    let tmp = scratch("producers-nothing-tmp");
    let (output, report) = oneshot_in(&tmp, &faulty("nothing"), &[]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        report.cases.iter().all(|c| c.outcome == Outcome::Crash
            && c.detail
                .as_deref()
                .is_some_and(|d| d.contains("ASR_CTK_OUTPUT_DIR"))),
        "{:?}",
        report.cases.first()
    );
    let leftovers: Vec<_> = std::fs::read_dir(&*tmp)
        .expect("the temporary directory")
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("asr-ctk-produce-")
        })
        .collect();
    assert!(leftovers.is_empty(), "work directories left: {leftovers:?}");
    assert!(report.cases.len() > 10, "every fixture was run");
}

#[test]
fn the_python_example_converts_the_gemini_fixtures_and_skips_the_other_formats() {
    for (mode, extra) in [("persistent", &[][..]), ("oneshot", &["--oneshot"][..])] {
        let mut args = vec![
            "--validate-protocol",
            "--expect",
            "examples/python-adapter/expect.json",
        ];
        args.extend(extra);
        let (output, report) = run(
            Some("python3 examples/python-adapter/adapter.py"),
            &args,
            &format!("python-example-{mode}"),
        );
        assert_eq!(output.status.code(), Some(0), "{mode}: {output:?}");
        let gemini: Vec<_> = report
            .cases
            .iter()
            .filter(|c| c.name.starts_with("sources/gemini-cli-json/"))
            .collect();
        assert!(!gemini.is_empty());
        assert!(
            gemini.iter().filter(|c| c.outcome == Outcome::Pass).count() >= 2,
            "{mode}: {:?}",
            gemini
                .iter()
                .map(|c| (&c.name, c.outcome))
                .collect::<Vec<_>>()
        );
        assert!(
            report
                .cases
                .iter()
                .filter(|c| !c.name.starts_with("sources/gemini-cli-json/"))
                .all(|c| c.outcome == Outcome::Skipped
                    && c.detail
                        .as_deref()
                        .is_some_and(|d| d.contains("gemini-cli-json"))),
            "{mode}: every other format is skipped, saying why"
        );
        assert_eq!(
            verdict(&report, "ASR-211"),
            Some(RuleVerdict::Conformant),
            "{mode}"
        );
    }
}

#[test]
fn an_expectation_of_one_role_leaves_the_other_roles_cases_alone() {
    let dir = scratch("producers-expect-role");
    for (role, applies) in [("validator", false), ("producer", true)] {
        let file = dir.join(format!("expect-{role}.json"));
        std::fs::write(
            &file,
            format!(
                r#"{{"implementation": "asr-ctk-reference", "known": [{{"rule": "ASR-211", "role": "{role}", "outcome": "fail", "reason": "known"}}]}}"#
            ),
        )
        .expect("write");
        let (output, _) = run(
            None,
            &["--expect", &file.to_string_lossy()],
            &format!("expect-{role}"),
        );
        assert_eq!(output.status.code(), Some(0), "{role}");
        let said = String::from_utf8_lossy(&output.stdout);
        assert_eq!(said.contains("unexpected pass"), applies, "{role}: {said}");
    }
}

#[test]
fn a_failing_producer_case_is_one_short_line_on_the_console() {
    let out = scratch("producers-console");
    let out_text = out.to_string_lossy().into_owned();
    let adapter = wrong("reflows_text");
    let output = crate::helpers::Kit::new(&[
        "run",
        "--role",
        "producer",
        "--adapter",
        &adapter,
        "--out",
        &out_text,
    ])
    .output();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let failures: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with('[') && l.contains("] fail "))
        .collect();
    assert!(!failures.is_empty(), "{stderr}");
    for line in &failures {
        assert!(
            line.chars().count() <= 600,
            "{} characters: {line}",
            line.chars().count()
        );
        assert!(line.contains("(ASR-211 fidelity"), "{line}");
        assert!(line.contains("first difference at character "), "{line}");
        assert!(line.contains(" characters, actual "), "{line}");
    }
    // The texts in full stay in the report.
    let report = crate::helpers::report_in(&out);
    let failed = report
        .cases
        .iter()
        .find(|c| c.outcome == Outcome::Fail)
        .expect("a failure");
    assert!(failed.actual.as_ref().is_some_and(|a| a.len() > 600));
}
