//! The reference adapter holds no stream whole, reads no request line past its bound, and
//! does not outlive the kit that started it. Large inputs are sparse files (no disk, no
//! memory in the test); the adapter runs under an address-space limit (`prlimit --as`) that
//! a stream held whole would break.

use crate::helpers::{BIN, alone, root, scratch};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A stream of one line of NULs of `len` bytes, taking no disk.
fn sparse(dir: &Path, name: &str, len: u64) -> PathBuf {
    let path = dir.join(name);
    File::create(&path)
        .and_then(|f| f.set_len(len))
        .expect("a sparse file");
    path
}

/// The address space the adapter gets: far less than the streams it reads.
const ADDRESS_SPACE: u64 = 512 << 20;

/// A gigabyte: twice the address space.
const BIG: u64 = 1 << 30;

/// `asr-ctk adapter reference ARGS` under [`ADDRESS_SPACE`] and a deadline, `stdin` its input,
/// with `env`.
fn reference(args: &[&str], stdin: Stdio, env: &[(&str, &str)]) -> Output {
    Command::new("timeout")
        .arg("120")
        .arg("prlimit")
        .arg(format!("--as={ADDRESS_SPACE}"))
        .arg("--")
        .arg(BIN)
        .args(["adapter", "reference"])
        .args(args)
        .env_remove("ASR_CTK_HANDSHAKE")
        .env_remove("ASR_CTK_ROLE")
        .env_remove("ASR_CTK_ADAPTER_TOKEN")
        .envs(env.iter().copied())
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("timeout, prlimit and asr-ctk run")
}

/// The replies a run wrote, one a line.
fn replies_of(output: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON reply"))
        .collect()
}

fn case(seq: u64, role: &str, path: &Path) -> String {
    serde_json::json!({
        "type": "case", "seq": seq, "role": role, "case": "big", "id": "big", "rules": [],
        "streams": [{"part": "", "path": path.to_string_lossy()}]
    })
    .to_string()
}

/// The reader's and the validator's answer to a stream of one line of a gigabyte: refused,
/// for the line over the limit.
fn assert_refused_for_its_long_line(reader: &serde_json::Value, validator: &serde_json::Value) {
    assert_eq!(reader["type"], "answered", "{reader}");
    assert_eq!(reader["streams"][0]["valid"], false, "{reader}");
    assert!(reader["streams"][0]["reading"]["records"].is_object());
    assert_eq!(validator["type"], "answered", "{validator}");
    assert_eq!(validator["streams"][0]["valid"], false);
    let rules: Vec<&str> = validator["streams"][0]["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter_map(|d| d["rule"].as_str())
        .collect();
    assert!(rules.contains(&"ASR-X-006"), "{validator}");
}

#[test]
fn the_reference_adapter_reads_a_stream_by_path_without_holding_it() {
    let dir = scratch("reference-by-path");
    let big = sparse(&dir, "big.jsonl", BIG);
    let requests = format!(
        "{}\n{}\n{{\"type\":\"stop\"}}\n",
        case(1, "reader", &big),
        case(2, "validator", &big)
    );
    let input = dir.join("requests");
    std::fs::write(&input, requests).expect("requests");
    let output = reference(&[], File::open(&input).expect("requests").into(), &[]);
    let replies = replies_of(&output);
    assert_eq!(replies.len(), 3, "{output:?}");
    assert_refused_for_its_long_line(&replies[0], &replies[1]);
}

#[test]
fn in_one_shot_mode_the_reference_adapter_reads_standard_input_as_a_stream() {
    let dir = scratch("reference-oneshot");
    let big = sparse(&dir, "big.jsonl", BIG);
    let mut answers = Vec::new();
    for role in ["reader", "validator"] {
        let output = reference(
            &[],
            File::open(&big).expect("stream").into(),
            &[("ASR_CTK_ROLE", role), ("ASR_CTK_CASE", "big")],
        );
        let replies = replies_of(&output);
        assert_eq!(replies.len(), 1, "{role}: {output:?}");
        answers.push(replies[0].clone());
    }
    assert_refused_for_its_long_line(&answers[0], &answers[1]);
}

#[test]
fn a_producer_source_larger_than_the_fixtures_is_declined_unread() {
    let fixture = "sources/aun-message-json/group_merge_forward_01";
    let dir = scratch("reference-producer");
    let big = sparse(&dir, "messages.jsonl", BIG);
    let env = [("ASR_CTK_ROLE", "producer"), ("ASR_CTK_CASE", fixture)];
    let output = reference(&[big.to_str().expect("a path")], Stdio::null(), &env);
    let replies = replies_of(&output);
    assert_eq!(replies.len(), 1, "{output:?}");
    assert_eq!(replies[0]["type"], "skipped", "{}", replies[0]);
    // The fixture's own source is still answered with its golden output.
    let own = root()
        .join("cases")
        .join(fixture)
        .join("source/messages.jsonl");
    let output = reference(&[own.to_str().expect("a path")], Stdio::null(), &env);
    let replies = replies_of(&output);
    assert_eq!(replies[0]["type"], "answered", "{output:?}");
    assert!(
        !replies[0]["outputs"]
            .as_array()
            .expect("outputs")
            .is_empty()
    );
}

#[test]
fn a_request_line_over_the_reply_bound_is_answered_with_an_error_and_the_next_is_read() {
    let dir = scratch("reference-request");
    let small = dir.join("small.jsonl");
    std::fs::write(&small, "{}\n").expect("stream");
    let data = "A".repeat(300_000);
    let huge = serde_json::json!({
        "type": "case", "seq": 1, "role": "validator", "case": "data", "id": "data",
        "rules": [], "streams": [{"part": "", "path": "/nowhere", "data": data}]
    });
    let input = dir.join("requests");
    std::fs::write(
        &input,
        format!(
            "{huge}\n{}\n{{\"type\":\"stop\"}}\n",
            case(2, "validator", &small)
        ),
    )
    .expect("requests");
    let output = reference(
        &["--max-line-bytes", "1000", "--max-reply-bytes", "100000"],
        File::open(&input).expect("requests").into(),
        &[],
    );
    let replies = replies_of(&output);
    assert_eq!(replies.len(), 3, "{output:?}");
    assert_eq!(replies[0]["type"], "error", "{}", replies[0]);
    let message = replies[0]["message"].as_str().expect("a message");
    assert!(
        message.contains("line 1")
            && message.contains("100000")
            && message.contains("--max-reply-bytes"),
        "{message}"
    );
    assert_eq!(replies[1]["type"], "answered");
    assert_eq!(replies[1]["seq"], 2);
}

/// Run in a process of its own, so that the peak it reads (RUSAGE_CHILDREN: the kit's, or
/// that of an adapter the kit waited for) is of no other test's child.
#[test]
fn diff_of_two_references_on_a_gigabyte_stream_holds_it_nowhere() {
    if !alone("reference_limits::diff_of_two_references_on_a_gigabyte_stream_holds_it_nowhere") {
        return;
    }
    let dir = scratch("reference-diff");
    let big = sparse(&dir, "big.jsonl", BIG);
    let output = Command::new(BIN)
        .args(["diff", "--adapter", "reference", "--adapter", "reference"])
        .args(["--timeout", "100", "--out"])
        .arg(dir.join("out"))
        .arg(&big)
        .current_dir(root())
        .env_remove("ASR_CTK_ADAPTER_TOKEN")
        .output()
        .expect("asr-ctk runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        stdout.contains("0 disagreement(s) on 1 stream(s) compared"),
        "{stdout}"
    );
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("rusage");
    // ru_maxrss is in KiB on Linux.
    let peak = u64::try_from(usage.max_rss()).unwrap_or(0) * 1024;
    assert!(
        peak < BIG / 4,
        "peak memory {peak} bytes on a stream of {BIG}"
    );
}

/// The kit's children that carry an adapter token, with the token.
fn adapters_of(kit: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("procfs").flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if parent != Some(kit) {
            continue;
        }
        if let Some(token) = token_of(pid) {
            found.push((pid, token));
        }
    }
    found
}

fn token_of(pid: u32) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    environ
        .split(|b| *b == 0)
        .find_map(|entry| entry.strip_prefix(b"ASR_CTK_ADAPTER_TOKEN="))
        .map(|t| String::from_utf8_lossy(t).into_owned())
}

/// Whether the process `pid` still runs as the adapter of `token` (a zombie does not).
fn runs(pid: u32, token: &str) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    matches!(state, Some(s) if s != "Z") && token_of(pid).as_deref() == Some(token)
}

#[test]
fn the_reference_adapter_ends_when_the_kit_is_killed() {
    let dir = scratch("reference-orphan");
    let mut kit = Command::new(BIN)
        .args([
            "diff",
            "--adapter",
            "reference",
            "--adapter",
            "reference",
            "--timeout",
            "600",
            "--out",
        ])
        .arg(dir.join("out"))
        .arg("/dev/zero")
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("asr-ctk runs");
    let pid = kit.id();
    // The first adapter is asked first: it is reading /dev/zero once it is there.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut adapters = adapters_of(pid);
    while adapters.len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        adapters = adapters_of(pid);
    }
    std::thread::sleep(Duration::from_millis(300));
    let _ = kit.kill();
    let _ = kit.wait();
    assert_eq!(adapters.len(), 2, "the kit started its two adapters");
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut left: Vec<&(u32, String)> = adapters.iter().collect();
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left.retain(|(pid, token)| runs(*pid, token));
    }
    for (pid, token) in &left {
        // Not left running for the tests after this one, whatever it asserts.
        if runs(*pid, token) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(i32::try_from(*pid).expect("a pid")),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
    assert!(
        left.is_empty(),
        "adapters still running 5 s after the kit was killed: {left:?}"
    );
}
