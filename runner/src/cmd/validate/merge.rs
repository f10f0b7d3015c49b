//! `asr-ctk validate --merge`: the shard files of one run joined into its output.
//!
//! Each file is read twice, so that memory holds the summaries of the streams and not
//! their findings: once to check that the files are every part of one run and to take
//! each stream's summary; then, after the checks across streams, once more, the entries
//! taken by index from whichever file holds each, written as they come.

use super::emit::Emitter;
use crate::exit;
use crate::format::FindingsFormat;
use anyhow::{Context, Result, bail};
use asr_suite::check::{CheckOptions, StreamReport, StreamSummary, related};
use asr_suite::lines::{Line, LineReader};
use asr_suite::report::FileReport;
use asr_suite::shard::{Join, ShardLine};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};

/// The longest line of a shard file read: a stream's entry holds at most
/// [`asr_suite::check::MAX_PER_STREAM`] findings, each far below a KiB.
const LINE_BYTES: usize = 256 << 20;

pub fn run(files: &[PathBuf], format: FindingsFormat, independent: bool) -> Result<u8> {
    merge(files, format, independent).or_else(|error| {
        eprintln!("asr-ctk: {error:#}");
        Ok(exit::USAGE_OR_IO)
    })
}

fn merge(files: &[PathBuf], format: FindingsFormat, independent: bool) -> Result<u8> {
    for file in files {
        // Read twice: a FIFO or a device would give something else the second time.
        let meta = std::fs::metadata(file)
            .with_context(|| format!("failed to open shard file {}", file.display()))?;
        if !meta.is_file() {
            bail!(
                "shard file {} is not a regular file: a shard file is read twice",
                file.display()
            );
        }
    }
    let mut join = Join::default();
    // Each stream's summary by its index; none for a stream that could not be read.
    let mut summaries: BTreeMap<usize, Option<StreamSummary>> = BTreeMap::new();
    for (position, path) in files.iter().enumerate() {
        let name = path.display().to_string();
        let mut part = Join::part(&name, position);
        each_line(path, |text| {
            match join.line(&mut part, text)? {
                ShardLine::Stream { index, summary, .. } => {
                    summaries.insert(index, Some(summary));
                }
                ShardLine::Failed { index, .. } => {
                    summaries.insert(index, None);
                }
                ShardLine::Header(_) | ShardLine::End { .. } => {}
            }
            Ok(())
        })?;
        join.end(&part)?;
    }
    join.finish()?;
    let (Some(header), Some((_, failures))) = (join.header.clone(), join.walk.clone()) else {
        bail!("no shard file given");
    };
    let mut failed = !failures.is_empty();
    for failure in &failures {
        eprintln!("asr-ctk: {failure}");
    }
    let mut options = CheckOptions::default();
    options.inferred = header.options.inferred;
    options.disabled = header.options.disabled.iter().cloned().collect();
    options.max_line_bytes = header.options.max_line_bytes;
    // The changes of the checks across streams, by index.
    let mut changes = BTreeMap::new();
    if !independent {
        let (indices, kept): (Vec<usize>, Vec<StreamSummary>) = std::mem::take(&mut summaries)
            .into_iter()
            .filter_map(|(i, s)| Some((i, s?)))
            .unzip();
        let found = related(&kept.iter().collect::<Vec<_>>(), &options);
        drop(kept);
        changes = indices
            .into_iter()
            .zip(found)
            .filter(|(_, change)| !change.is_empty())
            .collect();
    }
    drop(summaries);
    let owners: Vec<usize> = join.owners().collect();
    let mut readers = files
        .iter()
        .map(|path| Entries::open(path))
        .collect::<Result<Vec<_>>>()?;
    let mut emitter = Emitter::new(io::BufWriter::new(io::stdout()), format);
    emitter.flushed_at_end();
    for (index, owner) in owners.into_iter().enumerate() {
        match readers[owner].next(index)? {
            ShardLine::Stream { report, .. } => {
                let mut stream = StreamReport::default();
                stream.records = report.records;
                stream.diagnostics = report.diagnostics;
                if let Some(change) = changes.remove(&index) {
                    change.apply_to_findings(&mut stream.diagnostics);
                }
                emitter.emit(FileReport::new(report.file, stream))?;
            }
            ShardLine::Failed { error, .. } => {
                eprintln!("asr-ctk: {error}");
                failed = true;
            }
            ShardLine::Header(_) | ShardLine::End { .. } => {
                bail!("stream {index} of the walk is not where the first reading found it")
            }
        }
    }
    let valid = emitter.valid;
    emitter.finish()?;
    Ok(if failed {
        exit::USAGE_OR_IO
    } else if valid {
        exit::OK
    } else {
        exit::INVALID
    })
}

/// Gives each line of the file `path` to `each`.
fn each_line(path: &Path, mut each: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
    let name = path.display();
    let file = File::open(path).with_context(|| format!("failed to open shard file {name}"))?;
    let mut lines = LineReader::new(BufReader::with_capacity(1 << 20, file), LINE_BYTES);
    while let Some(line) = lines
        .next_line()
        .with_context(|| format!("failed to read shard file {name}"))?
    {
        match line {
            Line::Text { bytes, .. } => each(bytes)?,
            Line::TooLong { number, len, .. } => {
                bail!("{name}:{number}: a line of {len} bytes, longer than a shard file's")
            }
        }
    }
    Ok(())
}

/// The entries of one shard file, read a second time.
struct Entries {
    name: String,
    lines: LineReader<BufReader<File>>,
}

impl Entries {
    fn open(path: &Path) -> Result<Self> {
        let name = path.display().to_string();
        let file = File::open(path).with_context(|| format!("failed to open shard file {name}"))?;
        Ok(Entries {
            name,
            lines: LineReader::new(BufReader::with_capacity(1 << 20, file), LINE_BYTES),
        })
    }

    /// The next entry, which must be of stream `index`.
    fn next(&mut self, index: usize) -> Result<ShardLine> {
        loop {
            let line = self
                .lines
                .next_line()
                .with_context(|| format!("failed to read shard file {}", self.name))?;
            let Some(Line::Text { bytes, .. }) = line else {
                bail!("shard file {} changed while it was read", self.name);
            };
            let entry: ShardLine = serde_json::from_slice(bytes)
                .with_context(|| format!("shard file {} changed while it was read", self.name))?;
            match &entry {
                ShardLine::Header(_) => {}
                ShardLine::Stream { index: at, .. } | ShardLine::Failed { index: at, .. }
                    if *at == index =>
                {
                    return Ok(entry);
                }
                _ => bail!("shard file {} changed while it was read", self.name),
            }
        }
    }
}
