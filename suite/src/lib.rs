//! asr-suite: the library of the asr-ctk conformance kit for ASR streams: the rule
//! catalog, the record schemas, the stream checker and the stream generators.

pub mod case;
pub mod catalog;
pub mod check;
pub mod diagnostic;
pub mod generate;
pub mod json;
pub mod lines;
pub mod lint;
pub mod refs;
pub mod report;
pub mod schema;
pub mod spec;
