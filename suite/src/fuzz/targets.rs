//! The fuzz targets' properties, as plain functions of the fuzzer's bytes: the `fuzz/`
//! workspace calls each from a one-line `fuzz_target!`, and the tests below run each on
//! seeded bytes so that a stable `cargo test` exercises them too.
//!
//! Each entry point panics only when its property is broken; the property itself is a
//! `check_*` function returning what went wrong, so that it can be shown to fail.

pub use super::producer::producer_output;

use super::generator::{self, Config};
use super::mutate;
use crate::check::{self, CheckOptions, MAX_PER_LINE, MAX_PER_STREAM};
use crate::diagnostic::{Diagnostic, Severity};
use crate::json::{self, Failure, MAX_DEPTH};
use crate::reading;
use crate::refs::{own_session_ref, parse_session_ref};
use crate::rule;
use crate::rule::RuleId;
use arbitrary::{Arbitrary, Unstructured};
use serde_json::Value;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The envelope rules: a stream without an error under one of them is one the reader reads.
const ENVELOPE_RULES: &[RuleId] = &[
    rule::ASR_X_001,
    rule::ASR_X_002,
    rule::ASR_X_003,
    rule::ASR_X_004,
    rule::ASR_X_005,
    rule::ASR_X_006,
    rule::ASR_X_007,
];

fn hold(result: Result<(), String>) {
    if let Err(broken) = result {
        panic!("{broken}");
    }
}

/// Arbitrary bytes as a stream: the checker does not panic; every finding is on a line of
/// the stream and under a rule or check of the catalog; it gives the same diagnostics twice,
/// and from a reader on one thread or two.
pub fn check_bytes(data: &[u8]) {
    hold(check_check_bytes(data));
}

fn check_check_bytes(data: &[u8]) -> Result<(), String> {
    let options = CheckOptions::default();
    let first = check::check_bytes(data, &options).diagnostics;
    findings_in_place(data, &first)?;
    let again = check::check_bytes(data, &options).diagnostics;
    same_diagnostics("check_bytes twice", &first, &again)?;
    // A stream well inside one batch is checked on the calling thread whatever the threads
    // asked for: two threads are asked for only when they may be used.
    let thread_counts: &[usize] = if data.len() >= check::BATCH_BYTES / 2 {
        &[1, 2]
    } else {
        &[1]
    };
    for &threads in thread_counts {
        let options = CheckOptions {
            threads,
            ..CheckOptions::default()
        };
        let from_reader = check::check_reader(data, &options)
            .map_err(|e| format!("check_reader failed on bytes in memory: {e}"))?
            .diagnostics;
        same_diagnostics(
            &format!("check_reader with {threads} threads"),
            &first,
            &from_reader,
        )?;
    }
    Ok(())
}

/// Every finding is on a line of the stream and under a rule or check of the catalog.
fn findings_in_place(data: &[u8], diagnostics: &[Diagnostic]) -> Result<(), String> {
    let lines = memchr::memchr_iter(b'\n', data).count() + 1;
    if let Some(d) = diagnostics.iter().find(|d| d.line < 1 || d.line > lines) {
        return Err(format!(
            "a finding on line {} of a stream of {lines} lines: {d:?}",
            d.line
        ));
    }
    Ok(())
}

fn same_diagnostics(
    what: &str,
    expected: &[Diagnostic],
    found: &[Diagnostic],
) -> Result<(), String> {
    if expected == found {
        return Ok(());
    }
    let at = expected
        .iter()
        .zip(found)
        .position(|(a, b)| a != b)
        .unwrap_or(expected.len().min(found.len()));
    Err(format!(
        "{what} differs from check_bytes at diagnostic {at} ({} vs {}): {:?} vs {:?}",
        expected.len(),
        found.len(),
        expected.get(at),
        found.get(at)
    ))
}

/// One line of JSON: whatever serde_json reads as a value, the kit's parser reads as the
/// same value (short of the kit's documented limits); and a member name repeated in an
/// object built from the bytes is reported where it is.
pub fn json_line(data: &[u8]) {
    hold(check_json_line(data));
    hold(check_duplicate(data));
}

fn check_json_line(data: &[u8]) -> Result<(), String> {
    parsers_agree(
        serde_json::from_slice::<Value>(data).map_err(|e| e.to_string()),
        json::parse(data).map(|parsed| parsed.value),
    )
}

fn parsers_agree(plain: Result<Value, String>, kit: Result<Value, Failure>) -> Result<(), String> {
    match (plain, kit) {
        (Ok(plain), Ok(kit)) if plain == kit => Ok(()),
        (Ok(plain), Ok(kit)) => Err(format!("the kit read {kit:?}, serde_json {plain:?}")),
        (Ok(plain), Err(Failure::TooDeep { .. })) if depth(&plain) > MAX_DEPTH => Ok(()),
        (Ok(_), Err(Failure::NumberOutOfRange { .. })) => Ok(()),
        (Ok(plain), Err(failure)) => Err(format!(
            "the kit refused what serde_json read as {plain:?}: {failure}"
        )),
        (Err(e), Ok(kit)) if depth(&kit) < MAX_DEPTH => {
            Err(format!("the kit read {kit:?} where serde_json failed: {e}"))
        }
        // serde_json stops one level short of the kit's limit.
        (Err(_), _) => Ok(()),
    }
}

/// Nesting depth as the kit counts it: a scalar 0, a container one more than its deepest item.
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Where the repeated name sits: inside objects and arrays chosen by the bytes.
#[derive(Debug, Arbitrary)]
enum Step {
    Member(String),
    Item(u8),
}

/// An object text whose member `name` appears twice, at a path chosen by the bytes; the
/// second spelling of the name may use `\u` escapes.
#[derive(Debug, Arbitrary)]
struct Repeated {
    name: String,
    path: Vec<Step>,
    others: u8,
    escaped: bool,
}

impl Repeated {
    /// The line and the JSON Pointer of the repeated member.
    fn build(&self) -> (String, String) {
        let steps = &self.path[..self.path.len().min(MAX_DEPTH / 2)];
        let mut open = String::new();
        let mut close = String::new();
        let mut pointer = String::new();
        for step in steps {
            match step {
                Step::Member(key) => {
                    let _ = write!(open, "{{{}:", quoted(key));
                    close.insert(0, '}');
                    push_token(&mut pointer, key);
                }
                Step::Item(index) => {
                    let index = index % 4;
                    open.push('[');
                    for _ in 0..index {
                        open.push_str("null,");
                    }
                    close.insert(0, ']');
                    let _ = write!(pointer, "/{index}");
                }
            }
        }
        let mut object = format!("{{{}:1", quoted(&self.name));
        for n in 0..self.others % 4 {
            let other = format!("{}~{n}", self.name);
            let _ = write!(object, ",{}:{n}", quoted(&other));
        }
        let second = if self.escaped {
            escaped(&self.name)
        } else {
            quoted(&self.name)
        };
        let _ = write!(object, ",{second}:2}}");
        push_token(&mut pointer, &self.name);
        (format!("{open}{object}{close}"), pointer)
    }
}

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// A JSON string with every character written as `\u` escapes.
fn escaped(text: &str) -> String {
    let mut out = String::from("\"");
    for unit in text.encode_utf16() {
        let _ = write!(out, "\\u{unit:04x}");
    }
    out.push('"');
    out
}

fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    pointer.push_str(&token.replace('~', "~0").replace('/', "~1"));
}

fn check_duplicate(data: &[u8]) -> Result<(), String> {
    let Ok(repeated) = Repeated::arbitrary(&mut Unstructured::new(data)) else {
        return Ok(());
    };
    let (line, pointer) = repeated.build();
    duplicate_reported(&line, &pointer)
}

fn duplicate_reported(line: &str, pointer: &str) -> Result<(), String> {
    let parsed = json::parse(line.as_bytes()).map_err(|f| format!("{line} refused: {f}"))?;
    if parsed.duplicates != [pointer] {
        return Err(format!(
            "{line}: duplicates {:?}, expected [{pointer:?}]",
            parsed.duplicates
        ));
    }
    if parsed.value.pointer(pointer) != Some(&Value::from(2)) {
        return Err(format!("{line}: the last member does not win at {pointer}"));
    }
    Ok(())
}

/// A stream generated from the bytes, with a configuration from the bytes, is valid, and
/// the reader accepts it.
pub fn generate_valid(data: &[u8]) {
    hold(check_generate_valid(data));
}

fn check_generate_valid(data: &[u8]) -> Result<(), String> {
    let mut u = Unstructured::new(data);
    let Ok(config) = Config::arbitrary(&mut u) else {
        return Ok(());
    };
    let Ok(generated) = generator::stream(&mut u, &config) else {
        return Ok(());
    };
    valid_stream(&generated.to_bytes())
}

fn valid_stream(bytes: &[u8]) -> Result<(), String> {
    let report = check::check_bytes(bytes, &CheckOptions::default());
    let errors = errors(&report.diagnostics);
    if !errors.is_empty() {
        return Err(format!("a generated stream has errors: {errors:?}"));
    }
    if !reading::read_bytes(bytes).accepted {
        return Err("the reader refuses a generated stream".into());
    }
    Ok(())
}

fn errors(diagnostics: &[Diagnostic]) -> BTreeSet<(RuleId, usize)> {
    diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| (d.rule, d.line))
        .collect()
}

/// A generated stream with one clause broken: the reference reports the mutation's rule at
/// error level on the mutation's line, and no other rule at error level.
pub fn mutate_clause(data: &[u8]) {
    hold(check_mutate_clause(data));
}

fn check_mutate_clause(data: &[u8]) -> Result<(), String> {
    let mut u = Unstructured::new(data);
    let Ok(config) = Config::arbitrary(&mut u) else {
        return Ok(());
    };
    let Ok(generated) = generator::stream(&mut u, &config) else {
        return Ok(());
    };
    let Ok(mutation) = mutate::mutate(&generated, &mut u) else {
        return Ok(());
    };
    broken_as_said(&mutation.stream.to_bytes(), mutation.rule, mutation.line)
        .map_err(|e| format!("{}: {e}", mutation.clause))
}

fn broken_as_said(bytes: &[u8], rule: RuleId, line: usize) -> Result<(), String> {
    let report = check::check_bytes(bytes, &CheckOptions::default());
    let errors = errors(&report.diagnostics);
    let rules: BTreeSet<RuleId> = errors.iter().map(|(r, _)| *r).collect();
    if rules != BTreeSet::from([rule]) || !errors.contains(&(rule, line)) {
        return Err(format!("expected {rule} at line {line}, found {errors:?}"));
    }
    Ok(())
}

/// Arbitrary bytes: the reader does not panic, and reads every stream in which the checker
/// finds no envelope error.
pub fn read_vs_check(data: &[u8]) {
    hold(check_read_vs_check(data));
}

fn check_read_vs_check(data: &[u8]) -> Result<(), String> {
    let outcome = reading::read_bytes(data);
    let report = check::check_bytes(data, &CheckOptions::default());
    reader_agrees(outcome.accepted, &report.diagnostics)
}

fn reader_agrees(accepted: bool, diagnostics: &[Diagnostic]) -> Result<(), String> {
    // Past the caps, findings are summed up under the worst one, which may hide an
    // envelope error behind another rule's: nothing can be concluded then.
    if diagnostics.len() >= MAX_PER_STREAM
        || diagnostics
            .iter()
            .any(|d| d.message.contains("more findings") && d.message.contains("are not listed"))
    {
        return Ok(());
    }
    let envelope = diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error && ENVELOPE_RULES.contains(&d.rule));
    if !envelope && !accepted {
        return Err(format!(
            "the reader refuses a stream with no envelope error (at most {MAX_PER_LINE} findings a line listed): {:?}",
            errors(diagnostics)
        ));
    }
    Ok(())
}

/// Any text as a session reference: parsing does not panic, and the canonical form of an
/// accepted one parses to itself; a stream's own reference, built from a header's agent
/// name, namespace and session id, parses and is already canonical.
pub fn session_ref(data: &[u8]) {
    hold(check_session_ref(data));
    hold(check_own_session_ref(data));
}

fn check_session_ref(data: &[u8]) -> Result<(), String> {
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(());
    };
    let Ok(parsed) = parse_session_ref(text) else {
        return Ok(());
    };
    canonical_is_stable(&parsed.canonical())
}

fn canonical_is_stable(canonical: &str) -> Result<(), String> {
    let again = parse_session_ref(canonical).map_err(|e| {
        format!(
            "canonical form {canonical:?} does not parse: {}",
            e.describe()
        )
    })?;
    if again.fragment.is_some() {
        return Err(format!("canonical form {canonical:?} has a fragment"));
    }
    if again.canonical() != canonical {
        return Err(format!(
            "canonical form {canonical:?} becomes {:?}",
            again.canonical()
        ));
    }
    Ok(())
}

/// A header's parts, as the bytes give them.
#[derive(Debug, Arbitrary)]
struct Header {
    agent: String,
    namespace: Option<String>,
    session_id: String,
}

/// An agent name a header may give: the session reference grammar reserves these.
fn plain_agent(agent: &str) -> bool {
    !agent.is_empty()
        && !agent
            .chars()
            .any(|c| matches!(c, ':' | '%' | '#') || c.is_whitespace() || c.is_control())
}

fn check_own_session_ref(data: &[u8]) -> Result<(), String> {
    let Ok(header) = Header::arbitrary(&mut Unstructured::new(data)) else {
        return Ok(());
    };
    if !plain_agent(&header.agent) || header.session_id.is_empty() {
        return Ok(());
    }
    own_ref_is_canonical(&header)
}

fn own_ref_is_canonical(header: &Header) -> Result<(), String> {
    let written = own_session_ref(
        &header.agent,
        header.namespace.as_deref(),
        &header.session_id,
    );
    let parsed = parse_session_ref(&written).map_err(|e| {
        format!(
            "{header:?} gives {written:?}, which does not parse: {}",
            e.describe()
        )
    })?;
    if parsed.agent != header.agent || parsed.fragment.is_some() {
        return Err(format!("{header:?} gives {written:?}, read as {parsed:?}"));
    }
    if parsed.canonical() != written {
        return Err(format!(
            "{header:?} gives {written:?}, whose canonical form is {:?}",
            parsed.canonical()
        ));
    }
    canonical_is_stable(&written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::seeded_bytes;

    /// Runs a target on `iterations` seeded inputs of growing length, up to `max_len` bytes.
    fn smoke(target: fn(&[u8]), iterations: u64, max_len: usize) {
        for seed in 0..iterations {
            let len = usize::try_from(seed).unwrap_or(0) * 37 % max_len;
            target(&seeded_bytes(seed, len));
        }
    }

    /// Seeded bytes shaped a little like the input each target sees.
    fn lines_of(seed: u64) -> Vec<u8> {
        let mut out = br#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"x"},"sessionId":"s"}"#.to_vec();
        for (n, byte) in seeded_bytes(seed, 64).into_iter().enumerate() {
            match byte % 8 {
                0 => out.push(b'\n'),
                1 => out.extend_from_slice(b"{}"),
                2 => out.extend_from_slice(b"\xEF\xBB\xBF"),
                3 => out.extend_from_slice(b"\r\n"),
                4 => out.extend_from_slice(br#"{"a":1,"a":2}"#),
                5 => out.extend_from_slice(br#"{"type":"session"}"#),
                6 => out.push(byte),
                _ => out.extend_from_slice(n.to_string().as_bytes()),
            }
        }
        out
    }

    #[test]
    fn check_bytes_holds_on_seeded_bytes() {
        smoke(check_bytes, 200, 2000);
        for seed in 0..100 {
            check_bytes(&lines_of(seed));
        }
    }

    #[test]
    fn check_bytes_fails_on_a_finding_off_the_stream() {
        let data = b"{}\n{}\n";
        let report = check::check_bytes(data, &CheckOptions::default());
        assert!(findings_in_place(data, &report.diagnostics).is_ok());
        let mut off = report.diagnostics.clone();
        off[0].line = 4;
        assert!(findings_in_place(data, &off).is_err());
        off[0].line = 0;
        assert!(findings_in_place(data, &off).is_err());
    }

    #[test]
    fn check_bytes_fails_on_different_diagnostics() {
        let report = check::check_bytes(b"{}\n", &CheckOptions::default());
        assert!(!report.diagnostics.is_empty());
        assert!(same_diagnostics("x", &report.diagnostics, &report.diagnostics).is_ok());
        assert!(same_diagnostics("x", &report.diagnostics, &report.diagnostics[1..]).is_err());
    }

    #[test]
    fn json_line_holds_on_seeded_bytes() {
        smoke(json_line, 300, 600);
        for text in [
            &br#"{"a":[1,-2.5e3,"\u00e9",null,true,{}]}"#[..],
            b"123456789012345678901234567890",
            br#"{"a":1,"a":2}"#,
            b"1e400",
            b"[1] x",
        ] {
            json_line(text);
        }
        let at_limit = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        json_line(at_limit.as_bytes());
    }

    #[test]
    fn json_line_fails_when_a_duplicate_goes_unreported() {
        let repeated = Repeated {
            name: "a/~é".into(),
            path: vec![Step::Member("x".into()), Step::Item(2)],
            others: 3,
            escaped: true,
        };
        let (line, pointer) = repeated.build();
        assert_eq!(pointer, "/x/2/a~1~0é");
        assert!(duplicate_reported(&line, &pointer).is_ok());
        let once = line.replacen(r#""a/~é":1,"#, "", 1);
        assert!(duplicate_reported(&once, &pointer).is_err());
        assert!(duplicate_reported(&line, "/x/1/a~1~0é").is_err());
    }

    #[test]
    fn json_line_fails_when_the_parsers_disagree() {
        assert!(parsers_agree(Ok(Value::from(1)), Ok(Value::from(1))).is_ok());
        assert!(parsers_agree(Ok(Value::from(1)), Ok(Value::from(2))).is_err());
        let syntax = Failure::Syntax {
            message: "x".into(),
            column: 1,
            eof: false,
        };
        assert!(parsers_agree(Ok(Value::from(1)), Err(syntax)).is_err());
        assert!(parsers_agree(Err("x".into()), Ok(Value::Null)).is_err());
        assert!(parsers_agree(Ok(Value::Null), Err(Failure::TooDeep { column: 1 })).is_err());
    }

    #[test]
    fn generate_valid_holds_on_seeded_bytes() {
        smoke(generate_valid, 60, 3000);
    }

    #[test]
    fn generate_valid_fails_on_an_invalid_stream() {
        assert!(valid_stream(b"{}\n").is_err());
        assert!(valid_stream(b"").is_err());
    }

    #[test]
    fn mutate_clause_holds_on_seeded_bytes() {
        smoke(mutate_clause, 60, 3000);
    }

    #[test]
    fn mutate_clause_fails_on_the_wrong_rule_or_line() {
        let data = seeded_bytes(7, 3000);
        let mut u = Unstructured::new(&data);
        let generated = generator::stream(&mut u, &Config::default()).expect("a stream");
        let mutation = mutate::mutate(&generated, &mut u).expect("a mutation");
        let bytes = mutation.stream.to_bytes();
        assert!(broken_as_said(&bytes, mutation.rule, mutation.line).is_ok());
        assert!(broken_as_said(&bytes, mutation.rule, mutation.line + 1).is_err());
        assert!(broken_as_said(&bytes, rule::ASR_X_003, mutation.line).is_err());
        assert!(broken_as_said(&generated.to_bytes(), mutation.rule, mutation.line).is_err());
    }

    #[test]
    fn read_vs_check_holds_on_seeded_bytes() {
        smoke(read_vs_check, 200, 2000);
        for seed in 0..100 {
            read_vs_check(&lines_of(seed));
        }
    }

    #[test]
    fn read_vs_check_fails_when_the_reader_refuses_a_clean_stream() {
        assert!(reader_agrees(false, &[]).is_err());
        assert!(reader_agrees(true, &[]).is_ok());
        let report = check::check_bytes(b"[]\n", &CheckOptions::default());
        assert!(reader_agrees(false, &report.diagnostics).is_ok());
    }

    #[test]
    fn session_ref_holds_on_seeded_bytes() {
        smoke(session_ref, 300, 200);
        for text in [
            "t3-code:6f1d:thread%3adelegated#callId=c1",
            "codex:a%2",
            "x:%41%zz",
            "a:b:c#",
        ] {
            session_ref(text.as_bytes());
        }
    }

    #[test]
    fn session_ref_fails_on_an_unstable_canonical_form() {
        assert!(canonical_is_stable("codex:a%3Ab").is_ok());
        assert!(canonical_is_stable("codex:a%3ab").is_err());
        assert!(canonical_is_stable("codex:a#r1").is_err());
        assert!(canonical_is_stable("codex").is_err());
        // An agent name with a `:` reads as another agent: the property says so.
        let colon_in_agent = Header {
            agent: "co:dex".into(),
            namespace: None,
            session_id: "id".into(),
        };
        assert!(own_ref_is_canonical(&colon_in_agent).is_err());
        let hash_in_namespace = Header {
            agent: "codex".into(),
            namespace: Some("n#s".into()),
            session_id: "i\u{1}d".into(),
        };
        assert!(own_ref_is_canonical(&hash_in_namespace).is_ok());
    }
}
