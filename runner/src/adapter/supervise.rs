//! Supervision of adapter processes: an adapter, and everything it starts, ends with it, and
//! an interrupted run stops starting cases, ends its adapters and still writes its report.
//!
//! What is guaranteed:
//!
//! - Every adapter is started in a process group of its own; ending it kills the group.
//! - On Linux the kit is a child subreaper (`PR_SET_CHILD_SUBREAPER`): a process that an
//!   adapter starts and that detaches from it (`setsid`, a double fork) is re-parented to the
//!   kit instead of init. Ending an adapter kills its whole descendant tree, found through
//!   `/proc`, and every process re-parented to the kit that does not belong to an adapter still
//!   running (each adapter's environment carries [`TOKEN_VAR`], which its descendants inherit).
//! - Elsewhere only the process group is ended: a descendant that leaves the group survives.
//! - When the kit itself is killed (SIGKILL: an out-of-memory killer, a CI runner's hard
//!   cancel), it can clean up nothing, and what it re-parented goes to init. On Linux a
//!   watchdog process started by [`init`] holds the read end of a pipe whose write end only
//!   the kit has; when the kit dies the pipe closes, and the watchdog kills every process
//!   whose environment carries a [`TOKEN_VAR`] of the dead kit's (the adapters, and whatever
//!   they started, detached or not), then exits. A process that scrubs its environment and
//!   detaches escapes it.
//!
//! Signals: the first SIGINT or SIGTERM sets [`interrupted`]; the run starts no new case, gives
//! each adapter SIGTERM and [`TERM_GRACE`] to exit, then SIGKILL, and writes the report of
//! what ran. A second signal kills every descendant of the kit at once and exits with
//! [`crate::exit::INTERRUPTED`].

use std::io;
use std::process::{Child, Command};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The environment variable that names the adapter a process belongs to.
pub const TOKEN_VAR: &str = "ASR_CTK_ADAPTER_TOKEN";

/// The environment variable that makes `asr-ctk` the watchdog of the kit whose pid it holds.
pub const WATCHDOG_VAR: &str = "ASR_CTK_WATCHDOG";

/// How long an adapter has to exit after SIGTERM when a run is interrupted.
pub const TERM_GRACE: Duration = Duration::from_secs(2);

/// Whether the run was interrupted by a signal.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Makes the kit the reaper of its orphaned descendants and installs the signal handling.
/// Called once by the commands that start adapters.
pub fn init() -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        nix::sys::prctl::set_child_subreaper(true).map_err(io::Error::from)?;
        start_watchdog();
    }
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
    ])?;
    std::thread::Builder::new()
        .name("asr-ctk-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                if INTERRUPTED.swap(true, Ordering::SeqCst) {
                    eprintln!("asr-ctk: interrupted again: ending every adapter now");
                    kill_descendants();
                    std::process::exit(i32::from(crate::exit::INTERRUPTED));
                }
                let name = if signal == signal_hook::consts::SIGINT {
                    "SIGINT"
                } else {
                    "SIGTERM"
                };
                eprintln!(
                    "asr-ctk: {name}: starting no more cases, ending the adapters, writing the report (again to stop at once)"
                );
            }
        })?;
    Ok(())
}

/// The watchdog's work (the process started with [`WATCHDOG_VAR`] set to the kit's pid):
/// waits for its standard input to close, which happens when the kit has exited or died,
/// then kills every process carrying a token of that kit. Returns the exit status.
pub fn watchdog(kit: &str) -> u8 {
    use std::io::Read;
    let Ok(kit) = kit.parse::<u32>() else {
        return crate::exit::USAGE_OR_IO;
    };
    let mut sink = [0u8; 64];
    let mut stdin = io::stdin().lock();
    loop {
        match stdin.read(&mut sink) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let prefix = format!("{kit}-");
    // Rounds repeat while some are found: a dying process can still have forked.
    for _ in 0..50 {
        let mine: Vec<u32> = procfs::all()
            .into_iter()
            .filter(|pid| procfs::token(*pid).is_some_and(|t| t.starts_with(&prefix)))
            .collect();
        if mine.is_empty() {
            break;
        }
        for pid in mine {
            if let Ok(raw) = i32::try_from(pid) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(raw),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    crate::exit::OK
}

/// An adapter process under supervision: ended, with everything it started, when dropped.
pub struct Supervised {
    /// The adapter process.
    pub child: Child,
    token: String,
    reaped: bool,
    ended: bool,
}

/// Starts `command` under supervision.
pub fn spawn(command: &mut Command) -> io::Result<Supervised> {
    let token = format!(
        "{}-{}",
        std::process::id(),
        NEXT_TOKEN.fetch_add(1, Ordering::SeqCst)
    );
    command.env(TOKEN_VAR, &token);
    // Registered under the lock it was started under, so that a sweep never takes a new
    // adapter for an orphan.
    let mut live = LIVE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let child = command.spawn()?;
    live.push((child.id(), token.clone()));
    drop(live);
    Ok(Supervised {
        child,
        token,
        reaped: false,
        ended: false,
    })
}

impl Supervised {
    /// The exit status, if the adapter has exited (it is reaped then).
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        let status = self.child.try_wait().ok().flatten();
        if status.is_some() {
            self.reaped = true;
        }
        status
    }

    /// Waits until the adapter exits or `deadline` passes. A process that has just closed its
    /// output is usually a moment from exiting: the first looks come quickly.
    pub fn wait_until(&mut self, deadline: Instant) -> Option<std::process::ExitStatus> {
        let mut pause = Duration::from_micros(50);
        loop {
            if let Some(status) = self.exited() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }

    /// Ends the adapter and everything it started: SIGTERM and [`TERM_GRACE`] first when the
    /// run was interrupted, SIGKILL otherwise. Once ended, calling it again does nothing.
    pub fn end(&mut self) {
        use nix::sys::signal::Signal;
        if self.ended {
            return;
        }
        self.ended = true;
        let pid = self.child.id();
        if interrupted() && !self.reaped {
            signal_tree(pid, Signal::SIGTERM);
            self.wait_until(Instant::now() + TERM_GRACE);
        }
        if self.reaped {
            // Its pid may be another process's by now; its group cannot be while the group
            // has members, and whatever it started was re-parented to the kit.
            if let Ok(raw) = i32::try_from(pid) {
                let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(raw), Signal::SIGKILL);
            }
        } else {
            signal_tree(pid, Signal::SIGKILL);
            let _ = self.child.kill();
            let _ = self.child.wait();
            self.reaped = true;
        }
        let mut live = LIVE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        live.retain(|(p, _)| *p != pid);
        sweep_orphans(&live, &self.token);
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        self.end();
    }
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// The watchdog, once started: its pid, and the write end of its pipe, kept open (never
/// written) for as long as the kit lives.
static WATCHDOG: Mutex<Option<(u32, std::process::ChildStdin)>> = Mutex::new(None);

/// Starts the watchdog, once. It runs in a process group of its own (a Ctrl-C to the kit's
/// group does not reach it) and carries no adapter token. A kit that cannot start it says so
/// and runs without it.
#[cfg(target_os = "linux")]
fn start_watchdog() {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let mut watchdog = WATCHDOG
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if watchdog.is_some() {
        return;
    }
    // The running binary, even if its file was replaced or removed since it started.
    let started = Command::new("/proc/self/exe")
        .env(WATCHDOG_VAR, std::process::id().to_string())
        .env_remove(TOKEN_VAR)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    match started {
        Ok(mut child) => {
            // Not waited for: it outlives the kit, and init reaps it.
            if let Some(pipe) = child.stdin.take() {
                *watchdog = Some((child.id(), pipe));
            }
        }
        Err(e) => eprintln!(
            "asr-ctk: failed to start the watchdog that ends the adapters if the kit is killed: {e}"
        ),
    }
}

/// The watchdog's pid, if it runs.
fn watchdog_pid() -> Option<u32> {
    WATCHDOG
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .as_ref()
        .map(|(pid, _)| *pid)
}
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);
/// Adapters running now: their pids and tokens.
static LIVE: Mutex<Vec<(u32, String)>> = Mutex::new(Vec::new());

/// Sends `signal` to a process, its group and every descendant.
fn signal_tree(pid: u32, signal: nix::sys::signal::Signal) {
    use nix::sys::signal::{kill, killpg};
    use nix::unistd::Pid;
    let Ok(raw) = i32::try_from(pid) else { return };
    let descendants = procfs::descendants(pid);
    let _ = killpg(Pid::from_raw(raw), signal);
    let _ = kill(Pid::from_raw(raw), signal);
    for d in descendants {
        if let Ok(d) = i32::try_from(d) {
            let _ = kill(Pid::from_raw(d), signal);
        }
    }
}

/// Kills and reaps the kit's children that are no running adapter, unless they carry the token
/// of one: they are what ended adapters left behind, re-parented to the kit. Rounds repeat while
/// some are found, since a dying process can still have forked.
fn sweep_orphans(live: &[(u32, String)], ended: &str) {
    let me = std::process::id();
    let watchdog = watchdog_pid();
    for _ in 0..50 {
        let mut found = false;
        for pid in procfs::children(me) {
            if live.iter().any(|(p, _)| *p == pid) || Some(pid) == watchdog {
                continue;
            }
            let token = procfs::token(pid);
            let belongs_to_live = token
                .as_deref()
                .is_some_and(|t| t != ended && live.iter().any(|(_, l)| l == t));
            if belongs_to_live {
                continue;
            }
            found = true;
            signal_tree(pid, nix::sys::signal::Signal::SIGKILL);
            if let Ok(raw) = i32::try_from(pid) {
                let _ = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(raw), None);
            }
        }
        if !found {
            return;
        }
    }
}

/// Kills every descendant of the kit, at once (the second signal); the watchdog, which
/// would find nothing left to do, goes on until the kit has exited.
fn kill_descendants() {
    use nix::sys::signal::{Signal, kill};
    let watchdog = watchdog_pid();
    for _ in 0..10 {
        let mut all = procfs::descendants(std::process::id());
        all.retain(|pid| Some(*pid) != watchdog);
        if all.is_empty() {
            return;
        }
        for pid in all {
            if let Ok(raw) = i32::try_from(pid) {
                let _ = kill(nix::unistd::Pid::from_raw(raw), Signal::SIGKILL);
            }
        }
    }
}

/// The process tree, as `/proc` shows it (Linux); elsewhere, nothing is known of it.
pub mod procfs {
    /// The pids whose parent is `parent`.
    pub fn children(parent: u32) -> Vec<u32> {
        parents()
            .into_iter()
            .filter(|(_, ppid)| *ppid == parent)
            .map(|(pid, _)| pid)
            .collect()
    }

    /// Every process below `root` in the tree, children first.
    pub fn descendants(root: u32) -> Vec<u32> {
        let table = parents();
        let mut found = vec![root];
        let mut at = 0;
        while at < found.len() {
            let parent = found[at];
            found.extend(
                table
                    .iter()
                    .filter(|(_, ppid)| *ppid == parent)
                    .map(|(pid, _)| *pid),
            );
            at += 1;
            if found.len() > 100_000 {
                break;
            }
        }
        found.remove(0);
        found
    }

    /// Every process.
    pub fn all() -> Vec<u32> {
        parents().into_iter().map(|(pid, _)| pid).collect()
    }

    /// The adapter token in a process's environment.
    pub fn token(pid: u32) -> Option<String> {
        let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        let prefix = format!("{}=", super::TOKEN_VAR);
        environ
            .split(|b| *b == 0)
            .find_map(|entry| entry.strip_prefix(prefix.as_bytes()))
            .map(|value| String::from_utf8_lossy(value).into_owned())
    }

    /// The parent of `pid`, if it is alive (or a zombie).
    pub fn parent(pid: u32) -> Option<u32> {
        parent_of(&std::fs::read(format!("/proc/{pid}/stat")).ok()?)
    }

    /// (pid, parent pid) of every process.
    fn parents() -> Vec<(u32, u32)> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|entry| {
                let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
                let stat = std::fs::read(entry.path().join("stat")).ok()?;
                Some((pid, parent_of(&stat)?))
            })
            .collect()
    }

    /// The parent pid in a `/proc/PID/stat` line: the second field after the command name,
    /// which is in parentheses and may itself hold spaces and parentheses.
    fn parent_of(stat: &[u8]) -> Option<u32> {
        let close = stat.iter().rposition(|b| *b == b')')?;
        let rest = std::str::from_utf8(&stat[close + 1..]).ok()?;
        rest.split_ascii_whitespace().nth(1)?.parse().ok()
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn the_parent_is_read_past_a_command_name_with_parentheses() {
            assert_eq!(parent_of(b"42 (a) b) (c) S 7 42 42 0"), Some(7));
            assert_eq!(parent_of(b"42 (x) R 1 1 1"), Some(1));
            assert_eq!(parent_of(b"42 (x"), None);
        }

        #[test]
        fn this_process_is_a_descendant_of_its_parent() {
            let me = std::process::id();
            let parent = std::os::unix::process::parent_id();
            assert!(super::descendants(parent).contains(&me));
            assert!(super::children(parent).contains(&me));
            assert!(!super::descendants(me).contains(&me));
        }

        use super::parent_of;
    }
}
