//! The report as Markdown.

use super::{NO_RULE_APPLIES, RowKind, View, escape_controls, is_web_link, xml_char};
use crate::conformance::{CaseResult, RunReport};
use crate::diagnostic::MAX_PER_STREAM;
use std::fmt::Write as _;

/// The report as Markdown: metadata, totals, a table of the applicable rules, then the failing
/// cases (with their diffs) and the skipped ones.
pub fn markdown(report: &RunReport) -> String {
    let view = View::of(report);
    let mut out = String::new();
    let _ = writeln!(out, "# ASR conformance: {}\n", md_text(&view.title));
    for row in &view.about {
        let value = match row.kind {
            RowKind::Code => code_span(&row.value),
            RowKind::Link if is_web_link(&row.value) => format!("<{}>", row.value),
            RowKind::Text | RowKind::Link => md_text(&row.value),
            RowKind::Warning => {
                let _ = writeln!(out, "- **{}:** {}", row.label, md_text(&row.value));
                continue;
            }
        };
        let _ = write!(out, "- {}: {value}", row.label);
        if let Some(note) = &row.note {
            let _ = write!(out, " ({})", md_text(note));
        }
        out.push('\n');
    }

    let totals: Vec<String> = view
        .totals
        .iter()
        .map(|(o, n)| format!("{n} {}", o.as_str()))
        .collect();
    let _ = writeln!(out, "\n**Totals:** {}\n", totals.join(", "));
    let (not_kept, of_cases) = report
        .cases
        .iter()
        .filter(|c| c.findings_not_kept > 0)
        .fold((0u64, 0usize), |(n, cases), c| {
            (n.saturating_add(c.findings_not_kept), cases + 1)
        });
    if not_kept > 0 {
        let _ = writeln!(
            out,
            "**Findings not kept:** {not_kept} of the answers to {of_cases} case(s) ({}).\n",
            not_kept_note()
        );
    }

    if !view.marked.is_empty() {
        out.push_str("## Against the expectations\n\n");
        for m in &view.marked {
            let _ = write!(
                out,
                "- {}: {} ({})",
                m.mark,
                code_span(&m.case.name),
                m.case.outcome.as_str()
            );
            if !m.reason.is_empty() {
                let _ = write!(out, ": {}", md_text(&m.reason));
            }
            out.push('\n');
        }
        out.push('\n');
    }

    out.push_str("## Rules\n\n");
    if view.rules.is_empty() {
        let _ = writeln!(out, "{NO_RULE_APPLIES}");
    } else {
        let _ = writeln!(out, "| {} |", view.rule_columns.join(" | "));
        // Names on the left, numbers on the right, words (a campaign's) on the left.
        let numbers = 3..3 + view.rules.first().map_or(0, |r| r.counts.len());
        let align: Vec<&str> = view
            .rule_columns
            .iter()
            .enumerate()
            .map(|(i, _)| if numbers.contains(&i) { "---:" } else { "---" })
            .collect();
        let _ = writeln!(out, "| {} |", align.join(" | "));
        for r in &view.rules {
            let mut counts: Vec<String> = r.counts.iter().map(ToString::to_string).collect();
            if view.rule_columns.len() > 3 + r.counts.len() {
                counts.push(md_text(&r.kinds));
                let found: Vec<String> = r.found.iter().map(|name| code_span(name)).collect();
                counts.push(found.join(", "));
            }
            let mut verdict = if r.decisions.is_empty() {
                r.verdict.as_str().to_owned()
            } else {
                format!(
                    "{} (decisions: {})",
                    r.verdict.as_str(),
                    md_text(&r.decisions)
                )
            };
            if !r.by_role.is_empty() {
                let _ = write!(verdict, " (by role: {})", md_text(&r.by_role));
            }
            let _ = writeln!(
                out,
                "| {} | {} | {verdict} | {} |",
                md_text(r.id),
                md_text(&r.levels),
                counts.join(" | ")
            );
        }
    }

    out.push_str("\n## Failures\n\n");
    if view.failures.is_empty() {
        out.push_str("None.\n");
    }
    for case in &view.failures {
        failure(&mut out, case);
    }

    if !view.skipped.is_empty() {
        out.push_str("## Skipped or not run\n\n");
        for case in &view.skipped {
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

/// What a count of findings not kept means, where it is shown.
fn not_kept_note() -> String {
    format!(
        "of each stream answer the kit keeps the first {MAX_PER_STREAM} findings, and beyond them only those that can change the judgement; the judgement is as if all were kept"
    )
}

fn failure(out: &mut String, case: &CaseResult) {
    let _ = writeln!(out, "### {}\n", code_span(&case.name));
    let _ = writeln!(out, "- Id: {}", md_text(&case.id));
    let _ = writeln!(out, "- Rules: {}", md_text(&case.rules.join(", ")));
    let _ = writeln!(out, "- Outcome: {}", case.outcome.as_str());
    if !case.attributions.is_empty() {
        let charged: Vec<String> = case.attributions.iter().map(super::charge_text).collect();
        let _ = writeln!(out, "- Charged to: {}", md_text(&charged.join("; ")));
    }
    if case.findings_not_kept > 0 {
        let _ = writeln!(
            out,
            "- Findings not kept: {} ({})",
            case.findings_not_kept,
            not_kept_note()
        );
    }
    match case.detail.as_deref() {
        Some(detail) if detail.contains('\n') => {
            let _ = write!(out, "- Detail:\n\n{}", fence(detail, "text"));
        }
        Some(detail) => {
            let _ = writeln!(out, "- Detail: {}", md_text(detail));
        }
        None => {}
    }
    if let Some(difference) = case
        .expected
        .as_deref()
        .zip(case.actual.as_deref())
        .and_then(|(e, a)| super::difference::first_difference(e, a))
    {
        let _ = writeln!(
            out,
            "- First difference: {}",
            code_span(&difference.to_string())
        );
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
    use crate::render::fixture::report;

    #[test]
    fn findings_not_kept_are_counted_in_the_summary_and_at_the_case() {
        let mut report = report();
        assert!(!markdown(&report).contains("not kept:"));
        let failed = report
            .cases
            .iter()
            .position(|c| c.outcome == crate::conformance::Outcome::Fail)
            .expect("a failure");
        report.cases[failed].findings_not_kept = 590_000;
        report.cases[0].findings_not_kept += 10;
        let md = markdown(&report);
        let total = 590_000 + u64::from(failed != 0) * 10;
        assert!(
            md.contains(&format!(
                "**Findings not kept:** {total} of the answers to "
            )),
            "{md}"
        );
        assert!(md.contains("- Findings not kept: 590000 (of each stream answer the kit keeps the first 10000 findings"), "{md}");
    }

    #[test]
    fn markdown_has_the_rule_table_and_the_failure_diff() {
        let md = markdown(&report());
        assert!(md.starts_with("# ASR conformance: asr-go 1.2.3\n"), "{md}");
        assert!(md.contains("- Kit: asr-ctk 0.1.0\n"), "{md}");
        assert!(
            md.contains("- Implementation: asr-go 1.2.3 (Go)\n- Homepage: <https://example.invalid/asr-go>\n"),
            "{md}"
        );
        assert!(
            md.contains(&format!(
                "- Case set: `sha256:{}` (120 cases in the corpus)\n",
                "ab".repeat(32)
            )),
            "{md}"
        );
        assert!(
            md.contains("- Adapter: `./adapter --flag 'two words'`\n"),
            "{md}"
        );
        assert!(md.contains("**Totals:** 1 pass, 1 fail, 0 non-strict, 1 skipped, 0 error, 1 timeout, 0 crash, 1 protocol-error"), "{md}");
        assert!(
            md.contains(
                "| Rule | Levels | Verdict | Cases | Passed | Failed | Non-strict | Skipped | Errored | Charged from other cases | Lenient | Over-strict |\n\
                 | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
            ),
            "{md}"
        );
        assert!(
            md.contains(
                "| ASR-231 | MUST | non-conformant | 1 | 0 | 1 | 0 | 0 | 0 | 0 | 1 | 0 |\n"
            ),
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
    fn control_characters_are_escaped_and_escapes_shown_as_they_are() {
        let mut report = report();
        report.cases[1].detail = Some("\u{1b}[2J cleared".into());
        report.cases[1].stderr = Some("\u{1b}[H home\n".into());
        let md = markdown(&report);
        assert!(!md.contains('\u{1b}'), "{md}");
        // Outside code, the backslash and the bracket are escaped again, to show them as they are.
        assert!(md.contains("\\\\u{1b}\\[2J cleared"), "{md}");
        assert!(md.contains("\\u{1b}[H home"), "{md}");
    }

    #[test]
    fn an_incomplete_run_is_said_in_bold() {
        let mut report = report();
        report.incomplete = Some("3 case(s) not run: the run was interrupted".into());
        assert!(markdown(&report).contains("- **Incomplete:** 3 case(s) not run"));
    }

    #[test]
    fn a_failure_says_where_its_answer_first_differs() {
        let md = markdown(&report());
        assert!(
            md.contains(
                "- First difference: `first difference at character 7 (line 1, column 8): \
                 expected \"valid: false\\nASR-231 error line 2\\n\", actual \"valid: true\\n\"; \
                 expected 34 characters, actual 12`\n"
            ),
            "{md}"
        );
    }

    #[test]
    fn fences_and_spans_hold_backticks() {
        assert_eq!(fence("a\n```\nb", "text"), "````text\na\n```\nb\n````\n");
        assert_eq!(code_span("a`b"), "`` a`b ``");
        assert_eq!(md_text("a|b <x>\nc"), "a\\|b \\<x\\> c");
        let mut r = report();
        r.adapter.implementation = None;
        r.rules.clear();
        let md = markdown(&r);
        assert!(md.starts_with("# ASR conformance: unknown implementation\n"));
        assert!(
            md.contains(&format!("## Rules\n\n{NO_RULE_APPLIES}\n")),
            "{md}"
        );
    }
}
