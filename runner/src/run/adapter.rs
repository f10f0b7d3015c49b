//! Driving an adapter process: persistent (one process, newline-delimited JSON) or one-shot
//! (one process per case). Every wait has a deadline, every read a bound, and every process
//! is started in a process group of its own and ended with it, so that nothing the adapter
//! starts outlives the run.

use asr_suite::protocol::{CaseRequest, Kit, PROTOCOL_VERSION, Reply, Request};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The longest reply line read; a longer one is a protocol error.
pub const MAX_REPLY_BYTES: usize = 16 << 20;

/// The most stderr kept for one case (its end).
pub const STDERR_KEPT: usize = 16 << 10;

/// What went wrong with an adapter, as opposed to what it answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// No answer in time.
    Timeout(String),
    /// The process died or closed its stdout.
    Crash(String),
    /// The answer broke the protocol.
    Protocol(String),
}

/// Checks replies (and requests) against the protocol schemas, when asked to.
pub trait ProtocolCheck: Sync {
    /// Problems of one message of the kit.
    fn request(&self, message: &serde_json::Value) -> Vec<String>;
    /// Problems of one message of the adapter.
    fn reply(&self, message: &serde_json::Value) -> Vec<String>;
}

/// A running persistent adapter.
pub struct Persistent {
    child: Child,
    to_adapter: Option<SyncSender<Vec<u8>>>,
    from_adapter: Receiver<FromAdapter>,
    stderr: Arc<Mutex<Tail>>,
}

enum FromAdapter {
    Line(Vec<u8>),
    TooLong,
    End,
}

impl Persistent {
    /// Starts the adapter and does the `start` handshake.
    pub fn start(
        argv: &[String],
        timeout: Duration,
        check: Option<&dyn ProtocolCheck>,
    ) -> Result<(Self, Reply), Fault> {
        let mut command = piped(argv);
        let mut child = command
            .spawn()
            .map_err(|e| Fault::Crash(format!("failed to start `{}`: {e}", argv.join(" "))))?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| Fault::Crash("no stdin".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| Fault::Crash("no stdout".into()))?;
        let stderr = child
            .stderr
            .take()
            .ok_or_else(|| Fault::Crash("no stderr".into()))?;
        let (to_adapter, requests) = sync_channel::<Vec<u8>>(4);
        thread::spawn(move || write_requests(stdin, &requests));
        let (replies, from_adapter) = sync_channel::<FromAdapter>(4);
        thread::spawn(move || read_replies(stdout, &replies));
        let tail = Arc::new(Mutex::new(Tail::default()));
        let sink = Arc::clone(&tail);
        thread::spawn(move || read_stderr(stderr, &sink));
        let mut adapter = Persistent {
            child,
            to_adapter: Some(to_adapter),
            from_adapter,
            stderr: tail,
        };
        let start = Request::Start {
            protocol: PROTOCOL_VERSION,
            kit: kit(),
        };
        let reply = adapter
            .exchange(&start, timeout, check)
            .map_err(|fault| match fault {
                Fault::Timeout(_) => Fault::Timeout(format!(
                    "the adapter did not answer start within {} s",
                    timeout.as_secs_f64()
                )),
                other => other,
            })?;
        match &reply {
            Reply::Started { protocol, .. } if *protocol == PROTOCOL_VERSION => {
                Ok((adapter, reply))
            }
            Reply::Started { protocol, .. } => Err(Fault::Protocol(format!(
                "the adapter speaks protocol {protocol}; the kit speaks {PROTOCOL_VERSION}"
            ))),
            other => Err(Fault::Protocol(format!(
                "the adapter answered start with {}",
                describe(other)
            ))),
        }
    }

    /// Sends one case and waits for its answer.
    pub fn ask(
        &mut self,
        request: &CaseRequest,
        timeout: Duration,
        check: Option<&dyn ProtocolCheck>,
    ) -> Result<Reply, Fault> {
        self.stderr_clear();
        self.exchange(&Request::Case(request.clone()), timeout, check)
    }

    fn exchange(
        &mut self,
        request: &Request,
        timeout: Duration,
        check: Option<&dyn ProtocolCheck>,
    ) -> Result<Reply, Fault> {
        let value = serde_json::to_value(request)
            .map_err(|e| Fault::Protocol(format!("failed to encode a request: {e}")))?;
        if let Some(check) = check {
            let problems = check.request(&value);
            assert!(
                problems.is_empty(),
                "the kit sent a request its own schema refuses: {problems:?}"
            );
        }
        let mut line = value.to_string().into_bytes();
        line.push(b'\n');
        let sent = self
            .to_adapter
            .as_ref()
            .is_some_and(|to| to.send(line).is_ok());
        if !sent {
            return Err(Fault::Crash(
                self.exit_description("the adapter closed its stdin"),
            ));
        }
        match self.from_adapter.recv_timeout(timeout) {
            Ok(FromAdapter::Line(bytes)) => parse_reply(&bytes, check),
            Ok(FromAdapter::TooLong) => Err(Fault::Protocol(format!(
                "the answer is longer than {MAX_REPLY_BYTES} bytes without a newline"
            ))),
            Ok(FromAdapter::End) | Err(RecvTimeoutError::Disconnected) => Err(Fault::Crash(
                self.exit_description("the adapter ended its output without answering"),
            )),
            Err(RecvTimeoutError::Timeout) => Err(Fault::Timeout(format!(
                "no answer within {} s",
                timeout.as_secs_f64()
            ))),
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
        for _ in 0..50 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return format!("{what}: it exited with {status}");
            }
            thread::sleep(Duration::from_millis(2));
        }
        what.to_owned()
    }

    /// Sends `stop`, gives the adapter a moment to exit, then ends its process group.
    pub fn stop(mut self) {
        if let Some(to) = self.to_adapter.take() {
            let _ = to.send(b"{\"type\":\"stop\"}\n".to_vec());
        }
        let deadline = Instant::now() + Duration::from_millis(500);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                break;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Persistent {
    fn drop(&mut self) {
        self.to_adapter = None;
        end_group(&mut self.child);
    }
}

/// Runs a one-shot adapter on one stream.
pub fn oneshot(
    argv: &[String],
    env: &[(&str, String)],
    input: &[u8],
    timeout: Duration,
    check: Option<&dyn ProtocolCheck>,
) -> (Result<Reply, Fault>, String) {
    let mut command = piped(argv);
    command.env("ASR_CTK_PROTOCOL", PROTOCOL_VERSION.to_string());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return (
                Err(Fault::Crash(format!(
                    "failed to start `{}`: {e}",
                    argv.join(" ")
                ))),
                String::new(),
            );
        }
    };
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        end_group(&mut child);
        return (
            Err(Fault::Crash("no standard streams".into())),
            String::new(),
        );
    };
    let input = input.to_vec();
    thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let (done, output) = sync_channel::<Result<Vec<u8>, ()>>(1);
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let read = stdout
            .take(MAX_REPLY_BYTES as u64 + 1)
            .read_to_end(&mut bytes);
        let _ = done.send(read.map(|_| bytes).map_err(|_| ()));
    });
    let tail = Arc::new(Mutex::new(Tail::default()));
    let sink = Arc::clone(&tail);
    thread::spawn(move || read_stderr(stderr, &sink));
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => break None,
            Ok(None) => thread::sleep(Duration::from_millis(1)),
            Err(_) => break None,
        }
    };
    let stderr_text = || tail.lock().map(|t| t.text()).unwrap_or_default();
    let Some(status) = status else {
        end_group(&mut child);
        return (
            Err(Fault::Timeout(format!(
                "no answer within {} s",
                timeout.as_secs_f64()
            ))),
            stderr_text(),
        );
    };
    end_group(&mut child);
    let Ok(Ok(bytes)) = output.recv_timeout(Duration::from_secs(1)) else {
        let fault = Fault::Crash(format!(
            "exited with {status}; its output could not be read"
        ));
        return (Err(fault), stderr_text());
    };
    let result = if bytes.len() > MAX_REPLY_BYTES {
        Err(Fault::Protocol(format!(
            "the answer is longer than {MAX_REPLY_BYTES} bytes"
        )))
    } else if bytes.iter().all(u8::is_ascii_whitespace) {
        Err(Fault::Crash(format!(
            "exited with {status} without answering"
        )))
    } else {
        let text = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        if text.contains(&b'\n') {
            Err(Fault::Protocol("the answer is more than one line".into()))
        } else {
            parse_reply(text, check)
        }
    };
    (result, stderr_text())
}

/// The adapter command with its standard streams piped, in a process group of its own.
fn piped(argv: &[String]) -> Command {
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    command
}

fn kit() -> Kit {
    Kit {
        name: "asr-ctk".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    }
}

fn parse_reply(bytes: &[u8], check: Option<&dyn ProtocolCheck>) -> Result<Reply, Fault> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        Fault::Protocol(format!("the answer is not JSON ({e}): {}", preview(bytes)))
    })?;
    if let Some(check) = check {
        let problems = check.reply(&value);
        if !problems.is_empty() {
            return Err(Fault::Protocol(format!(
                "the answer breaks the reply schema: {}",
                problems.join("; ")
            )));
        }
    }
    serde_json::from_value(value).map_err(|e| {
        Fault::Protocol(format!(
            "the answer is not a valid reply: {e}: {}",
            preview(bytes)
        ))
    })
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

fn write_requests(mut stdin: ChildStdin, requests: &Receiver<Vec<u8>>) {
    while let Ok(line) = requests.recv() {
        if stdin.write_all(&line).and_then(|()| stdin.flush()).is_err() {
            return;
        }
    }
}

/// Reads reply lines, stopping at the first one over the bound: the adapter is ended then,
/// so the rest of a flood is never read.
fn read_replies(stdout: std::process::ChildStdout, replies: &SyncSender<FromAdapter>) {
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
        if line.len() + chunk.len() > MAX_REPLY_BYTES {
            let _ = replies.send(FromAdapter::TooLong);
            return;
        }
        line.extend_from_slice(chunk);
        reader.consume(taken);
        if found
            && replies
                .send(FromAdapter::Line(std::mem::take(&mut line)))
                .is_err()
        {
            return;
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
            Ok(0) | Err(_) => return,
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

/// Ends a process and everything in its group, and reaps it.
fn end_group(child: &mut Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Splits a command line into argv the way a shell would split it, without a shell: white
/// space separates words; single quotes keep everything; double quotes keep everything but
/// `\"` and `\\`; a backslash outside quotes keeps the next character.
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unclosed single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("unclosed double quote".into()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("unclosed double quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next().ok_or("a backslash ends the command")?);
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
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
        assert!(split_command("  ").is_err());
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
