//! The report as one self-contained HTML page.

use super::difference::{first_difference, inline_hunks};
use super::streams::{STREAM_BYTES, StreamTexts};
use super::{NO_RULE_APPLIES, RowKind, View, escape_controls, is_web_link, xml_char};
use crate::conformance::{CaseResult, RunReport};
use similar::ChangeTag;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

/// The report as one self-contained HTML page: inline CSS, no script, nothing fetched. Every
/// failing case is a `<details>` element; every piece of text from the report is escaped.
pub fn html(report: &RunReport) -> String {
    html_with_streams(report, &StreamTexts::new())
}

/// [`html`], each failing case with the start of its streams as `streams` holds them.
pub fn html_with_streams(report: &RunReport, streams: &StreamTexts) -> String {
    let view = View::of(report);
    // The failures each rule has, for the links from the rule table and the index by rule.
    let mut by_rule: BTreeMap<&str, Vec<&CaseResult>> = BTreeMap::new();
    for case in &view.failures {
        for rule in failure_rules(case) {
            by_rule.entry(rule).or_default().push(case);
        }
    }
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n",
    );
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(out, "<title>ASR conformance: {}</title>", esc(&view.title));
    let _ = writeln!(out, "<style>{CSS}</style>\n</head>\n<body>");
    let _ = writeln!(out, "<h1>ASR conformance: {}</h1>", esc(&view.title));
    let _ = writeln!(
        out,
        "<nav class=\"toc\"><a class=\"jump\" href=\"#failures\">Failures: {}</a> \
         <a href=\"#totals\">Totals</a> <a href=\"#rules\">Rules</a>{}</nav>",
        view.failures.len(),
        if view.skipped.is_empty() {
            ""
        } else {
            " <a href=\"#skipped\">Skipped or not run</a>"
        }
    );

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
        "<h2 id=\"totals\">Totals</h2>\n<div class=\"bar\" role=\"img\" aria-label=\"cases by outcome\">",
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

    out.push_str("<h2 id=\"rules\">Rules</h2>\n");
    if view.rules.is_empty() {
        let _ = writeln!(out, "<p>{NO_RULE_APPLIES}</p>");
    } else {
        let _ = writeln!(
            out,
            "<table>\n<thead><tr><th>{}</th></tr></thead>\n<tbody>",
            view.rule_columns.join("</th><th>")
        );
        for r in &view.rules {
            let mut counts: Vec<String> = r.counts.iter().map(ToString::to_string).collect();
            if view.rule_columns.len() > 3 + r.counts.len() {
                counts.push(esc(&r.kinds));
                // Each case found, a link to its failure below.
                let found: Vec<String> = r
                    .found
                    .iter()
                    .map(
                        |name| match view.failures.iter().find(|c| c.name == *name) {
                            Some(case) => {
                                format!("<a href=\"#{}\">{}</a>", case_anchor(case), esc(name))
                            }
                            None => esc(name),
                        },
                    )
                    .collect();
                counts.push(found.join(", "));
            }
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
            let id = if by_rule.contains_key(r.id) {
                format!(
                    "<a href=\"#{}\">{}</a>",
                    anchor("failures-of-", r.id),
                    esc(r.id)
                )
            } else {
                esc(r.id)
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td><span class=\"verdict v-{2}\">{2}</span>{decisions}</td><td>{3}</td></tr>",
                id,
                esc(&r.levels),
                r.verdict.as_str(),
                counts.join("</td><td>")
            );
        }
        out.push_str("</tbody>\n</table>\n");
    }

    out.push_str("<h2 id=\"failures\">Failures</h2>\n");
    if view.failures.is_empty() {
        out.push_str("<p>None.</p>\n");
    } else {
        out.push_str("<ul class=\"by-rule\">\n");
        for (rule, cases) in &by_rule {
            let links: Vec<String> = cases
                .iter()
                .map(|c| format!("<a href=\"#{}\">{}</a>", case_anchor(c), esc(&c.name)))
                .collect();
            let _ = writeln!(
                out,
                "<li id=\"{}\"><code>{}</code>: {}</li>",
                anchor("failures-of-", rule),
                esc(rule),
                links.join(", ")
            );
        }
        out.push_str("</ul>\n");
    }
    for case in &view.failures {
        failure(
            &mut out,
            case,
            streams.get(&case.name).map_or(&[], Vec::as_slice),
        );
    }

    if !view.skipped.is_empty() {
        out.push_str("<h2 id=\"skipped\">Skipped or not run</h2>\n<ul class=\"skipped\">\n");
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

/// The rules a failure is listed under: those it was charged to, else the case's own.
fn failure_rules(case: &CaseResult) -> Vec<&str> {
    let mut charged: Vec<&str> = case
        .attributions
        .iter()
        .filter_map(|a| a.rule.as_deref())
        .collect();
    charged.sort_unstable();
    charged.dedup();
    if charged.is_empty() {
        case.rules.iter().map(String::as_str).collect()
    } else {
        charged
    }
}

/// An id made of `prefix` and `text`, safe in an attribute and a fragment whatever the text:
/// ASCII letters, digits and `-` kept, every other character as `_<hex>_`, so that two texts
/// never share an id.
pub(super) fn anchor(prefix: &str, text: &str) -> String {
    let mut id = prefix.to_owned();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '-' {
            id.push(c);
        } else {
            let _ = write!(id, "_{:x}_", u32::from(c));
        }
    }
    id
}

/// The id of a failing case: a case is run once per role.
fn case_anchor(case: &CaseResult) -> String {
    anchor(&format!("case-{}-", case.role.as_str()), &case.name)
}

/// The most unchanged characters of one line of the inline diff shown in full; of a longer
/// run, its start and end are shown.
const UNCHANGED_SHOWN: usize = 160;

/// The time the inline diff of one failure may take.
const DIFF_BUDGET: Duration = Duration::from_millis(500);

fn failure(out: &mut String, case: &CaseResult, streams: &[super::streams::StreamText]) {
    let _ = writeln!(
        out,
        "<details class=\"case\" id=\"{2}\">\n<summary><span class=\"outcome o-{0}\">{0}</span> <code>{1}</code></summary>",
        case.outcome.as_str(),
        esc(&case.name),
        case_anchor(case)
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
    let texts = case.expected.as_deref().zip(case.actual.as_deref());
    if let Some(difference) = texts.and_then(|(e, a)| first_difference(e, a)) {
        meta_row(
            out,
            "First difference",
            &format!("<code>{}</code>", esc(&difference.to_string())),
        );
    }
    out.push_str("</dl>\n");
    if let Some((expected, actual)) = texts {
        out.push_str("<h4>Diff</h4>\n<pre class=\"diff\">");
        for hunk in inline_hunks(expected, actual, 3, DIFF_BUDGET) {
            out.push_str("<span class=\"hunk\">@@</span>\n");
            for line in hunk {
                let (class, sign, mark) = match line.tag {
                    ChangeTag::Delete => ("del", '-', "del"),
                    ChangeTag::Insert => ("add", '+', "ins"),
                    ChangeTag::Equal => ("ctx", ' ', ""),
                };
                let whole = line.runs.len() == 1;
                let _ = write!(out, "<span class=\"{class}\">{sign}");
                for (changed, text) in &line.runs {
                    let text = text.strip_suffix('\n').unwrap_or(text);
                    if text.is_empty() {
                        continue;
                    }
                    if *changed && !whole {
                        let _ = write!(out, "<{mark}>{}</{mark}>", esc(text));
                    } else {
                        out.push_str(&unchanged(text));
                    }
                }
                out.push_str("</span>\n");
            }
        }
        out.push_str("</pre>\n");
        let _ = writeln!(
            out,
            "<details class=\"full\"><summary>Expected and actual in full</summary>\n\
             <h4>Expected</h4>\n<pre>{}</pre>\n<h4>Actual</h4>\n<pre>{}</pre>\n</details>",
            esc(expected),
            esc(actual)
        );
    } else {
        if let Some(expected) = &case.expected {
            let _ = writeln!(out, "<h4>Expected</h4>\n<pre>{}</pre>", esc(expected));
        }
        if let Some(actual) = &case.actual {
            let _ = writeln!(out, "<h4>Actual</h4>\n<pre>{}</pre>", esc(actual));
        }
        if let Some(diff) = &case.diff {
            line_diff(out, diff);
        }
    }
    for stream in streams {
        let shown = if stream.bytes > STREAM_BYTES as u64 {
            format!("{} bytes, the first {STREAM_BYTES} shown", stream.bytes)
        } else {
            format!("{} bytes", stream.bytes)
        };
        let _ = writeln!(
            out,
            "<details class=\"stream\"><summary>Stream <code>{}</code> ({shown})</summary>\n<pre>{}</pre>\n</details>",
            esc(&stream.file),
            esc(&stream.text)
        );
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

/// Unchanged text of a changed line, escaped: a long run as its start and end, with the
/// characters left out counted.
fn unchanged(text: &str) -> String {
    let count = text.chars().count();
    if count <= 2 * UNCHANGED_SHOWN {
        return esc(text);
    }
    let head: String = text.chars().take(UNCHANGED_SHOWN).collect();
    let tail: String = text.chars().skip(count - UNCHANGED_SHOWN).collect();
    format!(
        "{}<span class=\"skip\">[{} characters]</span>{}",
        esc(&head),
        count - 2 * UNCHANGED_SHOWN,
        esc(&tail)
    )
}

/// A unified diff, its lines coloured by what they are.
fn line_diff(out: &mut String, diff: &str) {
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
.stderr{background:#fff8f0}\
.diff del{background:#ffc1c0;text-decoration:none}.diff ins{background:#aceebb;text-decoration:none}\
.diff .skip{color:#57606a;font-style:italic}\
.toc{display:flex;flex-wrap:wrap;gap:.4rem 1rem;margin:.5rem 0}.toc .jump{font-weight:600}\
.by-rule{padding-left:1.2rem}details.full,details.stream{margin:.5rem 0}";

/// Text escaped for HTML content and attribute values; characters not allowed in XML 1.0 dropped.
pub(super) fn esc(s: &str) -> String {
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
    use crate::render::fixture::{SCRIPT, report};

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
            page.matches("<details class=\"case\"").count(),
            3,
            "fail, timeout and protocol-error"
        );
        assert!(
            page.contains("<span class=\"add\">+valid: <ins>tru</ins>e</span>"),
            "{page}"
        );
        assert!(page.contains("<span class=\"del\">-valid: <del>fals</del>e</span>"));
        assert!(
            page.contains("<span class=\"add\">+garbage</span>"),
            "lines too unlike are changed as a whole"
        );
        assert!(page.contains(
            "<thead><tr><th>Rule</th><th>Levels</th><th>Verdict</th><th>Cases</th><th>Passed</th>\
             <th>Failed</th><th>Non-strict</th><th>Skipped</th><th>Errored</th><th>Charged from other cases</th>\
             <th>Lenient</th><th>Over-strict</th></tr></thead>"
        ));
        assert!(page.contains(
            "<tr><td><a href=\"#failures-of-ASR-231\">ASR-231</a></td><td>MUST</td><td><span class=\"verdict v-non-conformant\">non-conformant</span></td>\
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
    fn the_page_links_its_sections_its_rules_and_their_failures() {
        let mut r = report();
        r.cases[1].name = format!("messages/ASR-231/n_\"{SCRIPT}");
        let page = html(&r);
        assert!(
            page.contains(
                "<nav class=\"toc\"><a class=\"jump\" href=\"#failures\">Failures: 3</a>"
            ),
            "{page}"
        );
        for section in ["failures", "totals", "rules", "skipped"] {
            assert!(page.contains(&format!("href=\"#{section}\"")), "{section}");
            assert!(
                page.contains(&format!("<h2 id=\"{section}\">")),
                "{section}"
            );
        }
        let failed = "case-validator-messages_2f_ASR-231_2f_n_5f__22__3c_script_3e_alert_28_1_29__3c__2f_script_3e_";
        assert!(
            page.contains(&format!("<details class=\"case\" id=\"{failed}\">")),
            "{page}"
        );
        assert!(
            page.contains(&format!(
                "<li id=\"failures-of-ASR-231\"><code>ASR-231</code>: <a href=\"#{failed}\">"
            )),
            "{page}"
        );
        assert!(page.contains("<a href=\"#failures-of-ASR-217\">ASR-217</a>"));
        assert!(
            !page.contains("href=\"#failures-of-ASR-212\""),
            "a rule without failures links nowhere"
        );
        assert_eq!(anchor("x-", "a_b"), "x-a_5f_b");
        assert_ne!(anchor("x-", "a_5f_b"), anchor("x-", "a_b"));
        assert!(!page.contains("<script"));
    }

    #[test]
    fn a_changed_record_is_diffed_by_characters_and_the_texts_are_folded() {
        let mut r = report();
        let record = format!("{{\"text\":\"{}\"}}\n", "a".repeat(20_000));
        r.cases[1].expected = Some(format!("{{\"type\":\"session\"}}\n{record}"));
        r.cases[1].actual = Some(format!(
            "{{\"type\":\"session\"}}\n{}",
            record.replacen("aaa", "a<b>a", 1)
        ));
        let page = html(&r);
        assert!(page.contains("<ins>&lt;b&gt;</ins>"), "{page}");
        assert!(page.contains("<del>a</del>"), "{page}");
        assert!(
            page.contains("<span class=\"skip\">["),
            "a long unchanged run is cut"
        );
        assert!(
            page.contains("<dt>First difference</dt><dd><code>first difference at character 29 (line 2, column 11)"),
            "{page}"
        );
        let diff = &page[page.find("<pre class=\"diff\">").expect("a diff")..];
        let diff = &diff[..diff.find("</pre>").expect("its end")];
        assert!(diff.len() < 2_000, "{} bytes: {diff}", diff.len());
        let fold = page
            .find("<details class=\"full\"><summary>Expected and actual in full</summary>")
            .expect("the texts folded");
        assert!(page[fold..].contains(&"a".repeat(20_000)));
    }

    #[test]
    fn each_failure_shows_the_start_of_its_streams() {
        let streams: StreamTexts = [(
            "messages/ASR-231/n_bad_role".to_owned(),
            vec![super::super::streams::StreamText {
                file: "messages/ASR-231/n_bad_role.jsonl".into(),
                text: format!("{{\"x\":\"{SCRIPT}\"}}\n"),
                bytes: 40_000,
            }],
        )]
        .into_iter()
        .collect();
        let page = html_with_streams(&report(), &streams);
        assert!(
            page.contains(
                "<details class=\"stream\"><summary>Stream <code>messages/ASR-231/n_bad_role.jsonl</code> \
                 (40000 bytes, the first 16384 shown)</summary>\n<pre>{&quot;x&quot;:&quot;&lt;script&gt;"
            ),
            "{page}"
        );
        assert_eq!(page.matches("class=\"stream\"").count(), 1);
        assert!(!html(&report()).contains("class=\"stream\""));
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
