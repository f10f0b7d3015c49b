//! `asr-ctk report merge`: shards of one run, combined into one report.

use crate::{corpus, exit};
use anyhow::{Context, Result, bail};
use asr_suite::catalog::Catalog;
use asr_suite::conformance::RunReport;
use std::collections::BTreeSet;
use std::path::PathBuf;

#[derive(Debug, clap::Subcommand)]
pub enum ReportCommand {
    /// Combine the report.json files of the shards of one run into one report.
    Merge {
        /// The shards' report.json files.
        #[arg(required = true, value_name = "REPORT")]
        reports: Vec<PathBuf>,
        /// Where to write the merged reports.
        #[arg(long, value_name = "DIR", default_value = "asr-ctk-report")]
        out: PathBuf,
        /// The corpus the run used (default: ./cases when it holds a catalog, else the corpus the kit carries).
        #[arg(long, value_name = "DIR")]
        cases: Option<PathBuf>,
    },
}

pub fn run(command: &ReportCommand) -> Result<u8> {
    let ReportCommand::Merge {
        reports,
        out,
        cases,
    } = command;
    let mut merged: Option<RunReport> = None;
    let mut seen = BTreeSet::new();
    for path in reports {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("failed to read {}", path.display()))?;
        let report: RunReport = serde_json::from_str(&text)
            .with_context(|| format!("failed to parse {} as a report", path.display()))?;
        for case in &report.cases {
            if !seen.insert((case.name.clone(), case.role)) {
                bail!(
                    "{}: case {} is in two of the reports: they are not shards of one run",
                    path.display(),
                    case.name
                );
            }
        }
        match &mut merged {
            None => merged = Some(report),
            Some(all) => {
                let same = all.case_set == report.case_set
                    && all.kit_version == report.kit_version
                    && all.adapter.implementation == report.adapter.implementation;
                if !same {
                    bail!(
                        "{}: another kit version, case set or implementation than the first report: not shards of one run",
                        path.display()
                    );
                }
                all.cases.extend(report.cases);
                all.shards.extend(report.shards);
                all.interrupted |= report.interrupted;
                all.incomplete = match (all.incomplete.take(), report.incomplete) {
                    (Some(a), Some(b)) => Some(format!("{a}; {b}")),
                    (a, b) => a.or(b),
                };
                if report.started_at < all.started_at {
                    all.started_at = report.started_at;
                }
            }
        }
    }
    let Some(mut merged) = merged else {
        bail!("no report given")
    };
    let missing = missing_shards(&merged.shards)?;
    if !missing.is_empty() {
        let why = format!("shards not merged: {}", missing.join(", "));
        merged.incomplete = Some(match merged.incomplete.take() {
            Some(earlier) => format!("{earlier}; {why}"),
            None => why,
        });
    }
    let corpus::Corpus {
        root,
        cases: corpus,
        ..
    } = corpus::load_with_sources(cases.as_deref())?;
    merged.summarize(Catalog::embedded());
    let streams = crate::run::stream_files(&root, &corpus);
    crate::run::write_reports(&merged, &streams, out)?;
    Ok(if merged.has_failures() || merged.incomplete.is_some() {
        exit::INVALID
    } else {
        exit::OK
    })
}

/// The shards `i/n` of the run that are not among those merged.
fn missing_shards(shards: &[String]) -> Result<Vec<String>> {
    let mut of = None;
    let mut seen = BTreeSet::new();
    for shard in shards {
        let parsed = shard
            .split_once('/')
            .and_then(|(i, n)| Some((i.parse::<usize>().ok()?, n.parse::<usize>().ok()?)));
        let Some((i, n)) = parsed else {
            bail!("shard {shard} is not i/n");
        };
        if *of.get_or_insert(n) != n {
            bail!(
                "shards of {} and of {n} parts: not shards of one run",
                of.unwrap_or(n)
            );
        }
        seen.insert(i);
    }
    Ok(of.map_or_else(Vec::new, |n| {
        (1..=n)
            .filter(|i| !seen.contains(i))
            .map(|i| format!("{i}/{n}"))
            .collect()
    }))
}
