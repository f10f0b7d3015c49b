//! The report as JUnit XML, for CI.

use super::{View, escape_controls, xml_char};
use crate::conformance::{CaseResult, Outcome, RunReport};
use crate::protocol::ProtocolRole;
use std::fmt::Write as _;

/// The report as JUnit XML: one `<testsuite>`, one `<testcase>` per case, its class the case's
/// first rule. Failures, errors (with the outcome as type) and skips are marked; stderr goes to
/// `<system-err>`.
pub fn junit(report: &RunReport) -> String {
    let view = View::of(report);
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
    for row in &view.about {
        let _ = writeln!(
            out,
            "      <property name=\"{}\" value=\"{}\"/>",
            xml_attr(row.key),
            xml_attr(&row.value)
        );
    }
    out.push_str("    </properties>\n");

    for case in &report.cases {
        testcase(&mut out, case);
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

fn testcase(out: &mut String, case: &CaseResult) {
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

/// Text escaped for XML character data; characters not allowed in XML 1.0 dropped.
fn xml_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in escape_controls(s).chars().filter(|c| xml_char(*c)) {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
    out
}

/// Text escaped for an XML attribute value: line breaks and tabs kept as character references,
/// so attribute-value normalization does not fold them into spaces.
fn xml_attr(s: &str) -> String {
    xml_text(s).replace('\n', "&#10;").replace('\t', "&#9;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixture::report;

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
    fn control_characters_are_shown_as_escapes() {
        let mut report = report();
        report.cases[1].detail = Some("\u{1b}[2J cleared".into());
        report.cases[1].stderr = Some("\u{1b}[H home\n".into());
        let xml = junit(&report);
        assert!(!xml.contains('\u{1b}'), "{xml}");
        assert!(xml.contains("\\u{1b}[2J cleared"), "{xml}");
        assert!(xml.contains("\\u{1b}[H home"), "{xml}");
    }
}
