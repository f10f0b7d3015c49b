//! Driving the adapter over the selected cases, in persistent or one-shot mode: one adapter
//! process (per job) serves every role, every case gets exactly one result, and a case that
//! the kit did not run says why.

use super::{Progress, Settings, blank, from_fault, judged, produced as produced_result};
use crate::adapter::produce::{self, Produced};
use crate::adapter::{self, Fault, Input, Persistent, Stray, Talk, request, supervise};
use asr_suite::case::Case;
use asr_suite::conformance::{CaseResult, Outcome};
use asr_suite::judge::Retention;
use asr_suite::protocol::{ProtocolRole, Reply, STREAMS_BY_PATH};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

/// What driving the adapter gave.
pub(super) struct Driven {
    /// One result per item, in the items' order.
    pub results: Vec<CaseResult>,
    /// The adapter's `started` message.
    pub identity: Option<Reply>,
    /// The adapter failed its handshake: the fault, and what it wrote to stderr.
    pub never_started: Option<(Fault, String)>,
    /// Why some cases were not run, when some were not.
    pub incomplete: Option<String>,
}

/// Persistent mode: `jobs` adapter processes, each started once and restarted after a fault
/// (at most `max_restarts` times in all).
pub(super) fn persistent(
    settings: &Settings<'_>,
    items: &[(ProtocolRole, &Case)],
    progress: &Progress,
    jobs: usize,
    max_restarts: usize,
) -> Driven {
    let first = match Persistent::start(&settings.argv, settings.talk) {
        Ok(started) => started,
        Err((fault, stderr)) => return never_started(items, fault, stderr),
    };
    let identity = first.1.clone();
    let shared = Shared {
        items,
        settings,
        progress,
        identity: &identity,
        next: AtomicUsize::new(0),
        restarts: AtomicUsize::new(0),
        max_restarts,
        gave_up: AtomicBool::new(false),
        results: Mutex::new(vec![None; items.len()]),
    };
    let first = Mutex::new(Some(first.0));
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(items.len()) {
            scope.spawn(|| {
                let adapter = first.lock().ok().and_then(|mut f| f.take());
                shared.work(adapter);
            });
        }
    });
    let gave_up = shared.gave_up.load(Ordering::SeqCst);
    let results = shared.results.into_inner().unwrap_or_default();
    finish(
        items,
        results,
        Some(identity),
        gave_up.then_some(max_restarts),
    )
}

/// One-shot mode: one process per case, after one handshake.
pub(super) fn oneshot(
    settings: &Settings<'_>,
    items: &[(ProtocolRole, &Case)],
    progress: &Progress,
) -> Driven {
    let handshake = [("ASR_CTK_HANDSHAKE", "1".to_owned())];
    let (reply, stderr) = adapter::oneshot(
        &settings.argv,
        &handshake,
        &Input::Bytes(b""),
        settings.handshake(),
    );
    let identity = match reply {
        Ok(reply @ Reply::Started { .. }) => match reply.started_problem() {
            None => reply,
            Some(problem) => return never_started(items, Fault::Protocol(problem), stderr),
        },
        Ok(other) => {
            let fault = Fault::Protocol(format!(
                "the adapter answered the handshake with {}",
                adapter::describe(&other)
            ));
            return never_started(items, fault, stderr);
        }
        Err(fault) => return never_started(items, fault, stderr),
    };
    let mut results = Vec::with_capacity(items.len());
    for (role, case) in items {
        if supervise::interrupted() {
            results.push(None);
            continue;
        }
        let result = if !plays(&identity, *role) {
            not_played(case, *role)
        } else if let Some(fixture) = case
            .fixture
            .as_ref()
            .filter(|_| *role == ProtocolRole::Producer)
        {
            let began = Instant::now();
            let talk = settings.talk_for(*role);
            let (answer, stderr) =
                produce::oneshot(&settings.argv, case, &fixture.sidecar.format, talk);
            let mut result = match answer.and_then(|produced| match produced {
                Produced::Outputs(outputs) => produced_result(case, &outputs),
                Produced::Reply(reply) => judged(case, *role, 0, reply, settings, &identity),
            }) {
                Ok(result) => result,
                Err(fault) => from_fault(case, *role, fault),
            };
            result.millis = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
            result.stderr = (!stderr.is_empty()).then_some(stderr);
            result.capped(asr_suite::conformance::KEPT_BYTES)
        } else if case.streams.len() != 1 {
            blank(
                case,
                *role,
                Outcome::Skipped,
                "not run by the kit: a case of several streams needs persistent mode",
            )
        } else {
            let env = [
                ("ASR_CTK_ROLE", role.as_str().to_owned()),
                ("ASR_CTK_CASE", case.name.clone()),
                ("ASR_CTK_CASE_ID", case.sidecar.id.clone()),
                ("ASR_CTK_RULES", case.sidecar.rules.join(",")),
            ];
            let began = Instant::now();
            let input = Input::File(&case.streams[0].1);
            let retention = Retention::new(case, &settings.strictness(&identity));
            let talk = Talk {
                retention: Some(&retention),
                ..settings.talk_for(*role)
            };
            let (answer, stderr) = adapter::oneshot(&settings.argv, &env, &input, talk);
            let mut result =
                match answer.and_then(|reply| judged(case, *role, 0, reply, settings, &identity)) {
                    Ok(result) => kept(result, &retention),
                    Err(fault) => from_fault(case, *role, fault),
                };
            result.millis = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
            result.stderr = (!stderr.is_empty()).then_some(stderr);
            result.capped(asr_suite::conformance::KEPT_BYTES)
        };
        progress.record(&result);
        results.push(Some(result));
    }
    finish(items, results, Some(identity), None)
}

/// What the workers of persistent mode share.
struct Shared<'a, 'b> {
    items: &'a [(ProtocolRole, &'a Case)],
    settings: &'a Settings<'b>,
    progress: &'a Progress,
    identity: &'a Reply,
    next: AtomicUsize,
    restarts: AtomicUsize,
    max_restarts: usize,
    gave_up: AtomicBool,
    results: Mutex<Vec<Option<CaseResult>>>,
}

impl Shared<'_, '_> {
    /// One worker: takes the next case until none is left, the run is interrupted or the
    /// restarts are used up.
    fn work(&self, mut adapter: Option<Persistent>) {
        let mut started_once = adapter.is_some();
        loop {
            if supervise::interrupted() || self.gave_up.load(Ordering::SeqCst) {
                break;
            }
            let index = self.next.fetch_add(1, Ordering::SeqCst);
            let Some((role, case)) = self.items.get(index) else {
                break;
            };
            if !plays(self.identity, *role) {
                self.store(index, not_played(case, *role));
                continue;
            }
            if adapter.is_none() {
                if started_once && self.restarts.fetch_add(1, Ordering::SeqCst) >= self.max_restarts
                {
                    self.gave_up.store(true, Ordering::SeqCst);
                    // Handed back: finish() records it as not run, with the others.
                    break;
                }
                started_once = true;
                match Persistent::start(&self.settings.argv, self.settings.talk) {
                    Ok((started, _)) => adapter = Some(started),
                    Err((fault, stderr)) => {
                        let mut result = from_fault(case, *role, fault);
                        result.detail = result
                            .detail
                            .map(|d| format!("the adapter did not restart: {d}"));
                        result.stderr = (!stderr.is_empty()).then_some(stderr);
                        self.store(index, result.capped(asr_suite::conformance::KEPT_BYTES));
                        continue;
                    }
                }
            }
            let Some(running) = adapter.as_mut() else {
                continue;
            };
            let result = self.case(running, index, *role, case);
            let strays = running.take_strays();
            let faulted = matches!(
                result.outcome,
                Outcome::Timeout | Outcome::Crash | Outcome::ProtocolError | Outcome::NotRun
            );
            if faulted {
                // The adapter's state is unknown after a fault: end it; the next case
                // restarts it.
                adapter = None;
            }
            self.store(index, result);
            self.blame(strays);
        }
        if let Some(adapter) = adapter.take() {
            self.blame(adapter.stop());
        }
    }

    /// Runs one case on a running adapter.
    fn case(
        &self,
        running: &mut Persistent,
        index: usize,
        role: ProtocolRole,
        case: &Case,
    ) -> CaseResult {
        let seq = index as u64 + 1;
        let by_path = matches!(self.identity, Reply::Started { capabilities, .. }
            if capabilities.iter().any(|c| c == STREAMS_BY_PATH));
        let request = match request(case, seq, role, by_path) {
            Ok(request) => request,
            Err(e) => {
                return blank(
                    case,
                    role,
                    Outcome::Error,
                    format!("the kit could not read the case: {e}"),
                );
            }
        };
        let began = Instant::now();
        let retention = Retention::new(case, &self.settings.strictness(self.identity));
        let talk = Talk {
            retention: Some(&retention),
            ..self.settings.talk_for(role)
        };
        let answer = running.ask(&request, talk);
        let millis = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
        let stderr = running.stderr();
        let mut result = match answer
            .and_then(|reply| judged(case, role, seq, reply, self.settings, self.identity))
        {
            Ok(result) => kept(result, &retention),
            Err(fault) => from_fault(case, role, fault),
        };
        result.millis = millis;
        result.stderr = (!stderr.is_empty()).then_some(stderr);
        result.capped(asr_suite::conformance::KEPT_BYTES)
    }

    fn store(&self, index: usize, result: CaseResult) {
        self.progress.record(&result);
        if let Ok(mut all) = self.results.lock() {
            all[index] = Some(result);
        }
    }

    /// A case answered twice broke the protocol, whatever its first answer was.
    fn blame(&self, strays: Vec<Stray>) {
        for stray in strays {
            let Some(index) = usize::try_from(stray.seq)
                .ok()
                .and_then(|seq| seq.checked_sub(1))
            else {
                continue;
            };
            let Ok(mut all) = self.results.lock() else {
                return;
            };
            if let Some(Some(result)) = all.get_mut(index) {
                if result.outcome == Outcome::ProtocolError {
                    continue;
                }
                let first = result.detail.take().map_or_else(
                    || format!("its first answer was judged {}", result.outcome.as_str()),
                    |d| {
                        format!(
                            "its first answer was judged {}: {d}",
                            result.outcome.as_str()
                        )
                    },
                );
                result.outcome = Outcome::ProtocolError;
                result.detail = Some(format!("{}; {first}", stray.what));
                result.cap(asr_suite::conformance::KEPT_BYTES);
                self.progress.amended(result);
            }
        }
    }
}

/// A judged result, saying how many findings of its answer were not kept.
fn kept(mut result: CaseResult, retention: &Retention) -> CaseResult {
    result.findings_not_kept = retention.not_kept();
    result
}

/// Whether the adapter said it plays `role`.
fn plays(identity: &Reply, role: ProtocolRole) -> bool {
    matches!(identity, Reply::Started { roles, .. } if roles.contains(&role))
}

fn not_played(case: &Case, role: ProtocolRole) -> CaseResult {
    blank(
        case,
        role,
        Outcome::Skipped,
        format!("the adapter does not play the {} role", role.as_str()),
    )
}

/// Every case not run, after a handshake that failed.
fn never_started(items: &[(ProtocolRole, &Case)], fault: Fault, stderr: String) -> Driven {
    let results = items
        .iter()
        .map(|(role, case)| {
            blank(
                case,
                *role,
                Outcome::NotRun,
                format!("not run: the adapter did not start: {fault}"),
            )
            .capped(asr_suite::conformance::KEPT_BYTES)
        })
        .collect();
    Driven {
        results,
        identity: None,
        incomplete: Some(format!("the adapter did not start: {fault}")),
        never_started: Some((fault, stderr)),
    }
}

/// Fills in the cases not run, and says why they were not.
fn finish(
    items: &[(ProtocolRole, &Case)],
    results: Vec<Option<CaseResult>>,
    identity: Option<Reply>,
    gave_up_after: Option<usize>,
) -> Driven {
    let why = if supervise::interrupted() {
        "the run was interrupted".to_owned()
    } else if let Some(max) = gave_up_after {
        format!("the adapter was restarted {max} times (--max-restarts)")
    } else {
        "the run ended before it".to_owned()
    };
    let results: Vec<CaseResult> = results
        .into_iter()
        .zip(items)
        .map(|(result, (role, case))| {
            result.unwrap_or_else(|| blank(case, *role, Outcome::NotRun, format!("not run: {why}")))
        })
        .collect();
    // Cases the workers began but did not finish are not-run only when the run was
    // interrupted: `why` says so then too.
    let not_run = results
        .iter()
        .filter(|r| r.outcome == Outcome::NotRun)
        .count();
    Driven {
        results,
        identity,
        never_started: None,
        incomplete: (not_run > 0).then(|| format!("{not_run} case(s) not run: {why}")),
    }
}
