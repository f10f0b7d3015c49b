//! The fuzzing harness's library: valid streams generated from arbitrary bytes
//! ([`generator`]).
pub mod generator;
