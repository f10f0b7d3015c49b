//! `asr-ctk cases`: the corpus, listed and filtered.

use crate::format::Format;
use crate::{corpus, exit};
use anyhow::Result;
use asr_suite::case::Verdict;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only cases that test this rule; `*` and `?` match as in a glob (`ASR-4*`).
    #[arg(long, value_name = "RULE")]
    rule: Option<String>,
    /// Only cases that apply to this role.
    #[arg(long, value_enum)]
    role: Option<RoleArg>,
    /// Only cases of this verdict.
    #[arg(long, value_enum)]
    verdict: Option<VerdictArg>,
    /// Only cases whose name (path below the corpus, without extension) matches this glob.
    #[arg(long, value_name = "GLOB")]
    case: Option<String>,
    /// The corpus directory (default: ./cases when it holds a catalog, else the corpus the kit carries).
    #[arg(long, value_name = "DIR")]
    cases: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum RoleArg {
    Validator,
    Reader,
    Producer,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum VerdictArg {
    /// y_: must be accepted.
    Accept,
    /// n_: must be rejected.
    Reject,
    /// i_: implementation-defined.
    Either,
}

pub fn run(args: &Args) -> Result<u8> {
    // The source fixtures are the producer's cases: one corpus, one count, as `run` has it.
    let cases = corpus::load_with_sources(args.cases.as_deref())?.cases;
    let rule = corpus::pattern(args.rule.as_deref(), "--rule")?;
    let name = corpus::pattern(args.case.as_deref(), "--case")?;
    let selected: Vec<_> = cases
        .iter()
        .filter(|c| {
            rule.as_ref()
                .is_none_or(|p| c.sidecar.rules.iter().any(|r| p.matches(r)))
        })
        .filter(|c| {
            args.role.is_none_or(|role| {
                let want = match role {
                    RoleArg::Validator => "validator",
                    RoleArg::Reader => "reader",
                    RoleArg::Producer => "producer",
                };
                c.sidecar.roles.iter().any(|r| r.as_str() == want)
            })
        })
        .filter(|c| {
            args.verdict.is_none_or(|v| {
                c.verdict()
                    == Some(match v {
                        VerdictArg::Accept => Verdict::Accept,
                        VerdictArg::Reject => Verdict::Reject,
                        VerdictArg::Either => Verdict::Either,
                    })
            })
        })
        .filter(|c| name.as_ref().is_none_or(|p| p.matches(&c.name)))
        .collect();
    let code = if selected.is_empty() {
        exit::INVALID
    } else {
        exit::OK
    };
    let printed = print(&selected, cases.len(), args.format);
    if selected.is_empty() {
        // A filter that selects nothing is almost always a typo; say so in the status.
        eprintln!("asr-ctk: no case matches the filters given");
    }
    exit::after_printing(code, printed)
}

fn print(selected: &[&asr_suite::case::Case], total: usize, format: Format) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for case in selected {
        match format {
            Format::Json => {
                let line = serde_json::json!({"name": case.name, "streams": case.streams.iter().map(|(_, p)| p.display().to_string()).collect::<Vec<_>>(), "sidecar": case.sidecar});
                serde_json::to_writer(&mut out, &line)?;
                writeln!(out)?;
            }
            Format::Human => {
                writeln!(
                    out,
                    "{}  {:<60} {}",
                    case.sidecar.id,
                    case.name,
                    case.sidecar.rules.join(",")
                )?;
            }
        }
    }
    if format == Format::Human {
        writeln!(out, "{} of {total} cases", selected.len())?;
    }
    out.flush()?;
    Ok(())
}
