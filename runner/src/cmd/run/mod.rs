//! `asr-ctk run`: the corpus against an implementation, through its adapter.

mod drive;
mod expect;

use crate::adapter::schema::SchemaCheck;
use crate::adapter::timeouts::{TimeoutArgs, Timeouts};
use crate::adapter::{Fault, Talk, adapter_command, reference_command, supervise};
use crate::limits::LimitArgs;
use crate::role::RunRole;
use crate::text_diff::unified_diff;
use crate::write::{self, stream_files};
use crate::{corpus, exit};
use anyhow::{Context, Result};
use asr_suite::case::Case;
use asr_suite::conformance::{
    AdapterInfo, CaseResult, KEPT_BYTES, Outcome, RunReport, now_rfc3339,
};
use asr_suite::judge::{Judgement, Strictness, judge_producer, judge_reader, judge_validator};
use asr_suite::protocol::{CaseReply, ProtocolRole, Reply, check_case_reply, check_outputs};
use asr_suite::render::difference::failure_line;
use asr_suite::render::escape_controls;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Debug, clap::Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent command-line switches"
)]
pub struct Args {
    /// The adapter command, split into argv and run without a shell; without it, or with
    /// `reference`, the kit's reference implementation is run.
    #[arg(long, value_name = "CMD")]
    adapter: Option<String>,
    /// One process per case, the stream on stdin (PROTOCOL.md, one-shot mode).
    #[arg(long)]
    oneshot: bool,
    /// Only cases of rules matching this glob (`ASR-4*`).
    #[arg(long, value_name = "GLOB")]
    rule: Option<String>,
    /// Only cases whose name matches this glob (`lineage/**`).
    #[arg(long, value_name = "GLOB")]
    case: Option<String>,
    /// Only cases for this role (default: every role, validator first, then reader, then
    /// producer; the cases of a role the adapter does not play are skipped).
    #[arg(long, value_enum)]
    role: Option<RunRole>,
    #[command(flatten)]
    timeouts: TimeoutArgs,
    /// How many times a crashed, hung or misbehaving adapter is restarted in one run.
    #[arg(long, value_name = "N", default_value_t = 10)]
    max_restarts: usize,
    /// Adapter processes run in parallel.
    #[arg(long, value_name = "N", default_value_t = 1)]
    jobs: usize,
    /// Run one slice of the corpus: `i/n` takes every n-th case from the i-th (1-based).
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Known results of the implementation: exit 0 when the run matches them.
    #[arg(long, value_name = "FILE")]
    expect: Option<PathBuf>,
    /// Where to write the reports (report.json, report.md, report.html, junit.xml,
    /// sarif.json, badge.json).
    #[arg(long, value_name = "DIR", default_value = "asr-ctk-report")]
    out: PathBuf,
    /// Check every message, both ways and of any size, against the protocol schemas, and
    /// readings against the reading schema (without it, replies up to 1 MiB are checked).
    #[arg(long)]
    validate_protocol: bool,
    /// Compare JSON Pointers of findings too.
    #[arg(long)]
    strict_pointers: bool,
    /// The corpus directory (default: ./cases when it holds a catalog, else the corpus the kit carries).
    #[arg(long, value_name = "DIR")]
    cases: Option<PathBuf>,
    /// No progress output.
    #[arg(long)]
    quiet: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

pub fn run(args: &Args) -> Result<u8> {
    let corpus::Corpus {
        root,
        cases: corpus,
        info,
    } = match corpus::load_with_sources(args.cases.as_deref()) {
        Ok(loaded) => loaded,
        Err(error) => {
            eprintln!("asr-ctk: {error:#}");
            eprintln!("asr-ctk: no case was run: the corpus did not load");
            return Ok(exit::HARNESS);
        }
    };
    let roles = roles(args);
    // Every case once per role, validator cases first: one adapter process serves all roles.
    let mut items: Vec<(ProtocolRole, &Case)> = Vec::new();
    for role in &roles {
        items.extend(
            select(&corpus, args, *role)?
                .into_iter()
                .map(|c| (*role, c)),
        );
    }
    if items.is_empty() {
        eprintln!(
            "asr-ctk: no case matches the selection (--rule, --case, --role, --shard): nothing was run"
        );
        return Ok(exit::HARNESS);
    }
    let limits = args.limits.limits()?;
    let command = match &args.adapter {
        // The name `diff` and `fuzz` take for the kit's own implementation.
        Some(line) if line == "reference" => reference_command(limits)?,
        Some(line) => adapter_command(line)?,
        None => reference_command(limits)?,
    };
    let timeouts = args.timeouts.timeouts()?;
    anyhow::ensure!(args.jobs >= 1, "--jobs must be at least 1");
    let expectations = args.expect.as_deref().map(expect::load).transpose()?;
    let checker = SchemaCheck::new(args.validate_protocol)?;
    supervise::init().context("failed to set up the supervision of adapters")?;
    let settings = Settings {
        argv: command.clone(),
        talk: Talk {
            timeout: timeouts.answer,
            start_timeout: timeouts.start,
            max_reply_bytes: limits.max_reply_bytes,
            check: &checker,
            retention: None,
        },
        timeouts,
        strictness: Strictness {
            pointers: args.strict_pointers,
            aliases: BTreeMap::new(),
        },
    };
    let progress = Progress::new(items.len(), args.quiet);
    let started_at = now_rfc3339();
    let driven = if args.oneshot {
        drive::oneshot(&settings, &items, &progress)
    } else {
        drive::persistent(&settings, &items, &progress, args.jobs, args.max_restarts)
    };
    progress.finish();
    let (implementation, roles) = match driven.identity {
        Some(Reply::Started {
            implementation,
            roles,
            ..
        }) => (Some(implementation), roles),
        _ => (None, Vec::new()),
    };
    let adapter = AdapterInfo {
        command,
        mode: if args.oneshot {
            "oneshot"
        } else {
            "persistent"
        }
        .into(),
        implementation,
        roles,
        versus: None,
        others: Vec::new(),
    };
    let mut report = RunReport::new(
        &corpus,
        info,
        adapter,
        driven.results,
        args.shard.iter().cloned().collect(),
    )
    .context("failed to read the corpus for its digest")?;
    report.started_at = started_at;
    report.interrupted = supervise::interrupted();
    report.incomplete = driven.incomplete;
    let check = expectations
        .as_ref()
        .map(|known| report.compare_with(known));
    let streams = stream_files(&root, &corpus);
    if let Some((fault, stderr)) = &driven.never_started {
        write::reports(&report, &root, &streams, &args.out)?;
        eprintln!(
            "asr-ctk: the adapter did not start: {}",
            escape_controls(&fault.to_string())
        );
        if !stderr.trim().is_empty() {
            eprintln!(
                "asr-ctk: what it wrote to stderr:\n{}",
                escape_controls(stderr.trim_end())
            );
        }
        eprintln!("asr-ctk: no case was run; reports: {}", args.out.display());
        return Ok(exit::HARNESS);
    }
    write::reports(&report, &root, &streams, &args.out)?;
    let shown = write::Shown {
        quiet: args.quiet,
        // A selection (a rule, some cases, a role, a shard) shows its own rules; the whole
        // corpus shows every rule, untested ones too: a rule without a case is a gap to see.
        selected_only: args.rule.is_some()
            || args.case.is_some()
            || args.role.is_some()
            || args.shard.is_some(),
    };
    let mut printed = write::summary(&report, &args.out, shown);
    if let (Some(check), Ok(())) = (&check, &printed) {
        printed = write::expectations(check);
    }
    let code = if report.interrupted {
        exit::INTERRUPTED
    } else {
        match &check {
            Some(check) if check.regressions.is_empty() => exit::OK,
            None if !report.has_failures() => exit::OK,
            _ => exit::INVALID,
        }
    };
    exit::after_printing(code, printed)
}

/// Where each case a run's command line selects falls among the cases of its role: the
/// shard `i/n` of that run takes the cases at positions `i - 1`, `i - 1 + n`, ... So a merge
/// can tell whether a case is of the shard a report claims. `None` when the command line is
/// not one of `asr-ctk run`.
pub fn positions<'a>(
    corpus: &'a [Case],
    command_line: &[String],
) -> Option<BTreeMap<(ProtocolRole, &'a str), usize>> {
    use clap::Parser as _;
    if command_line.get(1).map(String::as_str) != Some("run") {
        return None;
    }
    let line = RunLine::try_parse_from(
        std::iter::once("asr-ctk run").chain(command_line[2..].iter().map(String::as_str)),
    )
    .ok()?;
    let mut positions = BTreeMap::new();
    for role in roles(&line.args) {
        for (position, case) in select_unsharded(corpus, &line.args, role)
            .ok()?
            .into_iter()
            .enumerate()
        {
            positions.insert((role, case.name.as_str()), position);
        }
    }
    Some(positions)
}

struct Settings<'a> {
    argv: Vec<String>,
    talk: Talk<'a>,
    timeouts: Timeouts,
    strictness: Strictness,
}

impl<'a> Settings<'a> {
    /// How to talk to the adapter on a case of `role`: its answer timeout.
    fn talk_for(&self, role: ProtocolRole) -> Talk<'a> {
        Talk {
            timeout: self.timeouts.answer(role),
            ..self.talk
        }
    }

    /// How findings are matched on cases of an adapter that said `identity`: with the ids
    /// it declared its own.
    fn strictness(&self, identity: &Reply) -> Strictness {
        let mut strictness = self.strictness.clone();
        if let Reply::Started { rule_aliases, .. } = identity {
            strictness.aliases.clone_from(rule_aliases);
        }
        strictness
    }

    /// How to talk to it for `started`.
    fn handshake(&self) -> Talk<'a> {
        Talk {
            timeout: self.timeouts.start,
            ..self.talk
        }
    }
}

/// A run's command line, without its program and command names.
#[derive(Debug, clap::Parser)]
struct RunLine {
    #[command(flatten)]
    args: Args,
}

/// The roles a run takes, in the order it runs them.
fn roles(args: &Args) -> Vec<ProtocolRole> {
    match args.role {
        Some(role) => vec![role.protocol()],
        None => vec![
            ProtocolRole::Validator,
            ProtocolRole::Reader,
            ProtocolRole::Producer,
        ],
    }
}

/// The cases of one role that the filters select (possibly none).
fn select<'a>(corpus: &'a [Case], args: &Args, role: ProtocolRole) -> Result<Vec<&'a Case>> {
    let (index, count) = match &args.shard {
        Some(shard) => parse_shard(shard)?,
        None => (1, 1),
    };
    Ok(select_unsharded(corpus, args, role)?
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % count == index - 1)
        .map(|(_, c)| c)
        .collect())
}

/// The cases of one role that the filters but `--shard` select, in corpus order.
fn select_unsharded<'a>(
    corpus: &'a [Case],
    args: &Args,
    role: ProtocolRole,
) -> Result<Vec<&'a Case>> {
    let rule_glob = corpus::pattern(args.rule.as_deref(), "--rule")?;
    let name = corpus::pattern(args.case.as_deref(), "--case")?;
    let wanted = match role {
        ProtocolRole::Reader => asr_suite::catalog::Role::Reader,
        ProtocolRole::Producer => asr_suite::catalog::Role::Producer,
        ProtocolRole::Validator => asr_suite::catalog::Role::Validator,
    };
    let selected: Vec<&Case> = corpus
        .iter()
        .filter(|c| c.sidecar.roles.contains(&wanted))
        .filter(|c| wanted != asr_suite::catalog::Role::Reader || c.sidecar.expect.reads())
        .filter(|c| {
            rule_glob
                .as_ref()
                .is_none_or(|p| c.sidecar.rules.iter().any(|r| p.matches(r)))
        })
        .filter(|c| name.as_ref().is_none_or(|p| p.matches(&c.name)))
        .collect();
    Ok(selected)
}

fn parse_shard(text: &str) -> Result<(usize, usize)> {
    let (i, n) = text
        .split_once('/')
        .context("--shard takes i/n, as in 2/4")?;
    let (i, n): (usize, usize) = (
        i.parse().context("--shard: i is not a number")?,
        n.parse().context("--shard: n is not a number")?,
    );
    anyhow::ensure!(
        n >= 1 && (1..=n).contains(&i),
        "--shard {text}: i must be from 1 to n"
    );
    Ok((i, n))
}

/// The result of a case for a role, with an outcome and what happened.
fn blank(
    case: &Case,
    role: ProtocolRole,
    outcome: Outcome,
    detail: impl Into<String>,
) -> CaseResult {
    CaseResult {
        role,
        detail: Some(detail.into()),
        ..CaseResult::new(
            case.name.clone(),
            case.sidecar.id.clone(),
            case.sidecar.rules.clone(),
            outcome,
        )
    }
}

/// The result of a case whose answer did not come, or broke the protocol.
fn from_fault(case: &Case, role: ProtocolRole, fault: Fault) -> CaseResult {
    match fault {
        Fault::Timeout(d) => blank(case, role, Outcome::Timeout, d),
        Fault::Crash(d) => blank(case, role, Outcome::Crash, d),
        Fault::Protocol(d) => blank(case, role, Outcome::ProtocolError, d),
        Fault::Interrupted => blank(
            case,
            role,
            Outcome::NotRun,
            "not run: the run was interrupted",
        ),
    }
}

/// Judges a reply, or tells why it breaks the protocol.
fn judged(
    case: &Case,
    role: ProtocolRole,
    seq: u64,
    reply: Reply,
    settings: &Settings<'_>,
    identity: &Reply,
) -> Result<CaseResult, Fault> {
    match check_case_reply(reply, seq, role, case.streams.len()).map_err(Fault::Protocol)? {
        CaseReply::Outputs(outputs) => {
            let outputs: Vec<(String, Vec<u8>)> = outputs
                .iter()
                .map(|o| (o.name.clone(), o.bytes()))
                .collect();
            produced(case, &outputs)
        }
        CaseReply::Streams(streams) => {
            let judgement = if role == ProtocolRole::Reader {
                judge_reader(case, &streams)
            } else {
                judge_validator(case, &streams, &settings.strictness(identity))
            };
            let mut result = judged_result(case, role, judgement, ("expected", "actual"));
            let catalog = asr_suite::catalog::Catalog::embedded();
            result.note_unknown_rules(
                streams
                    .iter()
                    .flat_map(|s| s.diagnostics.iter().map(|d| d.rule.as_str())),
                |rule| catalog.knows(rule),
            );
            Ok(result.capped(KEPT_BYTES))
        }
        CaseReply::Skipped { reason, issue } => {
            let mut result = blank(case, role, Outcome::Skipped, reason);
            result.issue = issue;
            Ok(result.capped(KEPT_BYTES))
        }
        CaseReply::Error(message) => {
            Ok(blank(case, role, Outcome::Error, message).capped(KEPT_BYTES))
        }
    }
}

/// Judges a producer's output streams (name and bytes), or tells why they break the
/// protocol: none at all, or two of one name.
pub fn produced(case: &Case, outputs: &[(String, Vec<u8>)]) -> Result<CaseResult, Fault> {
    check_outputs(outputs).map_err(Fault::Protocol)?;
    let judgement = judge_producer(case, outputs);
    Ok(judged_result(
        case,
        ProtocolRole::Producer,
        judgement,
        ("golden", "output"),
    )
    .capped(KEPT_BYTES))
}

/// A case's result from its judgement: the outcome, the reasons, each failure charged to its
/// rule, and, when it failed, the expectation and the answer with a diff under `labels`.
fn judged_result(
    case: &Case,
    role: ProtocolRole,
    judgement: Judgement,
    labels: (&str, &str),
) -> CaseResult {
    let mut result = blank(
        case,
        role,
        judgement.outcome(),
        judgement.reasons.join("; "),
    );
    if judgement.reasons.is_empty() {
        result.detail = None;
    }
    result.attributions = judgement.attributions;
    result.places = judgement.places;
    result.notes = judgement.notes;
    if !judgement.pass {
        result.diff = Some(unified_diff(
            &judgement.expected_text,
            &judgement.actual_text,
            labels,
        ));
        result.expected = Some(judgement.expected_text);
        result.actual = Some(judgement.actual_text);
    }
    result
}

/// Progress on stderr: a bar on a terminal, a line per failing case otherwise.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    quiet: bool,
    total: usize,
    done: AtomicUsize,
}

impl Progress {
    fn new(total: usize, quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(total as u64);
            if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
            {
                bar.set_style(style);
            }
            bar
        });
        Progress {
            bar,
            quiet,
            total,
            done: AtomicUsize::new(0),
        }
    }

    fn record(&self, result: &CaseResult) {
        let done = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        self.show(result, done);
    }

    /// A case whose outcome changed after it was recorded (it was answered twice).
    fn amended(&self, result: &CaseResult) {
        self.show(result, self.done.load(Ordering::SeqCst));
    }

    fn show(&self, result: &CaseResult, done: usize) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
            if result.outcome.is_failure() {
                bar.println(format!(
                    "{} {}",
                    result.outcome.as_str(),
                    escape_controls(&result.name)
                ));
            }
        } else if !self.quiet && result.outcome.is_failure() {
            // One short line: the texts in full are in the reports.
            eprintln!("[{done}/{}] {}", self.total, failure_line(result));
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
