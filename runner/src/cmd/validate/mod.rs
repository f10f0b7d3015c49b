//! `asr-ctk validate`.

mod progress;

use crate::exit;
use crate::format::FindingsFormat;
use anyhow::{Context, Result};
use asr_suite::check::{CheckOptions, DEFAULT_MAX_LINE_BYTES, StreamReport, check_related};
use asr_suite::render::escape_controls;
use asr_suite::render::sarif;
use asr_suite::report::FileReport;
use asr_suite::walk;
use std::fs::{File, Metadata};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Streams to check (`-` for standard input); a directory stands for every .jsonl file below it.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FindingsFormat::Human)]
    format: FindingsFormat,
    /// Leave out the kit's inferred structural checks (ASR-X-...): report ASR rules only.
    #[arg(long)]
    no_inferred: bool,
    /// Leave out one rule or inferred check (repeatable), e.g. --disable ASR-X-017.
    #[arg(long, value_name = "RULE")]
    disable: Vec<String>,
    /// Check each stream on its own: no lineage resolution or delegation checks between them.
    #[arg(long)]
    independent: bool,
    /// The longest line checked, in bytes; a longer one is reported (ASR-X-006) and skipped.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE_BYTES)]
    max_line_bytes: usize,
}

pub fn run(args: &Args) -> Result<u8> {
    let catalog = asr_suite::catalog::Catalog::embedded();
    for rule in &args.disable {
        anyhow::ensure!(
            catalog.knows(rule),
            "--disable {rule}: no such rule or inferred check (see `asr-ctk rules`)"
        );
    }
    let mut options = CheckOptions::default();
    options.inferred = !args.no_inferred;
    options.disabled = args.disable.iter().cloned().collect();
    options.max_line_bytes = args.max_line_bytes;
    let walk = walk::walk(&args.files);
    let mut failed = false;
    for note in &walk.notes {
        eprintln!("asr-ctk: {note}");
        failed |= note.is_failure();
    }
    let mut reports: Vec<(String, StreamReport)> = Vec::new();
    for path in &walk.files {
        match check_path(path, &options) {
            Ok(report) => reports.push((path.to_string_lossy().into_owned(), report)),
            Err(error) => {
                eprintln!("asr-ctk: {error:#}");
                failed = true;
            }
        }
    }
    let mut streams: Vec<StreamReport> = reports.iter().map(|(_, r)| r.clone()).collect();
    if !args.independent {
        check_related(&mut streams, &options);
    }
    let reports: Vec<FileReport> = reports
        .into_iter()
        .zip(streams)
        .map(|((name, _), r)| FileReport::new(name, r))
        .collect();
    let code = if failed {
        exit::USAGE_OR_IO
    } else if reports.iter().all(|r| r.valid) {
        exit::OK
    } else {
        exit::INVALID
    };
    exit::after_printing(code, print(&reports, args.format))
}

fn print(reports: &[FileReport], format: FindingsFormat) -> Result<()> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match format {
        FindingsFormat::Human => {
            for report in reports {
                print_human(&mut out, report)?;
            }
        }
        FindingsFormat::Json => {
            for report in reports {
                serde_json::to_writer(&mut out, report)?;
                writeln!(out)?;
            }
        }
        FindingsFormat::Sarif => {
            serde_json::to_writer_pretty(&mut out, &sarif::validation(reports))?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(())
}

fn check_path(path: &Path, options: &CheckOptions) -> Result<StreamReport> {
    if path.as_os_str() == "-" {
        return progress::check(io::stdin().lock(), "-", stdin_len(), options)
            .context("failed to read standard input");
    }
    let name = path.display().to_string();
    let file = File::open(path).with_context(|| format!("failed to open {name}"))?;
    let len = file
        .metadata()
        .ok()
        .filter(Metadata::is_file)
        .map(|m| m.len());
    progress::check(file, &name, len, options).with_context(|| format!("failed to read {name}"))
}

/// The size of standard input when it is a regular file (`< stream.jsonl`).
fn stdin_len() -> Option<u64> {
    let fd = io::stdin().as_fd().try_clone_to_owned().ok()?;
    let meta = File::from(fd).metadata().ok()?;
    meta.is_file().then_some(meta.len())
}

fn print_human(out: &mut impl Write, report: &FileReport) -> io::Result<()> {
    let catalog = asr_suite::catalog::Catalog::embedded();
    let mut cited: Vec<&str> = Vec::new();
    for d in &report.diagnostics {
        if !cited.contains(&d.rule.as_str()) {
            cited.push(d.rule.as_str());
        }
        let mark = if d.is_inferred() { " (inferred)" } else { "" };
        let at = if d.pointer.is_empty() {
            String::new()
        } else {
            format!(" at {}", escape_controls(&d.pointer))
        };
        // A message quotes the stream: a C1 control (U+009B starts a terminal's control
        // sequence) is escaped like any other, never written raw to a terminal.
        writeln!(
            out,
            "{}:{}: {}[{}]{mark}{at}: {}",
            escape_controls(&report.file),
            d.line,
            d.severity,
            d.rule,
            escape_controls(&d.message)
        )?;
    }
    // What each rule cited requires, once, after its findings.
    for rule in cited {
        if let Some(requirement) = catalog.summary(rule) {
            writeln!(out, "  {rule} requires: {requirement}")?;
        }
    }
    let c = report.counts;
    writeln!(
        out,
        "{}: {}, {} records; ASR rules: {} errors, {} warnings, {} notices; inferred checks: {} errors, {} warnings, {} notices",
        escape_controls(&report.file),
        if report.valid { "valid" } else { "invalid" },
        report.records,
        c.asr.error,
        c.asr.warning,
        c.asr.notice,
        c.inferred.error,
        c.inferred.warning,
        c.inferred.notice
    )
}
