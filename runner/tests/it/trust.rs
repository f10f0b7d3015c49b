//! A certification nobody can forge: the corpus the kit carries is verified before it is
//! used, a planted link never puts a file from outside the corpus into a report, a link loop
//! in a corpus never hangs it, and the adapters of a kit that was killed die with it.

use crate::helpers::{Kit, adapters, copy_dir, corpus, scratch};
use asr_suite::conformance::CorpusOrigin;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A one-shot validator run of an adapter that calls every stream valid, reports in `out`,
/// with `extra` options, to be started.
fn accepting(out: &Path, extra: &[&str]) -> Kit {
    let adapter = format!("sh {}", adapters().join("oneshot_accepts_all.sh").display());
    let out = out.to_string_lossy();
    let mut args = vec![
        "run",
        "--quiet",
        "--oneshot",
        "--role",
        "validator",
        "--adapter",
        &adapter,
        "--out",
        &out,
    ];
    args.extend_from_slice(extra);
    Kit::new(&args)
}

use crate::helpers::{report_in as report, run_212};

/// Every file below `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).into_iter().flatten().flatten() {
            let kind = entry.file_type().expect("a type");
            if kind.is_dir() {
                pending.push(entry.path());
            } else {
                found.push(entry.path());
            }
        }
    }
    found
}

/// A cache with the negative and either-way cases deleted and the marker of a whole corpus
/// kept: the kit unpacks it again, says so, and a validator that calls everything valid
/// fails, as it does on a clean cache. The report says the corpus was the kit's, verified.
#[test]
fn a_poisoned_cache_is_unpacked_again_before_it_is_used() {
    let place = scratch("trust-poison");
    let cache = place.join("cache");
    let run = |out: &str| {
        accepting(&place.join(out), &["--case", "messages/ASR-212/*"])
            .current_dir(&place)
            .envs(&[("XDG_CACHE_HOME", &cache.to_string_lossy())])
            .output()
    };
    let clean = run("clean");
    assert_eq!(clean.status.code(), Some(1), "{clean:?}");
    let clean = report(&place.join("clean"));
    assert_eq!(clean.corpus.origin, CorpusOrigin::Kit);
    assert!(clean.corpus.verified);
    let mut poisoned = 0;
    for file in files(&cache) {
        let name = file.file_name().expect("a name").to_string_lossy();
        if name.starts_with("n_") || name.starts_with("i_") {
            std::fs::remove_file(&file).expect("rm");
            poisoned += 1;
        }
    }
    assert!(poisoned > 100, "{poisoned} files deleted");
    let again = run("again");
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("unpacked it again"), "{stderr}");
    let again = report(&place.join("again"));
    assert_eq!(again.case_set, clean.case_set);
    assert_eq!(again.cases.len(), clean.cases.len());
    assert!(again.corpus.verified);
}

/// The same trimmed corpus given with --cases is used, as asked, and every report says it is
/// not the kit's own.
#[test]
fn a_directory_corpus_is_reported_as_not_verified() {
    let place = scratch("trust-directory");
    let trimmed = place.join("cases");
    copy_dir(&corpus(), &trimmed);
    for file in files(&trimmed.join("messages/ASR-212")) {
        if file
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("n_"))
        {
            std::fs::remove_file(&file).expect("rm");
        }
    }
    let out = place.join("out");
    let output = accepting(
        &out,
        &[
            "--case",
            "messages/ASR-212/*",
            "--cases",
            &trimmed.to_string_lossy(),
        ],
    )
    .output();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report = report(&out);
    assert_eq!(report.corpus.origin, CorpusOrigin::Directory);
    assert!(!report.corpus.verified);
    crate::helpers::assert_report_meets_its_schema(&out);
    for file in ["report.md", "report.html"] {
        let text = std::fs::read_to_string(out.join(file)).expect("a report");
        assert!(text.contains("a directory, not the kit"), "{file}");
    }
    // The checkout's own corpus, unchanged, is the kit's.
    let out = place.join("checkout");
    let output = run_212(&out);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(self::report(&out).corpus.verified);
}

/// With `HOME` unset the cache is in the temporary directory, named by the user's id; a
/// directory there that others can write (or, as root, one another user owns) is refused.
#[test]
fn a_shared_or_foreign_cache_directory_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let place = scratch("trust-foreign");
    let uid = nix::unistd::geteuid();
    let planted = place.join(format!("asr-ctk-{uid}"));
    std::fs::create_dir_all(&planted).expect("mkdir");
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let run = || {
        Kit::new(&["cases"])
            .current_dir(&place)
            .env_remove("HOME")
            .env_remove("XDG_CACHE_HOME")
            .envs(&[("TMPDIR", &place.to_string_lossy())])
            .output()
    };
    let refused = run();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("others can write"), "{stderr}");
    assert_eq!(std::fs::read_dir(&planted).expect("list").count(), 0);
    if uid.is_root() {
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        nix::unistd::chown(&planted, Some(nix::unistd::Uid::from_raw(65534)), None).expect("chown");
        let refused = run();
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("belongs to user 65534"), "{stderr}");
    }
    std::fs::remove_dir_all(&planted).expect("rm");
    let fine = run();
    assert_eq!(fine.status.code(), Some(0), "{fine:?}");
}

const SECRET: &str = "PRIVATE-KEY-3f9a1c-never-in-a-report";

/// A copy of the corpus in `place`, and a secret file beside it that a link will point to.
fn corpus_and_secret(place: &Path) -> (PathBuf, PathBuf) {
    let copy = place.join("cases");
    copy_dir(&corpus(), &copy);
    let secret = place.join("id_ed25519");
    std::fs::write(
        &secret,
        format!("{{\"type\":\"session\",\"seq\":0,\"id\":\"{SECRET}\"}}\n"),
    )
    .expect("write");
    (copy, secret)
}

/// Runs the kit over `cases` of `copy`, and checks the run refused the corpus (exit 3) and
/// that the secret is nowhere in what it wrote or printed.
fn refused_without_the_secret(place: &Path, copy: &Path, role: &str, cases: &str) {
    let out = place.join("out");
    let output = Kit::new(&[
        "run",
        "--quiet",
        "--role",
        role,
        "--case",
        cases,
        "--cases",
        &copy.to_string_lossy(),
        "--out",
        &out.to_string_lossy(),
    ])
    .output();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("outside the corpus") || stderr.contains("outside"),
        "{stderr}"
    );
    assert!(!stderr.contains(SECRET) && !String::from_utf8_lossy(&output.stdout).contains(SECRET));
    for file in files(&out) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(
            !text.contains(SECRET),
            "{} holds the secret",
            file.display()
        );
    }
}

#[test]
fn a_golden_linked_out_of_the_corpus_is_never_read() {
    let place = scratch("trust-golden");
    let (copy, secret) = corpus_and_secret(&place);
    let fixture = files(&copy.join("sources"))
        .into_iter()
        .find(|f| f.parent().is_some_and(|p| p.ends_with("expected")))
        .expect("a golden");
    std::fs::remove_file(&fixture).expect("rm");
    std::os::unix::fs::symlink(&secret, &fixture).expect("link");
    let dir = fixture.parent().and_then(Path::parent).expect("a fixture");
    let name = dir
        .strip_prefix(&copy)
        .expect("inside")
        .to_string_lossy()
        .into_owned();
    refused_without_the_secret(&place, &copy, "producer", &name);
}

#[test]
fn a_stream_linked_out_of_the_corpus_is_never_read() {
    let place = scratch("trust-stream");
    let (copy, secret) = corpus_and_secret(&place);
    let stream = copy.join("messages/ASR-212/y_image_blob_only.jsonl");
    std::fs::remove_file(&stream).expect("rm");
    std::os::unix::fs::symlink(&secret, &stream).expect("link");
    refused_without_the_secret(&place, &copy, "validator", "messages/ASR-212/*");
    // A source file of a fixture, and a whole `source/` directory, likewise.
    let place = scratch("trust-source");
    let (copy, secret) = corpus_and_secret(&place);
    let source = files(&copy.join("sources"))
        .into_iter()
        .find(|f| f.parent().is_some_and(|p| p.ends_with("source")))
        .expect("a source file");
    let dir = source.parent().expect("source/").to_owned();
    std::fs::remove_dir_all(&dir).expect("rm");
    std::fs::create_dir_all(place.join("elsewhere")).expect("mkdir");
    std::fs::copy(&secret, place.join("elsewhere/session.jsonl")).expect("copy");
    std::os::unix::fs::symlink(place.join("elsewhere"), &dir).expect("link");
    let name = dir
        .parent()
        .and_then(|d| d.strip_prefix(&copy).ok())
        .expect("inside")
        .to_string_lossy()
        .into_owned();
    refused_without_the_secret(&place, &copy, "producer", &name);
}

/// Two links back to their own directory in one case directory: the corpus loads, each case
/// once, at once.
#[test]
fn a_corpus_with_link_loops_loads_each_case_once() {
    let place = scratch("trust-loops");
    let copy = place.join("cases");
    copy_dir(&corpus(), &copy);
    let dir = copy.join("messages/ASR-212");
    std::os::unix::fs::symlink(".", dir.join("again")).expect("link");
    std::os::unix::fs::symlink(".", dir.join("and_again")).expect("link");
    std::os::unix::fs::symlink("..", dir.join("up")).expect("link");
    let list = |cases: &Path| {
        let output = Kit::new(&["cases", "--cases", &cases.to_string_lossy()])
            .limit(Duration::from_secs(60))
            .output();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    assert_eq!(list(&copy), list(&corpus()));
}

/// The kit SIGKILLed while its adapter, which has started a daemon, works on a case: neither
/// the adapter nor its daemon outlive it.
#[test]
fn nothing_an_adapter_started_survives_a_killed_kit() {
    let place = scratch("trust-sigkill");
    let tag = format!("sigkill{}x", std::process::id());
    let script = adapters().join("detaches_and_hangs.py");
    let mut kit = Command::new(crate::helpers::BIN)
        .args([
            "run",
            "--quiet",
            "--role",
            "validator",
            "--timeout",
            "100",
            "--case",
            "messages/ASR-212/*",
            "--adapter",
            &format!("python3 {} {tag}", script.display()),
            "--out",
            &place.join("out").to_string_lossy(),
        ])
        .current_dir(crate::helpers::root())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starts");
    let kit_pid = kit.id().to_string();
    // Processes other than the kit whose command line holds the tag.
    let tagged = || -> Vec<String> {
        std::fs::read_dir("/proc")
            .expect("procfs")
            .flatten()
            .filter(|e| e.file_name().to_string_lossy() != kit_pid)
            .filter_map(|e| {
                let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
                let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                cmdline.contains(&tag).then_some(cmdline)
            })
            .collect()
    };
    // The adapter and its daemon: two processes with the tag.
    let deadline = Instant::now() + Duration::from_secs(60);
    while tagged().len() < 2 {
        assert!(
            Instant::now() < deadline,
            "the daemon never started: {:?}",
            tagged()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    kit.kill().expect("SIGKILL");
    kit.wait().expect("reaped");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !tagged().is_empty() {
        assert!(
            Instant::now() < deadline,
            "alive 10 s after the kit was killed: {:?}",
            tagged()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Links planted at the names of the report files: each is replaced by the report, and the
/// files they pointed to are left as they were.
#[test]
fn reports_replace_planted_links_instead_of_writing_through_them() {
    let place = scratch("trust-out");
    let out = place.join("out");
    std::fs::create_dir_all(&out).expect("mkdir");
    let victim = place.join("victim");
    std::fs::write(&victim, "keep").expect("write");
    for name in ["badge.json", "report.json", "junit.xml"] {
        std::os::unix::fs::symlink(&victim, out.join(name)).expect("link");
    }
    let output = run_212(&out);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(std::fs::read_to_string(&victim).expect("read"), "keep");
    for name in ["badge.json", "report.json", "junit.xml"] {
        let meta = std::fs::symlink_metadata(out.join(name)).expect("written");
        assert!(meta.is_file(), "{name} is still a link");
    }
    let names: Vec<String> = std::fs::read_dir(&out)
        .expect("list")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 6, "only the six reports: {names:?}");
}

/// The HTML report shows each failing case's stream beside it, read from the corpus, and
/// escaped.
#[test]
fn the_html_report_shows_a_failing_cases_stream() {
    let place = scratch("trust-html-stream");
    let out = place.join("out");
    let output = accepting(&out, &["--case", "messages/ASR-212/n_image_data_and_blob"]).output();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let page = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    let stream =
        std::fs::read_to_string(corpus().join("messages/ASR-212/n_image_data_and_blob.jsonl"))
            .expect("the stream");
    let first = stream
        .lines()
        .next()
        .expect("a line")
        .replace('"', "&quot;");
    assert!(
        page.contains("<summary>Stream <code>messages/ASR-212/n_image_data_and_blob.jsonl</code>"),
        "{page}"
    );
    assert!(page.contains(&first), "{page}");
}
