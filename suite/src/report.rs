//! The validation report of one stream: the JSON that `asr-ctk validate --format json`
//! prints, one object per line per file, and that validator adapters answer with.
//!
//! Its schema is `schemas/validation.schema.json`. A full example:
//!
//! ```json
//! {"file": "cases/lineage/ASR-402/n_root_and_spawned.jsonl",
//!  "valid": false,
//!  "records": 1,
//!  "diagnostics": [{"rule": "ASR-402", "severity": "error", "line": 1, "seq": 0, "id": "h",
//!                   "pointer": "/lineage",
//!                   "message": "root: true appears with spawnedBy"}],
//!  "counts": {"asr": {"error": 1, "warning": 0, "notice": 0},
//!             "inferred": {"error": 0, "warning": 0, "notice": 0}}}
//! ```
//!
//! `file`, `valid`, `records` and `diagnostics` (with the members of
//! [`Diagnostic`]) are an interface other tools read: their names do not change.

use crate::check::StreamReport;
use crate::diagnostic::{Diagnostic, Severity};
use serde::{Deserialize, Serialize};

/// One stream's validation result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct FileReport {
    /// The path as given, or `-` for standard input.
    pub file: String,
    /// No finding of severity error.
    pub valid: bool,
    /// Lines read as JSON objects, the header included.
    pub records: usize,
    /// Every finding, by line.
    pub diagnostics: Vec<Diagnostic>,
    /// Findings counted by severity, ASR rules and inferred checks apart.
    pub counts: Counts,
}

/// Findings by severity, for ASR rules and for the kit's inferred checks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Counts {
    /// Under ASR rules.
    pub asr: SeverityCounts,
    /// Under inferred checks (`ASR-X-...`).
    pub inferred: SeverityCounts,
}

/// Findings of each severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct SeverityCounts {
    /// Errors.
    pub error: usize,
    /// Warnings.
    pub warning: usize,
    /// Notices.
    pub notice: usize,
}

impl FileReport {
    /// The report of a checked stream.
    pub fn new(file: impl Into<String>, report: StreamReport) -> Self {
        let mut counts = Counts::default();
        for d in &report.diagnostics {
            let side = if d.is_inferred() {
                &mut counts.inferred
            } else {
                &mut counts.asr
            };
            match d.severity {
                Severity::Error => side.error += 1,
                Severity::Warning => side.warning += 1,
                Severity::Notice => side.notice += 1,
            }
        }
        FileReport {
            file: file.into(),
            valid: report.valid(),
            records: report.records,
            diagnostics: report.diagnostics,
            counts,
        }
    }
}
