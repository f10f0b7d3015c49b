//! Checks of the corpus itself: a corpus whose cases can pass for the wrong reason, whose ids
//! drift or whose rules go untested is a corpus nobody can certify against. Each check
//! returns the problems it found, as sentences; none is a pass.

use crate::case::{Case, Provenance, Verdict};
use crate::catalog::{Catalog, CheckKind};
use crate::diagnostic::Severity;
use crate::rule;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The sidecar schema, as compiled into the kit.
pub const CASE_SCHEMA: &str = include_str!("../schemas/case.schema.json");

/// A sidecar's JSON against `schemas/case.schema.json`.
pub fn sidecar_schema(name: &str, sidecar: &Value) -> Vec<String> {
    let schema: Value = match serde_json::from_str(CASE_SCHEMA) {
        Ok(schema) => schema,
        Err(e) => return vec![format!("the case schema is not JSON: {e}")],
    };
    let validator = match jsonschema::validator_for(&schema) {
        Ok(validator) => validator,
        Err(e) => return vec![format!("the case schema does not compile: {e}")],
    };
    validator
        .iter_errors(sidecar)
        .map(|e| format!("{name}: {e} at {}", e.instance_path()))
        .collect()
}

/// A source fixture the corpus can take: its sidecar's JSON (`sidecar`) fits
/// `schemas/source-fixture.schema.json`, its rules are in the catalog, its source is there,
/// and it has a golden under `expected/` unless the fuzzer generated it (provenance
/// `fuzzed`: judged by the stream checker and the conservation properties alone).
pub fn source_fixture(fixture: &crate::source::SourceFixture, sidecar: &Value) -> Vec<String> {
    let mut found = fixture_schema(sidecar);
    for rule in fixture
        .sidecar
        .rules
        .iter()
        .filter(|r| !Catalog::embedded().knows(r))
    {
        found.push(format!("{rule} is in no catalog"));
    }
    match fixture.source() {
        Ok(source) if source.files().is_empty() => found.push("source/ holds no file".into()),
        Ok(_) => {}
        Err(e) => found.push(e.to_string()),
    }
    let fuzzed = fixture.sidecar.provenance.is_fuzzed();
    let has_dir = std::fs::symlink_metadata(fixture.dir.join("expected")).is_ok();
    match fixture.expected() {
        _ if !has_dir && !fuzzed => found.push("expected/ holds no golden output".into()),
        Ok(golden) if golden.is_empty() && !fuzzed => {
            found.push("expected/ holds no golden output".into());
        }
        Ok(_) => {}
        Err(e) => found.push(e.to_string()),
    }
    found
        .into_iter()
        .map(|p| format!("{}: {p}", fixture.name))
        .collect()
}

fn fixture_schema(sidecar: &Value) -> Vec<String> {
    let schema = |name: &str| -> Result<Value, String> {
        let text = crate::embedded::schema(name).ok_or(format!("the kit has no schema {name}"))?;
        serde_json::from_str(text).map_err(|e| e.to_string())
    };
    let validator = schema("fidelity.schema.json").and_then(|fidelity| {
        let registry = jsonschema::Registry::new()
            .add(
                "https://asr-ctk.invalid/schemas/fidelity.schema.json",
                fidelity,
            )
            .map_err(|e| e.to_string())?
            .prepare()
            .map_err(|e| e.to_string())?;
        jsonschema::options()
            .with_registry(&registry)
            .build(&schema("source-fixture.schema.json")?)
            .map_err(|e| e.to_string())
    });
    match validator {
        Ok(validator) => validator
            .iter_errors(sidecar)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect(),
        Err(e) => vec![format!("the source fixture schema does not compile: {e}")],
    }
}

/// Ids: unique, each in the lock file under its case's name, and no locked id lost.
pub fn ids(cases: &[Case], lock: &str) -> Vec<String> {
    let mut locked: BTreeMap<&str, &str> = BTreeMap::new();
    let mut problems = Vec::new();
    for (id, name) in crate::case::locked_ids(lock) {
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
                "{id} ({}) is not in cases/ids.lock: add `{id}<TAB>{}`",
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
        // A source fixture's id (one --promote gave) is no case's: the fixtures' own test
        // checks their ids.
        if *name != "retired" && !name.starts_with("sources/") && !seen.contains_key(id) {
            problems.push(format!("ids.lock names {id} for {name}, which is gone: write `retired` in place of its name"));
        }
    }
    problems
}

/// The file name's verdict agrees with the expectations: `y_` expects no error or warning,
/// `n_` expects findings and only under the rules it names (a negative breaks one rule, so
/// it cannot pass for another reason), `i_` says which rules a rejection must cite.
pub fn prefixes(cases: &[Case]) -> Vec<String> {
    let mut problems = Vec::new();
    for case in cases {
        let Some(expect) = &case.sidecar.expect.validator else {
            continue;
        };
        let counted =
            |v: &&crate::case::Violation| v.severity != Severity::Notice || v.rule == rule::ASR_412;
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
                if !expect.violations.iter().any(|v| counted(&v)) {
                    problems.push(format!("{}: an n_ case expects no finding", case.name));
                }
                for v in expect.violations.iter().filter(counted) {
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
    problems
}

/// Every rule a case names is in the catalog.
pub fn rules_exist(cases: &[Case], catalog: &Catalog) -> Vec<String> {
    cases
        .iter()
        .flat_map(|c| c.sidecar.rules.iter().map(move |r| (c, r)))
        .filter(|(_, r)| !catalog.knows(r))
        .map(|(c, r)| format!("{}: {r} is in no catalog", c.name))
        .collect()
}

/// The decisions hold together: every decision a sidecar names is in the catalog, a
/// `tentative` case names one, a decision's rules are the catalog's and its cases are
/// implementation-defined (`i_`) cases of the corpus.
pub fn decisions(cases: &[Case], catalog: &Catalog) -> Vec<String> {
    let mut problems = Vec::new();
    for case in cases {
        match &case.sidecar.decision {
            Some(id) if catalog.decision(id).is_none() => problems.push(format!(
                "{}: decision {id:?} is not in the catalog (cases/rules.toml, [[decision]])",
                case.name
            )),
            None if case.sidecar.status == crate::case::Status::Tentative => {
                problems.push(format!(
                    "{}: a tentative case names the decision its expectations rest on",
                    case.name
                ));
            }
            _ => {}
        }
    }
    for id in crate::conserve::DECISIONS {
        if !catalog.decisions.iter().any(|d| d.id == id) {
            problems.push(format!(
                "decision {id}: a conservation property rests on it, but the catalog has no such decision"
            ));
        }
    }
    for decision in &catalog.decisions {
        for rule in decision.rules.iter().filter(|r| !catalog.knows(r)) {
            problems.push(format!("decision {}: {rule} is in no catalog", decision.id));
        }
        for name in &decision.cases {
            match cases.iter().find(|c| &c.name == name) {
                None => problems.push(format!("decision {}: no case {name}", decision.id)),
                Some(c) if c.verdict() != Some(Verdict::Either) => problems.push(format!(
                    "decision {}: {name} is not an implementation-defined (i_) case",
                    decision.id
                )),
                Some(_) => {}
            }
        }
        if decision.reading.is_none()
            && decision.cases.is_empty()
            && !crate::conserve::DECISIONS.contains(&decision.id.as_str())
            && !cases
                .iter()
                .any(|c| c.sidecar.decision.as_ref() == Some(&decision.id))
        {
            problems.push(format!(
                "decision {}: it shapes no member of the reading and no case rests on it",
                decision.id
            ));
        }
    }
    problems
}

/// A reader case that lets a reader refuse (`mayRefuse`) names the decision that lets it: the
/// spec text in hand asks a reader to read the stream, and only the kit's decision (a line it
/// cannot represent, a blank line) lets it refuse.
pub fn may_refuse_names_a_decision(cases: &[Case]) -> Vec<String> {
    cases
        .iter()
        .filter(|c| c.sidecar.expect.readers().any(|r| r.may_refuse))
        .filter(|c| c.sidecar.decision.is_none())
        .map(|c| {
            format!(
                "{}: a reader case with mayRefuse names the decision that lets a reader refuse (\"decision\")",
                c.name
            )
        })
        .collect()
}

/// Every clause a case names is a clause of the catalog, of one of the rules the case names.
pub fn clauses_exist(cases: &[Case], catalog: &Catalog) -> Vec<String> {
    let mut problems = Vec::new();
    for case in cases {
        for id in &case.sidecar.clauses {
            match catalog.clause(id) {
                None => problems.push(format!("{}: {id} is no clause of the catalog", case.name)),
                Some((rule, _)) if !case.sidecar.rules.contains(&rule.id) => {
                    problems.push(format!(
                        "{}: {id} is a clause of {}, which the case does not name in its rules",
                        case.name, rule.id
                    ));
                }
                Some(_) => {}
            }
        }
    }
    problems
}

/// The negative (`n_`) cases that name each clause, by clause id.
pub fn clause_negatives(cases: &[Case]) -> BTreeMap<&str, Vec<&Case>> {
    let mut named: BTreeMap<&str, Vec<&Case>> = BTreeMap::new();
    for case in cases
        .iter()
        .filter(|c| c.verdict() == Some(Verdict::Reject))
    {
        for id in &case.sidecar.clauses {
            named.entry(id.as_str()).or_default().push(case);
        }
    }
    named
}

/// The clauses of the rules checked in streams that no negative case names, in catalog order:
/// the requirements nothing shows a validator enforcing. A mutator that breaks a clause does
/// not count: a validator that skips the clause passes every case, whatever the fuzzer finds.
pub fn uncovered_clauses(catalog: &Catalog, cases: &[Case]) -> Vec<String> {
    let named = clause_negatives(cases);
    catalog
        .stream_rules()
        .flat_map(|r| &r.clauses)
        .filter(|c| !named.contains_key(c.id.as_str()))
        .map(|c| c.id.clone())
        .collect()
}

/// The clauses of rules checked in streams that wait for a negative case, each with the
/// reason: none today. An exempted clause that a negative case names is reported by
/// [`clause_coverage`], so an entry goes as soon as its case comes.
pub const CLAUSES_WITHOUT_A_NEGATIVE: &[(&str, &str)] = &[];

/// Every clause of a rule checked in streams is named by a negative case, but those `exempt`
/// lists (clause id, reason); an exempted clause that a negative case names, or that is no
/// clause of a rule checked in streams, is a problem too, so the list cannot go stale.
pub fn clause_coverage(catalog: &Catalog, cases: &[Case], exempt: &[(&str, &str)]) -> Vec<String> {
    let uncovered = uncovered_clauses(catalog, cases);
    let mut problems: Vec<String> = uncovered
        .iter()
        .filter(|clause| !exempt.iter().any(|(id, _)| id == clause))
        .map(|clause| format!("{clause}: no negative case names it"))
        .collect();
    for (id, reason) in exempt {
        let stream = catalog
            .clause(id)
            .is_some_and(|(rule, _)| rule.checks.contains(&CheckKind::Stream));
        if !stream {
            problems.push(format!(
                "{id} is exempted from having a negative case ({reason}), but it is no clause of a rule checked in streams"
            ));
        } else if !uncovered.iter().any(|c| c == id) {
            problems.push(format!(
                "{id} is exempted from having a negative case ({reason}), but a negative case names it now: take it off the exemptions"
            ));
        }
    }
    problems
}

/// Every open value set of the catalog has a `y_` case whose streams give its member a value
/// the set does not list (a vendor value), so a validator that wrongly closes the set rejects
/// a stream it must accept. The sets without one are reported.
pub fn open_value_sets(catalog: &Catalog, cases: &[Case]) -> Vec<String> {
    let positives: Vec<Vec<Map<String, Value>>> = cases
        .iter()
        .filter(|c| c.verdict() == Some(Verdict::Accept))
        .map(stream_records)
        .collect();
    catalog
        .value_sets()
        .iter()
        .filter(|set| set.open)
        .filter(|set| {
            !positives.iter().flatten().any(|record| {
                set.values_in(record)
                    .iter()
                    .any(|value| !set.values.iter().any(|listed| listed == value))
            })
        })
        .map(|set| {
            format!(
                "{}: the set is open, but no y_ case gives the member a value it does not list",
                set.member
            )
        })
        .collect()
}

/// One member the spec text makes optional, as `cases/optional-members.toml` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct OptionalMember {
    /// The member, in the notation of the catalog's value sets (`plan.entries[].priority`).
    pub member: String,
    /// Conditions on the object that lacks the member, when it may lack it only then: a path
    /// from that object that is present (`capture.role`), or a path, `=` and the string it
    /// holds (`planType=document`).
    #[serde(default)]
    pub when: Vec<String>,
    /// The spec's words that make the member optional, quoted.
    pub source: String,
    /// The `y_` cases whose streams have a record (or part, or entry) without the member.
    pub cases: Vec<String>,
}

/// Failure to read `cases/optional-members.toml`.
#[derive(Debug, thiserror::Error)]
#[error("failed to parse the list of optional members: {0}")]
pub struct OptionalMembersError(#[from] toml::de::Error);

/// Parses `cases/optional-members.toml`: `[[optional]]` tables of [`OptionalMember`].
pub fn parse_optional_members(text: &str) -> Result<Vec<OptionalMember>, OptionalMembersError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct List {
        optional: Vec<OptionalMember>,
    }
    Ok(toml::from_str::<List>(text)?.optional)
}

/// Every member listed as optional has `y_` cases whose streams hold an object of its kind
/// without it (meeting its `when` conditions), so a validator that wrongly requires the member
/// rejects a stream it must accept. A listed case that is missing, is not a `y_` case, or
/// whose streams have no such object is reported, as is an entry without cases or source.
pub fn optional_members(listed: &[OptionalMember], cases: &[Case]) -> Vec<String> {
    let mut problems = Vec::new();
    if listed.is_empty() {
        problems.push("the list of optional members is empty".to_owned());
    }
    let mut seen = BTreeSet::new();
    for entry in listed {
        let label = if entry.when.is_empty() {
            entry.member.clone()
        } else {
            format!("{} (when {})", entry.member, entry.when.join(", "))
        };
        if !crate::catalog::is_member_path(&entry.member) {
            problems.push(format!(
                "{label}: not a member path in the catalog's notation"
            ));
            continue;
        }
        if !seen.insert((&entry.member, &entry.when)) {
            problems.push(format!("{label}: listed twice"));
        }
        if entry.source.trim().is_empty() {
            problems.push(format!("{label}: no source quotes the spec"));
        }
        if entry.cases.is_empty() {
            problems.push(format!("{label}: no case is listed"));
        }
        for name in &entry.cases {
            let Some(case) = cases.iter().find(|c| &c.name == name) else {
                problems.push(format!("{label}: {name} is no case of the corpus"));
                continue;
            };
            if case.verdict() != Some(Verdict::Accept) {
                problems.push(format!("{label}: {name} is not a y_ case"));
                continue;
            }
            let lacking = stream_records(case).iter().any(|record| {
                let (holders, member) = crate::catalog::member_holders(&entry.member, record);
                holders.iter().any(|object| {
                    !object.contains_key(member)
                        && entry.when.iter().all(|c| condition_holds(object, c))
                })
            });
            if !lacking {
                problems.push(format!("{label}: no record of {name} lacks the member"));
            }
        }
    }
    problems
}

/// Whether `object` meets a `when` condition of an [`OptionalMember`].
fn condition_holds(object: &Map<String, Value>, condition: &str) -> bool {
    let (path, wanted) = match condition.split_once('=') {
        Some((path, wanted)) => (path, Some(wanted)),
        None => (condition, None),
    };
    let mut steps = path.split('.');
    let first = steps.next().and_then(|step| object.get(step));
    let reached = steps.fold(first, |value, step| value.and_then(|v| v.get(step)));
    match (reached, wanted) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some(value), Some(wanted)) => value.as_str() == Some(wanted),
    }
}

/// The JSON objects on the lines of a case's streams; lines that are not are left out.
fn stream_records(case: &Case) -> Vec<Map<String, Value>> {
    case.streams
        .iter()
        .filter_map(|(_, path)| std::fs::read(path).ok())
        .flat_map(|bytes| {
            crate::lines::split(&bytes)
                .bytes()
                .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
                .filter_map(|value| match value {
                    Value::Object(object) => Some(object),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Positive and negative cases per rule named. A negative is a case whose expectations
/// have a finding under the rule (an `n_` case; an `i_` case where the reference rejects;
/// for checks that only ever give notices, the case where the notice is given); a positive
/// is a `y_` case that names the rule and expects no finding under it.
pub fn counts(cases: &[Case]) -> BTreeMap<String, (usize, usize)> {
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for case in cases {
        let findings = case
            .sidecar
            .expect
            .validator
            .as_ref()
            .map(|v| v.violations.as_slice())
            .unwrap_or_default();
        for rule in &case.sidecar.rules {
            let entry = counts.entry(rule.clone()).or_default();
            if findings.iter().any(|v| &v.rule == rule) {
                entry.1 += 1;
            } else if case.verdict() == Some(Verdict::Accept) {
                entry.0 += 1;
            }
        }
    }
    counts
}

/// Every `stream` rule and inferred check has at least two positive and two negative cases
/// (as [`counts`] counts them).
pub fn coverage(cases: &[Case], catalog: &Catalog) -> Vec<String> {
    let counts = counts(cases);
    let stream = catalog
        .rules
        .iter()
        .filter(|r| r.checks.contains(&CheckKind::Stream))
        .map(|r| &r.id);
    let validated = catalog
        .inferred
        .iter()
        .filter(|x| x.roles.contains(&crate::catalog::Role::Validator))
        .map(|x| &x.id);
    let mut problems: Vec<String> = stream
        .chain(validated)
        .filter_map(|id| {
            let (y, n) = counts.get(id).copied().unwrap_or_default();
            (y < 2 || n < 2).then(|| {
                format!("{id}: {y} positive and {n} negative cases; it needs at least 2 of each")
            })
        })
        .collect();
    // A check only readers are bound by is tested by readings: two reader cases name it.
    for check in catalog
        .inferred
        .iter()
        .filter(|x| !x.roles.contains(&crate::catalog::Role::Validator))
    {
        let read = cases
            .iter()
            .filter(|c| c.sidecar.expect.reads() && c.sidecar.rules.contains(&check.id))
            .count();
        if read < 2 {
            problems.push(format!(
                "{}: {read} reader cases name it; a check only readers are bound by needs 2",
                check.id
            ));
        }
    }
    problems
}

/// Every reader case names a rule that binds readers (a refusal, or a reading missing, is
/// charged to those: a failure never goes to no rule, nor to a rule that binds no reader),
/// and a decision it rests on says which members of the reading it is about (it softens
/// those and nothing else), unless it is the decision that lets a reader refuse the stream.
pub fn reader_charges(cases: &[Case], catalog: &Catalog) -> Vec<String> {
    let mut problems = Vec::new();
    for case in cases.iter().filter(|c| c.sidecar.expect.reads()) {
        let binding = case
            .sidecar
            .rules
            .iter()
            .any(|r| catalog.binds(r, crate::protocol::ProtocolRole::Reader));
        if !binding {
            problems.push(format!(
                "{}: a reader case names no rule that binds readers (its rules: {}); add the one its reading tests",
                case.name,
                case.sidecar.rules.join(", ")
            ));
        }
        // A decision that lets a reader refuse (`mayRefuse`) is about the refusal: it softens
        // no member, and needs none.
        let may_refuse = case.sidecar.expect.readers().any(|r| r.may_refuse);
        let parts: Vec<&str> = case.streams.iter().map(|(p, _)| p.as_str()).collect();
        let keys: Vec<&str> = case
            .sidecar
            .expect
            .reader_streams
            .keys()
            .map(String::as_str)
            .collect();
        let shaped = match (&case.sidecar.expect.reader, keys.is_empty()) {
            (Some(_), true) => parts.len() == 1,
            (None, false) => {
                parts.len() > 1 && {
                    let mut sorted = parts.clone();
                    sorted.sort_unstable();
                    sorted == keys
                }
            }
            _ => false,
        };
        if !shaped {
            problems.push(format!(
                "{}: a reader case of one stream has `reader`, one of several `readerStreams` with one entry a stream's part (its streams: {parts:?}; readerStreams: {keys:?})",
                case.name
            ));
        }
        if let Some(decision) = case
            .sidecar
            .decision
            .as_deref()
            .and_then(|d| catalog.decision(d))
            && decision.reading.is_none()
            && decision.members.is_empty()
            && !decision.settled
            && !may_refuse
        {
            problems.push(format!(
                "{}: its decision {} names no member of the reading (`members` in cases/rules.toml), so it would soften none",
                case.name, decision.id
            ));
        }
    }
    problems
}

/// Every rule checked through readings has a case with an expected reading that names it,
/// or says in the catalog that it is not tested yet, and why.
pub fn reader_coverage(cases: &[Case], catalog: &Catalog) -> Vec<String> {
    catalog
        .rules
        .iter()
        .filter(|r| r.checks.contains(&CheckKind::Reader))
        .filter(|r| !cases.iter().any(|c| c.sidecar.expect.reads() && c.sidecar.rules.contains(&r.id)))
        .filter(|r| !r.notes.as_deref().is_some_and(|n| n.to_lowercase().contains("not tested yet")))
        .map(|r| format!("{}: no case carries an expected reading for it, and its notes do not say why (\"Not tested yet: ...\")", r.id))
        .collect()
}

/// Every JSON example of the spec texts (file name, text) stands, whole, in the stream of a
/// `y_` case whose provenance names it.
pub fn spec_examples(cases: &[Case], spec: &[(&str, &str)]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut total = 0;
    for (file, text) in spec {
        for example in crate::spec::examples(text) {
            total += 1;
            let case = cases.iter().find(|c| {
                matches!(&c.sidecar.provenance, Provenance::SpecExample { file: f, line, .. } if f == file && *line == example.line)
            });
            let Some(case) = case else {
                problems.push(format!(
                    "{file}:{}: the example has no case with a spec-example provenance naming it",
                    example.line
                ));
                continue;
            };
            if case.verdict() != Some(Verdict::Accept) {
                problems.push(format!(
                    "{}: a spec example's case must be a y_ case",
                    case.name
                ));
            }
            if !stream_holds(&case.streams[0].1, &example.value) {
                problems.push(format!(
                    "{}: its stream does not hold the example of {file}:{} as written",
                    case.name, example.line
                ));
            }
        }
    }
    if total == 0 {
        problems.push("no example found in the spec text".into());
    }
    problems
}

fn stream_holds(path: &Path, example: &Value) -> bool {
    let Ok(stream) = std::fs::read_to_string(path) else {
        return false;
    };
    stream
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .any(|record| holds(&record, example))
}

/// Whether a record holds an example: the record itself, its content array, a part of it,
/// or (for a fragment without a type) its members.
fn holds(record: &Value, example: &Value) -> bool {
    if record == example || record.get("content") == Some(example) {
        return true;
    }
    if let Some(Value::Array(parts)) = record.get("content") {
        if parts.contains(example) {
            return true;
        }
    }
    match example {
        Value::Object(members) if !members.contains_key("type") => {
            members.iter().all(|(k, v)| record.get(k) == Some(v))
        }
        _ => false,
    }
}

/// The shortest source line two fixtures can share and be held to agree on: shorter lines
/// (`{`, `  ],`, a bare timestamp member) recur in sources that have nothing to do with
/// each other.
pub const MIN_SHARED_LINE: usize = 40;

/// Two source fixtures of one format whose sources share a line (byte for byte, at least
/// [`MIN_SHARED_LINE`] bytes) may not contradict each other about what those lines hold:
/// each fixture's assertions about them must hold on the other's golden output. An
/// assertion is about the shared lines when it selects the header (`select.type` names
/// `session`) and both sources put a shared line in sessions of the same id, or when a
/// value of its `select.where` under an id member (`/messageId`, `/callId`, any pointer
/// whose last step ends in `Id` or `id`) is a value the shared lines hold. Text members
/// are not counted: one text recurs in different items (a prompt and its interface echo).
/// A fixture whose files cannot be read is reported.
pub fn shared_source_lines(fixtures: &[crate::source::SourceFixture]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut loaded = Vec::new();
    for fixture in fixtures {
        match (fixture.source(), fixture.expected()) {
            (Ok(source), Ok(golden)) => {
                let facts = crate::facts::read(&fixture.sidecar.format, source.files());
                loaded.push((fixture, source, golden, facts));
            }
            (Err(e), _) | (_, Err(e)) => problems.push(format!("{}: {e}", fixture.name)),
        }
    }
    for (i, a) in loaded.iter().enumerate() {
        for b in loaded.iter().skip(i + 1) {
            if a.0.sidecar.format != b.0.sidecar.format {
                continue;
            }
            let (a_lines, b_lines) = (long_lines(&a.1), long_lines(&b.1));
            let shared: Vec<&[u8]> = a_lines
                .keys()
                .filter(|l| b_lines.contains_key(*l))
                .copied()
                .collect();
            if shared.is_empty() {
                continue;
            }
            problems.extend(disagreements((a, &a_lines), (b, &b_lines), &shared));
            problems.extend(disagreements((b, &b_lines), (a, &a_lines), &shared));
        }
    }
    problems
}

/// A fixture loaded for [`shared_source_lines`]: its source, its golden streams and the facts
/// its format's reader finds in the source.
type Loaded<'a> = (
    &'a crate::source::SourceFixture,
    crate::fidelity::Source,
    Vec<(String, Vec<u8>)>,
    crate::facts::Facts,
);

/// A source's long lines, each with the places (file, 1-based line) it stands.
type Lines<'a> = BTreeMap<&'a [u8], Vec<(String, usize)>>;

/// The assertions of `own` about the `shared` lines that fail on the golden of `other`.
fn disagreements(
    (own, own_lines): (&Loaded<'_>, &Lines<'_>),
    (other, other_lines): (&Loaded<'_>, &Lines<'_>),
    shared: &[&[u8]],
) -> Vec<String> {
    let (fixture, source, _, facts) = own;
    let (other_fixture, other_source, other_golden, other_facts) = other;
    let same_session = shared.iter().any(|line| {
        let here = own_lines.get(line).into_iter().flatten();
        let there: Vec<String> = other_lines
            .get(line)
            .into_iter()
            .flatten()
            .filter_map(|(file, n)| session_of(other_facts, other_source, file, *n))
            .collect();
        here.filter_map(|(file, n)| session_of(facts, source, file, *n))
            .any(|id| there.contains(&id))
    });
    let held: Vec<Value> = shared
        .iter()
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
        .collect();
    let streams: Vec<(&str, &[u8])> = other_golden
        .iter()
        .map(|(name, bytes)| (name.as_str(), bytes.as_slice()))
        .collect();
    let mut problems = Vec::new();
    for (index, assertion) in fixture
        .sidecar
        .expect
        .producer
        .assertions
        .iter()
        .enumerate()
    {
        let header = assertion.select.types.iter().any(|t| t == "session");
        let named = assertion
            .select
            .members
            .iter()
            .filter(|(pointer, _)| is_id_member(pointer))
            .find(|(_, value)| held.iter().any(|line| holds_value(line, value)));
        let why = match (header && same_session, named) {
            (true, _) => {
                "it is about the header of the session both sources put the shared lines in"
                    .to_owned()
            }
            (false, Some((pointer, value))) => {
                format!("it selects {pointer} = {value}, which the shared lines hold")
            }
            (false, None) => continue,
        };
        let failures = crate::fidelity::evaluate(std::slice::from_ref(assertion), &streams, source);
        for failure in failures {
            // The note is said once, with the assertion.
            let failure = crate::fidelity::AssertionFailure {
                note: None,
                ..failure
            };
            problems.push(format!(
                "{} and {} share {} source line(s) but contradict each other: assertion {} of {} ({}{}) fails on the golden of {} ({why}): {failure}",
                fixture.name,
                other_fixture.name,
                shared.len(),
                index + 1,
                fixture.name,
                assertion.rule,
                assertion
                    .note
                    .as_deref()
                    .map(|note| format!(": {note}"))
                    .unwrap_or_default(),
                other_fixture.name,
            ));
        }
    }
    problems
}

/// The lines of the source's files at least [`MIN_SHARED_LINE`] bytes long, each with where
/// it stands.
fn long_lines(source: &crate::fidelity::Source) -> BTreeMap<&[u8], Vec<(String, usize)>> {
    let mut lines: BTreeMap<&[u8], Vec<(String, usize)>> = BTreeMap::new();
    for (name, bytes) in source.files() {
        for (n, line) in crate::lines::split(bytes) {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.len() >= MIN_SHARED_LINE {
                lines.entry(line).or_default().push((name.clone(), n));
            }
        }
    }
    lines
}

/// Whether a `select.where` pointer names an id member (`/messageId`, `/callId`, `/id`).
fn is_id_member(pointer: &str) -> bool {
    let last = pointer.rsplit('/').next().unwrap_or_default();
    last.ends_with("Id") || last.ends_with("id")
}

/// Whether `value` is `line` or stands anywhere within it.
fn holds_value(line: &Value, value: &Value) -> bool {
    crate::json::same(line, value)
        || match line {
            Value::Array(items) => items.iter().any(|item| holds_value(item, value)),
            Value::Object(members) => members.values().any(|member| holds_value(member, value)),
            _ => false,
        }
}

/// The id of the session the source puts line `line` of `file` in: the session its `facts`
/// ([`crate::facts`]) put an item of that line in, or else the session the line or its
/// file names natively (a line's `sessionId`, or a subagent's `agentId` beside
/// `isSidechain: true`, as Claude Code writes them; the file's `session_meta` payload id, as
/// Codex writes it; the id of its `session` line, as pi and OpenClaw write it; a JSON file's
/// root `sessionId`, as Gemini CLI writes it). `None` when neither says.
fn session_of(
    facts: &crate::facts::Facts,
    source: &crate::fidelity::Source,
    file: &str,
    line: usize,
) -> Option<String> {
    let item = facts
        .items
        .iter()
        .find(|item| item.at.file == file && item.at.line == Some(line));
    if let Some(session) = item.and_then(|item| facts.sessions.get(item.session)) {
        return Some(session.id.clone());
    }
    let bytes = source
        .files()
        .iter()
        .find(|(name, _)| name == file)
        .map(|(_, bytes)| bytes)?;
    let text = |value: &Value, pointer: &str| {
        value
            .pointer(pointer)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let values: Vec<Value> = crate::lines::split(bytes)
        .with_final_empty()
        .bytes()
        .map(|l| serde_json::from_slice(l).unwrap_or(Value::Null))
        .collect();
    if let Some(value) = values.get(line.checked_sub(1)?) {
        if value.get("isSidechain") == Some(&Value::Bool(true)) {
            if let Some(agent) = text(value, "/agentId") {
                return Some(agent);
            }
        }
        if let Some(id) = text(value, "/sessionId") {
            return Some(id);
        }
    }
    let named = values
        .iter()
        .find_map(|value| match value.get("type").and_then(Value::as_str) {
            Some("session_meta") => text(value, "/payload/id"),
            Some("session") => text(value, "/id"),
            _ => None,
        });
    named.or_else(|| {
        serde_json::from_slice::<Value>(bytes)
            .ok()
            .and_then(|whole| text(&whole, "/sessionId"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::{Expect, Sidecar, Status, ValidatorExpect, Violation};
    use crate::catalog::Role;
    use serde_json::json;
    use std::path::PathBuf;

    fn case(
        name: &str,
        id: &str,
        rules: &[&str],
        valid: bool,
        violations: &[(&str, Severity)],
    ) -> Case {
        Case {
            name: name.into(),
            sidecar_path: PathBuf::from(format!("{name}.json")),
            streams: vec![(String::new(), PathBuf::from(format!("{name}.jsonl")))],
            sidecar: Sidecar {
                id: id.into(),
                description: "a case for testing the lints".into(),
                rules: rules.iter().map(|r| (*r).to_owned()).collect(),
                clauses: Vec::new(),
                roles: vec![Role::Validator],
                decision: None,
                expect: Expect {
                    validator: Some(ValidatorExpect {
                        valid,
                        violations: violations
                            .iter()
                            .map(|(rule, severity)| Violation {
                                rule: (*rule).into(),
                                severity: *severity,
                                line: 2,
                                pointer: String::new(),
                                file: None,
                            })
                            .collect(),
                        if_rejected: Vec::new(),
                    }),
                    reader: None,
                    reader_streams: BTreeMap::default(),
                },
                provenance: Provenance::HandWritten { note: None },
                status: Status::Stable,
            },
            fixture: None,
        }
    }

    #[test]
    fn decisions_must_be_named_in_the_catalog_and_tentative_cases_must_name_one() {
        let catalog = Catalog::embedded();
        // The catalog's own decisions, against its corpus: every i_ case it lists exists.
        let corpus =
            crate::case::load_corpus(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases"))
                .expect("corpus");
        assert_eq!(decisions(&corpus, catalog), Vec::<String>::new());
        let mut unknown = case("x/n_a", "c0001", &["ASR-212"], false, &[]);
        unknown.sidecar.decision = Some("no-such-decision".into());
        let mut tentative = case("x/y_b", "c0002", &["ASR-212"], true, &[]);
        tentative.sidecar.status = Status::Tentative;
        let problems = decisions(&[unknown, tentative], catalog);
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("x/n_a: decision \"no-such-decision\""))
        );
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("x/y_b: a tentative case"))
        );
        // Without the corpus, the i_ cases the decisions list are missing.
        assert!(
            problems
                .iter()
                .any(|p| p.contains("no case inferred/ASR-X-006/i_data_nested_129_levels"))
        );
    }

    #[test]
    fn ids_must_be_unique_locked_and_never_lost() {
        let a = case("m/ASR-212/y_a", "c0001", &["ASR-212"], true, &[]);
        let b = case("m/ASR-212/y_b", "c0002", &["ASR-212"], true, &[]);
        assert!(
            ids(
                &[a.clone(), b.clone()],
                "c0001\tm/ASR-212/y_a\nc0002\tm/ASR-212/y_b\n"
            )
            .is_empty()
        );
        assert!(
            ids(
                std::slice::from_ref(&a),
                "c0001\tm/ASR-212/y_a\nc0002\tretired\n"
            )
            .is_empty()
        );
        let twice = case("m/ASR-212/y_c", "c0001", &["ASR-212"], true, &[]);
        assert_eq!(ids(&[a.clone(), twice], "c0001\tm/ASR-212/y_a\n").len(), 2);
        assert_eq!(
            ids(&[a.clone(), b.clone()], "c0001\tm/ASR-212/y_a\n").len(),
            1,
            "b is not locked"
        );
        assert_eq!(
            ids(
                std::slice::from_ref(&a),
                "c0001\tm/ASR-212/y_a\nc0002\tm/ASR-212/y_b\n"
            )
            .len(),
            1,
            "b is lost"
        );
        assert_eq!(
            ids(&[b], "c0002\tm/ASR-212/y_renamed\n").len(),
            1,
            "renamed without the lock"
        );
    }

    #[test]
    fn prefixes_must_agree_with_expectations() {
        let good = [
            case(
                "x/y_ok",
                "c1",
                &["ASR-212"],
                true,
                &[("ASR-406", Severity::Notice)],
            ),
            case(
                "x/n_ok",
                "c2",
                &["ASR-212"],
                false,
                &[("ASR-212", Severity::Error)],
            ),
        ];
        assert!(prefixes(&good).is_empty(), "{:?}", prefixes(&good));
        let bad = [
            case(
                "x/y_bad",
                "c1",
                &["ASR-212"],
                true,
                &[("ASR-212", Severity::Warning)],
            ),
            case("x/n_empty", "c2", &["ASR-212"], true, &[]),
            case(
                "x/n_other_rule",
                "c3",
                &["ASR-212"],
                false,
                &[("ASR-212", Severity::Error), ("ASR-X-016", Severity::Error)],
            ),
            case(
                "x/i_no_branches",
                "c4",
                &["ASR-X-002"],
                false,
                &[("ASR-X-002", Severity::Error)],
            ),
            case("x/z_no_prefix", "c5", &["ASR-212"], true, &[]),
        ];
        assert_eq!(prefixes(&bad).len(), 5, "{:?}", prefixes(&bad));
    }

    #[test]
    fn unknown_rules_and_thin_coverage_are_found() {
        let catalog = Catalog::embedded();
        let cases = [case("x/y_a", "c1", &["ASR-223"], true, &[])];
        assert_eq!(
            rules_exist(&cases, catalog),
            ["x/y_a: ASR-223 is in no catalog"]
        );
        let one_each = [
            case("x/y_a", "c1", &["ASR-212"], true, &[]),
            case(
                "x/n_a",
                "c2",
                &["ASR-212"],
                false,
                &[("ASR-212", Severity::Error)],
            ),
        ];
        let problems = coverage(&one_each, catalog);
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("ASR-212: 1 positive and 1 negative")),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("ASR-402: 0 positive")),
            "{problems:?}"
        );
    }

    fn naming(mut case: Case, clauses: &[&str]) -> Case {
        case.sidecar.clauses = clauses.iter().map(|c| (*c).to_owned()).collect();
        case
    }

    #[test]
    fn a_clause_named_must_exist_and_belong_to_a_rule_named() {
        let catalog = Catalog::embedded();
        let bad = [
            naming(
                case("x/n_a", "c1", &["ASR-212"], false, &[]),
                &["ASR-212.b"],
            ),
            naming(
                case("x/n_b", "c2", &["ASR-212"], false, &[]),
                &["ASR-212.z"],
            ),
            naming(
                case("x/n_c", "c3", &["ASR-212"], false, &[]),
                &["ASR-231.b"],
            ),
            naming(
                case("x/n_d", "c4", &["ASR-201"], false, &[]),
                &["ASR-201.a"],
            ),
            naming(
                case("x/n_e", "c5", &["ASR-212", "ASR-231"], false, &[]),
                &["ASR-212.a", "ASR-231.b"],
            ),
        ];
        assert_eq!(
            clauses_exist(&bad, catalog),
            [
                "x/n_b: ASR-212.z is no clause of the catalog",
                "x/n_c: ASR-231.b is a clause of ASR-231, which the case does not name in its rules",
                "x/n_d: ASR-201.a is no clause of the catalog",
            ]
        );
    }

    #[test]
    fn the_corpus_names_only_clauses_of_its_cases_rules() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("cases");
        let cases = crate::case::load_corpus(&root).expect("the corpus loads");
        assert_eq!(
            clauses_exist(&cases, Catalog::embedded()),
            Vec::<String>::new()
        );
        assert!(
            cases.iter().any(|c| !c.sidecar.clauses.is_empty()),
            "no case names a clause"
        );
    }

    #[test]
    fn uncovered_clauses_are_those_no_negative_names() {
        let catalog = Catalog::embedded();
        let cases = [
            naming(
                case(
                    "x/n_a",
                    "c1",
                    &["ASR-212"],
                    false,
                    &[("ASR-212", Severity::Error)],
                ),
                &["ASR-212.b"],
            ),
            // A positive case naming a clause breaks nothing.
            naming(case("x/y_a", "c2", &["ASR-231"], true, &[]), &["ASR-231.a"]),
        ];
        let uncovered = uncovered_clauses(catalog, &cases);
        assert!(uncovered.contains(&"ASR-212.a".to_owned()), "{uncovered:?}");
        assert!(
            !uncovered.contains(&"ASR-212.b".to_owned()),
            "{uncovered:?}"
        );
        assert!(uncovered.contains(&"ASR-231.a".to_owned()), "{uncovered:?}");
        assert!(
            uncovered.iter().all(|c| catalog.clause(c).is_some()),
            "{uncovered:?}"
        );
        let all: usize = catalog.stream_rules().map(|r| r.clauses.len()).sum();
        assert_eq!(uncovered.len(), all - 1);

        let named = clause_negatives(&cases);
        assert_eq!(named.len(), 1);
        assert_eq!(named["ASR-212.b"][0].name, "x/n_a");
    }

    #[test]
    fn a_clause_only_a_mutator_breaks_is_reported() {
        let catalog = Catalog::embedded();
        let mutated = crate::fuzz::mutate::covered_clauses();
        assert!(mutated.contains("ASR-213.a"), "a mutator breaks ASR-213.a");
        let problems = clause_coverage(catalog, &[], &[]);
        assert!(
            problems.contains(&"ASR-213.a: no negative case names it".to_owned()),
            "{problems:?}"
        );
        let covered = [link_negative()];
        assert!(
            !clause_coverage(catalog, &covered, &[])
                .iter()
                .any(|p| p.starts_with("ASR-213.a:")),
        );
    }

    /// A negative case naming clause ASR-213.a.
    fn link_negative() -> Case {
        naming(
            case(
                "x/n_link",
                "c1",
                &["ASR-213"],
                false,
                &[("ASR-213", Severity::Error)],
            ),
            &["ASR-213.a"],
        )
    }

    #[test]
    fn an_exemption_goes_once_its_clause_has_a_case() {
        let catalog = Catalog::embedded();
        let exempt = [("ASR-213.a", "waiting"), ("ASR-201.a", "no such clause")];
        let problems = clause_coverage(catalog, &[], &exempt);
        assert!(
            !problems.iter().any(|p| p.starts_with("ASR-213.a")),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("ASR-201.a is exempted") && p.contains("no clause")),
            "{problems:?}"
        );
        let covered = [link_negative()];
        let problems = clause_coverage(catalog, &covered, &exempt);
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("ASR-213.a is exempted")
                    && p.contains("a negative case names it now")),
            "{problems:?}"
        );
        for (id, _) in CLAUSES_WITHOUT_A_NEGATIVE {
            assert!(catalog.clause(id).is_some(), "{id}");
        }
    }

    /// A case whose one stream, written under `dir`, holds `lines`.
    fn streamed(dir: &Path, name: &str, valid: bool, lines: &[Value]) -> Case {
        std::fs::create_dir_all(dir).expect("temp dir");
        let path = dir.join(format!("{}.jsonl", name.replace('/', "_")));
        let text: String = lines.iter().map(|line| line.to_string() + "\n").collect();
        std::fs::write(&path, text).expect("write");
        let findings: &[(&str, Severity)] = if valid {
            &[]
        } else {
            &[("ASR-201", Severity::Error)]
        };
        let mut streamed = case(name, "c1", &["ASR-201"], valid, findings);
        streamed.streams = vec![(String::new(), path)];
        streamed
    }

    /// A scratch directory of one test, removed when dropped, also when the test fails.
    fn temp_dir(test: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("asr-ctk-lint-{test}-"))
            .tempdir()
            .expect("temp dir")
    }

    #[test]
    fn an_open_value_set_without_an_unlisted_value_is_reported() {
        let catalog = Catalog::embedded();
        let scratch = temp_dir("sets");
        let dir = scratch.path().to_path_buf();
        let header = json!({"type": "session", "seq": 0, "id": "h"});
        let message = |role: &str, status: &str| {
            json!({"type": "message", "seq": 1, "id": "r1", "messageId": "m1", "role": role,
                "status": status, "content": []})
        };
        let cases = [
            streamed(
                &dir,
                "x/y_vendor_status",
                true,
                &[header.clone(), message("user", "cancelled")],
            ),
            // An unlisted value in a negative case shows nothing about accepting it.
            streamed(
                &dir,
                "x/n_vendor_role",
                false,
                &[header, message("ipython", "complete")],
            ),
        ];
        let problems = open_value_sets(catalog, &cases);
        assert!(
            problems.iter().any(|p| p.starts_with("message.role:")),
            "{problems:?}"
        );
        assert!(
            !problems.iter().any(|p| p.starts_with("message.status:")),
            "{problems:?}"
        );
        assert!(
            !problems.iter().any(|p| p.starts_with("message.audience:")),
            "a closed set needs no such case: {problems:?}"
        );
        let open = catalog.value_sets().iter().filter(|s| s.open).count();
        assert_eq!(problems.len(), open - 1, "{problems:?}");
    }

    fn optional(member: &str, when: &[&str], cases: &[&str]) -> OptionalMember {
        OptionalMember {
            member: member.into(),
            when: when.iter().map(|w| (*w).to_owned()).collect(),
            source: "Field table: optional.".into(),
            cases: cases.iter().map(|c| (*c).to_owned()).collect(),
        }
    }

    #[test]
    fn an_optional_member_whose_case_has_it_is_reported() {
        let scratch = temp_dir("optional");
        let dir = scratch.path().to_path_buf();
        let header = json!({"type": "session", "seq": 0, "id": "h"});
        let cases = [
            streamed(
                &dir,
                "x/y_author",
                true,
                &[
                    header.clone(),
                    json!({"type": "message", "seq": 1, "id": "r1", "messageId": "m1",
                        "role": "user", "author": "human", "content": [
                            {"type": "text", "text": "hi", "author": "human"}]}),
                ],
            ),
            streamed(
                &dir,
                "x/y_no_role",
                true,
                &[
                    header.clone(),
                    json!({"type": "message", "seq": 1, "id": "r1", "messageId": "m1",
                        "capture": {"role": {"state": "absent"}}, "content": [
                            {"type": "text", "text": "hi"}]}),
                ],
            ),
            streamed(
                &dir,
                "x/n_no_role",
                false,
                &[
                    header,
                    json!({"type": "message", "seq": 1, "id": "r1", "messageId": "m1",
                        "content": []}),
                ],
            ),
        ];
        let fine = [
            optional("message.author", &[], &["x/y_no_role"]),
            optional("part(text).author", &[], &["x/y_no_role"]),
            optional("message.role", &["capture.role"], &["x/y_no_role"]),
            optional(
                "message.role",
                &["capture.role.state=absent"],
                &["x/y_no_role"],
            ),
        ];
        assert_eq!(optional_members(&fine, &cases), Vec::<String>::new());
        let wrong = [
            optional("message.author", &[], &["x/y_author"]),
            optional("part(text).author", &[], &["x/y_author"]),
            optional("message.role", &["capture.content"], &["x/y_no_role"]),
            optional("message.role", &[], &["x/n_no_role", "x/y_gone"]),
            optional("message..role", &[], &["x/y_no_role"]),
            optional("message.phase", &[], &[]),
        ];
        let problems = optional_members(&wrong, &cases);
        assert_eq!(
            problems,
            [
                "message.author: no record of x/y_author lacks the member",
                "part(text).author: no record of x/y_author lacks the member",
                "message.role (when capture.content): no record of x/y_no_role lacks the member",
                "message.role: x/n_no_role is not a y_ case",
                "message.role: x/y_gone is no case of the corpus",
                "message..role: not a member path in the catalog's notation",
                "message.phase: no case is listed",
            ]
        );
        assert_eq!(
            optional_members(&[], &cases),
            ["the list of optional members is empty"]
        );
    }

    #[test]
    fn the_list_of_optional_members_parses() {
        let text = "[[optional]]\nmember = \"plan.entries\"\nwhen = [\"planType=document\"]\nsource = \"s\"\ncases = [\"a/y_b\"]\n";
        let listed = parse_optional_members(text).expect("parses");
        assert_eq!(
            listed,
            [OptionalMember {
                member: "plan.entries".into(),
                when: vec!["planType=document".into()],
                source: "s".into(),
                cases: vec!["a/y_b".into()],
            }]
        );
        assert!(parse_optional_members("[[optional]]\nmember = \"x.y\"\nextra = 1\n").is_err());
    }

    #[test]
    fn reader_rules_need_a_reading_case_or_a_reason() {
        let catalog = Catalog::embedded();
        let problems = reader_coverage(&[], catalog);
        assert!(
            problems.iter().any(|p| p.starts_with("ASR-237:")),
            "{problems:?}"
        );
        assert!(
            !problems.iter().any(|p| p.starts_with("ASR-418:")),
            "418 says why it is not tested"
        );
        let mut with_reading = case("x/y_r", "c1", &["ASR-237"], true, &[]);
        with_reading.sidecar.expect.reader = Some(crate::case::ReaderExpect {
            valid: true,
            reading: serde_json::json!({}),
            may_refuse: false,
        });
        assert!(
            !reader_coverage(&[with_reading], catalog)
                .iter()
                .any(|p| p.starts_with("ASR-237:"))
        );
    }

    #[test]
    fn a_reader_case_that_may_be_refused_names_its_decision() {
        let mut lets = case("x/i_blank", "c0001", &["ASR-X-003"], true, &[]);
        lets.sidecar.expect.reader = Some(crate::case::ReaderExpect {
            valid: true,
            reading: serde_json::json!({}),
            may_refuse: true,
        });
        let mut must_read = lets.clone();
        must_read.name = "x/y_read".into();
        if let Some(reader) = must_read.sidecar.expect.reader.as_mut() {
            reader.may_refuse = false;
        }
        assert_eq!(
            may_refuse_names_a_decision(&[lets.clone(), must_read]),
            [
                "x/i_blank: a reader case with mayRefuse names the decision that lets a reader refuse (\"decision\")"
            ]
        );
        lets.sidecar.decision = Some("empty-lines".into());
        assert!(may_refuse_names_a_decision(std::slice::from_ref(&lets)).is_empty());
        // The schema lets a reader refuse only a stream it is otherwise asked to read.
        let mut sidecar = serde_json::to_value(&lets.sidecar).expect("serializes");
        assert!(
            sidecar_schema("x/i_blank", &sidecar).is_empty(),
            "{:?}",
            sidecar_schema("x/i_blank", &sidecar)
        );
        sidecar["expect"]["reader"]["valid"] = json!(false);
        assert_eq!(sidecar_schema("x/i_blank", &sidecar).len(), 1);
    }

    #[test]
    fn sidecars_are_held_to_their_schema() {
        let good = serde_json::to_value(&case("x/y_a", "c0001", &["ASR-212"], true, &[]).sidecar)
            .expect("serializes");
        assert!(
            sidecar_schema("x/y_a", &good).is_empty(),
            "{:?}",
            sidecar_schema("x/y_a", &good)
        );
        let mut bad = good.clone();
        bad["id"] = json!("case-1");
        bad["rules"] = json!([]);
        assert_eq!(sidecar_schema("x/y_a", &bad).len(), 2);
        let named = naming(
            case("x/n_a", "c0002", &["ASR-212"], false, &[]),
            &["ASR-212.b"],
        );
        let mut named = serde_json::to_value(&named.sidecar).expect("serializes");
        assert!(sidecar_schema("x/n_a", &named).is_empty());
        named["clauses"] = json!(["ASR-212b"]);
        assert_eq!(sidecar_schema("x/n_a", &named).len(), 1);
        named["clauses"] = json!([]);
        assert_eq!(sidecar_schema("x/n_a", &named).len(), 1);
    }

    #[test]
    fn a_spec_example_without_its_case_is_found() {
        let scratch = temp_dir("examples");
        let dir = scratch.path().to_path_buf();
        let stream = dir.join("y_ex.jsonl");
        std::fs::write(
            &stream,
            "{\"type\":\"session\",\"seq\":0,\"id\":\"h\"}\n{\"type\":\"text\",\"text\":\"hi\"}\n",
        )
        .expect("write");
        let spec = "Heading\n\n{\"type\": \"text\", \"text\": \"hi\"}\n\nProse.\n\n{\"type\": \"text\", \"text\": \"other\"}\n";
        let mut covered = case("x/y_ex", "c1", &["ASR-210"], true, &[]);
        covered.streams = vec![(String::new(), stream)];
        covered.sidecar.provenance = Provenance::SpecExample {
            file: "s.txt".into(),
            line: 3,
            section: "Heading".into(),
            wrapped: None,
        };
        let problems = spec_examples(&[covered], &[("s.txt", spec)]);
        assert_eq!(
            problems,
            ["s.txt:7: the example has no case with a spec-example provenance naming it"]
        );
    }
}

#[cfg(test)]
mod shared_line_tests {
    use super::*;
    use crate::source::load_fixtures;
    use serde_json::json;
    use std::path::PathBuf;

    const DANGLING: &str = "claude-code-jsonl/dangling_parents_01";
    const HOOKS: &str = "claude-code-jsonl/subagent_hook_context_01";
    const PARENT: &str = "claude-code:4d5611e5-241a-462a-8d15-5122611a9569";

    fn corpus() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/sources")
    }

    #[test]
    fn the_corpus_fixtures_agree_on_the_lines_they_share() {
        let fixtures = load_fixtures(&corpus()).expect("the fixtures load");
        assert!(fixtures.len() >= 2);
        assert_eq!(shared_source_lines(&fixtures), Vec::<String>::new());
    }

    /// The two fixtures of the subagent file, copied into a corpus of their own under a
    /// temporary directory, removed when dropped.
    fn copied(test: &str) -> tempfile::TempDir {
        let scratch = tempfile::Builder::new()
            .prefix(&format!("asr-ctk-lint-shared-{test}-"))
            .tempdir()
            .expect("temp dir");
        let root = scratch.path();
        for name in [DANGLING, HOOKS] {
            let from = corpus().join(name);
            let to = root.join(name);
            for part in ["source", "expected"] {
                std::fs::create_dir_all(to.join(part)).expect("temp dir");
                for entry in std::fs::read_dir(from.join(part)).expect("a fixture part") {
                    let path = entry.expect("an entry").path();
                    let file = path.file_name().expect("a file name");
                    std::fs::copy(&path, to.join(part).join(file)).expect("copy");
                }
            }
            std::fs::copy(from.join("fixture.json"), to.join("fixture.json")).expect("copy");
        }
        scratch
    }

    fn edit_text(path: &Path, from: &str, to: &str) {
        let text = std::fs::read_to_string(path).expect("read");
        assert!(text.contains(from), "{} has no {from}", path.display());
        std::fs::write(path, text.replacen(from, to, 1)).expect("write");
    }

    #[test]
    fn the_lineage_contradiction_of_the_subagent_file_is_caught() {
        let scratch = copied("lineage");
        let root = scratch.path().to_path_buf();
        // The two fixtures as they were: one demanded relatedUnknown of the file, the other's
        // golden had no lineage.
        let sidecar = root.join(DANGLING).join("fixture.json");
        let mut value: Value =
            serde_json::from_str(&std::fs::read_to_string(&sidecar).expect("read")).expect("JSON");
        let assertions = value["expect"]["producer"]["assertions"]
            .as_array_mut()
            .expect("assertions");
        assertions.insert(
            0,
            json!({"rule": "ASR-405", "select": {"type": ["session"]},
                   "pointer": "/lineage/relatedUnknown/session", "check": {"equals": PARENT},
                   "note": "lines 1-3 each have a parentUuid that is no record of this file: the pointer is recorded as relatedUnknown"}),
        );
        std::fs::write(&sidecar, value.to_string()).expect("write");
        edit_text(
            &root.join(HOOKS).join("expected/stream.jsonl"),
            &format!(
                r#""lineage":{{"spawnedBy":{{"session":"{PARENT}","evidence":"native_field"}}}},"#
            ),
            "",
        );
        let fixtures = load_fixtures(&root).expect("the fixtures load");
        let problems = shared_source_lines(&fixtures);
        assert_eq!(problems.len(), 1, "{problems:#?}");
        let problem = &problems[0];
        for part in [
            format!("{DANGLING} and {HOOKS} share 3 source line(s)"),
            format!("assertion 1 of {DANGLING} (ASR-405: lines 1-3 each have a parentUuid"),
            format!("fails on the golden of {HOOKS}"),
            "the header of the session both sources put the shared lines in".to_owned(),
            format!("expected \"{PARENT}\", found nothing"),
        ] {
            assert!(problem.contains(&part), "{part:?} not in {problem}");
        }
    }

    #[test]
    fn a_record_named_by_its_native_id_in_the_shared_lines_is_compared() {
        let scratch = copied("ids");
        let root = scratch.path().to_path_buf();
        // The hook-context fixture says its first reminder is no person's words; the other
        // golden now says it is.
        edit_text(
            &root.join(DANGLING).join("expected/stream.jsonl"),
            r#""messageId":"88189592-a04a-49d4-ab3d-1917f06e983d","role":"user","author":"hook""#,
            r#""messageId":"88189592-a04a-49d4-ab3d-1917f06e983d","role":"user","author":"human""#,
        );
        let fixtures = load_fixtures(&root).expect("the fixtures load");
        let problems = shared_source_lines(&fixtures);
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert!(
            problems[0].contains(&format!("assertion 1 of {HOOKS} (ASR-203: isMeta:true"))
                && problems[0].contains(
                    "it selects /messageId = \"88189592-a04a-49d4-ab3d-1917f06e983d\", which the shared lines hold"
                )
                && problems[0].contains("must not be \"human\""),
            "{}",
            problems[0]
        );
    }

    #[test]
    fn only_id_members_and_long_lines_count() {
        assert!(is_id_member("/messageId"));
        assert!(is_id_member("/callId"));
        assert!(is_id_member("/payload/id"));
        assert!(!is_id_member("/content/0/text"));
        assert!(!is_id_member("/role"));
        let source = crate::fidelity::Source::from_files(vec![(
            "a.jsonl".into(),
            b"{}\r\n{\"sessionId\":\"s1\",\"text\":\"a line long enough to be shared\"}\r\n"
                .to_vec(),
        )]);
        let lines = long_lines(&source);
        assert_eq!(lines.len(), 1);
        assert_eq!(
            lines.values().next(),
            Some(&vec![("a.jsonl".to_owned(), 2)])
        );
        let facts = crate::facts::read("claude-code-jsonl", source.files());
        assert_eq!(
            session_of(&facts, &source, "a.jsonl", 2).as_deref(),
            Some("s1")
        );
        assert_eq!(session_of(&facts, &source, "a.jsonl", 1), None);
        let codex = crate::fidelity::Source::from_files(vec![(
            "rollout.jsonl".into(),
            b"{\"type\":\"session_meta\",\"payload\":{\"id\":\"t1\"}}\n{\"type\":\"event_msg\"}\n"
                .to_vec(),
        )]);
        let facts = crate::facts::read("codex-rollout", codex.files());
        assert_eq!(
            session_of(&facts, &codex, "rollout.jsonl", 2).as_deref(),
            Some("t1")
        );
    }
}
