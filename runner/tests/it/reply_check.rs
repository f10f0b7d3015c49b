//! One check of a reply for every command that talks to adapters: `run`, `diff` and `fuzz`
//! call an answer to no request the kit sent (a wrong seq, on an `error` reply too), an
//! answer with the wrong number of streams, and, without `--validate-protocol`, a reply
//! the reply schema refuses, protocol errors alike.

use crate::helpers::{adapters, asr_ctk, root, scratch};
use asr_suite::conformance::{Outcome, RunReport};

fn adapter(name: &str) -> String {
    format!(
        "python3 {}",
        adapters().join(format!("{name}.py")).display()
    )
}

const CASE: &str = "messages/ASR-212/n_image_data_and_blob";

/// What `run` says of the one case answered by the fault adapter `name`: it must be a
/// protocol error, and the run must fail.
fn protocol_error_of_run(name: &str) -> String {
    let out = scratch(&format!("reply-run-{name}"));
    let output = asr_ctk(&[
        "run",
        "--quiet",
        "--case",
        CASE,
        "--max-restarts",
        "0",
        "--out",
        &out.to_string_lossy(),
        "--adapter",
        &adapter(name),
    ]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report: RunReport = crate::helpers::report_in(&out);
    let case = &report.cases[0];
    assert_eq!(case.outcome, Outcome::ProtocolError, "{case:?}");
    case.detail.clone().unwrap_or_default()
}

#[test]
fn run_calls_an_error_echoing_another_seq_a_protocol_error() {
    let detail = protocol_error_of_run("errs_with_wrong_seq");
    assert!(detail.contains("echoes seq 1001"), "{detail}");
}

/// `diff`'s words for the second implementation's answer to the one case.
fn diffed(name: &str) -> String {
    let out = scratch(&format!("reply-diff-{name}"));
    let output = asr_ctk(&[
        "diff",
        "--role",
        "validator",
        "--case",
        CASE,
        "--adapter",
        "reference",
        "--adapter",
        &adapter(name),
        "--out",
        &out.to_string_lossy(),
    ]);
    // An implementation that failed to answer fails the comparison.
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn diff_calls_an_error_echoing_another_seq_a_protocol_error() {
    let text = diffed("errs_with_wrong_seq");
    assert!(
        text.contains("protocol error: the answer echoes seq 1001; the request's seq was 1"),
        "{text}"
    );
}

#[test]
fn diff_refuses_an_answer_with_the_wrong_number_of_streams() {
    let text = diffed("wrong_stream_count");
    assert!(
        text.contains("protocol error: the answer has 0 stream entries; the case has 1 streams"),
        "{text}"
    );
}

/// What `fuzz` prints of two iterations against the fault adapter `name`: the run must fail
/// on a fault.
fn fuzzed(name: &str) -> String {
    let out = scratch(&format!("reply-fuzz-{name}"));
    let output = asr_ctk(&[
        "fuzz",
        "--role",
        "validator",
        "--iterations",
        "2",
        "--out",
        &out.to_string_lossy(),
        "--adapter",
        &adapter(name),
    ]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(text.contains("fault"), "{text}");
    text
}

#[test]
fn fuzz_calls_an_error_echoing_another_seq_a_protocol_error() {
    let text = fuzzed("errs_with_wrong_seq");
    assert!(
        text.contains("protocol error: the answer echoes seq"),
        "{text}"
    );
    assert!(!text.contains("error: an error of no case asked"), "{text}");
}

/// What the kit says of the fault adapter's replies, whose `reading` is a string: the
/// reply types read it, the reply schema does not.
const NOT_AN_OBJECT: &str = "protocol error: the answer breaks the reply schema: \"accepted\" is not of type \"object\" at /streams/0/reading";

#[test]
fn run_without_validate_protocol_refuses_a_reply_the_reply_schema_refuses() {
    let detail = protocol_error_of_run("reading_not_an_object");
    assert_eq!(format!("protocol error: {detail}"), NOT_AN_OBJECT);
}

#[test]
fn diff_refuses_a_reply_the_reply_schema_refuses() {
    let text = diffed("reading_not_an_object");
    assert!(text.contains(NOT_AN_OBJECT), "{text}");
}

#[test]
fn fuzz_refuses_a_reply_the_reply_schema_refuses() {
    let text = fuzzed("reading_not_an_object");
    assert!(text.contains(NOT_AN_OBJECT), "{text}");
}

#[test]
fn the_producer_fuzzer_refuses_an_output_with_a_member_the_schema_does_not_define() {
    let out = scratch("reply-pfuzz-schema");
    let producer = format!(
        "python3 {} member",
        root().join("runner/tests/producers/faulty.py").display()
    );
    let output = asr_ctk(&[
        "fuzz",
        "--role",
        "producer",
        "--format",
        "gemini-cli-json",
        "--iterations",
        "1",
        "--out",
        &out.to_string_lossy(),
        "--adapter",
        &producer,
    ]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(
            "protocol error: the answer breaks the reply schema: Additional properties are not allowed ('encoding' was unexpected) at /outputs/0"
        ),
        "{text}"
    );
}
