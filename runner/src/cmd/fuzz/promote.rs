//! `asr-ctk fuzz --promote`: found cases join a corpus checkout, each under its rule, with an
//! id of its own from the corpus's `ids.lock`, and only when it passes the corpus's lints.

use anyhow::{Context, Result};
use asr_suite::case::{load_case, next_id};
use asr_suite::catalog::Catalog;
use asr_suite::diagnostic::is_inferred_rule;
use asr_suite::lint;
use std::path::{Path, PathBuf};

/// What became of one found case.
pub struct Promoted {
    /// The found case's stream.
    pub from: PathBuf,
    /// Its name in the corpus and its id, or why it stayed where it was.
    pub outcome: Result<(String, String), String>,
}

/// The corpus directory cases are promoted into: the one given, else `./cases`; never the
/// copy of the corpus the kit unpacks into its cache, which the next version replaces.
pub fn corpus_root(given: Option<&Path>) -> Result<PathBuf> {
    let root = given.map_or_else(|| PathBuf::from("cases"), Path::to_owned);
    anyhow::ensure!(
        root.join("ids.lock").is_file() && root.join("rules.toml").is_file(),
        "--promote adds found cases to a corpus checkout, and {} holds none (no ids.lock and \
         rules.toml): give one with --cases DIR",
        root.display()
    );
    Ok(root)
}

/// Copies each found case (its sidecar's path under `OUT/found/RULE/`) into `corpus`.
///
/// Each case takes its id under an exclusive lock (`flock`) of the corpus's `ids.lock`, held
/// from reading the highest id to appending the new one, so that promotes running at once
/// into one checkout never give one id twice. Its files are created exclusively: a file or
/// link already at a name is never written through.
pub fn promote(corpus: &Path, found: &[PathBuf]) -> Result<Vec<Promoted>> {
    let lock_path = corpus.join("ids.lock");
    let mut promoted = Vec::new();
    for sidecar in found {
        let outcome = locked(&lock_path, |lock| promote_one(corpus, sidecar, lock))?;
        promoted.push(Promoted {
            from: sidecar.clone(),
            outcome,
        });
    }
    Ok(promoted)
}

/// Copies each found source fixture (its directory, `OUT/found/sources/<format>/<name>/`)
/// into `corpus/sources/<format>/fuzz_<rule>_NN/`, with an id of its own taken under the
/// lock of `ids.lock` as a case's is (the highest `s` id of the lock and of the fixtures,
/// plus one), when the fixtures' lint ([`lint::source_fixture`]) accepts it.
pub fn promote_fixtures(corpus: &Path, found: &[PathBuf]) -> Result<Vec<Promoted>> {
    let lock_path = corpus.join("ids.lock");
    let mut promoted = Vec::new();
    for dir in found {
        let outcome = locked(&lock_path, |lock| promote_fixture(corpus, dir, lock))?;
        promoted.push(Promoted {
            from: dir.clone(),
            outcome,
        });
    }
    Ok(promoted)
}

fn promote_fixture(corpus: &Path, dir: &Path, lock: &str) -> Result<(String, String), String> {
    use asr_suite::source::{FixtureSidecar, SOURCES_DIR, SourceFixture, load_fixtures};
    let text = std::fs::read_to_string(dir.join("fixture.json")).map_err(|e| e.to_string())?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let sidecar: FixtureSidecar =
        serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    let fixture = SourceFixture {
        name: dir.to_string_lossy().into_owned(),
        dir: dir.to_owned(),
        sidecar,
    };
    let problems = lint::source_fixture(&fixture, &value);
    if !problems.is_empty() {
        return Err(format!(
            "the fixture lint refuses it: {}",
            problems.join("; ")
        ));
    }
    let source = fixture.source().map_err(|e| e.to_string())?;
    let format = fixture.sidecar.format.clone();
    let rule = fixture
        .sidecar
        .rules
        .first()
        .ok_or("it names no rule")?
        .to_ascii_lowercase()
        .replace('-', "_");
    let sources = corpus.join(SOURCES_DIR);
    let fixtures = load_fixtures(&sources).map_err(|e| e.to_string())?;
    let highest = asr_suite::case::locked_ids(lock)
        .map(|(id, _)| id)
        .chain(fixtures.iter().map(|f| f.sidecar.id.as_str()))
        .filter_map(|id| id.strip_prefix('s')?.parse::<u32>().ok())
        .max()
        .unwrap_or(0);
    let id = format!("s{:04}", highest + 1);
    let mut sidecar = fixture.sidecar.clone();
    sidecar.id.clone_from(&id);
    let sidecar = serde_json::to_string_pretty(&sidecar).map_err(|e| e.to_string())? + "\n";
    let format_dir = sources.join(&format);
    std::fs::create_dir_all(&format_dir)
        .map_err(|e| format!("failed to create {}: {e}", format_dir.display()))?;
    for n in 1..=99 {
        let name = format!("fuzz_{rule}_{n:02}");
        let target = format_dir.join(&name);
        // Made exclusively: a name taken (by anything, a link included) moves on.
        match std::fs::create_dir(&target) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("failed to create {}: {e}", target.display())),
        }
        let mut files: Vec<(String, &[u8])> = source
            .files()
            .iter()
            .map(|(file, bytes)| (format!("source/{file}"), bytes.as_slice()))
            .collect();
        files.push(("fixture.json".into(), sidecar.as_bytes()));
        let written =
            std::fs::create_dir(target.join("source")).and_then(|()| create_all(&target, &files));
        if let Err(e) = written {
            let _ = std::fs::remove_dir_all(&target);
            return Err(format!("failed to write {}: {e}", target.display()));
        }
        return Ok((format!("{SOURCES_DIR}/{format}/{name}"), id));
    }
    Err(format!(
        "no free name for fuzz_{rule}_NN in {}",
        format_dir.display()
    ))
}

/// Runs `assign` on the text of `ids.lock` under an exclusive lock of it, and appends the
/// line it adds (the case's id and name) before the lock is let go.
fn locked(
    lock_path: &Path,
    assign: impl FnOnce(&str) -> Result<(String, String), String>,
) -> Result<Result<(String, String), String>> {
    use nix::fcntl::{Flock, FlockArg};
    use std::io::{Read, Seek, Write};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .open(lock_path)
        .with_context(|| format!("failed to open {}", lock_path.display()))?;
    let mut file = Flock::lock(file, FlockArg::LockExclusive)
        .map_err(|(_, e)| e)
        .with_context(|| format!("failed to lock {}", lock_path.display()))?;
    let mut lock = String::new();
    file.rewind()
        .and_then(|()| file.read_to_string(&mut lock))
        .with_context(|| format!("failed to read {}", lock_path.display()))?;
    let outcome = assign(&lock);
    if let Ok((name, id)) = &outcome {
        let newline = if lock.ends_with('\n') || lock.is_empty() {
            ""
        } else {
            "\n"
        };
        file.write_all(format!("{newline}{id}\t{name}\n").as_bytes())
            .and_then(|()| file.sync_data())
            .with_context(|| format!("failed to write {}", lock_path.display()))?;
    }
    Ok(outcome)
}

fn promote_one(corpus: &Path, sidecar_path: &Path, lock: &str) -> Result<(String, String), String> {
    let rule_dir = sidecar_path.parent().ok_or("no directory")?;
    let rule = rule_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !rule.starts_with("ASR-") {
        return Err("it names no rule to file it under".into());
    }
    let found_root = rule_dir.parent().ok_or("no directory")?;
    let mut case = load_case(found_root, sidecar_path).map_err(|e| e.to_string())?;
    let catalog = Catalog::embedded();
    let text = std::fs::read_to_string(sidecar_path).map_err(|e| e.to_string())?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let one = std::slice::from_ref(&case);
    let problems: Vec<String> = [
        lint::sidecar_schema(&case.name, &value),
        lint::prefixes(one),
        lint::rules_exist(one, catalog),
        lint::clauses_exist(one, catalog),
    ]
    .concat();
    if !problems.is_empty() {
        return Err(format!(
            "the corpus's lints refuse it: {}",
            problems.join("; ")
        ));
    }
    let section = section_of(corpus, &rule, catalog)?;
    let stem = sidecar_path
        .file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = corpus.join(&section).join(&rule);
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("failed to create {}: {e}", dir.display()))?;
    let id = next_id(lock);
    case.sidecar.id.clone_from(&id);
    let sidecar = serde_json::to_string_pretty(&case.sidecar).map_err(|e| e.to_string())? + "\n";
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for (part, stream) in &case.streams {
        let bytes = std::fs::read(stream).map_err(|e| format!("failed to read the stream: {e}"))?;
        files.push((part.clone(), bytes));
    }
    // The first name at which none of the case's files is taken, by anything (a link
    // included); created exclusively, so that a name taken meanwhile moves on to the next.
    for n in 1..=1000 {
        let name_stem = if n == 1 {
            stem.clone()
        } else {
            format!("{stem}_{n}")
        };
        let mut names: Vec<(String, &[u8])> = files
            .iter()
            .map(|(part, bytes)| {
                let name = if part.is_empty() {
                    format!("{name_stem}.jsonl")
                } else {
                    format!("{name_stem}.{part}.jsonl")
                };
                (name, bytes.as_slice())
            })
            .collect();
        names.push((format!("{name_stem}.json"), sidecar.as_bytes()));
        if names
            .iter()
            .any(|(name, _)| std::fs::symlink_metadata(dir.join(name)).is_ok())
        {
            continue;
        }
        match create_all(&dir, &names) {
            Ok(()) => return Ok((format!("{section}/{rule}/{name_stem}"), id)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(format!(
                    "failed to write the case into {}: {e}",
                    dir.display()
                ));
            }
        }
    }
    Err(format!("no free name for {stem} in {}", dir.display()))
}

/// Creates every file exclusively, or none: those made before one failed are removed.
fn create_all(dir: &Path, files: &[(String, &[u8])]) -> std::io::Result<()> {
    for (at, (name, bytes)) in files.iter().enumerate() {
        if let Err(e) = asr_suite::files::create_new(&dir.join(name), bytes) {
            for (made, _) in &files[..at] {
                let _ = std::fs::remove_file(dir.join(made));
            }
            return Err(e);
        }
    }
    Ok(())
}

/// The directory of the corpus a rule's cases live in: where its cases already are, else the
/// one named after the spec file that states it (`asr-messages.txt`: `messages`), else, for
/// an inferred check, `inferred`.
fn section_of(corpus: &Path, rule: &str, catalog: &Catalog) -> Result<String, String> {
    let entries = std::fs::read_dir(corpus).map_err(|e| e.to_string())?;
    for entry in entries.flatten() {
        if entry.path().join(rule).is_dir() {
            return Ok(entry.file_name().to_string_lossy().into_owned());
        }
    }
    if let Some(stated) = catalog.rule(rule) {
        let file = stated.file.trim_end_matches(".txt");
        return Ok(file.strip_prefix("asr-").unwrap_or(file).to_owned());
    }
    if is_inferred_rule(rule) {
        return Ok("inferred".into());
    }
    Err(format!("{rule} is not in the catalog"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROCESSES: usize = 4;
    const FOUND: usize = 12;
    /// Set in the processes the test starts: the corpus to promote into, and the found cases.
    const CHILD: &str = "ASR_CTK_TEST_PROMOTE_INTO";

    /// A corpus checkout in a scratch directory: its catalog and an ids.lock of two ids.
    fn checkout(dir: &Path) {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
        std::fs::create_dir_all(dir).expect("mkdir");
        std::fs::copy(repo.join("rules.toml"), dir.join("rules.toml")).expect("copy");
        std::fs::write(
            dir.join("ids.lock"),
            "# ids\nc0001\tmessages/ASR-212/n_a\nc0002\tretired\n",
        )
        .expect("write");
    }

    /// `FOUND` found cases of ASR-212 under `found/ASR-212/`, copies of one of the corpus's.
    fn found(dir: &Path) -> Vec<PathBuf> {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/messages/ASR-212");
        let rule = dir.join("ASR-212");
        std::fs::create_dir_all(&rule).expect("mkdir");
        (0..FOUND)
            .map(|n| {
                let stem = rule.join(format!("n_found_{n}"));
                for ext in ["json", "jsonl"] {
                    std::fs::copy(
                        repo.join(format!("n_audio_without_mime_type.{ext}")),
                        stem.with_extension(ext),
                    )
                    .expect("copy");
                }
                stem.with_extension("json")
            })
            .collect()
    }

    /// In a process started by the test below: promotes the found cases it is given.
    #[test]
    fn promote_child() {
        let Some(args) = std::env::var_os(CHILD) else {
            return;
        };
        let args = args.to_string_lossy().into_owned();
        let (corpus, found) = args.split_once('\n').expect("corpus and found");
        let found: Vec<PathBuf> = found.lines().map(PathBuf::from).collect();
        for promoted in promote(Path::new(corpus), &found).expect("promotes") {
            promoted.outcome.expect("promoted");
        }
    }

    /// Processes promoting at once into one checkout, the same found cases by the same
    /// names: each case gets an id of its own, its own files, and its line in ids.lock.
    #[test]
    fn concurrent_promotes_never_give_an_id_twice() {
        let guard = tempfile::tempdir().expect("a scratch directory");
        let scratch = guard.path();
        let corpus = scratch.join("cases");
        checkout(&corpus);
        let found = found(&scratch.join("found"));
        let list: Vec<String> = found
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let args = format!("{}\n{}", corpus.display(), list.join("\n"));
        let exe = std::env::current_exe().expect("the test binary");
        let children: Vec<_> = (0..PROCESSES)
            .map(|_| {
                std::process::Command::new(&exe)
                    .args([
                        "cmd::fuzz::promote::tests::promote_child",
                        "--exact",
                        "--test-threads",
                        "1",
                    ])
                    .env(CHILD, &args)
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .expect("starts")
            })
            .collect();
        for mut child in children {
            assert!(child.wait().expect("ends").success(), "a promote failed");
        }
        let lock = std::fs::read_to_string(corpus.join("ids.lock")).expect("ids.lock");
        let entries: Vec<(&str, &str)> = asr_suite::case::locked_ids(&lock).collect();
        assert_eq!(entries.len(), 2 + PROCESSES * FOUND, "{lock}");
        let ids: std::collections::BTreeSet<&str> = entries.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids.len(), entries.len(), "an id given twice:\n{lock}");
        let cases = asr_suite::case::load_corpus(&corpus).expect("the corpus loads");
        assert_eq!(cases.len(), PROCESSES * FOUND);
        for case in &cases {
            let (id, _) = entries
                .iter()
                .find(|(_, name)| *name == case.name)
                .unwrap_or_else(|| panic!("{} is not in ids.lock", case.name));
            assert_eq!(*id, case.sidecar.id, "{}", case.name);
        }
    }

    /// A link planted at the name a found case would take: the case takes the next name,
    /// and nothing is written through the link.
    #[test]
    fn a_planted_link_is_never_written_through() {
        let guard = tempfile::tempdir().expect("a scratch directory");
        let scratch = guard.path();
        let corpus = scratch.join("cases");
        checkout(&corpus);
        let found = found(&scratch.join("found"));
        let dir = corpus.join("messages/ASR-212");
        std::fs::create_dir_all(&dir).expect("mkdir");
        let victim = scratch.join("victim");
        std::fs::write(&victim, "keep").expect("write");
        // Only the stream's name is taken, by a link: its sidecar's name is free.
        std::os::unix::fs::symlink(&victim, dir.join("n_found_0.jsonl")).expect("link");
        std::os::unix::fs::symlink(scratch.join("nowhere"), dir.join("n_found_0_2.jsonl"))
            .expect("link");
        let promoted = promote(&corpus, &found[..1]).expect("promotes");
        let (name, _) = promoted[0].outcome.clone().expect("promoted");
        assert_eq!(name, "messages/ASR-212/n_found_0_3");
        assert_eq!(std::fs::read_to_string(&victim).expect("read"), "keep");
        assert!(
            !scratch.join("nowhere").exists(),
            "written through a dangling link"
        );
    }
}
