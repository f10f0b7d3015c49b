//! The reader written in JavaScript from PROTOCOL.md alone (`examples/node-adapter/`): it
//! passes every reader case, and `asr-ctk diff` finds no disagreement between it and the
//! reference on any stream of the corpus. A disagreement here is a missing case (both pass
//! every case yet read a stream differently), or a bug of one side: add the case.

use crate::helpers::{Kit, asr_ctk, corpus, node_major, root, scratch};
use asr_suite::conformance::{Outcome, RunReport};
use std::path::PathBuf;

/// The adapter command, after checking that Node.js 20 or later is here: `.ci/run` installs
/// it, and without it this test fails rather than pass by running nothing.
fn node_reader() -> String {
    let major = node_major();
    assert!(
        major >= 20,
        "Node.js 20 or later is needed for examples/node-adapter (found {major}): `apt-get install nodejs`, as .ci/run does"
    );
    format!(
        "node {}",
        root().join("examples/node-adapter/reader.js").display()
    )
}

/// Every stream of the corpus but the source fixtures' (which are native files, no ASR).
fn corpus_streams() -> Vec<PathBuf> {
    fn under(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("a corpus directory")
            .map(|e| e.expect("an entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                under(&path, out);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                out.push(path);
            }
        }
    }
    let mut streams = Vec::new();
    for dir in ["inferred", "lineage", "messages"] {
        under(&corpus().join(dir), &mut streams);
    }
    streams
}

#[test]
fn the_node_reader_passes_every_reader_case() {
    let adapter = node_reader();
    let out = scratch("node-reader-run");
    let out_text = out.to_string_lossy().into_owned();
    let output = asr_ctk(&[
        "run",
        "--role",
        "reader",
        "--quiet",
        "--validate-protocol",
        "--out",
        &out_text,
        "--adapter",
        &adapter,
    ]);
    let report: RunReport =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).expect("a report"))
            .expect("report.json");
    let failed: Vec<String> = report
        .cases
        .iter()
        .filter(|c| c.outcome != Outcome::Pass)
        .map(|c| {
            format!(
                "{} {:?}: {}",
                c.name,
                c.outcome,
                c.detail.as_deref().unwrap_or("")
            )
        })
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(
        report.cases.len() >= 78,
        "{} reader cases",
        report.cases.len()
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
}

#[test]
fn the_node_reader_and_the_reference_read_every_stream_of_the_corpus_alike() {
    let adapter = node_reader();
    let out = scratch("node-reader-diff");
    let out_text = out.to_string_lossy().into_owned();
    let streams = corpus_streams();
    assert!(streams.len() > 400, "{} streams", streams.len());
    let mut args: Vec<String> = [
        "diff",
        "--adapter",
        "reference",
        "--adapter",
        adapter.as_str(),
        "--out",
        out_text.as_str(),
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    args.extend(streams.iter().map(|p| p.to_string_lossy().into_owned()));
    let output = Kit::new(&args)
        .limit(std::time::Duration::from_secs(600))
        .output();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let summary = format!("0 disagreement(s) on {} stream(s) compared", streams.len());
    assert!(stdout.contains(&summary), "{stdout}");
    // The corpus's reader cases too, as cases: a case of several streams read as one set.
    let cases_out = scratch("node-reader-diff-cases");
    let output = asr_ctk(&[
        "diff",
        "--adapter",
        "reference",
        "--adapter",
        &adapter,
        "--out",
        &cases_out.to_string_lossy(),
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}
