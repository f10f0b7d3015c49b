//! One implementation behind the persistent protocol that outlives its faults: `diff` and
//! `fuzz` ask it case after case, and a crash, hang or protocol error costs one answer, not
//! the run (it is started again for the next case).

use super::{Fault, Input, Persistent, Talk, describe, oneshot};
use crate::exit;
use asr_suite::protocol::{
    CaseReply, CaseRequest, PIPELINED, Reply, STREAMS_BY_PATH, StreamAnswer, check_case_reply,
};
use asr_suite::render::escape_controls;
use std::path::Path;

/// A case sent to a pipelined adapter, to wait for its answer with.
#[derive(Debug, Clone, Copy)]
pub struct Sent {
    /// Its number among the requests sent to that process.
    number: u64,
    /// Which start of the adapter it was sent to; 0 when the process did not take it.
    start: u64,
}

impl Sent {
    /// The process took it: no case sent after it need wait for a new one.
    pub fn taken(&self) -> bool {
        self.start != 0
    }
}

/// What an adapter answered to a case.
#[derive(Debug)]
pub enum Answer {
    /// Its answer for each stream.
    Streams(Vec<StreamAnswer>),
    /// It declined the case, with its reason.
    Skipped(String),
}

/// An implementation, started again after a fault.
pub struct Side {
    argv: Vec<String>,
    pub running: Option<Persistent>,
    /// How many times it was started: a case sent to an earlier process is sent again.
    starts: u64,
    /// What it said when it started.
    pub identity: Reply,
}

impl Side {
    /// Starts the adapter; when it does not start, says why on stderr (with what it wrote
    /// there) and returns the exit status for a harness failure.
    pub fn start(argv: &[String], talk: Talk<'_>) -> Result<Side, u8> {
        match Persistent::start(argv, talk) {
            Ok((running, identity)) => Ok(Side {
                argv: argv.to_vec(),
                running: Some(running),
                starts: 1,
                identity,
            }),
            Err((fault, stderr)) => Err(did_not_start(argv, &fault.to_string(), &stderr)),
        }
    }

    /// It reads streams from their paths: requests carry no data.
    pub fn by_path(&self) -> bool {
        matches!(&self.identity, Reply::Started { capabilities, .. }
            if capabilities.iter().any(|c| c == STREAMS_BY_PATH))
    }

    /// Its name and version, as it gave them, else its command.
    pub fn name(&self) -> String {
        name_of(&self.identity, &self.argv)
    }

    /// It declared [`PIPELINED`]: cases may be sent before earlier ones are answered.
    pub fn pipelined(&self) -> bool {
        matches!(&self.identity, Reply::Started { capabilities, .. }
            if capabilities.iter().any(|c| c == PIPELINED))
    }

    /// Asks the adapter, restarting it first when a fault ended it.
    pub fn ask(&mut self, request: &CaseRequest, talk: Talk<'_>) -> Result<Answer, String> {
        let running = self.running(talk)?;
        let reply = running.ask(request, talk);
        self.judge(reply, request)
    }

    /// Sends a case to a [`pipelined`](Side::pipelined) adapter without waiting for its
    /// answer, restarting the adapter first when a fault ended it; [`Side::receive`] waits
    /// for it, cases in the order they were sent. A case the process did not take (it had
    /// ended) is asked again, alone, at its turn: the fault is the case's it was answering
    /// when it ended.
    pub fn send(&mut self, request: &CaseRequest, talk: Talk<'_>) -> Result<Sent, String> {
        let running = self.running(talk)?;
        if let Ok(number) = running.send_case(request, talk) {
            return Ok(Sent {
                number,
                start: self.starts,
            });
        }
        // The process stays: the answers it wrote to the cases before are still read, and
        // the fault shows at the case it was answering.
        Ok(Sent {
            number: 0,
            start: 0,
        })
    }

    /// The answer to a case sent with [`Side::send`]. When the process it was sent to has
    /// since ended (a fault of an earlier case), it is asked again, alone.
    pub fn receive(
        &mut self,
        request: &CaseRequest,
        sent: Sent,
        talk: Talk<'_>,
    ) -> Result<Answer, String> {
        let current = self.running.is_some() && sent.start == self.starts;
        let Some(running) = self.running.as_mut().filter(|_| current) else {
            return self.ask(request, talk);
        };
        let reply = running.answer(request.seq, sent.number, talk);
        self.judge(reply, request)
    }

    /// The running process, started again when a fault ended the last one.
    fn running(&mut self, talk: Talk<'_>) -> Result<&mut Persistent, String> {
        if self.running.is_none() {
            match Persistent::start(&self.argv, talk) {
                Ok((running, _)) => {
                    self.running = Some(running);
                    self.starts += 1;
                }
                Err((fault, _)) => return Err(format!("did not restart: {fault}")),
            }
        }
        self.running.as_mut().ok_or_else(|| "no adapter".to_owned())
    }

    /// The answer a reply gives; a fault ends the process.
    fn judge(
        &mut self,
        reply: Result<Reply, Fault>,
        request: &CaseRequest,
    ) -> Result<Answer, String> {
        match reply {
            Ok(reply) => answer(reply, request, request.seq),
            Err(fault) => {
                self.running = None;
                Err(fault.to_string())
            }
        }
    }

    /// Ends the adapter, if it runs.
    pub fn stop(&mut self) {
        if let Some(running) = self.running.take() {
            running.stop();
        }
    }
}

/// An implementation in one-shot mode: a process of its own for each stream, the stream on
/// its stdin (PROTOCOL.md, "One-shot mode").
pub struct OneShotSide {
    argv: Vec<String>,
    /// What it said to the handshake.
    pub identity: Reply,
}

impl OneShotSide {
    /// Runs the handshake; when it fails, says why on stderr and returns the exit status for
    /// a harness failure.
    pub fn start(argv: &[String], talk: Talk<'_>) -> Result<OneShotSide, u8> {
        let handshake = [("ASR_CTK_HANDSHAKE", "1".to_owned())];
        let (reply, stderr) = oneshot(argv, &handshake, &Input::Bytes(b""), talk);
        let fault = match reply {
            Ok(identity @ Reply::Started { .. }) => {
                return Ok(OneShotSide {
                    argv: argv.to_vec(),
                    identity,
                });
            }
            Ok(other) => format!("it answered the handshake with {}", describe(&other)),
            Err(fault) => fault.to_string(),
        };
        Err(did_not_start(argv, &fault, &stderr))
    }

    /// Its name and version, as it gave them, else its command.
    pub fn name(&self) -> String {
        name_of(&self.identity, &self.argv)
    }

    /// Runs it on the one stream of `request`, read from `path`.
    pub fn ask(
        &self,
        request: &CaseRequest,
        path: &Path,
        talk: Talk<'_>,
    ) -> Result<Answer, String> {
        let env = [
            ("ASR_CTK_ROLE", request.role.as_str().to_owned()),
            ("ASR_CTK_CASE", request.case.clone()),
            ("ASR_CTK_CASE_ID", request.id.clone()),
            ("ASR_CTK_RULES", request.rules.join(",")),
        ];
        let (reply, _) = oneshot(&self.argv, &env, &Input::File(path), talk);
        match reply {
            // One-shot: the reply may leave its seq out (it reads as 0), and must not echo
            // another.
            Ok(reply) => answer(reply, request, 0),
            Err(fault) => Err(fault.to_string()),
        }
    }
}

/// A reply to `request`, checked as `run` checks one ([`check_case_reply`]): a reply
/// `diff` and `fuzz` compare is one `run` would judge.
fn answer(reply: Reply, request: &CaseRequest, seq: u64) -> Result<Answer, String> {
    match check_case_reply(reply, seq, request.role, request.streams.len()) {
        Ok(CaseReply::Streams(streams)) => Ok(Answer::Streams(streams)),
        Ok(CaseReply::Skipped { reason, .. }) => Ok(Answer::Skipped(reason)),
        Ok(CaseReply::Error(message)) => Err(format!("error: {message}")),
        Ok(CaseReply::Outputs(_)) => Err(format!(
            "protocol error: the answer to a {} case has `outputs`, which only a producer's has",
            request.role.as_str()
        )),
        Err(why) => Err(format!("protocol error: {why}")),
    }
}

/// An implementation's name and version, as it gave them, else its command.
fn name_of(identity: &Reply, argv: &[String]) -> String {
    match identity {
        Reply::Started { implementation, .. } => {
            format!("{} {}", implementation.name, implementation.version)
        }
        _ => argv.join(" "),
    }
}

/// Says on stderr why an adapter did not start, with what it wrote there; the exit status
/// of a harness failure.
fn did_not_start(argv: &[String], fault: &str, stderr: &str) -> u8 {
    eprintln!(
        "asr-ctk: `{}` did not start: {}",
        escape_controls(&argv.join(" ")),
        escape_controls(fault)
    );
    if !stderr.trim().is_empty() {
        eprintln!(
            "asr-ctk: what it wrote to stderr:\n{}",
            escape_controls(stderr.trim_end())
        );
    }
    exit::HARNESS
}
