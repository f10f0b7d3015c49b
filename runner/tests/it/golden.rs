//! What users read, compared whole with expected files in `golden/`: the help of every
//! command, `rules`, `cases`, `validate` in each format, `read`, `spec check` and the errors
//! users meet. Each file holds one invocation: the command line, its exit status, its
//! standard output and its standard error, run in the repository root.
//!
//! When the kit's output changes on purpose, rewrite the files and review their diff:
//!
//! ```text
//! BLESS=1 cargo test -p asr-ctk --test it golden                          # every file
//! BLESS=1 cargo test -p asr-ctk --test it -- --exact golden::rules_json   # one
//! ```
//!
//! The `spec check` files need the spec text beside the repository (`../shared/spec`, as
//! `.ci/run` has it); without it, their tests say so on stderr and pass.
//!
//! Only what differs between runs and machines is replaced before comparing (see
//! [`normalize`]). A line of JSON, which the kit prints for machines, is shown unfolded, one
//! member or element a line, so that a change shows as the members it changes (see
//! [`unfold`]); nothing is lost in doing so.

use crate::helpers::{Kit, root};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The spec text beside the repository, as `.ci/run` gives it to `spec check`.
const SPEC: &str = "../shared/spec";

const VALID: &str = "cases/messages/ASR-212/y_image_blob_only.jsonl";
/// An error and two notices, of two rules.
const INVALID: &str = "cases/lineage/ASR-422/n_mirror_second_backing_session.jsonl";
/// Two lines that are not JSON among lines that are.
const NOT_JSON: &str = "cases/inferred/ASR-X-003/n_invalid_json_then_more_lines.jsonl";

/// One invocation of the kit and how its output is shown.
#[derive(Clone, Copy)]
struct Invocation {
    args: &'static [&'static str],
    /// Standard output is lines of JSON, each shown unfolded.
    json_lines: bool,
    /// A path (from the repository root) without which the invocation is skipped.
    needs: Option<&'static str>,
    /// Its standard output is one SARIF log: the file keeps of `tool.driver.rules` only the
    /// rules its results cite. The whole table is the catalog's (a test of the SARIF
    /// renderer holds it to the catalog), so that a rule added to the catalog rewrites the
    /// rule tables' files alone.
    cited_rules: bool,
}

const fn kit(args: &'static [&'static str]) -> Invocation {
    Invocation {
        args,
        json_lines: false,
        needs: None,
        cited_rules: false,
    }
}

impl Invocation {
    const fn json_lines(self) -> Self {
        Invocation {
            json_lines: true,
            ..self
        }
    }

    const fn cited_rules(self) -> Self {
        Invocation {
            cited_rules: true,
            ..self
        }
    }

    const fn needs(self, path: &'static str) -> Self {
        Invocation {
            needs: Some(path),
            ..self
        }
    }
}

/// A test for each invocation, named as its file (`rules_json`: `golden/rules-json.txt`),
/// and the list of them all, to find files no invocation writes.
macro_rules! golden {
    ($($test:ident: $invocation:expr;)*) => {
        const INVOCATIONS: &[(&str, Invocation)] = &[$((stringify!($test), $invocation)),*];
        $(
            #[test]
            fn $test() {
                check(stringify!($test), $invocation);
            }
        )*
    };
}

golden! {
    help: kit(&["--help"]);
    help_validate: kit(&["validate", "--help"]);
    help_rules: kit(&["rules", "--help"]);
    help_cases: kit(&["cases", "--help"]);
    help_spec: kit(&["spec", "--help"]);
    help_spec_check: kit(&["spec", "check", "--help"]);
    help_run: kit(&["run", "--help"]);
    help_read: kit(&["read", "--help"]);
    help_diff: kit(&["diff", "--help"]);
    help_fuzz: kit(&["fuzz", "--help"]);
    help_adapter: kit(&["adapter", "--help"]);
    help_adapter_reference: kit(&["adapter", "reference", "--help"]);
    help_report: kit(&["report", "--help"]);
    help_report_merge: kit(&["report", "merge", "--help"]);
    help_report_compare: kit(&["report", "compare", "--help"]);
    help_report_site: kit(&["report", "site", "--help"]);
    help_help: kit(&["help", "--help"]);
    version: kit(&["--version"]);
    rules_human: kit(&["rules"]);
    rules_json: kit(&["rules", "--format", "json"]).json_lines();
    cases_human: kit(&["cases", "--rule", "ASR-212"]);
    cases_json: kit(&["cases", "--rule", "ASR-212", "--format", "json"]).json_lines();
    validate_valid_human: kit(&["validate", VALID]);
    validate_valid_json: kit(&["validate", "--format", "json", VALID]).json_lines();
    validate_invalid_human: kit(&["validate", INVALID]);
    validate_invalid_json: kit(&["validate", "--format", "json", INVALID]).json_lines();
    validate_not_json_human: kit(&["validate", NOT_JSON]);
    validate_not_json_json: kit(&["validate", "--format", "json", NOT_JSON]).json_lines();
    validate_sarif: kit(&["validate", "--format", "sarif", VALID, INVALID, NOT_JSON]).cited_rules();
    read: kit(&["read", VALID]);
    spec_check_human: kit(&["spec", "check", "--spec", SPEC]).needs(SPEC);
    spec_check_json: kit(&["spec", "check", "--spec", SPEC, "--format", "json"])
        .json_lines()
        .needs(SPEC);
    error_no_command: kit(&[]);
    error_unknown_command: kit(&["frobnicate"]);
    error_unknown_flag: kit(&["validate", "--frobnicate", VALID]);
    error_missing_file: kit(&["validate", "no-such-stream.jsonl"]);
    error_missing_corpus: kit(&["cases", "--cases", "no-such-corpus"]);
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/golden")
}

fn file_name(test: &str) -> String {
    format!("{}.txt", test.replace('_', "-"))
}

const BLESS_ALL: &str = "BLESS=1 cargo test -p asr-ctk --test it golden";

fn bless_command(test: &str) -> String {
    format!("BLESS=1 cargo test -p asr-ctk --test it -- --exact golden::{test}")
}

/// Whether the expected files are to be rewritten: `BLESS` set (and not `0`), as for the
/// corpus's expectations; never under CI, where nobody reviews what would be accepted.
fn bless_requested() -> bool {
    let bless = std::env::var_os("BLESS").is_some_and(|v| !v.is_empty() && v != "0");
    assert!(
        !(bless && std::env::var_os("CI").is_some()),
        "BLESS is set under CI: expected files are rewritten only on a developer's request"
    );
    bless
}

/// Runs one invocation and compares what it prints with its file, or rewrites the file.
fn check(test: &str, invocation: Invocation) {
    if let Some(path) = invocation.needs
        && !root().join(path).exists()
    {
        // Straight to stderr, past libtest's capture: a skip is said even when all pass.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!("golden::{test}: skipped, {path} is absent\n").as_bytes(),
        );
        return;
    }
    let output = Kit::new(invocation.args)
        .env_remove("CLICOLOR_FORCE")
        .output();
    let actual = render(test, invocation, &output).unwrap_or_else(|e| panic!("{e}"));
    let path = golden_dir().join(file_name(test));
    let expected = std::fs::read_to_string(&path).ok();
    if bless_requested() {
        if expected.as_deref() != Some(&actual) {
            std::fs::create_dir_all(golden_dir()).expect("the golden directory");
            std::fs::write(&path, &actual).expect("the expected file written");
        }
        return;
    }
    if let Err(mismatch) = compare(test, expected.as_deref(), &actual) {
        panic!("{mismatch}");
    }
}

/// Nothing when `actual` is what was expected; else what differs, as a unified diff, and
/// how to accept it.
fn compare(test: &str, expected: Option<&str>, actual: &str) -> Result<(), String> {
    let file = format!("golden/{}", file_name(test));
    let Some(expected) = expected else {
        return Err(format!(
            "{file} is missing. The output now:\n\n{actual}\nIf it is right, write the file with:\n  {}\n",
            bless_command(test)
        ));
    };
    if expected == actual {
        return Ok(());
    }
    let diff = similar::TextDiff::from_lines(expected, actual)
        .unified_diff()
        .context_radius(3)
        .header(&format!("{file} (expected)"), "asr-ctk (now)")
        .to_string();
    Err(format!(
        "{file} differs from what the command prints now:\n\n{diff}\nIf the new output is right, accept it with:\n  {}\n(every golden file: {BLESS_ALL})\n",
        bless_command(test)
    ))
}

/// The file of an invocation: a comment saying where it comes from, the command line, the
/// exit status, then standard output and standard error, each under a line saying how many
/// lines it has (and whether the last ends with a newline), so that no two outputs make the
/// same file.
fn render(test: &str, invocation: Invocation, output: &Output) -> Result<String, String> {
    let mut file = format!(
        "# What `asr-ctk` prints, run in the repository root, as `cargo test -p asr-ctk --test it golden`\n\
         # compares it. If a change is right: {}\n",
        bless_command(test)
    );
    let mut command = String::from("$ asr-ctk");
    for arg in invocation.args {
        command.push(' ');
        command.push_str(&quoted(arg));
    }
    let _ = writeln!(file, "{command}");
    match output.status.code() {
        Some(code) => {
            let _ = writeln!(file, "exit status: {code}");
        }
        None => {
            let _ = writeln!(file, "{}", output.status);
        }
    }
    let mut stdout = utf8(test, "stdout", &output.stdout)?.to_owned();
    if invocation.cited_rules {
        stdout = cited_rules_only(&stdout).map_err(|e| format!("golden::{test}: stdout {e}"))?;
        file.push_str("# tool.driver.rules: only the rules the results cite\n");
    }
    let stdout = stdout.as_str();
    if invocation.json_lines {
        section_of_json(&mut file, &normalize(stdout))
            .map_err(|e| format!("golden::{test}: stdout {e}: {stdout}"))?;
    } else {
        section(&mut file, "stdout", &normalize(stdout));
    }
    section(
        &mut file,
        "stderr",
        &normalize(utf8(test, "stderr", &output.stderr)?),
    );
    Ok(file)
}

/// A SARIF log (as the kit prints it: pretty JSON and a newline) with each run's
/// `tool.driver.rules` cut to the rules its results cite.
fn cited_rules_only(text: &str) -> Result<String, String> {
    let mut log: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("is no JSON: {e}"))?;
    let printed = serde_json::to_string_pretty(&log).map_err(|e| e.to_string())? + "\n";
    if printed != text {
        return Err(
            "is not JSON as serde_json prints it: cutting its rules would hide that".into(),
        );
    }
    for run in log["runs"].as_array_mut().ok_or("has no runs")? {
        let cited: std::collections::BTreeSet<String> = run["results"]
            .as_array()
            .ok_or("has a run without results")?
            .iter()
            .filter_map(|r| r["ruleId"].as_str().map(str::to_owned))
            .collect();
        let rules = run["tool"]["driver"]["rules"]
            .as_array_mut()
            .ok_or("has a run without tool.driver.rules")?;
        rules.retain(|r| r["id"].as_str().is_some_and(|id| cited.contains(id)));
        if rules.len() != cited.len() {
            return Err(format!("cites rules its table lacks: {cited:?}"));
        }
    }
    Ok(serde_json::to_string_pretty(&log).map_err(|e| e.to_string())? + "\n")
}

fn utf8<'a>(test: &str, stream: &str, bytes: &'a [u8]) -> Result<&'a str, String> {
    std::str::from_utf8(bytes).map_err(|e| format!("golden::{test}: {stream} is not UTF-8: {e}"))
}

/// An argument as a shell would need it: bare when it is plain, else in single quotes.
fn quoted(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+".contains(c));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

fn lines(count: usize) -> String {
    if count == 1 {
        "1 line".to_owned()
    } else {
        format!("{count} lines")
    }
}

fn section(text: &mut String, name: &str, body: &str) {
    if body.is_empty() {
        let _ = writeln!(text, "--- {name}: empty");
        return;
    }
    let count = body.lines().count();
    if body.ends_with('\n') {
        let _ = writeln!(text, "--- {name}: {}", lines(count));
        text.push_str(body);
    } else {
        let _ = writeln!(
            text,
            "--- {name}: {}, the last without a newline",
            lines(count)
        );
        text.push_str(body);
        text.push('\n');
    }
}

fn section_of_json(text: &mut String, body: &str) -> Result<(), String> {
    if body.is_empty() {
        let _ = writeln!(text, "--- stdout: empty");
        return Ok(());
    }
    if !body.ends_with('\n') {
        return Err("does not end with a newline".to_owned());
    }
    let count = body.lines().count();
    let each = if count == 1 { "" } else { "each " };
    let _ = writeln!(
        text,
        "--- stdout: {} of JSON, {each}unfolded here: one member or element a line",
        lines(count)
    );
    for line in body.lines() {
        text.push_str(&unfold(line).ok_or("is not lines of JSON without spaces")?);
        text.push('\n');
    }
    Ok(())
}

/// `text` with what differs between runs and machines replaced by a placeholder, and
/// nothing else: the absolute path of the checkout (`<repo>`) and the kit's version
/// (`<version>`, only where it stands whole: not in `10.1.0` or `0.1.0.1`). Nothing else
/// the compared invocations print varies: they are given paths relative to the repository
/// root, and none prints a duration or a time.
fn normalize(text: &str) -> String {
    let repo = root().display().to_string();
    let text = text.replace(&repo, "<repo>");
    replace_whole(&text, env!("CARGO_PKG_VERSION"), "<version>")
}

/// `text` with each occurrence of `word` that has no digit, letter or dot on either side
/// replaced by `with`.
fn replace_whole(text: &str, word: &str, with: &str) -> String {
    let joins = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '.');
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    for (at, _) in text.match_indices(word) {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        if !joins(before) && !joins(after) {
            out.push_str(&text[done..at]);
            out.push_str(with);
            done = at + word.len();
        }
    }
    out.push_str(&text[done..]);
    out
}

/// A line of JSON with one member or element a line, indented by depth, and a space after
/// each colon; `None` unless the line is JSON with no whitespace outside its strings. Since
/// only whitespace outside strings is added, taking it out again gives the line back: the
/// unfolded form stands for exactly one line.
fn unfold(line: &str) -> Option<String> {
    serde_json::from_str::<serde::de::IgnoredAny>(line).ok()?;
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    };
    let mut out = String::with_capacity(line.len() * 2);
    let mut depth = 0usize;
    let (mut in_string, mut escaped) = (false, false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                if let Some(close) = chars.next_if(|&n| n == '}' || n == ']') {
                    out.push(close);
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.checked_sub(1)?;
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// Every expected file in `golden/` is written by an invocation: one left by an invocation since
/// renamed or removed would otherwise never be compared again.
#[test]
fn every_golden_file_has_its_invocation() {
    let known: Vec<String> = INVOCATIONS.iter().map(|(t, _)| file_name(t)).collect();
    let mut stale = Vec::new();
    for entry in std::fs::read_dir(golden_dir()).expect("the golden directory") {
        let path = entry.expect("an entry").path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let expected_file = path.extension().is_some_and(|e| e == "txt");
        if expected_file && !known.contains(&name) {
            stale.push(path);
        }
    }
    if bless_requested() {
        for path in &stale {
            std::fs::remove_file(path).expect("a stale file removed");
        }
        return;
    }
    assert!(
        stale.is_empty(),
        "files no invocation writes: {stale:?}; remove them with:\n  {BLESS_ALL}"
    );
}

fn output(code: i32, stdout: &str, stderr: &str) -> Output {
    Output {
        status: std::os::unix::process::ExitStatusExt::from_raw(code << 8),
        stdout: stdout.as_bytes().to_vec(),
        stderr: stderr.as_bytes().to_vec(),
    }
}

#[test]
fn a_wrong_expectation_is_reported_with_a_diff_and_the_bless_command() {
    let invocation = kit(&["--version"]);
    let printed = Kit::new(invocation.args).output();
    let actual = render("version", invocation, &printed).expect("rendered");
    assert_eq!(compare("version", Some(&actual), &actual), Ok(()));
    let wrong = actual.replace("exit status: 0", "exit status: 1");
    assert_ne!(wrong, actual);
    let mismatch = compare("version", Some(&wrong), &actual).expect_err("a mismatch");
    assert!(
        mismatch.contains("\n-exit status: 1\n") && mismatch.contains("\n+exit status: 0\n"),
        "{mismatch}"
    );
    assert!(
        mismatch.contains("BLESS=1 cargo test -p asr-ctk --test it -- --exact golden::version"),
        "{mismatch}"
    );
    let missing = compare("version", None, &actual).expect_err("a missing file");
    assert!(
        missing.contains("golden/version.txt is missing")
            && missing
                .contains("BLESS=1 cargo test -p asr-ctk --test it -- --exact golden::version"),
        "{missing}"
    );
}

#[test]
fn outputs_that_differ_make_files_that_differ() {
    let text = kit(&["x"]);
    let json = text.json_lines();
    let file = |invocation, output| render("x", invocation, &output).expect("rendered");
    let files = [
        file(text, output(0, "a\nb\n", "")),
        file(text, output(1, "a\nb\n", "")),
        file(text, output(0, "a\nb", "")),
        file(text, output(0, "a\n", "b\n")),
        file(text, output(0, "", "a\nb\n")),
        file(text, output(0, "a\n\nb\n", "")),
        file(json, output(0, "{\"a\":[1,{}]}\n", "")),
        file(json, output(0, "{\"a\":[1],\"b\":{}}\n", "")),
        file(json, output(0, "{\"a\":[1,{}]}\n{\"a\":[1,{}]}\n", "")),
    ];
    for (i, a) in files.iter().enumerate() {
        for b in &files[i + 1..] {
            assert_ne!(a, b);
        }
    }
    assert!(
        render("x", json, &output(0, "{\"a\": 1}\n", "")).is_err(),
        "JSON with spaces would not come back from its unfolded form"
    );
}

#[test]
fn unfolding_a_line_of_json_loses_nothing() {
    let line = r#"{"a":[],"b":{},"c":[1,{"d":"x, \"y\": [z]{ }"}],"e":null,"f":-1.5e3,"g":"\\"}"#;
    let unfolded = unfold(line).expect("unfolded");
    assert!(unfolded.lines().count() > 5, "{unfolded}");
    let mut folded = String::new();
    let (mut in_string, mut escaped) = (false, false);
    for c in unfolded.chars() {
        if in_string {
            let was_escaped = escaped;
            escaped = !was_escaped && c == '\\';
            in_string = was_escaped || c != '"';
        } else if c == '"' {
            in_string = true;
        } else if c.is_whitespace() {
            continue;
        }
        folded.push(c);
    }
    assert_eq!(folded, line);
    assert_eq!(unfold("{\"a\": 1}"), None, "a space outside strings");
    assert_eq!(unfold("{\"a\":1"), None, "not JSON");
}

#[test]
fn normalizing_replaces_the_checkout_and_the_version_and_nothing_else() {
    let version = env!("CARGO_PKG_VERSION");
    let repo = root().display().to_string();
    let text = format!(
        "asr-ctk {version}\n{repo}/cases/a.jsonl\nv{version}, 1{version}, {version}.1, \"{version}\"\n"
    );
    assert_eq!(
        normalize(&text),
        format!(
            "asr-ctk <version>\n<repo>/cases/a.jsonl\nv{version}, 1{version}, {version}.1, \"<version>\"\n"
        )
    );
}
