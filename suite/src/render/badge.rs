//! The report as a shields.io endpoint badge.

use super::View;
use crate::conformance::{RuleVerdict, RunReport};

/// A shields.io endpoint badge: conformant rules out of the applicable rules (untested ones
/// included: a rule without a case run is not certified), green when every one is
/// conformant, yellow when only SHOULD-level expectations failed or some rule is untested, red
/// when a rule is broken, grey when nothing was tested. A run that matches its expectations
/// (`--expect`) with known failures is "conformant with N known failures", yellow.
pub fn badge(report: &RunReport) -> serde_json::Value {
    let view = View::of(report);
    let count = |v: RuleVerdict| view.rules.iter().filter(|r| r.verdict == v).count();
    let conformant = count(RuleVerdict::Conformant);
    let non_conformant = count(RuleVerdict::NonConformant);
    let non_strict = count(RuleVerdict::NonStrict);
    let untested = count(RuleVerdict::Untested);
    let tested = conformant + non_conformant + non_strict;
    let (message, color) = if tested == 0 {
        ("untested".to_owned(), "lightgrey")
    } else {
        let color = if non_conformant > 0 {
            "red"
        } else if non_strict > 0 || untested > 0 {
            "yellow"
        } else {
            "brightgreen"
        };
        (format!("{conformant}/{} rules", tested + untested), color)
    };
    // A run that matches its expectations passes the gate: the badge says so, and how many
    // failures it lets through, rather than showing red for failures that are known.
    let (message, color) = match &report.expectations {
        Some(e) if e.matches() && e.known_failures > 0 => (
            format!("conformant with {} known failures", e.known_failures),
            "yellow",
        ),
        _ => (message, color),
    };
    // A run that did not run every case certifies nothing whole: it is never green.
    let (message, color) = match view.incomplete {
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

/// A badge (as [`badge`] gives it) as a flat SVG image, for a page or a README where no
/// badge service is reached: the label on grey, the message on its colour.
pub fn badge_svg(badge: &serde_json::Value) -> String {
    let text = |key: &str| badge.get(key).and_then(|v| v.as_str()).unwrap_or("");
    let (label, message) = (text("label"), text("message"));
    let fill = match text("color") {
        "brightgreen" => "#4c1",
        "yellow" => "#dfb317",
        "red" => "#e05d44",
        _ => "#9f9f9f",
    };
    let (left, right) = (text_width(label), text_width(message));
    let width = left + right;
    let (label, message) = (svg_text(label), svg_text(message));
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"20\" role=\"img\" aria-label=\"{label}: {message}\">\
<title>{label}: {message}</title>\
<rect width=\"{left}\" height=\"20\" fill=\"#555\"/><rect x=\"{left}\" width=\"{right}\" height=\"20\" fill=\"{fill}\"/>\
<g fill=\"#fff\" text-anchor=\"middle\" font-family=\"Verdana,DejaVu Sans,sans-serif\" font-size=\"11\">\
<text x=\"{}\" y=\"14\">{label}</text><text x=\"{}\" y=\"14\">{message}</text></g></svg>\n",
        left / 2,
        left + right / 2
    )
}

/// The width a text takes at 11px Verdana, near enough for a badge: 7px a character, and
/// the margins.
fn text_width(text: &str) -> usize {
    text.chars().count() * 7 + 10
}

/// Text escaped for SVG (XML) content and attributes.
fn svg_text(text: &str) -> String {
    text.chars()
        .filter(|c| super::xml_char(*c) && !c.is_control())
        .map(|c| match c {
            '&' => "&amp;".to_owned(),
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '"' => "&quot;".to_owned(),
            '\'' => "&#39;".to_owned(),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixture::report;

    #[test]
    fn badge_colour_follows_the_verdicts() {
        use RuleVerdict::{
            Conformant as C, NonConformant as N, NonStrict as S, NotApplicable as A, Untested as U,
        };
        let mut r = report();
        let b = badge(&r);
        assert_eq!(b["schemaVersion"], 1);
        assert_eq!(b["label"], "ASR conformance");
        assert_eq!(b["message"], "1/5 rules");
        assert_eq!(b["color"], "red");

        let set = |r: &mut RunReport, verdicts: &[RuleVerdict]| {
            for (rule, v) in r.rules.iter_mut().zip(verdicts) {
                rule.verdict = *v;
            }
        };
        set(&mut r, &[C, C, S, C, C, A]);
        assert_eq!(
            (badge(&r)["message"].clone(), badge(&r)["color"].clone()),
            ("4/5 rules".into(), "yellow".into())
        );
        set(&mut r, &[C, C, C, U, C, A]);
        assert_eq!(
            (badge(&r)["message"].clone(), badge(&r)["color"].clone()),
            ("4/5 rules".into(), "yellow".into()),
            "an untested rule is counted and keeps the badge from green"
        );
        set(&mut r, &[C, C, C, C, C, A]);
        assert_eq!(
            (badge(&r)["message"].clone(), badge(&r)["color"].clone()),
            ("5/5 rules".into(), "brightgreen".into())
        );
        set(&mut r, &[N, S, C, U, C, A]);
        assert_eq!(badge(&r)["color"], "red");
        set(&mut r, &[U, U, A, U, A, A]);
        assert_eq!(
            (badge(&r)["message"].clone(), badge(&r)["color"].clone()),
            ("untested".into(), "lightgrey".into())
        );
    }

    #[test]
    fn an_incomplete_run_is_never_green() {
        let mut report = report();
        for rule in &mut report.rules {
            rule.verdict = RuleVerdict::Conformant;
        }
        assert_eq!(badge(&report)["color"], "brightgreen");
        report.incomplete = Some("3 case(s) not run: the run was interrupted".into());
        let badge = badge(&report);
        assert_eq!(badge["color"], "lightgrey");
        assert_eq!(badge["message"], "incomplete, 6/6 rules");
    }

    #[test]
    fn the_svg_badge_shows_the_message_on_its_colour_and_escapes_it() {
        let mut report = report();
        for rule in &mut report.rules {
            rule.verdict = RuleVerdict::Conformant;
        }
        let svg = badge_svg(&badge(&report));
        assert!(
            svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{svg}"
        );
        assert!(svg.contains(">6/6 rules</text>"), "{svg}");
        assert!(svg.contains("fill=\"#4c1\""), "green: {svg}");
        report.rules[0].verdict = RuleVerdict::NonConformant;
        let red = badge_svg(&badge(&report));
        assert!(
            red.contains("fill=\"#e05d44\"") && !red.contains("#4c1"),
            "{red}"
        );
        let hostile = serde_json::json!({"label": "a<b>&\"", "message": "</text><script>", "color": "javascript:"});
        let svg = badge_svg(&hostile);
        assert!(!svg.contains("<script") && !svg.contains("a<b"), "{svg}");
        assert!(svg.contains("a&lt;b&gt;&amp;&quot;"), "{svg}");
        assert!(
            svg.contains("fill=\"#9f9f9f\""),
            "an unknown colour is grey: {svg}"
        );
    }
}
