//! `asr-ctk report merge` takes nothing on trust: a report of another corpus, a case the
//! corpus does not have or that is not of the shard claimed, a forged shard count, a file
//! that is no report, or texts beyond the kit's bounds are refused or cut, and what is read
//! is bounded.

use crate::helpers::{BIN, Scratch, asr_ctk, root, scratch};
use asr_suite::conformance::{KEPT_BYTES, RunReport};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// The cases the shards are run over: a few, for speed.
const CASES: &str = "messages/ASR-212/*";

/// The memory a merge may take here: far above what it needs (tens of MiB), far below what
/// an unbounded one takes on the inputs below (gigabytes).
const MEMORY_CAP: u64 = 1 << 30;

/// The reports of the two shards of a run of the reference implementation over [`CASES`].
struct Shards {
    dir: Scratch,
    reports: [PathBuf; 2],
}

fn shards() -> Shards {
    let dir = scratch("merge");
    let reports = [1, 2].map(|i| {
        let out = dir.join(format!("shard{i}"));
        let out_text = out.to_string_lossy().into_owned();
        let shard = format!("{i}/2");
        let output = asr_ctk(&[
            "run", "--quiet", "--case", CASES, "--shard", &shard, "--out", &out_text,
        ]);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        out.join("report.json")
    });
    Shards { dir, reports }
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("a report")).expect("JSON")
}

/// Writes `report` as `name` in `dir`, and gives its path.
fn write(dir: &Path, name: &str, report: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(report).expect("JSON")).expect("written");
    path
}

/// `asr-ctk report merge` of `reports` into `dir/merged`, under a deadline and a cap on its
/// memory.
fn merge(dir: &Path, reports: &[&Path]) -> Output {
    let out = dir.join("merged");
    let mut command = Command::new("prlimit");
    command
        .arg(format!("--as={MEMORY_CAP}"))
        .arg("--")
        .arg(BIN)
        .args(["report", "merge", "--out"])
        .arg(&out)
        .args(reports)
        .current_dir(root());
    crate::helpers::run(&mut command, None, Duration::from_secs(60))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The merge is refused (exit 2) with a message that holds each of `says`.
fn assert_refused(output: &Output, says: &[&str]) {
    let text = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    for part in says {
        assert!(text.contains(part), "{part:?} not in: {text}");
    }
}

#[test]
fn reports_of_another_corpus_or_with_cases_it_does_not_have_are_refused() {
    let Shards { dir, reports } = shards();
    let [first, second] = &reports;
    let genuine = merge(&dir, &[first, second]);
    assert_eq!(genuine.status.code(), Some(0), "{genuine:?}");

    let original = json(first);
    let forged = |name: &str, change: &dyn Fn(&mut Value)| {
        let mut report = original.clone();
        change(&mut report);
        write(&dir, name, &report)
    };
    let digest = original["caseSet"].as_str().expect("a digest").to_owned();
    let other_set = format!("sha256:{}", "0".repeat(64));
    let path = forged("case-set.json", &|r| {
        r["caseSet"] = other_set.clone().into();
    });
    assert_refused(
        &merge(&dir, &[&path]),
        &[
            "case-set.json",
            &format!("is of case set {other_set}, the corpus here is {digest}"),
        ],
    );

    let path = forged("count.json", &|r| {
        r["corpusCases"] = (r["corpusCases"].as_u64().expect("a count") + 1).into();
    });
    assert_refused(&merge(&dir, &[&path, second]), &["count.json", "corpus of"]);

    let path = forged("unknown-case.json", &|r| {
        r["cases"][0]["name"] = "messages/ASR-212/y_not_in_the_corpus".into();
    });
    assert_refused(
        &merge(&dir, &[&path, second]),
        &[
            "case \"messages/ASR-212/y_not_in_the_corpus\" in report",
            "unknown-case.json",
            "is no case of this corpus",
        ],
    );

    let path = forged("role.json", &|r| r["cases"][0]["role"] = "producer".into());
    assert_refused(
        &merge(&dir, &[&path, second]),
        &["role.json", "a role the case does not have"],
    );

    let path = forged("rules.json", &|r| {
        r["cases"][0]["rules"] = serde_json::json!(["ASR-231"]);
    });
    assert_refused(
        &merge(&dir, &[&path, second]),
        &["rules.json", "the corpus gives it"],
    );

    // The first shard's cases, claimed as the second shard's.
    let path = forged("shard.json", &|r| r["shards"] = serde_json::json!(["2/2"]));
    assert_refused(
        &merge(&dir, &[first, &path]),
        &[
            "shard.json",
            "is of shard 1/2, not of the shards the report claims (2/2)",
        ],
    );

    // A failure taken out of a shard.
    let path = forged("left-out.json", &|r| {
        r["cases"].as_array_mut().expect("cases").remove(0);
    });
    let left_out = original["cases"][0]["name"].as_str().expect("a name");
    assert_refused(
        &merge(&dir, &[&path, second]),
        &[
            "left-out.json",
            &format!("lacks case {left_out} (validator) of shard 1/2"),
        ],
    );

    let path = forged("other-n.json", &|r| {
        r["shards"] = serde_json::json!(["2/3"]);
    });
    assert_refused(
        &merge(&dir, &[first, &path]),
        &["other-n.json", "in 3 shards"],
    );
    for (name, shards, says) in [
        ("zero.json", serde_json::json!(["0/2"]), "from 1 to n"),
        ("beyond.json", serde_json::json!(["3/2"]), "from 1 to n"),
        ("words.json", serde_json::json!(["one/two"]), "not i/n"),
        ("twice.json", serde_json::json!(["1/2", "1/2"]), "twice"),
    ] {
        let path = forged(name, &|r| r["shards"] = shards.clone());
        assert_refused(&merge(&dir, &[&path]), &[name, says]);
    }
    assert_refused(&merge(&dir, &[first, first]), &["shard 1/2 is in report"]);

    let path = dir.join("not-a-report.json");
    std::fs::write(&path, b"{\"kit\": \"asr-ctk\"}").expect("written");
    assert_refused(
        &merge(&dir, &[&path]),
        &["not-a-report.json", "failed to parse"],
    );
}

#[test]
fn what_a_merge_reads_is_bounded_and_merged_texts_are_cut() {
    let Shards { dir, reports } = shards();
    let [first, second] = &reports;
    let original = json(first);

    // Shard 1 of a trillion: refused before anything of that size is made.
    let mut forged = original.clone();
    forged["shards"] = serde_json::json!(["1/1000000000000"]);
    let path = write(&dir, "trillion.json", &forged);
    let cases = original["corpusCases"].as_u64().expect("a count");
    assert_refused(
        &merge(&dir, &[&path]),
        &[
            "trillion.json",
            &format!("the corpus has {cases} cases, so a run has at most {cases} shards"),
        ],
    );

    // A device that never ends is no report: refused unread.
    assert_refused(
        &merge(&dir, &[Path::new("/dev/zero")]),
        &["report /dev/zero is not a regular file"],
    );

    // A file larger than any report of this corpus: refused unread (it is sparse: it takes
    // no room on disk).
    let sparse = dir.join("sparse.json");
    std::fs::File::create(&sparse)
        .and_then(|f| f.set_len(64 << 30))
        .expect("a sparse file");
    assert_refused(
        &merge(&dir, &[&sparse]),
        &[
            "sparse.json",
            "more than the",
            "a report of this corpus can hold",
        ],
    );

    // Texts beyond the kit's cut are cut as a run cuts them.
    let mut huge = original.clone();
    let text = "x".repeat(4 << 20);
    huge["cases"][0]["actual"] = text.clone().into();
    huge["cases"][0]["stderr"] = text.into();
    huge["cases"][0]["unknownRules"] = (0..50)
        .map(|i| Value::from(format!("R{i}{}", "r".repeat(500))))
        .collect();
    let path = write(&dir, "huge.json", &huge);
    let output = merge(&dir, &[&path, second]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let merged: RunReport = crate::helpers::report_in(&dir.join("merged"));
    let name = original["cases"][0]["name"].as_str().expect("a name");
    let case = merged
        .cases
        .iter()
        .find(|c| c.name == name)
        .expect("the case");
    let actual = case.actual.as_deref().expect("kept");
    assert!(actual.len() <= KEPT_BYTES + 64, "{} bytes", actual.len());
    assert!(
        actual.ends_with("more bytes not kept]"),
        "what was cut is said"
    );
    let stderr = case.stderr.as_deref().expect("kept");
    assert!(stderr.len() <= KEPT_BYTES + 64, "{} bytes", stderr.len());
    assert_eq!(case.unknown_rules.len(), 20);
    assert!(case.unknown_rules.iter().all(|r| r.chars().count() <= 64));
    for name in ["report.json", "report.md", "report.html"] {
        let size = std::fs::metadata(dir.join("merged").join(name))
            .expect("written")
            .len();
        assert!(size < 2 << 20, "{name} is {size} bytes");
    }
}

/// The shard `i/2` of a run of the reference over [`CASES`] held to the expectations `file`,
/// its report in `dir/name`.
fn expected_shard(dir: &Path, name: &str, i: u8, file: &Path) -> PathBuf {
    let (code, report) = held_shard(dir, name, i, file, &["--case", CASES]);
    assert_eq!(code, Some(0), "shard {i} of {name}");
    report
}

/// The exit status and report of shard `i/2` of a run with `selection` (the adapter, the
/// cases) held to the expectations `file`, its reports in `dir/name`.
fn held_shard(
    dir: &Path,
    name: &str,
    i: u8,
    file: &Path,
    selection: &[&str],
) -> (Option<i32>, PathBuf) {
    let out = dir.join(name);
    let (shard, file, out_text) = (
        format!("{i}/2"),
        file.to_string_lossy().into_owned(),
        out.to_string_lossy().into_owned(),
    );
    let mut args = vec![
        "run", "--quiet", "--shard", &shard, "--expect", &file, "--out", &out_text,
    ];
    args.extend_from_slice(selection);
    let output = asr_ctk(&args);
    (output.status.code(), out.join("report.json"))
}

/// Shards whose only failures are the known ones merge into a run that passes the gate, as
/// the run would have; a regression in a shard fails it.
#[test]
fn a_merge_held_to_expectations_passes_on_known_failures_alone() {
    let dir = scratch("merge-known");
    let root = root();
    let broken = format!(
        "python3 {}",
        root.join("examples/python-adapter/adapter_broken.py")
            .display()
    );
    let selection = [
        "--role",
        "validator",
        "--adapter",
        &broken,
        "--case",
        "messages/ASR-2[13]*/*",
    ];
    let shard = |name: &str, i: u8, file: &Path| held_shard(&dir, name, i, file, &selection);
    let known = root.join("examples/python-adapter/expect-broken.json");
    let (a, first) = shard("one", 1, &known);
    let (b, second) = shard("two", 2, &known);
    assert_eq!(
        (a, b),
        (Some(0), Some(0)),
        "each shard matches its expectations"
    );
    let output = merge(&dir, &[&first, &second]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let merged = json(&dir.join("merged/report.json"));
    assert_eq!(
        merged["expectations"]["knownFailures"], 3,
        "{}",
        merged["expectations"]
    );
    // Held to no expectation of those failures, the same shards fail the gate.
    let none = dir.join("none.json");
    std::fs::write(
        &none,
        r#"{"implementation": "asr-ctk-python-example-broken", "known": []}"#,
    )
    .expect("written");
    let (a, first) = shard("three", 1, &none);
    let (b, second) = shard("four", 2, &none);
    assert!(a == Some(1) || b == Some(1), "a regression in some shard");
    let output = merge(&dir, &[&first, &second]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
}

#[test]
fn a_merge_keeps_the_expectations_and_refuses_shards_held_to_others() {
    let dir = scratch("merge-expectations");
    let file = dir.join("expect.json");
    std::fs::write(
        &file,
        r#"{"implementation": "asr-ctk-reference", "known": [{"case": "messages/ASR-212/*", "outcome": "fail", "reason": "was broken once"}]}"#,
    )
    .expect("written");
    let other = dir.join("other.json");
    std::fs::write(
        &other,
        r#"{"implementation": "asr-ctk-reference", "known": [{"case": "messages/ASR-212/*", "outcome": "fail", "reason": "another reason"}]}"#,
    )
    .expect("written");
    let first = expected_shard(&dir, "one", 1, &file);
    let second = expected_shard(&dir, "two", 2, &file);
    let passes = |path: &Path| json(path)["expectations"]["unexpectedPasses"].as_u64();
    let (a, b) = (
        passes(&first).expect("counted"),
        passes(&second).expect("counted"),
    );
    assert!(a > 0 && b > 0, "every case of the shards passes: {a}, {b}");

    let output = merge(&dir, &[&first, &second]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let merged = json(&dir.join("merged/report.json"));
    assert_eq!(
        merged["expectations"]["unexpectedPasses"].as_u64(),
        Some(a + b)
    );
    assert_eq!(merged["expectations"]["regressions"], 0);
    assert_eq!(
        merged["expectations"]["digest"],
        json(&first)["expectations"]["digest"]
    );
    let md = std::fs::read_to_string(dir.join("merged/report.md")).expect("report.md");
    assert!(
        md.contains(&format!(
            "matches the expectations: 0 known failures, 0 regressions, {} unexpected passes",
            a + b
        )),
        "{md}"
    );

    let held_to_other = expected_shard(&dir, "other", 2, &other);
    let output = merge(&dir, &[&first, &held_to_other]);
    assert_refused(&output, &["other expectations", "not shards of one run"]);
    let mut without = json(&second);
    without
        .as_object_mut()
        .expect("an object")
        .remove("expectations");
    for case in without["cases"].as_array_mut().expect("cases") {
        case.as_object_mut()
            .expect("an object")
            .remove("expectation");
    }
    let without = write(&dir, "without.json", &without);
    let output = merge(&dir, &[&first, &without]);
    assert_refused(&output, &["other expectations"]);
}
