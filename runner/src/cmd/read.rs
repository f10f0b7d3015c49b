//! `asr-ctk read`: the reference reader's reading of streams.

use crate::exit;
use anyhow::{Context, Result};
use asr_suite::check::DEFAULT_MAX_LINE_BYTES;
use asr_suite::reading::{
    DEFAULT_MAX_COPY_BYTES, Refusal, Scan, scan, scan_copying, temporary_file,
};
use std::fs::File;
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
    /// The longest stream line read, in bytes; a longer one is not kept in memory (nor
    /// copied to disk), and the reader does not accept the stream.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE_BYTES)]
    max_line_bytes: usize,
    /// The most bytes read from standard input, a pipe or a device: such a stream is copied
    /// to a temporary file to be read twice (its lines within --max-line-bytes only), and a
    /// longer one is an error [default: 16 GiB].
    #[arg(long, value_name = "BYTES")]
    max_spool_bytes: Option<u64>,
    /// Read the streams as one set (a parent and its children): a session one of them is,
    /// is no unresolved session of the others (PROTOCOL.md, "Several streams read as one
    /// set"). Without it, each stream is read alone.
    #[arg(long)]
    set: bool,
}

pub fn run(args: &Args) -> Result<u8> {
    anyhow::ensure!(args.max_line_bytes > 0, "--max-line-bytes must be positive");
    let max_spool = args.max_spool_bytes.unwrap_or(DEFAULT_MAX_COPY_BYTES);
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let pretty = !args.compact;
    let mut all_accepted = true;
    let mut passes = Vec::with_capacity(args.files.len());
    for path in &args.files {
        let name = path.to_string_lossy().into_owned();
        let (scanned, file) = first_pass(path, &name, args.max_line_bytes, max_spool)?;
        passes.push((name, scanned, file));
    }
    if args.set {
        asr_suite::reading::read_together(
            &mut passes
                .iter_mut()
                .map(|(_, scan, _)| scan)
                .collect::<Vec<_>>(),
        );
    }
    for (name, scanned, mut file) in passes {
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

/// The first pass over a stream, and the file to read it again from: a regular file as it
/// is; standard input, a pipe or a device copied to a temporary file as it is read (on
/// disk, not in memory; at most `max_spool` bytes read, lines over `max_line` not copied).
fn first_pass(path: &Path, name: &str, max_line: usize, max_spool: u64) -> Result<(Scan, File)> {
    if name == "-" {
        return spool(io::stdin().lock(), max_line, max_spool)
            .with_context(|| "failed to read standard input".to_owned());
    }
    let file = File::open(path).with_context(|| format!("failed to open {name}"))?;
    if file.metadata().is_ok_and(|m| m.is_file()) {
        let scanned = scan(&file, max_line).with_context(|| format!("failed to read {name}"))?;
        return Ok((scanned, file));
    }
    spool(file, max_line, max_spool).with_context(|| format!("failed to read {name}"))
}

/// Scans `input` while copying it into a new temporary file.
fn spool(input: impl Read, max_line: usize, max_spool: u64) -> Result<(Scan, File)> {
    let mut file = temporary_file()?;
    let scanned = scan_copying(input, max_line, max_spool, &mut file)?;
    Ok((scanned, file))
}
