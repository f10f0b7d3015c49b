//! What the suite's tests share: the places they read from, the policy for rewriting an
//! expected file from what the kit gives now (`BLESS`), and scratch directories removed when
//! dropped. The `it` binary holds it as a module; the libtest-mimic binaries (`cases`,
//! `sources`) include the same file with `#[path = "it/helpers.rs"]`.

use asr_suite::case::{Case, load_corpus};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The root of the repository: where `cases/`, `schemas/` and the docs are.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the suite is inside the workspace")
        .to_path_buf()
}

/// The corpus of the repository (`cases/`).
pub fn corpus() -> PathBuf {
    root().join("cases")
}

/// The source fixtures of the repository (`cases/sources/`).
pub fn sources() -> PathBuf {
    corpus().join("sources")
}

/// Every case of the repository's corpus.
pub fn cases() -> Vec<Case> {
    load_corpus(&corpus()).expect("the corpus loads")
}

/// Whether the expected files are to be rewritten from what the kit gives now: `BLESS` set
/// to anything but `0` or nothing, or `--bless` among the arguments (a flag of the
/// libtest-mimic binaries). An error under CI (`CI` set), where a mismatch must fail rather
/// than rewrite the expectation it breaks.
pub fn bless_requested() -> Result<bool, String> {
    bless_policy(
        std::env::args().any(|a| a == "--bless"),
        std::env::var_os("BLESS").as_deref(),
        std::env::var_os("CI").is_some(),
    )
}

/// [`bless_requested`] on what it reads from the process: the `--bless` flag, the value of
/// `BLESS`, whether `CI` is set.
pub fn bless_policy(flag: bool, bless: Option<&OsStr>, ci: bool) -> Result<bool, String> {
    let bless = flag || bless.is_some_and(|v| !v.is_empty() && v != "0");
    if bless && ci {
        return Err(
            "BLESS is set under CI: expectations are rewritten only on a developer's request"
                .into(),
        );
    }
    Ok(bless)
}

/// The message that ends the report of a mismatch: how to accept the kit's output for the
/// one test `name` of the test binary `binary` (`module::function` in `it`, the trial's name
/// in `cases`).
pub fn bless_hint(binary: &str, name: &str) -> String {
    format!(
        "If the kit is right, accept its output with:\n  BLESS=1 cargo test -p asr-suite --test {binary} -- --exact {name}"
    )
}

/// A new, empty scratch directory for one test, named after `name`, removed with everything
/// in it when dropped: also when the test fails or panics.
pub fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("asr-suite-{name}-"))
        .tempdir()
        .expect("a scratch directory")
}
