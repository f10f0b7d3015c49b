//! The kit in a CI pipeline: the GitHub Action (`action.yml`, its run script
//! `.github/action/run.sh`), the workflow that uses it on the example adapters, and the
//! pre-commit hooks (`.pre-commit-hooks.yaml`).

use crate::helpers::{BIN, asr_ctk, root, run, scratch};
use serde_yaml::{Mapping, Value};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

fn yaml(path: &str) -> Value {
    let text = std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn map<'a>(value: &'a Value, what: &str) -> &'a Mapping {
    value
        .as_mapping()
        .unwrap_or_else(|| panic!("{what} is not a mapping: {value:?}"))
}

fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

fn action() -> Value {
    yaml("action.yml")
}

fn inputs(action: &Value) -> BTreeSet<String> {
    map(&action["inputs"], "inputs")
        .keys()
        .map(|k| k.as_str().expect("an input's name").to_owned())
        .collect()
}

fn steps(action: &Value) -> &Vec<Value> {
    assert_eq!(text(&action["runs"], "using"), Some("composite"));
    action["runs"]["steps"].as_sequence().expect("the steps")
}

fn step<'a>(action: &'a Value, id: &str) -> &'a Value {
    steps(action)
        .iter()
        .find(|s| text(s, "id") == Some(id))
        .unwrap_or_else(|| panic!("no step {id}"))
}

/// The rows of the first table in docs/certify.md's section `heading` whose header's first cell is
/// `first`: the first cell of each, without its backticks.
fn readme_table(heading: &str, first: &str) -> BTreeSet<String> {
    let readme = std::fs::read_to_string(root().join("docs/certify.md")).expect("docs/certify.md");
    let start = readme
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("docs/certify.md has no section {heading}"));
    let section = &readme[start + 4..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let mut lines = section
        .lines()
        .skip_while(|l| !l.starts_with(&format!("| {first} |")));
    assert!(lines.next().is_some(), "no table of {first} in {heading}");
    lines
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.split('|')
                .nth(1)
                .expect("a cell")
                .trim()
                .trim_matches('`')
                .to_owned()
        })
        .collect()
}

fn run_script() -> std::path::PathBuf {
    root().join(".github/action/run.sh")
}

/// The options `asr-ctk SUBCOMMAND --help` lists.
fn options_of(subcommand: &str) -> BTreeSet<String> {
    let output = asr_ctk(&[subcommand, "--help"]);
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("-h, ").unwrap_or(l);
            l.starts_with("--")
                .then(|| l.split([' ', '=', '<']).next().expect("a word").to_owned())
        })
        .collect()
}

#[test]
fn the_readme_documents_every_input_and_output_of_the_action_and_no_other() {
    let action = action();
    assert_eq!(inputs(&action), readme_table("In a CI pipeline", "input"));
    let outputs: BTreeSet<String> = map(&action["outputs"], "outputs")
        .keys()
        .map(|k| k.as_str().expect("a name").to_owned())
        .collect();
    assert_eq!(outputs, readme_table("In a CI pipeline", "output"));
    for (name, input) in map(&action["inputs"], "inputs") {
        for key in ["description", "required", "default"] {
            assert!(input.get(key).is_some(), "input {name:?} has no {key}");
        }
    }
}

#[test]
fn the_action_passes_only_options_that_asr_ctk_run_has() {
    let script = std::fs::read_to_string(run_script()).expect("run.sh");
    let passed: BTreeSet<String> = script
        .lines()
        .filter(|l| l.trim_start().starts_with("argv"))
        .flat_map(|l| l.split(['(', ' ', ')']))
        .filter(|w| w.starts_with("--"))
        .map(str::to_owned)
        .collect();
    let expected: BTreeSet<String> = ["--out", "--adapter", "--expect", "--shard", "--role"]
        .map(str::to_owned)
        .into();
    assert_eq!(passed, expected, "the options run.sh passes");
    let known = options_of("run");
    assert!(known.contains("--adapter"), "{known:?}");
    for option in &passed {
        assert!(
            known.contains(option),
            "asr-ctk run has no {option}: {known:?}"
        );
    }
}

#[test]
fn the_run_step_takes_every_input_through_its_environment_only() {
    let action = action();
    for s in steps(&action) {
        if let Some(script) = text(s, "run") {
            assert!(
                !script.contains("${{"),
                "an expression in a step's script: {script}"
            );
        }
    }
    let run_step = step(&action, "run");
    assert_eq!(
        text(run_step, "run"),
        Some(r#"bash "$GITHUB_ACTION_PATH/.github/action/run.sh""#)
    );
    let env = map(&run_step["env"], "the run step's env");
    let script = std::fs::read_to_string(run_script()).expect("run.sh");
    for input in inputs(&action) {
        if input == "upload-sarif" {
            continue; // read by the upload step's condition, not by the run
        }
        let var = format!("INPUT_{}", input.to_uppercase());
        assert_eq!(
            env.get(var.as_str()).and_then(Value::as_str),
            Some(format!("${{{{ inputs.{input} }}}}").as_str()),
            "the run step's {var}"
        );
        assert!(
            script.contains(&format!("${{{var}:-")),
            "run.sh does not read {var}"
        );
    }
}

/// The composite step that uses `action` (`owner/name`, any version).
fn uses<'a>(action: &'a Value, used: &str) -> &'a Value {
    steps(action)
        .iter()
        .find(|s| text(s, "uses").is_some_and(|u| u.starts_with(&format!("{used}@"))))
        .unwrap_or_else(|| panic!("no step uses {used}"))
}

#[test]
fn the_action_installs_the_kit_from_its_own_checkout_cached_and_uploads_what_the_run_wrote() {
    let action = action();
    let install = steps(&action)
        .iter()
        .find(|s| text(s, "run").is_some_and(|r| r.contains("cargo install")))
        .expect("an install step");
    let script = text(install, "run").expect("a script");
    assert!(
        script.contains(r#"cargo install --locked --path "$GITHUB_ACTION_PATH/runner""#),
        "{script}"
    );
    assert_eq!(
        text(install, "if"),
        Some("steps.cache.outputs.cache-hit != 'true'")
    );
    let restore = uses(&action, "actions/cache/restore");
    assert_eq!(text(restore, "id"), Some("cache"));
    let save = uses(&action, "actions/cache/save");
    assert_eq!(text(save, "if"), text(install, "if"));
    for cache in [restore, save] {
        assert_eq!(
            text(&cache["with"], "key"),
            Some("${{ steps.key.outputs.key }}")
        );
        assert_eq!(
            text(&cache["with"], "path"),
            Some("${{ steps.key.outputs.root }}")
        );
    }
    let position = |step: &Value| steps(&action).iter().position(|s| s == step);
    assert!(position(restore) < position(install) && position(install) < position(save));
    assert!(
        position(save) < position(step(&action, "run")),
        "saved after the run only"
    );
    // The key: the action's ref and Cargo.lock, computed by the key step here.
    let scratch = scratch("pipeline-key");
    let output_file = scratch.join("output");
    let key_script = text(step(&action, "key"), "run").expect("a script");
    let key = |lock: &str| {
        let _ = std::fs::remove_file(&output_file);
        let checkout = scratch.join("checkout");
        for dir in ["runner", "suite", "cases", "schemas"] {
            std::fs::create_dir_all(checkout.join(dir)).expect("a directory");
        }
        std::fs::write(checkout.join("Cargo.toml"), "[workspace]\n").expect("written");
        std::fs::write(checkout.join("Cargo.lock"), lock).expect("written");
        let output = run(
            Command::new("bash")
                .args(["-euo", "pipefail", "-c", key_script])
                .env("GITHUB_ACTION_PATH", &checkout)
                .env("GITHUB_OUTPUT", &output_file)
                .env("ACTION_REF", "v1.2")
                .env("RUNNER_OS", "Linux")
                .env("RUNNER_ARCH", "X64")
                .env("RUNNER_TEMP", &*scratch),
            None,
            Duration::from_secs(60),
        );
        assert!(output.status.success(), "{output:?}");
        std::fs::read_to_string(&output_file).expect("the outputs")
    };
    let one = key("one");
    assert!(one.starts_with("key=asr-ctk-Linux-X64-v1.2-"), "{one}");
    assert!(
        one.contains(&format!("root={}/asr-ctk\n", scratch.display())),
        "{one}"
    );
    assert_ne!(one, key("two"), "Cargo.lock is not in the key");
    assert_eq!(
        text(
            &uses(&action, "github/codeql-action/upload-sarif")["with"],
            "sarif_file"
        ),
        Some("${{ steps.run.outputs.sarif }}")
    );
    assert_eq!(
        text(uses(&action, "github/codeql-action/upload-sarif"), "if"),
        Some("always() && steps.run.outputs.sarif != '' && inputs.upload-sarif == 'true'")
    );
    let artifact = uses(&action, "actions/upload-artifact");
    assert_eq!(
        text(&artifact["with"], "path"),
        Some("${{ steps.run.outputs.out }}")
    );
    assert!(text(artifact, "if").is_some_and(|c| c.starts_with("always() && ")));
    assert_eq!(
        text(&action["outputs"]["status"], "value"),
        Some("${{ steps.run.outputs.status }}")
    );
}

#[test]
fn the_default_adapter_is_the_reference_implementation() {
    let action = action();
    assert_eq!(text(&action["inputs"]["adapter"], "default"), Some(""));
    let run = run_action(&[("INPUT_ADAPTER", "")]);
    assert_eq!(run.output.status.code(), Some(0), "{:?}", run.output);
    let report = crate::helpers::report_json_in(&run.dir.join("report"));
    assert_eq!(
        report["adapter"]["implementation"]["name"], "asr-ctk-reference",
        "{}",
        report["adapter"]
    );
    let command_line = report["commandLine"].as_array().expect("the command line");
    assert!(
        !command_line.iter().any(|a| a == "--adapter"),
        "{command_line:?}"
    );
}

#[test]
fn every_script_of_the_action_and_the_workflow_is_valid_bash() {
    let mut scripts = vec![(
        "run.sh".to_owned(),
        std::fs::read_to_string(run_script()).expect("run.sh"),
    )];
    let action = action();
    for (i, s) in steps(&action).iter().enumerate() {
        if let Some(script) = text(s, "run") {
            scripts.push((format!("action.yml step {i}"), script.to_owned()));
        }
    }
    for file in ["conformance.yml", "validate-archive.yml"] {
        let workflow = yaml(&format!(".github/workflows/{file}"));
        for (job, body) in map(&workflow["jobs"], "jobs") {
            for s in body["steps"].as_sequence().expect("steps") {
                if let Some(script) = text(s, "run") {
                    scripts.push((format!("{file} {job:?}"), script.to_owned()));
                }
            }
        }
    }
    assert!(scripts.len() >= 5, "{scripts:?}");
    scripts.push((
        "a broken one (must fail)".to_owned(),
        "if [ x ]; then".to_owned(),
    ));
    let scratch = scratch("pipeline-bash");
    for (i, (name, script)) in scripts.iter().enumerate() {
        let file = scratch.join(format!("{i}.sh"));
        std::fs::write(&file, script).expect("written");
        let output = run(
            Command::new("bash").arg("-n").arg(&file),
            None,
            Duration::from_secs(30),
        );
        assert_eq!(
            output.status.success(),
            i + 1 < scripts.len(),
            "bash -n on {name}: {output:?}\n{script}"
        );
    }
}

#[test]
fn the_workflow_runs_this_action_on_the_example_adapters_and_proves_the_gate_fails() {
    let workflow = yaml(".github/workflows/conformance.yml");
    let jobs = map(&workflow["jobs"], "jobs");
    let gate = |job: &str| -> Value {
        let steps = jobs.get(job).unwrap_or_else(|| panic!("no job {job}"))["steps"]
            .as_sequence()
            .expect("steps");
        steps
            .iter()
            .find(|s| text(s, "uses") == Some("./"))
            .unwrap_or_else(|| panic!("job {job} does not use ./"))
            .clone()
    };
    let reference = gate("reference");
    assert!(reference["with"].get("adapter").is_none(), "{reference:?}");
    assert_eq!(
        text(&reference["with"], "shard"),
        Some("${{ matrix.shard }}")
    );
    let shards: Vec<&str> = jobs["reference"]["strategy"]["matrix"]["shard"]
        .as_sequence()
        .expect("the shards")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(shards, ["1/2", "2/2"]);
    assert_eq!(text(&jobs["merge"], "needs"), Some("reference"));

    let python = gate("python-example");
    assert_eq!(
        text(&python["with"], "adapter"),
        Some("python3 examples/python-adapter/adapter.py")
    );
    let expect = text(&python["with"], "expect").expect("an expectations file");
    assert!(root().join(expect).is_file(), "{expect}");

    let broken = gate("broken-example");
    assert_eq!(
        text(&broken["with"], "adapter"),
        Some("python3 examples/python-adapter/adapter_broken.py")
    );
    assert_eq!(broken["continue-on-error"], Value::Bool(true));
    let id = text(&broken, "id").expect("the gate's id");
    let check = jobs["broken-example"]["steps"]
        .as_sequence()
        .expect("steps")
        .iter()
        .skip_while(|s| text(s, "id") != Some(id))
        .nth(1)
        .expect("a step after the gate");
    assert_eq!(
        text(&check["env"], "OUTCOME"),
        Some(format!("${{{{ steps.{id}.outcome }}}}").as_str())
    );
    assert!(
        text(check, "run").is_some_and(|r| r.contains(r#"test "$OUTCOME" = failure"#)),
        "{check:?}"
    );
}

/// A run of the action's run script.
struct Run {
    output: Output,
    summary: String,
    outputs: String,
    /// Holds the report directory, `report`.
    dir: crate::helpers::Scratch,
}

/// Runs the action's run script as its run step does, on the cases of ASR-212, with `env`;
/// returns its output, the step summary (which held a line before) and the step's outputs.
fn run_action(env: &[(&str, &str)]) -> Run {
    let scratch = scratch("pipeline-run");
    let summary = scratch.join("summary.md");
    let outputs = scratch.join("outputs");
    std::fs::write(&summary, "before\n").expect("written");
    let out = scratch.join("report");
    let mut command = Command::new("bash");
    command
        .arg(run_script())
        .current_dir(root())
        .env("ASR_CTK", BIN)
        .env("INPUT_ARGS", "--case 'messages/ASR-212/*' --quiet")
        .env("INPUT_OUT", &out)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &outputs)
        .env("GITHUB_JOB", "conformance")
        .envs(env.iter().copied());
    let output = run(&mut command, None, Duration::from_secs(120));
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    let (summary, outputs) = (read(&summary), read(&outputs));
    Run {
        output,
        summary,
        outputs,
        dir: scratch,
    }
}

#[test]
fn the_run_script_appends_the_report_to_the_summary_and_exits_with_the_runs_status() {
    let passed = run_action(&[]);
    assert_eq!(passed.output.status.code(), Some(0), "{:?}", passed.output);
    let out = passed.dir.join("report");
    assert!(
        passed
            .summary
            .starts_with("before\n# ASR conformance: asr-ctk-reference "),
        "{}",
        passed.summary
    );
    assert_eq!(
        passed.summary["before\n".len()..],
        std::fs::read_to_string(out.join("report.md")).expect("report.md")
    );
    assert_eq!(
        passed.outputs,
        format!(
            "out={0}\nname=asr-ctk-report-conformance\nstatus=0\nsarif={0}/sarif.json\n",
            out.display()
        )
    );
    let stderr = String::from_utf8_lossy(&passed.output.stderr);
    assert!(
        stderr.contains(r"run --out ") && stderr.contains(r"--case messages/ASR-212/\* --quiet"),
        "{stderr}"
    );

    let failed = run_action(&[
        (
            "INPUT_ADAPTER",
            "python3 examples/python-adapter/adapter_broken.py",
        ),
        ("INPUT_SHARD", "1/1"),
        ("INPUT_ROLE", "validator"),
    ]);
    assert_eq!(failed.output.status.code(), Some(1), "{:?}", failed.output);
    assert!(
        failed
            .summary
            .starts_with("before\n# ASR conformance: asr-ctk-python-example-broken "),
        "{}",
        failed.summary
    );
    assert!(
        failed
            .outputs
            .contains("name=asr-ctk-report-conformance-validator-shard-1-of-1\nstatus=1\n"),
        "{}",
        failed.outputs
    );

    // As known results, the broken adapter's failures pass the gate.
    let expected = run_action(&[
        (
            "INPUT_ADAPTER",
            "python3 examples/python-adapter/adapter_broken.py",
        ),
        ("INPUT_EXPECT", "examples/python-adapter/expect-broken.json"),
    ]);
    assert_eq!(
        expected.output.status.code(),
        Some(0),
        "{:?}",
        expected.output
    );

    // Arguments are words, never shell text: a `$(...)` is passed on as it is.
    let marker = passed.dir.join("ran");
    let args = format!("--case \"$(touch {})\" --quiet", marker.display());
    let literal = run_action(&[("INPUT_ARGS", &args)]);
    assert_eq!(
        literal.output.status.code(),
        Some(3),
        "{:?}",
        literal.output
    );
    assert!(!marker.exists(), "the args were evaluated");
    let unbalanced = run_action(&[("INPUT_ARGS", "--case 'messages")]);
    assert_eq!(
        unbalanced.output.status.code(),
        Some(2),
        "{:?}",
        unbalanced.output
    );
    assert_eq!(unbalanced.outputs, "status=2\n");
}

fn hooks() -> Vec<Value> {
    yaml(".pre-commit-hooks.yaml")
        .as_sequence()
        .expect("a list of hooks")
        .clone()
}

/// Whether pre-commit would give `path` to a hook of `pattern`: it matches `files` with
/// Python's `re.search`, so Python decides here.
fn matches(pattern: &str, path: &str) -> bool {
    let output = run(
        Command::new("python3").args([
            "-c",
            "import re, sys; sys.exit(0 if re.search(sys.argv[1], sys.argv[2]) else 1)",
            pattern,
            path,
        ]),
        None,
        Duration::from_secs(30),
    );
    match output.status.code() {
        Some(0) => true,
        Some(1) => false,
        _ => panic!("python3: {output:?}"),
    }
}

#[test]
fn the_pre_commit_hooks_run_validate_on_jsonl_files() {
    let hooks = hooks();
    let ids: Vec<&str> = hooks.iter().filter_map(|h| text(h, "id")).collect();
    assert_eq!(ids, ["asr-ctk-validate", "asr-ctk-validate-independent"]);
    let validate_options = options_of("validate");
    for hook in &hooks {
        assert_eq!(text(hook, "language"), Some("rust"), "{hook:?}");
        assert_eq!(
            hook["types"],
            serde_yaml::from_str::<Value>("[file]").expect("YAML")
        );
        let entry: Vec<&str> = text(hook, "entry").expect("an entry").split(' ').collect();
        assert_eq!(entry[..2], ["asr-ctk", "validate"], "{hook:?}");
        for option in &entry[2..] {
            assert!(
                validate_options.contains(*option),
                "no {option}: {validate_options:?}"
            );
        }
        let files = text(hook, "files").expect("files");
        assert!(matches(files, "a/b.jsonl"), "{files}");
        assert!(!matches(files, "a.ndjson"), "{files}");
        assert!(!matches(files, "a.jsonl.bak"), "{files}");
    }
    assert!(
        matches("ndjson", "a.ndjson"),
        "python3's re.search is not asked"
    );
    assert_eq!(hooks[0]["require_serial"], Value::Bool(true));
}

#[test]
fn each_hook_fails_on_an_invalid_stream_among_the_files_it_is_given() {
    let case = |name: &str| format!("cases/messages/ASR-212/{name}.jsonl");
    let valid = [
        case("y_audio_without_bytes"),
        case("y_image_blob_only"),
        case("y_spec_image_and_audio_line_275"),
    ];
    let invalid = case("n_image_data_and_blob");
    for hook in hooks() {
        let entry: Vec<String> = text(&hook, "entry")
            .expect("an entry")
            .split(' ')
            .skip(1)
            .map(str::to_owned)
            .collect();
        let with = |files: &[String]| {
            let mut args = entry.clone();
            args.extend(files.iter().cloned());
            asr_ctk(&args)
        };
        let output = with(&valid);
        assert_eq!(output.status.code(), Some(0), "{hook:?}: {output:?}");
        let mut mixed = valid.to_vec();
        mixed.insert(1, invalid.clone());
        let output = with(&mixed);
        assert_eq!(output.status.code(), Some(1), "{hook:?}: {output:?}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.contains(&format!("{invalid}:")), "{stdout}");
        for file in &valid {
            assert!(stdout.contains(&format!("{file}: valid")), "{stdout}");
        }
    }
}

/// The script of the step `id` of `job` in a workflow.
fn script<'a>(workflow: &'a Value, job: &str, id: &str) -> &'a str {
    workflow["jobs"][job]["steps"]
        .as_sequence()
        .expect("steps")
        .iter()
        .find(|s| text(s, "id") == Some(id))
        .and_then(|s| text(s, "run"))
        .unwrap_or_else(|| panic!("no step {id} in job {job}"))
}

#[test]
fn the_archive_workflow_run_here_shard_by_shard_gives_the_whole_runs_findings_and_status() {
    let workflow = yaml(".github/workflows/validate-archive.yml");
    let shards: Vec<&str> = workflow["jobs"]["shard"]["strategy"]["matrix"]["shard"]
        .as_sequence()
        .expect("the shards")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let n = shards.len();
    assert!(n >= 2, "{shards:?}");
    let expected: Vec<String> = (1..=n).map(|i| format!("{i}/{n}")).collect();
    assert_eq!(shards, expected, "every part once, of as many as there are");
    assert_eq!(text(&workflow["jobs"]["merge"], "needs"), Some("shard"));
    // The steps' scripts, run as a runner would: in a checkout whose archive is the corpus's
    // lineage cases, with the command already built (cargo does nothing here).
    let dir = scratch("pipeline-archive");
    let bin = dir.join("bin");
    std::fs::create_dir_all(dir.join("target/release")).expect("mkdir");
    std::fs::create_dir_all(&bin).expect("mkdir");
    std::fs::write(bin.join("cargo"), "#!/bin/sh\nexit 0\n").expect("write");
    nix::sys::stat::fchmodat(
        nix::fcntl::AT_FDCWD,
        &bin.join("cargo"),
        nix::sys::stat::Mode::from_bits_truncate(0o755),
        nix::sys::stat::FchmodatFlags::FollowSymlink,
    )
    .expect("chmod");
    std::os::unix::fs::symlink(BIN, dir.join("target/release/asr-ctk")).expect("link");
    std::os::unix::fs::symlink(root().join("cases/lineage"), dir.join("archive")).expect("link");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let step = |script: &str, env: &[(&str, &str)], output: &Path| -> Output {
        let mut command = Command::new("bash");
        command
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
            .current_dir(&*dir)
            .env("PATH", &path)
            .env("ARCHIVE", "archive")
            .env("GITHUB_OUTPUT", output)
            .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"))
            .envs(env.iter().copied());
        run(&mut command, None, Duration::from_secs(120))
    };
    let shard_script = script(&workflow, "shard", "check");
    for (i, shard) in shards.iter().enumerate() {
        // Each job has outputs of its own.
        let outputs = dir.join(format!("outputs-{i}"));
        let done = step(shard_script, &[("SHARD", shard)], &outputs);
        assert!(done.status.success(), "shard {shard}: {done:?}");
        let said = std::fs::read_to_string(&outputs).expect("the step's outputs");
        let name = said
            .lines()
            .find_map(|l| l.strip_prefix("name="))
            .expect("the artifact's name");
        // What download-artifact makes of the uploaded artifacts: a folder each.
        let folder = dir.join("shards").join(name);
        std::fs::create_dir_all(&folder).expect("mkdir");
        std::fs::rename(dir.join("shard.jsonl"), folder.join("shard.jsonl")).expect("move");
    }
    let outputs = dir.join("merge-outputs");
    let merged = step(script(&workflow, "merge", "merge"), &[], &outputs);
    assert!(merged.status.success(), "{merged:?}");
    let whole = asr_ctk(&["validate", &root().join("cases/lineage").to_string_lossy()]);
    let status = std::fs::read_to_string(&outputs).expect("outputs");
    assert_eq!(
        status.trim(),
        format!("status={}", whole.status.code().expect("a status")),
        "the merge fails as the whole run does: {}",
        String::from_utf8_lossy(&merged.stderr)
    );
    // The findings are the whole run's, but for the archive's path as walked.
    let findings = std::fs::read_to_string(dir.join("findings.txt")).expect("findings");
    let whole = String::from_utf8_lossy(&whole.stdout).replace(
        &root().join("cases/lineage").to_string_lossy().into_owned(),
        "archive",
    );
    assert_eq!(findings, whole);
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("validate.sarif")).expect("sarif"))
            .expect("JSON");
    assert!(
        sarif["runs"][0]["results"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
    );
}
