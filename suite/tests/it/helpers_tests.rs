//! The shared helpers do what the tests rely on: `BLESS` rewrites only when asked and never
//! under CI, the hint names a command that runs the one test, and a scratch directory is
//! gone when its test panics.

use crate::helpers::{bless_hint, bless_policy, scratch};
use std::ffi::OsStr;
use std::path::PathBuf;

#[test]
fn bless_is_asked_by_the_flag_or_a_value_other_than_0_and_refused_under_ci() {
    assert_eq!(bless_policy(false, None, false), Ok(false));
    assert_eq!(bless_policy(false, Some(OsStr::new("")), false), Ok(false));
    assert_eq!(bless_policy(false, Some(OsStr::new("0")), false), Ok(false));
    assert_eq!(bless_policy(false, Some(OsStr::new("1")), false), Ok(true));
    assert_eq!(
        bless_policy(false, Some(OsStr::new("yes")), false),
        Ok(true)
    );
    assert_eq!(bless_policy(true, None, false), Ok(true));
    assert_eq!(bless_policy(false, None, true), Ok(false));
    assert_eq!(bless_policy(false, Some(OsStr::new("0")), true), Ok(false));
    for (flag, bless) in [(false, Some(OsStr::new("1"))), (true, None)] {
        let refused = bless_policy(flag, bless, true).expect_err("refused under CI");
        assert!(refused.contains("under CI"), "{refused}");
    }
}

#[test]
fn the_bless_hint_is_a_command_that_runs_the_one_test() {
    let hint = bless_hint("cases", "messages/ASR-212/n_image_data_and_blob");
    let command = hint.lines().last().expect("a command").trim();
    assert_eq!(
        command,
        "BLESS=1 cargo test -p asr-suite --test cases -- --exact messages/ASR-212/n_image_data_and_blob"
    );
}

#[test]
fn a_scratch_directory_is_removed_when_its_test_panics() {
    let mut kept = PathBuf::new();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let dir = scratch("panics");
        std::fs::create_dir_all(dir.path().join("a/b")).expect("a directory");
        std::fs::write(dir.path().join("a/b/file"), "x").expect("a file");
        kept = dir.path().to_path_buf();
        assert!(kept.join("a/b/file").is_file());
        panic!("the test fails");
    }));
    let payload = outcome.expect_err("the closure panics");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"the test fails"));
    assert!(kept.starts_with(std::env::temp_dir()), "{}", kept.display());
    assert!(
        kept.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("asr-suite-panics-")),
        "{}",
        kept.display()
    );
    assert!(!kept.exists(), "{} is left behind", kept.display());
    // Two scratch directories of one name are two directories.
    let (a, b) = (scratch("same"), scratch("same"));
    assert_ne!(a.path(), b.path());
}
