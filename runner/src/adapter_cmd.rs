//! `asr-ctk adapter reference`: the kit's own implementation behind the adapter protocol,
//! persistent by default, one-shot when the kit's one-shot environment is set.

use crate::exit;
use crate::limits::LimitArgs;
use anyhow::{Context, Result};
use asr_suite::check::CheckOptions;
use asr_suite::lines::{Line, LineReader};
use asr_suite::protocol::{ProtocolRole, Reply, Request};
use asr_suite::reference;
use std::io::{Read, Write};

#[derive(Debug, clap::Subcommand)]
pub enum AdapterCommand {
    /// The reference implementation (the stream checker) as an adapter.
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
        AdapterCommand::Reference { limits, files } => reference_adapter(limits, files),
    }
}

fn reference_adapter(limits: &LimitArgs, files: &[std::path::PathBuf]) -> Result<u8> {
    let limits = limits.limits()?;
    let mut options = CheckOptions::default();
    options.max_line_bytes = limits.max_line_bytes;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if std::env::var_os("ASR_CTK_HANDSHAKE").is_some() {
        send(&mut out, &reference::started())?;
        return Ok(exit::OK);
    }
    if let Some(role) = std::env::var_os("ASR_CTK_ROLE") {
        if role == "producer" {
            let case = std::env::var("ASR_CTK_CASE").unwrap_or_default();
            let mut source = Vec::with_capacity(files.len());
            for path in files {
                let bytes = std::fs::read(path)
                    .with_context(|| format!("failed to read {}", path.display()))?;
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                source.push((name, bytes));
            }
            send(&mut out, &reference::produce_oneshot(&case, &source))?;
            return Ok(exit::OK);
        }
        let role = if role == "reader" {
            ProtocolRole::Reader
        } else {
            ProtocolRole::Validator
        };
        let mut input = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut input)
            .context("failed to read the stream")?;
        send(&mut out, &reference::answer_bytes(&input, role, &options))?;
        return Ok(exit::OK);
    }
    let stdin = std::io::stdin();
    let mut lines = LineReader::new(stdin.lock(), 1 << 30);
    while let Some(line) = lines.next_line().context("failed to read a request")? {
        let Line::Text { bytes, .. } = line else {
            continue;
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
            Request::Case(case) => send(&mut out, &reference::answer(&case, &options))?,
            Request::Stop => {
                send(&mut out, &Reply::Stopped)?;
                break;
            }
        }
    }
    Ok(exit::OK)
}

fn send(out: &mut impl Write, reply: &Reply) -> Result<()> {
    serde_json::to_writer(&mut *out, reply)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}
