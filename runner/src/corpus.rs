//! Where the corpus is, for the commands that read it.

use anyhow::{Context, Result};
use asr_suite::case::{Case, load_corpus};
use asr_suite::conformance::{CorpusInfo, CorpusOrigin};
use std::path::{Path, PathBuf};

/// A corpus found and loaded.
pub struct Corpus {
    /// Its directory.
    pub root: PathBuf,
    /// Every case.
    pub cases: Vec<Case>,
    /// Where it came from, for the reports.
    pub info: CorpusInfo,
}

/// The corpus directory: the one given, else `./cases` when it holds a catalog, else the
/// corpus the kit carries, unpacked into the user's cache and verified against the one
/// compiled in before every use.
pub fn root(given: Option<&Path>) -> Result<(PathBuf, CorpusInfo)> {
    let directory = |dir: &Path| {
        let info = CorpusInfo {
            origin: CorpusOrigin::Directory,
            path: dir.to_string_lossy().into_owned(),
            verified: asr_suite::embedded::is_kits_corpus(dir),
        };
        Ok((dir.to_owned(), info))
    };
    if let Some(given) = given {
        // A checkout's root holds the corpus in `cases/`: loading the root itself would
        // fail on whichever file it meets first, which says nothing of the mistake.
        let inside = given.join("cases");
        if !given.join("rules.toml").is_file() && inside.join("rules.toml").is_file() {
            anyhow::bail!(
                "{} is no corpus (it has no rules.toml): did you mean {}?",
                given.display(),
                inside.display()
            );
        }
        return directory(given);
    }
    let here = Path::new("cases");
    if here.join("rules.toml").is_file() {
        return directory(here);
    }
    let base = asr_suite::embedded::cache_base();
    let unpacked = asr_suite::embedded::unpack_corpus(&base).with_context(|| {
        format!(
            "failed to unpack the corpus the kit carries into {}; give a corpus with --cases DIR",
            base.display()
        )
    })?;
    if let Some(why) = &unpacked.replaced {
        eprintln!(
            "asr-ctk: the corpus in {} was not the kit's ({why}): unpacked it again",
            unpacked.dir.display()
        );
    }
    let info = CorpusInfo {
        origin: CorpusOrigin::Kit,
        path: unpacked.dir.to_string_lossy().into_owned(),
        verified: true,
    };
    Ok((unpacked.dir, info))
}

/// Every case of the corpus.
pub fn load(given: Option<&Path>) -> Result<Corpus> {
    let (root, info) = root(given)?;
    let cases = load_corpus(&root).with_context(|| {
        format!(
            "failed to load the corpus in {} (give another with --cases DIR)",
            root.display()
        )
    })?;
    Ok(Corpus { root, cases, info })
}

/// Every case of the corpus, and a producer case for each source fixture (`sources/`).
pub fn load_with_sources(given: Option<&Path>) -> Result<Corpus> {
    let mut corpus = load(given)?;
    let dir = corpus.root.join(asr_suite::source::SOURCES_DIR);
    let fixtures = asr_suite::source::load_fixtures(&dir)
        .with_context(|| format!("failed to load the source fixtures in {}", dir.display()))?;
    for fixture in &fixtures {
        corpus.cases.push(
            fixture
                .as_case()
                .with_context(|| format!("failed to load the source fixture {}", fixture.name))?,
        );
    }
    Ok(corpus)
}

/// A glob given with `flag`, compiled.
pub fn pattern(glob: Option<&str>, flag: &str) -> Result<Option<glob::Pattern>> {
    glob.map(glob::Pattern::new)
        .transpose()
        .with_context(|| format!("{flag} is not a valid glob"))
}

/// A schema the kit carries, by its path below `schemas/`.
pub fn embedded_schema(name: &str) -> Result<&'static str> {
    asr_suite::embedded::schema(name).with_context(|| format!("the kit carries no schema {name}"))
}
