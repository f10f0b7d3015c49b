//! Where the corpus is, for the commands that read it.

use anyhow::{Context, Result};
use asr_suite::case::{Case, load_corpus};
use std::path::{Path, PathBuf};

/// The corpus the kit was built with, when no `--cases` is given and `./cases` is not one.
const BUILT_WITH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../cases");

/// The corpus directory: the one given, else `./cases` when it holds a catalog, else the
/// corpus the kit was built from.
pub fn root(given: Option<&Path>) -> PathBuf {
    if let Some(given) = given {
        return given.to_owned();
    }
    let here = Path::new("cases");
    if here.join("rules.toml").is_file() {
        here.to_owned()
    } else {
        PathBuf::from(BUILT_WITH)
    }
}

/// Every case of the corpus.
pub fn load(given: Option<&Path>) -> Result<(PathBuf, Vec<Case>)> {
    let root = root(given);
    let cases = load_corpus(&root)
        .with_context(|| format!("failed to load the corpus in {}", root.display()))?;
    Ok((root, cases))
}

/// A glob given with `flag`, compiled.
pub fn pattern(glob: Option<&str>, flag: &str) -> Result<Option<glob::Pattern>> {
    glob.map(glob::Pattern::new)
        .transpose()
        .with_context(|| format!("{flag} is not a valid glob"))
}
