//! `asr-ctk diff`: two implementations (or more) on the same streams, every disagreement
//! listed by JSON Pointer and grouped by the rule it comes from; with more than two, by
//! which implementations side with which answer too ([`nway`]).

mod nway;

use crate::adapter::schema::SchemaCheck;
use crate::adapter::side::{Answer, Side};
use crate::adapter::timeouts::StreamTimeoutArgs;
use crate::adapter::{Talk, supervise};
use crate::limits::LimitArgs;
use crate::role::RoleArg;
use crate::{corpus, exit};
use anyhow::{Context, Result, bail};
use asr_suite::case::{Case, Expect, Provenance, Sidecar, Status};
use asr_suite::catalog::Role;
use asr_suite::conformance::{
    AdapterInfo, Attribution, CaseResult, Compared, Failure, Outcome, RunReport,
};
use asr_suite::judge::members::Kinds;
use asr_suite::judge::{ReadingMismatch, UNATTRIBUTED, diff_readings};
use asr_suite::protocol::{ProtocolRole, ReadingAnswer, Reply, StreamAnswer};
use asr_suite::render::escape_controls;
use asr_suite::rule;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The adapter commands (give --adapter twice or more; `reference` names the built-in
    /// one).
    #[arg(long = "adapter", value_name = "CMD", num_args = 1, required = true)]
    adapters: Vec<String>,
    /// Streams to compare on; without them, the corpus's cases for the role.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// The role the implementations play.
    #[arg(long, value_enum, default_value_t = RoleArg::Reader)]
    role: RoleArg,
    /// Only corpus cases whose name matches this glob.
    #[arg(long, value_name = "GLOB")]
    case: Option<String>,
    #[command(flatten)]
    timeouts: StreamTimeoutArgs,
    /// Where to write the reports of the comparison (report.json, report.md, report.html, ...).
    #[arg(long, value_name = "DIR", default_value = "asr-ctk-diff")]
    out: PathBuf,
    /// The corpus directory (default: ./cases when it holds a catalog, else the corpus the kit carries).
    #[arg(long, value_name = "DIR")]
    cases: Option<PathBuf>,
    #[command(flatten)]
    limits: LimitArgs,
}

pub fn run(args: &Args) -> Result<u8> {
    anyhow::ensure!(
        args.adapters.len() >= 2,
        "give --adapter at least twice: the implementations to compare"
    );
    let timeouts = args.timeouts.timeouts()?;
    let role = args.role.protocol();
    let corpus::Corpus {
        root,
        cases: corpus,
        info,
    } = corpus::load(args.cases.as_deref())?;
    let subjects = subjects(args, &corpus, role)?;
    let limits = args.limits.limits()?;
    let commands: Vec<Vec<String>> = args
        .adapters
        .iter()
        .map(|a| command(a, limits))
        .collect::<Result<_>>()?;
    let schemas = SchemaCheck::new(false)?;
    let talk = Talk {
        timeout: timeouts.answer(role),
        start_timeout: timeouts.start,
        max_reply_bytes: limits.max_reply_bytes,
        check: &schemas,
        retention: None,
    };
    supervise::init().context("failed to set up the supervision of adapters")?;
    let mut sides = Vec::with_capacity(commands.len());
    for argv in &commands {
        match Side::start(argv, talk) {
            Ok(side) => sides.push(side),
            Err(code) => {
                for side in &mut sides {
                    side.stop();
                }
                return Ok(code);
            }
        }
    }
    if sides.len() > 2 {
        let subject = nway::Subject {
            corpus: &corpus,
            info,
            root: &root,
            subjects: &subjects,
            commands: &commands,
        };
        return nway::run(args, subject, sides, role, talk);
    }
    let mut results = Vec::new();
    let mut by_rule: BTreeMap<String, Vec<(String, ReadingMismatch)>> = BTreeMap::new();
    for (index, case) in subjects.iter().enumerate() {
        if supervise::interrupted() {
            break;
        }
        let mut answers = Vec::with_capacity(2);
        for side in &mut sides {
            let request = crate::adapter::request(case, index as u64 + 1, role, side.by_path())
                .map_err(|e| anyhow::anyhow!(e))?;
            answers.push(match side.ask(&request, talk) {
                Ok(Answer::Streams(streams)) => Ok(streams),
                Ok(Answer::Skipped(reason)) => Err(NotAnswered::Skipped(reason)),
                Err(fault) => Err(NotAnswered::Fault(fault)),
            });
        }
        let (a, b) = (&answers[0], &answers[1]);
        let mismatches = compare(a, b, role, case);
        for m in &mismatches {
            by_rule
                .entry(m.rule.clone())
                .or_default()
                .push((case.name.clone(), m.clone()));
        }
        results.push(result(case, a, b, &mismatches));
    }
    let identity = |side: &Side| match &side.identity {
        Reply::Started { implementation, .. } => Some(implementation.clone()),
        _ => None,
    };
    let (first, second) = (identity(&sides[0]), identity(&sides[1]));
    for side in &mut sides {
        side.stop();
    }
    let adapter = AdapterInfo {
        command: commands[0].clone(),
        mode: "diff".into(),
        implementation: first,
        roles: vec![role],
        versus: Some(Compared {
            command: commands[1].clone(),
            implementation: second,
        }),
        others: Vec::new(),
    };
    let compared = results.len();
    let mut report = RunReport::new(&corpus, info, adapter, results, Vec::new())
        .context("failed to read the corpus for its digest")?;
    report.interrupted = supervise::interrupted();
    if compared < subjects.len() {
        report.incomplete = Some(format!(
            "the run was interrupted: {} of {} streams compared",
            compared,
            subjects.len()
        ));
    }
    let streams = crate::write::stream_files(&root, &corpus);
    crate::write::reports(&report, &root, &streams, &args.out)?;
    let code = exit_code(&report, !by_rule.is_empty());
    let lines = by_rule
        .iter()
        .map(|(rule, items)| {
            let said = items
                .iter()
                .map(|(case, m)| format!("{case} {}", disagreement(m)))
                .collect();
            (rule.clone(), said)
        })
        .collect();
    exit::after_printing(code, print(&lines, &[], &report, &args.out))
}

/// The exit status of a comparison: interrupted, any disagreement (or failure), nothing
/// compared, or agreement.
fn exit_code(report: &RunReport, disagreed: bool) -> u8 {
    let compared = report
        .cases
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Pass | Outcome::Fail))
        .count();
    if report.interrupted {
        exit::INTERRUPTED
    } else if disagreed || report.has_failures() {
        exit::INVALID
    } else if compared == 0 {
        // Agreeing on nothing is no agreement: a gate must not pass on it.
        exit::HARNESS
    } else {
        exit::OK
    }
}

/// Why one implementation gave no answer to compare.
enum NotAnswered {
    /// It declined the case (a skip: never an error).
    Skipped(String),
    /// It failed to answer: an error, a timeout, a crash, a broken protocol.
    Fault(String),
}

type SideAnswer = Result<Vec<StreamAnswer>, NotAnswered>;

fn command(line: &str, limits: crate::limits::Limits) -> Result<Vec<String>> {
    if line == "reference" {
        return crate::adapter::reference_command(limits);
    }
    crate::adapter::adapter_command(line)
}

fn compare(
    a: &SideAnswer,
    b: &SideAnswer,
    role: ProtocolRole,
    case: &Case,
) -> Vec<ReadingMismatch> {
    let rules = &case.sidecar.rules;
    let (Ok(a), Ok(b)) = (a, b) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (index, (x, y)) in a.iter().zip(b).enumerate() {
        let mut found = if role == ProtocolRole::Reader {
            if x.valid != y.valid {
                // One refused the stream: a reading sent beside a refusal is not compared
                // (PROTOCOL.md), only the verdict is.
                vec![verdict_difference(x, y, case)]
            } else if !x.valid || x.reading == y.reading {
                // Both refused, or both read it alike: nothing to attribute, and the stream
                // is not read for the kinds of its records, which hold every line of it.
                continue;
            } else {
                let null = serde_json::Value::Null;
                let kinds = Kinds::of_stream(
                    &case
                        .streams
                        .get(index)
                        .and_then(|(_, path)| std::fs::read(path).ok())
                        .unwrap_or_default(),
                );
                diff_readings(
                    x.reading.as_ref().map_or(&null, ReadingAnswer::json),
                    y.reading.as_ref().map_or(&null, ReadingAnswer::json),
                    &kinds,
                )
            }
        } else {
            validator_differences(x, y, rules)
        };
        if a.len() > 1 {
            for m in &mut found {
                m.pointer = format!("/streams/{index}{}", m.pointer);
            }
        }
        out.extend(found);
    }
    out
}

fn result(
    case: &Case,
    a: &SideAnswer,
    b: &SideAnswer,
    mismatches: &[ReadingMismatch],
) -> CaseResult {
    let (outcome, detail) = match (a, b) {
        (Err(NotAnswered::Fault(e)), _) => (
            Outcome::Error,
            Some(format!("the first implementation: {e}")),
        ),
        (_, Err(NotAnswered::Fault(e))) => (
            Outcome::Error,
            Some(format!("the second implementation: {e}")),
        ),
        (Err(NotAnswered::Skipped(why)), _) => (
            Outcome::Skipped,
            Some(format!(
                "not compared: the first implementation skipped it: {why}"
            )),
        ),
        (_, Err(NotAnswered::Skipped(why))) => (
            Outcome::Skipped,
            Some(format!(
                "not compared: the second implementation skipped it: {why}"
            )),
        ),
        _ if mismatches.is_empty() => (Outcome::Pass, None),
        _ => (
            Outcome::Fail,
            Some(
                mismatches
                    .iter()
                    .map(disagreement)
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
        ),
    };
    let pretty = |r: &SideAnswer| match r {
        Ok(streams) => serde_json::to_string_pretty(streams).unwrap_or_default() + "\n",
        Err(NotAnswered::Skipped(e) | NotAnswered::Fault(e)) => format!("{e}\n"),
    };
    let (first, second) = (pretty(a), pretty(b));
    let diff = (outcome == Outcome::Fail)
        .then(|| crate::text_diff::unified_diff(&first, &second, ("first", "second")));
    CaseResult {
        detail,
        attributions: mismatches.iter().map(charged).collect(),
        expected: (outcome == Outcome::Fail).then_some(first),
        actual: (outcome == Outcome::Fail).then_some(second),
        diff,
        ..CaseResult::new(
            case.name.clone(),
            case.sidecar.id.clone(),
            case.sidecar.rules.clone(),
            outcome,
        )
    }
    .capped(asr_suite::conformance::KEPT_BYTES)
}

/// Two readers differ on whether a stream can be read: charged to the first rule binding
/// readers that the refusing side cites, else to the case's rules that bind readers
/// (ASR-X-003, what a reader may refuse, for a stream of no case).
fn verdict_difference(a: &StreamAnswer, b: &StreamAnswer, case: &Case) -> ReadingMismatch {
    let catalog = asr_suite::catalog::Catalog::embedded();
    let refusing = if a.valid { b } else { a };
    let rule = refusing
        .diagnostics
        .iter()
        .map(|d| d.rule.as_str())
        .find(|r| catalog.binds(r, ProtocolRole::Reader))
        .map(str::to_owned)
        .or_else(|| {
            asr_suite::judge::reader_rules(case)
                .first()
                .map(|r| (*r).to_owned())
        })
        .unwrap_or_else(|| rule::ASR_X_003.to_string());
    ReadingMismatch {
        pointer: "/valid".into(),
        rule,
        expected: a.valid.into(),
        actual: Some(b.valid.into()),
        decision: None,
        subject: None,
    }
}

/// Where two validators differ on one stream: its verdict (under the case's first rule), and
/// each finding one of them reports and the other does not, under the finding's own rule.
fn validator_differences(
    a: &StreamAnswer,
    b: &StreamAnswer,
    rules: &[String],
) -> Vec<ReadingMismatch> {
    let findings = |s: &StreamAnswer| -> BTreeSet<(usize, String, String)> {
        s.diagnostics
            .iter()
            .map(|d| (d.line, d.severity.to_string(), d.rule.clone()))
            .collect()
    };
    let (first, second) = (findings(a), findings(b));
    let mut out = Vec::new();
    if a.valid != b.valid {
        out.push(ReadingMismatch {
            pointer: "/valid".into(),
            rule: rules
                .first()
                .map_or_else(|| UNATTRIBUTED.to_owned(), Clone::clone),
            expected: a.valid.into(),
            actual: Some(b.valid.into()),
            decision: None,
            subject: None,
        });
    }
    let absent = || serde_json::Value::from("no such finding");
    for (line, severity, rule) in first.difference(&second) {
        out.push(ReadingMismatch {
            pointer: format!("/findings/line {line}"),
            rule: rule.clone(),
            expected: format!("{severity} {rule}").into(),
            actual: Some(absent()),
            decision: None,
            subject: None,
        });
    }
    for (line, severity, rule) in second.difference(&first) {
        out.push(ReadingMismatch {
            pointer: format!("/findings/line {line}"),
            rule: rule.clone(),
            expected: absent(),
            actual: Some(format!("{severity} {rule}").into()),
            decision: None,
            subject: None,
        });
    }
    out
}

/// A disagreement charged to its rule, as the second implementation's failure: a finding
/// only the first reports (or a verdict of valid against invalid) is lenient, one only the
/// second reports over-strict; readings differ on a member.
fn charged(m: &ReadingMismatch) -> Attribution {
    let kind = if m.pointer.starts_with("/findings/") {
        if m.expected == "no such finding" {
            Failure::OverStrict
        } else {
            Failure::Lenient
        }
    } else if m.pointer == "/valid" {
        if m.expected == serde_json::Value::Bool(true) {
            Failure::OverStrict
        } else {
            Failure::Lenient
        }
    } else {
        Failure::Reading
    };
    Attribution {
        rule: (m.rule != UNATTRIBUTED).then(|| m.rule.clone()),
        kind,
        decision: m.decision.clone(),
        warning: false,
    }
}

/// One disagreement in words: where, under which rule, and what each side said.
fn disagreement(m: &ReadingMismatch) -> String {
    let second = m
        .actual
        .as_ref()
        .map_or_else(|| "nothing".to_owned(), ToString::to_string);
    format!(
        "{} ({}): first {}, second {second}",
        m.pointer, m.rule, m.expected
    )
}

fn subjects(args: &Args, corpus: &[Case], role: ProtocolRole) -> Result<Vec<Case>> {
    if !args.files.is_empty() {
        return Ok(args
            .files
            .iter()
            .map(|path| Case {
                name: path.to_string_lossy().into_owned(),
                sidecar_path: path.clone(),
                streams: vec![(String::new(), path.clone())],
                sidecar: Sidecar {
                    id: "file".into(),
                    description: "a stream given on the command line".into(),
                    rules: Vec::new(),
                    clauses: Vec::new(),
                    roles: vec![Role::Reader, Role::Validator],
                    expect: Expect::default(),
                    provenance: Provenance::HandWritten { note: None },
                    status: Status::Stable,
                    decision: None,
                },
                fixture: None,
            })
            .collect());
    }
    let name = corpus::pattern(args.case.as_deref(), "--case")?;
    let selected: Vec<Case> = corpus
        .iter()
        .filter(|c| match role {
            ProtocolRole::Reader => c.sidecar.expect.reads(),
            _ => c.sidecar.roles.contains(&Role::Validator),
        })
        .filter(|c| name.as_ref().is_none_or(|p| p.matches(&c.name)))
        .cloned()
        .collect();
    if selected.is_empty() {
        bail!(
            "no case to compare on: give streams, or a --case that matches corpus cases for the role"
        );
    }
    Ok(selected)
}

/// Prints the disagreements, each already said (`by_rule`), and what was not compared: the
/// cases left out, and for a comparison of more than two, the implementations left out of
/// a case compared among the others (`left_out`).
fn print(
    by_rule: &BTreeMap<String, Vec<String>>,
    left_out: &[String],
    report: &RunReport,
    out_dir: &std::path::Path,
) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let of = |outcome: Outcome| -> Vec<&CaseResult> {
        report
            .cases
            .iter()
            .filter(|c| c.outcome == outcome)
            .collect()
    };
    let (errors, skipped) = (of(Outcome::Error), of(Outcome::Skipped));
    for (rule, items) in by_rule {
        writeln!(out, "{rule}: {} disagreement(s)", items.len())?;
        for said in items {
            writeln!(out, "  {}", escape_controls(said))?;
        }
    }
    for said in left_out {
        writeln!(out, "not compared for {}", escape_controls(said))?;
    }
    for case in &errors {
        writeln!(
            out,
            "not compared: {}: {}",
            case.name,
            escape_controls(case.detail.as_deref().unwrap_or(""))
        )?;
    }
    // Skips by reason, counted: one line each, not one a case.
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for case in &skipped {
        let why = case.detail.as_deref().unwrap_or("");
        *reasons
            .entry(why.strip_prefix("not compared: ").unwrap_or(why))
            .or_default() += 1;
    }
    for (why, n) in &reasons {
        writeln!(out, "not compared ({n}): {}", escape_controls(why))?;
    }
    let disagreements: usize = by_rule.values().map(Vec::len).sum();
    let compared = report.cases.len() - errors.len() - skipped.len();
    writeln!(
        out,
        "{disagreements} disagreement(s) on {compared} stream(s) compared; {} not compared ({} skipped, {} without an answer)",
        errors.len() + skipped.len(),
        skipped.len(),
        errors.len()
    )?;
    if compared == 0 {
        writeln!(out, "nothing was compared: no verdict")?;
    }
    writeln!(
        out,
        "reports with the diffs: {}",
        out_dir.join("report.{md,html,json}").display()
    )?;
    out.flush()?;
    Ok(())
}
