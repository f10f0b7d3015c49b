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
pub fn promote(corpus: &Path, found: &[PathBuf]) -> Result<Vec<Promoted>> {
    let lock_path = corpus.join("ids.lock");
    let mut lock = std::fs::read_to_string(&lock_path)
        .with_context(|| format!("failed to read {}", lock_path.display()))?;
    let mut promoted = Vec::new();
    for sidecar in found {
        let outcome = promote_one(corpus, sidecar, &mut lock).and_then(|(name, id)| {
            std::fs::write(&lock_path, &lock)
                .map_err(|e| format!("failed to write {}: {e}", lock_path.display()))?;
            Ok((name, id))
        });
        promoted.push(Promoted {
            from: sidecar.clone(),
            outcome,
        });
    }
    Ok(promoted)
}

fn promote_one(
    corpus: &Path,
    sidecar_path: &Path,
    lock: &mut String,
) -> Result<(String, String), String> {
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
    let mut name_stem = stem.clone();
    let mut n = 1;
    while dir.join(format!("{name_stem}.json")).exists() {
        n += 1;
        name_stem = format!("{stem}_{n}");
    }
    let id = next_id(lock);
    case.sidecar.id.clone_from(&id);
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("failed to create {}: {e}", dir.display()))?;
    let target = dir.join(&name_stem);
    for (part, stream) in &case.streams {
        let name = if part.is_empty() {
            format!("{name_stem}.jsonl")
        } else {
            format!("{name_stem}.{part}.jsonl")
        };
        std::fs::copy(stream, dir.join(name))
            .map_err(|e| format!("failed to copy the stream: {e}"))?;
    }
    let sidecar = serde_json::to_string_pretty(&case.sidecar).map_err(|e| e.to_string())? + "\n";
    std::fs::write(target.with_extension("json"), sidecar)
        .map_err(|e| format!("failed to write the sidecar: {e}"))?;
    let name = format!("{section}/{rule}/{name_stem}");
    if !lock.ends_with('\n') && !lock.is_empty() {
        lock.push('\n');
    }
    for piece in [id.as_str(), "\t", name.as_str(), "\n"] {
        lock.push_str(piece);
    }
    Ok((name, id))
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
