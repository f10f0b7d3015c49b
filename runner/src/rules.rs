//! `asr-ctk rules`.

use crate::{Format, exit};
use anyhow::Result;
use asr_suite::catalog::Catalog;
use std::io::{self, Write};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output format: a table, or the whole catalog as one JSON object.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

pub fn run(args: &Args) -> Result<u8> {
    let catalog = Catalog::embedded();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match args.format {
        Format::Json => {
            serde_json::to_writer(&mut out, catalog)?;
            writeln!(out)?;
        }
        Format::Human => {
            writeln!(
                out,
                "{:<9} {:<24} {:<34} {:<21} summary",
                "rule", "levels", "roles", "checks"
            )?;
            for rule in &catalog.rules {
                let levels: Vec<_> = rule.levels.iter().map(|l| l.as_str()).collect();
                let roles: Vec<_> = rule.roles.iter().map(|r| r.as_str()).collect();
                let checks: Vec<_> = rule.checks.iter().map(|c| c.as_str()).collect();
                let levels = if levels.is_empty() {
                    "(descriptive)".to_owned()
                } else {
                    levels.join(", ")
                };
                writeln!(
                    out,
                    "{:<9} {:<24} {:<34} {:<21} {}",
                    rule.id,
                    levels,
                    roles.join(", "),
                    checks.join(", "),
                    rule.summary
                )?;
            }
            writeln!(out)?;
            writeln!(out, "Cited, text not in hand:")?;
            for cited in &catalog.cited {
                writeln!(out, "{:<9} {}", cited.id, cited.topic)?;
            }
            writeln!(out)?;
            writeln!(
                out,
                "Inferred structural checks (reported apart; --no-inferred leaves them out):"
            )?;
            for x in &catalog.inferred {
                writeln!(
                    out,
                    "{:<9} {:<8} {}: {}",
                    x.id,
                    x.severity.as_str(),
                    x.title,
                    x.summary
                )?;
            }
        }
    }
    out.flush()?;
    Ok(exit::OK)
}
