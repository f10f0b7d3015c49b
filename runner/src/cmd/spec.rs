//! `asr-ctk spec check`: the spec-change gate.

use crate::format::Format;
use crate::{corpus, exit};
use anyhow::{Context, Result};
use asr_suite::case::Case;
use asr_suite::catalog::{Catalog, SpecComparison};
use asr_suite::spec;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The directory of the spec text to compare with the catalog (its .txt and .md files).
    #[arg(long, value_name = "DIR")]
    spec: PathBuf,
    /// The corpus whose cases are listed against each changed or gone rule.
    #[arg(long, value_name = "DIR")]
    cases: Option<PathBuf>,
    /// Output format: `human`, the rules new, reworded or gone with their cases, a line each;
    /// `json`, one JSON object with the same (`agrees`, `new`, `changed`, `gone`, `levels`, `levelChanges`, `cited`).
    #[arg(long, value_enum, default_value_t = Format::Human, hide_possible_values = true)]
    format: Format,
}

#[derive(Debug, Serialize)]
struct Outcome<'a> {
    spec: String,
    files: Vec<String>,
    stated: usize,
    agrees: bool,
    new: Vec<New>,
    changed: Vec<Changed<'a>>,
    gone: Vec<Gone<'a>>,
    levels: Vec<String>,
    #[serde(rename = "levelChanges")]
    level_changes: Vec<LevelChange>,
    cited: Vec<String>,
}

/// A rule whose requirement keywords changed: the catalog's and the spec's.
#[derive(Debug, Serialize)]
struct LevelChange {
    rule: String,
    catalog: String,
    spec: String,
}

#[derive(Debug, Serialize)]
struct New {
    rule: String,
    file: String,
    line: usize,
    statement: String,
}

#[derive(Debug, Serialize)]
struct Changed<'a> {
    rule: String,
    catalog: String,
    spec: String,
    statement: String,
    reconfirm: Vec<&'a str>,
}

#[derive(Debug, Serialize)]
struct Gone<'a> {
    rule: String,
    orphaned: Vec<&'a str>,
}

pub fn run(args: &Args) -> Result<u8> {
    let (files, texts) = read_spec(&args.spec)?;
    anyhow::ensure!(
        !files.is_empty(),
        "{} holds no .txt or .md file: no spec text to check",
        args.spec.display()
    );
    let parsed: Vec<(String, spec::SpecText)> = files
        .iter()
        .zip(&texts)
        .map(|(f, t)| (f.clone(), spec::parse([t.as_str()])))
        .collect();
    let whole = spec::parse(texts.iter().map(String::as_str));
    let catalog = Catalog::embedded();
    let comparison: SpecComparison = catalog.compare(&whole);
    let cases = corpus::load(args.cases.as_deref())?.cases;
    let cases_of = |rule: &str| -> Vec<&str> {
        cases
            .iter()
            .filter(|c: &&Case| c.sidecar.rules.iter().any(|r| r == rule))
            .map(|c| c.name.as_str())
            .collect()
    };
    let statement_of = |rule: &str| whole.statements.iter().find(|s| s.id == rule);
    let outcome = Outcome {
        spec: args.spec.display().to_string(),
        files: files.clone(),
        stated: whole.statements.len(),
        agrees: comparison.agrees(),
        new: comparison
            .new
            .iter()
            .map(|rule| {
                let (file, line) = parsed
                    .iter()
                    .find_map(|(f, p)| {
                        p.statements
                            .iter()
                            .find(|s| &s.id == rule)
                            .map(|s| (f.clone(), s.line))
                    })
                    .unwrap_or_default();
                New {
                    rule: rule.clone(),
                    file,
                    line,
                    statement: statement_of(rule)
                        .map(|s| s.text.clone())
                        .unwrap_or_default(),
                }
            })
            .collect(),
        changed: comparison
            .changed
            .iter()
            .map(|(rule, old, new)| Changed {
                rule: rule.clone(),
                catalog: old.clone(),
                spec: new.clone(),
                statement: statement_of(rule)
                    .map(|s| s.text.clone())
                    .unwrap_or_default(),
                reconfirm: cases_of(rule),
            })
            .collect(),
        gone: comparison
            .gone
            .iter()
            .map(|rule| Gone {
                rule: rule.clone(),
                orphaned: cases_of(rule),
            })
            .collect(),
        levels: comparison.levels.clone(),
        level_changes: comparison
            .level_changes
            .iter()
            .map(|(rule, catalog, spec)| LevelChange {
                rule: rule.clone(),
                catalog: catalog.clone(),
                spec: spec.clone(),
            })
            .collect(),
        cited: comparison.cited.clone(),
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match args.format {
        Format::Json => {
            serde_json::to_writer(&mut out, &outcome)?;
            writeln!(out)?;
        }
        Format::Human => print_human(&mut out, &outcome)?,
    }
    out.flush()?;
    Ok(if outcome.agrees {
        exit::OK
    } else {
        exit::INVALID
    })
}

fn read_spec(dir: &Path) -> Result<(Vec<String>, Vec<String>)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("failed to read the spec directory {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "txt" || e == "md"))
        .collect();
    paths.sort();
    let mut names = Vec::new();
    let mut texts = Vec::new();
    for path in paths {
        texts.push(
            std::fs::read_to_string(&path)
                .with_context(|| format!("failed to read {}", path.display()))?,
        );
        names.push(
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
    }
    Ok((names, texts))
}

fn print_human(out: &mut impl Write, o: &Outcome<'_>) -> std::io::Result<()> {
    writeln!(
        out,
        "spec check: {} ({} files, {} rule statements)",
        o.spec,
        o.files.len(),
        o.stated
    )?;
    if o.agrees {
        return writeln!(
            out,
            "the catalog and the spec agree: every rule, statement and keyword is as catalogued"
        );
    }
    if !o.new.is_empty() {
        writeln!(
            out,
            "\nnew rules (stated in the spec, not in the catalog, no cases yet):"
        )?;
        for n in &o.new {
            writeln!(out, "  {} ({}:{}): {}", n.rule, n.file, n.line, n.statement)?;
        }
    }
    if !o.changed.is_empty() {
        writeln!(
            out,
            "\nchanged rules (statement reworded; their cases need re-confirming):"
        )?;
        for c in &o.changed {
            writeln!(out, "  {}: {}", c.rule, c.statement)?;
            writeln!(out, "    catalog {}\n    spec    {}", c.catalog, c.spec)?;
            for case in &c.reconfirm {
                writeln!(out, "    re-confirm {case}")?;
            }
        }
    }
    if !o.gone.is_empty() {
        writeln!(
            out,
            "\ngone rules (in the catalog, no longer stated; their cases are orphaned):"
        )?;
        for g in &o.gone {
            writeln!(out, "  {} ({} cases)", g.rule, g.orphaned.len())?;
            for case in &g.orphaned {
                writeln!(out, "    orphaned {case}")?;
            }
        }
    }
    if !o.level_changes.is_empty() {
        writeln!(
            out,
            "\nrequirement keywords changed (the catalog's -> the spec's; the rule's verdicts and cases need re-confirming):"
        )?;
        for c in &o.level_changes {
            writeln!(out, "  {}: {} -> {}", c.rule, c.catalog, c.spec)?;
        }
    }
    if !o.cited.is_empty() {
        writeln!(
            out,
            "\ncited-but-absent rules differ from the catalog's list: {}",
            o.cited.join(", ")
        )?;
    }
    writeln!(
        out,
        "\nthe catalog and the spec disagree: update cases/rules.toml and the cases named above"
    )
}
