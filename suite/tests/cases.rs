//! The corpus as tests: one trial per case, named by its path and tagged with its first
//! rule, running the reference validator and comparing what it reports with the sidecar;
//! and lint trials that check the corpus itself.
//!
//! `cargo test -p asr-suite --test cases -- ASR-402` runs the cases of one rule.
//! `BLESS=1 cargo test -p asr-suite --test cases -- NAME` (or `-- --bless NAME`) rewrites
//! the expectations of the named cases from what the kit reports; never under CI.

use asr_suite::case::{Case, Violation, load_corpus};
use asr_suite::catalog::Catalog;
use asr_suite::lint;
use libtest_mimic::{Arguments, Failed, Trial};
use std::fmt::Write as _;
use std::path::Path;

// `pub`: this binary uses part of the helpers, and what it leaves unused is no dead code.
#[path = "it/helpers.rs"]
pub mod helpers;

fn main() {
    // `--bless` is ours, not libtest's (`helpers::bless_requested` reads it): take it out
    // before libtest reads the rest.
    let args = Arguments::from_iter(std::env::args().filter(|a| a != "--bless"));
    let root = helpers::corpus();
    let cases = match load_corpus(&root) {
        Ok(cases) => cases,
        Err(error) => {
            let message = error.to_string();
            let trial = Trial::test("lint::corpus_loads", move || Err(message.into()));
            libtest_mimic::run(&args, vec![trial]).exit();
        }
    };
    let mut trials: Vec<Trial> = cases
        .iter()
        .map(|case| {
            let kind = case.sidecar.rules.first().cloned().unwrap_or_default();
            let case = case.clone();
            Trial::test(case.name.clone(), move || run_case(&case)).with_kind(kind)
        })
        .collect();
    trials.extend(lints(&cases, &root));
    libtest_mimic::run(&args, trials).exit();
}

fn run_case(case: &Case) -> Result<(), Failed> {
    let mut problems = Vec::new();
    if let Some(problem) = validator_case(case)? {
        problems.push(problem);
    }
    if let Some(problem) = reader_case(case)? {
        problems.push(problem);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n\n").into())
    }
}

fn write_sidecar(case: &Case, sidecar: &asr_suite::case::Sidecar) -> Result<(), Failed> {
    let mut text = serde_json::to_string_pretty(sidecar).map_err(|e| e.to_string())?;
    text.push('\n');
    std::fs::write(&case.sidecar_path, text).map_err(|e| e.to_string())?;
    Ok(())
}

fn validator_case(case: &Case) -> Result<Option<String>, Failed> {
    let Some(expect) = &case.sidecar.expect.validator else {
        return Ok(None);
    };
    let (valid, actual) = asr_suite::reference::validate_case(case).map_err(|e| e.to_string())?;
    let mut expected = expect.violations.clone();
    expected.sort();
    if valid == expect.valid && actual == expected {
        return Ok(None);
    }
    if helpers::bless_requested()? {
        let mut sidecar = case.sidecar.clone();
        let validator = sidecar
            .expect
            .validator
            .as_mut()
            .ok_or("no validator expectation")?;
        validator.valid = valid;
        validator.violations = actual;
        write_sidecar(case, &sidecar)?;
        return Ok(None);
    }
    let render = |valid: bool, list: &[Violation]| {
        let mut text = format!("valid: {valid}\n");
        for v in list {
            text.push_str(&v.to_string());
            text.push('\n');
        }
        text
    };
    let diff =
        similar::TextDiff::from_lines(&render(expect.valid, &expected), &render(valid, &actual))
            .unified_diff()
            .header("expected (sidecar)", "actual (reference validator)")
            .to_string();
    Ok(Some(format!(
        "{} ({}): the reference validator disagrees with the sidecar\n{diff}\n{}",
        case.name,
        case.sidecar_path.display(),
        helpers::bless_hint("cases", &case.name)
    )))
}

fn reader_case(case: &Case) -> Result<Option<String>, Failed> {
    if !case.sidecar.expect.reads() {
        return Ok(None);
    }
    let streams: Vec<Vec<u8>> = case
        .streams
        .iter()
        .map(|(_, path)| std::fs::read(path))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let outcomes =
        asr_suite::reading::read_set(&streams.iter().map(Vec::as_slice).collect::<Vec<_>>());
    // The reference is judged as any reader is.
    let answers: Vec<asr_suite::protocol::StreamAnswer> = outcomes
        .iter()
        .map(|o| asr_suite::protocol::StreamAnswer::read(o.accepted, Some((&o.reading).into())))
        .collect();
    let judgement = asr_suite::judge::judge_reader(case, &answers);
    if judgement.pass && judgement.notes.is_empty() {
        return Ok(None);
    }
    let mut sidecar = case.sidecar.clone();
    let mut diffs = String::new();
    for ((part, _), outcome) in case.streams.iter().zip(&outcomes) {
        let expect = match sidecar.expect.reader.as_mut() {
            Some(expect) => expect,
            None => sidecar
                .expect
                .reader_streams
                .get_mut(part)
                .ok_or("no reader expectation for a stream")?,
        };
        let actual = serde_json::to_value(&outcome.reading).map_err(|e| e.to_string())?;
        let projected = asr_suite::judge::project(&expect.reading, &actual);
        let pretty =
            |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default() + "\n";
        let _ = write!(
            diffs,
            "{part} (valid: expected {}, read {}):\n{}",
            expect.valid,
            outcome.accepted,
            similar::TextDiff::from_lines(&pretty(&expect.reading), &pretty(&projected))
                .unified_diff()
                .header("expected (sidecar)", "actual (reference reader)")
        );
        expect.valid = outcome.accepted;
        expect.reading = projected;
    }
    if helpers::bless_requested()? {
        write_sidecar(case, &sidecar)?;
        return Ok(None);
    }
    let mut list = judgement.reasons;
    list.extend(judgement.notes);
    Ok(Some(format!(
        "{} ({}): the reference reader disagrees with the sidecar\n{}\n{diffs}\n{}",
        case.name,
        case.sidecar_path.display(),
        list.join("\n"),
        helpers::bless_hint("cases", &case.name)
    )))
}

fn lints(cases: &[Case], root: &Path) -> Vec<Trial> {
    let mut trials = Vec::new();
    let mut lint = |name: &str, check: Box<dyn FnOnce() -> Vec<String> + Send>| {
        trials.push(Trial::test(format!("lint::{name}"), move || {
            let problems = check();
            if problems.is_empty() {
                Ok(())
            } else {
                Err(problems.join("\n").into())
            }
        }));
    };
    let all = cases.to_vec();
    lint(
        "every_clause_has_a_negative_case",
        Box::new(move || {
            lint::clause_coverage(Catalog::embedded(), &all, lint::CLAUSES_WITHOUT_A_NEGATIVE)
        }),
    );
    let all = cases.to_vec();
    lint(
        "every_open_value_set_has_a_positive_with_an_unlisted_value",
        Box::new(move || lint::open_value_sets(Catalog::embedded(), &all)),
    );
    let all = cases.to_vec();
    let listed = root.join("optional-members.toml");
    lint(
        "every_optional_member_has_a_positive_without_it",
        Box::new(move || {
            match std::fs::read_to_string(&listed)
                .map_err(|e| format!("failed to read {}: {e}", listed.display()))
                .and_then(|text| lint::parse_optional_members(&text).map_err(|e| e.to_string()))
            {
                Ok(members) => lint::optional_members(&members, &all),
                Err(e) => vec![e],
            }
        }),
    );
    let all = cases.to_vec();
    lint(
        "corpus_is_not_empty",
        Box::new(move || {
            if all.is_empty() {
                vec!["no case found under cases/: the corpus is empty".into()]
            } else {
                Vec::new()
            }
        }),
    );
    let all = cases.to_vec();
    lint(
        "sidecars_match_their_schema",
        Box::new(move || {
            all.iter()
                .flat_map(|case| {
                    match std::fs::read_to_string(&case.sidecar_path)
                        .map(|t| serde_json::from_str(&t))
                    {
                        Ok(Ok(value)) => lint::sidecar_schema(&case.name, &value),
                        Ok(Err(e)) => vec![format!("{}: {e}", case.name)],
                        Err(e) => vec![format!("{}: {e}", case.name)],
                    }
                })
                .collect()
        }),
    );
    let all = cases.to_vec();
    let lock = root.join("ids.lock");
    lint(
        "ids_are_unique_and_locked",
        Box::new(move || match std::fs::read_to_string(&lock) {
            Ok(text) => lint::ids(&all, &text),
            Err(e) => vec![format!("failed to read {}: {e}", lock.display())],
        }),
    );
    let all = cases.to_vec();
    lint(
        "prefix_agrees_with_expectations",
        Box::new(move || lint::prefixes(&all)),
    );
    let all = cases.to_vec();
    lint(
        "decisions_are_in_the_catalog_and_hold_together",
        Box::new(move || lint::decisions(&all, Catalog::embedded())),
    );
    let all = cases.to_vec();
    lint(
        "may_refuse_names_a_decision",
        Box::new(move || lint::may_refuse_names_a_decision(&all)),
    );
    let all = cases.to_vec();
    lint(
        "named_rules_exist",
        Box::new(move || lint::rules_exist(&all, Catalog::embedded())),
    );
    let all = cases.to_vec();
    lint(
        "checked_rules_have_two_positives_and_two_negatives",
        Box::new(move || lint::coverage(&all, Catalog::embedded())),
    );
    let all = cases.to_vec();
    lint(
        "reader_rules_have_a_case_with_a_reading",
        Box::new(move || lint::reader_coverage(&all, Catalog::embedded())),
    );
    let all = cases.to_vec();
    lint(
        "reader_cases_charge_rules_that_bind_readers",
        Box::new(move || lint::reader_charges(&all, Catalog::embedded())),
    );
    let all = cases.to_vec();
    let spec = root.join("spec");
    lint(
        "every_spec_example_is_a_positive_case",
        Box::new(move || {
            let read = |name: &str| std::fs::read_to_string(spec.join(name)).unwrap_or_default();
            let (messages, lineage) = (read("asr-messages.txt"), read("asr-lineage.txt"));
            lint::spec_examples(
                &all,
                &[
                    ("asr-messages.txt", &messages),
                    ("asr-lineage.txt", &lineage),
                ],
            )
        }),
    );
    trials
}
