//! The integration tests of the `asr-ctk` command, in one binary: one link for all of them,
//! and one place (`helpers`) for what they share.

mod browser;
mod cli;
mod compare;
mod faults;
mod fuzz;
mod fuzz_report;
mod golden;
mod helpers;
mod many;
mod merge;
mod node_reader;
mod nway;
mod pipeline;
mod producer_fuzz;
mod producers;
mod progress;
mod read_memory;
mod readers;
mod reference_limits;
mod reply_check;
mod run;
mod site;
mod trust;
mod walk;
