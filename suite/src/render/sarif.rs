//! SARIF 2.1.0 logs, for code-scanning tools: the findings of `asr-ctk validate`, and the
//! failing cases of a conformance run.
//!
//! Each log has one run, whose tool is `asr-ctk` with every rule of the catalog and every
//! inferred check, each with its summary, levels and the kit's notes. The tests check both
//! logs against the OASIS schema, `schemas/external/sarif-2.1.0.schema.json`.

use super::View;
use crate::catalog::{Catalog, Inferred, Level, Rule};
use crate::conformance::{CaseResult, Outcome, RunReport};
use crate::diagnostic::{Diagnostic, Severity};
use crate::report::FileReport;
use chrono::DateTime;
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The stream files of each case, by case name, relative to the corpus directory.
pub type StreamFiles = BTreeMap<String, Vec<String>>;

/// The `$schema` of every log: SARIF 2.1.0 with its errata.
pub const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The base of the stream files' addresses in a run's log: the corpus directory of the run.
pub const CORPUS: &str = "CORPUS";

/// The log of `asr-ctk validate`: every file checked is an artifact, every finding a result at
/// its line, with the JSON Pointer, seq and record id in the result's property bag.
pub fn validation(files: &[FileReport]) -> Value {
    let artifacts: Vec<Value> = files
        .iter()
        .map(|f| json!({ "location": artifact_location(&f.file) }))
        .collect();
    let results: Vec<Value> = files
        .iter()
        .enumerate()
        .flat_map(|(index, f)| {
            f.diagnostics
                .iter()
                .map(move |d| finding(&f.file, index, d))
        })
        .collect();
    log(json!({
        "tool": tool(env!("CARGO_PKG_VERSION")),
        "artifacts": artifacts,
        "results": results,
    }))
}

/// The log of a conformance run: every case that failed in any way is a result under its first
/// rule, at its stream files (relative to the corpus, when `streams` knows them).
pub fn conformance(report: &RunReport, streams: &StreamFiles) -> Value {
    let view = View::of(report);
    let mut invocation = json!({ "executionSuccessful": view.incomplete.is_none() });
    if let Some(why) = view.incomplete {
        invocation["toolExecutionNotifications"] =
            json!([{ "level": "error", "message": { "text": why } }]);
    }
    if DateTime::parse_from_rfc3339(&report.started_at).is_ok() {
        invocation["startTimeUtc"] = json!(report.started_at);
    }
    let results: Vec<Value> = view
        .failures
        .iter()
        .map(|case| failing_case(case, streams))
        .collect();
    log(json!({
        "tool": tool(&report.kit_version),
        "invocations": [invocation],
        "originalUriBaseIds": { CORPUS: corpus_base(&report.corpus.path) },
        "results": results,
        "properties": {
            "implementation": view.title,
            "caseSet": report.case_set,
            // Whether the corpus was the kit's own, verified: a certification says so.
            "corpus": report.corpus,
        },
    }))
}

/// The corpus directory as a base for the stream files' addresses: a `file:` URI ending in
/// `/` (SARIF requires it) when the path is absolute, as the kit records it.
fn corpus_base(path: &str) -> Value {
    let mut base = json!({ "description": { "text": "The corpus directory of the run." } });
    let absolute = std::path::Path::new(path);
    let absolute = if absolute.is_absolute() {
        Some(absolute.to_path_buf())
    } else {
        std::path::absolute(absolute).ok()
    };
    if let Some(dir) = absolute.as_deref().and_then(std::path::Path::to_str) {
        let dir = dir.trim_end_matches('/');
        base["uri"] = json!(format!("file://{}/", utf8_percent_encode(dir, PATH)));
    }
    base
}

fn log(run: Value) -> Value {
    let mut log = json!({ "$schema": SCHEMA, "version": "2.1.0" });
    log["runs"] = Value::Array(vec![run]);
    log
}

fn tool(version: &str) -> Value {
    let catalog = Catalog::embedded();
    let rules: Vec<Value> = catalog
        .rules
        .iter()
        .map(stated_rule)
        .chain(catalog.inferred.iter().map(inferred_check))
        .collect();
    json!({ "driver": { "name": "asr-ctk", "version": version, "rules": rules } })
}

fn stated_rule(rule: &Rule) -> Value {
    let list = |items: Vec<&str>| {
        if items.is_empty() {
            "none (descriptive)".to_owned()
        } else {
            items.join(", ")
        }
    };
    let mut help = format!(
        "{}\n\nLevels: {}. Binds: {}. Checked through: {}. Section: {} ({}).",
        rule.summary,
        list(rule.levels.iter().map(|l| l.as_str()).collect()),
        list(rule.roles.iter().map(|r| r.as_str()).collect()),
        list(rule.checks.iter().map(|c| c.as_str()).collect()),
        rule.section,
        rule.file
    );
    if let Some(notes) = &rule.notes {
        help.push_str("\n\n");
        help.push_str(notes);
    }
    json!({
        "id": rule.id,
        "shortDescription": { "text": rule.summary },
        "help": { "text": help },
        "defaultConfiguration": { "level": rule_level(&rule.levels) },
    })
}

fn inferred_check(check: &Inferred) -> Value {
    json!({
        "id": check.id,
        "shortDescription": { "text": check.summary },
        "help": { "text": format!(
            "{}\n\nAn inferred check ({}): structure the examples imply but no rule in hand states. \
             Basis: {}",
            check.summary, check.severity, check.basis
        ) },
        "defaultConfiguration": { "level": level(check.severity) },
        "properties": { "tags": ["inferred"] },
    })
}

/// A rule's weight: a MUST (or a statement without keyword, which binds like one) is an
/// error, a SHOULD a warning, a MAY a note.
fn rule_level(levels: &[Level]) -> &'static str {
    if levels.is_empty()
        || levels
            .iter()
            .any(|l| matches!(l, Level::Must | Level::MustNot))
    {
        "error"
    } else if levels
        .iter()
        .any(|l| matches!(l, Level::Should | Level::ShouldNot))
    {
        "warning"
    } else {
        "note"
    }
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Notice => "note",
    }
}

fn finding(file: &str, index: usize, d: &Diagnostic) -> Value {
    let mut location = artifact_location(file);
    location["index"] = json!(index);
    let mut physical = json!({ "artifactLocation": location });
    if d.line >= 1 {
        physical["region"] = json!({ "startLine": d.line });
    }
    let mut properties = json!({ "pointer": d.pointer });
    if let Some(seq) = d.seq {
        properties["seq"] = json!(seq);
    }
    if let Some(id) = &d.id {
        properties["id"] = json!(id);
    }
    json!({
        "ruleId": d.rule,
        "level": level(d.severity),
        "message": { "text": d.message },
        "locations": [{ "physicalLocation": physical }],
        "properties": properties,
    })
}

fn failing_case(case: &CaseResult, streams: &StreamFiles) -> Value {
    let catalog = Catalog::embedded();
    // The rule that failed, when the failure was charged to one; else the case's own.
    let rule = case
        .attributions
        .iter()
        .find_map(|a| a.rule.as_ref())
        .or(case.rules.first());
    let weight = rule
        .and_then(|id| catalog.rule(id).map(|r| rule_level(&r.levels)))
        .or_else(|| rule.and_then(|id| catalog.inferred(id).map(|x| level(x.severity))))
        .unwrap_or("error");
    let message = case.detail.clone().unwrap_or_else(|| match case.outcome {
        Outcome::Fail => "the answer differs from the expectation".to_owned(),
        other => other.as_str().to_owned(),
    });
    let files = streams.get(&case.name).map_or(&[][..], Vec::as_slice);
    let locations: Vec<Value> = files
        .iter()
        .flat_map(|path| {
            let artifact = json!({
                "uri": utf8_percent_encode(path, PATH).to_string(),
                "uriBaseId": CORPUS,
            });
            let mut lines: Vec<usize> = case
                .places
                .iter()
                .filter(|place| place.line >= 1 && in_file(place.part.as_deref(), path, files))
                .map(|place| place.line)
                .collect();
            lines.sort_unstable();
            lines.dedup();
            if lines.is_empty() {
                return vec![json!({ "physicalLocation": { "artifactLocation": artifact } })];
            }
            lines
                .into_iter()
                .map(|line| {
                    json!({ "physicalLocation": {
                        "artifactLocation": artifact,
                        "region": { "startLine": line },
                    } })
                })
                .collect()
        })
        .collect();
    let mut result = json!({
        "level": if case.outcome == Outcome::NonStrict || super::known_failure(case).is_some() { "note" } else { weight },
        "message": { "text": message },
        "properties": {
            "case": case.name,
            "id": case.id,
            "role": case.role.as_str(),
            "outcome": case.outcome.as_str(),
            "rules": case.rules,
            "charged": case.attributions,
        },
    });
    if let Some(rule) = rule {
        result["ruleId"] = json!(rule);
    }
    if !locations.is_empty() {
        result["locations"] = json!(locations);
    }
    result
}

/// Whether a place on the stream `part` is in the stream file `path` of a case whose stream
/// files are `files`: a case of one stream has no part names; of several, each file is
/// `<name>.<part>.jsonl` (as the corpus names them).
fn in_file(part: Option<&str>, path: &str, files: &[String]) -> bool {
    match part {
        None => files.len() == 1,
        Some(part) => path.ends_with(&format!(".{part}.jsonl")),
    }
}

/// What a path may not hold as it is in a URI path: a colon too, so that a relative path is
/// never read as a scheme.
const PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b':')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// Where a checked file is: a relative path stays relative (to the working directory), an
/// absolute one is a `file:` URI, standard input has no address.
fn artifact_location(file: &str) -> Value {
    if file == "-" {
        return json!({ "description": { "text": "standard input" } });
    }
    let path = utf8_percent_encode(file, PATH).to_string();
    if file.starts_with('/') {
        json!({ "uri": format!("file://{path}") })
    } else {
        json!({ "uri": path })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{CheckOptions, check_bytes};
    use crate::render::fixture::report;

    const HEADER: &str = r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"codex"},"sessionId":"s1"}"#;
    const BOTH: &str = r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[{"type":"image","data":"AA==","blob":{"blob":"sha256:0f"},"mimeType":"image/png"}]}"#;

    fn schema() -> jsonschema::Validator {
        let schema: Value = serde_json::from_str(include_str!(
            "../../../schemas/external/sarif-2.1.0.schema.json"
        ))
        .expect("schema is JSON");
        jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .expect("schema compiles")
    }

    fn assert_valid(log: &Value) {
        let errors: Vec<String> = schema()
            .iter_errors(log)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:?}\n{log:#}");
    }

    fn file(name: &str, lines: &[&str]) -> FileReport {
        let text = lines.join("\n") + "\n";
        FileReport::new(name, check_bytes(text.as_bytes(), &CheckOptions::default()))
    }

    #[test]
    fn findings_are_results_at_their_file_and_line() {
        let files = [
            file("logs/a b.jsonl", &[HEADER]),
            file("/tmp/x:y.jsonl", &[HEADER, BOTH]),
            file("-", &[HEADER, BOTH]),
        ];
        let log = validation(&files);
        assert_valid(&log);
        assert_eq!(log["$schema"], SCHEMA);
        assert_eq!(log["version"], "2.1.0");
        let run = &log["runs"][0];
        assert_eq!(run["tool"]["driver"]["name"], "asr-ctk");
        assert_eq!(run["tool"]["driver"]["version"], env!("CARGO_PKG_VERSION"));
        assert!(run["tool"]["driver"].get("informationUri").is_none());
        assert_eq!(
            run["artifacts"],
            json!([
                { "location": { "uri": "logs/a%20b.jsonl" } },
                { "location": { "uri": "file:///tmp/x%3Ay.jsonl" } },
                { "location": { "description": { "text": "standard input" } } },
            ])
        );
        let results = run["results"].as_array().expect("results");
        assert_eq!(results.len(), 2, "{results:#?}");
        let first = &results[0];
        assert_eq!(first["ruleId"], "ASR-212");
        assert_eq!(first["level"], "error");
        assert!(
            first["message"]["text"]
                .as_str()
                .is_some_and(|m| !m.contains("ASR-212 requires") && !m.is_empty()),
            "{first}"
        );
        let physical = &first["locations"][0]["physicalLocation"];
        assert_eq!(
            physical["artifactLocation"],
            json!({ "uri": "file:///tmp/x%3Ay.jsonl", "index": 1 })
        );
        assert_eq!(physical["region"], json!({ "startLine": 2 }));
        assert_eq!(
            first["properties"],
            json!({ "pointer": "/content/0", "seq": 1, "id": "r1" })
        );
        assert_eq!(
            results[1]["locations"][0]["physicalLocation"]["artifactLocation"],
            json!({ "description": { "text": "standard input" }, "index": 2 })
        );
    }

    #[test]
    fn severities_are_levels() {
        let mut files = [file("a.jsonl", &[HEADER, BOTH])];
        let template = files[0].diagnostics[0].clone();
        files[0].diagnostics = [Severity::Error, Severity::Warning, Severity::Notice]
            .into_iter()
            .map(|severity| Diagnostic {
                severity,
                ..template.clone()
            })
            .collect();
        let log = validation(&files);
        assert_valid(&log);
        let levels: Vec<&Value> = log["runs"][0]["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|r| &r["level"])
            .collect();
        assert_eq!(levels, ["error", "warning", "note"]);
    }

    #[test]
    fn the_rules_are_the_catalog_with_summaries_levels_and_notes() {
        let log = validation(&[]);
        assert_valid(&log);
        let rules = log["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .expect("rules")
            .clone();
        let catalog = Catalog::embedded();
        assert_eq!(rules.len(), catalog.rules.len() + catalog.inferred.len());
        let by_id: BTreeMap<&str, &Value> = rules
            .iter()
            .map(|r| (r["id"].as_str().expect("id"), r))
            .collect();
        let stated = catalog.rule("ASR-200").expect("ASR-200");
        let rule = by_id["ASR-200"];
        assert_eq!(rule["shortDescription"]["text"], stated.summary.as_str());
        let help = rule["help"]["text"].as_str().expect("help");
        assert!(help.starts_with(&stated.summary), "{help}");
        assert!(
            help.contains("Levels: MUST. Binds: producer, validator."),
            "{help}"
        );
        assert!(help.contains("ASR-X-017"), "the notes: {help}");
        assert_eq!(rule["defaultConfiguration"]["level"], "error");
        assert!(
            by_id["ASR-201"]["help"]["text"]
                .as_str()
                .is_some_and(|h| h.contains("Levels: none (descriptive).")),
        );
        assert_eq!(
            by_id["ASR-X-001"]["properties"]["tags"],
            json!(["inferred"])
        );
        assert_eq!(rule_level(&[Level::Should, Level::May]), "warning");
        assert_eq!(rule_level(&[Level::May]), "note");
        assert_eq!(rule_level(&[Level::May, Level::MustNot]), "error");
    }

    #[test]
    fn the_schema_refuses_what_sarif_does_not_allow() {
        let mut log = validation(&[file("a.jsonl", &[HEADER, BOTH])]);
        assert_valid(&log);
        log["runs"][0]["results"][0]["level"] = json!("fatal");
        assert!(!schema().is_valid(&log), "an unknown level");
        let mut log = validation(&[]);
        log["runs"][0]["tool"]["driver"]["nickname"] = json!("x");
        assert!(!schema().is_valid(&log), "an unknown member");
    }

    #[test]
    fn a_failure_at_a_line_is_a_region_and_the_corpus_is_a_file_uri() {
        use crate::conformance::{Failure, Place};
        let mut report = report();
        report.corpus.path = "/home/a user/cache/corpus#1".into();
        let place = |line, part: Option<&str>| Place {
            rule: "ASR-231".into(),
            kind: Failure::Lenient,
            line,
            part: part.map(str::to_owned),
        };
        report.cases[1].places = vec![place(3, None), place(2, None), place(3, None)];
        report.cases[4].places = vec![place(5, Some("child"))];
        let streams = fixture_streams();
        let log = conformance(&report, &streams);
        assert_valid(&log);
        let run = &log["runs"][0];
        assert_eq!(
            run["originalUriBaseIds"]["CORPUS"]["uri"],
            "file:///home/a%20user/cache/corpus%231/"
        );
        assert_eq!(
            run["properties"]["corpus"],
            json!({"origin": "kit", "path": "/home/a user/cache/corpus#1", "verified": true})
        );
        let regions = |result: &Value| -> Vec<(String, Value)> {
            result["locations"]
                .as_array()
                .expect("locations")
                .iter()
                .map(|l| {
                    let physical = &l["physicalLocation"];
                    (
                        physical["artifactLocation"]["uri"]
                            .as_str()
                            .expect("uri")
                            .to_owned(),
                        physical["region"]["startLine"].clone(),
                    )
                })
                .collect()
        };
        let results = run["results"].as_array().expect("results");
        assert_eq!(
            regions(&results[0]),
            [
                ("messages/ASR-231/n_bad_role.jsonl".to_owned(), json!(2)),
                ("messages/ASR-231/n_bad_role.jsonl".to_owned(), json!(3)),
            ]
        );
        assert_eq!(
            regions(&results[2]),
            [
                (
                    "lineage/ASR-412/n_mismatch.child.jsonl".to_owned(),
                    json!(5)
                ),
                (
                    "lineage/ASR-412/n_mismatch.parent.jsonl".to_owned(),
                    Value::Null
                ),
            ],
            "the line is on its own stream only"
        );
    }

    /// The stream files of the fixture report's failing cases, one of them a family.
    fn fixture_streams() -> StreamFiles {
        [
            (
                "messages/ASR-231/n_bad_role".to_owned(),
                vec!["messages/ASR-231/n_bad_role.jsonl".to_owned()],
            ),
            (
                "lineage/ASR-412/n_mismatch".to_owned(),
                vec![
                    "lineage/ASR-412/n_mismatch.child.jsonl".to_owned(),
                    "lineage/ASR-412/n_mismatch.parent.jsonl".to_owned(),
                ],
            ),
        ]
        .into_iter()
        .collect()
    }

    #[test]
    fn failing_cases_are_results_at_their_stream_files() {
        let mut report = report();
        let streams = fixture_streams();
        let log = conformance(&report, &streams);
        assert_valid(&log);
        let run = &log["runs"][0];
        assert_eq!(run["tool"]["driver"]["version"], "0.1.0");
        assert_eq!(run["invocations"][0]["executionSuccessful"], true);
        assert_eq!(
            run["invocations"][0]["startTimeUtc"],
            "2026-11-29T13:04:05Z"
        );
        assert_eq!(run["properties"]["implementation"], "asr-go 1.2.3");
        let results = run["results"].as_array().expect("results");
        let rules: Vec<&Value> = results.iter().map(|r| &r["ruleId"]).collect();
        assert_eq!(
            rules,
            ["ASR-231", "ASR-217", "ASR-412"],
            "fail, timeout, protocol-error"
        );
        let fail = &results[0];
        assert_eq!(fail["level"], "error");
        // A failure charged to another rule than the case's is a result under that rule.
        report.cases[1].attributions = vec![crate::conformance::Attribution {
            rule: Some("ASR-228".into()),
            kind: crate::conformance::Failure::OverStrict,
            decision: None,
            warning: false,
        }];
        let charged = conformance(&report, &streams);
        assert_valid(&charged);
        let first = &charged["runs"][0]["results"][0];
        assert_eq!(first["ruleId"], "ASR-228", "{first}");
        assert_eq!(first["properties"]["charged"][0]["kind"], "over-strict");
        assert_eq!(
            fail["message"]["text"],
            "the stream must be rejected <script>alert(1)</script> & more"
        );
        assert_eq!(
            fail["locations"],
            json!([{ "physicalLocation": { "artifactLocation": {
                "uri": "messages/ASR-231/n_bad_role.jsonl", "uriBaseId": "CORPUS"
            } } }])
        );
        assert_eq!(fail["properties"]["outcome"], "fail");
        assert_eq!(fail["properties"]["role"], "validator");
        assert!(
            results[1].get("locations").is_none(),
            "no stream file known"
        );
        assert_eq!(results[1]["properties"]["outcome"], "timeout");
        assert_eq!(results[2]["locations"].as_array().map(Vec::len), Some(2));

        report.incomplete = Some("2 case(s) not run".into());
        report.started_at = "yesterday".into();
        let log = conformance(&report, &StreamFiles::new());
        assert_valid(&log);
        let invocation = &log["runs"][0]["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], false);
        assert_eq!(
            invocation["toolExecutionNotifications"][0]["message"]["text"],
            "2 case(s) not run"
        );
        assert!(invocation.get("startTimeUtc").is_none(), "not a time");
    }
}
