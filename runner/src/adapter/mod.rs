//! Driving an adapter process: persistent (one process, newline-delimited JSON) or one-shot
//! (one process per case). Every wait has a deadline, every read a bound, writing to an
//! adapter never blocks the loop that keeps the deadlines, and every process is supervised
//! ([`supervise`]), so that nothing the adapter starts outlives it.

pub mod command;
pub mod produce;
pub mod request;
pub mod requests;
pub mod schema;
pub mod side;
pub mod supervise;
pub mod timeouts;

pub use command::{adapter_command, reference_command};
pub use request::request;

use asr_suite::judge::Retention;
use asr_suite::protocol::{CaseRequest, Kit, PROTOCOL_VERSION, Reply, Request, reply_keeping};
use requests::Requests;
use schema::SchemaCheck;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};
use supervise::Supervised;

/// The most stderr kept for one case (its end).
pub const STDERR_KEPT: usize = 16 << 10;

/// Replies read but not yet asked for that the kit holds at most; an adapter that writes more
/// is flooding its output.
const MAX_QUEUED_REPLIES: usize = 64;

/// How often a wait looks at the adapter process and at the interrupt flag.
const POLL: Duration = Duration::from_millis(20);

/// How long the kit still reads after the adapter process has exited, for a reply that was
/// written just before it exited.
const LAST_WORDS: Duration = Duration::from_millis(200);

/// What went wrong with an adapter, as opposed to what it answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// No answer in time.
    Timeout(String),
    /// The process died or closed its stdout.
    Crash(String),
    /// The answer broke the protocol.
    Protocol(String),
    /// The run was interrupted before the answer came.
    Interrupted,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::Timeout(d) => write!(f, "timeout: {d}"),
            Fault::Crash(d) => write!(f, "crash: {d}"),
            Fault::Protocol(d) => write!(f, "protocol error: {d}"),
            Fault::Interrupted => f.write_str("interrupted"),
        }
    }
}

/// How an adapter is talked to.
#[derive(Clone, Copy)]
pub struct Talk<'a> {
    /// How long to wait for each answer.
    pub timeout: Duration,
    /// How long to wait for `started`.
    pub start_timeout: Duration,
    /// The longest reply line read; a longer one is a protocol error.
    pub max_reply_bytes: usize,
    /// The schema check of replies (and, with `--validate-protocol`, of requests).
    pub check: &'a SchemaCheck,
    /// Which findings of an answer to keep (the rest are counted there), when the answer is
    /// to be judged; without it every finding is kept.
    pub retention: Option<&'a Retention>,
}

/// A second reply to a case already answered: the case it belongs to is blamed for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stray {
    /// The seq of the case that got two answers.
    pub seq: u64,
    /// What came, in words.
    pub what: String,
}

/// A running persistent adapter.
pub struct Persistent {
    process: Supervised,
    /// Boxed: an adapter is held in enums beside smaller variants.
    requests: Box<Requests>,
    /// Messages sent so far.
    sent: u64,
    /// Messages written whole (the writer also counts those begun, for the reader: a reply
    /// read before its request began to be written cannot be its answer).
    written: Arc<AtomicU64>,
    from_adapter: Receiver<FromAdapter>,
    queued: Arc<AtomicUsize>,
    stderr: Arc<Mutex<Tail>>,
    last_case: Option<u64>,
    strays: Vec<Stray>,
    max_reply_bytes: usize,
}

enum FromAdapter {
    /// A line, and how many requests had begun to be written when it was read.
    Line {
        bytes: Vec<u8>,
        after: u64,
    },
    TooLong,
    Flood,
    End,
}

impl Persistent {
    /// Starts the adapter and does the `start` handshake. A failure comes with what the
    /// adapter wrote to stderr.
    pub fn start(argv: &[String], talk: Talk<'_>) -> Result<(Self, Reply), (Fault, String)> {
        let mut command = piped(argv);
        let mut process = supervise::spawn(&mut command)
            .map_err(|e| (Fault::Crash(not_started(argv, &e)), String::new()))?;
        let child = &mut process.child;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err((Fault::Crash("no standard streams".into()), String::new()));
        };
        let begun = Arc::new(AtomicU64::new(0));
        let written = Arc::new(AtomicU64::new(0));
        let requests =
            Requests::new(stdin, Arc::clone(&begun), Arc::clone(&written)).map_err(|e| {
                let message = format!("failed to make the adapter's stdin non-blocking: {e}");
                (Fault::Crash(message), String::new())
            })?;
        let queued = Arc::new(AtomicUsize::new(0));
        let (replies, from_adapter) = channel::<FromAdapter>();
        {
            let (begun, queued) = (Arc::clone(&begun), Arc::clone(&queued));
            let max = talk.max_reply_bytes;
            thread::spawn(move || read_replies(stdout, &replies, &begun, &queued, max));
        }
        let tail = Arc::new(Mutex::new(Tail::default()));
        let sink = Arc::clone(&tail);
        thread::spawn(move || read_stderr(stderr, &sink));
        let mut adapter = Persistent {
            process,
            requests: Box::new(requests),
            sent: 0,
            written,
            from_adapter,
            queued,
            stderr: tail,
            last_case: None,
            strays: Vec::new(),
            max_reply_bytes: talk.max_reply_bytes,
        };
        let start = Request::Start {
            protocol: PROTOCOL_VERSION,
            kit: kit(),
        };
        let handshake = Talk {
            timeout: talk.start_timeout,
            ..talk
        };
        let fault = match adapter.exchange(&start, handshake) {
            Ok(reply @ Reply::Started { protocol, .. }) if protocol == PROTOCOL_VERSION => {
                match reply.started_problem() {
                    None => return Ok((adapter, reply)),
                    Some(problem) => Fault::Protocol(problem),
                }
            }
            Ok(Reply::Started { protocol, .. }) => Fault::Protocol(format!(
                "the adapter speaks protocol {protocol}; the kit speaks {PROTOCOL_VERSION}"
            )),
            Ok(other) => Fault::Protocol(format!(
                "the adapter answered start with {}",
                describe(&other)
            )),
            Err(Fault::Timeout(_)) => Fault::Timeout(format!(
                "the adapter did not answer start within {} s",
                talk.start_timeout.as_secs_f64()
            )),
            Err(other) => other,
        };
        Err((fault, adapter.last_stderr()))
    }

    /// Everything the adapter wrote to stderr (its end), once it has ended: for a start that
    /// failed, where the reason usually is.
    fn last_stderr(mut self) -> String {
        self.requests.close();
        self.process.end();
        let deadline = Instant::now() + Duration::from_millis(500);
        while Instant::now() < deadline {
            if self.stderr.lock().is_ok_and(|t| t.ended) {
                break;
            }
            thread::sleep(Duration::from_millis(5));
        }
        self.stderr()
    }

    /// Sends one case and waits for its answer.
    pub fn ask(&mut self, request: &CaseRequest, talk: Talk<'_>) -> Result<Reply, Fault> {
        self.stderr_clear();
        let reply = self.exchange(&Request::Case(request.clone()), talk);
        self.last_case = Some(request.seq);
        reply
    }

    /// The second replies to earlier cases seen so far, each blamed on the case it echoes.
    pub fn take_strays(&mut self) -> Vec<Stray> {
        std::mem::take(&mut self.strays)
    }

    /// Sends a case without waiting for its answer: the adapter declared
    /// [`PIPELINED`](asr_suite::protocol::PIPELINED). Gives the number to wait for it with
    /// ([`Persistent::answer`]); answers are waited for in the order the cases were sent.
    pub fn send_case(&mut self, request: &CaseRequest, talk: Talk<'_>) -> Result<u64, Fault> {
        self.send(&Request::Case(request.clone()), talk)
    }

    /// Waits for the answer to the case sent as `number` (by [`Persistent::send_case`]),
    /// the earlier ones having been answered; its timeout runs from now.
    pub fn answer(&mut self, seq: u64, number: u64, talk: Talk<'_>) -> Result<Reply, Fault> {
        let reply = self.receive(number, talk);
        self.last_case = Some(seq);
        reply
    }

    fn exchange(&mut self, request: &Request, talk: Talk<'_>) -> Result<Reply, Fault> {
        let number = self.send(request, talk)?;
        self.receive(number, talk)
    }

    /// Sends a request; gives its number.
    fn send(&mut self, request: &Request, talk: Talk<'_>) -> Result<u64, Fault> {
        let mut line = if talk.check.checks_requests() {
            let value = serde_json::to_value(request)
                .map_err(|e| Fault::Protocol(format!("failed to encode a request: {e}")))?;
            let problems = talk.check.request(&value);
            assert!(
                problems.is_empty(),
                "the kit sent a request its own schema refuses: {problems:?}"
            );
            serde_json::to_vec(&value)
        } else {
            serde_json::to_vec(request)
        }
        .map_err(|e| Fault::Protocol(format!("failed to encode a request: {e}")))?;
        line.push(b'\n');
        if !self.requests.send(line) {
            return Err(Fault::Crash(
                self.exit_description("the adapter closed its stdin"),
            ));
        }
        self.sent += 1;
        Ok(self.sent)
    }

    /// Waits for the reply to the request sent as `number`.
    fn receive(&mut self, number: u64, talk: Talk<'_>) -> Result<Reply, Fault> {
        let mut deadline = Instant::now() + talk.timeout;
        let mut exited: Option<ExitStatus> = None;
        loop {
            if supervise::interrupted() {
                return Err(Fault::Interrupted);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(match exited {
                    Some(status) => Fault::Crash(format!(
                        "the adapter exited with {status} without answering"
                    )),
                    None if self.written.load(Ordering::SeqCst) < number => {
                        Fault::Timeout(format!(
                            "the adapter did not read its request within {} s (it is not reading its input)",
                            talk.timeout.as_secs_f64()
                        ))
                    }
                    None => {
                        Fault::Timeout(format!("no answer within {} s", talk.timeout.as_secs_f64()))
                    }
                });
            }
            match self.from_adapter.recv_timeout(POLL.min(deadline - now)) {
                Ok(FromAdapter::Line { bytes, after }) => {
                    self.queued.fetch_sub(1, Ordering::SeqCst);
                    let reply = parse_reply(&bytes, talk);
                    if let (Ok(r), Some(last)) = (&reply, self.last_case) {
                        if r.seq() == Some(last) {
                            self.strays.push(Stray {
                                seq: last,
                                what: format!(
                                    "the case was answered twice: {} came after its answer",
                                    describe(r)
                                ),
                            });
                            continue;
                        }
                    }
                    if after < number {
                        return Err(Fault::Protocol(format!(
                            "the adapter wrote a reply before it was sent the request (an answer must follow its request): {}",
                            preview(&bytes)
                        )));
                    }
                    return reply;
                }
                Ok(FromAdapter::TooLong) => {
                    return Err(Fault::Protocol(too_long(self.max_reply_bytes)));
                }
                Ok(FromAdapter::Flood) => {
                    return Err(Fault::Protocol(format!(
                        "the adapter wrote more than {MAX_QUEUED_REPLIES} replies it was not asked for"
                    )));
                }
                Ok(FromAdapter::End) | Err(RecvTimeoutError::Disconnected) => {
                    return Err(Fault::Crash(self.exit_description(
                        "the adapter ended its output without answering",
                    )));
                }
                Err(RecvTimeoutError::Timeout) => {
                    // An adapter that exited while something it started holds its stdout
                    // open has crashed: it is not waited for until the timeout.
                    if exited.is_none() {
                        if let Some(status) = self.process.exited() {
                            exited = Some(status);
                            deadline = deadline.min(Instant::now() + LAST_WORDS);
                        }
                    }
                }
            }
        }
    }

    /// What the adapter wrote to stderr since the last case began.
    pub fn stderr(&self) -> String {
        self.stderr.lock().map(|t| t.text()).unwrap_or_default()
    }

    fn stderr_clear(&self) {
        if let Ok(mut tail) = self.stderr.lock() {
            tail.clear();
        }
    }

    fn exit_description(&mut self, what: &str) -> String {
        // Give a dying process a moment to be reaped, so its status can be told.
        match self
            .process
            .wait_until(Instant::now() + Duration::from_millis(100))
        {
            Some(status) => format!("{what}: it exited with {status}"),
            None => what.to_owned(),
        }
    }

    /// Sends `stop` and gives the adapter a moment to exit; it is ended with everything it
    /// started when dropped. Returns the second replies seen until then.
    pub fn stop(mut self) -> Vec<Stray> {
        self.requests.send(b"{\"type\":\"stop\"}\n".to_vec());
        self.requests.close();
        let deadline = Instant::now() + Duration::from_millis(500);
        while Instant::now() < deadline && !supervise::interrupted() {
            match self.from_adapter.recv_timeout(POLL) {
                Ok(FromAdapter::Line { bytes, .. }) => {
                    if let (Ok(reply), Some(last)) =
                        (serde_json::from_slice::<Reply>(&bytes), self.last_case)
                    {
                        if reply.seq() == Some(last) {
                            self.strays.push(Stray {
                                seq: last,
                                what: format!(
                                    "the case was answered twice: {} came after its answer",
                                    describe(&reply)
                                ),
                            });
                        }
                    }
                }
                Ok(FromAdapter::End | FromAdapter::TooLong | FromAdapter::Flood)
                | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    if self.process.exited().is_some() {
                        break;
                    }
                }
            }
        }
        self.take_strays()
    }
}

/// What one-shot mode feeds the adapter on stdin.
pub enum Input<'a> {
    /// These bytes.
    Bytes(&'a [u8]),
    /// The bytes of this file, copied as the adapter reads them.
    File(&'a Path),
}

/// Runs a one-shot adapter on one stream.
pub fn oneshot(
    argv: &[String],
    env: &[(&str, String)],
    input: &Input<'_>,
    talk: Talk<'_>,
) -> (Result<Reply, Fault>, String) {
    let (output, stderr) = oneshot_output(argv, env, input, talk);
    let result = output.and_then(|output| {
        if output.bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(Fault::Crash(format!("{} without answering", output.exit)));
        }
        let text = output.bytes.strip_suffix(b"\n").unwrap_or(&output.bytes);
        if text.contains(&b'\n') {
            Err(Fault::Protocol("the answer is more than one line".into()))
        } else {
            parse_reply(text, talk)
        }
    });
    (result, stderr)
}

/// What a one-shot process wrote to stdout, and how it ended, in words.
pub struct OneshotOutput {
    /// Its stdout, at most `--max-reply-bytes`.
    pub bytes: Vec<u8>,
    /// `exited with ...` or `before it exited`.
    pub exit: String,
}

/// Parses one reply line, checked against the protocol schemas.
pub fn reply_line(bytes: &[u8], talk: Talk<'_>) -> Result<Reply, Fault> {
    parse_reply(bytes, talk)
}

/// Why an adapter did not start, in words. Executing a directory fails with "Permission
/// denied", which sends one looking at file modes: the directory is named as such instead.
fn not_started(argv: &[String], error: &std::io::Error) -> String {
    let line = argv.join(" ");
    // A name without a slash is looked up on PATH, not in the working directory.
    match argv.first() {
        Some(program) if program.contains('/') && Path::new(program).is_dir() => {
            format!("failed to start `{line}`: {program} is a directory, not a program")
        }
        _ => format!("failed to start `{line}`: {error}"),
    }
}

/// Runs a one-shot process to its end (or the timeout) and gives its stdout.
pub fn oneshot_output(
    argv: &[String],
    env: &[(&str, String)],
    input: &Input<'_>,
    talk: Talk<'_>,
) -> (Result<OneshotOutput, Fault>, String) {
    let mut command = piped(argv);
    command.env("ASR_CTK_PROTOCOL", PROTOCOL_VERSION.to_string());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut process = match supervise::spawn(&mut command) {
        Ok(process) => process,
        Err(e) => return (Err(Fault::Crash(not_started(argv, &e))), String::new()),
    };
    let child = &mut process.child;
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return (
            Err(Fault::Crash("no standard streams".into())),
            String::new(),
        );
    };
    match input {
        Input::Bytes(bytes) => {
            let bytes = bytes.to_vec();
            thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            });
        }
        Input::File(path) => {
            let file = std::fs::File::open(path);
            thread::spawn(move || {
                if let Ok(mut file) = file {
                    let _ = std::io::copy(&mut file, &mut stdin);
                }
            });
        }
    }
    let max = talk.max_reply_bytes;
    let (done, output) = channel::<std::io::Result<Vec<u8>>>();
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let read = stdout.take(max as u64 + 1).read_to_end(&mut bytes);
        let _ = done.send(read.map(|_| bytes));
    });
    let tail = Arc::new(Mutex::new(Tail::default()));
    let sink = Arc::clone(&tail);
    thread::spawn(move || read_stderr(stderr, &sink));
    let stderr_text = || tail.lock().map(|t| t.text()).unwrap_or_default();
    let deadline = Instant::now() + talk.timeout;
    let mut status = None;
    let read = loop {
        if supervise::interrupted() {
            process.end();
            return (Err(Fault::Interrupted), stderr_text());
        }
        let now = Instant::now();
        if now >= deadline {
            process.end();
            return (
                Err(Fault::Timeout(format!(
                    "no answer within {} s",
                    talk.timeout.as_secs_f64()
                ))),
                stderr_text(),
            );
        }
        match output.recv_timeout(POLL.min(deadline - now)) {
            Ok(read) => break read,
            Err(RecvTimeoutError::Disconnected) => {
                break Err(std::io::Error::other("the output reader stopped"));
            }
            Err(RecvTimeoutError::Timeout) => {
                if let Some(exit) = process.exited() {
                    // The adapter is done: what it started may still hold its stdout open.
                    // Ending them closes it, and the answer already written is read whole.
                    status = Some(exit);
                    process.end();
                    break output
                        .recv_timeout(Duration::from_secs(1))
                        .unwrap_or_else(|_| Err(std::io::Error::other("its output stayed open")));
                }
            }
        }
    };
    let status = status.or_else(|| process.wait_until(Instant::now() + LAST_WORDS));
    process.end();
    let exit = status.map_or_else(
        || "before it exited".to_owned(),
        |s| format!("exited with {s}"),
    );
    let bytes = match read {
        Ok(bytes) => bytes,
        Err(e) => {
            let fault = Fault::Crash(format!("{exit}; its output could not be read: {e}"));
            return (Err(fault), stderr_text());
        }
    };
    let result = if bytes.len() > talk.max_reply_bytes {
        Err(Fault::Protocol(too_long(talk.max_reply_bytes)))
    } else {
        Ok(OneshotOutput { bytes, exit })
    };
    (result, stderr_text())
}

/// The adapter command with its standard streams piped, in a process group of its own.
fn piped(argv: &[String]) -> Command {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    command
}

/// An answer over the reply bound, and what to raise: a reader's reading holds the text of
/// the stream's messages, so a valid stream of hundreds of megabytes has a reading as long.
fn too_long(max: usize) -> String {
    format!(
        "the answer is longer than {max} bytes without a newline, the most the kit reads of one reply: raise --max-reply-bytes (a reader's reading holds the text of the stream's messages)"
    )
}

fn kit() -> Kit {
    Kit {
        name: "asr-ctk".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    }
}

/// Parses one reply line, checked against the reply schema unless it is too long for a tree
/// of it (without `--validate-protocol`), keeping of its findings what `talk.retention` keeps.
fn parse_reply(bytes: &[u8], talk: Talk<'_>) -> Result<Reply, Fault> {
    let not_json = |e: serde_json::Error| {
        Fault::Protocol(format!("the answer is not JSON ({e}): {}", preview(bytes)))
    };
    let not_a_reply = |e: serde_json::Error| {
        Fault::Protocol(format!(
            "the answer is not a valid reply: {e}: {}",
            preview(bytes)
        ))
    };
    // The schema checks a tree of the whole reply: a reply this short can pay for one.
    let value = if talk.check.checks_reply(bytes.len()) {
        let value: serde_json::Value = serde_json::from_slice(bytes).map_err(not_json)?;
        let problems = talk.check.reply(&value);
        if !problems.is_empty() {
            return Err(Fault::Protocol(format!(
                "the answer breaks the reply schema: {}",
                problems.join("; ")
            )));
        }
        Some(value)
    } else {
        None
    };
    let Some(retention) = talk.retention else {
        let value = match value {
            Some(value) => value,
            None => serde_json::from_slice(bytes).map_err(not_json)?,
        };
        return serde_json::from_value(value)
            .map(Reply::bounded)
            .map_err(not_a_reply);
    };
    drop(value);
    let mut keeper = retention.keeper();
    let kept = reply_keeping(bytes, &mut |stream, finding| keeper.keeps(stream, finding)).map_err(
        |e| {
            if e.is_data() {
                not_a_reply(e)
            } else {
                not_json(e)
            }
        },
    )?;
    retention.set_not_kept(kept.not_kept);
    // Cut here, where every reply comes in, so that no report and no console line gets
    // more of a name or a link than the bound.
    Ok(kept.reply.bounded())
}

fn preview(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
    if bytes.len() > 200 {
        format!("{text}...")
    } else {
        text
    }
}

/// A short name for a reply, in messages.
pub fn describe(reply: &Reply) -> &'static str {
    match reply {
        Reply::Started { .. } => "`started`",
        Reply::Answered { .. } => "`answered`",
        Reply::Skipped { .. } => "`skipped`",
        Reply::Error { .. } => "`error`",
        Reply::Stopped => "`stopped`",
    }
}

/// Reads reply lines, each tagged with the requests begun when it was read, stopping at the
/// first one over the bound or when too many are queued: the adapter is ended then, so the
/// rest of a flood is never read.
fn read_replies(
    stdout: std::process::ChildStdout,
    replies: &Sender<FromAdapter>,
    begun: &AtomicU64,
    queued: &AtomicUsize,
    max: usize,
) {
    let mut reader = BufReader::with_capacity(64 << 10, stdout);
    let mut line = Vec::new();
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if available.is_empty() {
            break;
        }
        let (chunk, found) = match memchr_newline(available) {
            Some(at) => (&available[..at], true),
            None => (available, false),
        };
        let taken = chunk.len() + usize::from(found);
        if line.len() + chunk.len() > max {
            let _ = replies.send(FromAdapter::TooLong);
            return;
        }
        line.extend_from_slice(chunk);
        reader.consume(taken);
        if found {
            if queued.fetch_add(1, Ordering::SeqCst) >= MAX_QUEUED_REPLIES {
                let _ = replies.send(FromAdapter::Flood);
                return;
            }
            let after = begun.load(Ordering::SeqCst);
            let bytes = std::mem::take(&mut line);
            if replies.send(FromAdapter::Line { bytes, after }).is_err() {
                return;
            }
        }
    }
    let _ = replies.send(FromAdapter::End);
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|b| *b == b'\n')
}

fn read_stderr(mut stderr: std::process::ChildStderr, tail: &Arc<Mutex<Tail>>) {
    let mut buffer = [0u8; 8192];
    loop {
        match stderr.read(&mut buffer) {
            Ok(0) | Err(_) => {
                if let Ok(mut tail) = tail.lock() {
                    tail.ended = true;
                }
                return;
            }
            Ok(n) => {
                if let Ok(mut tail) = tail.lock() {
                    tail.push(&buffer[..n]);
                }
            }
        }
    }
}

/// The end of a byte stream, at most [`STDERR_KEPT`] bytes, and how much was dropped.
#[derive(Debug, Default)]
struct Tail {
    bytes: std::collections::VecDeque<u8>,
    dropped: u64,
    /// The stream reached its end.
    ended: bool,
}

impl Tail {
    fn push(&mut self, data: &[u8]) {
        self.bytes.extend(data);
        let over = self.bytes.len().saturating_sub(STDERR_KEPT);
        self.bytes.drain(..over);
        self.dropped += over as u64;
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.dropped = 0;
    }

    fn text(&self) -> String {
        let (a, b) = self.bytes.as_slices();
        let mut kept = a.to_vec();
        kept.extend_from_slice(b);
        let text = String::from_utf8_lossy(&kept).into_owned();
        if self.dropped > 0 {
            format!("[{} earlier bytes not kept]\n{text}", self.dropped)
        } else {
            text
        }
    }
}

/// Splits a command line into argv the way a POSIX shell would split it, without a shell:
/// quotes and backslashes as there, no expansion, no operators.
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    let words = shell_words::split(line).map_err(|e| e.to_string())?;
    if words.is_empty() {
        return Err("the command is empty".into());
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_like_a_shell_without_one() {
        assert_eq!(
            split_command("python3 a.py --x 1").expect("ok"),
            ["python3", "a.py", "--x", "1"]
        );
        assert_eq!(
            split_command(r#"sh -c 'echo "$HOME"; ls'"#).expect("ok"),
            ["sh", "-c", r#"echo "$HOME"; ls"#]
        );
        assert_eq!(
            split_command(r#"a "b \"c\" d" e\ f"#).expect("ok"),
            ["a", r#"b "c" d"#, "e f"]
        );
        assert_eq!(split_command("a ''").expect("ok"), ["a", ""]);
        assert_eq!(
            split_command("echo $HOME *.py").expect("ok"),
            ["echo", "$HOME", "*.py"],
            "nothing is expanded"
        );
        assert_eq!(
            split_command("  ").expect_err("empty"),
            "the command is empty"
        );
        assert!(split_command("a 'b").is_err());
        assert!(split_command("a \"b").is_err());
    }

    #[test]
    fn the_stderr_tail_keeps_the_end() {
        let mut tail = Tail::default();
        tail.push(&vec![b'a'; STDERR_KEPT]);
        tail.push(b"end");
        let text = tail.text();
        assert!(text.starts_with("[3 earlier bytes not kept]"));
        assert!(text.ends_with("aend"));
    }
}
