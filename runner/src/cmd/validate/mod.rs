//! `asr-ctk validate`: the streams given, and those below the directories given, checked on
//! every core (`--jobs`), each file's findings written as soon as it and those before it
//! are checked (with `--independent`; else once the checks across streams are done, over
//! what they keep of each stream: [`asr_suite::check::StreamSummary`]); or one part of them
//! (`--shard i/n`) into a shard file, and the shard files joined (`--merge`).

mod emit;
mod merge;
mod progress;
mod spool;

use crate::exit;
use crate::format::FindingsFormat;
use anyhow::{Context, Result};
use asr_suite::check::many::in_order;
use asr_suite::check::{CheckOptions, DEFAULT_MAX_LINE_BYTES, Related, StreamReport, related};
use asr_suite::report::FileReport;
use asr_suite::shard::{Header, Options, Shard, ShardLine, shard_of};
use asr_suite::walk::{self, Wanted};
use emit::{Emitter, Rendered, render};
use spool::{Entry, Spool, Spooled};
use std::fs::{File, Metadata};
use std::io::{self, IsTerminal, Write};
use std::num::NonZeroUsize;
use std::ops::ControlFlow;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Streams to check (`-` for standard input); a directory stands for every .jsonl file
    /// below it. With --merge: the shard files to join.
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
    /// Check each stream on its own: no lineage resolution or delegation checks between
    /// them. Each file's findings are then written as soon as it and those before it are
    /// checked.
    #[arg(long)]
    independent: bool,
    /// The longest line checked, in bytes; a longer one is reported (ASR-X-006) and skipped.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE_BYTES)]
    max_line_bytes: usize,
    /// How many files are checked at once (default: the cores). The output is in the same
    /// order whatever it is: the order the files are given, each directory's in its walk's.
    #[arg(long, value_name = "N")]
    jobs: Option<NonZeroUsize>,
    /// Check only part I of N of the files walked (split by path, the same split on every
    /// machine), and write a shard file (JSON Lines, schemas/validation-shard.schema.json)
    /// instead of findings, for --merge. Exit 0 once it is written, whatever it found.
    #[arg(long, value_name = "I/N", conflicts_with = "merge")]
    shard: Option<Shard>,
    /// Join shard files (FILE...: every part of one run) into the output of the whole run,
    /// the checks across streams included (unless --independent), with its exit status.
    #[arg(long, conflicts_with_all = ["no_inferred", "disable", "max_line_bytes"])]
    merge: bool,
}

pub fn run(args: &Args) -> Result<u8> {
    let jobs = args.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
        NonZeroUsize::get,
    );
    if args.merge {
        return merge::run(&args.files, args.format, args.independent);
    }
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
    // The walk goes on beside the checks: the first files are checked while it finds the
    // rest.
    let (found, paths) = std::sync::mpsc::channel::<PathBuf>();
    let given = &args.files;
    let shard = args.shard;
    let checker = Checker {
        options: options.clone(),
        // One bar at a time on a terminal: only when files are checked one at a time, or
        // one file is given. Asked once: off a terminal a file costs no more than its check.
        bars: (jobs == 1 || (given.len() == 1 && !given[0].is_dir())) && io::stderr().is_terminal(),
    };
    let header = shard.map(|shard| Header {
        kit_version: env!("CARGO_PKG_VERSION").to_owned(),
        shard: shard.to_string(),
        arguments: given
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect(),
        options: Options {
            inferred: options.inferred,
            disabled: args.disable.clone(),
            max_line_bytes: options.max_line_bytes,
        },
    });
    let mut failed = false;
    let mut entries = 0;
    let mut emitter = Emitter::new(io::BufWriter::new(io::stdout()), args.format);
    let (printed, walk) = std::thread::scope(|scope| {
        let walker = scope.spawn(move || {
            walk::walk_each(given, Wanted::Extension("jsonl".into()), |path| {
                let _ = found.send(path.to_owned());
            })
        });
        let items = paths
            .into_iter()
            .enumerate()
            .filter(|(_, path)| shard.is_none_or(|s| shard_of(path, s.n) == s.i));
        let printed = match &header {
            Some(header) => write_shard(&checker, jobs, items, header, &mut entries),
            None if args.independent => {
                let format = args.format;
                let rendered = |_, file, result: Result<StreamReport>| {
                    result.map(|report| render(format, FileReport::new(file, report)))
                };
                checker.each(jobs, items, rendered, |rendered| match rendered {
                    Ok(rendered) => emitter.put(rendered?),
                    Err(error) => {
                        eprintln!("asr-ctk: {error:#}");
                        failed = true;
                        Ok(())
                    }
                })
            }
            None => related_then_emit(&checker, jobs, items, &options, &mut emitter, &mut failed),
        };
        // A walk that panicked found nothing for sure: the run fails.
        let walk = walker
            .join()
            .map_err(|_| anyhow::anyhow!("failed to walk the paths given"));
        (printed, walk)
    });
    let walk = match walk {
        Ok(walk) => walk,
        Err(error) => {
            eprintln!("asr-ctk: {error}");
            return Ok(exit::USAGE_OR_IO);
        }
    };
    let mut failures = Vec::new();
    for note in &walk.notes {
        eprintln!("asr-ctk: {note}");
        if note.is_failure() {
            failures.push(note.to_string());
        }
    }
    if header.is_some() {
        let ended = printed.and_then(|()| {
            end_shard(&ShardLine::End {
                entries,
                walked: walk.taken,
                failures,
            })
        });
        return exit::after_printing(exit::OK, ended);
    }
    failed |= !failures.is_empty();
    let valid = emitter.valid;
    let printed = printed.and_then(|()| emitter.finish());
    let code = if failed {
        exit::USAGE_OR_IO
    } else if valid {
        exit::OK
    } else {
        exit::INVALID
    };
    exit::after_printing(code, printed)
}

/// How files are checked.
struct Checker {
    options: CheckOptions,
    bars: bool,
}

impl Checker {
    /// Checks every file of `items` (each with its place in the whole walk) on `jobs`
    /// threads, turns each result into what `then` makes of it (with the place and the
    /// file's name as a report names it) on the thread that checked it, and gives that to
    /// `each` in the files' order; stops at the first error `each` gives, and gives it.
    fn each<R: Send>(
        &self,
        jobs: usize,
        items: impl Iterator<Item = (usize, PathBuf)> + Send,
        then: impl Fn(usize, String, Result<StreamReport>) -> R + Sync,
        each: impl FnMut(R) -> Result<()> + Send,
    ) -> Result<()> {
        let (options, bars) = (&self.options, self.bars);
        let work = |_, (index, path): (usize, PathBuf)| {
            let result = check_path(&path, options, bars);
            then(index, path.to_string_lossy().into_owned(), result)
        };
        ordered(items, jobs, work, each)
    }
}

/// [`in_order`], stopping at the first error of `each` and giving it.
fn ordered<I: Send, T: Send>(
    items: impl Iterator<Item = I> + Send,
    jobs: usize,
    work: impl Fn(usize, I) -> T + Sync,
    mut each: impl FnMut(T) -> Result<()> + Send,
) -> Result<()> {
    let mut stopped = Ok(());
    let _ = in_order(items, jobs, work, |_, made| match each(made) {
        Ok(()) => ControlFlow::Continue(()),
        Err(error) => {
            stopped = Err(error);
            ControlFlow::Break(())
        }
    });
    stopped
}

/// Checks every file, keeping its findings in a spool and its summary in memory; runs the
/// checks across streams over the summaries; then writes each file's findings, changed by
/// them (read back, changed and rendered on `jobs` threads, written in order).
fn related_then_emit(
    checker: &Checker,
    jobs: usize,
    items: impl Iterator<Item = (usize, PathBuf)> + Send,
    options: &CheckOptions,
    emitter: &mut Emitter<impl Write + Send>,
    failed: &mut bool,
) -> Result<()> {
    let mut spool = Spool::new();
    let mut summaries = Vec::new();
    let format = emitter.format();
    let keep = |_, file: String, result: Result<StreamReport>| {
        result.and_then(|mut report| {
            let summary = std::mem::take(&mut report.summary);
            let spooled = Spooled {
                file,
                records: report.records,
                diagnostics: report.diagnostics,
            };
            let findings = spooled.line()?;
            // Rendered as it is written when the checks across streams leave it alone.
            let rendered = match render(format, spooled.into_report())? {
                Rendered::Text { text, valid } => Some((text, valid)),
                Rendered::Held(_) => None,
            };
            Ok((summary, Entry { findings, rendered }))
        })
    };
    checker.each(jobs, items, keep, |kept| {
        match kept {
            Ok((summary, entry)) => {
                summaries.push(summary);
                spool
                    .push(&entry)
                    .context("failed to keep the findings until the checks across streams")?;
            }
            Err(error) => {
                eprintln!("asr-ctk: {error:#}");
                *failed = true;
            }
        }
        Ok(())
    })?;
    let mut changes: std::collections::BTreeMap<usize, Related> =
        related(&summaries.iter().collect::<Vec<_>>(), options)
            .into_iter()
            .enumerate()
            .filter(|(_, change)| !change.is_empty())
            .collect();
    // An entry written as it was rendered is a copy, cheaper on the thread that reads the
    // spool than handed to another (measured: one thread writes 10,000 files' output in
    // about two thirds of the time two take): the threads are worth it only when many
    // entries are rendered again.
    let threads = if changes.len() * REWORKED_SHARE >= summaries.len() {
        jobs
    } else {
        1
    };
    // What the checks across streams read of every stream is freed beside the writing, not
    // before it: the other cores are idle by now. (A thread that cannot start frees it here.)
    let freed = std::thread::Builder::new()
        .spawn(move || drop(summaries))
        .ok();
    let mut spooled = spool
        .read()
        .context("failed to read back the findings kept")?
        .enumerate()
        .map(move |(k, entry)| (entry, changes.remove(&k)));
    // Most entries are written as they were rendered, a hand-off's work or less: they go to
    // the threads in runs, so the hand-offs do not cost more than the work.
    let runs = std::iter::from_fn(|| {
        let run: Vec<_> = spooled.by_ref().take(READ_BACK_RUN).collect();
        (!run.is_empty()).then_some(run)
    });
    emitter.flushed_at_end();
    let work = |_, run: Vec<(io::Result<Entry>, Option<Related>)>| {
        run.into_iter()
            .map(|(entry, change)| rerender(entry, change, format))
            .collect::<Vec<_>>()
    };
    let written = ordered(runs, threads, work, |run| {
        run.into_iter()
            .try_for_each(|rendered| emitter.put(rendered?))
    });
    if let Some(freed) = freed {
        let _ = freed.join();
    }
    written
}

/// The checks across streams change at least one entry in this many, and the entries are
/// read back, changed and rendered on every thread.
const REWORKED_SHARE: usize = 4;

/// How many spooled entries a thread reads back at a time.
const READ_BACK_RUN: usize = 32;

/// A spooled entry as it is written: as rendered when the checks across streams leave it
/// alone, else read back, changed and rendered again.
fn rerender(
    entry: io::Result<Entry>,
    change: Option<Related>,
    format: FindingsFormat,
) -> Result<Rendered> {
    let entry = entry.context("failed to read back the findings kept")?;
    if let (Some((text, valid)), None) = (entry.rendered, &change) {
        return Ok(Rendered::Text { text, valid });
    }
    let mut spooled =
        Spooled::parse(&entry.findings).context("failed to read back the findings kept")?;
    if let Some(change) = change {
        change.apply_to_findings(&mut spooled.diagnostics);
    }
    render(format, spooled.into_report())
}

/// Writes the shard file of the files selected but its end line: the header and an entry
/// for each, as each is checked, counted in `entries`.
fn write_shard(
    checker: &Checker,
    jobs: usize,
    items: impl Iterator<Item = (usize, PathBuf)> + Send,
    header: &Header,
    entries: &mut usize,
) -> Result<()> {
    let mut out = io::BufWriter::new(io::stdout());
    serde_json::to_writer(&mut out, &ShardLine::Header(header.clone()))?;
    writeln!(out)?;
    let entry = |index, file: String, result: Result<StreamReport>| {
        let line = match result {
            Ok(mut report) => {
                let summary = std::mem::take(&mut report.summary);
                ShardLine::Stream {
                    index,
                    report: FileReport::new(file, report),
                    summary,
                }
            }
            Err(error) => ShardLine::Failed {
                index,
                file,
                error: format!("{error:#}"),
            },
        };
        let mut text = serde_json::to_vec(&line)?;
        text.push(b'\n');
        Ok(text)
    };
    checker.each(jobs, items, entry, |text: Result<Vec<u8>>| {
        *entries += 1;
        out.write_all(&text?)?;
        Ok(())
    })?;
    out.flush()?;
    Ok(())
}

/// Writes a shard file's end line, once the walk is done.
fn end_shard(end: &ShardLine) -> Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer(&mut out, end)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}

fn check_path(path: &Path, options: &CheckOptions, bars: bool) -> Result<StreamReport> {
    if path.as_os_str() == "-" {
        return progress::check(io::stdin().lock(), "-", stdin_len(), options, bars)
            .context("failed to read standard input");
    }
    let name = path.display().to_string();
    let file = File::open(path).with_context(|| format!("failed to open {name}"))?;
    // The size is for the bar alone: a file's stat more is no small part of a small file.
    let len = bars
        .then(|| file.metadata().ok())
        .flatten()
        .filter(Metadata::is_file)
        .map(|m| m.len());
    progress::check(file, &name, len, options, bars)
        .with_context(|| format!("failed to read {name}"))
}

/// The size of standard input when it is a regular file (`< stream.jsonl`).
fn stdin_len() -> Option<u64> {
    let fd = io::stdin().as_fd().try_clone_to_owned().ok()?;
    let meta = File::from(fd).metadata().ok()?;
    meta.is_file().then_some(meta.len())
}
