//! Where findings go: filtered by the options, worded with the rule they break, and capped,
//! so that a hostile line (a million broken parts) cannot flood memory or output. A capped
//! finding still counts: the cap leaves one finding that stands for the rest, with the rule
//! and severity of the most severe of them, so a stream's verdict never changes.

use super::{CheckOptions, Finding, Place};
use crate::diagnostic::{Diagnostic, MAX_PER_LINE, MAX_PER_STREAM};

#[derive(Debug)]
struct Overflow {
    count: usize,
    worst: Diagnostic,
}

#[derive(Debug)]
pub(crate) struct Sink {
    options: CheckOptions,
    diagnostics: Vec<Diagnostic>,
    line_listed: usize,
    line_overflow: Option<Overflow>,
    stream_overflow: Option<Overflow>,
}

impl Sink {
    pub(crate) fn new(options: CheckOptions) -> Self {
        Sink {
            options,
            diagnostics: Vec::new(),
            line_listed: 0,
            line_overflow: None,
            stream_overflow: None,
        }
    }

    pub(crate) fn options(&self) -> &CheckOptions {
        &self.options
    }

    /// Lists a finding of the current line; returns its index when it is listed.
    pub(crate) fn push(&mut self, place: &Place, finding: Finding) -> Option<usize> {
        let diagnostic = self.word(place, finding)?;
        if self.line_listed >= MAX_PER_LINE {
            add(&mut self.line_overflow, diagnostic);
            return None;
        }
        self.line_listed += 1;
        self.list(diagnostic)
    }

    /// Lists a finding that belongs to no line being read (it is settled at the end).
    pub(crate) fn push_late(&mut self, place: &Place, finding: Finding) -> Option<usize> {
        let diagnostic = self.word(place, finding)?;
        self.list(diagnostic)
    }

    /// Closes the current line: what its cap held back is summed up in one finding.
    pub(crate) fn end_line(&mut self) {
        self.line_listed = 0;
        if let Some(overflow) = self.line_overflow.take() {
            let summary = summarize(overflow, "on this line");
            self.list(summary);
        }
    }

    /// All findings, in the order listed, the stream cap's summary last.
    pub(crate) fn finish(mut self) -> Vec<Diagnostic> {
        self.end_line();
        if let Some(overflow) = self.stream_overflow.take() {
            self.diagnostics.push(summarize(overflow, "in this stream"));
        }
        self.diagnostics
    }

    fn list(&mut self, diagnostic: Diagnostic) -> Option<usize> {
        if self.diagnostics.len() >= MAX_PER_STREAM {
            add(&mut self.stream_overflow, diagnostic);
            return None;
        }
        self.diagnostics.push(diagnostic);
        Some(self.diagnostics.len() - 1)
    }

    fn word(&self, place: &Place, finding: Finding) -> Option<Diagnostic> {
        if !self.options.reports(finding.rule.as_str()) {
            return None;
        }
        // The rule's requirement stays in the catalog: renderers show it where people read.
        let message = finding.message;
        Some(Diagnostic {
            rule: finding.rule,
            severity: finding.severity,
            line: place.line.max(1),
            seq: place.seq,
            id: place.id.clone(),
            pointer: finding.pointer,
            message,
        })
    }
}

fn add(overflow: &mut Option<Overflow>, diagnostic: Diagnostic) {
    match overflow {
        None => {
            *overflow = Some(Overflow {
                count: 1,
                worst: diagnostic,
            });
        }
        Some(o) => {
            o.count += 1;
            if diagnostic.severity < o.worst.severity {
                o.worst = diagnostic;
            }
        }
    }
}

fn summarize(overflow: Overflow, scope: &str) -> Diagnostic {
    let Overflow { count, mut worst } = overflow;
    worst.message = format!(
        "{count} more findings {scope} are not listed (the kit lists at most {MAX_PER_LINE} a line and \
         {MAX_PER_STREAM} a stream); the most severe of them: {}",
        worst.message
    );
    worst
}
