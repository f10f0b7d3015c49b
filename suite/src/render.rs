//! Renders a conformance [`RunReport`] for people and tools: Markdown, one self-contained
//! HTML page, JUnit XML and a shields.io endpoint badge.
//!
//! Everything a case or an adapter wrote (details, expectations, answers, diffs, stderr) is
//! untrusted: every renderer writes control characters as visible escapes
//! ([`escape_controls`]), the HTML and XML renderers escape every piece of text taken from the
//! report, and the XML renderer drops the other characters XML 1.0 does not allow.

use crate::conformance::{CaseResult, Outcome, RuleResult, RuleVerdict, RunReport};
use crate::protocol::ProtocolRole;
use std::borrow::Cow;
use std::fmt::Write as _;

/// Text with its control characters other than line feed and tab (C0, DEL, C1: the escape
/// codes that clear a screen or move a cursor) written as visible `\u{1b}` escapes, so that
/// text an adapter wrote cannot drive the terminal or the page it is shown on.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    let hidden = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The report as Markdown: metadata, totals, a table of the applicable rules, then the failing
/// cases (with their diffs) and the skipped ones.
pub fn markdown(report: &RunReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# ASR conformance: {}\n", md_text(&title(report)));
    let _ = writeln!(
        out,
        "- Kit: {} {}",
        md_text(&report.kit),
        md_text(&report.kit_version)
    );
    let _ = writeln!(
        out,
        "- Case set: {} ({} cases in the corpus)",
        code_span(&report.case_set),
        report.corpus_cases
    );
    let _ = writeln!(
        out,
        "- Adapter: {}",
        code_span(&shell_join(&report.adapter.command))
    );
    let _ = writeln!(out, "- Mode: {}", md_text(&report.adapter.mode));
    let _ = writeln!(out, "- Roles: {}", md_text(&roles(report)));
    let _ = writeln!(out, "- Started at: {}", md_text(&report.started_at));
    let _ = writeln!(out, "- Shards: {}", md_text(&shards(report)));
    let _ = writeln!(
        out,
        "- Command line: {}",
        code_span(&shell_join(&report.command_line))
    );
    if let Some(why) = &report.incomplete {
        let _ = writeln!(out, "- **Incomplete:** {}", md_text(why));
    }

    let totals: Vec<String> = Outcome::ALL
        .iter()
        .map(|o| format!("{} {}", total(report, *o), o.as_str()))
        .collect();
    let _ = writeln!(out, "\n**Totals:** {}\n", totals.join(", "));

    out.push_str("## Rules\n\n");
    let applicable: Vec<&RuleResult> = applicable_rules(report).collect();
    if applicable.is_empty() {
        out.push_str("No rule applies to the roles the implementation plays.\n");
    } else {
        out.push_str("| Rule | Levels | Verdict | Cases | Passed | Failed | Skipped | Errored |\n");
        out.push_str("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
        for r in applicable {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                md_text(&r.rule),
                md_text(&levels(r)),
                r.verdict.as_str(),
                r.cases,
                r.passed,
                r.failed,
                r.skipped,
                r.errored
            );
        }
    }

    out.push_str("\n## Failures\n\n");
    let failures = failures(report);
    if failures.is_empty() {
        out.push_str("None.\n");
    }
    for case in failures {
        let _ = writeln!(out, "### {}\n", code_span(&case.name));
        let _ = writeln!(out, "- Id: {}", md_text(&case.id));
        let _ = writeln!(out, "- Rules: {}", md_text(&case.rules.join(", ")));
        let _ = writeln!(out, "- Outcome: {}", case.outcome.as_str());
        match case.detail.as_deref() {
            Some(detail) if detail.contains('\n') => {
                let _ = write!(out, "- Detail:\n\n{}", fence(detail, "text"));
            }
            Some(detail) => {
                let _ = writeln!(out, "- Detail: {}", md_text(detail));
            }
            None => {}
        }
        out.push('\n');
        if let Some(diff) = &case.diff {
            out.push_str(&fence(diff, "diff"));
            out.push('\n');
        } else {
            if let Some(expected) = &case.expected {
                let _ = writeln!(out, "Expected:\n\n{}", fence(expected, "text"));
            }
            if let Some(actual) = &case.actual {
                let _ = writeln!(out, "Actual:\n\n{}", fence(actual, "text"));
            }
        }
        if let Some(stderr) = &case.stderr {
            let _ = writeln!(out, "Stderr:\n\n{}", fence(stderr, "text"));
        }
    }

    let skipped: Vec<&CaseResult> = report
        .cases
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Skipped | Outcome::NotRun))
        .collect();
    if !skipped.is_empty() {
        out.push_str("## Skipped or not run\n\n");
        for case in skipped {
            let _ = write!(out, "- {} ({})", code_span(&case.name), md_text(&case.id));
            if let Some(reason) = &case.detail {
                let _ = write!(out, ": {}", md_text(reason));
            }
            if let Some(issue) = &case.issue {
                if is_web_link(issue) {
                    let _ = write!(out, " ([issue](<{issue}>))");
                } else {
                    let _ = write!(out, " (issue: {})", md_text(issue));
                }
            }
            out.push('\n');
        }
    }
    out
}

/// The report as one self-contained HTML page: inline CSS, no script, nothing fetched. Every
/// failing case is a `<details>` element; every piece of text from the report is escaped.
pub fn html(report: &RunReport) -> String {
    let mut out = String::new();
    let name = title(report);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n",
    );
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(out, "<title>ASR conformance: {}</title>", esc(&name));
    let _ = writeln!(out, "<style>{CSS}</style>\n</head>\n<body>");
    let _ = writeln!(out, "<h1>ASR conformance: {}</h1>", esc(&name));

    out.push_str("<dl class=\"meta\">\n");
    if let Some(i) = &report.adapter.implementation {
        meta_row(
            &mut out,
            "Implementation",
            &format!(
                "{} {} ({})",
                esc(&i.name),
                esc(&i.version),
                esc(&i.language)
            ),
        );
        if let Some(home) = &i.homepage {
            meta_row(&mut out, "Homepage", &link(home));
        }
    }
    meta_row(
        &mut out,
        "Kit",
        &format!("{} {}", esc(&report.kit), esc(&report.kit_version)),
    );
    meta_row(
        &mut out,
        "Case set",
        &format!(
            "<code>{}</code> ({} cases in the corpus)",
            esc(&report.case_set),
            report.corpus_cases
        ),
    );
    meta_row(
        &mut out,
        "Adapter",
        &format!("<code>{}</code>", esc(&shell_join(&report.adapter.command))),
    );
    meta_row(&mut out, "Mode", &esc(&report.adapter.mode));
    meta_row(&mut out, "Roles", &esc(&roles(report)));
    meta_row(&mut out, "Started at", &esc(&report.started_at));
    meta_row(&mut out, "Shards", &esc(&shards(report)));
    meta_row(
        &mut out,
        "Command line",
        &format!("<code>{}</code>", esc(&shell_join(&report.command_line))),
    );
    if let Some(why) = &report.incomplete {
        meta_row(
            &mut out,
            "Incomplete",
            &format!("<strong>{}</strong>", esc(why)),
        );
    }
    out.push_str("</dl>\n");

    out.push_str(
        "<h2>Totals</h2>\n<div class=\"bar\" role=\"img\" aria-label=\"cases by outcome\">",
    );
    for o in Outcome::ALL {
        let n = total(report, o);
        if n > 0 {
            let _ = write!(
                out,
                "<span class=\"o-{0}\" style=\"flex-grow:{n}\" title=\"{n} {0}\"></span>",
                o.as_str()
            );
        }
    }
    out.push_str("</div>\n<ul class=\"legend\">");
    for o in Outcome::ALL {
        let _ = write!(
            out,
            "<li><span class=\"dot o-{0}\"></span>{1} {0}</li>",
            o.as_str(),
            total(report, o)
        );
    }
    out.push_str("</ul>\n");

    out.push_str("<h2>Rules</h2>\n");
    let applicable: Vec<&RuleResult> = applicable_rules(report).collect();
    if applicable.is_empty() {
        out.push_str("<p>No rule applies to the roles the implementation plays.</p>\n");
    } else {
        out.push_str(
            "<table>\n<thead><tr><th>Rule</th><th>Levels</th><th>Verdict</th><th>Cases</th><th>Passed</th>\
             <th>Failed</th><th>Skipped</th><th>Errored</th></tr></thead>\n<tbody>\n",
        );
        for r in applicable {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td><span class=\"verdict v-{2}\">{2}</span></td>\
                 <td>{3}</td><td>{4}</td><td>{5}</td><td>{6}</td><td>{7}</td></tr>",
                esc(&r.rule),
                esc(&levels(r)),
                r.verdict.as_str(),
                r.cases,
                r.passed,
                r.failed,
                r.skipped,
                r.errored
            );
        }
        out.push_str("</tbody>\n</table>\n");
    }

    out.push_str("<h2>Failures</h2>\n");
    let failures = failures(report);
    if failures.is_empty() {
        out.push_str("<p>None.</p>\n");
    }
    for case in failures {
        let _ = writeln!(
            out,
            "<details class=\"case\">\n<summary><span class=\"outcome o-{0}\">{0}</span> <code>{1}</code></summary>",
            case.outcome.as_str(),
            esc(&case.name)
        );
        out.push_str("<dl>\n");
        meta_row(
            &mut out,
            "Case",
            &format!("<code>{}</code> ({})", esc(&case.name), esc(&case.id)),
        );
        meta_row(&mut out, "Rules", &esc(&case.rules.join(", ")));
        meta_row(&mut out, "Outcome", case.outcome.as_str());
        if let Some(detail) = &case.detail {
            meta_row(
                &mut out,
                "Detail",
                &format!("<span class=\"detail\">{}</span>", esc(detail)),
            );
        }
        out.push_str("</dl>\n");
        if let Some(expected) = &case.expected {
            let _ = writeln!(out, "<h4>Expected</h4>\n<pre>{}</pre>", esc(expected));
        }
        if let Some(actual) = &case.actual {
            let _ = writeln!(out, "<h4>Actual</h4>\n<pre>{}</pre>", esc(actual));
        }
        if let Some(diff) = &case.diff {
            out.push_str("<h4>Diff</h4>\n<pre class=\"diff\">");
            for line in diff.lines() {
                let class = if line.starts_with("+++") || line.starts_with("---") {
                    "hdr"
                } else if line.starts_with('+') {
                    "add"
                } else if line.starts_with('-') {
                    "del"
                } else if line.starts_with("@@") {
                    "hunk"
                } else {
                    "ctx"
                };
                let _ = writeln!(out, "<span class=\"{class}\">{}</span>", esc(line));
            }
            out.push_str("</pre>\n");
        }
        if let Some(stderr) = &case.stderr {
            let _ = writeln!(
                out,
                "<h4>Stderr</h4>\n<pre class=\"stderr\">{}</pre>",
                esc(stderr)
            );
        }
        out.push_str("</details>\n");
    }

    let skipped: Vec<&CaseResult> = report
        .cases
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Skipped | Outcome::NotRun))
        .collect();
    if !skipped.is_empty() {
        out.push_str("<h2>Skipped or not run</h2>\n<ul class=\"skipped\">\n");
        for case in skipped {
            let _ = write!(
                out,
                "<li><code>{}</code> ({})",
                esc(&case.name),
                esc(&case.id)
            );
            if let Some(reason) = &case.detail {
                let _ = write!(out, ": {}", esc(reason));
            }
            if let Some(issue) = &case.issue {
                let _ = write!(out, " (issue: {})", link(issue));
            }
            out.push_str("</li>\n");
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// The report as JUnit XML: one `<testsuite>`, one `<testcase>` per case, its class the case's
/// first rule. Failures, errors (with the outcome as type) and skips are marked; stderr goes to
/// `<system-err>`.
pub fn junit(report: &RunReport) -> String {
    let count = |f: &dyn Fn(Outcome) -> bool| report.cases.iter().filter(|c| f(c.outcome)).count();
    let tests = report.cases.len();
    let failures = count(&|o| o == Outcome::Fail);
    let errors = count(&|o| o.is_failure() && o != Outcome::Fail);
    let skipped = count(&|o| matches!(o, Outcome::Skipped | Outcome::NotRun));
    let time = seconds(report.cases.iter().map(|c| c.millis).sum());
    let counts = format!(
        "tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{time}\""
    );

    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(out, "<testsuites name=\"asr-ctk\" {counts}>");
    let _ = writeln!(out, "  <testsuite name=\"asr-ctk\" {counts}>");
    out.push_str("    <properties>\n");
    let mut property = |name: &str, value: &str| {
        let _ = writeln!(
            out,
            "      <property name=\"{}\" value=\"{}\"/>",
            xml_attr(name),
            xml_attr(value)
        );
    };
    property("implementation", &title(report));
    property("kit", &format!("{} {}", report.kit, report.kit_version));
    property("caseSet", &report.case_set);
    property("adapter", &shell_join(&report.adapter.command));
    property("mode", &report.adapter.mode);
    property("roles", &roles(report));
    property("startedAt", &report.started_at);
    property("shards", &shards(report));
    property("commandLine", &shell_join(&report.command_line));
    out.push_str("    </properties>\n");

    for case in &report.cases {
        let class = case.rules.first().map_or("asr-ctk", String::as_str);
        // A case run in two roles is two test cases: the role keeps their names apart.
        let name = match case.role {
            ProtocolRole::Validator => case.name.clone(),
            role => format!("{} [{}]", case.name, role.as_str()),
        };
        let _ = write!(
            out,
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{}\"",
            xml_attr(class),
            xml_attr(&name),
            seconds(case.millis)
        );
        let message = case.detail.clone().unwrap_or_else(|| match case.outcome {
            Outcome::Fail => "the answer differs from the expectation".to_owned(),
            other => other.as_str().to_owned(),
        });
        let mut body = String::new();
        match case.outcome {
            Outcome::Pass => {}
            Outcome::Fail => {
                let text = case
                    .diff
                    .clone()
                    .or_else(|| expected_actual(case))
                    .unwrap_or_else(|| message.clone());
                let _ = writeln!(
                    body,
                    "      <failure message=\"{}\">{}</failure>",
                    xml_attr(&message),
                    xml_text(&text)
                );
            }
            Outcome::Skipped | Outcome::NotRun => {
                let message = match &case.issue {
                    Some(issue) => format!("{message} ({issue})"),
                    None => message,
                };
                let _ = writeln!(body, "      <skipped message=\"{}\"/>", xml_attr(&message));
            }
            Outcome::Error | Outcome::Timeout | Outcome::Crash | Outcome::ProtocolError => {
                let mut text = message.clone();
                if let Some(more) = case.diff.clone().or_else(|| expected_actual(case)) {
                    text.push_str("\n\n");
                    text.push_str(&more);
                }
                let _ = writeln!(
                    body,
                    "      <error type=\"{}\" message=\"{}\">{}</error>",
                    case.outcome.as_str(),
                    xml_attr(&message),
                    xml_text(&text)
                );
            }
        }
        if let Some(stderr) = &case.stderr {
            let _ = writeln!(body, "      <system-err>{}</system-err>", xml_text(stderr));
        }
        if body.is_empty() {
            out.push_str("/>\n");
        } else {
            let _ = writeln!(out, ">\n{body}    </testcase>");
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// A shields.io endpoint badge: conformant rules out of the applicable rules tested, green when
/// none is broken, yellow when only SHOULD-level expectations failed, red otherwise, grey when
/// nothing was tested.
pub fn badge(report: &RunReport) -> serde_json::Value {
    let count = |v: RuleVerdict| report.rules.iter().filter(|r| r.verdict == v).count();
    let conformant = count(RuleVerdict::Conformant);
    let non_conformant = count(RuleVerdict::NonConformant);
    let non_strict = count(RuleVerdict::NonStrict);
    let tested = conformant + non_conformant + non_strict;
    let (message, color) = if tested == 0 {
        ("untested".to_owned(), "lightgrey")
    } else {
        let color = if non_conformant > 0 {
            "red"
        } else if non_strict > 0 {
            "yellow"
        } else {
            "brightgreen"
        };
        (format!("{conformant}/{tested} rules"), color)
    };
    // A run that did not run every case certifies nothing whole: it is never green.
    let (message, color) = match &report.incomplete {
        Some(_) => (format!("incomplete, {message}"), "lightgrey"),
        None => (message, color),
    };
    serde_json::json!({
        "schemaVersion": 1,
        "label": "ASR conformance",
        "message": message,
        "color": color,
    })
}

const CSS: &str = "\
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1f2328;background:#fff;\
max-width:76rem;margin:2rem auto;padding:0 1rem}\
h1{font-size:1.6rem;margin-bottom:.5rem}h2{margin-top:2rem;border-bottom:1px solid #d0d7de}\
h4{margin:.8rem 0 .3rem}\
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}\
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:.6rem;overflow:auto;white-space:pre-wrap;\
word-break:break-all}\
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:.5rem 0}dt{font-weight:600}dd{margin:0}\
.bar{display:flex;height:1.1rem;border-radius:4px;overflow:hidden;background:#eaeef2}.bar span{min-width:2px}\
.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.4rem 1.2rem}\
.dot{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;margin-right:.3rem;vertical-align:-1px}\
.o-pass{background:#2da44e}.o-fail{background:#cf222e}.o-skipped{background:#8c959f}.o-not-run{background:#d0d7de}.o-error{background:#bc4c00}\
.o-timeout{background:#8250df}.o-crash{background:#82071e}.o-protocol-error{background:#bf3989}\
table{border-collapse:collapse;margin:.5rem 0}th,td{border:1px solid #d0d7de;padding:.25rem .6rem;text-align:right}\
th:nth-child(-n+3),td:nth-child(-n+3){text-align:left}thead{background:#f6f8fa}\
.verdict{padding:.05rem .45rem;border-radius:1em;font-weight:600;white-space:nowrap}\
.v-conformant{background:#dafbe1;color:#116329}.v-non-conformant{background:#ffebe9;color:#a40e26}\
.v-non-strict{background:#fff8c5;color:#7d4e00}.v-untested{background:#eaeef2;color:#57606a}\
details.case{border:1px solid #d0d7de;border-radius:6px;margin:.5rem 0;padding:.4rem .8rem}\
details.case summary{cursor:pointer}\
.outcome{color:#fff;padding:.05rem .45rem;border-radius:4px;font-size:12px;font-weight:600}\
.detail{white-space:pre-wrap}\
.diff .add{background:#dafbe1;color:#116329}.diff .del{background:#ffebe9;color:#a40e26}\
.diff .hdr{font-weight:600}.diff .hunk{color:#0550ae}\
.stderr{background:#fff8f0}";

/// The cases that failed in any way, in report order.
fn failures(report: &RunReport) -> Vec<&CaseResult> {
    report
        .cases
        .iter()
        .filter(|c| c.outcome.is_failure())
        .collect()
}

/// A rule's keywords, or `descriptive` for a statement without one.
fn levels(rule: &RuleResult) -> String {
    if rule.levels.is_empty() {
        "descriptive".to_owned()
    } else {
        rule.levels.join(", ")
    }
}

fn title(report: &RunReport) -> String {
    report.adapter.implementation.as_ref().map_or_else(
        || "unknown implementation".to_owned(),
        |i| format!("{} {}", i.name, i.version),
    )
}

fn roles(report: &RunReport) -> String {
    if report.adapter.roles.is_empty() {
        return "none".to_owned();
    }
    report
        .adapter
        .roles
        .iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn shards(report: &RunReport) -> String {
    if report.shards.is_empty() {
        "none (the whole selection)".to_owned()
    } else {
        report.shards.join(", ")
    }
}

fn total(report: &RunReport, outcome: Outcome) -> usize {
    report.totals.get(&outcome).copied().unwrap_or(0)
}

fn applicable_rules(report: &RunReport) -> impl Iterator<Item = &RuleResult> {
    report
        .rules
        .iter()
        .filter(|r| r.verdict != RuleVerdict::NotApplicable)
}

fn expected_actual(case: &CaseResult) -> Option<String> {
    match (&case.expected, &case.actual) {
        (None, None) => None,
        (e, a) => Some(format!(
            "expected:\n{}\nactual:\n{}",
            e.as_deref().unwrap_or("(none)"),
            a.as_deref().unwrap_or("(none)")
        )),
    }
}

/// Milliseconds as seconds with three decimals, without a float.
fn seconds(millis: u64) -> String {
    format!("{}.{:03}", millis / 1000, millis % 1000)
}

/// argv as a shell would read it back, so that a command shown can be pasted.
fn shell_join(argv: &[String]) -> String {
    shell_words::join(argv)
}

/// Whether a character may appear in an XML 1.0 document (and in clean HTML text).
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

/// Text escaped for HTML content and attribute values; characters not allowed in XML 1.0 dropped.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in escape_controls(s).chars().filter(|c| xml_char(*c)) {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Text escaped for XML character data.
fn xml_text(s: &str) -> String {
    esc(s).replace('\r', "&#13;")
}

/// Text escaped for an XML attribute value: line breaks and tabs kept as character references,
/// so attribute-value normalization does not fold them into spaces.
fn xml_attr(s: &str) -> String {
    esc(s)
        .replace('\r', "&#13;")
        .replace('\n', "&#10;")
        .replace('\t', "&#9;")
}

fn meta_row(out: &mut String, term: &str, html_value: &str) {
    let _ = writeln!(out, "<dt>{term}</dt><dd>{html_value}</dd>");
}

fn is_web_link(s: &str) -> bool {
    (s.starts_with("https://") || s.starts_with("http://"))
        && !s.chars().any(|c| {
            c.is_whitespace() || c.is_control() || matches!(c, '<' | '>' | '"' | '\'' | '`')
        })
}

/// An escaped link for http(s) addresses; anything else (a `javascript:` address) as plain text.
fn link(s: &str) -> String {
    if is_web_link(s) {
        format!("<a href=\"{0}\">{0}</a>", esc(s))
    } else {
        esc(s)
    }
}

/// Text for one line of Markdown: the characters that could start markup backslash-escaped,
/// line breaks folded into spaces.
fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in escape_controls(s).chars().filter(|c| xml_char(*c)) {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '|' | '~' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' | '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn longest_run(s: &str, of: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for c in s.chars() {
        run = if c == of { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// An inline code span that the text cannot close early.
fn code_span(s: &str) -> String {
    let s: String = escape_controls(s)
        .chars()
        .map(|c| {
            if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            }
        })
        .collect();
    let ticks = "`".repeat(longest_run(&s, '`') + 1);
    if s.contains('`') {
        format!("{ticks} {s} {ticks}")
    } else {
        format!("{ticks}{s}{ticks}")
    }
}

/// A fenced code block that the text cannot close early.
fn fence(s: &str, lang: &str) -> String {
    let ticks = "`".repeat(longest_run(s, '`').max(2) + 1);
    let s: String = escape_controls(s)
        .chars()
        .filter(|c| xml_char(*c))
        .collect();
    let newline = if s.ends_with('\n') { "" } else { "\n" };
    format!("{ticks}{lang}\n{s}{newline}{ticks}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::AdapterInfo;
    use crate::protocol::{Implementation, ProtocolRole};
    use std::collections::BTreeMap;

    const SCRIPT: &str = "<script>alert(1)</script>";

    fn case(name: &str, rule: &str, outcome: Outcome) -> CaseResult {
        CaseResult {
            millis: 1_234,
            ..CaseResult::new(
                name,
                format!("c{:04}", name.len()),
                vec![rule.into()],
                outcome,
            )
        }
    }

    fn rule(id: &str, verdict: RuleVerdict, counts: [usize; 4]) -> RuleResult {
        let [passed, failed, skipped, errored] = counts;
        RuleResult {
            rule: id.into(),
            levels: vec!["MUST".into()],
            roles: vec!["validator".into()],
            cases: passed + failed + skipped + errored,
            passed,
            failed,
            skipped,
            errored,
            verdict,
        }
    }

    fn report() -> RunReport {
        let pass = case(
            "messages/ASR-212/y_image_blob_only",
            "ASR-212",
            Outcome::Pass,
        );
        let mut fail = case("messages/ASR-231/n_bad_role", "ASR-231", Outcome::Fail);
        fail.detail = Some(format!("the stream must be rejected {SCRIPT} & more"));
        fail.expected = Some("valid: false\nASR-231 error line 2\n".into());
        fail.actual = Some("valid: true\n".into());
        fail.diff = Some("--- expected\n+++ actual\n@@ -1,2 +1 @@\n-valid: false\n-ASR-231 error line 2\n+valid: true\n".into());
        fail.stderr = Some(format!(
            "panic: {SCRIPT}\n\u{1b}[31mred & <bold>\u{1b}[0m\n"
        ));
        let mut timeout = case("messages/ASR-217/n_late", "ASR-217", Outcome::Timeout);
        timeout.detail = Some("no answer within 5 s".into());
        let mut skip = case(
            "messages/ASR-234/n_unsupported",
            "ASR-234",
            Outcome::Skipped,
        );
        skip.detail = Some("blobs are not implemented".into());
        skip.issue = Some("https://example.invalid/issues/7".into());
        let mut protocol = case(
            "lineage/ASR-412/n_mismatch",
            "ASR-412",
            Outcome::ProtocolError,
        );
        protocol.detail = Some("the answer was not JSON".into());
        protocol.expected = Some("valid: false\n".into());
        protocol.actual = Some("garbage".into());
        let cases = vec![pass, fail, timeout, skip, protocol];
        let mut totals: BTreeMap<Outcome, usize> = Outcome::ALL.iter().map(|o| (*o, 0)).collect();
        for c in &cases {
            *totals.entry(c.outcome).or_default() += 1;
        }
        RunReport {
            kit: "asr-ctk".into(),
            kit_version: "0.1.0".into(),
            case_set: format!("sha256:{}", "ab".repeat(32)),
            corpus_cases: 120,
            adapter: AdapterInfo {
                command: vec!["./adapter".into(), "--flag".into(), "two words".into()],
                mode: "persistent".into(),
                implementation: Some(Implementation {
                    name: "asr-go".into(),
                    version: "1.2.3".into(),
                    language: "Go".into(),
                    homepage: Some("https://example.invalid/asr-go".into()),
                    issues: None,
                }),
                roles: vec![ProtocolRole::Validator],
            },
            command_line: vec![
                "asr-ctk".into(),
                "run".into(),
                "--adapter".into(),
                "./adapter".into(),
            ],
            started_at: "2026-11-29T13:04:05Z".into(),
            shards: vec![],
            totals,
            rules: vec![
                rule("ASR-212", RuleVerdict::Conformant, [1, 0, 0, 0]),
                rule("ASR-231", RuleVerdict::NonConformant, [0, 1, 0, 0]),
                rule("ASR-217", RuleVerdict::NonConformant, [0, 0, 0, 1]),
                rule("ASR-234", RuleVerdict::Untested, [0, 0, 1, 0]),
                rule("ASR-412", RuleVerdict::NonStrict, [0, 0, 0, 1]),
                rule("ASR-215", RuleVerdict::NotApplicable, [0, 0, 0, 0]),
            ],
            cases,
            interrupted: false,
            incomplete: None,
        }
    }

    #[test]
    fn markdown_has_the_rule_table_and_the_failure_diff() {
        let md = markdown(&report());
        assert!(md.starts_with("# ASR conformance: asr-go 1.2.3\n"), "{md}");
        assert!(md.contains("- Kit: asr-ctk 0.1.0\n"), "{md}");
        assert!(
            md.contains("- Adapter: `./adapter --flag 'two words'`\n"),
            "{md}"
        );
        assert!(md.contains("**Totals:** 1 pass, 1 fail, 1 skipped, 0 error, 1 timeout, 0 crash, 1 protocol-error"), "{md}");
        assert!(
            md.contains(
                "| Rule | Levels | Verdict | Cases | Passed | Failed | Skipped | Errored |\n"
            ),
            "{md}"
        );
        assert!(
            md.contains("| ASR-231 | MUST | non-conformant | 1 | 0 | 1 | 0 | 0 |\n"),
            "{md}"
        );
        assert!(md.contains("| ASR-412 | MUST | non-strict |"), "{md}");
        assert!(
            !md.contains("| ASR-215 |"),
            "a rule that does not apply is left out"
        );
        assert!(
            md.contains("```diff\n--- expected\n+++ actual\n@@ -1,2 +1 @@\n-valid: false\n"),
            "{md}"
        );
        assert!(md.contains("### `messages/ASR-231/n_bad_role`\n\n- Id: c0027\n- Rules: ASR-231\n- Outcome: fail\n"), "{md}");
        assert!(
            md.contains("### `messages/ASR-217/n_late`"),
            "a timeout is a failure"
        );
        assert!(
            md.contains("Expected:\n\n```text\nvalid: false\n```"),
            "no diff: expected and actual instead\n{md}"
        );
        assert!(md.contains("Actual:\n\n```text\ngarbage\n```"), "{md}");
        assert!(md.contains("Stderr:\n\n```text\npanic: <script>"), "{md}");
        assert!(!md.contains('\u{1b}'));
        assert!(md.contains("- `messages/ASR-234/n_unsupported` (c0030): blobs are not implemented ([issue](<https://example.invalid/issues/7>))"), "{md}");
        assert!(
            !md.contains("### `messages/ASR-234"),
            "a skip is not a failure"
        );
    }

    #[test]
    fn control_characters_are_shown_as_escapes_in_every_renderer() {
        assert_eq!(escape_controls("plain\n\ttext"), "plain\n\ttext");
        assert_eq!(
            escape_controls("\u{1b}[2Jx\u{7}\r\u{9b}"),
            "\\u{1b}[2Jx\\u{7}\\u{d}\\u{9b}"
        );
        let mut report = report();
        report.cases[1].detail = Some("\u{1b}[2J cleared".into());
        report.cases[1].stderr = Some("\u{1b}[H home\n".into());
        for text in [html(&report), junit(&report)] {
            assert!(!text.contains('\u{1b}'), "{text}");
            assert!(text.contains("\\u{1b}[2J cleared"), "{text}");
            assert!(text.contains("\\u{1b}[H home"), "{text}");
        }
        // Markdown escapes the backslash and the bracket again, to show them as they are.
        let md = markdown(&report);
        assert!(!md.contains('\u{1b}'), "{md}");
        assert!(md.contains("\\\\u{1b}\\[2J cleared"), "{md}");
        assert!(md.contains("\\u{1b}[H home"), "{md}");
    }

    #[test]
    fn an_incomplete_run_is_said_and_its_badge_is_never_green() {
        let mut report = report();
        assert_ne!(
            badge(&report)["message"]
                .as_str()
                .map(|m| m.starts_with("incomplete")),
            Some(true)
        );
        report.incomplete = Some("3 case(s) not run: the run was interrupted".into());
        let badge = badge(&report);
        assert_eq!(badge["color"], "lightgrey");
        assert!(
            badge["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("incomplete"))
        );
        assert!(markdown(&report).contains("**Incomplete:** 3 case(s) not run"));
        assert!(html(&report).contains("<dt>Incomplete</dt>"));
    }

    #[test]
    fn markdown_fences_and_spans_hold_backticks() {
        assert_eq!(fence("a\n```\nb", "text"), "````text\na\n```\nb\n````\n");
        assert_eq!(code_span("a`b"), "`` a`b ``");
        assert_eq!(md_text("a|b <x>\nc"), "a\\|b \\<x\\> c");
        let mut r = report();
        r.adapter.implementation = None;
        assert!(markdown(&r).starts_with("# ASR conformance: unknown implementation\n"));
    }

    #[test]
    fn html_is_one_escaped_document_with_details() {
        let page = html(&report());
        assert!(page.starts_with("<!DOCTYPE html>\n"));
        assert!(page.ends_with("</html>\n"));
        assert_eq!(page.matches("<html").count(), 1);
        assert_eq!(page.matches("<body>").count(), 1);
        assert!(!page.contains("<script"), "untrusted text must be escaped");
        assert!(!page.to_lowercase().contains("<script"));
        assert!(
            page.contains("rejected &lt;script&gt;alert(1)&lt;/script&gt; &amp; more"),
            "detail escaped"
        );
        assert!(
            page.contains(
                "panic: &lt;script&gt;alert(1)&lt;/script&gt;\n\\u{1b}[31mred &amp; &lt;bold&gt;"
            ),
            "stderr escaped"
        );
        assert!(!page.contains('\u{1b}'));
        assert_eq!(
            page.matches("<details").count(),
            3,
            "fail, timeout and protocol-error"
        );
        assert!(page.contains("<span class=\"add\">+valid: true</span>"));
        assert!(page.contains("<span class=\"del\">-valid: false</span>"));
        assert!(page.contains("<span class=\"verdict v-conformant\">conformant</span>"));
        assert!(page.contains("<span class=\"verdict v-non-conformant\">non-conformant</span>"));
        assert!(page.contains("<span class=\"verdict v-non-strict\">non-strict</span>"));
        assert!(page.contains("<span class=\"verdict v-untested\">untested</span>"));
        assert!(!page.contains("ASR-215"));
        assert!(page.contains("<code>./adapter --flag &#39;two words&#39;</code>"));
        for external in ["<link", "src=", "@import", "url(", "@font-face"] {
            assert!(!page.contains(external), "nothing is fetched: {external}");
        }
        let mut evil = report();
        evil.cases[3].issue = Some("javascript:alert(1)".into());
        assert!(!html(&evil).contains("href=\"javascript"));
    }

    #[test]
    fn junit_counts_marks_and_escapes() {
        let xml = junit(&report());
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"));
        assert!(
            xml.contains("<testsuite name=\"asr-ctk\" tests=\"5\" failures=\"1\" errors=\"2\" skipped=\"1\" time=\"6.170\">"),
            "{xml}"
        );
        assert_eq!(xml.matches("<testcase ").count(), 5);
        assert!(xml.contains(
            "<testcase classname=\"ASR-231\" name=\"messages/ASR-231/n_bad_role\" time=\"1.234\">"
        ));
        assert!(xml.contains(
            "<failure message=\"the stream must be rejected &lt;script&gt;alert(1)&lt;/script&gt; &amp; more\">--- expected\n"
        ));
        assert!(
            xml.contains("<error type=\"timeout\" message=\"no answer within 5 s\">"),
            "{xml}"
        );
        assert!(xml.contains("<error type=\"protocol-error\""));
        assert!(xml.contains(
            "<skipped message=\"blobs are not implemented (https://example.invalid/issues/7)\"/>"
        ));
        assert!(xml.contains("<system-err>panic: &lt;script&gt;alert(1)&lt;/script&gt;\n\\u{1b}[31mred &amp; &lt;bold&gt;\\u{1b}[0m\n</system-err>"));
        assert!(!xml.contains('\u{1b}'), "control characters are escaped");
        assert!(!xml.contains("<script"));
        assert!(xml.contains("<testcase classname=\"ASR-212\" name=\"messages/ASR-212/y_image_blob_only\" time=\"1.234\"/>"));
        assert!(xml.ends_with("  </testsuite>\n</testsuites>\n"));
        assert_eq!(
            xml_attr("a\n\"b\"\u{0}\u{fffe}"),
            "a&#10;&quot;b&quot;\\u{0}",
            "a control character shown, a non-character dropped"
        );
    }

    #[test]
    fn badge_colour_follows_the_verdicts() {
        use RuleVerdict::{
            Conformant as C, NonConformant as N, NonStrict as S, NotApplicable as A, Untested as U,
        };
        let mut r = report();
        let b = badge(&r);
        assert_eq!(b["schemaVersion"], 1);
        assert_eq!(b["label"], "ASR conformance");
        assert_eq!(b["message"], "1/4 rules");
        assert_eq!(b["color"], "red");

        let set = |r: &mut RunReport, verdicts: &[RuleVerdict]| {
            for (rule, v) in r.rules.iter_mut().zip(verdicts) {
                rule.verdict = *v;
            }
        };
        set(&mut r, &[C, C, S, U, C, A]);
        assert_eq!(
            (badge(&r)["message"].clone(), badge(&r)["color"].clone()),
            ("3/4 rules".into(), "yellow".into())
        );
        set(&mut r, &[C, C, C, U, C, A]);
        assert_eq!(
            (badge(&r)["message"].clone(), badge(&r)["color"].clone()),
            ("4/4 rules".into(), "brightgreen".into())
        );
        set(&mut r, &[N, S, C, U, C, A]);
        assert_eq!(badge(&r)["color"], "red");
        set(&mut r, &[U, U, A, U, A, A]);
        assert_eq!(
            (badge(&r)["message"].clone(), badge(&r)["color"].clone()),
            ("untested".into(), "lightgrey".into())
        );
    }

    fn schema() -> jsonschema::Validator {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../schemas/report.schema.json"))
                .expect("schema is JSON");
        jsonschema::validator_for(&schema).expect("schema compiles")
    }

    #[test]
    fn the_report_validates_against_its_schema() {
        let validator = schema();
        let mut r = report();
        let json = serde_json::to_value(&r).expect("serializes");
        let errors: Vec<String> = validator
            .iter_errors(&json)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:?}");

        r.adapter.implementation = None;
        r.shards = vec!["1/2".into(), "2/2".into()];
        r.totals.clear();
        r.cases.clear();
        let json = serde_json::to_value(&r).expect("serializes");
        assert!(
            validator.is_valid(&json),
            "optional members may be left out"
        );
    }

    #[test]
    fn the_schema_refuses_unknown_members() {
        let validator = schema();
        let json = serde_json::to_value(report()).expect("serializes");

        let mut top = json.clone();
        top["extra"] = serde_json::json!(1);
        assert!(!validator.is_valid(&top), "unknown top-level member");

        let mut nested = json.clone();
        nested["cases"][0]["extra"] = serde_json::json!(1);
        assert!(!validator.is_valid(&nested), "unknown member of a case");

        let mut totals = json.clone();
        totals["totals"]["passed"] = serde_json::json!(1);
        assert!(!validator.is_valid(&totals), "totals are keyed by outcome");

        let mut verdict = json;
        verdict["rules"][0]["verdict"] = serde_json::json!("nonConformant");
        assert!(!validator.is_valid(&verdict), "verdicts are kebab-case");
    }
}
