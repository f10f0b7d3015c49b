//! `asr-ctk rules`.

use crate::format::Format;
use crate::{corpus, exit};
use anyhow::Result;
use asr_suite::case::Case;
use asr_suite::catalog::Catalog;
use asr_suite::lint;
use asr_suite::source::SourceFixture;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output format: `human`, a table of the rules with their positive and negative cases,
    /// and under each rule checked in streams its clauses with the negative cases that break
    /// them; `json`, one JSON object, `{"catalog": ..., "cases": {RULE: {"positive": N,
    /// "negative": N}}, "clauses": {CLAUSE: {"negative": N, "cases": [...], "mutators": N}},
    /// "uncovered": [CLAUSE, ...]}`, where uncovered lists the clauses no negative case names
    /// (a mutator does not cover a clause: it shows nothing about the validators under test),
    /// and `"producer": {RULE: {"fixtures": N, "assertions": N}}`, the source fixtures
    /// (`cases/sources/`) with assertions under the rule.
    #[arg(long, value_enum, default_value_t = Format::Human, hide_possible_values = true)]
    format: Format,
    /// The corpus whose cases are counted (default: ./cases when it holds a catalog, else the corpus the kit carries).
    #[arg(long, value_name = "DIR")]
    cases: Option<PathBuf>,
}

pub fn run(args: &Args) -> Result<u8> {
    let catalog = Catalog::embedded();
    let corpus::Corpus { root, cases, .. } = corpus::load(args.cases.as_deref())?;
    let fixtures = asr_suite::source::load_fixtures(&root.join("sources"))?;
    let mutators = asr_suite::fuzz::mutate::covered_clauses();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let producer = producer_counts(&fixtures);
    print(&mut out, args.format, catalog, &cases, &mutators, &producer)?;
    out.flush()?;
    Ok(exit::OK)
}

/// Per rule: the source fixtures with an assertion under it, and those assertions.
fn producer_counts(fixtures: &[SourceFixture]) -> BTreeMap<String, (usize, usize)> {
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for fixture in fixtures {
        let mut seen = BTreeSet::new();
        for assertion in &fixture.sidecar.expect.producer.assertions {
            let entry = counts.entry(assertion.rule.clone()).or_default();
            entry.1 += 1;
            if seen.insert(assertion.rule.as_str()) {
                entry.0 += 1;
            }
        }
    }
    counts
}

/// Prints the catalog with its cases; `mutators` holds the ids of the clauses that a mutator
/// of valid streams breaks, `producer` the fixtures and assertions per rule.
fn print(
    out: &mut impl Write,
    format: Format,
    catalog: &Catalog,
    cases: &[Case],
    mutators: &BTreeSet<String>,
    producer: &BTreeMap<String, (usize, usize)>,
) -> Result<()> {
    let counts = lint::counts(cases);
    let negatives = lint::clause_negatives(cases);
    let uncovered = lint::uncovered_clauses(catalog, cases);
    let clause_cases = |id: &str| negatives.get(id).map(Vec::as_slice).unwrap_or_default();
    let mutated = |id: &str| usize::from(mutators.contains(id));
    match format {
        Format::Json => {
            let rule_cases: BTreeMap<&str, serde_json::Value> = counts
                .iter()
                .map(|(rule, (y, n))| {
                    (
                        rule.as_str(),
                        serde_json::json!({"positive": y, "negative": n}),
                    )
                })
                .collect();
            let clauses: BTreeMap<&str, serde_json::Value> = catalog
                .stream_rules()
                .flat_map(|r| &r.clauses)
                .map(|c| {
                    let named: Vec<&str> = clause_cases(&c.id)
                        .iter()
                        .map(|case| case.name.as_str())
                        .collect();
                    (
                        c.id.as_str(),
                        serde_json::json!({
                            "negative": named.len(),
                            "cases": named,
                            "mutators": mutated(&c.id),
                        }),
                    )
                })
                .collect();
            serde_json::to_writer(
                &mut *out,
                &serde_json::json!({
                    "catalog": catalog,
                    "cases": rule_cases,
                    "clauses": clauses,
                    "uncovered": uncovered,
                    "producer": producer
                        .iter()
                        .map(|(rule, (f, a))| (rule.as_str(), serde_json::json!({"fixtures": f, "assertions": a})))
                        .collect::<BTreeMap<_, _>>(),
                }),
            )?;
            writeln!(out)?;
        }
        Format::Human => {
            let count = |id: &str| counts.get(id).copied().unwrap_or_default();
            writeln!(
                out,
                "{:<9} {:>3} {:>3} {:>3}  {:<22} {:<32} {:<20} summary",
                "rule", "y", "n", "p", "levels", "roles", "checks"
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
                let p = producer.get(&rule.id).map_or(0, |(f, _)| *f);
                writeln!(
                    out,
                    "{:<9} {y:>3} {n:>3} {p:>3}  {:<22} {:<32} {:<20} {}",
                    rule.id,
                    levels,
                    roles.join(", "),
                    checks.join(", "),
                    rule.summary
                )?;
                for clause in &rule.clauses {
                    let breaking = clause_cases(&clause.id);
                    // The file name is enough beside its rule: the directory repeats the rule.
                    let files: Vec<&str> = breaking
                        .iter()
                        .map(|c| c.name.rsplit('/').next().unwrap_or(&c.name))
                        .collect();
                    let listed = if files.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", files.join(", "))
                    };
                    writeln!(
                        out,
                        "  {:<9} {:>5} {:>3}  {}{listed}",
                        clause.id,
                        breaking.len(),
                        mutated(&clause.id),
                        clause.text
                    )?;
                }
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
                "y, n: positive and negative cases in the corpus that name the rule; p: source fixtures with an assertion under it."
            )?;
            writeln!(
                out,
                "Under each rule checked in streams, its clauses: the negative cases that name the clause (listed after its text) and the mutators that break it."
            )?;
            let total: usize = catalog.stream_rules().map(|r| r.clauses.len()).sum();
            writeln!(
                out,
                "Clauses no negative case breaks: {} of {total}{}",
                uncovered.len(),
                if uncovered.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", uncovered.join(", "))
                }
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn printed(format: Format, mutators: &BTreeSet<String>) -> String {
        let catalog = Catalog::embedded();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
        let cases = asr_suite::case::load_corpus(&root).expect("the corpus loads");
        let fixtures =
            asr_suite::source::load_fixtures(&root.join("sources")).expect("the fixtures load");
        let mut out = Vec::new();
        print(
            &mut out,
            format,
            catalog,
            &cases,
            mutators,
            &producer_counts(&fixtures),
        )
        .expect("prints");
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn human_lists_the_clauses_under_their_rule_with_the_cases_that_break_them() {
        let text = printed(Format::Human, &BTreeSet::new());
        let lines: Vec<&str> = text.lines().collect();
        let rule = lines
            .iter()
            .position(|l| l.starts_with("ASR-221 "))
            .expect("ASR-221");
        assert!(
            lines[rule + 1].starts_with(
                "  ASR-221.a     1   0  A plan record has planId. (n_codex_plan_without_plan_id)"
            ),
            "{}",
            lines[rule + 1]
        );
        let status = lines[rule + 1..rule + 7]
            .iter()
            .find(|l| l.trim_start().starts_with("ASR-221.e"))
            .expect("ASR-221.e");
        assert!(status.ends_with(" (n_entry_without_status)"), "{status}");
        assert!(status.contains("    1   0  "), "{status}");
        assert!(
            lines[rule + 7].starts_with("ASR-222 "),
            "six clauses, then the next rule"
        );
        let source = lines
            .iter()
            .position(|l| l.starts_with("ASR-201 "))
            .expect("ASR-201");
        assert!(lines[source + 1].starts_with("ASR-202 "), "no clause");
        let last = lines.last().expect("a last line");
        assert!(
            last.starts_with("Clauses no negative case breaks: "),
            "{last}"
        );
        for (clause, _) in lint::CLAUSES_WITHOUT_A_NEGATIVE {
            assert!(last.contains(clause), "{last}");
        }
    }

    #[test]
    fn the_source_fixtures_are_counted_per_rule() {
        let text = printed(Format::Json, &BTreeSet::new());
        let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let asr_211 = &value["producer"]["ASR-211"];
        assert!(
            asr_211["fixtures"].as_u64().is_some_and(|n| n >= 1),
            "{asr_211}"
        );
        assert!(asr_211["assertions"].as_u64() >= asr_211["fixtures"].as_u64());
        assert!(
            value["producer"].get("ASR-200").is_none(),
            "no fixture asserts it"
        );
        let human = printed(Format::Human, &BTreeSet::new());
        let line = human
            .lines()
            .find(|l| l.starts_with("ASR-211 "))
            .expect("ASR-211");
        let p: usize = line
            .split_whitespace()
            .nth(3)
            .and_then(|n| n.parse().ok())
            .expect("p");
        assert!(p >= 1, "{line}");
    }

    #[test]
    fn json_carries_the_clauses_and_the_mutators_place() {
        let mutators: BTreeSet<String> = ["ASR-200.b".to_owned(), "ASR-222.c".to_owned()].into();
        let text = printed(Format::Json, &mutators);
        let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let clause = &value["clauses"]["ASR-221.e"];
        assert_eq!(clause["negative"], 1);
        assert_eq!(
            clause["cases"],
            serde_json::json!(["messages/ASR-221/n_entry_without_status"])
        );
        assert_eq!(clause["mutators"], 0);
        assert_eq!(value["clauses"]["ASR-200.b"]["mutators"], 1);
        assert_eq!(value["clauses"]["ASR-222.c"]["mutators"], 1);
        let uncovered = value["uncovered"].as_array().expect("an array");
        let clauses = value["clauses"].as_object().expect("an object");
        assert!(!clauses.is_empty());
        for (id, clause) in clauses {
            // Uncovered means no negative case, whatever the mutators break.
            assert_eq!(
                clause["negative"] == 0,
                uncovered.contains(&serde_json::json!(id)),
                "{id}"
            );
        }
        let rules = value["catalog"]["rule"].as_array().expect("rules");
        let plan = rules
            .iter()
            .find(|r| r["id"] == "ASR-221")
            .expect("ASR-221");
        assert_eq!(plan["clause"][0]["id"], "ASR-221.a");
        assert!(
            value["catalog"]["value_set"]
                .as_array()
                .is_some_and(|v| !v.is_empty())
        );
    }
}
