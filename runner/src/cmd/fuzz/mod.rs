//! `asr-ctk fuzz`: black-box, differential fuzzing of an implementation through the
//! persistent protocol, with the reference as the oracle. Each iteration generates a valid
//! stream from the seed (and, for a validator, breaks one clause of a rule in half of them),
//! asks the implementation, and judges its answer; every disagreement is shrunk on the
//! stream model and written as a case of the corpus format under `OUT/found/`. The campaign
//! is reported as a certification run is (`OUT/report.json` and the others beside it): per
//! rule, the streams that exercised it, the disagreements charged to it and the cases found,
//! with a verdict ([`asr_suite::fuzz::campaign`]).

use crate::adapter::schema::SchemaCheck;
use crate::adapter::side::{Answer, OneShotSide, Sent, Side};
use crate::adapter::timeouts::StreamTimeoutArgs;
use crate::adapter::{Talk, supervise};
use crate::exit;
use crate::limits::LimitArgs;
use crate::role::{RoleArg, RunRole};
use anyhow::{Context, Result};
use arbitrary::Unstructured;
use asr_suite::case::{
    Expect, Provenance, ReaderExpect, Sidecar, Status, ValidatorExpect, Violation,
};
use asr_suite::catalog::Role;
use asr_suite::check::{CheckOptions, check_bytes, check_related};
use asr_suite::conformance::{AdapterInfo, Compared};
use asr_suite::diagnostic::Severity;
use asr_suite::fuzz::campaign::{
    Campaign, Charge, ChargeKind, Exercised, FoundCase, Invocation, IterationOutcome, rules_held,
};
use asr_suite::fuzz::generator::{self, Config, Stream};
use asr_suite::fuzz::oracle::{self, Disagreement, Expected, Kind};
use asr_suite::fuzz::{mutate, seeded_bytes, shrink};
use asr_suite::judge::members::Kinds;
use asr_suite::judge::sides::{Difference, NO_SUCH_FINDING, differences};
use asr_suite::protocol::{CaseRequest, Reply, StreamAnswer, StreamInput, base64_encode};
use asr_suite::render::escape_controls;
use asr_suite::rule::{self, RuleId};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The adapter command (`reference` names the built-in one). Give it more than once to
    /// fuzz several implementations at once: with `reference` among them, each other one is
    /// judged by the reference; without, a difference among them is what is found.
    #[arg(long = "adapter", value_name = "CMD", required = true)]
    adapters: Vec<String>,
    /// The role the implementation plays.
    #[arg(long, value_enum, default_value_t = RunRole::Validator)]
    role: RunRole,
    /// For a producer: the source format of the sessions generated (default: every format
    /// the kit has seeds of, in turn).
    #[arg(long, value_name = "F")]
    format: Option<String>,
    /// Stop after this many streams.
    #[arg(long, value_name = "N", conflicts_with = "seconds")]
    iterations: Option<u64>,
    /// The number of the first iteration: machines that split one campaign (the same seed)
    /// each take a range of its own, `--first F --iterations N`, and `asr-ctk report merge`
    /// joins their reports.
    #[arg(long, value_name = "N", default_value_t = 0)]
    first: u64,
    /// Stop after this many seconds (default: 60, when --iterations is not given).
    #[arg(long, value_name = "N")]
    seconds: Option<f64>,
    /// The seed: the same seed gives the same streams.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Where found cases go (`OUT/found/`), and the campaign's reports (`OUT/report.json`,
    /// `report.md`, `report.html`, `junit.xml`, `sarif.json`, `badge.json`).
    #[arg(long, value_name = "DIR", default_value = "asr-ctk-fuzz")]
    out: PathBuf,
    #[command(flatten)]
    timeouts: StreamTimeoutArgs,
    /// Cases written for one kind and rule of disagreement, at most (later ones are counted).
    #[arg(long, value_name = "N", default_value_t = 1)]
    keep: usize,
    /// Adapters asked at once, each by a thread of its own. Iteration i is the same stream
    /// whichever job takes it; with more than one job, which of two streams showing the same
    /// disagreement is written first depends on timing.
    #[arg(long, value_name = "N", default_value_t = 1)]
    jobs: usize,
    /// Ask the implementation in one-shot mode: a process for each stream, the stream on its
    /// stdin (PROTOCOL.md). Much slower; for adapters that have no persistent mode.
    #[arg(long)]
    oneshot: bool,
    /// Add each case found to the corpus checkout too (--cases, default ./cases), under its
    /// rule, with a new id from its ids.lock; a case the corpus's lints refuse stays in OUT.
    #[arg(long)]
    promote: bool,
    /// The corpus checkout --promote adds to.
    #[arg(long, value_name = "DIR", requires = "promote")]
    cases: Option<PathBuf>,
    #[command(flatten)]
    limits: LimitArgs,
}

mod producer;
mod promote;

impl Args {
    /// The first adapter given.
    fn adapter(&self) -> &str {
        self.adapters.first().map_or("reference", String::as_str)
    }

    /// The stream role fuzzed (a producer is fuzzed by [`producer`]).
    fn stream_role(&self) -> RoleArg {
        match self.role {
            RunRole::Reader => RoleArg::Reader,
            RunRole::Validator | RunRole::Producer => RoleArg::Validator,
        }
    }
}

/// Candidates tried when shrinking a disagreement.
const SHRINK_BUDGET: usize = 400;

/// Candidates tried when shrinking a fault (a crash, a hang, a protocol error).
const FAULT_SHRINK_BUDGET: usize = 20;

/// What one stream was, for the oracle.
#[derive(Debug, Clone)]
enum Subject {
    /// Generated and valid.
    Valid,
    /// One clause broken.
    Broken { clause: &'static str, rule: RuleId },
}

/// Disagreements (or a producer's failures) of one kind under one rule.
#[derive(Debug, Default)]
struct Tally {
    count: u64,
    /// Cases being or already written (at most `--keep`).
    kept: usize,
    written: Vec<PathBuf>,
    example: String,
}

impl Tally {
    /// Counts one more, said as `detail`; whether it is to be shrunk and written (at most
    /// `keep` are).
    fn count(&mut self, detail: &str, keep: usize) -> bool {
        self.count += 1;
        if self.example.is_empty() {
            detail.clone_into(&mut self.example);
        }
        let kept = self.kept < keep;
        self.kept += usize::from(kept);
        kept
    }
}

pub fn run(args: &Args) -> Result<u8> {
    if args.role == RunRole::Producer {
        return producer::run(args);
    }
    let Setup {
        timeouts,
        limits,
        promote_into,
        work,
    } = setup(args)?;
    // With the reference among several, the built-in oracle stands for it: the others are
    // asked. Without it, they are all asked, and judged by each other.
    let by_oracle = args.adapters.len() == 1 || args.adapters.iter().any(|a| a == "reference");
    let asked: Vec<(usize, &String)> = if args.adapters.len() == 1 {
        vec![(0, &args.adapters[0])]
    } else {
        args.adapters
            .iter()
            .enumerate()
            .filter(|(_, a)| !by_oracle || *a != "reference")
            .collect()
    };
    anyhow::ensure!(
        !asked.is_empty(),
        "give an implementation beside the reference to fuzz"
    );
    let commands: Vec<Vec<String>> = asked
        .iter()
        .map(|(_, given)| {
            if *given == "reference" {
                crate::adapter::reference_command(limits)
            } else {
                crate::adapter::adapter_command(given)
            }
        })
        .collect::<Result<_>>()?;
    let numbers: Vec<usize> = asked.iter().map(|(n, _)| *n).collect();
    let schemas = SchemaCheck::new(false)?;
    let talk = Talk {
        timeout: timeouts.answer(args.role.protocol()),
        start_timeout: timeouts.start,
        max_reply_bytes: limits.max_reply_bytes,
        check: &schemas,
        retention: None,
    };
    let mut targets: Vec<Target> = Vec::with_capacity(args.jobs);
    for _ in 0..args.jobs {
        let mut sides = Vec::with_capacity(commands.len());
        for command in &commands {
            match Driver::start(command, talk, args.oneshot) {
                Ok(side) => sides.push(side),
                Err(code) => {
                    for side in &mut sides {
                        side.stop();
                    }
                    for target in &mut targets {
                        target.stop();
                    }
                    return Ok(code);
                }
            }
        }
        targets.push(Target {
            sides,
            seq: 0,
            files: Vec::new(),
        });
    }
    let deadline = deadline(args);
    let identities: Vec<Reply> = targets
        .first()
        .map(|t| t.sides.iter().map(|s| s.identity().clone()).collect())
        .unwrap_or_default();
    let labels: Vec<String> = identities
        .iter()
        .zip(&asked)
        .map(|(identity, (n, given))| match identity {
            Reply::Started { implementation, .. } => format!("{} {}", n + 1, implementation.name),
            _ => format!("{} {given}", n + 1),
        })
        .collect();
    let who = Who {
        by_oracle,
        labels,
        numbers,
        several: args.adapters.len() > 1,
    };
    let mut options = Vec::new();
    for given in args.adapters.iter().skip(1) {
        options.push("--adapter".to_owned());
        options.push(given.clone());
    }
    if args.oneshot {
        // One-shot mode generates no families: other streams.
        options.push("--oneshot".to_owned());
    }
    let campaign = Campaign::new(
        args.role.protocol(),
        args.seed,
        Invocation {
            adapter: args.adapter().to_owned(),
            out: args.out.clone(),
            options,
        },
    );
    let shared = Shared {
        next: AtomicU64::new(args.first),
        judged: AtomicU64::new(0),
        written: AtomicUsize::new(0),
        running: AtomicUsize::new(args.jobs),
        tallies: Mutex::new(BTreeMap::new()),
        failure: Mutex::new(None),
        campaign: Mutex::new(campaign),
    };
    let started = Instant::now();
    run_jobs(
        targets,
        &shared.running,
        &shared.failure,
        |job, target| {
            let talk = Talk {
                timeout: timeouts.answer(args.role.protocol()),
                start_timeout: timeouts.start,
                max_reply_bytes: limits.max_reply_bytes,
                check: &schemas,
                retention: None,
            };
            let path = work.join(format!("stream-{job}"));
            fuzz_job(args, (target, &who), talk, &shared, deadline, &path)
        },
        |live| print_live(&shared, started, live),
    );
    let _ = std::fs::remove_dir_all(&work);
    if let Some(failure) = lock(&shared.failure).take() {
        return Err(failure);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let tallies = std::mem::take(&mut *lock(&shared.tallies));
    let iterations = shared.judged.load(Ordering::SeqCst);
    let campaign = shared
        .campaign
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    write_campaign_reports(campaign, &commands, args.oneshot, identities, &args.out)?;
    print_summary(&tallies, iterations, elapsed, args)?;
    if let Some(corpus) = promote_into {
        let found: Vec<PathBuf> = tallies.values().flat_map(|t| t.written.clone()).collect();
        say_promoted(&promote::promote(&corpus, &found)?);
    }
    Ok(if supervise::interrupted() {
        exit::INTERRUPTED
    } else if tallies.is_empty() {
        exit::OK
    } else {
        exit::INVALID
    })
}

/// The most jobs: each is an adapter process of its own.
const MAX_JOBS: usize = 64;

/// What the jobs share: the next iteration to take, the findings.
struct Shared {
    /// The number of the next iteration a job takes.
    next: AtomicU64,
    /// Iterations judged.
    judged: AtomicU64,
    /// Cases written so far: each gets an id of its own.
    written: AtomicUsize,
    /// Jobs still running.
    running: AtomicUsize,
    tallies: Mutex<BTreeMap<TallyKey, Tally>>,
    /// The first error that ended a job (writing a case failed, say).
    failure: Mutex<Option<anyhow::Error>>,
    /// The campaign's accounting, for its reports.
    campaign: Mutex<Campaign>,
}

/// The kind and rule of a disagreement, and who it is charged to (`""` for the one
/// implementation of a campaign, the sides' label for a difference among several).
type TallyKey = (Kind, String, String);

/// Who a campaign asks, and how they are judged.
struct Who {
    /// Judged by the reference (else by each other).
    by_oracle: bool,
    /// Each implementation asked, numbered in `--adapter` order and named.
    labels: Vec<String>,
    /// Each one's place in `--adapter` order.
    numbers: Vec<usize>,
    /// More than one `--adapter` was given.
    several: bool,
}

/// A disagreement of one iteration: with the reference (charged to the implementation
/// `by`) or among the implementations (`difference`).
#[derive(Debug, Clone)]
struct Found {
    disagreement: Disagreement,
    by: Option<usize>,
    difference: Option<Difference>,
}

/// A running job, counted out when dropped.
struct Running<'a>(&'a AtomicUsize);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The next iteration a job takes, or `None` when the campaign is over: interrupted, past
/// its deadline or its `--iterations`, or ended by an error of another job.
fn next_iteration(
    args: &Args,
    next: &AtomicU64,
    failure: &Mutex<Option<anyhow::Error>>,
    deadline: Option<Instant>,
) -> Option<u64> {
    if supervise::interrupted()
        || deadline.is_some_and(|d| Instant::now() >= d)
        || lock(failure).is_some()
    {
        return None;
    }
    let iteration = next.fetch_add(1, Ordering::SeqCst);
    let past = args
        .iterations
        .is_some_and(|n| iteration >= args.first.saturating_add(n));
    (!past).then_some(iteration)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One job: takes iterations until the bound, asks its own adapter, shrinks and writes what
/// disagrees. Iteration `i` is the same stream whichever job takes it.
fn fuzz_job(
    args: &Args,
    (mut target, who): (Target, &Who),
    talk: Talk<'_>,
    shared: &Shared,
    deadline: Option<Instant>,
    stream_path: &Path,
) -> Result<()> {
    let role = args.stream_role();
    let depth = if target.pipelined() { PIPELINE } else { 1 };
    let outcome = (|| {
        // The cases sent and not yet settled, oldest first: a pipelined adapter is sent the
        // next case as soon as one is answered, so that it never waits for the kit.
        let mut window: std::collections::VecDeque<InFlight> = std::collections::VecDeque::new();
        let mut sent = 0usize;
        let mut exhausted = false;
        // No case is sent until those in flight are settled: after a fault (the cases sent
        // to the process that ended are asked again, alone, of the next), or a refusal.
        let mut draining = false;
        loop {
            draining &= !window.is_empty();
            while !draining && !exhausted && window.len() < depth {
                let Some(iteration) = next_iteration(args, &shared.next, &shared.failure, deadline)
                else {
                    exhausted = true;
                    break;
                };
                // One-shot mode runs one stream a process: no families.
                let (streams, subject) = subject_of(args.seed, iteration, role, !args.oneshot)?;
                let bytes: Vec<Vec<u8>> = streams.iter().map(|(_, s)| s.to_bytes()).collect();
                // A slot's files are rewritten only once the case before in it is settled.
                let slot = sent % depth;
                sent += 1;
                let requests: Option<Vec<_>> = (depth > 1).then(|| {
                    (0..target.sides.len())
                        .map(|at| {
                            target.send(
                                (at, slot),
                                &streams,
                                &bytes,
                                &subject,
                                role,
                                stream_path,
                                talk,
                            )
                        })
                        .collect()
                });
                draining |= requests.iter().flatten().any(|sent| {
                    sent.as_ref().is_ok_and(|(_, sent)| !sent.taken()) || sent.is_err()
                });
                window.push_back(InFlight {
                    iteration,
                    streams,
                    subject,
                    bytes,
                    sent: requests,
                    answers: None,
                });
            }
            let Some(mut case) = window.pop_front() else {
                return Ok(());
            };
            // A case whose answer an interrupt cut short is not judged: the fault would be the
            // interrupt's, charged to it (and to each case in flight).
            if supervise::interrupted() {
                return Ok(());
            }
            let judged = match case
                .answers
                .take()
                .or_else(|| case.receive(&mut target, talk))
            {
                None => judge_all(
                    &mut target,
                    who,
                    &case.streams,
                    &case.bytes,
                    &case.subject,
                    role,
                    stream_path,
                    talk,
                ),
                Some(answers) => {
                    draining |= answers.iter().any(Result::is_err);
                    judge_answers(who, answers, &case.bytes, &case.subject, role)
                }
            };
            if judged.as_ref().is_some_and(|found| !found.is_empty()) {
                // Shrinking asks one case at a time: the cases in flight are answered first.
                for later in &mut window {
                    if later.answers.is_none() {
                        later.answers = later.receive(&mut target, talk);
                    }
                }
            }
            if supervise::interrupted() {
                return Ok(());
            }
            let InFlight {
                iteration,
                streams,
                subject,
                ..
            } = case;
            settle(
                args,
                (&mut target, who),
                talk,
                shared,
                stream_path,
                (iteration, streams, subject),
                judged,
            )?;
        }
    })();
    target.stop();
    outcome
}

/// A case of a job: sent ahead to every implementation (each its request, or why it could not
/// be sent) when they are pipelined, else to be asked when its turn comes; and their answers,
/// once taken.
struct InFlight {
    iteration: u64,
    streams: Streams,
    subject: Subject,
    bytes: Vec<Vec<u8>>,
    sent: Option<Vec<Result<(CaseRequest, Sent), String>>>,
    answers: Option<Vec<AnswerOf>>,
}

impl InFlight {
    /// The answer of each implementation it was sent to; `None` when it was not sent ahead.
    fn receive(&self, target: &mut Target, talk: Talk<'_>) -> Option<Vec<AnswerOf>> {
        let sent = self.sent.as_ref()?;
        Some(
            sent.iter()
                .enumerate()
                .map(|(at, sent)| match sent {
                    Ok((request, sent)) => target.receive(at, (request, *sent), talk),
                    Err(fault) => Err(fault.clone()),
                })
                .collect(),
        )
    }
}

/// Cases sent to a pipelined adapter before the first is answered.
const PIPELINE: usize = 16;

/// Records what an iteration's case came to, and shrinks and writes each disagreement.
fn settle(
    args: &Args,
    (target, who): (&mut Target, &Who),
    talk: Talk<'_>,
    shared: &Shared,
    stream_path: &Path,
    (iteration, streams, subject): (u64, Streams, Subject),
    judged: Option<Vec<Found>>,
) -> Result<()> {
    let role = args.stream_role();
    let exercised = match &subject {
        Subject::Broken { clause, rule } => Exercised::Broken {
            rule: rule.to_string(),
            clause: (*clause).to_owned(),
        },
        Subject::Valid => {
            let held: Vec<&Stream> = streams.iter().map(|(_, s)| s).collect();
            Exercised::Valid(rules_held(&held, role.protocol()))
        }
    };
    let found = match judged {
        None => {
            lock(&shared.campaign).record_iteration(
                iteration,
                &exercised,
                &IterationOutcome::Skipped,
            );
            Vec::new()
        }
        Some(found) => {
            let outcome = if found.is_empty() {
                IterationOutcome::Agreed
            } else {
                IterationOutcome::Disagreed(
                    found
                        .iter()
                        .map(|f| Charge {
                            non_strict: false,
                            rule: f.disagreement.rule.clone(),
                            kind: ChargeKind::from(f.disagreement.kind),
                        })
                        .collect(),
                )
            };
            lock(&shared.campaign).record_iteration(iteration, &exercised, &outcome);
            found
        }
    };
    for finding in found {
        let disagreement = finding.disagreement.clone();
        let charged_to = match finding.by {
            Some(at) if who.several => who.labels[at].clone(),
            _ if finding.difference.is_some() => "among them".to_owned(),
            _ => String::new(),
        };
        let key = (disagreement.kind, disagreement.rule.clone(), charged_to);
        let keep = lock(&shared.tallies)
            .entry(key.clone())
            .or_default()
            .count(&disagreement.detail, args.keep);
        if !keep {
            continue;
        }
        // A fault may be a hang: each candidate then costs a whole timeout, so a
        // fault is shrunk with few candidates. An interrupt ends shrinking at once.
        let budget = if disagreement.kind == Kind::Fault {
            FAULT_SHRINK_BUDGET
        } else {
            SHRINK_BUDGET
        };
        // Notices the streams have now may stay; no other may come in.
        let notices = {
            let bytes: Vec<Vec<u8>> = streams.iter().map(|(_, s)| s.to_bytes()).collect();
            let slices: Vec<&[u8]> = bytes.iter().map(Vec::as_slice).collect();
            oracle::notice_rules(&slices)
        };
        // Each stream in turn, the others as they are.
        let mut small = streams.clone();
        for at in 0..small.len() {
            let shrunk = shrink::shrink(
                &small[at].1,
                |candidate| {
                    let mut trial = small.clone();
                    trial[at].1 = candidate.clone();
                    !supervise::interrupted()
                        && still_disagrees(
                            (&mut *target, who),
                            &trial,
                            (&subject, &notices),
                            role,
                            &finding,
                            stream_path,
                            talk,
                        )
                },
                budget,
            );
            small[at].1 = shrunk;
        }
        let number = shared.written.fetch_add(1, Ordering::SeqCst);
        let (path, stream_paths) = write_case(
            &args.out,
            &small,
            &subject,
            role,
            &disagreement,
            (args.seed, iteration, number),
            &against(target, who, &finding),
        )?;
        lock(&shared.campaign).record_found(
            &disagreement.rule,
            ChargeKind::from(disagreement.kind),
            FoundCase {
                sidecar: path.clone(),
                streams: stream_paths,
                detail: disagreement.detail.clone(),
                iteration,
            },
        );
        let mut tallies = lock(&shared.tallies);
        tallies.entry(key).or_default().written.push(path);
    }
    shared.judged.fetch_add(1, Ordering::SeqCst);
    Ok(())
}

/// Who a found case was found against: the stem's prefix (the implementation's number,
/// when several were asked) and the words of its provenance.
fn against(target: &Target, who: &Who, finding: &Found) -> (String, String) {
    match finding.by {
        Some(at) => (
            if who.several {
                format!("{}_", who.numbers[at] + 1)
            } else {
                String::new()
            },
            format!(
                "against {}",
                target.sides.get(at).map(Driver::name).unwrap_or_default()
            ),
        ),
        None => (
            "among_".to_owned(),
            format!("among {}", who.labels.join(", ")),
        ),
    }
}

/// Writes a campaign's reports (those `run` writes) into `out`, beside `out/found/`: who was
/// asked is `command`, and what it said when it started.
fn write_campaign_reports(
    campaign: Campaign,
    commands: &[Vec<String>],
    oneshot: bool,
    identities: Vec<Reply>,
    out: &Path,
) -> Result<()> {
    let mut named: Vec<(Option<asr_suite::protocol::Implementation>, Vec<_>)> = identities
        .into_iter()
        .map(|identity| match identity {
            Reply::Started {
                implementation,
                roles,
                ..
            } => (Some(implementation), roles),
            _ => (None, Vec::new()),
        })
        .collect();
    named.resize(commands.len().max(1), (None, Vec::new()));
    let mut compared = commands
        .iter()
        .zip(&named)
        .skip(1)
        .map(|(command, (implementation, _))| Compared {
            command: command.clone(),
            implementation: implementation.clone(),
        });
    let versus = compared.next();
    let others = compared.collect();
    let (implementation, roles) = named.swap_remove(0);
    let adapter = AdapterInfo {
        command: commands.first().cloned().unwrap_or_default(),
        mode: if oneshot { "oneshot" } else { "persistent" }.into(),
        implementation,
        roles,
        versus,
        others,
    };
    let found_dir = campaign.found_dir();
    let stream_files = campaign.stream_files();
    let mut report = campaign.into_report(adapter);
    report.interrupted = supervise::interrupted();
    crate::write::reports(&report, &found_dir, &stream_files, out)
}

/// The command that runs the found cases of a campaign of `role` again, for each
/// implementation asked.
fn rerun(args: &Args, role: &str) -> String {
    let several = args.adapters.len() > 1;
    args.adapters
        .iter()
        .filter(|a| !several || *a != "reference")
        .map(|adapter| {
            format!(
                "re-run them: asr-ctk run --cases {} --role {role} --adapter {}{}",
                shell_words::quote(&args.out.join("found").to_string_lossy()),
                shell_words::quote(adapter),
                if args.oneshot { " --oneshot" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Says what became of each case `--promote` took to the corpus.
fn say_promoted(promoted: &[promote::Promoted]) {
    for promoted in promoted {
        match &promoted.outcome {
            Ok((name, id)) => println!("promoted: {name} ({id})"),
            Err(why) => println!(
                "not promoted: {}: {}",
                promoted.from.display(),
                escape_controls(why)
            ),
        }
    }
}

/// What a fuzz run of any role sets up from its arguments before it starts an adapter.
struct Setup {
    timeouts: crate::adapter::timeouts::Timeouts,
    limits: crate::limits::Limits,
    /// The corpus `--promote` adds to.
    promote_into: Option<PathBuf>,
    /// `OUT/work`, made, where the jobs write what they send.
    work: PathBuf,
}

/// Checks the arguments every role shares, makes `OUT/work` and sets up the supervision of
/// adapters.
fn setup(args: &Args) -> Result<Setup> {
    let timeouts = args.timeouts.timeouts()?;
    anyhow::ensure!(
        (1..=MAX_JOBS).contains(&args.jobs),
        "--jobs must be from 1 to {MAX_JOBS}"
    );
    let promote_into = args
        .promote
        .then(|| promote::corpus_root(args.cases.as_deref()))
        .transpose()?;
    let limits = args.limits.limits()?;
    let work = args.out.join("work");
    std::fs::create_dir_all(&work)
        .with_context(|| format!("failed to create {}", work.display()))?;
    supervise::init().context("failed to set up the supervision of adapters")?;
    Ok(Setup {
        timeouts,
        limits,
        promote_into,
        work,
    })
}

/// When a run bounded by time ends: `--seconds` from now (60 by default), unless
/// `--iterations` bounds it.
fn deadline(args: &Args) -> Option<Instant> {
    match (args.iterations, args.seconds) {
        (Some(_), _) => None,
        (None, seconds) => Some(Instant::now() + Duration::from_secs_f64(seconds.unwrap_or(60.0))),
    }
}

/// Runs `job` on each target, a thread each, until every one ends, saying how far the
/// campaign is with `progress` (its argument: whether stderr is a terminal); the first error
/// of a job is kept in `failure`, and the others stop at their next iteration.
fn run_jobs<T: Send>(
    targets: Vec<T>,
    running: &AtomicUsize,
    failure: &Mutex<Option<anyhow::Error>>,
    job: impl Fn(usize, T) -> Result<()> + Sync,
    progress: impl Fn(bool),
) {
    let live = std::io::stderr().is_terminal();
    running.store(targets.len(), Ordering::SeqCst);
    std::thread::scope(|scope| {
        for (n, target) in targets.into_iter().enumerate() {
            let job = &job;
            scope.spawn(move || {
                // Counted out however the job ends, a panic included, so the wait below ends.
                let _running = Running(running);
                if let Err(e) = job(n, target) {
                    lock(failure).get_or_insert(e);
                }
            });
        }
        let mut last_line = Instant::now();
        while running.load(Ordering::SeqCst) > 0 {
            std::thread::sleep(Duration::from_millis(20));
            // On a terminal, one line redrawn twice a second; elsewhere (a CI log) a line of
            // its own every PROGRESS_LOG, so that a long run is never silent.
            let every = if live {
                Duration::from_millis(500)
            } else {
                PROGRESS_LOG
            };
            if last_line.elapsed() >= every {
                last_line = Instant::now();
                progress(live);
            }
        }
    });
    if live {
        eprintln!();
    }
}

/// How often a run whose stderr is no terminal says how far it is.
const PROGRESS_LOG: Duration = Duration::from_secs(10);

/// The live line: streams so far, the rate, the findings by rule; redrawn in place on a
/// terminal, a line of its own elsewhere.
fn print_live(shared: &Shared, started: Instant, live: bool) {
    let judged = shared.judged.load(Ordering::SeqCst);
    let rate = per_second(judged, started.elapsed().as_secs_f64());
    let found: Vec<String> = lock(&shared.tallies)
        .iter()
        .map(|((kind, rule, _), t)| format!("{rule} {kind} {}", t.count))
        .collect();
    let said = format!(
        "fuzz: {judged} streams, {rate:.0}/s; findings: {}",
        if found.is_empty() {
            "none".to_owned()
        } else {
            found.join(", ")
        }
    );
    show_progress(live, &said);
}

/// Writes a progress line: over the last one on a terminal (`live`), else a line of its own.
fn show_progress(live: bool, said: &str) {
    if live {
        eprint!("\r\x1b[2K{said}");
    } else {
        eprintln!("{said}");
    }
}

/// The stream of one iteration: generated from the seed and the iteration's number, and, for
/// a validator, every other one with a clause broken. Most streams are small (a few dozen
/// records, short texts): a disagreement shows as well on them, costs less to find and to
/// shrink; one pair of iterations (a valid stream and a broken one) in [`LARGE_PAIRS`] keeps
/// the sizes its bytes choose (up to 200 records, texts of 4000 characters).
fn subject_of(
    seed: u64,
    iteration: u64,
    role: RoleArg,
    families: bool,
) -> Result<(Streams, Subject)> {
    let large = (iteration / 2) % LARGE_PAIRS == 0;
    let data = seeded_bytes(
        seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ iteration,
        if large { 16 << 10 } else { 4 << 10 },
    );
    let mut u = Unstructured::new(&data);
    let mut config: Config = u.arbitrary().unwrap_or_default();
    if !large {
        config.max_records = config.max_records.min(12);
        config.max_parts = config.max_parts.min(4);
        config.max_text = config.max_text.min(160);
    }
    if families && role == RoleArg::Validator && iteration % FAMILY_EVERY == FAMILY_EVERY - 2 {
        // A parent and its child, checked together (ASR-412).
        if let Ok(family) = generator::family(&mut u, &config) {
            let streams = vec![
                ("parent".to_owned(), family.parent),
                ("child".to_owned(), family.child),
            ];
            return Ok((streams, Subject::Valid));
        }
    }
    let stream = generator::stream(&mut u, &config)
        .or_else(|_| generator::stream(&mut Unstructured::new(&data), &Config::default()))
        .map_err(|e| anyhow::anyhow!("failed to generate a stream: {e}"))?;
    if role == RoleArg::Validator && iteration % 2 == 1 {
        if let Ok(mutation) = mutate::mutate(&stream, &mut u) {
            let subject = Subject::Broken {
                clause: mutation.clause,
                rule: mutation.rule,
            };
            return Ok((vec![(String::new(), mutation.stream)], subject));
        }
    }
    Ok((vec![(String::new(), stream)], Subject::Valid))
}

/// The streams of one iteration: one, whose part is `""`, or a family (`parent`, `child`).
type Streams = Vec<(String, Stream)>;

/// For a validator, one iteration in this many (one whose stream would be valid) is a family
/// of related streams.
const FAMILY_EVERY: u64 = 16;

/// One pair of iterations in this many generates streams as large as their bytes choose.
const LARGE_PAIRS: u64 = 64;

/// How the implementation is asked: one process for the whole run (restarted after a
/// fault), or one process a stream.
enum Driver {
    Persistent(Side),
    OneShot(OneShotSide),
}

impl Driver {
    fn start(command: &[String], talk: Talk<'_>, oneshot: bool) -> Result<Driver, u8> {
        if oneshot {
            OneShotSide::start(command, talk).map(Driver::OneShot)
        } else {
            Side::start(command, talk).map(Driver::Persistent)
        }
    }

    /// Requests need not carry the stream's bytes.
    fn by_path(&self) -> bool {
        match self {
            Driver::Persistent(side) => side.by_path(),
            // The stream is on the adapter's stdin.
            Driver::OneShot(_) => true,
        }
    }

    fn ask(
        &mut self,
        request: &CaseRequest,
        path: &Path,
        talk: Talk<'_>,
    ) -> Result<Answer, String> {
        match self {
            Driver::Persistent(side) => side.ask(request, talk),
            Driver::OneShot(side) => side.ask(request, path, talk),
        }
    }

    fn name(&self) -> String {
        match self {
            Driver::Persistent(side) => side.name(),
            Driver::OneShot(side) => side.name(),
        }
    }

    fn stop(&mut self) {
        if let Driver::Persistent(side) = self {
            side.stop();
        }
    }

    /// What it said when it started.
    fn identity(&self) -> &Reply {
        match self {
            Driver::Persistent(side) => &side.identity,
            Driver::OneShot(side) => &side.identity,
        }
    }
}

/// The implementation behind the protocol, restarted after a fault, and the seq of the
/// last request it was sent.
struct Target {
    /// Each implementation asked, in `--adapter` order.
    sides: Vec<Driver>,
    seq: u64,
    /// The files the streams are written to, by slot (one for each case in flight) and
    /// stream, kept open: rewriting one in place costs a write, where creating it anew costs
    /// a truncation, which some file systems follow with a flush when the file is closed.
    /// Each with its length: only a shorter stream than the last needs the file truncated.
    files: Vec<Vec<(std::fs::File, u64)>>,
}

impl Target {
    fn stop(&mut self) {
        for side in &mut self.sides {
            side.stop();
        }
    }

    /// The path of the `at`th stream of the request in `slot`, below `base`.
    fn path(base: &Path, slot: usize, at: usize) -> PathBuf {
        let mut name = base.as_os_str().to_owned();
        name.push(format!("-{slot}-{at}.jsonl"));
        PathBuf::from(name)
    }

    /// Writes `bytes` as the `at`th stream file of `slot`, whatever was there before.
    fn write_stream(
        &mut self,
        base: &Path,
        (slot, at): (usize, usize),
        bytes: &[u8],
    ) -> std::io::Result<()> {
        use std::io::{Seek, SeekFrom};
        while self.files.len() <= slot {
            self.files.push(Vec::new());
        }
        let files = &mut self.files[slot];
        while files.len() <= at {
            let path = Target::path(base, slot, files.len());
            // Whatever is at the name goes (a link planted there included, never followed),
            // and the file is made anew, exclusively.
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)?;
            files.push((file, 0));
        }
        let (file, len) = &mut files[at];
        // Until this write is done the file's length is unknown: a failed one is followed by
        // a truncation.
        let before = std::mem::replace(len, u64::MAX);
        file.seek(SeekFrom::Start(0))?;
        file.write_all(bytes)?;
        let new_len = bytes.len() as u64;
        if new_len < before {
            file.set_len(new_len)?;
        }
        *len = new_len;
        Ok(())
    }

    /// The implementation's answers on the streams (`None` when it skips them: it does not
    /// implement a rule they test), or the fault that kept it from answering.
    #[expect(clippy::too_many_arguments, reason = "one request's whole context")]
    fn ask(
        &mut self,
        at_side: usize,
        streams: &Streams,
        bytes: &[Vec<u8>],
        subject: &Subject,
        role: RoleArg,
        base: &Path,
        talk: Talk<'_>,
    ) -> AnswerOf {
        let request = self.request((at_side, 0), streams, bytes, subject, role, base)?;
        let answer = self.sides[at_side].ask(&request, &Target::path(base, 0, 0), talk)?;
        streams_of(answer, streams.len())
    }

    /// Sends the case of `streams` to the pipelined implementation `at_side`, its files
    /// written in `slot`, without waiting for its answer.
    #[expect(clippy::too_many_arguments, reason = "one request's whole context")]
    fn send(
        &mut self,
        (at_side, slot): (usize, usize),
        streams: &Streams,
        bytes: &[Vec<u8>],
        subject: &Subject,
        role: RoleArg,
        base: &Path,
        talk: Talk<'_>,
    ) -> Result<(CaseRequest, Sent), String> {
        let request = self.request((at_side, slot), streams, bytes, subject, role, base)?;
        let sent = self.persistent(at_side)?.send(&request, talk)?;
        Ok((request, sent))
    }

    /// The implementation `at_side`, which cases are sent ahead to.
    fn persistent(&mut self, at_side: usize) -> Result<&mut Side, String> {
        match &mut self.sides[at_side] {
            Driver::Persistent(side) => Ok(side),
            Driver::OneShot(_) => Err("only a persistent adapter is sent cases ahead".into()),
        }
    }

    /// The answer to a case [`Target::send`] sent.
    fn receive(
        &mut self,
        at_side: usize,
        (request, sent): (&CaseRequest, Sent),
        talk: Talk<'_>,
    ) -> AnswerOf {
        let answer = self.persistent(at_side)?.receive(request, sent, talk)?;
        streams_of(answer, request.streams.len())
    }

    /// The request for `streams`, to the implementation `at_side`, their files written in
    /// `slot`.
    fn request(
        &mut self,
        (at_side, slot): (usize, usize),
        streams: &Streams,
        bytes: &[Vec<u8>],
        subject: &Subject,
        role: RoleArg,
        base: &Path,
    ) -> Result<CaseRequest, String> {
        let mut inputs = Vec::with_capacity(streams.len());
        for (at, ((part, _), bytes)) in streams.iter().zip(bytes).enumerate() {
            let path = Target::path(base, slot, at);
            self.write_stream(base, (slot, at), bytes)
                .map_err(|e| format!("failed to write {}: {e}", path.display()))?;
            inputs.push(StreamInput {
                part: part.clone(),
                path: path.to_string_lossy().into_owned(),
                data: (!self.sides[at_side].by_path()).then(|| base64_encode(bytes)),
            });
        }
        self.seq += 1;
        Ok(CaseRequest {
            seq: self.seq,
            role: role.protocol(),
            case: "fuzz".into(),
            id: "fuzz".into(),
            // The rule a broken stream tests: an implementation that lacks it may skip it.
            rules: match subject {
                Subject::Broken { rule, .. } => vec![rule.to_string()],
                Subject::Valid => Vec::new(),
            },
            format: None,
            streams: inputs,
        })
    }

    /// Every implementation is persistent and takes cases before earlier ones are answered.
    fn pipelined(&self) -> bool {
        self.sides
            .iter()
            .all(|side| matches!(side, Driver::Persistent(side) if side.pipelined()))
    }
}

/// An implementation's answers on the streams of a case (`None` when it skipped them), or
/// the fault that kept it from answering.
type AnswerOf = Result<Option<Vec<StreamAnswer>>, String>;

/// The answers of an answer, one a stream.
fn streams_of(answer: Answer, streams: usize) -> AnswerOf {
    match answer {
        Answer::Skipped(_) => Ok(None),
        Answer::Streams(answers) if answers.len() == streams => Ok(Some(answers)),
        Answer::Streams(answers) => Err(format!(
            "protocol error: {} stream answers for {streams} streams",
            answers.len()
        )),
    }
}

/// Every way the implementation's answers on `streams` differ from the oracle's: at most one
/// disagreement a rule (the first mismatch of each stands for the rest); `None` when the
/// implementation skipped them. `bytes` are the streams as written.
fn judge(
    (target, at_side): (&mut Target, usize),
    streams: &Streams,
    bytes: &[Vec<u8>],
    subject: &Subject,
    role: RoleArg,
    base: &Path,
    talk: Talk<'_>,
) -> Option<Vec<Disagreement>> {
    let answer = target.ask(at_side, streams, bytes, subject, role, base, talk);
    judge_answer(answer, bytes, subject, role)
}

/// [`judge`], of an answer in hand.
fn judge_answer(
    answer: AnswerOf,
    bytes: &[Vec<u8>],
    subject: &Subject,
    role: RoleArg,
) -> Option<Vec<Disagreement>> {
    let answers = match answer {
        Ok(Some(answers)) => answers,
        Ok(None) => return None,
        Err(fault) => {
            return Some(vec![Disagreement {
                kind: Kind::Fault,
                rule: fault_rule(subject),
                detail: fault,
            }]);
        }
    };
    let mut by_rule: BTreeMap<String, Disagreement> = BTreeMap::new();
    for (stream, answer) in bytes.iter().zip(&answers) {
        let found: Vec<Disagreement> = match role {
            RoleArg::Validator => {
                let expected = match subject {
                    Subject::Valid => Expected::Valid,
                    Subject::Broken { rule, .. } => Expected::Broken { rule: *rule },
                };
                oracle::judge_validator(&expected, answer)
                    .into_iter()
                    .collect()
            }
            RoleArg::Reader => {
                let reference = oracle::reference_reading(stream);
                oracle::judge_reader(stream, &reference, answer)
            }
        };
        for d in found {
            by_rule.entry(d.rule.clone()).or_insert(d);
        }
    }
    Some(by_rule.into_values().collect())
}

/// Every disagreement of the implementations asked on `streams`: with the reference, each
/// charged to its implementation; or, judged by each other, every difference among them
/// (at most one a rule) and every fault. `None` when none gave an answer to judge.
#[expect(clippy::too_many_arguments, reason = "one iteration's whole context")]
fn judge_all(
    target: &mut Target,
    who: &Who,
    streams: &Streams,
    bytes: &[Vec<u8>],
    subject: &Subject,
    role: RoleArg,
    base: &Path,
    talk: Talk<'_>,
) -> Option<Vec<Found>> {
    let answers = (0..target.sides.len())
        .map(|at| target.ask(at, streams, bytes, subject, role, base, talk))
        .collect();
    judge_answers(who, answers, bytes, subject, role)
}

/// [`judge_all`], of the answers in hand (one an implementation, in order).
fn judge_answers(
    who: &Who,
    answered: Vec<AnswerOf>,
    bytes: &[Vec<u8>],
    subject: &Subject,
    role: RoleArg,
) -> Option<Vec<Found>> {
    let mut out = Vec::new();
    let mut judged = false;
    if who.by_oracle {
        for (at, answer) in answered.into_iter().enumerate() {
            if let Some(found) = judge_answer(answer, bytes, subject, role) {
                judged = true;
                out.extend(found.into_iter().map(|disagreement| Found {
                    disagreement,
                    by: Some(at),
                    difference: None,
                }));
            }
        }
        return judged.then_some(out);
    }
    let mut answers: Vec<Option<Vec<StreamAnswer>>> = Vec::with_capacity(answered.len());
    for (at, answer) in answered.into_iter().enumerate() {
        answers.push(match answer {
            Ok(answer) => answer,
            Err(fault) => {
                judged = true;
                out.push(Found {
                    disagreement: Disagreement {
                        kind: Kind::Fault,
                        rule: fault_rule(subject),
                        detail: fault,
                    },
                    by: Some(at),
                    difference: None,
                });
                None
            }
        });
    }
    let answered = answers.iter().filter(|a| a.is_some()).count();
    if answered < 2 {
        return judged.then_some(out);
    }
    let case_rules: Vec<String> = match subject {
        Subject::Broken { rule, .. } => vec![rule.to_string()],
        Subject::Valid => Vec::new(),
    };
    let case_rules: Vec<&str> = case_rules.iter().map(String::as_str).collect();
    let mut by_rule: BTreeMap<String, Found> = BTreeMap::new();
    for (index, stream) in bytes.iter().enumerate() {
        let of_stream: Vec<Option<&StreamAnswer>> = answers
            .iter()
            .map(|a| a.as_ref().and_then(|streams| streams.get(index)))
            .collect();
        let kinds = Kinds::of_stream(stream);
        for mut difference in differences(&of_stream, role.protocol(), &kinds, &case_rules) {
            if bytes.len() > 1 {
                difference.pointer = format!("/streams/{index}{}", difference.pointer);
            }
            let kind = match role {
                RoleArg::Reader => Kind::Reading,
                RoleArg::Validator => {
                    let first = difference.sides.first().and_then(|s| s.value.as_ref());
                    let lacks = first.is_some_and(|v| {
                        v == NO_SUCH_FINDING || v == &serde_json::Value::Bool(true)
                    });
                    if lacks {
                        Kind::OverStrict
                    } else {
                        Kind::Lenient
                    }
                }
            };
            let detail = difference.said(&who.labels);
            by_rule
                .entry(difference.rule.clone())
                .or_insert_with(|| Found {
                    disagreement: Disagreement {
                        kind,
                        rule: difference.rule.clone(),
                        detail,
                    },
                    by: None,
                    difference: Some(difference),
                });
        }
    }
    out.extend(by_rule.into_values());
    Some(out)
}

fn fault_rule(subject: &Subject) -> String {
    match subject {
        Subject::Valid => asr_suite::judge::UNATTRIBUTED.to_owned(),
        Subject::Broken { rule, .. } => rule.to_string(),
    }
}

/// Whether smaller streams still show the same disagreement, and the oracle still holds
/// for them: valid streams stay valid for the reference, a broken one stays broken under
/// the same rule, and no notice comes in that the streams did not have (`notices`).
fn still_disagrees(
    (target, who): (&mut Target, &Who),
    candidate: &Streams,
    (subject, notices): (&Subject, &std::collections::BTreeSet<String>),
    role: RoleArg,
    finding: &Found,
    base: &Path,
    talk: Talk<'_>,
) -> bool {
    let bytes: Vec<Vec<u8>> = candidate.iter().map(|(_, s)| s.to_bytes()).collect();
    let slices: Vec<&[u8]> = bytes.iter().map(Vec::as_slice).collect();
    // The candidate must stay a case the corpus takes: for a validator, valid with no
    // warning, or broken under the rule alone.
    let oracle_holds = match (role, subject) {
        (RoleArg::Validator, Subject::Valid) => oracle::fits_a_case(&slices, None, notices),
        (RoleArg::Validator, Subject::Broken { rule, .. }) => {
            oracle::fits_a_case(&slices, Some(rule.as_str()), notices)
        }
        (RoleArg::Reader, _) => slices
            .iter()
            .all(|bytes| oracle::reference_reading(bytes).accepted),
    };
    if !oracle_holds {
        return false;
    }
    match (&finding.difference, finding.by) {
        // The same difference: the same rule, pointer and sides.
        (Some(difference), _) => {
            judge_all(target, who, candidate, &bytes, subject, role, base, talk)
                .into_iter()
                .flatten()
                .any(|f| f.difference.is_some_and(|d| d.same(difference)))
        }
        (None, at) => judge(
            (target, at.unwrap_or(0)),
            candidate,
            &bytes,
            subject,
            role,
            base,
            talk,
        )
        .into_iter()
        .flatten()
        .any(|d| d.same(&finding.disagreement)),
    }
}

/// Writes the shrunk streams and their sidecar: what the reference says of them, so that
/// `asr-ctk run --cases OUT/found` fails the implementation on them and passes the
/// reference. Returns the sidecar's path and the streams'.
fn write_case(
    out: &Path,
    streams: &Streams,
    subject: &Subject,
    role: RoleArg,
    disagreement: &Disagreement,
    (seed, iteration, number): (u64, u64, usize),
    (who_prefix, against): &(String, String),
) -> Result<(PathBuf, Vec<PathBuf>)> {
    let rule_dir = if disagreement.rule.starts_with("ASR-") {
        disagreement.rule.clone()
    } else {
        "unattributed".to_owned()
    };
    let dir = out.join("found").join(&rule_dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("failed to create {}", dir.display()))?;
    let bytes: Vec<Vec<u8>> = streams.iter().map(|(_, s)| s.to_bytes()).collect();
    let options = CheckOptions::default();
    let mut reports: Vec<_> = bytes.iter().map(|b| check_bytes(b, &options)).collect();
    check_related(&mut reports, &options);
    let valid = reports.iter().all(asr_suite::check::StreamReport::valid);
    let prefix = if valid { "y" } else { "n" };
    let stem = format!(
        "{prefix}_fuzz_{who_prefix}{}_{seed}_{iteration}",
        disagreement.kind
    )
    .replace('-', "_");
    let mut stream_paths = Vec::with_capacity(streams.len());
    for ((part, _), bytes) in streams.iter().zip(&bytes) {
        let name = if part.is_empty() {
            format!("{stem}.jsonl")
        } else {
            format!("{stem}.{part}.jsonl")
        };
        let path = dir.join(name);
        asr_suite::files::replace(&path, bytes)
            .with_context(|| format!("failed to write {}", path.display()))?;
        stream_paths.push(path);
    }
    let expect = match role {
        RoleArg::Validator => Expect {
            validator: Some(ValidatorExpect {
                valid,
                violations: streams
                    .iter()
                    .zip(&reports)
                    .flat_map(|((part, _), report)| {
                        report
                            .diagnostics
                            .iter()
                            .filter(|d| {
                                !(d.rule == rule::ASR_406 && d.severity == Severity::Notice)
                            })
                            .map(move |d| Violation {
                                rule: d.rule.to_string(),
                                severity: d.severity,
                                line: d.line,
                                pointer: d.pointer.clone(),
                                file: (!part.is_empty()).then(|| part.clone()),
                            })
                    })
                    .collect(),
                if_rejected: Vec::new(),
            }),
            reader: None,
            reader_streams: BTreeMap::default(),
        },
        RoleArg::Reader => {
            // Families are asked of validators only: a reader's case has one stream.
            let outcome = oracle::reference_reading(&bytes[0]);
            Expect {
                validator: None,
                reader: Some(ReaderExpect {
                    valid: outcome.accepted,
                    reading: serde_json::to_value(&outcome.reading)?,
                    may_refuse: false,
                }),
                ..Expect::default()
            }
        }
    };
    let mut rules: Vec<String> = Vec::new();
    if disagreement.rule.starts_with("ASR-") {
        rules.push(disagreement.rule.clone());
    }
    let clauses = match subject {
        Subject::Broken { clause, .. } => vec![(*clause).to_owned()],
        Subject::Valid => Vec::new(),
    };
    let sidecar = Sidecar {
        // Ids of the corpus's form, in a range the corpus does not use; promoting a case
        // into cases/ gives it one from cases/ids.lock.
        id: format!("c{:04}", 9000 + number % 1000),
        description: format!(
            "Found by asr-ctk fuzz: {} ({}); shrunk on the stream model.",
            escape_controls(&disagreement.detail),
            disagreement.kind
        ),
        rules,
        clauses,
        roles: vec![match role {
            RoleArg::Validator => Role::Validator,
            RoleArg::Reader => Role::Reader,
        }],
        expect,
        provenance: Provenance::FuzzFound {
            target: format!("asr-ctk fuzz --role {}", role.name()),
            seed: format!("{seed}/{iteration}"),
            note: Some(against.clone()),
        },
        status: Status::Stable,
        decision: None,
    };
    let sidecar_path = dir.join(format!("{stem}.json"));
    asr_suite::files::replace(
        &sidecar_path,
        (serde_json::to_string_pretty(&sidecar)? + "\n").as_bytes(),
    )
    .with_context(|| format!("failed to write {}", sidecar_path.display()))?;
    Ok((sidecar_path, stream_paths))
}

/// A text cut to a line's length.
fn brief(text: &str) -> String {
    const MAX: usize = 200;
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_owned(),
    }
}

/// A rate; counts of streams stay far below 2^52, where f64 is exact.
#[expect(clippy::cast_precision_loss, reason = "counts far below 2^52")]
fn per_second(count: u64, seconds: f64) -> f64 {
    count as f64 / seconds.max(1e-9)
}

fn print_summary(
    tallies: &BTreeMap<TallyKey, Tally>,
    iterations: u64,
    seconds: f64,
    args: &Args,
) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    writeln!(
        out,
        "fuzz: {iterations} streams in {seconds:.1} s ({:.0}/s), seed {}",
        per_second(iterations, seconds),
        args.seed
    )?;
    if tallies.is_empty() {
        writeln!(out, "no disagreement with the reference")?;
    }
    for ((kind, rule, by), tally) in tallies {
        let by = if by.is_empty() {
            String::new()
        } else {
            format!(" ({by})")
        };
        writeln!(
            out,
            "{rule}: {kind}{by}, {} stream(s): {}",
            tally.count,
            escape_controls(&brief(&tally.example))
        )?;
        for path in &tally.written {
            writeln!(out, "  {}", path.display())?;
        }
    }
    if !tallies.is_empty() {
        writeln!(out, "{}", rerun(args, args.stream_role().name()))?;
    }
    writeln!(
        out,
        "reports: {}",
        args.out
            .join("report.{json,md,html}, junit.xml, sarif.json, badge.json")
            .display()
    )?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream file rewritten in place holds exactly the last stream, shorter or longer
    /// than the one before.
    #[test]
    fn a_stream_file_holds_the_last_stream_written() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let base = dir.path().join("stream");
        let mut target = Target {
            sides: Vec::new(),
            seq: 0,
            files: Vec::new(),
        };
        for len in [300, 40, 41, 5_000, 0, 7, 7, 6] {
            let bytes: Vec<u8> = (b'a'..=b'z').cycle().take(len).collect();
            target
                .write_stream(&base, (1, 2), &bytes)
                .expect("the stream is written");
            let read = std::fs::read(Target::path(&base, 1, 2)).expect("the file is read");
            assert!(read == bytes, "after a stream of {len} bytes");
        }
    }
}
