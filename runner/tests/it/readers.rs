//! Deliberately wrong readers (`runner/tests/readers/`): a conformance run fails each under
//! the rule it breaks, `asr-ctk diff` against the reference names that rule with a
//! pointer-level diff, and the reference reader passes every reader case.

use crate::helpers::{BIN, asr_ctk, readers, scratch};
use asr_suite::conformance::{Outcome, RuleVerdict, RunReport};
use std::collections::BTreeSet;
use std::process::Output;

fn wrong(name: &str) -> String {
    format!("python3 {}/{name}.py {BIN}", readers().display())
}

fn run(name: &str, adapter: Option<&str>) -> (Output, RunReport) {
    run_with(name, "reader", &[], adapter)
}

/// The rules every failing case's failures are charged to.
fn failing_rules(report: &RunReport) -> BTreeSet<String> {
    report
        .cases
        .iter()
        .filter(|c| c.outcome == Outcome::Fail)
        .flat_map(|c| c.attributions.iter().filter_map(|a| a.rule.clone()))
        .collect()
}

fn set(rules: &[&str]) -> BTreeSet<String> {
    rules.iter().map(|r| (*r).to_owned()).collect()
}

#[test]
fn the_reference_reader_passes_every_reader_case() {
    let (output, report) = run("reference", None);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(
        report.cases.len() >= 20,
        "reader cases: {}",
        report.cases.len()
    );
    assert!(report.cases.iter().all(|c| c.outcome == Outcome::Pass));
    for rule in [
        "ASR-205", "ASR-214", "ASR-215", "ASR-218", "ASR-220", "ASR-224", "ASR-225", "ASR-232",
        "ASR-237", "ASR-238", "ASR-401", "ASR-406", "ASR-415", "ASR-416", "ASR-417", "ASR-423",
        "ASR-426",
    ] {
        let result = report
            .rules
            .iter()
            .find(|r| r.rule == rule)
            .expect("in the report");
        assert_eq!(
            result.verdict,
            RuleVerdict::Conformant,
            "{rule} has a reader case that passes"
        );
    }
}

/// Each wrong reader: the rule it must be failed under, and the rules its mismatches may
/// name (a member of the reading can come from several rules; the case's own rule is used).
const WRONG: &[(&str, &str, &[&str])] = &[
    (
        "copies_as_original",
        "ASR-416",
        &[
            "ASR-413", "ASR-415", "ASR-416", "ASR-417", "ASR-423", "ASR-426",
        ],
    ),
    (
        "missing_lineage_as_root",
        "ASR-401",
        &["ASR-401", "ASR-402"],
    ),
    (
        "indexes_signatures",
        "ASR-215",
        &["ASR-214", "ASR-215", "ASR-220", "ASR-232", "ASR-238"],
    ),
    (
        "renders_unknown_parts",
        "ASR-218",
        &[
            "ASR-214", "ASR-215", "ASR-218", "ASR-220", "ASR-232", "ASR-238",
        ],
    ),
    (
        "ignores_mirror_rule",
        "ASR-423",
        &["ASR-416", "ASR-417", "ASR-423"],
    ),
    ("first_delivery_revision", "ASR-237", &["ASR-237"]),
    // The envelope and the records: a reader that passed every case while the kit had none
    // of these.
    ("reads_a_truncated_last_line", "ASR-X-003", &["ASR-X-003"]),
    ("refuses_crlf", "ASR-X-019", &["ASR-X-019"]),
    ("skips_byte_order_marks", "ASR-X-003", &["ASR-X-003"]),
    (
        "keeps_the_last_of_a_repeated_id",
        "ASR-X-009",
        &["ASR-X-009"],
    ),
    (
        "derived_in_prefix_as_original",
        "ASR-415",
        &["ASR-415", "ASR-417"],
    ),
];

#[test]
fn every_wrong_reader_fails_under_the_rule_it_breaks() {
    for (name, rule, allowed) in WRONG {
        let (output, report) = run(name, Some(&wrong(name)));
        assert_eq!(output.status.code(), Some(1), "{name} must fail the run");
        let rules = failing_rules(&report);
        assert!(
            rules.contains(*rule),
            "{name}: failing rules {rules:?} miss {rule}"
        );
        assert!(
            rules.is_subset(&set(allowed)),
            "{name}: failing rules {rules:?} beyond {allowed:?}"
        );
        let verdict = report
            .rules
            .iter()
            .find(|r| r.rule == *rule)
            .map(|r| r.verdict);
        assert_eq!(verdict, Some(RuleVerdict::NonConformant), "{name}: {rule}");
    }
}

#[test]
fn diff_compares_only_the_verdict_of_a_stream_one_side_refused() {
    let out = scratch("readers-diff-refusal");
    let output = asr_ctk(&[
        "diff",
        "--case",
        "inferred/ASR-X-003/n_truncated_last_line*",
        "--adapter",
        "reference",
        "--adapter",
        &wrong("reads_a_truncated_last_line"),
        "--out",
        &out.to_string_lossy(),
    ]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}");
    // The second reads what the first refuses, and sends a reading beside it: only the
    // verdict is compared, under the rule of what a reader refuses, never under no rule.
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("inferred/ASR-X-003/"))
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines
            .iter()
            .all(|l| l.contains(" /valid (ASR-X-003): first false, second true")),
        "{text}"
    );
    assert!(!text.contains("(no rule)"), "{text}");
}

#[test]
fn diff_against_the_reference_names_the_rule_with_pointers() {
    for (name, rule, _) in WRONG {
        let out = scratch(&format!("readers-diff-{name}"));
        let output = asr_ctk(&[
            "diff",
            "--adapter",
            "reference",
            "--adapter",
            &wrong(name),
            "--out",
            &out.to_string_lossy(),
        ]);
        assert_eq!(output.status.code(), Some(1), "{name}: {output:?}");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(text.contains(&format!("{rule}: ")), "{name}: {text}");
        assert!(
            text.lines().any(|l| {
                let l = l.trim_start();
                // A reader that reads what it must refuse, or refuses what it must read,
                // differs on the verdict alone: the readings beside a refusal are not compared.
                l.contains(" /records/") || l.contains(" /session/") || l.contains(" /valid ")
            }),
            "{name}: {text}"
        );
        let html = std::fs::read_to_string(out.join("report.html")).expect("the diff report");
        assert!(
            html.contains("<details"),
            "{name}: the HTML report shows the diffs"
        );
        let report = crate::helpers::report_in(&out);
        let second = report
            .adapter
            .versus
            .as_ref()
            .expect("the second implementation");
        assert_eq!(
            second.command,
            shell_words::split(&wrong(name)).expect("a command line"),
            "{name}"
        );
        assert!(
            !report.adapter.command.iter().any(|a| a.contains("versus")),
            "{name}: the first command is the first's only: {:?}",
            report.adapter.command
        );
        crate::helpers::assert_report_meets_its_schema(&out);
        let title = html
            .lines()
            .find(|l| l.starts_with("<h1>"))
            .expect("a title");
        assert!(title.contains(" versus "), "{name}: {title}");
        assert!(html.contains("<dt>Versus adapter</dt>"), "{name}");
    }
    let same = asr_ctk(&[
        "diff",
        "--adapter",
        "reference",
        "--adapter",
        "reference",
        "--out",
        &scratch("readers-diff-same").to_string_lossy(),
    ]);
    assert_eq!(
        same.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&same.stdout)
    );
}

/// A case one implementation skips is not compared, never an error: the run of an
/// implementation that skips most cases and agrees on the rest succeeds, counts the skips
/// as skips, and says how many streams were compared; one that skips everything compared
/// nothing, which is no success.
#[test]
fn diff_counts_skipped_cases_as_not_compared_never_as_errors() {
    let example = format!(
        "python3 {}",
        crate::helpers::root()
            .join("examples/python-adapter/adapter.py")
            .display()
    );
    let out = scratch("readers-diff-skips");
    let output = asr_ctk(&[
        "diff",
        "--role",
        "validator",
        "--adapter",
        "reference",
        "--adapter",
        &example,
        "--out",
        &out.to_string_lossy(),
    ]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{text}");
    let report: RunReport = crate::helpers::report_in(&out);
    let skipped = report.totals[&Outcome::Skipped];
    assert!(skipped > 100, "{:?}", report.totals);
    assert_eq!(report.totals[&Outcome::Error], 0, "{:?}", report.totals);
    assert!(
        report
            .rules
            .iter()
            .all(|r| r.verdict != RuleVerdict::NonConformant),
        "a skip made a rule non-conformant"
    );
    assert!(
        text.contains(&format!("0 disagreement(s) on {} stream(s) compared; {skipped} not compared ({skipped} skipped, 0 without an answer)", report.cases.len() - skipped)),
        "{text}"
    );
    assert!(
        text.lines()
            .filter(|l| l.starts_with("not compared"))
            .count()
            < skipped / 2,
        "one line a reason, not a case: {text}"
    );
    let nothing = asr_ctk(&[
        "diff",
        "--role",
        "validator",
        "--adapter",
        "reference",
        "--adapter",
        &example,
        "--case",
        "messages/ASR-238/*",
        "--out",
        &scratch("readers-diff-skips-all").to_string_lossy(),
    ]);
    let text = String::from_utf8_lossy(&nothing.stdout);
    assert_eq!(nothing.status.code(), Some(3), "{text}");
    assert!(text.contains("nothing was compared"), "{text}");
}

/// On the user's own streams (no case, so no rule of a case to go by), each disagreement is
/// grouped under the rule its member comes from, as the reading schema says; never under an
/// empty name.
#[test]
fn diff_on_the_users_own_stream_groups_by_the_members_rule() {
    let place = scratch("readers-diff-own-file");
    let stream = place.join("copied.jsonl");
    std::fs::write(
        &stream,
        concat!(
            r#"{"type":"session","seq":0,"id":"h","agent":{"name":"codex"},"sessionId":"s1","lineage":{"inherits":{"mode":"none","evidence":"native_field"}}}"#,
            "\n",
            r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[],"copiedFrom":{"session":"codex:p","record":"x","proof":"native_id"}}"#,
            "\n",
        ),
    )
    .expect("a stream");
    let output = asr_ctk(&[
        "diff",
        "--role",
        "reader",
        "--adapter",
        "reference",
        "--adapter",
        &wrong("copies_as_original"),
        "--out",
        &place.join("out").to_string_lossy(),
        &stream.to_string_lossy(),
    ]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.lines().any(|l| l.starts_with("ASR-416: ")), "{text}");
    assert!(
        !text.lines().any(|l| l.starts_with(": ")),
        "a group without a name: {text}"
    );
}

/// Two validators on the user's own stream: each finding one of them lacks is grouped under
/// its own rule, the verdict under no rule at all when there is no case to name one.
#[test]
fn validator_diff_on_the_users_own_stream_groups_each_finding_under_its_rule() {
    let place = scratch("validator-diff-own-file");
    let stream = place.join("image.jsonl");
    std::fs::write(
        &stream,
        concat!(
            r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"codex"},"sessionId":"s1"}"#,
            "\n",
            r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[{"type":"image","data":"AA==","blob":{"blob":"sha256:0f"},"mimeType":"image/png"}]}"#,
            "\n",
        ),
    )
    .expect("a stream");
    let broken = format!(
        "python3 {}/../examples/python-adapter/adapter_broken.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let output = asr_ctk(&[
        "diff",
        "--role",
        "validator",
        "--adapter",
        "reference",
        "--adapter",
        &broken,
        "--out",
        &place.join("out").to_string_lossy(),
        &stream.to_string_lossy(),
    ]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("ASR-212: 1 disagreement")),
        "{text}"
    );
    assert!(
        text.contains(
            "/findings/line 2 (ASR-212): first \"error ASR-212\", second \"no such finding\""
        ),
        "{text}"
    );
    assert!(text.lines().any(|l| l.starts_with("(no rule): ")), "{text}");
    assert!(!text.lines().any(|l| l.starts_with(": ")), "{text}");
}

/// `asr-ctk run` for one role, its report in a scratch directory named after `name`; the
/// kit's reference when no adapter is given.
fn run_with(name: &str, role: &str, extra: &[&str], adapter: Option<&str>) -> (Output, RunReport) {
    let out = scratch(&format!("readers-{name}"));
    let out_text = out.to_string_lossy().into_owned();
    let mut args = vec!["run", "--role", role, "--quiet", "--out", out_text.as_str()];
    args.extend(extra);
    if let Some(adapter) = adapter {
        args.extend(["--adapter", adapter]);
    }
    let output = asr_ctk(&args);
    let text = std::fs::read_to_string(out.join("report.json"))
        .unwrap_or_else(|e| panic!("no report ({e}): {output:?}"));
    (output, serde_json::from_str(&text).expect("report"))
}

fn verdict(report: &RunReport, rule: &str) -> RuleVerdict {
    report
        .rules
        .iter()
        .find(|r| r.rule == rule)
        .map_or_else(|| panic!("{rule} is not in the report"), |r| r.verdict)
}

#[test]
fn a_validator_rejecting_a_valid_member_is_charged_under_the_rule_it_cited_alone() {
    let (output, report) = run_with(
        "rejects_from_address",
        "validator",
        &[],
        Some(&wrong("rejects_from_address")),
    );
    assert_eq!(output.status.code(), Some(1));
    let row = report
        .rules
        .iter()
        .find(|r| r.rule == "ASR-228")
        .expect("ASR-228");
    assert_eq!(row.verdict, RuleVerdict::NonConformant);
    assert!(row.over_strict >= 3, "{row:?}");
    assert_eq!(row.lenient, 0, "{row:?}");
    // The cases whose streams carry a `from` address stand in other rules' directories;
    // those rules are not the culprit.
    for rule in ["ASR-210", "ASR-230", "ASR-233"] {
        assert_eq!(verdict(&report, rule), RuleVerdict::Conformant, "{rule}");
    }
    let failed: Vec<&str> = report
        .cases
        .iter()
        .filter(|c| c.outcome == Outcome::Fail)
        .map(|c| c.name.as_str())
        .collect();
    assert!(
        failed.contains(&"messages/ASR-210/y_aun_custom_payload_unknown_part"),
        "{failed:?}"
    );
}

#[test]
fn a_reader_deciding_otherwise_on_a_decision_is_non_strict_on_it_and_passes() {
    let (output, report) = run_with(
        "unresolved_reversed",
        "reader",
        &[],
        Some(&wrong("unresolved_reversed")),
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "non-strict is no failure: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let row = report
        .rules
        .iter()
        .find(|r| r.rule == "ASR-406")
        .expect("ASR-406");
    assert_eq!(row.verdict, RuleVerdict::NonStrict, "{row:?}");
    assert_eq!(row.decisions, ["unresolved-form"]);
    assert!(
        report.cases.iter().any(|c| c.outcome == Outcome::NonStrict),
        "some case lists two or more unresolved sessions"
    );
    assert!(report.cases.iter().all(|c| c.outcome != Outcome::Fail));
    assert_eq!(verdict(&report, "ASR-401"), RuleVerdict::Conformant);
}

#[test]
fn an_implementations_own_id_counts_for_a_check_only_when_its_handshake_declares_it() {
    let undeclared = format!("{} ", wrong("cites_own_ids"));
    let (output, report) = run_with(
        "cites_own_ids",
        "validator",
        &["--rule", "ASR-X-003"],
        Some(undeclared.trim_end()),
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(verdict(&report, "ASR-X-003"), RuleVerdict::NonConformant);
    let declared = format!("{} --declare", wrong("cites_own_ids"));
    let (output, report) = run_with(
        "cites_own_ids_declared",
        "validator",
        &["--rule", "ASR-X-003"],
        Some(&declared),
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(verdict(&report, "ASR-X-003"), RuleVerdict::Conformant);
}

#[test]
fn a_member_the_reading_does_not_define_is_noted_and_refused_by_validate_protocol() {
    let adapter = wrong("adds_a_member");
    let (output, report) = run_with("adds_a_member", "reader", &[], Some(&adapter));
    assert_eq!(output.status.code(), Some(0));
    assert!(report.cases.iter().all(|c| c.outcome == Outcome::Pass));
    let noted = report
        .cases
        .iter()
        .filter(|c| c.notes.iter().any(|n| n.contains("/session/mood")))
        .count();
    // Every reading is noted but those of streams the reader refused, not compared.
    let refused = asr_suite::case::load_corpus(&crate::helpers::corpus())
        .expect("the corpus")
        .iter()
        .filter(|c| c.sidecar.expect.reader.is_some())
        .filter(|c| {
            let bytes = std::fs::read(&c.streams[0].1).expect("a stream");
            !asr_suite::reading::read_bytes(&bytes).accepted
        })
        .count();
    assert!(noted >= 100, "{noted} noted");
    assert!(
        noted + refused == report.cases.len(),
        "{noted} noted, {refused} refused, of {}",
        report.cases.len()
    );
    let (output, report) = run_with(
        "adds_a_member_strict",
        "reader",
        &["--validate-protocol", "--max-restarts", "0"],
        Some(&adapter),
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        report.cases[0].outcome,
        Outcome::ProtocolError,
        "{:?}",
        report.cases[0]
    );
}

/// Every rule row of a real run's report, and every role's row within it: the columns that
/// partition the rule's cases add up to them.
#[test]
fn the_partition_columns_of_every_rule_row_sum_to_its_cases() {
    let runs: [(&str, &str, Option<String>); 3] = [
        ("validator", "ASR-2*", None),
        ("validator", "ASR-2*", Some(wrong("rejects_from_address"))),
        ("reader", "ASR-4*", Some(wrong("unresolved_reversed"))),
    ];
    let mut charged_elsewhere = 0;
    for (role, rules, adapter) in &runs {
        let out = scratch(&format!("readers-partition-{role}-{}", adapter.is_some()));
        let out_text = out.to_string_lossy().into_owned();
        let mut args = vec![
            "run", "--role", role, "--rule", rules, "--quiet", "--out", &out_text,
        ];
        if let Some(adapter) = adapter {
            args.extend(["--adapter", adapter.as_str()]);
        }
        let output = asr_ctk(&args);
        let report = crate::helpers::report_json_in(&out);
        let rows = report["rules"].as_array().expect("rules");
        assert!(!rows.is_empty(), "{output:?}");
        let count = |row: &serde_json::Value, key: &str| row[key].as_u64().unwrap_or(0);
        for row in rows {
            let mut all = vec![(row["rule"].to_string(), row)];
            if let Some(by_role) = row["byRole"].as_object() {
                all.extend(
                    by_role
                        .iter()
                        .map(|(r, x)| (format!("{} {r}", row["rule"]), x)),
                );
            }
            for (name, counts) in all {
                let sum: u64 = ["passed", "failed", "nonStrict", "skipped", "errored"]
                    .iter()
                    .map(|key| count(counts, key))
                    .sum();
                assert_eq!(sum, count(counts, "cases"), "{name}: {counts}");
            }
            charged_elsewhere += count(row, "chargedFromOthers");
        }
        crate::helpers::assert_report_meets_its_schema(&out);
    }
    assert!(
        charged_elsewhere > 0,
        "a wrong validator's failures are charged from other rules' cases"
    );
}
