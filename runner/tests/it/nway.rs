//! `asr-ctk diff` with more than two implementations: each difference by rule and pointer,
//! with the implementations that side with each answer; one that gives no answer leaves the
//! case to the others.

use crate::helpers::{BIN, adapters, asr_ctk, readers, report_in, scratch};
use asr_suite::conformance::Outcome;
use std::path::Path;

const HEADER: &str = r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"codex"},"sessionId":"s1"}"#;

/// The reference's own adapter, given as a command: an implementation that reads as the
/// reference does, under a name of its own in the comparison.
fn faithful() -> String {
    format!("{BIN} adapter reference")
}

fn python_example(name: &str) -> String {
    format!(
        "python3 {}/../examples/python-adapter/{name}.py",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn write(dir: &Path, name: &str, lines: &[&str]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").expect("a stream");
    path.to_string_lossy().into_owned()
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The lines that say a difference (indented under their rule).
fn difference_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.starts_with("  "))
        .map(str::trim)
        .collect()
}

#[test]
fn three_readers_side_two_against_one_on_the_member_one_reads_wrong() {
    let place = scratch("nway-readers");
    let stream = write(
        &place,
        "copied.jsonl",
        &[
            r#"{"type":"session","seq":0,"id":"h","agent":{"name":"codex"},"sessionId":"s1","lineage":{"inherits":{"mode":"none","evidence":"native_field"}}}"#,
            r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[],"copiedFrom":{"session":"codex:p","record":"x","proof":"native_id"}}"#,
            r#"{"type":"message","seq":2,"id":"r2","messageId":"m2","role":"user","content":[{"type":"text","text":"a"}]}"#,
        ],
    );
    // Its one mistake: a copied record read as original work, and so credited to the session.
    let wrong = format!(
        "python3 {}/copies_as_original.py {BIN}",
        readers().display()
    );
    let out = place.join("out");
    let output = asr_ctk(&[
        "diff",
        "--role",
        "reader",
        "--adapter",
        "reference",
        "--adapter",
        &faithful(),
        "--adapter",
        &wrong,
        "--out",
        &out.to_string_lossy(),
        &stream,
    ]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    let ours = "[1 asr-ctk-reference, 2 asr-ctk-reference]";
    let theirs = "[3 wrong-copies_as_original]";
    assert_eq!(
        difference_lines(&text),
        [
            format!("copied.jsonl /records/r1/originality: {ours} \"copy\"; {theirs} \"original\"")
                .replace("copied.jsonl", &stream),
            format!("copied.jsonl /totals/ownRecords/r1: {ours} false; {theirs} true")
                .replace("copied.jsonl", &stream),
        ],
        "{text}"
    );
    assert!(text.contains("ASR-416: 1 disagreement(s)"), "{text}");
    assert!(text.contains("ASR-417: 1 disagreement(s)"), "{text}");
    let report = report_in(&out);
    let others: Vec<&str> = report
        .adapter
        .others
        .iter()
        .filter_map(|o| o.implementation.as_ref().map(|i| i.name.as_str()))
        .collect();
    assert_eq!(others, ["wrong-copies_as_original"]);
    let rules: Vec<Option<&str>> = report.cases[0]
        .attributions
        .iter()
        .map(|a| a.rule.as_deref())
        .collect();
    assert_eq!(rules, [Some("ASR-416"), Some("ASR-417")]);
    crate::helpers::assert_report_meets_its_schema(&out);
    let html = std::fs::read_to_string(out.join("report.html")).expect("the HTML report");
    assert!(html.matches(" versus ").count() >= 2, "{html}");
    // Three that read alike: nothing to say, and a success.
    let same = asr_ctk(&[
        "diff",
        "--role",
        "reader",
        "--adapter",
        "reference",
        "--adapter",
        &faithful(),
        "--adapter",
        "reference",
        "--out",
        &place.join("same").to_string_lossy(),
        &stream,
    ]);
    assert_eq!(same.status.code(), Some(0), "{}", stdout(&same));
    assert!(difference_lines(&stdout(&same)).is_empty());
}

#[test]
fn three_validators_side_two_against_one_on_the_finding_one_misses() {
    let place = scratch("nway-validators");
    let stream = write(
        &place,
        "image.jsonl",
        &[
            HEADER,
            r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[{"type":"image","data":"AA==","blob":{"blob":"sha256:0f"},"mimeType":"image/png"}]}"#,
        ],
    );
    let out = place.join("out");
    // The broken example never reports an image with both data and a blob (ASR-212); it
    // is given second, so the sides are {1, 3} against {2}.
    let output = asr_ctk(&[
        "diff",
        "--role",
        "validator",
        "--adapter",
        "reference",
        "--adapter",
        &python_example("adapter_broken"),
        "--adapter",
        &faithful(),
        "--out",
        &out.to_string_lossy(),
        &stream,
    ]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    let ours = "[1 asr-ctk-reference, 3 asr-ctk-reference]";
    let theirs = "[2 asr-ctk-python-example-broken]";
    assert_eq!(
        difference_lines(&text),
        [
            format!("{stream} /valid: {ours} false; {theirs} true"),
            format!(
                "{stream} /findings/line 2: {ours} \"error ASR-212\"; {theirs} \"no such finding\""
            ),
        ],
        "{text}"
    );
    assert!(text.contains("ASR-212: 1 disagreement(s)"), "{text}");
    let report = report_in(&out);
    assert_eq!(report.adapter.others.len(), 1);
    let charged: Vec<Option<&str>> = report.cases[0]
        .attributions
        .iter()
        .map(|a| a.rule.as_deref())
        .collect();
    assert_eq!(charged, [None, Some("ASR-212")]);
    crate::helpers::assert_report_meets_its_schema(&out);
}

#[test]
fn a_fault_of_one_of_three_leaves_the_case_to_the_other_two() {
    let place = scratch("nway-fault");
    let valid = |name: &str| write(&place, name, &[HEADER]);
    let (first, second) = (valid("a.jsonl"), valid("b.jsonl"));
    let image = write(
        &place,
        "c.jsonl",
        &[
            HEADER,
            r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[{"type":"image","data":"AA==","blob":{"blob":"sha256:0f"},"mimeType":"image/png"}]}"#,
        ],
    );
    // It answers two cases, then exits on the third.
    let midway = format!("python3 {}/exits_midway.py", adapters().display());
    let out = place.join("out");
    let output = asr_ctk(&[
        "diff",
        "--role",
        "validator",
        "--adapter",
        "reference",
        "--adapter",
        &python_example("adapter_broken"),
        "--adapter",
        &midway,
        "--out",
        &out.to_string_lossy(),
        &first,
        &second,
        &image,
    ]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    // The third case is still compared between the first two, who differ on it.
    assert!(
        difference_lines(&text).contains(&format!(
            "{image} /findings/line 2: [1 asr-ctk-reference] \"error ASR-212\"; [2 asr-ctk-python-example-broken] \"no such finding\""
        ).as_str()),
        "{text}"
    );
    assert!(
        text.lines().any(
            |l| l.starts_with("not compared for [3 fault-exits_midway]: ") && l.contains(&image)
        ),
        "{text}"
    );
    assert!(
        text.contains("on 3 stream(s) compared; 0 not compared"),
        "{text}"
    );
    let report = report_in(&out);
    let outcomes: Vec<_> = report.cases.iter().map(|c| c.outcome).collect();
    assert_eq!(outcomes, [Outcome::Pass, Outcome::Pass, Outcome::Fail]);
}

#[test]
fn fuzz_of_two_without_the_reference_shrinks_a_difference_between_them() {
    let place = scratch("nway-fuzz");
    let out = place.join("out");
    let output = asr_ctk(&[
        "fuzz",
        "--adapter",
        &faithful(),
        "--adapter",
        &python_example("adapter_broken"),
        "--iterations",
        "60",
        "--out",
        &out.to_string_lossy(),
    ]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("ASR-212: lenient (among them)"), "{text}");
    let dir = out.join("found/ASR-212");
    let sidecars: Vec<_> = std::fs::read_dir(&dir)
        .expect("a case found under ASR-212")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(sidecars.len(), 1, "{sidecars:?}");
    let sidecar: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sidecars[0]).expect("the sidecar"))
            .expect("JSON");
    let description = sidecar["description"].as_str().expect("a description");
    assert!(
        description.contains("[1 asr-ctk-reference]")
            && description.contains("[2 asr-ctk-python-example-broken]"),
        "{description}"
    );
    // What the reference says of the shrunk stream: broken under the rule.
    assert_eq!(sidecar["expect"]["validator"]["valid"], false);
    assert!(
        sidecar["expect"]["validator"]["violations"]
            .as_array()
            .is_some_and(|v| v.iter().any(|v| v["rule"] == "ASR-212")),
        "{sidecar}"
    );
    let stream = sidecars[0].with_extension("jsonl");
    let lines = std::fs::read_to_string(&stream)
        .expect("the stream")
        .lines()
        .count();
    // Shrunk to the header and the record that breaks the rule.
    assert!(lines <= 3, "{lines} lines in {}", stream.display());
    let report = crate::helpers::report_json_in(&out);
    let row = report["rules"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["rule"] == "ASR-212"))
        .expect("a row of ASR-212");
    assert_eq!(row["verdict"], "non-conformant", "{row}");
    assert!(
        row["fuzz"]["found"]
            .as_array()
            .is_some_and(|f| f.len() == 1),
        "{row}"
    );
    assert!(report["adapter"]["versus"].is_object(), "{report}");
    crate::helpers::assert_report_meets_its_schema(&out);
    // Two that agree: no case is found.
    let same = asr_ctk(&[
        "fuzz",
        "--adapter",
        &faithful(),
        "--adapter",
        &faithful(),
        "--iterations",
        "30",
        "--out",
        &place.join("same").to_string_lossy(),
    ]);
    assert_eq!(same.status.code(), Some(0), "{}", stdout(&same));
    assert!(!place.join("same/found/ASR-212").exists());
}

#[test]
fn a_producer_is_fuzzed_alone() {
    let place = scratch("nway-fuzz-producer");
    let output = asr_ctk(&[
        "fuzz",
        "--role",
        "producer",
        "--adapter",
        "./a",
        "--adapter",
        "./b",
        "--out",
        &place.to_string_lossy(),
    ]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("give --adapter once"));
}

#[test]
fn fuzz_with_the_reference_among_several_judges_each_other_one_by_it() {
    let place = scratch("nway-fuzz-oracle");
    let out = place.join("out");
    let output = asr_ctk(&[
        "fuzz",
        "--adapter",
        &faithful(),
        "--adapter",
        "reference",
        "--adapter",
        &python_example("adapter_broken"),
        "--iterations",
        "60",
        "--out",
        &out.to_string_lossy(),
    ]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    // Charged to the third, by its number; the faithful first one is never charged.
    assert!(
        text.contains("ASR-212: lenient (3 asr-ctk-python-example-broken)"),
        "{text}"
    );
    assert!(!text.contains("(1 asr-ctk-reference)"), "{text}");
    let names: Vec<String> = std::fs::read_dir(out.join("found/ASR-212"))
        .expect("a case found under ASR-212")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert!(
        !names.is_empty() && names.iter().all(|n| n.starts_with("n_fuzz_3_lenient_")),
        "{names:?}"
    );
}
