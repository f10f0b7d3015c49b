//! asr-suite: the library of the asr-ctk conformance kit for ASR streams: the rule
//! catalog, the record schemas, the stream checker and the reference reader, and, behind
//! features, the kit's own machinery.
//!
//! The modules follow the way a stream goes through the kit, each using only those above it
//! (a test holds them to it):
//!
//! 1. bytes to lines and JSON values: [`lines`], [`json`], [`refs`] (reference grammar);
//! 2. a record's one meaning: [`model`] (the header, parts' effective values, tags);
//! 3. judged and read: [`schema`], [`check`] with [`diagnostic`] and [`report`]; [`reading`];
//! 4. named by the catalog: [`rule`], [`catalog`], [`spec`], [`embedded`]; spoken: [`protocol`];
//! 5. `kit`: the corpus and the sources (`case`, `source`, `fidelity`, `facts`, `conserve`,
//!    `walk`, `files`), judging (`judge`, `reference`), reports (`conformance`,
//!    `expectations`, `compare`, `shard`) and lints (`lint`), streams to measure with
//!    (`generate`);
//! 6. `fuzz`: generators, mutators, the oracle and campaigns; `render`: the reports' pages.
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

// Bytes to lines and JSON values.
mod compact;
pub mod diagnostic;
pub mod json;
pub mod lines;
pub mod refs;
pub mod rule;
mod text;

// A record's one meaning.
pub mod model;

// Judged and read.
pub mod check;
pub mod reading;
pub mod report;
pub mod schema;
mod tape;

// Named by the catalog, spoken in the protocol.
pub mod catalog;
pub mod embedded;
pub mod protocol;
pub mod spec;

// The kit's own machinery: the corpus and the sources, judging, reports, lints.
#[cfg(feature = "kit")]
pub mod case;
#[cfg(feature = "kit")]
pub mod compare;
#[cfg(feature = "kit")]
pub mod conformance;
#[cfg(feature = "kit")]
pub mod conserve;
#[cfg(feature = "kit")]
pub mod expectations;
#[cfg(feature = "kit")]
pub mod facts;
#[cfg(feature = "kit")]
pub mod fidelity;
#[cfg(feature = "kit")]
pub mod files;
#[cfg(feature = "kit")]
pub mod generate;
#[cfg(feature = "kit")]
pub mod judge;
#[cfg(feature = "kit")]
pub mod lint;
#[cfg(feature = "kit")]
pub mod reference;
#[cfg(feature = "kit")]
pub mod shard;
#[cfg(feature = "kit")]
pub mod source;
#[cfg(feature = "kit")]
pub mod walk;

// Fuzzing and the reports' pages.
#[cfg(feature = "fuzz")]
pub mod fuzz;
#[cfg(feature = "render")]
pub mod render;
