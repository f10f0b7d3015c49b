//! `asr-ctk fuzz --role producer`: each iteration generates a native session of a format
//! from the seeds the kit carries ([`asr_suite::fuzz::native`]), asks the producer to convert
//! it with the request `run` sends for a source fixture, and judges its output with
//! [`judge_conversion`]: valid streams with no warning, breaking no conservation property
//! of the session's facts. A producer that answers `skipped` (a format it does not convert,
//! a session it declines) is counted, not failed. Each failure, hard or non-strict, is shrunk
//! to the fewest turns and shortest texts that still fail under its rule, and written as a
//! source fixture under `OUT/found/sources/<format>/` (provenance `fuzzed`, no golden), so
//! that `asr-ctk run --cases OUT/found --role producer` runs it again.

use super::promote;
use super::{
    Args, Setup, Tally, brief, deadline, lock, next_iteration, per_second, rerun, run_jobs,
    say_promoted, setup, write_campaign_reports,
};
use crate::adapter::produce::{self, Produced};
use crate::adapter::schema::SchemaCheck;
use crate::adapter::side::{OneShotSide, Side};
use crate::adapter::{Persistent, Talk, supervise};
use crate::exit;
use anyhow::{Context, Result};
use asr_suite::case::Status;
use asr_suite::conformance::Failure;
use asr_suite::conserve;
use asr_suite::facts;
use asr_suite::fuzz::campaign::{
    Campaign, Charge, ChargeKind, Exercised, FoundCase, Invocation, IterationOutcome,
};
use asr_suite::fuzz::native::{self, Native};
use asr_suite::judge::judge_conversion;
use asr_suite::protocol::{CaseReply, ProtocolRole, Reply, check_case_reply, check_outputs};
use asr_suite::render::escape_controls;
use asr_suite::source::{
    FixtureExpect, FixtureProvenance, FixtureSidecar, ProducerExpect, SourceFixture,
};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

/// Candidates tried when shrinking a failure: each is a conversion by the producer.
const SHRINK_BUDGET: usize = 150;

/// Candidates tried when shrinking a fault (each may cost a whole timeout).
const FAULT_SHRINK_BUDGET: usize = 20;

/// How a conversion failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// A hard failure: the rule is broken.
    Hard,
    /// Only a warning, or a failure that rests on a decision of the kit's.
    NonStrict,
    /// No answer, an `error`, or an answer that breaks the protocol.
    Fault,
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Kind::Hard => "hard",
            Kind::NonStrict => "non-strict",
            Kind::Fault => "fault",
        })
    }
}

/// One failure of a conversion, under one rule.
#[derive(Debug, Clone)]
struct Finding {
    kind: Kind,
    /// How the output failed; `None` for a fault.
    failure: Option<Failure>,
    /// The rule; `unattributed` when none is charged (a fault).
    rule: String,
    detail: String,
}

impl Finding {
    /// The finding as a campaign's charge.
    fn charge(&self) -> Charge {
        Charge {
            rule: self.rule.clone(),
            kind: self.failure.map_or(ChargeKind::Fault, ChargeKind::Failure),
            non_strict: self.kind == Kind::NonStrict,
        }
    }
}

/// What the jobs share.
struct Shared {
    next: AtomicU64,
    judged: AtomicU64,
    skipped: AtomicU64,
    written: AtomicUsize,
    running: AtomicUsize,
    tallies: Mutex<BTreeMap<(Kind, String, String), Tally>>,
    /// Reasons for skipping, counted, for the summary.
    skips: Mutex<BTreeMap<String, u64>>,
    failure: Mutex<Option<anyhow::Error>>,
    /// The campaign's accounting, for its reports.
    campaign: Mutex<Campaign>,
}

/// Runs the producer fuzzer; the exit status is INVALID when a hard failure or a fault was
/// found (a non-strict failure alone passes, as in `run`).
pub(super) fn run(args: &Args) -> Result<u8> {
    let formats: Vec<&'static str> = match &args.format {
        Some(format) => {
            let known = native::formats();
            let Some(found) = known.iter().find(|f| **f == format.as_str()) else {
                anyhow::bail!(
                    "--format {format}: the kit has no seeds of it; it has {}",
                    known.join(", ")
                );
            };
            vec![*found]
        }
        None => native::formats(),
    };
    // Refused before anything is made in OUT.
    anyhow::ensure!(
        args.adapters.len() == 1,
        "a producer is fuzzed alone: give --adapter once"
    );
    anyhow::ensure!(
        args.adapter() != "reference",
        "the reference is no producer: give a producer's adapter command with --adapter"
    );
    let Setup {
        timeouts,
        limits,
        promote_into,
        work,
    } = setup(args)?;
    let command = crate::adapter::adapter_command(args.adapter())?;
    let schemas = SchemaCheck::new(false)?;
    let talk = Talk {
        timeout: timeouts.answer(ProtocolRole::Producer),
        start_timeout: timeouts.start,
        max_reply_bytes: limits.max_reply_bytes,
        check: &schemas,
        retention: None,
    };
    let mut targets = Vec::with_capacity(args.jobs);
    for job in 0..args.jobs {
        match Producer::start(&command, talk, args.oneshot) {
            Ok(producer) => targets.push(Target {
                producer,
                seq: 0,
                dir: work.join(format!("job-{job}")),
            }),
            Err(code) => {
                for target in &mut targets {
                    target.producer.stop();
                }
                return Ok(code);
            }
        }
    }
    let deadline = deadline(args);
    let mut options = Vec::new();
    if let Some(format) = &args.format {
        options.extend(["--format".to_owned(), format.clone()]);
    }
    if args.oneshot {
        options.push("--oneshot".to_owned());
    }
    let campaign = Campaign::new(
        ProtocolRole::Producer,
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
        skipped: AtomicU64::new(0),
        written: AtomicUsize::new(0),
        running: AtomicUsize::new(args.jobs),
        tallies: Mutex::new(BTreeMap::new()),
        skips: Mutex::new(BTreeMap::new()),
        failure: Mutex::new(None),
        campaign: Mutex::new(campaign),
    };
    let identity = targets.first().map(|t| t.producer.identity().clone());
    let started = Instant::now();
    run_jobs(
        targets,
        &shared.running,
        &shared.failure,
        |_, target| fuzz_job(args, target, talk, &shared, deadline, &formats),
        |live| print_live(&shared, started, live),
    );
    let _ = std::fs::remove_dir_all(&work);
    if let Some(failure) = lock(&shared.failure).take() {
        return Err(failure);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let tallies = std::mem::take(&mut *lock(&shared.tallies));
    let skips = std::mem::take(&mut *lock(&shared.skips));
    let counts = (
        shared.judged.load(Ordering::SeqCst),
        shared.skipped.load(Ordering::SeqCst),
    );
    let campaign = shared
        .campaign
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    write_campaign_reports(
        campaign,
        std::slice::from_ref(&command),
        args.oneshot,
        identity.into_iter().collect(),
        &args.out,
    )?;
    print_summary(&tallies, &skips, counts, elapsed, args)?;
    if let Some(corpus) = promote_into {
        let found: Vec<PathBuf> = tallies.values().flat_map(|t| t.written.clone()).collect();
        say_promoted(&promote::promote_fixtures(&corpus, &found)?);
    }
    Ok(if supervise::interrupted() {
        exit::INTERRUPTED
    } else if tallies.keys().any(|(kind, _, _)| *kind != Kind::NonStrict) {
        exit::INVALID
    } else {
        exit::OK
    })
}

/// One job: takes iterations until the bound, asks its own producer, shrinks and writes
/// what fails.
fn fuzz_job(
    args: &Args,
    mut target: Target,
    talk: Talk<'_>,
    shared: &Shared,
    deadline: Option<Instant>,
    formats: &[&str],
) -> Result<()> {
    let outcome = (|| {
        loop {
            let Some(iteration) = next_iteration(args, &shared.next, &shared.failure, deadline)
            else {
                return Ok(());
            };
            let format = formats[usize::try_from(iteration).unwrap_or(0) % formats.len()];
            let Some(generated) = native::generate(format, args.seed, iteration) else {
                continue;
            };
            // What the session gives the properties to check: the rules it exercises.
            let exercised = Exercised::Valid(conserve::exercised(&facts::read(
                format,
                &generated.native.files(),
            )));
            let findings = match target.convert(&generated.native, format, talk)? {
                Converted::Skipped(reason) => {
                    shared.skipped.fetch_add(1, Ordering::SeqCst);
                    *lock(&shared.skips).entry(reason).or_default() += 1;
                    lock(&shared.campaign).record_iteration(
                        iteration,
                        &exercised,
                        &IterationOutcome::Skipped,
                    );
                    shared.judged.fetch_add(1, Ordering::SeqCst);
                    continue;
                }
                Converted::Judged(findings) => findings,
            };
            let outcome = if findings.is_empty() {
                IterationOutcome::Agreed
            } else {
                IterationOutcome::Disagreed(findings.iter().map(Finding::charge).collect())
            };
            lock(&shared.campaign).record_iteration(iteration, &exercised, &outcome);
            for finding in findings {
                let key = (finding.kind, finding.rule.clone(), format.to_owned());
                let keep = lock(&shared.tallies)
                    .entry(key.clone())
                    .or_default()
                    .count(&finding.detail, args.keep);
                if !keep {
                    continue;
                }
                let budget = if finding.kind == Kind::Fault {
                    FAULT_SHRINK_BUDGET
                } else {
                    SHRINK_BUDGET
                };
                let mut failed = Ok(());
                let small = native::shrink(
                    &generated.native,
                    |candidate| {
                        if supervise::interrupted() || failed.is_err() {
                            return false;
                        }
                        match target.convert(candidate, format, talk) {
                            Ok(Converted::Judged(found)) => found
                                .iter()
                                .any(|f| f.kind == finding.kind && f.rule == finding.rule),
                            Ok(Converted::Skipped(_)) => false,
                            Err(e) => {
                                failed = Err(e);
                                false
                            }
                        }
                    },
                    budget,
                );
                failed?;
                let number = shared.written.fetch_add(1, Ordering::SeqCst);
                let path = write_fixture(
                    &args.out,
                    &small,
                    &generated,
                    &finding,
                    (args.seed, iteration, number),
                    &target.producer.name(),
                )?;
                let streams = std::fs::read_dir(path.join("source"))
                    .map(|d| {
                        let mut files: Vec<PathBuf> = d.flatten().map(|e| e.path()).collect();
                        files.sort();
                        files
                    })
                    .unwrap_or_default();
                lock(&shared.campaign).record_found(
                    &finding.rule,
                    finding.charge().kind,
                    FoundCase {
                        sidecar: path.join("fixture.json"),
                        streams,
                        detail: finding.detail.clone(),
                        iteration,
                    },
                );
                lock(&shared.tallies)
                    .entry(key)
                    .or_default()
                    .written
                    .push(path);
            }
            shared.judged.fetch_add(1, Ordering::SeqCst);
        }
    })();
    target.producer.stop();
    let _ = std::fs::remove_dir_all(&target.dir);
    outcome
}

/// What became of one session.
enum Converted {
    /// The producer declined it, saying why.
    Skipped(String),
    /// It answered (or failed to): the failures of its output, none when it passes.
    Judged(Vec<Finding>),
}

/// The producer behind the protocol: one process for the run (started again after a
/// fault), or one a session.
enum Producer {
    Persistent {
        side: Side,
        argv: Vec<String>,
    },
    OneShot {
        side: OneShotSide,
        argv: Vec<String>,
    },
}

impl Producer {
    fn start(command: &[String], talk: Talk<'_>, oneshot: bool) -> Result<Producer, u8> {
        let argv = command.to_vec();
        if oneshot {
            OneShotSide::start(command, talk).map(|side| Producer::OneShot { side, argv })
        } else {
            Side::start(command, talk).map(|side| Producer::Persistent { side, argv })
        }
    }

    fn name(&self) -> String {
        match self {
            Producer::Persistent { side, .. } => side.name(),
            Producer::OneShot { side, .. } => side.name(),
        }
    }

    fn stop(&mut self) {
        if let Producer::Persistent { side, .. } = self {
            side.stop();
        }
    }

    /// What it said when it started.
    fn identity(&self) -> &Reply {
        match self {
            Producer::Persistent { side, .. } => &side.identity,
            Producer::OneShot { side, .. } => &side.identity,
        }
    }
}

/// A job's producer, the seq of its last request, and the directory its sessions are
/// written to (as a fixture: `fixture/source/<file>`).
struct Target {
    producer: Producer,
    seq: u64,
    dir: PathBuf,
}

impl Target {
    /// Writes the session as a fixture's source, asks the producer, judges its answer. An
    /// error is the kit's own (a file it could not write), never the producer's.
    fn convert(&mut self, session: &Native, format: &str, talk: Talk<'_>) -> Result<Converted> {
        let fixture = self.write_session(session, format)?;
        let case = fixture
            .as_case()
            .with_context(|| format!("failed to read back {}", fixture.dir.display()))?;
        self.seq += 1;
        let seq = self.seq;
        let answer = match &mut self.producer {
            Producer::Persistent { side, argv } => {
                let request =
                    crate::adapter::request(&case, seq, ProtocolRole::Producer, side.by_path())
                        .map_err(|e| anyhow::anyhow!(e))?;
                if side.running.is_none() {
                    match Persistent::start(argv, talk) {
                        Ok((running, _)) => side.running = Some(running),
                        Err((fault, _)) => {
                            return Ok(fault_found(format!("did not restart: {fault}")));
                        }
                    }
                }
                match side
                    .running
                    .as_mut()
                    .map(|running| running.ask(&request, talk))
                {
                    Some(Ok(reply)) => outputs_of(reply, Some(seq)),
                    Some(Err(fault)) => {
                        side.stop();
                        side.running = None;
                        Err(fault.to_string())
                    }
                    None => Err("no producer".into()),
                }
            }
            Producer::OneShot { argv, .. } => match produce::oneshot(argv, &case, format, talk).0 {
                Ok(Produced::Outputs(outputs)) => checked(outputs),
                Ok(Produced::Reply(reply)) => outputs_of(reply, None),
                Err(fault) => Err(fault.to_string()),
            },
        };
        Ok(match answer {
            Ok(Answer::Skipped(reason)) => Converted::Skipped(reason),
            Ok(Answer::Outputs(outputs)) => Converted::Judged(judged(format, session, &outputs)),
            Err(fault) => fault_found(fault),
        })
    }

    /// The session's files under `dir/fixture/source/`, replacing the last session's, and
    /// the fixture they make.
    fn write_session(&self, session: &Native, format: &str) -> Result<SourceFixture> {
        let dir = self.dir.join("fixture");
        let source = dir.join("source");
        match std::fs::remove_dir_all(&dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("failed to clear {}", dir.display()));
            }
            _ => {}
        }
        std::fs::create_dir_all(&source)
            .with_context(|| format!("failed to create {}", source.display()))?;
        for (name, bytes) in session.files() {
            let path = source.join(&name);
            asr_suite::files::create_new(&path, &bytes)
                .with_context(|| format!("failed to write {}", path.display()))?;
        }
        Ok(SourceFixture {
            name: format!("{format}/fuzz"),
            dir,
            sidecar: sidecar(
                format,
                "A session generated by asr-ctk fuzz.",
                None,
                (0, 0, 0),
            ),
        })
    }
}

/// What a producer answered: its outputs, or its reason for skipping.
enum Answer {
    Outputs(Vec<(String, Vec<u8>)>),
    Skipped(String),
}

fn fault_found(detail: String) -> Converted {
    Converted::Judged(vec![Finding {
        kind: Kind::Fault,
        failure: None,
        rule: asr_suite::judge::UNATTRIBUTED.to_owned(),
        detail,
    }])
}

/// The outputs of a producer's reply, or the fault it is (PROTOCOL.md: a producer's answer
/// holds `outputs`, each line of `lines` one line).
fn outputs_of(reply: Reply, seq: Option<u64>) -> Result<Answer, String> {
    // One-shot: the reply may leave its seq out (it reads as 0), as `run` reads it.
    match check_case_reply(reply, seq.unwrap_or(0), ProtocolRole::Producer, 0) {
        Ok(CaseReply::Outputs(outputs)) => checked(
            outputs
                .iter()
                .map(|o| (o.name.clone(), o.bytes()))
                .collect(),
        ),
        Ok(CaseReply::Skipped { reason, .. }) => Ok(Answer::Skipped(reason)),
        Ok(CaseReply::Error(message)) => Err(format!("error: {message}")),
        Ok(CaseReply::Streams(_)) => {
            Err("protocol error: a producer's answer has `streams`".into())
        }
        Err(why) => Err(format!("protocol error: {why}")),
    }
}

/// Outputs the protocol allows ([`check_outputs`]), as `run` allows them.
fn checked(outputs: Vec<(String, Vec<u8>)>) -> Result<Answer, String> {
    check_outputs(&outputs).map_err(|why| format!("protocol error: {why}"))?;
    Ok(Answer::Outputs(outputs))
}

/// The failures of a producer's outputs of `session`: one a kind and rule.
fn judged(format: &str, session: &Native, outputs: &[(String, Vec<u8>)]) -> Vec<Finding> {
    let judgement = judge_conversion(format, &session.files(), outputs);
    let detail = judgement.reasons.first().cloned().unwrap_or_default();
    let mut findings: BTreeMap<(Kind, String), Finding> = BTreeMap::new();
    for attribution in &judgement.attributions {
        let kind = if attribution.is_hard() {
            Kind::Hard
        } else {
            Kind::NonStrict
        };
        let rule = attribution
            .rule
            .clone()
            .unwrap_or_else(|| asr_suite::judge::UNATTRIBUTED.to_owned());
        // The first reason that names the rule, else the first of all.
        let detail = judgement
            .reasons
            .iter()
            .find(|r| r.contains(&rule))
            .cloned()
            .unwrap_or_else(|| detail.clone());
        findings.entry((kind, rule.clone())).or_insert(Finding {
            kind,
            failure: Some(attribution.kind),
            rule,
            detail,
        });
    }
    findings.into_values().collect()
}

/// A fuzzed fixture's sidecar.
fn sidecar(
    format: &str,
    description: &str,
    rule: Option<&str>,
    (seed, iteration, number): (u64, u64, usize),
) -> FixtureSidecar {
    FixtureSidecar {
        // An id of the fixtures' form in a range the corpus does not use; --promote gives
        // the fixture one from cases/ids.lock.
        id: format!("s{:04}", 9000 + number % 1000),
        description: description.to_owned(),
        format: format.to_owned(),
        rules: rule
            .filter(|r| r.starts_with("ASR-"))
            .map(str::to_owned)
            .into_iter()
            .collect(),
        provenance: FixtureProvenance::Fuzzed {
            seed,
            iteration,
            format: format.to_owned(),
        },
        expect: FixtureExpect {
            producer: ProducerExpect {
                warnings: Vec::new(),
                assertions: Vec::new(),
            },
        },
        mistakes: Vec::new(),
        status: Status::Stable,
    }
}

/// Writes the shrunk session as a source fixture, `OUT/found/sources/<format>/fuzz_<rule>_
/// <seed>_<iteration>/`; returns its directory.
fn write_fixture(
    out: &Path,
    session: &Native,
    generated: &native::Generated,
    finding: &Finding,
    (seed, iteration, number): (u64, u64, usize),
    producer: &str,
) -> Result<PathBuf> {
    let rule = if finding.rule.starts_with("ASR-") {
        finding.rule.to_ascii_lowercase().replace('-', "_")
    } else {
        "unattributed".to_owned()
    };
    let dir = out
        .join("found")
        .join(asr_suite::source::SOURCES_DIR)
        .join(&generated.format)
        .join(if finding.kind == Kind::NonStrict {
            // Apart from a hard failure under the same rule in the same session.
            format!("fuzz_{rule}_non_strict_{seed}_{iteration}")
        } else {
            format!("fuzz_{rule}_{seed}_{iteration}")
        });
    let source = dir.join("source");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&source)
        .with_context(|| format!("failed to create {}", source.display()))?;
    for (name, bytes) in session.files() {
        let path = source.join(&name);
        asr_suite::files::replace(&path, &bytes)
            .with_context(|| format!("failed to write {}", path.display()))?;
    }
    let description = format!(
        "Found by asr-ctk fuzz --role producer against {}: {} ({} failure under {}). \
         Generated from {} by: {}; shrunk to the fewest turns and entries and the shortest \
         texts that still fail so. No golden: an output is judged by the stream checker and \
         the conservation properties.",
        escape_controls(producer),
        escape_controls(&brief(&finding.detail)),
        finding.kind,
        finding.rule,
        generated.seed,
        escape_controls(&generated.mutations.join("; ")),
    );
    let sidecar = sidecar(
        &generated.format,
        &description,
        Some(&finding.rule),
        (seed, iteration, number),
    );
    let path = dir.join("fixture.json");
    asr_suite::files::replace(
        &path,
        (serde_json::to_string_pretty(&sidecar)? + "\n").as_bytes(),
    )
    .with_context(|| format!("failed to write {}", path.display()))?;
    Ok(dir)
}

fn print_live(shared: &Shared, started: Instant, live: bool) {
    let judged = shared.judged.load(Ordering::SeqCst);
    let rate = per_second(judged, started.elapsed().as_secs_f64());
    let found: Vec<String> = lock(&shared.tallies)
        .iter()
        .map(|((kind, rule, format), t)| format!("{format} {rule} {kind} {}", t.count))
        .collect();
    let said = format!(
        "fuzz: {judged} sessions ({} skipped), {rate:.0}/s; failures: {}",
        shared.skipped.load(Ordering::SeqCst),
        if found.is_empty() {
            "none".to_owned()
        } else {
            found.join(", ")
        }
    );
    super::show_progress(live, &said);
}

fn print_summary(
    tallies: &BTreeMap<(Kind, String, String), Tally>,
    skips: &BTreeMap<String, u64>,
    (sessions, skipped): (u64, u64),
    seconds: f64,
    args: &Args,
) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    writeln!(
        out,
        "fuzz: {sessions} sessions in {seconds:.1} s ({:.0}/s), seed {}; {skipped} skipped by the producer",
        per_second(sessions, seconds),
        args.seed
    )?;
    if let Some((reason, count)) = skips.iter().max_by_key(|(_, n)| **n) {
        writeln!(
            out,
            "  most often skipped ({count}): {}",
            escape_controls(&brief(reason))
        )?;
    }
    for (kind, heading) in [
        (Kind::Hard, "hard failures"),
        (Kind::Fault, "faults"),
        (
            Kind::NonStrict,
            "non-strict failures (warnings, decisions of the kit)",
        ),
    ] {
        let of_kind: Vec<_> = tallies.iter().filter(|((k, _, _), _)| *k == kind).collect();
        if of_kind.is_empty() {
            writeln!(out, "{heading}: none")?;
            continue;
        }
        writeln!(out, "{heading}:")?;
        for ((_, rule, format), tally) in of_kind {
            writeln!(
                out,
                "  {rule} ({format}), {} session(s): {}",
                tally.count,
                escape_controls(&brief(&tally.example))
            )?;
            for path in &tally.written {
                writeln!(out, "    {}", path.display())?;
            }
        }
    }
    if !tallies.is_empty() {
        writeln!(out, "{}", rerun(args, "producer"))?;
    }
    out.flush()?;
    Ok(())
}
