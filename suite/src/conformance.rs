//! The conformance report of one run of the corpus against one implementation: every case's
//! outcome, and for every rule of the catalog a verdict. Its JSON form is
//! `schemas/report.schema.json`; every report records the kit's version, a digest of the
//! case set, the implementation's identity and the command line, so a claim can be checked.

use crate::case::Case;
use crate::catalog::{Catalog, Level, Role};
pub use crate::judge::{
    Attribution, Failure, MAX_PLACES, MAX_RULE_ID_CHARS, MAX_UNKNOWN_RULES, Outcome, Place,
};
use crate::protocol::{Implementation, ProtocolRole};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::time::SystemTime;

/// The result of one case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CaseResult {
    /// The case's name.
    pub name: String,
    /// The role the implementation played for it (a case can be run as each of its roles).
    pub role: ProtocolRole,
    /// Its stable id.
    pub id: String,
    /// The rules it tests.
    pub rules: Vec<String>,
    /// Its outcome.
    pub outcome: Outcome,
    /// What happened, in words (why it failed, the skip reason, the fault).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The adapter's issue link for a skip.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue: Option<String>,
    /// The expectation, one finding a line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// The answer, one finding a line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    /// A unified diff of the two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// What the adapter wrote to stderr while on this case (cut to its last 16 KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// Each failure, charged to the rule that failed (empty when the case passed, or its
    /// outcome is not an answer judged).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributions: Vec<Attribution>,
    /// Where the failures are in the case's streams, when they are findings at a line (at
    /// most [`MAX_PLACES`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub places: Vec<Place>,
    /// What the judgement noticed that is no failure (members the reading does not define).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Rule ids the answer cites that the catalog does not know (at most
    /// [`MAX_UNKNOWN_RULES`], each cut to [`MAX_RULE_ID_CHARS`] characters).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_rules: Vec<String>,
    /// Findings of the answer the kit did not keep: beyond the first
    /// [`MAX_PER_STREAM`](crate::diagnostic::MAX_PER_STREAM) of a stream, only those that
    /// can change the judgement are kept (`judge::Retention`); the rest are counted here.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub findings_not_kept: u64,
    /// Milliseconds from request to answer.
    pub millis: u64,
    /// How the result stands against the run's expectations (`--expect`): a known failure,
    /// a regression or an unexpected pass; absent when the run had none, or when there is
    /// nothing to say (a pass no entry names, a skip).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expectation: Option<CaseExpectation>,
}

/// How one case's result stands against the run's expectations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CaseExpectation {
    /// Known, a regression, or an unexpected pass.
    pub mark: ExpectationMark,
    /// The outcome the entry that names the case records (absent: no entry names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_as: Option<Outcome>,
    /// The entry's reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The entry's link, where the failure is tracked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

impl CaseExpectation {
    /// `REASON (LINK)`, or the reason alone, or nothing when no entry names the case.
    pub fn reason_text(&self) -> String {
        match (&self.reason, &self.link) {
            (Some(reason), Some(link)) => format!("{reason} ({link})"),
            (Some(reason), None) => reason.clone(),
            (None, Some(link)) => link.clone(),
            (None, None) => String::new(),
        }
    }
}

/// What a case's result is to the expectations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExpectationMark {
    /// The outcome its entry records (a known failure, or a known skip): no regression.
    Known,
    /// A failure no entry names, or another outcome than its entry records: the gate fails.
    Regression,
    /// Passed (or non-strict) though its entry records a failure: the entry can go.
    UnexpectedPass,
}

/// The run's expectations (`--expect`) and how its results compare with them: the gate's
/// outcome, which every report states.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExpectationsResult {
    /// The implementation the expectations file is for (its `implementation`).
    pub implementation: String,
    /// `sha256:` and the digest of the expectations file.
    pub digest: String,
    /// Cases that failed as their entry records (known failures).
    pub known_failures: usize,
    /// Cases marked regressions.
    pub regressions: usize,
    /// Cases marked unexpected passes.
    pub unexpected_passes: usize,
}

impl ExpectationsResult {
    /// Whether the run matches the expectations: no regression.
    pub fn matches(&self) -> bool {
        self.regressions == 0
    }

    /// `matches the expectations: N known failures, M regressions, K unexpected passes`.
    pub fn summary(&self) -> String {
        format!(
            "{}: {} known failures, {} regressions, {} unexpected passes",
            if self.matches() {
                "matches the expectations"
            } else {
                "does not match the expectations"
            },
            self.known_failures,
            self.regressions,
            self.unexpected_passes
        )
    }
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "the signature serde's skip_serializing_if calls"
)]
pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The most bytes of each text of a case result (detail, expected, actual, diff, stderr) that
/// the reports keep: an adapter's answer cannot make a report of gigabytes.
pub const KEPT_BYTES: usize = 64 << 10;

impl CaseResult {
    /// The result of a case with an outcome and nothing more said yet.
    pub fn new(
        name: impl Into<String>,
        id: impl Into<String>,
        rules: Vec<String>,
        outcome: Outcome,
    ) -> Self {
        CaseResult {
            name: name.into(),
            role: ProtocolRole::Validator,
            id: id.into(),
            rules,
            outcome,
            detail: None,
            issue: None,
            expected: None,
            actual: None,
            diff: None,
            stderr: None,
            attributions: Vec::new(),
            places: Vec::new(),
            notes: Vec::new(),
            unknown_rules: Vec::new(),
            findings_not_kept: 0,
            millis: 0,
            expectation: None,
        }
    }

    /// Cuts every text to at most `kept` bytes, saying how much was cut: the start of a
    /// detail, an expectation, an answer or a diff, the end of stderr (where a crash shows).
    #[must_use]
    pub fn capped(mut self, kept: usize) -> Self {
        self.cap(kept);
        self
    }

    /// [`CaseResult::capped`], in place.
    pub fn cap(&mut self, kept: usize) {
        for text in [
            &mut self.detail,
            &mut self.issue,
            &mut self.expected,
            &mut self.actual,
            &mut self.diff,
        ]
        .into_iter()
        .flatten()
        {
            cap_start(text, kept);
        }
        if let Some(stderr) = &mut self.stderr {
            cap_end(stderr, kept);
        }
        if let Some(expectation) = &mut self.expectation {
            for text in [&mut expectation.reason, &mut expectation.link]
                .into_iter()
                .flatten()
            {
                cap_start(text, kept);
            }
        }
    }

    /// Holds the result to every bound a run's report keeps: each text cut to `kept` bytes
    /// ([`CaseResult::cap`]), at most [`MAX_UNKNOWN_RULES`] unknown rule ids of at most
    /// [`MAX_RULE_ID_CHARS`] characters, at most [`MAX_PLACES`] places. For a result read from a file rather than made by
    /// a run (a merge of shards' reports).
    pub fn keep_within(&mut self, kept: usize) {
        self.cap(kept);
        self.places.truncate(MAX_PLACES);
        self.unknown_rules.truncate(MAX_UNKNOWN_RULES);
        for rule in &mut self.unknown_rules {
            if let Some((end, _)) = rule.char_indices().nth(MAX_RULE_ID_CHARS) {
                rule.truncate(end);
            }
        }
    }

    /// Notes the rule ids `cited` that `knows` does not, within the bounds.
    pub fn note_unknown_rules<'a>(
        &mut self,
        cited: impl IntoIterator<Item = &'a str>,
        knows: impl Fn(&str) -> bool,
    ) {
        for rule in cited {
            if self.unknown_rules.len() >= MAX_UNKNOWN_RULES {
                return;
            }
            if knows(rule) {
                continue;
            }
            let kept: String = rule.chars().take(MAX_RULE_ID_CHARS).collect();
            if !self.unknown_rules.contains(&kept) {
                self.unknown_rules.push(kept);
            }
        }
    }
}

/// Keeps the first `kept` bytes of `text` (on a character boundary) and says what was cut.
fn cap_start(text: &mut String, kept: usize) {
    crate::text::cut_text(text, kept, "\n");
}

/// Keeps the last `kept` bytes of `text` (on a character boundary) and says what was cut.
fn cap_end(text: &mut String, kept: usize) {
    if text.len() <= kept {
        return;
    }
    let mut start = text.len() - kept;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    *text = format!("[{start} earlier bytes not kept]\n{}", &text[start..]);
}

/// The verdict on one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleVerdict {
    /// Every case of the rule run passed.
    Conformant,
    /// A case whose expectation is a MUST-level error failed.
    NonConformant,
    /// Only cases whose expectations are SHOULD-level (warnings, notices) failed, or the rule
    /// itself is only a SHOULD or MAY.
    NonStrict,
    /// No case of the rule was run (none exists, or all were skipped).
    Untested,
    /// The rule binds no role the implementation plays.
    NotApplicable,
}

impl RuleVerdict {
    /// The kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleVerdict::Conformant => "conformant",
            RuleVerdict::NonConformant => "non-conformant",
            RuleVerdict::NonStrict => "non-strict",
            RuleVerdict::Untested => "untested",
            RuleVerdict::NotApplicable => "not-applicable",
        }
    }
}

/// One rule's line in the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuleResult {
    /// The rule (or inferred check) id.
    pub rule: String,
    /// Its requirement keywords (`inferred` for the kit's inferred checks).
    pub levels: Vec<String>,
    /// Whom it binds.
    pub roles: Vec<String>,
    /// Cases naming it that were run or skipped (cases not run are not counted). They are
    /// partitioned by outcome: `passed + failed + non_strict + skipped + errored == cases`.
    pub cases: usize,
    /// Of those: passed.
    pub passed: usize,
    /// Of those: failed (outcome `fail`), whatever rule the failure was charged to: a case of
    /// this rule that failed only because the answer broke another rule is counted here, and
    /// the rule's verdict does not hold it against the rule.
    pub failed: usize,
    /// Of those: non-strict (the answer differs only on the kit's decisions, or only a
    /// warning was missed).
    pub non_strict: usize,
    /// Of those: skipped.
    pub skipped: usize,
    /// Of those: errored, timed out, crashed or broke the protocol.
    pub errored: usize,
    /// Cases that do not name this rule with a failure charged to it (an error under this
    /// rule in the answer to another rule's case): outside the partition of `cases`, and held
    /// against the rule's verdict.
    pub charged_from_others: usize,
    /// Cases (naming the rule or not) with a failure charged to this rule in which a finding
    /// of this rule the stream calls for was missing.
    pub lenient: usize,
    /// Cases (naming the rule or not) with a failure charged to this rule that is an error
    /// under it the stream does not call for.
    pub over_strict: usize,
    /// The kit's decisions the implementation decides otherwise on, for this rule.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<String>,
    /// The verdict.
    pub verdict: RuleVerdict,
    /// The same, over the cases of each role that has any (a validator's, a reader's and a
    /// producer's results kept apart): the verdict above holds them all.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_role: BTreeMap<ProtocolRole, RoleResult>,
    /// In a fuzz campaign's report: the streams that exercised the rule, the disagreements
    /// charged to it and the cases found under it; the verdict above is over them
    /// (`crate::fuzz::campaign`), and the counts of cases above are of the found cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuzz: Option<RuleCampaign>,
}

/// One rule's results over the cases of one role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RoleResult {
    /// Cases of the role naming the rule, run or skipped, partitioned as
    /// [`RuleResult::cases`] is.
    pub cases: usize,
    /// Of those: passed.
    pub passed: usize,
    /// Of those: failed, whatever rule the failure was charged to.
    pub failed: usize,
    /// Of those: non-strict.
    pub non_strict: usize,
    /// Of those: skipped.
    pub skipped: usize,
    /// Of those: errored, timed out, crashed or broke the protocol.
    pub errored: usize,
    /// Cases of the role that do not name the rule with a failure charged to it.
    pub charged_from_others: usize,
    /// The verdict over them.
    pub verdict: RuleVerdict,
}

/// Who was tested, and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AdapterInfo {
    /// The adapter command, as split into argv.
    pub command: Vec<String>,
    /// `persistent` or `oneshot`.
    pub mode: String,
    /// The implementation's identity, as its `started` message gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<Implementation>,
    /// The roles it plays.
    pub roles: Vec<ProtocolRole>,
    /// The implementation the first was compared with, in a comparison's report
    /// (`asr-ctk diff`, mode `diff`): the members above are the first's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versus: Option<Compared>,
    /// The third and later implementations of a comparison of more than two, in the order
    /// they were given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<Compared>,
}

/// The second implementation of a comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Compared {
    /// Its adapter command, as split into argv.
    pub command: Vec<String>,
    /// Its identity, as its `started` message gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<Implementation>,
}

/// The corpus a run used: a certification names it, since a corpus with cases taken out
/// passes more implementations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CorpusInfo {
    /// The corpus the kit carries (`kit`), or a directory given or found (`directory`).
    pub origin: CorpusOrigin,
    /// The corpus directory the cases were read from.
    pub path: String,
    /// Whether the directory was, when the run started, byte for byte the corpus compiled
    /// into this kit (nothing missing, changed or added): only then is the run a
    /// certification against the kit's corpus.
    pub verified: bool,
}

/// Where a run's corpus came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CorpusOrigin {
    /// The corpus compiled into the kit, unpacked into the user's cache and verified.
    Kit,
    /// A directory: `--cases DIR`, or `./cases` in a checkout.
    Directory,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[non_exhaustive]
pub struct RunReport {
    /// `asr-ctk` and its version.
    pub kit: String,
    /// The kit's version.
    pub kit_version: String,
    /// sha256 over every case of the corpus (names, sidecars, streams), `sha256:` prefixed.
    pub case_set: String,
    /// Where the corpus came from, and whether it is the kit's own, verified.
    pub corpus: CorpusInfo,
    /// Cases in the corpus.
    pub corpus_cases: usize,
    /// The implementation and how it was driven.
    pub adapter: AdapterInfo,
    /// The `asr-ctk` command line of the run.
    pub command_line: Vec<String>,
    /// When the run started, UTC, RFC 3339.
    pub started_at: String,
    /// The slice of the corpus run (`i/n`), when sharded; merged reports list every shard.
    pub shards: Vec<String>,
    /// Cases by outcome.
    pub totals: BTreeMap<Outcome, usize>,
    /// Every rule of the catalog and every inferred check.
    pub rules: Vec<RuleResult>,
    /// Every case run, by name.
    pub cases: Vec<CaseResult>,
    /// The run was stopped by a signal: cases not run are `not-run`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Why not every selected case was run, when some were not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// The expectations the run was compared with (`--expect`), and the counts of the
    /// cases' marks ([`CaseResult::expectation`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expectations: Option<ExpectationsResult>,
    /// In a fuzz campaign's report (`asr-ctk fuzz`): the role, the seed, the iterations run
    /// and the commands that repeat them; the cases are then the cases found, below
    /// `OUT/found/` (`crate::fuzz::campaign`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign: Option<CampaignResult>,
}

impl RunReport {
    /// The report of a run of `cases` (results) over `corpus`, summarized: the kit's identity,
    /// the corpus digest, the command line and the time now are filled in.
    pub fn new(
        corpus: &[Case],
        origin: CorpusInfo,
        adapter: AdapterInfo,
        cases: Vec<CaseResult>,
        shards: Vec<String>,
    ) -> std::io::Result<Self> {
        let mut report = RunReport {
            kit: "asr-ctk".into(),
            kit_version: env!("CARGO_PKG_VERSION").into(),
            case_set: case_set_digest(corpus)?,
            corpus: origin,
            corpus_cases: corpus.len(),
            adapter,
            command_line: std::env::args().collect(),
            started_at: now_rfc3339(),
            shards,
            totals: BTreeMap::new(),
            rules: Vec::new(),
            cases,
            interrupted: false,
            incomplete: None,
            expectations: None,
            campaign: None,
        };
        report.summarize(Catalog::embedded());
        Ok(report)
    }

    /// Recomputes totals and rule verdicts from the cases.
    pub fn summarize(&mut self, catalog: &Catalog) {
        self.cases
            .sort_by(|a, b| (&a.name, a.role).cmp(&(&b.name, b.role)));
        self.totals = Outcome::ALL.iter().map(|o| (*o, 0)).collect();
        for case in &self.cases {
            *self.totals.entry(case.outcome).or_default() += 1;
        }
        self.rules = rule_results(catalog, &self.cases, &self.adapter.roles);
        self.count_marks();
    }

    /// The expectations' counts, from the cases' marks (a merge's too).
    pub(crate) fn count_marks(&mut self) {
        let Some(expectations) = &mut self.expectations else {
            return;
        };
        let marked = |mark: ExpectationMark, failing: bool| {
            self.cases
                .iter()
                .filter(|c| {
                    c.expectation.as_ref().is_some_and(|e| e.mark == mark)
                        && (!failing || c.outcome.is_failure())
                })
                .count()
        };
        expectations.known_failures = marked(ExpectationMark::Known, true);
        expectations.regressions = marked(ExpectationMark::Regression, false);
        expectations.unexpected_passes = marked(ExpectationMark::UnexpectedPass, false);
    }

    /// Whether any case failed in any way.
    pub fn has_failures(&self) -> bool {
        self.cases.iter().any(|c| c.outcome.is_failure())
    }
}

fn rule_results(
    catalog: &Catalog,
    cases: &[CaseResult],
    roles: &[ProtocolRole],
) -> Vec<RuleResult> {
    let plays = |binds: &[Role]| roles.iter().any(|r| plays_one(*r, binds));
    let stated = catalog.rules.iter().map(|r| {
        let levels: Vec<String> = r.levels.iter().map(|l| l.as_str().to_owned()).collect();
        let roles: Vec<String> = r.roles.iter().map(|x| x.as_str().to_owned()).collect();
        // A descriptive rule (no keyword) defines what MUST rules rely on: it binds like a MUST.
        let must = r.levels.is_empty()
            || r.levels
                .iter()
                .any(|l| matches!(l, Level::Must | Level::MustNot));
        (r.id.clone(), levels, roles, r.roles.clone(), must)
    });
    let inferred = catalog.inferred.iter().map(|x| {
        (
            x.id.clone(),
            vec!["inferred".to_owned()],
            x.roles.iter().map(|r| r.as_str().to_owned()).collect(),
            x.roles.clone(),
            true,
        )
    });
    stated
        .chain(inferred)
        .map(|(rule, levels, rule_roles, binds, must)| {
            let all = tally(&rule, cases, None, plays(&binds), must);
            let mut by_role = BTreeMap::new();
            for role in [
                ProtocolRole::Validator,
                ProtocolRole::Reader,
                ProtocolRole::Producer,
            ] {
                let applicable = roles.contains(&role) && plays_one(role, &binds);
                let one = tally(&rule, cases, Some(role), applicable, must);
                if one.cases + one.charged_from_others > 0 {
                    by_role.insert(role, one.role_result());
                }
            }
            RuleResult {
                rule,
                levels,
                roles: rule_roles,
                cases: all.cases,
                passed: all.passed,
                failed: all.failed,
                non_strict: all.non_strict,
                skipped: all.skipped,
                errored: all.errored,
                charged_from_others: all.charged_from_others,
                lenient: all.lenient,
                over_strict: all.over_strict,
                decisions: all.decisions,
                verdict: all.verdict,
                by_role,
                fuzz: None,
            }
        })
        .collect()
}

fn plays_one(role: ProtocolRole, binds: &[Role]) -> bool {
    crate::catalog::role_bound(binds, role)
}

/// One rule's counts and verdict over the cases of one role, or of every role.
struct Tally {
    cases: usize,
    passed: usize,
    failed: usize,
    non_strict: usize,
    skipped: usize,
    errored: usize,
    charged_from_others: usize,
    lenient: usize,
    over_strict: usize,
    decisions: Vec<String>,
    verdict: RuleVerdict,
}

impl Tally {
    fn role_result(&self) -> RoleResult {
        RoleResult {
            cases: self.cases,
            passed: self.passed,
            failed: self.failed,
            non_strict: self.non_strict,
            skipped: self.skipped,
            errored: self.errored,
            charged_from_others: self.charged_from_others,
            verdict: self.verdict,
        }
    }
}

fn tally(
    rule: &str,
    cases: &[CaseResult],
    of_role: Option<ProtocolRole>,
    applicable: bool,
    must: bool,
) -> Tally {
    let cases: Vec<&CaseResult> = cases
        .iter()
        .filter(|c| of_role.is_none_or(|r| c.role == r))
        .collect();
    let mine: Vec<&&CaseResult> = cases
        .iter()
        .filter(|c| c.rules.iter().any(|r| r == rule))
        .collect();
    let count = |f: &dyn Fn(Outcome) -> bool| mine.iter().filter(|c| f(c.outcome)).count();
    let passed = count(&|o| o == Outcome::Pass);
    let failed = count(&|o| o == Outcome::Fail);
    let non_strict = count(&|o| o == Outcome::NonStrict);
    let skipped = count(&|o| o == Outcome::Skipped);
    let errored = count(&|o| o.is_failure() && o != Outcome::Fail);
    let not_run = count(&|o| o == Outcome::NotRun);
    // Failures charged to this rule, by whatever case they happened on.
    let charged: Vec<(&CaseResult, &Attribution)> = cases
        .iter()
        .flat_map(|c| c.attributions.iter().map(move |a| (*c, a)))
        .filter(|(_, a)| a.rule.as_deref() == Some(rule))
        .collect();
    let cases_with = |f: &dyn Fn(&Attribution) -> bool| {
        let mut names: Vec<(&str, ProtocolRole)> = charged
            .iter()
            .filter(|(_, a)| f(a))
            .map(|(c, _)| (c.name.as_str(), c.role))
            .collect();
        names.sort_unstable();
        names.dedup();
        names.len()
    };
    let charged_cases = cases_with(&|_| true);
    let charged_from_others = {
        let mut names: Vec<(&str, ProtocolRole)> = charged
            .iter()
            .filter(|(c, _)| !c.rules.iter().any(|r| r == rule))
            .map(|(c, _)| (c.name.as_str(), c.role))
            .collect();
        names.sort_unstable();
        names.dedup();
        names.len()
    };
    let lenient = cases_with(&|a| a.kind == Failure::Lenient);
    let over_strict = cases_with(&|a| a.kind == Failure::OverStrict);
    let hard = cases_with(&Attribution::is_hard);
    let mut decisions: Vec<String> = charged
        .iter()
        .filter_map(|(_, a)| a.decision.clone())
        .collect();
    decisions.sort();
    decisions.dedup();
    // A failure charged to a rule shows in its verdict, whomever the catalog says it binds.
    let verdict = if !applicable && charged_cases + errored == 0 {
        RuleVerdict::NotApplicable
    } else if (hard > 0 || errored > 0) && must {
        RuleVerdict::NonConformant
    } else if charged_cases + errored > 0 {
        RuleVerdict::NonStrict
    } else if passed == 0 {
        RuleVerdict::Untested
    } else {
        RuleVerdict::Conformant
    };
    Tally {
        cases: mine.len() - not_run,
        passed,
        failed,
        non_strict,
        skipped,
        errored,
        charged_from_others,
        lenient,
        over_strict,
        decisions,
        verdict,
    }
}

/// `sha256:` and the digest of the corpus: every case's name, sidecar and streams, in order.
pub fn case_set_digest(corpus: &[Case]) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    let mut sorted: Vec<&Case> = corpus.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    for case in sorted {
        hasher.update(case.name.as_bytes());
        hasher.update([0]);
        hasher.update(std::fs::read(&case.sidecar_path)?);
        for (part, path) in &case.streams {
            hasher.update(part.as_bytes());
            hasher.update([0]);
            hasher.update(std::fs::read(path)?);
        }
        hasher.update([0xFF]);
    }
    Ok(crate::spec::prefixed_hex(&hasher.finalize()))
}

/// The time now, UTC, as RFC 3339 (`2026-11-29T13:04:05Z`).
pub fn now_rfc3339() -> String {
    DateTime::<Utc>::from(SystemTime::now()).to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Seconds since the epoch as RFC 3339, UTC; a time past what the format can write is the epoch.
pub fn rfc3339(secs: u64) -> String {
    i64::try_from(secs)
        .ok()
        .and_then(|secs| DateTime::from_timestamp(secs, 0))
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The campaign's part of its report ([`RunReport::campaign`]; written by `crate::fuzz::campaign`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CampaignResult {
    /// The role the implementation played.
    pub role: ProtocolRole,
    /// The seed: with an iteration's number, it decides the iteration's streams.
    pub seed: u64,
    /// The `--adapter` argument as given.
    pub adapter: String,
    /// Options that change what is generated or how it is asked (`--oneshot`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// The iterations recorded, as runs of consecutive numbers, in order.
    pub ranges: Vec<IterationRange>,
    /// Iterations recorded: `valid` + Σ of the rules' `broken`.
    pub iterations: u64,
    /// Of those: valid streams.
    pub valid: u64,
    /// Of those: a clause broken.
    pub broken: u64,
    /// Of those: skipped by the implementation.
    pub skipped: u64,
    /// Of those: with at least one disagreement.
    pub disagreed: u64,
    /// Disagreements by kind (`fault` included), over every rule and unattributed.
    pub disagreements: BTreeMap<String, u64>,
    /// Disagreements charged to no rule of the catalog, by kind.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unattributed: BTreeMap<String, u64>,
    /// The found cases charged to no rule of the catalog (names below `OUT/found/`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unattributed_found: Vec<String>,
    /// The commands that repeat the campaign: one a range of iterations.
    pub repeat: Vec<String>,
}

/// Iterations `first` to `last`, both included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct IterationRange {
    /// The first.
    pub first: u64,
    /// The last.
    pub last: u64,
}

/// One rule's part of a campaign ([`RuleResult::fuzz`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuleCampaign {
    /// Streams that exercised the rule and were answered: `broken + valid - skipped`.
    pub exercised: u64,
    /// Iterations with a clause of this rule broken (answered or skipped).
    pub broken: u64,
    /// Valid iterations whose streams hold the rule's members or records (answered or
    /// skipped).
    pub valid: u64,
    /// Of `broken + valid`: skipped by the implementation.
    pub skipped: u64,
    /// The broken iterations by clause: they add up to `broken`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub clauses: BTreeMap<String, u64>,
    /// Iterations with a disagreement charged to this rule, by kind (`crate::fuzz::campaign::ChargeKind`'s names).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub disagreements: BTreeMap<String, u64>,
    /// Of `disagreements` (an iteration once a kind): those whose every charge of that kind
    /// to this rule is non-strict (`crate::fuzz::campaign::Charge::non_strict`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub non_strict: u64,
    /// The found cases charged to this rule (names below `OUT/found/`, as the report's
    /// cases are named).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub found: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_dates_are_right() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_000_645), "2026-11-30T01:04:05Z");
        assert_eq!(rfc3339(u64::MAX), "1970-01-01T00:00:00Z");
        let now = now_rfc3339();
        assert!(
            now.len() == 20 && DateTime::parse_from_rfc3339(&now).is_ok(),
            "{now}"
        );
    }

    fn result(name: &str, rules: &[&str], outcome: Outcome) -> CaseResult {
        CaseResult::new(
            name,
            "c0",
            rules.iter().map(|r| (*r).to_owned()).collect(),
            outcome,
        )
    }

    fn verdicts(cases: &[CaseResult], roles: &[ProtocolRole]) -> BTreeMap<String, RuleVerdict> {
        rule_results(Catalog::embedded(), cases, roles)
            .into_iter()
            .map(|r| (r.rule, r.verdict))
            .collect()
    }

    fn charged(mut case: CaseResult, charges: &[(&str, Failure, bool)]) -> CaseResult {
        case.attributions = charges
            .iter()
            .map(|(rule, kind, warning)| Attribution {
                rule: Some((*rule).to_owned()),
                kind: *kind,
                decision: None,
                warning: *warning,
            })
            .collect();
        case
    }

    #[test]
    fn texts_are_capped_saying_what_was_cut() {
        let mut r = result("a/b", &["ASR-212"], Outcome::Fail);
        r.actual = Some("é".repeat(100));
        r.stderr = Some(format!("{}END", "x".repeat(500)));
        r.detail = Some("short".into());
        let r = r.capped(51);
        let actual = r.actual.expect("kept");
        assert!(
            actual.starts_with(&"é".repeat(25)),
            "cut on a character boundary"
        );
        assert!(actual.ends_with("[150 more bytes not kept]"), "{actual}");
        let stderr = r.stderr.expect("kept");
        assert!(
            stderr.starts_with("[452 earlier bytes not kept]\n"),
            "{stderr}"
        );
        assert!(stderr.ends_with("END"), "the end of stderr is kept");
        assert_eq!(r.detail.as_deref(), Some("short"));
    }

    #[test]
    fn unknown_rule_ids_are_noted_within_bounds() {
        let mut r = result("a/b", &["ASR-212"], Outcome::Fail);
        let long = "R".repeat(1000);
        let mut cited = vec!["ASR-212", "ASR-999", "ASR-999", long.as_str()];
        let many: Vec<String> = (0..50).map(|i| format!("X-{i}")).collect();
        cited.extend(many.iter().map(String::as_str));
        r.note_unknown_rules(cited, |rule| Catalog::embedded().knows(rule));
        assert_eq!(r.unknown_rules.len(), MAX_UNKNOWN_RULES);
        assert_eq!(r.unknown_rules[0], "ASR-999");
        assert_eq!(r.unknown_rules[1].len(), MAX_RULE_ID_CHARS);
        assert!(!r.unknown_rules.contains(&"ASR-212".to_owned()));
    }

    #[test]
    fn cases_not_run_count_for_no_rule() {
        let v = ProtocolRole::Validator;
        let cases = [
            result("messages/ASR-231/n_x", &["ASR-231"], Outcome::NotRun),
            result("messages/ASR-217/n_x", &["ASR-217"], Outcome::Pass),
            result("messages/ASR-217/n_y", &["ASR-217"], Outcome::NotRun),
        ];
        let got = verdicts(&cases, &[v]);
        assert_eq!(got["ASR-231"], RuleVerdict::Untested);
        assert_eq!(got["ASR-217"], RuleVerdict::Conformant);
        assert!(!Outcome::NotRun.is_failure());
    }

    #[test]
    fn a_rule_with_a_failure_charged_for_a_role_is_never_not_applicable_to_it() {
        let r = ProtocolRole::Reader;
        // ASR-222 binds producers and validators; a reader's failure charged to it (as a
        // reading's superseded once was) still shows, in its verdict and in the reader's row.
        let mut failed = charged(
            result(
                "messages/ASR-222/y_reader_plan_revisions",
                &["ASR-222"],
                Outcome::Fail,
            ),
            &[("ASR-222", Failure::Reading, false)],
        );
        failed.role = r;
        let mut passed = result("messages/ASR-218/y_reader_x", &["ASR-218"], Outcome::Pass);
        passed.role = r;
        let cases = [failed, passed];
        let got = verdicts(&cases, &[r]);
        assert_eq!(got["ASR-222"], RuleVerdict::NonConformant);
        assert_eq!(got["ASR-218"], RuleVerdict::Conformant);
        assert_eq!(
            got["ASR-228"],
            RuleVerdict::NotApplicable,
            "nothing charged"
        );
        let table = rule_results(Catalog::embedded(), &cases, &[r]);
        let row = table.iter().find(|x| x.rule == "ASR-222").expect("a row");
        assert_eq!(row.by_role[&r].verdict, RuleVerdict::NonConformant);
    }

    #[test]
    fn verdicts_follow_the_failures_charged_to_each_rule() {
        let v = ProtocolRole::Validator;
        let cases = [
            result(
                "messages/ASR-212/n_image_data_and_blob",
                &["ASR-212"],
                Outcome::Pass,
            ),
            result(
                "messages/ASR-212/y_image_blob_only",
                &["ASR-212"],
                Outcome::Pass,
            ),
            // A case of ASR-210 failed because the implementation wrongly cited ASR-228.
            charged(
                result("messages/ASR-210/y_x", &["ASR-210"], Outcome::Fail),
                &[("ASR-228", Failure::OverStrict, false)],
            ),
            result("messages/ASR-210/y_y", &["ASR-210"], Outcome::Pass),
            result("messages/ASR-228/y_x", &["ASR-228"], Outcome::Pass),
            charged(
                result("messages/ASR-231/n_x", &["ASR-231"], Outcome::Fail),
                &[("ASR-231", Failure::Lenient, false)],
            ),
            result("messages/ASR-234/n_x", &["ASR-234"], Outcome::Skipped),
            result("messages/ASR-217/n_x", &["ASR-217"], Outcome::Timeout),
            charged(
                result(
                    "lineage/ASR-412/n_call_id_mismatch",
                    &["ASR-412"],
                    Outcome::Fail,
                ),
                &[("ASR-412", Failure::Lenient, true)],
            ),
        ];
        let got = verdicts(&cases, &[v]);
        assert_eq!(got["ASR-212"], RuleVerdict::Conformant);
        assert_eq!(got["ASR-210"], RuleVerdict::Conformant, "not the culprit");
        assert_eq!(got["ASR-228"], RuleVerdict::NonConformant, "the culprit");
        assert_eq!(got["ASR-231"], RuleVerdict::NonConformant);
        assert_eq!(got["ASR-234"], RuleVerdict::Untested);
        assert_eq!(
            got["ASR-217"],
            RuleVerdict::NonConformant,
            "a timeout counts against the rule"
        );
        assert_eq!(
            got["ASR-412"],
            RuleVerdict::NonStrict,
            "only a warning was missed"
        );
        assert_eq!(
            got["ASR-215"],
            RuleVerdict::NotApplicable,
            "reader rules do not bind validators"
        );
        assert_eq!(got["ASR-X-003"], RuleVerdict::Untested);
        assert_eq!(verdicts(&cases, &[])["ASR-212"], RuleVerdict::NotApplicable);
        let table = rule_results(Catalog::embedded(), &cases, &[v]);
        let row = |id: &str| table.iter().find(|r| r.rule == id).expect("a row");
        assert_eq!(
            (
                row("ASR-228").failed,
                row("ASR-228").charged_from_others,
                row("ASR-228").over_strict,
                row("ASR-228").lenient
            ),
            (0, 1, 1, 0),
            "the culprit's own case passed; the failure is charged from another's"
        );
        assert_eq!((row("ASR-231").failed, row("ASR-231").lenient), (1, 1));
        assert_eq!(
            (
                row("ASR-210").cases,
                row("ASR-210").failed,
                row("ASR-210").passed
            ),
            (2, 1, 1),
            "a case failed under another rule stays in its own rule's row"
        );
        assert_eq!(row("ASR-210").charged_from_others, 0);
        for r in &table {
            assert_eq!(
                r.passed + r.failed + r.non_strict + r.skipped + r.errored,
                r.cases,
                "{}",
                r.rule
            );
        }
    }

    #[test]
    fn a_failure_only_on_a_decision_is_non_strict_and_named() {
        let mut case = charged(
            result("lineage/ASR-406/y_x", &["ASR-406"], Outcome::NonStrict),
            &[("ASR-406", Failure::Reading, false)],
        );
        case.attributions[0].decision = Some("unresolved-form".into());
        let table = rule_results(Catalog::embedded(), &[case], &[ProtocolRole::Reader]);
        let row = table.iter().find(|r| r.rule == "ASR-406").expect("a row");
        assert_eq!(row.verdict, RuleVerdict::NonStrict);
        assert_eq!(row.decisions, ["unresolved-form"]);
        assert_eq!(
            (row.cases, row.non_strict, row.failed),
            (1, 1, 0),
            "a non-strict case is counted in its row"
        );
        assert!(!Outcome::NonStrict.is_failure());
    }
}
