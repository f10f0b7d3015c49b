//! `asr-ctk`: the command line of the ASR conformance kit.

mod exit;
mod rules;
mod validate;

use clap::{Parser, Subcommand, ValueEnum};
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
    /// List the rule catalog: every ASR rule in hand and the kit's inferred checks.
    Rules(rules::Args),
}

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For people: one line per finding, like a compiler.
    Human,
    /// One JSON object per line.
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Validate(args) => validate::run(&args),
        Command::Rules(args) => rules::run(&args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("asr-ctk: {error:#}");
            ExitCode::from(exit::USAGE_OR_IO)
        }
    }
}
