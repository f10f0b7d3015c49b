//! `asr-ctk run`: the corpus against an implementation, through its adapter.

pub mod adapter;
mod expect;
mod write;

use crate::{corpus, exit};
use adapter::{Fault, Persistent, ProtocolCheck};
use anyhow::{Context, Result, bail};
use asr_suite::case::Case;
use asr_suite::conformance::{AdapterInfo, CaseResult, Outcome, RunReport, now_rfc3339};
use asr_suite::judge::{Strictness, judge_reader, judge_validator};
use asr_suite::protocol::{CaseRequest, ProtocolRole, Reply, StreamInput, base64_encode};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent command-line switches"
)]
pub struct Args {
    /// The adapter command, split into argv and run without a shell; without it, the
    /// kit's reference implementation is run.
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
    /// Only cases for this role (default: every role, validator first, then reader).
    #[arg(long, value_enum)]
    role: Option<RoleArg>,
    /// Seconds to wait for each answer (and for `started`).
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    timeout: f64,
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
    /// Where to write the reports (report.json, report.md, report.html, junit.xml, badge.json).
    #[arg(long, value_name = "DIR", default_value = "asr-ctk-report")]
    out: PathBuf,
    /// Check every message, both ways, against the protocol schemas.
    #[arg(long)]
    validate_protocol: bool,
    /// Compare JSON Pointers of findings too.
    #[arg(long)]
    strict_pointers: bool,
    /// The corpus directory (default: ./cases, else the corpus the kit was built with).
    #[arg(long, value_name = "DIR")]
    cases: Option<PathBuf>,
    /// No progress output.
    #[arg(long)]
    quiet: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum RoleArg {
    Validator,
    Reader,
}

pub fn run(args: &Args) -> Result<u8> {
    let (_, corpus) = corpus::load(args.cases.as_deref())?;
    let roles: Vec<ProtocolRole> = match args.role {
        Some(RoleArg::Validator) => vec![ProtocolRole::Validator],
        Some(RoleArg::Reader) => vec![ProtocolRole::Reader],
        None => vec![ProtocolRole::Validator, ProtocolRole::Reader],
    };
    let selections: Vec<(ProtocolRole, Vec<&Case>)> = roles
        .iter()
        .map(|role| Ok((*role, select(&corpus, args, *role)?)))
        .collect::<Result<_>>()?;
    let total: usize = selections.iter().map(|(_, s)| s.len()).sum();
    if total == 0 {
        bail!("no case matches the selection (--rule, --case, --role, --shard)");
    }
    let command = if let Some(line) = &args.adapter {
        adapter::split_command(line).map_err(|e| anyhow::anyhow!("--adapter: {e}"))?
    } else {
        let exe = std::env::current_exe().context("failed to find the asr-ctk executable")?;
        vec![
            exe.to_string_lossy().into_owned(),
            "adapter".into(),
            "reference".into(),
        ]
    };
    anyhow::ensure!(
        args.timeout > 0.0 && args.timeout.is_finite(),
        "--timeout must be a positive number of seconds"
    );
    anyhow::ensure!(args.jobs >= 1, "--jobs must be at least 1");
    let expectations = args.expect.as_deref().map(expect::load).transpose()?;
    let checker = args.validate_protocol.then(SchemaCheck::new).transpose()?;
    let mut settings = Settings {
        argv: command.clone(),
        timeout: Duration::from_secs_f64(args.timeout),
        role: ProtocolRole::Validator,
        strictness: Strictness {
            pointers: args.strict_pointers,
        },
        check: checker.as_ref().map(|c| c as &dyn ProtocolCheck),
    };
    let progress = Progress::new(total, args.quiet);
    let started_at = now_rfc3339();
    let mut results = Vec::with_capacity(total);
    let mut identity = None;
    for (role, selected) in &selections {
        if selected.is_empty() {
            continue;
        }
        settings.role = *role;
        let (mut done, started) = if args.oneshot {
            run_oneshot(&settings, selected, &progress)
        } else {
            run_persistent(&settings, selected, &progress, args.jobs, args.max_restarts)
        };
        for result in &mut done {
            result.role = *role;
        }
        results.extend(done);
        identity = identity.or(started);
    }
    progress.finish();
    let (implementation, roles) = match identity {
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
    };
    let mut report = RunReport::new(
        &corpus,
        adapter,
        results,
        args.shard.iter().cloned().collect(),
    )
    .context("failed to read the corpus for its digest")?;
    report.started_at = started_at;
    write_reports(&report, &args.out)?;
    match &expectations {
        Some(known) => {
            let check = expect::compare(known, &report);
            write::expectations(&check)?;
            Ok(if check.regressions.is_empty() {
                exit::OK
            } else {
                exit::INVALID
            })
        }
        None => Ok(if report.has_failures() {
            exit::INVALID
        } else {
            exit::OK
        }),
    }
}

/// Writes a run's report files and prints its per-rule summary.
pub fn write_reports(report: &RunReport, dir: &std::path::Path) -> Result<()> {
    write::reports(report, dir)?;
    write::summary(report, dir)
}

/// Writes a run's report files only.
pub fn write_report_files(report: &RunReport, dir: &std::path::Path) -> Result<()> {
    write::reports(report, dir)
}

struct Settings<'a> {
    argv: Vec<String>,
    timeout: Duration,
    role: ProtocolRole,
    strictness: Strictness,
    check: Option<&'a dyn ProtocolCheck>,
}

/// The cases of one role that the filters select (possibly none).
fn select<'a>(corpus: &'a [Case], args: &Args, role: ProtocolRole) -> Result<Vec<&'a Case>> {
    let rule_glob = corpus::pattern(args.rule.as_deref(), "--rule")?;
    let name = corpus::pattern(args.case.as_deref(), "--case")?;
    let (index, count) = match &args.shard {
        Some(shard) => parse_shard(shard)?,
        None => (1, 1),
    };
    let wanted = match role {
        ProtocolRole::Reader => asr_suite::catalog::Role::Reader,
        ProtocolRole::Producer => asr_suite::catalog::Role::Producer,
        ProtocolRole::Validator => asr_suite::catalog::Role::Validator,
    };
    let selected: Vec<&Case> = corpus
        .iter()
        .filter(|c| c.sidecar.roles.contains(&wanted))
        .filter(|c| wanted != asr_suite::catalog::Role::Reader || c.sidecar.expect.reader.is_some())
        .filter(|c| {
            rule_glob
                .as_ref()
                .is_none_or(|p| c.sidecar.rules.iter().any(|r| p.matches(r)))
        })
        .filter(|c| name.as_ref().is_none_or(|p| p.matches(&c.name)))
        .enumerate()
        .filter(|(i, _)| i % count == index - 1)
        .map(|(_, c)| c)
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

/// The request for one case: its streams read, base64-encoded, with their absolute paths.
pub fn request(case: &Case, seq: u64, role: ProtocolRole) -> Result<CaseRequest, String> {
    let mut streams = Vec::with_capacity(case.streams.len());
    for (part, path) in &case.streams {
        let bytes =
            std::fs::read(path).map_err(|e| format!("failed to read {}: {e}", path.display()))?;
        let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        streams.push(StreamInput {
            part: part.clone(),
            path: absolute.to_string_lossy().into_owned(),
            data: base64_encode(&bytes),
        });
    }
    Ok(CaseRequest {
        seq,
        role,
        case: case.name.clone(),
        id: case.sidecar.id.clone(),
        rules: case.sidecar.rules.clone(),
        streams,
    })
}

fn blank(case: &Case, outcome: Outcome, detail: impl Into<String>) -> CaseResult {
    CaseResult {
        detail: Some(detail.into()),
        ..CaseResult::new(
            case.name.clone(),
            case.sidecar.id.clone(),
            case.sidecar.rules.clone(),
            outcome,
        )
    }
}

fn from_fault(case: &Case, fault: Fault) -> CaseResult {
    match fault {
        Fault::Timeout(d) => blank(case, Outcome::Timeout, d),
        Fault::Crash(d) => blank(case, Outcome::Crash, d),
        Fault::Protocol(d) => blank(case, Outcome::ProtocolError, d),
    }
}

/// Judges a reply, or tells why it breaks the protocol.
fn judged(
    case: &Case,
    seq: u64,
    reply: Reply,
    settings: &Settings<'_>,
) -> Result<CaseResult, Fault> {
    match reply {
        Reply::Answered { seq: echoed, .. } if echoed != seq => Err(Fault::Protocol(format!(
            "the answer echoes seq {echoed}; the request's seq was {seq}"
        ))),
        Reply::Skipped { seq: echoed, .. } | Reply::Error { seq: echoed, .. } if echoed != seq => {
            Err(Fault::Protocol(format!(
                "the answer echoes seq {echoed}; the request's seq was {seq}"
            )))
        }
        Reply::Answered { streams, .. } => {
            if streams.len() != case.streams.len() {
                return Err(Fault::Protocol(format!(
                    "the answer has {} stream entries; the case has {} streams",
                    streams.len(),
                    case.streams.len()
                )));
            }
            let judgement = match settings.role {
                ProtocolRole::Reader => judge_reader(case, &streams),
                _ => judge_validator(case, &streams, settings.strictness),
            };
            let mut result = blank(
                case,
                if judgement.pass {
                    Outcome::Pass
                } else {
                    Outcome::Fail
                },
                judgement.reasons.join("; "),
            );
            if judgement.reasons.is_empty() {
                result.detail = None;
            }
            if !judgement.pass {
                result.diff = Some(
                    similar::TextDiff::from_lines(&judgement.expected_text, &judgement.actual_text)
                        .unified_diff()
                        .header("expected", "actual")
                        .to_string(),
                );
                result.expected = Some(judgement.expected_text);
                result.actual = Some(judgement.actual_text);
            }
            Ok(result)
        }
        Reply::Skipped { reason, issue, .. } => {
            let mut result = blank(case, Outcome::Skipped, reason);
            result.issue = issue;
            Ok(result)
        }
        Reply::Error { message, .. } => Ok(blank(case, Outcome::Error, message)),
        other => Err(Fault::Protocol(format!(
            "the adapter answered a case with {}",
            adapter::describe(&other)
        ))),
    }
}

fn run_persistent(
    settings: &Settings<'_>,
    cases: &[&Case],
    progress: &Progress,
    jobs: usize,
    max_restarts: usize,
) -> (Vec<CaseResult>, Option<Reply>) {
    let next = AtomicUsize::new(0);
    let restarts = AtomicUsize::new(0);
    let never_started: Mutex<Option<Fault>> = Mutex::new(None);
    let identity: Mutex<Option<Reply>> = Mutex::new(None);
    let results: Mutex<Vec<Option<CaseResult>>> = Mutex::new(vec![None; cases.len()]);
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(cases.len()) {
            scope.spawn(|| {
                let mut adapter: Option<Persistent> = None;
                let mut started_once = false;
                loop {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    let Some(case) = cases.get(index) else { break };
                    let result = persistent_case(
                        case,
                        index,
                        settings,
                        &mut adapter,
                        &mut started_once,
                        &restarts,
                        max_restarts,
                        &never_started,
                        &identity,
                    );
                    progress.record(&result);
                    if let Ok(mut all) = results.lock() {
                        all[index] = Some(result);
                    }
                }
                if let Some(adapter) = adapter.take() {
                    adapter.stop();
                }
            });
        }
    });
    let results = results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect();
    (results, identity.into_inner().unwrap_or_default())
}

#[expect(
    clippy::too_many_arguments,
    reason = "the worker's state, passed down once per case"
)]
fn persistent_case(
    case: &Case,
    index: usize,
    settings: &Settings<'_>,
    adapter: &mut Option<Persistent>,
    started_once: &mut bool,
    restarts: &AtomicUsize,
    max_restarts: usize,
    never_started: &Mutex<Option<Fault>>,
    identity: &Mutex<Option<Reply>>,
) -> CaseResult {
    if let Ok(Some(fault)) = never_started.lock().as_deref() {
        // The adapter never got through `start`: every case has that outcome, without
        // waiting out the timeout again for each.
        let mut result = from_fault(case, fault.clone());
        result.detail = result
            .detail
            .map(|d| format!("not run: the adapter never started: {d}"));
        return result;
    }
    if adapter.is_none() {
        if *started_once && restarts.fetch_add(1, Ordering::SeqCst) >= max_restarts {
            return blank(
                case,
                Outcome::Crash,
                format!(
                    "not run: the adapter was restarted {max_restarts} times already (--max-restarts)"
                ),
            );
        }
        match Persistent::start(&settings.argv, settings.timeout, settings.check) {
            Ok((started, reply)) => {
                if let Ok(mut id) = identity.lock() {
                    if id.is_none() {
                        *id = Some(reply.clone());
                    }
                }
                *adapter = Some(started);
                *started_once = true;
            }
            Err(fault) => {
                if !*started_once {
                    if let Ok(mut first) = never_started.lock() {
                        first.get_or_insert_with(|| fault.clone());
                    }
                }
                return from_fault(case, fault);
            }
        }
    }
    if let Ok(Some(Reply::Started { roles, .. })) = identity.lock().as_deref() {
        if !roles.contains(&settings.role) {
            return blank(
                case,
                Outcome::Skipped,
                format!(
                    "the adapter does not play the {} role",
                    settings.role.as_str()
                ),
            );
        }
    }
    let seq = index as u64 + 1;
    let request = match request(case, seq, settings.role) {
        Ok(request) => request,
        Err(e) => {
            return blank(
                case,
                Outcome::Error,
                format!("the kit could not read the case: {e}"),
            );
        }
    };
    let Some(running) = adapter.as_mut() else {
        return blank(case, Outcome::Crash, "no adapter");
    };
    let began = Instant::now();
    let answer = running.ask(&request, settings.timeout, settings.check);
    let millis = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
    let stderr = running.stderr();
    let mut result = match answer.and_then(|reply| judged(case, seq, reply, settings)) {
        Ok(result) => result,
        Err(fault) => {
            // The adapter's state is unknown after a fault: end it; the next case restarts it.
            *adapter = None;
            from_fault(case, fault)
        }
    };
    result.millis = millis;
    result.stderr = (!stderr.is_empty()).then_some(stderr);
    result
}

fn run_oneshot(
    settings: &Settings<'_>,
    cases: &[&Case],
    progress: &Progress,
) -> (Vec<CaseResult>, Option<Reply>) {
    let handshake = [("ASR_CTK_HANDSHAKE", "1".to_owned())];
    let (reply, _) = adapter::oneshot(
        &settings.argv,
        &handshake,
        b"",
        settings.timeout,
        settings.check,
    );
    let identity = match reply {
        Ok(reply @ Reply::Started { .. }) => Some(reply),
        Ok(other) => {
            let fault = format!(
                "the adapter answered the handshake with {}",
                adapter::describe(&other)
            );
            return (
                fail_all(cases, Outcome::ProtocolError, &fault, progress),
                None,
            );
        }
        Err(fault) => {
            let (outcome, detail) = match fault {
                Fault::Timeout(d) => (Outcome::Timeout, d),
                Fault::Crash(d) => (Outcome::Crash, d),
                Fault::Protocol(d) => (Outcome::ProtocolError, d),
            };
            return (
                fail_all(
                    cases,
                    outcome,
                    &format!("not run: the handshake failed: {detail}"),
                    progress,
                ),
                None,
            );
        }
    };
    let plays =
        matches!(&identity, Some(Reply::Started { roles, .. }) if roles.contains(&settings.role));
    let mut results = Vec::with_capacity(cases.len());
    for case in cases {
        let result = if !plays {
            blank(
                case,
                Outcome::Skipped,
                format!(
                    "the adapter does not play the {} role",
                    settings.role.as_str()
                ),
            )
        } else if case.streams.len() != 1 {
            blank(
                case,
                Outcome::Skipped,
                "not run by the kit: a case of several streams needs persistent mode",
            )
        } else {
            match std::fs::read(&case.streams[0].1) {
                Err(e) => blank(
                    case,
                    Outcome::Error,
                    format!("the kit could not read the case: {e}"),
                ),
                Ok(bytes) => {
                    let env = [
                        ("ASR_CTK_ROLE", settings.role.as_str().to_owned()),
                        ("ASR_CTK_CASE", case.name.clone()),
                        ("ASR_CTK_CASE_ID", case.sidecar.id.clone()),
                        ("ASR_CTK_RULES", case.sidecar.rules.join(",")),
                    ];
                    let began = Instant::now();
                    let (answer, stderr) = adapter::oneshot(
                        &settings.argv,
                        &env,
                        &bytes,
                        settings.timeout,
                        settings.check,
                    );
                    let mut result = match answer.and_then(|reply| judged(case, 0, reply, settings))
                    {
                        Ok(result) => result,
                        Err(fault) => from_fault(case, fault),
                    };
                    result.millis = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
                    result.stderr = (!stderr.is_empty()).then_some(stderr);
                    result
                }
            }
        };
        progress.record(&result);
        results.push(result);
    }
    (results, identity)
}

fn fail_all(
    cases: &[&Case],
    outcome: Outcome,
    detail: &str,
    progress: &Progress,
) -> Vec<CaseResult> {
    cases
        .iter()
        .map(|case| {
            let result = blank(case, outcome, detail);
            progress.record(&result);
            result
        })
        .collect()
}

/// The protocol schemas, compiled, for `--validate-protocol`.
struct SchemaCheck {
    request: jsonschema::Validator,
    reply: jsonschema::Validator,
}

impl SchemaCheck {
    fn new() -> Result<Self> {
        let compile = |text: &str| -> Result<jsonschema::Validator> {
            let schema: serde_json::Value = serde_json::from_str(text)?;
            jsonschema::validator_for(&schema)
                .map_err(|e| anyhow::anyhow!("failed to compile a protocol schema: {e}"))
        };
        Ok(SchemaCheck {
            request: compile(include_str!(
                "../../../schemas/protocol/request.schema.json"
            ))?,
            reply: compile(include_str!("../../../schemas/protocol/reply.schema.json"))?,
        })
    }
}

impl ProtocolCheck for SchemaCheck {
    fn request(&self, message: &serde_json::Value) -> Vec<String> {
        self.request
            .iter_errors(message)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect()
    }

    fn reply(&self, message: &serde_json::Value) -> Vec<String> {
        self.reply
            .iter_errors(message)
            .take(5)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect()
    }
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
        if let Some(bar) = &self.bar {
            bar.inc(1);
            if result.outcome.is_failure() {
                bar.println(format!("{} {}", result.outcome.as_str(), result.name));
            }
        } else if !self.quiet && result.outcome.is_failure() {
            eprintln!(
                "[{done}/{}] {} {}: {}",
                self.total,
                result.outcome.as_str(),
                result.name,
                result.detail.as_deref().unwrap_or("")
            );
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
