//! The integration tests of the `asr-suite` library, in one binary: one link for all of
//! them, and one place (`helpers`) for what they share. The corpus (`cases`) and the source
//! fixtures (`sources`) are binaries of their own, with a trial for each case and fixture.

mod agreement;
mod bad_input;
mod catalog_spec;
// `pub`, as in the other test binaries that include the file: a helper that a binary
// leaves unused is no dead code of it.
pub mod helpers;
mod helpers_tests;
mod layout;
mod protocol_doc;
mod reading_stream;
mod readme;
mod rule_ids;
mod threads;
mod wrong_readings;
