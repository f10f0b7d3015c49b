//! The corpus as tests: one trial per case, named by its path and tagged with its first
//! rule, running the reference validator and comparing what it reports with the sidecar;
//! and lint trials that check the corpus itself.
//!
//! `cargo test -p asr-suite --test cases -- ASR-402` runs the cases of one rule.
//! `BLESS=1 cargo test -p asr-suite --test cases -- NAME` rewrites the expectations of the
//! named cases from what the kit reports (never under CI).

use asr_suite::case::{Case, Verdict, Violation, load_corpus};
use asr_suite::catalog::{Catalog, CheckKind};
use asr_suite::diagnostic::Severity;
use libtest_mimic::{Arguments, Failed, Trial};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases")
}

fn main() {
    let args = Arguments::from_args();
    let root = corpus_root();
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

fn bless_requested() -> Result<bool, Failed> {
    let bless = std::env::var_os("BLESS").is_some_and(|v| v != "0" && !v.is_empty());
    if bless && std::env::var_os("CI").is_some() {
        return Err(
            "BLESS is set under CI: expectations are rewritten only on a developer's request"
                .into(),
        );
    }
    Ok(bless)
}

fn run_case(case: &Case) -> Result<(), Failed> {
    let Some(expect) = &case.sidecar.expect.validator else {
        return Ok(());
    };
    let (valid, actual) = case.run_reference().map_err(|e| e.to_string())?;
    let mut expected = expect.violations.clone();
    expected.sort();
    if valid == expect.valid && actual == expected {
        return Ok(());
    }
    if bless_requested()? {
        let mut sidecar = case.sidecar.clone();
        let validator = sidecar
            .expect
            .validator
            .as_mut()
            .ok_or("no validator expectation")?;
        validator.valid = valid;
        validator.violations = actual;
        let mut text = serde_json::to_string_pretty(&sidecar).map_err(|e| e.to_string())?;
        text.push('\n');
        std::fs::write(&case.sidecar_path, text).map_err(|e| e.to_string())?;
        return Ok(());
    }
    let render = |valid: bool, list: &[Violation]| {
        let mut text = format!("valid: {valid}\n");
        for v in list {
            text.push_str(&v.to_string());
            text.push('\n');
        }
        text
    };
    let expected_text = render(expect.valid, &expected);
    let actual_text = render(valid, &actual);
    let diff = similar::TextDiff::from_lines(&expected_text, &actual_text)
        .unified_diff()
        .header("expected (sidecar)", "actual (reference validator)")
        .to_string();
    Err(format!(
        "{} ({}): the reference validator disagrees with the sidecar\n{diff}\nIf the validator is right, accept its output with:\n  BLESS=1 cargo test -p asr-suite --test cases -- --exact {}",
        case.name,
        case.sidecar_path.display(),
        case.name
    )
    .into())
}

fn lints(cases: &[Case], root: &Path) -> Vec<Trial> {
    let cases = cases.to_vec();
    let root = root.to_owned();
    let mut trials = Vec::new();
    let all = cases.clone();
    trials.push(Trial::test("lint::corpus_is_not_empty", move || {
        if all.is_empty() {
            Err("no case found under cases/: the corpus is empty".into())
        } else {
            Ok(())
        }
    }));
    let all = cases.clone();
    trials.push(Trial::test(
        "lint::sidecars_match_their_schema",
        move || sidecars_match_schema(&all),
    ));
    let all = cases.clone();
    trials.push(Trial::test("lint::ids_are_unique_and_locked", move || {
        ids_locked(&all, &root)
    }));
    let all = cases.clone();
    trials.push(Trial::test(
        "lint::prefix_agrees_with_expectations",
        move || prefixes(&all),
    ));
    let all = cases.clone();
    trials.push(Trial::test("lint::named_rules_exist", move || {
        rules_exist(&all)
    }));
    trials.push(Trial::test(
        "lint::stream_rules_have_two_positives_and_two_negatives",
        move || stream_rules_covered(&cases),
    ));
    trials
}

fn sidecars_match_schema(cases: &[Case]) -> Result<(), Failed> {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../schemas/case.schema.json"))
            .map_err(|e| e.to_string())?;
    let validator = jsonschema::validator_for(&schema).map_err(|e| e.to_string())?;
    let mut problems = Vec::new();
    for case in cases {
        let text = std::fs::read_to_string(&case.sidecar_path).map_err(|e| e.to_string())?;
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        for error in validator.iter_errors(&value) {
            problems.push(format!(
                "{}: {} at {}",
                case.name,
                error,
                error.instance_path()
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

fn ids_locked(cases: &[Case], root: &Path) -> Result<(), Failed> {
    let lock = std::fs::read_to_string(root.join("ids.lock"))
        .map_err(|e| format!("failed to read cases/ids.lock: {e}"))?;
    let mut locked: BTreeMap<&str, &str> = BTreeMap::new();
    let mut problems = Vec::new();
    for line in lock
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (id, name) = line.split_once('\t').unwrap_or((line, ""));
        if locked.insert(id, name).is_some() {
            problems.push(format!("ids.lock names {id} twice"));
        }
    }
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for case in cases {
        let id = case.sidecar.id.as_str();
        if let Some(other) = seen.insert(id, &case.name) {
            problems.push(format!("{id} is the id of both {other} and {}", case.name));
        }
        match locked.get(id) {
            None => problems.push(format!(
                "{id} ({}) is not in cases/ids.lock: add `{id}\\t{}`",
                case.name, case.name
            )),
            Some(&name) if name != case.name => {
                problems.push(format!(
                    "ids.lock gives {id} to {name}, but {} has it: ids are never reused",
                    case.name
                ));
            }
            Some(_) => {}
        }
    }
    for (id, name) in &locked {
        if *name != "retired" && !seen.contains_key(id) {
            problems.push(format!("ids.lock names {id} for {name}, which is gone: write `retired` in place of its name"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

fn prefixes(cases: &[Case]) -> Result<(), Failed> {
    let mut problems = Vec::new();
    for case in cases {
        let Some(expect) = &case.sidecar.expect.validator else {
            continue;
        };
        let findings = || {
            expect
                .violations
                .iter()
                .filter(|v| v.severity != Severity::Notice || v.rule == "ASR-412")
        };
        match case.verdict() {
            None => problems.push(format!(
                "{}: the file name starts with none of y_, n_, i_",
                case.name
            )),
            Some(Verdict::Accept) => {
                if !expect.valid
                    || expect
                        .violations
                        .iter()
                        .any(|v| v.severity != Severity::Notice)
                {
                    problems.push(format!(
                        "{}: a y_ case expects errors or warnings",
                        case.name
                    ));
                }
            }
            Some(Verdict::Reject) => {
                if findings().next().is_none() {
                    problems.push(format!("{}: an n_ case expects no finding", case.name));
                }
                for v in findings() {
                    if !case.sidecar.rules.contains(&v.rule) {
                        problems.push(format!(
                            "{}: an n_ case breaks {} too, beyond the rules it names: a negative breaks one rule",
                            case.name, v.rule
                        ));
                    }
                }
            }
            Some(Verdict::Either) => {
                if expect.if_rejected.is_empty() {
                    problems.push(format!(
                        "{}: an i_ case needs ifRejected: the rules a rejection must cite",
                        case.name
                    ));
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

fn rules_exist(cases: &[Case]) -> Result<(), Failed> {
    let catalog = Catalog::embedded();
    let unknown: Vec<String> = cases
        .iter()
        .flat_map(|c| c.sidecar.rules.iter().map(move |r| (c, r)))
        .filter(|(_, r)| !catalog.knows(r))
        .map(|(c, r)| format!("{}: {r} is in no catalog", c.name))
        .collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(unknown.join("\n").into())
    }
}

fn stream_rules_covered(cases: &[Case]) -> Result<(), Failed> {
    let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for case in cases {
        for rule in &case.sidecar.rules {
            let entry = counts.entry(rule.as_str()).or_default();
            match case.verdict() {
                Some(Verdict::Accept) => entry.0 += 1,
                Some(Verdict::Reject) => entry.1 += 1,
                _ => {}
            }
        }
    }
    let short: BTreeSet<String> = Catalog::embedded()
        .rules
        .iter()
        .filter(|r| r.checks.contains(&CheckKind::Stream))
        .filter_map(|r| {
            let (y, n) = counts.get(r.id.as_str()).copied().unwrap_or_default();
            (y < 2 || n < 2).then(|| format!("{}: {y} positive, {n} negative", r.id))
        })
        .collect();
    if short.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "stream rules need at least 2 positive and 2 negative cases:\n{}",
            short.into_iter().collect::<Vec<_>>().join("\n")
        )
        .into())
    }
}
