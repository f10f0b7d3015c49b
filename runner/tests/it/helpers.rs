//! What the tests share: the places they read from, scratch directories removed when
//! dropped, and running the `asr-ctk` binary (or any command) with a deadline, so that a run
//! that hangs fails its test instead of hanging them all.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// The `asr-ctk` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_asr-ctk");

/// How long a run may take unless its test says otherwise: far beyond the slowest test's
/// run, so that reaching it means a hang.
const LIMIT: Duration = Duration::from_secs(120);

/// The root of the repository: where users run the kit, and where `./cases` is the corpus.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the runner is inside the workspace")
        .to_path_buf()
}

/// The corpus of the repository.
pub fn corpus() -> PathBuf {
    root().join("cases")
}

/// The misbehaving adapters (`runner/tests/adapters/`).
pub fn adapters() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/adapters")
}

/// The deliberately wrong readers (`runner/tests/readers/`).
pub fn readers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/readers")
}

/// The deliberately wrong producers.
pub fn producers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/producers")
}

/// The major version of the `node` on the `PATH`; 0 when there is none.
pub fn node_major() -> u32 {
    let version = Command::new("node")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    version
        .strip_prefix('v')
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse().ok())
        .unwrap_or(0)
}

/// A scratch directory of one test, removed with everything in it when dropped, also when
/// the test fails (symlinks in it are removed, not followed).
#[derive(Debug)]
pub struct Scratch(tempfile::TempDir);

/// A new, empty scratch directory, named after `name`.
pub fn scratch(name: &str) -> Scratch {
    Scratch(
        tempfile::Builder::new()
            .prefix(&format!("asr-ctk-it-{name}-"))
            .tempdir()
            .expect("a scratch directory"),
    )
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

/// The reference run on the cases of ASR-212 of the checkout's corpus, reports in `out`.
pub fn run_212(out: &Path) -> Output {
    Kit::new(&[
        "run",
        "--quiet",
        "--case",
        "messages/ASR-212/*",
        "--out",
        &out.to_string_lossy(),
    ])
    .output()
}

/// The `report.json` a run wrote into `dir`.
pub fn report_in(dir: &Path) -> asr_suite::conformance::RunReport {
    serde_json::from_value(report_json_in(dir)).expect("a report")
}

/// The `report.json` a run wrote into `dir`, as JSON.
pub fn report_json_in(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("report.json"))
        .unwrap_or_else(|e| panic!("no report in {}: {e}", dir.display()));
    serde_json::from_str(&text).expect("JSON")
}

/// Fails unless the `report.json` in `dir` meets `schemas/report.schema.json`.
pub fn assert_report_meets_its_schema(dir: &Path) {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../../schemas/report.schema.json")).expect("schema");
    let validator = jsonschema::validator_for(&schema).expect("compiles");
    let value = report_json_in(dir);
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{}: {errors:?}", dir.display());
}

/// Copies the directory tree `from` to `to` (the corpus into a scratch directory, say).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a directory");
    for entry in std::fs::read_dir(from).expect("a directory").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("a copy");
        }
    }
}

/// Runs `asr-ctk` with `args` in the repository root, standard input empty.
pub fn asr_ctk<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Kit::new(args).output()
}

/// A run of `asr-ctk`, in the repository root unless told otherwise.
pub struct Kit {
    command: Command,
    input: Option<Vec<u8>>,
    limit: Duration,
}

impl Kit {
    pub fn new<S: AsRef<OsStr>>(args: &[S]) -> Self {
        let mut command = Command::new(BIN);
        command.args(args).current_dir(root());
        Kit {
            command,
            input: None,
            limit: LIMIT,
        }
    }

    /// What the run reads on standard input (without it, nothing: end of file at once).
    pub fn input(mut self, text: &str) -> Self {
        self.input = Some(text.as_bytes().to_vec());
        self
    }

    pub fn envs(mut self, vars: &[(&str, &str)]) -> Self {
        self.command.envs(vars.iter().copied());
        self
    }

    /// Runs it in `dir` instead of the repository root.
    pub fn current_dir(mut self, dir: &Path) -> Self {
        self.command.current_dir(dir);
        self
    }

    pub fn env_remove(mut self, key: &str) -> Self {
        self.command.env_remove(key);
        self
    }

    /// The longest the run may take before it is killed and its test fails.
    pub fn limit(mut self, limit: Duration) -> Self {
        self.limit = limit;
        self
    }

    pub fn output(mut self) -> Output {
        run(&mut self.command, self.input, self.limit)
    }
}

/// Runs `command` to its end, feeding it `input` and collecting its output; kills it and
/// fails the test when it has not ended within `limit`.
pub fn run(command: &mut Command, input: Option<Vec<u8>>, limit: Duration) -> Output {
    let stdin = if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    };
    let shown = format!("{command:?}");
    let mut child = command
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{shown} does not start: {e}"));
    if let Some(input) = input {
        let mut stdin = child.stdin.take().expect("stdin is piped");
        // Written apart from the wait: a command that prints before it has read all its input
        // would otherwise block on a full pipe while this blocks on its input.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("a pid"));
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    if let Ok(output) = finished.recv_timeout(limit) {
        return output.unwrap_or_else(|e| panic!("{shown}: {e}"));
    }
    // Not yet waited for, so the pid is still the child's.
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
    panic!("{shown} did not end within {limit:?}");
}

/// Whether the calling test (`name`, as libtest names it: `module::function`) is to do its
/// work in this process. For a test that reads what is shared by the whole process and that
/// other tests running beside it would change: `getrusage(RUSAGE_CHILDREN)`, for one, is the
/// peak over every child the process has waited for, whichever test started it.
///
/// In the process running the tests, no: this starts the test binary again to run that one
/// test by itself, waits for it, and fails if it failed (or if it ran no test). In that
/// second process, yes.
pub fn alone(name: &str) -> bool {
    const VAR: &str = "ASR_CTK_IT_ALONE";
    if std::env::var_os(VAR).is_some_and(|v| v == name) {
        return true;
    }
    let binary = std::env::current_exe().expect("the test binary");
    let output = run(
        Command::new(binary)
            .args([name, "--exact", "--nocapture", "--test-threads", "1"])
            .env(VAR, name),
        None,
        Duration::from_secs(600),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{name}, run alone: {}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    false
}
