//! Persistent against one-shot mode, for the same adapter; and what the schema check of
//! replies costs a run.
//!
//! `cargo bench -p asr-ctk --bench run` runs the whole corpus against the reference adapter
//! in persistent mode and in one-shot mode, several times each, and reports the median wall
//! time, cases per second and their ratio.
//!
//! Then the schema check: `run` as it runs by default (every reply checked against
//! `reply.schema.json`) and with `--validate-protocol` (requests too, readings against
//! `reading.schema.json`), the runs interleaved, their medians and ratio. And the check of
//! replies alone, in this process, on the replies the reference adapter gave over the corpus
//! (recorded through `tee`): each reply parsed as the kit parses it without the check (into
//! its reply type) and with it (a tree, checked against the branch of the reply schema for
//! its type, dropped, then the reply type from the line again), several passes each; the medians per reply, their
//! difference, and that difference times the replies of a run against a run's median wall
//! time. Options after `--`: `--runs N` (default 5).

#![expect(clippy::cast_precision_loss, reason = "case counts shown as rates")]

use asr_suite::protocol::Reply;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs: usize = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|at| args.get(at + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::env::temp_dir().join(format!("asr-ctk-bench-run-{}", std::process::id()));
    let mut timings = Vec::new();
    for (label, extra) in [("persistent", &[][..]), ("one-shot", &["--oneshot"][..])] {
        let mut times = Vec::new();
        let mut cases = 0;
        for _ in 0..runs {
            let (time, run_cases) = run(&root, &out, extra);
            times.push(time);
            cases = run_cases;
        }
        let median = median(&mut times);
        println!(
            "{label:<10}: {cases} cases, median {median:.3} s over {runs} runs, {:.0} cases/s",
            cases as f64 / median
        );
        timings.push(median);
    }
    println!(
        "persistent mode is {:.1} times faster than one-shot mode",
        timings[1] / timings[0]
    );

    // Interleaved, so that a slow spell of the machine falls on both.
    let (mut checked, mut full) = (Vec::new(), Vec::new());
    let mut cases = 0;
    for _ in 0..runs {
        let (time, run_cases) = run(&root, &out, &[]);
        checked.push(time);
        cases = run_cases;
        full.push(run(&root, &out, &["--validate-protocol"]).0);
    }
    let (checked, full) = (median(&mut checked), median(&mut full));
    println!(
        "replies checked (default): median {checked:.3} s; --validate-protocol: median {full:.3} s ({:.3} times), over {runs} runs each",
        full / checked
    );

    let replies = out.with_extension("replies.jsonl");
    record_replies(&root, &out, &replies);
    let lines: Vec<Vec<u8>> = std::fs::read(&replies)
        .expect("the recorded replies")
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    let schema = ReplySchema::new(&root);
    let passes = runs.max(5) * 4;
    let (mut typed, mut schema_checked) = (Vec::new(), Vec::new());
    for _ in 0..passes {
        let started = Instant::now();
        for line in &lines {
            let reply: Reply = serde_json::from_slice(line).expect("a reply");
            std::hint::black_box(reply);
        }
        typed.push(started.elapsed().as_secs_f64() / lines.len() as f64);
        let started = Instant::now();
        for line in &lines {
            let value: serde_json::Value = serde_json::from_slice(line).expect("JSON");
            assert!(schema.valid(&value), "{}", String::from_utf8_lossy(line));
            drop(value);
            let reply: Reply = serde_json::from_slice(line).expect("a reply");
            std::hint::black_box(reply);
        }
        schema_checked.push(started.elapsed().as_secs_f64() / lines.len() as f64);
    }
    let (typed, schema_checked) = (median(&mut typed), median(&mut schema_checked));
    let per_reply = schema_checked - typed;
    println!(
        "one reply ({} replies, mean {:.0} bytes, {passes} passes): parsed {:.1} us, parsed and checked {:.1} us: the check costs {:.1} us a reply, {:.2} ms a run of {cases} cases, {:.2}% of its median wall time",
        lines.len(),
        lines.iter().map(Vec::len).sum::<usize>() as f64 / lines.len() as f64,
        typed * 1e6,
        schema_checked * 1e6,
        per_reply * 1e6,
        per_reply * cases as f64 * 1e3,
        per_reply * cases as f64 / checked * 100.0
    );
    std::fs::remove_dir_all(&out).ok();
    std::fs::remove_file(&replies).ok();
}

/// Runs `asr-ctk run` over the corpus with `extra` options: its wall time and the cases its
/// report lists.
fn run(root: &Path, out: &Path, extra: &[&str]) -> (f64, usize) {
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_asr-ctk"))
        .args(["run", "--quiet", "--out"])
        .arg(out)
        .args(extra)
        .current_dir(root)
        .output()
        .expect("asr-ctk runs");
    let time = started.elapsed().as_secs_f64();
    assert!(output.status.success(), "{output:?}");
    (time, cases_run(out))
}

/// The replies of the reference adapter to a run over the corpus, written to `to`.
fn record_replies(root: &Path, out: &Path, to: &Path) {
    let adapter = format!(
        "sh -c '{} adapter reference | tee {}'",
        env!("CARGO_BIN_EXE_asr-ctk"),
        to.display()
    );
    let output = Command::new(env!("CARGO_BIN_EXE_asr-ctk"))
        .args(["run", "--quiet", "--adapter", &adapter, "--out"])
        .arg(out)
        .current_dir(root)
        .output()
        .expect("asr-ctk runs");
    assert!(output.status.success(), "{output:?}");
}

/// The reply schema's branch for each `type`, as the kit checks a reply.
struct ReplySchema(BTreeMap<String, jsonschema::Validator>);

impl ReplySchema {
    fn new(root: &Path) -> Self {
        let text = std::fs::read_to_string(root.join("schemas/protocol/reply.schema.json"))
            .expect("the reply schema");
        let schema: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let mut branches = BTreeMap::new();
        for branch in schema["oneOf"].as_array().expect("branches") {
            let mut branch = branch.clone();
            branch["$defs"] = schema["$defs"].clone();
            branch["$schema"] = schema["$schema"].clone();
            let kind = branch["properties"]["type"]["const"]
                .as_str()
                .expect("a type")
                .to_owned();
            branches.insert(kind, jsonschema::validator_for(&branch).expect("a schema"));
        }
        ReplySchema(branches)
    }

    fn valid(&self, reply: &serde_json::Value) -> bool {
        reply["type"]
            .as_str()
            .and_then(|kind| self.0.get(kind))
            .is_some_and(|schema| schema.iter_errors(reply).next().is_none())
    }
}

fn median(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// The cases of the last run's report, each answered with one reply.
fn cases_run(out: &Path) -> usize {
    let report: serde_json::Value = std::fs::read_to_string(out.join("report.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    report["cases"].as_array().map_or(0, Vec::len)
}
