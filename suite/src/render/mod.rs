//! Renders a conformance [`RunReport`] for people and tools: Markdown, one self-contained
//! HTML page, JUnit XML, SARIF and a shields.io endpoint badge.
//!
//! Every renderer formats one shared view of the run: what it was (metadata rows), the
//! totals, the applicable rules, the failures and the cases skipped or not run, so that the
//! formats cannot drift apart in what they show. A fuzz campaign's report
//! ([`crate::fuzz::campaign`]) is shown the same way: its metadata rows say the seed, the
//! iterations and the command that repeats them, its rule table counts streams rather than
//! cases ([`CAMPAIGN_RULE_COLUMNS`]) and lists under each rule the cases found, and its
//! failures are the cases found.
//!
//! Everything a case or an adapter wrote (details, expectations, answers, diffs, stderr) is
//! untrusted: every renderer writes control characters as visible escapes
//! ([`escape_controls`]), and the HTML and XML renderers escape every piece of text taken from
//! the report.

mod badge;
pub mod comparison;
pub mod difference;
mod html;
mod junit;
mod markdown;
pub mod sarif;
pub mod site;
pub mod streams;

#[cfg(test)]
mod fixture;

pub use badge::{badge, badge_svg};
pub use comparison::comparison_html;
pub use html::{html, html_with_streams};
pub use junit::junit;
pub use markdown::markdown;
pub use site::site;

use crate::conformance::{
    CaseExpectation, CaseResult, CorpusOrigin, ExpectationMark, Outcome, RuleResult, RuleVerdict,
    RunReport,
};
pub use crate::text::escape_controls;

/// What every renderer shows of a run, in the order it shows it.
struct View<'a> {
    /// The implementation's name and version.
    title: String,
    /// What was run, how and when.
    about: Vec<Row>,
    /// Cases by outcome, every outcome listed.
    totals: Vec<(Outcome, usize)>,
    /// The headings of the rule table: [`RULE_COLUMNS`], or for a campaign
    /// [`CAMPAIGN_RULE_COLUMNS`].
    rule_columns: &'static [&'static str],
    /// The rules that bind a role the implementation plays.
    rules: Vec<RuleRow<'a>>,
    /// The cases that failed in any way, and those non-strict, in report order.
    failures: Vec<&'a CaseResult>,
    /// The cases skipped by the adapter or not run by the kit.
    skipped: Vec<&'a CaseResult>,
    /// Why not every selected case was run, when some were not.
    incomplete: Option<&'a str>,
    /// The cases the expectations mark (known failures, regressions, unexpected passes), in
    /// report order; a known skip is no failure and is left out.
    marked: Vec<Marked<'a>>,
}

/// One case the expectations mark, in words: `known failure`, and the entry's reason.
struct Marked<'a> {
    case: &'a CaseResult,
    mark: &'static str,
    /// `REASON (LINK)`, empty when no entry names the case.
    reason: String,
}

/// One fact about the run.
struct Row {
    /// For people.
    label: &'static str,
    /// For tools (a JUnit property name).
    key: &'static str,
    value: String,
    kind: RowKind,
    /// Said after the value, in words.
    note: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowKind {
    Text,
    /// A command line or a digest: shown as code.
    Code,
    /// An address: a link when it is a web address.
    Link,
    /// Something the reader must not miss.
    Warning,
}

/// One applicable rule's line in the rule table.
struct RuleRow<'a> {
    id: &'a str,
    levels: String,
    verdict: RuleVerdict,
    /// The decisions a non-strict verdict is on, comma-separated (empty when none).
    decisions: String,
    /// Each role's verdict, when cases of more than one role name the rule
    /// (`validator conformant, producer non-conformant`; empty otherwise).
    by_role: String,
    /// Cases; then their partition: passed, failed, non-strict, skipped, errored; then the
    /// cases of other rules charged to this one, and of every charged case the lenient and the
    /// over-strict. For a campaign, the counts of [`CAMPAIGN_RULE_COLUMNS`].
    counts: Vec<u64>,
    /// For a campaign: the disagreements by kind, in words (`lenient 2, fault 1`; empty when
    /// none).
    kinds: String,
    /// For a campaign: the names of the cases found under the rule.
    found: Vec<&'a str>,
}

/// The headings of the rule table: the cases, the five columns that add up to them, then the
/// failures charged to the rule from other rules' cases, which do not.
const RULE_COLUMNS: [&str; 12] = [
    "Rule",
    "Levels",
    "Verdict",
    "Cases",
    "Passed",
    "Failed",
    "Non-strict",
    "Skipped",
    "Errored",
    "Charged from other cases",
    "Lenient",
    "Over-strict",
];

/// The headings of a campaign's rule table: the streams that exercised the rule (answered),
/// those broken under it and those valid that held its members (answered or skipped), those
/// skipped, those with a disagreement charged to it; then the disagreements by kind and the
/// cases found, in words.
const CAMPAIGN_RULE_COLUMNS: [&str; 10] = [
    "Rule",
    "Levels",
    "Verdict",
    "Exercised",
    "Broken",
    "Valid",
    "Skipped",
    "Disagreements",
    "By kind",
    "Found",
];

/// One failure charged to its rule, in words: `ASR-228 over-strict`, `no rule reading`,
/// `ASR-406 reading (decision unresolved-form)`.
fn charge_text(a: &crate::conformance::Attribution) -> String {
    let rule = a.rule.as_deref().unwrap_or("no rule");
    match (&a.decision, a.warning) {
        (Some(decision), _) => format!("{rule} {} (decision {decision})", a.kind.as_str()),
        (None, true) => format!("{rule} {} (a warning)", a.kind.as_str()),
        (None, false) => format!("{rule} {}", a.kind.as_str()),
    }
}

/// Said instead of the rule table when it would be empty.
const NO_RULE_APPLIES: &str = "No rule applies to the roles the implementation plays.";

impl<'a> View<'a> {
    fn of(report: &'a RunReport) -> Self {
        let named = |i: Option<&crate::protocol::Implementation>| {
            i.map_or_else(
                || "unknown implementation".to_owned(),
                |i| format!("{} {}", i.name, i.version),
            )
        };
        let first = named(report.adapter.implementation.as_ref());
        View {
            // A comparison is of two implementations, and its title says so.
            title: match &report.adapter.versus {
                Some(second) => std::iter::once(second)
                    .chain(&report.adapter.others)
                    .fold(first, |title, next| {
                        format!("{title} versus {}", named(next.implementation.as_ref()))
                    }),
                None => first,
            },
            about: about(report),
            rule_columns: if report.campaign.is_some() {
                &CAMPAIGN_RULE_COLUMNS
            } else {
                &RULE_COLUMNS
            },
            totals: Outcome::ALL
                .iter()
                .map(|o| (*o, report.totals.get(o).copied().unwrap_or(0)))
                .collect(),
            rules: report
                .rules
                .iter()
                .filter(|r| r.verdict != RuleVerdict::NotApplicable)
                .map(RuleRow::of)
                .collect(),
            failures: report
                .cases
                .iter()
                .filter(|c| c.outcome.is_failure() || c.outcome == Outcome::NonStrict)
                .collect(),
            skipped: report
                .cases
                .iter()
                .filter(|c| matches!(c.outcome, Outcome::Skipped | Outcome::NotRun))
                .collect(),
            incomplete: report.incomplete.as_deref(),
            marked: report
                .cases
                .iter()
                .filter_map(|case| {
                    let e = case.expectation.as_ref()?;
                    let mark = match e.mark {
                        ExpectationMark::Known if case.outcome.is_failure() => "known failure",
                        ExpectationMark::Known => return None,
                        ExpectationMark::Regression => "regression",
                        ExpectationMark::UnexpectedPass => "unexpected pass",
                    };
                    Some(Marked {
                        case,
                        mark,
                        reason: e.reason_text(),
                    })
                })
                .collect(),
        }
    }
}

/// Whether the expectations mark the case a known failure: a failure the gate lets pass.
fn known_failure(case: &CaseResult) -> Option<&CaseExpectation> {
    case.expectation
        .as_ref()
        .filter(|e| e.mark == ExpectationMark::Known && case.outcome.is_failure())
}

impl<'a> RuleRow<'a> {
    fn of(rule: &'a RuleResult) -> Self {
        RuleRow {
            id: &rule.rule,
            // A statement without a keyword still defines what others rely on.
            levels: if rule.levels.is_empty() {
                "descriptive".to_owned()
            } else {
                rule.levels.join(", ")
            },
            verdict: rule.verdict,
            decisions: rule.decisions.join(", "),
            by_role: by_role(rule),
            counts: match &rule.fuzz {
                Some(fuzz) => vec![
                    fuzz.exercised,
                    fuzz.broken,
                    fuzz.valid,
                    fuzz.skipped,
                    fuzz.disagreements.values().sum(),
                ],
                None => [
                    rule.cases,
                    rule.passed,
                    rule.failed,
                    rule.non_strict,
                    rule.skipped,
                    rule.errored,
                    rule.charged_from_others,
                    rule.lenient,
                    rule.over_strict,
                ]
                .iter()
                .map(|n| u64::try_from(*n).unwrap_or(u64::MAX))
                .collect(),
            },
            kinds: rule
                .fuzz
                .as_ref()
                .map_or_else(String::new, |fuzz| kinds_text(&fuzz.disagreements)),
            found: rule
                .fuzz
                .iter()
                .flat_map(|fuzz| fuzz.found.iter().map(String::as_str))
                .collect(),
        }
    }
}

/// Each role's verdict on a rule, when the cases of more than one role it binds name it.
pub fn by_role(rule: &RuleResult) -> String {
    let binding: Vec<String> = rule
        .by_role
        .iter()
        .filter(|(_, result)| result.verdict != RuleVerdict::NotApplicable)
        .map(|(role, result)| format!("{} {}", role.as_str(), result.verdict.as_str()))
        .collect();
    if binding.len() < 2 {
        String::new()
    } else {
        binding.join(", ")
    }
}

/// Counts by kind, in words: `lenient 2, fault 1`, or empty.
fn kinds_text(kinds: &std::collections::BTreeMap<String, u64>) -> String {
    kinds
        .iter()
        .map(|(kind, n)| format!("{kind} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A campaign's metadata rows: what was generated, and the command that repeats it.
fn campaign_rows(campaign: &crate::fuzz::campaign::CampaignResult) -> Vec<Row> {
    let ranges: Vec<String> = campaign
        .ranges
        .iter()
        .map(|r| {
            if r.first == r.last {
                r.first.to_string()
            } else {
                format!("{} to {}", r.first, r.last)
            }
        })
        .collect();
    let mut rows = vec![
        Row {
            label: "Campaign",
            key: "campaign",
            value: format!(
                "asr-ctk fuzz, role {}, seed {}, {} iterations ({})",
                campaign.role.as_str(),
                campaign.seed,
                campaign.iterations,
                if ranges.is_empty() {
                    "none".to_owned()
                } else {
                    ranges.join(", ")
                }
            ),
            kind: RowKind::Text,
            note: Some(format!(
                "{} valid, {} with a clause broken, {} skipped, {} with a disagreement",
                campaign.valid, campaign.broken, campaign.skipped, campaign.disagreed
            )),
        },
        Row {
            label: "Disagreements",
            key: "disagreements",
            value: if campaign.disagreements.is_empty() {
                "none".to_owned()
            } else {
                kinds_text(&campaign.disagreements)
            },
            kind: RowKind::Text,
            note: (!campaign.unattributed.is_empty())
                .then(|| format!("charged to no rule: {}", kinds_text(&campaign.unattributed))),
        },
    ];
    if !campaign.unattributed_found.is_empty() {
        rows.push(Row {
            label: "Found under no rule",
            key: "unattributedFound",
            value: campaign.unattributed_found.join(", "),
            kind: RowKind::Text,
            note: None,
        });
    }
    rows.push(Row {
        label: "Repeat",
        key: "repeat",
        value: campaign.repeat.join("; "),
        kind: RowKind::Code,
        note: None,
    });
    rows
}

fn about(report: &RunReport) -> Vec<Row> {
    let row = |label, key, value: String, kind| Row {
        label,
        key,
        value,
        kind,
        note: None,
    };
    let mut rows = Vec::new();
    if let Some(i) = &report.adapter.implementation {
        rows.push(row(
            "Implementation",
            "implementation",
            format!("{} {} ({})", i.name, i.version, i.language),
            RowKind::Text,
        ));
        if let Some(home) = &i.homepage {
            rows.push(row("Homepage", "homepage", home.clone(), RowKind::Link));
        }
    }
    rows.push(row(
        "Kit",
        "kit",
        format!("{} {}", report.kit, report.kit_version),
        RowKind::Text,
    ));
    rows.push(Row {
        note: Some(format!("{} cases in the corpus", report.corpus_cases)),
        ..row(
            "Case set",
            "caseSet",
            report.case_set.clone(),
            RowKind::Code,
        )
    });
    rows.push(Row {
        note: Some(report.corpus.path.clone()),
        ..row(
            "Corpus",
            "corpus",
            match (report.corpus.origin, report.corpus.verified) {
                (CorpusOrigin::Kit, true) => "the kit's own, verified",
                (CorpusOrigin::Kit, false) => "the kit's own, NOT verified",
                (CorpusOrigin::Directory, true) => "a directory, verified as the kit's own",
                (CorpusOrigin::Directory, false) => "a directory, not the kit's own corpus",
            }
            .to_owned(),
            RowKind::Text,
        )
    });
    rows.push(row(
        "Adapter",
        "adapter",
        shell_words::join(&report.adapter.command),
        RowKind::Code,
    ));
    if let Some(second) = &report.adapter.versus {
        rows.push(row(
            "Versus",
            "versus",
            second.implementation.as_ref().map_or_else(
                || "an implementation that never said who it is".to_owned(),
                |i| format!("{} {} ({})", i.name, i.version, i.language),
            ),
            RowKind::Text,
        ));
        rows.push(row(
            "Versus adapter",
            "versusAdapter",
            shell_words::join(&second.command),
            RowKind::Code,
        ));
    }
    rows.push(row(
        "Mode",
        "mode",
        report.adapter.mode.clone(),
        RowKind::Text,
    ));
    let roles: Vec<&str> = report.adapter.roles.iter().map(|r| r.as_str()).collect();
    rows.push(row(
        "Roles",
        "roles",
        if roles.is_empty() {
            "none".to_owned()
        } else {
            roles.join(", ")
        },
        RowKind::Text,
    ));
    rows.push(row(
        "Started at",
        "startedAt",
        report.started_at.clone(),
        RowKind::Text,
    ));
    rows.push(row(
        "Shards",
        "shards",
        if report.shards.is_empty() {
            "none (the whole selection)".to_owned()
        } else {
            report.shards.join(", ")
        },
        RowKind::Text,
    ));
    rows.push(row(
        "Command line",
        "commandLine",
        shell_words::join(&report.command_line),
        RowKind::Code,
    ));
    if let Some(campaign) = &report.campaign {
        rows.extend(campaign_rows(campaign));
    }
    if let Some(why) = &report.incomplete {
        rows.push(row(
            "Incomplete",
            "incomplete",
            why.clone(),
            RowKind::Warning,
        ));
    }
    if let Some(e) = &report.expectations {
        rows.push(Row {
            note: Some(format!("expectations for {}", e.implementation)),
            ..row(
                "Expectations",
                "expectations",
                e.summary(),
                if e.matches() {
                    RowKind::Text
                } else {
                    RowKind::Warning
                },
            )
        });
    }
    rows
}

/// Whether a character may appear in an XML 1.0 document (and in clean HTML text).
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

/// Whether an address can be a link: http(s), and nothing in it that could end the markup.
fn is_web_link(s: &str) -> bool {
    (s.starts_with("https://") || s.starts_with("http://"))
        && !s.chars().any(|c| {
            c.is_whitespace() || c.is_control() || matches!(c, '<' | '>' | '"' | '\'' | '`')
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fixture::report;

    #[test]
    fn control_characters_are_shown_as_escapes() {
        assert_eq!(escape_controls("plain\n\ttext"), "plain\n\ttext");
        assert_eq!(
            escape_controls("\u{1b}[2Jx\u{7}\r\u{9b}"),
            "\\u{1b}[2Jx\\u{7}\\u{d}\\u{9b}"
        );
    }

    #[test]
    fn the_view_holds_what_every_renderer_shows() {
        let mut r = report();
        let view = View::of(&r);
        assert_eq!(view.title, "asr-go 1.2.3");
        let labels: Vec<&str> = view.about.iter().map(|row| row.label).collect();
        assert_eq!(
            labels,
            [
                "Implementation",
                "Homepage",
                "Kit",
                "Case set",
                "Corpus",
                "Adapter",
                "Mode",
                "Roles",
                "Started at",
                "Shards",
                "Command line"
            ]
        );
        assert_eq!(view.about[4].value, "the kit's own, verified");
        assert_eq!(view.about[5].value, "./adapter --flag 'two words'");
        assert_eq!(
            view.about[3].note.as_deref(),
            Some("120 cases in the corpus")
        );
        let rules: Vec<&str> = view.rules.iter().map(|row| row.id).collect();
        assert_eq!(
            rules,
            ["ASR-212", "ASR-231", "ASR-217", "ASR-234", "ASR-412"],
            "a rule that binds no role played is left out"
        );
        assert_eq!(view.rules[1].counts, [1, 0, 1, 0, 0, 0, 0, 1, 0]);
        for row in &view.rules {
            let [cases, ref partition @ .., _, _, _] = row.counts[..] else {
                panic!("nine counts: {:?}", row.counts);
            };
            assert_eq!(partition.iter().sum::<u64>(), cases, "{}", row.id);
        }
        let failures: Vec<Outcome> = view.failures.iter().map(|c| c.outcome).collect();
        assert_eq!(
            failures,
            [Outcome::Fail, Outcome::Timeout, Outcome::ProtocolError]
        );
        assert_eq!(view.skipped.len(), 1);
        assert_eq!(view.totals.len(), Outcome::ALL.len());

        r.corpus.origin = CorpusOrigin::Directory;
        r.corpus.verified = false;
        assert_eq!(
            View::of(&r).about[4].value,
            "a directory, not the kit's own corpus"
        );
        r.adapter.implementation = None;
        r.adapter.roles.clear();
        r.incomplete = Some("interrupted".into());
        r.rules[0].levels.clear();
        let view = View::of(&r);
        assert_eq!(view.title, "unknown implementation");
        assert_eq!(view.rules.len(), 5);
        assert_eq!(view.rules[0].levels, "descriptive");
        let played = view.about.iter().find(|row| row.key == "roles");
        assert_eq!(played.map(|row| row.value.as_str()), Some("none"));
        let last = view.about.last().expect("rows");
        assert_eq!((last.key, last.kind), ("incomplete", RowKind::Warning));
        assert_eq!(view.incomplete, Some("interrupted"));
    }

    #[test]
    fn every_format_states_the_expectations_outcome_and_marks_known_failures() {
        let r = fixture::expected(false);
        let said = "matches the expectations: 3 known failures, 0 regressions, 0 unexpected passes";
        let md = markdown(&r);
        assert!(
            md.contains(&format!(
                "- Expectations: {said} (expectations for asr-go)\n"
            )),
            "{md}"
        );
        assert!(
            md.contains("## Against the expectations\n\n- known failure: `messages/ASR-231/n_bad_role` (fail): not yet \\<script\\>alert(1)\\</script\\> (https://example.invalid/issues/1)\n"),
            "{md}"
        );
        let page = html(&r);
        assert!(
            page.contains(&format!(
                "<dt>Expectations</dt><dd>{said} (expectations for asr-go)</dd>"
            )),
            "{page}"
        );
        assert!(
            page.contains("<li>known failure: <code>messages/ASR-217/n_late</code> (timeout): not yet &lt;script&gt;"),
            "{page}"
        );
        assert!(!page.contains("<script"));

        let xml = junit(&r);
        assert!(
            xml.contains(
                "<testsuite name=\"asr-ctk\" tests=\"5\" skipped=\"4\" errors=\"0\" failures=\"0\""
            ),
            "known failures are no failures of the suite: {xml}"
        );
        assert!(
            xml.contains("<skipped message=\"known failure: not yet &lt;script&gt;alert(1)&lt;/script&gt; (https://example.invalid/issues/1)\"/>"),
            "{xml}"
        );
        assert!(
            xml.contains(&format!(
                "<property name=\"expectations\" value=\"{said}\"/>"
            )),
            "{xml}"
        );

        let b = badge(&r);
        assert_eq!(b["message"], "conformant with 3 known failures");
        assert_eq!(b["color"], "yellow");

        let log = sarif::conformance(&r, &std::collections::BTreeMap::new());
        let levels: Vec<&serde_json::Value> = log["runs"][0]["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|x| &x["level"])
            .collect();
        assert_eq!(levels, ["note", "note", "note"], "{log}");

        let r = fixture::expected(true);
        let md = markdown(&r);
        assert!(
            md.contains("- **Expectations:** does not match the expectations: 2 known failures, 1 regressions, 0 unexpected passes\n"),
            "{md}"
        );
        assert!(
            md.contains("- regression: `lineage/ASR-412/n_mismatch` (protocol-error)\n"),
            "{md}"
        );
        let xml = junit(&r);
        assert!(
            xml.contains("skipped=\"3\" errors=\"1\" failures=\"0\""),
            "a regression stays a failure: {xml}"
        );
        assert_eq!(badge(&r)["color"], "red");
        let json = serde_json::to_value(&r).expect("serializes");
        let errors: Vec<String> = schema()
            .iter_errors(&json)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(json["expectations"]["regressions"], 1);
        assert_eq!(json["cases"][4]["expectation"]["mark"], "regression");
        let back: RunReport = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, r);
    }

    #[test]
    fn a_comparison_names_both_implementations_and_both_commands() {
        let mut r = report();
        r.adapter.mode = "diff".into();
        r.adapter.versus = Some(crate::conformance::Compared {
            command: vec!["./other".into(), "--x".into(), "a b".into()],
            implementation: Some(crate::protocol::Implementation {
                name: "asr-py".into(),
                version: "0.9".into(),
                language: "Python".into(),
                homepage: None,
                issues: None,
            }),
        });
        let view = View::of(&r);
        assert_eq!(view.title, "asr-go 1.2.3 versus asr-py 0.9");
        let row = |key: &str| {
            view.about
                .iter()
                .find(|row| row.key == key)
                .map(|row| row.value.as_str())
        };
        assert_eq!(row("adapter"), Some("./adapter --flag 'two words'"));
        assert_eq!(row("versus"), Some("asr-py 0.9 (Python)"));
        assert_eq!(row("versusAdapter"), Some("./other --x 'a b'"));
        r.adapter.versus.as_mut().expect("versus").implementation = None;
        assert_eq!(
            View::of(&r).title,
            "asr-go 1.2.3 versus unknown implementation"
        );
        let json = serde_json::to_value(&r).expect("serializes");
        assert!(schema().is_valid(&json), "the schema knows versus");
        r.adapter.others.push(crate::conformance::Compared {
            command: vec!["./third".into()],
            implementation: None,
        });
        assert_eq!(
            View::of(&r).title,
            "asr-go 1.2.3 versus unknown implementation versus unknown implementation"
        );
        let json = serde_json::to_value(&r).expect("serializes");
        assert_eq!(json["adapter"]["others"][0]["command"][0], "./third");
        assert!(schema().is_valid(&json), "the schema knows others");
    }

    fn schema() -> jsonschema::Validator {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../../schemas/report.schema.json"))
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

        r.cases[1].places = vec![crate::conformance::Place {
            rule: "ASR-231".into(),
            kind: crate::conformance::Failure::Lenient,
            line: 2,
            part: Some("child".into()),
        }];
        let json = serde_json::to_value(&r).expect("serializes");
        assert!(validator.is_valid(&json), "a failure's places");
        let mut nowhere = json.clone();
        nowhere["cases"][1]["places"][0]["line"] = serde_json::json!(0);
        assert!(!validator.is_valid(&nowhere), "lines are 1-based");

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
