//! Embeds the corpus (`cases/`) and the schemas (`schemas/`) into the library, so that an
//! installed `asr-ctk` carries them. Both live at the top of the repository; the crate reaches
//! them through the `cases` and `schemas` links beside this file, which `cargo package`
//! follows. Every file is embedded with `include_bytes!`, so a changed file rebuilds the
//! crate; a file added or removed reruns this script.

use std::fmt::Write as _;
use std::hash::Hasher as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    let mut code = String::new();
    // A digest of every name and byte, to name the directory the corpus is unpacked to.
    let mut digest = std::hash::DefaultHasher::new();
    for (name, tree) in [("CORPUS", "cases"), ("SCHEMAS", "schemas")] {
        let root = manifest.join(tree);
        println!("cargo::rerun-if-changed={}", root.display());
        let mut files = Vec::new();
        walk(&root, &mut files);
        files.sort();
        let _ = writeln!(
            code,
            "/// Every file of `{tree}/`: its path below it and its bytes."
        );
        let _ = writeln!(code, "pub static {name}: &[(&str, &[u8])] = &[");
        for file in files {
            let relative = file
                .strip_prefix(&root)
                .expect("below the root")
                .to_string_lossy()
                .replace('\\', "/");
            let bytes = std::fs::read(&file).expect("an embedded file is readable");
            digest.write(relative.as_bytes());
            digest.write(&bytes);
            let _ = writeln!(
                code,
                "    ({relative:?}, include_bytes!({:?})),",
                file.display().to_string()
            );
        }
        code.push_str("];\n");
    }
    let _ = writeln!(
        code,
        "/// A digest of the embedded files (names and bytes), in hex.\npub const DIGEST: &str = \"{:016x}\";",
        digest.finish()
    );
    std::fs::write(out.join("embedded.rs"), code).expect("OUT_DIR is writable");
    rule_ids(&manifest, &out);
}

/// Writes one `RuleId` constant for each id of the catalog (`cases/rules.toml`) and one
/// `ClauseId` for each of its clauses, so that
/// code can only name a rule the catalog has, and fails the build on an `x-asr-rule` of a
/// schema that the catalog does not have.
fn rule_ids(manifest: &Path, out: &Path) {
    let catalog = manifest.join("cases").join("rules.toml");
    let text =
        std::fs::read_to_string(&catalog).unwrap_or_else(|e| panic!("{}: {e}", catalog.display()));
    // Every rule table of the catalog names its rule on a line of its own: `id = "ASR-..."`.
    // Other tables (a rule's clauses) have ids that are not rule ids.
    let mut table = "";
    let ids: Vec<&str> = text
        .lines()
        .filter(|l| {
            if l.starts_with("[[") {
                table = l.trim();
            }
            matches!(table, "[[rule]]" | "[[cited]]" | "[[inferred]]")
        })
        .filter_map(|l| l.trim().strip_prefix("id = \""))
        .filter_map(|l| l.strip_suffix('"'))
        .collect();
    assert!(
        ids.len() > 60 && ids.iter().all(|id| id.starts_with("ASR-")),
        "{}: expected the catalog's rule ids, found {ids:?}",
        catalog.display()
    );
    // A clause table names its clause on a line of its own too, below its rule's table.
    let mut table = "";
    let mut rule = "";
    let clauses: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|l| {
            if l.starts_with("[[") {
                table = l.trim();
            }
            let id = l.trim().strip_prefix("id = \"")?.strip_suffix('"')?;
            match table {
                "[[rule]]" => {
                    rule = id;
                    None
                }
                "[[rule.clause]]" => Some((rule, id)),
                _ => None,
            }
        })
        .collect();
    let mut code = String::new();
    for id in &ids {
        let _ = writeln!(
            code,
            "/// `{id}`.\npub const {}: RuleId = RuleId({id:?});",
            id.replace('-', "_")
        );
    }
    for (rule, id) in &clauses {
        assert!(
            id.strip_prefix(rule)
                .is_some_and(|letter| letter.starts_with('.')),
            "{}: clause {id} is not one of {rule}",
            catalog.display()
        );
        let _ = writeln!(
            code,
            "/// `{id}`.\npub const {}: ClauseId = ClauseId {{ id: {id:?}, rule: {} }};",
            id.replace(['-', '.'], "_").to_uppercase(),
            rule.replace('-', "_")
        );
    }
    let _ = writeln!(code, "/// Every id of the catalog, in its order.");
    let _ = writeln!(code, "pub static ALL: &[RuleId] = &[");
    for id in &ids {
        let _ = writeln!(code, "    {},", id.replace('-', "_"));
    }
    code.push_str("];\n");
    let _ = writeln!(code, "/// Every clause of the catalog, in its order.");
    let _ = writeln!(code, "pub static CLAUSES: &[ClauseId] = &[");
    for (_, id) in &clauses {
        let _ = writeln!(code, "    {},", id.replace(['-', '.'], "_").to_uppercase());
    }
    code.push_str("];\n");
    std::fs::write(out.join("rule_ids.rs"), code).expect("OUT_DIR is writable");

    let mut schemas = Vec::new();
    walk(&manifest.join("schemas"), &mut schemas);
    for schema in schemas {
        let text = std::fs::read_to_string(&schema).unwrap_or_default();
        // `"x-asr-rule": "ASR-..."` maps failures to a rule; `"x-asr-rule-by-kind":
        // ["tag=ASR-...", ...]` chooses a reading member's rule by the kind of its record or part.
        let mut rest = text.as_str();
        while let Some(at) = rest.find("\"x-asr-rule") {
            rest = &rest[at + "\"x-asr-rule".len()..];
            let list = rest.starts_with("-by-kind\"");
            let value = rest
                .trim_start_matches("-by-kind")
                .trim_start_matches(|c: char| c == '"' || c == ':' || c.is_whitespace());
            let values: Vec<&str> = if list {
                let inner = value.strip_prefix('[').and_then(|v| v.split(']').next());
                inner
                    .unwrap_or("")
                    .split(',')
                    .map(|v| v.trim().trim_matches('"'))
                    .map(|pair| pair.split_once('=').map_or("", |(_, rule)| rule))
                    .collect()
            } else {
                vec![value.split('"').next().unwrap_or("")]
            };
            for value in values {
                assert!(
                    ids.contains(&value),
                    "{}: {value:?} in x-asr-rule{} is no rule id of cases/rules.toml",
                    schema.display(),
                    if list { "-by-kind" } else { "" }
                );
            }
        }
    }
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            walk(&path, files);
        } else if path.is_file() {
            files.push(path);
        }
    }
}
