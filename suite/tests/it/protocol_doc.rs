//! The JSON examples of PROTOCOL.md are what the schemas say: every message shown is a valid
//! request or reply, and every fidelity assertion shown is a valid assertion, so that an
//! adapter author who copies an example copies something the kit accepts.

use serde_json::Value;

fn schema(name: &str) -> Value {
    serde_json::from_str(asr_suite::embedded::schema(name).expect("the schema")).expect("JSON")
}

/// Every JSON value in the ```json blocks of PROTOCOL.md (a block may hold several).
fn examples() -> Vec<Value> {
    let text =
        std::fs::read_to_string(crate::helpers::root().join("PROTOCOL.md")).expect("PROTOCOL.md");
    let mut values = Vec::new();
    for block in text.split("```json\n").skip(1) {
        let body = block.split("```").next().unwrap_or_default();
        for value in serde_json::Deserializer::from_str(body).into_iter::<Value>() {
            match value {
                Ok(value) => values.push(value),
                // A block that elides part of a message (`{ ... }`) is prose, not an example.
                Err(_) => break,
            }
        }
    }
    values
}

#[test]
fn every_example_message_and_assertion_fits_its_schema() {
    let request =
        jsonschema::validator_for(&schema("protocol/request.schema.json")).expect("compiles");
    let reply = jsonschema::validator_for(&schema("protocol/reply.schema.json")).expect("compiles");
    // The fidelity schema is of a list of assertions: each example is checked as a list of one.
    let assertion = jsonschema::validator_for(&schema("fidelity.schema.json")).expect("compiles");
    let (mut messages, mut assertions) = (0, 0);
    for value in examples() {
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let errors: Vec<String> = match kind {
            "start" | "case" | "stop" => {
                request.iter_errors(&value).map(|e| e.to_string()).collect()
            }
            "started" | "answered" | "skipped" | "error" | "stopped" => {
                reply.iter_errors(&value).map(|e| e.to_string()).collect()
            }
            _ if value.get("rule").is_some() && value.get("check").is_some() => {
                assertions += 1;
                let one = Value::Array(vec![value.clone()]);
                assertion.iter_errors(&one).map(|e| e.to_string()).collect()
            }
            _ => continue,
        };
        messages += usize::from(!kind.is_empty());
        assert!(errors.is_empty(), "{value}: {errors:?}");
    }
    assert!(messages >= 8, "{messages} messages");
    assert!(assertions >= 4, "{assertions} assertions");
}
