//! `asr-ctk diff`: two implementations on the same streams, every disagreement listed by
//! JSON Pointer and grouped by the rule it comes from.

use crate::run::adapter::{Fault, Persistent, split_command};
use crate::{corpus, exit};
use anyhow::{Context, Result, bail};
use asr_suite::case::{Case, Expect, Provenance, Sidecar, Status};
use asr_suite::catalog::Role;
use asr_suite::conformance::{AdapterInfo, CaseResult, Outcome, RunReport};
use asr_suite::judge::{ReadingMismatch, diff_readings};
use asr_suite::protocol::{CaseRequest, ProtocolRole, Reply, StreamAnswer};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The two adapter commands (give --adapter twice; `reference` names the built-in one).
    #[arg(long = "adapter", value_name = "CMD", num_args = 1, required = true)]
    adapters: Vec<String>,
    /// Streams to compare on; without them, the corpus's cases for the role.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// The role both implementations play.
    #[arg(long, value_enum, default_value_t = RoleArg::Reader)]
    role: RoleArg,
    /// Only corpus cases whose name matches this glob.
    #[arg(long, value_name = "GLOB")]
    case: Option<String>,
    /// Seconds to wait for each answer.
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    timeout: f64,
    /// Where to write the reports of the comparison (report.json, report.md, report.html, ...).
    #[arg(long, value_name = "DIR", default_value = "asr-ctk-diff")]
    out: PathBuf,
    /// The corpus directory (default: ./cases, else the corpus the kit was built with).
    #[arg(long, value_name = "DIR")]
    cases: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum RoleArg {
    Validator,
    Reader,
}

pub fn run(args: &Args) -> Result<u8> {
    anyhow::ensure!(
        args.adapters.len() == 2,
        "give --adapter exactly twice: the two implementations to compare"
    );
    anyhow::ensure!(
        args.timeout > 0.0 && args.timeout.is_finite(),
        "--timeout must be a positive number of seconds"
    );
    let role = match args.role {
        RoleArg::Validator => ProtocolRole::Validator,
        RoleArg::Reader => ProtocolRole::Reader,
    };
    let (_, corpus) = corpus::load(args.cases.as_deref())?;
    let subjects = subjects(args, &corpus, role)?;
    let commands: Vec<Vec<String>> = args
        .adapters
        .iter()
        .map(|a| command(a))
        .collect::<Result<_>>()?;
    let timeout = Duration::from_secs_f64(args.timeout);
    let mut first = start(&commands[0], timeout)?;
    let mut second = start(&commands[1], timeout)?;
    let mut results = Vec::new();
    let mut by_rule: BTreeMap<String, Vec<(String, ReadingMismatch)>> = BTreeMap::new();
    for (index, case) in subjects.iter().enumerate() {
        let request =
            crate::run::request(case, index as u64 + 1, role).map_err(|e| anyhow::anyhow!(e))?;
        let a = ask(&mut first, &commands[0], &request, timeout);
        let b = ask(&mut second, &commands[1], &request, timeout);
        let mismatches = compare(&a, &b, role, &case.sidecar.rules);
        for m in &mismatches {
            by_rule
                .entry(m.rule.clone())
                .or_default()
                .push((case.name.clone(), m.clone()));
        }
        results.push(result(case, &a, &b, &mismatches));
    }
    first.0.stop();
    second.0.stop();
    let adapter = AdapterInfo {
        command: [
            commands[0].clone(),
            vec!["--versus--".into()],
            commands[1].clone(),
        ]
        .concat(),
        mode: "diff".into(),
        implementation: match &first.1 {
            Reply::Started { implementation, .. } => Some(implementation.clone()),
            _ => None,
        },
        roles: vec![role],
    };
    let report = RunReport::new(&corpus, adapter, results, Vec::new())
        .context("failed to read the corpus for its digest")?;
    crate::run::write_report_files(&report, &args.out)?;
    print(&by_rule, &report, &args.out)?;
    Ok(if by_rule.is_empty() && !report.has_failures() {
        exit::OK
    } else {
        exit::INVALID
    })
}

fn command(line: &str) -> Result<Vec<String>> {
    if line == "reference" {
        let exe = std::env::current_exe().context("failed to find the asr-ctk executable")?;
        return Ok(vec![
            exe.to_string_lossy().into_owned(),
            "adapter".into(),
            "reference".into(),
        ]);
    }
    split_command(line).map_err(|e| anyhow::anyhow!("--adapter {line}: {e}"))
}

fn start(argv: &[String], timeout: Duration) -> Result<(Persistent, Reply)> {
    Persistent::start(argv, timeout, None)
        .map_err(|fault| anyhow::anyhow!("`{}` did not start: {fault:?}", argv.join(" ")))
}

/// Asks one adapter, restarting it once after a fault so one bad case does not end the run.
fn ask(
    adapter: &mut (Persistent, Reply),
    argv: &[String],
    request: &CaseRequest,
    timeout: Duration,
) -> Result<Vec<StreamAnswer>, String> {
    let reply = adapter.0.ask(request, timeout, None);
    if let Err(Fault::Timeout(_) | Fault::Crash(_) | Fault::Protocol(_)) = &reply {
        if let Ok(restarted) = Persistent::start(argv, timeout, None) {
            *adapter = restarted;
        }
    }
    match reply {
        Ok(Reply::Answered { seq, streams }) if seq == request.seq => Ok(streams),
        Ok(Reply::Answered { seq, .. }) => Err(format!("echoed seq {seq}")),
        Ok(Reply::Skipped { reason, .. }) => Err(format!("skipped: {reason}")),
        Ok(Reply::Error { message, .. }) => Err(format!("error: {message}")),
        Ok(other) => Err(format!(
            "answered {}",
            crate::run::adapter::describe(&other)
        )),
        Err(fault) => Err(format!("{fault:?}")),
    }
}

fn compare(
    a: &Result<Vec<StreamAnswer>, String>,
    b: &Result<Vec<StreamAnswer>, String>,
    role: ProtocolRole,
    rules: &[String],
) -> Vec<ReadingMismatch> {
    let (Ok(a), Ok(b)) = (a, b) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (index, (x, y)) in a.iter().zip(b).enumerate() {
        let mut found = if role == ProtocolRole::Reader {
            let null = serde_json::Value::Null;
            let mut found = diff_readings(
                x.reading.as_ref().unwrap_or(&null),
                y.reading.as_ref().unwrap_or(&null),
                rules,
            );
            if x.valid != y.valid {
                found.extend(diff_readings(
                    &serde_json::json!({"accepted": x.valid}),
                    &serde_json::json!({"accepted": y.valid}),
                    rules,
                ));
            }
            found
        } else {
            let findings = |s: &StreamAnswer| {
                let mut findings: Vec<String> = s
                    .diagnostics
                    .iter()
                    .map(|d| format!("{}:{}:{}", d.line, d.severity, d.rule))
                    .collect();
                findings.sort();
                serde_json::json!({"valid": s.valid, "findings": findings})
            };
            diff_readings(&findings(x), &findings(y), rules)
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
    a: &Result<Vec<StreamAnswer>, String>,
    b: &Result<Vec<StreamAnswer>, String>,
    mismatches: &[ReadingMismatch],
) -> CaseResult {
    let (outcome, detail) = match (a, b) {
        (Err(e), _) => (
            Outcome::Error,
            Some(format!("the first implementation: {e}")),
        ),
        (_, Err(e)) => (
            Outcome::Error,
            Some(format!("the second implementation: {e}")),
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
    let pretty = |r: &Result<Vec<StreamAnswer>, String>| match r {
        Ok(streams) => serde_json::to_string_pretty(streams).unwrap_or_default() + "\n",
        Err(e) => format!("{e}\n"),
    };
    let (first, second) = (pretty(a), pretty(b));
    let diff = (outcome == Outcome::Fail).then(|| {
        similar::TextDiff::from_lines(&first, &second)
            .unified_diff()
            .header("first", "second")
            .to_string()
    });
    CaseResult {
        detail,
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
                    roles: vec![Role::Reader, Role::Validator],
                    expect: Expect {
                        validator: None,
                        reader: None,
                    },
                    provenance: Provenance::HandWritten { note: None },
                    status: Status::Stable,
                },
            })
            .collect());
    }
    let name = corpus::pattern(args.case.as_deref(), "--case")?;
    let selected: Vec<Case> = corpus
        .iter()
        .filter(|c| match role {
            ProtocolRole::Reader => c.sidecar.expect.reader.is_some(),
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

fn print(
    by_rule: &BTreeMap<String, Vec<(String, ReadingMismatch)>>,
    report: &RunReport,
    out_dir: &std::path::Path,
) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let errors: Vec<&CaseResult> = report
        .cases
        .iter()
        .filter(|c| c.outcome == Outcome::Error)
        .collect();
    if by_rule.is_empty() && errors.is_empty() {
        writeln!(
            out,
            "the two implementations agree on all {} streams",
            report.cases.len()
        )?;
    }
    for (rule, items) in by_rule {
        writeln!(out, "{rule}: {} disagreement(s)", items.len())?;
        for (case, m) in items {
            writeln!(out, "  {case} {}", disagreement(m))?;
        }
    }
    for case in errors {
        writeln!(
            out,
            "not compared: {}: {}",
            case.name,
            case.detail.as_deref().unwrap_or("")
        )?;
    }
    writeln!(
        out,
        "reports with the diffs: {}",
        out_dir.join("report.{md,html,json}").display()
    )?;
    out.flush()?;
    Ok(())
}
