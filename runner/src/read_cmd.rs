//! `asr-ctk read`: the reference reader's reading of streams.

use crate::exit;
use anyhow::{Context, Result};
use asr_suite::check::DEFAULT_MAX_LINE_BYTES;
use asr_suite::reading::read_stream;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Streams to read (`-` for standard input).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// One JSON object a line instead of indented JSON.
    #[arg(long)]
    compact: bool,
}

pub fn run(args: &Args) -> Result<u8> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut all_accepted = true;
    for path in &args.files {
        let name = path.to_string_lossy().into_owned();
        let outcome = if name == "-" {
            read_stream(std::io::stdin().lock(), DEFAULT_MAX_LINE_BYTES)
        } else {
            let file =
                std::fs::File::open(path).with_context(|| format!("failed to open {name}"))?;
            read_stream(file, DEFAULT_MAX_LINE_BYTES)
        }
        .with_context(|| format!("failed to read {name}"))?;
        all_accepted &= outcome.accepted;
        let value = serde_json::json!({"file": name, "accepted": outcome.accepted, "reading": outcome.reading});
        if args.compact {
            serde_json::to_writer(&mut out, &value)?;
        } else {
            serde_json::to_writer_pretty(&mut out, &value)?;
        }
        writeln!(out)?;
    }
    out.flush()?;
    Ok(if all_accepted {
        exit::OK
    } else {
        exit::INVALID
    })
}
