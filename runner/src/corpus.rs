//! Where the corpus is, for the commands that read it.

use anyhow::{Context, Result};
use asr_suite::case::{Case, load_corpus};
use std::path::{Path, PathBuf};

/// The corpus directory: the one given, else `./cases` when it holds a catalog, else the
/// corpus the kit carries, unpacked into the user's cache (once).
pub fn root(given: Option<&Path>) -> Result<PathBuf> {
    if let Some(given) = given {
        return Ok(given.to_owned());
    }
    let here = Path::new("cases");
    if here.join("rules.toml").is_file() {
        return Ok(here.to_owned());
    }
    let base = asr_suite::embedded::cache_base();
    asr_suite::embedded::unpack_corpus(&base).with_context(|| {
        format!(
            "failed to unpack the corpus the kit carries into {}; give a corpus with --cases DIR",
            base.display()
        )
    })
}

/// Every case of the corpus.
pub fn load(given: Option<&Path>) -> Result<(PathBuf, Vec<Case>)> {
    let root = root(given)?;
    let cases = load_corpus(&root).with_context(|| {
        format!(
            "failed to load the corpus in {} (give another with --cases DIR)",
            root.display()
        )
    })?;
    Ok((root, cases))
}

/// Every case of the corpus, and a producer case for each source fixture (`sources/`).
pub fn load_with_sources(given: Option<&Path>) -> Result<(PathBuf, Vec<Case>)> {
    let (root, mut cases) = load(given)?;
    let dir = root.join(asr_suite::source::SOURCES_DIR);
    let fixtures = asr_suite::source::load_fixtures(&dir)
        .with_context(|| format!("failed to load the source fixtures in {}", dir.display()))?;
    for fixture in &fixtures {
        cases.push(
            fixture
                .as_case()
                .with_context(|| format!("failed to load the source fixture {}", fixture.name))?,
        );
    }
    Ok((root, cases))
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
