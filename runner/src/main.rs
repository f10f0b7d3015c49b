//! `asr-ctk`: the command line of the ASR conformance kit.

mod adapter;
mod cmd;
mod corpus;
mod exit;
mod format;
mod limits;
mod role;
mod text_diff;
mod write;

use clap::{Parser, Subcommand};
use cmd::{adapter as adapter_cmd, cases, diff, fuzz, read, report, rules, run, spec, validate};
use std::process::ExitCode;

/// Conformance checks for ASR streams (agent session records, JSON lines).
#[derive(Debug, Parser)]
#[command(name = "asr-ctk", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check ASR streams against the rule catalog and the record schemas.
    ///
    /// Exit status: 0 when every stream is valid, 1 when any has an error, 2 for usage or
    /// I/O errors. Streams given together are also checked against each other (lineage
    /// references between them resolve; a parent and child agree on the delegation).
    Validate(validate::Args),
    /// List the rule catalog: every ASR rule in hand and the kit's inferred checks, with
    /// the corpus's positive and negative cases for each.
    Rules(rules::Args),
    /// List the cases of the corpus, filtered by rule, role, verdict or name.
    ///
    /// Exit status: 0 when some case matches, 1 when none does, 2 for usage or I/O errors.
    Cases(cases::Args),
    /// The spec-change gate.
    #[command(subcommand)]
    Spec(SpecCommand),
    /// Run the corpus against an implementation through its adapter (PROTOCOL.md), and
    /// write the conformance reports. Without --adapter, the kit's reference implementation.
    ///
    /// Exit status: 0 when no case failed (non-strict cases are no failure; with --expect,
    /// when the results match the expectations), 1 otherwise, 2 for usage or I/O errors, 3
    /// when nothing could be run (the corpus did not load, no case matches the selection, the
    /// adapter did not start), 130 when interrupted by SIGINT or SIGTERM (the report of what ran is
    /// written).
    Run(Box<run::Args>),
    /// Print the reference reader's reading of streams (PROTOCOL.md, "Readers").
    ///
    /// Exit status: 0 when the reader accepts every stream, 1 when it does not accept one
    /// (the reasons are on stderr and in `reasons`), 2 for usage or I/O errors.
    Read(read::Args),
    /// Run two implementations on the same streams and list every disagreement, by rule
    /// and JSON Pointer.
    ///
    /// Exit status: 0 when they agree, 1 when they do not, 2 for usage or I/O errors, 3 when
    /// an adapter did not start, 130 when interrupted by SIGINT or SIGTERM.
    #[command(override_usage = "asr-ctk diff --adapter <CMD> --adapter <CMD> [OPTIONS] [FILE]...")]
    Diff(Box<diff::Args>),
    /// Fuzz an implementation: generated valid streams and streams with one clause of a rule
    /// broken, judged against the reference; each disagreement shrunk and written as a case.
    ///
    /// Exit status: 0 when the implementation agreed with the reference on every stream, 1
    /// when it did not (the cases are under OUT/found/), 2 for usage or I/O errors, 3 when the
    /// adapter did not start, 130 when interrupted by SIGINT or SIGTERM.
    Fuzz(Box<fuzz::Args>),
    /// Built-in adapters.
    #[command(subcommand)]
    Adapter(adapter_cmd::AdapterCommand),
    /// Conformance reports.
    #[command(subcommand)]
    Report(report::ReportCommand),
}

#[derive(Debug, Subcommand)]
enum SpecCommand {
    /// Compare a spec text with the catalog: rules new, reworded or gone, and their cases.
    ///
    /// Exit status: 0 when the catalog and the spec agree, 1 when they do not, 2 for usage
    /// or I/O errors.
    Check(spec::Args),
}

fn main() -> ExitCode {
    if let Some(kit) = std::env::var_os(adapter::supervise::WATCHDOG_VAR) {
        return ExitCode::from(adapter::supervise::watchdog(&kit.to_string_lossy()));
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Validate(args) => validate::run(&args),
        Command::Rules(args) => rules::run(&args),
        Command::Cases(args) => cases::run(&args),
        Command::Spec(SpecCommand::Check(args)) => spec::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Adapter(command) => adapter_cmd::run(&command),
        Command::Read(args) => read::run(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Fuzz(args) => fuzz::run(&args),
        Command::Report(command) => report::run(&command, run::positions),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        // A reader that stops early (`| head`) is not an error of ours.
        Err(error) if exit::is_broken_pipe(&error) => ExitCode::from(exit::OK),
        Err(error) => {
            eprintln!("asr-ctk: {error:#}");
            ExitCode::from(exit::USAGE_OR_IO)
        }
    }
}
