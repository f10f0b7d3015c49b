//! The `asr-ctk` command as users run it: exit statuses, output formats, bad arguments.

use crate::helpers::{BIN, Kit, Scratch, asr_ctk, corpus, scratch};
use asr_suite::catalog::Catalog;
use asr_suite::report::FileReport;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const HEADER: &str = r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"codex"},"sessionId":"019a3c2e"}"#;
const MESSAGE: &str = r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[{"type":"text","text":"Fix the failing parser test."}]}"#;
const IMAGE_BOTH: &str = r#"{"type":"message","seq":2,"id":"r2","messageId":"m2","role":"user","content":[{"type":"image","mimeType":"image/png","data":"AA==","blob":{"blob":"sha256:0f"}}]}"#;

fn dir(name: &str) -> Scratch {
    scratch(&format!("cli-{name}"))
}

fn file(dir: &Path, name: &str, lines: &[&str]) -> String {
    let path = dir.join(name);
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(&path, text).expect("write stream");
    path.to_string_lossy().into_owned()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_valid_stream_exits_0_and_says_valid() {
    let d = dir("valid");
    let path = file(&d, "ok.jsonl", &[HEADER, MESSAGE]);
    let output = asr_ctk(&["validate", &path]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        stdout(&output).contains(&format!("{path}: valid, 2 records")),
        "{}",
        stdout(&output)
    );
}

#[test]
fn an_invalid_stream_exits_1_with_compiler_like_lines() {
    let d = dir("invalid");
    let path = file(&d, "bad.jsonl", &[HEADER, MESSAGE, IMAGE_BOTH]);
    let output = asr_ctk(&["validate", &path]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.contains(&format!("{path}:3: error[ASR-212] at /content/0: ")),
        "{text}"
    );
    assert!(text.contains("ASR-212 requires:"), "{text}");
    assert!(text.contains("invalid"), "{text}");
}

#[test]
fn a_control_character_the_stream_holds_is_escaped_in_what_validate_prints() {
    let d = dir("controls");
    // U+009B starts a control sequence on a terminal; U+001B is ESC.
    let path = file(
        &d,
        "c1.jsonl",
        &[
            HEADER,
            r#"{"type":"subagent","seq":1,"id":"r1","childSession":"codex:a\u009b2Jb\u001b[31m"}"#,
        ],
    );
    let output = asr_ctk(&["validate", &path]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    assert!(text.contains("error[ASR-411]"), "{text}");
    assert!(text.contains("\\u{9b}2Jb"), "{text}");
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "a raw control character: {text:?}"
    );
}

#[test]
fn json_output_is_one_report_per_file_matching_its_schema() {
    let d = dir("json");
    let good = file(&d, "a.jsonl", &[HEADER, MESSAGE]);
    let bad = file(&d, "b.jsonl", &[HEADER, MESSAGE, IMAGE_BOTH]);
    let output = asr_ctk(&["validate", "--format", "json", &good, &bad]);
    assert_eq!(output.status.code(), Some(1));
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../../schemas/validation.schema.json"))
            .expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    for line in &lines {
        let value: serde_json::Value = serde_json::from_str(line).expect("each line is JSON");
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
    }
    let first: FileReport = serde_json::from_str(lines[0]).expect("a report");
    let second: FileReport = serde_json::from_str(lines[1]).expect("a report");
    assert!(first.valid && first.diagnostics.is_empty() && first.records == 2);
    assert!(!second.valid);
    assert_eq!(second.counts.asr.error, 1);
    let d = &second.diagnostics[0];
    assert_eq!(
        (
            d.rule.as_str(),
            d.line,
            d.seq,
            d.id.as_deref(),
            d.pointer.as_str()
        ),
        ("ASR-212", 3, Some(2), Some("r2"), "/content/0")
    );
}

fn sarif_errors(log: &serde_json::Value) -> Vec<String> {
    let schema: serde_json::Value = serde_json::from_str(include_str!(
        "../../../schemas/external/sarif-2.1.0.schema.json"
    ))
    .expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    validator.iter_errors(log).map(|e| e.to_string()).collect()
}

#[test]
fn sarif_output_is_one_log_for_every_file_checked() {
    let d = dir("sarif");
    let good = file(&d, "a.jsonl", &[HEADER, MESSAGE]);
    let bad = file(&d, "b.jsonl", &[HEADER, MESSAGE, IMAGE_BOTH]);
    let output = asr_ctk(&["validate", "--format", "sarif", &good, &bad]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let log: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("one JSON document");
    let errors = sarif_errors(&log);
    assert!(errors.is_empty(), "{errors:?}");
    let runs = log["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["tool"]["driver"]["name"], "asr-ctk");
    assert_eq!(runs[0]["artifacts"].as_array().map(Vec::len), Some(2));
    let results = runs[0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["ruleId"], "ASR-212");
    let physical = &results[0]["locations"][0]["physicalLocation"];
    assert_eq!(
        physical["artifactLocation"]["uri"],
        format!("file://{bad}").as_str()
    );
    assert_eq!(physical["region"]["startLine"], 3);
    assert_eq!(results[0]["properties"]["pointer"], "/content/0");

    let output = Kit::new(&["validate", "--format", "sarif", "-"])
        .input(&format!("{HEADER}\n{MESSAGE}\n"))
        .output();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let log: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("one JSON document");
    assert!(sarif_errors(&log).is_empty());
    assert_eq!(log["runs"][0]["results"], serde_json::json!([]));
}

#[test]
fn the_schema_refuses_a_report_with_a_renamed_member() {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../../schemas/validation.schema.json"))
            .expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let renamed = serde_json::json!({"file": "f", "valid": true, "count": 1, "diagnostics": [],
        "counts": {"asr": {"error": 0, "warning": 0, "notice": 0}, "inferred": {"error": 0, "warning": 0, "notice": 0}}});
    assert!(!validator.is_valid(&renamed));
}

#[test]
fn standard_input_is_read_for_a_dash() {
    let output = Kit::new(&["validate", "--format", "json", "-"])
        .input(&format!("{HEADER}\n{IMAGE_BOTH}\n"))
        .output();
    assert_eq!(output.status.code(), Some(1));
    let report: FileReport = serde_json::from_str(stdout(&output).trim()).expect("a report");
    assert_eq!(report.file, "-");
    assert_eq!(report.diagnostics[0].rule, "ASR-212");
}

#[test]
fn unreadable_files_and_bad_arguments_exit_2() {
    let missing = asr_ctk(&["validate", "/nonexistent/asr-ctk/stream.jsonl"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("failed to open"));
    assert_eq!(asr_ctk(&["validate"]).status.code(), Some(2));
    assert_eq!(
        asr_ctk(&["validate", "--format", "xml", "-"]).status.code(),
        Some(2)
    );
    let unknown = Kit::new(&["validate", "--disable", "ASR-999", "-"])
        .input(HEADER)
        .output();
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("ASR-999"));
    assert_eq!(asr_ctk(&["frobnicate"]).status.code(), Some(2));
}

#[test]
fn inferred_checks_can_be_switched_off_or_disabled_one_by_one() {
    let garbage = format!("{HEADER}\nnot json\n");
    assert_eq!(
        Kit::new(&["validate", "-"])
            .input(&garbage)
            .output()
            .status
            .code(),
        Some(1)
    );
    assert_eq!(
        Kit::new(&["validate", "--no-inferred", "-"])
            .input(&garbage)
            .output()
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        Kit::new(&["validate", "--disable", "ASR-X-003", "-"])
            .input(&garbage)
            .output()
            .status
            .code(),
        Some(0)
    );
    let bad = format!("{HEADER}\n{IMAGE_BOTH}\n");
    assert_eq!(
        Kit::new(&["validate", "--no-inferred", "-"])
            .input(&bad)
            .output()
            .status
            .code(),
        Some(1)
    );
}

#[test]
fn a_directory_stands_for_its_streams_and_related_streams_resolve_each_other() {
    let d = dir("related");
    let parent = r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"claude-code"},"sessionId":"0f3c2a7e"}"#;
    let announce = r#"{"type":"subagent","seq":1,"id":"r1","childSession":"claude-code:a7c41e09","callId":"toolu_01Z"}"#;
    let child = r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"claude-code"},"sessionId":"a7c41e09","lineage":{"spawnedBy":{"session":"claude-code:0f3c2a7e","record":"callId=toolu_02Q","evidence":"native_field"}}}"#;
    file(&d, "parent.jsonl", &[parent, announce]);
    file(&d, "child.jsonl", &[child]);
    std::fs::write(d.join("notes.txt"), "not a stream").expect("write");
    let output = asr_ctk(&[
        "validate",
        "--format",
        "json",
        d.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let reports: Vec<FileReport> = stdout(&output)
        .lines()
        .map(|l| serde_json::from_str(l).expect("report"))
        .collect();
    assert_eq!(reports.len(), 2);
    let all: Vec<(&str, &str)> = reports
        .iter()
        .flat_map(|r| {
            r.diagnostics
                .iter()
                .map(move |d| (r.file.as_str(), d.rule.as_str()))
        })
        .collect();
    // The two streams name each other: no ASR-406 notice; the calls disagree: one ASR-412 warning on the child.
    assert!(all.iter().all(|(_, rule)| *rule != "ASR-406"), "{all:?}");
    let warnings: Vec<_> = all.iter().filter(|(_, rule)| *rule == "ASR-412").collect();
    assert_eq!(warnings.len(), 1, "{all:?}");
    assert!(warnings[0].0.ends_with("child.jsonl"));
    // Checked independently, the notices stay and no ASR-412 finding is made.
    let independent = asr_ctk(&[
        "validate",
        "--independent",
        "--format",
        "json",
        d.to_str().expect("utf-8 path"),
    ]);
    let rules: Vec<String> = stdout(&independent)
        .lines()
        .flat_map(|l| {
            serde_json::from_str::<FileReport>(l)
                .expect("report")
                .diagnostics
        })
        .map(|d| d.rule.to_string())
        .collect();
    assert_eq!(rules, ["ASR-406", "ASR-406"]);
    // Alone, the child names a parent that is not there: a notice, still valid.
    let alone = asr_ctk(&[
        "validate",
        "--format",
        "json",
        &d.join("child.jsonl").to_string_lossy(),
    ]);
    let report: FileReport = serde_json::from_str(stdout(&alone).trim()).expect("report");
    assert_eq!(
        report
            .diagnostics
            .iter()
            .map(|d| d.rule.as_str())
            .collect::<Vec<_>>(),
        ["ASR-406"]
    );
    assert!(report.valid);
}

#[test]
fn rules_lists_the_catalog_in_both_formats() {
    let output = asr_ctk(&["rules"]);
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(text.contains("ASR-212") && text.contains("ASR-427") && text.contains("ASR-X-003"));
    assert!(text.contains("ASR-506"), "cited rules are listed");
    let json = asr_ctk(&["rules", "--format", "json"]);
    let value: serde_json::Value = serde_json::from_str(stdout(&json).trim()).expect("JSON");
    let catalog: Catalog = serde_json::from_value(value["catalog"].clone()).expect("the catalog");
    for rule in Catalog::embedded().stream_rules() {
        let counts = &value["cases"][&rule.id];
        assert!(
            counts["positive"].as_u64() >= Some(2) && counts["negative"].as_u64() >= Some(2),
            "{}: {counts}",
            rule.id
        );
    }
    assert_eq!(catalog.rules.len(), Catalog::embedded().rules.len());
    assert_eq!(catalog.inferred.len(), Catalog::embedded().inferred.len());
}

/// Through the command, as a user runs it: every case's streams reported as its sidecar
/// says, rule, line and pointer, and the exit status follows the verdict.
#[test]
fn validate_reports_the_rules_every_case_expects() {
    let root = corpus();
    let cases = asr_suite::case::load_corpus(&root).expect("the corpus loads");
    assert!(cases.len() > 100, "the corpus has {} cases", cases.len());
    let mut checked_rules = std::collections::BTreeSet::new();
    for case in &cases {
        let Some(expect) = &case.sidecar.expect.validator else {
            continue;
        };
        let paths: Vec<String> = case
            .streams
            .iter()
            .map(|(_, p)| p.to_string_lossy().into_owned())
            .collect();
        let mut args = vec!["validate", "--format", "json"];
        args.extend(paths.iter().map(String::as_str));
        let output = asr_ctk(&args);
        let expected_code = i32::from(!expect.valid);
        assert_eq!(
            output.status.code(),
            Some(expected_code),
            "{}: {output:?}",
            case.name
        );
        let reports: Vec<FileReport> = stdout(&output)
            .lines()
            .map(|l| serde_json::from_str(l).expect("report"))
            .collect();
        let mut actual: Vec<(Option<String>, String, usize, String)> = Vec::new();
        for (report, (part, _)) in reports.iter().zip(&case.streams) {
            for d in &report.diagnostics {
                if d.rule == "ASR-406" && d.severity == asr_suite::diagnostic::Severity::Notice {
                    continue;
                }
                let part = (!part.is_empty()).then(|| part.clone());
                actual.push((part, d.rule.to_string(), d.line, d.pointer.clone()));
            }
        }
        let mut expected: Vec<_> = expect
            .violations
            .iter()
            .map(|v| (v.file.clone(), v.rule.clone(), v.line, v.pointer.clone()))
            .collect();
        actual.sort();
        expected.sort();
        assert_eq!(actual, expected, "{}", case.name);
        if case.verdict() == Some(asr_suite::case::Verdict::Reject) {
            checked_rules.extend(expect.violations.iter().map(|v| v.rule.clone()));
        }
    }
    let stream_rules: Vec<_> = Catalog::embedded()
        .stream_rules()
        .map(|r| r.id.clone())
        .collect();
    let missing: Vec<_> = stream_rules
        .iter()
        .filter(|r| !checked_rules.contains(*r))
        .collect();
    assert!(
        missing.is_empty(),
        "stream rules with no single-fault case reported: {missing:?}"
    );
}

fn spec_copy(name: &str, edit: impl Fn(&str, String) -> String) -> Scratch {
    let d = dir(name);
    let spec = corpus().join("spec");
    for file in ["asr-messages.txt", "asr-lineage.txt"] {
        let text = std::fs::read_to_string(spec.join(file)).expect("spec text");
        std::fs::write(d.join(file), edit(file, text)).expect("write copy");
    }
    d
}

#[test]
fn spec_check_agrees_with_the_spec_in_hand() {
    let d = spec_copy("spec-same", |_, text| text);
    let output = asr_ctk(&["spec", "check", "--spec", d.to_str().expect("utf-8")]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stated = Catalog::embedded().rules.len();
    assert!(
        stdout(&output).contains(&format!("{stated} rule statements")),
        "{}",
        stdout(&output)
    );
}

#[test]
fn spec_check_names_a_reworded_rule_and_the_cases_to_reconfirm() {
    let d = spec_copy("spec-reworded", |file, text| {
        if file == "asr-messages.txt" {
            let edited = text.replace(
                "ASR-231 An opaque part MUST contain format",
                "ASR-231 An opaque part MUST contain a format",
            );
            assert_ne!(edited, text);
            edited
        } else {
            text
        }
    });
    let output = asr_ctk(&[
        "spec",
        "check",
        "--spec",
        d.to_str().expect("utf-8"),
        "--format",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let outcome: serde_json::Value = serde_json::from_str(stdout(&output).trim()).expect("JSON");
    assert_eq!(outcome["agrees"], false);
    assert_eq!(outcome["changed"][0]["rule"], "ASR-231");
    let reconfirm = outcome["changed"][0]["reconfirm"]
        .as_array()
        .expect("cases");
    assert!(reconfirm.len() >= 4, "{reconfirm:?}");
    // Every case to reconfirm names the rule, wherever it stands.
    assert!(
        reconfirm.iter().all(|c| c.as_str().is_some_and(|name| {
            let sidecar = std::fs::read_to_string(corpus().join(format!("{name}.json")))
                .expect("the sidecar of a case to reconfirm");
            let sidecar: serde_json::Value = serde_json::from_str(&sidecar).expect("JSON");
            sidecar["rules"]
                .as_array()
                .is_some_and(|rules| rules.iter().any(|r| r == "ASR-231"))
        })),
        "{reconfirm:?}"
    );
    assert!(outcome["new"].as_array().is_some_and(Vec::is_empty));
    let human = asr_ctk(&["spec", "check", "--spec", d.to_str().expect("utf-8")]);
    assert_eq!(human.status.code(), Some(1));
    assert!(stdout(&human).contains("changed rules") && stdout(&human).contains("ASR-231"));
}

/// A MUST turned SHOULD is named with the keywords on each side, in both formats.
#[test]
fn spec_check_names_the_keywords_that_changed() {
    let d = spec_copy("spec-keywords", |file, text| {
        if file == "asr-messages.txt" {
            let edited = text.replace(
                "ASR-231 An opaque part MUST contain format",
                "ASR-231 An opaque part SHOULD contain format",
            );
            assert_ne!(edited, text);
            edited
        } else {
            text
        }
    });
    let spec = d.to_str().expect("utf-8");
    let human = asr_ctk(&["spec", "check", "--spec", spec]);
    assert_eq!(human.status.code(), Some(1));
    assert!(
        stdout(&human).contains("  ASR-231: MUST, MUST NOT -> MUST NOT, SHOULD"),
        "{}",
        stdout(&human)
    );
    let json = asr_ctk(&["spec", "check", "--spec", spec, "--format", "json"]);
    let outcome: serde_json::Value = serde_json::from_str(stdout(&json).trim()).expect("JSON");
    assert_eq!(
        outcome["levelChanges"][0],
        serde_json::json!({"rule": "ASR-231", "catalog": "MUST, MUST NOT", "spec": "MUST NOT, SHOULD"})
    );
}

#[test]
fn spec_check_names_an_added_and_a_removed_rule() {
    let d = spec_copy("spec-added-removed", |file, text| {
        if file == "asr-lineage.txt" {
            let removed = text.replace("ASR-427 A copied run", "A copied run");
            format!("{removed}\nSessions end\n\nASR-428 A stream MUST end with its last record.\n")
        } else {
            text
        }
    });
    let output = asr_ctk(&[
        "spec",
        "check",
        "--spec",
        d.to_str().expect("utf-8"),
        "--format",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let outcome: serde_json::Value = serde_json::from_str(stdout(&output).trim()).expect("JSON");
    assert_eq!(outcome["new"][0]["rule"], "ASR-428");
    assert_eq!(outcome["new"][0]["file"], "asr-lineage.txt");
    assert_eq!(outcome["gone"][0]["rule"], "ASR-427");
    assert!(
        outcome["gone"][0]["orphaned"]
            .as_array()
            .is_some_and(|c| !c.is_empty())
    );
}

#[test]
fn spec_check_refuses_a_directory_without_spec_text() {
    let d = dir("spec-empty");
    let output = asr_ctk(&["spec", "check", "--spec", d.to_str().expect("utf-8")]);
    assert_eq!(output.status.code(), Some(2));
    let missing = asr_ctk(&["spec", "check", "--spec", "/nonexistent/spec"]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn cases_are_listed_by_rule_verdict_and_name() {
    let output = asr_ctk(&[
        "cases",
        "--rule",
        "ASR-212",
        "--verdict",
        "reject",
        "--format",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let names: Vec<String> = stdout(&output)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("JSON")["name"]
                .as_str()
                .expect("name")
                .to_owned()
        })
        .collect();
    assert!(names.len() >= 2, "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| n.contains("/n_") && n.contains("ASR-212")),
        "{names:?}"
    );
    let glob = asr_ctk(&["cases", "--case", "lineage/ASR-41?/y_*"]);
    let text = stdout(&glob);
    assert!(
        text.lines().count() > 2
            && text
                .lines()
                .filter(|l| l.starts_with('c'))
                .all(|l| l.contains("lineage/ASR-41")),
        "{text}"
    );
    let none = asr_ctk(&["cases", "--rule", "ASR-999"]);
    assert!(stdout(&none).contains("0 of"));
    assert_eq!(
        none.status.code(),
        Some(1),
        "a filter that matches nothing fails"
    );
    assert_eq!(
        asr_ctk(&["cases", "--case", "[unclosed"]).status.code(),
        Some(2)
    );
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let mut child = Command::new(BIN)
        .args(["rules"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("ends");
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The binary copied away from the source tree, as `cargo install` leaves it: every
/// subcommand works with the corpus and schemas it carries.
#[test]
fn the_binary_works_away_from_the_source_tree() {
    let place = dir("installed");
    let home = place.join("home");
    std::fs::create_dir_all(&home).expect("home");
    let binary = place.join("asr-ctk");
    std::fs::copy(BIN, &binary).expect("copied");
    let stream = file(&place, "s.jsonl", &[HEADER, MESSAGE]);
    let spec = corpus().join("spec");
    let out = place.join("out");
    let out = out.to_string_lossy();
    let run = |args: &[&str]| {
        // A copy just written can be busy for a moment: another test's child, forked while it
        // was open for writing, holds it until that child execs.
        let mut tries = 0;
        let output = loop {
            match Command::new(&binary)
                .args(args)
                .current_dir(&place)
                .env("HOME", &home)
                .env_remove("XDG_CACHE_HOME")
                .stdin(Stdio::null())
                .output()
            {
                Ok(output) => break output,
                Err(e) if tries < 50 => {
                    tries += 1;
                    assert_eq!(
                        e.raw_os_error(),
                        Some(26),
                        "only ETXTBSY is waited out: {e}"
                    );
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Err(e) => panic!("the copy does not run: {e}"),
            }
        };
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let cases = "messages/ASR-212/*";
    for (args, want) in [
        (vec!["rules"], 0),
        (vec!["cases", "--rule", "ASR-212"], 0),
        (vec!["run", "--quiet", "--case", cases, "--out", &out], 0),
        (
            vec![
                "run",
                "--quiet",
                "--oneshot",
                "--case",
                cases,
                "--out",
                &out,
            ],
            0,
        ),
        (
            vec![
                "diff",
                "--role",
                "validator",
                "--adapter",
                "reference",
                "--adapter",
                "reference",
                "--case",
                cases,
                "--out",
                &out,
            ],
            0,
        ),
        (vec!["validate", &stream], 0),
        (vec!["read", &stream], 0),
        (vec!["spec", "check", "--spec", &spec.to_string_lossy()], 0),
    ] {
        let (code, stderr) = run(&args);
        assert_eq!(code, Some(want), "{args:?}: {stderr}");
    }
    assert!(
        home.join(".cache/asr-ctk").is_dir(),
        "the corpus was unpacked into the user's cache"
    );
    // A corpus given that is not one says how to give another.
    let (code, stderr) = run(&["cases", "--cases", "/nonexistent-corpus"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("--cases"), "{stderr}");
}

#[test]
fn read_says_why_it_refuses_and_its_line_limit_can_be_raised() {
    let place = dir("read-limit");
    let long = format!(
        r#"{{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[{{"type":"text","text":"{}"}}]}}"#,
        "a".repeat(5000)
    );
    let stream = file(&place, "long.jsonl", &[HEADER, &long]);
    let refused = asr_ctk(&["read", "--compact", "--max-line-bytes", "1000", &stream]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(&format!("{stream}: line 2:")) && stderr.contains("--max-line-bytes"),
        "{stderr}"
    );
    let answer: serde_json::Value =
        serde_json::from_slice(&refused.stdout).expect("one JSON object");
    assert_eq!(answer["accepted"], false);
    assert!(
        answer["reasons"][0]
            .as_str()
            .is_some_and(|r| r.starts_with("line 2:")),
        "{answer}"
    );
    let raised = asr_ctk(&["read", "--compact", "--max-line-bytes", "10000", &stream]);
    assert_eq!(raised.status.code(), Some(0));
    let answer: serde_json::Value =
        serde_json::from_slice(&raised.stdout).expect("one JSON object");
    assert_eq!(answer["accepted"], true);
    assert!(answer.get("reasons").is_none());
    assert_eq!(
        answer["reading"]["records"]["r1"]["parts"][0]["index"][0]
            .as_str()
            .map(str::len),
        Some(5000)
    );
    // Standard input is read twice too (through a temporary file).
    let piped = Kit::new(&["read", "--compact", "-"])
        .input(&format!("{HEADER}\n{MESSAGE}\n"))
        .output();
    assert_eq!(piped.status.code(), Some(0), "{piped:?}");
    let answer: serde_json::Value = serde_json::from_slice(&piped.stdout).expect("json");
    assert_eq!(answer["file"], "-");
    assert_eq!(answer["reading"]["records"]["r1"]["type"], "message");
}

#[test]
fn a_run_that_can_run_nothing_exits_with_the_harness_status_not_the_failure_status() {
    let out = scratch("run-nothing");
    let out_text = out.to_string_lossy().into_owned();
    let none = asr_ctk(&["run", "--quiet", "--rule", "ASR-999", "--out", &out_text]);
    assert_eq!(none.status.code(), Some(3), "{none:?}");
    assert!(String::from_utf8_lossy(&none.stderr).contains("no case matches"));
    let missing = out.join("no-such-corpus");
    let missing_text = missing.to_string_lossy().into_owned();
    let broken = asr_ctk(&[
        "run",
        "--quiet",
        "--cases",
        &missing_text,
        "--out",
        &out_text,
    ]);
    assert_eq!(broken.status.code(), Some(3), "{broken:?}");
    assert!(String::from_utf8_lossy(&broken.stderr).contains("the corpus did not load"));
}

/// One corpus, one count: `cases` lists the source fixtures as the producer's cases, and
/// counts the corpus as `run` does.
#[test]
fn cases_counts_the_corpus_as_run_does() {
    let fixtures = std::fs::read_dir(corpus().join("sources"))
        .expect("sources")
        .flatten()
        .filter(|f| f.path().is_dir())
        .flat_map(|f| std::fs::read_dir(f.path()).expect("a format").flatten())
        .filter(|d| d.path().join("fixture.json").is_file())
        .count();
    assert!(fixtures > 10, "{fixtures}");
    let listed = asr_ctk(&["cases", "--role", "producer"]);
    let text = String::from_utf8_lossy(&listed.stdout);
    assert_eq!(listed.status.code(), Some(0), "{text}");
    let last = text.lines().last().unwrap_or("");
    let (shown, total) = last
        .strip_suffix(" cases")
        .and_then(|l| l.split_once(" of "))
        .map(|(a, b)| {
            (
                a.parse::<usize>().expect("n"),
                b.parse::<usize>().expect("n"),
            )
        })
        .expect("N of M cases");
    assert_eq!(shown, fixtures, "{text}");
    let out = dir("cases-count");
    let run = crate::helpers::run_212(&out);
    assert_eq!(run.status.code(), Some(0));
    let report: asr_suite::conformance::RunReport = crate::helpers::report_in(&out);
    assert_eq!(report.corpus_cases, total);
}

/// A JSON document spread over lines (pretty-printed, or an array of records) is told apart
/// from a broken line: its findings say what a stream is.
#[test]
fn a_pretty_printed_document_is_told_it_is_no_json_lines() {
    let place = dir("pretty");
    let pretty = file(
        &place,
        "pretty.jsonl",
        &["[", r#"  {"type": "session", "seq": 0},"#, "  {}", "]"],
    );
    let output = asr_ctk(&["validate", &pretty]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.lines()
            .next()
            .is_some_and(|l| l.contains("an ASR stream is JSON Lines")),
        "{text}"
    );
    let broken = file(&place, "broken.jsonl", &[HEADER, r#"{"type":"message"}}"#]);
    let output = asr_ctk(&["validate", &broken]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("not valid JSON"), "{text}");
    assert!(!text.contains("JSON Lines"), "{text}");
}

/// README.md and the pages of docs/, as one text.
fn documentation() -> String {
    let root = crate::helpers::root();
    let mut text = std::fs::read_to_string(root.join("README.md")).expect("README");
    let mut pages: Vec<_> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    for page in pages {
        text.push_str(&std::fs::read_to_string(page).expect("a page"));
    }
    text
}

/// Every count README.md, docs/ and fuzz/README.md quote is the count of what is there now.
#[test]
fn the_counts_the_readmes_quote_are_true() {
    let readme = documentation();
    let fuzz_readme =
        std::fs::read_to_string(crate::helpers::root().join("fuzz/README.md")).expect("README");
    let word = |w: &str| -> usize {
        let words = [
            "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        ];
        words
            .iter()
            .position(|x| *x == w)
            .or_else(|| w.parse().ok())
            .unwrap_or_else(|| panic!("{w} is no count"))
    };
    // The word or number just before `after` in `text`, where `after` is quoted once.
    let quoted = |text: &str, after: &str| -> usize {
        let at = text
            .find(after)
            .unwrap_or_else(|| panic!("the README no longer says {after:?}"));
        let before = text[..at].trim_end();
        word(before.rsplit(char::is_whitespace).next().unwrap_or(""))
    };
    let targets = std::fs::read_dir(crate::helpers::root().join("fuzz/fuzz_targets"))
        .expect("fuzz targets")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .map(|e| {
            e.path()
                .file_stem()
                .expect("a name")
                .to_string_lossy()
                .into_owned()
        })
        .collect::<std::collections::BTreeSet<_>>();
    assert_eq!(
        quoted(&readme, "cargo-fuzz targets for the kit"),
        targets.len()
    );
    assert_eq!(
        quoted(&fuzz_readme, ", with the address sanitizer"),
        targets.len()
    );
    // fuzz/README's table lists each target once.
    let listed: std::collections::BTreeSet<String> = fuzz_readme
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .filter(|name| targets.contains(*name))
        .map(str::to_owned)
        .collect();
    assert_eq!(listed, targets);
    let catalog = Catalog::embedded();
    assert_eq!(
        quoted(&readme, "rules stated in the normative spec"),
        catalog.rules.len()
    );
    let from_source = catalog
        .rules
        .iter()
        .filter(|r| r.checks.contains(&asr_suite::catalog::CheckKind::Source))
        .count();
    assert_eq!(
        quoted(&readme, "rules bind what a producer writes"),
        from_source
    );
    let wrong =
        std::fs::read_to_string(crate::helpers::root().join("suite/tests/it/wrong_readings.rs"))
            .expect("wrong readings");
    let misreadings = wrong
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            l.split_once(" => [")
                .is_some_and(|(knob, _)| knob.chars().all(char::is_alphanumeric))
        })
        .count();
    assert_eq!(quoted(&readme, "plausible misreadings"), misreadings);
}

/// The README's first screen says what the kit is, gives the two commands, and links to a
/// page for each kind of user; every relative link in the README and the pages resolves.
#[test]
fn the_readme_is_one_screen_and_every_link_resolves() {
    let root = crate::helpers::root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README");
    assert!(
        readme.lines().count() <= 60,
        "{} lines",
        readme.lines().count()
    );
    for command in [
        "cargo run --release -p asr-ctk -- run",
        "cargo test --workspace",
    ] {
        assert!(readme.contains(command), "{command}");
    }
    let ci = std::fs::read_to_string(root.join(".ci/run")).expect(".ci/run");
    assert!(
        ci.lines().any(|l| l.trim() == "cargo test --workspace"),
        "{ci}"
    );
    for page in ["certify", "producers", "readers", "fuzzing", "reference"] {
        assert!(readme.contains(&format!("(docs/{page}.md)")), "{page}");
    }
    let mut pages = vec![root.join("README.md"), root.join("PROTOCOL.md")];
    pages.extend(
        std::fs::read_dir(root.join("docs"))
            .expect("docs/")
            .flatten()
            .map(|e| e.path()),
    );
    for page in pages {
        let text = std::fs::read_to_string(&page).expect("a page");
        let dir = page.parent().expect("a directory");
        for link in text.split("](").skip(1) {
            let target = link.split(')').next().unwrap_or("");
            let target = target.split('#').next().unwrap_or("");
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            assert!(
                dir.join(target).exists(),
                "{}: a link to {target} that is not there",
                page.display()
            );
        }
    }
}

#[test]
fn run_asks_whether_a_repository_root_was_meant_for_its_corpus() {
    let out = dir("run-mistakes");
    let out_text = out.join("reports").to_string_lossy().into_owned();
    let root = crate::helpers::root();
    let root_text = root.to_string_lossy().into_owned();
    let checkout = asr_ctk(&["run", "--quiet", "--cases", &root_text, "--out", &out_text]);
    let said = String::from_utf8_lossy(&checkout.stderr);
    assert_eq!(checkout.status.code(), Some(3), "{checkout:?}");
    assert!(
        said.contains(&format!("did you mean {}?", root.join("cases").display())),
        "{said}"
    );
}

#[test]
fn run_says_an_adapter_that_is_a_directory_is_no_program() {
    let out = dir("run-directory-adapter");
    let out_text = out.join("reports").to_string_lossy().into_owned();
    let adapter = out.join("an adapter");
    std::fs::create_dir_all(&adapter).expect("mkdir");
    let line = shell_words::quote(&adapter.to_string_lossy()).into_owned();
    let started = asr_ctk(&[
        "run",
        "--quiet",
        "--case",
        "messages/ASR-212/*",
        "--adapter",
        &line,
        "--out",
        &out_text,
    ]);
    let said = String::from_utf8_lossy(&started.stderr);
    assert_eq!(started.status.code(), Some(3), "{started:?}");
    assert!(said.contains("is a directory, not a program"), "{said}");
    assert!(!said.contains("Permission denied"), "{said}");
}

#[test]
fn run_with_the_adapter_reference_runs_the_kits_own_implementation() {
    let out = dir("run-reference");
    let out_text = out.to_string_lossy().into_owned();
    let run = asr_ctk(&[
        "run",
        "--quiet",
        "--adapter",
        "reference",
        "--case",
        "messages/ASR-212/*",
        "--out",
        &out_text,
    ]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let report = crate::helpers::report_in(&out);
    assert_eq!(
        report.adapter.command[1..3],
        ["adapter".to_owned(), "reference".to_owned()]
    );
    assert!(report.adapter.implementation.is_some());
}
