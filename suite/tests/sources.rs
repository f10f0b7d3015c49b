//! The source fixtures (`cases/sources/`): one test per fixture that its golden output meets
//! it, its sidecar fits its schema and names exactly the rules its assertions test; the lint
//! that every rule binding producers to the source has a fixture assertion (but those still
//! listed as waiting); and tests showing a wrong output failed under the rule it breaks.

use asr_suite::catalog::{Catalog, CheckKind};
use asr_suite::source::{SourceFixture, load_fixtures};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The rules that bind producers to the source and have no fixture assertion yet. The lint
/// fails when one of them gets one, so the list only shrinks.
const SOURCE_RULES_WAITING: &[&str] = &[
    "ASR-204", "ASR-207", "ASR-208", "ASR-209", "ASR-219", "ASR-222", "ASR-225", "ASR-226",
    "ASR-229", "ASR-233", "ASR-237", "ASR-238", "ASR-402", "ASR-404", "ASR-405", "ASR-414",
    "ASR-421", "ASR-422", "ASR-424", "ASR-427",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/sources")
}

fn main() {
    let args = Arguments::from_args();
    let fixtures = load_fixtures(&root()).expect("the fixtures load");
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
        "wrong_outputs_fail_under_the_rule_they_break",
        wrong_outputs,
    ));
    trials.push(Trial::test(
        "codex_and_pi_wrong_outputs_fail_under_the_rule_they_break",
        codex_and_pi_wrong_outputs,
    ));
    libtest_mimic::run(&args, trials).exit();
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
        fixture
            .judge(&source, &output)
            .into_iter()
            .map(|f| format!("the golden fails: {}: {}", f.rule, f.message)),
    );
    let named: Vec<String> = found
        .into_iter()
        .map(|p| format!("{}: {p}", fixture.name))
        .collect();
    problems(&named)
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

/// Realistic mistakes on the goldens, each failed under its rule alone: the fixture, the
/// text replaced (its first occurrence), the replacement, the rule and what the mistake is.
const MISTAKES: &[(&str, &str, &str, &str, &str)] = &[
    (
        "gemini-cli-json/real_session_01",
        "[REDACTED_PROMPT]",
        "[REDACTED_PROMPT] ",
        "ASR-211",
        "a trailing space added",
    ),
    (
        "gemini-cli-json/real_session_01",
        "\"visibility\":\"summary\",\"summary\":",
        "\"visibility\":\"full\",\"summary\":",
        "ASR-214",
        "a thought's summary called full reasoning",
    ),
    (
        "gemini-cli-json/real_session_01",
        "{\"type\":\"reasoning\",\"visibility\":\"summary\",\"summary\":[\"Generating Specific Response: [REDACTED_THOUGHT]\"]}",
        "{\"type\":\"reasoning\",\"visibility\":\"summary\",\"text\":\"Generating Specific Response: [REDACTED_THOUGHT]\",\"summary\":[]}",
        "ASR-214",
        "the summary put in reasoning text",
    ),
    (
        "gemini-cli-json/real_session_01",
        "\"role\":\"user\",",
        "\"role\":\"user\",\"conversation\":\"c9\",",
        "ASR-227",
        "an invalid output",
    ),
    (
        "claude-code-jsonl/local_command_01",
        "<local-command-stdout>\\u001b[2mCompacted",
        "<local-command-stdout>Compacted",
        "ASR-211",
        "an ANSI escape stripped from command output",
    ),
    (
        "claude-code-jsonl/local_command_01",
        "\\n            <command-message>compact",
        "\\n<command-message>compact",
        "ASR-211",
        "the indentation of a command line collapsed",
    ),
    (
        "claude-code-jsonl/local_command_01",
        "\"author\":\"harness\",\"origin\":\"injected\",\"content\":[{\"type\":\"text\",\"text\":\"Caveat:",
        "\"author\":\"human\",\"origin\":\"injected\",\"content\":[{\"type\":\"text\",\"text\":\"Caveat:",
        "ASR-202",
        "an isMeta caveat called a person's words",
    ),
    (
        "claude-code-jsonl/local_command_01",
        "\"author\":\"harness\",\"origin\":\"injected\",\"content\":[{\"type\":\"text\",\"text\":\"<local-command-stdout>",
        "\"origin\":\"injected\",\"content\":[{\"type\":\"text\",\"author\":\"human\",\"text\":\"<local-command-stdout>",
        "ASR-202",
        "command output called a person's words on its part",
    ),
    (
        "claude-code-jsonl/compact_summary_01",
        "\"author\":\"harness\"",
        "\"author\":\"human\"",
        "ASR-202",
        "a compaction summary under role user called a person's words",
    ),
    (
        "claude-code-jsonl/split_assistant_01",
        "What would you like to work on today?\"",
        "What would you like to work on today?\\n\"",
        "ASR-211",
        "a newline added when joining the lines of one response",
    ),
    (
        "claude-code-jsonl/subagent_hook_context_01",
        "\"author\":\"hook\"",
        "\"author\":\"human\"",
        "ASR-203",
        "hook context under role user called a person's words",
    ),
    (
        "claude-code-jsonl/subagent_hook_context_01",
        "\u{2192}",
        "->",
        "ASR-211",
        "an arrow in linter output replaced by ASCII",
    ),
    (
        "claude-code-jsonl/subagent_hook_context_01",
        "\"scope\":\"subagent\"",
        "\"scope\":\"primary\"",
        "ASR-410",
        "a sidechain's stream called a top-level session",
    ),
];

fn wrong_outputs() -> Result<(), Failed> {
    problems(&misjudged(MISTAKES)?)
}

/// Each mistake (fixture, text of its golden, the replacement, rule, what) made on the
/// golden, that is not failed under its rule alone, in words.
fn misjudged(mistakes: &[(&str, &str, &str, &str, &str)]) -> Result<Vec<String>, Failed> {
    let fixtures = load_fixtures(&root())?;
    let mut found = Vec::new();
    for &(name, from, to, rule, what) in mistakes {
        let fixture = fixtures
            .iter()
            .find(|f| f.name == name)
            .ok_or(format!("no fixture {name}"))?;
        let source = fixture.source()?;
        let golden = String::from_utf8(fixture.expected()?.remove(0).1)?;
        if !golden.contains(from) {
            found.push(format!("{name}: {what}: the golden has no {from:?}"));
            continue;
        }
        let wrong = golden.replacen(from, to, 1);
        let failures = fixture.judge(&source, &[("", wrong.as_bytes())]);
        let rules: BTreeSet<&str> = failures.iter().map(|f| f.rule.as_str()).collect();
        if rules != BTreeSet::from([rule]) {
            let messages: Vec<&str> = failures.iter().map(|f| f.message.as_str()).collect();
            found.push(format!(
                "{name}: {what}: failed under {rules:?}, not {rule} alone: {messages:?}"
            ));
        }
    }
    Ok(found)
}

/// Realistic mistakes on the goldens of the Codex and pi fixtures, each failed under its rule
/// alone: (fixture, text of the golden, its replacement, rule, what).
fn codex_and_pi_wrong_outputs() -> Result<(), Failed> {
    let second_child = r#"{"type":"message","seq":7,"id":"r7","ts":"2026-02-03T22:04:15.509Z","messageId":"b90647f9","role":"user","content":[{"type":"text","text":"instead write a limerick to limerick.txt"}]}
"#;
    let mistakes = [
        (
            "codex-rollout/crud_instructions_01",
            r#""role":"developer","author":"harness""#,
            r#""role":"user","author":"harness""#,
            "ASR-201",
            "the developer instructions put on the user channel",
        ),
        (
            "codex-rollout/crud_instructions_01",
            r#""author":"harness","origin":"injected","content":[{"type":"text","text":"<environment_context>"#,
            r#""author":"human","origin":"prompt","content":[{"type":"text","text":"<environment_context>"#,
            "ASR-202",
            "the environment snapshot under role user taken for a person's words",
        ),
        (
            "codex-rollout/crud_instructions_01",
            r"<environment_context>\n  <cwd>",
            r"<environment_context>\r\n  <cwd>",
            "ASR-211",
            "a line ending converted",
        ),
        (
            "codex-rollout/crud_reasoning_01",
            r#""visibility":"summary","summary":["**Planning file operations and command sequence**"]"#,
            r#""visibility":"full","text":"**Planning file operations and command sequence**","summary":[]"#,
            "ASR-214",
            "a summary segment made full reasoning text",
        ),
        (
            "codex-rollout/crud_reasoning_01",
            r#""visibility":"encrypted","summary":[]"#,
            r#""visibility":"full","summary":[]"#,
            "ASR-214",
            "an encrypted item with an empty summary called full reasoning",
        ),
        (
            "codex-rollout/crud_reasoning_01",
            r#""text":"Created `JOKE.md`"#,
            r#""text":"Created JOKE.md"#,
            "ASR-211",
            "Markdown stripped from the answer",
        ),
        (
            "pi-session-jsonl/branched_01",
            r#""startedAt":"2026-02-03T22:03:00.318Z""#,
            r#""startedAt":"2026-02-03T22:03:00.318Z","lineage":{"forkedFrom":{"session":"pi:a9642bdf-2c10-4503-abb2-081990e56318","record":"messageId=5b978642","evidence":"native_structure"}}"#,
            "ASR-403",
            "the in-file branch made a fork of another session",
        ),
        (
            "pi-session-jsonl/branched_01",
            r#""startedAt":"2026-02-03T22:03:00.318Z""#,
            r#""startedAt":"2026-02-03T22:03:00.318Z","scope":"subagent""#,
            "ASR-410",
            "scope subagent inferred from the entries' parent pointers",
        ),
        (
            "pi-session-jsonl/branched_01",
            second_child,
            "",
            "ASR-211",
            "only the first path of the branch kept",
        ),
        (
            "pi-session-jsonl/first_turn_01",
            r#""messageId":"a768ec1f","role":"user","#,
            r#""messageId":"a768ec1f","role":"user","author":"human","#,
            "ASR-202",
            "role user taken for a person's words",
        ),
        (
            "pi-session-jsonl/first_turn_01",
            r#"light\n```""#,
            r#"light\n```\n""#,
            "ASR-211",
            "a final newline added to the answer",
        ),
    ];
    problems(&misjudged(&mistakes)?)
}
