//! One run of every kind of outcome, with hostile text in it, for the renderers' tests.

use crate::conformance::{
    AdapterInfo, CaseResult, CorpusInfo, CorpusOrigin, Outcome, RuleResult, RuleVerdict, RunReport,
};
use crate::protocol::{Implementation, ProtocolRole};
use std::collections::BTreeMap;

/// Markup that must never reach a page as markup.
pub const SCRIPT: &str = "<script>alert(1)</script>";

/// Five cases (pass, fail, timeout, skipped, protocol-error) over six rules, one of which binds
/// no role played.
pub fn report() -> RunReport {
    let pass = case(
        "messages/ASR-212/y_image_blob_only",
        "ASR-212",
        Outcome::Pass,
    );
    let mut fail = case("messages/ASR-231/n_bad_role", "ASR-231", Outcome::Fail);
    fail.detail = Some(format!("the stream must be rejected {SCRIPT} & more"));
    fail.expected = Some("valid: false\nASR-231 error line 2\n".into());
    fail.actual = Some("valid: true\n".into());
    fail.diff = Some(
        "--- expected\n+++ actual\n@@ -1,2 +1 @@\n-valid: false\n-ASR-231 error line 2\n+valid: true\n"
            .into(),
    );
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
        corpus: CorpusInfo {
            origin: CorpusOrigin::Kit,
            path: "/home/user/.cache/asr-ctk/corpus-0.1.0-0123456789abcdef".into(),
            verified: true,
        },
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
            versus: None,
            others: Vec::new(),
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
        expectations: None,
        campaign: None,
    }
}

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
        non_strict: 0,
        skipped,
        errored,
        charged_from_others: 0,
        lenient: failed,
        over_strict: 0,
        decisions: Vec::new(),
        verdict,
        by_role: BTreeMap::new(),
        fuzz: None,
    }
}

/// The fixture's report compared with expectations that know its three failures (fail,
/// timeout, protocol-error), or, with `regressed`, only two of them: the protocol error is a
/// regression then.
pub fn expected(regressed: bool) -> RunReport {
    use crate::expectations::{Expectations, Known};
    let entry = |case: &str, outcome: Outcome, link: Option<&str>| Known {
        case: Some(case.into()),
        rule: None,
        role: None,
        outcome,
        reason: format!("not yet {SCRIPT}"),
        link: link.map(Into::into),
    };
    let mut known = vec![
        entry(
            "messages/ASR-231/n_bad_role",
            Outcome::Fail,
            Some("https://example.invalid/issues/1"),
        ),
        entry("messages/ASR-217/*", Outcome::Timeout, None),
    ];
    if !regressed {
        known.push(entry("lineage/ASR-412/*", Outcome::ProtocolError, None));
    }
    let mut report = report();
    report.compare_with(&Expectations {
        implementation: "asr-go".into(),
        known,
        digest: crate::expectations::digest(b"{}"),
    });
    report
}

/// The values of `attribute` in `html`, in order (each written ` attribute="..."`).
pub fn attribute_values<'a>(html: &'a str, attribute: &str) -> Vec<&'a str> {
    let start = format!(" {attribute}=\"");
    html.match_indices(&start)
        .filter_map(|(at, _)| {
            let rest = &html[at + start.len()..];
            rest.find('"').map(|end| &rest[..end])
        })
        .collect()
}
