//! `asr-ctk diff` with more than two implementations: each difference listed by rule and
//! JSON Pointer with the sides taken, numbered in `--adapter` order. One that gives no
//! answer to a case leaves it to the others.

use super::{Args, NotAnswered, SideAnswer, print};
use crate::adapter::side::{Answer, Side};
use crate::adapter::{Talk, supervise};
use crate::exit;
use anyhow::{Context, Result};
use asr_suite::case::Case;
use asr_suite::conformance::{
    AdapterInfo, Attribution, CaseResult, Compared, CorpusInfo, Failure, Outcome, RunReport,
};
use asr_suite::judge::members::Kinds;
use asr_suite::judge::sides::{Difference, NO_SUCH_FINDING, differences};
use asr_suite::judge::{UNATTRIBUTED, reader_rules};
use asr_suite::protocol::{ProtocolRole, Reply, StreamAnswer};
use std::collections::BTreeMap;
use std::path::Path;

/// What the implementations are compared on.
pub(super) struct Subject<'a> {
    pub corpus: &'a [Case],
    pub info: CorpusInfo,
    pub root: &'a Path,
    pub subjects: &'a [Case],
    pub commands: &'a [Vec<String>],
}

/// Compares the started `sides` on every subject, writes the reports and prints the
/// differences; the exit status.
pub(super) fn run(
    args: &Args,
    subject: Subject<'_>,
    mut sides: Vec<Side>,
    role: ProtocolRole,
    talk: Talk<'_>,
) -> Result<u8> {
    let labels: Vec<String> = sides
        .iter()
        .zip(&args.adapters)
        .enumerate()
        .map(|(n, (side, given))| match &side.identity {
            Reply::Started { implementation, .. } => format!("{} {}", n + 1, implementation.name),
            _ => format!("{} {given}", n + 1),
        })
        .collect();
    let mut results = Vec::new();
    let mut by_rule: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut left_out = Vec::new();
    for (index, case) in subject.subjects.iter().enumerate() {
        if supervise::interrupted() {
            break;
        }
        let mut answers: Vec<SideAnswer> = Vec::with_capacity(sides.len());
        for side in &mut sides {
            let request = crate::adapter::request(case, index as u64 + 1, role, side.by_path())
                .map_err(|e| anyhow::anyhow!(e))?;
            answers.push(match side.ask(&request, talk) {
                Ok(Answer::Streams(streams)) => Ok(streams),
                Ok(Answer::Skipped(reason)) => Err(NotAnswered::Skipped(reason)),
                Err(fault) => Err(NotAnswered::Fault(fault)),
            });
        }
        let found = compare(&answers, role, case);
        for d in &found {
            by_rule.entry(d.rule.clone()).or_default().push(format!(
                "{} {}",
                case.name,
                d.said(&labels)
            ));
        }
        let answered = answers.iter().filter(|a| a.is_ok()).count();
        if answered >= 2 {
            for (n, answer) in answers.iter().enumerate() {
                if let Err(NotAnswered::Skipped(why) | NotAnswered::Fault(why)) = answer {
                    left_out.push(format!("[{}]: {}: {why}", labels[n], case.name));
                }
            }
        }
        results.push(result(case, &answers, &found, &labels));
    }
    let identity = |side: &Side| match &side.identity {
        Reply::Started { implementation, .. } => Some(implementation.clone()),
        _ => None,
    };
    let mut compared: Vec<Compared> = sides
        .iter()
        .zip(subject.commands)
        .map(|(side, command)| Compared {
            command: command.clone(),
            implementation: identity(side),
        })
        .collect();
    for side in &mut sides {
        side.stop();
    }
    let first = compared.remove(0);
    let second = compared.remove(0);
    let adapter = AdapterInfo {
        command: first.command,
        mode: "diff".into(),
        implementation: first.implementation,
        roles: vec![role],
        versus: Some(second),
        others: compared,
    };
    let asked = results.len();
    let mut report = RunReport::new(subject.corpus, subject.info, adapter, results, Vec::new())
        .context("failed to read the corpus for its digest")?;
    report.interrupted = supervise::interrupted();
    if asked < subject.subjects.len() {
        report.incomplete = Some(format!(
            "the run was interrupted: {} of {} streams compared",
            asked,
            subject.subjects.len()
        ));
    }
    let streams = crate::write::stream_files(subject.root, subject.corpus);
    crate::write::reports(&report, subject.root, &streams, &args.out)?;
    let code = super::exit_code(&report, !by_rule.is_empty());
    exit::after_printing(code, print(&by_rule, &left_out, &report, &args.out))
}

/// The differences among the answers to `case`, stream by stream (a pointer of a case of
/// several streams starts with the stream's place).
fn compare(answers: &[SideAnswer], role: ProtocolRole, case: &Case) -> Vec<Difference> {
    let case_rules: Vec<&str> = match role {
        ProtocolRole::Reader => reader_rules(case),
        _ => case.sidecar.rules.iter().map(String::as_str).collect(),
    };
    let count = answers
        .iter()
        .filter_map(|a| a.as_ref().ok().map(Vec::len))
        .max()
        .unwrap_or(0);
    let mut out = Vec::new();
    for index in 0..count {
        let of_stream: Vec<Option<&StreamAnswer>> = answers
            .iter()
            .map(|a| a.as_ref().ok().and_then(|streams| streams.get(index)))
            .collect();
        let kinds = if role == ProtocolRole::Reader {
            Kinds::of_stream(
                &case
                    .streams
                    .get(index)
                    .and_then(|(_, path)| std::fs::read(path).ok())
                    .unwrap_or_default(),
            )
        } else {
            Kinds::default()
        };
        let mut found = differences(&of_stream, role, &kinds, &case_rules);
        if count > 1 {
            for d in &mut found {
                d.pointer = format!("/streams/{index}{}", d.pointer);
            }
        }
        out.extend(found);
    }
    out
}

fn result(
    case: &Case,
    answers: &[SideAnswer],
    found: &[Difference],
    labels: &[String],
) -> CaseResult {
    let answered = answers.iter().filter(|a| a.is_ok()).count();
    let not_answered: Vec<String> = answers
        .iter()
        .enumerate()
        .filter_map(|(n, a)| match a {
            Err(NotAnswered::Fault(e)) => Some(format!("[{}] failed: {e}", labels[n])),
            Err(NotAnswered::Skipped(e)) => Some(format!("[{}] skipped it: {e}", labels[n])),
            Ok(_) => None,
        })
        .collect();
    let fault = answers
        .iter()
        .any(|a| matches!(a, Err(NotAnswered::Fault(_))));
    let (outcome, mut lines) = if answered < 2 {
        let outcome = if fault {
            Outcome::Error
        } else {
            Outcome::Skipped
        };
        (outcome, vec!["not compared:".to_owned()])
    } else if found.is_empty() {
        (Outcome::Pass, Vec::new())
    } else {
        (
            Outcome::Fail,
            found
                .iter()
                .map(|d| format!("{} ({})", d.said(labels), d.rule))
                .collect(),
        )
    };
    lines.extend(not_answered);
    let pretty = |(n, r): (usize, &SideAnswer)| match r {
        Ok(streams) => format!(
            "[{}]\n{}\n",
            labels[n],
            serde_json::to_string_pretty(streams).unwrap_or_default()
        ),
        Err(NotAnswered::Skipped(e) | NotAnswered::Fault(e)) => format!("[{}]\n{e}\n", labels[n]),
    };
    let failed = outcome == Outcome::Fail;
    CaseResult {
        detail: (!lines.is_empty()).then(|| lines.join("\n")),
        attributions: found.iter().map(charged).collect(),
        expected: failed.then(|| pretty((0, &answers[0]))),
        actual: failed.then(|| {
            answers
                .iter()
                .enumerate()
                .skip(1)
                .map(pretty)
                .collect::<String>()
        }),
        ..CaseResult::new(
            case.name.clone(),
            case.sidecar.id.clone(),
            case.sidecar.rules.clone(),
            outcome,
        )
    }
    .capped(asr_suite::conformance::KEPT_BYTES)
}

/// A difference charged to its rule, as the failure of those that differ from the first
/// side: a finding the first side lacks (or a refusal where it accepts) is over-strict, one
/// it holds lenient; readings differ on a member.
fn charged(d: &Difference) -> Attribution {
    let first = d.sides.first().and_then(|s| s.value.as_ref());
    let place = d
        .pointer
        .strip_prefix("/streams/")
        .and_then(|rest| rest.find('/').map(|at| &rest[at..]))
        .unwrap_or(&d.pointer);
    let kind = if place.starts_with("/findings/") {
        if first.is_some_and(|v| v == NO_SUCH_FINDING) {
            Failure::OverStrict
        } else {
            Failure::Lenient
        }
    } else if place == "/valid" {
        if first == Some(&serde_json::Value::Bool(true)) {
            Failure::OverStrict
        } else {
            Failure::Lenient
        }
    } else {
        Failure::Reading
    };
    Attribution {
        rule: (d.rule != UNATTRIBUTED).then(|| d.rule.clone()),
        kind,
        decision: None,
        warning: false,
    }
}
