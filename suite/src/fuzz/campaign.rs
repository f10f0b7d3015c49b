//! The accounting of one fuzz campaign, made into the report a certification run writes: for
//! every rule of the catalog, how many generated streams exercised it, the disagreements
//! charged to it by kind, the cases found (shrunk) under it, and a verdict in the words of
//! [`RuleVerdict`]; and for the campaign, the role, the seed and the iterations run, so that
//! the command the report gives repeats it.
//!
//! **Exercised.** What a stream exercises is decided from what the generator and the
//! mutator know of it, never from the implementation's answer ([`Exercised`]):
//!
//! - a stream with one clause broken (a validator's odd iterations, [`crate::fuzz::mutate`])
//!   exercises the rule of that clause and no other: it is counted once, under that rule
//!   and that clause ([`RuleCampaign::broken`], [`RuleCampaign::clauses`]);
//! - a valid stream (or a family of valid streams checked together) exercises every rule
//!   that binds the campaign's role and whose members or records it holds
//!   ([`rules_held`]): the rule of each value set of the catalog (`cases/rules.toml`) whose
//!   member a record of the stream gives a value, and for a reader the rule of each member
//!   of the reference's reading of the stream (`x-asr-rule` and `x-asr-rule-by-kind` of
//!   `schemas/reading.schema.json`). It is counted under each ([`RuleCampaign::valid`]), and
//!   once in [`CampaignResult::valid`].
//!
//! So every iteration recorded is counted exactly once as valid or under the one rule
//! broken: `iterations == valid + Σ rules[].fuzz.broken`, and for each rule
//! `broken == Σ clauses`. Iterations the implementation skipped are counted the same way,
//! and in `skipped` besides; [`RuleCampaign::exercised`] counts the streams that exercised
//! the rule and were answered.
//!
//! **Charged.** A disagreement is charged to the rule the oracle files it under
//! ([`crate::fuzz::oracle::Disagreement::rule`]): the rule broken for a lenient answer, the
//! rule cited for an over-strict one, the member's rule for a reading. A stream can be
//! charged to a rule it did not exercise (an over-strict error under a rule whose members the
//! stream does not hold); a disagreement no rule of the catalog decides is counted in
//! [`CampaignResult::unattributed`].
//!
//! **Verdict.** Over the iterations recorded, per rule: `not-applicable` when it binds no
//! role the campaign plays; `non-conformant` when a disagreement or a fault was charged to a
//! MUST-level (or descriptive) rule; `non-strict` when one was charged to a rule that is only
//! a SHOULD or MAY; `untested` (not exercised) when no answered stream exercised it and
//! nothing was charged; `conformant` otherwise.
//!
//! ```
//! use asr_suite::conformance::{AdapterInfo, Failure, RuleVerdict};
//! use asr_suite::fuzz::campaign::{Campaign, Charge, ChargeKind, Exercised, FoundCase, Invocation, IterationOutcome};
//! use asr_suite::protocol::ProtocolRole;
//!
//! let invocation = Invocation { adapter: "./my-adapter".into(), out: "fuzz-out".into(), options: vec![] };
//! let mut campaign = Campaign::new(ProtocolRole::Validator, 7, invocation);
//! let valid = Exercised::Valid(["ASR-214".to_owned()].into());
//! campaign.record_iteration(0, &valid, &IterationOutcome::Agreed);
//! let broken = Exercised::Broken { rule: "ASR-212".into(), clause: "ASR-212.a".into() };
//! let lenient = Charge { rule: "ASR-212".into(), kind: ChargeKind::Failure(Failure::Lenient), non_strict: false };
//! campaign.record_iteration(1, &broken, &IterationOutcome::Disagreed(vec![lenient]));
//! campaign.record_found("ASR-212", ChargeKind::Failure(Failure::Lenient), FoundCase {
//!     sidecar: "fuzz-out/found/ASR-212/n_fuzz_lenient_7_1.json".into(),
//!     streams: vec!["fuzz-out/found/ASR-212/n_fuzz_lenient_7_1.jsonl".into()],
//!     detail: "accepted a stream that breaks ASR-212".into(),
//!     iteration: 1,
//! });
//! let adapter = AdapterInfo { command: vec!["./my-adapter".into()], mode: "persistent".into(),
//!     implementation: None, roles: vec![ProtocolRole::Validator], versus: None, others: Vec::new() };
//! let report = campaign.into_report(adapter);
//! let row = |id: &str| report.rules.iter().find(|r| r.rule == id).expect("a row");
//! assert_eq!(row("ASR-212").verdict, RuleVerdict::NonConformant);
//! assert_eq!(row("ASR-212").fuzz.as_ref().map(|f| f.found.clone()),
//!            Some(vec!["ASR-212/n_fuzz_lenient_7_1".to_owned()]));
//! assert_eq!(row("ASR-214").verdict, RuleVerdict::Conformant);
//! let about = report.campaign.as_ref().expect("a campaign's report");
//! assert_eq!((about.iterations, about.valid, about.broken), (2, 1, 1));
//! assert!(about.repeat[0].contains("--seed 7 --first 0 --iterations 2"), "{:?}", about.repeat);
//! ```

use crate::catalog::{Catalog, Level};
use crate::conformance::{
    AdapterInfo, Attribution, CaseResult, CorpusInfo, CorpusOrigin, Failure, Outcome, RuleVerdict,
    RunReport,
};
pub use crate::conformance::{CampaignResult, IterationRange, RuleCampaign};
use crate::fuzz::generator::Stream;
use crate::protocol::ProtocolRole;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// What one iteration's streams exercise, as the generator and the mutator know it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exercised {
    /// Valid streams: the rules whose members or records they hold ([`rules_held`]).
    Valid(BTreeSet<String>),
    /// One clause of one rule broken (and nothing else).
    Broken {
        /// The rule the reference reports the broken clause under.
        rule: String,
        /// The clause (`ASR-212.a`; for an inferred check, its id).
        clause: String,
    },
}

/// How one iteration ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IterationOutcome {
    /// The implementation's answers are the oracle's.
    Agreed,
    /// The implementation skipped the streams (it does not implement the rule they test).
    Skipped,
    /// The answers differ: each charge at most once a rule and kind.
    Disagreed(Vec<Charge>),
}

/// One disagreement of an iteration, charged to a rule.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Charge {
    /// The rule it is filed under (a rule id the catalog does not know, or
    /// [`crate::judge::UNATTRIBUTED`], is counted as unattributed).
    pub rule: String,
    /// How the implementation disagrees.
    pub kind: ChargeKind,
    /// The disagreement rests on a decision of the kit, or breaks only a SHOULD: it makes
    /// the rule non-strict, never non-conformant.
    pub non_strict: bool,
}

/// How an implementation disagrees with the reference: a failure of an answer, in the kit's
/// [`Failure`] kinds, or no answer at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChargeKind {
    /// An answer judged wrong.
    Failure(Failure),
    /// No answer: the implementation crashed, hung, or broke the protocol.
    Fault,
}

impl ChargeKind {
    /// The kebab-case name: the [`Failure`]'s, or `fault`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChargeKind::Failure(failure) => failure.as_str(),
            ChargeKind::Fault => "fault",
        }
    }
}

impl fmt::Display for ChargeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<crate::fuzz::oracle::Kind> for ChargeKind {
    fn from(kind: crate::fuzz::oracle::Kind) -> Self {
        use crate::fuzz::oracle::Kind;
        match kind {
            Kind::OverStrict => ChargeKind::Failure(Failure::OverStrict),
            Kind::Lenient => ChargeKind::Failure(Failure::Lenient),
            Kind::Reading => ChargeKind::Failure(Failure::Reading),
            Kind::Fault => ChargeKind::Fault,
        }
    }
}

/// A case found and written: its shrunk streams and sidecar, below the campaign's
/// `OUT/found/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundCase {
    /// The sidecar's path (`OUT/found/ASR-212/n_fuzz_lenient_7_1.json`).
    pub sidecar: PathBuf,
    /// The shrunk stream files, in the case's order.
    pub streams: Vec<PathBuf>,
    /// The disagreement, in words.
    pub detail: String,
    /// The iteration whose stream it was shrunk from.
    pub iteration: u64,
}

/// How the campaign was started, for the command that repeats it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The `--adapter` argument as given (`reference`, or a command).
    pub adapter: String,
    /// The `--out` directory; found cases are in `OUT/found/`.
    pub out: PathBuf,
    /// Other options that change what is generated or how it is asked (`--oneshot`), as
    /// arguments.
    pub options: Vec<String>,
}

/// Why two campaigns' reports cannot be joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeError {
    /// A report is not a fuzz campaign's.
    NotACampaign(String),
    /// The campaigns differ in what they generated or whom they asked: seed, role, adapter
    /// or options; the member and both values.
    Differ {
        /// The member that differs (`seed`, `role`, `adapter`, `options`).
        member: &'static str,
        /// The first report's value.
        first: String,
        /// The other's.
        other: String,
    },
    /// The same iteration was run in both.
    Overlap {
        /// The first iteration run in both.
        iteration: u64,
    },
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MergeError::NotACampaign(which) => write!(
                f,
                "{which} is not the report of a fuzz campaign: a campaign's reports join only with another campaign's"
            ),
            MergeError::Differ {
                member,
                first,
                other,
            } => write!(
                f,
                "the reports are of different campaigns: {member} {first} and {other}; only the parts of one campaign (same seed, role, adapter and options, disjoint iterations) join"
            ),
            MergeError::Overlap { iteration } => write!(
                f,
                "the reports both ran iteration {iteration}: the parts of a campaign join only over disjoint iterations (--first, --iterations)"
            ),
        }
    }
}

impl std::error::Error for MergeError {}

/// The accounting of one campaign, or of the parts of one joined. Iterations may be recorded
/// in any order (jobs take them as they come).
#[derive(Debug, Clone)]
pub struct Campaign {
    role: ProtocolRole,
    seed: u64,
    invocation: Invocation,
    /// The iterations recorded, as runs of consecutive numbers: first to last, both
    /// included, keyed by first (a campaign of millions of iterations keeps a few runs).
    iterations: BTreeMap<u64, u64>,
    valid: u64,
    skipped: u64,
    disagreed: u64,
    rules: BTreeMap<String, RuleCampaign>,
    unattributed: BTreeMap<String, u64>,
    found: Vec<(Option<String>, ChargeKind, FoundCase)>,
    started_at: String,
}

impl Campaign {
    /// A campaign of `role` from `seed`, started as `invocation` says, with nothing recorded.
    pub fn new(role: ProtocolRole, seed: u64, invocation: Invocation) -> Self {
        Campaign {
            role,
            seed,
            invocation,
            iterations: BTreeMap::new(),
            valid: 0,
            skipped: 0,
            disagreed: 0,
            rules: BTreeMap::new(),
            unattributed: BTreeMap::new(),
            found: Vec::new(),
            started_at: crate::conformance::now_rfc3339(),
        }
    }

    /// Records iteration `iteration`: what its streams exercised and how it ended. An
    /// iteration recorded twice counts once (the later record is ignored).
    pub fn record_iteration(
        &mut self,
        iteration: u64,
        exercised: &Exercised,
        outcome: &IterationOutcome,
    ) {
        if !insert(&mut self.iterations, iteration) {
            return;
        }
        let skipped = u64::from(*outcome == IterationOutcome::Skipped);
        self.skipped += skipped;
        match exercised {
            Exercised::Valid(rules) => {
                self.valid += 1;
                for rule in rules.iter().filter(|r| binds(r, self.role)) {
                    let row = self.rules.entry(rule.clone()).or_default();
                    row.valid += 1;
                    row.skipped += skipped;
                }
            }
            Exercised::Broken { rule, clause } => {
                let row = self.rules.entry(rule.clone()).or_default();
                row.broken += 1;
                row.skipped += skipped;
                *row.clauses.entry(clause.clone()).or_default() += 1;
            }
        }
        if let IterationOutcome::Disagreed(charges) = outcome {
            // Each rule and kind once an iteration: hard if any charge of it is.
            let mut charged: BTreeMap<(&str, &'static str), bool> = BTreeMap::new();
            for charge in charges {
                *charged
                    .entry((charge.rule.as_str(), charge.kind.as_str()))
                    .or_default() |= !charge.non_strict;
            }
            self.disagreed += u64::from(!charged.is_empty());
            for ((rule, kind), hard) in charged {
                if Catalog::embedded().knows(rule) {
                    let row = self.rules.entry(rule.to_owned()).or_default();
                    *row.disagreements.entry(kind.to_owned()).or_default() += 1;
                    row.non_strict += u64::from(!hard);
                } else {
                    *self.unattributed.entry(kind.to_owned()).or_default() += 1;
                }
            }
        }
    }

    /// Records a case found and written for a disagreement of `kind` charged to `rule`.
    pub fn record_found(&mut self, rule: &str, kind: ChargeKind, found: FoundCase) {
        let rule = Catalog::embedded().knows(rule).then(|| rule.to_owned());
        self.found.push((rule, kind, found));
    }

    /// Iterations recorded so far.
    pub fn iterations(&self) -> u64 {
        self.iterations.iter().fold(0u64, |n, (first, last)| {
            n.saturating_add(last - first).saturating_add(1)
        })
    }

    /// Joins `other`, a part of the same campaign (same seed, role, adapter and options)
    /// over other iterations.
    pub fn merge(&mut self, other: Campaign) -> Result<(), MergeError> {
        self.joins(&other)?;
        self.join(other);
        Ok(())
    }

    /// Whether `other` is a part of the same campaign over other iterations.
    fn joins(&self, other: &Campaign) -> Result<(), MergeError> {
        let differ = |member: &'static str, first: String, other: String| {
            (first != other).then_some(MergeError::Differ {
                member,
                first,
                other,
            })
        };
        if let Some(e) = differ("seed", self.seed.to_string(), other.seed.to_string())
            .or_else(|| {
                differ(
                    "role",
                    self.role.as_str().to_owned(),
                    other.role.as_str().to_owned(),
                )
            })
            .or_else(|| {
                differ(
                    "adapter",
                    self.invocation.adapter.clone(),
                    other.invocation.adapter.clone(),
                )
            })
            .or_else(|| {
                differ(
                    "options",
                    format!("{:?}", self.invocation.options),
                    format!("{:?}", other.invocation.options),
                )
            })
        {
            return Err(e);
        }
        for (&first, &last) in &other.iterations {
            // The run of ours that starts last at or before `last` is the only one that can
            // reach into first..=last, unless one starts inside it.
            if let Some((&ours, &ours_last)) = self.iterations.range(..=last).next_back() {
                if ours_last >= first {
                    return Err(MergeError::Overlap {
                        iteration: first.max(ours),
                    });
                }
            }
        }
        Ok(())
    }

    /// Adds the counts and cases of `other`.
    fn join(&mut self, other: Campaign) {
        for (first, last) in other.iterations {
            self.iterations.insert(first, last);
        }
        coalesce(&mut self.iterations);
        self.valid = self.valid.saturating_add(other.valid);
        self.skipped = self.skipped.saturating_add(other.skipped);
        self.disagreed = self.disagreed.saturating_add(other.disagreed);
        for (rule, theirs) in other.rules {
            let mine = self.rules.entry(rule).or_default();
            mine.broken = mine.broken.saturating_add(theirs.broken);
            mine.valid = mine.valid.saturating_add(theirs.valid);
            mine.skipped = mine.skipped.saturating_add(theirs.skipped);
            add_counts(&mut mine.clauses, theirs.clauses);
            add_counts(&mut mine.disagreements, theirs.disagreements);
            mine.non_strict = mine.non_strict.saturating_add(theirs.non_strict);
        }
        add_counts(&mut self.unattributed, other.unattributed);
        self.found.extend(other.found);
        self.started_at = self.started_at.clone().min(other.started_at);
    }

    /// The campaign a report states, to join with another part of it; `None` when the
    /// report is not a campaign's. The found cases keep their names below `OUT/found/`.
    pub fn from_report(report: &RunReport) -> Option<Campaign> {
        let about = report.campaign.as_ref()?;
        let out = PathBuf::from(&report.corpus.path)
            .parent()
            .map_or_else(PathBuf::new, Path::to_path_buf);
        let mut campaign = Campaign::new(
            about.role,
            about.seed,
            Invocation {
                adapter: about.adapter.clone(),
                out,
                options: about.options.clone(),
            },
        );
        campaign.started_at.clone_from(&report.started_at);
        for range in about.ranges.iter().filter(|r| r.first <= r.last) {
            // Runs that overlap within one report are one.
            let last = campaign
                .iterations
                .get(&range.first)
                .copied()
                .unwrap_or(range.last);
            campaign
                .iterations
                .insert(range.first, last.max(range.last));
        }
        coalesce(&mut campaign.iterations);
        campaign.valid = about.valid;
        campaign.skipped = about.skipped;
        campaign.disagreed = about.disagreed;
        campaign.unattributed.clone_from(&about.unattributed);
        for rule in &report.rules {
            if let Some(fuzz) = &rule.fuzz {
                let mut fuzz = fuzz.clone();
                fuzz.found.clear();
                campaign.rules.insert(rule.rule.clone(), fuzz);
            }
        }
        let found = report.corpus.path.clone();
        for case in &report.cases {
            let charge = case.attributions.first();
            let kind = match charge {
                Some(a) => ChargeKind::Failure(a.kind),
                None => ChargeKind::Fault,
            };
            let rule = charge
                .and_then(|a| a.rule.clone())
                .or_else(|| case.rules.first().cloned());
            let sidecar = Path::new(&found).join(format!("{}.json", case.name));
            let streams = streams_beside(&sidecar);
            campaign.found.push((
                rule,
                kind,
                FoundCase {
                    sidecar,
                    streams,
                    detail: case.detail.clone().unwrap_or_default(),
                    iteration: iteration_of(&case.name).unwrap_or_default(),
                },
            ));
        }
        Some(campaign)
    }

    /// The stream files of the found cases, relative to `OUT/found/`, by case name: what the
    /// SARIF log and the HTML page name.
    pub fn stream_files(&self) -> BTreeMap<String, Vec<String>> {
        let root = self.found_dir();
        self.found
            .iter()
            .map(|(_, _, found)| {
                let files = found.streams.iter().map(|p| relative(&root, p)).collect();
                (case_name(&root, &found.sidecar), files)
            })
            .collect()
    }

    /// `OUT/found/`, where the found cases are.
    pub fn found_dir(&self) -> PathBuf {
        self.invocation.out.join("found")
    }

    /// The report: every rule of the catalog and every inferred check with its campaign
    /// counts ([`crate::conformance::RuleResult::fuzz`]) and verdict, the found cases as the
    /// report's cases (each failed, charged to its rule, or errored for a fault), the
    /// campaign's seed, iterations and the commands that repeat it
    /// ([`RunReport::campaign`]). `adapter` is who was asked.
    pub fn into_report(self, adapter: AdapterInfo) -> RunReport {
        let catalog = Catalog::embedded();
        let root = self.found_dir();
        let mut cases: Vec<CaseResult> = self
            .found
            .iter()
            .map(|(rule, kind, found)| found_case(&root, rule.as_deref(), *kind, found, self.role))
            .collect();
        cases.sort_by(|a, b| a.name.cmp(&b.name));
        let mut found_by_rule: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        let mut unattributed_found = Vec::new();
        for (rule, _, found) in &self.found {
            let name = case_name(&root, &found.sidecar);
            match rule {
                Some(rule) => found_by_rule.entry(rule).or_default().push(name),
                None => unattributed_found.push(name),
            }
        }
        unattributed_found.sort();
        let ranges: Vec<IterationRange> = self
            .iterations
            .iter()
            .map(|(&first, &last)| IterationRange { first, last })
            .collect();
        let broken: u64 = self.rules.values().map(|r| r.broken).sum();
        let mut disagreements = self.unattributed.clone();
        for row in self.rules.values() {
            add_counts(&mut disagreements, row.disagreements.clone());
        }
        let about = CampaignResult {
            role: self.role,
            seed: self.seed,
            adapter: self.invocation.adapter.clone(),
            options: self.invocation.options.clone(),
            repeat: ranges.iter().map(|r| self.repeat(*r)).collect(),
            ranges,
            iterations: self.iterations(),
            valid: self.valid,
            broken,
            skipped: self.skipped,
            disagreed: self.disagreed,
            disagreements,
            unattributed: self.unattributed.clone(),
            unattributed_found,
        };
        let mut report = RunReport {
            kit: "asr-ctk".into(),
            kit_version: env!("CARGO_PKG_VERSION").into(),
            case_set: found_digest(&self.found),
            corpus: CorpusInfo {
                origin: CorpusOrigin::Directory,
                path: root.to_string_lossy().into_owned(),
                verified: false,
            },
            corpus_cases: cases.len(),
            adapter,
            command_line: std::env::args().collect(),
            started_at: self.started_at.clone(),
            shards: Vec::new(),
            totals: BTreeMap::new(),
            rules: Vec::new(),
            cases,
            interrupted: false,
            incomplete: None,
            expectations: None,
            campaign: None,
        };
        report.summarize(catalog);
        for row in &mut report.rules {
            let mut fuzz = self.rules.get(&row.rule).cloned().unwrap_or_default();
            fuzz.exercised = (fuzz.broken + fuzz.valid).saturating_sub(fuzz.skipped);
            fuzz.found = found_by_rule.remove(row.rule.as_str()).unwrap_or_default();
            fuzz.found.sort();
            row.verdict = verdict(&row.rule, &fuzz, self.role);
            row.fuzz = Some(fuzz);
        }
        report.campaign = Some(about);
        report
    }

    /// The command that repeats the iterations of `range`.
    fn repeat(&self, range: IterationRange) -> String {
        let mut argv: Vec<String> = [
            "asr-ctk",
            "fuzz",
            "--role",
            self.role.as_str(),
            "--adapter",
            &self.invocation.adapter,
            "--seed",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        argv.push(self.seed.to_string());
        argv.push("--first".into());
        argv.push(range.first.to_string());
        argv.push("--iterations".into());
        argv.push((range.last - range.first).saturating_add(1).to_string());
        argv.push("--out".into());
        argv.push(self.invocation.out.to_string_lossy().into_owned());
        argv.extend(self.invocation.options.iter().cloned());
        shell_words::join(argv)
    }
}

/// Joins the reports of the parts of one campaign (each `(name, report)`, the name for the
/// errors): the counts add up, the found cases are listed together, the verdicts are
/// recomputed. Refused for reports of different seeds, roles, adapters or options, over the
/// same iterations, or not of a campaign.
pub fn merge_reports(reports: &[(String, RunReport)]) -> Result<RunReport, MergeError> {
    let mut joined: Option<(Campaign, AdapterInfo)> = None;
    for (name, report) in reports {
        let part =
            Campaign::from_report(report).ok_or_else(|| MergeError::NotACampaign(name.clone()))?;
        match &mut joined {
            None => joined = Some((part, report.adapter.clone())),
            Some((campaign, adapter)) => {
                let who = |a: &AdapterInfo| {
                    a.implementation.as_ref().map_or_else(
                        || "an unknown implementation".to_owned(),
                        |i| format!("{} {}", i.name, i.version),
                    )
                };
                campaign.joins(&part)?;
                if who(adapter) != who(&report.adapter) {
                    return Err(MergeError::Differ {
                        member: "implementation",
                        first: who(adapter),
                        other: who(&report.adapter),
                    });
                }
                campaign.join(part);
            }
        }
    }
    let (campaign, adapter) = joined.ok_or_else(|| MergeError::NotACampaign("no report".into()))?;
    Ok(campaign.into_report(adapter))
}

/// The rules whose members or records `streams` (valid, checked together) hold, of those
/// that bind `role`: what a valid stream exercises ([`Exercised::Valid`]). A rule is held
/// when
///
/// - a record gives a value to the member of one of the catalog's value sets whose rule it
///   is (`cases/rules.toml`, [`crate::catalog::ValueSet`]): what a validator checks of a
///   valid stream is its members' values;
/// - or, for a reader (and a producer), a member of the reference's reading of a stream
///   comes from the rule (`x-asr-rule` and `x-asr-rule-by-kind` of
///   `schemas/reading.schema.json`, as [`crate::judge::members::Kinds`] tells them): what a
///   reader is judged on is its reading. A validator's streams are not read for this: it
///   would cost as much as generating, checking and judging them together.
///
/// Whether a mutator could break a record of the stream in place would say more, but costs
/// a copy of the stream for each of the mutators, several times the generation and the
/// judgement of the stream together: not done.
pub fn rules_held(streams: &[&Stream], role: ProtocolRole) -> BTreeSet<String> {
    // Only the sets whose rule binds the role can count; a set found held is not looked
    // for again, and a set is looked for only in the records its path can start from.
    let sets: Vec<&(crate::catalog::MemberPath<'static>, &str)> = value_set_paths()
        .iter()
        .filter(|(_, rule)| binds(rule, role))
        .collect();
    let mut held = vec![false; sets.len()];
    let mut rules = BTreeSet::new();
    for stream in streams {
        for record in &stream.records {
            let kind = record.get("type").and_then(serde_json::Value::as_str);
            for (k, (path, rule)) in sets.iter().enumerate() {
                if !held[k] && path.starts_in(kind) && !path.values_in(record).is_empty() {
                    held[k] = true;
                    rules.insert((*rule).to_owned());
                }
            }
        }
        // A validator checks a stream's members, not a reading of it: its valid streams hold
        // the rules of the value sets alone (and reading them costs as much as generating,
        // checking and judging them together).
        if role == ProtocolRole::Validator {
            continue;
        }
        // The rules the reading's members can come from that bind the role: once the stream
        // is found to hold each, no member need be looked at.
        let readable: Vec<&str> = reading_rules()
            .iter()
            .map(String::as_str)
            .filter(|rule| binds(rule, role))
            .collect();
        if readable.iter().any(|rule| !rules.contains(*rule)) {
            let bytes = stream.to_bytes();
            let kinds = crate::judge::members::Kinds::of_stream(&bytes);
            let outcome = crate::reading::read_bytes(&bytes);
            if let Ok(reading) = serde_json::to_value(&outcome.reading) {
                let mut pointers = BTreeSet::new();
                leaves(&reading, &mut String::new(), 0, &mut pointers);
                for pointer in &pointers {
                    if let Some(rule) = kinds.rule(pointer) {
                        rules.insert(rule);
                        if readable.iter().all(|rule| rules.contains(*rule)) {
                            break;
                        }
                    }
                }
            }
        }
    }
    rules.retain(|rule| binds(rule, role));
    rules
}

/// The path of each value set of the catalog that has a rule, with the rule, read once.
fn value_set_paths() -> &'static [(crate::catalog::MemberPath<'static>, &'static str)] {
    static PATHS: std::sync::OnceLock<Vec<(crate::catalog::MemberPath<'static>, &'static str)>> =
        std::sync::OnceLock::new();
    PATHS.get_or_init(|| {
        Catalog::embedded()
            .value_sets()
            .iter()
            .filter_map(|set| Some((set.path(), set.rule.as_deref()?)))
            .collect()
    })
}

/// Every rule the reading schema gives a member (`x-asr-rule`, `x-asr-rule-by-kind`).
fn reading_rules() -> &'static BTreeSet<String> {
    static RULES: std::sync::OnceLock<BTreeSet<String>> = std::sync::OnceLock::new();
    RULES.get_or_init(|| {
        let mut rules = BTreeSet::new();
        let mut stack = vec![crate::judge::members::reading_schema()];
        while let Some(node) = stack.pop() {
            match node {
                serde_json::Value::Object(members) => {
                    if let Some(rule) = members
                        .get("x-asr-rule")
                        .and_then(serde_json::Value::as_str)
                    {
                        rules.insert(rule.to_owned());
                    }
                    let by_kind = members
                        .get("x-asr-rule-by-kind")
                        .and_then(serde_json::Value::as_array);
                    for pair in by_kind
                        .into_iter()
                        .flatten()
                        .filter_map(serde_json::Value::as_str)
                    {
                        if let Some((_, rule)) = pair.split_once('=') {
                            rules.insert(rule.to_owned());
                        }
                    }
                    stack.extend(members.values());
                }
                serde_json::Value::Array(items) => stack.extend(items),
                _ => {}
            }
        }
        rules
    })
}

/// The JSON Pointer of every member of `value` that holds no object, and of every array,
/// added to `pointers`; `depth` is the number of tokens of `at`. The rule of a member
/// depends on its record and its part, not on its place in an array below them
/// ([`crate::judge::members::Kinds::rule`]): beyond `/records/ID/parts/INDEX`, every item of
/// an array is its first, so that an array of a thousand items costs one.
fn leaves(
    value: &serde_json::Value,
    at: &mut String,
    depth: usize,
    pointers: &mut BTreeSet<String>,
) {
    let len = at.len();
    match value {
        serde_json::Value::Object(members) => {
            for (name, member) in members {
                at.push('/');
                at.push_str(&name.replace('~', "~0").replace('/', "~1"));
                leaves(member, at, depth + 1, pointers);
                at.truncate(len);
            }
        }
        serde_json::Value::Array(items) => {
            pointers.insert(at.clone());
            let parts = depth == 3 && at.starts_with("/records/") && at.ends_with("/parts");
            for (index, item) in items.iter().enumerate() {
                at.push('/');
                at.push_str(&if parts { index } else { 0 }.to_string());
                if parts || !pointers.contains(at.as_str()) || item.is_object() || item.is_array() {
                    leaves(item, at, depth + 1, pointers);
                }
                at.truncate(len);
            }
        }
        _ => {
            pointers.insert(at.clone());
        }
    }
}

/// A rule's verdict over a campaign.
fn verdict(rule: &str, fuzz: &RuleCampaign, plays: ProtocolRole) -> RuleVerdict {
    let charged: u64 = fuzz.disagreements.values().sum();
    let hard = charged > fuzz.non_strict;
    if !binds(rule, plays) {
        RuleVerdict::NotApplicable
    } else if hard && must(rule) {
        RuleVerdict::NonConformant
    } else if charged > 0 {
        RuleVerdict::NonStrict
    } else if fuzz.exercised == 0 {
        RuleVerdict::Untested
    } else {
        RuleVerdict::Conformant
    }
}

/// Whether `rule` binds as a MUST: a MUST or MUST NOT in its statement, no keyword at all (a
/// descriptive rule defines what MUST rules rely on), or an inferred check.
fn must(rule: &str) -> bool {
    Catalog::embedded().rule(rule).is_none_or(|r| {
        r.levels.is_empty()
            || r.levels
                .iter()
                .any(|l| matches!(l, Level::Must | Level::MustNot))
    })
}

/// A found case as a case of the report.
fn found_case(
    root: &Path,
    rule: Option<&str>,
    kind: ChargeKind,
    found: &FoundCase,
    plays: ProtocolRole,
) -> CaseResult {
    let outcome = match kind {
        ChargeKind::Failure(_) => Outcome::Fail,
        ChargeKind::Fault if found.detail.contains("timed out") => Outcome::Timeout,
        ChargeKind::Fault if found.detail.starts_with("protocol error") => Outcome::ProtocolError,
        ChargeKind::Fault => Outcome::Crash,
    };
    let mut case = CaseResult::new(
        case_name(root, &found.sidecar),
        format!("fuzz-{}", found.iteration),
        rule.map(str::to_owned).into_iter().collect(),
        outcome,
    );
    case.role = plays;
    case.detail = Some(found.detail.clone());
    if let ChargeKind::Failure(failure) = kind {
        case.attributions.push(Attribution {
            rule: rule.map(str::to_owned),
            kind: failure,
            decision: None,
            warning: false,
        });
    }
    case.capped(crate::conformance::KEPT_BYTES)
}

/// Adds `iteration` to the runs `iterations`, joining it to the runs it touches; false when
/// it was there.
fn insert(iterations: &mut BTreeMap<u64, u64>, iteration: u64) -> bool {
    let before = iterations
        .range(..=iteration)
        .next_back()
        .map(|(&first, &last)| (first, last));
    if before.is_some_and(|(_, last)| last >= iteration) {
        return false;
    }
    let first = match before {
        Some((first, last)) if last.checked_add(1) == Some(iteration) => first,
        _ => iteration,
    };
    let last = iteration
        .checked_add(1)
        .and_then(|next| iterations.remove(&next))
        .unwrap_or(iteration);
    iterations.insert(first, last);
    true
}

/// Joins the runs of `iterations` that overlap or touch.
fn coalesce(iterations: &mut BTreeMap<u64, u64>) {
    let mut joined: BTreeMap<u64, u64> = BTreeMap::new();
    for (&first, &last) in iterations.iter() {
        match joined.iter_mut().next_back() {
            Some((_, joined_last)) if first <= joined_last.saturating_add(1) => {
                *joined_last = (*joined_last).max(last);
            }
            _ => {
                joined.insert(first, last);
            }
        }
    }
    *iterations = joined;
}

/// `sha256:` and the digest of the found cases' files (names and bytes), in name order: the
/// report's case set. A file that cannot be read counts by its name alone.
fn found_digest(found: &[(Option<String>, ChargeKind, FoundCase)]) -> String {
    use sha2::{Digest, Sha256};
    let mut files: Vec<&PathBuf> = found
        .iter()
        .flat_map(|(_, _, f)| std::iter::once(&f.sidecar).chain(&f.streams))
        .collect();
    files.sort();
    let mut hasher = Sha256::new();
    for file in files {
        hasher.update(file.to_string_lossy().as_bytes());
        hasher.update([0]);
        hasher.update(std::fs::read(file).unwrap_or_default());
        hasher.update([0xFF]);
    }
    crate::spec::prefixed_hex(&hasher.finalize())
}

/// Whether `rule` binds an implementation playing `role`.
fn binds(rule: &str, plays: ProtocolRole) -> bool {
    Catalog::embedded().binds(rule, plays)
}

fn add_counts(into: &mut BTreeMap<String, u64>, from: BTreeMap<String, u64>) {
    for (key, n) in from {
        *into.entry(key).or_default() += n;
    }
}

/// `name` below `root`, `/`-separated, without the sidecar's `.json`.
fn case_name(root: &Path, sidecar: &Path) -> String {
    let name = relative(root, sidecar);
    // A source fixture is named by its directory, as the corpus names it.
    if let Some(fixture) = name.strip_suffix("/fixture.json") {
        return fixture.to_owned();
    }
    name.strip_suffix(".json")
        .map_or(name.clone(), str::to_owned)
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// The stream files of the found case whose sidecar is `sidecar`, as they are on disk now:
/// `STEM.jsonl`, or `STEM.PART.jsonl` for each part of a family, in name order.
#[expect(
    clippy::case_sensitive_file_extension_comparisons,
    reason = "the names fuzz writes, exactly"
)]
pub fn streams_beside(sidecar: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(stem)) = (
        sidecar.parent(),
        sidecar
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned()),
    ) else {
        return Vec::new();
    };
    let mut streams: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .is_some_and(|name| {
                    name.strip_prefix(&stem).is_some_and(|rest| {
                        rest == ".jsonl" || (rest.starts_with('.') && rest.ends_with(".jsonl"))
                    })
                })
        })
        .collect();
    streams.sort();
    streams
}

/// The iteration a found case's name ends with (`..._SEED_ITERATION`).
fn iteration_of(name: &str) -> Option<u64> {
    name.rsplit('_').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn campaign(role: ProtocolRole, seed: u64) -> Campaign {
        Campaign::new(
            role,
            seed,
            Invocation {
                adapter: "./impl --strict".into(),
                out: "out".into(),
                options: Vec::new(),
            },
        )
    }

    fn adapter() -> AdapterInfo {
        AdapterInfo {
            command: vec!["./impl".into(), "--strict".into()],
            mode: "persistent".into(),
            implementation: None,
            roles: vec![ProtocolRole::Validator],
            versus: None,
            others: Vec::new(),
        }
    }

    fn valid(rules: &[&str]) -> Exercised {
        Exercised::Valid(rules.iter().map(|r| (*r).to_owned()).collect())
    }

    fn broken(rule: &str, clause: &str) -> Exercised {
        Exercised::Broken {
            rule: rule.into(),
            clause: clause.into(),
        }
    }

    fn charged(rule: &str, kind: ChargeKind) -> IterationOutcome {
        IterationOutcome::Disagreed(vec![Charge {
            non_strict: false,
            rule: rule.into(),
            kind,
        }])
    }

    const LENIENT: ChargeKind = ChargeKind::Failure(Failure::Lenient);
    const OVER_STRICT: ChargeKind = ChargeKind::Failure(Failure::OverStrict);

    fn row<'a>(report: &'a RunReport, rule: &str) -> (&'a RuleCampaign, RuleVerdict) {
        let row = report.rules.iter().find(|r| r.rule == rule).expect("a row");
        (row.fuzz.as_ref().expect("campaign counts"), row.verdict)
    }

    /// Ten iterations of a validator's campaign: the even ones valid, the odd ones broken.
    fn records() -> Vec<(u64, Exercised, IterationOutcome)> {
        (0..10)
            .map(|i| {
                let (exercised, outcome) = match i {
                    // ASR-215 binds readers only: a validator's valid stream does not count it.
                    0 => (valid(&["ASR-214", "ASR-215"]), IterationOutcome::Agreed),
                    2 => (valid(&["ASR-214"]), charged("ASR-206", OVER_STRICT)),
                    4 => (
                        valid(&[]),
                        charged(crate::judge::UNATTRIBUTED, ChargeKind::Fault),
                    ),
                    n if n % 2 == 0 => (valid(&["ASR-214"]), IterationOutcome::Agreed),
                    1 | 3 => (broken("ASR-212", "ASR-212.a"), charged("ASR-212", LENIENT)),
                    5 => (broken("ASR-212", "ASR-212.b"), IterationOutcome::Agreed),
                    7 => (broken("ASR-234", "ASR-234.a"), IterationOutcome::Skipped),
                    _ => (broken("ASR-208", "ASR-208.a"), charged("ASR-208", LENIENT)),
                };
                (i, exercised, outcome)
            })
            .collect()
    }

    /// A campaign of the records of the iterations `taken`.
    fn of(taken: impl Fn(u64) -> bool) -> Campaign {
        let mut c = campaign(ProtocolRole::Validator, 9);
        for (i, exercised, outcome) in records() {
            if taken(i) {
                c.record_iteration(i, &exercised, &outcome);
            }
        }
        c
    }

    fn ten() -> Campaign {
        of(|_| true)
    }

    #[test]
    fn every_iteration_counts_once_as_valid_or_under_its_broken_rule() {
        let mut c = ten();
        // Recorded again (a job that took it twice): counted once.
        c.record_iteration(
            3,
            &broken("ASR-212", "ASR-212.a"),
            &IterationOutcome::Agreed,
        );
        let report = c.into_report(adapter());
        let about = report.campaign.as_ref().expect("a campaign");
        assert_eq!(about.iterations, 10);
        assert_eq!((about.valid, about.broken, about.skipped), (5, 5, 1));
        let broken: u64 = report
            .rules
            .iter()
            .map(|r| r.fuzz.as_ref().map_or(0, |f| f.broken))
            .sum();
        assert_eq!(about.valid + broken, about.iterations);
        let (f212, v212) = row(&report, "ASR-212");
        assert_eq!((f212.broken, f212.valid, f212.exercised), (3, 0, 3));
        assert_eq!(
            f212.clauses,
            BTreeMap::from([("ASR-212.a".to_owned(), 2), ("ASR-212.b".to_owned(), 1)])
        );
        assert_eq!(
            f212.disagreements,
            BTreeMap::from([("lenient".to_owned(), 2)])
        );
        assert_eq!(v212, RuleVerdict::NonConformant);
        let (f214, v214) = row(&report, "ASR-214");
        assert_eq!((f214.valid, f214.exercised), (4, 4));
        assert_eq!(v214, RuleVerdict::Conformant);
        // Charged though no stream held its members: held against it all the same.
        let (f206, v206) = row(&report, "ASR-206");
        assert_eq!((f206.exercised, v206), (0, RuleVerdict::NonConformant));
        // Only skipped: not exercised.
        let (f234, v234) = row(&report, "ASR-234");
        assert_eq!((f234.broken, f234.skipped, f234.exercised), (1, 1, 0));
        assert_eq!(v234, RuleVerdict::Untested);
        assert_eq!(
            row(&report, "ASR-208").1,
            RuleVerdict::NonStrict,
            "a SHOULD"
        );
        let (f215, v215) = row(&report, "ASR-215");
        assert_eq!((f215.valid, v215), (0, RuleVerdict::NotApplicable));
        assert_eq!(row(&report, "ASR-231").1, RuleVerdict::Untested);
        assert_eq!(
            about.unattributed,
            BTreeMap::from([("fault".to_owned(), 1)])
        );
        assert_eq!(about.disagreed, 5);
        assert_eq!(
            about.disagreements,
            BTreeMap::from([
                ("fault".to_owned(), 1),
                ("lenient".to_owned(), 3),
                ("over-strict".to_owned(), 1)
            ])
        );
        assert_eq!(
            about.repeat,
            [
                "asr-ctk fuzz --role validator --adapter './impl --strict' --seed 9 --first 0 --iterations 10 --out out"
            ]
        );
    }

    #[test]
    fn found_cases_are_the_reports_cases_listed_under_their_rule() {
        let mut c = ten();
        let found = |name: &str, iteration| FoundCase {
            sidecar: PathBuf::from(format!("out/found/{name}.json")),
            streams: vec![PathBuf::from(format!("out/found/{name}.jsonl"))],
            detail: "accepted a stream that breaks it".into(),
            iteration,
        };
        c.record_found("ASR-212", LENIENT, found("ASR-212/n_fuzz_lenient_9_1", 1));
        c.record_found(
            crate::judge::UNATTRIBUTED,
            ChargeKind::Fault,
            FoundCase {
                detail: "the adapter timed out".into(),
                ..found("unattributed/y_fuzz_fault_9_4", 4)
            },
        );
        assert_eq!(
            c.stream_files()["ASR-212/n_fuzz_lenient_9_1"],
            ["ASR-212/n_fuzz_lenient_9_1.jsonl"]
        );
        let report = c.into_report(adapter());
        assert_eq!(
            row(&report, "ASR-212").0.found,
            ["ASR-212/n_fuzz_lenient_9_1"]
        );
        let about = report.campaign.as_ref().expect("a campaign");
        assert_eq!(about.unattributed_found, ["unattributed/y_fuzz_fault_9_4"]);
        let names: Vec<(&str, Outcome)> = report
            .cases
            .iter()
            .map(|c| (c.name.as_str(), c.outcome))
            .collect();
        assert_eq!(
            names,
            [
                ("ASR-212/n_fuzz_lenient_9_1", Outcome::Fail),
                ("unattributed/y_fuzz_fault_9_4", Outcome::Timeout)
            ]
        );
        assert_eq!(
            report.cases[0].attributions[0].rule.as_deref(),
            Some("ASR-212")
        );
        assert_eq!(report.cases[0].attributions[0].kind, Failure::Lenient);
        assert!(report.has_failures());
    }

    #[test]
    fn parts_join_into_the_whole_and_only_parts_of_one_campaign_join() {
        let whole = ten().into_report(adapter());
        // Two machines: 0 to 3 and 7 to 9 on one, 4 to 6 on the other.
        let first = of(|i| !(4..7).contains(&i)).into_report(adapter());
        let second = of(|i| (4..7).contains(&i)).into_report(adapter());
        assert_eq!(
            first.campaign.as_ref().map(|c| c.repeat.len()),
            Some(2),
            "a command a range"
        );
        let joined = merge_reports(&[("a".into(), first.clone()), ("b".into(), second)])
            .expect("one campaign");
        let strip = |r: &RunReport| {
            let mut about = r.campaign.clone().expect("a campaign");
            about.repeat.clear();
            let rules: Vec<(String, RuleVerdict, Option<RuleCampaign>)> = r
                .rules
                .iter()
                .map(|x| (x.rule.clone(), x.verdict, x.fuzz.clone()))
                .collect();
            (about, rules)
        };
        assert_eq!(strip(&joined), strip(&whole));
        let about = joined.campaign.as_ref().expect("a campaign");
        assert_eq!(about.ranges, [IterationRange { first: 0, last: 9 }]);

        let refused = |other: RunReport| {
            merge_reports(&[("a".into(), first.clone()), ("b".into(), other)]).expect_err("refused")
        };
        assert_eq!(refused(first.clone()), MergeError::Overlap { iteration: 0 });
        let overlapping = of(|i| i == 9).into_report(adapter());
        assert_eq!(refused(overlapping), MergeError::Overlap { iteration: 9 });
        let mut seed = campaign(ProtocolRole::Validator, 10);
        seed.record_iteration(50, &valid(&[]), &IterationOutcome::Agreed);
        assert!(matches!(
            refused(seed.into_report(adapter())),
            MergeError::Differ { member: "seed", .. }
        ));
        let mut reader = campaign(ProtocolRole::Reader, 9);
        reader.record_iteration(50, &valid(&[]), &IterationOutcome::Agreed);
        let error = refused(reader.into_report(adapter()));
        assert!(matches!(error, MergeError::Differ { member: "role", .. }));
        assert!(
            error.to_string().contains("role validator and reader"),
            "{error}"
        );
        let mut run = first.clone();
        run.campaign = None;
        assert_eq!(
            merge_reports(&[("a".into(), first.clone()), ("run".into(), run)]),
            Err(MergeError::NotACampaign("run".into()))
        );
    }

    #[test]
    fn the_report_meets_its_schema_which_refuses_unknown_members() {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../../schemas/report.schema.json"))
                .expect("schema is JSON");
        let validator = jsonschema::validator_for(&schema).expect("schema compiles");
        let mut c = ten();
        c.record_found(
            "ASR-212",
            LENIENT,
            FoundCase {
                sidecar: "out/found/ASR-212/n_fuzz_lenient_9_1.json".into(),
                streams: Vec::new(),
                detail: "accepted".into(),
                iteration: 1,
            },
        );
        let json = serde_json::to_value(c.into_report(adapter())).expect("serializes");
        let errors: Vec<String> = validator
            .iter_errors(&json)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        let back: RunReport = serde_json::from_value(json.clone()).expect("reads back");
        assert_eq!(serde_json::to_value(&back).expect("serializes"), json);
        let at = json["rules"]
            .as_array()
            .and_then(|rules| rules.iter().position(|r| r["rule"] == "ASR-212"))
            .expect("a row");
        for (pointer, value) in [
            ("/campaign/extra", serde_json::json!(1)),
            ("/campaign/disagreements/misread", serde_json::json!(1)),
            (&*format!("/rules/{at}/fuzz/extra"), serde_json::json!(1)),
            (
                &*format!("/rules/{at}/fuzz/disagreements/wrong"),
                serde_json::json!(1),
            ),
            ("/campaign/ranges/0/extra", serde_json::json!(1)),
        ] {
            let mut changed = json.clone();
            let (parent, name) = pointer.rsplit_once('/').expect("a pointer");
            changed
                .pointer_mut(parent)
                .and_then(serde_json::Value::as_object_mut)
                .expect("an object")
                .insert(name.to_owned(), value);
            assert!(!validator.is_valid(&changed), "{pointer} refused");
            assert!(
                serde_json::from_value::<RunReport>(changed).is_err()
                    || pointer.contains("disagreements"),
                "{pointer}: unknown members are refused when read too"
            );
        }
    }

    #[test]
    fn iterations_are_kept_as_runs_whatever_their_order() {
        let mut runs = BTreeMap::new();
        for i in [5, 3, 4, 9, 0, 1, 2, 8, u64::MAX] {
            assert!(insert(&mut runs, i));
        }
        assert!(!insert(&mut runs, 4), "there already");
        assert_eq!(runs, BTreeMap::from([(0, 5), (8, 9), (u64::MAX, u64::MAX)]));
        // A report's ranges are read as runs too, overlapping ones joined, however large.
        let mut report = ten().into_report(adapter());
        if let Some(about) = report.campaign.as_mut() {
            about.ranges = vec![
                IterationRange {
                    first: 10,
                    last: u64::MAX,
                },
                IterationRange { first: 0, last: 20 },
                IterationRange { first: 30, last: 5 },
            ];
        }
        let read = Campaign::from_report(&report).expect("a campaign");
        assert_eq!(read.iterations, BTreeMap::from([(0, u64::MAX)]));
        assert_eq!(read.iterations(), u64::MAX, "counted without overflow");
    }

    #[test]
    fn a_valid_stream_holds_the_rules_of_its_members_that_bind_the_role() {
        let data = crate::fuzz::seeded_bytes(3, 8192);
        let stream = crate::fuzz::generator::stream(
            &mut arbitrary::Unstructured::new(&data),
            &crate::fuzz::generator::Config::default(),
        )
        .expect("a stream");
        let reader = rules_held(&[&stream], ProtocolRole::Reader);
        assert!(
            reader.contains("ASR-406"),
            "every stream's lineage: {reader:?}"
        );
        assert!(reader.iter().all(|r| binds(r, ProtocolRole::Reader)));
        let validator = rules_held(&[&stream], ProtocolRole::Validator);
        assert!(validator.iter().all(|r| binds(r, ProtocolRole::Validator)));
        assert!(!validator.contains("ASR-215"), "a reader's rule");
        let header = Stream {
            records: stream.records[..1].to_vec(),
        };
        assert!(
            rules_held(&[&header], ProtocolRole::Reader).len() <= reader.len(),
            "a stream of its header alone holds no more"
        );
    }
}
