//! The source fixtures (`cases/sources/`): one test per fixture that its golden output meets
//! it, its sidecar fits its schema and names exactly the rules its assertions test; the lint
//! that every rule binding producers to the source has a fixture assertion (but those still
//! listed as waiting); each fixture's mistakes (wrong outputs) failed under their rule alone;
//! fixtures whose sources share lines agree on what those lines hold.

use asr_suite::catalog::{Catalog, CheckKind};
use asr_suite::source::{FixtureProvenance, Mistake, SourceFixture, load_fixtures};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use std::collections::BTreeSet;

// `pub`: this binary uses part of the helpers, and what it leaves unused is no dead code.
#[path = "it/helpers.rs"]
pub mod helpers;
mod wrong_producers;

/// The rules that bind producers to the source and have no fixture assertion yet. The lint
/// fails when one of them gets one, so the list only shrinks.
const SOURCE_RULES_WAITING: &[&str] = &[];

/// The real sessions (cases/sources/PROVENANCE.md) that no fixture is cut from yet. The lint
/// fails when one of them gets a fixture, so the list only shrinks.
const REAL_SESSIONS_WAITING: &[&str] = &[];

fn main() {
    let args = Arguments::from_args();
    let fixtures = load_fixtures(&helpers::sources()).expect("the fixtures load");
    let mut trials: Vec<Trial> = fixtures
        .iter()
        .map(|fixture| {
            let kind = fixture.sidecar.rules.join(",");
            let fixture = fixture.clone();
            Trial::test(fixture.name.clone(), move || self_test(&fixture)).with_kind(kind)
        })
        .collect();
    let all = fixtures.clone();
    trials.push(Trial::test(
        "lint::every_source_rule_has_a_fixture_assertion",
        move || {
            problems(&source_coverage(
                &all,
                Catalog::embedded(),
                SOURCE_RULES_WAITING,
            ))
        },
    ));
    trials.push(Trial::test(
        "lint::the_coverage_lint_reports_a_rule_without_assertion",
        || {
            // With no fixture and nothing waiting, every source rule is reported.
            let found = source_coverage(&[], Catalog::embedded(), &[]);
            if found.iter().any(|p| p.starts_with("ASR-211:")) && found.len() >= 20 {
                Ok(())
            } else {
                Err(format!("{found:?}").into())
            }
        },
    ));
    let cut = fixtures.clone();
    trials.push(Trial::test(
        "lint::every_real_session_has_a_fixture_cut_from_it",
        move || {
            let listed = real_sessions()?;
            problems(&uncut(&cut, &listed, REAL_SESSIONS_WAITING))
        },
    ));
    let some = fixtures.clone();
    trials.push(Trial::test(
        "lint::the_real_session_lint_reports_a_session_without_a_fixture",
        move || {
            let listed = real_sessions()?;
            let none = uncut(&[], &listed, &[]);
            let claimed = uncut(&some, &listed, &[listed[0].as_str()]);
            if listed.len() >= 6
                && none.len() == listed.len()
                && claimed.iter().any(|p| p.contains("take it off"))
            {
                Ok(())
            } else {
                Err(format!("{listed:?}: {none:?} {claimed:?}").into())
            }
        },
    ));
    let everyone = fixtures.clone();
    let shared = fixtures.clone();
    trials.push(Trial::test(
        "lint::fixtures_sharing_source_lines_agree_on_them",
        move || problems(&asr_suite::lint::shared_source_lines(&shared)),
    ));
    trials.push(Trial::test("lint::ids_are_unique", move || {
        let mut seen = BTreeSet::new();
        let twice: Vec<String> = fixtures
            .iter()
            .filter(|f| !seen.insert(f.sidecar.id.clone()))
            .map(|f| format!("{}: id {} is taken", f.name, f.sidecar.id))
            .collect();
        problems(&twice)
    }));
    trials.push(Trial::test(
        "lint::a_mistake_the_fixture_does_not_fail_under_its_rule_alone_is_reported",
        mistakes_are_checked,
    ));
    for wrong in wrong_producers::all() {
        let all = everyone.clone();
        let kind = wrong.rules.join(",");
        trials.push(
            Trial::test(format!("wrong_producer::{}", wrong.name), move || {
                failed_wherever_it_shows(&wrong, &all)
            })
            .with_kind(kind),
        );
    }
    libtest_mimic::run(&args, trials).exit();
}

/// The wrong producer fails, under one of its rules, every fixture whose output its mistake
/// changes (hard where it says so, on a stable fixture), and its mistake shows on one
/// fixture at least.
fn failed_wherever_it_shows(
    wrong: &wrong_producers::Wrong,
    fixtures: &[SourceFixture],
) -> Result<(), Failed> {
    let mut changed = 0;
    let mut found = Vec::new();
    for fixture in fixtures {
        let golden = fixture.expected()?;
        let streams: Vec<wrong_producers::Stream> = golden
            .iter()
            .map(|(name, bytes)| {
                let records = String::from_utf8_lossy(bytes)
                    .lines()
                    .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                    .filter_map(|v| match v {
                        Value::Object(o) => Some(o),
                        _ => None,
                    })
                    .collect();
                (name.clone(), records)
            })
            .collect();
        let source = fixture.source()?;
        let facts = asr_suite::facts::read(&fixture.sidecar.format, source.files());
        let mut made = streams.clone();
        (wrong.make)(&mut made, &facts);
        if made == streams {
            continue;
        }
        changed += 1;
        let output: Vec<(String, Vec<u8>)> = made
            .iter()
            .map(|(name, records)| {
                let mut bytes = Vec::new();
                for record in records {
                    bytes.extend(serde_json::to_vec(record).unwrap_or_default());
                    bytes.push(b'\n');
                }
                (name.clone(), bytes)
            })
            .collect();
        let view: Vec<(&str, &[u8])> = output
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        let failures = asr_suite::judge::judge_output(fixture, &source, &view);
        let under_its_rule: Vec<_> = failures
            .iter()
            .filter(|f| wrong.rules.contains(&f.rule.as_str()))
            .collect();
        let stable = fixture.sidecar.status == asr_suite::case::Status::Stable;
        if under_its_rule.is_empty() {
            let rules: BTreeSet<&str> = failures.iter().map(|f| f.rule.as_str()).collect();
            found.push(format!(
                "{}: not failed under {:?} (failed under {rules:?})",
                fixture.name, wrong.rules
            ));
        } else if wrong.hard
            && stable
            && !under_its_rule
                .iter()
                .any(|f| f.decision.is_none() && !f.warning)
        {
            found.push(format!(
                "{}: failed under {:?} only non-strictly: {:?}",
                fixture.name,
                wrong.rules,
                under_its_rule
                    .iter()
                    .map(|f| &f.message)
                    .collect::<Vec<_>>()
            ));
        }
    }
    if changed == 0 {
        found.push("the mistake changes no fixture's output: it tests nothing".to_owned());
    }
    problems(&found)
}

fn problems(found: &[String]) -> Result<(), Failed> {
    if found.is_empty() {
        Ok(())
    } else {
        Err(found.join("\n").into())
    }
}

/// The golden meets its fixture; the sidecar fits its schema; its rules are exactly the
/// rules of its assertions, each in the catalog.
fn self_test(fixture: &SourceFixture) -> Result<(), Failed> {
    let text = std::fs::read_to_string(fixture.dir.join("fixture.json"))?;
    let sidecar: Value = serde_json::from_str(&text)?;
    // A fixture the fuzzer found has no golden and no mistakes to test.
    if fixture.sidecar.provenance.is_fuzzed() {
        return problems(&asr_suite::lint::source_fixture(fixture, &sidecar));
    }
    let mut found = sidecar_schema(&sidecar)?;
    let asserted: BTreeSet<&String> = fixture
        .sidecar
        .expect
        .producer
        .assertions
        .iter()
        .map(|a| &a.rule)
        .collect();
    let named: BTreeSet<&String> = fixture.sidecar.rules.iter().collect();
    if asserted != named {
        found.push(format!(
            "rules {named:?} are not the rules of its assertions, {asserted:?}"
        ));
    }
    for rule in named.iter().filter(|r| !Catalog::embedded().knows(r)) {
        found.push(format!("{rule} is in no catalog"));
    }
    found.extend(unguarded(fixture));
    found.extend(asr_suite::judge::misjudged(fixture)?);
    let source = fixture.source()?;
    let expected = fixture.expected()?;
    if expected.is_empty() {
        found.push("expected/ holds no golden output".into());
    }
    let output: Vec<(&str, &[u8])> = expected
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    found.extend(
        asr_suite::judge::judge_output(fixture, &source, &output)
            .into_iter()
            .map(|f| format!("the golden fails: {}: {}", f.rule, f.message)),
    );
    let named: Vec<String> = found
        .into_iter()
        .map(|p| format!("{}: {p}", fixture.name))
        .collect();
    problems(&named)
}

/// The files of the real sessions' table in cases/sources/PROVENANCE.md.
fn real_sessions() -> Result<Vec<String>, Failed> {
    let text = std::fs::read_to_string(helpers::sources().join("PROVENANCE.md"))?;
    let files: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("| "))
        .filter_map(|l| l.split('|').nth(2))
        .filter_map(|cell| cell.trim().strip_prefix('`')?.strip_suffix('`'))
        .map(str::to_owned)
        .collect();
    if files.is_empty() {
        return Err("cases/sources/PROVENANCE.md lists no real session".into());
    }
    Ok(files)
}

/// Each real session no fixture is cut from (unless waiting), and each waiting one that has
/// a fixture now.
fn uncut(fixtures: &[SourceFixture], listed: &[String], waiting: &[&str]) -> Vec<String> {
    let cut: BTreeSet<&str> = fixtures
        .iter()
        .filter_map(|f| match &f.sidecar.provenance {
            FixtureProvenance::RealSession { file, .. } => Some(file.as_str()),
            FixtureProvenance::HandWritten { .. } | FixtureProvenance::Fuzzed { .. } => None,
        })
        .collect();
    let mut found = Vec::new();
    for file in listed {
        match (
            cut.contains(file.as_str()),
            waiting.contains(&file.as_str()),
        ) {
            (false, false) => {
                found.push(format!("{file}: no fixture is cut from this real session"));
            }
            (true, true) => found.push(format!(
                "{file}: a fixture is cut from it now: take it off REAL_SESSIONS_WAITING"
            )),
            _ => {}
        }
    }
    found
}

/// The fixture's rules that none of its mistakes breaks.
fn unguarded(fixture: &SourceFixture) -> Vec<String> {
    let guarded: BTreeSet<&String> = fixture.sidecar.mistakes.iter().map(|m| &m.rule).collect();
    fixture
        .sidecar
        .rules
        .iter()
        .filter(|r| !guarded.contains(r))
        .map(|rule| format!("{rule} has no mistake the fixture guards against"))
        .collect()
}

fn sidecar_schema(sidecar: &Value) -> Result<Vec<String>, Failed> {
    let schema = |name: &str| -> Result<Value, Failed> {
        Ok(serde_json::from_str(
            asr_suite::embedded::schema(name).ok_or(format!("no schema {name}"))?,
        )?)
    };
    let registry = jsonschema::Registry::new()
        .add(
            "https://asr-ctk.invalid/schemas/fidelity.schema.json",
            schema("fidelity.schema.json")?,
        )
        .map_err(|e| e.to_string())?
        .prepare()
        .map_err(|e| e.to_string())?;
    let validator = jsonschema::options()
        .with_registry(&registry)
        .build(&schema("source-fixture.schema.json")?)
        .map_err(|e| e.to_string())?;
    Ok(validator
        .iter_errors(sidecar)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect())
}

/// Every rule the catalog says is checked at the source has an assertion in some fixture,
/// but those `waiting`; a rule waiting that has one is reported too, so the list only
/// shrinks.
fn source_coverage(fixtures: &[SourceFixture], catalog: &Catalog, waiting: &[&str]) -> Vec<String> {
    let asserted: BTreeSet<&str> = fixtures
        .iter()
        .flat_map(|f| f.sidecar.expect.producer.assertions.iter())
        .map(|a| a.rule.as_str())
        .collect();
    let mut found = Vec::new();
    for rule in catalog
        .rules
        .iter()
        .filter(|r| r.checks.contains(&CheckKind::Source))
    {
        let has = asserted.contains(rule.id.as_str());
        let waits = waiting.contains(&rule.id.as_str());
        if has && waits {
            found.push(format!(
                "{}: it has a fixture assertion now: take it off SOURCE_RULES_WAITING",
                rule.id
            ));
        } else if !has && !waits {
            found.push(format!("{}: no fixture assertion tests it", rule.id));
        }
    }
    found
}

/// The self-test's check of mistakes fails a mistake that changes nothing, one failed under
/// another rule, and one whose text the golden lacks.
fn mistakes_are_checked() -> Result<(), Failed> {
    let fixtures = load_fixtures(&helpers::sources())?;
    let mut fixture = fixtures
        .into_iter()
        .find(|f| f.name == "codex-rollout/crud_reasoning_01")
        .ok_or("no fixture codex-rollout/crud_reasoning_01")?;
    let real = fixture.sidecar.mistakes[0].clone();
    let harmless = Mistake {
        with: real.replace.clone(),
        ..real.clone()
    };
    let elsewhere = Mistake {
        rule: "ASR-211".into(),
        ..real.clone()
    };
    let absent = Mistake {
        replace: "no golden says this".into(),
        ..real.clone()
    };
    fixture.sidecar.mistakes = vec![real, harmless, elsewhere, absent];
    let found = asr_suite::judge::misjudged(&fixture)?;
    fixture.sidecar.mistakes.retain(|m| m.rule == "ASR-211");
    let unguarded = unguarded(&fixture);
    if found.len() == 3
        && found[2].contains("the golden has no")
        && unguarded.len() == 1
        && unguarded[0].starts_with("ASR-214")
    {
        Ok(())
    } else {
        Err(format!("{found:#?}").into())
    }
}
