//! `asr-ctk report compare`: the matrix is each report's own verdicts, the disagreements
//! are the cases whose outcomes differ, reports of other case sets are compared on what they
//! share, a report that is no report is refused, and the history of one implementation
//! gives its regressions (exit 1) and fixes in the order the reports are given.

use crate::helpers::{asr_ctk, root, scratch};
use asr_suite::catalog::Catalog;
use asr_suite::conformance::RunReport;
use asr_suite::judge::Outcome;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The cases run: ASR-212 and ASR-234, which the broken example fails, and ASR-214 and
/// ASR-232, which it does not implement.
const CASES: &str = "messages/ASR-2[13][24]/*";

/// Runs `adapter` (the reference when `None`) as a validator on [`CASES`] into `out`.
pub fn run(out: &Path, adapter: Option<&str>) -> PathBuf {
    let out_text = out.to_string_lossy().into_owned();
    let mut args = vec!["run", "--quiet", "--role", "validator", "--case", CASES];
    if let Some(adapter) = adapter {
        args.extend(["--adapter", adapter]);
    }
    args.extend(["--out", &out_text]);
    let output = asr_ctk(&args);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{output:?}");
    out.to_path_buf()
}

pub fn broken() -> String {
    format!(
        "python3 {}",
        root()
            .join("examples/python-adapter/adapter_broken.py")
            .display()
    )
}

fn compare(args: &[&Path], extra: &[&str]) -> Output {
    let mut all: Vec<String> = vec!["report".into(), "compare".into()];
    all.extend(extra.iter().map(|s| (*s).to_owned()));
    all.extend(args.iter().map(|p| p.to_string_lossy().into_owned()));
    asr_ctk(&all)
}

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {output:?}"))
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("a report")).expect("JSON")
}

fn write(path: &Path, value: &Value) -> PathBuf {
    std::fs::write(path, serde_json::to_vec(value).expect("JSON")).expect("written");
    path.to_path_buf()
}

fn assert_meets_schema(value: &Value) {
    let schema: Value =
        serde_json::from_str(include_str!("../../../schemas/comparison.schema.json"))
            .expect("schema");
    let validator = jsonschema::validator_for(&schema).expect("compiles");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

fn str_of(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

#[test]
fn the_matrix_is_each_reports_verdicts_and_the_disagreements_their_outcomes() {
    let dir = scratch("compare");
    let reference = run(&dir.join("reference"), None);
    let broken = run(&dir.join("broken"), Some(&broken()));
    // Directories, and a file: both name a report.
    let output = compare(
        &[&reference, &broken.join("report.json")],
        &["--format", "json"],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let comparison = json_of(&output);
    assert_meets_schema(&comparison);
    let reports = [reference.join("report.json"), broken.join("report.json")].map(|p| read(&p));
    // Every cell is the verdict its report gives the rule for the role.
    let matrix = comparison["matrix"].as_array().expect("a matrix");
    let mut tested = 0;
    for row in matrix {
        let id = str_of(&row["rule"]);
        for (report, cell) in reports.iter().zip(row["cells"].as_array().expect("cells")) {
            let written = report["rules"]
                .as_array()
                .and_then(|rows| rows.iter().find(|r| r["rule"] == id))
                .expect("the rule's row");
            let verdict = match row.get("role") {
                Some(role) => &written["byRole"][str_of(role)]["verdict"],
                None => &written["verdict"],
            };
            assert_eq!(cell.get("verdict").unwrap_or(&Value::Null), verdict, "{id}");
            tested += usize::from(cell["cases"].as_u64().unwrap_or(0) > 0);
        }
    }
    assert!(tested >= 8, "{tested}");
    // The rules the broken example fails and the reference meets are split on, and no other.
    let splits: Vec<(&str, &str)> = comparison["interop"]["splits"]
        .as_array()
        .expect("splits")
        .iter()
        .map(|r| (str_of(&r["rule"]), str_of(&r["role"])))
        .collect();
    assert_eq!(splits, [("ASR-212", "validator"), ("ASR-234", "validator")]);
    assert_eq!(comparison["interop"]["noneMeet"], serde_json::json!([]));
    let conformant: Vec<u64> = reports
        .iter()
        .map(|r| {
            r["rules"].as_array().map_or(0, |rows| {
                rows.iter()
                    .filter(|row| row["verdict"] == "conformant")
                    .count() as u64
            })
        })
        .collect();
    assert_eq!(
        comparison["interop"]["conformantRules"],
        serde_json::json!(conformant)
    );
    assert!(conformant[0] > 0 && conformant[1] == 0, "{conformant:?}");
    // The disagreements are exactly the cases whose outcomes differ.
    let outcome_of = |report: &Value| -> BTreeSet<(String, String)> {
        report["cases"]
            .as_array()
            .expect("cases")
            .iter()
            .map(|c| {
                (
                    str_of(&c["name"]).to_owned(),
                    str_of(&c["outcome"]).to_owned(),
                )
            })
            .collect()
    };
    let (one, other) = (outcome_of(&reports[0]), outcome_of(&reports[1]));
    let differ: BTreeSet<String> = one.difference(&other).map(|(n, _)| n.clone()).collect();
    let disagreements = comparison["disagreements"]
        .as_array()
        .expect("disagreements");
    let listed: BTreeSet<String> = disagreements
        .iter()
        .map(|d| str_of(&d["case"]).to_owned())
        .collect();
    assert_eq!(listed, differ);
    let image = disagreements
        .iter()
        .find(|d| d["case"] == "messages/ASR-212/n_image_data_and_blob")
        .expect("the case the broken example fails");
    assert_eq!(image["outcomes"][0]["outcome"], "pass");
    assert_eq!(image["outcomes"][1]["outcome"], "fail");
    assert!(
        str_of(&image["outcomes"][1]["detail"]).contains("ASR-212"),
        "{image}"
    );
    assert!(comparison.get("history").is_none(), "two implementations");
    // The schema holds the output to its members.
    let mut extra = comparison.clone();
    extra["matrix"][0]["cells"][0]["surplus"] = Value::Bool(true);
    let schema: Value =
        serde_json::from_str(include_str!("../../../schemas/comparison.schema.json"))
            .expect("schema");
    assert!(!jsonschema::is_valid(&schema, &extra));
    // The Markdown: the table of the rules tested, by implementation, and the splits.
    let out = dir.join("comparison.md");
    let out_text = out.to_string_lossy().into_owned();
    let output = compare(
        &[&reference, &broken],
        &["--format", "markdown", "--out", &out_text],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(output.stdout.is_empty(), "{output:?}");
    let markdown = std::fs::read_to_string(&out).expect("written");
    assert!(
        markdown.contains("| Rule | Role | asr-ctk-reference"),
        "{markdown}"
    );
    assert!(
        markdown.lines().any(
            |line| line.starts_with("| ASR-212 | validator | conformant ")
                && line.contains(" | non-conformant ")
        ),
        "{markdown}"
    );
    assert!(
        markdown.contains("### Rules the implementations split on\n\n- `ASR-212 (validator)`"),
        "{markdown}"
    );
    assert!(
        !markdown.contains("| ASR-200 |"),
        "untested by both: {markdown}"
    );
}

#[test]
fn a_rule_both_fail_is_one_no_one_meets() {
    let dir = scratch("compare-none");
    let broken = run(&dir.join("broken"), Some(&broken()));
    let mut other = read(&broken.join("report.json"));
    other["adapter"]["implementation"]["name"] = Value::from("another-broken");
    let other = write(&dir.join("other.json"), &other);
    let output = compare(&[&broken, &other], &["--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let comparison = json_of(&output);
    let none: Vec<&str> = comparison["interop"]["noneMeet"]
        .as_array()
        .expect("none meet")
        .iter()
        .map(|r| str_of(&r["rule"]))
        .collect();
    assert_eq!(none, ["ASR-212", "ASR-234"]);
    assert_eq!(comparison["interop"]["splits"], serde_json::json!([]));
    assert_eq!(comparison["disagreements"], serde_json::json!([]));
    let row = comparison["interop"]["rules"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["rule"] == "ASR-212"))
        .expect("a row");
    assert_eq!(
        (row["conformant"].as_u64(), row["nonConformant"].as_u64()),
        (Some(0), Some(2))
    );
}

#[test]
fn a_report_that_is_no_report_is_refused_with_where() {
    let dir = scratch("compare-refused");
    let reference = run(&dir.join("reference"), None);
    let good = read(&reference.join("report.json"));
    let mut extra = good.clone();
    extra["surplus"] = Value::Bool(true);
    let mut wrong = good.clone();
    wrong["corpusCases"] = Value::from("many");
    for (name, report, says) in [
        ("extra.json", extra, "surplus"),
        ("wrong.json", wrong, "\"/corpusCases\""),
    ] {
        let path = write(&dir.join(name), &report);
        let output = compare(&[&reference, &path], &[]);
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(name) && stderr.contains(says), "{stderr}");
        assert!(output.stdout.is_empty(), "{output:?}");
    }
    let output = compare(&[&reference, &dir.join("missing")], &[]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
}

#[test]
fn reports_of_other_case_sets_are_compared_on_the_cases_they_share() {
    let dir = scratch("compare-corpora");
    let reference = run(&dir.join("reference"), None);
    let broken = run(&dir.join("broken"), Some(&broken()));
    let mut fewer = read(&reference.join("report.json"));
    fewer["caseSet"] = Value::from(format!("sha256:{}", "1".repeat(64)));
    let dropped = "messages/ASR-212/n_image_data_and_blob";
    let cases = fewer["cases"].as_array_mut().expect("cases");
    let before = cases.len();
    cases.retain(|c| c["name"] != dropped);
    assert_eq!(cases.len(), before - 1);
    let fewer = write(&dir.join("fewer.json"), &fewer);
    let output = compare(&[&fewer, &broken], &["--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let comparison = json_of(&output);
    assert_meets_schema(&comparison);
    assert_eq!(comparison["sameCaseSet"], false);
    assert_eq!(
        comparison["leftOut"],
        serde_json::json!([{"case": dropped, "role": "validator", "missingFrom": [0]}])
    );
    let disagreed: Vec<&str> = comparison["disagreements"]
        .as_array()
        .expect("disagreements")
        .iter()
        .map(|d| str_of(&d["case"]))
        .collect();
    assert!(!disagreed.contains(&dropped), "{disagreed:?}");
    assert!(disagreed.contains(&"messages/ASR-234/n_delivery_state_not_status"));
    let text = compare(&[&fewer, &broken], &[]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(&format!(
            "left out: {dropped} (validator): not in asr-ctk-reference"
        )),
        "{text}"
    );
}

#[test]
fn the_history_of_one_implementation_gives_its_regressions_and_fixes_in_the_order_given() {
    let dir = scratch("compare-history");
    let broken = run(&dir.join("broken"), Some(&broken()));
    let old_path = broken.join("report.json");
    let old: RunReport = serde_json::from_value(read(&old_path)).expect("a report");
    let (new, fixed, regressed) = fixed_and_regressed(&old);
    let new_path = dir.join("new.json");
    std::fs::write(&new_path, serde_json::to_vec(&new).expect("JSON")).expect("written");
    let changes = |comparison: &Value, what: &str| -> Vec<(String, String, String)> {
        comparison["history"]["steps"][0][what]
            .as_array()
            .expect("changes")
            .iter()
            .map(|c| {
                (
                    str_of(&c["case"]).to_owned(),
                    str_of(&c["before"]).to_owned(),
                    str_of(&c["after"]).to_owned(),
                )
            })
            .collect()
    };
    let change = |case: &str, before: &str, after: &str| {
        vec![(case.to_owned(), before.to_owned(), after.to_owned())]
    };
    let forward = compare(&[&old_path, &new_path], &["--format", "json"]);
    assert_eq!(forward.status.code(), Some(1), "a regression: {forward:?}");
    let comparison = json_of(&forward);
    assert_meets_schema(&comparison);
    assert_eq!(comparison["history"]["reports"], serde_json::json!([0, 1]));
    assert_eq!(
        changes(&comparison, "regressions"),
        change(regressed, "pass", "fail")
    );
    assert_eq!(changes(&comparison, "fixes"), change(fixed, "fail", "pass"));
    // Given the other way round, the fix is a regression: the order given is the timeline,
    // whatever startedAt says.
    let backward = compare(&[&new_path, &old_path], &["--format", "json"]);
    assert_eq!(backward.status.code(), Some(1), "{backward:?}");
    let comparison = json_of(&backward);
    assert_eq!(
        changes(&comparison, "regressions"),
        change(fixed, "pass", "fail")
    );
    assert_eq!(
        changes(&comparison, "fixes"),
        change(regressed, "fail", "pass")
    );
    // By startedAt, the same two in either order are the old then the new.
    let by_start = compare(
        &[&new_path, &old_path],
        &["--format", "json", "--order", "started-at"],
    );
    let comparison = json_of(&by_start);
    assert_eq!(comparison["history"]["reports"], serde_json::json!([1, 0]));
    assert_eq!(
        changes(&comparison, "regressions"),
        change(regressed, "pass", "fail")
    );
    let markdown = compare(&[&old_path, &new_path], &["--format", "markdown"]);
    assert_eq!(markdown.status.code(), Some(1), "{markdown:?}");
    let markdown = String::from_utf8_lossy(&markdown.stdout);
    assert!(markdown.contains("### History\n"), "{markdown}");
    assert!(
        markdown.contains(&format!(
            "  - regression: `{regressed}` (validator): pass to fail"
        )),
        "{markdown}"
    );
    assert!(
        markdown.contains(&format!("  - fix: `{fixed}` (validator): fail to pass")),
        "{markdown}"
    );
    // A report compared with itself has no regression: exit 0.
    let same = compare(&[&old_path, &old_path], &[]);
    assert_eq!(same.status.code(), Some(0), "{same:?}");
    let text = String::from_utf8_lossy(&forward.stdout);
    assert!(!text.is_empty());
    let human = compare(&[&old_path, &new_path], &[]);
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(
        human.contains(&format!(
            "regression: {regressed} (validator): pass -> fail"
        )),
        "{human}"
    );
}

/// The next report of the broken example's run of [`CASES`] (`old`), started later: one case
/// that failed fixed, one that passed regressed. Gives it, the case fixed and the case
/// regressed.
pub fn fixed_and_regressed(old: &RunReport) -> (RunReport, &'static str, &'static str) {
    let fixed = "messages/ASR-212/n_image_data_and_blob";
    let regressed = "messages/ASR-234/y_delivery_sent";
    let mut new = old.clone();
    for case in &mut new.cases {
        if case.name == fixed {
            assert_eq!(case.outcome, Outcome::Fail);
            case.outcome = Outcome::Pass;
            case.detail = None;
            case.attributions.clear();
        } else if case.name == regressed {
            assert_eq!(case.outcome, Outcome::Pass);
            case.outcome = Outcome::Fail;
            case.detail = Some("the answer is wrong".into());
        }
    }
    new.summarize(Catalog::embedded());
    new.started_at = "2999-01-01T00:00:00Z".into();
    (new, fixed, regressed)
}

/// The values of `attribute` in `html`, in order.
pub fn attribute_values<'a>(html: &'a str, attribute: &str) -> Vec<&'a str> {
    let start = format!(" {attribute}=\"");
    html.match_indices(&start)
        .filter_map(|(at, _)| {
            let rest = &html[at + start.len()..];
            rest.find('"').map(|end| &rest[..end])
        })
        .collect()
}

/// The verdict a report gives a rule for a role (`""`: the rule as a whole), as the page
/// names it.
pub fn verdict_in(report: &RunReport, id: &str, played: &str) -> String {
    let Some(row) = report.rules.iter().find(|r| r.rule == id) else {
        return "none".into();
    };
    if played.is_empty() {
        return row.verdict.as_str().into();
    }
    row.by_role
        .iter()
        .find(|(r, _)| r.as_str() == played)
        .map_or_else(|| "none".into(), |(_, v)| v.verdict.as_str().into())
}

/// The page of the example implementations' runs of the whole corpus, written in `dir`
/// (`compare.html`, badges in `badges/`), and the runs' report directories: the reference
/// as both roles, the broken Python example and, with `all`, the right and the over-strict
/// Python examples and the JavaScript reader too.
pub fn write_example_page(dir: &Path, all: bool) -> (PathBuf, Vec<PathBuf>) {
    let example = |name: &str| {
        format!(
            "python3 {}",
            root().join("examples/python-adapter").join(name).display()
        )
    };
    let node = format!(
        "node {}",
        root().join("examples/node-adapter/reader.js").display()
    );
    // (report directory, adapter, role)
    let mut runs: Vec<(&str, Option<String>, &str)> = vec![
        ("reference-validator", None, "validator"),
        ("reference-reader", None, "reader"),
        ("broken", Some(example("adapter_broken.py")), "validator"),
    ];
    if all {
        runs.extend([
            ("python", Some(example("adapter.py")), "validator"),
            ("strict", Some(example("adapter_strict.py")), "validator"),
            ("node", Some(node), "reader"),
        ]);
    }
    let mut reports = Vec::new();
    for (name, adapter, role) in &runs {
        let out = dir.join(name);
        let out_text = out.to_string_lossy().into_owned();
        let mut args = vec!["run", "--quiet", "--role", role, "--out", &out_text];
        if let Some(adapter) = adapter {
            args.extend(["--adapter", adapter]);
        }
        let output = asr_ctk(&args);
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{name}: {output:?}"
        );
        reports.push(out);
    }
    let page = dir.join("compare.html");
    let badges = dir.join("badges");
    let paths: Vec<&Path> = reports.iter().map(PathBuf::as_path).collect();
    let output = compare(
        &paths,
        &[
            "--format",
            "html",
            "--out",
            &page.to_string_lossy(),
            "--badges",
            &badges.to_string_lossy(),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    (page, reports)
}

#[test]
fn the_example_implementations_on_one_page_each_cell_its_reports_verdict_and_every_link_landing() {
    let dir = scratch("compare-examples");
    let (page, reports) = write_example_page(&dir, true);
    let badges = dir.join("badges");
    let html = std::fs::read_to_string(&page).expect("the page");
    let loaded: Vec<RunReport> = reports
        .iter()
        .map(|dir| {
            serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).expect("read"))
                .expect("a report")
        })
        .collect();
    // Every matrix row's cells are the reports' verdicts, in the order given.
    let mut rows = 0;
    for (at, _) in html.match_indices("<tr data-rule=\"") {
        let line = &html[at..at + html[at..].find("</tr>").expect("a row's end")];
        let id = attribute_values(line, "data-rule")[0];
        let played = attribute_values(line, "data-role")[0];
        let shown = attribute_values(line, "data-verdict");
        let written: Vec<String> = loaded.iter().map(|r| verdict_in(r, id, played)).collect();
        assert_eq!(shown, written, "{id} ({played})");
        rows += 1;
    }
    assert!(rows > 60, "{rows} rows");
    // The broken example fails a rule the right one meets: the page says so in its cell.
    assert!(
        html.contains("data-verdict=\"non-conformant\""),
        "a failing cell"
    );
    // Every link is a fragment of the page, and an element has its id.
    let ids: BTreeSet<&str> = attribute_values(&html, "id").into_iter().collect();
    let links = attribute_values(&html, "href");
    assert!(links.len() > 1000, "{} links", links.len());
    for link in &links {
        let target = link
            .strip_prefix('#')
            .unwrap_or_else(|| panic!("a link off the page: {link}"));
        assert!(ids.contains(target), "nothing has the id of {link}");
    }
    // Every case of every report has its row, and every report its badge.
    for report in &loaded {
        for case in &report.cases {
            let id = asr_suite::render::comparison::case_anchor(&case.name, case.role);
            assert!(ids.contains(id.as_str()), "no row for {}", case.name);
        }
    }
    let svgs = std::fs::read_dir(&badges).expect("badges").count();
    assert_eq!(svgs, reports.len());
}
