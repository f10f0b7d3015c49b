//! The subcommands of `asr-ctk`, one module each, named as the subcommand; `main` parses the
//! command line and calls the one asked for. A command imports no other command: what two
//! of them share is outside `cmd`.

pub mod adapter;
pub mod cases;
pub mod diff;
pub mod fuzz;
pub mod read;
pub mod report;
pub mod rules;
pub mod run;
pub mod spec;
pub mod validate;
