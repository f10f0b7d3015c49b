//! asr-suite: the library of the asr-ctk conformance kit for ASR streams: the rule
//! catalog, the record schemas, the stream checker and the stream generators.
//!
//! Checking a stream:
//!
//! ```
//! use asr_suite::check::{CheckOptions, check_bytes};
//!
//! let stream = concat!(
//!     r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"codex"},"sessionId":"s1"}"#, "\n",
//!     r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[{"type":"image","data":"AA==","blob":{"blob":"sha256:0f"},"mimeType":"image/png"}]}"#, "\n",
//! );
//! let report = check_bytes(stream.as_bytes(), &CheckOptions::default());
//! assert!(!report.valid());
//! let finding = &report.diagnostics[0];
//! assert_eq!((finding.rule.as_str(), finding.line, finding.pointer.as_str()), ("ASR-212", 2, "/content/0"));
//! ```

pub mod case;
pub mod catalog;
pub mod check;
mod compact;
pub mod conformance;
pub mod conserve;
pub mod diagnostic;
pub mod embedded;
pub mod expectations;
pub mod facts;
pub mod fidelity;
pub mod files;
#[cfg(feature = "fuzz")]
pub mod fuzz;
pub mod generate;
pub mod json;
pub mod judge;
pub mod lines;
pub mod lint;
pub mod model;
pub mod protocol;
pub mod reading;
pub mod reference;
pub mod refs;
#[cfg(feature = "render")]
pub mod render;
pub mod report;
pub mod rule;
pub mod schema;
pub mod source;
pub mod spec;
mod text;
pub mod walk;
