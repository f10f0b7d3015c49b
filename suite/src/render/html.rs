//! The report as one self-contained HTML page.

use super::{NO_RULE_APPLIES, RULE_COLUMNS, RowKind, View, escape_controls, is_web_link, xml_char};
use crate::conformance::{CaseResult, RunReport};
use std::fmt::Write as _;

/// The report as one self-contained HTML page: inline CSS, no script, nothing fetched. Every
/// failing case is a `<details>` element; every piece of text from the report is escaped.
pub fn html(report: &RunReport) -> String {
    let view = View::of(report);
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n",
    );
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(out, "<title>ASR conformance: {}</title>", esc(&view.title));
    let _ = writeln!(out, "<style>{CSS}</style>\n</head>\n<body>");
    let _ = writeln!(out, "<h1>ASR conformance: {}</h1>", esc(&view.title));

    out.push_str("<dl class=\"meta\">\n");
    for row in &view.about {
        let mut value = match row.kind {
            RowKind::Text => esc(&row.value),
            RowKind::Code => format!("<code>{}</code>", esc(&row.value)),
            RowKind::Link => link(&row.value),
            RowKind::Warning => format!("<strong>{}</strong>", esc(&row.value)),
        };
        if let Some(note) = &row.note {
            let _ = write!(value, " ({})", esc(note));
        }
        meta_row(&mut out, row.label, &value);
    }
    out.push_str("</dl>\n");

    out.push_str(
        "<h2>Totals</h2>\n<div class=\"bar\" role=\"img\" aria-label=\"cases by outcome\">",
    );
    for (o, n) in &view.totals {
        if *n > 0 {
            let _ = write!(
                out,
                "<span class=\"o-{0}\" style=\"flex-grow:{n}\" title=\"{n} {0}\"></span>",
                o.as_str()
            );
        }
    }
    out.push_str("</div>\n<ul class=\"legend\">");
    for (o, n) in &view.totals {
        let _ = write!(
            out,
            "<li><span class=\"dot o-{0}\"></span>{n} {0}</li>",
            o.as_str()
        );
    }
    out.push_str("</ul>\n");

    if !view.marked.is_empty() {
        out.push_str("<h2>Against the expectations</h2>\n<ul class=\"marked\">\n");
        for m in &view.marked {
            let _ = write!(
                out,
                "<li>{}: <code>{}</code> ({})",
                m.mark,
                esc(&m.case.name),
                m.case.outcome.as_str()
            );
            if !m.reason.is_empty() {
                let _ = write!(out, ": {}", esc(&m.reason));
            }
            out.push_str("</li>\n");
        }
        out.push_str("</ul>\n");
    }

    out.push_str("<h2>Rules</h2>\n");
    if view.rules.is_empty() {
        let _ = writeln!(out, "<p>{NO_RULE_APPLIES}</p>");
    } else {
        let _ = writeln!(
            out,
            "<table>\n<thead><tr><th>{}</th></tr></thead>\n<tbody>",
            RULE_COLUMNS.join("</th><th>")
        );
        for r in &view.rules {
            let counts: Vec<String> = r.counts.iter().map(ToString::to_string).collect();
            let decisions = if r.decisions.is_empty() {
                String::new()
            } else {
                format!(" <small>decisions: {}</small>", esc(&r.decisions))
            };
            let decisions = if r.by_role.is_empty() {
                decisions
            } else {
                format!("{decisions} <small>by role: {}</small>", esc(&r.by_role))
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td><span class=\"verdict v-{2}\">{2}</span>{decisions}</td><td>{3}</td></tr>",
                esc(r.id),
                esc(&r.levels),
                r.verdict.as_str(),
                counts.join("</td><td>")
            );
        }
        out.push_str("</tbody>\n</table>\n");
    }

    out.push_str("<h2>Failures</h2>\n");
    if view.failures.is_empty() {
        out.push_str("<p>None.</p>\n");
    }
    for case in &view.failures {
        failure(&mut out, case);
    }

    if !view.skipped.is_empty() {
        out.push_str("<h2>Skipped or not run</h2>\n<ul class=\"skipped\">\n");
        for case in &view.skipped {
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

fn failure(out: &mut String, case: &CaseResult) {
    let _ = writeln!(
        out,
        "<details class=\"case\">\n<summary><span class=\"outcome o-{0}\">{0}</span> <code>{1}</code></summary>",
        case.outcome.as_str(),
        esc(&case.name)
    );
    out.push_str("<dl>\n");
    meta_row(
        out,
        "Case",
        &format!("<code>{}</code> ({})", esc(&case.name), esc(&case.id)),
    );
    meta_row(out, "Rules", &esc(&case.rules.join(", ")));
    meta_row(out, "Outcome", case.outcome.as_str());
    if !case.attributions.is_empty() {
        let charged: Vec<String> = case.attributions.iter().map(super::charge_text).collect();
        meta_row(out, "Charged to", &esc(&charged.join("; ")));
    }
    if case.findings_not_kept > 0 {
        let count = format!(
            "{} (of each stream answer the kit keeps the first {} findings, and beyond them only those that can change the judgement)",
            case.findings_not_kept,
            crate::diagnostic::MAX_PER_STREAM
        );
        meta_row(out, "Findings not kept", &esc(&count));
    }
    if let Some(detail) = &case.detail {
        meta_row(
            out,
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

fn meta_row(out: &mut String, term: &str, html_value: &str) {
    let _ = writeln!(out, "<dt>{term}</dt><dd>{html_value}</dd>");
}

/// An escaped link for http(s) addresses; anything else (a `javascript:` address) as plain text.
fn link(s: &str) -> String {
    if is_web_link(s) {
        format!("<a href=\"{0}\">{0}</a>", esc(s))
    } else {
        esc(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixture::report;

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
        assert!(page.contains(
            "<thead><tr><th>Rule</th><th>Levels</th><th>Verdict</th><th>Cases</th><th>Passed</th>\
             <th>Failed</th><th>Non-strict</th><th>Skipped</th><th>Errored</th><th>Charged from other cases</th>\
             <th>Lenient</th><th>Over-strict</th></tr></thead>"
        ));
        assert!(page.contains(
            "<tr><td>ASR-231</td><td>MUST</td><td><span class=\"verdict v-non-conformant\">non-conformant</span></td>\
             <td>1</td><td>0</td><td>1</td><td>0</td><td>0</td><td>0</td><td>0</td><td>1</td><td>0</td></tr>"
        ), "{page}");
        assert!(page.contains("<span class=\"verdict v-conformant\">conformant</span>"));
        assert!(page.contains("<span class=\"verdict v-non-strict\">non-strict</span>"));
        assert!(page.contains("<span class=\"verdict v-untested\">untested</span>"));
        assert!(!page.contains("ASR-215"));
        assert!(page.contains("<code>./adapter --flag &#39;two words&#39;</code>"));
        assert!(page.contains(
            "<dt>Homepage</dt><dd><a href=\"https://example.invalid/asr-go\">https://example.invalid/asr-go</a></dd>"
        ));
        assert!(page.contains("(120 cases in the corpus)</dd>"));
        for external in ["<link", "src=", "@import", "url(", "@font-face"] {
            assert!(!page.contains(external), "nothing is fetched: {external}");
        }
        let mut evil = report();
        evil.cases[3].issue = Some("javascript:alert(1)".into());
        assert!(!html(&evil).contains("href=\"javascript"));
    }

    #[test]
    fn control_characters_are_shown_as_escapes() {
        let mut report = report();
        report.cases[1].detail = Some("\u{1b}[2J cleared".into());
        report.cases[1].stderr = Some("\u{1b}[H home\n".into());
        let page = html(&report);
        assert!(!page.contains('\u{1b}'), "{page}");
        assert!(page.contains("\\u{1b}[2J cleared"), "{page}");
        assert!(page.contains("\\u{1b}[H home"), "{page}");
    }

    #[test]
    fn an_incomplete_run_is_said_in_strong_text() {
        let mut report = report();
        report.incomplete = Some("3 case(s) not run".into());
        assert!(
            html(&report)
                .contains("<dt>Incomplete</dt><dd><strong>3 case(s) not run</strong></dd>")
        );
    }
}
