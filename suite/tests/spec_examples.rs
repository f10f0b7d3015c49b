//! Every JSON example of the normative spec text, wrapped in a minimal valid stream where
//! it is a lone record or fragment, passes the checker with no error.

use asr_suite::check::{CheckOptions, check_bytes};
use asr_suite::diagnostic::Severity;
use asr_suite::spec::{Example, examples};
use serde_json::{Value, json};

const SPEC: &[(&str, &str)] = &[
    (
        "asr-messages.txt",
        include_str!("../../cases/spec/asr-messages.txt"),
    ),
    (
        "asr-lineage.txt",
        include_str!("../../cases/spec/asr-lineage.txt"),
    ),
];

const PART_TYPES: &[&str] = &[
    "text",
    "image",
    "audio",
    "resource_link",
    "resource",
    "reasoning",
    "refusal",
    "data",
    "opaque",
];

fn header() -> Value {
    json!({"type": "session", "seq": 0, "id": "h", "formatVersion": "0.1",
           "agent": {"name": "example-agent"}, "sessionId": "s1", "conversations": [{"id": "c1"}]})
}

fn message(content: &Value) -> Value {
    json!({"type": "message", "seq": 1, "id": "r1", "messageId": "m1", "role": "user", "content": content})
}

/// The stream an example stands for: itself when it is a header, else a header and one record.
fn wrap(example: &Example) -> (String, Vec<Value>) {
    let value = &example.value;
    let kind = value.get("type").and_then(Value::as_str);
    let (how, lines) = match (value, kind) {
        (Value::Object(_), Some("session")) => ("header", vec![value.clone()]),
        (Value::Object(o), Some(_)) if o.contains_key("seq") => {
            ("record", vec![header(), value.clone()])
        }
        (Value::Object(_), Some(k)) if PART_TYPES.contains(&k) => {
            ("part", vec![header(), message(&json!([value]))])
        }
        (Value::Array(_), _) => ("parts", vec![header(), message(value)]),
        (Value::Object(o), None) => {
            let mut record = message(&json!([{"type": "text", "text": "x"}]));
            for (k, v) in o {
                record[k] = v.clone();
            }
            ("fragment", vec![header(), record])
        }
        _ => panic!("example at line {} has no known shape", example.line),
    };
    (how.to_owned(), lines)
}

fn all_examples() -> Vec<(&'static str, Example)> {
    SPEC.iter()
        .flat_map(|(file, text)| examples(text).into_iter().map(move |e| (*file, e)))
        .collect()
}

#[test]
fn every_spec_example_passes_with_no_error() {
    let found = all_examples();
    // Every block that opens with { or [ at a line start: 21 in asr-messages.txt, 8 in asr-lineage.txt.
    assert_eq!(
        found.len(),
        29,
        "examples found: {:?}",
        found.iter().map(|(f, e)| (f, e.line)).collect::<Vec<_>>()
    );
    let mut failures = Vec::new();
    for (file, example) in &found {
        let (how, lines) = wrap(example);
        let mut stream = String::new();
        for line in &lines {
            stream.push_str(&serde_json::to_string(line).expect("serializes"));
            stream.push('\n');
        }
        let report = check_bytes(stream.as_bytes(), &CheckOptions::default());
        for d in report
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
        {
            failures.push(format!(
                "{file}:{} ({how}, {}): {d:?}",
                example.line, example.section
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} errors:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
