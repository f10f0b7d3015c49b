//! `asr-ctk adapter reference`: the kit's own implementation behind the adapter protocol,
//! persistent by default, one-shot when the kit's one-shot environment is set. It reads
//! every stream as `validate` and `read` do, never whole, and every request line within
//! `--max-reply-bytes`.

use crate::exit;
use crate::limits::LimitArgs;
use anyhow::{Context, Result};
use asr_suite::check::CheckOptions;
use asr_suite::lines::{Line, LineReader};
use asr_suite::protocol::{ProtocolRole, Reply, Request};
use asr_suite::reference::{self, send};
use std::io::BufWriter;

#[derive(Debug, clap::Subcommand)]
pub enum AdapterCommand {
    /// The reference implementation (the stream checker) as an adapter.
    ///
    /// It reads streams by path, never whole; a request line longer than --max-reply-bytes
    /// is answered with an error (a stream sent as `data` must fit in it).
    Reference {
        #[command(flatten)]
        limits: LimitArgs,
        /// One-shot producer cases: the source's files, as the kit gives them.
        #[arg(value_name = "FILE")]
        files: Vec<std::path::PathBuf>,
    },
}

pub fn run(command: &AdapterCommand) -> Result<u8> {
    match command {
        AdapterCommand::Reference { limits, files } => {
            #[cfg(target_os = "linux")]
            end_with_the_kit();
            reference_adapter(limits, files)
        }
    }
}

fn reference_adapter(limits: &LimitArgs, files: &[std::path::PathBuf]) -> Result<u8> {
    let limits = limits.limits()?;
    let mut options = CheckOptions::default();
    options.max_line_bytes = limits.max_line_bytes;
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(64 << 10, stdout.lock());
    if std::env::var_os("ASR_CTK_HANDSHAKE").is_some() {
        send(&mut out, &reference::started())?;
        return Ok(exit::OK);
    }
    if let Some(role) = std::env::var_os("ASR_CTK_ROLE") {
        if role == "producer" {
            let case = std::env::var("ASR_CTK_CASE").unwrap_or_default();
            send(&mut out, &reference::produce_oneshot(&case, files))?;
            return Ok(exit::OK);
        }
        let role = if role == "reader" {
            ProtocolRole::Reader
        } else {
            ProtocolRole::Validator
        };
        reference::write_oneshot_answer(std::io::stdin().lock(), role, &options, &mut out)
            .context("failed to answer")?;
        return Ok(exit::OK);
    }
    let stdin = std::io::stdin();
    // A request holds a stream whole only as base64 `data`, which the kit never sends to
    // this adapter (it reads streams by path): the reply bound is ample.
    let max_request = limits.max_reply_bytes;
    let mut lines = LineReader::new(stdin.lock(), max_request);
    while let Some(line) = lines.next_line().context("failed to read a request")? {
        let bytes = match line {
            Line::Text { bytes, .. } => bytes,
            Line::TooLong { number, len, .. } => {
                let message = format!(
                    "failed to read request line {number}: it is {len} bytes long, longer than {max_request} (--max-reply-bytes bounds requests too): give streams by `path`, or raise the bound"
                );
                eprintln!("asr-ctk adapter: {message}");
                send(&mut out, &Reply::Error { seq: 0, message })?;
                continue;
            }
        };
        let request: Request = match serde_json::from_slice(bytes) {
            Ok(request) => request,
            Err(e) => {
                eprintln!("asr-ctk adapter: not a request: {e}");
                continue;
            }
        };
        match request {
            Request::Start { .. } => send(&mut out, &reference::started())?,
            Request::Case(case) => reference::write_answer(&case, &options, &mut out)
                .with_context(|| format!("failed to answer case {}", case.case))?,
            Request::Stop => {
                send(&mut out, &Reply::Stopped)?;
                break;
            }
        }
    }
    Ok(exit::OK)
}

/// Makes this process end when the kit that started it does, even when the kit is killed
/// and can end nothing (SIGKILL, the OOM killer): it would otherwise read on, a stream of
/// gigabytes or /dev/zero, for nobody.
///
/// The kernel sends the signal when the *thread* that started this process ends; the kit
/// starts an adapter from a thread that outlives it (each ends its adapters before it
/// returns), so that thread's end is the kit's. It is kept only when the parent is the kit
/// named by the token the kit gives each adapter (`<kit pid>-<n>`). Under another program
/// the kit started (a wrapper), whose threads the kit does not know, it is taken back. A kit
/// that died before the signal was set has left this process to another parent, which the
/// kit is no ancestor of: it exits at once.
#[cfg(target_os = "linux")]
fn end_with_the_kit() {
    use nix::sys::signal::Signal;
    let Some(token) = std::env::var_os(crate::adapter::supervise::TOKEN_VAR) else {
        return;
    };
    let Some(kit) = token
        .to_str()
        .and_then(|t| t.split_once('-'))
        .and_then(|(pid, _)| pid.parse::<u32>().ok())
    else {
        return;
    };
    if nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).is_err() {
        return;
    }
    let parent = std::os::unix::process::parent_id();
    if parent == kit {
        return;
    }
    if !is_ancestor(kit, parent) {
        std::process::exit(i32::from(exit::HARNESS));
    }
    let _ = nix::sys::prctl::set_pdeathsig(None);
}

/// Whether `ancestor` is `pid` or above it in the process tree (`/proc`). A dead process,
/// even one not yet reaped, is above nothing: its children were re-parented.
#[cfg(target_os = "linux")]
fn is_ancestor(ancestor: u32, mut pid: u32) -> bool {
    for _ in 0..256 {
        if pid == ancestor {
            return true;
        }
        if pid <= 1 {
            return false;
        }
        let Some(parent) = crate::adapter::supervise::procfs::parent(pid) else {
            return false;
        };
        pid = parent;
    }
    false
}
