//! Writing the reports of a run, a diff or a fuzz campaign, and a run's summary on stdout.

use anyhow::{Context, Result};
use asr_suite::case::Case;
use asr_suite::conformance::{Outcome, RuleVerdict, RunReport};
use asr_suite::expectations::Comparison;
use asr_suite::render::sarif::StreamFiles;
use asr_suite::render::{self, by_role, escape_controls};
use std::io::Write;
use std::path::Path;

/// The report files of a run, in `dir`; `streams` places the failing cases in the SARIF log,
/// and the HTML page shows the start of those streams, read from below the corpus `root`.
pub fn reports(report: &RunReport, root: &Path, streams: &StreamFiles, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("failed to create {}", dir.display()))?;
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        asr_suite::files::replace(&path, text.as_bytes())
            .with_context(|| format!("failed to write {}", path.display()))
    };
    write("report.json", serde_json::to_string_pretty(report)? + "\n")?;
    write("report.md", render::markdown(report))?;
    let texts = render::streams::failing_streams(report, root, streams);
    write("report.html", render::html_with_streams(report, &texts))?;
    write("junit.xml", render::junit(report))?;
    write(
        "sarif.json",
        serde_json::to_string_pretty(&render::sarif::conformance(report, streams))? + "\n",
    )?;
    write(
        "badge.json",
        serde_json::to_string_pretty(&render::badge(report))? + "\n",
    )?;
    Ok(())
}

/// Writes a run's report files and prints its per-rule summary, every rule shown; `streams`
/// are the cases' stream files below the corpus directory `root`.
pub fn reports_and_summary(
    report: &RunReport,
    root: &Path,
    streams: &StreamFiles,
    dir: &Path,
) -> Result<()> {
    reports(report, root, streams, dir)?;
    summary(report, dir, Shown::default())
}

/// The stream files of each case of `corpus`, relative to its directory `root`, as the SARIF
/// log names them.
pub fn stream_files(root: &Path, corpus: &[Case]) -> StreamFiles {
    corpus
        .iter()
        .map(|case| {
            let files = case
                .streams
                .iter()
                .map(|(_, path)| {
                    path.strip_prefix(root)
                        .unwrap_or(path)
                        .to_string_lossy()
                        .replace('\\', "/")
                })
                .collect();
            (case.name.clone(), files)
        })
        .collect()
}

/// How much of the summary is shown.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shown {
    /// Only the totals and where the reports are.
    pub quiet: bool,
    /// Only the rules the run's cases name or charged a failure to (a selection was run).
    pub selected_only: bool,
}

/// The per-rule summary, on stdout.
pub fn summary(report: &RunReport, dir: &Path, shown: Shown) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let who = report.adapter.implementation.as_ref().map_or_else(
        || "an adapter that never started".to_owned(),
        |i| escape_controls(&format!("{} {} ({})", i.name, i.version, i.language)).into_owned(),
    );
    let names: std::collections::HashSet<&str> =
        report.cases.iter().map(|c| c.name.as_str()).collect();
    writeln!(
        out,
        "asr-ctk {}: {} cases, {} case-role pairs, against {who}, {} mode",
        report.kit_version,
        names.len(),
        report.cases.len(),
        report.adapter.mode
    )?;
    if !shown.quiet {
        rule_table(&mut out, report, shown.selected_only)?;
    }
    totals(&mut out, report)?;
    writeln!(
        out,
        "reports: {}",
        dir.join("report.{json,md,html}, junit.xml, sarif.json, badge.json")
            .display()
    )?;
    out.flush()?;
    Ok(())
}

fn rule_table(out: &mut impl Write, report: &RunReport, selected_only: bool) -> Result<()> {
    // The five columns after `cases` add up to it; `other` (failures charged to the rule
    // from other rules' cases) is outside them.
    writeln!(
        out,
        "{:<10} {:<15} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5}",
        "rule", "verdict", "cases", "pass", "fail", "n-s", "skip", "error", "other"
    )?;
    for rule in &report.rules {
        // Untested rules are listed too, unless a selection was run: a rule without a case
        // run is a gap to see.
        if matches!(rule.verdict, RuleVerdict::NotApplicable)
            || (selected_only && rule.cases + rule.charged_from_others == 0)
        {
            continue;
        }
        let roles = by_role(rule);
        writeln!(
            out,
            "{:<10} {:<15} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5}{}",
            rule.rule,
            rule.verdict.as_str(),
            rule.cases,
            rule.passed,
            rule.failed,
            rule.non_strict,
            rule.skipped,
            rule.errored,
            rule.charged_from_others,
            if roles.is_empty() {
                String::new()
            } else {
                format!("  ({roles})")
            }
        )?;
    }
    Ok(())
}

/// The rule verdicts and case outcomes counted, what was not run, and rule ids the catalog
/// does not know.
fn totals(out: &mut impl Write, report: &RunReport) -> Result<()> {
    let count = |verdict: RuleVerdict| report.rules.iter().filter(|r| r.verdict == verdict).count();
    writeln!(
        out,
        "rules: {} conformant, {} non-conformant, {} non-strict, {} untested, {} not applicable",
        count(RuleVerdict::Conformant),
        count(RuleVerdict::NonConformant),
        count(RuleVerdict::NonStrict),
        count(RuleVerdict::Untested),
        count(RuleVerdict::NotApplicable)
    )?;
    let totals: Vec<String> = Outcome::ALL
        .iter()
        .map(|o| {
            format!(
                "{} {}",
                report.totals.get(o).copied().unwrap_or(0),
                o.as_str()
            )
        })
        .collect();
    writeln!(out, "cases: {}", totals.join(", "))?;
    if let Some(why) = &report.incomplete {
        writeln!(out, "incomplete: {}", escape_controls(why))?;
    }
    // In the order the answers cited them first.
    let mut unknown: Vec<(&str, usize)> = Vec::new();
    let mut at: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for case in &report.cases {
        for rule in &case.unknown_rules {
            let index = *at.entry(rule.as_str()).or_insert_with(|| {
                unknown.push((rule.as_str(), 0));
                unknown.len() - 1
            });
            unknown[index].1 += 1;
        }
    }
    if !unknown.is_empty() {
        let listed: Vec<String> = unknown
            .iter()
            .take(10)
            .map(|(rule, n)| format!("{} ({n} cases)", escape_controls(rule)))
            .collect();
        let more = unknown.len().saturating_sub(10);
        writeln!(
            out,
            "answers cite {} rule id(s) the catalog does not know: {}{}",
            unknown.len(),
            listed.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )?;
    }
    Ok(())
}

/// How the run compares with `--expect`, on stdout.
pub fn expectations(comparison: &Comparison) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if let Some(other) = &comparison.other_implementation {
        writeln!(
            out,
            "note: the expectations are for {other}, not the implementation run"
        )?;
    }
    writeln!(
        out,
        "expectations: {} known results matched",
        comparison.matched
    )?;
    for pass in &comparison.unexpected_passes {
        writeln!(
            out,
            "unexpected pass: {pass} (its entry in the expectations can go)"
        )?;
    }
    for regression in &comparison.regressions {
        writeln!(out, "regression: {regression}")?;
    }
    if comparison.regressions.is_empty() {
        writeln!(out, "the run matches the expectations")?;
    } else {
        writeln!(
            out,
            "{} result(s) differ from the expectations",
            comparison.regressions.len()
        )?;
    }
    out.flush()?;
    Ok(())
}
