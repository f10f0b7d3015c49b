//! Writing request lines to a persistent adapter. The thread that keeps the deadlines must
//! never block on an adapter that does not read its input, so the pipe is non-blocking: a
//! line is written at once when nothing waits before it and the pipe has room (every line,
//! for an adapter that keeps up), and otherwise handed, with what is left of it, to a thread
//! of its own that waits for room. Writing at once spares a thread hand-off a request.

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::process::ChildStdin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread;

/// The writing end of an adapter's stdin.
pub struct Requests {
    stdin: Arc<ChildStdin>,
    to_thread: Option<Sender<Rest>>,
    /// Lines handed to the thread and not yet written whole.
    waiting: Arc<AtomicU64>,
    /// Lines begun to be written (the reader tags replies with it).
    begun: Arc<AtomicU64>,
    /// Lines written whole.
    written: Arc<AtomicU64>,
    /// A write failed: the adapter closed its stdin.
    broken: bool,
}

/// What is left of a line for the thread to write.
struct Rest {
    bytes: Vec<u8>,
    /// Part of it has been written already (it is counted as begun).
    begun: bool,
}

impl Requests {
    /// Makes `stdin` non-blocking and starts the thread that writes what cannot be written
    /// at once. `begun` and `written` count the lines begun and written whole.
    pub fn new(
        stdin: ChildStdin,
        begun: Arc<AtomicU64>,
        written: Arc<AtomicU64>,
    ) -> io::Result<Requests> {
        let flags = OFlag::from_bits_truncate(fcntl(stdin.as_fd(), FcntlArg::F_GETFL)?);
        fcntl(stdin.as_fd(), FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
        let stdin = Arc::new(stdin);
        let waiting = Arc::new(AtomicU64::new(0));
        let (to_thread, rests) = channel::<Rest>();
        {
            let (stdin, waiting) = (Arc::clone(&stdin), Arc::clone(&waiting));
            let (begun, written) = (Arc::clone(&begun), Arc::clone(&written));
            thread::spawn(move || write_rests(&stdin, &rests, &waiting, &begun, &written));
        }
        Ok(Requests {
            stdin,
            to_thread: Some(to_thread),
            waiting,
            begun,
            written,
            broken: false,
        })
    }

    /// Writes `line`, or what the pipe does not take of it in the thread; false once the
    /// adapter is known to have closed its stdin. A failed write is known at the next line,
    /// as it would be if the thread had written it.
    pub fn send(&mut self, mut line: Vec<u8>) -> bool {
        if self.broken {
            return false;
        }
        let Some(to_thread) = &self.to_thread else {
            return false;
        };
        // Only this thread adds to `waiting`: at zero the writing thread has nothing left,
        // so a line written here cannot overtake one before it.
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.waiting.fetch_add(1, Ordering::SeqCst);
            return to_thread
                .send(Rest {
                    bytes: line,
                    begun: false,
                })
                .is_ok();
        }
        self.begun.fetch_add(1, Ordering::SeqCst);
        match write_now(&self.stdin, &line) {
            Ok(all) if all == line.len() => {
                self.written.fetch_add(1, Ordering::SeqCst);
                true
            }
            Ok(some) => {
                line.drain(..some);
                self.waiting.fetch_add(1, Ordering::SeqCst);
                to_thread
                    .send(Rest {
                        bytes: line,
                        begun: true,
                    })
                    .is_ok()
            }
            Err(_) => {
                self.broken = true;
                true
            }
        }
    }

    /// Closes the adapter's stdin once the thread has written what it holds.
    pub fn close(&mut self) {
        self.to_thread = None;
    }
}

/// Writes what the pipe takes of `bytes` without waiting: how much that was.
fn write_now(mut stdin: &ChildStdin, bytes: &[u8]) -> io::Result<usize> {
    let mut done = 0;
    while done < bytes.len() {
        match stdin.write(&bytes[done..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// The thread's loop: each rest written whole, waiting for room as long as it takes (only
/// this thread blocks on an adapter that does not read). It ends when a write fails, which
/// makes the next hand-off fail, or when the sender is dropped.
fn write_rests(
    stdin: &ChildStdin,
    rests: &Receiver<Rest>,
    waiting: &AtomicU64,
    begun: &AtomicU64,
    written: &AtomicU64,
) {
    while let Ok(rest) = rests.recv() {
        if !rest.begun {
            begun.fetch_add(1, Ordering::SeqCst);
        }
        let mut bytes = rest.bytes.as_slice();
        while !bytes.is_empty() {
            match write_now(stdin, bytes) {
                Ok(0) => {
                    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLOUT)];
                    match poll(&mut fds, PollTimeout::NONE) {
                        Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                        Err(_) => return,
                    }
                }
                Ok(n) => bytes = &bytes[n..],
                Err(_) => return,
            }
        }
        written.fetch_add(1, Ordering::SeqCst);
        waiting.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    /// An adapter that does not read for a while gets every line, whole and in order, once
    /// it reads, and the lines sent meanwhile never block the sender.
    #[test]
    fn lines_reach_a_slow_reader_whole_and_in_order() {
        let mut child = Command::new("sh")
            .args(["-c", "sleep 2; cat"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("sh starts");
        let stdin = child.stdin.take().expect("piped");
        let (begun, written) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let mut requests =
            Requests::new(stdin, Arc::clone(&begun), Arc::clone(&written)).expect("set up");
        let mut expected = Vec::new();
        let started = Instant::now();
        // Far more than a pipe holds, in lines of odd lengths.
        for n in 0..4_000u32 {
            let line = format!("{n}:{}\n", "x".repeat((n as usize * 37) % 300)).into_bytes();
            expected.extend_from_slice(&line);
            assert!(requests.send(line));
        }
        assert!(
            started.elapsed() < Duration::from_millis(1_500),
            "sending blocked on the adapter"
        );
        assert!(
            written.load(Ordering::SeqCst) < 4_000,
            "the pipe took it all"
        );
        requests.close();
        drop(requests);
        let mut out = Vec::new();
        child
            .stdout
            .take()
            .expect("piped")
            .read_to_end(&mut out)
            .expect("cat's output");
        child.wait().expect("cat ends");
        assert!(out == expected, "the lines came out changed or reordered");
        assert_eq!(begun.load(Ordering::SeqCst), 4_000);
        assert_eq!(written.load(Ordering::SeqCst), 4_000);
    }

    /// An adapter that closed its stdin is known as such at the line after the one that
    /// found it.
    #[test]
    fn a_closed_stdin_is_reported() {
        let mut child = Command::new("true")
            .stdin(Stdio::piped())
            .spawn()
            .expect("true starts");
        let stdin = child.stdin.take().expect("piped");
        child.wait().expect("true ends");
        let counters = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let mut requests = Requests::new(stdin, counters.0, counters.1).expect("set up");
        let mut answers = Vec::new();
        for _ in 0..3 {
            answers.push(requests.send(b"{}\n".to_vec()));
        }
        assert_eq!(answers, [true, false, false]);
    }
}
