//! Writing the reports of `validate` as they come, in the format asked for.

use crate::format::FindingsFormat;
use asr_suite::render::escape_controls;
use asr_suite::render::sarif;
use asr_suite::report::FileReport;
use std::io::{self, Write};

/// Writes each report as it is given: human and JSON lines at once (flushed, so a reader of
/// the output sees each file's as soon as it is checked, unless [`Emitter::flushed_at_end`]);
/// SARIF, one document for every file, at the end.
pub struct Emitter<W: Write> {
    out: W,
    format: FindingsFormat,
    /// Whether each report is flushed as it is written.
    flush_each: bool,
    /// For SARIF: the reports, until the end.
    held: Vec<FileReport>,
    /// Whether every report given was valid.
    pub valid: bool,
    /// Whether the reader of the output has gone: the reports are then still counted, so
    /// the exit status is the same as if all were read (`| head` changes nothing).
    broken: bool,
}

impl<W: Write> Emitter<W> {
    pub fn new(out: W, format: FindingsFormat) -> Self {
        Emitter {
            out,
            format,
            flush_each: true,
            held: Vec::new(),
            valid: true,
            broken: false,
        }
    }

    pub fn format(&self) -> FindingsFormat {
        self.format
    }

    /// Flushes only when the buffer is full and at the end, for reports all ready at once
    /// (those held for the checks across streams): one write of each, not of each report.
    pub fn flushed_at_end(&mut self) {
        self.flush_each = false;
    }

    /// Writes one file's report.
    pub fn emit(&mut self, report: FileReport) -> anyhow::Result<()> {
        let rendered = render(self.format, report)?;
        self.put(rendered)
    }

    /// Writes one file's report, rendered (on any thread) by [`render`].
    pub fn put(&mut self, rendered: Rendered) -> anyhow::Result<()> {
        let valid = match &rendered {
            Rendered::Text { valid, .. } => *valid,
            Rendered::Held(report) => report.valid,
        };
        self.valid &= valid;
        if self.broken {
            return Ok(());
        }
        let written = self.write(rendered);
        self.unless_gone(written)
    }

    fn unless_gone(&mut self, written: anyhow::Result<()>) -> anyhow::Result<()> {
        match written {
            Err(error) if crate::exit::is_broken_pipe(&error) => {
                self.broken = true;
                Ok(())
            }
            other => other,
        }
    }

    fn write(&mut self, rendered: Rendered) -> anyhow::Result<()> {
        match rendered {
            Rendered::Text { text, .. } => {
                self.out.write_all(&text)?;
                if self.flush_each {
                    self.out.flush()?;
                }
            }
            Rendered::Held(report) => self.held.push(report),
        }
        Ok(())
    }

    /// Writes what waited for the end.
    pub fn finish(mut self) -> anyhow::Result<()> {
        if self.broken {
            return Ok(());
        }
        let written = self.write_end();
        self.unless_gone(written)
    }

    fn write_end(&mut self) -> anyhow::Result<()> {
        if self.format == FindingsFormat::Sarif {
            serde_json::to_writer_pretty(&mut self.out, &sarif::validation(&self.held))?;
            writeln!(self.out)?;
        }
        self.out.flush()?;
        Ok(())
    }
}

/// One file's report made ready to write: its text, or for SARIF the report itself.
pub enum Rendered {
    Text { text: Vec<u8>, valid: bool },
    Held(FileReport),
}

/// Renders one file's report in `format`, on whatever thread checked it.
pub fn render(format: FindingsFormat, report: FileReport) -> anyhow::Result<Rendered> {
    let mut text = Vec::with_capacity(256);
    match format {
        FindingsFormat::Human => print_human(&mut text, &report)?,
        FindingsFormat::Json => {
            serde_json::to_writer(&mut text, &report)?;
            text.push(b'\n');
        }
        FindingsFormat::Sarif => return Ok(Rendered::Held(report)),
    }
    Ok(Rendered::Text {
        text,
        valid: report.valid,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink counting the writes that reach it.
    #[derive(Default)]
    struct Counted {
        writes: usize,
        bytes: Vec<u8>,
    }

    impl Write for &mut Counted {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.writes += 1;
            self.bytes.extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Writes 100 small reports through a buffer, flushed each or at the end: what reached
    /// the sink, and in how many writes.
    fn emitted(at_end: bool) -> (usize, Vec<u8>) {
        let mut sink = Counted::default();
        let mut emitter = Emitter::new(io::BufWriter::new(&mut sink), FindingsFormat::Json);
        if at_end {
            emitter.flushed_at_end();
        }
        for n in 0..100 {
            let text = format!("{{\"file\":\"{n}.jsonl\"}}\n").into_bytes();
            emitter
                .put(Rendered::Text { text, valid: true })
                .expect("written");
        }
        emitter.finish().expect("finished");
        (sink.writes, sink.bytes)
    }

    #[test]
    fn reports_flushed_at_end_are_the_same_bytes_in_fewer_writes() {
        let (each, streamed) = emitted(false);
        let (at_end, held) = emitted(true);
        assert_eq!(each, 100, "a report flushed as it is written is one write");
        assert!(
            at_end <= 2,
            "{at_end} writes for reports flushed at the end"
        );
        assert_eq!(streamed, held);
        assert!(held.starts_with(b"{\"file\":\"0.jsonl\"}\n{\"file\":\"1.jsonl\"}"));
    }
}
