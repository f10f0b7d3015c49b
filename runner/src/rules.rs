//! `asr-ctk rules`.

use crate::{Format, corpus, exit};
use anyhow::Result;
use asr_suite::catalog::Catalog;
use asr_suite::lint;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output format: `human`, a table of the rules with their positive and negative cases;
    /// `json`, one JSON object, `{"catalog": ..., "cases": {RULE: {"positive": N, "negative": N}}}`.
    #[arg(long, value_enum, default_value_t = Format::Human, hide_possible_values = true)]
    format: Format,
    /// The corpus whose cases are counted (default: ./cases when it holds a catalog, else the corpus the kit carries).
    #[arg(long, value_name = "DIR")]
    cases: Option<PathBuf>,
}

pub fn run(args: &Args) -> Result<u8> {
    let catalog = Catalog::embedded();
    let (_, cases) = corpus::load(args.cases.as_deref())?;
    let counts = lint::counts(&cases);
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match args.format {
        Format::Json => {
            let cases: BTreeMap<&str, serde_json::Value> = counts
                .iter()
                .map(|(rule, (y, n))| {
                    (
                        rule.as_str(),
                        serde_json::json!({"positive": y, "negative": n}),
                    )
                })
                .collect();
            serde_json::to_writer(
                &mut out,
                &serde_json::json!({"catalog": catalog, "cases": cases}),
            )?;
            writeln!(out)?;
        }
        Format::Human => {
            let count = |id: &str| counts.get(id).copied().unwrap_or_default();
            writeln!(
                out,
                "{:<9} {:>3} {:>3}  {:<22} {:<32} {:<20} summary",
                "rule", "y", "n", "levels", "roles", "checks"
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
                let (y, n) = count(&rule.id);
                writeln!(
                    out,
                    "{:<9} {y:>3} {n:>3}  {:<22} {:<32} {:<20} {}",
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
                let (y, n) = count(&x.id);
                writeln!(
                    out,
                    "{:<9} {y:>3} {n:>3}  {:<8} {}: {}",
                    x.id,
                    x.severity.as_str(),
                    x.title,
                    x.summary
                )?;
            }
            writeln!(out)?;
            writeln!(
                out,
                "y, n: positive and negative cases in the corpus that name the rule."
            )?;
        }
    }
    out.flush()?;
    Ok(exit::OK)
}
