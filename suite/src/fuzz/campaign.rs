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
//!   ([`rules_held`]): the rule of each member of the reference's reading of the stream
//!   (`x-asr-rule` and `x-asr-rule-by-kind` of `schemas/reading.schema.json`), and the rule
//!   of each value set of the catalog (`cases/rules.toml`) whose member a record of the
//!   stream gives a value. It is counted under each ([`RuleCampaign::valid`]), and once in
//!   [`CampaignResult::valid`].
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
//! let lenient = Charge { rule: "ASR-212".into(), kind: ChargeKind::Failure(Failure::Lenient) };
//! campaign.record_iteration(1, &broken, &IterationOutcome::Disagreed(vec![lenient]));
//! campaign.record_found("ASR-212", ChargeKind::Failure(Failure::Lenient), FoundCase {
//!     sidecar: "fuzz-out/found/ASR-212/n_fuzz_lenient_7_1.json".into(),
//!     streams: vec!["fuzz-out/found/ASR-212/n_fuzz_lenient_7_1.jsonl".into()],
//!     detail: "accepted a stream that breaks ASR-212".into(),
//!     iteration: 1,
//! });
//! let adapter = AdapterInfo { command: vec!["./my-adapter".into()], mode: "persistent".into(),
//!     implementation: None, roles: vec![ProtocolRole::Validator], versus: None };
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

use crate::catalog::{Catalog, Level, Role};
use crate::conformance::{
    AdapterInfo, Attribution, CaseResult, CorpusInfo, CorpusOrigin, Failure, Outcome, RuleVerdict,
    RunReport,
};
use crate::fuzz::generator::Stream;
use crate::protocol::ProtocolRole;
use serde::{Deserialize, Serialize};
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

/// The campaign's part of its report ([`RunReport::campaign`]).
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

/// One rule's part of a campaign ([`crate::conformance::RuleResult::fuzz`]).
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
    /// Iterations with a disagreement charged to this rule, by kind ([`ChargeKind`]'s names).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub disagreements: BTreeMap<String, u64>,
    /// The found cases charged to this rule (names below `OUT/found/`, as the report's
    /// cases are named).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub found: Vec<String>,
}

/// The accounting of one campaign, or of the parts of one joined. Iterations may be recorded
/// in any order (jobs take them as they come).
#[derive(Debug, Clone)]
pub struct Campaign {
    role: ProtocolRole,
    seed: u64,
    invocation: Invocation,
    iterations: BTreeSet<u64>,
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
            iterations: BTreeSet::new(),
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
        if !self.iterations.insert(iteration) {
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
            let charges: BTreeSet<&Charge> = charges.iter().collect();
            self.disagreed += u64::from(!charges.is_empty());
            for charge in charges {
                let kind = charge.kind.as_str().to_owned();
                if Catalog::embedded().knows(&charge.rule) {
                    let row = self.rules.entry(charge.rule.clone()).or_default();
                    *row.disagreements.entry(kind).or_default() += 1;
                } else {
                    *self.unattributed.entry(kind).or_default() += 1;
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
        self.iterations.len() as u64
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
        match self.iterations.intersection(&other.iterations).next() {
            Some(&iteration) => Err(MergeError::Overlap { iteration }),
            None => Ok(()),
        }
    }

    /// Adds the counts and cases of `other`.
    fn join(&mut self, other: Campaign) {
        self.iterations.extend(other.iterations);
        self.valid += other.valid;
        self.skipped += other.skipped;
        self.disagreed += other.disagreed;
        for (rule, theirs) in other.rules {
            let mine = self.rules.entry(rule).or_default();
            mine.broken += theirs.broken;
            mine.valid += theirs.valid;
            mine.skipped += theirs.skipped;
            add_counts(&mut mine.clauses, theirs.clauses);
            add_counts(&mut mine.disagreements, theirs.disagreements);
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
        for range in &about.ranges {
            campaign.iterations.extend(range.first..=range.last);
        }
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
        let ranges = ranges(&self.iterations);
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
        argv.push((range.last - range.first + 1).to_string());
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
/// - a member of the reference's reading of a stream comes from the rule (`x-asr-rule` and
///   `x-asr-rule-by-kind` of `schemas/reading.schema.json`, as
///   [`crate::judge::members::Kinds`] tells them);
/// - or a record gives a value to the member of one of the catalog's value sets whose rule
///   it is (`cases/rules.toml`, [`crate::catalog::ValueSet`]).
///
/// Whether a mutator could break a record of the stream in place would say more, but costs
/// a copy of the stream for each of the mutators, several times the generation and the
/// judgement of the stream together: not done.
pub fn rules_held(streams: &[&Stream], role: ProtocolRole) -> BTreeSet<String> {
    let catalog = Catalog::embedded();
    let mut rules = BTreeSet::new();
    for stream in streams {
        let bytes = stream.to_bytes();
        let kinds = crate::judge::members::Kinds::of_stream(&bytes);
        let outcome = crate::reading::read_bytes(&bytes);
        if let Ok(reading) = serde_json::to_value(&outcome.reading) {
            let mut pointers = Vec::new();
            leaves(&reading, &mut String::new(), &mut pointers);
            rules.extend(pointers.iter().filter_map(|p| kinds.rule(p)));
        }
        for record in &stream.records {
            for set in catalog.value_sets() {
                if let Some(rule) = &set.rule {
                    if !rules.contains(rule) && !set.values_in(record).is_empty() {
                        rules.insert(rule.clone());
                    }
                }
            }
        }
    }
    rules.retain(|rule| binds(rule, role));
    rules
}

/// The JSON Pointer of every member of `value` that holds no object (an array's items
/// included), appended to `pointers`.
fn leaves(value: &serde_json::Value, at: &mut String, pointers: &mut Vec<String>) {
    let len = at.len();
    match value {
        serde_json::Value::Object(members) => {
            for (name, member) in members {
                at.push('/');
                at.push_str(&name.replace('~', "~0").replace('/', "~1"));
                leaves(member, at, pointers);
                at.truncate(len);
            }
        }
        serde_json::Value::Array(items) => {
            pointers.push(at.clone());
            for (index, item) in items.iter().enumerate() {
                at.push('/');
                at.push_str(&index.to_string());
                leaves(item, at, pointers);
                at.truncate(len);
            }
        }
        _ => pointers.push(at.clone()),
    }
}

/// A rule's verdict over a campaign.
fn verdict(rule: &str, fuzz: &RuleCampaign, role: ProtocolRole) -> RuleVerdict {
    let charged: u64 = fuzz.disagreements.values().sum();
    if !binds(rule, role) {
        RuleVerdict::NotApplicable
    } else if charged > 0 && must(rule) {
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
    role: ProtocolRole,
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
    case.role = role;
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

/// Consecutive runs of `iterations`.
fn ranges(iterations: &BTreeSet<u64>) -> Vec<IterationRange> {
    let mut ranges: Vec<IterationRange> = Vec::new();
    for &i in iterations {
        match ranges.last_mut() {
            Some(last) if last.last.checked_add(1) == Some(i) => last.last = i,
            _ => ranges.push(IterationRange { first: i, last: i }),
        }
    }
    ranges
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
fn binds(rule: &str, role: ProtocolRole) -> bool {
    let catalog = Catalog::embedded();
    if let Some(rule) = catalog.rule(rule) {
        return match role {
            ProtocolRole::Validator => rule.roles.contains(&Role::Validator),
            ProtocolRole::Reader => {
                rule.roles.contains(&Role::Reader) || rule.roles.contains(&Role::Consumer)
            }
            ProtocolRole::Producer => rule.roles.contains(&Role::Producer),
        };
    }
    catalog.inferred(rule).is_some() && role == ProtocolRole::Validator
}

fn add_counts(into: &mut BTreeMap<String, u64>, from: BTreeMap<String, u64>) {
    for (key, n) in from {
        *into.entry(key).or_default() += n;
    }
}

/// `name` below `root`, `/`-separated, without the sidecar's `.json`.
fn case_name(root: &Path, sidecar: &Path) -> String {
    let name = relative(root, sidecar);
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
fn streams_beside(sidecar: &Path) -> Vec<PathBuf> {
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
