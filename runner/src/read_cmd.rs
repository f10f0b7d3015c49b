//! `asr-ctk read`: the reference reader's reading of streams.

use crate::exit;
use anyhow::{Context, Result};
use asr_suite::check::DEFAULT_MAX_LINE_BYTES;
use asr_suite::reading::{Refusal, scan};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Streams to read (`-` for standard input).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// One JSON object a line instead of indented JSON.
    #[arg(long)]
    compact: bool,
    /// The longest stream line read, in bytes; a longer one is not kept in memory, and the
    /// reader does not accept the stream.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE_BYTES)]
    max_line_bytes: usize,
}

pub fn run(args: &Args) -> Result<u8> {
    anyhow::ensure!(args.max_line_bytes > 0, "--max-line-bytes must be positive");
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let pretty = !args.compact;
    let mut all_accepted = true;
    for path in &args.files {
        let name = path.to_string_lossy().into_owned();
        let mut file = open(path, &name)?;
        let scanned = scan(&mut file, args.max_line_bytes)
            .with_context(|| format!("failed to read {name}"))?;
        file.rewind()
            .with_context(|| format!("failed to read {name}"))?;
        let accepted = scanned.accepted();
        all_accepted &= accepted;
        let reasons: Vec<String> = scanned.refusals().iter().map(reason).collect();
        for reason in &reasons {
            eprintln!("{name}: {reason}");
        }
        // The members in the order serde_json writes an object's: by name.
        let (nl, pad, colon) = if pretty {
            ("\n", "  ", ": ")
        } else {
            ("", "", ":")
        };
        write!(
            out,
            "{{{nl}{pad}\"accepted\"{colon}{accepted},{nl}{pad}\"file\"{colon}{},{nl}{pad}\"reading\"{colon}",
            serde_json::to_string(&name)?
        )?;
        scanned
            .write_reading(&mut file, &mut out, pretty, 1)
            .with_context(|| format!("failed to read {name}"))?;
        if !accepted {
            let list = if pretty {
                serde_json::to_string_pretty(&reasons)?.replace('\n', "\n  ")
            } else {
                serde_json::to_string(&reasons)?
            };
            write!(out, ",{nl}{pad}\"reasons\"{colon}{list}")?;
        }
        writeln!(out, "{nl}}}")?;
    }
    out.flush()?;
    Ok(if all_accepted {
        exit::OK
    } else {
        exit::INVALID
    })
}

fn reason(refusal: &Refusal) -> String {
    if refusal.line == 0 {
        refusal.reason.clone()
    } else {
        format!("line {}: {}", refusal.line, refusal.reason)
    }
}

/// The stream as something read twice: a regular file as it is; standard input, a pipe or a
/// device copied to a temporary file first (on disk, not in memory).
fn open(path: &Path, name: &str) -> Result<File> {
    if name == "-" {
        return spool(io::stdin().lock()).context("failed to read standard input");
    }
    let file = File::open(path).with_context(|| format!("failed to open {name}"))?;
    if file.metadata().is_ok_and(|m| m.is_file()) {
        return Ok(file);
    }
    spool(file).with_context(|| format!("failed to read {name}"))
}

/// Copies `input` into a new temporary file, removed as soon as it is open: the open file
/// stays readable, and nothing is left behind however the process ends.
fn spool(mut input: impl Read) -> Result<File> {
    let dir = std::env::temp_dir();
    let mut attempt = 0u32;
    loop {
        let path = dir.join(format!("asr-ctk-read-{}-{attempt}", std::process::id()));
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                let _ = std::fs::remove_file(&path);
                io::copy(&mut input, &mut file)?;
                file.rewind()?;
                return Ok(file);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(e) => {
                return Err(e).with_context(|| format!("failed to create {}", path.display()));
            }
        }
    }
}
