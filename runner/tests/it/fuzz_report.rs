//! A fuzz campaign reports like a certification run: `asr-ctk fuzz` writes `report.json`
//! (meeting its schema), Markdown, HTML, JUnit, SARIF and a badge beside `OUT/found/`, with
//! per rule the streams that exercised it and the disagreements and found cases charged to
//! it; the counts add up to the iterations; `report merge` joins the parts of one campaign
//! into what the whole campaign reports, and refuses parts of different campaigns.

use crate::helpers::{
    BIN, asr_ctk, assert_report_meets_its_schema, readers, report_in, report_json_in, root,
    run_212, scratch,
};
use asr_suite::conformance::{RuleVerdict, RunReport};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn example(name: &str) -> String {
    format!(
        "python3 {}",
        root().join("examples/python-adapter").join(name).display()
    )
}

/// Runs `asr-ctk fuzz` with a fixed seed and `extra` arguments; returns the exit code and
/// stdout.
fn fuzz(adapter: &str, role: &str, seed: u64, extra: &[&str], out: &Path) -> (Option<i32>, String) {
    let seed = seed.to_string();
    let out = out.to_string_lossy();
    let mut args = vec![
        "fuzz",
        "--adapter",
        adapter,
        "--role",
        role,
        "--seed",
        &seed,
        "--out",
        &out,
    ];
    args.extend(extra);
    let output = asr_ctk(&args);
    (
        output.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    )
}

/// Holds the report in `out` to what every campaign's report keeps to: every report file
/// written, the schema met, and the accounting's invariant: every iteration counted once,
/// as valid or under the one rule whose clause it broke (`iterations == valid + Σ broken`),
/// each rule's broken streams partitioned by clause, its exercised streams those answered,
/// and each found case listed under the rule it is charged to, and only there.
fn assert_campaign_report(out: &Path, iterations: u64) -> RunReport {
    for file in [
        "report.json",
        "report.md",
        "report.html",
        "junit.xml",
        "sarif.json",
        "badge.json",
    ] {
        assert!(out.join(file).is_file(), "{file} in {}", out.display());
    }
    assert_report_meets_its_schema(out);
    let report = report_in(out);
    let campaign = report.campaign.as_ref().expect("a campaign's report");
    assert_eq!(campaign.iterations, iterations);
    let broken: u64 = report
        .rules
        .iter()
        .map(|r| {
            r.fuzz
                .as_ref()
                .expect("every rule's campaign counts")
                .broken
        })
        .sum();
    assert_eq!(
        campaign.valid + broken,
        campaign.iterations,
        "each counted once"
    );
    assert_eq!(campaign.broken, broken);
    let mut listed: BTreeMap<&str, &str> = BTreeMap::new();
    for rule in &report.rules {
        let fuzz = rule.fuzz.as_ref().expect("counts");
        assert_eq!(
            fuzz.clauses.values().sum::<u64>(),
            fuzz.broken,
            "{}",
            rule.rule
        );
        assert_eq!(
            fuzz.exercised + fuzz.skipped,
            fuzz.broken + fuzz.valid,
            "{}",
            rule.rule
        );
        assert!(fuzz.valid <= campaign.valid, "{}", rule.rule);
        for name in &fuzz.found {
            assert!(
                listed.insert(name, &rule.rule).is_none(),
                "{name} listed twice"
            );
        }
        let charged: u64 = fuzz.disagreements.values().sum();
        assert!(charged >= fuzz.found.len() as u64, "{}", rule.rule);
        if charged > 0 {
            assert!(
                matches!(
                    rule.verdict,
                    RuleVerdict::NonConformant | RuleVerdict::NonStrict
                ),
                "{}: {:?}",
                rule.rule,
                rule.verdict
            );
        } else if fuzz.exercised == 0 {
            assert!(
                matches!(
                    rule.verdict,
                    RuleVerdict::Untested | RuleVerdict::NotApplicable
                ),
                "{}",
                rule.rule
            );
        }
    }
    for case in &report.cases {
        let charged_to = case.attributions.first().and_then(|a| a.rule.as_deref());
        match charged_to {
            Some(rule) => assert_eq!(listed.get(case.name.as_str()), Some(&rule), "{}", case.name),
            None => assert!(
                listed.contains_key(case.name.as_str())
                    || campaign.unattributed_found.contains(&case.name),
                "{}",
                case.name
            ),
        }
        let sidecar = out.join("found").join(format!("{}.json", case.name));
        assert!(sidecar.is_file(), "{}", sidecar.display());
    }
    assert_eq!(
        listed.len() + campaign.unattributed_found.len(),
        report.cases.len(),
        "every found case is a case of the report, and listed"
    );
    report
}

fn verdict(report: &RunReport, rule: &str) -> RuleVerdict {
    report
        .rules
        .iter()
        .find(|r| r.rule == rule)
        .map_or_else(|| panic!("no row for {rule}"), |r| r.verdict)
}

/// The per-rule counts and verdicts, the cases found left out (each part keeps its own).
fn counts(report: &Value) -> Value {
    let mut rules = report["rules"].clone();
    for rule in rules.as_array_mut().expect("rules") {
        rule["fuzz"]
            .as_object_mut()
            .expect("counts")
            .remove("found");
        for drop in [
            "cases",
            "passed",
            "failed",
            "lenient",
            "overStrict",
            "byRole",
        ] {
            rule.as_object_mut().expect("a rule").remove(drop);
        }
    }
    let mut campaign = report["campaign"].clone();
    campaign.as_object_mut().expect("campaign").remove("repeat");
    serde_json::json!({ "rules": rules, "campaign": campaign })
}

#[test]
fn a_validator_campaign_against_the_reference_is_conformant_and_repeats() {
    let out = scratch("campaign-reference");
    let (code, text) = fuzz("reference", "validator", 5, &["--iterations", "60"], &out);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("reports: "), "{text}");
    let report = assert_campaign_report(&out, 60);
    let campaign = report.campaign.as_ref().expect("a campaign");
    assert_eq!(
        (campaign.valid, campaign.broken),
        (30, 30),
        "every other stream broken"
    );
    assert_eq!(campaign.disagreed, 0);
    assert!(report.cases.is_empty());
    assert!(report.rules.iter().all(|r| matches!(
        r.verdict,
        RuleVerdict::Conformant | RuleVerdict::Untested | RuleVerdict::NotApplicable
    )));
    assert_eq!(
        verdict(&report, "ASR-215"),
        RuleVerdict::NotApplicable,
        "a reader's rule"
    );
    assert!(
        report
            .rules
            .iter()
            .filter(|r| r.verdict == RuleVerdict::Conformant)
            .count()
            >= 10
    );
    // The report says how to repeat the campaign, and the command does: the same counts.
    assert_eq!(campaign.repeat.len(), 1);
    let repeat = &campaign.repeat[0];
    assert!(
        repeat.contains("--seed 5 --first 0 --iterations 60"),
        "{repeat}"
    );
    let markdown = std::fs::read_to_string(out.join("report.md")).expect("markdown");
    assert!(markdown.contains(repeat.as_str()), "the command is shown");
    assert!(
        markdown.contains("| Exercised | Broken | Valid |"),
        "{markdown}"
    );
    let first = counts(&report_json_in(&out));
    let argv = shell_words::split(repeat).expect("a command line");
    assert_eq!(argv[0], "asr-ctk");
    let output = asr_ctk(&argv[1..]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(counts(&report_json_in(&out)), first, "the campaign repeats");
    let badge = std::fs::read_to_string(out.join("badge.json")).expect("a badge");
    assert!(badge.contains("rules"), "{badge}");
}

#[test]
fn a_broken_validator_campaign_lists_each_found_case_under_its_rule() {
    let out = scratch("campaign-broken");
    let (code, text) = fuzz(
        &example("adapter_broken.py"),
        "validator",
        1,
        &["--iterations", "150"],
        &out,
    );
    assert_eq!(code, Some(1), "{text}");
    let report = assert_campaign_report(&out, 150);
    for rule in ["ASR-212", "ASR-234"] {
        assert_eq!(verdict(&report, rule), RuleVerdict::NonConformant, "{rule}");
        let row = report.rules.iter().find(|r| r.rule == rule).expect("a row");
        let fuzz = row.fuzz.as_ref().expect("counts");
        assert!(
            fuzz.disagreements.get("lenient").is_some_and(|n| *n > 0),
            "{fuzz:?}"
        );
        assert_eq!(fuzz.found.len(), 1, "--keep 1: {fuzz:?}");
        assert!(fuzz.found[0].starts_with(&format!("{rule}/n_fuzz_lenient_1_")));
    }
    let others: Vec<&str> = report
        .rules
        .iter()
        .filter(|r| r.verdict == RuleVerdict::NonConformant)
        .map(|r| r.rule.as_str())
        .collect();
    assert_eq!(others, ["ASR-212", "ASR-234"], "only the two broken rules");
    let campaign = report.campaign.as_ref().expect("a campaign");
    assert!(campaign.skipped > 0, "it skips the rules it does not claim");
    assert!(
        campaign
            .disagreements
            .get("lenient")
            .is_some_and(|n| *n >= 2)
    );
    // The found cases are the report's failures, with their streams, in every format.
    let html = std::fs::read_to_string(out.join("report.html")).expect("html");
    let markdown = std::fs::read_to_string(out.join("report.md")).expect("markdown");
    let junit = std::fs::read_to_string(out.join("junit.xml")).expect("junit");
    let sarif = std::fs::read_to_string(out.join("sarif.json")).expect("sarif");
    for case in &report.cases {
        assert!(
            markdown.contains(&format!("`{}`", case.name)),
            "{}",
            case.name
        );
        assert!(html.contains(&format!("{}.jsonl", case.name)), "its stream");
        assert!(junit.contains(&case.name), "{}", case.name);
        assert!(
            sarif.contains(&format!("{}.jsonl", case.name)),
            "{}",
            case.name
        );
    }
    assert!(
        junit.contains("name=\"repeat\""),
        "the command as a property"
    );
}

#[test]
fn a_reader_campaign_counts_every_stream_as_valid_and_charges_readings() {
    let out = scratch("campaign-reader-reference");
    let (code, text) = fuzz("reference", "reader", 2, &["--iterations", "30"], &out);
    assert_eq!(code, Some(0), "{text}");
    let report = assert_campaign_report(&out, 30);
    let campaign = report.campaign.as_ref().expect("a campaign");
    assert_eq!(
        (campaign.valid, campaign.broken),
        (30, 0),
        "a reader is given valid streams"
    );
    assert_eq!(
        verdict(&report, "ASR-406"),
        RuleVerdict::Conformant,
        "every stream's lineage"
    );
    assert_eq!(
        verdict(&report, "ASR-200"),
        RuleVerdict::NotApplicable,
        "a validator's rule"
    );

    let out = scratch("campaign-reader-wrong");
    let adapter = format!(
        "python3 {}/copies_as_original.py {BIN}",
        readers().display()
    );
    let (code, text) = fuzz(&adapter, "reader", 1, &["--iterations", "60"], &out);
    assert_eq!(code, Some(1), "{text}");
    let report = assert_campaign_report(&out, 60);
    assert_eq!(verdict(&report, "ASR-416"), RuleVerdict::NonConformant);
    let row = report
        .rules
        .iter()
        .find(|r| r.rule == "ASR-416")
        .expect("a row");
    let fuzz = row.fuzz.as_ref().expect("counts");
    assert!(
        fuzz.disagreements.get("reading").is_some_and(|n| *n > 0),
        "{fuzz:?}"
    );
    assert!(
        fuzz.exercised > 0,
        "the copies it misread are streams that exercise it"
    );
    assert!(!fuzz.found.is_empty());
}

#[test]
fn the_parts_of_a_campaign_merge_into_the_whole_and_other_campaigns_are_refused() {
    let dir = scratch("campaign-merge");
    let adapter = example("adapter_broken.py");
    let whole = dir.join("whole");
    let (code, text) = fuzz(&adapter, "validator", 1, &["--iterations", "120"], &whole);
    assert_eq!(code, Some(1), "{text}");
    let first = dir.join("first");
    let (_, text) = fuzz(&adapter, "validator", 1, &["--iterations", "50"], &first);
    assert!(text.contains("fuzz: 50 streams"), "{text}");
    // The second machine's part, in two jobs: which job takes an iteration does not matter.
    let second = dir.join("second");
    let (_, text) = fuzz(
        &adapter,
        "validator",
        1,
        &["--first", "50", "--iterations", "70", "--jobs", "2"],
        &second,
    );
    assert!(text.contains("fuzz: 70 streams"), "{text}");
    assert_campaign_report(&second, 70);
    let merged = dir.join("merged");
    let output = asr_ctk(&[
        "report",
        "merge",
        &first.join("report.json").to_string_lossy(),
        &second.join("report.json").to_string_lossy(),
        "--out",
        &merged.to_string_lossy(),
    ]);
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "disagreements found: {said}");
    assert_report_meets_its_schema(&merged);
    assert_eq!(
        counts(&report_json_in(&merged)),
        counts(&report_json_in(&whole)),
        "the parts add up to the whole"
    );
    let joined = report_in(&merged);
    let campaign = joined.campaign.as_ref().expect("a campaign");
    assert_eq!(
        campaign.ranges.len(),
        1,
        "0 to 119, one range: {:?}",
        campaign.ranges
    );
    assert!(
        campaign.repeat[0].contains("--first 0 --iterations 120"),
        "{:?}",
        campaign.repeat
    );
    let found = |r: &RunReport| -> Vec<String> { r.cases.iter().map(|c| c.name.clone()).collect() };
    let mut parts = found(&report_in(&first));
    parts.extend(found(&report_in(&second)));
    parts.sort();
    assert_eq!(found(&joined), parts, "the cases of both parts");
    for case in &parts {
        let copied = merged.join("found").join(format!("{case}.json"));
        assert!(
            copied.is_file(),
            "joined in OUT/found/: {}",
            copied.display()
        );
    }
    assert_eq!(
        Path::new(&joined.corpus.path),
        merged.join("found"),
        "the joined report's corpus is where its cases are"
    );

    let refused = |reports: &[&Path], why: &str| {
        let mut args = vec!["report".to_owned(), "merge".to_owned()];
        args.extend(
            reports
                .iter()
                .map(|r| r.join("report.json").to_string_lossy().into_owned()),
        );
        args.extend([
            "--out".to_owned(),
            dir.join("refused").to_string_lossy().into_owned(),
        ]);
        let output = asr_ctk(&args);
        let said = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{why}: {said}");
        assert!(said.contains(why), "{why}: {said}");
    };
    refused(&[&first, &whole], "both ran iteration 0");
    let other_seed = dir.join("seed-2");
    fuzz(
        &adapter,
        "validator",
        2,
        &["--first", "200", "--iterations", "5"],
        &other_seed,
    );
    refused(&[&first, &other_seed], "seed 1 and 2");
    let reader = dir.join("reader");
    fuzz(
        "reference",
        "reader",
        1,
        &["--first", "300", "--iterations", "5"],
        &reader,
    );
    refused(&[&first, &reader], "role validator and reader");
    let reference = dir.join("reference");
    fuzz(
        "reference",
        "validator",
        1,
        &["--first", "400", "--iterations", "5"],
        &reference,
    );
    refused(&[&first, &reference], "adapter");
    let run = dir.join("run");
    run_212(&run);
    refused(&[&first, &run], "is not the report of a fuzz campaign");
    refused(&[&run, &first], "is a fuzz campaign's");
}
